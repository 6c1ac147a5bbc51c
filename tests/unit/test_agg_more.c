/*
 * test_agg_more.c -- count_if, mode, arg_max/arg_min, quantile_disc,
 * approx_count_distinct, and median, quantile and mean of dates and
 * timestamps through agg.h: values, nulls, empty groups, ties,
 * and the same results from partial states merged (or, for mode, which
 * does not merge, from several batches) as from one serial pass, for
 * every split of the rows.
 */
#include <stdio.h>
#include <string.h>

#include "../../lib/exec/agg.h"
#include "tl_test.h"

#define NUL INT64_MIN

static TlArray *ints(const int64_t *v, int n)
{
    TlBuilder b;
    tl_builder_init(&b, TL_TINT64);
    for (int i = 0; i < n; i++) {
        if (v[i] == NUL) tl_builder_append_null(&b);
        else tl_builder_append_i64(&b, v[i]);
    }
    return tl_builder_finish(&b);
}

/* An int64 column read as type t (date: days, timestamps: microseconds). */
static TlArray *temporal(TlType t, const int64_t *v, int n)
{
    TlBuilder b;
    tl_builder_init(&b, t);
    for (int i = 0; i < n; i++) {
        if (v[i] == NUL) tl_builder_append_null(&b);
        else if (t == TL_TDATE) tl_builder_append_i32(&b, (int32_t)v[i]);
        else tl_builder_append_i64(&b, v[i]);
    }
    return tl_builder_finish(&b);
}

static TlArray *flts(const double *v, const bool *null, int n)
{
    TlBuilder b;
    tl_builder_init(&b, TL_TFLOAT64);
    for (int i = 0; i < n; i++) {
        if (null[i]) tl_builder_append_null(&b);
        else tl_builder_append_f64(&b, v[i]);
    }
    return tl_builder_finish(&b);
}

static TlArray *strs(const char *const *v, int n)
{
    TlBuilder b;
    tl_builder_init(&b, TL_TSTRING);
    for (int i = 0; i < n; i++) {
        if (!v[i]) tl_builder_append_null(&b);
        else tl_builder_append_str(&b, v[i], strlen(v[i]));
    }
    return tl_builder_finish(&b);
}

static TlArray *bools(const int *v, int n)
{
    TlBuilder b;
    tl_builder_init(&b, TL_TBOOL);
    for (int i = 0; i < n; i++) {
        if (v[i] < 0) tl_builder_append_null(&b);
        else tl_builder_append_bool(&b, v[i] != 0);
    }
    return tl_builder_finish(&b);
}

/* The results as text: values by commas, null as "null". */
static void render(const TlArray *r, char *buf, size_t cap)
{
    size_t k = 0;
    buf[0] = 0;
    for (int64_t i = 0; i < r->length && k + 40 < cap; i++) {
        if (i) buf[k++] = ',';
        if (!tl_array_valid(r, i)) k += (size_t)snprintf(buf + k, cap - k, "null");
        else if (r->type == TL_TINT64 || r->type == TL_TTIMESTAMP || r->type == TL_TTIMESTAMPTZ)
            k += (size_t)snprintf(buf + k, cap - k, "%lld", (long long)tl_array_i64(r)[i]);
        else if (r->type == TL_TFLOAT64) k += (size_t)snprintf(buf + k, cap - k, "%g", tl_array_f64(r)[i]);
        else if (r->type == TL_TSTRING) {
            const TlView *v = &tl_array_views(r)[i];
            k += (size_t)snprintf(buf + k, cap - k, "%.*s", (int)v->in.len,
                                  (const char *)tl_view_ptr(v, r->data));
        } else k += (size_t)snprintf(buf + k, cap - k, "?");
    }
}

/* The results of op over rows [0, n) into groups ids, n_groups groups:
 * split = 0 one pass; else rows [0, split) and [split, n) each into a
 * partial merged in order (mergeable ops), or two updates of one state. */
static void run(TlOp op, TlType out, const TlArray *x, const TlArray *y,
                const uint32_t *ids, int64_t n, uint32_t n_groups, double q,
                int64_t split, char *buf, size_t cap)
{
    TlError err = {0};
    TlAggSpec s = {0};
    s.op = op;
    s.x_type = (TlType)x->type;
    s.y_type = y ? (TlType)y->type : TL_TNULL;
    s.out_type = out;
    s.q = q;
    TlAgg *a = NULL;
    TlArray *r = NULL;
    snprintf(buf, cap, "error");
    if (tl_agg_new(&s, &a, &err) != TL_OK) return;
    if (split == 0) {
        CHECK(tl_agg_update(a, ids, n, n_groups, x, y, &err) == TL_OK);
    } else {
        TlArray *x1 = tl_array_slice((TlArray *)x, 0, split);
        TlArray *x2 = tl_array_slice((TlArray *)x, split, n - split);
        TlArray *y1 = y ? tl_array_slice((TlArray *)y, 0, split) : NULL;
        TlArray *y2 = y ? tl_array_slice((TlArray *)y, split, n - split) : NULL;
        if (tl_agg_mergeable(op)) {
            uint32_t map[16];
            for (uint32_t g = 0; g < n_groups; g++) map[g] = g;
            for (int part = 0; part < 2; part++) {
                TlAgg *p = NULL;
                CHECK(tl_agg_new(&s, &p, &err) == TL_OK);
                if (part == 0) CHECK(tl_agg_update(p, ids, split, n_groups, x1, y1, &err) == TL_OK);
                else CHECK(tl_agg_update(p, ids + split, n - split, n_groups, x2, y2, &err) == TL_OK);
                CHECK(tl_agg_merge(a, p, map, n_groups, n_groups, &err) == TL_OK);
                tl_agg_free(p);
            }
        } else {
            CHECK(tl_agg_update(a, ids, split, n_groups, x1, y1, &err) == TL_OK);
            CHECK(tl_agg_update(a, ids + split, n - split, n_groups, x2, y2, &err) == TL_OK);
        }
        tl_array_release(x1);
        tl_array_release(x2);
        tl_array_release(y1);
        tl_array_release(y2);
    }
    if (tl_agg_finish(a, n_groups, &r, &err) == TL_OK) {
        render(r, buf, cap);
        tl_array_release(r);
    }
    tl_agg_free(a);
}

/* The serial result is want, and so is every split's. */
static void expect(TlOp op, TlType out, const TlArray *x, const TlArray *y,
                   const uint32_t *ids, int64_t n, uint32_t n_groups, double q,
                   const char *want)
{
    char got[512];
    for (int64_t split = 0; split < n; split++) {
        run(op, out, x, y, ids, n, n_groups, q, split, got, sizeof got);
        if (strcmp(got, want) != 0) {
            printf("  %s split %lld: got %s, want %s\n", tl_op_info(op)->name,
                   (long long)split, got, want);
            CHECK(0);
            return;
        }
    }
}

/* Groups 0..2 over 8 rows; group 3 gets no row (an empty group). */
static const uint32_t IDS[8] = {0, 0, 1, 0, 1, 0, 2, 1};

TL_TEST(count_if_counts_trues_null_without_values)
{
    int v[8] = {1, 0, 1, -1, -1, 1, -1, 0};
    TlArray *x = bools(v, 8);
    expect(TL_OP_COUNT_IF, TL_TINT64, x, NULL, IDS, 8, 4, 0, "2,1,null,null");
    CHECK(tl_agg_mergeable(TL_OP_COUNT_IF) && tl_agg_merge_some_ok(TL_OP_COUNT_IF));
    tl_array_release(x);
}

TL_TEST(mode_first_among_ties_skips_nulls)
{
    /* group 0: 2 1 1 2 -> 2 (first of the tie); 1: 5, null, 7 -> 5 */
    int64_t v[8] = {2, 1, 5, 1, NUL, 2, NUL, 7};
    TlArray *x = ints(v, 8);
    expect(TL_OP_MODE, TL_TINT64, x, NULL, IDS, 8, 4, 0, "2,5,null,null");
    CHECK(!tl_agg_mergeable(TL_OP_MODE));
    const char *s[8] = {"b", "a", "x", "a", "y", "b", "z", "y"};
    TlArray *xs = strs(s, 8);
    expect(TL_OP_MODE, TL_TSTRING, xs, NULL, IDS, 8, 4, 0, "b,y,z,null");
    double f[8] = {-0.0, 0.0, 1, 1.5, 1, 1.5, 0, 0};
    bool fn[8] = {0, 0, 0, 0, 0, 0, 1, 0};
    TlArray *xf = flts(f, fn, 8);
    /* -0.0 and 0.0 are one value, the first seen kept */
    expect(TL_OP_MODE, TL_TFLOAT64, xf, NULL, IDS, 8, 4, 0, "-0,1,null,null");
    tl_array_release(x);
    tl_array_release(xs);
    tl_array_release(xf);
}

TL_TEST(arg_max_arg_min_first_row_among_ties)
{
    const char *s[8] = {"p", "q", "r", "s", "t", "u", "v", NULL};
    int64_t b[8] = {1, 3, 3, NUL, 5, 3, NUL, 9};
    TlArray *x = strs(s, 8), *y = ints(b, 8);
    /* group 0: b 1 3 null 3 -> q (first 3) / p; 1: 3 5 and a null x -> t / r */
    expect(TL_OP_ARG_MAX, TL_TSTRING, x, y, IDS, 8, 4, 0, "q,t,null,null");
    expect(TL_OP_ARG_MIN, TL_TSTRING, x, y, IDS, 8, 4, 0, "p,r,null,null");
    double f[8] = {0.5, 0.0 / 0.0, 2, 0.5, 1, 7, 3, 2};
    bool fn[8] = {0};
    TlArray *yf = flts(f, fn, 8);
    /* NaN is the largest y */
    expect(TL_OP_ARG_MAX, TL_TSTRING, x, yf, IDS, 8, 4, 0, "q,r,v,null");
    int64_t a[8] = {10, 20, 30, 40, 50, 60, 70, 80};
    TlArray *xi = ints(a, 8), *ys = strs(s, 8);
    expect(TL_OP_ARG_MIN, TL_TINT64, xi, ys, IDS, 8, 4, 0, "10,30,70,null");
    tl_array_release(x);
    tl_array_release(y);
    tl_array_release(yf);
    tl_array_release(xi);
    tl_array_release(ys);
}

TL_TEST(quantile_disc_values_of_the_group)
{
    int64_t v[8] = {4, 1, 9, 3, NUL, 2, NUL, 8};
    TlArray *x = ints(v, 8);
    /* group 0: 1 2 3 4; 1: 8 9 */
    expect(TL_OP_QUANTILE_DISC, TL_TINT64, x, NULL, IDS, 8, 4, 0.5, "2,8,null,null");
    expect(TL_OP_QUANTILE_DISC, TL_TINT64, x, NULL, IDS, 8, 4, 0.6, "3,9,null,null");
    expect(TL_OP_QUANTILE_DISC, TL_TINT64, x, NULL, IDS, 8, 4, 0, "1,8,null,null");
    expect(TL_OP_QUANTILE_DISC, TL_TINT64, x, NULL, IDS, 8, 4, 1, "4,9,null,null");
    int64_t big[8] = {INT64_MAX, INT64_MAX - 1, 0, INT64_MIN + 1, 0, -5, 0, 0};
    TlArray *xb = ints(big, 8);
    /* exact beyond 2^53 (an image, not a double) */
    expect(TL_OP_QUANTILE_DISC, TL_TINT64, xb, NULL, IDS, 8, 4, 1,
           "9223372036854775807,0,0,null");
    tl_array_release(x);
    tl_array_release(xb);
}

TL_TEST(median_quantile_mean_of_timestamps_as_duckdb)
{
    /* group 0: -4 -1 3 10; 1: -7 0 (and a null); 2: a null; 3: no row */
    int64_t v[8] = {-4, -1, -7, 10, NUL, 3, NUL, 0};
    TlArray *t = temporal(TL_TTIMESTAMP, v, 8), *z = temporal(TL_TTIMESTAMPTZ, v, 8);
    /* llround(lo(1-d) + hi*d): -3.5 rounds away from zero */
    expect(TL_OP_MEDIAN, TL_TTIMESTAMP, t, NULL, IDS, 8, 4, 0, "1,-4,null,null");
    expect(TL_OP_QUANTILE, TL_TTIMESTAMPTZ, z, NULL, IDS, 8, 4, 0.25, "-2,-5,null,null");
    expect(TL_OP_QUANTILE, TL_TTIMESTAMP, t, NULL, IDS, 8, 4, 1, "10,0,null,null");
    /* the quotient toward zero, up when the remainder exceeds half the count */
    expect(TL_OP_MEAN, TL_TTIMESTAMP, t, NULL, IDS, 8, 4, 0, "2,-3,null,null");
    int64_t big[8] = {INT64_MAX, INT64_MAX - 2, 0, INT64_MAX - 6, 0, INT64_MAX - 4, 0, 0};
    TlArray *tb = temporal(TL_TTIMESTAMP, big, 8);
    /* kept exactly beyond 2^53 microseconds; the ends themselves exact */
    expect(TL_OP_QUANTILE, TL_TTIMESTAMP, tb, NULL, IDS, 8, 4, 1,
           "9223372036854775807,0,0,null");
    expect(TL_OP_QUANTILE, TL_TTIMESTAMP, tb, NULL, IDS, 8, 4, 0,
           "9223372036854775801,0,0,null");
    tl_array_release(t);
    tl_array_release(z);
    tl_array_release(tb);
}

TL_TEST(median_and_mean_of_dates_are_timestamps)
{
    int64_t v[8] = {1, 2, -1, 4, NUL, 3, NUL, 0};
    TlArray *d = temporal(TL_TDATE, v, 8);
    /* group 0: days 1 2 3 4 -> 2.5 days; 1: -1 0 -> -0.5 day */
    expect(TL_OP_MEDIAN, TL_TTIMESTAMP, d, NULL, IDS, 8, 4, 0,
           "216000000000,-43200000000,null,null");
    expect(TL_OP_MEAN, TL_TTIMESTAMP, d, NULL, IDS, 8, 4, 0,
           "216000000000,-43200000000,null,null");
    /* a date whose midnight leaves the int64 microseconds fails */
    int64_t far[8] = {200000000, 1, 2, 3, 4, 5, 6, 7};
    TlArray *f = temporal(TL_TDATE, far, 8);
    char got[128];
    run(TL_OP_MEDIAN, TL_TTIMESTAMP, f, NULL, IDS, 8, 4, 0, 0, got, sizeof got);
    CHECK_EQ_STR(got, "error");
    /* a mean fails when the mean itself leaves them */
    run(TL_OP_MEAN, TL_TTIMESTAMP, f, NULL, IDS, 8, 4, 0, 0, got, sizeof got);
    CHECK_EQ_STR(got, "4320000194400000000,374400000000,518400000000,null");
    int64_t farther[8] = {200000000, 200000000, 1, 200000000, 2, 200000000, 3, 4};
    TlArray *g = temporal(TL_TDATE, farther, 8);
    run(TL_OP_MEAN, TL_TTIMESTAMP, g, NULL, IDS, 8, 4, 0, 0, got, sizeof got);
    CHECK_EQ_STR(got, "error");
    tl_array_release(g);
    run(TL_OP_QUANTILE_DISC, TL_TDATE, f, NULL, IDS, 8, 4, 1, 0, got, sizeof got);
    CHECK_EQ_STR(got, "?,?,?,null");
    tl_array_release(d);
    tl_array_release(f);
}

TL_TEST(approx_count_distinct_small_sets_merge_by_maximum)
{
    const char *s[8] = {"a", "b", "a", "c", NULL, "a", NULL, "z"};
    TlArray *x = strs(s, 8);
    expect(TL_OP_APPROX_COUNT_DISTINCT, TL_TINT64, x, NULL, IDS, 8, 4, 0, "3,2,0,0");
    tl_array_release(x);
}

TL_TEST(approx_count_distinct_error_bound)
{
    enum { N = 200000, D = 60000 };
    int64_t *v = tl_malloc(N * sizeof *v);
    uint32_t *ids = tl_calloc(N, sizeof *ids);
    for (int i = 0; i < N; i++) v[i] = (int64_t)((uint64_t)i * 2654435761u % D);
    TlArray *x = ints(v, N);
    char got[64];
    run(TL_OP_APPROX_COUNT_DISTINCT, TL_TINT64, x, NULL, ids, N, 1, 0, 0, got, sizeof got);
    long long e = atoll(got);
    CHECK(e > D * 95 / 100 && e < D * 105 / 100);
    char split[64];
    run(TL_OP_APPROX_COUNT_DISTINCT, TL_TINT64, x, NULL, ids, N, 1, 0, N / 3, split, sizeof split);
    CHECK_EQ_STR(got, split);
    tl_array_release(x);
    tl_free(v);
    tl_free(ids);
}

TL_TEST(rejects_bad_types)
{
    TlError err = {0};
    TlAggSpec s = {0};
    TlAgg *a = NULL;
    s.op = TL_OP_COUNT_IF;
    s.x_type = TL_TINT64;
    s.out_type = TL_TINT64;
    CHECK(tl_agg_new(&s, &a, &err) == TL_ERR_USAGE && a == NULL);
    s.op = TL_OP_QUANTILE_DISC;
    s.x_type = TL_TSTRING;
    CHECK(tl_agg_new(&s, &a, &err) == TL_ERR_USAGE && a == NULL);
}

int main(void)
{
    TL_RUN(count_if_counts_trues_null_without_values);
    TL_RUN(mode_first_among_ties_skips_nulls);
    TL_RUN(arg_max_arg_min_first_row_among_ties);
    TL_RUN(quantile_disc_values_of_the_group);
    TL_RUN(median_quantile_mean_of_timestamps_as_duckdb);
    TL_RUN(median_and_mean_of_dates_are_timestamps);
    TL_RUN(approx_count_distinct_small_sets_merge_by_maximum);
    TL_RUN(approx_count_distinct_error_bound);
    TL_RUN(rejects_bad_types);
    return tl_test_summary(__FILE__);
}
