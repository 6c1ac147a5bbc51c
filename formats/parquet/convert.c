/*
 * convert.c -- physical values -> tally values, the annotation applied
 * (schema.c chose the conversion; man/tally.1, "Parquet", is the table):
 *
 *   integers       int64; INT32 signed or unsigned, INT64 signed; INT64
 *                  unsigned above int64's range is an error naming the value
 *   FLOAT, DOUBLE  float64 (a FLOAT widened exactly); FLOAT16 too
 *   DATE           date (days); TIMESTAMP millis/micros/nanos and INT96:
 *                  timestamp in microseconds, UTC when adjusted to UTC; a
 *                  nanosecond value that is not a whole microsecond, or a
 *                  value past int64 microseconds, is an error, never a
 *                  silent truncation
 *   TIME           text HH:MM:SS[.fraction] (+00 when adjusted to UTC), as
 *                  DuckDB prints a TIME; tally has no time type
 *   DECIMAL        precision <= 15: float64, unscaled / 10^scale, whose
 *                  shortest round-trip text is the decimal's own digits (a
 *                  decimal of at most 15 digits survives a double); wider:
 *                  the exact text with scale digits after the point, as
 *                  DuckDB prints it ("-12.50")
 *   byte arrays    strings: a value that is valid UTF-8 is a view of its
 *                  bytes (inline up to 12 bytes, else pointing into the
 *                  page, which the batch then holds); any other value is
 *                  spelt as DuckDB spells a BLOB: printable ASCII as is
 *                  but ' " and \, every other byte \xHH
 *   UUID           text, 8-4-4-4-12 lowercase hex digits
 *
 * Text made here (escapes, decimals, times, UUIDs) goes to the run's side
 * block (PqOut.side), which becomes one more data block of the batch.
 */
#include "parquet.h"
#include "../json_text.h"
#include "../../lib/core/text.h"

#include <math.h>
#include <stdio.h>

size_t pq_out_width(TlType t)
{
    switch (t) {
    case TL_TBOOL: return 1;
    case TL_TDATE: return 4;
    case TL_TSTRING: return sizeof(TlView);
    case TL_TNULL: return 0;
    default: return 8;
    }
}

/* ------------------------------------------------------------ data blocks */

static int data_add(PqOut *o, TlBuf *b)
{
    if (o->n_data == o->cap_data) {
        uint32_t cap = o->cap_data ? o->cap_data * 2 : 4;
        TlBuf **g = tl_realloc(o->data, cap * sizeof *g);
        if (!g) return -1;
        o->data = g;
        o->cap_data = cap;
    }
    o->data[o->n_data] = tl_buf_retain(b);
    return (int)o->n_data++;
}

/* Room for n more bytes of made text; NULL on OOM. */
static uint8_t *side_room(PqOut *o, size_t n)
{
    if (o->side_idx < 0) {
        int i = data_add(o, NULL); /* the block, once frozen (pq_out_finish) */
        if (i < 0) return NULL;
        o->side_idx = i;
    }
    if (o->side_cap - o->side_len < n) {
        size_t cap = o->side_cap ? o->side_cap : 4096;
        while (cap - o->side_len < n) cap *= 2;
        uint8_t *g = tl_realloc(o->side, cap);
        if (!g) return NULL;
        o->side = g;
        o->side_cap = cap;
    }
    return o->side + o->side_len;
}

TlStatus pq_out_finish(PqOut *o)
{
    TlBuf *b;
    if (o->side_idx < 0) return TL_OK;
    b = tl_buf_adopt(o->side, o->side_len ? o->side_len : 0);
    o->side = NULL;
    o->side_len = o->side_cap = 0;
    if (!b) return TL_ERR_OOM;
    o->data[o->side_idx] = b;
    o->side_idx = -1;
    return TL_OK;
}

void pq_out_free(PqOut *o)
{
    for (uint32_t i = 0; i < o->n_data; i++) tl_buf_release(o->data[i]);
    tl_free(o->data);
    tl_free(o->side);
    o->data = NULL;
    o->side = NULL;
    o->n_data = o->cap_data = 0;
    o->side_len = o->side_cap = 0;
    o->side_idx = o->page_idx = -1;
}

/* The view of bytes s[0, n): inline, into the page when they lie there,
 * else copied to the side block.  false on OOM. */
static bool view_of(PqOut *o, const uint8_t *s, uint32_t n, TlView *v)
{
    if (n <= TL_VIEW_INLINE) {
        memset(v, 0, sizeof *v);
        v->in.len = n;
        if (n) memcpy(v->in.data, s, n);
        return true;
    }
    v->out.len = n;
    memcpy(v->out.prefix, s, 4);
    if (o->page && s >= o->page->data && s + n <= o->page->data + o->page->size) {
        if (o->page_idx < 0 && (o->page_idx = data_add(o, (TlBuf *)(uintptr_t)o->page)) < 0)
            return false;
        v->out.buf = (uint32_t)o->page_idx;
        v->out.off = (uint32_t)(s - o->page->data);
        return true;
    }
    uint8_t *d = side_room(o, n);
    if (!d || o->side_len + n > UINT32_MAX) return false;
    memcpy(d, s, n);
    v->out.buf = (uint32_t)o->side_idx;
    v->out.off = (uint32_t)o->side_len;
    o->side_len += n;
    return true;
}

/* A view of text made in buf[0, n) (copied). */
static bool view_made(PqOut *o, const char *buf, size_t n, TlView *v)
{
    const TlBuf *page = o->page;
    bool ok;
    o->page = NULL; /* made text never lies in the page */
    ok = view_of(o, (const uint8_t *)buf, (uint32_t)n, v);
    o->page = page;
    return ok;
}

/* ------------------------------------------------------------- strings */

static bool utf8_valid(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (n - i >= 8) {
            uint64_t x;
            memcpy(&x, s + i, 8);
            if (!(x & 0x8080808080808080ull)) {
                i += 8;
                continue;
            }
        }
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        size_t k = utf8_seq(s + i, n - i);
        if (!k) return false;
        i += k;
    }
    return true;
}

/* A value that is not UTF-8, spelt as DuckDB spells a BLOB. */
static bool blob_text(PqOut *o, const uint8_t *s, uint32_t n, TlView *v)
{
    static const char hex[] = "0123456789ABCDEF";
    uint8_t *d = side_room(o, (size_t)n * 4);
    size_t k = 0;
    if (!d) return false;
    for (uint32_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (c >= 32 && c <= 126 && c != '\'' && c != '"' && c != '\\') {
            d[k++] = c;
        } else {
            d[k++] = '\\';
            d[k++] = 'x';
            d[k++] = (uint8_t)hex[c >> 4];
            d[k++] = (uint8_t)hex[c & 15];
        }
    }
    if (k <= TL_VIEW_INLINE) {
        memset(v, 0, sizeof *v);
        v->in.len = (uint32_t)k;
        memcpy(v->in.data, d, k);
        return true;
    }
    if (o->side_len + k > UINT32_MAX) return false;
    v->out.len = (uint32_t)k;
    memcpy(v->out.prefix, d, 4);
    v->out.buf = (uint32_t)o->side_idx;
    v->out.off = (uint32_t)o->side_len;
    o->side_len += k;
    return true;
}

/* ------------------------------------------------------------- decimals */

static const double pow10_tab[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15};

/* Big-endian two's complement bytes -> int64; false when they do not fit. */
static bool be_i64(const uint8_t *s, uint32_t n, int64_t *v)
{
    uint64_t x;
    uint32_t i = 0;
    if (n == 0) {
        *v = 0;
        return true;
    }
    uint8_t sign = s[0] & 0x80 ? 0xff : 0;
    for (; n - i > 8; i++)
        if (s[i] != sign) return false;
    x = sign ? ~(uint64_t)0 : 0;
    for (; i < n; i++) x = x << 8 | s[i];
    if (n > 8 && (x >> 63) != (sign ? 1u : 0u)) return false;
    *v = (int64_t)x;
    return true;
}

/* The exact text of unscaled big-endian two's complement s[0, n) with
 * scale digits after the point, into buf (at least 3 * n + 8 bytes);
 * returns its length. */
static size_t decimal_text(const uint8_t *s, uint32_t n, int32_t scale, char *buf)
{
    uint32_t limb[16]; /* little-endian base 2^32 magnitude, up to 64 bytes */
    int nl = 0;
    bool neg = n > 0 && (s[0] & 0x80);
    char digits[160];
    int nd = 0;
    size_t k = 0;
    /* magnitude: two's complement negated byte by byte from the end */
    unsigned carry = 1;
    memset(limb, 0, sizeof limb);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t b = s[n - 1 - i];
        if (neg) {
            b = (~b & 0xff) + carry;
            carry = b >> 8;
            b &= 0xff;
        }
        limb[i / 4] |= b << (8 * (i % 4));
    }
    nl = (int)((n + 3) / 4);
    while (nl > 0 && limb[nl - 1] == 0) nl--;
    while (nl > 0) { /* divide by 10^9, collecting 9 digits at a time */
        uint64_t rem = 0;
        for (int i = nl - 1; i >= 0; i--) {
            uint64_t cur = rem << 32 | limb[i];
            limb[i] = (uint32_t)(cur / 1000000000u);
            rem = cur % 1000000000u;
        }
        while (nl > 0 && limb[nl - 1] == 0) nl--;
        for (int j = 0; j < 9 && (nl > 0 || rem); j++) {
            digits[nd++] = (char)('0' + rem % 10);
            rem /= 10;
        }
    }
    while (nd <= scale) digits[nd++] = '0'; /* at least one digit before the point */
    if (neg) buf[k++] = '-';
    for (int i = nd - 1; i >= 0; i--) {
        buf[k++] = digits[i];
        if (i == scale && scale > 0) buf[k++] = '.';
    }
    buf[k] = 0;
    return k;
}

static size_t i64_be(int64_t v, uint8_t *b)
{
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)v >> (56 - 8 * i));
    return 8;
}

/* ---------------------------------------------------------------- times */

/* HH:MM:SS[.fraction] of frac-unit value v (unit: 1e3, 1e6 or 1e9 a
 * second), trailing zeros of the fraction dropped. */
static size_t time_text(int64_t v, int64_t unit, int digits, bool utc, char *buf)
{
    int64_t secs = v / unit, frac = v % unit;
    size_t k = (size_t)snprintf(buf, 64, "%02lld:%02lld:%02lld", (long long)(secs / 3600),
                                (long long)(secs / 60 % 60), (long long)(secs % 60));
    if (frac) {
        char f[16];
        int n = snprintf(f, sizeof f, "%0*lld", digits, (long long)frac);
        while (n > 0 && f[n - 1] == '0') n--;
        buf[k++] = '.';
        memcpy(buf + k, f, (size_t)n);
        k += (size_t)n;
    }
    if (utc) {
        memcpy(buf + k, "+00", 3);
        k += 3;
    }
    buf[k] = 0;
    return k;
}

/* ----------------------------------------------------------- the switch */

static TlStatus bad(PqOut *o, const char *fmt, long long v)
{
    snprintf(o->msg, sizeof o->msg, fmt, v);
    return TL_ERR_DATA;
}

static double half_to_double(uint16_t h)
{
    int e = h >> 10 & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return h & 0x8000 ? -v : v;
}

/* ns (nanoseconds since the epoch) in whole microseconds; an error that
 * shows the value with its nine digits when it has nanoseconds. */
static TlStatus micros_from_nanos(PqOut *o, int64_t ns, int64_t *us)
{
    char t[TL_FMT_MAX];
    int64_t s, f;
    size_t k;
    if (ns % 1000 == 0) {
        *us = ns / 1000;
        return TL_OK;
    }
    s = ns / 1000000000 - (ns % 1000000000 < 0);
    f = ns - s * 1000000000;
    k = tl_fmt_timestamp(s * 1000000, t);
    snprintf(o->msg, sizeof o->msg, "the timestamp %.*s.%09lld has nanoseconds, which tally's "
             "microsecond timestamps cannot hold", (int)k, t, (long long)f);
    return TL_ERR_DATA;
}

TlStatus pq_convert(const PqLeaf *l, const PqPhys *in, PqOut *o)
{
    int64_t n = in->n;
    int64_t *d64 = (int64_t *)(void *)o->dst;
    double *df = (double *)(void *)o->dst;
    TlView *dv = (TlView *)(void *)o->dst;
    char buf[600];
    switch (l->conv) {
    case PQ_CV_NULL:
    case PQ_CV_JSON: /* made by nested.c from the leaves under it */
        return TL_OK;
    case PQ_CV_BOOL:
        memcpy(o->dst, in->b8, (size_t)n);
        return TL_OK;
    case PQ_CV_I32:
        for (int64_t i = 0; i < n; i++) d64[i] = in->i32[i];
        return TL_OK;
    case PQ_CV_U32:
        for (int64_t i = 0; i < n; i++) d64[i] = (int64_t)(uint32_t)in->i32[i];
        return TL_OK;
    case PQ_CV_I64:
    case PQ_CV_TS_US:
        memcpy(d64, in->i64, (size_t)n * 8);
        return TL_OK;
    case PQ_CV_U64:
        for (int64_t i = 0; i < n; i++) {
            if (in->i64[i] < 0) {
                snprintf(o->msg, sizeof o->msg,
                         "the unsigned value %llu is beyond int64's range",
                         (unsigned long long)in->i64[i]);
                return TL_ERR_DATA;
            }
            d64[i] = in->i64[i];
        }
        return TL_OK;
    case PQ_CV_F32:
        for (int64_t i = 0; i < n; i++) df[i] = in->f32[i];
        return TL_OK;
    case PQ_CV_F64:
        memcpy(df, in->f64, (size_t)n * 8);
        return TL_OK;
    case PQ_CV_DATE:
        memcpy(o->dst, in->i32, (size_t)n * 4);
        return TL_OK;
    case PQ_CV_TS_MS:
        for (int64_t i = 0; i < n; i++)
            if (__builtin_mul_overflow(in->i64[i], (int64_t)1000, &d64[i]))
                return bad(o, "the timestamp %lld ms is beyond tally's timestamp range",
                           (long long)in->i64[i]);
        return TL_OK;
    case PQ_CV_TS_NS:
        for (int64_t i = 0; i < n; i++) TL_TRY(micros_from_nanos(o, in->i64[i], &d64[i]));
        return TL_OK;
    case PQ_CV_INT96:
        for (int64_t i = 0; i < n; i++) {
            int64_t nanos, us;
            int32_t jd;
            __int128 t;
            memcpy(&nanos, in->bytes[i].p, 8);
            memcpy(&jd, in->bytes[i].p + 8, 4);
            TL_TRY(micros_from_nanos(o, nanos, &us));
            t = (__int128)((int64_t)jd - 2440588) * 86400000000 + us;
            if (t < INT64_MIN || t > INT64_MAX)
                return bad(o, "the INT96 timestamp of Julian day %lld is beyond tally's "
                              "timestamp range", (long long)jd);
            d64[i] = (int64_t)t;
        }
        return TL_OK;
    case PQ_CV_TIME_MS:
    case PQ_CV_TIME_US:
    case PQ_CV_TIME_NS: {
        int64_t unit = l->conv == PQ_CV_TIME_MS ? 1000 : l->conv == PQ_CV_TIME_US ? 1000000
                                                                                : 1000000000;
        int digits = l->conv == PQ_CV_TIME_MS ? 3 : l->conv == PQ_CV_TIME_US ? 6 : 9;
        for (int64_t i = 0; i < n; i++) {
            int64_t v = l->conv == PQ_CV_TIME_MS ? in->i32[i] : in->i64[i];
            if (v < 0 || v > 24 * 3600 * unit)
                return bad(o, "the time of day %lld is out of range", (long long)v);
            if (!view_made(o, buf, time_text(v, unit, digits, l->time_utc, buf), &dv[i]))
                return TL_ERR_OOM;
        }
        return TL_OK;
    }
    case PQ_CV_DEC_F64:
        for (int64_t i = 0; i < n; i++) {
            int64_t u;
            if (l->phys == PQ_INT32) u = in->i32[i];
            else if (l->phys == PQ_INT64) u = in->i64[i];
            else if (!be_i64(in->bytes[i].p, in->bytes[i].n, &u))
                return bad(o, "a DECIMAL value of %lld bytes exceeds its precision",
                           (long long)in->bytes[i].n);
            df[i] = (double)u / pow10_tab[l->scale];
        }
        return TL_OK;
    case PQ_CV_DEC_TEXT:
        for (int64_t i = 0; i < n; i++) {
            uint8_t be[8];
            const uint8_t *s = be;
            uint32_t len;
            if (l->phys == PQ_INT32) len = (uint32_t)i64_be(in->i32[i], be);
            else if (l->phys == PQ_INT64) len = (uint32_t)i64_be(in->i64[i], be);
            else {
                s = in->bytes[i].p;
                len = in->bytes[i].n;
            }
            if (len > 64 || l->scale > 100)
                return bad(o, "a DECIMAL value of %lld bytes is wider than tally reads",
                           (long long)len);
            if (!view_made(o, buf, decimal_text(s, len, l->scale, buf), &dv[i]))
                return TL_ERR_OOM;
        }
        return TL_OK;
    case PQ_CV_BYTES:
        for (int64_t i = 0; i < n; i++) {
            const uint8_t *s = in->bytes[i].p;
            uint32_t len = in->bytes[i].n;
            if (!(utf8_valid(s, len) ? view_of(o, s, len, &dv[i]) : blob_text(o, s, len, &dv[i])))
                return TL_ERR_OOM;
        }
        return TL_OK;
    case PQ_CV_UUID:
        for (int64_t i = 0; i < n; i++) {
            static const char hex[] = "0123456789abcdef";
            size_t k = 0;
            for (int j = 0; j < 16; j++) {
                if (j == 4 || j == 6 || j == 8 || j == 10) buf[k++] = '-';
                buf[k++] = hex[in->bytes[i].p[j] >> 4];
                buf[k++] = hex[in->bytes[i].p[j] & 15];
            }
            if (!view_made(o, buf, k, &dv[i])) return TL_ERR_OOM;
        }
        return TL_OK;
    case PQ_CV_F16:
        for (int64_t i = 0; i < n; i++)
            df[i] = half_to_double((uint16_t)(in->bytes[i].p[0] | in->bytes[i].p[1] << 8));
        return TL_OK;
    }
    return TL_OK;
}

/* ---------------------------------------------------------------- widen */

TlArray *pq_widen(TlArray *a, TlType to)
{
    TlBuilder b;
    char buf[TL_FMT_MAX];
    if (a->type == to) return tl_array_retain(a);
    if (a->type == TL_TNULL) return tl_array_new_null(to, a->length);
    if (a->type == TL_TINT64 && to == TL_TFLOAT64) {
        TlBuf *vals = tl_buf_new((size_t)a->length * 8 + 1, false);
        if (!vals) return NULL;
        for (int64_t i = 0; i < a->length; i++)
            ((double *)(void *)vals->data)[i] = (double)tl_array_i64(a)[i];
        TlBuf *valid = NULL;
        if (a->validity) {
            valid = tl_buf_new(tl_bitmap_bytes(a->length) + 1, true);
            if (!valid) {
                tl_buf_release(vals);
                return NULL;
            }
            tl_bitmap_copy(valid->data, 0, a->validity->data, a->offset, a->length);
        }
        return tl_array_new(TL_TFLOAT64, a->length, vals, valid, a->null_count, NULL, 0);
    }
    tl_builder_init(&b, TL_TSTRING);
    if (!tl_builder_reserve(&b, a->length)) goto oom;
    for (int64_t i = 0; i < a->length; i++) {
        size_t k = 0;
        bool ok;
        if (!tl_array_valid(a, i)) {
            ok = tl_builder_append_null(&b);
        } else if (a->type == TL_TSTRING) {
            const TlView *v = &tl_array_views(a)[i];
            ok = tl_builder_append_str(&b, tl_view_ptr(v, a->data), tl_view_len(*v));
        } else {
            switch (a->type) {
            case TL_TBOOL:
                k = (size_t)snprintf(buf, sizeof buf, "%s",
                                     tl_array_bool(a, i) ? "true" : "false");
                break;
            case TL_TINT64: k = tl_fmt_i64(tl_array_i64(a)[i], buf); break;
            case TL_TFLOAT64: k = tl_fmt_f64(tl_array_f64(a)[i], buf); break;
            case TL_TDATE: k = tl_fmt_date(tl_array_i32(a)[i], buf); break;
            case TL_TTIMESTAMPTZ: k = tl_fmt_timestamptz(tl_array_i64(a)[i], buf); break;
            default: k = tl_fmt_timestamp(tl_array_i64(a)[i], buf); break;
            }
            ok = tl_builder_append_str(&b, buf, k);
        }
        if (!ok) goto oom;
    }
    return tl_builder_finish(&b);
oom:
    tl_builder_free(&b);
    return NULL;
}
