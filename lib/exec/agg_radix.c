/*
 * agg_radix.c -- the group-by's radix-partitioned staged path (op_agg.c's
 * top comment draws it): morsels split their rows by key hash into
 * TL_RADIX_P partitions on the pool (the split of radix.h, which top-N per
 * group shares), each partition groups and aggregates its rows in morsel
 * order on a task of its own, and the output interleaves
 * the partitions' groups back into first-appearance order.  Nothing here
 * changes the result: the same groups, states and order as the serial
 * path for any --threads.
 */
#include <stdio.h>
#include <stdlib.h>

#include "agg_impl.h"

/* A morsel on its way to the partitions: its key and argument arrays, and
 * its row numbers grouped by partition (ascending within each). */
typedef struct RItem {
    int64_t n;
    TlArray **karr;           /* n_keys */
    TlArray **args;           /* n_args, NULL entries allowed */
    uint32_t *rows;           /* rows, or (pre) local groups */
    uint64_t *hash;           /* their key hashes, in the same order */
    uint32_t off[TL_RADIX_P + 1];
    /* pre-aggregated (few keys): the morsel's local groups instead */
    bool pre;
    uint32_t n_local;
    TlArray **lkeys;          /* n_keys: the local groups' key values */
    TlAgg **partial;          /* n_aggs: their partial states */
    uint32_t *first_row;      /* per local group: its first row */
} RItem;

static void ritem_free(AggOp *a, RItem *it)
{
    if (!it) return;
    if (it->karr)
        for (int k = 0; k < a->n_keys; k++) tl_array_release(it->karr[k]);
    if (it->lkeys)
        for (int k = 0; k < a->n_keys; k++) tl_array_release(it->lkeys[k]);
    if (it->args)
        for (int d = 0; d < a->n_args; d++) tl_array_release(it->args[d]);
    if (it->partial)
        for (int j = 0; j < a->n_aggs; j++) tl_agg_free(it->partial[j]);
    tl_free(it->karr);
    tl_free(it->lkeys);
    tl_free(it->args);
    tl_free(it->partial);
    tl_free(it->first_row);
    tl_free(it->rows);
    tl_free(it->hash);
    tl_free(it);
}

/* Replace each of arrs[0..n_arrs) (NULL entries skipped) by its rows
 * rows[0..n): the partitions' rows become contiguous, gathered here in one
 * go while the column is in cache (the partition tasks take slices). */
static TlStatus radix_gather(TlArray **arrs, int n_arrs, const uint32_t *rows,
                             int64_t n, TlError *err)
{
    for (int k = 0; k < n_arrs; k++) {
        if (!arrs[k]) continue;
        TlArray *g = tl_array_take(arrs[k], rows, n);
        if (!g) return tl_error_oom(err);
        tl_array_release(arrs[k]);
        arrs[k] = g;
    }
    return TL_OK;
}

/* Rows of the sample that decides whether a morsel is pre-aggregated: it
 * is when the sample has at most half as many groups as rows. */
#define PRE_SAMPLE 2048

/* Try to pre-aggregate the morsel (see radix_work): *done false when its
 * sample has too many groups (nothing changed then). */
static TlStatus radix_pre(AggOp *a, RItem *it, const TlBatch *b, bool *done,
                          TlError *err)
{
    int64_t n = it->n, s = n < PRE_SAMPLE ? n : PRE_SAMPLE;
    TlStatus st = TL_OK;
    TlGrouper *lg = NULL;
    TlArray **sl = NULL;
    uint32_t *lids = NULL;
    uint64_t *h = NULL;
    *done = false;
    sl = tl_calloc((size_t)a->n_keys + 1, sizeof *sl);
    lids = tl_malloc(((size_t)n + 1) * sizeof *lids);
    if (!sl || !lids) {
        st = tl_error_oom(err);
        goto done;
    }
    st = tl_grouper_new(a->base.ctx, a->kt, a->n_keys, true, &lg, err);
    /* the sample in two steps: once its first half and one rows hold more
     * than half the sample's rows in groups, the answer is known (q10's
     * near-unique keys stop there); then the rest of the sample, then the
     * rest of the morsel */
    int64_t half = s / 2 + 1 < s ? s / 2 + 1 : s;
    int64_t cut[4] = {0, half, s, n};
    for (int part = 0; part < 3 && st == TL_OK; part++) {
        int64_t off = cut[part], len = cut[part + 1] - cut[part];
        if (len == 0) continue;
        for (int k = 0; k < a->n_keys; k++) {
            tl_array_release(sl[k]);
            sl[k] = tl_array_slice(it->karr[k], off, len);
            if (!sl[k]) st = tl_error_oom(err);
        }
        if (st == TL_OK)
            st = tl_grouper_map(lg, (const TlArray *const *)sl, len, lids + off, err);
        if (st == TL_OK && part < 2 && a->pre_mode == 0 &&
            (int64_t)tl_grouper_count(lg) * 2 > s)
            goto done; /* many groups: rows go to the partitions */
    }
    if (st != TL_OK) goto done;
    uint32_t nl = it->n_local = tl_grouper_count(lg);
    it->partial = tl_calloc((size_t)a->n_aggs + 1, sizeof *it->partial);
    it->lkeys = tl_calloc((size_t)a->n_keys + 1, sizeof *it->lkeys);
    it->first_row = tl_malloc(((size_t)nl + 1) * sizeof *it->first_row);
    h = tl_malloc(((size_t)nl + 1) * sizeof *h);
    tl_free(it->hash);
    it->hash = tl_malloc(((size_t)nl + 1) * sizeof *it->hash);
    if (!it->partial || !it->lkeys || !it->first_row || !h || !it->hash) {
        st = tl_error_oom(err);
        goto done;
    }
    for (int j = 0; j < a->n_aggs && st == TL_OK; j++) {
        st = tl_agg_new(&a->specs[j], &it->partial[j], err);
        if (st == TL_OK)
            st = tl_agg_update(it->partial[j], lids, n, nl,
                               a->xi[j] >= 0 ? it->args[a->xi[j]] : NULL,
                               a->yi[j] >= 0 ? it->args[a->yi[j]] : NULL, err);
    }
    if (st == TL_OK) st = tl_grouper_keys(lg, 0, nl, it->lkeys, err);
    if (st != TL_OK) goto done;
    uint32_t next = 0;
    for (int64_t i = 0; i < n && next < nl; i++)
        if (lids[i] == next) it->first_row[next++] = (uint32_t)i;
    tl_grouper_hash(a->kt, a->n_keys, (const TlArray *const *)it->lkeys, nl, h);
    tl_radix_split(h, nl, it->rows, it->hash, it->off);
    st = radix_gather(it->lkeys, a->n_keys, it->rows, nl, err);
    if (st != TL_OK) goto done;
    for (int k = 0; k < a->n_keys; k++) tl_array_release(it->karr[k]);
    for (int d = 0; d < a->n_args; d++) tl_array_release(it->args[d]);
    memset(it->karr, 0, (size_t)a->n_keys * sizeof *it->karr);
    memset(it->args, 0, (size_t)a->n_args * sizeof *it->args);
    it->pre = true;
    *done = true;
done:
    (void)b;
    if (sl)
        for (int k = 0; k < a->n_keys; k++) tl_array_release(sl[k]);
    tl_free(sl);
    tl_free(lids);
    tl_free(h);
    tl_grouper_free(lg);
    return st;
}

/* Free a morsel's partition item (ctx the AggOp): the partition queue's
 * drop callback, and the stage's for items never consumed. */
void tl_agg_radix_drop(void *ctx, void *item)
{
    ritem_free(ctx, item);
}

/* The radix stage's work, on any thread: evaluate keys and arguments, hash
 * each row's keys (equal keys by the grouper's rules hash equal), and sort
 * the row numbers by partition (the hash's top bits), stably. */
TlStatus tl_agg_radix_work(AggOp *a, TlBatch *b, void **result, TlError *err)
{
    int64_t n = b->n_rows;
    TlStatus st = TL_OK;
    uint64_t *h = NULL;
    RItem *it = tl_calloc(1, sizeof *it);
    *result = NULL;
    if (!it) {
        st = tl_error_oom(err);
        goto done;
    }
    it->n = n;
    it->karr = tl_calloc((size_t)a->n_keys + 1, sizeof *it->karr);
    it->args = tl_calloc((size_t)a->n_args + 1, sizeof *it->args);
    it->rows = tl_malloc(((size_t)n + 1) * sizeof *it->rows);
    it->hash = tl_malloc(((size_t)n + 1) * sizeof *it->hash);
    h = tl_malloc(((size_t)n + 1) * sizeof *h);
    if (!it->karr || !it->args || !it->rows || !it->hash || !h) {
        st = tl_error_oom(err);
        goto done;
    }
    for (int k = 0; k < a->n_keys; k++) {
        st = tl_eval(a->ea, a->keys[k], b, &it->karr[k], err);
        if (st != TL_OK) goto done;
    }
    for (int d = 0; d < a->n_args; d++) {
        st = tl_eval(a->ea, a->arg_ids[d], b, &it->args[d], err);
        if (st != TL_OK) goto done;
    }
    if (a->pre_ok) {
        bool pre = false;
        st = radix_pre(a, it, b, &pre, err);
        if (st != TL_OK || pre) goto done;
    }
    tl_grouper_hash(a->kt, a->n_keys, (const TlArray *const *)it->karr, n, h);
    tl_radix_split(h, n, it->rows, it->hash, it->off);
    st = radix_gather(it->karr, a->n_keys, it->rows, n, err);
    if (st == TL_OK) st = radix_gather(it->args, a->n_args, it->rows, n, err);
done:
    tl_free(h);
    tl_batch_free(b);
    if (st != TL_OK) {
        ritem_free(a, it);
        return st;
    }
    *result = it;
    return TL_OK;
}

/* Create partition rp's grouper and states, at its first rows (a small
 * input touches few partitions and sets up nothing for the others). */
static TlStatus radix_part_init(AggOp *a, RPart *rp, TlError *err)
{
    if (!rp->states) rp->states = tl_calloc((size_t)a->n_aggs + 1, sizeof *rp->states);
    if (!rp->states) return tl_error_oom(err);
    for (int j = 0; j < a->n_aggs; j++)
        if (!rp->states[j]) TL_TRY(tl_agg_new(&a->specs[j], &rp->states[j], err));
    return tl_grouper_new(a->base.ctx, a->kt, a->n_keys, true, &rp->g, err);
}

/* Partition p's part of morsel seq (partq: in morsel order per partition,
 * partitions in parallel): its rows' keys gathered and mapped in the
 * partition's grouper (a new group records its first row), then every
 * aggregate updated with the gathered arguments, rows in input order. */
static TlStatus radix_part(void *ctx, void *item, int64_t seq, int p, TlError *err)
{
    AggOp *a = ctx;
    RItem *it = item;
    RPart *rp = &a->parts[p];
    int64_t cnt = it->off[p + 1] - it->off[p];
    const uint32_t *rows = it->rows + it->off[p];
    TlStatus st = TL_OK;
    TlArray *sk[16] = {0}, **sub = sk, *sa[16] = {0}, **subarg = sa;
    if (rp->mcount_cap <= seq) {
        int64_t c = rp->mcount_cap ? 2 * rp->mcount_cap : 64;
        if (c <= seq) c = seq + 1;
        uint32_t *m = tl_realloc(rp->mcount, (size_t)c * sizeof *m);
        if (!m) return tl_error_oom(err);
        rp->mcount = m;
        rp->mcount_cap = c;
    }
    rp->mcount[seq] = rp->g ? tl_grouper_count(rp->g) : 0; /* updated below */
    if (cnt == 0) return TL_OK;
    if (!rp->g) TL_TRY(radix_part_init(a, rp, err));
    if (a->n_keys > 16) sub = tl_calloc((size_t)a->n_keys, sizeof *sub);
    if (a->n_args > 16) subarg = tl_calloc((size_t)a->n_args, sizeof *subarg);
    if (!sub || !subarg) {
        st = tl_error_oom(err);
        goto done;
    }
    if (rp->ids_cap < cnt) {
        uint32_t *ids = tl_realloc(rp->ids, (size_t)cnt * sizeof *ids);
        if (!ids) {
            st = tl_error_oom(err);
            goto done;
        }
        rp->ids = ids;
        rp->ids_cap = cnt;
    }
    for (int k = 0; k < a->n_keys; k++) {
        sub[k] = tl_array_slice(it->pre ? it->lkeys[k] : it->karr[k],
                                it->off[p], cnt);
        if (!sub[k]) {
            st = tl_error_oom(err);
            goto done;
        }
    }
    uint32_t before = tl_grouper_count(rp->g);
    st = tl_grouper_map_hashed(rp->g, (const TlArray *const *)sub, cnt,
                               it->hash + it->off[p], rp->ids, err);
    if (st != TL_OK) goto done;
    uint32_t after = tl_grouper_count(rp->g);
    if (after > before) {
        if (rp->first_cap < after) {
            int64_t c = rp->first_cap * 2 > after ? rp->first_cap * 2 : after;
            uint32_t *f = tl_realloc(rp->first, (size_t)c * sizeof *f);
            if (!f) {
                st = tl_error_oom(err);
                goto done;
            }
            rp->first = f;
            rp->first_cap = c;
        }
        /* new ids appear in increasing order, each first at its first row */
        uint32_t next = before;
        for (int64_t i = 0; i < cnt && next < after; i++)
            if (rp->ids[i] == next)
                rp->first[next++] = it->pre ? it->first_row[rows[i]] : rows[i];
        rp->mcount[seq] = after;
    }
    if (it->pre) {
        for (int j = 0; j < a->n_aggs && st == TL_OK; j++)
            st = tl_agg_merge_some(rp->states[j], it->partial[j], rows, rp->ids,
                                   (uint32_t)cnt, after, err);
        goto done;
    }
    for (int d = 0; d < a->n_args; d++) {
        if (!it->args[d]) continue;
        subarg[d] = tl_array_slice(it->args[d], it->off[p], cnt);
        if (!subarg[d]) {
            st = tl_error_oom(err);
            goto done;
        }
    }
    for (int j = 0; j < a->n_aggs && st == TL_OK; j++)
        st = tl_agg_update(rp->states[j], rp->ids, cnt, after,
                           a->xi[j] >= 0 ? subarg[a->xi[j]] : NULL,
                           a->yi[j] >= 0 ? subarg[a->yi[j]] : NULL, err);
done:
    if (sub)
        for (int k = 0; k < a->n_keys; k++) tl_array_release(sub[k]);
    if (subarg)
        for (int d = 0; d < a->n_args; d++) tl_array_release(subarg[d]);
    if (sub != sk) tl_free(sub);
    if (subarg != sa) tl_free(subarg);
    return st;
}

/* Set up the radix state: the partitions (their groupers and states are
 * made at their first rows, radix_part_init; the queues at the second
 * morsel, radix_consume), the distinct arguments. */
TlStatus tl_agg_radix_init(AggOp *a, TlError *err)
{
    a->parts = tl_calloc(TL_RADIX_P, sizeof *a->parts);
    a->arg_ids = tl_calloc(2 * (size_t)a->n_aggs + 1, sizeof *a->arg_ids);
    a->xi = tl_calloc((size_t)a->n_aggs + 1, sizeof *a->xi);
    a->yi = tl_calloc((size_t)a->n_aggs + 1, sizeof *a->yi);
    if (!a->parts || !a->arg_ids || !a->xi || !a->yi) return tl_error_oom(err);
    for (int j = 0; j < a->n_aggs; j++) {
        TlExprId ids[2] = {a->x_ids[j], a->y_ids[j]};
        int *slot[2] = {&a->xi[j], &a->yi[j]};
        for (int t = 0; t < 2; t++) {
            *slot[t] = -1;
            if (ids[t] == TL_NO_ID) continue;
            int d = 0;
            while (d < a->n_args && a->arg_ids[d] != ids[t]) d++;
            if (d == a->n_args) a->arg_ids[a->n_args++] = ids[t];
            *slot[t] = d;
        }
    }
    int pre = TL_TUNING(a->base.ctx)->agg_pre;
    a->pre_ok = pre != 0;
    a->pre_mode = pre == 1;
    for (int j = 0; j < a->n_aggs; j++)
        if (!tl_agg_merge_some_ok(a->specs[j].op)) a->pre_ok = false;
    return TL_OK;
}

/* Free the radix state: queues, partitions, the first morsel's item. */
void tl_agg_radix_free(AggOp *a)
{
    tl_partq_free(a->pq); /* first: waits for running partition work */
    a->pq = NULL;
    ritem_free(a, a->first_item);
    a->first_item = NULL;
    if (a->parts)
        for (int p = 0; p < TL_RADIX_P; p++) {
            RPart *rp = &a->parts[p];
            tl_grouper_free(rp->g);
            if (rp->states)
                for (int j = 0; j < a->n_aggs; j++) tl_agg_free(rp->states[j]);
            tl_free(rp->states);
            tl_free(rp->first);
            tl_free(rp->mcount);
            tl_free(rp->ids);
            tl_free(rp->seal_err);
        }
    tl_free(a->parts);
    a->parts = NULL;
    tl_free(a->arg_ids);
    tl_free(a->xi);
    tl_free(a->yi);
    tl_free(a->mrows);
    tl_free(a->order);
    tl_free(a->snap);
}

/* Seal partition i (tl_pool_for, or inline): end its grouper's input,
 * seal every aggregate up to the first that fails (rp->bad, its status and
 * error; the consumer picks the error).  A partition that never had rows
 * has no groups. */
static void radix_seal_task(void *arg, int64_t i)
{
    AggOp *a = arg;
    RPart *rp = &a->parts[i];
    TlArray *none[64] = {0}, **tmp = none;
    TlError e;
    TlStatus st = TL_OK;
    rp->bad = -2;
    rp->n = rp->g ? tl_grouper_count(rp->g) : 0;
    if (!rp->g) return;
    e.msg[0] = '\0';
    if (a->n_keys > 64) tmp = tl_calloc((size_t)a->n_keys, sizeof *tmp);
    if (!tmp) {
        st = tl_error_oom(&e);
    } else {
        st = tl_grouper_keys(rp->g, 0, 0, tmp, &e);
        for (int k = 0; k < a->n_keys; k++) tl_array_release(tmp[k]);
        if (tmp != none) tl_free(tmp);
    }
    if (st != TL_OK) rp->bad = -1;
    for (int j = 0; j < a->n_aggs && st == TL_OK; j++) {
        e.msg[0] = '\0';
        st = tl_agg_seal(rp->states[j], rp->n, &e);
        if (st != TL_OK) rp->bad = j;
    }
    if (st == TL_OK) return;
    rp->seal_st = st;
    rp->seal_err = tl_malloc(sizeof *rp->seal_err);
    if (rp->seal_err) {
        *rp->seal_err = e;
    } else {
        rp->seal_st = TL_ERR_OOM; /* reported as out of memory */
        if (rp->bad >= 0) rp->bad = -1;
    }
}

/* Group g's first appearance in partition rp: morsel << 32 | row. */
static uint64_t first_key(const AggOp *a, const RPart *rp, uint32_t g)
{
    int64_t lo = 0, hi = a->n_morsels - 1; /* first m with mcount[m] > g */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (rp->mcount[mid] > g) hi = mid;
        else lo = mid + 1;
    }
    return (uint64_t)lo << 32 | rp->first[g];
}

/* What the order tasks share (radix_order). */
typedef struct OrderCtx {
    AggOp *a;
    int64_t *pos;             /* per morsel: its first output position */
    int64_t per, n_out;
    uint32_t *cnt;            /* per output batch: TL_RADIX_P group counts */
    TlStatus *st;             /* per morsel: out of memory or not */
} OrderCtx;

/* Morsel m's part of the order: the groups that first appeared in it
 * (partition p's ids [mcount[m-1], mcount[m])) marked at their rows and
 * read back in row order, into a->order from the morsel's first output
 * position.  Morsels are independent: tl_pool_for. */
static void order_task(void *arg, int64_t m)
{
    OrderCtx *o = arg;
    AggOp *a = o->a;
    int64_t pos = o->pos[m], fresh = o->pos[m + 1] - pos;
    o->st[m] = TL_OK;
    if (fresh == 0) return;
    uint8_t *mark = tl_calloc((size_t)a->mrows[m] + 1, 1);
    if (!mark) {
        o->st[m] = TL_ERR_OOM;
        return;
    }
    for (int p = 0; p < TL_RADIX_P; p++) {
        const RPart *rp = &a->parts[p];
        if (!rp->mcount) continue;
        uint32_t g = m > 0 ? rp->mcount[m - 1] : 0;
        for (; g < rp->mcount[m]; g++) mark[rp->first[g]] = (uint8_t)(p + 1);
    }
    int64_t end = pos + fresh;
    for (int64_t r = 0; pos < end && r < a->mrows[m]; r++)
        if (mark[r]) a->order[pos++] = (uint8_t)(mark[r] - 1);
    if (pos != end) o->st[m] = TL_ERR_DATA;
    tl_free(mark);
}

/* Output batch b's groups per partition (snapshots are their sums). */
static void count_task(void *arg, int64_t b)
{
    OrderCtx *o = arg;
    const AggOp *a = o->a;
    uint32_t *c = o->cnt + b * TL_RADIX_P;
    int64_t i = b * o->per, e = i + o->per < a->n_groups ? i + o->per : a->n_groups;
    memset(c, 0, TL_RADIX_P * sizeof *c);
    for (; i < e; i++) c[a->order[i]]++;
}

/* Output order: the partitions' groups merged by first appearance.  Per
 * morsel, the groups that first appeared in it are marked at their rows
 * and read back in row order, morsels in parallel (each knows its first
 * output position from the partitions' group counts before it); cursors of
 * every partition are kept at each output batch start (a->snap), counted
 * per batch in parallel and summed. */
static TlStatus radix_order(AggOp *a, TlError *err)
{
    int64_t per = tl_ctx_batch_rows(a->base.ctx), n = 0;
    TlStatus st = TL_OK;
    for (int p = 0; p < TL_RADIX_P; p++) n += a->parts[p].n;
    int64_t n_out = (n + per - 1) / per, nm = a->n_morsels;
    OrderCtx o = {.a = a, .per = per, .n_out = n_out};
    a->n_groups = n;
    a->order = tl_malloc((size_t)n + 1);
    a->snap = tl_calloc((size_t)(n_out + 1) * TL_RADIX_P, sizeof *a->snap);
    o.pos = tl_malloc(((size_t)nm + 1) * sizeof *o.pos);
    o.st = tl_calloc((size_t)nm + 1, sizeof *o.st);
    o.cnt = tl_calloc((size_t)(n_out + 1) * TL_RADIX_P, sizeof *o.cnt);
    if (!a->order || !a->snap || !o.pos || !o.st || !o.cnt) {
        st = tl_error_oom(err);
        goto done;
    }
    o.pos[0] = 0;
    for (int64_t m = 0; m < nm; m++) {
        int64_t c = 0;
        for (int p = 0; p < TL_RADIX_P; p++)
            if (a->parts[p].mcount) c += a->parts[p].mcount[m];
        o.pos[m + 1] = c;
    }
    if (o.pos[nm] != n) {
        st = tl_error(err, TL_ERR_USAGE, "internal: radix order lost groups");
        goto done;
    }
    st = nm > 1 ? tl_pool_for(nm, order_task, &o, err) : TL_OK;
    if (nm == 1) order_task(&o, 0);
    for (int64_t m = 0; st == TL_OK && m < nm; m++)
        if (o.st[m] == TL_ERR_OOM) st = tl_error_oom(err);
        else if (o.st[m] != TL_OK)
            st = tl_error(err, TL_ERR_USAGE, "internal: radix order lost groups");
    if (st != TL_OK) goto done;
    if (n_out > 1) st = tl_pool_for(n_out, count_task, &o, err);
    else if (n_out == 1) count_task(&o, 0);
    if (st != TL_OK) goto done;
    for (int64_t b = 1; b <= n_out; b++)
        for (int p = 0; p < TL_RADIX_P; p++)
            a->snap[b * TL_RADIX_P + p] = a->snap[(b - 1) * TL_RADIX_P + p] +
                                       o.cnt[(b - 1) * TL_RADIX_P + p];
    for (int p = 0; p < TL_RADIX_P; p++) {
        tl_free(a->parts[p].first);
        tl_free(a->parts[p].mcount);
        a->parts[p].first = a->parts[p].mcount = NULL;
        a->parts[p].first_cap = a->parts[p].mcount_cap = 0;
    }
done:
    tl_free(o.pos);
    tl_free(o.st);
    tl_free(o.cnt);
    return st;
}

/* Pull every morsel through the partition queues, then seal the
 * partitions in parallel and merge their orders.  A sum overflow names the
 * group the serial path would name: the first aggregate that fails, and
 * within it the group that appeared first. */
TlStatus tl_agg_radix_consume(AggOp *a, TlError *err)
{
    TlStatus st = TL_OK;
    for (int64_t m = 0;; m++) {
        void *r = NULL;
        TL_TRY(a->child->next_result(a->child, &r, err));
        if (!r) break;
        if (a->n_morsels == a->mrows_cap) {
            int64_t c = a->mrows_cap ? 2 * a->mrows_cap : 64;
            int64_t *mr = tl_realloc(a->mrows, (size_t)c * sizeof *mr);
            if (!mr) {
                ritem_free(a, r);
                return tl_error_oom(err);
            }
            a->mrows = mr;
            a->mrows_cap = c;
        }
        a->mrows[a->n_morsels++] = ((RItem *)r)->n;
        a->rows_seen += ((RItem *)r)->n;
        if (m == 0) {
            /* the first morsel waits for the second: a one-morsel input
             * runs its partitions inline, with no queues and no pool */
            a->first_item = r;
            continue;
        }
        if (!a->pq) {
            st = tl_partq_new(TL_RADIX_P, radix_part, tl_agg_radix_drop, a, 0, &a->pq, err);
            if (st == TL_OK) st = tl_partq_push(a->pq, a->first_item, err);
            a->first_item = NULL;
            if (st != TL_OK) {
                ritem_free(a, r);
                return st;
            }
        }
        TL_TRY(tl_partq_push(a->pq, r, err));
        if (tl_partq_failed(a->pq)) break;
    }
    if (a->pq) {
        TL_TRY(tl_partq_finish(a->pq, err));
        TL_TRY(tl_pool_for(TL_RADIX_P, radix_seal_task, a, err));
    } else {
        RItem *it = a->first_item;
        a->first_item = NULL;
        for (int p = 0; it && p < TL_RADIX_P && st == TL_OK; p++)
            st = radix_part(a, it, 0, p, err);
        ritem_free(a, it);
        TL_TRY(st);
        for (int p = 0; p < TL_RADIX_P; p++) radix_seal_task(a, p);
    }
    for (int p = 0; p < TL_RADIX_P; p++)
        if (a->parts[p].bad == -1) {
            if (!a->parts[p].seal_err) return tl_error_oom(err);
            *err = *a->parts[p].seal_err;
            return a->parts[p].seal_st;
        }
    int j = -1; /* the first aggregate that failed anywhere */
    for (int p = 0; p < TL_RADIX_P; p++)
        if (a->parts[p].bad >= 0 && (j < 0 || a->parts[p].bad < j)) j = a->parts[p].bad;
    if (j >= 0) {
        int bad = -1;
        for (int p = 0; p < TL_RADIX_P; p++) {
            RPart *rp = &a->parts[p];
            if (rp->bad != j) continue;
            if (rp->seal_st != TL_ERR_DATA || rp->seal_err->msg[0] != '\0') {
                *err = *rp->seal_err;
                return rp->seal_st;
            }
            if (bad < 0 ||
                first_key(a, rp, tl_agg_bad_group(rp->states[j])) <
                    first_key(a, &a->parts[bad],
                              tl_agg_bad_group(a->parts[bad].states[j])))
                bad = p;
        }
        const TlExpr *e = tl_ea_node(a->ea, a->aggs[j]);
        const TlOpInfo *oi = tl_op_info((TlOp)e->op);
        char where[1024];
        tl_agg_group_text_in(a, a->parts[bad].g, tl_agg_bad_group(a->parts[bad].states[j]),
                      where, sizeof where);
        return tl_error_at(err, TL_ERR_DATA, a->ea, e->src, e->start, e->len,
                           "%s overflows int64%s", oi ? oi->name : "sum", where);
    }
    TL_TRY(radix_order(a, err));
    if (a->base.stats) a->base.stats->groups += a->n_groups;
    return TL_OK;
}

/* The output batch of output positions [first, first+rows) (first a
 * multiple of tl_batch_rows()): row i is group gid[i] of partition pv[i]
 * (each partition's groups in id order from its cursor a->snap).  Keys
 * are decoded straight into their output positions
 * (tl_grouper_keys_multi); each aggregate's results come per partition, a
 * contiguous range of groups, and are interleaved (tl_array_take_multi).
 * Reads only. */
TlStatus tl_agg_radix_batch(AggOp *a, int64_t first, int64_t rows, TlBatch *b,
                            TlError *err)
{
    int64_t per = tl_ctx_batch_rows(a->base.ctx);
    const uint32_t *s = a->snap + (first / per) * TL_RADIX_P;
    uint32_t c[TL_RADIX_P] = {0}, slot[TL_RADIX_P], at[TL_RADIX_P];
    int np = 0;
    TlStatus st = TL_OK;
    TlGrouper *gs[TL_RADIX_P];
    const uint8_t *pv = a->order + first;
    for (int64_t i = 0; i < rows; i++) c[pv[i]]++;
    for (int p = 0; p < TL_RADIX_P; p++) {
        slot[p] = c[p] ? (uint32_t)np++ : UINT32_MAX;
        gs[p] = a->parts[p].g;
        at[p] = s[p];
    }
    /* pieces[j * np + slot]: the partitions' pieces of aggregate j */
    TlArray **pieces = tl_calloc((size_t)a->n_aggs * (size_t)(np ? np : 1) + 1,
                                 sizeof *pieces);
    uint32_t *part = tl_malloc(((size_t)rows + 1) * sizeof *part);
    uint32_t *gid = tl_malloc(((size_t)rows + 1) * sizeof *gid);
    uint32_t *row = tl_malloc(((size_t)rows + 1) * sizeof *row);
    if (!pieces || !part || !gid || !row) {
        st = tl_error_oom(err);
        goto done;
    }
    for (int64_t i = 0; i < rows; i++) {
        uint8_t p = pv[i];
        part[i] = slot[p];
        row[i] = at[p] - s[p];
        gid[i] = at[p]++;
    }
    st = tl_grouper_keys_multi(gs, TL_RADIX_P, pv, gid, rows, b->cols, err);
    for (int p = 0; p < TL_RADIX_P && st == TL_OK; p++) {
        if (!c[p]) continue;
        RPart *rp = &a->parts[p];
        for (int j = 0; j < a->n_aggs && st == TL_OK; j++)
            st = tl_agg_results(rp->states[j], s[p], c[p],
                                &pieces[(size_t)j * np + slot[p]], err);
    }
    if (st != TL_OK) goto done;
    for (int j = 0; j < a->n_aggs; j++) {
        TlArray **pc = pieces + (size_t)j * np;
        int col = a->n_keys + j;
        b->cols[col] = np == 1 ? tl_array_retain(pc[0])
                               : tl_array_take_multi(pc, np, part, row, rows);
        if (!b->cols[col]) {
            st = tl_error_oom(err);
            goto done;
        }
    }
done:
    if (pieces)
        for (int64_t i = 0; i < (int64_t)a->n_aggs * np; i++) tl_array_release(pieces[i]);
    tl_free(pieces);
    tl_free(part);
    tl_free(gid);
    tl_free(row);
    return st;
}

