/*
 * test_infer.c -- unit tests for formats/infer.c: which spellings infer as
 * numbers without changing a value (also with --decimal-comma), the
 * widening rules, --schema globs and unique header names.
 */
#include "formats/infer.h"
#include "lib/core/text.h"
#include "tl_test.h"

#include <string.h>

#define W(so_far, s) tl_infer_widen(so_far, s, strlen(s))

TL_TEST(test_infer_types)
{
    CHECK_EQ_INT(W(TL_TNULL, "true"), TL_TBOOL);
    CHECK_EQ_INT(W(TL_TNULL, "False"), TL_TBOOL);
    CHECK_EQ_INT(W(TL_TNULL, "1"), TL_TINT64);
    CHECK_EQ_INT(W(TL_TNULL, "-12"), TL_TINT64);
    CHECK_EQ_INT(W(TL_TNULL, "0"), TL_TINT64);
    CHECK_EQ_INT(W(TL_TNULL, "-0"), TL_TINT64);
    CHECK_EQ_INT(W(TL_TNULL, "1.5"), TL_TFLOAT64);
    CHECK_EQ_INT(W(TL_TNULL, "1.50"), TL_TFLOAT64);
    CHECK_EQ_INT(W(TL_TNULL, "0.5"), TL_TFLOAT64);
    CHECK_EQ_INT(W(TL_TNULL, ".5"), TL_TFLOAT64);
    CHECK_EQ_INT(W(TL_TNULL, "5."), TL_TFLOAT64);
    CHECK_EQ_INT(W(TL_TNULL, "1e3"), TL_TFLOAT64);
    CHECK_EQ_INT(W(TL_TNULL, "nan"), TL_TFLOAT64);
    CHECK_EQ_INT(W(TL_TNULL, "-Infinity"), TL_TFLOAT64);
    CHECK_EQ_INT(W(TL_TNULL, "0.1"), TL_TFLOAT64);
    CHECK_EQ_INT(W(TL_TNULL, "0.30000000000000004"), TL_TFLOAT64); /* 17 digits, exact */
    CHECK_EQ_INT(W(TL_TNULL, "2024-01-02"), TL_TDATE);
    CHECK_EQ_INT(W(TL_TNULL, "2024-01-02 03:04:05"), TL_TTIMESTAMP);
    /* text that would not read back the same */
    CHECK_EQ_INT(W(TL_TNULL, "02134"), TL_TSTRING);
    CHECK_EQ_INT(W(TL_TNULL, "00"), TL_TSTRING);
    CHECK_EQ_INT(W(TL_TNULL, "-007"), TL_TSTRING);
    CHECK_EQ_INT(W(TL_TNULL, "00.5"), TL_TSTRING);
    CHECK_EQ_INT(W(TL_TNULL, "+5"), TL_TSTRING);
    CHECK_EQ_INT(W(TL_TNULL, "+1.5"), TL_TSTRING);
    CHECK_EQ_INT(W(TL_TNULL, "+inf"), TL_TSTRING);
    CHECK_EQ_INT(W(TL_TNULL, "99999999999999999999"), TL_TSTRING);
    CHECK_EQ_INT(W(TL_TNULL, "9223372036854775808"), TL_TSTRING);
    CHECK_EQ_INT(W(TL_TNULL, "0.1000000000000000055511"), TL_TSTRING);
    CHECK_EQ_INT(W(TL_TNULL, "0.12345678901234567"), TL_TSTRING); /* 17 digits, not exact */
    CHECK_EQ_INT(W(TL_TNULL, "1e400"), TL_TSTRING);
    CHECK_EQ_INT(W(TL_TNULL, "1e-400"), TL_TSTRING);
    CHECK_EQ_INT(W(TL_TNULL, "2024-02-30"), TL_TSTRING);
    CHECK_EQ_INT(W(TL_TNULL, "2024-01-02T03:04:05Z"), TL_TTIMESTAMPTZ);
    CHECK_EQ_INT(W(TL_TTIMESTAMP, "2024-01-02T03:04:05Z"), TL_TSTRING);
    CHECK_EQ_INT(W(TL_TTIMESTAMPTZ, "2024-01-02 03:04:05"), TL_TSTRING);
    CHECK_EQ_INT(W(TL_TTIMESTAMPTZ, "2024-01-02 03:04:05+0530"), TL_TTIMESTAMPTZ);
    CHECK_EQ_INT(W(TL_TNULL, "abc"), TL_TSTRING);
    CHECK_EQ_INT(W(TL_TNULL, " 1"), TL_TSTRING);
    /* widening */
    CHECK_EQ_INT(W(TL_TINT64, "2"), TL_TINT64);
    CHECK_EQ_INT(W(TL_TINT64, "1.5"), TL_TFLOAT64);
    CHECK_EQ_INT(W(TL_TINT64, "007"), TL_TSTRING);
    CHECK_EQ_INT(W(TL_TINT64, "abc"), TL_TSTRING);
    CHECK_EQ_INT(W(TL_TINT64, "true"), TL_TSTRING);
    CHECK_EQ_INT(W(TL_TINT64, "2024-01-02"), TL_TSTRING);
    CHECK_EQ_INT(W(TL_TFLOAT64, "1"), TL_TFLOAT64);
    CHECK_EQ_INT(W(TL_TFLOAT64, "9007199254740992"), TL_TFLOAT64); /* 2^53 */
    CHECK_EQ_INT(W(TL_TFLOAT64, "9007199254740993"), TL_TSTRING);  /* 2^53 + 1 */
    CHECK_EQ_INT(W(TL_TFLOAT64, "123456789012345"), TL_TFLOAT64);
    CHECK_EQ_INT(W(TL_TFLOAT64, "inf"), TL_TFLOAT64);
    CHECK_EQ_INT(W(TL_TFLOAT64, "01.5"), TL_TSTRING);
    CHECK_EQ_INT(W(TL_TFLOAT64, "x"), TL_TSTRING);
    CHECK_EQ_INT(W(TL_TBOOL, "1"), TL_TSTRING);
    CHECK_EQ_INT(W(TL_TBOOL, "TRUE"), TL_TBOOL);
    CHECK_EQ_INT(W(TL_TDATE, "2024-01-02 03:04:05"), TL_TTIMESTAMP);
    CHECK_EQ_INT(W(TL_TDATE, "2024-01-03"), TL_TDATE);
    CHECK_EQ_INT(W(TL_TDATE, "1"), TL_TSTRING);
    CHECK_EQ_INT(W(TL_TTIMESTAMP, "2024-01-03"), TL_TTIMESTAMP);
    CHECK_EQ_INT(W(TL_TTIMESTAMP, "2024-01-03T01:02:03.5"), TL_TTIMESTAMP);
    CHECK_EQ_INT(W(TL_TTIMESTAMP, "1.5"), TL_TSTRING);
    CHECK_EQ_INT(W(TL_TSTRING, "1"), TL_TSTRING);
}

/* Every double's own shortest text is exact, and one more digit is not. */
TL_TEST(test_infer_exact_f64)
{
    static const double v[] = {0.1, 1.0 / 3, 2.0 / 3, 1e22, 1e23, 5e-324, 2.2250738585072014e-308,
                               123456.789, 9007199254740993.0, 1.7976931348623157e308};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char buf[TL_FMT_MAX + 2];
        double back;
        size_t n = tl_fmt_f64(v[i], buf);
        bool subnormal = v[i] < 2.2250738585072014e-308;
        CHECK(tl_exact_f64(buf, n, &back) || subnormal);
        CHECK(subnormal || back == v[i]);
    }
    /* 16 and 17 digits: exact only when they are the shortest form */
    {
        double back;
        CHECK(tl_exact_f64("0.3333333333333333", 18, &back));
        CHECK(!tl_exact_f64("0.33333333333333331", 19, &back));
        CHECK(tl_exact_f64("-1.5e-10", 8, &back));
        CHECK(!tl_exact_f64("1.00000000000000001", 19, &back));
    }
}

#define WDC(so_far, s) tl_infer_widen_dc(so_far, s, strlen(s))

TL_TEST(test_infer_decimal_comma)
{
    /* the comma is the point; the rule is the same */
    CHECK_EQ_INT(WDC(TL_TNULL, "1,5"), TL_TFLOAT64);
    CHECK_EQ_INT(WDC(TL_TNULL, "-0,25e3"), TL_TFLOAT64);
    CHECK_EQ_INT(WDC(TL_TNULL, ",5"), TL_TFLOAT64);
    CHECK_EQ_INT(WDC(TL_TNULL, "5,"), TL_TFLOAT64);
    CHECK_EQ_INT(WDC(TL_TNULL, "1,000"), TL_TFLOAT64);
    CHECK_EQ_INT(WDC(TL_TNULL, "12"), TL_TINT64);
    CHECK_EQ_INT(WDC(TL_TINT64, "1,5"), TL_TFLOAT64);
    CHECK_EQ_INT(WDC(TL_TFLOAT64, "7"), TL_TFLOAT64);
    CHECK_EQ_INT(WDC(TL_TNULL, "nan"), TL_TFLOAT64);
    CHECK_EQ_INT(WDC(TL_TNULL, "00,5"), TL_TSTRING);
    CHECK_EQ_INT(WDC(TL_TNULL, "+1,5"), TL_TSTRING);
    CHECK_EQ_INT(WDC(TL_TNULL, "0,12345678901234567"), TL_TSTRING);
    /* a point is no decimal point, nor a thousands separator */
    CHECK_EQ_INT(WDC(TL_TNULL, "1.5"), TL_TSTRING);
    CHECK_EQ_INT(WDC(TL_TFLOAT64, "1.5"), TL_TSTRING);
    CHECK_EQ_INT(WDC(TL_TNULL, "1.234,5"), TL_TSTRING);
    CHECK_EQ_INT(WDC(TL_TNULL, "1.000"), TL_TSTRING);
    CHECK_EQ_INT(WDC(TL_TNULL, "1,2,3"), TL_TSTRING);
    /* nor does a comma make anything else */
    CHECK_EQ_INT(WDC(TL_TNULL, "2024-01-02 03:04:05,5"), TL_TSTRING);
    CHECK_EQ_INT(WDC(TL_TNULL, "a,b"), TL_TSTRING);
    CHECK_EQ_INT(WDC(TL_TNULL, "2024-01-02 03:04:05.5"), TL_TTIMESTAMP);
    CHECK_EQ_INT(WDC(TL_TNULL, "true"), TL_TBOOL);
    CHECK_EQ_INT(WDC(TL_TBOOL, "1,5"), TL_TSTRING);
}

TL_TEST(test_infer_globs)
{
    TlSchema s = {0};
    TlError err = {0};
    CHECK_EQ_INT(tl_schema_add(&s, "id*", TL_TSTRING, &err), TL_OK);
    CHECK_EQ_INT(tl_schema_add(&s, "*", TL_TFLOAT64, &err), TL_OK);
    CHECK_EQ_INT(tl_schema_add(&s, "id_x", TL_TINT64, &err), TL_OK);
    CHECK_EQ_INT(tl_fixed_find(&s, "id_x"), 2);  /* by name first */
    CHECK_EQ_INT(tl_fixed_find(&s, "id_y"), 0);  /* then the first glob */
    CHECK_EQ_INT(tl_fixed_find(&s, "v"), 1);
    CHECK_EQ_INT(tl_fixed_find(NULL, "v"), -1);
    tl_schema_free(&s);
}

TL_TEST(test_infer_names)
{
    static const char *const names[] = {"a", "a", "a_2", "", "column4", "", "a"};
    size_t lens[7];
    TlSchema out = {0};
    TlError err = {0};
    static const char *const want[] = {"a", "a_3", "a_2", "column4_2", "column4",
                                       "column6", "a_4"};
    for (int i = 0; i < 7; i++) lens[i] = strlen(names[i]);
    CHECK_EQ_INT(tl_names_unique(names, lens, 7, "t.csv", true, &out, &err), TL_OK);
    CHECK_EQ_INT(out.n_fields, 7);
    for (int i = 0; i < 7 && i < out.n_fields; i++) CHECK_EQ_STR(out.fields[i].name, want[i]);
    tl_schema_free(&out);
}

int main(void)
{
    TL_RUN(test_infer_types);
    TL_RUN(test_infer_exact_f64);
    TL_RUN(test_infer_decimal_comma);
    TL_RUN(test_infer_globs);
    TL_RUN(test_infer_names);
    return tl_test_summary(__FILE__);
}
