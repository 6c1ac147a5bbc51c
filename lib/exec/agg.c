/*
 * agg.c -- aggregate states over dense group ids (see agg.h): what every
 * aggregate shares, around the family's functions (agg/agg_fam.h; one
 * file per family in lib/exec/agg/, their table in agg/table.c).
 *
 * States are structures of arrays indexed by group id, grown (1.5x,
 * zero-filled) as the grouper hands out new ids; the family names its
 * arrays, this file grows them.  Every update is one typed pass of the
 * family over the batch, with the null path chosen once per argument
 * array; an argument array with no value is skipped here for the
 * families that skip nulls, and an argument of the null type gives null
 * (or 0 for counts) without asking the family.
 *
 * Finishing is two steps: tl_agg_seal ends the input and does everything
 * that can fail on the data (sum overflow) or needs all groups (sorting the
 * quantile values), so an error comes before any output; tl_agg_results
 * then builds the results of any range of groups, batch by batch.
 *
 * Merging (tl_agg_merge, for morsel parallelism): a partial is a TlAgg of
 * the same spec over one batch's local groups; the family folds its states
 * into the global ones through a map of group ids, in input order, with
 * the same meaning per state, so the result is the same for any split of
 * the rows (each family's file says how).
 */
#include "agg.h"

#include <stdlib.h>

#include "agg/agg_fam.h"

/* ---------------------------------------------------------------- setup */

/* Create an aggregate (see agg.h). */
TlStatus tl_agg_new(const TlAggSpec *spec, TlAgg **out, TlError *err)
{
    *out = NULL;
    const TlAggFns *fn = tl_agg_fns(spec->op);
    if (!fn || !fn->accepts(spec->x_type, spec->y_type)) {
        const TlOpInfo *oi = tl_op_info(spec->op);
        return tl_error(err, TL_ERR_USAGE, "%s does not accept an argument of type %s",
                        fn && oi ? oi->name : "aggregate", tl_type_name(spec->x_type));
    }
    TlAgg *a = tl_calloc(1, sizeof *a);
    if (!a) return tl_error_oom(err);
    a->s = *spec;
    a->fn = fn;
    a->cls = tl_agg_class(spec->x_type);
    if (fn->init) {
        TlStatus st = fn->init(a, err);
        if (st != TL_OK) {
            tl_agg_free(a);
            return st;
        }
    }
    *out = a;
    return TL_OK;
}

/* Free an aggregate (see agg.h). */
void tl_agg_free(TlAgg *a)
{
    if (!a) return;
    if (a->fn->free) a->fn->free(a);
    if (a->sv) {
        for (uint32_t g = 0; g < a->cap; g++) tl_free(a->sv[g].p);
        tl_free_big(a->sv);
    }
    tl_free(a->sep);
    tl_free_big(a->cnt);
    tl_free_big(a->acc);
    tl_free_big(a->iv);
    tl_free_big(a->f[0]);
    for (int k = 0; k < a->n_xs; k++) {
        tl_free_big(a->xs[k].acc);
        tl_free_big(a->xs[k].tag);
        tl_x_free(&a->xs[k]);
    }
    tl_free_big(a->valid);
    tl_free(a->ix);
    tl_free(a->fx);
    tl_free(a->fy);
    tl_free(a);
}

/* Make room for n_groups states (zeroed).  The arrays grow by remapping
 * once large (tl_realloc_big: no copy, new bytes zeroed), so 1e7 groups'
 * states are written once, not copied at every growth step.  The new
 * groups' states are then written once more, with zeros, before any update
 * reads them: an update adds to a state, and a first read of a fresh page
 * maps the shared zero page, which the write right after must replace
 * (a second fault, and with several threads a TLB flush on every core).
 * Written first, each page faults once. */
static TlStatus ensure(TlAgg *a, uint32_t n_groups, TlError *err)
{
    void **arr[26];
    size_t elem[26];
    if (n_groups <= a->touched) return TL_OK;
    int n = 0;
    arr[n] = (void **)&a->cnt;
    elem[n++] = sizeof *a->cnt;
    if (a->fn->arrays) n = a->fn->arrays(a, arr, elem, n);
    if (n_groups > a->cap) {
        /* 1.5x: the states of many groups are most of group-by's memory */
        uint64_t want = (uint64_t)a->cap + a->cap / 2;
        if (want < n_groups) want = n_groups;
        if (want < 16) want = 16; /* a small input stays small */
        if (want > UINT32_MAX) want = UINT32_MAX;
        for (int k = 0; k < n; k++) {
            void *q = tl_realloc_big(*arr[k], (size_t)want * elem[k]);
            if (!q) return tl_error_oom(err);
            *arr[k] = q;
        }
        a->cap = (uint32_t)want;
    }
    for (int k = 0; k < n; k++)
        memset((uint8_t *)*arr[k] + (size_t)a->touched * elem[k], 0,
               (size_t)(n_groups - a->touched) * elem[k]);
    a->touched = n_groups;
    return TL_OK;
}

/* ------------------------------------------------------------- updates */

/* Update from one batch (see agg.h). */
TlStatus tl_agg_update(TlAgg *a, const uint32_t *ids, int64_t n,
                       uint32_t n_groups, const TlArray *x, const TlArray *y,
                       TlError *err)
{
    TL_TRY(ensure(a, n_groups, err));
    if (n == 0) return TL_OK;
    /* An argument with no value changes nothing for most families. */
    if (a->fn->skips_nulls && x && !a->s.no_arg &&
        (x->type == TL_TNULL || x->null_count == n))
        return TL_OK;
    return a->fn->update(a, ids, n, x, y, err);
}

/* --------------------------------------------------------------- merge */

/* Whether partial states of op merge (see agg.h). */
bool tl_agg_mergeable(TlOp op)
{
    const TlAggFns *fn = tl_agg_fns(op);
    return fn && fn->merge;
}

/* See agg.h. */
bool tl_agg_merge_some_ok(TlOp op)
{
    const TlAggFns *fn = tl_agg_fns(op);
    return fn && fn->merge && fn->merge_some;
}

/* Merge partial states: p's groups src[i] (i when src is NULL) into a's
 * groups map[i], i < n_src (see agg.h). */
static TlStatus merge_impl(TlAgg *a, const TlAgg *p, const uint32_t *src,
                           const uint32_t *map, uint32_t n_src,
                           uint32_t n_groups, TlError *err)
{
    if (!a->fn->merge || p->fn != a->fn || p->cls != a->cls || a->sealed)
        return tl_error(err, TL_ERR_USAGE, "internal: aggregate states do not merge");
    TL_TRY(ensure(a, n_groups, err));
    if (n_src == 0) return TL_OK;
    uint32_t top = n_src;
    if (src) {
        top = 0;
        for (uint32_t i = 0; i < n_src; i++)
            if (src[i] >= top) top = src[i] + 1;
        if (!a->fn->merge_some)
            return tl_error(err, TL_ERR_USAGE, "internal: %s does not merge by "
                            "subsets", tl_op_info(a->s.op)->name);
    }
    if (p->cap < top)
        return tl_error(err, TL_ERR_USAGE, "internal: partial aggregate too small");
    return a->fn->merge(a, p, src, map, n_src, err);
}

/* See agg.h. */
TlStatus tl_agg_merge(TlAgg *a, const TlAgg *p, const uint32_t *map,
                      uint32_t n_src, uint32_t n_groups, TlError *err)
{
    return merge_impl(a, p, NULL, map, n_src, n_groups, err);
}

/* See agg.h. */
TlStatus tl_agg_merge_some(TlAgg *a, const TlAgg *p, const uint32_t *src,
                           const uint32_t *dst, uint32_t n, uint32_t n_groups,
                           TlError *err)
{
    return merge_impl(a, p, src, dst, n, n_groups, err);
}

/* -------------------------------------------------------------- finish */

/* An argument of the null type: no values (a count of them is 0). */
static bool no_values(const TlAgg *a)
{
    return a->s.x_type == TL_TNULL && !a->s.no_arg && !a->fn->counts;
}

/* End the input (see agg.h). */
TlStatus tl_agg_seal(TlAgg *a, uint32_t n_groups, TlError *err)
{
    TL_TRY(ensure(a, n_groups, err));
    a->n_groups = n_groups;
    a->sealed = true;
    if (a->fn->seal && !no_values(a)) TL_TRY(a->fn->seal(a, n_groups, err));
    return TL_OK;
}

/* The group whose result did not fit (see agg.h). */
uint32_t tl_agg_bad_group(const TlAgg *a)
{
    return a->bad_group;
}

/* Results of a range of groups (see agg.h). */
TlStatus tl_agg_results(TlAgg *a, uint32_t first, uint32_t n, TlArray **out,
                        TlError *err)
{
    *out = NULL;
    if (!a->sealed || (uint64_t)first + n > a->n_groups)
        return tl_error(err, TL_ERR_DATA, "internal error: aggregate results "
                        "out of range");
    TlBuilder b;
    tl_builder_init(&b, a->s.out_type);
    bool ok = tl_builder_reserve(&b, n);
    if (ok && no_values(a)) {
        for (uint32_t i = 0; ok && i < n; i++) ok = tl_builder_append_null(&b);
    } else if (ok) {
        ok = a->fn->results(a, &b, first, n);
    }
    if (ok) *out = tl_builder_finish(&b);
    tl_builder_free(&b);
    if (!*out) return tl_error_oom(err);
    return TL_OK;
}

/* Seal and produce every result (see agg.h). */
TlStatus tl_agg_finish(TlAgg *a, uint32_t n_groups, TlArray **out, TlError *err)
{
    *out = NULL;
    TL_TRY(tl_agg_seal(a, n_groups, err));
    return tl_agg_results(a, 0, n_groups, out, err);
}
