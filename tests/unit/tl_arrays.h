/*
 * tl_arrays.h -- small arrays for the unit tests of the scalar functions
 * (test_fn_text, test_fn_time, test_fn_regex): strings (NULL for a null),
 * int64s and one-value arrays, built through TlBuilder.  Static inline, so
 * a file that uses part of it builds warning-free.
 */
#ifndef TL_ARRAYS_H
#define TL_ARRAYS_H

#include "../../lib/core/core.h"

#include <string.h>

static inline TlArray *mk_str(const char *const *v, int n)
{
    TlBuilder b;
    tl_builder_init(&b, TL_TSTRING);
    for (int i = 0; i < n; i++) {
        if (!v[i]) tl_builder_append_null(&b);
        else tl_builder_append_str(&b, v[i], strlen(v[i]));
    }
    TlArray *a = tl_builder_finish(&b);
    tl_builder_free(&b);
    return a;
}

static inline TlArray *mk_ints(const int64_t *v, int n)
{
    TlBuilder b;
    tl_builder_init(&b, TL_TINT64);
    for (int i = 0; i < n; i++) tl_builder_append_i64(&b, v[i]);
    TlArray *a = tl_builder_finish(&b);
    tl_builder_free(&b);
    return a;
}

static inline TlArray *mk_f1(double v)
{
    TlBuilder b;
    tl_builder_init(&b, TL_TFLOAT64);
    tl_builder_append_f64(&b, v);
    TlArray *a = tl_builder_finish(&b);
    tl_builder_free(&b);
    return a;
}

static inline TlArray *mk_s1(const char *s) { return mk_str(&s, 1); }
static inline TlArray *mk_i1(int64_t v) { return mk_ints(&v, 1); }

#endif
