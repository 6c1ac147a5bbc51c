/*
 * json_doc.c -- a .json input read by its content: NDJSON (one object a
 * line), one top-level array of objects, or objects one after another
 * (pretty-printed or not).  `--from json` and standard input starting with
 * '{' or '[' come here too; `--from ndjson` goes straight to the NDJSON
 * reader, and so do .ndjson and .jsonl unless the sniffer finds a document
 * (a top-level '[' or a closed object over several lines), which is then
 * an error naming --from json (tl_json_ndjson_open).
 *
 * Sniffing (deterministic: the first SNIFF_BYTES of the input and its
 * size decide).  After a UTF-8 BOM and blanks:
 *
 *   '{' and every object that starts in the first SNIFF_BYTES lies on one
 *       line, with a line end between any two   -> the NDJSON reader on the
 *       input itself (mapped, split into morsels, decoded in parallel)
 *   '[' or '{' otherwise                        -> the document path below
 *   nothing (empty or blank)                    -> the NDJSON reader (no rows)
 *   anything else                               -> an error: a top-level
 *       scalar is not a table
 *
 * The document path turns the document into NDJSON text and hands that to
 * the NDJSON reader, so values, columns, types, restarts, morsels and
 * threads are the NDJSON reader's, unchanged.  The text is built in one
 * serial pass that tracks only strings and brackets (the NDJSON decoder
 * validates everything inside the objects) and keeps every byte where it
 * was:
 *
 *   [\n  {"a": 1,\n   "b": 2},\n  {"a": 3}\n]      the document
 *   _\n  {"a": 1,_   "b": 2}_\n  {"a": 3}__        the text (_ = space)
 *
 * the brackets and commas between objects become spaces, line ends inside
 * an object become spaces, and a gap between two objects that holds no
 * line end gets one in its last byte.  Only two objects with nothing
 * between them (`{...}{...}`) need a byte inserted; those few offsets are
 * kept (ins), so any offset of the text maps back to the document's.  The
 * text is a heap copy of the input (memory: the file's size again); the
 * NDJSON reader gets it through its options (TlReadOptions.text), in
 * place of loading the path.
 *
 * Lines and columns: the NDJSON reader names lines and columns of the text.
 * Its messages ("NAME:LINE:COL: ...", "NAME:LINE: ...") are mapped back:
 * text line and column -> text offset -> document offset -> document line
 * and column (the bytes that differ are ASCII, so columns count the same
 * characters).  Morsels: split gives the document line of the morsel's
 * first record (tl_reader_locate reports it); decode hands the NDJSON
 * reader back its own line, kept per morsel (seq_line: written by the
 * serial split before the morsel is handed out, read by decoders).
 *
 * Structural problems (a missing ',', a top-level scalar in the array,
 * an unclosed string or bracket, text after the array) are found by the
 * pass, which stops there: the text ends after the last whole object
 * before the problem, and the problem is reported when the morsel ending
 * there has been decoded without error (or at open when no object comes
 * before it), so the first problem in input order is the one reported,
 * as for NDJSON.
 *
 * Differences from DuckDB's auto-detecting reader: two or more top-level
 * arrays, and arrays of non-objects, are errors here (DuckDB reads them as
 * a column of lists or values).
 */
#include "fmt_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define SNIFF_BYTES ((size_t)64 << 10) /* bytes the sniffer looks at */
#define MAX_DEPTH 1025                 /* a record and 1024 levels in it (as the
                                          NDJSON reader) */
#define SEQ_CHUNK 4096                 /* morsels per seq_line block */

/* A problem in the document's structure: the byte it is at (n: the end of
 * the input) and what is wrong. */
typedef struct Problem {
    size_t at;
    char what[200];
} Problem;

static size_t bom(const uint8_t *p, size_t n);

/* Line and column (1-based; columns count UTF-8 characters, as the NDJSON
 * reader's messages do, after a BOM) of byte at of p[0..n). */
static void where(const uint8_t *p, size_t n, size_t at, int64_t *line, int64_t *col)
{
    size_t ls = bom(p, n);
    const uint8_t *q;
    *line = 1;
    if (at > n) at = n;
    if (at < ls) ls = at;
    while (ls < at && (q = memchr(p + ls, '\n', at - ls)) != NULL) {
        (*line)++;
        ls = (size_t)(q - p) + 1;
    }
    *col = 1;
    for (size_t i = ls; i < at; i++)
        if ((p[i] & 0xC0) != 0x80) (*col)++;
}

/* What starts at p[i] (i == n: the end), for "found ..." in messages. */
static const char *found(const uint8_t *p, size_t n, size_t i, char *buf, size_t cap)
{
    if (i >= n) return "the end of the file";
    switch (p[i]) {
    case '{': return "an object";
    case '[': return "an array";
    case '"': return "a string";
    case 't': if (n - i >= 4 && memcmp(p + i, "true", 4) == 0) return "true"; break;
    case 'f': if (n - i >= 5 && memcmp(p + i, "false", 5) == 0) return "false"; break;
    case 'n': if (n - i >= 4 && memcmp(p + i, "null", 4) == 0) return "null"; break;
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9': return "a number";
    default: break;
    }
    if (p[i] > 0x20 && p[i] < 0x7F) snprintf(buf, cap, "'%c'", p[i]);
    else snprintf(buf, cap, "byte 0x%02X", p[i]);
    return buf;
}

/* Fill pb (at, printf message); returns SIZE_MAX for scan_object. */
static size_t problem(Problem *pb, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static size_t problem(Problem *pb, size_t at, const char *fmt, ...)
{
    va_list ap;
    pb->at = at;
    va_start(ap, fmt);
    vsnprintf(pb->what, sizeof pb->what, fmt, ap);
    va_end(ap);
    return SIZE_MAX;
}

/* Bytes scan_object stops at: 1 outside strings (quote, brackets, line
 * ends), 2 inside them (quote, backslash, line ends). */
static const uint8_t stop[256] = {
    ['"'] = 3, ['{'] = 1, ['}'] = 1, ['['] = 1, [']'] = 1,
    ['\n'] = 3, ['\r'] = 3, ['\\'] = 2,
};

/* Where the object at p[i] == '{' ends (the index after its '}'), tracking
 * strings and brackets only: the NDJSON decoder validates the rest.  With
 * out, the bytes are copied to out[i..end) with every LF and CR (all are
 * outside strings: a string holding one is a problem) made a space.  *lf
 * is set when the object holds an LF (NDJSON reads a CR inside an object
 * as white space).  opens: a stack of MAX_DEPTH
 * offsets.  SIZE_MAX with pb filled: brackets that do not match, a raw line
 * end in a string, nesting beyond MAX_DEPTH, or the input ends first
 * (pb->at == n). */
static size_t scan_object(const uint8_t *p, size_t n, size_t i, uint8_t *out, bool *lf,
                          size_t *opens, Problem *pb)
{
    const size_t start = i;
    size_t depth = 0;
    int64_t line, col;
    bool nl = false, cr = false; /* LF (a line end) and CR seen outside strings */
    for (;; i++) {
        uint8_t c;
        while (i < n && !(stop[p[i]] & 1)) i++;
        if (i >= n) break;
        c = p[i];
        if (c == '"') {
            size_t s = i;
            for (i++;; i++) {
                while (i < n && !(stop[p[i]] & 2)) i++;
                if (i >= n || p[i] == '"') break;
                if (p[i] != '\\')
                    return problem(pb, i, "unterminated string (the line ends here)");
                if (i + 1 < n && p[i + 1] != '\n' && p[i + 1] != '\r') i++;
            }
            if (i >= n) {
                where(p, n, s, &line, &col);
                return problem(pb, n, "the file ends inside the string that opens at "
                               "%lld:%lld", (long long)line, (long long)col);
            }
        } else if (c == '{' || c == '[') {
            if (depth == MAX_DEPTH)
                return problem(pb, i, "arrays and objects nested too deeply (more than "
                               "1024 levels)");
            opens[depth++] = i;
        } else if (c == '}' || c == ']') {
            const bool obj = p[opens[depth - 1]] == '{';
            if (c != (obj ? '}' : ']')) {
                where(p, n, opens[depth - 1], &line, &col);
                return problem(pb, i, "expected '%c' to close the %s that opens at "
                               "%lld:%lld, found '%c'", obj ? '}' : ']',
                               obj ? "object" : "array", (long long)line,
                               (long long)col, c);
            }
            if (--depth == 0) {
                i++;
                if (out) {
                    memcpy(out + start, p + start, i - start);
                    for (size_t k = start; (nl || cr) && k < i; k++)
                        if (out[k] == '\n' || out[k] == '\r') out[k] = ' ';
                }
                *lf |= nl;
                return i;
            }
        } else {
            nl |= c == '\n'; /* a CR inside an object is white space to NDJSON */
            cr |= c == '\r';
        }
    }
    *lf |= nl;
    where(p, n, opens[depth - 1], &line, &col);
    return problem(pb, n, "the file ends inside the %s that opens at %lld:%lld",
                   p[opens[depth - 1]] == '{' ? "object" : "array", (long long)line,
                   (long long)col);
}

static inline bool blank(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Length of a UTF-8 BOM at the start of p[0..n) (0 or 3). */
static size_t bom(const uint8_t *p, size_t n)
{
    return n >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF ? 3 : 0;
}

/* The sniffer's test (top of the file) on the window p[0..w) of an input of
 * size bytes, from the first object at i: true when every object starting
 * in the window lies on one line and a line end (LF or CR) separates any
 * two.  An object the window cuts counts by what the window holds of it;
 * a problem leaves the input to the document path.  When false because a
 * well-formed object runs over several lines, *split is where it starts
 * (else SIZE_MAX). */
static bool ndjson_like(const uint8_t *p, size_t w, size_t size, size_t i, size_t *opens,
                        size_t *split)
{
    bool gap_lf = true;
    Problem pb;
    *split = SIZE_MAX;
    while (i < w) {
        bool lf = false;
        size_t end;
        if (p[i] == ' ' || p[i] == '\t') {
            i++;
            continue;
        }
        if (p[i] == '\n' || p[i] == '\r') {
            gap_lf = true;
            i++;
            continue;
        }
        if (p[i] != '{' || !gap_lf) return false;
        end = scan_object(p, w, i, NULL, &lf, opens, &pb);
        if (lf) {
            if (end != SIZE_MAX) *split = i; /* closed: surely a document */
            return false;
        }
        if (end == SIZE_MAX) return pb.at == w && w < size;
        i = end;
        gap_lf = false;
    }
    return true;
}

/* ------------------------------------------------------------ the text */

/* The document turned into NDJSON text (top of the file). */
typedef struct Doc {
    const uint8_t *p;        /* the document */
    size_t n;
    uint8_t *t;              /* the text: t[k + shift] is p[k]'s byte */
    size_t cap;
    size_t shift;            /* bytes inserted so far */
    size_t *ins;             /* their offsets in t, ascending */
    size_t n_ins, ins_cap;
    size_t cut;              /* the text's size: after the last whole object
                                before any problem */
    size_t *opens;           /* scan_object's stack */
    bool has_problem;
    Problem pb;
} Doc;

/* Copy the blanks at p[i] to the text (CR made a space, so the text's
 * lines end at LF only); returns the first byte after them.  *lf (may be
 * NULL) is set when they hold an LF. */
static size_t copy_blanks(Doc *d, size_t i, bool *lf)
{
    for (; i < d->n && blank(d->p[i]); i++) {
        d->t[i + d->shift] = d->p[i] == '\r' ? ' ' : d->p[i];
        if (lf && d->p[i] == '\n') *lf = true;
    }
    return i;
}

/* Insert a line end in the text before p[i]. */
static TlStatus insert_lf(Doc *d, size_t i, TlError *err)
{
    if (d->n + d->shift + 1 > d->cap) {
        size_t cap = d->cap + d->cap / 2 + 64;
        uint8_t *t = tl_realloc(d->t, cap);
        if (!t) return tl_error_oom(err);
        d->t = t;
        d->cap = cap;
    }
    if (d->n_ins == d->ins_cap) {
        size_t cap = d->ins_cap ? d->ins_cap * 2 : 16;
        size_t *g = tl_realloc(d->ins, cap * sizeof *g);
        if (!g) return tl_error_oom(err);
        d->ins = g;
        d->ins_cap = cap;
    }
    d->ins[d->n_ins++] = i + d->shift;
    d->t[i + d->shift] = '\n';
    d->shift++;
    return TL_OK;
}

/* Record the problem (at, message) that ends the text; TL_OK (the pass
 * stops, the reader reports it in its place). */
static TlStatus doc_problem(Doc *d, size_t at, const char *what, const char *what2)
{
    d->has_problem = true;
    d->pb.at = at;
    snprintf(d->pb.what, sizeof d->pb.what, "%s%s", what, what2);
    return TL_OK;
}

/* Build the text of the document d->p[0..n) (top of the file).  Errors:
 * TL_ERR_OOM only; a structural problem is recorded in d. */
static TlStatus build_text(Doc *d, TlError *err)
{
    const uint8_t *p = d->p;
    const size_t n = d->n;
    size_t i = bom(p, n), prev_end = 0;
    bool array, gap_lf = true;
    char fb[16];
    d->cap = n + 64;
    d->t = tl_malloc(d->cap);
    d->opens = tl_malloc(MAX_DEPTH * sizeof *d->opens);
    if (!d->t || !d->opens) return tl_error_oom(err);
    memcpy(d->t, p, i);
    i = copy_blanks(d, i, NULL);
    if (i >= n) return TL_OK; /* blank: no rows */
    array = p[i] == '[';
    if (!array && p[i] != '{')
        return doc_problem(d, i, "expected an array of objects or objects one after "
                           "another, found ", found(p, n, i, fb, sizeof fb));
    if (array) {
        d->t[i] = ' ';
        i = copy_blanks(d, i + 1, NULL);
        if (i < n && p[i] == ']') goto closed;
    }
    for (int64_t k = 0;; k++) {
        bool lf = false;
        size_t end;
        if (i >= n || p[i] != '{') {
            if (!array)
                return doc_problem(d, i, "expected '{' (the next object) or the end of "
                                   "the file, found ", found(p, n, i, fb, sizeof fb));
            return doc_problem(d, i, k == 0 ? "expected an object (a row) or ']', found "
                                            : "expected an object (a row) after ',', found ",
                               found(p, n, i, fb, sizeof fb));
        }
        /* a line end between two objects: the gap's last byte, or a new one */
        if (k > 0 && !gap_lf) {
            if (i > prev_end) d->t[i - 1 + d->shift] = '\n';
            else TL_TRY(insert_lf(d, i, err));
        }
        end = scan_object(p, n, i, d->t + d->shift, &lf, d->opens, &d->pb);
        if (end == SIZE_MAX) {
            d->has_problem = true;
            return TL_OK;
        }
        d->cut = end + d->shift;
        prev_end = i = end;
        gap_lf = false;
        i = copy_blanks(d, i, &gap_lf);
        if (!array) {
            if (i >= n) return TL_OK;
            continue;
        }
        if (i < n && p[i] == ']') goto closed;
        if (i >= n || p[i] != ',')
            return doc_problem(d, i, "expected ',' or ']' after the object, found ",
                               found(p, n, i, fb, sizeof fb));
        d->t[i + d->shift] = ' ';
        i = copy_blanks(d, i + 1, &gap_lf);
    }
closed:
    i = copy_blanks(d, i + 1, NULL);
    if (i < n)
        return doc_problem(d, i, "expected the end of the file after the array's ']' "
                           "(a .json file holds one array of objects), found ",
                           found(p, n, i, fb, sizeof fb));
    return TL_OK;
}

/* ------------------------------------------------------------ the reader */

typedef struct JdReader {
    TlReader base;
    TlReader *inner;         /* the NDJSON reader of the text */
    char *name;              /* for messages: path or "<stdin>" */
    TlBuf *doc;              /* the document */
    TlBuf *text;             /* the NDJSON text (its size: cut) */
    size_t *ins;             /* offsets in text of inserted bytes, ascending */
    size_t n_ins;
    bool has_problem;
    TlError problem;         /* reported after the last object before it */
    /* morsels: the NDJSON reader's line per seq, and split's running
     * position in the document (offset, its line) */
    int64_t **seq_line;
    int64_t n_seq_blocks;
    size_t run_off;
    int64_t run_line;
} JdReader;

/* The document offset of text offset t (not itself an inserted byte). */
static size_t doc_offset(const JdReader *r, size_t t)
{
    size_t lo = 0, hi = r->n_ins; /* inserted bytes before t: the first ins >= t */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->ins[mid] < t) lo = mid + 1;
        else hi = mid;
    }
    return t - lo;
}

/* The document's line and column of the text's line tline, column tcol
 * (0: the line's record, its first non-blank byte). */
static void doc_where(const JdReader *r, int64_t tline, int64_t tcol, int64_t *line,
                      int64_t *col)
{
    const uint8_t *t = r->text->data;
    const size_t tn = r->text->size;
    size_t at = bom(t, tn);
    for (int64_t l = 1; l < tline && at < tn; l++) {
        const uint8_t *q = memchr(t + at, '\n', tn - at);
        at = q ? (size_t)(q - t) + 1 : tn;
    }
    if (tcol > 0) {
        for (int64_t c = 1; c < tcol && at < tn; c++)
            do at++; while (at < tn && (t[at] & 0xC0) == 0x80);
    } else {
        while (at < tn && blank(t[at])) at++;
    }
    where(r->doc->data, r->doc->size, doc_offset(r, at), line, col);
}

/* Map the position in a message of the NDJSON reader ("NAME:LINE:COL:" or
 * "NAME:LINE:", lines and columns of the text) to the document's. */
static void fix_error(const JdReader *r, TlError *err)
{
    const size_t k = strlen(r->name);
    const char *s = err->msg, *rest;
    char *e, buf[TL_ERRMSG_MAX];
    long long tline, tcol = 0;
    int64_t line, col;
    if (strncmp(s, r->name, k) != 0 || s[k] != ':' || s[k + 1] < '0' || s[k + 1] > '9')
        return;
    tline = strtoll(s + k + 1, &e, 10);
    if (*e == ':' && e[1] >= '0' && e[1] <= '9') tcol = strtoll(e + 1, &e, 10);
    if (*e != ':' || tline < 1) return;
    rest = e;
    doc_where(r, tline, tcol, &line, &col);
    if (tcol > 0)
        snprintf(buf, sizeof buf, "%s:%lld:%lld%s", r->name, (long long)line,
                 (long long)col, rest);
    else
        snprintf(buf, sizeof buf, "%s:%lld%s", r->name, (long long)line, rest);
    memcpy(err->msg, buf, sizeof buf);
}

static const TlSchema *jd_schema(const TlReader *base)
{
    return tl_reader_schema(((const JdReader *)base)->inner);
}

static TlStatus jd_project(TlReader *base, const int *cols, int n_cols, TlError *err)
{
    return tl_reader_project(((JdReader *)base)->inner, cols, n_cols, err);
}

static TlStatus jd_next(TlReader *base, TlBatch **out, TlError *err)
{
    JdReader *r = (JdReader *)base;
    TlStatus st = tl_reader_next(r->inner, out, err);
    r->base.stats = *tl_reader_stats(r->inner);
    if (st != TL_OK) {
        fix_error(r, err);
        return st;
    }
    if (!*out && r->has_problem) {
        *err = r->problem;
        return err->code;
    }
    return TL_OK;
}

/* Split: the NDJSON reader's morsel, its line kept for decode and replaced
 * by the document line of the morsel's first record. */
static TlStatus jd_split(TlReader *base, TlMorsel *m, bool *got, TlError *err)
{
    JdReader *r = (JdReader *)base;
    const uint8_t *t = r->text->data;
    size_t at, o;
    int64_t b;
    TL_TRY(tl_reader_split(r->inner, m, got, err));
    if (!*got || m->line < 0) return TL_OK;
    b = m->seq / SEQ_CHUNK;
    if (b >= r->n_seq_blocks)
        return tl_error(err, TL_ERR_DATA, "%s: internal error: more morsels than lines",
                        r->name);
    if (!r->seq_line[b] && !(r->seq_line[b] = tl_malloc(SEQ_CHUNK * sizeof(int64_t))))
        return tl_error_oom(err);
    r->seq_line[b][m->seq % SEQ_CHUNK] = m->line;
    for (at = (size_t)m->begin; at < (size_t)m->end && blank(t[at]); at++) {
    }
    if (at == (size_t)m->end) at = (size_t)m->begin;
    o = doc_offset(r, at);
    if (o < r->run_off) { /* split again from an earlier morsel */
        r->run_off = 0;
        r->run_line = 1;
    }
    r->run_line += tl_count_lf(r->doc->data + r->run_off, o - r->run_off);
    r->run_off = o;
    m->line = r->run_line;
    return TL_OK;
}

static TlStatus jd_decoder_new(TlReader *base, TlDecoder **out, TlError *err)
{
    return tl_decoder_new(((JdReader *)base)->inner, out, err);
}

static void jd_decoder_free(TlDecoder *d)
{
    tl_decoder_free(d); /* the NDJSON reader's own (dispatched by its ops) */
}

/* Decode with the NDJSON reader's line; the morsel that ends the text
 * reports the structural problem after it once its records are good. */
static TlStatus jd_decode(TlReader *base, TlDecoder *d, const TlMorsel *m, TlBatch **out,
                          TlSchema **widen, TlError *err)
{
    JdReader *r = (JdReader *)base;
    TlMorsel in = *m;
    TlStatus st;
    if (m->line >= 0) in.line = r->seq_line[m->seq / SEQ_CHUNK][m->seq % SEQ_CHUNK];
    st = tl_reader_decode(r->inner, d, &in, out, widen, err);
    if (st != TL_OK) {
        fix_error(r, err);
        return st;
    }
    if (r->has_problem && m->end == r->text->size) {
        tl_batch_free(*out);
        *out = NULL;
        *err = r->problem;
        return err->code;
    }
    return TL_OK;
}

/* A record's line: the NDJSON reader's, in the text, mapped to the
 * document's (error paths only: a walk over the text). */
static int64_t jd_row_line(const TlReader *base, TlDecoder *d, int64_t row)
{
    const JdReader *r = (const JdReader *)base;
    int64_t line = 0, col;
    int64_t tline = r->inner->ops->row_line(r->inner, d, row);
    if (tline > 0) doc_where(r, tline, 0, &line, &col);
    return line;
}

/* The value's own line and column: an object may span lines, and the text
 * offset of the value says where it is whatever the morsel knows of its
 * lines. */
static int64_t jd_row_col(const TlReader *base, TlDecoder *d, int64_t row, int k,
                          int64_t *line)
{
    const JdReader *r = (const JdReader *)base;
    size_t off = tl_ndjson_value_offset(r->inner, d, row, k);
    int64_t col = 0;
    if (off == SIZE_MAX || off > r->text->size) return 0;
    where(r->doc->data, r->doc->size, doc_offset(r, off), line, &col);
    return col;
}

static TlStatus jd_widen(TlReader *base, const TlSchema *widen, TlError *err)
{
    return tl_reader_widen(((JdReader *)base)->inner, widen, err);
}

static void jd_count(TlReader *base, int64_t rows, int64_t bytes)
{
    JdReader *r = (JdReader *)base;
    tl_reader_count(r->inner, rows, bytes);
    r->base.stats = *tl_reader_stats(r->inner);
}

static void jd_guess(TlReader *base)
{
    tl_reader_guess(((JdReader *)base)->inner);
}

static TlStatus jd_resplit(TlReader *base, const TlMorsel *m, TlError *err)
{
    return tl_reader_resplit(((JdReader *)base)->inner, m, err);
}

static TlStatus jd_more_columns(TlReader *base, bool *found, TlError *err)
{
    return tl_reader_more_columns(((JdReader *)base)->inner, found, err);
}

static void jd_close(TlReader *base)
{
    JdReader *r = (JdReader *)base;
    tl_reader_close(r->inner);
    tl_buf_release(r->doc);
    tl_buf_release(r->text);
    for (int64_t b = 0; r->seq_line && b < r->n_seq_blocks; b++) tl_free(r->seq_line[b]);
    tl_free(r->seq_line);
    tl_free(r->ins);
    tl_free(r->name);
    tl_free(r);
}

static const TlReaderOps jd_ops = {
    .schema = jd_schema, .project = jd_project, .next = jd_next, .close = jd_close,
    .split = jd_split, .decoder_new = jd_decoder_new, .decoder_free = jd_decoder_free,
    .decode = jd_decode, .widen = jd_widen, .count = jd_count,
    .guess = jd_guess, .resplit = jd_resplit, .row_line = jd_row_line,
    .row_col = jd_row_col, .more_columns = jd_more_columns};

/* The document path: doc (owned reference, consumed) turned into NDJSON
 * text read by the NDJSON reader. */
static TlStatus open_doc(const char *path, TlBuf *doc, const TlReadOptions *opt,
                         TlTypeHints *hints, TlReader **out, TlError *err)
{
    JdReader *r = tl_calloc(1, sizeof *r);
    Doc d = {0};
    TlStatus st;
    int64_t line, col;
    if (!r) {
        tl_buf_release(doc);
        return tl_error_oom(err);
    }
    r->base.ops = &jd_ops;
    r->doc = doc;
    r->run_line = 1;
    r->name = tl_strdup(tl_input_name(path));
    if (!r->name) goto oom;
    d.p = doc->data;
    d.n = doc->size;
    st = build_text(&d, err);
    tl_free(d.opens);
    r->ins = d.ins;
    r->n_ins = d.n_ins;
    if (st != TL_OK) {
        tl_free(d.t);
        goto fail;
    }
    r->text = tl_buf_adopt(d.t, d.cut);
    if (!r->text) {
        tl_free(d.t);
        goto oom;
    }
    if (d.has_problem) {
        where(d.p, d.n, d.pb.at, &line, &col);
        r->has_problem = true;
        tl_error(&r->problem, TL_ERR_DATA, "%s:%lld:%lld: %s", r->name, (long long)line,
                 (long long)col, d.pb.what);
        if (d.cut == 0) { /* no record before it */
            *err = r->problem;
            goto fail;
        }
    }
    r->n_seq_blocks = (tl_count_lf(d.t, d.cut) + 2) / SEQ_CHUNK + 1;
    r->seq_line = tl_calloc((size_t)r->n_seq_blocks, sizeof *r->seq_line);
    if (!r->seq_line) goto oom;
    TlReadOptions o = {0};
    if (opt) o = *opt;
    o.text = r->text;
    st = tl_ndjson_reader_open(path, &o, hints, &r->inner, err);
    if (st != TL_OK) {
        fix_error(r, err);
        goto fail;
    }
    r->base.stats = *tl_reader_stats(r->inner);
    *out = &r->base;
    return TL_OK;
oom:
    tl_error_oom(err);
fail:
    jd_close(&r->base);
    return err->code;
}

/* Load path (*b, an owned reference) and tell its content by its first
 * SNIFF_BYTES (top of the file): *nd when it is NDJSON, else *split as
 * ndjson_like leaves it, or the offset of a '[' that starts it. */
static TlStatus sniff(const TlCtx *ctx, const char *path, TlBuf **b, bool *nd,
                      size_t *split, TlError *err)
{
    size_t ready = 0, w, i, size;
    size_t *opens;
    *nd = true;
    *split = SIZE_MAX;
    TL_TRY(tl_input_load_stream(ctx, path, b, err));
    w = (*b)->size < SNIFF_BYTES ? (*b)->size : SNIFF_BYTES;
    if (tl_input_wait(*b, w, &ready, err) != TL_OK) goto fail;
    if (ready < w) w = ready; /* a stream of unknown size that ended */
    size = tl_input_size(*b);
    for (i = bom((*b)->data, w); i < w && blank((*b)->data[i]); i++) {
    }
    if (i >= w && w == size) return TL_OK; /* blank: no rows */
    *nd = false;
    if (i >= w || (*b)->data[i] != '{') {
        if (i < w && (*b)->data[i] == '[') *split = i;
        return TL_OK;
    }
    opens = tl_malloc(MAX_DEPTH * sizeof *opens);
    if (!opens) {
        tl_error_oom(err);
        goto fail;
    }
    *nd = ndjson_like((*b)->data, w, size, i, opens, split);
    tl_free(opens);
    return TL_OK;
fail:
    tl_buf_release(*b);
    *b = NULL;
    return err->code;
}

/* Open the JSON input at path ("-": standard input) by its content (top of
 * the file): the NDJSON reader for NDJSON, else the document reader.
 * Errors: those of tl_input_load, a top-level scalar (TL_ERR_DATA naming
 * line and column), and the NDJSON reader's, with the document's lines. */
TlStatus tl_json_reader_open(const char *path, const TlReadOptions *opt,
                             TlTypeHints *hints, TlReader **out, TlError *err)
{
    TlBuf *b = NULL;
    bool nd;
    size_t split;
    *out = NULL;
    TL_TRY(sniff(opt ? opt->ctx : NULL, path, &b, &nd, &split, err));
    if (nd) {
        tl_buf_release(b);
        return tl_ndjson_reader_open(path, opt, hints, out, err);
    }
    TL_TRY(tl_input_whole(&b, err));
    return open_doc(path, b, opt, hints, out, err);
}

/* Open path, named .ndjson or .jsonl, with the NDJSON reader; but when its
 * first SNIFF_BYTES show a JSON document (a top-level array, or a
 * well-formed object over several lines), that is the error, naming
 * --from json, which reads the file by content (tl_json_reader_open).
 * The name promises NDJSON, so it is never read as a document unasked. */
TlStatus tl_json_ndjson_open(const char *path, const TlReadOptions *opt,
                             TlTypeHints *hints, TlReader **out, TlError *err)
{
    TlBuf *b = NULL;
    bool nd;
    size_t split;
    int64_t line, col;
    *out = NULL;
    TL_TRY(sniff(opt ? opt->ctx : NULL, path, &b, &nd, &split, err));
    if (!nd && split != SIZE_MAX) {
        where(b->data, b->size, split, &line, &col);
        tl_error(err, TL_ERR_DATA, "%s:%lld:%lld: %s (NDJSON holds one object per line; "
                 "--from json reads JSON documents)", tl_input_name(path),
                 (long long)line, (long long)col, b->data[split] == '['
                 ? "a JSON array, not NDJSON" : "an object over several lines");
        tl_buf_release(b);
        return err->code;
    }
    tl_buf_release(b);
    return tl_ndjson_reader_open(path, opt, hints, out, err);
}
