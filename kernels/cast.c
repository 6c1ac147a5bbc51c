/*
 * cast.c -- cast(x as T) and try_cast over whole arrays.
 *
 * The conversions (DuckDB's; man/tally.1, EXPRESSIONS, "Casts"):
 *
 *   from \ to  bool      int64        float64   string  date     timestamp
 *   bool       =         0 / 1        0.0/1.0   fmt     -        -
 *   int64      x != 0    =            exact-ish fmt     -        -
 *   float64    x != 0    round half   =         fmt     -        -
 *                        to even;
 *                        fails out of
 *                        range or nan
 *   string     parse     parse        parse     =       parse    parse
 *   date       -         -            -         fmt     -        =midnight
 *   timestamp  -         -            -         fmt     floor    =
 *   null       every target: all null
 *
 * ("-" is not a cast: tl_k_cast_allowed says false and resolve reports it.)
 * Parsing and formatting are lib/core/text.h's, so a cast spells a value
 * exactly as the CSV writer does and accepts what the reader accepts; on top
 * of that, like DuckDB, a cast from string ignores surrounding white space,
 * accepts t/f/y/n/yes/no/1/0 for bool, and rounds a decimal such as '2.5'
 * to an int64, half away from zero (a float64 rounds half to even: both
 * as DuckDB).
 *
 * One typed loop per (from, to) pair.  The fixed-width loops run over null
 * rows too (their values are never read back); a conversion that can fail
 * (float -> int64, date -> timestamp range) ORs a flag, and only when it is
 * set does a second pass look for the failing VALID rows: try_cast clears
 * their validity, cast reports the first one in *bad_row.  String sources
 * are parsed row by row and skip null rows.
 */
#include "core_kernels.h"
#include "../lib/core/text.h"

#include <math.h>
#include <strings.h>

#define MICROS_PER_DAY INT64_C(86400000000)

/* Whether cast(from as to) is defined. */
bool tl_k_cast_allowed(TlType from, TlType to)
{
    bool num_from = from == TL_TBOOL || from == TL_TINT64 || from == TL_TFLOAT64;
    bool num_to = to == TL_TBOOL || to == TL_TINT64 || to == TL_TFLOAT64;
    if (from == to || from == TL_TNULL) return true;
    if (to == TL_TNULL) return false;
    if (to == TL_TSTRING || from == TL_TSTRING) return true;
    if (num_from && num_to) return true;
    bool time_from = from == TL_TDATE || from == TL_TTIMESTAMP ||
                     from == TL_TTIMESTAMPTZ;
    bool time_to = to == TL_TDATE || to == TL_TTIMESTAMP ||
                   to == TL_TTIMESTAMPTZ;
    return time_from && time_to;
}

/* An integral double r -> int64, false outside int64's range or nan. */
static inline bool rounded_to_i64(double r, int64_t *out)
{
    if (!(r >= -9223372036854775808.0 && r < 9223372036854775808.0)) {
        *out = 0;
        return false;
    }
    *out = (int64_t)r;
    return true;
}

/* float64 -> int64 as DuckDB: round half to even (2.5 -> 2, 3.5 -> 4),
 * within range.  nearbyint rounds in the current mode, which tally never
 * changes from the default, round-to-nearest-even. */
static inline bool f64_to_i64(double x, int64_t *out)
{
    return rounded_to_i64(nearbyint(x), out);
}

static inline bool date_to_ts(int32_t d, int64_t *out)
{
    return !__builtin_mul_overflow((int64_t)d, MICROS_PER_DAY, out);
}

/* floor(ts / day) */
static inline int32_t ts_to_date(int64_t t)
{
    int64_t q = t / MICROS_PER_DAY;
    if (t % MICROS_PER_DAY < 0) q--;
    return (int32_t)q;
}

/* Result under construction for a fixed-width target. */
typedef struct Out {
    const TlArray *a;
    TlType to;
    bool try_;
    TlBuf *values;
    uint64_t *valid; /* NULL = every row valid */
    int64_t bad_row;
} Out;

/* Row i failed to convert: with try_ it becomes null; otherwise it is the
 * bad row (returns false to stop). */
static bool fail_row(Out *o, int64_t i)
{
    if (!o->try_) {
        o->bad_row = i;
        return false;
    }
    if (!o->valid) {
        o->valid = tl_k_bits_new(o->a->length, true);
        if (!o->valid) return false; /* OOM: bad_row stays -1 */
    }
    o->valid[i >> 6] &= ~(UINT64_C(1) << (i & 63));
    return true;
}

/* Trim ASCII white space off s[0..*len). */
static const char *trim(const char *s, size_t *len)
{
    size_t n = *len;
    while (n && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')) {
        s++;
        n--;
    }
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' ||
                 s[n - 1] == '\r'))
        n--;
    *len = n;
    return s;
}

static bool parse_bool(const char *s, size_t n, bool *out)
{
    static const struct { const char *w; bool v; } words[] = {
        {"t", true}, {"y", true}, {"yes", true}, {"1", true},
        {"f", false}, {"n", false}, {"no", false}, {"0", false},
    };
    size_t i;
    if (tl_parse_bool(s, n, out)) return true;
    for (i = 0; i < sizeof words / sizeof words[0]; i++) {
        if (strlen(words[i].w) == n && strncasecmp(words[i].w, s, n) == 0) {
            *out = words[i].v;
            return true;
        }
    }
    return false;
}

static bool parse_i64(const char *s, size_t n, int64_t *out)
{
    double f;
    if (tl_parse_i64(s, n, out)) return true;
    /* a decimal such as 2.5 rounds half away from zero, as DuckDB's cast
     * of a string does (its cast of a double rounds half to even) */
    if (!memchr(s, '.', n) && !memchr(s, 'e', n) && !memchr(s, 'E', n))
        return false;
    if (!tl_parse_f64(s, n, &f) || !isfinite(f)) return false;
    return rounded_to_i64(round(f), out);
}

/* string -> bool/int64/float64/date/timestamp, row by row. */
static bool from_string(Out *o)
{
    const TlArray *a = o->a;
    const TlView *v = tl_array_views(a);
    uint8_t *dst = o->values->data;
    int64_t i;
    for (i = 0; i < a->length; i++) {
        size_t len;
        const char *s;
        bool ok;
        if (!tl_array_valid(a, i)) continue;
        len = tl_view_len(v[i]);
        s = trim((const char *)tl_view_ptr(&v[i], a->data), &len);
        switch (o->to) {
        case TL_TBOOL: {
            bool b = false;
            ok = parse_bool(s, len, &b);
            if (ok && b) ((uint64_t *)dst)[i >> 6] |= UINT64_C(1) << (i & 63);
            break;
        }
        case TL_TINT64:
            ok = parse_i64(s, len, &((int64_t *)dst)[i]);
            break;
        case TL_TFLOAT64:
            ok = tl_parse_f64(s, len, &((double *)dst)[i]);
            break;
        case TL_TDATE:
            ok = tl_parse_date(s, len, &((int32_t *)dst)[i]);
            break;
        case TL_TTIMESTAMPTZ: /* with an offset, or else taken as UTC */
            ok = tl_parse_timestamptz(s, len, &((int64_t *)dst)[i]) ||
                 tl_parse_timestamp(s, len, &((int64_t *)dst)[i]);
            break;
        default: /* timestamp */
            ok = tl_parse_timestamp(s, len, &((int64_t *)dst)[i]);
            break;
        }
        if (!ok && !fail_row(o, i)) return false;
    }
    return true;
}

/* Whether row i of a fails to convert (fixed-width sources). */
static bool row_fails(const TlArray *a, TlType to, int64_t i)
{
    int64_t t;
    if (a->type == TL_TFLOAT64 && to == TL_TINT64)
        return !f64_to_i64(tl_array_f64(a)[i], &t);
    if (a->type == TL_TDATE && (to == TL_TTIMESTAMP || to == TL_TTIMESTAMPTZ))
        return !date_to_ts(tl_array_i32(a)[i], &t);
    return false;
}

/* Fixed-width source to fixed-width target; returns whether any row may
 * have failed. */
static bool fixed_loop(const TlArray *a, TlType to, uint8_t *dst)
{
    int64_t i, n = a->length;
    int bad = 0;
    switch (a->type) {
    case TL_TBOOL:
        for (i = 0; i < n; i++) {
            bool b = tl_array_bool(a, i);
            if (to == TL_TINT64) ((int64_t *)dst)[i] = b;
            else ((double *)dst)[i] = b;
        }
        break;
    case TL_TINT64: {
        const int64_t *p = tl_array_i64(a);
        if (to == TL_TFLOAT64) {
            for (i = 0; i < n; i++) ((double *)dst)[i] = (double)p[i];
        } else { /* bool */
            uint64_t *w = (uint64_t *)dst;
            for (i = 0; i < n; i++)
                w[i >> 6] |= (uint64_t)(p[i] != 0) << (i & 63);
        }
        break;
    }
    case TL_TFLOAT64: {
        const double *p = tl_array_f64(a);
        if (to == TL_TINT64) {
            for (i = 0; i < n; i++)
                bad |= !f64_to_i64(p[i], &((int64_t *)dst)[i]);
        } else { /* bool */
            uint64_t *w = (uint64_t *)dst;
            for (i = 0; i < n; i++)
                w[i >> 6] |= (uint64_t)(p[i] != 0) << (i & 63);
        }
        break;
    }
    case TL_TDATE: { /* -> timestamp */
        const int32_t *p = tl_array_i32(a);
        for (i = 0; i < n; i++)
            bad |= !date_to_ts(p[i], &((int64_t *)dst)[i]);
        break;
    }
    case TL_TTIMESTAMP:
    case TL_TTIMESTAMPTZ: { /* -> date; between the two: the same instant
                               (tally's time zone is UTC) */
        const int64_t *p = tl_array_i64(a);
        if (to == TL_TDATE)
            for (i = 0; i < n; i++) ((int32_t *)dst)[i] = ts_to_date(p[i]);
        else
            memcpy(dst, p, (size_t)n * sizeof *p);
        break;
    }
    default:
        break;
    }
    return bad != 0;
}

/* Any type -> string with text.h's spelling. */
static TlStatus to_string(const TlArray *a, TlArray **out, TlError *err)
{
    TlBuilder b;
    char buf[TL_FMT_MAX];
    int64_t i;
    tl_builder_init(&b, TL_TSTRING);
    if (!tl_builder_reserve(&b, a->length)) goto oom;
    for (i = 0; i < a->length; i++) {
        size_t len = 0;
        const char *s = buf;
        if (!tl_array_valid(a, i)) {
            if (!tl_builder_append_null(&b)) goto oom;
            continue;
        }
        switch (a->type) {
        case TL_TBOOL:
            s = tl_array_bool(a, i) ? "true" : "false";
            len = strlen(s);
            break;
        case TL_TINT64: len = tl_fmt_i64(tl_array_i64(a)[i], buf); break;
        case TL_TFLOAT64: len = tl_fmt_f64(tl_array_f64(a)[i], buf); break;
        case TL_TDATE: len = tl_fmt_date(tl_array_i32(a)[i], buf); break;
        case TL_TTIMESTAMP:
            len = tl_fmt_timestamp(tl_array_i64(a)[i], buf);
            break;
        case TL_TTIMESTAMPTZ:
            len = tl_fmt_timestamptz(tl_array_i64(a)[i], buf);
            break;
        default: break;
        }
        if (!tl_builder_append_str(&b, s, len)) goto oom;
    }
    *out = tl_builder_finish(&b);
    tl_builder_free(&b);
    return *out ? TL_OK : tl_error_oom(err);
oom:
    tl_builder_free(&b);
    return tl_error_oom(err);
}

/* Cast a whole array (see core_kernels.h).  a is borrowed; *out owned. */
TlStatus tl_cast_array(const TlArray *a, TlType to, bool try_, TlArray **out,
                       int64_t *bad_row, TlError *err)
{
    Out o;
    int64_t i, n = a->length;
    TlBuf *validity = NULL;
    *out = NULL;
    if (a->type == to) {
        *out = tl_array_retain((TlArray *)a);
        return TL_OK;
    }
    if (!tl_k_cast_allowed(a->type, to))
        return tl_error(err, TL_ERR_USAGE, "cannot cast %s to %s",
                        tl_type_name(a->type), tl_type_name(to));
    if (a->type == TL_TNULL || a->null_count == n) {
        *out = tl_array_new_null(to, n);
        return *out ? TL_OK : tl_error_oom(err);
    }
    if (to == TL_TSTRING) return to_string(a, out, err);
    o.a = a;
    o.to = to;
    o.try_ = try_;
    o.bad_row = -1;
    o.valid = NULL;
    o.values = tl_k_values_new(to, n);
    if (!o.values) return tl_error_oom(err);
    if (a->null_count > 0) {
        o.valid = tl_k_bits_dup(a->validity->data, a->offset, n);
        if (!o.valid) goto oom;
    }
    if (a->type == TL_TSTRING) {
        if (!from_string(&o)) goto failed;
    } else if (fixed_loop(a, to, o.values->data)) {
        for (i = 0; i < n; i++)
            if (tl_array_valid(a, i) && row_fails(a, to, i) && !fail_row(&o, i))
                goto failed;
    }
    if (o.valid) {
        validity = tl_k_bits_buf(o.valid, n);
        o.valid = NULL;
        if (!validity) goto oom;
    }
    *out = tl_array_new(to, n, o.values, validity, -1, NULL, 0);
    return *out ? TL_OK : tl_error_oom(err);
failed:
    if (o.bad_row >= 0) {
        *bad_row = o.bad_row;
        tl_free(o.valid);
        tl_buf_release(o.values);
        err->code = TL_ERR_DATA;
        return TL_ERR_DATA;
    }
oom:
    tl_free(o.valid);
    tl_buf_release(o.values);
    return tl_error_oom(err);
}
