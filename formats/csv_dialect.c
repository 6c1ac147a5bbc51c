/*
 * csv_dialect.c -- the dialect of a text input (delimiter, quote, escape),
 * decided from its first records, and the hints errors give about it.
 *
 * Sniffing (man/tally.1, "Dialect sniffing"): users hand tally files
 * exported by spreadsheets in locales that write `;`, databases that write
 * `|` and tools that write tabs into `.csv` files, SQL tools that quote
 * with `'`, and programs that escape a quote as `\"`.  Reading such a file
 * with the defaults gives one wide column or an error, so the dialect is
 * decided from the data, as DuckDB's sniffer does, by one rule simple
 * enough to state in the man page (tl_csv_sniff in csv_dialect.h):
 *
 *   - the sample is the first TL_SNIFF_RECORDS records (header included,
 *     blank lines skipped) within the first TL_SNIFF_BYTES bytes; a record
 *     cut by the end of the sample is left out, so the sample, and with it
 *     the answer, depends only on the input's bytes, never on how much of
 *     a streamed input was ready;
 *   - every combination of delimiter (',' ';' '|' tab), quote ('"', '\'')
 *     and escape (none, backslash) the options leave open is tried with
 *     the reader's own record rules; a combination is consistent when every
 *     sampled record parses into the same number of fields;
 *   - the most fields wins; ties go to the suffix's delimiter, then to a
 *     quote that quotes some field, then to the order above, so a file
 *     that parses alike under several dialects gets the plain one, and the
 *     single quote or the backslash escape only where the sample shows
 *     them (a `'` must open and close a field of the sample to be taken);
 *   - with no consistent candidate (a ragged file, a quote error) the
 *     delimiter splitting the header into the most fields wins, with the
 *     same ties, so the error that follows counts the fields the header
 *     promised.
 *
 * Candidates whose characters the sample does not hold are not tried, so
 * the usual file costs the four delimiter passes over at most 64 KiB,
 * nothing beside reading the file.
 */
#include "csv_dialect.h"
#include "format.h" /* TL_COMMENT_NONE */

#include <stdio.h>
#include <string.h>

static const char candidates[] = {',', ';', '|', '\t'};
#define N_CAND ((int)sizeof candidates)

/* What one candidate dialect makes of the sample. */
typedef struct Count {
    int first;         /* the header's fields */
    bool same;         /* every sampled record has that many */
    bool valid;        /* every sampled record parses (tl_csv_parse_record's
                          rules: a quoted field closes, and only the
                          delimiter or a line end follows its closing quote) */
    bool quoted;       /* a quoted field opened and closed */
    bool cut_quoted;   /* the sample ends inside a quoted field */
    int records;       /* the records sampled */
} Count;

/* The sample's records under delimiter c, quote q (0: none) and escape e
 * (0: none; a doubled quote is a quote in any case). */
static Count count_fields(const uint8_t *p, size_t n, bool more_follows, char c,
                          char q, char e, char comment)
{
    size_t pos = 0;
    int records = 0;
    Count k = {0, true, true, false, false, 0};
    const uint8_t uq = (uint8_t)q, ue = (uint8_t)e;
    while (records < TL_SNIFF_RECORDS) {
        int fields = 1;
        bool at_start = true, inq = false, closed = false, cut = false;
        while (pos < n && (p[pos] == '\n' || p[pos] == '\r' ||
                           (comment && p[pos] == (uint8_t)comment))) {
            int64_t one;
            if (p[pos] == (uint8_t)comment) {
                size_t next = tl_csv_skip_lines(p, n, pos, 1, &one);
                if (next >= n && more_follows) return k; /* cut */
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
                if (inq) {
                    k.cut_quoted = cut;
                    if (!cut) k.valid = false; /* unterminated */
                }
                break;
            }
            ch = p[pos];
            if (inq) {
                if (ch == uq && pos + 1 < n && p[pos + 1] == uq) {
                    pos += 2;
                } else if (ue && ch == ue && pos + 1 < n &&
                           (p[pos + 1] == uq || p[pos + 1] == ue)) {
                    pos += 2;
                } else if (ch == uq && pos + 1 >= n && more_follows) {
                    pos++; /* a doubled quote, or the closing one? cut */
                } else {
                    if (ch == uq) {
                        inq = false;
                        closed = true;
                        k.quoted = true;
                    }
                    pos++;
                }
                continue;
            }
            if (ch == '\n' || ch == '\r') break;
            if (closed && ch != (uint8_t)c) k.valid = false;
            closed = false;
            pos++;
            if (uq && at_start && ch == uq) {
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
        if (records == 0) k.first = fields;
        else if (fields != k.first) k.same = false;
        k.records = ++records;
    }
    return k;
}

/* tl_csv_sniff's rule with lines starting with comment (0: none) skipped;
 * returns the fields the answer gives the header, and *consistent whether
 * a consistent candidate was found. */
static int sniff_with(const uint8_t *p, size_t n, bool more_follows, const TlCsvGiven *g,
                      char comment, TlCsvDialect *out, bool *consistent, int *records)
{
    struct {
        char delim, quote, escape;
        Count k;
        bool ok; /* valid, same, and (a sniffed ') quoting and closed */
    } cand[N_CAND * 4];
    char delims[N_CAND], quotes[2], escapes[2];
    int nd = 0, nq = 0, ne = 0, nc = 0, best = -1, header[N_CAND] = {0};
    if (n > TL_SNIFF_BYTES) {
        n = TL_SNIFF_BYTES;
        more_follows = true;
    }
    if (g->delim) delims[nd++] = g->delim;
    else
        for (int i = 0; i < N_CAND; i++) delims[nd++] = candidates[i];
    if (g->quote > 0) quotes[nq++] = (char)g->quote;
    else if (g->quote < 0) quotes[nq++] = 0;
    else {
        /* '"', and the single quote when the sample holds one */
        quotes[nq++] = '"';
        if (memchr(p, '\'', n)) quotes[nq++] = '\'';
    }
    if (g->escape > 0) escapes[ne++] = (char)g->escape;
    else {
        escapes[ne++] = 0;
        if (g->escape == 0 && memchr(p, '\\', n)) escapes[ne++] = '\\';
    }
    out->delim = g->delim ? g->delim : g->dflt;
    out->quote = quotes[0];
    out->escape = quotes[0] && escapes[0] != quotes[0] ? escapes[0] : 0;
    /* every candidate, in the order of the rule */
    for (int di = 0; di < nd; di++)
        for (int qi = 0; qi < nq; qi++)
            for (int ei = 0; ei < ne; ei++) {
                const char c = delims[di], q = quotes[qi];
                const char e = q && escapes[ei] != q ? escapes[ei] : 0;
                Count k;
                if ((q && q == c) || (e && e == c) || (!q && ei > 0)) continue;
                k = count_fields(p, n, more_follows, c, q, e, comment);
                if (qi == 0 && ei == 0) header[di] = k.first;
                cand[nc].delim = c;
                cand[nc].quote = q;
                cand[nc].escape = e;
                cand[nc].k = k;
                /* a sniffed quote other than '"' must quote a field of
                 * the sample (and close it there) to compete */
                cand[nc].ok = k.valid && k.same &&
                              !(g->quote == 0 && qi > 0 && (!k.quoted || k.cut_quoted));
                nc++;
            }
    /* the most fields (more than one), then the suffix's delimiter, then a
     * quote that quotes, then the order */
    for (int i = 0; i < nc; i++) {
        const Count *k = &cand[i].k, *b = best >= 0 ? &cand[best].k : NULL;
        bool dflt = cand[i].delim == g->dflt;
        if (!cand[i].ok || k->first < 2) continue;
        if (!b || k->first > b->first ||
            (k->first == b->first &&
             (dflt > (cand[best].delim == g->dflt) ||
              (dflt == (cand[best].delim == g->dflt) && k->quoted > b->quoted))))
            best = i;
    }
    if (best < 0) {
        /* none: the delimiter splitting the header most (a ragged file),
         * else the given or the suffix's one; for it, a quote that quotes
         * a consistent one-column sample ('Doc') */
        int top = 1;
        for (int di = 0; !g->delim && di < nd; di++)
            if (header[di] > top || (header[di] == top && top > 1 && delims[di] == g->dflt)) {
                top = header[di];
                out->delim = delims[di];
            }
        for (int i = 0; top == 1 && i < nc; i++)
            if (cand[i].ok && cand[i].delim == out->delim &&
                (best < 0 || cand[i].k.quoted > cand[best].k.quoted))
                best = i;
        if (best >= 0 && !cand[best].k.quoted) best = -1; /* the first quote */
    }
    *consistent = best >= 0 && cand[best].k.first >= 2;
    *records = best >= 0 ? cand[best].k.records : 0;
    if (best >= 0) {
        out->delim = cand[best].delim;
        out->quote = cand[best].quote;
        out->escape = cand[best].escape;
    }
    out->delim_sniffed = !g->delim;
    out->quote_sniffed = g->quote == 0 && out->quote != quotes[0];
    out->escape_sniffed = g->escape == 0 && out->escape != 0;
    out->quote_given = false;
    out->comment = comment;
    out->comment_sniffed = false;
    for (int di = 0; di < nd; di++)
        if (delims[di] == out->delim) return best >= 0 ? cand[best].k.first : header[di];
    return 1;
}

/* Whether a line of p[0..n) starts with '#'. */
static bool hash_line(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] == '#' && (i == 0 || p[i - 1] == '\n' || p[i - 1] == '\r')) return true;
    return false;
}

/* Whether the first s lines of p[0..n) (a preamble) each have fewer
 * fields under d than fields. */
static bool preamble_shorter(const uint8_t *p, size_t n, int s, const TlCsvDialect *d,
                             int fields)
{
    size_t pos = 0;
    for (int i = 0; i < s; i++) {
        int64_t one;
        size_t next = tl_csv_skip_lines(p, n, pos, 1, &one);
        Count k = count_fields(p + pos, next - pos, false, d->delim, d->quote, d->escape, 0);
        if (k.records > 0 && k.first >= fields) return false;
        pos = next;
    }
    return true;
}

/* Whether every one of the first records lines of p[0..n) (blank ones
 * passed over) ends with the delimiter c: a trailing delimiter, which
 * makes records one field longer than a header without it, so such a
 * file is no header under a preamble. */
static bool all_trailing(const uint8_t *p, size_t n, char c, int records)
{
    size_t pos = 0;
    for (int i = 0; i < records && pos < n;) {
        int64_t one;
        size_t next = tl_csv_skip_lines(p, n, pos, 1, &one), e = next;
        while (e > pos && (p[e - 1] == '\n' || p[e - 1] == '\r')) e--;
        if (e > pos) {
            if (p[e - 1] != (uint8_t)c) return false;
            i++;
        }
        pos = next;
    }
    return true;
}

/* Whether the line at p[0..n) has a field (split at c, quotes ignored)
 * that is neither empty nor number-like (digits, signs, points, commas,
 * exponents, spaces): a header, which a line of numbers under a one-line
 * "preamble" (a one-column file of "1,5" under its name) is not. */
static bool names_a_header(const uint8_t *p, size_t n, char c)
{
    bool text = false;
    for (size_t i = 0; i < n && p[i] != '\n' && p[i] != '\r'; i++) {
        if (p[i] == (uint8_t)c) continue;
        if (!strchr("0123456789+-.,eE \t\"'", p[i])) text = true;
    }
    return text;
}

/* See csv_dialect.h. */
void tl_csv_sniff(const uint8_t *p, size_t n, bool more_follows, const TlCsvGiven *g,
                  TlCsvDialect *out)
{
    bool ok, ok_hash;
    int records;
    TlCsvDialect hash;
    char comment = g->comment == TL_COMMENT_NONE ? 0 : g->comment;
    int fields = sniff_with(p, n, more_follows, g, comment, out, &ok, &records);
    out->skip = 0;
    if (!g->comment && hash_line(p, n < TL_SNIFF_BYTES ? n : TL_SNIFF_BYTES)) {
        /* DuckDB's sniffer tries '#' too: taken where it reads the file better */
        int fields_hash = sniff_with(p, n, more_follows, g, '#', &hash, &ok_hash, &records);
        if ((ok_hash && !ok) || fields_hash > fields) {
            *out = hash;
            out->comment_sniffed = true;
            out->skip = 0;
            ok = ok_hash;
        }
    }
    /* a preamble before the header (DuckDB's sniffer finds one too) */
    for (int s = 1; !ok && !g->skip_given && s <= TL_SNIFF_SKIP; s++) {
        int64_t got;
        size_t off = tl_csv_skip_lines(p, n < TL_SNIFF_BYTES ? n : TL_SNIFF_BYTES, 0, s, &got);
        TlCsvDialect alt;
        bool alt_ok;
        int f;
        if (got < s || off >= n) break;
        f = sniff_with(p + off, n - off, more_follows, g, out->comment, &alt, &alt_ok, &records);
        if (alt_ok && records >= 2 && preamble_shorter(p, off, s, &alt, f) &&
            !all_trailing(p + off, n - off, alt.delim, records) &&
            names_a_header(p + off, n - off, alt.delim)) {
            alt.comment_sniffed = out->comment_sniffed;
            *out = alt;
            out->skip = s;
        }
        ok = alt_ok && out->skip == s;
    }
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
const char *tl_csv_char_spelling(char c, char buf[8])
{
    if (c == '\t') snprintf(buf, 8, "'\\t'");
    else if (c == '\'') snprintf(buf, 8, "\"'\"");
    else snprintf(buf, 8, "'%c'", c);
    return buf;
}

/* "; quote X sniffed ...", "; escape X" and the like into
 * buf (empty for the format's defaults). */
static void quote_words(const TlCsvDialect *d, bool tsv, char *buf, size_t cap)
{
    char sq[8], se[8];
    size_t k = 0;
    buf[0] = 0;
    if (!d->quote && !tsv) {
        k = (size_t)snprintf(buf, cap, "; no quotes");
    } else if (d->quote && (tsv || d->quote != '"')) {
        k = (size_t)snprintf(buf, cap, "; quote %s%s", tl_csv_char_spelling(d->quote, sq),
                             d->quote_sniffed ? " sniffed from the first records: "
                                                "--quote sets it" : "");
    }
    if (k < cap && d->escape)
        k += (size_t)snprintf(buf + k, cap - k, "; escape %s%s",
                              tl_csv_char_spelling(d->escape, se),
                              d->escape_sniffed ? " sniffed from the first records: "
                                                  "--escape sets it" : "");
    if (k < cap && d->comment_sniffed)
        k += (size_t)snprintf(buf + k, cap - k, "; comment '#' sniffed from the first "
                              "records: --comment sets it");
    if (k < cap && d->skip)
        snprintf(buf + k, cap - k, "; %d line%s of preamble sniffed: --skip sets it",
                 d->skip, d->skip == 1 ? "" : "s");
}

/* See csv_dialect.h. */
void tl_csv_dialect_hint(const uint8_t *hdr, size_t n, int n_cols, const TlCsvDialect *d,
                         char dflt, bool tsv, char comment, char *buf, size_t cap)
{
    int count[N_CAND] = {0};
    char sd[8], sc[8], words[160];
    const char delim = d->delim;
    quote_words(d, tsv, words, sizeof words);
    snprintf(buf, cap, "%s, delimiter %s%s%s%s", tsv ? "TSV" : "CSV",
             tl_csv_char_spelling(delim, sd), d->delim_sniffed && delim != dflt ?
             " sniffed from the first records: --delimiter sets it" : "", words,
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
                     "try --delimiter %s", tl_csv_char_spelling(candidates[k], sd),
                     tl_csv_char_spelling(candidates[k], sc));
        }
}

/* See csv_dialect.h. */
void tl_csv_quote_hint(const TlCsvDialect *d, bool tsv, bool backslash, char *buf,
                       size_t cap)
{
    char sq[8], se[8], escape[96] = "";
    if (!tsv && d->quote == '"' && !d->escape && !backslash) {
        snprintf(buf, cap, "%s", TL_CSV_QUOTE_HINT);
        return;
    }
    if (d->escape)
        snprintf(escape, sizeof escape, "; escape %s%s", tl_csv_char_spelling(d->escape, se),
                 d->escape_sniffed ? " sniffed from the first records: --escape sets it"
                                   : " from --escape");
    else if (backslash)
        snprintf(escape, sizeof escape, ": --escape '\\' reads \\%c as a quote",
                 d->quote);
    if (d->quote != '"' || tsv)
        snprintf(buf, cap, " (quote %s%s%s; --quote none reads quotes as data)",
                 tl_csv_char_spelling(d->quote, sq),
                 d->quote_sniffed ? " sniffed from the first records: --quote sets it"
                                  : " from --quote", escape);
    else
        snprintf(buf, cap, " (a quote opens a quoted field%s; --quote none reads quotes "
                 "as data)", escape);
}
