/*
 * opt.c -- the optimizer driver.
 *
 * Today the optimizer is a fixed sequence of three rewrites over the
 * logical plan, each a function from a root to a new root (rules.h):
 *
 *   1. fold_casts             cast(literal) -> literal (implicit casts)
 *   2. fold_limits            sort + limit -> top-k sort; limit + limit -> min
 *   3. pushdown_projection    only referenced columns are read
 *
 * The folds run first because they never change a schema, and projection
 * pruning then sees the final shape.  A limit without a sort needs no rule:
 * the limit operator stops pulling from its child once it has its rows, so
 * the scan stops early by construction.
 *
 * Both rules only push nodes, never edit them, and each visits every node
 * once, so the driver ends.  When the simplifier arrives (rewrite until
 * nothing changes), its loop goes here, ahead of the pushdowns; it will end
 * because every simplification rule shrinks the expression tree.
 */
#include "rules.h"

#include <string.h>

/* See rules.h. */
TlStatus tl_opt_copy_node(TlPlan *p, TlPlanId id, TlPlanId child,
                          TlPlanId *out, TlError *err)
{
    TlPlanNode copy = *tl_plan_node(p, id);
    TL_TRY(tl_arena_push(&p->nodes, out, err));
    copy.child = child;
    *tl_plan_node(p, *out) = copy;
    return TL_OK;
}

/* See plan.h: sets p->opt_root to the optimized plan of p->root. */
TlStatus tl_opt_run(TlPlan *p, TlError *err)
{
    TlPlanId root = p->root;
    TL_TRY(tl_opt_fold_casts(p, root, &root, err));
    TL_TRY(tl_opt_fold_limits(p, root, &root, err));
    TL_TRY(tl_opt_pushdown_projection(p, root, &root, err));
    p->opt_root = root;
    return TL_OK;
}
