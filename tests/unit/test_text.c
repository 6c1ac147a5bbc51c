/*
 * test_text.c -- unit tests for lib/core/text.c: strict parsing, the exact
 * float layout (Python repr), dates and timestamps (inference: test_infer.c).
 */
#include "lib/core/text.h"
#include "tl_test.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static const char *ff(double v)
{
    static char buf[TL_FMT_MAX];
    size_t n = tl_fmt_f64(v, buf);
    if (n != strlen(buf)) return "(length mismatch)";
    return buf;
}

TL_TEST(test_fmt_f64)
{
    static const struct {
        double v;
        const char *s;
    } cases[] = {
        {0.1, "0.1"},
        {71.0, "71.0"},
        {1e-05, "1e-05"},
        {1e16, "1e+16"},
        {1e15, "1000000000000000.0"},
        {123456789012345678.0, "1.2345678901234568e+17"},
        {5e-324, "5e-324"},
        {0.30000000000000004, "0.30000000000000004"},
        {0.0, "0.0"},
        {-0.0, "-0.0"},
        {1.0, "1.0"},
        {-1.5, "-1.5"},
        {100.0, "100.0"},
        {0.0001, "0.0001"},
        {0.00012345, "0.00012345"},
        {2.5e-07, "2.5e-07"},
        {1.7976931348623157e308, "1.7976931348623157e+308"},
        {2.2250738585072014e-308, "2.2250738585072014e-308"},
        {1e22, "1e+22"},
        {1e23, "1e+23"},
        {9007199254740992.0, "9007199254740992.0"},
        {9007199254740993.0, "9007199254740992.0"},
        {1234567890123456.7, "1234567890123456.8"},
        {12345678901234567.0, "1.2345678901234568e+16"},
        {123.456, "123.456"},
        {2.0 / 3.0, "0.6666666666666666"},
        {1e100, "1e+100"},
        {1.5e-100, "1.5e-100"},
        {3.14159, "3.14159"},
        {-2.5e-5, "-2.5e-05"},
        {7.120236347223045e-307, "7.120236347223045e-307"}, /* a power of 2 */
        {8.98846567431158e307, "8.98846567431158e+307"},    /* 2^1023 */
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) CHECK_EQ_STR(ff(cases[i].v), cases[i].s);
    CHECK_EQ_STR(ff(INFINITY), "inf");
    CHECK_EQ_STR(ff(-INFINITY), "-inf");
    CHECK_EQ_STR(ff(NAN), "nan");
    CHECK_EQ_STR(ff(-NAN), "nan");
}

TL_TEST(test_fmt_f64_roundtrip)
{
    /* every output reads back to the same double */
    uint64_t x = 88172645463325252ULL;
    int i, ok = 1;
    for (i = 0; i < 20000; i++) {
        double v, back;
        char buf[TL_FMT_MAX];
        size_t n;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        memcpy(&v, &x, 8);
        if (v != v) continue;
        n = tl_fmt_f64(v, buf);
        if (!tl_parse_f64(buf, n, &back) || memcmp(&back, &v, 8) != 0) ok = 0;
    }
    CHECK(ok);
}

/* The significant digits of a formatted double (no sign, point, exponent,
 * leading or trailing zeros) into d; returns their count. */
static int sig_digits(const char *s, char *d)
{
    int n = 0;
    for (; *s && *s != 'e'; s++)
        if (*s >= '0' && *s <= '9' && (n > 0 || *s != '0')) d[n++] = *s;
    while (n > 0 && d[n - 1] == '0') n--;
    d[n] = '\0';
    return n;
}

/* Reference: the first precision whose correctly rounded %e reads back
 * (shortest and, away from powers of two, closest). */
static int ref_digits(double v, char *d)
{
    char tmp[48];
    for (int p = 1; p <= 17; p++) {
        snprintf(tmp, sizeof tmp, "%.*e", p - 1, v);
        if (p == 17 || strtod(tmp, NULL) == v) break;
    }
    return sig_digits(tmp, d);
}

/* tl_fmt_f64's digits against the printf reference, and reading back:
 * a difference counts in *bad (the first five are printed). */
static void digits_as_ref(double v, int *bad)
{
    char buf[TL_FMT_MAX], got[32], want[32];
    tl_fmt_f64(v, buf);
    sig_digits(buf, got);
    ref_digits(v, want);
    if (strcmp(got, want) == 0 && strtod(buf, NULL) == v) return;
    if ((*bad)++ < 5) fprintf(stderr, "  %.17g: got %s, want digits %s\n", v, buf, want);
}

TL_TEST(test_fmt_f64_short_decimals)
{
    /* values as data files hold them (m / 10^k, a few decimals, also the
     * neighbouring doubles and random ones in the same ranges): the digits
     * are exactly the reference's shortest ones */
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    int bad = 0;
    for (int i = 0; i < 40000 && bad < 5; i++) {
        double v;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        switch (i % 4) {
        case 0: /* m / 10^k */
            v = (double)(x % 100000000000ULL) / pow(10, (double)((x >> 40) % 16));
            break;
        case 1: { /* the next double up or down from one */
            double w = (double)(x % 10000000ULL) / pow(10, (double)((x >> 40) % 9));
            v = nextafter(w, (x >> 63) ? 0.0 : INFINITY);
            break;
        }
        case 2: /* random in [0, 1e6) */
            v = (double)(x >> 11) / 9007199254740992.0 * 1e6;
            break;
        default: /* random mantissa, exponent in [2^-60, 2^60) */
            v = ldexp((double)(x >> 11) / 9007199254740992.0 + 0.5, (int)(x % 120) - 60);
            break;
        }
        if (v != 0) digits_as_ref(v, &bad);
    }
    CHECK_EQ_INT(bad, 0);
}

TL_TEST(test_fmt_f64_exact)
{
    /* full-precision doubles (sums, means), the 128-bit search of
     * nearest_k_digits: random significands over every exponent and most
     * densely around the range it covers (about 1e-5 to 1e37), where it
     * divides (v >= 1e15), and the neighbours of powers of ten (the k-digit
     * rounding carries into another digit) */
    uint64_t x = 0x243F6A8885A308D3ULL;
    int bad = 0;
    long n = tl_test_scaled(60000, 6);
    for (long i = 0; i < n; i++) {
        uint64_t bits;
        double v;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if (i % 3 == 0) {
            bits = x & 0x7fffffffffffffffULL; /* any finite exponent */
            if ((bits >> 52) == 0x7ff) continue;
        } else {
            int e = (int)((x >> 52) % 150) - 75 + 1023; /* 2^-75 .. 2^75 */
            bits = (x & 0xfffffffffffffULL) | ((uint64_t)e << 52);
        }
        memcpy(&v, &bits, 8);
        if (v != 0) digits_as_ref(v, &bad);
    }
    for (int e = -25; e <= 40; e++) {
        double p = pow(10, e), up = p, down = p;
        for (int j = 0; j < 4; j++) {
            up = nextafter(up, INFINITY);
            down = nextafter(down, 0);
            digits_as_ref(up, &bad);
            digits_as_ref(down, &bad);
        }
        digits_as_ref(p, &bad);
    }
    /* sums as the group-by writes them */
    double sum = 0;
    for (int i = 1; i <= 2000; i++) {
        sum += 0.1 * i + 1e-7 / i;
        digits_as_ref(sum, &bad);
        digits_as_ref(sum / 3, &bad);
    }
    CHECK_EQ_INT(bad, 0);
}

TL_TEST(test_fmt_other)
{
    char buf[TL_FMT_MAX];
    CHECK_EQ_INT(tl_fmt_i64(0, buf), 1);
    CHECK_EQ_STR(buf, "0");
    tl_fmt_i64(INT64_MIN, buf);
    CHECK_EQ_STR(buf, "-9223372036854775808");
    tl_fmt_i64(INT64_MAX, buf);
    CHECK_EQ_STR(buf, "9223372036854775807");
    tl_fmt_i64(-42, buf);
    CHECK_EQ_STR(buf, "-42");
    CHECK_EQ_INT(tl_fmt_date(0, buf), 10);
    CHECK_EQ_STR(buf, "1970-01-01");
    tl_fmt_date(-1, buf);
    CHECK_EQ_STR(buf, "1969-12-31");
    tl_fmt_date(11016, buf);
    CHECK_EQ_STR(buf, "2000-02-29");
    tl_fmt_date(-719528, buf);
    CHECK_EQ_STR(buf, "0000-01-01");
    tl_fmt_date(-719529, buf);
    CHECK_EQ_STR(buf, "-0001-12-31");
    tl_fmt_date(2932897, buf);
    CHECK_EQ_STR(buf, "10000-01-01");
    tl_fmt_timestamp(0, buf);
    CHECK_EQ_STR(buf, "1970-01-01 00:00:00");
    tl_fmt_timestamp(-1, buf);
    CHECK_EQ_STR(buf, "1969-12-31 23:59:59.999999");
    tl_fmt_timestamp(-500000, buf);
    CHECK_EQ_STR(buf, "1969-12-31 23:59:59.5");
    tl_fmt_timestamp(86400000000LL * 2 + 3723500000LL, buf);
    CHECK_EQ_STR(buf, "1970-01-03 01:02:03.5");
    tl_fmt_timestamp(1000, buf);
    CHECK_EQ_STR(buf, "1970-01-01 00:00:00.001");
    tl_fmt_timestamp(123456, buf);
    CHECK_EQ_STR(buf, "1970-01-01 00:00:00.123456");
    CHECK_EQ_INT(tl_fmt_timestamp(INT64_MIN, buf), strlen(buf));
    CHECK_EQ_INT(tl_fmt_timestamp(INT64_MAX, buf), strlen(buf));
    CHECK_EQ_STR(buf, "294247-01-10 04:00:54.775807");
}

TL_TEST(test_parse_basic)
{
    bool b;
    int64_t i;
    CHECK(tl_parse_bool("true", 4, &b) && b);
    CHECK(tl_parse_bool("FALSE", 5, &b) && !b);
    CHECK(tl_parse_bool("True", 4, &b) && b);
    CHECK(!tl_parse_bool("t", 1, &b));
    CHECK(!tl_parse_bool("yes", 3, &b));
    CHECK(!tl_parse_bool("1", 1, &b));
    CHECK(!tl_parse_bool("true ", 5, &b));
    CHECK(!tl_parse_bool("", 0, &b));

    CHECK(tl_parse_i64("0", 1, &i) && i == 0);
    CHECK(tl_parse_i64("-17", 3, &i) && i == -17);
    CHECK(tl_parse_i64("+17", 3, &i) && i == 17);
    CHECK(tl_parse_i64("007", 3, &i) && i == 7);
    CHECK(tl_parse_i64("9223372036854775807", 19, &i) && i == INT64_MAX);
    CHECK(tl_parse_i64("-9223372036854775808", 20, &i) && i == INT64_MIN);
    CHECK(!tl_parse_i64("9223372036854775808", 19, &i));
    CHECK(!tl_parse_i64("-9223372036854775809", 20, &i));
    CHECK(!tl_parse_i64("99999999999999999999999", 23, &i));
    CHECK(!tl_parse_i64("", 0, &i));
    CHECK(!tl_parse_i64("-", 1, &i));
    CHECK(!tl_parse_i64("+", 1, &i));
    CHECK(!tl_parse_i64(" 1", 2, &i));
    CHECK(!tl_parse_i64("1 ", 2, &i));
    CHECK(!tl_parse_i64("1.0", 3, &i));
    CHECK(!tl_parse_i64("1e3", 3, &i));
    CHECK(!tl_parse_i64("0x10", 4, &i));
    CHECK(!tl_parse_i64("--1", 3, &i));
    /* length bounds the parse, not a NUL */
    CHECK(tl_parse_i64("12345", 2, &i) && i == 12);
}

TL_TEST(test_parse_f64)
{
    double d;
    char longbuf[400];
#define F(s) tl_parse_f64(s, strlen(s), &d)
    CHECK(F("1.5") && d == 1.5);
    CHECK(F("-0") && d == 0 && signbit(d));
    CHECK(F("+0.0") && d == 0 && !signbit(d));
    CHECK(F(".5") && d == 0.5);
    CHECK(F("5.") && d == 5.0);
    CHECK(F("1e5") && d == 1e5);
    CHECK(F("1E+05") && d == 1e5);
    CHECK(F("2.5e-7") && d == 2.5e-7);
    CHECK(F("0.1") && d == 0.1);
    CHECK(F("0.30000000000000004") && d == 0.30000000000000004);
    CHECK(F("123456789012345678") && d == 123456789012345678.0);
    CHECK(F("9223372036854775808") && d == 9223372036854775808.0);
    CHECK(F("1e400") && isinf(d) && d > 0);
    CHECK(F("1e-400") && d == 0);
    CHECK(F("4.9e-324") && d == 5e-324);
    CHECK(F("1.7976931348623157e308") && d == 1.7976931348623157e308);
    CHECK(F("inf") && isinf(d) && d > 0);
    CHECK(F("-inf") && isinf(d) && d < 0);
    CHECK(F("+Inf") && isinf(d) && d > 0);
    CHECK(F("INFINITY") && isinf(d));
    CHECK(F("-Infinity") && isinf(d) && d < 0);
    CHECK(F("nan") && isnan(d));
    CHECK(F("NaN") && isnan(d));
    CHECK(F("-nan") && isnan(d));
    CHECK(!F(""));
    CHECK(!F("."));
    CHECK(!F("-"));
    CHECK(!F("+.e1"));
    CHECK(!F("e5"));
    CHECK(!F("1e"));
    CHECK(!F("1e+"));
    CHECK(!F("1.2.3"));
    CHECK(!F("0x1p3"));
    CHECK(!F("0x10"));
    CHECK(!F(" 1"));
    CHECK(!F("1 "));
    CHECK(!F("1,5"));
    CHECK(!F("infin"));
    CHECK(!F("nana"));
    CHECK(!F("nan(1)"));
    CHECK(!F("in"));
    CHECK(!F("--1"));
#undef F
    /* long input goes through the heap copy */
    memset(longbuf, '0', sizeof longbuf);
    longbuf[0] = '1';
    longbuf[1] = '.';
    longbuf[399] = '5';
    CHECK(tl_parse_f64(longbuf, 400, &d) && d == 1.0);
    longbuf[0] = '0';
    longbuf[399] = '1';
    longbuf[10] = '7'; /* 0.00000000700...01 */
    CHECK(tl_parse_f64(longbuf, 400, &d) && d == 7e-9);
    longbuf[10] = '0';
    longbuf[399] = 'x';
    CHECK(!tl_parse_f64(longbuf, 400, &d));
    {
        /* the shortest output always parses back (spot checks) */
        const double vs[] = {0.1, 1e-5, 1e16, 5e-324, 2.0 / 3.0, 1e23};
        size_t k;
        for (k = 0; k < sizeof vs / sizeof vs[0]; k++) {
            char buf[TL_FMT_MAX];
            size_t n = tl_fmt_f64(vs[k], buf);
            CHECK(tl_parse_f64(buf, n, &d) && d == vs[k]);
        }
    }
}

TL_TEST(test_dates)
{
    int32_t d;
    int64_t y;
    unsigned m, dd;
#define D(s) tl_parse_date(s, strlen(s), &d)
    CHECK(D("1970-01-01") && d == 0);
    CHECK(D("1970-01-02") && d == 1);
    CHECK(D("1969-12-31") && d == -1);
    CHECK(D("2000-02-29") && d == 11016);
    CHECK(D("2024-02-29"));
    CHECK(D("0000-01-01") && d == -719528);
    CHECK(D("9999-12-31") && d == 2932896);
    CHECK(D("1600-02-29"));
    CHECK(!D("1900-02-29"));
    CHECK(!D("2023-02-29"));
    CHECK(!D("2024-04-31"));
    CHECK(!D("2024-13-01"));
    CHECK(!D("2024-00-10"));
    CHECK(!D("2024-01-00"));
    CHECK(!D("2024-01-32"));
    CHECK(!D("2024-1-01"));
    CHECK(!D("2024/01/01"));
    CHECK(!D("2024-01-01 "));
    CHECK(!D(" 2024-01-01"));
    CHECK(!D("2024-01-01 00:00:00"));
    CHECK(!D("20240101"));
    CHECK(!D("abcd-ef-gh"));
    CHECK(!D(""));
#undef D
    CHECK_EQ_INT(tl_days_from_civil(1970, 1, 1), 0);
    CHECK_EQ_INT(tl_days_from_civil(2000, 3, 1), 11017);
    CHECK_EQ_INT(tl_days_from_civil(1, 1, 1), -719162);
    CHECK_EQ_INT(tl_days_from_civil(-1, 12, 31), -719529);
    tl_civil_from_days(-719162, &y, &m, &dd);
    CHECK(y == 1 && m == 1 && dd == 1);
    tl_civil_from_days(-1, &y, &m, &dd);
    CHECK(y == 1969 && m == 12 && dd == 31);
    {
        /* round trip over a wide range, including negative days */
        int32_t k;
        int ok = 1;
        for (k = -800000; k <= 3000000; k += 7) {
            tl_civil_from_days(k, &y, &m, &dd);
            if (tl_days_from_civil(y, m, dd) != k) ok = 0;
        }
        CHECK(ok);
        tl_civil_from_days(INT32_MIN, &y, &m, &dd);
        CHECK_EQ_INT(tl_days_from_civil(y, m, dd), INT32_MIN);
        tl_civil_from_days(INT32_MAX, &y, &m, &dd);
        CHECK_EQ_INT(tl_days_from_civil(y, m, dd), INT32_MAX);
    }
    {
        /* parse(format(d)) == d for 4-digit years */
        int32_t k, back;
        int ok = 1;
        char buf[TL_FMT_MAX];
        for (k = -719528; k <= 2932896; k += 13) {
            size_t n = tl_fmt_date(k, buf);
            if (!tl_parse_date(buf, n, &back) || back != k) ok = 0;
        }
        CHECK(ok);
    }
}

TL_TEST(test_timestamps)
{
    int64_t t;
    char buf[TL_FMT_MAX];
#define T(s) tl_parse_timestamp(s, strlen(s), &t)
    CHECK(T("1970-01-01 00:00:00") && t == 0);
    CHECK(T("1970-01-01") && t == 0);
    CHECK(T("1970-01-02") && t == 86400000000LL);
    CHECK(T("1970-01-01T00:00:01") && t == 1000000);
    CHECK(T("1970-01-01 00:00:00.5") && t == 500000);
    CHECK(T("1970-01-01 00:00:00.000001") && t == 1);
    CHECK(T("1970-01-01 00:00:00.1234567") && t == 123456);
    CHECK(T("1970-01-01 00:00:00.123456789") && t == 123456);
    CHECK(T("1969-12-31 23:59:59.999999") && t == -1);
    CHECK(T("2024-02-29 23:59:59"));
    tl_fmt_timestamp(t, buf);
    CHECK_EQ_STR(buf, "2024-02-29 23:59:59");
    CHECK(T("2021-03-04T03:04:05.50"));
    tl_fmt_timestamp(t, buf);
    CHECK_EQ_STR(buf, "2021-03-04 03:04:05.5");
    CHECK(!T("1970-01-01 00:00:00.1234567890"));
    CHECK(!T("1970-01-01 00:00:00."));
    CHECK(!T("1970-01-01 24:00:00"));
    CHECK(!T("1970-01-01 00:60:00"));
    CHECK(!T("1970-01-01 00:00:60"));
    CHECK(!T("1970-01-01 0:00:00"));
    CHECK(!T("1970-01-01 00:00"));
    CHECK(!T("1970-01-01x00:00:00"));
    CHECK(!T("1970-01-01 00:00:00Z"));
    CHECK(!T("1970-01-01 00:00:00+01:00"));
    CHECK(!T("1970-01-01 00:00:00 "));
    CHECK(!T("1970-01-01 "));
    CHECK(!T("1900-02-29 00:00:00"));
    CHECK(!T("1970-01-01 00:00:00.5x"));
    CHECK(!T(""));
#undef T
    {
        /* parse(format(t)) == t */
        int64_t k, back;
        int ok = 1;
        for (k = -5000000000000000LL; k < 5000000000000000LL; k += 3333333333333LL + 7) {
            size_t n = tl_fmt_timestamp(k, buf);
            if (!tl_parse_timestamp(buf, n, &back) || back != k) ok = 0;
        }
        CHECK(ok);
    }
}

/* Timestamps with their offset: the instant in UTC, written with +00. */
static const char *tz(const char *in)
{
    static char buf[TL_FMT_MAX];
    int64_t v;
    if (!tl_parse_timestamptz(in, strlen(in), &v)) return "no";
    buf[tl_fmt_timestamptz(v, buf)] = 0;
    return buf;
}

TL_TEST(test_timestamptz)
{
    CHECK_EQ_STR(tz("2024-01-31T10:00:00Z"), "2024-01-31 10:00:00+00");
    CHECK_EQ_STR(tz("2024-01-31 10:00:00z"), "2024-01-31 10:00:00+00");
    CHECK_EQ_STR(tz("2024-01-31 10:00:00+02:00"), "2024-01-31 08:00:00+00");
    CHECK_EQ_STR(tz("2024-01-31 10:00:00+0200"), "2024-01-31 08:00:00+00");
    CHECK_EQ_STR(tz("2024-01-31 10:00:00+02"), "2024-01-31 08:00:00+00");
    CHECK_EQ_STR(tz("2024-01-31 10:00:00 -05:30"), "2024-01-31 15:30:00+00");
    CHECK_EQ_STR(tz("2024-02-29T23:59:59.5-05:30"), "2024-03-01 05:29:59.5+00");
    CHECK_EQ_STR(tz("1970-01-01 00:00:00+00"), "1970-01-01 00:00:00+00");
    CHECK_EQ_STR(tz("1969-12-31 23:00:00-01"), "1970-01-01 00:00:00+00");
    /* not one */
    CHECK_EQ_STR(tz("2024-01-31 10:00:00"), "no");
    CHECK_EQ_STR(tz("2024-01-31Z"), "no");
    CHECK_EQ_STR(tz("2024-01-31 10:00:00+24"), "no");
    CHECK_EQ_STR(tz("2024-01-31 10:00:00+02:60"), "no");
    CHECK_EQ_STR(tz("2024-01-31 10:00:00+2"), "no");
    CHECK_EQ_STR(tz("2024-01-31 10:00:00+02:0"), "no");
    CHECK_EQ_STR(tz("2024-01-31 10:00:00+020"), "no");
    CHECK_EQ_STR(tz("2024-01-31 10:00:00ZZ"), "no");
    CHECK_EQ_STR(tz("2024-01-31 10:00:00  +02"), "no");
    CHECK_EQ_STR(tz("2024-02-30 10:00:00Z"), "no");
    CHECK_EQ_STR(tz("2024-01-31 10:00+02"), "no");
}

int main(void)
{
    TL_RUN(test_fmt_f64);
    TL_RUN(test_fmt_f64_roundtrip);
    TL_RUN(test_fmt_f64_short_decimals);
    TL_RUN(test_fmt_f64_exact);
    TL_RUN(test_fmt_other);
    TL_RUN(test_parse_basic);
    TL_RUN(test_parse_f64);
    TL_RUN(test_dates);
    TL_RUN(test_timestamps);
    TL_RUN(test_timestamptz);
    return tl_test_summary(__FILE__);
}
