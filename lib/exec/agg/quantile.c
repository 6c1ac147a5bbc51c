/*
 * quantile.c -- median and quantile (DuckDB's quantile_cont).
 *
 * The values are collected as (image, group) pairs in input order, the
 * image being the value's total-order key; the pairs live in chunks that
 * are written once and never move (a growing array's realloc copied each
 * pair about once more, onto freshly faulted pages).  Sealing distributes
 * the images by group with a counting sort (sequential reads over the
 * chunks) and sorts each group's images (insertion sort when few, radix
 * sort otherwise), or with spec.select leaves them for selection; the
 * result interpolates: RN = (n-1)q, lo = floor(RN), hi = ceil(RN),
 * v[lo] + (RN-lo)(v[hi]-v[lo]).  Dates and timestamps are kept exactly
 * (an integer image, as quantile_disc keeps them, not a double that
 * rounds timestamps past 2^53 microseconds) and interpolate as DuckDB's
 * do: both ends as timestamps (a date at its midnight), then
 * llround(lo(1-d) + hi*d) in doubles, a timestamp (timestamptz over
 * timestamptz).
 *
 * Merging appends a partial's pairs with their groups mapped (the order
 * does not matter, sealing sorts them); a subset of a partial does not
 * merge (the values are kept per row, not per group).
 */
#include "agg_fam.h"

#include <stdlib.h>

#include "../../../kernels/rowenc.h"
#include "../../../kernels/sort.h"

#define QCHUNK_FIRST 1024        /* entries of a state's first chunk */
#define QCHUNK_MAX (256 * 1024)  /* entries beyond which chunks stop doubling */
#define US_PER_DAY INT64_C(86400000000)
#define SIGN_BIT ((uint64_t)1 << 63)

static bool q_accepts(TlType x, TlType y)
{
    (void)y;
    return tl_agg_numeric(x) || x == TL_TDATE || x == TL_TTIMESTAMP || x == TL_TTIMESTAMPTZ;
}

static void q_free_chunks(TlAgg *a)
{
    for (int c = 0; c < a->n_qch; c++) tl_free(a->qch[c]);
    tl_free(a->qch);
    a->qch = NULL;
    a->n_qch = a->qch_cap = 0;
    a->qn = 0;
}

static void q_free(TlAgg *a)
{
    q_free_chunks(a);
    tl_free(a->qkey);
    tl_free(a->qstart);
}

/* A chunk with room for `need` more pairs: the last one, or a new one of
 * twice the last one's size (at most QCHUNK_MAX, at least need); NULL on
 * OOM.  A batch's pairs never straddle two chunks. */
static QChunk *q_room(TlAgg *a, int64_t need)
{
    QChunk *last = a->n_qch ? a->qch[a->n_qch - 1] : NULL;
    if (last && last->cap - last->n >= need) return last;
    int64_t cap = last ? (last->cap < QCHUNK_MAX ? last->cap * 2 : last->cap)
                       : QCHUNK_FIRST;
    if (cap < need) cap = need;
    if (a->n_qch == a->qch_cap) {
        int nc = a->qch_cap ? a->qch_cap * 2 : 8;
        QChunk **l = tl_realloc(a->qch, (size_t)nc * sizeof *l);
        if (!l) return NULL;
        a->qch = l;
        a->qch_cap = nc;
    }
    QChunk *c = tl_malloc(sizeof *c + (size_t)cap * (sizeof(uint64_t) + sizeof(uint32_t)));
    if (!c) return NULL;
    c->n = 0;
    c->cap = cap;
    c->g = (uint32_t *)(c->k + cap);
    a->qch[a->n_qch++] = c;
    return c;
}

/* The fraction is the spec's own invariant (a TlAggSpec may come from
 * elsewhere than a resolved call: op_describe, tests). */
static TlStatus q_init(TlAgg *a, TlError *err)
{
    if (a->fn == &tl_agg_median) a->s.q = 0.5;
    if (!(a->s.q >= 0.0 && a->s.q <= 1.0))
        return tl_error(err, TL_ERR_USAGE, "%s needs a number between 0 and 1 as "
                        "its second argument", tl_op_info(a->s.op)->name);
    return TL_OK;
}

/* Values kept as doubles, by their total-order image. */
static TlStatus f64_update(TlAgg *a, const uint32_t *ids, int64_t n,
                           const TlArray *x, TlError *err)
{
    const double *v = tl_agg_as_f64(&a->fx, &a->fx_cap, x, n);
    if (!v) return tl_error_oom(err);
    QChunk *c = q_room(a, n);
    if (!c) return tl_error_oom(err);
    uint64_t *qk = c->k;
    uint32_t *qg = c->g;
    int64_t k = c->n;
    int64_t *cnt = a->cnt;
    FOR_VALID(x, n, {
        qk[k] = tl_k_f64_image(v[i]);
        qg[k] = ids[i];
        k++;
        cnt[ids[i]]++;
    });
    a->qn += k - c->n;
    c->n = k;
    return TL_OK;
}

/* Values kept exactly (int64, date, timestamp) by an image that orders as
 * they do and gives them back: the value with its sign bit flipped. */
static TlStatus int_update(TlAgg *a, const uint32_t *ids, int64_t n,
                           const TlArray *x, TlError *err)
{
    const int64_t *v = tl_agg_as_i64(a, x, n);
    if (!v) return tl_error_oom(err);
    QChunk *c = q_room(a, n);
    if (!c) return tl_error_oom(err);
    uint64_t *qk = c->k;
    uint32_t *qg = c->g;
    int64_t k = c->n;
    int64_t *cnt = a->cnt;
    FOR_VALID(x, n, {
        qk[k] = (uint64_t)v[i] ^ SIGN_BIT;
        qg[k] = ids[i];
        k++;
        cnt[ids[i]]++;
    });
    a->qn += k - c->n;
    c->n = k;
    return TL_OK;
}

/* Whether x is a date or timestamp: median and quantile keep it exactly
 * and interpolate it as a timestamp. */
static bool q_temporal(const TlAgg *a)
{
    TlType t = a->s.x_type;
    return t == TL_TDATE || t == TL_TTIMESTAMP || t == TL_TTIMESTAMPTZ;
}

static TlStatus q_update(TlAgg *a, const uint32_t *ids, int64_t n,
                         const TlArray *x, const TlArray *y, TlError *err)
{
    (void)y;
    return q_temporal(a) ? int_update(a, ids, n, x, err) : f64_update(a, ids, n, x, err);
}

static TlStatus q_merge(TlAgg *a, const TlAgg *p, const uint32_t *src,
                        const uint32_t *map, uint32_t n, TlError *err)
{
    if (src)
        return tl_error(err, TL_ERR_USAGE, "internal: quantiles do not merge "
                        "by subsets");
    for (int c = 0; c < p->n_qch; c++) {
        const QChunk *pch = p->qch[c];
        QChunk *d = q_room(a, pch->n);
        if (!d) return tl_error_oom(err);
        for (int64_t k = 0; k < pch->n; k++) {
            d->k[d->n + k] = pch->k[k];
            d->g[d->n + k] = map[pch->g[k]];
        }
        d->n += pch->n;
        a->qn += pch->n;
    }
    for (uint32_t i = 0; i < n; i++) a->cnt[map[i]] += p->cnt[i];
    return TL_OK;
}

/* median and quantile of dates answer timestamps: a date whose midnight
 * is beyond the int64 microseconds (past year 294247) fails its group,
 * named as sum's overflow is (op_agg.c). */
static TlStatus q_dates_fit(TlAgg *a, uint32_t n_groups, TlError *err)
{
    if (a->s.x_type != TL_TDATE || a->fn == &tl_agg_quantile_disc) return TL_OK;
    const int64_t most = INT64_MAX / US_PER_DAY;
    for (uint32_t g = 0; g < n_groups; g++)
        for (int64_t i = a->qstart[g]; i < a->qstart[g + 1]; i++) {
            int64_t d = (int64_t)(a->qkey[i] ^ SIGN_BIT);
            if (d > most || d < -most) {
                a->bad_group = g;
                err->code = TL_ERR_DATA;
                err->msg[0] = '\0';
                return TL_ERR_DATA;
            }
        }
    return TL_OK;
}

/* Distribute the collected values by group (counting sort, reading in
 * input order) and sort each group's values by their total-order images;
 * the collected (value, group) pairs are freed. */
static TlStatus q_seal(TlAgg *a, uint32_t n_groups, TlError *err)
{
    int64_t m = a->qn, biggest = 0;
    uint64_t *scratch = NULL;
    a->qkey = tl_malloc((size_t)(m ? m : 1) * sizeof *a->qkey);
    a->qstart = tl_calloc((size_t)n_groups + 1, sizeof *a->qstart);
    if (!a->qkey || !a->qstart) return tl_error_oom(err);
    for (uint32_t g = 0; g < n_groups; g++) {
        a->qstart[g + 1] = a->qstart[g] + a->cnt[g];
        if (a->cnt[g] > biggest) biggest = a->cnt[g];
    }
    scratch = tl_malloc((size_t)(biggest ? biggest : 1) * sizeof *scratch);
    int64_t *pos = tl_malloc(((size_t)n_groups + 1) * sizeof *pos);
    if (!scratch || !pos) {
        tl_free(scratch);
        tl_free(pos);
        return tl_error_oom(err);
    }
    memcpy(pos, a->qstart, ((size_t)n_groups + 1) * sizeof *pos);
    for (int c = 0; c < a->n_qch; c++) {
        const QChunk *ch = a->qch[c];
        for (int64_t i = 0; i < ch->n; i++) a->qkey[pos[ch->g[i]]++] = ch->k[i];
    }
    for (uint32_t g = 0; g < n_groups && !a->s.select; g++)
        tl_k_sort_u64_keys(a->qkey + a->qstart[g], scratch, a->cnt[g]);
    tl_free(scratch);
    tl_free(pos);
    q_free_chunks(a);
    return q_dates_fit(a, n_groups, err);
}

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Reorder v[0..n) so that v[k] is the value a sort would put there, the
 * ones before it not larger and the ones after not smaller: quickselect
 * with median-of-three pivots, sorting what is left after 128 rounds (an
 * adversarial order cannot make it quadratic). */
static void select_u64(uint64_t *v, int64_t n, int64_t k)
{
    int64_t lo = 0, hi = n - 1;
    for (int round = 0; hi > lo; round++) {
        if (round == 128) {
            qsort(v + lo, (size_t)(hi - lo + 1), sizeof *v, u64_cmp);
            return;
        }
        uint64_t a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi], p;
        p = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < p) i++;
            while (v[j] > p) j--;
            if (i <= j) {
                uint64_t t = v[i];
                v[i++] = v[j];
                v[j--] = t;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return;
    }
}

/* The images around the q-quantile of group g (DuckDB quantile_cont):
 * *lo at floor(RN), RN = (n-1)q, and *hi the next (== *lo when RN is
 * whole), from the sorted images or with s.select by selection
 * (reordering them); the fraction RN - floor(RN) between them. */
static double q_around(const TlAgg *a, uint32_t g, double q, uint64_t *lo, uint64_t *hi)
{
    int64_t c = a->cnt[g];
    uint64_t *v = a->qkey + a->qstart[g];
    double rn = (double)(c - 1) * q;
    double fl = floor(rn);
    int64_t l = (int64_t)fl;
    if (a->s.select) select_u64(v, c, l);
    *lo = *hi = v[l];
    if (fl == ceil(rn)) return 0.0;
    uint64_t h = v[l + 1];
    /* selected: the next value is the smallest after position l */
    for (int64_t i = l + 2; a->s.select && i < c; i++)
        if (v[i] < h) h = v[i];
    *hi = h;
    return rn - fl;
}

/* The q-quantile of group g of doubles. */
static double quantile_q(const TlAgg *a, uint32_t g, double q)
{
    uint64_t l, h;
    double d = q_around(a, g, q, &l, &h);
    double vl = tl_k_f64_from_image(l);
    if (d == 0.0) return vl;
    double vh = tl_k_f64_from_image(h);
    return vl + d * (vh - vl);
}

/* The q-quantile of group g of dates or timestamps, a timestamp (its
 * dates are in range: q_seal). */
static int64_t quantile_ts(const TlAgg *a, uint32_t g, double q)
{
    uint64_t l, h;
    double d = q_around(a, g, q, &l, &h);
    int64_t unit = a->s.x_type == TL_TDATE ? US_PER_DAY : 1;
    int64_t vl = (int64_t)(l ^ SIGN_BIT) * unit;
    if (d == 0.0) return vl;
    int64_t vh = (int64_t)(h ^ SIGN_BIT) * unit;
    double r = (double)vl * (1.0 - d) + (double)vh * d;
    /* both ends are int64, so r is too but for rounding at 2^63 */
    return r >= 0x1p63 ? INT64_MAX : llround(r);
}

/* See agg.h. */
bool tl_agg_quantile_at(TlAgg *a, uint32_t g, double q, double *out)
{
    if (!a->sealed || g >= a->n_groups || a->s.x_type == TL_TNULL || q_temporal(a) ||
        (a->fn != &tl_agg_median && a->fn != &tl_agg_quantile) || !a->cnt[g])
        return false;
    *out = quantile_q(a, g, q);
    return true;
}

static bool q_results(TlAgg *a, TlBuilder *b, uint32_t first, uint32_t n)
{
    for (uint32_t g = first; g < first + n; g++) {
        bool ok;
        if (!a->cnt[g]) ok = tl_builder_append_null(b);
        else if (q_temporal(a)) ok = tl_agg_put_i64(b, quantile_ts(a, g, a->s.q));
        else ok = tl_agg_put_f64(b, quantile_q(a, g, a->s.q));
        if (!ok) return false;
    }
    return true;
}

/* ------------------------------------------------------- quantile_disc */

/* quantile_disc keeps the values themselves: integer-class values (int64,
 * date, timestamp) by an image that orders as they do and gives them back
 * exactly, floats by their total-order image. */
static TlStatus disc_update(TlAgg *a, const uint32_t *ids, int64_t n,
                            const TlArray *x, const TlArray *y, TlError *err)
{
    (void)y;
    return a->cls == C_FLT ? f64_update(a, ids, n, x, err) : int_update(a, ids, n, x, err);
}

/* The position of the q-quantile among c sorted values, as DuckDB's
 * quantile_disc takes it: max(1, c - floor(c - c*q)) - 1, which is
 * ceil(c*q) - 1 (0 for q = 0); c*q within a billionth of a whole number
 * is taken as that number, as DuckDB's exact decimal fraction would. */
static int64_t disc_index(int64_t c, double q)
{
    double cq = (double)c * q, r = nearbyint(cq);
    if (fabs(cq - r) <= 1e-9 * (double)(c > 1 ? c : 1)) cq = r;
    int64_t k = (int64_t)ceil(cq) - 1;
    return k < 0 ? 0 : k >= c ? c - 1 : k;
}

static bool disc_results(TlAgg *a, TlBuilder *b, uint32_t first, uint32_t n)
{
    for (uint32_t g = first; g < first + n; g++) {
        int64_t c = a->cnt[g];
        if (!c) {
            if (!tl_builder_append_null(b)) return false;
            continue;
        }
        uint64_t *v = a->qkey + a->qstart[g];
        int64_t k = disc_index(c, a->s.q);
        if (a->s.select) select_u64(v, c, k);
        bool ok = a->cls == C_FLT
                      ? tl_agg_put_f64(b, tl_k_f64_from_image(v[k]))
                      : tl_agg_put_i64(b, (int64_t)(v[k] ^ SIGN_BIT));
        if (!ok) return false;
    }
    return true;
}

const TlAggFns tl_agg_quantile_disc = {
    .accepts = q_accepts,
    .init = q_init,
    .update = disc_update,
    .merge = q_merge,
    .skips_nulls = true,
    .seal = q_seal,
    .results = disc_results,
    .free = q_free,
};

const TlAggFns tl_agg_median = {
    .accepts = q_accepts,
    .init = q_init,
    .update = q_update,
    .merge = q_merge,
    .skips_nulls = true,
    .seal = q_seal,
    .results = q_results,
    .free = q_free,
};

const TlAggFns tl_agg_quantile = {
    .accepts = q_accepts,
    .init = q_init,
    .update = q_update,
    .merge = q_merge,
    .skips_nulls = true,
    .seal = q_seal,
    .results = q_results,
    .free = q_free,
};
