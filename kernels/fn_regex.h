/*
 * fn_regex.h -- regular expressions (PCRE2) compiled once, for the
 * regexp_* functions of fn_regex.c.
 *
 * A pattern and its option letters compile into a TlRegex, which is
 * immutable and shared by every thread that matches with it (each kernel
 * call makes its own match data).  The expression layer compiles the
 * constant patterns of an expression when it is resolved (lib/expr/regex.c)
 * and hands the compiled one to the kernel (tl_k_regex_call); a pattern that
 * is not a constant is compiled by the kernel itself when a call first
 * meets it (the last eight distinct ones of a call stay compiled), never
 * once per row.
 */
#ifndef TL_KERNELS_FN_REGEX_H
#define TL_KERNELS_FN_REGEX_H

#include "kernels.h"

typedef struct TlRegex TlRegex;

/* The option letters flags[0..nf) (DuckDB's: c i l m n p s, g where
 * `allow_g`, blanks ignored).  false with *bad = the offset of the first
 * letter that is not one of them (or a g where it is not allowed). */
bool tl_k_regex_flags_ok(const char *flags, size_t nf, bool allow_g,
                         size_t *bad);

/* Compile pattern pat[0..n) with the option letters flags[0..nf) (already
 * checked), for a full match when `full`.  TL_ERR_USAGE for an invalid
 * pattern: err->msg is the reason ("missing closing parenthesis") and *pos
 * the byte offset of the offending character; TL_ERR_OOM.  Owned result:
 * tl_k_regex_free. */
TlStatus tl_k_regex_compile(const char *pat, size_t n, const char *flags,
                            size_t nf, bool full, TlRegex **out, size_t *pos,
                            TlError *err);
void tl_k_regex_free(TlRegex *re);

/* Whether re (compiled for a partial match) matches somewhere in s[0..n),
 * as regexp_matches does: *hit.  TL_ERR_DATA when PCRE2's match limit
 * stops it (err says so), TL_ERR_OOM.  For one string at a time (column
 * names, lib/plan/select.c); arrays go through tl_k_regex_call. */
TlStatus tl_k_regex_search(const TlRegex *re, const char *s, size_t n,
                           bool *hit, TlError *err);

/* Whether function `name` (lowercase) is one of the regexp functions, and
 * if so the index of its pattern argument and of its options argument
 * (*flags_arg), whether its options may hold g, and whether it matches the
 * whole string. */
bool tl_k_regex_fn(const char *name, int *flags_arg, bool *allow_g,
                   bool *full);

/* Run the regexp function `name` over args as its kernel would, with `re`
 * the compiled pattern and options of args[1] and the options argument
 * (NULL: compile them here). */
TlStatus tl_k_regex_call(const char *name, const TlRegex *re,
                         const TlDatum *args, int n_args, int64_t n_rows,
                         TlArray **out, int64_t *err_row, TlError *err);

#endif
