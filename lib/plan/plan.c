/*
 * plan.c -- TallySpec -> logical plan.
 *
 * The plan is built in one pass over the spec.  First the scan: every input
 * is opened (its reader reads the header and infers types from the first
 * batch), and the scan's schema is the union of the inputs' columns by name,
 * in order of first appearance (man/tally.1, INPUTS, several inputs):
 *
 *   int64 + float64 -> float64      null (no value seen) + T -> T
 *   any other mix   -> string
 *
 * An input whose column is narrower than the union gets a type hint, so its
 * reader produces the union's type directly (reading "01" as a string gives
 * "01", where casting the int 1 would give "1"): a reader the plan keeps is
 * reopened with it now, the others are closed after planning (the plan
 * keeps their columns, TlPlanShape, plan.h) and the scan opens them with
 * their hints when it reaches them, so a glob of any size costs a few
 * bytes a file here.
 *
 * A column nobody has seen a value in keeps the null type.  It must not be
 * planned as string: its values may still come in a later batch (the reader
 * then restarts the run with the real type), and until then `v > 1` must
 * resolve as it will once v is known (a null column coerces like the null
 * literal), not fail as "cannot compare string with int64" before the reader
 * had a chance to see a value.  A column empty in the whole input stays null:
 * written as empty fields, shown as `null` by `tally schema`.
 *
 * Then one node per step, each expression parsed from its TallyText
 * (registered as a source so errors can point into it) and resolved against
 * the current schema:
 *
 *   filter    filter node per predicate (must be bool)
 *   select    project node (names: `as NAME` or the item's auto name)
 *   with      project node: every column passes through, NAME replaced in
 *             place or appended; a later item sees the earlier ones.  A
 *             run of items that append columns shares one node (TlWithRun),
 *             an item reading the ones before it (tl_plan_reads_self), so
 *             n such items cost O(n); an item that replaces a column, or
 *             reads the one the run's first item replaced, starts a new
 *             node.  A filter step between two with steps joins the run
 *             as a guard (runs.c)
 *   drop      project node without the dropped columns; consecutive drop
 *             steps share one (runs.c)
 *   rename    project node with new names (all renames at once, so a:b,b:a
 *             swaps); consecutive rename steps share one (runs.c)
 *   group_by  aggregate node: keys then aggregates; items that are
 *             expressions over aggregates add a project (see over_aggs)
 *   sort      sort node (limit -1)
 *   limit     limit node, or limit-by node with `by`
 *   distinct  distinct node (columns, or none for all)
 *   join      the right side is planned first, as a pipeline of its own
 *             (its own scan over its own group of inputs, its own steps);
 *             then a join node with child = left, right = that subtree.
 *             Keys are `k`, `k1,k2` or `left=right` items; key types must
 *             match, except int64 with float64 (compared as float64) and
 *             an all-null column (matches nothing).  The output schema is
 *             every left column, then the right's non-key columns (a
 *             clashing name gets the suffix); semi and anti keep the left
 *             schema.  For right and full joins a key column takes the
 *             common type (its values may come from the right).
 *
 * Pass-through nodes (filter, sort, limit, distinct) share their child's
 * schema pointer; every schema is owned by the plan's schema list.
 */
#include "plan.h"
#include "../../formats/infer.h"

#include "../core/pool.h"
#include "../dsl/dsl.h"
#include "resolve.h"
#include "steps.h"
#include "../expr/eval.h" /* tl_expr_reads_from */
#include "../core/text.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ helpers */

/* See plan.h. */
TlStatus tl_plan_schema_new(TlPlan *p, TlSchema **out, TlError *err)
{
    if (p->n_schemas == p->cap_schemas) {
        int nc = p->cap_schemas ? p->cap_schemas * 2 : 16;
        TlSchema **v = tl_realloc(p->schemas, (size_t)nc * sizeof *v);
        if (!v) return tl_error_oom(err);
        p->schemas = v;
        p->cap_schemas = nc;
    }
    TlSchema *s = tl_calloc(1, sizeof *s);
    if (!s) return tl_error_oom(err);
    p->schemas[p->n_schemas++] = s;
    *out = s;
    return TL_OK;
}

/* See plan.h.  The node is zeroed except kind, child, right and limit. */
TlStatus tl_plan_push(TlPlan *p, TlPlanKind kind, TlPlanId child, TlPlanId *id,
                      TlError *err)
{
    TL_TRY(tl_arena_push(&p->nodes, id, err));
    TlPlanNode *n = tl_plan_node(p, *id);
    n->kind = (uint8_t)kind;
    n->child = child;
    n->right = TL_NO_ID;
    n->limit = -1;
    if (child != TL_NO_ID) n->schema = tl_plan_node(p, child)->schema;
    return TL_OK;
}

/* See plan.h.  An empty list gets start 0. */
TlStatus tl_plan_push_ids(TlPlan *p, const TlExprId *ids, uint32_t n,
                          uint32_t *start, TlError *err)
{
    *start = p->ids.n;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id;
        TL_TRY(tl_arena_push(&p->ids, &id, err));
        *(TlExprId *)tl_arena_at(&p->ids, id) = ids[i];
    }
    return TL_OK;
}

/* See plan.h. */
TlStatus tl_plan_push_ints(TlPlan *p, const int32_t *v, uint32_t n,
                           uint32_t *start, TlError *err)
{
    *start = p->ints.n;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id;
        TL_TRY(tl_arena_push(&p->ints, &id, err));
        *(int32_t *)tl_arena_at(&p->ints, id) = v[i];
    }
    return TL_OK;
}


/* See steps.h. */
TlStatus tl_plan_items_add(TlItemVec *iv, const TlItem *items, uint32_t n,
                           TlError *err)
{
    if (iv->n + n > iv->cap) {
        uint32_t nc = iv->cap ? iv->cap : 8;
        while (nc < iv->n + n) nc *= 2;
        TlItem *v = tl_realloc(iv->v, (size_t)nc * sizeof *v);
        if (!v) return tl_error_oom(err);
        iv->v = v;
        iv->cap = nc;
    }
    memcpy(iv->v + iv->n, items, (size_t)n * sizeof *items);
    iv->n += n;
    return TL_OK;
}

/* Parse texts[0..n) as items of `kind` into iv.  When names[i] is set (JSON
 * objects: the name came as the key), texts[i] is one bare expression named
 * names[i]. */
TlStatus tl_plan_parse_list(TlPlan *p, const TallyText *texts, int n,
                            char *const *names, const char *origin, bool split,
                            TlItemKind kind, TlItemVec *iv, TlError *err)
{
    for (int i = 0; i < n; i++) {
        uint16_t src;
        TlItem *items;
        uint32_t n_items;
        bool named = names && names[i];
        const char *o = texts[i].origin ? texts[i].origin : origin;
        TL_TRY(tl_ea_add_src(&p->ea, texts[i].text, o, &src, err));
        TL_TRY(tl_parse_items(&p->ea, src, named ? false : split,
                              named ? TL_ITEM_EXPR : kind, &items, &n_items,
                              err));
        if (named) {
            const char *nm =
                tl_strpool_dup(&p->ea.pool, names[i], strlen(names[i]));
            if (!nm) return tl_error_oom(err);
            for (uint32_t j = 0; j < n_items; j++) items[j].name = nm;
        }
        TL_TRY(tl_plan_items_add(iv, items, n_items, err));
    }
    return TL_OK;
}

static const char *item_name(const TlItem *it)
{
    return it->name ? it->name : it->auto_name;
}

/* "unknown column" with a suggestion, pointing at the item. */
static TlStatus unknown_column(TlPlan *p, const TlSchema *s,
                               const TlItem *it, const char *name, TlError *err)
{
    const char *near = tl_schema_suggest(s, name);
    p->ea.unknown_name = true;
    if (near)
        return tl_error_at(err, TL_ERR_USAGE, &p->ea, it->src, it->start,
                           it->len, "unknown column %s (did you mean %s?)",
                           tl_quote_name(name).s, tl_quote_name(near).s);
    return tl_error_at(err, TL_ERR_USAGE, &p->ea, it->src, it->start, it->len,
                       "unknown column %s", tl_quote_name(name).s);
}

/* Push a resolved reference to column i of s. */
TlStatus tl_plan_col_ref(TlPlan *p, const TlSchema *s, int i, TlExprId *out,
                         TlError *err)
{
    TlExpr t;
    memset(&t, 0, sizeof t);
    t.kind = TL_X_COL;
    t.type = (uint8_t)s->fields[i].type;
    t.col = i;
    t.name = tl_strpool_dup(&p->ea.pool, s->fields[i].name,
                            strlen(s->fields[i].name));
    if (!t.name) return tl_error_oom(err);
    return tl_ea_push(&p->ea, &t, NULL, 0, out, err);
}

/* See plan.h. */
bool tl_plan_reads_self(const TlPlan *p, const TlPlanNode *n)
{
    int w;
    if (n->kind != TL_PLAN_PROJECT || n->child == TL_NO_ID) return false;
    w = tl_plan_node(p, n->child)->schema->n_fields;
    for (uint32_t i = 0; i < n->n_exprs; i++)
        if (tl_expr_reads_from(&p->ea, tl_plan_expr(p, n->exprs, i), w)) return true;
    return false;
}

/* Push a project node over child with exprs[0..n) named by `out` (which
 * the node takes: it must come from tl_plan_schema_new). */
static TlStatus push_project(TlPlan *p, TlPlanId child, const TlExprId *exprs,
                             uint32_t n, const TlSchema *out, TlPlanId *id,
                             TlError *err)
{
    uint32_t start;
    TL_TRY(tl_plan_push_ids(p, exprs, n, &start, err));
    TL_TRY(tl_plan_push(p, TL_PLAN_PROJECT, child, id, err));
    TlPlanNode *nd = tl_plan_node(p, *id);
    nd->exprs = start;
    nd->n_exprs = n;
    nd->schema = out;
    return TL_OK;
}

/* A project that passes columns through, in `order` (indexes into the
 * child schema), renamed to names[k] (or kept when names is NULL). */
TlStatus tl_plan_push_passthrough(TlPlan *p, TlPlanId child, const int *order,
                                  int n, const char *const *names, TlPlanId *id,
                                  TlError *err)
{
    const TlSchema *in = tl_plan_node(p, child)->schema;
    TlSchema *out;
    TlExprId *exprs = tl_malloc((size_t)(n ? n : 1) * sizeof *exprs);
    TlStatus st;
    if (!exprs) return tl_error_oom(err);
    st = tl_plan_schema_new(p, &out, err);
    for (int k = 0; st == TL_OK && k < n; k++) {
        int c = order[k];
        st = tl_plan_col_ref(p, in, c, &exprs[k], err);
        if (st == TL_OK)
            st = tl_schema_add(out, names ? names[k] : in->fields[c].name,
                               in->fields[c].type, err);
    }
    if (st == TL_OK) st = push_project(p, child, exprs, (uint32_t)n, out, id, err);
    tl_free(exprs);
    return st;
}

/* Column indexes (into s) of NAME items; unknown names are usage errors. */
static TlStatus item_columns(TlPlan *p, const TlSchema *s,
                             const TlItemVec *iv, int32_t *cols, TlError *err)
{
    for (uint32_t i = 0; i < iv->n; i++) {
        int c = tl_schema_find(s, iv->v[i].name);
        if (c < 0) return unknown_column(p, s, &iv->v[i], iv->v[i].name, err);
        cols[i] = c;
    }
    return TL_OK;
}

/* ------------------------------------------------------------ steps */

/* The predicates of a filter step, resolved against s and checked to be
 * boolean, into preds[0..iv->n) (iv: its parsed items). */
TlStatus tl_plan_filter_preds(TlPlan *p, const TallyStep *s, const TlSchema *in,
                              TlItemVec *iv, TlExprId **preds, TlError *err)
{
    TlStatus st = tl_plan_parse_list(p, s->items, s->n_items, NULL, s->origin, s->split,
                                     TL_ITEM_EXPR, iv, err);
    if (st != TL_OK) return st;
    if (!(*preds = tl_malloc((size_t)(iv->n ? iv->n : 1) * sizeof **preds)))
        return tl_error_oom(err);
    for (uint32_t i = 0; st == TL_OK && i < iv->n; i++) {
        const TlItem *it = &iv->v[i];
        st = tl_resolve_expr(&p->ea, it->expr, in, false, &(*preds)[i], err);
        if (st != TL_OK) break;
        TlType t = (TlType)tl_ea_node(&p->ea, (*preds)[i])->type;
        if (t != TL_TBOOL && t != TL_TNULL)
            st = tl_error_at(err, TL_ERR_USAGE, &p->ea, it->src, it->start,
                             it->len, "filter must be a boolean expression, got %s",
                             tl_type_name(t));
    }
    return st;
}

/* One filter node per predicate over *cur. */
TlStatus tl_plan_push_filters(TlPlan *p, const TlExprId *preds, uint32_t n,
                              TlPlanId *cur, TlError *err)
{
    for (uint32_t i = 0; i < n; i++) {
        TlPlanId id;
        uint32_t start;
        TL_TRY(tl_plan_push_ids(p, &preds[i], 1, &start, err));
        TL_TRY(tl_plan_push(p, TL_PLAN_FILTER, *cur, &id, err));
        tl_plan_node(p, id)->exprs = start;
        tl_plan_node(p, id)->n_exprs = 1;
        *cur = id;
    }
    return TL_OK;
}

static TlStatus step_filter(TlPlan *p, const TallyStep *s, TlPlanId *cur,
                            TlError *err)
{
    TlItemVec iv = {0};
    TlExprId *preds = NULL;
    TlStatus st = tl_plan_filter_preds(p, s, tl_plan_node(p, *cur)->schema, &iv, &preds,
                                       err);
    if (st == TL_OK) st = tl_plan_push_filters(p, preds, iv.n, cur, err);
    tl_free(preds);
    tl_free(iv.v);
    return st;
}

static TlStatus step_select(TlPlan *p, const TallyStep *s, TlPlanId *cur,
                            TlError *err)
{
    TlItemVec iv = {0};
    TlExprId *exprs = NULL;
    TlSchema *out = NULL;
    TlStatus st = tl_plan_parse_list(p, s->items, s->n_items, s->names, s->origin,
                                     s->split, TL_ITEM_SELECT, &iv, err);
    if (st == TL_OK)
        st = tl_plan_expand(p, tl_plan_node(p, *cur)->schema, TL_ITEM_SELECT, false,
                            &iv, err);
    if (st != TL_OK) goto done;
    if (iv.n == 0) {
        st = tl_error(err, TL_ERR_USAGE, "%s: no columns to select", s->origin);
        goto done;
    }
    exprs = tl_malloc((size_t)iv.n * sizeof *exprs);
    if (!exprs) { st = tl_error_oom(err); goto done; }
    st = tl_plan_schema_new(p, &out, err);
    for (uint32_t i = 0; st == TL_OK && i < iv.n; i++) {
        const TlItem *it = &iv.v[i];
        const char *name = item_name(it);
        st = tl_resolve_expr(&p->ea, it->expr, tl_plan_node(p, *cur)->schema,
                             false, &exprs[i], err);
        if (st != TL_OK) break;
        if (tl_schema_find(out, name) >= 0) {
            st = tl_error_at(err, TL_ERR_USAGE, &p->ea, it->src, it->start,
                             it->len, "duplicate output column %s",
                             tl_quote_name(name).s);
            break;
        }
        st = tl_schema_add(out, name, (TlType)tl_ea_node(&p->ea, exprs[i])->type,
                           err);
    }
    if (st == TL_OK) st = push_project(p, *cur, exprs, iv.n, out, cur, err);
done:
    tl_free(exprs);
    tl_free(iv.v);
    return st;
}

static TlStatus step_drop(TlPlan *p, const TallyStep *s, TlPlanId *cur,
                          TlError *err)
{
    const TlSchema *in = tl_plan_node(p, *cur)->schema;
    TlItemVec iv = {0};
    int32_t *cols = NULL;
    int *keep = NULL, n_keep = 0;
    bool *gone = NULL;
    TlStatus st = tl_plan_parse_list(p, s->items, s->n_items, NULL, s->origin, s->split,
                                     TL_ITEM_NAME, &iv, err);
    if (st == TL_OK) st = tl_plan_expand(p, in, TL_ITEM_NAME, false, &iv, err);
    if (st != TL_OK) goto done;
    cols = tl_malloc((size_t)(iv.n ? iv.n : 1) * sizeof *cols);
    keep = tl_malloc((size_t)(in->n_fields ? in->n_fields : 1) * sizeof *keep);
    gone = tl_calloc((size_t)(in->n_fields ? in->n_fields : 1), sizeof *gone);
    if (!cols || !keep || !gone) { st = tl_error_oom(err); goto done; }
    if ((st = item_columns(p, in, &iv, cols, err)) != TL_OK) goto done;
    for (uint32_t i = 0; i < iv.n; i++) gone[cols[i]] = true;
    for (int c = 0; c < in->n_fields; c++)
        if (!gone[c]) keep[n_keep++] = c;
    if (n_keep == 0) {
        const TlItem *it = &iv.v[iv.n - 1];
        st = tl_error_at(err, TL_ERR_USAGE, &p->ea, it->src, it->start, it->len,
                         "cannot drop every column");
        goto done;
    }
    st = tl_plan_push_passthrough(p, *cur, keep, n_keep, NULL, cur, err);
done:
    tl_free(cols);
    tl_free(keep);
    tl_free(gone);
    tl_free(iv.v);
    return st;
}

/* See steps.h. */
TlStatus tl_plan_rename_items(TlPlan *p, const TallyStep *s, TlItemVec *iv,
                              TlError *err)
{
    TlStatus st = TL_OK;
    if (s->names) {
        /* JSON: names[i] (old) -> items[i] (new), plain strings. */
        for (int i = 0; st == TL_OK && i < s->n_items; i++) {
            TlItem it;
            memset(&it, 0, sizeof it);
            if (!s->names[i]) continue;
            st = tl_ea_add_src(&p->ea, s->names[i],
                               s->items[i].origin ? s->items[i].origin : s->origin,
                               &it.src, err);
            if (st != TL_OK) break;
            it.expr = TL_NO_ID;
            it.len = (uint32_t)strlen(s->names[i]);
            it.name = p->ea.srcs[it.src].text;
            it.name2 = tl_strpool_dup(&p->ea.pool, s->items[i].text,
                                      strlen(s->items[i].text));
            if (!it.name2) st = tl_error_oom(err);
            else st = tl_plan_items_add(iv, &it, 1, err);
        }
    } else {
        st = tl_plan_parse_list(p, s->items, s->n_items, NULL, s->origin, s->split,
                                TL_ITEM_RENAME, iv, err);
    }
    return st;
}

static TlStatus step_rename(TlPlan *p, const TallyStep *s, TlPlanId *cur,
                            TlError *err)
{
    const TlSchema *in = tl_plan_node(p, *cur)->schema;
    int n = in->n_fields;
    TlItemVec iv = {0};
    const char **names = NULL;
    int *order = NULL, *by = NULL;
    TlSchema seen = {0};
    TlStatus st = tl_plan_rename_items(p, s, &iv, err);

    if (st != TL_OK) goto done;
    names = tl_malloc((size_t)(n ? n : 1) * sizeof *names);
    order = tl_malloc((size_t)(n ? n : 1) * sizeof *order);
    by = tl_malloc((size_t)(n ? n : 1) * sizeof *by);
    if (!names || !order || !by) { st = tl_error_oom(err); goto done; }
    for (int c = 0; c < n; c++) {
        names[c] = in->fields[c].name;
        order[c] = c;
        by[c] = -1;
    }
    for (uint32_t i = 0; i < iv.n; i++) {
        const TlItem *it = &iv.v[i];
        int c = tl_schema_find(in, it->name);
        if (c < 0) { st = unknown_column(p, in, it, it->name, err); goto done; }
        if (by[c] >= 0) {
            st = tl_error_at(err, TL_ERR_USAGE, &p->ea, it->src, it->start,
                             it->len, "column %s is renamed twice",
                             tl_quote_name(it->name).s);
            goto done;
        }
        by[c] = (int)i;
        names[c] = it->name2;
    }
    /* the first column whose name an earlier one has (the schema's name
     * index finds it in O(1), so a rename over w columns costs O(w)) */
    for (int c = 0; c < n; c++) {
        int d = tl_schema_find(&seen, names[c]);
        if (d >= 0) {
            const TlItem *it = &iv.v[by[c] >= 0 ? by[c] : by[d]];
            st = tl_error_at(err, TL_ERR_USAGE, &p->ea, it->src, it->start,
                             it->len, "duplicate column name %s",
                             tl_quote_name(names[c]).s);
            goto done;
        }
        if ((st = tl_schema_add(&seen, names[c], in->fields[c].type, err)) != TL_OK)
            goto done;
    }
    st = tl_plan_push_passthrough(p, *cur, order, n, names, cur, err);
done:
    tl_schema_free(&seen);
    tl_free(names);
    tl_free(order);
    tl_free(by);
    tl_free(iv.v);
    return st;
}

/* Expressions over aggregates (`sum(a) / count()`): the group step is
 * planned as an aggregate node computing each distinct aggregate call once
 * (keys first, then the calls, named by their canonical text), followed by
 * a project computing the items over its outputs (keys first, then items in
 * order, names as given).  Outside an aggregate call an item may use only
 * literals and group keys that are plain columns. */
typedef struct AggCalls {
    TlExprId *ids;      /* distinct aggregate calls, in order of appearance */
    char **texts;       /* their canonical text (tl_expr_print) */
    uint32_t n, cap;
} AggCalls;

static void agg_calls_free(AggCalls *c)
{
    for (uint32_t i = 0; i < c->n; i++) tl_free(c->texts[i]);
    tl_free(c->ids);
    tl_free(c->texts);
}

/* The index of aggregate call id in c (added when new). */
static TlStatus agg_calls_add(const TlPlan *p, AggCalls *c, TlExprId id,
                              uint32_t *j, TlError *err)
{
    char buf[512];
    size_t len = tl_expr_print(&p->ea, id, buf, sizeof buf);
    if (len < sizeof buf)
        for (uint32_t i = 0; i < c->n; i++)
            if (strcmp(c->texts[i], buf) == 0) {
                *j = i;
                return TL_OK;
            }
    if (c->n == c->cap) {
        uint32_t cap = c->cap ? 2 * c->cap : 8;
        TlExprId *ids = tl_realloc(c->ids, cap * sizeof *ids);
        if (!ids) return tl_error_oom(err);
        c->ids = ids;
        char **texts = tl_realloc(c->texts, cap * sizeof *texts);
        if (!texts) return tl_error_oom(err);
        c->texts = texts;
        c->cap = cap;
    }
    /* A text too long to compare whole is kept unique by its index. */
    if (len >= sizeof buf) snprintf(buf, sizeof buf, "#%u", c->n + 1);
    c->texts[c->n] = tl_malloc(strlen(buf) + 1);
    if (!c->texts[c->n]) return tl_error_oom(err);
    memcpy(c->texts[c->n], buf, strlen(buf) + 1);
    c->ids[c->n] = id;
    *j = c->n++;
    return TL_OK;
}

/* Rewrite resolved item expression id for the project over the aggregate
 * node: every aggregate call becomes a reference to its output column
 * (n_keys + its index in c), every column a reference to the key that is
 * that plain column.  Unchanged subtrees are shared. */
static TlStatus over_aggs(TlPlan *p, AggCalls *c, const TlExprId *keys,
                          uint32_t n_keys, TlExprId id, TlExprId *out,
                          TlError *err)
{
    TlExpr e = *tl_ea_node(&p->ea, id);
    TlExpr t;
    *out = id;
    if (e.kind == TL_X_CALL && tl_op_is_agg((TlOp)e.op)) {
        uint32_t j = 0;
        TL_TRY(agg_calls_add(p, c, id, &j, err));
        t = e;
        t.kind = TL_X_COL;
        t.n_args = 0;
        t.col = (int32_t)(n_keys + j);
        t.name = tl_strpool_dup(&p->ea.pool, c->texts[j], strlen(c->texts[j]));
        if (!t.name) return tl_error_oom(err);
        return tl_ea_push(&p->ea, &t, NULL, 0, out, err);
    }
    if (e.kind == TL_X_COL) {
        for (uint32_t k = 0; k < n_keys; k++) {
            const TlExpr *ke = tl_ea_node(&p->ea, keys[k]);
            if (ke->kind == TL_X_COL && ke->col == e.col) {
                t = e;
                t.col = (int32_t)k;
                return tl_ea_push(&p->ea, &t, NULL, 0, out, err);
            }
        }
        return tl_error_at(err, TL_ERR_USAGE, &p->ea, e.src, e.start, e.len,
                           "column %s must be a group key or inside an "
                           "aggregate such as sum(%s)", tl_quote_name(e.name).s,
                           tl_escape_name(e.name).s);
    }
    if (e.n_args == 0) return TL_OK;
    TlExprId *args = tl_malloc(e.n_args * sizeof *args);
    if (!args) return tl_error_oom(err);
    bool changed = false;
    TlStatus st = TL_OK;
    for (uint32_t i = 0; st == TL_OK && i < e.n_args; i++) {
        TlExprId a = tl_ea_arg(&p->ea, &e, i);
        st = over_aggs(p, c, keys, n_keys, a, &args[i], err);
        if (args[i] != a) changed = true;
    }
    if (st == TL_OK && changed) st = tl_ea_push(&p->ea, &e, args, e.n_args, out, err);
    tl_free(args);
    return st;
}

static TlStatus step_group(TlPlan *p, const TallyStep *s, TlPlanId *cur,
                           TlError *err)
{
    const TlSchema *in = tl_plan_node(p, *cur)->schema;
    TlItemVec keys = {0}, aggs = {0};
    TlExprId *ek = NULL, *eg = NULL, *items = NULL;
    TlSchema *out = NULL, *pout = NULL;
    TlPlanId id;
    uint32_t ks, gs;
    AggCalls calls = {0};
    bool over = false;  /* some item is not just an aggregate call */
    TlStatus st = tl_plan_parse_list(p, s->items, s->n_items, s->names, s->origin,
                                     s->split, TL_ITEM_KEY, &keys, err);
    if (st == TL_OK) st = tl_plan_expand(p, in, TL_ITEM_KEY, true, &keys, err);
    if (st == TL_OK)
        st = tl_plan_parse_list(p, s->aggs, s->n_aggs, s->agg_names, s->origin, s->split,
                                TL_ITEM_ASSIGN, &aggs, err);
    if (st != TL_OK) goto done;
    if (keys.n + aggs.n == 0) {
        st = tl_error(err, TL_ERR_USAGE, "%s: needs keys or aggregates",
                      s->origin ? s->origin : "group_by");
        goto done;
    }
    ek = tl_malloc((size_t)(keys.n + 1) * sizeof *ek);
    eg = tl_malloc((size_t)(aggs.n + 1) * sizeof *eg);
    items = tl_malloc((size_t)(keys.n + aggs.n + 1) * sizeof *items);
    if (!ek || !eg || !items) { st = tl_error_oom(err); goto done; }
    if ((st = tl_plan_schema_new(p, &out, err)) != TL_OK) goto done;
    if ((st = tl_plan_schema_new(p, &pout, err)) != TL_OK) goto done;
    for (uint32_t i = 0; i < keys.n + aggs.n; i++) {
        bool is_key = i < keys.n;
        const TlItem *it = is_key ? &keys.v[i] : &aggs.v[i - keys.n];
        const char *name = item_name(it);
        TlExprId *e = is_key ? &ek[i] : &eg[i - keys.n];
        st = tl_resolve_expr(&p->ea, it->expr, in, !is_key, e, err);
        if (st != TL_OK) goto done;
        if (!is_key) {
            const TlExpr *root = tl_ea_node(&p->ea, *e);
            if (root->kind != TL_X_CALL || !tl_op_is_agg((TlOp)root->op))
                over = true;
        }
        if (tl_schema_find(pout, name) >= 0) {
            st = tl_error_at(err, TL_ERR_USAGE, &p->ea, it->src, it->start,
                             it->len, "duplicate output column %s",
                             tl_quote_name(name).s);
            goto done;
        }
        st = tl_schema_add(pout, name, (TlType)tl_ea_node(&p->ea, *e)->type, err);
        if (st != TL_OK) goto done;
    }
    for (uint32_t k = 0; k < keys.n; k++) {
        st = tl_schema_add(out, item_name(&keys.v[k]),
                           (TlType)tl_ea_node(&p->ea, ek[k])->type, err);
        if (st != TL_OK) goto done;
    }
    if (!over) {
        for (uint32_t j = 0; st == TL_OK && j < aggs.n; j++)
            st = tl_schema_add(out, item_name(&aggs.v[j]),
                               (TlType)tl_ea_node(&p->ea, eg[j])->type, err);
        if (st != TL_OK) goto done;
    } else {
        for (uint32_t k = 0; st == TL_OK && k < keys.n; k++)
            st = tl_plan_col_ref(p, out, (int)k, &items[k], err);
        for (uint32_t j = 0; st == TL_OK && j < aggs.n; j++)
            st = over_aggs(p, &calls, ek, keys.n, eg[j], &items[keys.n + j], err);
        for (uint32_t j = 0; st == TL_OK && j < calls.n; j++) {
            const char *nm = calls.texts[j];
            char alt[32];
            if (tl_schema_find(out, nm) >= 0) {
                snprintf(alt, sizeof alt, "#%u", j + 1);
                nm = alt;
            }
            st = tl_schema_add(out, nm,
                               (TlType)tl_ea_node(&p->ea, calls.ids[j])->type, err);
        }
        if (st != TL_OK) goto done;
    }
    if ((st = tl_plan_push_ids(p, ek, keys.n, &ks, err)) != TL_OK) goto done;
    if ((st = tl_plan_push_ids(p, over ? calls.ids : eg, over ? calls.n : aggs.n,
                               &gs, err)) != TL_OK)
        goto done;
    if ((st = tl_plan_push(p, TL_PLAN_AGGREGATE, *cur, &id, err)) != TL_OK)
        goto done;
    {
        TlPlanNode *nd = tl_plan_node(p, id);
        nd->exprs = ks;
        nd->n_exprs = keys.n;
        nd->aggs = gs;
        nd->n_aggs = over ? calls.n : aggs.n;
        nd->schema = out;
        nd->sorted = p->sorted ? 1 : 0;
    }
    *cur = id;
    if (over) {
        st = push_project(p, id, items, keys.n + aggs.n, pout, &id, err);
        if (st != TL_OK) goto done;
        *cur = id;
    }
done:
    agg_calls_free(&calls);
    tl_free(ek);
    tl_free(eg);
    tl_free(items);
    tl_free(keys.v);
    tl_free(aggs.v);
    return st;
}

static TlStatus step_sort(TlPlan *p, const TallyStep *s, TlPlanId *cur,
                          TlError *err)
{
    const TlSchema *in = tl_plan_node(p, *cur)->schema;
    TlItemVec iv = {0};
    TlExprId *keys = NULL;
    int32_t *flags = NULL;
    uint32_t ks, fs;
    TlPlanId id;
    TlStatus st = tl_plan_parse_list(p, s->items, s->n_items, NULL, s->origin, s->split,
                                     TL_ITEM_SORT, &iv, err);
    if (st == TL_OK) st = tl_plan_expand(p, in, TL_ITEM_SORT, true, &iv, err);
    if (st != TL_OK) goto done;
    if (iv.n == 0) {
        st = tl_error(err, TL_ERR_USAGE, "%s: no sort keys",
                      s->origin ? s->origin : "sort");
        goto done;
    }
    keys = tl_malloc((size_t)iv.n * sizeof *keys);
    flags = tl_malloc((size_t)iv.n * sizeof *flags);
    if (!keys || !flags) { st = tl_error_oom(err); goto done; }
    for (uint32_t i = 0; i < iv.n; i++) {
        st = tl_resolve_expr(&p->ea, iv.v[i].expr, in, false, &keys[i], err);
        if (st != TL_OK) goto done;
        flags[i] = (iv.v[i].desc ? TL_SORT_DESC : 0) |
                   (iv.v[i].nulls_first ? TL_SORT_NULLS_FIRST : 0);
    }
    if ((st = tl_plan_push_ids(p, keys, iv.n, &ks, err)) != TL_OK) goto done;
    if ((st = tl_plan_push_ints(p, flags, iv.n, &fs, err)) != TL_OK) goto done;
    if ((st = tl_plan_push(p, TL_PLAN_SORT, *cur, &id, err)) != TL_OK) goto done;
    {
        TlPlanNode *nd = tl_plan_node(p, id);
        nd->exprs = ks;
        nd->n_exprs = iv.n;
        nd->flags = fs;
    }
    *cur = id;
done:
    tl_free(keys);
    tl_free(flags);
    tl_free(iv.v);
    return st;
}

/* limit (with `by`: limit-by) and distinct: both take column names. */
static TlStatus step_cols(TlPlan *p, const TallyStep *s, TlPlanId *cur,
                          TlError *err)
{
    const TlSchema *in = tl_plan_node(p, *cur)->schema;
    bool is_limit = s->kind == TALLY_STEP_LIMIT;
    TlItemVec iv = {0};
    int32_t *cols = NULL;
    uint32_t cs;
    TlPlanId id;
    TlPlanKind kind;
    TlStatus st;

    if (is_limit && (s->limit < -1 || s->offset < 0 || (s->n_by && s->limit < 0)))
        return tl_error(err, TL_ERR_USAGE, "%s: limit must not be negative",
                        s->origin ? s->origin : "limit");
    st = is_limit ? tl_plan_parse_list(p, s->by, s->n_by, NULL, s->origin, s->split,
                                       TL_ITEM_NAME, &iv, err)
                  : tl_plan_parse_list(p, s->items, s->n_items, NULL, s->origin,
                                       s->split, TL_ITEM_NAME, &iv, err);
    if (st == TL_OK) st = tl_plan_expand(p, in, TL_ITEM_NAME, true, &iv, err);
    if (st != TL_OK) goto done;
    cols = tl_malloc((size_t)(iv.n ? iv.n : 1) * sizeof *cols);
    if (!cols) { st = tl_error_oom(err); goto done; }
    if ((st = item_columns(p, in, &iv, cols, err)) != TL_OK) goto done;
    if ((st = tl_plan_push_ints(p, cols, iv.n, &cs, err)) != TL_OK) goto done;
    kind = !is_limit ? TL_PLAN_DISTINCT : iv.n ? TL_PLAN_LIMIT_BY : TL_PLAN_LIMIT;
    if ((st = tl_plan_push(p, kind, *cur, &id, err)) != TL_OK) goto done;
    {
        TlPlanNode *nd = tl_plan_node(p, id);
        nd->cols = cs;
        nd->n_cols = iv.n;
        nd->limit = is_limit ? s->limit : -1;
        if (kind == TL_PLAN_LIMIT) {
            nd->offset = s->offset;
            nd->tail = s->tail;
        }
    }
    *cur = id;
done:
    tl_free(cols);
    tl_free(iv.v);
    return st;
}

/* Whether key types a (left) and b (right) can be compared, and the type
 * both sides are compared in (*common). */
static bool join_types(TlType a, TlType b, TlType *common)
{
    if (a == b || b == TL_TNULL) { *common = a; return true; }
    if (a == TL_TNULL) { *common = b; return true; }
    if ((a == TL_TINT64 && b == TL_TFLOAT64) || (a == TL_TFLOAT64 && b == TL_TINT64)) {
        *common = TL_TFLOAT64;
        return true;
    }
    return false;
}

static TlStatus join_how(const char *how, TlJoinHow *out, TlError *err)
{
    static const char *const hows[] = {"inner", "left", "right", "full", "semi",
                                       "anti"};
    if (!how) { *out = TL_JOIN_INNER; return TL_OK; }
    for (int i = 0; i < 6; i++)
        if (strcmp(how, hows[i]) == 0) { *out = (TlJoinHow)i; return TL_OK; }
    return tl_error(err, TL_ERR_USAGE, "unknown join type %s (use inner, "
                    "left, right, full, semi or anti)", tl_quote_name(how).s);
}

static TlStatus build_pipeline(TlPlan *p, const TallySpec *spec,
                               const TlPlanOptions *o, int *group, int depth,
                               TlPlanId *out, TlError *err);

/* A join step: plan the right side, resolve the keys, build the schema. */
static TlStatus step_join(TlPlan *p, const TallyStep *s, const TlPlanOptions *o,
                          int *group, int depth, TlPlanId *cur, TlError *err)
{
    const TlSchema *ls = tl_plan_node(p, *cur)->schema, *rs;
    const char *origin = s->origin ? s->origin : "--join";
    const char *suffix = s->suffix ? s->suffix : "_right";
    TlItemVec iv = {0};
    int32_t *lk = NULL, *rk = NULL, *rc = NULL;
    bool *is_key = NULL;
    TlSchema *out = NULL;
    TlPlanId right, id;
    TlJoinHow how = TL_JOIN_INNER;
    uint32_t lks, rks, rcs;
    int n_rc = 0;
    TlStatus st;

    if (!s->join_spec)
        return tl_error(err, TL_ERR_USAGE, "%s: missing the input to join with",
                        origin);
    TL_TRY(join_how(s->how, &how, err));
    TL_TRY(build_pipeline(p, s->join_spec, o, group, depth + 1, &right, err));
    rs = tl_plan_node(p, right)->schema;
    ls = tl_plan_node(p, *cur)->schema;
    st = tl_plan_parse_list(p, s->items, s->n_items, NULL, origin, s->split,
                            TL_ITEM_ASSIGN, &iv, err);
    if (st != TL_OK) goto done;
    if (iv.n == 0) {
        st = tl_error(err, TL_ERR_USAGE, "%s: no key columns (--on KEYS)", origin);
        goto done;
    }
    lk = tl_malloc(iv.n * sizeof *lk);
    rk = tl_malloc(iv.n * sizeof *rk);
    rc = tl_malloc((size_t)(rs->n_fields + 1) * sizeof *rc);
    is_key = tl_calloc((size_t)(rs->n_fields + 1), sizeof *is_key);
    if (!lk || !rk || !rc || !is_key) { st = tl_error_oom(err); goto done; }
    for (uint32_t i = 0; i < iv.n; i++) {
        const TlItem *it = &iv.v[i];
        const TlExpr *x = tl_ea_node(&p->ea, it->expr);
        const char *ln, *rn, *near;
        TlType common;
        if (x->kind != TL_X_COL) {
            st = tl_error_at(err, TL_ERR_USAGE, &p->ea, it->src, it->start,
                             it->len, "a join key is a column name or "
                             "LEFT_NAME=RIGHT_NAME");
            goto done;
        }
        rn = x->name;
        ln = it->name ? it->name : rn;
        lk[i] = tl_schema_find(ls, ln);
        rk[i] = tl_schema_find(rs, rn);
        if (lk[i] < 0 || rk[i] < 0) {
            bool left = lk[i] < 0;
            const char *nm = left ? ln : rn;
            near = tl_schema_suggest(left ? ls : rs, nm);
            p->ea.unknown_name = true;
            st = tl_error_at(err, TL_ERR_USAGE, &p->ea, it->src, it->start,
                             it->len, "unknown column %s in the %s input "
                             "of the join%s%s%s", tl_quote_name(nm).s,
                             left ? "left" : "right", near ? " (did you mean " : "",
                             near ? tl_quote_name(near).s : "", near ? "?)" : "");
            goto done;
        }
        if (!join_types(ls->fields[lk[i]].type, rs->fields[rk[i]].type, &common)) {
            st = tl_error_at(err, TL_ERR_USAGE, &p->ea, it->src, it->start,
                             it->len, "join key %s: cannot compare %s (left) "
                             "with %s (right)", tl_quote_name(ln).s,
                             tl_type_name(ls->fields[lk[i]].type),
                             tl_type_name(rs->fields[rk[i]].type));
            goto done;
        }
        is_key[rk[i]] = true;
    }
    if (how == TL_JOIN_SEMI || how == TL_JOIN_ANTI) {
        out = (TlSchema *)ls;
    } else {
        if ((st = tl_plan_schema_new(p, &out, err)) != TL_OK) goto done;
        for (int c = 0; st == TL_OK && c < ls->n_fields; c++) {
            TlType t = ls->fields[c].type;
            for (uint32_t i = 0; i < iv.n; i++)
                if (lk[i] == c && (how == TL_JOIN_RIGHT || how == TL_JOIN_FULL))
                    join_types(t, rs->fields[rk[i]].type, &t);
            st = tl_schema_add(out, ls->fields[c].name, t, err);
        }
        for (int c = 0; st == TL_OK && c < rs->n_fields; c++) {
            const char *nm = rs->fields[c].name;
            char *alt = NULL;
            if (is_key[c]) continue;
            if (tl_schema_find(out, nm) >= 0) {
                size_t n1 = strlen(nm), n2 = strlen(suffix);
                alt = tl_malloc(n1 + n2 + 1);
                if (!alt) { st = tl_error_oom(err); break; }
                memcpy(alt, nm, n1);
                memcpy(alt + n1, suffix, n2 + 1);
                if (tl_schema_find(out, alt) >= 0) {
                    st = tl_error(err, TL_ERR_USAGE, "%s: the right column %s "
                                  "clashes, and %s is taken too (choose "
                                  "another suffix)", origin, tl_quote_name(nm).s,
                                  tl_quote_name(alt).s);
                    tl_free(alt);
                    break;
                }
            }
            st = tl_schema_add(out, alt ? alt : nm, rs->fields[c].type, err);
            tl_free(alt);
            rc[n_rc++] = c;
        }
        if (st != TL_OK) goto done;
    }
    if ((st = tl_plan_push_ints(p, lk, iv.n, &lks, err)) != TL_OK) goto done;
    if ((st = tl_plan_push_ints(p, rk, iv.n, &rks, err)) != TL_OK) goto done;
    if ((st = tl_plan_push_ints(p, rc, (uint32_t)n_rc, &rcs, err)) != TL_OK) goto done;
    if ((st = tl_plan_push(p, TL_PLAN_JOIN, *cur, &id, err)) != TL_OK) goto done;
    {
        TlPlanNode *nd = tl_plan_node(p, id);
        nd->right = right;
        nd->how = (uint8_t)how;
        nd->cols = lks;
        nd->n_cols = iv.n;
        nd->rkeys = rks;
        nd->rcols = rcs;
        nd->n_rcols = (uint32_t)n_rc;
        nd->schema = out;
    }
    *cur = id;
done:
    tl_free(lk);
    tl_free(rk);
    tl_free(rc);
    tl_free(is_key);
    tl_free(iv.v);
    return st;
}

/* describe: a fixed schema, one row per column of its input (the
 * statistics are lib/exec/op_describe.c's; man/tally.1 says what each
 * column holds). */
static TlStatus step_describe(TlPlan *p, TlPlanId *cur, TlError *err)
{
    static const struct { const char *name; TlType type; } cols[] = {
        {"column", TL_TSTRING}, {"type", TL_TSTRING}, {"count", TL_TINT64},
        {"nulls", TL_TINT64}, {"distinct", TL_TINT64}, {"approx", TL_TBOOL},
        {"min", TL_TSTRING}, {"max", TL_TSTRING}, {"mean", TL_TFLOAT64},
        {"std", TL_TFLOAT64}, {"q25", TL_TFLOAT64}, {"q50", TL_TFLOAT64},
        {"q75", TL_TFLOAT64}, {"min_len", TL_TINT64}, {"max_len", TL_TINT64},
        {"top", TL_TSTRING},
    };
    TlSchema *out;
    TlPlanId id;
    TL_TRY(tl_plan_schema_new(p, &out, err));
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
        TL_TRY(tl_schema_add(out, cols[i].name, cols[i].type, err));
    TL_TRY(tl_plan_push(p, TL_PLAN_DESCRIBE, *cur, &id, err));
    tl_plan_node(p, id)->schema = out;
    *cur = id;
    return TL_OK;
}

/* sample: the rows chosen depend on their positions and the seed only
 * (lib/exec/op_rows.c). */
static TlStatus step_sample(TlPlan *p, const TallyStep *s, TlPlanId *cur,
                            TlError *err)
{
    TlPlanId id;
    if (s->sample_pct < 0 ? s->limit < 0 : s->sample_pct > 100)
        return tl_error(err, TL_ERR_USAGE, "%s: bad sample size",
                        s->origin ? s->origin : "sample");
    TL_TRY(tl_plan_push(p, TL_PLAN_SAMPLE, *cur, &id, err));
    tl_plan_node(p, id)->limit = s->sample_pct < 0 ? s->limit : -1;
    tl_plan_node(p, id)->pct = s->sample_pct;
    tl_plan_node(p, id)->seed = s->seed;
    *cur = id;
    return TL_OK;
}

/* with-row-number NAME: the input's columns and NAME last.  A NAME the
 * input has is an error rather than a replacement: a number that silently
 * took the place of a column of the data would be hard to notice. */
static TlStatus push_row_number(TlPlan *p, const char *name, const char *origin,
                                TlPlanId *cur, TlError *err)
{
    const TlSchema *in = tl_plan_node(p, *cur)->schema;
    TlSchema *out;
    TlPlanId id;
    if (!*name)
        return tl_error(err, TL_ERR_USAGE, "%s: expected a column name", origin);
    if (tl_schema_find(in, name) >= 0)
        return tl_error(err, TL_ERR_USAGE, "%s: column %s already exists", origin,
                        tl_quote_name(name).s);
    TL_TRY(tl_plan_schema_new(p, &out, err));
    for (int c = 0; c < in->n_fields; c++)
        TL_TRY(tl_schema_add(out, in->fields[c].name, in->fields[c].type, err));
    TL_TRY(tl_schema_add(out, name, TL_TINT64, err));
    TL_TRY(tl_plan_push(p, TL_PLAN_ROW_NUMBER, *cur, &id, err));
    tl_plan_node(p, id)->schema = out;
    *cur = id;
    return TL_OK;
}

static TlStatus step_row_number(TlPlan *p, const TallyStep *s, TlPlanId *cur,
                                TlError *err)
{
    return push_row_number(p, s->n_items ? s->items[0].text : "",
                           s->origin ? s->origin : "with_row_number", cur, err);
}

/* Whether a text may call row_number(): the name, any case, then "(".
 * A false yes (the words inside a string literal) only costs a row-number
 * node whose column the step does not read and which is dropped after it. */
static bool text_row_number(const char *t)
{
    for (const char *s = t; s && (s = strcasestr(s, "row_number")); s += 10) {
        const char *e = s + 10;
        bool word = s == t || !(isalnum((unsigned char)s[-1]) || s[-1] == '_');
        while (*e == ' ' || *e == '\t' || *e == '\n' || *e == '\r') e++;
        if (word && *e == '(') return true;
    }
    return false;
}

/* Whether step s has an expression that may call row_number(). */
static bool step_row_number_call(const TallyStep *s)
{
    if (s->kind != TALLY_STEP_FILTER && s->kind != TALLY_STEP_SELECT &&
        s->kind != TALLY_STEP_WITH && s->kind != TALLY_STEP_GROUP_BY &&
        s->kind != TALLY_STEP_SORT)
        return false;
    for (int i = 0; i < s->n_items; i++)
        if (text_row_number(s->items[i].text)) return true;
    for (int i = 0; i < s->n_aggs; i++)
        if (text_row_number(s->aggs[i].text)) return true;
    return false;
}

static TlStatus build_step(TlPlan *p, const TallyStep *s, TlPlanId *cur,
                           TlError *err);

/* A step that calls row_number(), alone: a row-number node of the hidden
 * column below it (the open `with` run closed first, so the numbers are
 * the positions in this very step's input), the step, then the hidden
 * column dropped when the step passed it on. */
static TlStatus step_numbered(TlPlan *p, const TallyStep *s, TlWithRun *w,
                              TlPlanId *cur, TlError *err)
{
    const TlSchema *out;
    int hidden;
    TL_TRY(tl_plan_with_close(p, w, err));
    TL_TRY(push_row_number(p, TL_ROW_NUMBER_COL, s->origin ? s->origin : "row_number()",
                           cur, err));
    if (s->kind == TALLY_STEP_WITH) {
        TL_TRY(tl_plan_step_with(p, s, w, cur, err));
        TL_TRY(tl_plan_with_close(p, w, err));
    } else {
        TL_TRY(build_step(p, s, cur, err));
    }
    out = tl_plan_node(p, *cur)->schema;
    hidden = tl_schema_find(out, TL_ROW_NUMBER_COL);
    if (hidden < 0) return TL_OK;
    int *order = tl_malloc((size_t)(out->n_fields ? out->n_fields : 1) * sizeof *order);
    int n = 0;
    if (!order) return tl_error_oom(err);
    for (int c = 0; c < out->n_fields; c++)
        if (c != hidden) order[n++] = c;
    TlStatus st = tl_plan_push_passthrough(p, *cur, order, n, NULL, cur, err);
    tl_free(order);
    return st;
}

static TlStatus build_step(TlPlan *p, const TallyStep *s, TlPlanId *cur,
                           TlError *err)
{
    switch (s->kind) {
    case TALLY_STEP_FILTER: return step_filter(p, s, cur, err);
    case TALLY_STEP_SELECT: return step_select(p, s, cur, err);
    case TALLY_STEP_WITH: break; /* build_pipeline */
    case TALLY_STEP_DROP: return step_drop(p, s, cur, err);
    case TALLY_STEP_RENAME: return step_rename(p, s, cur, err);
    case TALLY_STEP_GROUP_BY: return step_group(p, s, cur, err);
    case TALLY_STEP_SORT: return step_sort(p, s, cur, err);
    case TALLY_STEP_LIMIT:
    case TALLY_STEP_DISTINCT: return step_cols(p, s, cur, err);
    case TALLY_STEP_JOIN:
        break; /* build_pipeline */
    case TALLY_STEP_DESCRIBE: return step_describe(p, cur, err);
    case TALLY_STEP_SAMPLE: return step_sample(p, s, cur, err);
    case TALLY_STEP_ROW_NUMBER: return step_row_number(p, s, cur, err);
    }
    return tl_error(err, TL_ERR_USAGE, "unknown step kind %d", (int)s->kind);
}

/* Step `failed` of spec stopped with "unknown column NAME" where NAME is a
 * column an earlier step of the same pipeline dropped (before[j] is the
 * schema step j read; the last step that had NAME in its input and not in
 * its output is the one): the message's first line then says which step,
 * counted from 1 in the order given, and what it did (dropped it, or
 * renamed it to NEW), in place of any "did you mean".  Inside a run of
 * drop steps planned as one (tl_plan_drop_run), before[j] is the run's input and
 * by[j][c] the step that dropped column c. 
 * Other errors are left alone. */
/* Whether the message text at name_at starts with column `name`, quoted. */
static size_t names_column(const char *name_at, const char *name)
{
    TlQuoted q = tl_quote_name(name);
    size_t ql = strlen(q.s);
    if (strncmp(name_at, q.s, ql) != 0 ||
        (name_at[ql] && name_at[ql] != ' ' && name_at[ql] != '\n'))
        return 0;
    return ql;
}

/* Append ": step J (ORIGIN) WHAT" after the name (ql bytes at name_at). */
static void say_step(const TallySpec *spec, int j, const char *what,
                     const char *name_at, size_t ql, TlError *err)
{
    char rest[TL_ERRMSG_MAX];
    const char *nl = strchr(name_at, '\n');
    snprintf(rest, sizeof rest, "%s", nl ? nl : "");
    snprintf(err->msg + (name_at - err->msg) + ql,
             sizeof err->msg - (size_t)(name_at - err->msg) - ql,
             ": step %d (%s) %s%s", j + 1,
             spec->steps[j].origin ? spec->steps[j].origin : "?", what, rest);
}

static void dropped_hint(const TallySpec *spec, const TlSchema *const *before,
                         int32_t *const *by, TlRenamed *const *ren, int failed,
                         TlError *err)
{
    static const char head[] = "unknown column ";
    const char *name_at = err->msg + sizeof head - 1;
    char what[sizeof(TlQuoted) + 16];
    size_t ql;
    if (err->code != TL_ERR_USAGE || strncmp(err->msg, head, sizeof head - 1) != 0)
        return;
    for (int j = failed - 1; j >= 0; j--) {
        const TlSchema *in = before[j], *out = before[j + 1];
        for (uint32_t i = 0; ren[j] && i < ren[j]->n; i++) {
            const TlRenamed *r = ren[j];
            bool kept = false; /* a:b,b:a keeps both names */
            for (uint32_t m = 0; m < r->n && !kept; m++)
                kept = strcmp(r->new_[m], r->old[i]) == 0;
            if (kept || !(ql = names_column(name_at, r->old[i]))) continue;
            snprintf(what, sizeof what, "renamed it to %s", tl_quote_name(r->new_[i]).s);
            say_step(spec, j, what, name_at, ql, err);
            return;
        }
        for (int c = 0; !ren[j] && c < in->n_fields; c++) {
            if (by[j] ? by[j][c] != j : tl_schema_find(out, in->fields[c].name) >= 0)
                continue;
            if (!(ql = names_column(name_at, in->fields[c].name))) continue;
            snprintf(what, sizeof what, "dropped it");
            /* a rename keeps every column in its place */
            if (spec->steps[j].kind == TALLY_STEP_RENAME && out->n_fields == in->n_fields)
                snprintf(what, sizeof what, "renamed it to %s",
                         tl_quote_name(out->fields[c].name).s);
            say_step(spec, j, what, name_at, ql, err);
            return;
        }
    }
}

/* The scan of the next input group, then spec's steps over it. */
static TlStatus build_pipeline(TlPlan *p, const TallySpec *spec,
                               const TlPlanOptions *o, int *group, int depth,
                               TlPlanId *out, TlError *err)
{
    int g = (*group)++, first = 0, n = o->n_inputs;
    const TlReadOptions *read = o->read;
    TlPlanId cur;

    if (depth > 64) return tl_error(err, TL_ERR_USAGE, "joins are nested too deeply");
    if (o->groups) {
        if (g >= o->n_groups)
            return tl_error(err, TL_ERR_USAGE, "internal error: no inputs for join %d", g);
        first = o->groups[g].first;
        n = o->groups[g].n;
        read = o->groups[g].read;
    }
    TL_TRY(tl_plan_build_scan(p, o, first, n, read, &cur, err));
    if (g == 0) p->scan = cur;
    TlWithRun w = {TL_NO_ID, 0, -1, NULL, 0, 0, NULL, NULL, NULL, 0, 0};
    TlStatus st = TL_OK;
    int max = tl_stack_deep() ? TL_PLAN_MAX_NODES : TL_PLAN_MAX_NODES_SHALLOW;
    /* each step's input schema, for dropped_hint (inside a run of --with
     * steps, the schema before the run: such steps drop nothing) */
    const TlSchema **before = tl_calloc((size_t)spec->n_steps + 1, sizeof *before);
    int32_t **by = tl_calloc((size_t)spec->n_steps + 1, sizeof *by);
    TlRenamed **ren = tl_calloc((size_t)spec->n_steps + 1, sizeof *ren);
    int single = -1; /* drop or rename steps up to this one run one by one */
    if (!before || !by || !ren) {
        tl_free(before);
        tl_free(by);
        tl_free(ren);
        return tl_error_oom(err);
    }
    for (int i = 0; st == TL_OK && !o->no_steps && i < spec->n_steps; i++) {
        const TallyStep *s = &spec->steps[i];
        if (s->kind == TALLY_STEP_DROP && i > single && i + 1 < spec->n_steps &&
            spec->steps[i + 1].kind == TALLY_STEP_DROP) {
            int last = i;
            while (last + 1 < spec->n_steps &&
                   spec->steps[last + 1].kind == TALLY_STEP_DROP)
                last++;
            st = tl_plan_with_close(p, &w, err);
            const TlSchema *in = tl_plan_node(p, cur)->schema;
            size_t w_in = (size_t)(in->n_fields ? in->n_fields : 1);
            if (st == TL_OK && !(by[i] = tl_malloc(w_in * sizeof **by)))
                st = tl_error_oom(err);
            if (st == TL_OK) st = tl_plan_drop_run(p, spec, i, &last, &cur, by[i], err);
            if (st == TL_OK && last >= i) {
                for (int k = i; k <= last; k++) {
                    before[k] = in;
                    by[k] = by[i];
                }
                i = last;
                before[i + 1] = tl_plan_node(p, cur)->schema;
                continue;
            }
            tl_free(by[i]);
            by[i] = NULL;
            single = i;
            if (st != TL_OK) break;
        }
        if (s->kind == TALLY_STEP_RENAME && i > single && i + 1 < spec->n_steps &&
            spec->steps[i + 1].kind == TALLY_STEP_RENAME) {
            int last = i;
            while (last + 1 < spec->n_steps &&
                   spec->steps[last + 1].kind == TALLY_STEP_RENAME)
                last++;
            st = tl_plan_with_close(p, &w, err);
            const TlSchema *in = tl_plan_node(p, cur)->schema;
            if (st == TL_OK) st = tl_plan_rename_run(p, spec, i, &last, &cur, ren, err);
            if (st == TL_OK && last >= i) {
                for (int k = i; k <= last; k++) before[k] = in;
                i = last;
                before[i + 1] = tl_plan_node(p, cur)->schema;
                continue;
            }
            single = i;
            if (st != TL_OK) break;
        }
        if (step_row_number_call(s)) {
            before[i] = tl_plan_node(p, cur)->schema;
            st = step_numbered(p, s, &w, &cur, err);
        } else if (s->kind == TALLY_STEP_WITH) {
            before[i] = tl_plan_node(p, cur)->schema;
            st = tl_plan_step_with(p, s, &w, &cur, err);
        } else if (s->kind == TALLY_STEP_FILTER && w.node == cur &&
                   i + 1 < spec->n_steps &&
                   spec->steps[i + 1].kind == TALLY_STEP_WITH) {
            before[i] = tl_plan_node(p, cur)->schema;
            st = tl_plan_filter_run(p, s, &w, &cur, err);
        } else {
            st = tl_plan_with_close(p, &w, err);
            before[i] = tl_plan_node(p, cur)->schema;
            if (st == TL_OK && s->kind == TALLY_STEP_JOIN)
                st = step_join(p, s, o, group, depth, &cur, err);
            else if (st == TL_OK)
                st = build_step(p, s, &cur, err);
        }
        if (st != TL_OK) dropped_hint(spec, before, by, ren, i, err);
        /* operators and rewrites recurse along the chain: bound it */
        else if (p->nodes.n > (uint32_t)max)
            st = tl_error(err, TL_ERR_USAGE,
                          "the pipeline is too long (more than %d steps)", max);
        else before[i + 1] = tl_plan_node(p, cur)->schema;
    }
    if (st == TL_OK) st = tl_plan_with_close(p, &w, err);
    tl_free(w.exprs);
    tl_free(w.guards);
    tl_free(w.guard_at);
    for (int k = 0; k < spec->n_steps; k++)
        if (by[k] && (k == 0 || by[k] != by[k - 1])) tl_free(by[k]);
    for (int k = 0; k < spec->n_steps; k++) tl_plan_renamed_free(ren[k]);
    tl_free(by);
    tl_free(ren);
    tl_free(before);
    if (st != TL_OK) return st;
    *out = cur;
    return TL_OK;
}

/* ------------------------------------------------------------ public */

/* Whether word occurs in text as a whole name (not inside a longer one). */
static bool has_word(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *at = strstr(text, word); n && at; at = strstr(at + 1, word)) {
        char before = at > text ? at[-1] : ' ', after = at[n];
        bool inside = isalnum((unsigned char)before) || before == '_' ||
                      isalnum((unsigned char)after) || after == '_';
        if (!inside) return true;
    }
    return false;
}

/* A type error about a string (a number wanted) that names a column which
 * inference made a string: add which value did it, and the way out
 * (formats/infer.h keeps the first such value of each column). */
/* Whether s is a number with its decimal point written as a comma (one
 * comma, the text with a point there a number): --decimal-comma reads it. */
static bool comma_number(const char *s)
{
    char buf[64];
    const char *c = strchr(s, ',');
    size_t n = strlen(s);
    double v;
    if (!c || strchr(c + 1, ',') || strchr(s, '.') || n >= sizeof buf) return false;
    memcpy(buf, s, n + 1);
    buf[c - s] = '.';
    return tl_parse_f64(buf, n, &v);
}

static void explain_string(const TallySpec *spec, const TlPlanOptions *opt, TlError *err)
{
    size_t len = strlen(err->msg);
    if (!strstr(err->msg, "string") || !opt->hints) return;
    for (int i = 0; i < opt->n_inputs; i++)
        for (int k = 0; k < opt->hints[i].n_notes; k++) {
            const TlInferNote *n = &opt->hints[i].notes[k];
            int64_t iv;
            double fv;
            bool is_int = tl_parse_i64(n->text, strlen(n->text), &iv);
            bool number = is_int || tl_parse_f64(n->text, strlen(n->text), &fv);
            int shown = strlen(n->text) > 40 ? 37 : 40;
            const char *more = strlen(n->text) > 40 ? "..." : "";
            if (!has_word(err->msg, n->column)) continue;
            if (n->quoted)
                snprintf(err->msg + len, sizeof err->msg - len,
                         "\n  column \"%s\" is string because %s:%lld holds \"%.*s%s\" in "
                         "quotes (--quoted-as-string)", n->column, n->file,
                         (long long)n->line, shown, n->text, more);
            else if (!spec->decimal_comma && comma_number(n->text))
                snprintf(err->msg + len, sizeof err->msg - len,
                         "\n  column \"%s\" is string because %s:%lld holds \"%.*s%s\" "
                         "(--decimal-comma reads a comma as the decimal point)", n->column,
                         n->file, (long long)n->line, shown, n->text, more);
            else if (spec->decimal_comma && !is_int && number && strchr(n->text, '.'))
                snprintf(err->msg + len, sizeof err->msg - len,
                         "\n  column \"%s\" is string because %s:%lld holds \"%.*s%s\", "
                         "a point where --decimal-comma reads only a comma", n->column,
                         n->file, (long long)n->line, shown, n->text, more);
            else if (number)
                snprintf(err->msg + len, sizeof err->msg - len,
                         "\n  column \"%s\" is string because %s:%lld holds \"%.*s%s\", "
                         "which would not read back as the same text (use --schema "
                         "%s:%s to convert it)", n->column, n->file, (long long)n->line,
                         shown, n->text, more, n->column, is_int ? "int" : "float");
            else
                snprintf(err->msg + len, sizeof err->msg - len,
                         "\n  column \"%s\" is string because %s:%lld holds \"%.*s%s\" "
                         "(use --null %.*s%s or --schema %s:float)", n->column, n->file,
                         (long long)n->line, shown, n->text, more, shown, n->text, more,
                         n->column);
            return;
        }
}

/* See plan.h. */
TlStatus tl_plan_build(const TallySpec *spec, const TlPlanOptions *opt,
                       TlPlan **out, TlError *err)
{
    TlPlan *p = tl_calloc(1, sizeof *p);
    TlStatus st;
    uint16_t src0;
    TlPlanId cur;

    *out = NULL;
    if (!p) return tl_error_oom(err);
    tl_arena_init(&p->nodes, sizeof(TlPlanNode));
    tl_arena_init(&p->ids, sizeof(TlExprId));
    tl_arena_init(&p->ints, sizeof(int32_t));
    p->root = p->opt_root = p->scan = TL_NO_ID;
    p->sorted = spec->sorted;
    if ((st = tl_ea_init(&p->ea, err)) != TL_OK) goto fail;
    p->ea.now = opt->now;
    /* source 0: the (empty) text of nodes the planner makes itself */
    if ((st = tl_ea_add_src(&p->ea, "", "", &src0, err)) != TL_OK) goto fail;
    if (opt->n_inputs < 1) {
        st = tl_error(err, TL_ERR_USAGE, "no input given");
        goto fail;
    }
    p->inputs = tl_calloc((size_t)opt->n_inputs, sizeof *p->inputs);
    if (!p->inputs) {
        st = tl_error_oom(err);
        goto fail;
    }
    p->n_inputs = opt->n_inputs;
    {
        int group = 0;
        st = build_pipeline(p, spec, opt, &group, 0, &cur, err);
        if (st != TL_OK) goto fail;
    }
    p->root = cur;
    *out = p;
    return TL_OK;
fail:
    if (st == TL_ERR_USAGE && p->ea.unknown_name) st = tl_plan_more_columns(p, st, err);
    if (st == TL_ERR_USAGE) explain_string(spec, opt, err);
    tl_plan_free(p);
    return st;
}

/* See plan.h. */
void tl_plan_free(TlPlan *p)
{
    if (!p) return;
    for (int i = 0; i < p->n_inputs; i++) {
        tl_reader_close(p->inputs[i].reader);
        tl_free(p->inputs[i].display);
        tl_free(p->inputs[i].path);
    }
    tl_free(p->inputs);
    for (int k = 0; k < p->n_shapes; k++) {
        tl_schema_free(&p->shapes[k].cols);
        tl_free(p->shapes[k].map);
    }
    tl_free(p->shapes);
    tl_free(p->converted);
    for (int i = 0; i < p->n_schemas; i++) {
        tl_schema_free(p->schemas[i]);
        tl_free(p->schemas[i]);
    }
    tl_free(p->schemas);
    tl_arena_free(&p->nodes);
    tl_arena_free(&p->ids);
    tl_arena_free(&p->ints);
    tl_ea_free(&p->ea);
    tl_free(p->opt_log);
    tl_free(p);
}
