/*
 * fn_math.c -- abs round floor ceil sqrt ln exp pow over whole arrays.
 *
 * Types (DuckDB's): abs, round, floor and ceil keep the argument's type
 * (int64 or float64; floor/ceil of an int is the int itself, shared without
 * a copy); sqrt, ln, exp and pow compute in float64 (ints are cast by the
 * caller: want[] = float64).  round(x, n): n is an int64 number of decimal
 * digits, negative n rounds to tens, hundreds, ...; halves round away from
 * zero, and round of an int stays an int.
 *
 * Errors: abs(INT64_MIN) and an int round that leaves int64 are "integer
 * overflow"; sqrt of a negative and ln of zero or a negative are errors as in
 * DuckDB.  The loops compute every row (null slots included: their values
 * are arbitrary but harmless) and only note that something went wrong; the
 * first failing row that is not null is then looked up once, off the hot
 * path.  NaN is never an error (sqrt(nan) = nan).
 */
#include <math.h>

#include "fn_impl.h"

/* ------------------------------------------------------------ typing */

static bool is_num(TlType t) { return t == TL_TINT64 || t == TL_TFLOAT64; }

/* abs / floor / ceil: one number, same type out (null -> int64). */
static bool types_same(const TlType *a, int n, TlType *res, TlType *want)
{
    if (n != 1) return false;
    if (a[0] == TL_TNULL) want[0] = TL_TINT64;
    else if (is_num(a[0])) want[0] = a[0];
    else return false;
    *res = want[0];
    return true;
}

/* round(x[, n]). */
static bool types_round(const TlType *a, int n, TlType *res, TlType *want)
{
    if (n != 1 && n != 2) return false;
    if (!types_same(a, 1, res, want)) return false;
    if (n == 2) {
        if (a[1] != TL_TINT64 && a[1] != TL_TNULL) return false;
        want[1] = TL_TINT64;
    }
    return true;
}

/* sqrt / ln / exp (1 arg) and pow (2 args): float64 in and out. */
static bool types_float(const TlType *a, int n, int want_n, TlType *res,
                        TlType *want)
{
    if (n != want_n) return false;
    for (int i = 0; i < n; i++) {
        if (a[i] != TL_TNULL && !is_num(a[i])) return false;
        want[i] = TL_TFLOAT64;
    }
    *res = TL_TFLOAT64;
    return true;
}
static bool types_float1(const TlType *a, int n, TlType *res, TlType *want)
{
    return types_float(a, n, 1, res, want);
}
static bool types_float2(const TlType *a, int n, TlType *res, TlType *want)
{
    return types_float(a, n, 2, res, want);
}

/* ----------------------------------------------------------- helpers */

/* The numeric type the kernel produces for argument array a (a type-null
 * argument counts as int64, as in the typers). */
static TlType num_type(const TlArray *a)
{
    return a->type == TL_TFLOAT64 ? TL_TFLOAT64 : TL_TINT64;
}

/* Common prologue of the unary kernels: type-null/all-null input -> null
 * result; otherwise the result validity (a copy of the input's). */
static TlStatus unary_prologue(const TlDatum *args, int64_t n_rows, TlType t,
                               TlArray **out, TlBuf **validity, bool *done,
                               TlError *err)
{
    bool all_null;
    *done = false;
    TL_TRY(tl_k_fn_nulls(args, 1, n_rows, &all_null, validity, err));
    if (all_null) {
        *done = true;
        return tl_k_fn_null_result(t, n_rows, out, err);
    }
    return TL_OK;
}

static TlStatus finish(TlType t, int64_t n_rows, TlBuf *values,
                       TlBuf *validity, TlArray **out, TlError *err)
{
    *out = tl_array_new(t, n_rows, values, validity, -1, NULL, 0);
    return *out ? TL_OK : tl_error_oom(err);
}

/* ------------------------------------------------------------------ abs */

static TlStatus k_abs(const TlDatum *args, int n_args, int64_t n_rows,
                      TlArray **out, int64_t *err_row, TlError *err)
{
    TlBuf *validity = NULL, *values = NULL;
    bool done;
    TL_FN_BROADCAST(k_abs);
    const TlArray *a = args[0].array;
    TlType t = num_type(a);
    TL_TRY(unary_prologue(args, n_rows, t, out, &validity, &done, err));
    if (done) return TL_OK;
    values = tl_k_fn_values(n_rows, 8, false);
    if (!values) goto oom;
    if (t == TL_TFLOAT64) {
        const double *x = tl_array_f64(a);
        double *y = (double *)values->data;
        for (int64_t i = 0; i < n_rows; i++) y[i] = fabs(x[i]);
    } else {
        const int64_t *x = tl_array_i64(a);
        int64_t *y = (int64_t *)values->data;
        bool bad = false;
        for (int64_t i = 0; i < n_rows; i++) {
            uint64_t u = (uint64_t)x[i];
            y[i] = x[i] < 0 ? (int64_t)(0 - u) : x[i];
            bad |= x[i] == INT64_MIN;
        }
        if (bad) {
            for (int64_t i = 0; i < n_rows; i++) {
                if (x[i] == INT64_MIN && tl_k_fn_row_valid(validity, i)) {
                    *err_row = i;
                    tl_buf_release(values);
                    tl_buf_release(validity);
                    return tl_error(err, TL_ERR_DATA, "integer overflow");
                }
            }
        }
    }
    return finish(t, n_rows, values, validity, out, err);
oom:
    tl_buf_release(validity);
    return tl_error_oom(err);
}

/* --------------------------------------------------------- floor / ceil */

static TlStatus floor_ceil(const TlDatum *args, int n_args, int64_t n_rows,
                           TlArray **out, TlError *err, bool is_floor)
{
    TlBuf *validity = NULL, *values = NULL;
    bool done;
    const TlArray *a = args[0].array;
    TlType t = num_type(a);
    TL_TRY(unary_prologue(args, n_rows, t, out, &validity, &done, err));
    if (done) return TL_OK;
    if (t == TL_TINT64) {
        /* Integers are their own floor: share the input. */
        tl_buf_release(validity);
        if (a->length == n_rows) {
            *out = tl_array_retain((TlArray *)a);
            return TL_OK;
        }
        *out = tl_array_slice((TlArray *)a, 0, n_rows);
        return *out ? TL_OK : tl_error_oom(err);
    }
    values = tl_k_fn_values(n_rows, 8, false);
    if (!values) {
        tl_buf_release(validity);
        return tl_error_oom(err);
    }
    const double *x = tl_array_f64(a);
    double *y = (double *)values->data;
    if (is_floor)
        for (int64_t i = 0; i < n_rows; i++) y[i] = floor(x[i]);
    else
        for (int64_t i = 0; i < n_rows; i++) y[i] = ceil(x[i]);
    return finish(t, n_rows, values, validity, out, err);
}

static TlStatus k_floor(const TlDatum *args, int n_args, int64_t n_rows,
                        TlArray **out, int64_t *err_row, TlError *err)
{
    TL_FN_BROADCAST(k_floor);
    return floor_ceil(args, n_args, n_rows, out, err, true);
}

static TlStatus k_ceil(const TlDatum *args, int n_args, int64_t n_rows,
                       TlArray **out, int64_t *err_row, TlError *err)
{
    TL_FN_BROADCAST(k_ceil);
    return floor_ceil(args, n_args, n_rows, out, err, false);
}

/* ---------------------------------------------------------------- round */

/* DuckDB's float rounding to `digits` decimals (halves away from zero). */
static double round_f64(double x, int64_t digits)
{
    if (digits == 0) return round(x);
    if (digits < 0) {
        double m = pow(10.0, -(double)digits);
        double r = round(x / m) * m;
        return (isinf(r) || isnan(r)) ? 0.0 : r;
    }
    double m = pow(10.0, (double)digits);
    double r = round(x * m) / m;
    return (isinf(r) || isnan(r)) ? x : r;
}

/* Integer rounding to 10^-digits (digits < 0), halves away from zero.
 * false on int64 overflow. */
static bool round_i64(int64_t x, int64_t digits, int64_t *y)
{
    if (digits >= 0) {
        *y = x;
        return true;
    }
    if (digits < -38) { /* 10^39 overflows int128; every int64 rounds to 0 */
        *y = 0;
        return true;
    }
    __int128 p = 1;
    for (int64_t k = 0; k < -digits; k++) p *= 10;
    __int128 v = x, half = p / 2;
    __int128 q = (v + (v < 0 ? -half : half)) / p;
    __int128 r = q * p;
    if (r > INT64_MAX || r < INT64_MIN) return false;
    *y = (int64_t)r;
    return true;
}

static TlStatus k_round(const TlDatum *args, int n_args, int64_t n_rows,
                        TlArray **out, int64_t *err_row, TlError *err)
{
    TlBuf *validity = NULL, *values = NULL;
    bool all_null;
    TL_FN_BROADCAST(k_round);
    const TlArray *a = args[0].array;
    TlType t = num_type(a);
    TL_TRY(tl_k_fn_nulls(args, n_args, n_rows, &all_null, &validity, err));
    if (all_null) return tl_k_fn_null_result(t, n_rows, out, err);
    values = tl_k_fn_values(n_rows, 8, false);
    if (!values) {
        tl_buf_release(validity);
        return tl_error_oom(err);
    }
    const TlDatum *dn = n_args == 2 ? &args[1] : NULL;
    const int64_t *nd = dn ? tl_array_i64(dn->array) : NULL;
    bool n_scalar = !dn || dn->scalar;
    int64_t n0 = dn ? nd[0] : 0;
    if (t == TL_TFLOAT64) {
        const double *x = tl_array_f64(a);
        double *y = (double *)values->data;
        if (n_scalar && n0 == 0)
            for (int64_t i = 0; i < n_rows; i++) y[i] = round(x[i]);
        else if (n_scalar)
            for (int64_t i = 0; i < n_rows; i++) y[i] = round_f64(x[i], n0);
        else
            for (int64_t i = 0; i < n_rows; i++) y[i] = round_f64(x[i], nd[i]);
    } else {
        const int64_t *x = tl_array_i64(a);
        int64_t *y = (int64_t *)values->data;
        if (n_scalar && n0 >= 0) {
            memcpy(y, x, (size_t)n_rows * 8);
        } else {
            for (int64_t i = 0; i < n_rows; i++) {
                if (!round_i64(x[i], n_scalar ? n0 : nd[i], &y[i])) {
                    if (!tl_k_fn_row_valid(validity, i)) {
                        y[i] = 0;
                        continue;
                    }
                    *err_row = i;
                    tl_buf_release(values);
                    tl_buf_release(validity);
                    return tl_error(err, TL_ERR_DATA, "integer overflow");
                }
            }
        }
    }
    return finish(t, n_rows, values, validity, out, err);
}

/* -------------------------------------------------- sqrt ln exp pow */

enum { F_SQRT, F_LN, F_EXP };

static TlStatus float_unary(const TlDatum *args, int64_t n_rows, int which,
                            TlArray **out, int64_t *err_row, TlError *err)
{
    TlBuf *validity = NULL, *values = NULL;
    bool done, bad = false;
    const TlArray *a = args[0].array;
    TL_TRY(unary_prologue(args, n_rows, TL_TFLOAT64, out, &validity, &done,
                          err));
    if (done) return TL_OK;
    values = tl_k_fn_values(n_rows, 8, false);
    if (!values) {
        tl_buf_release(validity);
        return tl_error_oom(err);
    }
    const double *x = tl_array_f64(a);
    double *y = (double *)values->data;
    switch (which) {
    case F_SQRT:
        for (int64_t i = 0; i < n_rows; i++) {
            y[i] = sqrt(x[i]);
            bad |= x[i] < 0;
        }
        break;
    case F_LN:
        for (int64_t i = 0; i < n_rows; i++) {
            y[i] = log(x[i]);
            bad |= x[i] <= 0;
        }
        break;
    default:
        for (int64_t i = 0; i < n_rows; i++) y[i] = exp(x[i]);
        break;
    }
    if (bad) {
        for (int64_t i = 0; i < n_rows; i++) {
            bool fail = which == F_SQRT ? x[i] < 0 : x[i] <= 0;
            if (!fail || !tl_k_fn_row_valid(validity, i)) continue;
            *err_row = i;
            tl_buf_release(values);
            tl_buf_release(validity);
            if (which == F_SQRT)
                return tl_error(err, TL_ERR_DATA,
                                "cannot take the square root of a negative "
                                "number");
            return tl_error(err, TL_ERR_DATA,
                            x[i] == 0 ? "cannot take the logarithm of zero"
                                      : "cannot take the logarithm of a "
                                        "negative number");
        }
    }
    return finish(TL_TFLOAT64, n_rows, values, validity, out, err);
}

static TlStatus k_sqrt(const TlDatum *args, int n_args, int64_t n_rows,
                       TlArray **out, int64_t *err_row, TlError *err)
{
    TL_FN_BROADCAST(k_sqrt);
    return float_unary(args, n_rows, F_SQRT, out, err_row, err);
}

static TlStatus k_ln(const TlDatum *args, int n_args, int64_t n_rows,
                     TlArray **out, int64_t *err_row, TlError *err)
{
    TL_FN_BROADCAST(k_ln);
    return float_unary(args, n_rows, F_LN, out, err_row, err);
}

static TlStatus k_exp(const TlDatum *args, int n_args, int64_t n_rows,
                      TlArray **out, int64_t *err_row, TlError *err)
{
    TL_FN_BROADCAST(k_exp);
    return float_unary(args, n_rows, F_EXP, out, err_row, err);
}

static TlStatus k_pow(const TlDatum *args, int n_args, int64_t n_rows,
                      TlArray **out, int64_t *err_row, TlError *err)
{
    TlBuf *validity = NULL, *values = NULL;
    bool all_null;
    TL_FN_BROADCAST(k_pow);
    TL_TRY(tl_k_fn_nulls(args, 2, n_rows, &all_null, &validity, err));
    if (all_null) return tl_k_fn_null_result(TL_TFLOAT64, n_rows, out, err);
    values = tl_k_fn_values(n_rows, 8, false);
    if (!values) {
        tl_buf_release(validity);
        return tl_error_oom(err);
    }
    const double *x = tl_array_f64(args[0].array);
    const double *e = tl_array_f64(args[1].array);
    double *y = (double *)values->data;
    if (args[1].scalar) {
        double e0 = e[0];
        for (int64_t i = 0; i < n_rows; i++) y[i] = pow(x[i], e0);
    } else if (args[0].scalar) {
        double x0 = x[0];
        for (int64_t i = 0; i < n_rows; i++) y[i] = pow(x0, e[i]);
    } else {
        for (int64_t i = 0; i < n_rows; i++) y[i] = pow(x[i], e[i]);
    }
    return finish(TL_TFLOAT64, n_rows, values, validity, out, err);
}

/* The math family's table for the registry (fn.c). */
const TlFnDef tl_k_fn_math_defs[] = {
    {"abs", k_abs, types_same},      {"round", k_round, types_round},
    {"floor", k_floor, types_same},  {"ceil", k_ceil, types_same},
    {"sqrt", k_sqrt, types_float1},  {"ln", k_ln, types_float1},
    {"exp", k_exp, types_float1},    {"pow", k_pow, types_float2},
};
/* Number of entries in tl_k_fn_math_defs. */
const int tl_k_fn_math_count =
    (int)(sizeof tl_k_fn_math_defs / sizeof tl_k_fn_math_defs[0]);
