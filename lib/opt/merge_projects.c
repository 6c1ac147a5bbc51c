/*
 * merge_projects.c -- a projection that only picks columns of the
 * projection below it merges into it.
 *
 *   project a, c as d (project x + 1 as a, b, y * 2 as c)
 *     -> project x + 1 as a, y * 2 as d
 *
 * When every expression of the upper project is a bare column reference,
 * the upper project only selects, reorders or renames the lower one's
 * columns, so the merged project computes the kept expressions of the lower
 * one under the upper one's names (and computes nothing the plan as written
 * did not).  A column picked twice gives one id twice, which the project
 * operator evaluates once per batch (cse.c, TlEvalMemo).  Filter pushdown
 * leaves such pairs behind: `--with ... --filter ... --select ...` becomes
 * select-over-with once the filter has sunk below both.
 *
 * Runs after projection pruning, bottom-up, so chains of pure selections
 * collapse into one node.  A project holding guards (plan.h) does not
 * merge, either way: its guards read its own columns and drop rows.  Not when either reads its own outputs
 * (tl_plan_reads_self): those reads go by position in the node they are in.
 */
#include "rules.h"

/* Whether every expression of project node n is a column reference. */
static bool only_columns(const TlPlan *p, const TlPlanNode *n)
{
    for (uint32_t i = 0; i < n->n_exprs; i++) {
        const TlExpr *x = tl_ea_node(&p->ea, tl_plan_expr(p, n->exprs, i));
        if (x->kind != TL_X_COL || x->col < 0) return false;
    }
    return true;
}

/* See rules.h. */
TlStatus tl_opt_merge_projects(TlPlan *p, TlPlanId root, TlPlanId *out,
                               TlError *err)
{
    TlPlanNode n = *tl_plan_node(p, root);
    bool changed = false;
    if (n.child != TL_NO_ID) {
        TlPlanId c;
        TL_TRY(tl_opt_merge_projects(p, n.child, &c, err));
        if (c != n.child) { n.child = c; changed = true; }
    }
    if (n.right != TL_NO_ID) {
        TlPlanId c;
        TL_TRY(tl_opt_merge_projects(p, n.right, &c, err));
        if (c != n.right) { n.right = c; changed = true; }
    }
    if (n.kind == TL_PLAN_PROJECT && n.child != TL_NO_ID && n.n_exprs > 0 &&
        tl_plan_node(p, n.child)->kind == TL_PLAN_PROJECT && only_columns(p, &n) &&
        n.n_guards == 0 && tl_plan_node(p, n.child)->n_guards == 0 &&
        !tl_plan_reads_self(p, &n) && !tl_plan_reads_self(p, tl_plan_node(p, n.child))) {
        const TlPlanNode *low = tl_plan_node(p, n.child);
        TlExprId *v = tl_malloc((n.n_exprs ? n.n_exprs : 1) * sizeof *v);
        TlStatus st;
        uint32_t start;
        if (!v) return tl_error_oom(err);
        for (uint32_t i = 0; i < n.n_exprs; i++) {
            const TlExpr *x = tl_ea_node(&p->ea, tl_plan_expr(p, n.exprs, i));
            v[i] = tl_plan_expr(p, low->exprs, (uint32_t)x->col);
        }
        st = tl_plan_push_ids(p, v, n.n_exprs, &start, err);
        tl_free(v);
        TL_TRY(st);
        TL_TRY(tl_opt_note(p, err, "merge-projects: a selection of a projection is one projection"));
        n.exprs = start;
        n.child = tl_plan_node(p, n.child)->child;
        changed = true;
    }
    if (!changed) {
        *out = root;
        return TL_OK;
    }
    TL_TRY(tl_arena_push(&p->nodes, out, err));
    *tl_plan_node(p, *out) = n;
    return TL_OK;
}
