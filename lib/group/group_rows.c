/*
 * group_rows.c -- the grouper for any other key set: several keys, float
 * keys, keys of the null type, or none at all.
 *
 * Each batch's keys are encoded with the order-preserving row encoding
 * (kernels/rowenc.h), whose equality is exactly key equality (NaN = NaN,
 * -0.0 = 0.0, all nulls alike).  The table is open addressing on the
 * encoded bytes, linear probing, power of two, grown before 50% load:
 *
 *   slot (16 bytes):  | hash: uint64 | gid: uint32 (UINT32_MAX empty) | len |
 *
 *   keys[gid] -> the group's encoded row, copied into blocks that never move
 *
 *   block list:  [ >= 1 MiB | row row row ... ] -> [ ... ] -> ...
 *
 * The full 64-bit XXH3 of the row is kept in the slot, so growing never
 * rehashes and a probe compares hash and length before any bytes.  Hashes
 * are computed for the whole batch first, so the probe loop prefetches the
 * slot of the row PREFETCH rows ahead.  Zero
 * keys encode every row to the empty string: one group.
 */
#include "group.h"

#include "../../kernels/hash.h"
#include "../../kernels/rowenc.h"

#define EMPTY UINT32_MAX
#define PREFETCH 16 /* rows ahead whose slot is prefetched */
#define BLOCK_MIN ((size_t)1 << 20)

typedef struct RSlot {
    uint64_t hash;
    uint32_t gid;
    uint32_t len;
} RSlot;

typedef struct RBlock RBlock;
struct RBlock {
    RBlock *next;
    size_t used, cap;
    uint8_t bytes[];
};

typedef struct RowsGrouper {
    TlGrouper head;
    RSlot *slots;
    uint64_t mask;
    const uint8_t **keys;  /* gid -> encoded row */
    uint32_t keys_cap;
    RBlock *blocks;        /* newest first */
    uint64_t *hashes;      /* per-batch scratch */
    int64_t hashes_cap;
} RowsGrouper;

static RSlot *alloc_slots(uint64_t cap)
{
    RSlot *s = tl_malloc((size_t)cap * sizeof *s);
    if (s)
        for (uint64_t i = 0; i < cap; i++) s[i].gid = EMPTY;
    return s;
}

static TlStatus grow(RowsGrouper *g, TlError *err)
{
    uint64_t cap = (g->mask + 1) * 2;
    RSlot *s = alloc_slots(cap);
    if (!s) return tl_error_oom(err);
    uint64_t mask = cap - 1;
    for (uint64_t i = 0; i <= g->mask; i++) {
        if (g->slots[i].gid == EMPTY) continue;
        uint64_t p = g->slots[i].hash & mask;
        while (s[p].gid != EMPTY) p = (p + 1) & mask;
        s[p] = g->slots[i];
    }
    tl_free(g->slots);
    g->slots = s;
    g->mask = mask;
    return TL_OK;
}

/* Copy len bytes into the never-moving blocks. */
static const uint8_t *keep(RowsGrouper *g, const uint8_t *p, size_t len)
{
    RBlock *b = g->blocks;
    if (!b || b->cap - b->used < len) {
        size_t cap = len > BLOCK_MIN ? len : BLOCK_MIN;
        b = tl_malloc(sizeof *b + cap);
        if (!b) return NULL;
        b->next = g->blocks;
        b->used = 0;
        b->cap = cap;
        g->blocks = b;
    }
    uint8_t *dst = b->bytes + b->used;
    if (len) memcpy(dst, p, len);
    b->used += len;
    return dst;
}

/* Byte equality of two short keys without a libc call. */
static inline bool keys_eq(const uint8_t *a, const uint8_t *b, size_t len)
{
    while (len >= 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y) return false;
        a += 8;
        b += 8;
        len -= 8;
    }
    while (len--)
        if (*a++ != *b++) return false;
    return true;
}

static inline TlStatus lookup(RowsGrouper *g, const TlArray *const *keys,
                              int64_t i, const uint8_t *row, size_t len,
                              uint64_t h, uint32_t *id, TlError *err)
{
    for (;;) {
        uint64_t p = h & g->mask;
        for (;;) {
            const RSlot *s = &g->slots[p];
            if (s->gid == EMPTY) break;
            if (s->hash == h && s->len == len &&
                keys_eq(g->keys[s->gid], row, len)) {
                *id = s->gid;
                return TL_OK;
            }
            p = (p + 1) & g->mask;
        }
        if (((uint64_t)g->head.n_groups + 1) * 2 > g->mask + 1) {
            TL_TRY(grow(g, err));
            continue;
        }
        if (len > UINT32_MAX)
            return tl_error(err, TL_ERR_DATA, "group key longer than 4 GiB");
        if (g->head.n_groups >= g->keys_cap) {
            uint32_t cap = g->keys_cap ? g->keys_cap * 2 : 1024;
            if (cap < g->keys_cap) cap = UINT32_MAX;
            const uint8_t **k = tl_realloc(g->keys, (size_t)cap * sizeof *k);
            if (!k) return tl_error_oom(err);
            g->keys = k;
            g->keys_cap = cap;
        }
        const uint8_t *kept = keep(g, row, len);
        if (!kept) return tl_error_oom(err);
        TL_TRY(tl_grouper_add(&g->head, keys, i, id, err));
        g->keys[*id] = kept;
        RSlot *s = &g->slots[p];
        s->hash = h;
        s->gid = *id;
        s->len = (uint32_t)len;
        return TL_OK;
    }
}

static TlStatus rows_map(TlGrouper *gh, const TlArray *const *keys, int64_t n,
                         uint32_t *ids, TlError *err)
{
    RowsGrouper *g = (RowsGrouper *)gh;
    TlRows r;
    TL_TRY(tl_k_rowenc(keys, gh->n_keys, n, NULL, NULL, &r, err));
    TlStatus st = TL_OK;
    if (g->hashes_cap < n) {
        uint64_t *h = tl_realloc(g->hashes, (size_t)n * sizeof *h);
        if (!h) {
            st = tl_error_oom(err);
            goto done;
        }
        g->hashes = h;
        g->hashes_cap = n;
    }
    for (int64_t i = 0; i < n; i++) {
        size_t len;
        const uint8_t *p = tl_rows_at(&r, i, &len);
        g->hashes[i] = tl_k_hash_bytes(p, len);
    }
    for (int64_t i = 0; i < n; i++) {
        size_t len;
        const uint8_t *p = tl_rows_at(&r, i, &len);
        if (i + PREFETCH < n)
            __builtin_prefetch(&g->slots[g->hashes[i + PREFETCH] & g->mask]);
        st = lookup(g, keys, i, p, len, g->hashes[i], &ids[i], err);
        if (st != TL_OK) goto done;
    }
done:
    tl_k_rows_free(&r);
    return st;
}

static void rows_free(TlGrouper *gh)
{
    RowsGrouper *g = (RowsGrouper *)gh;
    tl_grouper_fini(gh);
    tl_free(g->slots);
    tl_free(g->keys);
    tl_free(g->hashes);
    while (g->blocks) {
        RBlock *b = g->blocks;
        g->blocks = b->next;
        tl_free(b);
    }
    tl_free(g);
}

static const TlGrouperVt rows_vt = {rows_map, rows_free};

/* Create the grouper on encoded rows (see group.h). */
TlStatus tl_group_rows_new(const TlType *types, int n_keys, bool keep_keys,
                           TlGrouper **out, TlError *err)
{
    *out = NULL;
    RowsGrouper *g = tl_calloc(1, sizeof *g);
    if (!g) return tl_error_oom(err);
    TlStatus st = tl_grouper_init(&g->head, &rows_vt, types, n_keys, keep_keys,
                                  err);
    if (st != TL_OK) {
        tl_free(g);
        return st;
    }
    g->mask = 1023;
    g->slots = alloc_slots(g->mask + 1);
    if (!g->slots) {
        rows_free(&g->head);
        return tl_error_oom(err);
    }
    *out = &g->head;
    return TL_OK;
}
