/*
 * filename.c -- --with-filename: a reader that adds a `filename` column.
 *
 * It wraps the reader of any format (tl_reader_open calls
 * tl_filename_reader_wrap when TlReadOptions.with_filename is set):
 *
 *   schema   `filename` (string), then the inner reader's columns (first,
 *            so that with several inputs, whose columns are matched by name,
 *            it is the first column of the result); an input that already
 *            has a column of that name is a usage error
 *   project  the inner reader gets the wanted columns minus `filename`;
 *   next     each inner batch is passed on with the constant `filename`
 *            column inserted where the projection asked for it
 *   morsels  when the inner reader can split: split, widen and count pass
 *            through; a decoder wraps an inner decoder and adds the column
 *            to each decoded batch as next does (its take indexes are its
 *            own, the shared value is only read, so decoding stays
 *            thread-safe); the counters follow the inner reader's
 *
 * The constant column is one string value repeated: it is built once and
 * each batch takes n_rows copies of its single view (tl_array_take shares
 * the data block), so the cost is 16 bytes a row.  The value is the input's
 * path as opened ("<stdin>" for standard input).
 */
#include "filename.h"
#include "fmt_impl.h"

#include <stdio.h>

#define FILENAME_COLUMN "filename"

typedef struct FileReader {
    TlReader base;
    TlReader *inner;
    TlSchema schema;      /* filename + inner columns */
    TlSchema out_schema;  /* the projected columns */
    int *want;            /* projection: schema index per output column */
    int n_want;
    int fn_col;           /* index of filename in schema: 0 */
    TlArray *one;         /* the value, length 1 */
    uint32_t *zeros;      /* take indexes */
    int64_t *converted;   /* stats: inner counts, then filename's (0) */
    int64_t n_zeros;
} FileReader;

static const TlSchema *fr_schema(const TlReader *base)
{
    FileReader *r = (FileReader *)(uintptr_t)base;
    const TlSchema *in = tl_reader_schema(r->inner);
    /* types of inner columns may be learned late: keep them in step */
    for (int i = 0; i < in->n_fields && i + 1 < r->schema.n_fields; i++)
        r->schema.fields[i + 1].type = in->fields[i].type;
    return &r->schema;
}

static TlStatus fr_project(TlReader *base, const int *cols, int n_cols, TlError *err)
{
    FileReader *r = (FileReader *)base;
    int *inner = NULL, n_inner = 0;
    TlStatus st = TL_OK;
    fr_schema(base);
    tl_free(r->want);
    r->want = tl_malloc(sizeof *r->want * (size_t)(n_cols ? n_cols : 1));
    inner = tl_malloc(sizeof *inner * (size_t)(n_cols ? n_cols : 1));
    if (!r->want || !inner) {
        tl_free(inner);
        return tl_error_oom(err);
    }
    tl_schema_free(&r->out_schema);
    for (int i = 0; i < n_cols && st == TL_OK; i++) {
        r->want[i] = cols[i];
        if (cols[i] != r->fn_col) inner[n_inner++] = cols[i] - 1;
        st = tl_schema_add(&r->out_schema, r->schema.fields[cols[i]].name,
                           r->schema.fields[cols[i]].type, err);
    }
    r->n_want = n_cols;
    if (st == TL_OK) st = tl_reader_project(r->inner, inner, n_inner, err);
    tl_free(inner);
    return st;
}

/* The inner batch in (consumed) with the constant column added where the
 * projection wants it; *zeros / *n_zeros: the caller's take indexes. */
static TlStatus add_filename(const FileReader *r, TlBatch *in, uint32_t **zeros,
                             int64_t *n_zeros, TlBatch **out, TlError *err)
{
    TlBatch *b = NULL;
    TlArray *fn = NULL;
    int k = 0;
    *out = NULL;
    if (in->n_rows > *n_zeros) {
        uint32_t *z = tl_realloc(*zeros, sizeof *z * (size_t)in->n_rows);
        if (!z) goto oom;
        memset(z, 0, sizeof *z * (size_t)in->n_rows);
        *zeros = z;
        *n_zeros = in->n_rows;
    }
    fn = tl_array_take(r->one, *zeros, in->n_rows);
    b = tl_batch_new(&r->out_schema, r->n_want, in->n_rows);
    if (!fn || !b) goto oom;
    for (int i = 0; i < r->n_want; i++) {
        if (r->want[i] == r->fn_col) {
            b->cols[i] = tl_array_retain(fn);
        } else {
            if (k >= in->n_cols) {
                tl_batch_free(in);
                tl_batch_free(b);
                tl_array_release(fn);
                return tl_error(err, TL_ERR_DATA, "internal: --with-filename "
                                "projection mismatch");
            }
            b->cols[i] = in->cols[k];
            in->cols[k++] = NULL;
        }
    }
    tl_array_release(fn);
    tl_batch_free(in);
    *out = b;
    return TL_OK;
oom:
    tl_array_release(fn);
    tl_batch_free(in);
    tl_batch_free(b);
    return tl_error_oom(err);
}

/* Take the inner reader's counters (converted shifted by the filename
 * column). */
static void sync_stats(FileReader *r)
{
    r->base.stats = *tl_reader_stats(r->inner);
    if (r->base.stats.converted) {
        memcpy(r->converted + 1, r->base.stats.converted,
               sizeof *r->converted * (size_t)(r->schema.n_fields - 1));
        r->base.stats.converted = r->converted;
    }
}

static TlStatus fr_next(TlReader *base, TlBatch **out, TlError *err)
{
    FileReader *r = (FileReader *)base;
    TlBatch *in = NULL;
    *out = NULL;
    TL_TRY(tl_reader_next(r->inner, &in, err));
    sync_stats(r);
    if (!in) return TL_OK;
    return add_filename(r, in, &r->zeros, &r->n_zeros, out, err);
}

/* Morsels: the inner reader's, each decoded batch given the column as in
 * next (the decoder wraps the inner one and has its own take indexes, so
 * decoding stays thread-safe: the shared value is only read). */
typedef struct FileDecoder {
    TlDecoder base;
    TlDecoder *inner;
    uint32_t *zeros;
    int64_t n_zeros;
} FileDecoder;

static const TlReaderOps fr_split_ops;

static TlStatus fr_more_columns(TlReader *base, bool *found, TlError *err)
{
    return tl_reader_more_columns(((FileReader *)base)->inner, found, err);
}

static TlStatus fr_split(TlReader *base, TlMorsel *m, bool *got, TlError *err)
{
    return tl_reader_split(((FileReader *)base)->inner, m, got, err);
}

static TlStatus fr_decoder_new(TlReader *base, TlDecoder **out, TlError *err)
{
    FileReader *r = (FileReader *)base;
    FileDecoder *d = tl_calloc(1, sizeof *d);
    *out = NULL;
    if (!d) return tl_error_oom(err);
    d->base.ops = &fr_split_ops;
    if (tl_decoder_new(r->inner, &d->inner, err) != TL_OK) {
        tl_free(d);
        return err->code;
    }
    *out = &d->base;
    return TL_OK;
}

static void fr_decoder_free(TlDecoder *base)
{
    FileDecoder *d = (FileDecoder *)base;
    tl_decoder_free(d->inner);
    tl_free(d->zeros);
    tl_free(d);
}

static TlStatus fr_decode(TlReader *base, TlDecoder *dbase, const TlMorsel *m,
                          TlBatch **out, TlSchema **widen, TlError *err)
{
    FileReader *r = (FileReader *)base;
    FileDecoder *d = (FileDecoder *)dbase;
    TlBatch *in = NULL;
    *out = NULL;
    TL_TRY(tl_reader_decode(r->inner, d->inner, m, &in, widen, err));
    if (!in) return TL_OK;
    return add_filename(r, in, &d->zeros, &d->n_zeros, out, err);
}

/* A record's line is the inner decoder's. */
static int64_t fr_row_line(const TlReader *base, TlDecoder *dbase, int64_t row)
{
    const TlReader *in = ((const FileReader *)base)->inner;
    return in->ops->row_line ? in->ops->row_line(in, ((FileDecoder *)dbase)->inner, row) : 0;
}

/* And a column's place: the inner decoder's for its column (the filename
 * column has none). */
static int64_t fr_row_col(const TlReader *base, TlDecoder *dbase, int64_t row, int k,
                          int64_t *line)
{
    const FileReader *r = (const FileReader *)base;
    const TlReader *in = r->inner;
    int ik = 0;
    if (k >= r->n_want || r->want[k] == r->fn_col || !in->ops->row_col) return 0;
    for (int i = 0; i < k; i++) ik += r->want[i] != r->fn_col;
    return in->ops->row_col(in, ((FileDecoder *)dbase)->inner, row, ik, line);
}

static TlStatus fr_widen(TlReader *base, const TlSchema *widen, TlError *err)
{
    return tl_reader_widen(((FileReader *)base)->inner, widen, err);
}

static void fr_count(TlReader *base, int64_t rows, int64_t bytes)
{
    FileReader *r = (FileReader *)base;
    tl_reader_count(r->inner, rows, bytes);
    sync_stats(r);
}

static void fr_close(TlReader *base)
{
    FileReader *r = (FileReader *)base;
    tl_reader_close(r->inner);
    tl_schema_free(&r->schema);
    tl_schema_free(&r->out_schema);
    tl_array_release(r->one);
    tl_free(r->want);
    tl_free(r->zeros);
    tl_free(r->converted);
    tl_free(r);
}

static const TlReaderOps fr_ops = {
    .schema = fr_schema, .project = fr_project, .next = fr_next, .close = fr_close,
    .more_columns = fr_more_columns};

/* When the inner reader can split. */
static const TlReaderOps fr_split_ops = {
    .schema = fr_schema, .project = fr_project, .next = fr_next, .close = fr_close,
    .split = fr_split, .decoder_new = fr_decoder_new, .decoder_free = fr_decoder_free,
    .decode = fr_decode, .widen = fr_widen, .count = fr_count, .row_line = fr_row_line,
    .row_col = fr_row_col, .more_columns = fr_more_columns};

/* See filename.h. */
TlStatus tl_filename_reader_wrap(const char *path, TlReader **inout, TlError *err)
{
    TlReader *inner = *inout;
    FileReader *r;
    const TlSchema *in = tl_reader_schema(inner);
    const char *name = tl_input_name(path);
    TlBuilder bld;
    int *all = NULL;
    TlStatus st;
    *inout = NULL;
    if (tl_schema_find(in, FILENAME_COLUMN) >= 0) {
        tl_reader_close(inner);
        return tl_error(err, TL_ERR_USAGE,
                        "--with-filename: %s already has a column named "
                        "\"" FILENAME_COLUMN "\"", tl_quote_name(name).s);
    }
    r = tl_calloc(1, sizeof *r);
    if (!r) {
        tl_reader_close(inner);
        return tl_error_oom(err);
    }
    r->base.ops = tl_reader_can_split(inner) ? &fr_split_ops : &fr_ops;
    r->base.types_final = inner->types_final;
    r->inner = inner;
    st = tl_schema_add(&r->schema, FILENAME_COLUMN, TL_TSTRING, err);
    for (int i = 0; st == TL_OK && i < in->n_fields; i++)
        st = tl_schema_add(&r->schema, in->fields[i].name, in->fields[i].type, err);
    if (st != TL_OK) goto fail;
    r->fn_col = 0;
    tl_builder_init(&bld, TL_TSTRING);
    if (tl_builder_append_str(&bld, name, strlen(name))) r->one = tl_builder_finish(&bld);
    tl_builder_free(&bld);
    all = tl_malloc(sizeof *all * (size_t)r->schema.n_fields);
    r->converted = tl_calloc((size_t)r->schema.n_fields, sizeof *r->converted);
    if (!r->one || !all || !r->converted) {
        st = tl_error_oom(err);
        goto fail;
    }
    r->base.stats.converted = r->converted;
    for (int i = 0; i < r->schema.n_fields; i++) all[i] = i;
    st = fr_project(&r->base, all, r->schema.n_fields, err);
    if (st != TL_OK) goto fail;
    tl_free(all);
    *inout = &r->base;
    return TL_OK;
fail:
    tl_free(all);
    fr_close(&r->base);
    return err->code;
}
