/*
 * physical.c -- plan -> operators.
 *
 * One operator per plan node, built from the bottom up (the child first,
 * then the node over it; a join builds its left child, then its right).  The scan node also projects its readers: for
 * every input, the reader columns behind the scan's output columns are
 * handed to tl_reader_project (each once), and pos[] records where each
 * output column lands in that reader's batches.
 *
 * A join builds its hash table on the right input unless the left one's
 * files are at most half the size of the right one's (TALLY_JOIN_BUILD=left
 * or right forces a side, for tests).
 *
 * An aggregate groups by runs of equal keys, building its table from run
 * heads only, when its input is clustered on the keys: the user says so
 * (--sorted; the operator checks it) or its child is a sort on exactly the
 * group keys, same columns in the same order, any direction.
 *
 * Lists the operators borrow (sort flags, column indexes) are copied into
 * the plan's string pool, so they live exactly as long as the plan;
 * expression ids are read straight from the plan's list arena, which no
 * longer grows once the operators exist.
 */
#include "ops.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The scan's projection of one shape of columns (plan.h, TlPlanShape):
 * the reader columns behind the output columns, each once, into proj, and
 * where each output column lands, into pos (both in the plan's pool). */
static TlStatus shape_project(TlPlan *p, const TlPlanNode *n, const TlPlanShape *sh,
                              int **proj, int *n_proj, int **pos, TlError *err)
{
    int nc = n->schema->n_fields, k_cols = 0;
    int *cols = tl_strpool_alloc(&p->ea.pool, (size_t)(nc ? nc : 1) * sizeof *cols);
    int *ip = tl_strpool_alloc(&p->ea.pool, (size_t)(nc ? nc : 1) * sizeof *ip);
    if (!cols || !ip) return tl_error_oom(err);
    for (int k = 0; k < nc; k++) {
        int u = n->projected ? tl_plan_int(p, n->cols, (uint32_t)k) : k;
        int r = sh->map[u], at = -1;
        if (r >= 0) {
            for (int j = 0; j < k_cols; j++)
                if (cols[j] == r) at = j;
            if (at < 0) {
                at = k_cols;
                cols[k_cols++] = r;
            }
        }
        ip[k] = at;
    }
    *proj = cols;
    *n_proj = k_cols;
    *pos = ip;
    return TL_OK;
}

/* The scan: its inputs' projections are worked out once per shape of
 * columns, not once per file; the readers the plan kept are projected
 * now, the others when the scan opens them. */
static TlStatus build_scan(TlPlan *p, const TlPlanNode *n, TlExecStats *stats,
                           TlOperator **out, TlError *err)
{
    int n_in = (int)n->n_in, ns = p->n_shapes;
    TlScanInput *ins = tl_calloc((size_t)(n_in ? n_in : 1), sizeof *ins);
    int **pos = tl_calloc((size_t)(ns ? ns : 1), sizeof *pos);
    int **proj = tl_calloc((size_t)(ns ? ns : 1), sizeof *proj);
    int *n_proj = tl_calloc((size_t)(ns ? ns : 1), sizeof *n_proj);
    TlStatus st = TL_OK;

    if (!ins || !pos || !proj || !n_proj) {
        st = tl_error_oom(err);
        goto done;
    }
    for (int i = 0; i < n_in && st == TL_OK; i++) {
        const TlPlanInput *in = &p->inputs[n->in0 + (uint32_t)i];
        const TlPlanShape *sh = &p->shapes[in->shape];
        int k = in->shape;
        if (!pos[k])
            st = shape_project(p, n, sh, &proj[k], &n_proj[k], &pos[k], err);
        if (st == TL_OK && in->reader)
            st = tl_reader_project(in->reader, proj[k], n_proj[k], err);
        ins[i] = (TlScanInput){in->reader, in->path, in->read, in->hints, &sh->cols,
                               proj[k], n_proj[k], pos[k], sh->map};
    }
    if (st == TL_OK) {
        bool main = n->in0 == 0 && p->converted;
        int width = main ? tl_plan_node(p, p->scan)->schema->n_fields : 0;
        st = tl_op_scan_new(n->schema, ins, n_in, stats, main ? p->converted : NULL,
                            width, out, err);
    }
done:
    tl_free(ins);
    tl_free(pos);
    tl_free(proj);
    tl_free(n_proj);
    return st;
}

/* A copy of int list (start, n) in the plan's pool, as int. */
static TlStatus int_list(TlPlan *p, uint32_t start, uint32_t n, int **out,
                         TlError *err)
{
    int *v = tl_strpool_alloc(&p->ea.pool, (n ? n : 1) * sizeof *v);
    if (!v) return tl_error_oom(err);
    for (uint32_t i = 0; i < n; i++) v[i] = tl_plan_int(p, start, i);
    *out = v;
    return TL_OK;
}

static const TlExprId *id_list(const TlPlan *p, uint32_t start, uint32_t n)
{
    return n ? (const TlExprId *)tl_arena_at(&p->ids, start) : NULL;
}

/* Bytes of input behind the subtree at id, from the files' sizes (standard
 * input or an unreadable size: INT64_MAX, "large"). */
static int64_t est_bytes(const TlPlan *p, TlPlanId id)
{
    const TlPlanNode *n = tl_plan_node(p, id);
    int64_t sum = 0;
    if (n->kind == TL_PLAN_SCAN) {
        for (uint32_t i = 0; i < n->n_in; i++) {
            struct stat sb;
            const char *path = p->inputs[n->in0 + i].path;
            if (strcmp(path, "-") == 0 || stat(path, &sb) != 0) return INT64_MAX;
            if (sb.st_size > INT64_MAX - sum) return INT64_MAX;
            sum += sb.st_size;
        }
        return sum;
    }
    sum = n->child != TL_NO_ID ? est_bytes(p, n->child) : 0;
    if (n->right != TL_NO_ID) {
        int64_t r = est_bytes(p, n->right);
        sum = r > INT64_MAX - sum ? INT64_MAX : sum + r;
    }
    return sum;
}

/* --sorted: when the aggregate n's input rows are its scan's records one
 * to one (only projections between), hand the scan's readers to it so the
 * check's message names file and line (tl_op_agg_set_source). */
static TlStatus sorted_source(const TlPlan *p, const TlPlanNode *n,
                              TlOperator *op, TlError *err)
{
    const TlPlanNode *c = tl_plan_node(p, n->child);
    while (c->kind == TL_PLAN_PROJECT && c->n_guards == 0)
        c = tl_plan_node(p, c->child);
    if (c->kind != TL_PLAN_SCAN || c->n_in == 0) return TL_OK;
    const char *paths[64];
    int k = c->n_in < 64 ? (int)c->n_in : 64;
    for (int i = 0; i < k; i++) paths[i] = p->inputs[c->in0 + (uint32_t)i].path;
    return tl_op_agg_set_source(op, paths, p->inputs[c->in0].read, k, err);
}

/* The aggregate n's child is a sort on exactly its keys (plain columns, in
 * the same order; directions do not matter: equal keys are adjacent). */
static bool sorted_on_keys(const TlPlan *p, const TlPlanNode *n)
{
    const TlPlanNode *c = tl_plan_node(p, n->child);
    if (c->kind != TL_PLAN_SORT || c->n_exprs != n->n_exprs || n->n_exprs == 0)
        return false;
    for (uint32_t i = 0; i < n->n_exprs; i++) {
        const TlExpr *k = tl_ea_node(&p->ea, tl_plan_expr(p, n->exprs, i));
        const TlExpr *s = tl_ea_node(&p->ea, tl_plan_expr(p, c->exprs, i));
        if (k->kind != TL_X_COL || s->kind != TL_X_COL || k->col < 0 ||
            k->col != s->col)
            return false;
    }
    return true;
}

static TlStatus build(TlPlan *p, TlPlanId id, TlExecStats *stats,
                      TlOperator **out, TlError *err)
{
    TlPlanNode n = *tl_plan_node(p, id);
    TlOperator *child = NULL, *op = NULL;
    TlStatus st;
    int *cols = NULL;

    *out = NULL;
    if (n.kind == TL_PLAN_SCAN) return build_scan(p, &n, stats, out, err);
    if (n.kind == TL_PLAN_JOIN) {
        TlOperator *right = NULL;
        int *lk = NULL, *rk = NULL, *rc = NULL;
        TL_TRY(build(p, n.child, stats, &child, err));
        st = build(p, n.right, stats, &right, err);
        if (st == TL_OK) st = int_list(p, n.cols, n.n_cols, &lk, err);
        if (st == TL_OK) st = int_list(p, n.rkeys, n.n_cols, &rk, err);
        if (st == TL_OK) st = int_list(p, n.rcols, n.n_rcols, &rc, err);
        if (st != TL_OK) {
            child->free(child);
            if (right) right->free(right);
            return st;
        }
        /* build on the right input unless the left one is clearly smaller
         * (at most half its bytes): the right-built join streams its probe
         * side without keeping it, so near-equal sizes favour it */
        int64_t lb = est_bytes(p, n.child), rb = est_bytes(p, n.right);
        bool build_left = lb < INT64_MAX && lb <= rb / 2;
        if (TL_TUNING(child->ctx)->join_build) /* tests: force a side */
            build_left = TL_TUNING(child->ctx)->join_build > 0;
        TL_TRY(tl_op_join_new(child, right, (int)n.how, lk, rk, (int)n.n_cols,
                              rc, (int)n.n_rcols, build_left, n.schema, &op, err));
        op->stats = stats;
        *out = op;
        return TL_OK;
    }
    TL_TRY(build(p, n.child, stats, &child, err));

    switch ((TlPlanKind)n.kind) {
    case TL_PLAN_FILTER:
        st = tl_op_filter_new(child, &p->ea, tl_plan_expr(p, n.exprs, 0),
                              n.schema, &op, err);
        break;
    case TL_PLAN_PROJECT: {
        TlProjectGuards g = {id_list(p, n.guards, n.n_guards),
                             n.n_guards ? (const int32_t *)tl_arena_at(&p->ints, n.guard_at)
                                        : NULL,
                             (int)n.n_guards};
        st = tl_op_project_new(child, &p->ea, id_list(p, n.exprs, n.n_exprs),
                               (int)n.n_exprs, &g, n.schema, &op, err);
        break;
    }
    case TL_PLAN_AGGREGATE:
        st = tl_op_agg_new(child, &p->ea, id_list(p, n.exprs, n.n_exprs),
                           (int)n.n_exprs, id_list(p, n.aggs, n.n_aggs),
                           (int)n.n_aggs, n.schema, &op, err);
        if (st == TL_OK && n.sorted) {
            tl_op_agg_set_sorted(op, true);
            st = sorted_source(p, &n, op, err);
            if (st != TL_OK) op->free(op);
        } else if (st == TL_OK && sorted_on_keys(p, &n))
            tl_op_agg_set_sorted(op, false);
        break;
    case TL_PLAN_SORT: {
        bool *flags = tl_strpool_alloc(&p->ea.pool, 2 * (n.n_exprs + 1));
        if (!flags) {
            child->free(child);
            return tl_error_oom(err);
        }
        for (uint32_t i = 0; i < n.n_exprs; i++) {
            int32_t f = tl_plan_int(p, n.flags, i);
            flags[i] = (f & TL_SORT_DESC) != 0;
            flags[n.n_exprs + i] = (f & TL_SORT_NULLS_FIRST) != 0;
        }
        if (n.n_by > 0) {
            st = int_list(p, n.by, n.n_by, &cols, err);
            if (st != TL_OK) {
                child->free(child);
                return st;
            }
            st = tl_op_topn_by_new(child, &p->ea, id_list(p, n.exprs, n.n_exprs),
                                   flags, flags + n.n_exprs, (int)n.n_exprs,
                                   n.limit, cols, (int)n.n_by, &op, err);
            break;
        }
        st = tl_op_sort_new(child, &p->ea, id_list(p, n.exprs, n.n_exprs), flags,
                            flags + n.n_exprs, (int)n.n_exprs, n.limit, &op, err);
        break;
    }
    case TL_PLAN_LIMIT:
        st = n.tail ? tl_op_tail_new(child, n.limit, &op, err)
                    : tl_op_limit_new(child, n.offset, n.limit, &op, err);
        break;
    case TL_PLAN_SAMPLE:
        st = tl_op_sample_new(child, n.limit, n.pct, n.seed, &op, err);
        break;
    case TL_PLAN_ROW_NUMBER:
        st = tl_op_row_number_new(child, n.schema, &op, err);
        break;
    case TL_PLAN_LIMIT_BY:
    case TL_PLAN_DISTINCT:
        st = int_list(p, n.cols, n.n_cols, &cols, err);
        if (st != TL_OK) {
            child->free(child);
            return st;
        }
        st = n.kind == TL_PLAN_DISTINCT
                 ? tl_op_distinct_new(child, cols, (int)n.n_cols, &op, err)
                 : tl_op_limit_by_new(child, n.limit, cols, (int)n.n_cols, &op,
                                      err);
        break;
    case TL_PLAN_DESCRIBE:
        st = tl_op_describe_new(child, n.schema, &op, err);
        break;
    default:
        child->free(child);
        return tl_error(err, TL_ERR_DATA, "internal error: plan node kind %d",
                        (int)n.kind);
    }
    if (st != TL_OK) return st;
    op->stats = stats;
    *out = op;
    return TL_OK;
}

/* See ops.h. */
TlStatus tl_exec_build(TlPlan *p, TlPlanId root, TlExecStats *stats,
                       TlOperator **out, TlError *err)
{
    return build(p, root, stats, out, err);
}
