/*
 * opt.h -- the optimizer's entry point; its rules are in rules.h.
 */
#ifndef TL_OPT_H
#define TL_OPT_H

#include "../plan/plan.h"

/* Optimize (opt.c): sets p->opt_root. */
TlStatus tl_opt_run(TlPlan *p, TlError *err);

#endif
