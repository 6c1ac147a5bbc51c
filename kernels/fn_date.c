/*
 * fn_date.c -- year month day hour minute second dayofweek isodow
 * dayofyear week quarter yearweek isoyear date_trunc date_diff.
 *
 * Dates are int32 days since 1970-01-01 and timestamps int64 microseconds
 * since 1970-01-01 00:00:00 (core.h).  Every split of a timestamp into a day
 * and a time of day uses floor division, so instants before 1970 land on the
 * right day: -1 us is 1969-12-31 23:59:59.999999, not 1970-01-01.
 *
 *     micros ---floor / 86400e6---> days ---civil---> (year, month, day)
 *            \--floor mod 86400e6--> time of day ---> hour, minute, second
 *
 * The civil conversions are Howard Hinnant's era algorithms, done here in
 * int64 (so no date, however far out, overflows on the way) and inlined in
 * the loops; a one-entry cache skips the conversion when consecutive rows
 * share a day, which sorted or clustered data mostly does.
 *
 * Extraction returns int64 (second() is whole seconds, as DuckDB's); hour,
 * minute and second of a date are 0.  date_trunc(part, x) returns a
 * timestamp for dates and timestamps alike (man/tally.1), part being one of
 * millennium century decade year quarter month week (ISO: Monday) day hour
 * minute second millisecond microsecond (DuckDB's spellings and plurals,
 * case-insensitive); decade/century/millennium truncate the year toward
 * zero as DuckDB does.  An unknown part or a result outside the timestamp
 * range is a data error at the first row concerned.
 */
#include "fn_impl.h"

#define US_PER_SEC INT64_C(1000000)
#define US_PER_MIN (60 * US_PER_SEC)
#define US_PER_HOUR (60 * US_PER_MIN)
#define US_PER_DAY (24 * US_PER_HOUR)

static inline int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

static inline int64_t floor_mod(int64_t a, int64_t b)
{
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

static inline void civil(int64_t z, int64_t *y, int64_t *m, int64_t *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yoe + era * 400 + (*m <= 2);
}

static inline int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* ------------------------------------------------------------ typing */

static bool is_temporal(TlType t)
{
    return t == TL_TDATE || t == TL_TTIMESTAMP || t == TL_TTIMESTAMPTZ;
}

/* The type a temporal argument is passed as: a timestamptz as the
 * timestamp of its UTC clock (tally's time zone is UTC). */
static TlType as_naive(TlType t)
{
    return t == TL_TTIMESTAMPTZ ? TL_TTIMESTAMP : t;
}

static bool types_part(const TlType *a, int n, TlType *res, TlType *want)
{
    if (n != 1) return false;
    if (a[0] == TL_TNULL) want[0] = TL_TTIMESTAMP;
    else if (is_temporal(a[0])) want[0] = as_naive(a[0]);
    else return false;
    *res = TL_TINT64;
    return true;
}

static bool types_trunc(const TlType *a, int n, TlType *res, TlType *want)
{
    if (n != 2) return false;
    if (a[0] != TL_TSTRING && a[0] != TL_TNULL) return false;
    want[0] = TL_TSTRING;
    if (a[1] == TL_TNULL) want[1] = TL_TTIMESTAMP;
    else if (is_temporal(a[1])) want[1] = as_naive(a[1]);
    else return false;
    *res = TL_TTIMESTAMP;
    return true;
}

/* ------------------------------------------------------- extraction */

enum {
    X_YEAR, X_MONTH, X_DAY, X_HOUR, X_MINUTE, X_SECOND,
    X_DOW, X_ISODOW, X_DOY, X_WEEK, X_QUARTER, X_YEARWEEK, X_ISOYEAR,
};

/* See fn_impl.h: the ISO week is the one of its week's Thursday. */
void tl_k_iso_week(int64_t d, int64_t *iso_year, int64_t *week)
{
    int64_t dow = floor_mod(d + 4, 7); /* 1970-01-01: Thursday */
    int64_t thu = d - (dow == 0 ? 7 : dow) + 4, tm, td;
    civil(thu, iso_year, &tm, &td);
    *week = (thu - days_from_civil(*iso_year, 1, 1)) / 7 + 1;
}

/* Day-level fields that are not the civil date itself: day of week
 * (0 Sunday), ISO day of week (1 Monday), day of year, ISO week, quarter,
 * ISO year*100 + ISO week, ISO year. */
static int64_t day_field(int which, int64_t d, int64_t y, int64_t m)
{
    int64_t dow = floor_mod(d + 4, 7); /* 1970-01-01: Thursday */
    switch (which) {
    case X_DOW: return dow;
    case X_ISODOW: return dow == 0 ? 7 : dow;
    case X_DOY: return d - days_from_civil(y, 1, 1) + 1;
    case X_QUARTER: return (m - 1) / 3 + 1;
    default: break;
    }
    int64_t ty, wk;
    tl_k_iso_week(d, &ty, &wk);
    if (which == X_WEEK) return wk;
    if (which == X_ISOYEAR) return ty;
    return ty * 100 + wk;
}

/* y[i] = field `which` of the day days(i), with the one-day cache. */
#define CIVIL_LOOP(DAYS_EXPR, FIELD)                                           \
    do {                                                                       \
        int64_t last_ = INT64_MIN, cy_ = 0, cm_ = 0, cd_ = 0;                  \
        for (int64_t i = 0; i < n; i++) {                                      \
            int64_t dd_ = (DAYS_EXPR);                                         \
            if (dd_ != last_) {                                                \
                civil(dd_, &cy_, &cm_, &cd_);                                  \
                last_ = dd_;                                                   \
            }                                                                  \
            y[i] = FIELD;                                                      \
        }                                                                      \
    } while (0)

static void extract_date(const int32_t *x, int64_t n, int which, int64_t *y)
{
    switch (which) {
    case X_YEAR: CIVIL_LOOP(x[i], cy_); break;
    case X_MONTH: CIVIL_LOOP(x[i], cm_); break;
    case X_DAY: CIVIL_LOOP(x[i], cd_); break;
    case X_HOUR: case X_MINUTE: case X_SECOND:
        memset(y, 0, (size_t)n * sizeof *y);
        break;
    default:
        CIVIL_LOOP(x[i], day_field(which, dd_, cy_, cm_));
        break;
    }
}

static void extract_ts(const int64_t *x, int64_t n, int which, int64_t *y)
{
    switch (which) {
    case X_YEAR: CIVIL_LOOP(floor_div(x[i], US_PER_DAY), cy_); break;
    case X_MONTH: CIVIL_LOOP(floor_div(x[i], US_PER_DAY), cm_); break;
    case X_DAY: CIVIL_LOOP(floor_div(x[i], US_PER_DAY), cd_); break;
    case X_HOUR:
        for (int64_t i = 0; i < n; i++)
            y[i] = floor_mod(x[i], US_PER_DAY) / US_PER_HOUR;
        break;
    case X_MINUTE:
        for (int64_t i = 0; i < n; i++)
            y[i] = floor_mod(x[i], US_PER_HOUR) / US_PER_MIN;
        break;
    case X_SECOND:
        for (int64_t i = 0; i < n; i++)
            y[i] = floor_mod(x[i], US_PER_MIN) / US_PER_SEC;
        break;
    default:
        CIVIL_LOOP(floor_div(x[i], US_PER_DAY),
                   day_field(which, dd_, cy_, cm_));
        break;
    }
}

static TlStatus extract(const TlDatum *args, int64_t n_rows, int which,
                        TlArray **out, TlError *err)
{
    TlBuf *validity = NULL, *values = NULL;
    bool all_null;
    const TlArray *a = args[0].array;
    TL_TRY(tl_k_fn_nulls(args, 1, n_rows, &all_null, &validity, err));
    if (all_null) return tl_k_fn_null_result(TL_TINT64, n_rows, out, err);
    values = tl_k_fn_values(n_rows, 8, false);
    if (!values) {
        tl_buf_release(validity);
        return tl_error_oom(err);
    }
    if (a->type == TL_TDATE)
        extract_date(tl_array_i32(a), n_rows, which, (int64_t *)values->data);
    else
        extract_ts(tl_array_i64(a), n_rows, which, (int64_t *)values->data);
    *out = tl_array_new(TL_TINT64, n_rows, values, validity, -1, NULL, 0);
    return *out ? TL_OK : tl_error_oom(err);
}

#define EXTRACT_KERNEL(fname, which)                                           \
    static TlStatus fname(const TlDatum *args, int n_args, int64_t n_rows,    \
                          TlArray **out, int64_t *err_row, TlError *err)      \
    {                                                                          \
        TL_FN_BROADCAST(fname);                                                \
        return extract(args, n_rows, which, out, err);                         \
    }

EXTRACT_KERNEL(k_year, X_YEAR)
EXTRACT_KERNEL(k_month, X_MONTH)
EXTRACT_KERNEL(k_day, X_DAY)
EXTRACT_KERNEL(k_hour, X_HOUR)
EXTRACT_KERNEL(k_minute, X_MINUTE)
EXTRACT_KERNEL(k_second, X_SECOND)
EXTRACT_KERNEL(k_dayofweek, X_DOW)
EXTRACT_KERNEL(k_isodow, X_ISODOW)
EXTRACT_KERNEL(k_dayofyear, X_DOY)
EXTRACT_KERNEL(k_week, X_WEEK)
EXTRACT_KERNEL(k_quarter, X_QUARTER)
EXTRACT_KERNEL(k_yearweek, X_YEARWEEK)
EXTRACT_KERNEL(k_isoyear, X_ISOYEAR)

/* ------------------------------------------------------- date_trunc */

enum {
    T_MILLENNIUM, T_CENTURY, T_DECADE, T_YEAR, T_QUARTER, T_MONTH, T_WEEK,
    T_DAY, /* parts up to here truncate the day */
    T_HOUR, T_MINUTE, T_SECOND, T_MILLISECOND, T_MICROSECOND,
};

static const struct {
    const char *word;
    int part;
} part_words[] = {
    {"millennium", T_MILLENNIUM}, {"millennia", T_MILLENNIUM},
    {"millenniums", T_MILLENNIUM}, {"mil", T_MILLENNIUM},
    {"mils", T_MILLENNIUM},
    {"century", T_CENTURY}, {"centuries", T_CENTURY}, {"cent", T_CENTURY},
    {"c", T_CENTURY},
    {"decade", T_DECADE}, {"decades", T_DECADE}, {"dec", T_DECADE},
    {"decs", T_DECADE},
    {"year", T_YEAR}, {"years", T_YEAR}, {"y", T_YEAR}, {"yr", T_YEAR},
    {"yrs", T_YEAR},
    {"quarter", T_QUARTER}, {"quarters", T_QUARTER},
    {"month", T_MONTH}, {"months", T_MONTH}, {"mon", T_MONTH},
    {"mons", T_MONTH},
    {"week", T_WEEK}, {"weeks", T_WEEK}, {"w", T_WEEK},
    {"day", T_DAY}, {"days", T_DAY}, {"d", T_DAY}, {"dayofmonth", T_DAY},
    {"hour", T_HOUR}, {"hours", T_HOUR}, {"h", T_HOUR}, {"hr", T_HOUR},
    {"hrs", T_HOUR},
    {"minute", T_MINUTE}, {"minutes", T_MINUTE}, {"m", T_MINUTE},
    {"min", T_MINUTE}, {"mins", T_MINUTE},
    {"second", T_SECOND}, {"seconds", T_SECOND}, {"s", T_SECOND},
    {"sec", T_SECOND}, {"secs", T_SECOND},
    {"millisecond", T_MILLISECOND}, {"milliseconds", T_MILLISECOND},
    {"ms", T_MILLISECOND}, {"msec", T_MILLISECOND},
    {"msecs", T_MILLISECOND},
    {"microsecond", T_MICROSECOND}, {"microseconds", T_MICROSECOND},
    {"us", T_MICROSECOND}, {"usec", T_MICROSECOND},
    {"usecs", T_MICROSECOND},
};

static int parse_part(const uint8_t *s, size_t len)
{
    for (size_t i = 0; i < sizeof part_words / sizeof part_words[0]; i++)
        if (tl_k_fn_word_eq(s, len, part_words[i].word))
            return part_words[i].part;
    return -1;
}

/* First day of the period `part` (a day-level part) containing day d. */
static int64_t trunc_days(int part, int64_t d)
{
    int64_t y, m, dd;
    if (part == T_DAY) return d;
    if (part == T_WEEK) return d - floor_mod(d + 3, 7); /* 1970-01-01: Thu */
    civil(d, &y, &m, &dd);
    switch (part) {
    case T_MILLENNIUM: y = (y / 1000) * 1000; m = 1; break;
    case T_CENTURY: y = (y / 100) * 100; m = 1; break;
    case T_DECADE: y = (y / 10) * 10; m = 1; break;
    case T_YEAR: m = 1; break;
    case T_QUARTER: m = ((m - 1) / 3) * 3 + 1; break;
    default: break; /* T_MONTH */
    }
    return days_from_civil(y, m, 1);
}

static const int64_t sub_day_unit[] = {
    [T_HOUR] = US_PER_HOUR, [T_MINUTE] = US_PER_MIN, [T_SECOND] = US_PER_SEC,
    [T_MILLISECOND] = 1000, [T_MICROSECOND] = 1,
};

/* The last day truncated, so runs of rows on one day skip the calendar. */
typedef struct DayCache {
    int64_t in, out;
    bool set;
} DayCache;

/* Truncate v (days if is_date, else microseconds) to `part`, as a
 * timestamp.  false if the result leaves the int64 microsecond range. */
static inline bool trunc_one(int part, bool is_date, int64_t v, int64_t *res,
                             DayCache *c)
{
    int64_t days;
    if (!is_date && part > T_DAY) {
        int64_t r = floor_mod(v, sub_day_unit[part]);
        return !__builtin_sub_overflow(v, r, res);
    }
    days = is_date ? v : floor_div(v, US_PER_DAY);
    if (part <= T_DAY) {
        if (!c->set || c->in != days) {
            c->in = days;
            c->out = trunc_days(part, days);
            c->set = true;
        }
        days = c->out;
    }
    return !__builtin_mul_overflow(days, US_PER_DAY, res);
}

static TlStatus trunc_error(int64_t row, const uint8_t *s, size_t len,
                            int64_t *err_row, TlError *err)
{
    *err_row = row;
    if (!s)
        return tl_error(err, TL_ERR_DATA,
                        "date_trunc result is out of the timestamp range");
    return tl_error(err, TL_ERR_DATA,
                    "unknown date part %s for date_trunc (expected year, "
                    "quarter, month, week, day, hour, minute or second)",
                    tl_quote((const char *)s, len).s);
}

static TlStatus k_date_trunc(const TlDatum *args, int n_args, int64_t n_rows,
                             TlArray **out, int64_t *err_row, TlError *err)
{
    TlBuf *validity = NULL, *values = NULL;
    TlStatus st;
    bool all_null;
    TL_FN_BROADCAST(k_date_trunc);
    TL_TRY(tl_k_fn_nulls(args, 2, n_rows, &all_null, &validity, err));
    if (all_null) return tl_k_fn_null_result(TL_TTIMESTAMP, n_rows, out, err);
    values = tl_k_fn_values(n_rows, 8, false);
    if (!values) {
        st = tl_error_oom(err);
        goto fail;
    }
    const TlArray *pa = args[0].array, *xa = args[1].array;
    const TlView *pv = tl_array_views(pa);
    bool is_date = xa->type == TL_TDATE;
    const int32_t *xd = is_date ? tl_array_i32(xa) : NULL;
    const int64_t *xt = is_date ? NULL : tl_array_i64(xa);
    int64_t *y = (int64_t *)values->data;
    int part = -1;
    DayCache cache = {0, 0, false};
    if (args[0].scalar) {
        const uint8_t *s = tl_view_ptr(&pv[0], pa->data);
        part = parse_part(s, tl_view_len(pv[0]));
        if (part < 0) {
            int64_t row = 0;
            while (row < n_rows && !tl_k_fn_row_valid(validity, row)) row++;
            st = trunc_error(row < n_rows ? row : 0, s, tl_view_len(pv[0]),
                             err_row, err);
            goto fail;
        }
    }
    for (int64_t i = 0; i < n_rows; i++) {
        if (!tl_k_fn_row_valid(validity, i)) {
            y[i] = 0;
            continue;
        }
        if (!args[0].scalar) {
            const uint8_t *s = tl_view_ptr(&pv[i], pa->data);
            int p = parse_part(s, tl_view_len(pv[i]));
            if (p < 0) {
                st = trunc_error(i, s, tl_view_len(pv[i]), err_row, err);
                goto fail;
            }
            if (p != part) cache.set = false;
            part = p;
        }
        int64_t v = is_date ? xd[args[1].scalar ? 0 : i]
                            : xt[args[1].scalar ? 0 : i];
        if (!trunc_one(part, is_date, v, &y[i], &cache)) {
            st = trunc_error(i, NULL, 0, err_row, err);
            goto fail;
        }
    }
    *out = tl_array_new(TL_TTIMESTAMP, n_rows, values, validity, -1, NULL, 0);
    return *out ? TL_OK : tl_error_oom(err);
fail:
    tl_buf_release(values);
    tl_buf_release(validity);
    return st;
}

/* -------------------------------------------------------- date_diff */

/* The number of `part` boundaries between a and b (microseconds), as
 * DuckDB counts them: the difference of both truncated to the part for
 * calendar parts and sub-day units, whole weeks of the day difference
 * (toward zero) for week. */
static int64_t diff_one(int part, int64_t a, int64_t b)
{
    int64_t da = floor_div(a, US_PER_DAY), db = floor_div(b, US_PER_DAY);
    int64_t ya, ma, xa, yb, mb, xb;
    if (part > T_DAY)
        return floor_div(b, sub_day_unit[part]) -
               floor_div(a, sub_day_unit[part]);
    if (part == T_DAY) return db - da;
    if (part == T_WEEK) return (db - da) / 7;
    civil(da, &ya, &ma, &xa);
    civil(db, &yb, &mb, &xb);
    switch (part) {
    case T_MILLENNIUM: return yb / 1000 - ya / 1000;
    case T_CENTURY: return yb / 100 - ya / 100;
    case T_DECADE: return yb / 10 - ya / 10;
    case T_YEAR: return yb - ya;
    case T_QUARTER: return (yb * 4 + (mb - 1) / 3) - (ya * 4 + (ma - 1) / 3);
    default: return (yb * 12 + mb) - (ya * 12 + ma); /* T_MONTH */
    }
}

static TlStatus diff_error(int64_t row, const uint8_t *s, size_t len,
                           int64_t *err_row, TlError *err)
{
    *err_row = row;
    return tl_error(err, TL_ERR_DATA,
                    "unknown date part %s for date_diff (expected year, "
                    "quarter, month, week, day, hour, minute or second)",
                    tl_quote((const char *)s, len).s);
}

static TlStatus k_date_diff(const TlDatum *args, int n_args, int64_t n_rows,
                            TlArray **out, int64_t *err_row, TlError *err)
{
    TlBuf *validity = NULL, *values = NULL;
    TlStatus st;
    bool all_null;
    TL_FN_BROADCAST(k_date_diff);
    TL_TRY(tl_k_fn_nulls(args, 3, n_rows, &all_null, &validity, err));
    if (all_null) return tl_k_fn_null_result(TL_TINT64, n_rows, out, err);
    values = tl_k_fn_values(n_rows, 8, true);
    if (!values) {
        st = tl_error_oom(err);
        goto fail;
    }
    const TlArray *pa = args[0].array;
    const TlView *pv = tl_array_views(pa);
    const int64_t *xa = tl_array_i64(args[1].array),
                  *xb = tl_array_i64(args[2].array);
    int64_t *y = (int64_t *)values->data;
    for (int64_t i = 0; i < n_rows; i++) {
        if (!tl_k_fn_row_valid(validity, i)) continue;
        int64_t pi = args[0].scalar ? 0 : i;
        const uint8_t *s = tl_view_ptr(&pv[pi], pa->data);
        int part = parse_part(s, tl_view_len(pv[pi]));
        if (part < 0) {
            st = diff_error(i, s, tl_view_len(pv[pi]), err_row, err);
            goto fail;
        }
        y[i] = diff_one(part, xa[args[1].scalar ? 0 : i],
                        xb[args[2].scalar ? 0 : i]);
    }
    *out = tl_array_new(TL_TINT64, n_rows, values, validity, -1, NULL, 0);
    return *out ? TL_OK : tl_error_oom(err);
fail:
    tl_buf_release(values);
    tl_buf_release(validity);
    return st;
}

static bool types_diff(const TlType *a, int n, TlType *res, TlType *want)
{
    if (n != 3) return false;
    if (a[0] != TL_TSTRING && a[0] != TL_TNULL) return false;
    want[0] = TL_TSTRING;
    for (int i = 1; i < 3; i++) {
        if (a[i] != TL_TNULL && !is_temporal(a[i])) return false;
        want[i] = TL_TTIMESTAMP;
    }
    *res = TL_TINT64;
    return true;
}

/* Whether part[0..len) names a date part of date_trunc and date_diff. */
bool tl_k_date_part_known(const char *part, size_t len)
{
    return parse_part((const uint8_t *)part, len) >= 0;
}

/* The date family's table for the registry (fn.c). */
const TlFnDef tl_k_fn_date_defs[] = {
    {"year", k_year, types_part},     {"month", k_month, types_part},
    {"day", k_day, types_part},       {"hour", k_hour, types_part},
    {"minute", k_minute, types_part}, {"second", k_second, types_part},
    {"date_trunc", k_date_trunc, types_trunc},
    {"dayofweek", k_dayofweek, types_part},
    {"isodow", k_isodow, types_part},
    {"dayofyear", k_dayofyear, types_part},
    {"week", k_week, types_part},
    {"quarter", k_quarter, types_part},
    {"yearweek", k_yearweek, types_part},
    {"isoyear", k_isoyear, types_part},
    {"date_diff", k_date_diff, types_diff},
};
/* Number of entries in tl_k_fn_date_defs. */
const int tl_k_fn_date_count =
    (int)(sizeof tl_k_fn_date_defs / sizeof tl_k_fn_date_defs[0]);
