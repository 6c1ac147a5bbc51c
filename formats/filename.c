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

static TlStatus fr_next(TlReader *base, TlBatch **out, TlError *err)
{
    FileReader *r = (FileReader *)base;
    TlBatch *in = NULL, *b = NULL;
    TlArray *fn = NULL;
    int k = 0;
    *out = NULL;
    TL_TRY(tl_reader_next(r->inner, &in, err));
    r->base.stats = *tl_reader_stats(r->inner);
    if (r->base.stats.converted) {
        memcpy(r->converted + 1, r->base.stats.converted,
               sizeof *r->converted * (size_t)(r->schema.n_fields - 1));
        r->base.stats.converted = r->converted;
    }
    if (!in) return TL_OK;
    if (in->n_rows > r->n_zeros) {
        uint32_t *z = tl_realloc(r->zeros, sizeof *z * (size_t)in->n_rows);
        if (!z) goto oom;
        memset(z, 0, sizeof *z * (size_t)in->n_rows);
        r->zeros = z;
        r->n_zeros = in->n_rows;
    }
    fn = tl_array_take(r->one, r->zeros, in->n_rows);
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
    .schema = fr_schema, .project = fr_project, .next = fr_next, .close = fr_close};

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
                        "--with-filename: \"%s\" already has a column named "
                        "\"" FILENAME_COLUMN "\"", name);
    }
    r = tl_calloc(1, sizeof *r);
    if (!r) {
        tl_reader_close(inner);
        return tl_error_oom(err);
    }
    r->base.ops = &fr_ops;
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
