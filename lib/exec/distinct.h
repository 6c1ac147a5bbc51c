/*
 * distinct.h -- the engine shared by distinct and limit-by (op_distinct.c).
 */
#ifndef TL_EXEC_DISTINCT_H
#define TL_EXEC_DISTINCT_H

#include "exec.h"

/* Stream the first `limit` rows (limit >= 0) of each group of columns
 * by[0..n_by) (n_by 0 = all columns), in input order.  Takes ownership of
 * child, also on failure. */
TlStatus tl_op_first_rows_new(TlOperator *child, int64_t limit, const int *by,
                              int n_by, TlOperator **out, TlError *err);

#endif
