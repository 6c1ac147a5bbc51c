/*
 * kernels.h -- pure functions over whole arrays.
 *
 * A kernel takes its arguments as TlDatum (an array of n_rows values, or a
 * scalar: an array of length 1 broadcast over n_rows), and returns an owned
 * array of n_rows values.  Each kernel decides once per argument between the
 * three null paths (no nulls: validity NULL; all null; some nulls: combine
 * bitmaps word by word) and never dispatches on type or operator per row.
 * No plan, no I/O.  A kernel that can fail on data returns TL_ERR_DATA with
 * *err_row set to the first failing row and leaves the message to its caller.
 */
#ifndef TL_KERNELS_H
#define TL_KERNELS_H

#include "../lib/core/core.h"

typedef struct TlDatum {
    const TlArray *array;
    bool scalar;   /* array has length 1 and is broadcast */
} TlDatum;

/* Signature of the scalar function kernels (string, date, math families). */
typedef TlStatus (*TlFnKernel)(const TlDatum *args, int n_args, int64_t n_rows,
                               TlArray **out, int64_t *err_row, TlError *err);

/* Element i of datum d (0 for scalars). */
static inline int64_t tl_datum_row(const TlDatum *d, int64_t i)
{
    return d->scalar ? 0 : i;
}

#endif
