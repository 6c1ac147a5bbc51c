/*
 * csv_write.c -- the CSV/TSV writer.
 *
 * Spelling (man/tally.1, "Output formatting"): a field is quoted only when it must
 * be -- it holds the delimiter, a double quote, CR or LF -- and quotes inside
 * are doubled.  Null is an empty field (or the --out-null text, with a
 * string of that spelling quoted); the empty string is "" (the reader
 * reads them back the same way).  Values are spelled by lib/core/text.h, so
 * cast(x as string) agrees with the output.  TSV has its own writer (tsv.c).
 *
 * Rows are formatted in chunks (write_common.h), column by column first, so
 * the type is decided once per column, not once per value:
 *
 *   1. per column (csv_pieces): turn each value into a piece {pointer,
 *      length, kind}; numbers, dates and timestamps are formatted into
 *      `text` (reserved for the whole chunk up front, so pointers into it
 *      stay valid); strings point at their bytes in the array; kind says
 *      null / plain / quoted.
 *   2. per row (csv_rows): copy the pieces, delimiters and line ends into
 *      the slice's output buffer.
 *
 *   pieces: [col 0: row 0..chunk) [col 1: row 0..chunk) ...
 *
 * Batches are cut into slices formatted in parallel on the thread pool and
 * written in order by the pipeline of write_common.c; this file only holds
 * the read-only spelling state (CsvSpell) the formatting threads share.
 * The header is formatted the same way and written at open.
 */
#include "write_common.h"
#include "../lib/core/text.h"

enum { K_PLAIN = TL_PIECE_PLAIN, K_NULL = TL_PIECE_NULL, K_QUOTE = 2 };

/* How values are spelled: read only once open returns (shared by tasks). */
typedef struct CsvSpell {
    uint8_t delim;
    bool check_values;      /* the delimiter may occur in formatted values */
    uint8_t special[256];   /* delimiter, quote, CR, LF */
    int n_cols;
    char *null_text;        /* --out-null: written for null; NULL: empty */
    uint32_t null_len;
} CsvSpell;

typedef struct CsvWriter {
    TlWriter base;
    CsvSpell spell;
    TlWritePipe *pipe;
} CsvWriter;

static inline uint32_t kind_of(const CsvSpell *w, const uint8_t *s, size_t n)
{
    if (n == 0) return K_QUOTE;
    for (size_t i = 0; i < n; i++)
        if (w->special[s[i]]) return K_QUOTE;
    return K_PLAIN;
}

/* Copy one piece (quoted and escaped if its kind says so) to o, which has
 * room for 2 * len + 3 bytes; returns the end. */
static inline uint8_t *put_piece(uint8_t *o, const TlPiece *pc)
{
    if (pc->kind == K_PLAIN) {
        tl_copy_short(o, pc->p, pc->len);
        o += pc->len;
    } else if (pc->kind == K_QUOTE) {
        const uint8_t *s = pc->p, *end = pc->p + pc->len;
        *o++ = '"';
        while (s < end) {
            const uint8_t *q = memchr(s, '"', (size_t)(end - s));
            size_t k = q ? (size_t)(q - s) + 1 : (size_t)(end - s);
            memcpy(o, s, k);
            o += k;
            s += k;
            if (q) *o++ = '"';
        }
        *o++ = '"';
    }
    return o;
}

/* Append rows [0, n) of b's pieces as lines to b->out (TlWriteFormat.rows). */
static TlStatus csv_rows(const void *ctx, TlWriteBuf *b, int64_t n, TlError *err)
{
    const CsvSpell *w = ctx;
    const int64_t stride = b->chunk;
    for (int64_t row = 0; row < n; row++) {
        for (int c = 0; c < w->n_cols; c++) {
            const TlPiece *pc = &b->pieces[c * stride + row];
            size_t need = (size_t)pc->len * 2 + 3 + w->null_len;
            uint8_t *o;
            if (b->len + need > b->cap) TL_TRY(tl_write_buf_reserve(b, need, err));
            o = put_piece(b->out + b->len, pc);
            if (pc->kind == K_NULL && w->null_len) {
                memcpy(o, w->null_text, w->null_len);
                o += w->null_len;
            }
            *o++ = c + 1 == w->n_cols ? '\n' : w->delim;
            b->len = (size_t)(o - b->out);
        }
    }
    return TL_OK;
}

/* Pieces for rows [off, off+n) of array a into pc[0..n)
 * (TlWriteFormat.pieces). */
static void csv_pieces(const void *ctx, const TlArray *a, int64_t off, int64_t n,
                       TlPiece *pc, uint8_t **text, TlWriteBuf *b)
{
    const CsvSpell *w = ctx;
    const bool nulls = a->null_count > 0;
    (void)b;
    switch (a->type) {
    case TL_TSTRING: {
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
            pc[i] = (TlPiece){s, len, kind_of(w, s, len)};
            /* a string spelled as --out-null is quoted to stay a string */
            if (w->null_text && len == w->null_len && memcmp(s, w->null_text, len) == 0)
                pc[i].kind = K_QUOTE;
        }
        return;
    }
    default:
        tl_write_value_pieces(a, off, n, pc, text, K_PLAIN, false);
        break;
    }
    if (w->check_values)
        for (int64_t i = 0; i < n; i++)
            if (pc[i].kind == K_PLAIN) pc[i].kind = kind_of(w, pc[i].p, pc[i].len);
}

static const TlWriteFormat csv_format = {csv_pieces, csv_rows};

static TlStatus csv_write(TlWriter *base, const TlBatch *b, TlError *err)
{
    CsvWriter *w = (CsvWriter *)base;
    return tl_write_pipe_put_cols(w->pipe, w->spell.n_cols, b, err);
}

static TlStatus csv_finish(TlWriter *base, TlError *err)
{
    return tl_write_pipe_finish(((CsvWriter *)base)->pipe, NULL, err);
}

static void csv_free(TlWriter *base)
{
    CsvWriter *w = (CsvWriter *)base;
    tl_write_pipe_free(w->pipe);
    tl_free(w->spell.null_text);
    tl_free(w);
}

static const TlWriterOps csv_writer_ops = {csv_write, csv_finish, csv_free};

/* Write the header line (names quoted by the rule of values) to the sink. */
static TlStatus write_header(CsvWriter *w, const TlSchema *schema, TlError *err)
{
    TlWriteBuf hb;
    TlStatus st = TL_OK;
    if (!tl_write_buf_init(&hb, w->spell.n_cols)) {
        tl_write_buf_free(&hb);
        return tl_error_oom(err);
    }
    for (int c = 0; c < w->spell.n_cols; c++) {
        const uint8_t *s = (const uint8_t *)schema->fields[c].name;
        size_t len = strlen(schema->fields[c].name);
        hb.pieces[(size_t)c * (size_t)hb.chunk] =
            (TlPiece){s, (uint32_t)len, kind_of(&w->spell, s, len)};
    }
    st = csv_rows(&w->spell, &hb, 1, err);
    if (st == TL_OK) st = tl_sink_write(w->base.sink, hb.out, hb.len, err);
    tl_write_buf_free(&hb);
    return st;
}

/* Open a CSV/TSV writer with the given delimiter on sink and, if header,
 * write the column names (quoted by the same rule as values).  The sink is
 * borrowed and must outlive the writer; schema is only read here. */
TlStatus tl_csv_writer_open(TlSink *sink, char delimiter,
                            const TlSchema *schema, bool header,
                            const char *null_text, TlWriter **out, TlError *err)
{
    CsvWriter *w;
    TlStatus st;
    *out = NULL;
    if (delimiter == '"' || delimiter == '\n' || delimiter == '\r')
        return tl_error(err, TL_ERR_USAGE, "--delimiter cannot be a quote or a newline");
    w = tl_calloc(1, sizeof *w);
    if (!w) return tl_error_oom(err);
    w->base.ops = &csv_writer_ops;
    w->base.sink = sink;
    w->spell.delim = (uint8_t)delimiter;
    w->spell.special[w->spell.delim] = 1;
    w->spell.special['"'] = 1;
    w->spell.special['\n'] = 1;
    w->spell.special['\r'] = 1;
    /* formatted numbers, dates and timestamps use only these characters */
    w->spell.check_values = strchr("0123456789+-.:eEinfatyrulsINFAN ", delimiter) != NULL;
    w->spell.n_cols = schema->n_fields;
    w->spell.null_text = null_text ? tl_strdup(null_text) : NULL;
    w->spell.null_len = null_text ? (uint32_t)strlen(null_text) : 0;
    if (null_text && !w->spell.null_text) st = tl_error_oom(err);
    else st = tl_write_pipe_new(sink, w->spell.n_cols, &csv_format, &w->spell, &w->pipe, err);
    if (st == TL_OK && header && w->spell.n_cols > 0) st = write_header(w, schema, err);
    if (st != TL_OK) {
        csv_free(&w->base);
        return st;
    }
    *out = &w->base;
    return TL_OK;
}
