/*
 * opt.c -- the optimizer driver.
 *
 * The optimizer is a sequence of rewrites over the logical plan, each a
 * function from a root to a new root (rules.h):
 *
 *   1. simplify             every expression to a fixed point (simplify.c:
 *                           constant folding -- which also folds the casts
 *                           resolve inserted around literals --, boolean
 *                           identities, De Morgan, NOT into comparisons,
 *                           contradictions, constant case branches)
 *   2. pushdown_filter      filters sink below projects, sorts and (on keys)
 *                           aggregates, keeping their relative order; the
 *                           filters inside a run of `with` items leave it
 *   3. simplify             again: substituted predicates may fold
 *   4. fold_limits          sort + limit -> top-k; a limit sinks below
 *                           projects; limit + limit -> min
 *   5. pushdown_projection  only referenced columns are read
 *   6. merge_projects       a pure selection of a projection merges into it
 *   7. cse                  identical subexpressions of one projection share
 *                           one id (evaluated once per batch)
 *
 * Type coercion happens once, in resolve (lib/plan/resolve.c), which inserts
 * each implicit cast exactly once per node; the simplifier never adds a
 * cast, and folds a cast of a literal into the literal, so coercion and
 * simplification cannot undo each other.  Simplification ends because every
 * rule lowers the measure documented in simplify.c; the pushdowns visit
 * each node once (filters sink along the chain, at most MAX_COPIES times).
 *
 * A limit without a sort needs no rule: the limit operator stops pulling
 * from its child once it has its rows, so the scan stops early by
 * construction.  Every rule that fires appends a line to p->opt_log, which
 * `tally explain --verbose` prints.
 */
#include "opt.h"
#include "rules.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Bound on the log, so a huge expression list cannot blow it up. */
#define MAX_LOG (1u << 20)

/* See rules.h. */
TlStatus tl_opt_copy_node(TlPlan *p, TlPlanId id, TlPlanId child,
                          TlPlanId *out, TlError *err)
{
    TlPlanNode copy = *tl_plan_node(p, id);
    TL_TRY(tl_arena_push(&p->nodes, out, err));
    copy.child = child;
    *tl_plan_node(p, *out) = copy;
    return TL_OK;
}

/* See rules.h. */
TlStatus tl_opt_note(TlPlan *p, TlError *err, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    int n;
    size_t len;
    va_start(ap, fmt);
    n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0) return TL_OK;
    len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    if (p->opt_log_len + len + 4 > MAX_LOG) return TL_OK;
    if (p->opt_log_len + len + 4 > p->opt_log_cap) {
        size_t nc = p->opt_log_cap ? p->opt_log_cap : 256;
        while (nc < p->opt_log_len + len + 4) nc *= 2;
        char *b = tl_realloc(p->opt_log, nc);
        if (!b) return tl_error_oom(err);
        p->opt_log = b;
        p->opt_log_cap = nc;
    }
    memcpy(p->opt_log + p->opt_log_len, "  ", 2);
    memcpy(p->opt_log + p->opt_log_len + 2, line, len);
    p->opt_log_len += len + 2;
    p->opt_log[p->opt_log_len++] = '\n';
    p->opt_log[p->opt_log_len] = '\0';
    return TL_OK;
}

/* See plan.h: sets p->opt_root to the optimized plan of p->root. */
TlStatus tl_opt_run(TlPlan *p, TlError *err)
{
    TlPlanId root = p->root;
    TL_TRY(tl_opt_simplify(p, root, &root, err));
    TL_TRY(tl_opt_pushdown_filter(p, root, &root, err));
    TL_TRY(tl_opt_simplify(p, root, &root, err));
    TL_TRY(tl_opt_fold_limits(p, root, &root, err));
    TL_TRY(tl_opt_pushdown_projection(p, root, &root, err));
    TL_TRY(tl_opt_merge_projects(p, root, &root, err));
    TL_TRY(tl_opt_cse(p, root, &root, err));
    TL_TRY(tl_opt_topn_by(p, root, &root, err));
    p->opt_root = root;
    return TL_OK;
}
