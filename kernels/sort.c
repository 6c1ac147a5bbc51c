/*
 * sort.c -- stable sorts of row indexes (see sort.h).
 *
 * tl_k_sort_u64 is an LSD radix sort, 8 passes of one byte each, stable by
 * construction.  One first pass builds all eight histograms; a byte position
 * where every key has the same byte is skipped, so small ranges (dates,
 * small integers, images that share high bytes) take few passes.
 *
 * tl_k_sort_rows sorts encoded rows (rowenc.h) most significant digit
 * first, a digit being 8 bytes: every row's bytes [d, d+8) (big-endian,
 * zero padded past its end) go through the radix sort above, and each run
 * of rows that tie on the digit is sorted on the next 8 bytes, and so on.
 * Runs of at most SMALL_RUN rows sort their digits with a merge sort of
 * (digit, index) pairs instead of the radix passes, so rows are read once
 * per level and never compared byte by byte.  Padding with zeros cannot misorder: the encoding is
 * prefix-free, so two different rows differ at a byte both of them have,
 * and rows that tie on every digit up to their ends are equal.  Every step
 * is stable, so the whole sort is.  Shared leading bytes (a common string
 * prefix, a key's high bytes) cost one histogram pass per digit and no
 * scatter, thanks to the constant-byte skip.
 *
 * The merge sort is top-down with a stable insertion sort below 16 rows and
 * one scratch array; it ping-pongs between idx and scratch.
 */
#include "sort.h"

#include "../lib/core/core.h"

/* Sort keys with payload idx (see sort.h). */
TlStatus tl_k_sort_u64(uint64_t *keys, uint32_t *idx, int64_t n, TlError *err)
{
    if (n < 2) return TL_OK;
    size_t (*hist)[256] = tl_calloc(8, sizeof *hist);
    uint64_t *k2 = tl_malloc((size_t)n * sizeof *k2);
    uint32_t *i2 = tl_malloc((size_t)n * sizeof *i2);
    if (!hist || !k2 || !i2) {
        tl_free(hist);
        tl_free(k2);
        tl_free(i2);
        return tl_error_oom(err);
    }
    for (int64_t i = 0; i < n; i++) {
        uint64_t k = keys[i];
        for (int b = 0; b < 8; b++) hist[b][(k >> (8 * b)) & 0xFF]++;
    }
    uint64_t *ks = keys, *kd = k2;
    uint32_t *is = idx, *id = i2;
    for (int b = 0; b < 8; b++) {
        size_t *h = hist[b];
        if (h[(ks[0] >> (8 * b)) & 0xFF] == (size_t)n) continue; /* all equal */
        size_t sum = 0;
        for (int v = 0; v < 256; v++) {
            size_t c = h[v];
            h[v] = sum;
            sum += c;
        }
        for (int64_t i = 0; i < n; i++) {
            size_t p = h[(ks[i] >> (8 * b)) & 0xFF]++;
            kd[p] = ks[i];
            id[p] = is[i];
        }
        uint64_t *tk = ks; ks = kd; kd = tk;
        uint32_t *ti = is; is = id; id = ti;
    }
    if (ks != keys) {
        memcpy(keys, ks, (size_t)n * sizeof *keys);
        memcpy(idx, is, (size_t)n * sizeof *idx);
    }
    tl_free(hist);
    tl_free(k2);
    tl_free(i2);
    return TL_OK;
}

/* Sort keys only (see sort.h). */
void tl_k_sort_u64_keys(uint64_t *keys, uint64_t *scratch, int64_t n)
{
    if (n <= 48) {
        for (int64_t i = 1; i < n; i++) {
            uint64_t x = keys[i];
            int64_t j = i;
            while (j > 0 && keys[j - 1] > x) {
                keys[j] = keys[j - 1];
                j--;
            }
            keys[j] = x;
        }
        return;
    }
    size_t hist[8][256];
    memset(hist, 0, sizeof hist);
    for (int64_t i = 0; i < n; i++) {
        uint64_t k = keys[i];
        for (int b = 0; b < 8; b++) hist[b][(k >> (8 * b)) & 0xFF]++;
    }
    uint64_t *src = keys, *dst = scratch;
    for (int b = 0; b < 8; b++) {
        size_t *h = hist[b];
        if (h[(src[0] >> (8 * b)) & 0xFF] == (size_t)n) continue;
        size_t sum = 0;
        for (int v = 0; v < 256; v++) {
            size_t c = h[v];
            h[v] = sum;
            sum += c;
        }
        for (int64_t i = 0; i < n; i++) dst[h[(src[i] >> (8 * b)) & 0xFF]++] = src[i];
        uint64_t *t = src; src = dst; dst = t;
    }
    if (src != keys) memcpy(keys, src, (size_t)n * sizeof *keys);
}

/* memcmp order of n bytes, 8 at a time, without a libc call. */
static inline int cmp_bytes(const uint8_t *a, const uint8_t *b, size_t n)
{
    while (n >= 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y) return __builtin_bswap64(x) < __builtin_bswap64(y) ? -1 : 1;
        a += 8;
        b += 8;
        n -= 8;
    }
    for (; n; n--, a++, b++)
        if (*a != *b) return *a < *b ? -1 : 1;
    return 0;
}

/* Compare rows a and b from byte `skip` on (the bytes before are equal). */
static inline int row_cmp(const TlRows *r, uint32_t a, uint32_t b, size_t skip)
{
    size_t la, lb;
    const uint8_t *pa = tl_rows_at(r, a, &la), *pb = tl_rows_at(r, b, &lb);
    if (la <= skip || lb <= skip) return (la > lb) - (la < lb);
    la -= skip;
    lb -= skip;
    int c = cmp_bytes(pa + skip, pb + skip, la < lb ? la : lb);
    if (c) return c;
    return (la > lb) - (la < lb);
}

static void insertion(const TlRows *r, uint32_t *v, int64_t n, size_t skip)
{
    for (int64_t i = 1; i < n; i++) {
        uint32_t x = v[i];
        int64_t j = i;
        while (j > 0 && row_cmp(r, v[j - 1], x, skip) > 0) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

/* Sort src[0..n) into dst[0..n); src may be clobbered.  When `in_place`
 * the result is wanted in src instead (then dst is the scratch). */
static void msort(const TlRows *r, uint32_t *src, uint32_t *dst, int64_t n,
                  bool in_place, size_t skip)
{
    if (n <= 16) {
        insertion(r, src, n, skip);
        if (!in_place) memcpy(dst, src, (size_t)n * sizeof *src);
        return;
    }
    int64_t h = n / 2;
    /* Sort both halves into the other buffer, then merge back. */
    msort(r, src, dst, h, !in_place, skip);
    msort(r, src + h, dst + h, n - h, !in_place, skip);
    uint32_t *from = in_place ? dst : src, *to = in_place ? src : dst;
    int64_t i = 0, j = h, k = 0;
    if (row_cmp(r, from[h - 1], from[h], skip) <= 0) {
        memcpy(to, from, (size_t)n * sizeof *to);
        return;
    }
    while (i < h && j < n) {
        if (row_cmp(r, from[j], from[i], skip) < 0) to[k++] = from[j++];
        else to[k++] = from[i++];
    }
    while (i < h) to[k++] = from[i++];
    while (j < n) to[k++] = from[j++];
}

/* Merge sort idx by full rows (see sort.h). */
void tl_k_merge_sort_rows(const TlRows *r, uint32_t *idx, uint32_t *scratch,
                          int64_t n)
{
    if (n < 2) return;
    msort(r, idx, scratch, n, true, 0);
}

/* Bytes [d, d+8) of row i, big-endian, zero padded past the row's end. */
static inline uint64_t chunk8(const TlRows *r, uint32_t i, size_t d, bool *more)
{
    size_t len;
    const uint8_t *p = tl_rows_at(r, i, &len);
    uint64_t v;
    if (len >= d + 8) {
        memcpy(&v, p + d, 8);
        if (len > d + 8) *more = true;
    } else {
        uint8_t b[8] = {0};
        if (len > d) memcpy(b, p + d, len - d);
        memcpy(&v, b, 8);
    }
    return __builtin_bswap64(v);
}

typedef struct RowSort {
    const TlRows *r;
    uint64_t *key, *key2;   /* n each */
    uint32_t *idx2;         /* n: radix / merge scratch */
    size_t (*hist)[256];    /* 8 x 256 */
} RowSort;

/* Radix sort key[0..n) with payload idx using the shared scratch. */
static void radix(RowSort *s, uint64_t *key, uint32_t *idx, int64_t n)
{
    size_t (*hist)[256] = s->hist;
    memset(hist, 0, 8 * sizeof *hist);
    for (int64_t i = 0; i < n; i++) {
        uint64_t k = key[i];
        for (int b = 0; b < 8; b++) hist[b][(k >> (8 * b)) & 0xFF]++;
    }
    uint64_t *ks = key, *kd = s->key2;
    uint32_t *is = idx, *id = s->idx2;
    for (int b = 0; b < 8; b++) {
        size_t *h = hist[b];
        if (h[(ks[0] >> (8 * b)) & 0xFF] == (size_t)n) continue;
        size_t sum = 0;
        for (int v = 0; v < 256; v++) {
            size_t c = h[v];
            h[v] = sum;
            sum += c;
        }
        for (int64_t i = 0; i < n; i++) {
            size_t p = h[(ks[i] >> (8 * b)) & 0xFF]++;
            kd[p] = ks[i];
            id[p] = is[i];
        }
        uint64_t *tk = ks; ks = kd; kd = tk;
        uint32_t *ti = is; is = id; id = ti;
    }
    if (ks != key) {
        memcpy(key, ks, (size_t)n * sizeof *key);
        memcpy(idx, is, (size_t)n * sizeof *idx);
    }
}

#define SMALL_RUN 256

/* Stable merge sort of the pairs (key[i], idx[i]) by key, for short runs
 * where a radix pass's histograms cost more than comparisons. */
static void pair_sort(uint64_t *key, uint32_t *idx, uint64_t *k2, uint32_t *i2,
                      int64_t n)
{
    if (n <= 16) {
        for (int64_t i = 1; i < n; i++) {
            uint64_t k = key[i];
            uint32_t x = idx[i];
            int64_t j = i;
            while (j > 0 && key[j - 1] > k) {
                key[j] = key[j - 1];
                idx[j] = idx[j - 1];
                j--;
            }
            key[j] = k;
            idx[j] = x;
        }
        return;
    }
    int64_t h = n / 2;
    pair_sort(key, idx, k2, i2, h);
    pair_sort(key + h, idx + h, k2, i2, n - h);
    if (key[h - 1] <= key[h]) return;
    memcpy(k2, key, (size_t)h * sizeof *k2);
    memcpy(i2, idx, (size_t)h * sizeof *i2);
    int64_t a = 0, b = h, o = 0;
    while (a < h && b < n) {
        if (key[b] < k2[a]) {
            key[o] = key[b];
            idx[o++] = idx[b++];
        } else {
            key[o] = k2[a];
            idx[o++] = i2[a++];
        }
    }
    while (a < h) {
        key[o] = k2[a];
        idx[o++] = i2[a++];
    }
}

/* MSD over 8-byte digits: rows idx[0..n) agree on bytes [0, d); key is a
 * scratch region of n entries owned by this range. */
static void sort_level(RowSort *s, uint32_t *idx, uint64_t *key, int64_t n,
                       size_t d)
{
    const TlRows *r = s->r;
    if (n < 2) return;
    bool more = false;
    for (int64_t i = 0; i < n; i++) key[i] = chunk8(r, idx[i], d, &more);
    if (n > SMALL_RUN) radix(s, key, idx, n);
    else pair_sort(key, idx, s->key2, s->idx2, n);
    /* No row goes past d + 8: equal digits mean equal rows (the encoding
     * is prefix-free), so the ties are already in stable order. */
    if (!more) return;
    for (int64_t i = 0; i < n;) {
        int64_t j = i + 1;
        while (j < n && key[j] == key[i]) j++;
        if (j - i > 1) sort_level(s, idx + i, key + i, j - i, d + 8);
        i = j;
    }
}

/* Sort idx by encoded rows (see sort.h). */
TlStatus tl_k_sort_rows(const TlRows *r, uint32_t *idx, int64_t n, TlError *err)
{
    if (n < 2) return TL_OK;
    RowSort s = {r, NULL, NULL, NULL, NULL};
    s.key = tl_malloc((size_t)n * sizeof *s.key);
    s.key2 = tl_malloc((size_t)n * sizeof *s.key2);
    s.idx2 = tl_malloc((size_t)n * sizeof *s.idx2);
    s.hist = tl_malloc(8 * sizeof *s.hist);
    TlStatus st = TL_OK;
    if (!s.key || !s.key2 || !s.idx2 || !s.hist) st = tl_error_oom(err);
    else sort_level(&s, idx, s.key, n, 0);
    tl_free(s.key);
    tl_free(s.key2);
    tl_free(s.idx2);
    tl_free(s.hist);
    return st;
}

/* ------------------------------------------------ one string key, by views */

typedef struct StrSort {
    const uint8_t *const *ptr;
    const uint32_t *len;
    uint64_t flip;          /* ~0 when descending */
    uint64_t *key2;
    uint32_t *idx2;
    size_t (*hist)[256];
} StrSort;

/* Bytes [d, d+8) of string i, big-endian, zero padded past its end. */
static inline uint64_t str_digit(const StrSort *s, uint32_t i, size_t d, bool *more)
{
    uint32_t len = s->len[i];
    const uint8_t *p = s->ptr[i];
    uint64_t v;
    if (len >= d + 8) {
        memcpy(&v, p + d, 8);
        if (len > d + 8) *more = true;
    } else {
        uint8_t b[8] = {0};
        if (len > d) memcpy(b, p + d, len - d);
        memcpy(&v, b, 8);
    }
    return __builtin_bswap64(v);
}

static void str_radix(StrSort *s, uint64_t *key, uint32_t *idx, int64_t n)
{
    RowSort rs = {NULL, key, s->key2, s->idx2, s->hist};
    radix(&rs, key, idx, n);
}

/* MSD over 8-byte digits of strings idx[0..n) that agree on bytes [0, d).
 * A run that ties on a digit and has no byte past it holds strings equal up
 * to zero padding: those order by length (shorter = prefix first). */
static void str_level(StrSort *s, uint32_t *idx, uint64_t *key, int64_t n, size_t d)
{
    if (n < 2) return;
    bool more = false;
    for (int64_t i = 0; i < n; i++) key[i] = str_digit(s, idx[i], d, &more) ^ s->flip;
    if (n > SMALL_RUN) str_radix(s, key, idx, n);
    else pair_sort(key, idx, s->key2, s->idx2, n);
    for (int64_t i = 0; i < n;) {
        int64_t j = i + 1;
        while (j < n && key[j] == key[i]) j++;
        if (j - i > 1) {
            if (more) {
                str_level(s, idx + i, key + i, j - i, d + 8);
            } else {
                for (int64_t t = i; t < j; t++) key[t] = (uint64_t)s->len[idx[t]] ^ s->flip;
                pair_sort(key + i, idx + i, s->key2, s->idx2, j - i);
            }
        }
        i = j;
    }
}

/* Stable sort of idx by strings (see sort.h). */
TlStatus tl_k_sort_strs(const uint8_t *const *ptr, const uint32_t *len, bool desc,
                        uint32_t *idx, int64_t n, TlError *err)
{
    if (n < 2) return TL_OK;
    StrSort s = {ptr, len, desc ? ~0ull : 0, NULL, NULL, NULL};
    uint64_t *key = tl_malloc((size_t)n * sizeof *key);
    s.key2 = tl_malloc((size_t)n * sizeof *s.key2);
    s.idx2 = tl_malloc((size_t)n * sizeof *s.idx2);
    s.hist = tl_malloc(8 * sizeof *s.hist);
    TlStatus st = TL_OK;
    if (!key || !s.key2 || !s.idx2 || !s.hist) st = tl_error_oom(err);
    else str_level(&s, idx, key, n, 0);
    tl_free(key);
    tl_free(s.key2);
    tl_free(s.idx2);
    tl_free(s.hist);
    return st;
}
