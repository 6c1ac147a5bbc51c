/* run-unit: weight=28 */
/*
 * test_groupby_diff.c -- differential test of the group-by engine (the
 * groupers of lib/group and the aggregate states of lib/exec/agg.c) against
 * a reference written here the slow, obvious way.
 *
 * Reference: sort the row numbers by key tuple (nulls equal, NaN = NaN,
 * -0.0 = 0.0, row number as the tie break), so each group is a run whose
 * first element is the group's first row; order the runs by that first row
 * (the engine numbers groups in order of first appearance) and aggregate
 * each run naively: integer sums in __int128, float statistics in long
 * double with two passes, quantiles by sorting the run's values.
 *
 * Engine: the same table in batches of random sizes, keys mapped by the
 * grouper tl_grouper_new picks (and, for fixed-width keys, again with
 * TALLY_GROUP_ROWS forcing the byte-row grouper), every aggregate updated
 * from the ids and finished.  Integer, string and boolean results must be
 * equal; float results within a relative bound (1e-9 for sums, means and
 * quantiles, 1e-7 for the second-moment statistics) on well-conditioned data.
 *
 * Tables are seeded (deterministic), with nulls in keys and values, every key
 * type alone and in combinations, 1 to 1e5 groups, empty input and all-null
 * keys.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../lib/exec/agg.h"
#include "../../lib/plan/resolve.h"
#include "../../lib/group/group.h"
#include "tl_test.h"

/* ------------------------------------------------------------ the table */

typedef struct Col {
    TlType t;
    int64_t *i;   /* int64, date, bool */
    double *f;
    char **s;
    uint8_t *null;
} Col;

enum { XI, XD, XF, YF, XS, XB, N_VAL };

typedef struct Table {
    int64_t n;
    int nk;
    Col key[4];
    Col val[N_VAL];
} Table;

static uint64_t rng;
static uint32_t rnd(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng >> 33);
}
static double unif(void) { return (double)rnd() / 2147483648.0; } /* [0,1) */

static void col_alloc(Col *c, TlType t, int64_t n)
{
    c->t = t;
    c->i = tl_calloc((size_t)n + 1, sizeof *c->i);
    c->f = tl_calloc((size_t)n + 1, sizeof *c->f);
    c->s = tl_calloc((size_t)n + 1, sizeof *c->s);
    c->null = tl_calloc((size_t)n + 1, 1);
}

static void col_free(Col *c, int64_t n)
{
    if (c->s)
        for (int64_t r = 0; r < n; r++) tl_free(c->s[r]);
    tl_free(c->i);
    tl_free(c->f);
    tl_free(c->s);
    tl_free(c->null);
}

static char *dupstr(const char *s)
{
    size_t n = strlen(s);
    char *p = tl_malloc(n + 1);
    memcpy(p, s, n + 1);
    return p;
}

/* Key j of group number g (injective in g for int, date, string, float). */
static void key_value(Col *c, int j, int64_t r, uint32_t g)
{
    char buf[64];
    switch (c->t) {
    case TL_TINT64: c->i[r] = (int64_t)g * 7 - 3 + j; break;
    case TL_TDATE: c->i[r] = (int64_t)g - 500; break;
    case TL_TBOOL: c->i[r] = (g >> j) & 1; break;
    case TL_TFLOAT64:
        /* 0 and -0.0 are one key, every NaN another */
        c->f[r] = g == 0 ? ((rnd() & 1) ? -0.0 : 0.0) : g == 1 ? NAN : g * 0.5;
        break;
    default:
        if (g % 3 == 0) snprintf(buf, sizeof buf, "k%u", g); /* inline view */
        else snprintf(buf, sizeof buf, "a-longer-key-string-%u-%d", g, j);
        c->s[r] = dupstr(buf);
        break;
    }
}

static void make_table(Table *t, const TlType *kt, int nk, int64_t n,
                       uint32_t groups, double pnull)
{
    memset(t, 0, sizeof *t);
    t->n = n;
    t->nk = nk;
    for (int j = 0; j < nk; j++) col_alloc(&t->key[j], kt[j], n);
    TlType vt[N_VAL] = {TL_TINT64, TL_TINT64, TL_TFLOAT64, TL_TFLOAT64,
                        TL_TSTRING, TL_TBOOL};
    for (int v = 0; v < N_VAL; v++) col_alloc(&t->val[v], vt[v], n);
    for (int64_t r = 0; r < n; r++) {
        uint32_t g = rnd() % groups;
        for (int j = 0; j < nk; j++) {
            if (pnull >= 1.0 || unif() < pnull) t->key[j].null[r] = 1;
            else key_value(&t->key[j], j, r, g);
        }
        Col *c = t->val;
        for (int v = 0; v < N_VAL; v++) c[v].null[r] = rnd() % 10 == 0;
        c[XI].i[r] = (int64_t)(rnd() % 2000001) - 1000000 +
                     ((rnd() & 7) == 0 ? (int64_t)1 << 40 : 0);
        c[XD].i[r] = rnd() % 5;
        c[XF].f[r] = unif() * 200.0 - 100.0;
        c[YF].f[r] = 0.5 * c[XF].f[r] + unif() * 20.0;
        char buf[32];
        snprintf(buf, sizeof buf, "s%u", rnd() % 50);
        c[XS].s[r] = dupstr(buf);
        c[XB].i[r] = rnd() % 3 != 0;
    }
}

static void free_table(Table *t)
{
    for (int j = 0; j < t->nk; j++) col_free(&t->key[j], t->n);
    for (int v = 0; v < N_VAL; v++) col_free(&t->val[v], t->n);
}

/* Rows [lo, hi) of c as an array. */
static TlArray *col_array(const Col *c, int64_t lo, int64_t hi)
{
    TlBuilder b;
    tl_builder_init(&b, c->t);
    for (int64_t r = lo; r < hi; r++) {
        if (c->null[r]) { tl_builder_append_null(&b); continue; }
        switch (c->t) {
        case TL_TINT64: tl_builder_append_i64(&b, c->i[r]); break;
        case TL_TDATE: tl_builder_append_i32(&b, (int32_t)c->i[r]); break;
        case TL_TBOOL: tl_builder_append_bool(&b, c->i[r] != 0); break;
        case TL_TFLOAT64: tl_builder_append_f64(&b, c->f[r]); break;
        default: tl_builder_append_str(&b, c->s[r], strlen(c->s[r])); break;
        }
    }
    return tl_builder_finish(&b);
}

/* ------------------------------------------------------------ reference */

static const Table *cmp_t;

static int cmp_cell(const Col *c, int64_t a, int64_t b)
{
    if (c->null[a] || c->null[b]) return (int)c->null[b] - (int)c->null[a];
    switch (c->t) {
    case TL_TFLOAT64: {
        double x = c->f[a], y = c->f[b];
        bool nx = x != x, ny = y != y;
        if (nx || ny) return (int)nx - (int)ny;
        return x < y ? -1 : x > y;
    }
    case TL_TSTRING: return strcmp(c->s[a], c->s[b]);
    default: return c->i[a] < c->i[b] ? -1 : c->i[a] > c->i[b];
    }
}

static int cmp_rows(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    for (int j = 0; j < cmp_t->nk; j++) {
        int c = cmp_cell(&cmp_t->key[j], a, b);
        if (c) return c;
    }
    return a < b ? -1 : a > b;
}

static int cmp_first(const void *pa, const void *pb)
{
    int64_t a = ((const int64_t *)pa)[0], b = ((const int64_t *)pb)[0];
    return a < b ? -1 : a > b;
}

static int cmp_dbl(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

static int cmp_str(const void *pa, const void *pb)
{
    return strcmp(*(char *const *)pa, *(char *const *)pb);
}

/* The aggregates under test. */
typedef struct AggCase {
    TlOp op;
    int x, y;     /* value columns, -1 none */
    double q;
} AggCase;

static const AggCase cases[] = {
    {TL_OP_COUNT, -1, -1, 0}, {TL_OP_COUNT, XI, -1, 0},
    {TL_OP_SUM, XI, -1, 0}, {TL_OP_SUM, XF, -1, 0},
    {TL_OP_MEAN, XF, -1, 0}, {TL_OP_MEAN, XI, -1, 0},
    {TL_OP_MIN, XI, -1, 0}, {TL_OP_MAX, XF, -1, 0},
    {TL_OP_MIN, XS, -1, 0}, {TL_OP_MAX, XS, -1, 0},
    {TL_OP_FIRST, XI, -1, 0}, {TL_OP_LAST, XS, -1, 0},
    {TL_OP_COUNT_DISTINCT, XD, -1, 0}, {TL_OP_COUNT_DISTINCT, XS, -1, 0},
    {TL_OP_MEDIAN, XF, -1, 0.5}, {TL_OP_QUANTILE, XI, -1, 0.25},
    {TL_OP_STD, XF, -1, 0}, {TL_OP_VAR, XI, -1, 0},
    {TL_OP_CORR, XF, YF, 0}, {TL_OP_COVAR, XF, YF, 0},
    {TL_OP_STRING_AGG, XS, -1, 0}, {TL_OP_ANY, XB, -1, 0},
    {TL_OP_ALL, XB, -1, 0},
};
#define N_CASES ((int)(sizeof cases / sizeof cases[0]))

/* One expected result. */
typedef struct Want {
    bool null;
    long double f;   /* float results */
    __int128 i;      /* integer / bool results */
    char *s;         /* string results (owned) */
} Want;

static double as_f(const Col *c, int64_t r)
{
    return c->t == TL_TFLOAT64 ? c->f[r] : (double)c->i[r];
}

/* The expected result of aggregate case k over rows rows[0..m). */
static void reference(const Table *t, const AggCase *k, const int64_t *rows,
                      int64_t m, Want *w)
{
    memset(w, 0, sizeof *w);
    const Col *x = k->x >= 0 ? &t->val[k->x] : NULL;
    const Col *y = k->y >= 0 ? &t->val[k->y] : NULL;
    int64_t nv = 0;
    if (k->op == TL_OP_COUNT && !x) {
        w->i = m;
        return;
    }
    if (k->op == TL_OP_FIRST || k->op == TL_OP_LAST) {
        int64_t r = rows[k->op == TL_OP_FIRST ? 0 : m - 1];
        w->null = x->null[r];
        if (x->t == TL_TSTRING) w->s = w->null ? NULL : dupstr(x->s[r]);
        else w->i = x->i[r];
        return;
    }
    /* the non-null values, in input order */
    int64_t *v = tl_malloc((size_t)(m + 1) * sizeof *v);
    for (int64_t i = 0; i < m; i++)
        if (!x->null[rows[i]] && (!y || !y->null[rows[i]])) v[nv++] = rows[i];
    switch (k->op) {
    case TL_OP_COUNT: w->i = nv; break;
    case TL_OP_SUM: case TL_OP_MEAN:
        w->null = nv == 0;
        for (int64_t i = 0; i < nv; i++) {
            if (x->t == TL_TFLOAT64) w->f += x->f[v[i]];
            else w->i += x->i[v[i]];
        }
        if (x->t != TL_TFLOAT64) w->f = (long double)w->i;
        if (k->op == TL_OP_MEAN && nv) w->f /= nv;
        break;
    case TL_OP_MIN: case TL_OP_MAX: {
        w->null = nv == 0;
        int64_t best = nv ? v[0] : 0;
        for (int64_t i = 1; i < nv; i++) {
            int c = cmp_cell(x, v[i], best);
            if (k->op == TL_OP_MIN ? c < 0 : c > 0) best = v[i];
        }
        if (nv) {
            if (x->t == TL_TSTRING) w->s = dupstr(x->s[best]);
            else if (x->t == TL_TFLOAT64) w->f = x->f[best];
            else w->i = x->i[best];
        }
        break;
    }
    case TL_OP_COUNT_DISTINCT: {
        if (x->t == TL_TSTRING) {
            char **s = tl_malloc((size_t)(nv + 1) * sizeof *s);
            for (int64_t i = 0; i < nv; i++) s[i] = x->s[v[i]];
            qsort(s, (size_t)nv, sizeof *s, cmp_str);
            for (int64_t i = 0; i < nv; i++) w->i += i == 0 || strcmp(s[i], s[i - 1]);
            tl_free(s);
        } else {
            double *d = tl_malloc((size_t)(nv + 1) * sizeof *d);
            for (int64_t i = 0; i < nv; i++) d[i] = as_f(x, v[i]);
            qsort(d, (size_t)nv, sizeof *d, cmp_dbl);
            for (int64_t i = 0; i < nv; i++) w->i += i == 0 || d[i] != d[i - 1];
            tl_free(d);
        }
        break;
    }
    case TL_OP_MEDIAN: case TL_OP_QUANTILE: {
        w->null = nv == 0;
        if (!nv) break;
        double *d = tl_malloc((size_t)nv * sizeof *d);
        for (int64_t i = 0; i < nv; i++) d[i] = as_f(x, v[i]);
        qsort(d, (size_t)nv, sizeof *d, cmp_dbl);
        double rn = (double)(nv - 1) * k->q, lo = floor(rn), hi = ceil(rn);
        w->f = d[(int64_t)lo] + (long double)(rn - lo) * (d[(int64_t)hi] - d[(int64_t)lo]);
        tl_free(d);
        break;
    }
    case TL_OP_STD: case TL_OP_VAR: case TL_OP_CORR: case TL_OP_COVAR: {
        w->null = nv < 2;
        if (nv < 2) break;
        long double mx = 0, my = 0, sxx = 0, syy = 0, sxy = 0;
        for (int64_t i = 0; i < nv; i++) {
            mx += as_f(x, v[i]);
            if (y) my += as_f(y, v[i]);
        }
        mx /= nv;
        my /= nv;
        for (int64_t i = 0; i < nv; i++) {
            long double dx = as_f(x, v[i]) - mx, dy = y ? as_f(y, v[i]) - my : 0;
            sxx += dx * dx;
            syy += dy * dy;
            sxy += dx * dy;
        }
        if (k->op == TL_OP_VAR) w->f = sxx / (nv - 1);
        else if (k->op == TL_OP_STD) w->f = sqrtl(sxx / (nv - 1));
        else if (k->op == TL_OP_COVAR) w->f = sxy / (nv - 1);
        else w->f = sxy / sqrtl(sxx * syy);
        break;
    }
    case TL_OP_STRING_AGG: {
        w->null = nv == 0;
        if (!nv) break;
        size_t len = 0;
        for (int64_t i = 0; i < nv; i++) len += strlen(x->s[v[i]]) + 1;
        w->s = tl_malloc(len + 1);
        w->s[0] = '\0';
        len = 0;
        for (int64_t i = 0; i < nv; i++) {
            size_t l = strlen(x->s[v[i]]);
            if (i) w->s[len++] = ',';
            memcpy(w->s + len, x->s[v[i]], l + 1);
            len += l;
        }
        break;
    }
    case TL_OP_ANY: case TL_OP_ALL:
        w->null = nv == 0;
        w->i = k->op == TL_OP_ALL;
        for (int64_t i = 0; i < nv; i++) {
            if (k->op == TL_OP_ANY && x->i[v[i]]) w->i = 1;
            if (k->op == TL_OP_ALL && !x->i[v[i]]) w->i = 0;
        }
        break;
    default:
        break;
    }
    tl_free(v);
}

/* ------------------------------------------------------------ comparing */

static bool same_str(const TlArray *a, int64_t i, const char *want)
{
    const TlView *v = &tl_array_views(a)[i];
    return v->in.len == strlen(want) &&
           memcmp(tl_view_ptr(v, a->data), want, v->in.len) == 0;
}

static int n_reported;

static bool check_result(const AggCase *k, const TlArray *res, int64_t g,
                         const Want *w, const char *what)
{
    bool ok;
    bool valid = tl_array_valid(res, g);
    if (w->null || !valid) {
        ok = w->null == !valid;
    } else if (res->type == TL_TSTRING) {
        ok = same_str(res, g, w->s);
    } else if (res->type == TL_TFLOAT64) {
        double got = tl_array_f64(res)[g];
        long double tol = (k->op == TL_OP_STD || k->op == TL_OP_VAR ||
                           k->op == TL_OP_CORR || k->op == TL_OP_COVAR)
                              ? 1e-7L : 1e-9L;
        long double scale = fabsl(w->f) > 1 ? fabsl(w->f) : 1;
        if (k->op == TL_OP_COVAR || k->op == TL_OP_CORR) scale *= 100;
        ok = fabsl((long double)got - w->f) <= tol * scale;
        if (!ok && n_reported++ < 5)
            fprintf(stderr, "  %s: %s group %lld: got %.17g want %.17Lg\n", what,
                    tl_op_info(k->op)->name, (long long)g, got, w->f);
        return ok;
    } else if (res->type == TL_TBOOL) {
        ok = tl_array_bool(res, g) == (w->i != 0);
    } else if (res->type == TL_TDATE) {
        ok = tl_array_i32(res)[g] == (int32_t)w->i;
    } else {
        ok = tl_array_i64(res)[g] == (int64_t)w->i;
    }
    if (!ok && n_reported++ < 5)
        fprintf(stderr, "  %s: %s group %lld differs\n", what,
                tl_op_info(k->op)->name, (long long)g);
    return ok;
}

/* Key value of an engine key column equals row r's key (its first row:
 * the same float bits, so -0.0 stays -0.0). */
static bool key_matches(const TlArray *a, int64_t g, const Col *c, int64_t r)
{
    if (c->null[r]) return !tl_array_valid(a, g);
    if (!tl_array_valid(a, g)) return false;
    switch (c->t) {
    case TL_TINT64: return tl_array_i64(a)[g] == c->i[r];
    case TL_TDATE: return tl_array_i32(a)[g] == (int32_t)c->i[r];
    case TL_TBOOL: return tl_array_bool(a, g) == (c->i[r] != 0);
    case TL_TFLOAT64: {
        double x = tl_array_f64(a)[g], y = c->f[r];
        return (x != x && y != y) || memcmp(&x, &y, 8) == 0;
    }
    default: return same_str(a, g, c->s[r]);
    }
}

static void case_spec(const Table *t, int c, TlAggSpec *s)
{
    memset(s, 0, sizeof *s);
    s->op = cases[c].op;
    s->no_arg = cases[c].x < 0;
    s->x_type = s->no_arg ? TL_TNULL : t->val[cases[c].x].t;
    s->y_type = cases[c].y >= 0 ? t->val[cases[c].y].t : TL_TNULL;
    s->q = cases[c].q ? cases[c].q : 0.5;
    s->out_type = tl_agg_result_type(s->op, s->x_type);
    if (s->no_arg) s->out_type = TL_TINT64;
}

/* The morsel path of lib/exec/op_agg.c for one batch: group the batch with
 * a grouper of its own (local ids in first-appearance order), update
 * partial aggregates over the local ids, seal the local grouper and merge
 * it into the global one (one lookup per local group), then merge the partials
 * in batch order; count_distinct (not mergeable) is updated with the rows'
 * mapped ids.  Writes the rows' global ids to ids[0..n). */
static void morsel_batch(const Table *t, TlGrouper *gr, TlAgg **ag, TlArray **k,
                         TlArray **v, int64_t n, uint32_t *ids)
{
    TlError err = {0};
    TlType kt[4];
    for (int j = 0; j < t->nk; j++) kt[j] = t->key[j].t;
    TlGrouper *lg = NULL;
    CHECK(tl_grouper_new(NULL, kt, t->nk, true, &lg, &err) == TL_OK);
    uint32_t *lids = tl_malloc((size_t)n * sizeof *lids);
    CHECK(tl_grouper_map(lg, (const TlArray *const *)k, n, lids, &err) == TL_OK);
    uint32_t nl = tl_grouper_count(lg);
    TlAgg *part[N_CASES] = {0};
    for (int c = 0; c < N_CASES; c++) {
        TlAggSpec s;
        case_spec(t, c, &s);
        if (!tl_agg_mergeable(s.op)) continue;
        CHECK(tl_agg_new(&s, &part[c], &err) == TL_OK);
        CHECK(tl_agg_update(part[c], lids, n, nl, cases[c].x >= 0 ? v[cases[c].x] : NULL,
                            cases[c].y >= 0 ? v[cases[c].y] : NULL, &err) == TL_OK);
    }
    CHECK(tl_grouper_seal_local(lg, &err) == TL_OK);
    uint32_t *map = tl_malloc(((size_t)nl + 1) * sizeof *map);
    CHECK(tl_grouper_merge(gr, lg, map, &err) == TL_OK);
    uint32_t ng = tl_grouper_count(gr);
    for (int64_t i = 0; i < n; i++) ids[i] = map[lids[i]];
    for (int c = 0; c < N_CASES; c++) {
        if (part[c])
            CHECK(tl_agg_merge(ag[c], part[c], map, nl, ng, &err) == TL_OK);
        else
            CHECK(tl_agg_update(ag[c], ids, n, ng, cases[c].x >= 0 ? v[cases[c].x] : NULL,
                                cases[c].y >= 0 ? v[cases[c].y] : NULL, &err) == TL_OK);
        tl_agg_free(part[c]);
    }
    tl_free(map);
    tl_free(lids);
    tl_grouper_free(lg);
}

/* Run the engine over t and compare with the reference; returns the
 * number of mismatches.  morsel: batches go through partial states and
 * tl_agg_merge (morsel_batch) instead of updating the global states. */
static int64_t run_diff(const Table *t, const char *what, bool morsel)
{
    TlError err = {0};
    int64_t bad = 0;
    TlType kt[4];
    for (int j = 0; j < t->nk; j++) kt[j] = t->key[j].t;
    TlGrouper *gr = NULL;
    CHECK(tl_grouper_new(NULL, kt, t->nk, true, &gr, &err) == TL_OK);
    if (!gr) return 1;
    TlAgg *ag[N_CASES] = {0};
    for (int c = 0; c < N_CASES; c++) {
        TlAggSpec s;
        case_spec(t, c, &s);
        CHECK(tl_agg_new(&s, &ag[c], &err) == TL_OK);
    }
    uint32_t *ids = tl_malloc((size_t)(t->n + 1) * sizeof *ids);
    for (int64_t lo = 0; lo < t->n;) {
        int64_t hi = lo + 1 + rnd() % 5000;
        if (hi > t->n) hi = t->n;
        TlArray *k[4] = {0}, *v[N_VAL] = {0};
        for (int j = 0; j < t->nk; j++) k[j] = col_array(&t->key[j], lo, hi);
        for (int c = 0; c < N_VAL; c++) v[c] = col_array(&t->val[c], lo, hi);
        if (morsel) {
            morsel_batch(t, gr, ag, k, v, hi - lo, ids + lo);
            for (int j = 0; j < t->nk; j++) tl_array_release(k[j]);
            for (int c = 0; c < N_VAL; c++) tl_array_release(v[c]);
            lo = hi;
            continue;
        }
        CHECK(tl_grouper_map(gr, (const TlArray *const *)k, hi - lo, ids + lo,
                             &err) == TL_OK);
        uint32_t ng = tl_grouper_count(gr);
        for (int c = 0; c < N_CASES; c++)
            CHECK(tl_agg_update(ag[c], ids + lo, hi - lo, ng,
                                cases[c].x >= 0 ? v[cases[c].x] : NULL,
                                cases[c].y >= 0 ? v[cases[c].y] : NULL,
                                &err) == TL_OK);
        for (int j = 0; j < t->nk; j++) tl_array_release(k[j]);
        for (int c = 0; c < N_VAL; c++) tl_array_release(v[c]);
        lo = hi;
    }
    uint32_t ng = tl_grouper_count(gr);

    /* reference groups: runs of the key-sorted rows, by first row */
    int64_t *order = tl_malloc((size_t)(t->n + 1) * sizeof *order);
    for (int64_t r = 0; r < t->n; r++) order[r] = r;
    cmp_t = t;
    qsort(order, (size_t)t->n, sizeof *order, cmp_rows);
    int64_t *runs = tl_malloc(2 * ((size_t)t->n + 1) * sizeof *runs); /* first, start */
    int64_t n_runs = 0;
    for (int64_t i = 0; i < t->n; i++) {
        bool start = i == 0;
        for (int j = 0; !start && j < t->nk; j++)
            start = cmp_cell(&t->key[j], order[i - 1], order[i]) != 0;
        if (start) {
            runs[2 * n_runs] = order[i];
            runs[2 * n_runs + 1] = i;
            n_runs++;
        }
    }
    int64_t *bounds = tl_malloc(((size_t)n_runs + 1) * 2 * sizeof *bounds);
    for (int64_t g = 0; g < n_runs; g++) {
        bounds[2 * g] = runs[2 * g];  /* first row */
        bounds[2 * g + 1] = runs[2 * g + 1] |
                            ((g + 1 < n_runs ? runs[2 * g + 3] : t->n) << 32);
    }
    qsort(bounds, (size_t)n_runs, 2 * sizeof *bounds, cmp_first);
    CHECK_EQ_INT(ng, n_runs);
    if ((int64_t)ng != n_runs) bad++;
    /* every row's id is its run's rank by first row */
    for (int64_t g = 0; bad == 0 && g < n_runs; g++) {
        int64_t s = bounds[2 * g + 1] & 0xffffffff, e = bounds[2 * g + 1] >> 32;
        for (int64_t i = s; i < e; i++)
            if (ids[order[i]] != (uint32_t)g) {
                bad++;
                break;
            }
    }
    TlArray *keys[4] = {0};
    if (t->nk > 0 && ng > 0)
        CHECK(tl_grouper_keys(gr, 0, ng, keys, &err) == TL_OK);
    for (int64_t g = 0; bad == 0 && t->nk > 0 && g < n_runs; g++)
        for (int j = 0; j < t->nk; j++)
            if (!keys[j] || !key_matches(keys[j], g, &t->key[j], bounds[2 * g])) {
                bad++;
                break;
            }
    if (bad && n_reported++ < 5) fprintf(stderr, "  %s: group ids or keys differ\n", what);
    for (int c = 0; c < N_CASES; c++) {
        TlArray *res = NULL;
        CHECK(tl_agg_finish(ag[c], ng, &res, &err) == TL_OK);
        if (!res) { bad++; continue; }
        CHECK_EQ_INT(res->length, ng);
        for (int64_t g = 0; g < n_runs && g < res->length; g++) {
            int64_t s = bounds[2 * g + 1] & 0xffffffff, e = bounds[2 * g + 1] >> 32;
            Want w;
            /* the group's rows are order[s..e), in input order */
            reference(t, &cases[c], order + s, e - s, &w);
            if (!check_result(&cases[c], res, g, &w, what)) bad++;
            tl_free(w.s);
        }
        tl_array_release(res);
    }
    for (int j = 0; j < t->nk; j++) tl_array_release(keys[j]);
    for (int c = 0; c < N_CASES; c++) tl_agg_free(ag[c]);
    tl_grouper_free(gr);
    tl_free(ids);
    tl_free(order);
    tl_free(runs);
    tl_free(bounds);
    return bad;
}

/* ------------------------------------------------------------ the tests */

typedef struct Config {
    TlType kt[4];
    int nk;
} Config;

static const Config configs[] = {
    {{TL_TINT64}, 1}, {{TL_TSTRING}, 1}, {{TL_TFLOAT64}, 1}, {{TL_TDATE}, 1},
    {{TL_TBOOL}, 1}, {{TL_TINT64, TL_TINT64}, 2},
    {{TL_TINT64, TL_TSTRING}, 2}, {{TL_TFLOAT64, TL_TBOOL, TL_TDATE}, 3},
    {{TL_TSTRING, TL_TSTRING, TL_TINT64, TL_TFLOAT64}, 4},
};
#define N_CONFIGS ((int)(sizeof configs / sizeof configs[0]))

static void diff_one(const Config *c, int64_t n, uint32_t groups, double pnull,
                     bool also_rows)
{
    Table t;
    char what[128];
    make_table(&t, c->kt, c->nk, n, groups, pnull);
    snprintf(what, sizeof what, "%d keys (first %s), %lld rows, %u groups, "
             "nulls %.2f", c->nk, c->nk ? tl_type_name(c->kt[0]) : "-",
             (long long)n, groups, pnull);
    for (int m = 0; m < 2; m++) {
        uint64_t seed = rng; /* the same batch sizes in both modes */
        int64_t bad = run_diff(&t, what, m == 1);
        CHECK_EQ_INT(bad, 0);
        if (also_rows && tl_group_fixed_fits(c->kt, c->nk)) {
            setenv("TALLY_GROUP_ROWS", "1", 1);
            bad = run_diff(&t, what, m == 1);
            unsetenv("TALLY_GROUP_ROWS");
            CHECK_EQ_INT(bad, 0);
        }
        if (m == 0) rng = seed;
    }
    free_table(&t);
}

TL_TEST(diff_every_key_shape)
{
    rng = 1;
    for (int c = 0; c < N_CONFIGS; c++) {
        diff_one(&configs[c], 3000, 1, 0.0, false);
        diff_one(&configs[c], 5000, 40, 0.05, true);
        diff_one(&configs[c], 20000, 3000, 0.02, true);
    }
}

TL_TEST(diff_many_groups)
{
    /* a third under ASan (tl_test_scaled): 33,333 groups still grow every
     * table several times */
    long rows = tl_test_scaled(150000, 3), groups = tl_test_scaled(100000, 3);
    rng = 2;
    diff_one(&configs[0], rows, groups, 0.01, false);
    diff_one(&configs[6], rows, groups, 0.01, false);
    diff_one(&configs[5], rows, groups, 0.0, true);
}

TL_TEST(diff_empty_and_all_null_keys)
{
    rng = 3;
    for (int c = 0; c < N_CONFIGS; c++) {
        diff_one(&configs[c], 0, 10, 0.0, true);
        diff_one(&configs[c], 2000, 10, 1.0, true); /* every key null: one group */
    }
    Config none = {{TL_TINT64}, 0};
    diff_one(&none, 4000, 1, 0.0, false); /* no keys: one group */
}

/* A sum leaving int64 fails at seal and names the group; quantile outside
 * 0..1 and sum over strings are refused by tl_agg_new. */
TL_TEST(diff_errors)
{
    TlError err = {0};
    TlAggSpec s;
    memset(&s, 0, sizeof s);
    s.op = TL_OP_SUM;
    s.x_type = TL_TINT64;
    s.out_type = TL_TINT64;
    TlAgg *a = NULL;
    CHECK(tl_agg_new(&s, &a, &err) == TL_OK);
    TlBuilder b;
    tl_builder_init(&b, TL_TINT64);
    tl_builder_append_i64(&b, 5);
    tl_builder_append_i64(&b, INT64_MAX);
    tl_builder_append_i64(&b, 1);
    TlArray *x = tl_builder_finish(&b);
    uint32_t ids[3] = {0, 1, 1};
    CHECK(tl_agg_update(a, ids, 3, 2, x, NULL, &err) == TL_OK);
    CHECK(tl_agg_seal(a, 2, &err) == TL_ERR_DATA);
    CHECK_EQ_INT(tl_agg_bad_group(a), 1);
    tl_agg_free(a);
    tl_array_release(x);

    s.x_type = TL_TSTRING;
    a = NULL;
    CHECK(tl_agg_new(&s, &a, &err) == TL_ERR_USAGE);
    CHECK(a == NULL);
}

int main(void)
{
    TL_RUN(diff_every_key_shape);
    TL_RUN(diff_many_groups);
    TL_RUN(diff_empty_and_all_null_keys);
    TL_RUN(diff_errors);
    return tl_test_summary(__FILE__);
}
