/*
 * fmt_impl.h -- what the format implementations share behind format.h.
 *
 * format.h declares one reader and one writer interface; each format fills
 * in a small table of operations and embeds the base struct as its first
 * member, so format.c can dispatch without knowing the formats:
 *
 *     struct CsvReader { TlReader base; ...csv state... };
 *     tl_reader_next(r) -> r->ops->next(r)
 *
 * Input bytes (input.h): tl_input_load maps a regular file, reads
 * anything else fully, and serves "-" from the run's copy of standard
 * input (TlInputs: read once, so a restarted attempt sees the same
 * bytes).  A compressed input is decompressed by compress.c; readers that
 * load it with tl_input_load_stream may get it while a thread still fills
 * it (stream.c), and wait for the bytes they read (tl_input_wait).
 */
#ifndef TL_FMT_IMPL_H
#define TL_FMT_IMPL_H

#include "format.h"
#include "input.h"

/* The value that made a column a string, for the planner's note. */
typedef struct TlColNote {
    int64_t line;     /* where it lies */
    size_t len;
    bool quoted;      /* it was quoted (--quoted-as-string) */
    char text[];      /* the value */
} TlColNote;

/* One column of one morsel in the type pass (morsel_types, type_pass.c);
 * small, for a window of morsels of files of a million columns. */
typedef struct TlColTypes {
    uint8_t type;     /* TlType: the narrowest of the morsel's values (infer.h) */
    bool fixed;       /* its type is --schema's: not inferred, type unset */
    bool not_float;   /* type int64 and a value is no exact float64 (the
                         column cannot become float64: a string then) */
    TlColNote *note;  /* owned, or NULL: the value that made it a string
                         (with not_float: that integer) */
} TlColTypes;

typedef struct TlReaderOps {
    const TlSchema *(*schema)(const TlReader *r);
    TlStatus (*project)(TlReader *r, const int *cols, int n_cols, TlError *err);
    TlStatus (*next)(TlReader *r, TlBatch **out, TlError *err);
    void (*close)(TlReader *r);
    /* morsel reading (format.h); NULL when the format cannot split */
    TlStatus (*split)(TlReader *r, TlMorsel *m, bool *got, TlError *err);
    TlStatus (*decoder_new)(TlReader *r, TlDecoder **out, TlError *err);
    void (*decoder_free)(TlDecoder *d);
    TlStatus (*decode)(TlReader *r, TlDecoder *d, const TlMorsel *m,
                       TlBatch **out, TlSchema **widen, TlError *err);
    TlStatus (*widen)(TlReader *r, const TlSchema *widen, TlError *err);
    void (*count)(TlReader *r, int64_t rows, int64_t bytes);
    /* late materialization (format.h); NULL when the format has none */
    TlStatus (*decode_early)(TlReader *r, TlDecoder *d, const TlMorsel *m,
                             const bool *early, int n_early, int64_t few,
                             TlBatch **out, TlSchema **widen, TlError *err);
    TlStatus (*decode_rest)(TlReader *r, TlDecoder *d, const TlBatch *early,
                            const uint32_t *sel, int64_t n, TlBatch **out,
                            TlSchema **widen, TlError *err);
    void (*decode_end)(TlReader *r, TlDecoder *d);
    /* guessed morsel ends (format.h); NULL when the format never guesses */
    void (*guess)(TlReader *r);
    TlStatus (*resplit)(TlReader *r, const TlMorsel *m, TlError *err);
    /* the physical line of record `row` of the morsel d decoded last
     * (tl_decoder_row_line); NULL when the format keeps no lines */
    int64_t (*row_line)(const TlReader *r, TlDecoder *d, int64_t row);
    /* where column k of the batches handed out lies in record `row` of the
     * morsel d decoded last (tl_decoder_row_col); NULL when not known */
    int64_t (*row_col)(const TlReader *r, TlDecoder *d, int64_t row, int k,
                       int64_t *line);
    /* tl_reader_more_columns; NULL when the columns are known at open */
    TlStatus (*more_columns)(TlReader *r, bool *found, TlError *err);
    /* the type pass (type_pass.c): what inference makes of each column
     * (out[0, n_cols) of the reader's schema) over morsel m's records
     * alone, starting from no value, without converting any; *rows: its
     * records; *file: the name its messages give the input (borrowed).
     * Thread-safe for distinct decoders.  NULL when the format has none
     * (its output then waits for the run's end) */
    TlStatus (*morsel_types)(TlReader *r, TlDecoder *d, const TlMorsel *m,
                             TlColTypes *out, int64_t *rows, const char **file,
                             TlError *err);
} TlReaderOps;

/* ndjson_read.c: the offset in the NDJSON reader r's input where the value
 * of column k (of the batches handed out) starts in record `row` of the
 * morsel d decoded last (a string's opening quote); SIZE_MAX when the
 * record has no such key.  For json_doc.c's messages. */
size_t tl_ndjson_value_offset(const TlReader *r, TlDecoder *d, int64_t row, int k);

struct TlReader {
    const TlReaderOps *ops;
    TlReaderStats stats;
    /* set by tl_reader_open (NULL/zero otherwise): what tl_reader_locate
     * reopens; loc_opt's pointers are the caller's (they outlive the run) */
    char *loc_path;
    TlReadOptions loc_opt;
    /* the reader's input when it may be a stream (tl_input_wait), set by
     * the format's open; format.c then reports a failed stream in place of
     * a decode error (the stream's error comes first, as when the input
     * was decompressed whole at open).  NULL: none. */
    const TlBuf *input;
    /* a wrapper (tsv_read.c) whose inner reader gives a stream's pages
     * back itself: format.c leaves them to it */
    bool outer;
    /* the schema's types are the file's own (Parquet): reading the rows
     * cannot widen them, so `tally schema` need not read any row */
    bool types_final;
    /* the run's context (TlReadOptions.ctx), for the format's decoders;
     * set by the format's open (NULL: the environment's tuning) */
    const TlCtx *ctx;
};

/* Every format's decoder starts with this (tl_decoder_free dispatches). */
struct TlDecoder {
    const TlReaderOps *ops;
    /* the morsel being decoded in two steps (decode_early .. decode_rest
     * or decode_end) of a stream: its pin (tl_input_pin), or NULL */
    struct TlPin *pin;
};

typedef struct TlWriterOps {
    TlStatus (*write)(TlWriter *w, const TlBatch *b, TlError *err);
    TlStatus (*finish)(TlWriter *w, TlError *err);
    void (*free)(TlWriter *w);
} TlWriterOps;

struct TlWriter {
    const TlWriterOps *ops;
    TlSink *sink;
};

/* How many LF bytes s[0..n) holds (memchr from one to the next): the line
 * count of text without CR, which a reader that splits again from a
 * guessed morsel needs (CSV and NDJSON count CRs their own ways). */
int64_t tl_count_lf(const uint8_t *s, size_t n);
/* Open a reader from the bytes of its input ready so far (format.c).  try
 * opens with a schema sample from the first `need` bytes and sets *sure
 * when its result (reader or error) would be the same with the whole
 * input; otherwise the reader is closed and tried again with 4 times the
 * bytes (at most *next when try set it: the bytes that tell whether the
 * record they end inside is longer than --max-record-size), or, after an
 * error from part of a stream, with all of them. */
typedef TlStatus (*TlOpenTry)(void *ctx, size_t need, bool *sure, size_t *next,
                              TlReader **out, TlError *err);
TlStatus tl_reader_open_ready(TlOpenTry try, void *ctx, TlReader **out, TlError *err);
/* Where the last line of p[from..n) starts: after its last LF or CR, else
 * from.  (No record that starts before it ends in the bytes; a reader
 * that waits for more checks the bytes after it against
 * --max-record-size.) */
size_t tl_tail_line(const uint8_t *p, size_t from, size_t n);
/* --max-columns of opt (TL_MAX_COLUMNS when unset), and the data error of
 * a reader meeting one column more at line `line` of the input `name`
 * (0: no line, the column came from --schema). */
int64_t tl_max_columns(const TlReadOptions *opt);
TlStatus tl_too_many_columns(TlError *err, const char *name, int64_t line, int64_t max);

/* Format implementations. */
TlStatus tl_csv_reader_open(const char *path, const TlReadOptions *opt,
                            char delimiter, TlTypeHints *hints,
                            TlReader **out, TlError *err);
/* How a CSV reader finds records: want 0 its general tokenizer alone,
 * 1/2/3 the fast one with scalar/SSE2/AVX2 scanning (a level the build or
 * the CPU lacks falls back to the best there is below it), -1 the best
 * there is; returns the mode a reader uses.  The run's tuning chooses
 * (TALLY_TEST_CSV_SCAN); every mode gives the same results (tests run
 * each). */
int tl_csv_scan_best(int want);
TlStatus tl_csv_writer_open(TlSink *sink, char delimiter, /* null_text: --out-null */
                            const TlSchema *schema, bool header,
                            const char *null_text, TlWriter **out, TlError *err);
/* NDJSON (ndjson_read.c, ndjson_write.c). */
TlStatus tl_ndjson_reader_open(const char *path, const TlReadOptions *opt,
                               TlTypeHints *hints, TlReader **out, TlError *err);
TlStatus tl_ndjson_writer_open(TlSink *sink, const TlSchema *schema,
                               TlWriter **out, TlError *err);
/* JSON by content (json_doc.c): NDJSON, one array of objects, or objects
 * one after another; the document forms are read as NDJSON text made from
 * them. */
TlStatus tl_json_reader_open(const char *path, const TlReadOptions *opt,
                             TlTypeHints *hints, TlReader **out, TlError *err);
/* A .ndjson/.jsonl file: the NDJSON reader, or an error naming --from json
 * when the file starts as a JSON document (json_doc.c). */
TlStatus tl_json_ndjson_open(const char *path, const TlReadOptions *opt,
                             TlTypeHints *hints, TlReader **out, TlError *err);
/* The JSON array writer (ndjson_write.c): one document `[` ... `]`, one
 * object a line. */
TlStatus tl_json_writer_open(TlSink *sink, const TlSchema *schema,
                             TlWriter **out, TlError *err);
/* The table for people (table_write.c): a box of the first and last of at
 * most max_rows rows (< 0: all), fitted to width cells, coloured (header,
 * types, nulls) when color.  schema is borrowed: it must outlive the
 * writer. */
TlStatus tl_table_writer_open(TlSink *sink, const TlSchema *schema, int width,
                              int64_t max_rows, bool color, TlWriter **out,
                              TlError *err);
/* Parquet output (formats/parquet/writer.c): row groups of
 * opt->row_group_size rows, compressed as opt says; a usage error for an
 * unknown codec or a level outside its range; a data error for a result
 * of no column (Parquet has no such file). */
TlStatus tl_parquet_writer_open(TlSink *sink, const TlSchema *schema,
                                const TlWriteOptions *opt, TlWriter **out, TlError *err);
/* Parquet (formats/parquet/reader.c): the whole file loaded, its footer
 * and schema read; columns and types come from the file. */
TlStatus tl_parquet_reader_open(const char *path, const TlReadOptions *opt,
                                TlTypeHints *hints, TlReader **out, TlError *err);
/* A text reader's validity bitmap while it converts a column, made at the
 * first null (all bits set, then that row's cleared), so a column without
 * nulls never has one.  Inline: it runs once per null value. */
typedef struct TlValidity {
    TlBuf *buf;
    int64_t null_count;
} TlValidity;

static inline bool tl_validity_null(TlValidity *v, int64_t n_rows, int64_t row)
{
    if (!v->buf) {
        v->buf = tl_buf_new(tl_bitmap_bytes(n_rows), false);
        if (!v->buf) return false;
        memset(v->buf->data, 0xff, tl_bitmap_bytes(n_rows));
    }
    tl_bit_clear(v->buf->data, row);
    v->null_count++;
    return true;
}

/* The end of a converter: the array of its n values with v's nulls
 * (tl_array_new takes both buffers, also when it fails). */
static inline TlStatus tl_validity_array(TlType t, int64_t n, TlBuf *values,
                                         const TlValidity *v, TlArray **out, TlError *err)
{
    *out = tl_array_new(t, n, values, v->buf, v->null_count, NULL, 0);
    return *out ? TL_OK : tl_error_oom(err);
}

/* A converter's buffers given back (a misfit, or out of memory: no array
 * is made). */
static inline void tl_validity_release(TlBuf *values, const TlValidity *v)
{
    tl_buf_release(values);
    tl_buf_release(v->buf);
}

/* A text reader's copied strings (copy_block.c): one growing block whose
 * bytes long views address by offset (data buffer 1 beside the input
 * window, buffer 0 alone). */
typedef struct TlCopyBlock {
    uint8_t *data;
    size_t used, cap;
} TlCopyBlock;
/* Room for more bytes after used; false on OOM (the block is kept). */
bool tl_copy_block_reserve(TlCopyBlock *b, size_t more);
/* The data buffers of a string column of n views: window (NULL when no
 * view points into it) as buffer 0, then the block, which it adopts
 * and shrinks (b->data NULL afterwards, also after a failed adoption);
 * with no window the block's views are re-pointed to buffer 0.  *data NULL
 * when there is neither.  Errors: TL_ERR_OOM. */
TlStatus tl_copy_block_buffers(TlCopyBlock *b, TlBuf *window, TlView *views,
                               int64_t n, TlBuf ***data, uint32_t *n_data,
                               TlError *err);

#endif
