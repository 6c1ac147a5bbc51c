/*
 * op_project.c -- one output column per expression.
 *
 * A bare column reference (the common case: select, drop, rename and the
 * pass-through columns of `with` are all references) hands the child's array
 * on with a refcount bump; anything else is evaluated over the whole batch
 * by tl_eval.  When several expressions share a subexpression (one id after
 * the optimizer's hash-consing, lib/opt/cse.c), a per-batch memo computes
 * it once (TlEvalMemo, eval.h); without sharing there is no memo.
 *
 * An expression may read an earlier one's result (a run of `with` items,
 * tl_plan_reads_self): column n_in + j is output j.  The expressions then
 * run over the input's columns followed by the outputs made so far, in
 * order; the batch of those is built only for such a projection.
 *
 * Guards (a run of `with` items with filters between them, plan.h): guard
 * g is evaluated once the first guard_at[g] outputs are made, over the
 * input's columns and those outputs; the rows it keeps (tl_eval_filter, as
 * op_filter.c) are all that the later outputs and guards see.  Every row
 * kept: nothing moves.  None: the batch is dropped.  Some: the columns so
 * far are gathered (tl_array_take), and the memo starts again on the new
 * rows.  So each expression is evaluated on the rows the filter steps as
 * written leave it, and the run stays one node of O(outputs) expressions.
 *
 * Over a scan the projection is fused into it as a map (exec.h), so it runs
 * per morsel on the thread pool; elsewhere it is an operator.
 */
#include "ops.h"

#include "../expr/eval.h"

/* What a projection needs; read-only while batches flow, so a scan may run
 * project_map on several threads at once (each call has its own memo
 * entries; only the `shared` marks are common). */
typedef struct ProjectMap {
    const TlExprArena *ea;
    TlExprId *exprs;
    int n_exprs;
    const TlSchema *schema;
    TlEvalMemo memo;    /* template: shared marks only */
    bool use_memo;      /* some id is shared */
    int n_in;           /* the input's columns */
    bool self;          /* some expression reads an earlier one's output,
                           or there are guards */
    TlExprId *guards;   /* see the top; NULL when none */
    int32_t *guard_at;
    int n_guards;
} ProjectMap;

typedef struct Project {
    TlOperator base;
    TlOperator *child;
    ProjectMap *map;
    int64_t rows_in;    /* rows of the batches taken so far: for messages */
    /* with guards, as op_filter.c: the input batch of the batch handed out
     * last, the input rows before it and the rows handed out before it
     * (project_origin) */
    TlBatch *last;
    int64_t last_in, last_out, rows_out;
} Project;

/* Guard g over the columns so far: in (the input's n_in columns, then
 * outputs [0, made)) and nb (outputs [0, made)) keep the rows it keeps;
 * *none when it keeps none. */
static TlStatus guard(const ProjectMap *p, int g, TlBatch *in, TlBatch *nb,
                      int made, bool *none, TlError *err)
{
    uint32_t *sel = NULL;
    int64_t n_sel = 0;
    bool all = false;
    TlStatus st = tl_eval_filter(p->ea, p->guards[g], in, &sel, &n_sel, &all, err);
    *none = false;
    if (st != TL_OK || all) {
        tl_free(sel);
        return st;
    }
    *none = n_sel == 0;
    for (int c = 0; st == TL_OK && !*none && c < p->n_in + made; c++) {
        TlArray *a = in->cols[c];
        if (!a) continue;
        in->cols[c] = tl_array_take(a, sel, n_sel);
        tl_array_release(a);
        if (!in->cols[c]) st = tl_error_oom(err);
    }
    tl_free(sel);
    if (st != TL_OK || *none) return st;
    in->n_rows = nb->n_rows = n_sel;
    for (int i = 0; i < made; i++) {
        tl_array_release(nb->cols[i]);
        nb->cols[i] = tl_array_retain(in->cols[p->n_in + i]);
    }
    return TL_OK;
}

/* The map (exec.h): one output column per expression over b (consumed). */
static TlStatus project_map(void *ctx, TlBatch *b, TlBatch **out, TlError *err)
{
    const ProjectMap *p = ctx;
    TlBatch *nb, *in = b;
    TlStatus st = TL_OK;
    TlEvalMemo memo = {0};
    *out = NULL;
    nb = tl_batch_new(p->schema, p->n_exprs, b->n_rows);
    if (nb && p->self) { /* the input's columns, then the outputs so far */
        in = tl_batch_new(b->schema, p->n_in + p->n_exprs, b->n_rows);
        for (int c = 0; in && c < p->n_in && c < b->n_cols; c++)
            in->cols[c] = tl_array_retain(b->cols[c]);
    }
    if (!nb || !in) {
        tl_batch_free(nb);
        tl_batch_free(b);
        return tl_error_oom(err);
    }
    memo.batch = in;
    memo.shared = p->memo.shared;
    memo.shared_mask = p->memo.shared_mask;
    for (int i = 0, g = 0; i <= p->n_exprs && st == TL_OK; i++) {
        bool none = false;
        for (; g < p->n_guards && p->guard_at[g] == i && st == TL_OK && !none; g++) {
            int64_t rows = in->n_rows;
            st = guard(p, g, in, nb, i, &none, err);
            if (st == TL_OK && in->n_rows != rows) tl_eval_memo_clear(&memo);
        }
        if (none) { /* no row left: no batch */
            tl_batch_free(nb);
            nb = NULL;
            break;
        }
        if (i == p->n_exprs || st != TL_OK) break;
        const TlExpr *x = tl_ea_node(p->ea, p->exprs[i]);
        if (x->kind == TL_X_COL && x->col >= 0 && x->col < in->n_cols && in->cols[x->col]) {
            nb->cols[i] = tl_array_retain(in->cols[x->col]);
        } else {
            st = tl_eval_memo(p->ea, p->exprs[i], in, p->use_memo ? &memo : NULL,
                              &nb->cols[i], err);
        }
        if (st == TL_OK && in != b) in->cols[p->n_in + i] = tl_array_retain(nb->cols[i]);
    }
    tl_eval_memo_clear(&memo);
    tl_free(memo.ids);
    tl_free(memo.vals);
    tl_free(memo.scalars);
    if (in != b) tl_batch_free(in);
    tl_batch_free(b);
    if (st != TL_OK) {
        tl_batch_free(nb);
        return st;
    }
    *out = nb;
    return TL_OK;
}

/* project_map over b (consumed): the rows it keeps, for tl_nth_kept_row. */
static TlStatus project_keep(void *ctx, TlBatch *b, int64_t *kept, TlError *err)
{
    TlBatch *out = NULL;
    TlStatus st = project_map(ctx, b, &out, err);
    *kept = out ? out->n_rows : 0;
    tl_batch_free(out);
    return st;
}

/* project_map over b (consumed), its output dropped: tl_first_failing_row. */
static TlStatus project_run(void *ctx, TlBatch *b, TlError *err)
{
    TlBatch *out = NULL;
    TlStatus st = project_map(ctx, b, &out, err);
    tl_batch_free(out);
    return st;
}

static TlStatus project_next(TlOperator *op, TlBatch **out, TlError *err)
{
    Project *p = (Project *)op;
    *out = NULL;
    for (;;) { /* guards may leave a batch no row */
        TlBatch *b = NULL, *keep;
        TlStatus st;
        TL_TRY(p->child->next(p->child, &b, err));
        if (!b) return TL_OK;
        if (!(keep = tl_batch_ref(b))) {
            tl_batch_free(b);
            return tl_error_oom(err);
        }
        st = project_map(p->map, b, out, err);
        if (st == TL_ERR_DATA)
            tl_place_row(project_run, p->map, keep, p->child, p->rows_in, err);
        p->rows_in += keep->n_rows;
        if (st != TL_OK || !*out) {
            tl_batch_free(keep);
            if (st != TL_OK) return st;
            continue;
        }
        tl_batch_free(p->last);
        p->last_in = p->rows_in - keep->n_rows;
        p->last_out = p->rows_out;
        p->rows_out += (*out)->n_rows;
        p->last = p->map->n_guards ? keep : NULL;
        if (!p->last) tl_batch_free(keep);
        return TL_OK;
    }
}

/* See exec.h (TlOperator.origin): row i is the child's row i; with guards,
 * a row of the batch handed out last is found in its input batch, as
 * op_filter.c does. */
static void project_origin(TlOperator *op, int64_t row, TlPlaceVal *v, char *buf,
                           size_t cap)
{
    Project *p = (Project *)op;
    int64_t i = -1;
    if (!p->map->n_guards) {
        tl_origin(p->child, row, v, buf, cap);
        return;
    }
    buf[0] = '\0';
    if (p->last && row >= p->last_out && row < p->rows_out)
        i = tl_nth_kept_row(project_keep, p->map, p->last, row - p->last_out);
    if (i >= 0) tl_origin(p->child, p->last_in + i, v, buf, cap);
}

static void map_free(void *ctx)
{
    ProjectMap *m = ctx;
    if (!m) return;
    tl_eval_memo_free(&m->memo);
    tl_free(m->exprs);
    tl_free(m->guards);
    tl_free(m->guard_at);
    tl_free(m);
}

static void project_free(TlOperator *op)
{
    Project *p = (Project *)op;
    if (!p) return;
    tl_batch_free(p->last);
    if (p->child) p->child->free(p->child);
    map_free(p->map);
    tl_free(p);
}

/* See ops.h.  The expression ids are copied.  Over a scan the projection
 * becomes one of the scan's maps (run per morsel on the pool). */
TlStatus tl_op_project_new(TlOperator *child, const TlExprArena *ea,
                           const TlExprId *exprs, int n_exprs,
                           const TlProjectGuards *guards,
                           const TlSchema *schema, TlOperator **out,
                           TlError *err)
{
    ProjectMap *m = tl_calloc(1, sizeof *m);
    Project *p;
    TlStatus st;
    *out = NULL;
    if (m) m->exprs = tl_malloc((size_t)(n_exprs ? n_exprs : 1) * sizeof *exprs);
    if (!m || !m->exprs) goto oom;
    if (n_exprs) memcpy(m->exprs, exprs, (size_t)n_exprs * sizeof *exprs);
    if (guards && guards->n > 0) {
        m->guards = tl_malloc((size_t)guards->n * sizeof *m->guards);
        m->guard_at = tl_malloc((size_t)guards->n * sizeof *m->guard_at);
        if (!m->guards || !m->guard_at) goto oom;
        memcpy(m->guards, guards->preds, (size_t)guards->n * sizeof *m->guards);
        memcpy(m->guard_at, guards->at, (size_t)guards->n * sizeof *m->guard_at);
        m->n_guards = guards->n;
        m->self = true;
    }
    if (tl_eval_memo_init(&m->memo, ea, exprs, n_exprs, err) != TL_OK) goto oom;
    m->use_memo = m->memo.shared != NULL;
    m->ea = ea;
    m->n_exprs = n_exprs;
    m->schema = schema;
    m->n_in = child->schema->n_fields;
    for (int i = 0; i < n_exprs && !m->self; i++)
        m->self = tl_expr_reads_from(ea, exprs[i], m->n_in);
    if (child->add_map) {
        st = child->add_map(child, project_map, m, map_free, schema, err);
        if (st != TL_OK) {
            child->free(child);
            return st;
        }
        *out = child;
        return TL_OK;
    }
    if (!(p = tl_calloc(1, sizeof *p))) goto oom;
    p->base.next = project_next;
    p->base.free = project_free;
    p->base.origin = project_origin;
    p->base.schema = schema;
    p->base.stats = child->stats;
    p->base.ctx = child->ctx;
    p->child = child;
    p->map = m;
    *out = &p->base;
    return TL_OK;
oom:
    map_free(m);
    child->free(child);
    return tl_error_oom(err);
}
