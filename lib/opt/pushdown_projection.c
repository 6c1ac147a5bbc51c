/*
 * pushdown_projection.c -- read only the columns something uses.
 *
 * One walk from the root down computes, for every node, which of its
 * output columns its parent needs (`need`, one flag per column; the root
 * needs all).  Each node then asks its child for what it needs itself:
 *
 *   scan           keeps the needed columns -> projected scan (possibly
 *                  none: the reader's batches still carry their row count)
 *   filter, sort   need + the columns their expressions reference
 *   limit          need
 *   limit-by       need + the by columns
 *   distinct       need + its columns (all columns when it has none)
 *   sample         need
 *   row number     need of its input's columns (its output is them and the
 *                  number, last)
 *   project        keeps only the needed expressions (and the earlier ones
 *                  they read: tl_plan_reads_self); the child must supply
 *                  what those reference.  A project with guards (filters
 *                  inside a run of `with` items) keeps every expression:
 *                  its guards decide which rows the later ones see
 *   aggregate      keeps everything; the child supplies keys' and
 *                  aggregates' columns
 *   join           two children: the left supplies the needed left columns
 *                  plus its keys (the join outputs every left column its
 *                  child still has); the right supplies its keys plus the
 *                  needed right output columns, so the build side holds
 *                  only what the plan uses
 *
 * On the way back up every node returns a map from its old output columns to
 * its new ones (-1: gone).  A parent whose child changed is copied with its
 * column references remapped: expressions are rewritten copy-on-write
 * (remap pushes new nodes only along paths that hold a moved column), column
 * lists are translated.  A node whose child did not change is returned as
 * is, with the identity map.
 */
#include "rules.h"

#include <string.h>

/* Mark in need[] every column expression e references. */
static void refs(const TlExprArena *ea, TlExprId e, bool *need)
{
    const TlExpr *x = tl_ea_node(ea, e);
    if (x->kind == TL_X_COL && x->col >= 0) need[x->col] = true;
    for (uint32_t i = 0; i < x->n_args; i++) refs(ea, tl_ea_arg(ea, x, i), need);
}

/* Mark what e references: a column c < n_in of the child in need[c], an
 * earlier expression's output (c >= n_in, tl_plan_reads_self) in
 * self[c - n_in]; *reads set when there is one. */
static void refs_project(const TlExprArena *ea, TlExprId e, int n_in, bool *need,
                         bool *self, bool *reads)
{
    const TlExpr *x = tl_ea_node(ea, e);
    if (x->kind == TL_X_COL && x->col >= n_in) {
        self[x->col - n_in] = true;
        *reads = true;
    } else if (x->kind == TL_X_COL && x->col >= 0) {
        need[x->col] = true;
    }
    for (uint32_t i = 0; i < x->n_args; i++)
        refs_project(ea, tl_ea_arg(ea, x, i), n_in, need, self, reads);
}

/* e with every column reference c replaced by map[c]; *out = e when nothing
 * moved. */
static TlStatus remap(TlExprArena *ea, TlExprId e, const int *map,
                      TlExprId *out, TlError *err)
{
    const TlExpr *x = tl_ea_node(ea, e);
    if (x->kind == TL_X_COL) {
        TlExpr t;
        if (x->col < 0 || map[x->col] == x->col) {
            *out = e;
            return TL_OK;
        }
        t = *x;
        t.col = map[x->col];
        return tl_ea_push(ea, &t, NULL, 0, out, err);
    }
    uint32_t n = x->n_args;
    if (n == 0) {
        *out = e;
        return TL_OK;
    }
    TlExprId small[8], *args = n <= 8 ? small : tl_malloc(n * sizeof *args);
    bool changed = false;
    TlStatus st = TL_OK;
    if (!args) return tl_error_oom(err);
    for (uint32_t i = 0; i < n && st == TL_OK; i++) {
        TlExprId a = tl_ea_arg(ea, tl_ea_node(ea, e), i);
        st = remap(ea, a, map, &args[i], err);
        if (args[i] != a) changed = true;
    }
    if (st == TL_OK && changed) {
        TlExpr t = *tl_ea_node(ea, e);
        st = tl_ea_push(ea, &t, args, n, out, err);
    } else if (st == TL_OK) {
        *out = e;
    }
    if (args != small) tl_free(args);
    return st;
}

/* Remap list (start, n) of p->ids into a new list; *changed tells whether
 * any id differs. */
static TlStatus remap_list(TlPlan *p, uint32_t start, uint32_t n, const int *map,
                           uint32_t *out, TlError *err)
{
    TlExprId *v = tl_malloc((n ? n : 1) * sizeof *v);
    TlStatus st = TL_OK;
    if (!v) return tl_error_oom(err);
    for (uint32_t i = 0; i < n && st == TL_OK; i++)
        st = remap(&p->ea, tl_plan_expr(p, start, i), map, &v[i], err);
    if (st == TL_OK) st = tl_plan_push_ids(p, v, n, out, err);
    tl_free(v);
    return st;
}

static TlStatus remap_ints(TlPlan *p, uint32_t start, uint32_t n, const int *map,
                           uint32_t *out, TlError *err)
{
    int32_t *v = tl_malloc((n ? n : 1) * sizeof *v);
    TlStatus st;
    if (!v) return tl_error_oom(err);
    for (uint32_t i = 0; i < n; i++) v[i] = map[tl_plan_int(p, start, i)];
    st = tl_plan_push_ints(p, v, n, out, err);
    tl_free(v);
    return st;
}

static TlStatus prune(TlPlan *p, TlPlanId id, bool *need, bool is_root,
                      TlPlanId *out, int **map_out, TlError *err);

/* The scan: keep the needed columns. */
static TlStatus prune_scan(TlPlan *p, TlPlanId id, const bool *need,
                           TlPlanId *out, int *map, TlError *err)
{
    const TlPlanNode *n = tl_plan_node(p, id);
    const TlSchema *s = n->schema;
    int nf = s->n_fields, kept = 0;
    int32_t *cols = tl_malloc((size_t)(nf ? nf : 1) * sizeof *cols);
    TlSchema *ns;
    TlStatus st;
    uint32_t cs;

    if (!cols) return tl_error_oom(err);
    for (int c = 0; c < nf; c++) {
        map[c] = need[c] ? kept : -1;
        if (need[c]) cols[kept++] = n->projected ? tl_plan_int(p, n->cols, (uint32_t)c) : c;
    }
    if (kept == nf) {
        for (int c = 0; c < nf; c++) map[c] = c;
        tl_free(cols);
        *out = id;
        return TL_OK;
    }
    st = tl_plan_schema_new(p, &ns, err);
    for (int c = 0; st == TL_OK && c < nf; c++)
        if (map[c] >= 0)
            st = tl_schema_add(ns, s->fields[c].name, s->fields[c].type, err);
    if (st == TL_OK) st = tl_plan_push_ints(p, cols, (uint32_t)kept, &cs, err);
    if (st == TL_OK) st = tl_opt_copy_node(p, id, TL_NO_ID, out, err);
    if (st == TL_OK) {
        TlPlanNode *nn = tl_plan_node(p, *out);
        nn->projected = true;
        nn->cols = cs;
        nn->n_cols = (uint32_t)kept;
        nn->schema = ns;
    }
    tl_free(cols);
    return st;
}

/* A project: keep the needed expressions.  One that reads an earlier
 * one's output keeps that one too (the expressions are visited last to
 * first, so the need flows back), and its reads are remapped to where the
 * kept outputs and the pruned child's columns end up. */
static TlStatus prune_project(TlPlan *p, TlPlanId id, const bool *need,
                              bool is_root, TlPlanId *out, int *map, TlError *err)
{
    const TlPlanNode *n = tl_plan_node(p, id);
    const TlSchema *s = n->schema;
    const TlSchema *cs = tl_plan_node(p, n->child)->schema;
    uint32_t ne = n->n_exprs, exprs = n->exprs, kept = 0;
    int n_in = cs->n_fields;
    TlPlanId child = n->child, nc;
    bool *cneed = tl_calloc((size_t)(n_in ? n_in : 1), 1);
    bool *self = tl_calloc(ne ? ne : 1, 1), reads = false;
    TlExprId *v = tl_malloc((ne ? ne : 1) * sizeof *v);
    int *cmap = NULL, *smap = NULL;
    TlSchema *ns = NULL;
    uint32_t start;
    TlStatus st = TL_OK;

    if (!cneed || !self || !v) { st = tl_error_oom(err); goto done; }
    if (n->n_guards) is_root = true;
    for (uint32_t g = 0; g < n->n_guards; g++)
        refs_project(&p->ea, tl_plan_expr(p, n->guards, g), n_in, cneed, self, &reads);
    for (uint32_t i = ne; i-- > 0;)
        if (is_root || need[i] || self[i])
            refs_project(&p->ea, tl_plan_expr(p, exprs, i), n_in, cneed, self, &reads);
    for (uint32_t i = 0; i < ne; i++)
        map[i] = is_root || need[i] || self[i] ? (int)kept++ : -1;
    if (kept == 0 && ne > 0) {
        /* nothing needed: one column still carries the row count (the first
         * expression reads no earlier one) */
        map[0] = (int)kept++;
        refs(&p->ea, tl_plan_expr(p, exprs, 0), cneed);
    }
    if ((st = prune(p, child, cneed, false, &nc, &cmap, err)) != TL_OK) goto done;
    if (nc == child && kept == ne) {
        *out = id;
        goto done;
    }
    if (reads) { /* the child's columns, then the outputs, moved */
        int nn_in = tl_plan_node(p, nc)->schema->n_fields;
        if (!(smap = tl_malloc(((size_t)n_in + ne) * sizeof *smap))) {
            st = tl_error_oom(err);
            goto done;
        }
        memcpy(smap, cmap, (size_t)n_in * sizeof *smap);
        for (uint32_t i = 0; i < ne; i++)
            smap[n_in + i] = map[i] >= 0 ? nn_in + map[i] : -1;
    }
    for (uint32_t i = 0, k = 0; i < ne && st == TL_OK; i++)
        if (map[i] >= 0)
            st = remap(&p->ea, tl_plan_expr(p, exprs, i), smap ? smap : cmap, &v[k++],
                       err);
    if (st != TL_OK) goto done;
    if (kept == ne) {
        ns = (TlSchema *)s;
    } else {
        if ((st = tl_plan_schema_new(p, &ns, err)) != TL_OK) goto done;
        for (uint32_t i = 0; i < ne && st == TL_OK; i++)
            if (map[i] >= 0)
                st = tl_schema_add(ns, s->fields[i].name, s->fields[i].type, err);
        if (st != TL_OK) goto done;
    }
    if ((st = tl_plan_push_ids(p, v, kept, &start, err)) != TL_OK) goto done;
    if ((st = tl_opt_copy_node(p, id, nc, out, err)) != TL_OK) goto done;
    {
        TlPlanNode *nn = tl_plan_node(p, *out);
        nn->exprs = start;
        nn->n_exprs = kept;
        nn->schema = ns;
    }
    if (tl_plan_node(p, *out)->n_guards) {
        uint32_t ng = tl_plan_node(p, *out)->n_guards, gs = tl_plan_node(p, *out)->guards;
        st = remap_list(p, gs, ng, smap ? smap : cmap, &start, err);
        if (st == TL_OK) tl_plan_node(p, *out)->guards = start;
    }
done:
    tl_free(cneed);
    tl_free(self);
    tl_free(v);
    tl_free(cmap);
    tl_free(smap);
    return st;
}

/* Every other node: the child supplies need plus what the node uses. */
static TlStatus prune_other(TlPlan *p, TlPlanId id, const bool *need,
                            TlPlanId *out, int **map_out, TlError *err)
{
    TlPlanNode n = *tl_plan_node(p, id);
    const TlSchema *cs = tl_plan_node(p, n.child)->schema;
    int ncf = cs->n_fields;
    bool *cneed = tl_calloc((size_t)(ncf ? ncf : 1), 1);
    int *cmap = NULL;
    TlPlanId nc;
    TlStatus st = TL_OK;
    bool passthrough = n.kind != TL_PLAN_AGGREGATE && n.kind != TL_PLAN_DESCRIBE;

    if (!cneed) return tl_error_oom(err);
    if (passthrough)
        for (int c = 0; c < ncf; c++) cneed[c] = need[c];
    for (uint32_t i = 0; i < n.n_exprs; i++)
        refs(&p->ea, tl_plan_expr(p, n.exprs, i), cneed);
    for (uint32_t i = 0; i < n.n_aggs; i++)
        refs(&p->ea, tl_plan_expr(p, n.aggs, i), cneed);
    if (n.kind == TL_PLAN_LIMIT_BY || n.kind == TL_PLAN_DISTINCT)
        for (uint32_t i = 0; i < n.n_cols; i++) cneed[tl_plan_int(p, n.cols, i)] = true;
    if ((n.kind == TL_PLAN_DISTINCT && n.n_cols == 0) || n.kind == TL_PLAN_DESCRIBE)
        for (int c = 0; c < ncf; c++) cneed[c] = true;

    if ((st = prune(p, n.child, cneed, false, &nc, &cmap, err)) != TL_OK) goto done;
    if (nc == n.child) {
        *out = id;
    } else {
        if ((st = remap_list(p, n.exprs, n.n_exprs, cmap, &n.exprs, err)) != TL_OK)
            goto done;
        if ((st = remap_list(p, n.aggs, n.n_aggs, cmap, &n.aggs, err)) != TL_OK)
            goto done;
        if ((st = remap_ints(p, n.cols, n.n_cols, cmap, &n.cols, err)) != TL_OK)
            goto done;
        n.child = nc;
        if (passthrough) n.schema = tl_plan_node(p, nc)->schema;
        if ((st = tl_arena_push(&p->nodes, out, err)) != TL_OK) goto done;
        *tl_plan_node(p, *out) = n;
    }
    if (passthrough) {
        *map_out = cmap; /* the output is the child's */
        cmap = NULL;
    } else {
        for (int c = 0; c < n.schema->n_fields; c++) (*map_out)[c] = c;
    }
done:
    tl_free(cneed);
    tl_free(cmap);
    return st;
}

/* A row number: the child supplies what is needed of its columns; the
 * output is the child's new columns and the number, last. */
static TlStatus prune_row_number(TlPlan *p, TlPlanId id, const bool *need,
                                 TlPlanId *out, int *map, TlError *err)
{
    TlPlanNode n = *tl_plan_node(p, id);
    int ncf = tl_plan_node(p, n.child)->schema->n_fields;
    bool *cneed = tl_calloc((size_t)(ncf ? ncf : 1), 1);
    int *cmap = NULL;
    TlPlanId nc;
    TlSchema *ns;
    TlStatus st;

    if (!cneed) return tl_error_oom(err);
    for (int c = 0; c < ncf; c++) cneed[c] = need[c];
    st = prune(p, n.child, cneed, false, &nc, &cmap, err);
    tl_free(cneed);
    if (st == TL_OK && nc == n.child) {
        for (int c = 0; c <= ncf; c++) map[c] = c;
        *out = id;
    } else if (st == TL_OK) {
        const TlSchema *cs = tl_plan_node(p, nc)->schema;
        const TlField *num = &n.schema->fields[ncf];
        st = tl_plan_schema_new(p, &ns, err);
        for (int c = 0; st == TL_OK && c < cs->n_fields; c++)
            st = tl_schema_add(ns, cs->fields[c].name, cs->fields[c].type, err);
        if (st == TL_OK) st = tl_schema_add(ns, num->name, num->type, err);
        if (st == TL_OK) st = tl_opt_copy_node(p, id, nc, out, err);
        if (st == TL_OK) {
            tl_plan_node(p, *out)->schema = ns;
            for (int c = 0; c < ncf; c++) map[c] = cmap[c];
            map[ncf] = cs->n_fields;
        }
    }
    tl_free(cmap);
    return st;
}

/* A join: prune both sides; the output keeps every column the new left
 * child has, then the needed right columns. */
static TlStatus prune_join(TlPlan *p, TlPlanId id, const bool *need,
                           TlPlanId *out, int *map, TlError *err)
{
    TlPlanNode n = *tl_plan_node(p, id);
    const TlSchema *s = n.schema;
    const TlSchema *ls = tl_plan_node(p, n.child)->schema;
    const TlSchema *rs = tl_plan_node(p, n.right)->schema;
    int nl = ls->n_fields, nr = rs->n_fields;
    bool narrow = n.how == TL_JOIN_SEMI || n.how == TL_JOIN_ANTI;
    bool *lneed = tl_calloc((size_t)(nl ? nl : 1), 1);
    bool *rneed = tl_calloc((size_t)(nr ? nr : 1), 1);
    int32_t *v = tl_malloc((size_t)(nr + n.n_cols + 1) * sizeof *v);
    int *lmap = NULL, *rmap = NULL;
    TlPlanId lc, rc;
    TlSchema *ns = NULL;
    uint32_t kept = 0;
    TlStatus st = TL_OK;

    if (!lneed || !rneed || !v) { st = tl_error_oom(err); goto done; }
    for (int c = 0; c < nl; c++) lneed[c] = need[c];
    for (uint32_t i = 0; i < n.n_cols; i++) {
        lneed[tl_plan_int(p, n.cols, i)] = true;
        rneed[tl_plan_int(p, n.rkeys, i)] = true;
    }
    for (uint32_t i = 0; !narrow && i < n.n_rcols; i++)
        if (need[nl + (int)i]) rneed[tl_plan_int(p, n.rcols, i)] = true;
    if ((st = prune(p, n.child, lneed, false, &lc, &lmap, err)) != TL_OK) goto done;
    if ((st = prune(p, n.right, rneed, false, &rc, &rmap, err)) != TL_OK) goto done;
    if (narrow) {
        /* the output is the left child's */
        for (int c = 0; c < nl; c++) map[c] = lmap[c];
    } else {
        int k = tl_plan_node(p, lc)->schema->n_fields;
        for (int c = 0; c < nl; c++) map[c] = lmap[c];
        for (uint32_t i = 0; i < n.n_rcols; i++)
            map[nl + (int)i] = need[nl + (int)i] ? k++ : -1;
        if (lc == n.child && rc == n.right && k == s->n_fields) {
            for (int c = 0; c < s->n_fields; c++) map[c] = c;
            *out = id;
            goto done;
        }
    }
    if (narrow && lc == n.child && rc == n.right) {
        *out = id;
        goto done;
    }
    for (uint32_t i = 0; i < n.n_cols; i++) v[i] = lmap[tl_plan_int(p, n.cols, i)];
    if ((st = tl_plan_push_ints(p, v, n.n_cols, &n.cols, err)) != TL_OK) goto done;
    for (uint32_t i = 0; i < n.n_cols; i++) v[i] = rmap[tl_plan_int(p, n.rkeys, i)];
    if ((st = tl_plan_push_ints(p, v, n.n_cols, &n.rkeys, err)) != TL_OK) goto done;
    if (narrow) {
        n.schema = tl_plan_node(p, lc)->schema;
    } else {
        for (uint32_t i = 0; i < n.n_rcols; i++)
            if (need[nl + (int)i]) v[kept++] = rmap[tl_plan_int(p, n.rcols, i)];
        if ((st = tl_plan_push_ints(p, v, kept, &n.rcols, err)) != TL_OK) goto done;
        n.n_rcols = kept;
        if ((st = tl_plan_schema_new(p, &ns, err)) != TL_OK) goto done;
        {
            /* new position -> old column (the left part follows lmap) */
            int *slot = tl_malloc((size_t)(s->n_fields + 1) * sizeof *slot);
            int total = 0;
            if (!slot) { st = tl_error_oom(err); goto done; }
            for (int c = 0; c < s->n_fields; c++)
                if (map[c] >= 0) {
                    slot[map[c]] = c;
                    total++;
                }
            for (int k = 0; k < total && st == TL_OK; k++)
                st = tl_schema_add(ns, s->fields[slot[k]].name,
                                   s->fields[slot[k]].type, err);
            tl_free(slot);
        }
        if (st != TL_OK) goto done;
        n.schema = ns;
    }
    n.child = lc;
    n.right = rc;
    if ((st = tl_arena_push(&p->nodes, out, err)) != TL_OK) goto done;
    *tl_plan_node(p, *out) = n;
done:
    tl_free(lneed);
    tl_free(rneed);
    tl_free(v);
    tl_free(lmap);
    tl_free(rmap);
    return st;
}

/* Prune the subtree at id given the needed output columns; *out is the new
 * root and *map_out (tl_malloc'd, one entry per old output column) says
 * where each column went. */
static TlStatus prune(TlPlan *p, TlPlanId id, bool *need, bool is_root,
                      TlPlanId *out, int **map_out, TlError *err)
{
    const TlPlanNode *n = tl_plan_node(p, id);
    int nf = n->schema->n_fields;
    int *map = tl_malloc((size_t)(nf ? nf : 1) * sizeof *map);
    TlStatus st;
    if (!map) return tl_error_oom(err);
    switch ((TlPlanKind)n->kind) {
    case TL_PLAN_SCAN:
        st = prune_scan(p, id, need, out, map, err);
        break;
    case TL_PLAN_PROJECT:
        st = prune_project(p, id, need, is_root, out, map, err);
        break;
    case TL_PLAN_JOIN:
        st = prune_join(p, id, need, out, map, err);
        break;
    case TL_PLAN_ROW_NUMBER:
        st = prune_row_number(p, id, need, out, map, err);
        break;
    default: {
        int *m = map;
        st = prune_other(p, id, need, out, &m, err);
        if (m != map) {
            tl_free(map);
            map = m;
        }
        break;
    }
    }
    if (st != TL_OK) {
        tl_free(map);
        return st;
    }
    *map_out = map;
    return TL_OK;
}

/* See rules.h. */
TlStatus tl_opt_pushdown_projection(TlPlan *p, TlPlanId root, TlPlanId *out,
                                    TlError *err)
{
    int nf = tl_plan_node(p, root)->schema->n_fields;
    bool *need = tl_malloc((size_t)(nf ? nf : 1));
    int *map = NULL;
    TlStatus st;
    if (!need) return tl_error_oom(err);
    memset(need, 1, (size_t)(nf ? nf : 1));
    st = prune(p, root, need, true, out, &map, err);
    tl_free(need);
    tl_free(map);
    return st;
}
