/*
 * fold_casts.c -- a cast of a literal becomes the literal it produces.
 *
 * Resolve inserts implicit casts where an operator mixes types, so
 * `amount > 100` over a float column is planned as
 * `amount > cast(100 as float64)`; this rule turns the cast into the literal
 * `100.0`, so the cast is not evaluated once per batch and explain shows
 * what the user meant.  Only conversions that cannot fail and give exactly
 * what the runtime cast gives are folded:
 *
 *   int64 literal -> float64     (double)v, as the cast kernel computes it
 *   date literal  -> timestamp   days * 86400 s, in microseconds
 *
 * try_cast and every other conversion are left to run time.  Expressions
 * are rewritten copy-on-write (a node is pushed only where something below
 * it changed), and a plan node is copied only when one of its expressions or
 * its child changed.
 */
#include "rules.h"

#include <string.h>

/* The folded literal for cast node x over literal arg, or false. */
static bool fold_literal(const TlExpr *x, const TlExpr *arg, TlExpr *lit)
{
    if (x->kind != TL_X_CAST || (x->flags & TL_XF_TRY) || arg->kind != TL_X_LIT)
        return false;
    *lit = *x;
    lit->kind = TL_X_LIT;
    lit->flags = 0;
    lit->args = 0;
    lit->n_args = 0;
    if (arg->lit_type == TL_TINT64 && x->lit_type == TL_TFLOAT64) {
        lit->v.f = (double)arg->v.i;
    } else if (arg->lit_type == TL_TDATE && x->lit_type == TL_TTIMESTAMP) {
        lit->v.i = (int64_t)arg->v.d * INT64_C(86400000000);
    } else {
        return false;
    }
    lit->type = lit->lit_type = x->lit_type;
    return true;
}

static TlStatus fold(TlExprArena *ea, TlExprId e, TlExprId *out, TlError *err)
{
    uint32_t n = tl_ea_node(ea, e)->n_args;
    TlExprId small[8], *args = small, cur = e;
    bool changed = false;
    TlStatus st = TL_OK;
    TlExpr lit;

    if (n > 8 && !(args = tl_malloc(n * sizeof *args))) return tl_error_oom(err);
    for (uint32_t i = 0; i < n && st == TL_OK; i++) {
        TlExprId a = tl_ea_arg(ea, tl_ea_node(ea, e), i);
        st = fold(ea, a, &args[i], err);
        if (args[i] != a) changed = true;
    }
    if (st == TL_OK && changed) {
        TlExpr t = *tl_ea_node(ea, e);
        st = tl_ea_push(ea, &t, args, n, &cur, err);
    }
    if (st == TL_OK) {
        const TlExpr *x = tl_ea_node(ea, cur);
        if (x->n_args == 1 && fold_literal(x, tl_ea_node(ea, tl_ea_arg(ea, x, 0)), &lit))
            st = tl_ea_push(ea, &lit, NULL, 0, &cur, err);
    }
    if (args != small) tl_free(args);
    *out = cur;
    return st;
}

/* Fold every expression of list (start, n); *changed when any id moved. */
static TlStatus fold_list(TlPlan *p, uint32_t *start, uint32_t n, bool *changed,
                          TlError *err)
{
    TlExprId *v;
    bool any = false;
    TlStatus st = TL_OK;
    if (n == 0) return TL_OK;
    if (!(v = tl_malloc(n * sizeof *v))) return tl_error_oom(err);
    for (uint32_t i = 0; i < n && st == TL_OK; i++) {
        TlExprId e = tl_plan_expr(p, *start, i);
        st = fold(&p->ea, e, &v[i], err);
        if (v[i] != e) any = true;
    }
    if (st == TL_OK && any) {
        st = tl_plan_push_ids(p, v, n, start, err);
        *changed = true;
    }
    tl_free(v);
    return st;
}

/* See rules.h. */
TlStatus tl_opt_fold_casts(TlPlan *p, TlPlanId root, TlPlanId *out, TlError *err)
{
    TlPlanNode n = *tl_plan_node(p, root);
    bool changed = false;
    if (n.child != TL_NO_ID) {
        TlPlanId c;
        TL_TRY(tl_opt_fold_casts(p, n.child, &c, err));
        if (c != n.child) {
            n.child = c;
            changed = true;
        }
    }
    TL_TRY(fold_list(p, &n.exprs, n.n_exprs, &changed, err));
    TL_TRY(fold_list(p, &n.aggs, n.n_aggs, &changed, err));
    if (!changed) {
        *out = root;
        return TL_OK;
    }
    TL_TRY(tl_arena_push(&p->nodes, out, err));
    *tl_plan_node(p, *out) = n;
    return TL_OK;
}
