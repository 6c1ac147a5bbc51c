/*
 * test_agg_table.c -- every aggregate op has its type rule (lib/expr) and
 * its row of functions (lib/exec/agg/table.c), and the rows say what they
 * are able to do consistently.
 */
#include "../../lib/exec/agg/agg_fam.h"
#include "tl_test.h"

TL_TEST(every_aggregate_has_a_rule_and_a_row)
{
    for (int op = TL_OP_FIRST_AGG; op < TL_OP_COUNT_; op++) {
        const TlAggRule *r = tl_agg_rule((TlOp)op);
        const TlAggFns *f = tl_agg_fns((TlOp)op);
        CHECK(r != NULL);
        CHECK(f != NULL && f->accepts && f->update && f->results);
        /* merging a subset needs merging */
        CHECK(f == NULL || !f->merge_some || f->merge);
        CHECK(tl_op_info((TlOp)op)->is_function);
    }
    CHECK(tl_agg_rule(TL_OP_ADD) == NULL && tl_agg_fns(TL_OP_ADD) == NULL);
}

TL_TEST(result_types_follow_the_rules)
{
    CHECK_EQ_INT(tl_agg_rule_result(TL_OP_SUM, TL_TFLOAT64, TL_TNULL), TL_TFLOAT64);
    CHECK_EQ_INT(tl_agg_rule_result(TL_OP_SUM, TL_TINT64, TL_TNULL), TL_TINT64);
    CHECK_EQ_INT(tl_agg_rule_result(TL_OP_MAX, TL_TSTRING, TL_TNULL), TL_TSTRING);
    CHECK_EQ_INT(tl_agg_rule_result(TL_OP_STRING_AGG, TL_TINT64, TL_TSTRING), TL_TSTRING);
    CHECK_EQ_INT(tl_agg_rule_result(TL_OP_ALL, TL_TBOOL, TL_TNULL), TL_TBOOL);
    /* a mean or an interpolation of dates is a timestamp (DuckDB's) */
    CHECK_EQ_INT(tl_agg_rule_result(TL_OP_MEDIAN, TL_TDATE, TL_TNULL), TL_TTIMESTAMP);
    CHECK_EQ_INT(tl_agg_rule_result(TL_OP_QUANTILE, TL_TTIMESTAMPTZ, TL_TFLOAT64),
                 TL_TTIMESTAMPTZ);
    CHECK_EQ_INT(tl_agg_rule_result(TL_OP_MEAN, TL_TTIMESTAMP, TL_TNULL), TL_TTIMESTAMP);
    CHECK_EQ_INT(tl_agg_rule_result(TL_OP_MEAN, TL_TINT64, TL_TNULL), TL_TFLOAT64);
    CHECK_EQ_INT(tl_agg_rule_result(TL_OP_MEDIAN, TL_TNULL, TL_TNULL), TL_TFLOAT64);
}

int main(void)
{
    TL_RUN(every_aggregate_has_a_rule_and_a_row);
    TL_RUN(result_types_follow_the_rules);
    return tl_test_summary(__FILE__);
}
