/*
 * select.c -- column selectors expanded against a step's input schema
 * (man/tally.1, SELECTORS; their text is lib/dsl/selector.c's).
 *
 * Each step that takes columns (select, sort, group-by keys, drop,
 * distinct, by) parses its items, then calls tl_plan_expand before it
 * resolves them: a selector item becomes one item per column it matches,
 * in schema order, each a plain column of that name with the selector's
 * span (for carets) and its sort direction.  So the plan, and explain,
 * hold only the columns, and what a selector matches is decided by the
 * schema at that step, after every step before it.
 *
 * `columns('re')` matches the names in which the regular expression finds
 * a match anywhere (a partial match, as DuckDB's COLUMNS('re') and
 * regexp_matches), compiled by the expression arena with the options of
 * the regexp functions, so an invalid one has the same caret.
 *
 * A lone pattern may also be a name or an expression: a column named
 * exactly as the pattern is taken as written (`v*` is the column "v*" when
 * there is one), and a pattern that reads as an expression over existing
 * columns (`a*b` with columns a and b) stays that expression.
 *
 * A selector that matches nothing, or a position past the last column,
 * sets the arena's unknown_name as an unknown name does: an input whose
 * columns came from a sample (NDJSON) is then asked for the columns after
 * it before the error stands (tl_plan_more_columns).
 */
#include "steps.h"

#include "../core/text.h"
#include "../../kernels/fn_regex.h"

#include <string.h>

/* Whether every column expression id reads is in s. */
static bool columns_exist(const TlExprArena *ea, TlExprId id, const TlSchema *s)
{
    const TlExpr *e = tl_ea_node(ea, id);
    if (e->kind == TL_X_COL) return tl_schema_find(s, e->name) >= 0;
    for (uint32_t i = 0; i < e->n_args; i++)
        if (!columns_exist(ea, tl_ea_arg(ea, e, i), s)) return false;
    return true;
}

/* The column of one END (a name or a position), or an error at it. */
static TlStatus end_column(TlPlan *p, const TlSchema *s, const TlItem *it,
                           const TlSelEnd *e, int *col, TlError *err)
{
    if (e->name) {
        const char *near;
        if ((*col = tl_schema_find(s, e->name)) >= 0) return TL_OK;
        near = tl_schema_suggest(s, e->name);
        p->ea.unknown_name = true;
        if (near)
            return tl_error_at(err, TL_ERR_USAGE, &p->ea, it->src, e->start, e->len,
                               "unknown column %s (did you mean %s?)",
                               tl_quote_name(e->name).s, tl_quote_name(near).s);
        return tl_error_at(err, TL_ERR_USAGE, &p->ea, it->src, e->start, e->len,
                           "unknown column %s", tl_quote_name(e->name).s);
    }
    if (e->pos < 1)
        return tl_error_at(err, TL_ERR_USAGE, &p->ea, it->src, e->start, e->len,
                           "column positions start at #1");
    if (e->pos > s->n_fields) {
        p->ea.unknown_name = true; /* columns after a sample may reach it */
        return tl_error_at(err, TL_ERR_USAGE, &p->ea, it->src, e->start, e->len,
                           "#%lld is past the last column (#%d, %s)",
                           (long long)e->pos, s->n_fields,
                           s->n_fields ? tl_quote_name(s->fields[s->n_fields - 1].name).s
                                       : "none");
    }
    *col = (int)(e->pos - 1);
    return TL_OK;
}

/* The error of a pattern that matches no column. */
static TlStatus no_match(TlPlan *p, const TlItem *it, const TlSelPart *part,
                         TlError *err)
{
    p->ea.unknown_name = true; /* columns after a sample may match */
    return tl_error_at(err, TL_ERR_USAGE, &p->ea, it->src, part->start, part->len,
                       "no column matches %.*s", (int)part->len,
                       p->ea.srcs[it->src].text + part->start);
}

/* Mark the columns of s that part matches (on[c] = v); an error when it
 * matches none. */
static TlStatus mark_part(TlPlan *p, const TlSchema *s, const TlItem *it,
                          const TlSelPart *part, bool *on, bool v, TlError *err)
{
    int a, b, hits = 0;
    switch ((TlSelKind)part->kind) {
    case TL_SEL_GLOB:
        if ((a = tl_schema_find(s, part->a.name)) >= 0) { /* the name as written */
            on[a] = v;
            return TL_OK;
        }
        for (int c = 0; c < s->n_fields; c++)
            if (tl_glob_match(part->a.name, s->fields[c].name)) {
                on[c] = v;
                hits++;
            }
        return hits ? TL_OK : no_match(p, it, part, err);
    case TL_SEL_REGEX: {
        const struct TlRegex *re;
        TL_TRY(tl_ea_regex_compile(&p->ea, it->src, part->a.start, part->a.len,
                                   part->a.name, strlen(part->a.name), "", 0,
                                   false, &re, err));
        for (int c = 0; c < s->n_fields; c++) {
            const char *nm = s->fields[c].name;
            bool hit;
            TlStatus st = tl_k_regex_search(re, nm, strlen(nm), &hit, err);
            if (st == TL_ERR_DATA)
                return tl_error_at(err, TL_ERR_USAGE, &p->ea, it->src, part->start,
                                   part->len, "regular expression too complex for "
                                   "the column name %s (match limit)",
                                   tl_quote_name(nm).s);
            if (st != TL_OK) return st;
            if (hit) {
                on[c] = v;
                hits++;
            }
        }
        return hits ? TL_OK : no_match(p, it, part, err);
    }
    case TL_SEL_NAME:
    case TL_SEL_POS:
        TL_TRY(end_column(p, s, it, &part->a, &a, err));
        on[a] = v;
        return TL_OK;
    case TL_SEL_RANGE:
        TL_TRY(end_column(p, s, it, &part->a, &a, err));
        TL_TRY(end_column(p, s, it, &part->b, &b, err));
        if (b < a)
            return tl_error_at(err, TL_ERR_USAGE, &p->ea, it->src, part->start,
                               part->len, "the range ends before it starts: %s is "
                               "column #%d, %s is column #%d",
                               tl_quote_name(s->fields[a].name).s, a + 1,
                               tl_quote_name(s->fields[b].name).s, b + 1);
        for (int c = a; c <= b; c++) on[c] = v;
        return TL_OK;
    }
    return tl_error(err, TL_ERR_USAGE, "internal error: bad selector");
}

/* The item for column c of s standing for selector item it. */
static TlStatus column_item(TlPlan *p, const TlSchema *s, int c, TlItemKind kind,
                            const TlItem *it, TlItem *out, TlError *err)
{
    const char *nm = s->fields[c].name;
    *out = *it;
    out->sel = NULL;
    out->name = kind == TL_ITEM_SELECT ? it->name : NULL; /* `#1 as x` */
    out->expr = TL_NO_ID;
    if (!(out->auto_name = tl_strpool_dup(&p->ea.pool, nm, strlen(nm))))
        return tl_error_oom(err);
    if (kind == TL_ITEM_NAME) {
        out->name = out->auto_name;
        return TL_OK;
    }
    TlExpr e;
    memset(&e, 0, sizeof e);
    e.kind = TL_X_COL;
    e.col = -1;
    e.name = out->auto_name;
    e.src = it->src;
    e.start = it->start;
    e.len = it->len;
    return tl_ea_push(&p->ea, &e, NULL, 0, &out->expr, err);
}

/* A plain number among sort or group-by keys (ORDER BY 1 in SQL); a named
 * key (`k = 1`) is a constant, as meant. */
static TlStatus number_key(TlPlan *p, const TlItem *it, TlError *err)
{
    const TlExpr *e = tl_ea_node(&p->ea, it->expr);
    long long v;
    if (it->name || e->kind != TL_X_LIT || e->lit_type != TL_TINT64) return TL_OK;
    v = (long long)e->v.i;
    return tl_error_at(err, TL_ERR_USAGE, &p->ea, it->src, it->start, it->len,
                       "a number is not a column here: write #%lld%s for column %lld",
                       v < 0 ? -v : v, v < 0 ? " desc" : "", v < 0 ? -v : v);
}

/* See steps.h. */
TlStatus tl_plan_expand(TlPlan *p, const TlSchema *in, TlItemKind kind,
                        bool numbers, TlItemVec *iv, TlError *err)
{
    TlItemVec out = {0};
    bool *on = NULL, any = false;
    TlStatus st = TL_OK;
    for (uint32_t i = 0; i < iv->n; i++) {
        TlItem *it = &iv->v[i];
        const TlSelector *x = it->sel;
        if (x && x->base.kind == TL_SEL_GLOB && x->n_excl == 0 &&
            it->expr != TL_NO_ID && tl_schema_find(in, x->base.a.name) < 0 &&
            columns_exist(&p->ea, it->expr, in))
            it->sel = NULL;
        if (!it->sel && it->expr != TL_NO_ID && numbers)
            TL_TRY(number_key(p, it, err));
        any = any || it->sel;
    }
    if (!any) return TL_OK;
    on = tl_malloc((size_t)(in->n_fields ? in->n_fields : 1) * sizeof *on);
    if (!on) return tl_error_oom(err);
    for (uint32_t i = 0; st == TL_OK && i < iv->n; i++) {
        const TlItem *it = &iv->v[i];
        const TlSelector *x = it->sel;
        TlItem one;
        int n_on = 0;
        if (!x) {
            st = tl_plan_items_add(&out, it, 1, err);
            continue;
        }
        memset(on, 0, (size_t)in->n_fields * sizeof *on);
        st = mark_part(p, in, it, &x->base, on, true, err);
        for (uint32_t k = 0; st == TL_OK && k < x->n_excl; k++)
            st = mark_part(p, in, it, &x->excl[k], on, false, err);
        for (int c = 0; st == TL_OK && c < in->n_fields; c++) {
            if (!on[c]) continue;
            n_on++;
            st = column_item(p, in, c, kind, it, &one, err);
            if (st == TL_OK) st = tl_plan_items_add(&out, &one, 1, err);
        }
        if (st == TL_OK && n_on == 0)
            st = tl_error_at(err, TL_ERR_USAGE, &p->ea, it->src, it->start, it->len,
                             "the selector leaves no column");
        if (st == TL_OK && n_on > 1 && it->name)
            st = tl_error_at(err, TL_ERR_USAGE, &p->ea, it->src, it->start, it->len,
                             "as %s names one column, but the selector matches %d",
                             tl_quote_name(it->name).s, n_on);
    }
    tl_free(on);
    if (st != TL_OK) {
        tl_free(out.v);
        return st;
    }
    tl_free(iv->v);
    *iv = out;
    return TL_OK;
}
