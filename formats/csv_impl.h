/*
 * csv_impl.h -- what the files of the CSV/TSV reader share: its
 * state (CsvReader, CsvCursor, CsvDecoder) and the functions each file
 * offers the others.  The design is described at the top of csv_read.c:
 *
 *   csv_read.c      the reader: open (header, type inference), the
 *                   morsel splitter and its SIMD scan, the reader's ops
 *   csv_tokenize.c  records into fields: the fast tokenizer (SIMD masks),
 *                   tl_csv_parse_record, tl_csv_tokenize, the cursors
 *   csv_decode.c    fields into values: inference of a column, the
 *                   converters, a morsel's decode and late materialization
 *   csv_header.c    whether line 1 is a header (header detection)
 */
#ifndef TL_CSV_IMPL_H
#define TL_CSV_IMPL_H

#include "../lib/core/cpu.h"
#include "fmt_impl.h"
#include "csv_dialect.h" /* and tsv.h */
#include "../lib/core/text.h"
#include "infer.h"

#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define CSV_X86 1
#else
#define CSV_X86 0
#endif

#define CSV_LITTLE (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)

#include "csv_numbers.h"

#define F_QUOTED 1u
#define F_ESCAPED 2u

/* Fields per batch are capped so very wide files keep batches bounded. */
#define MAX_BATCH_FIELDS ((int64_t)1 << 22)

#if CSV_X86
#define AVX2_ATTR __attribute__((target("avx2,popcnt,bmi")))
#endif

typedef int (*FlattenFn)(const uint8_t *p, size_t n, uint8_t delim, uint8_t quote,
                         size_t from, int words, uint64_t *dm, uint64_t *em,
                         uint64_t *qm);
typedef size_t (*SplitScanFn)(const uint8_t *p, size_t n, uint8_t delim,
                              size_t pos, int64_t want, size_t stop,
                              int64_t *rows, int64_t *lines, size_t *bad);

typedef struct CsvField {
    uint64_t off;
    uint32_t len;
    uint32_t flags;
} CsvField;

/* Tokenizing state and scratch: one per decoder (see the top). */
typedef struct CsvCursor {
    size_t pos;              /* where the next record starts */
    size_t end;              /* tokenizing stops here (a morsel's end) */
    int64_t line;            /* physical line of pos, 1-based */
    size_t blank_until;      /* one-column files: [pos, blank_until) known
                                not to be only blank lines up to the end */
    uint64_t *dm, *em, *qm;  /* WIN_WORDS + 1 each: the window's delimiter,
                                line-end and quote masks (fast tokenizer),
                                a zero word after the last one filled */
    size_t wb, we;           /* the window: bytes [wb, we) */
    bool wq;                 /* a quote in it */
    size_t nw;               /* words of the window filled */
    size_t *dp;              /* n_cols: a record's located delimiters */
    int *need;               /* n_cols: the delimiter ordinals located */
    uint8_t *need_mark;      /* n_cols: scratch for need_ordinals */
    int n_need, n_front;     /* need's count, how many from the start */
    int need_chk;            /* n_chk when need was computed */
    int *fchk;               /* n_cols: the float64 columns checked */
    int n_fchk;
    bool need_ok;            /* need matches the stored columns */

    CsvField *fields;        /* n_store * cap, column-major */
    int64_t cap;             /* rows each stored column can hold */
    int alloc_store;         /* columns fields has room for */
    CsvField **cols;         /* per column: its fields, NULL when not stored */
    CsvField *rec;           /* n_cols: one record, for parse_record */
    int *store;              /* the columns with cols[c] set, ascending */
    int n_store;
    int64_t *row_line;       /* cap */
    size_t *row_pos;         /* cap: where each record starts (the fast
                                tokenizer fills it only when keep_pos) */
    bool keep_pos;           /* row_pos wanted: some projected column is
                                not stored (reparse_fields reads it) */
    int64_t n_rows;
    bool saw_quote;          /* a record tokenized since cursor_seek has
                                r->quote */
    size_t batch_start, batch_end;
    TlBuf *window;           /* view target for this batch, or NULL */
    size_t window_base;

    uint8_t *scratch;        /* unescaping for messages and inference */
    size_t scratch_cap;

    /* late materialization (csv_decode_early / csv_decode_rest) */
    bool late_open;          /* a morsel's fields wait for the rest */
    uint8_t *chk;            /* n_cols: fields the tokenizer checks (1 int64,
                                2 float64, 0 none); NULL: none */
    int *chk_cols;           /* the columns chk marks, n_chk of them */
    int n_chk;
    int *runs;               /* n_runs (first, last) pairs: the runs of
                                adjacent int64 columns chk marks */
    int n_runs;
    bool doubt;              /* a checked field did not pass */
    bool checked;            /* the tokenizer checked the waiting fields */
    bool *skip;              /* n_cols: projected columns not stored */
    bool stored_all;         /* every projected column's fields are here */
    TlMorsel late_m;         /* the open morsel */
    size_t late_begin, late_end; /* its byte range (pages to drop) */
    CsvField *gat;           /* gat_cap: one column's selected fields */
    int64_t *gat_line;       /* their lines */
    int64_t gat_cap;
    double *fdiv;            /* fdiv_cap: convert_f64_sse's divisors */
    int64_t fdiv_cap;
} CsvCursor;

typedef struct CsvReader {
    TlReader base;
    /* read-only after open (and tl_reader_project) */
    char *name;              /* for messages: path or "<stdin>" */
    TlBuf *input;            /* the whole input */
    const uint8_t *p;        /* input->data */
    size_t size;
    size_t start;            /* first byte after the BOM */
    size_t data_start;       /* first byte after the header */
    int64_t data_line;       /* its physical line */
    uint8_t delim;
    uint8_t special[256];    /* 1 for delim, CR, LF */
    FlattenFn flatten;       /* block masks (SIMD or scalar), or NULL */
    SplitScanFn split_scan;  /* the splitter's block scan (SIMD or scalar) */
    char *null_text;         /* --null, or NULL */
    size_t null_len;
    char hint[240];          /* added to field-count errors (csv_dialect.c) */
    TlCsvDialect dialect;    /* as decided at open (quote errors name it) */
    bool quotes, tsv;        /* quote opens a quoted field; IANA TSV; */
    uint8_t quote;           /* the quote character; '"' when quotes is
                                false, so the masks route records holding
                                one to tl_csv_parse_record as always */
    uint8_t escape;          /* in a quoted field, escape + quote or escape
                                is that character (0: none) */
    bool decimal_comma;      /* --decimal-comma: numbers are read with
                                tl_infer_widen_dc and parse_f64_dc */
    uint8_t ragged, comment; /* --ragged (TlRagged); --comment (0: none) */
    int64_t skipped;         /* --skip: lines before start (line numbers) */
    bool headless;           /* line 1 was found to be data (not by
                                --no-header): messages about names say so */
    char json_like;          /* the text starts with '{' or '[' (that
                                character; else 0): quote errors name
                                --from ndjson and --from json */

    TlSchema schema;         /* every column, its type (fixed after open) */
    bool quoted_as_string;   /* --quoted-as-string */
    bool quiet;              /* no notes on standard error */
    bool *fixed;             /* per column: type fixed by --schema */
    TlTypeHints *hints;      /* written only by csv_widen (the consumer) */
    int n_cols;
    int64_t max_cols;        /* --max-columns */
    int64_t max_rows;        /* records per morsel, and in the first batch */
    size_t morsel_bytes;     /* fixed morsel target (tests), or 0 */
    int64_t avg_record;      /* bytes per record in the first batch (>= 1) */

    int *proj;               /* projected column indexes */
    int n_proj;
    TlSchema proj_schema;    /* schema of the batches handed out */

    /* serial: the splitter (csv_split); morsel_view copies the fields
     * above, from name on, and not these */
    size_t split_pos;        /* where the next morsel starts */
    int64_t split_line;
    int64_t split_seq;
    bool split_poison;       /* the record at split_pos does not parse */
    bool guess;              /* cut at the first line end past the target
                                (tl_reader_guess; see guess_cut) */
    size_t max_record;       /* --max-record-size (a stream's split) */
    struct CsvDecoder *own;  /* tl_reader_next's decoder, made on first use */
} CsvReader;

typedef struct CsvDecoder {
    TlDecoder base;
    CsvCursor cur;
    /* the morsel read with pread (morsel_view): a copy of the reader whose
     * p and size address copy */
    CsvReader view;
    bool viewing;            /* view holds the morsel being decoded */
    TlInputCopy copy;
} CsvDecoder;

/* ---------------------------------------------- shared inline checks */

static inline bool field_null(const CsvReader *r, const CsvField *f)
{
    if (f->flags & F_QUOTED) return false;
    if (f->len == 0) return true;
    return r->null_text && f->len == r->null_len &&
           memcmp(r->p + f->off, r->null_text, r->null_len) == 0;
}

/* The tokenizer's check of a field of a column d->chk marks (1 int64,
 * 2 float64; see "late materialization"): false when it might not convert
 * (not null, and not passing plain_i64/plain_f64). */
static inline bool chk_field(const CsvReader *r, const CsvField *f, uint8_t kind)
{
    const uint8_t *s = r->p + f->off;
    if (r->quoted_as_string && (f->flags & F_QUOTED)) return false;
    if (kind == 1 ? plain_i64_fast(s, f->len, r->size - f->off)
                  : plain_f64_fast(s, f->len, r->size - f->off))
        return true;
    return field_null(r, f);
}

/* ------------------------------------------------- csv_tokenize.c */

/* Unescape a field into d->scratch (tl_csv_unescape); returns its text and length.
 * NULL on OOM. */
const char *tl_csv_field_text(const CsvReader *r, CsvCursor *d, const CsvField *f,
                              size_t *len);
/* The text of an ESCAPED field's s[0..n) into out (room for n bytes): a
 * doubled quote is one, r->escape followed by the quote or by itself is
 * that character (any other escape is kept); returns its length. */
size_t tl_csv_unescape(const CsvReader *r, const uint8_t *s, size_t n, uint8_t *out);
/* Lines that text[0..n) adds: LF, CRLF and a lone CR each end one. */
int64_t tl_csv_count_lines(const uint8_t *s, size_t n);
/* The mask builder for mode (tl_csv_scan_best), NULL for
 * tl_csv_parse_record alone. */
FlattenFn tl_csv_flatten_fn(int mode);
/* Whether r's mask builder is the AVX2 one (the float64 converter then
 * takes its SSE path). */
bool tl_csv_avx2_mode(const CsvReader *r);
/* Parse the record at *pos.  Stores at most max_fields fields in out, field
 * k at out[k * stride], and counts all of them in *n_found.  Advances *pos
 * past the record's line end and *line by the lines it spans.  Reads only
 * r (thread-safe). */
TlStatus tl_csv_parse_record(const CsvReader *r, size_t *pos, int64_t *line,
                             CsvField *out, size_t stride, int max_fields,
                             int *n_found, TlError *err);
/* The splitter scan (SplitScanFn) of the dialects the SIMD one does not
 * know (a quote other than '"', an escape): it stops at every record, as
 * at a quote it cannot judge, so the splitter parses the records one by
 * one. */
size_t tl_csv_split_scan_records(const uint8_t *p, size_t n, uint8_t delim, size_t pos,
                                 int64_t want, size_t stop, int64_t *rows, int64_t *lines,
                                 size_t *bad);
/* ------------------------------------------------- csv_header.c */

/* The sample header detection reads: at most this many records after
 * line 1, within this many bytes from line 1's start. */
#define TL_HEADER_RECORDS 20480
#define TL_HEADER_BYTES ((size_t)1 << 20)

/* Whether the record at pos (line line, n fields) is a header, by the rule
 * of csv_header.c (man tally, "Header detection"), into *header.
 * more_follows: r->size is the bytes ready of a longer stream; *sure false
 * when the sample reached them, so the caller tries again with more.
 * Errors: out of memory only (a record that does not parse ends the
 * sample; reading reports it). */
TlStatus tl_csv_header_guess(const CsvReader *r, size_t pos, int64_t line, int n,
                             bool more_follows, bool *header, bool *sure, TlError *err);

/* Skip any empty lines at *pos, up to lim. */
void tl_csv_skip_blank(const CsvReader *r, size_t *pos, int64_t *line, size_t lim);
/* Tokenize records from d->pos (up to d->end) into rows [d->n_rows,
 * max_rows) of the cursor's stored columns; max_rows <= d->cap. */
TlStatus tl_csv_tokenize(const CsvReader *r, CsvCursor *d, int64_t max_rows,
                         TlError *err);
/* The cursors: allocate the fixed parts (n_cols wide), free, store the
 * columns want marks, make room for cap rows, start at pos. */
TlStatus tl_csv_cursor_init(const CsvReader *r, CsvCursor *d, TlError *err);
void tl_csv_cursor_free(CsvCursor *d);
void tl_csv_cursor_store(const CsvReader *r, CsvCursor *d, const bool *want);
TlStatus tl_csv_cursor_reserve(const CsvReader *r, CsvCursor *d, const bool *want,
                               int64_t cap, TlError *err);
void tl_csv_cursor_seek(CsvCursor *d, size_t pos, size_t end, int64_t line);

/* --------------------------------------------------- csv_decode.c */

/* The narrowest type, starting from t, that holds every non-null value of
 * column c in the tokenized batch (*why: the row that made a numeric
 * column a string, or -1). */
TlType tl_csv_infer_column(const CsvReader *r, const CsvCursor *d, int c, TlType t,
                           int64_t *why);
/* The reader's decode operations (fmt_impl.h). */
TlStatus tl_csv_decode(TlReader *base, TlDecoder *dbase, const TlMorsel *m,
                       TlBatch **out, TlSchema **widen, TlError *err);
TlStatus tl_csv_decode_early(TlReader *base, TlDecoder *dbase, const TlMorsel *m,
                             const bool *early, int n_early, int64_t few,
                             TlBatch **out, TlSchema **widen, TlError *err);
TlStatus tl_csv_decode_rest(TlReader *base, TlDecoder *dbase, const TlBatch *early,
                            const uint32_t *sel, int64_t n, TlBatch **out,
                            TlSchema **widen, TlError *err);
void tl_csv_decode_end(TlReader *base, TlDecoder *dbase);
/* The type pass over one morsel (fmt_impl.h, morsel_types). */
TlStatus tl_csv_morsel_types(TlReader *base, TlDecoder *dbase, const TlMorsel *m,
                             TlColTypes *out, int64_t *rows, const char **file,
                             TlError *err);

#endif
