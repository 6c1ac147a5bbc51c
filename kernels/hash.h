/*
 * hash.h -- hashing whole columns (XXH3), for group-by, distinct and joins.
 *
 * Every value hashes through XXH3_64bits of its canonical bytes:
 *   int64, timestamp  the 8 little-endian bytes of the value
 *   date              the 4 bytes of the int32
 *   bool              one byte, 0 or 1
 *   float64           the 8 bytes after normalizing: -0.0 -> 0.0 and every
 *                     NaN -> one canonical NaN, so values that compare equal
 *                     (NaN = NaN, -0.0 = 0.0) hash equal
 *   string            XXH3 of the bytes (inline or not: same hash)
 *   null              TL_HASH_NULL (whatever the type)
 * Several columns combine column by column with tl_k_hash_combine, so a row
 * hash depends on the order of the key columns.
 */
#ifndef TL_KERNELS_HASH_H
#define TL_KERNELS_HASH_H

#include "../lib/core/core.h"

#define TL_HASH_NULL 0x6e756c6c6e756c6cull /* "nullnull" */

/* Combine a running row hash with the next column's value hash. */
static inline uint64_t tl_k_hash_combine(uint64_t seed, uint64_t h)
{
    seed ^= h + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2);
    seed *= 0xbf58476d1ce4e5b9ull;
    return seed ^ (seed >> 31);
}

/* A fast 64-bit mix of an integer (murmur3's finalizer), for tables keyed
 * by integer values; not XXH3, never mixed with the column hashes. */
static inline uint64_t tl_k_hash_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

/* Canonical float64 for hashing and equality: -0.0 -> 0.0, NaN -> one NaN. */
static inline double tl_k_f64_canon(double v)
{
    if (v != v) return __builtin_nan("");
    return v == 0.0 ? 0.0 : v;
}

/* XXH3_64bits of n bytes at p. */
uint64_t tl_k_hash_bytes(const void *p, size_t n);

/* Hash elements [0, a->length) of a into out[0..a->length) (see the table
 * above).  combine: out[i] = tl_k_hash_combine(out[i], h) instead of
 * out[i] = h, to hash multi-column rows one column at a time. */
void tl_k_hash_array(const TlArray *a, uint64_t *out, bool combine);

#endif
