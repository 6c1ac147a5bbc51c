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

/* cast(literal) -> literal, where the conversion is exact and cannot fail
 * (int64 -> float64, date -> timestamp). */
TlStatus tl_opt_fold_casts(TlPlan *p, TlPlanId root, TlPlanId *out,
                           TlError *err);

/* limit directly after sort -> the sort keeps only the first N rows (top-k);
 * limit after limit -> one limit of the smaller count. */
TlStatus tl_opt_fold_limits(TlPlan *p, TlPlanId root, TlPlanId *out,
                            TlError *err);

/* Read only the columns some node references: every node keeps only the
 * output columns its parent needs (a project drops unused expressions), and
 * the scan gets the projection (tl_reader_project), so the CSV reader never
 * converts an unreferenced field. */
TlStatus tl_opt_pushdown_projection(TlPlan *p, TlPlanId root, TlPlanId *out,
                                    TlError *err);

#endif
