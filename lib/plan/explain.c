/*
 * explain.c -- the plan as text, for `tally explain` and for tests.
 *
 * One line per node, the root first, each child indented two more spaces
 * (down to MAX_INDENT spaces; deeper lines keep that indent and start with
 * their level, `[65] ...`, so a chain of n steps prints in O(n) bytes, not
 * O(n^2)):
 *
 *   logical plan:
 *     limit 10
 *       sort total desc
 *         aggregate by region: total = sum(amount), n = count()
 *           filter amount > 100 and region != 'test'
 *             scan sales.csv
 *   optimized plan:
 *     sort total desc limit 10
 *       aggregate by region: total = sum(amount), n = count()
 *         filter amount > 100 and region != 'test'
 *           scan sales.csv columns region, amount
 *   output: region string, total int64, n int64
 *
 * Expressions are printed by tl_expr_print (canonical form), names quoted
 * only when they are not plain identifiers.  Nothing here prints an origin
 * (a flag name or a JSON path), so the flag form and the JSON form of one
 * pipeline print the same text.
 */
#include "plan.h"
#include "../expr/eval.h" /* tl_expr_mark_cols */
#include "../core/text.h"

#include <stdio.h>
#include <string.h>

typedef struct Out {
    char **buf;
    size_t *len, *cap;
    TlError *err;
    TlStatus st;
} Out;

static void put(Out *o, const char *s, size_t n)
{
    if (o->st != TL_OK) return;
    if (*o->len + n + 1 > *o->cap) {
        size_t nc = *o->cap ? *o->cap : 256;
        while (nc < *o->len + n + 1) nc *= 2;
        char *b = tl_realloc(*o->buf, nc);
        if (!b) { o->st = tl_error_oom(o->err); return; }
        *o->buf = b;
        *o->cap = nc;
    }
    memcpy(*o->buf + *o->len, s, n);
    *o->len += n;
    (*o->buf)[*o->len] = '\0';
}

static void puts_(Out *o, const char *s) { put(o, s, strlen(s)); }

static void put_i64(Out *o, int64_t v)
{
    char b[32];
    int n = snprintf(b, sizeof b, "%lld", (long long)v);
    put(o, b, (size_t)n);
}

/* A name as typed in an expression: bare when it is a plain identifier,
 * else double-quoted with "" for a quote (as tl_expr_print does). */
static void put_name(Out *o, const char *name)
{
    if (tl_name_is_plain(name, strlen(name))) { puts_(o, name); return; }
    put(o, "\"", 1);
    for (const char *c = name; *c; c++) {
        if (*c == '"') put(o, "\"", 1);
        put(o, c, 1);
    }
    put(o, "\"", 1);
}

static void put_expr(Out *o, const TlPlan *p, TlExprId id)
{
    char small[256];
    size_t n = tl_expr_print(&p->ea, id, small, sizeof small);
    if (n < sizeof small) { put(o, small, n); return; }
    char *big = tl_malloc(n + 1);
    if (!big) { if (o->st == TL_OK) o->st = tl_error_oom(o->err); return; }
    tl_expr_print(&p->ea, id, big, n + 1);
    put(o, big, n);
    tl_free(big);
}

static void put_cols(Out *o, const TlPlan *p, const TlPlanNode *n,
                     const TlSchema *s)
{
    for (uint32_t i = 0; i < n->n_cols; i++) {
        if (i) puts_(o, ", ");
        put_name(o, s->fields[tl_plan_int(p, n->cols, i)].name);
    }
}

static void node_line(Out *o, const TlPlan *p, const TlPlanNode *n)
{
    const TlSchema *in = n->child != TL_NO_ID ? tl_plan_node(p, n->child)->schema
                                              : NULL;
    switch ((TlPlanKind)n->kind) {
    case TL_PLAN_SCAN:
        puts_(o, "scan ");
        for (uint32_t i = 0; i < n->n_in; i++) {
            if (i) puts_(o, ", ");
            puts_(o, p->inputs[n->in0 + i].display);
        }
        if (n->projected) {
            puts_(o, " columns ");
            if (n->schema->n_fields == 0) puts_(o, "(none)");
            for (int i = 0; i < n->schema->n_fields; i++) {
                if (i) puts_(o, ", ");
                put_name(o, n->schema->fields[i].name);
            }
        }
        break;
    case TL_PLAN_FILTER:
        puts_(o, "filter ");
        put_expr(o, p, tl_plan_expr(p, n->exprs, 0));
        break;
    case TL_PLAN_PROJECT:
        puts_(o, "project ");
        for (uint32_t i = 0, g = 0; i <= n->n_exprs; i++) {
            /* a guard between the outputs, where the run's filter was */
            for (; g < n->n_guards && (uint32_t)tl_plan_int(p, n->guard_at, g) == i; g++) {
                if (i || g) puts_(o, ", ");
                puts_(o, "filter ");
                put_expr(o, p, tl_plan_expr(p, n->guards, g));
            }
            if (i == n->n_exprs) break;
            TlExprId e = tl_plan_expr(p, n->exprs, i);
            const TlExpr *x = tl_ea_node(&p->ea, e);
            const char *name = n->schema->fields[i].name;
            if (i || g) puts_(o, ", ");
            if (x->kind == TL_X_COL && x->name && strcmp(x->name, name) == 0) {
                put_name(o, name);
            } else {
                put_expr(o, p, e);
                puts_(o, " as ");
                put_name(o, name);
            }
        }
        break;
    case TL_PLAN_AGGREGATE:
        puts_(o, "aggregate");
        if (n->n_exprs) puts_(o, " by ");
        for (uint32_t i = 0; i < n->n_exprs; i++) {
            TlExprId e = tl_plan_expr(p, n->exprs, i);
            const TlExpr *x = tl_ea_node(&p->ea, e);
            const char *name = n->schema->fields[i].name;
            if (i) puts_(o, ", ");
            put_expr(o, p, e);
            /* a key's name, as a project's, unless it is its own column */
            if (x->kind != TL_X_COL || !x->name || strcmp(x->name, name) != 0) {
                puts_(o, " as ");
                put_name(o, name);
            }
        }
        if (n->n_aggs) puts_(o, ": ");
        for (uint32_t i = 0; i < n->n_aggs; i++) {
            if (i) puts_(o, ", ");
            put_name(o, n->schema->fields[n->n_exprs + i].name);
            puts_(o, " = ");
            put_expr(o, p, tl_plan_expr(p, n->aggs, i));
        }
        break;
    case TL_PLAN_SORT:
        puts_(o, "sort ");
        for (uint32_t i = 0; i < n->n_exprs; i++) {
            int32_t f = tl_plan_int(p, n->flags, i);
            if (i) puts_(o, ", ");
            put_expr(o, p, tl_plan_expr(p, n->exprs, i));
            if (f & TL_SORT_DESC) puts_(o, " desc");
            if (f & TL_SORT_NULLS_FIRST) puts_(o, " nulls first");
        }
        if (n->limit >= 0) {
            puts_(o, " limit ");
            put_i64(o, n->limit);
        }
        if (n->n_by > 0) {
            TlPlanNode bn = *n;
            bn.cols = n->by;
            bn.n_cols = n->n_by;
            puts_(o, " by ");
            put_cols(o, p, &bn, in);
        }
        break;
    case TL_PLAN_LIMIT:
        puts_(o, n->tail ? "tail " : n->limit >= 0 ? "limit " : "offset ");
        put_i64(o, n->limit >= 0 ? n->limit : n->offset);
        if (n->limit >= 0 && n->offset > 0) {
            puts_(o, " offset ");
            put_i64(o, n->offset);
        }
        break;
    case TL_PLAN_SAMPLE: {
        char buf[TL_FMT_MAX + 1];
        puts_(o, "sample ");
        if (n->pct >= 0 && (double)(int64_t)n->pct == n->pct) {
            put_i64(o, (int64_t)n->pct);
            puts_(o, "%");
        } else if (n->pct >= 0) {
            buf[tl_fmt_f64(n->pct, buf)] = '\0'; /* shortest: 33.3, not 33.29999... */
            puts_(o, buf);
            puts_(o, "%");
        } else {
            put_i64(o, n->limit);
        }
        puts_(o, " seed ");
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)n->seed);
        puts_(o, buf);
        break;
    }
    case TL_PLAN_ROW_NUMBER:
        puts_(o, "row number ");
        put_name(o, n->schema->fields[n->schema->n_fields - 1].name);
        break;
    case TL_PLAN_LIMIT_BY:
        puts_(o, "limit ");
        put_i64(o, n->limit);
        puts_(o, " by ");
        put_cols(o, p, n, in);
        break;
    case TL_PLAN_DESCRIBE:
        puts_(o, "describe");
        break;
    case TL_PLAN_DISTINCT:
        puts_(o, "distinct");
        if (n->n_cols) puts_(o, " ");
        put_cols(o, p, n, in);
        break;
    case TL_PLAN_JOIN: {
        static const char *const hows[] = {"inner", "left", "right", "full",
                                           "semi", "anti"};
        const TlSchema *rs = tl_plan_node(p, n->right)->schema;
        puts_(o, "join ");
        puts_(o, n->how < 6 ? hows[n->how] : "?");
        puts_(o, " on ");
        for (uint32_t i = 0; i < n->n_cols; i++) {
            const char *ln = in->fields[tl_plan_int(p, n->cols, i)].name;
            const char *rn = rs->fields[tl_plan_int(p, n->rkeys, i)].name;
            if (i) puts_(o, ", ");
            put_name(o, ln);
            if (strcmp(ln, rn) != 0) {
                puts_(o, "=");
                put_name(o, rn);
            }
        }
        break;
    }
    }
}

/* A filter right above a scan whose readers can convert columns late runs
 * in the reader (lib/exec/op_scan.c: the predicate's columns are converted
 * first, the others only for the rows it keeps); say which, after the scan
 * line.  Nothing when the predicate reads every column the scan reads. */
static void late_note(Out *o, const TlPlan *p, const TlPlanNode *scan,
                      const TlPlanNode *filter)
{
    const TlSchema *s = scan->schema;
    bool *need, rest = false, first = true;
    if (s->n_fields == 0) return;
    for (uint32_t i = 0; i < scan->n_in; i++)
        if (!p->inputs[scan->in0 + i].can_late) return;
    need = tl_calloc((size_t)s->n_fields, sizeof *need);
    if (!need) { if (o->st == TL_OK) o->st = tl_error_oom(o->err); return; }
    tl_expr_mark_cols(&p->ea, tl_plan_expr(p, filter->exprs, 0), need, s->n_fields);
    for (int i = 0; i < s->n_fields; i++) rest |= !need[i];
    if (rest) {
        puts_(o, " (");
        for (int i = 0; i < s->n_fields; i++) {
            if (!need[i]) continue;
            if (!first) puts_(o, ", ");
            put_name(o, s->fields[i].name);
            first = false;
        }
        puts_(o, first ? "columns only for kept rows)" : " first, the rest only for kept rows)");
    }
    tl_free(need);
}

#define MAX_INDENT 128

/* The indent of a line `indent` spaces deep (see the top of the file). */
static void put_indent(Out *o, int indent)
{
    static const char spaces[MAX_INDENT + 1] =
        "                                                                "
        "                                                                ";
    put(o, spaces, (size_t)(indent < MAX_INDENT ? indent : MAX_INDENT));
    if (indent > MAX_INDENT) {
        char b[32];
        int k = snprintf(b, sizeof b, "[%d] ", indent / 2);
        put(o, b, (size_t)k);
    }
}

static void tree(Out *o, const TlPlan *p, TlPlanId id, int indent, bool opt)
{
    const TlPlanNode *parent = NULL;
    while (id != TL_NO_ID && o->st == TL_OK) {
        const TlPlanNode *n = tl_plan_node(p, id);
        put_indent(o, indent);
        node_line(o, p, n);
        if (opt && n->kind == TL_PLAN_SCAN && parent && parent->kind == TL_PLAN_FILTER)
            late_note(o, p, n, parent);
        put(o, "\n", 1);
        if (n->right != TL_NO_ID) tree(o, p, n->right, indent + 2, opt);
        parent = n;
        id = n->child;
        indent += 2;
    }
}

/* See plan.h. */
TlStatus tl_plan_print_tree(const TlPlan *p, TlPlanId root, int indent,
                            char **buf, size_t *len, size_t *cap, TlError *err)
{
    Out o = {buf, len, cap, err, TL_OK};
    tree(&o, p, root, indent, false);
    return o.st;
}

/* See plan.h. */
TlStatus tl_plan_explain(const TlPlan *p, char **out, size_t *len, TlError *err)
{
    char *buf = NULL;
    size_t n = 0, cap = 0;
    Out o = {&buf, &n, &cap, err, TL_OK};
    TlPlanId opt = p->opt_root != TL_NO_ID ? p->opt_root : p->root;
    const TlSchema *s = tl_plan_node(p, opt)->schema;

    puts_(&o, "logical plan:\n");
    tree(&o, p, p->root, 2, false);
    puts_(&o, "optimized plan:\n");
    tree(&o, p, opt, 2, true);
    puts_(&o, "output: ");
    for (int i = 0; i < s->n_fields; i++) {
        if (i) puts_(&o, ", ");
        put_name(&o, s->fields[i].name);
        puts_(&o, " ");
        puts_(&o, tl_type_name(s->fields[i].type));
    }
    puts_(&o, "\n");
    if (o.st != TL_OK) {
        tl_free(buf);
        return o.st;
    }
    *out = buf;
    *len = n;
    return TL_OK;
}
