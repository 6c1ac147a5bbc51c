/*
 * fold_limits.c -- limits fold into what is below them.
 *
 *   limit N (sort keys)            -> sort keys limit N      (top-k)
 *   limit N (sort keys limit M)    -> sort keys limit min(N, M)
 *   limit N (limit M)              -> limit min(N, M)
 *
 * The sort operator, told that only the first N rows are wanted, keeps a
 * bounded heap instead of sorting everything; being stable, its first N rows
 * are the same as those of the full sort.  The rewrite walks the chain from
 * the bottom, so a run of limits over a sort folds entirely.
 */
#include "rules.h"

static int64_t min_limit(int64_t a, int64_t b)
{
    if (a < 0) return b;
    if (b < 0) return a;
    return a < b ? a : b;
}

/* See rules.h. */
TlStatus tl_opt_fold_limits(TlPlan *p, TlPlanId root, TlPlanId *out,
                            TlError *err)
{
    TlPlanNode *n = tl_plan_node(p, root);
    TlPlanId child = n->child, nc;
    if (child == TL_NO_ID) {
        *out = root;
        return TL_OK;
    }
    TL_TRY(tl_opt_fold_limits(p, child, &nc, err));
    n = tl_plan_node(p, root);
    if (n->kind == TL_PLAN_LIMIT) {
        const TlPlanNode *c = tl_plan_node(p, nc);
        if (c->kind == TL_PLAN_SORT || c->kind == TL_PLAN_LIMIT) {
            int64_t lim = min_limit(c->limit, n->limit);
            TL_TRY(tl_opt_copy_node(p, nc, tl_plan_node(p, nc)->child, out, err));
            tl_plan_node(p, *out)->limit = lim;
            return TL_OK;
        }
    }
    if (nc == child) {
        *out = root;
        return TL_OK;
    }
    return tl_opt_copy_node(p, root, nc, out, err);
}
