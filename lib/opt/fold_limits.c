/*
 * fold_limits.c -- a limit sinks as far as it can and folds into what it
 * meets.
 *
 *   limit N (project ...)          -> project ... (limit N ...)
 *   limit N (sort keys)            -> sort keys limit N      (top-k)
 *   limit N (sort keys limit M)    -> sort keys limit min(N, M)
 *   limit N (limit M)              -> limit min(N, M)
 *   limit N offset K (sort keys)   -> limit N offset K (sort keys limit N+K)
 *   limit N offset K (limit M offset J)
 *                                  -> limit min(N, M-K) offset J+K
 *
 * An offset is a limit node too (skip K rows, then keep N, or all: SQL's
 * LIMIT/OFFSET), so offsets and heads fold with each other in whatever
 * order they were given; over a sort, the sort keeps a top-(N+K) heap and
 * the offset is skipped from its output.  A tail (the last N rows) folds
 * with nothing: which rows are last depends on all of its input.
 *
 * A project maps each row to one row, so the first N rows of its output are
 * the projection of the first N rows of its input: the limit may go below
 * it (and the projection is then evaluated on N rows only).  Not below a
 * project that holds guards (filters inside a run of `with` items, plan.h):
 * it drops rows.  The sort
 * operator, told that only the first N rows are wanted, keeps a bounded heap
 * instead of sorting everything; being stable, its first N rows are those of
 * the full sort.  A limit stops at anything else (a filter, an aggregate,
 * distinct, limit-by: they change which rows come first).
 *
 * The rewrite walks the chain from the bottom, so every limit meets an
 * already folded child, and place() descends only through projects, so the
 * whole rule is linear in the plan's length.  A limit stops above a join
 * (each left row may have any number of matches); the join's right side is
 * folded as a chain of its own.
 */
#include "rules.h"

static int64_t min_limit(int64_t a, int64_t b)
{
    if (a < 0) return b;
    if (b < 0) return a;
    return a < b ? a : b;
}

static int64_t add_sat(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* A limit of n rows after `off` skipped (n -1: all) over the (folded)
 * subtree c; *out the new subtree. */
static TlStatus place(TlPlan *p, TlPlanId lim, int64_t n, int64_t off, TlPlanId c,
                      TlPlanId *out, TlError *err)
{
    const TlPlanNode *cn = tl_plan_node(p, c);
    if (cn->kind == TL_PLAN_LIMIT && !cn->tail) {
        /* skip cn->offset, keep cn->limit, then skip off, keep n */
        int64_t left = cn->limit < 0 ? -1
                       : cn->limit > off ? cn->limit - off : 0;
        return place(p, lim, min_limit(left, n), add_sat(cn->offset, off),
                     cn->child, out, err);
    }
    if (cn->kind == TL_PLAN_SORT && cn->n_by == 0 && n >= 0) {
        int64_t m = min_limit(cn->limit, add_sat(n, off));
        TL_TRY(tl_opt_copy_node(p, c, cn->child, out, err));
        tl_plan_node(p, *out)->limit = m;
        if (off == 0) return TL_OK;
        /* the offset stays a limit over the top-(n + off) sort */
        c = *out;
    } else if (cn->kind == TL_PLAN_PROJECT && cn->n_guards == 0) {
        TlPlanId below;
        TL_TRY(place(p, lim, n, off, cn->child, &below, err));
        return tl_opt_copy_node(p, c, below, out, err);
    }
    TL_TRY(tl_opt_copy_node(p, lim, c, out, err));
    /* a limit passes its input through: below a project, its schema is the
     * project's input schema, not the project's output */
    tl_plan_node(p, *out)->schema = tl_plan_node(p, c)->schema;
    tl_plan_node(p, *out)->limit = n;
    tl_plan_node(p, *out)->offset = off;
    return TL_OK;
}

/* See rules.h. */
TlStatus tl_opt_fold_limits(TlPlan *p, TlPlanId root, TlPlanId *out,
                            TlError *err)
{
    TlPlanNode *n = tl_plan_node(p, root);
    TlPlanId child = n->child, nc, right = n->right, nr = right;
    if (child == TL_NO_ID) {
        *out = root;
        return TL_OK;
    }
    TL_TRY(tl_opt_fold_limits(p, child, &nc, err));
    if (right != TL_NO_ID) {
        /* a join: its right side is a chain of its own */
        TL_TRY(tl_opt_fold_limits(p, right, &nr, err));
        if (nc == child && nr == right) {
            *out = root;
            return TL_OK;
        }
        TL_TRY(tl_opt_copy_node(p, root, nc, out, err));
        tl_plan_node(p, *out)->right = nr;
        return TL_OK;
    }
    n = tl_plan_node(p, root);
    if (n->kind == TL_PLAN_LIMIT && !n->tail) {
        uint8_t ck = tl_plan_node(p, nc)->kind;
        if (ck == TL_PLAN_SORT || ck == TL_PLAN_LIMIT || ck == TL_PLAN_PROJECT)
            return place(p, root, n->limit, n->offset, nc, out, err);
    }
    if (nc == child) {
        *out = root;
        return TL_OK;
    }
    return tl_opt_copy_node(p, root, nc, out, err);
}
