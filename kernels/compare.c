/*
 * compare.c -- = != < <= > >= over two datums of one type, to bool.
 *
 * tl_k_compare switches once on the type and the operator and runs one
 * loop that packs 64 results into a word at a time.  Scalar op array is
 * rewritten as array op' scalar with the operator mirrored (a < s is s > a),
 * so each typed comparison has two loop shapes: array/array and
 * array/scalar.  The result validity is the AND of the input validities.
 *
 * Per type:
 *   int64, timestamp   int64_t compare
 *   date               int32_t compare
 *   float64            DuckDB's total order: NaN equals NaN and is above
 *                      every number; -0.0 equals 0.0 (C's == already says
 *                      so).  Written branch-free with x != x as isnan(x):
 *                        eq  x == y || (nan(x) && nan(y))
 *                        lt  x <  y || (!nan(x) && nan(y))
 *                        gt  x >  y || (nan(x) && !nan(y))
 *                        ne = !eq, le = !gt, ge = !lt
 *   string             bytes, memcmp order; equality first compares the
 *                      length+prefix word of the views (tl_view_eq), order
 *                      the big-endian prefix (tl_view_cmp), touching the
 *                      data buffers only when those tie
 *   bool               false < true, on bits
 */
#include "core_kernels.h"

/* Mirror an operator for swapped operands: a op b == b mirror(op) a. */
static TlKCmp mirror(TlKCmp op)
{
    switch (op) {
    case TL_K_LT: return TL_K_GT;
    case TL_K_LE: return TL_K_GE;
    case TL_K_GT: return TL_K_LT;
    case TL_K_GE: return TL_K_LE;
    default: return op;
    }
}

/* Pack EXPR(x, y) for rows [0, n) into words; pb scalar when b_s. */
#define CMP_LOOP(T, pa, pb, b_s, n, w, EXPR)                                   \
    do {                                                                       \
        int64_t i_, j_;                                                        \
        if (!(b_s)) {                                                          \
            for (i_ = 0; i_ < (n); i_ += 64) {                                 \
                int64_t m_ = (n) - i_ < 64 ? (n) - i_ : 64;                    \
                uint64_t acc_ = 0;                                             \
                for (j_ = 0; j_ < m_; j_++) {                                  \
                    T x = (pa)[i_ + j_], y = (pb)[i_ + j_];                    \
                    acc_ |= (uint64_t)(EXPR) << j_;                            \
                }                                                              \
                (w)[i_ >> 6] = acc_;                                           \
            }                                                                  \
        } else {                                                               \
            T y = (pb)[0];                                                     \
            for (i_ = 0; i_ < (n); i_ += 64) {                                 \
                int64_t m_ = (n) - i_ < 64 ? (n) - i_ : 64;                    \
                uint64_t acc_ = 0;                                             \
                for (j_ = 0; j_ < m_; j_++) {                                  \
                    T x = (pa)[i_ + j_];                                       \
                    acc_ |= (uint64_t)(EXPR) << j_;                            \
                }                                                              \
                (w)[i_ >> 6] = acc_;                                           \
            }                                                                  \
        }                                                                      \
    } while (0)

/* One function per value type: the operator switch is outside the loops. */
#define CMP_ORDERED_FN(NAME, T)                                                \
    static void NAME(TlKCmp op, const T *pa, const T *pb, bool b_s,            \
                     int64_t n, uint64_t *w)                                   \
    {                                                                          \
        switch (op) {                                                          \
        case TL_K_EQ: CMP_LOOP(T, pa, pb, b_s, n, w, x == y); break;           \
        case TL_K_NE: CMP_LOOP(T, pa, pb, b_s, n, w, x != y); break;           \
        case TL_K_LT: CMP_LOOP(T, pa, pb, b_s, n, w, x < y); break;            \
        case TL_K_LE: CMP_LOOP(T, pa, pb, b_s, n, w, x <= y); break;           \
        case TL_K_GT: CMP_LOOP(T, pa, pb, b_s, n, w, x > y); break;            \
        case TL_K_GE: CMP_LOOP(T, pa, pb, b_s, n, w, x >= y); break;           \
        }                                                                      \
    }

CMP_ORDERED_FN(cmp_i64, int64_t)
CMP_ORDERED_FN(cmp_i32, int32_t)

#define F_EQ(x, y) (((x) == (y)) | (((x) != (x)) & ((y) != (y))))
#define F_LT(x, y) (((x) < (y)) | (((x) == (x)) & ((y) != (y))))
#define F_GT(x, y) (((x) > (y)) | (((x) != (x)) & ((y) == (y))))

static void cmp_f64(TlKCmp op, const double *pa, const double *pb, bool b_s,
                    int64_t n, uint64_t *w)
{
    switch (op) {
    case TL_K_EQ: CMP_LOOP(double, pa, pb, b_s, n, w, F_EQ(x, y)); break;
    case TL_K_NE: CMP_LOOP(double, pa, pb, b_s, n, w, !F_EQ(x, y)); break;
    case TL_K_LT: CMP_LOOP(double, pa, pb, b_s, n, w, F_LT(x, y)); break;
    case TL_K_LE: CMP_LOOP(double, pa, pb, b_s, n, w, !F_GT(x, y)); break;
    case TL_K_GT: CMP_LOOP(double, pa, pb, b_s, n, w, F_GT(x, y)); break;
    case TL_K_GE: CMP_LOOP(double, pa, pb, b_s, n, w, !F_LT(x, y)); break;
    }
}

/* A string array = (ne: <>) a scalar.  An inline view's bytes past its
 * length are zero, so when the scalar is inline (at most TL_VIEW_INLINE
 * bytes) a row equals it exactly when both view words do: no call, no
 * branch.  A longer scalar sends only the rows whose length+prefix word
 * matches to tl_view_eq. */
static void eq_str_scalar(const TlView *pa, TlBuf *const *da, const TlView *pb,
                          TlBuf *const *db, bool ne, int64_t n, uint64_t *w)
{
    if (pb->in.len <= TL_VIEW_INLINE)
        CMP_LOOP(TlView, pa, pb, true, n, w,
                 ((x.w[0] == y.w[0]) & (x.w[1] == y.w[1])) != ne);
    else
        CMP_LOOP(TlView, pa, pb, true, n, w,
                 (x.w[0] == y.w[0] && tl_view_eq(&x, da, &y, db)) != ne);
}

/* Strings: equality on views, order through tl_view_cmp. */
static void cmp_str(TlKCmp op, const TlArray *a, const TlArray *b, bool b_s,
                    int64_t n, uint64_t *w)
{
    const TlView *pa = tl_array_views(a), *pb = tl_array_views(b);
    TlBuf *const *da = a->data, *const *db = b->data;
    if (b_s && (op == TL_K_EQ || op == TL_K_NE)) {
        eq_str_scalar(pa, da, pb, db, op == TL_K_NE, n, w);
        return;
    }
    switch (op) {
    case TL_K_EQ:
        CMP_LOOP(TlView, pa, pb, b_s, n, w, tl_view_eq(&x, da, &y, db));
        break;
    case TL_K_NE:
        CMP_LOOP(TlView, pa, pb, b_s, n, w, !tl_view_eq(&x, da, &y, db));
        break;
    case TL_K_LT:
        CMP_LOOP(TlView, pa, pb, b_s, n, w, tl_view_cmp(&x, da, &y, db) < 0);
        break;
    case TL_K_LE:
        CMP_LOOP(TlView, pa, pb, b_s, n, w, tl_view_cmp(&x, da, &y, db) <= 0);
        break;
    case TL_K_GT:
        CMP_LOOP(TlView, pa, pb, b_s, n, w, tl_view_cmp(&x, da, &y, db) > 0);
        break;
    case TL_K_GE:
        CMP_LOOP(TlView, pa, pb, b_s, n, w, tl_view_cmp(&x, da, &y, db) >= 0);
        break;
    }
}

/* Bools: word-wise logic on the value bits (false < true). */
static TlStatus cmp_bool(TlKCmp op, const TlDatum *a, const TlDatum *b,
                         int64_t n, uint64_t *w, TlError *err)
{
    uint64_t *x = tl_k_bool_words(a, n), *y = tl_k_bool_words(b, n);
    int64_t k, nw = tl_k_words(n);
    if (!x || !y) {
        tl_free(x);
        tl_free(y);
        return tl_error_oom(err);
    }
    for (k = 0; k < nw; k++) {
        uint64_t p = x[k], q = y[k], r = 0;
        switch (op) {
        case TL_K_EQ: r = ~(p ^ q); break;
        case TL_K_NE: r = p ^ q; break;
        case TL_K_LT: r = ~p & q; break;
        case TL_K_LE: r = ~p | q; break;
        case TL_K_GT: r = p & ~q; break;
        case TL_K_GE: r = p | ~q; break;
        }
        w[k] = r;
    }
    if (n & 63) w[nw - 1] &= (UINT64_C(1) << (n & 63)) - 1;
    tl_free(x);
    tl_free(y);
    return TL_OK;
}

/* a op b -> bool over n rows (see core_kernels.h). */
TlStatus tl_k_compare(TlKCmp op, const TlDatum *a, const TlDatum *b,
                      int64_t n, TlArray **out, TlError *err)
{
    TlDatum args[2];
    TlBuf *validity = NULL, *values;
    uint64_t *w;
    bool all_null;
    int64_t m = n;
    *out = NULL;
    args[0] = *a;
    args[1] = *b;
    TL_TRY(tl_k_validity_and(args, 2, n, &validity, &all_null, err));
    if (all_null) {
        *out = tl_array_new_null(TL_TBOOL, n);
        return *out ? TL_OK : tl_error_oom(err);
    }
    /* scalar op array -> array mirror(op) scalar */
    if (a->scalar && !b->scalar) {
        const TlDatum *t = a;
        a = b;
        b = t;
        op = mirror(op);
    }
    /* scalar op scalar: compute one row and broadcast it */
    if (a->scalar && b->scalar) m = n > 0 ? 1 : 0;
    w = tl_k_bits_new(n, false);
    if (!w) goto oom;
    switch (a->array->type) {
    case TL_TINT64:
    case TL_TTIMESTAMP: case TL_TTIMESTAMPTZ:
        cmp_i64(op, tl_array_i64(a->array), tl_array_i64(b->array), b->scalar,
                m, w);
        break;
    case TL_TDATE:
        cmp_i32(op, tl_array_i32(a->array), tl_array_i32(b->array), b->scalar,
                m, w);
        break;
    case TL_TFLOAT64:
        cmp_f64(op, tl_array_f64(a->array), tl_array_f64(b->array), b->scalar,
                m, w);
        break;
    case TL_TSTRING:
        cmp_str(op, a->array, b->array, b->scalar, m, w);
        break;
    case TL_TBOOL:
        if (cmp_bool(op, a, b, n, w, err) != TL_OK) {
            tl_free(w);
            tl_buf_release(validity);
            return err->code;
        }
        m = n;
        break;
    default:
        break;
    }
    if (m < n) { /* broadcast the single scalar result */
        bool v = w[0] & 1;
        tl_free(w);
        w = tl_k_bits_new(n, v);
        if (!w) goto oom;
    }
    values = tl_k_bits_buf(w, n);
    if (!values) goto oom;
    *out = tl_array_new(TL_TBOOL, n, values, validity, -1, NULL, 0);
    return *out ? TL_OK : tl_error_oom(err);
oom:
    tl_buf_release(validity);
    return tl_error_oom(err);
}
