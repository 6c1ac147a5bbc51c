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
 *   dates    year month day hour minute second dayofweek isodow dayofyear
 *            week quarter yearweek isoyear date_trunc date_diff (fn_date.c)
 *            strftime strptime try_strptime (fn_strtime.c)
 *            epoch epoch_ms epoch_us to_timestamp date_add (fn_time.c)
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

/* Whether fmt[0..len) is a valid strftime (parse false) or strptime (parse
 * true) format; if not, *bad is the offset of the offending % and msg (of
 * cap bytes) says why.  For constant formats, checked before any row. */
bool tl_k_time_format_check(const char *fmt, size_t len, bool parse,
                            size_t *bad, char *msg, size_t cap);

/* Whether part[0..len) names a date part of date_trunc and date_diff. */
bool tl_k_date_part_known(const char *part, size_t len);

/* An interval, as DuckDB keeps one: months, days and microseconds apart. */
typedef struct TlInterval {
    int64_t months, days, micros;
} TlInterval;

/* Parse an interval's text ("1 month 3 days", "2 hours ago", "01:30:00",
 * "90" seconds).  false on a bad text: *bad is the offset of the bad token
 * and msg (cap bytes) the reason. */
bool tl_k_interval_parse(const char *s, size_t len, TlInterval *iv,
                         size_t *bad, char *msg, size_t cap);

/* *out = t + iv (t - iv when negate): t a timestamp datum, iv a string
 * datum of interval texts.  Months first (the day clamped to the month's
 * end), then days, then time.  TL_ERR_DATA at *err_row on a bad interval
 * text or a result out of range. */
TlStatus tl_k_add_interval(const TlDatum *t, const TlDatum *iv, bool negate,
                           int64_t n_rows, TlArray **out, int64_t *err_row,
                           TlError *err);

#endif
