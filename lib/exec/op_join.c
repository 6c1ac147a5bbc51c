/*
 * op_join.c -- hash join: inner, left, right, full, semi, anti.
 *
 * Build: the right input is read whole.  Only the columns the plan needs
 * from it (its keys and the output's right columns; projection pushdown has
 * already narrowed the right scan) are kept, each concatenated into one
 * array with one extra all-null row at index n_r, so a left row without a
 * match takes row n_r ("null-padded") through the same gather as a match.
 * The right keys go through a grouper (lib/group: one int key, one string
 * key, or encoded rows), which numbers distinct key tuples densely; each
 * group id gets a chain of its right rows in input order:
 *
 *   head[id] -> row -> next[row] -> ... -> NONE
 *
 * A right row with a null in any key is never linked: null keys never match.
 *
 * Probe: each left batch's keys go through the same grouper.  An id below
 * the number of build groups is a match and its chain lists the matching
 * right rows in right input order; any other id (a key the right side does
 * not have, or a left null key) is no match.  So the output order is the
 * one ../shared/CLI.md fixes: left rows in input order, each followed by
 * its matches in right input order, then (right, full) the right rows no
 * left row matched, in right input order.  Output is gathered in batches of
 * at most tl_batch_rows() rows by (left row, right row) index lists; a
 * left row with many matches continues in the next batch.
 *
 * Key types were checked by the planner: equal, or int64 with float64 (both
 * sides are cast to float64 here, so 1 matches 1.0), or an all-null column
 * (nothing matches).  Semi emits a left row once if it has a match; anti
 * emits it once if it has none (NOT EXISTS: a left null key is emitted).
 *
 * Right and full joins fill a key column from the right where the left row
 * is missing; the planner gave such a column the common type, so left
 * values are cast to it when they differ.
 */
#include "../../kernels/core_kernels.h"
#include "../group/group.h"
#include "../plan/plan.h"
#include "ops.h"

#include <string.h>

#define NONE UINT32_MAX

typedef struct Join {
    TlOperator base;
    TlOperator *left, *right;
    int how;
    int n_keys;
    int *lk, *rk;          /* key columns (copies) */
    int *rcols;            /* right output columns (copy) */
    int n_rcols;
    TlType *kt;            /* per key: the type both sides are compared in */
    bool never;            /* a key pair with a null-typed column */
    bool built;
    /* build side */
    int rn;                /* right schema width */
    TlArray **rarr;        /* per right column: n_r + 1 rows, or NULL */
    TlArray **rkey;        /* per key: right key cast to kt, n_r rows */
    int64_t n_r;
    TlGrouper *g;
    uint32_t n_groups;     /* groups the right side made */
    uint32_t *head, *next;
    uint8_t *matched;      /* right, full */
    /* probe */
    TlBatch *lb;
    uint32_t *lids;
    int64_t lids_cap;
    int64_t li;            /* next left row */
    uint32_t chain;        /* next right row of row li's chain, or NONE */
    bool in_chain;
    bool left_done;
    int64_t tail;          /* right/full: next right row to check */
    uint32_t *lidx, *ridx;
    int64_t cap;
} Join;

/* Cast a to type t when it differs (a new reference either way). */
static TlStatus as_type(TlArray *a, TlType t, TlArray **out, TlError *err)
{
    int64_t bad = -1;
    if (a->type == t) {
        *out = tl_array_retain(a);
        return TL_OK;
    }
    if (a->type == TL_TNULL) {
        *out = tl_array_new_null(t, a->length);
        return *out ? TL_OK : tl_error_oom(err);
    }
    return tl_cast_array(a, t, false, out, &bad, err);
}

/* Read the right input whole and index it. */
static TlStatus build(Join *j, TlError *err)
{
    TlBatch **bs = NULL;
    int n_b = 0, cap_b = 0;
    bool *need = NULL;
    TlArray **parts = NULL;
    uint32_t *ids = NULL;
    int64_t chunk = tl_batch_rows();
    TlStatus st = TL_OK;
    const TlSchema *rs = j->right->schema;

    for (;;) {
        TlBatch *b = NULL;
        if ((st = j->right->next(j->right, &b, err)) != TL_OK) goto done;
        if (!b) break;
        if (b->n_rows == 0) {
            tl_batch_free(b);
            continue;
        }
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
        j->n_r += b->n_rows;
        if (j->n_r >= (int64_t)NONE - 1) {
            st = tl_error(err, TL_ERR_DATA, "join: the right input has too many "
                          "rows (more than %u)", NONE - 2);
            goto done;
        }
    }
    /* the right's operators are no longer needed: free them early */
    j->right->free(j->right);
    j->right = NULL;

    need = tl_calloc((size_t)(j->rn ? j->rn : 1), sizeof *need);
    parts = tl_malloc((size_t)(n_b + 1) * sizeof *parts);
    j->rarr = tl_calloc((size_t)(j->rn ? j->rn : 1), sizeof *j->rarr);
    j->rkey = tl_calloc((size_t)j->n_keys, sizeof *j->rkey);
    if (!need || !parts || !j->rarr || !j->rkey) { st = tl_error_oom(err); goto done; }
    for (int k = 0; k < j->n_keys; k++) need[j->rk[k]] = true;
    for (int k = 0; k < j->n_rcols; k++) need[j->rcols[k]] = true;
    for (int c = 0; c < j->rn; c++) {
        if (!need[c]) continue;
        for (int i = 0; i < n_b; i++) parts[i] = bs[i]->cols[c];
        parts[n_b] = tl_array_new_null(rs->fields[c].type, 1);
        if (!parts[n_b]) { st = tl_error_oom(err); goto done; }
        j->rarr[c] = tl_array_concat(parts, n_b + 1);
        tl_array_release(parts[n_b]);
        if (!j->rarr[c]) { st = tl_error_oom(err); goto done; }
    }
    for (int i = 0; i < n_b; i++) tl_batch_free(bs[i]);
    n_b = 0;

    if (j->how == TL_JOIN_RIGHT || j->how == TL_JOIN_FULL) {
        j->matched = tl_calloc((size_t)(j->n_r ? j->n_r : 1), 1);
        if (!j->matched) { st = tl_error_oom(err); goto done; }
    }
    if (j->never || j->n_r == 0) goto done;

    for (int k = 0; k < j->n_keys; k++) {
        TlArray *s = tl_array_slice(j->rarr[j->rk[k]], 0, j->n_r);
        if (!s) { st = tl_error_oom(err); goto done; }
        st = as_type(s, j->kt[k], &j->rkey[k], err);
        tl_array_release(s);
        if (st != TL_OK) goto done;
    }
    if ((st = tl_grouper_new(j->kt, j->n_keys, false, &j->g, err)) != TL_OK)
        goto done;
    ids = tl_malloc((size_t)j->n_r * sizeof *ids);
    j->next = tl_malloc((size_t)j->n_r * sizeof *j->next);
    if (!ids || !j->next) { st = tl_error_oom(err); goto done; }
    for (int64_t off = 0; off < j->n_r; off += chunk) {
        int64_t n = j->n_r - off < chunk ? j->n_r - off : chunk;
        TlArray *sl[64], **keys = j->n_keys <= 64 ? sl : tl_malloc(
            (size_t)j->n_keys * sizeof *keys);
        int made = 0;
        if (!keys) { st = tl_error_oom(err); goto done; }
        for (; made < j->n_keys; made++) {
            keys[made] = tl_array_slice(j->rkey[made], off, n);
            if (!keys[made]) break;
        }
        if (made < j->n_keys) st = tl_error_oom(err);
        else st = tl_grouper_map(j->g, (const TlArray *const *)keys, n, ids + off, err);
        for (int k = 0; k < made; k++) tl_array_release(keys[k]);
        if (keys != sl) tl_free(keys);
        if (st != TL_OK) goto done;
    }
    j->n_groups = tl_grouper_count(j->g);
    {
        uint32_t *tail = tl_malloc((size_t)(j->n_groups ? j->n_groups : 1) * sizeof *tail);
        j->head = tl_malloc((size_t)(j->n_groups ? j->n_groups : 1) * sizeof *j->head);
        if (!tail || !j->head) {
            tl_free(tail);
            st = tl_error_oom(err);
            goto done;
        }
        for (uint32_t g = 0; g < j->n_groups; g++) j->head[g] = NONE;
        for (int64_t r = 0; r < j->n_r; r++) {
            bool null = false;
            for (int k = 0; k < j->n_keys && !null; k++)
                null = j->rkey[k]->null_count > 0 && !tl_array_valid(j->rkey[k], r);
            j->next[r] = NONE;
            if (null) continue;
            uint32_t g = ids[r];
            if (j->head[g] == NONE) j->head[g] = (uint32_t)r;
            else j->next[tail[g]] = (uint32_t)r;
            tail[g] = (uint32_t)r;
        }
        tl_free(tail);
    }
done:
    for (int i = 0; i < n_b; i++) tl_batch_free(bs[i]);
    tl_free(bs);
    tl_free(need);
    tl_free(parts);
    tl_free(ids);
    j->built = st == TL_OK;
    return st;
}

/* Ids of the current left batch's keys (NONE-free: ids >= n_groups miss). */
static TlStatus probe_ids(Join *j, TlError *err)
{
    TlBatch *b = j->lb;
    TlArray *sl[64], **keys;
    int made = 0;
    TlStatus st = TL_OK;
    if (j->lids_cap < b->n_rows) {
        uint32_t *v = tl_realloc(j->lids, (size_t)b->n_rows * sizeof *v);
        if (!v) return tl_error_oom(err);
        j->lids = v;
        j->lids_cap = b->n_rows;
    }
    if (j->never || !j->g) {
        for (int64_t i = 0; i < b->n_rows; i++) j->lids[i] = NONE;
        return TL_OK;
    }
    keys = j->n_keys <= 64 ? sl : tl_malloc((size_t)j->n_keys * sizeof *keys);
    if (!keys) return tl_error_oom(err);
    for (; made < j->n_keys && st == TL_OK; made++)
        st = as_type(b->cols[j->lk[made]], j->kt[made], &keys[made], err);
    if (st != TL_OK) made--;
    if (st == TL_OK)
        st = tl_grouper_find(j->g, (const TlArray *const *)keys, b->n_rows,
                             j->lids, err);
    for (int k = 0; k < made; k++) tl_array_release(keys[k]);
    if (keys != sl) tl_free(keys);
    return st;
}

/* A batch of n rows: left columns gathered by lidx (or, for the unmatched
 * right rows, nulls with the key columns from the right), then the right
 * columns gathered by ridx. */
static TlStatus emit(Join *j, int64_t n, bool tail, TlBatch **out, TlError *err)
{
    const TlSchema *s = j->base.schema;
    int nl = j->left->schema->n_fields;
    bool narrow = j->how == TL_JOIN_SEMI || j->how == TL_JOIN_ANTI;
    TlBatch *b = tl_batch_new(s, s->n_fields, n);
    TlStatus st = TL_OK;
    if (!b) return tl_error_oom(err);
    for (int c = 0; c < nl && st == TL_OK; c++) {
        TlType t = s->fields[c].type;
        TlArray *a = NULL;
        if (!tail) {
            a = tl_array_take(j->lb->cols[c], j->lidx, n);
        } else {
            int key = -1;
            for (int k = 0; k < j->n_keys && key < 0; k++)
                if (j->lk[k] == c) key = k;
            a = key >= 0 ? tl_array_take(j->rarr[j->rk[key]], j->ridx, n)
                         : tl_array_new_null(t, n);
        }
        if (!a) { st = tl_error_oom(err); break; }
        if (a->type != t) {
            TlArray *x = NULL;
            st = as_type(a, t, &x, err);
            tl_array_release(a);
            a = x;
        }
        b->cols[c] = a;
    }
    for (int k = 0; !narrow && k < j->n_rcols && st == TL_OK; k++) {
        b->cols[nl + k] = tl_array_take(j->rarr[j->rcols[k]], j->ridx, n);
        if (!b->cols[nl + k]) st = tl_error_oom(err);
    }
    if (st != TL_OK) {
        tl_batch_free(b);
        return st;
    }
    *out = b;
    return TL_OK;
}

/* Fill lidx/ridx from the current left batch; *n rows. */
static void probe_fill(Join *j, int64_t *n_out)
{
    int64_t n = 0, cap = j->cap, rows = j->lb->n_rows;
    uint32_t null_row = (uint32_t)j->n_r;
    bool keep_unmatched = j->how == TL_JOIN_LEFT || j->how == TL_JOIN_FULL;
    if (j->how == TL_JOIN_SEMI || j->how == TL_JOIN_ANTI) {
        bool want = j->how == TL_JOIN_SEMI;
        for (; j->li < rows && n < cap; j->li++) {
            uint32_t id = j->lids[j->li];
            bool hit = id < j->n_groups && j->head[id] != NONE;
            if (hit == want) j->lidx[n++] = (uint32_t)j->li;
        }
        *n_out = n;
        return;
    }
    while (j->li < rows && n < cap) {
        if (!j->in_chain) {
            uint32_t id = j->lids[j->li];
            uint32_t r = id < j->n_groups ? j->head[id] : NONE;
            if (r == NONE) {
                if (keep_unmatched) {
                    j->lidx[n] = (uint32_t)j->li;
                    j->ridx[n++] = null_row;
                }
                j->li++;
                continue;
            }
            j->chain = r;
            j->in_chain = true;
        }
        while (j->chain != NONE && n < cap) {
            j->lidx[n] = (uint32_t)j->li;
            j->ridx[n++] = j->chain;
            if (j->matched) j->matched[j->chain] = 1;
            j->chain = j->next[j->chain];
        }
        if (j->chain == NONE) {
            j->in_chain = false;
            j->li++;
        }
    }
    *n_out = n;
}

static TlStatus join_next(TlOperator *op, TlBatch **out, TlError *err)
{
    Join *j = (Join *)op;
    *out = NULL;
    if (!j->built) TL_TRY(build(j, err));
    while (!j->left_done) {
        int64_t n = 0;
        if (!j->lb) {
            TL_TRY(j->left->next(j->left, &j->lb, err));
            if (!j->lb) {
                j->left_done = true;
                break;
            }
            j->li = 0;
            j->in_chain = false;
            TL_TRY(probe_ids(j, err));
        }
        probe_fill(j, &n);
        if (n > 0) {
            TlStatus st = emit(j, n, false, out, err);
            if (j->li >= j->lb->n_rows) {
                tl_batch_free(j->lb);
                j->lb = NULL;
            }
            return st;
        }
        tl_batch_free(j->lb);
        j->lb = NULL;
    }
    if (j->matched) {
        int64_t n = 0;
        for (; j->tail < j->n_r && n < j->cap; j->tail++)
            if (!j->matched[j->tail]) j->ridx[n++] = (uint32_t)j->tail;
        if (n > 0) return emit(j, n, true, out, err);
    }
    return TL_OK;
}

static void join_free(TlOperator *op)
{
    Join *j = (Join *)op;
    if (!j) return;
    if (j->left) j->left->free(j->left);
    if (j->right) j->right->free(j->right);
    for (int c = 0; j->rarr && c < j->rn; c++) tl_array_release(j->rarr[c]);
    for (int k = 0; j->rkey && k < j->n_keys; k++) tl_array_release(j->rkey[k]);
    tl_free(j->rarr);
    tl_free(j->rkey);
    tl_grouper_free(j->g);
    tl_free(j->head);
    tl_free(j->next);
    tl_free(j->matched);
    tl_batch_free(j->lb);
    tl_free(j->lids);
    tl_free(j->lidx);
    tl_free(j->ridx);
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
                        const int *rcols, int n_rcols, const TlSchema *schema,
                        TlOperator **out, TlError *err)
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
    j->base.schema = schema;
    j->base.stats = left->stats;
    j->left = left;
    j->right = right;
    j->how = how;
    j->n_keys = n_keys;
    j->n_rcols = how == TL_JOIN_SEMI || how == TL_JOIN_ANTI ? 0 : n_rcols;
    j->rn = rs->n_fields;
    j->tail = 0;
    j->cap = tl_batch_rows();
    j->lk = copy_ints(lk, n_keys);
    j->rk = copy_ints(rk, n_keys);
    j->rcols = copy_ints(rcols, n_rcols);
    j->kt = tl_malloc((size_t)(n_keys ? n_keys : 1) * sizeof *j->kt);
    j->lidx = tl_malloc((size_t)j->cap * sizeof *j->lidx);
    j->ridx = tl_malloc((size_t)j->cap * sizeof *j->ridx);
    if (!j->lk || !j->rk || !j->rcols || !j->kt || !j->lidx || !j->ridx) {
        join_free(&j->base);
        return tl_error_oom(err);
    }
    if (n_keys < 1) {
        join_free(&j->base);
        return tl_error(err, TL_ERR_USAGE, "a join needs key columns");
    }
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
