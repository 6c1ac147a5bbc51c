/*
 * parser.c -- expression text -> TlExpr tree (a Pratt parser).
 *
 * Precedence, loosest first (binding power in parentheses):
 *
 *   or (1)  and (2)  not (3, prefix)
 *   = == != <> < <= > >=  is [not] null  [not] in (...)  [not] between a and b
 *   [not] like p  [not] ilike p  s ~ re  s !~ re (4, non-associative:
 *   `a = b = c` is an error; `s ~ re` is regexp_full_match(s, re), `s !~ re`
 *   not regexp_full_match(s, re))
 *   || (5)  + - (6)  * / // % (7)  unary - + (8)  ::type (9, postfix)
 *
 * expr(min) parses a prefix form, then folds in every infix operator whose
 * binding power is >= min; left-associative operators parse their right side
 * with power + 1.  The operands of between and like, and the right side of a
 * comparison, are parsed at power 5, so `x between 1 and 2 and y` groups as
 * `(x between 1 and 2) and y`.
 *
 * Literals: an integer that does not fit int64 becomes a float64 literal.  A
 * minus directly before a number literal folds into it (so
 * -9223372036854775808 is an int64 literal) unless a `::` cast follows the
 * number (`-5::string` is -(5::string): casts bind tighter than minus).
 *
 * Desugaring: `case x when v then r ... end` becomes the searched case with
 * conditions `x = v` (each reusing x's node id; the condition's span is v's).
 * Unary plus is dropped.  Nothing else is rewritten here.
 *
 * Chains: a left-associative chain (`a + b + c ...`) is parsed by the
 * loop in expr(), not by recursion.  A chain of `or` (or of `and`) longer
 * than FLAT_MAX terms is built as a balanced tree (depth log n): both are
 * associative in three-valued logic, and the lazy evaluation of the right
 * side on the rows the left side leaves undecided gives every term the same
 * rows as the left-deep tree would.  FLAT_MAX is TL_MAX_DEPTH, so every
 * chain the height bound alone would accept keeps its left-deep tree.  The
 * balanced tree halves down to chunks of at most FLAT_MAX / 2 terms (built
 * left-deep), so its left spine -- what the printer writes without
 * parentheses -- holds at most FLAT_MAX / 2 + log2(n) terms, and printing
 * and parsing it again gives the same tree (print.c).  Other chains stay
 * left-deep (`+` on integers may overflow in one grouping and not another;
 * `||` stays as written too).
 *
 * Depth: every recursion goes through expr(), which counts its depth
 * (parentheses, arguments: true nesting), bounded by TL_MAX_DEPTH; and
 * every node records the height of its tree, bounded by TL_MAX_HEIGHT on a
 * thread with a deep stack (tl_stack_deep: a run's thread) and by
 * TL_MAX_DEPTH elsewhere, so neither this parser nor any later tree walk
 * (resolve, eval, print) can run out of stack on hostile input such as
 * 10,000 `(` or a chain of 1,000,000 `+`.
 */
#include "parse.h"

#include "../core/pool.h"
#include "../core/text.h"
#include "../../kernels/fn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { P_OR = 1, P_AND, P_NOT, P_CMP, P_CONCAT, P_ADD, P_MUL, P_UNARY, P_POSTFIX };

typedef TlParser P;
typedef TlPNode PN;

static TlStatus expr(P *p, int min, PN *out, TlError *err);

static const TlToken *tok(const P *p) { return tl_parser_tok(p, 0); }
static const TlToken *peek(const P *p, uint32_t k) { return tl_parser_tok(p, k); }
static void advance(P *p)
{
    if (p->pos + 1 < p->n_toks) p->pos++;
}
static uint32_t tok_end(const TlToken *t) { return t->start + t->len; }
static bool is_kw(const TlToken *t, TlKeyword kw)
{
    return t->kind == TL_TK_WORD && t->kw == kw;
}

/* A plain word spelled w (case-insensitive): the words of an aggregate's
 * filter clause, which are names everywhere else. */
static bool is_word(const P *p, const TlToken *t, const char *w)
{
    size_t n = strlen(w);
    return t->kind == TL_TK_WORD && t->len == n &&
           strncasecmp(p->text + t->start, w, n) == 0;
}

/* "syntax error: unexpected <token>" under the cursor's token. */
TlStatus tl_parser_unexpected(P *p, TlError *err)
{
    const TlToken *t = tok(p);
    if (t->kind == TL_TK_EOF)
        return tl_error_at(err, TL_ERR_USAGE, p->ea, p->src, t->start, 0,
                           "syntax error: unexpected end of expression");
    uint32_t n = t->len > 40 ? 40 : t->len;
    const char *more = n < t->len ? "..." : "";
    if (t->kind == TL_TK_STRING || t->kind == TL_TK_QNAME) /* already quoted */
        return tl_error_at(err, TL_ERR_USAGE, p->ea, p->src, t->start, t->len,
                           "syntax error: unexpected %.*s%s", (int)n,
                           p->text + t->start, more);
    return tl_error_at(err, TL_ERR_USAGE, p->ea, p->src, t->start, t->len,
                       "syntax error: unexpected \"%.*s%s\"", (int)n,
                       p->text + t->start, more);
}

/* `syntax error: expected X` at the cursor's token. */
static TlStatus expected(P *p, const char *what, TlError *err)
{
    const TlToken *t = tok(p);
    return tl_error_at(err, TL_ERR_USAGE, p->ea, p->src, t->start, t->len,
                       "syntax error: expected %s", what);
}

static TlStatus too_deep(P *p, TlError *err)
{
    const TlToken *t = tok(p);
    return tl_error_at(err, TL_ERR_USAGE, p->ea, p->src, t->start, t->len,
                       "expression nested too deeply (more than %d levels)",
                       TL_MAX_DEPTH);
}

static TlStatus too_tall(P *p, uint32_t max, TlError *err)
{
    const TlToken *t = tok(p);
    return tl_error_at(err, TL_ERR_USAGE, p->ea, p->src, t->start, t->len,
                       "expression too long (a chain of more than %u operators)",
                       max);
}

static TlStatus expect(P *p, TlTokKind kind, const char *what, TlError *err)
{
    if (tok(p)->kind != kind) return expected(p, what, err);
    advance(p);
    return TL_OK;
}

static TlExpr tmpl(TlExprKind kind)
{
    TlExpr t;
    memset(&t, 0, sizeof t);
    t.kind = (uint8_t)kind;
    t.col = -1;
    return t;
}

/* Push node t spanning [start, end) with children kids[0..n) whose deepest
 * tree has height kid_depth. */
static TlStatus mk(P *p, TlExpr *t, uint32_t start, uint32_t end,
                   const TlExprId *kids, uint32_t n, uint32_t kid_depth, PN *out,
                   TlError *err)
{
    uint32_t max = tl_stack_deep() ? TL_MAX_HEIGHT : TL_MAX_DEPTH;
    if (kid_depth + 1 > max)
        return max == TL_MAX_DEPTH ? too_deep(p, err) : too_tall(p, max, err);
    t->src = p->src;
    t->start = start;
    t->len = end - start;
    TL_TRY(tl_ea_push(p->ea, t, kids, n, &out->id, err));
    out->depth = kid_depth + 1;
    out->start = start;
    out->end = end;
    return TL_OK;
}

static uint32_t max_u32(uint32_t a, uint32_t b) { return a > b ? a : b; }

static TlStatus mk_call(P *p, TlOp op, uint8_t flags, const PN *kids, uint32_t n,
                        PN *out, TlError *err)
{
    TlExpr t = tmpl(TL_X_CALL);
    TlExprId ids[3];
    uint32_t d = 0;
    t.op = (uint16_t)op;
    t.flags = flags;
    for (uint32_t i = 0; i < n; i++) {
        ids[i] = kids[i].id;
        d = max_u32(d, kids[i].depth);
    }
    return mk(p, &t, kids[0].start, kids[n - 1].end, ids, n, d, out, err);
}

/* ------------------------------------------------------ children stack */

static TlStatus stk_push(P *p, TlExprId id, TlError *err)
{
    if (p->n_stk == p->cap_stk) {
        uint32_t nc = p->cap_stk ? p->cap_stk * 2 : 32;
        TlExprId *s = tl_realloc(p->stk, (size_t)nc * sizeof *s);
        if (!s) return tl_error_oom(err);
        p->stk = s;
        p->cap_stk = nc;
    }
    p->stk[p->n_stk++] = id;
    return TL_OK;
}

/* ------------------------------------------------------------ literals */

/* Decode the quoted token t (quote q doubled inside) into the pool. */
static TlStatus unquote(P *p, const TlToken *t, const char **out, uint32_t *n_out,
                        TlError *err)
{
    const char *s = p->text + t->start + 1;
    uint32_t n = t->len - 2, k = 0;
    char q = p->text[t->start];
    char *d = tl_strpool_alloc(&p->ea->pool, (size_t)n + 1);
    if (!d) return tl_error_oom(err);
    for (uint32_t i = 0; i < n; i++) {
        d[k++] = s[i];
        if (s[i] == q) i++; /* the second quote of a doubled pair */
    }
    d[k] = 0;
    *out = d;
    if (n_out) *n_out = k;
    return TL_OK;
}

/* Decode a WORD (as written) or QNAME (unescaped) into a pool name. */
TlStatus tl_parser_name(P *p, const TlToken *t, const char **name, TlError *err)
{
    if (t->kind == TL_TK_QNAME) return unquote(p, t, name, NULL, err);
    *name = tl_strpool_dup(&p->ea->pool, p->text + t->start, t->len);
    return *name ? TL_OK : tl_error_oom(err);
}

/* Parse the float spelled s[0..n) (already lexed as a number). */
static TlStatus parse_float(const char *s, uint32_t n, double *out, TlError *err)
{
    char small[128], *buf = small;
    if (n + 1 > sizeof small) {
        buf = tl_malloc((size_t)n + 1);
        if (!buf) return tl_error_oom(err);
    }
    memcpy(buf, s, n);
    buf[n] = 0;
    *out = strtod(buf, NULL); /* overflow gives +-inf, as for 1e999 */
    if (buf != small) tl_free(buf);
    return TL_OK;
}

/* The number token t as a literal; `neg` folds a preceding minus whose
 * token starts at neg_start. */
static TlStatus number(P *p, const TlToken *t, bool neg, uint32_t neg_start,
                       PN *out, TlError *err)
{
    TlExpr e = tmpl(TL_X_LIT);
    const char *s = p->text + t->start;
    int64_t iv;
    bool is_int = false;
    if (t->kind == TL_TK_INT) {
        if (!neg) {
            is_int = tl_parse_i64(s, t->len, &iv);
        } else if (t->len < 64) {
            char buf[64];
            buf[0] = '-';
            memcpy(buf + 1, s, t->len);
            is_int = tl_parse_i64(buf, t->len + 1, &iv);
        }
    }
    if (is_int) {
        e.lit_type = TL_TINT64;
        e.v.i = iv;
    } else {
        double f = 0;
        TL_TRY(parse_float(s, t->len, &f, err));
        e.lit_type = TL_TFLOAT64;
        e.v.f = neg ? -f : f;
    }
    return mk(p, &e, neg ? neg_start : t->start, tok_end(t), NULL, 0, 0, out, err);
}

/* `date '...'` / `timestamp '...'`: the cursor is on the keyword. */
static TlStatus typed_literal(P *p, PN *out, TlError *err)
{
    const TlToken *kw = tok(p), *str = peek(p, 1);
    TlExpr e = tmpl(TL_X_LIT);
    const char *s;
    uint32_t n;
    TL_TRY(unquote(p, str, &s, &n, err));
    if (kw->kw == TL_KW_DATE) {
        e.lit_type = TL_TDATE;
        if (!tl_parse_date(s, n, &e.v.d))
            return tl_error_at(err, TL_ERR_USAGE, p->ea, p->src, kw->start,
                               tok_end(str) - kw->start,
                               "invalid date '%s' (expected YYYY-MM-DD)", s);
    } else {
        e.lit_type = TL_TTIMESTAMP;
        if (!tl_parse_timestamp(s, n, &e.v.i))
            return tl_error_at(err, TL_ERR_USAGE, p->ea, p->src, kw->start,
                               tok_end(str) - kw->start,
                               "invalid timestamp '%s' (expected YYYY-MM-DD HH:MM:SS)", s);
    }
    advance(p);
    advance(p);
    return mk(p, &e, kw->start, tok_end(str), NULL, 0, 0, out, err);
}

/* The offset in token t's text (a quoted string) of byte k of its
 * unquoted value, for a caret inside a literal. */
static uint32_t quoted_offset(const P *p, const TlToken *t, size_t k)
{
    const char *s = p->text + t->start + 1;
    char q = p->text[t->start];
    uint32_t i = 0;
    for (size_t v = 0; v < k && i + 2 < t->len; v++, i++)
        if (s[i] == q) i++;
    return t->start + 1 + i;
}

/* `interval 'TEXT'` or `interval N unit`: the cursor is on the word
 * interval.  The text is checked here, so a bad interval is a usage error
 * with a caret under the bad part. */
static TlStatus interval_literal(P *p, PN *out, TlError *err)
{
    const TlToken *kw = tok(p), *v = peek(p, 1), *last = v;
    TlExpr lit = tmpl(TL_X_LIT), e = tmpl(TL_X_CALL);
    TlInterval iv;
    size_t bad;
    char msg[128];
    PN arg;
    lit.lit_type = TL_TSTRING;
    if (v->kind == TL_TK_STRING) {
        TL_TRY(unquote(p, v, &lit.v.str.s, &lit.v.str.n, err));
    } else {
        const TlToken *u = peek(p, 2);
        char *t = tl_strpool_alloc(&p->ea->pool, (size_t)v->len + u->len + 2);
        if (!t) return tl_error_oom(err);
        memcpy(t, p->text + v->start, v->len);
        t[v->len] = ' ';
        memcpy(t + v->len + 1, p->text + u->start, u->len);
        t[v->len + 1 + u->len] = 0;
        lit.v.str.s = t;
        lit.v.str.n = v->len + 1 + u->len;
        last = u;
    }
    if (!tl_k_interval_parse(lit.v.str.s, lit.v.str.n, &iv, &bad, msg,
                             sizeof msg)) {
        uint32_t at = v->start, end = tok_end(last);
        if (v->kind == TL_TK_STRING) {
            at = quoted_offset(p, v, bad);
            end = tok_end(v) - 1 > at ? tok_end(v) - 1 : at + 1;
        }
        return tl_error_at(err, TL_ERR_USAGE, p->ea, p->src, at, end - at,
                           "invalid interval: %s", msg);
    }
    advance(p);
    for (const TlToken *t = tok(p); t != last; t = tok(p)) advance(p);
    advance(p);
    TL_TRY(mk(p, &lit, v->start, tok_end(last), NULL, 0, 0, &arg, err));
    e.op = TL_OP_INTERVAL;
    return mk(p, &e, kw->start, tok_end(last), &arg.id, 1, 1, out, err);
}

static bool word_is(const P *p, const TlToken *t, const char *w)
{
    return t->kind == TL_TK_WORD && strlen(w) == t->len &&
           strncasecmp(p->text + t->start, w, t->len) == 0;
}

/* A type name at the cursor (after `::` or `as`); advances past it. */
static TlStatus type_name(P *p, TlType *ty, TlError *err)
{
    static const char *const names[] = {"int", "int64", "integer", "bigint",
                                        "float", "float64", "double", "bool",
                                        "boolean", "string", "varchar", "text",
                                        "date", "timestamp", "datetime", "timestamptz"};
    const TlToken *t = tok(p);
    if (t->kind != TL_TK_WORD) return expected(p, "a type name", err);
    if (!tl_type_parse(p->text + t->start, t->len, ty) || *ty == TL_TNULL) {
        const char *sug = tl_suggest(p->text + t->start, t->len, names,
                                     sizeof names / sizeof names[0]);
        return tl_error_at(err, TL_ERR_USAGE, p->ea, p->src, t->start, t->len,
                           "unknown type %s%s%s%s",
                           tl_quote(p->text + t->start, t->len).s,
                           sug ? " (did you mean \"" : "",
                           sug ? sug : "", sug ? "\"?)" : "");
    }
    advance(p);
    return TL_OK;
}

/* ---------------------------------------------------------- primaries */

/* cast(x as type) / try_cast(x as type): the cursor is on the keyword. */
static TlStatus cast_call(P *p, PN *out, TlError *err)
{
    uint32_t start = tok(p)->start;
    bool try_ = tok(p)->kw == TL_KW_TRY_CAST;
    PN x;
    TlType ty;
    advance(p);
    TL_TRY(expect(p, TL_TK_LPAREN, "\"(\"", err));
    TL_TRY(expr(p, 0, &x, err));
    if (!is_kw(tok(p), TL_KW_AS)) return expected(p, "\"as\"", err);
    advance(p);
    TL_TRY(type_name(p, &ty, err));
    if (tok(p)->kind != TL_TK_RPAREN) return expected(p, "\")\"", err);
    uint32_t end = tok_end(tok(p));
    advance(p);
    TlExpr e = tmpl(TL_X_CAST);
    e.lit_type = (uint8_t)ty;
    e.flags = try_ ? TL_XF_TRY : 0;
    return mk(p, &e, start, end, &x.id, 1, x.depth, out, err);
}

/* name(args): the cursor is on the name.  `columns` is no function: a
 * well-formed `columns('re')` item was read as a selector (selector.c), so
 * meeting it here means it stands inside an expression or is malformed. */
static TlStatus call(P *p, PN *out, TlError *err)
{
    const TlToken *name = tok(p);
    const char *ns = p->text + name->start;
    TlOp op = tl_op_lookup(ns, name->len);
    if (op == TL_OP_NONE && name->len == 7 && strncasecmp(ns, "columns", 7) == 0)
        return tl_error_at(err, TL_ERR_USAGE, p->ea, p->src, name->start, name->len,
                           "columns('re') stands alone as an item of a list of "
                           "columns, with one string literal (man tally, "
                           "SELECTORS)");
    if (op == TL_OP_NONE) {
        const char *sug = tl_op_suggest(ns, name->len);
        return tl_error_at(err, TL_ERR_USAGE, p->ea, p->src, name->start, name->len,
                           "unknown function %s%s%s%s", tl_quote(ns, name->len).s,
                           sug ? " (did you mean \"" : "", sug ? sug : "",
                           sug ? "\"?)" : "");
    }
    uint32_t start = name->start, name_len = name->len;
    TlExpr e = tmpl(TL_X_CALL);
    e.op = (uint16_t)op;
    advance(p);
    advance(p); /* ( */
    uint32_t base = p->n_stk, depth = 0;
    TlStatus st = TL_OK;
    if (tok(p)->kind == TL_TK_STAR) {
        if (op != TL_OP_COUNT || peek(p, 1)->kind != TL_TK_RPAREN) {
            const TlToken *t = tok(p);
            return tl_error_at(err, TL_ERR_USAGE, p->ea, p->src, t->start, t->len,
                               "syntax error: \"*\" is only allowed in count(*)");
        }
        e.flags = TL_XF_STAR;
        advance(p);
    } else if (tok(p)->kind != TL_TK_RPAREN) {
        for (;;) {
            PN a;
            if ((st = expr(p, 0, &a, err)) != TL_OK) goto done;
            if ((st = stk_push(p, a.id, err)) != TL_OK) goto done;
            depth = max_u32(depth, a.depth);
            if (tok(p)->kind != TL_TK_COMMA) break;
            advance(p);
        }
    }
    if (tok(p)->kind != TL_TK_RPAREN) {
        st = expected(p, "\",\" or \")\"", err);
        goto done;
    }
    uint32_t end = tok_end(tok(p));
    advance(p);
    uint32_t n = p->n_stk - base;
    const TlOpInfo *info = tl_op_info(op);
    if ((int)n < info->min_args || (info->max_args >= 0 && (int)n > info->max_args)) {
        char want[64];
        if (info->max_args < 0)
            snprintf(want, sizeof want, "at least %d argument%s", info->min_args,
                     info->min_args == 1 ? "" : "s");
        else if (info->min_args == info->max_args)
            snprintf(want, sizeof want, "%d argument%s", info->min_args,
                     info->min_args == 1 ? "" : "s");
        else
            snprintf(want, sizeof want, "%d to %d arguments", info->min_args,
                     info->max_args);
        st = tl_error_at(err, TL_ERR_USAGE, p->ea, p->src, start, end - start,
                         "%.*s() takes %s, got %u", (int)name_len, p->text + start,
                         want, n);
        goto done;
    }
    /* agg(...) filter (where c): c becomes the last argument */
    if (is_word(p, tok(p), "filter") && peek(p, 1)->kind == TL_TK_LPAREN) {
        const TlToken *f = tok(p);
        if (!tl_op_is_agg(op)) {
            st = tl_error_at(err, TL_ERR_USAGE, p->ea, p->src, f->start, f->len,
                             "filter (where ...) applies only to an aggregate, "
                             "not to %.*s()", (int)name_len, p->text + start);
            goto done;
        }
        advance(p);
        advance(p); /* ( */
        if (!is_word(p, tok(p), "where")) {
            st = expected(p, "\"where\"", err);
            goto done;
        }
        advance(p);
        PN c;
        if ((st = expr(p, 0, &c, err)) != TL_OK) goto done;
        if ((st = stk_push(p, c.id, err)) != TL_OK) goto done;
        depth = max_u32(depth, c.depth);
        if (tok(p)->kind != TL_TK_RPAREN) {
            st = expected(p, "\")\"", err);
            goto done;
        }
        end = tok_end(tok(p));
        advance(p);
        e.flags |= TL_XF_FILTER;
        n++;
    }
    st = mk(p, &e, start, end, n ? p->stk + base : NULL, n, depth, out, err);
done:
    p->n_stk = base;
    return st;
}

/* case [x] when c then v ... [else e] end: the cursor is on `case`. */
static TlStatus case_expr(P *p, PN *out, TlError *err)
{
    uint32_t start = tok(p)->start, base = p->n_stk, depth = 0;
    TlStatus st = TL_OK;
    bool simple = false;
    PN x = {0};
    TlExpr e = tmpl(TL_X_CASE);
    advance(p);
    if (!is_kw(tok(p), TL_KW_WHEN)) {
        if ((st = expr(p, 0, &x, err)) != TL_OK) goto done;
        simple = true;
    }
    if (!is_kw(tok(p), TL_KW_WHEN)) {
        st = expected(p, "\"when\"", err);
        goto done;
    }
    while (is_kw(tok(p), TL_KW_WHEN)) {
        PN c, v;
        advance(p);
        if ((st = expr(p, 0, &c, err)) != TL_OK) goto done;
        if (simple) { /* x = v, spanning v's text */
            TlExpr eq = tmpl(TL_X_CALL);
            TlExprId ids[2] = {x.id, c.id};
            eq.op = TL_OP_EQ;
            st = mk(p, &eq, c.start, c.end, ids, 2, max_u32(x.depth, c.depth), &c, err);
            if (st != TL_OK) goto done;
        }
        if (!is_kw(tok(p), TL_KW_THEN)) {
            st = expected(p, "\"then\"", err);
            goto done;
        }
        advance(p);
        if ((st = expr(p, 0, &v, err)) != TL_OK) goto done;
        if ((st = stk_push(p, c.id, err)) != TL_OK) goto done;
        if ((st = stk_push(p, v.id, err)) != TL_OK) goto done;
        depth = max_u32(depth, max_u32(c.depth, v.depth));
    }
    if (is_kw(tok(p), TL_KW_ELSE)) {
        PN v;
        advance(p);
        if ((st = expr(p, 0, &v, err)) != TL_OK) goto done;
        if ((st = stk_push(p, v.id, err)) != TL_OK) goto done;
        depth = max_u32(depth, v.depth);
        e.flags = TL_XF_ELSE;
    }
    if (!is_kw(tok(p), TL_KW_END)) {
        st = expected(p, e.flags & TL_XF_ELSE ? "\"end\"" : "\"when\", \"else\" or \"end\"",
                      err);
        goto done;
    }
    uint32_t end = tok_end(tok(p));
    advance(p);
    st = mk(p, &e, start, end, p->stk + base, p->n_stk - base, depth, out, err);
done:
    p->n_stk = base;
    return st;
}

static TlStatus primary(P *p, PN *out, TlError *err)
{
    const TlToken *t = tok(p);
    TlExpr e;
    switch ((TlTokKind)t->kind) {
    case TL_TK_INT:
    case TL_TK_FLOAT:
        advance(p);
        return number(p, t, false, 0, out, err);
    case TL_TK_STRING: {
        e = tmpl(TL_X_LIT);
        e.lit_type = TL_TSTRING;
        TL_TRY(unquote(p, t, &e.v.str.s, &e.v.str.n, err));
        advance(p);
        return mk(p, &e, t->start, tok_end(t), NULL, 0, 0, out, err);
    }
    case TL_TK_QNAME:
        e = tmpl(TL_X_COL);
        TL_TRY(tl_parser_name(p, t, &e.name, err));
        advance(p);
        return mk(p, &e, t->start, tok_end(t), NULL, 0, 0, out, err);
    case TL_TK_LPAREN: {
        uint32_t start = t->start;
        advance(p);
        TL_TRY(expr(p, 0, out, err));
        if (tok(p)->kind != TL_TK_RPAREN) return expected(p, "\")\"", err);
        out->start = start;
        out->end = tok_end(tok(p));
        advance(p);
        return TL_OK;
    }
    case TL_TK_WORD:
        switch ((TlKeyword)t->kw) {
        case TL_KW_TRUE:
        case TL_KW_FALSE:
            e = tmpl(TL_X_LIT);
            e.lit_type = TL_TBOOL;
            e.v.b = t->kw == TL_KW_TRUE;
            advance(p);
            return mk(p, &e, t->start, tok_end(t), NULL, 0, 0, out, err);
        case TL_KW_NULL:
            e = tmpl(TL_X_LIT);
            e.lit_type = TL_TNULL;
            advance(p);
            return mk(p, &e, t->start, tok_end(t), NULL, 0, 0, out, err);
        case TL_KW_CASE:
            return case_expr(p, out, err);
        case TL_KW_CAST:
        case TL_KW_TRY_CAST:
            return cast_call(p, out, err);
        case TL_KW_DATE:
        case TL_KW_TIMESTAMP:
            if (peek(p, 1)->kind == TL_TK_STRING) return typed_literal(p, out, err);
            break;
        default:
            break;
        }
        if (t->kw != TL_KW_NONE && t->kw < TL_KW_FIRST_SOFT)
            return tl_parser_unexpected(p, err);
        if (peek(p, 1)->kind == TL_TK_LPAREN) return call(p, out, err);
        if (word_is(p, t, "interval") &&
            (peek(p, 1)->kind == TL_TK_STRING ||
             ((peek(p, 1)->kind == TL_TK_INT ||
               peek(p, 1)->kind == TL_TK_FLOAT) &&
              peek(p, 2)->kind == TL_TK_WORD)))
            return interval_literal(p, out, err);
        if (word_is(p, t, "current_date") ||
            word_is(p, t, "current_timestamp")) {
            /* SQL's bare forms; a column of that name needs quotes */
            e = tmpl(TL_X_CALL);
            e.op = word_is(p, t, "current_date") ? TL_OP_CURRENT_DATE
                                                 : TL_OP_NOW;
            advance(p);
            return mk(p, &e, t->start, tok_end(t), NULL, 0, 0, out, err);
        }
        e = tmpl(TL_X_COL);
        TL_TRY(tl_parser_name(p, t, &e.name, err));
        advance(p);
        return mk(p, &e, t->start, tok_end(t), NULL, 0, 0, out, err);
    default:
        return tl_parser_unexpected(p, err);
    }
}

static TlStatus prefix(P *p, PN *out, TlError *err)
{
    const TlToken *t = tok(p);
    PN x;
    if (t->kind == TL_TK_MINUS) {
        const TlToken *n = peek(p, 1);
        if ((n->kind == TL_TK_INT || n->kind == TL_TK_FLOAT) &&
            peek(p, 2)->kind != TL_TK_DCOLON) {
            advance(p);
            advance(p);
            return number(p, n, true, t->start, out, err);
        }
        advance(p);
        TL_TRY(expr(p, P_UNARY, &x, err));
        TlExpr e = tmpl(TL_X_CALL);
        e.op = TL_OP_NEG;
        return mk(p, &e, t->start, x.end, &x.id, 1, x.depth, out, err);
    }
    if (t->kind == TL_TK_PLUS) {
        advance(p);
        TL_TRY(expr(p, P_UNARY, out, err));
        out->start = t->start;
        return TL_OK;
    }
    if (is_kw(t, TL_KW_NOT)) {
        advance(p);
        TL_TRY(expr(p, P_CMP, &x, err));
        TlExpr e = tmpl(TL_X_CALL);
        e.op = TL_OP_NOT;
        return mk(p, &e, t->start, x.end, &x.id, 1, x.depth, out, err);
    }
    return primary(p, out, err);
}

/* The binding power of the infix operator at the cursor (0: none), its op,
 * and how many tokens spell it (`not in` is 2). */
static int infix(const P *p, TlOp *op, uint8_t *flags)
{
    const TlToken *t = tok(p);
    *flags = 0;
    switch ((TlTokKind)t->kind) {
    case TL_TK_EQ: case TL_TK_EQEQ: *op = TL_OP_EQ; return P_CMP;
    case TL_TK_NE: *op = TL_OP_NE; return P_CMP;
    case TL_TK_LT: *op = TL_OP_LT; return P_CMP;
    case TL_TK_LE: *op = TL_OP_LE; return P_CMP;
    case TL_TK_GT: *op = TL_OP_GT; return P_CMP;
    case TL_TK_GE: *op = TL_OP_GE; return P_CMP;
    case TL_TK_TILDE: case TL_TK_NTILDE: *op = TL_OP_REGEXP_FULL_MATCH; return P_CMP;
    case TL_TK_CONCAT: *op = TL_OP_CONCAT_OP; return P_CONCAT;
    case TL_TK_PLUS: *op = TL_OP_ADD; return P_ADD;
    case TL_TK_MINUS: *op = TL_OP_SUB; return P_ADD;
    case TL_TK_STAR: *op = TL_OP_MUL; return P_MUL;
    case TL_TK_SLASH: *op = TL_OP_DIV; return P_MUL;
    case TL_TK_DSLASH: *op = TL_OP_IDIV; return P_MUL;
    case TL_TK_PERCENT: *op = TL_OP_MOD; return P_MUL;
    case TL_TK_DCOLON: *op = TL_OP_NONE; return P_POSTFIX;
    case TL_TK_WORD:
        switch ((TlKeyword)t->kw) {
        case TL_KW_OR: *op = TL_OP_OR; return P_OR;
        case TL_KW_AND: *op = TL_OP_AND; return P_AND;
        case TL_KW_IS: *op = TL_OP_IS_NULL; return P_CMP;
        case TL_KW_IN: *op = TL_OP_NONE; return P_CMP;
        case TL_KW_BETWEEN: *op = TL_OP_BETWEEN; return P_CMP;
        case TL_KW_LIKE: *op = TL_OP_LIKE; return P_CMP;
        case TL_KW_ILIKE: *op = TL_OP_ILIKE; return P_CMP;
        case TL_KW_NOT: {
            const TlToken *n = peek(p, 1);
            *flags = TL_XF_NOT;
            if (is_kw(n, TL_KW_IN)) { *op = TL_OP_NONE; return P_CMP; }
            if (is_kw(n, TL_KW_BETWEEN)) { *op = TL_OP_BETWEEN; return P_CMP; }
            if (is_kw(n, TL_KW_LIKE)) { *op = TL_OP_LIKE; return P_CMP; }
            if (is_kw(n, TL_KW_ILIKE)) { *op = TL_OP_ILIKE; return P_CMP; }
            return 0;
        }
        default:
            return 0;
        }
    default:
        return 0;
    }
}

/* x [not] in (v, ...): the cursor is on `in`. */
static TlStatus in_list(P *p, const PN *x, uint8_t flags, PN *out, TlError *err)
{
    uint32_t base = p->n_stk, depth = x->depth;
    TlStatus st;
    advance(p);
    if (tok(p)->kind != TL_TK_LPAREN) return expected(p, "\"(\"", err);
    advance(p);
    if ((st = stk_push(p, x->id, err)) != TL_OK) goto done;
    for (;;) {
        PN v;
        if ((st = expr(p, 0, &v, err)) != TL_OK) goto done;
        if ((st = stk_push(p, v.id, err)) != TL_OK) goto done;
        depth = max_u32(depth, v.depth);
        if (tok(p)->kind != TL_TK_COMMA) break;
        advance(p);
    }
    if (tok(p)->kind != TL_TK_RPAREN) {
        st = expected(p, "\",\" or \")\"", err);
        goto done;
    }
    uint32_t end = tok_end(tok(p));
    advance(p);
    TlExpr e = tmpl(TL_X_IN);
    e.flags = flags;
    st = mk(p, &e, x->start, end, p->stk + base, p->n_stk - base, depth, out, err);
done:
    p->n_stk = base;
    return st;
}

/* Chains of `or` / `and` up to this many terms are left-deep (as written);
 * longer ones are balanced (see the top of the file). */
#define FLAT_MAX TL_MAX_DEPTH

/* Terms v[0..n) joined by op, left to right. */
static TlStatus left_deep(P *p, TlOp op, const PN *v, uint32_t n, PN *out,
                          TlError *err)
{
    PN kids[2], acc = v[0];
    for (uint32_t i = 1; i < n; i++) {
        kids[0] = acc;
        kids[1] = v[i];
        TL_TRY(mk_call(p, op, 0, kids, 2, &acc, err));
    }
    *out = acc;
    return TL_OK;
}

/* Terms v[0..n) joined by op, n > FLAT_MAX / 2: the join of both halves
 * (recursion depth log n), each left-deep once it is short enough. */
static TlStatus balanced(P *p, TlOp op, const PN *v, uint32_t n, PN *out,
                         TlError *err)
{
    PN kids[2];
    uint32_t half = n / 2;
    if (half <= FLAT_MAX / 2) TL_TRY(left_deep(p, op, v, half, &kids[0], err));
    else TL_TRY(balanced(p, op, v, half, &kids[0], err));
    if (n - half <= FLAT_MAX / 2)
        TL_TRY(left_deep(p, op, v + half, n - half, &kids[1], err));
    else TL_TRY(balanced(p, op, v + half, n - half, &kids[1], err));
    return mk_call(p, op, 0, kids, 2, out, err);
}

/* The rest of a chain `left op t2 op t3 ...` of `or` or `and` (the cursor
 * is on the first op, of binding power prec), as one tree. */
static TlStatus logic_chain(P *p, TlOp op, int prec, const PN *left, PN *out,
                            TlError *err)
{
    PN *v = NULL;
    uint32_t n = 0, cap = 0;
    TlStatus st = TL_OK;
    for (;;) {
        TlOp o;
        uint8_t fl;
        if (n == cap) {
            uint32_t nc = cap ? cap * 2 : 16;
            PN *t = tl_realloc(v, (size_t)nc * sizeof *t);
            if (!t) { st = tl_error_oom(err); break; }
            v = t;
            cap = nc;
        }
        if (n == 0) {
            v[n++] = *left;
            continue;
        }
        if (infix(p, &o, &fl) != prec || o != op || fl != 0) break;
        advance(p);
        if ((st = expr(p, prec + 1, &v[n], err)) != TL_OK) break;
        n++;
    }
    if (st == TL_OK)
        st = n <= FLAT_MAX ? left_deep(p, op, v, n, out, err)
                           : balanced(p, op, v, n, out, err);
    tl_free(v);
    return st;
}

static TlStatus expr(P *p, int min, PN *out, TlError *err)
{
    TlStatus st = TL_OK;
    PN left;
    bool after_cmp = false;
    if (p->depth >= TL_MAX_DEPTH) return too_deep(p, err);
    p->depth++;
    if ((st = prefix(p, &left, err)) != TL_OK) goto done;
    for (;;) {
        TlOp op;
        uint8_t flags;
        int prec = infix(p, &op, &flags);
        if (prec == 0 || prec < min) break;
        if (prec == P_CMP) {
            if (after_cmp) {
                st = tl_parser_unexpected(p, err);
                goto done;
            }
            after_cmp = true;
        }
        if (flags & TL_XF_NOT) advance(p); /* the `not` of not in/between/like */
        const TlToken *t = tok(p);
        PN kids[3], r;
        kids[0] = left;
        if (prec == P_POSTFIX) {
            TlType ty;
            advance(p);
            const TlToken *tn = tok(p);
            if ((st = type_name(p, &ty, err)) != TL_OK) goto done;
            TlExpr e = tmpl(TL_X_CAST);
            e.lit_type = (uint8_t)ty;
            st = mk(p, &e, left.start, tok_end(tn), &left.id, 1, left.depth, &r, err);
        } else if (is_kw(t, TL_KW_IN)) {
            st = in_list(p, &left, flags, &r, err);
        } else if (is_kw(t, TL_KW_IS)) {
            advance(p);
            if (is_kw(tok(p), TL_KW_NOT)) {
                flags = TL_XF_NOT;
                advance(p);
            }
            if (!is_kw(tok(p), TL_KW_NULL)) {
                st = expected(p, "\"null\"", err);
                goto done;
            }
            uint32_t end = tok_end(tok(p));
            advance(p);
            TlExpr e = tmpl(TL_X_CALL);
            e.op = TL_OP_IS_NULL;
            e.flags = flags;
            st = mk(p, &e, left.start, end, &left.id, 1, left.depth, &r, err);
        } else if (op == TL_OP_BETWEEN) {
            advance(p);
            if ((st = expr(p, P_CMP + 1, &kids[1], err)) != TL_OK) goto done;
            if (!is_kw(tok(p), TL_KW_AND)) {
                st = expected(p, "\"and\"", err);
                goto done;
            }
            advance(p);
            if ((st = expr(p, P_CMP + 1, &kids[2], err)) != TL_OK) goto done;
            st = mk_call(p, op, flags, kids, 3, &r, err);
        } else if (prec == P_OR || prec == P_AND) {
            st = logic_chain(p, op, prec, &left, &r, err);
        } else {
            bool ntilde = t->kind == TL_TK_NTILDE;
            advance(p);
            if ((st = expr(p, prec + 1, &kids[1], err)) != TL_OK) goto done;
            st = mk_call(p, op, flags, kids, 2, &r, err);
            if (st == TL_OK && ntilde) { /* s !~ re: not regexp_full_match(s, re) */
                kids[0] = r;
                st = mk_call(p, TL_OP_NOT, 0, kids, 1, &r, err);
            }
        }
        if (st != TL_OK) goto done;
        left = r;
    }
    *out = left;
done:
    p->depth--;
    return st;
}

/* ------------------------------------------------------------- entry */

/* Tokenize srcs[src].text[start, end) and prepare to parse it. */
TlStatus tl_parser_open(P *p, TlExprArena *ea, uint16_t src, uint32_t start,
                        uint32_t end, TlError *err)
{
    memset(p, 0, sizeof *p);
    p->ea = ea;
    p->src = src;
    if (src >= ea->n_srcs)
        return tl_error(err, TL_ERR_USAGE, "internal error: bad expression source");
    p->text = ea->srcs[src].text;
    size_t n = strlen(p->text);
    if (end > n) end = (uint32_t)n;
    if (start > end) start = end;
    return tl_lex(ea, src, start, end, &p->toks, &p->n_toks, err);
}

/* Release the parser's token array and child stack. */
void tl_parser_close(P *p)
{
    tl_free(p->toks);
    tl_free(p->stk);
    p->toks = NULL;
    p->stk = NULL;
}

/* Parse one expression (loosest precedence) at the cursor. */
TlStatus tl_parser_expr(P *p, PN *out, TlError *err)
{
    return expr(p, 0, out, err);
}

/* Parse srcs[src].text[start, end) as exactly one expression (ast.h). */
TlStatus tl_parse_expr(TlExprArena *ea, uint16_t src, uint32_t start,
                       uint32_t end, TlExprId *out, TlError *err)
{
    P p;
    PN n;
    TlStatus st = tl_parser_open(&p, ea, src, start, end, err);
    if (st != TL_OK) goto done;
    if ((st = expr(&p, 0, &n, err)) != TL_OK) goto done;
    if (tok(&p)->kind != TL_TK_EOF) {
        st = tl_parser_unexpected(&p, err);
        goto done;
    }
    *out = n.id;
done:
    tl_parser_close(&p);
    return st;
}
