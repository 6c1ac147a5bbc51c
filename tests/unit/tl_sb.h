/*
 * tl_sb.h -- a growable string (Sb) for the unit tests that build inputs
 * and render results of any size (test_csv_split, test_ndjson_split):
 * append bytes, a C string, a formatted integer, or the text of one array
 * value.  Unlike csv_test_util.h's fixed buffers nothing is cut off, so a
 * generated input or a million-row rendering compares as one string.
 *
 * Test code only: memory comes from libc (not tl_malloc, so the allocation
 * counters of fault injection do not see it) and running out aborts.
 * Everything is static inline so a file that uses part of it builds
 * warning-free.
 */
#ifndef TL_SB_H
#define TL_SB_H

#include "../../lib/core/core.h"
#include "../../lib/core/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Sb {
    char *p;
    size_t n, cap;
} Sb;

/* Append n bytes of data; the text stays NUL-terminated. */
static inline void sb_put(Sb *s, const void *data, size_t n)
{
    if (s->n + n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 256;
        while (cap < s->n + n + 1) cap *= 2;
        s->p = realloc(s->p, cap);
        if (!s->p) abort();
        s->cap = cap;
    }
    memcpy(s->p + s->n, data, n);
    s->n += n;
    s->p[s->n] = '\0';
}

static inline void sb_str(Sb *s, const char *t)
{
    sb_put(s, t, strlen(t));
}

/* Append v formatted by fmt (one %lld-style conversion). */
static inline void sb_fmt(Sb *s, const char *fmt, long long v)
{
    char buf[64];
    int n = snprintf(buf, sizeof buf, fmt, v);
    sb_put(s, buf, (size_t)n);
}

static inline void sb_free(Sb *s)
{
    free(s->p);
    memset(s, 0, sizeof *s);
}

/* The text so far ("" before the first append). */
static inline const char *sb_text(const Sb *s)
{
    return s->p ? s->p : "";
}

/* Append the text of the valid value a[i]: T / F, numbers, dates and
 * timestamps as the writers spell them (lib/core/text.h), a string's bytes
 * as they are, "?" for a type without a spelling.  The caller renders
 * nulls and any quoting. */
static inline void sb_value(Sb *s, const TlArray *a, int64_t i)
{
    char buf[TL_FMT_MAX];
    size_t n;
    switch (a->type) {
    case TL_TBOOL: n = (size_t)sprintf(buf, "%s", tl_array_bool(a, i) ? "T" : "F"); break;
    case TL_TINT64: n = tl_fmt_i64(tl_array_i64(a)[i], buf); break;
    case TL_TFLOAT64: n = tl_fmt_f64(tl_array_f64(a)[i], buf); break;
    case TL_TDATE: n = tl_fmt_date(tl_array_i32(a)[i], buf); break;
    case TL_TTIMESTAMP: n = tl_fmt_timestamp(tl_array_i64(a)[i], buf); break;
    case TL_TSTRING: {
        const TlView *v = &tl_array_views(a)[i];
        sb_put(s, tl_view_ptr(v, a->data), tl_view_len(*v));
        return;
    }
    default: n = (size_t)sprintf(buf, "?"); break;
    }
    sb_put(s, buf, n);
}

#endif
