/*
 * test_sort.c -- sort kernels (kernels/sort.c), the sort / top-k operator
 * (lib/exec/op_sort.c), distinct and limit-by (lib/exec/op_distinct.c).
 *
 * Operators run over a tiny source operator that hands out prepared
 * batches; keys are column references (source_col, tl_source.h).
 */
#include <math.h>
#include <stdlib.h>

#include "../../kernels/sort.h"
#include "../../lib/exec/exec.h"
#include "tl_test.h"

/* ------------------------------------------------------------ helpers */

#include "tl_source.h"

static TlArray *ints(const int64_t *v, int n, int64_t nullv)
{
    TlBuilder b;
    tl_builder_init(&b, TL_TINT64);
    for (int i = 0; i < n; i++) {
        if (v[i] == nullv) tl_builder_append_null(&b);
        else tl_builder_append_i64(&b, v[i]);
    }
    return tl_builder_finish(&b);
}

static TlArray *seq(int64_t n)
{
    TlBuilder b;
    tl_builder_init(&b, TL_TINT64);
    for (int64_t i = 0; i < n; i++) tl_builder_append_i64(&b, i);
    return tl_builder_finish(&b);
}

static void schema2(TlSchema *s, TlType t0, TlType t1)
{
    TlError err;
    memset(s, 0, sizeof *s);
    tl_schema_add(s, "k", t0, &err);
    tl_schema_add(s, "pos", t1, &err);
}

/* ------------------------------------------------------------ kernels */

TL_TEST(radix_u64_stable)
{
    TlError err = {0};
    enum { M = 5000 };
    uint64_t *k = tl_malloc(M * sizeof *k);
    uint32_t *idx = tl_malloc(M * sizeof *idx);
    unsigned seed = 7;
    for (int i = 0; i < M; i++) {
        k[i] = (uint64_t)(rand_r(&seed) % 50) << (i % 2 ? 40 : 0);
        idx[i] = (uint32_t)i;
    }
    CHECK(tl_k_sort_u64(k, idx, M, &err) == TL_OK);
    bool ok = true;
    for (int i = 1; i < M; i++) {
        ok &= k[i - 1] <= k[i];
        if (k[i - 1] == k[i]) ok &= idx[i - 1] < idx[i];
    }
    CHECK(ok);
    tl_free(k);
    tl_free(idx);
}

TL_TEST(row_sort_strings_stable)
{
    TlError err = {0};
    const char *v[] = {"pear", "apple", "fig", "apple", "a", "apple pie and more", "",
                       "fig", "apple pie and less", "pear"};
    int n = 10;
    TlBuilder b;
    tl_builder_init(&b, TL_TSTRING);
    for (int i = 0; i < n; i++) tl_builder_append_str(&b, v[i], strlen(v[i]));
    TlArray *a = tl_builder_finish(&b);
    TlRows r;
    CHECK(tl_k_rowenc((const TlArray *const *)&a, 1, n, NULL, NULL, &r, &err) == TL_OK);
    uint32_t idx[10];
    for (int i = 0; i < n; i++) idx[i] = (uint32_t)i;
    CHECK(tl_k_sort_rows(&r, idx, n, &err) == TL_OK);
    uint32_t want[] = {6, 4, 1, 3, 8, 5, 2, 7, 0, 9};
    for (int i = 0; i < n; i++) CHECK_EQ_INT(idx[i], want[i]);
    tl_k_rows_free(&r);
    tl_array_release(a);
}

/* Random multi-key rows (strings sharing long prefixes, zero bytes, nulls;
 * ints; floats) sort into nondecreasing order with ties in index order. */
TL_TEST(row_sort_random_stable)
{
    TlError err = {0};
    enum { M = 6000 };
    unsigned seed = 99;
    TlBuilder bs, bi, bf;
    tl_builder_init(&bs, TL_TSTRING);
    tl_builder_init(&bi, TL_TINT64);
    tl_builder_init(&bf, TL_TFLOAT64);
    char buf[64];
    for (int i = 0; i < M; i++) {
        int r = rand_r(&seed);
        if (r % 23 == 0) {
            tl_builder_append_null(&bs);
        } else {
            int len = r % 3 == 0 ? 20 + r % 20 : r % 14;
            for (int j = 0; j < len; j++)
                buf[j] = j < 9 ? 'p' : (char)("a\0b"[rand_r(&seed) % 3]);
            tl_builder_append_str(&bs, buf, (size_t)len);
        }
        if (r % 31 == 0) tl_builder_append_null(&bi);
        else tl_builder_append_i64(&bi, (rand_r(&seed) % 5) - 2);
        tl_builder_append_f64(&bf, (rand_r(&seed) % 3) * 0.5);
    }
    TlArray *cols[3] = {tl_builder_finish(&bs), tl_builder_finish(&bi),
                        tl_builder_finish(&bf)};
    bool desc[3] = {false, true, false}, nf[3] = {true, false, false};
    TlRows r;
    CHECK(tl_k_rowenc((const TlArray *const *)cols, 3, M, desc, nf, &r, &err) == TL_OK);
    uint32_t *idx = tl_malloc(M * sizeof *idx);
    for (int i = 0; i < M; i++) idx[i] = (uint32_t)i;
    CHECK(tl_k_sort_rows(&r, idx, M, &err) == TL_OK);
    bool ok = true;
    for (int i = 1; i < M; i++) {
        size_t la, lb;
        const uint8_t *a = tl_rows_at(&r, idx[i - 1], &la), *b = tl_rows_at(&r, idx[i], &lb);
        int c = tl_rows_cmp(a, la, b, lb);
        ok &= c < 0 || (c == 0 && idx[i - 1] < idx[i]);
    }
    CHECK(ok);
    tl_free(idx);
    tl_k_rows_free(&r);
    for (int c = 0; c < 3; c++) tl_array_release(cols[c]);
}

/* ------------------------------------------------------------ sort op */

/* Sort a (k, pos) table by k with the operator; returns the pos column. */
static TlArray *sort_op(TlArray *k, bool desc, bool nulls_first, int64_t limit,
                        int64_t per, TlStatus *st)
{
    TlError err = {0};
    TlExprArena ea;
    tl_ea_init(&ea, &err);
    TlSchema sc;
    schema2(&sc, (TlType)k->type, TL_TINT64);
    TlArray *cols[2] = {k, seq(k->length)};
    TlOperator *src = source(&sc, cols, k->length, per), *op = NULL;
    TlExprId key = source_col(&ea, 0, (TlType)k->type);
    TlArray *out[2] = {NULL, NULL};
    *st = tl_op_sort_new(src, &ea, &key, &desc, &nulls_first, 1, limit, &op, &err);
    if (*st == TL_OK) {
        source_drain(op, out, 2, st, &err);
        op->free(op);
    }
    tl_array_release(out[0]);
    tl_array_release(cols[1]);
    tl_schema_free(&sc);
    tl_ea_free(&ea);
    return out[1];
}

static void check_pos(const TlArray *pos, const int64_t *want, int n)
{
    CHECK(pos != NULL);
    if (!pos) return;
    CHECK_EQ_INT(pos->length, n);
    for (int i = 0; i < n && i < pos->length; i++)
        CHECK_EQ_INT(tl_array_i64(pos)[i], want[i]);
}

TL_TEST(sort_ints_stable_nulls)
{
    const int64_t N = INT64_MIN;
    int64_t v[] = {3, N, 1, 3, -5, N, 1, 3};
    TlArray *k = ints(v, 8, N);
    TlStatus st;
    for (int per = 1; per <= 8; per += 3) {
        TlArray *p = sort_op(k, false, false, -1, per, &st);
        check_pos(p, (const int64_t[]){4, 2, 6, 0, 3, 7, 1, 5}, 8);
        tl_array_release(p);
        p = sort_op(k, true, false, -1, per, &st);
        check_pos(p, (const int64_t[]){0, 3, 7, 2, 6, 4, 1, 5}, 8);
        tl_array_release(p);
        p = sort_op(k, true, true, -1, per, &st);
        check_pos(p, (const int64_t[]){1, 5, 0, 3, 7, 2, 6, 4}, 8);
        tl_array_release(p);
        p = sort_op(k, false, true, -1, per, &st);
        check_pos(p, (const int64_t[]){1, 5, 4, 2, 6, 0, 3, 7}, 8);
        tl_array_release(p);
    }
    tl_array_release(k);
}

TL_TEST(sort_floats_nan_negzero)
{
    double v[] = {NAN, 1.0, -0.0, -INFINITY, 0.0, INFINITY, -NAN, -2.5};
    TlBuilder b;
    tl_builder_init(&b, TL_TFLOAT64);
    for (int i = 0; i < 8; i++) tl_builder_append_f64(&b, v[i]);
    tl_builder_append_null(&b);
    TlArray *k = tl_builder_finish(&b);
    TlStatus st;
    TlArray *p = sort_op(k, false, false, -1, 4, &st);
    /* -inf, -2.5, -0.0 = 0.0 (stable), 1, inf, NaN NaN (stable), null */
    check_pos(p, (const int64_t[]){3, 7, 2, 4, 1, 5, 0, 6, 8}, 9);
    tl_array_release(p);
    p = sort_op(k, true, false, -1, 4, &st);
    check_pos(p, (const int64_t[]){0, 6, 5, 1, 2, 4, 7, 3, 8}, 9);
    tl_array_release(p);
    tl_array_release(k);
}

TL_TEST(sort_strings_desc)
{
    const char *v[] = {"b", NULL, "a long string value", "b", "", "a"};
    TlBuilder b;
    tl_builder_init(&b, TL_TSTRING);
    for (int i = 0; i < 6; i++) {
        if (v[i]) tl_builder_append_str(&b, v[i], strlen(v[i]));
        else tl_builder_append_null(&b);
    }
    TlArray *k = tl_builder_finish(&b);
    TlStatus st;
    TlArray *p = sort_op(k, false, false, -1, 2, &st);
    check_pos(p, (const int64_t[]){4, 5, 2, 0, 3, 1}, 6);
    tl_array_release(p);
    p = sort_op(k, true, true, -1, 2, &st);
    check_pos(p, (const int64_t[]){1, 0, 3, 2, 5, 4}, 6);
    tl_array_release(p);
    p = sort_op(k, true, false, 2, 2, &st); /* top-2 */
    check_pos(p, (const int64_t[]){0, 3}, 2);
    tl_array_release(p);
    tl_array_release(k);
}

TL_TEST(topk_equals_sort_head)
{
    enum { M = 20000 };
    int64_t *v = tl_malloc(M * sizeof *v);
    unsigned seed = 42;
    for (int i = 0; i < M; i++) v[i] = rand_r(&seed) % 300 - 100;
    for (int i = 0; i < M; i += 17) v[i] = INT64_MIN; /* nulls */
    TlArray *k = ints(v, M, INT64_MIN);
    TlStatus st;
    int64_t limits[] = {0, 1, 5, 100, 3000, 19999, 20000, 50000};
    for (int d = 0; d < 2; d++) {
        TlArray *full = sort_op(k, d, d, -1, 1000, &st);
        CHECK(st == TL_OK);
        for (size_t li = 0; li < sizeof limits / sizeof *limits; li++) {
            TlArray *top = sort_op(k, d, d, limits[li], 1000, &st);
            CHECK(st == TL_OK);
            int64_t want = limits[li] < M ? limits[li] : M;
            CHECK(top != NULL);
            if (!top) continue;
            CHECK_EQ_INT(top->length, want);
            bool same = true;
            for (int64_t i = 0; i < want && i < top->length; i++)
                same &= tl_array_i64(top)[i] == tl_array_i64(full)[i];
            CHECK(same);
            tl_array_release(top);
        }
        tl_array_release(full);
    }
    tl_array_release(k);
    tl_free(v);
}

TL_TEST(sort_two_keys)
{
    TlError err = {0};
    TlExprArena ea;
    tl_ea_init(&ea, &err);
    TlSchema sc;
    memset(&sc, 0, sizeof sc);
    tl_schema_add(&sc, "s", TL_TSTRING, &err);
    tl_schema_add(&sc, "i", TL_TINT64, &err);
    tl_schema_add(&sc, "pos", TL_TINT64, &err);
    const char *sv[] = {"x", "y", "x", NULL, "y", "x"};
    int64_t iv[] = {2, 1, 1, 5, 1, 2};
    TlBuilder b;
    tl_builder_init(&b, TL_TSTRING);
    for (int i = 0; i < 6; i++) {
        if (sv[i]) tl_builder_append_str(&b, sv[i], 1);
        else tl_builder_append_null(&b);
    }
    TlArray *cols[3] = {tl_builder_finish(&b), ints(iv, 6, INT64_MIN), seq(6)};
    TlOperator *op = NULL;
    TlExprId keys[2] = {source_col(&ea, 0, TL_TSTRING), source_col(&ea, 1, TL_TINT64)};
    bool desc[2] = {false, true}, nf[2] = {true, false};
    CHECK(tl_op_sort_new(source(&sc, cols, 6, 4), &ea, keys, desc, nf, 2, -1, &op,
                         &err) == TL_OK);
    TlArray *out[3];
    TlStatus st;
    source_drain(op, out, 3, &st, &err);
    check_pos(out[2], (const int64_t[]){3, 0, 5, 2, 1, 4}, 6);
    CHECK_EQ_INT(g_stats.rows_sorted >= 6, 1);
    op->free(op);
    for (int c = 0; c < 3; c++) {
        tl_array_release(out[c]);
        tl_array_release(cols[c]);
    }
    tl_schema_free(&sc);
    tl_ea_free(&ea);
}

/* A computed key (not a plain column): sort by -k equals sort by k desc,
 * for the full sort and for top-k. */
TL_TEST(sort_expression_key)
{
    TlError err = {0};
    TlExprArena ea;
    tl_ea_init(&ea, &err);
    TlSchema sc;
    schema2(&sc, TL_TINT64, TL_TINT64);
    int64_t v[] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
    TlArray *cols[2] = {ints(v, 10, INT64_MIN), seq(10)};
    TlExprId k = source_col(&ea, 0, TL_TINT64), neg;
    TlExpr e = {0};
    e.kind = TL_X_CALL;
    e.op = TL_OP_NEG;
    e.type = TL_TINT64;
    e.col = -1;
    CHECK(tl_ea_push(&ea, &e, &k, 1, &neg, &err) == TL_OK);
    TlStatus st;
    TlArray *want = sort_op(cols[0], true, false, -1, 3, &st);
    for (int64_t limit = -1; limit <= 10; limit += 4) {
        TlOperator *op = NULL;
        CHECK(tl_op_sort_new(source(&sc, cols, 10, 3), &ea, &neg, NULL, NULL, 1, limit,
                             &op, &err) == TL_OK);
        TlArray *out[2];
        source_drain(op, out, 2, &st, &err);
        CHECK(st == TL_OK);
        int64_t n = limit < 0 ? 10 : limit;
        CHECK_EQ_INT(out[1]->length, n);
        for (int64_t i = 0; i < n && i < out[1]->length; i++)
            CHECK_EQ_INT(tl_array_i64(out[1])[i], tl_array_i64(want)[i]);
        op->free(op);
        tl_array_release(out[0]);
        tl_array_release(out[1]);
    }
    tl_array_release(want);
    tl_array_release(cols[0]);
    tl_array_release(cols[1]);
    tl_schema_free(&sc);
    tl_ea_free(&ea);
}

/* ------------------------------------------------- distinct, limit-by */

TL_TEST(distinct_subsets_and_limit_by)
{
    TlError err = {0};
    TlSchema sc;
    memset(&sc, 0, sizeof sc);
    tl_schema_add(&sc, "a", TL_TINT64, &err);
    tl_schema_add(&sc, "b", TL_TSTRING, &err);
    tl_schema_add(&sc, "pos", TL_TINT64, &err);
    const int64_t N = INT64_MIN;
    int64_t av[] = {1, 1, 2, N, 1, N, 2, 1};
    const char *bv[] = {"p", "q", "p", "p", "p", "p", "p", "q"};
    TlBuilder b;
    tl_builder_init(&b, TL_TSTRING);
    for (int i = 0; i < 8; i++) tl_builder_append_str(&b, bv[i], 1);
    TlArray *cols[3] = {ints(av, 8, N), tl_builder_finish(&b), seq(8)};
    TlArray *out[3];
    TlStatus st;
    TlOperator *op = NULL;

    int c0 = 0;
    CHECK(tl_op_distinct_new(source(&sc, cols, 8, 3), &c0, 1, &op, &err) == TL_OK);
    source_drain(op, out, 3, &st, &err);
    check_pos(out[2], (const int64_t[]){0, 2, 3}, 3);
    op->free(op);
    for (int c = 0; c < 3; c++) tl_array_release(out[c]);

    int c01[2] = {0, 1};
    CHECK(tl_op_distinct_new(source(&sc, cols, 8, 3), c01, 2, &op, &err) == TL_OK);
    source_drain(op, out, 3, &st, &err);
    check_pos(out[2], (const int64_t[]){0, 1, 2, 3}, 4);
    op->free(op);
    for (int c = 0; c < 3; c++) tl_array_release(out[c]);

    /* all columns: every row is distinct (pos) */
    CHECK(tl_op_distinct_new(source(&sc, cols, 8, 5), NULL, 0, &op, &err) == TL_OK);
    CHECK_EQ_INT(source_drain(op, out, 3, &st, &err), 8);
    op->free(op);
    for (int c = 0; c < 3; c++) tl_array_release(out[c]);

    int c1 = 1;
    CHECK(tl_op_limit_by_new(source(&sc, cols, 8, 3), 2, &c1, 1, &op, &err) == TL_OK);
    source_drain(op, out, 3, &st, &err);
    check_pos(out[2], (const int64_t[]){0, 1, 2, 7}, 4);
    op->free(op);
    for (int c = 0; c < 3; c++) tl_array_release(out[c]);

    CHECK(tl_op_limit_by_new(source(&sc, cols, 8, 3), 0, &c1, 1, &op, &err) == TL_OK);
    CHECK_EQ_INT(source_drain(op, out, 3, &st, &err), 0);
    op->free(op);
    for (int c = 0; c < 3; c++) tl_array_release(out[c]);

    for (int c = 0; c < 3; c++) tl_array_release(cols[c]);
    tl_schema_free(&sc);
}

int main(void)
{
    TL_RUN(radix_u64_stable);
    TL_RUN(row_sort_strings_stable);
    TL_RUN(row_sort_random_stable);
    TL_RUN(sort_ints_stable_nulls);
    TL_RUN(sort_floats_nan_negzero);
    TL_RUN(sort_strings_desc);
    TL_RUN(topk_equals_sort_head);
    TL_RUN(sort_two_keys);
    TL_RUN(sort_expression_key);
    TL_RUN(distinct_subsets_and_limit_by);
    return tl_test_summary(__FILE__);
}
