/*
 * group.h -- groupers: map each row's key tuple to a dense group id.
 *
 * Stage one of group-by (and the whole of distinct and limit-by): a grouper
 * sees key columns batch by batch and writes, for every row, the id of its
 * group.  Ids are dense uint32 numbered in order of first appearance, so a
 * new group's id is always tl_grouper_count() before the row that creates
 * it, and nothing downstream depends on hash table order.
 *
 * Key equality is the engine's: all nulls of a key are equal (a null key is
 * a group of its own), floats compare with NaN = NaN and -0.0 = 0.0, strings
 * by bytes.
 *
 * One interface, one implementation per key shape, chosen by the key types:
 *   one int64 / date / timestamp / bool key  group_int.c   table on values
 *   one string key                           group_str.c   table on views
 *   several fixed-width keys (int64, date,   group_fixed.c table on rows of
 *   timestamp, bool, float64), one float64                 64-bit words
 *   anything else (strings among several)    group_rows.c  table on compact
 *                                                          encoded rows
 *
 * Ownership: key arrays passed to tl_grouper_map are borrowed for the call;
 * the grouper copies what it keeps (key values, string bytes).
 */
#ifndef TL_GROUP_H
#define TL_GROUP_H

#include "../core/core.h"
#include "../core/ctx.h"

typedef struct TlGrouper TlGrouper;

/* Create a grouper for keys of types types[0..n_keys) (n_keys may be 0: one
 * group).  keep_keys: remember each group's key values (those of its first
 * row) for tl_grouper_keys; distinct and limit-by pass false.  ctx: the
 * run's (its tuning may force the row grouper); NULL: the environment's. */
TlStatus tl_grouper_new(const TlCtx *ctx, const TlType *types, int n_keys,
                        bool keep_keys, TlGrouper **out, TlError *err);

/* Map rows [0, n_rows) of keys[0..n_keys) (each of the grouper's types and
 * n_rows long) to group ids in ids[0..n_rows).  TL_ERR_OOM, or TL_ERR_DATA
 * when the number of groups would exceed the uint32 range. */
TlStatus tl_grouper_map(TlGrouper *g, const TlArray *const *keys,
                        int64_t n_rows, uint32_t *ids, TlError *err);

/* Look rows [0, n_rows) up without adding groups (a join's probe side):
 * ids[i] is the row's group id, or TL_GROUP_NONE when its key tuple has no
 * group (a null key finds the null group when there is one).  Groupers
 * without a find of their own (vt->find NULL) map instead and report every
 * group the call created as TL_GROUP_NONE (correct, but the table grows). */
#define TL_GROUP_NONE UINT32_MAX
TlStatus tl_grouper_find(TlGrouper *g, const TlArray *const *keys,
                         int64_t n_rows, uint32_t *ids, TlError *err);

/* Number of groups so far. */
uint32_t tl_grouper_count(const TlGrouper *g);

/* The key values of groups [first, first+n) (those of each group's first
 * row), in id order: out[0..n_keys), owned by the caller.  Requires
 * keep_keys.  The first call ends the input: afterwards only more
 * tl_grouper_keys calls and tl_grouper_free may follow, and those calls
 * only read the grouper, so they may run concurrently (n may be 0: a call
 * that just ends the input). */
TlStatus tl_grouper_keys(TlGrouper *g, uint32_t first, uint32_t n,
                         TlArray **out, TlError *err);

/* The key values of groups gid[i] of groupers gs[part[i]], i < n, in that
 * order (a radix-partitioned group-by's output, whose partitions' groups
 * interleave by first appearance): out[0..n_keys), owned by the caller.
 * Every referenced grouper has the same key types and keep_keys, and its
 * input has been ended (a tl_grouper_keys call); this only reads, so calls
 * may run concurrently.  Groupers that can (encoded rows) decode straight
 * into the output positions; others take their keys per grouper and
 * interleave them (tl_array_take_multi). */
TlStatus tl_grouper_keys_multi(TlGrouper *const *gs, int n_gs,
                               const uint8_t *part, const uint32_t *gid,
                               int64_t n, TlArray **out, TlError *err);

/* The row hashes of key columns keys[0..n_keys) of types types[] (each
 * n rows long) into h[0..n): equal keys by the groupers' rules hash equal.
 * The hash a grouper of these types would compute itself: murmur3's
 * finalizer of the value for one int64, date, timestamp or bool key
 * (tl_group_int_hash), else tl_k_hash_array over the key columns in order.
 * Radix-partitioned callers (lib/exec/radix.h) split rows by its top bits
 * and hand it on to tl_grouper_map_hashed. */
void tl_grouper_hash(const TlType *types, int n_keys, const TlArray *const *keys, int64_t n,
                     uint64_t *h);

/* Map with the caller's row hashes (tl_grouper_hash of the same keys): as
 * tl_grouper_map.  Groupers that hash rows themselves (integer values,
 * encoded rows) use them instead of hashing again; others ignore them.  A
 * grouper is fed either way, never both. */
TlStatus tl_grouper_map_hashed(TlGrouper *g, const TlArray *const *keys,
                               int64_t n_rows, const uint64_t *hashes,
                               uint32_t *ids, TlError *err);

void tl_grouper_free(TlGrouper *g); /* NULL-safe */

/* Morsel parallelism (lib/exec/op_agg.c): a worker groups one batch with a
 * local grouper of its own (tl_grouper_new with the global grouper's types
 * and keep_keys = true, else sealing fails with an internal error), then
 * calls tl_grouper_seal_local, which ends the local
 * input and prepares what the lookup needs (key columns, or encoded rows
 * and their hashes), so the consumer's part is only probing.  The consumer
 * then calls tl_grouper_merge(g, local, map): local group j (in local id
 * order) is looked up in g, map[j] its id there; new groups are added in
 * that order with the local group's key values (its first row's), exactly
 * as if g had mapped the batch's rows.  local is not usable afterwards
 * except for tl_grouper_free. */
TlStatus tl_grouper_seal_local(TlGrouper *local, TlError *err);
TlStatus tl_grouper_merge(TlGrouper *g, TlGrouper *local, uint32_t *map,
                          TlError *err);

/* ---------------------------------------------- for the implementations */

typedef struct TlGrouperVt {
    TlStatus (*map)(TlGrouper *g, const TlArray *const *keys, int64_t n_rows,
                    uint32_t *ids, TlError *err);
    void (*free)(TlGrouper *g);
    /* Key columns of a range of groups, when the grouper rebuilds them
     * itself (NULL: slices of the finished key builders). */
    TlStatus (*keys)(TlGrouper *g, uint32_t first, uint32_t n, TlArray **out,
                     TlError *err);
    /* Lookup without insert (tl_grouper_find), or NULL. */
    TlStatus (*find)(TlGrouper *g, const TlArray *const *keys, int64_t n_rows,
                     uint32_t *ids, TlError *err);
    /* tl_grouper_seal_local / tl_grouper_merge of groupers of this kind
     * (NULL: the generic way, key columns mapped).  seal_local returns
     * true when it prepared the fast merge; merge(g, local) is called only
     * then, with local of the same kind. */
    bool (*seal_local)(TlGrouper *local, TlError *err);
    TlStatus (*merge)(TlGrouper *g, TlGrouper *local, uint32_t *map,
                      TlError *err);
    /* tl_grouper_keys_multi over groupers of this kind, or NULL (the
     * generic way); may return TL_ERR_USAGE with err->msg empty to ask
     * for the generic way. */
    TlStatus (*keys_multi)(TlGrouper *const *gs, const uint8_t *part,
                           const uint32_t *gid, int64_t n, TlArray **out,
                           TlError *err);
    /* tl_grouper_map_hashed, or NULL (plain map). */
    TlStatus (*map_hashed)(TlGrouper *g, const TlArray *const *keys,
                           int64_t n_rows, const uint64_t *hashes,
                           uint32_t *ids, TlError *err);
} TlGrouperVt;

/* The common head of every grouper. */
struct TlGrouper {
    const TlGrouperVt *vt;
    int n_keys;
    TlType *types;      /* n_keys, owned */
    bool keep_keys;     /* the caller wants tl_grouper_keys */
    uint32_t n_groups;
    TlBuilder *kb;      /* one builder per key (first rows), or NULL */
    TlArray **done;     /* the finished builders, after the first keys call */
    TlArray **sealed;   /* tl_grouper_seal_local, generic way: all key columns */
    bool fast_sealed;   /* tl_grouper_seal_local prepared vt->merge */
};

/* Limit on groups (ids are uint32, UINT32_MAX marks empty slots). */
#define TL_GROUPS_MAX (UINT32_MAX - 1)

/* Initialize the head (types copied; key builders when `builders`). */
TlStatus tl_grouper_init(TlGrouper *g, const TlGrouperVt *vt,
                         const TlType *types, int n_keys, bool keep_keys,
                         bool builders, TlError *err);
/* Free what tl_grouper_init allocated (not g itself). */
void tl_grouper_fini(TlGrouper *g);
/* Start a new group whose first row is `row` of keys: checks the limit,
 * appends the key values to the builders if any, returns the new id. */
TlStatus tl_grouper_add(TlGrouper *g, const TlArray *const *keys, int64_t row,
                        uint32_t *id, TlError *err);

TlStatus tl_group_int_new(const TlType *types, bool keep_keys, TlGrouper **out,
                          TlError *err);
/* The int grouper's row hashes of key a (n rows): murmur3's finalizer of
 * the value widened to int64, TL_HASH_NULL for a null. */
void tl_group_int_hash(const TlArray *a, int64_t n, uint64_t *h);
TlStatus tl_group_str_new(const TlType *types, bool keep_keys, TlGrouper **out,
                          TlError *err);
/* Fixed-width key rows fit types[0..n_keys) (1..63 keys of int64, date,
 * timestamp, bool, float64 or null type). */
bool tl_group_fixed_fits(const TlType *types, int n_keys);
TlStatus tl_group_fixed_new(const TlType *types, int n_keys, bool keep_keys,
                            TlGrouper **out, TlError *err);
TlStatus tl_group_rows_new(const TlType *types, int n_keys, bool keep_keys,
                           TlGrouper **out, TlError *err);

#endif
