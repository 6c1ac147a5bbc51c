/*
 * ndjson_scan.c -- tokenizing NDJSON lines: the JSON scanners, the key
 * tables that map keys to columns, objects (parse_object) and the shaped
 * road for lines that repeat the previous line's keys (parse_shaped).
 * ndjson_read.c describes the design; the fields stored here are
 * converted by ndjson_build.c.
 */
#include "ndjson_impl.h"

/* ------------------------------------------------------------- messages */

/* 1-based character column of byte at in the current line (UTF-8
 * continuation bytes do not count). */
static int64_t column_at(const NdCursor *r, size_t at)
{
    int64_t col = 1;
    for (size_t i = r->line_start; i < at && i < r->size; i++)
        if ((r->p[i] & 0xC0) != 0x80) col++;
    return col;
}

static TlStatus syntax_error(NdCursor *r, size_t at, const char *what)
{
    if (at >= r->size || r->p[at] == '\n')
        return tl_error(r->err, TL_ERR_DATA, "%s:%lld:%lld: %s (the line ends here)",
                        r->name, (long long)r->line,
                        (long long)column_at(r, at), what);
    return tl_error(r->err, TL_ERR_DATA, "%s:%lld:%lld: %s", r->name,
                    (long long)r->line, (long long)column_at(r, at), what);
}

/* ------------------------------------------------------------- scanning */

/* The plain-run table, whitespace, UTF-8 and escapes: json_text.h. */

/* Scan the string whose opening quote is at *pi: validates it and leaves
 * *pi after the closing quote; *escaped tells whether it holds escapes. */
static TlStatus scan_string(NdCursor *r, size_t *pi, bool *escaped)
{
    const uint8_t *p = r->p;
    const size_t n = r->size;
    size_t i = *pi + 1;
    bool esc = false;
    for (;;) {
        i = scan_plain(p, i, n);
        if (i >= n || p[i] == '\n')
            return syntax_error(r, i, "unterminated string");
        if (p[i] == '"') break;
        if (p[i] == '\\') {
            esc = true;
            if (i + 1 >= n) return syntax_error(r, i + 1, "unterminated string");
            switch (p[i + 1]) {
            case '"': case '\\': case '/': case 'b': case 'f': case 'n':
            case 'r': case 't':
                i += 2;
                break;
            case 'u': {
                int32_t u = hex4(p + i + 2, n - i - 2);
                if (u < 0) return syntax_error(r, i, "invalid \\u escape (4 hex digits expected)");
                if (u >= 0xDC00 && u <= 0xDFFF)
                    return syntax_error(r, i, "lone low surrogate in a \\u escape");
                if (u >= 0xD800 && u <= 0xDBFF) {
                    int32_t lo = -1;
                    if (i + 7 < n && p[i + 6] == '\\' && p[i + 7] == 'u')
                        lo = hex4(p + i + 8, n - i - 8);
                    if (lo < 0xDC00 || lo > 0xDFFF)
                        return syntax_error(r, i, "high surrogate not followed by a "
                                                  "low surrogate \\u escape");
                    i += 6;
                }
                i += 6;
                break;
            }
            default:
                return syntax_error(r, i, "invalid escape in a string");
            }
            continue;
        }
        if (p[i] >= 0x80) {
            size_t k = utf8_seq(p + i, n - i);
            if (!k) return syntax_error(r, i, "invalid UTF-8 in a string");
            i += k;
            continue;
        }
        return syntax_error(r, i, "control character in a string (must be escaped)");
    }
    *pi = i + 1;
    *escaped = esc;
    return TL_OK;
}

/* Scan the number at *pi (JSON grammar); V_INT when it is an integer that
 * fits int64, else V_FLOAT when a double holds it exactly (infer.h), else
 * V_NUMTXT: a string column keeps its text, only --schema converts it. */
static TlStatus scan_number(NdCursor *r, size_t *pi, uint32_t *kind)
{
    const uint8_t *p = r->p;
    const size_t n = r->size;
    size_t i = *pi, d0;
    bool is_int = true, neg = false;
    if (p[i] == '-') {
        neg = true;
        i++;
    }
    d0 = i;
    if (i < n && p[i] == '0') {
        i++;
    } else if (i < n && p[i] >= '1' && p[i] <= '9') {
        while (i < n && p[i] >= '0' && p[i] <= '9') i++;
    } else {
        return syntax_error(r, i, "invalid number (a digit expected)");
    }
    if (i - d0 >= 19) { /* beyond int64? */
        if (i - d0 > 19) {
            is_int = false;
        } else {
            uint64_t v = 0;
            for (size_t k = d0; k < i; k++) v = v * 10 + (uint64_t)(p[k] - '0');
            if (v > (uint64_t)INT64_MAX + (neg ? 1u : 0u)) is_int = false;
        }
    }
    if (i < n && p[i] == '.') {
        is_int = false;
        i++;
        if (i >= n || p[i] < '0' || p[i] > '9')
            return syntax_error(r, i, "invalid number (a digit expected after '.')");
        while (i < n && p[i] >= '0' && p[i] <= '9') i++;
    }
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        is_int = false;
        i++;
        if (i < n && (p[i] == '+' || p[i] == '-')) i++;
        if (i >= n || p[i] < '0' || p[i] > '9')
            return syntax_error(r, i, "invalid number (a digit expected in the exponent)");
        while (i < n && p[i] >= '0' && p[i] <= '9') i++;
    }
    {
        double v;
        *kind = is_int ? V_INT
                : tl_exact_f64((const char *)p + *pi, i - *pi, &v) ? V_FLOAT : V_NUMTXT;
    }
    *pi = i;
    return TL_OK;
}

/* The literal true, false or null at *pi. */
static TlStatus scan_literal(NdCursor *r, size_t *pi, uint32_t *kind)
{
    const uint8_t *p = r->p + *pi;
    size_t left = r->size - *pi;
    if (left >= 4 && memcmp(p, "true", 4) == 0) {
        *kind = V_TRUE;
        *pi += 4;
    } else if (left >= 5 && memcmp(p, "false", 5) == 0) {
        *kind = V_FALSE;
        *pi += 5;
    } else if (left >= 4 && memcmp(p, "null", 4) == 0) {
        *kind = V_NULL;
        *pi += 4;
    } else {
        return syntax_error(r, *pi, "invalid value (expected a string, number, "
                                    "object, array, true, false or null)");
    }
    return TL_OK;
}

/* Scan a scalar at *pi (string, number or literal) into *kind. */
static TlStatus scan_scalar(NdCursor *r, size_t *pi, uint32_t *kind)
{
    uint8_t c = r->p[*pi];
    if (c == '"') {
        bool esc;
        TL_TRY(scan_string(r, pi, &esc));
        *kind = esc ? V_STRESC : V_STR;
        return TL_OK;
    }
    if (c == '-' || (c >= '0' && c <= '9')) return scan_number(r, pi, kind);
    return scan_literal(r, pi, kind);
}

/* Validate any JSON value starting at *pi (within the line), with an
 * explicit stack of open brackets so nesting costs no C stack; leaves *pi
 * after it. */
static TlStatus skip_value(NdCursor *r, size_t *pi)
{
    const uint8_t *p = r->p;
    const size_t n = r->size;
    size_t i = *pi;
    int depth = 0;
    uint32_t kind;
    for (;;) {
        /* a value at i */
        if (i >= n) return syntax_error(r, i, "a value expected");
        if (p[i] == '{' || p[i] == '[') {
            if (depth >= MAX_NEST)
                return syntax_error(r, i, "arrays and objects nested too deeply "
                                          "(more than 1024 levels)");
            r->nest[depth++] = p[i];
            i = skip_ws(p, i + 1, n);
            if (r->nest[depth - 1] == '{') {
                if (i < n && p[i] == '}') {
                    depth--;
                    i++;
                    goto after;
                }
                goto key;
            }
            if (i < n && p[i] == ']') {
                depth--;
                i++;
                goto after;
            }
            continue;
        }
        TL_TRY(scan_scalar(r, &i, &kind));
    after:
        if (depth == 0) break;
        i = skip_ws(p, i, n);
        if (i < n && p[i] == ',') {
            i = skip_ws(p, i + 1, n);
            if (r->nest[depth - 1] == '{') goto key;
            continue;
        }
        if (r->nest[depth - 1] == '{') {
            if (i < n && p[i] == '}') {
                depth--;
                i++;
                goto after;
            }
            return syntax_error(r, i, "',' or '}' expected");
        }
        if (i < n && p[i] == ']') {
            depth--;
            i++;
            goto after;
        }
        return syntax_error(r, i, "',' or ']' expected");
    key:
        if (i >= n || p[i] != '"')
            return syntax_error(r, i, "a key (a string in double quotes) expected");
        {
            bool esc;
            TL_TRY(scan_string(r, &i, &esc));
        }
        i = skip_ws(p, i, n);
        if (i >= n || p[i] != ':') return syntax_error(r, i, "':' expected after the key");
        i = skip_ws(p, i + 1, n);
    }
    *pi = i;
    return TL_OK;
}

/* ------------------------------------------------------------------ keys */

static TlStatus grow_table(NdCursor *r)
{
    uint32_t cap = r->table ? (r->table_mask + 1) * 2 : 64;
    int32_t *t = tl_malloc(cap * sizeof *t);
    if (!t) return tl_error_oom(r->err);
    memset(t, 0xff, cap * sizeof *t);
    for (int e = 0; e < r->n_entries; e++) {
        uint32_t h = (uint32_t)r->entries[e].hash & (cap - 1);
        while (t[h] >= 0) h = (h + 1) & (cap - 1);
        t[h] = e;
    }
    tl_free(r->table);
    r->table = t;
    r->table_mask = cap - 1;
    return TL_OK;
}

/* The entry for key under node, created if new.  k is the key's position
 * in the line, for the fast path. */
static TlStatus find_entry(NdCursor *r, int node, const uint8_t *key,
                           uint32_t klen, int k, int *out)
{
    uint64_t h;
    uint32_t slot;
    Entry *e;
    if (k < r->seq_cap && r->seq[k] >= 0) {
        e = &r->entries[r->seq[k]];
        if (e->parent == node && e->key_len == klen && memcmp(e->key, key, klen) == 0) {
            *out = r->seq[k];
            return TL_OK;
        }
    }
    h = XXH3_64bits(key, klen) ^ ((uint64_t)node * 0x9E3779B97F4A7C15ull);
    if (!r->table || (uint32_t)r->n_entries * 2 >= r->table_mask + 1)
        TL_TRY(grow_table(r));
    slot = (uint32_t)h & r->table_mask;
    for (;; slot = (slot + 1) & r->table_mask) {
        int32_t ei = r->table[slot];
        if (ei < 0) break;
        e = &r->entries[ei];
        if (e->hash == h && e->parent == node && e->key_len == klen &&
            memcmp(e->key, key, klen) == 0) {
            *out = ei;
            goto remember;
        }
    }
    if (r->n_entries == r->entries_cap) {
        int cap = r->entries_cap ? r->entries_cap * 2 : 32;
        Entry *g = tl_realloc(r->entries, (size_t)cap * sizeof *g);
        if (!g) return tl_error_oom(r->err);
        r->entries = g;
        r->entries_cap = cap;
    }
    e = &r->entries[r->n_entries];
    e->key = tl_malloc(klen + 1);
    if (!e->key) return tl_error_oom(r->err);
    memcpy(e->key, key, klen);
    e->key[klen] = 0;
    e->key_len = klen;
    e->plain = true;
    for (uint32_t j = 0; j < klen; j++)
        if (key[j] < 0x20 || key[j] >= 0x7f || key[j] == '"' || key[j] == '\\')
            e->plain = false;
    e->hash = h;
    e->parent = node;
    e->col = -1;
    e->node = -1;
    r->table[slot] = r->n_entries;
    *out = r->n_entries++;
remember:
    if (k >= r->seq_cap) {
        int cap = r->seq_cap ? r->seq_cap : 16;
        int32_t *g;
        while (cap <= k) cap *= 2;
        g = tl_realloc(r->seq, (size_t)cap * sizeof *g);
        if (!g) return tl_error_oom(r->err);
        for (int j = r->seq_cap; j < cap; j++) g[j] = -1;
        r->seq = g;
        r->seq_cap = cap;
    }
    r->seq[k] = *out;
    return TL_OK;
}

/* The full name of entry e ("a.b.key"), NUL-terminated (a key holding
 * \u0000 ends there); owned by the caller.  NULL on OOM. */
static char *entry_name(const NdCursor *r, const Entry *e)
{
    const Node *nd = &r->nodes[e->parent];
    char *s = tl_malloc(nd->path_len + e->key_len + 2);
    if (!s) return NULL;
    memcpy(s, nd->path, nd->path_len);
    memcpy(s + nd->path_len, e->key, e->key_len);
    s[nd->path_len + e->key_len] = 0;
    return s;
}

TlStatus tl_nd_ensure_cols(NdCursor *r, int n)
{
    if (n <= r->cols_cap) return TL_OK;
    int cap = r->cols_cap ? r->cols_cap * 2 : 16;
    while (cap < n) cap *= 2;
    NdCol *g = tl_realloc(r->cols, (size_t)cap * sizeof *g);
    if (!g) return tl_error_oom(r->err);
    memset(g + r->cols_cap, 0, (size_t)(cap - r->cols_cap) * sizeof *g);
    r->cols = g;
    r->cols_cap = cap;
    return TL_OK;
}

/* The column of entry ei, created (named by its path) if new. */
static TlStatus entry_col(NdCursor *r, int ei, int *out)
{
    Entry *e = &r->entries[ei];
    char *name;
    int c;
    if (e->col >= 0) {
        *out = e->col;
        return TL_OK;
    }
    name = entry_name(r, e);
    if (!name) return tl_error_oom(r->err);
    c = tl_schema_find(r->schema, name);
    if (c < 0) {
        c = tl_schema_find(&r->late, name);
        if (c >= 0) c += r->schema->n_fields;
    }
    if (c < 0) {
        TlStatus st;
        bool discovering = r->n_open == INT32_MAX;
        c = n_all_cols(r);
        if (c >= r->rd->max_cols) {
            tl_free(name);
            r->full = true;
            return tl_too_many_columns(r->err, r->name, r->line, r->rd->max_cols);
        }
        st = tl_nd_ensure_cols(r, c + 1);
        if (st == TL_OK)
            st = tl_schema_add(discovering ? r->schema : &r->late, name, TL_TNULL, r->err);
        if (st != TL_OK) {
            tl_free(name);
            return st;
        }
        r->cols[c].seen = TL_TNULL;
    }
    tl_free(name);
    r->entries[ei].col = c;
    *out = c;
    return TL_OK;
}

/* The node of entry ei (an object under that key), created if new. */
static TlStatus entry_node(NdCursor *r, int ei, int *out)
{
    Entry *e = &r->entries[ei];
    Node *nd;
    if (e->node >= 0) {
        *out = e->node;
        return TL_OK;
    }
    if (r->n_nodes == r->nodes_cap) {
        int cap = r->nodes_cap ? r->nodes_cap * 2 : 8;
        Node *g = tl_realloc(r->nodes, (size_t)cap * sizeof *g);
        if (!g) return tl_error_oom(r->err);
        r->nodes = g;
        r->nodes_cap = cap;
    }
    nd = &r->nodes[r->n_nodes];
    nd->path = entry_name(r, e);
    if (!nd->path) return tl_error_oom(r->err);
    nd->path_len = strlen(nd->path);
    nd->path[nd->path_len++] = '.';
    nd->path[nd->path_len] = 0;
    nd->parts = r->nodes[e->parent].parts + 1;
    e->node = r->n_nodes;
    *out = r->n_nodes++;
    return TL_OK;
}

/* Column c has fields in this batch from now on: clear_fields resets
 * only the columns listed, so a batch costs the columns it holds. */
static TlStatus touch(NdCursor *r, int c)
{
    if (r->n_touched == r->touched_cap) {
        int cap = r->touched_cap ? r->touched_cap * 2 : 64;
        int32_t *g = tl_realloc(r->touched, (size_t)cap * sizeof *g);
        if (!g) return tl_error_oom(r->err);
        r->touched = g;
        r->touched_cap = cap;
    }
    r->touched[r->n_touched++] = c;
    return TL_OK;
}

/* Room for one more field in col (and its row, when sparse or once was). */
static TlStatus grow_col(NdCursor *r, NdCol *col)
{
    int64_t cap = col->cap ? col->cap * 2 : 4;
    if (cap > r->max_rows) cap = r->max_rows;
    if (cap <= col->n) cap = col->n + 1;
    NdField *g = tl_realloc(col->f, (size_t)cap * sizeof *g);
    if (!g) return tl_error_oom(r->err);
    col->f = g;
    if (col->rows) {
        uint32_t *h = tl_realloc(col->rows, (size_t)cap * sizeof *h);
        if (!h) return tl_error_oom(r->err);
        col->rows = h;
    }
    col->cap = cap;
    col->fast = col->sparse ? 0 : (uint64_t)cap - 1;
    return TL_OK;
}

/* store() for the rare cases: long values, late columns, a key given
 * twice, the first field of a batch, a row without the key before this
 * one (the column turns sparse), growth. */
static TlStatus store_slow(NdCursor *r, int c, int64_t row, size_t off,
                           size_t len, uint32_t kind)
{
    NdCol *col = &r->cols[c];
    if (len > UINT32_MAX)
        return syntax_error(r, off, "value longer than 4 GiB");
    if (c >= r->n_open) /* a key first seen after the first batch */
        r->saw_late = true;
    if (col->n > 0 && field_row(col, col->n - 1) == row) {
        /* the same key again in this row: the last value wins */
        col->f[col->n - 1] = (NdField){off, (uint32_t)len, kind};
        return TL_OK;
    }
    if (col->n == 0) TL_TRY(touch(r, c));
    if (col->n == col->cap) TL_TRY(grow_col(r, col));
    if (!col->sparse && row != col->n) {
        if (!col->rows) {
            col->rows = tl_malloc((size_t)col->cap * sizeof *col->rows);
            if (!col->rows) return tl_error_oom(r->err);
        }
        for (int64_t i = 0; i < col->n; i++) col->rows[i] = (uint32_t)i;
        col->sparse = true;
        col->fast = 0;
    }
    col->f[col->n] = (NdField){off, (uint32_t)len, kind};
    if (col->sparse) col->rows[col->n] = (uint32_t)row;
    col->n++;
    return TL_OK;
}

/* Record field {off, len, kind} of column c at row.  The fast path: the
 * column is dense, holds rows 0..row-1 and has room for row. */
static inline TlStatus store(NdCursor *r, int c, int64_t row, size_t off,
                             size_t len, uint32_t kind)
{
    NdCol *col = &r->cols[c];
    if (__builtin_expect(c >= r->n_open || len > UINT32_MAX, 0))
        return store_slow(r, c, row, off, len, kind);
    if (r->skip && r->skip[c]) return TL_OK; /* not converted */
    if (__builtin_expect(row != col->n || (uint64_t)row - 1 >= col->fast, 0))
        return store_slow(r, c, row, off, len, kind);
    col->f[row] = (NdField){off, (uint32_t)len, kind};
    col->n = row + 1;
    return TL_OK;
}

/* ------------------------------------------------------------- objects */

/* a[0..n) == b[0..n) for short keys without a library call. */
static inline bool key_eq(const uint8_t *a, const uint8_t *b, size_t n)
{
    if (n >= 8 && n <= 16) {
        uint64_t x0, x1, y0, y1;
        memcpy(&x0, a, 8);
        memcpy(&y0, b, 8);
        memcpy(&x1, a + n - 8, 8);
        memcpy(&y1, b + n - 8, 8);
        return ((x0 ^ y0) | (x1 ^ y1)) == 0;
    }
    if (n >= 4 && n < 8) {
        uint32_t x0, x1, y0, y1;
        memcpy(&x0, a, 4);
        memcpy(&y0, b, 4);
        memcpy(&x1, a + n - 4, 4);
        memcpy(&y1, b + n - 4, 4);
        return ((x0 ^ y0) | (x1 ^ y1)) == 0;
    }
    if (n < 4) {
        for (size_t j = 0; j < n; j++)
            if (a[j] != b[j]) return false;
        return true;
    }
    return memcmp(a, b, n) == 0;
}

/* The common scalars without a call: a string without escapes or
 * non-ASCII, an integer of up to 18 digits.  Exactly what scan_scalar
 * would find; false when it must decide. */
static inline bool fast_scalar(const uint8_t *p, size_t n, size_t *pi, uint32_t *kind)
{
    size_t i = *pi, j;
    if (p[i] == '"') {
        j = scan_plain(p, i + 1, n);
        if (j < n && p[j] == '"') {
            *pi = j + 1;
            *kind = V_STR;
            return true;
        }
        return false;
    }
    j = i + (p[i] == '-');
    if (j < n && p[j] >= '1' && p[j] <= '9') {
        size_t d = j;
        while (j < n && p[j] >= '0' && p[j] <= '9') j++;
        if (j - d < 19 && (j >= n || (p[j] != '.' && p[j] != 'e' && p[j] != 'E'))) {
            *pi = j;
            *kind = V_INT;
            return true;
        }
    }
    return false;
}

/* Parse the object whose '{' is at *pi, as node `node`, storing its values
 * at row; *k counts the keys of the line. */
static TlStatus parse_object(NdCursor *r, size_t *pi, int node, int64_t row, int *k)
{
    const uint8_t *p = r->p;
    const size_t n = r->size;
    size_t i = skip_ws(p, *pi + 1, n);
    if (i < n && p[i] == '}') {
        *pi = i + 1;
        return TL_OK;
    }
    for (;;) {
        size_t ks, vs;
        bool esc;
        const uint8_t *key;
        uint32_t klen, kind;
        int ei = 0, kpos;
        if (i >= n || p[i] != '"')
            return syntax_error(r, i, "a key (a string in double quotes) expected");
        ks = i + 1;
        kpos = (*k)++;
        /* fastest path: the key the previous line had here, compared as
         * raw bytes (a plain key has no escapes, so equal bytes followed
         * by a quote are the same key) */
        if (kpos < r->seq_cap && r->seq[kpos] >= 0) {
            const Entry *g = &r->entries[r->seq[kpos]];
            size_t kl = g->key_len;
            if (g->plain && g->parent == node && ks + kl < n && p[ks + kl] == '"' &&
                key_eq(p + ks, g->key, kl)) {
                ei = r->seq[kpos];
                i = skip_ws(p, ks + kl + 1, n);
                if (i < n && p[i] == ':') {
                    i = skip_ws(p, i + 1, n);
                    goto have_key;
                }
                return syntax_error(r, i, "':' expected after the key");
            }
        }
        /* fast path: a plain ASCII key */
        i = scan_plain(p, ks, n);
        if (i < n && p[i] == '"') {
            key = p + ks;
            klen = (uint32_t)(i - ks);
            i++;
        } else {
            i = ks - 1;
            TL_TRY(scan_string(r, &i, &esc));
            klen = (uint32_t)(i - 1 - ks);
            key = p + ks;
            if (esc) {
                if (r->keybuf_cap < klen + 1) {
                    uint8_t *g = tl_realloc(r->keybuf, (size_t)klen + 1);
                    if (!g) return tl_error_oom(r->err);
                    r->keybuf = g;
                    r->keybuf_cap = (size_t)klen + 1;
                }
                klen = (uint32_t)unescape(p + ks, klen, r->keybuf);
                key = r->keybuf;
            }
        }
        i = skip_ws(p, i, n);
        if (i >= n || p[i] != ':') return syntax_error(r, i, "':' expected after the key");
        i = skip_ws(p, i + 1, n);
        TL_TRY(find_entry(r, node, key, klen, kpos, &ei));
    have_key:
        vs = i;
        if (i >= n) return syntax_error(r, i, "a value expected");
        if (p[i] == '{') {
            size_t j = skip_ws(p, i + 1, n);
            if (r->nodes[node].parts + 1 < MAX_PARTS && j < n && p[j] != '}') {
                int child = 0;
                TL_TRY(entry_node(r, ei, &child));
                TL_TRY(parse_object(r, &i, child, row, k));
                goto next;
            }
        }
        if (p[i] == '{' || p[i] == '[') {
            TL_TRY(skip_value(r, &i));
            kind = V_JSON;
        } else if (!fast_scalar(p, n, &i, &kind)) {
            TL_TRY(scan_scalar(r, &i, &kind));
        }
        {
            int c = 0;
            TL_TRY(entry_col(r, ei, &c));
            if (kind == V_STR || kind == V_STRESC)
                TL_TRY(store(r, c, row, vs + 1, i - vs - 2, kind));
            else
                TL_TRY(store(r, c, row, vs, i - vs, kind));
        }
    next:
        i = skip_ws(p, i, n);
        if (i < n && p[i] == ',') {
            i = skip_ws(p, i + 1, n);
            continue;
        }
        if (i < n && p[i] == '}') break;
        return syntax_error(r, i, "',' or '}' expected");
    }
    *pi = i + 1;
    return TL_OK;
}

/* --------------------------------------------------------- line shapes */

/* The first byte at or after i that is not an ASCII digit (or n): eight
 * bytes at a time. */
static inline size_t scan_digits(const uint8_t *p, size_t i, size_t n)
{
    const uint64_t low = 0x7f7f7f7f7f7f7f7full, high = 0x8080808080808080ull;
    while (i + 8 <= n) {
        uint64_t x, t, m;
        memcpy(&x, p + i, 8);
        t = x ^ 0x3030303030303030ull; /* a digit becomes 0..9 */
        m = (((t & low) + 0x7676767676767676ull) | t) & high; /* >= 10 */
        if (m) return i + ((size_t)__builtin_ctzll(m) >> 3);
        i += 8;
    }
    while (i < n && p[i] >= '0' && p[i] <= '9') i++;
    return i;
}

/* The number at *pi when it is an integer of up to 18 digits or has a
 * fraction but no exponent (exactly what scan_number would find); false
 * when scan_number must decide. */
static inline bool fast_number(const uint8_t *p, size_t n, size_t *pi, uint32_t *kind)
{
    size_t i = *pi + (p[*pi] == '-'), d = i;
    if (i >= n || p[i] < '0' || p[i] > '9') return false;
    i = p[i] == '0' ? i + 1 : scan_digits(p, i + 1, n);
    if (i - d >= 19 || (i < n && p[i] >= '0' && p[i] <= '9')) return false;
    *kind = V_INT;
    if (i < n && p[i] == '.') {
        size_t f = i + 1;
        i = scan_digits(p, f, n);
        if (i == f || i - d > 16) return false; /* over 15 digits: exact? */
        *kind = V_FLOAT;
    }
    if (i < n && (p[i] == 'e' || p[i] == 'E')) return false;
    *pi = i;
    return true;
}

#ifdef __SSE2__
/* The value at vs (16 bytes readable there) when it is a string without
 * escapes, control characters or non-ASCII whose closing quote is among
 * those 16 bytes, or a number without exponent within them (exactly what
 * scan_scalar would find): *end after it and *kind.  Everything from one
 * load, so the next value's position waits for no byte loads in between;
 * false when the caller must decide. */
static inline bool fast_value(const uint8_t *p, size_t vs, size_t *end, uint32_t *kind)
{
    const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + vs));
    const uint8_t c0 = p[vs];
    if (c0 == '"') {
        uint32_t q = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')));
        uint32_t stop = (uint32_t)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('\\')),
                         _mm_cmplt_epi8(x, _mm_set1_epi8(0x20))));
        uint32_t j;
        stop = (stop | q) & ~1u;
        if (!stop) return false;
        j = (uint32_t)__builtin_ctz(stop);
        if (!((q >> j) & 1)) return false;
        *end = vs + j + 1;
        *kind = V_STR;
        return true;
    }
    if (c0 == '-' || (c0 >= '0' && c0 <= '9')) {
        /* non-digits (bytes from 0x80 compare below '0'), dots, exponents */
        const uint32_t s = c0 == '-';
        uint32_t nd = (uint32_t)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmplt_epi8(x, _mm_set1_epi8('0')),
                         _mm_cmpgt_epi8(x, _mm_set1_epi8('9'))));
        uint32_t dot = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8('.')));
        uint32_t ex = (uint32_t)_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_or_si128(x, _mm_set1_epi8(0x20)), _mm_set1_epi8('e')));
        uint32_t e;
        nd = (nd & ~s) | 0x10000u;
        e = (uint32_t)__builtin_ctz(nd);
        if (e == s || e >= 16) return false;              /* no digit; long */
        if (p[vs + s] == '0' && e > s + 1) return false;  /* a leading zero */
        *kind = V_INT;
        if ((dot >> e) & 1) {
            uint32_t f = (uint32_t)__builtin_ctz(nd & ~((2u << e) - 1));
            if (f == e + 1 || f >= 16) return false;
            e = f;
            *kind = V_FLOAT;
        }
        if ((ex >> e) & 1) return false;
        *end = vs + e;
        return true;
    }
    return false;
}
#endif

/* Make the line parse_object read last (shape_keys keys) the shape, when
 * every key is plain, belongs to the line's object (nothing nested) and
 * names a column known at open; else no shape.  Made only when it is to
 * be tried, so lines that keep changing their keys do not pay for it. */
static void build_shape(NdCursor *r)
{
    const int k = r->shape_keys;
    r->shape_len = 0;
    r->shape_keys = 0;
    if (k < 1 || k > MAX_SHAPE || k > r->seq_cap) return;
    for (int q = 0; q < k; q++) {
        const Entry *e;
        NdSlot *s = &r->shape[q];
        uint8_t b[16] = {0};
        size_t len;
        if (r->seq[q] < 0) return;
        e = &r->entries[r->seq[q]];
        if (e->parent != 0 || !e->plain || e->col < 0 || e->col >= r->n_open) return;
        len = (size_t)e->key_len + 3;
        b[0] = '"';
        memcpy(b + 1, e->key, e->key_len < 15 ? e->key_len : 15);
        if (e->key_len + 1 < 16) b[e->key_len + 1] = '"';
        if (e->key_len + 2 < 16) b[e->key_len + 2] = ':';
        memcpy(&s->w[0], b, 8);
        memcpy(&s->w[1], b + 8, 8);
        s->m[0] = len >= 8 ? ~0ull : (1ull << (8 * len)) - 1;
        s->m[1] = len >= 16 ? ~0ull : len <= 8 ? 0 : (1ull << (8 * (len - 8))) - 1;
        s->key = e->key;
        s->key_len = e->key_len;
        s->col = e->col;
    }
    r->shape_len = k;
}

/* Read the line's object at *pi (its '{') when it has the shape's keys in
 * the shape's order and every value is a scalar: its fields are stored as
 * parse_object stores them, *done is set and *pi is left after the '}'.
 * Any other line -- another key or order, a nested value, a bad value --
 * leaves *done false, having stored only fields of keys the line does hold
 * (their values again): parse_object then reads the line and reports its
 * errors.  Values are validated fully either way. */
static TlStatus parse_shaped(NdCursor *r, size_t *pi, int64_t row, bool *done)
{
    const uint8_t *p = r->p;
    const size_t n = r->size;
    const NdSlot *s = r->shape, *last = r->shape + r->shape_len - 1;
    size_t i = *pi + 1;
    *done = false;
    for (;; s++) {
        uint64_t x0, x1;
        size_t vs;
        uint32_t kind;
        if (i < n && p[i] != '"') i = skip_ws(p, i, n);
        if (i + 16 > n) return TL_OK;
        memcpy(&x0, p + i, 8);
        memcpy(&x1, p + i + 8, 8);
        if (((x0 ^ s->w[0]) & s->m[0]) | ((x1 ^ s->w[1]) & s->m[1])) return TL_OK;
        if (s->key_len > 13) { /* the rest of a long key */
            size_t kl = s->key_len;
            if (i + kl + 3 > n || (kl > 15 && memcmp(p + i + 16, s->key + 15, kl - 15)) ||
                p[i + kl + 1] != '"' || p[i + kl + 2] != ':')
                return TL_OK;
        }
        i += (size_t)s->key_len + 3;
        if (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r')) i = skip_ws(p, i, n);
        if (i >= n) return TL_OK;
        vs = i;
#ifdef __SSE2__
        if (i + 16 <= n && fast_value(p, i, &i, &kind)) {
            /* the common scalars */
        } else
#endif
        if (p[i] == '"') {
            size_t j = scan_plain(p, i + 1, n);
            if (j < n && p[j] == '"') {
                i = j + 1;
                kind = V_STR;
            } else {
                bool esc;
                if (scan_string(r, &i, &esc) != TL_OK) return TL_OK;
                kind = esc ? V_STRESC : V_STR;
            }
        } else if (!fast_number(p, n, &i, &kind)) {
            if (p[i] == '{' || p[i] == '[' || scan_scalar(r, &i, &kind) != TL_OK)
                return TL_OK;
        }
        {
            const int c = s->col;
            NdCol *col = &r->cols[c];
            size_t off = vs, len = i - vs;
            if (kind == V_STR || kind == V_STRESC) {
                off++;
                len -= 2;
            }
            if (len > UINT32_MAX) return TL_OK;
            if (!(r->skip && r->skip[c])) {
                if (__builtin_expect(row != col->n || (uint64_t)row - 1 >= col->fast, 0)) {
                    TL_TRY(store_slow(r, c, row, off, len, kind));
                } else {
                    col->f[row] = (NdField){off, (uint32_t)len, kind};
                    col->n = row + 1;
                }
            }
        }
        if (i < n && p[i] != ',' && p[i] != '}') i = skip_ws(p, i, n);
        if (i >= n) return TL_OK;
        if (s == last) {
            if (p[i] != '}') return TL_OK;
            break;
        }
        if (p[i] != ',') return TL_OK;
        i++;
    }
    *pi = i + 1;
    *done = true;
    return TL_OK;
}

/* Forget the fields the previous tokenization stored. */
void tl_nd_clear_fields(NdCursor *r)
{
    for (int t = 0; t < r->n_touched; t++) {
        NdCol *col = &r->cols[r->touched[t]];
        col->n = 0;
        col->sparse = false;
        col->fast = col->cap > 0 ? (uint64_t)col->cap - 1 : 0;
    }
    r->n_touched = 0;
}

/* Drop the fields of rows from row on (a line that failed half way). */
static void drop_fields_from(NdCursor *r, int64_t row)
{
    for (int t = 0; t < r->n_touched; t++) {
        NdCol *col = &r->cols[r->touched[t]];
        while (col->n > 0 && field_row(col, col->n - 1) >= row) col->n--;
    }
}

/* Tokenize the lines from pos up to end (a line end or the input's end):
 * at most max_rows records.  After a syntax error n_rows still holds the
 * records before the bad line (decode converts them: a bad value earlier
 * in the input is reported first). */
TlStatus tl_nd_tokenize(NdCursor *r, size_t end, TlError *err)
{
    const uint8_t *p = r->p;
    const size_t n = r->size;
    int64_t rows = 0;
    TlStatus st = TL_OK;
    r->err = err;
    tl_nd_clear_fields(r);
    r->n_rows = 0;
    r->full = false;
    r->batch_start = r->pos;
    while (rows < r->max_rows && r->pos < end) {
        size_t i = r->pos;
        int k = 0;
        r->line_start = i;
        i = skip_ws(p, i, n);
        if (i < n && p[i] == '\n') { /* blank line */
            r->pos = i + 1;
            r->line++;
            continue;
        }
        if (i >= n) {
            r->pos = n;
            break;
        }
        if (p[i] != '{') {
            if (p[i] == '[')
                st = syntax_error(r, i, "an array where an object was expected "
                                        "(NDJSON holds one object per line)");
            else
                st = syntax_error(r, i, "a JSON object expected (NDJSON holds one "
                                        "object per line)");
            break;
        }
        /* a line with the previous line's keys: parse_shaped; else (or
         * when lines keep changing shape, now and then) parse_object */
        if (r->shape_keys && r->shape_wait == 0)
            build_shape(r); /* from the line parse_object read last */
        if (r->shape_len && r->shape_wait == 0) {
            size_t j = i;
            bool done;
            if ((st = parse_shaped(r, &j, rows, &done)) != TL_OK) break;
            if (done) {
                i = j;
                r->shape_miss = 0;
                goto parsed;
            }
            if (++r->shape_miss >= 8) {
                r->shape_miss = 0;
                r->shape_wait = 256;
            }
        } else if (r->shape_wait) {
            r->shape_wait--;
        }
        if ((st = parse_object(r, &i, 0, rows, &k)) != TL_OK) break;
        r->shape_len = 0;
        r->shape_keys = k;
    parsed:
        while (i < n && (p[i] == ' ' || p[i] == '\t')) i++;
        if (i < n && p[i] == '\r' && i + 1 < n && p[i + 1] == '\n') i++;
        if (i < n && p[i] == '\r') r->saw_lone_cr = true;
        if (i < n && p[i] != '\n' && p[i] != '\r') {
            st = syntax_error(r, i, "unexpected text after the object (one object "
                                    "per line)");
            break;
        }
        r->row_line[rows++] = r->line;
        r->pos = i < n ? i + 1 : n;
        r->line++;
        if (r->n_open == INT32_MAX && r->schema->n_fields > 0 &&
            rows < r->max_rows && (int64_t)r->schema->n_fields * r->max_rows > MAX_BATCH_FIELDS) {
            /* wide input: fewer rows per batch */
            int64_t m = MAX_BATCH_FIELDS / r->schema->n_fields;
            r->max_rows = m > rows ? m : rows;
        }
    }
    r->n_rows = rows;
    if (st != TL_OK) drop_fields_from(r, rows);
    r->batch_end = r->pos;
    return st;
}
