/*
 * format.h -- the one small interface every file format sits behind.
 *
 * Reader: open (reads the header and decides the schema), then next-batch
 * with a projection, then close.  Writer: open on a sink, write batches,
 * finish.  The sink hides where bytes go: a temporary file renamed into place
 * on commit, or standard output.
 *
 * Type inference and restarts (../shared/CLI.md, "Type inference"): a CSV
 * reader infers each projected column's type from the rows of its first
 * batch.  When a later value does not fit, it records the widened type in
 * the run's TlTypeHints and returns TL_ERR_RESTART; the driver then throws
 * away everything the run produced (tl_sink_reset) and runs the plan again,
 * opening the reader with the hints, so the result is as if the wider type
 * had been known from the start.  Types never narrow, so restarts end.
 * Standard input is read fully into memory once, so it can be re-read.
 */
#ifndef TL_FORMAT_H
#define TL_FORMAT_H

#include "../lib/core/core.h"

/* Per-input minimum types learned by earlier attempts of the same run. */
typedef struct TlTypeHints {
    TlSchema cols;  /* name -> minimum type */
} TlTypeHints;

typedef struct TlReadOptions {
    char delimiter;          /* 0: by suffix (.tsv = tab, else ',') */
    const char *null_text;   /* a field equal to this is null; NULL: default */
    bool no_header;          /* columns are named column1, column2, ... */
    const TlSchema *schema;  /* --schema: fixed types by name (others inferred) */
    const char *from;        /* format override ("csv", "tsv"), or NULL */
    bool with_filename;      /* add a `filename` column (formats/filename.c) */
} TlReadOptions;

typedef struct TlReaderStats {
    int64_t rows;            /* data rows read */
    int64_t bytes;           /* input bytes consumed */
    int64_t batches;
    int64_t *converted;      /* per column: fields converted to values */
} TlReaderStats;

typedef struct TlReader TlReader;

/* Open `path` ("-" = standard input), read the header, and infer the types
 * of all columns from the first batch's rows (cheap; conversion is separate).
 * hints may be NULL.  Missing or unreadable files are TL_ERR_IO naming path. */
TlStatus tl_reader_open(const char *path, const TlReadOptions *opt,
                        TlTypeHints *hints, TlReader **out, TlError *err);
/* The file's columns and their current types (TL_TNULL: no value seen). */
const TlSchema *tl_reader_schema(const TlReader *r);
/* Convert only these columns (indexes into the reader schema, in output
 * order); the batches then hold exactly these columns.  Default: all. */
TlStatus tl_reader_project(TlReader *r, const int *cols, int n_cols, TlError *err);
/* Next batch (owned by the caller), or *out = NULL at the end of input.
 * Data errors name path, line and column. */
TlStatus tl_reader_next(TlReader *r, TlBatch **out, TlError *err);
const TlReaderStats *tl_reader_stats(const TlReader *r);
void tl_reader_close(TlReader *r); /* NULL-safe */

/* ------------------------------------------------------------- output */

typedef struct TlSink TlSink;

/* path NULL (or "-"): standard output.  A file sink writes to a temporary file in the
 * same directory (".name.tmp-XXXXXX") and renames it into place at commit.
 * Standard output is buffered (memory, then a temporary file) until commit
 * so a restart can discard it. */
TlStatus tl_sink_open(const char *path, TlSink **out, TlError *err);
TlStatus tl_sink_write(TlSink *s, const void *data, size_t n, TlError *err);
/* Compress a file sink's output: comp "gz" or "zst" (NULL: none), level 0:
 * the default (gzip 6, zstd 3).  Call before writing (formats/compress.c). */
TlStatus tl_sink_set_compression(TlSink *s, const char *comp, int level,
                                 TlError *err);
/* Discard everything written so far (restart). */
TlStatus tl_sink_reset(TlSink *s, TlError *err);
/* Make the output visible: fsync + rename, or copy to stdout.  EPIPE on
 * stdout is TL_ERR_PIPE (the caller ends quietly). */
TlStatus tl_sink_commit(TlSink *s, TlError *err);
/* Remove the temporary file, free everything.  NULL-safe.  After commit it
 * only frees. */
void tl_sink_close(TlSink *s);

typedef struct TlWriteOptions {
    char delimiter;   /* ',' default, '\t' for .tsv */
    bool header;      /* true */
} TlWriteOptions;

typedef struct TlWriter TlWriter;

/* format: "csv" or "tsv" (later: ndjson, parquet, arrow).  Writes the header. */
TlStatus tl_writer_open(TlSink *sink, const char *format, const TlSchema *schema,
                        const TlWriteOptions *opt, TlWriter **out, TlError *err);
TlStatus tl_writer_write(TlWriter *w, const TlBatch *b, TlError *err);
TlStatus tl_writer_finish(TlWriter *w, TlError *err);
void tl_writer_free(TlWriter *w);

/* Free the process-wide copy of standard input that readers of "-" share
 * (kept so a restarted run re-reads the same bytes).  Call once at exit,
 * after every reader and batch is gone. */
void tl_stdin_cache_free(void);

/* Format from a path suffix: "csv", "tsv", "ndjson", "parquet", "arrow", or
 * NULL if unknown; *compression set to "gz", "zst" or NULL. */
const char *tl_format_from_path(const char *path, const char **compression);

#endif
