/*
 * batch.c -- a batch: equal-length columns, the unit every operator and
 * kernel works on.
 *
 * A batch owns one reference to each of its columns (NULL slots are
 * allowed while it is being filled) and borrows its schema from the operator
 * that produced it.  Batches hold at most tl_batch_rows() rows; the test
 * switch TALLY_BATCH_ROWS shrinks that to stress every batch boundary.
 */
#include "core.h"
#include "ctx.h"

#include <stdlib.h>

/* A new batch with n_cols NULL columns and n_rows rows; schema borrowed.
 * NULL on OOM. */
TlBatch *tl_batch_new(const TlSchema *schema, int n_cols, int64_t n_rows)
{
    TlBatch *b = tl_malloc(sizeof(TlBatch));
    if (!b) return NULL;
    b->schema = schema;
    b->n_rows = n_rows;
    b->n_cols = n_cols > 0 ? n_cols : 0;
    b->cols = NULL;
    if (b->n_cols > 0) {
        b->cols = tl_calloc((size_t)b->n_cols, sizeof(TlArray *));
        if (!b->cols) {
            tl_free(b);
            return NULL;
        }
    }
    return b;
}

/* Release the batch's columns and the batch.  NULL-safe. */
void tl_batch_free(TlBatch *b)
{
    int i;
    if (!b) return;
    for (i = 0; i < b->n_cols; i++) tl_array_release(b->cols[i]);
    tl_free(b->cols);
    tl_free(b);
}

/* Maximum rows per batch outside a run: the environment's
 * (tl_ctx_batch_rows with no context, ctx.h).  Read at every call (once per
 * reader, operator or output batch, never per row); code inside a run asks
 * its context instead. */
int64_t tl_batch_rows(void)
{
    return tl_ctx_batch_rows(NULL);
}
