/* run-unit: weight=17 */
/*
 * test_sort_prop.c -- property tests of the sort engine against a
 * reference comparator sort.
 *
 * Each case draws a random table: 1..4 key columns of random types (int64,
 * float64, string, date, bool, timestamp) with nulls, NaN, -0.0, inf,
 * duplicates, empty strings, embedded NUL bytes and strings that are
 * prefixes of each other, plus a "pos" column (the input row number).
 * Random directions and null placements per key.  The table goes through
 * the sort operator in random batch sizes, and the pos column it returns
 * must equal a qsort of row numbers by a comparator over the values
 * themselves with the row number as the last tie-break (stability).
 * Top-k (limit folded in) must equal the first k rows of that order.
 * The values are also round-tripped through the row encoding: decoding
 * must give them back (-0.0 as 0.0, NaN canonical).
 *
 * Many small tables (0..300 rows) and a few large ones (up to 1e6 rows)
 * keep it fast; every single-key type, so every sort path (native radix,
 * string views, encoded rows) is drawn.
 */
#include <math.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../kernels/rowenc.h"
#include "../../kernels/sort.h"
#include "../../lib/core/budget.h"
#include "../../lib/core/pool.h"
#include "../../lib/exec/exec.h"
#include "tl_test.h"

#include "tl_source.h"

/* ------------------------------------------------------ random tables */

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}
static int64_t rndn(int64_t n) { return (int64_t)(rnd() % (uint64_t)n); }

static const TlType TYPES[] = {TL_TINT64, TL_TFLOAT64, TL_TSTRING,
                               TL_TDATE, TL_TBOOL, TL_TTIMESTAMP};

/* When >= 0: every string rand_col draws has this length, over {a, b}
 * (rows of one encoded length: the sort stores them at a fixed width). */
static int g_str_len = -1;

/* When set: 90% of the values rand_col draws are one value (skew). */
static bool g_skew;

/* The context run_sort gives the sort (NULL: none; the external sort's
 * test: a small budget, or forced spilling). */
static TlCtx *g_ctx;

/* A random column of n rows; `dom` small = many duplicates. */
static TlArray *rand_col(TlType t, int64_t n, int null_pct, int64_t dom)
{
    TlBuilder b;
    tl_builder_init(&b, t);
    static const double F[] = {0.0, -0.0, 1.5, -1.5, INFINITY, -INFINITY,
                               1e300, -1e-300, 2.0, -2.0};
    char s[40];
    for (int64_t i = 0; i < n; i++) {
        if (rndn(100) < null_pct) {
            tl_builder_append_null(&b);
            continue;
        }
        if (g_skew && rndn(10) != 0) {
            switch (t) {
            case TL_TINT64: case TL_TTIMESTAMP: tl_builder_append_i64(&b, 7); break;
            case TL_TDATE: tl_builder_append_i32(&b, 7); break;
            case TL_TFLOAT64: tl_builder_append_f64(&b, 1.5); break;
            case TL_TBOOL: tl_builder_append_bool(&b, true); break;
            default: tl_builder_append_str(&b, "skewed value", 12); break;
            }
            continue;
        }
        switch (t) {
        case TL_TINT64:
        case TL_TTIMESTAMP: {
            int64_t v = rndn(dom) - dom / 2;
            if (rndn(50) == 0) v = rndn(2) ? INT64_MAX : INT64_MIN;
            tl_builder_append_i64(&b, v);
            break;
        }
        case TL_TDATE: {
            int32_t v = (int32_t)(rndn(dom) - dom / 2);
            if (rndn(50) == 0) v = rndn(2) ? INT32_MAX : INT32_MIN;
            tl_builder_append_i32(&b, v);
            break;
        }
        case TL_TFLOAT64: {
            double v;
            int r = (int)rndn(10);
            if (r == 0) v = NAN;
            else if (r == 1) v = -NAN;
            else if (r < 5) v = F[rndn(10)];
            else v = (double)(rndn(dom) - dom / 2) / 4.0;
            tl_builder_append_f64(&b, v);
            break;
        }
        case TL_TBOOL: tl_builder_append_bool(&b, rndn(2)); break;
        default: { /* strings over {00, 'a', 'b', FF}, some long */
            int len = (int)rndn(dom < 6 ? 4 : 9);
            if (rndn(8) == 0) len = 10 + (int)rndn(28);
            static const char A[] = {0, 'a', 'b', (char)0xFF};
            if (g_str_len >= 0) {
                len = g_str_len;
                for (int j = 0; j < len; j++) s[j] = A[1 + rndn(2)];
            }
            for (int j = 0; j < len && g_str_len < 0; j++) s[j] = A[rndn(dom < 6 ? 2 : 4)];
            tl_builder_append_str(&b, s, (size_t)len);
            break;
        }
        }
    }
    return tl_builder_finish(&b);
}

/* --------------------------------------------------- reference order */

typedef struct Ref {
    TlArray **keys;
    const bool *desc, *nf;
    int n_keys;
} Ref;
static Ref g_ref;

static int cmp_val(const TlArray *a, int64_t i, int64_t j)
{
    switch (a->type) {
    case TL_TINT64:
    case TL_TTIMESTAMP: {
        int64_t x = tl_array_i64(a)[i], y = tl_array_i64(a)[j];
        return (x > y) - (x < y);
    }
    case TL_TDATE: {
        int32_t x = tl_array_i32(a)[i], y = tl_array_i32(a)[j];
        return (x > y) - (x < y);
    }
    case TL_TBOOL: return (int)tl_array_bool(a, i) - (int)tl_array_bool(a, j);
    case TL_TFLOAT64: {
        double x = tl_array_f64(a)[i], y = tl_array_f64(a)[j];
        bool xn = isnan(x), yn = isnan(y);
        if (xn || yn) return (int)xn - (int)yn; /* NaN above all numbers */
        return (x > y) - (x < y);                /* -0.0 == 0.0 */
    }
    default: {
        const TlView *v = tl_array_views(a);
        uint32_t lx = tl_view_len(v[i]), ly = tl_view_len(v[j]);
        const uint8_t *px = tl_view_ptr(&v[i], a->data), *py = tl_view_ptr(&v[j], a->data);
        int c = memcmp(px, py, lx < ly ? lx : ly);
        if (c) return c < 0 ? -1 : 1;
        return (lx > ly) - (lx < ly);
    }
    }
}

static int ref_cmp(const void *pa, const void *pb)
{
    int64_t i = *(const int64_t *)pa, j = *(const int64_t *)pb;
    for (int k = 0; k < g_ref.n_keys; k++) {
        const TlArray *a = g_ref.keys[k];
        bool vi = tl_array_valid(a, i), vj = tl_array_valid(a, j);
        if (!vi || !vj) {
            if (vi == vj) continue;
            int c = vi ? 1 : -1; /* the null first */
            return g_ref.nf[k] ? c : -c;
        }
        int c = cmp_val(a, i, j);
        if (c) return g_ref.desc[k] ? -c : c;
    }
    return (i > j) - (i < j);
}

static bool g_staged; /* run_sort's child: source_staged (tl_source.h) */

/* ------------------------------------------------------------- cases */

/* Run the sort operator; the pos column of its output, or NULL. */
static TlArray *run_sort(TlSchema *schema, TlArray **cols, int n_cols, int64_t n,
                         const TlExprId *keys, const bool *desc, const bool *nf,
                         int n_keys, const TlExprArena *ea, int64_t limit,
                         int64_t per)
{
    TlError err = {0};
    TlOperator *op = NULL;
    TlOperator *src = g_staged ? source_staged(schema, cols, n, per)
                               : source(schema, cols, n, per);
    src->ctx = g_ctx;
    if (tl_op_sort_new(src, ea, keys, desc, nf, n_keys, limit, &op, &err) != TL_OK)
        return NULL;
    TlArray *out[5] = {0};
    TlStatus st;
    source_drain(op, out, n_cols, &st, &err);
    op->free(op);
    for (int c = 0; c < n_cols - 1; c++) tl_array_release(out[c]);
    if (st == TL_OK) return out[n_cols - 1];
    tl_array_release(out[n_cols - 1]);
    return NULL;
}

static int g_failed_cases;

/* One random case of n rows; returns whether it passed. */
static bool one_case(int64_t n, int n_keys, int dom, bool check_topk)
{
    TlSchema schema;
    TlError err = {0};
    TlExprArena ea;
    memset(&schema, 0, sizeof schema);
    tl_ea_init(&ea, &err);
    TlArray *cols[5];
    TlExprId keys[4];
    bool desc[4], nf[4];
    int null_pct = (int)rndn(3) == 0 ? 0 : (int)rndn(30);
    for (int k = 0; k < n_keys; k++) {
        TlType t = TYPES[rndn(6)];
        cols[k] = rand_col(t, n, null_pct, dom);
        char name[16];
        snprintf(name, sizeof name, "k%d", k);
        tl_schema_add(&schema, name, t, &err);
        keys[k] = source_col(&ea, k, t);
        desc[k] = rndn(2);
        nf[k] = rndn(2);
    }
    {
        TlBuilder b;
        tl_builder_init(&b, TL_TINT64);
        for (int64_t i = 0; i < n; i++) tl_builder_append_i64(&b, i);
        cols[n_keys] = tl_builder_finish(&b);
        tl_schema_add(&schema, "pos", TL_TINT64, &err);
    }
    int64_t *want = tl_malloc((size_t)(n ? n : 1) * sizeof *want);
    for (int64_t i = 0; i < n; i++) want[i] = i;
    g_ref = (Ref){cols, desc, nf, n_keys};
    qsort(want, (size_t)n, sizeof *want, ref_cmp);

    int64_t per = 1 + rndn(n < 10 ? 10 : n / 3 + 1);
    bool ok = true;
    g_staged = rndn(2);
    TlArray *got = run_sort(&schema, cols, n_keys + 1, n, keys, desc, nf, n_keys,
                            &ea, -1, per);
    if (!got || got->length != n) ok = false;
    for (int64_t i = 0; ok && i < n; i++) ok = tl_array_i64(got)[i] == want[i];
    tl_array_release(got);

    if (ok && check_topk) {
        int64_t lims[] = {0, 1, 1 + rndn(10), n / 2, n, n + 3};
        for (size_t li = 0; ok && li < sizeof lims / sizeof *lims; li++) {
            int64_t k = lims[li];
            memset(&g_stats, 0, sizeof g_stats);
            TlArray *top = run_sort(&schema, cols, n_keys + 1, n, keys, desc, nf,
                                    n_keys, &ea, k, per);
            int64_t w = k < n ? k : n;
            if (!top || top->length != w) ok = false;
            for (int64_t i = 0; ok && i < w; i++) ok = tl_array_i64(top)[i] == want[i];
            /* The pool never holds more than max(2k, 4096) plus a batch. */
            int64_t bound = (2 * k > 4096 ? 2 * k : 4096) + per;
            if (g_stats.sort_pool_peak > bound) ok = false;
            tl_array_release(top);
        }
    }

    /* Round trip of the row encoding (ascending, random null placement). */
    if (ok && n > 0) {
        TlRows r;
        TlType types[4];
        for (int k = 0; k < n_keys; k++) types[k] = cols[k]->type;
        if (tl_k_rowenc((const TlArray *const *)cols, n_keys, n, NULL, nf, &r, &err) != TL_OK) {
            ok = false;
        } else {
            const uint8_t **rows = tl_malloc((size_t)n * sizeof *rows);
            for (int64_t i = 0; i < n; i++) {
                size_t len;
                rows[i] = tl_rows_at(&r, i, &len);
            }
            TlArray *dec[4] = {0};
            if (tl_k_rowdec(rows, n, types, n_keys, dec, &err) != TL_OK) ok = false;
            for (int k = 0; ok && k < n_keys; k++) {
                TlArray *pair[2] = {cols[k], dec[k]};
                TlArray *both = tl_array_concat(pair, 2);
                for (int64_t i = 0; ok && i < n; i++) {
                    bool v0 = tl_array_valid(both, i), v1 = tl_array_valid(both, n + i);
                    ok = v0 == v1 && (!v0 || cmp_val(both, i, n + i) == 0);
                    if (ok && v0 && types[k] == TL_TFLOAT64) { /* -0.0 folds to 0.0 */
                        double d = tl_array_f64(both)[n + i];
                        ok = !(d == 0.0 && signbit(d));
                    }
                }
                tl_array_release(both);
            }
            for (int k = 0; k < n_keys; k++) tl_array_release(dec[k]);
            tl_free(rows);
            tl_k_rows_free(&r);
        }
    }

    if (!ok && g_failed_cases++ < 3) {
        fprintf(stderr, "failed case: n=%lld keys=%d per=%lld%s:", (long long)n, n_keys,
                (long long)per, g_staged ? " staged" : "");
        for (int k = 0; k < n_keys; k++)
            fprintf(stderr, " %s%s%s", tl_type_name(cols[k]->type), desc[k] ? " desc" : "",
                    nf[k] ? " nulls first" : "");
        fprintf(stderr, "\n");
    }
    for (int k = 0; k <= n_keys; k++) tl_array_release(cols[k]);
    tl_free(want);
    tl_schema_free(&schema);
    tl_ea_free(&ea);
    return ok;
}

TL_TEST(many_small_tables)
{
    int passed = 0, total = 600;
    for (int i = 0; i < total; i++) {
        int64_t n = i < 20 ? i : rndn(300);
        int dom = (int)(1 + rndn(2) * 3 + rndn(40));
        passed += one_case(n, 1 + (int)rndn(4), dom, true);
    }
    CHECK_EQ_INT(passed, total);
}

TL_TEST(single_keys_every_type)
{
    /* Each single-key path (native radix, string views) over several
     * batches, both directions, duplicates. */
    int passed = 0, total = 120;
    for (int i = 0; i < total; i++) passed += one_case(2000 + rndn(3000), 1, 50, i % 4 == 0);
    CHECK_EQ_INT(passed, total);
}

TL_TEST(fixed_length_strings)
{
    /* String keys of one length (with other keys, nulls or none): the
     * encoded rows may all have one width, which the sort then stores
     * without offsets. */
    int passed = 0, total = 60;
    for (int i = 0; i < total; i++) {
        g_str_len = (int)rndn(14);
        passed += one_case(i < 10 ? 300 : 500 + rndn(6000), 1 + (int)rndn(4), 40, i % 6 == 0);
    }
    g_str_len = -1;
    CHECK_EQ_INT(passed, total);
}

/* The external sort (lib/exec/sort_spill.c): the same cases through a
 * budget so small that the sort spills runs and merges them (a cascade
 * when the runs outnumber the fan-in), and through forced spilling (runs
 * of 3 rows, merged 3 at a time): the output must be the reference order,
 * which is the in-memory sort's.  Top-k never spills. */
TL_TEST(external_sort_equals_reference)
{
    TlCtx ctx;
    TlBudget budget;
    memset(&ctx, 0, sizeof ctx);
    tl_tuning_read(&ctx.tuning);
    ctx.tuning.batch_rows = 64; /* output batches cut across run blocks */
    ctx.budget = &budget;
    g_ctx = &ctx;
    int passed = 0, total = 0;
    int64_t runs = 0;
    for (int i = 0; i < 160; i++) {
        ctx.tuning.force_spill = i % 2 == 0;
        tl_budget_init(&budget, i % 4 == 1 ? (1u << 20) : (256u << 10));
        budget.temp_dir = ctx.tuning.tmpdir && *ctx.tuning.tmpdir ? ctx.tuning.tmpdir : "/tmp";
        budget.force_spill = ctx.tuning.force_spill;
        g_skew = i % 3 == 0;
        int64_t n = i < 10 ? i * 7 : i < 120 ? rndn(800) : 5000 + rndn(20000);
        passed += one_case(n, 1 + (int)rndn(4), (int)(1 + rndn(2) * 3 + rndn(40)), i % 8 == 0);
        total++;
        runs += atomic_load(&budget.sort_runs);
        CHECK_EQ_INT((long long)atomic_load(&budget.used), 0); /* all given back */
    }
    g_skew = false;
    g_ctx = NULL;
    CHECK_EQ_INT(passed, total);
    CHECK(runs > 1000);
}

/* A budget too small for the merge of two runs is an error naming the
 * sort and the limit, not a crash or a wrong result. */
TL_TEST(external_sort_budget_too_small)
{
    TlCtx ctx;
    TlBudget budget;
    TlSchema schema;
    TlExprArena ea;
    TlError err = {0};
    memset(&ctx, 0, sizeof ctx);
    memset(&schema, 0, sizeof schema);
    tl_tuning_read(&ctx.tuning);
    tl_budget_init(&budget, 2000);
    budget.temp_dir = "/tmp";
    ctx.budget = &budget;
    tl_ea_init(&ea, &err);
    TlArray *col = rand_col(TL_TINT64, 5000, 0, 1000);
    tl_schema_add(&schema, "k", TL_TINT64, &err);
    TlExprId key = source_col(&ea, 0, TL_TINT64);
    TlOperator *src = source(&schema, &col, 5000, 500), *op = NULL;
    src->ctx = &ctx;
    CHECK(tl_op_sort_new(src, &ea, &key, NULL, NULL, 1, -1, &op, &err) == TL_OK);
    TlBatch *b = NULL;
    CHECK(op->next(op, &b, &err) == TL_ERR_DATA);
    CHECK(strncmp(err.msg, "sort (merging its spilled runs) needs at least ", 47) == 0);
    CHECK(strstr(err.msg, "; the memory limit is 2.0 KiB (raise --memory-limit)") != NULL);
    CHECK(atomic_load(&budget.sort_runs) == 10);
    op->free(op);
    CHECK_EQ_INT((long long)atomic_load(&budget.used), 0);
    tl_array_release(col);
    tl_schema_free(&schema);
    tl_ea_free(&ea);
}

TL_TEST(large_tables)
{
    int passed = 0;
    passed += one_case(100000, 1, 1000, true);
    passed += one_case(100000, 2, 100000, false);
    passed += one_case(200000, 3, 30, false);
    passed += one_case(1000000, 1, 1000000, false);
    CHECK_EQ_INT(passed, 4);
}

TL_TEST(string_kernel_prefixes)
{
    /* "" < "\0" < "\0\0" < "a" < "a\0" < "a\0b" < "ab", desc reversed,
     * equal strings keep their order both ways. */
    const char *s[] = {"ab", "a\0b", "", "a", "\0\0", "a\0", "\0", "a", ""};
    uint32_t len[] = {2, 3, 0, 1, 2, 2, 1, 1, 0};
    const uint8_t *ptr[9];
    for (int i = 0; i < 9; i++) ptr[i] = (const uint8_t *)s[i];
    uint32_t idx[9];
    TlError err = {0};
    for (int i = 0; i < 9; i++) idx[i] = (uint32_t)i;
    CHECK(tl_k_sort_strs(ptr, len, false, idx, 9, &err) == TL_OK);
    uint32_t want[] = {2, 8, 6, 4, 3, 7, 5, 1, 0};
    CHECK(memcmp(idx, want, sizeof want) == 0);
    for (int i = 0; i < 9; i++) idx[i] = (uint32_t)i;
    CHECK(tl_k_sort_strs(ptr, len, true, idx, 9, &err) == TL_OK);
    uint32_t wantd[] = {0, 1, 5, 3, 7, 4, 6, 2, 8};
    CHECK(memcmp(idx, wantd, sizeof wantd) == 0);
}

/* The parallel kernels (runs sorted apart, then merged) against the serial
 * ones, with explicit run counts so small inputs take the merge path. */
TL_TEST(parallel_kernels_equal_serial)
{
    TlError err = {0};
    int bad = 0;
    for (int iter = 0; iter < 200; iter++) {
        int64_t n = iter < 10 ? iter : 1 + rndn(iter < 150 ? 3000 : 200000);
        int runs = 1 + (int)rndn(9);
        int64_t dom = 1 + rndn(iter % 3 == 0 ? 4 : 100000);
        uint64_t *k1 = tl_malloc((size_t)(n + 1) * sizeof *k1);
        uint64_t *k2 = tl_malloc((size_t)(n + 1) * sizeof *k2);
        uint32_t *i1 = tl_malloc((size_t)(n + 1) * sizeof *i1);
        uint32_t *i2 = tl_malloc((size_t)(n + 1) * sizeof *i2);
        for (int64_t i = 0; i < n; i++) {
            k1[i] = k2[i] = (uint64_t)rndn(dom) << (rndn(2) ? 40 : 0);
            i1[i] = i2[i] = (uint32_t)i;
        }
        /* u64 keys with payload */
        CHECK(tl_k_sort_u64(k1, i1, n, &err) == TL_OK);
        CHECK(tl_k_psort_u64(k2, i2, n, runs, &err) == TL_OK);
        if (n && (memcmp(k1, k2, (size_t)n * 8) || memcmp(i1, i2, (size_t)n * 4))) bad++;
        /* strings and encoded rows over short strings with many ties */
        TlArray *col = rand_col(TL_TSTRING, n, 10, dom < 6 ? 4 : 50);
        const TlView *v = tl_array_views(col);
        const uint8_t **ptr = tl_malloc((size_t)(n + 1) * sizeof *ptr);
        uint32_t *len = tl_malloc((size_t)(n + 1) * sizeof *len);
        for (int64_t i = 0; i < n; i++) {
            ptr[i] = tl_view_ptr(&v[i], col->data);
            len[i] = tl_view_len(v[i]);
        }
        bool desc = rndn(2);
        for (int64_t i = 0; i < n; i++) i1[i] = i2[i] = (uint32_t)i;
        CHECK(tl_k_sort_strs(ptr, len, desc, i1, n, &err) == TL_OK);
        CHECK(tl_k_psort_strs(ptr, len, desc, i2, n, runs, &err) == TL_OK);
        if (n && memcmp(i1, i2, (size_t)n * 4)) bad++;
        TlRows r;
        bool nf = rndn(2);
        const TlArray *cs[1] = {col};
        CHECK(tl_k_rowenc(cs, 1, n, &desc, &nf, &r, &err) == TL_OK);
        for (int64_t i = 0; i < n; i++) i1[i] = i2[i] = (uint32_t)i;
        CHECK(tl_k_sort_rows(&r, i1, n, &err) == TL_OK);
        CHECK(tl_k_psort_rows(&r, i2, n, runs, &err) == TL_OK);
        if (n && memcmp(i1, i2, (size_t)n * 4)) bad++;
        /* the two-pass encoding gives tl_k_rowenc's bytes */
        if (n && r.offs) {
            uint64_t *lens = tl_malloc((size_t)n * sizeof *lens);
            tl_k_rowenc_lens(cs, 1, n, lens);
            uint8_t *bytes = tl_malloc((size_t)r.offs[n] + 1);
            for (int64_t i = 0; i < n; i++)
                if (lens[i] != r.offs[i + 1] - r.offs[i]) bad++;
            CHECK(tl_k_rowenc_into(cs, 1, n, &desc, &nf, bytes, r.offs, 0, &err) == TL_OK);
            if (memcmp(bytes, r.bytes, (size_t)r.offs[n])) bad++;
            tl_free(lens);
            tl_free(bytes);
        }
        tl_k_rows_free(&r);
        tl_array_release(col);
        tl_free(ptr);
        tl_free(len);
        tl_free(k1);
        tl_free(k2);
        tl_free(i1);
        tl_free(i2);
    }
    CHECK_EQ_INT(bad, 0);
}

/* Strings of one of several shapes that share leading bytes (the MSD
 * kernels start past the bytes every row shares): "id" + zero-padded
 * numbers, all equal, a prefix of 8+ bytes, some rows shorter than the
 * shared prefix, NUL bytes after it. */
static TlArray *prefix_col(int mode, int64_t n, int64_t dom)
{
    TlBuilder b;
    char s[48];
    tl_builder_init(&b, TL_TSTRING);
    for (int64_t i = 0; i < n; i++) {
        int len;
        if (mode == 4 && rndn(20) == 0) {
            tl_builder_append_null(&b);
            continue;
        }
        switch (mode) {
        case 0: len = snprintf(s, sizeof s, "id%010lld", (long long)(1 + rndn(dom))); break;
        case 1: len = snprintf(s, sizeof s, "the same string"); break;
        case 2: len = snprintf(s, sizeof s, "abcdefghij%.*s", (int)rndn(3), "xyz"); break;
        case 3:
            if (rndn(50) == 0) len = snprintf(s, sizeof s, "%.*s", (int)rndn(3), "id0");
            else len = snprintf(s, sizeof s, "id000%lld", (long long)rndn(dom));
            break;
        default:
            len = snprintf(s, sizeof s, "pre%lld", (long long)rndn(dom));
            if (rndn(3) == 0) s[len++] = 0;
            if (rndn(3) == 0) s[len++] = (char)('a' + rndn(3));
            break;
        }
        tl_builder_append_str(&b, s, (size_t)len);
    }
    return tl_builder_finish(&b);
}

/* memcmp order of two strings, a prefix first, then the index. */
typedef struct StrOrd {
    const uint8_t **ptr;
    const uint32_t *len;
    bool desc;
} StrOrd;
static const StrOrd *g_so;

static int str_ord_cmp(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    uint32_t la = g_so->len[a], lb = g_so->len[b];
    int c = memcmp(g_so->ptr[a], g_so->ptr[b], la < lb ? la : lb);
    if (c == 0) c = (la > lb) - (la < lb);
    if (g_so->desc) c = -c;
    return c ? c : (a > b) - (a < b);
}

/* Rows and strings that share leading bytes: the serial and parallel
 * kernels against a comparison sort (tl_k_merge_sort_rows for rows, qsort
 * for strings), alone and with a float key after the string. */
TL_TEST(shared_prefix_kernels)
{
    TlError err = {0};
    int bad = 0;
    for (int iter = 0; iter < 40; iter++) {
        int mode = iter % 5;
        int64_t n = iter < 5 ? 300 : 257 + rndn(iter < 35 ? 1500 : 20000);
        int64_t dom = 1 + rndn(iter % 2 ? 30 : 100000);
        TlArray *cols[2] = {prefix_col(mode, n, dom), rand_col(TL_TFLOAT64, n, 5, 20)};
        uint32_t *i1 = tl_malloc((size_t)n * sizeof *i1);
        uint32_t *i2 = tl_malloc((size_t)n * sizeof *i2);
        uint32_t *sc = tl_malloc((size_t)n * sizeof *sc);
        for (int nk = 1; nk <= 2; nk++) {
            bool desc[2] = {rndn(2), true}, nf[2] = {rndn(2), false};
            TlRows r;
            CHECK(tl_k_rowenc((const TlArray *const *)cols, nk, n, desc, nf, &r, &err) == TL_OK);
            for (int64_t i = 0; i < n; i++) i1[i] = (uint32_t)i;
            tl_k_merge_sort_rows(&r, i1, sc, n);
            for (int runs = 0; runs <= 4; runs++) {
                for (int64_t i = 0; i < n; i++) i2[i] = (uint32_t)i;
                if (runs == 0) CHECK(tl_k_sort_rows(&r, i2, n, &err) == TL_OK);
                else CHECK(tl_k_psort_rows(&r, i2, n, runs, &err) == TL_OK);
                if (memcmp(i1, i2, (size_t)n * 4)) bad++;
            }
            tl_k_rows_free(&r);
        }
        /* one string key by its bytes (no nulls: mode 4's become "") */
        const TlView *v = tl_array_views(cols[0]);
        const uint8_t **ptr = tl_malloc((size_t)n * sizeof *ptr);
        uint32_t *len = tl_malloc((size_t)n * sizeof *len);
        for (int64_t i = 0; i < n; i++) {
            bool ok = tl_array_valid(cols[0], i);
            ptr[i] = ok ? tl_view_ptr(&v[i], cols[0]->data) : (const uint8_t *)"";
            len[i] = ok ? tl_view_len(v[i]) : 0;
        }
        StrOrd so = {ptr, len, rndn(2)};
        g_so = &so;
        for (int64_t i = 0; i < n; i++) i1[i] = (uint32_t)i;
        qsort(i1, (size_t)n, sizeof *i1, str_ord_cmp);
        for (int runs = 0; runs <= 4; runs++) {
            for (int64_t i = 0; i < n; i++) i2[i] = (uint32_t)i;
            if (runs == 0) CHECK(tl_k_sort_strs(ptr, len, so.desc, i2, n, &err) == TL_OK);
            else CHECK(tl_k_psort_strs(ptr, len, so.desc, i2, n, runs, &err) == TL_OK);
            if (memcmp(i1, i2, (size_t)n * 4)) bad++;
        }
        tl_free(ptr);
        tl_free(len);
        tl_free(i1);
        tl_free(i2);
        tl_free(sc);
        tl_array_release(cols[0]);
        tl_array_release(cols[1]);
    }
    CHECK_EQ_INT(bad, 0);
}

static int run_all(int threads)
{
    tl_pool_configure(threads);
    g_rng = 0x9E3779B97F4A7C15ull;
    fprintf(stderr, "test_sort_prop: %d thread(s)\n", threads);
    TL_RUN(string_kernel_prefixes);
    TL_RUN(shared_prefix_kernels);
    /* The parallel kernels take their run count as an argument, so with one
     * thread they would repeat the same work inline: run them where the
     * runs really overlap (the costliest test here, ~70% under ASan). */
    if (threads > 1) TL_RUN(parallel_kernels_equal_serial);
    TL_RUN(many_small_tables);
    TL_RUN(single_keys_every_type);
    TL_RUN(fixed_length_strings);
    TL_RUN(external_sort_equals_reference);
    TL_RUN(external_sort_budget_too_small);
    TL_RUN(large_tables);
    return tl_test_summary(__FILE__);
}

/* Everything twice (the parallel kernels once, with three threads): in a
 * child with one thread (every pool task inline), then here with three (the
 * pool is configured once per process). */
int main(void)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int rc = run_all(1);
        fflush(NULL);
        _exit(rc);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return 1;
    int rc = run_all(3);
    return (WIFEXITED(status) && WEXITSTATUS(status) == 0) ? rc : 1;
}
