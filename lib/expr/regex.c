/*
 * regex.c -- the regular expressions of an expression arena, compiled once.
 *
 * When resolve types a regexp_* call (lib/plan/resolve.c), it hands the
 * call here: its options must be a constant string of known letters, the
 * group of regexp_extract a constant from 0 to 9, and a constant pattern is
 * compiled now, with its options (kernels/fn_regex.h).  So a bad pattern or
 * option is a usage error before any row is read, with a caret under the
 * offending character of the literal:
 *
 *   invalid regular expression: missing closing parenthesis
 *     --filter: regexp_matches(s, 'a(b')
 *                                     ^
 *
 * The compiled patterns stay in the arena (ea->regexes), keyed by pattern,
 * options and whether the match is full, until tl_ea_free; the evaluator
 * finds a call's pattern there once per batch (tl_ea_regex_find) and every
 * thread matches with it (the compiled code is read-only; each kernel call
 * has its own match data).  A pattern that is no literal (a column, or an
 * expression the optimizer folds later) is compiled by the kernel, which
 * keeps the last eight distinct ones of a batch.
 */
#include "expr.h"
#include "../../kernels/fn_regex.h"

#include <stdio.h>

struct TlExprRegex {
    const char *pat, *flags; /* in ea->pool (the literals' own text) */
    uint32_t pat_len, flags_len;
    bool full;
    TlRegex *re;
};

/* The byte of srcs[src].text where byte `off` of the value of the string
 * literal written at [start, start + len) stands ('' stands for one quote),
 * or the literal's start when its text is not a quoted string. */
static uint32_t literal_pos(const TlExprArena *ea, uint16_t src, uint32_t start,
                            uint32_t len, size_t off)
{
    const char *t = ea->srcs[src].text;
    uint32_t i = start, end = start + len;
    if (len < 2 || t[i] != '\'') return start;
    i++;
    for (size_t v = 0; v < off && i + 1 < end; v++) i += t[i] == '\'' ? 2 : 1;
    return i < end ? i : end - 1;
}

static const TlExpr *arg_node(const TlExprArena *ea, TlExprId call, uint32_t i)
{
    return tl_ea_node(ea, tl_ea_arg(ea, tl_ea_node(ea, call), i));
}

static bool is_lit(const TlExpr *e, TlType t)
{
    return e->kind == TL_X_LIT && (e->lit_type == t || e->lit_type == TL_TNULL);
}

/* See expr.h. */
TlStatus tl_ea_regex_prepare(TlExprArena *ea, TlExprId call, TlError *err)
{
    const TlExpr *c = tl_ea_node(ea, call);
    const char *name = tl_op_info((TlOp)c->op)->name;
    int fa;
    bool allow_g, full;
    if (!tl_k_regex_fn(name, &fa, &allow_g, &full)) return TL_OK;
    const char *flags = "";
    uint32_t nf = 0;
    if ((int)c->n_args > fa) {
        const TlExpr *f = arg_node(ea, call, (uint32_t)fa);
        size_t bad;
        if (!is_lit(f, TL_TSTRING) || f->lit_type == TL_TNULL)
            return tl_error_at(err, TL_ERR_USAGE, ea, f->src, f->start, f->len,
                               "the options of %s must be a constant string "
                               "(not null)", name);
        flags = f->v.str.s ? f->v.str.s : "";
        nf = f->v.str.n;
        if (!tl_k_regex_flags_ok(flags, nf, allow_g, &bad))
            return tl_error_at(err, TL_ERR_USAGE, ea, f->src,
                               literal_pos(ea, f->src, f->start, f->len, bad), 1,
                               "unknown option '%c' of %s (options: c i l m n "
                               "p s%s)", flags[bad], name,
                               allow_g ? " g" : "; g only in regexp_replace");
    }
    if (c->op == TL_OP_REGEXP_EXTRACT && c->n_args > 2) {
        const TlExpr *g = arg_node(ea, call, 2);
        if (!is_lit(g, TL_TINT64) ||
            (g->lit_type == TL_TINT64 && (g->v.i < 0 || g->v.i > 9)))
            return tl_error_at(err, TL_ERR_USAGE, ea, g->src, g->start, g->len,
                               "the group of regexp_extract must be a constant "
                               "from 0 to 9");
    }
    const TlExpr *p = arg_node(ea, call, 1);
    if (p->kind != TL_X_LIT || p->lit_type != TL_TSTRING) return TL_OK;
    const struct TlRegex *re;
    return tl_ea_regex_compile(ea, p->src, p->start, p->len,
                               p->v.str.s ? p->v.str.s : "", p->v.str.n, flags,
                               nf, full, &re, err);
}

/* See expr.h. */
TlStatus tl_ea_regex_compile(TlExprArena *ea, uint16_t src, uint32_t start,
                             uint32_t len, const char *pat, size_t n,
                             const char *flags, size_t nf, bool full,
                             const struct TlRegex **out, TlError *err)
{
    if ((*out = tl_ea_regex_lookup(ea, pat, n, flags, nf, full))) return TL_OK;
    if (ea->n_regexes == ea->cap_regexes) {
        uint32_t nc = ea->cap_regexes ? ea->cap_regexes * 2 : 4;
        TlExprRegex *v = tl_realloc(ea->regexes, nc * sizeof *v);
        if (!v) return tl_error_oom(err);
        ea->regexes = v;
        ea->cap_regexes = nc;
    }
    TlRegex *re;
    size_t pos;
    TlStatus st = tl_k_regex_compile(pat, n, flags, nf, full, &re, &pos, err);
    if (st == TL_ERR_USAGE) {
        char why[200];
        snprintf(why, sizeof why, "%.199s", err->msg);
        return tl_error_at(err, TL_ERR_USAGE, ea, src,
                           literal_pos(ea, src, start, len, pos), 1,
                           "invalid regular expression: %s", why);
    }
    if (st != TL_OK) return st;
    ea->regexes[ea->n_regexes++] = (TlExprRegex){
        .pat = pat, .pat_len = (uint32_t)n, .flags = flags,
        .flags_len = (uint32_t)nf, .full = full, .re = re};
    *out = re;
    return TL_OK;
}

/* See expr.h. */
const struct TlRegex *tl_ea_regex_lookup(const TlExprArena *ea,
                                         const char *pat, size_t n,
                                         const char *flags, size_t nf,
                                         bool full)
{
    for (uint32_t i = 0; i < ea->n_regexes; i++) {
        const TlExprRegex *r = &ea->regexes[i];
        if (r->full == full && r->pat_len == n && r->flags_len == nf &&
            memcmp(r->pat, pat, n) == 0 && memcmp(r->flags, flags, nf) == 0)
            return r->re;
    }
    return NULL;
}

/* See expr.h. */
void tl_ea_regex_free(TlExprArena *ea)
{
    for (uint32_t i = 0; i < ea->n_regexes; i++) tl_k_regex_free(ea->regexes[i].re);
    tl_free(ea->regexes);
    ea->regexes = NULL;
    ea->n_regexes = ea->cap_regexes = 0;
}
