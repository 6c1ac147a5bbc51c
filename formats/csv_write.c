/*
 * csv_write.c -- the CSV/TSV writer.
 *
 * Spelling (../shared/CLI.md, "Output"): a field is quoted only when it must
 * be -- it holds the delimiter, a double quote, CR or LF -- and quotes inside
 * are doubled.  Null is an empty field; the empty string is "" (the reader
 * reads them back the same way).  Values are spelled by lib/core/text.h, so
 * cast(x as string) agrees with the output.  TSV is the same with a tab.
 *
 * A batch is written in chunks of CHUNK rows, column by column first, so
 * the type is decided once per column, not once per value:
 *
 *   1. per column: turn each value into a piece {pointer, length, kind};
 *      numbers, dates and timestamps are formatted into `text` (reserved for
 *      the whole chunk up front, so pointers into it stay valid); strings
 *      point at their bytes in the array; kind says null / plain / quoted.
 *   2. per row: copy the pieces, delimiters and line ends into `out`, which
 *      goes to the sink whenever it fills (and at finish).
 *
 *   pieces: [col 0: row 0..CHUNK) [col 1: row 0..CHUNK) ...
 */
#include "fmt_impl.h"
#include "../lib/core/text.h"

#define CHUNK 1024
#define OUT_SIZE ((size_t)256 << 10)

enum { K_PLAIN = 0, K_NULL = 1, K_QUOTE = 2 };

typedef struct Piece {
    const uint8_t *p;
    uint32_t len;
    uint32_t kind;
} Piece;

typedef struct CsvWriter {
    TlWriter base;
    uint8_t delim;
    bool check_values;      /* the delimiter may occur in formatted values */
    uint8_t special[256];   /* delimiter, quote, CR, LF */
    int n_cols;
    Piece *pieces;          /* n_cols * CHUNK */
    uint8_t *text;          /* formatted values of one chunk */
    size_t text_cap;
    uint8_t *out;
    size_t out_len, out_cap;
} CsvWriter;

static inline uint32_t kind_of(const CsvWriter *w, const uint8_t *s, size_t n)
{
    if (n == 0) return K_QUOTE;
    for (size_t i = 0; i < n; i++)
        if (w->special[s[i]]) return K_QUOTE;
    return K_PLAIN;
}

static TlStatus flush_out(CsvWriter *w, TlError *err)
{
    if (w->out_len == 0) return TL_OK;
    TL_TRY(tl_sink_write(w->base.sink, w->out, w->out_len, err));
    w->out_len = 0;
    return TL_OK;
}

/* Make room for need more bytes in out. */
static TlStatus out_reserve(CsvWriter *w, size_t need, TlError *err)
{
    if (w->out_len + need <= w->out_cap) return TL_OK;
    TL_TRY(flush_out(w, err));
    if (need > w->out_cap) {
        uint8_t *g = tl_realloc(w->out, need);
        if (!g) return tl_error_oom(err);
        w->out = g;
        w->out_cap = need;
    }
    return TL_OK;
}

/* Copy one piece (quoted and escaped if its kind says so) into out; out has
 * room for 2 * len + 3 bytes. */
static inline void put_piece(CsvWriter *w, const Piece *pc)
{
    uint8_t *o = w->out + w->out_len;
    if (pc->kind == K_PLAIN) {
        memcpy(o, pc->p, pc->len);
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
    w->out_len = (size_t)(o - w->out);
}

/* Write rows [0, n) of the pieces as lines. */
static TlStatus emit_rows(CsvWriter *w, int64_t n, int64_t stride, TlError *err)
{
    for (int64_t row = 0; row < n; row++) {
        for (int c = 0; c < w->n_cols; c++) {
            const Piece *pc = &w->pieces[c * stride + row];
            size_t need = (size_t)pc->len * 2 + 3;
            if (w->out_len + need > w->out_cap) TL_TRY(out_reserve(w, need, err));
            put_piece(w, pc);
            w->out[w->out_len++] = c + 1 == w->n_cols ? '\n' : w->delim;
        }
    }
    return TL_OK;
}

/* Pieces for rows [off, off+n) of array a into pc[0..n). */
static void column_pieces(CsvWriter *w, const TlArray *a, int64_t off, int64_t n,
                          Piece *pc, uint8_t **text)
{
    const bool nulls = a->type == TL_TNULL || a->null_count > 0;
    uint8_t *t = *text;
    if (a->type == TL_TNULL) {
        for (int64_t i = 0; i < n; i++) pc[i] = (Piece){NULL, 0, K_NULL};
        return;
    }
    switch (a->type) {
    case TL_TSTRING: {
        const TlView *v = tl_array_views(a) + off;
        for (int64_t i = 0; i < n; i++) {
            const uint8_t *s;
            uint32_t len;
            if (nulls && !tl_array_valid(a, off + i)) {
                pc[i] = (Piece){NULL, 0, K_NULL};
                continue;
            }
            s = tl_view_ptr(&v[i], a->data);
            len = tl_view_len(v[i]);
            pc[i] = (Piece){s, len, kind_of(w, s, len)};
        }
        return;
    }
    case TL_TBOOL:
        for (int64_t i = 0; i < n; i++) {
            if (nulls && !tl_array_valid(a, off + i)) {
                pc[i] = (Piece){NULL, 0, K_NULL};
                continue;
            }
            pc[i] = tl_array_bool(a, off + i)
                        ? (Piece){(const uint8_t *)"true", 4, K_PLAIN}
                        : (Piece){(const uint8_t *)"false", 5, K_PLAIN};
        }
        break;
#define FORMAT_LOOP(GET, FMT)                                                  \
    for (int64_t i = 0; i < n; i++) {                                          \
        size_t len;                                                            \
        if (nulls && !tl_array_valid(a, off + i)) {                            \
            pc[i] = (Piece){NULL, 0, K_NULL};                                  \
            continue;                                                          \
        }                                                                      \
        len = FMT(GET(a)[off + i], (char *)t);                                 \
        pc[i] = (Piece){t, (uint32_t)len, K_PLAIN};                            \
        t += len;                                                              \
    }
    case TL_TINT64:
        FORMAT_LOOP(tl_array_i64, tl_fmt_i64)
        break;
    case TL_TFLOAT64:
        FORMAT_LOOP(tl_array_f64, tl_fmt_f64)
        break;
    case TL_TDATE:
        FORMAT_LOOP(tl_array_i32, tl_fmt_date)
        break;
    case TL_TTIMESTAMP:
        FORMAT_LOOP(tl_array_i64, tl_fmt_timestamp)
        break;
#undef FORMAT_LOOP
    default:
        for (int64_t i = 0; i < n; i++) pc[i] = (Piece){NULL, 0, K_NULL};
        break;
    }
    *text = t;
    if (w->check_values)
        for (int64_t i = 0; i < n; i++)
            if (pc[i].kind == K_PLAIN) pc[i].kind = kind_of(w, pc[i].p, pc[i].len);
}

static TlStatus csv_write(TlWriter *base, const TlBatch *b, TlError *err)
{
    CsvWriter *w = (CsvWriter *)base;
    if (w->n_cols == 0) return TL_OK;
    if (b->n_cols != w->n_cols)
        return tl_error(err, TL_ERR_DATA, "internal: writer expected %d columns, got %d",
                        w->n_cols, b->n_cols);
    for (int64_t off = 0; off < b->n_rows; off += CHUNK) {
        int64_t n = b->n_rows - off < CHUNK ? b->n_rows - off : CHUNK;
        uint8_t *t = w->text;
        for (int c = 0; c < w->n_cols; c++)
            column_pieces(w, b->cols[c], off, n, &w->pieces[(size_t)c * CHUNK], &t);
        TL_TRY(emit_rows(w, n, CHUNK, err));
    }
    return TL_OK;
}

static TlStatus csv_finish(TlWriter *base, TlError *err)
{
    return flush_out((CsvWriter *)base, err);
}

static void csv_free(TlWriter *base)
{
    CsvWriter *w = (CsvWriter *)base;
    tl_free(w->pieces);
    tl_free(w->text);
    tl_free(w->out);
    tl_free(w);
}

static const TlWriterOps csv_writer_ops = {csv_write, csv_finish, csv_free};

/* Open a CSV/TSV writer with the given delimiter on sink and, if header,
 * write the column names (quoted by the same rule as values).  The sink is
 * borrowed and must outlive the writer; schema is only read here. */
TlStatus tl_csv_writer_open(TlSink *sink, char delimiter,
                            const TlSchema *schema, bool header,
                            TlWriter **out, TlError *err)
{
    CsvWriter *w;
    size_t n_cols = (size_t)schema->n_fields;
    *out = NULL;
    if (delimiter == '"' || delimiter == '\n' || delimiter == '\r')
        return tl_error(err, TL_ERR_USAGE, "--delimiter cannot be a quote or a newline");
    w = tl_calloc(1, sizeof *w);
    if (!w) return tl_error_oom(err);
    w->base.ops = &csv_writer_ops;
    w->base.sink = sink;
    w->delim = (uint8_t)delimiter;
    w->special[w->delim] = 1;
    w->special['"'] = 1;
    w->special['\n'] = 1;
    w->special['\r'] = 1;
    /* formatted numbers, dates and timestamps use only these characters */
    w->check_values = strchr("0123456789+-.:eEinfatyrulsINFAN ", delimiter) != NULL;
    w->n_cols = schema->n_fields;
    w->pieces = tl_malloc((n_cols + 1) * CHUNK * sizeof *w->pieces);
    w->text_cap = (n_cols + 1) * CHUNK * TL_FMT_MAX;
    w->text = tl_malloc(w->text_cap);
    w->out_cap = OUT_SIZE;
    w->out = tl_malloc(w->out_cap);
    if (!w->pieces || !w->text || !w->out) {
        csv_free(&w->base);
        return tl_error_oom(err);
    }
    if (header && w->n_cols > 0) {
        TlStatus st;
        for (int c = 0; c < w->n_cols; c++) {
            const uint8_t *s = (const uint8_t *)schema->fields[c].name;
            size_t len = strlen(schema->fields[c].name);
            w->pieces[(size_t)c * CHUNK] = (Piece){s, (uint32_t)len, kind_of(w, s, len)};
        }
        st = emit_rows(w, 1, CHUNK, err);
        if (st != TL_OK) {
            csv_free(&w->base);
            return st;
        }
    }
    *out = &w->base;
    return TL_OK;
}
