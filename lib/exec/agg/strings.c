/*
 * strings.c -- string_agg: a group's non-null values joined by the
 * separator (a literal, "," by default), in input order.  Merging appends
 * a partial's text after the group's, separator first.
 */
#include "agg_fam.h"

static bool str_accepts(TlType x, TlType y)
{
    (void)y;
    return x == TL_TSTRING || x == TL_TNULL;
}

static TlStatus sa_init(TlAgg *a, TlError *err)
{
    const char *sep = a->s.sep ? a->s.sep : ",";
    size_t len = a->s.sep ? a->s.sep_len : 1;
    a->s.sep = NULL;
    a->sep = tl_strndup(sep, len);
    a->s.sep_len = len;
    return a->sep ? TL_OK : tl_error_oom(err);
}

static int sa_arrays(TlAgg *a, void ***arr, size_t *elem, int n)
{
    arr[n] = (void **)&a->sv;
    elem[n++] = sizeof *a->sv;
    return n;
}

static TlStatus sa_update(TlAgg *a, const uint32_t *ids, int64_t n,
                          const TlArray *x, const TlArray *y, TlError *err)
{
    (void)y;
    int64_t *cnt = a->cnt;
    const TlView *v = tl_array_views(x);
    FOR_VALID(x, n, {
        uint32_t g = ids[i];
        StrVal *s = &a->sv[g];
        if (cnt[g] && !sv_append(s, a->sep, a->s.sep_len)) return tl_error_oom(err);
        if (!sv_append(s, tl_view_ptr(&v[i], x->data), v[i].in.len))
            return tl_error_oom(err);
        cnt[g]++;
    });
    return TL_OK;
}

static TlStatus sa_merge(TlAgg *a, const TlAgg *p, const uint32_t *src,
                         const uint32_t *map, uint32_t n, TlError *err)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t g = MSRC(src, i), d = map[i];
        if (!p->cnt[g]) continue;
        StrVal *s = &a->sv[d];
        if (a->cnt[d] && !sv_append(s, a->sep, a->s.sep_len)) return tl_error_oom(err);
        if (!sv_append(s, p->sv[g].p, p->sv[g].len)) return tl_error_oom(err);
        a->cnt[d] += p->cnt[g];
    }
    return TL_OK;
}

static bool sa_results(TlAgg *a, TlBuilder *b, uint32_t first, uint32_t n)
{
    for (uint32_t g = first; g < first + n; g++) {
        bool ok = !a->cnt[g] || b->type != TL_TSTRING
                      ? tl_builder_append_null(b)
                      : tl_builder_append_str(b, sv_ptr(&a->sv[g]), a->sv[g].len);
        if (!ok) return false;
    }
    return true;
}

const TlAggFns tl_agg_string_agg = {
    .accepts = str_accepts,
    .init = sa_init,
    .arrays = sa_arrays,
    .update = sa_update,
    .merge = sa_merge,
    .merge_some = true,
    .skips_nulls = true,
    .results = sa_results,
};
