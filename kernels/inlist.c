/*
 * inlist.c -- x [not] in (v1, v2, ...) over constant values.
 *
 * The list is split once into its non-null values and a flag "the list
 * holds a null".  Then one of two structures answers "is x[i] in the list"
 * for every row, packed 64 rows to a word:
 *
 *   - up to TL_K_IN_CHAIN_MAX values: a compare chain, m |= (x == v[j]) for
 *     every j, with no branch on the outcome (a short list fits in
 *     registers and beats hashing);
 *   - more values: an open-addressing hash set (power-of-two slots, at most
 *     half full, linear probing) built once per call: 64-bit keys for the
 *     fixed-width types, XXH3 of the bytes for strings.
 *
 * Floats are matched on a canonical bit image, so NaN matches NaN and -0.0
 * matches 0.0, as in compare.c:  canon(nan) = the quiet NaN pattern,
 * canon(-0.0) = canon(0.0) = 0, else the IEEE bits.
 *
 * SQL semantics: x null -> null; a match -> true; no match and a null in
 * the list -> null; else false.  So the result validity is valid(x), and
 * with a null in the list also `match`.  not in is the Kleene not of that
 * (same validity, value bits inverted).
 */
#include "core_kernels.h"

#include <xxhash.h>

/* The canonical 64-bit image of a double (see the header comment). */
static inline uint64_t canon_f64(double x)
{
    uint64_t b;
    if (x != x) return UINT64_C(0x7ff8000000000000);
    if (x == 0) return 0;
    memcpy(&b, &x, 8);
    return b;
}

/* The 64-bit key of row i of a fixed-width array of type t. */
static inline uint64_t key_at(const TlArray *a, TlType t, int64_t i)
{
    switch (t) {
    case TL_TFLOAT64: return canon_f64(tl_array_f64(a)[i]);
    case TL_TDATE: return (uint64_t)(int64_t)tl_array_i32(a)[i];
    case TL_TBOOL: return tl_array_bool(a, i);
    default: return (uint64_t)tl_array_i64(a)[i];
    }
}

static inline uint64_t mix64(uint64_t k)
{
    k ^= k >> 33;
    k *= UINT64_C(0xff51afd7ed558ccd);
    k ^= k >> 33;
    return k;
}

/* Pack the `hit` that the statements ... compute for row i, rows [0, n),
 * into words w. */
#define PACK(n, w, ...)                                                        \
    do {                                                                       \
        int64_t i_, j_;                                                        \
        for (i_ = 0; i_ < (n); i_ += 64) {                                     \
            int64_t m_ = (n) - i_ < 64 ? (n) - i_ : 64;                        \
            uint64_t acc_ = 0;                                                 \
            for (j_ = 0; j_ < m_; j_++) {                                      \
                int64_t i = i_ + j_;                                           \
                int hit;                                                       \
                __VA_ARGS__;                                                   \
                acc_ |= (uint64_t)hit << j_;                                   \
            }                                                                  \
            (w)[i_ >> 6] = acc_;                                               \
        }                                                                      \
    } while (0)

/* Chain over fixed-width keys. */
static void chain_fixed(const TlArray *x, TlType t, int64_t n,
                        const uint64_t *keys, int k, uint64_t *w)
{
    int j;
    switch (t) {
    case TL_TINT64:
    case TL_TTIMESTAMP: case TL_TTIMESTAMPTZ: {
        const int64_t *px = tl_array_i64(x);
        PACK(n, w, {
            uint64_t v_ = (uint64_t)px[i];
            hit = 0;
            for (j = 0; j < k; j++) hit |= v_ == keys[j];
        });
        break;
    }
    case TL_TDATE: {
        const int32_t *px = tl_array_i32(x);
        PACK(n, w, {
            uint64_t v_ = (uint64_t)(int64_t)px[i];
            hit = 0;
            for (j = 0; j < k; j++) hit |= v_ == keys[j];
        });
        break;
    }
    case TL_TFLOAT64: {
        const double *px = tl_array_f64(x);
        PACK(n, w, {
            uint64_t v_ = canon_f64(px[i]);
            hit = 0;
            for (j = 0; j < k; j++) hit |= v_ == keys[j];
        });
        break;
    }
    default: /* bool */
        PACK(n, w, {
            uint64_t v_ = tl_array_bool(x, i);
            hit = 0;
            for (j = 0; j < k; j++) hit |= v_ == keys[j];
        });
        break;
    }
}

/* Hash set over fixed-width keys. */
static TlStatus set_fixed(const TlArray *x, TlType t, int64_t n,
                          const uint64_t *keys, int k, uint64_t *w,
                          TlError *err)
{
    uint64_t cap = 16, mask, *slots;
    uint8_t *used;
    int j;
    while (cap < (uint64_t)k * 2) cap <<= 1;
    mask = cap - 1;
    slots = tl_calloc(cap, sizeof(uint64_t));
    used = tl_calloc(cap, 1);
    if (!slots || !used) {
        tl_free(slots);
        tl_free(used);
        return tl_error_oom(err);
    }
    for (j = 0; j < k; j++) {
        uint64_t h = mix64(keys[j]) & mask;
        while (used[h] && slots[h] != keys[j]) h = (h + 1) & mask;
        used[h] = 1;
        slots[h] = keys[j];
    }
    PACK(n, w, {
        uint64_t v_ = key_at(x, t, i), h_ = mix64(v_) & mask;
        while (used[h_] && slots[h_] != v_) h_ = (h_ + 1) & mask;
        hit = used[h_];
    });
    tl_free(slots);
    tl_free(used);
    return TL_OK;
}

/* A string key: the view and its array's data buffers. */
typedef struct StrKey {
    TlView v;
    TlBuf *const *bufs;
} StrKey;

static inline uint64_t hash_view(const TlView *v, TlBuf *const *bufs)
{
    return XXH3_64bits(tl_view_ptr(v, bufs), tl_view_len(*v));
}

/* Chain or hash set over string keys. */
static TlStatus match_str(const TlArray *x, int64_t n, const StrKey *keys,
                          int k, uint64_t *w, TlError *err)
{
    const TlView *px = tl_array_views(x);
    TlBuf *const *xb = x->data;
    int j;
    if (k <= TL_K_IN_CHAIN_MAX) {
        PACK(n, w, {
            hit = 0;
            for (j = 0; j < k; j++)
                hit |= tl_view_eq(&px[i], xb, &keys[j].v, keys[j].bufs);
        });
        return TL_OK;
    }
    {
        uint64_t cap = 16, mask;
        int32_t *slots; /* key index + 1, 0 = empty */
        while (cap < (uint64_t)k * 2) cap <<= 1;
        mask = cap - 1;
        slots = tl_calloc(cap, sizeof(int32_t));
        if (!slots) return tl_error_oom(err);
        for (j = 0; j < k; j++) {
            uint64_t h = hash_view(&keys[j].v, keys[j].bufs) & mask;
            while (slots[h] &&
                   !tl_view_eq(&keys[slots[h] - 1].v, keys[slots[h] - 1].bufs,
                               &keys[j].v, keys[j].bufs))
                h = (h + 1) & mask;
            if (!slots[h]) slots[h] = j + 1;
        }
        PACK(n, w, {
            uint64_t h_ = hash_view(&px[i], xb) & mask;
            while (slots[h_] && !tl_view_eq(&keys[slots[h_] - 1].v,
                                            keys[slots[h_] - 1].bufs,
                                            &px[i], xb))
                h_ = (h_ + 1) & mask;
            hit = slots[h_] != 0;
        });
        tl_free(slots);
    }
    return TL_OK;
}

/* x [not] in (vals) (see core_kernels.h). */
TlStatus tl_k_in_list(const TlDatum *x, const TlArray *const *vals,
                      int n_vals, bool negate, int64_t n, TlArray **out,
                      TlError *err)
{
    TlType t = x->array->type;
    bool has_null = false;
    int j, k = 0;
    int64_t m = x->scalar ? (n > 0 ? 1 : 0) : n, q, nw = tl_k_words(n);
    uint64_t *keys = NULL, *w = NULL, *valid = NULL;
    StrKey *skeys = NULL;
    TlBuf *values = NULL, *validity = NULL;
    TlStatus st = TL_OK;
    *out = NULL;
    if (tl_k_nulls(x) == TL_K_ALL_NULL) {
        *out = tl_array_new_null(TL_TBOOL, n);
        return *out ? TL_OK : tl_error_oom(err);
    }
    if (t == TL_TSTRING) skeys = tl_malloc(sizeof(StrKey) * (size_t)(n_vals + 1));
    else keys = tl_malloc(sizeof(uint64_t) * (size_t)(n_vals + 1));
    w = tl_k_bits_new(n, false);
    if ((!skeys && !keys) || !w) goto oom;
    for (j = 0; j < n_vals; j++) {
        const TlArray *v = vals[j];
        if (v->type == TL_TNULL || !tl_array_valid(v, 0)) {
            has_null = true;
            continue;
        }
        if (t == TL_TSTRING) {
            skeys[k].v = tl_array_views(v)[0];
            skeys[k].bufs = v->data;
        } else {
            keys[k] = key_at(v, t, 0);
        }
        k++;
    }
    if (k > 0) {
        if (t == TL_TSTRING)
            st = match_str(x->array, m, skeys, k, w, err);
        else if (k <= TL_K_IN_CHAIN_MAX || t == TL_TBOOL)
            chain_fixed(x->array, t, m, keys, k, w);
        else
            st = set_fixed(x->array, t, m, keys, k, w, err);
        if (st != TL_OK) goto fail;
    }
    if (m < n) { /* scalar x: broadcast its one answer */
        bool hit = w[0] & 1;
        tl_free(w);
        w = tl_k_bits_new(n, hit);
        if (!w) goto oom;
    }
    valid = tl_k_valid_words(x, n);
    if (!valid) goto oom;
    for (q = 0; q < nw; q++) {
        if (has_null) valid[q] &= w[q];
        w[q] = (negate ? ~w[q] : w[q]) & valid[q];
    }
    values = tl_k_bits_buf(w, n);
    w = NULL;
    validity = tl_k_bits_buf(valid, n);
    valid = NULL;
    if (!values || !validity) goto oom;
    tl_free(keys);
    tl_free(skeys);
    *out = tl_array_new(TL_TBOOL, n, values, validity, -1, NULL, 0);
    return *out ? TL_OK : tl_error_oom(err);
oom:
    st = tl_error_oom(err);
fail:
    tl_free(keys);
    tl_free(skeys);
    tl_free(w);
    tl_free(valid);
    tl_buf_release(values);
    tl_buf_release(validity);
    return st;
}
