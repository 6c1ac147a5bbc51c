/*
 * fuzz_parquet.c -- libFuzzer target for the Parquet reader: the footer's
 * Thrift, the schema, page headers, levels, every encoding and codec.
 *
 * Input: the whole input is the file, read as tally reads a .parquet file:
 * open, project every column the reader can read, take every batch; then
 * again with a projection of each column alone (so a column that an earlier
 * column's error hid is reached too).
 *
 * Invariants beyond "no crash": every status is TL_OK or TL_ERR_DATA, and a
 * data error names the file; a batch has the projected column count, rows
 * within the batch bound, and arrays of that length.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../formats/format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(TlStatus st, const TlError *err, const char *path)
{
    if (st != TL_OK && st != TL_ERR_DATA) {
        fprintf(stderr, "status %d: %s\n", st, err->msg);
        abort();
    }
    if (st == TL_ERR_DATA && strstr(err->msg, path) == NULL) {
        fprintf(stderr, "a data error that does not name the file: %s\n", err->msg);
        abort();
    }
}

/* Read every batch of r's projection cols[0, n). */
static TlStatus drain(TlReader *r, const int *cols, int n, TlError *err)
{
    TL_TRY(tl_reader_project(r, cols, n, err));
    for (;;) {
        TlBatch *b = NULL;
        TL_TRY(tl_reader_next(r, &b, err));
        if (!b) return TL_OK;
        if (b->n_cols != n || b->n_rows < 1 || b->n_rows > tl_batch_rows()) abort();
        for (int c = 0; c < n; c++)
            if (!b->cols[c] || b->cols[c]->length != b->n_rows) abort();
        tl_batch_free(b);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[] = "/tmp/tally-fuzz-parquet-XXXXXX";
    char named[64];
    TlReadOptions opt;
    TlError err;
    TlReader *r = NULL;
    TlStatus st;
    int fd = mkstemp(path);
    if (fd < 0) return 0;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        unlink(path);
        return 0;
    }
    close(fd);
    memset(&opt, 0, sizeof opt);
    opt.from = "parquet";
    opt.quiet = true;
    snprintf(named, sizeof named, "%s", path);
    memset(&err, 0, sizeof err);
    st = tl_reader_open(named, &opt, NULL, &r, &err);
    check(st, &err, path);
    if (st == TL_OK) {
        const TlSchema *s = tl_reader_schema(r);
        int n = s->n_fields, k = 0;
        int *cols = malloc(sizeof *cols * (size_t)(n ? n : 1));
        /* every column; a column the reader refuses is left out */
        for (int i = 0; i < n; i++) {
            memset(&err, 0, sizeof err);
            if (tl_reader_project(r, &i, 1, &err) == TL_OK) cols[k++] = i;
            else check(err.code, &err, path);
        }
        memset(&err, 0, sizeof err);
        check(drain(r, cols, k, &err), &err, path);
        tl_reader_close(r);
        for (int j = 0; j < k && k > 1; j++) {
            r = NULL;
            memset(&err, 0, sizeof err);
            if (tl_reader_open(named, &opt, NULL, &r, &err) != TL_OK) abort();
            check(drain(r, &cols[j], 1, &err), &err, path);
            tl_reader_close(r);
        }
        free(cols);
    }
    unlink(path);
    return 0;
}
