/*
 * hll.c -- the HyperLogLog estimate and union (hll.h).
 */
#include "hll.h"

#include <math.h>

void tl_k_hll_merge(uint8_t *reg, const uint8_t *other, int p)
{
    for (uint32_t j = 0; j < TL_K_HLL_M(p); j++)
        if (other[j] > reg[j]) reg[j] = other[j];
}

/* The harmonic mean of the registers, with linear counting for small
 * cardinalities (Flajolet et al. 2007). */
int64_t tl_k_hll_estimate(const uint8_t *reg, int p)
{
    double m = TL_K_HLL_M(p), sum = 0;
    uint32_t zeros = 0;
    for (uint32_t j = 0; j < TL_K_HLL_M(p); j++) {
        sum += ldexp(1.0, -reg[j]);
        zeros += reg[j] == 0;
    }
    double e = 0.7213 / (1 + 1.079 / m) * m * m / sum;
    if (e <= 2.5 * m && zeros) e = m * log(m / zeros);
    return (int64_t)llround(e);
}
