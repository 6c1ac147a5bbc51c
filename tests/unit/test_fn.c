/*
 * test_fn.c -- the scalar function kernels (kernels/fn*.c): math, strings,
 * dates and LIKE, each with no-null, all-null and some-null inputs, scalar
 * and array arguments, error rows, and out-of-memory at every allocation.
 */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "../../kernels/fn.h"
#include "../../lib/core/text.h"
#include "tl_test.h"

/* ------------------------------------------------------------ builders */

#define NUL_I INT64_MIN /* marks a null in int test vectors */

static TlArray *mk_i64(const int64_t *v, int n)
{
    TlBuilder b;
    tl_builder_init(&b, TL_TINT64);
    for (int i = 0; i < n; i++) {
        if (v[i] == NUL_I) tl_builder_append_null(&b);
        else tl_builder_append_i64(&b, v[i]);
    }
    TlArray *a = tl_builder_finish(&b);
    tl_builder_free(&b);
    return a;
}

/* An int64 array that really holds INT64_MIN (no null marker). */
static TlArray *mk_i64_raw(const int64_t *v, const bool *valid, int n)
{
    TlBuilder b;
    tl_builder_init(&b, TL_TINT64);
    for (int i = 0; i < n; i++) {
        if (valid && !valid[i]) tl_builder_append_null(&b);
        else tl_builder_append_i64(&b, v[i]);
    }
    TlArray *a = tl_builder_finish(&b);
    tl_builder_free(&b);
    return a;
}

static TlArray *mk_ts(const int64_t *v, int n)
{
    TlArray *a = mk_i64(v, n);
    a->type = TL_TTIMESTAMP;
    return a;
}

static TlArray *mk_f64(const double *v, const bool *valid, int n)
{
    TlBuilder b;
    tl_builder_init(&b, TL_TFLOAT64);
    for (int i = 0; i < n; i++) {
        if (valid && !valid[i]) tl_builder_append_null(&b);
        else tl_builder_append_f64(&b, v[i]);
    }
    TlArray *a = tl_builder_finish(&b);
    tl_builder_free(&b);
    return a;
}

static TlArray *mk_date(const int32_t *v, const bool *valid, int n)
{
    TlBuilder b;
    tl_builder_init(&b, TL_TDATE);
    for (int i = 0; i < n; i++) {
        if (valid && !valid[i]) tl_builder_append_null(&b);
        else tl_builder_append_i32(&b, v[i]);
    }
    TlArray *a = tl_builder_finish(&b);
    tl_builder_free(&b);
    return a;
}

/* NULL entries are nulls. */
static TlArray *mk_str(const char *const *v, int n)
{
    TlBuilder b;
    tl_builder_init(&b, TL_TSTRING);
    for (int i = 0; i < n; i++) {
        if (!v[i]) tl_builder_append_null(&b);
        else tl_builder_append_str(&b, v[i], strlen(v[i]));
    }
    TlArray *a = tl_builder_finish(&b);
    tl_builder_free(&b);
    return a;
}

static TlArray *mk_str1(const char *s) { return mk_str(&s, 1); }
static TlArray *mk_i1(int64_t v) { return mk_i64_raw(&v, NULL, 1); }
static TlArray *mk_null(int n) { return tl_array_new_null(TL_TNULL, n); }

static TlDatum arr(TlArray *a) { return (TlDatum){a, false}; }
static TlDatum sc(TlArray *a) { return (TlDatum){a, true}; }

static void release_args(TlDatum *d, int n)
{
    for (int i = 0; i < n; i++) tl_array_release((TlArray *)d[i].array);
}

static TlError g_err;
static int64_t g_err_row;

/* Call function `name`; releases the argument arrays.  NULL on error
 * (g_err / g_err_row then hold it). */
static TlArray *call(const char *name, TlDatum *args, int n_args, int64_t n_rows)
{
    TlFnKernel k = tl_k_fn_by_name(name);
    TlArray *out = NULL;
    g_err_row = -1;
    memset(&g_err, 0, sizeof g_err);
    if (!k) {
        fprintf(stderr, "no kernel %s\n", name);
        release_args(args, n_args);
        return NULL;
    }
    TlStatus st = k(args, n_args, n_rows, &out, &g_err_row, &g_err);
    release_args(args, n_args);
    if (st != TL_OK) {
        g_err.code = st;
        return NULL;
    }
    if (out && out->length != n_rows) {
        fprintf(stderr, "%s: length %lld != %lld\n", name,
                (long long)out->length, (long long)n_rows);
    }
    return out;
}

/* Element i as text ("NULL" for null), in a rotating static buffer. */
static const char *txt(const TlArray *a, int64_t i)
{
    static char bufs[8][4096];
    static int k;
    char *b = bufs[k++ & 7];
    if (!a) return "(no array)";
    if (!tl_array_valid(a, i)) return "NULL";
    switch (a->type) {
    case TL_TSTRING: {
        const TlView *v = &tl_array_views(a)[i];
        size_t n = tl_view_len(*v);
        if (n > 4095) n = 4095;
        memcpy(b, tl_view_ptr(v, a->data), n);
        b[n] = 0;
        return b;
    }
    case TL_TINT64: tl_fmt_i64(tl_array_i64(a)[i], b); return b;
    case TL_TFLOAT64: tl_fmt_f64(tl_array_f64(a)[i], b); return b;
    case TL_TBOOL: return tl_array_bool(a, i) ? "true" : "false";
    case TL_TDATE: tl_fmt_date(tl_array_i32(a)[i], b); return b;
    case TL_TTIMESTAMP: tl_fmt_timestamp(tl_array_i64(a)[i], b); return b;
    default: return "NULL";
    }
}

/* Check every element of a against the texts want[0..n). */
#define CHECK_TEXTS(a, ...)                                                    \
    do {                                                                       \
        const char *w_[] = {__VA_ARGS__};                                      \
        int n_ = (int)(sizeof w_ / sizeof w_[0]);                              \
        CHECK((a) != NULL);                                                    \
        if (a) {                                                               \
            CHECK_EQ_INT((a)->length, n_);                                     \
            for (int i_ = 0; i_ < n_ && i_ < (a)->length; i_++)                \
                CHECK_EQ_STR(txt((a), i_), w_[i_]);                            \
        }                                                                      \
    } while (0)

/* One-row call with all-scalar args -> text of the result. */
static const char *one(const char *name, TlDatum *args, int n)
{
    TlArray *r = call(name, args, n, 1);
    const char *t = r ? txt(r, 0) : "ERROR";
    static char b[4096];
    snprintf(b, sizeof b, "%s", t);
    tl_array_release(r);
    return b;
}

static const char *s3(const char *f, const char *a, int64_t b, int64_t c, int n)
{
    TlDatum d[3] = {sc(mk_str1(a)), sc(mk_i1(b)), sc(mk_i1(c))};
    if (n < 3) release_args(d + n, 3 - n);
    return one(f, d, n);
}

static const char *str1(const char *f, const char *a)
{
    TlDatum d[1] = {sc(mk_str1(a))};
    return one(f, d, 1);
}

static const char *str2(const char *f, const char *a, const char *b)
{
    TlDatum d[2] = {sc(mk_str1(a)), sc(mk_str1(b))};
    return one(f, d, 2);
}

static const char *str3(const char *f, const char *a, const char *b, const char *c)
{
    TlDatum d[3] = {sc(mk_str1(a)), sc(mk_str1(b)), sc(mk_str1(c))};
    return one(f, d, 3);
}

/* ------------------------------------------------------------ registry */

TL_TEST(test_registry)
{
    static const char *names[] = {
        "abs", "round", "floor", "ceil", "sqrt", "ln", "exp", "pow",
        "length", "lower", "upper", "trim", "ltrim", "rtrim", "substr",
        "replace", "contains", "starts_with", "ends_with", "split_part",
        "concat", "year", "month", "day", "hour", "minute", "second",
        "date_trunc", "like"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        CHECK(tl_k_fn_by_name(names[i]) != NULL);
    CHECK(tl_k_fn_by_name("sum") == NULL);
    CHECK(tl_k_fn_by_name("ABS") == NULL);
    CHECK(tl_k_fn_by_name(NULL) == NULL);

    TlType r, w[4];
    TlType i1[] = {TL_TINT64}, f1[] = {TL_TFLOAT64}, s1[] = {TL_TSTRING};
    CHECK(tl_k_fn_types("abs", i1, 1, &r, w) && r == TL_TINT64 && w[0] == TL_TINT64);
    CHECK(tl_k_fn_types("abs", f1, 1, &r, w) && r == TL_TFLOAT64);
    CHECK(!tl_k_fn_types("abs", s1, 1, &r, w));
    CHECK(!tl_k_fn_types("abs", i1, 2, &r, w));
    CHECK(tl_k_fn_types("sqrt", i1, 1, &r, w) && r == TL_TFLOAT64 && w[0] == TL_TFLOAT64);
    TlType ii[] = {TL_TINT64, TL_TINT64}, fi[] = {TL_TFLOAT64, TL_TINT64};
    TlType ff[] = {TL_TFLOAT64, TL_TFLOAT64};
    CHECK(tl_k_fn_types("round", ii, 2, &r, w) && r == TL_TINT64);
    CHECK(tl_k_fn_types("round", fi, 2, &r, w) && r == TL_TFLOAT64 && w[1] == TL_TINT64);
    CHECK(!tl_k_fn_types("round", ff, 2, &r, w));
    CHECK(tl_k_fn_types("pow", ii, 2, &r, w) && w[0] == TL_TFLOAT64 && w[1] == TL_TFLOAT64);
    TlType n1[] = {TL_TNULL};
    CHECK(tl_k_fn_types("floor", n1, 1, &r, w) && r == TL_TINT64);
    CHECK(tl_k_fn_types("length", s1, 1, &r, w) && r == TL_TINT64);
    CHECK(!tl_k_fn_types("length", i1, 1, &r, w));
    TlType sii[] = {TL_TSTRING, TL_TINT64, TL_TINT64};
    CHECK(tl_k_fn_types("substr", sii, 3, &r, w) && r == TL_TSTRING);
    CHECK(tl_k_fn_types("substr", sii, 2, &r, w));
    CHECK(!tl_k_fn_types("substr", sii, 1, &r, w));
    TlType ssf[] = {TL_TSTRING, TL_TSTRING, TL_TFLOAT64};
    CHECK(!tl_k_fn_types("split_part", ssf, 3, &r, w));
    TlType mix[] = {TL_TINT64, TL_TDATE, TL_TNULL, TL_TBOOL};
    CHECK(tl_k_fn_types("concat", mix, 4, &r, w) && r == TL_TSTRING &&
          w[0] == TL_TSTRING && w[1] == TL_TSTRING && w[3] == TL_TSTRING);
    CHECK(!tl_k_fn_types("concat", mix, 0, &r, w));
    TlType d1[] = {TL_TDATE}, t1[] = {TL_TTIMESTAMP};
    CHECK(tl_k_fn_types("year", d1, 1, &r, w) && r == TL_TINT64 && w[0] == TL_TDATE);
    CHECK(tl_k_fn_types("hour", t1, 1, &r, w) && r == TL_TINT64);
    CHECK(!tl_k_fn_types("year", s1, 1, &r, w));
    TlType sd[] = {TL_TSTRING, TL_TDATE};
    CHECK(tl_k_fn_types("date_trunc", sd, 2, &r, w) && r == TL_TTIMESTAMP);
    TlType ss[] = {TL_TSTRING, TL_TSTRING};
    CHECK(tl_k_fn_types("like", ss, 2, &r, w) && r == TL_TBOOL);
    CHECK(tl_k_fn_types("contains", ss, 2, &r, w) && r == TL_TBOOL);
    CHECK(!tl_k_fn_types("nope", ss, 2, &r, w));
}

/* ---------------------------------------------------------------- math */

TL_TEST(test_abs)
{
    int64_t v[] = {-3, 0, 5, NUL_I, -9};
    TlDatum d[1] = {arr(mk_i64(v, 5))};
    TlArray *r = call("abs", d, 1, 5);
    CHECK_TEXTS(r, "3", "0", "5", "NULL", "9");
    CHECK(r && r->type == TL_TINT64 && r->null_count == 1);
    tl_array_release(r);

    double f[] = {-1.5, 2.0, -0.0};
    d[0] = arr(mk_f64(f, NULL, 3));
    r = call("abs", d, 1, 3);
    CHECK_TEXTS(r, "1.5", "2.0", "0.0");
    CHECK(r && r->validity == NULL);
    tl_array_release(r);

    /* all null: type null and an int column of nulls */
    d[0] = arr(mk_null(3));
    r = call("abs", d, 1, 3);
    CHECK_TEXTS(r, "NULL", "NULL", "NULL");
    CHECK(r && r->null_count == 3);
    tl_array_release(r);
    int64_t nn[] = {NUL_I, NUL_I};
    d[0] = arr(mk_i64(nn, 2));
    r = call("abs", d, 1, 2);
    CHECK_TEXTS(r, "NULL", "NULL");
    tl_array_release(r);

    /* scalar broadcast */
    d[0] = sc(mk_i1(-7));
    r = call("abs", d, 1, 4);
    CHECK_TEXTS(r, "7", "7", "7", "7");
    tl_array_release(r);

    /* overflow: error at the first non-null INT64_MIN */
    int64_t o[] = {1, INT64_MIN, 2, INT64_MIN};
    bool ov[] = {true, false, true, true};
    d[0] = arr(mk_i64_raw(o, ov, 4));
    r = call("abs", d, 1, 4);
    CHECK(r == NULL);
    CHECK_EQ_INT(g_err.code, TL_ERR_DATA);
    CHECK_EQ_INT(g_err_row, 3);
    CHECK_EQ_STR(g_err.msg, "integer overflow");
    /* ... but not when that slot is null */
    bool ov2[] = {true, false, true, false};
    d[0] = arr(mk_i64_raw(o, ov2, 4));
    r = call("abs", d, 1, 4);
    CHECK_TEXTS(r, "1", "NULL", "2", "NULL");
    tl_array_release(r);
}

TL_TEST(test_round_floor_ceil)
{
    double f[] = {2.5, -2.5, 1.2345, -0.4, 1e300, NAN};
    TlDatum d[2] = {arr(mk_f64(f, NULL, 6))};
    TlArray *r = call("round", d, 1, 6);
    CHECK_TEXTS(r, "3.0", "-3.0", "1.0", "-0.0", "1e+300", "nan");
    tl_array_release(r);

    d[0] = arr(mk_f64(f, NULL, 6));
    d[1] = sc(mk_i1(2));
    r = call("round", d, 2, 6);
    CHECK_TEXTS(r, "2.5", "-2.5", "1.23", "-0.4", "1e+300", "nan");
    tl_array_release(r);

    double g[] = {1234.5, -1250.0};
    d[0] = arr(mk_f64(g, NULL, 2));
    d[1] = sc(mk_i1(-2));
    r = call("round", d, 2, 2);
    CHECK_TEXTS(r, "1200.0", "-1300.0");
    tl_array_release(r);

    int64_t iv[] = {15, -15, 1234, NUL_I, 0};
    d[0] = arr(mk_i64(iv, 5));
    d[1] = sc(mk_i1(-1));
    r = call("round", d, 2, 5);
    CHECK_TEXTS(r, "20", "-20", "1230", "NULL", "0");
    CHECK(r && r->type == TL_TINT64);
    tl_array_release(r);

    d[0] = arr(mk_i64(iv, 5));
    r = call("round", d, 1, 5);
    CHECK_TEXTS(r, "15", "-15", "1234", "NULL", "0");
    tl_array_release(r);

    /* per-row digits, some null */
    int64_t dg[] = {0, 1, NUL_I, -2, 50};
    d[0] = arr(mk_i64(iv, 5));
    d[1] = arr(mk_i64(dg, 5));
    r = call("round", d, 2, 5);
    CHECK_TEXTS(r, "15", "-15", "NULL", "NULL", "0");
    tl_array_release(r);

    int64_t big[] = {INT64_MAX};
    d[0] = arr(mk_i64(big, 1));
    d[1] = sc(mk_i1(-3));
    CHECK(call("round", d, 2, 1) == NULL);
    CHECK_EQ_STR(g_err.msg, "integer overflow");
    CHECK_EQ_INT(g_err_row, 0);
    d[0] = arr(mk_i64(big, 1));
    d[1] = sc(mk_i1(-60));
    r = call("round", d, 2, 1);
    CHECK_TEXTS(r, "0");
    tl_array_release(r);

    /* round with a null digits scalar: all null */
    d[0] = arr(mk_i64(iv, 5));
    d[1] = sc(mk_null(1));
    r = call("round", d, 2, 5);
    CHECK(r && r->null_count == 5);
    tl_array_release(r);

    double h[] = {1.5, -1.5, -0.5};
    bool hv[] = {true, true, false};
    d[0] = arr(mk_f64(h, hv, 3));
    r = call("floor", d, 1, 3);
    CHECK_TEXTS(r, "1.0", "-2.0", "NULL");
    tl_array_release(r);
    d[0] = arr(mk_f64(h, hv, 3));
    r = call("ceil", d, 1, 3);
    CHECK_TEXTS(r, "2.0", "-1.0", "NULL");
    tl_array_release(r);
    TlArray *ints = mk_i64(iv, 5);
    d[0] = arr(tl_array_retain(ints));
    r = call("ceil", d, 1, 5);
    CHECK_TEXTS(r, "15", "-15", "1234", "NULL", "0");
    CHECK(r == ints); /* shared, not copied */
    tl_array_release(r);
    tl_array_release(ints);
}

TL_TEST(test_sqrt_ln_exp_pow)
{
    double f[] = {4.0, 2.25, 0.0, NAN, INFINITY};
    TlDatum d[2] = {arr(mk_f64(f, NULL, 5))};
    TlArray *r = call("sqrt", d, 1, 5);
    CHECK_TEXTS(r, "2.0", "1.5", "0.0", "nan", "inf");
    tl_array_release(r);

    double n[] = {4.0, -1.0, -4.0};
    bool nv[] = {true, false, true};
    d[0] = arr(mk_f64(n, nv, 3));
    CHECK(call("sqrt", d, 1, 3) == NULL);
    CHECK_EQ_INT(g_err.code, TL_ERR_DATA);
    CHECK_EQ_INT(g_err_row, 2);
    CHECK_EQ_STR(g_err.msg, "cannot take the square root of a negative number");
    bool nv2[] = {true, false, false};
    d[0] = arr(mk_f64(n, nv2, 3));
    r = call("sqrt", d, 1, 3);
    CHECK_TEXTS(r, "2.0", "NULL", "NULL");
    tl_array_release(r);

    double e[] = {1.0, M_E, 0.0};
    d[0] = arr(mk_f64(e, NULL, 2));
    r = call("ln", d, 1, 2);
    CHECK_TEXTS(r, "0.0", "1.0");
    tl_array_release(r);
    d[0] = arr(mk_f64(e, NULL, 3));
    CHECK(call("ln", d, 1, 3) == NULL);
    CHECK_EQ_INT(g_err_row, 2);
    CHECK_EQ_STR(g_err.msg, "cannot take the logarithm of zero");
    d[0] = sc(mk_f64(n + 1, NULL, 1));
    CHECK(call("ln", d, 1, 7) == NULL);
    CHECK_EQ_INT(g_err_row, 0);
    CHECK_EQ_STR(g_err.msg, "cannot take the logarithm of a negative number");

    double z[] = {0.0, 1.0};
    d[0] = arr(mk_f64(z, NULL, 2));
    r = call("exp", d, 1, 2);
    CHECK_TEXTS(r, "1.0", "2.718281828459045");
    tl_array_release(r);

    double b[] = {2.0, 9.0, -8.0, 3.0};
    bool bv[] = {true, true, true, false};
    d[0] = arr(mk_f64(b, bv, 4));
    d[1] = sc(mk_f64((double[]){0.5}, NULL, 1));
    r = call("pow", d, 2, 4);
    CHECK_TEXTS(r, "1.4142135623730951", "3.0", "nan", "NULL");
    tl_array_release(r);
    double ex[] = {10.0, 0.0, 2.0, 1.0};
    bool exv[] = {true, true, false, true};
    d[0] = sc(mk_f64(b, NULL, 1));
    d[1] = arr(mk_f64(ex, exv, 4));
    r = call("pow", d, 2, 4);
    CHECK_TEXTS(r, "1024.0", "1.0", "NULL", "2.0");
    tl_array_release(r);
    d[0] = arr(mk_f64(b, bv, 4));
    d[1] = arr(mk_f64(ex, exv, 4));
    r = call("pow", d, 2, 4);
    CHECK_TEXTS(r, "1024.0", "1.0", "NULL", "NULL");
    tl_array_release(r);
    d[0] = arr(mk_f64(b, bv, 4));
    d[1] = sc(mk_null(1));
    r = call("pow", d, 2, 4);
    CHECK_TEXTS(r, "NULL", "NULL", "NULL", "NULL");
    CHECK(r && r->type == TL_TFLOAT64);
    tl_array_release(r);
}

/* ------------------------------------------------------------- strings */

TL_TEST(test_length_case)
{
    const char *v[] = {"hello", "héllo", "日本語", "", NULL, "a long string with ü in it"};
    TlDatum d[1] = {arr(mk_str(v, 6))};
    TlArray *r = call("length", d, 1, 6);
    CHECK_TEXTS(r, "5", "5", "3", "0", "NULL", "26");
    tl_array_release(r);

    d[0] = arr(mk_str(v, 6));
    r = call("upper", d, 1, 6);
    CHECK_TEXTS(r, "HELLO", "HÉLLO", "日本語", "", "NULL", "A LONG STRING WITH Ü IN IT");
    tl_array_release(r);

    CHECK_EQ_STR(str1("lower", "ÀÉÎÕÜ Straße ÆØÅ"), "àéîõü straße æøå");
    CHECK_EQ_STR(str1("upper", "àéîõü straße æøåÿ"), "ÀÉÎÕÜ STRAẞE ÆØÅŸ"); /* ß -> ẞ grows */
    CHECK_EQ_STR(str1("upper", "ǅ ǆ ⓐ ꙁ"), "Ǆ Ǆ Ⓐ Ꙁ");
    CHECK_EQ_STR(str1("lower", "ǅ ẞ Ⓐ 𐐀"), "ǆ ß ⓐ 𐐨");
    CHECK_EQ_STR(str1("upper", "ΑΒΓ αβγ άέήίόύώ ς"), "ΑΒΓ ΑΒΓ ΆΈΉΊΌΎΏ Σ");
    CHECK_EQ_STR(str1("lower", "ΆΈΉΊΌΎΏ ΣΩ"), "άέήίόύώ σω");
    CHECK_EQ_STR(str1("upper", "Привет, мир! ёж"), "ПРИВЕТ, МИР! ЁЖ");
    CHECK_EQ_STR(str1("lower", "ПРИВЕТ ЁЖ Ґ"), "привет ёж ґ");
    CHECK_EQ_STR(str1("upper", "ąćęłńśźż ĳ ŀ"), "ĄĆĘŁŃŚŹŻ Ĳ Ŀ");
    CHECK_EQ_STR(str1("lower", "ĄĆĘŁŃŚŹŻ İ"), "ąćęłńśźż i");
    CHECK_EQ_STR(str1("upper", "ı ſ"), "I S");
    CHECK_EQ_STR(str1("lower", "MiXeD 123 ÿ"), "mixed 123 ÿ");
    CHECK_EQ_STR(str1("upper", "x\xff\xc3y"), "X\xff\xc3Y"); /* bad UTF-8 kept */
    CHECK_EQ_STR(str1("length", "\xff\xfe"), "2");

    /* unchanged long strings are shared, changed ones are new */
    const char *w[] = {"already lower case text", "Needs Lowering Here!!"};
    TlArray *in = mk_str(w, 2);
    d[0] = arr(tl_array_retain(in));
    r = call("lower", d, 1, 2);
    CHECK_TEXTS(r, "already lower case text", "needs lowering here!!");
    if (r) {
        const TlView *rv = tl_array_views(r), *iv = tl_array_views(in);
        CHECK(r->data[rv[0].out.buf]->data == in->data[iv[0].out.buf]->data);
        CHECK(r->data[rv[1].out.buf]->data != in->data[iv[1].out.buf]->data);
    }
    tl_array_release(r);
    tl_array_release(in);

    d[0] = arr(mk_null(2));
    r = call("lower", d, 1, 2);
    CHECK_TEXTS(r, "NULL", "NULL");
    CHECK(r && r->type == TL_TSTRING);
    tl_array_release(r);
}

/* Every ASCII byte at every position of strings of 0..40 bytes: the
 * word-at-a-time case mapping and UTF-8 counting agree with byte loops. */
TL_TEST(test_case_length_exhaustive)
{
    char buf[64], want_up[64], want_lo[64];
    const char *pieces[] = {"a", "Z", "é", "日", "!", "`", "{", "@", "[", "𝄞"};
    unsigned seed = 7;
    for (int len = 0; len <= 40; len++) {
        for (int rep = 0; rep < 20; rep++) {
            int n = 0, chars = 0;
            while (n < len) {
                const char *pc;
                if (rep < 10) {
                    char c = (char)(1 + ((seed = seed * 1103515245u + 12345u) >> 16) % 127);
                    buf[n] = c;
                    n++;
                    chars++;
                    continue;
                }
                pc = pieces[((seed = seed * 1103515245u + 12345u) >> 16) % 10];
                if (n + (int)strlen(pc) > len) break;
                memcpy(buf + n, pc, strlen(pc));
                n += (int)strlen(pc);
                chars++;
            }
            buf[n] = 0;
            for (int i = 0; i <= n; i++) {
                unsigned char c = (unsigned char)buf[i];
                want_up[i] = (char)((c >= 'a' && c <= 'z') ? c - 32 : c);
                want_lo[i] = (char)((c >= 'A' && c <= 'Z') ? c + 32 : c);
            }
            /* é and 日: only é has a case mapping among the pieces */
            char *q;
            while ((q = strstr(want_up, "é"))) memcpy(q, "É", 2);
            char lenbuf[32];
            snprintf(lenbuf, sizeof lenbuf, "%d", chars);
            const char *u = str1("upper", buf);
            if (strcmp(u, want_up) != 0) {
                CHECK_EQ_STR(u, want_up);
                return;
            }
            const char *l = str1("lower", buf);
            if (strcmp(l, want_lo) != 0) {
                CHECK_EQ_STR(l, want_lo);
                return;
            }
            const char *ln = str1("length", buf);
            if (strcmp(ln, lenbuf) != 0) {
                CHECK_EQ_STR(ln, lenbuf);
                return;
            }
        }
    }
}

TL_TEST(test_trim)
{
    const char *v[] = {"  a b  ", "x", "   ", NULL, "\t tab\t ", "\xc2\xa0nbsp\xe3\x80\x80",
                       "      a longer string that is out of line      "};
    TlArray *in = mk_str(v, 7);
    TlDatum d[2] = {arr(tl_array_retain(in))};
    TlArray *r = call("trim", d, 1, 7);
    CHECK_TEXTS(r, "a b", "x", "", "NULL", "\t tab\t", "nbsp",
                "a longer string that is out of line");
    if (r) { /* the long piece is a view into the input's block */
        const TlView *rv = tl_array_views(r), *iv = tl_array_views(in);
        CHECK(tl_view_len(rv[6]) > 12);
        CHECK(r->data[rv[6].out.buf] == in->data[iv[6].out.buf]);
        CHECK_EQ_INT(rv[6].out.off, iv[6].out.off + 6);
    }
    tl_array_release(r);
    d[0] = arr(tl_array_retain(in));
    r = call("ltrim", d, 1, 7);
    CHECK_TEXTS(r, "a b  ", "x", "", "NULL", "\t tab\t ", "nbsp\xe3\x80\x80",
                "a longer string that is out of line      ");
    tl_array_release(r);
    d[0] = arr(in);
    r = call("rtrim", d, 1, 7);
    CHECK_TEXTS(r, "  a b", "x", "", "NULL", "\t tab\t", "\xc2\xa0nbsp",
                "      a longer string that is out of line");
    tl_array_release(r);

    CHECK_EQ_STR(str2("trim", "xxhixyx", "xy"), "hi");
    CHECK_EQ_STR(str2("ltrim", "xxhixyx", "xy"), "hixyx");
    CHECK_EQ_STR(str2("rtrim", "xxhixyx", "xy"), "xxhi");
    CHECK_EQ_STR(str2("trim", "ééaéé", "é"), "a");
    CHECK_EQ_STR(str2("trim", "éaé", "e"), "éaé");
    CHECK_EQ_STR(str2("trim", "aaa", "a"), "");
    CHECK_EQ_STR(str2("trim", "abc", ""), "abc");
    CHECK_EQ_STR(str2("rtrim", "ab\xff", "\xff"), "ab");

    /* per-row characters, some null */
    const char *s[] = {"--a--", "++b++", "..c..", "zz"};
    const char *c[] = {"-", "+", NULL, "z"};
    d[0] = arr(mk_str(s, 4));
    d[1] = arr(mk_str(c, 4));
    r = call("trim", d, 2, 4);
    CHECK_TEXTS(r, "a", "b", "NULL", "");
    tl_array_release(r);
    d[0] = arr(mk_str(s, 4));
    d[1] = sc(mk_null(1));
    r = call("trim", d, 2, 4);
    CHECK_TEXTS(r, "NULL", "NULL", "NULL", "NULL");
    tl_array_release(r);
}

TL_TEST(test_substr)
{
    CHECK_EQ_STR(s3("substr", "hello", 2, 3, 3), "ell");
    CHECK_EQ_STR(s3("substr", "hello", 0, 2, 3), "h");
    CHECK_EQ_STR(s3("substr", "hello", 0, 1, 3), "");
    CHECK_EQ_STR(s3("substr", "hello", -3, 0, 2), "llo");
    CHECK_EQ_STR(s3("substr", "hello", -3, 2, 3), "ll");
    CHECK_EQ_STR(s3("substr", "hello", -10, 3, 3), ""); /* window before the start */
    CHECK_EQ_STR(s3("substr", "hello", -7, 3, 3), "h");
    CHECK_EQ_STR(s3("substr", "hello", -1, -2, 3), "ll");
    CHECK_EQ_STR(s3("substr", "hello", 10, 0, 2), "");
    CHECK_EQ_STR(s3("substr", "hello", 3, -2, 3), "he");
    CHECK_EQ_STR(s3("substr", "hello", 1, 0, 3), "");
    CHECK_EQ_STR(s3("substr", "hello", 2, INT64_MAX, 3), "ello");
    CHECK_EQ_STR(s3("substr", "hello", INT64_MIN, INT64_MAX, 3), "hell");
    CHECK_EQ_STR(s3("substr", "hello", 0, INT64_MIN, 3), "");
    CHECK_EQ_STR(s3("substr", "hello", INT64_MAX, INT64_MIN, 3), "hello");
    CHECK_EQ_STR(s3("substr", "héllo wörld", 2, 4, 3), "éllo");
    CHECK_EQ_STR(s3("substr", "日本語テキスト", 2, 2, 3), "本語");
    CHECK_EQ_STR(s3("substr", "日本語テキスト", -3, 0, 2), "キスト");
    CHECK_EQ_STR(s3("substr", "日本語", 0, 2, 3), "日");
    CHECK_EQ_STR(s3("substr", "日本語", 2, -5, 3), "日");
    CHECK_EQ_STR(s3("substr", "", 1, 1, 3), "");

    /* array string, per-row start, scalar length, nulls; long pieces shared */
    const char *v[] = {"the quick brown fox jumps over", NULL, "short", "xyz",
                       "another rather long string here"};
    int64_t st[] = {5, 1, 2, NUL_I, -11};
    TlArray *in = mk_str(v, 5);
    TlDatum d[3] = {arr(tl_array_retain(in)), arr(mk_i64(st, 5)), sc(mk_i1(15))};
    TlArray *r = call("substr", d, 3, 5);
    CHECK_TEXTS(r, "quick brown fox", "NULL", "hort", "NULL", "string here");
    if (r) {
        const TlView *rv = tl_array_views(r), *iv = tl_array_views(in);
        CHECK(r->data[rv[0].out.buf] == in->data[iv[0].out.buf]);
        CHECK_EQ_INT(rv[0].out.off, iv[0].out.off + 4);
    }
    tl_array_release(r);
    d[0] = arr(in);
    d[1] = sc(mk_i1(2));
    r = call("substr", d, 2, 5);
    CHECK_TEXTS(r, "he quick brown fox jumps over", "NULL", "hort", "yz",
                "nother rather long string here");
    tl_array_release(r);
    /* scalar string, array lengths */
    int64_t ln[] = {1, 2, NUL_I, 40};
    d[0] = sc(mk_str1("abcdefghijklmnopq"));
    d[1] = sc(mk_i1(1));
    d[2] = arr(mk_i64(ln, 4));
    r = call("substr", d, 3, 4);
    CHECK_TEXTS(r, "a", "ab", "NULL", "abcdefghijklmnopq");
    tl_array_release(r);
    /* all null */
    d[0] = arr(mk_null(2));
    d[1] = sc(mk_i1(1));
    r = call("substr", d, 2, 2);
    CHECK_TEXTS(r, "NULL", "NULL");
    tl_array_release(r);
}

TL_TEST(test_replace_preds)
{
    CHECK_EQ_STR(str3("replace", "aaa", "a", "bb"), "bbbbbb");
    CHECK_EQ_STR(str3("replace", "hello world", "o", ""), "hell wrld");
    CHECK_EQ_STR(str3("replace", "abc", "", "x"), "abc");
    CHECK_EQ_STR(str3("replace", "abc", "abcd", "x"), "abc");
    CHECK_EQ_STR(str3("replace", "aaaa", "aa", "a"), "aa");
    CHECK_EQ_STR(str3("replace", "a long string with words and words", "words", "wörds"),
                 "a long string with wörds and wörds");
    const char *v[] = {"one two one", NULL, "nothing here at all, no match",
                       "one"};
    const char *f[] = {"one", "x", "one", NULL};
    TlDatum d[3] = {arr(mk_str(v, 4)), arr(mk_str(f, 4)), sc(mk_str1("1"))};
    TlArray *r = call("replace", d, 3, 4);
    CHECK_TEXTS(r, "1 two 1", "NULL", "nothing here at all, no match", "NULL");
    tl_array_release(r);

    const char *s[] = {"foobar", "", NULL, "barfoo", "a much longer foo string"};
    d[0] = arr(mk_str(s, 5));
    d[1] = sc(mk_str1("foo"));
    r = call("contains", d, 2, 5);
    CHECK_TEXTS(r, "true", "false", "NULL", "true", "true");
    tl_array_release(r);
    d[0] = arr(mk_str(s, 5));
    d[1] = sc(mk_str1("foo"));
    r = call("starts_with", d, 2, 5);
    CHECK_TEXTS(r, "true", "false", "NULL", "false", "false");
    tl_array_release(r);
    d[0] = arr(mk_str(s, 5));
    d[1] = sc(mk_str1("foo"));
    r = call("ends_with", d, 2, 5);
    CHECK_TEXTS(r, "false", "false", "NULL", "true", "false");
    tl_array_release(r);
    d[0] = arr(mk_str(s, 5));
    d[1] = sc(mk_str1(""));
    r = call("contains", d, 2, 5);
    CHECK_TEXTS(r, "true", "true", "NULL", "true", "true");
    tl_array_release(r);
    const char *n[] = {"bar", "x", "y", NULL, "string"};
    d[0] = arr(mk_str(s, 5));
    d[1] = arr(mk_str(n, 5));
    r = call("ends_with", d, 2, 5);
    CHECK_TEXTS(r, "true", "false", "NULL", "NULL", "true");
    tl_array_release(r);
    d[0] = sc(mk_str1("hello"));
    d[1] = arr(mk_str(n, 5));
    r = call("contains", d, 2, 5);
    CHECK_TEXTS(r, "false", "false", "false", "NULL", "false");
    tl_array_release(r);
    d[0] = sc(mk_null(1));
    d[1] = sc(mk_str1("a"));
    r = call("starts_with", d, 2, 3);
    CHECK_TEXTS(r, "NULL", "NULL", "NULL");
    CHECK(r && r->type == TL_TBOOL);
    tl_array_release(r);
}

static const char *sp(const char *s, const char *sep, int64_t i)
{
    TlDatum d[3] = {sc(mk_str1(s)), sc(mk_str1(sep)), sc(mk_i1(i))};
    return one("split_part", d, 3);
}

TL_TEST(test_split_part)
{
    CHECK_EQ_STR(sp("a,b,c", ",", 1), "a");
    CHECK_EQ_STR(sp("a,b,c", ",", 2), "b");
    CHECK_EQ_STR(sp("a,b,c", ",", 3), "c");
    CHECK_EQ_STR(sp("a,b,c", ",", 4), "");
    CHECK_EQ_STR(sp("a,b,c", ",", 0), "");
    CHECK_EQ_STR(sp("a,b,c", ",", -1), "c");
    CHECK_EQ_STR(sp("a,b,c", ",", -3), "a");
    CHECK_EQ_STR(sp("a,b,c", ",", -4), "");
    CHECK_EQ_STR(sp("a,,b", ",", 2), "");
    CHECK_EQ_STR(sp("a,,b", ",", 3), "b");
    CHECK_EQ_STR(sp(",a,", ",", 1), "");
    CHECK_EQ_STR(sp(",a,", ",", 3), "");
    CHECK_EQ_STR(sp(",a,", ",", -2), "a");
    CHECK_EQ_STR(sp("a::b::c", "::", 3), "c");
    CHECK_EQ_STR(sp("a:::b", "::", 2), ":b");
    CHECK_EQ_STR(sp("abc", "x", 1), "abc");
    CHECK_EQ_STR(sp("abc", "x", 2), "");
    CHECK_EQ_STR(sp("aéc", "", 2), "é");
    CHECK_EQ_STR(sp("aéc", "", -1), "c");
    CHECK_EQ_STR(sp("aéc", "", 4), "");
    CHECK_EQ_STR(sp("", ",", 1), "");
    CHECK_EQ_STR(sp("", "", 1), "");
    CHECK_EQ_STR(sp("x", ",", INT64_MIN), "");
    CHECK_EQ_STR(sp("x", ",", INT64_MAX), "");

    const char *v[] = {"2024-01-15 this is long enough", NULL, "a-b", "solo"};
    int64_t ix[] = {1, 2, NUL_I, 2};
    TlDatum d[3] = {arr(mk_str(v, 4)), sc(mk_str1(" ")), arr(mk_i64(ix, 4))};
    TlArray *r = call("split_part", d, 3, 4);
    CHECK_TEXTS(r, "2024-01-15", "NULL", "NULL", "");
    tl_array_release(r);
}

TL_TEST(test_concat)
{
    const char *a[] = {"a", NULL, "x", NULL, "a much longer left side "};
    const char *b[] = {"b", "b", NULL, NULL, "and a right side"};
    TlDatum d[3] = {arr(mk_str(a, 5)), arr(mk_str(b, 5)), sc(mk_str1("!"))};
    TlArray *r = call("concat", d, 3, 5);
    CHECK_TEXTS(r, "ab!", "b!", "x!", "!", "a much longer left side and a right side!");
    CHECK(r && r->validity == NULL);
    tl_array_release(r);
    d[0] = arr(mk_str(a, 5));
    d[1] = arr(mk_null(5));
    d[2] = sc(mk_null(1));
    r = call("concat", d, 3, 5);
    CHECK_TEXTS(r, "a", "", "x", "", "a much longer left side ");
    CHECK(r && r->null_count == 0);
    tl_array_release(r);
    d[0] = sc(mk_null(1));
    r = call("concat", d, 1, 2);
    CHECK_TEXTS(r, "", "");
    CHECK(r && r->null_count == 0);
    tl_array_release(r);
    CHECK_EQ_STR(str3("concat", "日本", "", "語"), "日本語");
}

/* ---------------------------------------------------------------- LIKE */

/* Reference matcher: plain recursion (exponential, small inputs only). */
static bool ref_like(const char *s, const char *p)
{
    if (!*p) return !*s;
    if (*p == '%') return ref_like(s, p + 1) || (*s && ref_like(s + 1, p));
    if (!*s) return false;
    if (*p == '_') {
        s++;
        while ((*s & 0xC0) == 0x80) s++;
        return ref_like(s, p + 1);
    }
    return *p == *s && ref_like(s + 1, p + 1);
}

static bool like1(const char *s, const char *p, bool scalar_pattern)
{
    TlDatum d[2] = {arr(mk_str1(s)), scalar_pattern ? sc(mk_str1(p)) : arr(mk_str1(p))};
    TlArray *r = call("like", d, 2, 1);
    bool v = r && tl_array_valid(r, 0) && tl_array_bool(r, 0);
    tl_array_release(r);
    return v;
}

TL_TEST(test_like)
{
    static const struct {
        const char *s, *p;
        bool want;
    } cases[] = {
        {"abc", "abc", true},       {"abc", "ab", false},     {"abc", "abcd", false},
        {"abc", "a%", true},        {"abc", "b%", false},     {"abc", "%c", true},
        {"abc", "%b", false},       {"abc", "%b%", true},     {"abc", "%x%", false},
        {"abc", "a_c", true},       {"aéc", "a_c", true},     {"ac", "a_c", false},
        {"", "%", true},            {"", "_", false},         {"", "", true},
        {"a", "", false},           {"abc", "%", true},       {"abc", "%%%", true},
        {"abcabc", "%bc%bc", true}, {"abcabc", "a%c%c", true}, {"a", "a%a", false},
        {"aa", "a%a", true},        {"abab", "%ab", true},    {"aXbXc", "a%b%c", true},
        {"aXbXc", "a%c%b", false},  {"日本語", "日%", true},   {"日本語", "%本%", true},
        {"日本語", "___", true},     {"日本語", "__", false},   {"日本語", "_本_", true},
        {"100%", "100%", true},     {"abc", "ABC", false},    {"a_c", "a\\_c", false},
        {"xyz", "%y_", true},       {"xyz", "_%_%_", true},   {"xy", "_%_%_", false},
        {"mississippi", "%iss%ppi", true}, {"mississippi", "m%i%s%s%p%i", true},
        {"mississippi", "%ss%ss%ss%", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool a = like1(cases[i].s, cases[i].p, true);
        bool b = like1(cases[i].s, cases[i].p, false);
        if (a != cases[i].want || b != cases[i].want)
            fprintf(stderr, "like('%s', '%s'): scalar %d array %d want %d\n",
                    cases[i].s, cases[i].p, a, b, cases[i].want);
        CHECK(a == cases[i].want);
        CHECK(b == cases[i].want);
        CHECK(ref_like(cases[i].s, cases[i].p) == cases[i].want);
    }

    /* randomized: fast paths and general matcher against the reference */
    unsigned seed = 12345;
    const char alpha[] = "ab%_";
    for (int t = 0; t < 3000; t++) {
        char s[10], p[8];
        int ns = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 9;
        int np = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 7;
        for (int i = 0; i < ns; i++) s[i] = alpha[((seed = seed * 1103515245u + 12345u) >> 16) % 2];
        for (int i = 0; i < np; i++) p[i] = alpha[((seed = seed * 1103515245u + 12345u) >> 16) % 4];
        s[ns] = p[np] = 0;
        bool want = ref_like(s, p);
        bool a = like1(s, p, true), b = like1(s, p, false);
        if (a != want || b != want) {
            fprintf(stderr, "random like('%s', '%s'): %d %d want %d\n", s, p, a, b, want);
            CHECK(a == want);
            CHECK(b == want);
            break;
        }
    }

    /* arrays with nulls, both pattern kinds */
    const char *v[] = {"apple", NULL, "banana", "grape", ""};
    TlDatum d[2] = {arr(mk_str(v, 5)), sc(mk_str1("%ap%"))};
    TlArray *r = call("like", d, 2, 5);
    CHECK_TEXTS(r, "true", "NULL", "false", "true", "false");
    tl_array_release(r);
    const char *p[] = {"a%", "%", NULL, "g_ape", "%"};
    d[0] = arr(mk_str(v, 5));
    d[1] = arr(mk_str(p, 5));
    r = call("like", d, 2, 5);
    CHECK_TEXTS(r, "true", "NULL", "NULL", "true", "true");
    tl_array_release(r);
    d[0] = arr(mk_str(v, 5));
    d[1] = sc(mk_null(1));
    r = call("like", d, 2, 5);
    CHECK_TEXTS(r, "NULL", "NULL", "NULL", "NULL", "NULL");
    tl_array_release(r);
}

TL_TEST(test_like_pathological)
{
    size_t n = 200000;
    char *s = malloc(n + 1);
    memset(s, 'a', n);
    s[n] = 0;
    const char *pats[] = {"%a%a%a%a%b", "%a%a%a%a%", "%_%_%_%_b", "%aaaaaaaaaab",
                          "a%a%a%a%a%a%a%a%a%a%a%b%"};
    bool want[] = {false, true, false, false, false};
    clock_t t0 = clock();
    for (size_t k = 0; k < sizeof pats / sizeof pats[0]; k++) {
        CHECK(like1(s, pats[k], true) == want[k]);
        CHECK(like1(s, pats[k], false) == want[k]);
    }
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    if (secs > 2.0) fprintf(stderr, "pathological LIKE took %.2fs\n", secs);
    CHECK(secs < 2.0);
    free(s);
}

/* ---------------------------------------------------------------- dates */

TL_TEST(test_date_parts)
{
    int32_t dv[] = {0, -1, 19737, -719528, 2932896, 0};
    bool dvv[] = {true, true, true, true, true, false};
    TlDatum d[2] = {arr(mk_date(dv, dvv, 6))};
    TlArray *r = call("year", d, 1, 6);
    CHECK_TEXTS(r, "1970", "1969", "2024", "0", "9999", "NULL");
    tl_array_release(r);
    d[0] = arr(mk_date(dv, dvv, 6));
    r = call("month", d, 1, 6);
    CHECK_TEXTS(r, "1", "12", "1", "1", "12", "NULL");
    tl_array_release(r);
    d[0] = arr(mk_date(dv, dvv, 6));
    r = call("day", d, 1, 6);
    CHECK_TEXTS(r, "1", "31", "15", "1", "31", "NULL");
    tl_array_release(r);
    d[0] = arr(mk_date(dv, dvv, 6));
    r = call("hour", d, 1, 6);
    CHECK_TEXTS(r, "0", "0", "0", "0", "0", "NULL");
    tl_array_release(r);

    /* timestamps around and before the epoch */
    int64_t ts[] = {-1, 0, 1705320245123456LL, -86400000000LL * 365 - 1, NUL_I};
    d[0] = arr(mk_ts(ts, 5));
    r = call("year", d, 1, 5);
    CHECK_TEXTS(r, "1969", "1970", "2024", "1968", "NULL");
    tl_array_release(r);
    d[0] = arr(mk_ts(ts, 5));
    r = call("day", d, 1, 5);
    CHECK_TEXTS(r, "31", "1", "15", "31", "NULL");
    tl_array_release(r);
    d[0] = arr(mk_ts(ts, 5));
    r = call("hour", d, 1, 5);
    CHECK_TEXTS(r, "23", "0", "12", "23", "NULL");
    tl_array_release(r);
    d[0] = arr(mk_ts(ts, 5));
    r = call("minute", d, 1, 5);
    CHECK_TEXTS(r, "59", "0", "4", "59", "NULL");
    tl_array_release(r);
    d[0] = arr(mk_ts(ts, 5));
    r = call("second", d, 1, 5);
    CHECK_TEXTS(r, "59", "0", "5", "59", "NULL");
    tl_array_release(r);
    d[0] = arr(mk_null(2));
    r = call("month", d, 1, 2);
    CHECK_TEXTS(r, "NULL", "NULL");
    tl_array_release(r);
    d[0] = sc(mk_date(dv + 2, NULL, 1));
    r = call("month", d, 1, 3);
    CHECK_TEXTS(r, "1", "1", "1");
    tl_array_release(r);

    /* agree with lib/core's calendar over a wide sweep */
    int n = 0;
    int32_t sweep[4096];
    for (int64_t x = -3000000; x <= 3000000 && n < 4096; x += 1543) sweep[n++] = (int32_t)x;
    TlArray *src = mk_date(sweep, NULL, n);
    TlDatum dy[1] = {arr(tl_array_retain(src))}, dm[1] = {arr(tl_array_retain(src))},
            dd[1] = {arr(tl_array_retain(src))};
    TlArray *ry = call("year", dy, 1, n), *rm = call("month", dm, 1, n),
            *rd = call("day", dd, 1, n);
    CHECK(ry && rm && rd);
    for (int i = 0; ry && rm && rd && i < n; i++) {
        int64_t y;
        unsigned m, dday;
        tl_civil_from_days(sweep[i], &y, &m, &dday);
        if (tl_array_i64(ry)[i] != y || tl_array_i64(rm)[i] != (int64_t)m ||
            tl_array_i64(rd)[i] != (int64_t)dday) {
            CHECK_EQ_INT(tl_array_i64(ry)[i], y);
            CHECK_EQ_INT(tl_array_i64(rm)[i], m);
            CHECK_EQ_INT(tl_array_i64(rd)[i], dday);
            break;
        }
        CHECK_EQ_INT(tl_days_from_civil(y, m, dday), sweep[i]);
    }
    tl_array_release(ry);
    tl_array_release(rm);
    tl_array_release(rd);
    tl_array_release(src);
}

static const char *trunc_ts(const char *part, const char *ts)
{
    int64_t v;
    if (!tl_parse_timestamp(ts, strlen(ts), &v)) return "BAD INPUT";
    TlDatum d[2] = {sc(mk_str1(part)), sc(mk_ts(&v, 1))};
    return one("date_trunc", d, 2);
}

static const char *trunc_date(const char *part, const char *ds)
{
    int32_t v;
    if (!tl_parse_date(ds, strlen(ds), &v)) return "BAD INPUT";
    TlDatum d[2] = {sc(mk_str1(part)), sc(mk_date(&v, NULL, 1))};
    return one("date_trunc", d, 2);
}

TL_TEST(test_date_trunc)
{
    const char *t = "2024-05-17 13:45:27.123456";
    CHECK_EQ_STR(trunc_ts("year", t), "2024-01-01 00:00:00");
    CHECK_EQ_STR(trunc_ts("quarter", t), "2024-04-01 00:00:00");
    CHECK_EQ_STR(trunc_ts("month", t), "2024-05-01 00:00:00");
    CHECK_EQ_STR(trunc_ts("week", t), "2024-05-13 00:00:00"); /* Monday */
    CHECK_EQ_STR(trunc_ts("day", t), "2024-05-17 00:00:00");
    CHECK_EQ_STR(trunc_ts("hour", t), "2024-05-17 13:00:00");
    CHECK_EQ_STR(trunc_ts("minute", t), "2024-05-17 13:45:00");
    CHECK_EQ_STR(trunc_ts("second", t), "2024-05-17 13:45:27");
    CHECK_EQ_STR(trunc_ts("millisecond", t), "2024-05-17 13:45:27.123");
    CHECK_EQ_STR(trunc_ts("microseconds", t), "2024-05-17 13:45:27.123456");
    CHECK_EQ_STR(trunc_ts("decade", t), "2020-01-01 00:00:00");
    CHECK_EQ_STR(trunc_ts("century", t), "2000-01-01 00:00:00");
    CHECK_EQ_STR(trunc_ts("millennium", t), "2000-01-01 00:00:00");
    CHECK_EQ_STR(trunc_ts("MONTH", t), "2024-05-01 00:00:00");
    CHECK_EQ_STR(trunc_ts("years", t), "2024-01-01 00:00:00");
    CHECK_EQ_STR(trunc_ts("week", "2024-05-13 00:00:00"), "2024-05-13 00:00:00");
    CHECK_EQ_STR(trunc_ts("week", "2024-05-12 23:59:59"), "2024-05-06 00:00:00");
    CHECK_EQ_STR(trunc_ts("quarter", "2024-12-31 23:59:59"), "2024-10-01 00:00:00");
    /* before 1970: floor, not toward zero */
    CHECK_EQ_STR(trunc_ts("day", "1969-12-31 23:59:59.5"), "1969-12-31 00:00:00");
    CHECK_EQ_STR(trunc_ts("second", "1969-12-31 23:59:59.5"), "1969-12-31 23:59:59");
    CHECK_EQ_STR(trunc_ts("hour", "1901-03-04 05:06:07"), "1901-03-04 05:00:00");
    CHECK_EQ_STR(trunc_ts("month", "1969-07-20 20:17:40"), "1969-07-01 00:00:00");
    CHECK_EQ_STR(trunc_ts("week", "1970-01-01 12:00:00"), "1969-12-29 00:00:00");
    CHECK_EQ_STR(trunc_date("month", "2024-02-29"), "2024-02-01 00:00:00");
    CHECK_EQ_STR(trunc_date("year", "1969-12-31"), "1969-01-01 00:00:00");
    CHECK_EQ_STR(trunc_date("week", "1969-12-31"), "1969-12-29 00:00:00");
    CHECK_EQ_STR(trunc_date("quarter", "1969-12-31"), "1969-10-01 00:00:00");
    CHECK_EQ_STR(trunc_date("hour", "1969-12-31"), "1969-12-31 00:00:00");
    CHECK_EQ_STR(trunc_date("day", "0001-01-01"), "0001-01-01 00:00:00");

    /* unknown part: a data error naming it */
    int32_t dv[] = {1, 2};
    bool dvv[] = {false, true};
    TlDatum d[2] = {sc(mk_str1("fortnight")), arr(mk_date(dv, dvv, 2))};
    CHECK(call("date_trunc", d, 2, 2) == NULL);
    CHECK_EQ_INT(g_err.code, TL_ERR_DATA);
    CHECK_EQ_INT(g_err_row, 1);
    CHECK(strstr(g_err.msg, "unknown date part \"fortnight\"") != NULL);

    /* per-row parts, nulls in both arguments */
    const char *parts[] = {"year", NULL, "month", "day", "bogus"};
    int64_t ts[5];
    tl_parse_timestamp("2021-08-09 10:11:12", 19, &ts[0]);
    ts[1] = ts[2] = ts[3] = ts[4] = ts[0];
    ts[3] = NUL_I;
    d[0] = arr(mk_str(parts, 4));
    d[1] = arr(mk_ts(ts, 4));
    TlArray *r = call("date_trunc", d, 2, 4);
    CHECK_TEXTS(r, "2021-01-01 00:00:00", "NULL", "2021-08-01 00:00:00", "NULL");
    CHECK(r && r->type == TL_TTIMESTAMP);
    tl_array_release(r);
    d[0] = arr(mk_str(parts, 5));
    d[1] = arr(mk_ts(ts, 5));
    CHECK(call("date_trunc", d, 2, 5) == NULL);
    CHECK_EQ_INT(g_err_row, 4);
    /* out of the timestamp range */
    int32_t far[] = {200000000};
    d[0] = sc(mk_str1("day"));
    d[1] = arr(mk_date(far, NULL, 1));
    CHECK(call("date_trunc", d, 2, 1) == NULL);
    CHECK_EQ_INT(g_err.code, TL_ERR_DATA);
    int64_t lo[] = {INT64_MIN + 1};
    d[0] = sc(mk_str1("year"));
    d[1] = arr(mk_ts(lo, 1));
    CHECK(call("date_trunc", d, 2, 1) == NULL);
    d[0] = sc(mk_null(1));
    d[1] = arr(mk_ts(ts, 3));
    r = call("date_trunc", d, 2, 3);
    CHECK_TEXTS(r, "NULL", "NULL", "NULL");
    tl_array_release(r);
}

/* ----------------------------------------------- sliced inputs, OOM */

TL_TEST(test_sliced_inputs)
{
    /* validity and values at a non-zero, non-byte-aligned offset */
    int64_t v[20];
    for (int i = 0; i < 20; i++) v[i] = (i % 4 == 0) ? NUL_I : -i;
    TlArray *full = mk_i64(v, 20), *sl = tl_array_slice(full, 3, 10);
    TlArray *other = mk_i64(v, 20), *sl2 = tl_array_slice(other, 5, 10);
    TlDatum d[2] = {arr(sl), arr(sl2)};
    TlArray *r = call("abs", d, 1, 10);
    CHECK_TEXTS(r, "3", "NULL", "5", "6", "7", "NULL", "9", "10", "11", "NULL");
    tl_array_release(r);
    d[0] = arr(tl_array_slice(full, 3, 10));
    d[1] = arr(sl2);
    r = call("round", d, 2, 10);
    /* null where either slice is null: rows 1,5,9 (first) and 3,7 (second) */
    CHECK(r != NULL);
    for (int i = 0; r && i < 10; i++)
        CHECK(tl_array_valid(r, i) == !(i == 1 || i == 5 || i == 9 || i == 3 || i == 7));
    tl_array_release(r);
    tl_array_release(full);
    tl_array_release(other);

    const char *s[] = {"aa", "  bb  ", NULL, " a string long enough to be out of line ", "c"};
    TlArray *sa = mk_str(s, 5);
    d[0] = arr(tl_array_slice(sa, 1, 4));
    r = call("trim", d, 1, 4);
    CHECK_TEXTS(r, "bb", "NULL", "a string long enough to be out of line", "c");
    tl_array_release(r);
    tl_array_release(sa);
}

typedef TlArray *(*Mk)(void);

static void oom_loop(const char *name, TlDatum (*mk)(int k), int n_args, int64_t n_rows)
{
    for (uint64_t k = 1; k < 200; k++) {
        TlDatum d[4];
        for (int i = 0; i < n_args; i++) d[i] = mk(i);
        TlFnKernel fn = tl_k_fn_by_name(name);
        TlArray *out = NULL;
        int64_t row = -1;
        TlError e = {0};
        tl_alloc_fail_at(k);
        TlStatus st = fn(d, n_args, n_rows, &out, &row, &e);
        tl_alloc_fail_at(0);
        release_args(d, n_args);
        if (st == TL_OK) {
            CHECK(out != NULL);
            CHECK(k > 1); /* the kernel allocates, so some call failed */
            tl_array_release(out);
            return;
        }
        CHECK_EQ_INT(st, TL_ERR_OOM);
        CHECK(out == NULL);
    }
    CHECK(!"OOM loop did not finish");
}

static TlDatum mk_oom_str(int k)
{
    const char *a[] = {"Some Long String Value ONE", "two", NULL, "Three Long String Value"};
    const char *b[] = {"x", "y", "z", "w"};
    return arr(k == 0 ? mk_str(a, 4) : mk_str(b, 4));
}

static TlDatum mk_oom_num(int k)
{
    double a[] = {1.0, 2.0, 3.0, 4.0};
    bool av[] = {true, false, true, true};
    return arr(mk_f64(a, av, 4));
}

static TlDatum mk_oom_like(int k)
{
    return k == 0 ? mk_oom_str(0) : sc(mk_str1("%Long%"));
}

static TlDatum mk_oom_trunc(int k)
{
    int64_t ts[] = {1, 2, NUL_I, 4};
    return k == 0 ? sc(mk_str1("month")) : arr(mk_ts(ts, 4));
}

TL_TEST(test_oom)
{
    oom_loop("upper", mk_oom_str, 1, 4);
    oom_loop("concat", mk_oom_str, 2, 4);
    oom_loop("replace", mk_oom_str, 3, 4);
    oom_loop("trim", mk_oom_str, 2, 4);
    oom_loop("contains", mk_oom_str, 2, 4);
    oom_loop("pow", mk_oom_num, 2, 4);
    oom_loop("sqrt", mk_oom_num, 1, 4);
    oom_loop("like", mk_oom_like, 2, 4);
    oom_loop("date_trunc", mk_oom_trunc, 2, 4);
}

int main(void)
{
    TL_RUN(test_registry);
    TL_RUN(test_abs);
    TL_RUN(test_round_floor_ceil);
    TL_RUN(test_sqrt_ln_exp_pow);
    TL_RUN(test_length_case);
    TL_RUN(test_case_length_exhaustive);
    TL_RUN(test_trim);
    TL_RUN(test_substr);
    TL_RUN(test_replace_preds);
    TL_RUN(test_split_part);
    TL_RUN(test_concat);
    TL_RUN(test_like);
    TL_RUN(test_like_pathological);
    TL_RUN(test_date_parts);
    TL_RUN(test_date_trunc);
    TL_RUN(test_sliced_inputs);
    TL_RUN(test_oom);
    return tl_test_summary(__FILE__);
}
