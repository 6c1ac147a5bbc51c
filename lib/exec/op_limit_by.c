/*
 * op_limit_by.c -- the first N rows of each group (`--head N --by LIST`).
 *
 * Streaming, in input order: the grouper of op_distinct.c numbers the
 * groups of the `by` columns and a per-group counter lets a row through
 * while its group has had fewer than N rows.  After `--sort -v` this is the
 * top N per group.  `--head 0 --by k` reads nothing.
 */
#include "distinct.h"

/* First `limit` rows of each group of `by` columns (see exec.h).  Takes
 * ownership of child, also on failure. */
TlStatus tl_op_limit_by_new(TlOperator *child, int64_t limit, const int *by,
                            int n_by, TlOperator **out, TlError *err)
{
    return tl_op_first_rows_new(child, limit, by, n_by, out, err);
}
