/*
 * exec.h -- physical operators: pull-based, one batch at a time.
 *
 * An operator produces batches of its output schema from its child's
 * batches.  next() hands the caller an owned batch, or *out = NULL at the
 * end.  Streaming operators (scan, filter, project, limit) return as soon as
 * they have a batch; pipeline breakers (aggregate, sort, distinct's state)
 * consume their child first.  free() releases the operator and its child.
 *
 * Operators never reorder rows nondeterministically: group-by emits groups
 * in order of first appearance, sort is stable, distinct keeps the first
 * occurrence.
 *
 * The counters in TlExecStats back `--stats`, so tests can prove what the
 * engine did (rows scanned, columns converted, groups, ...).
 */
#ifndef TL_EXEC_H
#define TL_EXEC_H

#include "../core/core.h"
#include "../core/ctx.h"
#include "../expr/expr.h"

typedef struct TlExecStats {
    int64_t rows_read, bytes_read, batches_read;
    int64_t groups;        /* groups formed by aggregations */
    int64_t rows_sorted;
    int64_t restarts;      /* type-inference restarts */
    int64_t sort_pool_peak; /* top-k: most rows its candidate pool held */
} TlExecStats;

typedef struct TlOperator TlOperator;

/* The value an error raised while evaluating a row was raised on, for
 * TlOperator.origin: the one column the failing expression reads
 * (TlError.col), and that column of the failing row as the step read it
 * (a[row]); placed: an origin named where the input holds it. */
typedef struct TlPlaceVal {
    const char *col;
    const TlArray *a;
    int64_t row;
    bool placed;
} TlPlaceVal;

/* ------------------------------------------- morsel parallelism (op_scan.c)
 *
 * A scan runs its inputs as morsels on the thread pool (lib/core/pool.h):
 * for each morsel, on whichever thread picks it up, the reader decodes it
 * into a batch, the scan's maps run over it (filters and projections the
 * builder fused into the scan), and then, if the operator above installed
 * one, a stage's work function turns the batch into a result.  The consumer
 * gets batches (next) or results (next_result) strictly in morsel order, so
 * output never depends on the number of threads.  Morsel boundaries depend
 * only on the input.
 *
 * A map or a stage's work is a pure function of its batch and of state that
 * is read-only while the scan runs (the expression arena, a join's built
 * table); it must not touch the run's counters or any other shared mutable
 * state.  It may run concurrently with itself on other morsels. */

/* Consumes `in`; *out: the mapped batch, or NULL when no row is left. */
typedef TlStatus (*TlMapFn)(void *ctx, TlBatch *in, TlBatch **out, TlError *err);

/* Late materialization (op_scan.c).  Over a reader that can convert
 * columns late (format.h), a scan may run its first map, or with no map its
 * stage, in two steps: the late function gets `part`, a batch of the map's
 * input schema with all of the morsel's rows but only the columns it
 * declared it reads (need[]; the others are NULL), decides which rows it
 * keeps, and fetches exactly those with every column through
 * tl_late_fetch (ascending row indexes, distinct; n < 0: all rows),
 * exactly once.  Its outcome must equal the plain function's on the whole
 * batch.  Errors: the plain path converts every column before the function
 * runs, so when the late function fails on `part` it must first fetch all
 * rows and report the fetch's error if there is one (a conversion error or
 * a type restart), its own otherwise.  Fetching no row (n 0) still checks
 * the other rows' fields, so a type restart never depends on the rows
 * kept; *out is then NULL. */
typedef struct TlLate TlLate;
TlStatus tl_late_fetch(TlLate *late, const uint32_t *sel, int64_t n,
                       TlBatch **out, TlError *err);
/* A late map: consumes part; *out as a TlMapFn's. */
typedef TlStatus (*TlLateMapFn)(void *ctx, TlBatch *part, TlLate *late,
                                TlBatch **out, TlError *err);

typedef struct TlStage {
    void *ctx;
    /* Consumes b (at least one row); *result: anything, handed to the
     * consumer by next_result in morsel order (NULL is allowed and is
     * skipped).  Any thread. */
    TlStatus (*work)(void *ctx, TlBatch *b, void **result, TlError *err);
    /* Free a result that will never be handed out (error, early end). */
    void (*drop)(void *ctx, void *result);
} TlStage;

/* A stage's late form (see TlLate): consumes part; *result as work's. */
typedef TlStatus (*TlLateWorkFn)(void *ctx, TlBatch *part, TlLate *late,
                                 void **result, TlError *err);

struct TlOperator {
    TlStatus (*next)(TlOperator *op, TlBatch **out, TlError *err);
    void (*free)(TlOperator *op);
    const TlSchema *schema;   /* output schema, lives as long as the plan */
    TlExecStats *stats;       /* shared by all operators of the run */
    const TlCtx *ctx;         /* the run's context (tuning), shared like
                                 stats: a scan takes its readers', every
                                 other operator its child's; NULL: the
                                 environment's tuning (ctx.h) */
    /* Optional, NULL unless the operator is a scan (op_scan.c) or a hash
     * join (op_join.c: maps and stage run on its output batches, in the
     * tasks that probe its streaming side):
     *  add_map     fuse fn(ctx, batch) after the existing maps; the output
     *              schema becomes `schema`; ctx is freed with ctx_free
     *              when the scan is freed (also when add_map fails)
     *  set_stage   install a stage before the first pull; afterwards only
     *              next_result may be called (*result NULL at the end) */
    TlStatus (*add_map)(TlOperator *op, TlMapFn fn, void *ctx,
                        void (*ctx_free)(void *ctx), const TlSchema *schema,
                        TlError *err);
    TlStatus (*set_stage)(TlOperator *op, const TlStage *stage, TlError *err);
    TlStatus (*next_result)(TlOperator *op, void **result, TlError *err);
    /* Optional (scan only): give the map just added, when it is the first,
     * a late form (see TlLate) reading the columns marked in need (one
     * flag per column of its input schema; copied).  Ignored otherwise. */
    TlStatus (*set_late_map)(TlOperator *op, TlLateMapFn fn, const bool *need,
                             TlError *err);
    /* Optional (scan only): after set_stage, a late form of the stage's
     * work reading the columns marked in need (one flag per column of the
     * scan's schema; copied) first; few >= 0: it fetches at most that many
     * rows of a morsel (a top-k), -1: unknown.  Used only when the scan
     * has no map. */
    TlStatus (*set_late_stage)(TlOperator *op, TlLateWorkFn fn, const bool *need,
                               int64_t few, TlError *err);
    /* Optional, for messages (error paths only): where row `row` (0-based,
     * counted over every row the operator has handed out, by next() or to
     * a stage) comes from, as text in buf[0, cap): "FILE:LINE" for an
     * input's record, or "row N of the group-by's result" for a row a step
     * made (tl_origin_made); "" when it cannot tell.  An operator that
     * passes its child's rows on or drops some asks its child; one that
     * drops rows knows only those of the batch it handed out last.  v
     * (NULL: none) is the value the error was raised on: a scan whose
     * record holds it in that column appends ":COL" and sets v->placed. */
    void (*origin)(TlOperator *op, int64_t row, TlPlaceVal *v, char *buf, size_t cap);
};

/* Group-by: one row per distinct key tuple (all-null keys form one group),
 * groups in order of first appearance.  keys: resolved key expressions over
 * the child schema; aggs: resolved aggregate calls (TL_X_CALL with an
 * aggregate op; their args are evaluated over child batches).  n_keys may be
 * 0: one output row over the whole input (even when it is empty: count 0,
 * sum null).  schema: keys then aggregates.  Takes ownership of child. */
TlStatus tl_op_agg_new(TlOperator *child, const TlExprArena *ea,
                       const TlExprId *keys, int n_keys, const TlExprId *aggs,
                       int n_aggs, const TlSchema *schema, TlOperator **out,
                       TlError *err);
/* Sort by keys (as tl_op_sort_new) and keep the first `limit` (>= 1) rows
 * of each group of columns by[0..n_by): the output of a stable sort followed
 * by tl_op_limit_by_new, in one pass with a bounded heap per group.  keys,
 * desc, nulls_first and by are borrowed for the operator's life.  Takes
 * ownership of child. */
TlStatus tl_op_topn_by_new(TlOperator *child, const TlExprArena *ea,
                           const TlExprId *keys, const bool *desc,
                           const bool *nulls_first, int n_keys, int64_t limit,
                           const int *by, int n_by, TlOperator **out,
                           TlError *err);

/* Tell an aggregate made by tl_op_agg_new that its input is clustered on
 * the keys (equal keys adjacent): it then always groups by runs, and with
 * `check` a key that reappears after its run ended is a data error naming
 * the row (--sorted).  Call before the first next(). */
void tl_op_agg_set_sorted(TlOperator *op, bool check);

/* For the --sorted check's message: the aggregate's input rows are, one to
 * one and in order, the records of these inputs (paths read with `read`,
 * concatenated); the error then names the file and line of the offending
 * record (tl_input_locate).  Without this call (a filter, a join... below)
 * it names the row number of the aggregate's input.  paths and read are
 * borrowed for the operator's life; the array is copied. */
typedef struct TlReadOptions TlReadOptions;
TlStatus tl_op_agg_set_source(TlOperator *op, const char *const *paths,
                              const TlReadOptions *read, int n_paths,
                              TlError *err);

/* Describe (op_describe.c): one row per column of the child, the columns
 * of schema (lib/plan/plan.c builds it: column, type, count, nulls,
 * distinct, approx, min, max, mean, std, q25, q50, q75, min_len, max_len,
 * top), after reading the whole input once.  Takes ownership of child. */
TlStatus tl_op_describe_new(TlOperator *child, const TlSchema *schema,
                            TlOperator **out, TlError *err);

/* Stable sort by keys (expressions over the child schema); desc[i] and
 * nulls_first[i] per key.  Ascending puts nulls last by default; strings by
 * bytes; NaN after every float; -0.0 equals 0.0.  limit >= 0: only the first
 * `limit` rows are needed (top-k); -1: all. */
TlStatus tl_op_sort_new(TlOperator *child, const TlExprArena *ea,
                        const TlExprId *keys, const bool *desc,
                        const bool *nulls_first, int n_keys, int64_t limit,
                        TlOperator **out, TlError *err);

/* Keep the first occurrence of each distinct tuple of columns cols (indexes
 * into the child schema; n_cols 0 = all columns), in input order. */
TlStatus tl_op_distinct_new(TlOperator *child, const int *cols, int n_cols,
                            TlOperator **out, TlError *err);

/* First `limit` rows of each group of `by` columns (indexes), input order. */
TlStatus tl_op_limit_by_new(TlOperator *child, int64_t limit, const int *by,
                            int n_by, TlOperator **out, TlError *err);

/* Finding the row an error was raised on (place.c): a run over a batch
 * that consumes it and returns its status (TL_ERR_DATA: a row failed). */
typedef TlStatus (*TlPlaceRun)(void *arg, TlBatch *b, TlError *err);
/* The first row of b with which run fails (run goes row by row: a row
 * fails or not whatever the other rows), found by running it on prefixes
 * of b; that run's error in *first.  -1 when run does not fail on b with a
 * data error, or on out of memory.  For error paths only. */
int64_t tl_first_failing_row(TlPlaceRun run, void *arg, const TlBatch *b,
                             TlError *first);
/* A run over a batch that consumes it and counts the rows it keeps (a
 * filter's, or a scan's maps'). */
typedef TlStatus (*TlPlaceKeep)(void *arg, TlBatch *b, int64_t *kept, TlError *err);
/* The row of b that keep keeps as its nth (0-based) kept row, found by
 * running it on prefixes of b (keep goes row by row); -1 when it keeps at
 * most nth rows of b or fails.  For error paths only. */
int64_t tl_nth_kept_row(TlPlaceKeep keep, void *arg, const TlBatch *b, int64_t nth);
/* A step that is not fused into a scan failed on batch b with err, b
 * holding rows before.. of src's output (src: the operator the step reads):
 * the message starts with where the first failing row of b comes from
 * (tl_origin: "FILE:LINE: ", "row N of the group-by's result: "; when src
 * cannot tell, "row N of the step's input: "), followed by that row's
 * error. */
void tl_place_row(TlPlaceRun run, void *arg, const TlBatch *b, TlOperator *src,
                  int64_t before, TlError *err);
/* src's origin of its row `row` (see TlOperator.origin); "" without one. */
void tl_origin(TlOperator *src, int64_t row, TlPlaceVal *v, char *buf, size_t cap);
/* err = "WHERE: " and the message of first, whose first line ends with
 * (column "COL") when col is not NULL. */
void tl_place_error(TlError *err, const char *where, const char *col,
                    const TlError *first);
/* Same type and value (or both null): a[i] and b[j]. */
bool tl_same_value(const TlArray *a, int64_t i, const TlArray *b, int64_t j);
/* "row N of the WHAT's result" (N = row + 1): the origin of a row made by a
 * step (what: "group-by", "sort", ...). */
void tl_origin_made(const char *what, int64_t row, char *buf, size_t cap);
/* Room for an origin's text. */
#define TL_ORIGIN_CAP 512
/* A batch holding new references to b's columns (NULL on OOM): keeps b's
 * rows for tl_first_failing_row while b itself is consumed. */
TlBatch *tl_batch_ref(const TlBatch *b);

#endif
