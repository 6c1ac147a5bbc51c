/*
 * group_int.c -- the grouper for one int64 / date / timestamp / bool key.
 *
 * An open-addressing table keyed on the values themselves, linear probing,
 * power-of-two size, grown (doubled and rebuilt) before it passes 50% load:
 *
 *   slot (16 bytes):  | key: int64 | gid: uint32 (UINT32_MAX = empty) | pad |
 *
 * The key is stored by value, so a probe touches one cache line and never
 * the input.  Dates and bools are widened to int64 per batch into a scratch
 * buffer first, so there is one probe loop.  The hash is murmur3's 64-bit
 * finalizer of the value (tl_group_int_hash), computed once per row for the
 * whole batch -- or taken from a radix-partitioned caller, which split its
 * rows by the same hash (tl_grouper_map_hashed) -- so the probe loop can
 * prefetch the slot of the row PREFETCH rows ahead.  Null never enters the
 * table: it gets its own id, `null_gid`, at its first appearance.
 *
 * The null path is decided once per batch: a loop without validity checks
 * when the column has no nulls, with them otherwise.
 */
#include "group.h"

#include "../../kernels/hash.h"

#define EMPTY UINT32_MAX
#define PREFETCH 16 /* rows ahead whose slot is prefetched */

typedef struct ISlot {
    int64_t key;
    uint32_t gid;
    uint32_t pad;
} ISlot;

typedef struct IntGrouper {
    TlGrouper head;
    ISlot *slots;
    uint64_t mask;     /* capacity - 1 */
    uint64_t n_used;   /* occupied slots */
    uint32_t null_gid; /* EMPTY until a null key appears */
    int64_t *scratch;  /* widened date / bool values */
    int64_t scratch_cap;
    uint64_t *hashes;  /* per-batch hashes */
    int64_t hashes_cap;
} IntGrouper;

static ISlot *alloc_slots(uint64_t cap)
{
    ISlot *s = tl_malloc((size_t)cap * sizeof *s);
    if (s)
        for (uint64_t i = 0; i < cap; i++) s[i].gid = EMPTY;
    return s;
}

/* Double the table and reinsert every key. */
static TlStatus grow(IntGrouper *g, TlError *err)
{
    uint64_t cap = (g->mask + 1) * 2;
    ISlot *s = alloc_slots(cap);
    if (!s) return tl_error_oom(err);
    uint64_t mask = cap - 1;
    for (uint64_t i = 0; i <= g->mask; i++) {
        if (g->slots[i].gid == EMPTY) continue;
        uint64_t p = tl_k_hash_mix64((uint64_t)g->slots[i].key) & mask;
        while (s[p].gid != EMPTY) p = (p + 1) & mask;
        s[p] = g->slots[i];
    }
    tl_free(g->slots);
    g->slots = s;
    g->mask = mask;
    return TL_OK;
}

/* The id of key k (hash h) at row i, inserting a new group when unseen. */
static inline TlStatus lookup(IntGrouper *g, const TlArray *const *keys,
                              int64_t i, int64_t k, uint64_t h, uint32_t *id,
                              TlError *err)
{
    for (;;) {
        uint64_t p = h & g->mask;
        for (;;) {
            ISlot *s = &g->slots[p];
            if (s->gid == EMPTY) break;
            if (s->key == k) {
                *id = s->gid;
                return TL_OK;
            }
            p = (p + 1) & g->mask;
        }
        if ((g->n_used + 1) * 2 > g->mask + 1) {
            TL_TRY(grow(g, err));
            continue; /* probe again in the new table */
        }
        TL_TRY(tl_grouper_add(&g->head, keys, i, id, err));
        g->slots[p].key = k;
        g->slots[p].gid = *id;
        g->n_used++;
        return TL_OK;
    }
}

/* Map rows [0, n); given: their hashes (tl_group_int_hash), or NULL to
 * hash them here. */
static TlStatus int_map_with(TlGrouper *gh, const TlArray *const *keys, int64_t n,
                             const uint64_t *given, uint32_t *ids, TlError *err)
{
    IntGrouper *g = (IntGrouper *)gh;
    const TlArray *a = keys[0];
    if (a->type == TL_TNULL || a->null_count == n) {
        if (g->null_gid == EMPTY)
            TL_TRY(tl_grouper_add(gh, keys, 0, &g->null_gid, err));
        for (int64_t i = 0; i < n; i++) ids[i] = g->null_gid;
        return TL_OK;
    }
    const int64_t *v;
    if (a->type == TL_TINT64 || a->type == TL_TTIMESTAMP || a->type == TL_TTIMESTAMPTZ) {
        v = tl_array_i64(a);
    } else {
        if (g->scratch_cap < n) {
            int64_t *s = tl_realloc(g->scratch, (size_t)n * sizeof *s);
            if (!s) return tl_error_oom(err);
            g->scratch = s;
            g->scratch_cap = n;
        }
        if (a->type == TL_TDATE) {
            const int32_t *d = tl_array_i32(a);
            for (int64_t i = 0; i < n; i++) g->scratch[i] = d[i];
        } else {
            for (int64_t i = 0; i < n; i++) g->scratch[i] = tl_array_bool(a, i);
        }
        v = g->scratch;
    }
    const uint64_t *h = given;
    if (!h) {
        if (g->hashes_cap < n) {
            uint64_t *hs = tl_realloc(g->hashes, (size_t)n * sizeof *hs);
            if (!hs) return tl_error_oom(err);
            g->hashes = hs;
            g->hashes_cap = n;
        }
        for (int64_t i = 0; i < n; i++) g->hashes[i] = tl_k_hash_mix64((uint64_t)v[i]);
        h = g->hashes;
    }
    if (a->null_count == 0) {
        for (int64_t i = 0; i < n; i++) {
            if (i + PREFETCH < n) __builtin_prefetch(&g->slots[h[i + PREFETCH] & g->mask]);
            TL_TRY(lookup(g, keys, i, v[i], h[i], &ids[i], err));
        }
        return TL_OK;
    }
    for (int64_t i = 0; i < n; i++) {
        if (i + PREFETCH < n) __builtin_prefetch(&g->slots[h[i + PREFETCH] & g->mask]);
        if (tl_array_valid(a, i)) {
            TL_TRY(lookup(g, keys, i, v[i], h[i], &ids[i], err));
        } else {
            if (g->null_gid == EMPTY)
                TL_TRY(tl_grouper_add(gh, keys, i, &g->null_gid, err));
            ids[i] = g->null_gid;
        }
    }
    return TL_OK;
}

static TlStatus int_map(TlGrouper *gh, const TlArray *const *keys, int64_t n, uint32_t *ids,
                        TlError *err)
{
    return int_map_with(gh, keys, n, NULL, ids, err);
}

/* tl_grouper_map_hashed: the caller's hashes are tl_group_int_hash's, the
 * table's own, so the rows are not hashed again. */
static TlStatus int_map_hashed(TlGrouper *gh, const TlArray *const *keys, int64_t n,
                               const uint64_t *hashes, uint32_t *ids, TlError *err)
{
    return int_map_with(gh, keys, n, hashes, ids, err);
}

/* See group.h. */
void tl_group_int_hash(const TlArray *a, int64_t n, uint64_t *h)
{
    if (a->type == TL_TNULL || a->null_count == n) {
        for (int64_t i = 0; i < n; i++) h[i] = TL_HASH_NULL;
        return;
    }
    switch (a->type) {
    case TL_TDATE: {
        const int32_t *d = tl_array_i32(a);
        for (int64_t i = 0; i < n; i++) h[i] = tl_k_hash_mix64((uint64_t)(int64_t)d[i]);
        break;
    }
    case TL_TBOOL:
        for (int64_t i = 0; i < n; i++) h[i] = tl_k_hash_mix64((uint64_t)tl_array_bool(a, i));
        break;
    default: {
        const int64_t *v = tl_array_i64(a);
        for (int64_t i = 0; i < n; i++) h[i] = tl_k_hash_mix64((uint64_t)v[i]);
        break;
    }
    }
    if (a->null_count > 0)
        for (int64_t i = 0; i < n; i++)
            if (!tl_array_valid(a, i)) h[i] = TL_HASH_NULL;
}

/* Lookup without insert (tl_grouper_find): the probe of int_map. */
static TlStatus int_find(TlGrouper *gh, const TlArray *const *keys,
                         int64_t n, uint32_t *ids, TlError *err)
{
    IntGrouper *g = (IntGrouper *)gh;
    const TlArray *a = keys[0];
    const int64_t *v;
    if (a->type == TL_TNULL || a->null_count == n) {
        for (int64_t i = 0; i < n; i++) ids[i] = g->null_gid;
        return TL_OK;
    }
    if (a->type == TL_TINT64 || a->type == TL_TTIMESTAMP || a->type == TL_TTIMESTAMPTZ) {
        v = tl_array_i64(a);
    } else {
        if (g->scratch_cap < n) {
            int64_t *s = tl_realloc(g->scratch, (size_t)n * sizeof *s);
            if (!s) return tl_error_oom(err);
            g->scratch = s;
            g->scratch_cap = n;
        }
        if (a->type == TL_TDATE) {
            const int32_t *d = tl_array_i32(a);
            for (int64_t i = 0; i < n; i++) g->scratch[i] = d[i];
        } else {
            for (int64_t i = 0; i < n; i++) g->scratch[i] = tl_array_bool(a, i);
        }
        v = g->scratch;
    }
    if (g->hashes_cap < n) {
        uint64_t *hs = tl_realloc(g->hashes, (size_t)n * sizeof *hs);
        if (!hs) return tl_error_oom(err);
        g->hashes = hs;
        g->hashes_cap = n;
    }
    uint64_t *h = g->hashes;
    for (int64_t i = 0; i < n; i++) h[i] = tl_k_hash_mix64((uint64_t)v[i]);
    for (int64_t i = 0; i < n; i++) {
        if (i + PREFETCH < n) __builtin_prefetch(&g->slots[h[i + PREFETCH] & g->mask]);
        uint32_t id = EMPTY;
        if (a->null_count == 0 || tl_array_valid(a, i)) {
            uint64_t p = h[i] & g->mask;
            for (;;) {
                const ISlot *s = &g->slots[p];
                if (s->gid == EMPTY) break;
                if (s->key == v[i]) {
                    id = s->gid;
                    break;
                }
                p = (p + 1) & g->mask;
            }
        } else {
            id = g->null_gid;
        }
        ids[i] = id;
    }
    return TL_OK;
}

static void int_free(TlGrouper *gh)
{
    IntGrouper *g = (IntGrouper *)gh;
    tl_grouper_fini(gh);
    tl_free(g->slots);
    tl_free(g->scratch);
    tl_free(g->hashes);
    tl_free(g);
}

static const TlGrouperVt int_vt = {int_map, int_free, NULL, int_find,
                                   NULL, NULL, NULL, int_map_hashed};

/* Create the grouper for one integer-like key types[0] (see group.h). */
TlStatus tl_group_int_new(const TlType *types, bool keep_keys, TlGrouper **out,
                          TlError *err)
{
    *out = NULL;
    IntGrouper *g = tl_calloc(1, sizeof *g);
    if (!g) return tl_error_oom(err);
    TlStatus st = tl_grouper_init(&g->head, &int_vt, types, 1, keep_keys, keep_keys, err);
    if (st != TL_OK) {
        tl_free(g);
        return st;
    }
    g->null_gid = EMPTY;
    g->mask = 15; /* grows by doubling: a small input stays small */
    g->slots = alloc_slots(g->mask + 1);
    if (!g->slots) {
        int_free(&g->head);
        return tl_error_oom(err);
    }
    *out = &g->head;
    return TL_OK;
}
