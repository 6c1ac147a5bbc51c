/*
 * agg.c -- aggregate states over dense group ids (see agg.h).
 *
 * States are structures of arrays indexed by group id, grown (doubled,
 * zero-filled) as the grouper hands out new ids:
 *
 *   cnt[g]     rows / non-null values seen (also the "has a value" flag)
 *   acc[g]     int128 sums (sum and mean over integers: exact)
 *   iv[g]      integer-class values (int64, timestamp, date, bool widened)
 *   f[k][g]    float min/max/first/last values
 *   xs[k]      exact float sums (kernels/xsum.h): sum and mean of x; for
 *              std/var x, x*x; for covar x, y, x*y; for corr also x*x,
 *              y*y; each product's rounding error (fma) in a sum of its own
 *   valid[g]   first/last: whether the kept value is non-null
 *   sv[g]      string values (min/max/first/last) and string_agg buffers
 *
 * Which arrays exist depends on the op; `ensure` grows all that exist.
 * Every update is one typed loop over the batch, with the null path chosen
 * once per argument array (no nulls / all null / some nulls).  Date and
 * bool arguments are widened to int64 (and integers converted to double
 * for the float statistics) in a per-batch scratch array first, so there
 * is one loop per op and value class, not per type.
 *
 * Finishing is two steps: tl_agg_seal ends the input and does everything
 * that can fail on the data (sum overflow) or needs all groups (sorting the
 * quantile values), so an error comes before any output; tl_agg_results
 * then builds the results of any range of groups, batch by batch.
 *
 * median / quantile collect (image, group) pairs in input order, the
 * image being the value's total-order key; the pairs live in chunks that
 * are written once and never move (QChunk: a growing array's realloc
 * copied each pair about once more, onto freshly faulted pages); sealing
 * distributes the images by group with a counting sort (sequential reads
 * over the chunks), sorts each group's images (insertion sort when few,
 * radix sort otherwise), and interpolates like DuckDB's
 * quantile_cont: RN = (n-1)q, lo = floor(RN), hi = ceil(RN),
 * v[lo] + (RN-lo)(v[hi]-v[lo]).
 *
 * count_distinct uses a second grouper on the pair (group id, value):
 * every new pair whose value is not null adds one to its group.
 *
 * Merging (tl_agg_merge, for morsel parallelism): a partial is a TlAgg of
 * the same spec over one batch's local groups; its states fold into the
 * global ones through a map of group ids, in input order, with the same
 * meaning per state: counts and int128 sums add; min/max compare (ties
 * keep the earlier value); first takes the partial's only where the
 * group had no row yet, last always; string_agg appends (separator
 * first); quantile values are appended (their order does not matter,
 * sealing sorts them); exact float sums merge exactly (tl_x_merge), so
 * float sums, means and moments are the same for any split of the rows.
 * Results of std/var/covar/corr come from the exact sums: the moment
 * Sxy - Sx*Sy/n in double-double (tl_x_comoment).
 */
#include "agg.h"

#include <math.h>
#include <stdlib.h>

#include "../../kernels/rowenc.h"
#include "../../kernels/sort.h"
#include "../../kernels/xsum.h"
#include "../group/group.h"

typedef enum ValClass { C_NONE, C_INT, C_FLT, C_STR } ValClass;

typedef struct StrVal {
    uint8_t *p;
    size_t len, cap;
} StrVal;

/* A chunk of median/quantile pairs: cap images, then cap groups. */
typedef struct QChunk {
    int64_t n, cap;
    uint32_t *g;        /* the groups, after the images */
    uint64_t k[];       /* total-order images of the values */
} QChunk;

#define QCHUNK_FIRST 1024        /* entries of a state's first chunk */
#define QCHUNK_MAX (256 * 1024)  /* entries beyond which chunks stop doubling */

struct TlAgg {
    TlAggSpec s;
    ValClass cls;       /* value class of x */
    char *sep;
    uint32_t cap;       /* groups allocated */
    uint32_t touched;   /* groups whose states ensure wrote (<= cap) */
    int64_t *cnt;
    __int128 *acc;
    int64_t *iv;
    double *f[1];
    int n_f;
    TlXSum xs[8];       /* exact float sums (see put_result for which) */
    int n_xs;
    uint8_t *valid;
    StrVal *sv;
    QChunk **qch;       /* median/quantile pairs, input order */
    int n_qch, qch_cap;
    int64_t qn;         /* pairs in all chunks */
    uint64_t *qkey;     /* sealed: images, by group, ascending */
    int64_t *qstart;    /* sealed: group g's images start at qkey[qstart[g]] */
    bool sealed;
    uint32_t n_groups;  /* sealed: groups */
    uint32_t bad_group; /* seal failed: the group whose result does not fit */
    TlGrouper *cd;      /* count_distinct pairs */
    uint32_t *cd_ids;
    int64_t cd_cap;
    int64_t *ix;        /* scratch: x widened to int64 */
    double *fx, *fy;    /* scratch: x, y as double */
    int64_t ix_cap, fx_cap, fy_cap;
};

static ValClass class_of(TlType t)
{
    switch (t) {
    case TL_TINT64: case TL_TTIMESTAMP: case TL_TTIMESTAMPTZ: case TL_TDATE: case TL_TBOOL: return C_INT;
    case TL_TFLOAT64: return C_FLT;
    case TL_TSTRING: return C_STR;
    default: return C_NONE;
    }
}

static bool numeric(TlType t)
{
    return t == TL_TINT64 || t == TL_TFLOAT64 || t == TL_TNULL;
}

/* ---------------------------------------------------------------- setup */

/* Create an aggregate (see agg.h). */
TlStatus tl_agg_new(const TlAggSpec *spec, TlAgg **out, TlError *err)
{
    *out = NULL;
    TlOp op = spec->op;
    TlType xt = spec->x_type;
    bool ok = true;
    switch (op) {
    case TL_OP_COUNT: case TL_OP_COUNT_DISTINCT: case TL_OP_FIRST: case TL_OP_LAST:
    case TL_OP_MIN: case TL_OP_MAX:
        break;
    case TL_OP_SUM: case TL_OP_MEAN: case TL_OP_MEDIAN: case TL_OP_QUANTILE:
    case TL_OP_STD: case TL_OP_VAR:
        ok = numeric(xt) || ((op == TL_OP_MEDIAN || op == TL_OP_QUANTILE ||
                              op == TL_OP_STD || op == TL_OP_VAR ||
                              op == TL_OP_MEAN) &&
                             (xt == TL_TDATE || xt == TL_TTIMESTAMP || xt == TL_TTIMESTAMPTZ));
        break;
    case TL_OP_CORR: case TL_OP_COVAR:
        ok = numeric(xt) && numeric(spec->y_type);
        break;
    case TL_OP_STRING_AGG:
        ok = xt == TL_TSTRING || xt == TL_TNULL;
        break;
    case TL_OP_ANY: case TL_OP_ALL:
        ok = xt == TL_TBOOL || xt == TL_TNULL;
        break;
    default:
        ok = false;
    }
    if (!ok) {
        const TlOpInfo *oi = tl_op_info(op);
        return tl_error(err, TL_ERR_USAGE, "%s does not accept an argument of type %s",
                        oi ? oi->name : "aggregate", tl_type_name(xt));
    }
    TlAgg *a = tl_calloc(1, sizeof *a);
    if (!a) return tl_error_oom(err);
    a->s = *spec;
    a->s.sep = NULL;
    a->cls = class_of(xt);
    if (op == TL_OP_MEDIAN) a->s.q = 0.5;
    if (op == TL_OP_STRING_AGG) {
        const char *sep = spec->sep ? spec->sep : ",";
        size_t len = spec->sep ? spec->sep_len : 1;
        a->sep = tl_strndup(sep, len);
        a->s.sep_len = len;
        if (!a->sep) goto oom;
    }
    if (op == TL_OP_STD || op == TL_OP_VAR) a->n_xs = 3;
    else if (op == TL_OP_CORR) a->n_xs = 8;
    else if (op == TL_OP_COVAR) a->n_xs = 4;
    else if ((op == TL_OP_SUM || op == TL_OP_MEAN) && a->cls == C_FLT) a->n_xs = 1;
    else if ((op == TL_OP_MIN || op == TL_OP_MAX || op == TL_OP_FIRST ||
              op == TL_OP_LAST) && a->cls == C_FLT) a->n_f = 1;
    if (op == TL_OP_COUNT_DISTINCT && xt != TL_TNULL) {
        TlType kt[2] = {TL_TINT64, xt};
        if (tl_grouper_new(a->s.ctx, kt, 2, false, &a->cd, err) != TL_OK) {
            tl_agg_free(a);
            return err->code;
        }
    }
    *out = a;
    return TL_OK;
oom:
    tl_agg_free(a);
    return tl_error_oom(err);
}

/* Free an aggregate (see agg.h). */
static void q_free_chunks(TlAgg *a)
{
    for (int c = 0; c < a->n_qch; c++) tl_free(a->qch[c]);
    tl_free(a->qch);
    a->qch = NULL;
    a->n_qch = a->qch_cap = 0;
    a->qn = 0;
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

void tl_agg_free(TlAgg *a)
{
    if (!a) return;
    if (a->sv) {
        for (uint32_t g = 0; g < a->cap; g++) tl_free(a->sv[g].p);
        tl_free_big(a->sv);
    }
    tl_free(a->sep);
    tl_free_big(a->cnt);
    tl_free_big(a->acc);
    tl_free_big(a->iv);
    tl_free_big(a->f[0]);
    for (int k = 0; k < a->n_xs; k++) {
        tl_free_big(a->xs[k].acc);
        tl_free_big(a->xs[k].tag);
        tl_x_free(&a->xs[k]);
    }
    tl_free_big(a->valid);
    q_free_chunks(a);
    tl_free(a->qkey);
    tl_free(a->qstart);
    tl_grouper_free(a->cd);
    tl_free(a->cd_ids);
    tl_free(a->ix);
    tl_free(a->fx);
    tl_free(a->fy);
    tl_free(a);
}

/* The per-group state arrays op needs, with their element sizes: at most
 * 21 (cnt, acc or iv, f, valid, sv, two per exact sum).  Returns how
 * many. */
static int state_arrays(TlAgg *a, void ***arr, size_t *elem)
{
    TlOp op = a->s.op;
    int n = 0;
#define STATE(p) (arr[n] = (void **)&(p), elem[n++] = sizeof *(p))
    STATE(a->cnt);
    if ((op == TL_OP_SUM || op == TL_OP_MEAN) && a->cls == C_INT) STATE(a->acc);
    if (a->cls == C_INT &&
        (op == TL_OP_MIN || op == TL_OP_MAX || op == TL_OP_FIRST ||
         op == TL_OP_LAST || op == TL_OP_ANY || op == TL_OP_ALL))
        STATE(a->iv);
    for (int k = 0; k < a->n_f; k++) STATE(a->f[k]);
    for (int k = 0; k < a->n_xs; k++) {
        STATE(a->xs[k].acc);
        STATE(a->xs[k].tag);
    }
    if (op == TL_OP_FIRST || op == TL_OP_LAST) STATE(a->valid);
    if (op == TL_OP_STRING_AGG ||
        (a->cls == C_STR && (op == TL_OP_MIN || op == TL_OP_MAX ||
                             op == TL_OP_FIRST || op == TL_OP_LAST)))
        STATE(a->sv);
#undef STATE
    return n;
}

/* Make room for n_groups states (zeroed).  The arrays grow by remapping
 * once large (tl_realloc_big: no copy, new bytes zeroed), so 1e7 groups'
 * states are written once, not copied at every growth step.  The new
 * groups' states are then written once more, with zeros, before any update
 * reads them: an update adds to a state, and a first read of a fresh page
 * maps the shared zero page, which the write right after must replace
 * (a second fault, and with several threads a TLB flush on every core).
 * Written first, each page faults once. */
static TlStatus ensure(TlAgg *a, uint32_t n_groups, TlError *err)
{
    void **arr[26];
    size_t elem[26];
    if (n_groups <= a->touched) return TL_OK;
    int n = state_arrays(a, arr, elem);
    if (n_groups > a->cap) {
        /* 1.5x: the states of many groups are most of group-by's memory */
        uint64_t want = (uint64_t)a->cap + a->cap / 2;
        if (want < n_groups) want = n_groups;
        if (want < 16) want = 16; /* a small input stays small */
        if (want > UINT32_MAX) want = UINT32_MAX;
        for (int k = 0; k < n; k++) {
            void *q = tl_realloc_big(*arr[k], (size_t)want * elem[k]);
            if (!q) return tl_error_oom(err);
            *arr[k] = q;
        }
        a->cap = (uint32_t)want;
    }
    for (int k = 0; k < n; k++)
        memset((uint8_t *)*arr[k] + (size_t)a->touched * elem[k], 0,
               (size_t)(n_groups - a->touched) * elem[k]);
    a->touched = n_groups;
    return TL_OK;
}

/* ------------------------------------------------------------- scratch */

static bool scratch(void **p, int64_t *cap, size_t elem, int64_t n)
{
    if (*cap >= n) return true;
    void *q = tl_realloc(*p, (size_t)(n ? n : 1) * elem);
    if (!q) return false;
    *p = q;
    *cap = n;
    return true;
}

/* x as int64 values (direct for int64/timestamp, widened otherwise). */
static const int64_t *as_i64(TlAgg *a, const TlArray *x, int64_t n)
{
    if (x->type == TL_TINT64 || x->type == TL_TTIMESTAMP || x->type == TL_TTIMESTAMPTZ) return tl_array_i64(x);
    if (!scratch((void **)&a->ix, &a->ix_cap, sizeof *a->ix, n)) return NULL;
    if (x->type == TL_TDATE) {
        const int32_t *d = tl_array_i32(x);
        for (int64_t i = 0; i < n; i++) a->ix[i] = d[i];
    } else {
        for (int64_t i = 0; i < n; i++) a->ix[i] = tl_array_bool(x, i);
    }
    return a->ix;
}

/* x as double values (direct for float64, converted otherwise). */
static const double *as_f64(double **buf, int64_t *cap, const TlArray *x,
                            int64_t n)
{
    if (x->type == TL_TFLOAT64) return tl_array_f64(x);
    if (!scratch((void **)buf, cap, sizeof **buf, n)) return NULL;
    double *o = *buf;
    if (x->type == TL_TINT64 || x->type == TL_TTIMESTAMP || x->type == TL_TTIMESTAMPTZ) {
        const int64_t *v = tl_array_i64(x);
        for (int64_t i = 0; i < n; i++) o[i] = (double)v[i];
    } else if (x->type == TL_TDATE) {
        const int32_t *v = tl_array_i32(x);
        for (int64_t i = 0; i < n; i++) o[i] = v[i];
    } else {
        for (int64_t i = 0; i < n; i++) o[i] = tl_array_bool(x, i);
    }
    return o;
}

static bool sv_set(StrVal *s, const uint8_t *p, size_t len)
{
    if (s->cap < len) {
        size_t cap = len < 16 ? 16 : len;
        uint8_t *q = tl_realloc(s->p, cap);
        if (!q) return false;
        s->p = q;
        s->cap = cap;
    }
    if (len) memcpy(s->p, p, len);
    s->len = len;
    return true;
}

static bool sv_append(StrVal *s, const void *p, size_t len)
{
    if (s->cap - s->len < len) {
        size_t cap = s->cap * 2;
        if (cap < s->len + len) cap = s->len + len;
        if (cap < 16) cap = 16;
        uint8_t *q = tl_realloc(s->p, cap);
        if (!q) return false;
        s->p = q;
        s->cap = cap;
    }
    if (len) memcpy(s->p + s->len, p, len);
    s->len += len;
    return true;
}

static inline int sv_cmp(const uint8_t *p, size_t len, const StrVal *s)
{
    size_t m = len < s->len ? len : s->len;
    int c = m ? memcmp(p, s->p, m) : 0; /* s->p may be NULL when empty */
    if (c) return c;
    return (len > s->len) - (len < s->len);
}

/* The loop over the rows of x that hold a value, decided once per array. */
#define FOR_VALID(x, n, ...)                                                   \
    do {                                                                       \
        if ((x)->null_count == 0) {                                            \
            for (int64_t i = 0; i < (n); i++) { __VA_ARGS__ }                  \
        } else {                                                               \
            const uint8_t *bits_ = (x)->validity->data;                        \
            int64_t off_ = (x)->offset;                                        \
            for (int64_t i = 0; i < (n); i++)                                  \
                if (tl_bit_get(bits_, off_ + i)) { __VA_ARGS__ }               \
        }                                                                      \
    } while (0)

/* Inside a row loop over ids[0..n): prefetch the states of the row
 * PF_AHEAD rows ahead (states of many groups miss the cache). */
#define PF_AHEAD 16
#define PREFETCH2(p, q)                                                        \
    do {                                                                       \
        if (i + PF_AHEAD < n) {                                                \
            __builtin_prefetch(&(p)[ids[i + PF_AHEAD]], 1);                    \
            __builtin_prefetch(&(q)[ids[i + PF_AHEAD]], 1);                    \
        }                                                                      \
    } while (0)

/* NaN is greater than every number (DuckDB); -0.0 == 0.0 keeps the first. */
static inline bool f_less(double a, double b)
{
    return a < b || (b != b && a == a);
}

/* ------------------------------------------------------------- updates */

static TlStatus upd_count_distinct(TlAgg *a, const uint32_t *ids, int64_t n,
                                   const TlArray *x, TlError *err)
{
    TlBuf *buf = tl_buf_new((size_t)n * 8, false);
    if (!buf) return tl_error_oom(err);
    int64_t *gv = (int64_t *)buf->data;
    for (int64_t i = 0; i < n; i++) gv[i] = ids[i];
    TlArray *garr = tl_array_new(TL_TINT64, n, buf, NULL, 0, NULL, 0);
    if (!garr) return tl_error_oom(err);
    TlStatus st = TL_OK;
    if (!scratch((void **)&a->cd_ids, &a->cd_cap, sizeof *a->cd_ids, n)) {
        st = tl_error_oom(err);
        goto done;
    }
    uint32_t next = tl_grouper_count(a->cd);
    const TlArray *keys[2] = {garr, x};
    st = tl_grouper_map(a->cd, keys, n, a->cd_ids, err);
    if (st != TL_OK) goto done;
    /* New pairs get ids in row order: the first row of a new pair is the
     * row whose id equals the next expected one. */
    for (int64_t i = 0; i < n; i++) {
        if (a->cd_ids[i] == next) {
            next++;
            if (tl_array_valid(x, i)) a->cnt[ids[i]]++;
        }
    }
done:
    tl_array_release(garr);
    return st;
}

static TlStatus upd_minmax(TlAgg *a, const uint32_t *ids, int64_t n,
                           const TlArray *x, bool is_min, TlError *err)
{
    int64_t *cnt = a->cnt;
    if (a->cls == C_INT) {
        const int64_t *v = as_i64(a, x, n);
        if (!v) return tl_error_oom(err);
        int64_t *iv = a->iv;
        if (is_min)
            FOR_VALID(x, n, {
                uint32_t g = ids[i];
                if (!cnt[g] || v[i] < iv[g]) iv[g] = v[i];
                cnt[g] = 1;
            });
        else
            FOR_VALID(x, n, {
                uint32_t g = ids[i];
                if (!cnt[g] || v[i] > iv[g]) iv[g] = v[i];
                cnt[g] = 1;
            });
    } else if (a->cls == C_FLT) {
        const double *v = tl_array_f64(x);
        double *fv = a->f[0];
        if (is_min)
            FOR_VALID(x, n, {
                uint32_t g = ids[i];
                if (!cnt[g] || f_less(v[i], fv[g])) fv[g] = v[i];
                cnt[g] = 1;
            });
        else
            FOR_VALID(x, n, {
                uint32_t g = ids[i];
                if (!cnt[g] || f_less(fv[g], v[i])) fv[g] = v[i];
                cnt[g] = 1;
            });
    } else if (a->cls == C_STR) {
        const TlView *v = tl_array_views(x);
        int sign = is_min ? -1 : 1;
        FOR_VALID(x, n, {
            uint32_t g = ids[i];
            const uint8_t *p = tl_view_ptr(&v[i], x->data);
            uint32_t len = v[i].in.len;
            if (!cnt[g] || sv_cmp(p, len, &a->sv[g]) * sign > 0) {
                if (!sv_set(&a->sv[g], p, len)) return tl_error_oom(err);
            }
            cnt[g] = 1;
        });
    }
    return TL_OK;
}

/* first / last: the value of the group's first / last row, null included. */
static TlStatus upd_firstlast(TlAgg *a, const uint32_t *ids, int64_t n,
                              const TlArray *x, bool last, TlError *err)
{
    int64_t *cnt = a->cnt;
    uint8_t *valid = a->valid;
    bool all_null = x->type == TL_TNULL || x->null_count == n;
    if (all_null || a->cls == C_NONE) {
        for (int64_t i = 0; i < n; i++) {
            uint32_t g = ids[i];
            if (last || !cnt[g]) valid[g] = 0;
            cnt[g] = 1;
        }
        return TL_OK;
    }
    const int64_t *iv = NULL;
    const double *fv = NULL;
    const TlView *sv = NULL;
    if (a->cls == C_INT) {
        if (!(iv = as_i64(a, x, n))) return tl_error_oom(err);
    } else if (a->cls == C_FLT) {
        fv = tl_array_f64(x);
    } else {
        sv = tl_array_views(x);
    }
    for (int64_t i = 0; i < n; i++) {
        uint32_t g = ids[i];
        if (!last && cnt[g]) continue;
        cnt[g] = 1;
        bool ok = x->null_count == 0 || tl_array_valid(x, i);
        valid[g] = ok;
        if (!ok) continue;
        if (iv) a->iv[g] = iv[i];
        else if (fv) a->f[0][g] = fv[i];
        else if (!sv_set(&a->sv[g], tl_view_ptr(&sv[i], x->data), sv[i].in.len))
            return tl_error_oom(err);
    }
    return TL_OK;
}

static TlStatus upd_quantile(TlAgg *a, const uint32_t *ids, int64_t n,
                             const TlArray *x, TlError *err)
{
    const double *v = as_f64(&a->fx, &a->fx_cap, x, n);
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

/* Add v to exact sum k of group g, or fail with OOM. */
#define XADD(k, g, v)                                                          \
    do {                                                                       \
        if (!tl_x_add(&xs[k], (g), (v))) return tl_error_oom(err);             \
    } while (0)

/* Add the integer v to exact sum k of group g, or fail with OOM. */
#define XADDI(k, g, v)                                                         \
    do {                                                                       \
        if (!tl_x_add_int(&xs[k], (g), (v))) return tl_error_oom(err);         \
    } while (0)

/* x's values as int64 when x is of an integer class and every value is
 * below 2^26 in magnitude, NULL otherwise (the double path).  Squares and
 * products are then below 2^52: exact as doubles too, so adding them as
 * integers fills the same sums the double path would (the product whole,
 * no rounding error), whichever batches take which path. */
static const int64_t *small_ints(TlAgg *a, const TlArray *x, int64_t n)
{
    if (class_of(x->type) != C_INT) return NULL;
    const int64_t *v = as_i64(a, x, n);
    if (!v) return NULL;
    int64_t lo = 0, hi = 0;
    for (int64_t i = 0; i < n; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    return lo > -((int64_t)1 << 26) && hi < ((int64_t)1 << 26) ? v : NULL;
}

/* The rounding error of the product p = x*y (x*y = p + e exactly), or 0
 * when p is not finite (an overflowed product has no usable error). */
static inline double prod_err(double x, double y, double p)
{
    return isfinite(p) ? fma(x, y, -p) : 0.0;
}

/* corr/covar: exact sums of x, y, x*y (and x*x, y*y for corr), each
 * product as its rounded value plus its exact error, in their own sums. */
static TlStatus upd_corr(TlAgg *a, const uint32_t *ids, int64_t n,
                         const TlArray *x, const TlArray *y, TlError *err)
{
    if (x->type == TL_TNULL || y->type == TL_TNULL || x->null_count == n ||
        y->null_count == n)
        return TL_OK;
    int64_t *cnt = a->cnt;
    TlXSum *xs = a->xs;
    bool corr = a->s.op == TL_OP_CORR;
    bool nulls = x->null_count > 0 || y->null_count > 0;
    const int64_t *xi64 = x->type == TL_TINT64 && y->type == TL_TINT64
                              ? small_ints(a, x, n) : NULL;
    const int64_t *yi64 = xi64 ? small_ints(a, y, n) : NULL;
    if (yi64) {
        for (int64_t i = 0; i < n; i++) {
            if (nulls && !(tl_array_valid(x, i) && tl_array_valid(y, i))) continue;
            uint32_t g = ids[i];
            int64_t xi = xi64[i], yi = yi64[i];
            cnt[g]++;
            XADDI(0, g, xi);
            XADDI(1, g, yi);
            XADDI(2, g, xi * yi);
            if (corr) {
                XADDI(4, g, xi * xi);
                XADDI(6, g, yi * yi);
            }
        }
        return TL_OK;
    }
    const double *xv = as_f64(&a->fx, &a->fx_cap, x, n);
    const double *yv = as_f64(&a->fy, &a->fy_cap, y, n);
    if (!xv || !yv) return tl_error_oom(err);
    for (int64_t i = 0; i < n; i++) {
        if (nulls && !(tl_array_valid(x, i) && tl_array_valid(y, i))) continue;
        uint32_t g = ids[i];
        double xi = xv[i], yi = yv[i];
        cnt[g]++;
        XADD(0, g, xi);
        XADD(1, g, yi);
        double p = xi * yi;
        XADD(2, g, p);
        XADD(3, g, prod_err(xi, yi, p));
        if (corr) {
            p = xi * xi;
            XADD(4, g, p);
            XADD(5, g, prod_err(xi, xi, p));
            p = yi * yi;
            XADD(6, g, p);
            XADD(7, g, prod_err(yi, yi, p));
        }
    }
    return TL_OK;
}

/* Update from one batch (see agg.h). */
TlStatus tl_agg_update(TlAgg *a, const uint32_t *ids, int64_t n,
                       uint32_t n_groups, const TlArray *x, const TlArray *y,
                       TlError *err)
{
    TL_TRY(ensure(a, n_groups, err));
    if (n == 0) return TL_OK;
    TlOp op = a->s.op;
    int64_t *cnt = a->cnt;
    if (op == TL_OP_COUNT && (a->s.no_arg || !x)) {
        for (int64_t i = 0; i < n; i++) cnt[ids[i]]++;
        return TL_OK;
    }
    if (op == TL_OP_FIRST || op == TL_OP_LAST)
        return upd_firstlast(a, ids, n, x, op == TL_OP_LAST, err);
    if (op == TL_OP_CORR || op == TL_OP_COVAR) return upd_corr(a, ids, n, x, y, err);
    /* Everything else skips nulls: an all-null argument changes nothing. */
    if (x->type == TL_TNULL || x->null_count == n) return TL_OK;
    switch (op) {
    case TL_OP_COUNT:
        FOR_VALID(x, n, { cnt[ids[i]]++; });
        return TL_OK;
    case TL_OP_COUNT_DISTINCT:
        return upd_count_distinct(a, ids, n, x, err);
    case TL_OP_SUM:
    case TL_OP_MEAN:
        if (a->cls == C_INT) {
            const int64_t *v = as_i64(a, x, n);
            if (!v) return tl_error_oom(err);
            __int128 *acc = a->acc;
            FOR_VALID(x, n, {
                uint32_t g = ids[i];
                PREFETCH2(acc, cnt);
                acc[g] += v[i];
                cnt[g]++;
            });
        } else {
            const double *v = tl_array_f64(x);
            TlXSum *xs = a->xs;
            __int128 *acc = xs->acc;
            int32_t *tag = xs->tag;
            FOR_VALID(x, n, {
                uint32_t g = ids[i];
                PREFETCH2(acc, tag);
                if (i + PF_AHEAD < n) __builtin_prefetch(&cnt[ids[i + PF_AHEAD]], 1);
                if (!tl_x_add_at(xs, acc, tag, g, v[i])) return tl_error_oom(err);
                cnt[g]++;
            });
        }
        return TL_OK;
    case TL_OP_MIN:
    case TL_OP_MAX:
        return upd_minmax(a, ids, n, x, op == TL_OP_MIN, err);
    case TL_OP_MEDIAN:
    case TL_OP_QUANTILE:
        return upd_quantile(a, ids, n, x, err);
    case TL_OP_STD:
    case TL_OP_VAR: {
        TlXSum *xs = a->xs;
        const int64_t *iv = small_ints(a, x, n);
        if (iv) {
            FOR_VALID(x, n, {
                uint32_t g = ids[i];
                cnt[g]++;
                XADDI(0, g, iv[i]);
                XADDI(1, g, iv[i] * iv[i]);
            });
            return TL_OK;
        }
        const double *v = as_f64(&a->fx, &a->fx_cap, x, n);
        if (!v) return tl_error_oom(err);
        /* exact sums of x and x*x (rounded square and its error apart) */
        FOR_VALID(x, n, {
            uint32_t g = ids[i];
            double xi = v[i], p = xi * xi;
            cnt[g]++;
            XADD(0, g, xi);
            XADD(1, g, p);
            XADD(2, g, prod_err(xi, xi, p));
        });
        return TL_OK;
    }
    case TL_OP_STRING_AGG: {
        const TlView *v = tl_array_views(x);
        FOR_VALID(x, n, {
            uint32_t g = ids[i];
            StrVal *s = &a->sv[g];
            if (cnt[g] && !sv_append(s, a->sep, a->s.sep_len))
                return tl_error_oom(err);
            if (!sv_append(s, tl_view_ptr(&v[i], x->data), v[i].in.len))
                return tl_error_oom(err);
            cnt[g]++;
        });
        return TL_OK;
    }
    case TL_OP_ANY:
    case TL_OP_ALL: {
        int64_t *iv = a->iv;
        bool any = op == TL_OP_ANY;
        FOR_VALID(x, n, {
            uint32_t g = ids[i];
            int64_t b = tl_array_bool(x, i);
            if (!cnt[g]) iv[g] = b;
            else iv[g] = any ? (iv[g] | b) : (iv[g] & b);
            cnt[g]++;
        });
        return TL_OK;
    }
    default:
        return tl_error(err, TL_ERR_USAGE, "internal: not an aggregate");
    }
}

/* --------------------------------------------------------------- merge */

/* Whether partial states of op merge (see agg.h). */
bool tl_agg_mergeable(TlOp op)
{
    return op != TL_OP_COUNT_DISTINCT && tl_op_is_agg(op);
}

/* Fold the exact sums of p's group g into a's group d. */
static bool xs_merge(TlAgg *a, const TlAgg *p, uint32_t d, uint32_t g)
{
    for (int k = 0; k < a->n_xs; k++)
        if (!tl_x_merge(&a->xs[k], d, &p->xs[k], g)) return false;
    return true;
}

/* Merge partial states: p's groups src[i] (i when src is NULL) into a's
 * groups map[i], i < n_src (see agg.h). */
static TlStatus merge_impl(TlAgg *a, const TlAgg *p, const uint32_t *src,
                           const uint32_t *map, uint32_t n_src,
                           uint32_t n_groups, TlError *err)
{
    TlOp op = a->s.op;
    if (!tl_agg_mergeable(op) || p->s.op != op || p->cls != a->cls || a->sealed)
        return tl_error(err, TL_ERR_USAGE, "internal: aggregate states do not merge");
    TL_TRY(ensure(a, n_groups, err));
    if (n_src == 0) return TL_OK;
    uint32_t top = n_src;
    if (src) {
        top = 0;
        for (uint32_t i = 0; i < n_src; i++)
            if (src[i] >= top) top = src[i] + 1;
        if (op == TL_OP_MEDIAN || op == TL_OP_QUANTILE)
            return tl_error(err, TL_ERR_USAGE, "internal: quantiles do not merge "
                            "by subsets");
    }
    if (p->cap < top)
        return tl_error(err, TL_ERR_USAGE, "internal: partial aggregate too small");
    int64_t *cnt = a->cnt;
    const int64_t *pc = p->cnt;
    switch (op) {
    case TL_OP_COUNT:
        for (uint32_t i = 0; i < n_src; i++) cnt[map[i]] += pc[src ? src[i] : i];
        return TL_OK;
    case TL_OP_SUM:
    case TL_OP_MEAN:
        if (a->acc) {
            for (uint32_t i = 0; i < n_src; i++) {
                uint32_t g = src ? src[i] : i, d = map[i];
                a->acc[d] += p->acc[g];
                cnt[d] += pc[g];
            }
        } else if (a->n_xs) {
            for (uint32_t i = 0; i < n_src; i++) {
                uint32_t g = src ? src[i] : i, d = map[i];
                if (!pc[g]) continue;
                if (!xs_merge(a, p, d, g)) return tl_error_oom(err);
                cnt[d] += pc[g];
            }
        }
        return TL_OK;
    case TL_OP_MIN:
    case TL_OP_MAX: {
        bool is_min = op == TL_OP_MIN;
        for (uint32_t i = 0; i < n_src; i++) {
            uint32_t g = src ? src[i] : i, d = map[i];
            if (!pc[g]) continue;
            if (a->cls == C_INT) {
                int64_t v = p->iv[g];
                if (!cnt[d] || (is_min ? v < a->iv[d] : v > a->iv[d])) a->iv[d] = v;
            } else if (a->cls == C_FLT) {
                double v = p->f[0][g];
                if (!cnt[d] || (is_min ? f_less(v, a->f[0][d]) : f_less(a->f[0][d], v)))
                    a->f[0][d] = v;
            } else if (a->cls == C_STR) {
                const StrVal *s = &p->sv[g];
                if (!cnt[d] ||
                    sv_cmp(s->p ? s->p : (const uint8_t *)"", s->len, &a->sv[d]) *
                            (is_min ? -1 : 1) > 0) {
                    if (!sv_set(&a->sv[d], s->p, s->len)) return tl_error_oom(err);
                }
            }
            cnt[d] = 1;
        }
        return TL_OK;
    }
    case TL_OP_FIRST:
    case TL_OP_LAST: {
        bool last = op == TL_OP_LAST;
        for (uint32_t i = 0; i < n_src; i++) {
            uint32_t g = src ? src[i] : i, d = map[i];
            if (!pc[g] || (!last && cnt[d])) continue;
            cnt[d] = 1;
            a->valid[d] = p->valid[g];
            if (!p->valid[g]) continue;
            if (a->cls == C_INT) a->iv[d] = p->iv[g];
            else if (a->cls == C_FLT) a->f[0][d] = p->f[0][g];
            else if (a->cls == C_STR && !sv_set(&a->sv[d], p->sv[g].p, p->sv[g].len))
                return tl_error_oom(err);
        }
        return TL_OK;
    }
    case TL_OP_MEDIAN:
    case TL_OP_QUANTILE:
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
        for (uint32_t i = 0; i < n_src; i++) cnt[map[i]] += pc[i];
        return TL_OK;
    case TL_OP_STD:
    case TL_OP_VAR:
    case TL_OP_CORR:
    case TL_OP_COVAR:
        for (uint32_t i = 0; i < n_src; i++) {
            uint32_t g = src ? src[i] : i, d = map[i];
            if (!pc[g]) continue;
            if (!xs_merge(a, p, d, g)) return tl_error_oom(err);
            cnt[d] += pc[g];
        }
        return TL_OK;
    case TL_OP_STRING_AGG:
        for (uint32_t i = 0; i < n_src; i++) {
            uint32_t g = src ? src[i] : i, d = map[i];
            if (!pc[g]) continue;
            StrVal *s = &a->sv[d];
            if (cnt[d] && !sv_append(s, a->sep, a->s.sep_len)) return tl_error_oom(err);
            if (!sv_append(s, p->sv[g].p, p->sv[g].len)) return tl_error_oom(err);
            cnt[d] += pc[g];
        }
        return TL_OK;
    case TL_OP_ANY:
    case TL_OP_ALL: {
        bool any = op == TL_OP_ANY;
        for (uint32_t i = 0; i < n_src; i++) {
            uint32_t g = src ? src[i] : i, d = map[i];
            if (!pc[g]) continue;
            int64_t b = p->iv[g];
            if (!cnt[d]) a->iv[d] = b;
            else a->iv[d] = any ? (a->iv[d] | b) : (a->iv[d] & b);
            cnt[d] += pc[g];
        }
        return TL_OK;
    }
    default:
        return tl_error(err, TL_ERR_USAGE, "internal: not an aggregate");
    }
}

/* See agg.h. */
TlStatus tl_agg_merge(TlAgg *a, const TlAgg *p, const uint32_t *map,
                      uint32_t n_src, uint32_t n_groups, TlError *err)
{
    return merge_impl(a, p, NULL, map, n_src, n_groups, err);
}

/* See agg.h. */
bool tl_agg_merge_some_ok(TlOp op)
{
    return tl_agg_mergeable(op) && op != TL_OP_MEDIAN && op != TL_OP_QUANTILE;
}

/* See agg.h. */
TlStatus tl_agg_merge_some(TlAgg *a, const TlAgg *p, const uint32_t *src,
                           const uint32_t *dst, uint32_t n, uint32_t n_groups,
                           TlError *err)
{
    return merge_impl(a, p, src, dst, n, n_groups, err);
}

/* -------------------------------------------------------------- finish */

/* Append an integer-class value to a builder of any type. */
static bool put_i64(TlBuilder *b, int64_t v)
{
    switch (b->type) {
    case TL_TINT64: case TL_TTIMESTAMP: case TL_TTIMESTAMPTZ: return tl_builder_append_i64(b, v);
    case TL_TDATE: return tl_builder_append_i32(b, (int32_t)v);
    case TL_TBOOL: return tl_builder_append_bool(b, v != 0);
    case TL_TFLOAT64: return tl_builder_append_f64(b, (double)v);
    default: return tl_builder_append_null(b);
    }
}

static bool put_f64(TlBuilder *b, double v)
{
    switch (b->type) {
    case TL_TFLOAT64: return tl_builder_append_f64(b, v);
    case TL_TINT64: case TL_TTIMESTAMP: case TL_TTIMESTAMPTZ: return tl_builder_append_i64(b, (int64_t)v);
    default: return tl_builder_append_null(b);
    }
}

/* Distribute the collected values by group (counting sort, reading in
 * input order) and sort each group's values by their total-order images;
 * the collected (value, group) pairs are freed. */
static TlStatus seal_quantile(TlAgg *a, uint32_t n_groups, TlError *err)
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
    return TL_OK;
}

/* End the input (see agg.h). */
TlStatus tl_agg_seal(TlAgg *a, uint32_t n_groups, TlError *err)
{
    TL_TRY(ensure(a, n_groups, err));
    a->n_groups = n_groups;
    a->sealed = true;
    if (a->s.op == TL_OP_SUM && a->cls == C_INT && a->s.x_type != TL_TNULL) {
        for (uint32_t g = 0; g < n_groups; g++) {
            __int128 s = a->acc[g];
            if (s > INT64_MAX || s < INT64_MIN) {
                a->bad_group = g;
                err->code = TL_ERR_DATA;
                err->msg[0] = '\0';
                return TL_ERR_DATA;
            }
        }
    }
    if ((a->s.op == TL_OP_MEDIAN || a->s.op == TL_OP_QUANTILE) &&
        a->s.x_type != TL_TNULL)
        TL_TRY(seal_quantile(a, n_groups, err));
    return TL_OK;
}

/* The group whose result did not fit (see agg.h). */
uint32_t tl_agg_bad_group(const TlAgg *a)
{
    return a->bad_group;
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

/* The q-quantile of group g from its images (DuckDB quantile_cont):
 * sorted, or with s.select found by selection (reordering them). */
static double quantile_q(const TlAgg *a, uint32_t g, double q)
{
    int64_t c = a->cnt[g];
    uint64_t *v = a->qkey + a->qstart[g];
    double rn = (double)(c - 1) * q;
    double lo = floor(rn), hi = ceil(rn);
    int64_t l = (int64_t)lo;
    if (a->s.select) select_u64(v, c, l);
    double vl = tl_k_f64_from_image(v[l]);
    if (lo == hi) return vl;
    uint64_t h = v[l + 1];
    /* selected: the next value is the smallest after position l */
    for (int64_t i = l + 2; a->s.select && i < c; i++)
        if (v[i] < h) h = v[i];
    double vh = tl_k_f64_from_image(h);
    return vl + (rn - lo) * (vh - vl);
}

static double quantile_of(const TlAgg *a, uint32_t g)
{
    return quantile_q(a, g, a->s.q);
}

/* See agg.h. */
bool tl_agg_quantile_at(TlAgg *a, uint32_t g, double q, double *out)
{
    if (!a->sealed || g >= a->n_groups || a->s.x_type == TL_TNULL ||
        (a->s.op != TL_OP_MEDIAN && a->s.op != TL_OP_QUANTILE) || !a->cnt[g])
        return false;
    *out = quantile_q(a, g, q);
    return true;
}

/* The co-moment of exact sums xs[x], xs[y], xs[p] + xs[e] (products) of
 * group g; a second moment (x = y) is never below 0. */
static double moment(const TlXSum *xs, int x, int y, int p, int e, uint32_t g,
                     int64_t c, int64_t div)
{
    double m = tl_x_comoment(&xs[x], &xs[y], &xs[p], &xs[e], g, c, (double)div);
    return x == y && m < 0 ? 0.0 : m;
}

/* Append the result of group g; false on OOM. */
static bool put_result(const TlAgg *a, TlBuilder *b, uint32_t g)
{
    TlOp op = a->s.op;
    int64_t c = a->cnt[g];
    if (op == TL_OP_COUNT || op == TL_OP_COUNT_DISTINCT) return put_i64(b, c);
    /* An argument of the null type: no values. */
    if (a->s.x_type == TL_TNULL && !a->s.no_arg) return tl_builder_append_null(b);
    switch (op) {
    case TL_OP_SUM:
        if (!c) return tl_builder_append_null(b);
        if (a->cls == C_INT) return put_i64(b, (int64_t)a->acc[g]); /* sealed: fits */
        return put_f64(b, tl_x_round(&a->xs[0], g));
    case TL_OP_MEAN:
        if (!c) return tl_builder_append_null(b);
        if (a->cls == C_INT)
            return put_f64(b, (double)((long double)a->acc[g] / (long double)c));
        return put_f64(b, tl_x_mean(&a->xs[0], g, c));
    case TL_OP_MIN: case TL_OP_MAX: case TL_OP_FIRST: case TL_OP_LAST:
        if (!c || ((op == TL_OP_FIRST || op == TL_OP_LAST) && !a->valid[g]))
            return tl_builder_append_null(b);
        if (a->cls == C_INT) return put_i64(b, a->iv[g]);
        if (a->cls == C_FLT) return put_f64(b, a->f[0][g]);
        if (a->cls == C_STR && b->type == TL_TSTRING)
            return tl_builder_append_str(b, a->sv[g].p ? (const void *)a->sv[g].p
                                                       : (const void *)"",
                                         a->sv[g].len);
        return tl_builder_append_null(b);
    case TL_OP_MEDIAN: case TL_OP_QUANTILE:
        if (!c) return tl_builder_append_null(b);
        return put_f64(b, quantile_of(a, g));
    case TL_OP_STD: case TL_OP_VAR: {
        if (c < 2) return tl_builder_append_null(b);
        const TlXSum *xs = a->xs;
        double var = moment(xs, 0, 0, 1, 2, g, c, c - 1);
        return put_f64(b, op == TL_OP_STD ? sqrt(var) : var);
    }
    case TL_OP_COVAR:
        if (c < 2) return tl_builder_append_null(b);
        return put_f64(b, tl_x_comoment(&a->xs[0], &a->xs[1], &a->xs[2], &a->xs[3],
                                        g, c, (double)(c - 1)));
    case TL_OP_CORR: {
        if (c < 2) return tl_builder_append_null(b);
        /* DuckDB's population covariance over population stds, as
         * Mxy / sqrt(Mxx Myy) (null when a std is 0): a perfect linear
         * relation of small integers gives exactly 1 or -1 */
        const TlXSum *xs = a->xs;
        double mxy = moment(xs, 0, 1, 2, 3, g, c, 1);
        double mxx = moment(xs, 0, 0, 4, 5, g, c, 1);
        double myy = moment(xs, 1, 1, 6, 7, g, c, 1);
        double den = mxx * myy;
        if (mxx == 0 || myy == 0) return tl_builder_append_null(b);
        den = isfinite(den) && den != 0 ? sqrt(den) : sqrt(mxx) * sqrt(myy);
        return put_f64(b, mxy / den);
    }
    case TL_OP_STRING_AGG:
        if (!c || b->type != TL_TSTRING) return tl_builder_append_null(b);
        return tl_builder_append_str(b, a->sv[g].p ? (const void *)a->sv[g].p
                                                   : (const void *)"",
                                     a->sv[g].len);
    case TL_OP_ANY: case TL_OP_ALL:
        if (!c) return tl_builder_append_null(b);
        return put_i64(b, a->iv[g]);
    default:
        return tl_builder_append_null(b);
    }
}

/* Results of a range of groups (see agg.h). */
TlStatus tl_agg_results(TlAgg *a, uint32_t first, uint32_t n, TlArray **out,
                        TlError *err)
{
    *out = NULL;
    if (!a->sealed || (uint64_t)first + n > a->n_groups)
        return tl_error(err, TL_ERR_DATA, "internal error: aggregate results "
                        "out of range");
    TlBuilder b;
    tl_builder_init(&b, a->s.out_type);
    if (!tl_builder_reserve(&b, n)) goto oom;
    for (uint32_t g = first; g < first + n; g++)
        if (!put_result(a, &b, g)) goto oom;
    *out = tl_builder_finish(&b);
    tl_builder_free(&b);
    if (!*out) return tl_error_oom(err);
    return TL_OK;
oom:
    tl_builder_free(&b);
    return tl_error_oom(err);
}

/* Seal and produce every result (see agg.h). */
TlStatus tl_agg_finish(TlAgg *a, uint32_t n_groups, TlArray **out, TlError *err)
{
    *out = NULL;
    TL_TRY(tl_agg_seal(a, n_groups, err));
    return tl_agg_results(a, 0, n_groups, out, err);
}
