/*
 * csv_read.c -- the CSV/TSV reader (RFC 4180 plus the usual looseness).
 *
 * The whole input is one immutable buffer (format.c maps the file or reads
 * standard input once).  The reader is split in two:
 *
 *   CsvReader  what every thread may read and nobody writes after open and
 *              tl_reader_project: the input, delimiter, null text, schema,
 *              --schema fixed columns, projection; plus the serial state of
 *              the morsel splitter and the counters (the consumer's).
 *   CsvCursor  where tokenizing stands and what it found: the fields of the
 *              records tokenized, their lines, scratch buffers.  Each
 *              decoder (TlDecoder, format.h) owns one, so threads decoding
 *              different morsels of one reader share nothing writable.
 *
 * Reading is split, then decode (format.h "morsel-parallel reading"), and
 * tl_reader_next is nothing but split + decode on the reader's own decoder,
 * so both paths give the same batches, values and errors by construction:
 *
 *   0. Split (serial, csv_split): the next morsel is the byte range of the
 *      next whole records.  Its target size grows geometrically with the
 *      morsel number (SPLIT_MIN << seq, at most SPLIT_MAX bytes) and it holds
 *      at most max_rows records (tl_batch_rows(), capped so a morsel has at
 *      most MAX_BATCH_FIELDS fields): boundaries depend on the bytes and
 *      TALLY_BATCH_ROWS only.  The scan is SIMD over 64-byte blocks (masks
 *      of LF, CR and '"'): with no quote in sight every line end (LF, CRLF,
 *      lone CR) ends a record, so a block costs a few instructions; with
 *      quotes, the quote parity (a prefix XOR) says which line ends are
 *      inside quoted fields, as long as every quote sits where RFC 4180
 *      puts it (checked with the delimiter mask).  A quote anywhere else (a
 *      loose quote inside an unquoted field, "ab"c) hands its record to
 *      parse_record, the general tokenizer itself, so every record is cut
 *      exactly where decoding will cut it.  Line ends are counted on the way
 *      (physical lines, also inside quotes, for messages): the morsel
 *      carries the line where it starts.  Empty lines
 *      count as records here (the limit is an upper bound; decode skips
 *      them).  A record parse_record rejects ends the morsel before it; the
 *      next morsel is that record to the end of the input, whose decode
 *      reports the error with the same words as always.
 *
 *   0b. Guessed cuts (format.h, tl_reader_guess; the scan of one complete
 *      input of several columns asks for them): the split reads only the
 *      bytes from the target size to the next line end (guess_cut) and
 *      hands out the morsel with line -1, so the consumer no longer reads
 *      (and faults in) every byte of the input before the decoders do.
 *      Without a quote in the morsel every line end ends a record, so the
 *      guess is the careful cut unless the morsel holds max_rows line ends
 *      or more: tokenize_morsel checks both (parse_record's records for
 *      quotes; the fast tokenizer takes none with a quote) and fails the
 *      morsel otherwise.  The consumer answers any failure of a guessed
 *      morsel (this one, or a data error, whose message needs the line) by
 *      dropping it and every later morsel and calling csv_resplit: the
 *      careful split goes on from that morsel, its line counted from the
 *      data's start (count_lines_fast), and never guesses again.  Morsels,
 *      values, errors and counters are thus those of the careful split.
 *
 *   0c. Copies (morsel_view): a decoder of a mapped file with two or more
 *      columns reads its morsel, and TL_COPY_PAD bytes either side, into a
 *      buffer of its own with pread, and decodes through a copy of the
 *      reader whose p addresses that buffer at the file's offsets and whose
 *      size ends with it; the split, type inference and long string views
 *      keep reading the mapping.  Every byte the decoder reads is the file's
 *      byte at the same offset, and no read passes size, as before: values,
 *      errors and restarts are the same (TALLY_NO_COPY=1 reads the mapping,
 *      for tests).  Why: on the virtual machines this runs on, the first
 *      touch of a page through a fresh mapping costs more than copying it
 *      (a mask pass over the 485 MB H2O file: 0.18-0.27 s through the
 *      mapping, 0.06-0.09 s through a reused 2 MB buffer), and the buffer,
 *      reused morsel after morsel, stays mapped and in cache.  A record
 *      never crosses a careful morsel's end; a guessed morsel whose end is
 *      inside a quoted field fails either way and is split again.
 *
 *   1. Tokenize (decode, tokenize()) the morsel's records into a flat,
 *      column-major array of fields (so the per-column conversion reads
 *      memory in order); nothing is copied:
 *
 *        cols[col][row] = { off:u64 | len:u32 | flags:u32 }
 *
 *      off/len cover the field's text, without the surrounding quotes for a
 *      quoted field.  flags: QUOTED (so "" is an empty string, not null) and
 *      ESCAPED (the text holds doubled quotes and must be unescaped).  Every
 *      record's fields are counted, projected or not, so a ragged record
 *      is always an error; but only projected columns are stored.
 *      row_line[row] keeps the physical line where each record starts, for
 *      error messages.
 *
 *      Plain records (no quote, LF/CRLF/CR ends) go through the fast
 *      tokenizer: SIMD compares turn a window of input into delimiter,
 *      line-end and quote bit masks; a record runs to the next line end,
 *      its field count is a popcount, and only the delimiters bounding the
 *      fields wanted are located.  Anything else goes to parse_record,
 *      record by record.
 *
 *   2. Convert only the projected columns, one tight loop per column and
 *      type.  Strings of at most 12 bytes are inlined in their views; longer
 *      ones point straight into the input buffer (the "window": the whole
 *      file, or for inputs over 4 GiB a slice starting at the morsel), which
 *      the string array holds a reference to.  Only ESCAPED fields (and
 *      views the window cannot address) are copied, unescaped, into a block
 *      the array owns.  float64 in the AVX2 mode (convert_f64_sse): SSE
 *      digit masks and multiply-adds give each field's digits and its
 *      power of ten, and the divisions (Clinger: exact operands, so the
 *      quotient rounds as strtod's) run four at a time in a second pass.
 *
 *   2b. Late materialization (format.h; see "late materialization" below):
 *      decode_early converts only the columns a filter or a top-k reads
 *      first, the tokenizer checking the other int64/float64 fields on the
 *      way; decode_rest converts the rest for the rows kept (for a top-k the
 *      waiting columns are not even stored: the few records are parsed
 *      again).  Any doubt converts the whole morsel as step 2 does, so
 *      values, types, restarts and errors never change.
 *
 *   3. Memory: when the input is a read-only mapping of a regular file
 *      (tl_input_mapped), a decoded morsel gives back the input's pages one
 *      block (2 to 8 MiB) behind it (tl_input_drop, MADV_DONTNEED): a later
 *      touch (a long string view) faults them in again from the file, so a
 *      scan of a big file holds a few blocks of it, not all of it.  Heap
 *      inputs (standard input, decompressed files) are never touched.
 *
 * Types (format.h, "restart protocol"): tl_reader_open infers every column's
 * type from the first batch (the first max_rows records) with
 * tl_infer_widen (infer.h: only spellings that read back as the same value
 * are numbers; plain integers and decimals are recognized inline,
 * infer_fast), starting from the run's hint for that name (or null).  An
 * inferred column converts only those spellings (the exact parsers of
 * csv_numbers.h), a --schema column every spelling the parser takes.  It
 * tokenizes them a chunk of INFER_CHUNK records at a time, storing only the
 * columns still undecided (a column that reached string, or is fixed by
 * --schema, is not stored), so inference costs a scan of the first batch,
 * not a batch of fields.  When a later value does not parse as its column's
 * type, a --schema column is a data error; otherwise decode hands back the
 * widened types of the morsel's projected columns (*widen) and returns
 * TL_ERR_RESTART, and tl_reader_widen (the consumer, in order) puts them into
 * the hints.  Types only widen, so a run restarts at most a few times per
 * column.  Decoding writes nothing shared: counters are added by
 * tl_reader_count.
 *
 * Records end at LF, CRLF or a lone CR (also inside quoted fields, where
 * they are data).  Empty lines are skipped in files with several columns;
 * in a one-column file an empty line is a null, except trailing empty lines
 * at the end of the input.  A UTF-8 BOM is skipped.
 */
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
/* Morsel target sizes: the first SPLIT_MIN bytes, doubling to SPLIT_MAX. */
#define SPLIT_MIN ((size_t)16 << 10)
#define SPLIT_MAX ((size_t)2 << 20)
/* Records tokenized at a time by the inference pass of open, and at most
 * INFER_FIELDS fields: inference reads a chunk one column after another,
 * so a wide file's chunk holds fewer records and its input stays in cache
 * from one column to the next (2,000 columns: 131 records; a count over
 * a 79 MB file of them took half the time).  The types do not depend on
 * the chunks. */
#define INFER_CHUNK 2048
#define INFER_FIELDS ((int64_t)1 << 18)

typedef int (*FlattenFn)(const uint8_t *p, size_t n, uint8_t delim, size_t from,
                         int words, uint64_t *dm, uint64_t *em, uint64_t *qm);
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
    bool saw_quote;          /* a record tokenized since cursor_seek has '"' */
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
    char hint[160];          /* added to field-count errors (csv_dialect.c) */
    bool quotes, tsv;        /* '"' opens a quoted field (--quote); IANA TSV; */
    uint8_t ragged, comment; /* --ragged (TlRagged); --comment (0: none) */
    int64_t skipped;         /* --skip: lines before start (line numbers) */

    TlSchema schema;         /* every column, its type (fixed after open) */
    bool quoted_as_string;   /* --quoted-as-string */
    bool quiet;              /* no notes on standard error */
    bool *fixed;             /* per column: type fixed by --schema */
    TlTypeHints *hints;      /* written only by csv_widen (the consumer) */
    int n_cols;
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

/* ------------------------------------------------------------- messages */

/* 1-based character column of byte offset at: UTF-8 continuation bytes do
 * not count, so the column matches what an editor shows. */
static int64_t column_of(const CsvReader *r, size_t at)
{
    size_t ls = at;
    int64_t col = 1;
    while (ls > r->start && r->p[ls - 1] != '\n' && r->p[ls - 1] != '\r') ls--;
    for (size_t i = ls; i < at; i++)
        if ((r->p[i] & 0xC0) != 0x80) col++;
    return col;
}

/* Unescape a field into d->scratch ("" -> "); returns its text and length.
 * NULL on OOM. */
static const char *field_text(const CsvReader *r, CsvCursor *d, const CsvField *f,
                              size_t *len)
{
    const uint8_t *s = r->p + f->off;
    size_t n = 0;
    if (!(f->flags & F_ESCAPED)) {
        *len = f->len;
        return (const char *)s;
    }
    if (d->scratch_cap < f->len + 1) {
        uint8_t *g = tl_realloc(d->scratch, (size_t)f->len + 1);
        if (!g) return NULL;
        d->scratch = g;
        d->scratch_cap = (size_t)f->len + 1;
    }
    for (uint32_t i = 0; i < f->len; i++) {
        d->scratch[n++] = s[i];
        if (s[i] == '"') i++; /* the second quote of a pair */
    }
    *len = n;
    return (const char *)d->scratch;
}

/* ------------------------------------------------------------ tokenizer */

/* Lines that text[0..n) adds: LF, CRLF and a lone CR each end one. */
static int64_t count_lines(const uint8_t *s, size_t n)
{
    int64_t lines = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n') lines++;
        else if (s[i] == '\r' && (i + 1 == n || s[i + 1] != '\n')) lines++;
    }
    return lines;
}

/* ------------------------------------------------- the fast tokenizer
 *
 * Most records are plain: unquoted fields, LF or CRLF ends.  For them the
 * reader turns a window of input (WIN_WORDS 64-byte blocks from where it
 * stands) into three bitmaps with SIMD compares -- delimiters, line ends
 * (LF, CR) and quotes, one bit a byte -- and takes records straight from
 * them, without listing every delimiter:
 *
 *   - the record ends at the next line-end bit: the lowest set bit of the
 *     64 mask bits from its start (one count-trailing-zeros), else the
 *     first nonzero mask word after them (none in the window: the window
 *     moves to the record; none up to the morsel's end: the last record,
 *     for parse_record);
 *   - it is plain when no quote bit lies before its end, it is not blank,
 *     and the popcount of its delimiter bits is n_cols - 1 (so a ragged
 *     record goes to parse_record, which reports it as always);
 *   - only the delimiters that bound a wanted field are located: the
 *     stored columns' and the checked ones' (late materialization).  The
 *     needed delimiter ordinals (d->need, ascending) are found walking the
 *     record's delimiter bits from its start for the lower half and from
 *     its end for the upper half, so a scan of the last column costs one
 *     count-leading-zeros, not a position per field; in a record of at
 *     most 64 bytes, where PDEP is fast (BMI2, not AMD before Zen 3), one
 *     PDEP each.  With one stored field and nothing checked (a scan of
 *     one column), or with one int64 column checked besides (a filter on
 *     one column keeping another), such a record's fields come straight
 *     from two PDEPs each, on the delimiter bits with the line end as a
 *     last delimiter and a virtual one before the start, without d->dp
 *     (with two stored fields that measured slower than the dp path).
 *
 * Anything else (a quote in the record, a blank line, a ragged record, the
 * last record of the input, a record longer than the window) goes to
 * parse_record, the general tokenizer, which gives the same fields.
 *
 * Three mask builders with the same results: AVX2 (when the CPU has it),
 * SSE2 (every x86-64), scalar; chosen at open (r->flatten), and
 * tl_csv_scan_mode forces one (or parse_record alone). */

#define WIN_WORDS 256 /* window: at most 16 KiB of input */

/* Fill dm/em/qm[0..words) with the delimiter, line-end and quote masks of
 * the blocks p[from + 64 w ..), bits at or past n cleared. */
#define DEFINE_MASKS(NAME, ATTR, MASK)                                         \
    ATTR static int NAME(const uint8_t *p, size_t n, uint8_t delim,            \
                         size_t from, int words, uint64_t *dm, uint64_t *em,   \
                         uint64_t *qm)                                         \
    {                                                                          \
        int w;                                                                 \
        for (w = 0; w < words; w++, from += 64) {                              \
            if (from < n && n - from >= 64) {                                  \
                MASK(p + from, delim, dm + w, em + w, qm + w);                 \
            } else if (from < n) {                                             \
                uint8_t tail[64] = {0};                                        \
                uint64_t keep = ~(uint64_t)0 >> (64 - (n - from));             \
                memcpy(tail, p + from, n - from);                              \
                MASK(tail, delim, dm + w, em + w, qm + w);                     \
                dm[w] &= keep;                                                 \
                em[w] &= keep;                                                 \
                qm[w] &= keep;                                                 \
            } else {                                                           \
                dm[w] = em[w] = qm[w] = 0;                                     \
            }                                                                  \
        }                                                                      \
        return w;                                                              \
    }

static inline void mask_scalar(const uint8_t *p, uint8_t delim, uint64_t *dm,
                               uint64_t *em, uint64_t *qm)
{
    uint64_t m = 0, e = 0, q = 0;
    for (int k = 0; k < 64; k++) {
        m |= (uint64_t)(p[k] == delim) << k;
        e |= (uint64_t)(p[k] == '\n' || p[k] == '\r') << k;
        q |= (uint64_t)(p[k] == '"') << k;
    }
    *dm = m;
    *em = e;
    *qm = q;
}
DEFINE_MASKS(flatten_scalar, , mask_scalar)

#if CSV_X86
static inline void mask_sse2(const uint8_t *p, uint8_t delim, uint64_t *dm,
                             uint64_t *em, uint64_t *qm)
{
    const __m128i d = _mm_set1_epi8((char)delim), u = _mm_set1_epi8('"');
    const __m128i lf = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r');
    uint64_t m = 0, e = 0, q = 0;
    for (int k = 0; k < 4; k++) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k));
        __m128i l = _mm_or_si128(_mm_cmpeq_epi8(x, lf), _mm_cmpeq_epi8(x, cr));
        m |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, d)) << (16 * k);
        e |= (uint64_t)(uint16_t)_mm_movemask_epi8(l) << (16 * k);
        q |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, u)) << (16 * k);
    }
    *dm = m;
    *em = e;
    *qm = q;
}
DEFINE_MASKS(flatten_sse2, , mask_sse2)

#define AVX2_ATTR __attribute__((target("avx2,popcnt,bmi")))
#define AVX2_MM(x) ((uint64_t)(uint32_t)_mm256_movemask_epi8(x))
AVX2_ATTR static inline void mask_avx2(const uint8_t *p, uint8_t delim,
                                       uint64_t *dm, uint64_t *em, uint64_t *qm)
{
    const __m256i d = _mm256_set1_epi8((char)delim), u = _mm256_set1_epi8('"');
    const __m256i lf = _mm256_set1_epi8('\n'), cr = _mm256_set1_epi8('\r');
    __m256i x0 = _mm256_loadu_si256((const __m256i *)(const void *)p);
    __m256i x1 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32));
    __m256i l0 = _mm256_or_si256(_mm256_cmpeq_epi8(x0, lf), _mm256_cmpeq_epi8(x0, cr));
    __m256i l1 = _mm256_or_si256(_mm256_cmpeq_epi8(x1, lf), _mm256_cmpeq_epi8(x1, cr));
    *dm = AVX2_MM(_mm256_cmpeq_epi8(x0, d)) | AVX2_MM(_mm256_cmpeq_epi8(x1, d)) << 32;
    *em = AVX2_MM(l0) | AVX2_MM(l1) << 32;
    *qm = AVX2_MM(_mm256_cmpeq_epi8(x0, u)) | AVX2_MM(_mm256_cmpeq_epi8(x1, u)) << 32;
}
#undef AVX2_MM
DEFINE_MASKS(flatten_avx2, AVX2_ATTR, mask_avx2)
#endif

static int scan_forced = -1;

/* Force how the CSV reader finds records, for readers opened afterwards:
 * 0 parse_record alone, 1 the fast tokenizer with scalar masks, 2 with
 * SSE2, 3 with AVX2 (a level the build or the CPU lacks falls back to the
 * next lower one); -1 restores the automatic choice (the best there is).
 * Returns the mode such a reader uses.  For tests: all give the same
 * results. */
int tl_csv_scan_mode(int force)
{
    int best = 1;
#if CSV_X86
    const unsigned need = TL_CPU_AVX2 | TL_CPU_POPCNT | TL_CPU_BMI1;
    best = (tl_cpu_features() & need) == need ? 3 : 2;
#endif
    if (force >= -1 && force <= 3) scan_forced = force;
    if (scan_forced >= 0 && scan_forced < best) return scan_forced;
    return best;
}

/* The mask builder for the current mode, NULL for parse_record alone. */
static FlattenFn flatten_fn(void)
{
    switch (tl_csv_scan_mode(-2)) {
#if CSV_X86
    case 3: return flatten_avx2;
    case 2: return flatten_sse2;
#endif
    case 1: return flatten_scalar;
    default: return NULL;
    }
}
/* ------------------------------------------------------- the splitter scan
 *
 * From pos, a record start, find record ends without the tokenizer.
 * 64-byte blocks become masks of the delimiter, LF, CR and '"'; the quote
 * parity (a prefix XOR of the quote mask, carried across blocks) tells
 * which bytes lie inside quotes, and a line end outside quotes (an LF, or a
 * CR not followed by LF: CRLF ends a line once, at its LF) ends a record.
 * That is exactly what parse_record does as long as every quote opens a
 * field (follows a delimiter, a line end, the record start or a closing
 * quote: "" inside quotes is a closing and an opening quote) and every
 * closing quote is followed by a delimiter, line end, quote or the end.
 * The first quote breaking that (a loose quote inside an unquoted field,
 * "ab"c) stops the scan: *bad = its position, and the caller parses the
 * record holding it with parse_record itself.
 *
 * Stops after `want` record ends, at the first one that ends at or past
 * `stop`, at a bad quote, or at n (*bad = SIZE_MAX).  Adds the record ends
 * taken to *rows and the physical lines up to the last of them (line ends
 * inside quotes too) to *lines, and returns the position after it (pos
 * when none). */
#define DEFINE_SPLIT_SCAN(NAME, ATTR, MASK, DMASK)                             \
    ATTR static size_t NAME(const uint8_t *p, size_t n, uint8_t delim,         \
                            size_t pos, int64_t want, size_t stop,             \
                            int64_t *rows, int64_t *lines, size_t *bad)        \
    {                                                                          \
        size_t b = pos, last = pos;                                            \
        int64_t got = 0, lb = 0, ln = 0; /* lines before b, up to last */     \
        uint64_t inq = 0, pcl = 0; /* carries */                               \
        *bad = SIZE_MAX;                                                       \
        while (b < n) {                                                        \
            uint64_t d, lf, cr, q, sp, px, open, close, nx, wrong, e, ea, psp; \
            uint64_t keep = ~(uint64_t)0;                                      \
            uint8_t tail[64];                                                  \
            const uint8_t *src = p + b;                                        \
            size_t len = n - b >= 64 ? 64 : n - b;                             \
            if (len < 64) {                                                    \
                memset(tail, 0, sizeof tail);                                  \
                memcpy(tail, p + b, len);                                      \
                src = tail;                                                    \
                keep >>= 64 - len;                                             \
            }                                                                  \
            MASK(src, &lf, &cr, &q);                                           \
            lf &= keep;                                                        \
            cr &= keep;                                                        \
            q &= keep;                                                         \
            ea = lf | (cr & ~(lf >> 1));                                       \
            if ((cr >> 63) && b + 64 < n && p[b + 64] == '\n')                 \
                ea &= ~((uint64_t)1 << 63); /* CRLF across blocks */          \
            if (!(q | inq)) {                                                  \
                /* no quote in sight: every line end ends a record */         \
                e = ea;                                                        \
                wrong = 0;                                                     \
                close = 0;                                                     \
                px = 0;                                                        \
                goto take;                                                     \
            }                                                                  \
            d = DMASK(src, delim) & keep;                                      \
            psp = b == pos || p[b - 1] == delim || p[b - 1] == '\n' ||         \
                  p[b - 1] == '\r';                                            \
            sp = d | lf | cr;                                                  \
            px = q ^ (q << 1);                                                 \
            px ^= px << 2;                                                     \
            px ^= px << 4;                                                     \
            px ^= px << 8;                                                     \
            px ^= px << 16;                                                    \
            px ^= px << 32;                                                    \
            px ^= 0 - inq;           /* 1: inside quotes (opening included) */ \
            open = q & px;                                                     \
            close = q & ~px;                                                   \
            nx = (sp | q) >> 1;                                                \
            if (len < 64) {                                                    \
                nx |= (uint64_t)1 << (len - 1); /* the end follows */         \
            } else if (b + 64 < n) {                                           \
                uint8_t c_ = p[b + 64];                                        \
                nx |= (uint64_t)(c_ == delim || c_ == '\n' || c_ == '\r' ||    \
                                 c_ == '"') << 63;                             \
            } else {                                                           \
                nx |= (uint64_t)1 << 63;                                       \
            }                                                                  \
            wrong = (open & ~((sp << 1) | psp) & ~((close << 1) | pcl)) |      \
                    (close & ~nx);                                             \
            e = ea & ~px;                                                      \
            if (wrong) e &= (wrong & (0 - wrong)) - 1;                         \
        take:                                                                  \
            if (got + __builtin_popcountll(e) < want && b + 64 < stop) {       \
                if (e) {                                                       \
                    int i_ = 63 - __builtin_clzll(e);                          \
                    last = b + (size_t)i_ + 1;                                 \
                    ln = lb + __builtin_popcountll(ea & (~(uint64_t)0 >> (63 - i_))); \
                    got += __builtin_popcountll(e);                            \
                }                                                              \
            } else {                                                           \
                while (e) {                                                    \
                    int i_ = __builtin_ctzll(e);                               \
                    e &= e - 1;                                                \
                    last = b + (size_t)i_ + 1;                                 \
                    ln = lb + __builtin_popcountll(ea & (~(uint64_t)0 >> (63 - i_))); \
                    if (++got == want || last >= stop) goto done;             \
                }                                                              \
            }                                                                  \
            if (wrong) {                                                       \
                *bad = b + (size_t)__builtin_ctzll(wrong);                     \
                goto done;                                                     \
            }                                                                  \
            lb += __builtin_popcountll(ea);                                    \
            inq = px >> 63;                                                    \
            pcl = close >> 63;                                                 \
            b += 64;                                                           \
        }                                                                      \
    done:                                                                      \
        *rows += got;                                                          \
        *lines += ln;                                                          \
        return last;                                                           \
    }

static inline void split_mask_scalar(const uint8_t *p, uint64_t *lf, uint64_t *cr,
                                     uint64_t *q)
{
    uint64_t a = 0, b = 0, c = 0;
    for (int k = 0; k < 64; k++) {
        a |= (uint64_t)(p[k] == '\n') << k;
        b |= (uint64_t)(p[k] == '\r') << k;
        c |= (uint64_t)(p[k] == '"') << k;
    }
    *lf = a;
    *cr = b;
    *q = c;
}
static inline uint64_t split_dmask_scalar(const uint8_t *p, uint8_t delim)
{
    uint64_t a = 0;
    for (int k = 0; k < 64; k++) a |= (uint64_t)(p[k] == delim) << k;
    return a;
}
DEFINE_SPLIT_SCAN(split_scan_scalar, , split_mask_scalar, split_dmask_scalar)

#if CSV_X86
static inline void split_mask_sse2(const uint8_t *p, uint64_t *lf, uint64_t *cr,
                                   uint64_t *q)
{
    const __m128i l = _mm_set1_epi8('\n'), c = _mm_set1_epi8('\r'),
                  u = _mm_set1_epi8('"');
    uint64_t a = 0, b = 0, e = 0;
    for (int k = 0; k < 4; k++) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k));
        a |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, l)) << (16 * k);
        b |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, c)) << (16 * k);
        e |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, u)) << (16 * k);
    }
    *lf = a;
    *cr = b;
    *q = e;
}
static inline uint64_t split_dmask_sse2(const uint8_t *p, uint8_t delim)
{
    const __m128i t = _mm_set1_epi8((char)delim);
    uint64_t a = 0;
    for (int k = 0; k < 4; k++) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k));
        a |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, t)) << (16 * k);
    }
    return a;
}
DEFINE_SPLIT_SCAN(split_scan_sse2, , split_mask_sse2, split_dmask_sse2)

#define SPLIT_MM(x, v) ((uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(x, v)))
AVX2_ATTR static inline void split_mask_avx2(const uint8_t *p, uint64_t *lf,
                                             uint64_t *cr, uint64_t *q)
{
    const __m256i l = _mm256_set1_epi8('\n'), c = _mm256_set1_epi8('\r'),
                  u = _mm256_set1_epi8('"');
    __m256i x0 = _mm256_loadu_si256((const __m256i *)(const void *)p);
    __m256i x1 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32));
    *lf = SPLIT_MM(x0, l) | SPLIT_MM(x1, l) << 32;
    *cr = SPLIT_MM(x0, c) | SPLIT_MM(x1, c) << 32;
    *q = SPLIT_MM(x0, u) | SPLIT_MM(x1, u) << 32;
}
AVX2_ATTR static inline uint64_t split_dmask_avx2(const uint8_t *p, uint8_t delim)
{
    const __m256i t = _mm256_set1_epi8((char)delim);
    __m256i x0 = _mm256_loadu_si256((const __m256i *)(const void *)p);
    __m256i x1 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32));
    return SPLIT_MM(x0, t) | SPLIT_MM(x1, t) << 32;
}
#undef SPLIT_MM
DEFINE_SPLIT_SCAN(split_scan_avx2, AVX2_ATTR, split_mask_avx2, split_dmask_avx2)
#endif

static int64_t split_force_rows, split_force_bytes;

/* For tests: readers opened afterwards take rows for tl_batch_rows() (0:
 * that) -- records per morsel and in the inference batch -- and cut morsels
 * with a fixed target of bytes (0: the default, growing). */
void tl_csv_split_force(int64_t rows, int64_t bytes)
{
    split_force_rows = rows > 0 ? rows : 0;
    split_force_bytes = bytes > 0 ? bytes : 0;
}

/* The splitter scan for the current mode (scalar for modes 0 and 1). */
static SplitScanFn split_scan_fn(void)
{
    switch (tl_csv_scan_mode(-2)) {
#if CSV_X86
    case 3: return split_scan_avx2;
    case 2: return split_scan_sse2;
#endif
    default: return split_scan_scalar;
    }
}

/* ------------------------------------------- checks (late materialization)
 * (plain_i64, plain_f64 and their fast forms: csv_numbers.h) */

static inline bool field_null(const CsvReader *r, const CsvField *f);

/* True when s[0..n) (n <= 16, 16 bytes readable) holds only digits and
 * delimiters and no field starts with a zero followed by a digit: adjacent
 * int64 fields that all convert (an empty one is null: unquoted, as every
 * field of a plain record). */
static inline bool span_digits(const uint8_t *s, size_t n, uint8_t delim)
{
#if CSV_X86
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)s);
    __m128i dg = _mm_sub_epi8(x, _mm_set1_epi8('0'));
    __m128i isd = _mm_cmpeq_epi8(_mm_min_epu8(dg, _mm_set1_epi8(9)), dg);
    __m128i isl = _mm_cmpeq_epi8(x, _mm_set1_epi8((char)delim));
    unsigned dm = (unsigned)_mm_movemask_epi8(isd);
    unsigned lm = (unsigned)_mm_movemask_epi8(isl);
    unsigned zm = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8('0')));
    unsigned want = n >= 16 ? 0xFFFFu : (1u << n) - 1;
    unsigned lead = zm & ((lm << 1) | 1u) & (dm >> 1) & (want >> 1);
    return ((dm | lm) & want) == want && !lead;
#else
    for (size_t i = 0; i < n; i++) {
        if ((unsigned)s[i] - '0' > 9 && s[i] != delim) return false;
        if (s[i] == '0' && (i == 0 || s[i - 1] == delim) && i + 1 < n &&
            (unsigned)s[i + 1] - '0' <= 9)
            return false;
    }
    return true;
#endif
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

/* Whether the fields of a run of adjacent int64 columns checked by the
 * tokenizer, n of them spanning [a, b) of the input (p, size: r's, delim
 * the delimiter; passed so that the tokenizer's registers serve), would
 * all convert: one look at a short span, else each field's own check with
 * its inner delimiters found here. */
static inline __attribute__((always_inline)) bool
int_run_ok(const CsvReader *r, const uint8_t *p, size_t size, uint8_t delim,
           size_t a, size_t b, int n)
{
    bool ok = true;
    if (b - a <= 16 && size - a >= 16 && span_digits(p + a, b - a, delim)) return true;
    for (int k = 0; k < n; k++) {
        const uint8_t *e = memchr(p + a, delim, b - a);
        size_t fe = e ? (size_t)(e - p) : b;
        CsvField f = {a, (uint32_t)(fe - a), 0};
        ok &= chk_field(r, &f, 1);
        a = fe + 1;
    }
    return ok;
}

/* Mask the window from pos on (see "the fast tokenizer"); pos < d->end. */
static void window_fill(const CsvReader *r, CsvCursor *d, size_t pos)
{
    const size_t n = d->end;
    size_t words = (n - pos + 63) / 64;
    if (words > WIN_WORDS) words = WIN_WORDS;
    words = (size_t)r->flatten(r->p, n, r->delim, pos, (int)words, d->dm, d->em,
                               d->qm);
    d->nw = words;
    d->dm[words] = d->em[words] = d->qm[words] = 0;
    d->wq = false;
    for (size_t w = 0; w < words; w++) d->wq |= d->qm[w] != 0;
    d->wb = pos;
    d->we = n - pos > words * 64 ? pos + words * 64 : n;
}

/* The delimiter ordinals the fast tokenizer locates (see there) into
 * d->need: those bounding a stored field, a checked float64 field, or a
 * run of checked int64 fields; the first d->n_front of them (the lower
 * ordinals) are found from the record's start, the others from its end. */
static void need_ordinals(const CsvReader *r, CsvCursor *d)
{
    const int nc = r->n_cols, last = nc - 1;
    uint8_t *mark = d->need_mark;
    memset(mark, 0, (size_t)nc);
    for (int s = 0; s < d->n_store; s++) {
        int k = d->store[s];
        if (k > 0) mark[k - 1] = 1;
        if (k < last) mark[k] = 1;
    }
    for (int g = 0; d->n_chk && g < d->n_runs; g++) {
        int k0 = d->runs[2 * g], k1 = d->runs[2 * g + 1];
        if (k0 > 0) mark[k0 - 1] = 1;
        if (k1 < last) mark[k1] = 1;
    }
    d->n_fchk = 0;
    for (int s = 0; s < d->n_chk; s++) {
        int k = d->chk_cols[s];
        if (d->chk[k] != 2) continue;
        d->fchk[d->n_fchk++] = k;
        if (k > 0) mark[k - 1] = 1;
        if (k < last) mark[k] = 1;
    }
    d->n_need = d->n_front = 0;
    for (int j = 0; j < last; j++) {
        if (!mark[j]) continue;
        if (j <= (last - 1) / 2) d->n_front++;
        d->need[d->n_need++] = j;
    }
    d->need_chk = d->n_chk;
    d->need_ok = true;
}

/* Field k of the record [pos, end) whose delimiters are dp[] (ordinals
 * k - 1 and k located). */
#define FIELD_START(k) ((k) ? dp[(k) - 1] + 1 : pos)
#define FIELD_END(k) ((k) < last ? dp[k] : end)

/* Tokenize the plain records from d->pos into rows [row, max_rows) of the
 * batch, fields to the columns d->cols (NULL: not stored).  Stops, with
 * d->pos at its start, at the first record that is not plain or that
 * cannot be seen whole (the last before d->end, one longer than the
 * window); returns the new row count. */
static inline __attribute__((always_inline)) int64_t
fast_rows_body(const CsvReader *r, CsvCursor *d, int64_t row, int64_t max_rows,
               bool pdep)
{
    const uint8_t *p = r->p;
    const size_t n = d->end;
    const int last = r->n_cols - 1;
    const int *store = d->store;  /* the stored columns, ascending */
    const int n_store = d->n_store;
    CsvField *const *cols = d->cols;
    const uint64_t *dm = d->dm, *qm = d->qm;
    /* em[w] is dm[w + EM]: one register less in the loop */
#define EM (WIN_WORDS + 1)
    size_t pos = d->pos, *dp = d->dp;
    const int64_t line0 = d->line - row; /* row's line: line0 + row */
    const int n_runs = d->n_chk ? d->n_runs : 0, *runs = d->runs;
    const uint8_t delim = r->delim;
    const size_t size = r->size;
    int n_need, n_front, n_fchk;
    const int *need, *fchk = d->fchk;
    bool doubt = false;
    if (!r->flatten) return row;
    if (!d->need_ok || d->need_chk != d->n_chk) need_ordinals(r, d);
    n_need = d->n_need;
    n_front = d->n_front;
    need = d->need;
    n_fchk = d->n_fchk; /* the checked float64 fields (int64: runs) */
    /* the window in locals (the stores below may alias d for the compiler) */
    size_t wb = d->wb, we = d->we;
    size_t nw = d->nw;
    bool wq = d->wq;
    size_t *row_pos = d->row_pos;
    const bool keep_pos = d->keep_pos;
    int64_t *row_line = d->row_line;
#if CSV_X86
    /* lean: one stored field and nothing checked, the usual records'
     * field found without dp (PDEP mode only); lean_chk: the same plus one
     * checked int64 column (a filter on one column keeping another) */
    const bool lean = n_store == 1 && n_runs == 0 && n_fchk == 0;
    const bool lean_chk = n_store == 1 && n_runs == 1 && runs[0] == runs[1] &&
                          n_fchk == 0;
#endif
    if (pos < wb) we = 0; /* not the window's (cursor_seek clears it) */
    while (row < max_rows && pos < n) {
        size_t end, rel, w, sh;
        uint64_t m, q;
        if (pos >= we) {
        fill:
            window_fill(r, d, pos);
            wb = d->wb;
            we = d->we;
            nw = d->nw;
            wq = d->wq;
        }
        /* the line end: the first line-end bit from pos on, in the 64
         * bits from pos (the window has a zero word after its last one) */
        rel = pos - wb;
        w = rel >> 6;
        sh = rel & 63;
#define BITS64(a) (((a)[w] >> sh) | (((a)[w + 1] << 1) << (63 - sh)))
        m = BITS64(dm + EM);
        if (m) {
            /* the usual record, shorter than 64 bytes */
            int eo = __builtin_ctzll(m);
            uint64_t below = ((uint64_t)1 << eo) - 1, dd = BITS64(dm) & below;
            end = pos + (size_t)eo;
            q = wq ? BITS64(qm) & below : 0;
#undef BITS64
            if (q || eo == 0 || __builtin_popcountll(dd) != last) break;
#if CSV_X86
            if (pdep && (lean || lean_chk)) {
                /* the field straight from the masks: with the line end
                 * as a last delimiter (e) and a virtual one before pos
                 * (sb), field k ends at e's k-th set bit and starts at
                 * sb's (bit i of sb: delimiter at i - 1) */
                uint64_t e = dd | ((uint64_t)1 << eo), sb = e << 1 | 1, b0, b1;
                const int k = store[0]; /* (here: registers stay free) */
                __asm__("pdep %2, %1, %0" : "=r"(b0) : "r"((uint64_t)1 << k), "r"(sb));
                __asm__("pdep %2, %1, %0" : "=r"(b1) : "r"((uint64_t)1 << k), "r"(e));
                cols[k][row] = (CsvField){pos + (size_t)__builtin_ctzll(b0),
                                          (uint32_t)(__builtin_ctzll(b1) -
                                                     __builtin_ctzll(b0)), 0};
                if (lean_chk) {
                    /* the checked column's field the same way: a run of
                     * one column */
                    const int j = runs[0];
                    __asm__("pdep %2, %1, %0" : "=r"(b0) : "r"((uint64_t)1 << j), "r"(sb));
                    __asm__("pdep %2, %1, %0" : "=r"(b1) : "r"((uint64_t)1 << j), "r"(e));
                    doubt |= !int_run_ok(r, p, size, delim, pos + (size_t)__builtin_ctzll(b0),
                                         pos + (size_t)__builtin_ctzll(b1), 1);
                }
                goto stored;
            }
            if (pdep) {
                /* the j-th set bit of dd at once (BMI2, where it is fast) */
                for (int i = 0; i < n_need; i++) {
                    int j = need[i];
                    uint64_t bit;
                    __asm__("pdep %2, %1, %0" : "=r"(bit)
                            : "r"((uint64_t)1 << j), "r"(dd));
                    dp[j] = pos + (size_t)__builtin_ctzll(bit);
                }
                goto located;
            }
#endif
            m = dd;
            for (int i = 0, c = 0; i < n_front; i++) {
                int j = need[i];
                for (; c < j; c++) m &= m - 1;
                dp[j] = pos + (size_t)__builtin_ctzll(m);
            }
            m = dd;
            for (int i = n_need - 1, c = last - 1; i >= n_front; i--) {
                int j = need[i];
                for (; c > j; c--) m ^= (uint64_t)1 << (63 - __builtin_clzll(m));
                dp[j] = pos + (size_t)(63 - __builtin_clzll(m));
            }
        } else {
            /* a longer record: the words it spans */
            size_t rend, w1 = w + 1;
            int cnt;
            while (w1 < nw && !dm[w1 + EM]) w1++;
            if (w1 >= nw) {
                if (we >= n || wb == pos) break; /* the last record, or huge */
                goto fill; /* the window moves to the record */
            }
            rend = (w1 << 6) + (size_t)__builtin_ctzll(dm[w1 + EM]);
            end = wb + rend;
            m = ~(uint64_t)0 << sh;
            q = qm[w] & m;
            cnt = __builtin_popcountll(dm[w] & m);
            for (size_t v = w + 1; v < w1; v++) {
                q |= qm[v];
                cnt += __builtin_popcountll(dm[v]);
            }
            m = ((uint64_t)1 << (rend & 63)) - 1;
            q |= qm[w1] & m;
            cnt += __builtin_popcountll(dm[w1] & m);
            if (q || cnt != last) break;
            /* the delimiters needed: the lower ones from the start ... */
            if (n_front) {
                int c = 0; /* ordinal of m's lowest set bit */
                size_t v = w;
                m = dm[v] & (~(uint64_t)0 << sh);
                for (int i = 0; i < n_front; i++) {
                    int j = need[i], pc;
                    while ((pc = __builtin_popcountll(m)) <= j - c) {
                        c += pc;
                        m = dm[++v];
                    }
                    for (; c < j; c++) m &= m - 1;
                    dp[j] = wb + (v << 6) + (size_t)__builtin_ctzll(m);
                }
            }
            /* ... the upper ones from the end */
            if (n_need > n_front) {
                int c = last - 1; /* ordinal of m's highest set bit */
                size_t v = w1;
                m = dm[v] & (((uint64_t)1 << (rend & 63)) - 1);
                for (int i = n_need - 1; i >= n_front; i--) {
                    int j = need[i], pc;
                    while ((pc = __builtin_popcountll(m)) <= c - j) {
                        c -= pc;
                        m = dm[--v];
                    }
                    for (; c > j; c--) m ^= (uint64_t)1 << (63 - __builtin_clzll(m));
                    dp[j] = wb + (v << 6) + (size_t)(63 - __builtin_clzll(m));
                }
            }
        }
#if CSV_X86
    located:
#endif
        for (int s = 0; s < n_store; s++) {
            int k = store[s];
            size_t start = FIELD_START(k);
            cols[k][row] = (CsvField){start, (uint32_t)(FIELD_END(k) - start), 0};
        }
        for (int g = 0; g < n_runs; g++) {
            /* a run of adjacent int64 columns (inner delimiters not located) */
            int k0 = runs[2 * g], k1 = runs[2 * g + 1];
            doubt |= !int_run_ok(r, p, size, delim, FIELD_START(k0), FIELD_END(k1),
                                 k1 - k0 + 1);
        }
        for (int s = 0; s < n_fchk; s++) {
            int k = fchk[s];
            size_t start = FIELD_START(k);
            uint32_t len = (uint32_t)(FIELD_END(k) - start);
            if (!plain_f64_fast(p + start, len, size - start)) {
                CsvField f = {start, len, 0};
                doubt |= !field_null(r, &f);
            }
        }
#if CSV_X86
    stored:
#endif
        if (keep_pos) row_pos[row] = pos;
        row_line[row] = line0 + row;
        row++;
        pos = end + 1;
        if (p[end] == '\r' && pos < n && p[pos] == '\n') pos++; /* CRLF */
    }
    d->pos = pos;
    d->line = line0 + row;
    d->doubt |= doubt;
    return row;
}
#undef EM
#undef FIELD_START
#undef FIELD_END

#if CSV_X86
/* fast_rows_body with the CPU's popcount (the AVX2 mode checked for it). */
AVX2_ATTR static int64_t fast_rows_avx2(const CsvReader *r, CsvCursor *d,
                                        int64_t row, int64_t max_rows)
{
    return fast_rows_body(r, d, row, max_rows, false);
}

/* ... and with PDEP selecting the delimiters. */
AVX2_ATTR static int64_t fast_rows_pdep(const CsvReader *r, CsvCursor *d,
                                        int64_t row, int64_t max_rows)
{
    return fast_rows_body(r, d, row, max_rows, true);
}

/* Whether PDEP is fast: BMI2, and not AMD before Zen 3 (microcoded). */
static bool fast_pdep(void)
{
    static int known = -1; /* every thread computes the same */
    int k = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (k < 0) {
        k = (tl_cpu_features() & (TL_CPU_BMI2 | TL_CPU_SLOW_PDEP)) == TL_CPU_BMI2;
        __atomic_store_n(&known, k, __ATOMIC_RELAXED);
    }
    return k;
}
#endif

/* See fast_rows_body. */
static int64_t fast_rows(const CsvReader *r, CsvCursor *d, int64_t row,
                         int64_t max_rows)
{
#if CSV_X86
    if (r->flatten == flatten_avx2)
        return fast_pdep() ? fast_rows_pdep(r, d, row, max_rows)
                           : fast_rows_avx2(r, d, row, max_rows);
#endif
    return fast_rows_body(r, d, row, max_rows, false);
}

/* Parse the record at *pos.  Stores at most max_fields fields in out, field
 * k at out[k * stride], and counts all of them in *n_found.  Advances *pos
 * past the record's line end and *line by the lines it spans.  Reads only
 * r (thread-safe). */
static TlStatus parse_record(const CsvReader *r, size_t *pos, int64_t *line,
                             CsvField *out, size_t stride, int max_fields,
                             int *n_found, TlError *err)
{
    const uint8_t *p = r->p;
    const size_t n = r->size;
    const uint8_t delim = r->delim;
    size_t i = *pos;
    int64_t cur_line = *line;
    int count = 0;
    for (;;) {
        size_t off, flen;
        uint32_t flags = 0;
        if (i < n && p[i] == '"' && r->quotes) {
            size_t open = i;
            flags = F_QUOTED;
            i++;
            for (;;) {
                const uint8_t *q = memchr(p + i, '"', n - i);
                if (!q)
                    return tl_error(err, TL_ERR_DATA,
                                    "%s:%lld:%lld: unterminated quoted field" TL_CSV_QUOTE_HINT,
                                    r->name, (long long)cur_line,
                                    (long long)column_of(r, open));
                i = (size_t)(q - p);
                if (i + 1 < n && p[i + 1] == '"') {
                    flags |= F_ESCAPED;
                    i += 2;
                    continue;
                }
                break;
            }
            off = open + 1;
            flen = i - off;
            i++; /* the closing quote */
            cur_line += count_lines(p + off, flen);
            if (i < n && p[i] != delim && p[i] != '\n' && p[i] != '\r')
                return tl_error(err, TL_ERR_DATA,
                                "%s:%lld:%lld: unexpected character after "
                                "closing quote" TL_CSV_QUOTE_HINT, r->name, (long long)cur_line,
                                (long long)column_of(r, i));
        } else {
            off = i;
            while (i < n && !r->special[p[i]]) i++;
            flen = i - off;
        }
        if (flen > UINT32_MAX)
            return tl_error(err, TL_ERR_DATA, "%s:%lld: field longer than 4 GiB",
                            r->name, (long long)cur_line);
        if (count < max_fields) {
            CsvField *o = out + (size_t)count * stride;
            o->off = off;
            o->len = (uint32_t)flen;
            o->flags = flags;
        }
        if (count < INT32_MAX) count++;
        if (i >= n) break;
        if (p[i] == delim) {
            i++;
            continue;
        }
        if (p[i] == '\r' && i + 1 < n && p[i + 1] == '\n') i++;
        i++;
        cur_line++;
        break;
    }
    *pos = i;
    *line = cur_line;
    *n_found = count;
    return TL_OK;
}

/* Skip any empty lines at *pos, up to lim. */
static void skip_blank(const CsvReader *r, size_t *pos, int64_t *line, size_t lim)
{
    size_t i = *pos;
    int64_t ln = *line;
    while (i < lim && (r->p[i] == '\n' || r->p[i] == '\r')) {
        if (r->p[i] == '\r' && i + 1 < lim && r->p[i + 1] == '\n') i++;
        i++;
        ln++;
    }
    *pos = i;
    *line = ln;
}

/* Tokenize records from d->pos (up to d->end) into rows [d->n_rows,
 * max_rows) of the cursor's stored columns; max_rows <= d->cap. */
static TlStatus tokenize(const CsvReader *r, CsvCursor *d, int64_t max_rows,
                         TlError *err)
{
    const int nc = r->n_cols;
    int64_t rows = d->n_rows;
    while (rows < max_rows && d->pos < d->end) {
        uint8_t c;
        int64_t at_line;
        size_t at_pos;
        int found;
        rows = fast_rows(r, d, rows, max_rows);
        if (rows >= max_rows || d->pos >= d->end) break;
        c = r->p[d->pos];
        if (r->comment && c == r->comment) { /* --comment: skip such lines */
            d->pos = tl_csv_skip_comments(r->p, d->end, d->pos, r->comment, false, &d->line);
            continue;
        }
        if (c == '\n' || c == '\r') {
            if (nc != 1) {
                skip_blank(r, &d->pos, &d->line, d->end);
                continue;
            }
            if (d->pos >= d->blank_until) {
                /* A one-column file: empty lines are nulls unless only empty
                 * lines follow (to the end of the input, not the morsel). */
                size_t j = d->pos;
                while (j < r->size && (r->p[j] == '\n' || r->p[j] == '\r')) j++;
                if (j == r->size) {
                    skip_blank(r, &d->pos, &d->line, d->end);
                    break;
                }
                d->blank_until = j;
            }
        }
        at_line = d->line;
        at_pos = d->pos;
        TL_TRY(parse_record(r, &d->pos, &d->line, d->rec, 1, nc, &found, err));
        /* (the fast tokenizer takes no record with a quote) */
        if (!d->saw_quote && memchr(r->p + at_pos, '"', d->pos - at_pos))
            d->saw_quote = true;
        if (found != nc && r->ragged == TL_RAGGED_SKIP) continue;
        if (found != nc && (r->ragged != TL_RAGGED_PAD || found > nc))
            return tl_error(err, TL_ERR_DATA, "%s:%lld: expected %d field%s, found %d (%s; %s)",
                            r->name, (long long)at_line, nc, nc == 1 ? "" : "s", found,
                            r->hint, found > nc ? "--ragged skip drops such rows"
                                                : "--ragged pad or skip reads such rows");
        for (int k = found; k < nc; k++) d->rec[k] = (CsvField){at_pos, 0, 0}; /* null */
        for (int s = 0; s < d->n_store; s++) {
            int k = d->store[s];
            d->cols[k][rows] = d->rec[k];
        }
        for (int s = 0; s < d->n_chk; s++) {
            int k = d->chk_cols[s];
            if (!chk_field(r, &d->rec[k], d->chk[k])) d->doubt = true;
        }
        d->row_pos[rows] = at_pos;
        d->row_line[rows++] = at_line;
    }
    d->n_rows = rows;
    d->batch_end = d->pos;
    return TL_OK;
}

/* ------------------------------------------------------------ inference */

static inline bool field_null(const CsvReader *r, const CsvField *f)
{
    if (f->flags & F_QUOTED) return false;
    if (f->len == 0) return true;
    return r->null_text && f->len == r->null_len &&
           memcmp(r->p + f->off, r->null_text, r->null_len) == 0;
}

/* tl_infer_widen with the common numeric shapes decided here: from null,
 * int64 or float64, "[-]digits" without a leading zero (at most 18 bytes;
 * at most 15 from float64, all exact in a double) stays int64 (float64
 * from float64) and "[-]digits.digits" in at most 16 bytes is float64 --
 * what tl_infer_widen answers for them, without parsing the number. */
static inline TlType infer_fast(TlType t, const char *s, size_t len)
{
    if (t == TL_TNULL || t == TL_TINT64 || t == TL_TFLOAT64) {
        size_t i = s[0] == '-', k = i;
        while (k < len && (unsigned)(unsigned char)s[k] - '0' <= 9) k++;
        if (k > i && !(s[i] == '0' && k > i + 1)) {
            if (k == len && len <= (t == TL_TFLOAT64 ? 15u : 18u))
                return t == TL_TFLOAT64 ? t : TL_TINT64;
            if (k + 1 < len && len <= 16 && s[k] == '.') {
                size_t j = k + 1;
                while (j < len && (unsigned)(unsigned char)s[j] - '0' <= 9) j++;
                if (j == len) return TL_TFLOAT64;
            }
        }
    }
    return tl_infer_widen(t, s, len);
}

/* Whether column c looks numeric for the "is string because" note: the
 * value at row is a number in some spelling, or one of the next few
 * non-null values is an exact one (so "NA" first in a column of numbers
 * is noted, a column of names is not). */
static bool numeric_nearby(const CsvReader *r, const CsvCursor *d, int c, int64_t row)
{
    const CsvField *f = d->cols[c] + row;
    double v;
    int seen = 0;
    if (tl_parse_f64((const char *)r->p + f->off, f->len, &v)) return true;
    for (int64_t k = row + 1; k < d->n_rows && seen < 16; k++) {
        TlType t;
        f = d->cols[c] + k;
        if (field_null(r, f) || (f->flags & F_ESCAPED)) continue;
        seen++;
        t = infer_fast(TL_TNULL, (const char *)r->p + f->off, f->len);
        if (t == TL_TINT64 || t == TL_TFLOAT64) return true;
    }
    return false;
}

/* The narrowest type, starting from t, that holds every non-null value of
 * column c in the tokenized batch; *why = the row of the value that made a
 * numeric column a string (-1: none did, or the column is text; see
 * numeric_nearby).  Integers seen before a column turns float64 are
 * checked again as floats (a 17-digit integer is no exact double). */
static TlType infer_column(const CsvReader *r, const CsvCursor *d, int c, TlType t,
                           int64_t *why)
{
    *why = -1;
    for (int64_t row = 0; row < d->n_rows && t != TL_TSTRING; row++) {
        const CsvField *f = d->cols[c] + row;
        TlType was = t;
        if (field_null(r, f)) continue;
        if ((f->flags & F_ESCAPED) || /* holds a quote */
            (r->quoted_as_string && (f->flags & F_QUOTED)))
            t = TL_TSTRING;
        else
            t = infer_fast(t, (const char *)r->p + f->off, f->len);
        if (t == TL_TSTRING) {
            if (was == TL_TINT64 || was == TL_TFLOAT64 || numeric_nearby(r, d, c, row))
                *why = row;
        } else if (was == TL_TINT64 && t == TL_TFLOAT64 && row > 0) {
            row = -1; /* again from the first row, as float64 */
        }
    }
    return t;
}

/* A value of column c at row does not parse as the column's type: a data
 * error for a --schema column (or without hints); otherwise the widened
 * types of the batch's projected columns go to *widen (a new schema of
 * (name, wider type)) and the status is TL_ERR_RESTART.  Writes nothing
 * shared. */
static TlStatus value_misfit(const CsvReader *r, CsvCursor *d, int c, int64_t row,
                             TlSchema **widen, TlError *err)
{
    const CsvField *f = d->cols[c] + row;
    const TlField *fld = &r->schema.fields[c];
    TlSchema *w;
    TlType to = TL_TSTRING;
    if (r->fixed[c] || !r->hints) {
        size_t len;
        const char *s = field_text(r, d, f, &len);
        if (!s) return tl_error_oom(err);
        return tl_error(err, TL_ERR_DATA, "%s:%lld:%d: %s is not a valid %s (column %s)",
                        r->name, (long long)d->row_line[row], c + 1,
                        tl_quote(s, len).s, tl_type_name(fld->type),
                        tl_quote_name(fld->name).s);
    }
    {
        /* the note travels with the widen schema: the value that made
         * column c a string, if it became one */
        int64_t why;
        TlType t = infer_column(r, d, c, fld->type, &why);
        size_t len = 0;
        const char *s = NULL;
        if (t == fld->type) why = row; /* never loop: a string */
        if (t == fld->type || (t == TL_TSTRING && why >= 0)) {
            s = field_text(r, d, d->cols[c] + why, &len);
            if (!s) return tl_error_oom(err);
        }
        w = tl_widen_new(s ? fld->name : NULL, s ? d->row_line[why] : 0, s, len,
                         s && r->quoted_as_string && (d->cols[c][why].flags & F_QUOTED));
        if (!w) return tl_error_oom(err);
    }
    for (int k = 0; k < r->n_proj; k++) {
        int pc = r->proj[k];
        TlType old = r->schema.fields[pc].type, t;
        int64_t why;
        int have;
        if (r->fixed[pc]) continue;
        t = infer_column(r, d, pc, old, &why);
        if (pc == c && t == old) t = TL_TSTRING; /* never loop */
        if (t == old) continue;
        have = tl_schema_find(w, r->schema.fields[pc].name);
        if (have >= 0) {
            w->fields[have].type = t; /* projected twice: same type */
        } else if (tl_schema_add(w, r->schema.fields[pc].name, t, err) != TL_OK) {
            tl_schema_free(w);
            tl_free(w);
            return err->code;
        }
        if (pc == c) to = t;
    }
    *widen = w;
    return tl_error(err, TL_ERR_RESTART,
                    "%s:%lld: column %s holds a %s value; reading again",
                    r->name, (long long)d->row_line[row], tl_quote_name(fld->name).s,
                    tl_type_name(to));
}

/* ----------------------------------------------------------- conversion */

/* A zeroed-on-demand validity bitmap: all bits set at the first null. */
typedef struct Validity {
    TlBuf *buf;
    int64_t null_count;
} Validity;

static bool validity_null(Validity *v, int64_t n_rows, int64_t row)
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

/* The end of a fixed-width converter: the array of its n values with v's
 * nulls (tl_array_new takes both buffers, also when it fails). */
static TlStatus fixed_array(TlType t, int64_t n, TlBuf *values, const Validity *v,
                            TlArray **out, TlError *err)
{
    *out = tl_array_new(t, n, values, v->buf, v->null_count, NULL, 0);
    return *out ? TL_OK : tl_error_oom(err);
}

/* A fixed-width converter's buffers given back (a misfit, or out of
 * memory: no array is made). */
static void release_fixed(TlBuf *values, const Validity *v)
{
    tl_buf_release(values);
    tl_buf_release(v->buf);
}

/* Fixed-width converters: parse each non-null field with PARSE(text, len,
 * room, out) into a CTYPE values buffer; room is how many input bytes can
 * be read from text on (at least len).  On a misfit *bad = row and no
 * array is made. */
#define DEFINE_CONVERT(NAME, TYPE, CTYPE, PARSE)                               \
    static TlStatus NAME(const CsvReader *r, CsvCursor *d, int c,              \
                         TlArray **out, int64_t *bad, TlError *err)            \
    {                                                                          \
        const int64_t n = d->n_rows;                                           \
        const CsvField *f = d->cols[c];                                     \
        Validity v = {NULL, 0};                                                \
        TlBuf *values = tl_buf_new((size_t)n * sizeof(CTYPE), false);          \
        CTYPE *vals;                                                           \
        if (!values) return tl_error_oom(err);                                 \
        vals = (CTYPE *)values->data;                                          \
        for (int64_t row = 0; row < n; row++, f++) {                \
            if (field_null(r, f)) {                                            \
                vals[row] = 0;                                                 \
                if (!validity_null(&v, n, row)) goto oom;                      \
                continue;                                                      \
            }                                                                  \
            if (!PARSE((const char *)r->p + f->off, f->len, r->size - f->off,  \
                       &vals[row])) {                                          \
                *bad = row;                                                    \
                release_fixed(values, &v);                                     \
                return TL_OK;                                                  \
            }                                                                  \
        }                                                                      \
        return fixed_array(TYPE, n, values, &v, out, err);                     \
    oom:                                                                       \
        release_fixed(values, &v);                                             \
        return tl_error_oom(err);                                              \
    }

/* The parsers (parse_i64_gen, parse_f64_gen, ...): csv_numbers.h. */
DEFINE_CONVERT(convert_i64, TL_TINT64, int64_t, parse_i64_exact)
DEFINE_CONVERT(convert_i64_any, TL_TINT64, int64_t, parse_i64_any)

#if CSV_X86
/* Bytes 0..15 0xFF, then 16 zero bytes: a 16-byte load at 16 - k gives a
 * mask of the first k bytes (0 <= k <= 16). */
static const uint8_t f64_ones[32] = {
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255};

/* [-]digits[.digits] in len <= 16 bytes, the 16 bytes ending at s + len
 * readable, parsed with SSE: one load ending with the field (so its last
 * byte is lane 15), byte masks of the digits and the dot check the shape
 * (one dot at most, neither first nor last: ".5" and "5." go to the general
 * path, which decides them), the bytes before the dot move up one lane,
 * the lanes before the first digit become 0, and four multiply-adds make
 * the integer m of the digits (Lemire's SIMD digit combination).  True
 * with *m < 2^52 and *div = 10^frac, negated for a leading '-': then
 * m / div (both exact) is the correctly rounded value, as strtod's
 * (Clinger's fast path), "-0" giving -0.0.  False: not this shape (the
 * caller tries the others).  kz, k9, kd: every byte '0', 9, '.'. */
AVX2_ATTR static inline bool f64_sse(const char *s, size_t len, double *m_out,
                                     double *div, __m128i kz, __m128i k9, __m128i kd)
{
    static const double p10[2][16] = {
        {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13,
         1e14, 1e15},
        {-1e0, -1e1, -1e2, -1e3, -1e4, -1e5, -1e6, -1e7, -1e8, -1e9, -1e10, -1e11,
         -1e12, -1e13, -1e14, -1e15}};
    const unsigned neg = s[0] == '-';
    const unsigned first = 16 - (unsigned)len; /* the field's first lane */
    const unsigned fm = 0xFFFFu << first & 0xFFFFu;
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + len - 16));
    __m128i t = _mm_sub_epi8(x, kz);
    __m128i below, lead;
    unsigned dig = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(t, k9), t));
    unsigned dot = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, kd));
    unsigned nd, frac, q;
    uint64_t m, e;
    dot &= fm;
    if (((dig | dot | neg << first) & fm) != fm || (dot & (dot - 1)) ||
        (dot & (1u << (first + neg) | 0x8000u)))
        return false;
    nd = (unsigned)len - neg - (dot != 0);
    if (nd == 0) return false; /* "-" */
    q = dot ? (unsigned)__builtin_ctz(dot) + 1 : 0; /* lanes to move up */
    frac = dot ? 16 - q : 0;
    below = _mm_loadu_si128((const __m128i *)(const void *)(f64_ones + 16 - q));
    lead = _mm_loadu_si128((const __m128i *)(const void *)(f64_ones + nd));
    t = _mm_or_si128(_mm_andnot_si128(below, t), _mm_and_si128(below, _mm_slli_si128(t, 1)));
    t = _mm_andnot_si128(lead, t); /* lead: the first 16 - nd lanes */
    t = _mm_maddubs_epi16(t, _mm_setr_epi8(10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1,
                                           10, 1, 10, 1));
    t = _mm_madd_epi16(t, _mm_setr_epi16(100, 1, 100, 1, 100, 1, 100, 1));
    t = _mm_packus_epi32(t, t);
    t = _mm_madd_epi16(t, _mm_setr_epi16(10000, 1, 10000, 1, 10000, 1, 10000, 1));
    e = (uint64_t)_mm_cvtsi128_si64(t);
    m = (e & 0xFFFFFFFFu) * 100000000u + (e >> 32);
    if (m >= ((uint64_t)1 << 52)) return false;
    *m_out = (double)(int64_t)m;
    *div = p10[neg][frac];
    return true;
}

/* convert_f64 in the AVX2 mode, in two passes so that no division waits in
 * the parsing loop: the first parses each field, f64_sse's shape as m and
 * a divisor (m into the values, the divisor into d->fdiv), anything else
 * with parse_f64_gen (its value, divisor 1; a null: 0 and 1); the second
 * divides four values at a time.  x / 1 is x, so the values are
 * parse_f64_gen's bit for bit.  exact: an inferred column (infer.h), where
 * a leading zero is a misfit. */
AVX2_ATTR static TlStatus convert_f64_sse(const CsvReader *r, CsvCursor *d, int c,
                                          bool exact, TlArray **out, int64_t *bad,
                                          TlError *err)
{
    const int64_t n = d->n_rows;
    const CsvField *f = d->cols[c];
    Validity v = {NULL, 0};
    TlBuf *values;
    double *vals, *dv;
    int64_t row;
    size_t null_len;
    __m128i kz, k9, kd;
    if (d->fdiv_cap < n) {
        tl_free(d->fdiv);
        d->fdiv_cap = 0;
        d->fdiv = tl_malloc((size_t)n * sizeof *d->fdiv);
        if (!d->fdiv) return tl_error_oom(err);
        d->fdiv_cap = n;
    }
    dv = d->fdiv;
    values = tl_buf_new((size_t)n * sizeof(double), false);
    if (!values) return tl_error_oom(err);
    vals = (double *)values->data;
    /* the null text's length: such a field goes the field_null way */
    null_len = r->null_text ? r->null_len : SIZE_MAX;
    kz = _mm_set1_epi8('0');
    k9 = _mm_set1_epi8(9);
    kd = _mm_set1_epi8('.');
    /* opaque, so that the compiler keeps them in registers rather than
     * building them again in every iteration */
    __asm__("" : "+x"(kz), "+x"(k9), "+x"(kd));
    for (row = 0; row < n; row++, f++) {
        const char *s = (const char *)r->p + f->off;
        const uint32_t len = f->len;
        if (len - 1 < 16 && f->off + len >= 16 && len != null_len &&
            !(exact && tl_leading_zero(s, len)) &&
            f64_sse(s, len, &vals[row], &dv[row], kz, k9, kd))
            continue;
        dv[row] = 1.0;
        if (field_null(r, f)) {
            vals[row] = 0;
            if (!validity_null(&v, n, row)) goto oom;
            continue;
        }
        if (!parse_f64_gen(s, len, r->size - f->off, &vals[row], exact)) {
            *bad = row;
            release_fixed(values, &v);
            return TL_OK;
        }
    }
    for (row = 0; row + 4 <= n; row += 4)
        _mm256_storeu_pd(vals + row, _mm256_div_pd(_mm256_loadu_pd(vals + row),
                                                   _mm256_loadu_pd(dv + row)));
    for (; row < n; row++) vals[row] /= dv[row];
    return fixed_array(TL_TFLOAT64, n, values, &v, out, err);
oom:
    release_fixed(values, &v);
    return tl_error_oom(err);
}
#endif

/* The general parsers, in the converters' shape. */
static inline bool parse_date_any(const char *s, size_t len, size_t room, int32_t *out)
{
    (void)room;
    return tl_parse_date(s, len, out);
}

static inline bool parse_ts_any(const char *s, size_t len, size_t room, int64_t *out)
{
    (void)room;
    return tl_parse_timestamp(s, len, out);
}

DEFINE_CONVERT(convert_f64_base, TL_TFLOAT64, double, parse_f64_inline)
DEFINE_CONVERT(convert_f64_any, TL_TFLOAT64, double, parse_f64_any)

/* The float64 converter: f64_sse first in the AVX2 mode (see
 * tl_csv_scan_mode; the other modes keep the scalar path, and the tests
 * compare them). */
static TlStatus convert_f64(const CsvReader *r, CsvCursor *d, int c, TlArray **out,
                            int64_t *bad, TlError *err)
{
#if CSV_X86
    if (r->flatten == flatten_avx2)
        return convert_f64_sse(r, d, c, !r->fixed[c], out, bad, err);
#endif
    return r->fixed[c] ? convert_f64_any(r, d, c, out, bad, err)
                       : convert_f64_base(r, d, c, out, bad, err);
}
DEFINE_CONVERT(convert_date, TL_TDATE, int32_t, parse_date_any)
DEFINE_CONVERT(convert_ts, TL_TTIMESTAMP, int64_t, parse_ts_any)

static TlStatus convert_bool(const CsvReader *r, CsvCursor *d, int c,
                             TlArray **out, int64_t *bad, TlError *err)
{
    const int64_t n = d->n_rows;
    const CsvField *f = d->cols[c];
    Validity v = {NULL, 0};
    TlBuf *values = tl_buf_new(tl_bitmap_bytes(n), true);
    if (!values) return tl_error_oom(err);
    for (int64_t row = 0; row < n; row++, f++) {
        bool b;
        if (field_null(r, f)) {
            if (!validity_null(&v, n, row)) goto oom;
            continue;
        }
        if (!tl_parse_bool((const char *)r->p + f->off, f->len, &b)) {
            *bad = row;
            release_fixed(values, &v);
            return TL_OK;
        }
        if (b) tl_bit_set(values->data, row);
    }
    return fixed_array(TL_TBOOL, n, values, &v, out, err);
oom:
    release_fixed(values, &v);
    return tl_error_oom(err);
}

static TlStatus convert_null(const CsvReader *r, CsvCursor *d, int c,
                             TlArray **out, int64_t *bad, TlError *err)
{
    const CsvField *f = d->cols[c];
    for (int64_t row = 0; row < d->n_rows; row++, f++) {
        if (!field_null(r, f)) {
            *bad = row;
            return TL_OK;
        }
    }
    *out = tl_array_new_null(TL_TNULL, d->n_rows);
    if (!*out) return tl_error_oom(err);
    return TL_OK;
}

/* Copies of escaped strings (and of strings the window cannot address):
 * one growing block; views hold offsets, so the block may move while it
 * grows. */
typedef struct CopyBlock {
    uint8_t *data;
    size_t used, cap;
} CopyBlock;

static bool block_reserve(CopyBlock *b, size_t more)
{
    size_t cap = b->cap ? b->cap : 4096;
    uint8_t *g;
    if (b->used + more <= b->cap) return true;
    while (cap < b->used + more) cap *= 2;
    g = tl_realloc(b->data, cap);
    if (!g) return false;
    b->data = g;
    b->cap = cap;
    return true;
}

/* The buffer long views of this batch point into: the whole input when it
 * is addressable with 32-bit offsets, else a slice from the batch start. */
static TlStatus ensure_window(const CsvReader *r, CsvCursor *d, TlError *err)
{
    if (d->window) return TL_OK;
    if (r->size <= UINT32_MAX) {
        d->window = tl_buf_retain(r->input);
        d->window_base = 0;
    } else {
        d->window = tl_buf_slice(r->input, d->batch_start,
                                 d->batch_end - d->batch_start);
        d->window_base = d->batch_start;
    }
    if (!d->window) return tl_error_oom(err);
    return TL_OK;
}

static TlStatus convert_str(const CsvReader *r, CsvCursor *d, int c,
                            TlArray **out, int64_t *bad, TlError *err)
{
    const int64_t n = d->n_rows;
    const CsvField *f = d->cols[c];
    Validity v = {NULL, 0};
    CopyBlock blk = {NULL, 0, 0};
    bool use_window = false;
    TlBuf **data = NULL;
    uint32_t n_data = 0, win_idx, blk_idx;
    TlView *views;
    TlBuf *values = tl_buf_new((size_t)n * sizeof(TlView), false);
    (void)bad;
    if (!values) return tl_error_oom(err);
    views = (TlView *)values->data;
    /* Window index 0 and block index 1 are fixed up below when only the
     * block is used. */
    win_idx = 0;
    blk_idx = 1;
    if (ensure_window(r, d, err) != TL_OK) goto fail;
    for (int64_t row = 0; row < n; row++, f++) {
        const uint8_t *s = r->p + f->off;
        uint32_t len = f->len;
        TlView *vw = &views[row];
        vw->w[0] = vw->w[1] = 0;
        if (field_null(r, f)) {
            if (!validity_null(&v, n, row)) goto oom;
            continue;
        }
        if (!(f->flags & F_ESCAPED)) {
            vw->in.len = len;
            if (len <= TL_VIEW_INLINE) {
                if (CSV_LITTLE && f->off + TL_VIEW_INLINE <= r->size) {
                    /* fixed-size loads, the bytes past len masked off */
                    uint64_t a;
                    uint32_t b;
                    memcpy(&a, s, 8);
                    memcpy(&b, s + 8, 4);
                    if (len < 8) {
                        a &= ((uint64_t)1 << (8 * len)) - 1;
                        b = 0;
                    } else if (len < 12) {
                        b &= ((uint32_t)1 << (8 * (len - 8))) - 1;
                    }
                    memcpy(vw->in.data, &a, 8);
                    memcpy(vw->in.data + 8, &b, 4);
                } else {
                    memcpy(vw->in.data, s, len);
                }
                continue;
            }
            if (f->off - d->window_base + len <= UINT32_MAX) {
                memcpy(vw->out.prefix, s, 4);
                vw->out.buf = win_idx;
                vw->out.off = (uint32_t)(f->off - d->window_base);
                use_window = true;
                continue;
            }
            if (!block_reserve(&blk, len)) goto oom;
            memcpy(blk.data + blk.used, s, len);
        } else {
            /* unescape: every "" becomes " */
            uint32_t k = 0;
            if (!block_reserve(&blk, len)) goto oom;
            for (uint32_t i = 0; i < len; i++) {
                blk.data[blk.used + k++] = s[i];
                if (s[i] == '"') i++;
            }
            len = k;
            vw->in.len = len;
            if (len <= TL_VIEW_INLINE) {
                memcpy(vw->in.data, blk.data + blk.used, len);
                continue;
            }
        }
        if (blk.used + len > UINT32_MAX) {
            tl_error(err, TL_ERR_DATA,
                     "%s:%lld: too much quoted text in one batch (over 4 GiB)",
                     r->name, (long long)d->row_line[row]);
            goto fail;
        }
        memcpy(vw->out.prefix, blk.data + blk.used, 4);
        vw->out.buf = blk_idx;
        vw->out.off = (uint32_t)blk.used;
        blk.used += len;
    }
    if (use_window || blk.used) {
        data = tl_malloc(2 * sizeof *data);
        if (!data) goto oom;
        if (use_window) data[n_data++] = tl_buf_retain(d->window);
        if (blk.used) {
            uint8_t *shrunk = tl_realloc(blk.data, blk.used);
            if (shrunk) blk.data = shrunk;
            data[n_data] = tl_buf_adopt(blk.data, blk.used);
            blk.data = NULL;
            if (!data[n_data]) {
                while (n_data) tl_buf_release(data[--n_data]);
                tl_free(data);
                data = NULL;
                goto oom;
            }
            n_data++;
            if (!use_window) {
                /* the block is buffer 0: re-point its views */
                for (int64_t row = 0; row < n; row++)
                    if (views[row].in.len > TL_VIEW_INLINE) views[row].out.buf = 0;
            }
        }
    }
    tl_free(blk.data);
    *out = tl_array_new(TL_TSTRING, n, values, v.buf, v.null_count, data, n_data);
    if (!*out) return tl_error_oom(err);
    return TL_OK;
oom:
    tl_error_oom(err);
fail:
    tl_free(blk.data);
    tl_buf_release(values);
    tl_buf_release(v.buf);
    return err->code;
}

typedef TlStatus (*ConvertFn)(const CsvReader *, CsvCursor *, int, TlArray **,
                              int64_t *, TlError *);

static ConvertFn converter(TlType t, bool fixed)
{
    switch (t) {
    case TL_TBOOL: return convert_bool;
    case TL_TINT64: return fixed ? convert_i64_any : convert_i64;
    case TL_TFLOAT64: return convert_f64; /* it looks at r->fixed */
    case TL_TSTRING: return convert_str;
    case TL_TDATE: return convert_date;
    case TL_TTIMESTAMP: return convert_ts;
    default: return convert_null;
    }
}

/* Convert column c of the tokenized rows as type t: numbers in an inferred
 * column only when exact (infer.h), in a --schema column whenever they
 * parse; with --quoted-as-string a quoted value in an inferred column that
 * is not a string is a misfit (*bad), as inference would have decided. */
static TlStatus convert_col(const CsvReader *r, CsvCursor *d, int c, TlType t,
                            TlArray **out, int64_t *bad, TlError *err)
{
    if (r->quoted_as_string && !r->fixed[c] && t != TL_TSTRING) {
        const CsvField *f = d->cols[c];
        for (int64_t row = 0; row < d->n_rows; row++)
            if (f[row].flags & F_QUOTED) {
                *bad = row;
                return TL_OK;
            }
    }
    return converter(t, r->fixed[c])(r, d, c, out, bad, err);
}
/* --------------------------------------------------------------- cursors */

/* Allocate a cursor's fixed parts for r (n_cols wide). */
static TlStatus cursor_init(const CsvReader *r, CsvCursor *d, TlError *err)
{
    memset(d, 0, sizeof *d);
    d->cols = tl_calloc((size_t)r->n_cols + 1, sizeof *d->cols);
    d->rec = tl_malloc(((size_t)r->n_cols + 1) * sizeof *d->rec);
    d->store = tl_malloc(((size_t)r->n_cols + 1) * sizeof *d->store);
    d->dm = tl_malloc(3 * (WIN_WORDS + 1) * sizeof *d->dm);
    d->dp = tl_malloc(((size_t)r->n_cols + 1) * sizeof *d->dp);
    d->need = tl_malloc(((size_t)r->n_cols + 1) * sizeof *d->need);
    d->need_mark = tl_malloc((size_t)r->n_cols + 1);
    d->fchk = tl_malloc(((size_t)r->n_cols + 1) * sizeof *d->fchk);
    if (!d->cols || !d->rec || !d->store || !d->dm || !d->dp || !d->need ||
        !d->need_mark || !d->fchk)
        return tl_error_oom(err);
    d->em = d->dm + WIN_WORDS + 1;
    d->qm = d->em + WIN_WORDS + 1;
    return TL_OK;
}

static void cursor_free(CsvCursor *d)
{
    tl_buf_release(d->window);
    tl_free(d->cols);
    tl_free(d->rec);
    tl_free(d->store);
    tl_free(d->dm);
    tl_free(d->dp);
    tl_free(d->need);
    tl_free(d->need_mark);
    tl_free(d->fchk);
    tl_free(d->fields);
    tl_free(d->row_line);
    tl_free(d->row_pos);
    tl_free(d->scratch);
    tl_free(d->gat);
    tl_free(d->gat_line);
    tl_free(d->fdiv);
    tl_free(d->chk);
    tl_free(d->chk_cols);
    tl_free(d->runs);
    tl_free(d->skip);
    memset(d, 0, sizeof *d);
}

/* Store the columns marked in want (n_cols flags; NULL: none) from now on;
 * clears the tokenized rows.  Fields are laid out cap apart. */
static void cursor_store(const CsvReader *r, CsvCursor *d, const bool *want)
{
    d->n_store = 0;
    d->n_rows = 0;
    d->need_ok = false;
    for (int c = 0; c < r->n_cols; c++) {
        d->cols[c] = NULL;
        if (want && want[c]) {
            d->cols[c] = d->fields + (size_t)d->n_store * (size_t)d->cap;
            d->store[d->n_store++] = c;
        }
    }
}

/* Make room for cap rows of n_store columns (n_store = how many want marks),
 * keeping the rows tokenized so far. */
static TlStatus cursor_reserve(const CsvReader *r, CsvCursor *d, const bool *want,
                               int64_t cap, TlError *err)
{
    int n_store = 0;
    CsvField *f;
    int64_t *rl;
    size_t *rp;
    for (int c = 0; c < r->n_cols; c++) n_store += want && want[c];
    if (d->fields && cap <= d->cap && n_store <= d->alloc_store) return TL_OK;
    if (cap < d->cap) cap = d->cap;
    if (cap < 1) cap = 1;
    f = tl_malloc(((size_t)n_store + 1) * (size_t)cap * sizeof *f);
    rl = tl_malloc((size_t)cap * sizeof *rl);
    rp = tl_malloc((size_t)cap * sizeof *rp);
    if (!f || !rl || !rp) {
        tl_free(f);
        tl_free(rl);
        tl_free(rp);
        return tl_error_oom(err);
    }
    /* move the rows so far (columns stored now are the ones marked) */
    for (int s = 0; s < d->n_store; s++)
        memcpy(f + (size_t)s * (size_t)cap, d->cols[d->store[s]],
               (size_t)d->n_rows * sizeof *f);
    if (d->n_rows) memcpy(rl, d->row_line, (size_t)d->n_rows * sizeof *rl);
    if (d->n_rows) memcpy(rp, d->row_pos, (size_t)d->n_rows * sizeof *rp);
    tl_free(d->fields);
    tl_free(d->row_line);
    tl_free(d->row_pos);
    d->fields = f;
    d->row_line = rl;
    d->row_pos = rp;
    d->cap = cap;
    d->alloc_store = n_store;
    for (int s = 0; s < d->n_store; s++)
        d->cols[d->store[s]] = f + (size_t)s * (size_t)cap;
    return TL_OK;
}

/* Start tokenizing at pos (line) and stop at end. */
static void cursor_seek(CsvCursor *d, size_t pos, size_t end, int64_t line)
{
    d->pos = pos;
    d->end = end;
    d->line = line;
    d->blank_until = 0;
    d->wb = d->we = 0;
    d->nw = 0;
    d->need_ok = false;
    d->n_rows = 0;
    d->saw_quote = false;
    d->batch_start = pos;
    d->batch_end = pos;
}

/* ------------------------------------------------------------- morsels */

/* The next morsel: see the top, step 0.  Not thread-safe (the consumer's). */
/* Where the next morsel ends (see csv_split), reading the input through v:
 * r itself, or a copy of r whose size is the bytes of a streamed input
 * ready so far (fmt_impl.h).  *sure: the cut is the one the whole input
 * gives (v is r, or the cut lies TL_INPUT_AHEAD before the ready bytes'
 * end with a byte other than a line end after it, so no look-ahead of the
 * scan or of a decoder -- a one-column file's blank lines -- passes them). */
/* The next morsel's target end: it ends with the first record that ends
 * at or past it (or earlier, after max_rows records). */
static size_t split_stop(const CsvReader *r)
{
    const size_t begin = r->split_pos;
    int shift = r->split_seq < 20 ? (int)r->split_seq : 20;
    size_t stop = SPLIT_MIN << shift;
    if (stop > SPLIT_MAX) stop = SPLIT_MAX;
    if (r->morsel_bytes) stop = r->morsel_bytes;
    return r->size - begin > stop ? begin + stop : r->size;
}

/* A guess of where the next morsel ends (tl_reader_guess): after the first
 * line end (LF, the LF of CRLF, a lone CR) at or past split_stop - 1, or at
 * the end of the input; only those bytes are read.  It is split_cut's end
 * when no quote lies in the morsel and it holds fewer than max_rows line
 * ends: tokenize_morsel checks both, and the consumer splits again from a
 * morsel that fails (csv_resplit). */
static size_t guess_cut(const CsvReader *r)
{
    const uint8_t *p = r->p;
    size_t i = split_stop(r) - 1, e;
    const uint8_t *lf = memchr(p + i, '\n', r->size - i), *cr;
    e = lf ? (size_t)(lf - p) : r->size;
    cr = memchr(p + i, '\r', e - i);
    if (cr) {
        size_t c = (size_t)(cr - p);
        return c + 1 < r->size && p[c + 1] == '\n' ? c + 2 : c + 1;
    }
    return lf ? e + 1 : r->size;
}

static void split_cut(const CsvReader *r, const CsvReader *v, size_t *end,
                      int64_t *end_line, bool *poison, bool *sure, size_t *open)
{
    const size_t begin = r->split_pos;
    size_t pos = begin, stop = split_stop(r), i;
    int64_t line = r->split_line, rows = 0, want = r->max_rows;
    *poison = false;
    *open = SIZE_MAX;
    if (r->split_poison) {
        /* the record here does not parse: decoding it reports why */
        pos = v->size;
    }
    while (pos < v->size && rows < want && pos < stop) {
        size_t q, rp;
        int64_t rl;
        int found;
        TlError perr;
        pos = v->split_scan(v->p, v->size, v->delim, pos, want - rows, stop, &rows,
                            &line, &q);
        if (rows >= want || pos >= stop) break;
        if (q == SIZE_MAX) {
            /* the end of the input: a last record without a line end (or
             * an unterminated quote, which decoding reports) */
            if (pos < v->size) rows++;
            *open = pos;
            pos = v->size;
            break;
        }
        /* the record at pos holds a quote the scan cannot judge: parse it */
        rp = pos;
        rl = line;
        if (parse_record(v, &rp, &rl, NULL, 1, 0, &found, &perr) != TL_OK) {
            *open = pos;
            if (rows > 0) {
                *poison = true; /* the next morsel starts here */
            } else {
                pos = v->size;
            }
            break;
        }
        rows++;
        pos = rp;
        line = rl;
    }
    *end = pos;
    *end_line = line;
    for (i = pos; i < v->size && (v->p[i] == '\n' || v->p[i] == '\r'); i++) {
    }
    *sure = v == r || (!*poison && pos < v->size && v->size - pos >= TL_INPUT_AHEAD &&
                       i < v->size);
}

/* The first record of the whole records [pos, end) of v longer than
 * --max-record-size (its line end not counted): its line in *at; false
 * when none.  A record at a time, as split_cut finds them: only for a
 * stretch longer than the bound. */
static bool long_record(const CsvReader *r, const CsvReader *v, size_t pos, size_t end,
                        int64_t line, int64_t *at)
{
    while (pos < end) {
        size_t q, next, e;
        int64_t rows = 0, l = line;
        next = v->split_scan(v->p, v->size, v->delim, pos, 1, SIZE_MAX, &rows, &l, &q);
        if (rows == 0 && q == SIZE_MAX) {
            next = end; /* the last record, without a line end */
        } else if (rows == 0) {
            size_t rp = pos;
            int64_t rl = line;
            int found;
            TlError perr;
            if (parse_record(v, &rp, &rl, NULL, 1, 0, &found, &perr) != TL_OK)
                return false; /* decoding reports it */
            next = rp;
            l = rl;
        }
        if (next > end) next = end;
        e = next;
        if (e > pos && v->p[e - 1] == '\n') e--;
        if (e > pos && v->p[e - 1] == '\r') e--;
        if (e - pos > r->max_record) {
            *at = line;
            return true;
        }
        pos = next;
        line = l;
    }
    return false;
}

/* A record of a stream longer than --max-record-size in what the split
 * looked at: among the whole records from split_pos to done, or the
 * record at open (line open_line; SIZE_MAX: none) that has no end in the
 * ready bytes yet.  Such a record is held in memory until its end
 * (decompressed bytes: stream.c), so it is an error, whatever part of it
 * the decompressor had reached. */
static TlStatus record_too_long(const CsvReader *r, const CsvReader *v, size_t done,
                                size_t open, int64_t open_line, size_t ready,
                                TlError *err)
{
    int64_t at = open_line;
    if (!tl_input_is_stream(r->input)) return TL_OK;
    if (!(done - r->split_pos > r->max_record &&
          long_record(r, v, r->split_pos, done, r->split_line, &at)) &&
        (open == SIZE_MAX || ready - open <= r->max_record))
        return TL_OK;
    return tl_error(err, TL_ERR_DATA, "%s:%lld: record longer than %zu bytes "
                    "(--max-record-size)", r->name, (long long)at, r->max_record);
}

/* The next morsel: see the top (step 0).  A streamed input is cut in the
 * bytes ready, waiting for more until the cut is sure (split_cut), each
 * time for twice the bytes of the morsel so far, so a long record is
 * scanned a few times, not once per MiB; a record longer than
 * --max-record-size is an error there.  A stream of unknown size is cut
 * at its end (tl_input_size) once it has one. */
static TlStatus csv_split(TlReader *base, TlMorsel *m, bool *got, TlError *err)
{
    CsvReader *r = (CsvReader *)base;
    size_t end = 0, want, open = SIZE_MAX;
    int64_t line = 0;
    bool poison = false, sure = false;
    *got = false;
    if (r->n_cols == 0 || r->split_pos >= tl_input_size(r->input)) return TL_OK;
    if (r->guess) {
        /* no line count: the line is known only when split again */
        m->end = guess_cut(r);
        m->seq = r->split_seq++;
        m->begin = r->split_pos;
        m->line = -1;
        r->split_pos = m->end;
        *got = true;
        return TL_OK;
    }
    want = r->split_pos + SPLIT_MAX + TL_INPUT_AHEAD;
    while (tl_input_is_stream(r->input) && !sure) {
        size_t ready, size, more;
        CsvReader v;
        TL_TRY(tl_input_wait(r->base.input, want, &ready, err));
        size = tl_input_size(r->input);
        v = *r;
        v.size = ready;
        if (ready >= size) {
            /* the end: where a stream of unknown size ended */
            if (size == r->size) break;
            split_cut(&v, &v, &end, &line, &poison, &sure, &open);
            TL_TRY(record_too_long(r, &v, end, SIZE_MAX, 0, ready, err));
            break;
        }
        split_cut(r, &v, &end, &line, &poison, &sure, &open);
        if (sure) {
            TL_TRY(record_too_long(r, &v, end, SIZE_MAX, 0, ready, err));
            break;
        }
        TL_TRY(record_too_long(r, &v, open != SIZE_MAX ? open : end, open, line, ready, err));
        more = ready - r->split_pos;
        if (more < ((size_t)1 << 20)) more = (size_t)1 << 20;
        want = ready + more;
        if (open != SIZE_MAX && want > open + r->max_record + 1)
            want = open + r->max_record + 1 > ready ? open + r->max_record + 1 : ready + 1;
    }
    if (!sure) {
        split_cut(r, r, &end, &line, &poison, &sure, &open);
        TL_TRY(record_too_long(r, r, end, SIZE_MAX, 0, r->size, err));
    }
    if (poison) r->split_poison = true;
    m->seq = r->split_seq++;
    m->begin = r->split_pos;
    m->end = end;
    m->line = r->split_line;
    r->split_pos = end;
    r->split_line = line;
    *got = true;
    return TL_OK;
}

/* See format.h: guess morsel ends from now on (an input of several
 * columns that is not a stream: a stream is cut in the bytes ready, and
 * its records checked against --max-record-size). */
static void csv_guess(TlReader *base)
{
    CsvReader *r = (CsvReader *)base;
    if (r->n_cols >= 2 && !tl_input_is_stream(r->input) && !r->split_poison &&
        r->split_seq == 0)
        r->guess = true;
}

/* Physical lines that s[0..n) adds (count_lines), quickly when it holds no
 * CR. */
static int64_t count_lines_fast(const uint8_t *s, size_t n)
{
    return memchr(s, '\r', n) ? count_lines(s, n) : tl_count_lf(s, n);
}

/* See format.h: the next split starts at guessed morsel m, which began at
 * a record start (the morsels before it were checked), and reads every
 * byte from now on. */
static TlStatus csv_resplit(TlReader *base, const TlMorsel *m, TlError *err)
{
    CsvReader *r = (CsvReader *)base;
    if (m->line >= 0 || m->begin < r->data_start || m->begin > r->size)
        return tl_error(err, TL_ERR_DATA, "%s: internal error: split again "
                        "from a morsel not guessed", r->name);
    r->guess = false;
    r->split_poison = false;
    r->split_pos = m->begin;
    r->split_seq = m->seq;
    r->split_line = r->data_line + count_lines_fast(r->p + r->data_start,
                                                    m->begin - r->data_start);
    return TL_OK;
}

/* A decoder: a cursor of its own. */
static TlStatus csv_decoder_new(TlReader *base, TlDecoder **out, TlError *err)
{
    CsvReader *r = (CsvReader *)base;
    CsvDecoder *d = tl_calloc(1, sizeof *d);
    *out = NULL;
    if (!d) return tl_error_oom(err);
    d->base.ops = r->base.ops;
    if (cursor_init(r, &d->cur, err) != TL_OK) {
        cursor_free(&d->cur);
        tl_free(d);
        return err->code;
    }
    *out = &d->base;
    return TL_OK;
}

static void csv_decoder_free(TlDecoder *base)
{
    CsvDecoder *d = (CsvDecoder *)base;
    if (!d) return;
    cursor_free(&d->cur);
    tl_input_copy_free(&d->copy);
    tl_free(d);
}

/* The reader decoder dd reads morsel m through (see the top, "copies"):
 * for a mapped file of two or more columns, a copy of r whose p addresses
 * the morsel and TL_COPY_PAD bytes either side read into dd->copy
 * (tl_input_copy) and whose size ends with them, so every read of p stays
 * in the copy; r itself otherwise (or when the copy fails). */
static const CsvReader *morsel_view(const CsvReader *r, CsvDecoder *dd,
                                    const TlMorsel *m)
{
    const uint8_t *p = r->p;
    size_t hi = tl_input_size(r->input);
    dd->viewing = false;
    if (hi != r->size) {
        /* a stream of unknown size that ended: r->size is the address
         * space reserved for it, the view ends at its end */
    } else if (r->n_cols < 2 ||
               !(p = tl_input_copy(r->input, &dd->copy, m->begin, m->end, &hi))) {
        return r;
    }
    /* the fields fixed after open, name to proj_schema: base (the stats)
     * and the splitter's, which the consumer writes meanwhile, are not
     * read by decoders */
    memcpy((char *)&dd->view + offsetof(CsvReader, name),
           (const char *)r + offsetof(CsvReader, name),
           offsetof(CsvReader, split_pos) - offsetof(CsvReader, name));
    dd->view.p = p;
    dd->view.size = hi;
    dd->viewing = true;
    return &dd->view;
}


/* Tokenize morsel m into d: every projected column's fields (step 1), or
 * with skip (n_cols flags) those of the projected columns it does not mark.
 * Thread-safe for distinct decoders: writes only d. */
static TlStatus tokenize_morsel(const CsvReader *r, CsvCursor *d, const TlMorsel *m,
                                const bool *skip, TlError *err)
{
    bool want_stack[64], *want = want_stack;
    int64_t bound, cap;
    TlStatus st = TL_OK;
    if (r->n_cols > 64) {
        want = tl_calloc((size_t)r->n_cols, sizeof *want);
        if (!want) return tl_error_oom(err);
    } else {
        memset(want_stack, 0, sizeof want_stack);
    }
    for (int k = 0; k < r->n_proj; k++)
        if (!skip || !skip[r->proj[k]]) want[r->proj[k]] = true;
    /* a record takes at least n_cols bytes but the last: a bound on rows
     * (the split limit is another, but any range of whole records decodes) */
    bound = (int64_t)((m->end - m->begin) / (size_t)r->n_cols) + 1;
    cap = (int64_t)((m->end - m->begin) / (size_t)r->avg_record) * 9 / 8 + 16;
    if (cap > bound) cap = bound;
    if (cap < d->cap) cap = d->cap < bound ? d->cap : bound;
    cursor_seek(d, m->begin, m->end, m->line);
    d->keep_pos = skip != NULL;
    d->n_store = 0; /* nothing kept across morsels */
    st = cursor_reserve(r, d, want, cap, err);
    if (st != TL_OK) goto done;
    cursor_store(r, d, want);
    for (;;) {
        int64_t lim = d->cap < bound ? d->cap : bound;
        st = tokenize(r, d, lim, err);
        if (st != TL_OK) goto done;
        if (d->pos >= d->end || d->n_rows < lim) break;
        if (lim >= bound) {
            /* only empty lines can be left (split counts them as records) */
            size_t j = d->pos;
            while (j < d->end && (r->p[j] == '\n' || r->p[j] == '\r')) j++;
            if (j < d->end)
                st = tl_error(err, TL_ERR_DATA, "%s:%lld: internal error: morsel "
                              "holds more than %lld records", r->name,
                              (long long)d->line, (long long)bound);
            break;
        }
        cap = d->cap * 2 < bound ? d->cap * 2 : bound;
        st = cursor_reserve(r, d, want, cap, err);
        if (st != TL_OK) goto done;
    }
    /* A guessed end (guess_cut) is the careful one when no quote lies in
     * the morsel (every line end then ends a record) and it has fewer line
     * ends, so records, than a morsel may hold. */
    if (m->line < 0 && (d->saw_quote || d->line - m->line >= r->max_rows))
        st = tl_error(err, TL_ERR_DATA, "%s: internal error: a guessed morsel end "
                      "was not split again", r->name);
done:
    if (want != want_stack) tl_free(want);
    return st;
}

/* Convert every projected column of the tokenized rows, in projection
 * order (step 2): a batch in *out, or the first misfit's error/restart. */
static TlStatus convert_all(const CsvReader *r, CsvCursor *d, TlBatch **out,
                            TlSchema **widen, TlError *err)
{
    TlBatch *b = tl_batch_new(&r->proj_schema, r->n_proj, d->n_rows);
    *out = NULL;
    if (!b) return tl_error_oom(err);
    for (int k = 0; k < r->n_proj; k++) {
        int c = r->proj[k];
        int64_t bad = -1;
        TlStatus st = convert_col(r, d, c, r->schema.fields[c].type, &b->cols[k], &bad, err);
        if (st == TL_OK && bad >= 0) st = value_misfit(r, d, c, bad, widen, err);
        if (st != TL_OK) {
            tl_batch_free(b);
            return st;
        }
    }
    *out = b;
    return TL_OK;
}

/* The end of a morsel's decoding: its long views hold their own window
 * reference, so the cursor's goes; the pages it covered go back (step 3). */
static void morsel_end(const CsvReader *r, CsvCursor *d, bool pages)
{
    tl_buf_release(d->window);
    d->window = NULL;
    if (pages) tl_input_drop(r->input, d->late_begin, d->late_end);
    d->late_open = false;
}

/* Decode one morsel into a batch of the projected columns (steps 1, 2).
 * Thread-safe for distinct decoders: writes only d and its outputs. */
static TlStatus csv_decode(TlReader *base, TlDecoder *dbase, const TlMorsel *m,
                           TlBatch **out, TlSchema **widen, TlError *err)
{
    const CsvReader *r = (const CsvReader *)base;
    CsvCursor *d = &((CsvDecoder *)dbase)->cur;
    TlStatus st;
    *out = NULL;
    *widen = NULL;
    d->late_open = false;
    if (m->end <= m->begin || r->n_cols == 0) return TL_OK;
    r = morsel_view(r, (CsvDecoder *)dbase, m);
    d->late_begin = m->begin;
    d->late_end = m->end;
    st = tokenize_morsel(r, d, m, NULL, err);
    if (st == TL_OK && d->n_rows > 0) st = convert_all(r, d, out, widen, err);
    morsel_end(r, d, st == TL_OK);
    return st;
}

/* ------------------------------------------------ late materialization
 *
 * (format.h, "late materialization")  csv_decode_early tokenizes the
 * morsel as csv_decode does and converts the columns the caller asked for
 * first, plus every column whose type has no cheap check (bool, date,
 * timestamp, null); int64, float64 and string columns may wait.  The
 * fields stay in the cursor.  csv_decode_rest then converts the waiting
 * columns for the selected rows only, and checks the other rows' fields
 * of int64 and float64 columns with plain_i64/plain_f64: a field they pass
 * converts for sure (they accept a subset of what the converters accept),
 * so the morsel as a whole would have decoded.  Any doubt (a field the
 * check does not pass, a selected value that misfits) and any misfit of an
 * early column falls back to convert_all over the whole morsel: it fails
 * exactly as csv_decode would (same error, same widened types), or, when
 * the doubt was needless, gives the batch the rows are taken from.  So
 * results, types, restarts and --schema errors are those of csv_decode;
 * only the "over 4 GiB of quoted text in one batch" limit is checked on
 * the rows converted.  Pages are given back once the rest is converted. */

/* Whether column type t may wait for csv_decode_rest. */
static bool late_type(TlType t)
{
    return t == TL_TINT64 || t == TL_TFLOAT64 || t == TL_TSTRING;
}

/* See format.h: decode morsel m converting the early columns (and those
 * late_type refuses); the rest are NULL in *out. */
/* Tokenize the open morsel again storing every projected column, when
 * decode_early left some out (the rows come out the same). */
static TlStatus store_all(const CsvReader *r, CsvCursor *d, TlError *err)
{
    if (d->stored_all) return TL_OK;
    TL_TRY(tokenize_morsel(r, d, &d->late_m, NULL, err));
    d->stored_all = true;
    return TL_OK;
}

/* The fields of column c of rows sel[0..n) into d->gat / d->gat_line, by
 * parsing those records again (they parsed before: anything else is an
 * internal error). */
static TlStatus reparse_fields(const CsvReader *r, CsvCursor *d, int c,
                               const uint32_t *sel, int64_t n, TlError *err)
{
    for (int64_t j = 0; j < n; j++) {
        size_t pos = d->row_pos[sel[j]];
        int64_t line = d->row_line[sel[j]];
        int found = 0;
        TL_TRY(parse_record(r, &pos, &line, d->rec, 1, r->n_cols, &found, err));
        if (found != r->n_cols && (found > r->n_cols || r->ragged != TL_RAGGED_PAD))
            return tl_error(err, TL_ERR_DATA, "%s:%lld: internal error: record "
                            "read again differs", r->name,
                            (long long)d->row_line[sel[j]]);
        d->gat[j] = c < found ? d->rec[c] : (CsvField){d->row_pos[sel[j]], 0, 0};
        d->gat_line[j] = d->row_line[sel[j]];
    }
    return TL_OK;
}

static TlStatus csv_decode_early(TlReader *base, TlDecoder *dbase,
                                 const TlMorsel *m, const bool *early, int n_early,
                                 int64_t few, TlBatch **out, TlSchema **widen,
                                 TlError *err)
{
    const CsvReader *r = (const CsvReader *)base;
    CsvCursor *d = &((CsvDecoder *)dbase)->cur;
    TlBatch *b = NULL;
    TlStatus st;
    *out = NULL;
    *widen = NULL;
    d->late_open = false;
    if (m->end <= m->begin || r->n_cols == 0) return TL_OK;
    r = morsel_view(r, (CsvDecoder *)dbase, m);
    d->late_begin = m->begin;
    d->late_end = m->end;
    if (!d->chk) {
        d->chk = tl_calloc((size_t)r->n_cols + 1, 1);
        d->skip = tl_calloc((size_t)r->n_cols + 1, sizeof *d->skip);
        d->chk_cols = tl_malloc(((size_t)r->n_cols + 1) * sizeof *d->chk_cols);
        if (!d->chk || !d->skip || !d->chk_cols) return tl_error_oom(err);
    }
    /* the tokenizer checks the fields of the int64 and float64 columns
     * that wait (every row: the rest may convert only some) */
    memset(d->chk, 0, (size_t)r->n_cols);
    d->n_chk = 0;
    d->doubt = false;
    for (int k = 0; k < r->n_proj; k++) {
        int c = r->proj[k];
        TlType t = r->schema.fields[c].type;
        if ((k < n_early && early[k]) || d->chk[c]) continue;
        if (t == TL_TINT64 || t == TL_TFLOAT64) {
            d->chk[c] = t == TL_TINT64 ? 1 : 2;
            d->chk_cols[d->n_chk++] = c;
        }
    }
    if (!d->runs) {
        d->runs = tl_malloc(((size_t)r->n_cols + 1) * 2 * sizeof *d->runs);
        if (!d->runs) return tl_error_oom(err);
    }
    d->n_runs = 0;
    for (int c = 0; c < r->n_cols; c++) {
        if (d->chk[c] != 1) continue;
        if (d->n_runs && d->runs[2 * d->n_runs - 1] == c - 1) {
            d->runs[2 * d->n_runs - 1] = c;
        } else {
            d->runs[2 * d->n_runs] = c;
            d->runs[2 * d->n_runs + 1] = c;
            d->n_runs++;
        }
    }
    /* a column both early and waiting (projected twice) is converted */
    for (int k = 0; k < r->n_proj && d->n_chk; k++)
        if (k < n_early && early[k] && d->chk[r->proj[k]]) d->doubt = true;
    /* with few rows wanted, the waiting columns are not even stored:
     * decode_rest finds the selected rows' fields again (reparse_fields) */
    memset(d->skip, 0, (size_t)r->n_cols);
    d->stored_all = true;
    if (few >= 0) {
        for (int k = 0; k < r->n_proj; k++)
            if (d->chk[r->proj[k]] || r->schema.fields[r->proj[k]].type == TL_TSTRING)
                d->skip[r->proj[k]] = true;
        for (int k = 0; k < r->n_proj; k++)
            if ((k < n_early && early[k]) || !late_type(r->schema.fields[r->proj[k]].type))
                d->skip[r->proj[k]] = false;
        for (int c = 0; c < r->n_cols; c++) d->stored_all &= !d->skip[c];
    }
    d->late_m = *m;
    /* checking costs every row: worth it when few rows will be converted
     * (else decode_rest checks only the rows it does not convert) */
    d->checked = few >= 0;
    if (!d->checked) d->n_chk = 0;
    st = tokenize_morsel(r, d, m, d->stored_all ? NULL : d->skip, err);
    d->n_chk = 0;
    if (st != TL_OK || d->n_rows == 0) {
        morsel_end(r, d, st == TL_OK);
        return st;
    }
    b = tl_batch_new(&r->proj_schema, r->n_proj, d->n_rows);
    if (!b) {
        morsel_end(r, d, false);
        return tl_error_oom(err);
    }
    for (int k = 0; k < r->n_proj; k++) {
        int c = r->proj[k];
        TlType t = r->schema.fields[c].type;
        int64_t bad = -1;
        if (k < n_early && !early[k] && late_type(t)) continue;
        if (k >= n_early && late_type(t)) continue;
        st = convert_col(r, d, c, t, &b->cols[k], &bad, err);
        if (st != TL_OK) goto fail;
        if (bad >= 0) {
            /* csv_decode's outcome, whatever it is */
            tl_batch_free(b);
            b = NULL;
            st = store_all(r, d, err);
            if (st == TL_OK) st = convert_all(r, d, &b, widen, err);
            if (st != TL_OK) goto fail;
            break;
        }
    }
    d->late_open = true;
    *out = b;
    return TL_OK;
fail:
    tl_batch_free(b);
    morsel_end(r, d, false);
    return st;
}

/* Whether a field of a column of type t (int64 or float64) that is not
 * converted would convert: null, or passes the check. */
static inline bool field_plain(const CsvReader *r, const CsvField *f, TlType t)
{
    return chk_field(r, f, t == TL_TINT64 ? 1 : 2);
}

/* Rows sel[0..n) of column c's fields into d->gat (and their lines into
 * d->gat_line); the other rows' fields are checked when c is an int64 or
 * float64 column.  false: a field did not pass the check. */
static bool gather_fields(const CsvReader *r, CsvCursor *d, int c, TlType t,
                          const uint32_t *sel, int64_t n)
{
    const CsvField *f = d->cols[c];
    const int64_t rows = d->n_rows;
    int64_t row = 0;
    if (t == TL_TSTRING) {
        for (int64_t j = 0; j < n; j++) {
            d->gat[j] = f[sel[j]];
            d->gat_line[j] = d->row_line[sel[j]];
        }
        return true;
    }
    if (d->checked && !d->doubt) {
        /* the tokenizer checked the other rows' fields */
        for (int64_t j = 0; j < n; j++) {
            d->gat[j] = f[sel[j]];
            d->gat_line[j] = d->row_line[sel[j]];
        }
        return true;
    }
    for (int64_t j = 0; j <= n; j++) {
        int64_t stop = j < n ? (int64_t)sel[j] : rows;
        if (t == TL_TINT64) {
            for (; row < stop; row++)
                if ((!plain_i64_fast(r->p + f[row].off, f[row].len,
                                     r->size - f[row].off) ||
                     (r->quoted_as_string && (f[row].flags & F_QUOTED))) &&
                    !field_null(r, &f[row]))
                    return false;
        } else {
            for (; row < stop; row++)
                if (!field_plain(r, &f[row], t)) return false;
        }
        if (j < n) {
            d->gat[j] = f[row];
            d->gat_line[j] = d->row_line[row];
            row++;
        }
    }
    return true;
}

/* See format.h: the morsel decoded early by d, rows sel[0..n) (all when
 * n < 0), with every projected column. */
static TlStatus csv_decode_rest(TlReader *base, TlDecoder *dbase,
                                const TlBatch *early, const uint32_t *sel,
                                int64_t n, TlBatch **out, TlSchema **widen,
                                TlError *err)
{
    const CsvReader *r = ((CsvDecoder *)dbase)->viewing ? &((CsvDecoder *)dbase)->view
                                                        : (const CsvReader *)base;
    CsvCursor *d = &((CsvDecoder *)dbase)->cur;
    TlBatch *b = NULL, *full = NULL;
    TlStatus st = TL_OK;
    bool all;
    *out = NULL;
    *widen = NULL;
    if (!d->late_open || !early || early->n_rows != d->n_rows ||
        early->n_cols != r->n_proj)
        return tl_error(err, TL_ERR_DATA,
                        "internal error: %s: rows converted late without an early decode",
                        r->name);
    all = n < 0 || n == d->n_rows;
    if (all) n = d->n_rows;
    if (!d->stored_all && (d->doubt || n > d->n_rows / 4)) {
        st = store_all(r, d, err);
        if (st != TL_OK) goto done;
    }
    if (!all && n > 0 && (n > d->n_rows || sel[n - 1] >= (uint64_t)d->n_rows)) {
        st = tl_error(err, TL_ERR_DATA, "internal error: %s: bad row selection",
                      r->name);
        goto done;
    }
    if (!all && n > d->gat_cap) {
        int64_t cap = n > 1024 ? n : 1024;
        CsvField *g = tl_malloc((size_t)cap * sizeof *g);
        int64_t *gl = tl_malloc((size_t)cap * sizeof *gl);
        if (!g || !gl) {
            tl_free(g);
            tl_free(gl);
            st = tl_error_oom(err);
            goto done;
        }
        tl_free(d->gat);
        tl_free(d->gat_line);
        d->gat = g;
        d->gat_line = gl;
        d->gat_cap = cap;
    }
    if (n == 0) {
        /* no row wanted: only the checks */
        for (int k = 0; k < r->n_proj; k++)
            if (!early->cols[k] &&
                !gather_fields(r, d, r->proj[k], r->schema.fields[r->proj[k]].type,
                               NULL, 0))
                goto fallback;
        goto done;
    }
    b = tl_batch_new(&r->proj_schema, r->n_proj, n);
    if (!b) {
        st = tl_error_oom(err);
        goto done;
    }
    for (int k = 0; k < r->n_proj; k++) {
        int c = r->proj[k];
        TlType t = r->schema.fields[c].type;
        int64_t bad = -1;
        if (early->cols[k]) {
            b->cols[k] = all ? tl_array_retain(early->cols[k])
                             : tl_array_take(early->cols[k], sel, n);
            if (!b->cols[k]) {
                st = tl_error_oom(err);
                goto done;
            }
            continue;
        }
        if (all) {
            st = convert_col(r, d, c, t, &b->cols[k], &bad, err);
        } else {
            CsvField *keep_f = d->cols[c];
            int64_t *keep_l = d->row_line, keep_n = d->n_rows;
            if (!d->stored_all) {
                st = reparse_fields(r, d, c, sel, n, err);
                if (st != TL_OK) goto done;
            } else if (!gather_fields(r, d, c, t, sel, n)) {
                goto fallback;
            }
            d->cols[c] = d->gat;
            d->row_line = d->gat_line;
            d->n_rows = n;
            st = convert_col(r, d, c, t, &b->cols[k], &bad, err);
            d->cols[c] = keep_f;
            d->row_line = keep_l;
            d->n_rows = keep_n;
        }
        if (st != TL_OK) goto done;
        if (bad >= 0) goto fallback;
    }
    *out = b;
    b = NULL;
    goto done;
fallback:
    /* csv_decode's outcome over the whole morsel, then the rows */
    tl_batch_free(b);
    b = NULL;
    st = store_all(r, d, err);
    if (st == TL_OK) st = convert_all(r, d, &full, widen, err);
    if (st != TL_OK) goto done;
    if (all) {
        *out = full;
        full = NULL;
        goto done;
    }
    if (n == 0) goto done;
    b = tl_batch_new(&r->proj_schema, r->n_proj, n);
    for (int k = 0; b && k < r->n_proj; k++) {
        b->cols[k] = tl_array_take(full->cols[k], sel, n);
        if (!b->cols[k]) {
            tl_batch_free(b);
            b = NULL;
        }
    }
    if (!b) {
        st = tl_error_oom(err);
        goto done;
    }
    *out = b;
    b = NULL;
done:
    tl_batch_free(b);
    tl_batch_free(full);
    morsel_end(r, d, st == TL_OK);
    return st;
}

/* See format.h: forget the morsel decoded early (no rest wanted). */
static void csv_decode_end(TlReader *base, TlDecoder *dbase)
{
    CsvCursor *d = &((CsvDecoder *)dbase)->cur;
    if (d->late_open) morsel_end((const CsvReader *)base, d, true);
}

/* Record a decode's widened types in the hints (the consumer, in order). */
static TlStatus csv_widen(TlReader *base, const TlSchema *widen, TlError *err)
{
    CsvReader *r = (CsvReader *)base;
    if (!widen || !r->hints) return TL_OK;
    for (int i = 0; i < widen->n_fields; i++)
        TL_TRY(tl_hint_set(r->hints, widen->fields[i].name, widen->fields[i].type, err));
    return tl_widen_note(r->hints, widen, r->name, err);
}

/* Count a decoded batch (the consumer, in order). */
static void csv_count(TlReader *base, int64_t rows, int64_t bytes)
{
    CsvReader *r = (CsvReader *)base;
    r->base.stats.bytes += bytes;
    if (rows <= 0) return;
    r->base.stats.rows += rows;
    r->base.stats.batches++;
    for (int k = 0; k < r->n_proj; k++) r->base.stats.converted[r->proj[k]] += rows;
}

/* ----------------------------------------------------------- the reader */

static const TlSchema *csv_schema(const TlReader *base)
{
    return &((const CsvReader *)base)->schema;
}

static TlStatus csv_project(TlReader *base, const int *cols, int n_cols,
                            TlError *err)
{
    CsvReader *r = (CsvReader *)base;
    int *proj = NULL;
    TlSchema ps = {0};
    if (n_cols < 0) n_cols = 0;
    if (n_cols > 0) {
        proj = tl_malloc((size_t)n_cols * sizeof *proj);
        if (!proj) return tl_error_oom(err);
    }
    for (int i = 0; i < n_cols; i++) {
        if (cols[i] < 0 || cols[i] >= r->n_cols) {
            tl_free(proj);
            tl_schema_free(&ps);
            return tl_error(err, TL_ERR_USAGE, "%s: no column number %d", r->name,
                            cols[i] + 1);
        }
        proj[i] = cols[i];
        if (tl_schema_add(&ps, r->schema.fields[cols[i]].name,
                          r->schema.fields[cols[i]].type, err) != TL_OK) {
            tl_free(proj);
            tl_schema_free(&ps);
            return err->code;
        }
    }
    tl_free(r->proj);
    tl_schema_free(&r->proj_schema);
    r->proj = proj;
    r->n_proj = n_cols;
    r->proj_schema = ps;
    return TL_OK;
}

/* The next batch: split + decode on the reader's own decoder. */
static TlStatus csv_next(TlReader *base, TlBatch **out, TlError *err)
{
    CsvReader *r = (CsvReader *)base;
    *out = NULL;
    if (!r->own) {
        TlDecoder *d;
        TL_TRY(csv_decoder_new(base, &d, err));
        r->own = (CsvDecoder *)d;
    }
    for (;;) {
        TlMorsel m;
        bool got;
        TlBatch *b = NULL;
        TlSchema *w = NULL;
        TlStatus st;
        TL_TRY(csv_split(base, &m, &got, err));
        if (!got) {
            r->base.stats.bytes = (int64_t)tl_input_size(r->input);
            return TL_OK;
        }
        st = csv_decode(base, &r->own->base, &m, &b, &w, err);
        if (st == TL_ERR_RESTART && w) {
            TlError werr;
            if (csv_widen(base, w, &werr) != TL_OK) {
                *err = werr;
                st = werr.code;
            }
        }
        if (w) {
            tl_schema_free(w);
            tl_free(w);
        }
        if (st != TL_OK) return st;
        csv_count(base, b ? b->n_rows : 0, (int64_t)(m.end - m.begin));
        if (b) {
            *out = b;
            return TL_OK;
        }
    }
}

static void csv_close(TlReader *base)
{
    CsvReader *r = (CsvReader *)base;
    if (r->own) csv_decoder_free(&r->own->base);
    tl_free(r->name);
    tl_buf_release(r->input);
    tl_free(r->null_text);
    tl_schema_free(&r->schema);
    tl_free(r->fixed);
    tl_free(r->proj);
    tl_schema_free(&r->proj_schema);
    tl_free(r->base.stats.converted);
    tl_free(r);
}

/* The line of record i of the morsel d decoded last (fmt_impl.h). */
static int64_t csv_row_line(TlDecoder *d, int64_t i) { return ((CsvDecoder *)d)->cur.row_line[i]; }

static const TlReaderOps csv_ops = {
    .schema = csv_schema,
    .project = csv_project,
    .next = csv_next,
    .close = csv_close,
    .split = csv_split,
    .decoder_new = csv_decoder_new,
    .decoder_free = csv_decoder_free,
    .decode = csv_decode,
    .widen = csv_widen,
    .count = csv_count,
    .decode_early = csv_decode_early,
    .decode_rest = csv_decode_rest,
    .decode_end = csv_decode_end,
    .guess = csv_guess,
    .resplit = csv_resplit,
    .row_line = csv_row_line,
};

/* Read the first record: column count and (unless no_header) names; the
 * data starts after it (or at it with no_header). */
static TlStatus read_header(CsvReader *r, bool no_header, TlError *err)
{
    size_t pos = r->start;
    int64_t line = 1 + r->skipped;
    int found;
    CsvField *hf = NULL;
    CsvCursor tmp = {0}; /* scratch for unescaping names */
    char **names = NULL;
    size_t *lens = NULL;
    TlStatus st;
    skip_blank(r, &pos, &line, r->size);
    if (r->comment) pos = tl_csv_skip_comments(r->p, r->size, pos, r->comment, true, &line);
    r->data_start = pos;
    r->data_line = line;
    if (pos >= r->size) return TL_OK; /* no columns at all */
    {
        size_t p2 = pos;
        int64_t l2 = line;
        TL_TRY(parse_record(r, &p2, &l2, NULL, 1, 0, &found, err));
    }
    hf = tl_malloc((size_t)found * sizeof *hf);
    if (!hf) return tl_error_oom(err);
    st = parse_record(r, &pos, &line, hf, 1, found, &found, err);
    names = tl_calloc((size_t)found + 1, sizeof *names);
    lens = tl_calloc((size_t)found + 1, sizeof *lens);
    if (st == TL_OK && (!names || !lens)) st = tl_error_oom(err);
    for (int i = 0; st == TL_OK && i < found; i++) {
        const char *s = "";
        if (!no_header) {
            s = field_text(r, &tmp, &hf[i], &lens[i]);
            if (!s) st = tl_error_oom(err);
        }
        if (st == TL_OK && !(names[i] = tl_strndup(s, lens[i]))) st = tl_error_oom(err);
        if (st == TL_OK && r->tsv) { /* IANA TSV escapes (tsv_read.c) */
            tl_tsv_unescape_str(names[i]);
            lens[i] = strlen(names[i]);
        }
    }
    if (st == TL_OK) {
        bool quiet = r->quiet || (r->hints && r->hints->names_noted);
        st = tl_names_unique((const char *const *)names, lens, found, r->name, quiet,
                             &r->schema, err);
        if (r->hints) r->hints->names_noted = true;
    }
    for (int i = 0; names && i < found; i++) tl_free(names[i]);
    tl_free(names);
    tl_free(lens);
    tl_free(hf);
    tl_free(tmp.scratch);
    TL_TRY(st);
    r->n_cols = found;
    if (!no_header) {
        r->data_start = pos;
        r->data_line = line;
    }
    return TL_OK;
}

/* Remember in the hints the value at row that made column c a string. */
static TlStatus note_string(const CsvReader *r, CsvCursor *d, int c, int64_t row,
                            TlError *err)
{
    size_t len;
    const char *s = field_text(r, d, d->cols[c] + row, &len);
    if (!s) return tl_error_oom(err);
    return tl_hint_note(r->hints, r->schema.fields[c].name, r->name, d->row_line[row], s,
                        len, r->quoted_as_string && (d->cols[c][row].flags & F_QUOTED), err);
}

/* Apply --schema (fixed types) and the hints to the columns, then infer the
 * rest from the first batch (the first max_rows records), tokenized
 * INFER_CHUNK records at a time; a column stops being stored once it is a
 * string.  Data errors in those records are reported here. */
static TlStatus decide_types(CsvReader *r, const TlSchema *fixed,
                             TlTypeHints *hints, size_t *sample_end,
                             int64_t *sample_rows, TlError *err)
{
    CsvCursor d;
    bool *open_col = NULL;
    int64_t total = 0, chunk;
    TlStatus st = TL_OK;
    memset(&d, 0, sizeof d);
    *sample_end = r->data_start;
    *sample_rows = 0;
    if (fixed) {
        for (int c = 0; c < r->n_cols; c++) {
            int i = tl_fixed_find(fixed, r->schema.fields[c].name);
            if (i < 0) continue;
            r->schema.fields[c].type = fixed->fields[i].type;
            r->fixed[c] = true;
        }
        for (int i = 0; i < fixed->n_fields; i++) {
            int c = tl_fixed_is_glob(fixed->fields[i].name)
                        ? 0 : tl_schema_find(&r->schema, fixed->fields[i].name);
            if (c < 0) {
                const char *near = tl_schema_suggest(&r->schema, fixed->fields[i].name);
                if (near)
                    return tl_error(err, TL_ERR_USAGE,
                                    "--schema: no column %s in %s (did you "
                                    "mean %s?)", tl_quote_name(fixed->fields[i].name).s,
                                    r->name, tl_quote_name(near).s);
                return tl_error(err, TL_ERR_USAGE, "--schema: no column %s in %s",
                                tl_quote_name(fixed->fields[i].name).s, r->name);
            }
        }
    }
    open_col = tl_calloc((size_t)r->n_cols + 1, sizeof *open_col);
    if (!open_col) return tl_error_oom(err);
    for (int c = 0; c < r->n_cols; c++) {
        TlType t = TL_TNULL;
        if (r->fixed[c]) continue;
        if (hints) {
            int h = tl_schema_find(&hints->cols, r->schema.fields[c].name);
            if (h >= 0) t = hints->cols.fields[h].type;
        }
        r->schema.fields[c].type = t;
        open_col[c] = t != TL_TSTRING;
    }
    if (r->n_cols == 0) goto done;
    if (cursor_init(r, &d, err) != TL_OK) goto fail;
    chunk = r->max_rows < INFER_CHUNK ? r->max_rows : INFER_CHUNK;
    if (chunk > INFER_FIELDS / r->n_cols)
        chunk = INFER_FIELDS / r->n_cols > 16 ? INFER_FIELDS / r->n_cols : 16;
    if ((int64_t)((r->size - r->data_start) / (size_t)r->n_cols) + 1 < chunk)
        chunk = (int64_t)((r->size - r->data_start) / (size_t)r->n_cols) + 1;
    if (cursor_reserve(r, &d, open_col, chunk, err) != TL_OK) goto fail;
    cursor_seek(&d, r->data_start, r->size, r->data_line);
    while (total < r->max_rows && d.pos < d.end) {
        int64_t want = r->max_rows - total < chunk ? r->max_rows - total : chunk;
        cursor_store(r, &d, open_col);
        if (tokenize(r, &d, want, err) != TL_OK) goto fail;
        if (d.n_rows == 0) break;
        total += d.n_rows;
        for (int s = 0; s < d.n_store; s++) {
            int c = d.store[s];
            int64_t why;
            TlType t = infer_column(r, &d, c, r->schema.fields[c].type, &why);
            r->schema.fields[c].type = t;
            if (t == TL_TSTRING) open_col[c] = false; /* decided */
            if (why >= 0 && hints && note_string(r, &d, c, why, err) != TL_OK) goto fail;
        }
    }
    *sample_end = d.pos;
    *sample_rows = total;
    r->avg_record = total > 0 ? (int64_t)((d.pos - r->data_start) / (size_t)total) : 1;
    if (r->avg_record < 1) r->avg_record = 1;
    goto done;
fail:
    st = err->code;
done:
    cursor_free(&d);
    tl_free(open_col);
    return st;
}

/* One attempt of tl_csv_reader_open with the first need bytes of a
 * streamed input (the whole of any other); *sure false: the sample came
 * too near the end of the bytes it saw, so it may differ from the whole
 * input's (the reader is returned all the same). */
static TlStatus csv_open(const char *path, const TlReadOptions *opt, char delimiter,
                         TlTypeHints *hints, size_t need, bool *sure, size_t *next,
                         TlReader **out, TlError *err)
{
    CsvReader *r;
    int *all = NULL;
    int64_t max_rows, sample_rows;
    size_t ready, full, sample_end;
    *out = NULL;
    *sure = true;
    if (delimiter == '"' || delimiter == '\n' || delimiter == '\r')
        return tl_error(err, TL_ERR_USAGE, "--delimiter cannot be a quote or a newline");
    r = tl_calloc(1, sizeof *r);
    if (!r) return tl_error_oom(err);
    r->base.ops = &csv_ops;
    r->hints = hints;
    r->flatten = flatten_fn();
    r->split_scan = split_scan_fn();
    r->avg_record = 1;
    r->name = tl_strdup(tl_escape_name(tl_input_name(path)).s);
    if (!r->name) goto oom;
    r->quoted_as_string = opt->quoted_as_string;
    r->quiet = opt->quiet;
    r->quotes = opt->quote ? opt->quote > 0 : !opt->tsv; /* TSV: --quote '"' */
    r->tsv = opt->tsv;
    r->ragged = opt->ragged;
    if (opt->null_text || opt->tsv) { /* IANA TSV: \N is null */
        r->null_text = tl_strdup(opt->null_text ? opt->null_text : "\\N");
        if (!r->null_text) goto oom;
        r->null_len = strlen(r->null_text);
    }
    if (tl_input_load_stream(path, &r->input, err) != TL_OK) goto fail;
    r->base.input = r->input;
    r->p = r->input->data;
    /* a streamed input (fmt_impl.h): header and sample see the bytes
     * ready (need); taken when the sample ends TL_INPUT_AHEAD before
     * their end, else the caller opens again with more */
    if (tl_input_wait(r->input, need, &ready, err) != TL_OK) goto fail;
    full = tl_input_size(r->input);
    r->max_record = opt->max_record ? opt->max_record : TL_MAX_RECORD;
    r->size = ready;
    *sure = ready >= full; /* an error from part of the input: try all of it */
    if (r->size >= 3 && r->p[0] == 0xEF && r->p[1] == 0xBB && r->p[2] == 0xBF)
        r->start = 3;
    r->start = tl_csv_skip_lines(r->p, r->size, r->start, opt->skip, &r->skipped);
    if ((r->comment = (uint8_t)opt->comment)) r->flatten = NULL; /* tokenize sees all lines */
    r->delim = (uint8_t)(opt->delimiter ? delimiter : /* the suffix's breaks ties */
        tl_csv_sniff_delimiter(r->p + r->start, r->size - r->start, r->size < full, delimiter, r->quotes, (char)r->comment));
    r->special[r->delim] = r->special['\n'] = r->special['\r'] = 1;
    if (read_header(r, opt->no_header, err) != TL_OK) goto fail;
    if (!opt->no_header && tl_input_is_stream(r->input) && r->data_start - r->start > r->max_record) {
        /* the header is a record too (--max-record-size; the split checks
         * the others) */
        size_t e = r->data_start;
        if (e > r->start && r->p[e - 1] == '\n') e--;
        if (e > r->start && r->p[e - 1] == '\r') e--;
        if (e - r->start > r->max_record) {
            *sure = true;
            tl_error(err, TL_ERR_DATA, "%s:%lld: record longer than %zu bytes "
                     "(--max-record-size)", r->name,
                     (long long)(1 + count_lines_fast(r->p, r->start)), r->max_record);
            goto fail;
        }
    }
    tl_csv_dialect_hint(r->p + r->start, r->size - r->start, r->n_cols, (char)r->delim,
                        opt->delimiter ? 0 : delimiter, opt->tsv, (char)r->comment, r->hint, sizeof r->hint);

    r->fixed = tl_calloc((size_t)r->n_cols + 1, sizeof *r->fixed);
    r->base.stats.converted = tl_calloc((size_t)r->n_cols + 1, sizeof(int64_t));
    if (!r->fixed || !r->base.stats.converted) goto oom;
    max_rows = split_force_rows > 0 ? split_force_rows : tl_batch_rows();
    if (r->n_cols > 0 && max_rows > MAX_BATCH_FIELDS / r->n_cols)
        max_rows = MAX_BATCH_FIELDS / r->n_cols;
    if (max_rows < 1) max_rows = 1;
    r->max_rows = max_rows;
    r->morsel_bytes = split_force_bytes > 0 ? (size_t)split_force_bytes : 0;
    r->split_pos = r->n_cols > 0 ? r->data_start : r->size;
    r->split_line = r->data_line;
    r->base.stats.bytes = (int64_t)r->data_start;
    if (decide_types(r, opt->schema, hints, &sample_end, &sample_rows, err) != TL_OK)
        goto fail;
    if (ready < full) {
        *sure = r->n_cols > 0 && sample_rows == r->max_rows &&
                ready - sample_end >= TL_INPUT_AHEAD;
        r->size = full;
        if (!*sure) {
            /* the bytes may end inside a record (a header or a first
             * record without an end): no longer than --max-record-size */
            size_t u = tl_tail_line(r->p, r->start, ready);
            if (ready - u > r->max_record) {
                *sure = true;
                tl_error(err, TL_ERR_DATA, "%s:%lld: record longer than %zu bytes "
                         "(--max-record-size)", r->name,
                         (long long)(1 + count_lines_fast(r->p, u)), r->max_record);
                goto fail;
            }
            *next = u + r->max_record + 1;
        }
    }

    all = tl_malloc(((size_t)r->n_cols + 1) * sizeof *all);
    if (!all) goto oom;
    for (int i = 0; i < r->n_cols; i++) all[i] = i;
    if (csv_project(&r->base, all, r->n_cols, err) != TL_OK) goto fail;
    tl_free(all);
    *out = &r->base;
    return TL_OK;
oom:
    tl_error_oom(err);
fail:
    tl_free(all);
    csv_close(&r->base);
    return err->code;
}

/* Open the CSV/TSV input at path with the given delimiter: load it, read
 * the header, infer every column's type from the first batch.  Batches
 * then hold all columns until tl_reader_project.  hints (may be NULL) give
 * minimum types by name and receive widened ones on restart.  A streamed
 * input (fmt_impl.h) is opened on the bytes ready, again with more while
 * the sample reaches their end, and with all of them after an error. */
typedef struct CsvOpenArgs {
    const char *path;
    const TlReadOptions *opt;
    char delimiter;
    TlTypeHints *hints;
} CsvOpenArgs;

static TlStatus csv_open_try(void *ctx, size_t need, bool *sure, size_t *next,
                             TlReader **out, TlError *err)
{
    const CsvOpenArgs *a = ctx;
    return csv_open(a->path, a->opt, a->delimiter, a->hints, need, sure, next, out, err);
}

TlStatus tl_csv_reader_open(const char *path, const TlReadOptions *opt,
                            char delimiter, TlTypeHints *hints,
                            TlReader **out, TlError *err)
{
    CsvOpenArgs a = {path, opt, delimiter, hints};
    return tl_reader_open_ready(csv_open_try, &a, out, err);
}
