/*
 * boolean.c -- Kleene and / or / not, 64 rows per step.
 *
 * Three-valued logic on two bitmaps per operand, value v and validity k,
 * rewritten as "known true" T = v & k and "known false" F = ~v & k:
 *
 *     and:  T = Ta & Tb           F = Fa | Fb
 *     or:   T = Ta | Tb           F = Fa & Fb
 *     not:  T = Fa                F = Ta
 *
 * and the result is value T with validity T | F: null and false is false,
 * null or true is true, anything else with a null is null.
 *
 *          and | T  F  N       or | T  F  N
 *          ----+---------      ---+---------
 *           T  | T  F  N        T | T  T  T
 *           F  | F  F  F        F | T  F  N
 *           N  | N  F  N        N | T  N  N
 *
 * Both operands are first expanded to word-aligned bitmaps (scalars become
 * all-zero or all-one words), so there is one loop per operator and no
 * per-row test of scalar or null shape.  An operand of type null is all
 * unknown (T = F = 0).
 */
#include "core_kernels.h"

/* Known-true and known-false words of d over n rows. */
static TlStatus known(const TlDatum *d, int64_t n, uint64_t **t, uint64_t **f,
                      TlError *err)
{
    int64_t k, nw = tl_k_words(n);
    uint64_t *v = NULL, *ok = NULL;
    *t = *f = NULL;
    if (tl_k_nulls(d) == TL_K_ALL_NULL) {
        *t = tl_k_bits_new(n, false);
        *f = tl_k_bits_new(n, false);
        goto check;
    }
    v = tl_k_bool_words(d, n);
    ok = tl_k_valid_words(d, n);
    if (!v || !ok) goto oom;
    for (k = 0; k < nw; k++) {
        uint64_t valid = ok[k];
        ok[k] = ~v[k] & valid; /* reuse as F */
        v[k] &= valid;
    }
    *t = v;
    *f = ok;
    return TL_OK;
check:
    if (*t && *f) return TL_OK;
oom:
    tl_free(v);
    tl_free(ok);
    tl_free(*t);
    tl_free(*f);
    *t = *f = NULL;
    return tl_error_oom(err);
}

/* Assemble a bool array from known-true / known-false words (taken). */
static TlStatus finish(uint64_t *t, uint64_t *f, int64_t n, TlArray **out,
                       TlError *err)
{
    int64_t k, nw = tl_k_words(n);
    TlBuf *values, *validity;
    for (k = 0; k < nw; k++) f[k] |= t[k]; /* f becomes the validity */
    values = tl_k_bits_buf(t, n);
    validity = tl_k_bits_buf(f, n);
    if (!values || !validity) {
        tl_buf_release(values);
        tl_buf_release(validity);
        return tl_error_oom(err);
    }
    *out = tl_array_new(TL_TBOOL, n, values, validity, -1, NULL, 0);
    return *out ? TL_OK : tl_error_oom(err);
}

/* Kleene and/or of a and b. */
static TlStatus and_or(bool is_and, const TlDatum *a, const TlDatum *b,
                       int64_t n, TlArray **out, TlError *err)
{
    uint64_t *ta, *fa, *tb, *fb;
    int64_t k, nw = tl_k_words(n);
    *out = NULL;
    TL_TRY(known(a, n, &ta, &fa, err));
    if (known(b, n, &tb, &fb, err) != TL_OK) {
        tl_free(ta);
        tl_free(fa);
        return err->code;
    }
    if (is_and) {
        for (k = 0; k < nw; k++) {
            ta[k] &= tb[k];
            fa[k] |= fb[k];
        }
    } else {
        for (k = 0; k < nw; k++) {
            ta[k] |= tb[k];
            fa[k] &= fb[k];
        }
    }
    tl_free(tb);
    tl_free(fb);
    return finish(ta, fa, n, out, err);
}

/* Kleene a and b (see core_kernels.h). */
TlStatus tl_k_and(const TlDatum *a, const TlDatum *b, int64_t n,
                  TlArray **out, TlError *err)
{
    return and_or(true, a, b, n, out, err);
}

/* Kleene a or b (see core_kernels.h). */
TlStatus tl_k_or(const TlDatum *a, const TlDatum *b, int64_t n,
                 TlArray **out, TlError *err)
{
    return and_or(false, a, b, n, out, err);
}

/* Kleene not a: nulls stay null (see core_kernels.h). */
TlStatus tl_k_not(const TlDatum *a, int64_t n, TlArray **out, TlError *err)
{
    uint64_t *t, *f;
    *out = NULL;
    TL_TRY(known(a, n, &t, &f, err));
    return finish(f, t, n, out, err);
}
