/*
 * op_project.c -- one output column per expression.
 *
 * A bare column reference (the common case: select, drop, rename and the
 * pass-through columns of `with` are all references) hands the child's array
 * on with a refcount bump; anything else is evaluated over the whole batch
 * by tl_eval.  When several expressions share a subexpression (one id after
 * the optimizer's hash-consing, lib/opt/cse.c), a per-batch memo computes
 * it once (TlEvalMemo, eval.h); without sharing there is no memo.
 */
#include "ops.h"

#include "eval.h"

typedef struct Project {
    TlOperator base;
    TlOperator *child;
    const TlExprArena *ea;
    TlExprId *exprs;
    int n_exprs;
    TlEvalMemo memo;
    bool use_memo;      /* some id is shared */
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
    p->memo.batch = b;
    for (int i = 0; i < p->n_exprs && st == TL_OK; i++) {
        const TlExpr *x = tl_ea_node(p->ea, p->exprs[i]);
        if (x->kind == TL_X_COL && x->col >= 0 && x->col < b->n_cols) {
            nb->cols[i] = tl_array_retain(b->cols[x->col]);
        } else {
            st = tl_eval_memo(p->ea, p->exprs[i], b, p->use_memo ? &p->memo : NULL,
                              &nb->cols[i], err);
        }
    }
    tl_eval_memo_clear(&p->memo);
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
    tl_eval_memo_free(&p->memo);
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
    if (tl_eval_memo_init(&p->memo, ea, exprs, n_exprs, err) != TL_OK) {
        tl_free(p->exprs);
        tl_free(p);
        child->free(child);
        return TL_ERR_OOM;
    }
    for (uint32_t i = 0; i < p->memo.n_ids && !p->use_memo; i++)
        p->use_memo = p->memo.shared[i] != 0;
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
