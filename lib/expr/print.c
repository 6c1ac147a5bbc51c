/*
 * print.c -- expression tree -> canonical text, and structural equality.
 *
 * The printed text is what `tally explain` shows and what the fuzzer feeds
 * back to the parser: parse(print(t)) is a tree equal to t (tl_expr_equal),
 * and print is a fixed point of that round trip.  That holds for the
 * balanced trees the parser makes of long `or` / `and` chains too (see
 * parser.c): their left spine is short enough to parse back left-deep, and
 * each right half prints in parentheses.  (Not when the chain's first term
 * is itself a long parenthesized chain of the same operator: printed without
 * its parentheses, it lengthens the spine; that tree parses back as an
 * equivalent one of another shape.)  The style:
 *
 *   - binary operators with single spaces; an operand is parenthesized only
 *     when the grammar needs it: a left operand binding looser than the
 *     operator, a right operand binding looser or equally (the grammar is
 *     left-associative), either operand of a comparison if it is one itself
 *     (comparisons do not chain): `a + b + c`, `a - (b - c)`, `(a + b) * c`;
 *   - keywords and function names lower case, canonical function names
 *     (`avg(x)` prints as `mean(x)`), `count(*)` kept;
 *   - casts as `cast(x as int64)` / `try_cast(...)` (never `::`);
 *   - the simple case form prints as the searched form it was desugared to;
 *   - literals: strings in single quotes with '' escapes; floats in the
 *     shortest round-trip form of tl_fmt_f64 (`1.0`, `1e+16`); infinities as
 *     `1e999` / `-1e999` (which parse back to them); NaN, which no literal
 *     spells, as cast('nan' as float64); `date '...'`, `timestamp '...'`;
 *   - unary minus in front of a number literal is written `-(5)`, since `-5`
 *     would parse as the literal -5;
 *   - columns bare when they are plain words and not keywords, else in
 *     double quotes with "" escapes.  Resolved columns print by name.
 *
 * tl_expr_equal compares kind, op, flags, types, literal values (floats by
 * bit pattern, so -0.0 != 0.0 and a NaN equals the same NaN) and column
 * names and indexes, recursively.  Both walks recurse over the tree, whose
 * height the parser bounds (TL_MAX_HEIGHT on a deep stack, TL_MAX_DEPTH
 * elsewhere: lib/dsl/dsl.h).
 */
#include "expr.h"

#include "../core/text.h"

#include <math.h>

typedef struct W {
    char *buf;
    size_t cap, len; /* len counts every byte, also those past cap */
} W;

static void put(W *w, const char *s, size_t n)
{
    if (w->len + 1 < w->cap) {
        size_t room = w->cap - 1 - w->len;
        memcpy(w->buf + w->len, s, n < room ? n : room);
    }
    w->len += n;
}

static void puts_(W *w, const char *s) { put(w, s, strlen(s)); }

/* s[0..n) in quotes q with q doubled. */
static void put_quoted(W *w, const char *s, size_t n, char q)
{
    put(w, &q, 1);
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == q) {
            put(w, s + from, i + 1 - from);
            put(w, &q, 1);
            from = i + 1;
        }
    }
    put(w, s + from, n - from);
    put(w, &q, 1);
}

enum { P_OR = 1, P_AND, P_NOT, P_CMP, P_CONCAT, P_ADD, P_MUL, P_UNARY, P_ATOM = 10 };

static int op_prec(TlOp op)
{
    switch (op) {
    case TL_OP_OR: return P_OR;
    case TL_OP_AND: return P_AND;
    case TL_OP_NOT: return P_NOT;
    case TL_OP_EQ: case TL_OP_NE: case TL_OP_LT: case TL_OP_LE: case TL_OP_GT:
    case TL_OP_GE: case TL_OP_IS_NULL: case TL_OP_BETWEEN: case TL_OP_LIKE:
    case TL_OP_ILIKE:
        return P_CMP;
    case TL_OP_CONCAT_OP: return P_CONCAT;
    case TL_OP_ADD: case TL_OP_SUB: return P_ADD;
    case TL_OP_MUL: case TL_OP_DIV: case TL_OP_IDIV: case TL_OP_MOD: return P_MUL;
    case TL_OP_NEG: return P_UNARY;
    default: return P_ATOM;
    }
}

static int prec(const TlExpr *e)
{
    if (e->kind == TL_X_CALL) return op_prec((TlOp)e->op);
    if (e->kind == TL_X_IN) return P_CMP;
    return P_ATOM;
}

static void print(const TlExprArena *ea, TlExprId id, W *w);

/* Print child i of e, in parentheses when paren is true. */
static void child(const TlExprArena *ea, const TlExpr *e, uint32_t i, bool paren, W *w)
{
    if (paren) put(w, "(", 1);
    print(ea, tl_ea_arg(ea, e, i), w);
    if (paren) put(w, ")", 1);
}

static int child_prec(const TlExprArena *ea, const TlExpr *e, uint32_t i)
{
    return prec(tl_ea_node(ea, tl_ea_arg(ea, e, i)));
}

static void print_lit(const TlExpr *e, W *w)
{
    char buf[TL_FMT_MAX];
    switch ((TlType)e->lit_type) {
    case TL_TNULL: puts_(w, "null"); break;
    case TL_TBOOL: puts_(w, e->v.b ? "true" : "false"); break;
    case TL_TINT64: put(w, buf, tl_fmt_i64(e->v.i, buf)); break;
    case TL_TFLOAT64:
        if (isnan(e->v.f)) puts_(w, "cast('nan' as float64)");
        else if (isinf(e->v.f)) puts_(w, e->v.f > 0 ? "1e999" : "-1e999");
        else put(w, buf, tl_fmt_f64(e->v.f, buf));
        break;
    case TL_TSTRING: put_quoted(w, e->v.str.s, e->v.str.n, '\''); break;
    case TL_TDATE:
        puts_(w, "date '");
        put(w, buf, tl_fmt_date(e->v.d, buf));
        puts_(w, "'");
        break;
    case TL_TTIMESTAMP:
        puts_(w, "timestamp '");
        put(w, buf, tl_fmt_timestamp(e->v.i, buf));
        puts_(w, "'");
        break;
    case TL_TTIMESTAMPTZ:
        puts_(w, "cast('");
        put(w, buf, tl_fmt_timestamptz(e->v.i, buf));
        puts_(w, "' as timestamptz)");
        break;
    default: puts_(w, "?"); break;
    }
}

static void print_call(const TlExprArena *ea, const TlExpr *e, W *w)
{
    TlOp op = (TlOp)e->op;
    const TlOpInfo *info = tl_op_info(op);
    int p = op_prec(op);
    bool not_ = e->flags & TL_XF_NOT;
    if (e->flags & TL_XF_MASK) { /* a filtered aggregate's argument */
        child(ea, e, 1, false, w);
        return;
    }
    switch (op) {
    case TL_OP_NOT:
        puts_(w, "not ");
        child(ea, e, 0, child_prec(ea, e, 0) < P_NOT, w);
        return;
    case TL_OP_NEG: {
        const TlExpr *x = tl_ea_node(ea, tl_ea_arg(ea, e, 0));
        bool number = x->kind == TL_X_LIT &&
                      (x->lit_type == TL_TINT64 || x->lit_type == TL_TFLOAT64);
        puts_(w, "-");
        child(ea, e, 0,
              number || prec(x) < P_UNARY || (x->kind == TL_X_CALL && x->op == TL_OP_NEG),
              w);
        return;
    }
    case TL_OP_IS_NULL:
        child(ea, e, 0, child_prec(ea, e, 0) <= P_CMP, w);
        puts_(w, not_ ? " is not null" : " is null");
        return;
    case TL_OP_BETWEEN:
        child(ea, e, 0, child_prec(ea, e, 0) <= P_CMP, w);
        puts_(w, not_ ? " not between " : " between ");
        child(ea, e, 1, child_prec(ea, e, 1) <= P_CMP, w);
        puts_(w, " and ");
        child(ea, e, 2, child_prec(ea, e, 2) <= P_CMP, w);
        return;
    case TL_OP_LIKE:
        child(ea, e, 0, child_prec(ea, e, 0) <= P_CMP, w);
        puts_(w, not_ ? " not like " : " like ");
        child(ea, e, 1, child_prec(ea, e, 1) <= P_CMP, w);
        return;
    case TL_OP_ILIKE:
        child(ea, e, 0, child_prec(ea, e, 0) <= P_CMP, w);
        puts_(w, not_ ? " not ilike " : " ilike ");
        child(ea, e, 1, child_prec(ea, e, 1) <= P_CMP, w);
        return;
    case TL_OP_INTERVAL:
        puts_(w, "interval ");
        child(ea, e, 0, false, w);
        return;
    default:
        break;
    }
    if (!info->is_function && e->n_args == 2) {
        int lp = child_prec(ea, e, 0);
        child(ea, e, 0, lp < p || (p == P_CMP && lp == P_CMP), w);
        puts_(w, " ");
        puts_(w, info->name);
        puts_(w, " ");
        child(ea, e, 1, child_prec(ea, e, 1) <= p, w);
        return;
    }
    puts_(w, info->name);
    puts_(w, "(");
    if (e->flags & TL_XF_STAR) puts_(w, "*");
    uint32_t n = e->n_args - ((e->flags & TL_XF_FILTER) && e->n_args ? 1 : 0);
    for (uint32_t i = 0; i < n; i++) {
        if (i) puts_(w, ", ");
        child(ea, e, i, false, w);
    }
    puts_(w, ")");
    if (n < e->n_args) {
        puts_(w, " filter (where ");
        child(ea, e, n, false, w);
        puts_(w, ")");
    }
}

static void print(const TlExprArena *ea, TlExprId id, W *w)
{
    const TlExpr *e = tl_ea_node(ea, id);
    switch ((TlExprKind)e->kind) {
    case TL_X_COL: {
        const char *n = e->name ? e->name : "";
        size_t len = strlen(n);
        if (tl_name_is_plain(n, len)) put(w, n, len);
        else put_quoted(w, n, len, '"');
        return;
    }
    case TL_X_LIT:
        print_lit(e, w);
        return;
    case TL_X_CALL:
        print_call(ea, e, w);
        return;
    case TL_X_CAST:
        puts_(w, e->flags & TL_XF_TRY ? "try_cast(" : "cast(");
        child(ea, e, 0, false, w);
        puts_(w, " as ");
        puts_(w, tl_type_name((TlType)e->lit_type));
        puts_(w, ")");
        return;
    case TL_X_CASE: {
        uint32_t n = e->n_args, pairs = (e->flags & TL_XF_ELSE) ? (n - 1) / 2 : n / 2;
        puts_(w, "case");
        for (uint32_t i = 0; i < pairs; i++) {
            puts_(w, " when ");
            child(ea, e, 2 * i, false, w);
            puts_(w, " then ");
            child(ea, e, 2 * i + 1, false, w);
        }
        if (e->flags & TL_XF_ELSE) {
            puts_(w, " else ");
            child(ea, e, n - 1, false, w);
        }
        puts_(w, " end");
        return;
    }
    case TL_X_IN:
        child(ea, e, 0, child_prec(ea, e, 0) <= P_CMP, w);
        puts_(w, e->flags & TL_XF_NOT ? " not in (" : " in (");
        for (uint32_t i = 1; i < e->n_args; i++) {
            if (i > 1) puts_(w, ", ");
            child(ea, e, i, false, w);
        }
        puts_(w, ")");
        return;
    }
    puts_(w, "?");
}

/* Print expression id canonically into buf (see the top of this file).
 * Returns the full length of the text, like snprintf: when that is >= cap
 * the output was cut to cap-1 bytes.  buf is NUL-terminated when cap > 0. */
size_t tl_expr_print(const TlExprArena *ea, TlExprId id, char *buf, size_t cap)
{
    W w = {buf, cap, 0};
    print(ea, id, &w);
    if (cap > 0) buf[w.len < cap ? w.len : cap - 1] = 0;
    return w.len;
}

/* Structural equality of trees a and b (see the top of this file). */
bool tl_expr_equal(const TlExprArena *ea, TlExprId a, TlExprId b)
{
    if (a == b) return true;
    const TlExpr *x = tl_ea_node(ea, a), *y = tl_ea_node(ea, b);
    if (x->kind != y->kind || x->type != y->type || x->lit_type != y->lit_type ||
        x->flags != y->flags || x->op != y->op || x->n_args != y->n_args ||
        x->col != y->col)
        return false;
    if (x->kind == TL_X_COL) {
        const char *p = x->name ? x->name : "", *q = y->name ? y->name : "";
        if (strcmp(p, q) != 0) return false;
    }
    if (x->kind == TL_X_LIT) {
        switch ((TlType)x->lit_type) {
        case TL_TBOOL:
            if (x->v.b != y->v.b) return false;
            break;
        case TL_TINT64:
        case TL_TTIMESTAMP:
        case TL_TTIMESTAMPTZ:
            if (x->v.i != y->v.i) return false;
            break;
        case TL_TFLOAT64:
            if (memcmp(&x->v.f, &y->v.f, sizeof x->v.f) != 0) return false;
            break;
        case TL_TDATE:
            if (x->v.d != y->v.d) return false;
            break;
        case TL_TSTRING:
            if (x->v.str.n != y->v.str.n ||
                (x->v.str.n && memcmp(x->v.str.s, y->v.str.s, x->v.str.n) != 0))
                return false;
            break;
        default:
            break;
        }
    }
    for (uint32_t i = 0; i < x->n_args; i++)
        if (!tl_expr_equal(ea, tl_ea_arg(ea, x, i), tl_ea_arg(ea, y, i))) return false;
    return true;
}
