/* run-unit: weight=28 */
/*
 * test_join.c -- the hash join operator against a nested-loop reference.
 *
 * Random tables (seeded xorshift) with 1..3 key columns of type int, string
 * or float (and int on the left with float on the right), nulls in keys,
 * duplicates on both sides, skewed keys, empty sides, fed to the operator
 * in batches of random sizes through an in-memory source operator.  Every
 * row carries its row number (lv / rv), so the output reduces to a list of
 * (left row, right row) pairs, -1 for a missing side; it must equal the
 * reference's list exactly, order included (left rows in order, each with
 * its matches in right order, then unmatched right rows in right order).
 * TALLY_BATCH_ROWS is set small so output batches split inside a left row's
 * matches.  Every test runs building on the right, then on the left, and
 * with plain sources, then with sources that take a stage (TlStage, as a
 * scan does) and run it over all their batches at once on the pool, so
 * probes run concurrently.  main runs the whole set in forked children with
 * 1, 2, 3 and 8 pool threads (tl_pool_configure works before the pool
 * starts only): the results must be the same exact lists every time.
 */
#include "../../lib/core/pool.h"
#include "../../lib/exec/join_table.h"
#include "../../lib/exec/ops.h"
#include "../../lib/plan/plan.h"
#include "tl_test.h"

#include <math.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static int rndn(int n) { return (int)(rnd() % (uint64_t)n); }

/* ------------------------------------------------------------ source */

typedef struct Src {
    TlOperator base;
    TlBatch **b;
    int n, i;
    /* staged: results of the stage per batch, made at the first pull */
    bool has_stage, ran;
    TlStage stage;
    void **res;
    TlStatus *st;
    TlError *errs;
} Src;

static bool use_stage; /* sources offer set_stage */

static TlStatus src_next(TlOperator *op, TlBatch **out, TlError *err)
{
    Src *s = (Src *)op;
    if (s->has_stage)
        return tl_error(err, TL_ERR_DATA, "test: staged source pulled as batches");
    *out = s->i < s->n ? s->b[s->i++] : NULL;
    return TL_OK;
}

static TlStatus src_set_stage(TlOperator *op, const TlStage *stage, TlError *err)
{
    Src *s = (Src *)op;
    if (s->has_stage || s->i > 0)
        return tl_error(err, TL_ERR_DATA, "test: stage set late or twice");
    s->stage = *stage;
    s->has_stage = true;
    return TL_OK;
}

static void src_work(void *arg, int64_t i)
{
    Src *s = arg;
    TlBatch *b = s->b[i];
    s->b[i] = NULL;
    s->st[i] = s->stage.work(s->stage.ctx, b, &s->res[i], &s->errs[i]);
}

/* Every batch through the stage at once on the pool, then in order. */
static TlStatus src_next_result(TlOperator *op, void **result, TlError *err)
{
    Src *s = (Src *)op;
    *result = NULL;
    if (!s->has_stage)
        return tl_error(err, TL_ERR_DATA, "test: next_result without a stage");
    if (!s->ran) {
        s->ran = true;
        s->res = tl_calloc((size_t)(s->n ? s->n : 1), sizeof *s->res);
        s->st = tl_calloc((size_t)(s->n ? s->n : 1), sizeof *s->st);
        s->errs = tl_calloc((size_t)(s->n ? s->n : 1), sizeof *s->errs);
        if (!s->res || !s->st || !s->errs) {
            s->i = s->n; /* the batches are freed with the source */
            return tl_error_oom(err);
        }
        TL_TRY(tl_pool_for(s->n, src_work, s, err));
    }
    while (s->i < s->n) {
        int i = s->i++;
        if (s->st[i] != TL_OK) {
            *err = s->errs[i];
            return s->st[i];
        }
        *result = s->res[i];
        s->res[i] = NULL;
        if (*result) return TL_OK;
    }
    return TL_OK;
}

static void src_free(TlOperator *op)
{
    Src *s = (Src *)op;
    for (int i = 0; i < s->n; i++) {
        if (s->ran && s->res && s->res[i]) s->stage.drop(s->stage.ctx, s->res[i]);
        if (i >= s->i || s->ran) tl_batch_free(s->b[i]);
    }
    tl_free(s->b);
    tl_free(s->res);
    tl_free(s->st);
    tl_free(s->errs);
    tl_free(s);
}

/* A table: n_cols columns of n rows as whole arrays, its schema. */
typedef struct Table {
    TlSchema schema;
    TlArray **cols;
    int n_cols;
    int64_t n;
} Table;

/* A source over t in batches of random sizes (1..9 rows). */
static TlOperator *src_new(const Table *t, TlExecStats *stats)
{
    Src *s = tl_calloc(1, sizeof *s);
    int cap = 0;
    s->base.next = src_next;
    s->base.free = src_free;
    if (use_stage) {
        s->base.set_stage = src_set_stage;
        s->base.next_result = src_next_result;
    }
    s->base.schema = &t->schema;
    s->base.stats = stats;
    for (int64_t off = 0; off < t->n;) {
        int64_t len = 1 + rndn(9);
        if (len > t->n - off) len = t->n - off;
        TlBatch *b = tl_batch_new(&t->schema, t->n_cols, len);
        for (int c = 0; c < t->n_cols; c++)
            b->cols[c] = tl_array_slice(t->cols[c], off, len);
        if (s->n == cap) {
            cap = cap ? cap * 2 : 8;
            s->b = tl_realloc(s->b, (size_t)cap * sizeof *s->b);
        }
        s->b[s->n++] = b;
        off += len;
    }
    return &s->base;
}

static void table_free(Table *t)
{
    for (int c = 0; c < t->n_cols; c++) tl_array_release(t->cols[c]);
    tl_free(t->cols);
    tl_schema_free(&t->schema);
}

/* ---------------------------------------------------------- the data */

enum { KINT, KSTR, KFLOAT };

/* Key value v (small domain) as written into a column of kind k. */
static void append_key(TlBuilder *b, int kind, int v, bool null)
{
    char s[32];
    if (null) {
        tl_builder_append_null(b);
        return;
    }
    switch (kind) {
    case KINT: tl_builder_append_i64(b, v); break;
    case KFLOAT: tl_builder_append_f64(b, v == 0 && rndn(2) ? -0.0 : (double)v); break;
    default:
        /* long strings too, so views point out of line */
        snprintf(s, sizeof s, v % 3 ? "k%d" : "a-long-key-number-%d", v);
        tl_builder_append_str(b, s, strlen(s));
    }
}

static TlType kind_type(int kind)
{
    return kind == KINT ? TL_TINT64 : kind == KFLOAT ? TL_TFLOAT64 : TL_TSTRING;
}

/* keys[i][row]: -1 null, else the domain value (for the reference). */
static void make_table(Table *t, int64_t n, int n_keys, const int *kinds,
                       int domain, bool skew, int null_pct, const char *pfx,
                       int **keys)
{
    TlError err;
    memset(t, 0, sizeof *t);
    t->n = n;
    t->n_cols = n_keys + 1;
    t->cols = tl_calloc((size_t)t->n_cols, sizeof *t->cols);
    for (int k = 0; k < n_keys; k++) {
        char name[16];
        TlBuilder b;
        snprintf(name, sizeof name, "%sk%d", pfx, k);
        tl_schema_add(&t->schema, name, kind_type(kinds[k]), &err);
        tl_builder_init(&b, kind_type(kinds[k]));
        keys[k] = tl_malloc((size_t)(n ? n : 1) * sizeof **keys);
        for (int64_t r = 0; r < n; r++) {
            bool null = rndn(100) < null_pct;
            int v = skew && rndn(3) ? 0 : rndn(domain);
            keys[k][r] = null ? -1 : v;
            append_key(&b, kinds[k], v, null);
        }
        t->cols[k] = tl_builder_finish(&b);
    }
    {
        char name[16];
        TlBuilder b;
        snprintf(name, sizeof name, "%sv", pfx);
        tl_schema_add(&t->schema, name, TL_TINT64, &err);
        tl_builder_init(&b, TL_TINT64);
        for (int64_t r = 0; r < n; r++) tl_builder_append_i64(&b, r);
        t->cols[n_keys] = tl_builder_finish(&b);
    }
}

/* ------------------------------------------------------ the reference */

typedef struct Pairs {
    int64_t *l, *r;
    int64_t n, cap;
} Pairs;

static void pair_add(Pairs *p, int64_t l, int64_t r)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 64;
        p->l = tl_realloc(p->l, (size_t)p->cap * sizeof *p->l);
        p->r = tl_realloc(p->r, (size_t)p->cap * sizeof *p->r);
    }
    p->l[p->n] = l;
    p->r[p->n++] = r;
}

static bool keys_match(int n_keys, int **lk, int64_t l, int **rk, int64_t r)
{
    for (int k = 0; k < n_keys; k++)
        if (lk[k][l] < 0 || rk[k][r] < 0 || lk[k][l] != rk[k][r]) return false;
    return true;
}

static void reference(int how, int n_keys, int **lk, int64_t nl, int **rk,
                      int64_t nr, Pairs *out)
{
    char *hit = tl_calloc((size_t)(nr ? nr : 1), 1);
    for (int64_t l = 0; l < nl; l++) {
        bool any = false;
        for (int64_t r = 0; r < nr; r++) {
            if (!keys_match(n_keys, lk, l, rk, r)) continue;
            any = true;
            hit[r] = 1;
            if (how != TL_JOIN_SEMI && how != TL_JOIN_ANTI) pair_add(out, l, r);
        }
        if (how == TL_JOIN_SEMI && any) pair_add(out, l, -1);
        if (how == TL_JOIN_ANTI && !any) pair_add(out, l, -1);
        if ((how == TL_JOIN_LEFT || how == TL_JOIN_FULL) && !any) pair_add(out, l, -1);
    }
    if (how == TL_JOIN_RIGHT || how == TL_JOIN_FULL)
        for (int64_t r = 0; r < nr; r++)
            if (!hit[r]) pair_add(out, -1, r);
    tl_free(hit);
}

/* ------------------------------------------------------------- a case */

static int64_t cases_run;
static bool build_left; /* which side the operator indexes */

/* One random case; returns false (after CHECKs) on a mismatch. */
static bool run_case(int how, int n_keys, const int *lkinds, const int *rkinds,
                     int64_t nl, int64_t nr, int domain, bool skew, int null_pct)
{
    Table L, R;
    int *lk[3], *rk[3];
    TlSchema out_schema = {0};
    TlExecStats stats = {0};
    TlError err;
    TlOperator *op = NULL;
    Pairs want = {0}, got = {0};
    int lkc[3], rkc[3], rcols[1] = {n_keys};
    bool ok = true, narrow = how == TL_JOIN_SEMI || how == TL_JOIN_ANTI;
    TlStatus st;

    make_table(&L, nl, n_keys, lkinds, domain, skew, null_pct, "l", lk);
    make_table(&R, nr, n_keys, rkinds, domain, skew, null_pct, "r", rk);
    for (int k = 0; k < n_keys; k++) lkc[k] = rkc[k] = k;
    for (int c = 0; c < L.n_cols; c++) {
        TlType t = L.schema.fields[c].type;
        if (c < n_keys && (how == TL_JOIN_RIGHT || how == TL_JOIN_FULL) &&
            t != R.schema.fields[c].type)
            t = TL_TFLOAT64;
        tl_schema_add(&out_schema, L.schema.fields[c].name, t, &err);
    }
    if (!narrow) tl_schema_add(&out_schema, "rv", TL_TINT64, &err);

    st = tl_op_join_new(src_new(&L, &stats), src_new(&R, &stats), how, lkc, rkc,
                        n_keys, rcols, narrow ? 0 : 1, build_left, &out_schema,
                        &op, &err);
    CHECK_EQ_INT(st, TL_OK);
    for (;;) {
        TlBatch *b = NULL;
        st = op->next(op, &b, &err);
        CHECK_EQ_INT(st, TL_OK);
        if (st != TL_OK || !b) break;
        CHECK(b->n_rows <= tl_batch_rows());
        CHECK_EQ_INT(b->n_cols, out_schema.n_fields);
        const TlArray *lv = b->cols[n_keys];
        const TlArray *rv = narrow ? NULL : b->cols[n_keys + 1];
        for (int64_t i = 0; i < b->n_rows; i++) {
            int64_t l = tl_array_valid(lv, i) ? tl_array_i64(lv)[i] : -1;
            int64_t r = rv && tl_array_valid(rv, i) ? tl_array_i64(rv)[i] : -1;
            pair_add(&got, l, r);
            /* a row of the right tail has its keys from the right */
            if (l < 0 && r >= 0)
                for (int k = 0; k < n_keys; k++) {
                    const TlArray *a = b->cols[k];
                    CHECK_EQ_INT(a->type, out_schema.fields[k].type);
                    if (rk[k][r] < 0) {
                        CHECK(!tl_array_valid(a, i));
                    } else if (a->type == TL_TINT64) {
                        CHECK_EQ_INT(tl_array_i64(a)[i], rk[k][r]);
                    } else if (a->type == TL_TFLOAT64) {
                        CHECK(tl_array_f64(a)[i] == (double)rk[k][r]);
                    }
                }
        }
        tl_batch_free(b);
    }
    op->free(op);
    reference(how, n_keys, lk, nl, rk, nr, &want);
    CHECK_EQ_INT(got.n, want.n);
    if (got.n != want.n) ok = false;
    for (int64_t i = 0; ok && i < got.n; i++)
        if (got.l[i] != want.l[i] || got.r[i] != want.r[i]) {
            fprintf(stderr, "row %lld: got (%lld,%lld) want (%lld,%lld)\n",
                    (long long)i, (long long)got.l[i], (long long)got.r[i],
                    (long long)want.l[i], (long long)want.r[i]);
            CHECK(0);
            ok = false;
        }
    if (!ok)
        fprintf(stderr, "how %d keys %d kinds %d/%d nl %lld nr %lld\n", how,
                n_keys, lkinds[0], rkinds[0], (long long)nl, (long long)nr);
    cases_run++;
    for (int k = 0; k < n_keys; k++) {
        tl_free(lk[k]);
        tl_free(rk[k]);
    }
    tl_free(want.l);
    tl_free(want.r);
    tl_free(got.l);
    tl_free(got.r);
    tl_schema_free(&out_schema);
    table_free(&L);
    table_free(&R);
    return ok;
}

/* -------------------------------------------------------------- tests */

TL_TEST(differential_every_kind)
{
    for (int how = 0; how < 6; how++)
        for (int n_keys = 1; n_keys <= 3; n_keys++)
            for (int kind = 0; kind < 4; kind++)
                for (int it = 0; it < tl_test_scaled(25, 3); it++) {
                    int lk[3], rk[3];
                    for (int k = 0; k < n_keys; k++) {
                        /* kind 3: int on the left, float on the right */
                        lk[k] = kind == 3 ? KINT : kind;
                        rk[k] = kind == 3 ? KFLOAT : kind;
                    }
                    int64_t nl = rndn(8) == 0 ? 0 : rndn(60);
                    int64_t nr = rndn(8) == 0 ? 0 : rndn(60);
                    int domain = 1 + rndn(n_keys == 1 ? 12 : 4);
                    if (!run_case(how, n_keys, lk, rk, nl, nr, domain,
                                  rndn(3) == 0, rndn(3) ? 15 : 0))
                        return;
                }
}

TL_TEST(many_to_many_splits_batches)
{
    int k[1] = {KINT};
    /* one key value on both sides: 40 x 40 pairs across batches of 7 */
    for (int how = 0; how < 6; how++)
        CHECK(run_case(how, 1, k, k, 40, 40, 1, false, 0));
}

TL_TEST(empty_sides)
{
    int k[1] = {KSTR};
    for (int how = 0; how < 6; how++) {
        CHECK(run_case(how, 1, k, k, 0, 10, 3, false, 10));
        CHECK(run_case(how, 1, k, k, 10, 0, 3, false, 10));
        CHECK(run_case(how, 1, k, k, 0, 0, 3, false, 10));
    }
}

TL_TEST(all_null_keys)
{
    int k[2] = {KINT, KSTR};
    for (int how = 0; how < 6; how++)
        CHECK(run_case(how, 2, k, k, 20, 20, 3, false, 100));
}

/* A right side whose key column has the null type matches nothing. */
TL_TEST(null_typed_key)
{
    Table L, R;
    int *lk[1], *rk[1], kinds[1] = {KINT};
    TlSchema out = {0};
    TlExecStats stats = {0};
    TlError err;
    TlOperator *op;
    int lkc[1] = {0}, rkc[1] = {0}, rcols[1] = {1};
    int64_t rows = 0;
    make_table(&L, 5, 1, kinds, 2, false, 0, "l", lk);
    make_table(&R, 4, 1, kinds, 2, false, 0, "r", rk);
    tl_array_release(R.cols[0]);
    R.cols[0] = tl_array_new_null(TL_TNULL, 4);
    R.schema.fields[0].type = TL_TNULL;
    tl_schema_add(&out, "lk0", TL_TINT64, &err);
    tl_schema_add(&out, "lv", TL_TINT64, &err);
    tl_schema_add(&out, "rv", TL_TINT64, &err);
    CHECK_EQ_INT(tl_op_join_new(src_new(&L, &stats), src_new(&R, &stats),
                                TL_JOIN_LEFT, lkc, rkc, 1, rcols, 1, build_left, &out, &op,
                                &err),
                 TL_OK);
    for (;;) {
        TlBatch *b = NULL;
        CHECK_EQ_INT(op->next(op, &b, &err), TL_OK);
        if (!b) break;
        CHECK_EQ_INT(b->cols[2]->null_count, b->n_rows);
        rows += b->n_rows;
        tl_batch_free(b);
    }
    CHECK_EQ_INT(rows, 5);
    op->free(op);
    tl_free(lk[0]);
    tl_free(rk[0]);
    tl_schema_free(&out);
    table_free(&L);
    table_free(&R);
}

/* Out of memory anywhere in build or probe is an error, never a crash or
 * a leak (run under ASan). */
TL_TEST(oom_loop)
{
    int kinds[2] = {KSTR, KINT};
    int fails = 0;
    for (uint64_t n = 1; n < 400; n++) {
        Table L, R;
        int *lk[2], *rk[2];
        TlSchema out = {0};
        TlExecStats stats = {0};
        TlError err;
        TlOperator *op = NULL;
        int lkc[2] = {0, 1}, rkc[2] = {0, 1}, rcols[1] = {2};
        TlStatus st = TL_OK;
        rng_state = 12345;
        make_table(&L, 30, 2, kinds, 3, false, 10, "l", lk);
        make_table(&R, 30, 2, kinds, 3, false, 10, "r", rk);
        for (int c = 0; c < 3; c++)
            tl_schema_add(&out, L.schema.fields[c].name, L.schema.fields[c].type, &err);
        tl_schema_add(&out, "rv", TL_TINT64, &err);
        TlOperator *ls = src_new(&L, &stats), *rs = src_new(&R, &stats);
        tl_alloc_fail_at(n);
        st = tl_op_join_new(ls, rs, TL_JOIN_FULL, lkc, rkc, 2, rcols, 1, build_left,
                            &out, &op, &err);
        while (st == TL_OK) {
            TlBatch *b = NULL;
            st = op->next(op, &b, &err);
            if (!b) break;
            tl_batch_free(b);
        }
        tl_alloc_fail_at(0);
        if (st != TL_OK) {
            CHECK_EQ_INT(st, TL_ERR_OOM);
            fails++;
        }
        if (op) op->free(op);
        for (int k = 0; k < 2; k++) {
            tl_free(lk[k]);
            tl_free(rk[k]);
        }
        tl_schema_free(&out);
        table_free(&L);
        table_free(&R);
    }
    CHECK(fails > 10);
}

/* The table itself on a build big enough for its partitioned, parallel
 * build (more than 4 chunks of 65536 rows): every row's first row of its key
 * and next row, and every probe, against a direct computation.  Keys: an
 * int in [0, 4000) and (two) a short or long string from 3, with nulls. */
static void table_case(bool two)
{
    const int64_t n = 300000;
    const int dom = 4000 * 3;
    TlBuilder bi, bs;
    TlArray *keys[2];
    int32_t *kid = tl_malloc((size_t)n * sizeof *kid);
    uint32_t *first_of = tl_malloc((size_t)dom * sizeof *first_of);
    uint32_t *last_of = tl_malloc((size_t)dom * sizeof *last_of);
    uint32_t *got = tl_malloc((size_t)n * sizeof *got);
    TlJoinTable *t = NULL;
    TlError err;
    int64_t bad = 0;
    tl_builder_init(&bi, TL_TINT64);
    tl_builder_init(&bs, TL_TSTRING);
    for (int i = 0; i < dom; i++) first_of[i] = last_of[i] = TL_JT_NONE;
    for (int64_t r = 0; r < n; r++) {
        int v = rndn(4000), w = rndn(3);
        bool null = rndn(50) == 0, int_null = null && (!two || rndn(2));
        const char *str[3] = {"x", "y-a-string-longer-than-twelve", "z"};
        /* a null row has a null in one of its two keys */
        if (int_null) tl_builder_append_null(&bi);
        else tl_builder_append_i64(&bi, v);
        if (null && !int_null) tl_builder_append_null(&bs);
        else tl_builder_append_str(&bs, str[w], strlen(str[w]));
        kid[r] = null ? -1 : two ? v * 3 + w : v;
    }
    keys[0] = tl_builder_finish(&bi);
    keys[1] = tl_builder_finish(&bs);
    CHECK_EQ_INT(tl_join_table_build(keys, two ? 2 : 1, n, true, &t, &err), TL_OK);
    if (t) {
        const uint32_t *rep = tl_join_table_rep(t), *next = tl_join_table_next(t);
        for (int64_t r = 0; r < n; r++) {
            int k = kid[r];
            if (k >= 0 && first_of[k] == TL_JT_NONE) first_of[k] = (uint32_t)r;
            bad += rep[r] != (k < 0 ? TL_JT_NONE : first_of[k]);
        }
        for (int64_t r = n - 1; r >= 0; r--) {
            int k = kid[r];
            bad += next[r] != (k < 0 ? TL_JT_NONE : last_of[k]);
            if (k >= 0) last_of[k] = (uint32_t)r;
        }
        CHECK_EQ_INT(tl_join_table_probe(t, keys, n, got, &err), TL_OK);
        for (int64_t r = 0; r < n; r++)
            bad += got[r] != (kid[r] < 0 ? TL_JT_NONE : first_of[kid[r]]);
    }
    CHECK_EQ_INT(bad, 0);
    tl_join_table_free(t);
    tl_array_release(keys[0]);
    tl_array_release(keys[1]);
    tl_free(kid);
    tl_free(first_of);
    tl_free(last_of);
    tl_free(got);
}

TL_TEST(table_partitioned)
{
    table_case(false); /* one int64 key: values in the slots */
    table_case(true);
}

/* Float keys: NaN equals NaN, -0.0 equals 0.0, 1 (int) is cast by the
 * operator, not here. */
TL_TEST(table_float_keys)
{
    double v[] = {NAN, 1.0, NAN, -0.0, 0.0, 2.5, 1.0};
    uint32_t want[] = {0, 1, 0, 3, 3, 5, 1}, got[7];
    TlBuilder b;
    TlArray *k;
    TlJoinTable *t = NULL;
    TlError err;
    tl_builder_init(&b, TL_TFLOAT64);
    for (int i = 0; i < 7; i++) tl_builder_append_f64(&b, v[i]);
    k = tl_builder_finish(&b);
    CHECK_EQ_INT(tl_join_table_build(&k, 1, 7, true, &t, &err), TL_OK);
    if (t) {
        for (int i = 0; i < 7; i++) CHECK_EQ_INT(tl_join_table_rep(t)[i], want[i]);
        CHECK_EQ_INT(tl_join_table_probe(t, &k, 7, got, &err), TL_OK);
        for (int i = 0; i < 7; i++) CHECK_EQ_INT(got[i], want[i]);
    }
    tl_join_table_free(t);
    tl_array_release(k);
}

/* tl_join_table_probe_more: an int key's probe says which chains are one
 * row (more 0: next need not be read); other keys always say 1; a miss or
 * a null key gives NONE. */
TL_TEST(table_probe_more)
{
    int64_t v[] = {5, 7, 5, 9, 11};
    const char *sv[] = {"a", "b", "a"};
    uint32_t first[6];
    uint8_t more[6];
    TlBuilder b;
    TlArray *k, *p, *s;
    TlJoinTable *t = NULL, *ts = NULL;
    TlError err;
    tl_builder_init(&b, TL_TINT64);
    for (int i = 0; i < 5; i++) tl_builder_append_i64(&b, v[i]);
    k = tl_builder_finish(&b);
    tl_builder_init(&b, TL_TINT64);
    tl_builder_append_i64(&b, 5);
    tl_builder_append_i64(&b, 7);
    tl_builder_append_i64(&b, 9);
    tl_builder_append_i64(&b, 4);
    tl_builder_append_null(&b);
    tl_builder_append_i64(&b, 11);
    p = tl_builder_finish(&b);
    CHECK_EQ_INT(tl_join_table_build(&k, 1, 5, false, &t, &err), TL_OK);
    if (t) {
        uint32_t want_first[] = {0, 1, 3, TL_JT_NONE, TL_JT_NONE, 4};
        uint8_t want_more[] = {1, 0, 0, 1, 1, 0};
        CHECK_EQ_INT(tl_join_table_probe_more(t, &p, 6, first, more, &err), TL_OK);
        for (int i = 0; i < 6; i++) {
            CHECK_EQ_INT(first[i], want_first[i]);
            if (first[i] != TL_JT_NONE) CHECK_EQ_INT(more[i], want_more[i]);
        }
        CHECK_EQ_INT(tl_join_table_next(t)[0], 2);
        CHECK_EQ_INT(tl_join_table_next(t)[1], TL_JT_NONE);
    }
    tl_builder_init(&b, TL_TSTRING);
    for (int i = 0; i < 3; i++) tl_builder_append_str(&b, sv[i], strlen(sv[i]));
    s = tl_builder_finish(&b);
    CHECK_EQ_INT(tl_join_table_build(&s, 1, 3, false, &ts, &err), TL_OK);
    if (ts) {
        CHECK_EQ_INT(tl_join_table_probe_more(ts, &s, 3, first, more, &err), TL_OK);
        for (int i = 0; i < 3; i++) {
            CHECK_EQ_INT(first[i], i == 1 ? 1 : 0);
            CHECK_EQ_INT(more[i], 1);
        }
    }
    tl_join_table_free(t);
    tl_join_table_free(ts);
    tl_array_release(k);
    tl_array_release(p);
    tl_array_release(s);
}

/* Every test, both build sides, plain and staged sources. */
static int run_all(void)
{
    setenv("TALLY_BATCH_ROWS", "7", 1);
    for (int mode = 0; mode < 4; mode++) {
        build_left = mode & 1;
        use_stage = mode >> 1;
        rng_state = 0x9E3779B97F4A7C15ull;
        TL_RUN(differential_every_kind);
        TL_RUN(many_to_many_splits_batches);
        TL_RUN(empty_sides);
        TL_RUN(all_null_keys);
        TL_RUN(null_typed_key);
        TL_RUN(oom_loop);
    }
    TL_RUN(table_partitioned);
    TL_RUN(table_float_keys);
    TL_RUN(table_probe_more);
    printf("test_join (%d threads): %lld random cases\n", tl_pool_threads(),
           (long long)cases_run);
    return tl_test_summary(__FILE__);
}

int main(void)
{
    static const int threads[] = {1, 2, 3, 8};
    int bad = 0;
    fflush(stdout);
    for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
        pid_t pid = fork();
        int status = 0;
        if (pid < 0) {
            perror("fork");
            return 1;
        }
        if (pid == 0) {
            int rc;
            tl_pool_configure(threads[t]);
            rc = run_all();
            tl_pool_shutdown();
            fflush(stdout);
            _exit(rc);
        }
        if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0) {
            fprintf(stderr, "FAIL test_join with %d threads\n", threads[t]);
            bad = 1;
        }
    }
    return bad;
}
