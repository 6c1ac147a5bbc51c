/*
 * table_write.c -- the table writer: a result drawn as a box for people
 * (man/tally.1, "Tables").
 *
 *   ┌──────┬───────┐
 *   │ name │ total │   names, then their types
 *   │ str… │ int64 │
 *   ├──────┼───────┤
 *   │ a    │    10 │   numbers right-aligned; null is a dim null, the
 *   │ ""   │  null │   strings "", "null" and "\"..." are quoted
 *   │ …    │     … │   the middle rows elided
 *   └──────┴───────┘
 *   1,000 rows (40 shown), 2 columns
 *
 * Memory: only the rows shown are kept, already spelled for display: the
 * first ceil(max/2) rows and a ring of the last floor(max/2), so a result
 * of any length costs its count and 40 short rows.  Of every batch only the
 * rows that can still be shown are spelled (the head's missing ones and the
 * batch's last `tail` rows), so the writer's cost does not grow with the
 * result either.  max < 0 (--rows all) keeps every row.
 *
 * Width is counted in display cells (utf8proc_charwidth: East Asian wide 2,
 * combining marks 0), so the box holds for CJK, emoji and accents.  Control
 * characters, bidirectional overrides and invalid UTF-8 are spelled as
 * escapes (\n, \x1b, \u202e) or U+FFFD: nothing in the data can move the
 * cursor or reorder the line.  A value is cut to CELL_MAX cells when kept
 * (bounded memory whatever its length) and to its column's width when
 * drawn, with an ellipsis.  Columns too wide for the line are first cut
 * (the widest, down to MIN_CUT cells), then elided from the middle,
 * keeping the first and last ones (layout).
 *
 * The writer knows nothing about terminals: its caller passes the width,
 * the row bound and whether to colour (cmd/ decides from the terminal).
 */
#include "fmt_impl.h"
#include "write_common.h"
#include "../lib/core/text.h"

#include <stdio.h>
#include <utf8proc.h>

/* The widest a value or name is kept, in cells (Polars' repr cuts strings
 * near 30; more only makes one column crowd out the others). */
#define CELL_MAX 32
/* Bytes a kept cell may take: CELL_MAX cells, escapes spelled out, plus
 * room for zero-width marks; more is cut as if too wide. */
#define CELL_BYTES (CELL_MAX * 8 + 16)
#define ELLIPSIS "\xe2\x80\xa6" /* U+2026 */

#define SGR_BOLD "\033[1m"
#define SGR_DIM "\033[2m"
#define SGR_OFF "\033[0m"

/* One kept row: its cells' display text back to back. */
typedef struct TableRow {
    char *bytes;
    size_t len, cap;
    uint32_t *end;   /* n_cols: where each cell's text ends in bytes */
    uint16_t *width; /* n_cols: display cells */
    uint8_t *null;   /* n_cols: 1 for null */
} TableRow;

typedef struct TableWriter {
    TlWriter base;
    const TlSchema *schema;  /* borrowed: lives as long as the writer */
    int n_cols;
    int width;               /* the line width to fit */
    bool color;
    int64_t head_cap, tail_cap; /* rows kept at the start and the end;
                                   head_cap < 0: all rows */
    TableRow *head;          /* head_cap rows (grown with --rows all) */
    int64_t n_head, head_alloc;
    TableRow *ring;          /* the last tail_cap rows, circular */
    int64_t ring_next;       /* rows put in the ring so far */
    int64_t total;           /* rows written */
    char *line;              /* the table being drawn (written at once) */
    size_t line_len, line_cap;
} TableWriter;

/* ------------------------------------------------------------ spelling */

/* Append display text for s[0..n) to out (room for CELL_BYTES + 4 bytes):
 * escapes for what must not reach a terminal, cut with an ellipsis so it
 * takes at most max_w cells and CELL_BYTES bytes.  Returns its width in
 * cells; *len receives its length in bytes.  Already spelled text comes
 * back unchanged (cut only), so it serves both keeping and drawing. */
static int spell(const uint8_t *s, size_t n, int max_w, char *out, size_t *len)
{
    size_t o = 0, fit_o = 0;  /* fit_o: where an ellipsis would still fit */
    int w = 0, fit_w = 0;
    for (size_t i = 0; i < n;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t k = utf8proc_iterate(s + i, (utf8proc_ssize_t)(n - i), &cp);
        char tmp[12];
        size_t tn;
        int cw;
        if (k < 1) { /* invalid UTF-8: one byte as U+FFFD */
            cp = 0xFFFD;
            k = 1;
        }
        if (cp == '\n' || cp == '\t' || cp == '\r') {
            tmp[0] = '\\';
            tmp[1] = cp == '\n' ? 'n' : cp == '\t' ? 't' : 'r';
            tn = 2;
        } else if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) {
            tn = (size_t)snprintf(tmp, sizeof tmp, "\\x%02x", (unsigned)cp);
        } else if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
                   cp == 0x2028 || cp == 0x2029 || cp == 0x200e || cp == 0x200f) {
            tn = (size_t)snprintf(tmp, sizeof tmp, "\\u%04x", (unsigned)cp);
        } else {
            tn = (size_t)utf8proc_encode_char(cp, (utf8proc_uint8_t *)tmp);
        }
        if (tmp[0] == '\\') cw = (int)tn;
        else cw = utf8proc_charwidth(cp) > 1 ? 2 : utf8proc_charwidth(cp) < 1 ? 0 : 1;
        if (w + cw > max_w || o + tn > CELL_BYTES) {
            /* too long: cut where the ellipsis fits */
            o = fit_o;
            memcpy(out + o, ELLIPSIS, 3);
            *len = o + 3;
            return fit_w + 1;
        }
        memcpy(out + o, tmp, tn);
        o += tn;
        w += cw;
        if (w <= max_w - 1 && o + 3 <= CELL_BYTES) {
            fit_o = o;
            fit_w = w;
        }
        i += (size_t)k;
    }
    *len = o;
    return w;
}

/* s between double quotes, inner ones doubled, into out (room for
 * 2 * CELL_BYTES + 2): its first CELL_BYTES bytes at most, as no more can
 * be shown.  Returns the length. */
static size_t quote(const uint8_t *s, size_t n, uint8_t *out)
{
    size_t o = 0;
    out[o++] = '"';
    for (size_t i = 0; i < n && i < CELL_BYTES; i++) {
        if (s[i] == '"') out[o++] = '"';
        out[o++] = s[i];
    }
    out[o++] = '"';
    return o;
}

static bool numeric(TlType t)
{
    return t == TL_TINT64 || t == TL_TFLOAT64;
}

/* ---------------------------------------------------------- keeping rows */

static void row_free(TableRow *r)
{
    tl_free(r->bytes);
    tl_free(r->end);
    tl_free(r->width);
    tl_free(r->null);
}

/* Spell row i of batch b into r (reusing its memory). */
static TlStatus row_fill(TableWriter *w, TableRow *r, const TlBatch *b, int64_t i,
                         TlError *err)
{
    if (!r->end) {
        r->end = tl_calloc((size_t)w->n_cols + 1, sizeof *r->end);
        r->width = tl_calloc((size_t)w->n_cols + 1, sizeof *r->width);
        r->null = tl_calloc((size_t)w->n_cols + 1, 1);
        if (!r->end || !r->width || !r->null) return tl_error_oom(err);
    }
    r->len = 0;
    for (int c = 0; c < w->n_cols; c++) {
        const TlArray *a = b->cols[c];
        const uint8_t *s;
        size_t n, got;
        uint8_t text[TL_FMT_MAX], *t = text, qbuf[2 * CELL_BYTES + 2];
        if (r->len + CELL_BYTES + 4 > r->cap) {
            size_t cap = r->cap ? r->cap * 2 : (size_t)w->n_cols * 16 + CELL_BYTES + 4;
            char *p;
            while (cap < r->len + CELL_BYTES + 4) cap *= 2;
            if (!(p = tl_realloc(r->bytes, cap))) return tl_error_oom(err);
            r->bytes = p;
            r->cap = cap;
        }
        r->null[c] = !tl_array_valid(a, i);
        if (r->null[c]) {
            s = (const uint8_t *)"null";
            n = 4;
        } else if (a->type == TL_TSTRING) {
            const TlView *v = &tl_array_views(a)[i];
            s = tl_view_ptr(v, a->data);
            n = tl_view_len(*v);
            if (n == 0 || (n == 4 && memcmp(s, "null", 4) == 0) || s[0] == '"') {
                /* quoted, so no string looks like null or like another */
                n = quote(s, n, qbuf);
                s = qbuf;
            }
        } else {
            TlPiece pc;
            tl_write_value_pieces(a, i, 1, &pc, &t, TL_PIECE_PLAIN, false);
            s = pc.p;
            n = pc.len;
        }
        r->width[c] = (uint16_t)spell(s, n, CELL_MAX, r->bytes + r->len, &got);
        r->len += got;
        r->end[c] = (uint32_t)r->len;
    }
    return TL_OK;
}

static TlStatus table_write(TlWriter *base, const TlBatch *b, TlError *err)
{
    TableWriter *w = (TableWriter *)base;
    int64_t i = 0, n = b->n_rows;
    if (b->n_cols != w->n_cols)
        return tl_error(err, TL_ERR_DATA, "internal error: a batch of %d columns "
                        "for a table of %d", b->n_cols, w->n_cols);
    for (; i < n && (w->head_cap < 0 || w->n_head < w->head_cap); i++) {
        if (w->n_head == w->head_alloc) {
            int64_t na = w->head_alloc ? w->head_alloc * 2 : 64;
            TableRow *p;
            if (w->head_cap >= 0 && na > w->head_cap) na = w->head_cap;
            if (!(p = tl_realloc(w->head, (size_t)na * sizeof *p))) return tl_error_oom(err);
            memset(p + w->head_alloc, 0, (size_t)(na - w->head_alloc) * sizeof *p);
            w->head = p;
            w->head_alloc = na;
        }
        TL_TRY(row_fill(w, &w->head[w->n_head], b, i, err));
        w->n_head++;
    }
    /* of the rest only the last tail_cap rows can still be shown */
    if (w->tail_cap > 0 && n - i > w->tail_cap) i = n - w->tail_cap;
    for (; w->tail_cap > 0 && i < n; i++) {
        TL_TRY(row_fill(w, &w->ring[w->ring_next % w->tail_cap], b, i, err));
        w->ring_next++;
    }
    w->total += n;
    return TL_OK;
}

/* ------------------------------------------------------------- drawing */

static bool put(TableWriter *w, const char *s, size_t n)
{
    if (w->line_len + n > w->line_cap) {
        size_t cap = w->line_cap ? w->line_cap : 256;
        char *p;
        while (cap < w->line_len + n) cap *= 2;
        if (!(p = tl_realloc(w->line, cap))) return false;
        w->line = p;
        w->line_cap = cap;
    }
    memcpy(w->line + w->line_len, s, n);
    w->line_len += n;
    return true;
}

static bool put_s(TableWriter *w, const char *s)
{
    return put(w, s, strlen(s));
}

static bool put_rep(TableWriter *w, const char *s, int times)
{
    for (int i = 0; i < times; i++)
        if (!put_s(w, s)) return false;
    return true;
}

/* One cell: " text " padded to width cols, right-aligned if right, in the
 * colour sgr (NULL: none). */
static bool put_cell(TableWriter *w, const char *s, size_t n, int cell_w, int cols,
                     bool right, const char *sgr)
{
    char buf[CELL_BYTES + 8];
    size_t len;
    int sw = cell_w;
    if (cell_w > cols) { /* narrower than kept: cut again */
        sw = spell((const uint8_t *)s, n, cols, buf, &len);
        s = buf;
        n = len;
    }
    sgr = w->color ? sgr : NULL;
    return put_s(w, " ") && (right ? put_rep(w, " ", cols - sw) : true) &&
           (sgr ? put_s(w, sgr) : true) && put(w, s, n) &&
           (sgr ? put_s(w, SGR_OFF) : true) &&
           (right ? true : put_rep(w, " ", cols - sw)) && put_s(w, " ");
}

/* The columns drawn: show[k] is a column index, or -1 for the elided
 * middle; their widths in cols[k]. */
typedef struct Layout {
    int *show, *cols;
    int n;
} Layout;

/* The widest cap on column widths (from min_w up) at which columns
 * nat[idx[0..k)] fit `room` cells (each takes 3 more for its borders and
 * padding); min_w when none fits. */
static int fit_cap(const int *nat, const int *idx, int k, int64_t room, int min_w)
{
    int lo = min_w, hi = CELL_MAX;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        int64_t used = 0;
        for (int j = 0; j < k; j++) used += (nat[idx[j]] < mid ? nat[idx[j]] : mid) + 3;
        if (used <= room) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* Columns narrower than this are not cut to make room: the middle columns
 * are elided instead. */
#define MIN_CUT 10

/* Choose the columns drawn and their widths for w->width, given each
 * column's natural width nat[]: all of them when they fit, cutting the
 * widest down to MIN_CUT cells if need be; else the first and the last
 * ones (alternately, as many as fit at MIN_CUT) around an elided middle,
 * then widened again as far as the width allows. */
static TlStatus layout(TableWriter *w, const int *nat, Layout *L, TlError *err)
{
    int n = w->n_cols, left = 0, right = 0, k = 0, cap;
    int *idx = tl_calloc((size_t)n + 1, sizeof *idx);
    int64_t used;
    L->show = tl_calloc((size_t)n + 1, sizeof *L->show);
    L->cols = tl_calloc((size_t)n + 1, sizeof *L->cols);
    if (!idx || !L->show || !L->cols) {
        tl_free(idx);
        return tl_error_oom(err);
    }
    for (int c = 0; c < n; c++) idx[c] = c;
    used = 1;
    for (int c = 0; c < n; c++) used += (nat[c] < MIN_CUT ? nat[c] : MIN_CUT) + 3;
    if (used <= w->width || n == 1) {
        left = n;
    } else {
        used = 1 + 4; /* the outer border and the elided column */
        for (bool from_left = true;; from_left = !from_left) {
            int c = from_left ? left : n - 1 - right;
            int cw = (nat[c] < MIN_CUT ? nat[c] : MIN_CUT) + 3;
            if (left + right == n || used + cw > w->width) break;
            used += cw;
            if (from_left) left++;
            else right++;
        }
        if (left == 0) left = 1; /* at least the first column, cut */
    }
    for (int c = 0; c < left; c++) idx[k++] = c;
    for (int c = n - right; c < n; c++) idx[k++] = c;
    cap = fit_cap(nat, idx, k, (int64_t)w->width - 1 - (k < n ? 4 : 0), 1);
    for (int j = 0; j < k; j++) {
        if (j == left && k < n) {
            L->show[L->n] = -1;
            L->cols[L->n++] = 1;
        }
        L->show[L->n] = idx[j];
        L->cols[L->n++] = nat[idx[j]] < cap ? nat[idx[j]] : cap;
    }
    if (k == left && k < n) {
        L->show[L->n] = -1;
        L->cols[L->n++] = 1;
    }
    tl_free(idx);
    return TL_OK;
}

/* A border line: l, then each column's rule joined by mid, then r. */
static bool put_rule(TableWriter *w, const Layout *L, const char *l, const char *mid,
                     const char *r)
{
    if (!put_s(w, l)) return false;
    for (int k = 0; k < L->n; k++)
        if (!put_rep(w, "\xe2\x94\x80", L->cols[k] + 2) ||
            !put_s(w, k + 1 < L->n ? mid : r))
            return false;
    return put_s(w, "\n");
}

#define V "\xe2\x94\x82" /* │ */

static bool put_row(TableWriter *w, const Layout *L, const TableRow *r)
{
    if (!put_s(w, V)) return false;
    for (int k = 0; k < L->n; k++) {
        int c = L->show[k];
        bool ok;
        if (c < 0) {
            ok = put_cell(w, ELLIPSIS, 3, 1, 1, false, NULL);
        } else {
            uint32_t b0 = c ? r->end[c - 1] : 0;
            ok = put_cell(w, r->bytes + b0, r->end[c] - b0, r->width[c], L->cols[k],
                          numeric(w->schema->fields[c].type), r->null[c] ? SGR_DIM : NULL);
        }
        if (!ok || !put_s(w, V)) return false;
    }
    return put_s(w, "\n");
}

/* The "…" row standing for the elided middle rows. */
static bool put_gap(TableWriter *w, const Layout *L)
{
    if (!put_s(w, V)) return false;
    for (int k = 0; k < L->n; k++) {
        int c = L->show[k];
        if (!put_cell(w, ELLIPSIS, 3, 1, L->cols[k], c >= 0 &&
                      numeric(w->schema->fields[c].type), NULL) ||
            !put_s(w, V))
            return false;
    }
    return put_s(w, "\n");
}

/* The header: names (bold), then types (dim). */
static bool put_header(TableWriter *w, const Layout *L, bool types)
{
    if (!put_s(w, V)) return false;
    for (int k = 0; k < L->n; k++) {
        int c = L->show[k];
        bool ok;
        if (c < 0) {
            ok = put_cell(w, types ? "" : ELLIPSIS, types ? 0 : 3, types ? 0 : 1, 1,
                          false, NULL);
        } else {
            const TlField *f = &w->schema->fields[c];
            const char *s = types ? tl_type_name(f->type) : f->name;
            char buf[CELL_BYTES + 8];
            size_t len;
            int sw = spell((const uint8_t *)s, strlen(s), CELL_MAX, buf, &len);
            ok = put_cell(w, buf, len, sw, L->cols[k], numeric(f->type),
                          types ? SGR_DIM : SGR_BOLD);
        }
        if (!ok || !put_s(w, V)) return false;
    }
    return put_s(w, "\n");
}

/* n with thousands separators ("1,000,000"). */
static void put_count(char *out, size_t cap, int64_t n)
{
    char d[32];
    int len = snprintf(d, sizeof d, "%lld", (long long)n), o = 0;
    for (int i = 0; i < len && (size_t)o + 2 < cap; i++) {
        if (i > 0 && (len - i) % 3 == 0) out[o++] = ',';
        out[o++] = d[i];
    }
    out[o] = 0;
}

/* Draw the kept rows in w->line and write them to the sink. */
static TlStatus table_draw(TableWriter *w, TlError *err)
{
    int n = w->n_cols;
    int64_t n_tail = w->ring_next < w->tail_cap ? w->ring_next : w->tail_cap;
    bool gap = w->total > w->n_head + n_tail;
    int *nat = tl_calloc((size_t)n + 1, sizeof *nat);
    Layout L = {0};
    TlStatus st = TL_OK;
    char rows[48], cols[48], foot[160];
    bool ok = true;
    if (!nat) return tl_error_oom(err);
    for (int c = 0; c < n; c++) {
        const TlField *f = &w->schema->fields[c];
        char buf[CELL_BYTES + 8];
        size_t len;
        int tw = (int)strlen(tl_type_name(f->type));
        nat[c] = spell((const uint8_t *)f->name, strlen(f->name), CELL_MAX, buf, &len);
        if (tw > nat[c]) nat[c] = tw;
        for (int64_t i = 0; i < w->n_head; i++)
            if (w->head[i].width[c] > nat[c]) nat[c] = w->head[i].width[c];
        for (int64_t i = 0; i < n_tail; i++)
            if (w->ring[i].width[c] > nat[c]) nat[c] = w->ring[i].width[c];
    }
    if (n > 0 && (st = layout(w, nat, &L, err)) != TL_OK) goto done;
    w->line_len = 0;
    if (n > 0) {
        ok = put_rule(w, &L, "\xe2\x94\x8c", "\xe2\x94\xac", "\xe2\x94\x90") &&
             put_header(w, &L, false) && put_header(w, &L, true);
        if (ok && w->total > 0)
            ok = put_rule(w, &L, "\xe2\x94\x9c", "\xe2\x94\xbc", "\xe2\x94\xa4");
        for (int64_t i = 0; ok && i < w->n_head; i++) ok = put_row(w, &L, &w->head[i]);
        if (ok && gap) ok = put_gap(w, &L);
        for (int64_t i = 0; ok && i < n_tail; i++) {
            int64_t k = (w->ring_next - n_tail + i) % w->tail_cap;
            ok = put_row(w, &L, &w->ring[k]);
        }
        if (ok) ok = put_rule(w, &L, "\xe2\x94\x94", "\xe2\x94\xb4", "\xe2\x94\x98");
    }
    /* the footer: how much there is, and how much of it is shown */
    put_count(rows, sizeof rows, w->total);
    put_count(cols, sizeof cols, n);
    snprintf(foot, sizeof foot, "%s row%s", rows, w->total == 1 ? "" : "s");
    if (gap) {
        put_count(rows, sizeof rows, w->n_head + n_tail);
        snprintf(foot + strlen(foot), sizeof foot - strlen(foot), " (%s shown)", rows);
    }
    snprintf(foot + strlen(foot), sizeof foot - strlen(foot), ", %s column%s", cols,
             n == 1 ? "" : "s");
    if (n > 0) {
        int shown = 0;
        for (int k = 0; k < L.n; k++) shown += L.show[k] >= 0;
        if (shown < n) { /* some columns elided */
            put_count(cols, sizeof cols, shown);
            snprintf(foot + strlen(foot), sizeof foot - strlen(foot), " (%s shown)", cols);
        }
    }
    if (ok) ok = put_s(w, foot) && put_s(w, "\n");
    if (!ok) st = tl_error_oom(err);
    else st = tl_sink_write(w->base.sink, w->line, w->line_len, err);
done:
    tl_free(L.show);
    tl_free(L.cols);
    tl_free(nat);
    return st;
}

static TlStatus table_finish(TlWriter *base, TlError *err)
{
    return table_draw((TableWriter *)base, err);
}

static void table_free(TlWriter *base)
{
    TableWriter *w = (TableWriter *)base;
    for (int64_t i = 0; i < w->head_alloc; i++) row_free(&w->head[i]);
    for (int64_t i = 0; w->ring && i < w->tail_cap; i++) row_free(&w->ring[i]);
    tl_free(w->head);
    tl_free(w->ring);
    tl_free(w->line);
    tl_free(w);
}

static const TlWriterOps table_writer_ops = {table_write, table_finish, table_free};

/* See fmt_impl.h. */
TlStatus tl_table_writer_open(TlSink *sink, const TlSchema *schema, int width,
                              int64_t max_rows, bool color, TlWriter **out,
                              TlError *err)
{
    TableWriter *w = tl_calloc(1, sizeof *w);
    *out = NULL;
    if (!w) return tl_error_oom(err);
    w->base.ops = &table_writer_ops;
    w->base.sink = sink;
    w->schema = schema;
    w->n_cols = schema->n_fields;
    w->width = width > 0 ? width : 80;
    w->color = color;
    if (max_rows < 0) {
        w->head_cap = -1;
    } else {
        w->head_cap = (max_rows + 1) / 2;
        w->tail_cap = max_rows / 2;
    }
    if (w->tail_cap > 0 && !(w->ring = tl_calloc((size_t)w->tail_cap, sizeof *w->ring))) {
        table_free(&w->base);
        return tl_error_oom(err);
    }
    *out = &w->base;
    return TL_OK;
}
