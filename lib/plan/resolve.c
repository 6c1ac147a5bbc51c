/*
 * resolve.c -- names and types: from a parsed expression to one the
 * evaluator can run without asking a single question.
 *
 * tl_resolve_expr walks the tree bottom-up.  Leaves get their type (a
 * column from the input schema, bound by exact name; a literal from its
 * value), then every operator checks its argument types, makes them agree
 * by inserting implicit casts, and sets its own type.  After resolve:
 *
 *   - every node has its final type, every column its input index;
 *   - the arguments of an operator have exactly the types its kernel wants
 *     (both sides of a comparison one type, both sides of + one of int64 /
 *     float64, every branch of if/case/coalesce the result type, ...), so
 *     lib/expr/eval.c dispatches once per node on the node's own type;
 *   - a null literal where a type is wanted simply takes that type (its
 *     node's `type` is set; lit_type stays null), and any other argument
 *     of the wrong type gets a TL_X_CAST node pushed over it, with the
 *     argument's span so that errors still point at the user's text.
 *
 * Type rules (DuckDB's; man/tally.1, SEMANTICS):
 *
 *   common type   t, t -> t;  null, t -> t;  int64, float64 -> float64;
 *                 date, timestamp -> timestamp; nothing else mixes
 *   compare       args to their common type; a string LITERAL against a
 *                 date/timestamp is parsed to that type here, as DuckDB
 *                 does; otherwise mixing is `cannot compare A with B`
 *   + - * // %    int64 with int64 -> int64; with a float64 -> float64;
 *                 date + int64, int64 + date, date - int64 -> date;
 *                 date - date -> int64 (days)
 *   /             always float64
 *   ||            every argument cast to string
 *   and or not    bool (or null)
 *   if case       conditions bool; branches to their common type
 *   coalesce      arguments to their common type
 *   functions     kernels/fn.h decides (tl_k_fn_types)
 *   aggregates    only where allowed and never nested; see check_agg
 *
 * Resolving is idempotent: a resolved tree resolves to itself (casts it
 * inserted already have the wanted types), so a rewrite may resolve again.
 * The parser shares one node under several parents in `case x when ...`;
 * resolving such a node twice is harmless for the same reason.  Node
 * pointers are re-fetched after every push: the arena may move.
 */
#include "resolve.h"
#include "plan.h" /* TL_ROW_NUMBER_COL */
#include "../core/text.h"
#include "../../kernels/core_kernels.h"
#include "../../kernels/fn.h"

#include <stdarg.h>
#include <stdio.h>

typedef struct R {
    TlExprArena *ea;
    const TlSchema *in;
    bool allow_agg;
    TlError *err;
} R;

static inline TlExpr *N(const R *r, TlExprId id)
{
    return tl_ea_node(r->ea, id);
}

static inline TlExprId A(const R *r, TlExprId id, uint32_t i)
{
    return tl_ea_arg(r->ea, N(r, id), i);
}

static inline TlType T(const R *r, TlExprId id)
{
    return (TlType)N(r, id)->type;
}

static void set_arg(R *r, TlExprId id, uint32_t i, TlExprId child)
{
    *(TlExprId *)tl_arena_at(&r->ea->args, N(r, id)->args + i) = child;
}

/* A usage error with a caret under node id. */
static TlStatus fail_at(R *r, TlExprId id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static TlStatus fail_at(R *r, TlExprId id, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    const TlExpr *e = N(r, id);
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tl_error_at(r->err, TL_ERR_USAGE, r->ea, e->src, e->start, e->len,
                       "%s", msg);
}

static const char *op_name(const R *r, TlExprId id)
{
    return tl_op_info((TlOp)N(r, id)->op)->name;
}

/* The common type of a and b (see the header comment); false if none. */
static bool common_type(TlType a, TlType b, TlType *out)
{
    if (a == b || b == TL_TNULL) {
        *out = a;
        return true;
    }
    if (a == TL_TNULL) {
        *out = b;
        return true;
    }
    if ((a == TL_TINT64 && b == TL_TFLOAT64) ||
        (a == TL_TFLOAT64 && b == TL_TINT64)) {
        *out = TL_TFLOAT64;
        return true;
    }
    if ((a == TL_TDATE && b == TL_TTIMESTAMP) ||
        (a == TL_TTIMESTAMP && b == TL_TDATE)) {
        *out = TL_TTIMESTAMP;
        return true;
    }
    /* with an instant, a date or naive timestamp is read in UTC */
    if ((a == TL_TTIMESTAMPTZ && (b == TL_TDATE || b == TL_TTIMESTAMP)) ||
        (b == TL_TTIMESTAMPTZ && (a == TL_TDATE || a == TL_TTIMESTAMP))) {
        *out = TL_TTIMESTAMPTZ;
        return true;
    }
    return false;
}

static bool is_null_lit(const R *r, TlExprId id)
{
    const TlExpr *e = N(r, id);
    return e->kind == TL_X_LIT && e->lit_type == TL_TNULL;
}

static bool is_str_lit(const R *r, TlExprId id)
{
    const TlExpr *e = N(r, id);
    return e->kind == TL_X_LIT && e->lit_type == TL_TSTRING;
}

/* Make argument i of `id` have type t: a null literal takes t, anything
 * else gets an implicit cast. */
static TlStatus coerce(R *r, TlExprId id, uint32_t i, TlType t)
{
    TlExprId c = A(r, id, i), cast;
    TlExpr tmpl;
    if (T(r, c) == t) return TL_OK;
    if (is_null_lit(r, c)) {
        N(r, c)->type = (uint8_t)t;
        return TL_OK;
    }
    if (!tl_k_cast_allowed(T(r, c), t))
        return fail_at(r, c, "cannot cast %s to %s", tl_type_name(T(r, c)),
                       tl_type_name(t));
    memset(&tmpl, 0, sizeof tmpl);
    tmpl.kind = TL_X_CAST;
    tmpl.type = (uint8_t)t;
    tmpl.lit_type = (uint8_t)t;
    tmpl.src = N(r, c)->src;
    tmpl.start = N(r, c)->start;
    tmpl.len = N(r, c)->len;
    tmpl.col = -1;
    TL_TRY(tl_ea_push(r->ea, &tmpl, &c, 1, &cast, r->err));
    set_arg(r, id, i, cast);
    return TL_OK;
}

/* Replace string literal argument i of `id` by a literal of type t (date or
 * timestamp) parsed from it, as DuckDB does for `d > '2024-01-01'`. */
static TlStatus string_lit_to(R *r, TlExprId id, uint32_t i, TlType t)
{
    TlExprId c = A(r, id, i), lit;
    TlExpr tmpl = *N(r, c);
    const char *s = tmpl.v.str.s;
    size_t n = tmpl.v.str.n;
    bool ok;
    while (n && (*s == ' ' || *s == '\t')) {
        s++;
        n--;
    }
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
    if (t == TL_TDATE) {
        int32_t d = 0;
        ok = tl_parse_date(s, n, &d);
        memset(&tmpl.v, 0, sizeof tmpl.v);
        tmpl.v.d = d;
    } else if (t == TL_TTIMESTAMPTZ) {
        int64_t ts = 0;
        ok = tl_parse_timestamptz(s, n, &ts) || tl_parse_timestamp(s, n, &ts);
        memset(&tmpl.v, 0, sizeof tmpl.v);
        tmpl.v.i = ts;
    } else {
        int64_t ts = 0;
        ok = tl_parse_timestamp(s, n, &ts);
        memset(&tmpl.v, 0, sizeof tmpl.v);
        tmpl.v.i = ts;
    }
    if (!ok)
        return fail_at(r, c, "cannot cast %s to %s",
                       tl_quote(N(r, c)->v.str.s, N(r, c)->v.str.n).s, tl_type_name(t));
    tmpl.lit_type = (uint8_t)t;
    tmpl.type = (uint8_t)t;
    TL_TRY(tl_ea_push(r->ea, &tmpl, NULL, 0, &lit, r->err));
    set_arg(r, id, i, lit);
    return TL_OK;
}

enum { U_COMPARE, U_BRANCH, U_IN };

/* Give arguments first, first+step, ... (< end) of `id` their common type;
 * *out is it.  U_COMPARE / U_IN parse string literals against dates. */
static TlStatus unify(R *r, TlExprId id, uint32_t first, uint32_t end,
                      uint32_t step, int mode, TlType *out)
{
    TlType t = TL_TNULL, u;
    uint32_t i;
    if (mode != U_BRANCH) {
        /* the type of everything but string literals decides first */
        for (i = first; i < end; i += step) {
            if (is_str_lit(r, A(r, id, i))) continue;
            if (!common_type(t, T(r, A(r, id, i)), &u)) break;
            t = u;
        }
        if (i >= end && (t == TL_TDATE || t == TL_TTIMESTAMP ||
                         t == TL_TTIMESTAMPTZ))
            for (i = first; i < end; i += step)
                if (is_str_lit(r, A(r, id, i)))
                    TL_TRY(string_lit_to(r, id, i, t));
    }
    t = TL_TNULL;
    for (i = first; i < end; i += step) {
        TlType a = T(r, A(r, id, i));
        if (common_type(t, a, &u)) {
            t = u;
            continue;
        }
        switch (mode) {
        case U_COMPARE:
            return fail_at(r, id, "cannot compare %s with %s", tl_type_name(t),
                           tl_type_name(a));
        case U_IN:
            return fail_at(r, A(r, id, i), "cannot compare %s with %s",
                           tl_type_name(T(r, A(r, id, 0))), tl_type_name(a));
        default:
            return fail_at(r, A(r, id, i), "cannot mix %s and %s in %s",
                           tl_type_name(t), tl_type_name(a),
                           N(r, id)->kind == TL_X_CASE ? "case" : op_name(r, id));
        }
    }
    for (i = first; i < end; i += step) TL_TRY(coerce(r, id, i, t));
    *out = t;
    return TL_OK;
}

/* Argument i of `id` must be bool (a null becomes a bool null). */
static TlStatus want_bool(R *r, TlExprId id, uint32_t i, const char *what)
{
    TlType a = T(r, A(r, id, i));
    if (a == TL_TNULL) return coerce(r, id, i, TL_TBOOL);
    if (a != TL_TBOOL)
        return fail_at(r, A(r, id, i), "%s must be bool, not %s", what,
                       tl_type_name(a));
    return TL_OK;
}

static bool is_num(TlType t)
{
    return t == TL_TINT64 || t == TL_TFLOAT64 || t == TL_TNULL;
}

static bool is_interval(const R *r, TlExprId id)
{
    const TlExpr *e = N(r, id);
    return e->kind == TL_X_CALL && e->op == TL_OP_INTERVAL;
}

static bool is_temporal(TlType t)
{
    return t == TL_TDATE || t == TL_TTIMESTAMP || t == TL_TTIMESTAMPTZ ||
           t == TL_TNULL;
}

/* t + interval, interval + t, t - interval: a timestamp (a date is moved
 * as its midnight, as DuckDB does).  Evaluation sees (timestamp, string):
 * the interval's text; lib/expr/eval.c moves by it. */
static TlStatus interval_arith(R *r, TlExprId id, TlOp op)
{
    bool left = is_interval(r, A(r, id, 0));
    uint32_t ti = left ? 1 : 0;
    TlType t = T(r, A(r, id, ti));
    if (left && op == TL_OP_SUB)
        return fail_at(r, id, "cannot subtract a date or timestamp from an "
                              "interval");
    if ((left && is_interval(r, A(r, id, 1))) || !is_temporal(t))
        return fail_at(r, A(r, id, ti), "an interval can only be added to or "
                       "subtracted from a date or timestamp, not %s",
                       left && is_interval(r, A(r, id, 1)) ? "an interval"
                                                           : tl_type_name(t));
    /* an instant stays one (eval.c keeps the type) */
    TlType to = t == TL_TTIMESTAMPTZ ? TL_TTIMESTAMPTZ : TL_TTIMESTAMP;
    TL_TRY(coerce(r, id, ti, to));
    if (left) { /* keep the timestamp first for the kernel */
        TlExprId a0 = A(r, id, 0), a1 = A(r, id, 1);
        set_arg(r, id, 0, a1);
        set_arg(r, id, 1, a0);
    }
    N(r, id)->type = (uint8_t)to;
    return TL_OK;
}

/* + - * / // % */
static TlStatus arith(R *r, TlExprId id, TlOp op)
{
    TlType a = T(r, A(r, id, 0)), b = T(r, A(r, id, 1)), t;
    bool a_int = a == TL_TINT64 || a == TL_TNULL;
    bool b_int = b == TL_TINT64 || b == TL_TNULL;
    if ((op == TL_OP_ADD || op == TL_OP_SUB) &&
        (is_interval(r, A(r, id, 0)) || is_interval(r, A(r, id, 1))))
        return interval_arith(r, id, op);
    if (op == TL_OP_ADD && a == TL_TDATE && b_int) {
        TL_TRY(coerce(r, id, 1, TL_TINT64));
        t = TL_TDATE;
    } else if (op == TL_OP_ADD && b == TL_TDATE && a_int) {
        TL_TRY(coerce(r, id, 0, TL_TINT64));
        t = TL_TDATE;
    } else if (op == TL_OP_SUB && a == TL_TDATE && b_int) {
        TL_TRY(coerce(r, id, 1, TL_TINT64));
        t = TL_TDATE;
    } else if (op == TL_OP_SUB && a == TL_TDATE && b == TL_TDATE) {
        t = TL_TINT64;
    } else if (is_num(a) && is_num(b)) {
        t = (a == TL_TFLOAT64 || b == TL_TFLOAT64 || op == TL_OP_DIV)
                ? TL_TFLOAT64 : TL_TINT64;
        TL_TRY(coerce(r, id, 0, t));
        TL_TRY(coerce(r, id, 1, t));
    } else {
        return fail_at(r, id, "cannot apply \"%s\" to %s and %s",
                       tl_op_info(op)->name, tl_type_name(a), tl_type_name(b));
    }
    N(r, id)->type = (uint8_t)t;
    return TL_OK;
}

/* A usage error with a caret at byte `at` of string literal lit's value
 * (the literal's own span when its text holds doubled quotes). */
static TlStatus fail_in_lit(R *r, TlExprId lit, size_t at, const char *msg)
{
    const TlExpr *e = N(r, lit);
    const char *text = r->ea->srcs[e->src].text + e->start;
    bool plain = e->len == e->v.str.n + 2 && text[0] == '\'';
    if (!plain || at >= e->v.str.n)
        return fail_at(r, lit, "%s", msg);
    size_t len = at + 1 < e->v.str.n && text[2 + at] == '-' ? 3 : 2;
    if (len > e->v.str.n - at) len = e->v.str.n - at;
    return tl_error_at(r->err, TL_ERR_USAGE, r->ea, e->src,
                       e->start + 1 + (uint32_t)at, (uint32_t)len, "%s", msg);
}

/* What a function's constant arguments must be, checked before any row:
 * a strftime/strptime format, a date part, an interval where date_add
 * wants one. */
static TlStatus check_constants(R *r, TlExprId id, TlOp op)
{
    char msg[200], why[120];
    size_t bad;
    TlExprId a;
    switch (op) {
    case TL_OP_STRFTIME:
    case TL_OP_STRPTIME:
    case TL_OP_TRY_STRPTIME:
        a = A(r, id, 1);
        if (!is_str_lit(r, a)) return TL_OK;
        if (!tl_k_time_format_check(N(r, a)->v.str.s, N(r, a)->v.str.n,
                                    op != TL_OP_STRFTIME, &bad, why,
                                    sizeof why)) {
            snprintf(msg, sizeof msg, "invalid %s format: %s", op_name(r, id),
                     why);
            return fail_in_lit(r, a, bad, msg);
        }
        return TL_OK;
    case TL_OP_DATE_TRUNC:
    case TL_OP_DATE_DIFF:
        a = A(r, id, 0);
        if (is_str_lit(r, a) &&
            !tl_k_date_part_known(N(r, a)->v.str.s, N(r, a)->v.str.n))
            return fail_at(r, a, "unknown date part %s for %s (expected "
                           "year, quarter, month, week, day, hour, minute "
                           "or second)",
                           tl_quote(N(r, a)->v.str.s, N(r, a)->v.str.n).s,
                           op_name(r, id));
        return TL_OK;
    case TL_OP_DATE_ADD:
        if (!is_interval(r, A(r, id, 1)))
            return fail_at(r, A(r, id, 1), "date_add needs an interval "
                           "(interval '1 day') as its second argument");
        return TL_OK;
    default:
        return TL_OK;
    }
}

/* A scalar function of kernels/fn.h. */
static TlStatus function(R *r, TlExprId id, TlOp op)
{
    TlType args[16], want[16], res = TL_TNULL;
    uint32_t i, n = N(r, id)->n_args;
    const char *name = tl_op_info(op)->name;
    if (n > 16) return fail_at(r, id, "too many arguments to %s", name);
    for (i = 0; i < n; i++) args[i] = want[i] = T(r, A(r, id, i));
    if (!tl_k_fn_types(name, args, (int)n, &res, want)) {
        char list[256];
        size_t len = 0;
        list[0] = 0;
        for (i = 0; i < n && len < sizeof list - 20; i++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
                                    i ? ", " : "", tl_type_name(args[i]));
        return fail_at(r, id, "no function matches %s(%s)", name, list);
    }
    for (i = 0; i < n; i++)
        if (want[i] != args[i] && want[i] != TL_TNULL)
            TL_TRY(coerce(r, id, i, want[i]));
    N(r, id)->type = (uint8_t)res;
    TL_TRY(check_constants(r, id, op));
    return tl_ea_regex_prepare(r->ea, id, r->err);
}

/* A number literal at id (under casts the optimizer may leave), into *v. */
static bool number_literal(const TlExprArena *ea, TlExprId id, double *v)
{
    const TlExpr *e = tl_ea_node(ea, id);
    while (e->kind == TL_X_CAST && e->n_args == 1) e = tl_ea_node(ea, tl_ea_arg(ea, e, 0));
    if (e->kind != TL_X_LIT) return false;
    if (e->lit_type == TL_TFLOAT64) *v = e->v.f;
    else if (e->lit_type == TL_TINT64) *v = (double)e->v.i;
    else return false;
    return true;
}

/* The arguments of call id as written, without an aggregate's filter. */
static uint32_t n_call_args(R *r, TlExprId id)
{
    const TlExpr *e = N(r, id);
    return e->n_args - ((e->flags & TL_XF_FILTER) && e->n_args ? 1 : 0);
}

/* Argument checks of an aggregate call (its arguments are resolved), by
 * its rule (lib/expr/agg_rules.c); the call's type is its result type. */
static TlStatus check_agg(R *r, TlExprId id, TlOp op)
{
    const TlAggRule *rule = tl_agg_rule(op);
    uint32_t n = n_call_args(r, id);
    const char *name = tl_op_info(op)->name;
    for (uint32_t i = 0; i < n && i < 2; i++) {
        TlExprId a = A(r, id, i);
        TlType t = T(r, a);
        double v = -1;
        switch ((TlAggArg)rule->arg[i]) {
        case TL_AA_NONE:
        case TL_AA_ANY:
            break;
        case TL_AA_NUM:
            if (!is_num(t))
                return fail_at(r, a, "%s needs a numeric argument, not %s", name,
                               tl_type_name(t));
            break;
        case TL_AA_NUMS:
            if (!is_num(t))
                return fail_at(r, a, "%s needs numeric arguments, not %s", name,
                               tl_type_name(t));
            break;
        case TL_AA_BOOL:
            if (t != TL_TBOOL && t != TL_TNULL)
                return fail_at(r, a, "%s needs a bool argument, not %s", name,
                               tl_type_name(t));
            break;
        case TL_AA_STRING:
            if (t != TL_TNULL) TL_TRY(coerce(r, id, i, TL_TSTRING));
            break;
        case TL_AA_ORDERED:
            if (!is_num(t) && t != TL_TDATE && t != TL_TTIMESTAMP && t != TL_TTIMESTAMPTZ)
                return fail_at(r, a, "%s needs a number, date or timestamp argument, "
                               "not %s", name, tl_type_name(t));
            break;
        case TL_AA_FRACTION:
            if (N(r, a)->kind != TL_X_LIT || !number_literal(r->ea, a, &v) ||
                !(v >= 0.0 && v <= 1.0))
                return fail_at(r, a, "%s needs a number between 0 and 1 as its "
                               "second argument", name);
            break;
        case TL_AA_SEPARATOR:
            if (!is_str_lit(r, a))
                return fail_at(r, a, "%s needs a string literal as its separator",
                               name);
            break;
        }
    }
    N(r, id)->type = (uint8_t)tl_agg_rule_result(op, n > 0 ? T(r, A(r, id, 0)) : TL_TNULL,
                                                 n > 1 ? T(r, A(r, id, 1)) : TL_TNULL);
    return TL_OK;
}

/* agg(...) filter (where c): c must be bool; each argument x evaluated per
 * row becomes if(c, x, null) (flagged TL_XF_MASK: it prints as x), so the
 * rows c does not keep are nulls to the aggregate, which skips them.
 * count() and first/last, which do not skip nulls, take c itself instead
 * (tl_agg_bind). */
static TlStatus agg_filter(R *r, TlExprId id, TlOp op)
{
    uint32_t n = n_call_args(r, id);
    TL_TRY(want_bool(r, id, n, "the filter condition"));
    if (op == TL_OP_FIRST || op == TL_OP_LAST) return TL_OK;
    const TlAggRule *rule = tl_agg_rule(op);
    TlExprId c = A(r, id, n);
    for (uint32_t i = 0; i < n && i < 2; i++) {
        TlAggArg k = (TlAggArg)rule->arg[i];
        if (k == TL_AA_FRACTION || k == TL_AA_SEPARATOR) continue;
        TlExprId x = A(r, id, i), kids[3], nul, m;
        TlExpr t;
        memset(&t, 0, sizeof t);
        t.kind = TL_X_LIT;
        t.lit_type = TL_TNULL;
        t.type = N(r, x)->type;
        t.src = N(r, x)->src;
        t.start = N(r, x)->start;
        t.len = N(r, x)->len;
        t.col = -1;
        TL_TRY(tl_ea_push(r->ea, &t, NULL, 0, &nul, r->err));
        t.kind = TL_X_CALL;
        t.lit_type = 0;
        t.op = TL_OP_IF;
        t.flags = TL_XF_MASK;
        kids[0] = c;
        kids[1] = x;
        kids[2] = nul;
        TL_TRY(tl_ea_push(r->ea, &t, kids, 3, &m, r->err));
        set_arg(r, id, i, m);
    }
    return TL_OK;
}

/* An unknown column: the message with a "did you mean", or, for a name
 * written in double quotes that is no column (region = "north"), the
 * reminder that strings take single quotes. */
static TlStatus unknown_column(R *r, TlExprId id)
{
    const TlExpr *e = N(r, id);
    const char *name = e->name;
    const char *sug = tl_schema_suggest(r->in, name);
    r->ea->unknown_name = true;
    if (sug)
        return fail_at(r, id, "unknown column %s (did you mean %s?)",
                       tl_quote_name(name).s, tl_quote_name(sug).s);
    if (e->src < r->ea->n_srcs && r->ea->srcs[e->src].text[e->start] == '"') {
        char lit[TL_QUOTE_NAME_SHOW + 3];
        size_t n = 0;
        lit[n++] = '\'';
        for (const char *c = name; *c && n < sizeof lit - 4; c++) {
            if (*c == '\'') lit[n++] = '\''; /* doubled inside a literal */
            lit[n++] = *c;
        }
        lit[n++] = '\'';
        lit[n] = 0;
        return fail_at(r, id, "unknown column %s (double quotes name a column; "
                       "a string takes single quotes: %s)", tl_quote_name(name).s,
                       tl_escape_name(lit).s);
    }
    return fail_at(r, id, "unknown column %s", tl_quote_name(name).s);
}

/* The arity check the grammar does not make for us. */
static TlStatus arity(R *r, TlExprId id, TlOp op)
{
    const TlOpInfo *oi = tl_op_info(op);
    uint32_t n = n_call_args(r, id);
    if (op == TL_OP_NONE || (int)n < oi->min_args ||
        (oi->max_args >= 0 && (int)n > oi->max_args)) {
        if (oi->min_args == oi->max_args)
            return fail_at(r, id, "%s takes %d argument%s, not %u", oi->name,
                           oi->min_args, oi->min_args == 1 ? "" : "s", n);
        return fail_at(r, id, "wrong number of arguments (%u) to %s", n,
                       oi->name);
    }
    return TL_OK;
}

static TlStatus resolve(R *r, TlExprId id, bool in_agg, TlExprId *out);

/* Resolve the children of id in place (re-pointing replaced ones). */
static TlStatus resolve_args(R *r, TlExprId id, bool in_agg)
{
    uint32_t i, n = N(r, id)->n_args;
    for (i = 0; i < n; i++) {
        TlExprId c = A(r, id, i), nc;
        TL_TRY(resolve(r, c, in_agg, &nc));
        if (nc != c) set_arg(r, id, i, nc);
    }
    return TL_OK;
}

static TlStatus resolve_call(R *r, TlExprId id, bool in_agg)
{
    TlOp op = (TlOp)N(r, id)->op;
    uint32_t i, n;
    TlType t;
    TL_TRY(arity(r, id, op));
    if (op == TL_OP_ROW_NUMBER) {
        int c = r->in ? tl_schema_find(r->in, TL_ROW_NUMBER_COL) : -1;
        TlExpr *e = N(r, id);
        if (c < 0) return fail_at(r, id, "row_number() is not allowed here");
        e->kind = TL_X_COL;
        e->col = c;
        e->name = TL_ROW_NUMBER_COL;
        e->type = TL_TINT64;
        return TL_OK;
    }
    if (tl_op_is_agg(op)) {
        if (!r->allow_agg || in_agg)
            return fail_at(r, id, "aggregate \"%s\" is not allowed here",
                           tl_op_info(op)->name);
        TL_TRY(resolve_args(r, id, true));
        TL_TRY(check_agg(r, id, op));
        if (N(r, id)->flags & TL_XF_FILTER) TL_TRY(agg_filter(r, id, op));
        return TL_OK;
    }
    TL_TRY(resolve_args(r, id, in_agg));
    n = N(r, id)->n_args;
    switch (op) {
    case TL_OP_AND:
    case TL_OP_OR:
    case TL_OP_NOT: {
        char what[64];
        snprintf(what, sizeof what, "an operand of \"%s\"", op_name(r, id));
        for (i = 0; i < n; i++) TL_TRY(want_bool(r, id, i, what));
        t = TL_TBOOL;
        break;
    }
    case TL_OP_EQ: case TL_OP_NE: case TL_OP_LT:
    case TL_OP_LE: case TL_OP_GT: case TL_OP_GE:
    case TL_OP_BETWEEN:
        TL_TRY(unify(r, id, 0, n, 1, U_COMPARE, &t));
        t = TL_TBOOL;
        break;
    case TL_OP_IS_NULL:
        t = TL_TBOOL;
        break;
    case TL_OP_ADD: case TL_OP_SUB: case TL_OP_MUL:
    case TL_OP_DIV: case TL_OP_IDIV: case TL_OP_MOD:
        return arith(r, id, op);
    case TL_OP_NEG:
        t = T(r, A(r, id, 0));
        if (!is_num(t))
            return fail_at(r, id, "cannot apply \"-\" to %s", tl_type_name(t));
        if (t == TL_TNULL) t = TL_TINT64;
        TL_TRY(coerce(r, id, 0, t));
        break;
    case TL_OP_CONCAT_OP:
        for (i = 0; i < n; i++) TL_TRY(coerce(r, id, i, TL_TSTRING));
        t = TL_TSTRING;
        break;
    case TL_OP_IF:
        TL_TRY(want_bool(r, id, 0, "the condition of if"));
        TL_TRY(unify(r, id, 1, 3, 1, U_BRANCH, &t));
        break;
    case TL_OP_COALESCE:
        TL_TRY(unify(r, id, 0, n, 1, U_BRANCH, &t));
        break;
    case TL_OP_NOW:
        t = TL_TTIMESTAMPTZ; /* an instant, as DuckDB's */
        break;
    case TL_OP_CURRENT_DATE:
        t = TL_TDATE;
        break;
    case TL_OP_INTERVAL:
        /* its text; where it may stand is checked by its parent */
        if (!is_str_lit(r, A(r, id, 0)))
            return fail_at(r, id, "an interval takes a string literal");
        t = TL_TSTRING;
        break;
    default:
        return function(r, id, op);
    }
    N(r, id)->type = (uint8_t)t;
    return TL_OK;
}

static TlStatus resolve_node(R *r, TlExprId id, bool in_agg, TlExprId *out);

/* An interval stands only beside a date or timestamp in + and -, and as
 * date_add's second argument: it has no type of its own to be anything
 * else. */
static TlStatus check_interval_use(R *r, TlExprId id)
{
    const TlExpr *e = N(r, id);
    if (e->kind == TL_X_CALL &&
        (e->op == TL_OP_ADD || e->op == TL_OP_SUB || e->op == TL_OP_DATE_ADD))
        return TL_OK;
    for (uint32_t i = 0; i < e->n_args; i++)
        if (is_interval(r, A(r, id, i)))
            return fail_at(r, A(r, id, i), "an interval can only be added to "
                           "or subtracted from a date or timestamp");
    return TL_OK;
}

static TlStatus resolve(R *r, TlExprId id, bool in_agg, TlExprId *out)
{
    TL_TRY(resolve_node(r, id, in_agg, out));
    return check_interval_use(r, *out);
}

static TlStatus resolve_node(R *r, TlExprId id, bool in_agg, TlExprId *out)
{
    TlExpr *e = N(r, id);
    TlType t;
    *out = id;
    switch ((TlExprKind)e->kind) {
    case TL_X_COL: {
        int c = r->in ? tl_schema_find(r->in, e->name) : -1;
        if (c < 0) return unknown_column(r, id);
        e->col = c;
        e->type = (uint8_t)r->in->fields[c].type;
        return TL_OK;
    }
    case TL_X_LIT:
        e->type = e->lit_type;
        return TL_OK;
    case TL_X_CALL:
        return resolve_call(r, id, in_agg);
    case TL_X_CAST: {
        TlType from, to = (TlType)e->lit_type;
        if (e->n_args != 1) return fail_at(r, id, "cast takes one argument");
        TL_TRY(resolve_args(r, id, in_agg));
        from = T(r, A(r, id, 0));
        if (!tl_k_cast_allowed(from, to))
            return fail_at(r, id, "cannot cast %s to %s", tl_type_name(from),
                           tl_type_name(to));
        N(r, id)->type = (uint8_t)to;
        return TL_OK;
    }
    case TL_X_CASE: {
        uint32_t n = e->n_args, pairs, i;
        bool has_else = (e->flags & TL_XF_ELSE) != 0;
        TL_TRY(resolve_args(r, id, in_agg));
        if (n < 2 + (has_else ? 1u : 0u) || (n - (has_else ? 1 : 0)) % 2)
            return fail_at(r, id, "malformed case expression");
        pairs = (n - (has_else ? 1 : 0)) / 2;
        for (i = 0; i < pairs; i++)
            TL_TRY(want_bool(r, id, 2 * i, "a case condition"));
        /* the then-branches and the else: 1, 3, 5, ..., and n-1 */
        {
            TlType a = TL_TNULL, u;
            for (i = 1; i < n; i += 2) {
                TlType b = T(r, A(r, id, i));
                if (!common_type(a, b, &u))
                    return fail_at(r, A(r, id, i), "cannot mix %s and %s in case",
                                   tl_type_name(a), tl_type_name(b));
                a = u;
            }
            if (has_else) {
                TlType b = T(r, A(r, id, n - 1));
                if (!common_type(a, b, &u))
                    return fail_at(r, A(r, id, n - 1),
                                   "cannot mix %s and %s in case",
                                   tl_type_name(a), tl_type_name(b));
                a = u;
            }
            t = a;
            for (i = 1; i < n; i += 2) TL_TRY(coerce(r, id, i, t));
            if (has_else) TL_TRY(coerce(r, id, n - 1, t));
        }
        N(r, id)->type = (uint8_t)t;
        return TL_OK;
    }
    case TL_X_IN:
        if (e->n_args < 2) return fail_at(r, id, "empty in list");
        TL_TRY(resolve_args(r, id, in_agg));
        TL_TRY(unify(r, id, 0, N(r, id)->n_args, 1, U_IN, &t));
        N(r, id)->type = TL_TBOOL;
        return TL_OK;
    }
    return fail_at(r, id, "internal error: unknown expression node");
}

/* Resolve expression id against `input` (see resolve.h).  Nodes are typed in
 * place; implicit casts and converted literals are pushed as new nodes.
 * *out is the resolved root (currently always id itself: a root is never
 * replaced, only its arguments). */
TlStatus tl_resolve_expr(TlExprArena *ea, TlExprId id, const TlSchema *input,
                         bool allow_agg, TlExprId *out, TlError *err)
{
    R r;
    r.ea = ea;
    r.in = input;
    r.allow_agg = allow_agg;
    r.err = err;
    TL_TRY(resolve(&r, id, false, out));
    if (is_interval(&r, *out))
        return fail_at(&r, *out, "an interval can only be added to or "
                       "subtracted from a date or timestamp");
    return TL_OK;
}

/* The result type of aggregate op over an argument of type arg (see
 * resolve.h). */
TlType tl_agg_result_type(TlOp op, TlType arg)
{
    return tl_agg_rule_result(op, arg, TL_TNULL);
}

/* Bind a checked aggregate call (see resolve.h): its rule says which
 * arguments are evaluated per row and which are parameters. */
void tl_agg_bind(const TlExprArena *ea, TlExprId id, TlAggCall *out)
{
    const TlExpr *e = tl_ea_node(ea, id);
    TlOp op = (TlOp)e->op;
    const TlAggRule *rule = tl_agg_rule(op);
    memset(out, 0, sizeof *out);
    out->op = op;
    out->out_type = (TlType)e->type;
    out->x = out->y = TL_NO_ID;
    out->x_type = out->y_type = TL_TNULL;
    out->q = 0.5;
    uint32_t n = e->n_args - ((e->flags & TL_XF_FILTER) && e->n_args ? 1 : 0);
    for (uint32_t i = 0; rule && i < n && i < 2; i++) {
        TlExprId a = tl_ea_arg(ea, e, i);
        const TlExpr *ae = tl_ea_node(ea, a);
        switch ((TlAggArg)rule->arg[i]) {
        case TL_AA_FRACTION:
            number_literal(ea, a, &out->q);
            break;
        case TL_AA_SEPARATOR:
            while (ae->kind == TL_X_CAST && ae->n_args == 1)
                ae = tl_ea_node(ea, tl_ea_arg(ea, ae, 0));
            out->sep = ae->v.str.s;
            out->sep_len = ae->v.str.n;
            break;
        default:
            if (i == 0) {
                out->x = a;
                out->x_type = (TlType)ae->type;
            } else {
                out->y = a;
                out->y_type = (TlType)ae->type;
            }
        }
    }
    /* a filter: the others' arguments are masked (agg_filter); count()
     * and first/last take the condition as y, the rows to keep */
    if (n < e->n_args && (out->x == TL_NO_ID || op == TL_OP_FIRST || op == TL_OP_LAST)) {
        out->y = tl_ea_arg(ea, e, n);
        out->y_type = TL_TBOOL;
    }
}
