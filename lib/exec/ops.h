/*
 * ops.h -- the streaming operators (scan, filter, project, limit) and the
 * builder that turns a plan into a tree of operators.
 *
 * Same contract as exec.h: next() hands out an owned batch or NULL at the
 * end; free() releases the operator and its child.  Every constructor here
 * takes ownership of `child`, also when it fails (the child is then freed).
 * Schemas, the expression arena and readers are borrowed from the plan and
 * must outlive the operators.
 */
#ifndef TL_EXEC_OPS_H
#define TL_EXEC_OPS_H

#include "../../formats/format.h"
#include "../plan/plan.h"
#include "exec.h"

/* One input of a scan.  reader: open and already projected (the plan's,
 * borrowed), or NULL: the scan opens path (read, hints) when it reaches the
 * input, checks that its columns are still `cols` (the planned ones; else
 * the file changed), projects it to proj[0, n_proj) and closes it once
 * read.  pos: per output column, the column's index in the reader's
 * batches or -1 (the input lacks it: nulls).  map: per column of the full
 * scan (before the optimizer's projection), the reader's column or -1,
 * for the converted counters.  Everything is borrowed. */
typedef struct TlScanInput {
    TlReader *reader;
    const char *path;
    const TlReadOptions *read;
    TlTypeHints *hints;
    const TlSchema *cols;
    const int *proj;
    int n_proj;
    const int *pos;
    const int *map;
} TlScanInput;

/* Read the inputs one after another as batches of `schema`.  A column the
 * reader delivers as all-null type (no value seen) becomes an all-null array
 * of the schema's type.  Counts rows, bytes and batches in stats, and into
 * converted[0, n_conv) (NULL: not counted) the fields converted per column
 * of the full scan.  The inputs array is copied. */
TlStatus tl_op_scan_new(const TlSchema *schema, const TlScanInput *inputs,
                        int n_inputs, TlExecStats *stats, int64_t *converted,
                        int n_conv, TlOperator **out, TlError *err);

/* Keep the rows where the resolved predicate is true. */
TlStatus tl_op_filter_new(TlOperator *child, const TlExprArena *ea,
                          TlExprId pred, const TlSchema *schema,
                          TlOperator **out, TlError *err);

/* A project node's guards (plan.h, TlPlanNode.guards): preds[g] keeps
 * the rows where it is true once the first at[g] outputs are made. */
typedef struct TlProjectGuards {
    const TlExprId *preds;
    const int32_t *at;
    int n;
} TlProjectGuards;

/* One output column per resolved expression (ids copied); bare column
 * references pass the child's array on.  guards may be NULL. */
TlStatus tl_op_project_new(TlOperator *child, const TlExprArena *ea,
                           const TlExprId *exprs, int n_exprs,
                           const TlProjectGuards *guards,
                           const TlSchema *schema, TlOperator **out,
                           TlError *err);

/* Rows offset+1 .. offset+limit (limit -1: all after the offset); stops
 * pulling from the child once it has them. */
TlStatus tl_op_limit_new(TlOperator *child, int64_t offset, int64_t limit,
                         TlOperator **out, TlError *err);

/* The last `limit` rows, in order (op_rows.c): the child is read to its end
 * holding only the batches that may still contain them. */
TlStatus tl_op_tail_new(TlOperator *child, int64_t limit, TlOperator **out,
                        TlError *err);

/* A sample (op_rows.c): `rows` rows (pct < 0) or pct percent of the rows,
 * chosen by a hash of (seed, row position), in input order. */
TlStatus tl_op_sample_new(TlOperator *child, int64_t rows, double pct,
                          uint64_t seed, TlOperator **out, TlError *err);

/* The child's columns and an int64 column 1, 2, ... in input order
 * (op_rows.c); schema: the plan node's. */
TlStatus tl_op_row_number_new(TlOperator *child, const TlSchema *schema,
                              TlOperator **out, TlError *err);

/* Hash join (op_join.c): `how` is a TlJoinHow; left keys lk and right
 * keys rk (n_keys column indexes into each side's schema); rcols: the right
 * columns of the output, after every left column (semi, anti: none).  The
 * build side is read whole first: the right one, or the left one when
 * build_left (then the right streams); the output order is the same.
 * Takes ownership of both children, also on failure; lists are borrowed. */
TlStatus tl_op_join_new(TlOperator *left, TlOperator *right, int how,
                        const int *lk, const int *rk, int n_keys,
                        const int *rcols, int n_rcols, bool build_left,
                        const TlSchema *schema, TlOperator **out, TlError *err);

/* Build the operators of the plan rooted at `root` (a node of p): readers
 * are projected as the scan node says.  stats is shared by every operator.
 * *out owns the whole tree. */
TlStatus tl_exec_build(TlPlan *p, TlPlanId root, TlExecStats *stats,
                       TlOperator **out, TlError *err);

#endif
