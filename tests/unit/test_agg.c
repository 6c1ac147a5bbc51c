/*
 * test_agg.c -- aggregate states (lib/exec/agg.c) and the aggregate
 * operator (lib/exec/op_agg.c) over hand-built batches and expressions.
 */
#include <math.h>
#include <stdlib.h>

#include "../../lib/exec/agg.h"
#include "../../lib/exec/exec.h"
#include "tl_test.h"
#include "tl_source.h"

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

/* Float array; isnan(v) && signbit marks... no: use the mask for nulls. */
static TlArray *flts(const double *v, int n, const bool *null)
{
    TlBuilder b;
    tl_builder_init(&b, TL_TFLOAT64);
    for (int i = 0; i < n; i++) {
        if (null && null[i]) tl_builder_append_null(&b);
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

/* Run one aggregate over one batch of x (and y) with the given ids and
 * n_groups; returns the result array (NULL on error, status in *st). */
static TlArray *run1(TlOp op, TlType out_type, const TlArray *x, const TlArray *y,
                     const uint32_t *ids, int64_t n, uint32_t n_groups, double q,
                     TlStatus *st)
{
    TlError err = {0};
    TlAggSpec s = {0};
    s.op = op;
    s.x_type = x ? (TlType)x->type : TL_TNULL;
    s.y_type = y ? (TlType)y->type : TL_TNULL;
    s.out_type = out_type;
    s.q = q;
    s.no_arg = x == NULL;
    if (op == TL_OP_STRING_AGG) {
        s.sep = ", ";
        s.sep_len = 2;
    }
    TlAgg *a = NULL;
    TlArray *out = NULL;
    *st = tl_agg_new(&s, &a, &err);
    if (*st != TL_OK) return NULL;
    *st = tl_agg_update(a, ids, n, n_groups, x, y, &err);
    if (*st == TL_OK) *st = tl_agg_finish(a, n_groups, &out, &err);
    tl_agg_free(a);
    return out;
}

static bool is_null(const TlArray *a, int64_t i) { return !tl_array_valid(a, i); }

static bool str_is(const TlArray *a, int64_t i, const char *want)
{
    if (!tl_array_valid(a, i)) return false;
    const TlView *v = &tl_array_views(a)[i];
    return v->in.len == strlen(want) &&
           memcmp(tl_view_ptr(v, a->data), want, v->in.len) == 0;
}

static const uint32_t IDS[] = {0, 1, 0, 1, 0, 2};

TL_TEST(counts)
{
    TlStatus st;
    int64_t v[] = {1, NUL, 3, NUL, 5, 6};
    TlArray *x = ints(v, 6);
    /* 4 groups: group 3 never appears */
    TlArray *r = run1(TL_OP_COUNT, TL_TINT64, NULL, NULL, IDS, 6, 4, 0, &st);
    CHECK(st == TL_OK && r && r->null_count == 0);
    CHECK_EQ_INT(tl_array_i64(r)[0], 3);
    CHECK_EQ_INT(tl_array_i64(r)[1], 2);
    CHECK_EQ_INT(tl_array_i64(r)[2], 1);
    CHECK_EQ_INT(tl_array_i64(r)[3], 0);
    tl_array_release(r);
    r = run1(TL_OP_COUNT, TL_TINT64, x, NULL, IDS, 6, 4, 0, &st);
    CHECK_EQ_INT(tl_array_i64(r)[0], 3);
    CHECK_EQ_INT(tl_array_i64(r)[1], 0);
    CHECK_EQ_INT(tl_array_i64(r)[3], 0);
    tl_array_release(r);
    tl_array_release(x);
}

TL_TEST(count_distinct)
{
    TlStatus st;
    double v[] = {0.0, -0.0, NAN, -NAN, 1.0, 2.0, 1.0, 7.0};
    bool nl[] = {0, 0, 0, 0, 0, 0, 0, 1};
    uint32_t ids[] = {0, 0, 0, 0, 1, 1, 1, 1};
    TlArray *x = flts(v, 8, nl);
    TlArray *r = run1(TL_OP_COUNT_DISTINCT, TL_TINT64, x, NULL, ids, 8, 3, 0, &st);
    CHECK(st == TL_OK);
    CHECK_EQ_INT(tl_array_i64(r)[0], 2);
    CHECK_EQ_INT(tl_array_i64(r)[1], 2);
    CHECK_EQ_INT(tl_array_i64(r)[2], 0);
    tl_array_release(r);
    tl_array_release(x);
    const char *s[] = {"a", "b", "a", NULL, "a long string value", "a long string value"};
    uint32_t ids2[] = {0, 0, 0, 0, 1, 1};
    x = strs(s, 6);
    r = run1(TL_OP_COUNT_DISTINCT, TL_TINT64, x, NULL, ids2, 6, 2, 0, &st);
    CHECK_EQ_INT(tl_array_i64(r)[0], 2);
    CHECK_EQ_INT(tl_array_i64(r)[1], 1);
    tl_array_release(r);
    tl_array_release(x);
}

TL_TEST(sums_and_overflow)
{
    TlStatus st;
    int64_t v[] = {1, NUL, 3, NUL, 5, 6};
    TlArray *x = ints(v, 6);
    TlArray *r = run1(TL_OP_SUM, TL_TINT64, x, NULL, IDS, 6, 4, 0, &st);
    CHECK(st == TL_OK);
    CHECK_EQ_INT(tl_array_i64(r)[0], 9);
    CHECK(is_null(r, 1)); /* only nulls */
    CHECK_EQ_INT(tl_array_i64(r)[2], 6);
    CHECK(is_null(r, 3)); /* no rows */
    tl_array_release(r);
    tl_array_release(x);

    /* Intermediate overflow that comes back is fine (exact sum). */
    int64_t w[] = {INT64_MAX, 10, -20, INT64_MIN + 1, -2};
    uint32_t z[] = {0, 0, 0, 1, 1};
    x = ints(w, 3);
    r = run1(TL_OP_SUM, TL_TINT64, x, NULL, z, 3, 1, 0, &st);
    CHECK(st == TL_OK && tl_array_i64(r)[0] == INT64_MAX - 10);
    tl_array_release(r);
    tl_array_release(x);
    x = ints(w, 2);
    r = run1(TL_OP_SUM, TL_TINT64, x, NULL, z, 2, 1, 0, &st);
    CHECK(st == TL_ERR_DATA && r == NULL);
    tl_array_release(x);
    x = ints(w, 5);
    r = run1(TL_OP_SUM, TL_TINT64, x, NULL, z, 5, 2, 0, &st);
    CHECK(st == TL_ERR_DATA && r == NULL); /* INT64_MIN - 1 (NUL is INT64_MIN) */
    tl_array_release(x);

    /* Float sums are exact, rounded once: 2 and 0.5, where adding left to
     * right gives 0 (1e16 + 1 rounds back to 1e16). */
    double f[] = {1e16, 1.0, 1.0, -1e16};
    uint32_t o[] = {0, 0, 0, 0};
    x = flts(f, 4, NULL);
    r = run1(TL_OP_SUM, TL_TFLOAT64, x, NULL, o, 4, 1, 0, &st);
    CHECK(tl_array_f64(r)[0] == 2.0);
    tl_array_release(r);
    r = run1(TL_OP_MEAN, TL_TFLOAT64, x, NULL, o, 4, 1, 0, &st);
    CHECK(tl_array_f64(r)[0] == 0.5);
    tl_array_release(r);
    tl_array_release(x);
}

TL_TEST(mean_int_exact)
{
    TlStatus st;
    int64_t v[] = {INT64_MAX, INT64_MAX, NUL, 1, 2};
    uint32_t ids[] = {0, 0, 0, 1, 1};
    TlArray *x = ints(v, 5);
    TlArray *r = run1(TL_OP_MEAN, TL_TFLOAT64, x, NULL, ids, 5, 3, 0, &st);
    CHECK(st == TL_OK);
    CHECK(tl_array_f64(r)[0] == (double)INT64_MAX);
    CHECK(tl_array_f64(r)[1] == 1.5);
    CHECK(is_null(r, 2));
    tl_array_release(r);
    tl_array_release(x);
}

TL_TEST(min_max)
{
    TlStatus st;
    int64_t v[] = {4, NUL, -3, NUL, 9, 6};
    TlArray *x = ints(v, 6);
    TlArray *r = run1(TL_OP_MIN, TL_TINT64, x, NULL, IDS, 6, 3, 0, &st);
    CHECK_EQ_INT(tl_array_i64(r)[0], -3);
    CHECK(is_null(r, 1));
    CHECK_EQ_INT(tl_array_i64(r)[2], 6);
    tl_array_release(r);
    r = run1(TL_OP_MAX, TL_TINT64, x, NULL, IDS, 6, 3, 0, &st);
    CHECK_EQ_INT(tl_array_i64(r)[0], 9);
    tl_array_release(r);
    tl_array_release(x);

    double f[] = {1.0, NAN, -INFINITY, 2.0, 0.5, 3.0};
    x = flts(f, 6, NULL);
    r = run1(TL_OP_MAX, TL_TFLOAT64, x, NULL, IDS, 6, 3, 0, &st);
    CHECK(isnan(tl_array_f64(r)[0]) == 0 && tl_array_f64(r)[0] == 1.0);
    CHECK(isnan(tl_array_f64(r)[1])); /* NaN is the greatest */
    tl_array_release(r);
    r = run1(TL_OP_MIN, TL_TFLOAT64, x, NULL, IDS, 6, 3, 0, &st);
    CHECK(tl_array_f64(r)[0] == -INFINITY);
    CHECK(tl_array_f64(r)[1] == 2.0);
    tl_array_release(r);
    tl_array_release(x);

    const char *s[] = {"pear", "b", "apple pie with cream", NULL, "apple", "z"};
    x = strs(s, 6);
    r = run1(TL_OP_MIN, TL_TSTRING, x, NULL, IDS, 6, 3, 0, &st);
    CHECK(str_is(r, 0, "apple"));
    CHECK(str_is(r, 1, "b"));
    tl_array_release(r);
    r = run1(TL_OP_MAX, TL_TSTRING, x, NULL, IDS, 6, 3, 0, &st);
    CHECK(str_is(r, 0, "pear"));
    CHECK(str_is(r, 2, "z"));
    tl_array_release(r);
    tl_array_release(x);
}

TL_TEST(first_last_keep_nulls)
{
    TlStatus st;
    int64_t v[] = {NUL, 2, 3, NUL, 5, 6};
    TlArray *x = ints(v, 6);
    TlArray *r = run1(TL_OP_FIRST, TL_TINT64, x, NULL, IDS, 6, 4, 0, &st);
    CHECK(is_null(r, 0));
    CHECK_EQ_INT(tl_array_i64(r)[1], 2);
    CHECK_EQ_INT(tl_array_i64(r)[2], 6);
    CHECK(is_null(r, 3));
    tl_array_release(r);
    r = run1(TL_OP_LAST, TL_TINT64, x, NULL, IDS, 6, 4, 0, &st);
    CHECK_EQ_INT(tl_array_i64(r)[0], 5);
    CHECK(is_null(r, 1));
    tl_array_release(r);
    tl_array_release(x);
    const char *s[] = {"a much longer first string", "b", NULL, "d", "e", "f"};
    x = strs(s, 6);
    r = run1(TL_OP_FIRST, TL_TSTRING, x, NULL, IDS, 6, 3, 0, &st);
    CHECK(str_is(r, 0, "a much longer first string"));
    tl_array_release(r);
    r = run1(TL_OP_LAST, TL_TSTRING, x, NULL, IDS, 6, 3, 0, &st);
    CHECK(str_is(r, 0, "e") && str_is(r, 1, "d") && str_is(r, 2, "f"));
    tl_array_release(r);
    tl_array_release(x);
}

TL_TEST(quantiles)
{
    TlStatus st;
    /* group 0: 1 2 3 4 (unsorted), group 1: 10, group 2: none */
    double f[] = {4, 10, 1, 3, 2};
    uint32_t ids[] = {0, 1, 0, 0, 0};
    TlArray *x = flts(f, 5, NULL);
    TlArray *r = run1(TL_OP_MEDIAN, TL_TFLOAT64, x, NULL, ids, 5, 3, 0.5, &st);
    CHECK(st == TL_OK);
    CHECK(tl_array_f64(r)[0] == 2.5);
    CHECK(tl_array_f64(r)[1] == 10.0);
    CHECK(is_null(r, 2));
    tl_array_release(r);
    r = run1(TL_OP_QUANTILE, TL_TFLOAT64, x, NULL, ids, 5, 3, 0.9, &st);
    /* (4-1)*0.9 = 2.7 -> 3 + 0.7 * (4 - 3) */
    CHECK(fabs(tl_array_f64(r)[0] - 3.7) < 1e-12);
    tl_array_release(r);
    r = run1(TL_OP_QUANTILE, TL_TFLOAT64, x, NULL, ids, 5, 3, 0.0, &st);
    CHECK(tl_array_f64(r)[0] == 1.0);
    tl_array_release(r);
    tl_array_release(x);
    int64_t v[] = {5, NUL, 1, 2};
    x = ints(v, 4);
    uint32_t z[] = {0, 0, 0, 0};
    r = run1(TL_OP_MEDIAN, TL_TFLOAT64, x, NULL, z, 4, 1, 0.5, &st);
    CHECK(tl_array_f64(r)[0] == 2.0);
    tl_array_release(r);
    tl_array_release(x);
}

TL_TEST(quantile_large_groups)
{
    /* 1000 values per group (the radix path): group 0 holds -500..499 in a
     * scrambled order, group 1 the same plus a NaN (greatest). */
    enum { M = 2001 };
    double *f = tl_malloc(M * sizeof *f);
    uint32_t *ids = tl_malloc(M * sizeof *ids);
    for (int i = 0; i < 1000; i++) {
        f[2 * i] = (double)((i * 7919) % 1000 - 500);
        ids[2 * i] = 0;
        f[2 * i + 1] = f[2 * i];
        ids[2 * i + 1] = 1;
    }
    f[2000] = NAN;
    ids[2000] = 1;
    TlArray *x = flts(f, M, NULL);
    TlStatus st;
    TlArray *r = run1(TL_OP_MEDIAN, TL_TFLOAT64, x, NULL, ids, M, 2, 0.5, &st);
    CHECK(st == TL_OK);
    CHECK(tl_array_f64(r)[0] == -0.5);
    CHECK(tl_array_f64(r)[1] == 0.0); /* 1001 values: the middle one */
    tl_array_release(r);
    r = run1(TL_OP_QUANTILE, TL_TFLOAT64, x, NULL, ids, M, 2, 1.0, &st);
    CHECK(tl_array_f64(r)[0] == 499.0);
    CHECK(isnan(tl_array_f64(r)[1]));
    tl_array_release(r);
    r = run1(TL_OP_QUANTILE, TL_TFLOAT64, x, NULL, ids, M, 2, 0.0, &st);
    CHECK(tl_array_f64(r)[0] == -500.0);
    tl_array_release(r);
    tl_array_release(x);
    tl_free(f);
    tl_free(ids);
}

TL_TEST(std_var)
{
    TlStatus st;
    double f[] = {2, 4, 4, 4, 5, 5, 7, 9, 1};
    uint32_t ids[] = {0, 0, 0, 0, 0, 0, 0, 0, 1};
    TlArray *x = flts(f, 9, NULL);
    TlArray *r = run1(TL_OP_VAR, TL_TFLOAT64, x, NULL, ids, 9, 3, 0, &st);
    CHECK(fabs(tl_array_f64(r)[0] - 32.0 / 7.0) < 1e-12);
    CHECK(is_null(r, 1)); /* n = 1 */
    CHECK(is_null(r, 2)); /* n = 0 */
    tl_array_release(r);
    r = run1(TL_OP_STD, TL_TFLOAT64, x, NULL, ids, 9, 2, 0, &st);
    CHECK(fabs(tl_array_f64(r)[0] - sqrt(32.0 / 7.0)) < 1e-12);
    tl_array_release(r);
    tl_array_release(x);
}

TL_TEST(corr_covar)
{
    TlStatus st;
    double xs[] = {1, 2, 3, 4, 5, 1, 1};
    double ys[] = {2, 4, 6, 8, 99, 3, 5};
    bool ynull[] = {0, 0, 0, 0, 1, 0, 0};
    uint32_t ids[] = {0, 0, 0, 0, 0, 1, 1};
    TlArray *x = flts(xs, 7, NULL), *y = flts(ys, 7, ynull);
    TlArray *r = run1(TL_OP_CORR, TL_TFLOAT64, x, y, ids, 7, 3, 0, &st);
    CHECK(st == TL_OK);
    CHECK(fabs(tl_array_f64(r)[0] - 1.0) < 1e-12);
    CHECK(is_null(r, 1)); /* x constant: std 0 */
    CHECK(is_null(r, 2));
    tl_array_release(r);
    r = run1(TL_OP_COVAR, TL_TFLOAT64, x, y, ids, 7, 3, 0, &st);
    /* x 1..4, y 2x: cov = 2 var(x) = 2 * 5/3 */
    CHECK(fabs(tl_array_f64(r)[0] - 10.0 / 3.0) < 1e-12);
    CHECK(tl_array_f64(r)[1] == 0.0);
    tl_array_release(r);
    tl_array_release(x);
    tl_array_release(y);
}

TL_TEST(string_agg_any_all)
{
    TlStatus st;
    const char *s[] = {"a", NULL, "b", NULL, "a long piece of text", "x"};
    TlArray *x = strs(s, 6);
    TlArray *r = run1(TL_OP_STRING_AGG, TL_TSTRING, x, NULL, IDS, 6, 3, 0, &st);
    CHECK(str_is(r, 0, "a, b, a long piece of text"));
    CHECK(is_null(r, 1));
    CHECK(str_is(r, 2, "x"));
    tl_array_release(r);
    tl_array_release(x);
    int bv[] = {1, -1, 0, -1, 1, 1};
    x = bools(bv, 6);
    r = run1(TL_OP_ANY, TL_TBOOL, x, NULL, IDS, 6, 3, 0, &st);
    CHECK(tl_array_bool(r, 0) && is_null(r, 1) && tl_array_bool(r, 2));
    tl_array_release(r);
    r = run1(TL_OP_ALL, TL_TBOOL, x, NULL, IDS, 6, 3, 0, &st);
    CHECK(!tl_array_bool(r, 0) && is_null(r, 1) && tl_array_bool(r, 2));
    tl_array_release(r);
    tl_array_release(x);
}

TL_TEST(rejects_bad_types)
{
    TlError err = {0};
    TlAggSpec s = {0};
    TlAgg *a = NULL;
    s.op = TL_OP_SUM;
    s.x_type = TL_TSTRING;
    s.out_type = TL_TINT64;
    CHECK(tl_agg_new(&s, &a, &err) == TL_ERR_USAGE && a == NULL);
    CHECK(strstr(err.msg, "sum") != NULL);
    s.op = TL_OP_ANY;
    s.x_type = TL_TINT64;
    CHECK(tl_agg_new(&s, &a, &err) == TL_ERR_USAGE);
}

TL_TEST(several_batches)
{
    /* The same states fed in two batches equal one batch. */
    TlError err = {0};
    TlAggSpec s = {0};
    s.op = TL_OP_STD;
    s.x_type = TL_TFLOAT64;
    s.out_type = TL_TFLOAT64;
    TlAgg *a = NULL;
    CHECK(tl_agg_new(&s, &a, &err) == TL_OK);
    double f1[] = {1, 2}, f2[] = {4, 8, 3};
    uint32_t i1[] = {0, 0}, i2[] = {1, 0, 1};
    TlArray *x1 = flts(f1, 2, NULL), *x2 = flts(f2, 3, NULL), *r = NULL;
    CHECK(tl_agg_update(a, i1, 2, 1, x1, NULL, &err) == TL_OK);
    CHECK(tl_agg_update(a, i2, 3, 2, x2, NULL, &err) == TL_OK);
    CHECK(tl_agg_finish(a, 2, &r, &err) == TL_OK);
    /* group 0: 1 2 8 -> mean 11/3, var = ((1-11/3)^2+(2-11/3)^2+(8-11/3)^2)/2 */
    double m = 11.0 / 3, var = ((1 - m) * (1 - m) + (2 - m) * (2 - m) + (8 - m) * (8 - m)) / 2;
    CHECK(fabs(tl_array_f64(r)[0] - sqrt(var)) < 1e-12);
    CHECK(fabs(tl_array_f64(r)[1] - sqrt(0.5)) < 1e-12);
    tl_array_release(r);
    tl_array_release(x1);
    tl_array_release(x2);
    tl_agg_free(a);
}


/* ------------------------------------------------------- the operator */


static TlExprId col_expr(TlExprArena *ea, int col, TlType t)
{
    TlExpr e = {0};
    TlExprId id;
    TlError err;
    e.kind = TL_X_COL;
    e.col = col;
    e.type = (uint8_t)t;
    e.name = "c";
    tl_ea_push(ea, &e, NULL, 0, &id, &err);
    return id;
}

/* An aggregate call op(args) spanning [start, start+len) of source 0. */
static TlExprId call_expr(TlExprArena *ea, TlOp op, TlType t, const TlExprId *args,
                          uint32_t n, uint32_t start, uint32_t len)
{
    TlExpr e = {0};
    TlExprId id;
    TlError err;
    e.kind = TL_X_CALL;
    e.op = (uint16_t)op;
    e.type = (uint8_t)t;
    e.col = -1;
    e.start = start;
    e.len = len;
    tl_ea_push(ea, &e, args, n, &id, &err);
    return id;
}

static TlExprId lit_f64(TlExprArena *ea, double v)
{
    TlExpr e = {0};
    TlExprId id;
    TlError err;
    e.kind = TL_X_LIT;
    e.lit_type = TL_TFLOAT64;
    e.type = TL_TFLOAT64;
    e.col = -1;
    e.v.f = v;
    tl_ea_push(ea, &e, NULL, 0, &id, &err);
    return id;
}

/* Run the aggregate operator; out columns concatenated; returns rows. */
static int64_t run_op(TlOperator *op, TlArray **out, int n_cols, TlStatus *st,
                      TlError *err)
{
    TlArray **parts[8] = {0};
    int np = 0;
    int64_t rows = 0;
    for (int c = 0; c < n_cols; c++) parts[c] = tl_calloc(64, sizeof(TlArray *));
    for (;;) {
        TlBatch *b = NULL;
        *st = op->next(op, &b, err);
        if (*st != TL_OK || !b) break;
        for (int c = 0; c < n_cols; c++) parts[c][np] = tl_array_retain(b->cols[c]);
        np++;
        rows += b->n_rows;
        tl_batch_free(b);
    }
    for (int c = 0; c < n_cols; c++) {
        out[c] = np ? tl_array_concat(parts[c], np) : NULL;
        for (int i = 0; i < np; i++) tl_array_release(parts[c][i]);
        tl_free(parts[c]);
    }
    return rows;
}

TL_TEST(op_group_by_int_key)
{
    TlError err = {0};
    TlExprArena ea;
    tl_ea_init(&ea, &err);
    uint16_t src;
    tl_ea_add_src(&ea, "sum(v), count(), mean(v), median(v)", "--agg", &src, &err);
    TlSchema in = {0}, outs = {0};
    tl_schema_add(&in, "k", TL_TINT64, &err);
    tl_schema_add(&in, "v", TL_TINT64, &err);
    tl_schema_add(&outs, "k", TL_TINT64, &err);
    tl_schema_add(&outs, "s", TL_TINT64, &err);
    tl_schema_add(&outs, "n", TL_TINT64, &err);
    tl_schema_add(&outs, "m", TL_TFLOAT64, &err);
    tl_schema_add(&outs, "med", TL_TFLOAT64, &err);
    int64_t kv[] = {7, NUL, 7, 3, NUL, 3, 7, 9};
    int64_t vv[] = {1, 2, 3, 4, 5, NUL, 6, NUL};
    TlArray *cols[2] = {ints(kv, 8), ints(vv, 8)};
    TlExprId key = col_expr(&ea, 0, TL_TINT64), v = col_expr(&ea, 1, TL_TINT64);
    TlExprId aggs[4] = {call_expr(&ea, TL_OP_SUM, TL_TINT64, &v, 1, 0, 6),
                        call_expr(&ea, TL_OP_COUNT, TL_TINT64, NULL, 0, 8, 7),
                        call_expr(&ea, TL_OP_MEAN, TL_TFLOAT64, &v, 1, 17, 7),
                        call_expr(&ea, TL_OP_MEDIAN, TL_TFLOAT64, &v, 1, 26, 9)};
    TlOperator *op = NULL;
    int64_t groups_before = g_stats.groups;
    CHECK(tl_op_agg_new(source(&in, cols, 8, 3), &ea, &key, 1, aggs, 4, &outs, &op,
                        &err) == TL_OK);
    TlArray *out[5];
    TlStatus st;
    CHECK_EQ_INT(run_op(op, out, 5, &st, &err), 4);
    CHECK(st == TL_OK);
    CHECK_EQ_INT(g_stats.groups - groups_before, 4);
    /* groups in order of first appearance: 7, null, 3, 9 */
    CHECK_EQ_INT(tl_array_i64(out[0])[0], 7);
    CHECK(is_null(out[0], 1));
    CHECK_EQ_INT(tl_array_i64(out[0])[2], 3);
    CHECK_EQ_INT(tl_array_i64(out[0])[3], 9);
    CHECK_EQ_INT(tl_array_i64(out[1])[0], 10);
    CHECK_EQ_INT(tl_array_i64(out[1])[1], 7);
    CHECK_EQ_INT(tl_array_i64(out[1])[2], 4);
    CHECK(is_null(out[1], 3));
    CHECK_EQ_INT(tl_array_i64(out[2])[3], 1);
    CHECK(tl_array_f64(out[3])[0] == 10.0 / 3);
    CHECK(tl_array_f64(out[4])[0] == 3.0 && tl_array_f64(out[4])[1] == 3.5);
    op->free(op);
    for (int c = 0; c < 5; c++) tl_array_release(out[c]);
    for (int c = 0; c < 2; c++) tl_array_release(cols[c]);
    tl_schema_free(&in);
    tl_schema_free(&outs);
    tl_ea_free(&ea);
}

TL_TEST(op_string_and_two_keys)
{
    TlError err = {0};
    TlExprArena ea;
    tl_ea_init(&ea, &err);
    TlSchema in = {0}, o1 = {0}, o2 = {0};
    tl_schema_add(&in, "s", TL_TSTRING, &err);
    tl_schema_add(&in, "i", TL_TINT64, &err);
    tl_schema_add(&o1, "s", TL_TSTRING, &err);
    tl_schema_add(&o1, "n", TL_TINT64, &err);
    tl_schema_add(&o2, "s", TL_TSTRING, &err);
    tl_schema_add(&o2, "i", TL_TINT64, &err);
    tl_schema_add(&o2, "q", TL_TFLOAT64, &err);
    const char *sv[] = {"id001", "a key longer than twelve", "id001", NULL, "id002",
                        "a key longer than twelve"};
    int64_t iv[] = {1, 2, 1, 1, 2, 3};
    TlArray *cols[2] = {strs(sv, 6), ints(iv, 6)};
    TlExprId s = col_expr(&ea, 0, TL_TSTRING), i = col_expr(&ea, 1, TL_TINT64);
    TlExprId cnt = call_expr(&ea, TL_OP_COUNT, TL_TINT64, NULL, 0, 0, 0);
    TlOperator *op = NULL;
    CHECK(tl_op_agg_new(source(&in, cols, 6, 4), &ea, &s, 1, &cnt, 1, &o1, &op,
                        &err) == TL_OK);
    TlArray *out[3];
    TlStatus st;
    CHECK_EQ_INT(run_op(op, out, 2, &st, &err), 4);
    CHECK(str_is(out[0], 0, "id001") && str_is(out[0], 1, "a key longer than twelve"));
    CHECK(is_null(out[0], 2) && str_is(out[0], 3, "id002"));
    CHECK_EQ_INT(tl_array_i64(out[1])[0], 2);
    CHECK_EQ_INT(tl_array_i64(out[1])[1], 2);
    op->free(op);
    for (int c = 0; c < 2; c++) tl_array_release(out[c]);

    TlExprId keys[2] = {s, i};
    TlExprId qargs[2] = {i, lit_f64(&ea, 0.25)};
    TlExprId q = call_expr(&ea, TL_OP_QUANTILE, TL_TFLOAT64, qargs, 2, 0, 0);
    CHECK(tl_op_agg_new(source(&in, cols, 6, 1), &ea, keys, 2, &q, 1, &o2, &op,
                        &err) == TL_OK);
    CHECK_EQ_INT(run_op(op, out, 3, &st, &err), 5);
    CHECK(str_is(out[0], 4, "a key longer than twelve"));
    CHECK_EQ_INT(tl_array_i64(out[1])[4], 3);
    CHECK(tl_array_f64(out[2])[0] == 1.0);
    op->free(op);
    for (int c = 0; c < 3; c++) tl_array_release(out[c]);

    /* a quantile outside [0, 1] is a usage error with a caret */
    TlExprId bad[2] = {i, lit_f64(&ea, 1.5)};
    TlExprId qb = call_expr(&ea, TL_OP_QUANTILE, TL_TFLOAT64, bad, 2, 0, 0);
    CHECK(tl_op_agg_new(source(&in, cols, 6, 1), &ea, keys, 2, &qb, 1, &o2, &op,
                        &err) == TL_ERR_USAGE);
    CHECK(strstr(err.msg, "between 0 and 1") != NULL);

    for (int c = 0; c < 2; c++) tl_array_release(cols[c]);
    tl_schema_free(&in);
    tl_schema_free(&o1);
    tl_schema_free(&o2);
    tl_ea_free(&ea);
}

TL_TEST(op_no_keys_empty_input)
{
    TlError err = {0};
    TlExprArena ea;
    tl_ea_init(&ea, &err);
    TlSchema in = {0}, outs = {0};
    tl_schema_add(&in, "v", TL_TINT64, &err);
    tl_schema_add(&outs, "n", TL_TINT64, &err);
    tl_schema_add(&outs, "s", TL_TINT64, &err);
    tl_schema_add(&outs, "lo", TL_TINT64, &err);
    tl_schema_add(&outs, "m", TL_TFLOAT64, &err);
    TlArray *cols[1] = {ints(NULL, 0)};
    TlExprId v = col_expr(&ea, 0, TL_TINT64);
    TlExprId aggs[4] = {call_expr(&ea, TL_OP_COUNT, TL_TINT64, NULL, 0, 0, 0),
                        call_expr(&ea, TL_OP_SUM, TL_TINT64, &v, 1, 0, 0),
                        call_expr(&ea, TL_OP_MIN, TL_TINT64, &v, 1, 0, 0),
                        call_expr(&ea, TL_OP_MEAN, TL_TFLOAT64, &v, 1, 0, 0)};
    TlOperator *op = NULL;
    CHECK(tl_op_agg_new(source(&in, cols, 0, 5), &ea, NULL, 0, aggs, 4, &outs, &op,
                        &err) == TL_OK);
    TlArray *out[4];
    TlStatus st;
    CHECK_EQ_INT(run_op(op, out, 4, &st, &err), 1);
    CHECK_EQ_INT(tl_array_i64(out[0])[0], 0);
    CHECK(is_null(out[1], 0) && is_null(out[2], 0) && is_null(out[3], 0));
    op->free(op);
    for (int c = 0; c < 4; c++) tl_array_release(out[c]);

    /* with a key, empty input gives no rows */
    TlSchema o2 = {0};
    tl_schema_add(&o2, "v", TL_TINT64, &err);
    tl_schema_add(&o2, "n", TL_TINT64, &err);
    CHECK(tl_op_agg_new(source(&in, cols, 0, 5), &ea, &v, 1, aggs, 1, &o2, &op,
                        &err) == TL_OK);
    CHECK_EQ_INT(run_op(op, out, 2, &st, &err), 0);
    op->free(op);
    tl_schema_free(&o2);

    tl_array_release(cols[0]);
    tl_schema_free(&in);
    tl_schema_free(&outs);
    tl_ea_free(&ea);
}

TL_TEST(op_sum_overflow_message)
{
    TlError err = {0};
    TlExprArena ea;
    tl_ea_init(&ea, &err);
    uint16_t src;
    tl_ea_add_src(&ea, "total = sum(v)", "--agg", &src, &err);
    TlSchema in = {0}, outs = {0};
    tl_schema_add(&in, "v", TL_TINT64, &err);
    tl_schema_add(&outs, "total", TL_TINT64, &err);
    int64_t vv[] = {INT64_MAX, 1};
    TlArray *cols[1] = {ints(vv, 2)};
    TlExprId v = col_expr(&ea, 0, TL_TINT64);
    TlExprId s = call_expr(&ea, TL_OP_SUM, TL_TINT64, &v, 1, 8, 6);
    TlOperator *op = NULL;
    CHECK(tl_op_agg_new(source(&in, cols, 2, 1), &ea, NULL, 0, &s, 1, &outs, &op,
                        &err) == TL_OK);
    TlArray *out[1];
    TlStatus st;
    run_op(op, out, 1, &st, &err);
    CHECK(st == TL_ERR_DATA);
    CHECK(strstr(err.msg, "sum overflows int64") != NULL);
    CHECK(strstr(err.msg, "^^^^^^") != NULL);
    op->free(op);
    tl_array_release(cols[0]);
    tl_schema_free(&in);
    tl_schema_free(&outs);
    tl_ea_free(&ea);
}

int main(void)
{
    /* Small output batches: the aggregate operator's results come in
     * several slices of groups. */
    setenv("TALLY_BATCH_ROWS", "3", 1);
    TL_RUN(counts);
    TL_RUN(count_distinct);
    TL_RUN(sums_and_overflow);
    TL_RUN(mean_int_exact);
    TL_RUN(min_max);
    TL_RUN(first_last_keep_nulls);
    TL_RUN(quantiles);
    TL_RUN(quantile_large_groups);
    TL_RUN(std_var);
    TL_RUN(corr_covar);
    TL_RUN(string_agg_any_all);
    TL_RUN(rejects_bad_types);
    TL_RUN(several_batches);
    TL_RUN(op_group_by_int_key);
    TL_RUN(op_string_and_two_keys);
    TL_RUN(op_no_keys_empty_input);
    TL_RUN(op_sum_overflow_message);
    return tl_test_summary(__FILE__);
}
