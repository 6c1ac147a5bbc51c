/*
 * fn.c -- the registry of the scalar function kernels (see fn.h).
 *
 * Stub: filled in with the math, string, date and LIKE families.
 */
#include "fn.h"

/* The kernel for `name`, or NULL (see fn.h). */
TlFnKernel tl_k_fn_by_name(const char *name)
{
    (void)name;
    return NULL;
}

/* Argument/result typing for `name` (see fn.h). */
bool tl_k_fn_types(const char *name, const TlType *args, int n_args,
                   TlType *result, TlType *want)
{
    (void)name; (void)args; (void)n_args; (void)result; (void)want;
    return false;
}
