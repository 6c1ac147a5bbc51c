/*
 * op_project.c -- one output column per expression.
 *
 * A bare column reference (the common case: select, drop, rename and the
 * pass-through columns of `with` are all references) hands the child's array
 * on with a refcount bump; anything else is evaluated over the whole batch
 * by tl_eval.
 */
#include "ops.h"

#include "eval.h"

typedef struct Project {
    TlOperator base;
    TlOperator *child;
    const TlExprArena *ea;
    TlExprId *exprs;
    int n_exprs;
} Project;

static TlStatus project_next(TlOperator *op, TlBatch **out, TlError *err)
{
    Project *p = (Project *)op;
    TlBatch *b = NULL, *nb;
    TlStatus st = TL_OK;
    *out = NULL;
    TL_TRY(p->child->next(p->child, &b, err));
    if (!b) return TL_OK;
    nb = tl_batch_new(op->schema, p->n_exprs, b->n_rows);
    if (!nb) {
        tl_batch_free(b);
        return tl_error_oom(err);
    }
    for (int i = 0; i < p->n_exprs && st == TL_OK; i++) {
        const TlExpr *x = tl_ea_node(p->ea, p->exprs[i]);
        if (x->kind == TL_X_COL && x->col >= 0 && x->col < b->n_cols) {
            nb->cols[i] = tl_array_retain(b->cols[x->col]);
        } else {
            st = tl_eval(p->ea, p->exprs[i], b, &nb->cols[i], err);
        }
    }
    tl_batch_free(b);
    if (st != TL_OK) {
        tl_batch_free(nb);
        return st;
    }
    *out = nb;
    return TL_OK;
}

static void project_free(TlOperator *op)
{
    Project *p = (Project *)op;
    if (!p) return;
    if (p->child) p->child->free(p->child);
    tl_free(p->exprs);
    tl_free(p);
}

/* See ops.h.  The expression ids are copied. */
TlStatus tl_op_project_new(TlOperator *child, const TlExprArena *ea,
                           const TlExprId *exprs, int n_exprs,
                           const TlSchema *schema, TlOperator **out,
                           TlError *err)
{
    Project *p = tl_calloc(1, sizeof *p);
    *out = NULL;
    if (p) p->exprs = tl_malloc((size_t)(n_exprs ? n_exprs : 1) * sizeof *exprs);
    if (!p || !p->exprs) {
        tl_free(p);
        child->free(child);
        return tl_error_oom(err);
    }
    if (n_exprs) memcpy(p->exprs, exprs, (size_t)n_exprs * sizeof *exprs);
    p->base.next = project_next;
    p->base.free = project_free;
    p->base.schema = schema;
    p->base.stats = child->stats;
    p->child = child;
    p->ea = ea;
    p->n_exprs = n_exprs;
    *out = &p->base;
    return TL_OK;
}
