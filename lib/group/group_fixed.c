/*
 * group_fixed.c -- the grouper for fixed-width keys: several int64 / date /
 * timestamp / bool / float64 keys (or one float64 key).
 *
 * Each row's key tuple becomes a fixed-stride row of W = n_keys + 1 64-bit
 * words, built column by column for the whole batch (the null path chosen
 * once per column):
 *
 *   | key 0 | key 1 | ... | key n-1 | null bits |
 *
 * A key word holds the value widened to 64 bits (dates, bools), or the bits
 * of the canonical float (NaN -> one NaN, -0.0 -> 0.0), or 0 when null; bit
 * k of the last word says key k is null.  So two rows are equal keys exactly
 * when their words are equal, compared word by word, with no padding to
 * clear.  The table is open addressing, linear probing, power of two, grown
 * before 50% load, slots of (tag, gid) as in group_rows.c; group gid's row
 * sits at words[gid * W] (one array, grown by doubling).  Row hashes of the
 * whole batch are computed before the probe loop, which prefetches the slot
 * PREFETCH rows ahead.
 *
 * Key values for the output come from the shared key builders (first rows,
 * so a float key keeps its first row's -0.0).
 */
#include "group.h"

#include "../../kernels/hash.h"

#define EMPTY UINT32_MAX
#define PREFETCH 16

typedef struct FSlot {
    uint32_t tag;
    uint32_t gid;
} FSlot;

typedef struct FixedGrouper {
    TlGrouper head;
    int w;              /* words per row */
    FSlot *slots;
    uint64_t mask;
    uint64_t *words;    /* gid -> row */
    uint64_t words_cap; /* rows */
    uint64_t *rows;     /* per-batch scratch: n rows */
    uint64_t *hashes;   /* per-batch scratch */
    int64_t rows_cap;
} FixedGrouper;

/* True when keys of these types can use fixed-width rows. */
bool tl_group_fixed_fits(const TlType *types, int n_keys)
{
    if (n_keys < 1 || n_keys > 63) return false;
    for (int k = 0; k < n_keys; k++)
        switch (types[k]) {
        case TL_TINT64: case TL_TDATE: case TL_TTIMESTAMP: case TL_TTIMESTAMPTZ: case TL_TBOOL:
        case TL_TFLOAT64: case TL_TNULL:
            break;
        default:
            return false;
        }
    return true;
}

static FSlot *alloc_slots(uint64_t cap)
{
    FSlot *s = tl_malloc((size_t)cap * sizeof *s);
    if (s)
        for (uint64_t i = 0; i < cap; i++) s[i].gid = EMPTY;
    return s;
}

static inline uint64_t row_hash(const uint64_t *r, int w)
{
    uint64_t h = tl_k_hash_mix64(r[0] ^ 0x9e3779b97f4a7c15ull);
    for (int k = 1; k < w; k++) h = tl_k_hash_combine(h, tl_k_hash_mix64(r[k]));
    return h;
}

static inline bool rows_eq(const uint64_t *a, const uint64_t *b, int w)
{
    for (int k = 0; k < w; k++)
        if (a[k] != b[k]) return false;
    return true;
}

/* Encode rows [0, n) of the batch into g->rows and hash them. */
static TlStatus encode(FixedGrouper *g, const TlArray *const *keys, int64_t n,
                       TlError *err)
{
    int w = g->w, nk = g->head.n_keys;
    if (g->rows_cap < n) {
        uint64_t *r = tl_realloc(g->rows, (size_t)n * (size_t)w * sizeof *r);
        if (!r) return tl_error_oom(err);
        g->rows = r;
        uint64_t *h = tl_realloc(g->hashes, (size_t)n * sizeof *h);
        if (!h) return tl_error_oom(err);
        g->hashes = h;
        g->rows_cap = n;
    }
    uint64_t *rows = g->rows;
    for (int64_t i = 0; i < n; i++) rows[i * w + nk] = 0;
    for (int k = 0; k < nk; k++) {
        const TlArray *a = keys[k];
        uint64_t *col = rows + k;
        uint64_t bit = (uint64_t)1 << k;
        if (a->type == TL_TNULL || a->null_count == a->length) {
            for (int64_t i = 0; i < n; i++) {
                col[i * w] = 0;
                col[i * w + nk - k] |= bit;
            }
            continue;
        }
        switch (a->type) {
        case TL_TINT64: case TL_TTIMESTAMP: case TL_TTIMESTAMPTZ: {
            const int64_t *v = tl_array_i64(a);
            for (int64_t i = 0; i < n; i++) col[i * w] = (uint64_t)v[i];
            break;
        }
        case TL_TDATE: {
            const int32_t *v = tl_array_i32(a);
            for (int64_t i = 0; i < n; i++) col[i * w] = (uint64_t)(int64_t)v[i];
            break;
        }
        case TL_TBOOL:
            for (int64_t i = 0; i < n; i++) col[i * w] = tl_array_bool(a, i);
            break;
        case TL_TFLOAT64: {
            const double *v = tl_array_f64(a);
            for (int64_t i = 0; i < n; i++) {
                double c = tl_k_f64_canon(v[i]);
                memcpy(&col[i * w], &c, 8);
            }
            break;
        }
        default:
            return tl_error(err, TL_ERR_DATA, "internal error: fixed grouper "
                            "cannot key on %s", tl_type_name(a->type));
        }
        if (a->null_count > 0)
            for (int64_t i = 0; i < n; i++)
                if (!tl_array_valid(a, i)) {
                    col[i * w] = 0;
                    col[i * w + nk - k] |= bit;
                }
    }
    for (int64_t i = 0; i < n; i++) g->hashes[i] = row_hash(rows + i * w, w);
    return TL_OK;
}

/* Double the table, reinserting groups in id order. */
static TlStatus grow(FixedGrouper *g, TlError *err)
{
    uint64_t cap = (g->mask + 1) * 2;
    FSlot *s = alloc_slots(cap);
    if (!s) return tl_error_oom(err);
    uint64_t mask = cap - 1;
    for (uint32_t gid = 0; gid < g->head.n_groups; gid++) {
        uint64_t h = row_hash(g->words + (size_t)gid * (size_t)g->w, g->w);
        uint64_t p = h & mask;
        while (s[p].gid != EMPTY) p = (p + 1) & mask;
        s[p].tag = (uint32_t)(h >> 32);
        s[p].gid = gid;
    }
    tl_free(g->slots);
    g->slots = s;
    g->mask = mask;
    return TL_OK;
}

static inline TlStatus lookup(FixedGrouper *g, const TlArray *const *keys,
                              int64_t i, const uint64_t *row, uint64_t h,
                              uint32_t *id, TlError *err)
{
    uint32_t tag = (uint32_t)(h >> 32);
    int w = g->w;
    for (;;) {
        uint64_t p = h & g->mask;
        for (;;) {
            const FSlot *s = &g->slots[p];
            if (s->gid == EMPTY) break;
            if (s->tag == tag &&
                rows_eq(g->words + (size_t)s->gid * (size_t)w, row, w)) {
                *id = s->gid;
                return TL_OK;
            }
            p = (p + 1) & g->mask;
        }
        if (((uint64_t)g->head.n_groups + 1) * 2 > g->mask + 1) {
            TL_TRY(grow(g, err));
            continue;
        }
        if (g->head.n_groups >= g->words_cap) {
            uint64_t cap = g->words_cap ? g->words_cap * 2 : 1024;
            uint64_t *wd = tl_realloc(g->words, (size_t)cap * (size_t)w * sizeof *wd);
            if (!wd) return tl_error_oom(err);
            g->words = wd;
            g->words_cap = cap;
        }
        TL_TRY(tl_grouper_add(&g->head, keys, i, id, err));
        memcpy(g->words + (size_t)*id * (size_t)w, row, (size_t)w * 8);
        g->slots[p].tag = tag;
        g->slots[p].gid = *id;
        return TL_OK;
    }
}

static TlStatus fixed_map(TlGrouper *gh, const TlArray *const *keys, int64_t n,
                          uint32_t *ids, TlError *err)
{
    FixedGrouper *g = (FixedGrouper *)gh;
    TL_TRY(encode(g, keys, n, err));
    const uint64_t *h = g->hashes;
    for (int64_t i = 0; i < n; i++) {
        if (i + PREFETCH < n) __builtin_prefetch(&g->slots[h[i + PREFETCH] & g->mask]);
        TL_TRY(lookup(g, keys, i, g->rows + i * g->w, h[i], &ids[i], err));
    }
    return TL_OK;
}

/* Lookup without insert (tl_grouper_find). */
static TlStatus fixed_find(TlGrouper *gh, const TlArray *const *keys,
                           int64_t n, uint32_t *ids, TlError *err)
{
    FixedGrouper *g = (FixedGrouper *)gh;
    int w = g->w;
    TL_TRY(encode(g, keys, n, err));
    const uint64_t *h = g->hashes;
    for (int64_t i = 0; i < n; i++) {
        if (i + PREFETCH < n) __builtin_prefetch(&g->slots[h[i + PREFETCH] & g->mask]);
        const uint64_t *row = g->rows + i * w;
        uint32_t tag = (uint32_t)(h[i] >> 32), id = TL_GROUP_NONE;
        for (uint64_t p = h[i] & g->mask;; p = (p + 1) & g->mask) {
            const FSlot *s = &g->slots[p];
            if (s->gid == EMPTY) break;
            if (s->tag == tag &&
                rows_eq(g->words + (size_t)s->gid * (size_t)w, row, w)) {
                id = s->gid;
                break;
            }
        }
        ids[i] = id;
    }
    return TL_OK;
}

/* Free the table, the stored rows and the scratch. */
static void release(FixedGrouper *g)
{
    tl_free(g->slots);
    g->slots = NULL;
    tl_free(g->words);
    g->words = NULL;
    tl_free(g->rows);
    g->rows = NULL;
    tl_free(g->hashes);
    g->hashes = NULL;
    g->rows_cap = 0;
}

static void fixed_free(TlGrouper *gh)
{
    FixedGrouper *g = (FixedGrouper *)gh;
    tl_grouper_fini(gh);
    release(g);
    tl_free(g);
}

static const TlGrouperVt fixed_vt = {fixed_map, fixed_free, NULL, fixed_find,
                                     NULL, NULL, NULL, NULL};

/* Create the grouper on fixed-width key rows (see group.h). */
TlStatus tl_group_fixed_new(const TlType *types, int n_keys, bool keep_keys,
                            TlGrouper **out, TlError *err)
{
    *out = NULL;
    if (!tl_group_fixed_fits(types, n_keys))
        return tl_error(err, TL_ERR_USAGE, "internal error: keys do not fit "
                        "the fixed-width grouper");
    FixedGrouper *g = tl_calloc(1, sizeof *g);
    if (!g) return tl_error_oom(err);
    TlStatus st = tl_grouper_init(&g->head, &fixed_vt, types, n_keys, keep_keys,
                                  keep_keys, err);
    if (st != TL_OK) {
        tl_free(g);
        return st;
    }
    g->w = n_keys + 1;
    g->mask = 15; /* grows by doubling: a small input stays small */
    g->slots = alloc_slots(g->mask + 1);
    if (!g->slots) {
        fixed_free(&g->head);
        return tl_error_oom(err);
    }
    *out = &g->head;
    return TL_OK;
}
