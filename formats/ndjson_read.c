/*
 * ndjson_read.c -- the NDJSON reader: one JSON object per line.
 *
 * The whole input is one immutable buffer (format.c maps the file or reads
 * standard input once).  It is read as morsels (format.h, "morsel-parallel
 * reading"): tl_reader_split cuts byte ranges of whole lines, and any
 * number of decoders turn morsels into batches at once.  next() is the same
 * thing done serially: split, decode with a decoder of the reader's own,
 * widen, count -- so both ways give the same batches by construction.
 *
 * Splitting (serial, cheap): JSON strings cannot hold a raw newline, so
 * every LF ends a line; a morsel ends after the line end that is its
 * max_rows-th or that reaches its byte target (64 KiB for the first, then
 * doubling up to 2 MiB; tl_ndjson_split_force for tests).  16 bytes at a
 * time with SSE2 count the LFs and look for a lone CR (one not followed by
 * LF); a morsel holding one is cut by a careful bytewise scan that tracks
 * strings and brackets, because a lone CR right after a line's object ends
 * a record (and a line, for line numbers) while elsewhere it is white
 * space.  Boundaries depend only on the bytes and max_rows.  The first
 * morsel starts at byte 0 (a BOM is skipped when decoding), so the morsels'
 * sizes add up to the input's.
 *
 * Guessed ends (format.h, tl_reader_guess: a scan of one complete input):
 * the split reads only the bytes from the target size to the next LF and
 * hands the morsel out with line -1, so the consumer no longer reads (and
 * faults in) every byte before the decoders do.  Every LF ends a line, so
 * the guess is the careful cut unless the morsel holds a record ended by a
 * lone CR or max_rows line ends: decode_morsel checks both and fails such
 * a morsel, and any other failure of a guessed morsel (an error, whose
 * message needs the line; a late key) too.  The consumer then drops it and
 * the later ones and calls nd_resplit, which counts the lines before it
 * from the input's start and splits carefully from then on: morsels,
 * values, errors and counters are the careful split's.
 *
 * Decoding a morsel goes through a cursor (NdCursor): everything mutable
 * while tokenizing -- position, line, the key tables, the fields, scratch.
 * Open's cursor discovers the columns; each decoder starts from a copy of
 * its key tables, which are never changed after open, so decoders share
 * nothing mutable: the reader's schema, types, projection and hints are
 * only read (one atomic aside: late_keys).  A batch is read in two passes:
 *
 *   1. Tokenize the morsel's lines with a hand-written scanner that
 *      validates the JSON fully (strings with every escape and surrogate
 *      pairs, UTF-8, numbers, literals, nesting) and records, per column,
 *      one field per row without copying anything:
 *
 *        cols[c].f[row] = { off:u64 | len:u32 | kind:u32 }
 *
 *      kind is what the value is: null (0, so a zeroed field is a missing
 *      key), false, true, integer, other number, string, string with
 *      escapes, or raw JSON (an array, an empty object, or an object nested
 *      deeper than MAX_PARTS).  off/len cover a string without its quotes,
 *      or the value's text.  Decoders store only the projected columns'
 *      fields (and late keys'); every value is still validated.
 *
 *      Lines that repeat the previous line's keys (nearly all, in such
 *      files) take a shorter road, parse_shaped: the line's shape is the
 *      list of its keys (when flat, plain and known), each as the bytes
 *      `"key":` to compare as two masked words; a value is read from one
 *      16-byte SSE2 load when it is a plain string or a number without
 *      exponent that ends within it (the next position then waits for no
 *      byte loads), else by the ordinary scanners.  Values of unprojected
 *      columns are validated the same way, just not stored.  A line that
 *      does not fit the shape (another key, a nested value, anything
 *      invalid) is read again from its start by parse_object, which makes
 *      the shape anew and reports the errors: both roads store the same
 *      fields, and every message comes from parse_object.
 *
 *   2. Convert only the projected columns, one loop per column and type.
 *      Strings without escapes become views into the input buffer (or are
 *      inlined when short); escaped strings are decoded and raw JSON is
 *      compacted into a block the array owns.
 *
 * Streamed input (a zstd file decompressed by a thread while it is read,
 * fmt_impl.h): open samples the bytes ready (opening again with more when
 * the sample reaches their end), the splitter cuts in the bytes ready and
 * takes a cut TL_INPUT_AHEAD before their end (decoders read a line and a
 * byte past it, never further), and late_keys waits for the whole input
 * before scanning the rest of it.
 *
 * Memory: once a morsel of a mapped file is decoded, the input's pages a
 * block (2 to 8 MiB) behind it are given back (tl_input_drop), as the CSV
 * reader does: a scan of a 1 GB file holds a few blocks of it, not all of
 * it; a string view read later faults its page in from the file.
 *
 * Errors: a morsel reports its first problem in input order, so what the
 * user sees does not depend on where morsels are cut: a syntax error ends
 * tokenizing, but the rows before it are still converted and a value among
 * them that does not fit (the lowest row; then the first projected column)
 * comes first.
 *
 * Keys: a key is looked up under its parent object (a "node"; node 0 is the
 * line's object) in a hash table of entries {parent, key bytes} -> column
 * and/or child node.  The fast path remembers, for the k-th key of the
 * previous line, which entry it was: when lines repeat their key order
 * (nearly always) a key costs one memcmp.  Nested objects are flattened
 * into `parent.child` columns while the name has fewer than MAX_PARTS parts;
 * deeper objects, empty objects and every array become a string column
 * holding the value's compact JSON text.  A key seen twice in one object:
 * the last value wins (as DuckDB), also when two spellings name the same
 * column ("a.b" and {"a":{"b":..}}).  Columns keep the order of their
 * first appearance; a missing key is null.
 *
 * Types (format.h, "restart protocol"): tl_reader_open tokenizes the first
 * batch (max_rows lines: the inference sample), which discovers the
 * columns, and infers each column's type from its values: true/false bool,
 * integers int64, other numbers float64 when a double holds them exactly
 * (infer.h; else V_NUMTXT: their text, a string), strings and raw JSON
 * string (a string that looks like a date
 * stays a string), starting from the run's hint.  Widening: int64 ->
 * float64 -> string; any other mix is string, and a number or literal in a
 * string column is its JSON text.  When a morsel holds a value that does
 * not fit, decode returns TL_ERR_RESTART with the projected columns' types
 * widened by that morsel's values in *widen (tl_reader_widen puts them in
 * the hints).  A key first seen after the inference sample also restarts
 * the run, with the new column in *widen: the decoder tokenizes the rest of
 * the input first, so every late key is found by one restart (hint columns
 * absent from the sample come after its columns, so the order is still
 * that of first appearance); without hints a late key is a data error.
 * --schema fixes types; a value that does not convert is then an error
 * naming file, line and column.
 *
 * Lines end at LF, CRLF, or a lone CR right after an object; blank lines
 * are skipped; a UTF-8 BOM is skipped.  Every line must hold exactly one
 * object.
 */
#include "fmt_impl.h"
#include "../lib/core/text.h"
#include "infer.h"
#include "json_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <xxhash.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define MAX_PARTS 8             /* most parts of a flattened column name */
#define MAX_NEST 1024           /* deepest nesting of arrays and objects */
#define MAX_BATCH_FIELDS ((int64_t)1 << 22)

enum {
    V_NULL = 0, V_FALSE, V_TRUE, V_INT, V_FLOAT, V_STR, V_STRESC, V_JSON,
    V_NUMTXT /* a number no double holds exactly (infer.h): its text */
};

typedef struct NdField {
    uint64_t off;
    uint32_t len;
    uint32_t kind;
} NdField;

typedef struct NdCol {
    NdField *f;        /* fields of the batch's rows, or NULL (late column) */
    int64_t cap;       /* rows f has room for */
    TlType seen;       /* late columns: the type of their values so far */
} NdCol;

typedef struct Entry {
    int32_t parent;    /* node the key belongs to */
    int32_t col;       /* column of a plain value under this key, or -1 */
    int32_t node;      /* node of an object under this key, or -1 */
    uint32_t key_len;
    bool plain;        /* printable ASCII without " and \: matches raw text */
    uint64_t hash;
    uint8_t *key;      /* decoded key bytes */
} Entry;

typedef struct Node {
    char *path;        /* "a.b." (empty for the root) */
    size_t path_len;
    int parts;         /* parts in the names of its columns */
} Node;

/* One key of the line shape (parse_shaped): the text `"key":` as it must
 * appear, its first 16 bytes as two masked words. */
typedef struct NdSlot {
    uint64_t w[2], m[2];
    const uint8_t *key;  /* the entry's key bytes (keys over 13 bytes) */
    uint32_t key_len;
    int32_t col;         /* its column (known at open) */
} NdSlot;

#define MAX_SHAPE 64    /* most keys in a line shape */


struct NdReader;

/* What tokenizing and converting a run of lines needs, private to one
 * thread: the position, the key tables (a copy of those open built, plus
 * keys met since), the fields of the lines and scratch memory.  Open has
 * one (it discovers the columns); every decoder has one; next() reads
 * through a decoder of its own.  Names follow the reader's where they mean
 * the same thing. */
typedef struct NdCursor {
    struct NdReader *rd;     /* read only, except that open's cursor adds
                                the columns it discovers to rd->schema */
    const char *name;        /* rd's, for messages */
    TlBuf *input;            /* rd's (borrowed) */
    const uint8_t *p;
    size_t size;
    size_t start;            /* after the BOM */
    size_t pos;              /* where the next line starts */
    int64_t line;            /* line of pos, 1-based */
    size_t line_start;       /* first byte of the line being tokenized */

    TlSchema *schema;        /* &rd->schema */
    const bool *skip;        /* rd->skip (decoders): columns not stored */
    int n_open;              /* columns known at open (INT32_MAX while open
                                discovers them) */
    TlSchema late;           /* keys first seen after the first batch */
    NdCol *cols;             /* per column of schema then late */
    int cols_cap;

    Entry *entries;
    int n_entries, entries_cap;
    int32_t *table;          /* hash -> entry index, -1 empty */
    uint32_t table_mask;
    int32_t *seq;            /* entry of the k-th key of the previous line */
    int seq_cap;
    Node *nodes;
    int n_nodes, nodes_cap;
    uint8_t *keybuf;         /* a decoded escaped key */
    size_t keybuf_cap;
    uint8_t nest[MAX_NEST];  /* skip_value's stack of open brackets */
    NdSlot shape[MAX_SHAPE]; /* the keys of the last line parse_object read
                                (when flat and known), for parse_shaped */
    int shape_len;           /* 0: no shape */
    int shape_keys;          /* keys of the line parse_object read last,
                                when its shape is still to be made */
    int shape_miss;          /* lines in a row the shape did not fit */
    int shape_wait;          /* lines to read before trying it again */

    int64_t max_rows;
    int64_t n_rows;          /* records tokenized */
    int64_t n_dirty;         /* rows whose fields may be set */
    int64_t *row_line;       /* max_rows */
    bool saw_late;           /* a key not known at open was met */
    bool saw_lone_cr;        /* a record ended at a lone CR */
    size_t batch_start, batch_end;
    TlBuf *window;
    size_t window_base;
    TlError *err;            /* of the call tokenizing */
} NdCursor;

typedef struct NdDecoder {
    TlDecoder base;
    NdCursor cur;
    TlInputCopy copy;        /* the morsel read with pread (nd_decode) */
} NdDecoder;

typedef struct NdReader {
    TlReader base;
    char *name;              /* for messages: path or "<stdin>" */
    TlBuf *input;
    const uint8_t *p;
    size_t size;
    size_t start;            /* after the BOM */

    TlSchema schema;         /* every column, its type (fixed after open) */
    int n_open;              /* schema.n_fields */
    bool *fixed;             /* per column: type fixed by --schema */
    TlTypeHints *hints;
    NdCursor *keys;          /* open's cursor: the key tables decoders copy
                                (never changed after open) */

    int *proj;
    int n_proj;
    TlSchema proj_schema;
    bool *skip;              /* per column: not projected (decoders do not
                                store its fields) */
    int64_t max_rows;        /* most records a morsel holds */

    /* split: where the next morsel starts */
    size_t split_pos;
    int64_t split_line;
    int64_t split_seq;
    size_t split_bytes;      /* its target size */
    bool guess;              /* cut at the first LF past the target
                                (tl_reader_guess; see nd_split) */
    size_t max_record;       /* --max-record-size (a stream's split) */
    TlDecoder *own;          /* next()'s decoder */
    int64_t late_seq;        /* lowest morsel seq met with a late key
                                (atomic; INT64_MAX: none) */
} NdReader;



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

static TlStatus ensure_cols(NdCursor *r, int n)
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

/* Total columns: those known at open (or discovered so far) plus late ones. */
static inline int n_all_cols(const NdCursor *r)
{
    return r->schema->n_fields + r->late.n_fields;
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
        st = ensure_cols(r, c + 1);
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

/* Widen the inferred type t by a value of kind k. */
static inline TlType widen_kind(TlType t, uint32_t k)
{
    TlType v;
    switch (k) {
    case V_NULL: return t;
    case V_FALSE: case V_TRUE: v = TL_TBOOL; break;
    case V_INT: v = TL_TINT64; break;
    case V_FLOAT: v = TL_TFLOAT64; break;
    default: v = TL_TSTRING; break;
    }
    if (t == TL_TNULL || t == v) return v;
    if ((t == TL_TINT64 && v == TL_TFLOAT64) || (t == TL_TFLOAT64 && v == TL_TINT64))
        return TL_TFLOAT64;
    return TL_TSTRING;
}

/* store() for the rare cases: long values, late columns, growth. */
static TlStatus store_slow(NdCursor *r, int c, int64_t row, size_t off,
                           size_t len, uint32_t kind)
{
    NdCol *col = &r->cols[c];
    if (len > UINT32_MAX)
        return syntax_error(r, off, "value longer than 4 GiB");
    if (c >= r->n_open) /* a key first seen after the first batch */
        r->saw_late = true;
    if (row >= col->cap) {
        int64_t cap = col->cap ? col->cap : 64;
        NdField *g;
        while (cap <= row) cap *= 2;
        if (cap > r->max_rows) cap = r->max_rows;
        g = tl_realloc(col->f, (size_t)cap * sizeof *g);
        if (!g) return tl_error_oom(r->err);
        memset(g + col->cap, 0, (size_t)(cap - col->cap) * sizeof *g);
        col->f = g;
        col->cap = cap;
    }
    col->f[row] = (NdField){off, (uint32_t)len, kind};
    return TL_OK;
}

/* Record field {off, len, kind} of column c at row. */
static inline TlStatus store(NdCursor *r, int c, int64_t row, size_t off,
                             size_t len, uint32_t kind)
{
    NdCol *col = &r->cols[c];
    if (__builtin_expect(c >= r->n_open || len > UINT32_MAX, 0))
        return store_slow(r, c, row, off, len, kind);
    if (r->skip && r->skip[c]) return TL_OK; /* not converted */
    if (__builtin_expect(row >= col->cap, 0)) return store_slow(r, c, row, off, len, kind);
    col->f[row] = (NdField){off, (uint32_t)len, kind};
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
                if (__builtin_expect(row >= col->cap, 0))
                    TL_TRY(store_slow(r, c, row, off, len, kind));
                else
                    col->f[row] = (NdField){off, (uint32_t)len, kind};
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

/* Zero the fields the previous tokenization wrote. */
static void clear_fields(NdCursor *r)
{
    for (int c = 0; c < n_all_cols(r) && c < r->cols_cap; c++) {
        NdCol *col = &r->cols[c];
        int64_t n = r->n_dirty < col->cap ? r->n_dirty : col->cap;
        if (col->f && n > 0) memset(col->f, 0, (size_t)n * sizeof *col->f);
    }
    r->n_dirty = 0;
}

/* Tokenize the lines from pos up to end (a line end or the input's end):
 * at most max_rows records.  After a syntax error n_rows still holds the
 * records before the bad line (decode converts them: a bad value earlier
 * in the input is reported first). */
static TlStatus tokenize_batch(NdCursor *r, size_t end, TlError *err)
{
    const uint8_t *p = r->p;
    const size_t n = r->size;
    int64_t rows = 0;
    TlStatus st = TL_OK;
    r->err = err;
    clear_fields(r);
    r->n_rows = 0;
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
        r->n_dirty = rows + 1; /* parse_object writes this row's fields */
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
    if (r->n_dirty < rows) r->n_dirty = rows;
    r->batch_end = r->pos;
    return st;
}

/* ------------------------------------------------------------ inference */

/* The narrowest type, starting from t, holding column c's values of the
 * tokenized batch; *why = the row whose value made a numeric column a
 * string (-1: none did, or the column is text: neither the type before,
 * the value, nor the next few values are numbers).  In a float64 column an
 * integer of over 15 digits must be an exact double (infer.h). */
static TlType infer_column(const NdCursor *r, int c, TlType t, int64_t *why)
{
    const NdCol *col = &r->cols[c];
    int64_t n = r->n_rows < col->cap ? r->n_rows : col->cap, row;
    TlType was = t;
    double v;
    *why = -1;
    for (row = 0; row < n && t != TL_TSTRING; row++) {
        was = t;
        t = widen_kind(t, col->f[row].kind);
    }
    if (t == TL_TSTRING && row > 0 && was != TL_TINT64 && was != TL_TFLOAT64 &&
        col->f[row - 1].kind != V_NUMTXT) {
        bool num = false;
        for (int64_t k = row; k < n && k < row + 16 && !num; k++)
            num = col->f[k].kind == V_INT || col->f[k].kind == V_FLOAT;
        if (!num) row = 0; /* text: no note */
    }
    for (int64_t k = 0; t == TL_TFLOAT64 && k < n; k++) {
        const NdField *f = &col->f[k];
        if (f->kind == V_INT && f->len > 15 &&
            !tl_exact_f64((const char *)r->p + f->off, f->len, &v))
            t = TL_TSTRING, row = k + 1;
    }
    if (t == TL_TSTRING && row > 0) *why = row - 1;
    return t;
}

/* ----------------------------------------------------------- conversion */

typedef struct Validity {
    TlBuf *buf;
    int64_t null_count;
} Validity;

static bool validity_null(Validity *v, int64_t n_rows, int64_t row)
{
    if (!v->buf) {
        v->buf = tl_buf_new(tl_bitmap_bytes(n_rows), false);
        if (!v->buf) return false;
        memset(v->buf->data, 0xff, tl_bitmap_bytes(n_rows));
    }
    tl_bit_clear(v->buf->data, row);
    v->null_count++;
    return true;
}

/* Integer text (validated, fits int64) -> value. */
static inline int64_t int_of(const uint8_t *s, uint32_t len)
{
    bool neg = s[0] == '-';
    uint64_t v = 0;
    for (uint32_t i = neg; i < len; i++) v = v * 10 + (uint64_t)(s[i] - '0');
    return neg ? (int64_t)(0 - v) : (int64_t)v;
}

/* The field of column c at row (a zero field past the column's end). */
static inline NdField field_at(const NdCursor *r, int c, int64_t row)
{
    const NdCol *col = &r->cols[c];
    if (row < col->cap) return col->f[row];
    return (NdField){0, 0, V_NULL};
}

/* Bytes of a decoded string or date text into buf (room for len). */
static const uint8_t *text_of(const NdCursor *r, NdField f, uint8_t *buf, size_t *len)
{
    if (f.kind == V_STRESC) {
        *len = unescape(r->p + f.off, f.len, buf);
        return buf;
    }
    *len = f.len;
    return r->p + f.off;
}

/* One converter per type: *bad = the first row whose value does not fit
 * (then no array is made). */
static TlStatus convert_i64(NdCursor *r, int c, TlArray **out, int64_t *bad, TlError *err)
{
    const int64_t n = r->n_rows;
    Validity v = {NULL, 0};
    TlBuf *values = tl_buf_new((size_t)n * sizeof(int64_t), false);
    int64_t *vals;
    if (!values) return tl_error_oom(err);
    vals = (int64_t *)values->data;
    for (int64_t row = 0; row < n; row++) {
        NdField f = field_at(r, c, row);
        if (f.kind == V_INT) {
            vals[row] = int_of(r->p + f.off, f.len);
        } else if (f.kind == V_NULL) {
            vals[row] = 0;
            if (!validity_null(&v, n, row)) goto oom;
        } else {
            *bad = row;
            goto drop;
        }
    }
    *out = tl_array_new(TL_TINT64, n, values, v.buf, v.null_count, NULL, 0);
    return *out ? TL_OK : tl_error_oom(err);
oom:
    tl_error_oom(err);
drop:
    tl_buf_release(values);
    tl_buf_release(v.buf);
    return *bad >= 0 ? TL_OK : err->code;
}

static TlStatus convert_f64(NdCursor *r, int c, bool fixed, TlArray **out, int64_t *bad,
                            TlError *err)
{
    const int64_t n = r->n_rows;
    Validity v = {NULL, 0};
    TlBuf *values = tl_buf_new((size_t)n * sizeof(double), false);
    double *vals;
    if (!values) return tl_error_oom(err);
    vals = (double *)values->data;
    for (int64_t row = 0; row < n; row++) {
        NdField f = field_at(r, c, row);
        const uint8_t *s = r->p + f.off;
        if (f.kind == V_INT) {
            int64_t x = int_of(s, f.len);
            vals[row] = x == 0 && s[0] == '-' ? -0.0 : (double)x;
            if (!fixed && f.len > 15 && !tl_exact_f64((const char *)s, f.len, &vals[row])) {
                *bad = row;
                goto drop;
            }
        } else if (f.kind == V_FLOAT || (fixed && f.kind == V_NUMTXT)) {
            if (!tl_parse_f64((const char *)s, f.len, &vals[row])) goto oom;
        } else if (f.kind == V_NULL) {
            vals[row] = 0;
            if (!validity_null(&v, n, row)) goto oom;
        } else {
            *bad = row;
            goto drop;
        }
    }
    *out = tl_array_new(TL_TFLOAT64, n, values, v.buf, v.null_count, NULL, 0);
    return *out ? TL_OK : tl_error_oom(err);
oom:
    tl_error_oom(err);
drop:
    tl_buf_release(values);
    tl_buf_release(v.buf);
    return *bad >= 0 ? TL_OK : err->code;
}

static TlStatus convert_bool(NdCursor *r, int c, TlArray **out, int64_t *bad, TlError *err)
{
    const int64_t n = r->n_rows;
    Validity v = {NULL, 0};
    TlBuf *values = tl_buf_new(tl_bitmap_bytes(n), true);
    if (!values) return tl_error_oom(err);
    for (int64_t row = 0; row < n; row++) {
        NdField f = field_at(r, c, row);
        if (f.kind == V_TRUE) {
            tl_bit_set(values->data, row);
        } else if (f.kind == V_NULL) {
            if (!validity_null(&v, n, row)) goto oom;
        } else if (f.kind != V_FALSE) {
            *bad = row;
            goto drop;
        }
    }
    *out = tl_array_new(TL_TBOOL, n, values, v.buf, v.null_count, NULL, 0);
    return *out ? TL_OK : tl_error_oom(err);
oom:
    tl_error_oom(err);
drop:
    tl_buf_release(values);
    tl_buf_release(v.buf);
    return *bad >= 0 ? TL_OK : err->code;
}

/* Dates and timestamps (only with --schema): strings that parse. */
static TlStatus convert_datetime(NdCursor *r, int c, TlType t, TlArray **out,
                                 int64_t *bad, TlError *err)
{
    const int64_t n = r->n_rows;
    size_t w = t == TL_TDATE ? sizeof(int32_t) : sizeof(int64_t);
    Validity v = {NULL, 0};
    TlBuf *values = tl_buf_new((size_t)n * w, true);
    uint8_t tmp[64];
    if (!values) return tl_error_oom(err);
    for (int64_t row = 0; row < n; row++) {
        NdField f = field_at(r, c, row);
        const uint8_t *s;
        size_t len;
        bool ok;
        if (f.kind == V_NULL) {
            if (!validity_null(&v, n, row)) goto oom;
            continue;
        }
        if ((f.kind != V_STR && f.kind != V_STRESC) || f.len >= sizeof tmp) {
            *bad = row;
            goto drop;
        }
        s = text_of(r, f, tmp, &len);
        if (t == TL_TDATE)
            ok = tl_parse_date((const char *)s, len, (int32_t *)values->data + row);
        else
            ok = tl_parse_timestamp((const char *)s, len, (int64_t *)values->data + row);
        if (!ok) {
            *bad = row;
            goto drop;
        }
    }
    *out = tl_array_new(t, n, values, v.buf, v.null_count, NULL, 0);
    return *out ? TL_OK : tl_error_oom(err);
oom:
    tl_error_oom(err);
drop:
    tl_buf_release(values);
    tl_buf_release(v.buf);
    return *bad >= 0 ? TL_OK : err->code;
}

static TlStatus convert_null(NdCursor *r, int c, TlArray **out, int64_t *bad, TlError *err)
{
    for (int64_t row = 0; row < r->n_rows; row++) {
        if (field_at(r, c, row).kind != V_NULL) {
            *bad = row;
            return TL_OK;
        }
    }
    *out = tl_array_new_null(TL_TNULL, r->n_rows);
    return *out ? TL_OK : tl_error_oom(err);
}

/* Decoded strings and compacted JSON: one growing block (views hold
 * offsets, so it may move while it grows). */
typedef struct CopyBlock {
    uint8_t *data;
    size_t used, cap;
} CopyBlock;

static bool block_reserve(CopyBlock *b, size_t more)
{
    size_t cap = b->cap ? b->cap : 4096;
    uint8_t *g;
    if (b->used + more <= b->cap) return true;
    while (cap < b->used + more) cap *= 2;
    g = tl_realloc(b->data, cap);
    if (!g) return false;
    b->data = g;
    b->cap = cap;
    return true;
}

/* Copy the validated JSON text s[0..len) without whitespace outside
 * strings into out (room for len); returns the length. */
static size_t compact_json(const uint8_t *s, size_t len, uint8_t *out)
{
    size_t o = 0;
    bool in_str = false;
    for (size_t i = 0; i < len; i++) {
        uint8_t c = s[i];
        if (in_str) {
            out[o++] = c;
            if (c == '\\') out[o++] = s[++i];
            else if (c == '"') in_str = false;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
        if (c == '"') in_str = true;
        out[o++] = c;
    }
    return o;
}

/* The buffer long views of this batch point into (see csv_read.c). */
static TlStatus ensure_window(NdCursor *r, TlError *err)
{
    if (r->window) return TL_OK;
    if (r->size <= UINT32_MAX) {
        r->window = tl_buf_retain(r->input);
        r->window_base = 0;
    } else {
        r->window = tl_buf_slice(r->input, r->batch_start, r->batch_end - r->batch_start);
        r->window_base = r->batch_start;
    }
    return r->window ? TL_OK : tl_error_oom(err);
}

static TlStatus convert_str(NdCursor *r, int c, TlArray **out, int64_t *bad, TlError *err)
{
    const int64_t n = r->n_rows;
    Validity v = {NULL, 0};
    CopyBlock blk = {NULL, 0, 0};
    bool use_window = false;
    TlBuf **data = NULL;
    uint32_t n_data = 0;
    TlView *views;
    TlBuf *values = tl_buf_new((size_t)n * sizeof(TlView), false);
    (void)bad;
    if (!values) return tl_error_oom(err);
    views = (TlView *)values->data;
    if (ensure_window(r, err) != TL_OK) goto fail;
    /* window views use buffer 0 and block views buffer 1, fixed up below
     * when only the block is used */
    for (int64_t row = 0; row < n; row++) {
        NdField f = field_at(r, c, row);
        const uint8_t *s = r->p + f.off;
        uint32_t len = f.len;
        TlView *vw = &views[row];
        vw->w[0] = vw->w[1] = 0;
        switch (f.kind) {
        case V_NULL:
            if (!validity_null(&v, n, row)) goto oom;
            continue;
        case V_TRUE:
            *vw = tl_view_inline("true", 4);
            continue;
        case V_FALSE:
            *vw = tl_view_inline("false", 5);
            continue;
        case V_STR: case V_INT: case V_FLOAT: case V_NUMTXT:
            vw->in.len = len;
            if (len <= TL_VIEW_INLINE) {
                memcpy(vw->in.data, s, len);
                continue;
            }
            if (f.off - r->window_base + len <= UINT32_MAX) {
                memcpy(vw->out.prefix, s, 4);
                vw->out.buf = 0;
                vw->out.off = (uint32_t)(f.off - r->window_base);
                use_window = true;
                continue;
            }
            if (!block_reserve(&blk, len)) goto oom;
            memcpy(blk.data + blk.used, s, len);
            break;
        default: /* V_STRESC, V_JSON */
            if (!block_reserve(&blk, len)) goto oom;
            len = (uint32_t)(f.kind == V_JSON ? compact_json(s, len, blk.data + blk.used)
                                              : unescape(s, len, blk.data + blk.used));
            vw->in.len = len;
            if (len <= TL_VIEW_INLINE) {
                memcpy(vw->in.data, blk.data + blk.used, len);
                continue;
            }
            break;
        }
        if (blk.used + len > UINT32_MAX) {
            tl_error(err, TL_ERR_DATA, "%s:%lld: too much escaped text in one batch "
                     "(over 4 GiB)", r->name, (long long)r->row_line[row]);
            goto fail;
        }
        memcpy(vw->out.prefix, blk.data + blk.used, 4);
        vw->out.buf = 1;
        vw->out.off = (uint32_t)blk.used;
        blk.used += len;
    }
    if (use_window || blk.used) {
        data = tl_malloc(2 * sizeof *data);
        if (!data) goto oom;
        if (use_window) data[n_data++] = tl_buf_retain(r->window);
        if (blk.used) {
            uint8_t *shrunk = tl_realloc(blk.data, blk.used);
            if (shrunk) blk.data = shrunk;
            data[n_data] = tl_buf_adopt(blk.data, blk.used);
            blk.data = NULL;
            if (!data[n_data]) {
                while (n_data) tl_buf_release(data[--n_data]);
                tl_free(data);
                data = NULL;
                goto oom;
            }
            n_data++;
            if (!use_window)
                for (int64_t row = 0; row < n; row++)
                    if (views[row].in.len > TL_VIEW_INLINE) views[row].out.buf = 0;
        }
    }
    tl_free(blk.data);
    *out = tl_array_new(TL_TSTRING, n, values, v.buf, v.null_count, data, n_data);
    return *out ? TL_OK : tl_error_oom(err);
oom:
    tl_error_oom(err);
fail:
    tl_free(blk.data);
    tl_buf_release(values);
    tl_buf_release(v.buf);
    return err->code;
}

static TlStatus convert(NdCursor *r, int c, bool fixed, TlArray **out, int64_t *bad,
                        TlError *err)
{
    TlType t = r->schema->fields[c].type;
    switch (t) {
    case TL_TBOOL: return convert_bool(r, c, out, bad, err);
    case TL_TINT64: return convert_i64(r, c, out, bad, err);
    case TL_TFLOAT64: return convert_f64(r, c, fixed, out, bad, err);
    case TL_TSTRING: return convert_str(r, c, out, bad, err);
    case TL_TDATE: case TL_TTIMESTAMP: return convert_datetime(r, c, t, out, bad, err);
    default: return convert_null(r, c, out, bad, err);
    }
}


/* ------------------------------------------------------ morsel decoding */

/* A value of column c at row does not fit the column's type: a data error
 * for a --schema column (and without hints); otherwise the projected
 * columns' types widened by this morsel's values go into *widen and the
 * reader asks for a restart. */
static TlStatus value_misfit(const NdReader *r, NdCursor *cu, int c, int64_t row,
                             TlSchema **widen, TlError *err)
{
    const TlField *fld = &r->schema.fields[c];
    NdField f = field_at(cu, c, row);
    TlSchema *w;
    int i;
    if (r->fixed[c] || !r->hints) {
        /* column of the value in its line: find the line start (LF only:
         * past a lone CR, before the morsel, so through r's mapping, not
         * the cursor's copy) */
        size_t ls = f.off;
        int64_t col = 1;
        if (f.kind == V_STR || f.kind == V_STRESC) ls--; /* the quote */
        size_t at = ls;
        while (ls > cu->start && r->p[ls - 1] != '\n') ls--;
        for (size_t j = ls; j < at; j++)
            if ((r->p[j] & 0xC0) != 0x80) col++;
        const char *v = (const char *)cu->p + f.off; /* source text; strings quoted */
        bool str = f.kind == V_STR || f.kind == V_STRESC;
        return tl_error(err, TL_ERR_DATA, "%s:%lld:%lld: %s is not a valid %s (column %s)",
                        r->name, (long long)cu->row_line[row], (long long)col,
                        (str ? tl_quote_json(v, f.len) : tl_escape_value(v, f.len)).s,
                        tl_type_name(fld->type), tl_quote_name(fld->name).s);
    }
    {
        /* the note travels with the widen schema (infer.h) */
        int64_t why;
        TlType t = infer_column(cu, c, fld->type, &why);
        if (t == fld->type) why = row; /* never loop: a string */
        if (why >= 0) f = field_at(cu, c, why);
        w = tl_widen_new(why >= 0 ? fld->name : NULL,
                         cu->row_line[why < 0 ? 0 : why], (const char *)cu->p + f.off,
                         f.len, false);
        if (!w) return tl_error_oom(err);
    }
    for (int k = 0; k < r->n_proj; k++) {
        int pc = r->proj[k];
        TlType old = r->schema.fields[pc].type, t;
        int64_t why;
        if (r->fixed[pc]) continue;
        t = infer_column(cu, pc, old, &why);
        if (pc == c && t == old) t = TL_TSTRING; /* never loop */
        if (t != old && tl_schema_add(w, r->schema.fields[pc].name, t, err) != TL_OK) {
            tl_schema_free(w);
            tl_free(w);
            return err->code;
        }
    }
    *widen = w;
    i = tl_schema_find(w, fld->name);
    return tl_error(err, TL_ERR_RESTART,
                    "%s:%lld: column %s holds a %s value; reading again",
                    r->name, (long long)cu->row_line[row], tl_quote_name(fld->name).s,
                    tl_type_name(w->fields[i].type));
}

/* Keys first seen after the first batch (open's sample) in morsel seq:
 * tokenize the rest of the input too (so a file that adds keys in many
 * places restarts once, not once per morsel), put every late key with the
 * type of its values in *widen and ask for a restart (without hints, a
 * data error).  Bad lines further on are passed over here: the restarted
 * run reports the first problem in input order.
 *
 * Only the first morsel in input order with a late key has its restart
 * taken, so only its scan matters: morsels note their seq in r->late_seq
 * (an atomic minimum, the one thing decoders write to the reader), and a
 * scan stops as soon as an earlier morsel is known to have late keys too
 * (its result is then never used), so threads do not each scan the rest. */
static TlStatus late_keys(NdReader *r, NdCursor *cu, int64_t seq, TlSchema **widen,
                          TlError *err)
{
    TlSchema *w;
    const int n = cu->schema->n_fields;
    int64_t low = __atomic_load_n(&r->late_seq, __ATOMIC_RELAXED);
    if (!r->hints)
        return tl_error(err, TL_ERR_DATA, "%s: key %s first appears after the "
                        "first batch", r->name, tl_quote_name(cu->late.fields[0].name).s);
    /* the rest of a streamed input must be there (a decoder may wait: the
     * decompressor is a thread of its own), to its end */
    TL_TRY(tl_input_finish(r->input, err));
    cu->size = tl_input_size(r->input);
    while (seq < low && !__atomic_compare_exchange_n(&r->late_seq, &low, seq, false,
                                                     __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    for (;;) {
        TlStatus st;
        /* the types of the values kept (a duplicate key's last) */
        for (int i = 0; i < cu->late.n_fields; i++) {
            int64_t why;
            cu->cols[n + i].seen = infer_column(cu, n + i, cu->cols[n + i].seen, &why);
        }
        if (cu->pos >= cu->size || __atomic_load_n(&r->late_seq, __ATOMIC_RELAXED) < seq)
            break;
        st = tokenize_batch(cu, cu->size, err);
        if (st == TL_ERR_DATA) {
            /* a bad line: the keys before its error count; go on after
             * it (the next run reports it, in its place) */
            const uint8_t *nl = memchr(cu->p + cu->pos, '\n', cu->size - cu->pos);
            cu->pos = nl ? (size_t)(nl - cu->p) + 1 : cu->size;
        } else if (st != TL_OK) {
            return st;
        }
    }
    w = tl_widen_new(NULL, 0, NULL, 0, false);
    if (!w) return tl_error_oom(err);
    for (int i = 0; i < cu->late.n_fields; i++)
        if (tl_schema_add(w, cu->late.fields[i].name, cu->cols[n + i].seen, err) != TL_OK) {
            tl_schema_free(w);
            tl_free(w);
            return err->code;
        }
    *widen = w;
    return tl_error(err, TL_ERR_RESTART, "%s: new key %s; reading again",
                    r->name, tl_quote_name(cu->late.fields[0].name).s);
}

/* A decoder that met late keys in an earlier morsel forgets them (the
 * entries of their columns are made again when met again). */
static void forget_late(NdCursor *cu)
{
    clear_fields(cu);
    for (int e = 0; e < cu->n_entries; e++)
        if (cu->entries[e].col >= cu->n_open) cu->entries[e].col = -1;
    for (int c = cu->n_open; c < n_all_cols(cu); c++) cu->cols[c].seen = TL_TNULL;
    tl_schema_free(&cu->late);
}

/* Convert the projected columns of the tokenized rows into *out.  Values
 * that do not fit: the one in the lowest row (then the first projected
 * column) is reported (value_misfit). */
static TlStatus convert_rows(const NdReader *r, NdCursor *cu, TlBatch **out,
                             TlSchema **widen, TlError *err)
{
    TlBatch *b = tl_batch_new(&r->proj_schema, r->n_proj, cu->n_rows);
    int64_t bad_row = -1;
    int bad_col = -1;
    TlStatus st = TL_OK;
    if (!b) return tl_error_oom(err);
    for (int k = 0; k < r->n_proj && st == TL_OK; k++) {
        int c = r->proj[k];
        int64_t bad = -1;
        st = convert(cu, c, r->fixed[c], &b->cols[k], &bad, err);
        if (st == TL_OK && bad >= 0 && (bad_row < 0 || bad < bad_row)) {
            bad_row = bad;
            bad_col = c;
        }
    }
    if (st == TL_OK && bad_row >= 0) st = value_misfit(r, cu, bad_col, bad_row, widen, err);
    tl_buf_release(cu->window);
    cu->window = NULL;
    if (st != TL_OK) {
        tl_batch_free(b);
        return st;
    }
    *out = b;
    return TL_OK;
}

/* Decode morsel m with cursor cu (see tl_reader_decode).  The outcome
 * does not depend on where morsels are cut: a late key restarts first
 * (whatever else the morsel holds: the next run knows the key and goes on
 * with the rest); then the first problem in input order is reported: a
 * syntax error, unless a value before it does not fit. */
static TlStatus decode_morsel(NdReader *r, NdCursor *cu, const TlMorsel *m,
                              TlBatch **out, TlSchema **widen, TlError *err)
{
    TlError terr;
    TlStatus tst, st;
    *out = NULL;
    *widen = NULL;
    if (cu->late.n_fields) forget_late(cu);
    cu->saw_late = false;
    cu->saw_lone_cr = false;
    cu->pos = m->begin < cu->start ? cu->start : (size_t)m->begin;
    cu->line = m->line;
    tst = tokenize_batch(cu, (size_t)m->end, &terr);
    if (tst != TL_OK && tst != TL_ERR_DATA) {
        *err = terr;
        return tst;
    }
    /* A guessed end (nd_split) is the careful one when no lone CR ended a
     * record in the morsel and it has fewer line ends than a morsel may
     * hold; anything else in a guessed morsel (an error, whose message
     * needs the line; a late key) fails it, and the consumer splits again
     * from it (tl_reader_resplit). */
    if (m->line < 0 && (tst != TL_OK || cu->saw_late || cu->saw_lone_cr ||
                        cu->line - m->line >= r->max_rows || cu->pos < (size_t)m->end))
        return tl_error(err, TL_ERR_DATA, "%s: internal error: a guessed morsel end "
                        "was not split again", r->name);
    if (cu->saw_late) {
        /* the rest of the input, through the mapping */
        cu->p = r->p;
        cu->size = r->size;
        return late_keys(r, cu, m->seq, widen, err);
    }
    if (tst != TL_OK && cu->n_rows == 0) {
        *err = terr;
        return tst;
    }
    if (cu->n_rows == 0) return TL_OK;
    st = convert_rows(r, cu, out, widen, err);
    if (st == TL_OK && tst != TL_OK) {
        tl_batch_free(*out);
        *out = NULL;
        *err = terr;
        return tst;
    }
    return st;
}

/* ------------------------------------------------------------ splitting */

#define MORSEL_FIRST ((size_t)64 << 10) /* bytes of the first morsel */
#define MORSEL_MOST ((size_t)2 << 20)   /* bytes a morsel grows to */

static int64_t force_rows, force_bytes; /* tl_ndjson_split_force */

/* See fmt_impl.h. */
void tl_ndjson_split_force(int64_t rows, int64_t bytes)
{
    force_rows = rows > 0 ? rows : 0;
    force_bytes = bytes > 0 ? bytes : 0;
}

/* The target size of the morsel after one of b bytes: doubling up to
 * MORSEL_MOST (a forced size stays). */
static size_t morsel_next(size_t b)
{
    if (force_bytes || b >= MORSEL_MOST) return b;
    return b * 2 < MORSEL_MOST ? b * 2 : MORSEL_MOST;
}

/* The end of the morsel starting at begin, for input whose lines end at
 * LF (or CRLF): after the line end that is the max_lines-th, or lies at or
 * after byte limit - 1, or at the input's end; *lines = line ends in it.
 * Returns 0 with *lone set when a CR not followed by LF comes first (the
 * careful scan decides then). */
static size_t find_end_fast(const uint8_t *p, size_t n, size_t begin, size_t limit,
                            int64_t max_lines, int64_t *lines, bool *lone)
{
    size_t i = begin;
    int64_t nl = 0;
#ifdef __SSE2__
    const __m128i lf = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r');
    while (i + 16 < n) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        uint32_t ml = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, lf));
        uint32_t mc = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, cr));
        if (mc) {
            uint32_t next_lf = (ml >> 1) | ((uint32_t)(p[i + 16] == '\n') << 15);
            if (mc & ~next_lf) break; /* the bytewise loop finds it in order */
        }
        for (; ml; ml &= ml - 1) { /* lines are long: few bits a block */
            size_t at = i + (size_t)__builtin_ctz(ml);
            if (++nl >= max_lines || at + 1 >= limit) {
                *lines = nl;
                return at + 1;
            }
        }
        i += 16;
    }
#endif
    for (; i < n; i++) {
        if (p[i] == '\r' && (i + 1 >= n || p[i + 1] != '\n')) {
            *lone = true;
            return 0;
        }
        if (p[i] == '\n' && (++nl >= max_lines || i + 1 >= limit)) {
            *lines = nl;
            return i + 1;
        }
    }
    *lines = nl;
    return n;
}

/* find_end_fast for input with lone CRs: a lone CR right after a line's
 * object (outside strings, brackets closed, spaces or tabs between) ends a
 * record and counts as a line end, as the tokenizer has it; elsewhere it is
 * white space.  A malformed line may be misjudged, but only after the
 * place where decoding it reports its first error. */
static size_t find_end_careful(const uint8_t *p, size_t n, size_t begin, size_t limit,
                               int64_t max_lines, int64_t *lines)
{
    int64_t nl = 0, depth = 0;
    bool str = false, closed = false;
    for (size_t i = begin; i < n; i++) {
        uint8_t c = p[i];
        if (c == '\n') {
            /* a line end */
        } else if (str) {
            if (c == '\\' && i + 1 < n && p[i + 1] != '\n') i++;
            else if (c == '"') str = false;
            continue;
        } else if (c == '\r') {
            if (!closed || depth != 0 || (i + 1 < n && p[i + 1] == '\n')) continue;
        } else if (closed) {
            if (c != ' ' && c != '\t') closed = false;
            continue;
        } else {
            if (c == '"') str = true;
            else if (c == '{' || c == '[') depth++;
            else if (c == '}' || c == ']') closed = --depth == 0 && c == '}';
            continue;
        }
        depth = 0;
        str = closed = false;
        if (++nl >= max_lines || i + 1 >= limit) {
            *lines = nl;
            return i + 1;
        }
    }
    *lines = nl;
    return n;
}

/* ----------------------------------------------------------- the reader */

/* Set up cursor cu for r: with proto, a copy of its key tables (a decoder);
 * without, open's cursor that discovers the columns. */
static TlStatus cursor_init(NdReader *r, NdCursor *cu, const NdCursor *proto,
                            TlError *err)
{
    memset(cu, 0, sizeof *cu);
    cu->rd = r;
    cu->name = r->name;
    cu->input = r->input;
    cu->p = r->p;
    cu->size = r->size;
    cu->start = cu->pos = r->start;
    cu->line = 1;
    cu->schema = &r->schema;
    cu->n_open = proto ? r->n_open : INT32_MAX;
    cu->max_rows = r->max_rows;
    cu->err = err;
    cu->row_line = tl_malloc((size_t)cu->max_rows * sizeof *cu->row_line);
    if (!cu->row_line) return tl_error_oom(err);
    if (!proto) {
        cu->nodes = tl_calloc(8, sizeof *cu->nodes);
        if (!cu->nodes) return tl_error_oom(err);
        cu->nodes_cap = 8;
        cu->nodes[0].path = tl_strdup("");
        if (!cu->nodes[0].path) return tl_error_oom(err);
        cu->n_nodes = 1;
        return TL_OK;
    }
    TL_TRY(ensure_cols(cu, r->n_open));
    cu->skip = r->skip;
    cu->nodes = tl_calloc((size_t)proto->nodes_cap, sizeof *cu->nodes);
    cu->entries = tl_calloc((size_t)proto->entries_cap + 1, sizeof *cu->entries);
    if (!cu->nodes || !cu->entries) return tl_error_oom(err);
    cu->nodes_cap = proto->nodes_cap;
    cu->entries_cap = proto->entries_cap + 1;
    for (int i = 0; i < proto->n_nodes; i++) {
        const Node *s = &proto->nodes[i];
        cu->nodes[i] = *s;
        cu->nodes[i].path = tl_malloc(s->path_len + 1);
        if (!cu->nodes[i].path) return tl_error_oom(err);
        memcpy(cu->nodes[i].path, s->path, s->path_len + 1);
        cu->n_nodes = i + 1;
    }
    for (int e = 0; e < proto->n_entries; e++) {
        const Entry *s = &proto->entries[e];
        cu->entries[e] = *s;
        cu->entries[e].key = tl_malloc((size_t)s->key_len + 1);
        if (!cu->entries[e].key) return tl_error_oom(err);
        memcpy(cu->entries[e].key, s->key, (size_t)s->key_len + 1);
        cu->n_entries = e + 1;
    }
    if (proto->table) {
        size_t bytes = ((size_t)proto->table_mask + 1) * sizeof *cu->table;
        cu->table = tl_malloc(bytes);
        if (!cu->table) return tl_error_oom(err);
        memcpy(cu->table, proto->table, bytes);
        cu->table_mask = proto->table_mask;
    }
    return TL_OK;
}

static void cursor_free(NdCursor *cu)
{
    tl_buf_release(cu->window);
    tl_schema_free(&cu->late);
    for (int c = 0; c < cu->cols_cap; c++) tl_free(cu->cols[c].f);
    tl_free(cu->cols);
    for (int e = 0; e < cu->n_entries; e++) tl_free(cu->entries[e].key);
    tl_free(cu->entries);
    tl_free(cu->table);
    tl_free(cu->seq);
    for (int i = 0; i < cu->n_nodes; i++) tl_free(cu->nodes[i].path);
    tl_free(cu->nodes);
    tl_free(cu->keybuf);
    tl_free(cu->row_line);
}

static const TlReaderOps ndjson_ops;

static const TlSchema *nd_schema(const TlReader *base)
{
    return &((const NdReader *)base)->schema;
}

static TlStatus nd_project(TlReader *base, const int *cols, int n_cols, TlError *err)
{
    NdReader *r = (NdReader *)base;
    int *proj = NULL;
    TlSchema ps = {0};
    if (n_cols < 0) n_cols = 0;
    if (n_cols > 0) {
        proj = tl_malloc((size_t)n_cols * sizeof *proj);
        if (!proj) return tl_error_oom(err);
    }
    for (int i = 0; i < n_cols; i++) {
        if (cols[i] < 0 || cols[i] >= r->schema.n_fields) {
            tl_free(proj);
            tl_schema_free(&ps);
            return tl_error(err, TL_ERR_USAGE, "%s: no column number %d", r->name,
                            cols[i] + 1);
        }
        proj[i] = cols[i];
        if (tl_schema_add(&ps, r->schema.fields[cols[i]].name,
                          r->schema.fields[cols[i]].type, err) != TL_OK) {
            tl_free(proj);
            tl_schema_free(&ps);
            return err->code;
        }
    }
    tl_free(r->proj);
    tl_schema_free(&r->proj_schema);
    r->proj = proj;
    r->n_proj = n_cols;
    r->proj_schema = ps;
    for (int c = 0; c < r->n_open; c++) r->skip[c] = true;
    for (int i = 0; i < n_cols; i++) r->skip[proj[i]] = false;
    return TL_OK;
}

/* Morsels: whole lines, cut at LF (and at a lone CR that ends a record),
 * at most max_rows lines, growing from MORSEL_FIRST bytes by doubling to
 * MORSEL_MOST.  The first starts at byte 0 (before a BOM) so the morsels'
 * bytes add up to the input's size. */
/* The first line of the whole lines [pos, end) longer than
 * --max-record-size (its line end not counted): its line in *at; false
 * when none.  A line at a time: only for a stretch longer than the bound. */
static bool long_line(const NdReader *r, size_t pos, size_t end, int64_t line, int64_t *at)
{
    bool cr = memchr(r->p + pos, '\r', end - pos) != NULL;
    while (pos < end) {
        const uint8_t *lf;
        size_t next, e;
        int64_t l = 0;
        if (cr) {
            next = find_end_careful(r->p, end, pos, 0, 1, &l);
        } else {
            lf = memchr(r->p + pos, '\n', end - pos);
            next = lf ? (size_t)(lf - r->p) + 1 : end;
            l = lf != NULL;
        }
        e = next;
        if (e > pos && r->p[e - 1] == '\n') e--;
        if (e > pos && r->p[e - 1] == '\r') e--;
        if (e - pos > r->max_record) {
            *at = line;
            return true;
        }
        pos = next;
        line += l;
    }
    return false;
}

/* A line of a stream longer than --max-record-size in the bytes [begin,
 * ready) the split looked at (held in memory until its end: decompressed
 * bytes, stream.c): a whole one, or the last when it has no end yet (it
 * starts after the last LF, or a lone CR that ends a record).  Its line
 * is counted as nd_resplit counts. */
static TlStatus line_too_long(const NdReader *r, size_t begin, size_t ready, TlError *err)
{
    const uint8_t *lf;
    size_t start;
    int64_t lines = 0, at;
    if (ready - begin <= r->max_record || !tl_input_is_stream(r->input)) return TL_OK;
    lf = memrchr(r->p + begin, '\n', ready - begin);
    start = lf ? (size_t)(lf - r->p) + 1 : begin;
    while (ready - start > r->max_record && memchr(r->p + start, '\r', ready - start)) {
        size_t e = find_end_careful(r->p, ready, start, 0, 1, &lines);
        if (e >= ready) break;
        start = e;
    }
    if (start - begin > r->max_record && long_line(r, begin, start, r->split_line, &at))
        return tl_error(err, TL_ERR_DATA, "%s:%lld: record longer than %zu bytes "
                        "(--max-record-size)", r->name, (long long)at, r->max_record);
    if (ready - start <= r->max_record) return TL_OK;
    lines = 0;
    if (memchr(r->p + begin, '\r', start - begin))
        find_end_careful(r->p, start, begin, SIZE_MAX, INT64_MAX, &lines);
    else
        lines = tl_count_lf(r->p + begin, start - begin);
    return tl_error(err, TL_ERR_DATA, "%s:%lld: record longer than %zu bytes "
                    "(--max-record-size)", r->name, (long long)(r->split_line + lines),
                    r->max_record);
}

static TlStatus nd_split(TlReader *base, TlMorsel *m, bool *got, TlError *err)
{
    NdReader *r = (NdReader *)base;
    size_t begin = r->split_pos, limit, end, size = tl_input_size(r->input);
    int64_t lines = 0;
    bool lone = false;
    *got = false;
    if (begin >= size) return TL_OK;
    limit = r->size - begin > r->split_bytes ? begin + r->split_bytes : r->size;
    if (r->guess) {
        /* only the bytes from the target to the next LF are read; the
         * line is known only when split again */
        const uint8_t *lf = memchr(r->p + limit - 1, '\n', r->size - (limit - 1));
        end = lf ? (size_t)(lf - r->p) + 1 : r->size;
        m->line = -1;
        goto cut;
    }
    for (size_t want = limit + TL_INPUT_AHEAD;;) {
        /* a streamed input (fmt_impl.h): cut in the bytes ready, and take
         * the cut when it lies TL_INPUT_AHEAD before their end (it is
         * then where the whole input puts it) or they are all (where a
         * stream of unknown size ended); else wait for twice the bytes
         * (a long line is scanned a few times), up to --max-record-size */
        size_t ready, more;
        TL_TRY(tl_input_wait(r->input, want, &ready, err));
        size = tl_input_size(r->input);
        lines = 0;
        lone = false;
        end = find_end_fast(r->p, ready, begin, limit < ready ? limit : ready,
                            r->max_rows, &lines, &lone);
        if (lone)
            end = find_end_careful(r->p, ready, begin, limit < ready ? limit : ready,
                                   r->max_rows, &lines);
        if (ready >= size || (end < ready && ready - end >= TL_INPUT_AHEAD)) {
            TL_TRY(line_too_long(r, begin, end, err));
            break;
        }
        TL_TRY(line_too_long(r, begin, end, err));
        more = ready - begin < ((size_t)1 << 20) ? (size_t)1 << 20 : ready - begin;
        want = ready + more;
    }
    m->line = r->split_line;
    r->split_line += lines;
cut:
    m->seq = r->split_seq++;
    m->begin = begin;
    m->end = end;
    r->split_pos = end;
    r->split_bytes = morsel_next(r->split_bytes);
    *got = true;
    return TL_OK;
}

/* See format.h: guess morsel ends from now on (not for a stream: it is
 * cut in the bytes ready, its lines checked against --max-record-size).
 * JSON strings hold no raw LF,
 * so every LF ends a line. */
static void nd_guess(TlReader *base)
{
    NdReader *r = (NdReader *)base;
    if (!tl_input_is_stream(r->input) && r->split_seq == 0) r->guess = true;
}

/* See format.h: the next split starts at guessed morsel m, which began at
 * a line start (the morsels before it were checked), and reads every byte
 * from now on; m's line is counted from the input's start (careful about
 * lone CRs only when the bytes hold a CR). */
static TlStatus nd_resplit(TlReader *base, const TlMorsel *m, TlError *err)
{
    NdReader *r = (NdReader *)base;
    int64_t lines = 0;
    if (m->line >= 0 || m->begin > r->size)
        return tl_error(err, TL_ERR_DATA, "%s: internal error: split again "
                        "from a morsel not guessed", r->name);
    if (memchr(r->p, '\r', (size_t)m->begin))
        find_end_careful(r->p, (size_t)m->begin, 0, SIZE_MAX, INT64_MAX, &lines);
    else
        lines = tl_count_lf(r->p, (size_t)m->begin);
    r->guess = false;
    r->split_pos = (size_t)m->begin;
    r->split_seq = m->seq;
    r->split_line = 1 + lines;
    r->split_bytes = force_bytes ? (size_t)force_bytes : MORSEL_FIRST;
    for (int64_t k = 0; k < m->seq; k++) {
        size_t next = morsel_next(r->split_bytes);
        if (next == r->split_bytes) break; /* at its most, or forced */
        r->split_bytes = next;
    }
    return TL_OK;
}

static TlStatus nd_decoder_new(TlReader *base, TlDecoder **out, TlError *err)
{
    NdReader *r = (NdReader *)base;
    NdDecoder *d = tl_calloc(1, sizeof *d);
    *out = NULL;
    if (!d) return tl_error_oom(err);
    d->base.ops = &ndjson_ops;
    if (cursor_init(r, &d->cur, r->keys, err) != TL_OK) {
        cursor_free(&d->cur);
        tl_free(d);
        return err->code;
    }
    *out = &d->base;
    return TL_OK;
}

static void nd_decoder_free(TlDecoder *base)
{
    NdDecoder *d = (NdDecoder *)base;
    cursor_free(&d->cur);
    tl_input_copy_free(&d->copy);
    tl_free(d);
}

/* Decode morsel m; for a mapped file through a copy of it (the CSV
 * reader's "copies": the cursor's p and size address the morsel and
 * TL_COPY_PAD bytes either side, read with tl_input_copy, so every read
 * stays in the copy; late_keys, which reads on to the input's end, goes
 * back to the mapping). */
static TlStatus nd_decode(TlReader *base, TlDecoder *d, const TlMorsel *m,
                          TlBatch **out, TlSchema **widen, TlError *err)
{
    NdReader *r = (NdReader *)base;
    NdCursor *cu = &((NdDecoder *)d)->cur;
    size_t hi;
    const uint8_t *p = tl_input_copy(r->input, &((NdDecoder *)d)->copy, m->begin, m->end, &hi);
    TlStatus st;
    /* the input's end: a stream of unknown size that ended has r->size
     * the address space reserved for it */
    cu->p = r->p;
    cu->size = tl_input_size(r->input);
    if (p) {
        cu->p = p;
        cu->size = hi;
    }
    st = decode_morsel(r, cu, m, out, widen, err);
    cu->p = r->p;
    cu->size = tl_input_size(r->input);
    if (st == TL_OK) tl_input_drop(r->input, m->begin, m->end);
    return st;
}

static TlStatus nd_widen(TlReader *base, const TlSchema *widen, TlError *err)
{
    NdReader *r = (NdReader *)base;
    if (!r->hints || !widen) return TL_OK;
    for (int i = 0; i < widen->n_fields; i++)
        TL_TRY(tl_hint_set(r->hints, widen->fields[i].name, widen->fields[i].type, err));
    return tl_widen_note(r->hints, widen, r->name, err);
}

static void nd_count(TlReader *base, int64_t rows, int64_t bytes)
{
    NdReader *r = (NdReader *)base;
    r->base.stats.bytes += bytes;
    if (rows <= 0) return;
    r->base.stats.rows += rows;
    r->base.stats.batches++;
    for (int k = 0; k < r->n_proj; k++) r->base.stats.converted[r->proj[k]] += rows;
}

/* next(): the morsels, in order, through a decoder of the reader's own. */
static TlStatus nd_next(TlReader *base, TlBatch **out, TlError *err)
{
    NdReader *r = (NdReader *)base;
    *out = NULL;
    if (!r->own) TL_TRY(nd_decoder_new(base, &r->own, err));
    for (;;) {
        TlMorsel m;
        TlSchema *widen = NULL;
        TlBatch *b = NULL;
        bool got = false;
        TlStatus st;
        TL_TRY(nd_split(base, &m, &got, err));
        if (!got) return TL_OK;
        st = nd_decode(base, r->own, &m, &b, &widen, err);
        if (widen) {
            TlError werr;
            if (nd_widen(base, widen, &werr) != TL_OK) {
                *err = werr;
                st = werr.code;
            }
            tl_schema_free(widen);
            tl_free(widen);
        }
        if (st != TL_OK) return st;
        nd_count(base, b ? b->n_rows : 0, (int64_t)(m.end - m.begin));
        if (b) {
            *out = b;
            return TL_OK;
        }
    }
}

static void nd_close(TlReader *base)
{
    NdReader *r = (NdReader *)base;
    if (r->own) nd_decoder_free(r->own);
    if (r->keys) cursor_free(r->keys);
    tl_free(r->keys);
    tl_free(r->name);
    tl_buf_release(r->input);
    tl_schema_free(&r->schema);
    tl_free(r->fixed);
    tl_free(r->skip);
    tl_free(r->proj);
    tl_schema_free(&r->proj_schema);
    tl_free(r->base.stats.converted);
    tl_free(r);
}

/* The line of record i of the morsel d decoded last (fmt_impl.h). */
static int64_t nd_row_line(TlDecoder *d, int64_t i) { return ((NdDecoder *)d)->cur.row_line[i]; }
static const TlReaderOps ndjson_ops = {
    .schema = nd_schema, .project = nd_project, .next = nd_next, .close = nd_close,
    .split = nd_split, .decoder_new = nd_decoder_new, .decoder_free = nd_decoder_free,
    .decode = nd_decode, .widen = nd_widen, .count = nd_count,
    .guess = nd_guess, .resplit = nd_resplit, .row_line = nd_row_line};

/* Add column name (type null) unless present; its index in *c. */
static TlStatus add_column(NdReader *r, NdCursor *cu, const char *name, int *c,
                           TlError *err)
{
    *c = tl_schema_find(&r->schema, name);
    if (*c >= 0) return TL_OK;
    cu->err = err;
    TL_TRY(ensure_cols(cu, r->schema.n_fields + 1));
    TL_TRY(tl_schema_add(&r->schema, name, TL_TNULL, err));
    *c = r->schema.n_fields - 1;
    return TL_OK;
}

/* After the first batch: append hint columns it did not hold, apply
 * --schema (a name not in the data is added), infer the other types. */
static TlStatus decide_types(NdReader *r, NdCursor *cu, const TlSchema *fixed,
                             TlTypeHints *hints, TlError *err)
{
    int c;
    if (hints)
        for (int i = 0; i < hints->cols.n_fields; i++)
            TL_TRY(add_column(r, cu, hints->cols.fields[i].name, &c, err));
    if (fixed)
        for (int i = 0; i < fixed->n_fields; i++)
            if (!tl_fixed_is_glob(fixed->fields[i].name))
                TL_TRY(add_column(r, cu, fixed->fields[i].name, &c, err));
    r->fixed = tl_calloc((size_t)r->schema.n_fields + 1, sizeof *r->fixed);
    if (!r->fixed) return tl_error_oom(err);
    for (c = 0; fixed && c < r->schema.n_fields; c++) {
        int i = tl_fixed_find(fixed, r->schema.fields[c].name);
        if (i < 0) continue;
        r->schema.fields[c].type = fixed->fields[i].type;
        r->fixed[c] = true;
    }
    for (c = 0; c < r->schema.n_fields; c++) {
        TlType t = TL_TNULL;
        int64_t why;
        if (r->fixed[c]) continue;
        if (hints) {
            int h = tl_schema_find(&hints->cols, r->schema.fields[c].name);
            if (h >= 0) t = hints->cols.fields[h].type;
        }
        r->schema.fields[c].type = infer_column(cu, c, t, &why);
        if (why >= 0 && hints) {
            NdField f = field_at(cu, c, why);
            TL_TRY(tl_hint_note(hints, r->schema.fields[c].name, r->name,
                                cu->row_line[why], (const char *)cu->p + f.off, f.len,
                                false, err));
        }
    }
    return TL_OK;
}

/* One attempt of tl_ndjson_reader_open with the first need bytes of a
 * streamed input (the whole of any other); *sure false: the sample came
 * too near the end of the bytes it saw, so it may differ from the whole
 * input's (the reader is returned all the same). */
static TlStatus nd_open(const char *path, const TlReadOptions *opt, TlTypeHints *hints,
                        size_t need, bool *sure, size_t *next, TlReader **out,
                        TlError *err)
{
    NdReader *r;
    NdCursor *cu;
    int *all = NULL;
    size_t ready, full;
    TlStatus sample_st;
    *out = NULL;
    *sure = true;
    r = tl_calloc(1, sizeof *r);
    if (!r) return tl_error_oom(err);
    r->base.ops = &ndjson_ops;
    r->hints = hints;
    r->split_line = 1;
    r->late_seq = INT64_MAX;
    r->split_bytes = force_bytes ? (size_t)force_bytes : MORSEL_FIRST;
    r->max_rows = force_rows ? force_rows : tl_batch_rows();
    r->name = tl_strdup(tl_escape_name(tl_input_name(path)).s);
    if (!r->name) goto oom;
    if (tl_input_load_stream(path, &r->input, err) != TL_OK) goto fail;
    r->base.input = r->input;
    r->p = r->input->data;
    /* a streamed input: the sample sees the bytes ready (need); it is
     * taken when it ends TL_INPUT_AHEAD before their end, else the caller
     * opens again with more */
    if (tl_input_wait(r->input, need, &ready, err) != TL_OK) goto fail;
    full = tl_input_size(r->input);
    r->max_record = opt && opt->max_record ? opt->max_record : TL_MAX_RECORD;
    r->size = ready;
    *sure = ready >= full; /* an error from part of the input: try all of it */
    if (r->size >= 3 && r->p[0] == 0xEF && r->p[1] == 0xBB && r->p[2] == 0xBF)
        r->start = 3;
    r->keys = cu = tl_malloc(sizeof *cu);
    if (!cu) goto oom;
    if (cursor_init(r, cu, NULL, err) != TL_OK) goto fail;
    /* a bad line ends the sample; decoding reports it in its place (so a
     * problem before it in the input comes first whatever the sample) */
    sample_st = tokenize_batch(cu, r->size, err);
    if (sample_st != TL_OK && err->code != TL_ERR_DATA) goto fail;
    if (ready < full) {
        *sure = sample_st == TL_OK && cu->n_rows == cu->max_rows &&
                ready - cu->pos >= TL_INPUT_AHEAD;
        r->size = cu->size = full;
        if (!*sure) {
            /* the bytes may end inside a line: no longer than
             * --max-record-size */
            if (line_too_long(r, 0, ready, err) != TL_OK) {
                *sure = true;
                goto fail;
            }
            *next = tl_tail_line(r->p, 0, ready) + r->max_record + 1;
        }
    }
    r->max_rows = cu->max_rows; /* fewer for wide input */
    if (decide_types(r, cu, opt ? opt->schema : NULL, hints, err) != TL_OK) goto fail;
    r->n_open = cu->n_open = r->schema.n_fields;
    /* the sample's fields are not needed any more */
    for (int c = 0; c < cu->cols_cap; c++) {
        tl_free(cu->cols[c].f);
        cu->cols[c].f = NULL;
        cu->cols[c].cap = 0;
    }
    cu->n_rows = cu->n_dirty = 0;
    r->base.stats.converted = tl_calloc((size_t)r->n_open + 1, sizeof(int64_t));
    r->skip = tl_calloc((size_t)r->n_open + 1, sizeof *r->skip);
    all = tl_malloc(((size_t)r->n_open + 1) * sizeof *all);
    if (!r->base.stats.converted || !r->skip || !all) goto oom;
    for (int i = 0; i < r->n_open; i++) all[i] = i;
    if (nd_project(&r->base, all, r->n_open, err) != TL_OK) goto fail;
    tl_free(all);
    *out = &r->base;
    return TL_OK;
oom:
    tl_error_oom(err);
fail:
    tl_free(all);
    nd_close(&r->base);
    return err->code;
}

/* Open the NDJSON input at path: load it, tokenize the first batch (which
 * discovers the columns) and decide every column's type.  Batches then
 * hold all columns until tl_reader_project.  hints (may be NULL) give
 * minimum types and extra columns by name and receive widened types and
 * late keys on restart.  A streamed input (fmt_impl.h) is opened on the
 * bytes ready, and again with more while the sample reaches their end. */
typedef struct NdOpenArgs {
    const char *path;
    const TlReadOptions *opt;
    TlTypeHints *hints;
} NdOpenArgs;

static TlStatus nd_open_try(void *ctx, size_t need, bool *sure, size_t *next,
                            TlReader **out, TlError *err)
{
    const NdOpenArgs *a = ctx;
    return nd_open(a->path, a->opt, a->hints, need, sure, next, out, err);
}

TlStatus tl_ndjson_reader_open(const char *path, const TlReadOptions *opt,
                               TlTypeHints *hints, TlReader **out, TlError *err)
{
    NdOpenArgs a = {path, opt, hints};
    return tl_reader_open_ready(nd_open_try, &a, out, err);
}
