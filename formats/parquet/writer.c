/*
 * writer.c -- the Parquet writer (`-o out.parquet`, `--to parquet`):
 * batches in, a file of row groups out, through the run's sink like every
 * other output (so it is atomic: the sink renames a finished temporary file
 * into place, and a failed run leaves nothing).
 *
 *   write()   cuts the incoming batches into row groups of exactly
 *             row_group_size rows (the last one shorter), whatever the
 *             batches' sizes: it keeps references to the pieces of the
 *             row group being filled, nothing more, so memory is bounded
 *             by one row group (and its encoded bytes), never the output
 *   flush     encodes the row group's columns on the pool (one task per
 *             column, chunk_write.c), then writes the chunks in column
 *             order from the calling thread, noting where each landed
 *   finish()  the last row group, then the footer (footer_write.c), its
 *             length and the magic "PAR1"
 *
 * Row groups are cut on row counts and chunks depend only on their values,
 * so the bytes are the same for every --threads and batch size.  Tasks
 * share a free list of compression states (zstd's context is costly to
 * make), taken and given back under a mutex; which task gets which does
 * not change a byte.
 */
#include "pqwrite.h"
#include "../../lib/core/pool.h"

#include <pthread.h>
#include <stdio.h>

typedef struct PqWriter {
    TlWriter base;
    TlSchema schema;         /* a copy: names and types */
    int n_cols;
    int64_t rg_rows;         /* rows per row group */
    int codec, level;
    char *created_by;
    bool started;            /* the leading magic is written */
    int64_t pos;             /* bytes written so far */
    int64_t rows;            /* rows in the written row groups */
    PqRgOut *rgs;
    int n_rgs, cap_rgs;
    /* the row group being filled: pieces[c * cap_pieces + p] */
    TlArray **pieces;
    int n_pieces, cap_pieces;
    int64_t pending;         /* its rows */
    /* compression states, shared by the tasks */
    pthread_mutex_t mu;
    PqCctx **cctx;
    int n_cctx, cap_cctx;
} PqWriter;

typedef struct FlushCtx {
    PqWriter *w;
    PqChunkOut *outs;
    TlStatus *st;
} FlushCtx;

static PqCctx *cctx_take(PqWriter *w)
{
    PqCctx *c = NULL;
    pthread_mutex_lock(&w->mu);
    if (w->n_cctx > 0) c = w->cctx[--w->n_cctx];
    pthread_mutex_unlock(&w->mu);
    return c ? c : pq_cctx_new(w->codec, w->level);
}

static void cctx_give(PqWriter *w, PqCctx *c)
{
    pthread_mutex_lock(&w->mu);
    if (w->n_cctx == w->cap_cctx) {
        int cap = w->cap_cctx ? w->cap_cctx * 2 : 4;
        PqCctx **g = tl_realloc(w->cctx, (size_t)cap * sizeof *g);
        if (g) {
            w->cctx = g;
            w->cap_cctx = cap;
        }
    }
    if (w->n_cctx < w->cap_cctx) {
        w->cctx[w->n_cctx++] = c;
        c = NULL;
    }
    pthread_mutex_unlock(&w->mu);
    pq_cctx_free(c);
}

static void encode_task(void *arg, int64_t i)
{
    FlushCtx *f = arg;
    PqWriter *w = f->w;
    PqChunkIn in;
    int c = (int)i;
    memset(&in, 0, sizeof in);
    in.type = w->schema.fields[c].type;
    in.parts = w->pieces + (size_t)c * (size_t)w->cap_pieces;
    in.n_parts = w->n_pieces;
    in.rows = w->pending;
    if (w->codec != PQ_CODEC_UNCOMPRESSED && !(in.cctx = cctx_take(w))) {
        f->st[c] = TL_ERR_OOM;
        return;
    }
    f->st[c] = pq_chunk_encode(&in, &f->outs[c]);
    if (in.cctx) cctx_give(w, in.cctx);
}

static void drop_pieces(PqWriter *w)
{
    for (int c = 0; c < w->n_cols; c++)
        for (int p = 0; p < w->n_pieces; p++) {
            tl_array_release(w->pieces[(size_t)c * (size_t)w->cap_pieces + (size_t)p]);
            w->pieces[(size_t)c * (size_t)w->cap_pieces + (size_t)p] = NULL;
        }
    w->n_pieces = 0;
    w->pending = 0;
}

static TlStatus put(PqWriter *w, const void *p, size_t n, TlError *err)
{
    TL_TRY(tl_sink_write(w->base.sink, p, n, err));
    w->pos += (int64_t)n;
    return TL_OK;
}

/* Encode and write the pending row group. */
static TlStatus flush(PqWriter *w, TlError *err)
{
    size_t n = (size_t)(w->n_cols ? w->n_cols : 1);
    FlushCtx f = {w, tl_calloc(n, sizeof *f.outs), tl_calloc(n, sizeof *f.st)};
    PqRgOut *rg;
    TlStatus st = TL_OK;
    if (w->n_rgs == w->cap_rgs) {
        int cap = w->cap_rgs ? w->cap_rgs * 2 : 8;
        PqRgOut *g = tl_realloc(w->rgs, (size_t)cap * sizeof *g);
        if (g) {
            w->rgs = g;
            w->cap_rgs = cap;
        }
    }
    if (!f.outs || !f.st || w->n_rgs == w->cap_rgs) {
        tl_free(f.outs);
        tl_free(f.st);
        return tl_error_oom(err);
    }
    st = tl_pool_for(w->n_cols, encode_task, &f, err);
    rg = &w->rgs[w->n_rgs++];
    memset(rg, 0, sizeof *rg);
    rg->rows = w->pending;
    drop_pieces(w);
    rg->cols = f.outs;
    rg->col_offset = tl_calloc(n, sizeof *rg->col_offset);
    if (st == TL_OK && !rg->col_offset) st = tl_error_oom(err);
    for (int c = 0; st == TL_OK && c < w->n_cols; c++) {
        if (f.st[c] == TL_ERR_OOM) st = tl_error_oom(err);
        else if (f.st[c] != TL_OK)
            st = tl_error(err, f.st[c], "writing Parquet column %s: %s",
                          tl_quote_name(w->schema.fields[c].name).s, f.outs[c].why);
    }
    rg->offset = w->pos;
    for (int c = 0; st == TL_OK && c < w->n_cols; c++) {
        PqChunkOut *o = &f.outs[c];
        rg->col_offset[c] = w->pos;
        rg->uncompressed += o->uncompressed;
        rg->compressed += o->compressed;
        st = put(w, o->bytes.p, o->bytes.len, err);
        pq_bytes_free(&o->bytes);
    }
    tl_free(f.st);
    if (st == TL_OK) w->rows += rg->rows;
    return st;
}

static TlStatus start(PqWriter *w, TlError *err)
{
    if (w->started) return TL_OK;
    w->started = true;
    return put(w, "PAR1", 4, err);
}

static TlStatus pq_write(TlWriter *base, const TlBatch *b, TlError *err)
{
    PqWriter *w = (PqWriter *)base;
    int64_t off = 0;
    if (b->n_cols != w->n_cols)
        return tl_error(err, TL_ERR_DATA, "internal: writer expected %d columns, got %d",
                        w->n_cols, b->n_cols);
    TL_TRY(start(w, err));
    while (off < b->n_rows) {
        int64_t k = b->n_rows - off;
        if (k > w->rg_rows - w->pending) k = w->rg_rows - w->pending;
        if (w->n_pieces == w->cap_pieces) {
            int cap = w->cap_pieces ? w->cap_pieces * 2 : 8;
            size_t cols = (size_t)(w->n_cols ? w->n_cols : 1);
            TlArray **g = tl_calloc(cols * (size_t)cap, sizeof *g);
            if (!g) return tl_error_oom(err);
            for (int c = 0; c < w->n_cols; c++)
                for (int p = 0; p < w->n_pieces; p++)
                    g[(size_t)c * (size_t)cap + (size_t)p] =
                        w->pieces[(size_t)c * (size_t)w->cap_pieces + (size_t)p];
            tl_free(w->pieces);
            w->pieces = g;
            w->cap_pieces = cap;
        }
        for (int c = 0; c < w->n_cols; c++) {
            TlArray *a = off == 0 && k == b->n_rows ? tl_array_retain(b->cols[c])
                                                    : tl_array_slice(b->cols[c], off, k);
            if (!a) {
                for (int d = 0; d < c; d++)
                    tl_array_release(w->pieces[(size_t)d * (size_t)w->cap_pieces +
                                               (size_t)w->n_pieces]);
                return tl_error_oom(err);
            }
            w->pieces[(size_t)c * (size_t)w->cap_pieces + (size_t)w->n_pieces] = a;
        }
        w->n_pieces++;
        w->pending += k;
        off += k;
        if (w->pending == w->rg_rows) TL_TRY(flush(w, err));
    }
    return TL_OK;
}

static TlStatus pq_finish(TlWriter *base, TlError *err)
{
    PqWriter *w = (PqWriter *)base;
    PqTw t;
    uint32_t len;
    TlStatus st;
    TL_TRY(start(w, err));
    if (w->pending > 0) TL_TRY(flush(w, err));
    pq_tw_init(&t);
    pq_footer_put(&t, &w->schema, w->rgs, w->n_rgs, w->rows, w->codec, w->created_by);
    if (t.oom || t.len > UINT32_MAX) {
        pq_tw_free(&t);
        return tl_error_oom(err);
    }
    len = (uint32_t)t.len;
    pq_tw_raw(&t, &len, 4); /* little-endian, as every target tally builds for */
    pq_tw_raw(&t, "PAR1", 4);
    st = t.oom ? tl_error_oom(err) : put(w, t.p, t.len, err);
    pq_tw_free(&t);
    return st;
}

static void pq_free(TlWriter *base)
{
    PqWriter *w = (PqWriter *)base;
    if (w->pieces) drop_pieces(w);
    tl_free(w->pieces);
    for (int g = 0; g < w->n_rgs; g++) {
        for (int c = 0; c < w->n_cols; c++) pq_chunk_out_free(&w->rgs[g].cols[c]);
        tl_free(w->rgs[g].cols);
        tl_free(w->rgs[g].col_offset);
    }
    tl_free(w->rgs);
    for (int i = 0; i < w->n_cctx; i++) pq_cctx_free(w->cctx[i]);
    tl_free(w->cctx);
    pthread_mutex_destroy(&w->mu);
    tl_schema_free(&w->schema);
    tl_free(w->created_by);
    tl_free(w);
}

/* --parquet-compression NAME and --compress-level N: the codec, and the
 * level checked against the codec's range. */
static TlStatus codec_parse(const char *name, int level, int *codec, TlError *err)
{
    static const struct {
        const char *name;
        int codec, max_level;
    } codecs[] = {{"zstd", PQ_CODEC_ZSTD, 22}, {"snappy", PQ_CODEC_SNAPPY, 0},
                  {"gzip", PQ_CODEC_GZIP, 9},  {"lz4", PQ_CODEC_LZ4_RAW, 12},
                  {"none", PQ_CODEC_UNCOMPRESSED, 0}};
    if (!name) name = "zstd";
    for (size_t i = 0; i < sizeof codecs / sizeof codecs[0]; i++) {
        if (strcmp(codecs[i].name, name) != 0) continue;
        *codec = codecs[i].codec;
        if (level && !codecs[i].max_level)
            return tl_error(err, TL_ERR_USAGE, "--compress-level: the Parquet codec %s has "
                            "no levels", name);
        if (level > codecs[i].max_level)
            return tl_error(err, TL_ERR_USAGE, "--compress-level: Parquet %s levels are 1 "
                            "to %d, got %d", name, codecs[i].max_level, level);
        return TL_OK;
    }
    return tl_error(err, TL_ERR_USAGE, "--parquet-compression: expected zstd, snappy, gzip, "
                    "lz4 or none, got %s", tl_quote_name(name).s);
}

static const TlWriterOps parquet_writer_ops = {pq_write, pq_finish, pq_free};

/* See fmt_impl.h. */
TlStatus tl_parquet_writer_open(TlSink *sink, const TlSchema *schema,
                                const TlWriteOptions *opt, TlWriter **out, TlError *err)
{
    PqWriter *w = tl_calloc(1, sizeof *w);
    *out = NULL;
    if (!w) return tl_error_oom(err);
    pthread_mutex_init(&w->mu, NULL);
    w->base.ops = &parquet_writer_ops;
    w->base.sink = sink;
    w->n_cols = schema->n_fields;
    w->rg_rows = opt && opt->row_group_size > 0 ? opt->row_group_size : TL_PARQUET_ROW_GROUP;
    w->level = opt ? opt->compress_level : 0;
    if (codec_parse(opt ? opt->parquet_compression : NULL, w->level, &w->codec, err) != TL_OK ||
        (w->n_cols == 0 && tl_error(err, TL_ERR_DATA, "Parquet output needs at least one "
                                    "column; the result has none"))) {
        pq_free(&w->base);
        return err->code;
    }
    w->created_by = tl_strdup(opt && opt->created_by ? opt->created_by : "tally");
    if (!w->created_by || tl_schema_copy(&w->schema, schema, err) != TL_OK) {
        pq_free(&w->base);
        return tl_error_oom(err);
    }
    *out = &w->base;
    return TL_OK;
}
