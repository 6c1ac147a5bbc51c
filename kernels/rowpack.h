/*
 * rowpack.h -- columns packed into fixed-width rows, and back.
 *
 * Operators that read rows at random (the sort's output gather, the join's
 * right table) keep them packed: each row's values side by side at fixed
 * offsets, so one random row costs one or two cache lines instead of one
 * miss per column.  A value takes tl_k_rowpack_width bytes: 8 an int64,
 * float64 or timestamp, 4 a date, 1 a bool (0 or 1), 16 a string view,
 * nothing for type null.  The caller lays out the row (which columns,
 * their offsets, its width) and places the null bits: one bit per column,
 * bit (col & 7) of byte col / 8 of a row's mask, which may lie inside the
 * row (the join) or in an array beside the rows (the sort: only chunks
 * with nulls pay for it).
 *
 * A string view longer than TL_VIEW_INLINE names its data block by
 * number; the packed view's number is rebased (+ base when packing, +
 * base[part[j]] when unpacking) so rows from many arrays can share one
 * list of blocks per chunk, per block of rows, or per output column.
 *
 * Not the row encoding (rowenc.h): packed values are the arrays' own
 * bytes, for moving rows, not for comparing them.
 */
#ifndef TL_KERNELS_ROWPACK_H
#define TL_KERNELS_ROWPACK_H

#include "../lib/core/core.h"

/* Bytes a value of type t takes in a packed row. */
size_t tl_k_rowpack_width(TlType t);

/* Pack the values of rows [r0, r1) of column a, whose row type is t (a
 * may be of type null: zero bytes are written), into rows: row r's value
 * at dst + r * stride, taken from row sel[r] of a (sel NULL: row r).
 * Views' block numbers grow by base. */
void tl_k_rowpack_put(const TlArray *a, TlType t, const uint32_t *sel, int64_t r0, int64_t r1,
                      uint8_t *dst, size_t stride, uint32_t base);

/* Set column col's null bit in the masks of rows [0, n) (at mask + r *
 * stride) where row sel[r] (or r) of a is null: every row of a type-null
 * a.  The masks start cleared.  Returns whether some row is null. */
bool tl_k_rowpack_put_nulls(const TlArray *a, const uint32_t *sel, int64_t n, uint8_t *mask,
                            size_t stride, int col);

/* Unpack m packed rows' values of one column of type t (not null): row
 * j's value at src[j] + off goes to element i0 + j of vals, the column's
 * values buffer (a bool column's bits, cleared beforehand).  With base
 * not NULL, a long view's block number grows by base[part[j]]. */
void tl_k_rowpack_get(TlType t, const uint8_t *const *src, int m, size_t off,
                      const uint32_t *base, const uint32_t *part, uint8_t *vals, int64_t i0);

/* Unpack m rows' null bits of column col: row j's mask at mask[j] + off,
 * or no null when mask[j] is NULL.  Sets bit i0 + j of valid (cleared
 * beforehand) for the rows that are not null; returns the nulls. */
int64_t tl_k_rowpack_get_valid(const uint8_t *const *mask, int m, size_t off, int col,
                               uint8_t *valid, int64_t i0);

#endif
