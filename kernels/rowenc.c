/*
 * rowenc.c -- the order-preserving row encoding (see rowenc.h).
 *
 * A row is the concatenation of its keys' encodings, each one:
 *
 *   +----------+---------------------------------------------+
 *   | sentinel | value bytes (inverted when the key is desc) |
 *   +----------+---------------------------------------------+
 *
 *   sentinel   0x01 valid; null: 0x00 with nulls first, 0x02 with nulls
 *              last.  The sentinel is never inverted: "nulls first/last"
 *              is meant literally for both directions.
 *
 *   int64 / timestamp   8 bytes, big-endian of (v XOR 1<<63)
 *       -1 -> 7F FF FF FF FF FF FF FF     0 -> 80 00 00 00 00 00 00 00
 *   date                4 bytes, big-endian of ((uint32)v XOR 1<<31)
 *   float64             8 bytes, big-endian of the total-order image:
 *                       -0.0 -> 0.0, NaN -> the canonical NaN, then
 *                       negative: all bits inverted; positive: sign bit set
 *       -inf -> 00 0F FF..  -0.0,0.0 -> 80 00 ..  inf -> FF F0 ..  NaN -> FF F8 ..
 *   bool                1 byte, 00 false / 01 true
 *   string              the bytes with every 00 escaped as 00 FF, then the
 *                       terminator 00 00:  "a\0b" -> 61 00 FF 62 00 00
 *                       ("a" < "a\0" < "ab": 61 00 00 < 61 00 FF < 61 62 ..)
 *   null type           nothing after the sentinel
 *
 * A null of a fixed-width type keeps the width (sentinel + zero bytes), so
 * rows of fixed-width keys all have the same width and need no offsets; all
 * nulls of a key encode alike.  The string encoding is prefix-free (00 00
 * appears only at the end), so a concatenation of keys compares key by key
 * and inverting a key's bytes reverses exactly that key's order.
 *
 * Encoding runs column by column over the whole batch: sizes first (only
 * string keys vary), then each column writes at a per-row cursor.
 * Decoding (for the grouper's key columns) walks the same way: one cursor
 * per row, one column at a time.
 */
#include "rowenc.h"

static size_t fixed_width(TlType t)
{
    switch (t) {
    case TL_TINT64: case TL_TTIMESTAMP: case TL_TTIMESTAMPTZ: case TL_TFLOAT64: return 8;
    case TL_TDATE: return 4;
    case TL_TBOOL: return 1;
    default: return 0;
    }
}

static inline void put_be64(uint8_t *p, uint64_t v)
{
    v = __builtin_bswap64(v);
    memcpy(p, &v, 8);
}

static inline void put_be32(uint8_t *p, uint32_t v)
{
    v = __builtin_bswap32(v);
    memcpy(p, &v, 4);
}

/* Index of the lowest zero byte of x, or 8 if none (the SWAR test flags
 * exactly the lowest zero byte; flags above it may be false). */
static inline uint32_t first_zero(uint64_t x)
{
    uint64_t t = (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull;
    return t ? (uint32_t)__builtin_ctzll(t) / 8 : 8;
}

/* Whether s[0..n) (n <= 16) holds a zero byte.  Strings of at most 12
 * bytes live inline in their view, whose 12 bytes are all readable, so
 * they are tested a word at a time. */
static inline bool memchr_small(const uint8_t *s, uint32_t n)
{
    if (n <= TL_VIEW_INLINE) {
        uint64_t a;
        uint32_t b;
        memcpy(&a, s, 8);
        memcpy(&b, s + 8, 4);
        uint32_t z = first_zero(a);
        if (z == 8) z = 8 + first_zero((uint64_t)b | 0xFFFFFFFF00000000ull);
        return z < n;
    }
    uint32_t z = 0;
    for (uint32_t i = 0; i < n; i++) z |= s[i] == 0;
    return z != 0;
}

/* Escaped length of a string plus its terminator. */
static inline size_t str_enc_len(const uint8_t *s, uint32_t n)
{
    size_t z = 0;
    if (n <= 16) { /* short strings: no memchr calls */
        if (!memchr_small(s, n)) return n + 2;
        for (uint32_t i = 0; i < n; i++) z += s[i] == 0;
        return n + z + 2;
    }
    const uint8_t *p = s, *end = s + n;
    while (p < end && (p = memchr(p, 0, (size_t)(end - p))) != NULL) {
        z++;
        p++;
    }
    return n + z + 2;
}

/* Copy n <= 16 bytes with fixed-size moves (no libc call). */
static inline void copy_small(uint8_t *o, const uint8_t *s, uint32_t n)
{
    if (n >= 8) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(o, &a, 8);
        memcpy(o + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(o, &a, 4);
        memcpy(o + n - 4, &b, 4);
    } else {
        for (uint32_t i = 0; i < n; i++) o[i] = s[i];
    }
}

/* Write s escaped and terminated at p; returns bytes written. */
static inline size_t str_enc(uint8_t *p, const uint8_t *s, uint32_t n)
{
    uint8_t *o = p;
    if (n <= 16) {
        if (memchr_small(s, n)) {
            for (uint32_t i = 0; i < n; i++) {
                uint8_t c = s[i];
                *o++ = c;
                if (c == 0) *o++ = 0xFF;
            }
        } else {
            copy_small(o, s, n);
            o += n;
        }
        o[0] = 0x00;
        o[1] = 0x00;
        return (size_t)(o + 2 - p);
    }
    const uint8_t *end = s + n;
    while (s < end) {
        const uint8_t *z = memchr(s, 0, (size_t)(end - s));
        size_t run = z ? (size_t)(z - s) : (size_t)(end - s);
        memcpy(o, s, run);
        o += run;
        s += run;
        if (z) {
            o[0] = 0x00;
            o[1] = 0xFF;
            o += 2;
            s++;
        }
    }
    o[0] = 0x00;
    o[1] = 0x00;
    return (size_t)(o + 2 - p);
}

static inline void invert(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)~p[i];
}

/* Encode one fixed-width column at cursors cur[] (advanced by 1 + w). */
static void enc_fixed(const TlArray *a, int64_t n, bool desc, uint8_t nullb,
                      uint8_t *bytes, uint64_t *cur)
{
    TlType t = a->type;
    size_t w = fixed_width(t);
    bool has_nulls = a->null_count > 0;
    const uint8_t *bits = has_nulls ? a->validity->data : NULL;
    for (int64_t i = 0; i < n; i++) {
        uint8_t *p = bytes + cur[i];
        cur[i] += 1 + w;
        if (has_nulls && !tl_bit_get(bits, a->offset + i)) {
            p[0] = nullb;
            memset(p + 1, 0, w);
            continue;
        }
        p[0] = 0x01;
        switch (t) {
        case TL_TINT64: case TL_TTIMESTAMP: case TL_TTIMESTAMPTZ:
            put_be64(p + 1, tl_k_i64_image(tl_array_i64(a)[i]));
            break;
        case TL_TFLOAT64:
            put_be64(p + 1, tl_k_f64_image(tl_array_f64(a)[i]));
            break;
        case TL_TDATE:
            put_be32(p + 1, (uint32_t)tl_array_i32(a)[i] ^ (1u << 31));
            break;
        default: /* bool */
            p[1] = tl_array_bool(a, i);
            break;
        }
        if (desc) invert(p + 1, w);
    }
}

/* Encode one string column at cursors cur[]. */
static void enc_str(const TlArray *a, int64_t n, bool desc, uint8_t nullb,
                    uint8_t *bytes, uint64_t *cur)
{
    const TlView *v = tl_array_views(a);
    bool has_nulls = a->null_count > 0;
    for (int64_t i = 0; i < n; i++) {
        uint8_t *p = bytes + cur[i];
        if (has_nulls && !tl_array_valid(a, i)) {
            p[0] = nullb;
            cur[i] += 1;
            continue;
        }
        p[0] = 0x01;
        size_t k = str_enc(p + 1, tl_view_ptr(&v[i], a->data), v[i].in.len);
        if (desc) invert(p + 1, k);
        cur[i] += 1 + k;
    }
}

/* Bytes of a row that do not depend on string values (see rowenc.h). */
size_t tl_k_rowenc_fixed(const TlArray *const *cols, int n_cols)
{
    size_t fixed = 0;
    for (int c = 0; c < n_cols; c++) fixed += 1 + fixed_width(cols[c]->type);
    return fixed;
}

/* Whether some string key has a value: rows then vary in length. */
static bool rows_vary(const TlArray *const *cols, int n_cols, int64_t n_rows)
{
    for (int c = 0; c < n_cols; c++)
        if (cols[c]->type == TL_TSTRING && cols[c]->null_count < n_rows) return true;
    return false;
}

/* Encoded length of every row (see rowenc.h). */
void tl_k_rowenc_lens(const TlArray *const *cols, int n_cols, int64_t n_rows,
                      uint64_t *len)
{
    size_t fixed = tl_k_rowenc_fixed(cols, n_cols);
    for (int64_t i = 0; i < n_rows; i++) len[i] = fixed;
    for (int c = 0; c < n_cols; c++) {
        const TlArray *a = cols[c];
        if (a->type != TL_TSTRING || a->null_count == n_rows) continue;
        const TlView *v = tl_array_views(a);
        for (int64_t i = 0; i < n_rows; i++) {
            if (a->null_count > 0 && !tl_array_valid(a, i)) continue;
            /* the sentinel is already counted */
            len[i] += str_enc_len(tl_view_ptr(&v[i], a->data), v[i].in.len);
        }
    }
}

/* Encode rows at given places (see rowenc.h). */
TlStatus tl_k_rowenc_into(const TlArray *const *cols, int n_cols, int64_t n_rows,
                          const bool *desc, const bool *nulls_first,
                          uint8_t *bytes, const uint64_t *offs, size_t width,
                          TlError *err)
{
    uint64_t *cur = tl_malloc(((size_t)n_rows + 1) * sizeof *cur);
    if (!cur) return tl_error_oom(err);
    for (int64_t i = 0; i < n_rows; i++)
        cur[i] = offs ? offs[i] : (uint64_t)i * width;
    for (int c = 0; c < n_cols; c++) {
        const TlArray *a = cols[c];
        bool d = desc ? desc[c] : false;
        uint8_t nullb = (nulls_first && nulls_first[c]) ? 0x00 : 0x02;
        if (a->type == TL_TNULL || a->null_count == n_rows) {
            size_t w = a->type == TL_TSTRING ? 0 : fixed_width(a->type);
            for (int64_t i = 0; i < n_rows; i++) {
                uint8_t *p = bytes + cur[i];
                p[0] = nullb;
                memset(p + 1, 0, w);
                cur[i] += 1 + w;
            }
        } else if (a->type == TL_TSTRING) {
            enc_str(a, n_rows, d, nullb, bytes, cur);
        } else {
            enc_fixed(a, n_rows, d, nullb, bytes, cur);
        }
    }
    tl_free(cur);
    return TL_OK;
}

/* Encode rows of cols (see rowenc.h). */
TlStatus tl_k_rowenc(const TlArray *const *cols, int n_cols, int64_t n_rows,
                     const bool *desc, const bool *nulls_first, TlRows *out,
                     TlError *err)
{
    memset(out, 0, sizeof *out);
    out->n_rows = n_rows;
    size_t fixed = tl_k_rowenc_fixed(cols, n_cols);
    size_t total;
    if (!rows_vary(cols, n_cols, n_rows)) {
        out->width = fixed;
        total = fixed * (size_t)n_rows;
    } else {
        out->offs = tl_malloc(((size_t)n_rows + 1) * sizeof *out->offs);
        if (!out->offs) goto oom;
        tl_k_rowenc_lens(cols, n_cols, n_rows, out->offs);
        uint64_t acc = 0;
        for (int64_t i = 0; i < n_rows; i++) {
            uint64_t s = out->offs[i];
            out->offs[i] = acc;
            acc += s;
        }
        out->offs[n_rows] = acc;
        total = (size_t)acc;
    }
    out->bytes = tl_malloc(total ? total : 1);
    if (!out->bytes) goto oom;
    if (tl_k_rowenc_into(cols, n_cols, n_rows, desc, nulls_first, out->bytes,
                         out->offs, fixed, err) != TL_OK)
        goto oom;
    return TL_OK;
oom:
    tl_k_rows_free(out);
    return tl_error_oom(err);
}

static inline uint64_t get_be64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return __builtin_bswap64(v);
}

/* Decode one column at cursors cur[] into a builder of type t. */
static bool dec_col(TlBuilder *b, TlType t, const uint8_t **cur, int64_t n,
                    uint8_t **scratch, size_t *scratch_cap)
{
    size_t w = fixed_width(t);
    for (int64_t i = 0; i < n; i++) {
        const uint8_t *p = cur[i];
        bool valid = p[0] == 0x01;
        if (t == TL_TSTRING) {
            if (!valid) {
                cur[i] = p + 1;
                if (!tl_builder_append_null(b)) return false;
                continue;
            }
            /* Fast path: no escaped zero, the first 00 starts the 00 00
             * terminator. */
            const uint8_t *s = p + 1;
            const uint8_t *z = s;
            while (*z != 0) z++;
            if (z[1] == 0x00) {
                cur[i] = z + 2;
                if (!tl_builder_append_str(b, s, (size_t)(z - s))) return false;
                continue;
            }
            size_t len = 0;
            for (const uint8_t *q = s;; q++) {
                if (*q == 0) {
                    if (q[1] == 0x00) break;
                    q++;
                }
                len++;
            }
            if (*scratch_cap < len + 1) {
                uint8_t *nb = tl_realloc(*scratch, len + 1);
                if (!nb) return false;
                *scratch = nb;
                *scratch_cap = len + 1;
            }
            size_t k = 0;
            const uint8_t *q = s;
            for (;; q++) {
                if (*q == 0) {
                    if (q[1] == 0x00) break;
                    q++;
                    (*scratch)[k++] = 0;
                } else {
                    (*scratch)[k++] = *q;
                }
            }
            cur[i] = q + 2;
            if (!tl_builder_append_str(b, *scratch, len)) return false;
            continue;
        }
        cur[i] = p + 1 + w;
        if (!valid) {
            if (!tl_builder_append_null(b)) return false;
            continue;
        }
        bool ok;
        switch (t) {
        case TL_TINT64: case TL_TTIMESTAMP: case TL_TTIMESTAMPTZ:
            ok = tl_builder_append_i64(b, (int64_t)(get_be64(p + 1) ^ (1ull << 63)));
            break;
        case TL_TFLOAT64:
            ok = tl_builder_append_f64(b, tl_k_f64_from_image(get_be64(p + 1)));
            break;
        case TL_TDATE: {
            uint32_t v;
            memcpy(&v, p + 1, 4);
            ok = tl_builder_append_i32(b, (int32_t)(__builtin_bswap32(v) ^ (1u << 31)));
            break;
        }
        case TL_TBOOL:
            ok = tl_builder_append_bool(b, p[1] != 0);
            break;
        default:
            ok = tl_builder_append_null(b);
            break;
        }
        if (!ok) return false;
    }
    return true;
}

/* Decode encoded rows (see rowenc.h). */
TlStatus tl_k_rowdec(const uint8_t *const *rows, int64_t n, const TlType *types,
                     int n_cols, TlArray **out, TlError *err)
{
    const uint8_t **cur = tl_malloc((size_t)(n ? n : 1) * sizeof *cur);
    uint8_t *scratch = NULL;
    size_t scratch_cap = 0;
    int c = 0;
    for (int k = 0; k < n_cols; k++) out[k] = NULL;
    if (!cur) goto oom;
    if (n) memcpy(cur, rows, (size_t)n * sizeof *cur);
    for (c = 0; c < n_cols; c++) {
        if (types[c] == TL_TNULL) {
            for (int64_t i = 0; i < n; i++) cur[i] += 1;
            if (!(out[c] = tl_array_new_null(TL_TNULL, n))) goto oom;
            continue;
        }
        TlBuilder b;
        tl_builder_init(&b, types[c]);
        if (!tl_builder_reserve(&b, n) ||
            !dec_col(&b, types[c], cur, n, &scratch, &scratch_cap)) {
            tl_builder_free(&b);
            goto oom;
        }
        out[c] = tl_builder_finish(&b);
        tl_builder_free(&b);
        if (!out[c]) goto oom;
    }
    tl_free(cur);
    tl_free(scratch);
    return TL_OK;
oom:
    for (int k = 0; k < n_cols; k++) {
        tl_array_release(out[k]);
        out[k] = NULL;
    }
    tl_free(cur);
    tl_free(scratch);
    return tl_error_oom(err);
}

/* Free encoded rows (see rowenc.h). */
void tl_k_rows_free(TlRows *r)
{
    tl_free(r->bytes);
    tl_free(r->offs);
    memset(r, 0, sizeof *r);
}
