/*
 * plan.h -- the logical plan: a tree of plan nodes in an arena.
 *
 * A plan is built from a TallySpec step by step (plan.c): a scan of the
 * inputs, then one node per step (a `with`, `drop` or `rename` step becomes a
 * project node).  Nodes live in plan->nodes and refer to their child by id;
 * the lists they hold (expression ids, column indexes, sort flags) live in
 * two more arenas, addressed by (start, count).  Expressions live in
 * plan->ea, resolved against the node's child schema.
 *
 * The optimizer (lib/opt) never edits a node: it pushes new nodes that share
 * unchanged expressions and re-points ids, so after tl_opt_run both the
 * logical plan (plan->root) and the optimized one (plan->opt_root) are
 * printable, and everything is freed at once by tl_plan_free.
 *
 * Memory: the plan owns what it learned of each input (its columns, once
 * per distinct header: TlPlanShape) and the few readers it keeps open
 * (pipes, standard input, the first inputs of a scan), every node's
 * output schema (allocated separately, so a schema
 * pointer stays valid while the arena grows), and the expression arena.
 * Operators built from the plan borrow all of these; free them first.
 *
 *   plan->nodes   [scan][filter][aggregate][sort][limit] ...   TlPlanNode
 *                    ^------'  child ids point backwards
 *   (a join node also has a `right` child: the right side's own chain,
 *   from its own scan; p->scan is the main pipeline's scan)
 *   plan->ids     expression-id lists     (node.exprs / node.aggs)
 *   plan->ints    int32 lists             (node.cols, node.flags)
 */
#ifndef TL_PLAN_H
#define TL_PLAN_H

#include "../../formats/format.h"
#include "../core/arena.h"
#include "../core/core.h"
#include "../expr/expr.h"
#include "../tally.h"

typedef uint32_t TlPlanId;

/* Most nodes a spec may build (each `with` item is one): plans, rewrites and
 * operators recurse along the chain, so its length is bounded: by
 * TL_PLAN_MAX_NODES on a deep stack (tl_run_deep, lib/core/pool.h), by
 * TL_PLAN_MAX_NODES_SHALLOW otherwise. */
#define TL_PLAN_MAX_NODES 100000
#define TL_PLAN_MAX_NODES_SHALLOW 4096

/* The column a row_number() call reads: the planner puts a row-number
 * node of this name below a step that calls it and drops the column after
 * the step (plan.c); resolve turns the call into a reference to it. */
#define TL_ROW_NUMBER_COL "row_number()"

typedef enum TlPlanKind {
    TL_PLAN_SCAN,      /* cols: projected scan columns (when projected) */
    TL_PLAN_FILTER,    /* exprs[0]: predicate */
    TL_PLAN_PROJECT,   /* exprs: one per output column, in order; one may
                          read an earlier one (tl_plan_reads_self);
                          guards: filters between them (TlPlanNode) */
    TL_PLAN_AGGREGATE, /* exprs: keys; aggs: aggregate calls */
    TL_PLAN_SORT,      /* exprs: keys; flags: TL_SORT_* per key; limit;
                          n_by > 0: first `limit` rows per group of the
                          by columns (lib/opt/topn_by.c) */
    TL_PLAN_LIMIT,     /* offset rows skipped, then limit rows (-1: all);
                          tail: the last `limit` rows instead */
    TL_PLAN_LIMIT_BY,  /* limit; cols: group columns */
    TL_PLAN_DISTINCT,  /* cols: columns (none: all) */
    TL_PLAN_JOIN,      /* child = left, right = right side; how; cols: left
                          keys (n_cols), rkeys: right keys (n_cols);
                          rcols: right columns in the output (n_rcols).
                          Output: every left column, then rcols */
    TL_PLAN_DESCRIBE,  /* one row of statistics per child column; reads
                          every child column */
    TL_PLAN_SAMPLE,    /* limit rows (pct < 0) or pct percent of the rows,
                          chosen by a hash of (seed, row position) */
    TL_PLAN_ROW_NUMBER,/* the child's columns and an int64 1, 2, ... last */
} TlPlanKind;

typedef enum TlJoinHow {
    TL_JOIN_INNER, TL_JOIN_LEFT, TL_JOIN_RIGHT, TL_JOIN_FULL, TL_JOIN_SEMI,
    TL_JOIN_ANTI
} TlJoinHow;

enum { TL_SORT_DESC = 1, TL_SORT_NULLS_FIRST = 2 };

typedef struct TlPlanNode {
    uint8_t kind;           /* TlPlanKind */
    bool projected;         /* scan: cols holds a projection */
    TlPlanId child;         /* TL_NO_ID for a scan */
    TlPlanId right;         /* join: the right side; else TL_NO_ID */
    const TlSchema *schema; /* output schema, owned by the plan */
    uint32_t exprs, n_exprs;/* into plan->ids */
    uint32_t aggs, n_aggs;  /* into plan->ids */
    uint32_t cols, n_cols;  /* into plan->ints */
    uint32_t flags;         /* into plan->ints, n_exprs entries (sort) */
    int64_t limit;          /* limit, limit-by, sample; sort: top-k or -1 */
    int64_t offset;         /* limit: rows skipped before the first */
    bool tail;              /* limit: the last `limit` rows */
    double pct;             /* sample: percent, or -1 (`limit` rows) */
    uint64_t seed;          /* sample */
    uint32_t in0, n_in;     /* scan: its inputs, plan->inputs[in0, in0+n_in) */
    uint8_t how;            /* join: TlJoinHow */
    uint32_t rkeys;         /* join: into plan->ints, n_cols entries */
    uint32_t rcols, n_rcols;/* join: into plan->ints */
    uint32_t by, n_by;      /* sort: top-n per group columns, plan->ints */
    uint32_t guards, n_guards; /* project: filter predicates inside a run
                               of `with` items (plan->ids, in the node's
                               terms like its exprs); guard g keeps the rows
                               where it is true once the first
                               guard_at[g] outputs are made, so the later
                               outputs and guards see those rows alone */
    uint32_t guard_at;      /* project: plan->ints, n_guards entries */
    uint8_t sorted;         /* aggregate: 1 when the user asserts its input
                               is clustered on the keys (--sorted, checked
                               at run time); physical.c also sees a sort on
                               the keys right below */
} TlPlanNode;

/* One input file of the scan.  The scan's schema is the union of the
 * inputs' columns by name (several inputs are concatenated).  Planning
 * opens every input to learn its columns and types, then closes it unless
 * it cannot be opened again (a pipe, standard input) or is among the
 * first few of its scan; the scan opens the others when it reaches them
 * and closes each once read (lib/exec/op_scan.c), so a glob of any size
 * holds a bounded number of readers, and per file only this. */
typedef struct TlPlanInput {
    char *display;          /* as the user wrote it (explain) */
    char *path;             /* path opened (relative to the spec's folder) */
    TlReader *reader;       /* kept open, or NULL: the scan opens it */
    const TlReadOptions *read; /* its group's (borrowed from the run) */
    TlTypeHints *hints;     /* the run's for this input */
    int shape;              /* into plan->shapes: its columns as planned */
    bool can_late;          /* its reader splits and converts late */
    bool types_final;       /* tl_reader_types_final */
    bool more;              /* it may find columns after its sample */
} TlPlanInput;

/* The columns of one or more inputs of a scan (a glob's files mostly share
 * one header, so mostly one shape a scan): names and types as planning
 * read them, and where each scan column sits among them.  A reader the
 * scan opens later must have these names (else its file changed). */
typedef struct TlPlanShape {
    TlSchema cols;
    int *map;               /* scan column -> reader column, or -1 */
} TlPlanShape;

typedef struct TlPlan {
    TlArena nodes;          /* TlPlanNode */
    TlArena ids;            /* TlExprId */
    TlArena ints;           /* int32_t */
    TlExprArena ea;
    TlSchema **schemas;     /* every node schema, owned */
    int n_schemas, cap_schemas;
    TlPlanInput *inputs;
    int n_inputs;
    TlPlanShape *shapes;
    int n_shapes, cap_shapes;
    int64_t *converted;     /* the main scan's columns: fields its readers
                               converted, summed by the scan (--stats) */
    TlPlanId scan;          /* the scan node of the logical plan */
    TlPlanId root;          /* the logical plan */
    TlPlanId opt_root;      /* the optimized plan, or TL_NO_ID */
    char *opt_log;          /* rules the optimizer applied, one per line
                               (explain --verbose); tl_malloc'd or NULL */
    size_t opt_log_len, opt_log_cap;
    bool sorted;            /* spec->sorted: group-bys' input is clustered */
} TlPlan;

/* The inputs of one scan: paths[first, first + n) read with `read`.  Group
 * 0 is the main pipeline's; each join step's right side takes the next one,
 * in the order of the steps, depth first (nested pipelines). */
typedef struct TlPlanGroup {
    int first, n;
    const TlReadOptions *read;
} TlPlanGroup;

/* What tl_plan_build reads besides the spec's steps. */
typedef struct TlPlanOptions {
    char **display;         /* per input: the name shown by explain */
    char **paths;           /* per input: the path to open */
    int n_inputs;
    const TlReadOptions *read;
    TlTypeHints *hints;     /* per input; readers record widened types here */
    bool no_steps;          /* schema mode: the scan alone */
    int64_t now;            /* the run's instant (TlCtx.now): now() */
    const TlPlanGroup *groups; /* NULL: one group, every input, `read` */
    int n_groups;
} TlPlanOptions;

static inline TlPlanNode *tl_plan_node(const TlPlan *p, TlPlanId id)
{
    return (TlPlanNode *)tl_arena_at(&p->nodes, id);
}
static inline TlExprId tl_plan_expr(const TlPlan *p, uint32_t list, uint32_t i)
{
    return *(TlExprId *)tl_arena_at(&p->ids, list + i);
}
static inline int32_t tl_plan_int(const TlPlan *p, uint32_t list, uint32_t i)
{
    return *(int32_t *)tl_arena_at(&p->ints, list + i);
}

/* Build the logical plan of spec: open every input (to learn its schema),
 * then one node per step, resolving every expression.  Usage errors carry a
 * caret under the offending text.  On success *out is owned by the caller
 * (tl_plan_free). */
TlStatus tl_plan_build(const TallySpec *spec, const TlPlanOptions *opt,
                       TlPlan **out, TlError *err);
void tl_plan_free(TlPlan *p); /* NULL-safe; closes the readers it kept */

/* The scan node of inputs [first, first + n_in) read with `read`: each
 * input opened for its columns and types, the union by name, the hints
 * of inputs narrower than it (scan.c). */
TlStatus tl_plan_build_scan(TlPlan *p, const TlPlanOptions *o, int first, int n_in,
                            const TlReadOptions *read, TlPlanId *out, TlError *err);
/* A step named a column in no schema (st, the usage error in err): the
 * inputs whose columns come from a sample look further (scan.c);
 * TL_ERR_RESTART when one found a column, else st. */
TlStatus tl_plan_more_columns(TlPlan *p, TlStatus st, TlError *err);

/* Builders shared with the optimizer. */
TlStatus tl_plan_push(TlPlan *p, TlPlanKind kind, TlPlanId child, TlPlanId *id,
                      TlError *err);
/* A new empty schema owned by the plan. */
TlStatus tl_plan_schema_new(TlPlan *p, TlSchema **out, TlError *err);
/* Whether project node n reads its own outputs: in a project's
 * expressions a column c below the child's width w is the child's, and c >=
 * w is the node's output c - w, an earlier expression's (a run of `with`
 * items, plan.c); the expressions are evaluated in order. */
bool tl_plan_reads_self(const TlPlan *p, const TlPlanNode *n);
/* Copy n ids / ints into the list arenas; *start receives the first index. */
TlStatus tl_plan_push_ids(TlPlan *p, const TlExprId *ids, uint32_t n,
                          uint32_t *start, TlError *err);
TlStatus tl_plan_push_ints(TlPlan *p, const int32_t *v, uint32_t n,
                           uint32_t *start, TlError *err);

/* The explain text: the logical plan, the optimized plan (when opt_root is
 * set; else the logical plan again) and the output schema, in the layout of
 * man/tally.1 (COMMANDS, OPTIMIZER).  *out is tl_malloc'd. */
TlStatus tl_plan_explain(const TlPlan *p, char **out, size_t *len, TlError *err);
/* Append one tree (2-space indents starting at `indent`) to a growable
 * string; used by explain and tests. */
TlStatus tl_plan_print_tree(const TlPlan *p, TlPlanId root, int indent,
                            char **buf, size_t *len, size_t *cap, TlError *err);

#endif
