/*
 * group_str.c -- the grouper for one string key.
 *
 * An open-addressing table of views, linear probing, power-of-two size,
 * grown before 50% load:
 *
 *   slot (24 bytes):  | view: 16 bytes | gid: uint32 | tag: uint32 |
 *
 * The view in a slot is the group's key as kept by the key builder
 * (head.kb[0], always on for this grouper): inline strings (<= 12 bytes)
 * live in the view itself, longer ones in the builder's data blocks, which
 * never move.  So the table never points into input batches.
 *
 * Hashes (XXH3 of the bytes, kernels/hash.c) are computed once per row per
 * batch into a scratch array; the low bits pick the slot, the high 32 bits
 * are the slot's tag.  Knowing every hash up front, the probe loop
 * prefetches the slot of the row PREFETCH rows ahead: large tables are
 * bound by cache misses, and this overlaps them.  A probe compares tag, then the first 8 bytes of the
 * views (length + first 4 bytes, or length + prefix: the same positions),
 * then either the second 8 bytes (inline: two inline views are equal iff
 * their 16 bytes are) or the out-of-line bytes with memcmp.
 */
#include "group.h"

#include "../../kernels/hash.h"

#define EMPTY UINT32_MAX
#define PREFETCH 16 /* rows ahead whose slot is prefetched */

typedef struct SSlot {
    TlView v;
    uint32_t gid;
    uint32_t tag;
} SSlot;

typedef struct StrGrouper {
    TlGrouper head;
    SSlot *slots;
    uint64_t mask;
    uint64_t n_used;
    uint32_t null_gid;
    uint64_t *hashes;   /* per-batch scratch */
    int64_t hashes_cap;
    uint64_t *ghash;    /* sealed local grouper: each group's key hash */
} StrGrouper;

static SSlot *alloc_slots(uint64_t cap)
{
    SSlot *s = tl_malloc((size_t)cap * sizeof *s);
    if (s)
        for (uint64_t i = 0; i < cap; i++) s[i].gid = EMPTY;
    return s;
}

static inline const uint8_t *kept_ptr(const StrGrouper *g, const TlView *v)
{
    return tl_view_ptr(v, g->head.kb[0].data);
}

static TlStatus grow(StrGrouper *g, TlError *err)
{
    uint64_t cap = (g->mask + 1) * 2;
    SSlot *s = alloc_slots(cap);
    if (!s) return tl_error_oom(err);
    uint64_t mask = cap - 1;
    for (uint64_t i = 0; i <= g->mask; i++) {
        const SSlot *o = &g->slots[i];
        if (o->gid == EMPTY) continue;
        uint64_t h = tl_k_hash_bytes(kept_ptr(g, &o->v), o->v.in.len);
        uint64_t p = h & mask;
        while (s[p].gid != EMPTY) p = (p + 1) & mask;
        s[p] = *o;
    }
    tl_free(g->slots);
    g->slots = s;
    g->mask = mask;
    return TL_OK;
}

static inline TlStatus lookup(StrGrouper *g, const TlArray *a, int64_t i,
                              uint64_t h, uint32_t *id, TlError *err)
{
    const TlView *x = &tl_array_views(a)[i];
    uint32_t tag = (uint32_t)(h >> 32);
    uint32_t len = x->in.len;
    for (;;) {
        uint64_t p = h & g->mask;
        for (;;) {
            const SSlot *s = &g->slots[p];
            if (s->gid == EMPTY) break;
            if (s->tag == tag && s->v.w[0] == x->w[0]) {
                if (len <= TL_VIEW_INLINE
                        ? s->v.w[1] == x->w[1]
                        : memcmp(kept_ptr(g, &s->v), tl_view_ptr(x, a->data),
                                 len) == 0) {
                    *id = s->gid;
                    return TL_OK;
                }
            }
            p = (p + 1) & g->mask;
        }
        if ((g->n_used + 1) * 2 > g->mask + 1) {
            TL_TRY(grow(g, err));
            continue;
        }
        TL_TRY(tl_grouper_add(&g->head, &a, i, id, err));
        SSlot *s = &g->slots[p];
        s->v = ((const TlView *)g->head.kb[0].values)[*id];
        s->gid = *id;
        s->tag = tag;
        g->n_used++;
        return TL_OK;
    }
}

static TlStatus str_map(TlGrouper *gh, const TlArray *const *keys, int64_t n,
                        uint32_t *ids, TlError *err)
{
    StrGrouper *g = (StrGrouper *)gh;
    const TlArray *a = keys[0];
    if (a->type == TL_TNULL || a->null_count == n) {
        if (g->null_gid == EMPTY)
            TL_TRY(tl_grouper_add(gh, keys, 0, &g->null_gid, err));
        for (int64_t i = 0; i < n; i++) ids[i] = g->null_gid;
        return TL_OK;
    }
    if (g->hashes_cap < n) {
        uint64_t *h = tl_realloc(g->hashes, (size_t)n * sizeof *h);
        if (!h) return tl_error_oom(err);
        g->hashes = h;
        g->hashes_cap = n;
    }
    tl_k_hash_array(a, g->hashes, false);
    const uint64_t *h = g->hashes;
    if (a->null_count == 0) {
        for (int64_t i = 0; i < n; i++) {
            if (i + PREFETCH < n) __builtin_prefetch(&g->slots[h[i + PREFETCH] & g->mask]);
            TL_TRY(lookup(g, a, i, h[i], &ids[i], err));
        }
        return TL_OK;
    }
    for (int64_t i = 0; i < n; i++) {
        if (i + PREFETCH < n) __builtin_prefetch(&g->slots[h[i + PREFETCH] & g->mask]);
        if (tl_array_valid(a, i)) {
            TL_TRY(lookup(g, a, i, g->hashes[i], &ids[i], err));
        } else {
            if (g->null_gid == EMPTY)
                TL_TRY(tl_grouper_add(gh, keys, i, &g->null_gid, err));
            ids[i] = g->null_gid;
        }
    }
    return TL_OK;
}

/* Lookup without insert (tl_grouper_find): the probe of str_map. */
static TlStatus str_find(TlGrouper *gh, const TlArray *const *keys,
                         int64_t n, uint32_t *ids, TlError *err)
{
    StrGrouper *g = (StrGrouper *)gh;
    const TlArray *a = keys[0];
    if (a->type == TL_TNULL || a->null_count == n) {
        for (int64_t i = 0; i < n; i++) ids[i] = g->null_gid;
        return TL_OK;
    }
    if (g->hashes_cap < n) {
        uint64_t *h = tl_realloc(g->hashes, (size_t)n * sizeof *h);
        if (!h) return tl_error_oom(err);
        g->hashes = h;
        g->hashes_cap = n;
    }
    tl_k_hash_array(a, g->hashes, false);
    const uint64_t *h = g->hashes;
    const TlView *views = tl_array_views(a);
    for (int64_t i = 0; i < n; i++) {
        if (i + PREFETCH < n) __builtin_prefetch(&g->slots[h[i + PREFETCH] & g->mask]);
        if (a->null_count > 0 && !tl_array_valid(a, i)) {
            ids[i] = g->null_gid;
            continue;
        }
        const TlView *x = &views[i];
        uint32_t tag = (uint32_t)(h[i] >> 32), len = x->in.len, id = EMPTY;
        uint64_t p = h[i] & g->mask;
        for (;;) {
            const SSlot *s = &g->slots[p];
            if (s->gid == EMPTY) break;
            if (s->tag == tag && s->v.w[0] == x->w[0] &&
                (len <= TL_VIEW_INLINE
                     ? s->v.w[1] == x->w[1]
                     : memcmp(kept_ptr(g, &s->v), tl_view_ptr(x, a->data), len) == 0)) {
                id = s->gid;
                break;
            }
            p = (p + 1) & g->mask;
        }
        ids[i] = id;
    }
    return TL_OK;
}

static void str_free(TlGrouper *gh)
{
    StrGrouper *g = (StrGrouper *)gh;
    tl_grouper_fini(gh);
    tl_free(g->slots);
    tl_free(g->hashes);
    tl_free(g->ghash);
    tl_free(g);
}

/* tl_grouper_seal_local: the key column of the local groups (the finished
 * builder) and each key's hash, computed here on the worker. */
static bool str_seal_local(TlGrouper *gh, TlError *err)
{
    StrGrouper *g = (StrGrouper *)gh;
    uint32_t n = gh->n_groups;
    if (!gh->keep_keys) return false;
    gh->sealed = tl_calloc(2, sizeof *gh->sealed);
    g->ghash = tl_malloc(((size_t)n + 1) * sizeof *g->ghash);
    if (!gh->sealed || !g->ghash) {
        tl_error_oom(err);
        return false;
    }
    if (tl_grouper_keys(gh, 0, n, gh->sealed, err) != TL_OK) return false;
    if (n) tl_k_hash_array(gh->sealed[0], g->ghash, false);
    tl_free(g->slots);
    g->slots = NULL;
    tl_free(g->hashes);
    g->hashes = NULL;
    g->hashes_cap = 0;
    return true;
}

/* tl_grouper_merge: probe g with the local keys and their hashes (no
 * hashing on the consumer). */
static TlStatus str_merge(TlGrouper *gh, TlGrouper *lh, uint32_t *map,
                          TlError *err)
{
    StrGrouper *g = (StrGrouper *)gh, *l = (StrGrouper *)lh;
    uint32_t n = lh->n_groups;
    const TlArray *a = lh->sealed ? lh->sealed[0] : NULL;
    if (!a || !l->ghash || !g->slots)
        return tl_error(err, TL_ERR_DATA, "internal error: grouper merge");
    const uint64_t *h = l->ghash;
    for (uint32_t j = 0; j < n; j++) {
        if (j + PREFETCH < n) __builtin_prefetch(&g->slots[h[j + PREFETCH] & g->mask]);
        if (j == l->null_gid) {
            if (g->null_gid == EMPTY)
                TL_TRY(tl_grouper_add(gh, &a, j, &g->null_gid, err));
            map[j] = g->null_gid;
        } else {
            TL_TRY(lookup(g, a, j, h[j], &map[j], err));
        }
    }
    return TL_OK;
}

static const TlGrouperVt str_vt = {str_map, str_free, NULL, str_find,
                                   str_seal_local, str_merge, NULL, NULL};

/* Create the grouper for one string key (see group.h).  The key builder is
 * always kept: the table's views point into it. */
TlStatus tl_group_str_new(const TlType *types, bool keep_keys, TlGrouper **out,
                          TlError *err)
{
    *out = NULL;
    StrGrouper *g = tl_calloc(1, sizeof *g);
    if (!g) return tl_error_oom(err);
    TlStatus st = tl_grouper_init(&g->head, &str_vt, types, 1, keep_keys, true, err);
    if (st != TL_OK) {
        tl_free(g);
        return st;
    }
    g->null_gid = EMPTY;
    g->mask = 15; /* grows by doubling: a small input stays small */
    g->slots = alloc_slots(g->mask + 1);
    if (!g->slots) {
        str_free(&g->head);
        return tl_error_oom(err);
    }
    *out = &g->head;
    return TL_OK;
}
