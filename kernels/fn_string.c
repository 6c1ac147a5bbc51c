/*
 * fn_string.c -- length lower upper trim ltrim rtrim substr replace contains
 * starts_with ends_with split_part concat.
 *
 * Characters are Unicode code points in UTF-8 (length, substr, split_part
 * with an empty separator, trim's character set); bytes that are not valid
 * UTF-8 count as one character each and are copied unchanged.  lower/upper
 * use utf8proc's simple (one to one) case mappings of every Unicode
 * character, the library and mappings DuckDB uses: 'ǅ' -> 'Ǆ'/'ǆ', 'ß' ->
 * 'ẞ' (never 'SS': a character never becomes two).  A mapping may change a
 * character's UTF-8 length (ß is 2 bytes, ẞ 3), never by more than half
 * again, so twice the input's length is room enough.  trim without a second
 * argument removes Unicode space separators (category Zs: ' ', U+00A0,
 * U+2000..U+200A, U+3000, ...), as DuckDB does -- not tabs or newlines.
 *
 * Output: results that are a piece of an input string (substr, trim,
 * split_part, and lower/upper/replace when nothing changes) are new views
 * into the input's own data blocks: the result array retains those blocks,
 * so no byte is copied.  New bytes go into blocks owned by the result:
 *
 *   result->data = [ input blocks (retained) ... | own block | own block ]
 *                    views of pieces point here    views of new strings
 *
 * Strings of at most 12 bytes are always inline in their view.  Rows that
 * are null in the result hold an empty view.
 */
#include "fn_impl.h"

#include <utf8proc.h>

/* ------------------------------------------------------------ UTF-8 */

static inline bool is_ascii(const uint8_t *p, size_t n)
{
    size_t i = 0;
    uint64_t acc = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        acc |= w;
    }
    for (; i < n; i++) acc |= p[i];
    return (acc & UINT64_C(0x8080808080808080)) == 0;
}

#define HIGH_BITS UINT64_C(0x8080808080808080)
#define ONES UINT64_C(0x0101010101010101)

/* Continuation bytes (10xxxxxx) in the word w, as their high bits. */
static inline uint64_t cont_bits(uint64_t w)
{
    return w & ~(w << 1) & HIGH_BITS;
}

/* Code points in p[0..n): bytes that are not continuation bytes, counted
 * eight at a time (all-ASCII words skip the count; the high-bit count is a
 * multiply, as baseline x86-64 has no popcnt instruction). */
static inline size_t cp_count(const uint8_t *p, size_t n)
{
    size_t i = 0, cont = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        if (w & HIGH_BITS) cont += (size_t)(((cont_bits(w) >> 7) * ONES) >> 56);
    }
    for (; i < n; i++) cont += (p[i] & 0xC0) == 0x80;
    return n - cont;
}

/* Map the ASCII letters of p[0..n) to upper (or lower) case into d, eight
 * bytes at a time (SWAR: a byte b is in [lo, hi] iff b + (0x80 - lo) has
 * its high bit set and b + (0x7f - hi) has not; no byte carries into the
 * next as all bytes are < 0x80).  Returns -1 (d unspecified) if p is not
 * all ASCII, else 1 if some byte changed and 0 if none did. */
static int ascii_case(const uint8_t *p, size_t n, uint8_t *d, bool upper)
{
    const uint64_t ge = (uint64_t)(0x80 - (upper ? 'a' : 'A')) * ONES;
    const uint64_t gt = (uint64_t)(0x7f - (upper ? 'z' : 'Z')) * ONES;
    uint64_t changed = 0, w;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, p + i, 8);
        if (w & HIGH_BITS) return -1;
        uint64_t m = (w + ge) & ~(w + gt) & HIGH_BITS;
        changed |= m;
        w ^= m >> 2;
        memcpy(d + i, &w, 8);
    }
    uint8_t lo = upper ? 'a' : 'A', tail_changed = 0;
    for (; i < n; i++) {
        uint8_t b = p[i];
        if (b & 0x80) return -1;
        uint8_t flip = (uint8_t)(b - lo) < 26 ? 0x20 : 0;
        tail_changed |= flip;
        d[i] = b ^ flip;
    }
    return (changed | tail_changed) != 0;
}

/* Byte offset of code point k (0-based) of p[0..n), or n if k >= count.
 * Counting starts at byte `from`, which is code point `k0`. */
static inline size_t cp_offset(const uint8_t *p, size_t n, size_t from,
                               size_t k0, size_t k)
{
    size_t i = from, c = k0;
    if (c >= k) return i;
    for (; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) {
            if (c == k) return i;
            c++;
        }
    }
    return n;
}

/* Decode the code point at p[0..n) (n > 0); *adv = bytes used.  Invalid or
 * truncated sequences decode as the single byte (returned | 0x80000000). */
static inline uint32_t decode(const uint8_t *p, size_t n, size_t *adv)
{
    uint8_t b = p[0];
    if (b < 0x80) {
        *adv = 1;
        return b;
    }
    size_t len = b >= 0xF0 ? (b < 0xF8 ? 4 : 0) : b >= 0xE0 ? 3 : b >= 0xC2 ? 2 : 0;
    if (len == 0 || len > n) goto bad;
    uint32_t c = b & (0x7F >> len);
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80) goto bad;
        c = (c << 6) | (p[i] & 0x3F);
    }
    if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10FFFF)))
        goto bad;
    *adv = len;
    return c;
bad:
    *adv = 1;
    return 0x80000000u | b;
}

static inline size_t encode(uint32_t c, uint8_t *o)
{
    if (c & 0x80000000u) { /* an undecodable byte: copied as is */
        o[0] = (uint8_t)c;
        return 1;
    }
    if (c < 0x80) {
        o[0] = (uint8_t)c;
        return 1;
    }
    if (c < 0x800) {
        o[0] = (uint8_t)(0xC0 | (c >> 6));
        o[1] = (uint8_t)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        o[0] = (uint8_t)(0xE0 | (c >> 12));
        o[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
        o[2] = (uint8_t)(0x80 | (c & 0x3F));
        return 3;
    }
    o[0] = (uint8_t)(0xF0 | (c >> 18));
    o[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
    o[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
    o[3] = (uint8_t)(0x80 | (c & 0x3F));
    return 4;
}

/* Unicode category Zs (space separators). */
static inline bool is_zs(uint32_t c)
{
    return c == 0x20 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
           c == 0x202F || c == 0x205F || c == 0x3000;
}

/* -------------------------------------------------------- string output */

typedef struct StrOut {
    int64_t n;
    TlBuf *values;   /* n views, zeroed */
    TlView *views;
    TlBuf **data;    /* shared input blocks, then own blocks */
    uint32_t n_data, cap;
    TlBuf *blk;      /* the own block being filled (data[blk_idx]) */
    uint32_t blk_idx;
    size_t blk_used;
    size_t first_block; /* size hint for the first own block */
    uint8_t tmp[16];    /* scratch for results of at most 12 bytes */
} StrOut;

static bool so_init(StrOut *so, int64_t n, size_t hint)
{
    memset(so, 0, sizeof *so);
    so->n = n;
    so->first_block = hint;
    so->values = tl_buf_new((size_t)n * sizeof(TlView), true);
    if (!so->values) return false;
    so->views = (TlView *)so->values->data;
    return true;
}

static void so_free(StrOut *so)
{
    tl_buf_release(so->values);
    for (uint32_t j = 0; j < so->n_data; j++) tl_buf_release(so->data[j]);
    tl_free(so->data);
    memset(so, 0, sizeof *so);
}

/* Append the reference b (taken over, also on failure). */
static bool so_push(StrOut *so, TlBuf *b)
{
    if (so->n_data == so->cap) {
        uint32_t cap = so->cap ? so->cap * 2 : 8;
        TlBuf **d = tl_realloc(so->data, sizeof(TlBuf *) * cap);
        if (!d) {
            tl_buf_release(b);
            return false;
        }
        so->data = d;
        so->cap = cap;
    }
    so->data[so->n_data++] = b;
    return true;
}

/* Retain a's data blocks into the result; *base is the index of a's block
 * 0 in the result. */
static bool so_share(StrOut *so, const TlArray *a, uint32_t *base)
{
    *base = so->n_data;
    for (uint32_t j = 0; j < a->n_data; j++)
        if (!so_push(so, tl_buf_retain(a->data[j]))) return false;
    return true;
}

static inline void view_inline(TlView *v, const uint8_t *p, size_t len)
{
    v->w[0] = v->w[1] = 0;
    v->in.len = (uint32_t)len;
    memcpy(v->in.data, p, len);
}

/* Row i = bytes [off, off+len) of the string of view src (whose bytes are
 * at p), sharing src's block (shared at `base`) when out of line. */
static inline void so_piece(StrOut *so, int64_t i, const TlView *src,
                            uint32_t base, const uint8_t *p, size_t off,
                            size_t len)
{
    TlView *v = &so->views[i];
    if (len <= TL_VIEW_INLINE) {
        view_inline(v, p + off, len);
        return;
    }
    v->out.len = (uint32_t)len;
    memcpy(v->out.prefix, p + off, 4);
    v->out.buf = src->out.buf + base;
    v->out.off = src->out.off + (uint32_t)off;
}

/* Row i = the whole string of src. */
static inline void so_same(StrOut *so, int64_t i, const TlView *src,
                           uint32_t base)
{
    so->views[i] = *src;
    if (tl_view_len(*src) > TL_VIEW_INLINE) so->views[i].out.buf += base;
}

/* Room for a new string of at most max bytes (max < 4 GiB): write it there
 * and call so_commit.  NULL on OOM. */
static uint8_t *so_space(StrOut *so, size_t max)
{
    if (max <= TL_VIEW_INLINE) return so->tmp;
    if (!so->blk || so->blk->size - so->blk_used < max) {
        size_t sz = so->blk ? (size_t)1 << 20 : so->first_block;
        if (sz < max) sz = max;
        if (sz > UINT32_MAX) sz = UINT32_MAX;
        TlBuf *b = tl_buf_new(sz, false);
        if (!b || !so_push(so, b)) return NULL;
        so->blk = b;
        so->blk_idx = so->n_data - 1;
        so->blk_used = 0;
    }
    return so->blk->data + so->blk_used;
}

/* Row i = the len bytes just written at p (from so_space). */
static inline void so_commit(StrOut *so, int64_t i, const uint8_t *p,
                             size_t len)
{
    TlView *v = &so->views[i];
    if (len <= TL_VIEW_INLINE) {
        view_inline(v, p, len);
        return;
    }
    v->out.len = (uint32_t)len;
    memcpy(v->out.prefix, p, 4);
    v->out.buf = so->blk_idx;
    v->out.off = (uint32_t)so->blk_used;
    so->blk_used += len;
}

/* Freeze into *out (the validity reference is taken over). */
static TlStatus so_finish(StrOut *so, TlBuf *validity, TlArray **out,
                          TlError *err)
{
    TlBuf **data = so->data;
    uint32_t nd = so->n_data;
    if (nd == 0) {
        tl_free(data);
        data = NULL;
    }
    *out = tl_array_new(TL_TSTRING, so->n, so->values, validity, -1, data, nd);
    memset(so, 0, sizeof *so);
    return *out ? TL_OK : tl_error_oom(err);
}

/* Bytes of the strings of datum d over n_rows rows (only the out-of-line
 * ones unless `all`): a size hint for the first own block, capped at
 * 64 MiB. */
static size_t str_bytes(const TlDatum *d, int64_t n_rows, bool all)
{
    const size_t cap = (size_t)64 << 20;
    const TlArray *a = d->array;
    if (a->type != TL_TSTRING) return 0;
    const TlView *v = tl_array_views(a);
    int64_t n = d->scalar ? 1 : n_rows;
    size_t total = 0;
    for (int64_t i = 0; i < n && total < cap; i++)
        if (all || v[i].in.len > TL_VIEW_INLINE) total += v[i].in.len;
    if (d->scalar) total = total * (size_t)(n_rows < 1024 ? n_rows : 1024);
    return total < cap ? total : cap;
}

/* Argument k's view and bytes at row i. */
#define ARG_VIEW(k, i) (&views[k][args[k].scalar ? 0 : (i)])
#define ARG_PTR(k, v) tl_view_ptr((v), args[k].array->data)

/* Collect the views of the string arguments. */
static void arg_views(const TlDatum *args, int n, const TlView **views)
{
    for (int k = 0; k < n; k++)
        views[k] = args[k].array->type == TL_TSTRING
                       ? tl_array_views(args[k].array)
                       : NULL;
}

/* ------------------------------------------------------------ typing */

static bool types_length(const TlType *a, int n, TlType *r, TlType *w)
{
    return tl_k_fn_sig(a, n, "s", 1, TL_TINT64, r, w);
}
static bool types_str1(const TlType *a, int n, TlType *r, TlType *w)
{
    return tl_k_fn_sig(a, n, "s", 1, TL_TSTRING, r, w);
}
static bool types_trim(const TlType *a, int n, TlType *r, TlType *w)
{
    return tl_k_fn_sig(a, n, "ss", 1, TL_TSTRING, r, w);
}
static bool types_substr(const TlType *a, int n, TlType *r, TlType *w)
{
    return tl_k_fn_sig(a, n, "sii", 2, TL_TSTRING, r, w);
}
static bool types_replace(const TlType *a, int n, TlType *r, TlType *w)
{
    return tl_k_fn_sig(a, n, "sss", 3, TL_TSTRING, r, w);
}
static bool types_pred(const TlType *a, int n, TlType *r, TlType *w)
{
    return tl_k_fn_sig(a, n, "ss", 2, TL_TBOOL, r, w);
}
static bool types_split(const TlType *a, int n, TlType *r, TlType *w)
{
    return tl_k_fn_sig(a, n, "ssi", 3, TL_TSTRING, r, w);
}
static bool types_concat(const TlType *a, int n, TlType *r, TlType *w)
{
    if (n < 1) return false;
    for (int i = 0; i < n; i++) w[i] = TL_TSTRING;
    *r = TL_TSTRING;
    return true;
}

/* ------------------------------------------------------------ length */

static TlStatus k_length(const TlDatum *args, int n_args, int64_t n_rows,
                         TlArray **out, int64_t *err_row, TlError *err)
{
    TlBuf *validity = NULL, *values = NULL;
    bool all_null;
    TL_FN_BROADCAST(k_length);
    TL_TRY(tl_k_fn_nulls(args, 1, n_rows, &all_null, &validity, err));
    if (all_null) return tl_k_fn_null_result(TL_TINT64, n_rows, out, err);
    values = tl_k_fn_values(n_rows, 8, true);
    if (!values) {
        tl_buf_release(validity);
        return tl_error_oom(err);
    }
    const TlArray *a = args[0].array;
    const TlView *v = tl_array_views(a);
    int64_t *y = (int64_t *)values->data;
    for (int64_t i = 0; i < n_rows; i++) {
        if (!tl_k_fn_row_valid(validity, i)) continue;
        y[i] = (int64_t)cp_count(tl_view_ptr(&v[i], a->data), tl_view_len(v[i]));
    }
    *out = tl_array_new(TL_TINT64, n_rows, values, validity, -1, NULL, 0);
    return *out ? TL_OK : tl_error_oom(err);
}

/* ------------------------------------------------------- lower / upper */

static TlStatus case_map(const TlDatum *args, int64_t n_rows, bool upper,
                         TlArray **out, TlError *err)
{
    TlBuf *validity = NULL;
    StrOut so;
    uint32_t base;
    bool all_null;
    TL_TRY(tl_k_fn_nulls(args, 1, n_rows, &all_null, &validity, err));
    if (all_null) return tl_k_fn_null_result(TL_TSTRING, n_rows, out, err);
    const TlArray *a = args[0].array;
    const TlView *v = tl_array_views(a);
    if (!so_init(&so, n_rows, str_bytes(&args[0], n_rows, false)) ||
        !so_share(&so, a, &base))
        goto oom;
    for (int64_t i = 0; i < n_rows; i++) {
        if (!tl_k_fn_row_valid(validity, i)) continue;
        const uint8_t *p = tl_view_ptr(&v[i], a->data);
        size_t len = tl_view_len(v[i]);
        /* Written speculatively: if nothing changes, the bytes are left
         * uncommitted and the input string is shared instead (room: see
         * the file comment). */
        uint8_t *d = so_space(&so, 2 * len);
        if (!d) goto oom;
        int r = ascii_case(p, len, d, upper);
        if (r == 0) {
            so_same(&so, i, &v[i], base);
        } else if (r > 0) {
            so_commit(&so, i, d, len);
        } else {
            size_t o = 0, adv;
            for (size_t j = 0; j < len; j += adv) {
                uint32_t c = decode(p + j, len - j, &adv);
                if (!(c & 0x80000000u))
                    c = (uint32_t)(upper ? utf8proc_toupper((utf8proc_int32_t)c)
                                         : utf8proc_tolower((utf8proc_int32_t)c));
                o += encode(c, d + o);
            }
            so_commit(&so, i, d, o);
        }
    }
    return so_finish(&so, validity, out, err);
oom:
    so_free(&so);
    tl_buf_release(validity);
    return tl_error_oom(err);
}

static TlStatus k_lower(const TlDatum *args, int n_args, int64_t n_rows,
                        TlArray **out, int64_t *err_row, TlError *err)
{
    TL_FN_BROADCAST(k_lower);
    return case_map(args, n_rows, false, out, err);
}

static TlStatus k_upper(const TlDatum *args, int n_args, int64_t n_rows,
                        TlArray **out, int64_t *err_row, TlError *err)
{
    TL_FN_BROADCAST(k_upper);
    return case_map(args, n_rows, true, out, err);
}

/* -------------------------------------------------------------- trim */

/* A set of characters to trim: an ASCII table, plus the non-ASCII code
 * points (or the Zs test when `zs`). */
typedef struct TrimSet {
    bool ascii[128];
    bool zs;
    uint32_t *cps;
    size_t n_cps;
} TrimSet;

static bool trimset_build(TrimSet *t, const uint8_t *p, size_t n)
{
    memset(t, 0, sizeof *t);
    if (!p) {
        t->zs = true;
        t->ascii[' '] = true;
        return true;
    }
    size_t adv;
    for (size_t j = 0; j < n; j += adv) {
        uint32_t c = decode(p + j, n - j, &adv);
        if (c < 0x80) {
            t->ascii[c] = true;
            continue;
        }
        if (!t->cps) {
            t->cps = tl_malloc(sizeof(uint32_t) * n);
            if (!t->cps) return false;
        }
        t->cps[t->n_cps++] = c;
    }
    return true;
}

static inline bool trimset_has(const TrimSet *t, uint32_t c)
{
    if (c < 0x80) return t->ascii[c];
    if (t->zs) return is_zs(c);
    for (size_t k = 0; k < t->n_cps; k++)
        if (t->cps[k] == c) return true;
    return false;
}

/* [*b, *e) = p[0..n) without leading (left) / trailing (right) members. */
static void trim_range(const TrimSet *t, const uint8_t *p, size_t n, bool left,
                       bool right, size_t *b, size_t *e)
{
    size_t i = 0, j = n, adv;
    bool only_ascii = !t->zs && t->n_cps == 0;
    if (left) {
        while (i < n) {
            if (p[i] < 0x80) {
                if (!t->ascii[p[i]]) break;
                i++;
            } else {
                if (only_ascii) break;
                uint32_t c = decode(p + i, n - i, &adv);
                if (!trimset_has(t, c)) break;
                i += adv;
            }
        }
    }
    if (right) {
        while (j > i) {
            if (p[j - 1] < 0x80) {
                if (!t->ascii[p[j - 1]]) break;
                j--;
            } else {
                if (only_ascii) break;
                size_t s = j - 1; /* back to the lead byte (at most 3 steps) */
                while (s > i && j - s < 4 && (p[s] & 0xC0) == 0x80) s--;
                uint32_t c = decode(p + s, j - s, &adv);
                if (s + adv != j) { /* not a whole character: a stray byte */
                    s = j - 1;
                    c = 0x80000000u | p[s];
                }
                if (!trimset_has(t, c)) break;
                j = s;
            }
        }
    }
    *b = i;
    *e = j;
}

static TlStatus trim_common(const TlDatum *args, int n_args, int64_t n_rows,
                            bool left, bool right, TlArray **out, TlError *err)
{
    TlBuf *validity = NULL;
    StrOut so;
    TrimSet set = {0};
    uint32_t base;
    bool all_null;
    const TlView *views[2];
    TL_TRY(tl_k_fn_nulls(args, n_args, n_rows, &all_null, &validity, err));
    if (all_null) return tl_k_fn_null_result(TL_TSTRING, n_rows, out, err);
    arg_views(args, n_args, views);
    const TlArray *a = args[0].array;
    bool per_row = n_args == 2 && !args[1].scalar;
    if (!so_init(&so, n_rows, 0) || !so_share(&so, a, &base)) goto oom;
    if (n_args == 1) {
        trimset_build(&set, NULL, 0);
    } else if (!per_row) {
        const TlView *cv = ARG_VIEW(1, 0);
        if (!trimset_build(&set, ARG_PTR(1, cv), tl_view_len(*cv))) goto oom;
    }
    for (int64_t i = 0; i < n_rows; i++) {
        if (!tl_k_fn_row_valid(validity, i)) continue;
        if (per_row) {
            const TlView *cv = ARG_VIEW(1, i);
            tl_free(set.cps);
            if (!trimset_build(&set, ARG_PTR(1, cv), tl_view_len(*cv))) goto oom;
        }
        const TlView *sv = ARG_VIEW(0, i);
        const uint8_t *p = ARG_PTR(0, sv);
        size_t b, e;
        trim_range(&set, p, tl_view_len(*sv), left, right, &b, &e);
        so_piece(&so, i, sv, base, p, b, e - b);
    }
    tl_free(set.cps);
    return so_finish(&so, validity, out, err);
oom:
    tl_free(set.cps);
    so_free(&so);
    tl_buf_release(validity);
    return tl_error_oom(err);
}

static TlStatus k_trim(const TlDatum *args, int n_args, int64_t n_rows,
                       TlArray **out, int64_t *err_row, TlError *err)
{
    TL_FN_BROADCAST(k_trim);
    return trim_common(args, n_args, n_rows, true, true, out, err);
}

static TlStatus k_ltrim(const TlDatum *args, int n_args, int64_t n_rows,
                        TlArray **out, int64_t *err_row, TlError *err)
{
    TL_FN_BROADCAST(k_ltrim);
    return trim_common(args, n_args, n_rows, true, false, out, err);
}

static TlStatus k_rtrim(const TlDatum *args, int n_args, int64_t n_rows,
                        TlArray **out, int64_t *err_row, TlError *err)
{
    TL_FN_BROADCAST(k_rtrim);
    return trim_common(args, n_args, n_rows, false, true, out, err);
}

/* ------------------------------------------------------------ substr */

/* DuckDB's substring bounds, in characters: [*start, *end) of a string of
 * `size` characters for 1-based `offset` and `length`; false if empty.  The
 * window starts at offset (offset 0 is one character before the first, a
 * negative offset counts from the end) and spans length characters forward
 * (backward when length is negative); the part of it outside the string is
 * cut off, so a start before the beginning shortens the result, as in
 * DuckDB (substr('hello', -7, 3) is 'h').  128-bit arithmetic: any int64
 * offset and length. */
static bool substr_bounds(int64_t size, int64_t offset, int64_t length,
                          int64_t *start, int64_t *end)
{
    __int128 s0 = offset > 0 ? (__int128)offset - 1 : offset == 0 ? -1 : (__int128)size + offset;
    __int128 lo = length >= 0 ? s0 : s0 + length;
    __int128 hi = length >= 0 ? s0 + length : s0;
    if (lo < 0) lo = 0;
    if (hi > size) hi = size;
    if (lo >= hi) return false;
    *start = (int64_t)lo;
    *end = (int64_t)hi;
    return true;
}

static TlStatus k_substr(const TlDatum *args, int n_args, int64_t n_rows,
                         TlArray **out, int64_t *err_row, TlError *err)
{
    TlBuf *validity = NULL;
    StrOut so;
    uint32_t base;
    bool all_null;
    TL_FN_BROADCAST(k_substr);
    TL_TRY(tl_k_fn_nulls(args, n_args, n_rows, &all_null, &validity, err));
    if (all_null) return tl_k_fn_null_result(TL_TSTRING, n_rows, out, err);
    const TlArray *a = args[0].array;
    const TlView *sv0 = tl_array_views(a);
    const int64_t *off = tl_array_i64(args[1].array);
    const int64_t *len = n_args == 3 ? tl_array_i64(args[2].array) : NULL;
    bool s_sc = args[0].scalar, o_sc = args[1].scalar;
    bool l_sc = n_args < 3 || args[2].scalar;
    if (!so_init(&so, n_rows, 0) || !so_share(&so, a, &base)) {
        so_free(&so);
        tl_buf_release(validity);
        return tl_error_oom(err);
    }
    for (int64_t i = 0; i < n_rows; i++) {
        if (!tl_k_fn_row_valid(validity, i)) continue;
        const TlView *sv = &sv0[s_sc ? 0 : i];
        const uint8_t *p = tl_view_ptr(sv, a->data);
        size_t n = tl_view_len(*sv);
        int64_t o = off[o_sc ? 0 : i];
        int64_t l = len ? len[l_sc ? 0 : i] : INT64_MAX;
        int64_t cs, ce;
        if (is_ascii(p, n)) {
            if (!substr_bounds((int64_t)n, o, l, &cs, &ce)) continue;
            so_piece(&so, i, sv, base, p, (size_t)cs, (size_t)(ce - cs));
        } else {
            if (!substr_bounds((int64_t)cp_count(p, n), o, l, &cs, &ce)) continue;
            size_t bs = cp_offset(p, n, 0, 0, (size_t)cs);
            size_t be = cp_offset(p, n, bs, (size_t)cs, (size_t)ce);
            so_piece(&so, i, sv, base, p, bs, be - bs);
        }
    }
    return so_finish(&so, validity, out, err);
}

/* ----------------------------------------------------------- replace */

static TlStatus too_long(int64_t row, int64_t *err_row, TlError *err)
{
    *err_row = row;
    return tl_error(err, TL_ERR_DATA,
                    "string result is too long (more than 4294967295 bytes)");
}

static TlStatus k_replace(const TlDatum *args, int n_args, int64_t n_rows,
                          TlArray **out, int64_t *err_row, TlError *err)
{
    TlBuf *validity = NULL;
    StrOut so;
    TlStatus st;
    uint32_t base;
    bool all_null;
    const TlView *views[3];
    TL_FN_BROADCAST(k_replace);
    TL_TRY(tl_k_fn_nulls(args, 3, n_rows, &all_null, &validity, err));
    if (all_null) return tl_k_fn_null_result(TL_TSTRING, n_rows, out, err);
    arg_views(args, 3, views);
    const TlArray *a = args[0].array;
    if (!so_init(&so, n_rows, str_bytes(&args[0], n_rows, false)) ||
        !so_share(&so, a, &base))
        goto oom;
    for (int64_t i = 0; i < n_rows; i++) {
        if (!tl_k_fn_row_valid(validity, i)) continue;
        const TlView *sv = ARG_VIEW(0, i), *fv = ARG_VIEW(1, i), *tv = ARG_VIEW(2, i);
        const uint8_t *p = ARG_PTR(0, sv), *f = ARG_PTR(1, fv), *t = ARG_PTR(2, tv);
        size_t n = tl_view_len(*sv), fl = tl_view_len(*fv), tlen = tl_view_len(*tv);
        size_t hits = 0;
        if (fl > 0 && fl <= n) {
            const uint8_t *q = p, *end = p + n, *h;
            while ((h = tl_k_fn_find(q, (size_t)(end - q), f, fl))) {
                hits++;
                q = h + fl;
            }
        }
        if (hits == 0) {
            so_same(&so, i, sv, base);
            continue;
        }
        uint64_t total = (uint64_t)n - (uint64_t)hits * fl + (uint64_t)hits * tlen;
        if (total > UINT32_MAX) {
            st = too_long(i, err_row, err);
            goto fail;
        }
        uint8_t *d = so_space(&so, (size_t)total);
        if (!d) goto oom;
        const uint8_t *q = p, *end = p + n, *h;
        size_t o = 0;
        while ((h = tl_k_fn_find(q, (size_t)(end - q), f, fl))) {
            memcpy(d + o, q, (size_t)(h - q));
            o += (size_t)(h - q);
            memcpy(d + o, t, tlen);
            o += tlen;
            q = h + fl;
        }
        memcpy(d + o, q, (size_t)(end - q));
        o += (size_t)(end - q);
        so_commit(&so, i, d, o);
    }
    return so_finish(&so, validity, out, err);
oom:
    st = tl_error_oom(err);
fail:
    so_free(&so);
    tl_buf_release(validity);
    return st;
}

/* ------------------------------------ contains / starts_with / ends_with */

enum { P_CONTAINS, P_STARTS, P_ENDS };

static TlStatus predicate(const TlDatum *args, int64_t n_rows, int which,
                          TlArray **out, TlError *err)
{
    TlBuf *validity = NULL, *values = NULL;
    bool all_null;
    const TlView *views[2];
    TL_TRY(tl_k_fn_nulls(args, 2, n_rows, &all_null, &validity, err));
    if (all_null) return tl_k_fn_null_result(TL_TBOOL, n_rows, out, err);
    values = tl_buf_new(tl_bitmap_bytes(n_rows), true);
    if (!values) {
        tl_buf_release(validity);
        return tl_error_oom(err);
    }
    arg_views(args, 2, views);
    uint8_t *bits = values->data;
    for (int64_t i = 0; i < n_rows; i++) {
        if (!tl_k_fn_row_valid(validity, i)) continue;
        const TlView *sv = ARG_VIEW(0, i), *nv = ARG_VIEW(1, i);
        size_t n = tl_view_len(*sv), m = tl_view_len(*nv);
        if (m > n) continue;
        const uint8_t *p = ARG_PTR(0, sv), *q = ARG_PTR(1, nv);
        bool r;
        if (which == P_STARTS) r = memcmp(p, q, m) == 0;
        else if (which == P_ENDS) r = memcmp(p + n - m, q, m) == 0;
        else r = tl_k_fn_find(p, n, q, m) != NULL;
        if (r) tl_bit_set(bits, i);
    }
    *out = tl_array_new(TL_TBOOL, n_rows, values, validity, -1, NULL, 0);
    return *out ? TL_OK : tl_error_oom(err);
}

static TlStatus k_contains(const TlDatum *args, int n_args, int64_t n_rows,
                           TlArray **out, int64_t *err_row, TlError *err)
{
    TL_FN_BROADCAST(k_contains);
    return predicate(args, n_rows, P_CONTAINS, out, err);
}

static TlStatus k_starts_with(const TlDatum *args, int n_args, int64_t n_rows,
                              TlArray **out, int64_t *err_row, TlError *err)
{
    TL_FN_BROADCAST(k_starts_with);
    return predicate(args, n_rows, P_STARTS, out, err);
}

static TlStatus k_ends_with(const TlDatum *args, int n_args, int64_t n_rows,
                            TlArray **out, int64_t *err_row, TlError *err)
{
    TL_FN_BROADCAST(k_ends_with);
    return predicate(args, n_rows, P_ENDS, out, err);
}

/* -------------------------------------------------------- split_part */

/* Part idx (1-based, >= 1) of p[0..n) split on sep[0..m) (m > 0):
 * [*b, *e), or false past the last part. */
static bool split_find(const uint8_t *p, size_t n, const uint8_t *sep,
                       size_t m, int64_t idx, size_t *b, size_t *e)
{
    size_t start = 0;
    for (int64_t k = 1;; k++) {
        const uint8_t *h = tl_k_fn_find(p + start, n - start, sep, m);
        size_t stop = h ? (size_t)(h - p) : n;
        if (k == idx) {
            *b = start;
            *e = stop;
            return true;
        }
        if (!h) return false;
        start = stop + m;
    }
}

/* Number of parts of p[0..n) split on sep[0..m) (m > 0). */
static int64_t split_count(const uint8_t *p, size_t n, const uint8_t *sep,
                           size_t m)
{
    int64_t k = 1;
    size_t start = 0;
    const uint8_t *h;
    while ((h = tl_k_fn_find(p + start, n - start, sep, m))) {
        k++;
        start = (size_t)(h - p) + m;
    }
    return k;
}

static TlStatus k_split_part(const TlDatum *args, int n_args, int64_t n_rows,
                             TlArray **out, int64_t *err_row, TlError *err)
{
    TlBuf *validity = NULL;
    StrOut so;
    uint32_t base;
    bool all_null;
    const TlView *views[2];
    TL_FN_BROADCAST(k_split_part);
    TL_TRY(tl_k_fn_nulls(args, 3, n_rows, &all_null, &validity, err));
    if (all_null) return tl_k_fn_null_result(TL_TSTRING, n_rows, out, err);
    arg_views(args, 2, views);
    const int64_t *ix = tl_array_i64(args[2].array);
    bool ix_sc = args[2].scalar;
    if (!so_init(&so, n_rows, 0) || !so_share(&so, args[0].array, &base)) {
        so_free(&so);
        tl_buf_release(validity);
        return tl_error_oom(err);
    }
    for (int64_t i = 0; i < n_rows; i++) {
        if (!tl_k_fn_row_valid(validity, i)) continue;
        const TlView *sv = ARG_VIEW(0, i), *dv = ARG_VIEW(1, i);
        const uint8_t *p = ARG_PTR(0, sv), *sep = ARG_PTR(1, dv);
        size_t n = tl_view_len(*sv), m = tl_view_len(*dv), b, e;
        int64_t idx = ix[ix_sc ? 0 : i];
        if (idx == 0) continue; /* '' (the zeroed view) */
        if (m == 0) { /* each character is a part; '' is one empty part */
            int64_t count = n == 0 ? 1 : (int64_t)cp_count(p, n);
            if (idx < 0) idx = count + idx + 1;
            if (idx < 1 || idx > count || n == 0) continue;
            b = cp_offset(p, n, 0, 0, (size_t)(idx - 1));
            e = cp_offset(p, n, b, (size_t)(idx - 1), (size_t)idx);
        } else {
            if (idx < 0) {
                idx = split_count(p, n, sep, m) + idx + 1;
                if (idx < 1) continue;
            }
            if (!split_find(p, n, sep, m, idx, &b, &e)) continue;
        }
        so_piece(&so, i, sv, base, p, b, e - b);
    }
    return so_finish(&so, validity, out, err);
}

/* ------------------------------------------------------------ concat */

/* concat skips null arguments (DuckDB): never null itself. */
static TlStatus k_concat(const TlDatum *args, int n_args, int64_t n_rows,
                         TlArray **out, int64_t *err_row, TlError *err)
{
    StrOut so;
    TlStatus st;
    const TlView **views = NULL;
    uint32_t *bases = NULL;
    int *live = NULL, n_live = 0;
    size_t hint = 0;
    TL_FN_BROADCAST(k_concat);
    views = tl_malloc(sizeof *views * (size_t)n_args);
    bases = tl_malloc(sizeof *bases * (size_t)n_args);
    live = tl_malloc(sizeof *live * (size_t)n_args);
    if (!so_init(&so, n_rows, 0) || !views || !bases || !live) goto oom;
    for (int k = 0; k < n_args; k++) {
        if (tl_k_fn_datum_all_null(&args[k])) continue; /* contributes '' */
        views[k] = tl_array_views(args[k].array);
        if (!so_share(&so, args[k].array, &bases[k])) goto oom;
        hint += str_bytes(&args[k], n_rows, true);
        live[n_live++] = k;
    }
    so.first_block = hint;
    for (int64_t i = 0; i < n_rows; i++) {
        uint64_t total = 0;
        int nonempty = 0, last = -1;
        for (int j = 0; j < n_live; j++) {
            int k = live[j];
            if (!args[k].scalar && !tl_array_valid(args[k].array, i)) continue;
            uint32_t l = tl_view_len(*ARG_VIEW(k, i));
            total += l;
            if (l) {
                nonempty++;
                last = k;
            }
        }
        if (nonempty == 0) continue; /* '' */
        if (nonempty == 1) {
            so_same(&so, i, ARG_VIEW(last, i), bases[last]);
            continue;
        }
        if (total > UINT32_MAX) {
            st = too_long(i, err_row, err);
            goto fail;
        }
        uint8_t *d = so_space(&so, (size_t)total);
        if (!d) goto oom;
        size_t o = 0;
        for (int j = 0; j < n_live; j++) {
            int k = live[j];
            if (!args[k].scalar && !tl_array_valid(args[k].array, i)) continue;
            const TlView *v = ARG_VIEW(k, i);
            memcpy(d + o, ARG_PTR(k, v), tl_view_len(*v));
            o += tl_view_len(*v);
        }
        so_commit(&so, i, d, o);
    }
    tl_free(views);
    tl_free(bases);
    tl_free(live);
    return so_finish(&so, NULL, out, err);
oom:
    st = tl_error_oom(err);
fail:
    so_free(&so);
    tl_free(views);
    tl_free(bases);
    tl_free(live);
    return st;
}

/* The string family's table for the registry (fn.c). */
const TlFnDef tl_k_fn_string_defs[] = {
    {"length", k_length, types_length},
    {"lower", k_lower, types_str1},
    {"upper", k_upper, types_str1},
    {"trim", k_trim, types_trim},
    {"ltrim", k_ltrim, types_trim},
    {"rtrim", k_rtrim, types_trim},
    {"substr", k_substr, types_substr},
    {"replace", k_replace, types_replace},
    {"contains", k_contains, types_pred},
    {"starts_with", k_starts_with, types_pred},
    {"ends_with", k_ends_with, types_pred},
    {"split_part", k_split_part, types_split},
    {"concat", k_concat, types_concat},
};
/* Number of entries in tl_k_fn_string_defs. */
const int tl_k_fn_string_count =
    (int)(sizeof tl_k_fn_string_defs / sizeof tl_k_fn_string_defs[0]);
