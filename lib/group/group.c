/*
 * group.c -- choosing a grouper, and what every grouper shares.
 *
 * The choice follows the key types (see group.h): a single integer-like key
 * (int64, date, timestamp, bool) is grouped on its values, a single string
 * on its views, fixed-width keys (several, or one float64) on rows of 64-bit
 * words, everything else on a compact byte encoding of the key tuple.
 * TALLY_GROUP_ROWS (set in the environment) forces the byte rows instead
 * of the fixed-width rows, so tests can compare the two.
 *
 * Shared here: the head (types, group count) and the key builders.  When a
 * grouper meets a new key it calls tl_grouper_add, which hands out the next
 * id and, when the grouper uses builders, appends the row's key values to
 * one builder per key, so tl_grouper_keys is just "finish the builders": key
 * columns in id order, i.e. in order of first appearance.  The row grouper
 * needs no builders: it decodes its stored encoded keys at the end.
 */
#include "group.h"

#include "../../kernels/hash.h"

#include <stdlib.h>

/* One integer-like key: the int grouper's (and its hash's) shape. */
static bool int_key(const TlType *types, int n_keys)
{
    return n_keys == 1 && (types[0] == TL_TINT64 || types[0] == TL_TDATE ||
                           types[0] == TL_TTIMESTAMP || types[0] == TL_TTIMESTAMPTZ || types[0] == TL_TBOOL);
}

/* Create the grouper fitting the key types (see group.h). */
TlStatus tl_grouper_new(const TlCtx *ctx, const TlType *types, int n_keys,
                        bool keep_keys, TlGrouper **out, TlError *err)
{
    *out = NULL;
    if (int_key(types, n_keys)) return tl_group_int_new(types, keep_keys, out, err);
    if (n_keys == 1 && types[0] == TL_TSTRING)
        return tl_group_str_new(types, keep_keys, out, err);
    if (tl_group_fixed_fits(types, n_keys) && !TL_TUNING(ctx)->group_rows)
        return tl_group_fixed_new(types, n_keys, keep_keys, out, err);
    return tl_group_rows_new(types, n_keys, keep_keys, out, err);
}

/* Every key must have the grouper's type or be of the null type (an
 * all-null column). */
static TlStatus check_keys(const TlGrouper *g, const TlArray *const *keys, TlError *err)
{
    for (int k = 0; k < g->n_keys; k++)
        if (keys[k]->type != g->types[k] && keys[k]->type != TL_TNULL)
            return tl_error(err, TL_ERR_DATA,
                            "internal error: group key %d is %s, expected %s", k + 1,
                            tl_type_name(keys[k]->type), tl_type_name(g->types[k]));
    return TL_OK;
}

/* Map a batch's keys to ids (see group.h).  Every key must have the
 * grouper's type or be of the null type (an all-null column). */
TlStatus tl_grouper_map(TlGrouper *g, const TlArray *const *keys,
                        int64_t n_rows, uint32_t *ids, TlError *err)
{
    if (n_rows == 0) return TL_OK;
    TL_TRY(check_keys(g, keys, err));
    return g->vt->map(g, keys, n_rows, ids, err);
}

/* Look keys up without adding groups (see group.h). */
TlStatus tl_grouper_find(TlGrouper *g, const TlArray *const *keys,
                         int64_t n_rows, uint32_t *ids, TlError *err)
{
    uint32_t before = g->n_groups;
    if (n_rows == 0) return TL_OK;
    TL_TRY(check_keys(g, keys, err));
    if (g->vt->find) return g->vt->find(g, keys, n_rows, ids, err);
    TL_TRY(g->vt->map(g, keys, n_rows, ids, err));
    for (int64_t i = 0; i < n_rows; i++)
        if (ids[i] >= before) ids[i] = TL_GROUP_NONE;
    return TL_OK;
}

/* Number of groups so far (see group.h). */
uint32_t tl_grouper_count(const TlGrouper *g)
{
    return g->n_groups;
}

/* Key columns of a range of groups (see group.h): the key builders are
 * finished at the first call, then sliced. */
TlStatus tl_grouper_keys(TlGrouper *g, uint32_t first, uint32_t n,
                         TlArray **out, TlError *err)
{
    for (int k = 0; k < g->n_keys; k++) out[k] = NULL;
    if (!g->keep_keys || (uint64_t)first + n > g->n_groups)
        return tl_error(err, TL_ERR_DATA, "internal error: no such group keys");
    if (g->vt->keys) return g->vt->keys(g, first, n, out, err);
    if (!g->done) {
        g->done = tl_calloc((size_t)g->n_keys + 1, sizeof *g->done);
        if (!g->done) return tl_error_oom(err);
        for (int k = 0; k < g->n_keys; k++) {
            /* A key of the null type has no builder: every key is null. */
            g->done[k] = g->types[k] == TL_TNULL
                             ? tl_array_new_null(TL_TNULL, g->n_groups)
                             : tl_builder_finish(&g->kb[k]);
            if (!g->done[k]) return tl_error_oom(err);
        }
    }
    for (int k = 0; k < g->n_keys; k++) {
        out[k] = (first == 0 && n == g->n_groups) ? tl_array_retain(g->done[k])
                                                  : tl_array_slice(g->done[k], first, n);
        if (!out[k]) {
            for (int j = 0; j < k; j++) {
                tl_array_release(out[j]);
                out[j] = NULL;
            }
            return tl_error_oom(err);
        }
    }
    return TL_OK;
}

/* Key values of groups picked across groupers (see group.h).  The generic
 * way: per grouper, the keys of the range of ids it contributes (one
 * tl_grouper_keys call), interleaved with tl_array_take_multi. */
TlStatus tl_grouper_keys_multi(TlGrouper *const *gs, int n_gs,
                               const uint8_t *part, const uint32_t *gid,
                               int64_t n, TlArray **out, TlError *err)
{
    TlGrouper *g0 = NULL;
    bool same = true;
    int nk;
    if (n_gs > 256) return tl_error(err, TL_ERR_DATA, "internal error: keys_multi");
    uint32_t lo[256], hi[256];
    for (int p = 0; p < n_gs; p++) {
        lo[p] = UINT32_MAX;
        hi[p] = 0;
    }
    for (int64_t i = 0; i < n; i++) {
        uint8_t p = part[i];
        if (p >= n_gs || !gs[p] || gid[i] >= gs[p]->n_groups)
            return tl_error(err, TL_ERR_DATA, "internal error: no such group keys");
        if (gid[i] < lo[p]) lo[p] = gid[i];
        if (gid[i] > hi[p]) hi[p] = gid[i];
    }
    for (int p = 0; p < n_gs; p++) {
        if (lo[p] == UINT32_MAX) continue;
        if (!g0) g0 = gs[p];
        else if (gs[p]->vt != g0->vt) same = false;
    }
    if (!g0) {
        /* no rows: empty columns of the types the caller knows nothing
         * about are not needed; n == 0 callers pass a grouper anyway */
        for (int p = 0; p < n_gs && !g0; p++) g0 = gs[p];
        if (!g0) return tl_error(err, TL_ERR_DATA, "internal error: keys_multi");
        return tl_grouper_keys(g0, 0, 0, out, err);
    }
    nk = g0->n_keys;
    for (int k = 0; k < nk; k++) out[k] = NULL;
    if (same && g0->vt->keys_multi) {
        err->msg[0] = '\0';
        TlStatus st = g0->vt->keys_multi(gs, part, gid, n, out, err);
        if (st != TL_ERR_USAGE || err->msg[0] != '\0') return st;
    }
    /* the generic way */
    TlStatus st = TL_OK;
    int np = 0;
    int slot[256];
    for (int p = 0; p < n_gs; p++) slot[p] = lo[p] == UINT32_MAX ? -1 : np++;
    TlArray **pieces = tl_calloc((size_t)nk * (size_t)np + 1, sizeof *pieces);
    TlArray **tmp = tl_calloc((size_t)nk + 1, sizeof *tmp);
    uint32_t *ps = tl_malloc(((size_t)n + 1) * sizeof *ps);
    uint32_t *rs = tl_malloc(((size_t)n + 1) * sizeof *rs);
    if (!pieces || !tmp || !ps || !rs) {
        st = tl_error_oom(err);
        goto done;
    }
    for (int p = 0; p < n_gs && st == TL_OK; p++) {
        if (slot[p] < 0) continue;
        st = tl_grouper_keys(gs[p], lo[p], hi[p] - lo[p] + 1, tmp, err);
        for (int k = 0; k < nk; k++) {
            pieces[(size_t)k * np + slot[p]] = tmp[k];
            tmp[k] = NULL;
        }
    }
    if (st != TL_OK) goto done;
    bool ident = np == 1; /* one grouper's range, in id order */
    for (int64_t i = 0; i < n; i++) {
        ps[i] = (uint32_t)slot[part[i]];
        rs[i] = gid[i] - lo[part[i]];
        ident &= rs[i] == (uint32_t)i;
    }
    for (int k = 0; k < nk; k++) {
        TlArray **pc = pieces + (size_t)k * np;
        out[k] = ident ? tl_array_retain(pc[0])
                       : tl_array_take_multi(pc, np, ps, rs, n);
        if (!out[k]) {
            st = tl_error_oom(err);
            break;
        }
    }
done:
    if (pieces)
        for (size_t i = 0; i < (size_t)nk * (size_t)np; i++) tl_array_release(pieces[i]);
    tl_free(pieces);
    tl_free(tmp);
    tl_free(ps);
    tl_free(rs);
    if (st != TL_OK)
        for (int k = 0; k < nk; k++) {
            tl_array_release(out[k]);
            out[k] = NULL;
        }
    return st;
}

/* See group.h. */
void tl_grouper_hash(const TlType *types, int n_keys, const TlArray *const *keys, int64_t n,
                     uint64_t *h)
{
    if (int_key(types, n_keys)) {
        tl_group_int_hash(keys[0], n, h);
        return;
    }
    for (int k = 0; k < n_keys; k++) tl_k_hash_array(keys[k], h, k > 0);
}

/* Map with the caller's row hashes (see group.h). */
TlStatus tl_grouper_map_hashed(TlGrouper *g, const TlArray *const *keys,
                               int64_t n_rows, const uint64_t *hashes,
                               uint32_t *ids, TlError *err)
{
    if (!g->vt->map_hashed) return tl_grouper_map(g, keys, n_rows, ids, err);
    if (n_rows == 0) return TL_OK;
    TL_TRY(check_keys(g, keys, err));
    return g->vt->map_hashed(g, keys, n_rows, hashes, ids, err);
}

/* End a local grouper's input and prepare its merge (see group.h). */
TlStatus tl_grouper_seal_local(TlGrouper *local, TlError *err)
{
    if (local->sealed || local->fast_sealed) return TL_OK;
    if (local->vt->seal_local && local->vt->merge) {
        err->code = TL_OK;
        if (local->vt->seal_local(local, err)) {
            local->fast_sealed = true;
            return TL_OK;
        }
        if (err->code != TL_OK) return err->code;
    }
    if (!local->keep_keys && local->n_keys > 0)
        return tl_error(err, TL_ERR_DATA, "internal error: a local grouper "
                        "must keep its keys (tl_grouper_new keep_keys)");
    local->sealed = tl_calloc((size_t)local->n_keys + 1, sizeof *local->sealed);
    if (!local->sealed) return tl_error_oom(err);
    if (local->n_keys == 0 || local->n_groups == 0) return TL_OK;
    return tl_grouper_keys(local, 0, local->n_groups, local->sealed, err);
}

/* Look a sealed local grouper's groups up in g (see group.h). */
TlStatus tl_grouper_merge(TlGrouper *g, TlGrouper *local, uint32_t *map,
                          TlError *err)
{
    TL_TRY(tl_grouper_seal_local(local, err));
    if (local->n_groups == 0) return TL_OK;
    if (local->fast_sealed && local->vt == g->vt && local->n_keys == g->n_keys &&
        (g->n_keys == 0 ||
         memcmp(local->types, g->types, (size_t)g->n_keys * sizeof *g->types) == 0))
        return g->vt->merge(g, local, map, err);
    if (!local->sealed)
        return tl_error(err, TL_ERR_DATA, "internal error: local grouper of "
                        "another kind");
    return tl_grouper_map(g, (const TlArray *const *)local->sealed,
                          local->n_groups, map, err);
}

/* Free a grouper (see group.h). */
void tl_grouper_free(TlGrouper *g)
{
    if (g) g->vt->free(g);
}

/* Initialize the common head (see group.h). */
TlStatus tl_grouper_init(TlGrouper *g, const TlGrouperVt *vt,
                         const TlType *types, int n_keys, bool keep_keys,
                         bool builders, TlError *err)
{
    g->vt = vt;
    g->n_keys = n_keys;
    g->keep_keys = keep_keys;
    g->n_groups = 0;
    g->types = NULL;
    g->kb = NULL;
    g->done = NULL;
    g->sealed = NULL;
    g->fast_sealed = false;
    if (n_keys > 0) {
        g->types = tl_malloc((size_t)n_keys * sizeof *g->types);
        if (!g->types) return tl_error_oom(err);
        memcpy(g->types, types, (size_t)n_keys * sizeof *g->types);
    }
    if (builders) {
        g->kb = tl_calloc(n_keys > 0 ? (size_t)n_keys : 1, sizeof *g->kb);
        if (!g->kb) {
            tl_free(g->types);
            g->types = NULL;
            return tl_error_oom(err);
        }
        for (int k = 0; k < n_keys; k++)
            tl_builder_init(&g->kb[k], types[k] == TL_TNULL ? TL_TINT64 : types[k]);
    }
    return TL_OK;
}

/* Free the head's allocations (see group.h). */
void tl_grouper_fini(TlGrouper *g)
{
    if (g->sealed) {
        for (int k = 0; k < g->n_keys; k++) tl_array_release(g->sealed[k]);
        tl_free(g->sealed);
        g->sealed = NULL;
    }
    if (g->done) {
        for (int k = 0; k < g->n_keys; k++) tl_array_release(g->done[k]);
        tl_free(g->done);
        g->done = NULL;
    }
    if (g->kb) {
        for (int k = 0; k < g->n_keys; k++) tl_builder_free(&g->kb[k]);
        tl_free(g->kb);
    }
    tl_free(g->types);
    g->kb = NULL;
    g->types = NULL;
}

/* Register a new group at `row` (see group.h). */
TlStatus tl_grouper_add(TlGrouper *g, const TlArray *const *keys, int64_t row,
                        uint32_t *id, TlError *err)
{
    if (g->n_groups >= TL_GROUPS_MAX)
        return tl_error(err, TL_ERR_DATA, "too many groups (more than %u)",
                        (unsigned)TL_GROUPS_MAX);
    if (g->kb) {
        for (int k = 0; k < g->n_keys; k++)
            if (g->types[k] != TL_TNULL &&
                !tl_builder_append_from(&g->kb[k], keys[k], row))
                return tl_error_oom(err);
    }
    *id = g->n_groups++;
    return TL_OK;
}
