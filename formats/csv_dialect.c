/*
 * csv_dialect.c -- the delimiter of a text input, decided from its first
 * records, and the hint an error gives when it looks wrong.
 *
 * Sniffing (man/tally.1, "CSV"): users hand tally files exported by
 * spreadsheets in locales that write `;`, databases that write `|` and
 * tools that write tabs into `.csv` files.  Reading such a file with the
 * suffix's delimiter gives one wide column or a field-count error, so the
 * delimiter is decided from the data, as DuckDB's sniffer does, by one rule
 * simple enough to state in the man page:
 *
 *   - the sample is the first TL_SNIFF_RECORDS records (header included,
 *     blank lines skipped) within the first TL_SNIFF_BYTES bytes; a record
 *     cut by the end of the sample is left out, so the sample, and with it
 *     the answer, depends only on the input's bytes, never on how much of
 *     a streamed input was ready;
 *   - a candidate (',' ';' '|' tab) is consistent when it splits every
 *     sampled record into the same number of fields, outside quotes in
 *     CSV (a '"' at a field's start opens a quoted field, "" inside it is
 *     a quote) and anywhere in IANA TSV, where quotes are data;
 *   - the consistent candidate with the most fields, more than one, wins;
 *     a tie goes to the suffix's delimiter (',' for .csv and standard
 *     input, tab for .tsv), then to the order above;
 *   - with no consistent candidate (a ragged file) the one splitting the
 *     header into the most fields wins, with the same ties, so the error
 *     that follows counts the fields the header promised.
 *
 * Four passes over at most 64 KiB cost nothing beside reading the file,
 * and keep each candidate's count independent of the others.
 */
#include "csv_dialect.h"

#include <stdio.h>
#include <string.h>

static const char candidates[] = {',', ';', '|', '\t'};
#define N_CAND ((int)sizeof candidates)

/* Field counts of candidate c over the sample: *first the header's,
 * returns true when every sampled record has that many fields. */
static bool count_fields(const uint8_t *p, size_t n, bool more_follows,
                         char c, bool quotes, char comment, int *first)
{
    size_t pos = 0;
    int records = 0;
    bool consistent = true;
    *first = 0;
    while (records < TL_SNIFF_RECORDS) {
        int fields = 1;
        bool at_start = true, inq = false, cut = false;
        while (pos < n && (p[pos] == '\n' || p[pos] == '\r' ||
                           (comment && p[pos] == (uint8_t)comment))) {
            int64_t one;
            if (p[pos] == (uint8_t)comment) {
                size_t next = tl_csv_skip_lines(p, n, pos, 1, &one);
                if (next >= n && more_follows) return consistent; /* cut */
                pos = next;
            } else {
                pos++;
            }
        }
        if (pos >= n) break;
        for (;;) {
            uint8_t ch;
            if (pos >= n) {
                cut = more_follows;
                break;
            }
            ch = p[pos];
            if (inq) {
                if (ch == '"' && pos + 1 < n && p[pos + 1] == '"') pos += 2;
                else {
                    if (ch == '"') inq = false;
                    pos++;
                }
                continue;
            }
            if (ch == '\n' || ch == '\r') break;
            pos++;
            if (quotes && at_start && ch == '"') {
                inq = true;
                at_start = false;
            } else if (ch == (uint8_t)c) {
                fields++;
                at_start = true;
            } else {
                at_start = false;
            }
        }
        if (cut) break;
        if (records == 0) *first = fields;
        else if (fields != *first) consistent = false;
        records++;
    }
    return consistent;
}

/* The best of the scores (ties: dflt, then candidate order), or dflt when
 * no score is above 1. */
static char best(const int score[N_CAND], char dflt)
{
    int top = 1, at = -1;
    for (int i = 0; i < N_CAND; i++)
        if (score[i] > top || (score[i] == top && top > 1 && candidates[i] == dflt)) {
            top = score[i];
            at = i;
        }
    return at < 0 ? dflt : candidates[at];
}

/* See csv_dialect.h. */
char tl_csv_sniff_delimiter(const uint8_t *p, size_t n, bool more_follows,
                            char dflt, bool quotes, char comment)
{
    int consistent[N_CAND], header[N_CAND];
    bool any = false;
    if (n > TL_SNIFF_BYTES) {
        n = TL_SNIFF_BYTES;
        more_follows = true;
    }
    for (int i = 0; i < N_CAND; i++) {
        bool ok = count_fields(p, n, more_follows, candidates[i], quotes, comment,
                               &header[i]);
        consistent[i] = ok ? header[i] : 0;
        if (ok && header[i] > 1) any = true;
    }
    return best(any ? consistent : header, dflt);
}

/* See csv_dialect.h. */
size_t tl_csv_skip_lines(const uint8_t *p, size_t size, size_t start, int64_t n,
                         int64_t *skipped)
{
    size_t i = start;
    *skipped = 0;
    while (*skipped < n && i < size) {
        const uint8_t *lf = memchr(p + i, '\n', size - i);
        const uint8_t *cr = memchr(p + i, '\r', (lf ? (size_t)(lf - p) : size) - i);
        if (cr) i = (size_t)(cr - p) + (cr + 1 < p + size && cr[1] == '\n' ? 2 : 1);
        else i = lf ? (size_t)(lf - p) + 1 : size;
        (*skipped)++;
    }
    return i;
}

/* See csv_dialect.h. */
size_t tl_csv_skip_comments(const uint8_t *p, size_t size, size_t pos, uint8_t comment,
                            bool blanks, int64_t *line)
{
    int64_t one;
    while (pos < size) {
        if (p[pos] == comment) {
            pos = tl_csv_skip_lines(p, size, pos, 1, &one);
            (*line)++;
        } else if (blanks && (p[pos] == '\n' || p[pos] == '\r')) {
            pos += p[pos] == '\r' && pos + 1 < size && p[pos + 1] == '\n' ? 2 : 1;
            (*line)++;
        } else {
            break;
        }
    }
    return pos;
}

/* See csv_dialect.h. */
const char *tl_csv_delim_spelling(char delim)
{
    static const char *const spelled[] = {"','", "';'", "'|'", "'\\t'"};
    static _Thread_local char other[8];
    for (int i = 0; i < N_CAND; i++)
        if (candidates[i] == delim) return spelled[i];
    snprintf(other, sizeof other, "'%c'", delim);
    return other;
}

/* See csv_dialect.h. */
void tl_csv_dialect_hint(const uint8_t *hdr, size_t n, int n_cols, char delim,
                         char dflt, bool tsv, char comment, char *buf, size_t cap)
{
    int count[N_CAND] = {0};
    snprintf(buf, cap, "%s, delimiter %s%s%s", tsv ? "TSV" : "CSV",
             tl_csv_delim_spelling(delim), dflt && delim != dflt ?
             " sniffed from the first records: --delimiter sets it" : "",
             !comment && n > 0 && hdr[0] == '#' ?
             "; the first line starts with '#': try --comment '#'" : "");
    if (!comment && n > 0 && hdr[0] == '#') return;
    if (n_cols != 1) return;
    for (size_t i = 0; i < n && hdr[i] != '\n' && hdr[i] != '\r'; i++)
        for (int k = 0; k < N_CAND; k++)
            if (hdr[i] == (uint8_t)candidates[k] && candidates[k] != delim)
                count[k]++;
    for (int k = 0, top = 0; k < N_CAND; k++)
        if (count[k] > top) {
            top = count[k];
            snprintf(buf, cap, "read as one column, but the header holds %s: "
                     "try --delimiter %s", tl_csv_delim_spelling(candidates[k]),
                     tl_csv_delim_spelling(candidates[k]));
        }
}
