/*
 * csv_header.c -- whether line 1 of a CSV/TSV input is a header.
 *
 * Files without a header line are common (database dumps, TPC tables,
 * logs), and reading their first record as names loses a row and names
 * columns after data; DuckDB's sniffer decides it from the data, and so
 * does tally, by a rule a user can predict (man/tally.1, "Header
 * detection"), close to DuckDB's:
 *
 *   - every field of the sample is given a kind by its text alone (spaces
 *     around it ignored): empty (also a --null text), boolean (true,
 *     false, t, f, yes, no in any case), integer,
 *     decimal, date, time, timestamp, or text (shape() below);
 *   - the sample is line 1 and the records after it, at most
 *     TL_HEADER_RECORDS of them within TL_HEADER_BYTES of line 1's start
 *     (blank and --comment lines skipped; a record cut by that bound, or
 *     one that does not parse, ends the sample), so the answer depends only
 *     on the bytes, never on how much of a streamed input was ready;
 *   - a column's kind is the kind all its non-empty values after line 1
 *     share (integers among decimals are decimals, dates among timestamps
 *     timestamps), text when they differ, empty when there are none;
 *   - line 1 is a header when all its fields are empty, or every column is
 *     text, or one of its non-empty fields does not fit its column's kind
 *     (an integer fits a decimal column, a date a timestamp column, any
 *     value a text column, none an empty one); with no record after line
 *     1, when every field of line 1 is text.
 *
 * DuckDB decides the same way from its own types (its sample is larger,
 * and it also types hexadecimal numbers and a few more spellings), so a
 * file of names over numbers has a header and a file of numbers only, or
 * of dates and numbers, has none.
 */
#include "csv_impl.h"

/* The kinds of a field's text, and of a column. */
enum { K_EMPTY, K_BOOL, K_INT, K_DEC, K_DATE, K_TIME, K_TS, K_TEXT };

static bool is_digit(uint8_t c) { return (unsigned)(c - '0') <= 9; }

/* The end of the run of digits at s[i..n). */
static size_t digits_end(const uint8_t *s, size_t i, size_t n)
{
    while (i < n && is_digit(s[i])) i++;
    return i;
}

static bool ci_equal(const uint8_t *s, size_t n, const char *w)
{
    size_t k = strlen(w);
    if (n != k) return false;
    for (size_t i = 0; i < n; i++)
        if ((s[i] | 0x20) != (uint8_t)w[i]) return false;
    return true;
}

/* A number: -?digits[.digits][e[+-]digits] (".5" and "5." too; sep is
 * the decimal separator), inf, infinity or nan; a leading zero before
 * other digits or a '+' makes it text, as in type inference (infer.h).
 * K_INT when it is an integer within int64, else K_DEC; K_TEXT if none. */
static int number_kind(const uint8_t *s, size_t n, uint8_t sep)
{
    size_t i = s[0] == '-', d0 = i, nd, nf = 0;
    bool integer = true;
    if (ci_equal(s + i, n - i, "inf") || ci_equal(s + i, n - i, "infinity") ||
        ci_equal(s + i, n - i, "nan"))
        return K_DEC;
    i = digits_end(s, i, n);
    nd = i - d0;
    if (nd > 1 && s[d0] == '0') return K_TEXT;
    if (i < n && s[i] == sep) {
        size_t f0 = ++i;
        i = digits_end(s, i, n);
        nf = i - f0;
        integer = false;
    }
    if (nd + nf == 0) return K_TEXT;
    if (i < n && (s[i] | 0x20) == 'e') {
        size_t e0;
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        e0 = i;
        i = digits_end(s, i, n);
        if (i == e0) return K_TEXT;
        integer = false;
    }
    if (i != n) return K_TEXT;
    if (integer && nd >= 19) { /* beyond int64: a decimal, as in DuckDB */
        const char *lim = s[0] == '-' ? "9223372036854775808" : "9223372036854775807";
        if (nd > 19 || memcmp(s + d0, lim, 19) > 0) return K_DEC;
    }
    return integer ? K_INT : K_DEC;
}

/* The length of a date at the start of s[0..n): three groups of digits
 * joined by the same '-', '/' or '.', the middle one of 1 or 2 digits, the
 * others of 1 to 4 (2024-01-31, 31.01.2024, 1/31/24); 0 if none. */
static size_t date_len(const uint8_t *s, size_t n)
{
    size_t a = digits_end(s, 0, n), b, c;
    uint8_t sep;
    if (a < 1 || a > 4 || a >= n) return 0;
    sep = s[a];
    if (sep != '-' && sep != '/' && sep != '.') return 0;
    b = digits_end(s, a + 1, n);
    if (b - (a + 1) < 1 || b - (a + 1) > 2 || b >= n || s[b] != sep) return 0;
    c = digits_end(s, b + 1, n);
    if (c - (b + 1) < 1 || c - (b + 1) > 4) return 0;
    return c;
}

/* The length of a time at the start of s[0..n): H:MM or HH:MM, then
 * optionally :SS and a fraction; 0 if none. */
static size_t time_len(const uint8_t *s, size_t n)
{
    size_t h = digits_end(s, 0, n), i;
    if (h < 1 || h > 2 || h + 3 > n || s[h] != ':') return 0;
    if (digits_end(s, h + 1, n) != h + 3) return 0;
    i = h + 3;
    if (i + 3 <= n && s[i] == ':' && digits_end(s, i + 1, n) == i + 3) {
        i += 3;
        if (i + 1 < n && s[i] == '.' && is_digit(s[i + 1])) i = digits_end(s, i + 1, n);
    }
    return i;
}

/* A time zone after a timestamp's time: Z, or +HH, +HH:MM, +HHMM (or
 * '-'), filling s[0..n) exactly. */
static bool zone(const uint8_t *s, size_t n)
{
    if (n == 1 && (s[0] == 'Z' || s[0] == 'z')) return true;
    if (n < 3 || (s[0] != '+' && s[0] != '-') || digits_end(s, 1, n) != 3) return false;
    if (n == 3) return true;
    if (n == 5) return digits_end(s, 3, n) == 5;
    return n == 6 && s[3] == ':' && digits_end(s, 4, n) == 6;
}

/* The kind of the text s[0..n), already trimmed and not empty (by its
 * first byte first: this runs on every field of the sample). */
static int shape(const uint8_t *s, size_t n, bool decimal_comma)
{
    size_t d, t;
    uint8_t c = s[0] | 0x20;
    if (c == 't' || c == 'f' || c == 'y' || c == 'n') {
        if (ci_equal(s, n, "true") || ci_equal(s, n, "false") || ci_equal(s, n, "t") ||
            ci_equal(s, n, "f") || ci_equal(s, n, "yes") || ci_equal(s, n, "no"))
            return K_BOOL;
        return ci_equal(s, n, "nan") ? K_DEC : K_TEXT;
    }
    if (!is_digit(s[0]) && s[0] != '-' && s[0] != '.' && s[0] != ',' && c != 'i')
        return K_TEXT;
    {
        int k = number_kind(s, n, decimal_comma ? ',' : '.');
        if (k != K_TEXT || !is_digit(s[0])) return k;
    }
    if ((d = date_len(s, n)) > 0) {
        if (d == n) return K_DATE;
        if (s[d] != 'T' && s[d] != ' ') return K_TEXT;
        t = time_len(s + d + 1, n - d - 1);
        if (t == 0) return K_TEXT;
        return d + 1 + t == n || zone(s + d + 1 + t, n - d - 1 - t) ? K_TS : K_TEXT;
    }
    return time_len(s, n) == n ? K_TIME : K_TEXT;
}

/* Two kinds as one column's. */
static int join_kinds(int a, int b)
{
    if (a == K_EMPTY || a == b) return b;
    if (b == K_EMPTY) return a;
    if ((a == K_INT && b == K_DEC) || (a == K_DEC && b == K_INT)) return K_DEC;
    if ((a == K_DATE && b == K_TS) || (a == K_TS && b == K_DATE)) return K_TS;
    return K_TEXT;
}

/* Whether a line-1 field of kind v fits a column of kind col. */
static bool fits(int col, int v)
{
    return v == K_EMPTY || col == K_TEXT || col == v || (col == K_DEC && v == K_INT) ||
           (col == K_TS && v == K_DATE);
}

/* The kind of field f of the record just parsed. */
static int field_kind(const CsvReader *r, CsvCursor *tmp, const CsvField *f, bool *oom)
{
    size_t len;
    const uint8_t *s;
    if (f->len == 0) return K_EMPTY;
    if (!(f->flags & F_QUOTED) && r->null_text && f->len == r->null_len &&
        memcmp(r->p + f->off, r->null_text, r->null_len) == 0)
        return K_EMPTY;
    s = (const uint8_t *)tl_csv_field_text(r, tmp, f, &len);
    if (!s) {
        *oom = true;
        return K_TEXT;
    }
    while (len > 0 && (s[0] == ' ' || s[0] == '\t')) s++, len--;
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t')) len--;
    return len == 0 ? K_EMPTY : shape(s, len, r->decimal_comma);
}

/* Parse the record at *pos into fields (n of them wanted) and give their
 * kinds to kinds[0..n) (K_EMPTY past the record's end; K_TEXT, unlooked
 * at, where skip[c] is K_TEXT: a text column stays text); false when it
 * does not parse or ends past lim. */
static bool record_kinds(const CsvReader *r, size_t *pos, int64_t *line, size_t lim,
                         CsvField *f, int n, CsvCursor *tmp, const uint8_t *skip,
                         uint8_t *kinds, bool *oom)
{
    TlError e = {0};
    int found;
    size_t p = *pos;
    if (tl_csv_parse_record(r, &p, line, f, 1, n, &found, &e) != TL_OK) {
        if (e.code == TL_ERR_OOM) *oom = true;
        return false;
    }
    if (p > lim) return false;
    *pos = p;
    for (int c = 0; c < n; c++)
        kinds[c] = skip && skip[c] == K_TEXT ? K_TEXT
                   : c < found ? (uint8_t)field_kind(r, tmp, &f[c], oom) : K_EMPTY;
    return !*oom;
}

/* See csv_impl.h. */
TlStatus tl_csv_header_guess(const CsvReader *r, size_t pos, int64_t line, int n,
                             bool more_follows, bool *header, bool *sure, TlError *err)
{
    size_t lim = r->size - pos > TL_HEADER_BYTES ? pos + TL_HEADER_BYTES : r->size;
    CsvField *f = tl_malloc(((size_t)n + 1) * sizeof *f);
    uint8_t *first = tl_calloc((size_t)n + 1, 2), *col, *kinds;
    CsvCursor tmp = {0};
    bool oom = false, all_empty = true, all_text = true, misfit = false;
    int64_t records = 0;
    *header = true;
    *sure = true;
    if (!f || !first || !(kinds = tl_malloc((size_t)n + 1))) {
        tl_free(f);
        tl_free(first);
        return tl_error_oom(err);
    }
    col = first + n + 1;
    if (record_kinds(r, &pos, &line, r->size, f, n, &tmp, NULL, first, &oom)) {
        int text = 0; /* columns that are text: once all are, the answer is known */
        while (records < TL_HEADER_RECORDS && text < n) {
            tl_csv_skip_blank(r, &pos, &line, lim);
            if (r->comment) pos = tl_csv_skip_comments(r->p, lim, pos, r->comment, true, &line);
            if (pos >= lim || !record_kinds(r, &pos, &line, lim, f, n, &tmp, col, kinds, &oom))
                break;
            for (int c = 0; c < n; c++) {
                uint8_t k = (uint8_t)join_kinds(col[c], kinds[c]);
                text += k == K_TEXT && col[c] != K_TEXT;
                col[c] = k;
            }
            records++;
        }
        for (int c = 0; c < n; c++) {
            all_empty &= first[c] == K_EMPTY;
            all_text &= (records > 0 ? col[c] : first[c]) == K_TEXT;
            misfit |= records > 0 && !fits(col[c], first[c]);
        }
        *header = all_empty || all_text || misfit;
        /* a sample that reached the end of the bytes ready of a stream
         * still running may not be the whole input's */
        *sure = !more_follows || records == TL_HEADER_RECORDS || text == n || lim < r->size;
    }
    tl_free(f);
    tl_free(first);
    tl_free(kinds);
    tl_free(tmp.scratch);
    return oom ? tl_error_oom(err) : TL_OK;
}
