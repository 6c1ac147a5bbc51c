/*
 * test_fn_time.c -- the date and time kernels added beside fn_date.c's
 * extraction: strftime / strptime / try_strptime (fn_strtime.c), epoch,
 * to_timestamp, intervals and date_add (fn_time.c), date_diff and the
 * calendar fields (fn_date.c).  Expected values are DuckDB 1.5's answers.
 */
#include <stdlib.h>

#include "../../kernels/fn.h"
#include "../../lib/core/text.h"
#include "tl_arrays.h"
#include "tl_test.h"

static TlArray *mk_ts_text(const char *s)
{
    TlBuilder b;
    int64_t v = 0;
    tl_builder_init(&b, TL_TTIMESTAMP);
    if (s) {
        if (!tl_parse_timestamp(s, strlen(s), &v)) abort();
        tl_builder_append_i64(&b, v);
    } else {
        tl_builder_append_null(&b);
    }
    TlArray *a = tl_builder_finish(&b);
    tl_builder_free(&b);
    return a;
}

static TlArray *mk_date_text(const char *s)
{
    TlBuilder b;
    int32_t v = 0;
    tl_builder_init(&b, TL_TDATE);
    if (!tl_parse_date(s, strlen(s), &v)) abort();
    tl_builder_append_i32(&b, v);
    TlArray *a = tl_builder_finish(&b);
    tl_builder_free(&b);
    return a;
}


static TlError g_err;

/* Call `name` over the one-row arguments (released) -> the text of the
 * result, "NULL", or "ERROR: message". */
static const char *one(const char *name, TlArray **a, int n)
{
    static char buf[4][512];
    static int k;
    char *b = buf[k++ & 3];
    TlDatum d[4];
    TlArray *out = NULL;
    int64_t row = -1;
    for (int i = 0; i < n; i++) d[i] = (TlDatum){a[i], false};
    memset(&g_err, 0, sizeof g_err);
    TlStatus st = tl_k_fn_by_name(name)(d, n, 1, &out, &row, &g_err);
    for (int i = 0; i < n; i++) tl_array_release(a[i]);
    if (st != TL_OK) {
        snprintf(b, 512, "ERROR: %.400s", g_err.msg);
        return b;
    }
    if (!tl_array_valid(out, 0)) snprintf(b, 512, "NULL");
    else if (out->type == TL_TSTRING) {
        const TlView *v = &tl_array_views(out)[0];
        snprintf(b, 512, "%.*s", (int)tl_view_len(*v),
                 (const char *)tl_view_ptr(v, out->data));
    } else if (out->type == TL_TTIMESTAMP) tl_fmt_timestamp(tl_array_i64(out)[0], b);
    else if (out->type == TL_TTIMESTAMPTZ) tl_fmt_timestamptz(tl_array_i64(out)[0], b);
    else if (out->type == TL_TDATE) tl_fmt_date(tl_array_i32(out)[0], b);
    else if (out->type == TL_TFLOAT64) tl_fmt_f64(tl_array_f64(out)[0], b);
    else tl_fmt_i64(tl_array_i64(out)[0], b);
    tl_array_release(out);
    return b;
}

static const char *ftime(const char *ts, const char *fmt)
{
    TlArray *a[2] = {mk_ts_text(ts), mk_s1(fmt)};
    return one("strftime", a, 2);
}

static const char *ptime(const char *fn, const char *s, const char *fmt)
{
    TlArray *a[2] = {mk_s1(s), mk_s1(fmt)};
    return one(fn, a, 2);
}

TL_TEST(test_strftime)
{
    CHECK_EQ_STR(ftime("2024-03-05 07:08:09.123456",
                       "%Y|%m|%d|%H|%M|%S|%f|%y|%b|%B|%a|%A|%j|%p|%I|%z|%Z|%%|%g"),
                 "2024|03|05|07|08|09|123456|24|Mar|March|Tue|Tuesday|065|AM|07|+00||%|123");
    CHECK_EQ_STR(ftime("2024-03-05 07:08:09.123456",
                       "%w|%u|%U|%W|%V|%G|%c|%x|%X|%-d|%-m|%-y|%-H|%-I|%-M|%-S|%-j|%T|%h"),
                 "2|2|09|10|10|2024|2024-03-05 07:08:09|2024-03-05|07:08:09|5|3|24|7|7|8|9|65|07:08:09|Mar");
    CHECK_EQ_STR(ftime("2021-01-01", "%U %W %V %G"), "00 00 53 2020");
    CHECK_EQ_STR(ftime("2024-12-30", "%U %W %V %G"), "52 53 01 2025");
    CHECK_EQ_STR(ftime("0012-01-01 17:00:00", "%Y %y %I %p"), "0012 12 05 PM");
    CHECK_EQ_STR(ftime("1969-12-31 23:59:59.999999", "%F"),
                 "ERROR: unknown format code %F in format \"%F\"");
    CHECK_EQ_STR(ftime(NULL, "%Y"), "NULL");
    /* a date is its midnight */
    TlArray *a[2] = {mk_date_text("2024-02-29"), mk_s1("%d.%m.%Y %H")};
    CHECK_EQ_STR(one("strftime", a, 2), "29.02.2024 00");
}

TL_TEST(test_strptime)
{
    CHECK_EQ_STR(ptime("strptime", "2024-03-05 07:08:09", "%Y-%m-%d %H:%M:%S"),
                 "2024-03-05 07:08:09");
    CHECK_EQ_STR(ptime("strptime", "2024-3-5", "%Y-%m-%d"), "2024-03-05 00:00:00");
    CHECK_EQ_STR(ptime("strptime", "05/Mar/2024:07:08:09 +0200",
                       "%d/%b/%Y:%H:%M:%S %z"), "2024-03-05 05:08:09");
    CHECK_EQ_STR(ptime("strptime", "2024-3-5 +02:30", "%Y-%m-%d %z"),
                 "2024-03-04 21:30:00");
    CHECK_EQ_STR(ptime("strptime", " 2024-03-05 ", "%Y-%m-%d"), "2024-03-05 00:00:00");
    CHECK_EQ_STR(ptime("strptime", "2024-03-05   7", "%Y-%m-%d %H"),
                 "2024-03-05 07:00:00");
    CHECK_EQ_STR(ptime("strptime", "24-03-05 1:02 PM", "%y-%m-%d %I:%M %p"),
                 "2024-03-05 13:02:00");
    CHECK_EQ_STR(ptime("strptime", "69-01-01", "%y-%m-%d"), "1969-01-01 00:00:00");
    CHECK_EQ_STR(ptime("strptime", "68-01-01", "%y-%m-%d"), "2068-01-01 00:00:00");
    CHECK_EQ_STR(ptime("strptime", "2024-3-5 12 AM", "%Y-%m-%d %I %p"),
                 "2024-03-05 00:00:00");
    CHECK_EQ_STR(ptime("strptime", "march 5 2024", "%B %d %Y"), "2024-03-05 00:00:00");
    CHECK_EQ_STR(ptime("strptime", "2024 065", "%Y %j"), "2024-03-05 00:00:00");
    CHECK_EQ_STR(ptime("strptime", "Wed 2024-3-5", "%a %Y-%m-%d"), "2024-03-05 00:00:00");
    CHECK_EQ_STR(ptime("strptime", "1.5", "%S.%g"), "1900-01-01 00:00:01.5");
    CHECK_EQ_STR(ptime("strptime", "2024-03-05 07:08:09.12",
                       "%Y-%m-%d %H:%M:%S.%f"), "2024-03-05 07:08:09.12");
    CHECK_EQ_STR(ptime("strptime", "20240305", "%Y%m%d"), "2024-03-05 00:00:00");
    /* what does not match */
    CHECK_EQ_STR(ptime("strptime", "2024-03-05x", "%Y-%m-%d"),
                 "ERROR: cannot parse \"2024-03-05x\" as a timestamp with format \"%Y-%m-%d\"");
    const char *bad[][2] = {
        {"2024-03-05", "%Y-%m-%d "},   {"2024-03-05x", "%Y-%m-%d x"},
        {"2024-02-30", "%Y-%m-%d"},    {"2023-02-29", "%Y-%m-%d"},
        {"2024-03-05 25:00", "%Y-%m-%d %H:%M"}, {"-2024", "%Y"},
        {"12345-01-01", "%Y-%m-%d"},   {"2024-03- 5", "%Y-%m-%d"},
        {"2024-3-5 Z", "%Y-%m-%d %z"}, {"2024-3-5 13 PM", "%Y-%m-%d %I %p"},
        {"", "%Y"},                    {"2024-03-05 07:08:09.1234567", "%Y-%m-%d %H:%M:%S.%f"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ_STR(ptime("try_strptime", bad[i][0], bad[i][1]), "NULL");
        CHECK(strncmp(ptime("strptime", bad[i][0], bad[i][1]), "ERROR", 5) == 0);
    }
    CHECK_EQ_STR(ptime("strptime", "2024", "%Q"),
                 "ERROR: unknown format code %Q in format \"%Q\"");
}

TL_TEST(test_format_check)
{
    size_t bad = 99;
    char msg[128];
    CHECK(tl_k_time_format_check("%Y-%m-%d %-H", 12, false, &bad, msg, sizeof msg));
    CHECK(!tl_k_time_format_check("ab%-Yc", 6, false, &bad, msg, sizeof msg));
    CHECK_EQ_INT(bad, 2);
    CHECK_EQ_STR(msg, "unknown format code %-Y");
    CHECK(!tl_k_time_format_check("x%", 2, false, &bad, msg, sizeof msg));
    CHECK_EQ_INT(bad, 1);
    CHECK_EQ_STR(msg, "a format cannot end in a lone %");
    CHECK(!tl_k_time_format_check("%Y %V", 5, true, &bad, msg, sizeof msg));
    CHECK_EQ_INT(bad, 3);
    CHECK_EQ_STR(msg, "format code %V is not supported by strptime");
    CHECK(tl_k_time_format_check("%Y %V", 5, false, &bad, msg, sizeof msg));
}

static const char *interval(const char *s)
{
    static char b[160];
    TlInterval iv;
    size_t bad;
    char msg[128];
    if (!tl_k_interval_parse(s, strlen(s), &iv, &bad, msg, sizeof msg))
        snprintf(b, sizeof b, "@%zu %s", bad, msg);
    else
        snprintf(b, sizeof b, "%lld %lld %lld", (long long)iv.months,
                 (long long)iv.days, (long long)iv.micros);
    return b;
}

TL_TEST(test_interval_parse)
{
    CHECK_EQ_STR(interval("3 days"), "0 3 0");
    CHECK_EQ_STR(interval("  3DAYS "), "0 3 0");
    CHECK_EQ_STR(interval("1.5 days"), "0 1 43200000000");
    CHECK_EQ_STR(interval("1.5 months"), "1 15 0");
    CHECK_EQ_STR(interval("2 weeks"), "0 14 0");
    CHECK_EQ_STR(interval("1 year 2 mons 3 d 4 h 5 m 6 s 7 ms 8 us"),
                 "14 3 14706007008");
    CHECK_EQ_STR(interval("1:30:00"), "0 0 5400000000");
    CHECK_EQ_STR(interval("-1 day"), "0 -1 0");
    CHECK_EQ_STR(interval("1 day ago"), "0 -1 0");
    CHECK_EQ_STR(interval("3"), "0 0 3000000");
    CHECK_EQ_STR(interval("90 minute"), "0 0 5400000000");
    CHECK_EQ_STR(interval("x"), "@0 cannot read an interval at \"x\"");
    CHECK_EQ_STR(interval(""), "@0 empty interval");
    CHECK_EQ_STR(interval("3 fortnights"), "@2 unknown interval unit \"fortnights\"");
    CHECK_EQ_STR(interval("2 hours 30"), "@8 a number in an interval needs a "
                                         "unit (days, hours, ...)");
    CHECK_EQ_STR(interval("99999999999 years"), "@0 interval out of range");
}

static const char *add(const char *ts, const char *iv, bool neg)
{
    static char b[200];
    TlArray *t = mk_ts_text(ts), *s = mk_s1(iv), *out = NULL;
    TlDatum dt = {t, false}, ds = {s, true};
    int64_t row = -1;
    TlError e = {0};
    if (tl_k_add_interval(&dt, &ds, neg, 1, &out, &row, &e) != TL_OK)
        snprintf(b, sizeof b, "ERROR row %lld: %.120s", (long long)row, e.msg);
    else
        tl_fmt_timestamp(tl_array_i64(out)[0], b);
    tl_array_release(t);
    tl_array_release(s);
    tl_array_release(out);
    return b;
}

TL_TEST(test_add_interval)
{
    CHECK_EQ_STR(add("2024-01-31 10:00:00", "1 month", false), "2024-02-29 10:00:00");
    CHECK_EQ_STR(add("2024-03-31", "1 month", true), "2024-02-29 00:00:00");
    CHECK_EQ_STR(add("2024-01-31", "1 month 1 day", false), "2024-03-01 00:00:00");
    CHECK_EQ_STR(add("2024-01-01", "36 hours", false), "2024-01-02 12:00:00");
    CHECK_EQ_STR(add("1970-01-01", "1 us ago", false), "1969-12-31 23:59:59.999999");
    CHECK_EQ_STR(add("2023-02-28", "-12 months", false), "2022-02-28 00:00:00");
    CHECK_EQ_STR(add("2024-02-29", "1 year", false), "2025-02-28 00:00:00");
    CHECK_EQ_STR(add("2024-02-29", "20000 centuries", false),
                 "ERROR row 0: timestamp out of range after adding an interval");
    CHECK_EQ_STR(add("2024-02-29", "x", false),
                 "ERROR row 0: cannot read an interval at \"x\"");
}

static const char *diff(const char *part, const char *a, const char *b)
{
    TlArray *x[3] = {mk_s1(part), mk_ts_text(a), mk_ts_text(b)};
    return one("date_diff", x, 3);
}

TL_TEST(test_date_diff)
{
    CHECK_EQ_STR(diff("hour", "2024-01-01 10:59:00", "2024-01-01 11:01:00"), "1");
    CHECK_EQ_STR(diff("hour", "2024-01-01 11:01:00", "2024-01-01 10:59:00"), "-1");
    CHECK_EQ_STR(diff("minute", "2024-01-01 10:59:59", "2024-01-01 11:00:01"), "1");
    CHECK_EQ_STR(diff("day", "2024-01-01 23:59:00", "2024-01-02 00:01:00"), "1");
    CHECK_EQ_STR(diff("week", "2024-01-06", "2024-01-08"), "0");
    CHECK_EQ_STR(diff("week", "2024-01-01", "2024-01-14"), "1");
    CHECK_EQ_STR(diff("week", "2024-01-14", "2024-01-01"), "-1");
    CHECK_EQ_STR(diff("month", "2024-01-31", "2024-02-01"), "1");
    CHECK_EQ_STR(diff("year", "2024-12-31", "2025-01-01"), "1");
    CHECK_EQ_STR(diff("quarter", "2024-03-31", "2024-04-01"), "1");
    CHECK_EQ_STR(diff("decade", "2019-12-31", "2020-01-01"), "1");
    CHECK_EQ_STR(diff("second", "2024-01-01 00:00:00.9", "2024-01-01 00:00:01.1"), "1");
    CHECK_EQ_STR(diff("ms", "1969-12-31 23:59:59.9999", "1970-01-01 00:00:00.0001"), "1");
    CHECK_EQ_STR(diff("fortnight", "2024-01-01", "2024-01-01"),
                 "ERROR: unknown date part \"fortnight\" for date_diff (expected "
                 "year, quarter, month, week, day, hour, minute or second)");
    CHECK(tl_k_date_part_known("Months", 6));
    CHECK(!tl_k_date_part_known("fortnight", 9));
}

static const char *field(const char *fn, const char *d)
{
    TlArray *a[1] = {mk_date_text(d)};
    return one(fn, a, 1);
}

TL_TEST(test_calendar_fields)
{
    CHECK_EQ_STR(field("dayofweek", "2024-03-10"), "0");
    CHECK_EQ_STR(field("isodow", "2024-03-10"), "7");
    CHECK_EQ_STR(field("dayofyear", "2024-12-31"), "366");
    CHECK_EQ_STR(field("week", "2021-01-01"), "53");
    CHECK_EQ_STR(field("yearweek", "2021-01-01"), "202053");
    CHECK_EQ_STR(field("isoyear", "2021-01-01"), "2020");
    CHECK_EQ_STR(field("quarter", "2024-05-01"), "2");
    /* week and isoyear against strftime's %V %G, every day of 1890..2110 */
    int32_t lo, hi;
    tl_parse_date("1890-01-01", 10, &lo);
    tl_parse_date("2110-12-31", 10, &hi);
    int bad = 0;
    for (int32_t d = lo; d <= hi && bad < 5; d++) {
        char ds[16], want[32];
        tl_fmt_date(d, ds);
        snprintf(want, sizeof want, "%s", ftime(ds, "%G%V"));
        if (strcmp(field("yearweek", ds), want) != 0) {
            fprintf(stderr, "%s: yearweek %s, %%G%%V %s\n", ds,
                    field("yearweek", ds), want);
            bad++;
        }
    }
    CHECK_EQ_INT(bad, 0);
}

TL_TEST(test_epochs)
{
    TlArray *a[1] = {mk_ts_text("2024-03-05 07:08:09.5")};
    CHECK_EQ_STR(one("epoch", a, 1), "1709622489.5");
    a[0] = mk_ts_text("1969-12-31 23:59:59.9995");
    CHECK_EQ_STR(one("epoch_ms", a, 1), "0");
    a[0] = mk_ts_text("1969-12-31 23:59:59.9995");
    CHECK_EQ_STR(one("epoch_us", a, 1), "-500");
    a[0] = mk_i1(-1500);
    CHECK_EQ_STR(one("epoch_ms", a, 1), "1969-12-31 23:59:58.5");
    a[0] = mk_f1(1.5);
    CHECK_EQ_STR(one("to_timestamp", a, 1), "1970-01-01 00:00:01.5+00");
    a[0] = mk_f1(-0.0000015);
    CHECK_EQ_STR(one("to_timestamp", a, 1), "1969-12-31 23:59:59.999998+00");
    a[0] = mk_f1(1e20);
    CHECK_EQ_STR(one("to_timestamp", a, 1),
                 "ERROR: to_timestamp: epoch seconds out of the timestamp range");
}

/* Every allocation of strftime and strptime failing in turn. */
TL_TEST(test_oom)
{
    static const char *const fns[] = {"strftime", "strptime", "try_strptime"};
    for (int f = 0; f < 3; f++) {
        bool done = false;
        for (uint64_t k = 1; k < 200 && !done; k++) {
            const char *sv[] = {"2024-01-02", NULL, "bad", "2024-05-06"};
            int64_t tv[] = {1, 2, 3, 4};
            TlBuilder b;
            tl_builder_init(&b, TL_TTIMESTAMP);
            for (int i = 0; i < 4; i++) tl_builder_append_i64(&b, tv[i]);
            TlArray *ts = tl_builder_finish(&b);
            tl_builder_free(&b);
            TlArray *x = f == 0 ? ts : mk_str(sv, 4);
            if (f != 0) tl_array_release(ts);
            TlDatum d[2] = {{x, false}, {mk_s1("%Y-%m-%d"), true}};
            TlArray *out = NULL;
            int64_t row;
            TlError e = {0};
            tl_alloc_fail_at(k);
            TlStatus st = tl_k_fn_by_name(fns[f])(d, 2, 4, &out, &row, &e);
            tl_alloc_fail_at(0);
            tl_array_release(x);
            tl_array_release((TlArray *)d[1].array);
            if (st == TL_ERR_OOM) {
                CHECK(out == NULL);
                continue;
            }
            done = true;
            CHECK_EQ_INT(st, f == 1 ? TL_ERR_DATA : TL_OK);
            CHECK(k > 1);
            tl_array_release(out);
        }
        CHECK(done);
    }
}

int main(void)
{
    TL_RUN(test_strftime);
    TL_RUN(test_strptime);
    TL_RUN(test_format_check);
    TL_RUN(test_interval_parse);
    TL_RUN(test_add_interval);
    TL_RUN(test_date_diff);
    TL_RUN(test_calendar_fields);
    TL_RUN(test_epochs);
    TL_RUN(test_oom);
    return tl_test_summary(__FILE__);
}
