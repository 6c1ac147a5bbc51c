/*
 * core_kernels.h -- the expression kernels the evaluator calls per node:
 * arithmetic, comparison, Kleene logic, null tests, IN lists, casts, and the
 * selection helpers behind lazy if/case/coalesce.
 *
 * Conventions (kernels.h): arguments are TlDatum, borrowed; a scalar datum is
 * a length-1 array broadcast over n rows; results are owned arrays of n rows.
 * Each kernel dispatches ONCE per call on type and operator to a typed loop,
 * and decides once per argument between the three null paths (no nulls: no
 * validity; all null: the result is all null without running the loop; some
 * nulls: validities ANDed 64 bits at a time).  Values under null rows are
 * unspecified in inputs and may be garbage: loops compute them anyway (it is
 * cheaper than branching) and only a detected failure looks at validity.
 *
 * Failures on data (overflow, bad cast) return TL_ERR_DATA with *err_row set
 * to the first failing valid row and NO message; the caller (lib/expr/eval.c)
 * writes it with the expression and a caret.  Out of memory is TL_ERR_OOM
 * with err filled.
 *
 * Bitmaps built here are arrays of uint64_t words (bit i of the array is bit
 * i%64 of word i/64, i.e. Arrow's LSB-first order on a little-endian host),
 * zero beyond bit n, wrapped in a TlBuf.
 */
#ifndef TL_CORE_KERNELS_H
#define TL_CORE_KERNELS_H

#include "../lib/core/core.h"
#include "kernels.h"

/* ------------------------------------------------------------ helpers */

/* Null shape of a datum, decided once per call. */
typedef enum TlKNulls {
    TL_K_NO_NULLS,   /* validity NULL */
    TL_K_ALL_NULL,   /* type null, or null_count == length (> 0) */
    TL_K_SOME_NULLS, /* an array with a validity bitmap */
} TlKNulls;

static inline TlKNulls tl_k_nulls(const TlDatum *d)
{
    const TlArray *a = d->array;
    if (a->type == TL_TNULL) return TL_K_ALL_NULL;
    if (a->null_count == 0) return TL_K_NO_NULLS;
    if (a->null_count == a->length) return TL_K_ALL_NULL;
    return TL_K_SOME_NULLS;
}

static inline int64_t tl_k_words(int64_t n_bits)
{
    return (n_bits + 63) / 64;
}

/* A new zeroed (v false) or all-set (v true) bitmap of n bits as words,
 * bits past n zero.  tl_malloc'd; NULL on OOM. */
uint64_t *tl_k_bits_new(int64_t n, bool v);
/* A word-aligned copy of bits [off, off+n) of src, bits past n zero.
 * tl_malloc'd; NULL on OOM. */
uint64_t *tl_k_bits_dup(const uint8_t *src, int64_t off, int64_t n);
/* Wrap words (from tl_k_bits_new/dup) of an n-bit bitmap as a buffer; takes
 * them over, also on failure.  NULL on OOM. */
TlBuf *tl_k_bits_buf(uint64_t *words, int64_t n);
/* A values buffer for n elements of type t (bool: a zeroed word bitmap).
 * NULL on OOM. */
TlBuf *tl_k_values_new(TlType t, int64_t n);

/* The validity of a result over n rows that is null wherever one of the
 * args is null: *all_null is set when every row is null (then *validity is
 * NULL); otherwise *validity is NULL (no nulls) or an owned bitmap buffer. */
TlStatus tl_k_validity_and(const TlDatum *args, int n_args, int64_t n,
                           TlBuf **validity, bool *all_null, TlError *err);
/* The validity words of datum d over n rows (broadcast for scalars) as a new
 * word bitmap; NULL on OOM. */
uint64_t *tl_k_valid_words(const TlDatum *d, int64_t n);
/* The value words of bool datum d over n rows (broadcast for scalars); NULL
 * on OOM.  Bits under null rows are unspecified. */
uint64_t *tl_k_bool_words(const TlDatum *d, int64_t n);

/* Scalar datum d repeated n times as an array (strings share the data
 * buffers).  NULL on OOM. */
TlArray *tl_k_broadcast(const TlArray *scalar, int64_t n);

/* ---------------------------------------------------------- arithmetic */

typedef enum TlKArith {
    TL_K_ADD, TL_K_SUB, TL_K_MUL, TL_K_DIV, TL_K_IDIV, TL_K_MOD,
} TlKArith;

/* a op b for a, b of one type, int64 or float64 (TL_K_DIV: float64 only).
 * int64: + - * fail on overflow; // truncates toward zero and % takes the
 * dividend's sign, both null on a zero divisor, INT64_MIN // -1 fails.
 * float64: IEEE; // is plain division, % is fmod. */
TlStatus tl_k_arith(TlKArith op, const TlDatum *a, const TlDatum *b,
                    int64_t n, TlArray **out, int64_t *err_row, TlError *err);
/* -a for int64 (fails on INT64_MIN) or float64. */
TlStatus tl_k_neg(const TlDatum *a, int64_t n, TlArray **out,
                  int64_t *err_row, TlError *err);
/* date + days (subtract: date - days), days int64; fails when the result
 * leaves the int32 day range. */
TlStatus tl_k_date_add(const TlDatum *date, const TlDatum *days, bool subtract,
                       int64_t n, TlArray **out, int64_t *err_row,
                       TlError *err);
/* date - date in days, int64. */
TlStatus tl_k_date_diff(const TlDatum *a, const TlDatum *b, int64_t n,
                        TlArray **out, TlError *err);
/* The || operator over n_args string datums: null if any is null. */
TlStatus tl_k_concat_str(const TlDatum *args, int n_args, int64_t n,
                         TlArray **out, TlError *err);

/* ---------------------------------------------------------- comparison */

typedef enum TlKCmp {
    TL_K_EQ, TL_K_NE, TL_K_LT, TL_K_LE, TL_K_GT, TL_K_GE,
} TlKCmp;

/* a op b -> bool for a, b of one type (either may be type null: all null).
 * Floats: NaN equals NaN and is greater than every number, -0.0 == 0.0.
 * Strings by bytes.  Bools false < true. */
TlStatus tl_k_compare(TlKCmp op, const TlDatum *a, const TlDatum *b,
                      int64_t n, TlArray **out, TlError *err);

/* ------------------------------------------------------- Kleene logic */

/* Kleene and / or of two bool (or null) datums; not of one. */
TlStatus tl_k_and(const TlDatum *a, const TlDatum *b, int64_t n,
                  TlArray **out, TlError *err);
TlStatus tl_k_or(const TlDatum *a, const TlDatum *b, int64_t n,
                 TlArray **out, TlError *err);
TlStatus tl_k_not(const TlDatum *a, int64_t n, TlArray **out, TlError *err);

/* --------------------------------------------------------------- nulls */

/* a is null (negate: is not null) -> bool, never null. */
TlStatus tl_k_is_null(const TlDatum *a, bool negate, int64_t n,
                      TlArray **out, TlError *err);
/* The rows of a (over n rows) that are null (want_null) or valid, as a
 * tl_malloc'd index list (*rows NULL when *n_sel is 0). */
TlStatus tl_k_null_rows(const TlDatum *a, bool want_null, int64_t n,
                        uint32_t **rows, int64_t *n_sel, TlError *err);

/* ------------------------------------------------------------- IN lists */

#define TL_K_IN_CHAIN_MAX 16

/* x in (vals...) where every val is a scalar of x's type (or type null):
 * null when x is null, true on a match, null when there is no match and a
 * val is null, else false; negate gives not in (Kleene not).  Up to
 * TL_K_IN_CHAIN_MAX values are compared in a branch-free chain; more go
 * into a hash set.  Floats match as compare does (NaN = NaN, -0.0 = 0.0). */
TlStatus tl_k_in_list(const TlDatum *x, const TlArray *const *vals,
                      int n_vals, bool negate, int64_t n, TlArray **out,
                      TlError *err);

/* --------------------------------------------------------------- casts */

/* Whether cast(from as to) is defined (tl_cast_array accepts it). */
bool tl_k_cast_allowed(TlType from, TlType to);
/* Cast a whole array to type `to` (the same conversions as cast(); strings use
 * lib/core/text.h).  When try_ is true unconvertible values become null;
 * otherwise *bad_row is set to the first failing row and TL_ERR_DATA is
 * returned with no message (the caller writes it). */
TlStatus tl_cast_array(const TlArray *a, TlType to, bool try_, TlArray **out,
                       int64_t *bad_row, TlError *err);

/* ------------------------------------------------------------ selection */

/* The rows where bool datum b is true (null and false drop), as a
 * tl_malloc'd index list; *rows is NULL when *n_sel is 0 or n.  */
TlStatus tl_k_sel_true(const TlDatum *b, int64_t n, uint32_t **rows,
                       int64_t *n_sel, TlError *err);
/* Split rows [0, n) by bool datum b: true rows into *t (*n_t), false and
 * null rows into *f (*n_f); both lists tl_malloc'd (NULL when empty). */
TlStatus tl_k_partition(const TlDatum *b, int64_t n, uint32_t **t,
                        int64_t *n_t, uint32_t **f, int64_t *n_f,
                        TlError *err);
/* Map positions through a selection: out[i] = base[pos[i]] (base NULL is
 * the identity). */
void tl_k_sel_compose(const uint32_t *base, const uint32_t *pos, int64_t n,
                      uint32_t *out);

/* One piece of a scattered result: value row j (or the scalar, when
 * value.scalar) lands in row rows[j] of the output, for j < n_rows. */
typedef struct TlKPart {
    TlDatum value;
    const uint32_t *rows;
    int64_t n_rows;
} TlKPart;

/* An array of n rows of `type` built from the parts, applied in order (a
 * later part overwrites an earlier one); rows no part covers are null.
 * Every part's value has `type` (or type null).  String results share the
 * parts' data buffers. */
TlStatus tl_k_scatter(TlType type, int64_t n, const TlKPart *parts,
                      int n_parts, TlArray **out, TlError *err);

#endif
