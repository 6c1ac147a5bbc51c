/*
 * moments.c -- std, var (sample), covar (sample) and corr.
 *
 * Exact sums (kernels/xsum.h) of the values and of their products, each
 * product as its rounded value plus its exact error (fma) in a sum of its
 * own: std/var keep x, x*x (+ error); covar x, y, x*y (+ error); corr also
 * x*x and y*y.  The moment Sxy - Sx*Sy/n is taken from the exact sums in
 * double-double (tl_x_comoment), so the results do not depend on how the
 * rows were split or in which order partials merged.
 */
#include "agg_fam.h"

static bool dt_accepts(TlType x, TlType y)
{
    (void)y;
    return tl_agg_numeric(x) || x == TL_TDATE || x == TL_TTIMESTAMP || x == TL_TTIMESTAMPTZ;
}

static bool two_numbers(TlType x, TlType y)
{
    return tl_agg_numeric(x) && tl_agg_numeric(y);
}

static TlStatus mom_init(TlAgg *a, TlError *err)
{
    (void)err;
    if (a->fn == &tl_agg_corr) a->n_xs = 8;
    else if (a->fn == &tl_agg_covar) a->n_xs = 4;
    else a->n_xs = 3;
    return TL_OK;
}

static int mom_arrays(TlAgg *a, void ***arr, size_t *elem, int n)
{
    return tl_agg_xs_arrays(a, arr, elem, n);
}

/* x's values as int64 when x is of an integer class and every value is
 * below 2^26 in magnitude, NULL otherwise (the double path).  Squares and
 * products are then below 2^52: exact as doubles too, so adding them as
 * integers fills the same sums the double path would (the product whole,
 * no rounding error), whichever batches take which path. */
static const int64_t *small_ints(TlAgg *a, const TlArray *x, int64_t n)
{
    if (tl_agg_class(x->type) != C_INT) return NULL;
    const int64_t *v = tl_agg_as_i64(a, x, n);
    if (!v) return NULL;
    int64_t lo = 0, hi = 0;
    for (int64_t i = 0; i < n; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    return lo > -((int64_t)1 << 26) && hi < ((int64_t)1 << 26) ? v : NULL;
}

/* The rounding error of the product p = x*y (x*y = p + e exactly), or 0
 * when p is not finite (an overflowed product has no usable error). */
static inline double prod_err(double x, double y, double p)
{
    return isfinite(p) ? fma(x, y, -p) : 0.0;
}

static TlStatus var_update(TlAgg *a, const uint32_t *ids, int64_t n,
                           const TlArray *x, const TlArray *y, TlError *err)
{
    (void)y;
    int64_t *cnt = a->cnt;
    TlXSum *xs = a->xs;
    const int64_t *iv = small_ints(a, x, n);
    if (iv) {
        FOR_VALID(x, n, {
            uint32_t g = ids[i];
            cnt[g]++;
            XADDI(0, g, iv[i]);
            XADDI(1, g, iv[i] * iv[i]);
        });
        return TL_OK;
    }
    const double *v = tl_agg_as_f64(&a->fx, &a->fx_cap, x, n);
    if (!v) return tl_error_oom(err);
    /* exact sums of x and x*x (rounded square and its error apart) */
    FOR_VALID(x, n, {
        uint32_t g = ids[i];
        double xi = v[i], p = xi * xi;
        cnt[g]++;
        XADD(0, g, xi);
        XADD(1, g, p);
        XADD(2, g, prod_err(xi, xi, p));
    });
    return TL_OK;
}

/* corr/covar: a row counts when both values are there. */
static TlStatus corr_update(TlAgg *a, const uint32_t *ids, int64_t n,
                            const TlArray *x, const TlArray *y, TlError *err)
{
    if (x->type == TL_TNULL || y->type == TL_TNULL || x->null_count == n ||
        y->null_count == n)
        return TL_OK;
    int64_t *cnt = a->cnt;
    TlXSum *xs = a->xs;
    bool corr = a->fn == &tl_agg_corr;
    bool nulls = x->null_count > 0 || y->null_count > 0;
    const int64_t *xi64 = x->type == TL_TINT64 && y->type == TL_TINT64
                              ? small_ints(a, x, n) : NULL;
    const int64_t *yi64 = xi64 ? small_ints(a, y, n) : NULL;
    if (yi64) {
        for (int64_t i = 0; i < n; i++) {
            if (nulls && !(tl_array_valid(x, i) && tl_array_valid(y, i))) continue;
            uint32_t g = ids[i];
            int64_t xi = xi64[i], yi = yi64[i];
            cnt[g]++;
            XADDI(0, g, xi);
            XADDI(1, g, yi);
            XADDI(2, g, xi * yi);
            if (corr) {
                XADDI(4, g, xi * xi);
                XADDI(6, g, yi * yi);
            }
        }
        return TL_OK;
    }
    const double *xv = tl_agg_as_f64(&a->fx, &a->fx_cap, x, n);
    const double *yv = tl_agg_as_f64(&a->fy, &a->fy_cap, y, n);
    if (!xv || !yv) return tl_error_oom(err);
    for (int64_t i = 0; i < n; i++) {
        if (nulls && !(tl_array_valid(x, i) && tl_array_valid(y, i))) continue;
        uint32_t g = ids[i];
        double xi = xv[i], yi = yv[i];
        cnt[g]++;
        XADD(0, g, xi);
        XADD(1, g, yi);
        double p = xi * yi;
        XADD(2, g, p);
        XADD(3, g, prod_err(xi, yi, p));
        if (corr) {
            p = xi * xi;
            XADD(4, g, p);
            XADD(5, g, prod_err(xi, xi, p));
            p = yi * yi;
            XADD(6, g, p);
            XADD(7, g, prod_err(yi, yi, p));
        }
    }
    return TL_OK;
}

/* The co-moment of exact sums xs[x], xs[y], xs[p] + xs[e] (products) of
 * group g; a second moment (x = y) is never below 0. */
static double moment(const TlXSum *xs, int x, int y, int p, int e, uint32_t g,
                     int64_t c, int64_t div)
{
    double m = tl_x_comoment(&xs[x], &xs[y], &xs[p], &xs[e], g, c, (double)div);
    return x == y && m < 0 ? 0.0 : m;
}

static bool mom_result(const TlAgg *a, TlBuilder *b, uint32_t g)
{
    int64_t c = a->cnt[g];
    const TlXSum *xs = a->xs;
    if (c < 2) return tl_builder_append_null(b);
    if (a->fn == &tl_agg_std || a->fn == &tl_agg_var) {
        double var = moment(xs, 0, 0, 1, 2, g, c, c - 1);
        return tl_agg_put_f64(b, a->fn == &tl_agg_std ? sqrt(var) : var);
    }
    if (a->fn == &tl_agg_covar)
        return tl_agg_put_f64(b, tl_x_comoment(&xs[0], &xs[1], &xs[2], &xs[3], g, c,
                                               (double)(c - 1)));
    /* corr: DuckDB's population covariance over population stds, as
     * Mxy / sqrt(Mxx Myy) (null when a std is 0): a perfect linear
     * relation of small integers gives exactly 1 or -1 */
    double mxy = moment(xs, 0, 1, 2, 3, g, c, 1);
    double mxx = moment(xs, 0, 0, 4, 5, g, c, 1);
    double myy = moment(xs, 1, 1, 6, 7, g, c, 1);
    double den = mxx * myy;
    if (mxx == 0 || myy == 0) return tl_builder_append_null(b);
    den = isfinite(den) && den != 0 ? sqrt(den) : sqrt(mxx) * sqrt(myy);
    return tl_agg_put_f64(b, mxy / den);
}

static bool mom_results(TlAgg *a, TlBuilder *b, uint32_t first, uint32_t n)
{
    for (uint32_t g = first; g < first + n; g++)
        if (!mom_result(a, b, g)) return false;
    return true;
}

const TlAggFns tl_agg_std = {
    .accepts = dt_accepts,
    .init = mom_init,
    .arrays = mom_arrays,
    .update = var_update,
    .merge = tl_agg_xs_merge_fn,
    .merge_some = true,
    .skips_nulls = true,
    .results = mom_results,
};

const TlAggFns tl_agg_var = {
    .accepts = dt_accepts,
    .init = mom_init,
    .arrays = mom_arrays,
    .update = var_update,
    .merge = tl_agg_xs_merge_fn,
    .merge_some = true,
    .skips_nulls = true,
    .results = mom_results,
};

const TlAggFns tl_agg_corr = {
    .accepts = two_numbers,
    .init = mom_init,
    .arrays = mom_arrays,
    .update = corr_update,
    .merge = tl_agg_xs_merge_fn,
    .merge_some = true,
    .results = mom_results,
};

const TlAggFns tl_agg_covar = {
    .accepts = two_numbers,
    .init = mom_init,
    .arrays = mom_arrays,
    .update = corr_update,
    .merge = tl_agg_xs_merge_fn,
    .merge_some = true,
    .results = mom_results,
};
