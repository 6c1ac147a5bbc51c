/*
 * op_filter.c -- keep the rows where a predicate is true.
 *
 * The predicate is evaluated once per batch (tl_eval_filter folds null into
 * false and hands back the selected row indexes).  Three outcomes:
 *
 *   every row selected  the batch goes on untouched (no copy)
 *   no row selected     the batch is dropped and the next one pulled
 *   some rows           each column is gathered (tl_array_take); string
 *                       columns share the input's data blocks
 *
 * Over a scan the filter is fused into it as a map (exec.h), so it runs per
 * morsel on the thread pool; elsewhere it is an operator pulling batches.
 *
 * Late materialization (exec.h, TlLate): as the scan's first map the filter
 * also has a late form, filter_late.  The scan converts only the columns
 * the predicate reads, the predicate picks the rows, and the reader
 * converts the other columns for those rows alone (all rows: everything;
 * none: nothing, after the reader checked the skipped fields so a type
 * restart is the same).  The result is the plain map's, bit for bit.
 */
#include "ops.h"

#include "../expr/eval.h"

typedef struct FilterMap {
    const TlExprArena *ea;
    TlExprId pred;
    const TlSchema *schema;
} FilterMap;

typedef struct Filter {
    TlOperator base;
    TlOperator *child;
    FilterMap map;
    int64_t rows_in;    /* rows of the batches taken so far: for messages */
    /* the input batch of the batch handed out last, the input rows before
     * it and the rows handed out before it (filter_origin) */
    TlBatch *last;
    int64_t last_in, last_out, rows_out;
} Filter;

/* The map (exec.h): batch b filtered; *out NULL when no row is left.  Pure,
 * so a scan may run it on any thread. */
static TlStatus filter_map(void *ctx, TlBatch *b, TlBatch **out, TlError *err)
{
    const FilterMap *f = ctx;
    TlBatch *nb;
    uint32_t *sel = NULL;
    int64_t n_sel = 0;
    bool all = false;
    TlStatus st;
    *out = NULL;
    st = tl_eval_filter(f->ea, f->pred, b, &sel, &n_sel, &all, err);
    if (st != TL_OK) {
        tl_batch_free(b);
        return st;
    }
    if (all) {
        tl_free(sel);
        b->schema = f->schema;
        *out = b;
        return TL_OK;
    }
    if (n_sel == 0) {
        tl_free(sel);
        tl_batch_free(b);
        return TL_OK;
    }
    nb = tl_batch_new(f->schema, b->n_cols, n_sel);
    for (int c = 0; nb && c < b->n_cols; c++) {
        nb->cols[c] = tl_array_take(b->cols[c], sel, n_sel);
        if (!nb->cols[c]) {
            tl_batch_free(nb);
            nb = NULL;
        }
    }
    tl_free(sel);
    tl_batch_free(b);
    if (!nb) return tl_error_oom(err);
    *out = nb;
    return TL_OK;
}

/* The late form (see the top): part holds the predicate's columns. */
static TlStatus filter_late(void *ctx, TlBatch *part, TlLate *late, TlBatch **out,
                            TlError *err)
{
    const FilterMap *f = ctx;
    uint32_t *sel = NULL;
    int64_t n_sel = 0;
    bool all = false;
    TlStatus st;
    TlError perr;
    *out = NULL;
    st = tl_eval_filter(f->ea, f->pred, part, &sel, &n_sel, &all, &perr);
    tl_batch_free(part);
    if (st != TL_OK) {
        /* the plain path would have met a conversion error first */
        TlBatch *b = NULL;
        TlStatus fst = tl_late_fetch(late, NULL, -1, &b, err);
        tl_batch_free(b);
        if (fst != TL_OK) return fst;
        *err = perr;
        return st;
    }
    st = tl_late_fetch(late, sel, all ? -1 : n_sel, out, err);
    tl_free(sel);
    if (st == TL_OK && *out) (*out)->schema = f->schema;
    return st;
}

/* filter_map over b (consumed), its output dropped: tl_first_failing_row. */
static TlStatus filter_run(void *ctx, TlBatch *b, TlError *err)
{
    TlBatch *out = NULL;
    TlStatus st = filter_map(ctx, b, &out, err);
    tl_batch_free(out);
    return st;
}

/* filter_map over b (consumed): the rows it keeps, for tl_nth_kept_row. */
static TlStatus filter_keep(void *ctx, TlBatch *b, int64_t *kept, TlError *err)
{
    TlBatch *out = NULL;
    TlStatus st = filter_map(ctx, b, &out, err);
    *kept = out ? out->n_rows : 0;
    tl_batch_free(out);
    return st;
}

/* See exec.h (TlOperator.origin): a row of the batch handed out last is
 * found in its input batch, kept for this, and asked of the child. */
static void filter_origin(TlOperator *op, int64_t row, TlPlaceVal *v, char *buf,
                          size_t cap)
{
    Filter *f = (Filter *)op;
    int64_t i = -1;
    buf[0] = '\0';
    if (f->last && row >= f->last_out && row < f->rows_out)
        i = tl_nth_kept_row(filter_keep, &f->map, f->last, row - f->last_out);
    if (i >= 0) tl_origin(f->child, f->last_in + i, v, buf, cap);
}

static TlStatus filter_next(TlOperator *op, TlBatch **out, TlError *err)
{
    Filter *f = (Filter *)op;
    *out = NULL;
    for (;;) {
        TlBatch *b = NULL, *keep;
        TlStatus st;
        TL_TRY(f->child->next(f->child, &b, err));
        if (!b) return TL_OK;
        if (!(keep = tl_batch_ref(b))) {
            tl_batch_free(b);
            return tl_error_oom(err);
        }
        st = filter_map(&f->map, b, out, err);
        if (st == TL_ERR_DATA)
            tl_place_row(filter_run, &f->map, keep, f->child, f->rows_in, err);
        f->rows_in += keep->n_rows;
        if (st != TL_OK || !*out) {
            tl_batch_free(keep);
            if (st != TL_OK) return st;
            continue;
        }
        tl_batch_free(f->last);
        f->last = keep;
        f->last_in = f->rows_in - keep->n_rows;
        f->last_out = f->rows_out;
        f->rows_out += (*out)->n_rows;
        return TL_OK;
    }
}

static void filter_free(TlOperator *op)
{
    Filter *f = (Filter *)op;
    if (!f) return;
    tl_batch_free(f->last);
    if (f->child) f->child->free(f->child);
    tl_free(f);
}

/* See ops.h.  Over a scan the filter becomes one of the scan's maps (it
 * then runs per morsel on the pool) and the scan is the operator. */
TlStatus tl_op_filter_new(TlOperator *child, const TlExprArena *ea,
                          TlExprId pred, const TlSchema *schema,
                          TlOperator **out, TlError *err)
{
    Filter *f;
    *out = NULL;
    if (child->add_map) {
        FilterMap *m = tl_malloc(sizeof *m);
        TlStatus st;
        if (!m) {
            child->free(child);
            return tl_error_oom(err);
        }
        m->ea = ea;
        m->pred = pred;
        m->schema = schema;
        st = child->add_map(child, filter_map, m, tl_free, schema, err);
        if (st == TL_OK && child->set_late_map && schema->n_fields > 0) {
            bool *need = tl_calloc((size_t)schema->n_fields, sizeof *need);
            if (!need) {
                st = tl_error_oom(err);
            } else {
                tl_expr_mark_cols(ea, pred, need, schema->n_fields);
                st = child->set_late_map(child, filter_late, need, err);
                tl_free(need);
            }
        }
        if (st != TL_OK) {
            child->free(child);
            return st;
        }
        *out = child;
        return TL_OK;
    }
    f = tl_calloc(1, sizeof *f);
    if (!f) {
        child->free(child);
        return tl_error_oom(err);
    }
    f->base.next = filter_next;
    f->base.free = filter_free;
    f->base.origin = filter_origin;
    f->base.schema = schema;
    f->base.stats = child->stats;
    f->base.ctx = child->ctx;
    f->child = child;
    f->map.ea = ea;
    f->map.pred = pred;
    f->map.schema = schema;
    *out = &f->base;
    return TL_OK;
}
