/*
 * test_xsum.c -- exact float sums (kernels/xsum.c) against a reference.
 *
 * The reference is a plain big integer held here (limbs of 32 bits, two's
 * complement, X = sum * 2^1074, every double being an integer multiple of
 * 2^-1074), rounded bit by bit to nearest even: nothing shared with the
 * kernel's chunked superaccumulator or its compact 128-bit states.  Values
 * come from every exponent (subnormals, near the overflow threshold),
 * with -0.0, inf and nan; each sum is also taken in shuffled orders and
 * as merged partial sums, and must give the same double.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/xsum.h"
#include "tl_test.h"

#define RL 80 /* reference limbs: 2560 bits */

typedef struct Ref {
    uint32_t l[RL];
    bool nan, pinf, ninf;
} Ref;

static uint64_t rng = 88172645463325252ULL;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* X += sign * m * 2^pos, limb by limb with carries. */
static void ref_add_bits(Ref *r, uint64_t m, int pos, bool neg)
{
    uint32_t add[RL] = {0};
    for (int b = 0; b < 64; b++)
        if (m >> b & 1) add[(pos + b) / 32] |= 1u << ((pos + b) % 32);
    if (neg) { /* two's complement of add */
        uint64_t c = 1;
        for (int k = 0; k < RL; k++) {
            uint64_t v = (uint64_t)(uint32_t)~add[k] + c;
            add[k] = (uint32_t)v;
            c = v >> 32;
        }
    }
    uint64_t c = 0;
    for (int k = 0; k < RL; k++) {
        uint64_t v = (uint64_t)r->l[k] + add[k] + c;
        r->l[k] = (uint32_t)v;
        c = v >> 32;
    }
}

static void ref_add(Ref *r, double v)
{
    uint64_t b;
    memcpy(&b, &v, 8);
    int ex = (int)(b >> 52 & 0x7ff);
    uint64_t m = b & ((1ULL << 52) - 1);
    bool neg = b >> 63;
    if (ex == 0x7ff) {
        if (m) r->nan = true;
        else if (neg) r->ninf = true;
        else r->pinf = true;
        return;
    }
    if (ex) m |= 1ULL << 52;
    else ex = 1;
    ref_add_bits(r, m, ex - 1, neg);
}

static int ref_bit(const uint32_t *l, int i)
{
    return i < 0 ? 0 : (int)(l[i / 32] >> (i % 32) & 1);
}

static double ref_round(const Ref *r)
{
    if (r->nan || (r->pinf && r->ninf)) return NAN;
    if (r->pinf) return INFINITY;
    if (r->ninf) return -INFINITY;
    uint32_t l[RL];
    memcpy(l, r->l, sizeof l);
    bool neg = l[RL - 1] >> 31;
    if (neg) {
        uint64_t c = 1;
        for (int k = 0; k < RL; k++) {
            uint64_t v = (uint64_t)(uint32_t)~l[k] + c;
            l[k] = (uint32_t)v;
            c = v >> 32;
        }
    }
    int h = RL * 32 - 1;
    while (h >= 0 && !ref_bit(l, h)) h--;
    if (h < 0) return 0.0;
    int low = h - 52 > 0 ? h - 52 : 0; /* the kept bits: h..low */
    uint64_t m = 0;
    for (int i = h; i >= low; i--) m = m << 1 | (uint64_t)ref_bit(l, i);
    int rbit = ref_bit(l, low - 1), sticky = 0;
    for (int i = low - 2; i >= 0 && !sticky; i--) sticky = ref_bit(l, i);
    if (rbit && (sticky || (m & 1))) m++;
    double v = ldexp((double)m, low - 1074);
    return neg ? -v : v;
}

/* Both doubles the same bits (nan equal to nan). */
static bool same(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return memcmp(&a, &b, 8) == 0;
}

static void xs_init(TlXSum *s, uint32_t groups)
{
    memset(s, 0, sizeof *s);
    s->acc = calloc(groups, sizeof *s->acc);
    s->tag = calloc(groups, sizeof *s->tag);
}

static void xs_done(TlXSum *s)
{
    tl_x_free(s);
    free(s->acc);
    free(s->tag);
}

/* A double of the kind `kind` picks: 0 near 1, 1 within 2^+-40, 2 any
 * finite, 3 subnormal or tiny, 4 near the overflow threshold, 5 short
 * decimals (the common data), 6 any with a few zeros, infs and nans. */
static double value(int kind)
{
    uint64_t r = rnd();
    double sign = (r & 1) ? -1.0 : 1.0;
    double m = 1.0 + (double)(rnd() >> 11) * 0x1p-53;
    switch (kind) {
    case 0: return sign * ldexp(m, (int)(rnd() % 7) - 3);
    case 1: return sign * ldexp(m, (int)(rnd() % 81) - 40);
    case 2: {
        uint64_t b = rnd();
        double v;
        memcpy(&v, &b, 8);
        return isfinite(v) ? v : sign * m;
    }
    case 3: return sign * ldexp(m, -1074 + (int)(rnd() % 80));
    case 4: return sign * ldexp(m, 1023 - (int)(rnd() % 4));
    case 5: return sign * (double)(rnd() % 100000000) / 1e6;
    default: {
        int c = (int)(rnd() % 50);
        if (c == 0) return -0.0;
        if (c == 1) return 0.0;
        if (c == 2) return sign * INFINITY;
        if (c == 3) return NAN;
        return value((int)(rnd() % 6));
    }
    }
}

/* Random sets of each kind: the sum rounded once equals the reference's,
 * for the values added in order, shuffled, and split into partial sums
 * merged in a random order; double-doubles match the reference's too. */
TL_TEST(test_random_sums)
{
    enum { N = 600, PARTS = 5 };
    static double v[N];
    long rounds = tl_test_scaled(140, 4);
    for (long t = 0; t < rounds; t++) {
        int kind = (int)(t % 7);
        int n = 1 + (int)(rnd() % N);
        int mixed = t % 3 == 0; /* a mix of kinds: the compact state moves */
        Ref ref;
        memset(&ref, 0, sizeof ref);
        for (int i = 0; i < n; i++) {
            v[i] = value(mixed ? (int)(rnd() % 7) : kind);
            ref_add(&ref, v[i]);
        }
        double want = ref_round(&ref);
        TlXSum a, b, parts[PARTS];
        xs_init(&a, 3);
        xs_init(&b, 3);
        for (int i = 0; i < n; i++) CHECK(tl_x_add(&a, 1, v[i]));
        double got = tl_x_round(&a, 1);
        CHECK(same(got, want));
        if (!same(got, want))
            fprintf(stderr, "kind %d n %d: %a != %a\n", kind, n, got, want);
        CHECK(tl_x_round(&a, 0) == 0 && !signbit(tl_x_round(&a, 0)));
        /* the double-double: hi rounds X, lo rounds X - hi */
        double hi, lo;
        tl_x_round2(&a, 1, &hi, &lo);
        CHECK(same(hi, want));
        if (isfinite(want)) {
            Ref rest = ref;
            ref_add(&rest, -want);
            CHECK(same(lo, ref_round(&rest)));
        } else {
            CHECK(lo == 0);
        }
        /* shuffled */
        for (int i = n - 1; i > 0; i--) {
            int j = (int)(rnd() % (uint64_t)(i + 1));
            double x = v[i];
            v[i] = v[j];
            v[j] = x;
        }
        for (int k = 0; k < PARTS; k++) xs_init(&parts[k], 2);
        for (int i = 0; i < n; i++) CHECK(tl_x_add(&parts[rnd() % PARTS], 1, v[i]));
        int order[PARTS] = {3, 0, 4, 2, 1};
        for (int k = 0; k < PARTS; k++) CHECK(tl_x_merge(&b, 2, &parts[order[k]], 1));
        CHECK(same(tl_x_round(&b, 2), want));
        /* merging into a non-empty group, and a group into itself's copy */
        CHECK(tl_x_merge(&a, 0, &b, 2));
        CHECK(same(tl_x_round(&a, 0), want));
        for (int k = 0; k < PARTS; k++) xs_done(&parts[k]);
        xs_done(&a);
        xs_done(&b);
    }
}

/* The edge cases named: one rounding, overflow, infinities, -0.0. */
TL_TEST(test_edges)
{
    struct {
        double v[4];
        int n;
        double want;
    } cases[] = {
        {{0x1p53, 1.0}, 2, 0x1p53},                      /* tie: even */
        {{0x1p53, 1.0, 0x1p-60}, 3, 0x1p53 + 2},         /* sticky */
        {{0x1p53, 3.0}, 2, 0x1p53 + 4},                  /* tie: up to even */
        {{1e308, 1e308, -1e308}, 3, 1e308},              /* no overflow midway */
        {{0x1p1023, 0x1p1023}, 2, INFINITY},             /* overflow */
        {{-0x1p1023, -0x1p1023}, 2, -INFINITY},
        {{DBL_MAX, 0x1p970}, 2, INFINITY},               /* tie: even is 2^1024 */
        {{DBL_MAX, 0x1p969}, 2, DBL_MAX},                /* below half an ulp */
        {{-0.0, -0.0}, 2, 0.0},                          /* never -0.0 */
        {{0x1p-1074, 0x1p-1074, 0x1p-1074}, 3, 0x3p-1074},
        {{0x1p-1022, -0x1p-1074}, 2, 0x1p-1022 - 0x1p-1074},
        {{INFINITY, 1.0}, 2, INFINITY},
        {{INFINITY, -INFINITY}, 2, NAN},
        {{NAN, 1.0}, 2, NAN},
        {{-INFINITY, -1e308, -1e308}, 3, -INFINITY},
        {{0.1, 0.2, -0.3}, 3, 0.0},                      /* (the reference's) */
        {{1e16, 1.0, -1e16}, 3, 1.0},
        /* the same ties in a superaccumulator (the tiny pair forces it) */
        {{0x1p53, 1.0, 0x1p-1000, -0x1p-1000}, 4, 0x1p53},
        {{0x1p53, 3.0, 0x1p-1000, -0x1p-1000}, 4, 0x1p53 + 4},
        {{0x1p53, 1.0, 0x1p-1000, 0x1p-1070}, 4, 0x1p53 + 2},
        {{DBL_MAX, 0x1p970, 0x1p-1000, -0x1p-1000}, 4, INFINITY},
        {{-0x1p-1074, 0x1p1000, -0x1p1000}, 3, -0x1p-1074},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        TlXSum s;
        xs_init(&s, 1);
        Ref ref;
        memset(&ref, 0, sizeof ref);
        for (int i = 0; i < cases[c].n; i++) {
            CHECK(tl_x_add(&s, 0, cases[c].v[i]));
            ref_add(&ref, cases[c].v[i]);
        }
        double got = tl_x_round(&s, 0);
        bool ok = same(got, ref_round(&ref));
        if (c != 15) ok = ok && same(got, cases[c].want); /* 0.1+0.2-0.3: ref only */
        CHECK(ok);
        if (!ok) fprintf(stderr, "edge case %zu: %a\n", c, got);
        xs_done(&s);
    }
}

/* Integers added as integers mix with doubles in one exact sum. */
TL_TEST(test_ints)
{
    for (int t = 0; t < 200; t++) {
        TlXSum s;
        xs_init(&s, 1);
        Ref ref;
        memset(&ref, 0, sizeof ref);
        for (int i = 0; i < 100; i++) {
            if (rnd() % 3) {
                int64_t v = (int64_t)(rnd() >> (rnd() % 64));
                if (rnd() & 1) v = -v;
                CHECK(tl_x_add_int(&s, 0, v));
                uint64_t m = v < 0 ? -(uint64_t)v : (uint64_t)v;
                ref_add_bits(&ref, m, 1074, v < 0);
            } else {
                double v = value((int)(rnd() % 6));
                CHECK(tl_x_add(&s, 0, v));
                ref_add(&ref, v);
            }
        }
        CHECK(same(tl_x_round(&s, 0), ref_round(&ref)));
        xs_done(&s);
    }
}

/* Means and co-moments from exact sums: exact for data whose true answer
 * is a double, and the same for any order. */
TL_TEST(test_moments)
{
    TlXSum x, p, e;
    xs_init(&x, 1);
    xs_init(&p, 1);
    xs_init(&e, 1);
    /* 1e9 + {1, 2, 3, 4}: mean 1e9 + 2.5, sample variance 5/3 */
    for (int i = 1; i <= 4; i++) {
        double v = 1e9 + i, sq = v * v;
        CHECK(tl_x_add(&x, 0, v));
        CHECK(tl_x_add(&p, 0, sq));
        CHECK(tl_x_add(&e, 0, fma(v, v, -sq)));
    }
    CHECK(tl_x_mean(&x, 0, 4) == 1e9 + 2.5);
    CHECK(tl_x_comoment(&x, &x, &p, &e, 0, 4, 3.0) == 5.0 / 3.0);
    CHECK(tl_x_comoment(&x, &x, &p, &e, 0, 4, 4.0) == 1.25);
    xs_done(&x);
    xs_done(&p);
    xs_done(&e);
}

int main(void)
{
    TL_RUN(test_random_sums);
    TL_RUN(test_edges);
    TL_RUN(test_ints);
    TL_RUN(test_moments);
    return tl_test_summary("test_xsum");
}
