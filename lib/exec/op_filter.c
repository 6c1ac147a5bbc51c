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
 */
#include "ops.h"

#include "eval.h"

typedef struct Filter {
    TlOperator base;
    TlOperator *child;
    const TlExprArena *ea;
    TlExprId pred;
} Filter;

static TlStatus filter_next(TlOperator *op, TlBatch **out, TlError *err)
{
    Filter *f = (Filter *)op;
    *out = NULL;
    for (;;) {
        TlBatch *b = NULL, *nb;
        uint32_t *sel = NULL;
        int64_t n_sel = 0;
        bool all = false;
        TlStatus st;
        TL_TRY(f->child->next(f->child, &b, err));
        if (!b) return TL_OK;
        st = tl_eval_filter(f->ea, f->pred, b, &sel, &n_sel, &all, err);
        if (st != TL_OK) {
            tl_batch_free(b);
            return st;
        }
        if (all) {
            tl_free(sel);
            b->schema = op->schema;
            *out = b;
            return TL_OK;
        }
        if (n_sel == 0) {
            tl_free(sel);
            tl_batch_free(b);
            continue;
        }
        nb = tl_batch_new(op->schema, b->n_cols, n_sel);
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
}

static void filter_free(TlOperator *op)
{
    Filter *f = (Filter *)op;
    if (!f) return;
    if (f->child) f->child->free(f->child);
    tl_free(f);
}

/* See ops.h. */
TlStatus tl_op_filter_new(TlOperator *child, const TlExprArena *ea,
                          TlExprId pred, const TlSchema *schema,
                          TlOperator **out, TlError *err)
{
    Filter *f = tl_calloc(1, sizeof *f);
    *out = NULL;
    if (!f) {
        child->free(child);
        return tl_error_oom(err);
    }
    f->base.next = filter_next;
    f->base.free = filter_free;
    f->base.schema = schema;
    f->base.stats = child->stats;
    f->child = child;
    f->ea = ea;
    f->pred = pred;
    *out = &f->base;
    return TL_OK;
}
