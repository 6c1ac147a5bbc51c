/*
 * csv_tokenize.c -- the CSV reader's records into fields (csv_read.c, the
 * top, step 1): the fast tokenizer for plain records (SIMD masks of the
 * delimiter, line ends and quotes), tl_csv_parse_record for every other
 * record, tl_csv_tokenize over a morsel, and the cursors that hold the
 * fields found.
 */
#include "csv_impl.h"

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

/* Unescape a field into d->scratch (tl_csv_unescape); returns its text and length.
 * NULL on OOM. */
const char *tl_csv_field_text(const CsvReader *r, CsvCursor *d, const CsvField *f,
                              size_t *len)
{
    const uint8_t *s = r->p + f->off;
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
    *len = tl_csv_unescape(r, s, f->len, d->scratch);
    return (const char *)d->scratch;
}

/* See csv_impl.h. */
size_t tl_csv_unescape(const CsvReader *r, const uint8_t *s, size_t n, uint8_t *out)
{
    const uint8_t qc = r->quote, ec = r->escape;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        out[k++] = s[i];
        if (s[i] == qc) i++; /* the second quote of a pair */
        else if (ec && s[i] == ec && i + 1 < n && (s[i + 1] == qc || s[i + 1] == ec))
            out[k - 1] = s[++i];
    }
    return k;
}

/* ------------------------------------------------------------ tokenizer */

/* Lines that text[0..n) adds: LF, CRLF and a lone CR each end one. */
int64_t tl_csv_count_lines(const uint8_t *s, size_t n)
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
 *     for tl_csv_parse_record);
 *   - it is plain when no quote bit lies before its end, it is not blank,
 *     and the popcount of its delimiter bits is n_cols - 1 (so a ragged
 *     record goes to tl_csv_parse_record, which reports it as always);
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
 * tl_csv_parse_record, the general tokenizer, which gives the same fields.
 *
 * Three mask builders with the same results: AVX2 (when the CPU has it),
 * SSE2 (every x86-64), scalar; chosen at open (r->flatten), and
 * TALLY_TEST_CSV_SCAN forces one (or tl_csv_parse_record alone). */

#define WIN_WORDS 256 /* window: at most 16 KiB of input */

/* Fill dm/em/qm[0..words) with the delimiter, line-end and quote masks of
 * the blocks p[from + 64 w ..), bits at or past n cleared. */
#define DEFINE_MASKS(NAME, ATTR, MASK)                                         \
    ATTR static int NAME(const uint8_t *p, size_t n, uint8_t delim,            \
                         uint8_t quote, size_t from, int words, uint64_t *dm,  \
                         uint64_t *em, uint64_t *qm)                           \
    {                                                                          \
        int w;                                                                 \
        for (w = 0; w < words; w++, from += 64) {                              \
            if (from < n && n - from >= 64) {                                  \
                MASK(p + from, delim, quote, dm + w, em + w, qm + w);                 \
            } else if (from < n) {                                             \
                uint8_t tail[64] = {0};                                        \
                uint64_t keep = ~(uint64_t)0 >> (64 - (n - from));             \
                memcpy(tail, p + from, n - from);                              \
                MASK(tail, delim, quote, dm + w, em + w, qm + w);               \
                dm[w] &= keep;                                                 \
                em[w] &= keep;                                                 \
                qm[w] &= keep;                                                 \
            } else {                                                           \
                dm[w] = em[w] = qm[w] = 0;                                     \
            }                                                                  \
        }                                                                      \
        return w;                                                              \
    }

static inline void mask_scalar(const uint8_t *p, uint8_t delim, uint8_t quote,
                               uint64_t *dm, uint64_t *em, uint64_t *qm)
{
    uint64_t m = 0, e = 0, q = 0;
    for (int k = 0; k < 64; k++) {
        m |= (uint64_t)(p[k] == delim) << k;
        e |= (uint64_t)(p[k] == '\n' || p[k] == '\r') << k;
        q |= (uint64_t)(p[k] == quote) << k;
    }
    *dm = m;
    *em = e;
    *qm = q;
}
DEFINE_MASKS(flatten_scalar, , mask_scalar)

#if CSV_X86
static inline void mask_sse2(const uint8_t *p, uint8_t delim, uint8_t quote,
                             uint64_t *dm, uint64_t *em, uint64_t *qm)
{
    const __m128i d = _mm_set1_epi8((char)delim), u = _mm_set1_epi8((char)quote);
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

#define AVX2_MM(x) ((uint64_t)(uint32_t)_mm256_movemask_epi8(x))
AVX2_ATTR static inline void mask_avx2(const uint8_t *p, uint8_t delim, uint8_t quote,
                                       uint64_t *dm, uint64_t *em, uint64_t *qm)
{
    const __m256i d = _mm256_set1_epi8((char)delim), u = _mm256_set1_epi8((char)quote);
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

/* See fmt_impl.h. */
int tl_csv_scan_best(int want)
{
    int best = 1;
#if CSV_X86
    const unsigned need = TL_CPU_AVX2 | TL_CPU_POPCNT | TL_CPU_BMI1;
    best = (tl_cpu_features() & need) == need ? 3 : 2;
#endif
    if (want >= 0 && want < best) return want;
    return best;
}

/* The mask builder for mode (tl_csv_scan_best), NULL for
 * tl_csv_parse_record alone. */
FlattenFn tl_csv_flatten_fn(int mode)
{
    switch (mode) {
#if CSV_X86
    case 3: return flatten_avx2;
    case 2: return flatten_sse2;
#endif
    case 1: return flatten_scalar;
    default: return NULL;
    }
}

/* See csv_impl.h. */
bool tl_csv_avx2_mode(const CsvReader *r)
{
#if CSV_X86
    return r->flatten == flatten_avx2;
#else
    (void)r;
    return false;
#endif
}
/* ------------------------------------------- checks (late materialization)
 * (plain_i64, plain_f64 and their fast forms: csv_numbers.h) */

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
    words = (size_t)r->flatten(r->p, n, r->delim, r->quote, pos, (int)words, d->dm,
                               d->em, d->qm);
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
    if (pos < wb) we = 0; /* not the window's (tl_csv_cursor_seek clears it) */
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

/* The end of a quote error's message: for an input that starts as JSON does
 * (a .geojsonl file, JSON under another suffix) the knob that reads JSON,
 * not the CSV quote knobs. */
static void quote_hint(const CsvReader *r, bool backslash, char *hint, size_t cap)
{
    if (r->json_like)
        snprintf(hint, cap, " (read as CSV, but the input starts with '%c' as JSON does: "
                 "--from ndjson reads JSON lines, --from json JSON documents)", r->json_like);
    else
        tl_csv_quote_hint(&r->dialect, r->tsv, backslash, hint, cap);
}

/* Parse the record at *pos.  Stores at most max_fields fields in out, field
 * k at out[k * stride], and counts all of them in *n_found.  Advances *pos
 * past the record's line end and *line by the lines it spans.  Reads only
 * r (thread-safe). */
TlStatus tl_csv_parse_record(const CsvReader *r, size_t *pos, int64_t *line,
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
        if (i < n && p[i] == r->quote && r->quotes) {
            const uint8_t qc = r->quote, ec = r->escape;
            char hint[256];
            size_t open = i;
            flags = F_QUOTED;
            i++;
            for (;;) {
                const uint8_t *q;
                if (ec) { /* the quote or the escape, whichever comes first */
                    while (i < n && p[i] != qc && p[i] != ec) i++;
                    q = i < n ? p + i : NULL;
                } else {
                    q = memchr(p + i, qc, n - i);
                }
                if (!q) {
                    quote_hint(r, false, hint, sizeof hint);
                    return tl_error(err, TL_ERR_DATA,
                                    "%s:%lld:%lld: unterminated quoted field%s",
                                    r->name, (long long)cur_line,
                                    (long long)column_of(r, open), hint);
                }
                i = (size_t)(q - p);
                if (*q == ec && *q != qc) {
                    /* escape + quote or escape: that character; any other
                     * escape is kept as written */
                    if (i + 1 < n && (p[i + 1] == qc || p[i + 1] == ec)) {
                        flags |= F_ESCAPED;
                        i += 2;
                    } else {
                        i++;
                    }
                    continue;
                }
                if (i + 1 < n && p[i + 1] == qc) {
                    flags |= F_ESCAPED;
                    i += 2;
                    continue;
                }
                break;
            }
            off = open + 1;
            flen = i - off;
            i++; /* the closing quote */
            cur_line += tl_csv_count_lines(p + off, flen);
            if (i < n && p[i] != delim && p[i] != '\n' && p[i] != '\r') {
                /* a backslash before the closing quote: --escape reads it */
                quote_hint(r, !r->escape && p[i - 2] == '\\', hint, sizeof hint);
                return tl_error(err, TL_ERR_DATA,
                                "%s:%lld:%lld: unexpected character after "
                                "closing quote%s", r->name, (long long)cur_line,
                                (long long)column_of(r, i), hint);
            }
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

/* See csv_impl.h: no record is judged here, so split_cut parses each one
 * with tl_csv_parse_record, which knows every dialect. */
size_t tl_csv_split_scan_records(const uint8_t *p, size_t n, uint8_t delim, size_t pos,
                                 int64_t want, size_t stop, int64_t *rows, int64_t *lines,
                                 size_t *bad)
{
    (void)p;
    (void)delim;
    (void)want;
    (void)stop;
    (void)rows;
    (void)lines;
    *bad = pos < n ? pos : SIZE_MAX;
    return pos;
}

/* Skip any empty lines at *pos, up to lim. */
void tl_csv_skip_blank(const CsvReader *r, size_t *pos, int64_t *line, size_t lim)
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

/* The quote a field-count error suggests for the record p[a..b), or 0: a
 * field of it starts with ' in CSV whose quote was left to sniffing (which
 * kept '"'), or with '"' in TSV without --quote (quotes are data there). */
static char quote_to_try(const CsvReader *r, size_t a, size_t b)
{
    char q;
    if (r->dialect.quote_given) return 0;
    if (r->tsv) q = '"';
    else if (r->quote == '"') q = '\'';
    else return 0;
    for (size_t i = a; i < b; i++)
        if (r->p[i] == (uint8_t)q && (i == a || r->p[i - 1] == r->delim)) return q;
    return 0;
}

/* Tokenize records from d->pos (up to d->end) into rows [d->n_rows,
 * max_rows) of the cursor's stored columns; max_rows <= d->cap. */
TlStatus tl_csv_tokenize(const CsvReader *r, CsvCursor *d, int64_t max_rows,
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
                tl_csv_skip_blank(r, &d->pos, &d->line, d->end);
                continue;
            }
            if (d->pos >= d->blank_until) {
                /* A one-column file: empty lines are nulls unless only empty
                 * lines follow (to the end of the input, not the morsel). */
                size_t j = d->pos;
                while (j < r->size && (r->p[j] == '\n' || r->p[j] == '\r')) j++;
                if (j == r->size) {
                    tl_csv_skip_blank(r, &d->pos, &d->line, d->end);
                    break;
                }
                d->blank_until = j;
            }
        }
        at_line = d->line;
        at_pos = d->pos;
        TL_TRY(tl_csv_parse_record(r, &d->pos, &d->line, d->rec, 1, nc, &found, err));
        /* (the fast tokenizer takes no record with a quote) */
        if (!d->saw_quote && memchr(r->p + at_pos, r->quote, d->pos - at_pos))
            d->saw_quote = true;
        if (found != nc && r->ragged == TL_RAGGED_SKIP) continue;
        if (found != nc && (r->ragged != TL_RAGGED_PAD || found > nc)) {
            char q = quote_to_try(r, at_pos, d->pos), sq[8], try[64] = "";
            if (q)
                snprintf(try, sizeof try, "; a field starts with %c: --quote %s quotes with it",
                         q, tl_csv_char_spelling(q, sq));
            return tl_error(err, TL_ERR_DATA, "%s:%lld: expected %d field%s, found %d (%s%s; %s)",
                            r->name, (long long)at_line, nc, nc == 1 ? "" : "s", found,
                            r->hint, try, found > nc ? "--ragged skip drops such rows"
                                                     : "--ragged pad or skip reads such rows");
        }
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

/* --------------------------------------------------------------- cursors */

/* Allocate a cursor's fixed parts for r (n_cols wide). */
TlStatus tl_csv_cursor_init(const CsvReader *r, CsvCursor *d, TlError *err)
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

void tl_csv_cursor_free(CsvCursor *d)
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
void tl_csv_cursor_store(const CsvReader *r, CsvCursor *d, const bool *want)
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
TlStatus tl_csv_cursor_reserve(const CsvReader *r, CsvCursor *d, const bool *want,
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
void tl_csv_cursor_seek(CsvCursor *d, size_t pos, size_t end, int64_t line)
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
