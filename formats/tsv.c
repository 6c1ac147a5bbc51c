/*
 * tsv.c -- the TSV writer: the IANA text/tab-separated-values format.
 *
 * TSV consumers are line tools: `cut -f`, `awk -F'\t'`, `sort -t`, a
 * database's COPY.  None of them reads CSV quoting, so a TSV field is never
 * quoted (man/tally.1, "TSV"): the four bytes that would break a line or a
 * field are written as backslash escapes, the convention of PostgreSQL's
 * COPY, MySQL's SELECT INTO OUTFILE and Python's csv-less TSV tools:
 *
 *   tab -> \t    LF -> \n    CR -> \r    backslash -> \\
 *
 * and everything else, quotes included, is written as it is.  The reader
 * (csv_read.c in TSV mode, with tsv_read.c's decoding) reads the escapes
 * back, so a round trip keeps every string.  Null is written as the
 * --out-null text, default empty: an empty field reads back as null, so in
 * TSV null and the empty string are one value unless --out-null '\N' is
 * given (then the empty string is an empty field and null is \N, which the
 * reader reads as null; a string `\N` is written `\\N`, its backslash
 * escaped, so it stays a string).
 *
 * The pieces/rows split and the parallel formatting are write_common.c's,
 * as for CSV (csv_write.c); only the spelling differs.
 */
#include "write_common.h"
#include "tsv.h"

enum { K_PLAIN = TL_PIECE_PLAIN, K_NULL = TL_PIECE_NULL, K_ESC = 2 };

/* How values are spelled: read only once open returns (shared by tasks). */
typedef struct TsvSpell {
    const uint8_t *null_text;  /* written for null */
    uint32_t null_len;
    int n_cols;
} TsvSpell;

typedef struct TsvWriter {
    TlWriter base;
    TsvSpell spell;
    char *null_copy;
    TlWritePipe *pipe;
} TsvWriter;

/* 1 for the bytes written as escapes. */
static const uint8_t escaped[256] = {['\t'] = 1, ['\n'] = 1, ['\r'] = 1, ['\\'] = 1};

static inline uint32_t kind_of(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (escaped[s[i]]) return K_ESC;
    return K_PLAIN;
}

/* Copy one piece (escaped if its kind says so) to o, which has room for
 * 2 * len + 1 bytes (and the null text); returns the end. */
static inline uint8_t *put_piece(uint8_t *o, const TlPiece *pc, const TsvSpell *w)
{
    if (pc->kind == K_PLAIN) {
        memcpy(o, pc->p, pc->len);
        o += pc->len;
    } else if (pc->kind == K_NULL) {
        memcpy(o, w->null_text, w->null_len);
        o += w->null_len;
    } else {
        for (uint32_t i = 0; i < pc->len; i++) {
            uint8_t c = pc->p[i];
            if (!escaped[c]) {
                *o++ = c;
                continue;
            }
            *o++ = '\\';
            *o++ = c == '\t' ? 't' : c == '\n' ? 'n' : c == '\r' ? 'r' : '\\';
        }
    }
    return o;
}

/* Append rows [0, n) of b's pieces as lines to b->out (TlWriteFormat.rows). */
static TlStatus tsv_rows(const void *ctx, TlWriteBuf *b, int64_t n, TlError *err)
{
    const TsvSpell *w = ctx;
    const int64_t stride = b->chunk;
    for (int64_t row = 0; row < n; row++) {
        for (int c = 0; c < w->n_cols; c++) {
            const TlPiece *pc = &b->pieces[c * stride + row];
            size_t need = (size_t)pc->len * 2 + w->null_len + 1;
            uint8_t *o;
            if (b->len + need > b->cap) TL_TRY(tl_write_buf_reserve(b, need, err));
            o = put_piece(b->out + b->len, pc, w);
            *o++ = c + 1 == w->n_cols ? '\n' : '\t';
            b->len = (size_t)(o - b->out);
        }
    }
    return TL_OK;
}

/* Pieces for rows [off, off+n) of array a into pc[0..n)
 * (TlWriteFormat.pieces).  Formatted numbers, dates and timestamps hold
 * no byte that needs escaping. */
static void tsv_pieces(const void *ctx, const TlArray *a, int64_t off, int64_t n,
                       TlPiece *pc, uint8_t **text, TlWriteBuf *b)
{
    const bool nulls = a->null_count > 0;
    (void)ctx;
    (void)b;
    if (a->type != TL_TSTRING) {
        tl_write_value_pieces(a, off, n, pc, text, K_PLAIN, false);
        return;
    }
    const TlView *v = tl_array_views(a) + off;
    for (int64_t i = 0; i < n; i++) {
        const uint8_t *s;
        uint32_t len;
        if (nulls && !tl_array_valid(a, off + i)) {
            pc[i] = (TlPiece){NULL, 0, K_NULL};
            continue;
        }
        s = tl_view_ptr(&v[i], a->data);
        len = tl_view_len(v[i]);
        pc[i] = (TlPiece){s, len, kind_of(s, len)};
    }
}

static const TlWriteFormat tsv_format = {tsv_pieces, tsv_rows};

static TlStatus tsv_write(TlWriter *base, const TlBatch *b, TlError *err)
{
    TsvWriter *w = (TsvWriter *)base;
    return tl_write_pipe_put_cols(w->pipe, w->spell.n_cols, b, err);
}

static TlStatus tsv_finish(TlWriter *base, TlError *err)
{
    return tl_write_pipe_finish(((TsvWriter *)base)->pipe, NULL, err);
}

static void tsv_free(TlWriter *base)
{
    TsvWriter *w = (TsvWriter *)base;
    tl_write_pipe_free(w->pipe);
    tl_free(w->null_copy);
    tl_free(w);
}

static const TlWriterOps tsv_writer_ops = {tsv_write, tsv_finish, tsv_free};

/* Write the header line (names escaped as values are) to the sink. */
static TlStatus write_header(TsvWriter *w, const TlSchema *schema, TlError *err)
{
    TlWriteBuf hb;
    TlStatus st;
    if (!tl_write_buf_init(&hb, w->spell.n_cols)) {
        tl_write_buf_free(&hb);
        return tl_error_oom(err);
    }
    for (int c = 0; c < w->spell.n_cols; c++) {
        const uint8_t *s = (const uint8_t *)schema->fields[c].name;
        size_t len = strlen(schema->fields[c].name);
        hb.pieces[(size_t)c * (size_t)hb.chunk] =
            (TlPiece){s, (uint32_t)len, kind_of(s, len)};
    }
    st = tsv_rows(&w->spell, &hb, 1, err);
    if (st == TL_OK) st = tl_sink_write(w->base.sink, hb.out, hb.len, err);
    tl_write_buf_free(&hb);
    return st;
}

/* See tsv.h. */
TlStatus tl_tsv_writer_open(TlSink *sink, const TlSchema *schema, bool header,
                            const char *null_text, TlWriter **out, TlError *err)
{
    TsvWriter *w;
    TlStatus st;
    *out = NULL;
    w = tl_calloc(1, sizeof *w);
    if (!w) return tl_error_oom(err);
    w->base.ops = &tsv_writer_ops;
    w->base.sink = sink;
    w->null_copy = tl_strdup(null_text ? null_text : "");
    if (!w->null_copy) {
        tl_free(w);
        return tl_error_oom(err);
    }
    w->spell.null_text = (const uint8_t *)w->null_copy;
    w->spell.null_len = (uint32_t)strlen(w->null_copy);
    w->spell.n_cols = schema->n_fields;
    st = tl_write_pipe_new(sink, w->spell.n_cols, &tsv_format, &w->spell, &w->pipe, err);
    if (st == TL_OK && header && w->spell.n_cols > 0) st = write_header(w, schema, err);
    if (st != TL_OK) {
        tsv_free(&w->base);
        return st;
    }
    *out = &w->base;
    return TL_OK;
}
