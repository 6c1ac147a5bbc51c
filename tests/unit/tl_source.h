/*
 * tl_source.h -- test operators that hand out prepared batches, and the
 * small helpers every operator test needs around them.
 *
 * source(schema, cols, n, per) cuts the n-row columns into batches of `per`
 * rows (zero-copy slices) and returns an operator whose next() yields them in
 * order; it counts into g_stats.  Used by the operator tests (agg, sort).
 *
 * source_staged(schema, cols, n, per) is the same source with the scan's
 * stage interface (exec.h, "morsel parallelism"): once a consumer installs
 * a stage, every batch goes through stage.work on the thread pool
 * (tl_pool_for: concurrently, handed out last batch first so nothing may
 * depend on the order of the work), and next_result returns the results in
 * batch order, skipping NULL ones, or the first failing batch's error.
 *
 * source_col(ea, col, type) pushes a column reference; source_drain(op, ...)
 * pulls an operator to its end and concatenates each output column.
 *
 * The staged parts are static inline, so files that include this header
 * for source() alone build warning-free.
 */
#ifndef TL_SOURCE_H
#define TL_SOURCE_H

#include "../../lib/core/pool.h"
#include "../../lib/exec/exec.h"

typedef struct Source {
    TlOperator base;
    TlBatch **batches;
    int n, pos;
} Source;

static TlStatus src_next(TlOperator *op, TlBatch **out, TlError *err)
{
    (void)err;
    Source *s = (Source *)op;
    *out = s->pos < s->n ? s->batches[s->pos++] : NULL;
    return TL_OK;
}

static void src_free(TlOperator *op)
{
    Source *s = (Source *)op;
    for (int i = s->pos; i < s->n; i++) tl_batch_free(s->batches[i]);
    tl_free(s->batches);
    tl_free(s);
}

static TlExecStats g_stats;

/* A source over cols (n rows each) in batches of `per` rows. */
static TlOperator *source(const TlSchema *schema, TlArray **cols, int64_t n,
                          int64_t per)
{
    Source *s = tl_calloc(1, sizeof *s);
    int nb = (int)((n + per - 1) / per);
    s->batches = tl_calloc((size_t)nb + 1, sizeof *s->batches);
    for (int b = 0; b < nb; b++) {
        int64_t off = b * per, len = n - off < per ? n - off : per;
        TlBatch *bt = tl_batch_new(schema, schema->n_fields, len);
        for (int c = 0; c < schema->n_fields; c++)
            bt->cols[c] = tl_array_slice(cols[c], off, len);
        s->batches[s->n++] = bt;
    }
    s->base.next = src_next;
    s->base.free = src_free;
    s->base.schema = schema;
    s->base.stats = &g_stats;
    return &s->base;
}

/* --------------------------------------------------- the staged source */

typedef struct StagedSource {
    Source src;
    TlStage stage;
    bool has_stage, ran;
    void **results;      /* per batch, in batch order */
    TlStatus *status;
    TlError *errs;
    int n_res, pos;      /* batches staged; next one handed out */
    int work_calls;      /* stage.work calls (atomic) */
} StagedSource;

static inline TlStatus source_staged_set(TlOperator *op, const TlStage *stage, TlError *err)
{
    (void)err;
    StagedSource *s = (StagedSource *)op;
    s->stage = *stage;
    s->has_stage = true;
    return TL_OK;
}

static inline void source_staged_work(void *arg, int64_t i)
{
    StagedSource *s = arg;
    /* last batch first: results must not depend on the order of the work */
    int64_t b = s->n_res - 1 - i;
    TlBatch *bt = s->src.batches[s->src.pos + b];
    s->src.batches[s->src.pos + b] = NULL;
    s->status[b] = s->stage.work(s->stage.ctx, bt, &s->results[b], &s->errs[b]);
    __atomic_add_fetch(&s->work_calls, 1, __ATOMIC_RELAXED);
}

static inline TlStatus source_staged_next_result(TlOperator *op, void **result, TlError *err)
{
    StagedSource *s = (StagedSource *)op;
    *result = NULL;
    if (!s->ran) {
        s->ran = true;
        s->n_res = s->src.n - s->src.pos;
        s->results = tl_calloc((size_t)s->n_res + 1, sizeof *s->results);
        s->status = tl_calloc((size_t)s->n_res + 1, sizeof *s->status);
        s->errs = tl_calloc((size_t)s->n_res + 1, sizeof *s->errs);
        TL_TRY(tl_pool_for(s->n_res, source_staged_work, s, err));
        s->src.pos = s->src.n;
    }
    while (s->pos < s->n_res) {
        int i = s->pos++;
        if (s->status[i] != TL_OK) {
            *err = s->errs[i];
            return s->status[i];
        }
        if (s->results[i]) {
            *result = s->results[i];
            s->results[i] = NULL;
            return TL_OK;
        }
    }
    return TL_OK;
}

static inline void source_staged_free(TlOperator *op)
{
    StagedSource *s = (StagedSource *)op;
    for (int i = 0; i < s->n_res; i++)
        if (s->results[i]) s->stage.drop(s->stage.ctx, s->results[i]);
    tl_free(s->results);
    tl_free(s->status);
    tl_free(s->errs);
    for (int i = s->src.pos; i < s->src.n; i++) tl_batch_free(s->src.batches[i]);
    tl_free(s->src.batches);
    tl_free(s);
}

/* source() that also offers set_stage / next_result (see the top). */
static inline TlOperator *source_staged(const TlSchema *schema, TlArray **cols, int64_t n,
                                        int64_t per)
{
    Source *plain = (Source *)source(schema, cols, n, per);
    StagedSource *s = tl_calloc(1, sizeof *s);
    s->src = *plain;
    tl_free(plain);
    s->src.base.free = source_staged_free;
    s->src.base.set_stage = source_staged_set;
    s->src.base.next_result = source_staged_next_result;
    return &s->src.base;
}

/* ------------------------------------------------------------- helpers */

/* A column reference to input column col of type t, pushed on ea. */
static inline TlExprId source_col(TlExprArena *ea, int col, TlType t)
{
    TlExpr e = {0};
    TlExprId id;
    TlError err;
    e.kind = TL_X_COL;
    e.col = col;
    e.type = (uint8_t)t;
    e.name = "c";
    tl_ea_push(ea, &e, NULL, 0, &id, &err);
    return id;
}

/* Pull op to its end; out[c] gets column c of every batch concatenated (an
 * empty array when there was none); *st the last status.  Returns rows. */
static inline int64_t source_drain(TlOperator *op, TlArray **out, int n_cols, TlStatus *st,
                                   TlError *err)
{
    TlArray ***parts = tl_calloc((size_t)n_cols, sizeof *parts);
    int n_parts = 0, cap = 0;
    int64_t rows = 0;
    *st = TL_OK;
    for (;;) {
        TlBatch *b = NULL;
        *st = op->next(op, &b, err);
        if (*st != TL_OK || !b) break;
        if (n_parts == cap) {
            cap = cap ? cap * 2 : 8;
            for (int c = 0; c < n_cols; c++)
                parts[c] = tl_realloc(parts[c], (size_t)cap * sizeof *parts[c]);
        }
        for (int c = 0; c < n_cols; c++) parts[c][n_parts] = tl_array_retain(b->cols[c]);
        n_parts++;
        rows += b->n_rows;
        tl_batch_free(b);
    }
    for (int c = 0; c < n_cols; c++) {
        out[c] = tl_array_concat(parts[c], n_parts);
        for (int i = 0; i < n_parts; i++) tl_array_release(parts[c][i]);
        tl_free(parts[c]);
    }
    tl_free(parts);
    return rows;
}

#endif
