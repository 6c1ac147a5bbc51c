/*
 * table.c -- the aggregates: one row per aggregate op (agg_fam.h says
 * what a row holds; each family's file, its functions).
 */
#include "agg_fam.h"

static const TlAggFns *const rows[TL_OP_COUNT_ - TL_OP_FIRST_AGG] = {
#define ROW(op, fns) [(op) - TL_OP_FIRST_AGG] = &(fns)
    ROW(TL_OP_COUNT, tl_agg_count),
    ROW(TL_OP_COUNT_DISTINCT, tl_agg_count_distinct),
    ROW(TL_OP_SUM, tl_agg_sum),
    ROW(TL_OP_MEAN, tl_agg_mean),
    ROW(TL_OP_MIN, tl_agg_min),
    ROW(TL_OP_MAX, tl_agg_max),
    ROW(TL_OP_FIRST, tl_agg_first),
    ROW(TL_OP_LAST, tl_agg_last),
    ROW(TL_OP_MEDIAN, tl_agg_median),
    ROW(TL_OP_QUANTILE, tl_agg_quantile),
    ROW(TL_OP_STD, tl_agg_std),
    ROW(TL_OP_VAR, tl_agg_var),
    ROW(TL_OP_CORR, tl_agg_corr),
    ROW(TL_OP_COVAR, tl_agg_covar),
    ROW(TL_OP_STRING_AGG, tl_agg_string_agg),
    ROW(TL_OP_ANY, tl_agg_any),
    ROW(TL_OP_ALL, tl_agg_all),
    ROW(TL_OP_COUNT_IF, tl_agg_count_if),
    ROW(TL_OP_MODE, tl_agg_mode),
    ROW(TL_OP_ARG_MAX, tl_agg_arg_max),
    ROW(TL_OP_ARG_MIN, tl_agg_arg_min),
    ROW(TL_OP_QUANTILE_DISC, tl_agg_quantile_disc),
    ROW(TL_OP_APPROX_COUNT_DISTINCT, tl_agg_approx_count_distinct),
#undef ROW
};

const TlAggFns *tl_agg_fns(TlOp op)
{
    if (!tl_op_is_agg(op)) return NULL;
    return rows[op - TL_OP_FIRST_AGG];
}
