/*
 * group_rows.c -- the grouper for any other key set: several keys, float
 * keys, keys of the null type, or none at all.
 *
 * Each batch's keys are encoded with the order-preserving row encoding
 * (kernels/rowenc.h), whose equality is exactly key equality (NaN = NaN,
 * -0.0 = 0.0, all nulls alike).  The table is open addressing on the
 * encoded bytes, linear probing, power of two, grown before 50% load:
 *
 *   slot (8 bytes):  | tag: uint32 (hash >> 32) | gid: uint32 (UINT32_MAX empty) |
 *
 *   keys[gid] -> | len: uint32 | encoded row (len bytes) |
 *                in blocks of >= 1 MiB that never move:
 *   block list:  [ row row row ... ] -> [ ... ] -> ...
 *
 * The low bits of the row's XXH3 pick the slot, the high 32 bits are the
 * tag; a probe compares tag, then length, then bytes (inline, 8 at a time).
 * Growing recomputes each group's hash from its stored row, in id order
 * (the rows sit in the blocks in that order, so the reads are sequential),
 * which is cheaper than keeping 8 more bytes per slot for the whole run.  Hashes of
 * a batch are computed first, so the probe loop prefetches the slot of the
 * row PREFETCH rows ahead.  Zero keys encode every row to the empty string:
 * one group.
 *
 * The key columns are not kept in builders while grouping: at the end the
 * stored rows are decoded (tl_k_rowdec), range by range as the output
 * batches are built, after the table is freed, so the keys live once.
 * Float keys are the exception: the encoding folds -0.0 into 0.0, so their
 * first-row values are kept in builders.
 */
#include "group.h"

#include "../../kernels/hash.h"
#include "../../kernels/rowenc.h"

#define EMPTY UINT32_MAX
#define PREFETCH 16 /* rows ahead whose slot is prefetched */
#define BLOCK_MIN ((size_t)1 << 20)

typedef struct RSlot {
    uint32_t tag;
    uint32_t gid;
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
    const uint8_t **keys;  /* gid -> length-prefixed encoded row */
    uint32_t keys_cap;
    RBlock *blocks;        /* newest first */
    uint64_t *hashes;      /* per-batch scratch */
    int64_t hashes_cap;
    TlArray **nulls;       /* per key: all-null stand-in of the key's type */
    TlBuilder *fkb;        /* per float key: first-row values (else unused) */
    TlArray **fdone;       /* the finished fkb, after the first keys call */
} RowsGrouper;

static RSlot *alloc_slots(uint64_t cap)
{
    RSlot *s = tl_malloc((size_t)cap * sizeof *s);
    if (s)
        for (uint64_t i = 0; i < cap; i++) s[i].gid = EMPTY;
    return s;
}

static inline uint32_t key_len(const uint8_t *k)
{
    uint32_t len;
    memcpy(&len, k, 4);
    return len;
}

/* Double the table.  Groups are reinserted in id order, which reads the
 * stored rows sequentially (they sit in the blocks in id order). */
static TlStatus grow(RowsGrouper *g, TlError *err)
{
    uint64_t cap = (g->mask + 1) * 2;
    RSlot *s = alloc_slots(cap);
    if (!s) return tl_error_oom(err);
    uint64_t mask = cap - 1;
    for (uint32_t gid = 0; gid < g->head.n_groups; gid++) {
        const uint8_t *k = g->keys[gid];
        uint64_t h = tl_k_hash_bytes(k + 4, key_len(k));
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

/* Copy a row behind its length into the never-moving blocks. */
static const uint8_t *keep(RowsGrouper *g, const uint8_t *p, uint32_t len)
{
    RBlock *b = g->blocks;
    size_t need = (size_t)len + 4;
    if (!b || b->cap - b->used < need) {
        size_t cap = need > BLOCK_MIN ? need : BLOCK_MIN;
        b = tl_malloc(sizeof *b + cap);
        if (!b) return NULL;
        b->next = g->blocks;
        b->used = 0;
        b->cap = cap;
        g->blocks = b;
    }
    uint8_t *dst = b->bytes + b->used;
    memcpy(dst, &len, 4);
    if (len) memcpy(dst + 4, p, len);
    b->used += need;
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
    uint32_t tag = (uint32_t)(h >> 32);
    for (;;) {
        uint64_t p = h & g->mask;
        for (;;) {
            const RSlot *s = &g->slots[p];
            if (s->gid == EMPTY) break;
            if (s->tag == tag) {
                const uint8_t *k = g->keys[s->gid];
                if (key_len(k) == len && keys_eq(k + 4, row, len)) {
                    *id = s->gid;
                    return TL_OK;
                }
            }
            p = (p + 1) & g->mask;
        }
        if (((uint64_t)g->head.n_groups + 1) * 2 > g->mask + 1) {
            TL_TRY(grow(g, err));
            continue;
        }
        if (len > UINT32_MAX - 8)
            return tl_error(err, TL_ERR_DATA, "group key longer than 4 GiB");
        if (g->head.n_groups >= g->keys_cap) {
            uint32_t cap = g->keys_cap ? g->keys_cap * 2 : 1024;
            if (cap < g->keys_cap) cap = UINT32_MAX;
            const uint8_t **k = tl_realloc(g->keys, (size_t)cap * sizeof *k);
            if (!k) return tl_error_oom(err);
            g->keys = k;
            g->keys_cap = cap;
        }
        const uint8_t *kept = keep(g, row, (uint32_t)len);
        if (!kept) return tl_error_oom(err);
        TL_TRY(tl_grouper_add(&g->head, keys, i, id, err));
        g->keys[*id] = kept;
        if (g->fkb)
            for (int k = 0; k < g->head.n_keys; k++)
                if (g->head.types[k] == TL_TFLOAT64 &&
                    !tl_builder_append_from(&g->fkb[k], keys[k], i))
                    return tl_error_oom(err);
        RSlot *s = &g->slots[p];
        s->tag = tag;
        s->gid = *id;
        return TL_OK;
    }
}

static TlStatus rows_map(TlGrouper *gh, const TlArray *const *keys, int64_t n,
                         uint32_t *ids, TlError *err)
{
    RowsGrouper *g = (RowsGrouper *)gh;
    TlRows r;
    const TlArray *local[16] = {0};
    const TlArray **cols = gh->n_keys <= 16 ? local
                                           : tl_malloc((size_t)gh->n_keys * sizeof *cols);
    if (!cols) return tl_error_oom(err);
    /* A key column of the null type stands for all nulls of the key's type:
     * encode it as such, so its rows equal the nulls of other batches. */
    for (int k = 0; k < gh->n_keys; k++) {
        cols[k] = keys[k];
        if (keys[k]->type == TL_TNULL && gh->types[k] != TL_TNULL) {
            TlArray *na = g->nulls[k];
            if (!na || na->length < n) {
                tl_array_release(na);
                na = g->nulls[k] = tl_array_new_null(gh->types[k], n);
                if (!na) {
                    if (cols != local) tl_free(cols);
                    return tl_error_oom(err);
                }
            }
            cols[k] = na;
        }
    }
    TlStatus st = tl_k_rowenc(cols, gh->n_keys, n, NULL, NULL, &r, err);
    if (cols != local) tl_free(cols);
    TL_TRY(st);
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

/* Decode the stored rows of a range of groups into key columns (see
 * group.h).  The first call frees the table: the input has ended.  Float
 * keys come from their builders instead: the encoding maps -0.0 to 0.0,
 * and a group's key is its first row's value. */
static TlStatus rows_keys(TlGrouper *gh, uint32_t first, uint32_t n,
                          TlArray **out, TlError *err)
{
    RowsGrouper *g = (RowsGrouper *)gh;
    tl_free(g->slots);
    g->slots = NULL;
    tl_free(g->hashes);
    g->hashes = NULL;
    g->hashes_cap = 0;
    if (g->fkb && !g->fdone) {
        g->fdone = tl_calloc((size_t)gh->n_keys, sizeof *g->fdone);
        if (!g->fdone) return tl_error_oom(err);
        for (int k = 0; k < gh->n_keys; k++)
            if (gh->types[k] == TL_TFLOAT64 &&
                !(g->fdone[k] = tl_builder_finish(&g->fkb[k])))
                return tl_error_oom(err);
    }
    const uint8_t **rows = tl_malloc(((size_t)n + 1) * sizeof *rows);
    if (!rows) return tl_error_oom(err);
    for (uint32_t i = 0; i < n; i++) rows[i] = g->keys[first + i] + 4;
    TlStatus st = tl_k_rowdec(rows, n, gh->types, gh->n_keys, out, err);
    tl_free(rows);
    for (int k = 0; st == TL_OK && g->fdone && k < gh->n_keys; k++) {
        if (!g->fdone[k]) continue;
        tl_array_release(out[k]);
        out[k] = tl_array_slice(g->fdone[k], first, n);
        if (!out[k]) st = tl_error_oom(err);
    }
    if (st != TL_OK)
        for (int k = 0; k < gh->n_keys; k++) {
            tl_array_release(out[k]);
            out[k] = NULL;
        }
    return st;
}

static void rows_free(TlGrouper *gh)
{
    RowsGrouper *g = (RowsGrouper *)gh;
    if (g->nulls)
        for (int k = 0; k < gh->n_keys; k++) tl_array_release(g->nulls[k]);
    tl_free(g->nulls);
    if (g->fkb)
        for (int k = 0; k < gh->n_keys; k++) tl_builder_free(&g->fkb[k]);
    tl_free(g->fkb);
    if (g->fdone)
        for (int k = 0; k < gh->n_keys; k++) tl_array_release(g->fdone[k]);
    tl_free(g->fdone);
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

static const TlGrouperVt rows_vt = {rows_map, rows_free, rows_keys, NULL};

/* Create the grouper on encoded rows (see group.h). */
TlStatus tl_group_rows_new(const TlType *types, int n_keys, bool keep_keys,
                           TlGrouper **out, TlError *err)
{
    *out = NULL;
    RowsGrouper *g = tl_calloc(1, sizeof *g);
    if (!g) return tl_error_oom(err);
    TlStatus st = tl_grouper_init(&g->head, &rows_vt, types, n_keys, keep_keys,
                                  false, err);
    if (st != TL_OK) {
        tl_free(g);
        return st;
    }
    g->mask = 1023;
    g->slots = alloc_slots(g->mask + 1);
    g->nulls = tl_calloc((size_t)n_keys + 1, sizeof *g->nulls);
    if (!g->slots || !g->nulls) {
        rows_free(&g->head);
        return tl_error_oom(err);
    }
    bool floats = false;
    for (int k = 0; k < n_keys; k++) floats |= types[k] == TL_TFLOAT64;
    if (keep_keys && floats) {
        g->fkb = tl_calloc((size_t)n_keys, sizeof *g->fkb);
        if (!g->fkb) {
            rows_free(&g->head);
            return tl_error_oom(err);
        }
        for (int k = 0; k < n_keys; k++) tl_builder_init(&g->fkb[k], types[k]);
    }
    *out = &g->head;
    return TL_OK;
}
