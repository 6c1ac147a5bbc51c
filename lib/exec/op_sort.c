/*
 * op_sort.c -- stable sort, and top-k when only the first `limit` rows are
 * wanted.
 *
 * Full sort: every child batch is kept as a chunk with its evaluated key
 * arrays (a key that is a plain column is that column, no copy), and its
 * other data columns packed into rows (pack_chunk, on the pool per morsel
 * when the child is a scan): fixed offsets, 8 bytes a number, 16 a string
 * view (block numbers rebased to the chunk's list of data blocks), 4 a
 * date, 1 a bool, nulls in a separate per-row mask only where a chunk has
 * nulls; the columns are released, so memory stays what they held.  At the
 * end a permutation of global row indexes (chunk after chunk) is sorted and
 * the output is gathered per output batch of tl_batch_rows() rows straight
 * from the chunks (gather_packed): each output row is one random read of
 * one or two cache lines (a tile of rows located and prefetched while the
 * previous tile is copied out) instead of one per column, which made the
 * gather a quarter of a big sort's time.  With several keys the key
 * columns are packed too (the sort reads their encoded rows; the chunk's
 * key references hold the columns until then, and drop_keys trims their
 * pages before the sort's scratch): an output row is then one random read
 * of one page, where three arrays cost three TLB misses a row.  A single
 * key column stays a column, gathered by (chunk, row) pairs
 * (tl_array_take_multi), except a single int64, timestamp, date or
 * float64 key column, which is made in order from the sort's own sorted
 * images (key_from_images; floats only when each image gives its value
 * back bit for bit, so -0.0 and NaN payloads take the gather).  Nothing is
 * concatenated; strings share the chunks' data buffers.  Memory per row: the input once, 4 bytes of
 * permutation, plus the sort's own keys while it runs (see sort_perm).
 * TALLY_SORT_PACK=0 keeps every column (the column gather, for tests);
 * =2 packs only chunks of even length, and a mixed set is unpacked again
 * after the sort (out_prepare), which tests that path.
 *
 * Output pipeline (more than one thread): output batches are gathered
 * ahead by pool tasks, an ordered ring of 2 x threads batches (ordered.h,
 * out_start / out_task), so the gathering runs on the workers while the caller
 * formats and writes earlier batches; before, the writer's thread gathered
 * most columns itself while the worker formatted, and the output phase ran
 * at the pace of that one thread.  The batches are cut exactly as the
 * serial path cuts them.
 *
 * Sorting the permutation: sort_perm.c.  Packing chunks into rows and
 * gathering output rows back into columns: sort_pack.c.  Both share the
 * operator's state through sort_impl.h.
 * The column gather (tl_array_take_multi; top-k, and unpacked chunks)
 * runs one column per task.
 *
 * Morsels: when the child is a scan (set_stage), the sort installs a stage
 * whose work runs on the pool per morsel: it evaluates the keys and, for
 * top-k, keeps only the morsel's own best k rows (a heap over key images
 * for one numeric key without nulls, else over encoded rows; ties to the
 * earlier row), in input order.  The consumer receives these chunks in
 * morsel order and treats them exactly as the batches of the serial path
 * (TALLY_SORT_SERIAL), so the result is the same: a row that is not among
 * the best k of its morsel is not among the best k overall.
 *
 * External sort (ARCHITECTURE.md, "Memory budget and spilling"): a full
 * sort charges each chunk to its reservation (account); when the budget
 * refuses, the chunks held are sorted as above and their output batches
 * written to a spill file as one sorted run (spill_run), and the sort goes
 * on with none held.  A run is cut after a chunk, an input position fixed
 * by the input and the batch size.  At the end the last chunks become the
 * last run and sort_spill.c merges the runs (ties to the earlier run: the
 * same order, the same bytes); sort_next then takes its batches from the
 * merge.  Top-k never charges or spills.
 *
 * Top-k (limit >= 0): a pool of candidate rows, kept small.  Once the pool
 * has held k rows, the encoded key of its k-th best row is the threshold;
 * a new row enters the pool only if its key is strictly smaller (an equal
 * key comes later in the input, so it loses the tie).  When the pool grows
 * past max(2k, 4096) rows it is compacted: sorted, cut to k, threshold
 * renewed; so it never holds more than that plus one input batch.  The
 * compacted rows are stored in sorted order, all before any later row, so
 * a stable sort of "pool, then new rows" is the order by (key, input
 * position), and the result equals a full sort + head.
 */
#include <stdlib.h>

#include "sort_impl.h"

static void free_chunks(SortOp *s)
{
    for (int i = 0; i < s->n_chunks; i++) tl_sort_chunk_free(&s->chunks[i], s->n_data, s->n_keys);
    s->n_chunks = 0;
    s->pool_rows = 0;
}

static TlStatus push_chunk(SortOp *s, Chunk *c, TlError *err)
{
    if (s->n_chunks == s->cap_chunks) {
        int cap = s->cap_chunks ? s->cap_chunks * 2 : 16;
        Chunk *nc = tl_realloc(s->chunks, (size_t)cap * sizeof *nc);
        if (!nc) {
            tl_sort_chunk_free(c, s->n_data, s->n_keys);
            return tl_error_oom(err);
        }
        s->chunks = nc;
        s->cap_chunks = cap;
    }
    s->chunks[s->n_chunks++] = *c;
    s->pool_rows += c->n_rows;
    if (s->limit >= 0 && s->base.stats && s->pool_rows > s->base.stats->sort_pool_peak)
        s->base.stats->sort_pool_peak = s->pool_rows;
    return TL_OK;
}

/* Top-k: sort the pool, keep its best `limit` rows in order as the only
 * chunk, renew the threshold. */
static TlStatus compact(SortOp *s, TlError *err)
{
    Chunk kept;
    TlRows r = {0};
    uint32_t *perm = NULL;
    TlStatus st;
    memset(&kept, 0, sizeof kept);
    if (s->n_chunks == 0) return TL_OK;
    int64_t n = s->pool_rows;
    int64_t k = n < s->limit ? n : s->limit;
    perm = tl_malloc((size_t)(n ? n : 1) * sizeof *perm);
    kept.data = tl_calloc((size_t)s->n_data + 1, sizeof *kept.data);
    kept.keys = tl_calloc((size_t)s->n_keys + 1, sizeof *kept.keys);
    if (!perm || !kept.data || !kept.keys) {
        st = tl_error_oom(err);
        goto done;
    }
    st = tl_sort_perm(s, perm, &r, err);
    if (st != TL_OK) goto done;
    st = tl_sort_gather(s, perm, k, kept.data, kept.keys, true, err);
    if (st != TL_OK) goto done;
    kept.n_rows = k;
    if (k == s->limit && k > 0) {
        size_t len;
        const uint8_t *p = tl_rows_at(&r, perm[k - 1], &len);
        uint8_t *t = tl_realloc(s->thr, len ? len : 1);
        if (!t) {
            st = tl_error_oom(err);
            goto done;
        }
        memcpy(t, p, len);
        s->thr = t;
        s->thr_len = len;
    }
    free_chunks(s);
    st = push_chunk(s, &kept, err);
    memset(&kept, 0, sizeof kept);
done:
    tl_sort_chunk_free(&kept, s->n_data, s->n_keys);
    tl_k_rows_free(&r);
    tl_free(perm);
    return st;
}

/* Rows sel[0..m) of the chunk (keys and data), or every row when m is n. */
static TlStatus chunk_take(const SortOp *s, Chunk *c, const uint32_t *sel, int64_t m,
                           TlError *err)
{
    if (m == c->n_rows) return TL_OK;
    for (int i = 0; i < s->n_data; i++) {
        TlArray *t = tl_array_take(c->data[i], sel, m);
        if (!t) return tl_error_oom(err);
        tl_array_release(c->data[i]);
        c->data[i] = t;
    }
    for (int k = 0; k < s->n_keys; k++) {
        TlArray *t = s->key_col[k] >= 0 ? tl_array_retain(c->data[s->key_col[k]])
                                        : tl_array_take(c->keys[k], sel, m);
        if (!t) return tl_error_oom(err);
        tl_array_release(c->keys[k]);
        c->keys[k] = t;
    }
    c->n_rows = m;
    return TL_OK;
}

/* Order of rows i and j of r: bytes, then position. */
static inline int row_pos_cmp(const TlRows *r, uint32_t i, uint32_t j)
{
    size_t li, lj;
    const uint8_t *pi = tl_rows_at(r, i, &li), *pj = tl_rows_at(r, j, &lj);
    int c = tl_rows_cmp(pi, li, pj, lj);
    return c ? c : (i > j) - (i < j);
}

static int u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* sel[0..k) := the positions of the best k of the n rows of r (by key,
 * then position: the first k rows of a stable sort), ascending.  A max heap
 * of k positions: its root is the worst row kept; a later row enters only
 * with a strictly smaller key. */
static void select_best(const TlRows *r, int64_t n, int64_t k, uint32_t *sel)
{
    for (int64_t i = 0; i < n; i++) {
        uint32_t x = (uint32_t)i;
        if (i < k) { /* sift up */
            int64_t c = i;
            while (c > 0) {
                int64_t p = (c - 1) / 2;
                if (row_pos_cmp(r, sel[p], x) >= 0) break;
                sel[c] = sel[p];
                c = p;
            }
            sel[c] = x;
            continue;
        }
        size_t lx, lt;
        const uint8_t *px = tl_rows_at(r, i, &lx), *pt = tl_rows_at(r, sel[0], &lt);
        if (tl_rows_cmp(px, lx, pt, lt) >= 0) continue;
        int64_t c = 0; /* sift down from the root */
        for (;;) {
            int64_t l = 2 * c + 1, m = c;
            uint32_t big = x;
            if (l < k && row_pos_cmp(r, sel[l], big) > 0) m = l, big = sel[l];
            if (l + 1 < k && row_pos_cmp(r, sel[l + 1], big) > 0) m = l + 1, big = sel[l + 1];
            if (m == c) break;
            sel[c] = sel[m];
            c = m;
        }
        sel[c] = x;
    }
    qsort(sel, (size_t)k, sizeof *sel, u32_cmp);
}

/* select_best for one numeric key without nulls: u[i] is row i's image
 * (inverted when descending), compared with the row position as the
 * tie-break. */
static void select_best_u64(const uint64_t *u, int64_t n, int64_t k, uint32_t *sel)
{
#define GT(a, b) (u[a] > u[b] || (u[a] == u[b] && (a) > (b)))
    for (int64_t i = 0; i < n; i++) {
        uint32_t x = (uint32_t)i;
        if (i < k) {
            int64_t c = i;
            while (c > 0) {
                int64_t p = (c - 1) / 2;
                if (!GT(x, sel[p])) break;
                sel[c] = sel[p];
                c = p;
            }
            sel[c] = x;
            continue;
        }
        if (u[x] >= u[sel[0]]) continue;
        int64_t c = 0;
        for (;;) {
            int64_t l = 2 * c + 1, m = c;
            uint32_t big = x;
            if (l < k && GT(sel[l], big)) m = l, big = sel[l];
            if (l + 1 < k && GT(sel[l + 1], big)) m = l + 1, big = sel[l + 1];
            if (m == c) break;
            sel[c] = sel[m];
            c = m;
        }
        sel[c] = x;
    }
#undef GT
    qsort(sel, (size_t)k, sizeof *sel, u32_cmp);
}

/* Images of one numeric key without nulls (see sort_native), or false
 * when the key is not of that kind. */
static bool key_images(const SortOp *s, const Chunk *c, uint64_t *u)
{
    const TlArray *k = c->keys[0];
    if (s->n_keys != 1 || k->null_count || !tl_sort_native_type(k->type)) return false;
    uint64_t flip = s->desc[0] ? ~0ull : 0;
    int64_t n = k->length;
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
    case TL_TBOOL:
        for (int64_t i = 0; i < n; i++) u[i] = (uint64_t)tl_array_bool(k, i) ^ flip;
        break;
    default: {
        const int64_t *v = tl_array_i64(k);
        for (int64_t i = 0; i < n; i++) u[i] = tl_k_i64_image(v[i]) ^ flip;
        break;
    }
    }
    return true;
}

/* sel[0..limit) := the best `limit` (< n) of the n rows whose evaluated
 * keys c holds, ascending (see select_best). */
static TlStatus best_rows(const SortOp *s, const Chunk *c, int64_t n, uint32_t *sel,
                          TlError *err)
{
    TlRows r = {0};
    TlStatus st = TL_OK;
    uint64_t *u = tl_malloc((size_t)n * sizeof *u);
    if (!u) return tl_error_oom(err);
    if (key_images(s, c, u)) {
        select_best_u64(u, n, s->limit, sel);
    } else {
        st = tl_k_rowenc((const TlArray *const *)c->keys, s->n_keys, n, s->desc,
                         s->nulls_first, &r, err);
        if (st == TL_OK) select_best(&r, n, s->limit, sel);
    }
    tl_k_rows_free(&r);
    tl_free(u);
    return st;
}

/* A chunk of batch b's rows with their evaluated keys; with `best`, only
 * the batch's best `limit` rows (top-k candidates), in input order.
 * Consumes b's columns. */
static TlStatus make_chunk(const SortOp *s, TlBatch *b, bool best, Chunk *c,
                           TlError *err)
{
    uint32_t *sel = NULL;
    TlStatus st = TL_OK;
    int64_t n = b->n_rows;
    memset(c, 0, sizeof *c);
    c->keys = tl_calloc((size_t)s->n_keys + 1, sizeof *c->keys);
    c->data = tl_calloc((size_t)s->n_data + 1, sizeof *c->data);
    if (!c->keys || !c->data) goto oom;
    for (int k = 0; k < s->n_keys; k++) {
        st = tl_eval(s->ea, s->keys[k], b, &c->keys[k], err);
        if (st != TL_OK) goto done;
    }
    for (int i = 0; i < s->n_data; i++) {
        c->data[i] = b->cols[i];
        b->cols[i] = NULL;
    }
    c->n_rows = n;
    if (s->limit < 0) st = tl_sort_pack_chunk(s, c, err);
    if (best && s->limit >= 0 && n > s->limit) {
        sel = tl_malloc((size_t)(s->limit ? s->limit : 1) * sizeof *sel);
        if (!sel) goto oom;
        st = best_rows(s, c, n, sel, err);
        if (st != TL_OK) goto done;
        st = chunk_take(s, c, sel, s->limit, err);
    }
    goto done;
oom:
    st = tl_error_oom(err);
done:
    if (st != TL_OK) tl_sort_chunk_free(c, s->n_data, s->n_keys);
    tl_free(sel);
    return st;
}

/* Put chunk c (taken over) into the pool: all its rows, or (top-k, once
 * there is a threshold) those whose key is strictly below it. */
static TlStatus offer_chunk(SortOp *s, Chunk *c, TlError *err)
{
    TlRows r = {0};
    uint32_t *sel = NULL;
    TlStatus st = TL_OK;
    int64_t n = c->n_rows, m = n;
    if (s->thr && n > 0) {
        st = tl_k_rowenc((const TlArray *const *)c->keys, s->n_keys, n, s->desc,
                         s->nulls_first, &r, err);
        if (st != TL_OK) goto done;
        sel = tl_malloc((size_t)n * sizeof *sel);
        if (!sel) {
            st = tl_error_oom(err);
            goto done;
        }
        m = 0;
        for (int64_t i = 0; i < n; i++) {
            size_t len;
            const uint8_t *p = tl_rows_at(&r, i, &len);
            if (tl_rows_cmp(p, len, s->thr, s->thr_len) < 0) sel[m++] = (uint32_t)i;
        }
        st = chunk_take(s, c, sel, m, err);
        if (st != TL_OK) goto done;
    }
    if (m > 0) {
        st = push_chunk(s, c, err); /* frees c on failure */
        memset(c, 0, sizeof *c);
    }
done:
    tl_sort_chunk_free(c, s->n_data, s->n_keys);
    tl_k_rows_free(&r);
    tl_free(sel);
    return st;
}

/* A stage result: a chunk and the rows its morsel held. */
typedef struct Cand {
    Chunk c;
    int64_t n_in;
} Cand;

static void stage_drop(void *ctx, void *result)
{
    SortOp *s = ctx;
    Cand *cd = result;
    if (!cd) return;
    tl_sort_chunk_free(&cd->c, s->n_data, s->n_keys);
    tl_free(cd);
}

/* The stage's work on a pool thread: evaluate the keys and, for top-k,
 * keep the morsel's own best `limit` rows.  Reads only the operator's
 * read-only fields. */
static TlStatus stage_work(void *ctx, TlBatch *b, void **result, TlError *err)
{
    SortOp *s = ctx;
    *result = NULL;
    Cand *cd = tl_calloc(1, sizeof *cd);
    if (!cd) {
        tl_batch_free(b);
        return tl_error_oom(err);
    }
    cd->n_in = b->n_rows;
    TlStatus st = make_chunk(s, b, true, &cd->c, err);
    tl_batch_free(b);
    if (st != TL_OK) {
        tl_free(cd);
        return st;
    }
    *result = cd;
    return TL_OK;
}

/* The stage's late form (exec.h, TlLate), top-k only: part holds the key
 * columns; the keys are evaluated on every row, the morsel's best `limit`
 * rows chosen as stage_work chooses them, and only those rows fetched with
 * every column; stage_work on them (already at most `limit` rows, in input
 * order) makes the same chunk the plain path makes. */
static TlStatus stage_late(void *ctx, TlBatch *part, TlLate *late, void **result,
                           TlError *err)
{
    SortOp *s = ctx;
    Chunk c;
    uint32_t *sel = NULL;
    TlBatch *b = NULL;
    TlStatus st = TL_OK;
    TlError kerr;
    int64_t n = part->n_rows;
    Cand *cd;
    *result = NULL;
    memset(&c, 0, sizeof c);
    if (s->limit <= 0 || n <= s->limit) {
        tl_batch_free(part);
        TL_TRY(tl_late_fetch(late, NULL, -1, &b, err));
        if (!b) return TL_OK;
        return stage_work(ctx, b, result, err);
    }
    c.keys = tl_calloc((size_t)s->n_keys + 1, sizeof *c.keys);
    sel = tl_malloc((size_t)s->limit * sizeof *sel);
    if (!c.keys || !sel) {
        st = tl_error_oom(err);
        goto done;
    }
    for (int k = 0; k < s->n_keys && st == TL_OK; k++)
        st = tl_eval(s->ea, s->keys[k], part, &c.keys[k], &kerr);
    if (st != TL_OK) {
        /* the plain path would have met a conversion error first */
        TlStatus fst = tl_late_fetch(late, NULL, -1, &b, err);
        if (fst == TL_OK) *err = kerr;
        else st = fst;
        goto done;
    }
    c.n_rows = n;
    st = best_rows(s, &c, n, sel, err);
    if (st == TL_OK) st = tl_late_fetch(late, sel, s->limit, &b, err);
    if (st != TL_OK || !b) goto done;
    st = stage_work(ctx, b, result, err);
    b = NULL;
    cd = *result;
    if (st == TL_OK && cd) cd->n_in = n;
done:
    tl_batch_free(part);
    tl_batch_free(b);
    tl_sort_chunk_free(&c, 0, s->n_keys);
    tl_free(sel);
    return st;
}

/* Count n more input rows (sort indexes are 32-bit). */
static TlStatus count_rows(int64_t *seen, int64_t n, TlError *err)
{
    *seen += n;
    if (*seen > (int64_t)UINT32_MAX)
        return tl_error(err, TL_ERR_DATA, "sort input has more than %u rows",
                        (unsigned)UINT32_MAX);
    return TL_OK;
}

/* The keys of b (consumed) evaluated and dropped: the part of make_chunk
 * that goes row by row, for tl_place_row. */
static TlStatus keys_run(void *arg, TlBatch *b, TlError *err)
{
    const SortOp *s = arg;
    TlStatus st = TL_OK;
    for (int k = 0; st == TL_OK && k < s->n_keys; k++) {
        TlArray *x = NULL;
        st = tl_eval(s->ea, s->keys[k], b, &x, err);
        tl_array_release(x);
    }
    tl_batch_free(b);
    return st;
}

static TlStatus out_prepare(SortOp *s, TlError *err);
static TlStatus out_gather(SortOp *s, int64_t off, int64_t n, TlArray **cols, bool par,
                           TlError *err);

/* Bytes of the buffers of a (each buffer once: seen[0..*n_seen)). */
static uint64_t buf_once(TlBuf *b, TlBuf **seen, int *n_seen, int cap)
{
    if (!b) return 0;
    for (int i = 0; i < *n_seen; i++)
        if (seen[i] == b) return 0;
    if (*n_seen < cap) seen[(*n_seen)++] = b;
    return b->size;
}

/* What chunk c holds in memory: packed rows, masks, columns, the string
 * blocks they point into, and the sort's scratch per row (permutation,
 * images or pointers, their radix copies).  A buffer is counted once
 * among the buffers of the last chunks (seen[0..*n_seen), the caller's):
 * the batches of one morsel share its block of copied text. */
static uint64_t chunk_bytes(const SortOp *s, const Chunk *c, TlBuf **seen, int *n_seen)
{
    uint64_t t = (uint64_t)c->n_rows * 32;
    if (*n_seen > SEEN_BUFS - 2 * (s->n_data + s->n_keys) - (int)c->n_bufs - 1)
        *n_seen = 0; /* the chunks before are another morsel's */
    if (c->rows) t += (uint64_t)c->n_rows * s->pk_row;
    if (c->nulls) t += (uint64_t)c->n_rows * s->pk_mask;
    for (uint32_t i = 0; i < c->n_bufs; i++) t += buf_once(c->bufs[i], seen, n_seen, SEEN_BUFS);
    for (int i = 0; i < s->n_data + s->n_keys; i++) {
        const TlArray *a = i < s->n_data ? (c->data ? c->data[i] : NULL)
                                         : c->keys[i - s->n_data];
        bool dup = false;
        for (int j = 0; a && j < i && !dup; j++)
            dup = (j < s->n_data ? (c->data ? c->data[j] : NULL) : c->keys[j - s->n_data]) == a;
        if (!a || dup) continue;
        t += buf_once(a->values, seen, n_seen, SEEN_BUFS) +
             buf_once(a->validity, seen, n_seen, SEEN_BUFS);
        for (uint32_t k = 0; k < a->n_data; k++)
            t += buf_once(a->data[k], seen, n_seen, SEEN_BUFS);
    }
    return t;
}

/* Sort the chunks held, write them to the spill file as one sorted run
 * (the output batches the in-memory sort would make), and drop them: the
 * external sort's step when the chunks pass the reservation. */
static TlStatus spill_run(SortOp *s, TlError *err)
{
    TlStatus st = TL_OK;
    int64_t n = s->pool_rows, per = tl_ctx_batch_rows(s->base.ctx);
    TlArray **cols = NULL;
    /* Blocks of about 1/32 of the limit (the merge holds one block a run
     * open, at least two runs): a small budget still merges */
    if (s->res.b && n > 0) {
        uint64_t held = 0;
        TlBuf *seen[SEEN_BUFS];
        int n_seen = 0;
        for (int c = 0; c < s->n_chunks; c++)
            held += chunk_bytes(s, &s->chunks[c], seen, &n_seen);
        uint64_t row = held / (uint64_t)n + 1, want = s->res.b->limit / 32 / row;
        if (want < 256) want = 256;
        if ((int64_t)want < per) per = (int64_t)want;
    }
    if (!s->spill)
        TL_TRY(tl_spill_open(s->res.b, TL_TUNING(s->base.ctx)->no_tmpfile, &s->spill, err));
    if (s->n_runs == s->cap_runs) {
        int cap = s->cap_runs ? s->cap_runs * 2 : 16;
        TlSpillSpan *r = tl_realloc(s->runs, (size_t)cap * sizeof *r);
        if (!r) return tl_error_oom(err);
        s->runs = r;
        s->cap_runs = cap;
    }
    TlSpillSpan span = {tl_spill_end(s->spill), 0, n};
    s->perm = tl_malloc((size_t)(n ? n : 1) * sizeof *s->perm);
    cols = tl_calloc((size_t)s->n_data + 1, sizeof *cols);
    if (!s->perm || !cols) st = tl_error_oom(err);
    if (st == TL_OK) st = tl_sort_perm(s, s->perm, NULL, err);
    for (int c = 0; c < s->n_chunks; c++)
        for (int k = 0; k < s->n_keys; k++) {
            tl_array_release(s->chunks[c].keys[k]);
            s->chunks[c].keys[k] = NULL;
        }
    if (st == TL_OK) st = out_prepare(s, err);
    for (int64_t off = 0; st == TL_OK && off < n; off += per) {
        int64_t rows = n - off < per ? n - off : per;
        size_t raw = 0;
        st = out_gather(s, off, rows, cols, true, err);
        if (st == TL_OK) st = tl_spill_put(s->spill, cols, s->n_data, rows, &raw, err);
        for (int i = 0; i < s->n_data; i++) {
            tl_array_release(cols[i]);
            cols[i] = NULL;
        }
        if (raw > s->max_block) s->max_block = raw;
    }
    tl_free(cols);
    free_chunks(s);
    tl_free(s->perm);
    tl_free(s->starts);
    tl_free(s->first);
    tl_free(s->kimg);
    s->perm = NULL;
    s->starts = NULL;
    s->first = NULL;
    s->kimg = NULL;
    s->kimg_on = false;
    tl_reserve_release(&s->res);
    s->n_seen = 0;
    if (!TL_TUNING(s->base.ctx)->force_spill) tl_alloc_trim();
    TL_TRY(st);
    span.end = tl_spill_end(s->spill);
    s->runs[s->n_runs++] = span;
    if (s->res.b) atomic_fetch_add(&s->res.b->sort_runs, 1);
    return TL_OK;
}

/* A full sort took one more chunk: charge it to the reservation, or, when
 * the budget refuses (or forced spilling asks), spill what is held as a
 * run.  The cut falls after a chunk, a position in the input that depends
 * only on the input and the batch size (never on timing or --threads). */
static TlStatus account(SortOp *s, TlError *err)
{
    if (s->limit >= 0 || s->n_chunks == 0) return TL_OK;
    uint64_t bytes = chunk_bytes(s, &s->chunks[s->n_chunks - 1], s->seen, &s->n_seen);
    if (!TL_TUNING(s->base.ctx)->force_spill && tl_reserve_grow(&s->res, bytes)) return TL_OK;
    return spill_run(s, err);
}

/* Rows of b (consumed by the caller) into chunks: the serial path.  With
 * forced spilling, pieces of FORCE_ROWS rows, or an eighth of the rows
 * seen so far when that is more, each its own run: even a small input goes
 * through many runs and the cascaded merge, and a large one through a few
 * dozen runs more per doubling of its rows, not one per FORCE_ROWS. */
enum { FORCE_ROWS = 3 };
static TlStatus take_batch(SortOp *s, TlBatch *b, int64_t *seen, TlError *err)
{
    bool force = s->limit < 0 && TL_TUNING(s->base.ctx)->force_spill;
    for (int64_t off = 0, step; off < b->n_rows; off += step) {
        step = !force ? b->n_rows : *seen / 8 > FORCE_ROWS ? *seen / 8 : FORCE_ROWS;
        int64_t m = b->n_rows - off < step ? b->n_rows - off : step;
        TlBatch *p = b;
        TlStatus st = TL_OK;
        Chunk c;
        if (m < b->n_rows) {
            if (!(p = tl_batch_new(b->schema, b->n_cols, m))) return tl_error_oom(err);
            for (int i = 0; i < b->n_cols; i++)
                if (!(p->cols[i] = tl_array_slice(b->cols[i], off, m))) st = tl_error_oom(err);
        }
        if (st == TL_OK) st = count_rows(seen, m, err);
        if (st == TL_OK) st = make_chunk(s, p, false, &c, err);
        if (st == TL_ERR_DATA) tl_place_row(keys_run, s, p, s->child, *seen - m, err);
        if (st == TL_OK) st = offer_chunk(s, &c, err);
        if (st == TL_OK) st = account(s, err);
        if (p != b) tl_batch_free(p);
        TL_TRY(st);
    }
    return TL_OK;
}

/* Pull the whole input and prepare the chunks + perm.  A scan child runs
 * the stage (keys, top-k candidates) per morsel on the pool; the chunks
 * then arrive here in morsel order, as batches would. */
static TlStatus consume(SortOp *s, TlError *err)
{
    int64_t seen = 0;
    bool staged = false;
    /* forced spilling cuts batches into pieces: the serial path */
    if (s->child->set_stage && s->child->next_result &&
        !TL_TUNING(s->base.ctx)->sort_serial &&
        !(s->limit < 0 && TL_TUNING(s->base.ctx)->force_spill)) {
        TlStage stage = {s, stage_work, stage_drop};
        TL_TRY(s->child->set_stage(s->child, &stage, err));
        staged = true;
        if (s->limit > 0 && s->child->set_late_stage && s->n_data > 0) {
            bool *need = tl_calloc((size_t)s->n_data, sizeof *need);
            TlStatus st;
            if (!need) return tl_error_oom(err);
            for (int k = 0; k < s->n_keys; k++)
                tl_expr_mark_cols(s->ea, s->keys[k], need, s->n_data);
            st = s->child->set_late_stage(s->child, stage_late, need, s->limit, err);
            tl_free(need);
            TL_TRY(st);
        }
    }
    for (;;) {
        TlStatus st = TL_OK;
        if (staged) {
            void *r = NULL;
            TL_TRY(s->child->next_result(s->child, &r, err));
            if (!r) break;
            Cand *cd = r;
            st = count_rows(&seen, cd->n_in, err);
            if (st == TL_OK) {
                st = offer_chunk(s, &cd->c, err);
                memset(&cd->c, 0, sizeof cd->c);
            }
            if (st == TL_OK) st = account(s, err);
            stage_drop(s, cd);
        } else {
            TlBatch *b = NULL;
            TL_TRY(s->child->next(s->child, &b, err));
            if (!b) break;
            st = take_batch(s, b, &seen, err);
            tl_batch_free(b);
        }
        TL_TRY(st);
        if (s->limit >= 0 && s->pool_rows / 2 >= s->limit &&
            s->pool_rows >= 4096)
            TL_TRY(compact(s, err));
    }
    if (s->base.stats) s->base.stats->rows_sorted += seen;
    if (s->limit >= 0) {
        TL_TRY(compact(s, err)); /* one sorted chunk of <= limit rows */
        s->n_out = s->pool_rows;
        return TL_OK;
    }
    if (s->n_runs > 0) { /* external: the rest is the last run, then merge */
        if (s->n_chunks > 0) TL_TRY(spill_run(s, err));
        return tl_sort_merge_start(s, err);
    }
    if (s->n_chunks == 0) return TL_OK;
    /* Packing freed every chunk's columns: give the free pages they left
     * inside the heaps back before the sort's scratch comes on top. */
    tl_alloc_trim();
    int64_t n = s->pool_rows;
    s->perm = tl_malloc((size_t)(n ? n : 1) * sizeof *s->perm);
    if (!s->perm) return tl_error_oom(err);
    TL_TRY(tl_sort_perm(s, s->perm, NULL, err));
    /* The keys are not needed any more, only the data columns. */
    for (int c = 0; c < s->n_chunks; c++)
        for (int k = 0; k < s->n_keys; k++) {
            tl_array_release(s->chunks[c].keys[k]);
            s->chunks[c].keys[k] = NULL;
        }
    s->n_out = n;
    return TL_OK;
}

/* Chunk c of a mixed output (some chunks packed, some not) back into
 * columns (a pool task). */
static void unpack_task(void *arg, int64_t ci)
{
    SortOp *s = arg;
    Chunk *c = &s->chunks[ci];
    TlError e;
    uint32_t *g;
    if (!c->rows) return;
    g = tl_malloc((size_t)(c->n_rows ? c->n_rows : 1) * sizeof *g);
    if (!g) return; /* rows stay: out_prepare sees it */
    for (int64_t r = 0; r < c->n_rows; r++) g[r] = (uint32_t)(s->starts[ci] + r);
    if (tl_sort_gather_packed(s, g, c->n_rows, (int)ci, (int)ci + 1, false, c->data, &e) == TL_OK) {
        tl_free(c->rows_mem);
        c->rows_mem = NULL;
        tl_free(c->nulls);
        tl_free(c->info);
        for (uint32_t k = 0; k < c->n_bufs; k++) tl_buf_release(c->bufs[k]);
        tl_free(c->bufs);
        c->rows = c->nulls = c->info = NULL;
        c->bufs = NULL;
        c->n_bufs = 0;
    }
    tl_free(g);
}

/* After the sort: the chunk lookup of the packed gather, or, when only
 * some chunks are packed, those chunks back into columns (the column
 * gather then serves all). */
static TlStatus out_prepare(SortOp *s, TlError *err)
{
    int nc = s->n_chunks, packed = 0;
    if (!s->perm || nc == 0) return TL_OK;
    for (int c = 0; c < nc; c++) packed += s->chunks[c].rows != NULL;
    if (packed == 0) {
        tl_free(s->kimg);
        s->kimg = NULL;
        return TL_OK;
    }
    int64_t total = s->pool_rows;
    size_t n_blocks = (size_t)(total >> LOC_SHIFT) + 2;
    s->starts = tl_malloc(((size_t)nc + 1) * sizeof *s->starts);
    s->first = tl_malloc(n_blocks * sizeof *s->first);
    if (!s->starts || !s->first) return tl_error_oom(err);
    s->starts[0] = 0;
    for (int c = 0; c < nc; c++) s->starts[c + 1] = s->starts[c] + s->chunks[c].n_rows;
    for (size_t b = 0, c = 0; b < n_blocks; b++) {
        int64_t x = (int64_t)b << LOC_SHIFT;
        while ((int)c + 1 < nc && s->starts[c + 1] <= x) c++;
        s->first[b] = (int)c;
    }
    if (packed == nc) {
        if (s->kimg) { /* the key column comes from the images */
            int kc = s->key_col[0];
            for (int c = 0; c < nc; c++) {
                tl_array_release(s->chunks[c].data[kc]);
                s->chunks[c].data[kc] = NULL;
            }
            s->kimg_on = true;
        }
        return TL_OK;
    }
    tl_free(s->kimg);
    s->kimg = NULL;
    TL_TRY(tl_pool_for(nc, unpack_task, s, err));
    for (int c = 0; c < nc; c++)
        if (s->chunks[c].rows) return tl_error_oom(err);
    return TL_OK;
}

/* The key column (single numeric key) at output rows [off, off + n) from
 * the sorted images: values in order, nulls before or after them, as
 * put_nulls placed them.  Only when every image gives its value back bit
 * for bit (sort_native checked).  NULL on OOM. */
static TlArray *key_from_images(const SortOp *s, int64_t off, int64_t n)
{
    TlType t = s->kimg_type;
    /* values at output rows [v0, v1) are kimg[p - v0]; the batch's values
     * are rows [a, b) */
    int64_t v0 = s->nulls_first[0] ? s->kimg_nn : 0, v1 = v0 + s->kimg_m;
    int64_t a = off > v0 ? off : v0, b = off + n < v1 ? off + n : v1;
    uint64_t flip = s->desc[0] ? ~0ull : 0, sign = 1ull << 63;
    if (b < a) b = a;
    const uint64_t *img = s->kimg + (a - v0); /* img[i]: output row a + i */
    int64_t k = b - a, j0 = a - off;          /* at batch row j0 + i */
    TlBuf *vals = tl_buf_new((t == TL_TDATE ? 4 : 8) * (size_t)(n ? n : 1), true);
    TlBuf *valid = NULL;
    if (!vals) return NULL;
    if (b - a < n) {
        if (!(valid = tl_buf_new(tl_bitmap_bytes(n), true))) {
            tl_buf_release(vals);
            return NULL;
        }
        for (int64_t j = a - off; j < b - off; j++) tl_bit_set(valid->data, j);
    }
    if (t == TL_TFLOAT64) {
        double *d = (double *)vals->data + j0;
        for (int64_t i = 0; i < k; i++) d[i] = tl_k_f64_from_image(img[i] ^ flip);
    } else if (t == TL_TDATE) {
        int32_t *d = (int32_t *)vals->data + j0;
        for (int64_t i = 0; i < k; i++) d[i] = (int32_t)(int64_t)(img[i] ^ flip ^ sign);
    } else {
        int64_t *d = (int64_t *)vals->data + j0;
        for (int64_t i = 0; i < k; i++) d[i] = (int64_t)(img[i] ^ flip ^ sign);
    }
    return tl_array_new(t, n, vals, valid, n - (b - a), NULL, 0);
}

/* Output rows perm[off, off + n) of every data column into cols[]: from
 * the packed rows, or by the column gather (with par, a column per task). */
static TlStatus out_gather(SortOp *s, int64_t off, int64_t n, TlArray **cols, bool par,
                           TlError *err)
{
    if (s->n_chunks > 0 && s->chunks[0].rows) {
        TL_TRY(tl_sort_gather_packed(s, s->perm + off, n, 0, s->n_chunks, true, cols, err));
        if (s->kimg_on && !(cols[s->key_col[0]] = key_from_images(s, off, n)))
            return tl_error_oom(err);
        return TL_OK;
    }
    return tl_sort_gather(s, s->perm + off, n, cols, NULL, par, err);
}

/* Output batch seq on the pool (ordered.h): perm rows [seq * batch,
 * ...) of every data column, gathered on this thread. */
static TlStatus out_task(void *ctx, int64_t seq, void *in, void **out, TlError *err)
{
    SortOp *s = ctx;
    int64_t per = tl_ctx_batch_rows(s->base.ctx), off = seq * per;
    int64_t rows = s->n_out - off < per ? s->n_out - off : per;
    TlBatch *b = tl_batch_new(s->base.schema, s->n_data, rows);
    if (!b) return tl_error_oom(err);
    TlStatus st = out_gather(s, off, rows, b->cols, false, err);
    if (st != TL_OK) {
        tl_batch_free(b);
        return st;
    }
    *out = b;
    return TL_OK;
}

static void out_drop(void *ctx, void *out)
{
    tl_batch_free(out);
}

/* Start the output batches' ring (full sort with more than one thread):
 * each batch gathered by a pool task, so the gathering of later batches
 * runs on the workers while the caller writes earlier ones.  Batch
 * boundaries are those of the serial path. */
static TlStatus out_start(SortOp *s, TlError *err)
{
    int threads = tl_pool_threads();
    if (threads <= 1 || !s->perm || s->n_out <= tl_ctx_batch_rows(s->base.ctx)) return TL_OK;
    return tl_ordered_new(threads * 2 > 16 ? 16 : threads * 2, out_task, out_drop, s,
                          &s->ring, err);
}

static TlStatus sort_next(TlOperator *op, TlBatch **out, TlError *err)
{
    SortOp *s = (SortOp *)op;
    *out = NULL;
    if (!s->consumed) {
        s->consumed = true;
        if (s->limit == 0) return TL_OK;
        TL_TRY(consume(s, err));
        TL_TRY(out_prepare(s, err));
        TL_TRY(out_start(s, err));
    }
    if (s->merge) {
        TL_TRY(tl_sort_merge_next(s, out, err));
        if (!*out) { /* done: the spill file's space goes back now */
            tl_sort_merge_free(s);
            tl_spill_close(s->spill);
            s->spill = NULL;
            tl_reserve_release(&s->res);
        }
        return TL_OK;
    }
    if (s->emitted >= s->n_out) {
        tl_ordered_free(s->ring);
        s->ring = NULL;
        free_chunks(s); /* done: drop the input early */
        return TL_OK;
    }
    int64_t rows = s->n_out - s->emitted, per = tl_ctx_batch_rows(s->base.ctx);
    if (rows > per) rows = per;
    if (s->ring) {
        void *r = NULL;
        TL_TRY(tl_ordered_next(s->ring, (s->n_out + per - 1) / per,
                               &r, err));
        s->emitted += rows;
        *out = r;
        return TL_OK;
    }
    TlBatch *b = tl_batch_new(op->schema, s->n_data, rows);
    if (!b) return tl_error_oom(err);
    if (s->perm) {
        TlStatus st = out_gather(s, s->emitted, rows, b->cols, true, err);
        if (st != TL_OK) {
            tl_batch_free(b);
            return st;
        }
    } else { /* top-k: the one chunk is in order */
        for (int c = 0; c < s->n_data; c++) {
            b->cols[c] = tl_array_slice(s->chunks[0].data[c], s->emitted, rows);
            if (!b->cols[c]) {
                tl_batch_free(b);
                return tl_error_oom(err);
            }
        }
    }
    s->emitted += rows;
    *out = b;
    return TL_OK;
}

/* See exec.h (TlOperator.origin): the sort's rows are named by their
 * place in its result. */
static void sort_origin(TlOperator *op, int64_t row, TlPlaceVal *v, char *buf, size_t cap)
{
    (void)v;
    tl_origin_made("sort", row, buf, cap);
}

static void sort_free(TlOperator *op)
{
    SortOp *s = (SortOp *)op;
    if (!s) return;
    tl_ordered_free(s->ring); /* first: its tasks read the chunks and perm */
    if (s->child) s->child->free(s->child);
    free_chunks(s);
    tl_sort_merge_free(s);
    tl_spill_close(s->spill);
    tl_free(s->runs);
    tl_reserve_release(&s->res);
    tl_free(s->chunks);
    tl_free(s->perm);
    tl_free(s->pk_off);
    tl_free(s->kimg);
    tl_free(s->starts);
    tl_free(s->first);
    tl_free(s->thr);
    tl_free(s->keys);
    tl_free(s->key_col);
    tl_free(s->desc);
    tl_free(s->nulls_first);
    tl_free(s);
}

/* Create the sort / top-k operator (see exec.h).  Takes ownership of child,
 * also on failure.  desc / nulls_first may be NULL (all false). */
TlStatus tl_op_sort_new(TlOperator *child, const TlExprArena *ea,
                        const TlExprId *keys, const bool *desc,
                        const bool *nulls_first, int n_keys, int64_t limit,
                        TlOperator **out, TlError *err)
{
    *out = NULL;
    SortOp *s = tl_calloc(1, sizeof *s);
    if (!s) {
        child->free(child);
        return tl_error_oom(err);
    }
    s->base.next = sort_next;
    s->base.free = sort_free;
    s->base.origin = sort_origin;
    s->base.schema = child->schema;
    s->base.stats = child->stats;
    s->base.ctx = child->ctx;
    s->res.b = child->ctx ? child->ctx->budget : NULL;
    s->child = child;
    s->ea = ea;
    s->n_keys = n_keys;
    s->n_data = child->schema->n_fields;
    s->limit = limit < 0 ? -1 : limit;
    s->keys = tl_malloc(((size_t)n_keys + 1) * sizeof *s->keys);
    s->key_col = tl_malloc(((size_t)n_keys + 1) * sizeof *s->key_col);
    s->desc = tl_calloc((size_t)n_keys + 1, sizeof *s->desc);
    s->nulls_first = tl_calloc((size_t)n_keys + 1, sizeof *s->nulls_first);
    if (!s->keys || !s->key_col || !s->desc || !s->nulls_first) {
        sort_free(&s->base);
        return tl_error_oom(err);
    }
    for (int k = 0; k < n_keys; k++) {
        s->keys[k] = keys[k];
        const TlExpr *e = tl_ea_node(ea, keys[k]);
        s->key_col[k] = e->kind == TL_X_COL && e->col >= 0 && e->col < s->n_data
                            ? e->col : -1;
        s->desc[k] = desc ? desc[k] : false;
        s->nulls_first[k] = nulls_first ? nulls_first[k] : false;
    }
    /* packed rows: a full sort's data columns, each at a fixed offset;
     * key columns stay columns (-1) */
    s->pack = TL_TUNING(s->base.ctx)->sort_pack;
    s->pk_off = tl_malloc(((size_t)s->n_data + 1) * sizeof *s->pk_off);
    if (!s->pk_off) {
        sort_free(&s->base);
        return tl_error_oom(err);
    }
    /* A single key column stays a column: the native and string sorts
     * read it, and the output makes it from the sorted images (kimg).
     * Several keys are packed like the other columns: the sort reads
     * their encoded rows, and the output then reads each row from one
     * place, one page (a gather from three arrays was three TLB misses a
     * row, the bulk of a big sort's output time).  The chunk's key
     * references hold the columns until the rows are encoded. */
    for (int i = 0; i < s->n_data; i++) s->pk_off[i] = 0;
    for (int k = 0; k < n_keys && n_keys == 1; k++)
        if (s->key_col[k] >= 0) s->pk_off[s->key_col[k]] = -1;
    for (int k = 0; k < n_keys && n_keys > 1 && s->pack != 0; k++)
        if (s->key_col[k] >= 0) s->keys_packed = true;
    for (int i = 0; i < s->n_data; i++) {
        if (s->pk_off[i] < 0) continue;
        s->pk_off[i] = (int)s->pk_row;
        s->pk_row += tl_k_rowpack_width(child->schema->fields[i].type);
    }
    s->pk_row = (s->pk_row + 7) / 8 * 8;
    s->pk_mask = ((size_t)s->n_data + 7) / 8;
    *out = &s->base;
    return TL_OK;
}
