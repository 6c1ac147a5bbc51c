/*
 * op_scan.c -- the scan operator: reader batches in, plan batches out.
 *
 * A scan reads its inputs one after another (several inputs concatenate).
 * Each input's reader was projected by the builder, so it converts only the
 * columns the plan uses; pos[k] says where output column k sits in that
 * reader's batches (-1: this input has no such column, so it is null here).
 *
 * Types: the plan fixed each column's type before the run.  A reader may
 * still hand a column over as the null type (it saw no value yet); the scan
 * turns it into an all-null array of the plan's type (string for a column
 * that is empty everywhere).  Any other difference means the reader widened
 * a type, which it reports as TL_ERR_RESTART before producing a batch, so it
 * cannot happen here; int64 where float64 is planned is still cast, as a
 * safety net.  When an input's batch already is the output (one input, all
 * columns in place, types equal) it is passed on without copying.
 */
#include "ops.h"

#include "eval.h"

typedef struct ScanIn {
    TlReader *reader;
    int *pos;
    bool identity;
} ScanIn;

typedef struct Scan {
    TlOperator base;
    ScanIn *in;
    int n_in, cur, n_cols;
} Scan;

static TlStatus fix_column(const Scan *s, TlArray *a, TlType want, int k,
                           TlArray **out, TlError *err)
{
    int64_t bad;
    if (a->type == want) {
        *out = tl_array_retain(a);
        return TL_OK;
    }
    if (a->type == TL_TNULL) {
        *out = tl_array_new_null(want, a->length);
        return *out ? TL_OK : tl_error_oom(err);
    }
    if (a->type == TL_TINT64 && want == TL_TFLOAT64)
        return tl_cast_array(a, want, false, out, &bad, err);
    return tl_error(err, TL_ERR_DATA,
                    "internal error: column \"%s\" read as %s, planned as %s",
                    s->base.schema->fields[k].name, tl_type_name(a->type),
                    tl_type_name(want));
}

static void update_stats(Scan *s)
{
    TlExecStats *st = s->base.stats;
    int64_t bytes = 0;
    if (!st) return;
    for (int i = 0; i < s->n_in; i++)
        bytes += tl_reader_stats(s->in[i].reader)->bytes;
    st->bytes_read = bytes;
}

static TlStatus scan_next(TlOperator *op, TlBatch **out, TlError *err)
{
    Scan *s = (Scan *)op;
    *out = NULL;
    while (s->cur < s->n_in) {
        ScanIn *in = &s->in[s->cur];
        TlBatch *b = NULL, *nb;
        TL_TRY(tl_reader_next(in->reader, &b, err));
        if (!b) {
            update_stats(s);
            s->cur++;
            continue;
        }
        if (b->n_rows == 0) {
            tl_batch_free(b);
            continue;
        }
        if (op->stats) {
            op->stats->rows_read += b->n_rows;
            op->stats->batches_read++;
        }
        update_stats(s);
        bool same = in->identity && b->n_cols == s->n_cols;
        for (int k = 0; same && k < s->n_cols; k++)
            same = b->cols[k]->type == op->schema->fields[k].type;
        if (same) {
            b->schema = op->schema;
            *out = b;
            return TL_OK;
        }
        nb = tl_batch_new(op->schema, s->n_cols, b->n_rows);
        if (!nb) {
            tl_batch_free(b);
            return tl_error_oom(err);
        }
        for (int k = 0; k < s->n_cols; k++) {
            TlType want = op->schema->fields[k].type;
            TlStatus st;
            if (in->pos[k] < 0 || in->pos[k] >= b->n_cols) {
                nb->cols[k] = tl_array_new_null(want, b->n_rows);
                st = nb->cols[k] ? TL_OK : tl_error_oom(err);
            } else {
                st = fix_column(s, b->cols[in->pos[k]], want, k, &nb->cols[k], err);
            }
            if (st != TL_OK) {
                tl_batch_free(nb);
                tl_batch_free(b);
                return st;
            }
        }
        tl_batch_free(b);
        *out = nb;
        return TL_OK;
    }
    return TL_OK;
}

static void scan_free(TlOperator *op)
{
    Scan *s = (Scan *)op;
    if (!s) return;
    for (int i = 0; i < s->n_in; i++) tl_free(s->in[i].pos);
    tl_free(s->in);
    tl_free(s);
}

/* See ops.h.  The readers stay the plan's; pos arrays are copied. */
TlStatus tl_op_scan_new(const TlSchema *schema, const TlScanInput *inputs,
                        int n_inputs, TlExecStats *stats, TlOperator **out,
                        TlError *err)
{
    Scan *s = tl_calloc(1, sizeof *s);
    int nc = schema->n_fields;
    *out = NULL;
    if (!s) return tl_error_oom(err);
    s->base.next = scan_next;
    s->base.free = scan_free;
    s->base.schema = schema;
    s->base.stats = stats;
    s->n_cols = nc;
    s->in = tl_calloc((size_t)(n_inputs ? n_inputs : 1), sizeof *s->in);
    if (!s->in) goto oom;
    s->n_in = n_inputs;
    for (int i = 0; i < n_inputs; i++) {
        ScanIn *in = &s->in[i];
        in->reader = inputs[i].reader;
        in->pos = tl_malloc((size_t)(nc ? nc : 1) * sizeof *in->pos);
        if (!in->pos) goto oom;
        in->identity = true;
        for (int k = 0; k < nc; k++) {
            in->pos[k] = inputs[i].pos[k];
            if (in->pos[k] != k) in->identity = false;
        }
    }
    *out = &s->base;
    return TL_OK;
oom:
    scan_free(&s->base);
    return tl_error_oom(err);
}
