/*
 * tsv_read.c -- reading the IANA TSV dialect: backslash escapes decoded.
 *
 * A TSV input is tokenized by the CSV reader with quoting off (quotes are
 * data) and `\N` as its null text (csv_read.c, TlReadOptions.tsv), so
 * records, field counts, nulls, inference and error positions are the CSV
 * reader's.  What is left is the escapes the TSV writer (tsv.c) and other
 * producers (PostgreSQL's COPY, MySQL, Python) write inside values:
 *
 *   \t -> tab    \n -> LF    \r -> CR    \\ -> backslash
 *
 * any other backslash is kept as written (nothing is lost).  No number,
 * boolean, date or timestamp holds a backslash, so only string columns
 * can hold escapes: this reader wraps the CSV reader and, in each batch it
 * hands out (next, or a morsel's decode), rebuilds a string column only
 * when one of its values holds a backslash -- a memchr per value, and no
 * copy for the usual column.  Header names are decoded by the CSV reader
 * itself (tl_tsv_unescape) so that schema, projection and type hints all
 * use the decoded names.  Everything else (split, widen, count, stats)
 * passes through, as in filename.c.
 */
#include "fmt_impl.h"
#include "tsv.h"

typedef struct TsvReader {
    TlReader base;
    TlReader *inner;
} TsvReader;

/* See tsv.h. */
size_t tl_tsv_unescape(const uint8_t *s, size_t n, uint8_t *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (c == '\\' && i + 1 < n) {
            uint8_t e = s[i + 1];
            uint8_t d = e == 't' ? '\t' : e == 'n' ? '\n' : e == 'r' ? '\r'
                      : e == '\\' ? '\\' : 0;
            if (d) {
                out[k++] = d;
                i++;
                continue;
            }
        }
        out[k++] = c;
    }
    return k;
}

/* See tsv.h. */
void tl_tsv_unescape_str(char *s)
{
    size_t n = strlen(s);
    s[tl_tsv_unescape((const uint8_t *)s, n, (uint8_t *)s)] = 0;
}

/* Column a with its values' escapes decoded, or a itself (retained) when
 * none holds a backslash.  NULL on OOM. */
static TlArray *decode_column(TlArray *a)
{
    const TlView *v = tl_array_views(a);
    TlBuilder bld;
    uint8_t *tmp = NULL;
    size_t cap = 0;
    int64_t i, first = -1;
    for (i = 0; i < a->length && first < 0; i++)
        if (tl_array_valid(a, i) &&
            memchr(tl_view_ptr(&v[i], a->data), '\\', tl_view_len(v[i])))
            first = i;
    if (first < 0) return tl_array_retain(a);
    tl_builder_init(&bld, TL_TSTRING);
    if (!tl_builder_reserve(&bld, a->length)) goto oom;
    for (i = 0; i < a->length; i++) {
        const uint8_t *s;
        uint32_t len;
        if (!tl_array_valid(a, i)) {
            if (!tl_builder_append_null(&bld)) goto oom;
            continue;
        }
        s = tl_view_ptr(&v[i], a->data);
        len = tl_view_len(v[i]);
        if (i < first || !memchr(s, '\\', len)) {
            if (!tl_builder_append_str(&bld, s, len)) goto oom;
            continue;
        }
        if (len > cap) {
            uint8_t *g = tl_realloc(tmp, len);
            if (!g) goto oom;
            tmp = g;
            cap = len;
        }
        if (!tl_builder_append_str(&bld, tmp, tl_tsv_unescape(s, len, tmp))) goto oom;
    }
    tl_free(tmp);
    return tl_builder_finish(&bld);
oom:
    tl_free(tmp);
    tl_builder_free(&bld);
    return NULL;
}

/* Decode every string column of b in place. */
static TlStatus decode_batch(TlBatch *b, TlError *err)
{
    for (int c = 0; b && c < b->n_cols; c++) {
        TlArray *a = b->cols[c], *d;
        if (!a || a->type != TL_TSTRING || a->length == 0) continue;
        d = decode_column(a);
        if (!d) {
            tl_batch_free(b);
            return tl_error_oom(err);
        }
        tl_array_release(a);
        b->cols[c] = d;
    }
    return TL_OK;
}

static const TlSchema *tr_schema(const TlReader *base)
{
    return tl_reader_schema(((const TsvReader *)base)->inner);
}

static TlStatus tr_project(TlReader *base, const int *cols, int n_cols, TlError *err)
{
    return tl_reader_project(((TsvReader *)base)->inner, cols, n_cols, err);
}

static TlStatus tr_next(TlReader *base, TlBatch **out, TlError *err)
{
    TsvReader *r = (TsvReader *)base;
    TlStatus st = tl_reader_next(r->inner, out, err);
    r->base.stats = *tl_reader_stats(r->inner);
    if (st != TL_OK) return st;
    st = decode_batch(*out, err);
    if (st != TL_OK) *out = NULL;
    return st;
}

static const TlReaderOps tr_split_ops;

static TlStatus tr_split(TlReader *base, TlMorsel *m, bool *got, TlError *err)
{
    return tl_reader_split(((TsvReader *)base)->inner, m, got, err);
}

/* A decoder wraps the inner one (its ops say which reader decodes). */
typedef struct TsvDecoder {
    TlDecoder base;
    TlDecoder *inner;
} TsvDecoder;

static TlStatus tr_decoder_new(TlReader *base, TlDecoder **out, TlError *err)
{
    TsvDecoder *d = tl_calloc(1, sizeof *d);
    *out = NULL;
    if (!d) return tl_error_oom(err);
    d->base.ops = &tr_split_ops;
    if (tl_decoder_new(((TsvReader *)base)->inner, &d->inner, err) != TL_OK) {
        tl_free(d);
        return err->code;
    }
    *out = &d->base;
    return TL_OK;
}

static void tr_decoder_free(TlDecoder *base)
{
    TsvDecoder *d = (TsvDecoder *)base;
    tl_decoder_free(d->inner);
    tl_free(d);
}

static TlStatus tr_decode(TlReader *base, TlDecoder *dbase, const TlMorsel *m,
                          TlBatch **out, TlSchema **widen, TlError *err)
{
    TlStatus st = tl_reader_decode(((TsvReader *)base)->inner,
                                   ((TsvDecoder *)dbase)->inner, m, out, widen, err);
    if (st != TL_OK) return st;
    st = decode_batch(*out, err);
    if (st != TL_OK) *out = NULL;
    return st;
}

/* A record's line is the inner decoder's (messages name TSV lines too). */
static int64_t tr_row_line(const TlReader *base, TlDecoder *dbase, int64_t row)
{
    const TlReader *in = ((const TsvReader *)base)->inner;
    return in->ops->row_line ? in->ops->row_line(in, ((TsvDecoder *)dbase)->inner, row) : 0;
}

/* And a column's place, the inner decoder's. */
static int64_t tr_row_col(const TlReader *base, TlDecoder *dbase, int64_t row, int k,
                          int64_t *line)
{
    const TlReader *in = ((const TsvReader *)base)->inner;
    return in->ops->row_col ? in->ops->row_col(in, ((TsvDecoder *)dbase)->inner, row, k, line)
                            : 0;
}

static TlStatus tr_widen(TlReader *base, const TlSchema *widen, TlError *err)
{
    return tl_reader_widen(((TsvReader *)base)->inner, widen, err);
}

static void tr_count(TlReader *base, int64_t rows, int64_t bytes)
{
    TsvReader *r = (TsvReader *)base;
    tl_reader_count(r->inner, rows, bytes);
    r->base.stats = *tl_reader_stats(r->inner);
}

static void tr_close(TlReader *base)
{
    TsvReader *r = (TsvReader *)base;
    tl_reader_close(r->inner);
    tl_free(r);
}

static const TlReaderOps tr_ops = {
    .schema = tr_schema, .project = tr_project, .next = tr_next, .close = tr_close};

/* When the inner reader can split. */
static const TlReaderOps tr_split_ops = {
    .schema = tr_schema, .project = tr_project, .next = tr_next, .close = tr_close,
    .split = tr_split, .decoder_new = tr_decoder_new, .decoder_free = tr_decoder_free,
    .decode = tr_decode, .widen = tr_widen, .count = tr_count, .row_line = tr_row_line,
    .row_col = tr_row_col};

/* See tsv.h. */
TlStatus tl_tsv_reader_wrap(TlReader **inout, TlError *err)
{
    TsvReader *r = tl_calloc(1, sizeof *r);
    if (!r) {
        tl_reader_close(*inout);
        *inout = NULL;
        return tl_error_oom(err);
    }
    r->base.ops = tl_reader_can_split(*inout) ? &tr_split_ops : &tr_ops;
    r->inner = *inout;
    r->base.input = r->inner->input;
    r->base.outer = true;
    r->base.stats = *tl_reader_stats(r->inner);
    *inout = &r->base;
    return TL_OK;
}
