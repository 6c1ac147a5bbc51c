/*
 * fn.c -- the registry of the scalar function kernels, and the helpers all
 * four families share (see fn.h and fn_impl.h).
 *
 * The registry is four static tables (math, string, date, like) searched by
 * name; with about thirty names a linear scan is cheaper than any hash, and
 * the evaluator looks a function up once per expression node, not per row.
 *
 * Null rule: a function is null where any argument is null, so the result
 * validity is the AND of the argument bitmaps.  It is built once per call:
 * an entirely null argument short-circuits to an all-null result; arguments
 * without a bitmap (and scalars, which are either all null or all valid)
 * contribute nothing; the remaining bitmaps are ANDed byte by byte (after
 * re-aligning any that start mid-byte).
 */
#include "fn_impl.h"

static const struct {
    const TlFnDef *defs;
    const int *count;
} families[] = {
    {tl_k_fn_math_defs, &tl_k_fn_math_count},
    {tl_k_fn_string_defs, &tl_k_fn_string_count},
    {tl_k_fn_date_defs, &tl_k_fn_date_count},
    {tl_k_fn_like_defs, &tl_k_fn_like_count},
    {tl_k_fn_text_defs, &tl_k_fn_text_count},
    {tl_k_fn_format_defs, &tl_k_fn_format_count},
    {tl_k_fn_regex_defs, &tl_k_fn_regex_count},
    {tl_k_fn_strtime_defs, &tl_k_fn_strtime_count},
    {tl_k_fn_time_defs, &tl_k_fn_time_count},
};

static const TlFnDef *find_def(const char *name)
{
    if (!name) return NULL;
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (int i = 0; i < *families[f].count; i++)
            if (strcmp(families[f].defs[i].name, name) == 0)
                return &families[f].defs[i];
    return NULL;
}

/* The kernel for the function named `name` (lowercase), or NULL when the
 * name is not one of the math, string, date or like functions. */
TlFnKernel tl_k_fn_by_name(const char *name)
{
    const TlFnDef *d = find_def(name);
    return d ? d->kernel : NULL;
}

/* Result and argument types of `name` applied to args[0..n_args); want[i]
 * receives the type argument i must be cast to.  false if the function is
 * unknown or rejects these argument types or this arity (then *result and
 * want are unspecified). */
bool tl_k_fn_types(const char *name, const TlType *args, int n_args,
                   TlType *result, TlType *want)
{
    const TlFnDef *d = find_def(name);
    if (!d || n_args < 0 || (n_args > 0 && (!args || !want)) || !result)
        return false;
    return d->types(args, n_args, result, want);
}

/* AND len bits of src (starting at bit src_off) into dst (from bit 0). */
static bool and_bits(uint8_t *dst, const uint8_t *src, int64_t src_off,
                     int64_t len)
{
    size_t nbytes = tl_bitmap_bytes(len);
    if ((src_off & 7) == 0) {
        const uint8_t *s = src + (src_off >> 3);
        for (size_t i = 0; i < nbytes; i++) dst[i] &= s[i];
        return true;
    }
    uint8_t *tmp = tl_malloc(nbytes ? nbytes : 1);
    if (!tmp) return false;
    tl_bitmap_copy(tmp, 0, src, src_off, len);
    for (size_t i = 0; i < nbytes; i++) dst[i] &= tmp[i];
    tl_free(tmp);
    return true;
}

/* Result validity for "null if any argument is null" (see fn_impl.h). */
TlStatus tl_k_fn_nulls(const TlDatum *args, int n_args, int64_t n_rows,
                       bool *all_null, TlBuf **validity, TlError *err)
{
    TlBuf *v = NULL;
    *all_null = false;
    *validity = NULL;
    for (int k = 0; k < n_args; k++) {
        if (tl_k_fn_datum_all_null(&args[k])) {
            *all_null = true;
            return TL_OK;
        }
    }
    for (int k = 0; k < n_args; k++) {
        const TlArray *a = args[k].array;
        if (args[k].scalar || !a->validity || a->null_count == 0) continue;
        if (!v) {
            v = tl_buf_new(tl_bitmap_bytes(n_rows), false);
            if (!v) return tl_error_oom(err);
            tl_bitmap_copy(v->data, 0, a->validity->data, a->offset, n_rows);
        } else if (!and_bits(v->data, a->validity->data, a->offset, n_rows)) {
            tl_buf_release(v);
            return tl_error_oom(err);
        }
    }
    *validity = v;
    return TL_OK;
}

/* *out = n_rows nulls of type t (see fn_impl.h). */
TlStatus tl_k_fn_null_result(TlType t, int64_t n_rows, TlArray **out,
                             TlError *err)
{
    *out = tl_array_new_null(t, n_rows);
    return *out ? TL_OK : tl_error_oom(err);
}

/* True if every argument is a scalar (see fn_impl.h). */
bool tl_k_fn_all_scalar(const TlDatum *args, int n_args)
{
    if (n_args <= 0) return false;
    for (int k = 0; k < n_args; k++)
        if (!args[k].scalar) return false;
    return true;
}

/* Repeat element 0 of the one-row array r n times into an owned array. */
static TlArray *repeat_row(const TlArray *r, int64_t n)
{
    TlBuf *values = NULL, **data = NULL;
    if (r->type == TL_TNULL || !tl_array_valid(r, 0))
        return tl_array_new_null(r->type, n);
    if (r->type == TL_TBOOL) {
        values = tl_buf_new(tl_bitmap_bytes(n), false);
        if (!values) return NULL;
        memset(values->data, tl_array_bool(r, 0) ? 0xff : 0,
               tl_bitmap_bytes(n));
        return tl_array_new(TL_TBOOL, n, values, NULL, 0, NULL, 0);
    }
    size_t w = tl_type_width(r->type);
    const uint8_t *src = r->values->data + (size_t)r->offset * w;
    values = tl_buf_new((size_t)n * w, false);
    if (!values) return NULL;
    for (int64_t i = 0; i < n; i++) memcpy(values->data + (size_t)i * w, src, w);
    if (r->type == TL_TSTRING && r->n_data > 0) {
        data = tl_malloc(sizeof(TlBuf *) * r->n_data);
        if (!data) {
            tl_buf_release(values);
            return NULL;
        }
        for (uint32_t j = 0; j < r->n_data; j++) data[j] = tl_buf_retain(r->data[j]);
    }
    return tl_array_new(r->type, n, values, NULL, 0, data,
                        data ? r->n_data : 0);
}

/* Compute an all-scalar call once and broadcast it (see fn_impl.h). */
TlStatus tl_k_fn_broadcast_call(TlFnKernel k, const TlDatum *args, int n_args,
                                int64_t n_rows, TlArray **out,
                                int64_t *err_row, TlError *err)
{
    TlArray *one = NULL;
    TlStatus st = k(args, n_args, 1, &one, err_row, err);
    if (st != TL_OK) {
        if (err_row) *err_row = 0;
        return st;
    }
    *out = repeat_row(one, n_rows);
    tl_array_release(one);
    return *out ? TL_OK : tl_error_oom(err);
}

/* Case-insensitive (ASCII) equality of s[0..len) and the word w. */
bool tl_k_fn_word_eq(const uint8_t *s, size_t len, const char *w)
{
    size_t i = 0;
    for (; i < len && w[i]; i++) {
        uint8_t c = s[i];
        if (c >= 'A' && c <= 'Z') c = (uint8_t)(c + 32);
        if (c != (uint8_t)w[i]) return false;
    }
    return i == len && w[i] == 0;
}

/* See fn_impl.h. */
bool tl_k_fn_sig(const TlType *a, int n, const char *sig, int min_n, TlType res,
                 TlType *r, TlType *w)
{
    if (n < min_n || n > (int)strlen(sig)) return false;
    for (int i = 0; i < n; i++) {
        TlType want = sig[i] == 's' ? TL_TSTRING : TL_TINT64;
        if (a[i] != want && a[i] != TL_TNULL) return false;
        w[i] = want;
    }
    *r = res;
    return true;
}
