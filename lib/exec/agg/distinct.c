/*
 * distinct.c -- count_distinct, mode and approx_count_distinct.
 *
 * A second grouper over the pair (group id, value): every new pair whose
 * value is not null adds one to its group.  Its states do not merge (a
 * partial's pairs would have to be looked up again): op_agg.c updates it
 * with the rows' mapped ids instead.
 */
#include "agg_fam.h"

#include "../../../kernels/hash.h"
#include "../../../kernels/hll.h"

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

/* ---------------------------------------------------------------- mode */

/* mode: the same pairs (group id, value), each with its count; a group's
 * mode is its pair of the largest count, the first to appear among equal
 * counts (pair ids are dense in order of first appearance), as DuckDB's
 * mode takes the first value seen among ties.  Nulls are no value.  Like
 * count_distinct it does not merge; rows reach it in input order. */
typedef struct ModeState {
    int64_t *pcount;   /* per pair: its rows with a value */
    uint32_t *pgroup;  /* per pair: its group */
    int64_t pcap;
    uint32_t *best;    /* sealed: per group, its mode's pair or UINT32_MAX */
    TlArray *vals;     /* sealed: the pairs' values */
} ModeState;

static TlStatus mode_init(TlAgg *a, TlError *err)
{
    ModeState *m = tl_calloc(1, sizeof *m);
    if (!m) return tl_error_oom(err);
    a->fam = m;
    if (a->s.x_type == TL_TNULL) return TL_OK;
    TlType kt[2] = {TL_TINT64, a->s.x_type};
    return tl_grouper_new(a->s.ctx, kt, 2, true, &a->cd, err);
}

static void mode_free(TlAgg *a)
{
    ModeState *m = a->fam;
    cd_free(a);
    if (!m) return;
    tl_free(m->pcount);
    tl_free(m->pgroup);
    tl_free(m->best);
    tl_array_release(m->vals);
    tl_free(m);
}

static TlStatus mode_update(TlAgg *a, const uint32_t *ids, int64_t n,
                            const TlArray *x, const TlArray *y, TlError *err)
{
    (void)y;
    ModeState *m = a->fam;
    uint32_t before = tl_grouper_count(a->cd);
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
    const TlArray *keys[2] = {garr, x};
    st = tl_grouper_map(a->cd, keys, n, a->cd_ids, err);
    if (st != TL_OK) goto done;
    uint32_t after = tl_grouper_count(a->cd);
    if ((int64_t)after > m->pcap) {
        int64_t cap = m->pcap ? m->pcap : 64;
        while (cap < (int64_t)after) cap *= 2;
        int64_t *pc = tl_realloc(m->pcount, (size_t)cap * sizeof *pc);
        if (pc) m->pcount = pc;
        uint32_t *pg = pc ? tl_realloc(m->pgroup, (size_t)cap * sizeof *pg) : NULL;
        if (!pc || !pg) {
            st = tl_error_oom(err);
            goto done;
        }
        m->pgroup = pg;
        m->pcap = cap;
    }
    memset(m->pcount + before, 0, (size_t)(after - before) * sizeof *m->pcount);
    const uint32_t *pid = a->cd_ids;
    FOR_VALID(x, n, {
        m->pcount[pid[i]]++;
        m->pgroup[pid[i]] = ids[i];
        a->cnt[ids[i]] = 1;
    });
done:
    tl_array_release(garr);
    return st;
}

/* Each group's mode: one pass over the pairs in id order. */
static TlStatus mode_seal(TlAgg *a, uint32_t n_groups, TlError *err)
{
    ModeState *m = a->fam;
    uint32_t np = tl_grouper_count(a->cd);
    m->best = tl_malloc(((size_t)n_groups + 1) * sizeof *m->best);
    if (!m->best) return tl_error_oom(err);
    for (uint32_t g = 0; g < n_groups; g++) m->best[g] = UINT32_MAX;
    for (uint32_t p = 0; p < np; p++) {
        if (!m->pcount[p]) continue;
        uint32_t g = m->pgroup[p], b = m->best[g];
        if (b == UINT32_MAX || m->pcount[p] > m->pcount[b]) m->best[g] = p;
    }
    TlArray *k[2] = {NULL, NULL};
    TL_TRY(tl_grouper_keys(a->cd, 0, np, k, err));
    tl_array_release(k[0]);
    m->vals = k[1];
    return TL_OK;
}

static bool mode_results(TlAgg *a, TlBuilder *b, uint32_t first, uint32_t n)
{
    ModeState *m = a->fam;
    const TlArray *v = m->vals;
    for (uint32_t g = first; g < first + n; g++) {
        uint32_t p = m->best[g];
        bool ok;
        if (p == UINT32_MAX) ok = tl_builder_append_null(b);
        else if (v->type == TL_TSTRING) {
            const TlView *s = &tl_array_views(v)[p];
            ok = tl_builder_append_str(b, tl_view_ptr(s, v->data), s->in.len);
        } else if (v->type == TL_TFLOAT64) ok = tl_agg_put_f64(b, tl_array_f64(v)[p]);
        else if (v->type == TL_TDATE) ok = tl_agg_put_i64(b, tl_array_i32(v)[p]);
        else if (v->type == TL_TBOOL) ok = tl_agg_put_i64(b, tl_array_bool(v, p));
        else ok = tl_agg_put_i64(b, tl_array_i64(v)[p]);
        if (!ok) return false;
    }
    return true;
}

const TlAggFns tl_agg_mode = {
    .accepts = tl_agg_any_type,
    .init = mode_init,
    .update = mode_update,
    .skips_nulls = true,
    .seal = mode_seal,
    .results = mode_results,
    .free = mode_free,
};

/* ------------------------------------------------ approx_count_distinct */

/* A HyperLogLog sketch of TL_K_HLL_AGG_P bits per group
 * (kernels/hll.h), made at the group's first value; registers combine by
 * maximum, so partials merge in any order to the same sketch, and the
 * estimate is the same for any --threads. */
static int acd_arrays(TlAgg *a, void ***arr, size_t *elem, int n)
{
    arr[n] = (void **)&a->fam;  /* uint8_t *[groups]: NULL until a value */
    elem[n++] = sizeof(uint8_t *);
    return n;
}

static void acd_free(TlAgg *a)
{
    uint8_t **reg = a->fam;
    if (!reg) return;
    for (uint32_t g = 0; g < a->cap; g++) tl_free(reg[g]);
    tl_free_big(reg);
    a->fam = NULL;
}

static TlStatus acd_update(TlAgg *a, const uint32_t *ids, int64_t n,
                           const TlArray *x, const TlArray *y, TlError *err)
{
    (void)y;
    uint8_t **reg = a->fam;
    uint64_t *h = tl_malloc((size_t)n * sizeof *h);
    if (!h) return tl_error_oom(err);
    tl_k_hash_array(x, h, false);
    FOR_VALID(x, n, {
        uint32_t g = ids[i];
        if (!reg[g] && !(reg[g] = tl_calloc(TL_K_HLL_M(TL_K_HLL_AGG_P), 1))) {
            tl_free(h);
            return tl_error_oom(err);
        }
        tl_k_hll_add(reg[g], TL_K_HLL_AGG_P, h[i]);
    });
    tl_free(h);
    return TL_OK;
}

static TlStatus acd_merge(TlAgg *a, const TlAgg *p, const uint32_t *src,
                          const uint32_t *map, uint32_t n, TlError *err)
{
    uint8_t **reg = a->fam, *const *preg = p->fam;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t g = MSRC(src, i), d = map[i];
        if (!preg[g]) continue;
        if (!reg[d] && !(reg[d] = tl_calloc(TL_K_HLL_M(TL_K_HLL_AGG_P), 1)))
            return tl_error_oom(err);
        tl_k_hll_merge(reg[d], preg[g], TL_K_HLL_AGG_P);
    }
    return TL_OK;
}

static bool acd_results(TlAgg *a, TlBuilder *b, uint32_t first, uint32_t n)
{
    uint8_t **reg = a->fam;
    for (uint32_t g = first; g < first + n; g++)
        if (!tl_agg_put_i64(b, reg[g] ? tl_k_hll_estimate(reg[g], TL_K_HLL_AGG_P) : 0))
            return false;
    return true;
}

const TlAggFns tl_agg_approx_count_distinct = {
    .accepts = tl_agg_any_type,
    .arrays = acd_arrays,
    .update = acd_update,
    .merge = acd_merge,
    .merge_some = true,
    .skips_nulls = true,
    .counts = true,
    .results = acd_results,
    .free = acd_free,
};
