/*
 * xsum.c -- exact sums of doubles: the compact state's general cases, the
 * superaccumulator, merging and the one rounding (see xsum.h).
 *
 * The superaccumulator (a "small superaccumulator" in the style of Neal's
 * xsum) is the integer X = sum * 2^1074 held in 72 signed 64-bit chunks,
 * chunk k weighing 2^(32k): every double is an integer multiple of 2^-1074
 * below 2^1024, so X is exact for any values.  An addition adds pieces of
 * at most 32 bits to three chunks, leaving 31 bits of room in each, so
 * carries are propagated only every 2^30 additions (normalize: every chunk
 * but the top one back to 0..2^32-1, the top one holding the sign).  Inf
 * and nan are flags beside X.
 *
 * Rounding normalizes a copy, takes the magnitude, and rounds its top 53
 * bits to nearest even with the bits below as round and sticky bits.  A
 * compact state rounds by converting its 128-bit integer (the compiler's
 * conversion rounds to nearest even) and scaling by a power of two, which
 * is exact unless the result is subnormal; that rare case goes through a
 * superaccumulator.
 */
#include "xsum.h"

#include <math.h>

#define XB_N 72
#define XB_LIMIT (1u << 30) /* additions between carry propagations */
#define XF_NAN 1
#define XF_PINF 2
#define XF_NINF 4

struct TlXBig {
    int64_t c[XB_N]; /* X = sum c[k] 2^(32k), X = sum * 2^1074 */
    uint32_t adds;   /* additions since the last normalize */
    uint32_t flags;  /* XF_* */
};

static void big_normalize(TlXBig *b)
{
    for (int k = 0; k < XB_N - 1; k++) {
        int64_t carry = b->c[k] >> 32; /* floor division by 2^32 */
        b->c[k] -= carry * ((int64_t)1 << 32);
        b->c[k + 1] += carry;
    }
    b->adds = 0;
}

/* X += (neg ? -1 : 1) * m * 2^pos (m < 2^64, 0 <= pos, pos + 64 < 32*XB_N - 32). */
static void big_add_u64(TlXBig *b, uint64_t m, int pos, bool neg)
{
    if (!m) return;
    if (b->adds >= XB_LIMIT) big_normalize(b);
    b->adds++;
    int k = pos >> 5;
    unsigned __int128 w = (unsigned __int128)m << (pos & 31);
    int64_t p0 = (int64_t)(uint32_t)w, p1 = (int64_t)(uint32_t)(w >> 32),
            p2 = (int64_t)(w >> 64);
    if (neg) {
        b->c[k] -= p0;
        b->c[k + 1] -= p1;
        b->c[k + 2] -= p2;
    } else {
        b->c[k] += p0;
        b->c[k + 1] += p1;
        b->c[k + 2] += p2;
    }
}

/* X += a * 2^pos (a compact state: pos = its scale + 1074). */
static void big_add_i128(TlXBig *b, __int128 a, int pos)
{
    bool neg = a < 0;
    unsigned __int128 u = neg ? -(unsigned __int128)a : (unsigned __int128)a;
    big_add_u64(b, (uint64_t)u, pos, neg);
    big_add_u64(b, (uint64_t)(u >> 64), pos + 64, neg);
}

/* X += v, or set v's flag when v is not finite. */
static void big_add_double(TlXBig *b, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint64_t ex = (bits >> 52) & 0x7ff, m = bits & ((1ULL << 52) - 1);
    bool neg = bits >> 63;
    if (ex == 0x7ff) {
        b->flags |= m ? XF_NAN : neg ? XF_NINF : XF_PINF;
        return;
    }
    if (ex) m |= 1ULL << 52;
    else ex = 1;
    big_add_u64(b, m, (int)ex - 1, neg);
}

/* The magnitude of X in chunks 0..2^32-1 (top included) and its sign. */
static bool big_magnitude(const TlXBig *b, uint32_t *mag)
{
    TlXBig t = *b;
    big_normalize(&t);
    bool neg = t.c[XB_N - 1] < 0;
    if (neg) {
        for (int k = 0; k < XB_N; k++) t.c[k] = -t.c[k];
        big_normalize(&t);
    }
    for (int k = 0; k < XB_N; k++) mag[k] = (uint32_t)t.c[k];
    return neg;
}

/* X * 2^-1074 rounded to nearest even (flags ignored). */
static double big_round_finite(const TlXBig *b)
{
    uint32_t mag[XB_N];
    bool neg = big_magnitude(b, mag);
    int k = XB_N - 1;
    while (k >= 0 && !mag[k]) k--;
    if (k < 0) return 0.0;
    int top = 31 - __builtin_clz(mag[k]);
    int h = 32 * k + top; /* the highest set bit of X */
    double r;
    if (h < 53) { /* below 2^53 units of 2^-1074: exact (subnormal or least normals) */
        uint64_t x = mag[0] | (k >= 1 ? (uint64_t)mag[1] << 32 : 0);
        r = ldexp((double)x, -1074);
    } else {
        unsigned __int128 w = (unsigned __int128)mag[k] << 64 |
                              (unsigned __int128)mag[k - 1] << 32 |
                              (k >= 2 ? mag[k - 2] : 0);
        int shift = top + 65 - 53; /* w has top + 65 bits */
        uint64_t m = (uint64_t)(w >> shift);
        unsigned __int128 rem = w & (((unsigned __int128)1 << shift) - 1);
        unsigned __int128 half = (unsigned __int128)1 << (shift - 1);
        bool sticky = false;
        for (int j = 0; j < k - 2 && !sticky; j++) sticky = mag[j] != 0;
        if (rem > half || (rem == half && (sticky || (m & 1)))) m++;
        r = ldexp((double)m, h - 52 - 1074); /* m may be 2^53: still exact */
    }
    return neg ? -r : r;
}

static double big_round(const TlXBig *b)
{
    if ((b->flags & XF_NAN) || (b->flags & (XF_PINF | XF_NINF)) == (XF_PINF | XF_NINF))
        return NAN;
    if (b->flags & XF_PINF) return INFINITY;
    if (b->flags & XF_NINF) return -INFINITY;
    return big_round_finite(b);
}

static void big_round2(const TlXBig *b, double *hi, double *lo)
{
    *hi = big_round(b);
    *lo = 0;
    if (!isfinite(*hi) || *hi == 0) return;
    TlXBig t = *b;
    big_add_double(&t, -*hi);
    *lo = big_round_finite(&t);
}

/* Move group g to a new superaccumulator holding its compact sum. */
static TlXBig *move_to_big(TlXSum *s, uint32_t g)
{
    if (s->n_big == s->big_cap) {
        uint32_t cap = s->big_cap ? s->big_cap * 2 : 8;
        TlXBig **l = tl_realloc(s->big, (size_t)cap * sizeof *l);
        if (!l) return NULL;
        s->big = l;
        s->big_cap = cap;
    }
    TlXBig *b = tl_calloc(1, sizeof *b);
    if (!b) return NULL;
    int32_t t = s->tag[g];
    if (t) big_add_i128(b, s->acc[g], t - TL_X_BIAS + 1074);
    s->big[s->n_big] = b;
    s->tag[g] = TL_X_BIG + (int32_t)s->n_big++;
    s->acc[g] = 0;
    return b;
}

/* Bits of |a| (0 for 0). */
static int bits128(__int128 a)
{
    unsigned __int128 u = a < 0 ? -(unsigned __int128)a : (unsigned __int128)a;
    uint64_t hi = (uint64_t)(u >> 64), lo = (uint64_t)u;
    if (hi) return 128 - __builtin_clzll(hi);
    return lo ? 64 - __builtin_clzll(lo) : 0;
}

/* Group g's compact state plus w * 2^(t - bias) when the sum fits 126
 * bits at the smaller of the two scales; false (nothing changed) if not. */
static bool compact_add(TlXSum *s, uint32_t g, __int128 w, int32_t t)
{
    int32_t t0 = s->tag[g];
    if (t0 == 0) {
        s->acc[g] = w;
        s->tag[g] = t;
        return true;
    }
    __int128 a = s->acc[g];
    int32_t tn = t < t0 ? t : t0;
    int da = t0 - tn, dw = t - tn;
    if ((a && bits128(a) + da > 126) || (w && bits128(w) + dw > 126)) return false;
    __int128 as = (__int128)((unsigned __int128)a << da);
    __int128 ws = (__int128)((unsigned __int128)w << dw), r;
    if (__builtin_add_overflow(as, ws, &r)) return false;
    s->acc[g] = r;
    s->tag[g] = tn;
    return true;
}

/* The general case of an addition (see xsum.h). */
bool tl_x_add_slow(TlXSum *s, uint32_t g, double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    if ((b << 1) == 0) return true;
    uint64_t ex = (b >> 52) & 0x7ff;
    int32_t t0 = s->tag[g];
    if (t0 < TL_X_BIG && ex != 0x7ff) {
        uint64_t m = b & ((1ULL << 52) - 1);
        if (ex) m |= 1ULL << 52;
        else ex = 1;
        int tz = __builtin_ctzll(m);
        m >>= tz;
        int32_t t = (int32_t)ex - 1075 + tz + TL_X_BIAS;
        if (compact_add(s, g, (b >> 63) ? -(__int128)m : (__int128)m, t)) return true;
    }
    TlXBig *big = t0 >= TL_X_BIG ? s->big[t0 - TL_X_BIG] : move_to_big(s, g);
    if (!big) return false;
    big_add_double(big, v);
    return true;
}

/* The general case of an integer addition (see xsum.h). */
bool tl_x_add_int_slow(TlXSum *s, uint32_t g, int64_t v)
{
    int32_t t0 = s->tag[g];
    if (!v) return true;
    if (t0 < TL_X_BIG && compact_add(s, g, v, TL_X_BIAS)) return true;
    TlXBig *big = t0 >= TL_X_BIG ? s->big[t0 - TL_X_BIG] : move_to_big(s, g);
    if (!big) return false;
    big_add_u64(big, v < 0 ? -(uint64_t)v : (uint64_t)v, 1074, v < 0);
    return true;
}

/* Fold a group of src into a group of dst (see xsum.h). */
bool tl_x_merge(TlXSum *dst, uint32_t dg, const TlXSum *src, uint32_t sg)
{
    int32_t ts = src->tag[sg], td = dst->tag[dg];
    if (ts == 0) return true;
    if (ts < TL_X_BIG && td < TL_X_BIG && compact_add(dst, dg, src->acc[sg], ts))
        return true;
    TlXBig *d = td >= TL_X_BIG ? dst->big[td - TL_X_BIG] : move_to_big(dst, dg);
    if (!d) return false;
    if (ts < TL_X_BIG) {
        big_add_i128(d, src->acc[sg], ts - TL_X_BIAS + 1074);
        return true;
    }
    const TlXBig *sb = src->big[ts - TL_X_BIG];
    if ((uint64_t)d->adds + sb->adds + 1 > XB_LIMIT) big_normalize(d);
    for (int k = 0; k < XB_N; k++) d->c[k] += sb->c[k];
    d->adds += sb->adds + 1;
    d->flags |= sb->flags;
    return true;
}

/* A compact state as a superaccumulator (for the subnormal results). */
static void compact_big(const TlXSum *s, uint32_t g, TlXBig *b)
{
    memset(b, 0, sizeof *b);
    big_add_i128(b, s->acc[g], s->tag[g] - TL_X_BIAS + 1074);
}

/* Round a group's sum once (see xsum.h). */
double tl_x_round(const TlXSum *s, uint32_t g)
{
    int32_t t = s->tag[g];
    if (t == 0 || (t < TL_X_BIG && s->acc[g] == 0)) return 0.0;
    if (t >= TL_X_BIG) return big_round(s->big[t - TL_X_BIG]);
    double r = ldexp((double)s->acc[g], t - TL_X_BIAS);
    if (fabs(r) < 0x1p-1022) { /* subnormal: the scaling would round again */
        TlXBig b;
        compact_big(s, g, &b);
        return big_round_finite(&b);
    }
    return r;
}

/* A group's sum as a double-double (see xsum.h). */
void tl_x_round2(const TlXSum *s, uint32_t g, double *hi, double *lo)
{
    int32_t t = s->tag[g];
    *hi = *lo = 0;
    if (t == 0 || (t < TL_X_BIG && s->acc[g] == 0)) return;
    if (t >= TL_X_BIG) {
        big_round2(s->big[t - TL_X_BIG], hi, lo);
        return;
    }
    __int128 a = s->acc[g];
    double h = (double)a;
    if (fabs(h) < 0x1p126) {
        double l = (double)(a - (__int128)h);
        double rh = ldexp(h, t - TL_X_BIAS), rl = ldexp(l, t - TL_X_BIAS);
        if (fabs(rh) >= 0x1p-1022 && (l == 0 || fabs(rl) >= 0x1p-1022) && isfinite(rh)) {
            *hi = rh;
            *lo = rl;
            return;
        }
    }
    TlXBig b;
    compact_big(s, g, &b);
    big_round2(&b, hi, lo);
}

/* ------------------------------------------------- double-double results */

typedef struct DD {
    double hi, lo;
} DD;

static DD dd_norm(double s, double e)
{
    double h = s + e;
    return (DD){h, e - (h - s)};
}

static DD dd_add(DD x, DD y)
{
    double s = x.hi + y.hi, bb = s - x.hi;
    double e = (x.hi - (s - bb)) + (y.hi - bb) + x.lo + y.lo;
    return dd_norm(s, e);
}

static DD dd_mul(DD x, DD y)
{
    double p = x.hi * y.hi;
    double e = fma(x.hi, y.hi, -p) + x.hi * y.lo + x.lo * y.hi;
    return dd_norm(p, e);
}

static DD dd_div_d(DD x, double d)
{
    double q1 = x.hi / d;
    double r = fma(-q1, d, x.hi) + x.lo; /* x - q1*d: fma's part is exact */
    return dd_norm(q1, r / d);
}

static DD dd_of(const TlXSum *s, uint32_t g)
{
    DD r;
    tl_x_round2(s, g, &r.hi, &r.lo);
    return r;
}

/* The mean from the exact sum (see xsum.h). */
double tl_x_mean(const TlXSum *s, uint32_t g, int64_t n)
{
    DD x = dd_of(s, g);
    if (!isfinite(x.hi)) return x.hi / (double)n;
    DD q = dd_div_d(x, (double)n);
    return q.hi + q.lo;
}

/* The co-moment from exact sums (see xsum.h). */
double tl_x_comoment(const TlXSum *sx, const TlXSum *sy, const TlXSum *sp,
                     const TlXSum *se, uint32_t g, int64_t n, double div)
{
    DD x = dd_of(sx, g), y = dd_of(sy, g), p = dd_of(sp, g), e = dd_of(se, g);
    double plain = ((p.hi + e.hi) - x.hi * (y.hi / (double)n)) / div;
    if (!isfinite(plain)) return plain;
    DD xy = dd_mul(x, dd_div_d(y, (double)n));
    DD r = dd_div_d(dd_add(dd_add(p, e), (DD){-xy.hi, -xy.lo}), div);
    /* The few double-double steps above err by less than 2^-100 of the
     * terms they subtract; a moment within that bound cannot be told from
     * zero, and is zero: so a constant column has var 0 whatever its
     * count (7 copies of sqrt(0.1) left 1.5e-33 of rounding otherwise). */
    if (fabs(r.hi + r.lo) <= ldexp(fabs(p.hi) + fabs(e.hi) + fabs(xy.hi), -100) / fabs(div))
        return 0.0;
    return r.hi + r.lo;
}

/* Free the moved states (see xsum.h). */
void tl_x_free(TlXSum *s)
{
    for (uint32_t i = 0; i < s->n_big; i++) tl_free(s->big[i]);
    tl_free(s->big);
    s->big = NULL;
    s->n_big = s->big_cap = 0;
}
