/*
 * minmax.c -- min, max, and any/all (the max and min of bools).
 *
 * Integer-class values (date, timestamp, bool widened) in iv, floats in
 * f[0] (NaN greatest, -0.0 equal to 0.0: ties keep the earlier value),
 * strings byte-wise in sv.  cnt[g] is the "has a value" flag.
 */
#include "agg_fam.h"

static TlStatus mm_update(TlAgg *a, const uint32_t *ids, int64_t n,
                          const TlArray *x, bool is_min, TlError *err)
{
    int64_t *cnt = a->cnt;
    if (a->cls == C_INT) {
        const int64_t *v = tl_agg_as_i64(a, x, n);
        if (!v) return tl_error_oom(err);
        int64_t *iv = a->iv;
        if (is_min)
            FOR_VALID(x, n, {
                uint32_t g = ids[i];
                if (!cnt[g] || v[i] < iv[g]) iv[g] = v[i];
                cnt[g] = 1;
            });
        else
            FOR_VALID(x, n, {
                uint32_t g = ids[i];
                if (!cnt[g] || v[i] > iv[g]) iv[g] = v[i];
                cnt[g] = 1;
            });
    } else if (a->cls == C_FLT) {
        const double *v = tl_array_f64(x);
        double *fv = a->f[0];
        if (is_min)
            FOR_VALID(x, n, {
                uint32_t g = ids[i];
                if (!cnt[g] || f_less(v[i], fv[g])) fv[g] = v[i];
                cnt[g] = 1;
            });
        else
            FOR_VALID(x, n, {
                uint32_t g = ids[i];
                if (!cnt[g] || f_less(fv[g], v[i])) fv[g] = v[i];
                cnt[g] = 1;
            });
    } else if (a->cls == C_STR) {
        const TlView *v = tl_array_views(x);
        int sign = is_min ? -1 : 1;
        FOR_VALID(x, n, {
            uint32_t g = ids[i];
            const uint8_t *p = tl_view_ptr(&v[i], x->data);
            uint32_t len = v[i].in.len;
            if (!cnt[g] || sv_cmp(p, len, &a->sv[g]) * sign > 0) {
                if (!sv_set(&a->sv[g], p, len)) return tl_error_oom(err);
            }
            cnt[g] = 1;
        });
    }
    return TL_OK;
}

static TlStatus min_update(TlAgg *a, const uint32_t *ids, int64_t n,
                           const TlArray *x, const TlArray *y, TlError *err)
{
    (void)y;
    return mm_update(a, ids, n, x, true, err);
}

static TlStatus max_update(TlAgg *a, const uint32_t *ids, int64_t n,
                           const TlArray *x, const TlArray *y, TlError *err)
{
    (void)y;
    return mm_update(a, ids, n, x, false, err);
}

static TlStatus mm_merge(TlAgg *a, const TlAgg *p, const uint32_t *src,
                         const uint32_t *map, uint32_t n, TlError *err)
{
    bool is_min = a->fn == &tl_agg_min;
    int64_t *cnt = a->cnt;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t g = MSRC(src, i), d = map[i];
        if (!p->cnt[g]) continue;
        if (a->cls == C_INT) {
            int64_t v = p->iv[g];
            if (!cnt[d] || (is_min ? v < a->iv[d] : v > a->iv[d])) a->iv[d] = v;
        } else if (a->cls == C_FLT) {
            double v = p->f[0][g];
            if (!cnt[d] || (is_min ? f_less(v, a->f[0][d]) : f_less(a->f[0][d], v)))
                a->f[0][d] = v;
        } else if (a->cls == C_STR) {
            const StrVal *s = &p->sv[g];
            if (!cnt[d] || sv_cmp(sv_ptr(s), s->len, &a->sv[d]) * (is_min ? -1 : 1) > 0) {
                if (!sv_set(&a->sv[d], s->p, s->len)) return tl_error_oom(err);
            }
        }
        cnt[d] = 1;
    }
    return TL_OK;
}

/* The kept value of each group, null for a group without one (also used
 * by first/last, whose kept value may itself be null: valid). */
bool tl_agg_kept_results(TlAgg *a, TlBuilder *b, uint32_t first, uint32_t n)
{
    for (uint32_t g = first; g < first + n; g++) {
        bool ok;
        if (!a->cnt[g] || (a->valid && !a->valid[g])) ok = tl_builder_append_null(b);
        else if (a->cls == C_INT) ok = tl_agg_put_i64(b, a->iv[g]);
        else if (a->cls == C_FLT) ok = tl_agg_put_f64(b, a->f[0][g]);
        else if (a->cls == C_STR && b->type == TL_TSTRING)
            ok = tl_builder_append_str(b, sv_ptr(&a->sv[g]), a->sv[g].len);
        else ok = tl_builder_append_null(b);
        if (!ok) return false;
    }
    return true;
}

const TlAggFns tl_agg_min = {
    .accepts = tl_agg_any_type,
    .init = tl_agg_value_init,
    .arrays = tl_agg_value_arrays,
    .update = min_update,
    .merge = mm_merge,
    .merge_some = true,
    .skips_nulls = true,
    .results = tl_agg_kept_results,
};

const TlAggFns tl_agg_max = {
    .accepts = tl_agg_any_type,
    .init = tl_agg_value_init,
    .arrays = tl_agg_value_arrays,
    .update = max_update,
    .merge = mm_merge,
    .merge_some = true,
    .skips_nulls = true,
    .results = tl_agg_kept_results,
};

/* ------------------------------------------------------------- any, all */

static bool bool_accepts(TlType x, TlType y)
{
    (void)y;
    return x == TL_TBOOL || x == TL_TNULL;
}

static int bool_arrays(TlAgg *a, void ***arr, size_t *elem, int n)
{
    if (a->cls == C_INT) {
        arr[n] = (void **)&a->iv;
        elem[n++] = sizeof *a->iv;
    }
    return n;
}

static TlStatus bool_update(TlAgg *a, const uint32_t *ids, int64_t n,
                            const TlArray *x, const TlArray *y, TlError *err)
{
    (void)y;
    (void)err;
    int64_t *cnt = a->cnt, *iv = a->iv;
    bool any = a->fn == &tl_agg_any;
    FOR_VALID(x, n, {
        uint32_t g = ids[i];
        int64_t b = tl_array_bool(x, i);
        if (!cnt[g]) iv[g] = b;
        else iv[g] = any ? (iv[g] | b) : (iv[g] & b);
        cnt[g]++;
    });
    return TL_OK;
}

static TlStatus bool_merge(TlAgg *a, const TlAgg *p, const uint32_t *src,
                           const uint32_t *map, uint32_t n, TlError *err)
{
    (void)err;
    bool any = a->fn == &tl_agg_any;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t g = MSRC(src, i), d = map[i];
        if (!p->cnt[g]) continue;
        int64_t b = p->iv[g];
        if (!a->cnt[d]) a->iv[d] = b;
        else a->iv[d] = any ? (a->iv[d] | b) : (a->iv[d] & b);
        a->cnt[d] += p->cnt[g];
    }
    return TL_OK;
}

static bool bool_results(TlAgg *a, TlBuilder *b, uint32_t first, uint32_t n)
{
    for (uint32_t g = first; g < first + n; g++)
        if (!(a->cnt[g] ? tl_agg_put_i64(b, a->iv[g]) : tl_builder_append_null(b)))
            return false;
    return true;
}

const TlAggFns tl_agg_any = {
    .accepts = bool_accepts,
    .arrays = bool_arrays,
    .update = bool_update,
    .merge = bool_merge,
    .merge_some = true,
    .skips_nulls = true,
    .results = bool_results,
};

const TlAggFns tl_agg_all = {
    .accepts = bool_accepts,
    .arrays = bool_arrays,
    .update = bool_update,
    .merge = bool_merge,
    .merge_some = true,
    .skips_nulls = true,
    .results = bool_results,
};
