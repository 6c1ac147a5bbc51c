/*
 * csv_decode.c -- the CSV reader's fields into values (csv_read.c, the top,
 * steps 1-2b and "Types"): a column's type inferred from its fields, the
 * converters (one loop per column and type), a morsel's decode, and late
 * materialization.
 */
#include "csv_impl.h"

/* ------------------------------------------------------------ inference */

/* tl_infer_widen with the common numeric shapes decided here: from null,
 * int64 or float64, "[-]digits" without a leading zero (at most 18 bytes;
 * at most 15 from float64, all exact in a double) stays int64 (float64
 * from float64) and "[-]digits.digits" in at most 16 bytes is float64 --
 * what tl_infer_widen answers for them, without parsing the number. */
static inline TlType infer_fast(TlType t, const char *s, size_t len)
{
    if (t == TL_TNULL || t == TL_TINT64 || t == TL_TFLOAT64) {
        size_t i = s[0] == '-', k = i;
        while (k < len && (unsigned)(unsigned char)s[k] - '0' <= 9) k++;
        if (k > i && !(s[i] == '0' && k > i + 1)) {
            if (k == len && len <= (t == TL_TFLOAT64 ? 15u : 18u))
                return t == TL_TFLOAT64 ? t : TL_TINT64;
            if (k + 1 < len && len <= 16 && s[k] == '.') {
                size_t j = k + 1;
                while (j < len && (unsigned)(unsigned char)s[j] - '0' <= 9) j++;
                if (j == len) return TL_TFLOAT64;
            }
        }
    }
    return tl_infer_widen(t, s, len);
}

/* Whether column c looks numeric for the "is string because" note: the
 * value at row is a number in some spelling, or one of the next few
 * non-null values is an exact one (so "NA" first in a column of numbers
 * is noted, a column of names is not). */
static bool numeric_nearby(const CsvReader *r, const CsvCursor *d, int c, int64_t row)
{
    const CsvField *f = d->cols[c] + row;
    double v;
    int seen = 0;
    if (tl_parse_f64((const char *)r->p + f->off, f->len, &v)) return true;
    for (int64_t k = row + 1; k < d->n_rows && seen < 16; k++) {
        TlType t;
        f = d->cols[c] + k;
        if (field_null(r, f) || (f->flags & F_ESCAPED)) continue;
        seen++;
        t = r->decimal_comma ? tl_infer_widen_dc(TL_TNULL, (const char *)r->p + f->off, f->len)
                             : infer_fast(TL_TNULL, (const char *)r->p + f->off, f->len);
        if (t == TL_TINT64 || t == TL_TFLOAT64) return true;
    }
    return false;
}

/* The narrowest type, starting from t, that holds every non-null value of
 * column c in the tokenized batch; *why = the row of the value that made a
 * numeric column a string (-1: none did, or the column is text; see
 * numeric_nearby).  Integers seen before a column turns float64 are
 * checked again as floats (a 17-digit integer is no exact double). */
TlType tl_csv_infer_column(const CsvReader *r, const CsvCursor *d, int c, TlType t,
                           int64_t *why)
{
    *why = -1;
    for (int64_t row = 0; row < d->n_rows && t != TL_TSTRING; row++) {
        const CsvField *f = d->cols[c] + row;
        TlType was = t;
        if (field_null(r, f)) continue;
        if ((f->flags & F_ESCAPED) || /* holds a quote */
            (r->quoted_as_string && (f->flags & F_QUOTED)))
            t = TL_TSTRING;
        else if (r->decimal_comma)
            t = tl_infer_widen_dc(t, (const char *)r->p + f->off, f->len);
        else
            t = infer_fast(t, (const char *)r->p + f->off, f->len);
        if (t == TL_TSTRING) {
            if (was == TL_TINT64 || was == TL_TFLOAT64 || numeric_nearby(r, d, c, row))
                *why = row;
        } else if (was == TL_TINT64 && t == TL_TFLOAT64 && row > 0) {
            row = -1; /* again from the first row, as float64 */
        }
    }
    return t;
}

/* --decimal-comma (tl_infer_widen_dc): s[0..len) with its comma read as
 * the decimal point, in a copy; a text holding a '.' is no number. */
static inline bool parse_f64_dc(const char *s, size_t len, double *out, bool exact)
{
    char buf[128];
    const char *comma;
    if (len >= sizeof buf || memchr(s, '.', len)) return false;
    memcpy(buf, s, len);
    comma = memchr(buf, ',', len);
    if (comma) buf[comma - buf] = '.';
    return parse_f64_gen(buf, len, len, out, exact);
}

/* A value of column c at row does not parse as the column's type: a data
 * error for a --schema column (or without hints); otherwise the widened
 * types of the batch's projected columns go to *widen (a new schema of
 * (name, wider type)) and the status is TL_ERR_RESTART.  Writes nothing
 * shared. */
static TlStatus value_misfit(const CsvReader *r, CsvCursor *d, int c, int64_t row,
                             TlSchema **widen, TlError *err)
{
    const CsvField *f = d->cols[c] + row;
    const TlField *fld = &r->schema.fields[c];
    TlSchema *w;
    TlType to = TL_TSTRING;
    if (r->fixed[c] || !r->hints) {
        size_t len;
        const char *s = tl_csv_field_text(r, d, f, &len);
        const char *knob = "";
        double v;
        if (!s) return tl_error_oom(err);
        /* a float spelled with the other decimal separator: the knob */
        if (fld->type == TL_TFLOAT64 && !r->decimal_comma && memchr(s, ',', len) &&
            parse_f64_dc(s, len, &v, false))
            knob = "; --decimal-comma reads a comma as the decimal point";
        else if (fld->type == TL_TFLOAT64 && r->decimal_comma && memchr(s, '.', len) &&
                 tl_parse_f64(s, len, &v))
            knob = "; --decimal-comma reads only a comma as the decimal point";
        return tl_error(err, TL_ERR_DATA, "%s:%lld:%d: %s is not a valid %s (column %s%s)",
                        r->name, (long long)d->row_line[row], c + 1,
                        tl_quote(s, len).s, tl_type_name(fld->type),
                        tl_quote_name(fld->name).s, knob);
    }
    {
        /* the note travels with the widen schema: the value that made
         * column c a string, if it became one */
        int64_t why;
        TlType t = tl_csv_infer_column(r, d, c, fld->type, &why);
        size_t len = 0;
        const char *s = NULL;
        if (t == fld->type) why = row; /* never loop: a string */
        if (t == fld->type || (t == TL_TSTRING && why >= 0)) {
            s = tl_csv_field_text(r, d, d->cols[c] + why, &len);
            if (!s) return tl_error_oom(err);
        }
        w = tl_widen_new(s ? fld->name : NULL, s ? d->row_line[why] : 0, s, len,
                         s && r->quoted_as_string && (d->cols[c][why].flags & F_QUOTED));
        if (!w) return tl_error_oom(err);
    }
    for (int k = 0; k < r->n_proj; k++) {
        int pc = r->proj[k];
        TlType old = r->schema.fields[pc].type, t;
        int64_t why;
        int have;
        if (r->fixed[pc]) continue;
        t = tl_csv_infer_column(r, d, pc, old, &why);
        if (pc == c && t == old) t = TL_TSTRING; /* never loop */
        if (t == old) continue;
        have = tl_schema_find(w, r->schema.fields[pc].name);
        if (have >= 0) {
            w->fields[have].type = t; /* projected twice: same type */
        } else if (tl_schema_add(w, r->schema.fields[pc].name, t, err) != TL_OK) {
            tl_schema_free(w);
            tl_free(w);
            return err->code;
        }
        if (pc == c) to = t;
    }
    *widen = w;
    return tl_error(err, TL_ERR_RESTART,
                    "%s:%lld: column %s holds a %s value; reading again",
                    r->name, (long long)d->row_line[row], tl_quote_name(fld->name).s,
                    tl_type_name(to));
}

/* ----------------------------------------------------------- conversion */

/* Fixed-width converters: parse each non-null field with PARSE(text, len,
 * room, out) into a CTYPE values buffer; room is how many input bytes can
 * be read from text on (at least len).  On a misfit *bad = row and no
 * array is made. */
#define DEFINE_CONVERT(NAME, TYPE, CTYPE, PARSE)                               \
    static TlStatus NAME(const CsvReader *r, CsvCursor *d, int c,              \
                         TlArray **out, int64_t *bad, TlError *err)            \
    {                                                                          \
        const int64_t n = d->n_rows;                                           \
        const CsvField *f = d->cols[c];                                        \
        TlValidity v = {NULL, 0};                                              \
        TlBuf *values = tl_buf_new((size_t)n * sizeof(CTYPE), false);          \
        CTYPE *vals;                                                           \
        if (!values) return tl_error_oom(err);                                 \
        vals = (CTYPE *)values->data;                                          \
        for (int64_t row = 0; row < n; row++, f++) {                           \
            if (field_null(r, f)) {                                            \
                vals[row] = 0;                                                 \
                if (!tl_validity_null(&v, n, row)) goto oom;                   \
                continue;                                                      \
            }                                                                  \
            if (!PARSE((const char *)r->p + f->off, f->len, r->size - f->off,  \
                       &vals[row])) {                                          \
                *bad = row;                                                    \
                tl_validity_release(values, &v);                               \
                return TL_OK;                                                  \
            }                                                                  \
        }                                                                      \
        return tl_validity_array(TYPE, n, values, &v, out, err);               \
    oom:                                                                       \
        tl_validity_release(values, &v);                                       \
        return tl_error_oom(err);                                              \
    }

/* The parsers (parse_i64_gen, parse_f64_gen, ...): csv_numbers.h. */
DEFINE_CONVERT(convert_i64, TL_TINT64, int64_t, parse_i64_exact)
DEFINE_CONVERT(convert_i64_any, TL_TINT64, int64_t, parse_i64_any)

#if CSV_X86
/* Bytes 0..15 0xFF, then 16 zero bytes: a 16-byte load at 16 - k gives a
 * mask of the first k bytes (0 <= k <= 16). */
static const uint8_t f64_ones[32] = {
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255};

/* [-]digits[.digits] in len <= 16 bytes, the 16 bytes ending at s + len
 * readable, parsed with SSE: one load ending with the field (so its last
 * byte is lane 15), byte masks of the digits and the dot check the shape
 * (one dot at most, neither first nor last: ".5" and "5." go to the general
 * path, which decides them), the bytes before the dot move up one lane,
 * the lanes before the first digit become 0, and four multiply-adds make
 * the integer m of the digits (Lemire's SIMD digit combination).  True
 * with *m < 2^52 and *div = 10^frac, negated for a leading '-': then
 * m / div (both exact) is the correctly rounded value, as strtod's
 * (Clinger's fast path), "-0" giving -0.0.  False: not this shape (the
 * caller tries the others).  kz, k9, kd: every byte '0', 9, '.'. */
AVX2_ATTR static inline bool f64_sse(const char *s, size_t len, double *m_out,
                                     double *div, __m128i kz, __m128i k9, __m128i kd)
{
    static const double p10[2][16] = {
        {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13,
         1e14, 1e15},
        {-1e0, -1e1, -1e2, -1e3, -1e4, -1e5, -1e6, -1e7, -1e8, -1e9, -1e10, -1e11,
         -1e12, -1e13, -1e14, -1e15}};
    const unsigned neg = s[0] == '-';
    const unsigned first = 16 - (unsigned)len; /* the field's first lane */
    const unsigned fm = 0xFFFFu << first & 0xFFFFu;
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + len - 16));
    __m128i t = _mm_sub_epi8(x, kz);
    __m128i below, lead;
    unsigned dig = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(t, k9), t));
    unsigned dot = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, kd));
    unsigned nd, frac, q;
    uint64_t m, e;
    dot &= fm;
    if (((dig | dot | neg << first) & fm) != fm || (dot & (dot - 1)) ||
        (dot & (1u << (first + neg) | 0x8000u)))
        return false;
    nd = (unsigned)len - neg - (dot != 0);
    if (nd == 0) return false; /* "-" */
    q = dot ? (unsigned)__builtin_ctz(dot) + 1 : 0; /* lanes to move up */
    frac = dot ? 16 - q : 0;
    below = _mm_loadu_si128((const __m128i *)(const void *)(f64_ones + 16 - q));
    lead = _mm_loadu_si128((const __m128i *)(const void *)(f64_ones + nd));
    t = _mm_or_si128(_mm_andnot_si128(below, t), _mm_and_si128(below, _mm_slli_si128(t, 1)));
    t = _mm_andnot_si128(lead, t); /* lead: the first 16 - nd lanes */
    t = _mm_maddubs_epi16(t, _mm_setr_epi8(10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1,
                                           10, 1, 10, 1));
    t = _mm_madd_epi16(t, _mm_setr_epi16(100, 1, 100, 1, 100, 1, 100, 1));
    t = _mm_packus_epi32(t, t);
    t = _mm_madd_epi16(t, _mm_setr_epi16(10000, 1, 10000, 1, 10000, 1, 10000, 1));
    e = (uint64_t)_mm_cvtsi128_si64(t);
    m = (e & 0xFFFFFFFFu) * 100000000u + (e >> 32);
    if (m >= ((uint64_t)1 << 52)) return false;
    *m_out = (double)(int64_t)m;
    *div = p10[neg][frac];
    return true;
}

/* convert_f64 in the AVX2 mode, in two passes so that no division waits in
 * the parsing loop: the first parses each field, f64_sse's shape as m and
 * a divisor (m into the values, the divisor into d->fdiv), anything else
 * with parse_f64_gen (its value, divisor 1; a null: 0 and 1); the second
 * divides four values at a time.  x / 1 is x, so the values are
 * parse_f64_gen's bit for bit.  exact: an inferred column (infer.h), where
 * a leading zero is a misfit. */
AVX2_ATTR static TlStatus convert_f64_sse(const CsvReader *r, CsvCursor *d, int c,
                                          bool exact, TlArray **out, int64_t *bad,
                                          TlError *err)
{
    const int64_t n = d->n_rows;
    const CsvField *f = d->cols[c];
    TlValidity v = {NULL, 0};
    TlBuf *values;
    double *vals, *dv;
    int64_t row;
    size_t null_len;
    __m128i kz, k9, kd;
    if (d->fdiv_cap < n) {
        tl_free(d->fdiv);
        d->fdiv_cap = 0;
        d->fdiv = tl_malloc((size_t)n * sizeof *d->fdiv);
        if (!d->fdiv) return tl_error_oom(err);
        d->fdiv_cap = n;
    }
    dv = d->fdiv;
    values = tl_buf_new((size_t)n * sizeof(double), false);
    if (!values) return tl_error_oom(err);
    vals = (double *)values->data;
    /* the null text's length: such a field goes the field_null way */
    null_len = r->null_text ? r->null_len : SIZE_MAX;
    kz = _mm_set1_epi8('0');
    k9 = _mm_set1_epi8(9);
    kd = _mm_set1_epi8('.');
    /* opaque, so that the compiler keeps them in registers rather than
     * building them again in every iteration */
    __asm__("" : "+x"(kz), "+x"(k9), "+x"(kd));
    for (row = 0; row < n; row++, f++) {
        const char *s = (const char *)r->p + f->off;
        const uint32_t len = f->len;
        if (len - 1 < 16 && f->off + len >= 16 && len != null_len &&
            !(exact && tl_leading_zero(s, len)) &&
            f64_sse(s, len, &vals[row], &dv[row], kz, k9, kd))
            continue;
        dv[row] = 1.0;
        if (field_null(r, f)) {
            vals[row] = 0;
            if (!tl_validity_null(&v, n, row)) goto oom;
            continue;
        }
        if (!parse_f64_gen(s, len, r->size - f->off, &vals[row], exact)) {
            *bad = row;
            tl_validity_release(values, &v);
            return TL_OK;
        }
    }
    for (row = 0; row + 4 <= n; row += 4)
        _mm256_storeu_pd(vals + row, _mm256_div_pd(_mm256_loadu_pd(vals + row),
                                                   _mm256_loadu_pd(dv + row)));
    for (; row < n; row++) vals[row] /= dv[row];
    return tl_validity_array(TL_TFLOAT64, n, values, &v, out, err);
oom:
    tl_validity_release(values, &v);
    return tl_error_oom(err);
}
#endif

/* The general parsers, in the converters' shape. */
static inline bool parse_date_any(const char *s, size_t len, size_t room, int32_t *out)
{
    (void)room;
    return tl_parse_date(s, len, out);
}

static inline bool parse_ts_any(const char *s, size_t len, size_t room, int64_t *out)
{
    (void)room;
    return tl_parse_timestamp(s, len, out);
}

static inline bool parse_tz_any(const char *s, size_t len, size_t room, int64_t *out)
{
    (void)room;
    return tl_parse_timestamptz(s, len, out);
}

DEFINE_CONVERT(convert_f64_base, TL_TFLOAT64, double, parse_f64_inline)
DEFINE_CONVERT(convert_f64_any, TL_TFLOAT64, double, parse_f64_any)

static inline bool parse_f64_dc_exact(const char *s, size_t len, size_t room, double *out)
{
    (void)room;
    return parse_f64_dc(s, len, out, true);
}

static inline bool parse_f64_dc_any(const char *s, size_t len, size_t room, double *out)
{
    (void)room;
    return parse_f64_dc(s, len, out, false);
}

DEFINE_CONVERT(convert_f64_dc, TL_TFLOAT64, double, parse_f64_dc_exact)
DEFINE_CONVERT(convert_f64_dc_any, TL_TFLOAT64, double, parse_f64_dc_any)

/* The float64 converter: f64_sse first in the AVX2 mode (see
 * TALLY_TEST_CSV_SCAN; the other modes keep the scalar path, and the tests
 * compare them); with --decimal-comma, parse_f64_dc. */
static TlStatus convert_f64(const CsvReader *r, CsvCursor *d, int c, TlArray **out,
                            int64_t *bad, TlError *err)
{
    if (r->decimal_comma)
        return r->fixed[c] ? convert_f64_dc_any(r, d, c, out, bad, err)
                           : convert_f64_dc(r, d, c, out, bad, err);
#if CSV_X86
    if (tl_csv_avx2_mode(r))
        return convert_f64_sse(r, d, c, !r->fixed[c], out, bad, err);
#endif
    return r->fixed[c] ? convert_f64_any(r, d, c, out, bad, err)
                       : convert_f64_base(r, d, c, out, bad, err);
}
DEFINE_CONVERT(convert_date, TL_TDATE, int32_t, parse_date_any)
DEFINE_CONVERT(convert_ts, TL_TTIMESTAMP, int64_t, parse_ts_any)
DEFINE_CONVERT(convert_tz, TL_TTIMESTAMPTZ, int64_t, parse_tz_any)

static TlStatus convert_bool(const CsvReader *r, CsvCursor *d, int c,
                             TlArray **out, int64_t *bad, TlError *err)
{
    const int64_t n = d->n_rows;
    const CsvField *f = d->cols[c];
    TlValidity v = {NULL, 0};
    TlBuf *values = tl_buf_new(tl_bitmap_bytes(n), true);
    if (!values) return tl_error_oom(err);
    for (int64_t row = 0; row < n; row++, f++) {
        bool b;
        if (field_null(r, f)) {
            if (!tl_validity_null(&v, n, row)) goto oom;
            continue;
        }
        if (!tl_parse_bool((const char *)r->p + f->off, f->len, &b)) {
            *bad = row;
            tl_validity_release(values, &v);
            return TL_OK;
        }
        if (b) tl_bit_set(values->data, row);
    }
    return tl_validity_array(TL_TBOOL, n, values, &v, out, err);
oom:
    tl_validity_release(values, &v);
    return tl_error_oom(err);
}

static TlStatus convert_null(const CsvReader *r, CsvCursor *d, int c,
                             TlArray **out, int64_t *bad, TlError *err)
{
    const CsvField *f = d->cols[c];
    for (int64_t row = 0; row < d->n_rows; row++, f++) {
        if (!field_null(r, f)) {
            *bad = row;
            return TL_OK;
        }
    }
    *out = tl_array_new_null(TL_TNULL, d->n_rows);
    if (!*out) return tl_error_oom(err);
    return TL_OK;
}

/* The buffer long views of this batch point into: the whole input when it
 * is addressable with 32-bit offsets, else a slice from the batch start. */
static TlStatus ensure_window(const CsvReader *r, CsvCursor *d, TlError *err)
{
    if (d->window) return TL_OK;
    if (r->size <= UINT32_MAX) {
        d->window = tl_buf_retain(r->input);
        d->window_base = 0;
    } else {
        d->window = tl_buf_slice(r->input, d->batch_start,
                                 d->batch_end - d->batch_start);
        d->window_base = d->batch_start;
    }
    if (!d->window) return tl_error_oom(err);
    return TL_OK;
}

static TlStatus convert_str(const CsvReader *r, CsvCursor *d, int c,
                            TlArray **out, int64_t *bad, TlError *err)
{
    const int64_t n = d->n_rows;
    const CsvField *f = d->cols[c];
    TlValidity v = {NULL, 0};
    TlCopyBlock blk = {NULL, 0, 0};
    bool use_window = false;
    TlBuf **data = NULL;
    uint32_t n_data = 0, win_idx, blk_idx;
    TlView *views;
    TlBuf *values = tl_buf_new((size_t)n * sizeof(TlView), false);
    (void)bad;
    if (!values) return tl_error_oom(err);
    views = (TlView *)values->data;
    /* Window index 0 and block index 1 are fixed up below when only the
     * block is used. */
    win_idx = 0;
    blk_idx = 1;
    if (ensure_window(r, d, err) != TL_OK) goto fail;
    for (int64_t row = 0; row < n; row++, f++) {
        const uint8_t *s = r->p + f->off;
        uint32_t len = f->len;
        TlView *vw = &views[row];
        vw->w[0] = vw->w[1] = 0;
        if (field_null(r, f)) {
            if (!tl_validity_null(&v, n, row)) goto oom;
            continue;
        }
        if (!(f->flags & F_ESCAPED)) {
            vw->in.len = len;
            if (len <= TL_VIEW_INLINE) {
                if (CSV_LITTLE && f->off + TL_VIEW_INLINE <= r->size) {
                    /* fixed-size loads, the bytes past len masked off */
                    uint64_t a;
                    uint32_t b;
                    memcpy(&a, s, 8);
                    memcpy(&b, s + 8, 4);
                    if (len < 8) {
                        a &= ((uint64_t)1 << (8 * len)) - 1;
                        b = 0;
                    } else if (len < 12) {
                        b &= ((uint32_t)1 << (8 * (len - 8))) - 1;
                    }
                    memcpy(vw->in.data, &a, 8);
                    memcpy(vw->in.data + 8, &b, 4);
                } else {
                    memcpy(vw->in.data, s, len);
                }
                continue;
            }
            if (f->off - d->window_base + len <= UINT32_MAX) {
                memcpy(vw->out.prefix, s, 4);
                vw->out.buf = win_idx;
                vw->out.off = (uint32_t)(f->off - d->window_base);
                use_window = true;
                continue;
            }
            if (!tl_copy_block_reserve(&blk, len)) goto oom;
            memcpy(blk.data + blk.used, s, len);
        } else {
            /* unescape: a doubled quote (or an escaped character) is one */
            if (!tl_copy_block_reserve(&blk, len)) goto oom;
            len = (uint32_t)tl_csv_unescape(r, s, len, blk.data + blk.used);
            vw->in.len = len;
            if (len <= TL_VIEW_INLINE) {
                memcpy(vw->in.data, blk.data + blk.used, len);
                continue;
            }
        }
        if (blk.used + len > UINT32_MAX) {
            tl_error(err, TL_ERR_DATA,
                     "%s:%lld: too much quoted text in one batch (over 4 GiB)",
                     r->name, (long long)d->row_line[row]);
            goto fail;
        }
        memcpy(vw->out.prefix, blk.data + blk.used, 4);
        vw->out.buf = blk_idx;
        vw->out.off = (uint32_t)blk.used;
        blk.used += len;
    }
    if (tl_copy_block_buffers(&blk, use_window ? d->window : NULL, views, n, &data,
                              &n_data, err) != TL_OK)
        goto fail;
    tl_free(blk.data);
    *out = tl_array_new(TL_TSTRING, n, values, v.buf, v.null_count, data, n_data);
    if (!*out) return tl_error_oom(err);
    return TL_OK;
oom:
    tl_error_oom(err);
fail:
    tl_free(blk.data);
    tl_buf_release(values);
    tl_buf_release(v.buf);
    return err->code;
}

typedef TlStatus (*ConvertFn)(const CsvReader *, CsvCursor *, int, TlArray **,
                              int64_t *, TlError *);

static ConvertFn converter(TlType t, bool fixed)
{
    switch (t) {
    case TL_TBOOL: return convert_bool;
    case TL_TINT64: return fixed ? convert_i64_any : convert_i64;
    case TL_TFLOAT64: return convert_f64; /* it looks at r->fixed */
    case TL_TSTRING: return convert_str;
    case TL_TDATE: return convert_date;
    case TL_TTIMESTAMP: return convert_ts;
    case TL_TTIMESTAMPTZ: return convert_tz;
    default: return convert_null;
    }
}

/* Convert column c of the tokenized rows as type t: numbers in an inferred
 * column only when exact (infer.h), in a --schema column whenever they
 * parse; with --quoted-as-string a quoted value in an inferred column that
 * is not a string is a misfit (*bad), as inference would have decided. */
static TlStatus convert_col(const CsvReader *r, CsvCursor *d, int c, TlType t,
                            TlArray **out, int64_t *bad, TlError *err)
{
    if (r->quoted_as_string && !r->fixed[c] && t != TL_TSTRING) {
        const CsvField *f = d->cols[c];
        for (int64_t row = 0; row < d->n_rows; row++)
            if (f[row].flags & F_QUOTED) {
                *bad = row;
                return TL_OK;
            }
    }
    return converter(t, r->fixed[c])(r, d, c, out, bad, err);
}
/* The reader decoder dd reads morsel m through (see the top, "copies"):
 * for a mapped file of two or more columns, a copy of r whose p addresses
 * the morsel and TL_COPY_PAD bytes either side read into dd->copy
 * (tl_input_copy) and whose size ends with them, so every read of p stays
 * in the copy; r itself otherwise (or when the copy fails). */
static const CsvReader *morsel_view(const CsvReader *r, CsvDecoder *dd,
                                    const TlMorsel *m)
{
    const uint8_t *p = r->p;
    size_t hi = tl_input_size(r->input);
    dd->viewing = false;
    if (hi != r->size) {
        /* a stream of unknown size that ended: r->size is the address
         * space reserved for it, the view ends at its end */
    } else if (r->n_cols < 2 ||
               !(p = tl_input_copy(r->base.ctx, r->input, &dd->copy, m->begin, m->end, &hi))) {
        return r;
    }
    /* the fields fixed after open, name to proj_schema: base (the stats)
     * and the splitter's, which the consumer writes meanwhile, are not
     * read by decoders */
    memcpy((char *)&dd->view + offsetof(CsvReader, name),
           (const char *)r + offsetof(CsvReader, name),
           offsetof(CsvReader, split_pos) - offsetof(CsvReader, name));
    dd->view.p = p;
    dd->view.size = hi;
    dd->viewing = true;
    return &dd->view;
}


/* Tokenize morsel m into d: every projected column's fields (step 1), or
 * with skip (n_cols flags) those of the projected columns it does not mark.
 * Thread-safe for distinct decoders: writes only d. */
static TlStatus tokenize_morsel(const CsvReader *r, CsvCursor *d, const TlMorsel *m,
                                const bool *skip, TlError *err)
{
    bool want_stack[64], *want = want_stack;
    int64_t bound, cap;
    TlStatus st = TL_OK;
    if (r->n_cols > 64) {
        want = tl_calloc((size_t)r->n_cols, sizeof *want);
        if (!want) return tl_error_oom(err);
    } else {
        memset(want_stack, 0, sizeof want_stack);
    }
    for (int k = 0; k < r->n_proj; k++)
        if (!skip || !skip[r->proj[k]]) want[r->proj[k]] = true;
    /* a record takes at least n_cols bytes but the last: a bound on rows
     * (the split limit is another, but any range of whole records decodes) */
    bound = (int64_t)((m->end - m->begin) / (size_t)r->n_cols) + 1;
    cap = (int64_t)((m->end - m->begin) / (size_t)r->avg_record) * 9 / 8 + 16;
    if (cap > bound) cap = bound;
    if (cap < d->cap) cap = d->cap < bound ? d->cap : bound;
    tl_csv_cursor_seek(d, m->begin, m->end, m->line);
    d->keep_pos = skip != NULL;
    d->n_store = 0; /* nothing kept across morsels */
    st = tl_csv_cursor_reserve(r, d, want, cap, err);
    if (st != TL_OK) goto done;
    tl_csv_cursor_store(r, d, want);
    for (;;) {
        int64_t lim = d->cap < bound ? d->cap : bound;
        st = tl_csv_tokenize(r, d, lim, err);
        if (st != TL_OK) goto done;
        if (d->pos >= d->end || d->n_rows < lim) break;
        if (lim >= bound) {
            /* only empty lines can be left (split counts them as records) */
            size_t j = d->pos;
            while (j < d->end && (r->p[j] == '\n' || r->p[j] == '\r')) j++;
            if (j < d->end)
                st = tl_error(err, TL_ERR_DATA, "%s:%lld: internal error: morsel "
                              "holds more than %lld records", r->name,
                              (long long)d->line, (long long)bound);
            break;
        }
        cap = d->cap * 2 < bound ? d->cap * 2 : bound;
        st = tl_csv_cursor_reserve(r, d, want, cap, err);
        if (st != TL_OK) goto done;
    }
    /* A guessed end (guess_cut) is the careful one when no quote lies in
     * the morsel (every line end then ends a record) and it has fewer line
     * ends, so records, than a morsel may hold. */
    if (m->line < 0 && (d->saw_quote || d->line - m->line >= r->max_rows))
        st = tl_error(err, TL_ERR_DATA, "%s: internal error: a guessed morsel end "
                      "was not split again", r->name);
done:
    if (want != want_stack) tl_free(want);
    return st;
}

/* Convert every projected column of the tokenized rows, in projection
 * order (step 2): a batch in *out, or the first misfit's error/restart. */
static TlStatus convert_all(const CsvReader *r, CsvCursor *d, TlBatch **out,
                            TlSchema **widen, TlError *err)
{
    TlBatch *b = tl_batch_new(&r->proj_schema, r->n_proj, d->n_rows);
    *out = NULL;
    if (!b) return tl_error_oom(err);
    for (int k = 0; k < r->n_proj; k++) {
        int c = r->proj[k];
        int64_t bad = -1;
        TlStatus st = convert_col(r, d, c, r->schema.fields[c].type, &b->cols[k], &bad, err);
        if (st == TL_OK && bad >= 0) st = value_misfit(r, d, c, bad, widen, err);
        if (st != TL_OK) {
            tl_batch_free(b);
            return st;
        }
    }
    *out = b;
    return TL_OK;
}

/* The end of a morsel's decoding: its long views hold their own window
 * reference, so the cursor's goes; the pages it covered go back (step 3). */
static void morsel_end(const CsvReader *r, CsvCursor *d, bool pages)
{
    tl_buf_release(d->window);
    d->window = NULL;
    if (pages) tl_input_drop(r->input, d->late_begin, d->late_end);
    d->late_open = false;
}

/* Decode one morsel into a batch of the projected columns (steps 1, 2).
 * Thread-safe for distinct decoders: writes only d and its outputs. */
TlStatus tl_csv_decode(TlReader *base, TlDecoder *dbase, const TlMorsel *m,
                           TlBatch **out, TlSchema **widen, TlError *err)
{
    const CsvReader *r = (const CsvReader *)base;
    CsvCursor *d = &((CsvDecoder *)dbase)->cur;
    TlStatus st;
    *out = NULL;
    *widen = NULL;
    d->late_open = false;
    if (m->end <= m->begin || r->n_cols == 0) return TL_OK;
    r = morsel_view(r, (CsvDecoder *)dbase, m);
    d->late_begin = m->begin;
    d->late_end = m->end;
    st = tokenize_morsel(r, d, m, NULL, err);
    if (st == TL_OK && d->n_rows > 0) st = convert_all(r, d, out, widen, err);
    morsel_end(r, d, st == TL_OK);
    return st;
}

/* ------------------------------------------------------------ type pass */

/* Whether an int64 column's values of the tokenized batch are all exact
 * float64 too (infer.h: a column that becomes float64 elsewhere checks its
 * integers again as floats); *row: the first that is not.  Up to 15 digits
 * an integer always is one. */
static bool ints_are_floats(const CsvReader *r, const CsvCursor *d, int c, int64_t *row)
{
    for (int64_t k = 0; k < d->n_rows; k++) {
        const CsvField *f = d->cols[c] + k;
        const char *s = (const char *)r->p + f->off;
        TlType t;
        if (f->len <= 15 || field_null(r, f)) continue;
        t = r->decimal_comma ? tl_infer_widen_dc(TL_TFLOAT64, s, f->len)
                             : tl_infer_widen(TL_TFLOAT64, s, f->len);
        if (t != TL_TFLOAT64) {
            *row = k;
            return false;
        }
    }
    return true;
}

/* The value at row of column c as a note of out (an owned copy). */
static TlStatus note_value(const CsvReader *r, CsvCursor *d, int c, int64_t row,
                           TlColTypes *out, TlError *err)
{
    size_t len;
    const char *s = tl_csv_field_text(r, d, d->cols[c] + row, &len);
    TlColNote *n;
    if (!s || !(n = tl_malloc(sizeof *n + len + 1))) return tl_error_oom(err);
    memcpy(n->text, s, len);
    n->text[len] = '\0';
    n->len = len;
    n->line = d->row_line[row];
    n->quoted = r->quoted_as_string && (d->cols[c][row].flags & F_QUOTED);
    out->note = n;
    return TL_OK;
}

/* See csv_impl.h: the morsel tokenized as a decode does it (the same data
 * errors), then each projected inferred column's type from its fields
 * (tl_csv_infer_column from no value), nothing converted. */
TlStatus tl_csv_morsel_types(TlReader *base, TlDecoder *dbase, const TlMorsel *m,
                             TlColTypes *out, int64_t *rows, const char **file,
                             TlError *err)
{
    const CsvReader *r = (const CsvReader *)base;
    CsvCursor *d = &((CsvDecoder *)dbase)->cur;
    TlStatus st;
    *rows = 0;
    *file = r->name;
    /* only the projected columns are tokenized and inferred: the driver
     * leaves out those no value can change (strings, fixed) */
    for (int c = 0; c < r->n_cols; c++) {
        memset(&out[c], 0, sizeof out[c]);
        out[c].fixed = true;
    }
    for (int k = 0; k < r->n_proj; k++) out[r->proj[k]].fixed = r->fixed[r->proj[k]];
    d->late_open = false;
    if (m->end <= m->begin || r->n_cols == 0) return TL_OK;
    r = morsel_view(r, (CsvDecoder *)dbase, m);
    d->late_begin = m->begin;
    d->late_end = m->end;
    st = tokenize_morsel(r, d, m, NULL, err);
    for (int k = 0; st == TL_OK && k < r->n_proj; k++) {
        int c = r->proj[k];
        int64_t why;
        if (out[c].fixed) continue;
        out[c].type = (uint8_t)tl_csv_infer_column(r, d, c, TL_TNULL, &why);
        if (out[c].type == TL_TSTRING && why >= 0)
            st = note_value(r, d, c, why, &out[c], err);
        else if (out[c].type == TL_TINT64 && !ints_are_floats(r, d, c, &why)) {
            out[c].not_float = true;
            st = note_value(r, d, c, why, &out[c], err);
        }
    }
    *rows = d->n_rows;
    morsel_end(r, d, st == TL_OK);
    return st;
}

/* ------------------------------------------------ late materialization
 *
 * (format.h, "late materialization")  tl_csv_decode_early tokenizes the
 * morsel as tl_csv_decode does and converts the columns the caller asked for
 * first, plus every column whose type has no cheap check (bool, date,
 * timestamp, null); int64, float64 and string columns may wait.  The
 * fields stay in the cursor.  tl_csv_decode_rest then converts the waiting
 * columns for the selected rows only, and checks the other rows' fields
 * of int64 and float64 columns with plain_i64/plain_f64: a field they pass
 * converts for sure (they accept a subset of what the converters accept),
 * so the morsel as a whole would have decoded.  Any doubt (a field the
 * check does not pass, a selected value that misfits) and any misfit of an
 * early column falls back to convert_all over the whole morsel: it fails
 * exactly as tl_csv_decode would (same error, same widened types), or, when
 * the doubt was needless, gives the batch the rows are taken from.  So
 * results, types, restarts and --schema errors are those of tl_csv_decode;
 * only the "over 4 GiB of quoted text in one batch" limit is checked on
 * the rows converted.  Pages are given back once the rest is converted. */

/* Whether a column of type t may wait for tl_csv_decode_rest (float64 not
 * with --decimal-comma: the checks take "1.5", which parse_f64_dc
 * refuses). */
static bool late_type(const CsvReader *r, TlType t)
{
    return t == TL_TINT64 || (t == TL_TFLOAT64 && !r->decimal_comma) || t == TL_TSTRING;
}

/* See format.h: decode morsel m converting the early columns (and those
 * late_type refuses); the rest are NULL in *out. */
/* Tokenize the open morsel again storing every projected column, when
 * decode_early left some out (the rows come out the same). */
static TlStatus store_all(const CsvReader *r, CsvCursor *d, TlError *err)
{
    if (d->stored_all) return TL_OK;
    TL_TRY(tokenize_morsel(r, d, &d->late_m, NULL, err));
    d->stored_all = true;
    return TL_OK;
}

/* The fields of column c of rows sel[0..n) into d->gat / d->gat_line, by
 * parsing those records again (they parsed before: anything else is an
 * internal error). */
static TlStatus reparse_fields(const CsvReader *r, CsvCursor *d, int c,
                               const uint32_t *sel, int64_t n, TlError *err)
{
    for (int64_t j = 0; j < n; j++) {
        size_t pos = d->row_pos[sel[j]];
        int64_t line = d->row_line[sel[j]];
        int found = 0;
        TL_TRY(tl_csv_parse_record(r, &pos, &line, d->rec, 1, r->n_cols, &found, err));
        if (found != r->n_cols && (found > r->n_cols || r->ragged != TL_RAGGED_PAD))
            return tl_error(err, TL_ERR_DATA, "%s:%lld: internal error: record "
                            "read again differs", r->name,
                            (long long)d->row_line[sel[j]]);
        d->gat[j] = c < found ? d->rec[c] : (CsvField){d->row_pos[sel[j]], 0, 0};
        d->gat_line[j] = d->row_line[sel[j]];
    }
    return TL_OK;
}

TlStatus tl_csv_decode_early(TlReader *base, TlDecoder *dbase,
                                 const TlMorsel *m, const bool *early, int n_early,
                                 int64_t few, TlBatch **out, TlSchema **widen,
                                 TlError *err)
{
    const CsvReader *r = (const CsvReader *)base;
    CsvCursor *d = &((CsvDecoder *)dbase)->cur;
    TlBatch *b = NULL;
    TlStatus st;
    *out = NULL;
    *widen = NULL;
    d->late_open = false;
    if (m->end <= m->begin || r->n_cols == 0) return TL_OK;
    r = morsel_view(r, (CsvDecoder *)dbase, m);
    d->late_begin = m->begin;
    d->late_end = m->end;
    if (!d->chk) {
        d->chk = tl_calloc((size_t)r->n_cols + 1, 1);
        d->skip = tl_calloc((size_t)r->n_cols + 1, sizeof *d->skip);
        d->chk_cols = tl_malloc(((size_t)r->n_cols + 1) * sizeof *d->chk_cols);
        if (!d->chk || !d->skip || !d->chk_cols) return tl_error_oom(err);
    }
    /* the tokenizer checks the fields of the int64 and float64 columns
     * that wait (every row: the rest may convert only some) */
    memset(d->chk, 0, (size_t)r->n_cols);
    d->n_chk = 0;
    d->doubt = false;
    for (int k = 0; k < r->n_proj; k++) {
        int c = r->proj[k];
        TlType t = r->schema.fields[c].type;
        if ((k < n_early && early[k]) || d->chk[c]) continue;
        if (late_type(r, t) && t != TL_TSTRING) {
            d->chk[c] = t == TL_TINT64 ? 1 : 2;
            d->chk_cols[d->n_chk++] = c;
        }
    }
    if (!d->runs) {
        d->runs = tl_malloc(((size_t)r->n_cols + 1) * 2 * sizeof *d->runs);
        if (!d->runs) return tl_error_oom(err);
    }
    d->n_runs = 0;
    for (int c = 0; c < r->n_cols; c++) {
        if (d->chk[c] != 1) continue;
        if (d->n_runs && d->runs[2 * d->n_runs - 1] == c - 1) {
            d->runs[2 * d->n_runs - 1] = c;
        } else {
            d->runs[2 * d->n_runs] = c;
            d->runs[2 * d->n_runs + 1] = c;
            d->n_runs++;
        }
    }
    /* a column both early and waiting (projected twice) is converted */
    for (int k = 0; k < r->n_proj && d->n_chk; k++)
        if (k < n_early && early[k] && d->chk[r->proj[k]]) d->doubt = true;
    /* with few rows wanted, the waiting columns are not even stored:
     * decode_rest finds the selected rows' fields again (reparse_fields) */
    memset(d->skip, 0, (size_t)r->n_cols);
    d->stored_all = true;
    if (few >= 0) {
        for (int k = 0; k < r->n_proj; k++)
            if (d->chk[r->proj[k]] || r->schema.fields[r->proj[k]].type == TL_TSTRING)
                d->skip[r->proj[k]] = true;
        for (int k = 0; k < r->n_proj; k++)
            if ((k < n_early && early[k]) || !late_type(r, r->schema.fields[r->proj[k]].type))
                d->skip[r->proj[k]] = false;
        for (int c = 0; c < r->n_cols; c++) d->stored_all &= !d->skip[c];
    }
    d->late_m = *m;
    /* checking costs every row: worth it when few rows will be converted
     * (else decode_rest checks only the rows it does not convert) */
    d->checked = few >= 0;
    if (!d->checked) d->n_chk = 0;
    st = tokenize_morsel(r, d, m, d->stored_all ? NULL : d->skip, err);
    d->n_chk = 0;
    if (st != TL_OK || d->n_rows == 0) {
        morsel_end(r, d, st == TL_OK);
        return st;
    }
    b = tl_batch_new(&r->proj_schema, r->n_proj, d->n_rows);
    if (!b) {
        morsel_end(r, d, false);
        return tl_error_oom(err);
    }
    for (int k = 0; k < r->n_proj; k++) {
        int c = r->proj[k];
        TlType t = r->schema.fields[c].type;
        int64_t bad = -1;
        if (k < n_early && !early[k] && late_type(r, t)) continue;
        if (k >= n_early && late_type(r, t)) continue;
        st = convert_col(r, d, c, t, &b->cols[k], &bad, err);
        if (st != TL_OK) goto fail;
        if (bad >= 0) {
            /* tl_csv_decode's outcome, whatever it is */
            tl_batch_free(b);
            b = NULL;
            st = store_all(r, d, err);
            if (st == TL_OK) st = convert_all(r, d, &b, widen, err);
            if (st != TL_OK) goto fail;
            break;
        }
    }
    d->late_open = true;
    *out = b;
    return TL_OK;
fail:
    tl_batch_free(b);
    morsel_end(r, d, false);
    return st;
}

/* Whether a field of a column of type t (int64 or float64) that is not
 * converted would convert: null, or passes the check. */
static inline bool field_plain(const CsvReader *r, const CsvField *f, TlType t)
{
    return chk_field(r, f, t == TL_TINT64 ? 1 : 2);
}

/* Rows sel[0..n) of column c's fields into d->gat (and their lines into
 * d->gat_line); the other rows' fields are checked when c is an int64 or
 * float64 column.  false: a field did not pass the check. */
static bool gather_fields(const CsvReader *r, CsvCursor *d, int c, TlType t,
                          const uint32_t *sel, int64_t n)
{
    const CsvField *f = d->cols[c];
    const int64_t rows = d->n_rows;
    int64_t row = 0;
    if (t == TL_TSTRING) {
        for (int64_t j = 0; j < n; j++) {
            d->gat[j] = f[sel[j]];
            d->gat_line[j] = d->row_line[sel[j]];
        }
        return true;
    }
    if (d->checked && !d->doubt) {
        /* the tokenizer checked the other rows' fields */
        for (int64_t j = 0; j < n; j++) {
            d->gat[j] = f[sel[j]];
            d->gat_line[j] = d->row_line[sel[j]];
        }
        return true;
    }
    for (int64_t j = 0; j <= n; j++) {
        int64_t stop = j < n ? (int64_t)sel[j] : rows;
        if (t == TL_TINT64) {
            for (; row < stop; row++)
                if ((!plain_i64_fast(r->p + f[row].off, f[row].len,
                                     r->size - f[row].off) ||
                     (r->quoted_as_string && (f[row].flags & F_QUOTED))) &&
                    !field_null(r, &f[row]))
                    return false;
        } else {
            for (; row < stop; row++)
                if (!field_plain(r, &f[row], t)) return false;
        }
        if (j < n) {
            d->gat[j] = f[row];
            d->gat_line[j] = d->row_line[row];
            row++;
        }
    }
    return true;
}

/* See format.h: the morsel decoded early by d, rows sel[0..n) (all when
 * n < 0), with every projected column. */
TlStatus tl_csv_decode_rest(TlReader *base, TlDecoder *dbase,
                                const TlBatch *early, const uint32_t *sel,
                                int64_t n, TlBatch **out, TlSchema **widen,
                                TlError *err)
{
    const CsvReader *r = ((CsvDecoder *)dbase)->viewing ? &((CsvDecoder *)dbase)->view
                                                        : (const CsvReader *)base;
    CsvCursor *d = &((CsvDecoder *)dbase)->cur;
    TlBatch *b = NULL, *full = NULL;
    TlStatus st = TL_OK;
    bool all;
    *out = NULL;
    *widen = NULL;
    if (!d->late_open || !early || early->n_rows != d->n_rows ||
        early->n_cols != r->n_proj)
        return tl_error(err, TL_ERR_DATA,
                        "internal error: %s: rows converted late without an early decode",
                        r->name);
    all = n < 0 || n == d->n_rows;
    if (all) n = d->n_rows;
    if (!d->stored_all && (d->doubt || n > d->n_rows / 4)) {
        st = store_all(r, d, err);
        if (st != TL_OK) goto done;
    }
    if (!all && n > 0 && (n > d->n_rows || sel[n - 1] >= (uint64_t)d->n_rows)) {
        st = tl_error(err, TL_ERR_DATA, "internal error: %s: bad row selection",
                      r->name);
        goto done;
    }
    if (!all && n > d->gat_cap) {
        int64_t cap = n > 1024 ? n : 1024;
        CsvField *g = tl_malloc((size_t)cap * sizeof *g);
        int64_t *gl = tl_malloc((size_t)cap * sizeof *gl);
        if (!g || !gl) {
            tl_free(g);
            tl_free(gl);
            st = tl_error_oom(err);
            goto done;
        }
        tl_free(d->gat);
        tl_free(d->gat_line);
        d->gat = g;
        d->gat_line = gl;
        d->gat_cap = cap;
    }
    if (n == 0) {
        /* no row wanted: only the checks */
        for (int k = 0; k < r->n_proj; k++)
            if (!early->cols[k] &&
                !gather_fields(r, d, r->proj[k], r->schema.fields[r->proj[k]].type,
                               NULL, 0))
                goto fallback;
        goto done;
    }
    b = tl_batch_new(&r->proj_schema, r->n_proj, n);
    if (!b) {
        st = tl_error_oom(err);
        goto done;
    }
    for (int k = 0; k < r->n_proj; k++) {
        int c = r->proj[k];
        TlType t = r->schema.fields[c].type;
        int64_t bad = -1;
        if (early->cols[k]) {
            b->cols[k] = all ? tl_array_retain(early->cols[k])
                             : tl_array_take(early->cols[k], sel, n);
            if (!b->cols[k]) {
                st = tl_error_oom(err);
                goto done;
            }
            continue;
        }
        if (all) {
            st = convert_col(r, d, c, t, &b->cols[k], &bad, err);
        } else {
            CsvField *keep_f = d->cols[c];
            int64_t *keep_l = d->row_line, keep_n = d->n_rows;
            if (!d->stored_all) {
                st = reparse_fields(r, d, c, sel, n, err);
                if (st != TL_OK) goto done;
            } else if (!gather_fields(r, d, c, t, sel, n)) {
                goto fallback;
            }
            d->cols[c] = d->gat;
            d->row_line = d->gat_line;
            d->n_rows = n;
            st = convert_col(r, d, c, t, &b->cols[k], &bad, err);
            d->cols[c] = keep_f;
            d->row_line = keep_l;
            d->n_rows = keep_n;
        }
        if (st != TL_OK) goto done;
        if (bad >= 0) goto fallback;
    }
    *out = b;
    b = NULL;
    goto done;
fallback:
    /* tl_csv_decode's outcome over the whole morsel, then the rows */
    tl_batch_free(b);
    b = NULL;
    st = store_all(r, d, err);
    if (st == TL_OK) st = convert_all(r, d, &full, widen, err);
    if (st != TL_OK) goto done;
    if (all) {
        *out = full;
        full = NULL;
        goto done;
    }
    if (n == 0) goto done;
    b = tl_batch_new(&r->proj_schema, r->n_proj, n);
    for (int k = 0; b && k < r->n_proj; k++) {
        b->cols[k] = tl_array_take(full->cols[k], sel, n);
        if (!b->cols[k]) {
            tl_batch_free(b);
            b = NULL;
        }
    }
    if (!b) {
        st = tl_error_oom(err);
        goto done;
    }
    *out = b;
    b = NULL;
done:
    tl_batch_free(b);
    tl_batch_free(full);
    morsel_end(r, d, st == TL_OK);
    return st;
}

/* See format.h: forget the morsel decoded early (no rest wanted). */
void tl_csv_decode_end(TlReader *base, TlDecoder *dbase)
{
    CsvCursor *d = &((CsvDecoder *)dbase)->cur;
    if (d->late_open) morsel_end((const CsvReader *)base, d, true);
}
