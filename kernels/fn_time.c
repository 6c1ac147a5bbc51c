/*
 * fn_time.c -- epoch, epoch_ms, epoch_us, to_timestamp, and intervals:
 * their text (`interval '1 month 3 days'`) and date_add / t + interval.
 *
 * tally has no interval type: an interval is always a constant, written
 * `interval 'TEXT'` next to the date or timestamp it moves (lib/plan
 * refuses it anywhere else), so it travels as its text and is parsed once
 * per call.  Its meaning is DuckDB's: months, days and microseconds kept
 * apart and applied in that order -- months on the calendar (the day
 * clamped to the end of a shorter month: 2024-01-31 + 1 month is
 * 2024-02-29), then days, then the time.
 */
#include "fn_impl.h"

#include "../lib/core/text.h"

#include <stdio.h>

#include <math.h>

#define US_PER_DAY INT64_C(86400000000)

static inline int64_t div_floor(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* ------------------------------------------------------------ epochs */

static TlStatus epoch_impl(const TlDatum *args, int64_t n_rows, int unit,
                           TlArray **out, TlError *err)
{
    TlBuf *validity = NULL, *values = NULL;
    bool all_null;
    TlType rt = unit == 0 ? TL_TFLOAT64 : TL_TINT64;
    const TlArray *a = args[0].array;
    TL_TRY(tl_k_fn_nulls(args, 1, n_rows, &all_null, &validity, err));
    if (all_null) return tl_k_fn_null_result(rt, n_rows, out, err);
    values = tl_k_fn_values(n_rows, 8, false);
    if (!values) {
        tl_buf_release(validity);
        return tl_error_oom(err);
    }
    bool is_date = a->type == TL_TDATE;
    const int32_t *xd = is_date ? tl_array_i32(a) : NULL;
    const int64_t *xt = is_date ? NULL : tl_array_i64(a);
    for (int64_t i = 0; i < n_rows; i++) {
        int64_t us = is_date ? xd[i] * US_PER_DAY : xt[i];
        if (unit == 0) ((double *)values->data)[i] = (double)us / 1e6;
        else if (unit == 1) ((int64_t *)values->data)[i] = us / 1000;
        else ((int64_t *)values->data)[i] = us;
    }
    *out = tl_array_new(rt, n_rows, values, validity, -1, NULL, 0);
    return *out ? TL_OK : tl_error_oom(err);
}

#define EPOCH_KERNEL(fname, unit)                                              \
    static TlStatus fname(const TlDatum *args, int n_args, int64_t n_rows,    \
                          TlArray **out, int64_t *err_row, TlError *err)      \
    {                                                                          \
        TL_FN_BROADCAST(fname);                                                \
        return epoch_impl(args, n_rows, unit, out, err);                       \
    }

EPOCH_KERNEL(k_epoch, 0)
EPOCH_KERNEL(k_epoch_us, 2)

/* epoch_ms(t) -> int64 milliseconds (toward zero, as DuckDB); epoch_ms(n)
 * with n an int64 -> the timestamp n milliseconds after the epoch. */
static TlStatus k_epoch_ms(const TlDatum *args, int n_args, int64_t n_rows,
                           TlArray **out, int64_t *err_row, TlError *err)
{
    TL_FN_BROADCAST(k_epoch_ms);
    if (args[0].array->type != TL_TINT64)
        return epoch_impl(args, n_rows, 1, out, err);
    TlBuf *validity = NULL, *values = NULL;
    bool all_null;
    TL_TRY(tl_k_fn_nulls(args, 1, n_rows, &all_null, &validity, err));
    if (all_null) return tl_k_fn_null_result(TL_TTIMESTAMP, n_rows, out, err);
    values = tl_k_fn_values(n_rows, 8, true);
    if (!values) {
        tl_buf_release(validity);
        return tl_error_oom(err);
    }
    const int64_t *x = tl_array_i64(args[0].array);
    int64_t *y = (int64_t *)values->data;
    for (int64_t i = 0; i < n_rows; i++) {
        if (!tl_k_fn_row_valid(validity, i)) continue;
        if (__builtin_mul_overflow(x[i], 1000, &y[i])) {
            *err_row = i;
            tl_buf_release(values);
            tl_buf_release(validity);
            return tl_error(err, TL_ERR_DATA,
                            "epoch_ms result is out of the timestamp range");
        }
    }
    *out = tl_array_new(TL_TTIMESTAMP, n_rows, values, validity, -1, NULL, 0);
    return *out ? TL_OK : tl_error_oom(err);
}

/* to_timestamp(seconds): a float64 of seconds since the epoch, rounded to
 * the microsecond. */
static TlStatus k_to_timestamp(const TlDatum *args, int n_args, int64_t n_rows,
                               TlArray **out, int64_t *err_row, TlError *err)
{
    TlBuf *validity = NULL, *values = NULL;
    bool all_null;
    TL_FN_BROADCAST(k_to_timestamp);
    TL_TRY(tl_k_fn_nulls(args, 1, n_rows, &all_null, &validity, err));
    if (all_null) return tl_k_fn_null_result(TL_TTIMESTAMPTZ, n_rows, out, err);
    values = tl_k_fn_values(n_rows, 8, true);
    if (!values) {
        tl_buf_release(validity);
        return tl_error_oom(err);
    }
    const double *x = tl_array_f64(args[0].array);
    int64_t *y = (int64_t *)values->data;
    for (int64_t i = 0; i < n_rows; i++) {
        if (!tl_k_fn_row_valid(validity, i)) continue;
        double us = round(x[i] * 1e6);
        if (!(us > -9.2e18 && us < 9.2e18)) {
            *err_row = i;
            tl_buf_release(values);
            tl_buf_release(validity);
            return tl_error(err, TL_ERR_DATA,
                            "to_timestamp: epoch seconds out of the "
                            "timestamp range");
        }
        y[i] = (int64_t)us;
    }
    *out = tl_array_new(TL_TTIMESTAMPTZ, n_rows, values, validity, -1, NULL, 0);
    return *out ? TL_OK : tl_error_oom(err);
}

/* --------------------------------------------------------- intervals */

static const struct {
    const char *word;
    int64_t months, micros; /* one unit: months, or else microseconds */
    bool days;              /* micros counts days (a day is not 24 h in a
                               month's arithmetic: kept apart) */
} units[] = {
    {"millennium", 12000, 0, false}, {"millennia", 12000, 0, false},
    {"millenniums", 12000, 0, false}, {"mil", 12000, 0, false},
    {"mils", 12000, 0, false},
    {"century", 1200, 0, false}, {"centuries", 1200, 0, false},
    {"cent", 1200, 0, false}, {"c", 1200, 0, false},
    {"decade", 120, 0, false}, {"decades", 120, 0, false},
    {"dec", 120, 0, false}, {"decs", 120, 0, false},
    {"year", 12, 0, false}, {"years", 12, 0, false}, {"y", 12, 0, false},
    {"yr", 12, 0, false}, {"yrs", 12, 0, false},
    {"quarter", 3, 0, false}, {"quarters", 3, 0, false},
    {"month", 1, 0, false}, {"months", 1, 0, false}, {"mon", 1, 0, false},
    {"mons", 1, 0, false},
    {"week", 0, 7, true}, {"weeks", 0, 7, true}, {"w", 0, 7, true},
    {"day", 0, 1, true}, {"days", 0, 1, true}, {"d", 0, 1, true},
    {"hour", 0, INT64_C(3600000000), false},
    {"hours", 0, INT64_C(3600000000), false},
    {"h", 0, INT64_C(3600000000), false},
    {"hr", 0, INT64_C(3600000000), false},
    {"hrs", 0, INT64_C(3600000000), false},
    {"minute", 0, 60000000, false}, {"minutes", 0, 60000000, false},
    {"m", 0, 60000000, false}, {"min", 0, 60000000, false},
    {"mins", 0, 60000000, false},
    {"second", 0, 1000000, false}, {"seconds", 0, 1000000, false},
    {"s", 0, 1000000, false}, {"sec", 0, 1000000, false},
    {"secs", 0, 1000000, false},
    {"millisecond", 0, 1000, false}, {"milliseconds", 0, 1000, false},
    {"ms", 0, 1000, false}, {"msec", 0, 1000, false},
    {"msecs", 0, 1000, false},
    {"microsecond", 0, 1, false}, {"microseconds", 0, 1, false},
    {"us", 0, 1, false}, {"usec", 0, 1, false}, {"usecs", 0, 1, false},
};

static inline bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
static inline bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* A number at s[*p]: sign, digits, an optional fraction.  Its value as
 * the integer part and the fraction (same sign). */
static bool read_number(const char *s, size_t n, size_t *p, int64_t *ip,
                        double *frac)
{
    size_t i = *p;
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    size_t d0 = i;
    int64_t v = 0;
    while (i < n && is_digit(s[i])) {
        if (v > INT64_C(100000000000000)) return false;
        v = v * 10 + (s[i++] - '0');
    }
    double f = 0, scale = 0.1;
    bool any = i > d0;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && is_digit(s[i])) {
            f += (s[i++] - '0') * scale;
            scale /= 10;
            any = true;
        }
    }
    if (!any) return false;
    *ip = neg ? -v : v;
    *frac = neg ? -f : f;
    *p = i;
    return true;
}

static bool add_ck(int64_t *acc, int64_t v)
{
    return !__builtin_add_overflow(*acc, v, acc);
}

/* Parse an interval's text.  On failure *bad is the offset of the bad
 * token and msg says why. */
bool tl_k_interval_parse(const char *s, size_t n, TlInterval *iv, size_t *bad,
                         char *msg, size_t cap)
{
    TlInterval r = {0, 0, 0};
    size_t p = 0;
    int terms = 0;
    bool ago = false;
    while (p < n && is_space(s[p])) p++;
    if (p == n) {
        *bad = 0;
        snprintf(msg, cap, "empty interval");
        return false;
    }
    while (p < n) {
        size_t at = p;
        int64_t ip, x;
        double frac;
        if (ago) goto junk;
        if (terms > 0 && is_alpha(s[p])) {
            size_t e = p;
            while (e < n && is_alpha(s[e])) e++;
            if (tl_k_fn_word_eq((const uint8_t *)s + p, e - p, "ago")) {
                ago = true;
                p = e;
                while (p < n && is_space(s[p])) p++;
                continue;
            }
        }
        if (!read_number(s, n, &p, &ip, &frac)) goto junk;
        if (p < n && s[p] == ':') { /* [-]hh:mm[:ss[.f]] */
            int64_t mm, ss = 0;
            double f2 = 0, sf = 0;
            bool neg = s[at] == '-';
            if (frac != 0) goto junk;
            p++;
            if (!read_number(s, n, &p, &mm, &f2) || f2 != 0 || mm < 0)
                goto junk;
            if (p < n && s[p] == ':') {
                p++;
                if (!read_number(s, n, &p, &ss, &sf) || ss < 0 || sf < 0)
                    goto junk;
            }
            int64_t hh = ip < 0 ? -ip : ip;
            int64_t us = ((hh * 60 + mm) * 60 + ss) * INT64_C(1000000) +
                         (int64_t)llround(sf * 1e6);
            if (!add_ck(&r.micros, neg ? -us : us)) goto range;
        } else {
            size_t w = p;
            while (w < n && is_space(s[w])) w++;
            size_t e = w;
            while (e < n && is_alpha(s[e])) e++;
            if (e == w) {
                /* a bare number is seconds, and only alone */
                while (e < n && is_space(s[e])) e++;
                if (terms > 0 || e != n) {
                    *bad = at;
                    snprintf(msg, cap, "a number in an interval needs a unit "
                                       "(days, hours, ...)");
                    return false;
                }
                x = (int64_t)llround((double)ip * 1e6 + frac * 1e6);
                if (!add_ck(&r.micros, x)) goto range;
                p = e;
                terms++;
                continue;
            }
            size_t u = 0, nu = sizeof units / sizeof units[0];
            for (; u < nu; u++)
                if (tl_k_fn_word_eq((const uint8_t *)s + w, e - w,
                                    units[u].word))
                    break;
            if (u == nu) {
                *bad = w;
                snprintf(msg, cap, "unknown interval unit %s",
                         tl_quote(s + w, e - w).s);
                return false;
            }
            p = e;
            if (units[u].months) {
                double fm = frac * (double)units[u].months;
                int64_t whole = (int64_t)fm;
                double fd = (fm - (double)whole) * 30;
                if (__builtin_mul_overflow(ip, units[u].months, &x) ||
                    !add_ck(&x, whole) || !add_ck(&r.months, x) ||
                    !add_ck(&r.days, (int64_t)fd) ||
                    !add_ck(&r.micros, (int64_t)llround(
                                           (fd - (double)(int64_t)fd) *
                                           (double)US_PER_DAY)))
                    goto range;
            } else if (units[u].days) {
                double fd = frac * (double)units[u].micros;
                if (__builtin_mul_overflow(ip, units[u].micros, &x) ||
                    !add_ck(&x, (int64_t)fd) || !add_ck(&r.days, x) ||
                    !add_ck(&r.micros,
                            (int64_t)llround((fd - (double)(int64_t)fd) *
                                             (double)US_PER_DAY)))
                    goto range;
            } else {
                if (__builtin_mul_overflow(ip, units[u].micros, &x) ||
                    !add_ck(&x, (int64_t)llround(frac *
                                                 (double)units[u].micros)) ||
                    !add_ck(&r.micros, x))
                    goto range;
            }
        }
        terms++;
        while (p < n && is_space(s[p])) p++;
        continue;
    junk:
        *bad = at;
        snprintf(msg, cap, "cannot read an interval at %s",
                 tl_quote(s + at, n - at).s);
        return false;
    range:
        *bad = at;
        snprintf(msg, cap, "interval out of range");
        return false;
    }
    if (ago) {
        r.months = -r.months;
        r.days = -r.days;
        r.micros = -r.micros;
    }
    if (r.months > INT32_MAX || r.months < -INT32_MAX || r.days > INT32_MAX ||
        r.days < -INT32_MAX) {
        *bad = 0;
        snprintf(msg, cap, "interval out of range");
        return false;
    }
    *iv = r;
    return true;
}

/* us + iv (or - iv); false when the result leaves the int64 range. */
static bool add_one(int64_t us, const TlInterval *iv, bool neg, int64_t *res)
{
    int64_t months = neg ? -iv->months : iv->months;
    int64_t days = neg ? -iv->days : iv->days;
    int64_t micros = neg ? -iv->micros : iv->micros;
    if (months) {
        int64_t d = div_floor(us, US_PER_DAY), tod = us - d * US_PER_DAY, y;
        unsigned m, dd;
        if (d > INT32_MAX || d < INT32_MIN) return false;
        tl_civil_from_days((int32_t)d, &y, &m, &dd);
        int64_t mi = y * 12 + (m - 1) + months;
        y = div_floor(mi, 12);
        m = (unsigned)(mi - y * 12) + 1;
        if (y > 300000 || y < -300000) return false;
        static const unsigned char dm[12] = {31, 28, 31, 30, 31, 30,
                                             31, 31, 30, 31, 30, 31};
        unsigned last = dm[m - 1];
        if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) last = 29;
        if (dd > last) dd = last;
        us = (int64_t)tl_days_from_civil(y, m, dd) * US_PER_DAY + tod;
    }
    int64_t x;
    return !__builtin_mul_overflow(days, US_PER_DAY, &x) &&
           !__builtin_add_overflow(us, x, &us) &&
           !__builtin_add_overflow(us, micros, res);
}

/* t + iv (negate: t - iv) over n_rows: t a timestamp datum, iv a string
 * datum holding interval texts.  A data error at the first row whose
 * interval does not parse or whose result leaves the timestamp range. */
TlStatus tl_k_add_interval(const TlDatum *t, const TlDatum *iv, bool negate,
                           int64_t n_rows, TlArray **out, int64_t *err_row,
                           TlError *err)
{
    TlDatum args[2] = {*t, *iv};
    TlBuf *validity = NULL, *values = NULL;
    bool all_null;
    TlStatus st;
    TL_TRY(tl_k_fn_nulls(args, 2, n_rows, &all_null, &validity, err));
    if (all_null) return tl_k_fn_null_result(TL_TTIMESTAMP, n_rows, out, err);
    values = tl_k_fn_values(n_rows, 8, true);
    if (!values) {
        st = tl_error_oom(err);
        goto fail;
    }
    const int64_t *x = tl_array_i64(t->array);
    const TlArray *sa = iv->array;
    const TlView *sv = tl_array_views(sa);
    int64_t *y = (int64_t *)values->data;
    TlInterval cur = {0, 0, 0};
    int64_t cur_row = -1;
    for (int64_t i = 0; i < n_rows; i++) {
        if (!tl_k_fn_row_valid(validity, i)) continue;
        int64_t si = iv->scalar ? 0 : i;
        if (si != cur_row) {
            size_t bad;
            char msg[96];
            const char *s = (const char *)tl_view_ptr(&sv[si], sa->data);
            if (!tl_k_interval_parse(s, tl_view_len(sv[si]), &cur, &bad, msg,
                                     sizeof msg)) {
                *err_row = i;
                st = tl_error(err, TL_ERR_DATA, "%s", msg);
                goto fail;
            }
            cur_row = si;
        }
        if (!add_one(x[t->scalar ? 0 : i], &cur, negate, &y[i])) {
            *err_row = i;
            st = tl_error(err, TL_ERR_DATA,
                          "timestamp out of range after adding an interval");
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

static TlStatus k_date_add(const TlDatum *args, int n_args, int64_t n_rows,
                           TlArray **out, int64_t *err_row, TlError *err)
{
    TL_FN_BROADCAST(k_date_add);
    return tl_k_add_interval(&args[0], &args[1], false, n_rows, out, err_row,
                             err);
}

/* ------------------------------------------------------------- typing */

static bool types_epoch(const TlType *a, int n, TlType *res, TlType *want)
{
    if (n != 1) return false;
    if (a[0] == TL_TNULL) want[0] = TL_TTIMESTAMP;
    else if (a[0] == TL_TDATE || a[0] == TL_TTIMESTAMP) want[0] = a[0];
    else if (a[0] == TL_TTIMESTAMPTZ) want[0] = TL_TTIMESTAMP; /* the same instant */
    else return false;
    *res = TL_TFLOAT64;
    return true;
}

static bool types_epoch_int(const TlType *a, int n, TlType *res, TlType *want)
{
    if (!types_epoch(a, n, res, want)) return false;
    *res = TL_TINT64;
    return true;
}

static bool types_epoch_ms(const TlType *a, int n, TlType *res, TlType *want)
{
    if (n == 1 && a[0] == TL_TINT64) {
        want[0] = TL_TINT64;
        *res = TL_TTIMESTAMP;
        return true;
    }
    return types_epoch_int(a, n, res, want);
}

static bool types_to_ts(const TlType *a, int n, TlType *res, TlType *want)
{
    if (n != 1) return false;
    if (a[0] != TL_TNULL && a[0] != TL_TINT64 && a[0] != TL_TFLOAT64)
        return false;
    want[0] = TL_TFLOAT64;
    *res = TL_TTIMESTAMPTZ; /* an instant, as DuckDB's */
    return true;
}

static bool types_date_add(const TlType *a, int n, TlType *res, TlType *want)
{
    if (n != 2) return false;
    if (a[0] != TL_TNULL && a[0] != TL_TDATE && a[0] != TL_TTIMESTAMP &&
        a[0] != TL_TTIMESTAMPTZ)
        return false;
    if (a[1] != TL_TSTRING) return false;
    want[0] = TL_TTIMESTAMP;
    want[1] = TL_TSTRING;
    *res = TL_TTIMESTAMP;
    return true;
}

/* The epoch and interval family's table for the registry (fn.c). */
const TlFnDef tl_k_fn_time_defs[] = {
    {"epoch", k_epoch, types_epoch},
    {"epoch_ms", k_epoch_ms, types_epoch_ms},
    {"epoch_us", k_epoch_us, types_epoch_int},
    {"to_timestamp", k_to_timestamp, types_to_ts},
    {"date_add", k_date_add, types_date_add},
};
/* Number of entries in tl_k_fn_time_defs. */
const int tl_k_fn_time_count =
    (int)(sizeof tl_k_fn_time_defs / sizeof tl_k_fn_time_defs[0]);
