/*
 * format.h -- the one small interface every file format sits behind.
 *
 * Reader: open (reads the header and decides the schema), then next-batch
 * with a projection, then close.  Writer: open on a sink, write batches,
 * finish.  The sink hides where bytes go: a temporary file renamed into place
 * on commit, or standard output.
 *
 * Type inference and restarts (man/tally.1, "Type inference"): a CSV
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
#include "../lib/core/ctx.h"
#include "input.h" /* the input as bytes; tl_input_name */

#include <sys/types.h>

/* The first value that made an inferred column a string: the planner
 * names it when such a column is used as a number. */
typedef struct TlInferNote {
    char *column, *file, *text;  /* owned */
    int64_t line;
    bool quoted;                 /* a quoted value under --quoted-as-string */
} TlInferNote;

/* Per-input minimum types learned by earlier attempts of the same run
 * (formats/infer.h keeps them). */
typedef struct TlTypeHints {
    TlSchema cols;  /* name -> minimum type */
    TlInferNote *notes;
    int n_notes, cap_notes;
    bool names_noted; /* header renames already noted on standard error */
    bool all_columns; /* a reader scanned its whole input for columns
                         (tl_reader_more_columns): every one is in cols */
} TlTypeHints;

/* --comment none: no comment character, and none sniffed (a line break
 * can never be one, so it marks "none" in the option's char). */
#define TL_COMMENT_NONE '\n'

typedef struct TlReadOptions {
    char delimiter;          /* 0: by suffix (.tsv = tab, else ',') */
    const char *null_text;   /* a field equal to this is null; NULL: default */
    bool no_header;          /* line 1 is data: columns column1, column2, ... */
    bool header;             /* line 1 is the header (neither: detected,
                                CSV/TSV, csv_header.c) */
    const TlSchema *schema;  /* --schema: fixed types by name (others inferred) */
    const char *from;        /* format override ("csv", "ndjson", ...), or NULL */
    bool with_filename;      /* add a `filename` column (formats/filename.c) */
    const TlCtx *ctx;        /* the run's context (its tuning and test
                                injection points); NULL: the environment's
                                tuning, no injection */
    bool quoted_as_string;   /* a column with a quoted value is a string */
    bool no_infer;           /* every column not in --schema is a string */
    bool quiet;              /* no notes on standard error (header renames) */
    bool tsv;                /* set by tl_reader_open for TSV: IANA rules */
    uint8_t ragged;          /* rows with another field count (TlRagged) */
    int64_t skip;            /* --skip: lines before the header; 0: a
                                preamble is sniffed (CSV/TSV); -1: none */
    char comment;            /* --comment: lines starting with it skipped;
                                0: sniffed (CSV/TSV: none or '#');
                                TL_COMMENT_NONE: none (--comment none) */
    int quote;               /* --quote: 0 the format's (CSV: sniffed, '"'
                                or '\''; TSV: none), -1 none, else the
                                character */
    int escape;              /* --escape: 0 sniffed (none or backslash;
                                TSV: none), -1 none, else the character */
    bool decimal_comma;      /* --decimal-comma: "1,5" is 1.5 (CSV, TSV) */
    int64_t max_columns;     /* --max-columns: most columns an input may
                                have (0: TL_MAX_COLUMNS); more is a data
                                error naming the line (tl_too_many_columns) */
    size_t max_record;       /* --max-record-size: a compressed input's
                                longest record in bytes; 0: TL_MAX_RECORD */
    int64_t morsel_rows;     /* CSV, NDJSON: records per morsel and batch;
                                0: the tuning's batch rows (tl_reader_locate
                                asks for 1: a morsel per record) */
    TlBuf *text;             /* NDJSON: the bytes to read instead of loading
                                the path (json_doc.c hands over the text it
                                made of a document); NULL: load the path */
} TlReadOptions;

/* The default of --max-columns: generous (a CSV header of a million
 * names, an NDJSON file of a million keys read in seconds), yet a bound on
 * what a hostile header or a file of ever new keys can make tally hold. */
#define TL_MAX_COLUMNS 1000000

/* The default --max-record-size: a record of a compressed input is held in
 * memory until its end (formats/compress/stream.c), so one without an end within
 * this many bytes is an error instead of growing without bound. */
#define TL_MAX_RECORD ((size_t)256 << 20)

/* --ragged: a CSV/TSV row with fewer or more fields than the header is an
 * error, is padded with nulls (fewer only; more stays an error), or is
 * skipped. */
typedef enum TlRagged { TL_RAGGED_ERROR, TL_RAGGED_PAD, TL_RAGGED_SKIP } TlRagged;

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
/* Columns after the sample the schema came from (NDJSON: keys first seen
 * after the first batch): scan the rest of the input for them and put
 * them with their types in the hints (which then note that the input was
 * scanned); *found: there was one.  For the planner, when a step names a
 * column no input has.  A reader that knows all its columns (CSV, a
 * sample that held the whole input, hints without room for more, a scan
 * made before) finds none.  A data error only for a column more than
 * --max-columns. */
TlStatus tl_reader_more_columns(TlReader *r, bool *found, TlError *err);
/* Whether r's format can find columns after its sample at all (false: a
 * CSV reader, whose header names them all); the planner opens an input
 * again for tl_reader_more_columns only when it can. */
bool tl_reader_may_find_columns(const TlReader *r);
/* Convert only these columns (indexes into the reader schema, in output
 * order); the batches then hold exactly these columns.  Default: all. */
TlStatus tl_reader_project(TlReader *r, const int *cols, int n_cols, TlError *err);
/* Next batch (owned by the caller), or *out = NULL at the end of input.
 * Data errors name path, line and column. */
TlStatus tl_reader_next(TlReader *r, TlBatch **out, TlError *err);
const TlReaderStats *tl_reader_stats(const TlReader *r);
/* True when r's column types come from the file itself (Parquet), never
 * from the rows: reading cannot change them. */
bool tl_reader_types_final(const TlReader *r);
/* The run context r was opened with (TlReadOptions.ctx; NULL: none). */
const TlCtx *tl_reader_ctx(const TlReader *r);
void tl_reader_close(TlReader *r); /* NULL-safe */

/* ------------------------------------------------- morsel-parallel reading
 *
 * A reader that can be split hands out morsels: byte ranges of whole
 * records found by a cheap serial pass (tl_reader_split: one thread at a
 * time, in input order).  Decoding morsels is thread-safe: any number of
 * threads may decode different morsels of one reader at once, each through
 * its own TlDecoder (its scratch memory).  Morsel boundaries depend only on
 * the input and TALLY_BATCH_ROWS, never on the thread count, so every
 * --threads gives the same batches.  Morsels grow from small to large (the
 * first ones are small so `--head 5` converts little); a morsel holds at
 * most tl_batch_rows() records.
 *
 * Types: decoders convert to the reader's schema as it stands (fixed after
 * open).  A value that does not fit makes tl_reader_decode return
 * TL_ERR_RESTART with the widened column types in *widen; the consumer,
 * reaching that morsel in order, calls tl_reader_widen (which records them
 * in the run's hints) and restarts the run, as with tl_reader_next.
 * Counters: decoding counts nothing; the consumer calls tl_reader_count for
 * each batch it takes, in order, so --stats is the same for every thread
 * count.  A reader is used either through tl_reader_next or through
 * split/decode, never both. */
typedef struct TlMorsel {
    int64_t seq;          /* 0, 1, 2, ...: input order */
    uint64_t begin, end;  /* byte range of the morsel's records */
    int64_t line;         /* physical line (1-based) where begin lies; -1:
                             unknown, the end was guessed (tl_reader_guess) */
} TlMorsel;

typedef struct TlDecoder TlDecoder;

/* True when r can be read as morsels (else use tl_reader_next). */
bool tl_reader_can_split(const TlReader *r);
/* How many bytes of r's input past offset pos are ready while a thread is
 * still decompressing it (a zstd stream, formats/compress/compress.c); UINT64_MAX
 * when the input is whole.  Never waits.  For scheduling only: a scan
 * leaves a morsel the decompressor has only just reached to its consumer
 * instead of another core, which the decompressor needs. */
uint64_t tl_reader_lead(const TlReader *r, uint64_t pos);
/* The next morsel (after the previous one) in *m; *got = false at the end
 * of input.  Not thread-safe. */
TlStatus tl_reader_split(TlReader *r, TlMorsel *m, bool *got, TlError *err);
/* Let tl_reader_split guess where morsels end instead of reading every
 * byte (the CSV reader: the first line end past the target size), for a
 * consumer that handles failures as follows.  Such a morsel has line -1
 * (unknown); its decoder checks the guess (no quote in it, fewer
 * records than a morsel may hold).  ANY failure of a guessed morsel (a
 * wrong guess, or a data error whose message needs the line) means: drop
 * it and every later morsel, call tl_reader_resplit, and split again.  A
 * reader that cannot guess (or whose input is still streaming) ignores
 * this.  Call before the first split. */
void tl_reader_guess(TlReader *r);
/* Split again from guessed morsel m (see tl_reader_guess): the next
 * tl_reader_split returns m's seq and begin, cut by reading every byte
 * (from then on the reader no longer guesses). */
TlStatus tl_reader_resplit(TlReader *r, const TlMorsel *m, TlError *err);
/* The type pass: settle the types of every column of r's input before
 * any row is converted, so that reading it with those types can never
 * restart (a run streams its rows only then: lib/run).  The readers'
 * inference runs over every record, in parallel over morsels, and
 * converts no value; the final (widened) types go to hints, with the
 * value that made a column a string, as restarts would have put them.
 * Call on a freshly opened reader, instead of reading it.  Data errors of
 * the records (the tokenizer's) are those a read reports.  *rows, *bytes,
 * *morsels: what it went over (--stats of `tally schema`). */
bool tl_reader_can_type_pass(const TlReader *r);
TlStatus tl_reader_type_pass(TlReader *r, TlTypeHints *hints, int64_t *rows,
                             int64_t *bytes, int64_t *morsels, TlError *err);
/* A decoder for r (thread-private scratch).  Free it before r. */
TlStatus tl_decoder_new(TlReader *r, TlDecoder **out, TlError *err);
void tl_decoder_free(TlDecoder *d); /* NULL-safe */
/* Decode all of morsel m into one batch of the projected columns (owned by
 * the caller; *out = NULL when the morsel holds no record).  Thread-safe
 * for distinct decoders.  Data errors name file, line and column.  On
 * TL_ERR_RESTART *widen (owned by the caller, free with tl_schema_free +
 * tl_free) holds (name, wider type) pairs; otherwise *widen = NULL. */
TlStatus tl_reader_decode(TlReader *r, TlDecoder *d, const TlMorsel *m,
                          TlBatch **out, TlSchema **widen, TlError *err);
/* Where record `row` (0-based) of the morsel d decoded last with
 * tl_reader_decode lies: its physical line (1-based) in *line, and the
 * input's name for messages (escaped) in name[0, cap).  *line = 0 when the
 * format keeps no lines or the input is a stream (its bytes may be gone, so
 * nobody should decode a morsel twice).  For messages about a row that a
 * step over the scan rejected: the scan decodes the morsel again, on that
 * error path only, to find the row. */
void tl_decoder_row_line(const TlReader *r, TlDecoder *d, int64_t row,
                         int64_t *line, char *name, size_t cap);
/* Where column k (of the batches handed out) of record `row` of the morsel
 * d decoded last with tl_reader_decode lies, as data errors count it: the
 * field number for CSV and TSV (in the record that starts at *line), the
 * character of its line where the key's value starts for NDJSON and a JSON
 * document (whose object may span lines: *line is then set to the value's
 * line); 0 when not known (a stream, a record without the key).  Error
 * paths only. */
int64_t tl_decoder_row_col(const TlReader *r, TlDecoder *d, int64_t row, int k,
                           int64_t *line);
/* Whether a morsel of r may be decoded a second time (its bytes are still
 * there: r's input is not a stream being decompressed). */
bool tl_reader_can_redecode(const TlReader *r);
/* Record a decode's widened types in the run's hints (consumer, in order). */
TlStatus tl_reader_widen(TlReader *r, const TlSchema *widen, TlError *err);
/* Count one decoded batch of `rows` records in the reader's stats (rows,
 * batches, converted columns) and `bytes` input bytes (consumer, in order). */
void tl_reader_count(TlReader *r, int64_t rows, int64_t bytes);

/* Where record `rec` (0-based, in the order the reader delivers records:
 * the rows of its batches) of r's input starts: its physical line
 * (1-based) in *line, and in *name the input's name as data errors give it
 * ("<stdin>" for "-"; lives as long as r).  When the input has at most rec
 * records, *line = 0 and *n_records is how many it has.  For error messages only: it reopens
 * the input (as tl_reader_open did for r) and reads it serially from the
 * start (formats/locate.c); r itself is not touched.  TL_ERR_USAGE when r
 * was not made by tl_reader_open or cannot be split into morsels. */
TlStatus tl_reader_locate(const TlReader *r, int64_t rec, int64_t *line,
                          int64_t *n_records, const char **name, TlError *err);
/* The same for the input at path read with opt, whether or not a reader of
 * it is open (a scan closes an input's reader once it is read); *name
 * lives as long as path. */
TlStatus tl_input_locate(const char *path, const TlReadOptions *opt, int64_t rec,
                         int64_t *line, int64_t *n_records, const char **name,
                         TlError *err);

/* ------------------------------------------------- late materialization
 *
 * A reader that can convert columns late decodes a morsel in two steps, so
 * a filter (or a top-k) can test its own columns first and have the other
 * columns converted only for the rows it keeps:
 *
 *   tl_reader_decode_early  tokenize the morsel and convert the projected
 *                           columns flagged in early[] (by position in the
 *                           batch; the reader may convert more); the others
 *                           are NULL in the batch.  The decoder keeps the
 *                           morsel's fields.  few >= 0: the caller will
 *                           want at most about that many rows (a top-k),
 *                           so the reader may keep less and find the
 *                           selected rows' fields again; -1: unknown.
 *   tl_reader_decode_rest   the rows sel[0..n) (ascending, distinct; n < 0:
 *                           all rows) with every projected column, the
 *                           early ones taken from that batch.  Ends the
 *                           morsel.
 *   tl_reader_decode_end    end the morsel without a rest (NULL-safe d).
 *
 * Exactness: decode_early + decode_rest fail exactly when tl_reader_decode
 * of the morsel would, with the same error or the same TL_ERR_RESTART and
 * widened types, whichever rows are selected (the CSV reader checks the
 * fields of rows it does not convert, and converts the whole morsel when in
 * doubt); the selected rows' values are those tl_reader_decode gives.  So
 * the output never depends on what was converted late.  Not thread-safe
 * per decoder; distinct decoders as tl_reader_decode. */

/* True when r implements decode_early/decode_rest (CSV does). */
bool tl_reader_can_late(const TlReader *r);
/* See above.  *out NULL when the morsel holds no record (the morsel is then
 * over).  Errors and restarts as tl_reader_decode. */
TlStatus tl_reader_decode_early(TlReader *r, TlDecoder *d, const TlMorsel *m,
                                const bool *early, int n_early, int64_t few,
                                TlBatch **out, TlSchema **widen, TlError *err);
/* See above.  *out NULL when n is 0.  early: decode_early's batch
 * (borrowed). */
TlStatus tl_reader_decode_rest(TlReader *r, TlDecoder *d, const TlBatch *early,
                               const uint32_t *sel, int64_t n, TlBatch **out,
                               TlSchema **widen, TlError *err);
/* See above. */
void tl_reader_decode_end(TlReader *r, TlDecoder *d);

/* ------------------------------------------------------------- output */

typedef struct TlSink TlSink;

/* What an output path names (target.c resolves its symlinks first). */
typedef enum TlTargetKind {
    TL_TARGET_NEW,      /* nothing there yet: created atomically */
    TL_TARGET_REGULAR,  /* a regular file: replaced atomically */
    TL_TARGET_STREAM,   /* a device, FIFO, socket or open descriptor: written
                           in place, never replaced */
} TlTargetKind;

typedef struct TlTarget {
    TlTargetKind kind;
    char *final;     /* the path after its symlinks (owned) */
    int fd;          /* STREAM: this process's own descriptor it names, or -1 */
    bool regular;    /* the object is a regular file (STREAM: through /proc) */
    dev_t dev;       /* REGULAR, STREAM: the object's identity */
    ino_t ino;
} TlTarget;

/* Resolve path's symlinks and classify the final object (target.c).
 * Errors: TL_ERR_IO "cannot write \"PATH\": ..." (a folder, a loop, an
 * unreadable link), TL_ERR_OOM.  Free with tl_target_free. */
TlStatus tl_target_resolve(const char *path, TlTarget *t, TlError *err);
void tl_target_free(TlTarget *t);

/* path NULL (or "-"): standard output.  A path is resolved (tl_target_resolve):
 * a new or regular final target gets a temporary file in its folder (unnamed
 * with O_TMPFILE, else ".name.tmp-XXXXXX") renamed into place at commit; a
 * device, FIFO, socket or open descriptor is opened now and written at
 * commit.  Standard output and those are buffered (memory, then an unnamed
 * temporary file) until commit so a restart can discard it.  ctx: the
 * run's (its tuning may ask for a named temporary file; NULL: the
 * environment's). */
TlStatus tl_sink_open(const TlCtx *ctx, const char *path, TlSink **out, TlError *err);
TlStatus tl_sink_write(TlSink *s, const void *data, size_t n, TlError *err);
/* Compress the output of a sink with a path (a file, or a FIFO or device
 * written in place): comp "gz" or "zst" (NULL: none), level 0:
 * the default (gzip 6, zstd 3).  Call before writing (formats/compress/compress.c). */
TlStatus tl_sink_set_compression(TlSink *s, const char *comp, int level,
                                 TlError *err);
/* Discard everything written so far (restart).  For a sink that streams
 * (below) and already wrote bytes out: TL_ERR_DATA, an internal error
 * (those bytes cannot be taken back). */
TlStatus tl_sink_reset(TlSink *s, TlError *err);
/* Standard output, written as it comes from now on instead of at commit:
 * bytes gather in a buffer of DIRECT_BUF bytes that goes out when full and
 * at each tl_sink_flush.  For a run that cannot restart any more (lib/run:
 * a pipeline with no blocking step whose types are settled).  False (and
 * nothing changes) for any other sink: a path keeps the all-or-nothing
 * rule. */
bool tl_sink_stream(TlSink *s);
/* Write what a streaming sink holds (nothing for another sink).  EPIPE:
 * TL_ERR_PIPE. */
TlStatus tl_sink_flush(TlSink *s, TlError *err);
/* Make the output visible: fsync + rename, or copy to stdout.  EPIPE on
 * stdout is TL_ERR_PIPE (the caller ends quietly). */
TlStatus tl_sink_commit(TlSink *s, TlError *err);
/* Remove the temporary file, free everything.  NULL-safe.  After commit it
 * only frees. */
void tl_sink_close(TlSink *s);

typedef struct TlWriteOptions {
    char delimiter;   /* ',' default, '\t' for .tsv */
    bool header;      /* true */
    const char *null_text; /* --out-null: written for null (CSV, TSV); NULL: empty */
    int width;        /* table: line width in cells; 0: 80 */
    int64_t max_rows; /* table: rows shown (first and last); 0: 40, < 0: all */
    bool color;       /* table: colour the header and the nulls */
    /* Parquet (formats/parquet/writer.c) */
    const char *parquet_compression; /* zstd snappy gzip lz4 none; NULL: zstd */
    int compress_level;      /* the codec's level; 0: its default */
    int64_t row_group_size;  /* rows per row group; 0: TL_PARQUET_ROW_GROUP */
    const char *created_by;  /* the footer's created_by; NULL: "tally" */
} TlWriteOptions;

/* The default rows per row group of Parquet output: DuckDB's, small enough
 * that a row group's columns are held and encoded in a few MiB, large
 * enough that dictionaries and codecs pay. */
#define TL_PARQUET_ROW_GROUP 122880

typedef struct TlWriter TlWriter;

/* format: a --to name of the registry (formats/registry.c: "csv", "tsv",
 * "ndjson", "json", "table", "parquet", ...; NULL: CSV).  Writes the
 * header (CSV, TSV; the table: everything at finish). */
TlStatus tl_writer_open(TlSink *sink, const char *format, const TlSchema *schema,
                        const TlWriteOptions *opt, TlWriter **out, TlError *err);
TlStatus tl_writer_write(TlWriter *w, const TlBatch *b, TlError *err);
TlStatus tl_writer_finish(TlWriter *w, TlError *err);
void tl_writer_free(TlWriter *w);

/* Inputs that change underneath a run (formats/mapped.c).  A mapped input
 * file that shrinks while it is read is a data error, never a SIGBUS
 * death, once the program has installed the handler (once, at start):
 * tl_input_guard_install.  tl_input_changes_reset at the start of a run
 * forgets earlier runs' findings; tl_input_changed gives TL_ERR_DATA
 * "FILE: changed size while being read (was N bytes, now M)" when some
 * input of the run shrank, and wins over any other error of the run (the
 * bytes read may have been the zeros that stand in for the lost ones). */
void tl_input_guard_install(void);
void tl_input_changes_reset(void);
TlStatus tl_input_changed(TlError *err);

/* Format from a path suffix (formats/registry.c): "csv", "tsv", "ndjson",
 * "json", "parquet", "arrow", or NULL if unknown; *compression set to
 * "gz", "zst" or NULL. */
const char *tl_format_from_path(const char *path, const char **compression);

#endif
