/*
 * items.c -- lists of items: `--select 'a, b * 2 as c'`, `--sort '-v, k'`,
 * `--agg 'n = count(), sum(x)'`, `--rename 'a:b'`, ...
 *
 * A list is split at commas outside parentheses and quotes (single or
 * double; a doubled quote inside toggles twice, so it needs no special
 * case).  Each piece, trimmed of white space, is one item; an empty piece is
 * an error with a caret where it should be.  Then each item is parsed by the
 * expression parser (parse.h) plus the item's own syntax:
 *
 *   EXPR     EXPR
 *   SELECT   EXPR [as NAME]
 *   ASSIGN   [NAME =] EXPR    (a leading name followed by a single `=`; a
 *                              reserved word is never taken as the NAME)
 *   KEY      NAME = EXPR, or EXPR [as NAME]     (group-by keys)
 *   SORT     -NAME [nulls first|last]          (desc on a column), or
 *            EXPR [asc|desc] [nulls first|last]
 *   NAME     NAME
 *   RENAME   OLD:NEW
 *
 * NAME is a bare word (any word, even a keyword, where only a name can
 * stand) or a double-quoted name.  Expression items get an auto name
 * (man/tally.1, STEPS): a bare column keeps its name; an aggregate over one
 * bare column is `<fn>_<col>` with the function as written, lower-cased
 * (`avg(x)` -> `avg_x`); count() and count(*) are `count`; anything else is
 * the item's expression text with white space outside quotes removed
 * (`b * 2` -> `b*2`).
 *
 * Items of kind SELECT, SORT, KEY and NAME may be column selectors instead
 * (selector.c): the item then carries its TlSelector for the planner.
 */
#include "parse.h"

#include <ctype.h>

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Split text[0..n) into item ranges; ranges may be NULL to only count. */
static uint32_t split_list(const char *text, uint32_t n, bool split,
                           uint32_t (*ranges)[2])
{
    uint32_t k = 0, from = 0, depth = 0;
    char q = 0;
    for (uint32_t i = 0; split && i < n; i++) {
        char c = text[i];
        if (q) {
            if (c == q) q = 0;
        } else if (c == '\'' || c == '"') {
            q = c;
        } else if (c == '(') {
            depth++;
        } else if (c == ')') {
            if (depth) depth--;
        } else if (c == ',' && depth == 0) {
            if (ranges) ranges[k][0] = from, ranges[k][1] = i;
            k++;
            from = i + 1;
        }
    }
    if (ranges) ranges[k][0] = from, ranges[k][1] = n;
    return k + 1;
}

/* text[a, b) without white space outside quotes, into the pool. */
static const char *squeeze(TlExprArena *ea, const char *text, uint32_t a, uint32_t b)
{
    char *d = tl_strpool_alloc(&ea->pool, (size_t)(b - a) + 1);
    uint32_t k = 0;
    char q = 0;
    if (!d) return NULL;
    for (uint32_t i = a; i < b; i++) {
        char c = text[i];
        if (q) {
            if (c == q) q = 0;
        } else if (c == '\'' || c == '"') {
            q = c;
        } else if (is_space(c)) {
            continue;
        }
        d[k++] = c;
    }
    d[k] = 0;
    return d;
}

/* The auto name of the expression x (see the top of this file). */
static TlStatus auto_name(TlParser *p, const TlPNode *x, const char **out,
                          TlError *err)
{
    TlExprArena *ea = p->ea;
    const TlExpr *e = tl_ea_node(ea, x->id);
    if (e->kind == TL_X_COL) {
        *out = e->name;
        return TL_OK;
    }
    if (e->kind == TL_X_CALL && tl_op_is_agg((TlOp)e->op)) {
        const TlExpr *a = e->n_args == 1 ? tl_ea_node(ea, tl_ea_arg(ea, e, 0)) : NULL;
        if (e->n_args == 0 || (a && a->kind == TL_X_COL)) {
            uint32_t fn = 0; /* the function name as written starts the span */
            while (e->start + fn < strlen(p->text) &&
                   (isalnum((unsigned char)p->text[e->start + fn]) ||
                    p->text[e->start + fn] == '_'))
                fn++;
            size_t cn = a ? strlen(a->name) : 0;
            char *d = tl_strpool_alloc(&ea->pool, fn + 1 + cn + 1);
            if (!d) return tl_error_oom(err);
            for (uint32_t i = 0; i < fn; i++)
                d[i] = (char)tolower((unsigned char)p->text[e->start + i]);
            d[fn] = 0;
            if (a) {
                d[fn] = '_';
                memcpy(d + fn + 1, a->name, cn + 1);
            }
            *out = d;
            return TL_OK;
        }
    }
    *out = squeeze(ea, p->text, x->start, x->end);
    return *out ? TL_OK : tl_error_oom(err);
}

static bool is_name_tok(const TlToken *t, bool allow_reserved)
{
    if (t->kind == TL_TK_QNAME) return true;
    if (t->kind != TL_TK_WORD) return false;
    return allow_reserved || t->kw == TL_KW_NONE || t->kw >= TL_KW_FIRST_SOFT;
}

static TlStatus expect_end(TlParser *p, TlError *err)
{
    if (tl_parser_tok(p, 0)->kind != TL_TK_EOF) return tl_parser_unexpected(p, err);
    return TL_OK;
}

static TlStatus expected_at(TlParser *p, const char *what, TlError *err)
{
    const TlToken *t = tl_parser_tok(p, 0);
    return tl_error_at(err, TL_ERR_USAGE, p->ea, p->src, t->start, t->len,
                       "syntax error: expected %s", what);
}

/* A plain number where a column is wanted: SQL's ORDER BY 1 and GROUP BY 1
 * mean the first column, tally's `#1` (man/tally.1, SELECTORS). */
static TlStatus number_not_column(TlParser *p, const TlToken *t, TlError *err)
{
    return tl_error_at(err, TL_ERR_USAGE, p->ea, p->src, t->start, t->len,
                       "a number is not a column here: write #%.*s for column %.*s",
                       (int)t->len, p->text + t->start, (int)t->len,
                       p->text + t->start);
}

/* The optional `nulls first|last` of a sort item. */
static TlStatus sort_nulls(TlParser *p, TlItem *it, TlError *err)
{
    const TlToken *t = tl_parser_tok(p, 0);
    if (t->kind == TL_TK_WORD && t->kw == TL_KW_NULLS) {
        p->pos++;
        t = tl_parser_tok(p, 0);
        if (t->kind != TL_TK_WORD || (t->kw != TL_KW_FIRST && t->kw != TL_KW_LAST))
            return expected_at(p, "\"first\" or \"last\" after \"nulls\"", err);
        it->nulls_first = t->kw == TL_KW_FIRST;
        p->pos++;
    }
    return TL_OK;
}

/* Parse one item of the given kind from the open parser into *it. */
static TlStatus parse_item(TlParser *p, TlItemKind kind, TlItem *it, TlError *err)
{
    const TlToken *t0 = tl_parser_tok(p, 0), *t1 = tl_parser_tok(p, 1);
    TlPNode x;
    it->expr = TL_NO_ID;
    switch (kind) {
    case TL_ITEM_NAME:
        if (t0->kind == TL_TK_INT && t1->kind == TL_TK_EOF)
            return number_not_column(p, t0, err);
        if (!is_name_tok(t0, true)) return expected_at(p, "a column name", err);
        TL_TRY(tl_parser_name(p, t0, &it->name, err));
        p->pos++;
        it->auto_name = it->name;
        return expect_end(p, err);
    case TL_ITEM_RENAME:
        if (!is_name_tok(t0, true)) return expected_at(p, "a column name", err);
        TL_TRY(tl_parser_name(p, t0, &it->name, err));
        p->pos++;
        if (t1->kind != TL_TK_COLON)
            return expected_at(p, "\":\" (write OLD:NEW)", err);
        p->pos++;
        if (tl_parser_tok(p, 0)->kind == TL_TK_QNAME) {
            TL_TRY(tl_parser_name(p, tl_parser_tok(p, 0), &it->name2, err));
            p->pos++;
        } else {
            /* an unquoted new name is the rest of the item as written
             * ('x:x value', 'n:count-2'): it names a column, never an
             * expression, so it needs no quotes; a second ':' is still an
             * error (a comma forgotten between two renames) */
            const TlToken *first = tl_parser_tok(p, 0), *last = first;
            if (first->kind == TL_TK_EOF) return expected_at(p, "a new column name", err);
            while (tl_parser_tok(p, 0)->kind != TL_TK_EOF &&
                   tl_parser_tok(p, 0)->kind != TL_TK_COLON)
                last = tl_parser_tok(p, 0), p->pos++;
            it->name2 = tl_strpool_dup(&p->ea->pool, p->text + first->start,
                                       last->start + last->len - first->start);
            if (!it->name2) return tl_error_oom(err);
        }
        it->auto_name = it->name;
        return expect_end(p, err);
    case TL_ITEM_ASSIGN:
    case TL_ITEM_KEY:
        if (is_name_tok(t0, false) && t1->kind == TL_TK_EQ) {
            TL_TRY(tl_parser_name(p, t0, &it->name, err));
            p->pos += 2;
        }
        break;
    case TL_ITEM_SORT:
        if (t0->kind == TL_TK_MINUS && is_name_tok(t1, false)) {
            const TlToken *t2 = tl_parser_tok(p, 2);
            if (t2->kind == TL_TK_EOF || (t2->kind == TL_TK_WORD && t2->kw == TL_KW_NULLS)) {
                TlExpr e;
                memset(&e, 0, sizeof e);
                e.kind = TL_X_COL;
                e.col = -1;
                e.src = p->src;
                e.start = t1->start;
                e.len = t1->len;
                TL_TRY(tl_parser_name(p, t1, &e.name, err));
                TL_TRY(tl_ea_push(p->ea, &e, NULL, 0, &it->expr, err));
                it->desc = true;
                it->auto_name = e.name;
                p->pos += 2;
                TL_TRY(sort_nulls(p, it, err));
                return expect_end(p, err);
            }
        }
        break;
    default:
        break;
    }
    TL_TRY(tl_parser_expr(p, &x, err));
    it->expr = x.id;
    TL_TRY(auto_name(p, &x, &it->auto_name, err));
    if (kind == TL_ITEM_SELECT || (kind == TL_ITEM_KEY && !it->name)) {
        const TlToken *t = tl_parser_tok(p, 0);
        if (t->kind == TL_TK_WORD && t->kw == TL_KW_AS) {
            p->pos++;
            t = tl_parser_tok(p, 0);
            if (!is_name_tok(t, true)) return expected_at(p, "a column name after \"as\"", err);
            TL_TRY(tl_parser_name(p, t, &it->name, err));
            p->pos++;
        }
    } else if (kind == TL_ITEM_SORT) {
        const TlToken *t = tl_parser_tok(p, 0);
        if (t->kind == TL_TK_WORD && (t->kw == TL_KW_ASC || t->kw == TL_KW_DESC)) {
            it->desc = t->kw == TL_KW_DESC;
            p->pos++;
        }
        TL_TRY(sort_nulls(p, it, err));
    }
    return expect_end(p, err);
}

/* A lone pattern such as `a*b` also reads as an expression: keep that
 * reading too (expr and its names), for the planner to choose (it takes
 * the expression when its columns exist, lib/plan/select.c). */
static void also_expr(TlExprArena *ea, uint16_t src, uint32_t a, uint32_t b,
                      TlItemKind kind, TlItem *it)
{
    TlError scratch;
    TlParser p;
    TlItem alt = *it;
    if (tl_parser_open(&p, ea, src, a, b, &scratch) == TL_OK &&
        parse_item(&p, kind, &alt, &scratch) == TL_OK) {
        it->expr = alt.expr;
        it->name = alt.name;
        it->auto_name = alt.auto_name;
    }
    tl_parser_close(&p);
}

/* Split srcs[src].text into items (when split) and parse each as `kind`
 * (see ast.h and the top of this file).  *items lives in ea->pool. */
TlStatus tl_parse_items(TlExprArena *ea, uint16_t src, bool split,
                        TlItemKind kind, TlItem **items, uint32_t *n_items,
                        TlError *err)
{
    *items = NULL;
    *n_items = 0;
    if (src >= ea->n_srcs)
        return tl_error(err, TL_ERR_USAGE, "internal error: bad expression source");
    const char *text = ea->srcs[src].text;
    size_t len = strlen(text);
    if (len >= UINT32_MAX) return tl_error(err, TL_ERR_USAGE, "expression too long");
    uint32_t n = (uint32_t)len;
    uint32_t k = split_list(text, n, split, NULL);
    uint32_t (*ranges)[2] = tl_malloc((size_t)k * sizeof *ranges);
    TlItem *out = tl_strpool_alloc(&ea->pool, (size_t)k * sizeof *out);
    TlStatus st = TL_OK;
    if (!ranges || !out) {
        st = tl_error_oom(err);
        goto done;
    }
    split_list(text, n, split, ranges);
    for (uint32_t i = 0; i < k; i++) {
        uint32_t a = ranges[i][0], b = ranges[i][1];
        while (a < b && is_space(text[a])) a++;
        while (b > a && is_space(text[b - 1])) b--;
        TlItem *it = &out[i];
        memset(it, 0, sizeof *it);
        it->src = src;
        it->start = a;
        it->len = b - a;
        if (a == b) {
            st = tl_error_at(err, TL_ERR_USAGE, ea, src, a, 0,
                             split ? "syntax error: empty item in list"
                                   : kind == TL_ITEM_NAME ? "syntax error: empty name"
                                                          : "syntax error: empty expression");
            goto done;
        }
        if (kind == TL_ITEM_SELECT || kind == TL_ITEM_SORT || kind == TL_ITEM_KEY ||
            kind == TL_ITEM_NAME) {
            TlSelector *sel;
            const char *as_name;
            bool desc, nf;
            st = tl_parse_selector(ea, src, a, b, kind == TL_ITEM_SORT,
                                   kind == TL_ITEM_SELECT ? &as_name : NULL, &sel,
                                   &desc, &nf, err);
            if (st != TL_OK) goto done;
            if (sel) {
                it->expr = TL_NO_ID;
                it->sel = sel;
                it->name = kind == TL_ITEM_SELECT ? as_name : NULL;
                it->desc = desc;
                it->nulls_first = nf;
                if (sel->base.kind == TL_SEL_GLOB && sel->n_excl == 0 &&
                    kind != TL_ITEM_NAME)
                    also_expr(ea, src, a, b, kind, it);
                continue;
            }
        }
        TlParser p;
        st = tl_parser_open(&p, ea, src, a, b, err);
        if (st == TL_OK) st = parse_item(&p, kind, it, err);
        tl_parser_close(&p);
        if (st != TL_OK) goto done;
    }
    *items = out;
    *n_items = k;
done:
    tl_free(ranges);
    return st;
}
