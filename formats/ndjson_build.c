/*
 * ndjson_build.c -- from tokenized fields to batches: each column's type
 * inferred from its fields, the projected columns converted into arrays,
 * and the decoding of one morsel with its outcomes (a value that does not
 * fit, a key first seen after the first batch: restarts).  ndjson_read.c
 * describes the design.
 */
#include "ndjson_impl.h"

/* ------------------------------------------------------------ inference */

/* The type a JSON string s[0..len) holds: a date or a timestamp when its
 * text is one (as a CSV field's would be: infer.c), else a string.  So
 * CSV -> NDJSON -> tally keeps its date columns. */
static inline TlType string_type(const uint8_t *s, uint32_t len)
{
    int32_t d;
    int64_t ts;
    if (len < 10 || s[0] < '0' || s[0] > '9') return TL_TSTRING;
    if (tl_parse_date((const char *)s, len, &d)) return TL_TDATE;
    if (tl_parse_timestamp((const char *)s, len, &ts)) return TL_TTIMESTAMP;
    if (tl_parse_timestamptz((const char *)s, len, &ts)) return TL_TTIMESTAMPTZ;
    return TL_TSTRING;
}

/* Widen the inferred type t by field f. */
static inline TlType widen_field(const NdCursor *r, TlType t, const NdField *f)
{
    TlType v;
    switch (f->kind) {
    case V_NULL: return t;
    case V_FALSE: case V_TRUE: v = TL_TBOOL; break;
    case V_INT: v = TL_TINT64; break;
    case V_FLOAT: v = TL_TFLOAT64; break;
    case V_STR: v = string_type(r->p + f->off, f->len); break;
    default: v = TL_TSTRING; break;
    }
    if (t == TL_TNULL || t == v) return v;
    if ((t == TL_TINT64 && v == TL_TFLOAT64) || (t == TL_TFLOAT64 && v == TL_TINT64))
        return TL_TFLOAT64;
    if ((t == TL_TDATE && v == TL_TTIMESTAMP) || (t == TL_TTIMESTAMP && v == TL_TDATE))
        return TL_TTIMESTAMP; /* a bare date is its midnight */
    return TL_TSTRING;
}

/* The narrowest type, starting from t, holding column c's values of the
 * tokenized batch; *why = the row whose value made a numeric column a
 * string (-1: none did, or the column is text: neither the type before,
 * the value, nor the next few values are numbers).  In a float64 column an
 * integer of over 15 digits must be an exact double (infer.h). */
TlType tl_nd_infer_column(const NdCursor *r, int c, TlType t, int64_t *why)
{
    const NdCol *col = &r->cols[c];
    const int64_t n = col->n;
    int64_t i, at = -1; /* the field that made the column a string */
    TlType was = t;
    double v;
    *why = -1;
    for (i = 0; i < n && t != TL_TSTRING; i++) {
        was = t;
        t = widen_field(r, t, &col->f[i]);
    }
    if (t == TL_TSTRING && i > 0) at = i - 1;
    if (at >= 0 && was != TL_TINT64 && was != TL_TFLOAT64 && col->f[at].kind != V_NUMTXT) {
        /* the next 16 rows (those without the key hold no number) */
        const int64_t last = field_row(col, at) + 16;
        bool num = false;
        for (int64_t k = at + 1; k < n && field_row(col, k) <= last && !num; k++)
            num = col->f[k].kind == V_INT || col->f[k].kind == V_FLOAT;
        if (!num) at = -1; /* text: no note */
    }
    for (int64_t k = 0; t == TL_TFLOAT64 && k < n; k++) {
        const NdField *f = &col->f[k];
        if (f->kind == V_INT && f->len > 15 &&
            !tl_exact_f64((const char *)r->p + f->off, f->len, &v))
            t = TL_TSTRING, at = k;
    }
    if (t == TL_TSTRING && at >= 0) *why = field_row(col, at);
    return t;
}

/* ----------------------------------------------------------- conversion */

/* Integer text (validated, fits int64) -> value. */
static inline int64_t int_of(const uint8_t *s, uint32_t len)
{
    bool neg = s[0] == '-';
    uint64_t v = 0;
    for (uint32_t i = neg; i < len; i++) v = v * 10 + (uint64_t)(s[i] - '0');
    return neg ? (int64_t)(0 - v) : (int64_t)v;
}

/* Bytes of a decoded string or date text into buf (room for len). */
static const uint8_t *text_of(const NdCursor *r, NdField f, uint8_t *buf, size_t *len)
{
    if (f.kind == V_STRESC) {
        *len = unescape(r->p + f.off, f.len, buf);
        return buf;
    }
    *len = f.len;
    return r->p + f.off;
}

/* One converter per type: *bad = the first row whose value does not fit
 * (then no array is made). */
static TlStatus convert_i64(NdCursor *r, const NdField *F, TlArray **out, int64_t *bad,
                            TlError *err)
{
    const int64_t n = r->n_rows;
    TlValidity v = {NULL, 0};
    TlBuf *values = tl_buf_new((size_t)n * sizeof(int64_t), false);
    int64_t *vals;
    if (!values) return tl_error_oom(err);
    vals = (int64_t *)values->data;
    for (int64_t row = 0; row < n; row++) {
        NdField f = F[row];
        if (f.kind == V_INT) {
            vals[row] = int_of(r->p + f.off, f.len);
        } else if (f.kind == V_NULL) {
            vals[row] = 0;
            if (!tl_validity_null(&v, n, row)) goto oom;
        } else {
            *bad = row;
            goto drop;
        }
    }
    return tl_validity_array(TL_TINT64, n, values, &v, out, err);
oom:
    tl_error_oom(err);
drop:
    tl_validity_release(values, &v);
    return *bad >= 0 ? TL_OK : err->code;
}

static TlStatus convert_f64(NdCursor *r, const NdField *F, bool fixed, TlArray **out,
                            int64_t *bad, TlError *err)
{
    const int64_t n = r->n_rows;
    TlValidity v = {NULL, 0};
    TlBuf *values = tl_buf_new((size_t)n * sizeof(double), false);
    double *vals;
    if (!values) return tl_error_oom(err);
    vals = (double *)values->data;
    for (int64_t row = 0; row < n; row++) {
        NdField f = F[row];
        const uint8_t *s = r->p + f.off;
        if (f.kind == V_INT) {
            int64_t x = int_of(s, f.len);
            vals[row] = x == 0 && s[0] == '-' ? -0.0 : (double)x;
            if (!fixed && f.len > 15 && !tl_exact_f64((const char *)s, f.len, &vals[row])) {
                *bad = row;
                goto drop;
            }
        } else if (f.kind == V_FLOAT || (fixed && f.kind == V_NUMTXT)) {
            if (!tl_parse_f64((const char *)s, f.len, &vals[row])) goto oom;
        } else if (f.kind == V_NULL) {
            vals[row] = 0;
            if (!tl_validity_null(&v, n, row)) goto oom;
        } else {
            *bad = row;
            goto drop;
        }
    }
    return tl_validity_array(TL_TFLOAT64, n, values, &v, out, err);
oom:
    tl_error_oom(err);
drop:
    tl_validity_release(values, &v);
    return *bad >= 0 ? TL_OK : err->code;
}

static TlStatus convert_bool(NdCursor *r, const NdField *F, TlArray **out, int64_t *bad,
                             TlError *err)
{
    const int64_t n = r->n_rows;
    TlValidity v = {NULL, 0};
    TlBuf *values = tl_buf_new(tl_bitmap_bytes(n), true);
    if (!values) return tl_error_oom(err);
    for (int64_t row = 0; row < n; row++) {
        NdField f = F[row];
        if (f.kind == V_TRUE) {
            tl_bit_set(values->data, row);
        } else if (f.kind == V_NULL) {
            if (!tl_validity_null(&v, n, row)) goto oom;
        } else if (f.kind != V_FALSE) {
            *bad = row;
            goto drop;
        }
    }
    return tl_validity_array(TL_TBOOL, n, values, &v, out, err);
oom:
    tl_error_oom(err);
drop:
    tl_validity_release(values, &v);
    return *bad >= 0 ? TL_OK : err->code;
}

/* Dates and timestamps (inferred, or given by --schema): strings that
 * parse. */
static TlStatus convert_datetime(NdCursor *r, const NdField *F, TlType t, TlArray **out,
                                 int64_t *bad, TlError *err)
{
    const int64_t n = r->n_rows;
    size_t w = t == TL_TDATE ? sizeof(int32_t) : sizeof(int64_t);
    TlValidity v = {NULL, 0};
    TlBuf *values = tl_buf_new((size_t)n * w, true);
    uint8_t tmp[64];
    if (!values) return tl_error_oom(err);
    for (int64_t row = 0; row < n; row++) {
        NdField f = F[row];
        const uint8_t *s;
        size_t len;
        bool ok;
        if (f.kind == V_NULL) {
            if (!tl_validity_null(&v, n, row)) goto oom;
            continue;
        }
        if ((f.kind != V_STR && f.kind != V_STRESC) || f.len >= sizeof tmp) {
            *bad = row;
            goto drop;
        }
        s = text_of(r, f, tmp, &len);
        if (t == TL_TDATE)
            ok = tl_parse_date((const char *)s, len, (int32_t *)values->data + row);
        else if (t == TL_TTIMESTAMPTZ)
            ok = tl_parse_timestamptz((const char *)s, len, (int64_t *)values->data + row);
        else
            ok = tl_parse_timestamp((const char *)s, len, (int64_t *)values->data + row);
        if (!ok) {
            *bad = row;
            goto drop;
        }
    }
    return tl_validity_array(t, n, values, &v, out, err);
oom:
    tl_error_oom(err);
drop:
    tl_validity_release(values, &v);
    return *bad >= 0 ? TL_OK : err->code;
}

static TlStatus convert_null(NdCursor *r, int c, TlArray **out, int64_t *bad, TlError *err)
{
    const NdCol *col = &r->cols[c];
    for (int64_t i = 0; i < col->n; i++) {
        if (col->f[i].kind != V_NULL) {
            *bad = field_row(col, i);
            return TL_OK;
        }
    }
    *out = tl_array_new_null(TL_TNULL, r->n_rows);
    return *out ? TL_OK : tl_error_oom(err);
}

/* Copy the validated JSON text s[0..len) without whitespace outside
 * strings into out (room for len); returns the length. */
static size_t compact_json(const uint8_t *s, size_t len, uint8_t *out)
{
    size_t o = 0;
    bool in_str = false;
    for (size_t i = 0; i < len; i++) {
        uint8_t c = s[i];
        if (in_str) {
            out[o++] = c;
            if (c == '\\') out[o++] = s[++i];
            else if (c == '"') in_str = false;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
        if (c == '"') in_str = true;
        out[o++] = c;
    }
    return o;
}

/* The buffer long views of this batch point into (see csv_read.c). */
static TlStatus ensure_window(NdCursor *r, TlError *err)
{
    if (r->window) return TL_OK;
    if (r->size <= UINT32_MAX) {
        r->window = tl_buf_retain(r->input);
        r->window_base = 0;
    } else {
        r->window = tl_buf_slice(r->input, r->batch_start, r->batch_end - r->batch_start);
        r->window_base = r->batch_start;
    }
    return r->window ? TL_OK : tl_error_oom(err);
}

static TlStatus convert_str(NdCursor *r, const NdField *F, TlArray **out, int64_t *bad,
                            TlError *err)
{
    const int64_t n = r->n_rows;
    TlValidity v = {NULL, 0};
    TlCopyBlock blk = {NULL, 0, 0};
    bool use_window = false;
    TlBuf **data = NULL;
    uint32_t n_data = 0;
    TlView *views;
    TlBuf *values = tl_buf_new((size_t)n * sizeof(TlView), false);
    (void)bad;
    if (!values) return tl_error_oom(err);
    views = (TlView *)values->data;
    if (ensure_window(r, err) != TL_OK) goto fail;
    /* window views use buffer 0 and block views buffer 1, fixed up below
     * when only the block is used */
    for (int64_t row = 0; row < n; row++) {
        NdField f = F[row];
        const uint8_t *s = r->p + f.off;
        uint32_t len = f.len;
        TlView *vw = &views[row];
        vw->w[0] = vw->w[1] = 0;
        switch (f.kind) {
        case V_NULL:
            if (!tl_validity_null(&v, n, row)) goto oom;
            continue;
        case V_TRUE:
            *vw = tl_view_inline("true", 4);
            continue;
        case V_FALSE:
            *vw = tl_view_inline("false", 5);
            continue;
        case V_STR: case V_INT: case V_FLOAT: case V_NUMTXT:
            vw->in.len = len;
            if (len <= TL_VIEW_INLINE) {
                memcpy(vw->in.data, s, len);
                continue;
            }
            if (f.off - r->window_base + len <= UINT32_MAX) {
                memcpy(vw->out.prefix, s, 4);
                vw->out.buf = 0;
                vw->out.off = (uint32_t)(f.off - r->window_base);
                use_window = true;
                continue;
            }
            if (!tl_copy_block_reserve(&blk, len)) goto oom;
            memcpy(blk.data + blk.used, s, len);
            break;
        default: /* V_STRESC, V_JSON */
            if (!tl_copy_block_reserve(&blk, len)) goto oom;
            len = (uint32_t)(f.kind == V_JSON ? compact_json(s, len, blk.data + blk.used)
                                              : unescape(s, len, blk.data + blk.used));
            vw->in.len = len;
            if (len <= TL_VIEW_INLINE) {
                memcpy(vw->in.data, blk.data + blk.used, len);
                continue;
            }
            break;
        }
        if (blk.used + len > UINT32_MAX) {
            tl_error(err, TL_ERR_DATA, "%s:%lld: too much escaped text in one batch "
                     "(over 4 GiB)", r->name, (long long)r->row_line[row]);
            goto fail;
        }
        memcpy(vw->out.prefix, blk.data + blk.used, 4);
        vw->out.buf = 1;
        vw->out.off = (uint32_t)blk.used;
        blk.used += len;
    }
    if (tl_copy_block_buffers(&blk, use_window ? r->window : NULL, views, n, &data,
                              &n_data, err) != TL_OK)
        goto fail;
    tl_free(blk.data);
    *out = tl_array_new(TL_TSTRING, n, values, v.buf, v.null_count, data, n_data);
    return *out ? TL_OK : tl_error_oom(err);
oom:
    tl_error_oom(err);
fail:
    tl_free(blk.data);
    tl_validity_release(values, &v);
    return err->code;
}

/* Column c's fields one per row of the batch, nulls where its key is
 * absent: the column's own fields when it is dense and holds every row,
 * else the cursor's spread, made here once.  NULL on OOM. */
static const NdField *row_fields(NdCursor *r, int c)
{
    const NdCol *col = &r->cols[c];
    const int64_t n = r->n_rows;
    if (!col->sparse && col->n == n) return col->f;
    if (r->spread_cap < n) {
        NdField *g = tl_realloc(r->spread, (size_t)n * sizeof *g);
        if (!g) return NULL;
        r->spread = g;
        r->spread_cap = n;
    }
    memset(r->spread, 0, (size_t)n * sizeof *r->spread);
    if (!col->sparse) {
        if (col->n) memcpy(r->spread, col->f, (size_t)col->n * sizeof *col->f);
    } else {
        for (int64_t i = 0; i < col->n; i++) r->spread[col->rows[i]] = col->f[i];
    }
    return r->spread;
}

static TlStatus convert(NdCursor *r, int c, bool fixed, TlArray **out, int64_t *bad,
                        TlError *err)
{
    TlType t = r->schema->fields[c].type;
    const NdField *F;
    if (t != TL_TBOOL && t != TL_TINT64 && t != TL_TFLOAT64 && t != TL_TSTRING &&
        t != TL_TDATE && t != TL_TTIMESTAMP && t != TL_TTIMESTAMPTZ)
        return convert_null(r, c, out, bad, err);
    F = row_fields(r, c);
    if (!F) return tl_error_oom(err);
    switch (t) {
    case TL_TBOOL: return convert_bool(r, F, out, bad, err);
    case TL_TINT64: return convert_i64(r, F, out, bad, err);
    case TL_TFLOAT64: return convert_f64(r, F, fixed, out, bad, err);
    case TL_TSTRING: return convert_str(r, F, out, bad, err);
    default: return convert_datetime(r, F, t, out, bad, err);
    }
}


/* ------------------------------------------------------ morsel decoding */

/* See ndjson_impl.h.  The line start is found through r's mapping, not the
 * cursor's copy: past a lone CR (LF only ends a line), before the morsel. */
int64_t tl_nd_value_col(const NdReader *r, const NdCursor *cu, NdField f)
{
    size_t ls = f.off;
    int64_t col = 1;
    if (f.kind == V_STR || f.kind == V_STRESC) ls--; /* the quote */
    size_t at = ls;
    while (ls > cu->start && r->p[ls - 1] != '\n') ls--;
    for (size_t j = ls; j < at; j++)
        if ((r->p[j] & 0xC0) != 0x80) col++;
    return col;
}

/* A value of column c at row does not fit the column's type: a data error
 * for a --schema column (and without hints); otherwise the projected
 * columns' types widened by this morsel's values go into *widen and the
 * reader asks for a restart. */
static TlStatus value_misfit(const NdReader *r, NdCursor *cu, int c, int64_t row,
                             TlSchema **widen, TlError *err)
{
    const TlField *fld = &r->schema.fields[c];
    NdField f = field_at(cu, c, row);
    TlSchema *w;
    int i;
    if (r->fixed[c] || !r->hints) {
        int64_t col = tl_nd_value_col(r, cu, f);
        const char *v = (const char *)cu->p + f.off; /* source text; strings quoted */
        bool str = f.kind == V_STR || f.kind == V_STRESC;
        return tl_error(err, TL_ERR_DATA, "%s:%lld:%lld: %s is not a valid %s (column %s)",
                        r->name, (long long)cu->row_line[row], (long long)col,
                        (str ? tl_quote_json(v, f.len) : tl_escape_value(v, f.len)).s,
                        tl_type_name(fld->type), tl_quote_name(fld->name).s);
    }
    {
        /* the note travels with the widen schema (infer.h) */
        int64_t why;
        TlType t = tl_nd_infer_column(cu, c, fld->type, &why);
        if (t == fld->type) why = row; /* never loop: a string */
        if (why >= 0) f = field_at(cu, c, why);
        w = tl_widen_new(why >= 0 ? fld->name : NULL,
                         cu->row_line[why < 0 ? 0 : why], (const char *)cu->p + f.off,
                         f.len, false);
        if (!w) return tl_error_oom(err);
    }
    for (int k = 0; k < r->n_proj; k++) {
        int pc = r->proj[k];
        TlType old = r->schema.fields[pc].type, t;
        int64_t why;
        if (r->fixed[pc]) continue;
        t = tl_nd_infer_column(cu, pc, old, &why);
        if (pc == c && t == old) t = TL_TSTRING; /* never loop */
        if (t != old && tl_schema_add(w, r->schema.fields[pc].name, t, err) != TL_OK) {
            tl_schema_free(w);
            tl_free(w);
            return err->code;
        }
    }
    *widen = w;
    i = tl_schema_find(w, fld->name);
    return tl_error(err, TL_ERR_RESTART,
                    "%s:%lld: column %s holds a %s value; reading again",
                    r->name, (long long)cu->row_line[row], tl_quote_name(fld->name).s,
                    tl_type_name(w->fields[i].type));
}

/* Keys first seen after the first batch (open's sample) in morsel seq:
 * tokenize the rest of the input too (so a file that adds keys in many
 * places restarts once, not once per morsel), put every late key with the
 * type of its values in *widen and ask for a restart (without hints, a
 * data error).  Bad lines further on are passed over here: the restarted
 * run reports the first problem in input order.
 *
 * Only the first morsel in input order with a late key has its restart
 * taken, so only its scan matters: morsels note their seq in r->late_seq
 * (an atomic minimum, the one thing decoders write to the reader), and a
 * scan stops as soon as an earlier morsel is known to have late keys too
 * (its result is then never used), so threads do not each scan the rest. */
static TlStatus late_keys(NdReader *r, NdCursor *cu, int64_t seq, TlSchema **widen,
                          TlError *err)
{
    int64_t low = __atomic_load_n(&r->late_seq, __ATOMIC_RELAXED);
    if (!r->hints)
        return tl_error(err, TL_ERR_DATA, "%s: key %s first appears after the "
                        "first batch", r->name, tl_quote_name(cu->late.fields[0].name).s);
    /* the rest of a streamed input must be there (a decoder may wait: the
     * decompressor is a thread of its own), to its end */
    TL_TRY(tl_input_finish(r->input, err));
    cu->size = tl_input_size(r->input);
    while (seq < low && !__atomic_compare_exchange_n(&r->late_seq, &low, seq, false,
                                                     __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    TL_TRY(tl_nd_scan_late(r, cu, seq, err));
    TL_TRY(tl_nd_late_widen(cu, widen, err));
    return tl_error(err, TL_ERR_RESTART, "%s: new key %s; reading again",
                    r->name, tl_quote_name(cu->late.fields[0].name).s);
}

/* See ndjson_impl.h.  Bad lines are passed over: the keys before a line's
 * error count, and a later run reports the first problem in its place. */
TlStatus tl_nd_scan_late(NdReader *r, NdCursor *cu, int64_t seq, TlError *err)
{
    const int n = cu->schema->n_fields;
    for (bool full = false;;) {
        TlStatus st;
        /* the types of the values kept (a duplicate key's last), of the
         * late columns with fields in this batch (the others keep theirs) */
        for (int t = 0; t < cu->n_touched; t++) {
            const int c = cu->touched[t];
            int64_t why;
            if (c >= n) cu->cols[c].seen = tl_nd_infer_column(cu, c, cu->cols[c].seen, &why);
        }
        if (full || cu->pos >= cu->size ||
            (seq >= 0 && __atomic_load_n(&r->late_seq, __ATOMIC_RELAXED) < seq))
            return TL_OK;
        st = tl_nd_tokenize(cu, cu->size, err);
        if (st == TL_ERR_DATA) {
            /* a key one column more than --max-columns: every later new
             * key would be too, so the scan ends at its line */
            full = cu->full;
            if (!full) {
                const uint8_t *nl = memchr(cu->p + cu->pos, '\n', cu->size - cu->pos);
                cu->pos = nl ? (size_t)(nl - cu->p) + 1 : cu->size;
                cu->line++;
            }
        } else if (st != TL_OK) {
            return st;
        }
    }
}

/* See ndjson_impl.h. */
TlStatus tl_nd_late_widen(const NdCursor *cu, TlSchema **widen, TlError *err)
{
    const int n = cu->schema->n_fields;
    TlSchema *w = tl_widen_new(NULL, 0, NULL, 0, false);
    if (!w) return tl_error_oom(err);
    for (int i = 0; i < cu->late.n_fields; i++)
        if (tl_schema_add(w, cu->late.fields[i].name, cu->cols[n + i].seen, err) != TL_OK) {
            tl_schema_free(w);
            tl_free(w);
            return err->code;
        }
    *widen = w;
    return TL_OK;
}

/* A decoder that met late keys in an earlier morsel forgets them (the
 * entries of their columns are made again when met again). */
static void forget_late(NdCursor *cu)
{
    tl_nd_clear_fields(cu);
    for (int e = 0; e < cu->n_entries; e++)
        if (cu->entries[e].col >= cu->n_open) cu->entries[e].col = -1;
    for (int c = cu->n_open; c < n_all_cols(cu); c++) cu->cols[c].seen = TL_TNULL;
    tl_schema_free(&cu->late);
}

/* Convert the projected columns of the tokenized rows into *out.  Values
 * that do not fit: the one in the lowest row (then the first projected
 * column) is reported (value_misfit). */
static TlStatus convert_rows(const NdReader *r, NdCursor *cu, TlBatch **out,
                             TlSchema **widen, TlError *err)
{
    TlBatch *b = tl_batch_new(&r->proj_schema, r->n_proj, cu->n_rows);
    int64_t bad_row = -1;
    int bad_col = -1;
    TlStatus st = TL_OK;
    if (!b) return tl_error_oom(err);
    for (int k = 0; k < r->n_proj && st == TL_OK; k++) {
        int c = r->proj[k];
        int64_t bad = -1;
        st = convert(cu, c, r->fixed[c], &b->cols[k], &bad, err);
        if (st == TL_OK && bad >= 0 && (bad_row < 0 || bad < bad_row)) {
            bad_row = bad;
            bad_col = c;
        }
    }
    if (st == TL_OK && bad_row >= 0) st = value_misfit(r, cu, bad_col, bad_row, widen, err);
    tl_buf_release(cu->window);
    cu->window = NULL;
    if (st != TL_OK) {
        tl_batch_free(b);
        return st;
    }
    *out = b;
    return TL_OK;
}

/* Decode morsel m with cursor cu (see tl_reader_decode).  The outcome
 * does not depend on where morsels are cut: a late key restarts first
 * (whatever else the morsel holds: the next run knows the key and goes on
 * with the rest); then the first problem in input order is reported: a
 * syntax error, unless a value before it does not fit. */
TlStatus tl_nd_decode_morsel(NdReader *r, NdCursor *cu, const TlMorsel *m,
                             TlBatch **out, TlSchema **widen, TlError *err)
{
    TlError terr;
    TlStatus tst, st;
    *out = NULL;
    *widen = NULL;
    if (cu->late.n_fields) forget_late(cu);
    cu->saw_late = false;
    cu->saw_lone_cr = false;
    cu->pos = m->begin < cu->start ? cu->start : (size_t)m->begin;
    cu->line = m->line;
    tst = tl_nd_tokenize(cu, (size_t)m->end, &terr);
    if (tst != TL_OK && tst != TL_ERR_DATA) {
        *err = terr;
        return tst;
    }
    /* A guessed end (nd_split) is the careful one when no lone CR ended a
     * record in the morsel and it has fewer line ends than a morsel may
     * hold; anything else in a guessed morsel (an error, whose message
     * needs the line; a late key) fails it, and the consumer splits again
     * from it (tl_reader_resplit). */
    if (m->line < 0 && (tst != TL_OK || cu->saw_late || cu->saw_lone_cr ||
                        cu->line - m->line >= r->max_rows || cu->pos < (size_t)m->end))
        return tl_error(err, TL_ERR_DATA, "%s: internal error: a guessed morsel end "
                        "was not split again", r->name);
    if (cu->saw_late) {
        /* the rest of the input, through the mapping */
        cu->p = r->p;
        cu->size = r->size;
        return late_keys(r, cu, m->seq, widen, err);
    }
    if (tst != TL_OK && cu->n_rows == 0) {
        *err = terr;
        return tst;
    }
    if (cu->n_rows == 0) return TL_OK;
    st = convert_rows(r, cu, out, widen, err);
    if (st == TL_OK && tst != TL_OK) {
        tl_batch_free(*out);
        *out = NULL;
        *err = terr;
        return tst;
    }
    return st;
}
