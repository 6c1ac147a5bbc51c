/*
 * agg_fam.h -- what an aggregate family implements, and the state it
 * shares with the others (internal to lib/exec/agg.c and lib/exec/agg/).
 *
 * An aggregate is one row of the table (table.c): a TlAggFns of functions
 * over the states of every group, kept as structures of arrays indexed by
 * group id in a TlAgg.  The facade (lib/exec/agg.c, agg.h) does what is the
 * same for all of them once: grows the arrays the family names (`arrays`)
 * as new group ids come, skips an argument array that holds no value for
 * the families that skip nulls (`skips_nulls`), checks that two states
 * merge, answers null for every group of an argument of the null type, and
 * turns the results into one array.  A family does only its own part:
 *
 *   accepts   whether its kernels take these argument types (resolve has
 *             checked the user's call already: this guards the callers
 *             inside exec, op_describe among them)
 *   init      its state beyond the per-group arrays (optional)
 *   arrays    its per-group arrays, after cnt, with their element sizes
 *   update    one typed pass over a batch: rows [0, n) go to groups ids[]
 *   merge     a partial's groups src[i] (i when src is NULL) into map[i],
 *             as if its rows came after every row seen (NULL: the family
 *             does not merge and is updated with the rows' mapped ids)
 *   seal      the end of the input: what can fail on the data or needs
 *             every group (optional)
 *   results   groups [first, first+n) appended to a builder of out_type
 *   free      its state beyond the per-group arrays (optional)
 *
 * Adding an aggregate: a TL_OP_* and its spelling (lib/expr), its type rule
 * (lib/expr/agg_rules.c), a TlAggFns in its family's file and its row in
 * table.c.
 */
#ifndef TL_AGG_FAM_H
#define TL_AGG_FAM_H

#include <math.h>
#include <string.h>

#include "../../../kernels/xsum.h"
#include "../../group/group.h"
#include "../agg.h"

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

typedef struct TlAggFns TlAggFns;

struct TlAgg {
    TlAggSpec s;
    const TlAggFns *fn;
    ValClass cls;       /* value class of x */
    char *sep;          /* string_agg: the separator (owned) */
    uint32_t cap;       /* groups allocated */
    uint32_t touched;   /* groups whose states ensure wrote (<= cap) */
    int64_t *cnt;       /* rows / values seen (also "has a value") */
    __int128 *acc;      /* int128 sums (sum, mean over integers) */
    int64_t *iv;        /* integer-class values (bool, date widened) */
    double *f[1];       /* float values (min/max/first/last) */
    int n_f;
    TlXSum xs[8];       /* exact float sums (moments.c, count_sum.c) */
    int n_xs;
    uint8_t *valid;     /* first/last: whether the kept value is non-null */
    StrVal *sv;         /* string values and string_agg buffers */
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
    void *fam;          /* a family's own state (init/free) */
    int64_t *ix;        /* scratch: x widened to int64 */
    double *fx, *fy;    /* scratch: x, y as double */
    int64_t ix_cap, fx_cap, fy_cap;
};

struct TlAggFns {
    bool (*accepts)(TlType x, TlType y);
    TlStatus (*init)(TlAgg *a, TlError *err);
    int (*arrays)(TlAgg *a, void ***arr, size_t *elem, int n);
    TlStatus (*update)(TlAgg *a, const uint32_t *ids, int64_t n,
                       const TlArray *x, const TlArray *y, TlError *err);
    TlStatus (*merge)(TlAgg *a, const TlAgg *p, const uint32_t *src,
                      const uint32_t *map, uint32_t n, TlError *err);
    bool merge_some;    /* merge takes a subset (src): not for row-kept values */
    bool skips_nulls;   /* an argument with no value changes nothing */
    bool counts;        /* the result counts (0, not null, for no values) */
    TlStatus (*seal)(TlAgg *a, uint32_t n_groups, TlError *err);
    bool (*results)(TlAgg *a, TlBuilder *b, uint32_t first, uint32_t n);
    void (*free)(TlAgg *a);
};

/* table.c: the row of op, or NULL when op is no aggregate. */
const TlAggFns *tl_agg_fns(TlOp op);

/* The families' rows. */
extern const TlAggFns tl_agg_count, tl_agg_sum, tl_agg_mean;
extern const TlAggFns tl_agg_min, tl_agg_max, tl_agg_any, tl_agg_all;
extern const TlAggFns tl_agg_first, tl_agg_last;
extern const TlAggFns tl_agg_std, tl_agg_var, tl_agg_corr, tl_agg_covar;
extern const TlAggFns tl_agg_median, tl_agg_quantile;
extern const TlAggFns tl_agg_count_distinct;
extern const TlAggFns tl_agg_string_agg;
extern const TlAggFns tl_agg_count_if, tl_agg_mode, tl_agg_arg_max, tl_agg_arg_min;
extern const TlAggFns tl_agg_quantile_disc, tl_agg_approx_count_distinct;

/* ------------------------------------------------ helpers (common.c) */

ValClass tl_agg_class(TlType t);
bool tl_agg_numeric(TlType t);          /* int64, float64 or null */
/* accepts: any type; numbers (and null) only. */
bool tl_agg_any_type(TlType x, TlType y);
bool tl_agg_numbers(TlType x, TlType y);

/* A scratch array of at least n elements; false on OOM. */
bool tl_agg_scratch(void **p, int64_t *cap, size_t elem, int64_t n);
/* x as int64 values (direct for int64/timestamp, widened into a->ix). */
const int64_t *tl_agg_as_i64(TlAgg *a, const TlArray *x, int64_t n);
/* x as double values (direct for float64, converted into *buf). */
const double *tl_agg_as_f64(double **buf, int64_t *cap, const TlArray *x,
                            int64_t n);

/* Append an integer-class / a float value to a builder of any type. */
/* The states of an aggregate that keeps one value per group (min, max,
 * first, last): init asks for a float array when x is float64; arrays
 * lists int64 values, float values and string values by x's class. */
TlStatus tl_agg_value_init(TlAgg *a, TlError *err);
int tl_agg_value_arrays(TlAgg *a, void ***arr, size_t *elem, int n);
bool tl_agg_put_i64(TlBuilder *b, int64_t v);
bool tl_agg_put_f64(TlBuilder *b, double v);

static inline bool sv_set(StrVal *s, const uint8_t *p, size_t len)
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

static inline bool sv_append(StrVal *s, const void *p, size_t len)
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

static inline const void *sv_ptr(const StrVal *s)
{
    return s->p ? (const void *)s->p : (const void *)"";
}

/* NaN is greater than every number (DuckDB); -0.0 == 0.0 keeps the first. */
static inline bool f_less(double a, double b)
{
    return a < b || (b != b && a == a);
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

/* The source group of the i-th pair of a merge. */
#define MSRC(src, i) ((src) ? (src)[i] : (uint32_t)(i))

/* Add v to exact sum k of group g (xs in scope), or fail with OOM. */
#define XADD(k, g, v)                                                          \
    do {                                                                       \
        if (!tl_x_add(&xs[k], (g), (v))) return tl_error_oom(err);             \
    } while (0)
#define XADDI(k, g, v)                                                         \
    do {                                                                       \
        if (!tl_x_add_int(&xs[k], (g), (v))) return tl_error_oom(err);         \
    } while (0)

/* count_sum.c: the counts of groups [first, first+n) as results. */
bool tl_agg_count_results(TlAgg *a, TlBuilder *b, uint32_t first, uint32_t n);

/* minmax.c: each group's kept value (iv, f[0] or sv by class), null for
 * a group without one or whose kept value is null (valid, if kept). */
bool tl_agg_kept_results(TlAgg *a, TlBuilder *b, uint32_t first, uint32_t n);

/* The exact sums of p's group g folded into a's group d; false on OOM. */
bool tl_agg_xs_merge(TlAgg *a, const TlAgg *p, uint32_t d, uint32_t g);
/* arrays: the n_xs exact sums' per-group arrays, appended from arr[n]. */
int tl_agg_xs_arrays(TlAgg *a, void ***arr, size_t *elem, int n);
/* merge of families whose state is cnt and exact sums. */
TlStatus tl_agg_xs_merge_fn(TlAgg *a, const TlAgg *p, const uint32_t *src,
                            const uint32_t *map, uint32_t n, TlError *err);

#endif
