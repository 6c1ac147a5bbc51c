/*
 * common.c -- what the aggregate families share (agg_fam.h): value
 * classes, argument arrays widened once per batch into scratch, the
 * typed appends of results, the merge of exact sums.
 *
 * Date and bool arguments are widened to int64 (and integers converted to
 * double for the float statistics) in a per-batch scratch array first, so
 * a family has one loop per value class, not per type.
 */
#include "agg_fam.h"

ValClass tl_agg_class(TlType t)
{
    switch (t) {
    case TL_TINT64: case TL_TTIMESTAMP: case TL_TTIMESTAMPTZ: case TL_TDATE: case TL_TBOOL: return C_INT;
    case TL_TFLOAT64: return C_FLT;
    case TL_TSTRING: return C_STR;
    default: return C_NONE;
    }
}

bool tl_agg_numeric(TlType t)
{
    return t == TL_TINT64 || t == TL_TFLOAT64 || t == TL_TNULL;
}

bool tl_agg_any_type(TlType x, TlType y)
{
    (void)x;
    (void)y;
    return true;
}

bool tl_agg_numbers(TlType x, TlType y)
{
    (void)y;
    return tl_agg_numeric(x);
}

bool tl_agg_scratch(void **p, int64_t *cap, size_t elem, int64_t n)
{
    if (*cap >= n) return true;
    void *q = tl_realloc(*p, (size_t)(n ? n : 1) * elem);
    if (!q) return false;
    *p = q;
    *cap = n;
    return true;
}

const int64_t *tl_agg_as_i64(TlAgg *a, const TlArray *x, int64_t n)
{
    if (x->type == TL_TINT64 || x->type == TL_TTIMESTAMP || x->type == TL_TTIMESTAMPTZ) return tl_array_i64(x);
    if (!tl_agg_scratch((void **)&a->ix, &a->ix_cap, sizeof *a->ix, n)) return NULL;
    if (x->type == TL_TDATE) {
        const int32_t *d = tl_array_i32(x);
        for (int64_t i = 0; i < n; i++) a->ix[i] = d[i];
    } else {
        for (int64_t i = 0; i < n; i++) a->ix[i] = tl_array_bool(x, i);
    }
    return a->ix;
}

const double *tl_agg_as_f64(double **buf, int64_t *cap, const TlArray *x,
                            int64_t n)
{
    if (x->type == TL_TFLOAT64) return tl_array_f64(x);
    if (!tl_agg_scratch((void **)buf, cap, sizeof **buf, n)) return NULL;
    double *o = *buf;
    if (x->type == TL_TINT64 || x->type == TL_TTIMESTAMP || x->type == TL_TTIMESTAMPTZ) {
        const int64_t *v = tl_array_i64(x);
        for (int64_t i = 0; i < n; i++) o[i] = (double)v[i];
    } else if (x->type == TL_TDATE) {
        const int32_t *v = tl_array_i32(x);
        for (int64_t i = 0; i < n; i++) o[i] = v[i];
    } else {
        for (int64_t i = 0; i < n; i++) o[i] = tl_array_bool(x, i);
    }
    return o;
}

bool tl_agg_put_i64(TlBuilder *b, int64_t v)
{
    switch (b->type) {
    case TL_TINT64: case TL_TTIMESTAMP: case TL_TTIMESTAMPTZ: return tl_builder_append_i64(b, v);
    case TL_TDATE: return tl_builder_append_i32(b, (int32_t)v);
    case TL_TBOOL: return tl_builder_append_bool(b, v != 0);
    case TL_TFLOAT64: return tl_builder_append_f64(b, (double)v);
    default: return tl_builder_append_null(b);
    }
}

bool tl_agg_put_f64(TlBuilder *b, double v)
{
    switch (b->type) {
    case TL_TFLOAT64: return tl_builder_append_f64(b, v);
    case TL_TINT64: case TL_TTIMESTAMP: case TL_TTIMESTAMPTZ: return tl_builder_append_i64(b, (int64_t)v);
    default: return tl_builder_append_null(b);
    }
}

bool tl_agg_xs_merge(TlAgg *a, const TlAgg *p, uint32_t d, uint32_t g)
{
    for (int k = 0; k < a->n_xs; k++)
        if (!tl_x_merge(&a->xs[k], d, &p->xs[k], g)) return false;
    return true;
}

int tl_agg_xs_arrays(TlAgg *a, void ***arr, size_t *elem, int n)
{
    for (int k = 0; k < a->n_xs; k++) {
        arr[n] = (void **)&a->xs[k].acc;
        elem[n++] = sizeof *a->xs[k].acc;
        arr[n] = (void **)&a->xs[k].tag;
        elem[n++] = sizeof *a->xs[k].tag;
    }
    return n;
}

TlStatus tl_agg_xs_merge_fn(TlAgg *a, const TlAgg *p, const uint32_t *src,
                            const uint32_t *map, uint32_t n, TlError *err)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t g = MSRC(src, i), d = map[i];
        if (!p->cnt[g]) continue;
        if (!tl_agg_xs_merge(a, p, d, g)) return tl_error_oom(err);
        a->cnt[d] += p->cnt[g];
    }
    return TL_OK;
}

/* See agg_fam.h. */
TlStatus tl_agg_value_init(TlAgg *a, TlError *err)
{
    (void)err;
    if (a->cls == C_FLT) a->n_f = 1;
    return TL_OK;
}

/* See agg_fam.h. */
int tl_agg_value_arrays(TlAgg *a, void ***arr, size_t *elem, int n)
{
    if (a->cls == C_INT) {
        arr[n] = (void **)&a->iv;
        elem[n++] = sizeof *a->iv;
    }
    if (a->n_f) {
        arr[n] = (void **)&a->f[0];
        elem[n++] = sizeof *a->f[0];
    }
    if (a->cls == C_STR) {
        arr[n] = (void **)&a->sv;
        elem[n++] = sizeof *a->sv;
    }
    return n;
}
