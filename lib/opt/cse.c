/*
 * cse.c -- common subexpressions of one projection share one id.
 *
 * The expressions of each project node are hash-consed: walking each tree
 * bottom-up, a node whose fields (kind, type, operator, flags, column,
 * literal value) and child ids equal an earlier node's becomes that node's
 * id.  Children are interned first, so comparing child ids is comparing
 * whole subtrees.  The project operator then finds ids reached more than
 * once and evaluates them once per batch (TlEvalMemo in lib/expr/eval.h):
 *
 *   select (a * b) + 1 as x, (a * b) * 2 as y     a * b computed once
 *
 * The table is per node: sharing across nodes would not help (each operator
 * evaluates its own batch).  Only ids change, never values, so the rule is
 * valid everywhere; a merged node keeps the span of its first occurrence,
 * which is also the occurrence evaluated first.
 */
#include "rules.h"

#include <string.h>

typedef struct Cse {
    TlPlan *p;
    TlError *err;
    TlExprId *tab;   /* open addressing; TL_NO_ID empty */
    uint32_t cap, n;
    int merged;
} Cse;

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

static uint64_t hash_node(const TlExpr *x, const TlExprId *args)
{
    uint64_t h = mix(0, (uint64_t)x->kind | (uint64_t)x->type << 8 |
                            (uint64_t)x->lit_type << 16 | (uint64_t)x->flags << 24 |
                            (uint64_t)x->op << 32);
    h = mix(h, (uint64_t)(uint32_t)x->col);
    if (x->kind == TL_X_LIT) {
        switch ((TlType)x->lit_type) {
        case TL_TBOOL: h = mix(h, x->v.b); break;
        case TL_TINT64: case TL_TTIMESTAMP: case TL_TTIMESTAMPTZ: h = mix(h, (uint64_t)x->v.i); break;
        case TL_TFLOAT64: {
            uint64_t b;
            memcpy(&b, &x->v.f, sizeof b);
            h = mix(h, b);
            break;
        }
        case TL_TDATE: h = mix(h, (uint64_t)(uint32_t)x->v.d); break;
        case TL_TSTRING:
            for (uint32_t i = 0; i < x->v.str.n; i++)
                h = mix(h, (unsigned char)x->v.str.s[i]);
            break;
        default: break;
        }
    }
    for (uint32_t i = 0; i < x->n_args; i++) h = mix(h, args[i]);
    return h;
}

/* Whether node c equals x with children args (children already interned). */
static bool same(const Cse *cs, TlExprId c, const TlExpr *x, const TlExprId *args)
{
    const TlExprArena *ea = &cs->p->ea;
    const TlExpr *y = tl_ea_node(ea, c);
    if (y->kind != x->kind || y->type != x->type || y->lit_type != x->lit_type ||
        y->flags != x->flags || y->op != x->op || y->col != x->col ||
        y->n_args != x->n_args)
        return false;
    if (x->kind == TL_X_COL &&
        strcmp(x->name ? x->name : "", y->name ? y->name : "") != 0)
        return false;
    if (x->kind == TL_X_LIT) {
        switch ((TlType)x->lit_type) {
        case TL_TBOOL: if (x->v.b != y->v.b) return false; break;
        case TL_TINT64: case TL_TTIMESTAMP: case TL_TTIMESTAMPTZ: if (x->v.i != y->v.i) return false; break;
        case TL_TFLOAT64:
            if (memcmp(&x->v.f, &y->v.f, sizeof x->v.f) != 0) return false;
            break;
        case TL_TDATE: if (x->v.d != y->v.d) return false; break;
        case TL_TSTRING:
            if (x->v.str.n != y->v.str.n ||
                (x->v.str.n && memcmp(x->v.str.s, y->v.str.s, x->v.str.n) != 0))
                return false;
            break;
        default: break;
        }
    }
    for (uint32_t i = 0; i < x->n_args; i++)
        if (tl_ea_arg(ea, y, i) != args[i]) return false;
    return true;
}

static TlStatus grow(Cse *cs)
{
    uint32_t nc = cs->cap ? cs->cap * 2 : 64;
    TlExprId *t = tl_malloc(nc * sizeof *t), *old = cs->tab;
    if (!t) return tl_error_oom(cs->err);
    for (uint32_t i = 0; i < nc; i++) t[i] = TL_NO_ID;
    for (uint32_t i = 0; i < cs->cap; i++) {
        if (old[i] == TL_NO_ID) continue;
        const TlExpr *x = tl_ea_node(&cs->p->ea, old[i]);
        TlExprId small[8], *args = x->n_args <= 8 ? small
                                                  : tl_malloc(x->n_args * sizeof *args);
        if (!args) {
            tl_free(t);
            return tl_error_oom(cs->err);
        }
        for (uint32_t k = 0; k < x->n_args; k++) args[k] = tl_ea_arg(&cs->p->ea, x, k);
        uint32_t j = (uint32_t)hash_node(x, args) & (nc - 1);
        while (t[j] != TL_NO_ID) j = (j + 1) & (nc - 1);
        t[j] = old[i];
        if (args != small) tl_free(args);
    }
    tl_free(old);
    cs->tab = t;
    cs->cap = nc;
    return TL_OK;
}

static TlStatus intern(Cse *cs, TlExprId e, TlExprId *out)
{
    TlExprArena *ea = &cs->p->ea;
    uint32_t n = tl_ea_node(ea, e)->n_args;
    TlExprId small[8], *args = n <= 8 ? small : tl_malloc(n * sizeof *args);
    bool changed = false;
    TlStatus st = TL_OK;
    TlExpr x;

    if (!args) return tl_error_oom(cs->err);
    for (uint32_t i = 0; i < n && st == TL_OK; i++) {
        TlExprId a = tl_ea_arg(ea, tl_ea_node(ea, e), i);
        st = intern(cs, a, &args[i]);
        if (args[i] != a) changed = true;
    }
    if (st != TL_OK) goto done;
    if ((cs->n + 1) * 2 > cs->cap && (st = grow(cs)) != TL_OK) goto done;
    x = *tl_ea_node(ea, e);
    {
        uint32_t j = (uint32_t)hash_node(&x, args) & (cs->cap - 1);
        for (; cs->tab[j] != TL_NO_ID; j = (j + 1) & (cs->cap - 1))
            if (same(cs, cs->tab[j], &x, args)) {
                if (cs->tab[j] != e) cs->merged += n > 0;
                *out = cs->tab[j];
                goto done;
            }
        *out = e;
        if (changed) st = tl_ea_push(ea, &x, args, n, out, cs->err);
        if (st == TL_OK) {
            cs->tab[j] = *out;
            cs->n++;
        }
    }
done:
    if (args != small) tl_free(args);
    return st;
}

/* Intern the expressions of project node id; *out the (possibly new) node. */
static TlStatus cse_node(TlPlan *p, TlPlanId id, TlPlanId *out, TlError *err)
{
    TlPlanNode n = *tl_plan_node(p, id);
    Cse cs = {p, err, NULL, 0, 0, 0};
    TlExprId *v = tl_malloc((n.n_exprs ? n.n_exprs : 1) * sizeof *v);
    bool changed = false;
    TlStatus st = TL_OK;
    *out = id;
    if (!v) return tl_error_oom(err);
    for (uint32_t i = 0; i < n.n_exprs && st == TL_OK; i++) {
        TlExprId e = tl_plan_expr(p, n.exprs, i);
        st = intern(&cs, e, &v[i]);
        if (v[i] != e) changed = true;
    }
    if (st == TL_OK && changed && cs.merged > 0) {
        st = tl_plan_push_ids(p, v, n.n_exprs, &n.exprs, err);
        if (st == TL_OK)
            st = tl_opt_note(p, err, "cse in project: %d repeated subexpression%s computed once",
                             cs.merged, cs.merged == 1 ? "" : "s");
        if (st == TL_OK) st = tl_arena_push(&p->nodes, out, err);
        if (st == TL_OK) *tl_plan_node(p, *out) = n;
    }
    tl_free(v);
    tl_free(cs.tab);
    return st;
}

/* See rules.h. */
TlStatus tl_opt_cse(TlPlan *p, TlPlanId root, TlPlanId *out, TlError *err)
{
    TlPlanNode n = *tl_plan_node(p, root);
    bool changed = false;
    TlPlanId cur = root;
    if (n.child != TL_NO_ID) {
        TlPlanId c;
        TL_TRY(tl_opt_cse(p, n.child, &c, err));
        if (c != n.child) { n.child = c; changed = true; }
    }
    if (n.right != TL_NO_ID) {
        TlPlanId c;
        TL_TRY(tl_opt_cse(p, n.right, &c, err));
        if (c != n.right) { n.right = c; changed = true; }
    }
    if (changed) {
        TL_TRY(tl_arena_push(&p->nodes, &cur, err));
        *tl_plan_node(p, cur) = n;
    }
    if (n.kind == TL_PLAN_PROJECT) TL_TRY(cse_node(p, cur, &cur, err));
    *out = cur;
    return TL_OK;
}
