/*
 * place.c -- which row of a batch a row-by-row step failed on, so that an
 * error raised while evaluating a row can name that row (its input line,
 * op_scan.c; or its number in the result of the step that made it).
 *
 * Evaluation works on whole batches and reports only what failed, not
 * where.  Carrying a row index out of every kernel and through every
 * selection would cost on the happy path; instead, once a step has failed,
 * it is run again on prefixes of the batch it failed on (binary search: a
 * few runs of at most the batch's rows) to find the shortest prefix that
 * fails.  Filters and projections decide each row on its own, so a prefix
 * fails exactly when it holds a failing row, and the last row of the
 * shortest failing prefix is the first failing row of the batch.  Its error
 * (the one from that prefix) is the one reported, so which row is named
 * does not depend on how rows were cut into batches.
 *
 * Where that row comes from is asked of the operator that produced it
 * (TlOperator.origin, tl_origin): a scan names the record's file and line,
 * a step that made the row its number in the step's result, and a filter
 * finds which of its input rows became its nth output row the same way,
 * on prefixes (tl_nth_kept_row: the rows kept by a prefix grow with it).
 */
#include "exec.h"

#include <stdio.h>
#include <string.h>

/* See exec.h. */
TlBatch *tl_batch_ref(const TlBatch *b)
{
    TlBatch *r = tl_batch_new(b->schema, b->n_cols, b->n_rows);
    for (int c = 0; r && c < b->n_cols; c++) r->cols[c] = tl_array_retain(b->cols[c]);
    return r;
}

/* run over rows [0, k) of b; its status, the message in err. */
static TlStatus on_prefix(TlPlaceRun run, void *arg, const TlBatch *b, int64_t k,
                          TlError *err)
{
    TlBatch *p = tl_batch_new(b->schema, b->n_cols, k);
    if (!p) return tl_error_oom(err);
    for (int c = 0; c < b->n_cols; c++)
        if (b->cols[c] && !(p->cols[c] = tl_array_slice(b->cols[c], 0, k))) {
            tl_batch_free(p);
            return tl_error_oom(err);
        }
    return run(arg, p, err);
}

/* See exec.h. */
int64_t tl_first_failing_row(TlPlaceRun run, void *arg, const TlBatch *b,
                             TlError *first)
{
    TlError e = {0};
    int64_t lo = 0, hi = b->n_rows; /* fails on [0, hi), not on [0, lo) */
    if (on_prefix(run, arg, b, hi, first) != TL_ERR_DATA) return -1;
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        TlStatus st = on_prefix(run, arg, b, mid, &e);
        if (st == TL_ERR_DATA) {
            hi = mid;
            *first = e;
        } else if (st == TL_OK) {
            lo = mid;
        } else {
            return -1;
        }
    }
    return hi - 1;
}

/* keep over rows [0, k) of b: how many it keeps, or -1. */
static int64_t kept_of_prefix(TlPlaceKeep keep, void *arg, const TlBatch *b, int64_t k)
{
    TlBatch *p = tl_batch_new(b->schema, b->n_cols, k);
    TlError e = {0};
    int64_t kept = 0;
    if (!p) return -1;
    for (int c = 0; c < b->n_cols; c++)
        if (b->cols[c] && !(p->cols[c] = tl_array_slice(b->cols[c], 0, k))) {
            tl_batch_free(p);
            return -1;
        }
    return keep(arg, p, &kept, &e) == TL_OK ? kept : -1;
}

/* See exec.h.  The rows kept by a prefix grow with it, so the shortest
 * prefix that keeps more than nth rows ends with the nth kept row. */
int64_t tl_nth_kept_row(TlPlaceKeep keep, void *arg, const TlBatch *b, int64_t nth)
{
    int64_t lo = 0, hi = b->n_rows; /* [0, hi) keeps more than nth, [0, lo) not */
    int64_t k = kept_of_prefix(keep, arg, b, hi);
    if (k <= nth) return -1;
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if ((k = kept_of_prefix(keep, arg, b, mid)) < 0) return -1;
        if (k > nth) hi = mid;
        else lo = mid;
    }
    return hi - 1;
}

/* See exec.h. */
void tl_origin(TlOperator *src, int64_t row, TlPlaceVal *v, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (src && src->origin) src->origin(src, row, v, buf, cap);
}

/* See exec.h. */
bool tl_same_value(const TlArray *a, int64_t i, const TlArray *b, int64_t j)
{
    bool na, nb;
    if (!a || !b || a->type != b->type) return false;
    na = !tl_array_valid(a, i);
    nb = !tl_array_valid(b, j);
    if (na || nb) return na == nb;
    switch (a->type) {
    case TL_TBOOL: return tl_array_bool(a, i) == tl_array_bool(b, j);
    case TL_TINT64:
    case TL_TTIMESTAMP: case TL_TTIMESTAMPTZ: return tl_array_i64(a)[i] == tl_array_i64(b)[j];
    case TL_TFLOAT64:
        return memcmp(&tl_array_f64(a)[i], &tl_array_f64(b)[j], sizeof(double)) == 0;
    case TL_TDATE: return tl_array_i32(a)[i] == tl_array_i32(b)[j];
    case TL_TSTRING:
        return tl_view_eq(&tl_array_views(a)[i], a->data, &tl_array_views(b)[j], b->data);
    default: return false;
    }
}

/* See exec.h.  The column goes at the end of the message's first line, as
 * the readers' conversion errors put it ("... is not a valid int64 (column
 * "a")"); the expression and its caret follow. */
void tl_place_error(TlError *err, const char *where, const char *col,
                    const TlError *first)
{
    const char *nl = strchr(first->msg, '\n');
    int head = nl ? (int)(nl - first->msg) : (int)strlen(first->msg);
    if (col)
        tl_error(err, TL_ERR_DATA, "%s: %.*s (column %s)%s", where, head, first->msg,
                 tl_quote_name(col).s, first->msg + head);
    else
        tl_error(err, TL_ERR_DATA, "%s: %s", where, first->msg);
}

/* See exec.h. */
void tl_origin_made(const char *what, int64_t row, char *buf, size_t cap)
{
    snprintf(buf, cap, "row %lld of the %s's result", (long long)row + 1, what);
}

/* See exec.h. */
void tl_place_row(TlPlaceRun run, void *arg, const TlBatch *b, TlOperator *src,
                  int64_t before, TlError *err)
{
    TlError first = {0};
    char where[TL_ORIGIN_CAP];
    int64_t row = tl_first_failing_row(run, arg, b, &first);
    int c;
    TlPlaceVal v = {first.col, NULL, row, false};
    if (row < 0) return;
    c = first.col && b->schema ? tl_schema_find(b->schema, first.col) : -1;
    if (c >= 0 && c < b->n_cols) v.a = b->cols[c];
    tl_origin(src, before + row, v.a ? &v : NULL, where, sizeof where);
    if (where[0])
        tl_place_error(err, where, v.placed ? v.col : NULL, &first);
    else
        tl_error(err, TL_ERR_DATA, "row %lld of the step's input: %s",
                 (long long)(before + row + 1), first.msg);
}
