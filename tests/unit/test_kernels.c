/*
 * test_kernels.c -- the expression kernels of kernels/core_kernels.h.
 *
 * Arrays are built from short specs and results printed back to text, so a
 * check reads as a table row: show(r) == "3,N,-1".  Every kernel is run
 * through its three null paths (no nulls, all null -- both as type null and
 * as a typed all-null array -- and some nulls), its array/scalar shapes, and
 * sliced inputs whose offsets are not byte aligned.
 */
#include "../../kernels/core_kernels.h"
#include "../../lib/core/text.h"
#include "tl_test.h"

#include <math.h>
#include <stdio.h>

static TlError err;

/* ------------------------------------------------------------ builders */

/* int64 array; nulls[i] == 'N' marks a null (nulls may be NULL). */
static TlArray *i64s(int n, const int64_t *v, const char *nulls)
{
    TlBuilder b;
    TlArray *a;
    tl_builder_init(&b, TL_TINT64);
    for (int i = 0; i < n; i++) {
        if (nulls && nulls[i] == 'N') tl_builder_append_null(&b);
        else tl_builder_append_i64(&b, v[i]);
    }
    a = tl_builder_finish(&b);
    tl_builder_free(&b);
    return a;
}

static TlArray *f64s(int n, const double *v, const char *nulls)
{
    TlBuilder b;
    TlArray *a;
    tl_builder_init(&b, TL_TFLOAT64);
    for (int i = 0; i < n; i++) {
        if (nulls && nulls[i] == 'N') tl_builder_append_null(&b);
        else tl_builder_append_f64(&b, v[i]);
    }
    a = tl_builder_finish(&b);
    tl_builder_free(&b);
    return a;
}

static TlArray *dates(int n, const int32_t *v, const char *nulls)
{
    TlBuilder b;
    TlArray *a;
    tl_builder_init(&b, TL_TDATE);
    for (int i = 0; i < n; i++) {
        if (nulls && nulls[i] == 'N') tl_builder_append_null(&b);
        else tl_builder_append_i32(&b, v[i]);
    }
    a = tl_builder_finish(&b);
    tl_builder_free(&b);
    return a;
}

/* bool array from "TFN..." */
static TlArray *bools(const char *spec)
{
    TlBuilder b;
    TlArray *a;
    tl_builder_init(&b, TL_TBOOL);
    for (const char *p = spec; *p; p++) {
        if (*p == 'N') tl_builder_append_null(&b);
        else tl_builder_append_bool(&b, *p == 'T');
    }
    a = tl_builder_finish(&b);
    tl_builder_free(&b);
    return a;
}

/* string array; a NULL entry is a null */
static TlArray *strs(int n, const char *const *v)
{
    TlBuilder b;
    TlArray *a;
    tl_builder_init(&b, TL_TSTRING);
    for (int i = 0; i < n; i++) {
        if (!v[i]) tl_builder_append_null(&b);
        else tl_builder_append_str(&b, v[i], strlen(v[i]));
    }
    a = tl_builder_finish(&b);
    tl_builder_free(&b);
    return a;
}

static TlArray *i1(int64_t v) { return i64s(1, &v, NULL); }
static TlArray *f1(double v) { return f64s(1, &v, NULL); }

static TlDatum A(TlArray *a) { TlDatum d = {a, false}; return d; }
static TlDatum S(TlArray *a) { TlDatum d = {a, true}; return d; }

/* Row i of a as text: N for null, T/F for bools. */
static void cell(const TlArray *a, int64_t i, char *buf)
{
    if (!tl_array_valid(a, i)) { strcpy(buf, "N"); return; }
    switch (a->type) {
    case TL_TBOOL: strcpy(buf, tl_array_bool(a, i) ? "T" : "F"); break;
    case TL_TINT64: tl_fmt_i64(tl_array_i64(a)[i], buf); break;
    case TL_TFLOAT64: tl_fmt_f64(tl_array_f64(a)[i], buf); break;
    case TL_TDATE: tl_fmt_date(tl_array_i32(a)[i], buf); break;
    case TL_TTIMESTAMP: tl_fmt_timestamp(tl_array_i64(a)[i], buf); break;
    case TL_TSTRING: {
        const TlView *v = &tl_array_views(a)[i];
        memcpy(buf, tl_view_ptr(v, a->data), tl_view_len(*v));
        buf[tl_view_len(*v)] = 0;
        break;
    }
    default: strcpy(buf, "?");
    }
}

/* The whole array as "a,b,c"; also checks null_count is exact. */
static const char *show(const TlArray *a)
{
    static char out[4096];
    char c[256];
    size_t len = 0;
    int64_t nulls = 0;
    out[0] = 0;
    if (!a) return "(null array)";
    for (int64_t i = 0; i < a->length; i++) {
        cell(a, i, c);
        if (!tl_array_valid(a, i)) nulls++;
        len += (size_t)snprintf(out + len, sizeof out - len, "%s%s", i ? "," : "", c);
    }
    if (nulls != a->null_count) {
        snprintf(out + len, sizeof out - len, " (null_count %lld != %lld)",
                 (long long)a->null_count, (long long)nulls);
    }
    if (a->null_count == 0 && a->validity) strcat(out, " (validity not dropped)");
    return out;
}

/* Run a binary arith kernel and show the result (or "ERR@row"). */
static const char *arith(TlKArith op, TlDatum a, TlDatum b, int64_t n)
{
    static char buf[4096];
    TlArray *r = NULL;
    int64_t row = -1;
    TlStatus st = tl_k_arith(op, &a, &b, n, &r, &row, &err);
    if (st == TL_ERR_DATA) {
        snprintf(buf, sizeof buf, "ERR@%lld", (long long)row);
        return buf;
    }
    if (st != TL_OK) return "FAILED";
    snprintf(buf, sizeof buf, "%s", show(r));
    tl_array_release(r);
    return buf;
}

static const char *cmp(TlKCmp op, TlDatum a, TlDatum b, int64_t n)
{
    static char buf[4096];
    TlArray *r = NULL;
    if (tl_k_compare(op, &a, &b, n, &r, &err) != TL_OK) return "FAILED";
    snprintf(buf, sizeof buf, "%s", show(r));
    tl_array_release(r);
    return buf;
}

/* -------------------------------------------------------- arithmetic */

TL_TEST(test_add_null_paths)
{
    int64_t x[] = {1, 2, 3, 4}, y[] = {10, 20, 30, 40};
    TlArray *a = i64s(4, x, NULL), *b = i64s(4, y, NULL);
    TlArray *an = i64s(4, x, ".N.N"), *bn = i64s(4, y, "..NN");
    TlArray *all = i64s(4, x, "NNNN"), *tnull = tl_array_new_null(TL_TNULL, 4);
    TlArray *s = i1(100), *snull = tl_array_new_null(TL_TINT64, 1);
    CHECK_EQ_STR(arith(TL_K_ADD, A(a), A(b), 4), "11,22,33,44");
    CHECK_EQ_STR(arith(TL_K_ADD, A(an), A(b), 4), "11,N,33,N");
    CHECK_EQ_STR(arith(TL_K_ADD, A(an), A(bn), 4), "11,N,N,N");
    CHECK_EQ_STR(arith(TL_K_ADD, A(all), A(b), 4), "N,N,N,N");
    CHECK_EQ_STR(arith(TL_K_ADD, A(a), A(tnull), 4), "N,N,N,N");
    CHECK_EQ_STR(arith(TL_K_ADD, A(a), S(s), 4), "101,102,103,104");
    CHECK_EQ_STR(arith(TL_K_SUB, S(s), A(an), 4), "99,N,97,N");
    CHECK_EQ_STR(arith(TL_K_SUB, A(an), S(s), 4), "-99,N,-97,N");
    CHECK_EQ_STR(arith(TL_K_MUL, S(s), S(s), 1), "10000");
    CHECK_EQ_STR(arith(TL_K_MUL, S(s), S(s), 3), "10000,10000,10000");
    CHECK_EQ_STR(arith(TL_K_ADD, A(a), S(snull), 4), "N,N,N,N");
    /* a slice at a non-byte-aligned offset */
    {
        TlArray *sl = tl_array_slice(an, 1, 3), *sb = tl_array_slice(b, 1, 3);
        CHECK_EQ_STR(arith(TL_K_ADD, A(sl), A(sb), 3), "N,33,N");
        tl_array_release(sl);
        tl_array_release(sb);
    }
    tl_array_release(a); tl_array_release(b); tl_array_release(an);
    tl_array_release(bn); tl_array_release(all); tl_array_release(tnull);
    tl_array_release(s); tl_array_release(snull);
}

TL_TEST(test_overflow)
{
    int64_t x[] = {1, INT64_MAX, 3}, y[] = {1, 1, 1};
    int64_t big[] = {INT64_MIN, 5};
    TlArray *a = i64s(3, x, NULL), *b = i64s(3, y, NULL);
    TlArray *an = i64s(3, x, ".N."); /* the overflowing row is null */
    TlArray *two = i1(2), *m1 = i1(-1), *mn = i64s(2, big, NULL);
    CHECK_EQ_STR(arith(TL_K_ADD, A(a), A(b), 3), "ERR@1");
    CHECK_EQ_STR(arith(TL_K_ADD, A(an), A(b), 3), "2,N,4");
    CHECK_EQ_STR(arith(TL_K_MUL, A(a), S(two), 3), "ERR@1");
    CHECK_EQ_STR(arith(TL_K_SUB, A(mn), S(two), 2), "ERR@0");
    CHECK_EQ_STR(arith(TL_K_IDIV, A(mn), S(m1), 2), "ERR@0");
    CHECK_EQ_STR(arith(TL_K_MOD, A(mn), S(m1), 2), "0,0");
    /* unary minus */
    {
        TlDatum d = A(mn);
        TlArray *r = NULL;
        int64_t row = -1;
        CHECK_EQ_INT(tl_k_neg(&d, 2, &r, &row, &err), TL_ERR_DATA);
        CHECK_EQ_INT(row, 0);
        d = A(an);
        CHECK_EQ_INT(tl_k_neg(&d, 3, &r, &row, &err), TL_OK);
        CHECK_EQ_STR(show(r), "-1,N,-3");
        tl_array_release(r);
    }
    tl_array_release(a); tl_array_release(b); tl_array_release(an);
    tl_array_release(two); tl_array_release(m1); tl_array_release(mn);
}

TL_TEST(test_idiv_mod_int)
{
    int64_t x[] = {7, -7, 7, -7, 7, 0, -1};
    int64_t y[] = {2, 2, -2, -2, 0, 0, 5};
    TlArray *a = i64s(7, x, NULL), *b = i64s(7, y, NULL);
    TlArray *bn = i64s(7, y, "N......"), *zero = i1(0);
    CHECK_EQ_STR(arith(TL_K_IDIV, A(a), A(b), 7), "3,-3,-3,3,N,N,0");
    CHECK_EQ_STR(arith(TL_K_MOD, A(a), A(b), 7), "1,-1,1,-1,N,N,-1");
    CHECK_EQ_STR(arith(TL_K_MOD, A(a), A(bn), 7), "N,-1,1,-1,N,N,-1");
    CHECK_EQ_STR(arith(TL_K_IDIV, A(a), S(zero), 7), "N,N,N,N,N,N,N");
    CHECK_EQ_STR(arith(TL_K_IDIV, S(zero), S(zero), 1), "N");
    tl_array_release(a); tl_array_release(b); tl_array_release(bn);
    tl_array_release(zero);
}

TL_TEST(test_float_arith)
{
    double x[] = {7, -7, 7.5, -7.5, 1, 0, -1};
    double y[] = {2, 2, 2, 2, 0, 0, 0};
    TlArray *a = f64s(7, x, NULL), *b = f64s(7, y, NULL);
    CHECK_EQ_STR(arith(TL_K_IDIV, A(a), A(b), 7), "3.5,-3.5,3.75,-3.75,N,N,N");
    CHECK_EQ_STR(arith(TL_K_DIV, A(a), A(b), 7), "3.5,-3.5,3.75,-3.75,inf,nan,-inf");
    CHECK_EQ_STR(arith(TL_K_MOD, A(a), A(b), 7), "1.0,-1.0,1.5,-1.5,nan,nan,nan");
    CHECK_EQ_STR(arith(TL_K_ADD, A(a), A(b), 7), "9.0,-5.0,9.5,-5.5,1.0,0.0,-1.0");
    CHECK_EQ_STR(arith(TL_K_MUL, A(a), A(b), 7), "14.0,-14.0,15.0,-15.0,0.0,0.0,-0.0");
    tl_array_release(a); tl_array_release(b);
}

TL_TEST(test_date_arith)
{
    int32_t d[] = {0, 19723, INT32_MAX};
    int64_t k[] = {1, -1, 1};
    TlArray *a = dates(3, d, NULL), *an = dates(3, d, "..N"), *b = i64s(3, k, NULL);
    TlDatum da = A(a), dn = A(an), db = A(b);
    TlArray *r = NULL;
    int64_t row = -1;
    CHECK_EQ_INT(tl_k_date_add(&da, &db, false, 3, &r, &row, &err), TL_ERR_DATA);
    CHECK_EQ_INT(row, 2);
    CHECK_EQ_INT(tl_k_date_add(&dn, &db, false, 3, &r, &row, &err), TL_OK);
    CHECK_EQ_STR(show(r), "1970-01-02,2023-12-31,N");
    tl_array_release(r);
    CHECK_EQ_INT(tl_k_date_add(&dn, &db, true, 3, &r, &row, &err), TL_OK);
    CHECK_EQ_STR(show(r), "1969-12-31,2024-01-02,N");
    tl_array_release(r);
    CHECK_EQ_INT(tl_k_date_diff(&dn, &da, 3, &r, &err), TL_OK);
    CHECK_EQ_STR(show(r), "0,0,N");
    tl_array_release(r);
    tl_array_release(a); tl_array_release(an); tl_array_release(b);
}

TL_TEST(test_concat)
{
    const char *x[] = {"ab", NULL, "a string longer than twelve", ""};
    const char *y[] = {"cd", "x", "!", ""};
    TlArray *a = strs(4, x), *b = strs(4, y), *s = NULL, *r = NULL;
    const char *one[] = {"-"};
    TlDatum args[3];
    s = strs(1, one);
    args[0] = A(a); args[1] = S(s); args[2] = A(b);
    CHECK_EQ_INT(tl_k_concat_str(args, 3, 4, &r, &err), TL_OK);
    CHECK_EQ_STR(show(r), "ab-cd,N,a string longer than twelve-!,-");
    tl_array_release(r);
    tl_array_release(a); tl_array_release(b); tl_array_release(s);
}

/* -------------------------------------------------------- comparison */

TL_TEST(test_compare_ints)
{
    int64_t x[] = {1, 2, 3, 4, 5}, y[] = {3, 3, 3, 3, 3};
    TlArray *a = i64s(5, x, NULL), *an = i64s(5, x, "N...N"), *b = i64s(5, y, NULL);
    TlArray *s = i1(3), *tn = tl_array_new_null(TL_TNULL, 1);
    CHECK_EQ_STR(cmp(TL_K_LT, A(a), A(b), 5), "T,T,F,F,F");
    CHECK_EQ_STR(cmp(TL_K_LE, A(a), S(s), 5), "T,T,T,F,F");
    CHECK_EQ_STR(cmp(TL_K_LT, S(s), A(a), 5), "F,F,F,T,T"); /* mirrored */
    CHECK_EQ_STR(cmp(TL_K_GE, S(s), A(an), 5), "N,T,T,F,N");
    CHECK_EQ_STR(cmp(TL_K_EQ, A(an), S(s), 5), "N,F,T,F,N");
    CHECK_EQ_STR(cmp(TL_K_NE, A(an), A(b), 5), "N,T,F,T,N");
    CHECK_EQ_STR(cmp(TL_K_GT, A(a), S(tn), 5), "N,N,N,N,N");
    CHECK_EQ_STR(cmp(TL_K_EQ, S(s), S(s), 3), "T,T,T");
    /* more than one word, with a slice at an odd offset */
    {
        int64_t big[150];
        for (int i = 0; i < 150; i++) big[i] = i;
        TlArray *bg = i64s(150, big, NULL), *sl = tl_array_slice(bg, 3, 140);
        TlArray *r = NULL, *t = i1(100);
        TlDatum d1 = A(sl), d2 = S(t);
        CHECK_EQ_INT(tl_k_compare(TL_K_GE, &d1, &d2, 140, &r, &err), TL_OK);
        CHECK_EQ_INT(tl_bitmap_count(r->values->data, r->offset, 140), 43);
        CHECK(!tl_array_bool(r, 96) && tl_array_bool(r, 97) && tl_array_bool(r, 139));
        tl_array_release(r); tl_array_release(sl); tl_array_release(bg);
        tl_array_release(t);
    }
    tl_array_release(a); tl_array_release(an); tl_array_release(b);
    tl_array_release(s); tl_array_release(tn);
}

TL_TEST(test_compare_floats)
{
    double x[] = {NAN, NAN, 1.0, -0.0, INFINITY, -INFINITY, 2.0};
    double y[] = {NAN, 1.0, NAN, 0.0, NAN, NAN, 2.0};
    TlArray *a = f64s(7, x, NULL), *b = f64s(7, y, NULL);
    CHECK_EQ_STR(cmp(TL_K_EQ, A(a), A(b), 7), "T,F,F,T,F,F,T");
    CHECK_EQ_STR(cmp(TL_K_NE, A(a), A(b), 7), "F,T,T,F,T,T,F");
    CHECK_EQ_STR(cmp(TL_K_LT, A(a), A(b), 7), "F,F,T,F,T,T,F");
    CHECK_EQ_STR(cmp(TL_K_LE, A(a), A(b), 7), "T,F,T,T,T,T,T");
    CHECK_EQ_STR(cmp(TL_K_GT, A(a), A(b), 7), "F,T,F,F,F,F,F");
    CHECK_EQ_STR(cmp(TL_K_GE, A(a), A(b), 7), "T,T,F,T,F,F,T");
    {
        TlArray *nan = f1(NAN);
        CHECK_EQ_STR(cmp(TL_K_GT, S(nan), A(a), 7), "F,F,T,T,T,T,T");
        CHECK_EQ_STR(cmp(TL_K_EQ, A(a), S(nan), 7), "T,T,F,F,F,F,F");
        tl_array_release(nan);
    }
    tl_array_release(a); tl_array_release(b);
}

TL_TEST(test_compare_strings_bools)
{
    const char *x[] = {"abc", "abd", "a long string number one", "a long string number two",
                       "", NULL, "ab"};
    const char *y[] = {"abc", "abc", "a long string number one", "a long string number one",
                       "a", "x", "abc"};
    TlArray *a = strs(7, x), *b = strs(7, y);
    CHECK_EQ_STR(cmp(TL_K_EQ, A(a), A(b), 7), "T,F,T,F,F,N,F");
    CHECK_EQ_STR(cmp(TL_K_LT, A(a), A(b), 7), "F,F,F,F,T,N,T");
    CHECK_EQ_STR(cmp(TL_K_GT, A(a), A(b), 7), "F,T,F,T,F,N,F");
    {
        const char *one[] = {"a long string number one"};
        TlArray *s = strs(1, one);
        CHECK_EQ_STR(cmp(TL_K_LE, S(s), A(a), 7), "T,T,T,T,F,N,T");
        tl_array_release(s);
    }
    {
        TlArray *p = bools("TTFFN"), *q = bools("TFTFT");
        CHECK_EQ_STR(cmp(TL_K_EQ, A(p), A(q), 5), "T,F,F,T,N");
        CHECK_EQ_STR(cmp(TL_K_LT, A(p), A(q), 5), "F,F,T,F,N");
        CHECK_EQ_STR(cmp(TL_K_GE, A(p), A(q), 5), "T,T,F,T,N");
        tl_array_release(p); tl_array_release(q);
    }
    tl_array_release(a); tl_array_release(b);
}

/* String = and <> a scalar (the view-word path) against the same scalar
 * spread into an array (the row-by-row path): 130 rows (three words, the
 * last partial) of strings that share lengths and prefixes with the
 * scalars, nulls, inline and long scalars on either side. */
TL_TEST(test_compare_string_scalar)
{
    static const char *pool[] = {"", "a", "ab", "abc", "abd", "abcdefghijkl", "abcdefghijkm",
                                 "abcdefghijklm", "abcdefghijkln", "abce", "id042", "id043",
                                 "a long string number one", NULL};
    const int npool = (int)(sizeof pool / sizeof pool[0]);
    const char *rows[130], *same[130];
    for (int i = 0; i < 130; i++) rows[i] = pool[(i * 7 + i / 13) % npool];
    for (int k = 0; k < npool - 1; k++) {
        TlArray *a = strs(130, rows), *s, *b;
        const char *one[1] = {pool[k]};
        char want[4096];
        for (int i = 0; i < 130; i++) same[i] = pool[k];
        s = strs(1, one);
        b = strs(130, same);
        for (int ne = 0; ne < 2; ne++) {
            TlKCmp op = ne ? TL_K_NE : TL_K_EQ;
            snprintf(want, sizeof want, "%s", cmp(op, A(a), A(b), 130));
            CHECK_EQ_STR(cmp(op, A(a), S(s), 130), want);
            CHECK_EQ_STR(cmp(op, S(s), A(a), 130), want);
        }
        tl_array_release(a); tl_array_release(s); tl_array_release(b);
    }
}

/* ------------------------------------------------------------- logic */

TL_TEST(test_kleene)
{
    /* all nine pairs: rows are (T,T) (T,F) (T,N) (F,T) (F,F) (F,N) (N,T) (N,F) (N,N) */
    TlArray *a = bools("TTTFFFNNN"), *b = bools("TFNTFNTFN"), *r = NULL;
    TlDatum da = A(a), db = A(b);
    CHECK_EQ_INT(tl_k_and(&da, &db, 9, &r, &err), TL_OK);
    CHECK_EQ_STR(show(r), "T,F,N,F,F,F,N,F,N");
    tl_array_release(r);
    CHECK_EQ_INT(tl_k_or(&da, &db, 9, &r, &err), TL_OK);
    CHECK_EQ_STR(show(r), "T,T,T,T,F,N,T,N,N");
    tl_array_release(r);
    CHECK_EQ_INT(tl_k_not(&db, 9, &r, &err), TL_OK);
    CHECK_EQ_STR(show(r), "F,T,N,F,T,N,F,T,N");
    tl_array_release(r);
    /* scalars and the null type */
    {
        TlArray *f = bools("F"), *t = bools("T"), *tn = tl_array_new_null(TL_TNULL, 1);
        TlDatum sf = S(f), st = S(t), sn = S(tn);
        CHECK_EQ_INT(tl_k_and(&sn, &db, 9, &r, &err), TL_OK);
        CHECK_EQ_STR(show(r), "N,F,N,N,F,N,N,F,N");
        tl_array_release(r);
        CHECK_EQ_INT(tl_k_or(&da, &st, 9, &r, &err), TL_OK);
        CHECK_EQ_STR(show(r), "T,T,T,T,T,T,T,T,T");
        tl_array_release(r);
        CHECK_EQ_INT(tl_k_and(&sf, &sn, 2, &r, &err), TL_OK);
        CHECK_EQ_STR(show(r), "F,F");
        tl_array_release(r);
        CHECK_EQ_INT(tl_k_not(&sn, 2, &r, &err), TL_OK);
        CHECK_EQ_STR(show(r), "N,N");
        tl_array_release(r);
        tl_array_release(f); tl_array_release(t); tl_array_release(tn);
    }
    /* no nulls at all: the result has no validity */
    {
        TlArray *p = bools("TTFF"), *q = bools("TFTF");
        TlDatum dp = A(p), dq = A(q);
        CHECK_EQ_INT(tl_k_and(&dp, &dq, 4, &r, &err), TL_OK);
        CHECK_EQ_STR(show(r), "T,F,F,F");
        CHECK(r->validity == NULL);
        tl_array_release(r);
        tl_array_release(p); tl_array_release(q);
    }
    tl_array_release(a); tl_array_release(b);
}

TL_TEST(test_is_null)
{
    int64_t x[] = {1, 2, 3};
    TlArray *a = i64s(3, x, NULL), *an = i64s(3, x, ".N."), *all = i64s(3, x, "NNN");
    TlArray *tn = tl_array_new_null(TL_TNULL, 1), *r = NULL;
    TlDatum d;
    d = A(a);
    CHECK_EQ_INT(tl_k_is_null(&d, false, 3, &r, &err), TL_OK);
    CHECK_EQ_STR(show(r), "F,F,F");
    tl_array_release(r);
    d = A(an);
    tl_k_is_null(&d, false, 3, &r, &err);
    CHECK_EQ_STR(show(r), "F,T,F");
    tl_array_release(r);
    tl_k_is_null(&d, true, 3, &r, &err);
    CHECK_EQ_STR(show(r), "T,F,T");
    tl_array_release(r);
    d = A(all);
    tl_k_is_null(&d, true, 3, &r, &err);
    CHECK_EQ_STR(show(r), "F,F,F");
    tl_array_release(r);
    d = S(tn);
    tl_k_is_null(&d, false, 3, &r, &err);
    CHECK_EQ_STR(show(r), "T,T,T");
    tl_array_release(r);
    {
        uint32_t *rows = NULL;
        int64_t n = 0;
        d = A(an);
        CHECK_EQ_INT(tl_k_null_rows(&d, true, 3, &rows, &n, &err), TL_OK);
        CHECK_EQ_INT(n, 1);
        CHECK(rows && rows[0] == 1);
        tl_free(rows);
        CHECK_EQ_INT(tl_k_null_rows(&d, false, 3, &rows, &n, &err), TL_OK);
        CHECK(n == 2 && rows[0] == 0 && rows[1] == 2);
        tl_free(rows);
        d = A(a);
        CHECK_EQ_INT(tl_k_null_rows(&d, true, 3, &rows, &n, &err), TL_OK);
        CHECK(n == 0 && rows == NULL);
    }
    tl_array_release(a); tl_array_release(an); tl_array_release(all);
    tl_array_release(tn);
}

/* ----------------------------------------------------------- in lists */

static const char *in_list(TlDatum x, TlArray **vals, int n_vals, bool neg,
                           int64_t n)
{
    static char buf[4096];
    TlArray *r = NULL;
    if (tl_k_in_list(&x, (const TlArray *const *)vals, n_vals, neg, n, &r,
                     &err) != TL_OK)
        return "FAILED";
    snprintf(buf, sizeof buf, "%s", show(r));
    tl_array_release(r);
    return buf;
}

TL_TEST(test_in_list)
{
    int64_t x[] = {1, 2, 3, 40, 5};
    TlArray *a = i64s(5, x, "...N.");
    TlArray *v[40];
    for (int i = 0; i < 40; i++) v[i] = i1(i * 2 + 1); /* 1, 3, 5, ... */
    TlArray *nul = tl_array_new_null(TL_TINT64, 1), *tn = tl_array_new_null(TL_TNULL, 1);
    /* chain */
    CHECK_EQ_STR(in_list(A(a), v, 2, false, 5), "T,F,T,N,F");
    CHECK_EQ_STR(in_list(A(a), v, 2, true, 5), "F,T,F,N,T");
    {
        TlArray *w[3] = {v[0], nul, v[1]};
        CHECK_EQ_STR(in_list(A(a), w, 3, false, 5), "T,N,T,N,N");
        CHECK_EQ_STR(in_list(A(a), w, 3, true, 5), "F,N,F,N,N");
        w[1] = tn;
        CHECK_EQ_STR(in_list(A(a), w, 3, false, 5), "T,N,T,N,N");
    }
    /* hash set (> 16 values) */
    CHECK_EQ_STR(in_list(A(a), v, 40, false, 5), "T,F,T,N,T");
    CHECK_EQ_STR(in_list(A(a), v, 40, true, 5), "F,T,F,N,F");
    {
        TlArray *w[41];
        for (int i = 0; i < 40; i++) w[i] = v[i];
        w[40] = nul;
        CHECK_EQ_STR(in_list(A(a), w, 41, false, 5), "T,N,T,N,T");
    }
    /* scalar x; null x */
    CHECK_EQ_STR(in_list(S(v[1]), v, 40, false, 3), "T,T,T");
    CHECK_EQ_STR(in_list(S(nul), v, 2, false, 2), "N,N");
    /* floats: NaN matches NaN, -0.0 matches 0.0 */
    {
        double fx[] = {NAN, -0.0, 1.5, 2.0};
        TlArray *fa = f64s(4, fx, NULL), *fv[20];
        fv[0] = f1(0.0);
        fv[1] = f1(NAN);
        CHECK_EQ_STR(in_list(A(fa), fv, 2, false, 4), "T,T,F,F");
        for (int i = 2; i < 20; i++) fv[i] = f1(100.0 + i);
        CHECK_EQ_STR(in_list(A(fa), fv, 20, false, 4), "T,T,F,F");
        for (int i = 0; i < 20; i++) tl_array_release(fv[i]);
        tl_array_release(fa);
    }
    /* strings: chain and set, long strings */
    {
        const char *sx[] = {"apple", "a rather long string value", "kiwi", NULL};
        TlArray *sa = strs(4, sx), *sv[30];
        char name[64];
        for (int i = 0; i < 30; i++) {
            const char *p[1];
            snprintf(name, sizeof name, "value number %d is long", i);
            p[0] = i == 7 ? "a rather long string value" : i == 3 ? "kiwi" : name;
            sv[i] = strs(1, p);
        }
        CHECK_EQ_STR(in_list(A(sa), sv, 5, false, 4), "F,F,T,N");
        CHECK_EQ_STR(in_list(A(sa), sv, 30, false, 4), "F,T,T,N");
        CHECK_EQ_STR(in_list(A(sa), sv, 30, true, 4), "T,F,F,N");
        for (int i = 0; i < 30; i++) tl_array_release(sv[i]);
        tl_array_release(sa);
    }
    for (int i = 0; i < 40; i++) tl_array_release(v[i]);
    tl_array_release(a); tl_array_release(nul); tl_array_release(tn);
}

/* -------------------------------------------------------------- casts */

static const char *cast(TlArray *a, TlType to, bool try_)
{
    static char buf[4096];
    TlArray *r = NULL;
    int64_t bad = -1;
    TlStatus st = tl_cast_array(a, to, try_, &r, &bad, &err);
    if (st == TL_ERR_DATA) {
        snprintf(buf, sizeof buf, "ERR@%lld", (long long)bad);
        return buf;
    }
    if (st != TL_OK) return "FAILED";
    snprintf(buf, sizeof buf, "%s", show(r));
    tl_array_release(r);
    return buf;
}

TL_TEST(test_cast)
{
    const char *sx[] = {"12", " -7 ", "2.5", "abc", NULL, "1e3"};
    TlArray *s = strs(6, sx);
    CHECK_EQ_STR(cast(s, TL_TINT64, false), "ERR@3");
    CHECK_EQ_STR(cast(s, TL_TINT64, true), "12,-7,3,N,N,1000");
    CHECK_EQ_STR(cast(s, TL_TFLOAT64, true), "12.0,-7.0,2.5,N,N,1000.0");
    CHECK_EQ_STR(cast(s, TL_TSTRING, false), "12, -7 ,2.5,abc,N,1e3");
    {
        double fx[] = {2.5, -2.5, 0.4999, NAN, 1e19, -9223372036854775808.0, 1.0};
        TlArray *f = f64s(7, fx, "......N");
        CHECK_EQ_STR(cast(f, TL_TINT64, false), "ERR@3");
        /* halves to even, as DuckDB (a string '2.5' rounds away: 3) */
        CHECK_EQ_STR(cast(f, TL_TINT64, true), "2,-2,0,N,N,-9223372036854775808,N");
        CHECK_EQ_STR(cast(f, TL_TBOOL, false), "T,T,T,T,T,T,N");
        CHECK_EQ_STR(cast(f, TL_TSTRING, false),
                     "2.5,-2.5,0.4999,nan,1e+19,-9.223372036854776e+18,N");
        tl_array_release(f);
    }
    {
        double fx[] = {NAN, 1};
        TlArray *f = f64s(2, fx, "N."); /* the nan is under a null: no error */
        CHECK_EQ_STR(cast(f, TL_TINT64, false), "N,1");
        tl_array_release(f);
    }
    {
        int64_t ix[] = {0, 5, -1};
        TlArray *i = i64s(3, ix, NULL);
        CHECK_EQ_STR(cast(i, TL_TBOOL, false), "F,T,T");
        CHECK_EQ_STR(cast(i, TL_TFLOAT64, false), "0.0,5.0,-1.0");
        CHECK_EQ_STR(cast(i, TL_TSTRING, false), "0,5,-1");
        tl_array_release(i);
    }
    {
        TlArray *b = bools("TFN");
        CHECK_EQ_STR(cast(b, TL_TINT64, false), "1,0,N");
        CHECK_EQ_STR(cast(b, TL_TSTRING, false), "true,false,N");
        tl_array_release(b);
    }
    {
        const char *bx[] = {"true", "FALSE", "yes", "n", "0", "maybe"};
        TlArray *b = strs(6, bx);
        CHECK_EQ_STR(cast(b, TL_TBOOL, true), "T,F,T,F,F,N");
        CHECK_EQ_STR(cast(b, TL_TBOOL, false), "ERR@5");
        tl_array_release(b);
    }
    {
        const char *dx[] = {"2024-01-31", "2024-02-30", "2024-03-01 10:00:00"};
        TlArray *d = strs(3, dx);
        CHECK_EQ_STR(cast(d, TL_TDATE, true), "2024-01-31,N,N");
        CHECK_EQ_STR(cast(d, TL_TTIMESTAMP, true),
                     "2024-01-31 00:00:00,N,2024-03-01 10:00:00");
        tl_array_release(d);
    }
    {
        int32_t dv[] = {0, -1, 19753};
        TlArray *d = dates(3, dv, NULL), *ts = NULL, *back = NULL;
        int64_t bad;
        CHECK_EQ_STR(cast(d, TL_TTIMESTAMP, false),
                     "1970-01-01 00:00:00,1969-12-31 00:00:00,2024-01-31 00:00:00");
        CHECK_EQ_INT(tl_cast_array(d, TL_TTIMESTAMP, false, &ts, &bad, &err), TL_OK);
        CHECK_EQ_INT(tl_cast_array(ts, TL_TDATE, false, &back, &bad, &err), TL_OK);
        CHECK_EQ_STR(show(back), "1970-01-01,1969-12-31,2024-01-31");
        tl_array_release(ts); tl_array_release(back);
        tl_array_release(d);
    }
    {
        int64_t tv[] = {-1, 86399999999, 86400000000};
        TlBuilder b;
        TlArray *t;
        tl_builder_init(&b, TL_TTIMESTAMP);
        for (int i = 0; i < 3; i++) tl_builder_append_i64(&b, tv[i]);
        t = tl_builder_finish(&b);
        tl_builder_free(&b);
        CHECK_EQ_STR(cast(t, TL_TDATE, false), "1969-12-31,1970-01-01,1970-01-02");
        CHECK_EQ_STR(cast(t, TL_TSTRING, false),
                     "1969-12-31 23:59:59.999999,1970-01-01 23:59:59.999999,"
                     "1970-01-02 00:00:00");
        tl_array_release(t);
    }
    {
        TlArray *tn = tl_array_new_null(TL_TNULL, 2);
        CHECK_EQ_STR(cast(tn, TL_TDATE, false), "N,N");
        tl_array_release(tn);
    }
    CHECK(tl_k_cast_allowed(TL_TSTRING, TL_TDATE));
    CHECK(!tl_k_cast_allowed(TL_TBOOL, TL_TDATE));
    CHECK(!tl_k_cast_allowed(TL_TINT64, TL_TTIMESTAMP));
    CHECK(tl_k_cast_allowed(TL_TNULL, TL_TBOOL));
    tl_array_release(s);
}

/* ---------------------------------------------------------- selection */

TL_TEST(test_selection)
{
    TlArray *b = bools("TFNTTNFT"), *r = NULL;
    TlDatum d = A(b);
    uint32_t *sel = NULL, *t = NULL, *f = NULL;
    int64_t n = 0, nt = 0, nf = 0;
    CHECK_EQ_INT(tl_k_sel_true(&d, 8, &sel, &n, &err), TL_OK);
    CHECK(n == 4 && sel && sel[0] == 0 && sel[1] == 3 && sel[2] == 4 && sel[3] == 7);
    tl_free(sel);
    CHECK_EQ_INT(tl_k_partition(&d, 8, &t, &nt, &f, &nf, &err), TL_OK);
    CHECK(nt == 4 && nf == 4 && f[0] == 1 && f[1] == 2 && f[2] == 5 && f[3] == 6);
    {
        /* scatter: a string array on the true rows, a scalar on the rest */
        const char *v[] = {"a string longer than 12 #1", "b", NULL, "another long string #2"};
        const char *one[] = {"scalar that is also long"};
        TlArray *sv = strs(4, v), *sc = strs(1, one);
        TlKPart parts[2] = {{{sv, false}, t, nt}, {{sc, true}, f, nf}};
        CHECK_EQ_INT(tl_k_scatter(TL_TSTRING, 8, parts, 2, &r, &err), TL_OK);
        CHECK_EQ_STR(show(r), "a string longer than 12 #1,scalar that is also long,"
                              "scalar that is also long,b,N,scalar that is also long,"
                              "scalar that is also long,another long string #2");
        tl_array_release(r);
        /* only part of the rows covered: the rest is null */
        CHECK_EQ_INT(tl_k_scatter(TL_TSTRING, 8, parts, 1, &r, &err), TL_OK);
        CHECK_EQ_STR(show(r), "a string longer than 12 #1,N,N,b,N,N,N,another long string #2");
        tl_array_release(r);
        tl_array_release(sv); tl_array_release(sc);
    }
    {
        int64_t x[] = {1, 2, 3, 4};
        TlArray *iv = i64s(4, x, NULL), *tn = tl_array_new_null(TL_TNULL, 1);
        TlKPart parts[2] = {{{iv, false}, t, nt}, {{tn, true}, f, nf}};
        CHECK_EQ_INT(tl_k_scatter(TL_TINT64, 8, parts, 2, &r, &err), TL_OK);
        CHECK_EQ_STR(show(r), "1,N,N,2,3,N,N,4");
        tl_array_release(r);
        /* a later part overwrites an earlier one (coalesce) */
        TlKPart p2[2] = {{{iv, false}, t, nt}, {{iv, false}, t, 2}};
        CHECK_EQ_INT(tl_k_scatter(TL_TINT64, 8, p2, 2, &r, &err), TL_OK);
        CHECK_EQ_STR(show(r), "1,N,N,2,3,N,N,4");
        tl_array_release(r);
        tl_array_release(iv); tl_array_release(tn);
    }
    {
        TlArray *bb = bools("TF"), *r2 = NULL;
        TlKPart parts[1] = {{{bb, false}, f, 2}};
        CHECK_EQ_INT(tl_k_scatter(TL_TBOOL, 8, parts, 1, &r2, &err), TL_OK);
        CHECK_EQ_STR(show(r2), "N,T,F,N,N,N,N,N");
        tl_array_release(r2); tl_array_release(bb);
    }
    tl_free(t); tl_free(f);
    {
        /* all true -> no list; scalar false -> nothing */
        TlArray *all = bools("TTT"), *sf = bools("F");
        d = A(all);
        CHECK_EQ_INT(tl_k_sel_true(&d, 3, &sel, &n, &err), TL_OK);
        CHECK(n == 3 && sel == NULL);
        d = S(sf);
        CHECK_EQ_INT(tl_k_sel_true(&d, 3, &sel, &n, &err), TL_OK);
        CHECK(n == 0 && sel == NULL);
        tl_array_release(all); tl_array_release(sf);
    }
    {
        TlArray *s1 = i1(7), *bc = tl_k_broadcast(s1, 3);
        CHECK_EQ_STR(show(bc), "7,7,7");
        tl_array_release(bc); tl_array_release(s1);
    }
    tl_array_release(b);
}

int main(void)
{
    TL_RUN(test_add_null_paths);
    TL_RUN(test_overflow);
    TL_RUN(test_idiv_mod_int);
    TL_RUN(test_float_arith);
    TL_RUN(test_date_arith);
    TL_RUN(test_concat);
    TL_RUN(test_compare_ints);
    TL_RUN(test_compare_floats);
    TL_RUN(test_compare_strings_bools);
    TL_RUN(test_compare_string_scalar);
    TL_RUN(test_kleene);
    TL_RUN(test_is_null);
    TL_RUN(test_in_list);
    TL_RUN(test_cast);
    TL_RUN(test_selection);
    return tl_test_summary(__FILE__);
}
