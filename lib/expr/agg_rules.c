/*
 * agg_rules.c -- the type rule of each aggregate: what each argument may
 * be and the result type (expr.h, TlAggRule).  Name resolution
 * (lib/plan/resolve.c) checks a call against its rule once, with a caret
 * under the argument at fault, and the plan hands execution the bound
 * call (lib/plan/resolve.h, tl_agg_bind); execution's table of functions
 * (lib/exec/agg/) never checks a user's call again.
 */
#include "expr.h"

#define RULE(op, a0, a1, res) [(op) - TL_OP_FIRST_AGG] = {{a0, a1}, res}

static const TlAggRule rules[TL_OP_COUNT_ - TL_OP_FIRST_AGG] = {
    RULE(TL_OP_COUNT, TL_AA_ANY, TL_AA_NONE, TL_AR_INT64),
    RULE(TL_OP_COUNT_DISTINCT, TL_AA_ANY, TL_AA_NONE, TL_AR_INT64),
    RULE(TL_OP_SUM, TL_AA_NUM, TL_AA_NONE, TL_AR_SUM),
    RULE(TL_OP_MEAN, TL_AA_ORDERED, TL_AA_NONE, TL_AR_BETWEEN),
    RULE(TL_OP_MIN, TL_AA_ANY, TL_AA_NONE, TL_AR_ARG),
    RULE(TL_OP_MAX, TL_AA_ANY, TL_AA_NONE, TL_AR_ARG),
    RULE(TL_OP_FIRST, TL_AA_ANY, TL_AA_NONE, TL_AR_ARG),
    RULE(TL_OP_LAST, TL_AA_ANY, TL_AA_NONE, TL_AR_ARG),
    RULE(TL_OP_MEDIAN, TL_AA_ORDERED, TL_AA_NONE, TL_AR_BETWEEN),
    RULE(TL_OP_QUANTILE, TL_AA_ORDERED, TL_AA_FRACTION, TL_AR_BETWEEN),
    RULE(TL_OP_STD, TL_AA_NUM, TL_AA_NONE, TL_AR_FLOAT64),
    RULE(TL_OP_VAR, TL_AA_NUM, TL_AA_NONE, TL_AR_FLOAT64),
    RULE(TL_OP_CORR, TL_AA_NUMS, TL_AA_NUMS, TL_AR_FLOAT64),
    RULE(TL_OP_COVAR, TL_AA_NUMS, TL_AA_NUMS, TL_AR_FLOAT64),
    RULE(TL_OP_STRING_AGG, TL_AA_STRING, TL_AA_SEPARATOR, TL_AR_STRING),
    RULE(TL_OP_ANY, TL_AA_BOOL, TL_AA_NONE, TL_AR_BOOL),
    RULE(TL_OP_ALL, TL_AA_BOOL, TL_AA_NONE, TL_AR_BOOL),
    RULE(TL_OP_COUNT_IF, TL_AA_BOOL, TL_AA_NONE, TL_AR_INT64),
    RULE(TL_OP_MODE, TL_AA_ANY, TL_AA_NONE, TL_AR_ARG),
    RULE(TL_OP_ARG_MAX, TL_AA_ANY, TL_AA_ANY, TL_AR_ARG),
    RULE(TL_OP_ARG_MIN, TL_AA_ANY, TL_AA_ANY, TL_AR_ARG),
    RULE(TL_OP_QUANTILE_DISC, TL_AA_ORDERED, TL_AA_FRACTION, TL_AR_ARG),
    RULE(TL_OP_APPROX_COUNT_DISTINCT, TL_AA_ANY, TL_AA_NONE, TL_AR_INT64),
};

/* See expr.h. */
const TlAggRule *tl_agg_rule(TlOp op)
{
    return tl_op_is_agg(op) ? &rules[op - TL_OP_FIRST_AGG] : NULL;
}

/* See expr.h. */
TlType tl_agg_rule_result(TlOp op, TlType arg0, TlType arg1)
{
    const TlAggRule *r = tl_agg_rule(op);
    if (!r) return TL_TNULL;
    switch ((TlAggResult)r->result) {
    case TL_AR_INT64: return TL_TINT64;
    case TL_AR_FLOAT64: return TL_TFLOAT64;
    case TL_AR_SUM: return arg0 == TL_TFLOAT64 ? TL_TFLOAT64 : TL_TINT64;
    case TL_AR_ARG: return arg0;
    case TL_AR_ARG1: return arg1;
    case TL_AR_STRING: return TL_TSTRING;
    case TL_AR_BOOL: return TL_TBOOL;
    case TL_AR_BETWEEN:
        return arg0 == TL_TDATE ? TL_TTIMESTAMP
               : arg0 == TL_TTIMESTAMP || arg0 == TL_TTIMESTAMPTZ ? arg0 : TL_TFLOAT64;
    }
    return TL_TNULL;
}
