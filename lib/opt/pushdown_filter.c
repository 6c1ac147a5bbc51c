/*
 * pushdown_filter.c -- filters move toward the scan.
 *
 * The chain is rewritten from the bottom, so every filter meets an already
 * rewritten child, and sinks through it while that is valid:
 *
 *   filter P (project E)    -> project E (filter P[col i := E_i])
 *                              the derived expression is substituted; the
 *                              project evaluated E on every input row, so
 *                              the filter evaluates nothing the plan as
 *                              written did not
 *   filter P (sort K)       -> sort K (filter P)      (sort without a limit)
 *   filter P (aggregate)    -> aggregate (filter P[key i := K_i])
 *                              when P reads only group keys (HAVING on keys),
 *                              the aggregate has keys, and no key P reads is
 *                              a float (groups merge -0.0 with 0.0 and every
 *                              NaN: a predicate could tell the merged values
 *                              apart)
 *   anything else           stop: the filter goes directly above it
 *
 * A project holding guards (filters inside a run of `with` items, plan.h)
 * is a filter itself: nothing passes it, but its leading guards leave it
 * (unguard) and sink like any filter above it would.
 *
 * A filter never passes another filter: a filter below may guard this one
 * (`x > 0` before `10 // x > 1`), so filters keep their order, and the
 * predicate is evaluated only on rows the plan as written evaluates it on.
 * Nor does it pass a limit, limit-by or distinct (they decide which rows
 * come first or survive, so filtering first changes the answer), or a scan.
 *
 * Joins (sink_join): a predicate that reads one side only moves into that
 * side -- inner (both sides) and semi/anti (left) only when it cannot fail,
 * left joins into the left side; right and full joins keep it above.  The
 * predicate moves whole: splitting `a and b` into its sides would break the
 * guard the lazy AND gives b.
 *
 * Copies: sinking copies every node it passes, and substitution copies the
 * predicate.  A pathological pipeline (thousands of with + filter steps, or
 * a predicate of thousands of terms) would copy quadratically, so the work
 * is budgeted: each pass costs the size of the substituted predicate, and
 * after MAX_COPIES units filters stop where they are (still correct).  A
 * predicate also stops at a project whose substitution would make it larger
 * than MAX_GROWN nodes (and larger than it was): `a = a + 1` repeated would
 * otherwise build a predicate as deep as the pipeline is long.
 */
#include "rules.h"

#include "../expr/eval.h" /* tl_expr_reads_from */

#include <string.h>

#define MAX_COPIES 200000
#define MAX_GROWN 256

/* The number of nodes of e's tree, counting up to cap at most. */
static int64_t expr_size(const TlExprArena *ea, TlExprId e, int64_t cap)
{
    const TlExpr *x = tl_ea_node(ea, e);
    int64_t n = 1;
    for (uint32_t i = 0; i < x->n_args && n < cap; i++)
        n += expr_size(ea, tl_ea_arg(ea, x, i), cap - n);
    return n;
}

typedef struct Push {
    TlPlan *p;
    TlError *err;
    int64_t copies;
    int splits;     /* nesting of split_at (bounded, belt and braces) */
} Push;

#define MAX_CONJ 64

/* Whether e reads only columns < n_keys whose types in s are not float. */
static bool only_keys(const TlExprArena *ea, TlExprId e, uint32_t n_keys,
                      const TlSchema *s)
{
    const TlExpr *x = tl_ea_node(ea, e);
    if (x->kind == TL_X_COL) {
        if (x->col < 0 || (uint32_t)x->col >= n_keys) return false;
        if (s->fields[x->col].type == TL_TFLOAT64) return false;
    }
    for (uint32_t i = 0; i < x->n_args; i++)
        if (!only_keys(ea, tl_ea_arg(ea, x, i), n_keys, s)) return false;
    return true;
}

/* e with every column reference i >= from replaced by list[i - from] of
 * the node.  A projection's expression may read an earlier one's output
 * (column n_in + j, tl_plan_reads_self; n_in < 0: none can), which is
 * replaced by that expression in turn, at most *budget times: beyond it
 * *out is TL_NO_ID (the expanded predicate would be too large to move). */
static TlStatus subst(TlPlan *p, TlExprId e, uint32_t list, int from, int n_in,
                      int64_t *budget, TlExprId *out, TlError *err)
{
    const TlExpr *x = tl_ea_node(&p->ea, e);
    uint32_t n = x->n_args;
    if (x->kind == TL_X_COL) {
        *out = e;
        if (x->col < from) return TL_OK;
        *out = tl_plan_expr(p, list, (uint32_t)(x->col - from));
        if (n_in < 0 || !tl_expr_reads_from(&p->ea, *out, n_in)) return TL_OK;
        if (--*budget < 0) {
            *out = TL_NO_ID;
            return TL_OK;
        }
        return subst(p, *out, list, n_in, n_in, budget, out, err);
    }
    if (n == 0) {
        *out = e;
        return TL_OK;
    }
    TlExprId small[8], *args = n <= 8 ? small : tl_malloc(n * sizeof *args);
    bool changed = false;
    TlStatus st = TL_OK;
    if (!args) return tl_error_oom(err);
    for (uint32_t i = 0; i < n && st == TL_OK; i++) {
        TlExprId a = tl_ea_arg(&p->ea, tl_ea_node(&p->ea, e), i);
        st = subst(p, a, list, from, n_in, budget, &args[i], err);
        if (args[i] == TL_NO_ID) {
            *out = TL_NO_ID;
            if (args != small) tl_free(args);
            return st;
        }
        if (args[i] != a) changed = true;
    }
    if (st == TL_OK && changed) {
        TlExpr t = *tl_ea_node(&p->ea, e);
        st = tl_ea_push(&p->ea, &t, args, n, out, err);
    } else if (st == TL_OK) {
        *out = e;
    }
    if (args != small) tl_free(args);
    return st;
}

static const char *kind_name(TlPlanKind k)
{
    switch (k) {
    case TL_PLAN_PROJECT: return "project";
    case TL_PLAN_SORT: return "sort";
    case TL_PLAN_AGGREGATE: return "aggregate";
    default: return "node";
    }
}

/* Whether evaluating e can fail on some row (integer arithmetic, casts,
 * functions): a conservative whitelist of what never fails. */
static bool may_fail(const TlExprArena *ea, TlExprId e)
{
    const TlExpr *x = tl_ea_node(ea, e);
    if (x->kind == TL_X_CAST && !(x->flags & TL_XF_TRY)) return true;
    if (x->kind == TL_X_CALL) {
        switch ((TlOp)x->op) {
        case TL_OP_AND: case TL_OP_OR: case TL_OP_NOT: case TL_OP_EQ:
        case TL_OP_NE: case TL_OP_LT: case TL_OP_LE: case TL_OP_GT:
        case TL_OP_GE: case TL_OP_IS_NULL: case TL_OP_BETWEEN:
        case TL_OP_IF: case TL_OP_COALESCE: case TL_OP_CONCAT_OP:
            break;
        case TL_OP_ADD: case TL_OP_SUB: case TL_OP_MUL: case TL_OP_DIV:
            if (x->type != TL_TFLOAT64) return true;
            break;
        default:
            return true;
        }
    }
    for (uint32_t i = 0; i < x->n_args; i++)
        if (may_fail(ea, tl_ea_arg(ea, x, i))) return true;
    return false;
}

/* Which join columns e reads: bit 1 left (< nl), bit 2 right. */
static int sides(const TlExprArena *ea, TlExprId e, int nl)
{
    const TlExpr *x = tl_ea_node(ea, e);
    int m = 0;
    if (x->kind == TL_X_COL && x->col >= 0) m |= x->col < nl ? 1 : 2;
    for (uint32_t i = 0; i < x->n_args; i++) m |= sides(ea, tl_ea_arg(ea, x, i), nl);
    return m;
}

/* e with column nl + j replaced by a reference to right column rcols[j]. */
static TlStatus to_right(TlPlan *p, TlExprId e, int nl, uint32_t rcols,
                         const TlSchema *rs, TlExprId *out, TlError *err)
{
    const TlExpr *x = tl_ea_node(&p->ea, e);
    uint32_t n = x->n_args;
    if (x->kind == TL_X_COL) {
        TlExpr t = *x;
        if (x->col < nl) { *out = e; return TL_OK; }
        t.col = tl_plan_int(p, rcols, (uint32_t)(x->col - nl));
        /* named as on the right side (not "product_right") */
        t.name = tl_strpool_dup(&p->ea.pool, rs->fields[t.col].name,
                                strlen(rs->fields[t.col].name));
        if (!t.name) return tl_error_oom(err);
        return tl_ea_push(&p->ea, &t, NULL, 0, out, err);
    }
    if (n == 0) { *out = e; return TL_OK; }
    TlExprId small[8], *args = n <= 8 ? small : tl_malloc(n * sizeof *args);
    TlStatus st = TL_OK;
    if (!args) return tl_error_oom(err);
    for (uint32_t i = 0; i < n && st == TL_OK; i++)
        st = to_right(p, tl_ea_arg(&p->ea, tl_ea_node(&p->ea, e), i), nl, rcols,
                      rs, &args[i], err);
    if (st == TL_OK) {
        TlExpr t = *tl_ea_node(&p->ea, e);
        st = tl_ea_push(&p->ea, &t, args, n, out, err);
    }
    if (args != small) tl_free(args);
    return st;
}

static TlStatus sink_join(Push *ps, TlPlanId f, TlExprId e, TlPlanId j,
                          TlPlanId *out);
static TlStatus sink(Push *ps, TlPlanId f, TlExprId e, TlPlanId c, TlPlanId *out);

/* Where conjunct x may go at node c (an aggregate or a join): 0 stays above,
 * 1 below the aggregate / into the left side, 2 into the right side. */
static int conj_side(Push *ps, TlExprId x, TlPlanId c)
{
    TlPlan *p = ps->p;
    const TlPlanNode *cn = tl_plan_node(p, c);
    if (cn->kind == TL_PLAN_AGGREGATE)
        return cn->n_exprs > 0 && only_keys(&p->ea, x, cn->n_exprs, cn->schema);
    if (cn->kind == TL_PLAN_JOIN && cn->right != TL_NO_ID) {
        int nl = tl_plan_node(p, cn->child)->schema->n_fields;
        int m = sides(&p->ea, x, nl);
        bool subset = cn->how == TL_JOIN_INNER || cn->how == TL_JOIN_SEMI ||
                      cn->how == TL_JOIN_ANTI;
        bool safe = !may_fail(&p->ea, x);
        if (m == 1 && (cn->how == TL_JOIN_LEFT || (subset && safe))) return 1;
        if (m == 2 && cn->how == TL_JOIN_INNER && safe) return 2;
    }
    return 0;
}

static bool is_and(const TlExpr *x)
{
    return x->kind == TL_X_CALL && x->op == TL_OP_AND && x->n_args == 2;
}

static bool flatten(const TlExprArena *ea, TlExprId e, TlExprId *v, int *n)
{
    const TlExpr *x = tl_ea_node(ea, e);
    if (is_and(x))
        return flatten(ea, tl_ea_arg(ea, x, 0), v, n) &&
               flatten(ea, tl_ea_arg(ea, x, 1), v, n);
    if (*n >= MAX_CONJ) return false;
    v[(*n)++] = e;
    return true;
}

/* acc and x (acc TL_NO_ID: x), spanned like tmpl. */
static TlStatus and_push(TlPlan *p, TlExprId tmpl, TlExprId acc, TlExprId x,
                         TlExprId *out, TlError *err)
{
    TlExpr t = *tl_ea_node(&p->ea, tmpl);
    TlExprId args[2] = {acc, x};
    if (acc == TL_NO_ID) {
        *out = x;
        return TL_OK;
    }
    return tl_ea_push(&p->ea, &t, args, 2, out, err);
}

/* A filter `c1 and c2 and ...` that cannot pass aggregate/join c whole:
 * the conjuncts that may pass go below (per side), the rest stays above, in
 * their written order.  Splitting is safe: filter A then filter B evaluates
 * B on the rows where A is true, a subset of where the lazy `A and B`
 * evaluates it.  A conjunct that can fail moves only when every conjunct
 * before it moves too, so a guard always runs first.  *done false: nothing
 * moves. */
static TlStatus split_at(Push *ps, TlPlanId f, TlExprId e, TlPlanId c,
                         TlPlanId *out, bool *done)
{
    TlPlan *p = ps->p;
    TlExprId v[MAX_CONJ], part[3] = {TL_NO_ID, TL_NO_ID, TL_NO_ID};
    int n = 0, moved = 0;
    bool prefix = true;
    TlPlanId cur = c;
    TlStatus st = TL_OK;

    *done = false;
    if (ps->splits > 8 || !is_and(tl_ea_node(&p->ea, e)) ||
        !flatten(&p->ea, e, v, &n))
        return TL_OK;
    for (int i = 0; i < n; i++) {
        int side = conj_side(ps, v[i], c);
        if (side && !prefix && may_fail(&p->ea, v[i])) side = 0;
        if (!side) prefix = false;
        else moved++;
        TL_TRY(and_push(p, e, part[side], v[i], &part[side], ps->err));
    }
    if (moved == 0) return TL_OK;
    TL_TRY(tl_opt_note(p, ps->err, "split-filter: %d of %d conjuncts move below %s",
                       moved, n, tl_plan_node(p, c)->kind == TL_PLAN_JOIN
                                     ? "join" : "aggregate"));
    ps->splits++;
    if (part[1] != TL_NO_ID) st = sink(ps, f, part[1], cur, &cur);
    if (st == TL_OK && part[2] != TL_NO_ID) st = sink(ps, f, part[2], cur, &cur);
    ps->splits--;
    TL_TRY(st);
    if (part[0] != TL_NO_ID) {
        uint32_t start;
        TlPlanId id;
        TL_TRY(tl_plan_push_ids(p, &part[0], 1, &start, ps->err));
        TL_TRY(tl_opt_copy_node(p, f, cur, &id, ps->err));
        tl_plan_node(p, id)->exprs = start;
        tl_plan_node(p, id)->schema = tl_plan_node(p, cur)->schema;
        cur = id;
    }
    *out = cur;
    *done = true;
    return TL_OK;
}

/* Filter f with predicate e (over c's output) placed at or below c. */
static TlStatus sink(Push *ps, TlPlanId f, TlExprId e, TlPlanId c, TlPlanId *out)
{
    TlPlan *p = ps->p;
    const TlPlanNode *cn = tl_plan_node(p, c);
    TlPlanKind k = (TlPlanKind)cn->kind;
    bool pass = false;
    TlExprId below_e = e;
    int64_t cost = 1;

    if (ps->copies < MAX_COPIES) {
        if (k == TL_PLAN_PROJECT && cn->n_guards == 0) {
            int64_t budget = MAX_GROWN;
            int n_in = tl_plan_node(p, cn->child)->schema->n_fields;
            TL_TRY(subst(p, e, cn->exprs, 0, n_in, &budget, &below_e, ps->err));
            cost = below_e == TL_NO_ID ? MAX_COPIES : expr_size(&p->ea, below_e, MAX_COPIES);
            pass = below_e != TL_NO_ID && (cost <= MAX_GROWN ||
                                           cost <= expr_size(&p->ea, e, MAX_COPIES));
        } else if (k == TL_PLAN_SORT && cn->limit < 0) {
            pass = true;
        } else if (k == TL_PLAN_AGGREGATE && cn->n_exprs > 0 &&
                   only_keys(&p->ea, e, cn->n_exprs, cn->schema)) {
            pass = true;
            TL_TRY(subst(p, e, cn->exprs, 0, -1, NULL, &below_e, ps->err));
        } else if (k == TL_PLAN_JOIN && cn->right != TL_NO_ID) {
            return sink_join(ps, f, e, c, out);
        }
    }
    if (pass) {
        TlPlanId below;
        char buf[160];
        size_t n = tl_expr_print(&p->ea, e, buf, sizeof buf);
        TL_TRY(tl_opt_note(p, ps->err, "pushdown-filter: %s%s moved below %s",
                           buf, n >= sizeof buf ? "..." : "", kind_name(k)));
        ps->copies += cost;
        TL_TRY(sink(ps, f, below_e, tl_plan_node(p, c)->child, &below));
        return tl_opt_copy_node(p, c, below, out, ps->err);
    }
    if (k == TL_PLAN_AGGREGATE && ps->copies < MAX_COPIES) {
        bool done;
        TL_TRY(split_at(ps, f, e, c, out, &done));
        if (done) return TL_OK;
    }
    if (tl_plan_node(p, f)->child == c &&
        tl_plan_expr(p, tl_plan_node(p, f)->exprs, 0) == e) {
        *out = f; /* where it was */
        return TL_OK;
    }
    {
        uint32_t start;
        TL_TRY(tl_plan_push_ids(p, &e, 1, &start, ps->err));
        TL_TRY(tl_opt_copy_node(p, f, c, out, ps->err));
        TlPlanNode *nn = tl_plan_node(p, *out);
        nn->exprs = start;
        nn->n_exprs = 1;
        nn->schema = tl_plan_node(p, c)->schema;
    }
    return TL_OK;
}

/* A filter over join j: a predicate that reads one side only moves into
 * that side (and sinks further there):
 *
 *   inner, semi, anti   left or right side, when the predicate cannot
 *                       fail: the join drops unmatched rows, so the side
 *                       has rows the plan as written never evaluates it on
 *   left                left side only, even when it can fail: every left
 *                       row reaches the output at least once.  Filtering
 *                       the right side would null-extend rows instead of
 *                       dropping them
 *   right, full         stays above
 *
 * A predicate reading both sides (or none) stays above the join. */
static TlStatus sink_join(Push *ps, TlPlanId f, TlExprId e, TlPlanId j,
                          TlPlanId *out)
{
    TlPlan *p = ps->p;
    const TlPlanNode *jn = tl_plan_node(p, j);
    int nl = tl_plan_node(p, jn->child)->schema->n_fields;
    int m = sides(&p->ea, e, nl);
    uint8_t how = jn->how;
    bool subset = how == TL_JOIN_INNER || how == TL_JOIN_SEMI || how == TL_JOIN_ANTI;
    bool safe = !may_fail(&p->ea, e);
    TlPlanNode copy = *jn;
    if (m == 1 && (how == TL_JOIN_LEFT || (subset && safe))) {
        TL_TRY(tl_opt_note(p, ps->err, "pushdown-filter: a predicate moved into the left side of a join"));
        TL_TRY(sink(ps, f, e, jn->child, &copy.child));
    } else if (m == 2 && how == TL_JOIN_INNER && safe) {
        TlExprId re;
        TL_TRY(to_right(p, e, nl, jn->rcols, tl_plan_node(p, jn->right)->schema,
                        &re, ps->err));
        TL_TRY(tl_opt_note(p, ps->err, "pushdown-filter: a predicate moved into the right side of a join"));
        TL_TRY(sink(ps, f, re, jn->right, &copy.right));
    } else {
        uint32_t start;
        bool done;
        TL_TRY(split_at(ps, f, e, j, out, &done));
        if (done) return TL_OK;
        if (tl_plan_node(p, f)->child == j &&
            tl_plan_expr(p, tl_plan_node(p, f)->exprs, 0) == e) {
            *out = f;
            return TL_OK;
        }
        TL_TRY(tl_plan_push_ids(p, &e, 1, &start, ps->err));
        TL_TRY(tl_opt_copy_node(p, f, j, out, ps->err));
        tl_plan_node(p, *out)->exprs = start;
        tl_plan_node(p, *out)->schema = tl_plan_node(p, j)->schema;
        return TL_OK;
    }
    ps->copies++;
    TL_TRY(tl_arena_push(&p->nodes, out, ps->err));
    *tl_plan_node(p, *out) = copy;
    return TL_OK;
}

/* The leading guards of project n (plan.h: filters inside a run of `with`
 * items) leave it as filters that sink below it, each substituted as a
 * filter over the project would be, while that is valid and within the
 * bounds: the first guard saw every input row of the project, as a filter
 * below it does, and each later one sees the rows the guards before it
 * kept, as a filter over theirs does.  A guard that cannot move keeps
 * every later one in the project (filters keep their order).  *c is the
 * project's (rewritten) child, replaced by the filters over it. */
static TlStatus unguard(Push *ps, TlPlanNode *n, TlPlanId *c)
{
    TlPlan *p = ps->p;
    int n_in = tl_plan_node(p, *c)->schema->n_fields;
    uint32_t g = 0;
    for (; g < n->n_guards && ps->copies < MAX_COPIES; g++) {
        TlExprId e = tl_plan_expr(p, n->guards, g), below_e;
        int64_t budget = MAX_GROWN, cost;
        TlPlanId f;
        uint32_t start;
        char buf[160];
        TL_TRY(subst(p, e, n->exprs, n_in, n_in, &budget, &below_e, ps->err));
        if (below_e == TL_NO_ID) break;
        cost = expr_size(&p->ea, below_e, MAX_COPIES);
        if (cost > MAX_GROWN && cost > expr_size(&p->ea, e, MAX_COPIES)) break;
        size_t len = tl_expr_print(&p->ea, e, buf, sizeof buf);
        TL_TRY(tl_opt_note(p, ps->err, "pushdown-filter: %s%s moved out of project",
                           buf, len >= sizeof buf ? "..." : ""));
        ps->copies += cost;
        TL_TRY(tl_plan_push_ids(p, &below_e, 1, &start, ps->err));
        TL_TRY(tl_plan_push(p, TL_PLAN_FILTER, *c, &f, ps->err));
        tl_plan_node(p, f)->exprs = start;
        tl_plan_node(p, f)->n_exprs = 1;
        TL_TRY(sink(ps, f, below_e, *c, c));
    }
    n->guards += g;
    n->guard_at += g;
    n->n_guards -= g;
    return TL_OK;
}

static TlStatus walk(Push *ps, TlPlanId id, TlPlanId *out)
{
    TlPlan *p = ps->p;
    TlPlanNode n = *tl_plan_node(p, id);
    TlPlanId c = n.child, r = n.right;
    if (n.child != TL_NO_ID) TL_TRY(walk(ps, n.child, &c));
    if (n.right != TL_NO_ID) TL_TRY(walk(ps, n.right, &r));
    if (n.kind == TL_PLAN_PROJECT && n.n_guards > 0) TL_TRY(unguard(ps, &n, &c));
    if (n.kind == TL_PLAN_FILTER) {
        TlExprId e = tl_plan_expr(p, n.exprs, 0);
        return sink(ps, id, e, c, out);
    }
    if (c == n.child && r == n.right) {
        *out = id;
        return TL_OK;
    }
    n.child = c;
    n.right = r;
    TL_TRY(tl_arena_push(&p->nodes, out, ps->err));
    *tl_plan_node(p, *out) = n;
    return TL_OK;
}

/* See rules.h. */
TlStatus tl_opt_pushdown_filter(TlPlan *p, TlPlanId root, TlPlanId *out,
                                TlError *err)
{
    Push ps = {p, err, 0, 0};
    return walk(&ps, root, out);
}
