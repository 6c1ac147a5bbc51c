/*
 * fn_like.c -- like(x, pattern) and ilike(x, pattern): SQL LIKE over whole
 * arrays (ilike: see k_ilike).
 *
 * '%' matches any run of characters (also none), '_' exactly one character
 * (a UTF-8 code point, not a byte), every other byte itself; there is no
 * escape character; the pattern must match the whole string; matching is
 * case-sensitive.  (DuckDB's '_' matches one byte; tally follows SQL and
 * PostgreSQL here, consistent with length() and substr() counting
 * characters.)
 *
 * A scalar pattern is compiled once per call:
 *   no wildcard          -> equality (length check, then memcmp)
 *   only '%' wildcards   -> segments: the pieces between the '%'s; the first
 *                           is anchored at the start unless the pattern
 *                           starts with '%', the last at the end unless it
 *                           ends with '%', and the middle ones are found
 *                           left to right (tl_k_fn_find).  Taking the leftmost
 *                           occurrence of each piece is always safe, so
 *                           this is linear ('abc%' is a prefix test, '%abc'
 *                           a suffix test, '%abc%' a substring search).
 *   any '_'              -> the general matcher.
 * The general matcher (also used for per-row patterns) is the iterative
 * wildcard algorithm: on a mismatch it backtracks only to the most recent
 * '%', retrying one character further on.  Earlier '%'s never need
 * revisiting, so there is no recursion and no exponential blow-up: the cost
 * is at most O(len(x) * len(pattern)) and about linear in practice
 * ('%a%a%a%a%b' against a million 'a's is one pass).
 */
#include "fn_impl.h"

#include <utf8proc.h>

/* Byte index of the code point after the one starting at i (i < n). */
static inline size_t next_cp(const uint8_t *s, size_t n, size_t i)
{
    i++;
    while (i < n && (s[i] & 0xC0) == 0x80) i++;
    return i;
}

/* s[0..n) LIKE p[0..m), general form. */
static bool like_general(const uint8_t *s, size_t n, const uint8_t *p,
                         size_t m)
{
    size_t si = 0, pi = 0, star_p = SIZE_MAX, star_s = 0;
    while (si < n) {
        if (pi < m) {
            uint8_t c = p[pi];
            if (c == '%') {
                while (pi < m && p[pi] == '%') pi++;
                if (pi == m) return true;
                star_p = pi;
                star_s = si;
                continue;
            }
            if (c == '_') {
                si = next_cp(s, n, si);
                pi++;
                continue;
            }
            if (c == s[si]) {
                si++;
                pi++;
                continue;
            }
        }
        if (star_p == SIZE_MAX) return false;
        star_s = next_cp(s, n, star_s);
        si = star_s;
        pi = star_p;
    }
    while (pi < m && p[pi] == '%') pi++;
    return pi == m;
}

typedef struct Seg {
    const uint8_t *s;
    size_t len;
} Seg;

enum { L_EXACT, L_SEGMENTS, L_GENERAL };

typedef struct LikePat {
    int kind;
    const uint8_t *p;
    size_t plen;
    Seg *seg; /* L_SEGMENTS (tl_malloc'd) */
    int n_seg;
    bool start_pct, end_pct;
} LikePat;

/* Compile pattern p[0..m) (borrowed; must outlive lp).  false on OOM. */
static bool like_compile(LikePat *lp, const uint8_t *p, size_t m)
{
    memset(lp, 0, sizeof *lp);
    lp->p = p;
    lp->plen = m;
    bool pct = false;
    for (size_t i = 0; i < m; i++) {
        if (p[i] == '_') {
            lp->kind = L_GENERAL;
            return true;
        }
        pct |= p[i] == '%';
    }
    if (!pct) {
        lp->kind = L_EXACT;
        return true;
    }
    lp->kind = L_SEGMENTS;
    lp->seg = tl_malloc(sizeof(Seg) * (m / 2 + 1));
    if (!lp->seg) return false;
    lp->start_pct = p[0] == '%';
    lp->end_pct = p[m - 1] == '%';
    size_t i = 0;
    while (i < m) {
        while (i < m && p[i] == '%') i++;
        size_t j = i;
        while (j < m && p[j] != '%') j++;
        if (j > i) lp->seg[lp->n_seg++] = (Seg){p + i, j - i};
        i = j;
    }
    return true;
}

static bool like_segments(const LikePat *lp, const uint8_t *s, size_t n)
{
    int k = 0, n_seg = lp->n_seg;
    if (n_seg == 0) return true; /* only '%'s */
    if (!lp->start_pct) {
        const Seg *g = &lp->seg[0];
        if (n < g->len || memcmp(s, g->s, g->len) != 0) return false;
        s += g->len;
        n -= g->len;
        k = 1;
        if (n_seg == 1) return lp->end_pct || n == 0;
    }
    int end_k = lp->end_pct ? n_seg : n_seg - 1;
    for (; k < end_k; k++) {
        const Seg *g = &lp->seg[k];
        const uint8_t *hit = tl_k_fn_find(s, n, g->s, g->len);
        if (!hit) return false;
        size_t adv = (size_t)(hit - s) + g->len;
        s += adv;
        n -= adv;
    }
    if (!lp->end_pct) {
        const Seg *g = &lp->seg[n_seg - 1];
        return n >= g->len && memcmp(s + n - g->len, g->s, g->len) == 0;
    }
    return true;
}

static inline bool like_match(const LikePat *lp, const uint8_t *s, size_t n)
{
    switch (lp->kind) {
    case L_EXACT: return n == lp->plen && memcmp(s, lp->p, n) == 0;
    case L_SEGMENTS: return like_segments(lp, s, n);
    default: return like_general(s, n, lp->p, lp->plen);
    }
}

static bool types_like(const TlType *a, int n, TlType *res, TlType *want)
{
    if (n != 2) return false;
    for (int i = 0; i < 2; i++) {
        if (a[i] != TL_TSTRING && a[i] != TL_TNULL) return false;
        want[i] = TL_TSTRING;
    }
    *res = TL_TBOOL;
    return true;
}

static TlStatus k_like(const TlDatum *args, int n_args, int64_t n_rows,
                       TlArray **out, int64_t *err_row, TlError *err)
{
    TlBuf *validity = NULL, *values = NULL;
    LikePat lp = {0};
    bool all_null;
    TL_FN_BROADCAST(k_like);
    TL_TRY(tl_k_fn_nulls(args, 2, n_rows, &all_null, &validity, err));
    if (all_null) return tl_k_fn_null_result(TL_TBOOL, n_rows, out, err);
    values = tl_buf_new(tl_bitmap_bytes(n_rows), true);
    if (!values) goto oom;
    const TlArray *xa = args[0].array, *pa = args[1].array;
    const TlView *xv = tl_array_views(xa), *pv = tl_array_views(pa);
    uint8_t *bits = values->data;
    bool x_scalar = args[0].scalar;
    if (args[1].scalar) {
        if (!like_compile(&lp, tl_view_ptr(&pv[0], pa->data),
                          tl_view_len(pv[0])))
            goto oom;
        for (int64_t i = 0; i < n_rows; i++) {
            if (!tl_k_fn_row_valid(validity, i)) continue;
            const TlView *v = &xv[x_scalar ? 0 : i];
            if (like_match(&lp, tl_view_ptr(v, xa->data), tl_view_len(*v)))
                tl_bit_set(bits, i);
        }
        tl_free(lp.seg);
    } else {
        for (int64_t i = 0; i < n_rows; i++) {
            if (!tl_k_fn_row_valid(validity, i)) continue;
            const TlView *v = &xv[x_scalar ? 0 : i];
            if (like_general(tl_view_ptr(v, xa->data), tl_view_len(*v),
                             tl_view_ptr(&pv[i], pa->data),
                             tl_view_len(pv[i])))
                tl_bit_set(bits, i);
        }
    }
    *out = tl_array_new(TL_TBOOL, n_rows, values, validity, -1, NULL, 0);
    return *out ? TL_OK : tl_error_oom(err);
oom:
    tl_buf_release(values);
    tl_buf_release(validity);
    return tl_error_oom(err);
}

/* ilike: like over both sides lowercased, each character by its simple
 * Unicode lowercase mapping (utf8proc, as lower() and DuckDB), so 'ÉCOLE'
 * ilike 'é%' but 'ß' not ilike 'SS'.  A scalar pattern is lowered and
 * compiled once per call; each string is lowered into a scratch buffer
 * (all-ASCII strings byte by byte). */
typedef struct Lowered {
    uint8_t *p;
    size_t cap;
} Lowered;

/* s[0..n) lowercased into lo (grown as needed): its length, or SIZE_MAX on
 * OOM.  A lowercase mapping never takes more than 4 bytes a character, and
 * bytes that are not UTF-8 are copied as they are. */
static size_t lower_into(Lowered *lo, const uint8_t *s, size_t n)
{
    size_t need = n * 2 + 8;
    if (need > lo->cap) {
        uint8_t *q = tl_realloc(lo->p, need);
        if (!q) return SIZE_MAX;
        lo->p = q;
        lo->cap = need;
    }
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        uint8_t c = s[i];
        if (c < 0x80) {
            lo->p[o++] = (uint8_t)(c >= 'A' && c <= 'Z' ? c + 32 : c);
            i++;
            continue;
        }
        utf8proc_int32_t cp;
        utf8proc_ssize_t k = utf8proc_iterate(s + i, (utf8proc_ssize_t)(n - i), &cp);
        if (k <= 0) {
            lo->p[o++] = c;
            i++;
            continue;
        }
        if (o + 4 > lo->cap) { /* a mapping that grew (rare): room again */
            uint8_t *q = tl_realloc(lo->p, lo->cap * 2);
            if (!q) return SIZE_MAX;
            lo->p = q;
            lo->cap *= 2;
        }
        o += (size_t)utf8proc_encode_char(utf8proc_tolower(cp), lo->p + o);
        i += (size_t)k;
    }
    return o;
}

static TlStatus k_ilike(const TlDatum *args, int n_args, int64_t n_rows,
                        TlArray **out, int64_t *err_row, TlError *err)
{
    TlBuf *validity = NULL, *values = NULL;
    LikePat lp = {0};
    Lowered ls = {0}, lpat = {0};
    bool all_null;
    TL_FN_BROADCAST(k_ilike);
    TL_TRY(tl_k_fn_nulls(args, 2, n_rows, &all_null, &validity, err));
    if (all_null) return tl_k_fn_null_result(TL_TBOOL, n_rows, out, err);
    values = tl_buf_new(tl_bitmap_bytes(n_rows), true);
    if (!values) goto oom;
    const TlArray *xa = args[0].array, *pa = args[1].array;
    const TlView *xv = tl_array_views(xa), *pv = tl_array_views(pa);
    uint8_t *bits = values->data;
    bool x_scalar = args[0].scalar, p_scalar = args[1].scalar;
    size_t pn = 0;
    if (p_scalar) {
        pn = lower_into(&lpat, tl_view_ptr(&pv[0], pa->data), tl_view_len(pv[0]));
        if (pn == SIZE_MAX || !like_compile(&lp, lpat.p, pn)) goto oom;
    }
    for (int64_t i = 0; i < n_rows; i++) {
        if (!tl_k_fn_row_valid(validity, i)) continue;
        const TlView *v = &xv[x_scalar ? 0 : i];
        size_t sn = lower_into(&ls, tl_view_ptr(v, xa->data), tl_view_len(*v));
        if (sn == SIZE_MAX) goto oom;
        bool hit;
        if (p_scalar) {
            hit = like_match(&lp, ls.p, sn);
        } else {
            pn = lower_into(&lpat, tl_view_ptr(&pv[i], pa->data), tl_view_len(pv[i]));
            if (pn == SIZE_MAX) goto oom;
            hit = like_general(ls.p, sn, lpat.p, pn);
        }
        if (hit) tl_bit_set(bits, i);
    }
    tl_free(lp.seg);
    tl_free(ls.p);
    tl_free(lpat.p);
    *out = tl_array_new(TL_TBOOL, n_rows, values, validity, -1, NULL, 0);
    return *out ? TL_OK : tl_error_oom(err);
oom:
    tl_free(lp.seg);
    tl_free(ls.p);
    tl_free(lpat.p);
    tl_buf_release(values);
    tl_buf_release(validity);
    return tl_error_oom(err);
}

/* The like family's table for the registry (fn.c). */
const TlFnDef tl_k_fn_like_defs[] = {
    {"like", k_like, types_like},
    {"ilike", k_ilike, types_like},
};
/* Number of entries in tl_k_fn_like_defs. */
const int tl_k_fn_like_count =
    (int)(sizeof tl_k_fn_like_defs / sizeof tl_k_fn_like_defs[0]);
