/*
 * sort_spill.c -- the external sort's merge, for op_sort.c: the sorted runs
 * it spilled (formats/spill.h) merged back into one order.
 *
 * A run is a sequence of blocks in run order (the output batches of the
 * in-memory sort of that run's chunks).  The merge reads one block per run
 * at a time, evaluates the sort keys on it again and encodes them
 * (kernels/rowenc.h: memcmp order is the sort order), and picks rows with
 * a loser tree over the runs' heads: log2(k) comparisons a row.  Ties go
 * to the run of the lower index, and runs are numbered in input order,
 * each cut at a chunk boundary; so with the in-memory sort being stable,
 * the merged order is (key, input position): the in-memory sort's order,
 * the same bytes.  An output batch is gathered from the blocks its rows
 * came from (tl_array_take_multi: strings keep pointing into the blocks),
 * cut every batch_rows rows as the in-memory output is.
 *
 * A key that evaluated to the null type in one block (a null literal
 * branch) is made a null of the key's resolved type, as unify_key does for
 * the in-memory sort, so every run's rows encode alike.
 *
 * Fan-in: each open run holds about two of the largest blocks written (the
 * block and its encoded keys and scratch); the merge takes a reservation
 * for as many runs as the budget allows, at least two.  With more runs
 * than that, consecutive groups are merged into new runs (in order, so
 * ties still go to the earlier input) in a new spill file, and the old
 * file is closed, until the rest fits: a cascaded merge.  Below two runs'
 * worth the sort fails, naming the minimum.
 */
#include <stdlib.h>

#include "sort_impl.h"

typedef struct Cur {
    uint64_t off, end;   /* the run's next block, its end */
    TlArray **cols;      /* the current block's data columns, or NULL: done */
    TlRows keys;         /* its encoded keys */
    int64_t n, i;        /* its rows, the next one */
    int src;             /* its index in the batch's sources */
} Cur;

typedef struct SortMerge {
    TlSpill *file;       /* the runs' file (borrowed) */
    Cur *cur;
    int k;
    int *tree;           /* loser tree: tree[1..k) losers; winner apart */
    int winner;
    TlArray ***src;      /* blocks the batch being built takes rows from */
    int n_src, cap_src;
    TlArray ***retired;  /* blocks finished during this batch (owned) */
    int n_ret, cap_ret;
    uint32_t *part, *row;
    int64_t per;         /* rows per output batch */
} SortMerge;

static void free_cols(const SortOp *s, TlArray **cols)
{
    if (!cols) return;
    for (int c = 0; c < s->n_data; c++) tl_array_release(cols[c]);
    tl_free(cols);
}

static void merge_close(const SortOp *s, SortMerge *m)
{
    if (!m) return;
    for (int r = 0; m->cur && r < m->k; r++) {
        free_cols(s, m->cur[r].cols);
        tl_k_rows_free(&m->cur[r].keys);
    }
    for (int i = 0; i < m->n_ret; i++) free_cols(s, m->retired[i]);
    tl_free(m->cur);
    tl_free(m->tree);
    tl_free(m->src);
    tl_free(m->retired);
    tl_free(m->part);
    tl_free(m->row);
    tl_free(m);
}

static bool grow(void *pp, int *cap, int need, size_t size)
{
    void **p = pp;
    if (need <= *cap) return true;
    int c = *cap ? *cap * 2 : 16;
    while (c < need) c *= 2;
    void *q = tl_realloc(*p, (size_t)c * size);
    if (!q) return false;
    *p = q;
    *cap = c;
    return true;
}

/* The next block of run c, keys encoded; c->cols NULL at the run's end. */
static TlStatus load(const SortOp *s, SortMerge *m, Cur *c, TlError *err)
{
    TlStatus st = TL_OK;
    TlArray **keys = NULL;
    TlBatch *b = NULL;
    tl_k_rows_free(&c->keys);
    c->cols = NULL;
    c->n = c->i = 0;
    if (c->off >= c->end) return TL_OK;
    TlArray **cols = tl_calloc((size_t)s->n_data + 1, sizeof *cols);
    keys = tl_calloc((size_t)s->n_keys + 1, sizeof *keys);
    if (!cols || !keys) goto oom;
    st = tl_spill_get(m->file, &c->off, cols, s->n_data, &c->n, err);
    if (st != TL_OK) goto done;
    if (!(b = tl_batch_new(s->base.schema, s->n_data, c->n))) goto oom;
    for (int i = 0; i < s->n_data; i++) b->cols[i] = tl_array_retain(cols[i]);
    for (int k = 0; k < s->n_keys && st == TL_OK; k++) {
        st = tl_eval(s->ea, s->keys[k], b, &keys[k], err);
        TlType t = (TlType)tl_ea_node(s->ea, s->keys[k])->type;
        if (st == TL_OK && keys[k]->type == TL_TNULL && t != TL_TNULL) {
            TlArray *nn = tl_array_new_null(t, c->n);
            if (!nn) goto oom;
            tl_array_release(keys[k]);
            keys[k] = nn;
        }
    }
    if (st == TL_OK)
        st = tl_k_rowenc((const TlArray *const *)keys, s->n_keys, c->n, s->desc,
                         s->nulls_first, &c->keys, err);
    goto done;
oom:
    st = tl_error_oom(err);
done:
    tl_batch_free(b);
    for (int k = 0; keys && k < s->n_keys; k++) tl_array_release(keys[k]);
    tl_free(keys);
    if (st == TL_OK) c->cols = cols;
    else free_cols(s, cols);
    return st;
}

/* Run a's head comes before run b's: key, then run (a finished run last). */
static bool less(const SortMerge *m, int a, int b)
{
    const Cur *x = &m->cur[a], *y = &m->cur[b];
    if (!x->cols) return !y->cols && a < b;
    if (!y->cols) return true;
    size_t la, lb;
    const uint8_t *pa = tl_rows_at(&x->keys, x->i, &la), *pb = tl_rows_at(&y->keys, y->i, &lb);
    int c = tl_rows_cmp(pa, la, pb, lb);
    return c < 0 || (c == 0 && a < b);
}

/* The winner of the subtree at node (leaves: k + run), losers kept. */
static int build(SortMerge *m, int node)
{
    if (node >= m->k) return node - m->k;
    int l = build(m, 2 * node), r = build(m, 2 * node + 1);
    if (less(m, l, r)) {
        m->tree[node] = r;
        return l;
    }
    m->tree[node] = l;
    return r;
}

/* Run w's head changed: play it up to the root. */
static void replay(SortMerge *m, int w)
{
    for (int node = (w + m->k) / 2; node >= 1; node /= 2)
        if (less(m, m->tree[node], w)) {
            int t = m->tree[node];
            m->tree[node] = w;
            w = t;
        }
    m->winner = w;
}

/* A merge of runs[0..k) of file. */
static TlStatus merge_open(const SortOp *s, TlSpill *file, const TlSpillSpan *runs, int k,
                           SortMerge **out, TlError *err)
{
    SortMerge *m = tl_calloc(1, sizeof *m);
    *out = NULL;
    if (!m) return tl_error_oom(err);
    m->file = file;
    m->k = k;
    m->per = tl_ctx_batch_rows(s->base.ctx);
    m->cur = tl_calloc((size_t)k, sizeof *m->cur);
    m->tree = tl_calloc((size_t)k + 1, sizeof *m->tree);
    m->part = tl_malloc((size_t)m->per * sizeof *m->part);
    m->row = tl_malloc((size_t)m->per * sizeof *m->row);
    if (!m->cur || !m->tree || !m->part || !m->row) {
        merge_close(s, m);
        return tl_error_oom(err);
    }
    for (int r = 0; r < k; r++) {
        m->cur[r].off = runs[r].off;
        m->cur[r].end = runs[r].end;
        TlStatus st = load(s, m, &m->cur[r], err);
        if (st != TL_OK) {
            merge_close(s, m);
            return st;
        }
    }
    m->winner = k == 1 ? 0 : build(m, 1);
    *out = m;
    return TL_OK;
}

/* The next output batch of m (NULL at the end). */
static TlStatus merge_batch(const SortOp *s, SortMerge *m, TlBatch **out, TlError *err)
{
    TlStatus st = TL_OK;
    int64_t n = 0;
    *out = NULL;
    m->n_src = 0;
    if (!grow(&m->src, &m->cap_src, m->k, sizeof *m->src)) return tl_error_oom(err);
    for (int r = 0; r < m->k; r++)
        if (m->cur[r].cols) {
            m->cur[r].src = m->n_src;
            m->src[m->n_src++] = m->cur[r].cols;
        }
    while (n < m->per) {
        int w = m->winner;
        Cur *c = &m->cur[w];
        if (!c->cols) break;
        m->part[n] = (uint32_t)c->src;
        m->row[n] = (uint32_t)c->i;
        n++;
        if (++c->i == c->n) {
            if (!grow(&m->retired, &m->cap_ret, m->n_ret + 1, sizeof *m->retired) ||
                !grow(&m->src, &m->cap_src, m->n_src + 1, sizeof *m->src))
                return tl_error_oom(err);
            m->retired[m->n_ret++] = c->cols;
            TL_TRY(load(s, m, c, err));
            if (c->cols) {
                c->src = m->n_src;
                m->src[m->n_src++] = c->cols;
            }
        }
        replay(m, w);
    }
    if (n > 0) {
        TlBatch *b = tl_batch_new(s->base.schema, s->n_data, n);
        TlArray **parts = tl_malloc(((size_t)m->n_src + 1) * sizeof *parts);
        if (!b || !parts) st = tl_error_oom(err);
        for (int c = 0; st == TL_OK && c < s->n_data; c++) {
            for (int j = 0; j < m->n_src; j++) parts[j] = m->src[j][c];
            b->cols[c] = tl_array_take_multi(parts, m->n_src, m->part, m->row, n);
            if (!b->cols[c]) st = tl_error_oom(err);
        }
        tl_free(parts);
        if (st == TL_OK) *out = b;
        else tl_batch_free(b);
    }
    for (int i = 0; i < m->n_ret; i++) free_cols(s, m->retired[i]);
    m->n_ret = 0;
    return st;
}

/* Runs [0, n) of s merged into groups of fan: each group one new run in a
 * new spill file, which replaces the old one. */
static TlStatus cascade(SortOp *s, int fan, TlError *err)
{
    TlSpill *nf = NULL;
    int n_new = 0;
    TlStatus st = tl_spill_open(s->res.b, TL_TUNING(s->base.ctx)->no_tmpfile, &nf, err);
    if (st != TL_OK) return st;
    for (int g = 0; st == TL_OK && g < s->n_runs; g += fan) {
        int k = s->n_runs - g < fan ? s->n_runs - g : fan;
        SortMerge *m = NULL;
        TlSpillSpan span = {tl_spill_end(nf), 0, 0};
        st = merge_open(s, s->spill, s->runs + g, k, &m, err);
        while (st == TL_OK) {
            TlBatch *b = NULL;
            size_t raw = 0;
            st = merge_batch(s, m, &b, err);
            if (st != TL_OK || !b) break;
            st = tl_spill_put(nf, b->cols, s->n_data, b->n_rows, &raw, err);
            span.rows += b->n_rows;
            if (raw > s->max_block) s->max_block = raw;
            tl_batch_free(b);
        }
        merge_close(s, m);
        span.end = tl_spill_end(nf);
        s->runs[n_new++] = span; /* g >= n_new: the groups read are behind */
    }
    if (st != TL_OK) {
        tl_spill_close(nf);
        return st;
    }
    tl_spill_close(s->spill);
    s->spill = nf;
    s->n_runs = n_new;
    return TL_OK;
}

/* See sort_impl.h. */
TlStatus tl_sort_merge_start(SortOp *s, TlError *err)
{
    TlBudget *b = s->res.b;
    /* an open run: its block, the block's keys, evaluated and encoded */
    uint64_t per_run = (uint64_t)s->max_block * 2 + 4096;
    int fan = s->n_runs;
    if (b && b->force_spill) {
        fan = 3;
    } else if (b) {
        uint64_t used = atomic_load(&b->used), room = b->limit > used ? b->limit - used : 0;
        uint64_t f = room / per_run;
        if (f < (uint64_t)fan) fan = (int)f;
    }
    if (fan > 1024) fan = 1024;
    if (fan > s->n_runs) fan = s->n_runs;
    int need = s->n_runs < 2 ? s->n_runs : 2;
    if (fan < need || !tl_reserve_grow(&s->res, (uint64_t)fan * per_run))
        return tl_budget_too_small(b, "sort (merging its spilled runs)",
                                   (uint64_t)need * per_run, err);
    while (s->n_runs > fan) TL_TRY(cascade(s, fan, err));
    return merge_open(s, s->spill, s->runs, s->n_runs, &s->merge, err);
}

/* See sort_impl.h. */
TlStatus tl_sort_merge_next(SortOp *s, TlBatch **out, TlError *err)
{
    return merge_batch(s, s->merge, out, err);
}

/* See sort_impl.h. */
void tl_sort_merge_free(SortOp *s)
{
    merge_close(s, s->merge);
    s->merge = NULL;
}
