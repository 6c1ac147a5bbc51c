/*
 * nulls.c -- `is [not] null` and the null-row lists behind coalesce.
 *
 * Both read only the validity bitmap, decided once per call: no nulls
 * (validity NULL) and all null (type null or null_count == length) need no
 * bitmap at all; some nulls copy the validity into words and work 64 rows
 * at a time.  `is null` is never null itself, so its result has no
 * validity.
 */
#include "core_kernels.h"

/* a is null (negate: is not null), a bool array without nulls. */
TlStatus tl_k_is_null(const TlDatum *a, bool negate, int64_t n,
                      TlArray **out, TlError *err)
{
    uint64_t *w;
    TlBuf *values;
    int64_t k, nw = tl_k_words(n);
    *out = NULL;
    switch (tl_k_nulls(a)) {
    case TL_K_NO_NULLS:
        w = tl_k_bits_new(n, negate);
        break;
    case TL_K_ALL_NULL:
        w = tl_k_bits_new(n, !negate);
        break;
    default:
        w = tl_k_valid_words(a, n); /* set = valid = not null */
        if (w && !negate) {
            for (k = 0; k < nw; k++) w[k] = ~w[k];
            if (n & 63) w[nw - 1] &= (UINT64_C(1) << (n & 63)) - 1;
        }
        break;
    }
    if (!w) return tl_error_oom(err);
    values = tl_k_bits_buf(w, n);
    if (!values) return tl_error_oom(err);
    *out = tl_array_new(TL_TBOOL, n, values, NULL, 0, NULL, 0);
    return *out ? TL_OK : tl_error_oom(err);
}

/* The rows of a that are null (want_null) or valid (see core_kernels.h). */
TlStatus tl_k_null_rows(const TlDatum *a, bool want_null, int64_t n,
                        uint32_t **rows, int64_t *n_sel, TlError *err)
{
    TlKNulls kind = tl_k_nulls(a);
    uint64_t *w;
    int64_t k, j = 0, m = 0, nw = tl_k_words(n);
    *rows = NULL;
    *n_sel = 0;
    if (n == 0) return TL_OK;
    if (kind != TL_K_SOME_NULLS) {
        bool every = (kind == TL_K_ALL_NULL) == want_null;
        if (!every) return TL_OK;
        *rows = tl_malloc(sizeof(uint32_t) * (size_t)n);
        if (!*rows) return tl_error_oom(err);
        for (k = 0; k < n; k++) (*rows)[k] = (uint32_t)k;
        *n_sel = n;
        return TL_OK;
    }
    w = tl_k_valid_words(a, n);
    if (!w) return tl_error_oom(err);
    if (want_null) {
        for (k = 0; k < nw; k++) w[k] = ~w[k];
        if (n & 63) w[nw - 1] &= (UINT64_C(1) << (n & 63)) - 1;
    }
    for (k = 0; k < nw; k++) m += __builtin_popcountll(w[k]);
    if (m > 0) {
        *rows = tl_malloc(sizeof(uint32_t) * (size_t)m);
        if (!*rows) {
            tl_free(w);
            return tl_error_oom(err);
        }
        for (k = 0; k < nw; k++) {
            uint64_t x = w[k];
            while (x) {
                (*rows)[j++] = (uint32_t)(k * 64 + __builtin_ctzll(x));
                x &= x - 1;
            }
        }
    }
    *n_sel = m;
    tl_free(w);
    return TL_OK;
}
