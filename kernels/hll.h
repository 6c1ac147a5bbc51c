/*
 * hll.h -- a HyperLogLog sketch (Flajolet et al. 2007): 2^p one-byte
 * registers of hashed values (kernels/hash.h), shared by --describe's
 * approximate distinct count (p = 14) and the approx_count_distinct
 * aggregate (p = TL_K_HLL_AGG_P).
 *
 * A value's register is the top p bits of its hash, and the register keeps
 * the largest rank (leading zeros of the rest, plus one) seen.  Registers
 * combine by maximum, so the sketch of a set does not depend on the order
 * or the split of the values: the estimate is the same for any --threads.
 * Its relative standard error is about 1.04 / sqrt(2^p): 0.8% for p = 14,
 * 1.6% for p = 12; small counts (up to 2.5 * 2^p) are estimated by linear
 * counting of the empty registers, nearly exact far below 2^p.
 */
#ifndef TL_K_HLL_H
#define TL_K_HLL_H

#include <stdint.h>

#define TL_K_HLL_M(p) ((uint32_t)1 << (p))
#define TL_K_HLL_AGG_P 12 /* approx_count_distinct: 4 KiB a group */

static inline void tl_k_hll_add(uint8_t *reg, int p, uint64_t h)
{
    uint32_t j = (uint32_t)(h >> (64 - p));
    uint64_t rest = h << p | ((uint64_t)1 << (p - 1));
    uint8_t r = (uint8_t)(__builtin_clzll(rest) + 1);
    if (r > reg[j]) reg[j] = r;
}

/* reg |= other, register by register (the sketch of the union). */
void tl_k_hll_merge(uint8_t *reg, const uint8_t *other, int p);

/* The estimated number of distinct values. */
int64_t tl_k_hll_estimate(const uint8_t *reg, int p);

#endif
