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
 * scatter, thanks to the constant-byte skip.  The top level also starts
 * past the bytes that every row shares: the first digit pass ORs each
 * digit XOR the first one, and when the c > 0 leading bytes agree for all
 * rows the level is redone at byte c (rows that agree on bytes [0, c) may
 * start there; padded rows agree with real zero bytes only where the
 * prefix-free encoding makes them equal rows anyway).  "id0000001905"
 * keys share 7 bytes with their sentinel, so one level of digits then
 * tells all their values apart instead of two levels over all rows.
 * Below the top level the rows are read in sorted order, i.e. at random:
 * row_digits prefetches offsets and bytes a few rows ahead.
 *
 * The merge sort is top-down with a stable insertion sort below 16 rows and
 * one scratch array; it ping-pongs between idx and scratch.
 *
 * The parallel versions (tl_k_psort_*, at the end) use the thread pool:
 * u64 keys as runs sorted apart and merged at merge-path splits, rows and
 * strings as parallel MSD levels (digits computed in pieces, the level's
 * radix sort parallel, tie runs finished by the serial code above in
 * tasks).  Every step is stable, so they give the serial result.  One
 * scratch of n keys + n indexes serves the runs' radix passes and then the
 * merges, and an MSD sort allocates it once for all its levels: big
 * scratch is fresh memory, and faulting it in again per run, merge and
 * level cost a 1e7-row sort more system time than the sorting.
 */
#include "sort.h"

#include "../lib/core/core.h"
#include "../lib/core/pool.h"

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

/* Leading bytes that every digit shares, given the OR of each digit XOR
 * one of them (8: all equal). */
static inline size_t shared_bytes(uint64_t diff)
{
    return diff ? (size_t)__builtin_clzll(diff) / 8 : 8;
}

/* key[i] := digit d of row idx[i] for i in [0, n) (chunk8), *more as
 * chunk8 sets it; returns the OR of every digit XOR key[0].  The rows are
 * read in idx order, which is random below the top level: their offsets
 * and bytes are prefetched a few rows ahead (two dependent cache misses
 * per row otherwise, the bulk of a big sort's tie-run levels). */
static uint64_t row_digits(const TlRows *r, const uint32_t *idx, uint64_t *key, int64_t n,
                           size_t d, bool *more)
{
    enum { AHEAD = 8 };
    uint64_t diff = 0;
    if (n <= 0) return 0;
    if (r->offs) {
        for (int64_t i = 0; i < n; i++) {
            if (i + 2 * AHEAD < n) __builtin_prefetch(&r->offs[idx[i + 2 * AHEAD]]);
            if (i + AHEAD < n) {
                const uint8_t *p = r->bytes + r->offs[idx[i + AHEAD]] + d;
                __builtin_prefetch(p);
                __builtin_prefetch(p + 7);
            }
            key[i] = chunk8(r, idx[i], d, more);
            diff |= key[i] ^ key[0];
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            if (i + AHEAD < n) {
                const uint8_t *p = r->bytes + (size_t)idx[i + AHEAD] * r->width + d;
                __builtin_prefetch(p);
                __builtin_prefetch(p + 7);
            }
            key[i] = chunk8(r, idx[i], d, more);
            diff |= key[i] ^ key[0];
        }
    }
    return diff;
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
    uint64_t diff = row_digits(r, idx, key, n, d, &more);
    /* The top level starts past the bytes every row shares (see the
     * design comment): the digits then cover bytes that tell rows apart. */
    size_t c = shared_bytes(diff);
    if (d == 0 && c > 0 && n > SMALL_RUN) {
        sort_level(s, idx, key, n, c);
        return;
    }
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
    uint64_t diff = 0;
    for (int64_t i = 0; i < n; i++) {
        key[i] = str_digit(s, idx[i], d, &more) ^ s->flip;
        diff |= key[i] ^ key[0];
    }
    size_t c = shared_bytes(diff); /* as in sort_level */
    if (d == 0 && c > 0 && n > SMALL_RUN) {
        str_level(s, idx, key, n, c);
        return;
    }
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

/* ------------------------------------------------------------ parallel */

/* Rows per run below which a run is not worth a task of its own. */
#define PAR_MIN_RUN 32768
/* Smallest piece of a merge handed to one task. */
#define PAR_MIN_PIECE 16384

enum { PS_ROWS, PS_STRS };

typedef struct MergeTask {
    int64_t lo, mid, hi;  /* merge [lo, mid) with [mid, hi) */
    int64_t d0, d1;       /* output positions [lo + d0, lo + d1) */
} MergeTask;

typedef struct PSort {
    uint64_t *keys;
    uint32_t *idx;
    int64_t n;
    int runs;
    int64_t *bound;                 /* runs + 1 block boundaries */
    /* the merge level being run */
    uint64_t *ks, *kd;
    uint32_t *is, *id;
    uint64_t *k2;                   /* scratch: n keys, n indexes, shared */
    uint32_t *i2;                   /* by the runs' radix sorts and merges */
    MergeTask *tasks;
} PSort;

/* Radix sort of keys with payload idx in the given scratch (n each). */
static void radix_in(uint64_t *keys, uint32_t *idx, uint64_t *k2, uint32_t *i2, int64_t n)
{
    size_t hist[8][256];
    RowSort rs = {NULL, NULL, k2, i2, hist};
    if (n >= 2) radix(&rs, keys, idx, n);
}

/* Whether element y of the right run goes before element x of the left
 * run: strictly smaller (ties go left, which keeps the merge stable). */
static inline bool right_first(const PSort *p, int64_t y, int64_t x)
{
    return p->ks[y] < p->ks[x];
}

/* How many elements of the left run [lo, mid) are among the first d
 * outputs of the merge with [mid, hi) (the merge path's split). */
static int64_t co_rank(const PSort *p, const MergeTask *t, int64_t d)
{
    int64_t na = t->mid - t->lo, nb = t->hi - t->mid;
    int64_t lo = d > nb ? d - nb : 0, hi = d < na ? d : na;
    while (lo < hi) {
        int64_t m = lo + (hi - lo) / 2;
        if (right_first(p, t->mid + (d - m - 1), t->lo + m)) hi = m;
        else lo = m + 1;
    }
    return lo;
}

static void merge_piece(void *arg, int64_t ti)
{
    PSort *p = arg;
    const MergeTask *t = &p->tasks[ti];
    int64_t i = co_rank(p, t, t->d0), i1 = co_rank(p, t, t->d1);
    int64_t j = t->d0 - i, j1 = t->d1 - i1;
    int64_t a = t->lo + i, a1 = t->lo + i1, b = t->mid + j, b1 = t->mid + j1;
    int64_t o = t->lo + t->d0;
    const uint64_t *ks = p->ks;
    while (a < a1 && b < b1) {
        if (ks[b] < ks[a]) {
            p->kd[o] = ks[b];
            p->id[o++] = p->is[b++];
        } else {
            p->kd[o] = ks[a];
            p->id[o++] = p->is[a++];
        }
    }
    size_t na = (size_t)(a1 - a), nb = (size_t)(b1 - b);
    memcpy(p->kd + o, ks + a, na * sizeof *ks);
    memcpy(p->id + o, p->is + a, na * sizeof *p->is);
    o += (int64_t)na;
    memcpy(p->kd + o, ks + b, nb * sizeof *ks);
    memcpy(p->id + o, p->is + b, nb * sizeof *p->is);
}

static void sort_run(void *arg, int64_t i)
{
    PSort *p = arg;
    int64_t lo = p->bound[i], m = p->bound[i + 1] - lo;
    radix_in(p->keys + lo, p->idx + lo, p->k2 + lo, p->i2 + lo, m);
}

/* Sort runs in parallel, then merge them level by level. */
static TlStatus psort(PSort *p, TlError *err)
{
    int64_t n = p->n;
    int threads = tl_pool_threads();
    int runs = p->runs;
    TlStatus st = TL_OK;
    uint64_t *k2 = NULL; /* scratch allocated here (none given) */
    uint32_t *i2 = NULL;
    if (runs <= 0) {
        int64_t most = n / PAR_MIN_RUN;
        runs = threads < most ? threads : (int)most;
    }
    if (runs > n / 2) runs = (int)(n / 2);
    if (!p->k2) {
        /* One scratch for the runs' radix passes and then the merges: a
         * fresh one for each would be faulted in twice (see sort.h). */
        k2 = tl_malloc((size_t)n * sizeof *k2);
        i2 = tl_malloc((size_t)n * sizeof *i2);
        if (!k2 || !i2) {
            st = tl_error_oom(err);
            goto done;
        }
        p->k2 = k2;
        p->i2 = i2;
    }
    if (runs <= 1) {
        radix_in(p->keys, p->idx, p->k2, p->i2, n);
        goto done;
    }
    p->bound = tl_malloc(((size_t)runs + 1) * sizeof *p->bound);
    if (!p->bound) {
        st = tl_error_oom(err);
        goto done;
    }
    for (int i = 0; i <= runs; i++) p->bound[i] = n * i / runs;
    p->runs = runs;
    st = tl_pool_for(runs, sort_run, p, err);
    if (st != TL_OK) goto done;

    /* Merge levels: blocks [bound[b], bound[b + 1]) pair up. */
    int64_t piece = n / (2 * (int64_t)threads);
    if (piece < PAR_MIN_PIECE) piece = PAR_MIN_PIECE;
    /* at most runs / 2 pairs, each cut into <= n / piece + 1 pieces */
    size_t max_tasks = (size_t)runs + (size_t)(n / piece) + 1;
    p->tasks = tl_malloc(max_tasks * sizeof *p->tasks);
    if (!p->tasks) {
        st = tl_error_oom(err);
        goto done;
    }
    p->ks = p->keys;
    p->kd = p->k2;
    p->is = p->idx;
    p->id = p->i2;
    int nb = runs;
    while (nb > 1) {
        int nt = 0, out = 0;
        for (int b = 0; b < nb; b += 2) {
            MergeTask t;
            t.lo = p->bound[b];
            t.mid = p->bound[b + 1];
            t.hi = b + 2 <= nb ? p->bound[b + 2] : t.mid;
            int64_t len = t.hi - t.lo;
            int64_t pieces = (len + piece - 1) / piece;
            if (pieces < 1) pieces = 1;
            for (int64_t k = 0; k < pieces; k++) {
                t.d0 = len * k / pieces;
                t.d1 = len * (k + 1) / pieces;
                p->tasks[nt++] = t;
            }
            p->bound[out++] = t.lo;
        }
        p->bound[out] = n;
        st = tl_pool_for(nt, merge_piece, p, err);
        if (st != TL_OK) goto done;
        uint64_t *tk = p->ks; p->ks = p->kd; p->kd = tk;
        uint32_t *ti = p->is; p->is = p->id; p->id = ti;
        nb = out;
    }
    if (p->is != p->idx) {
        memcpy(p->idx, p->is, (size_t)n * sizeof *p->idx);
        memcpy(p->keys, p->ks, (size_t)n * sizeof *p->keys);
    }
done:
    tl_free(p->bound);
    tl_free(p->tasks);
    tl_free(k2);
    tl_free(i2);
    return st;
}

/* tl_k_psort_u64 with the scratch k2 / i2 (n each), or NULL: its own. */
static TlStatus psort_with(uint64_t *keys, uint32_t *idx, int64_t n, int runs, uint64_t *k2,
                           uint32_t *i2, TlError *err)
{
    PSort p;
    memset(&p, 0, sizeof p);
    p.keys = keys;
    p.idx = idx;
    p.n = n;
    p.runs = runs;
    p.k2 = k2;
    p.i2 = i2;
    return n < 2 ? TL_OK : psort(&p, err);
}

/* Parallel radix sort of keys with payload idx (see sort.h). */
TlStatus tl_k_psort_u64(uint64_t *keys, uint32_t *idx, int64_t n, int runs,
                        TlError *err)
{
    return psort_with(keys, idx, n, runs, NULL, NULL, err);
}

/* ------------------------------------- parallel MSD: rows and strings
 *
 * Encoded rows and strings are compared through their indexes, so merging
 * runs of them costs a cache miss per comparison.  Their parallel sort
 * keeps the MSD structure of the serial kernels instead: a level computes
 * every index's 8-byte digit (pieces on the pool), sorts (digit, index)
 * with tl_k_psort_u64, and splits into runs of equal digits.  A run of at
 * least `big` rows (one shared prefix: "id0000001234" strings share
 * their first digit) is the next level, parallel again; the other runs are
 * grouped into tasks of about `piece` rows, each finishing its runs with the
 * serial kernel (sort_level / str_level).  Same digits, same stable steps:
 * the same order as the serial sort. */

typedef struct PMsd {
    int kind;                 /* PS_ROWS or PS_STRS */
    RowSort rs;               /* rows: r */
    StrSort ss;               /* strings: ptr, len, flip */
    int runs;                 /* the caller's run count (tests), or 0 */
    int64_t piece, big;
    /* the level in progress */
    uint32_t *idx;
    uint64_t *key;
    int64_t n;
    size_t d;
    int more;
    /* its small runs, grouped into tasks */
    int64_t *run;             /* lo, len pairs */
    int64_t *grp;             /* first run of each group, + the end */
    int final_len;            /* strings with no byte past d + 8: by length */
    uint64_t ref, diff;       /* one digit of the level; OR of digit ^ ref */
    uint64_t *k2;             /* the u64 sort's scratch, n keys + n indexes, */
    uint32_t *i2;             /* shared by every level */
    int failed;
} PMsd;

static void msd_digits(void *arg, int64_t k)
{
    PMsd *p = arg;
    int64_t lo = k * p->piece, hi = lo + p->piece < p->n ? lo + p->piece : p->n;
    bool more = false;
    uint64_t ref = p->ref, diff = 0;
    if (p->kind == PS_ROWS)
        diff = row_digits(p->rs.r, p->idx + lo, p->key + lo, hi - lo, p->d, &more) |
               (hi > lo ? p->key[lo] ^ ref : 0);
    else
        for (int64_t i = lo; i < hi; i++) {
            p->key[i] = str_digit(&p->ss, p->idx[i], p->d, &more) ^ p->ss.flip;
            diff |= p->key[i] ^ ref;
        }
    if (more) __atomic_store_n(&p->more, 1, __ATOMIC_RELAXED);
    if (diff) __atomic_fetch_or(&p->diff, diff, __ATOMIC_RELAXED);
}

/* Group g of small runs, with the serial kernels and scratch of its own. */
static void msd_group(void *arg, int64_t g)
{
    PMsd *p = arg;
    int64_t r0 = p->grp[g], r1 = p->grp[g + 1], most = 0;
    for (int64_t r = r0; r < r1; r++)
        if (p->run[2 * r + 1] > most) most = p->run[2 * r + 1];
    uint64_t *key2 = tl_malloc((size_t)most * sizeof *key2);
    uint32_t *idx2 = tl_malloc((size_t)most * sizeof *idx2);
    size_t (*hist)[256] = tl_malloc(8 * sizeof *hist);
    if (!key2 || !idx2 || !hist) {
        __atomic_store_n(&p->failed, 1, __ATOMIC_RELAXED);
        goto done;
    }
    RowSort rs = {p->rs.r, NULL, key2, idx2, hist};
    StrSort ss = {p->ss.ptr, p->ss.len, p->ss.flip, key2, idx2, hist};
    for (int64_t r = r0; r < r1; r++) {
        int64_t lo = p->run[2 * r], len = p->run[2 * r + 1];
        uint32_t *idx = p->idx + lo;
        uint64_t *key = p->key + lo;
        if (p->kind == PS_ROWS) {
            sort_level(&rs, idx, key, len, p->d + 8);
        } else if (!p->final_len) {
            str_level(&ss, idx, key, len, p->d + 8);
        } else { /* equal up to zero padding: shorter first (str_level) */
            for (int64_t t = 0; t < len; t++) key[t] = (uint64_t)ss.len[idx[t]] ^ ss.flip;
            pair_sort(key, idx, key2, idx2, len);
        }
    }
done:
    tl_free(key2);
    tl_free(idx2);
    tl_free(hist);
}

/* One parallel level over idx[0..n) (rows agreeing on bytes [0, d)). */
static TlStatus msd_level(PMsd *p, uint32_t *idx, uint64_t *key, int64_t n,
                          size_t d, TlError *err)
{
    TlStatus st;
    int64_t n_runs = 0, cap = 0, n_grp = 0;
    int64_t *run = NULL, *grp = NULL;
    p->idx = idx;
    p->key = key;
    p->n = n;
    p->d = d;
    p->more = 0;
    p->diff = 0;
    bool m = false; /* (the digit pass finds whether rows go on) */
    p->ref = p->kind == PS_ROWS ? chunk8(p->rs.r, idx[0], d, &m)
                                : str_digit(&p->ss, idx[0], d, &m) ^ p->ss.flip;
    st = tl_pool_for((n + p->piece - 1) / p->piece, msd_digits, p, err);
    if (st != TL_OK) return st;
    bool more = p->more;
    /* The top level starts past the bytes every row shares, as the serial
     * kernels do (same digits from there on, so the same order). */
    size_t c = shared_bytes(p->diff);
    if (d == 0 && c > 0) return msd_level(p, idx, key, n, c, err);
    st = psort_with(key, idx, n, p->runs, p->k2, p->i2, err);
    if (st != TL_OK) return st;
    if (!more && p->kind == PS_ROWS) return TL_OK; /* ties are equal rows */
    bool final_len = !more;
    for (int64_t i = 0; i < n;) {
        int64_t j = i + 1;
        while (j < n && key[j] == key[i]) j++;
        if (j - i > 1 && j - i >= p->big && !final_len) {
            st = msd_level(p, idx + i, key + i, j - i, d + 8, err);
            if (st != TL_OK) goto done;
        } else if (j - i > 1) {
            if (n_runs == cap) {
                cap = cap ? 2 * cap : 256;
                int64_t *nr = tl_realloc(run, (size_t)cap * 2 * sizeof *nr);
                if (!nr) goto oom;
                run = nr;
            }
            run[2 * n_runs] = i;
            run[2 * n_runs + 1] = j - i;
            n_runs++;
        }
        i = j;
    }
    if (n_runs == 0) goto done;
    grp = tl_malloc(((size_t)n_runs + 1) * sizeof *grp);
    if (!grp) goto oom;
    for (int64_t r = 0, acc = 0; r < n_runs; r++) {
        if (acc == 0) grp[n_grp++] = r;
        acc += run[2 * r + 1];
        if (acc >= p->piece) acc = 0;
    }
    grp[n_grp] = n_runs;
    /* the level's fields again: the big runs' levels overwrote them */
    p->idx = idx;
    p->key = key;
    p->n = n;
    p->d = d;
    p->run = run;
    p->grp = grp;
    p->final_len = final_len;
    st = tl_pool_for(n_grp, msd_group, p, err);
    if (st == TL_OK && p->failed) goto oom;
    goto done;
oom:
    st = tl_error_oom(err);
done:
    tl_free(run);
    tl_free(grp);
    return st;
}

/* Parallel MSD sort of idx; the serial kernel when it would not pay. */
static TlStatus msd(PMsd *p, uint32_t *idx, int64_t n, TlError *err)
{
    int runs = p->runs;
    if (runs <= 0) {
        int threads = tl_pool_threads();
        runs = n >= 2 * PAR_MIN_RUN ? threads : 1;
    }
    if (runs <= 1 || n < 2) {
        if (p->kind == PS_ROWS) return tl_k_sort_rows(p->rs.r, idx, n, err);
        return tl_k_sort_strs(p->ss.ptr, p->ss.len, p->ss.flip != 0, idx, n, err);
    }
    p->piece = (n + runs - 1) / runs;
    if (p->runs <= 0 && p->piece > PAR_MIN_RUN) p->piece = PAR_MIN_RUN;
    p->big = (n + runs - 1) / runs;
    uint64_t *key = tl_malloc((size_t)n * sizeof *key);
    p->k2 = tl_malloc((size_t)n * sizeof *p->k2);
    p->i2 = tl_malloc((size_t)n * sizeof *p->i2);
    TlStatus st = key && p->k2 && p->i2 ? msd_level(p, idx, key, n, 0, err)
                                        : tl_error_oom(err);
    tl_free(key);
    tl_free(p->k2);
    tl_free(p->i2);
    return st;
}

/* Parallel sort of idx by encoded rows (see sort.h). */
TlStatus tl_k_psort_rows(const TlRows *r, uint32_t *idx, int64_t n, int runs,
                         TlError *err)
{
    PMsd p;
    memset(&p, 0, sizeof p);
    p.kind = PS_ROWS;
    p.rs.r = r;
    p.runs = runs;
    return msd(&p, idx, n, err);
}

/* Parallel sort of idx by strings (see sort.h). */
TlStatus tl_k_psort_strs(const uint8_t *const *ptr, const uint32_t *len, bool desc,
                         uint32_t *idx, int64_t n, int runs, TlError *err)
{
    PMsd p;
    memset(&p, 0, sizeof p);
    p.kind = PS_STRS;
    p.ss.ptr = ptr;
    p.ss.len = len;
    p.ss.flip = desc ? ~0ull : 0;
    p.runs = runs;
    return msd(&p, idx, n, err);
}
