/*
 * steps.h -- what plan.c and runs.c share (private to lib/plan): the
 * parsed items of a step and the helpers that turn them into nodes, and
 * the runs of steps planned as one node (runs.c).
 */
#ifndef TL_PLAN_STEPS_H
#define TL_PLAN_STEPS_H

#include "../dsl/dsl.h"
#include "plan.h"

/* A growable list of parsed items (tl_parse_items hands out one text's). */
typedef struct TlItemVec {
    TlItem *v;
    uint32_t n, cap;
} TlItemVec;

/* Parse texts[0..n) as items of `kind` into iv.  When names[i] is set (JSON
 * objects: the name came as the key), texts[i] is one bare expression named
 * names[i]. */
TlStatus tl_plan_parse_list(TlPlan *p, const TallyText *texts, int n,
                            char *const *names, const char *origin, bool split,
                            TlItemKind kind, TlItemVec *iv, TlError *err);
/* Append items[0..n) to iv. */
TlStatus tl_plan_items_add(TlItemVec *iv, const TlItem *items, uint32_t n,
                           TlError *err);
/* Replace the selector items of iv (TlItem.sel) by one item of `kind` per
 * column of `in` they match, in schema order (select.c); a selector that
 * matches nothing is an error with a caret.  numbers: a plain number among
 * the other items is an error that suggests #N (sort, group-by). */
TlStatus tl_plan_expand(TlPlan *p, const TlSchema *in, TlItemKind kind,
                        bool numbers, TlItemVec *iv, TlError *err);
/* Push a resolved reference to column i of s. */
TlStatus tl_plan_col_ref(TlPlan *p, const TlSchema *s, int i, TlExprId *out,
                         TlError *err);
/* A project that passes columns through, in `order` (indexes into the
 * child schema), renamed to names[k] (or kept when names is NULL). */
TlStatus tl_plan_push_passthrough(TlPlan *p, TlPlanId child, const int *order,
                                  int n, const char *const *names, TlPlanId *id,
                                  TlError *err);
/* The predicates of a filter step, resolved against `in` and checked to be
 * boolean, into preds[0..iv->n) (iv: its parsed items; *preds tl_malloc'd). */
TlStatus tl_plan_filter_preds(TlPlan *p, const TallyStep *s, const TlSchema *in,
                              TlItemVec *iv, TlExprId **preds, TlError *err);
/* The items of a rename step (flags: OLD:NEW items; JSON: names[i] ->
 * items[i]), name = OLD, name2 = NEW. */
TlStatus tl_plan_rename_items(TlPlan *p, const TallyStep *s, TlItemVec *iv,
                              TlError *err);
/* One filter node per predicate over *cur. */
TlStatus tl_plan_push_filters(TlPlan *p, const TlExprId *preds, uint32_t n,
                              TlPlanId *cur, TlError *err);

/* An open run of `with` items (see with_one): the project node `node`
 * over a child of child_n columns, whose expression list is pushed when the
 * run closes.  Columns >= child_n are the appended ones. */
typedef struct TlWithRun {
    TlPlanId node;          /* TL_NO_ID: no run open */
    int child_n;
    int replaced;           /* the column the first item replaced, or -1 */
    TlExprId *exprs;
    uint32_t n, cap;
    TlSchema *out;          /* the node's schema, grown in place */
    TlExprId *guards;       /* filters inside the run (TlPlanNode.guards) */
    int32_t *guard_at;      /* per guard: the outputs made before it */
    uint32_t n_guards, cap_guards;
} TlWithRun;

/* Close the open run: its expression and guard lists go into the plan. */
TlStatus tl_plan_with_close(TlPlan *p, TlWithRun *w, TlError *err);
/* A with step: each item joins the open run or starts one. */
TlStatus tl_plan_step_with(TlPlan *p, const TallyStep *s, TlWithRun *w,
                           TlPlanId *cur, TlError *err);
/* A filter step between two with steps: the run's guards (runs.c). */
TlStatus tl_plan_filter_run(TlPlan *p, const TallyStep *s, TlWithRun *w,
                            TlPlanId *cur, TlError *err);
/* Consecutive drop steps first..*last as one projection (runs.c). */
TlStatus tl_plan_drop_run(TlPlan *p, const TallySpec *spec, int first, int *last,
                          TlPlanId *cur, int32_t *by, TlError *err);

/* What a rename step of a run did, for dropped_hint: old[i] -> new[i]. */
typedef struct TlRenamed {
    const char **old, **new_;
    uint32_t n;
} TlRenamed;

/* Consecutive rename steps first..*last as one projection (runs.c);
 * ren[k] (tl_malloc'd, the caller frees it with tl_plan_renamed_free)
 * records step k's renames. */
TlStatus tl_plan_rename_run(TlPlan *p, const TallySpec *spec, int first,
                            int *last, TlPlanId *cur, TlRenamed **ren,
                            TlError *err);
void tl_plan_renamed_free(TlRenamed *r); /* NULL-safe */

#endif
