/*
 * op_join.c -- hash join: inner, left, right, full, semi, anti, on all cores.
 *
 * The output order is the one man/tally.1 (JOINS) fixes, whichever side is
 * built and whatever --threads: left rows in input order, each followed by
 * its matches in right input order, then (right, full) the right rows no
 * left row matched, in right input order.  Output batches have at most
 * tl_batch_rows() rows; a left row with many matches continues in the next.
 *
 * The table (join_table.c) indexes the build side's keys: every distinct
 * key tuple has a chain of its rows in row order, a probe returns the first
 * row of the chain.  Rows with a null key are never linked (null keys never
 * match).  It is built on the pool and then only read, so probes of many
 * morsels run at once.
 *
 * Building on the right (the default):
 *   1. The right input is read whole.  Each morsel is packed where it is
 *      decoded (tl_join_pack: the scan's stage, or the ring on the pool) into
 *      a block of row-major rows holding only the columns the output takes
 *      from the right ("slots": fixed-width values, 16-byte string views,
 *      then one null bit per slot; kernels/rowpack.h), so a match costs one
 *      or two cache lines to gather instead of one miss per column
 *      (gather_rows).  The blocks in morsel order are the right table;
 *      rows are numbered across them and locate finds a row's block
 *      through a small block index.  One more block holds one all-null
 *      row, row n_r, so a left row without a match takes row n_r
 *      ("null-padded") through the same gather as a match.  The key
 *      columns are kept aside per morsel and concatenated, cast to the
 *      compared types, for the table.
 *   2. The left streams in morsels.  tl_join_probe turns one left batch into
 *      its output batches: probe, walk each row's chain, gather.  When the
 *      left child is a scan (set_stage), tl_join_probe runs as the scan's
 *      stage, on whichever thread decoded the morsel; otherwise the join
 *      pulls the batches itself and runs tl_join_probe on them a few
 *      batches ahead on the pool (the ordered ring, ordered.h: a child's
 *      error comes after the results of the batches before it).  Either
 *      way results come back in morsel order and the consumer only hands
 *      their batches out.
 *   3. Right and full joins: tl_join_probe marks the right rows it matched in
 *      `matched` (relaxed atomic byte stores of 1: the final set is the union,
 *      whatever the order); after the last left morsel the unmatched right
 *      rows are emitted in right order: tl_join_tail gathers those of each
 *      range of tl_batch_rows() right rows, ranges in the ring on the pool.
 *
 * Building on the left (build_left, chosen by the planner when the left
 * input is the smaller file; see physical.c):
 *   1. The left is read whole as one batch and its keys go into the table,
 *      with rep[row] (the first left row of the row's key).
 *   2. The right streams in morsels; tl_join_keep probes each right batch and
 *      packs the rows that match a left key (right, full: every row) into a
 *      block, each with its left key's first row.  As a scan stage or in
 *      the ring, like tl_join_probe.  The consumer appends the kept rows in
 *      morsel order to one chain per left key (rhead/rnext), so each chain
 *      is in right input order -- matches depend only on the key, so every
 *      left row of a key shares one chain.
 *   3. The kept blocks plus a null row then play the part of the right table
 *      above and the left, cut in ranges of tl_batch_rows() rows, that of
 *      the left morsels: tl_join_range (ranges in the ring on the pool)
 *      produces each range's output with the same code as tl_join_probe, and
 *      the consumer hands the ranges out in order.  Right and full joins
 *      then emit the kept rows that matched no left key, in right order.
 *
 * Fusion from above: like a scan, the join takes add_map (filters and
 * projections over its output) and set_stage (a group-by's or sort's
 * per-morsel work).  res_add runs them on each output batch right where it
 * is gathered, inside tl_join_probe or tl_join_range, so the whole pipeline
 * above the join runs on the pool too; the consumer then hands out the maps'
 * batches (next) or the stage's results (next_result) in order.  A join
 * under another join's probe side runs the outer probe in its own tasks
 * the same way.
 *
 * Nothing depends on the thread count: morsels and ranges depend only on
 * the input (output batches are cut at tl_batch_rows() rows within each),
 * results are consumed in their order, the table's chains are in row
 * order, and `matched` is a set.
 *
 * Key types were checked by the planner: equal, or int64 with float64 (both
 * sides are cast to float64 here, so 1 matches 1.0), or an all-null column
 * (`never`: nothing matches).  Semi emits a left row once if it has a
 * match; anti emits it once if it has none (NOT EXISTS: a left null key is
 * emitted).  Right and full joins fill a key column from the right where
 * the left row is missing; the planner gave such a column the common type,
 * so left values are cast to it when they differ.
 */
#include "join_impl.h"

/* ------------------------------------------------ placing errors */

/* Where the rows of a failed ring item come from (place_item): a run
 * over the item's first rows for tl_first_failing_row.  The output of
 * left (or, in the tail, right) rows [0, k) is the first part of their
 * output, so a prefix fails exactly when it holds a row whose output
 * fails. */
typedef struct Rows {
    Join *j;
    int64_t off;        /* W_RANGE, W_TAIL: the item's first row */
} Rows;

/* tl_join_probe over left rows b (consumed), its output dropped. */
static TlStatus probe_run(void *arg, TlBatch *b, TlError *err)
{
    const Rows *a = arg;
    void *r = NULL;
    TlStatus st = tl_join_probe(a->j, b, &r, err);
    tl_join_res_free(a->j, r);
    return st;
}

/* tl_join_range_rows over the range's first b->n_rows left rows (b: just a count). */
static TlStatus range_run(void *arg, TlBatch *b, TlError *err)
{
    const Rows *a = arg;
    void *r = NULL;
    TlStatus st = tl_join_range_rows(a->j, a->off, b->n_rows, &r, err);
    tl_join_res_free(a->j, r);
    tl_batch_free(b);
    return st;
}

/* tl_join_tail_rows over the range's first b->n_rows right rows (b: just a count). */
static TlStatus tail_run(void *arg, TlBatch *b, TlError *err)
{
    const Rows *a = arg;
    void *r = NULL;
    TlStatus st = tl_join_tail_rows(a->j, a->off, a->off + b->n_rows, &r, err);
    tl_join_res_free(a->j, r);
    tl_batch_free(b);
    return st;
}

/* Ring item seq of kind `kind` failed with a data error, err: its message
 * starts with where the first failing row comes from, asked of the side it
 * was made from (TlOperator.origin): the left row of a probe or a range,
 * the right row of the tail (the right table's rows are the right's, in
 * order: build left keeps every right row when there is a tail).
 * The rows of the join's result come from no single line of their own, so
 * the left row's (its streaming side's) stands for them; a right-side value
 * is shown in the message itself.  Caller's thread; the ring's later items
 * may be running (they only read the table, as this does). */
static void place_item(Join *j, int kind, int64_t seq, TlError *err)
{
    char where[TL_ORIGIN_CAP];
    TlError first = {0};
    Rows a = {j, kind == W_PROBE ? 0 : seq * j->cap};
    TlBatch *n = NULL;
    TlOperator *src = kind == W_TAIL ? j->right : j->left;
    int64_t row = -1, at = 0;
    const TlBatch *rows;
    int c;
    TlPlaceVal v = {NULL, NULL, 0, false};
    if (!src) return;
    if (kind == W_PROBE) {
        TlBatch *keep = j->ring_keep[seq % j->ring_depth];
        if (!keep) return;
        row = tl_first_failing_row(probe_run, &a, keep, &first);
        at = j->ring_first[seq % j->ring_depth];
    } else if (kind == W_RANGE || kind == W_TAIL) {
        int64_t total = kind == W_RANGE ? j->lb->n_rows : j->n_r;
        n = tl_batch_new(NULL, 0, total - a.off < j->cap ? total - a.off : j->cap);
        if (n) row = tl_first_failing_row(kind == W_RANGE ? range_run : tail_run, &a, n, &first);
        tl_batch_free(n);
        at = a.off;
    }
    if (row < 0) return;
    v.col = first.col;
    /* a left column's value is the left row's (its batch: the item's, or
     * the whole left) */
    rows = kind == W_PROBE ? j->ring_keep[seq % j->ring_depth] : kind == W_RANGE ? j->lb : NULL;
    c = first.col && rows && rows->schema ? tl_schema_find(rows->schema, first.col) : -1;
    if (c >= 0 && c < rows->n_cols) {
        v.a = rows->cols[c];
        v.row = kind == W_PROBE ? row : at + row;
    }
    tl_origin(src, at + row, v.a ? &v : NULL, where, sizeof where);
    if (where[0]) tl_place_error(err, where, v.placed ? v.col : NULL, &first);
}

/* --------------------------------------------------- stages and the ring */

static TlStatus stage_probe(void *ctx, TlBatch *b, void **result, TlError *err)
{
    return tl_join_probe(ctx, b, result, err);
}

static TlStatus stage_keep(void *ctx, TlBatch *b, void **result, TlError *err)
{
    return tl_join_keep(ctx, b, result, err);
}

static TlStatus stage_pack(void *ctx, TlBatch *b, void **result, TlError *err)
{
    return tl_join_pack(ctx, b, result, err);
}

static void drop_res(void *ctx, void *result)
{
    tl_join_res_free(ctx, result);
}

static void drop_block(void *ctx, void *result)
{
    tl_join_block_free(ctx, result);
}

/* Item seq of the ring (ordered.h): an input batch of the child, or the
 * range of rows seq * cap ... of the left (W_RANGE) or the right (W_TAIL). */
static TlStatus ring_task(void *ctx, int64_t seq, void *in, void **out, TlError *err)
{
    Join *j = ctx;
    switch (j->ring_kind) {
    case W_PROBE: return tl_join_probe(j, in, out, err);
    case W_KEEP: return tl_join_keep(j, in, out, err);
    case W_PACK: return tl_join_pack(j, in, out, err);
    case W_TAIL: return tl_join_tail(j, seq * j->cap, out, err);
    default: return tl_join_range(j, seq * j->cap, out, err);
    }
}

static void ring_drop(void *ctx, void *out)
{
    Join *j = ctx;
    if (j->ring_kind == W_KEEP || j->ring_kind == W_PACK) tl_join_block_free(j, out);
    else tl_join_res_free(j, out);
}

/* End the current source's ring (waits for its work in flight). */
static void ring_end(Join *j)
{
    tl_ordered_free(j->ring);
    j->ring = NULL;
    for (int i = 0; j->ring_keep && i < j->ring_depth; i++) {
        tl_batch_free(j->ring_keep[i]);
        j->ring_keep[i] = NULL;
    }
}

/* Queue the next inputs of kind `kind` (batches of src, or the next
 * ranges) while the ring has room.  A failure of src ends the source; its
 * error is returned once the items before it are taken.  A probe's batch
 * is kept too (and where its rows start among the left's) until its item
 * is taken, for place_item. */
static void ring_fill(Join *j, TlOperator *src, int kind)
{
    while (!j->src_end && tl_ordered_room(j->ring)) {
        int64_t k = tl_ordered_queued(j->ring);
        TlBatch *b = NULL;
        if (kind == W_RANGE || kind == W_TAIL) {
            if (k * j->cap >= (kind == W_RANGE ? j->lb->n_rows : j->n_r)) j->src_end = true;
            else tl_ordered_put(j->ring, NULL);
            continue;
        }
        TlStatus st = src->next(src, &b, &j->src_err);
        if (st != TL_OK || !b) {
            j->src_st = st;
            j->src_end = true;
        } else if (b->n_rows == 0) {
            tl_batch_free(b);
        } else if (kind == W_PROBE && !(j->ring_keep[k % j->ring_depth] = tl_batch_ref(b))) {
            tl_batch_free(b);
            j->src_st = tl_error_oom(&j->src_err);
            j->src_end = true;
        } else {
            if (kind == W_PROBE) {
                j->ring_first[k % j->ring_depth] = j->left_rows;
                j->left_rows += b->n_rows;
            }
            tl_ordered_put(j->ring, b);
        }
    }
}

/* The next result (Res or RBlock by kind) from src's stage, or from the
 * ring: its work runs on the pool, a few inputs ahead, while the caller
 * uses the earlier results; *r NULL at the end. */
static TlStatus pull(Join *j, TlOperator *src, int kind, void **r, TlError *err)
{
    *r = NULL;
    if (j->staged) return src->next_result(src, r, err);
    if (!j->ring) {
        if (!j->ring_keep) {
            int threads = tl_pool_threads();
            j->ring_depth = threads > 1 ? 2 * threads : 1;
            j->ring_keep = tl_calloc((size_t)j->ring_depth, sizeof *j->ring_keep);
            j->ring_first = tl_calloc((size_t)j->ring_depth, sizeof *j->ring_first);
            if (!j->ring_keep || !j->ring_first) return tl_error_oom(err);
        }
        TL_TRY(tl_ordered_new(j->ring_depth, ring_task, ring_drop, j, &j->ring, err));
        j->ring_kind = kind;
        j->src_end = false;
        j->src_st = TL_OK;
    }
    for (;;) {
        ring_fill(j, src, kind);
        if (tl_ordered_count(j->ring) == 0) {
            if (j->src_st == TL_OK) return TL_OK;
            *err = j->src_err;
            return j->src_st;
        }
        int64_t seq = tl_ordered_queued(j->ring) - tl_ordered_count(j->ring);
        TlStatus st = tl_ordered_take(j->ring, r, err);
        if (st == TL_ERR_DATA) place_item(j, kind, seq, err);
        if (kind == W_PROBE) {
            tl_batch_free(j->ring_keep[seq % j->ring_depth]);
            j->ring_keep[seq % j->ring_depth] = NULL;
        }
        TL_TRY(st);
        if (*r) return TL_OK;
    }
}

/* Install a stage on op when it takes one (before its first pull). */
static TlStatus try_stage(Join *j, TlOperator *op, int kind, TlError *err)
{
    TlStage s = {j, kind == W_KEEP ? stage_keep : kind == W_PACK ? stage_pack : stage_probe,
                 kind == W_PROBE ? drop_res : drop_block};
    j->staged = false;
    ring_end(j);
    if (!op->set_stage || !op->next_result) return TL_OK;
    TL_TRY(op->set_stage(op, &s, err));
    j->staged = true;
    return TL_OK;
}

/* ---------------------------------------------------------- building */

/* Append block k (taken over) to the right table's blocks (*cap: room). */
static TlStatus add_block(Join *j, RBlock *k, int *cap, TlError *err)
{
    if (j->n_rp + 1 >= *cap) {
        int nc = *cap ? *cap * 2 : 16;
        RBlock **v = tl_realloc(j->blk, (size_t)nc * sizeof *v);
        if (!v) {
            tl_join_block_free(j, k);
            return tl_error_oom(err);
        }
        j->blk = v;
        *cap = nc;
    }
    j->blk[j->n_rp++] = k;
    j->blk[j->n_rp] = NULL;
    if (j->n_r + k->n >= (int64_t)NONE - 1)
        return tl_error(err, TL_ERR_DATA, "join: the right input has too many "
                        "rows (more than %u)", NONE - 2);
    j->n_r += k->n;
    return TL_OK;
}

/* The right table's blocks j->blk[0..j->n_rp) are in place (room for one
 * more): add the null row's block and index the rows across the blocks
 * (starts, a block index for locate, the string slots' data buffers). */
static TlStatus rtab_index(Join *j, TlError *err)
{
    int np = j->n_rp, ns = j->n_slots;
    int64_t avg, nblk;
    RBlock *z = tl_calloc(1, sizeof *z);
    if (!z) return tl_error_oom(err);
    j->blk[np] = z;
    z->n = 1;
    if (ns > 0) {
        if (!(z->rows = tl_calloc(1, j->rw))) return tl_error_oom(err);
        for (int q = 0; q < ns; q++) z->rows[j->null_off + (size_t)(q >> 3)] |= (uint8_t)(1u << (q & 7));
    }
    j->rstart = tl_malloc((size_t)(np + 2) * sizeof *j->rstart);
    j->brows = tl_malloc((size_t)(np + 1) * sizeof *j->brows);
    j->slot_nulls = tl_calloc((size_t)(ns ? ns : 1), sizeof *j->slot_nulls);
    j->sdata = tl_calloc((size_t)(ns ? ns : 1), sizeof *j->sdata);
    j->sn_data = tl_calloc((size_t)(ns ? ns : 1), sizeof *j->sn_data);
    j->sbase = tl_calloc((size_t)(ns ? ns : 1), sizeof *j->sbase);
    if (!j->rstart || !j->brows || !j->slot_nulls || !j->sdata || !j->sn_data || !j->sbase)
        return tl_error_oom(err);
    j->rstart[0] = 0;
    for (int p = 0; p <= np; p++) {
        j->rstart[p + 1] = j->rstart[p] + j->blk[p]->n;
        j->brows[p] = j->blk[p]->rows;
    }
    j->n_r = j->rstart[np];
    /* per slot: nulls anywhere, every block's data buffers in block order */
    for (int q = 0; q < ns; q++) {
        uint64_t nd = 0;
        for (int p = 0; p < np; p++) {
            j->slot_nulls[q] |= j->blk[p]->nulls[q];
            nd += j->blk[p]->n_data[q];
        }
        if (nd == 0) continue;
        if (nd >= UINT32_MAX)
            return tl_error(err, TL_ERR_DATA, "join: the right input has too many "
                            "string blocks");
        j->sdata[q] = tl_malloc((size_t)nd * sizeof *j->sdata[q]);
        j->sbase[q] = tl_malloc((size_t)(np + 1) * sizeof *j->sbase[q]);
        if (!j->sdata[q] || !j->sbase[q]) return tl_error_oom(err);
        for (int p = 0; p < np; p++) {
            j->sbase[q][p] = j->sn_data[q];
            for (uint32_t d = 0; d < j->blk[p]->n_data[q]; d++)
                j->sdata[q][j->sn_data[q]++] = tl_buf_retain(j->blk[p]->data[q][d]);
        }
        j->sbase[q][np] = 0;
    }
    /* blocks about as long as an average part: a lookup steps over few parts */
    avg = np > 0 ? j->n_r / np : 1;
    j->rshift = 0;
    while (j->rshift < 30 && ((int64_t)2 << j->rshift) <= avg) j->rshift++;
    nblk = (j->n_r >> j->rshift) + 1;
    j->rblk = tl_malloc((size_t)nblk * sizeof *j->rblk);
    if (!j->rblk) return tl_error_oom(err);
    for (int64_t k = 0, p = 0; k < nblk; k++) {
        while (j->rstart[p + 1] <= k << j->rshift) p++;
        j->rblk[k] = (uint32_t)p;
    }
    return TL_OK;
}

/* Read the right input whole and index it.  Each morsel's rows are packed
 * where it is decoded (tl_join_pack, the scan's stage or the ring on the pool):
 * the blocks are the right table; the key columns, kept aside, are
 * concatenated for the table and then dropped. */
static TlStatus build_right(Join *j, TlError *err)
{
    TlArray **rkey = NULL, **parts = NULL;
    TlStatus st = TL_OK;
    int cap = 0;

    if ((st = try_stage(j, j->right, W_PACK, err)) != TL_OK) goto done;
    for (;;) {
        void *r = NULL;
        if ((st = pull(j, j->right, W_PACK, &r, err)) != TL_OK) goto done;
        if (!r) break;
        if ((st = add_block(j, r, &cap, err)) != TL_OK) goto done;
    }
    /* the right's operators are no longer needed (but for naming the rows
     * of the tail in messages: right, full): free them early */
    ring_end(j);
    if (!j->keep_unmatched_right) {
        j->right->free(j->right);
        j->right = NULL;
    }
    j->staged = false;
    if (cap == 0 && !(j->blk = tl_calloc(1, sizeof *j->blk))) {
        st = tl_error_oom(err);
        goto done;
    }
    if ((st = rtab_index(j, err)) != TL_OK) goto done;

    if (j->keep_unmatched_right) {
        j->matched = tl_calloc((size_t)(j->n_r ? j->n_r : 1), 1);
        if (!j->matched) { st = tl_error_oom(err); goto done; }
    }
    if (j->never || j->n_r == 0) goto done;

    rkey = tl_calloc((size_t)j->n_keys, sizeof *rkey);
    parts = tl_malloc((size_t)j->n_rp * sizeof *parts);
    if (!rkey || !parts) { st = tl_error_oom(err); goto done; }
    for (int k = 0; k < j->n_keys; k++) {
        TlArray *s;
        for (int p = 0; p < j->n_rp; p++) parts[p] = j->blk[p]->keys[k];
        if (!(s = tl_array_concat(parts, j->n_rp))) { st = tl_error_oom(err); goto done; }
        /* the morsels' key columns are copied: give them back (and their
         * memory to the system, so the table's build does not add to it) */
        for (int p = 0; p < j->n_rp; p++) {
            tl_array_release(j->blk[p]->keys[k]);
            j->blk[p]->keys[k] = NULL;
        }
        tl_alloc_trim();
        st = tl_join_as_type(s, j->kt[k], &rkey[k], err);
        tl_array_release(s);
        if (st != TL_OK) goto done;
    }
    if ((st = tl_join_table_build(rkey, j->n_keys, j->n_r, false, &j->t, err)) != TL_OK)
        goto done;
    j->nxt = tl_join_table_next(j->t);
done:
    tl_free(parts);
    for (int k = 0; rkey && k < j->n_keys; k++) tl_array_release(rkey[k]);
    tl_free(rkey);
    j->built = st == TL_OK;
    return st;
}

/* Read every batch of op and concatenate each column; *n the row count. */
static TlStatus drain(TlOperator *op, TlArray **cols, int64_t *n, TlError *err)
{
    const TlSchema *s = op->schema;
    TlBatch **bs = NULL;
    TlArray **parts = NULL;
    int n_b = 0, cap_b = 0;
    TlStatus st = TL_OK;
    *n = 0;
    for (;;) {
        TlBatch *b = NULL;
        if ((st = op->next(op, &b, err)) != TL_OK) goto done;
        if (!b) break;
        if (n_b == cap_b) {
            int nc = cap_b ? cap_b * 2 : 16;
            TlBatch **v = tl_realloc(bs, (size_t)nc * sizeof *v);
            if (!v) {
                tl_batch_free(b);
                st = tl_error_oom(err);
                goto done;
            }
            bs = v;
            cap_b = nc;
        }
        bs[n_b++] = b;
        *n += b->n_rows;
        if (*n >= (int64_t)NONE - 1) {
            st = tl_error(err, TL_ERR_DATA, "join: an input has too many rows "
                          "(more than %u)", NONE - 2);
            goto done;
        }
    }
    parts = tl_malloc((size_t)(n_b + 1) * sizeof *parts);
    if (!parts) { st = tl_error_oom(err); goto done; }
    for (int c = 0; c < s->n_fields; c++) {
        for (int i = 0; i < n_b; i++) parts[i] = bs[i]->cols[c];
        cols[c] = n_b == 0 ? tl_array_new_null(s->fields[c].type, 0)
                           : tl_array_concat(parts, n_b);
        if (!cols[c]) { st = tl_error_oom(err); goto done; }
    }
done:
    for (int i = 0; i < n_b; i++) tl_batch_free(bs[i]);
    tl_free(bs);
    tl_free(parts);
    return st;
}

/* build_left: append one morsel's kept rows (k, taken over) to the chains
 * and the blocks. */
static TlStatus keep_append(Join *j, RBlock *k, int *cap_blk, int64_t *cap_kept,
                            uint32_t *rtail, TlError *err)
{
    int64_t base = j->n_r;
    if (base + k->n >= (int64_t)NONE - 1) {
        tl_join_block_free(j, k);
        return tl_error(err, TL_ERR_DATA, "join: the right input has too many "
                        "rows (more than %u)", NONE - 2);
    }
    if (base + k->n > *cap_kept) {
        int64_t nc = *cap_kept ? *cap_kept : 1024;
        while (nc < base + k->n) nc *= 2;
        uint32_t *nx = tl_realloc(j->rnext, (size_t)nc * sizeof *nx);
        if (nx) j->rnext = nx;
        uint8_t *mt = nx ? tl_realloc(j->matched, (size_t)nc) : NULL;
        if (mt) j->matched = mt;
        if (!nx || !mt) {
            tl_join_block_free(j, k);
            return tl_error_oom(err);
        }
        *cap_kept = nc;
    }
    for (int64_t i = 0; i < k->n; i++) {
        uint32_t kr = (uint32_t)(base + i), g = k->lh[i];
        j->rnext[kr] = NONE;
        j->matched[kr] = g != NONE;
        if (g == NONE) continue;
        if (j->rhead[g] == NONE) j->rhead[g] = kr;
        else j->rnext[rtail[g]] = kr;
        rtail[g] = kr;
    }
    tl_free(k->lh);
    k->lh = NULL;
    return add_block(j, k, cap_blk, err);
}

/* build_left: index the left, stream the right keeping its matching rows. */
static TlStatus build_on_left(Join *j, TlError *err)
{
    int64_t nl = 0, cap_kept = 0;
    TlArray **lcols = tl_calloc((size_t)(j->nl ? j->nl : 1), sizeof *lcols);
    TlArray *keys[64];
    int cap_blk = 0, made = 0;
    uint32_t *rtail = NULL;
    TlStatus st = TL_OK;

    if (!lcols) { st = tl_error_oom(err); goto done; }

    /* the left, whole, as one batch */
    /* the left stays (its rows are named in messages: place_item) */
    if ((st = drain(j->left, lcols, &nl, err)) != TL_OK) goto done;
    j->lb = tl_batch_new(j->left_schema, j->nl, nl);
    if (!j->lb) { st = tl_error_oom(err); goto done; }
    for (int c = 0; c < j->nl; c++) {
        j->lb->cols[c] = lcols[c];
        lcols[c] = NULL;
    }
    if (!j->never && nl > 0) {
        for (; made < j->n_keys; made++)
            if ((st = tl_join_as_type(j->lb->cols[j->lk[made]], j->kt[made], &keys[made],
                              err)) != TL_OK)
                break;
        if (st == TL_OK)
            st = tl_join_table_build(keys, j->n_keys, nl, true, &j->t, err);
        for (int k = 0; k < made; k++) tl_array_release(keys[k]);
        if (st != TL_OK) goto done;
    }
    j->rhead = tl_malloc((size_t)(nl ? nl : 1) * sizeof *j->rhead);
    rtail = tl_malloc((size_t)(nl ? nl : 1) * sizeof *rtail);
    if (!j->rhead || !rtail) { st = tl_error_oom(err); goto done; }
    for (int64_t i = 0; i < nl; i++) j->rhead[i] = NONE;

    /* the right, streaming: keep what matches (right, full: everything) */
    if ((st = try_stage(j, j->right, W_KEEP, err)) != TL_OK) goto done;
    for (;;) {
        void *r = NULL;
        if ((st = pull(j, j->right, W_KEEP, &r, err)) != TL_OK) goto done;
        if (!r) break;
        if ((st = keep_append(j, r, &cap_blk, &cap_kept, rtail, err)) != TL_OK)
            goto done;
    }
    ring_end(j);
    if (!j->keep_unmatched_right) { /* else kept for place_item */
        j->right->free(j->right);
        j->right = NULL;
    }
    j->staged = false;

    /* the kept rows' blocks, plus the null row's, are the right table */
    if (cap_blk == 0 && !(j->blk = tl_calloc(1, sizeof *j->blk))) {
        st = tl_error_oom(err);
        goto done;
    }
    if ((st = rtab_index(j, err)) != TL_OK) goto done;
    if (!j->keep_unmatched_right) {
        tl_free(j->matched);
        j->matched = NULL;
    } else if (!j->matched) {
        j->matched = tl_calloc(1, 1);
        if (!j->matched) { st = tl_error_oom(err); goto done; }
    }
    if (!j->rnext && !(j->rnext = tl_malloc(sizeof *j->rnext))) {
        st = tl_error_oom(err);
        goto done;
    }
    j->nxt = j->rnext;
done:
    for (int c = 0; lcols && c < j->nl; c++) tl_array_release(lcols[c]);
    tl_free(lcols);
    tl_free(rtail);
    j->built = st == TL_OK;
    return st;
}

/* The next item (an output batch, or a result of the fused stage); NULL
 * at the end. */
static TlStatus next_item(Join *j, void **item, TlError *err)
{
    *item = NULL;
    if (!j->built) {
        if (j->build_left) {
            TL_TRY(build_on_left(j, err));
        } else {
            TL_TRY(build_right(j, err));
            TL_TRY(try_stage(j, j->left, W_PROBE, err));
        }
    }
    for (;;) {
        if (j->cur && j->cur->i < j->cur->n) {
            *item = j->cur->b[j->cur->i];
            j->cur->b[j->cur->i++] = NULL;
            return TL_OK;
        }
        tl_join_res_free(j, j->cur);
        j->cur = NULL;
        if (!j->probe_done) {
            void *r = NULL;
            if (j->build_left) TL_TRY(pull(j, NULL, W_RANGE, &r, err));
            else TL_TRY(pull(j, j->left, W_PROBE, &r, err));
            if (!r) j->probe_done = true;
            j->cur = r;
            continue;
        }
        /* right, full: the right rows no left row matched, by ranges */
        if (!j->matched) return TL_OK;
        if (!j->tail_started) {
            j->tail_started = true;
            j->staged = false;
            ring_end(j);
        }
        void *r = NULL;
        TL_TRY(pull(j, NULL, W_TAIL, &r, err));
        if (!r) return TL_OK;
        j->cur = r;
    }
}

static TlStatus join_next(TlOperator *op, TlBatch **out, TlError *err)
{
    Join *j = (Join *)op;
    void *item = NULL;
    *out = NULL;
    if (j->has_stage)
        return tl_error(err, TL_ERR_DATA, "internal error: join with a stage "
                        "pulled as batches");
    TL_TRY(next_item(j, &item, err));
    *out = item;
    return TL_OK;
}

static TlStatus join_next_result(TlOperator *op, void **result, TlError *err)
{
    Join *j = (Join *)op;
    *result = NULL;
    if (!j->has_stage)
        return tl_error(err, TL_ERR_DATA, "internal error: next_result without "
                        "a stage");
    return next_item(j, result, err);
}

/* Fuse a map over the join's output batches (see exec.h): it runs in the
 * join's tasks, right after each batch is gathered. */
static TlStatus join_add_map(TlOperator *op, TlMapFn fn, void *ctx,
                             void (*ctx_free)(void *ctx), const TlSchema *schema,
                             TlError *err)
{
    Join *j = (Join *)op;
    Map *m = j->built || j->has_stage
                 ? NULL
                 : tl_realloc(j->maps, (size_t)(j->n_maps + 1) * sizeof *m);
    if (!m) {
        if (ctx_free) ctx_free(ctx);
        if (j->built || j->has_stage)
            return tl_error(err, TL_ERR_DATA, "internal error: map added to a "
                            "running join");
        return tl_error_oom(err);
    }
    j->maps = m;
    m[j->n_maps].fn = fn;
    m[j->n_maps].ctx = ctx;
    m[j->n_maps].ctx_free = ctx_free;
    j->n_maps++;
    op->schema = schema;
    return TL_OK;
}

/* Install the stage of the operator above (see exec.h): its work runs on
 * each output batch in the join's tasks; results come out in order. */
static TlStatus join_set_stage(TlOperator *op, const TlStage *stage, TlError *err)
{
    Join *j = (Join *)op;
    if (j->built || j->has_stage)
        return tl_error(err, TL_ERR_DATA, "internal error: stage set on a "
                        "running join");
    j->stage = *stage;
    j->has_stage = true;
    return TL_OK;
}

/* See exec.h (TlOperator.origin): the join makes its rows; with maps
 * fused its output is no longer its result, and the row is not named. */
static void join_origin(TlOperator *op, int64_t row, TlPlaceVal *v, char *buf, size_t cap)
{
    (void)v;
    buf[0] = '\0';
    if (((Join *)op)->n_maps == 0) tl_origin_made("join", row, buf, cap);
}

static void join_free(TlOperator *op)
{
    Join *j = (Join *)op;
    if (!j) return;
    /* the children first: a scan waits for its running stages, which read
     * the table and mark `matched` */
    if (j->left) j->left->free(j->left);
    if (j->right) j->right->free(j->right);
    ring_end(j); /* its work reads the table too */
    tl_free(j->ring_keep);
    tl_free(j->ring_first);
    tl_join_res_free(j, j->cur);
    for (int m = 0; m < j->n_maps; m++)
        if (j->maps[m].ctx_free) j->maps[m].ctx_free(j->maps[m].ctx);
    tl_free(j->maps);
    for (int p = 0; j->blk && p <= j->n_rp; p++) tl_join_block_free(j, j->blk[p]);
    tl_free(j->blk);
    tl_free(j->brows);
    for (int q = 0; q < j->n_slots; q++) {
        for (uint32_t d = 0; j->sdata && j->sdata[q] && d < j->sn_data[q]; d++)
            tl_buf_release(j->sdata[q][d]);
        if (j->sdata) tl_free(j->sdata[q]);
        if (j->sbase) tl_free(j->sbase[q]);
    }
    tl_free(j->sdata);
    tl_free(j->sn_data);
    tl_free(j->sbase);
    tl_free(j->slot_nulls);
    tl_free(j->slot_col);
    tl_free(j->col_slot);
    tl_free(j->slot_off);
    tl_free(j->rstart);
    tl_free(j->rblk);
    tl_join_table_free(j->t);
    tl_free(j->matched);
    tl_batch_free(j->lb);
    tl_free(j->rhead);
    tl_free(j->rnext);
    tl_free(j->rtype);
    tl_free(j->lk);
    tl_free(j->rk);
    tl_free(j->rcols);
    tl_free(j->kt);
    tl_free(j);
}

static int *copy_ints(const int *v, int n)
{
    int *c = tl_malloc((size_t)(n ? n : 1) * sizeof *c);
    if (c && n) memcpy(c, v, (size_t)n * sizeof *c);
    return c;
}

/* See ops.h. */
TlStatus tl_op_join_new(TlOperator *left, TlOperator *right, int how,
                        const int *lk, const int *rk, int n_keys,
                        const int *rcols, int n_rcols, bool build_left,
                        const TlSchema *schema, TlOperator **out, TlError *err)
{
    Join *j = tl_calloc(1, sizeof *j);
    const TlSchema *ls = left->schema, *rs = right->schema;
    *out = NULL;
    if (!j) {
        left->free(left);
        right->free(right);
        return tl_error_oom(err);
    }
    j->base.next = join_next;
    j->base.free = join_free;
    j->base.origin = join_origin;
    j->base.add_map = join_add_map;
    j->base.set_stage = join_set_stage;
    j->base.next_result = join_next_result;
    j->base.schema = schema;
    j->join_schema = schema;
    j->base.stats = left->stats;
    j->base.ctx = left->ctx;
    j->left = left;
    j->right = right;
    j->how = how;
    j->n_keys = n_keys;
    j->n_rcols = how == TL_JOIN_SEMI || how == TL_JOIN_ANTI ? 0 : n_rcols;
    j->rn = rs->n_fields;
    j->nl = ls->n_fields;
    j->left_schema = ls;
    j->build_left = build_left;
    j->keep_unmatched_right = how == TL_JOIN_RIGHT || how == TL_JOIN_FULL;
    j->keep_unmatched_left = how == TL_JOIN_LEFT || how == TL_JOIN_FULL;
    j->cap = tl_ctx_batch_rows(j->base.ctx);
    j->lk = copy_ints(lk, n_keys);
    j->rk = copy_ints(rk, n_keys);
    j->rcols = copy_ints(rcols, n_rcols);
    j->kt = tl_malloc((size_t)(n_keys ? n_keys : 1) * sizeof *j->kt);
    j->rtype = tl_malloc((size_t)(j->rn ? j->rn : 1) * sizeof *j->rtype);
    j->col_slot = tl_malloc((size_t)(j->rn ? j->rn : 1) * sizeof *j->col_slot);
    j->slot_col = tl_malloc((size_t)(j->rn ? j->rn : 1) * sizeof *j->slot_col);
    j->slot_off = tl_malloc((size_t)(j->rn ? j->rn : 1) * sizeof *j->slot_off);
    if (!j->lk || !j->rk || !j->rcols || !j->kt || !j->rtype || !j->col_slot ||
        !j->slot_col || !j->slot_off) {
        join_free(&j->base);
        return tl_error_oom(err);
    }
    if (n_keys < 1 || n_keys > 64) {
        join_free(&j->base);
        return tl_error(err, TL_ERR_USAGE, n_keys < 1 ? "a join needs key columns"
                                                      : "a join takes at most 64 keys");
    }
    /* the slots of a packed right row: the output's right columns, and the
     * keys when unmatched right rows fill them in; then the null bits */
    for (int c = 0; c < j->rn; c++) {
        j->rtype[c] = rs->fields[c].type;
        j->col_slot[c] = -1;
    }
    for (int k = 0; k < j->n_rcols + n_keys; k++) {
        int c = k < j->n_rcols ? rcols[k] : rk[k - j->n_rcols];
        if (k >= j->n_rcols && !j->keep_unmatched_right) break;
        if (j->col_slot[c] >= 0) continue;
        j->col_slot[c] = j->n_slots;
        j->slot_col[j->n_slots] = c;
        j->slot_off[j->n_slots++] = j->rw;
        j->rw += tl_k_rowpack_width(j->rtype[c]);
    }
    j->null_off = j->rw;
    if (j->n_slots > 0) j->rw += ((size_t)j->n_slots + 7) / 8;
    for (int k = 0; k < n_keys; k++) {
        TlType a = ls->fields[lk[k]].type, b = rs->fields[rk[k]].type;
        if (a == TL_TNULL || b == TL_TNULL) {
            j->never = true;
            j->kt[k] = a == TL_TNULL ? b : a;
        } else if (a != b) {
            j->kt[k] = TL_TFLOAT64; /* int64 with float64, checked by the plan */
        } else {
            j->kt[k] = a;
        }
        if (j->kt[k] == TL_TNULL) j->kt[k] = TL_TINT64;
    }
    *out = &j->base;
    return TL_OK;
}
