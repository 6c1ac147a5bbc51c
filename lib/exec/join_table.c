/*
 * join_table.c -- the hash join's table (see join_table.h).
 *
 * Layout: the build rows are split into P partitions by the top bits of
 * their row hash (XXH3 of the key columns, kernels/hash.h, the same hash on
 * both sides); each partition is an open-addressing table, linear probing,
 * power of two, at most three quarters full (between 3/8 and 3/4 by
 * rows; at half full at most, a 1e7-row build side spent ~540 MB on slots,
 * more than its key column; at 3/4 a probe that finds its key still reads
 * about 2.5 slots on average, mostly in one cache line):
 *
 *   slot (8 bytes): | tag: uint32 (hash bits) | row: uint32 (first row of
 *                                               the key; NONE = empty)  |
 *
 * and every row has next[row], the following row with the same key.  The
 * key values are not copied: a probe compares tag, then the key columns at
 * the slot's row (the build arrays are retained).  One int64 or timestamp
 * key (the common case) has 16-byte slots holding the value itself,
 * | key: int64 | row: uint32 | pad |, and a murmur mix of the value as its
 * hash instead of XXH3: a probe then touches one cache line.
 *
 * Build, in three parallel passes over fixed chunks of rows (tl_pool_for):
 *   1. hash each chunk's rows, note their partition (0xFF: a null key, never
 *      inserted) and count rows per (chunk, partition);
 *   2. prefix sums (serial), then scatter each chunk's row numbers into its
 *      partition's list, so every list is in row order;
 *   3. size every partition, all slots in one slab; insert each partition's
 *      list into its table, one task per partition.
 * An int key keeps no hash array (the mix is recomputed from the value) and
 * no chain-tail array (the slot's pad holds the chain's last row): a 1e7-row
 * build needs 120 MB less at its peak, and a probe also says whether the
 * chain is one row (tl_join_table_probe_more), so the join need not read
 * next[] -- one random miss per match -- for unique keys.
 * A partition's rows are inserted by one task in row order, so every chain
 * is in row order and the table is the same whatever the thread count (the
 * chunk and partition counts depend only on n).  Tasks write disjoint parts
 * of the shared arrays (hashes and counts by chunk, next/rep/tail by row of
 * their own partition).
 *
 * Probe is read-only: hashes go to a scratch array of the caller's call,
 * so any number of threads probe at once.
 */
#include "join_table.h"

#include "../../kernels/hash.h"
#include "../core/pool.h"

#include <string.h>

#define NONE TL_JT_NONE
#define CHUNK ((int64_t)1 << 16)
#define PBITS 6 /* partitions of a big build: 1 << PBITS */
#define NULL_PART 0xFF
#define PREFETCH 16

typedef struct Slot {
    uint32_t tag;
    uint32_t row;
} Slot;

/* One int64/timestamp key: the value sits in the slot, so a probe touches
 * one cache line, not the slot and then the key column. */
typedef struct ISlot {
    int64_t key;
    uint32_t row;
    uint32_t pad;       /* the chain's last row (a probe's `more`) */
} ISlot;

typedef struct Part {
    Slot *slots;        /* general keys */
    ISlot *islots;      /* int_key */
    uint64_t mask;
} Part;

struct TlJoinTable {
    int n_keys;
    TlArray **keys;     /* retained build key columns */
    int64_t n;
    int pbits;          /* partitions: 1 << pbits */
    Part *parts;
    void *slab;         /* every partition's slots */
    uint32_t *next;     /* n */
    uint32_t *rep;      /* n, or NULL */
    bool int_key;       /* one int64/timestamp key: ISlots, values inline */
};

static inline uint32_t part_of(const TlJoinTable *t, uint64_t h)
{
    return t->pbits ? (uint32_t)(h >> (64 - t->pbits)) : 0;
}

static inline uint32_t tag_of(uint64_t h)
{
    return (uint32_t)(h >> 20);
}

/* Key k of row i of a equals key k of row j of b (both valid, same type). */
static inline bool key_eq(const TlArray *a, int64_t i, const TlArray *b, int64_t j)
{
    switch (a->type) {
    case TL_TINT64:
    case TL_TTIMESTAMP: case TL_TTIMESTAMPTZ:
        return tl_array_i64(a)[i] == tl_array_i64(b)[j];
    case TL_TDATE:
        return tl_array_i32(a)[i] == tl_array_i32(b)[j];
    case TL_TBOOL:
        return tl_array_bool(a, i) == tl_array_bool(b, j);
    case TL_TFLOAT64: {
        double x = tl_array_f64(a)[i], y = tl_array_f64(b)[j];
        return x == y || (x != x && y != y);
    }
    case TL_TSTRING:
        return tl_view_eq(&tl_array_views(a)[i], a->data, &tl_array_views(b)[j],
                          b->data);
    default:
        return false;
    }
}

/* Probe row i of keys equals build row r. */
static inline bool row_eq(const TlJoinTable *t, TlArray *const *keys, int64_t i,
                          uint32_t r)
{
    for (int k = 0; k < t->n_keys; k++)
        if (!key_eq(keys[k], i, t->keys[k], r)) return false;
    return true;
}

/* Row i has a null in some key. */
static inline bool has_null(TlArray *const *keys, int n_keys, int64_t i)
{
    for (int k = 0; k < n_keys; k++)
        if (keys[k]->null_count > 0 && !tl_array_valid(keys[k], i)) return true;
    return false;
}

/* Row hashes of rows [0, n) of keys into h (int_key: a 64-bit mix of the
 * value, cheaper than XXH3; both sides of a table hash the same way). */
static void hash_rows(TlArray *const *keys, int n_keys, bool int_key, uint64_t *h)
{
    if (int_key) {
        const int64_t *v = tl_array_i64(keys[0]);
        for (int64_t i = 0; i < keys[0]->length; i++)
            h[i] = tl_k_hash_mix64((uint64_t)v[i]);
        return;
    }
    for (int k = 0; k < n_keys; k++) tl_k_hash_array(keys[k], h, k > 0);
}

/* ------------------------------------------------------------- build */

typedef struct Build {
    TlJoinTable *t;
    int64_t n_chunks;
    int n_parts;
    uint64_t *h;        /* n (general keys; an int key's is recomputed) */
    uint8_t *part;      /* n */
    int64_t *cnt;       /* n_chunks * n_parts: counts, then write positions */
    int64_t *pstart;    /* n_parts + 1 */
    uint32_t *order;    /* n: rows grouped by partition, row order within */
    uint32_t *tail;     /* n: tail[first row of a key] = its last row
                         * (general keys; an int key's slot keeps it) */
    TlStatus *st;       /* per task */
} Build;

static void pass_hash(void *arg, int64_t c)
{
    Build *b = arg;
    TlJoinTable *t = b->t;
    int64_t off = c * CHUNK, len = t->n - off < CHUNK ? t->n - off : CHUNK;
    TlArray *sl[64];
    int made = 0;
    int64_t *cnt = b->cnt + c * b->n_parts;
    for (; made < t->n_keys; made++)
        if (!(sl[made] = tl_array_slice(t->keys[made], off, len))) break;
    for (int64_t r = off; r < off + len; r++) t->next[r] = NONE;
    if (t->rep)
        for (int64_t r = off; r < off + len; r++) t->rep[r] = NONE;
    if (made < t->n_keys) {
        b->st[c] = TL_ERR_OOM;
    } else if (t->int_key) {
        /* the hash is recomputed from the value where needed: no h */
        const int64_t *v = tl_array_i64(sl[0]);
        bool nulls = sl[0]->null_count > 0;
        for (int64_t i = 0; i < len; i++) {
            uint8_t p = nulls && !tl_array_valid(sl[0], i)
                            ? NULL_PART
                            : (uint8_t)part_of(t, tl_k_hash_mix64((uint64_t)v[i]));
            b->part[off + i] = p;
            if (p != NULL_PART) cnt[p]++;
        }
    } else {
        hash_rows(sl, t->n_keys, t->int_key, b->h + off);
        for (int64_t i = 0; i < len; i++) {
            uint8_t p = has_null(sl, t->n_keys, i)
                            ? NULL_PART
                            : (uint8_t)part_of(t, b->h[off + i]);
            b->part[off + i] = p;
            if (p != NULL_PART) cnt[p]++;
        }
    }
    for (int k = 0; k < made; k++) tl_array_release(sl[k]);
}

static void pass_scatter(void *arg, int64_t c)
{
    Build *b = arg;
    int64_t off = c * CHUNK, len = b->t->n - off < CHUNK ? b->t->n - off : CHUNK;
    int64_t *pos = b->cnt + c * b->n_parts;
    for (int64_t i = off; i < off + len; i++)
        if (b->part[i] != NULL_PART) b->order[pos[b->part[i]]++] = (uint32_t)i;
}

static void pass_insert(void *arg, int64_t p)
{
    Build *b = arg;
    TlJoinTable *t = b->t;
    int64_t lo = b->pstart[p], hi = b->pstart[p + 1];
    Part *pt = &t->parts[p];
    uint64_t size = pt->mask + 1;
    if (t->int_key) {
        /* the slot's pad holds its chain's last row while building */
        const int64_t *v = tl_array_i64(t->keys[0]);
        for (uint64_t s = 0; s < size; s++) pt->islots[s].row = NONE;
        for (int64_t x = lo; x < hi; x++) {
            uint32_t r = b->order[x];
            int64_t key = v[r];
            if (x + PREFETCH < hi) {
                uint64_t ph = tl_k_hash_mix64((uint64_t)v[b->order[x + PREFETCH]]);
                __builtin_prefetch(&pt->islots[ph & pt->mask]);
            }
            for (uint64_t s = tl_k_hash_mix64((uint64_t)key) & pt->mask;;
                 s = (s + 1) & pt->mask) {
                ISlot *sl = &pt->islots[s];
                if (sl->row == NONE) {
                    sl->key = key;
                    sl->row = r;
                    sl->pad = r;
                    if (t->rep) t->rep[r] = r;
                    break;
                }
                if (sl->key == key) {
                    t->next[sl->pad] = r;
                    sl->pad = r;
                    if (t->rep) t->rep[r] = sl->row;
                    break;
                }
            }
        }
        return;
    }
    for (uint64_t s = 0; s < size; s++) pt->slots[s].row = NONE;
    for (int64_t x = lo; x < hi; x++) {
        uint32_t r = b->order[x];
        uint64_t h = b->h[r];
        uint32_t tag = tag_of(h);
        if (x + PREFETCH < hi)
            __builtin_prefetch(&pt->slots[b->h[b->order[x + PREFETCH]] & pt->mask]);
        for (uint64_t s = h & pt->mask;; s = (s + 1) & pt->mask) {
            Slot *sl = &pt->slots[s];
            if (sl->row == NONE) {
                sl->tag = tag;
                sl->row = r;
                b->tail[r] = r;
                if (t->rep) t->rep[r] = r;
                break;
            }
            if (sl->tag == tag && row_eq(t, t->keys, r, sl->row)) {
                t->next[b->tail[sl->row]] = r;
                b->tail[sl->row] = r;
                if (t->rep) t->rep[r] = sl->row;
                break;
            }
        }
    }
}

/* See join_table.h. */
TlStatus tl_join_table_build(TlArray *const *keys, int n_keys, int64_t n,
                             bool want_rep, TlJoinTable **out, TlError *err)
{
    TlJoinTable *t = tl_calloc(1, sizeof *t);
    Build b = {0};
    TlStatus st = TL_OK;
    *out = NULL;
    if (!t) return tl_error_oom(err);
    if (n_keys < 1 || n_keys > 64 || n < 0 || n >= (int64_t)NONE - 1) {
        tl_free(t);
        return tl_error(err, TL_ERR_DATA, "internal error: join table of %d keys, "
                        "%lld rows", n_keys, (long long)n);
    }
    t->n_keys = n_keys;
    t->n = n;
    t->pbits = n >= 4 * CHUNK ? PBITS : 0;
    t->int_key = n_keys == 1 &&
                 (keys[0]->type == TL_TINT64 || keys[0]->type == TL_TTIMESTAMP || keys[0]->type == TL_TTIMESTAMPTZ);
    t->keys = tl_calloc((size_t)n_keys, sizeof *t->keys);
    t->parts = tl_calloc((size_t)1 << t->pbits, sizeof *t->parts);
    t->next = tl_malloc((size_t)(n ? n : 1) * sizeof *t->next);
    if (want_rep) t->rep = tl_malloc((size_t)(n ? n : 1) * sizeof *t->rep);
    if (!t->keys || !t->parts || !t->next || (want_rep && !t->rep)) goto oom;
    for (int k = 0; k < n_keys; k++) t->keys[k] = tl_array_retain(keys[k]);

    b.t = t;
    b.n_parts = 1 << t->pbits;
    b.n_chunks = (n + CHUNK - 1) / CHUNK;
    if (!t->int_key) {
        b.h = tl_malloc((size_t)(n ? n : 1) * sizeof *b.h);
        b.tail = tl_malloc((size_t)(n ? n : 1) * sizeof *b.tail);
    }
    b.part = tl_malloc((size_t)(n ? n : 1));
    b.order = tl_malloc((size_t)(n ? n : 1) * sizeof *b.order);
    b.cnt = tl_calloc((size_t)(b.n_chunks ? b.n_chunks : 1) * (size_t)b.n_parts,
                      sizeof *b.cnt);
    b.pstart = tl_calloc((size_t)b.n_parts + 1, sizeof *b.pstart);
    b.st = tl_calloc((size_t)(b.n_chunks > b.n_parts ? b.n_chunks : b.n_parts),
                     sizeof *b.st);
    if ((!t->int_key && (!b.h || !b.tail)) || !b.part || !b.order || !b.cnt ||
        !b.pstart || !b.st)
        goto oom;

    /* 1. hash, partition, count */
    if ((st = tl_pool_for(b.n_chunks, pass_hash, &b, err)) != TL_OK) goto done;
    for (int64_t c = 0; c < b.n_chunks; c++)
        if (b.st[c] != TL_OK) goto oom;
    /* 2. positions: partition p's rows, chunk by chunk */
    {
        int64_t pos = 0;
        for (int p = 0; p < b.n_parts; p++) {
            b.pstart[p] = pos;
            for (int64_t c = 0; c < b.n_chunks; c++) {
                int64_t k = b.cnt[c * b.n_parts + p];
                b.cnt[c * b.n_parts + p] = pos;
                pos += k;
            }
        }
        b.pstart[b.n_parts] = pos;
    }
    if ((st = tl_pool_for(b.n_chunks, pass_scatter, &b, err)) != TL_OK) goto done;
    /* 3. every partition's slots in one slab, then insert, one task per
     * partition (each initializes its own slots) */
    {
        size_t w = t->int_key ? sizeof(ISlot) : sizeof(Slot), total = 0;
        uint8_t *slab;
        for (int p = 0; p < b.n_parts; p++) {
            uint64_t size = 16, rows = (uint64_t)(b.pstart[p + 1] - b.pstart[p]);
            while (size * 3 < rows * 4) size *= 2; /* <= 3/4 full */
            t->parts[p].mask = size - 1;
            total += size * w;
        }
        if (!(t->slab = tl_malloc(total))) goto oom;
        slab = t->slab;
        for (int p = 0; p < b.n_parts; p++) {
            if (t->int_key) t->parts[p].islots = (ISlot *)(void *)slab;
            else t->parts[p].slots = (Slot *)(void *)slab;
            slab += (t->parts[p].mask + 1) * w;
        }
    }
    if ((st = tl_pool_for(b.n_parts, pass_insert, &b, err)) != TL_OK) goto done;
    for (int p = 0; p < b.n_parts; p++)
        if (b.st[p] != TL_OK) goto oom;
    goto done;
oom:
    st = tl_error_oom(err);
done:
    tl_free(b.h);
    tl_free(b.part);
    tl_free(b.order);
    tl_free(b.tail);
    tl_free(b.cnt);
    tl_free(b.pstart);
    tl_free(b.st);
    if (st != TL_OK) {
        tl_join_table_free(t);
        return st;
    }
    *out = t;
    return TL_OK;
}

/* -------------------------------------------------------------- probe */

/* See join_table.h. */
TlStatus tl_join_table_probe(const TlJoinTable *t, TlArray *const *keys,
                             int64_t n, uint32_t *first, TlError *err)
{
    return tl_join_table_probe_more(t, keys, n, first, NULL, err);
}

/* See join_table.h. */
TlStatus tl_join_table_probe_more(const TlJoinTable *t, TlArray *const *keys,
                                  int64_t n, uint32_t *first, uint8_t *more,
                                  TlError *err)
{
    uint64_t *h;
    bool nulls = false;
    if (n <= 0) return TL_OK;
    if (more) memset(more, 1, (size_t)n);
    if (t->n == 0) {
        for (int64_t i = 0; i < n; i++) first[i] = NONE;
        return TL_OK;
    }
    for (int k = 0; k < t->n_keys; k++) {
        if (keys[k]->type == TL_TNULL || keys[k]->null_count == n) {
            for (int64_t i = 0; i < n; i++) first[i] = NONE;
            return TL_OK;
        }
        if (keys[k]->type != t->keys[k]->type)
            return tl_error(err, TL_ERR_DATA, "internal error: join key %d is %s, "
                            "expected %s", k + 1, tl_type_name(keys[k]->type),
                            tl_type_name(t->keys[k]->type));
        nulls |= keys[k]->null_count > 0;
    }
    if (!(h = tl_malloc((size_t)n * sizeof *h))) return tl_error_oom(err);
    hash_rows(keys, t->n_keys, t->int_key, h);
    if (t->int_key) {
        const int64_t *v = tl_array_i64(keys[0]);
        for (int64_t i = 0; i < n; i++) {
            if (i + PREFETCH < n) {
                const Part *q = &t->parts[part_of(t, h[i + PREFETCH])];
                __builtin_prefetch(&q->islots[h[i + PREFETCH] & q->mask]);
            }
            uint32_t found = NONE;
            if (!nulls || tl_array_valid(keys[0], i)) {
                const Part *pt = &t->parts[part_of(t, h[i])];
                for (uint64_t s = h[i] & pt->mask;; s = (s + 1) & pt->mask) {
                    const ISlot *sl = &pt->islots[s];
                    if (sl->row == NONE) break;
                    if (sl->key == v[i]) {
                        found = sl->row;
                        /* pad: the chain's last row */
                        if (more) more[i] = sl->pad != sl->row;
                        break;
                    }
                }
            }
            first[i] = found;
        }
        tl_free(h);
        return TL_OK;
    }
    for (int64_t i = 0; i < n; i++) {
        if (i + PREFETCH < n) {
            const Part *q = &t->parts[part_of(t, h[i + PREFETCH])];
            __builtin_prefetch(&q->slots[h[i + PREFETCH] & q->mask]);
        }
        uint32_t found = NONE;
        if (!nulls || !has_null(keys, t->n_keys, i)) {
            const Part *pt = &t->parts[part_of(t, h[i])];
            uint32_t tag = tag_of(h[i]);
            for (uint64_t s = h[i] & pt->mask;; s = (s + 1) & pt->mask) {
                const Slot *sl = &pt->slots[s];
                if (sl->row == NONE) break;
                if (sl->tag != tag) continue;
                if (row_eq(t, keys, i, sl->row)) {
                    found = sl->row;
                    break;
                }
            }
        }
        first[i] = found;
    }
    tl_free(h);
    return TL_OK;
}

/* See join_table.h. */
const uint32_t *tl_join_table_next(const TlJoinTable *t)
{
    return t->next;
}

/* See join_table.h. */
const uint32_t *tl_join_table_rep(const TlJoinTable *t)
{
    return t->rep;
}

/* See join_table.h. */
void tl_join_table_free(TlJoinTable *t)
{
    if (!t) return;
    for (int k = 0; t->keys && k < t->n_keys; k++) tl_array_release(t->keys[k]);
    tl_free(t->keys);
    tl_free(t->slab);
    tl_free(t->parts);
    tl_free(t->next);
    tl_free(t->rep);
    tl_free(t);
}
