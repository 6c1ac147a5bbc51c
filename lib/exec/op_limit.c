/*
 * op_limit.c -- rows `offset + 1` to `offset + limit` (SQL's LIMIT/OFFSET;
 * limit -1: every row after the offset).
 *
 * The limit pulls from its child only while it still needs rows, so a
 * `--head 5` over a huge file reads (and converts) only the first batch,
 * and `--head 0` reads nothing.  Skipped batches are dropped as they come
 * (an offset holds no rows), and the batches that cross either bound are
 * sliced (no copy).  Everything below a limit streams, so stopping here
 * stops the whole pipeline; pipeline breakers below (sort, aggregate) have
 * already consumed their input, and a limit directly over a sort is folded
 * into the sort by the optimizer (top-k, lib/opt/fold_limits.c).
 */
#include "ops.h"

typedef struct Limit {
    TlOperator base;
    TlOperator *child;
    int64_t skip;     /* rows still to skip */
    int64_t left;     /* rows still to hand out; -1: all */
    int64_t offset;   /* the offset, for origin */
} Limit;

/* Rows [off, off + len) of b as a new batch of schema s; b is freed. */
static TlStatus slice_batch(TlBatch *b, const TlSchema *s, int64_t off,
                            int64_t len, TlBatch **out, TlError *err)
{
    TlBatch *nb = tl_batch_new(s, b->n_cols, len);
    for (int c = 0; nb && c < b->n_cols; c++) {
        nb->cols[c] = tl_array_slice(b->cols[c], off, len);
        if (!nb->cols[c]) {
            tl_batch_free(nb);
            nb = NULL;
        }
    }
    tl_batch_free(b);
    *out = nb;
    return nb ? TL_OK : tl_error_oom(err);
}

static TlStatus limit_next(TlOperator *op, TlBatch **out, TlError *err)
{
    Limit *l = (Limit *)op;
    TlBatch *b = NULL;
    int64_t off = 0, len;
    *out = NULL;
    for (;;) {
        if (l->left == 0) return TL_OK;
        TL_TRY(l->child->next(l->child, &b, err));
        if (!b) {
            l->left = 0;
            return TL_OK;
        }
        if (b->n_rows > l->skip) break;
        l->skip -= b->n_rows;
        tl_batch_free(b);
    }
    off = l->skip;
    l->skip = 0;
    len = b->n_rows - off;
    if (l->left >= 0 && len > l->left) len = l->left;
    if (l->left > 0) l->left -= len;
    if (off == 0 && len == b->n_rows) {
        b->schema = op->schema;
        *out = b;
        return TL_OK;
    }
    return slice_batch(b, op->schema, off, len, out, err);
}

/* See exec.h (TlOperator.origin): row i is the child's row offset + i. */
static void limit_origin(TlOperator *op, int64_t row, TlPlaceVal *v, char *buf,
                         size_t cap)
{
    Limit *l = (Limit *)op;
    tl_origin(l->child, row + l->offset, v, buf, cap);
}

static void limit_free(TlOperator *op)
{
    Limit *l = (Limit *)op;
    if (!l) return;
    if (l->child) l->child->free(l->child);
    tl_free(l);
}

/* See ops.h. */
TlStatus tl_op_limit_new(TlOperator *child, int64_t offset, int64_t limit,
                         TlOperator **out, TlError *err)
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
    l->skip = offset;
    l->offset = offset;
    l->left = limit;
    *out = &l->base;
    return TL_OK;
}
