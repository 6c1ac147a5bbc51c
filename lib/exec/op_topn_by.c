/*
 * op_topn_by.c -- sort + first N rows of each group in one pass
 * (`--sort -v3 --head 2 --by id6`, folded by lib/opt/topn_by.c).
 *
 * Every child batch is kept as a chunk (its columns and its sort keys as
 * order-preserving byte rows, kernels/rowenc.h).  The by-columns go through
 * a grouper (ids dense, first appearance); each group owns N slots of one
 * flat array (slot g*N .. g*N+N-1, no per-group allocation) holding a max
 * heap of (encoded key, input position): its root is the group's worst kept
 * row.  A new row enters while the group has fewer than N rows, or when its
 * key is strictly smaller than the root's (an equal key comes later in the
 * input and loses the tie, as in the stable sort), replacing the root.
 *
 * At the end all kept rows are ordered by (key, input position) -- exactly
 * the rows and order of a stable sort followed by head N by -- and gathered
 * batch by batch from the chunks (tl_array_take_multi).  Each chunk counts
 * its rows that sit in some heap; a chunk whose count drops to zero is freed
 * at once (its rows can never come back), so memory is that of the chunks
 * still holding a kept row, and the work one heap step per row instead of a
 * sort of every row.
 *
 * When the child is a scan, most of this runs per morsel on the thread pool
 * (see "the stage" below): each morsel keeps only its own best N rows per
 * group, and the consumer offers those candidates, in morsel order, to the
 * heaps above; output is byte-identical for every --threads.
 */
#include <stdlib.h>

#include "../../kernels/rowenc.h"
#include "../group/group.h"
#include "eval.h"
#include "exec.h"

typedef struct TopnChunk {
    TlBatch *b;       /* NULL once no kept row is in it */
    TlRows keys;
    int64_t live;     /* its rows in some heap */
} TopnChunk;

typedef struct TopnOp {
    TlOperator base;
    TlOperator *child;
    const TlExprArena *ea;
    const TlExprId *keys;
    const bool *desc, *nulls_first;
    int n_keys;
    const int *by;
    int n_by;
    TlType *by_types;  /* the by columns' types (local groupers) */
    int64_t limit;
    TlGrouper *grouper;
    TopnChunk *chunks;
    int n_chunks, cap_chunks;
    uint64_t *slots;   /* per group limit entries: chunk << 32 | row */
    uint32_t *fill;    /* per group: entries used */
    uint64_t cap_groups;
    uint64_t *out;     /* the kept rows in output order (part << 32 | row,
                          part indexing the live chunks) */
    TlArray **parts;   /* per live chunk: one column, for the gather */
    int n_live;
    int64_t n_out, emitted;
    bool consumed;
} TopnOp;

/* Order of entries x and y: encoded key, then input position. */
static int entry_cmp(const TopnOp *t, uint64_t x, uint64_t y)
{
    size_t la, lb;
    const uint8_t *a = tl_rows_at(&t->chunks[x >> 32].keys, (int64_t)(uint32_t)x, &la);
    const uint8_t *b = tl_rows_at(&t->chunks[y >> 32].keys, (int64_t)(uint32_t)y, &lb);
    int c = tl_rows_cmp(a, la, b, lb);
    if (c) return c;
    return (x > y) - (x < y);
}

/* Restore the max heap h[0..n) from position i down. */
static void sift_down(const TopnOp *t, uint64_t *h, uint32_t n, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && entry_cmp(t, h[l], h[m]) > 0) m = l;
        if (r < n && entry_cmp(t, h[r], h[m]) > 0) m = r;
        if (m == i) return;
        uint64_t s = h[i];
        h[i] = h[m];
        h[m] = s;
        i = m;
    }
}

static void sift_up(const TopnOp *t, uint64_t *h, uint32_t i)
{
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (entry_cmp(t, h[i], h[p]) <= 0) return;
        uint64_t s = h[i];
        h[i] = h[p];
        h[p] = s;
        i = p;
    }
}

/* Room for n_groups groups' slots. */
static TlStatus grow_groups(TopnOp *t, uint64_t n_groups, TlError *err)
{
    if (n_groups <= t->cap_groups) return TL_OK;
    uint64_t cap = t->cap_groups ? t->cap_groups + t->cap_groups / 2 : 1024;
    if (cap < n_groups) cap = n_groups;
    if (cap > SIZE_MAX / 8 / (uint64_t)t->limit) return tl_error_oom(err);
    uint64_t *s = tl_realloc(t->slots, (size_t)(cap * (uint64_t)t->limit) * sizeof *s);
    if (!s) return tl_error_oom(err);
    t->slots = s;
    uint32_t *f = tl_realloc(t->fill, (size_t)cap * sizeof *f);
    if (!f) return tl_error_oom(err);
    memset(f + t->cap_groups, 0, (size_t)(cap - t->cap_groups) * sizeof *f);
    t->fill = f;
    t->cap_groups = cap;
    return TL_OK;
}

/* Free a chunk none of whose rows is kept. */
static void drop_chunk(TopnChunk *c)
{
    tl_batch_free(c->b);
    c->b = NULL;
    tl_k_rows_free(&c->keys);
}

/* Keep batch b (taken over, n >= 1 rows) with its encoded sort keys (taken
 * over) as a chunk and offer its rows to the heaps of groups ids[]. */
static TlStatus add_chunk(TopnOp *t, TlBatch *b, TlRows *keys, const uint32_t *ids,
                          TlError *err)
{
    int64_t n = b->n_rows;
    if (t->n_chunks == INT32_MAX) {
        tl_batch_free(b);
        tl_k_rows_free(keys);
        return tl_error(err, TL_ERR_DATA, "too many batches");
    }
    if (t->n_chunks == t->cap_chunks) {
        int cap = t->cap_chunks ? t->cap_chunks * 2 : 16;
        TopnChunk *c = tl_realloc(t->chunks, (size_t)cap * sizeof *c);
        if (!c) {
            tl_batch_free(b);
            tl_k_rows_free(keys);
            return tl_error_oom(err);
        }
        t->chunks = c;
        t->cap_chunks = cap;
    }
    uint32_t ci = (uint32_t)t->n_chunks;
    TopnChunk *ch = &t->chunks[ci];
    memset(ch, 0, sizeof *ch);
    ch->b = b;
    ch->keys = *keys;
    memset(keys, 0, sizeof *keys);
    t->n_chunks++;
    TL_TRY(grow_groups(t, tl_grouper_count(t->grouper), err));
    uint32_t lim = (uint32_t)t->limit;
    for (int64_t i = 0; i < n; i++) {
        uint64_t e = (uint64_t)ci << 32 | (uint64_t)i;
        uint64_t *h = t->slots + (uint64_t)ids[i] * lim;
        uint32_t *f = &t->fill[ids[i]];
        if (*f < lim) {
            h[*f] = e;
            sift_up(t, h, (*f)++);
            ch->live++;
        } else if (entry_cmp(t, e, h[0]) < 0) {
            uint32_t old = (uint32_t)(h[0] >> 32);
            h[0] = e;
            sift_down(t, h, lim, 0);
            ch->live++;
            if (--t->chunks[old].live == 0 && old != ci) drop_chunk(&t->chunks[old]);
        }
    }
    if (ch->live == 0) drop_chunk(ch);
    return TL_OK;
}

/* Evaluate and encode the sort keys of batch b. */
static TlStatus encode_keys(const TopnOp *t, const TlBatch *b, TlRows *out,
                            TlError *err)
{
    TlStatus st = TL_OK;
    memset(out, 0, sizeof *out);
    TlArray **karr = tl_calloc((size_t)t->n_keys + 1, sizeof *karr);
    if (!karr) return tl_error_oom(err);
    for (int k = 0; k < t->n_keys && st == TL_OK; k++)
        st = tl_eval(t->ea, t->keys[k], b, &karr[k], err);
    if (st == TL_OK)
        st = tl_k_rowenc((const TlArray *const *)karr, t->n_keys, b->n_rows, t->desc,
                         t->nulls_first, out, err);
    for (int k = 0; k < t->n_keys; k++) tl_array_release(karr[k]);
    tl_free(karr);
    return st;
}

/* Group b's rows by the by-columns with grouper g: ids[0..n). */
static TlStatus map_by(const TopnOp *t, TlGrouper *g, const TlBatch *b, uint32_t *ids,
                       TlError *err)
{
    const TlArray **bc = tl_calloc((size_t)t->n_by + 1, sizeof *bc);
    if (!bc) return tl_error_oom(err);
    for (int k = 0; k < t->n_by; k++) bc[k] = b->cols[t->by[k]];
    TlStatus st = tl_grouper_map(g, (const TlArray *const *)bc, b->n_rows, ids, err);
    tl_free(bc);
    return st;
}

/* Keep batch b (taken over) as a chunk and offer its rows to the heaps. */
static TlStatus consume_batch(TopnOp *t, TlBatch *b, TlError *err)
{
    int64_t n = b->n_rows;
    TlRows keys = {0};
    TlStatus st;
    if (n == 0) {
        tl_batch_free(b);
        return TL_OK;
    }
    uint32_t *ids = tl_malloc((size_t)n * sizeof *ids);
    if (!ids) {
        tl_batch_free(b);
        return tl_error_oom(err);
    }
    st = encode_keys(t, b, &keys, err);
    if (st == TL_OK) st = map_by(t, t->grouper, b, ids, err);
    if (st == TL_OK) {
        st = add_chunk(t, b, &keys, ids, err);
        b = NULL;
    }
    tl_batch_free(b);
    tl_k_rows_free(&keys);
    tl_free(ids);
    return st;
}

/* ------------------------------------------------ the stage (per morsel)
 *
 * A scan child runs stage_work on pool threads: the morsel's keys encoded,
 * its rows grouped by a local grouper, and the same bounded heaps run over
 * the morsel alone.  Its candidates -- the rows in some local heap, in
 * input order, with their encoded keys and local group ids -- are all the
 * morsel can contribute: a row that is not among the best N of its group
 * in its morsel is not among the best N of its group overall.  The
 * consumer merges the local grouper into the global one
 * (tl_grouper_merge) and offers the candidates to the heaps in morsel
 * order, so the heaps see what the serial path would have kept. */

typedef struct Cand {
    TlBatch *b;          /* the candidate rows, input order */
    TlRows keys;         /* their encoded sort keys */
    uint32_t *lid;       /* their local group ids */
    TlGrouper *local;    /* sealed */
} Cand;

static void cand_free(Cand *c)
{
    if (!c) return;
    tl_batch_free(c->b);
    tl_k_rows_free(&c->keys);
    tl_free(c->lid);
    tl_grouper_free(c->local);
    tl_free(c);
}

static void stage_drop(void *ctx, void *result)
{
    (void)ctx;
    cand_free(result);
}

/* A morsel's sort keys for its local heaps: the images of one numeric key
 * without nulls (inverted when descending), else the encoded rows. */
typedef struct LocalKeys {
    const uint64_t *u;
    TlRows r;
} LocalKeys;

/* Row order within one morsel: key, then position. */
static inline int local_cmp(const LocalKeys *lk, uint32_t x, uint32_t y)
{
    int c;
    if (lk->u) {
        c = (lk->u[x] > lk->u[y]) - (lk->u[x] < lk->u[y]);
    } else {
        size_t la, lb;
        const uint8_t *a = tl_rows_at(&lk->r, x, &la), *b = tl_rows_at(&lk->r, y, &lb);
        c = tl_rows_cmp(a, la, b, lb);
    }
    return c ? c : (x > y) - (x < y);
}

/* The morsel's best `limit` rows of each group, ascending: kept[0..*m). */
static TlStatus local_best(const TopnOp *t, const LocalKeys *lk, const uint32_t *ids,
                           int64_t n, uint32_t ng, uint32_t *kept, int64_t *m,
                           TlError *err)
{
    uint32_t lim = (uint32_t)t->limit;
    uint32_t *slots = tl_malloc(((size_t)ng * lim + 1) * sizeof *slots);
    uint32_t *fill = tl_calloc((size_t)ng + 1, sizeof *fill);
    uint8_t *mark = tl_calloc((size_t)n + 1, 1);
    if (!slots || !fill || !mark) {
        tl_free(slots);
        tl_free(fill);
        tl_free(mark);
        return tl_error_oom(err);
    }
    for (int64_t i = 0; i < n; i++) {
        uint32_t x = (uint32_t)i, *h = slots + (size_t)ids[i] * lim, *f = &fill[ids[i]];
        if (*f < lim) { /* sift up */
            uint32_t c = (*f)++;
            while (c > 0) {
                uint32_t p = (c - 1) / 2;
                if (local_cmp(lk, h[p], x) >= 0) break;
                h[c] = h[p];
                c = p;
            }
            h[c] = x;
            continue;
        }
        /* x comes after every kept row: it enters only when strictly
         * smaller than the root, and the root then leaves */
        if (local_cmp(lk, x, h[0]) >= 0) continue;
        uint32_t c = 0;
        for (;;) {
            uint32_t l = 2 * c + 1, mm = c, big = x;
            if (l < lim && local_cmp(lk, h[l], big) > 0) mm = l, big = h[l];
            if (l + 1 < lim && local_cmp(lk, h[l + 1], big) > 0) mm = l + 1, big = h[l + 1];
            if (mm == c) break;
            h[c] = h[mm];
            c = mm;
        }
        h[c] = x;
    }
    for (uint32_t g = 0; g < ng; g++)
        for (uint32_t j = 0; j < fill[g]; j++) mark[slots[(size_t)g * lim + j]] = 1;
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++)
        if (mark[i]) kept[k++] = (uint32_t)i;
    *m = k;
    tl_free(slots);
    tl_free(fill);
    tl_free(mark);
    return TL_OK;
}

/* Images of one numeric key without nulls, or false. */
static bool key_images(const TopnOp *t, const TlArray *k, uint64_t *u)
{
    if (t->n_keys != 1 || k->null_count) return false;
    uint64_t flip = t->desc && t->desc[0] ? ~0ull : 0;
    int64_t n = k->length;
    switch (k->type) {
    case TL_TFLOAT64: {
        const double *v = tl_array_f64(k);
        for (int64_t i = 0; i < n; i++) u[i] = tl_k_f64_image(v[i]) ^ flip;
        return true;
    }
    case TL_TINT64:
    case TL_TTIMESTAMP: {
        const int64_t *v = tl_array_i64(k);
        for (int64_t i = 0; i < n; i++) u[i] = tl_k_i64_image(v[i]) ^ flip;
        return true;
    }
    case TL_TDATE: {
        const int32_t *v = tl_array_i32(k);
        for (int64_t i = 0; i < n; i++) u[i] = tl_k_i64_image(v[i]) ^ flip;
        return true;
    }
    default: return false;
    }
}

/* The stage's work on a pool thread (reads only read-only operator
 * fields): the morsel's candidates. */
static TlStatus stage_work(void *ctx, TlBatch *b, void **result, TlError *err)
{
    TopnOp *t = ctx;
    int64_t n = b->n_rows, m = 0;
    LocalKeys lk;
    uint64_t *u = NULL;
    uint32_t *ids = NULL, *kept = NULL;
    TlArray **karr = NULL;
    TlStatus st = TL_OK;
    memset(&lk, 0, sizeof lk);
    *result = NULL;
    Cand *c = tl_calloc(1, sizeof *c);
    ids = tl_malloc((size_t)(n ? n : 1) * sizeof *ids);
    kept = tl_malloc((size_t)(n ? n : 1) * sizeof *kept);
    u = tl_malloc((size_t)(n ? n : 1) * sizeof *u);
    karr = tl_calloc((size_t)t->n_keys + 1, sizeof *karr);
    if (!c || !ids || !kept || !u || !karr) {
        st = tl_error_oom(err);
        goto done;
    }
    for (int k = 0; k < t->n_keys && st == TL_OK; k++)
        st = tl_eval(t->ea, t->keys[k], b, &karr[k], err);
    if (st != TL_OK) goto done;
    if (key_images(t, karr[0], u)) {
        lk.u = u;
    } else {
        st = tl_k_rowenc((const TlArray *const *)karr, t->n_keys, n, t->desc,
                         t->nulls_first, &lk.r, err);
        if (st != TL_OK) goto done;
    }
    st = tl_grouper_new(t->by_types, t->n_by, true, &c->local, err);
    if (st == TL_OK) st = map_by(t, c->local, b, ids, err);
    if (st == TL_OK)
        st = local_best(t, &lk, ids, n, tl_grouper_count(c->local), kept, &m, err);
    if (st == TL_OK) st = tl_grouper_seal_local(c->local, err);
    if (st != TL_OK) goto done;
    c->b = tl_batch_new(t->base.schema, b->n_cols, m);
    c->lid = tl_malloc((size_t)(m ? m : 1) * sizeof *c->lid);
    if (!c->b || !c->lid) {
        st = tl_error_oom(err);
        goto done;
    }
    for (int k = 0; k < b->n_cols; k++)
        if (!(c->b->cols[k] = m == n ? tl_array_retain(b->cols[k])
                                     : tl_array_take(b->cols[k], kept, m))) {
            st = tl_error_oom(err);
            goto done;
        }
    for (int k = 0; k < t->n_keys; k++) {
        TlArray *x = m == n ? tl_array_retain(karr[k]) : tl_array_take(karr[k], kept, m);
        if (!x) {
            st = tl_error_oom(err);
            goto done;
        }
        tl_array_release(karr[k]);
        karr[k] = x;
    }
    for (int64_t i = 0; i < m; i++) c->lid[i] = ids[kept[i]];
    st = tl_k_rowenc((const TlArray *const *)karr, t->n_keys, m, t->desc,
                     t->nulls_first, &c->keys, err);
    if (st != TL_OK) goto done;
    *result = c;
    c = NULL;
done:
    cand_free(c);
    tl_batch_free(b);
    tl_k_rows_free(&lk.r);
    if (karr)
        for (int k = 0; k < t->n_keys; k++) tl_array_release(karr[k]);
    tl_free(karr);
    tl_free(u);
    tl_free(ids);
    tl_free(kept);
    return st;
}

/* Merge one morsel's candidates into the heaps (consumer, morsel order). */
static TlStatus merge_cand(TopnOp *t, Cand *c, TlError *err)
{
    uint32_t nl = tl_grouper_count(c->local);
    uint32_t *map = tl_malloc(((size_t)nl + 1) * sizeof *map);
    if (!map) return tl_error_oom(err);
    TlStatus st = tl_grouper_merge(t->grouper, c->local, map, err);
    if (st == TL_OK) {
        for (int64_t i = 0; i < c->b->n_rows; i++) c->lid[i] = map[c->lid[i]];
        st = add_chunk(t, c->b, &c->keys, c->lid, err);
        c->b = NULL;
    }
    tl_free(map);
    return st;
}

static int qcmp(const void *a, const void *b, void *ctx)
{
    return entry_cmp(ctx, *(const uint64_t *)a, *(const uint64_t *)b);
}

/* Read the whole input (a scan child: candidates per morsel from the
 * stage), then put the kept rows in output order. */
static TlStatus consume(TopnOp *t, TlError *err)
{
    bool staged = false;
    if (t->child->set_stage && t->child->next_result &&
        getenv("TALLY_SORT_SERIAL") == NULL) {
        TlStage stage = {t, stage_work, stage_drop};
        TL_TRY(t->child->set_stage(t->child, &stage, err));
        staged = true;
    }
    while (staged) {
        void *r = NULL;
        TL_TRY(t->child->next_result(t->child, &r, err));
        if (!r) break;
        TlStatus st = merge_cand(t, r, err);
        cand_free(r);
        TL_TRY(st);
    }
    while (!staged) {
        TlBatch *b = NULL;
        TL_TRY(t->child->next(t->child, &b, err));
        if (!b) break;
        TL_TRY(consume_batch(t, b, err));
    }
    uint32_t ng = t->grouper ? tl_grouper_count(t->grouper) : 0;
    int64_t total = 0;
    for (uint32_t g = 0; g < ng; g++) total += t->fill[g];
    t->out = tl_malloc((size_t)(total ? total : 1) * sizeof *t->out);
    if (!t->out) return tl_error_oom(err);
    for (uint32_t g = 0; g < ng; g++) {
        memcpy(t->out + t->n_out, t->slots + (uint64_t)g * (uint64_t)t->limit,
               t->fill[g] * sizeof *t->out);
        t->n_out += t->fill[g];
    }
    qsort_r(t->out, (size_t)t->n_out, sizeof *t->out, qcmp, (void *)t);
    tl_free(t->slots);
    t->slots = NULL;
    /* renumber the parts: live chunks only (the gather sees no freed one) */
    uint32_t *remap = tl_malloc((size_t)(t->n_chunks + 1) * sizeof *remap);
    t->parts = tl_calloc((size_t)t->n_chunks + 1, sizeof *t->parts);
    if (!remap || !t->parts) {
        tl_free(remap);
        return tl_error_oom(err);
    }
    for (int k = 0; k < t->n_chunks; k++)
        if (t->chunks[k].b) remap[k] = (uint32_t)t->n_live++;
    for (int64_t i = 0; i < t->n_out; i++) {
        uint64_t e = t->out[i];
        t->out[i] = (uint64_t)remap[e >> 32] << 32 | (uint32_t)e;
    }
    tl_free(remap);
    return TL_OK;
}

static TlStatus topn_next(TlOperator *op, TlBatch **out, TlError *err)
{
    TopnOp *t = (TopnOp *)op;
    *out = NULL;
    if (!t->consumed) {
        t->consumed = true;
        TL_TRY(consume(t, err));
    }
    if (t->emitted >= t->n_out) return TL_OK;
    int64_t rows = t->n_out - t->emitted;
    if (rows > tl_batch_rows()) rows = tl_batch_rows();
    int nc = op->schema->n_fields;
    TlStatus st = TL_OK;
    uint32_t *part = tl_malloc((size_t)rows * sizeof *part);
    uint32_t *row = tl_malloc((size_t)rows * sizeof *row);
    TlArray **parts = t->parts;
    TlBatch *b = tl_batch_new(op->schema, nc, rows);
    if (!part || !row || !b) {
        st = tl_error_oom(err);
        goto done;
    }
    for (int64_t i = 0; i < rows; i++) {
        uint64_t e = t->out[t->emitted + i];
        part[i] = (uint32_t)(e >> 32);
        row[i] = (uint32_t)e;
    }
    for (int c = 0; c < nc; c++) {
        int np = 0;
        for (int k = 0; k < t->n_chunks; k++)
            if (t->chunks[k].b) parts[np++] = t->chunks[k].b->cols[c];
        b->cols[c] = tl_array_take_multi(parts, np, part, row, rows);
        if (!b->cols[c]) {
            st = tl_error_oom(err);
            goto done;
        }
    }
    t->emitted += rows;
    *out = b;
    b = NULL;
done:
    if (b) tl_batch_free(b);
    tl_free(part);
    tl_free(row);
    return st;
}

static void topn_free(TlOperator *op)
{
    TopnOp *t = (TopnOp *)op;
    if (!t) return;
    if (t->child) t->child->free(t->child);
    tl_grouper_free(t->grouper);
    tl_free(t->by_types);
    for (int k = 0; k < t->n_chunks; k++) {
        tl_batch_free(t->chunks[k].b);
        tl_k_rows_free(&t->chunks[k].keys);
    }
    tl_free(t->chunks);
    tl_free(t->slots);
    tl_free(t->fill);
    tl_free(t->out);
    tl_free(t->parts);
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
    TlType *types = NULL;
    *out = NULL;
    TopnOp *t = tl_calloc(1, sizeof *t);
    if (!t) {
        child->free(child);
        return tl_error_oom(err);
    }
    t->base.next = topn_next;
    t->base.free = topn_free;
    t->base.schema = child->schema;
    t->base.stats = child->stats;
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
    types = tl_malloc((size_t)n_by * sizeof *types);
    if (!types) {
        st = tl_error_oom(err);
        goto fail;
    }
    for (int k = 0; k < n_by; k++) types[k] = child->schema->fields[by[k]].type;
    st = tl_grouper_new(types, n_by, false, &t->grouper, err);
    if (st != TL_OK) goto fail;
    t->by_types = types;
    *out = &t->base;
    return TL_OK;
fail:
    tl_free(types);
    topn_free(&t->base);
    return st;
}
