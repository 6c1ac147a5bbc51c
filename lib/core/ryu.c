/*
 * ryu.c -- Ryu: shortest round-trip digits of a double without bignums.
 *
 * Adapted from Ulf Adams, "Ryu: fast float-to-string conversion" (PLDI 2018)
 * and its reference implementation (github.com/ulfjack/ryu, ryu/d2s.c,
 * common.h, d2s_intrinsics.h), Copyright 2018 Ulf Adams, used under the
 * Boost Software License 1.0.  Only the core d2d step is kept (the 128-bit
 * integer path and the full tables, ryu_table.h); text.c does the layout.
 *
 * The idea: a double v = m2 x 2^e2 owns the interval of reals that round to
 * it, [(4 m2 - 1 - s) / 4, (4 m2 + 2) / 4] x 2^e2 (s = 1 except at powers of
 * two, where the gap below is half as wide).  Multiplying the three bounds
 * by a precomputed 128-bit approximation of 2^e2 / 10^q (or 5^-e2 ...) turns
 * them into decimal integers vm < vr < vp that share a scale 10^e10.  Then
 * digits are removed from all three while vp / 10 > vm / 10: what remains
 * is the shortest representation in the interval, and the removed digits of
 * vr decide rounding (the closest).  Exactness at the edges is tracked with
 * the "trailing zeros" flags, which only matter for small exponents.
 */
#include "ryu.h"

#include <string.h>

#if defined(__SIZEOF_INT128__)

#include "ryu_table.h"

typedef __uint128_t u128;

#define DOUBLE_MANTISSA_BITS 52
#define DOUBLE_BIAS 1023

/* ceil(log2(5^e)) for 0 <= e <= 3528 (1 for e == 0). */
static inline int32_t pow5bits(int32_t e)
{
    return (int32_t)((((uint32_t)e * 1217359) >> 19) + 1);
}

/* floor(log10(2^e)) for 0 <= e <= 1650. */
static inline uint32_t log10_pow2(int32_t e)
{
    return ((uint32_t)e * 78913) >> 18;
}

/* floor(log10(5^e)) for 0 <= e <= 2620. */
static inline uint32_t log10_pow5(int32_t e)
{
    return ((uint32_t)e * 732923) >> 20;
}

/* Largest p with 5^p dividing value (value != 0). */
static inline uint32_t pow5_factor(uint64_t value)
{
    const uint64_t m_inv_5 = 14757395258967641293u; /* 5 * m_inv_5 == 1 */
    const uint64_t n_div_5 = 3689348814741910323u;  /* 2^64 / 5 */
    uint32_t count = 0;
    for (;;) {
        value *= m_inv_5;
        if (value > n_div_5) break;
        ++count;
    }
    return count;
}

static inline bool multiple_of_pow5(uint64_t value, uint32_t p)
{
    return pow5_factor(value) >= p;
}

static inline bool multiple_of_pow2(uint64_t value, uint32_t p)
{
    return (value & ((1ull << p) - 1)) == 0;
}

/* (m x mul) >> j, mul a 128-bit table entry, j >= 115. */
static inline uint64_t mul_shift64(uint64_t m, const uint64_t *mul, int32_t j)
{
    const u128 b0 = (u128)m * mul[0];
    const u128 b2 = (u128)m * mul[1];
    return (uint64_t)(((b0 >> 64) + b2) >> (j - 64));
}

static inline uint64_t mul_shift_all64(uint64_t m, const uint64_t *mul,
                                       int32_t j, uint64_t *vp, uint64_t *vm,
                                       uint32_t mm_shift)
{
    *vp = mul_shift64(4 * m + 2, mul, j);
    *vm = mul_shift64(4 * m - 1 - mm_shift, mul, j);
    return mul_shift64(4 * m, mul, j);
}

/* See ryu.h. */
bool tl_ryu_d2d(double v, uint64_t *m_out, int32_t *e_out)
{
    uint64_t bits, ieee_mantissa, m2, mv, vr, vp, vm, output;
    uint32_t ieee_exponent, mm_shift;
    int32_t e2, e10, removed = 0;
    bool even, accept_bounds, vm_tz = false, vr_tz = false;
    uint8_t last_removed = 0;

    memcpy(&bits, &v, 8);
    ieee_mantissa = bits & ((1ull << DOUBLE_MANTISSA_BITS) - 1);
    ieee_exponent = (uint32_t)((bits >> DOUBLE_MANTISSA_BITS) & 0x7ff);
    if (ieee_exponent == 0) {
        /* 2 extra bits for the bounds computation */
        e2 = 1 - DOUBLE_BIAS - DOUBLE_MANTISSA_BITS - 2;
        m2 = ieee_mantissa;
    } else {
        e2 = (int32_t)ieee_exponent - DOUBLE_BIAS - DOUBLE_MANTISSA_BITS - 2;
        m2 = (1ull << DOUBLE_MANTISSA_BITS) | ieee_mantissa;
    }
    even = (m2 & 1) == 0;
    accept_bounds = even;

    /* Step 2: the interval of valid decimal representations. */
    mv = 4 * m2;
    mm_shift = ieee_mantissa != 0 || ieee_exponent <= 1;

    /* Step 3: to a decimal power base with 128-bit arithmetic. */
    if (e2 >= 0) {
        const uint32_t q = log10_pow2(e2) - (e2 > 3);
        const int32_t k = DOUBLE_POW5_INV_BITCOUNT + pow5bits((int32_t)q) - 1;
        const int32_t i = -e2 + (int32_t)q + k;
        e10 = (int32_t)q;
        vr = mul_shift_all64(m2, DOUBLE_POW5_INV_SPLIT[q], i, &vp, &vm,
                             mm_shift);
        if (q <= 21) {
            /* only one of mp, mv, mm can be a multiple of 5, if any */
            const uint32_t mv_mod5 = (uint32_t)(mv % 5);
            if (mv_mod5 == 0) {
                vr_tz = multiple_of_pow5(mv, q);
            } else if (accept_bounds) {
                vm_tz = multiple_of_pow5(mv - 1 - mm_shift, q);
            } else {
                vp -= multiple_of_pow5(mv + 2, q);
            }
        }
    } else {
        const uint32_t q = log10_pow5(-e2) - (-e2 > 1);
        const int32_t i = -e2 - (int32_t)q;
        const int32_t k = pow5bits(i) - DOUBLE_POW5_BITCOUNT;
        const int32_t j = (int32_t)q - k;
        e10 = (int32_t)q + e2;
        vr = mul_shift_all64(m2, DOUBLE_POW5_SPLIT[i], j, &vp, &vm, mm_shift);
        if (q <= 1) {
            /* mv = 4 m2 has at least two trailing zero bits */
            vr_tz = true;
            if (accept_bounds) {
                vm_tz = mm_shift == 1;
            } else {
                --vp;
            }
        } else if (q < 63) {
            vr_tz = multiple_of_pow2(mv, q);
        }
    }

    /* Step 4: the shortest representation in the interval. */
    if (vm_tz || vr_tz) {
        /* general case, rare (~0.7%) */
        for (;;) {
            const uint64_t vp10 = vp / 10, vm10 = vm / 10, vr10 = vr / 10;
            if (vp10 <= vm10) break;
            vm_tz &= vm % 10 == 0;
            vr_tz &= last_removed == 0;
            last_removed = (uint8_t)(vr % 10);
            vr = vr10;
            vp = vp10;
            vm = vm10;
            ++removed;
        }
        if (vm_tz) {
            for (;;) {
                const uint64_t vm10 = vm / 10;
                if (vm % 10 != 0) break;
                vr_tz &= last_removed == 0;
                last_removed = (uint8_t)(vr % 10);
                vr /= 10;
                vp /= 10;
                vm = vm10;
                ++removed;
            }
        }
        if (vr_tz && last_removed == 5 && vr % 2 == 0) {
            /* exactly ...50..0: round half to even */
            last_removed = 4;
        }
        output = vr + ((vr == vm && (!accept_bounds || !vm_tz)) ||
                       last_removed >= 5);
    } else {
        /* common case */
        bool round_up = false;
        const uint64_t vp100 = vp / 100, vm100 = vm / 100;
        if (vp100 > vm100) {
            const uint64_t vr100 = vr / 100;
            round_up = vr % 100 >= 50;
            vr = vr100;
            vp = vp100;
            vm = vm100;
            removed += 2;
        }
        for (;;) {
            const uint64_t vp10 = vp / 10, vm10 = vm / 10;
            if (vp10 <= vm10) break;
            round_up = vr % 10 >= 5;
            vr /= 10;
            vp = vp10;
            vm = vm10;
            ++removed;
        }
        output = vr + (vr == vm || round_up);
    }
    *m_out = output;
    *e_out = e10 + removed;
    return true;
}

#else

/* See ryu.h: this build has no 128-bit integers. */
bool tl_ryu_d2d(double v, uint64_t *m_out, int32_t *e_out)
{
    (void)v;
    *m_out = 0;
    *e_out = 0;
    return false;
}

#endif
