/*
 * resolve.h -- binding parsed expressions to a schema.
 *
 * tl_resolve_expr (resolve.c) checks a parsed expression against an input
 * schema: binds column names (unknown names are TL_ERR_USAGE with a caret
 * and a "did you mean"), checks arity and argument types, inserts implicit
 * casts (int64 -> float64 where an operator mixes them, date -> timestamp,
 * null literal -> the other side's type), and sets every node's type.  It
 * may push new nodes; *out is the resolved root.
 */
#ifndef TL_RESOLVE_H
#define TL_RESOLVE_H

#include "../core/core.h"
#include "../expr/expr.h"

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

/* A checked aggregate call, as execution takes it: x and y the arguments
 * evaluated per row (TL_NO_ID when none: count()), or, for count() and
 * first/last with a filter clause, y the filter's condition (the others'
 * arguments carry their filter: resolve masks them), the literal parameters
 * taken out (quantile's fraction, 0.5 when there is none; string_agg's
 * separator, in the arena's pool, NULL for the default). */
typedef struct TlAggCall {
    TlOp op;
    TlExprId x, y;
    TlType x_type, y_type, out_type;
    double q;
    const char *sep;
    uint32_t sep_len;
} TlAggCall;

/* Bind aggregate call id, which tl_resolve_expr has checked: nothing is
 * checked again. */
void tl_agg_bind(const TlExprArena *ea, TlExprId id, TlAggCall *out);

#endif
