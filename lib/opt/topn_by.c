/*
 * topn_by.c -- limit N by KEYS directly over a sort becomes one sort node
 * that keeps only the first N rows of each group.
 *
 *   limit N by k (sort keys)   ->   sort keys limit N by k
 *
 * The operator (lib/exec/op_topn_by.c) keeps a bounded heap per group
 * instead of sorting every row; its output is that of the stable sort
 * followed by limit-by, row for row (ties stay in input order).  The by
 * columns index the sort's output schema, which is its input schema, so
 * they carry over unchanged.  Only a plain sort folds (a sort already cut
 * to a top-k keeps fewer rows than limit-by would see), and only for
 * 1 <= N <= TOPN_MAX so that groups * N slots stay small.  The rule runs
 * last, on the finished plan; a join's right side is a chain of its own.
 */
#include "rules.h"

#define TOPN_MAX 4096

/* See rules.h. */
TlStatus tl_opt_topn_by(TlPlan *p, TlPlanId root, TlPlanId *out, TlError *err)
{
    TlPlanNode *n = tl_plan_node(p, root);
    TlPlanId child = n->child, nc, right = n->right, nr = right;
    if (child == TL_NO_ID) {
        *out = root;
        return TL_OK;
    }
    TL_TRY(tl_opt_topn_by(p, child, &nc, err));
    if (right != TL_NO_ID) TL_TRY(tl_opt_topn_by(p, right, &nr, err));
    n = tl_plan_node(p, root);
    const TlPlanNode *cn = tl_plan_node(p, nc);
    if (n->kind == TL_PLAN_LIMIT_BY && cn->kind == TL_PLAN_SORT &&
        cn->limit < 0 && cn->n_by == 0 && n->limit >= 1 &&
        n->limit <= TOPN_MAX && n->n_cols > 0 && right == TL_NO_ID) {
        int64_t lim = n->limit;
        uint32_t cols = n->cols, n_cols = n->n_cols;
        TL_TRY(tl_opt_copy_node(p, nc, cn->child, out, err));
        TlPlanNode *s = tl_plan_node(p, *out);
        s->limit = lim;
        s->by = cols;
        s->n_by = n_cols;
        return tl_opt_note(p, err, "topn-by: limit %lld by over a sort keeps a "
                           "heap per group", (long long)lim);
    }
    if (nc == child && nr == right) {
        *out = root;
        return TL_OK;
    }
    TL_TRY(tl_opt_copy_node(p, root, nc, out, err));
    tl_plan_node(p, *out)->right = nr;
    return TL_OK;
}
