/*
 * op_distinct.c -- keep the first occurrence of each distinct tuple, and
 * (limit-by, the same machinery) the first N rows of each group.
 *
 * Both stream: each child batch goes through a grouper (lib/group) on the
 * chosen columns (all columns when none are named), and the batch leaves
 * with only the selected rows, in input order.
 *
 *   distinct   a row is selected when it starts a new group.  New groups
 *              get ids in row order, starting at the group count before the
 *              batch, so the first row of a new group is exactly the row
 *              whose id equals the next expected id; no per-group state.
 *   limit-by   a per-group counter (grown with the groups): a row is
 *              selected while its group has had fewer than N rows.
 *
 * A batch whose rows are all selected passes on untouched; one with none
 * is dropped; otherwise the columns are gathered with tl_array_take.
 */
#include "../group/group.h"
#include "distinct.h"

typedef struct DistinctOp {
    TlOperator base;
    TlOperator *child;
    int *cols;
    int n_cols;
    int64_t limit;          /* -1: distinct; >= 0: limit-by */
    TlGrouper *grouper;
    uint32_t *ids, *sel;
    int64_t cap;
    int64_t *counts;        /* limit-by: rows emitted per group */
    uint32_t counts_cap;
    const TlArray **keys;
    /* rows taken and handed out, and before the batch handed out last,
     * whose selection sel still holds unless it kept every row */
    int64_t rows_in, rows_out, last_in, last_out;
    bool last_all;
} DistinctOp;

static TlStatus ensure_counts(DistinctOp *d, uint32_t n_groups, TlError *err)
{
    if (n_groups <= d->counts_cap) return TL_OK;
    uint64_t want = (uint64_t)d->counts_cap * 2;
    if (want < n_groups) want = n_groups;
    if (want < 1024) want = 1024;
    if (want > UINT32_MAX) want = UINT32_MAX;
    int64_t *c = tl_realloc(d->counts, (size_t)want * sizeof *c);
    if (!c) return tl_error_oom(err);
    memset(c + d->counts_cap, 0, (size_t)(want - d->counts_cap) * sizeof *c);
    d->counts = c;
    d->counts_cap = (uint32_t)want;
    return TL_OK;
}

/* Select rows of b; *m is the number selected (into d->sel). */
static TlStatus select_rows(DistinctOp *d, const TlBatch *b, int64_t *m,
                            TlError *err)
{
    int64_t n = b->n_rows;
    if (d->cap < n) {
        uint32_t *ids = tl_realloc(d->ids, (size_t)n * sizeof *ids);
        if (!ids) return tl_error_oom(err);
        d->ids = ids;
        uint32_t *sel = tl_realloc(d->sel, (size_t)n * sizeof *sel);
        if (!sel) return tl_error_oom(err);
        d->sel = sel;
        d->cap = n;
    }
    for (int k = 0; k < d->n_cols; k++) d->keys[k] = b->cols[d->cols[k]];
    uint32_t next = tl_grouper_count(d->grouper);
    TL_TRY(tl_grouper_map(d->grouper, d->keys, n, d->ids, err));
    int64_t k = 0;
    if (d->limit < 0) {
        for (int64_t i = 0; i < n; i++)
            if (d->ids[i] == next) {
                next++;
                d->sel[k++] = (uint32_t)i;
            }
    } else {
        TL_TRY(ensure_counts(d, tl_grouper_count(d->grouper), err));
        for (int64_t i = 0; i < n; i++)
            if (d->counts[d->ids[i]] < d->limit) {
                d->counts[d->ids[i]]++;
                d->sel[k++] = (uint32_t)i;
            }
    }
    *m = k;
    return TL_OK;
}

static TlStatus distinct_next(TlOperator *op, TlBatch **out, TlError *err)
{
    DistinctOp *d = (DistinctOp *)op;
    *out = NULL;
    if (d->limit == 0) return TL_OK;
    for (;;) {
        TlBatch *b = NULL;
        int64_t m = 0;
        TL_TRY(d->child->next(d->child, &b, err));
        if (!b) return TL_OK;
        if (b->n_rows == 0) {
            tl_batch_free(b);
            continue;
        }
        TlStatus st = select_rows(d, b, &m, err);
        d->rows_in += b->n_rows;
        if (st == TL_OK && m > 0) {
            d->last_in = d->rows_in - b->n_rows;
            d->last_out = d->rows_out;
            d->last_all = m == b->n_rows;
            d->rows_out += m;
        }
        if (st != TL_OK || m == 0) {
            tl_batch_free(b);
            if (st != TL_OK) return st;
            continue;
        }
        if (m == b->n_rows) {
            b->schema = op->schema;
            *out = b;
            return TL_OK;
        }
        TlBatch *nb = tl_batch_new(op->schema, b->n_cols, m);
        for (int c = 0; nb && c < b->n_cols; c++) {
            nb->cols[c] = tl_array_take(b->cols[c], d->sel, m);
            if (!nb->cols[c]) {
                tl_batch_free(nb);
                nb = NULL;
            }
        }
        tl_batch_free(b);
        if (!nb) return tl_error_oom(err);
        *out = nb;
        return TL_OK;
    }
}

/* See exec.h (TlOperator.origin): the rows of the batch handed out last
 * are known (sel), earlier ones not. */
static void distinct_origin(TlOperator *op, int64_t row, TlPlaceVal *v, char *buf,
                            size_t cap)
{
    DistinctOp *d = (DistinctOp *)op;
    int64_t i = row - d->last_out;
    buf[0] = '\0';
    if (row < d->last_out || row >= d->rows_out) return;
    tl_origin(d->child, d->last_in + (d->last_all ? i : d->sel[i]), v, buf, cap);
}

static void distinct_free(TlOperator *op)
{
    DistinctOp *d = (DistinctOp *)op;
    if (!d) return;
    if (d->child) d->child->free(d->child);
    tl_grouper_free(d->grouper);
    tl_free(d->cols);
    tl_free(d->ids);
    tl_free(d->sel);
    tl_free(d->counts);
    tl_free(d->keys);
    tl_free(d);
}

/* Shared constructor: limit < 0 is distinct. */
static TlStatus make(TlOperator *child, int64_t limit, const int *cols,
                     int n_cols, TlOperator **out, TlError *err)
{
    *out = NULL;
    const TlSchema *sc = child->schema;
    DistinctOp *d = tl_calloc(1, sizeof *d);
    if (!d) {
        child->free(child);
        return tl_error_oom(err);
    }
    d->base.next = distinct_next;
    d->base.free = distinct_free;
    d->base.origin = distinct_origin;
    d->base.schema = sc;
    d->base.stats = child->stats;
    d->base.ctx = child->ctx;
    d->child = child;
    d->limit = limit;
    d->n_cols = n_cols > 0 ? n_cols : sc->n_fields;
    d->cols = tl_malloc(((size_t)d->n_cols + 1) * sizeof *d->cols);
    d->keys = tl_calloc((size_t)d->n_cols + 1, sizeof *d->keys);
    TlType *types = tl_malloc(((size_t)d->n_cols + 1) * sizeof *types);
    TlStatus st = TL_OK;
    if (!d->cols || !d->keys || !types) {
        st = tl_error_oom(err);
        goto fail;
    }
    for (int k = 0; k < d->n_cols; k++) {
        int c = n_cols > 0 ? cols[k] : k;
        if (c < 0 || c >= sc->n_fields) {
            st = tl_error(err, TL_ERR_USAGE, "internal: column %d out of range", c);
            goto fail;
        }
        d->cols[k] = c;
        types[k] = sc->fields[c].type;
    }
    st = tl_grouper_new(d->base.ctx, types, d->n_cols, false, &d->grouper, err);
    if (st != TL_OK) goto fail;
    tl_free(types);
    *out = &d->base;
    return TL_OK;
fail:
    tl_free(types);
    distinct_free(&d->base);
    return st;
}

/* Distinct on columns cols (see exec.h).  Takes ownership of child, also
 * on failure. */
TlStatus tl_op_distinct_new(TlOperator *child, const int *cols, int n_cols,
                            TlOperator **out, TlError *err)
{
    return make(child, -1, cols, n_cols, out, err);
}

/* The first `limit` rows of each group of columns by (see distinct.h). */
TlStatus tl_op_first_rows_new(TlOperator *child, int64_t limit, const int *by,
                              int n_by, TlOperator **out, TlError *err)
{
    return make(child, limit < 0 ? 0 : limit, by, n_by, out, err);
}
