/*
 * argminmax.c -- arg_max(x, y) and arg_min(x, y) (max_by, min_by): the
 * value of x in the row where y is largest / smallest.
 *
 * Rows where x or y is null are skipped (DuckDB's arg_max); among rows
 * with equal y the first in input order wins: a row replaces the kept one
 * only when its y is strictly better, and a partial, whose rows come
 * after, only when its best y is strictly better, so the answer is the
 * same for any --threads.  y compares as min and max do (NaN largest,
 * strings by bytes).  x is kept as min/max keep theirs (iv, f[0], sv);
 * y in this family's own arrays.
 */
#include "agg_fam.h"

typedef struct ArgState {
    ValClass ycls;
    int64_t *yi;       /* y's kept value by class */
    double *yf;
    StrVal *ys;
    int64_t *scratch;  /* y widened to int64 (x has a->ix) */
    int64_t scratch_cap;
} ArgState;

static TlStatus arg_init(TlAgg *a, TlError *err)
{
    ArgState *s = tl_calloc(1, sizeof *s);
    if (!s) return tl_error_oom(err);
    s->ycls = tl_agg_class(a->s.y_type);
    a->fam = s;
    if (a->cls == C_FLT) a->n_f = 1;
    return TL_OK;
}

static void arg_free(TlAgg *a)
{
    ArgState *s = a->fam;
    if (!s) return;
    if (s->ys) {
        for (uint32_t g = 0; g < a->cap; g++) tl_free(s->ys[g].p);
        tl_free_big(s->ys);
    }
    tl_free_big(s->yi);
    tl_free_big(s->yf);
    tl_free(s->scratch);
    tl_free(s);
}

static int arg_arrays(TlAgg *a, void ***arr, size_t *elem, int n)
{
    ArgState *s = a->fam;
#define ARR(p) (arr[n] = (void **)&(p), elem[n++] = sizeof *(p))
    if (a->cls == C_INT) ARR(a->iv);
    if (a->n_f) ARR(a->f[0]);
    if (a->cls == C_STR) ARR(a->sv);
    if (s->ycls == C_INT) ARR(s->yi);
    if (s->ycls == C_FLT) ARR(s->yf);
    if (s->ycls == C_STR) ARR(s->ys);
#undef ARR
    return n;
}

/* y widened to int64 into the family's own scratch. */
static const int64_t *y_i64(ArgState *s, const TlArray *y, int64_t n)
{
    if (y->type == TL_TINT64 || y->type == TL_TTIMESTAMP || y->type == TL_TTIMESTAMPTZ) return tl_array_i64(y);
    if (!tl_agg_scratch((void **)&s->scratch, &s->scratch_cap, sizeof *s->scratch, n))
        return NULL;
    for (int64_t i = 0; i < n; i++)
        s->scratch[i] = y->type == TL_TDATE ? tl_array_i32(y)[i] : tl_array_bool(y, i);
    return s->scratch;
}

/* Group d takes the x value of row i of x (or of p's group g: px). */
static bool keep_x(TlAgg *a, uint32_t d, const TlArray *x, int64_t i,
                   const int64_t *xi)
{
    if (a->cls == C_INT) a->iv[d] = xi[i];
    else if (a->cls == C_FLT) a->f[0][d] = tl_array_f64(x)[i];
    else if (a->cls == C_STR) {
        const TlView *v = tl_array_views(x);
        return sv_set(&a->sv[d], tl_view_ptr(&v[i], x->data), v[i].in.len);
    }
    return true;
}

static TlStatus arg_update(TlAgg *a, const uint32_t *ids, int64_t n,
                           const TlArray *x, const TlArray *y, TlError *err)
{
    ArgState *s = a->fam;
    if (y->type == TL_TNULL || y->null_count == n || s->ycls == C_NONE) return TL_OK;
    bool is_max = a->fn == &tl_agg_arg_max;
    bool nulls = x->null_count > 0 || y->null_count > 0;
    const int64_t *xi = a->cls == C_INT ? tl_agg_as_i64(a, x, n) : NULL;
    const int64_t *yi = s->ycls == C_INT ? y_i64(s, y, n) : NULL;
    if ((a->cls == C_INT && !xi) || (s->ycls == C_INT && !yi)) return tl_error_oom(err);
    const double *yf = s->ycls == C_FLT ? tl_array_f64(y) : NULL;
    const TlView *yv = s->ycls == C_STR ? tl_array_views(y) : NULL;
    int64_t *cnt = a->cnt;
    for (int64_t i = 0; i < n; i++) {
        if (nulls && !(tl_array_valid(x, i) && tl_array_valid(y, i))) continue;
        uint32_t g = ids[i];
        bool better;
        if (yi) {
            better = !cnt[g] || (is_max ? yi[i] > s->yi[g] : yi[i] < s->yi[g]);
            if (better) s->yi[g] = yi[i];
        } else if (yf) {
            better = !cnt[g] || (is_max ? f_less(s->yf[g], yf[i]) : f_less(yf[i], s->yf[g]));
            if (better) s->yf[g] = yf[i];
        } else {
            const uint8_t *p = tl_view_ptr(&yv[i], y->data);
            uint32_t len = yv[i].in.len;
            better = !cnt[g] || sv_cmp(p, len, &s->ys[g]) * (is_max ? 1 : -1) > 0;
            if (better && !sv_set(&s->ys[g], p, len)) return tl_error_oom(err);
        }
        if (!better) continue;
        cnt[g] = 1;
        if (!keep_x(a, g, x, i, xi)) return tl_error_oom(err);
    }
    return TL_OK;
}

static TlStatus arg_merge(TlAgg *a, const TlAgg *p, const uint32_t *src,
                          const uint32_t *map, uint32_t n, TlError *err)
{
    ArgState *s = a->fam;
    const ArgState *ps = p->fam;
    bool is_max = a->fn == &tl_agg_arg_max;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t g = MSRC(src, i), d = map[i];
        if (!p->cnt[g]) continue;
        bool better;
        if (s->ycls == C_INT) {
            better = !a->cnt[d] || (is_max ? ps->yi[g] > s->yi[d] : ps->yi[g] < s->yi[d]);
            if (better) s->yi[d] = ps->yi[g];
        } else if (s->ycls == C_FLT) {
            better = !a->cnt[d] || (is_max ? f_less(s->yf[d], ps->yf[g])
                                           : f_less(ps->yf[g], s->yf[d]));
            if (better) s->yf[d] = ps->yf[g];
        } else {
            const StrVal *v = &ps->ys[g];
            better = !a->cnt[d] || sv_cmp(sv_ptr(v), v->len, &s->ys[d]) * (is_max ? 1 : -1) > 0;
            if (better && !sv_set(&s->ys[d], v->p, v->len)) return tl_error_oom(err);
        }
        if (!better) continue;
        a->cnt[d] = 1;
        if (a->cls == C_INT) a->iv[d] = p->iv[g];
        else if (a->cls == C_FLT) a->f[0][d] = p->f[0][g];
        else if (a->cls == C_STR && !sv_set(&a->sv[d], p->sv[g].p, p->sv[g].len))
            return tl_error_oom(err);
    }
    return TL_OK;
}

const TlAggFns tl_agg_arg_max = {
    .accepts = tl_agg_any_type,
    .init = arg_init,
    .arrays = arg_arrays,
    .update = arg_update,
    .merge = arg_merge,
    .merge_some = true,
    .skips_nulls = true,
    .results = tl_agg_kept_results,
    .free = arg_free,
};

const TlAggFns tl_agg_arg_min = {
    .accepts = tl_agg_any_type,
    .init = arg_init,
    .arrays = arg_arrays,
    .update = arg_update,
    .merge = arg_merge,
    .merge_some = true,
    .skips_nulls = true,
    .results = tl_agg_kept_results,
    .free = arg_free,
};
