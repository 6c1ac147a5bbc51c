/* run-unit: weight=28 */
/*
 * test_agg_merge.c -- the aggregate operator's morsel stage (op_agg.c):
 * the same group-by run serially (a plain batch source) and through a
 * staged source that runs the stage's work on every batch concurrently on
 * the thread pool, in any order, and hands the results back in batch
 * order, as the scan does.  Keys, counts, integer sums, min, max, first,
 * last, any, all, string_agg, count_distinct and quantiles must be equal,
 * and so must float sums, means and second-moment statistics, bit for bit
 * (they come from exact sums).  Two staged runs must agree bit for bit.  Batches of 1, 7,
 * 100 and 5000 rows reach both the partial path (few groups per batch) and
 * the direct path (nearly a group per row).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../lib/core/pool.h"
#include "../../lib/exec/agg.h"
#include "../../lib/plan/resolve.h"
#include "../../lib/exec/exec.h"
#include "../../lib/group/group.h"
#include "tl_test.h"
#include "tl_source.h"

/* ------------------------------------------------------ a staged source */

typedef struct Staged {
    Source src;
    TlStage stage;
    bool has_stage;
    void **results;
    TlStatus *status;
    TlError *errs;
    int n_res, pos;
    bool ran;
    int work_calls;
} Staged;

static TlStatus staged_set(TlOperator *op, const TlStage *stage, TlError *err)
{
    (void)err;
    Staged *s = (Staged *)op;
    s->stage = *stage;
    s->has_stage = true;
    return TL_OK;
}

static void staged_one(void *arg, int64_t i)
{
    Staged *s = arg;
    /* reverse order: results must not depend on the order of the work */
    int64_t b = s->n_res - 1 - i;
    TlBatch *bt = s->src.batches[s->src.pos + b];
    s->src.batches[s->src.pos + b] = NULL;
    s->status[b] = s->stage.work(s->stage.ctx, bt, &s->results[b], &s->errs[b]);
    __atomic_add_fetch(&s->work_calls, 1, __ATOMIC_RELAXED);
}

static TlStatus staged_next_result(TlOperator *op, void **result, TlError *err)
{
    Staged *s = (Staged *)op;
    *result = NULL;
    if (!s->ran) {
        s->ran = true;
        s->n_res = s->src.n - s->src.pos;
        s->results = tl_calloc((size_t)s->n_res + 1, sizeof *s->results);
        s->status = tl_calloc((size_t)s->n_res + 1, sizeof *s->status);
        s->errs = tl_calloc((size_t)s->n_res + 1, sizeof *s->errs);
        TL_TRY(tl_pool_for(s->n_res, staged_one, s, err));
        s->src.pos = s->src.n;
    }
    while (s->pos < s->n_res) {
        int i = s->pos++;
        if (s->status[i] != TL_OK) {
            *err = s->errs[i];
            return s->status[i];
        }
        if (s->results[i]) {
            *result = s->results[i];
            s->results[i] = NULL;
            return TL_OK;
        }
    }
    return TL_OK;
}

static void staged_free(TlOperator *op)
{
    Staged *s = (Staged *)op;
    for (int i = 0; i < s->n_res; i++)
        if (s->results[i]) s->stage.drop(s->stage.ctx, s->results[i]);
    tl_free(s->results);
    tl_free(s->status);
    tl_free(s->errs);
    for (int i = s->src.pos; i < s->src.n; i++) tl_batch_free(s->src.batches[i]);
    tl_free(s->src.batches);
    tl_free(s);
}

static int g_work_calls;

/* A source over cols in batches of `per` rows that offers set_stage. */
static TlOperator *staged_source(const TlSchema *schema, TlArray **cols, int64_t n,
                                 int64_t per)
{
    Source *plain = (Source *)source(schema, cols, n, per);
    Staged *s = tl_calloc(1, sizeof *s);
    s->src = *plain;
    tl_free(plain);
    s->src.base.free = staged_free;
    s->src.base.set_stage = staged_set;
    s->src.base.next_result = staged_next_result;
    return &s->src.base;
}

/* ------------------------------------------------------------ helpers */

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

static TlExprId call_expr(TlExprArena *ea, TlOp op, TlType t, const TlExprId *args,
                          uint32_t n)
{
    TlExpr e = {0};
    TlExprId id;
    TlError err;
    e.kind = TL_X_CALL;
    e.op = (uint16_t)op;
    e.type = (uint8_t)t;
    e.col = -1;
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

/* Run op to the end; out[c]: all output rows of column c. */
static int64_t run_op(TlOperator *op, TlArray **out, int n_cols, TlStatus *st,
                      TlError *err)
{
    int cap = 16, np = 0;
    TlArray ***parts = tl_calloc((size_t)n_cols, sizeof *parts);
    for (int c = 0; c < n_cols; c++) parts[c] = tl_calloc((size_t)cap, sizeof(TlArray *));
    int64_t rows = 0;
    for (;;) {
        TlBatch *b = NULL;
        *st = op->next(op, &b, err);
        if (*st != TL_OK || !b) break;
        if (np == cap) {
            cap *= 2;
            for (int c = 0; c < n_cols; c++)
                parts[c] = tl_realloc(parts[c], (size_t)cap * sizeof(TlArray *));
        }
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
    tl_free(parts);
    return rows;
}

static uint64_t rng;
static uint32_t rnd(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng >> 33);
}

/* ------------------------------------------------------------ the table */

enum { K_INT, K_STR, V_INT, V_FLT, V_FLT2, V_STR, V_BOOL, V_DATE, N_COLS };
static const TlType col_types[N_COLS] = {TL_TINT64, TL_TSTRING, TL_TINT64,
                                         TL_TFLOAT64, TL_TFLOAT64, TL_TSTRING,
                                         TL_TBOOL, TL_TDATE};

static void make_cols(TlArray **cols, int64_t n, uint32_t groups)
{
    TlBuilder b[N_COLS];
    for (int c = 0; c < N_COLS; c++) tl_builder_init(&b[c], col_types[c]);
    for (int64_t r = 0; r < n; r++) {
        uint32_t g = rnd() % groups;
        char buf[48];
        if (rnd() % 50 == 0) tl_builder_append_null(&b[K_INT]);
        else tl_builder_append_i64(&b[K_INT], (int64_t)(g % 37) - 5);
        if (rnd() % 50 == 0) {
            tl_builder_append_null(&b[K_STR]);
        } else {
            snprintf(buf, sizeof buf, g % 2 ? "k%u" : "a-longer-key-%u", g);
            tl_builder_append_str(&b[K_STR], buf, strlen(buf));
        }
        bool null = rnd() % 8 == 0;
        if (null) tl_builder_append_null(&b[V_INT]);
        else tl_builder_append_i64(&b[V_INT], (int64_t)(rnd() % 2000001) - 1000000);
        double f = (double)rnd() / 2147483648.0 * 200.0 - 100.0;
        if (rnd() % 8 == 0) tl_builder_append_null(&b[V_FLT]);
        else tl_builder_append_f64(&b[V_FLT], r % 97 == 0 ? -0.0 : f);
        if (rnd() % 8 == 0) tl_builder_append_null(&b[V_FLT2]);
        else tl_builder_append_f64(&b[V_FLT2], 0.5 * f + (double)(rnd() % 1000) / 50.0);
        if (rnd() % 8 == 0) {
            tl_builder_append_null(&b[V_STR]);
        } else {
            unsigned some = rnd() % 3, v = rnd() % 40;
            if (some) snprintf(buf, sizeof buf, "s%u", v);
            else buf[0] = '\0';
            tl_builder_append_str(&b[V_STR], buf, strlen(buf));
        }
        if (rnd() % 8 == 0) tl_builder_append_null(&b[V_BOOL]);
        else tl_builder_append_bool(&b[V_BOOL], rnd() % 4 != 0);
        if (rnd() % 8 == 0) tl_builder_append_null(&b[V_DATE]);
        else tl_builder_append_i32(&b[V_DATE], (int32_t)(rnd() % 500) - 100);
    }
    for (int c = 0; c < N_COLS; c++) cols[c] = tl_builder_finish(&b[c]);
}

/* The aggregates: every function, over several argument types. */
typedef struct Call {
    TlOp op;
    int x, y;
    double q;
} Call;

static const Call calls[] = {
    {TL_OP_COUNT, -1, -1, 0}, {TL_OP_COUNT, V_FLT, -1, 0},
    {TL_OP_SUM, V_INT, -1, 0}, {TL_OP_SUM, V_FLT, -1, 0},
    {TL_OP_MEAN, V_INT, -1, 0}, {TL_OP_MEAN, V_FLT, -1, 0},
    {TL_OP_MEAN, V_DATE, -1, 0},
    {TL_OP_MIN, V_INT, -1, 0}, {TL_OP_MAX, V_INT, -1, 0},
    {TL_OP_MIN, V_FLT, -1, 0}, {TL_OP_MAX, V_FLT, -1, 0},
    {TL_OP_MIN, V_STR, -1, 0}, {TL_OP_MAX, V_STR, -1, 0},
    {TL_OP_MIN, V_DATE, -1, 0}, {TL_OP_MAX, V_BOOL, -1, 0},
    {TL_OP_FIRST, V_INT, -1, 0}, {TL_OP_LAST, V_INT, -1, 0},
    {TL_OP_FIRST, V_FLT, -1, 0}, {TL_OP_LAST, V_FLT, -1, 0},
    {TL_OP_FIRST, V_STR, -1, 0}, {TL_OP_LAST, V_STR, -1, 0},
    {TL_OP_FIRST, V_BOOL, -1, 0}, {TL_OP_LAST, V_DATE, -1, 0},
    {TL_OP_ANY, V_BOOL, -1, 0}, {TL_OP_ALL, V_BOOL, -1, 0},
    {TL_OP_STRING_AGG, V_STR, -1, 0},
    {TL_OP_COUNT_DISTINCT, V_STR, -1, 0}, {TL_OP_COUNT_DISTINCT, V_INT, -1, 0},
    {TL_OP_MEDIAN, V_FLT, -1, 0.5}, {TL_OP_QUANTILE, V_INT, -1, 0.9},
    {TL_OP_MEDIAN, V_DATE, -1, 0.5},
    {TL_OP_STD, V_FLT, -1, 0}, {TL_OP_VAR, V_INT, -1, 0},
    {TL_OP_CORR, V_FLT, V_FLT2, 0}, {TL_OP_COVAR, V_FLT, V_FLT2, 0},
};
#define N_CALLS ((int)(sizeof calls / sizeof calls[0]))

/* The calls of the next queries: all of them, or only those a
 * pre-aggregated morsel of the radix path can take (no quantiles, no
 * count_distinct: then the radix path pre-aggregates morsels with few
 * groups). */
static const Call *g_calls = calls;
static int g_n_calls = N_CALLS;
static Call g_merge_calls[N_CALLS];

static void use_calls(bool mergeable_only)
{
    g_calls = calls;
    g_n_calls = N_CALLS;
    if (!mergeable_only) return;
    int n = 0;
    for (int j = 0; j < N_CALLS; j++)
        if (tl_agg_merge_some_ok(calls[j].op)) g_merge_calls[n++] = calls[j];
    g_calls = g_merge_calls;
    g_n_calls = n;
}

typedef struct Query {
    TlExprArena ea;
    TlSchema in, out;
    TlExprId keys[2];
    int n_keys;
    TlExprId aggs[N_CALLS];
} Query;

static void query_init(Query *q, const int *key_cols, int n_keys)
{
    TlError err = {0};
    memset(q, 0, sizeof *q);
    tl_ea_init(&q->ea, &err);
    for (int c = 0; c < N_COLS; c++) {
        char name[16];
        snprintf(name, sizeof name, "c%d", c);
        tl_schema_add(&q->in, name, col_types[c], &err);
    }
    q->n_keys = n_keys;
    for (int k = 0; k < n_keys; k++) {
        q->keys[k] = col_expr(&q->ea, key_cols[k], col_types[key_cols[k]]);
        char name[16];
        snprintf(name, sizeof name, "k%d", k);
        tl_schema_add(&q->out, name, col_types[key_cols[k]], &err);
    }
    for (int j = 0; j < g_n_calls; j++) {
        const Call *c = &g_calls[j];
        TlExprId args[2];
        uint32_t na = 0;
        TlType xt = TL_TNULL;
        if (c->x >= 0) {
            xt = col_types[c->x];
            args[na++] = col_expr(&q->ea, c->x, xt);
        }
        if (c->y >= 0) args[na++] = col_expr(&q->ea, c->y, col_types[c->y]);
        if (c->op == TL_OP_QUANTILE) args[na++] = lit_f64(&q->ea, c->q);
        TlType rt = c->x < 0 ? TL_TINT64 : tl_agg_result_type(c->op, xt);
        q->aggs[j] = call_expr(&q->ea, c->op, rt, args, na);
        char name[16];
        snprintf(name, sizeof name, "a%d", j);
        tl_schema_add(&q->out, name, rt, &err);
    }
}

static void query_free(Query *q)
{
    tl_ea_free(&q->ea);
    tl_schema_free(&q->in);
    tl_schema_free(&q->out);
}

/* Run q over cols in batches of per: staged or serial.  Returns rows. */
static int64_t run_query(Query *q, TlArray **cols, int64_t n, int64_t per,
                         bool staged, TlArray **out, TlStatus *st, TlError *err)
{
    TlOperator *src = staged ? staged_source(&q->in, cols, n, per)
                             : source(&q->in, cols, n, per);
    TlOperator *op = NULL;
    Staged *sg = staged ? (Staged *)src : NULL;
    *st = tl_op_agg_new(src, &q->ea, q->keys, q->n_keys, q->aggs, g_n_calls, &q->out,
                        &op, err);
    if (*st != TL_OK) return -1;
    int64_t rows = run_op(op, out, q->n_keys + g_n_calls, st, err);
    if (sg) g_work_calls += sg->work_calls;
    op->free(op);
    return rows;
}

static bool same_value(const TlArray *a, const TlArray *b, int64_t i, TlOp op)
{
    bool va = tl_array_valid(a, i), vb = tl_array_valid(b, i);
    if (va != vb) return false;
    if (!va) return true;
    switch (a->type) {
    case TL_TINT64: case TL_TTIMESTAMP: return tl_array_i64(a)[i] == tl_array_i64(b)[i];
    case TL_TDATE: return tl_array_i32(a)[i] == tl_array_i32(b)[i];
    case TL_TBOOL: return tl_array_bool(a, i) == tl_array_bool(b, i);
    case TL_TSTRING: {
        const TlView *x = &tl_array_views(a)[i], *y = &tl_array_views(b)[i];
        return x->in.len == y->in.len &&
               memcmp(tl_view_ptr(x, a->data), tl_view_ptr(y, b->data), x->in.len) == 0;
    }
    case TL_TFLOAT64: {
        double x = tl_array_f64(a)[i], y = tl_array_f64(b)[i];
        /* every float result is the same bits however the rows were split
         * and merged: sums, means and the moments come from exact sums */
        return memcmp(&x, &y, 8) == 0 || (x != x && y != y);
    }
    default:
        return false;
    }
}

static int n_reported;

/* Compare two results column by column; bitwise: every float too. */
static int64_t compare(const Query *q, TlArray **a, TlArray **b, int64_t rows,
                       bool bitwise)
{
    int64_t bad = 0;
    for (int c = 0; c < q->n_keys + g_n_calls; c++) {
        if (!a[c] || !b[c]) {
            bad += rows > 0;
            continue;
        }
        TlOp op = c < q->n_keys ? TL_OP_COUNT : g_calls[c - q->n_keys].op;
        for (int64_t i = 0; i < rows; i++) {
            bool ok = bitwise ? same_value(a[c], b[c], i, TL_OP_MIN)
                              : same_value(a[c], b[c], i, op);
            if (!ok) {
                if (n_reported++ < 8) {
                    fprintf(stderr, "  column %d (%s) row %lld differs", c,
                            c < q->n_keys ? "key" : tl_op_info(op)->name,
                            (long long)i);
                    if (a[c]->type == TL_TFLOAT64)
                        fprintf(stderr, ": %a vs %a", tl_array_f64(a[c])[i],
                                tl_array_f64(b[c])[i]);
                    fprintf(stderr, "\n");
                }
                bad++;
                break;
            }
        }
    }
    return bad;
}

static void release_all(TlArray **a, int n)
{
    for (int c = 0; c < n; c++) tl_array_release(a[c]);
}

static void check_query(const int *key_cols, int n_keys, int64_t n, uint32_t groups,
                        int64_t per)
{
    Query q;
    TlArray *cols[N_COLS];
    TlArray *ser[2 + N_CALLS] = {0}, *st1[2 + N_CALLS] = {0}, *st2[2 + N_CALLS] = {0};
    TlError err = {0};
    TlStatus st;
    make_cols(cols, n, groups);
    query_init(&q, key_cols, n_keys);
    int nc = n_keys + g_n_calls;
    int64_t r0 = run_query(&q, cols, n, per, false, ser, &st, &err);
    CHECK(st == TL_OK);
    int64_t r1 = run_query(&q, cols, n, per, true, st1, &st, &err);
    CHECK(st == TL_OK);
    int64_t r2 = run_query(&q, cols, n, per, true, st2, &st, &err);
    CHECK(st == TL_OK);
    CHECK_EQ_INT(r1, r0);
    CHECK_EQ_INT(r2, r0);
    if (r0 == r1 && r0 == r2) {
        CHECK_EQ_INT(compare(&q, st1, ser, r0, false), 0);
        CHECK_EQ_INT(compare(&q, st1, st2, r0, true), 0);
    }
    /* the radix path without pre-aggregation: rows reach every state in
     * input order, so every result equals the serial one bit for bit
     * (std, var, corr, covar, float sums and means too) */
    TlArray *st3[2 + N_CALLS] = {0}, *st4[2 + N_CALLS] = {0}, *st5[2 + N_CALLS] = {0};
    setenv("TALLY_AGG_PRE", "0", 1);
    int64_t r3 = run_query(&q, cols, n, per, true, st3, &st, &err);
    CHECK(st == TL_OK);
    /* every morsel pre-aggregated (where the calls allow) */
    setenv("TALLY_AGG_PRE", "1", 1);
    int64_t r4 = run_query(&q, cols, n, per, true, st4, &st, &err);
    CHECK(st == TL_OK);
    int64_t r5 = run_query(&q, cols, n, per, true, st5, &st, &err);
    CHECK(st == TL_OK);
    unsetenv("TALLY_AGG_PRE");
    CHECK_EQ_INT(r3, r0);
    CHECK_EQ_INT(r4, r0);
    CHECK_EQ_INT(r5, r0);
    if (r3 == r0 && r4 == r0 && r5 == r0) {
        /* (no keys: the staged path combines per-morsel partials) */
        CHECK_EQ_INT(compare(&q, st3, ser, r0, n_keys > 0), 0);
        CHECK_EQ_INT(compare(&q, st4, ser, r0, false), 0);
        CHECK_EQ_INT(compare(&q, st4, st5, r0, true), 0);
    }
    release_all(st3, nc);
    release_all(st4, nc);
    release_all(st5, nc);
    release_all(ser, nc);
    release_all(st1, nc);
    release_all(st2, nc);
    release_all(cols, N_COLS);
    query_free(&q);
}

/* ------------------------------------------------------------ the tests */

TL_TEST(staged_equals_serial)
{
    static const int k_int[] = {K_INT}, k_str[] = {K_STR}, k_two[] = {K_STR, K_INT};
    rng = 11;
    int64_t pers[] = {1, 7, 100, 5000};
    /* rows and groups: a third under ASan (tl_test_scaled); 1-row batches
     * of 1,000 rows are still a thousand morsels */
    long r3 = tl_test_scaled(3000, 3), r4 = tl_test_scaled(4000, 3), r2 = tl_test_scaled(2000, 3);
    for (int m = 0; m < 2; m++) {
        use_calls(m == 1);
        for (int p = m; p < 4; p++) { /* (1-row batches once) */
            check_query(k_int, 1, r3, 50, pers[p]);
            check_query(k_str, 1, r3, r2, pers[p]);
            check_query(k_two, 2, r4, 300, pers[p]);
            check_query(NULL, 0, r2, 1, pers[p]);
        }
        if (m == 0) /* mostly direct */
            check_query(k_two, 2, tl_test_scaled(60000, 3), tl_test_scaled(40000, 3), 4096);
        check_query(k_int, 1, 0, 1, 10);          /* empty input */
        check_query(NULL, 0, 0, 1, 10);
    }
    use_calls(false);
    CHECK(g_work_calls > 0);
}

/* A sum that leaves int64 across morsels fails at the end, naming the
 * group, also through the stage. */
TL_TEST(staged_sum_overflow)
{
    TlError err = {0};
    TlExprArena ea;
    tl_ea_init(&ea, &err);
    TlSchema in = {0}, outs = {0};
    tl_schema_add(&in, "k", TL_TINT64, &err);
    tl_schema_add(&in, "v", TL_TINT64, &err);
    tl_schema_add(&outs, "k", TL_TINT64, &err);
    tl_schema_add(&outs, "s", TL_TINT64, &err);
    TlBuilder kb, vb;
    tl_builder_init(&kb, TL_TINT64);
    tl_builder_init(&vb, TL_TINT64);
    for (int i = 0; i < 6; i++) {
        tl_builder_append_i64(&kb, i % 2 ? 7 : 8);
        tl_builder_append_i64(&vb, i % 2 ? INT64_MAX / 2 : 1);
    }
    TlArray *cols[2] = {tl_builder_finish(&kb), tl_builder_finish(&vb)};
    TlExprId k = col_expr(&ea, 0, TL_TINT64), v = col_expr(&ea, 1, TL_TINT64);
    TlExprId s = call_expr(&ea, TL_OP_SUM, TL_TINT64, &v, 1);
    TlOperator *op = NULL;
    CHECK(tl_op_agg_new(staged_source(&in, cols, 6, 2), &ea, &k, 1, &s, 1, &outs, &op,
                        &err) == TL_OK);
    TlArray *out[2] = {0};
    TlStatus st;
    run_op(op, out, 2, &st, &err);
    CHECK(st == TL_ERR_DATA);
    CHECK(strstr(err.msg, "sum overflows int64 in group k=7") != NULL);
    op->free(op);
    release_all(out, 2);
    release_all(cols, 2);
    tl_schema_free(&in);
    tl_schema_free(&outs);
    tl_ea_free(&ea);
}

/* Many groups overflow, spread over the radix partitions: the error names
 * the one the serial path names, the first in output order (key 13, then
 * keys 0..39 in order, each overflowing). */
TL_TEST(staged_overflow_first_group)
{
    TlError err = {0};
    TlExprArena ea;
    tl_ea_init(&ea, &err);
    TlSchema in = {0}, outs = {0};
    tl_schema_add(&in, "k", TL_TINT64, &err);
    tl_schema_add(&in, "v", TL_TINT64, &err);
    tl_schema_add(&outs, "k", TL_TINT64, &err);
    tl_schema_add(&outs, "s", TL_TINT64, &err);
    TlBuilder kb, vb;
    tl_builder_init(&kb, TL_TINT64);
    tl_builder_init(&vb, TL_TINT64);
    tl_builder_append_i64(&kb, 13);
    tl_builder_append_i64(&vb, 1);
    for (int r = 0; r < 3; r++)
        for (int i = 39; i >= 0; i--) {
            tl_builder_append_i64(&kb, i);
            tl_builder_append_i64(&vb, INT64_MAX / 2);
        }
    TlArray *cols[2] = {tl_builder_finish(&kb), tl_builder_finish(&vb)};
    TlExprId k = col_expr(&ea, 0, TL_TINT64), v = col_expr(&ea, 1, TL_TINT64);
    TlExprId s = call_expr(&ea, TL_OP_SUM, TL_TINT64, &v, 1);
    const char *modes[] = {NULL, "0", "1"};
    for (int m = 0; m < 3; m++)
        for (int per = 1; per <= 64; per *= 4) {
            if (modes[m]) setenv("TALLY_AGG_PRE", modes[m], 1);
            TlOperator *op = NULL;
            bool staged = per > 1 || m > 0;
            TlOperator *src = staged ? staged_source(&in, cols, 121, per)
                                     : source(&in, cols, 121, per);
            CHECK(tl_op_agg_new(src, &ea, &k, 1, &s, 1, &outs, &op, &err) == TL_OK);
            TlArray *out[2] = {0};
            TlStatus st;
            run_op(op, out, 2, &st, &err);
            CHECK(st == TL_ERR_DATA);
            CHECK(strstr(err.msg, "sum overflows int64 in group k=13") != NULL);
            op->free(op);
            release_all(out, 2);
            unsetenv("TALLY_AGG_PRE");
        }
    release_all(cols, 2);
    tl_schema_free(&in);
    tl_schema_free(&outs);
    tl_ea_free(&ea);
}

/* tl_agg_merge_some: merging a partial's groups in two subsets into two
 * aggregates gives what merging all of them into one gives; quantiles
 * refuse (they merge whole). */
TL_TEST(merge_some)
{
    TlError err = {0};
    TlOp ops[] = {TL_OP_SUM, TL_OP_FIRST, TL_OP_LAST, TL_OP_STRING_AGG, TL_OP_MIN,
                  TL_OP_COUNT, TL_OP_STD};
    for (int o = 0; o < (int)(sizeof ops / sizeof ops[0]); o++) {
        TlAggSpec spec = {0};
        spec.op = ops[o];
        spec.x_type = ops[o] == TL_OP_STRING_AGG ? TL_TSTRING : TL_TINT64;
        spec.out_type = ops[o] == TL_OP_STRING_AGG ? TL_TSTRING
                        : ops[o] == TL_OP_STD      ? TL_TFLOAT64
                                                   : TL_TINT64;
        TlBuilder xb;
        tl_builder_init(&xb, spec.x_type);
        uint32_t lids[12];
        for (int i = 0; i < 12; i++) {
            lids[i] = (uint32_t)(i * 5 % 4);
            if (spec.x_type == TL_TSTRING) {
                char buf[16];
                snprintf(buf, sizeof buf, "v%d", i);
                tl_builder_append_str(&xb, buf, strlen(buf));
            } else {
                tl_builder_append_i64(&xb, i * 3 - 7);
            }
        }
        TlArray *x = tl_builder_finish(&xb);
        TlAgg *p = NULL, *whole = NULL, *pa = NULL, *pb = NULL;
        CHECK(tl_agg_new(&spec, &p, &err) == TL_OK);
        CHECK(tl_agg_new(&spec, &whole, &err) == TL_OK);
        CHECK(tl_agg_new(&spec, &pa, &err) == TL_OK);
        CHECK(tl_agg_new(&spec, &pb, &err) == TL_OK);
        CHECK(tl_agg_update(p, lids, 12, 4, x, NULL, &err) == TL_OK);
        /* twice, so the targets hold something already */
        uint32_t map[4] = {0, 1, 2, 3};
        uint32_t sa[2] = {0, 2}, da[2] = {0, 1}, sb[2] = {1, 3}, db[2] = {0, 1};
        for (int t = 0; t < 2; t++) {
            CHECK(tl_agg_merge(whole, p, map, 4, 4, &err) == TL_OK);
            CHECK(tl_agg_merge_some(pa, p, sa, da, 2, 2, &err) == TL_OK);
            CHECK(tl_agg_merge_some(pb, p, sb, db, 2, 2, &err) == TL_OK);
        }
        TlArray *rw = NULL, *ra = NULL, *rb = NULL;
        CHECK(tl_agg_finish(whole, 4, &rw, &err) == TL_OK);
        CHECK(tl_agg_finish(pa, 2, &ra, &err) == TL_OK);
        CHECK(tl_agg_finish(pb, 2, &rb, &err) == TL_OK);
        if (rw && ra && rb) {
            for (int g = 0; g < 4; g++) {
                const TlArray *r = g % 2 ? rb : ra;
                int64_t i = g / 2;
                bool same = tl_array_valid(rw, g) == tl_array_valid(r, i);
                if (same && tl_array_valid(rw, g)) {
                    if (rw->type == TL_TSTRING) {
                        const TlView *vw = &tl_array_views(rw)[g], *vr = &tl_array_views(r)[i];
                        same = vw->in.len == vr->in.len &&
                               memcmp(tl_view_ptr(vw, rw->data), tl_view_ptr(vr, r->data),
                                      vw->in.len) == 0;
                    } else if (rw->type == TL_TFLOAT64) {
                        same = tl_array_f64(rw)[g] == tl_array_f64(r)[i];
                    } else {
                        same = tl_array_i64(rw)[g] == tl_array_i64(r)[i];
                    }
                }
                CHECK(same);
            }
        }
        tl_array_release(rw);
        tl_array_release(ra);
        tl_array_release(rb);
        tl_agg_free(p);
        tl_agg_free(whole);
        tl_agg_free(pa);
        tl_agg_free(pb);
        tl_array_release(x);
    }
    CHECK(tl_agg_merge_some_ok(TL_OP_SUM));
    CHECK(!tl_agg_merge_some_ok(TL_OP_MEDIAN));
    CHECK(!tl_agg_merge_some_ok(TL_OP_QUANTILE));
    CHECK(!tl_agg_merge_some_ok(TL_OP_COUNT_DISTINCT));
    TlAggSpec ms = {0};
    ms.op = TL_OP_MEDIAN;
    ms.x_type = TL_TFLOAT64;
    ms.out_type = TL_TFLOAT64;
    ms.q = 0.5;
    TlAgg *m1 = NULL, *m2 = NULL;
    CHECK(tl_agg_new(&ms, &m1, &err) == TL_OK);
    CHECK(tl_agg_new(&ms, &m2, &err) == TL_OK);
    uint32_t z = 0;
    CHECK(tl_agg_merge_some(m1, m2, &z, &z, 1, 1, &err) == TL_ERR_USAGE);
    tl_agg_free(m1);
    tl_agg_free(m2);
}

/* --sorted keeps the serial run path (no stage) and its error. */
TL_TEST(sorted_stays_serial)
{
    TlError err = {0};
    TlExprArena ea;
    tl_ea_init(&ea, &err);
    TlSchema in = {0}, outs = {0};
    tl_schema_add(&in, "k", TL_TINT64, &err);
    tl_schema_add(&outs, "k", TL_TINT64, &err);
    tl_schema_add(&outs, "n", TL_TINT64, &err);
    TlBuilder kb;
    tl_builder_init(&kb, TL_TINT64);
    int64_t kv[] = {1, 1, 2, 2, 1};
    for (int i = 0; i < 5; i++) tl_builder_append_i64(&kb, kv[i]);
    TlArray *cols[1] = {tl_builder_finish(&kb)};
    TlExprId k = col_expr(&ea, 0, TL_TINT64);
    TlExprId c = call_expr(&ea, TL_OP_COUNT, TL_TINT64, NULL, 0);
    TlOperator *src = staged_source(&in, cols, 5, 2), *op = NULL;
    CHECK(tl_op_agg_new(src, &ea, &k, 1, &c, 1, &outs, &op, &err) == TL_OK);
    tl_op_agg_set_sorted(op, true);
    TlArray *out[2] = {0};
    TlStatus st;
    run_op(op, out, 2, &st, &err);
    CHECK(st == TL_ERR_DATA);
    CHECK(strstr(err.msg, "reappears at row 5") != NULL);
    CHECK(!((Staged *)src)->has_stage);
    op->free(op);
    release_all(out, 2);
    release_all(cols, 1);
    tl_schema_free(&in);
    tl_schema_free(&outs);
    tl_ea_free(&ea);
}

/* tl_grouper_seal_local + tl_grouper_merge: new groups in local order with
 * the local first rows' keys, known groups found; the rows grouper's fast
 * path and the generic one; a local grouper of another kind is refused. */
TL_TEST(grouper_merge)
{
    TlError err = {0};
    TlType t2[2] = {TL_TINT64, TL_TINT64};
    for (int kind = 0; kind < 2; kind++) {
        TlGrouper *g = NULL, *l1 = NULL, *l2 = NULL;
        TlStatus (*mk)(const TlType *, int, bool, TlGrouper **, TlError *) =
            kind ? tl_group_rows_new : tl_group_fixed_new;
        CHECK(mk(t2, 2, true, &g, &err) == TL_OK);
        CHECK(mk(t2, 2, true, &l1, &err) == TL_OK);
        CHECK(mk(t2, 2, true, &l2, &err) == TL_OK);
        int64_t a1[] = {5, 6, 5}, b1[] = {1, 1, 1};
        int64_t a2[] = {7, 5, 7, 8}, b2[] = {0, 1, 0, 0};
        TlBuilder b;
        TlArray *k1[2], *k2[2];
        const int64_t *src1[2] = {a1, b1}, *src2[2] = {a2, b2};
        for (int k = 0; k < 2; k++) {
            tl_builder_init(&b, TL_TINT64);
            for (int i = 0; i < 3; i++) tl_builder_append_i64(&b, src1[k][i]);
            k1[k] = tl_builder_finish(&b);
            tl_builder_init(&b, TL_TINT64);
            for (int i = 0; i < 4; i++) tl_builder_append_i64(&b, src2[k][i]);
            k2[k] = tl_builder_finish(&b);
        }
        uint32_t ids[4], map[4];
        CHECK(tl_grouper_map(l1, (const TlArray *const *)k1, 3, ids, &err) == TL_OK);
        CHECK(tl_grouper_map(l2, (const TlArray *const *)k2, 4, ids, &err) == TL_OK);
        CHECK(tl_grouper_seal_local(l1, &err) == TL_OK);
        CHECK(tl_grouper_seal_local(l2, &err) == TL_OK);
        CHECK(tl_grouper_merge(g, l1, map, &err) == TL_OK);
        CHECK(map[0] == 0 && map[1] == 1);
        CHECK(tl_grouper_merge(g, l2, map, &err) == TL_OK);
        CHECK(map[0] == 2 && map[1] == 0 && map[2] == 3);
        CHECK_EQ_INT(tl_grouper_count(g), 4);
        TlArray *out[2] = {0};
        CHECK(tl_grouper_keys(g, 0, 4, out, &err) == TL_OK);
        CHECK(out[0] && tl_array_i64(out[0])[2] == 7 && tl_array_i64(out[0])[3] == 8);
        release_all(out, 2);
        release_all(k1, 2);
        release_all(k2, 2);
        tl_grouper_free(l1);
        tl_grouper_free(l2);
        tl_grouper_free(g);
    }
    /* a local grouper of another kind: refused, not misread */
    TlGrouper *g = NULL, *l = NULL;
    CHECK(tl_group_fixed_new(t2, 2, true, &g, &err) == TL_OK);
    CHECK(tl_group_rows_new(t2, 2, true, &l, &err) == TL_OK);
    TlBuilder b;
    tl_builder_init(&b, TL_TINT64);
    tl_builder_append_i64(&b, 1);
    TlArray *k = tl_builder_finish(&b), *ks[2] = {k, k};
    uint32_t id, map[1];
    CHECK(tl_grouper_map(l, (const TlArray *const *)ks, 1, &id, &err) == TL_OK);
    CHECK(tl_grouper_merge(g, l, map, &err) == TL_ERR_DATA);
    CHECK(strstr(err.msg, "internal") != NULL);
    tl_array_release(k);
    tl_grouper_free(l);
    tl_grouper_free(g);
}

int main(void)
{
    tl_pool_configure(4);
    TL_RUN(staged_equals_serial);
    TL_RUN(staged_sum_overflow);
    TL_RUN(staged_overflow_first_group);
    TL_RUN(merge_some);
    TL_RUN(sorted_stays_serial);
    TL_RUN(grouper_merge);
    tl_pool_shutdown();
    return tl_test_summary(__FILE__);
}
