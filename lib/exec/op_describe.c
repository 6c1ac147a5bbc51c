/*
 * op_describe.c -- one row of statistics per input column (--describe).
 *
 * The whole input is read once.  Each morsel (a scan's stage, on the pool;
 * or each batch, when the child cannot run a stage) becomes a partial per
 * column, folded into the column's state in morsel order:
 *
 *   count, nulls       counted from the arrays' exact null counts
 *   min, max           aggregate states (agg.c), merged as group-by merges
 *   mean, std          numbers only: aggregate states (agg.c: exact sums)
 *   q25, q50, q75      numbers only: while the values are counted exactly
 *                      (below), from the sorted distinct values and their
 *                      counts; once not, from a quantile state (agg.c)
 *                      that then receives every value: those counted so
 *                      far (each as often as it was seen) and the rest;
 *                      it answers all three q (tl_agg_quantile_at).  Both
 *                      interpolate the same way (DuckDB's quantile_cont)
 *   min_len, max_len   strings only: length in characters (code points)
 *   distinct, top      a grouper of the morsel's values with their counts,
 *                      folded into a grouper of the column's values; while
 *                      the column has at most TL_DESCRIBE_EXACT distinct
 *                      values the count is exact and the three most
 *                      frequent values are known.  Past the bound the
 *                      values are hashed into a HyperLogLog sketch (2^14
 *                      one-byte registers, relative standard error 0.81%)
 *                      and the grouper is dropped: `approx` says so and
 *                      `top` is empty.
 *
 * Determinism: every statistic is order-independent (min/max by the total
 * order, exact sums, sorted quantiles, set sizes, a sketch's registers are
 * maxima over hashes of the values), and the merges happen in morsel
 * order, so the bytes do not depend on --threads.  A worker reads the
 * column's `approx` flag only to skip building a grouper the state would
 * hash anyway: either path folds the same hashes into the sketch.
 *
 * Output: the plan node's schema (lib/plan/plan.c, step_describe), one
 * row per input column, in order.
 */
#include "exec.h"
#include "agg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/hash.h"
#include "../../kernels/hll.h"
#include "../../kernels/rowenc.h"
#include "../core/text.h"
#include "../group/group.h"

/* Distinct values counted exactly (man/tally.1, --describe): enough for
 * any categorical column, whose top values mean something; past it a
 * column's values are only hashed, which keeps a high-cardinality column
 * from costing a grouper per morsel and a serial merge of them (on the
 * H2O file's 100,000-value id3 that was 1.8 of 4.0 CPU seconds). */
#define TL_DESCRIBE_EXACT 10000
#define HLL_P 14
#define HLL_M (1u << HLL_P)
#define TOP_N 3

enum { S_MIN, S_MAX, S_MEAN, S_STD, S_Q, N_STATES };

/* One morsel's share of one column. */
typedef struct ColPart {
    int64_t nulls;
    TlAgg *agg[N_STATES];
    int64_t min_len, max_len;   /* -1: no string value */
    TlArray *keys;              /* the morsel's distinct values, or NULL */
    int64_t *cnt;               /* rows of each */
    int64_t null_id;            /* the null value's index in keys, or -1 */
    uint8_t *hll;               /* or the sketch of its values */
} ColPart;

typedef struct Part {
    int64_t n_rows;
    ColPart *cols;
} Part;

/* A column's state. */
typedef struct ColState {
    TlType type;
    int64_t nulls;
    TlAgg *agg[N_STATES];
    int64_t min_len, max_len;
    TlGrouper *g;               /* exact: the values so far */
    int64_t *cnt;
    int64_t cnt_cap;
    int64_t null_gid;           /* -1: no null yet */
    uint32_t *gids;
    int64_t gids_cap;
    uint8_t *hll;               /* approximate: the sketch (g is NULL) */
    int approx;                 /* hll != NULL, read by workers (atomic) */
} ColState;

typedef struct Describe {
    TlOperator base;
    TlOperator *child;
    const TlSchema *in;
    int n_cols;
    ColState *cs;
    int64_t n_rows;
    uint32_t *zeros;            /* n_zeros group ids 0, read-only */
    int64_t n_zeros;
    bool done;
} Describe;

static bool is_number(TlType t)
{
    return t == TL_TINT64 || t == TL_TFLOAT64;
}

/* The aggregate state k of a column of type t, or NULL when it does not
 * apply (the null type, or a number statistic of another type). */
static TlStatus state_new(TlType t, int k, TlAgg **out, TlError *err)
{
    static const TlOp ops[N_STATES] = {TL_OP_MIN, TL_OP_MAX, TL_OP_MEAN,
                                        TL_OP_STD, TL_OP_QUANTILE};
    *out = NULL;
    if (t == TL_TNULL || (k >= S_MEAN && !is_number(t))) return TL_OK;
    TlAggSpec s;
    memset(&s, 0, sizeof s);
    s.op = ops[k];
    s.x_type = t;
    s.out_type = k <= S_MAX ? t : TL_TFLOAT64;
    s.q = 0.5;
    s.select = true;    /* three quantiles of one group: no sort */
    return tl_agg_new(&s, out, err);
}

static void part_free(Describe *d, Part *p)
{
    if (!p) return;
    for (int c = 0; p->cols && c < d->n_cols; c++) {
        ColPart *cp = &p->cols[c];
        for (int k = 0; k < N_STATES; k++) tl_agg_free(cp->agg[k]);
        tl_array_release(cp->keys);
        tl_free(cp->cnt);
        tl_free(cp->hll);
    }
    tl_free(p->cols);
    tl_free(p);
}

/* Fold the hashes of a's valid values into the sketch. */
static TlStatus hll_add(uint8_t *hll, const TlArray *a, TlError *err)
{
    int64_t n = a->length;
    uint64_t *h = tl_malloc((size_t)(n ? n : 1) * sizeof *h);
    if (!h) return tl_error_oom(err);
    tl_k_hash_array(a, h, false);
    for (int64_t i = 0; i < n; i++)
        if (tl_array_valid(a, i)) tl_k_hll_add(hll, HLL_P, h[i]);
    tl_free(h);
    return TL_OK;
}

static int64_t hll_estimate(const uint8_t *hll)
{
    return tl_k_hll_estimate(hll, HLL_P);
}

/* Lengths in characters of x's valid strings into *lo, *hi. */
static void str_lengths(const TlArray *x, int64_t *lo, int64_t *hi)
{
    const TlView *v = tl_array_views(x);
    for (int64_t i = 0; i < x->length; i++) {
        if (!tl_array_valid(x, i)) continue;
        uint32_t len = tl_view_len(v[i]);
        const uint8_t *s = tl_view_ptr(&v[i], x->data);
        int64_t chars = 0;
        for (uint32_t j = 0; j < len; j++) chars += (s[j] & 0xC0) != 0x80;
        if (*lo < 0 || chars < *lo) *lo = chars;
        if (chars > *hi) *hi = chars;
    }
}

/* The distinct values of an int64 array whose values span a short range
 * (max - min below 4 per row), counted in an array indexed by value - min
 * instead of hashed: ascending, then the null; false when the range is
 * long (or there is no value), to group by hashing instead. */
static bool count_ints(ColPart *cp, const TlArray *x, TlStatus *st, TlError *err)
{
    const int64_t *v = tl_array_i64(x);
    int64_t n = x->length, lo = INT64_MAX, hi = INT64_MIN, k = 0;
    bool all = x->null_count == 0;
    for (int64_t i = 0; i < n; i++) {
        if (!all && !tl_array_valid(x, i)) continue;
        if (v[i] < lo) lo = v[i];
        if (v[i] > hi) hi = v[i];
    }
    if (lo > hi || (uint64_t)hi - (uint64_t)lo >= (uint64_t)n * 4) return false;
    uint64_t range = (uint64_t)hi - (uint64_t)lo + 1;
    uint32_t *c = tl_calloc(range, sizeof *c);
    int64_t distinct = 0;
    TlBuilder b;
    tl_builder_init(&b, TL_TINT64);
    if (!c) goto oom;
    for (int64_t i = 0; i < n; i++)
        if (all || tl_array_valid(x, i)) distinct += c[(uint64_t)v[i] - (uint64_t)lo]++ == 0;
    cp->cnt = tl_malloc((size_t)(distinct + 1) * sizeof *cp->cnt);
    if (!cp->cnt || !tl_builder_reserve(&b, distinct + 1)) goto oom;
    for (uint64_t j = 0; j < range; j++) {
        if (!c[j]) continue;
        tl_builder_append_i64(&b, (int64_t)((uint64_t)lo + j));
        cp->cnt[k++] = c[j];
    }
    if (x->null_count > 0) {
        tl_builder_append_null(&b);
        cp->null_id = k;
        cp->cnt[k++] = x->null_count;
    }
    cp->keys = tl_builder_finish(&b);
    tl_builder_free(&b);
    tl_free(c);
    *st = cp->keys ? TL_OK : tl_error_oom(err);
    return true;
oom:
    tl_builder_free(&b);
    tl_free(c);
    *st = tl_error_oom(err);
    return true;
}

/* The morsel's distinct values of x with their counts (ids: scratch of
 * x->length entries): in order of first appearance, or for integers of a
 * short range ascending (count_ints; only strings report an order, top). */
static TlStatus part_values(const TlCtx *ctx, ColPart *cp, TlType t,
                            const TlArray *x, uint32_t *ids, TlError *err)
{
    TlGrouper *g = NULL;
    const TlArray *keys[1] = {x};
    TlStatus st;
    if (t == TL_TINT64 && count_ints(cp, x, &st, err)) return st;
    st = tl_grouper_new(ctx, &t, 1, true, &g, err);
    if (st == TL_OK) st = tl_grouper_map(g, keys, x->length, ids, err);
    if (st == TL_OK) {
        uint32_t n = tl_grouper_count(g);
        cp->cnt = tl_calloc(n ? n : 1, sizeof *cp->cnt);
        if (!cp->cnt) st = tl_error_oom(err);
        for (int64_t i = 0; st == TL_OK && i < x->length; i++) {
            cp->cnt[ids[i]]++;
            if (cp->null_id < 0 && !tl_array_valid(x, i)) cp->null_id = ids[i];
        }
        TlArray *out[1] = {NULL};
        if (st == TL_OK) st = tl_grouper_keys(g, 0, n, out, err);
        cp->keys = out[0];
    }
    tl_grouper_free(g);
    return st;
}

/* A morsel's partial: any thread; reads only the operator's fixed fields
 * and the columns' approx flags. */
static TlStatus part_make(Describe *d, TlBatch *b, Part **out, TlError *err)
{
    int64_t n = b->n_rows;
    TlStatus st = TL_OK;
    Part *p = tl_calloc(1, sizeof *p);
    /* group ids: all 0 (one group), shared while batches fit */
    uint32_t *own = n > d->n_zeros ? tl_calloc((size_t)n, sizeof *own) : NULL;
    const uint32_t *zeros = own ? own : d->zeros;
    uint32_t *ids = tl_malloc((size_t)(n ? n : 1) * sizeof *ids);
    *out = NULL;
    if (p) p->cols = tl_calloc((size_t)(d->n_cols ? d->n_cols : 1), sizeof *p->cols);
    if (!p || !p->cols || !ids || (n > d->n_zeros && !own)) {
        st = tl_error_oom(err);
        goto done;
    }
    p->n_rows = n;
    for (int c = 0; st == TL_OK && c < d->n_cols; c++) {
        ColPart *cp = &p->cols[c];
        const TlArray *x = b->cols[c];
        TlType t = d->cs[c].type;
        cp->min_len = cp->max_len = -1;
        cp->null_id = -1;
        cp->nulls = t == TL_TNULL || x->type == TL_TNULL ? n : x->null_count;
        if (t == TL_TNULL || x->type == TL_TNULL) continue;
        bool approx = __atomic_load_n(&d->cs[c].approx, __ATOMIC_RELAXED);
        if (approx) {
            cp->hll = tl_calloc(HLL_M, 1);
            st = cp->hll ? hll_add(cp->hll, x, err) : tl_error_oom(err);
        } else {
            st = part_values(d->base.ctx, cp, t, x, ids, err);
        }
        for (int k = 0; st == TL_OK && k < N_STATES; k++) {
            if (k == S_Q && !approx) continue;
            st = state_new(t, k, &cp->agg[k], err);
            if (st != TL_OK || !cp->agg[k]) continue;
            /* min and max are among the morsel's distinct values (for
             * equal values, the first's: -0.0 before 0.0), fewer to
             * compare */
            if (k <= S_MAX && cp->keys)
                st = tl_agg_update(cp->agg[k], zeros, cp->keys->length, 1, cp->keys,
                                   NULL, err);
            else
                st = tl_agg_update(cp->agg[k], zeros, n, 1, x, NULL, err);
        }
        if (st != TL_OK) break;
        /* the shortest and longest are among the distinct values too */
        if (t == TL_TSTRING)
            str_lengths(cp->keys ? cp->keys : x, &cp->min_len, &cp->max_len);
    }
done:
    tl_free(own);
    tl_free(ids);
    tl_batch_free(b);
    if (st != TL_OK) {
        part_free(d, p);
        return st;
    }
    *out = p;
    return TL_OK;
}

/* Each value keys[i] cnt[i] times (but the null, skip) into quantile
 * state q. */
static TlStatus expand_into(TlAgg *q, TlArray *keys, const int64_t *cnt,
                            int64_t skip, TlError *err)
{
    int64_t n = 0, k = 0;
    for (int64_t i = 0; i < keys->length; i++) n += i == skip ? 0 : cnt[i];
    if (n == 0) return TL_OK;
    uint32_t *idx = tl_malloc((size_t)n * sizeof *idx);
    uint32_t *zeros = tl_calloc((size_t)n, sizeof *zeros);
    TlArray *x = NULL;
    TlStatus st = TL_OK;
    if (idx && zeros) {
        for (int64_t i = 0; i < keys->length; i++)
            for (int64_t j = 0; i != skip && j < cnt[i]; j++) idx[k++] = (uint32_t)i;
        x = tl_array_take(keys, idx, n);
    }
    if (!x) st = tl_error_oom(err);
    else st = tl_agg_update(q, zeros, n, 1, x, NULL, err);
    tl_array_release(x);
    tl_free(idx);
    tl_free(zeros);
    return st;
}

/* The column's values so far into a sketch (and a number's into a
 * quantile state); the grouper goes. */
static TlStatus go_approx(ColState *s, TlError *err)
{
    uint32_t n = tl_grouper_count(s->g);
    TlArray *keys[1] = {NULL};
    TlStatus st;
    s->hll = tl_calloc(HLL_M, 1);
    if (!s->hll) return tl_error_oom(err);
    st = tl_grouper_keys(s->g, 0, n, keys, err);
    if (st == TL_OK) st = hll_add(s->hll, keys[0], err);
    if (st == TL_OK && is_number(s->type)) st = state_new(s->type, S_Q, &s->agg[S_Q], err);
    if (st == TL_OK && s->agg[S_Q])
        st = expand_into(s->agg[S_Q], keys[0], s->cnt, s->null_gid, err);
    tl_array_release(keys[0]);
    tl_grouper_free(s->g);
    s->g = NULL;
    tl_free(s->cnt);
    s->cnt = NULL;
    __atomic_store_n(&s->approx, 1, __ATOMIC_RELAXED);
    return st;
}

/* Fold a morsel's values and counts into the column's. */
static TlStatus fold_values(ColState *s, const ColPart *cp, TlError *err)
{
    if (cp->hll) {
        tl_k_hll_merge(s->hll, cp->hll, HLL_P);
        return TL_OK;
    }
    if (!cp->keys) return TL_OK;
    if (s->hll) {
        if (s->agg[S_Q]) TL_TRY(expand_into(s->agg[S_Q], cp->keys, cp->cnt, cp->null_id, err));
        return hll_add(s->hll, cp->keys, err);
    }
    int64_t n = cp->keys->length;
    const TlArray *keys[1] = {cp->keys};
    if (n > s->gids_cap) {
        tl_free(s->gids);
        s->gids = tl_malloc((size_t)n * sizeof *s->gids);
        if (!s->gids) {
            s->gids_cap = 0;
            return tl_error_oom(err);
        }
        s->gids_cap = n;
    }
    TL_TRY(tl_grouper_map(s->g, keys, n, s->gids, err));
    int64_t groups = tl_grouper_count(s->g);
    if (groups > s->cnt_cap) {
        int64_t cap = s->cnt_cap ? s->cnt_cap : 1024;
        while (cap < groups) cap *= 2;
        int64_t *v = tl_realloc(s->cnt, (size_t)cap * sizeof *v);
        if (!v) return tl_error_oom(err);
        memset(v + s->cnt_cap, 0, (size_t)(cap - s->cnt_cap) * sizeof *v);
        s->cnt = v;
        s->cnt_cap = cap;
    }
    for (int64_t i = 0; i < n; i++) s->cnt[s->gids[i]] += cp->cnt[i];
    if (cp->null_id >= 0) s->null_gid = s->gids[cp->null_id];
    if (groups - (s->null_gid >= 0) > TL_DESCRIBE_EXACT) return go_approx(s, err);
    return TL_OK;
}

/* Fold a morsel's partial into the states (in morsel order). */
static TlStatus fold(Describe *d, const Part *p, TlError *err)
{
    static const uint32_t zero = 0;
    d->n_rows += p->n_rows;
    for (int c = 0; c < d->n_cols; c++) {
        ColState *s = &d->cs[c];
        const ColPart *cp = &p->cols[c];
        s->nulls += cp->nulls;
        for (int k = 0; k < N_STATES; k++)
            if (s->agg[k] && cp->agg[k])
                TL_TRY(tl_agg_merge(s->agg[k], cp->agg[k], &zero, 1, 1, err));
        if (cp->min_len >= 0 && (s->min_len < 0 || cp->min_len < s->min_len))
            s->min_len = cp->min_len;
        if (cp->max_len > s->max_len) s->max_len = cp->max_len;
        TL_TRY(fold_values(s, cp, err));
    }
    return TL_OK;
}

static TlStatus stage_work(void *ctx, TlBatch *b, void **result, TlError *err)
{
    Part *p = NULL;
    TlStatus st = part_make(ctx, b, &p, err);
    *result = p;
    return st;
}

static void stage_drop(void *ctx, void *result)
{
    part_free(ctx, result);
}

/* Read the whole input into the states. */
static TlStatus consume(Describe *d, TlError *err)
{
    TlOperator *ch = d->child;
    bool staged = ch->set_stage && ch->next_result;
    if (staged) {
        TlStage stage = {d, stage_work, stage_drop};
        TL_TRY(ch->set_stage(ch, &stage, err));
    }
    for (;;) {
        Part *p = NULL;
        if (staged) {
            void *r = NULL;
            TL_TRY(ch->next_result(ch, &r, err));
            if (!r) return TL_OK;
            p = r;
        } else {
            TlBatch *b = NULL;
            TL_TRY(ch->next(ch, &b, err));
            if (!b) return TL_OK;
            if (b->n_rows == 0) {
                tl_batch_free(b);
                continue;
            }
            TL_TRY(part_make(d, b, &p, err));
        }
        TlStatus st = fold(d, p, err);
        part_free(d, p);
        TL_TRY(st);
    }
}

typedef struct Counted {
    uint64_t img;
    int64_t cnt;
} Counted;

static int counted_cmp(const void *a, const void *b)
{
    uint64_t x = ((const Counted *)a)->img, y = ((const Counted *)b)->img;
    return x < y ? -1 : x > y;
}

/* The value at rank r (0-based) of the sorted counted values. */
static double counted_at(const Counted *v, int64_t n, int64_t r)
{
    for (int64_t i = 0; i < n; i++) {
        if (r < v[i].cnt) return tl_k_f64_from_image(v[i].img);
        r -= v[i].cnt;
    }
    return 0;
}

/* A number column's quartiles from its exactly counted values: the same
 * interpolation as the quantile state's (agg.c). */
static TlStatus exact_quartiles(ColState *s, double q[3], bool has[3], TlError *err)
{
    uint32_t n = tl_grouper_count(s->g);
    TlArray *keys[1] = {NULL};
    Counted *v = NULL;
    int64_t m = 0, total = 0;
    TL_TRY(tl_grouper_keys(s->g, 0, n, keys, err));
    v = tl_malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v) {
        tl_array_release(keys[0]);
        return tl_error_oom(err);
    }
    for (uint32_t i = 0; i < n; i++) {
        if ((int64_t)i == s->null_gid) continue;
        double x = keys[0]->type == TL_TFLOAT64 ? tl_array_f64(keys[0])[i]
                                                : (double)tl_array_i64(keys[0])[i];
        v[m].img = tl_k_f64_image(x);
        v[m++].cnt = s->cnt[i];
        total += s->cnt[i];
    }
    tl_array_release(keys[0]);
    qsort(v, (size_t)m, sizeof *v, counted_cmp);
    for (int i = 0; i < 3 && total > 0; i++) {
        double rn = (double)(total - 1) * (0.25 * (i + 1));
        double lo = floor(rn), hi = ceil(rn);
        double vl = counted_at(v, m, (int64_t)lo);
        q[i] = lo == hi ? vl : vl + (rn - lo) * (counted_at(v, m, (int64_t)hi) - vl);
        has[i] = true;
    }
    tl_free(v);
    return TL_OK;
}

/* Element 0 of a (one value of type t) as text into b, or null. */
static bool put_value_text(TlBuilder *b, const TlArray *a)
{
    char buf[TL_FMT_MAX];
    size_t n;
    if (!a || a->length < 1 || !tl_array_valid(a, 0)) return tl_builder_append_null(b);
    switch (a->type) {
    case TL_TINT64: n = tl_fmt_i64(tl_array_i64(a)[0], buf); break;
    case TL_TFLOAT64: n = tl_fmt_f64(tl_array_f64(a)[0], buf); break;
    case TL_TDATE: n = tl_fmt_date(tl_array_i32(a)[0], buf); break;
    case TL_TTIMESTAMP: n = tl_fmt_timestamp(tl_array_i64(a)[0], buf); break;
    case TL_TTIMESTAMPTZ: n = tl_fmt_timestamptz(tl_array_i64(a)[0], buf); break;
    case TL_TBOOL: n = (size_t)snprintf(buf, sizeof buf, "%s",
                                        tl_array_bool(a, 0) ? "true" : "false");
        break;
    case TL_TSTRING: {
        const TlView *v = tl_array_views(a);
        return tl_builder_append_str(b, tl_view_ptr(&v[0], a->data), tl_view_len(v[0]));
    }
    default: return tl_builder_append_null(b);
    }
    return tl_builder_append_str(b, buf, n);
}

/* The text of the column's TOP_N most frequent values, "v (n), ...":
 * by count, ties by first appearance. */
static TlStatus put_top(TlBuilder *b, ColState *s, TlError *err)
{
    uint32_t top[TOP_N];
    int nt = 0;
    uint32_t groups = s->g ? tl_grouper_count(s->g) : 0;
    for (uint32_t gid = 0; gid < groups; gid++) {
        if ((int64_t)gid == s->null_gid) continue;
        int at = nt;
        while (at > 0 && s->cnt[top[at - 1]] < s->cnt[gid]) at--;
        if (at >= TOP_N) continue;
        if (nt < TOP_N) nt++;
        memmove(top + at + 1, top + at, (size_t)(nt - 1 - at) * sizeof *top);
        top[at] = gid;
    }
    if (!nt) return tl_builder_append_null(b) ? TL_OK : tl_error_oom(err);
    char *txt = NULL;
    size_t len = 0;
    TlStatus st = TL_OK;
    for (int i = 0; st == TL_OK && i < nt; i++) {
        TlArray *k[1] = {NULL};
        st = tl_grouper_keys(s->g, top[i], 1, k, err);
        if (st != TL_OK) break;
        const TlView *v = tl_array_views(k[0]);
        uint32_t vl = tl_view_len(v[0]);
        char cnt[48];
        int cl = snprintf(cnt, sizeof cnt, " (%lld)", (long long)s->cnt[top[i]]);
        char *nx = tl_realloc(txt, len + vl + (size_t)cl + 3);
        if (!nx) {
            st = tl_error_oom(err);
        } else {
            txt = nx;
            if (i) {
                memcpy(txt + len, ", ", 2);
                len += 2;
            }
            memcpy(txt + len, tl_view_ptr(&v[0], k[0]->data), vl);
            len += vl;
            memcpy(txt + len, cnt, (size_t)cl);
            len += (size_t)cl;
        }
        tl_array_release(k[0]);
    }
    if (st == TL_OK && !tl_builder_append_str(b, txt, len)) st = tl_error_oom(err);
    tl_free(txt);
    return st;
}

static bool put_f64_or_null(TlBuilder *b, bool ok, double v)
{
    return ok ? tl_builder_append_f64(b, v) : tl_builder_append_null(b);
}

/* The output: one row per column. */
static TlStatus emit(Describe *d, TlBatch **out, TlError *err)
{
    enum { O_COLUMN, O_TYPE, O_COUNT, O_NULLS, O_DISTINCT, O_APPROX, O_MIN,
           O_MAX, O_MEAN, O_STD, O_Q25, O_Q50, O_Q75, O_MIN_LEN, O_MAX_LEN,
           O_TOP, N_OUT };
    const TlSchema *os = d->base.schema;
    TlBuilder b[N_OUT];
    TlStatus st = TL_OK;
    TlBatch *batch = NULL;
    for (int i = 0; i < N_OUT; i++) tl_builder_init(&b[i], os->fields[i].type);
    for (int c = 0; st == TL_OK && c < d->n_cols; c++) {
        ColState *s = &d->cs[c];
        TlArray *r[N_STATES] = {NULL};
        const char *name = d->in->fields[c].name;
        const char *tn = tl_type_name(s->type);
        bool ok = true;
        for (int k = 0; st == TL_OK && k < N_STATES; k++) {
            if (!s->agg[k]) continue;
            st = tl_agg_seal(s->agg[k], 1, err);
            if (st == TL_OK && k < S_Q) st = tl_agg_results(s->agg[k], 0, 1, &r[k], err);
        }
        if (st == TL_OK) {
            int64_t distinct = s->hll ? hll_estimate(s->hll)
                             : s->g ? (int64_t)tl_grouper_count(s->g) - (s->null_gid >= 0)
                             : 0;
            double q[3] = {0, 0, 0};
            bool hq[3] = {false, false, false};
            for (int i = 0; i < 3 && s->agg[S_Q]; i++)
                hq[i] = tl_agg_quantile_at(s->agg[S_Q], 0, 0.25 * (i + 1), &q[i]);
            if (is_number(s->type) && s->g) st = exact_quartiles(s, q, hq, err);
            ok = st == TL_OK && tl_builder_append_str(&b[O_COLUMN], name, strlen(name)) &&
                 tl_builder_append_str(&b[O_TYPE], tn, strlen(tn)) &&
                 tl_builder_append_i64(&b[O_COUNT], d->n_rows - s->nulls) &&
                 tl_builder_append_i64(&b[O_NULLS], s->nulls) &&
                 tl_builder_append_i64(&b[O_DISTINCT], distinct) &&
                 tl_builder_append_bool(&b[O_APPROX], s->hll != NULL) &&
                 put_value_text(&b[O_MIN], r[S_MIN]) &&
                 put_value_text(&b[O_MAX], r[S_MAX]) &&
                 put_f64_or_null(&b[O_MEAN], r[S_MEAN] && tl_array_valid(r[S_MEAN], 0),
                                 r[S_MEAN] ? tl_array_f64(r[S_MEAN])[0] : 0) &&
                 put_f64_or_null(&b[O_STD], r[S_STD] && tl_array_valid(r[S_STD], 0),
                                 r[S_STD] ? tl_array_f64(r[S_STD])[0] : 0) &&
                 put_f64_or_null(&b[O_Q25], hq[0], q[0]) &&
                 put_f64_or_null(&b[O_Q50], hq[1], q[1]) &&
                 put_f64_or_null(&b[O_Q75], hq[2], q[2]);
            if (ok && s->type == TL_TSTRING && s->max_len >= 0)
                ok = tl_builder_append_i64(&b[O_MIN_LEN], s->min_len) &&
                     tl_builder_append_i64(&b[O_MAX_LEN], s->max_len);
            else if (ok)
                ok = tl_builder_append_null(&b[O_MIN_LEN]) &&
                     tl_builder_append_null(&b[O_MAX_LEN]);
            if (!ok) st = tl_error_oom(err);
        }
        if (st == TL_OK) {
            if (s->type == TL_TSTRING && !s->hll) st = put_top(&b[O_TOP], s, err);
            else if (!tl_builder_append_null(&b[O_TOP])) st = tl_error_oom(err);
        }
        for (int k = 0; k < N_STATES; k++) tl_array_release(r[k]);
    }
    if (st == TL_OK && d->n_cols > 0) {
        batch = tl_batch_new(os, N_OUT, d->n_cols);
        for (int i = 0; batch && i < N_OUT; i++)
            if (!(batch->cols[i] = tl_builder_finish(&b[i]))) {
                tl_batch_free(batch);
                batch = NULL;
            }
        if (!batch) st = tl_error_oom(err);
    }
    for (int i = 0; i < N_OUT; i++) tl_builder_free(&b[i]);
    *out = batch;
    return st;
}

static TlStatus describe_next(TlOperator *op, TlBatch **out, TlError *err)
{
    Describe *d = (Describe *)op;
    *out = NULL;
    if (d->done) return TL_OK;
    d->done = true;
    TL_TRY(consume(d, err));
    return emit(d, out, err);
}

/* See exec.h (TlOperator.origin): row i is made from column i. */
static void describe_origin(TlOperator *op, int64_t row, TlPlaceVal *v, char *buf,
                            size_t cap)
{
    (void)op;
    (void)v;
    tl_origin_made("describe", row, buf, cap);
}

static void describe_free(TlOperator *op)
{
    Describe *d = (Describe *)op;
    if (!d) return;
    if (d->child) d->child->free(d->child);
    for (int c = 0; d->cs && c < d->n_cols; c++) {
        ColState *s = &d->cs[c];
        for (int k = 0; k < N_STATES; k++) tl_agg_free(s->agg[k]);
        tl_grouper_free(s->g);
        tl_free(s->cnt);
        tl_free(s->gids);
        tl_free(s->hll);
    }
    tl_free(d->cs);
    tl_free(d->zeros);
    tl_free(d);
}

/* See exec.h. */
TlStatus tl_op_describe_new(TlOperator *child, const TlSchema *schema,
                            TlOperator **out, TlError *err)
{
    Describe *d = tl_calloc(1, sizeof *d);
    *out = NULL;
    if (!d) {
        child->free(child);
        return tl_error_oom(err);
    }
    d->base.next = describe_next;
    d->base.free = describe_free;
    d->base.origin = describe_origin;
    d->base.schema = schema;
    d->base.stats = child->stats;
    d->base.ctx = child->ctx;
    d->child = child;
    d->in = child->schema;
    d->n_cols = d->in->n_fields;
    d->cs = tl_calloc((size_t)(d->n_cols ? d->n_cols : 1), sizeof *d->cs);
    d->n_zeros = tl_ctx_batch_rows(d->base.ctx);
    d->zeros = tl_calloc((size_t)d->n_zeros, sizeof *d->zeros);
    if (!d->cs || !d->zeros) {
        describe_free(&d->base);
        return tl_error_oom(err);
    }
    for (int c = 0; c < d->n_cols; c++) {
        ColState *s = &d->cs[c];
        s->type = d->in->fields[c].type;
        s->min_len = s->max_len = -1;
        s->null_gid = -1;
        TlStatus st = TL_OK;
        for (int k = 0; st == TL_OK && k < S_Q; k++)
            st = state_new(s->type, k, &s->agg[k], err);
        if (st == TL_OK && s->type != TL_TNULL)
            st = tl_grouper_new(d->base.ctx, &s->type, 1, true, &s->g, err);
        if (st != TL_OK) {
            describe_free(&d->base);
            return st;
        }
    }
    *out = &d->base;
    return TL_OK;
}
