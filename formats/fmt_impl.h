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
 * Input bytes: tl_input_load maps a regular file, reads anything else fully,
 * and serves "-" from the run's copy of standard input (TlInputs: read
 * once, so a restarted attempt sees the same bytes).
 * A compressed input is decompressed by compress.c; readers that load it
 * with tl_input_load_stream may get it while a thread still fills it
 * (stream.c), and wait for the bytes they read (tl_input_wait, below).
 */
#ifndef TL_FMT_IMPL_H
#define TL_FMT_IMPL_H

#include "format.h"

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

/* The whole input as one buffer: an owned reference in *out (mapped file,
 * read bytes, or the cached standard input).  ctx: the run's (its tuning
 * decides how a compressed input is streamed; NULL: the environment's).  Errors are TL_ERR_IO naming
 * path ("cannot open \"x.csv\": No such file or directory"). */
TlStatus tl_input_load(const TlCtx *ctx, const char *path, TlBuf **out, TlError *err);
/* Mapped inputs (mapped.c). */
struct stat;
/* Map path's regular file (open on fd, st its fstat, size > 0) into *out:
 * fd then belongs to the mapping (mapped.c's descriptor pool).  *out NULL
 * (TL_OK) when it cannot be mapped: the caller reads fd itself.
 * TL_ERR_OOM (fd still the caller's). */
TlStatus tl_input_map(const char *path, int fd, const struct stat *st, TlBuf **out,
                      TlError *err);
/* True when b (from tl_input_load) maps a regular file read-only, so its
 * pages may be dropped (MADV_DONTNEED) and fault in again from the file. */
bool tl_input_mapped(const TlBuf *b);
/* Bytes [off, off + n) of mapped input b into dst with pread(2) on its
 * file.  A file now shorter than the mapping gives zeros past its end and
 * marks the input shrunk (tl_input_check reports it).  False when the
 * file cannot be read (then read the mapping). */
bool tl_input_pread(const TlBuf *b, uint8_t *dst, size_t off, size_t n);
/* TL_ERR_DATA "FILE: changed size while being read (was N bytes, now M)"
 * when mapped input b is marked shrunk or its file is now shorter than
 * the mapping (fstat); TL_OK otherwise and for every other buffer. */
TlStatus tl_input_check(const TlBuf *b, TlError *err);
/* The morsel [begin, end) of a mapped input b is decoded: give back
 * (MADV_DONTNEED) the input's blocks of 2 to 8 MiB that lie one block
 * behind it (format.c), so resident memory holds a few blocks of a big
 * file, not all of it; a later read (a string view into the input) faults
 * the page in again from the file.  Nothing for heap buffers.
 * Thread-safe. */
void tl_input_drop(const TlBuf *b, size_t begin, size_t end);
/* A decoder's copy of its morsel (tl_input_copy). */
typedef struct TlInputCopy {
    uint8_t *data;
    size_t cap;
} TlInputCopy;
/* Read the bytes [begin, end) of a mapped input b, and TL_COPY_PAD bytes
 * either side (within the input), into c with pread(2) on the file the
 * mapping was made from (kept open), not through the mapping: on a virtual
 * machine a page's first touch through a fresh mapping costs more than
 * copying it, and c's buffer, reused morsel after morsel, stays mapped
 * (see the CSV reader, "copies").  Returns p with p[i] the input's byte i
 * for i in [begin - pad, *hi), *hi = min(end + TL_COPY_PAD, b->size); NULL
 * when b is not a mapped file, the tuning says no_copy (tests), memory runs
 * out or the read fails or comes up short: the caller reads the mapping. */
#define TL_COPY_PAD 64
/* The first buffer's size: the readers' morsels grow to 2 MiB. */
#define TL_COPY_FIRST (((size_t)2 << 20) + ((size_t)64 << 10))
const uint8_t *tl_input_copy(const TlCtx *ctx, const TlBuf *b, TlInputCopy *c,
                             size_t begin, size_t end, size_t *hi);
void tl_input_copy_free(TlInputCopy *c);
/* How many LF bytes s[0..n) holds (memchr from one to the next): the line
 * count of text without CR, which a reader that splits again from a
 * guessed morsel needs (CSV and NDJSON count CRs their own ways). */
int64_t tl_count_lf(const uint8_t *s, size_t n);
/* *b (an owned reference from tl_input_load_stream) waited for to its end
 * and made a buffer of exactly its bytes; on error released and NULL. */
TlStatus tl_input_whole(TlBuf **b, TlError *err);
/* tl_input_load, except that a compressed input may come back still
 * streaming (below): for readers that wait for their bytes. */
TlStatus tl_input_load_stream(const TlCtx *ctx, const char *path, TlBuf **out,
                              TlError *err);
/* Streamed inputs (compress.c, "Streaming").  A buffer from
 * tl_input_load_stream may still be filling: its size is final, but only
 * bytes reported ready may be read.  A reader's serial parts (open, split) wait for the bytes
 * they need; a morsel is handed out only when its bytes and
 * TL_INPUT_AHEAD bytes after it (or the input's end) are ready, so
 * decoders, which may look a few bytes past a morsel (SIMD loads, a line
 * end's next byte), never wait.  For ordinary buffers these return at once.
 *
 * tl_input_wait: block until at least want bytes (capped at b->size) are
 * ready, or the stream ended short of them; *ready (may be NULL) gets the
 * count.  Errors: the stream's (data error naming the file and byte
 * offset, or OOM) when it failed before want.  The decompressor stays a
 * bounded lead ahead of the most bytes waited for, so splitters wait for
 * what they read (stream.c).  tl_input_finish: wait for the end (the bound
 * is lifted: the caller reads on to the end); the stream's error if it
 * failed.  tl_input_streaming: b is a stream still being filled.
 *
 * A stream whose size is not announced (gzip, zstd written by a pipe)
 * has b->size the address space reserved for it until the end; its bytes
 * past the end read as zeros.  tl_input_size: b's size once known (the
 * final size of a stream that ended, b->size for any other buffer and an
 * announced stream); while a stream of unknown size runs, b->size.  A
 * splitter that got fewer bytes than it waited for reads the end there;
 * a decoder reads it to bound its reads (any morsel of a stream still
 * running lies, with TL_INPUT_AHEAD bytes after it, before the end). */
#define TL_INPUT_AHEAD ((size_t)64 << 10)
/* Give back the memory of a streamed input's decoded bytes [begin, end)
 * (format.c calls it for a morsel whose batch holds no view into the
 * input): they read as zeros afterwards, so the stream is marked and a
 * reopen (restart) decompresses again (tl_input_restream).  Nothing when
 * b is not a stream or is shared by two readers (tl_input_share). */
void tl_input_drop_read(const TlBuf *b, size_t begin, size_t end);
/* The splitter cut the morsel [begin, end) of b (format.c, in order, before
 * it is handed out): pages two morsels share are given back when both are
 * decoded, pages three share never (stream.c, edge_done). */
void tl_input_cut(const TlBuf *b, size_t begin, size_t end);
/* A morsel [begin, end) of stream b whose batches may view the input: its
 * pages are given back (tl_input_drop_read) when the morsel is over
 * (tl_pin_done) and the last buffer of its batches' views is released.
 * tl_input_pin: a pin for the morsel (NULL when b is no stream that gives
 * pages back, or out of memory: the pages then stay); tl_pin_views: the
 * batch's string arrays view the input through buffers of the pin from
 * now on (a view it cannot move keeps the pages for good);
 * tl_pin_done: the morsel is over (NULL-safe). */
typedef struct TlPin TlPin;
TlPin *tl_input_pin(const TlBuf *b, size_t begin, size_t end);
void tl_pin_views(TlPin *p, TlBatch *batch);
void tl_pin_done(TlPin *p);
void tl_input_share(const TlBuf *b);
/* *b (path's buffer) again, decompressed anew when pages of it were
 * dropped (standard input's cache: its compressed bytes are kept). */
TlStatus tl_input_restream(const TlCtx *ctx, const char *path, TlBuf **b,
                           TlError *err);
TlStatus tl_input_wait(const TlBuf *b, size_t want, size_t *ready, TlError *err);
TlStatus tl_input_finish(const TlBuf *b, TlError *err);
bool tl_input_streaming(const TlBuf *b);
size_t tl_input_size(const TlBuf *b);
/* b is a stream (being filled or not): its bytes may have been given back
 * (tl_input_drop_read), so a morsel of it is never decoded twice. */
bool tl_input_is_stream(const TlBuf *b);
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
