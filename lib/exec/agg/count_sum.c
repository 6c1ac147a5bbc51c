/*
 * count_sum.c -- count, sum and mean.
 *
 * count() counts rows, count(x) the values of x.  Sums over integers are
 * exact in int128 (sealing fails when one leaves int64; a mean divides the
 * exact sum: over dates and timestamps, as DuckDB's, a timestamp, the sum
 * in microseconds divided toward zero and rounded up when the remainder
 * is more than half the count); float sums and means are exact sums rounded once
 * (kernels/xsum.h), so they merge exactly and are the same for any split
 * of the rows.
 */
#include "agg_fam.h"

/* ---------------------------------------------------------------- count */

static TlStatus count_update(TlAgg *a, const uint32_t *ids, int64_t n,
                             const TlArray *x, const TlArray *y, TlError *err)
{
    (void)err;
    int64_t *cnt = a->cnt;
    if ((a->s.no_arg || !x) && y) { /* count() filter (where y) */
        FOR_VALID(y, n, { cnt[ids[i]] += tl_array_bool(y, i); });
        return TL_OK;
    }
    if (a->s.no_arg || !x) {
        for (int64_t i = 0; i < n; i++) cnt[ids[i]]++;
        return TL_OK;
    }
    FOR_VALID(x, n, { cnt[ids[i]]++; });
    return TL_OK;
}

static TlStatus count_merge(TlAgg *a, const TlAgg *p, const uint32_t *src,
                            const uint32_t *map, uint32_t n, TlError *err)
{
    (void)err;
    for (uint32_t i = 0; i < n; i++) a->cnt[map[i]] += p->cnt[MSRC(src, i)];
    return TL_OK;
}

/* The counts of groups [first, first+n) (count, count_distinct). */
static bool count_results(TlAgg *a, TlBuilder *b, uint32_t first, uint32_t n)
{
    for (uint32_t g = first; g < first + n; g++)
        if (!tl_agg_put_i64(b, a->cnt[g])) return false;
    return true;
}

const TlAggFns tl_agg_count = {
    .accepts = tl_agg_any_type,
    .update = count_update,
    .merge = count_merge,
    .merge_some = true,
    .skips_nulls = true,
    .counts = true,
    .results = count_results,
};

/* Exported for count_distinct (distinct.c), whose result is a count too. */
bool tl_agg_count_results(TlAgg *a, TlBuilder *b, uint32_t first, uint32_t n)
{
    return count_results(a, b, first, n);
}

/* ------------------------------------------------------------ count_if */

/* cnt[g]: the true values; valid[g]: whether the group had a value at all
 * (DuckDB: count_if of no values is null, unlike count). */
static bool bool_only(TlType x, TlType y)
{
    (void)y;
    return x == TL_TBOOL || x == TL_TNULL;
}

static int cif_arrays(TlAgg *a, void ***arr, size_t *elem, int n)
{
    arr[n] = (void **)&a->valid;
    elem[n++] = sizeof *a->valid;
    return n;
}

static TlStatus cif_update(TlAgg *a, const uint32_t *ids, int64_t n,
                           const TlArray *x, const TlArray *y, TlError *err)
{
    (void)y;
    (void)err;
    int64_t *cnt = a->cnt;
    uint8_t *valid = a->valid;
    FOR_VALID(x, n, {
        uint32_t g = ids[i];
        cnt[g] += tl_array_bool(x, i);
        valid[g] = 1;
    });
    return TL_OK;
}

static TlStatus cif_merge(TlAgg *a, const TlAgg *p, const uint32_t *src,
                          const uint32_t *map, uint32_t n, TlError *err)
{
    (void)err;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t g = MSRC(src, i), d = map[i];
        a->cnt[d] += p->cnt[g];
        a->valid[d] |= p->valid[g];
    }
    return TL_OK;
}

static bool cif_results(TlAgg *a, TlBuilder *b, uint32_t first, uint32_t n)
{
    for (uint32_t g = first; g < first + n; g++)
        if (!(a->valid[g] ? tl_agg_put_i64(b, a->cnt[g]) : tl_builder_append_null(b)))
            return false;
    return true;
}

const TlAggFns tl_agg_count_if = {
    .accepts = bool_only,
    .arrays = cif_arrays,
    .update = cif_update,
    .merge = cif_merge,
    .merge_some = true,
    .skips_nulls = true,
    .results = cif_results,
};

/* ----------------------------------------------------------- sum, mean */

static TlStatus sum_init(TlAgg *a, TlError *err)
{
    (void)err;
    if (a->cls == C_FLT) a->n_xs = 1;
    return TL_OK;
}

static int sum_arrays(TlAgg *a, void ***arr, size_t *elem, int n)
{
    if (a->cls == C_INT) {
        arr[n] = (void **)&a->acc;
        elem[n++] = sizeof *a->acc;
    }
    return tl_agg_xs_arrays(a, arr, elem, n);
}

static TlStatus sum_update(TlAgg *a, const uint32_t *ids, int64_t n,
                           const TlArray *x, const TlArray *y, TlError *err)
{
    (void)y;
    int64_t *cnt = a->cnt;
    if (a->cls == C_INT) {
        const int64_t *v = tl_agg_as_i64(a, x, n);
        if (!v) return tl_error_oom(err);
        __int128 *acc = a->acc;
        FOR_VALID(x, n, {
            uint32_t g = ids[i];
            PREFETCH2(acc, cnt);
            acc[g] += v[i];
            cnt[g]++;
        });
    } else {
        const double *v = tl_array_f64(x);
        TlXSum *xs = a->xs;
        __int128 *acc = xs->acc;
        int32_t *tag = xs->tag;
        FOR_VALID(x, n, {
            uint32_t g = ids[i];
            PREFETCH2(acc, tag);
            if (i + PF_AHEAD < n) __builtin_prefetch(&cnt[ids[i + PF_AHEAD]], 1);
            if (!tl_x_add_at(xs, acc, tag, g, v[i])) return tl_error_oom(err);
            cnt[g]++;
        });
    }
    return TL_OK;
}

static TlStatus sum_merge(TlAgg *a, const TlAgg *p, const uint32_t *src,
                          const uint32_t *map, uint32_t n, TlError *err)
{
    if (a->acc) {
        for (uint32_t i = 0; i < n; i++) {
            uint32_t g = MSRC(src, i), d = map[i];
            a->acc[d] += p->acc[g];
            a->cnt[d] += p->cnt[g];
        }
        return TL_OK;
    }
    if (a->n_xs) return tl_agg_xs_merge_fn(a, p, src, map, n, err);
    return TL_OK;
}

/* An integer sum that leaves int64 fails here, before any output. */
static TlStatus sum_seal(TlAgg *a, uint32_t n_groups, TlError *err)
{
    if (a->cls != C_INT) return TL_OK;
    for (uint32_t g = 0; g < n_groups; g++) {
        __int128 s = a->acc[g];
        if (s > INT64_MAX || s < INT64_MIN) {
            a->bad_group = g;
            err->code = TL_ERR_DATA;
            err->msg[0] = '\0';
            return TL_ERR_DATA;
        }
    }
    return TL_OK;
}

static bool sum_results(TlAgg *a, TlBuilder *b, uint32_t first, uint32_t n)
{
    for (uint32_t g = first; g < first + n; g++) {
        bool ok;
        if (!a->cnt[g]) ok = tl_builder_append_null(b);
        else if (a->cls == C_INT) ok = tl_agg_put_i64(b, (int64_t)a->acc[g]);
        else ok = tl_agg_put_f64(b, tl_x_round(&a->xs[0], g));
        if (!ok) return false;
    }
    return true;
}

#define US_PER_DAY INT64_C(86400000000)

/* Whether x is a date or timestamp: its mean is a timestamp. */
static bool mean_temporal(const TlAgg *a)
{
    TlType t = a->s.x_type;
    return t == TL_TDATE || t == TL_TTIMESTAMP || t == TL_TTIMESTAMPTZ;
}

/* The mean of group g of dates or timestamps in microseconds (DuckDB's:
 * the quotient toward zero, one more when the remainder exceeds half the
 * count, so negative means are never rounded down). */
static __int128 mean_us(const TlAgg *a, uint32_t g)
{
    __int128 s = a->acc[g] * (a->s.x_type == TL_TDATE ? US_PER_DAY : 1);
    int64_t c = a->cnt[g];
    __int128 q = s / c;
    return q + (s % c > c / 2);
}

/* A mean of dates whose midnight is beyond the int64 microseconds fails
 * its group, named as sum's overflow is (op_agg.c). */
static TlStatus mean_seal(TlAgg *a, uint32_t n_groups, TlError *err)
{
    if (!mean_temporal(a)) return TL_OK;
    for (uint32_t g = 0; g < n_groups; g++) {
        if (!a->cnt[g]) continue;
        __int128 m = mean_us(a, g);
        if (m > INT64_MAX || m < INT64_MIN) {
            a->bad_group = g;
            err->code = TL_ERR_DATA;
            err->msg[0] = '\0';
            return TL_ERR_DATA;
        }
    }
    return TL_OK;
}

static bool mean_results(TlAgg *a, TlBuilder *b, uint32_t first, uint32_t n)
{
    for (uint32_t g = first; g < first + n; g++) {
        int64_t c = a->cnt[g];
        bool ok;
        if (!c) ok = tl_builder_append_null(b);
        else if (mean_temporal(a)) ok = tl_agg_put_i64(b, (int64_t)mean_us(a, g));
        else if (a->cls == C_INT)
            ok = tl_agg_put_f64(b, (double)((long double)a->acc[g] / (long double)c));
        else ok = tl_agg_put_f64(b, tl_x_mean(&a->xs[0], g, c));
        if (!ok) return false;
    }
    return true;
}

static bool mean_accepts(TlType x, TlType y)
{
    (void)y;
    return tl_agg_numeric(x) || x == TL_TDATE || x == TL_TTIMESTAMP || x == TL_TTIMESTAMPTZ;
}

const TlAggFns tl_agg_sum = {
    .accepts = tl_agg_numbers,
    .init = sum_init,
    .arrays = sum_arrays,
    .update = sum_update,
    .merge = sum_merge,
    .merge_some = true,
    .skips_nulls = true,
    .seal = sum_seal,
    .results = sum_results,
};

const TlAggFns tl_agg_mean = {
    .accepts = mean_accepts,
    .init = sum_init,
    .arrays = sum_arrays,
    .update = sum_update,
    .merge = sum_merge,
    .merge_some = true,
    .skips_nulls = true,
    .seal = mean_seal,
    .results = mean_results,
};
