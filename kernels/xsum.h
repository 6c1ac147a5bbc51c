/*
 * xsum.h -- exact sums of doubles, one accumulator per group.
 *
 * A TlXSum holds, for every group g, the exact sum of the doubles added to
 * g: no rounding happens until tl_x_round, which rounds once (to nearest,
 * ties to even).  So a sum does not depend on the order of the additions,
 * on how the rows were split into batches or threads, or on how partial
 * sums were merged.
 *
 * A group's state is compact in the common case: a 128-bit integer acc
 * and a tag, the value being acc * 2^(tag - TL_X_BIAS).  Every double is
 * m * 2^e with m an integer below 2^53 (2^e its unit in the last place);
 * the scale is the smallest e seen, so every value added is a whole
 * number of units.  The state's form may depend on the order of the
 * additions (when it moved, which scale), its value never does, and the
 * rounding reads only the value.
 * When a value does not fit the 126 bits (values of very different
 * magnitudes, a sum beyond the range, inf or nan), the group moves to a
 * full superaccumulator (xsum.c: 72 chunks of 32 bits covering every
 * double, with inf/nan flags), and the tag holds TL_X_BIG plus its index.
 * The compact state is 20 bytes a group; a moved group adds 592 bytes.
 *
 * Arrays acc and tag are grown by the owner (zero-filled: zero is the
 * empty state); tl_x_free frees the moved states only.
 */
#ifndef TL_KERNELS_XSUM_H
#define TL_KERNELS_XSUM_H

#include "../lib/core/core.h"

#include <string.h>

#define TL_X_BIAS 2048 /* tag = scale exponent + bias, in 1..4095 */
#define TL_X_BIG 4096  /* tag >= TL_X_BIG: moved to big[tag - TL_X_BIG] */

typedef struct TlXBig TlXBig;

typedef struct TlXSum {
    __int128 *acc;  /* per group: the sum in units of its scale */
    int32_t *tag;   /* per group: 0 empty, scale + TL_X_BIAS, or moved */
    TlXBig **big;   /* the moved groups' superaccumulators */
    uint32_t n_big, big_cap;
} TlXSum;

/* The general case of tl_x_add (rescaling, moving, inf/nan, subnormal). */
bool tl_x_add_slow(TlXSum *s, uint32_t g, double v);

/* Add v to group g's sum exactly; false on OOM (the sum is then
 * unchanged).  acc and tag are s->acc and s->tag, passed apart so that a
 * loop keeps them in registers.  Inline: the common case is a shift and a
 * 128-bit add. */
static inline bool tl_x_add_at(TlXSum *s, __int128 *restrict acc,
                               int32_t *restrict tag, uint32_t g, double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    if ((b << 1) == 0) return true; /* +-0 adds nothing */
    uint64_t ex = (b >> 52) & 0x7ff;
    if (ex - 1 >= 0x7fe) return tl_x_add_slow(s, g, v); /* subnormal, inf, nan */
    uint64_t m = (b & ((1ULL << 52) - 1)) | (1ULL << 52);
    int32_t t = (int32_t)ex - 1075 + TL_X_BIAS;
    int32_t t0 = tag[g];
    if (t0 == 0) {
        tag[g] = t;
        acc[g] = (b >> 63) ? -(__int128)m : (__int128)m;
        return true;
    }
    int32_t sh = t - t0; /* negative when moved (t0 >= TL_X_BIG) */
    if (sh >= 0 && sh <= 73) {
        unsigned __int128 u = (unsigned __int128)m << sh; /* < 2^126 */
        __int128 w = (b >> 63) ? -(__int128)u : (__int128)u, r;
        if (!__builtin_add_overflow(acc[g], w, &r)) {
            acc[g] = r;
            return true;
        }
    }
    return tl_x_add_slow(s, g, v);
}

/* tl_x_add_at with s's own arrays. */
static inline bool tl_x_add(TlXSum *s, uint32_t g, double v)
{
    return tl_x_add_at(s, s->acc, s->tag, g, v);
}

/* The general case of tl_x_add_int. */
bool tl_x_add_int_slow(TlXSum *s, uint32_t g, int64_t v);

/* Add the integer v to group g's sum exactly; false on OOM.  Integer
 * arguments (counts, small products) take this path: at scale 2^0 it is
 * one 128-bit add. */
static inline bool tl_x_add_int(TlXSum *s, uint32_t g, int64_t v)
{
    int32_t t = s->tag[g];
    __int128 r;
    if (t == TL_X_BIAS && !__builtin_add_overflow(s->acc[g], (__int128)v, &r)) {
        s->acc[g] = r;
        return true;
    }
    if (t == 0) {
        s->tag[g] = TL_X_BIAS;
        s->acc[g] = v;
        return true;
    }
    return tl_x_add_int_slow(s, g, v);
}

/* Fold src's group sg into dst's group dg exactly (src unchanged);
 * false on OOM. */
bool tl_x_merge(TlXSum *dst, uint32_t dg, const TlXSum *src, uint32_t sg);

/* Group g's sum rounded once to the nearest double (ties to even): nan
 * when it holds a nan or both infinities, +-inf when it holds that
 * infinity or the exact sum is beyond the double range, 0.0 when empty or
 * exactly zero (never -0.0). */
double tl_x_round(const TlXSum *s, uint32_t g);

/* Group g's sum as a double-double: *hi = tl_x_round, *lo = the rounded
 * remainder (0 when hi is not finite).  hi + lo is within 2^-106 |sum|. */
void tl_x_round2(const TlXSum *s, uint32_t g, double *hi, double *lo);

/* Group g's mean, sum / n (n > 0): the double-double sum divided by n in
 * double-double, rounded once; within an ulp of the exact mean (inf or
 * nan as the sum is). */
double tl_x_mean(const TlXSum *s, uint32_t g, int64_t n);

/* The co-moment sum((x - mean x)(y - mean y)) = Sxy - Sx*Sy/n of group g,
 * divided by div (n - 1 for the sample, n for the population), from exact
 * sums: sx (x), sy (y), and the products x*y as their rounded
 * values (sp) and rounding errors (se).  Double-double arithmetic: the
 * relative error is about 2^-104 * Sxy / result.  Non-finite sums give
 * the plain formula's inf or nan. */
double tl_x_comoment(const TlXSum *sx, const TlXSum *sy, const TlXSum *sp,
                     const TlXSum *se, uint32_t g, int64_t n, double div);

/* Free the moved groups' states (acc and tag belong to the owner). */
void tl_x_free(TlXSum *s);

#endif
