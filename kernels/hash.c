/*
 * hash.c -- XXH3 over whole columns (see hash.h for the canonical bytes).
 *
 * One typed loop per type; the null path is decided once per array: no
 * nulls -> plain loop, all null -> constant fill, some nulls -> the loop
 * hashes a chunk of slots and then overwrites the null rows with
 * TL_HASH_NULL (null slots hold arbitrary bytes, so they must not leak into
 * the hash).  xxhash is compiled inline so the short fixed-size inputs
 * take XXH3's small-input paths without a call.
 */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "hash.h"

/* XXH3 of n bytes (see hash.h). */
uint64_t tl_k_hash_bytes(const void *p, size_t n)
{
    return XXH3_64bits(p, n);
}

/* Raw value hashes of elements [i0, i0+n) of a non-null-typed array. */
static void hash_chunk(const TlArray *a, int64_t i0, int64_t n, uint64_t *h)
{
    switch ((TlType)a->type) {
    case TL_TINT64:
    case TL_TTIMESTAMP: case TL_TTIMESTAMPTZ: {
        const int64_t *v = tl_array_i64(a) + i0;
        for (int64_t i = 0; i < n; i++) h[i] = XXH3_64bits(&v[i], 8);
        break;
    }
    case TL_TDATE: {
        const int32_t *v = tl_array_i32(a) + i0;
        for (int64_t i = 0; i < n; i++) h[i] = XXH3_64bits(&v[i], 4);
        break;
    }
    case TL_TFLOAT64: {
        const double *v = tl_array_f64(a) + i0;
        for (int64_t i = 0; i < n; i++) {
            double c = tl_k_f64_canon(v[i]);
            h[i] = XXH3_64bits(&c, 8);
        }
        break;
    }
    case TL_TBOOL:
        for (int64_t i = 0; i < n; i++) {
            uint8_t b = tl_array_bool(a, i0 + i);
            h[i] = XXH3_64bits(&b, 1);
        }
        break;
    case TL_TSTRING: {
        const TlView *v = tl_array_views(a) + i0;
        for (int64_t i = 0; i < n; i++)
            h[i] = XXH3_64bits(tl_view_ptr(&v[i], a->data), v[i].in.len);
        break;
    }
    default:
        for (int64_t i = 0; i < n; i++) h[i] = TL_HASH_NULL;
        break;
    }
}

#define CHUNK 1024

/* Hash elements of a into out (see hash.h).  Works in chunks: raw value
 * hashes into a stack buffer, null rows patched (only when the array has
 * nulls), then stored or combined. */
void tl_k_hash_array(const TlArray *a, uint64_t *out, bool combine)
{
    int64_t n = a->length;
    bool all_null = a->type == TL_TNULL || a->null_count == n;
    uint64_t h[CHUNK];
    for (int64_t i0 = 0; i0 < n; i0 += CHUNK) {
        int64_t m = n - i0 < CHUNK ? n - i0 : CHUNK;
        if (all_null) {
            for (int64_t i = 0; i < m; i++) h[i] = TL_HASH_NULL;
        } else {
            hash_chunk(a, i0, m, h);
            if (a->null_count > 0) {
                const uint8_t *bits = a->validity->data;
                for (int64_t i = 0; i < m; i++)
                    if (!tl_bit_get(bits, a->offset + i0 + i)) h[i] = TL_HASH_NULL;
            }
        }
        uint64_t *o = out + i0;
        if (combine)
            for (int64_t i = 0; i < m; i++) o[i] = tl_k_hash_combine(o[i], h[i]);
        else
            memcpy(o, h, (size_t)m * sizeof *o);
    }
}
