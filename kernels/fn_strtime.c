/*
 * fn_strtime.c -- strftime, strptime and try_strptime: dates and timestamps
 * to text by a format, and back.
 *
 * The format language is DuckDB's (man/tally.1, "Date and time
 * functions"): % codes for the parts, %% for a percent sign, %-X for the
 * unpadded spelling of a numeric part, %c %x %X %T for the ISO date and
 * time.  A format is compiled once into a list of items (a literal run or a
 * code) -- once per call when it is a constant, which it nearly always is,
 * else once per distinct row value -- and the loops then only walk items.
 * tl_k_time_format_check is the same compiler, so resolve (lib/plan) can
 * point a caret at a bad code of a constant format before any row is read.
 *
 * strptime follows DuckDB's matcher: white space in the format matches a
 * run of one or more white space characters, white space around the whole
 * value is ignored, a numeric code reads 1 to its width digits (%Y 4, %j 3,
 * %f 6, %g 3, the others 2), names (%b %B %a %A %p) are case-insensitive,
 * weekdays are read and ignored, and the parts default to 1900-01-01
 * 00:00:00.  %z (+hh, +hhmm, +hh:mm) shifts the result to UTC.
 */
#include "fn_impl.h"

#include "../lib/core/text.h"

#include <stdio.h>

#define US_PER_DAY INT64_C(86400000000)

static const char *const month_names[12] = {
    "january", "february", "march", "april", "may", "june", "july",
    "august", "september", "october", "november", "december"};
static const char *const day_names[7] = {"sunday", "monday", "tuesday",
                                         "wednesday", "thursday", "friday",
                                         "saturday"};

/* One item of a compiled format: a literal run of the format text (code 0)
 * or a code, with its unpadded flag. */
typedef struct TfItem {
    char code;
    bool nopad;
    uint32_t off, len;  /* literal: the run in the format text */
} TfItem;

typedef struct Tf {
    TfItem *items;
    int n, cap;
} Tf;

static bool tf_push(Tf *f, TfItem it)
{
    if (f->n == f->cap) {
        int cap = f->cap ? f->cap * 2 : 16;
        TfItem *p = tl_realloc(f->items, (size_t)cap * sizeof *p);
        if (!p) return false;
        f->items = p;
        f->cap = cap;
    }
    f->items[f->n++] = it;
    return true;
}

/* Codes strftime writes; those strptime reads; those with an unpadded
 * form.  c x X T are expanded at compile time. */
static const char fmt_codes[] = "aAwudbhBmyYHIpMSfgzZjUWVG%";
static const char parse_codes[] = "aAwudbhBmyYHIpMSfgzj%";
static const char nopad_codes[] = "dmyHIMSj";

enum { CK_OK, CK_OOM, CK_BAD };

/* Compile fmt[0..len) into f (reset first).  On CK_BAD, *bad is the offset
 * of the offending % and msg says why. */
static int tf_compile(Tf *f, const uint8_t *fmt, size_t len, bool parse,
                      size_t *bad, char *msg, size_t cap)
{
    static const char *const expand[] = {
        ['c'] = "Y-m-d H:M:S", ['x'] = "Y-m-d", ['X'] = "H:M:S",
        ['T'] = "H:M:S"};
    size_t i = 0;
    f->n = 0;
    while (i < len) {
        size_t j = i;
        while (j < len && fmt[j] != '%') j++;
        if (j > i && !tf_push(f, (TfItem){0, false, (uint32_t)i,
                                          (uint32_t)(j - i)}))
            return CK_OOM;
        if (j == len) break;
        size_t at = j++;
        bool nopad = false;
        if (j < len && fmt[j] == '-') {
            nopad = true;
            j++;
        }
        if (j == len) {
            *bad = at;
            snprintf(msg, cap, nopad ? "unknown format code %%-"
                                     : "a format cannot end in a lone %%");
            return CK_BAD;
        }
        char c = (char)fmt[j];
        const char *codes = parse ? parse_codes : fmt_codes;
        bool expands = (c == 'c' || c == 'x' || c == 'X' || c == 'T');
        if ((!expands && !strchr(codes, c)) || c == 0 ||
            (nopad && (expands || !strchr(nopad_codes, c)))) {
            *bad = at;
            if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
                snprintf(msg, cap, "unknown format code after %%");
            else if (parse && !nopad && strchr(fmt_codes, c))
                snprintf(msg, cap,
                         "format code %%%c is not supported by strptime", c);
            else
                snprintf(msg, cap, "unknown format code %%%s%c",
                         nopad ? "-" : "", c);
            return CK_BAD;
        }
        if (expands) {
            const char *e = expand[(unsigned char)c];
            for (; *e; e++) {
                TfItem it = {0, false, 0, 0};
                if (*e == '-' || *e == ' ' || *e == ':') {
                    /* a literal: point into a static spelling */
                    it.code = *e == '-' ? 1 : *e == ' ' ? 2 : 3;
                } else {
                    it.code = *e;
                }
                if (!tf_push(f, it)) return CK_OOM;
            }
        } else if (!tf_push(f, (TfItem){c, nopad, 0, 0})) {
            return CK_OOM;
        }
        i = j + 1;
    }
    return CK_OK;
}

/* The literal text of item it (codes 1..3 are the separators of an
 * expanded %c %x %X %T). */
static inline const uint8_t *tf_lit(const TfItem *it, const uint8_t *fmt,
                                    size_t *len)
{
    static const uint8_t seps[] = "- :";
    if (it->code == 0) {
        *len = it->len;
        return fmt + it->off;
    }
    *len = 1;
    return seps + it->code - 1;
}

static inline bool tf_is_lit(const TfItem *it)
{
    return it->code >= 0 && it->code <= 3;
}

/* Whether fmt[0..len) is a valid format of strftime (parse false) or
 * strptime (parse true); if not, *bad is the offset of the bad code and
 * msg the reason.  Used by resolve on constant formats. */
bool tl_k_time_format_check(const char *fmt, size_t len, bool parse,
                            size_t *bad, char *msg, size_t cap)
{
    Tf f = {NULL, 0, 0};
    int r = tf_compile(&f, (const uint8_t *)fmt, len, parse, bad, msg, cap);
    tl_free(f.items);
    if (r == CK_OOM) { /* let the run report it */
        return true;
    }
    return r == CK_OK;
}

/* ----------------------------------------------------------- strftime */

static inline int64_t div_floor(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* The broken-down parts of a timestamp. */
typedef struct Parts {
    int64_t year, days;
    unsigned month, day;
    int hour, minute, second, micros;
    int wday; /* 0 Sunday */
    int yday; /* 1.. */
} Parts;

static void split(int64_t us, Parts *p)
{
    int64_t days = div_floor(us, US_PER_DAY), tod = us - days * US_PER_DAY;
    p->days = days;
    tl_civil_from_days((int32_t)days, &p->year, &p->month, &p->day);
    p->hour = (int)(tod / INT64_C(3600000000));
    p->minute = (int)(tod / 60000000 % 60);
    p->second = (int)(tod / 1000000 % 60);
    p->micros = (int)(tod % 1000000);
    p->wday = (int)(((days + 4) % 7 + 7) % 7);
    p->yday = (int)(days - tl_days_from_civil(p->year, 1, 1)) + 1;
}

static size_t put_num(char *o, int64_t v, int width, bool nopad)
{
    char t[24];
    int n = 0;
    bool neg = v < 0;
    uint64_t u = neg ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        t[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (!nopad)
        while (n < width) t[n++] = '0';
    size_t k = 0;
    if (neg) o[k++] = '-';
    while (n) o[k++] = t[--n];
    return k;
}

static size_t put_word(char *o, const char *w, bool abbrev)
{
    size_t n = abbrev ? 3 : strlen(w);
    for (size_t i = 0; i < n; i++)
        o[i] = (char)(i == 0 ? w[i] - 32 : w[i]);
    return n;
}

/* Write timestamp us by format f into o (at least 64 bytes per item plus
 * the literals); returns the length. */
static size_t tf_format(const Tf *f, const uint8_t *fmt, int64_t us, char *o)
{
    Parts p;
    size_t k = 0;
    split(us, &p);
    for (int i = 0; i < f->n; i++) {
        const TfItem *it = &f->items[i];
        bool np = it->nopad;
        if (tf_is_lit(it)) {
            size_t n;
            const uint8_t *s = tf_lit(it, fmt, &n);
            memcpy(o + k, s, n);
            k += n;
            continue;
        }
        switch (it->code) {
        case 'a': k += put_word(o + k, day_names[p.wday], true); break;
        case 'A': k += put_word(o + k, day_names[p.wday], false); break;
        case 'w': k += put_num(o + k, p.wday, 1, false); break;
        case 'u': k += put_num(o + k, p.wday == 0 ? 7 : p.wday, 1, false); break;
        case 'd': k += put_num(o + k, p.day, 2, np); break;
        case 'b':
        case 'h': k += put_word(o + k, month_names[p.month - 1], true); break;
        case 'B': k += put_word(o + k, month_names[p.month - 1], false); break;
        case 'm': k += put_num(o + k, p.month, 2, np); break;
        case 'y': k += put_num(o + k, ((p.year % 100) + 100) % 100, 2, np); break;
        case 'Y': k += put_num(o + k, p.year, 4, false); break;
        case 'H': k += put_num(o + k, p.hour, 2, np); break;
        case 'I': {
            int h = p.hour % 12;
            k += put_num(o + k, h == 0 ? 12 : h, 2, np);
            break;
        }
        case 'p': memcpy(o + k, p.hour < 12 ? "AM" : "PM", 2); k += 2; break;
        case 'M': k += put_num(o + k, p.minute, 2, np); break;
        case 'S': k += put_num(o + k, p.second, 2, np); break;
        case 'f': k += put_num(o + k, p.micros, 6, false); break;
        case 'g': k += put_num(o + k, p.micros / 1000, 3, false); break;
        case 'z': memcpy(o + k, "+00", 3); k += 3; break;
        case 'Z': break; /* no zone name: the value is UTC or naive */
        case 'j': k += put_num(o + k, p.yday, 3, np); break;
        case 'U':
            k += put_num(o + k, (p.yday - 1 + 7 - p.wday) / 7, 2, false);
            break;
        case 'W':
            k += put_num(o + k, (p.yday - 1 + 7 - (p.wday + 6) % 7) / 7, 2,
                         false);
            break;
        case 'V':
        case 'G': {
            int64_t iy, wk;
            tl_k_iso_week(p.days, &iy, &wk);
            k += it->code == 'V' ? put_num(o + k, wk, 2, false)
                                 : put_num(o + k, iy, 4, false);
            break;
        }
        default: o[k++] = '%'; break; /* %% */
        }
    }
    return k;
}

/* The bytes tf_format may write for f. */
static size_t tf_max_len(const Tf *f)
{
    size_t n = 0;
    for (int i = 0; i < f->n; i++) n += tf_is_lit(&f->items[i]) ? f->items[i].len + 1 : 24;
    return n;
}

/* A format argument's compiled form, kept while consecutive rows share the
 * format text. */
typedef struct FmtCache {
    Tf f;
    const uint8_t *text;
    size_t len;
    bool set;
} FmtCache;

static TlStatus fmt_get(FmtCache *c, const uint8_t *s, size_t len, bool parse,
                        int64_t row, int64_t *err_row, TlError *err)
{
    size_t bad;
    char msg[96];
    if (c->set && c->len == len && memcmp(c->text, s, len) == 0) return TL_OK;
    int r = tf_compile(&c->f, s, len, parse, &bad, msg, sizeof msg);
    if (r == CK_OOM) return tl_error_oom(err);
    if (r == CK_BAD) {
        *err_row = row;
        c->set = false;
        return tl_error(err, TL_ERR_DATA, "%s in format %s", msg,
                        tl_quote((const char *)s, len).s);
    }
    c->text = s;
    c->len = len;
    c->set = true;
    return TL_OK;
}

/* strftime(t, fmt): t a date or timestamp, fmt a string. */
static TlStatus k_strftime(const TlDatum *args, int n_args, int64_t n_rows,
                           TlArray **out, int64_t *err_row, TlError *err)
{
    TlBuf *validity = NULL;
    TlBuilder b;
    FmtCache fc = {{NULL, 0, 0}, NULL, 0, false};
    char *buf = NULL;
    size_t buf_cap = 0;
    TlStatus st = TL_OK;
    bool all_null;
    TL_FN_BROADCAST(k_strftime);
    TL_TRY(tl_k_fn_nulls(args, 2, n_rows, &all_null, &validity, err));
    if (all_null) return tl_k_fn_null_result(TL_TSTRING, n_rows, out, err);
    const TlArray *xa = args[0].array, *fa = args[1].array;
    const TlView *fv = tl_array_views(fa);
    bool is_date = xa->type == TL_TDATE;
    tl_builder_init(&b, TL_TSTRING);
    if (!tl_builder_reserve(&b, n_rows)) goto oom;
    for (int64_t i = 0; i < n_rows; i++) {
        if (!tl_k_fn_row_valid(validity, i)) {
            if (!tl_builder_append_null(&b)) goto oom;
            continue;
        }
        int64_t fi = args[1].scalar ? 0 : i, xi = args[0].scalar ? 0 : i;
        const uint8_t *s = tl_view_ptr(&fv[fi], fa->data);
        st = fmt_get(&fc, s, tl_view_len(fv[fi]), false, i, err_row, err);
        if (st != TL_OK) goto fail;
        size_t need = tf_max_len(&fc.f);
        if (need > buf_cap) {
            char *nb = tl_realloc(buf, need);
            if (!nb) goto oom;
            buf = nb;
            buf_cap = need;
        }
        int64_t us = is_date ? (int64_t)tl_array_i32(xa)[xi] * US_PER_DAY
                             : tl_array_i64(xa)[xi];
        size_t n = tf_format(&fc.f, s, us, buf);
        if (!tl_builder_append_str(&b, buf, n)) goto oom;
    }
    *out = tl_builder_finish(&b);
    if (!*out) goto oom;
    goto done;
oom:
    st = tl_error_oom(err);
fail:
    *out = NULL;
done:
    tl_builder_free(&b);
    tl_buf_release(validity);
    tl_free(fc.f.items);
    tl_free(buf);
    return st;
}

/* ----------------------------------------------------------- strptime */

static inline bool is_space(uint8_t c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Read 1..width digits at s[*pos]. */
static bool read_num(const uint8_t *s, size_t n, size_t *pos, int width,
                     int64_t *v, int *nd)
{
    size_t p = *pos;
    int64_t x = 0;
    int k = 0;
    while (p < n && k < width && s[p] >= '0' && s[p] <= '9') {
        x = x * 10 + (s[p++] - '0');
        k++;
    }
    if (k == 0) return false;
    *pos = p;
    *v = x;
    if (nd) *nd = k;
    return true;
}

/* Match one of words[0..nw) (whole or, if abbrev, the first three letters)
 * at s[*pos], case-insensitively; its index or -1. */
static int read_word(const uint8_t *s, size_t n, size_t *pos,
                     const char *const *words, int nw, bool abbrev)
{
    for (int w = 0; w < nw; w++) {
        size_t len = abbrev ? 3 : strlen(words[w]);
        if (*pos + len <= n) {
            size_t i = 0;
            for (; i < len; i++) {
                uint8_t c = s[*pos + i];
                if (c >= 'A' && c <= 'Z') c = (uint8_t)(c + 32);
                if (c != (uint8_t)words[w][i]) break;
            }
            if (i == len) {
                *pos += len;
                return w;
            }
        }
    }
    return -1;
}

/* Parse s[0..n) by f into microseconds; false if it does not match. */
static bool tf_parse(const Tf *f, const uint8_t *fmt, const uint8_t *s,
                     size_t n, int64_t *out)
{
    int64_t year = 1900, month = 1, day = 1, hour = 0, minute = 0, sec = 0,
            micros = 0, yday = -1, offset = 0, v;
    int nd, pm = -1;
    bool hour12 = false;
    size_t pos = 0;
    while (pos < n && is_space(s[pos])) pos++;
    while (n > pos && is_space(s[n - 1])) n--;
    for (int i = 0; i < f->n; i++) {
        const TfItem *it = &f->items[i];
        if (tf_is_lit(it)) {
            size_t len;
            const uint8_t *l = tf_lit(it, fmt, &len);
            for (size_t k = 0; k < len;) {
                if (is_space(l[k])) {
                    if (pos >= n || !is_space(s[pos])) return false;
                    while (pos < n && is_space(s[pos])) pos++;
                    while (k < len && is_space(l[k])) k++;
                    continue;
                }
                if (pos >= n || s[pos] != l[k]) return false;
                pos++;
                k++;
            }
            continue;
        }
        switch (it->code) {
        case 'a':
        case 'A':
            if (read_word(s, n, &pos, (const char *const *)day_names, 7,
                          it->code == 'a') < 0)
                return false;
            break;
        case 'w':
        case 'u':
            if (!read_num(s, n, &pos, 1, &v, NULL)) return false;
            break;
        case 'b':
        case 'h':
        case 'B': {
            int m = read_word(s, n, &pos, (const char *const *)month_names, 12,
                              it->code != 'B');
            if (m < 0) return false;
            month = m + 1;
            break;
        }
        case 'd':
            if (!read_num(s, n, &pos, 2, &day, NULL) || day < 1 || day > 31)
                return false;
            break;
        case 'm':
            if (!read_num(s, n, &pos, 2, &month, NULL) || month < 1 ||
                month > 12)
                return false;
            break;
        case 'y':
            if (!read_num(s, n, &pos, 2, &year, NULL)) return false;
            year += year < 69 ? 2000 : 1900;
            break;
        case 'Y':
            if (!read_num(s, n, &pos, 4, &year, NULL)) return false;
            break;
        case 'H':
            if (!read_num(s, n, &pos, 2, &hour, NULL) || hour > 23) return false;
            hour12 = false;
            break;
        case 'I':
            if (!read_num(s, n, &pos, 2, &hour, NULL) || hour < 1 || hour > 12)
                return false;
            hour12 = true;
            break;
        case 'p':
            if (pos + 2 > n) return false;
            if (tl_k_fn_word_eq(s + pos, 2, "am")) pm = 0;
            else if (tl_k_fn_word_eq(s + pos, 2, "pm")) pm = 1;
            else return false;
            pos += 2;
            break;
        case 'M':
            if (!read_num(s, n, &pos, 2, &minute, NULL) || minute > 59)
                return false;
            break;
        case 'S':
            if (!read_num(s, n, &pos, 2, &sec, NULL) || sec > 59) return false;
            break;
        case 'f':
        case 'g': {
            int w = it->code == 'f' ? 6 : 3;
            if (!read_num(s, n, &pos, w, &micros, &nd)) return false;
            for (; nd < 6; nd++) micros *= 10;
            break;
        }
        case 'j':
            if (!read_num(s, n, &pos, 3, &yday, NULL) || yday < 1 || yday > 366)
                return false;
            break;
        case 'z': {
            int64_t hh, mm = 0;
            int sign;
            if (pos >= n || (s[pos] != '+' && s[pos] != '-')) return false;
            sign = s[pos++] == '-' ? -1 : 1;
            if (!read_num(s, n, &pos, 2, &hh, &nd) || nd != 2 || hh > 23)
                return false;
            if (pos < n && s[pos] == ':') {
                pos++;
                if (!read_num(s, n, &pos, 2, &mm, &nd) || nd != 2) return false;
            } else if (pos < n && s[pos] >= '0' && s[pos] <= '9') {
                if (!read_num(s, n, &pos, 2, &mm, &nd) || nd != 2) return false;
            }
            if (mm > 59) return false;
            offset = sign * (hh * 60 + mm) * INT64_C(60000000);
            break;
        }
        default: /* %% */
            if (pos >= n || s[pos] != '%') return false;
            pos++;
            break;
        }
    }
    if (pos != n) return false;
    if (hour12 && pm >= 0) hour = hour % 12 + (pm ? 12 : 0);
    else if (hour12) hour = hour % 12;
    int64_t days;
    if (yday > 0) {
        days = tl_days_from_civil(year, 1, 1) + yday - 1;
    } else {
        static const unsigned char dm[12] = {31, 29, 31, 30, 31, 30,
                                             31, 31, 30, 31, 30, 31};
        bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        if (day > dm[month - 1] || (month == 2 && day == 29 && !leap))
            return false;
        days = tl_days_from_civil(year, (unsigned)month, (unsigned)day);
    }
    *out = days * US_PER_DAY +
           ((hour * 60 + minute) * 60 + sec) * INT64_C(1000000) + micros -
           offset;
    return true;
}

static TlStatus strptime_impl(const TlDatum *args, int64_t n_rows, bool try_,
                              TlArray **out, int64_t *err_row, TlError *err)
{
    TlBuf *validity = NULL, *values = NULL;
    FmtCache fc = {{NULL, 0, 0}, NULL, 0, false};
    TlStatus st = TL_OK;
    bool all_null;
    TL_TRY(tl_k_fn_nulls(args, 2, n_rows, &all_null, &validity, err));
    if (all_null) return tl_k_fn_null_result(TL_TTIMESTAMP, n_rows, out, err);
    values = tl_k_fn_values(n_rows, 8, true);
    if (!values) {
        st = tl_error_oom(err);
        goto fail;
    }
    const TlArray *sa = args[0].array, *fa = args[1].array;
    const TlView *sv = tl_array_views(sa), *fv = tl_array_views(fa);
    int64_t *y = (int64_t *)values->data;
    for (int64_t i = 0; i < n_rows; i++) {
        if (!tl_k_fn_row_valid(validity, i)) continue;
        int64_t fi = args[1].scalar ? 0 : i, si = args[0].scalar ? 0 : i;
        const uint8_t *f = tl_view_ptr(&fv[fi], fa->data);
        size_t flen = tl_view_len(fv[fi]);
        st = fmt_get(&fc, f, flen, true, i, err_row, err);
        if (st != TL_OK) goto fail;
        const uint8_t *s = tl_view_ptr(&sv[si], sa->data);
        size_t slen = tl_view_len(sv[si]);
        if (tf_parse(&fc.f, f, s, slen, &y[i])) continue;
        if (try_) {
            if (!validity) {
                validity = tl_buf_new(((size_t)n_rows + 7) / 8, false);
                if (!validity) {
                    st = tl_error_oom(err);
                    goto fail;
                }
                memset(validity->data, 0xff, validity->size);
            }
            tl_bit_clear(validity->data, i);
            continue;
        }
        *err_row = i;
        st = tl_error(err, TL_ERR_DATA,
                      "cannot parse %s as a timestamp with format %s",
                      tl_quote((const char *)s, slen).s,
                      tl_quote((const char *)f, flen).s);
        goto fail;
    }
    tl_free(fc.f.items);
    *out = tl_array_new(TL_TTIMESTAMP, n_rows, values, validity, -1, NULL, 0);
    return *out ? TL_OK : tl_error_oom(err);
fail:
    tl_free(fc.f.items);
    tl_buf_release(values);
    tl_buf_release(validity);
    return st;
}

static TlStatus k_strptime(const TlDatum *args, int n_args, int64_t n_rows,
                           TlArray **out, int64_t *err_row, TlError *err)
{
    TL_FN_BROADCAST(k_strptime);
    return strptime_impl(args, n_rows, false, out, err_row, err);
}

static TlStatus k_try_strptime(const TlDatum *args, int n_args, int64_t n_rows,
                               TlArray **out, int64_t *err_row, TlError *err)
{
    TL_FN_BROADCAST(k_try_strptime);
    return strptime_impl(args, n_rows, true, out, err_row, err);
}

/* ------------------------------------------------------------- typing */

static bool types_strftime(const TlType *a, int n, TlType *res, TlType *want)
{
    if (n != 2) return false;
    if (a[0] == TL_TNULL) want[0] = TL_TTIMESTAMP;
    else if (a[0] == TL_TDATE || a[0] == TL_TTIMESTAMP) want[0] = a[0];
    else if (a[0] == TL_TTIMESTAMPTZ) want[0] = TL_TTIMESTAMP; /* its UTC clock */
    else return false;
    if (a[1] != TL_TSTRING && a[1] != TL_TNULL) return false;
    want[1] = TL_TSTRING;
    *res = TL_TSTRING;
    return true;
}

static bool types_strptime(const TlType *a, int n, TlType *res, TlType *want)
{
    if (n != 2) return false;
    for (int i = 0; i < 2; i++) {
        if (a[i] != TL_TSTRING && a[i] != TL_TNULL) return false;
        want[i] = TL_TSTRING;
    }
    *res = TL_TTIMESTAMP;
    return true;
}

/* The strftime family's table for the registry (fn.c). */
const TlFnDef tl_k_fn_strtime_defs[] = {
    {"strftime", k_strftime, types_strftime},
    {"strptime", k_strptime, types_strptime},
    {"try_strptime", k_try_strptime, types_strptime},
};
/* Number of entries in tl_k_fn_strtime_defs. */
const int tl_k_fn_strtime_count =
    (int)(sizeof tl_k_fn_strtime_defs / sizeof tl_k_fn_strtime_defs[0]);
