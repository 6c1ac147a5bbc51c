/*
 * eval.h -- evaluating resolved expressions over batches.
 *
 * tl_eval (lib/expr/eval.c) evaluates a resolved, aggregate-free expression
 * over a whole batch by calling kernels once per node, never per row.
 * if/case/coalesce evaluate a branch only on the rows that reach it.  Data
 * errors (overflow, bad cast, sqrt of a negative) are TL_ERR_DATA with the
 * expression and a caret under the failing node, and the offending value.
 */
#ifndef TL_EVAL_H
#define TL_EVAL_H

#include "../core/core.h"
#include "expr.h"

/* Set used[c] for every input column c < n_cols that expression id reads
 * (the scan's late materialization and sub-batch evaluation). */
void tl_expr_mark_cols(const TlExprArena *ea, TlExprId id, bool *used, int n_cols);
/* Whether expression id reads some column >= col (a projection's
 * expression reading an earlier one's output, tl_plan_reads_self). */
bool tl_expr_reads_from(const TlExprArena *ea, TlExprId id, int col);

/* Evaluate resolved expression id over batch `in`; *out is an owned array of
 * in->n_rows values of the node's type. */
TlStatus tl_eval(const TlExprArena *ea, TlExprId id, const TlBatch *in,
                 TlArray **out, TlError *err);

/* Evaluate a predicate and return the selected row indexes (true only; null
 * and false drop).  *sel is tl_malloc'd (NULL when n_sel is 0 or when every
 * row is selected: then *all = true). */
TlStatus tl_eval_filter(const TlExprArena *ea, TlExprId id, const TlBatch *in,
                        uint32_t **sel, int64_t *n_sel, bool *all, TlError *err);

/* A per-batch cache of subexpression results keyed by expression id, for
 * common subexpressions (the optimizer hash-conses identical subtrees of one
 * projection into one id, lib/opt/cse.c).  Only ids marked in `shared` are
 * cached, and only when evaluated over the whole batch `batch` (never over
 * the sub-batch of a lazy branch).  Owner: the operator; tl_eval_memo_clear
 * after each batch releases the cached arrays. */
typedef struct TlEvalMemo {
    const TlBatch *batch;   /* entries belong to this batch */
    uint32_t *shared;       /* the ids to cache: an open-addressing set
                               (UINT32_MAX marks a free slot) of
                               shared_mask + 1 slots, tl_malloc'd; NULL when
                               no id is shared */
    uint32_t shared_mask;
    TlExprId *ids;          /* cached entries */
    TlArray **vals;
    bool *scalars;
    uint32_t n, cap;
} TlEvalMemo;

/* Mark in memo (zeroed by the caller) every non-leaf id reached more than
 * once from exprs[0..n).  Time and memory are linear in the number of nodes
 * reached (not in the size of the arena, which holds every expression of the
 * plan), and the walk keeps its own stack, so any tree height is fine. */
TlStatus tl_eval_memo_init(TlEvalMemo *memo, const TlExprArena *ea,
                           const TlExprId *exprs, int n, TlError *err);
void tl_eval_memo_clear(TlEvalMemo *memo);  /* drop the cached arrays */
void tl_eval_memo_free(TlEvalMemo *memo);   /* NULL-safe */
/* Whether memo caches id. */
bool tl_eval_memo_shared(const TlEvalMemo *memo, TlExprId id);
/* tl_eval with the memo (memo->batch must be `in` for it to apply). */
TlStatus tl_eval_memo(const TlExprArena *ea, TlExprId id, const TlBatch *in,
                      TlEvalMemo *memo, TlArray **out, TlError *err);

#endif
