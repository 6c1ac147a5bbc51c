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
 *      tl_csv_parse_record, the general tokenizer itself, so every record is cut
 *      exactly where decoding will cut it.  Line ends are counted on the way
 *      (physical lines, also inside quotes, for messages): the morsel
 *      carries the line where it starts.  Empty lines
 *      count as records here (the limit is an upper bound; decode skips
 *      them).  A record tl_csv_parse_record rejects ends the morsel before it; the
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
 *      or more: tokenize_morsel checks both (tl_csv_parse_record's records for
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
 *   1. Tokenize (decode, tl_csv_tokenize()) the morsel's records into a flat,
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
 *      fields wanted are located.  Anything else goes to tl_csv_parse_record,
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
 *
 * Files (csv_impl.h shares the state): this one opens the reader (header,
 * inference pass) and splits (steps 0-0c); csv_tokenize.c tokenizes (step
 * 1); csv_decode.c converts (steps 2, 2b) and infers a column's type.
 */
#include "csv_impl.h"

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

/* ------------------------------------------------------- the splitter scan
 *
 * From pos, a record start, find record ends without the tokenizer.
 * 64-byte blocks become masks of the delimiter, LF, CR and '"'; the quote
 * parity (a prefix XOR of the quote mask, carried across blocks) tells
 * which bytes lie inside quotes, and a line end outside quotes (an LF, or a
 * CR not followed by LF: CRLF ends a line once, at its LF) ends a record.
 * That is exactly what tl_csv_parse_record does as long as every quote opens a
 * field (follows a delimiter, a line end, the record start or a closing
 * quote: "" inside quotes is a closing and an opening quote) and every
 * closing quote is followed by a delimiter, line end, quote or the end.
 * The first quote breaking that (a loose quote inside an unquoted field,
 * "ab"c) stops the scan: *bad = its position, and the caller parses the
 * record holding it with tl_csv_parse_record itself.
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

/* The splitter scan for mode (tl_csv_scan_best; scalar for 0 and 1). */
static SplitScanFn split_scan_fn(int mode)
{
    switch (mode) {
#if CSV_X86
    case 3: return split_scan_avx2;
    case 2: return split_scan_sse2;
#endif
    default: return split_scan_scalar;
    }
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
        if (tl_csv_parse_record(v, &rp, &rl, NULL, 1, 0, &found, &perr) != TL_OK) {
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
            if (tl_csv_parse_record(v, &rp, &rl, NULL, 1, 0, &found, &perr) != TL_OK)
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

/* Physical lines that s[0..n) adds (tl_csv_count_lines), quickly when it holds no
 * CR. */
static int64_t count_lines_fast(const uint8_t *s, size_t n)
{
    return memchr(s, '\r', n) ? tl_csv_count_lines(s, n) : tl_count_lf(s, n);
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
    if (tl_csv_cursor_init(r, &d->cur, err) != TL_OK) {
        tl_csv_cursor_free(&d->cur);
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
    tl_csv_cursor_free(&d->cur);
    tl_input_copy_free(&d->copy);
    tl_free(d);
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
        st = tl_csv_decode(base, &r->own->base, &m, &b, &w, err);
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
static int64_t csv_row_line(const TlReader *r, TlDecoder *d, int64_t i)
{
    (void)r;
    return ((CsvDecoder *)d)->cur.row_line[i];
}

/* Column k's place in a record (fmt_impl.h): its field number, as the
 * reader's data errors count it. */
static int64_t csv_row_col(const TlReader *base, TlDecoder *d, int64_t row, int k,
                           int64_t *line)
{
    const CsvReader *r = (const CsvReader *)base;
    (void)d;
    (void)row;
    (void)line;
    return k < r->n_proj ? r->proj[k] + 1 : 0;
}

static const TlReaderOps csv_ops = {
    .schema = csv_schema,
    .project = csv_project,
    .next = csv_next,
    .close = csv_close,
    .split = csv_split,
    .decoder_new = csv_decoder_new,
    .decoder_free = csv_decoder_free,
    .decode = tl_csv_decode,
    .widen = csv_widen,
    .count = csv_count,
    .decode_early = tl_csv_decode_early,
    .decode_rest = tl_csv_decode_rest,
    .decode_end = tl_csv_decode_end,
    .guess = csv_guess,
    .resplit = csv_resplit,
    .row_line = csv_row_line,
    .row_col = csv_row_col,
    .morsel_types = tl_csv_morsel_types,
};

/* Read the first record: column count and, when it is a header (--header,
 * or detected unless --no-header: tl_csv_header_guess), names; the data
 * starts after it (or at it when it is data: columns column1, column2,
 * ...).  more_follows and *sure as for tl_csv_header_guess. */
static TlStatus read_header(CsvReader *r, const TlReadOptions *opt, bool more_follows,
                            bool *sure, TlError *err)
{
    size_t pos = r->start;
    int64_t line = 1 + r->skipped;
    int found;
    bool no_header = opt->no_header;
    CsvField *hf = NULL;
    CsvCursor tmp = {0}; /* scratch for unescaping names */
    char **names = NULL;
    size_t *lens = NULL;
    TlStatus st;
    tl_csv_skip_blank(r, &pos, &line, r->size);
    if (r->comment) pos = tl_csv_skip_comments(r->p, r->size, pos, r->comment, true, &line);
    r->data_start = pos;
    r->data_line = line;
    if (pos >= r->size) return TL_OK; /* no columns at all */
    {
        size_t p2 = pos;
        int64_t l2 = line;
        TL_TRY(tl_csv_parse_record(r, &p2, &l2, NULL, 1, 0, &found, err));
    }
    if (found > r->max_cols) /* counted, nothing held yet */
        return tl_too_many_columns(err, r->name, line, r->max_cols);
    if (!no_header && !opt->header) {
        bool header;
        TL_TRY(tl_csv_header_guess(r, pos, line, found, more_follows, &header, sure, err));
        r->headless = no_header = !header;
    }
    hf = tl_malloc((size_t)found * sizeof *hf);
    if (!hf) return tl_error_oom(err);
    st = tl_csv_parse_record(r, &pos, &line, hf, 1, found, &found, err);
    names = tl_calloc((size_t)found + 1, sizeof *names);
    lens = tl_calloc((size_t)found + 1, sizeof *lens);
    if (st == TL_OK && (!names || !lens)) st = tl_error_oom(err);
    for (int i = 0; st == TL_OK && i < found; i++) {
        const char *s = "";
        if (!no_header) {
            s = tl_csv_field_text(r, &tmp, &hf[i], &lens[i]);
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
        if (r->headless && !quiet)
            fprintf(stderr, "tally: note: %s: line %lld read as data, not as a header "
                    "(its values fit their columns): columns column1...; --header "
                    "reads it as names\n", r->name, (long long)r->data_line);
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
    const char *s = tl_csv_field_text(r, d, d->cols[c] + row, &len);
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
                if (r->headless)
                    return tl_error(err, TL_ERR_USAGE, "--schema: no column %s in %s "
                                    "(line %lld was read as data, so the columns are "
                                    "column1...: --header reads it as names)",
                                    tl_quote_name(fixed->fields[i].name).s, r->name,
                                    (long long)r->data_line);
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
    if (tl_csv_cursor_init(r, &d, err) != TL_OK) goto fail;
    chunk = r->max_rows < INFER_CHUNK ? r->max_rows : INFER_CHUNK;
    if (chunk > INFER_FIELDS / r->n_cols)
        chunk = INFER_FIELDS / r->n_cols > 16 ? INFER_FIELDS / r->n_cols : 16;
    if ((int64_t)((r->size - r->data_start) / (size_t)r->n_cols) + 1 < chunk)
        chunk = (int64_t)((r->size - r->data_start) / (size_t)r->n_cols) + 1;
    if (tl_csv_cursor_reserve(r, &d, open_col, chunk, err) != TL_OK) goto fail;
    tl_csv_cursor_seek(&d, r->data_start, r->size, r->data_line);
    while (total < r->max_rows && d.pos < d.end) {
        int64_t want = r->max_rows - total < chunk ? r->max_rows - total : chunk;
        tl_csv_cursor_store(r, &d, open_col);
        if (tl_csv_tokenize(r, &d, want, err) != TL_OK) goto fail;
        if (d.n_rows == 0) break;
        total += d.n_rows;
        for (int s = 0; s < d.n_store; s++) {
            int c = d.store[s];
            int64_t why;
            TlType t = tl_csv_infer_column(r, &d, c, r->schema.fields[c].type, &why);
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
    tl_csv_cursor_free(&d);
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
    bool hdr_sure = true; /* header detection saw its whole sample */
    *out = NULL;
    *sure = true;
    if (delimiter == '"' || delimiter == '\n' || delimiter == '\r')
        return tl_error(err, TL_ERR_USAGE, "--delimiter cannot be a quote or a newline");
    if (opt->escape > 0 && opt->tsv)
        return tl_error(err, TL_ERR_USAGE, "--escape: TSV has its own backslash escapes "
                        "(\\t \\n \\r \\\\), decoded in any case");
    if (opt->escape > 0 && opt->quote < 0)
        return tl_error(err, TL_ERR_USAGE, "--escape: --quote none turns quoting off, "
                        "so nothing is escaped");
    if (opt->delimiter && opt->quote > 0 && (char)opt->quote == delimiter)
        return tl_error(err, TL_ERR_USAGE, "--quote: the delimiter cannot also be the quote");
    if (opt->delimiter && opt->escape > 0 && (char)opt->escape == delimiter)
        return tl_error(err, TL_ERR_USAGE, "--escape: the delimiter cannot also be the escape");
    r = tl_calloc(1, sizeof *r);
    if (!r) return tl_error_oom(err);
    r->base.ops = &csv_ops;
    r->base.ctx = opt->ctx;
    r->hints = hints;
    r->flatten = tl_csv_flatten_fn(tl_csv_scan_best(TL_TUNING(opt->ctx)->csv_scan));
    r->split_scan = split_scan_fn(tl_csv_scan_best(TL_TUNING(opt->ctx)->csv_scan));
    r->avg_record = 1;
    r->name = tl_strdup(tl_escape_name(tl_input_name(path)).s);
    if (!r->name) goto oom;
    r->quoted_as_string = opt->quoted_as_string;
    r->decimal_comma = opt->decimal_comma;
    r->quiet = opt->quiet;
    r->max_cols = tl_max_columns(opt);
    r->tsv = opt->tsv;
    r->ragged = opt->ragged;
    if (opt->null_text || opt->tsv) { /* IANA TSV: \N is null */
        r->null_text = tl_strdup(opt->null_text ? opt->null_text : "\\N");
        if (!r->null_text) goto oom;
        r->null_len = strlen(r->null_text);
    }
    if (tl_input_load_stream(opt->ctx, path, &r->input, err) != TL_OK) goto fail;
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
    r->comment = opt->comment == TL_COMMENT_NONE ? 0 : (uint8_t)opt->comment;
    {
        size_t i = r->start;
        while (i < r->size && (r->p[i] == ' ' || r->p[i] == '\t' || r->p[i] == '\n' ||
                               r->p[i] == '\r'))
            i++;
        if (i < r->size && (r->p[i] == '{' || r->p[i] == '[')) r->json_like = (char)r->p[i];
    }
    {
        /* the dialect: what the options leave open is sniffed (IANA TSV:
         * no quotes unless --quote, no escape); the suffix's delimiter
         * breaks ties */
        TlCsvGiven g = {opt->delimiter ? delimiter : 0, delimiter,
                        opt->quote ? opt->quote : opt->tsv ? -1 : 0,
                        opt->tsv ? -1 : opt->escape, opt->comment, opt->skip != 0};
        /* --decimal-comma: ';' stands in for the suffix's ',' (a file no
         * delimiter splits consistently is one column, its numbers'
         * commas no delimiter); ',' is still a candidate, as in DuckDB */
        if (opt->decimal_comma && !opt->delimiter && g.dflt == ',') g.dflt = ';';
        TlCsvDialect dl;
        tl_csv_sniff(r->p + r->start, r->size - r->start, r->size < full, &g, &dl);
        r->comment = (uint8_t)dl.comment;
        if (r->comment) r->flatten = NULL; /* tl_csv_tokenize sees all lines */
        if (dl.skip > 0) { /* a sniffed preamble: as --skip */
            int64_t more;
            r->start = tl_csv_skip_lines(r->p, r->size, r->start, dl.skip, &more);
            r->skipped += more;
        }
        if (dl.quote && dl.quote == dl.delim) {
            char sq[8];
            tl_error(err, TL_ERR_USAGE, "--quote %s is the delimiter (--delimiter sets "
                     "another)", tl_csv_char_spelling(dl.quote, sq));
            goto fail;
        }
        r->delim = (uint8_t)dl.delim;
        r->quotes = dl.quote != 0;
        r->quote = dl.quote ? (uint8_t)dl.quote : '"';
        r->escape = (uint8_t)dl.escape;
        /* the SIMD split scan knows '"' and doubled quotes: other quoting
         * is split record by record (tl_csv_split_scan_records) */
        if (r->quotes && (r->quote != '"' || r->escape))
            r->split_scan = tl_csv_split_scan_records;
        r->special[r->delim] = r->special['\n'] = r->special['\r'] = 1;
        r->dialect = dl;
        r->dialect.quote_given = opt->quote != 0;
        if (read_header(r, opt, r->size < full, &hdr_sure, err) != TL_OK) goto fail;
        if (!opt->no_header && !r->headless && tl_input_is_stream(r->input) &&
            r->data_start - r->start > r->max_record) {
            /* the header is a record too (--max-record-size; the split
             * checks the others) */
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
        tl_csv_dialect_hint(r->p + r->start, r->size - r->start, r->n_cols, &dl, g.dflt,
                            opt->tsv, r->comment ? (char)r->comment : opt->comment,
                            r->hint, sizeof r->hint);
    }

    r->fixed = tl_calloc((size_t)r->n_cols + 1, sizeof *r->fixed);
    r->base.stats.converted = tl_calloc((size_t)r->n_cols + 1, sizeof(int64_t));
    if (!r->fixed || !r->base.stats.converted) goto oom;
    max_rows = opt->morsel_rows > 0                       ? opt->morsel_rows
               : TL_TUNING(opt->ctx)->csv_morsel_rows > 0 ? TL_TUNING(opt->ctx)->csv_morsel_rows
                                                         : tl_ctx_batch_rows(opt->ctx);
    if (r->n_cols > 0 && max_rows > MAX_BATCH_FIELDS / r->n_cols)
        max_rows = MAX_BATCH_FIELDS / r->n_cols;
    if (max_rows < 1) max_rows = 1;
    r->max_rows = max_rows;
    r->morsel_bytes = (size_t)TL_TUNING(opt->ctx)->csv_morsel_bytes;
    r->split_pos = r->n_cols > 0 ? r->data_start : r->size;
    r->split_line = r->data_line;
    r->base.stats.bytes = (int64_t)r->data_start;
    if (decide_types(r, opt->schema, hints, &sample_end, &sample_rows, err) != TL_OK)
        goto fail;
    if (ready < full) {
        *sure = hdr_sure && r->n_cols > 0 && sample_rows == r->max_rows &&
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
