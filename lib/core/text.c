/*
 * text.c -- one spelling per value: parsing and formatting single values.
 *
 * Every place that turns text into a typed value or back (CSV reader and
 * writer, cast, try_cast, literals, type inference) calls these functions,
 * so they all agree on what "1.5", "2024-02-29" or "inf" mean and on how a
 * double is written.
 *
 * Parsing is strict and whole: no surrounding space, nothing left over.
 *   int64      [+-]?[0-9]+, overflow is a failure (the text may still be a
 *              float).
 *   float64    the decimal/exponent subset of strtod (no hex, no "nan(...)"),
 *              plus inf / infinity / nan with an optional sign, any case.
 *              Correctly rounded: [-+]digits[.digits] with a significand
 *              up to 2^53 and at most 22 fraction digits takes one exact
 *              IEEE division (Clinger's fast path, one pass); everything
 *              else is syntax-checked here and computed by strtod on a
 *              NUL-terminated copy.
 *   date       YYYY-MM-DD, month and day checked against the calendar.
 *   timestamp  a date, then ' ' or 'T', HH:MM:SS, then optionally '.' and 1
 *              to 9 digits (truncated to microseconds); a bare date is
 *              midnight.
 *
 * Formatting a double writes the shortest digit string that reads back to
 * the same double (the closest such, as Python's repr): exact integer and
 * short-decimal paths first, then the 15-, 16- and 17-digit candidates
 * computed exactly in 128-bit integers (nearest_k_digits: full-precision
 * values such as sums and means from about 1e-5 to 1e37, ~50 ns
 * instead of ~430 ns through printf), and only outside that range,
 * subnormals and powers of two a printf/strtod search.  Laid out like
 * Python's repr (and DuckDB): with e10 the decimal exponent of the first
 * digit, -4 <= e10 < 16 is positional with at least one fractional digit,
 * anything else is d[.ddd]e[+-]XX.
 *
 *      0.1   71.0   1000000000000000.0   0.0001   1e-05   1e+16   2.5e-07
 *
 * Calendar arithmetic is Howard Hinnant's days_from_civil / civil_from_days
 * (proleptic Gregorian, exact for every int32 day count).
 */
#include "text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* ------------------------------------------------------------- parsing */

static inline bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Case-insensitive equality of s[0..len) with the lower-case word w. */
static bool word_eq(const char *s, size_t len, const char *w)
{
    size_t i;
    for (i = 0; i < len; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (w[i] == '\0' || c != w[i]) return false;
    }
    return w[len] == '\0';
}

/* Parse "true" / "false" (any case). */
bool tl_parse_bool(const char *s, size_t len, bool *out)
{
    if (len == 4 && word_eq(s, len, "true")) {
        *out = true;
        return true;
    }
    if (len == 5 && word_eq(s, len, "false")) {
        *out = false;
        return true;
    }
    return false;
}

/* Parse [+-]?[0-9]+ into an int64; false on bad syntax or overflow.
 * Up to 18 digits cannot overflow, so they take a loop with no checks but
 * the digit test; longer texts check each step. */
bool tl_parse_i64(const char *s, size_t len, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    uint64_t v = 0, limit;
    if (len == 0) return false;
    if (s[0] == '+' || s[0] == '-') {
        neg = s[0] == '-';
        i = 1;
        if (len == 1) return false;
    }
    if (len - i <= 18) {
        for (; i < len; i++) {
            unsigned d = (unsigned)(unsigned char)s[i] - '0';
            if (d > 9) return false;
            v = v * 10 + d;
        }
        *out = neg ? (int64_t)(0 - v) : (int64_t)v;
        return true;
    }
    limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < len; i++) {
        unsigned d;
        if (!is_digit(s[i])) return false;
        d = (unsigned)(s[i] - '0');
        if (v > (limit - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

/* True when s[0..len) is float syntax: [+-]? then inf|infinity|nan, or
 * digits with an optional '.' (at least one digit in all) and an optional
 * exponent [eE][+-]?[0-9]+.  *special is set for the words. */
static bool float_syntax(const char *s, size_t len, bool *special)
{
    size_t i = 0, digits = 0;
    *special = false;
    if (len == 0) return false;
    if (s[0] == '+' || s[0] == '-') i = 1;
    if (i < len && !is_digit(s[i]) && s[i] != '.') {
        const char *w = s + i;
        size_t n = len - i;
        *special = word_eq(w, n, "inf") || word_eq(w, n, "infinity") ||
                   word_eq(w, n, "nan");
        return *special;
    }
    while (i < len && is_digit(s[i])) {
        i++;
        digits++;
    }
    if (i < len && s[i] == '.') {
        i++;
        while (i < len && is_digit(s[i])) {
            i++;
            digits++;
        }
    }
    if (digits == 0) return false;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        size_t exp_digits = 0;
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-')) i++;
        while (i < len && is_digit(s[i])) {
            i++;
            exp_digits++;
        }
        if (exp_digits == 0) return false;
    }
    return i == len;
}

/* Clinger's fast path: when the decimal significand m is at most 2^53 and
 * |exp10| <= 22, both m and 10^exp10 are
 * exact doubles and one IEEE multiply or divide rounds correctly.  s is
 * known to be float syntax (not a word).  False when the fast path does not
 * apply. */
static bool fast_f64(const char *s, size_t len, double *out)
{
    static const double p10[23] = {
        1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    size_t i = 0;
    bool neg = false;
    uint64_t m = 0;
    int nd = 0, e = 0;
    double r;
    if (s[0] == '+' || s[0] == '-') {
        neg = s[0] == '-';
        i = 1;
    }
    if (len > 4096) return false;
    for (; i < len && is_digit(s[i]); i++) {
        if (m == 0 && s[i] == '0') continue;
        if (++nd > 16) return false;
        m = m * 10 + (uint64_t)(s[i] - '0');
    }
    if (i < len && s[i] == '.') {
        for (i++; i < len && is_digit(s[i]); i++) {
            e--;
            if (m == 0 && s[i] == '0') continue;
            if (++nd > 16) return false;
            m = m * 10 + (uint64_t)(s[i] - '0');
        }
    }
    if (i < len) { /* exponent */
        bool eneg = false;
        int x = 0;
        i++;
        if (s[i] == '+' || s[i] == '-') eneg = s[i++] == '-';
        for (; i < len; i++) {
            if (x > 1000) return false;
            x = x * 10 + (s[i] - '0');
        }
        e += eneg ? -x : x;
    }
    if (m > ((uint64_t)1 << 53)) return false;
    if (m == 0) {
        r = 0.0;
    } else if (e >= 0 && e <= 22) {
        r = (double)m * p10[e];
    } else if (e < 0 && e >= -22) {
        r = (double)m / p10[-e];
    } else {
        return false;
    }
    *out = neg ? -r : r;
    return true;
}

static const double p10_exact[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* The common shape in one pass: [+-]?digits[.digits] with at most 19
 * significant digits, no exponent, and Clinger's condition (m <= 2^53,
 * at most 22 fraction digits).  Returns 1 with *out set, 0 when the text
 * is something else (the full path then decides: it may still be a float,
 * or not one). */
static inline int quick_f64(const char *s, size_t len, double *out)
{
    size_t i = 0, start, nd;
    bool neg = false;
    uint64_t m = 0;
    size_t frac = 0;
    double r;
    if (len == 0 || len > 24) return 0;
    if (s[0] == '-' || s[0] == '+') {
        neg = s[0] == '-';
        i = 1;
    }
    start = i;
    for (; i < len; i++) {
        unsigned d = (unsigned)(unsigned char)s[i] - '0';
        if (d > 9) break;
        m = m * 10 + d;
    }
    if (i == start) return 0; /* no integer digits: ".5", "inf", "-" */
    nd = i - start;
    if (i < len) {
        size_t f0;
        if (s[i] != '.') return 0;
        f0 = ++i;
        for (; i < len; i++) {
            unsigned d = (unsigned)(unsigned char)s[i] - '0';
            if (d > 9) return 0;
            m = m * 10 + d;
        }
        frac = i - f0;
    }
    /* past 19 digits m may have wrapped */
    if (nd + frac > 19 || m > ((uint64_t)1 << 53) || frac > 22) return 0;
    r = (double)m;
    if (frac) r /= p10_exact[frac];
    *out = neg ? -r : r;
    return 1;
}

/* Parse a float64 (see the top of the file); false on bad syntax or OOM.
 *
 * Slow path: strtod reads a rewritten copy with no decimal point
 * ("-12.5e3" becomes "-125e2"), so the result does not depend on the
 * C library's LC_NUMERIC. */
static bool parse_f64_slow(const char *s, size_t len, double *out);

bool tl_parse_f64(const char *s, size_t len, double *out)
{
    if (quick_f64(s, len, out)) return true;
    return parse_f64_slow(s, len, out);
}

/* Everything quick_f64 does not take: the syntax check, the words, then
 * Clinger's path on longer forms, then strtod. */
__attribute__((noinline)) static bool parse_f64_slow(const char *s, size_t len,
                                                     double *out)
{
    char stack[160], *copy = stack, *end;
    bool special;
    size_t i = 0, n = 0;
    long long exp = 0;
    double v;
    if (!float_syntax(s, len, &special)) return false;
    if (special) {
        bool neg = s[0] == '-';
        char c = s[s[0] == '+' || s[0] == '-'];
        if (c == 'n' || c == 'N')
            v = neg ? -__builtin_nan("") : __builtin_nan("");
        else
            v = neg ? -__builtin_inf() : __builtin_inf();
        *out = v;
        return true;
    }
    if (fast_f64(s, len, out)) return true;
    if (len + 32 > sizeof stack) {
        copy = tl_malloc(len + 32);
        if (!copy) return false;
    }
    if (s[0] == '+' || s[0] == '-') copy[n++] = s[i++];
    for (; i < len && is_digit(s[i]); i++) copy[n++] = s[i];
    if (i < len && s[i] == '.') {
        for (i++; i < len && is_digit(s[i]); i++) {
            copy[n++] = s[i];
            exp--;
        }
    }
    if (i < len) { /* [eE][+-]?digits, saturated: beyond 1e6 all agree */
        bool eneg = false;
        long long x = 0;
        i++;
        if (s[i] == '+' || s[i] == '-') eneg = s[i++] == '-';
        for (; i < len; i++)
            if (x < 100000000) x = x * 10 + (s[i] - '0');
        exp += eneg ? -x : x;
    }
    n += (size_t)snprintf(copy + n, 32, "e%lld", exp);
    v = strtod(copy, &end);
    if (end != copy + n) {
        if (copy != stack) tl_free(copy);
        return false;
    }
    if (copy != stack) tl_free(copy);
    *out = v;
    return true;
}

/* Parse n digits at s into *v. */
static bool digits_n(const char *s, int n, int *v)
{
    int i, r = 0;
    for (i = 0; i < n; i++) {
        if (!is_digit(s[i])) return false;
        r = r * 10 + (s[i] - '0');
    }
    *v = r;
    return true;
}

static bool is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static unsigned days_in_month(int64_t y, unsigned m)
{
    static const unsigned char dm[12] = {31, 28, 31, 30, 31, 30,
                                         31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : dm[m - 1];
}

/* Parse exactly YYYY-MM-DD (10 bytes) at s into days since the epoch. */
static bool date10(const char *s, int32_t *out)
{
    int y, m, d;
    if (!digits_n(s, 4, &y) || s[4] != '-' || !digits_n(s + 5, 2, &m) ||
        s[7] != '-' || !digits_n(s + 8, 2, &d))
        return false;
    if (m < 1 || m > 12 || d < 1 || (unsigned)d > days_in_month(y, (unsigned)m))
        return false;
    *out = tl_days_from_civil(y, (unsigned)m, (unsigned)d);
    return true;
}

/* Parse YYYY-MM-DD into days since 1970-01-01. */
bool tl_parse_date(const char *s, size_t len, int32_t *out)
{
    return len == 10 && date10(s, out);
}

/* Parse YYYY-MM-DD[( |T)HH:MM:SS[.f{1,9}]] into microseconds since
 * 1970-01-01 00:00:00 (fraction digits past 6 are truncated). */
bool tl_parse_timestamp(const char *s, size_t len, int64_t *out)
{
    int32_t days;
    int hh, mi, ss;
    int64_t frac = 0;
    size_t i;
    if (len < 10 || !date10(s, &days)) return false;
    if (len == 10) {
        *out = (int64_t)days * 86400000000LL;
        return true;
    }
    if (len < 19 || (s[10] != ' ' && s[10] != 'T')) return false;
    if (!digits_n(s + 11, 2, &hh) || s[13] != ':' || !digits_n(s + 14, 2, &mi) ||
        s[16] != ':' || !digits_n(s + 17, 2, &ss))
        return false;
    if (hh > 23 || mi > 59 || ss > 59) return false;
    if (len > 19) {
        int nd = 0;
        if (s[19] != '.' || len == 20 || len > 29) return false;
        for (i = 20; i < len; i++) {
            if (!is_digit(s[i])) return false;
            if (nd < 6) frac = frac * 10 + (s[i] - '0');
            nd++;
        }
        for (; nd < 6; nd++) frac *= 10;
    }
    *out = (int64_t)days * 86400000000LL +
           ((int64_t)hh * 3600 + mi * 60 + ss) * 1000000LL + frac;
    return true;
}

/* Parse a timestamp followed by its offset from UTC (Z, +hh, +hhmm,
 * +hh:mm or -, a space allowed before it) into the instant in UTC.  A
 * bare date is not one: without a time there is no offset to speak of. */
bool tl_parse_timestamptz(const char *s, size_t len, int64_t *out)
{
    size_t e = len;
    int64_t ts, off = 0;
    int hh, mm = 0;
    if (len < 20) return false;
    if (s[e - 1] == 'Z' || s[e - 1] == 'z') {
        e--;
    } else {
        /* the sign starts the offset: the last '+' or '-' past the date */
        size_t k = e;
        while (k > 19 && s[k - 1] != '+' && s[k - 1] != '-') k--;
        if (k <= 19) return false;
        size_t n = e - k, sign_at = k - 1;
        const char *o = s + k;
        if (n == 2 && digits_n(o, 2, &hh)) mm = 0;
        else if (n == 4 && digits_n(o, 2, &hh) && digits_n(o + 2, 2, &mm)) {}
        else if (n == 5 && digits_n(o, 2, &hh) && o[2] == ':' &&
                 digits_n(o + 3, 2, &mm)) {}
        else return false;
        if (hh > 23 || mm > 59) return false;
        off = ((int64_t)hh * 60 + mm) * 60000000LL;
        if (s[sign_at] == '-') off = -off;
        e = sign_at;
    }
    if (e > 0 && s[e - 1] == ' ') e--;
    if (e < 19 || !tl_parse_timestamp(s, e, &ts)) return false;
    if (__builtin_sub_overflow(ts, off, out)) return false;
    return true;
}

/* ---------------------------------------------------------- formatting */

/* "00" "01" ... "99": two digits per division. */
static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Write v in decimal; returns the length (NUL written, not counted).  Two
 * digits at a time from the end of a scratch buffer, then one copy. */
size_t tl_fmt_i64(int64_t v, char *buf)
{
    char tmp[24];
    char *e = tmp + sizeof tmp, *q = e;
    size_t len = 0, n;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    while (u >= 100) {
        unsigned r = (unsigned)(u % 100);
        u /= 100;
        q -= 2;
        memcpy(q, digit_pairs + 2 * r, 2);
    }
    if (u >= 10) {
        q -= 2;
        memcpy(q, digit_pairs + 2 * u, 2);
    } else {
        *--q = (char)('0' + u);
    }
    if (v < 0) buf[len++] = '-';
    n = (size_t)(e - q);
    memcpy(buf + len, q, n);
    len += n;
    buf[len] = '\0';
    return len;
}

/* Split tmp ("d[.ddd]e[+-]XX") into its digits (count in nd) and e10. */
static void split_e(const char *tmp, char *digits, int *nd, int *e10)
{
    int n = 0, i;
    for (i = 0; tmp[i] != 'e'; i++)
        if (is_digit(tmp[i])) digits[n++] = tmp[i];
    *e10 = atoi(tmp + i + 1);
    *nd = n;
}

/* Round-trip test of the digits d[0..nd) x 10^e10 (d0.d1d2...). */
static bool digits_equal(const char *d, int nd, int e10, double v)
{
    char tmp[48];
    int i, n = 0;
    for (i = 0; i < nd; i++) tmp[n++] = d[i];
    snprintf(tmp + n, sizeof tmp - (size_t)n, "e%d", e10 - (nd - 1));
    return strtod(tmp, NULL) == v;
}

/* The decimal digits of u (below 2^63) into digits (20 bytes), trailing
 * zeros dropped: *nd of them; returns how many digits u has. */
static int int_digits(uint64_t u, char *digits, int *nd)
{
    int n = (int)tl_fmt_i64((int64_t)u, digits), k = n;
    while (k > 1 && digits[k - 1] == '0') k--;
    *nd = k;
    return n;
}

/* 10^n as a 128-bit integer, 0 <= n <= 38. */
static unsigned __int128 pow10_u128(int n)
{
    static const uint64_t p[20] = {1ULL,
                                   10ULL,
                                   100ULL,
                                   1000ULL,
                                   10000ULL,
                                   100000ULL,
                                   1000000ULL,
                                   10000000ULL,
                                   100000000ULL,
                                   1000000000ULL,
                                   10000000000ULL,
                                   100000000000ULL,
                                   1000000000000ULL,
                                   10000000000000ULL,
                                   100000000000000ULL,
                                   1000000000000000ULL,
                                   10000000000000000ULL,
                                   100000000000000000ULL,
                                   1000000000000000000ULL,
                                   10000000000000000000ULL};
    return n <= 19 ? p[n] : (unsigned __int128)p[19] * p[n - 19];
}

/* The k-digit decimal nearest to v = m 2^e2 (m < 2^53, a normal double that
 * is not a power of two), exactly, in 128-bit integers: *n in
 * [10^(k-1), 10^k) with v ~ n x 10^(*e10 - k + 1), ties to even as glibc's
 * printf rounds, and whether it reads back as v.  With s = k - 1 - e10 the
 * scaled value v 10^s is num / den, num = m 2^max(e2,0) 10^max(s,0) and den
 * = 2^max(-e2,0) 10^max(-s,0); n = round(num / den), and n reads back as v
 * iff |n - v 10^s| is at most half a unit in v's last place scaled the same
 * way, i.e. 2 |n den - num| <= 2^max(e2,0) 10^max(s,0) (= num / m), equal
 * only when m is even (ties go to the even double).  *e10 comes in as a
 * guess (floor(log10 v) or one less) and goes out corrected.  false when
 * num or den would not fit (then the caller asks printf). */
static bool nearest_k_digits(uint64_t m, int e2, int k, int *e10, uint64_t *n,
                             bool *reads_back)
{
    for (int tries = 0; tries < 3; tries++) {
        int s = k - 1 - *e10;
        int bits_s = s < 0 ? 0 : s * 10 / 3 + 1, bits_ns = s > 0 ? 0 : -s * 10 / 3 + 1;
        unsigned __int128 scale, num, den, q, rem, diff;
        if (53 + (e2 > 0 ? e2 : 0) + bits_s > 126 || (e2 < 0 ? -e2 : 0) + bits_ns > 125)
            return false;
        scale = s > 0 ? pow10_u128(s) : 1;
        if (e2 > 0) scale <<= e2;
        num = scale * m;
        den = s < 0 ? pow10_u128(-s) : 1;
        if (e2 < 0) den <<= -e2;
        if (s >= 0) {
            /* den is a power of two: the usual case, no division */
            q = num >> (e2 < 0 ? -e2 : 0);
            rem = num & (den - 1);
        } else {
            q = num / den;
            rem = num % den;
        }
        if (2 * rem > den || (2 * rem == den && (q & 1))) {
            q++;
            diff = den - rem;
        } else {
            diff = rem;
        }
        if (q >= pow10_u128(k)) {
            (*e10)++;
            continue;
        }
        if (q < pow10_u128(k - 1)) {
            (*e10)--;
            continue;
        }
        *n = (uint64_t)q;
        *reads_back = 2 * diff < scale || (2 * diff == scale && (m & 1) == 0);
        return true;
    }
    return false;
}

/* shortest_digits' search (D_15, D_16, D_17) done by nearest_k_digits for a
 * normal v that is not a power of two; false when out of its range. */
static bool exact_digits(double v, char *digits, int *nd, int *e10)
{
    uint64_t bits, m, n = 0;
    int e2, guess;
    bool back = false;
    memcpy(&bits, &v, 8);
    m = (bits & 0xfffffffffffffULL) | (1ULL << 52);
    e2 = (int)((bits >> 52) & 0x7ff) - 1075;
    /* about floor(log10(2^(e2 + 52))): floor(log10 v) or one less (an
     * arithmetic shift floors; nearest_k_digits corrects the guess) */
    guess = ((e2 + 52) * 78913) >> 18;
    for (int k = 15; k <= 17; k++) {
        *e10 = guess;
        if (!nearest_k_digits(m, e2, k, e10, &n, &back)) return false;
        if (back || k == 17) break;
    }
    int_digits(n, digits, nd);
    return true;
}

/* Shortest round-trip digits of a finite v > 0: digits[0..*nd) with no
 * trailing zeros, the value being d0.d1d2... x 10^e10, and among shortest
 * strings the one closest to v (what Python's repr and DuckDB print).
 *
 * glibc's printf is correctly rounded, so "%.{k-1}e" gives D_k, the k-digit
 * number nearest to v.  When v's rounding interval is symmetric (every
 * double but powers of two), some k-digit number reads back as v iff D_k
 * does; and for k <= 15, the 15-digit spacing exceeds the width of a normal
 * double's interval, so at most one 15-digit number lies in it: if D_15
 * reads back, its zero-stripped digits are the answer.  Otherwise try 16,
 * then 17 (always enough).  Subnormals have wide intervals and powers of two
 * have a lower half-gap half as wide, so they take the slow path: k = 1, 2,
 * ... and, at powers of two, also the k-digit number above D_k when D_k is
 * below v (the wider side may hold it while D_k falls outside). */
static void shortest_digits(double v, char *digits, int *nd, int *e10)
{
    char tmp[48];
    int prec, n;
    uint64_t bits;
    memcpy(&bits, &v, 8);
    if (v >= 2.2250738585072014e-308 && (bits & 0xfffffffffffffULL) != 0) {
        if (exact_digits(v, digits, nd, e10)) return;
        for (prec = 15; prec <= 17; prec++) {
            snprintf(tmp, sizeof tmp, "%.*e", prec - 1, v);
            if (prec == 17 || strtod(tmp, NULL) == v) break;
        }
        split_e(tmp, digits, &n, e10);
    } else {
        bool pow2 = v >= 2.2250738585072014e-308;
        for (prec = 1; prec <= 17; prec++) {
            snprintf(tmp, sizeof tmp, "%.*e", prec - 1, v);
            if (prec == 17 || strtod(tmp, NULL) == v) {
                split_e(tmp, digits, &n, e10);
                break;
            }
            if (pow2 && strtod(tmp, NULL) < v) {
                /* D_k + one unit in the last place */
                int i;
                split_e(tmp, digits, &n, e10);
                for (i = n - 1; i >= 0 && digits[i] == '9'; i--) digits[i] = '0';
                if (i >= 0) {
                    digits[i]++;
                } else {
                    digits[0] = '1';
                    (*e10)++;
                }
                if (digits_equal(digits, n, *e10, v)) break;
            }
        }
    }
    while (n > 1 && digits[n - 1] == '0') n--;
    *nd = n;
}

/* Short decimals, what data files mostly hold: the smallest k in 1..22
 * with an integer m = round(v * 10^k) below 2^50 such that m / 10^k reads
 * back as v.  m and 10^k are exact doubles, so m / 10^k is the correctly
 * rounded value of the decimal m x 10^-k and the test is exact.  Below 2^50
 * the spacing 10^-k is more than four times v's rounding interval, so at most
 * one k-digit candidate reads back, and the exact product lies within 1/8 of
 * it (plus 1/8 of rounding), so round() finds it: the first k that passes
 * gives the shortest digits, and the only such string, hence the closest.
 * False when no k qualifies (the caller then searches with printf). */
static bool scaled_digits(double v, char *digits, int *nd, int *e10)
{
    static const double p10[23] = {
        1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    int k;
    for (k = 1; k <= 22; k++) {
        double x = v * p10[k];
        double m;
        if (!(x < 1125899906842624.0)) return false; /* 2^50 */
        m = __builtin_round(x);
        if (m == 0 || m / p10[k] != v) continue;
        *e10 = int_digits((uint64_t)m, digits, nd) - 1 - k;
        return true;
    }
    return false;
}

/* scaled_digits in one step, for what data files mostly hold (a few
 * decimals, e.g. 18.072681).  If some k passes scaled_digits' test then so
 * does every larger K with v 10^K < 2^50: the decimal m x 10^-k is the
 * same number as (m 10^(K-k)) x 10^-K, m 10^(K-k) and 10^K are still exact
 * doubles, and the K-digit candidate that reads back is unique and found by
 * round() (the argument above).  Conversely the K candidate with its t
 * trailing zeros dropped passes at k = K - t, and no smaller k passes (its
 * candidate times a power of ten would be the K candidate, with more
 * trailing zeros).  So one test at K = 15 - (digits of the integer part)
 * (v 10^K < 10^15 < 2^50) gives scaled_digits' answer whenever v has at
 * most K decimals; false otherwise (the caller falls back to the search).
 * v is finite, positive and not integral below 2^53 (integral_digits). */
static bool scaled_digits_once(double v, char *digits, int *nd, int *e10)
{
    static const double p10[16] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    int k = 15;
    double x, m;
    uint64_t u;
    if (!(v < 1e14)) return false;
    for (u = (uint64_t)v; u > 0; u /= 10) k--; /* integer digits */
    x = v * p10[k];
    m = __builtin_round(x);
    if (m == 0 || m / p10[k] != v) return false;
    u = (uint64_t)m;
    while (k > 0 && u % 10 == 0) {
        u /= 10;
        k--;
    }
    *e10 = int_digits(u, digits, nd) - 1 - k;
    return true;
}

/* Integral doubles below 2^53 are exact: their digits are the integer's. */
static bool integral_digits(double v, char *digits, int *nd, int *e10)
{
    if (!(v < 9007199254740992.0) || v != (double)(int64_t)v) return false;
    *e10 = int_digits((uint64_t)v, digits, nd) - 1;
    return true;
}

/* Write v with the shortest round-trip digits in Python repr layout
 * (see the top of the file).  buf has TL_FMT_MAX bytes; returns the length. */
size_t tl_fmt_f64(double v, char *buf)
{
    char digits[20];
    int nd, e10, i;
    size_t len = 0;
    if (v != v) {
        memcpy(buf, "nan", 4);
        return 3;
    }
    if (__builtin_signbit(v)) {
        buf[len++] = '-';
        v = -v;
    }
    if (__builtin_isinf(v)) {
        memcpy(buf + len, "inf", 4);
        return len + 3;
    }
    if (v == 0) {
        memcpy(buf + len, "0.0", 4);
        return len + 3;
    }
    if (!integral_digits(v, digits, &nd, &e10) &&
        !scaled_digits_once(v, digits, &nd, &e10) &&
        !scaled_digits(v, digits, &nd, &e10))
        shortest_digits(v, digits, &nd, &e10);
    if (e10 >= 16 || e10 < -4) {
        buf[len++] = digits[0];
        if (nd > 1) {
            buf[len++] = '.';
            for (i = 1; i < nd; i++) buf[len++] = digits[i];
        }
        buf[len++] = 'e';
        buf[len++] = e10 < 0 ? '-' : '+';
        if (e10 < 0) e10 = -e10;
        if (e10 >= 100) buf[len++] = (char)('0' + e10 / 100);
        buf[len++] = (char)('0' + e10 / 10 % 10);
        buf[len++] = (char)('0' + e10 % 10);
    } else if (e10 >= 0) {
        for (i = 0; i <= e10; i++) buf[len++] = i < nd ? digits[i] : '0';
        buf[len++] = '.';
        if (nd > e10 + 1) {
            for (i = e10 + 1; i < nd; i++) buf[len++] = digits[i];
        } else {
            buf[len++] = '0';
        }
    } else {
        buf[len++] = '0';
        buf[len++] = '.';
        for (i = 0; i < -e10 - 1; i++) buf[len++] = '0';
        for (i = 0; i < nd; i++) buf[len++] = digits[i];
    }
    buf[len] = '\0';
    return len;
}

/* Write YYYY-MM-DD-style year, month, day; returns the length. */
static size_t fmt_ymd(int64_t y, unsigned m, unsigned d, char *buf)
{
    size_t len = 0;
    if (y >= 0 && y <= 9999) {
        buf[0] = (char)('0' + y / 1000);
        buf[1] = (char)('0' + y / 100 % 10);
        buf[2] = (char)('0' + y / 10 % 10);
        buf[3] = (char)('0' + y % 10);
        len = 4;
    } else {
        len = (size_t)snprintf(buf, 24, y < 0 ? "-%04lld" : "%lld",
                               (long long)(y < 0 ? -y : y));
    }
    buf[len++] = '-';
    buf[len++] = (char)('0' + m / 10);
    buf[len++] = (char)('0' + m % 10);
    buf[len++] = '-';
    buf[len++] = (char)('0' + d / 10);
    buf[len++] = (char)('0' + d % 10);
    buf[len] = '\0';
    return len;
}

/* Write a date (days since 1970-01-01) as YYYY-MM-DD; returns the length. */
size_t tl_fmt_date(int32_t days, char *buf)
{
    int64_t y;
    unsigned m, d;
    tl_civil_from_days(days, &y, &m, &d);
    return fmt_ymd(y, m, d, buf);
}

/* Write a timestamp (microseconds since the epoch) as YYYY-MM-DD HH:MM:SS
 * plus '.' and the fraction without trailing zeros when it is not zero;
 * returns the length. */
size_t tl_fmt_timestamp(int64_t micros, char *buf)
{
    const int64_t day_us = 86400000000LL;
    int64_t days = micros / day_us, rem = micros % day_us, secs, frac;
    size_t len;
    int64_t y;
    unsigned m, d;
    if (rem < 0) {
        rem += day_us;
        days--;
    }
    tl_civil_from_days((int32_t)days, &y, &m, &d);
    len = fmt_ymd(y, m, d, buf);
    secs = rem / 1000000;
    frac = rem % 1000000;
    buf[len++] = ' ';
    buf[len++] = (char)('0' + secs / 36000);
    buf[len++] = (char)('0' + secs / 3600 % 10);
    buf[len++] = ':';
    buf[len++] = (char)('0' + secs % 3600 / 600);
    buf[len++] = (char)('0' + secs % 3600 / 60 % 10);
    buf[len++] = ':';
    buf[len++] = (char)('0' + secs % 60 / 10);
    buf[len++] = (char)('0' + secs % 10);
    if (frac) {
        int nd = 6;
        buf[len++] = '.';
        while (frac % 10 == 0) {
            frac /= 10;
            nd--;
        }
        for (int i = nd - 1; i >= 0; i--) {
            buf[len + (size_t)i] = (char)('0' + frac % 10);
            frac /= 10;
        }
        len += (size_t)nd;
    }
    buf[len] = '\0';
    return len;
}

/* tl_fmt_timestamp with DuckDB's +00 for an instant in UTC. */
size_t tl_fmt_timestamptz(int64_t micros, char *buf)
{
    size_t len = tl_fmt_timestamp(micros, buf);
    memcpy(buf + len, "+00", 4);
    return len + 3;
}

/* ------------------------------------------------------------ calendar */

/* Days since 1970-01-01 of the proleptic Gregorian date y-m-d (m 1..12,
 * d 1..31; the caller validates).  Exact while the result fits int32. */
int32_t tl_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    int64_t era, yoe, doy, doe;
    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m > 2 ? (int64_t)m - 3 : (int64_t)m + 9) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return (int32_t)(era * 146097 + doe - 719468);
}

/* The proleptic Gregorian date of `days` since 1970-01-01. */
void tl_civil_from_days(int32_t days, int64_t *y, unsigned *m, unsigned *d)
{
    int64_t z = (int64_t)days + 719468, era, doe, yoe, doy, mp;
    era = (z >= 0 ? z : z - 146096) / 146097;
    doe = z - era * 146097;
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    *d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
    *m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}
