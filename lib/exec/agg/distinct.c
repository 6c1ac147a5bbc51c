/*
 * distinct.c -- count_distinct.
 *
 * A second grouper over the pair (group id, value): every new pair whose
 * value is not null adds one to its group.  Its states do not merge (a
 * partial's pairs would have to be looked up again): op_agg.c updates it
 * with the rows' mapped ids instead.
 */
#include "agg_fam.h"

static TlStatus cd_init(TlAgg *a, TlError *err)
{
    if (a->s.x_type == TL_TNULL) return TL_OK;
    TlType kt[2] = {TL_TINT64, a->s.x_type};
    return tl_grouper_new(a->s.ctx, kt, 2, false, &a->cd, err);
}

static void cd_free(TlAgg *a)
{
    tl_grouper_free(a->cd);
    tl_free(a->cd_ids);
}

static TlStatus cd_update(TlAgg *a, const uint32_t *ids, int64_t n,
                          const TlArray *x, const TlArray *y, TlError *err)
{
    (void)y;
    TlBuf *buf = tl_buf_new((size_t)n * 8, false);
    if (!buf) return tl_error_oom(err);
    int64_t *gv = (int64_t *)buf->data;
    for (int64_t i = 0; i < n; i++) gv[i] = ids[i];
    TlArray *garr = tl_array_new(TL_TINT64, n, buf, NULL, 0, NULL, 0);
    if (!garr) return tl_error_oom(err);
    TlStatus st = TL_OK;
    if (!tl_agg_scratch((void **)&a->cd_ids, &a->cd_cap, sizeof *a->cd_ids, n)) {
        st = tl_error_oom(err);
        goto done;
    }
    uint32_t next = tl_grouper_count(a->cd);
    const TlArray *keys[2] = {garr, x};
    st = tl_grouper_map(a->cd, keys, n, a->cd_ids, err);
    if (st != TL_OK) goto done;
    /* New pairs get ids in row order: the first row of a new pair is the
     * row whose id equals the next expected one. */
    for (int64_t i = 0; i < n; i++) {
        if (a->cd_ids[i] == next) {
            next++;
            if (tl_array_valid(x, i)) a->cnt[ids[i]]++;
        }
    }
done:
    tl_array_release(garr);
    return st;
}

const TlAggFns tl_agg_count_distinct = {
    .accepts = tl_agg_any_type,
    .init = cd_init,
    .update = cd_update,
    .skips_nulls = true,
    .counts = true,
    .results = tl_agg_count_results,
    .free = cd_free,
};
