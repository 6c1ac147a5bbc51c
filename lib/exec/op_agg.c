/*
 * op_agg.c -- the hash aggregate: group-by keys plus aggregate calls.
 *
 * A pipeline breaker in two stages per input batch:
 *
 *   child batch --tl_eval--> key arrays --grouper--> ids[row] (dense u32)
 *               --tl_eval--> argument arrays --tl_agg_update(ids)--> states
 *
 * Stage one (lib/group) numbers groups in order of first appearance; stage
 * two lets every aggregate update its states in one typed pass per batch.
 * Argument arrays are evaluated once per batch per distinct expression id
 * (mean(v1) and sum(v1) share one evaluation).  With no keys every row is
 * group 0 and there is exactly one group, even on empty input (count 0,
 * sum null, ...).
 *
 * When the child is exhausted the aggregates are sealed (a sum that does
 * not fit int64 fails here, before any output, naming the group's keys).  Each output batch then
 * covers the next tl_batch_rows() group ids: the grouper hands back their
 * key values (the first row's of each group) and every aggregate their
 * results, keys first, then aggregates in order; the whole result never
 * exists at once.  Output batches are built up to two per thread ahead on
 * the pool (an ordered ring of build tasks, ordered.h, that runs ahead while
 * the consumer takes the batches in order, so no batch waits for a round of
 * others; after the grouper's first keys call, keys and results of a range
 * of groups only read the states).  Nothing depends on hash table order.
 *
 * Sorted or clustered input (after a sort on the keys, or data written in
 * key order) is grouped by runs: one pass compares each row's keys with the
 * previous row's (typed, per key column), and only the first row of each
 * run goes to the grouper; the run's rows all get its id.  A key that comes
 * back after its run ended simply finds its group again, so this is exact on
 * any input; it is used while it pays (runs at most a quarter of the rows)
 * and switched off for good after two batches where it does not.
 *
 * When the input is known to be clustered on the keys (--sorted, or a sort
 * on the keys right below) runs are used on every batch, so only run heads
 * ever reach the grouper.  Under --sorted the claim is checked at no extra
 * pass: each run head must either open a new group (the next id) or
 * continue the previous run's group (a run split at a batch boundary, or
 * nulls with different hidden values); any other id is a key that came back
 * after its run ended, a data error naming the key and the 1-based row.
 *
 * On all cores (morsel parallelism, exec.h).  When the child offers
 * set_stage (a scan, or a join probing on the pool) and the input is not
 * declared clustered, the first next() installs a stage, and most of the
 * work runs on the pool.  With keys, the state is radix-partitioned (as
 * DuckDB and Polars do; the split is radix.h's, shared with top-N per
 * group): TL_RADIX_P partitions, each with its own grouper, its own
 * aggregate states and, per group, its first appearance (the row in its
 * morsel; the morsel follows from the partition's group count after each
 * morsel, kept too).  A key's partition is the top bits of its row hash
 * (tl_grouper_hash: keys equal by the grouper's rules hash equal), so
 * every group lives in exactly one partition, and the same hash goes with
 * the row to its partition's grouper (tl_grouper_map_hashed: the int and
 * row groupers do not hash the keys again):
 *
 *   stage work (any thread, per morsel)   partition p's task (lib/exec/partq:
 *   keys, args <- tl_eval                 in morsel order per partition,
 *   row hashes -> partition per row       partitions in parallel)
 *   rows sorted by partition (stable),    ids <- tl_grouper_map(p's slice of
 *   keys and args gathered in that          the keys); a new group records
 *   order (one gather while the column      its first row
 *   is in cache; tasks take slices)       tl_agg_update(p's states, ids,
 *                                           p's slice of the arguments)
 *
 * The consumer only pushes each morsel result, in morsel order, into the
 * partition queues (partq.h), which bound the results in flight.  Small
 * inputs pay for none of this: a partition makes its grouper and states
 * at its first rows, the queues are made when a second morsel arrives,
 * and a one-morsel input runs its partitions and their sealing inline on
 * the consumer (same calls in the same order, so the same bytes; no pool
 * thread is started for a 10-row file).  Rows
 * reach every group's state in input order, so every result is exactly
 * the serial path's (float sums and moments are exact in any order).
 *
 * A morsel with few groups is pre-aggregated instead (q1's 100 groups:
 * merging 100 local groups costs far less than routing 40K rows):
 * the work maps a sample of PRE_SAMPLE rows into a local grouper and, when
 * the sample has at most half as many groups as rows, maps the rest too,
 * updates partial states with the local ids, takes the local groups' key
 * values (their first rows') and splits the local groups by the same
 * hash; partition p maps its local groups' keys and folds their partials
 * in with tl_agg_merge_some (first appearance: each local group's first
 * row).  Float sums, means and second moments come from exact sums
 * (kernels/xsum.h), which merge exactly: the same bits as the serial
 * path, whichever morsels pre-aggregate.
 * Median, quantile and count_distinct keep values per row, so queries with
 * them never pre-aggregate.  TALLY_AGG_PRE=0 never pre-aggregates, =1
 * always does where the aggregates allow (tests), TALLY_AGG_RADIX=0 keeps
 * the older staged path below (A/B).
 *
 * After the last morsel the partitions are sealed in parallel (each ends
 * its grouper's input and seals its states; a sum overflow names, of the
 * first aggregate that overflows, the group that appeared first, as the
 * serial path does).  Each partition's groups are in increasing first
 * appearance, so the output order is their merge: per morsel, the groups
 * that first appeared in it are marked at their rows and read back in row
 * order (a->order: output position -> partition; a->snap: every
 * partition's cursor at each output batch start).  An output batch takes
 * from each partition a contiguous range of groups: the keys are decoded
 * straight into their output positions (tl_grouper_keys_multi: the row
 * grouper decodes each output row's stored key from its partition, no
 * per-partition columns to interleave), the results come per partition
 * (tl_agg_results) and are interleaved with tl_array_take_multi; the
 * builds run ahead on the pool (they only read).
 *
 * Without keys, or with TALLY_AGG_RADIX=0, the stage is the older one:
 *
 *   stage work (any thread)               consumer (agg next, in morsel order)
 *   keys, args <- tl_eval                 map <- tl_grouper_merge(global, local):
 *   local ids <- a fresh local grouper           one probe per local group
 *   partial states <- tl_agg_update       tl_agg_merge(partial, map)
 *                     (local ids)         or tl_agg_update(map[local id], args)
 *   tl_grouper_seal_local (encoded
 *   rows and hashes or key columns)
 *
 * Local ids number the batch's groups in first appearance, so looking the
 * local groups up in order gives new global groups the ids row-by-row
 * grouping would give; merging in morsel order keeps first/last, string_agg
 * and every exact state exact (agg.h).  Float sums and second moments are
 * combined per batch, so they may differ from the serial path in the last
 * bits, but depend only on the morsel boundaries, which depend only on the
 * input: the output is the same for every --threads.
 *
 * Per batch: when nearly every row is a local group of its own (q10-like
 * keys) pre-aggregation does not pay, so the work function hands over the
 * evaluated arguments and local ids instead and the consumer updates the
 * states row by row (still one lookup per local group); count_distinct
 * always takes that way (it does not merge).  TALLY_AGG_SERIAL in the
 * environment keeps the serial path (tests, A/B benchmarks).  --sorted and
 * clustered input stay serial: the run path and its check need rows in order.
 */
#include "agg_impl.h"
#include "../plan/resolve.h"

typedef struct ArgCache {
    TlExprId id;
    TlArray *arr;
} ArgCache;

static TlStatus eval_arg(AggOp *a, const TlBatch *b, TlExprId id,
                         ArgCache *cache, int *n_cache, TlArray **out,
                         TlError *err)
{
    *out = NULL;
    if (id == TL_NO_ID) return TL_OK;
    for (int i = 0; i < *n_cache; i++)
        if (cache[i].id == id) {
            *out = cache[i].arr;
            return TL_OK;
        }
    TL_TRY(tl_eval(a->ea, id, b, out, err));
    cache[*n_cache].id = id;
    cache[*n_cache].arr = *out;
    (*n_cache)++;
    return TL_OK;
}

/* Set brk[i] for every i in [1, n) where row i's key in column a differs
 * from row i-1's (NaN = NaN, -0.0 = 0.0, strings by bytes, null vs value).
 * Two nulls may be marked different when their hidden values differ: that
 * only splits a run, and the grouper still gives both rows one group. */
static void mark_breaks(const TlArray *a, int64_t n, uint8_t *brk)
{
    if (a->type == TL_TNULL || a->null_count == a->length) return;
    switch (a->type) {
    case TL_TINT64: case TL_TTIMESTAMP: case TL_TTIMESTAMPTZ: {
        const int64_t *v = tl_array_i64(a);
        for (int64_t i = 1; i < n; i++) brk[i] |= v[i] != v[i - 1];
        break;
    }
    case TL_TDATE: {
        const int32_t *v = tl_array_i32(a);
        for (int64_t i = 1; i < n; i++) brk[i] |= v[i] != v[i - 1];
        break;
    }
    case TL_TBOOL:
        for (int64_t i = 1; i < n; i++)
            brk[i] |= tl_array_bool(a, i) != tl_array_bool(a, i - 1);
        break;
    case TL_TFLOAT64: {
        const double *v = tl_array_f64(a);
        for (int64_t i = 1; i < n; i++) {
            double x = v[i], y = v[i - 1];
            brk[i] |= !(x == y || (x != x && y != y));
        }
        break;
    }
    case TL_TSTRING: {
        const TlView *v = tl_array_views(a);
        for (int64_t i = 1; i < n; i++) {
            uint32_t len = v[i].in.len;
            if (brk[i]) continue;
            brk[i] = len != v[i - 1].in.len ||
                     memcmp(tl_view_ptr(&v[i], a->data),
                            tl_view_ptr(&v[i - 1], a->data), len) != 0;
        }
        break;
    }
    default:
        for (int64_t i = 1; i < n; i++) brk[i] = 1;
        return;
    }
    if (a->null_count > 0)
        for (int64_t i = 1; i < n; i++) {
            bool x = tl_array_valid(a, i), y = tl_array_valid(a, i - 1);
            if (x != y) brk[i] = 1;
        }
}

static void group_text(AggOp *a, uint32_t gid, char *buf, size_t cap);

/* The --sorted violation of key kv at input row `row` (0-based): "FILE:LINE:
 * --sorted: ..." when the rows are an input's records (tl_op_agg_set_source;
 * the reader finds the line), else the row number of the aggregate's
 * input, said as such. */
static TlStatus sorted_error(AggOp *a, const char *kv, int64_t row, TlError *err)
{
    int64_t rec = row;
    for (int i = 0; i < a->n_src; i++) {
        int64_t line = 0, n = 0;
        const char *name = NULL;
        TlError e2;
        if (tl_input_locate(a->src[i], a->src_read, rec, &line, &n, &name, &e2) != TL_OK)
            break;
        if (line > 0)
            return tl_error(err, TL_ERR_DATA, "%s:%lld: --sorted: key %s "
                            "reappears after its run ended", tl_escape_name(name).s,
                            (long long)line, kv);
        rec -= n;
    }
    return tl_error(err, TL_ERR_DATA, "--sorted: key %s reappears at row %lld "
                    "of the group-by's input after its run ended", kv,
                    (long long)row + 1);
}

/* --sorted: every run head of this batch (a->run_ids[0..r), first rows
 * a->starts) opens the next group or continues the previous run's group;
 * otherwise its key came back after its run ended. */
static TlStatus check_runs(AggOp *a, int64_t r, TlError *err)
{
    /* every group so far was opened by a run in order, so the next new id
     * is the last run's plus one */
    uint32_t before = a->prev_id == UINT32_MAX ? 0 : a->prev_id + 1;
    for (int64_t j = 0; j < r; j++) {
        uint32_t id = a->run_ids[j];
        if (id == a->prev_id) continue;
        if (id == before) {
            before++;
            a->prev_id = id;
            continue;
        }
        char where[1024];
        group_text(a, id, where, sizeof where);
        /* " in group k=v" -> "k=v" */
        const char *kv = strncmp(where, " in group ", 10) == 0 ? where + 10 : where;
        return sorted_error(a, kv, a->rows_seen + a->starts[j], err);
    }
    return TL_OK;
}

/* Map by runs of equal keys (see the design above).  *done is false when
 * runs do not pay for this batch (the caller maps row by row). */
static TlStatus map_runs(AggOp *a, TlArray **karr, int64_t n, bool *done,
                         TlError *err)
{
    *done = false;
    if (a->starts_cap < n) {
        uint32_t *s = tl_realloc(a->starts, (size_t)n * sizeof *s);
        if (!s) return tl_error_oom(err);
        a->starts = s;
        uint32_t *r = tl_realloc(a->run_ids, (size_t)n * sizeof *r);
        if (!r) return tl_error_oom(err);
        a->run_ids = r;
        a->starts_cap = n;
    }
    /* brk lives in the ids buffer's bytes: ids are written only after. */
    uint8_t *brk = (uint8_t *)a->run_ids;
    memset(brk, 0, (size_t)n);
    for (int k = 0; k < a->n_keys; k++) mark_breaks(karr[k], n, brk);
    int64_t r = 0;
    a->starts[r++] = 0;
    for (int64_t i = 1; i < n; i++)
        if (brk[i]) a->starts[r++] = (uint32_t)i;
    if (r * 4 > n && !a->clustered) {
        if (++a->runs_bad >= 2) a->runs = -1;
        return TL_OK;
    }
    a->runs = 1;
    TlArray **sub = tl_calloc((size_t)a->n_keys + 1, sizeof *sub);
    if (!sub) return tl_error_oom(err);
    TlStatus st = TL_OK;
    for (int k = 0; k < a->n_keys && st == TL_OK; k++) {
        sub[k] = karr[k]->type == TL_TNULL ? tl_array_new_null(TL_TNULL, r)
                                           : tl_array_take(karr[k], a->starts, r);
        if (!sub[k]) st = tl_error_oom(err);
    }
    if (st == TL_OK)
        st = tl_grouper_map(a->grouper, (const TlArray *const *)sub, r,
                            a->run_ids, err);
    for (int k = 0; k < a->n_keys; k++) tl_array_release(sub[k]);
    tl_free(sub);
    TL_TRY(st);
    if (a->check) TL_TRY(check_runs(a, r, err));
    for (int64_t j = 0; j < r; j++) {
        int64_t end = j + 1 < r ? a->starts[j + 1] : n;
        uint32_t id = a->run_ids[j];
        for (int64_t i = a->starts[j]; i < end; i++) a->ids[i] = id;
    }
    *done = true;
    return TL_OK;
}

/* Group and aggregate one batch. */
static TlStatus consume_batch(AggOp *a, const TlBatch *b, TlError *err)
{
    int64_t n = b->n_rows;
    TlStatus st = TL_OK;
    TlArray **karr = NULL;
    ArgCache *cache = NULL;
    int n_cache = 0;
    uint32_t n_groups;

    if (n == 0) return TL_OK;
    if (a->ids_cap < n) {
        uint32_t *ids = tl_realloc(a->ids, (size_t)n * sizeof *ids);
        if (!ids) return tl_error_oom(err);
        a->ids = ids;
        a->ids_cap = n;
    }
    karr = tl_calloc((size_t)a->n_keys + 1, sizeof *karr);
    cache = tl_calloc(2 * (size_t)a->n_aggs + 1, sizeof *cache);
    if (!karr || !cache) {
        st = tl_error_oom(err);
        goto done;
    }
    if (a->n_keys > 0) {
        for (int k = 0; k < a->n_keys; k++) {
            st = tl_eval(a->ea, a->keys[k], b, &karr[k], err);
            if (st != TL_OK) goto done;
        }
        bool mapped = false;
        if (a->clustered ||
            (a->runs >= 0 && !TL_TUNING(a->base.ctx)->group_no_runs)) {
            st = map_runs(a, karr, n, &mapped, err);
            if (st != TL_OK) goto done;
        }
        if (!mapped)
            st = tl_grouper_map(a->grouper, (const TlArray *const *)karr, n,
                                a->ids, err);
        if (st != TL_OK) goto done;
        a->rows_seen += n;
        n_groups = tl_grouper_count(a->grouper);
    } else {
        memset(a->ids, 0, (size_t)n * sizeof *a->ids);
        n_groups = 1;
    }
    for (int j = 0; j < a->n_aggs; j++) {
        TlArray *x, *y;
        st = eval_arg(a, b, a->x_ids[j], cache, &n_cache, &x, err);
        if (st == TL_OK) st = eval_arg(a, b, a->y_ids[j], cache, &n_cache, &y, err);
        if (st == TL_OK) st = tl_agg_update(a->states[j], a->ids, n, n_groups, x, y, err);
        if (st != TL_OK) goto done;
    }
done:
    if (karr)
        for (int k = 0; k < a->n_keys; k++) tl_array_release(karr[k]);
    if (cache)
        for (int i = 0; i < n_cache; i++) tl_array_release(cache[i].arr);
    tl_free(karr);
    tl_free(cache);
    return st;
}

/* The keys and arguments of b (consumed) evaluated and dropped: the part
 * of consume_batch that goes row by row, for tl_place_row. */
static TlStatus eval_run(void *arg, TlBatch *b, TlError *err)
{
    AggOp *a = arg;
    TlStatus st = TL_OK;
    for (int k = 0; st == TL_OK && k < a->n_keys; k++) {
        TlArray *x = NULL;
        st = tl_eval(a->ea, a->keys[k], b, &x, err);
        tl_array_release(x);
    }
    for (int j = 0; st == TL_OK && j < 2 * a->n_aggs; j++) {
        TlExprId id = j < a->n_aggs ? a->x_ids[j] : a->y_ids[j - a->n_aggs];
        TlArray *x = NULL;
        if (id != TL_NO_ID) st = tl_eval(a->ea, id, b, &x, err);
        tl_array_release(x);
    }
    tl_batch_free(b);
    return st;
}

/* " in group k1=v1, k2=v2" for group gid into buf (empty without keys or
 * when the keys cannot be had). */
void tl_agg_group_text_in(AggOp *a, TlGrouper *g, uint32_t gid, char *buf,
                          size_t cap)
{
    TlArray *k[8] = {0};
    TlError e2 = {0};
    size_t len = 0;
    int nk = a->n_keys < 8 ? a->n_keys : 8;
    buf[0] = '\0';
    if (a->n_keys == 0 || a->n_keys > 8 || !g ||
        tl_grouper_keys(g, gid, 1, k, &e2) != TL_OK)
        return;
    len += (size_t)snprintf(buf, cap, " in group ");
    for (int j = 0; j < nk && len < cap; j++) {
        char v[sizeof(TlQuoted)];
        size_t n = 0;
        const char *p = v;
        const TlArray *c = k[j];
        if (!tl_array_valid(c, 0)) { p = "null"; n = 4; }
        else switch (c->type) {
        case TL_TINT64: n = tl_fmt_i64(tl_array_i64(c)[0], v); break;
        case TL_TTIMESTAMP: n = tl_fmt_timestamp(tl_array_i64(c)[0], v); break;
        case TL_TTIMESTAMPTZ: n = tl_fmt_timestamptz(tl_array_i64(c)[0], v); break;
        case TL_TFLOAT64: n = tl_fmt_f64(tl_array_f64(c)[0], v); break;
        case TL_TDATE: n = tl_fmt_date(tl_array_i32(c)[0], v); break;
        case TL_TBOOL: p = tl_array_bool(c, 0) ? "true" : "false"; n = strlen(p); break;
        case TL_TSTRING: {
            const TlView *w = &tl_array_views(c)[0];
            n = (size_t)snprintf(v, sizeof v, "%s", /* quoted, escaped, cut */
                                 tl_quote((const char *)tl_view_ptr(w, c->data), w->in.len).s);
            break;
        }
        default: p = "?"; n = 1; break;
        }
        len += (size_t)snprintf(buf + len, cap - len, "%s%s=%.*s", j ? ", " : "",
                                tl_escape_name(a->base.schema->fields[j].name).s, (int)n, p);
    }
    for (int j = 0; j < nk; j++) tl_array_release(k[j]);
}

static void group_text(AggOp *a, uint32_t gid, char *buf, size_t cap)
{
    tl_agg_group_text_in(a, a->grouper, gid, buf, cap);
}

/* ------------------------------------------------------------ the stage */

/* What the stage's work makes of one batch (see the design above). */
typedef struct Part {
    int64_t n;           /* rows of the batch */
    uint32_t n_local;    /* local groups */
    TlGrouper *local;    /* the batch's groups (sealed), NULL without keys */
    uint32_t *lids;      /* rows' local ids, when some aggregate has no partial */
    TlAgg **partial;     /* per aggregate: partial states, or NULL */
    TlArray **x, **y;    /* per aggregate without partial: its arguments */
} Part;

static void part_free(AggOp *a, Part *p)
{
    if (!p) return;
    tl_grouper_free(p->local);
    for (int j = 0; j < a->n_aggs; j++) {
        if (p->partial) tl_agg_free(p->partial[j]);
        if (p->x) tl_array_release(p->x[j]);
        if (p->y) tl_array_release(p->y[j]);
    }
    tl_free(p->lids);
    tl_free(p->partial);
    tl_free(p->x);
    tl_free(p->y);
    tl_free(p);
}

/* A batch is pre-aggregated unless nearly every row is a group of its own
 * (more than 15/16 of the rows): merging a partial state costs the
 * consumer about what updating one row does, so any repetition pays on
 * the consumer, which is what limits the speed-up with many groups. */
#define DIRECT_SHARE_NUM 15
#define DIRECT_SHARE_DEN 16

/* The stage's work, on any thread: group batch b locally and reduce it to
 * partial states, or to evaluated arguments when nearly every row is a
 * group of its own.  Reads only what does not change during the scan (the
 * arena, keys, specs); the grouper and states it makes are its own. */
static TlStatus stage_work(void *ctx, TlBatch *b, void **result, TlError *err)
{
    AggOp *a = ctx;
    int64_t n = b->n_rows;
    TlStatus st = TL_OK;
    TlArray **karr = NULL;
    ArgCache *cache = NULL;
    int n_cache = 0;
    TlGrouper *lg = NULL;
    Part *p = tl_calloc(1, sizeof *p);
    *result = NULL;
    if (!p) {
        tl_batch_free(b);
        return tl_error_oom(err);
    }
    p->n = n;
    p->partial = tl_calloc((size_t)a->n_aggs + 1, sizeof *p->partial);
    p->x = tl_calloc((size_t)a->n_aggs + 1, sizeof *p->x);
    p->y = tl_calloc((size_t)a->n_aggs + 1, sizeof *p->y);
    p->lids = tl_calloc((size_t)n + 1, sizeof *p->lids);
    karr = tl_calloc((size_t)a->n_keys + 1, sizeof *karr);
    cache = tl_calloc(2 * (size_t)a->n_aggs + 1, sizeof *cache);
    if (!p->partial || !p->x || !p->y || !p->lids || !karr || !cache) {
        st = tl_error_oom(err);
        goto done;
    }
    p->n_local = 1; /* no keys: one group, every local id 0 */
    if (a->n_keys > 0) {
        for (int k = 0; k < a->n_keys; k++) {
            st = tl_eval(a->ea, a->keys[k], b, &karr[k], err);
            if (st != TL_OK) goto done;
        }
        st = tl_grouper_new(a->base.ctx, a->kt, a->n_keys, true, &lg, err);
        if (st == TL_OK)
            st = tl_grouper_map(lg, (const TlArray *const *)karr, n, p->lids, err);
        if (st != TL_OK) goto done;
        p->n_local = tl_grouper_count(lg);
    }
    bool direct = a->n_keys > 0 &&
                  (int64_t)p->n_local * DIRECT_SHARE_DEN > n * DIRECT_SHARE_NUM;
    bool rows_needed = false;
    for (int j = 0; j < a->n_aggs; j++) {
        TlArray *x, *y;
        st = eval_arg(a, b, a->x_ids[j], cache, &n_cache, &x, err);
        if (st == TL_OK) st = eval_arg(a, b, a->y_ids[j], cache, &n_cache, &y, err);
        if (st != TL_OK) goto done;
        if (!direct && tl_agg_mergeable(a->specs[j].op)) {
            st = tl_agg_new(&a->specs[j], &p->partial[j], err);
            if (st == TL_OK)
                st = tl_agg_update(p->partial[j], p->lids, n, p->n_local, x, y, err);
            if (st != TL_OK) goto done;
        } else {
            p->x[j] = x ? tl_array_retain(x) : NULL;
            p->y[j] = y ? tl_array_retain(y) : NULL;
            rows_needed = true;
        }
    }
    if (a->n_keys > 0) {
        st = tl_grouper_seal_local(lg, err);
        if (st != TL_OK) goto done;
        p->local = lg;
        lg = NULL;
    }
    if (!rows_needed) {
        tl_free(p->lids);
        p->lids = NULL;
    }
done:
    tl_grouper_free(lg);
    if (karr)
        for (int k = 0; k < a->n_keys; k++) tl_array_release(karr[k]);
    if (cache)
        for (int i = 0; i < n_cache; i++) tl_array_release(cache[i].arr);
    tl_free(karr);
    tl_free(cache);
    tl_batch_free(b);
    if (st != TL_OK) {
        part_free(a, p);
        return st;
    }
    *result = p;
    return TL_OK;
}

/* The consumer's part, in morsel order: one global lookup per local group
 * (new groups get their ids in first-appearance order, as row by row),
 * then partial states merged and the other aggregates updated with the
 * rows' global ids. */
static TlStatus merge_part(AggOp *a, Part *p, TlError *err)
{
    uint32_t nl = p->n_local;
    uint32_t n_groups = 1;
    if (a->map_cap < (int64_t)nl + 1) {
        uint32_t *m = tl_realloc(a->map, ((size_t)nl + 1) * sizeof *m);
        if (!m) return tl_error_oom(err);
        a->map = m;
        a->map_cap = (int64_t)nl + 1;
    }
    if (a->n_keys > 0) {
        TL_TRY(tl_grouper_merge(a->grouper, p->local, a->map, err));
        n_groups = tl_grouper_count(a->grouper);
    } else {
        a->map[0] = 0;
    }
    if (p->lids) {
        if (a->ids_cap < p->n) {
            uint32_t *ids = tl_realloc(a->ids, (size_t)p->n * sizeof *ids);
            if (!ids) return tl_error_oom(err);
            a->ids = ids;
            a->ids_cap = p->n;
        }
        const uint32_t *m = a->map;
        for (int64_t i = 0; i < p->n; i++) a->ids[i] = m[p->lids[i]];
    }
    for (int j = 0; j < a->n_aggs; j++) {
        if (p->partial[j])
            TL_TRY(tl_agg_merge(a->states[j], p->partial[j], a->map, nl, n_groups, err));
        else
            TL_TRY(tl_agg_update(a->states[j], a->ids, p->n, n_groups, p->x[j],
                                 p->y[j], err));
    }
    a->rows_seen += p->n;
    return TL_OK;
}

static TlStatus stage_work_any(void *ctx, TlBatch *b, void **result, TlError *err)
{
    AggOp *a = ctx;
    return a->radix ? tl_agg_radix_work(a, b, result, err) : stage_work(ctx, b, result, err);
}

static void stage_drop_any(void *ctx, void *result)
{
    AggOp *a = ctx;
    if (a->radix) tl_agg_radix_drop(a, result);
    else part_free(a, result);
}

/* Install the stage on a scan child (not for clustered input: the run
 * path and its --sorted check stay serial).  TALLY_AGG_SERIAL (set in the
 * environment) keeps the serial path, so tests and benchmarks can compare. */
static TlStatus try_stage(AggOp *a, TlError *err)
{
    if (a->clustered || !a->child->set_stage || !a->child->next_result ||
        TL_TUNING(a->base.ctx)->agg_serial)
        return TL_OK;
    if (a->n_keys > 0 && !TL_TUNING(a->base.ctx)->agg_radix_off) {
        a->radix = true;
        TL_TRY(tl_agg_radix_init(a, err));
    }
    TlStage stage = {.ctx = a, .work = stage_work_any, .drop = stage_drop_any};
    TL_TRY(a->child->set_stage(a->child, &stage, err));
    a->staged = true;
    return TL_OK;
}

/* Pull the whole input, then seal the aggregates: every data error (sum
 * overflow) surfaces here, before the first output batch. */
static TlStatus consume(AggOp *a, TlError *err)
{
    TL_TRY(try_stage(a, err));
    if (a->radix) return tl_agg_radix_consume(a, err);
    while (a->staged) {
        void *r = NULL;
        TL_TRY(a->child->next_result(a->child, &r, err));
        if (!r) break;
        TlStatus st = merge_part(a, r, err);
        part_free(a, r);
        TL_TRY(st);
    }
    for (int64_t before = 0; !a->staged;) {
        TlBatch *b = NULL;
        TL_TRY(a->child->next(a->child, &b, err));
        if (!b) break;
        TlStatus st = consume_batch(a, b, err);
        if (st == TL_ERR_DATA) tl_place_row(eval_run, a, b, a->child, before, err);
        before += b->n_rows;
        tl_batch_free(b);
        TL_TRY(st);
    }
    uint32_t n_groups = a->n_keys > 0 ? tl_grouper_count(a->grouper) : 1;
    a->n_groups = n_groups;
    if (a->base.stats) a->base.stats->groups += n_groups;
    tl_free(a->ids);
    a->ids = NULL;
    a->ids_cap = 0;
    tl_free(a->map);
    a->map = NULL;
    a->map_cap = 0;
    tl_free(a->starts);
    tl_free(a->run_ids);
    a->starts = a->run_ids = NULL;
    a->starts_cap = 0;
    for (int j = 0; j < a->n_aggs; j++) {
        TlStatus st = tl_agg_seal(a->states[j], n_groups, err);
        if (st == TL_ERR_DATA && err->msg[0] == '\0') {
            const TlExpr *e = tl_ea_node(a->ea, a->aggs[j]);
            const TlOpInfo *oi = tl_op_info((TlOp)e->op);
            char where[1024];
            group_text(a, tl_agg_bad_group(a->states[j]), where, sizeof where);
            return tl_error_at(err, TL_ERR_DATA, a->ea, e->src, e->start, e->len,
                               "%s overflows int64%s", oi ? oi->name : "sum", where);
        }
        TL_TRY(st);
    }
    return TL_OK;
}

/* The output batch of groups [first, first+rows): keys from the grouper,
 * results from the aggregates.  Reads only (after the first keys call), so
 * several run at once. */
static TlStatus build_batch(AggOp *a, uint32_t first, int64_t rows, TlBatch **out,
                            TlError *err)
{
    *out = NULL;
    TlBatch *b = tl_batch_new(a->base.schema, a->n_keys + a->n_aggs, rows);
    if (!b) return tl_error_oom(err);
    TlStatus st = TL_OK;
    if (a->radix)
        st = tl_agg_radix_batch(a, first, rows, b, err);
    else if (a->n_keys > 0)
        st = tl_grouper_keys(a->grouper, first, (uint32_t)rows, b->cols, err);
    for (int j = 0; st == TL_OK && !a->radix && j < a->n_aggs; j++)
        st = tl_agg_results(a->states[j], first, (uint32_t)rows,
                            &b->cols[a->n_keys + j], err);
    if (st != TL_OK) {
        tl_batch_free(b);
        return st;
    }
    *out = b;
    return TL_OK;
}

/* Output batch seq on the pool (ordered.h): groups [seq * batch, ...). */
static TlStatus out_task(void *ctx, int64_t seq, void *in, void **out, TlError *err)
{
    AggOp *a = ctx;
    TlBatch *b = NULL;
    int64_t per = tl_ctx_batch_rows(a->base.ctx), first = seq * per;
    TL_TRY(build_batch(a, (uint32_t)first, a->n_groups - first < per ? a->n_groups - first : per,
                       &b, err));
    *out = b;
    return TL_OK;
}

static void out_drop(void *ctx, void *out)
{
    tl_batch_free(out);
}

/* End the grouper's input (its first keys call, alone), so the builds
 * that follow only read. */
static TlStatus end_keys(AggOp *a, TlError *err)
{
    if (!a->keys_ended && a->n_keys > 0 && !a->radix) {
        TlArray *none[64] = {0}, **tmp = none;
        if (a->n_keys > 64) tmp = tl_calloc((size_t)a->n_keys, sizeof *tmp);
        if (!tmp) return tl_error_oom(err);
        TlStatus st = tl_grouper_keys(a->grouper, 0, 0, tmp, err);
        for (int j = 0; j < a->n_keys; j++) tl_array_release(tmp[j]);
        if (tmp != none) tl_free(tmp);
        TL_TRY(st);
    }
    a->keys_ended = true;
    return TL_OK;
}

/* The next slice of groups (tl_batch_rows at a time), built a few batches
 * ahead on the pool (the ring); the whole output never exists at once.
 * A one-batch output is built inline (no thread started). */
static TlStatus agg_next(TlOperator *op, TlBatch **out, TlError *err)
{
    AggOp *a = (AggOp *)op;
    int64_t per = tl_ctx_batch_rows(a->base.ctx);
    *out = NULL;
    if (!a->consumed) {
        a->consumed = true;
        TL_TRY(consume(a, err));
        a->out_total = (a->n_groups + per - 1) / per;
    }
    if (a->out_take >= a->out_total) return TL_OK;
    if (!a->keys_ended) TL_TRY(end_keys(a, err));
    if (a->out_total == 1) {
        a->out_take++;
        return build_batch(a, 0, a->n_groups, out, err);
    }
    if (!a->ring) {
        int64_t w = 2 * (int64_t)tl_pool_threads();
        if (w > a->out_total) w = a->out_total;
        TL_TRY(tl_ordered_new((int)w, out_task, out_drop, a, &a->ring, err));
    }
    void *r = NULL;
    TlStatus st = tl_ordered_next(a->ring, a->out_total, &r, err);
    if (st != TL_OK) {
        tl_ordered_free(a->ring); /* waits for the builds in flight */
        a->ring = NULL;
        a->out_take = a->out_total; /* nothing more after an error */
        return st;
    }
    a->out_take++;
    *out = r;
    return TL_OK;
}

/* See exec.h (TlOperator.origin): the aggregate makes its rows. */
static void agg_origin(TlOperator *op, int64_t row, TlPlaceVal *v, char *buf, size_t cap)
{
    (void)v;
    tl_origin_made(((AggOp *)op)->n_keys > 0 ? "group-by" : "aggregate", row, buf, cap);
}

static void agg_free(TlOperator *op)
{
    AggOp *a = (AggOp *)op;
    if (!a) return;
    tl_ordered_free(a->ring); /* first: queued builds read the groups and states */
    if (a->child) a->child->free(a->child);
    tl_agg_radix_free(a);
    tl_grouper_free(a->grouper);
    if (a->states)
        for (int j = 0; j < a->n_aggs; j++) tl_agg_free(a->states[j]);
    tl_free(a->states);
    tl_free(a->keys);
    tl_free(a->aggs);
    tl_free(a->x_ids);
    tl_free(a->y_ids);
    tl_free(a->ids);
    tl_free(a->map);
    tl_free(a->kt);
    tl_free(a->specs);
    tl_free(a->starts);
    tl_free(a->run_ids);
    tl_free(a->src);
    tl_free(a);
}

/* See exec.h. */
void tl_op_agg_set_sorted(TlOperator *op, bool check)
{
    AggOp *a = (AggOp *)op;
    if (a->n_keys == 0) return;
    a->clustered = true;
    a->check = check;
    a->prev_id = UINT32_MAX;
}

/* See exec.h. */
TlStatus tl_op_agg_set_source(TlOperator *op, const char *const *paths,
                              const TlReadOptions *read, int n_paths,
                              TlError *err)
{
    AggOp *a = (AggOp *)op;
    const char **v = tl_malloc(((size_t)n_paths + 1) * sizeof *v);
    if (!v) return tl_error_oom(err);
    for (int i = 0; i < n_paths; i++) v[i] = paths[i];
    tl_free(a->src);
    a->src = v;
    a->src_read = read;
    a->n_src = n_paths;
    return TL_OK;
}

/* The TlAggSpec of aggregate call j, bound from its resolved call (resolve
 * has checked it: tl_agg_bind); sets its argument ids. */
static TlStatus agg_spec(AggOp *a, int j, const TlSchema *schema, TlAggSpec *s,
                         TlError *err)
{
    const TlExprArena *ea = a->ea;
    const TlExpr *e = tl_ea_node(ea, a->aggs[j]);
    memset(s, 0, sizeof *s);
    s->ctx = a->base.ctx;
    a->x_ids[j] = a->y_ids[j] = TL_NO_ID;
    if (e->kind != TL_X_CALL || !tl_op_is_agg((TlOp)e->op))
        return tl_error_at(err, TL_ERR_USAGE, ea, e->src, e->start, e->len,
                           "internal: expected an aggregate call here");
    TlAggCall c;
    tl_agg_bind(ea, a->aggs[j], &c);
    s->op = c.op;
    s->out_type = schema->fields[a->n_keys + j].type;
    s->q = c.q;
    s->sep = c.sep;
    s->sep_len = c.sep_len;
    s->no_arg = c.x == TL_NO_ID;
    s->x_type = c.x_type;
    s->y_type = c.y_type;
    a->x_ids[j] = c.x;
    a->y_ids[j] = c.y;
    return TL_OK;
}

/* Create the aggregate operator (see exec.h).  Takes ownership of child,
 * also on failure. */
TlStatus tl_op_agg_new(TlOperator *child, const TlExprArena *ea,
                       const TlExprId *keys, int n_keys, const TlExprId *aggs,
                       int n_aggs, const TlSchema *schema, TlOperator **out,
                       TlError *err)
{
    TlStatus st = TL_OK;
    TlType *kt = NULL;
    *out = NULL;
    AggOp *a = tl_calloc(1, sizeof *a);
    if (!a) {
        child->free(child);
        return tl_error_oom(err);
    }
    a->base.next = agg_next;
    a->base.free = agg_free;
    a->base.origin = agg_origin;
    a->base.schema = schema;
    a->base.stats = child->stats;
    a->base.ctx = child->ctx;
    a->child = child;
    a->ea = ea;
    a->n_keys = n_keys;
    a->n_aggs = n_aggs;
    if (schema->n_fields != n_keys + n_aggs) {
        st = tl_error(err, TL_ERR_USAGE, "internal: aggregate schema has %d "
                      "fields for %d keys and %d aggregates", schema->n_fields,
                      n_keys, n_aggs);
        goto fail;
    }
    a->keys = tl_malloc(((size_t)n_keys + 1) * sizeof *a->keys);
    a->aggs = tl_malloc(((size_t)n_aggs + 1) * sizeof *a->aggs);
    a->x_ids = tl_malloc(((size_t)n_aggs + 1) * sizeof *a->x_ids);
    a->y_ids = tl_malloc(((size_t)n_aggs + 1) * sizeof *a->y_ids);
    a->states = tl_calloc((size_t)n_aggs + 1, sizeof *a->states);
    a->specs = tl_calloc((size_t)n_aggs + 1, sizeof *a->specs);
    kt = a->kt = tl_malloc(((size_t)n_keys + 1) * sizeof *kt);
    if (!a->keys || !a->aggs || !a->x_ids || !a->y_ids || !a->states ||
        !a->specs || !kt) {
        st = tl_error_oom(err);
        goto fail;
    }
    if (n_keys) memcpy(a->keys, keys, (size_t)n_keys * sizeof *keys);
    if (n_aggs) memcpy(a->aggs, aggs, (size_t)n_aggs * sizeof *aggs);
    for (int k = 0; k < n_keys; k++) kt[k] = (TlType)tl_ea_node(ea, keys[k])->type;
    if (n_keys > 0) {
        st = tl_grouper_new(a->base.ctx, kt, n_keys, true, &a->grouper, err);
        if (st != TL_OK) goto fail;
    }
    for (int j = 0; j < n_aggs; j++) {
        TlAggSpec s;
        st = agg_spec(a, j, schema, &s, err);
        if (st == TL_OK) {
            a->specs[j] = s; /* s.sep points into the arena: lives as long */
            st = tl_agg_new(&s, &a->states[j], err);
        }
        if (st == TL_ERR_USAGE && a->states[j] == NULL &&
            strncmp(err->msg, "internal", 8) != 0 && strchr(err->msg, '\n') == NULL) {
            /* tl_agg_new's type complaint: point at the call. */
            const TlExpr *e = tl_ea_node(ea, aggs[j]);
            char msg[256];
            snprintf(msg, sizeof msg, "%.200s", err->msg);
            st = tl_error_at(err, TL_ERR_USAGE, ea, e->src, e->start, e->len,
                             "%s", msg);
        }
        if (st != TL_OK) goto fail;
    }
    *out = &a->base;
    return TL_OK;
fail:
    agg_free(&a->base);
    return st;
}
