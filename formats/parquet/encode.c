/*
 * encode.c -- the integer runs and the dictionaries of the pages tally
 * writes (Encodings.md; rle.c reads the same runs).
 *
 * RLE/bit-packed hybrid: a value repeated 8 times or more becomes a
 * repeated run (its count and the value in whole bytes); everything else
 * is bit-packed in groups of 8 (LSB first).  A bit-packed run must hold
 * whole groups, so before a repeated run the values waiting to be packed
 * are made a multiple of 8 by taking the first repeats into the packed run;
 * the stream's last group is padded with zeros (readers take only the
 * values the page announces).  The same values always give the same runs.
 *
 * Dictionaries: open addressing over the chunk's values, in first-seen
 * order (so indices, and the bytes, depend only on the values).  Doubles
 * are keyed by their bits: -0.0 and 0.0, and NaNs with different payloads,
 * are kept apart, so a dictionary page gives back exactly what was written.
 * The build gives up as soon as the distinct values' PLAIN bytes pass the
 * caller's bound, or when, at a multiple of PQ_DICT_PROBE values, more than
 * 3/4 of those seen were distinct (a dictionary cannot pay then: its page
 * alone would be most of the PLAIN bytes, and the indices come on top):
 * the column is then written PLAIN (chunk_write.c), and a column of
 * unique values costs little more than its first values' hashing.
 */
#include "pqwrite.h"

#include <xxhash.h>

/* ---------------------------------------------------------------- bytes */

bool pq_bytes_reserve(PqBytes *b, size_t more)
{
    size_t cap;
    uint8_t *g;
    if (b->oom) return false;
    if (b->len + more <= b->cap) return true;
    cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more) cap *= 2;
    g = tl_realloc(b->p, cap);
    if (!g) {
        b->oom = true;
        return false;
    }
    b->p = g;
    b->cap = cap;
    return true;
}

void pq_bytes_put(PqBytes *b, const void *p, size_t n)
{
    if (!n || !pq_bytes_reserve(b, n)) return;
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

void pq_bytes_free(PqBytes *b)
{
    tl_free(b->p);
    memset(b, 0, sizeof *b);
}

/* ------------------------------------------------------------------ RLE */

static void put_uleb(PqBytes *b, uint64_t x)
{
    if (!pq_bytes_reserve(b, 10)) return;
    while (x >= 0x80) {
        b->p[b->len++] = (uint8_t)(x | 0x80);
        x >>= 7;
    }
    b->p[b->len++] = (uint8_t)x;
}

/* values [0, n) bit-packed, n padded with zeros up to a multiple of 8. */
static void packed_run(PqBytes *b, const uint32_t *v, int64_t n, int width)
{
    int64_t groups = (n + 7) / 8;
    uint64_t acc = 0;
    int bits = 0;
    uint8_t *o;
    if (n == 0) return;
    put_uleb(b, (uint64_t)groups << 1 | 1);
    if (!pq_bytes_reserve(b, (size_t)groups * (size_t)width + 8)) return;
    o = b->p + b->len;
    for (int64_t i = 0; i < groups * 8; i++) {
        acc |= (uint64_t)(i < n ? v[i] : 0) << bits;
        bits += width;
        while (bits >= 8) {
            *o++ = (uint8_t)acc;
            acc >>= 8;
            bits -= 8;
        }
    }
    b->len = (size_t)(o - b->p);
}

static void repeated_run(PqBytes *b, uint32_t v, int64_t n, int width)
{
    put_uleb(b, (uint64_t)n << 1);
    for (int i = 0; i < (width + 7) / 8; i++) pq_bytes_put(b, &(uint8_t){(uint8_t)(v >> (8 * i))}, 1);
}

void pq_rle_encode(PqBytes *out, const uint32_t *v, int64_t n, int width)
{
    int64_t i = 0, lit = 0; /* values [lit, i) wait to be bit-packed */
    while (i < n) {
        int64_t j = i + 1, run;
        while (j < n && v[j] == v[i]) j++;
        run = j - i;
        if (run < 8) {
            i = j;
            continue;
        }
        if ((i - lit) % 8) {
            int64_t take = 8 - (i - lit) % 8;
            i += take;
            run -= take;
        }
        packed_run(out, v + lit, i - lit, width);
        repeated_run(out, v[i], run, width);
        i = lit = j;
    }
    packed_run(out, v + lit, n - lit, width);
}

/* --------------------------------------------------------- dictionaries */

/* A slot holds the entry's index + 1 in its low half and the high half of
 * its hash in the other, so a probe rarely compares bytes that differ. */
#define SLOT(h, k) (((h) & 0xffffffff00000000ull) | (uint64_t)(k))

static uint64_t hash_fixed(int64_t x)
{
    uint64_t h = (uint64_t)x * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

/* a[0, n) == b[0, n): short values (most keys) by two overlapping loads,
 * not a call. */
static inline bool same_bytes(const uint8_t *a, const uint8_t *b, uint32_t n)
{
    if (n >= 8 && n <= 16) {
        uint64_t x0, x1, y0, y1;
        memcpy(&x0, a, 8);
        memcpy(&y0, b, 8);
        memcpy(&x1, a + n - 8, 8);
        memcpy(&y1, b + n - 8, 8);
        return x0 == y0 && x1 == y1;
    }
    if (n >= 4 && n < 8) {
        uint32_t x0, x1, y0, y1;
        memcpy(&x0, a, 4);
        memcpy(&y0, b, 4);
        memcpy(&x1, a + n - 4, 4);
        memcpy(&y1, b + n - 4, 4);
        return x0 == y0 && x1 == y1;
    }
    return memcmp(a, b, n) == 0;
}

/* Twice the slots, the entries placed again by their kept hashes. */
static bool grow(PqDict *d)
{
    uint64_t cap = d->mask ? (d->mask + 1) * 2 : 1024;
    uint64_t *s = tl_calloc((size_t)cap, sizeof *s);
    if (!s) return false;
    for (int64_t k = 0; k < d->n; k++) {
        uint64_t h = d->hashes[k], at = h & (cap - 1);
        while (s[at]) at = (at + 1) & (cap - 1);
        s[at] = SLOT(h, k + 1);
    }
    tl_free(d->slots);
    d->slots = s;
    d->mask = cap - 1;
    return true;
}

/* Room for one more distinct value. */
static bool add_room(PqDict *d, int64_t *cap)
{
    if ((uint64_t)(d->n + 1) * 2 > d->mask + 1 && !grow(d)) return false;
    if (d->n == *cap) {
        int64_t nc = *cap ? *cap * 2 : 256;
        uint64_t *hs = tl_realloc(d->hashes, (size_t)nc * sizeof *hs);
        if (!hs) return false;
        d->hashes = hs;
        if (d->phys == PQ_BYTE_ARRAY) {
            PqVal *g = tl_realloc(d->strs, (size_t)nc * sizeof *g);
            if (!g) return false;
            d->strs = g;
        } else {
            int64_t *g = tl_realloc(d->fixed, (size_t)nc * sizeof *g);
            if (!g) return false;
            d->fixed = g;
        }
        *cap = nc;
    }
    return true;
}

/* The slot of a new entry of hash h (after add_room, which may grow). */
static uint64_t free_slot(const PqDict *d, uint64_t h)
{
    uint64_t at = h & d->mask;
    while (d->slots[at]) at = (at + 1) & d->mask;
    return at;
}

bool pq_dict_build(PqDict *d, int phys, const void *vals, int64_t n, size_t max_bytes,
                   uint32_t *idx, bool *full)
{
    int64_t cap = 0;
    size_t width = phys == PQ_INT32 ? 4 : 8;
    memset(d, 0, sizeof *d);
    d->phys = phys;
    *full = false;
    if (!grow(d)) return false;
    for (int64_t i = 0; i < n; i++) {
        uint64_t h, at, s, tag;
        if ((i & (PQ_DICT_PROBE - 1)) == 0 && i > 0 && d->n > i / 4 * 3)
            goto full; /* nearly every value distinct: it will not pay */
        if (phys == PQ_BYTE_ARRAY) {
            const PqVal *v = (const PqVal *)vals + i;
            h = XXH3_64bits(v->p, v->n);
            tag = SLOT(h, 0);
            for (at = h & d->mask; (s = d->slots[at]) != 0; at = (at + 1) & d->mask) {
                const PqVal *e = &d->strs[(s & 0xffffffffu) - 1];
                if ((s & ~0xffffffffull) == tag && e->n == v->n && same_bytes(e->p, v->p, v->n))
                    break;
            }
            if (!s) {
                if (d->plain_bytes + 4 + v->n > max_bytes) goto full;
                if (!add_room(d, &cap)) return false;
                d->strs[d->n] = *v;
                d->plain_bytes += 4 + v->n;
            }
        } else {
            int64_t x = phys == PQ_INT32 ? ((const int32_t *)vals)[i] : ((const int64_t *)vals)[i];
            h = hash_fixed(x);
            for (at = h & d->mask; (s = d->slots[at]) != 0; at = (at + 1) & d->mask)
                if (d->fixed[(s & 0xffffffffu) - 1] == x) break;
            if (!s) {
                if (d->plain_bytes + width > max_bytes) goto full;
                if (!add_room(d, &cap)) return false;
                d->fixed[d->n] = x;
                d->plain_bytes += width;
            }
        }
        if (!s) {
            d->hashes[d->n] = h;
            s = SLOT(h, (uint64_t)++d->n);
            d->slots[free_slot(d, h)] = s;
        }
        idx[i] = (uint32_t)(s & 0xffffffffu) - 1;
    }
    return true;
full:
    *full = true;
    return false;
}

void pq_dict_free(PqDict *d)
{
    tl_free(d->fixed);
    tl_free(d->strs);
    tl_free(d->slots);
    tl_free(d->hashes);
    memset(d, 0, sizeof *d);
}
