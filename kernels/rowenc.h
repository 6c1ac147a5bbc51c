/*
 * rowenc.h -- the order-preserving row encoding.
 *
 * A tuple of key values becomes a byte string such that memcmp order of two
 * encoded rows is the sort order of the tuples (per-key ascending or
 * descending, nulls first or last), and equal tuples (NaN = NaN, -0.0 = 0.0,
 * all nulls alike) encode to equal bytes.  So one memcmp compares any
 * multi-column key: sort uses the order, the multi-key grouper the equality.
 * The layout of each type is drawn in rowenc.c.
 */
#ifndef TL_KERNELS_ROWENC_H
#define TL_KERNELS_ROWENC_H

#include "../lib/core/core.h"

/* Encoded rows.  Row i is bytes[offs[i], offs[i+1]) or, when offs is NULL
 * (every key fixed-width), bytes[i*width, (i+1)*width). */
typedef struct TlRows {
    uint8_t *bytes;   /* tl_malloc'd */
    uint64_t *offs;   /* tl_malloc'd, n_rows + 1 entries, or NULL */
    size_t width;     /* row width when offs is NULL */
    int64_t n_rows;
} TlRows;

/* Pointer to row i of r and its length in *len. */
static inline const uint8_t *tl_rows_at(const TlRows *r, int64_t i, size_t *len)
{
    if (r->offs == NULL) {
        *len = r->width;
        return r->bytes + (size_t)i * r->width;
    }
    *len = (size_t)(r->offs[i + 1] - r->offs[i]);
    return r->bytes + r->offs[i];
}

/* Order of two encoded rows: memcmp over the shorter length, then length. */
static inline int tl_rows_cmp(const uint8_t *a, size_t alen, const uint8_t *b,
                              size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    if (c != 0) return c;
    return (alen > blen) - (alen < blen);
}

/* The total-order image of a double: unsigned order of images = DuckDB float
 * order (-inf < ... < -0.0 = 0.0 < ... < inf < NaN, every NaN equal). */
static inline uint64_t tl_k_f64_image(double v)
{
    uint64_t u;
    if (v != v) v = __builtin_nan("");
    else if (v == 0.0) v = 0.0;
    memcpy(&u, &v, 8);
    return (u >> 63) ? ~u : u | (1ull << 63);
}

/* The double whose image is u (the inverse of tl_k_f64_image, up to the
 * normalization of -0.0 and NaN payloads). */
static inline double tl_k_f64_from_image(uint64_t u)
{
    u = (u >> 63) ? u ^ (1ull << 63) : ~u;
    double v;
    memcpy(&v, &u, 8);
    return v;
}

/* The unsigned image of a signed integer (sign bit flipped). */
static inline uint64_t tl_k_i64_image(int64_t v)
{
    return (uint64_t)v ^ (1ull << 63);
}

/* Encode rows [0, n_rows) of cols[0..n_cols) (each of n_rows elements).
 * desc / nulls_first: per key, or NULL for all false (ascending, nulls last;
 * the grouper's equality does not care).  *out is owned by the caller
 * (tl_k_rows_free).  TL_ERR_OOM on failure (out is then empty). */
TlStatus tl_k_rowenc(const TlArray *const *cols, int n_cols, int64_t n_rows,
                     const bool *desc, const bool *nulls_first, TlRows *out,
                     TlError *err);

/* The two passes of tl_k_rowenc, for several batches encoded into one
 * buffer (each batch on its own thread).  tl_k_rowenc_fixed: the width of
 * a row when no string key has a value (a string key then takes its
 * sentinel byte only).  tl_k_rowenc_lens: len[i] := the encoded length of
 * row i.  tl_k_rowenc_into: encode row i at bytes + offs[i], or at
 * bytes + i * width when offs is NULL (only when no string key has a
 * value).  The bytes of a row are those tl_k_rowenc gives it.  TL_ERR_OOM
 * (a cursor per row). */
size_t tl_k_rowenc_fixed(const TlArray *const *cols, int n_cols);
void tl_k_rowenc_lens(const TlArray *const *cols, int n_cols, int64_t n_rows,
                      uint64_t *len);
TlStatus tl_k_rowenc_into(const TlArray *const *cols, int n_cols, int64_t n_rows,
                          const bool *desc, const bool *nulls_first,
                          uint8_t *bytes, const uint64_t *offs, size_t width,
                          TlError *err);

/* Decode the keys of n rows encoded ascending (desc NULL at encoding;
 * nulls first or last alike): rows[i] points at row i's first byte.
 * out[c] (c < n_cols) receives an owned array of types[c] with n values.
 * Decoding gives back the values that were encoded, except that -0.0
 * comes back as 0.0 and every NaN as the canonical NaN.  TL_ERR_OOM. */
TlStatus tl_k_rowdec(const uint8_t *const *rows, int64_t n, const TlType *types,
                     int n_cols, TlArray **out, TlError *err);

/* Free the buffers of r (NULL-safe fields) and zero it. */
void tl_k_rows_free(TlRows *r);

#endif
