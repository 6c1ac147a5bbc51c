/*
 * agg.h -- aggregate states over group ids (stage two of group-by).
 *
 * One TlAgg holds the state of one aggregate call for every group.  After
 * the grouper has mapped a batch's rows to group ids, each aggregate updates
 * its states from (ids, argument arrays) in one typed pass; tl_agg_finish
 * turns the states into one result array in group id order.
 *
 * Semantics are DuckDB's (man/tally.1, "Aggregates"): nulls are skipped except by
 * first/last; count() counts rows; sum/mean/min/max/... of no values are
 * null; sum over int64 is exact (int128) and fails only if the result
 * leaves int64; float sums are exact and rounded once, means divide the
 * exact sum (kernels/xsum.h); std/var/covar are the sample versions,
 * computed with corr from exact sums of values and products; median and
 * quantile interpolate (quantile_cont); floats order NaN last and -0.0 = 0.0.
 *
 * Ownership: argument arrays are borrowed for the call; the finish result is
 * owned by the caller.
 */
#ifndef TL_AGG_H
#define TL_AGG_H

#include "../core/core.h"
#include "../core/ctx.h"
#include "../expr/expr.h"

typedef struct TlAgg TlAgg;

typedef struct TlAggSpec {
    TlOp op;          /* an aggregate op (tl_op_is_agg) */
    TlType x_type;    /* first argument; TL_TNULL for count() (no argument) */
    TlType y_type;    /* corr/covar: second argument; otherwise unused */
    TlType out_type;  /* the result type (the output schema's) */
    double q;         /* quantile: 0..1 (median: 0.5) */
    const char *sep;  /* string_agg separator (copied); NULL = "," */
    size_t sep_len;
    bool no_arg;      /* count(): count rows, x is NULL */
    bool select;      /* median/quantile: sealing leaves each group's values
                         unsorted and every quantile is found by selection
                         (linear time; for a few quantiles of big groups,
                         tl_agg_quantile_at); the same values either way */
    const TlCtx *ctx; /* the run's (count distinct's grouper); NULL: none */
} TlAggSpec;

/* A new aggregate with no groups yet.  TL_ERR_USAGE when the op does not
 * accept the argument type (resolve should have caught it), TL_ERR_OOM. */
TlStatus tl_agg_new(const TlAggSpec *spec, TlAgg **out, TlError *err);

/* Update the states of groups ids[0..n) from rows [0, n) of x (and y for
 * corr/covar); x is NULL for count().  n_groups: the number of groups so far
 * (every id is below it).  TL_ERR_OOM (or TL_ERR_DATA past 2^32 groups). */
TlStatus tl_agg_update(TlAgg *a, const uint32_t *ids, int64_t n,
                       uint32_t n_groups, const TlArray *x, const TlArray *y,
                       TlError *err);

/* Partial states (morsel parallelism, lib/exec/op_agg.c): an aggregate
 * made with the same spec and updated over one batch with the batch's own
 * local group ids is a partial.  tl_agg_merge folds partial p's groups
 * [0, n_src) into a's groups map[0..n_src) (every id below n_groups), as
 * if p's rows came after every row a has seen.  Merging the partials of
 * consecutive batches in input order gives exactly the row-by-row results
 * for counts, integer sums and means, min, max, first, last (null
 * included), any, all, string_agg, median and quantile, and (exact sums
 * merging exactly) float sums, means, std, var, corr and covar.
 * count_distinct does not merge (tl_agg_mergeable false): update it with
 * the rows' mapped ids instead.  p is not changed;
 * TL_ERR_OOM, or TL_ERR_USAGE when the states do not fit together. */
bool tl_agg_mergeable(TlOp op);
TlStatus tl_agg_merge(TlAgg *a, const TlAgg *p, const uint32_t *map,
                      uint32_t n_src, uint32_t n_groups, TlError *err);

/* A subset of a partial (the radix path of op_agg.c, where one batch's
 * local groups go to several partitions): p's groups src[i] are folded
 * into a's groups dst[i], i < n, in that order, as tl_agg_merge would.
 * Every mergeable op but median and quantile (their values are kept per
 * row, not per group) can: tl_agg_merge_some_ok. */
bool tl_agg_merge_some_ok(TlOp op);
TlStatus tl_agg_merge_some(TlAgg *a, const TlAgg *p, const uint32_t *src,
                           const uint32_t *dst, uint32_t n, uint32_t n_groups,
                           TlError *err);

/* End the input: n_groups groups in all.  Checks every result (TL_ERR_DATA
 * with an EMPTY message when one does not fit its type, i.e. sum over
 * int64: the caller writes the message with the expression) and prepares
 * the quantiles.  No update may follow. */
TlStatus tl_agg_seal(TlAgg *a, uint32_t n_groups, TlError *err);

/* After tl_agg_seal failed with TL_ERR_DATA: the id of the (first) group
 * whose result does not fit its type. */
uint32_t tl_agg_bad_group(const TlAgg *a);

/* After tl_agg_seal: the results of groups [first, first+n) as one owned
 * array of spec.out_type. */
TlStatus tl_agg_results(TlAgg *a, uint32_t first, uint32_t n, TlArray **out,
                        TlError *err);

/* After tl_agg_seal of a median or quantile: group g's q-quantile (q in
 * [0, 1], interpolated as its results are) into *out, whatever q the spec
 * had, so one sealed state answers several quantiles; false when the group
 * has no value or the values are dates or timestamps (not a double). */
bool tl_agg_quantile_at(TlAgg *a, uint32_t g, double q, double *out);

/* tl_agg_seal, then every result as one array (groups 0..n_groups-1). */
TlStatus tl_agg_finish(TlAgg *a, uint32_t n_groups, TlArray **out,
                       TlError *err);

void tl_agg_free(TlAgg *a); /* NULL-safe */

#endif
