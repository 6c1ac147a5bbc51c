/*
 * rules.h -- the optimizer's rules, one file each, run by opt.c.
 *
 * A rule takes the plan rooted at `root` and returns the root of an
 * equivalent plan in *out.  Rules never edit a node or an expression in
 * place: they push new nodes (sharing everything unchanged) and re-point ids,
 * so the logical plan stays printable next to the optimized one.  A rule
 * that changes nothing returns root itself.
 */
#ifndef TL_OPT_RULES_H
#define TL_OPT_RULES_H

#include "../plan/plan.h"

/* Push a copy of node id (same fields) with a new child; *out its id. */
TlStatus tl_opt_copy_node(TlPlan *p, TlPlanId id, TlPlanId child,
                          TlPlanId *out, TlError *err);

/* limit directly after sort -> the sort keeps only the first N rows (top-k);
 * limit after limit -> one limit of the smaller count. */
TlStatus tl_opt_fold_limits(TlPlan *p, TlPlanId root, TlPlanId *out,
                            TlError *err);

/* limit N by KEYS directly after a sort -> one sort node keeping the first
 * N rows per group (topn_by.c). */
TlStatus tl_opt_topn_by(TlPlan *p, TlPlanId root, TlPlanId *out, TlError *err);

/* Read only the columns some node references: every node keeps only the
 * output columns its parent needs (a project drops unused expressions), and
 * the scan gets the projection (tl_reader_project), so the CSV reader never
 * converts an unreferenced field. */
TlStatus tl_opt_pushdown_projection(TlPlan *p, TlPlanId root, TlPlanId *out,
                                    TlError *err);

/* Append one line to the optimizer's log (p->opt_log, printed by
 * `tally explain --verbose`): "  " + the formatted text + "\n". */
TlStatus tl_opt_note(TlPlan *p, TlError *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Simplify one expression to a fixed point (simplify.c).  in_pred: e is a
 * filter predicate (there null and false are the same); `where` names the
 * plan node for the log. */
TlStatus tl_opt_simplify_expr(TlPlan *p, TlExprId e, bool in_pred,
                              const char *where, TlExprId *out, TlError *err);

/* Simplify every expression of every node (simplify.c); a filter whose
 * predicate becomes `true` is dropped. */
TlStatus tl_opt_simplify(TlPlan *p, TlPlanId root, TlPlanId *out, TlError *err);

/* Move filters toward the scan (pushdown_filter.c): below projects
 * (substituting derived columns), sorts without a limit, aggregates when the
 * predicate reads only (non-float) keys; never past another filter, a
 * limit, limit-by, distinct or (for now) a join. */
TlStatus tl_opt_pushdown_filter(TlPlan *p, TlPlanId root, TlPlanId *out,
                                TlError *err);

/* A project of bare column references over a project merges into it
 * (merge_projects.c). */
TlStatus tl_opt_merge_projects(TlPlan *p, TlPlanId root, TlPlanId *out,
                               TlError *err);

/* Hash-cons the expressions of every project node, so identical
 * subexpressions share one id and the operator computes them once per
 * batch (cse.c). */
TlStatus tl_opt_cse(TlPlan *p, TlPlanId root, TlPlanId *out, TlError *err);

#endif
