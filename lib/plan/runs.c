/*
 * runs.c -- runs of steps planned as one node, so that a pipeline of n such
 * steps over w columns costs O(n + w), not a projection of every column per
 * step:
 *
 *   with      items that append columns share one project node (TlWithRun),
 *             a later item reading an earlier one's output
 *             (tl_plan_reads_self)
 *   filter    between two with steps of a run: the run's guards
 *             (TlPlanNode.guards), evaluated at their place in the run
 *   drop      consecutive steps: one projection of the columns left
 *   rename    consecutive steps: one projection under the last names, a
 *             name -> column table kept up to date step by step
 *
 * A step of a drop or rename run that would fail ends the run and runs
 * alone, so its message is the one it always gave; what the run's steps
 * did stays known for dropped_hint (plan.c).
 */
#include "steps.h"

#include "resolve.h"
#include "../expr/eval.h"

#include <string.h>

/* See steps.h. */
TlStatus tl_plan_with_close(TlPlan *p, TlWithRun *w, TlError *err)
{
    uint32_t start;
    if (w->node == TL_NO_ID) return TL_OK;
    TL_TRY(tl_plan_push_ids(p, w->exprs, w->n, &start, err));
    tl_plan_node(p, w->node)->exprs = start;
    tl_plan_node(p, w->node)->n_exprs = w->n;
    if (w->n_guards) {
        TL_TRY(tl_plan_push_ids(p, w->guards, w->n_guards, &start, err));
        tl_plan_node(p, w->node)->guards = start;
        tl_plan_node(p, w->node)->n_guards = w->n_guards;
        TL_TRY(tl_plan_push_ints(p, w->guard_at, w->n_guards, &start, err));
        tl_plan_node(p, w->node)->guard_at = start;
    }
    w->node = TL_NO_ID;
    w->n = 0;
    w->n_guards = 0;
    return TL_OK;
}

static TlStatus with_put(TlWithRun *w, TlExprId e, TlError *err)
{
    if (w->n == w->cap) {
        uint32_t nc = w->cap ? w->cap * 2 : 16;
        TlExprId *v = tl_realloc(w->exprs, (size_t)nc * sizeof *v);
        if (!v) return tl_error_oom(err);
        w->exprs = v;
        w->cap = nc;
    }
    w->exprs[w->n++] = e;
    return TL_OK;
}

/* Whether e reads column c. */
static bool reads_col(const TlExprArena *ea, TlExprId e, int c)
{
    const TlExpr *x = tl_ea_node(ea, e);
    if (x->kind == TL_X_COL) return x->col == c;
    for (uint32_t i = 0; i < x->n_args; i++)
        if (reads_col(ea, tl_ea_arg(ea, x, i), c)) return true;
    return false;
}

/* e, resolved against the open run's schema, in the run node's terms (see
 * tl_plan_reads_self): a column the run passes through is its child's,
 * one the run appended (c >= child_n) is the node's own output c, read as
 * child_n + c.  (e does not read the column the run replaced.) */
static TlStatus rebase(TlPlan *p, const TlWithRun *w, TlExprId e, TlExprId *out,
                       TlError *err)
{
    const TlExpr *x = tl_ea_node(&p->ea, e);
    uint32_t n = x->n_args;
    *out = e;
    if (x->kind == TL_X_COL) {
        TlExpr t = *x;
        if (x->col < w->child_n) return TL_OK;
        t.col = w->child_n + x->col;
        return tl_ea_push(&p->ea, &t, NULL, 0, out, err);
    }
    if (n == 0) return TL_OK;
    TlExprId small[8], *args = n <= 8 ? small : tl_malloc(n * sizeof *args);
    bool changed = false;
    TlStatus st = TL_OK;
    if (!args) return tl_error_oom(err);
    for (uint32_t i = 0; i < n && st == TL_OK; i++) {
        TlExprId a = tl_ea_arg(&p->ea, tl_ea_node(&p->ea, e), i);
        st = rebase(p, w, a, &args[i], err);
        changed |= args[i] != a;
    }
    if (st == TL_OK && changed) {
        TlExpr t = *tl_ea_node(&p->ea, e);
        st = tl_ea_push(&p->ea, &t, args, n, out, err);
    }
    if (args != small) tl_free(args);
    return st;
}

/* One `with` item: a project node passing every column through, NAME
 * replaced in place or appended.  Consecutive items that append share one
 * node (a run, TlWithRun) that evaluates them in their written order, a later
 * one reading what the earlier ones made: `--with 'c1 = a + 1' --with 'c2 =
 * c1 + 1' ...` is one projection of the input, so n such steps cost O(n),
 * not a copy of every column per step.  An item that replaces a column
 * starts a new node, and so does one that reads the column the run's first
 * item replaced (it would read the new value under the input column's
 * name; two nodes say which value each reads). */
static TlStatus with_one(TlPlan *p, const TlItem *it, TlWithRun *w, TlPlanId *cur,
                         TlError *err)
{
    const TlSchema *in = tl_plan_node(p, *cur)->schema;
    TlExprId e;
    TlStatus st = TL_OK;
    int n = in->n_fields, at;

    if (!it->name)
        return tl_error_at(err, TL_ERR_USAGE, &p->ea, it->src, it->start,
                           it->len, "expected NAME = EXPR");
    TL_TRY(tl_resolve_expr(&p->ea, it->expr, in, false, &e, err));
    at = tl_schema_find(in, it->name);
    if (w->node == *cur && at < 0 &&
        (w->replaced < 0 || !reads_col(&p->ea, e, w->replaced))) {
        TlType t = (TlType)tl_ea_node(&p->ea, e)->type;
        TL_TRY(rebase(p, w, e, &e, err));
        TL_TRY(with_put(w, e, err));
        return tl_schema_add(w->out, it->name, t, err);
    }
    TL_TRY(tl_plan_with_close(p, w, err));
    TL_TRY(tl_plan_schema_new(p, &w->out, err));
    for (int c = 0; st == TL_OK && c < n; c++) {
        TlExprId x = e;
        TlType t = (TlType)tl_ea_node(&p->ea, e)->type;
        if (c != at) {
            st = tl_plan_col_ref(p, in, c, &x, err);
            t = in->fields[c].type;
        }
        if (st == TL_OK) st = with_put(w, x, err);
        if (st == TL_OK) st = tl_schema_add(w->out, in->fields[c].name, t, err);
    }
    if (st == TL_OK && at < 0) {
        st = with_put(w, e, err);
        if (st == TL_OK)
            st = tl_schema_add(w->out, it->name,
                               (TlType)tl_ea_node(&p->ea, e)->type, err);
    }
    if (st == TL_OK) st = tl_plan_push(p, TL_PLAN_PROJECT, *cur, cur, err);
    if (st != TL_OK) return st;
    tl_plan_node(p, *cur)->schema = w->out;
    w->node = *cur;
    w->child_n = n;
    w->replaced = at;
    return TL_OK;
}

TlStatus tl_plan_step_with(TlPlan *p, const TallyStep *s, TlWithRun *w,
                           TlPlanId *cur, TlError *err)
{
    TlItemVec iv = {0};
    TlStatus st = tl_plan_parse_list(p, s->items, s->n_items, s->names, s->origin,
                                     s->split, TL_ITEM_ASSIGN, &iv, err);
    for (uint32_t i = 0; st == TL_OK && i < iv.n; i++)
        st = with_one(p, &iv.v[i], w, cur, err);
    tl_free(iv.v);
    return st;
}

/* A filter step between two `with` steps of an open run: when none of its
 * predicates reads the column the run's first item replaced, they become
 * the run's guards, in order, and the run stays open; otherwise the run
 * closes and the filters are nodes of their own.  A filter node between
 * two projections would end the run, and the projection after it would
 * list every column again: n with + filter pairs would cost O(n) columns
 * each, O(n^2) in all.  The guard keeps the rows the filter keeps at the
 * same point of the run, so every output after it is evaluated on the
 * rows it would have been evaluated on, in the same order. */
TlStatus tl_plan_filter_run(TlPlan *p, const TallyStep *s, TlWithRun *w,
                            TlPlanId *cur, TlError *err)
{
    TlItemVec iv = {0};
    TlExprId *preds = NULL;
    bool fuse = true;
    TlStatus st = tl_plan_filter_preds(p, s, w->out, &iv, &preds, err);
    for (uint32_t i = 0; st == TL_OK && fuse && i < iv.n; i++)
        fuse = w->replaced < 0 || !reads_col(&p->ea, preds[i], w->replaced);
    if (st == TL_OK && !fuse) {
        st = tl_plan_with_close(p, w, err);
        if (st == TL_OK) st = tl_plan_push_filters(p, preds, iv.n, cur, err);
    }
    for (uint32_t i = 0; st == TL_OK && fuse && i < iv.n; i++) {
        TlExprId e;
        st = rebase(p, w, preds[i], &e, err);
        if (st == TL_OK && w->n_guards == w->cap_guards) {
            uint32_t nc = w->cap_guards ? w->cap_guards * 2 : 16;
            TlExprId *g = tl_realloc(w->guards, (size_t)nc * sizeof *g);
            if (g) w->guards = g;
            int32_t *at = g ? tl_realloc(w->guard_at, (size_t)nc * sizeof *at) : NULL;
            if (at) w->guard_at = at;
            if (!at) st = tl_error_oom(err);
            else w->cap_guards = nc;
        }
        if (st == TL_OK) {
            w->guards[w->n_guards] = e;
            w->guard_at[w->n_guards++] = (int32_t)w->n;
        }
    }
    tl_free(preds);
    tl_free(iv.v);
    return st;
}


/* Consecutive drop steps first..last as one projection: each step's names
 * are looked up in the run's input schema, and by[c] records the step that
 * dropped column c (-1: kept; dropped_hint reads it), so n steps over w
 * columns cost O(n + w) rather than a projection of every column left per
 * step.  The run stops before a step that would fail (a name unknown or
 * already dropped, every column dropped, a parse error), which then runs
 * alone and fails as it always did; *last is the run's last step (first - 1:
 * none, nothing pushed). */
TlStatus tl_plan_drop_run(TlPlan *p, const TallySpec *spec, int first, int *last,
                          TlPlanId *cur, int32_t *by, TlError *err)
{
    const TlSchema *in = tl_plan_node(p, *cur)->schema;
    int n = in->n_fields, left = n, n_keep = 0, *keep;
    TlStatus st = TL_OK;
    for (int c = 0; c < n; c++) by[c] = -1;
    for (int k = first; k <= *last; k++) {
        const TallyStep *s = &spec->steps[k];
        TlItemVec iv = {0};
        TlError perr;
        bool fine = tl_plan_parse_list(p, s->items, s->n_items, NULL, s->origin, s->split,
                                       TL_ITEM_NAME, &iv, &perr) == TL_OK;
        /* a selector expands against the schema its step sees: the step
         * runs alone */
        for (uint32_t i = 0; fine && i < iv.n; i++) fine = !iv.v[i].sel;
        for (uint32_t i = 0; fine && i < iv.n; i++) {
            int c = tl_schema_find(in, iv.v[i].name);
            fine = c >= 0 && (by[c] < 0 || by[c] == k);
            if (fine && by[c] < 0) left--;
            if (fine) by[c] = k;
        }
        tl_free(iv.v);
        if (!fine || left == 0) {
            for (int c = 0; c < n; c++)
                if (by[c] == k) by[c] = -1;
            *last = k - 1;
            break;
        }
    }
    if (*last < first) return TL_OK;
    if (!(keep = tl_malloc((size_t)(n ? n : 1) * sizeof *keep))) return tl_error_oom(err);
    for (int c = 0; c < n; c++)
        if (by[c] < 0) keep[n_keep++] = c;
    st = tl_plan_push_passthrough(p, *cur, keep, n_keep, NULL, cur, err);
    tl_free(keep);
    return st;
}

/* A name -> column table for a rename run: open addressing, removal by
 * tombstone; it doubles (keeping the live names) once half its slots are
 * used, so each rename costs O(1) on average. */
typedef struct NameTab {
    const char **key;   /* NULL: empty */
    int *col;           /* -1: removed */
    size_t mask, used;
} NameTab;

static size_t name_hash(const char *s)
{
    size_t h = 1469598103934665603u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* The slot of name (live or removed), or of the empty slot ending its
 * probe. */
static size_t tab_slot(const NameTab *t, const char *name, bool live)
{
    size_t i = name_hash(name) & t->mask;
    while (t->key[i] && (strcmp(t->key[i], name) != 0 || (live && t->col[i] < 0)))
        i = (i + 1) & t->mask;
    return i;
}

static int tab_find(const NameTab *t, const char *name)
{
    size_t i = tab_slot(t, name, true);
    return t->key[i] ? t->col[i] : -1;
}

static TlStatus tab_put(NameTab *t, const char *name, int col, TlError *err)
{
    if (2 * (t->used + 1) > t->mask + 1) {
        NameTab g = {NULL, NULL, 2 * t->mask + 1, 0};
        g.key = tl_calloc(g.mask + 1, sizeof *g.key);
        g.col = tl_malloc((g.mask + 1) * sizeof *g.col);
        if (!g.key || !g.col) {
            tl_free(g.key);
            tl_free(g.col);
            return tl_error_oom(err);
        }
        for (size_t i = 0; i <= t->mask; i++)
            if (t->key[i] && t->col[i] >= 0) {
                size_t j = name_hash(t->key[i]) & g.mask;
                while (g.key[j]) j = (j + 1) & g.mask;
                g.key[j] = t->key[i];
                g.col[j] = t->col[i];
                g.used++;
            }
        tl_free(t->key);
        tl_free(t->col);
        *t = g;
    }
    size_t i = name_hash(name) & t->mask;
    while (t->key[i]) i = (i + 1) & t->mask;
    t->key[i] = name;
    t->col[i] = col;
    t->used++;
    return TL_OK;
}

/* See steps.h. */
void tl_plan_renamed_free(TlRenamed *r)
{
    if (!r) return;
    tl_free(r->old);
    tl_free(r->new_);
    tl_free(r);
}

/* Step k's renames, checked against the run's table: *ok false when the
 * step would fail (an unknown name, a column renamed twice, a duplicate
 * name), the run's state then as before the step. */
static TlStatus rename_step(TlPlan *p, const TallyStep *s, int k, NameTab *t,
                            const char **names, int *stamp, TlRenamed **out,
                            bool *ok, TlError *err)
{
    TlItemVec iv = {0};
    TlError perr;
    TlRenamed *r = NULL;
    int *cols = NULL;
    *ok = false;
    *out = NULL;
    if (tl_plan_rename_items(p, s, &iv, &perr) != TL_OK) goto done;
    r = tl_calloc(1, sizeof *r);
    cols = tl_malloc((iv.n ? iv.n : 1) * sizeof *cols);
    if (r) r->old = tl_malloc((iv.n ? iv.n : 1) * sizeof *r->old);
    if (r) r->new_ = tl_malloc((iv.n ? iv.n : 1) * sizeof *r->new_);
    if (!r || !cols || !r->old || !r->new_) {
        tl_plan_renamed_free(r);
        tl_free(cols);
        tl_free(iv.v);
        return tl_error_oom(err);
    }
    r->n = iv.n;
    for (uint32_t i = 0; i < iv.n; i++) {
        int c = tab_find(t, iv.v[i].name);
        if (c < 0 || stamp[c] == k) goto done;
        stamp[c] = k;
        cols[i] = c;
        r->old[i] = names[c];
        r->new_[i] = iv.v[i].name2;
    }
    /* every old name leaves, then every new one comes (a:b,b:a swaps) */
    for (uint32_t i = 0; i < iv.n; i++) t->col[tab_slot(t, r->old[i], true)] = -1;
    for (uint32_t i = 0; i < iv.n; i++) {
        if (tab_find(t, r->new_[i]) >= 0) goto done; /* the table is dropped */
        if (tab_put(t, r->new_[i], cols[i], err) != TL_OK) {
            tl_plan_renamed_free(r);
            tl_free(cols);
            tl_free(iv.v);
            return TL_ERR_OOM;
        }
    }
    for (uint32_t i = 0; i < iv.n; i++) names[cols[i]] = r->new_[i];
    *ok = true;
    *out = r;
    r = NULL;
done:
    tl_plan_renamed_free(r);
    tl_free(cols);
    tl_free(iv.v);
    return TL_OK;
}

/* See steps.h.  As drop runs do, the run stops before a step that would
 * fail, which then runs alone and fails as it always did. */
TlStatus tl_plan_rename_run(TlPlan *p, const TallySpec *spec, int first,
                            int *last, TlPlanId *cur, TlRenamed **ren,
                            TlError *err)
{
    const TlSchema *in = tl_plan_node(p, *cur)->schema;
    int n = in->n_fields, *order = NULL, *stamp = NULL;
    size_t cap = 16;
    const char **names = NULL;
    NameTab t = {0};
    TlStatus st = TL_OK;
    while (cap < 4 * (size_t)n) cap *= 2;
    t.key = tl_calloc(cap, sizeof *t.key);
    t.col = tl_malloc(cap * sizeof *t.col);
    t.mask = cap - 1;
    names = tl_malloc((size_t)(n ? n : 1) * sizeof *names);
    order = tl_malloc((size_t)(n ? n : 1) * sizeof *order);
    stamp = tl_malloc((size_t)(n ? n : 1) * sizeof *stamp);
    if (!t.key || !t.col || !names || !order || !stamp) {
        st = tl_error_oom(err);
        goto done;
    }
    for (int c = 0; c < n && st == TL_OK; c++) {
        names[c] = in->fields[c].name;
        order[c] = c;
        stamp[c] = -1;
        st = tab_put(&t, names[c], c, err);
    }
    for (int k = first; k <= *last && st == TL_OK; k++) {
        bool ok;
        st = rename_step(p, &spec->steps[k], k, &t, names, stamp, &ren[k], &ok, err);
        if (st == TL_OK && !ok) *last = k - 1;
    }
    if (st == TL_OK && *last >= first)
        st = tl_plan_push_passthrough(p, *cur, order, n, names, cur, err);
done:
    tl_free(t.key);
    tl_free(t.col);
    tl_free(names);
    tl_free(order);
    tl_free(stamp);
    return st;
}
