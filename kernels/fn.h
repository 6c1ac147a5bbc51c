/*
 * fn.h -- the scalar function kernels: math, strings, dates, LIKE and
 * regular expressions.
 *
 * Functions are keyed by their lowercase name as spelled in TlOpInfo.name
 * (lib/expr/expr.h); kernels/ does not include lib/expr, so the evaluator maps
 * op -> tl_op_info(op)->name -> kernel once per expression node.  The names:
 *
 *   math     abs round floor ceil sqrt ln exp pow
 *   strings  length lower upper trim ltrim rtrim substr replace contains
 *            starts_with ends_with split_part concat
 *   text     left right lpad rpad reverse repeat strpos initcap (fn_text.c)
 *   format   format printf (fn_format.c)
 *   dates    year month day hour minute second date_trunc
 *   pattern  like ilike
 *   regexp   regexp_matches regexp_full_match regexp_replace regexp_extract
 *            regexp_split_to_array (fn_regex.h: compiled once by lib/expr)
 *
 * Typing happens before execution: tl_k_fn_types() takes the resolved
 * argument types and says what each argument must be cast to (want[i], which
 * may be its own type) and the result type.  The kernel is then called with
 * arguments of exactly the wanted types (a TL_TNULL argument may also be
 * passed as an all-null array of type TL_TNULL; kernels accept it).
 *
 * Kernels follow kernels.h: arguments borrowed, the result array owned by
 * the caller, TL_ERR_DATA with *err_row = first failing row and a message
 * without location (e.g. "integer overflow") on data errors.
 */
#ifndef TL_KERNELS_FN_H
#define TL_KERNELS_FN_H

#include "kernels.h"

/* The kernel of the function named `name` (lowercase), or NULL if `name` is
 * not one of this family's functions. */
TlFnKernel tl_k_fn_by_name(const char *name);

/* Given the resolved argument types args[0..n_args), set *result and want[i]
 * (the type argument i must be cast to, possibly its own type).  Returns
 * false if the function is unknown or does not accept these arguments. */
bool tl_k_fn_types(const char *name, const TlType *args, int n_args,
                   TlType *result, TlType *want);

#endif
