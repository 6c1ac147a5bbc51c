/*
 * ndjson_write.c -- the NDJSON writer: one JSON object per row.
 *
 * Spelling: keys in column order, each row `{"a":1,"b":"x"}` and a newline.
 *   null              null
 *   bool              true / false
 *   int64             digits (tl_fmt_i64)
 *   float64           shortest round-trip digits (tl_fmt_f64: 71.0, 1e-05);
 *                     inf, -inf and nan, which JSON cannot hold, are null and
 *                     counted in a warning on standard error
 *   date, timestamp   strings ("2024-01-31", "2024-01-31 12:00:00.5")
 *   string            RFC 8259 escaping: " \ and the control characters
 *                     (\b \f \n \r \t, others \u00XX); valid UTF-8 passes
 *                     through, each invalid sequence becomes U+FFFD and the
 *                     strings so repaired are counted in a warning
 *
 * JSON array (tl_json_writer_open, `-o x.json`, `--to json`): the same
 * objects, one a line, made one document:
 *
 *   [
 *   {"a":1,"b":"x"},
 *   {"a":2,"b":"y"}
 *   ]
 *
 * and `[]` when there is no row.  A row is spelt `,\n{...}` (the separator
 * first, so no slice needs to know whether a row follows it); the first
 * row of the output, `[\n{...}`, is formatted by write() itself before the
 * rest of its batch goes to the pipeline, and finish() writes `\n]\n`.
 *
 * The column keys, already quoted and escaped with their ':' (and the ','
 * before them), are built once at open.  Rows are formatted in chunks
 * column by column first, as in csv_write.c (write_common.h), so the type
 * is decided once per column: each value becomes a piece {pointer, length,
 * kind} (nd_pieces), then the rows are assembled from the pieces into the
 * slice's output buffer (nd_rows).  Batches are cut into slices formatted
 * in parallel on the thread pool and written in order by the pipeline of
 * write_common.c; the keys (NdSpell) are read only while it runs.  The
 * warning counts are per slice (TlWriteBuf.count: 0 inf/nan, 1 invalid
 * UTF-8), summed in order; finish prints them, so a run that restarts (and
 * throws its output away) warns once, with the same figures for every
 * thread count.
 */
#include "write_common.h"
#include "json_text.h"
#include "../lib/core/text.h"

#include <stdio.h>

enum { K_PLAIN = TL_PIECE_PLAIN, K_NULL = TL_PIECE_NULL, K_STRING = 2, K_QUOTED = 3 };
enum { C_NONFINITE = 0, C_BAD_UTF8 = 1 }; /* TlWriteBuf.count[] */

/* The column keys and a row's framing: read only once open returns
 * (shared by tasks). */
typedef struct NdSpell {
    int n_cols;
    uint8_t **keys;          /* per column: `{"name":` or `,"name":` */
    size_t *key_len;
    const char *pre, *post;  /* before and after each row's object */
    size_t pre_len, post_len;
} NdSpell;

typedef struct NdjsonWriter {
    TlWriter base;
    NdSpell spell;
    TlWritePipe *pipe;
    bool array;              /* a JSON array (see the top) */
    bool started;            /* array: the first row is written */
    int64_t count[TL_WRITE_COUNTERS]; /* array: the first row's warnings */
} NdjsonWriter;


/* Pieces for rows [off, off+n) of array a into pc[0..n); inf/nan are
 * counted in b (TlWriteFormat.pieces). */
static void nd_pieces(const void *ctx, const TlArray *a, int64_t off,
                      int64_t n, TlPiece *pc, uint8_t **text, TlWriteBuf *b)
{
    const bool nulls = a->null_count > 0;
    (void)ctx;
    switch (a->type) {
    case TL_TSTRING: {
        const TlView *v = tl_array_views(a) + off;
        for (int64_t i = 0; i < n; i++) {
            if (nulls && !tl_array_valid(a, off + i)) {
                pc[i] = (TlPiece){NULL, 0, K_NULL};
                continue;
            }
            pc[i] = (TlPiece){tl_view_ptr(&v[i], a->data), tl_view_len(v[i]), K_STRING};
        }
        break;
    }
    default:
        b->count[C_NONFINITE] += tl_write_value_pieces(a, off, n, pc, text, K_QUOTED, true);
        break;
    }
}

/* Append rows [0, n) of b's pieces as lines to b->out; strings repaired
 * are counted in b (TlWriteFormat.rows). */
static TlStatus nd_rows(const void *ctx, TlWriteBuf *b, int64_t n, TlError *err)
{
    const NdSpell *w = ctx;
    for (int64_t row = 0; row < n; row++) {
        if (w->n_cols == 0) {
            TL_TRY(tl_write_buf_reserve(b, w->pre_len + 2 + w->post_len, err));
            memcpy(b->out + b->len, w->pre, w->pre_len);
            memcpy(b->out + b->len + w->pre_len, "{}", 2);
            memcpy(b->out + b->len + w->pre_len + 2, w->post, w->post_len);
            b->len += w->pre_len + 2 + w->post_len;
            continue;
        }
        for (int c = 0; c < w->n_cols; c++) {
            const TlPiece *pc = &b->pieces[(size_t)c * (size_t)b->chunk + (size_t)row];
            size_t need = w->key_len[c] + (size_t)pc->len * 6 + 8 + w->pre_len;
            uint8_t *o;
            if (b->len + need > b->cap) TL_TRY(tl_write_buf_reserve(b, need, err));
            o = b->out + b->len;
            if (c == 0 && w->pre_len) {
                memcpy(o, w->pre, w->pre_len);
                o += w->pre_len;
            }
            memcpy(o, w->keys[c], w->key_len[c]);
            o += w->key_len[c];
            switch (pc->kind) {
            case K_PLAIN:
                memcpy(o, pc->p, pc->len);
                o += pc->len;
                break;
            case K_NULL:
                memcpy(o, "null", 4);
                o += 4;
                break;
            case K_QUOTED:
                *o++ = '"';
                memcpy(o, pc->p, pc->len);
                o += pc->len;
                *o++ = '"';
                break;
            default: {
                bool repaired = false;
                o = put_json_string(o, pc->p, pc->len, &repaired);
                b->count[C_BAD_UTF8] += repaired;
                break;
            }
            }
            if (c + 1 == w->n_cols) {
                *o++ = '}';
                if (w->post_len) *o++ = (uint8_t)w->post[0];
            }
            b->len = (size_t)(o - b->out);
        }
    }
    return TL_OK;
}

static const TlWriteFormat nd_format = {nd_pieces, nd_rows};

/* A JSON array's first row, `[\n{...}`, straight to the sink (nothing is
 * in the pipeline yet), then the rest of batch b (rows 1..) through the
 * pipeline. */
static TlStatus array_start(NdjsonWriter *w, const TlBatch *b, TlError *err)
{
    NdSpell first = w->spell;
    TlWriteBuf buf;
    TlBatch *rest = NULL;
    TlStatus st;
    first.pre = "[\n";
    first.pre_len = 2;
    if (!tl_write_buf_init(&buf, w->spell.n_cols)) {
        tl_write_buf_free(&buf);
        return tl_error_oom(err);
    }
    st = tl_write_format_rows(&nd_format, &first, b, b->n_cols, 0, 1, &buf, err);
    if (st == TL_OK) st = tl_sink_write(w->base.sink, buf.out, buf.len, err);
    for (int k = 0; k < TL_WRITE_COUNTERS; k++) w->count[k] += buf.count[k];
    tl_write_buf_free(&buf);
    w->started = true;
    if (st != TL_OK || b->n_rows == 1) return st;
    rest = tl_batch_new(b->schema, b->n_cols, b->n_rows - 1);
    if (!rest) return tl_error_oom(err);
    for (int c = 0; c < b->n_cols; c++)
        if (!(rest->cols[c] = tl_array_slice(b->cols[c], 1, b->n_rows - 1))) {
            tl_batch_free(rest);
            return tl_error_oom(err);
        }
    st = tl_write_pipe_put(w->pipe, rest, err);
    tl_batch_free(rest);
    return st;
}

static TlStatus nd_write(TlWriter *base, const TlBatch *b, TlError *err)
{
    NdjsonWriter *w = (NdjsonWriter *)base;
    if (b->n_cols != w->spell.n_cols)
        return tl_error(err, TL_ERR_DATA, "internal: writer expected %d columns, got %d",
                        w->spell.n_cols, b->n_cols);
    if (w->array && !w->started)
        return b->n_rows > 0 ? array_start(w, b, err) : TL_OK;
    return tl_write_pipe_put(w->pipe, b, err);
}

static TlStatus nd_finish(TlWriter *base, TlError *err)
{
    NdjsonWriter *w = (NdjsonWriter *)base;
    int64_t count[TL_WRITE_COUNTERS];
    TL_TRY(tl_write_pipe_finish(w->pipe, count, err));
    for (int k = 0; k < TL_WRITE_COUNTERS; k++) count[k] += w->count[k];
    if (w->array)
        TL_TRY(w->started ? tl_sink_write(w->base.sink, "\n]\n", 3, err)
                          : tl_sink_write(w->base.sink, "[]\n", 3, err));
    if (count[C_NONFINITE] > 0)
        fprintf(stderr, "tally: warning: %lld inf/nan value%s written as null "
                "(JSON cannot hold them)\n", (long long)count[C_NONFINITE],
                count[C_NONFINITE] == 1 ? "" : "s");
    if (count[C_BAD_UTF8] > 0)
        fprintf(stderr, "tally: warning: %lld string%s held invalid UTF-8, "
                "replaced with U+FFFD\n", (long long)count[C_BAD_UTF8],
                count[C_BAD_UTF8] == 1 ? "" : "s");
    return TL_OK;
}

static void nd_free(TlWriter *base)
{
    NdjsonWriter *w = (NdjsonWriter *)base;
    tl_write_pipe_free(w->pipe); /* first: its tasks read the keys */
    if (w->spell.keys)
        for (int c = 0; c < w->spell.n_cols; c++) tl_free(w->spell.keys[c]);
    tl_free(w->spell.keys);
    tl_free(w->spell.key_len);
    tl_free(w);
}

static const TlWriterOps ndjson_writer_ops = {nd_write, nd_finish, nd_free};

/* Open a writer of objects on sink for columns of schema: NDJSON, or with
 * array one JSON array (see the top of this file). */
static TlStatus writer_open(TlSink *sink, const TlSchema *schema, bool array,
                            TlWriter **out, TlError *err)
{
    NdjsonWriter *w;
    size_t n_cols = (size_t)schema->n_fields;
    TlStatus st;
    *out = NULL;
    w = tl_calloc(1, sizeof *w);
    if (!w) return tl_error_oom(err);
    w->base.ops = &ndjson_writer_ops;
    w->base.sink = sink;
    w->spell.n_cols = schema->n_fields;
    w->array = array;
    w->spell.pre = array ? ",\n" : "";
    w->spell.pre_len = array ? 2 : 0;
    w->spell.post = array ? "" : "\n";
    w->spell.post_len = array ? 0 : 1;
    w->spell.keys = tl_calloc(n_cols + 1, sizeof *w->spell.keys);
    w->spell.key_len = tl_calloc(n_cols + 1, sizeof *w->spell.key_len);
    if (!w->spell.keys || !w->spell.key_len) goto oom;
    for (int c = 0; c < w->spell.n_cols; c++) {
        const char *name = schema->fields[c].name;
        size_t len = strlen(name);
        bool repaired = false;
        uint8_t *k = tl_malloc(len * 6 + 4), *o;
        if (!k) goto oom;
        w->spell.keys[c] = k;
        o = k;
        *o++ = c == 0 ? '{' : ',';
        o = put_json_string(o, (const uint8_t *)name, len, &repaired);
        *o++ = ':';
        w->spell.key_len[c] = (size_t)(o - k);
    }
    st = tl_write_pipe_new(sink, w->spell.n_cols, &nd_format, &w->spell, &w->pipe, err);
    if (st != TL_OK) {
        nd_free(&w->base);
        return st;
    }
    *out = &w->base;
    return TL_OK;
oom:
    nd_free(&w->base);
    return tl_error_oom(err);
}

/* Open an NDJSON writer on sink for columns of schema (see the top of this
 * file).  Nothing is written until the first batch.  The sink is borrowed and
 * must outlive the writer; schema is only read here. */
TlStatus tl_ndjson_writer_open(TlSink *sink, const TlSchema *schema,
                               TlWriter **out, TlError *err)
{
    return writer_open(sink, schema, false, out, err);
}

/* Open a JSON array writer on sink (see the top of this file): as
 * tl_ndjson_writer_open; finish writes the closing `]` (or `[]`). */
TlStatus tl_json_writer_open(TlSink *sink, const TlSchema *schema,
                             TlWriter **out, TlError *err)
{
    return writer_open(sink, schema, true, out, err);
}
