/*
 * op_limit.c -- the first N rows.
 *
 * The limit pulls from its child only while it still needs rows, so a
 * `--head 5` over a huge file reads (and converts) only the first batch,
 * and `--head 0` reads nothing.  The batch that crosses the limit is sliced
 * (no copy).  Everything below a limit streams, so stopping here stops the
 * whole pipeline; pipeline breakers below (sort, aggregate) have already
 * consumed their input, and a limit directly over a sort is folded into the
 * sort by the optimizer (top-k).
 */
#include "ops.h"

typedef struct Limit {
    TlOperator base;
    TlOperator *child;
    int64_t left;
} Limit;

static TlStatus limit_next(TlOperator *op, TlBatch **out, TlError *err)
{
    Limit *l = (Limit *)op;
    TlBatch *b = NULL, *nb;
    *out = NULL;
    if (l->left <= 0) return TL_OK;
    TL_TRY(l->child->next(l->child, &b, err));
    if (!b) {
        l->left = 0;
        return TL_OK;
    }
    if (b->n_rows <= l->left) {
        l->left -= b->n_rows;
        b->schema = op->schema;
        *out = b;
        return TL_OK;
    }
    nb = tl_batch_new(op->schema, b->n_cols, l->left);
    for (int c = 0; nb && c < b->n_cols; c++) {
        nb->cols[c] = tl_array_slice(b->cols[c], 0, l->left);
        if (!nb->cols[c]) {
            tl_batch_free(nb);
            nb = NULL;
        }
    }
    tl_batch_free(b);
    if (!nb) return tl_error_oom(err);
    l->left = 0;
    *out = nb;
    return TL_OK;
}

/* See exec.h (TlOperator.origin): row i is the child's row i. */
static void limit_origin(TlOperator *op, int64_t row, TlPlaceVal *v, char *buf,
                         size_t cap)
{
    tl_origin(((Limit *)op)->child, row, v, buf, cap);
}

static void limit_free(TlOperator *op)
{
    Limit *l = (Limit *)op;
    if (!l) return;
    if (l->child) l->child->free(l->child);
    tl_free(l);
}

/* See ops.h. */
TlStatus tl_op_limit_new(TlOperator *child, int64_t limit, TlOperator **out,
                         TlError *err)
{
    Limit *l = tl_calloc(1, sizeof *l);
    *out = NULL;
    if (!l) {
        child->free(child);
        return tl_error_oom(err);
    }
    l->base.next = limit_next;
    l->base.free = limit_free;
    l->base.origin = limit_origin;
    l->base.schema = child->schema;
    l->base.stats = child->stats;
    l->base.ctx = child->ctx;
    l->child = child;
    l->left = limit;
    *out = &l->base;
    return TL_OK;
}
