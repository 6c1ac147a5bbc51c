/*
 * eval.h -- the seam between plans and expressions.
 *
 * tl_resolve_expr (lib/plan/resolve.c) checks a parsed expression against an
 * input schema: binds column names (unknown names are TL_ERR_USAGE with a
 * caret and a "did you mean"), checks arity and argument types, inserts
 * implicit casts (int64 -> float64 where an operator mixes them, date ->
 * timestamp, null literal -> the other side's type), and sets every node's
 * type.  It may push new nodes; *out is the resolved root.
 *
 * tl_eval (lib/exec/eval.c) evaluates a resolved, aggregate-free expression
 * over a whole batch by calling kernels once per node, never per row.
 * if/case/coalesce evaluate a branch only on the rows that reach it.  Data
 * errors (overflow, bad cast, sqrt of a negative) are TL_ERR_DATA with the
 * expression and a caret under the failing node, and the offending value.
 */
#ifndef TL_EVAL_H
#define TL_EVAL_H

#include "../core/core.h"
#include "../dsl/ast.h"

/* allow_agg: aggregate calls are allowed at the top of the expression (an
 * aggregate's argument is resolved against `input` and may not itself hold an
 * aggregate); otherwise an aggregate is a usage error. */
TlStatus tl_resolve_expr(TlExprArena *ea, TlExprId id, const TlSchema *input,
                         bool allow_agg, TlExprId *out, TlError *err);

/* The result type of aggregate op over an argument of type arg (TL_TNULL for
 * count()).  count/count_distinct -> int64; sum int64 -> int64, float64 ->
 * float64; mean/median/quantile/std/var/corr/covar -> float64; min/max/first/
 * last -> arg; string_agg -> string; any/all -> bool. */
TlType tl_agg_result_type(TlOp op, TlType arg);

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

/* Cast a whole array to type `to` (the same conversions as cast(); strings use
 * lib/core/text.h).  When try_ is true unconvertible values become null;
 * otherwise *bad_row is set to the first failing row and TL_ERR_DATA is
 * returned with no message (the caller writes it). */
TlStatus tl_cast_array(const TlArray *a, TlType to, bool try_, TlArray **out,
                       int64_t *bad_row, TlError *err);

#endif
