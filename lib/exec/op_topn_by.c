/*
 * op_topn_by.c -- sort + first N rows of each group in one pass
 * (`--sort -v3 --head 2 --by id6`, folded by lib/opt/topn_by.c).
 *
 * The answer is defined as that of a stable sort followed by head N by: the
 * rows kept are, in each group of the by-columns, the N smallest by
 * (sort key, input position), and they come out ordered by (sort key,
 * input position) over all groups.  A row's input position is
 * batch << 32 | row, batch counting the non-empty batches (morsels) the
 * child delivered in order, so positions depend only on the input.
 *
 * Partitions.  The groups are split into NPART partitions by the top bits
 * of a hash of the by-columns: the radix split the group-by uses too
 * (radix.h; a constant count, so nothing depends on the thread count).
 * Each partition owns its grouping (a lib/group grouper fed the same
 * hashes: ids dense, first appearance), a bounded max heap per group
 * (limit slots of one flat array: slot g*N .. g*N+N-1, its root the
 * group's worst kept row) and the chunks holding its rows.  A row enters
 * while its group has fewer than N rows, or when it is smaller than the
 * root by (key, position) -- an equal key comes later in the input and
 * loses the tie -- replacing the root.  (The heap is the state of a
 * per-group aggregate in all but name: the step left is to make it one of
 * agg.c's states and this operator a group-by.)
 *
 * The stage (per morsel, on the pool): the morsel's sort keys are
 * evaluated, its rows split by partition (row numbers and hashes by
 * partition, then with fast keys the key images and by-columns gathered in
 * that order into arrays shared by the pieces): for each partition a
 * piece holding its rows (fast keys: the morsel's columns shared; else all
 * columns gathered, with the encoded keys), their positions and their
 * keys.  The consumer pushes each morsel's split, in
 * morsel order, into ordered partition queues (partq.h): partition p takes
 * its piece of morsel k after that of morsel k-1, partitions run in
 * parallel on the pool, so each sees its rows in input order, as the
 * serial algorithm would; partq's backpressure bounds the splits in
 * flight, and its first error in (morsel, partition) order comes before an
 * error of the child on a later morsel.  A child that is not a scan (or
 * TALLY_SORT_SERIAL) gets the same split on the consumer thread.
 *
 * Keys.  One sort key of type float64, int64, timestamp or date ("fast
 * keys") compares as (null rank, 64-bit image, position): the image is the
 * order-preserving unsigned image of the value (tl_k_f64_image: -0.0 =
 * 0.0, NaN after every number, every NaN equal), inverted when descending;
 * the null rank puts nulls first or last whatever the direction.  This is
 * exactly the order of the encoded rows (kernels/rowenc.h), which every
 * other key shape uses: each chunk then also holds its rows' encoded keys.
 * With fast keys each group also has a Root: its fill and a copy of its
 * root's (rank, image).  Since a partition sees its rows in input order, a
 * new row comes after every kept row, so it enters a full group only when
 * its (rank, image) is strictly smaller than the root's: most rows are
 * turned away on the Root alone, without touching the heap.
 *
 * Offering.  With fast keys a partition offers a piece in two passes: the
 * first maps the rows to their groups and sets aside the rows whose
 * group's Root does not turn them away (a row turned away then would be
 * turned away later too: roots only get smaller), gathers only those rows
 * from the shared morsel into its chunk (H2O's `--by id6`: with 1e5
 * groups of ~100 rows and N = 2, about one row in ten after the first
 * morsels), and the second pass offers them in order, prefetching their
 * heaps.  Otherwise every row of the piece is offered.
 *
 * Memory.  A piece's chunk is kept while some row of it sits in a heap and
 * freed when its count of kept rows drops to zero.  Since with many groups
 * nearly every chunk keeps a few rows, a partition holding more than four
 * times its kept rows plus a slack (tl_batch_rows() / 8) compacts: the
 * kept rows are gathered into one new chunk (strings copied, so no old
 * string block stays referenced), the entries re-pointed and the old
 * chunks freed.  The
 * copies are paid for by the rows that arrived since the last compaction,
 * so the cost is at most a third of a copy per input row, and memory stays
 * within about four times the kept rows plus NPART * slack rows, plus the
 * morsels in flight (partq's backpressure).
 *
 * The end.  Each partition (in parallel) compacts to one chunk.  With
 * fast keys every kept row goes into one array, ordered at once by stable
 * parallel radix sorts (kernels/sort.h, tl_k_psort_u64): by position, then
 * by image, then by null rank.  Otherwise each partition sorts its rows
 * (position, then tl_k_sort_rows on the encoded keys) and the NPART-way
 * merge runs in ranges on the pool: the largest partition's quantiles cut
 * every partition (binary search), each range merges its parts into its
 * own slice of the output order.  The output batches gather from the
 * partitions' chunks (tl_array_take_multi), a few batches ahead on the
 * pool (the ordered ring, ordered.h) when there is more than one thread.
 * Since positions are unique, the order is total and the same for any
 * NPART, range cuts or thread count.
 */
#include <stdlib.h>

#include "../../kernels/hash.h"
#include "../../kernels/rowenc.h"
#include "../../kernels/sort.h"
#include "../core/pool.h"
#include "../group/group.h"
#include "../expr/eval.h"
#include "exec.h"
#include "ordered.h"
#include "partq.h"
#include "radix.h"

enum { NPART = TL_RADIX_P };

/* A kept row: its order (rank, key, pos) and where it is held. */
typedef struct Ent {
    uint64_t key;      /* fast keys: the image (0 for nulls) */
    uint64_t pos;      /* input position: batch << 32 | row */
    uint32_t chunk;    /* chunk index in its partition */
    uint32_t row;      /* row in that chunk */
    uint32_t rank;     /* fast keys: 0 null first, 1 value, 2 null last */
} Ent;

typedef struct Chunk {
    TlBatch *b;        /* NULL once freed */
    TlRows keys;       /* encoded keys (not fast) */
} Chunk;

/* Per group: entries used, and (fast keys) a copy of its root's order, so
 * that most rows are turned away without touching the slots.  rg: the
 * root's rank in bits 0-1. */
typedef struct Root {
    uint64_t key;
    uint32_t fill;
    uint32_t rg;
} Root;

#define EMPTY UINT32_MAX /* Ent.chunk of an unused slot */

/* A row the fast path's first pass set aside. */
typedef struct Acc {
    Root *r;
    uint32_t i, gid;
} Acc;

typedef struct Part {
    TlGrouper *g;      /* the by-columns' groups (lib/group) */
    uint32_t ng;       /* groups so far */
    Ent *slots;        /* per group limit entries (chunk EMPTY: unused) */
    Root *fill;        /* per group */
    uint64_t cap_groups;
    Chunk *chunks;
    int64_t *live;     /* per chunk: its rows in some heap */
    uint32_t n_chunks, cap_chunks;
    int64_t held;      /* rows in chunks not freed */
    int64_t kept;      /* entries in the heaps */
    uint32_t *ids;     /* scratch: group ids of a piece */
    int64_t cap_ids;
    struct Acc *acc;   /* scratch: the fast path's rows set aside */
    int64_t cap_acc;
    Ent *sorted;       /* at the end: the kept rows in order */
    int64_t n_sorted;
    TlStatus st;
    TlError err;
} Part;

/* One partition's rows of a morsel: rows [at, at + n) of the split's
 * arrays, which row, hash, u and rank point into. */
typedef struct Piece {
    TlBatch *b;        /* NULL: none.  Fast keys: the whole morsel (shared
                          columns), else its rows gathered */
    int64_t at, n;     /* where in the split, rows of the partition */
    uint32_t *row;     /* their rows in the morsel */
    uint64_t *hash;    /* their by-columns' hashes */
    uint64_t *u;       /* fast keys: images */
    uint8_t *rank;     /* fast keys: null ranks, NULL when all are values */
    TlRows keys;       /* else: encoded keys */
} Piece;

/* A morsel's rows by partition (radix.h): partition k's rows are
 * [off[k], off[k+1]) of each array. */
typedef struct Split {
    Piece p[NPART];
    uint32_t *row;
    uint64_t *hash;
    uint64_t *u;
    uint8_t *rank;
    TlArray **by;      /* fast keys: the by-columns in split order */
    int n_by;
} Split;

typedef struct TopnOp {
    TlOperator base;
    TlOperator *child;
    const TlExprArena *ea;
    const TlExprId *keys;
    const bool *desc, *nulls_first;
    int n_keys;
    const int *by;
    int n_by;
    TlType *by_types;
    int64_t limit;
    bool fast;         /* one float64/int64/timestamp/date key */
    TlType key_type;
    int64_t slack;
    Part parts[NPART];
    /* output */
    uint32_t *opart, *orow;
    int64_t n_out, emitted;
    int np;            /* partitions with kept rows */
    int pidx[NPART];   /* their indexes */
    int qof[NPART];    /* partition -> its index in pidx */
    Ent *all;          /* fast keys, at the end: the kept rows of pidx[q]
                          at all_off[q].., Ent.chunk := q */
    int64_t all_off[NPART + 1];
    TlOrdered *ring;   /* output batches gathered ahead (> 1 thread) */
    bool consumed;
} TopnOp;

/* ------------------------------------------------------------ order */

/* Order of entries a, b of partition p: key, then position. */
static inline __attribute__((always_inline)) int
ent_cmp(const Part *p, bool fast, const Ent *a, const Ent *b)
{
    if (fast) {
        if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
        if (a->key != b->key) return a->key < b->key ? -1 : 1;
    } else {
        size_t la, lb;
        const uint8_t *x = tl_rows_at(&p->chunks[a->chunk].keys, a->row, &la);
        const uint8_t *y = tl_rows_at(&p->chunks[b->chunk].keys, b->row, &lb);
        int c = tl_rows_cmp(x, la, y, lb);
        if (c) return c;
    }
    return (a->pos > b->pos) - (a->pos < b->pos);
}

/* Order of entry a of partition pa and entry b of partition pb. */
static inline __attribute__((always_inline)) int
cross_cmp(const TopnOp *t, const Part *pa, const Ent *a, const Part *pb, const Ent *b)
{
    if (t->fast) return ent_cmp(pa, true, a, b);
    size_t la, lb;
    const uint8_t *x = tl_rows_at(&pa->chunks[a->chunk].keys, a->row, &la);
    const uint8_t *y = tl_rows_at(&pb->chunks[b->chunk].keys, b->row, &lb);
    int c = tl_rows_cmp(x, la, y, lb);
    if (c) return c;
    return (a->pos > b->pos) - (a->pos < b->pos);
}

/* ------------------------------------------------------ encoded rows */

/* out := rows ri[i] of src[ci[i]] (ci NULL: of src[0]), i < n, with
 * offsets.  TL_ERR_OOM. */
static TlStatus rows_gather(const TlRows *src, const uint32_t *ci, const uint32_t *ri,
                            int64_t n, TlRows *out, TlError *err)
{
    size_t len, total = 0;
    memset(out, 0, sizeof *out);
    for (int64_t i = 0; i < n; i++) {
        (void)tl_rows_at(&src[ci ? ci[i] : 0], ri[i], &len);
        total += len;
    }
    out->offs = tl_malloc((size_t)(n + 1) * sizeof *out->offs);
    out->bytes = tl_malloc(total ? total : 1);
    if (!out->offs || !out->bytes) {
        tl_k_rows_free(out);
        return tl_error_oom(err);
    }
    uint64_t o = 0;
    for (int64_t i = 0; i < n; i++) {
        const uint8_t *r = tl_rows_at(&src[ci ? ci[i] : 0], ri[i], &len);
        out->offs[i] = o;
        memcpy(out->bytes + o, r, len);
        o += len;
    }
    out->offs[n] = o;
    out->n_rows = n;
    return TL_OK;
}

/* ------------------------------------------------------- partitions */

static void chunk_drop(Part *p, uint32_t ci)
{
    Chunk *c = &p->chunks[ci];
    if (!c->b) return;
    p->held -= c->b->n_rows;
    tl_batch_free(c->b);
    c->b = NULL;
    tl_k_rows_free(&c->keys);
}

static void part_fini(Part *p)
{
    tl_grouper_free(p->g);
    for (uint32_t k = 0; k < p->n_chunks; k++) chunk_drop(p, k);
    tl_free(p->chunks);
    tl_free(p->live);
    tl_free(p->slots);
    tl_free(p->fill);
    tl_free(p->ids);
    tl_free(p->acc);
    tl_free(p->sorted);
    memset(p, 0, sizeof *p);
}

/* Room for n_groups groups' slots. */
static TlStatus grow_groups(Part *p, uint64_t n_groups, int64_t limit, bool roots,
                            TlError *err)
{
    if (n_groups <= p->cap_groups) return TL_OK;
    uint64_t cap = p->cap_groups ? p->cap_groups + p->cap_groups / 2 : 256;
    if (cap < n_groups) cap = n_groups;
    if (cap > SIZE_MAX / sizeof(Ent) / (uint64_t)limit) return tl_error_oom(err);
    Ent *s = tl_realloc(p->slots, (size_t)(cap * (uint64_t)limit) * sizeof *s);
    if (!s) return tl_error_oom(err);
    p->slots = s;
    for (uint64_t k = p->cap_groups * (uint64_t)limit; k < cap * (uint64_t)limit; k++)
        s[k].chunk = EMPTY;
    if (roots) {
        Root *f = tl_realloc(p->fill, (size_t)cap * sizeof *f);
        if (!f) return tl_error_oom(err);
        memset(f + p->cap_groups, 0, (size_t)(cap - p->cap_groups) * sizeof *f);
        p->fill = f;
    }
    p->cap_groups = cap;
    return TL_OK;
}

/* Room for one more chunk. */
static TlStatus grow_chunks(Part *p, TlError *err)
{
    if (p->n_chunks < p->cap_chunks) return TL_OK;
    if (p->cap_chunks >= UINT32_MAX / 4)
        return tl_error(err, TL_ERR_DATA, "too many batches");
    uint32_t cap = p->cap_chunks ? p->cap_chunks * 2 : 16;
    Chunk *c = tl_realloc(p->chunks, (size_t)cap * sizeof *c);
    if (!c) return tl_error_oom(err);
    p->chunks = c;
    int64_t *l = tl_realloc(p->live, (size_t)cap * sizeof *l);
    if (!l) return tl_error_oom(err);
    p->live = l;
    p->cap_chunks = cap;
    return TL_OK;
}

/* Gather the kept rows of p into one new chunk, re-point the entries and
 * free the old chunks.  On failure p is unchanged. */
static TlStatus compact(const TopnOp *t, Part *p, TlError *err)
{
    TlStatus st = TL_OK;
    uint64_t n_slots = (uint64_t)p->ng * (uint64_t)t->limit;
    int64_t n = p->kept;
    int nc = t->base.schema->n_fields;
    uint32_t *ci = tl_malloc((size_t)(n + 1) * sizeof *ci);
    uint32_t *ri = tl_malloc((size_t)(n + 1) * sizeof *ri);
    uint32_t *remap = tl_malloc((size_t)(p->n_chunks + 1) * sizeof *remap);
    TlArray **parts = tl_calloc((size_t)p->n_chunks + 1, sizeof *parts);
    TlRows *srcs = tl_calloc((size_t)p->n_chunks + 1, sizeof *srcs);
    TlBatch *nb = tl_batch_new(t->base.schema, nc, n);
    TlRows nk = {0};
    TlBuilder bld;
    tl_builder_init(&bld, TL_TNULL);
    if (!ci || !ri || !remap || !parts || !srcs || !nb) {
        st = tl_error_oom(err);
        goto done;
    }
    int np = 0;
    for (uint32_t k = 0; k < p->n_chunks; k++)
        if (p->chunks[k].b) {
            srcs[np] = p->chunks[k].keys;
            remap[k] = (uint32_t)np++;
        }
    int64_t m = 0;
    for (uint64_t k = 0; k < n_slots; k++) {
        const Ent *e = &p->slots[k];
        if (e->chunk == EMPTY) continue;
        ci[m] = remap[e->chunk];
        ri[m] = e->row;
        m++;
    }
    for (int c = 0; c < nc; c++) {
        int q = 0;
        for (uint32_t k = 0; k < p->n_chunks; k++)
            if (p->chunks[k].b) parts[q++] = p->chunks[k].b->cols[c];
        TlType ty = t->base.schema->fields[c].type;
        if (ty == TL_TSTRING && n > 0) {
            /* copy the bytes: the old chunks' string blocks are let go */
            tl_builder_free(&bld);
            tl_builder_init(&bld, TL_TSTRING);
            bool ok = tl_builder_reserve(&bld, n);
            for (int64_t i = 0; ok && i < n; i++) {
                const TlArray *a = parts[ci[i]];
                ok = a->type == TL_TSTRING ? tl_builder_append_from(&bld, a, ri[i])
                                           : tl_builder_append_null(&bld);
            }
            nb->cols[c] = ok ? tl_builder_finish(&bld) : NULL;
        } else if (q > 0) {
            nb->cols[c] = tl_array_take_multi(parts, q, ci, ri, n);
        } else {
            nb->cols[c] = tl_array_new_null(ty, 0);
        }
        if (!nb->cols[c]) {
            st = tl_error_oom(err);
            goto done;
        }
    }
    if (!t->fast && n > 0) {
        st = rows_gather(srcs, ci, ri, n, &nk, err);
        if (st != TL_OK) goto done;
    }
    /* commit */
    for (uint32_t k = 0; k < p->n_chunks; k++) chunk_drop(p, k);
    p->n_chunks = 0;
    p->held = 0;
    if (n > 0) {
        p->chunks[0].b = nb;
        p->chunks[0].keys = nk;
        p->live[0] = n;
        p->n_chunks = 1;
        p->held = n;
        nb = NULL;
        memset(&nk, 0, sizeof nk);
        m = 0;
        for (uint64_t k = 0; k < n_slots; k++) {
            Ent *e = &p->slots[k];
            if (e->chunk == EMPTY) continue;
            e->chunk = 0;
            e->row = (uint32_t)m++;
        }
    }
done:
    tl_builder_free(&bld);
    tl_batch_free(nb);
    tl_k_rows_free(&nk);
    tl_free(ci);
    tl_free(ri);
    tl_free(remap);
    tl_free(parts);
    tl_free(srcs);
    return st;
}

/* Group the n rows of by-columns cols[by[k]] (hashes h: radix.h) with
 * grouper g: ids[0..n); with `slice`, rows [at, at + n) of each. */
static TlStatus map_by(const TopnOp *t, TlGrouper *g, TlArray *const *cols, const int *by,
                       bool slice, int64_t at, int64_t n, const uint64_t *h, uint32_t *ids,
                       TlError *err)
{
    TlArray *bc[64] = {0};
    TlArray **v = bc;
    TlStatus st = TL_OK;
    if (t->n_by > 64 && !(v = tl_calloc((size_t)t->n_by, sizeof *v)))
        return tl_error_oom(err);
    for (int k = 0; k < t->n_by && st == TL_OK; k++) {
        TlArray *a = cols[by ? by[k] : k];
        v[k] = slice ? tl_array_slice(a, at, n) : tl_array_retain(a);
        if (!v[k]) st = tl_error_oom(err);
    }
    if (st == TL_OK) st = tl_grouper_map_hashed(g, (const TlArray *const *)v, n, h, ids, err);
    for (int k = 0; k < t->n_by; k++) tl_array_release(v[k]);
    if (v != bc) tl_free(v);
    return st;
}

/* Offer row `row` of chunk ci (just added), of order (key, rank, pos), to
 * the group whose Root is r and heap h. */
static inline __attribute__((always_inline)) void
offer_one(const TopnOp *t, Part *p, Root *r, Ent *h, uint64_t key, uint32_t rank,
          uint64_t pos, uint32_t ci, uint32_t row, bool fast)
{
    uint32_t lim = (uint32_t)t->limit;
    /* the row comes after every kept row of its partition, so with fast
     * keys it loses unless its key is strictly smaller than the root's:
     * decided on the group's Root alone */
    uint32_t rr = r->rg & 3;
    if (fast && r->fill == lim && (rank > rr || (rank == rr && key >= r->key))) return;
    Ent e;
    e.key = key;
    e.rank = rank;
    e.pos = pos;
    e.chunk = ci;
    e.row = row;
    if (r->fill < lim) { /* sift up */
        uint32_t c = r->fill++;
        while (c > 0) {
            uint32_t par = (c - 1) / 2;
            if (ent_cmp(p, fast, &h[par], &e) >= 0) break;
            h[c] = h[par];
            c = par;
        }
        h[c] = e;
        p->live[ci]++;
        p->kept++;
    } else {
        if (!fast && ent_cmp(p, fast, &e, &h[0]) >= 0) return;
        uint32_t old = h[0].chunk, c = 0;
        for (;;) { /* sift down from the root */
            uint32_t l = 2 * c + 1, m = l;
            if (l >= lim) break;
            if (l + 1 < lim && ent_cmp(p, fast, &h[l + 1], &h[l]) > 0) m = l + 1;
            if (ent_cmp(p, fast, &h[m], &e) <= 0) break;
            h[c] = h[m];
            c = m;
        }
        h[c] = e;
        p->live[ci]++;
        if (--p->live[old] == 0 && old != ci) chunk_drop(p, old);
    }
    r->key = h[0].key;
    r->rg = (r->rg & ~3u) | h[0].rank;
}

/* Offer the n rows of chunk ci to the heaps of groups ids[]. */
static inline __attribute__((always_inline)) void
offer(const TopnOp *t, Part *p, const Piece *pc, const uint32_t *ids, uint32_t ci,
      uint64_t hi, int64_t n, bool fast)
{
    uint64_t lim = (uint64_t)t->limit;
    for (int64_t i = 0; i < n; i++) {
        if (i + 16 < n) __builtin_prefetch(&p->fill[ids[i + 16]]);
        offer_one(t, p, &p->fill[ids[i]], p->slots + ids[i] * lim,
                  fast ? pc->u[i] : 0, fast ? (pc->rank ? pc->rank[i] : 1) : 0,
                  hi | pc->row[i], ci, (uint32_t)i, fast);
    }
}

/* Fast keys: group piece pc's rows (by-columns: the split's sp->by) in
 * p's grouper and offer them.  First pass: set aside the rows their
 * group's Root does not turn away (Roots prefetched); only those are
 * gathered from the morsel (pc->b) into a new chunk.  Second pass: offer
 * them, in order (slots prefetched).  A row turned away against a Root of
 * the first pass would be turned away later too: roots only get smaller. */
static TlStatus fast_offer(const TopnOp *t, Part *p, const Split *sp, const Piece *pc,
                           uint64_t hi, TlError *err)
{
    uint64_t lim = (uint64_t)t->limit;
    int64_t n = pc->n;
    if (n > p->cap_acc) {
        Acc *acc = tl_realloc(p->acc, (size_t)n * sizeof *acc);
        uint32_t *ids = tl_realloc(p->ids, (size_t)n * sizeof *ids);
        if (acc) p->acc = acc;
        if (ids) p->ids = ids;
        if (!acc || !ids) return tl_error_oom(err);
        p->cap_acc = n;
    }
    uint32_t *ids = p->ids;
    TL_TRY(map_by(t, p->g, sp->by, NULL, true, pc->at, n, pc->hash, ids, err));
    p->ng = tl_grouper_count(p->g);
    TL_TRY(grow_groups(p, p->ng, t->limit, true, err));
    Root *fill = p->fill;
    Acc *acc = p->acc;
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i + 16 < n) __builtin_prefetch(&fill[ids[i + 16]]);
        Root *r = &fill[ids[i]];
        uint32_t rank = pc->rank ? pc->rank[i] : 1, rr = r->rg & 3;
        if (r->fill == lim && (rank > rr || (rank == rr && pc->u[i] >= r->key)))
            continue;
        acc[m].r = r;
        acc[m].gid = ids[i];
        acc[m].i = (uint32_t)i;
        m++;
    }
    if (m == 0) return TL_OK;
    /* the chunk: the rows set aside, gathered from the morsel */
    TL_TRY(grow_chunks(p, err));
    int nc = t->base.schema->n_fields;
    uint32_t *sel = p->ids;
    for (int64_t k = 0; k < m; k++) sel[k] = pc->row[acc[k].i];
    TlBatch *cb = tl_batch_new(t->base.schema, nc, m);
    if (!cb) return tl_error_oom(err);
    for (int c = 0; c < nc; c++)
        if (!(cb->cols[c] = tl_array_take(pc->b->cols[c], sel, m))) {
            tl_batch_free(cb);
            return tl_error_oom(err);
        }
    uint32_t ci = p->n_chunks++;
    p->chunks[ci].b = cb;
    memset(&p->chunks[ci].keys, 0, sizeof p->chunks[ci].keys);
    p->live[ci] = 0;
    p->held += m;
    for (int64_t k = 0; k < m; k++) {
        if (k + 4 < m) __builtin_prefetch(p->slots + acc[k + 4].gid * lim);
        uint32_t i = acc[k].i;
        offer_one(t, p, acc[k].r, p->slots + acc[k].gid * lim, pc->u[i],
                  pc->rank ? pc->rank[i] : 1, hi | pc->row[i], ci, (uint32_t)k, true);
    }
    if (p->live[ci] == 0) chunk_drop(p, ci);
    return TL_OK;
}

/* Partition p takes piece pc of split sp, the batch numbered `batch`
 * (its batch and keys taken over; fast keys only read them). */
static TlStatus part_take(const TopnOp *t, Part *p, const Split *sp, Piece *pc,
                          uint64_t batch, TlError *err)
{
    int64_t n = pc->n;
    if (t->fast) {
        TL_TRY(fast_offer(t, p, sp, pc, batch << 32, err));
    } else {
        if (n > p->cap_ids) {
            uint32_t *ids = tl_realloc(p->ids, (size_t)n * sizeof *ids);
            if (!ids) return tl_error_oom(err);
            p->ids = ids;
            p->cap_ids = n;
        }
        TL_TRY(map_by(t, p->g, pc->b->cols, t->by, false, 0, n, pc->hash, p->ids, err));
        p->ng = tl_grouper_count(p->g);
        TL_TRY(grow_groups(p, p->ng, t->limit, true, err));
        TL_TRY(grow_chunks(p, err));
        uint32_t ci = p->n_chunks++;
        p->chunks[ci].b = pc->b;
        p->chunks[ci].keys = pc->keys;
        p->live[ci] = 0;
        p->held += n;
        pc->b = NULL;
        memset(&pc->keys, 0, sizeof pc->keys);
        offer(t, p, pc, p->ids, ci, batch << 32, n, false);
        if (p->live[ci] == 0) chunk_drop(p, ci);
    }
    if (p->held > 4 * p->kept + t->slack) TL_TRY(compact(t, p, err));
    return TL_OK;
}

/* ------------------------------------------------------- the split */

static void split_free(Split *s)
{
    if (!s) return;
    for (int k = 0; k < NPART; k++) {
        Piece *pc = &s->p[k];
        tl_batch_free(pc->b);
        tl_k_rows_free(&pc->keys);
    }
    for (int k = 0; s->by && k < s->n_by; k++) tl_array_release(s->by[k]);
    tl_free(s->by);
    tl_free(s->row);
    tl_free(s->hash);
    tl_free(s->u);
    tl_free(s->rank);
    tl_free(s);
}

static void stage_drop(void *ctx, void *result)
{
    (void)ctx;
    split_free(result);
}

/* Fast keys: u[i] := the image of k's row i, rank[i] its null rank
 * (*has_null tells whether any row is null). */
static TlStatus key_images(const TopnOp *t, const TlArray *k, uint64_t *u,
                           uint8_t *rank, bool *has_null, TlError *err)
{
    int64_t n = k->length;
    uint64_t flip = t->desc && t->desc[0] ? ~0ull : 0;
    uint8_t nullr = t->nulls_first && t->nulls_first[0] ? 0 : 2;
    *has_null = k->null_count > 0;
    if (k->type == TL_TNULL || k->null_count == n) {
        for (int64_t i = 0; i < n; i++) u[i] = 0, rank[i] = nullr;
        *has_null = n > 0;
        return TL_OK;
    }
    if (k->type != t->key_type)
        return tl_error(err, TL_ERR_DATA, "internal: top-n by key of an unexpected type");
    switch (k->type) {
    case TL_TFLOAT64: {
        const double *v = tl_array_f64(k);
        for (int64_t i = 0; i < n; i++) u[i] = tl_k_f64_image(v[i]) ^ flip;
        break;
    }
    case TL_TDATE: {
        const int32_t *v = tl_array_i32(k);
        for (int64_t i = 0; i < n; i++) u[i] = tl_k_i64_image(v[i]) ^ flip;
        break;
    }
    default: {
        const int64_t *v = tl_array_i64(k);
        for (int64_t i = 0; i < n; i++) u[i] = tl_k_i64_image(v[i]) ^ flip;
        break;
    }
    }
    if (*has_null)
        for (int64_t i = 0; i < n; i++) {
            bool ok = tl_array_valid(k, i);
            rank[i] = ok ? 1 : nullr;
            if (!ok) u[i] = 0;
        }
    return TL_OK;
}

/* The stage's work on a pool thread (reads only read-only operator
 * fields): b's rows split by the partitions of their by-columns' hashes
 * (radix.h).  Fast keys: the key images and the by-columns gathered in
 * split order into arrays the pieces share, and every piece shares the
 * morsel's columns (the partition gathers only the rows it keeps); else
 * each piece's rows gathered, with their encoded keys. */
static TlStatus stage_work(void *ctx, TlBatch *b, void **result, TlError *err)
{
    TopnOp *t = ctx;
    int64_t n = b->n_rows;
    size_t n1 = (size_t)(n ? n : 1);
    int nc = b->n_cols;
    bool has_null = false;
    TlStatus st = TL_OK;
    TlRows enc = {0};
    uint32_t off[NPART + 1];
    TlArray *bc[64], **bv = bc;
    *result = NULL;
    Split *s = tl_calloc(1, sizeof *s);
    uint64_t *h = tl_malloc(n1 * sizeof *h);
    uint64_t *u = t->fast ? tl_malloc(n1 * sizeof *u) : NULL;
    uint8_t *rank = t->fast ? tl_malloc(n1) : NULL;
    TlArray **karr = tl_calloc((size_t)t->n_keys + 1, sizeof *karr);
    if (t->n_by > 64) bv = tl_calloc((size_t)t->n_by, sizeof *bv);
    if (!s || !h || (t->fast && (!u || !rank)) || !karr || !bv) {
        st = tl_error_oom(err);
        goto done;
    }
    s->row = tl_malloc(n1 * sizeof *s->row);
    s->hash = tl_malloc(n1 * sizeof *s->hash);
    if (!s->row || !s->hash) {
        st = tl_error_oom(err);
        goto done;
    }
    for (int k = 0; k < t->n_keys && st == TL_OK; k++)
        st = tl_eval(t->ea, t->keys[k], b, &karr[k], err);
    if (st != TL_OK) goto done;
    if (t->fast) st = key_images(t, karr[0], u, rank, &has_null, err);
    else st = tl_k_rowenc((const TlArray *const *)karr, t->n_keys, n, t->desc,
                          t->nulls_first, &enc, err);
    if (st != TL_OK) goto done;
    for (int k = 0; k < t->n_by; k++) bv[k] = b->cols[t->by[k]];
    tl_grouper_hash(t->by_types, t->n_by, (const TlArray *const *)bv, n, h);
    tl_radix_split(h, n, s->row, s->hash, off);
    if (t->fast) {
        s->u = tl_malloc(n1 * sizeof *s->u);
        if (has_null) s->rank = tl_malloc(n1);
        s->by = tl_calloc((size_t)t->n_by + 1, sizeof *s->by);
        s->n_by = t->n_by;
        if (!s->u || (has_null && !s->rank) || !s->by) {
            st = tl_error_oom(err);
            goto done;
        }
        const uint32_t *restrict row = s->row;
        uint64_t *restrict su = s->u;
        for (int64_t o = 0; o < n; o++) su[o] = u[row[o]];
        if (s->rank)
            for (int64_t o = 0; o < n; o++) s->rank[o] = rank[row[o]];
        for (int k = 0; k < t->n_by; k++)
            if (!(s->by[k] = tl_array_take(bv[k], row, n))) {
                st = tl_error_oom(err);
                goto done;
            }
    }
    for (int k = 0; k < NPART; k++) {
        int64_t m = off[k + 1] - off[k];
        Piece *pc = &s->p[k];
        if (m == 0) continue;
        pc->at = off[k];
        pc->n = m;
        pc->row = s->row + off[k];
        pc->hash = s->hash + off[k];
        pc->u = s->u ? s->u + off[k] : NULL;
        pc->rank = s->rank ? s->rank + off[k] : NULL;
        pc->b = tl_batch_new(t->base.schema, nc, t->fast ? n : m);
        if (!pc->b) {
            st = tl_error_oom(err);
            goto done;
        }
        for (int c = 0; c < nc; c++)
            if (!(pc->b->cols[c] = m == n || t->fast
                                       ? tl_array_retain(b->cols[c])
                                       : tl_array_take(b->cols[c], pc->row, m))) {
                st = tl_error_oom(err);
                goto done;
            }
        if (!t->fast) {
            st = rows_gather(&enc, NULL, pc->row, m, &pc->keys, err);
            if (st != TL_OK) goto done;
        }
    }
    *result = s;
    s = NULL;
done:
    split_free(s);
    tl_batch_free(b);
    tl_k_rows_free(&enc);
    if (karr)
        for (int k = 0; k < t->n_keys; k++) tl_array_release(karr[k]);
    tl_free(karr);
    if (bv != bc) tl_free(bv);
    tl_free(h);
    tl_free(u);
    tl_free(rank);
    return st;
}

/* --------------------------------------------------------- consumer */

/* Partition p's work on one morsel's split (partq: in morsel order). */
static TlStatus part_fn(void *ctx, void *item, int64_t seq, int p, TlError *err)
{
    TopnOp *t = ctx;
    Split *sp = item;
    Piece *pc = &sp->p[p];
    if (!pc->b) return TL_OK;
    return part_take(t, &t->parts[p], sp, pc, (uint64_t)seq, err);
}

/* The first failure of a partition, in partition order. */
static TlStatus part_status(TopnOp *t, TlError *err)
{
    for (int k = 0; k < NPART; k++)
        if (t->parts[k].st != TL_OK) {
            *err = t->parts[k].err;
            return t->parts[k].st;
        }
    return TL_OK;
}

/* Partition p's kept rows e[0..n) (e[i].row == i: just compacted, in slot
 * order; encoded keys, not fast) into output order: a stable radix sort by
 * position, then tl_k_sort_rows by the encoded keys, so ties on the key
 * keep position order.  *sorted takes over or frees e.  TL_ERR_OOM. */
static TlStatus sort_kept(const Part *p, Ent *e, int64_t n, Ent **sorted,
                          TlError *err)
{
    TlStatus st = TL_OK;
    uint64_t *k = tl_malloc((size_t)(n ? n : 1) * sizeof *k);
    uint32_t *idx = tl_malloc((size_t)(n ? n : 1) * sizeof *idx);
    Ent *out = tl_malloc((size_t)(n ? n : 1) * sizeof *out);
    *sorted = NULL;
    if (!k || !idx || !out) {
        st = tl_error_oom(err);
        goto done;
    }
    for (int64_t i = 0; i < n; i++) {
        idx[i] = (uint32_t)i;
        k[i] = e[i].pos;
    }
    if ((st = tl_k_sort_u64(k, idx, n, err)) != TL_OK) goto done;
    if ((st = tl_k_sort_rows(&p->chunks[0].keys, idx, n, err)) != TL_OK) goto done;
    for (int64_t i = 0; i < n; i++) out[i] = e[idx[i]];
    *sorted = out;
    out = NULL;
done:
    tl_free(out);
    tl_free(k);
    tl_free(idx);
    tl_free(e);
    return st;
}

/* At the end: partition i compacts and sorts its kept rows. */
static void finish_task(void *arg, int64_t i)
{
    TopnOp *t = arg;
    Part *p = &t->parts[i];
    if (p->st != TL_OK || p->kept == 0) return;
    if ((p->st = compact(t, p, &p->err)) != TL_OK) return;
    uint64_t n_slots = (uint64_t)p->ng * (uint64_t)t->limit;
    int64_t n = 0;
    if (t->all) { /* fast keys: into the shared array, sorted there */
        Ent *e = t->all + t->all_off[t->qof[i]];
        for (uint64_t k = 0; k < n_slots; k++)
            if (p->slots[k].chunk != EMPTY) {
                e[n] = p->slots[k];
                e[n++].chunk = (uint32_t)t->qof[i];
            }
    } else {
        Ent *e = tl_malloc((size_t)p->kept * sizeof *e);
        if (!e) {
            p->st = tl_error_oom(&p->err);
            return;
        }
        for (uint64_t k = 0; k < n_slots; k++)
            if (p->slots[k].chunk != EMPTY) e[n++] = p->slots[k];
        if ((p->st = sort_kept(p, e, n, &p->sorted, &p->err)) != TL_OK) return;
    }
    p->n_sorted = n;
    tl_grouper_free(p->g);
    p->g = NULL;
    tl_free(p->slots);
    p->slots = NULL;
    tl_free(p->fill);
    p->fill = NULL;
    p->cap_groups = 0;
    tl_free(p->ids);
    p->ids = NULL;
    tl_free(p->acc);
    p->acc = NULL;
}

/* The output order is merged in ranges, in parallel: range r takes, of
 * each partition q, its sorted rows [cut[r][q], cut[r+1][q]) and writes
 * them from output index base[r] on. */
enum { MERGE_RANGES_MAX = 64, MERGE_RANGE_MIN = 16384 };

typedef struct MergeJob {
    TopnOp *t;
    int nr;                                   /* ranges */
    int64_t cut[MERGE_RANGES_MAX + 1][NPART]; /* by pidx index */
    int64_t base[MERGE_RANGES_MAX + 1];
} MergeJob;

/* Rows of partition pidx[q] before entry x of partition pidx[qx]: the
 * first of its sorted rows that is not smaller (positions are unique). */
static int64_t lower_cut(const TopnOp *t, int q, int qx, const Ent *x)
{
    const Part *p = &t->parts[t->pidx[q]], *px = &t->parts[t->pidx[qx]];
    int64_t lo = 0, hi = p->n_sorted;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (cross_cmp(t, p, &p->sorted[mid], px, x) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Merge range r of job j: a min heap of the partitions by their next row. */
static void merge_range(void *arg, int64_t r)
{
    MergeJob *j = arg;
    TopnOp *t = j->t;
    int64_t at[NPART], end[NPART], o = j->base[r];
    int heap[NPART], nh = 0;
    for (int q = 0; q < t->np; q++) {
        at[q] = j->cut[r][q];
        end[q] = j->cut[r + 1][q];
        if (at[q] < end[q]) heap[nh++] = q;
    }
#define HEAD(q) (&t->parts[t->pidx[q]].sorted[at[q]])
#define LESS(x, y) (cross_cmp(t, &t->parts[t->pidx[x]], HEAD(x), &t->parts[t->pidx[y]], \
                              HEAD(y)) < 0)
    for (int i = nh / 2 - 1; i >= 0; i--)
        for (int c = i;;) {
            int l = 2 * c + 1, m = c;
            if (l < nh && LESS(heap[l], heap[m])) m = l;
            if (l + 1 < nh && LESS(heap[l + 1], heap[m])) m = l + 1;
            if (m == c) break;
            int x = heap[c];
            heap[c] = heap[m];
            heap[m] = x;
            c = m;
        }
    while (nh > 0) {
        int q = heap[0];
        t->opart[o] = (uint32_t)q;
        t->orow[o++] = HEAD(q)->row;
        if (++at[q] == end[q]) heap[0] = heap[--nh];
        for (int c = 0;;) {
            int l = 2 * c + 1, m = c;
            if (l < nh && LESS(heap[l], heap[m])) m = l;
            if (l + 1 < nh && LESS(heap[l + 1], heap[m])) m = l + 1;
            if (m == c) break;
            int x = heap[c];
            heap[c] = heap[m];
            heap[m] = x;
            c = m;
        }
    }
#undef LESS
#undef HEAD
}

/* Merge the partitions' sorted rows into the output order: cut into
 * ranges at entries of the largest partition (its quantiles), the other
 * partitions cut there by binary search, ranges merged on the pool.  The
 * order is total, so the result is the same for any cuts. */
static TlStatus merge_parts(TopnOp *t, TlError *err)
{
    TlStatus st = TL_OK;
    int64_t total = t->all_off[t->np];
    int big = 0;
    for (int q = 1; q < t->np; q++)
        if (t->parts[t->pidx[q]].n_sorted > t->parts[t->pidx[big]].n_sorted) big = q;
    t->opart = tl_malloc((size_t)(total + 1) * sizeof *t->opart);
    t->orow = tl_malloc((size_t)(total + 1) * sizeof *t->orow);
    MergeJob *j = tl_calloc(1, sizeof *j);
    if (!t->opart || !t->orow || !j) {
        tl_free(j);
        return tl_error_oom(err);
    }
    j->t = t;
    int nr = 1;
    if (t->np > 0 && tl_pool_threads() > 1) {
        nr = 4 * tl_pool_threads();
        if (nr > MERGE_RANGES_MAX) nr = MERGE_RANGES_MAX;
        if (nr > total / MERGE_RANGE_MIN) nr = (int)(total / MERGE_RANGE_MIN);
        if (nr < 1) nr = 1;
    }
    const Part *pb = t->np > 0 ? &t->parts[t->pidx[big]] : NULL;
    for (int q = 0; q < t->np; q++) j->cut[nr][q] = t->parts[t->pidx[q]].n_sorted;
    for (int r = 1; r < nr; r++) {
        const Ent *x = &pb->sorted[pb->n_sorted * r / nr];
        for (int q = 0; q < t->np; q++)
            j->cut[r][q] = q == big ? pb->n_sorted * r / nr : lower_cut(t, q, big, x);
    }
    for (int r = 0; r <= nr; r++)
        for (int q = 0; q < t->np; q++) j->base[r] += j->cut[r][q];
    j->nr = nr;
    if (nr == 1) merge_range(j, 0);
    else st = tl_pool_for(nr, merge_range, j, err);
    t->n_out = st == TL_OK ? total : 0;
    tl_free(j);
    for (int k = 0; k < NPART; k++) {
        tl_free(t->parts[k].sorted);
        t->parts[k].sorted = NULL;
    }
    return st;
}

/* Fast keys: the output order of every kept row (t->all) at once, by
 * stable radix sorts on the pool (tl_k_psort_u64): by position, then by
 * image, then by null rank if some row has another. */
static TlStatus order_all(TopnOp *t, TlError *err)
{
    TlStatus st = TL_OK;
    int64_t n = t->all_off[t->np];
    const Ent *e = t->all;
    uint64_t *k = tl_malloc((size_t)(n + 1) * sizeof *k);
    uint32_t *idx = tl_malloc((size_t)(n + 1) * sizeof *idx);
    t->opart = tl_malloc((size_t)(n + 1) * sizeof *t->opart);
    t->orow = tl_malloc((size_t)(n + 1) * sizeof *t->orow);
    if (!k || !idx || !t->opart || !t->orow) {
        st = tl_error_oom(err);
        goto done;
    }
    bool ranks = false;
    for (int64_t i = 0; i < n; i++) {
        idx[i] = (uint32_t)i;
        k[i] = e[i].pos;
        ranks |= e[i].rank != 1;
    }
    if ((st = tl_k_psort_u64(k, idx, n, 0, err)) != TL_OK) goto done;
    for (int64_t i = 0; i < n; i++) k[i] = e[idx[i]].key;
    if ((st = tl_k_psort_u64(k, idx, n, 0, err)) != TL_OK) goto done;
    if (ranks) {
        for (int64_t i = 0; i < n; i++) k[i] = e[idx[i]].rank;
        if ((st = tl_k_psort_u64(k, idx, n, 0, err)) != TL_OK) goto done;
    }
    for (int64_t i = 0; i < n; i++) {
        t->opart[i] = e[idx[i]].chunk;
        t->orow[i] = e[idx[i]].row;
    }
    t->n_out = n;
done:
    tl_free(k);
    tl_free(idx);
    tl_free(t->all);
    t->all = NULL;
    return st;
}

/* stage_work over b (consumed), its result dropped: tl_place_row (it
 * evaluates the keys row by row; what it keeps does not fail). */
static TlStatus stage_run(void *arg, TlBatch *b, TlError *err)
{
    void *r = NULL;
    TlStatus st = stage_work(arg, b, &r, err);
    if (r) stage_drop(arg, r);
    return st;
}

/* Read the whole input, then put the kept rows in output order. */
static TlStatus consume(TopnOp *t, TlError *err)
{
    TlStatus st = TL_OK, qst;
    int64_t before = 0;
    TlPartQ *q = NULL;
    TlError qerr = {0};
    bool staged = false;
    if (t->child->set_stage && t->child->next_result &&
        !TL_TUNING(t->base.ctx)->sort_serial) {
        TlStage stage = {t, stage_work, stage_drop};
        TL_TRY(t->child->set_stage(t->child, &stage, err));
        staged = true;
    }
    TL_TRY(tl_partq_new(NPART, part_fn, stage_drop, t, 0, &q, err));
    while (!tl_partq_failed(q)) {
        void *r = NULL;
        if (staged) {
            if ((st = t->child->next_result(t->child, &r, err)) != TL_OK || !r) break;
        } else {
            TlBatch *b = NULL;
            if ((st = t->child->next(t->child, &b, err)) != TL_OK || !b) break;
            if (b->n_rows == 0) {
                tl_batch_free(b);
                continue;
            }
            TlBatch *keep = tl_batch_ref(b);
            if (!keep) {
                tl_batch_free(b);
                st = tl_error_oom(err);
                break;
            }
            st = stage_work(t, b, &r, err);
            if (st == TL_ERR_DATA) tl_place_row(stage_run, t, keep, t->child, before, err);
            before += keep->n_rows;
            tl_batch_free(keep);
            if (st != TL_OK) break;
        }
        if ((st = tl_partq_push(q, r, err)) != TL_OK) break;
    }
    /* a partition's failure on an earlier morsel comes first */
    qst = tl_partq_finish(q, &qerr);
    tl_partq_free(q);
    if (qst != TL_OK) {
        *err = qerr;
        return qst;
    }
    TL_TRY(st);
    for (int k = 0; k < NPART; k++)
        if (t->parts[k].kept > 0) {
            t->qof[k] = t->np;
            t->all_off[t->np + 1] = t->all_off[t->np] + t->parts[k].kept;
            t->pidx[t->np++] = k;
        }
    if (t->fast && t->np > 0 &&
        !(t->all = tl_malloc((size_t)t->all_off[t->np] * sizeof *t->all)))
        return tl_error_oom(err);
    TL_TRY(tl_pool_for(NPART, finish_task, t, err));
    TL_TRY(part_status(t, err));
    return t->fast ? order_all(t, err) : merge_parts(t, err);
}

/* Output rows [off, off + rows) of every column, gathered from the
 * partitions' chunks into a new batch. */
static TlStatus out_batch(const TopnOp *t, int64_t off, int64_t rows, TlBatch **out,
                          TlError *err)
{
    int nc = t->base.schema->n_fields;
    TlArray *parts[NPART];
    TlBatch *b = tl_batch_new(t->base.schema, nc, rows);
    *out = NULL;
    if (!b) return tl_error_oom(err);
    for (int c = 0; c < nc; c++) {
        for (int q = 0; q < t->np; q++) parts[q] = t->parts[t->pidx[q]].chunks[0].b->cols[c];
        b->cols[c] = tl_array_take_multi(parts, t->np, t->opart + off, t->orow + off, rows);
        if (!b->cols[c]) {
            tl_batch_free(b);
            return tl_error_oom(err);
        }
    }
    *out = b;
    return TL_OK;
}

/* Output batch seq on the pool (ordered.h). */
static TlStatus out_task(void *ctx, int64_t seq, void *in, void **out, TlError *err)
{
    const TopnOp *t = ctx;
    TlBatch *b = NULL;
    int64_t per = tl_ctx_batch_rows(t->base.ctx), off = seq * per;
    TL_TRY(out_batch(t, off, t->n_out - off < per ? t->n_out - off : per, &b, err));
    *out = b;
    return TL_OK;
}

static void out_drop(void *ctx, void *out)
{
    tl_batch_free(out);
}

/* The next output batch: with more than one thread and more than one
 * batch, gathered a few batches ahead on the pool while the caller writes
 * the earlier ones; else here. */
static TlStatus topn_next(TlOperator *op, TlBatch **out, TlError *err)
{
    TopnOp *t = (TopnOp *)op;
    int64_t per = tl_ctx_batch_rows(t->base.ctx);
    *out = NULL;
    if (!t->consumed) {
        t->consumed = true;
        TL_TRY(consume(t, err));
        int threads = tl_pool_threads();
        if (threads > 1 && t->n_out > per)
            TL_TRY(tl_ordered_new(threads * 2 > 16 ? 16 : threads * 2, out_task, out_drop, t,
                                  &t->ring, err));
    }
    if (t->emitted >= t->n_out) return TL_OK;
    int64_t rows = t->n_out - t->emitted;
    if (rows > per) rows = per;
    if (t->ring) {
        void *r = NULL;
        TL_TRY(tl_ordered_next(t->ring, (t->n_out + per - 1) / per, &r, err));
        *out = r;
    } else {
        TL_TRY(out_batch(t, t->emitted, rows, out, err));
    }
    t->emitted += rows;
    return TL_OK;
}

/* See exec.h (TlOperator.origin): rows are named by their place in the
 * result of --head N --by, which this operator is. */
static void topn_origin(TlOperator *op, int64_t row, TlPlaceVal *v, char *buf, size_t cap)
{
    (void)v;
    tl_origin_made("head", row, buf, cap);
}

static void topn_free(TlOperator *op)
{
    TopnOp *t = (TopnOp *)op;
    if (!t) return;
    tl_ordered_free(t->ring); /* first: its tasks read the partitions */
    if (t->child) t->child->free(t->child);
    for (int k = 0; k < NPART; k++) part_fini(&t->parts[k]);
    tl_free(t->by_types);
    tl_free(t->opart);
    tl_free(t->orow);
    tl_free(t->all);
    tl_free(t);
}

/* See exec.h.  Takes ownership of child, also on failure. */
TlStatus tl_op_topn_by_new(TlOperator *child, const TlExprArena *ea,
                           const TlExprId *keys, const bool *desc,
                           const bool *nulls_first, int n_keys, int64_t limit,
                           const int *by, int n_by, TlOperator **out,
                           TlError *err)
{
    TlStatus st = TL_OK;
    *out = NULL;
    TopnOp *t = tl_calloc(1, sizeof *t);
    if (!t) {
        child->free(child);
        return tl_error_oom(err);
    }
    t->base.next = topn_next;
    t->base.free = topn_free;
    t->base.origin = topn_origin;
    t->base.schema = child->schema;
    t->base.stats = child->stats;
    t->base.ctx = child->ctx;
    t->child = child;
    t->ea = ea;
    t->keys = keys;
    t->desc = desc;
    t->nulls_first = nulls_first;
    t->n_keys = n_keys;
    t->by = by;
    t->n_by = n_by;
    t->limit = limit;
    if (limit < 1 || limit > UINT32_MAX / 2 || n_keys < 1 || n_by < 1) {
        st = tl_error(err, TL_ERR_USAGE, "internal: top-n by needs a limit, "
                      "sort keys and by columns");
        goto fail;
    }
    if (n_keys == 1) {
        t->key_type = (TlType)tl_ea_node(ea, keys[0])->type;
        t->fast = t->key_type == TL_TFLOAT64 || t->key_type == TL_TINT64 ||
                  t->key_type == TL_TTIMESTAMP || t->key_type == TL_TTIMESTAMPTZ || t->key_type == TL_TDATE;
    }
    t->slack = tl_ctx_batch_rows(t->base.ctx) / 8;
    if (t->slack < 1) t->slack = 1;
    if (!(t->by_types = tl_malloc((size_t)n_by * sizeof *t->by_types))) {
        st = tl_error_oom(err);
        goto fail;
    }
    for (int k = 0; k < n_by; k++) t->by_types[k] = child->schema->fields[by[k]].type;
    for (int k = 0; k < NPART && st == TL_OK; k++)
        st = tl_grouper_new(t->base.ctx, t->by_types, n_by, false, &t->parts[k].g, err);
    if (st != TL_OK) goto fail;
    *out = &t->base;
    return TL_OK;
fail:
    topn_free(&t->base);
    return st;
}
