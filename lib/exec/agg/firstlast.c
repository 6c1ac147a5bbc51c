/*
 * firstlast.c -- first and last: the value of a group's first / last row,
 * null included (the one family that does not skip nulls).
 *
 * cnt[g] says the group has a row, valid[g] whether its kept value is
 * non-null; the value itself is kept as min/max keep theirs (iv, f[0],
 * sv), so the results are minmax.c's.  Merging in input order: first takes
 * the partial's value only where the group had no row yet, last always.
 */
#include "agg_fam.h"

/* the value arrays, and whether the group has taken a row yet */
static int fl_arrays(TlAgg *a, void ***arr, size_t *elem, int n)
{
    n = tl_agg_value_arrays(a, arr, elem, n);
    arr[n] = (void **)&a->valid;
    elem[n++] = sizeof *a->valid;
    return n;
}

/* With a filter clause (y: the rows to keep, tl_agg_bind): the kept rows
 * taken out first, then the pass over them. */
static TlStatus fl_update_kept(TlAgg *a, const uint32_t *ids, int64_t n,
                               const TlArray *x, const TlArray *y, TlError *err);

static TlStatus fl_update(TlAgg *a, const uint32_t *ids, int64_t n,
                          const TlArray *x, const TlArray *y, TlError *err)
{
    if (y) return fl_update_kept(a, ids, n, x, y, err);
    bool last = a->fn == &tl_agg_last;
    int64_t *cnt = a->cnt;
    uint8_t *valid = a->valid;
    bool all_null = x->type == TL_TNULL || x->null_count == n;
    if (all_null || a->cls == C_NONE) {
        for (int64_t i = 0; i < n; i++) {
            uint32_t g = ids[i];
            if (last || !cnt[g]) valid[g] = 0;
            cnt[g] = 1;
        }
        return TL_OK;
    }
    const int64_t *iv = NULL;
    const double *fv = NULL;
    const TlView *sv = NULL;
    if (a->cls == C_INT) {
        if (!(iv = tl_agg_as_i64(a, x, n))) return tl_error_oom(err);
    } else if (a->cls == C_FLT) {
        fv = tl_array_f64(x);
    } else {
        sv = tl_array_views(x);
    }
    for (int64_t i = 0; i < n; i++) {
        uint32_t g = ids[i];
        if (!last && cnt[g]) continue;
        cnt[g] = 1;
        bool ok = x->null_count == 0 || tl_array_valid(x, i);
        valid[g] = ok;
        if (!ok) continue;
        if (iv) a->iv[g] = iv[i];
        else if (fv) a->f[0][g] = fv[i];
        else if (!sv_set(&a->sv[g], tl_view_ptr(&sv[i], x->data), sv[i].in.len))
            return tl_error_oom(err);
    }
    return TL_OK;
}

static TlStatus fl_update_kept(TlAgg *a, const uint32_t *ids, int64_t n,
                               const TlArray *x, const TlArray *y, TlError *err)
{
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) k += tl_array_valid(y, i) && tl_array_bool(y, i);
    if (k == 0) return TL_OK;
    if (k == n) return fl_update(a, ids, n, x, NULL, err);
    uint32_t *rows = tl_malloc((size_t)k * sizeof *rows);
    uint32_t *kid = tl_malloc((size_t)k * sizeof *kid);
    TlStatus st = TL_OK;
    if (!rows || !kid) st = tl_error_oom(err);
    for (int64_t i = 0, j = 0; st == TL_OK && i < n; i++)
        if (tl_array_valid(y, i) && tl_array_bool(y, i)) {
            rows[j] = (uint32_t)i;
            kid[j++] = ids[i];
        }
    TlArray *kx = st == TL_OK ? tl_array_take((TlArray *)x, rows, k) : NULL;
    if (st == TL_OK && !kx) st = tl_error_oom(err);
    if (st == TL_OK) st = fl_update(a, kid, k, kx, NULL, err);
    tl_array_release(kx);
    tl_free(rows);
    tl_free(kid);
    return st;
}

static TlStatus fl_merge(TlAgg *a, const TlAgg *p, const uint32_t *src,
                         const uint32_t *map, uint32_t n, TlError *err)
{
    bool last = a->fn == &tl_agg_last;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t g = MSRC(src, i), d = map[i];
        if (!p->cnt[g] || (!last && a->cnt[d])) continue;
        a->cnt[d] = 1;
        a->valid[d] = p->valid[g];
        if (!p->valid[g]) continue;
        if (a->cls == C_INT) a->iv[d] = p->iv[g];
        else if (a->cls == C_FLT) a->f[0][d] = p->f[0][g];
        else if (a->cls == C_STR && !sv_set(&a->sv[d], p->sv[g].p, p->sv[g].len))
            return tl_error_oom(err);
    }
    return TL_OK;
}

const TlAggFns tl_agg_first = {
    .accepts = tl_agg_any_type,
    .init = tl_agg_value_init,
    .arrays = fl_arrays,
    .update = fl_update,
    .merge = fl_merge,
    .merge_some = true,
    .results = tl_agg_kept_results,
};

const TlAggFns tl_agg_last = {
    .accepts = tl_agg_any_type,
    .init = tl_agg_value_init,
    .arrays = fl_arrays,
    .update = fl_update,
    .merge = fl_merge,
    .merge_some = true,
    .results = tl_agg_kept_results,
};
