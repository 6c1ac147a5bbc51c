/*
 * tl_source.h -- a test operator that hands out prepared batches.
 *
 * source(schema, cols, n, per) cuts the n-row columns into batches of `per`
 * rows (zero-copy slices) and returns an operator whose next() yields them in
 * order; it counts into g_stats.  Used by the operator tests (agg, sort).
 */
#ifndef TL_SOURCE_H
#define TL_SOURCE_H

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

#endif
