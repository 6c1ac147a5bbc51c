/*
 * sort.c -- stable sorts of row indexes (see sort.h).
 *
 * tl_k_sort_u64 is an LSD radix sort, 8 passes of one byte each, stable by
 * construction.  One first pass builds all eight histograms; a byte position
 * where every key has the same byte is skipped, so small ranges (dates,
 * small integers, images that share high bytes) take few passes.
 *
 * tl_k_sort_rows sorts encoded rows (rowenc.h).  Most comparisons are
 * decided by the first 8 bytes, so each row's first 8 bytes (big-endian,
 * zero padded) go through the radix sort first; rows whose prefixes tie are
 * adjacent afterwards, and each such run is merge sorted on the whole row.
 * Padding with zeros cannot misorder: the encoding is prefix-free, so two
 * rows with different padded prefixes differ at a byte both of them have.
 * Both steps are stable, so the whole sort is.
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

static inline int row_cmp(const TlRows *r, uint32_t a, uint32_t b)
{
    if (r->offs == NULL)
        return memcmp(r->bytes + (size_t)a * r->width,
                      r->bytes + (size_t)b * r->width, r->width);
    size_t la, lb;
    const uint8_t *pa = tl_rows_at(r, a, &la), *pb = tl_rows_at(r, b, &lb);
    return tl_rows_cmp(pa, la, pb, lb);
}

static void insertion(const TlRows *r, uint32_t *v, int64_t n)
{
    for (int64_t i = 1; i < n; i++) {
        uint32_t x = v[i];
        int64_t j = i;
        while (j > 0 && row_cmp(r, v[j - 1], x) > 0) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

/* Sort src[0..n) into dst[0..n); src may be clobbered.  When `in_place`
 * the result is wanted in src instead (then dst is the scratch). */
static void msort(const TlRows *r, uint32_t *src, uint32_t *dst, int64_t n,
                  bool in_place)
{
    if (n <= 16) {
        insertion(r, src, n);
        if (!in_place) memcpy(dst, src, (size_t)n * sizeof *src);
        return;
    }
    int64_t h = n / 2;
    /* Sort both halves into the other buffer, then merge back. */
    msort(r, src, dst, h, !in_place);
    msort(r, src + h, dst + h, n - h, !in_place);
    uint32_t *from = in_place ? dst : src, *to = in_place ? src : dst;
    int64_t i = 0, j = h, k = 0;
    if (row_cmp(r, from[h - 1], from[h]) <= 0) {
        memcpy(to, from, (size_t)n * sizeof *to);
        return;
    }
    while (i < h && j < n) {
        if (row_cmp(r, from[j], from[i]) < 0) to[k++] = from[j++];
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
    msort(r, idx, scratch, n, true);
}

static inline uint64_t prefix8(const TlRows *r, uint32_t i)
{
    size_t len;
    const uint8_t *p = tl_rows_at(r, i, &len);
    uint8_t b[8] = {0};
    memcpy(b, p, len < 8 ? len : 8);
    uint64_t v;
    memcpy(&v, b, 8);
    return __builtin_bswap64(v);
}

/* Sort idx by encoded rows (see sort.h). */
TlStatus tl_k_sort_rows(const TlRows *r, uint32_t *idx, int64_t n, TlError *err)
{
    if (n < 2) return TL_OK;
    uint64_t *pre = tl_malloc((size_t)n * sizeof *pre);
    uint32_t *scratch = NULL;
    if (!pre) return tl_error_oom(err);
    for (int64_t i = 0; i < n; i++) pre[i] = prefix8(r, idx[i]);
    TlStatus st = tl_k_sort_u64(pre, idx, n, err);
    if (st != TL_OK) goto done;
    if (r->offs == NULL && r->width <= 8) goto done; /* prefix is the row */
    for (int64_t i = 0; i < n;) {
        int64_t j = i + 1;
        while (j < n && pre[j] == pre[i]) j++;
        if (j - i > 1) {
            if (!scratch) {
                scratch = tl_malloc((size_t)n * sizeof *scratch);
                if (!scratch) {
                    st = tl_error_oom(err);
                    goto done;
                }
            }
            tl_k_merge_sort_rows(r, idx + i, scratch, j - i);
        }
        i = j;
    }
done:
    tl_free(pre);
    tl_free(scratch);
    return st;
}
