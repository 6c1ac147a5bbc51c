/*
 * fn_impl.h -- internals shared by the scalar function families
 * (fn_math.c, fn_string.c, fn_date.c, fn_like.c) and their registry (fn.c).
 * Not for use outside kernels/fn*.c; the public face is fn.h.
 *
 * Each family exports a table of TlFnDef (name, kernel, typer) that fn.c
 * searches by name.  The helpers below implement the rules every kernel
 * follows:
 *   - null in any argument gives null (tl_k_fn_nulls builds the result
 *     validity once per call: all null / no nulls / the AND of the inputs'
 *     bitmaps, word by word);
 *   - a call whose arguments are all scalars is computed once and broadcast
 *     (tl_k_fn_broadcast_call), so the kernels proper only see n_rows == 1
 *     or at least one real array.
 */
#ifndef TL_KERNELS_FN_IMPL_H
#define TL_KERNELS_FN_IMPL_H

#include "fn.h"

typedef bool (*TlFnTyper)(const TlType *args, int n_args, TlType *result,
                          TlType *want);

typedef struct TlFnDef {
    const char *name;
    TlFnKernel kernel;
    TlFnTyper types;
} TlFnDef;

extern const TlFnDef tl_k_fn_math_defs[];
extern const int tl_k_fn_math_count;
extern const TlFnDef tl_k_fn_string_defs[];
extern const int tl_k_fn_string_count;
extern const TlFnDef tl_k_fn_date_defs[];
extern const int tl_k_fn_date_count;
extern const TlFnDef tl_k_fn_like_defs[];
extern const int tl_k_fn_like_count;
extern const TlFnDef tl_k_fn_format_defs[];
extern const int tl_k_fn_format_count;
extern const TlFnDef tl_k_fn_text_defs[];
extern const int tl_k_fn_text_count;
extern const TlFnDef tl_k_fn_regex_defs[];
extern const int tl_k_fn_regex_count;
extern const TlFnDef tl_k_fn_strtime_defs[];
extern const int tl_k_fn_strtime_count;
extern const TlFnDef tl_k_fn_time_defs[];
extern const int tl_k_fn_time_count;

/* True if datum d is entirely null (type null, or every element null). */
static inline bool tl_k_fn_datum_all_null(const TlDatum *d)
{
    const TlArray *a = d->array;
    return a->type == TL_TNULL || (a->length > 0 && a->null_count == a->length);
}

/* The validity of a result that is null wherever any argument is null.
 * Sets *all_null when some argument is entirely null (then *validity is
 * NULL and the caller returns tl_k_fn_null_result).  Otherwise *validity is
 * an owned bitmap of n_rows bits (offset 0), or NULL when no row is null.
 * TL_ERR_OOM on allocation failure. */
TlStatus tl_k_fn_nulls(const TlDatum *args, int n_args, int64_t n_rows,
                       bool *all_null, TlBuf **validity, TlError *err);

/* *out = n_rows nulls of type t.  TL_ERR_OOM on failure. */
TlStatus tl_k_fn_null_result(TlType t, int64_t n_rows, TlArray **out,
                             TlError *err);

/* True if every argument is a scalar (and there is at least one). */
bool tl_k_fn_all_scalar(const TlDatum *args, int n_args);

/* Run kernel k over the all-scalar args as one row, then repeat that row
 * n_rows times into *out.  An error is reported at row 0. */
TlStatus tl_k_fn_broadcast_call(TlFnKernel k, const TlDatum *args, int n_args,
                                int64_t n_rows, TlArray **out,
                                int64_t *err_row, TlError *err);

/* The first row i in [0, n) with validity bit set (NULL = all valid) and
 * bad(i) true is found by the caller; this is the validity half of that
 * test. */
static inline bool tl_k_fn_row_valid(const TlBuf *validity, int64_t i)
{
    return validity == NULL || tl_bit_get(validity->data, i);
}

/* A fixed-width values buffer for n elements of `width` bytes (never NULL
 * for n == 0).  NULL on OOM. */
static inline TlBuf *tl_k_fn_values(int64_t n, size_t width, bool zero)
{
    return tl_buf_new((size_t)n * width, zero);
}

/* Wrap the kernel prologue: all-scalar calls are computed once and
 * broadcast; `self` is the kernel function itself. */
#define TL_FN_BROADCAST(self)                                                  \
    do {                                                                       \
        if (n_rows != 1 && tl_k_fn_all_scalar(args, n_args))                   \
            return tl_k_fn_broadcast_call(self, args, n_args, n_rows, out,     \
                                          err_row, err);                       \
    } while (0)

/* First occurrence of nd[0..m) in h[0..n), or NULL.  Short needles look
 * for their first byte (a plain loop in short haystacks, memchr in longer
 * ones) and compare the rest (cheap to start, at most 16 bytes compared per
 * candidate); long needles use glibc's memmem (linear two-way). */
static inline const uint8_t *tl_k_fn_find(const uint8_t *h, size_t n,
                                          const uint8_t *nd, size_t m)
{
    if (m == 0) return h;
    if (m > n) return NULL;
    if (m > 16) return (const uint8_t *)memmem(h, n, nd, m);
    const uint8_t *end = h + (n - m + 1);
    if (end - h <= 32) { /* short haystack: a call to memchr costs more */
        for (; h < end; h++)
            if (*h == nd[0] && memcmp(h + 1, nd + 1, m - 1) == 0) return h;
        return NULL;
    }
    while (h < end) {
        const uint8_t *q = (const uint8_t *)memchr(h, nd[0], (size_t)(end - h));
        if (!q) return NULL;
        if (memcmp(q + 1, nd + 1, m - 1) == 0) return q;
        h = q + 1;
    }
    return NULL;
}

/* Lowercase ASCII compare of s[0..len) with the NUL-terminated word w. */
bool tl_k_fn_word_eq(const uint8_t *s, size_t len, const char *w);

/* fn_date.c: the ISO 8601 week-based year and week number of day d (days
 * since 1970-01-01), for week(), yearweek(), isoyear() and strftime's
 * %V and %G. */
void tl_k_iso_week(int64_t d, int64_t *iso_year, int64_t *week);

/* fn.c: the type rule of a function whose arguments are strings and
 * int64s: sig spells them ('s' string, 'i' int64; null fits either), the
 * first min_n required, the rest optional; the result is res. */
bool tl_k_fn_sig(const TlType *a, int n, const char *sig, int min_n, TlType res,
                 TlType *r, TlType *w);

#endif
