/*
 * simplify.c -- expression rewrites to a fixed point.
 *
 * Each rule looks at one node and returns a replacement or nothing.  The
 * driver (simp) walks an expression bottom-up: it simplifies the children,
 * re-pushes the node if a child changed, then tries the rules on the node;
 * when one fires, the replacement is simplified again (its new children,
 * e.g. the NOTs De Morgan makes, get their turn), until no rule applies.
 * Nothing is edited in place: rewrites push new nodes and re-point ids.
 *
 * Context.  The driver tracks one bit: whether a node is a filter predicate
 * reached from the filter only through AND/OR.  There, null and false are
 * the same (the filter drops both), so more rules hold.  A NOT, a CASE or
 * any function argument ends the context: under NOT, null and false differ.
 *
 * Rules (name in the `explain --verbose` log; [pred]: filter context only):
 *
 *   fold              an operator, cast, IN or CASE over literals only is
 *                     evaluated once with tl_eval over a one-row batch, i.e.
 *                     with the runtime's own semantics; when that fails
 *                     (overflow, bad cast, sqrt(-1)...) it is left for run
 *                     time, so the error still comes only if a row reaches it
 *   and-true          x and true -> x
 *   or-false          x or false -> x
 *   true-and    [pred] true and x -> x;   false or x, null or x, x or null -> x
 *   and-false   [pred] x and false, false and x, x and null, null and x -> false
 *   or-true     [pred] x or true, true or x -> true
 *   and-not     [pred] A and not A -> false  (A null: null, dropped as false)
 *   contradiction [pred] two comparisons of the same operands whose case
 *                     sets over {<, =, >} do not meet -> false, e.g.
 *                     x > 5 and x <= 5 ({>} & {<,=} = {}); x is null and x
 *                     is not null -> false.  Conjuncts of nested ANDs on
 *                     both sides are compared pairwise.
 *   not-not           not not x -> x  (Kleene: not not null = null)
 *   de-morgan         not (a and b) -> not a or not b; not (a or b) ->
 *                     not a and not b  (holds in three-valued logic)
 *   not-compare       not a < b -> a >= b, and so on for = != <= > >=.
 *                     Valid because every type is totally ordered by the
 *                     compare kernel (floats: NaN equals NaN and is greatest,
 *                     -0.0 = 0.0; kernels/compare.c computes ge as !lt), and
 *                     a null operand gives null on both sides
 *   not-flag          not (x is null / between / [i]like / in) -> the negated
 *                     form (eval computes those as the Kleene not of the
 *                     positive form)
 *   case-const        case/if branches with a literal condition: true ->
 *                     that branch ends the case; false or null -> dropped;
 *                     coalesce(literal, ...) with a non-null first literal
 *
 * Literal chains.  `'a' || 'b' || 'c' ...` is parsed left-deep, and folding
 * it node by node would copy its growing prefix once per term (quadratic in
 * the chain's length).  The driver first regroups the chain's leading run
 * of string literals into a balanced tree (|| over strings is associative,
 * nulls included), which folds with each byte copied log n times.
 *
 * No identities like x + 0 -> x or x * 1 -> x: they change -0.0 and types.
 * Every replacement has the node's type.
 *
 * Termination.  Order the trees by (M1, M2): M1 = sum over NOT nodes of the
 * number of non-NOT nodes under them, M2 = the number of nodes.  De Morgan
 * lowers M1 by one (the AND/OR leaves the NOT's operand; ancestors see the
 * same non-NOT count) while M2 grows by one; not-compare, not-not and
 * not-flag lower M1; every other rule removes nodes without adding a NOT, so
 * M1 does not grow and M2 falls.  Casts come from resolve (coercion), once
 * per node; no rule adds, removes-and-re-adds or moves a cast (fold only
 * replaces a cast of a literal by its value), so the loop ends.
 */
#include "rules.h"

#include "../expr/eval.h"

#include <stdio.h>
#include <string.h>

typedef struct Simp {
    TlPlan *p;
    const char *where;
    TlError *err;
    TlExprId spine;     /* the || node below a || node simp is in */
} Simp;

#define MAX_CONJ 64

static const TlExpr *nd(const Simp *s, TlExprId id) { return tl_ea_node(&s->p->ea, id); }
static TlExprId arg(const Simp *s, TlExprId id, uint32_t i)
{
    return tl_ea_arg(&s->p->ea, nd(s, id), i);
}

static bool is_call(const TlExpr *x, TlOp op)
{
    return x->kind == TL_X_CALL && x->op == op;
}
static bool is_bool(const TlExpr *x, bool v)
{
    return x->kind == TL_X_LIT && x->lit_type == TL_TBOOL && x->v.b == v;
}
static bool is_null(const TlExpr *x)
{
    return x->kind == TL_X_LIT && x->lit_type == TL_TNULL;
}
static bool is_cmp(const TlExpr *x)
{
    return x->kind == TL_X_CALL && x->op >= TL_OP_EQ && x->op <= TL_OP_GE;
}

/* The case set of a comparison over {<, =, >}: bit 1 <, 2 =, 4 >. */
static int case_set(TlOp op)
{
    switch (op) {
    case TL_OP_LT: return 1;
    case TL_OP_LE: return 3;
    case TL_OP_EQ: return 2;
    case TL_OP_NE: return 5;
    case TL_OP_GT: return 4;
    default: return 6; /* GE */
    }
}
/* The set for swapped operands (a < b is b > a). */
static int mirror_set(int m) { return (m & 2) | ((m & 1) << 2) | ((m & 4) >> 2); }

static TlOp negate_cmp(TlOp op)
{
    switch (op) {
    case TL_OP_EQ: return TL_OP_NE;
    case TL_OP_NE: return TL_OP_EQ;
    case TL_OP_LT: return TL_OP_GE;
    case TL_OP_LE: return TL_OP_GT;
    case TL_OP_GT: return TL_OP_LE;
    default: return TL_OP_LT; /* GE */
    }
}

/* ------------------------------------------------------------ building */

/* A node like tmpl (same span) with new kind-specific fields. */
static TlStatus push_like(Simp *s, TlExprId tmpl, TlExprKind kind, TlOp op,
                          uint8_t flags, const TlExprId *args, uint32_t n,
                          TlExprId *out)
{
    TlExpr t = *nd(s, tmpl);
    t.kind = (uint8_t)kind;
    t.op = (uint16_t)op;
    t.flags = flags;
    return tl_ea_push(&s->p->ea, &t, args, n, out, s->err);
}

static TlStatus push_bool(Simp *s, TlExprId tmpl, bool v, TlExprId *out)
{
    TlExpr t = *nd(s, tmpl);
    t.kind = TL_X_LIT;
    t.type = t.lit_type = TL_TBOOL;
    t.flags = 0;
    t.op = 0;
    t.col = -1;
    t.name = NULL;
    t.v.b = v;
    return tl_ea_push(&s->p->ea, &t, NULL, 0, out, s->err);
}

/* Row 0 of a as a literal with tmpl's span and type. */
static TlStatus push_value(Simp *s, TlExprId tmpl, const TlArray *a,
                           TlExprId *out)
{
    TlExpr t = *nd(s, tmpl);
    t.kind = TL_X_LIT;
    t.flags = 0;
    t.op = 0;
    t.col = -1;
    t.name = NULL;
    memset(&t.v, 0, sizeof t.v);
    if (!tl_array_valid(a, 0)) {
        t.lit_type = TL_TNULL;
    } else {
        t.lit_type = (uint8_t)a->type;
        switch (a->type) {
        case TL_TBOOL: t.v.b = tl_array_bool(a, 0); break;
        case TL_TINT64:
        case TL_TTIMESTAMP: case TL_TTIMESTAMPTZ: t.v.i = tl_array_i64(a)[0]; break;
        case TL_TFLOAT64: t.v.f = tl_array_f64(a)[0]; break;
        case TL_TDATE: t.v.d = tl_array_i32(a)[0]; break;
        case TL_TSTRING: {
            const TlView *v = &tl_array_views(a)[0];
            uint32_t n = tl_view_len(*v);
            const char *d = tl_strpool_dup(&s->p->ea.pool,
                                           (const char *)tl_view_ptr(v, a->data), n);
            if (!d) return tl_error_oom(s->err);
            t.v.str.s = d;
            t.v.str.n = n;
            break;
        }
        default: t.lit_type = TL_TNULL; break;
        }
    }
    return tl_ea_push(&s->p->ea, &t, NULL, 0, out, s->err);
}

/* ---------------------------------------------------------------- rules */

/* fold: evaluate a literal-only node once; *out TL_NO_ID when it is not
 * foldable or evaluation fails (left for run time). */
static TlStatus rule_fold(Simp *s, TlExprId id, TlExprId *out)
{
    const TlExpr *x = nd(s, id);
    TlSchema empty;
    TlBatch *b;
    TlArray *a = NULL;
    TlError e2;
    TlStatus st;

    if (x->n_args == 0 || x->kind == TL_X_COL || x->kind == TL_X_LIT) return TL_OK;
    if (x->kind == TL_X_CALL && tl_op_is_agg((TlOp)x->op)) return TL_OK;
    /* an interval is not a string value: it stays what it was written as */
    if (x->kind == TL_X_CALL && x->op == TL_OP_INTERVAL) return TL_OK;
    for (uint32_t i = 0; i < x->n_args; i++)
        if (nd(s, arg(s, id, i))->kind != TL_X_LIT) return TL_OK;
    memset(&empty, 0, sizeof empty);
    memset(&e2, 0, sizeof e2);
    if (!(b = tl_batch_new(&empty, 0, 1))) return tl_error_oom(s->err);
    st = tl_eval(&s->p->ea, id, b, &a, &e2);
    tl_batch_free(b);
    if (st == TL_ERR_OOM) return tl_error_oom(s->err);
    if (st != TL_OK) return TL_OK; /* an error: the run reports it, if reached */
    if (a->length == 1 && (a->type == x->type || a->type == TL_TNULL))
        st = push_value(s, id, a, out);
    tl_array_release(a);
    return st;
}

/* Flatten the conjuncts of e (nested ANDs) into v; false when too many. */
static bool conjuncts(const Simp *s, TlExprId e, TlExprId *v, int *n)
{
    if (is_call(nd(s, e), TL_OP_AND))
        return conjuncts(s, arg(s, e, 0), v, n) && conjuncts(s, arg(s, e, 1), v, n);
    if (*n >= MAX_CONJ) return false;
    v[(*n)++] = e;
    return true;
}

static bool equal(const Simp *s, TlExprId a, TlExprId b)
{
    return tl_expr_equal(&s->p->ea, a, b);
}

/* Whether a and b cannot both be true; *rule names why. */
static bool exclusive(const Simp *s, TlExprId a, TlExprId b, const char **rule)
{
    const TlExpr *x = nd(s, a), *y = nd(s, b);
    if (is_call(y, TL_OP_NOT) && equal(s, a, arg(s, b, 0))) {
        *rule = "and-not";
        return true;
    }
    if (is_call(x, TL_OP_NOT) && equal(s, b, arg(s, a, 0))) {
        *rule = "and-not";
        return true;
    }
    *rule = "contradiction";
    if (is_call(x, TL_OP_IS_NULL) && is_call(y, TL_OP_IS_NULL) &&
        (x->flags & TL_XF_NOT) != (y->flags & TL_XF_NOT) &&
        equal(s, arg(s, a, 0), arg(s, b, 0)))
        return true;
    if (is_cmp(x) && is_cmp(y)) {
        int m1 = case_set((TlOp)x->op), m2 = case_set((TlOp)y->op);
        TlExprId a0 = arg(s, a, 0), a1 = arg(s, a, 1);
        TlExprId b0 = arg(s, b, 0), b1 = arg(s, b, 1);
        if (equal(s, a0, b0) && equal(s, a1, b1)) return (m1 & m2) == 0;
        if (equal(s, a0, b1) && equal(s, a1, b0)) return (m1 & mirror_set(m2)) == 0;
    }
    return false;
}

/* Try every rule on node id; *out the replacement or TL_NO_ID. */
__attribute__((noinline)) static TlStatus rules(Simp *s, TlExprId id, bool pred, TlExprId *out,
                      const char **rule)
{
    const TlExpr *x = nd(s, id);
    TlOp op = (TlOp)x->op;
    *out = TL_NO_ID;

    *rule = "fold";
    TL_TRY(rule_fold(s, id, out));
    if (*out != TL_NO_ID) return TL_OK;
    x = nd(s, id);

    if (x->kind == TL_X_CALL && (op == TL_OP_AND || op == TL_OP_OR) && x->n_args == 2) {
        TlExprId a = arg(s, id, 0), b = arg(s, id, 1);
        const TlExpr *xa = nd(s, a), *xb = nd(s, b);
        bool is_and = op == TL_OP_AND;
        /* anywhere: x and true -> x, x or false -> x */
        if (is_bool(xb, is_and) && xa->type == x->type) {
            *rule = is_and ? "and-true" : "or-false";
            *out = a;
            return TL_OK;
        }
        if (!pred) return TL_OK;
        if (is_and) {
            if (is_bool(xa, false) || is_bool(xb, false) || is_null(xa) || is_null(xb)) {
                *rule = "and-false";
                return push_bool(s, id, false, out);
            }
            if (is_bool(xa, true)) {
                *rule = "true-and";
                *out = b;
                return TL_OK;
            }
            {
                TlExprId ca[MAX_CONJ], cb[MAX_CONJ];
                int na = 0, nb = 0;
                if (conjuncts(s, a, ca, &na) && conjuncts(s, b, cb, &nb))
                    for (int i = 0; i < na; i++)
                        for (int j = 0; j < nb; j++)
                            if (exclusive(s, ca[i], cb[j], rule))
                                return push_bool(s, id, false, out);
            }
        } else {
            if (is_bool(xa, true) || is_bool(xb, true)) {
                *rule = "or-true";
                return push_bool(s, id, true, out);
            }
            *rule = "true-and";
            if (is_bool(xa, false) || is_null(xa)) {
                *out = b;
                return TL_OK;
            }
            if (is_null(xb)) {
                *out = a;
                return TL_OK;
            }
        }
        return TL_OK;
    }

    if (x->kind == TL_X_CALL && op == TL_OP_NOT && x->n_args == 1) {
        TlExprId a = arg(s, id, 0);
        const TlExpr *xa = nd(s, a);
        if (is_call(xa, TL_OP_NOT) && nd(s, arg(s, a, 0))->type == x->type) {
            *rule = "not-not";
            *out = arg(s, a, 0);
            return TL_OK;
        }
        if ((is_call(xa, TL_OP_AND) || is_call(xa, TL_OP_OR)) && xa->n_args == 2 &&
            xa->type == x->type) {
            TlExprId v[2], r;
            TlOp other = xa->op == TL_OP_AND ? TL_OP_OR : TL_OP_AND;
            for (uint32_t i = 0; i < 2; i++) {
                TlExprId c = arg(s, a, i);
                TL_TRY(push_like(s, id, TL_X_CALL, TL_OP_NOT, 0, &c, 1, &v[i]));
                /* NOT of a null-typed operand stays null-typed */
                ((TlExpr *)nd(s, v[i]))->type = nd(s, c)->type;
            }
            TL_TRY(push_like(s, a, TL_X_CALL, other, 0, v, 2, &r));
            *rule = "de-morgan";
            *out = r;
            return TL_OK;
        }
        if (is_cmp(xa) && xa->type == x->type) {
            TlExprId v[2] = {arg(s, a, 0), arg(s, a, 1)};
            *rule = "not-compare";
            return push_like(s, a, TL_X_CALL, negate_cmp((TlOp)xa->op), xa->flags,
                             v, 2, out);
        }
        if ((is_call(xa, TL_OP_IS_NULL) || is_call(xa, TL_OP_BETWEEN) ||
             is_call(xa, TL_OP_LIKE) || is_call(xa, TL_OP_ILIKE) ||
             xa->kind == TL_X_IN) &&
            xa->type == x->type) {
            uint32_t n = xa->n_args;
            TlExprId small[8], *v = n <= 8 ? small : tl_malloc(n * sizeof *v);
            TlStatus st;
            if (!v) return tl_error_oom(s->err);
            for (uint32_t i = 0; i < n; i++) v[i] = arg(s, a, i);
            *rule = "not-flag";
            st = push_like(s, a, (TlExprKind)xa->kind, (TlOp)xa->op,
                           (uint8_t)(xa->flags ^ TL_XF_NOT), v, n, out);
            if (v != small) tl_free(v);
            return st;
        }
        return TL_OK;
    }

    /* case-const */
    if (x->kind == TL_X_CASE || (x->kind == TL_X_CALL && op == TL_OP_IF)) {
        bool has_else = x->kind == TL_X_CALL || (x->flags & TL_XF_ELSE);
        uint32_t n = x->n_args, pairs = has_else ? (n - 1) / 2 : n / 2;
        TlExprId *v = tl_malloc((n + 1) * sizeof *v);
        uint32_t k = 0;
        bool changed = false, ended = false;
        TlStatus st = TL_OK;
        *rule = "case-const";
        if (!v) return tl_error_oom(s->err);
        for (uint32_t i = 0; i < pairs && !ended; i++) {
            TlExprId w = arg(s, id, 2 * i), t = arg(s, id, 2 * i + 1);
            const TlExpr *xw = nd(s, w);
            if (is_bool(xw, false) || is_null(xw)) {
                changed = true;
            } else if (is_bool(xw, true)) {
                changed = true;
                ended = true;
                v[k++] = t; /* becomes the else */
            } else {
                v[k++] = w;
                v[k++] = t;
            }
        }
        if (!ended && has_else) v[k++] = arg(s, id, n - 1);
        if (changed) {
            bool else_now = ended || has_else;
            uint32_t np = else_now ? (k - 1) / 2 : k / 2;
            if (np == 0 && else_now) {
                if (nd(s, v[0])->type == x->type) *out = v[0];
            } else if (np == 0) {
                TlExpr t = *x;
                t.kind = TL_X_LIT;
                t.lit_type = TL_TNULL;
                t.flags = 0;
                t.op = 0;
                st = tl_ea_push(&s->p->ea, &t, NULL, 0, out, s->err);
            } else {
                /* an if becomes a case when it keeps a condition: only
                 * possible without change, so np > 0 means a case here */
                st = push_like(s, id, TL_X_CASE, TL_OP_NONE,
                               (uint8_t)((x->flags & ~TL_XF_ELSE) |
                                         (else_now ? TL_XF_ELSE : 0)),
                               v, k, out);
            }
        }
        tl_free(v);
        return st;
    }
    if (x->kind == TL_X_CALL && op == TL_OP_COALESCE && x->n_args >= 1) {
        TlExprId a = arg(s, id, 0);
        const TlExpr *xa = nd(s, a);
        if (xa->kind == TL_X_LIT && !is_null(xa) && xa->type == x->type) {
            *rule = "case-const";
            *out = a;
        }
        return TL_OK;
    }
    return TL_OK;
}

/* ------------------------------------------------------------- driver */

/* Not inlined (nor is rules): simp recurses once per level of the tree,
 * and their buffers would enlarge every level's frame. */
__attribute__((noinline)) static TlStatus note(Simp *s, const char *rule,
                                              TlExprId from, TlExprId to)
{
    char a[160], b[160];
    size_t na = tl_expr_print(&s->p->ea, from, a, sizeof a);
    size_t nb = tl_expr_print(&s->p->ea, to, b, sizeof b);
    return tl_opt_note(s->p, s->err, "%s in %s: %s%s -> %s%s", rule, s->where,
                       a, na >= sizeof a ? "..." : "", b,
                       nb >= sizeof b ? "..." : "");
}

/* Whether x is a string literal (null or not). */
static bool is_str_lit(const TlExpr *x)
{
    return x->kind == TL_X_LIT && x->type == TL_TSTRING;
}

/* The concatenation of terms v[0..n) (n >= 2) as a balanced tree of copies
 * of the chain's node tmpl. */
static TlStatus concat_tree(Simp *s, TlExprId tmpl, const TlExprId *v, uint32_t n,
                            TlExprId *out)
{
    TlExprId kids[2];
    uint32_t half = n / 2;
    if (n == 1) {
        *out = v[0];
        return TL_OK;
    }
    TL_TRY(concat_tree(s, tmpl, v, half, &kids[0]));
    TL_TRY(concat_tree(s, tmpl, v + half, n - half, &kids[1]));
    return push_like(s, tmpl, TL_X_CALL, TL_OP_CONCAT_OP, 0, kids, 2, out);
}

/* Literal chains (see the top): *e, a || node, with the run of string
 * literals that starts its left-deep chain regrouped as a balanced tree.
 * The chain's spine is walked without recursion. */
static TlStatus concat_chain(Simp *s, TlExprId *e)
{
    TlExprId *spine = NULL, *lits = NULL, cur = *e, sub;
    uint32_t n = 0, cap = 0, m = 0;
    TlStatus st = TL_OK;
    while (is_call(nd(s, cur), TL_OP_CONCAT_OP) && nd(s, cur)->n_args == 2) {
        if (n == cap) {
            uint32_t nc = cap ? 2 * cap : 16;
            TlExprId *t = tl_realloc(spine, nc * sizeof *t);
            if (!t) { st = tl_error_oom(s->err); goto done; }
            spine = t;
            cap = nc;
        }
        spine[n++] = cur;
        cur = arg(s, cur, 0);
    }
    /* terms: cur, then the right operands from the bottom of the spine up;
     * the leading literal run ends below spine[n - m] */
    if (n < 2 || !is_str_lit(nd(s, cur))) goto done;
    while (m < n && is_str_lit(nd(s, arg(s, spine[n - 1 - m], 1)))) m++;
    if (m < 2) goto done;
    if (!(lits = tl_malloc(((size_t)m + 1) * sizeof *lits))) {
        st = tl_error_oom(s->err);
        goto done;
    }
    lits[0] = cur;
    for (uint32_t i = 0; i < m; i++) lits[i + 1] = arg(s, spine[n - 1 - i], 1);
    if ((st = concat_tree(s, spine[n - m], lits, m + 1, &sub)) != TL_OK) goto done;
    /* the spine above the run, rebuilt over it */
    for (uint32_t i = n - m; i-- > 0 && st == TL_OK;) {
        TlExprId kids[2] = {sub, arg(s, spine[i], 1)};
        st = push_like(s, spine[i], TL_X_CALL, TL_OP_CONCAT_OP, 0, kids, 2, &sub);
    }
    if (st == TL_OK) *e = sub;
done:
    tl_free(spine);
    tl_free(lits);
    return st;
}

static TlStatus simp(Simp *s, TlExprId e, bool pred, TlExprId *out)
{
    /* a chain's top node regroups it; the nodes of its spine below do not
     * walk it again */
    bool in_spine = e == s->spine;
    s->spine = TL_NO_ID;
    if (!in_spine && is_call(nd(s, e), TL_OP_CONCAT_OP)) TL_TRY(concat_chain(s, &e));
    const TlExpr *x = nd(s, e);
    uint32_t n = x->n_args;
    bool child_pred = pred && (is_call(x, TL_OP_AND) || is_call(x, TL_OP_OR));
    bool concat = is_call(x, TL_OP_CONCAT_OP);
    TlExprId small[8], *args = small, cur = e, r;
    bool changed = false;
    TlStatus st = TL_OK;
    const char *rule = NULL;

    if (n > 8 && !(args = tl_malloc(n * sizeof *args))) return tl_error_oom(s->err);
    for (uint32_t i = 0; i < n && st == TL_OK; i++) {
        TlExprId a = arg(s, e, i);
        if (concat && i == 0) s->spine = a;
        st = simp(s, a, child_pred, &args[i]);
        if (args[i] != a) changed = true;
    }
    if (st == TL_OK && changed) {
        TlExpr t = *nd(s, e);
        st = tl_ea_push(&s->p->ea, &t, args, n, &cur, s->err);
    }
    if (args != small) tl_free(args);
    s->spine = TL_NO_ID;
    if (st == TL_OK) st = rules(s, cur, pred, &r, &rule);
    if (st == TL_OK && r != TL_NO_ID) {
        st = note(s, rule, cur, r);
        /* the replacement's new nodes get their turn (see the measure above) */
        if (st == TL_OK) st = simp(s, r, pred, &cur);
    }
    *out = cur;
    return st;
}

/* See rules.h. */
TlStatus tl_opt_simplify_expr(TlPlan *p, TlExprId e, bool in_pred,
                              const char *where, TlExprId *out, TlError *err)
{
    Simp s = {p, where, err, TL_NO_ID};
    return simp(&s, e, in_pred, out);
}

static const char *kind_name(TlPlanKind k)
{
    switch (k) {
    case TL_PLAN_FILTER: return "filter";
    case TL_PLAN_PROJECT: return "project";
    case TL_PLAN_AGGREGATE: return "aggregate";
    case TL_PLAN_SORT: return "sort";
    default: return "plan";
    }
}

/* Simplify list (start, n); *changed when an id moved. */
static TlStatus simp_list(TlPlan *p, uint32_t *start, uint32_t n, bool pred,
                          const char *where, bool *changed, TlError *err)
{
    TlExprId *v;
    bool any = false;
    TlStatus st = TL_OK;
    if (n == 0) return TL_OK;
    if (!(v = tl_malloc(n * sizeof *v))) return tl_error_oom(err);
    for (uint32_t i = 0; i < n && st == TL_OK; i++) {
        TlExprId e = tl_plan_expr(p, *start, i);
        st = tl_opt_simplify_expr(p, e, pred, where, &v[i], err);
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
TlStatus tl_opt_simplify(TlPlan *p, TlPlanId root, TlPlanId *out, TlError *err)
{
    TlPlanNode n = *tl_plan_node(p, root);
    const char *where = kind_name((TlPlanKind)n.kind);
    bool changed = false;
    if (n.child != TL_NO_ID) {
        TlPlanId c;
        TL_TRY(tl_opt_simplify(p, n.child, &c, err));
        if (c != n.child) {
            n.child = c;
            changed = true;
        }
    }
    if (n.right != TL_NO_ID) {
        TlPlanId c;
        TL_TRY(tl_opt_simplify(p, n.right, &c, err));
        if (c != n.right) {
            n.right = c;
            changed = true;
        }
    }
    TL_TRY(simp_list(p, &n.exprs, n.n_exprs, n.kind == TL_PLAN_FILTER, where,
                     &changed, err));
    TL_TRY(simp_list(p, &n.aggs, n.n_aggs, false, where, &changed, err));
    TL_TRY(simp_list(p, &n.guards, n.n_guards, true, where, &changed, err));
    if (n.kind == TL_PLAN_FILTER &&
        is_bool(tl_ea_node(&p->ea, tl_plan_expr(p, n.exprs, 0)), true)) {
        /* a filter that keeps every row is no filter */
        TL_TRY(tl_opt_note(p, err, "drop-filter: filter true"));
        *out = n.child;
        return TL_OK;
    }
    if (!changed) {
        *out = root;
        return TL_OK;
    }
    TL_TRY(tl_arena_push(&p->nodes, out, err));
    *tl_plan_node(p, *out) = n;
    return TL_OK;
}
