/*
 * select.c -- bitmaps as words, selections, broadcast and scatter.
 *
 * The shared plumbing of the expression kernels:
 *
 *   - Word bitmaps.  Every kernel that combines validities or bool values
 *     first copies the bits it needs into a fresh, word-aligned bitmap
 *     (tl_k_bits_dup: a memcpy when the array's offset is byte aligned, a
 *     shifted copy otherwise), so the combining loops run 64 rows per step
 *     on aligned uint64_t words with no head or tail cases.  Bits past n are
 *     kept zero, so popcounts and "all set" tests need no masking.
 *
 *   - Selections are uint32_t row-index lists (a batch has < 2^32 rows).
 *     if/case/coalesce partition the rows of a batch by a condition
 *     (tl_k_partition), evaluate each branch on the rows that reach it (the
 *     evaluator gathers them with tl_array_take), and put the branch results
 *     back in place with tl_k_scatter:
 *
 *         rows     0 1 2 3 4 5        cond  T F T N F T
 *         then on  {0,2,5} -> [a0 a2 a5]
 *         else on  {1,3,4} -> [b1 b3 b4]
 *         scatter  a0 b1 a2 b3 b4 a5
 *
 *     Parts apply in order, a later one overwriting an earlier one; that is
 *     how coalesce fills only the rows the previous argument left null.
 *     String parts keep their views: the result lists every part's data
 *     buffers one after another, and long views get their buffer index
 *     shifted by the number of buffers of the parts before them (the same
 *     re-basing tl_array_concat does), so no string bytes are copied.
 */
#include "core_kernels.h"

/* A new n-bit word bitmap, all zero or all one (bits past n zero). */
uint64_t *tl_k_bits_new(int64_t n, bool v)
{
    int64_t nw = tl_k_words(n);
    uint64_t *w;
    if (nw == 0) nw = 1;
    w = tl_malloc((size_t)nw * 8);
    if (!w) return NULL;
    memset(w, v ? 0xff : 0, (size_t)nw * 8);
    if (n == 0) w[0] = 0;
    else if (v && (n & 63)) w[n >> 6] = (UINT64_C(1) << (n & 63)) - 1;
    return w;
}

/* A word-aligned copy of bits [off, off+n) of src (bits past n zero). */
uint64_t *tl_k_bits_dup(const uint8_t *src, int64_t off, int64_t n)
{
    uint64_t *w = tl_k_bits_new(n, false);
    if (!w || n == 0) return w;
    if ((off & 7) == 0) {
        memcpy(w, src + (off >> 3), tl_bitmap_bytes(n));
        if (n & 63) w[n >> 6] &= (UINT64_C(1) << (n & 63)) - 1;
    } else {
        tl_bitmap_copy((uint8_t *)w, 0, src, off, n);
    }
    return w;
}

/* Wrap an n-bit word bitmap as a buffer (taken over). */
TlBuf *tl_k_bits_buf(uint64_t *words, int64_t n)
{
    int64_t nw = tl_k_words(n);
    if (!words) return NULL;
    if (nw == 0) nw = 1;
    return tl_buf_adopt((uint8_t *)words, (size_t)nw * 8);
}

/* A zeroed values buffer for n elements of t (bool: a word bitmap). */
TlBuf *tl_k_values_new(TlType t, int64_t n)
{
    if (t == TL_TBOOL) return tl_k_bits_buf(tl_k_bits_new(n, false), n);
    return tl_buf_new(tl_type_width(t) * (size_t)n, true);
}

/* The validity of d over n rows as a new word bitmap. */
uint64_t *tl_k_valid_words(const TlDatum *d, int64_t n)
{
    switch (tl_k_nulls(d)) {
    case TL_K_NO_NULLS: return tl_k_bits_new(n, true);
    case TL_K_ALL_NULL: return tl_k_bits_new(n, false);
    default: break;
    }
    if (d->scalar) /* a length-1 array with a null is all null */
        return tl_k_bits_new(n, false);
    return tl_k_bits_dup(d->array->validity->data, d->array->offset, n);
}

/* The value bits of bool datum d over n rows as a new word bitmap. */
uint64_t *tl_k_bool_words(const TlDatum *d, int64_t n)
{
    const TlArray *a = d->array;
    if (a->type != TL_TBOOL || a->length == 0) return tl_k_bits_new(n, false);
    if (d->scalar) return tl_k_bits_new(n, tl_array_bool(a, 0));
    return tl_k_bits_dup(a->values->data, a->offset, n);
}

/* AND the validities of args into one result validity (see header). */
TlStatus tl_k_validity_and(const TlDatum *args, int n_args, int64_t n,
                           TlBuf **validity, bool *all_null, TlError *err)
{
    uint64_t *acc = NULL, *tmp = NULL;
    int64_t nw = tl_k_words(n), k;
    int i;
    *validity = NULL;
    *all_null = false;
    if (n == 0) return TL_OK;
    for (i = 0; i < n_args; i++) {
        TlKNulls kind = tl_k_nulls(&args[i]);
        if (kind == TL_K_NO_NULLS) continue;
        if (kind == TL_K_ALL_NULL || args[i].scalar) {
            tl_free(acc);
            *all_null = true;
            return TL_OK;
        }
        if (!acc) {
            acc = tl_k_valid_words(&args[i], n);
            if (!acc) return tl_error_oom(err);
            continue;
        }
        tmp = tl_k_valid_words(&args[i], n);
        if (!tmp) {
            tl_free(acc);
            return tl_error_oom(err);
        }
        for (k = 0; k < nw; k++) acc[k] &= tmp[k];
        tl_free(tmp);
    }
    if (acc) {
        *validity = tl_k_bits_buf(acc, n);
        if (!*validity) return tl_error_oom(err);
    }
    return TL_OK;
}

/* A list holding a reference to each data buffer of a; NULL when none or on
 * OOM (*ok tells which). */
static TlBuf **share_data(const TlArray *a, bool *ok)
{
    TlBuf **d;
    uint32_t i;
    *ok = true;
    if (a->n_data == 0) return NULL;
    d = tl_malloc(sizeof(TlBuf *) * a->n_data);
    if (!d) {
        *ok = false;
        return NULL;
    }
    for (i = 0; i < a->n_data; i++) d[i] = tl_buf_retain(a->data[i]);
    return d;
}

/* The scalar (length-1 array) repeated n times. */
TlArray *tl_k_broadcast(const TlArray *scalar, int64_t n)
{
    TlBuf *values;
    TlBuf **data = NULL;
    int64_t i;
    bool ok;
    if (scalar->type == TL_TNULL) return tl_array_new_null(TL_TNULL, n);
    if (scalar->length < 1 || !tl_array_valid(scalar, 0))
        return tl_array_new_null(scalar->type, n);
    switch (scalar->type) {
    case TL_TBOOL:
        values = tl_k_bits_buf(tl_k_bits_new(n, tl_array_bool(scalar, 0)), n);
        break;
    case TL_TDATE: {
        int32_t v = tl_array_i32(scalar)[0];
        values = tl_buf_new(4 * (size_t)n, false);
        if (values)
            for (i = 0; i < n; i++) ((int32_t *)values->data)[i] = v;
        break;
    }
    case TL_TSTRING: {
        TlView v = tl_array_views(scalar)[0];
        values = tl_buf_new(16 * (size_t)n, false);
        if (values)
            for (i = 0; i < n; i++) ((TlView *)values->data)[i] = v;
        data = share_data(scalar, &ok);
        if (!ok) {
            tl_buf_release(values);
            return NULL;
        }
        break;
    }
    default: { /* int64, float64, timestamp: 8 bytes */
        uint64_t v;
        memcpy(&v, scalar->values->data + 8 * scalar->offset, 8);
        values = tl_buf_new(8 * (size_t)n, false);
        if (values)
            for (i = 0; i < n; i++) ((uint64_t *)values->data)[i] = v;
        break;
    }
    }
    if (!values) {
        if (data) {
            for (i = 0; i < (int64_t)scalar->n_data; i++)
                tl_buf_release(data[i]);
            tl_free(data);
        }
        return NULL;
    }
    return tl_array_new(scalar->type, n, values, NULL, 0, data,
                        data ? scalar->n_data : 0);
}

/* Words of the rows where b is true (valid and set); NULL on OOM. */
static uint64_t *true_words(const TlDatum *b, int64_t n)
{
    uint64_t *v, *ok;
    int64_t k, nw = tl_k_words(n);
    TlKNulls kind = tl_k_nulls(b);
    if (kind == TL_K_ALL_NULL) return tl_k_bits_new(n, false);
    v = tl_k_bool_words(b, n);
    if (!v || kind == TL_K_NO_NULLS) return v;
    ok = tl_k_valid_words(b, n);
    if (!ok) {
        tl_free(v);
        return NULL;
    }
    for (k = 0; k < nw; k++) v[k] &= ok[k];
    tl_free(ok);
    return v;
}

/* Count the set bits of an n-bit word bitmap. */
static int64_t count_words(const uint64_t *w, int64_t n)
{
    int64_t k, c = 0, nw = tl_k_words(n);
    for (k = 0; k < nw; k++) c += __builtin_popcountll(w[k]);
    return c;
}

/* The positions of the set bits of w (count of them: m) as a new list. */
static uint32_t *list_bits(const uint64_t *w, int64_t n, int64_t m)
{
    uint32_t *rows;
    int64_t k, j = 0, nw = tl_k_words(n);
    if (m == 0) return NULL;
    rows = tl_malloc(sizeof(uint32_t) * (size_t)m);
    if (!rows) return NULL;
    for (k = 0; k < nw; k++) {
        uint64_t x = w[k];
        while (x) {
            rows[j++] = (uint32_t)(k * 64 + __builtin_ctzll(x));
            x &= x - 1;
        }
    }
    return rows;
}

/* The rows where b is true; NULL list when none or all (see header). */
TlStatus tl_k_sel_true(const TlDatum *b, int64_t n, uint32_t **rows,
                       int64_t *n_sel, TlError *err)
{
    uint64_t *w;
    int64_t m;
    *rows = NULL;
    *n_sel = 0;
    if (n == 0) return TL_OK;
    w = true_words(b, n);
    if (!w) return tl_error_oom(err);
    m = count_words(w, n);
    *n_sel = m;
    if (m > 0 && m < n) {
        *rows = list_bits(w, n, m);
        if (!*rows) {
            tl_free(w);
            return tl_error_oom(err);
        }
    }
    tl_free(w);
    return TL_OK;
}

/* Split [0, n) into the rows where b is true and the rest (see header). */
TlStatus tl_k_partition(const TlDatum *b, int64_t n, uint32_t **t,
                        int64_t *n_t, uint32_t **f, int64_t *n_f,
                        TlError *err)
{
    uint64_t *w;
    int64_t m, k, nw = tl_k_words(n);
    *t = *f = NULL;
    *n_t = *n_f = 0;
    if (n == 0) return TL_OK;
    w = true_words(b, n);
    if (!w) return tl_error_oom(err);
    m = count_words(w, n);
    *n_t = m;
    *n_f = n - m;
    if (m > 0) {
        *t = list_bits(w, n, m);
        if (!*t) goto oom;
    }
    if (m < n) {
        for (k = 0; k < nw; k++) w[k] = ~w[k];
        if (n & 63) w[nw - 1] &= (UINT64_C(1) << (n & 63)) - 1;
        *f = list_bits(w, n, n - m);
        if (!*f) goto oom;
    }
    tl_free(w);
    return TL_OK;
oom:
    tl_free(w);
    tl_free(*t);
    *t = NULL;
    return tl_error_oom(err);
}

/* out[i] = base[pos[i]] (base NULL: out[i] = pos[i]). */
void tl_k_sel_compose(const uint32_t *base, const uint32_t *pos, int64_t n,
                      uint32_t *out)
{
    int64_t i;
    if (!base) {
        memmove(out, pos, sizeof(uint32_t) * (size_t)n);
        return;
    }
    for (i = 0; i < n; i++) out[i] = base[pos[i]];
}

/* Scatter fixed-width values: dst[rows[j]] = src[s ? 0 : j]. */
#define SCATTER_FIXED(T)                                                       \
    do {                                                                       \
        T *d_ = (T *)dst;                                                      \
        const T *s_ = (const T *)src;                                          \
        if (p->value.scalar) {                                                 \
            T x_ = s_[0];                                                      \
            for (j = 0; j < m; j++) d_[rows[j]] = x_;                          \
        } else {                                                               \
            for (j = 0; j < m; j++) d_[rows[j]] = s_[j];                       \
        }                                                                      \
    } while (0)

/* Build an n-row array of `type` from parts applied in order (see header). */
TlStatus tl_k_scatter(TlType type, int64_t n, const TlKPart *parts,
                      int n_parts, TlArray **out, TlError *err)
{
    TlBuf *values = NULL, *validity = NULL, **data = NULL;
    uint64_t *valid = NULL;
    uint32_t n_data = 0, base = 0;
    int i;
    *out = NULL;
    if (type == TL_TNULL) {
        *out = tl_array_new_null(TL_TNULL, n);
        return *out ? TL_OK : tl_error_oom(err);
    }
    for (i = 0; i < n_parts; i++)
        if (parts[i].value.array->type == type)
            n_data += parts[i].value.array->n_data;
    values = tl_k_values_new(type, n);
    valid = tl_k_bits_new(n, false);
    if (!values || !valid) goto oom;
    if (n_data > 0) {
        data = tl_malloc(sizeof(TlBuf *) * n_data);
        if (!data) goto oom;
    }
    for (i = 0; i < n_parts; i++) {
        const TlKPart *p = &parts[i];
        const TlArray *a = p->value.array;
        const uint32_t *rows = p->rows;
        int64_t j, m = p->n_rows;
        TlKNulls kind = tl_k_nulls(&p->value);
        uint8_t *dst = values->data;
        const uint8_t *src;
        if (kind == TL_K_ALL_NULL) {
            for (j = 0; j < m; j++)
                valid[rows[j] >> 6] &= ~(UINT64_C(1) << (rows[j] & 63));
            if (type == TL_TSTRING) /* keep views under nulls empty */
                for (j = 0; j < m; j++)
                    memset(dst + 16 * (size_t)rows[j], 0, 16);
            if (a->type == type) {
                uint32_t k;
                for (k = 0; k < a->n_data; k++)
                    data[base + k] = tl_buf_retain(a->data[k]);
                base += a->n_data;
            }
            continue;
        }
        /* validity of the rows this part covers */
        if (kind == TL_K_NO_NULLS) {
            for (j = 0; j < m; j++)
                valid[rows[j] >> 6] |= UINT64_C(1) << (rows[j] & 63);
        } else {
            const uint8_t *vb = a->validity->data;
            for (j = 0; j < m; j++) {
                uint64_t bit = UINT64_C(1) << (rows[j] & 63);
                if (tl_bit_get(vb, a->offset + j))
                    valid[rows[j] >> 6] |= bit;
                else
                    valid[rows[j] >> 6] &= ~bit;
            }
        }
        switch (type) {
        case TL_TBOOL: {
            uint64_t *dw = (uint64_t *)dst;
            for (j = 0; j < m; j++) {
                bool v = tl_array_bool(a, p->value.scalar ? 0 : j);
                uint64_t bit = UINT64_C(1) << (rows[j] & 63);
                if (v) dw[rows[j] >> 6] |= bit;
                else dw[rows[j] >> 6] &= ~bit;
            }
            break;
        }
        case TL_TDATE:
            src = (const uint8_t *)tl_array_i32(a);
            SCATTER_FIXED(int32_t);
            break;
        case TL_TSTRING: {
            TlView *d = (TlView *)dst;
            const TlView *s = tl_array_views(a);
            uint32_t k;
            for (j = 0; j < m; j++) {
                TlView v = s[p->value.scalar ? 0 : j];
                if (v.in.len > TL_VIEW_INLINE) v.out.buf += base;
                d[rows[j]] = v;
            }
            for (k = 0; k < a->n_data; k++)
                data[base + k] = tl_buf_retain(a->data[k]);
            base += a->n_data;
            break;
        }
        default: /* 8-byte types */
            src = a->values->data + 8 * (size_t)a->offset;
            SCATTER_FIXED(uint64_t);
            break;
        }
    }
    validity = tl_k_bits_buf(valid, n);
    valid = NULL;
    if (!validity) goto oom_data;
    *out = tl_array_new(type, n, values, validity, -1, data, n_data);
    if (!*out) return tl_error_oom(err);
    return TL_OK;
oom:
    tl_free(valid);
    tl_buf_release(values);
    tl_free(data);
    return tl_error_oom(err);
oom_data:
    tl_buf_release(values);
    if (data) {
        uint32_t k;
        for (k = 0; k < base; k++) tl_buf_release(data[k]);
        tl_free(data);
    }
    return tl_error_oom(err);
}
