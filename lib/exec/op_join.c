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
 *
 * Building on the left (build_left, chosen by the planner when the left
 * input is the smaller one): the left is read whole and its keys go through
 * the grouper; the right then streams, and each right row with a non-null
 * key that finds a left group is kept (only the columns the output needs)
 * and appended to that group's chain -- matches depend only on the key, so
 * every left row of a group shares one chain, in right input order.  Right
 * and full joins also keep the unmatched right rows.  The kept rows then
 * play the part of the right table above, the whole left input that of one
 * big left batch, and emission is the same code: the order rule holds
 * whichever side is built.
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
    bool build_left;       /* index the left, stream the right */
    bool keep_unmatched_right; /* right, full */
    const TlSchema *left_schema;
    int nl;                /* left schema width */
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
    int nl = j->nl;
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

/* Read every batch of op (freed afterwards) and concatenate each column,
 * plus `extra` null rows; *n the row count. */
static TlStatus drain(TlOperator *op, const bool *need, int extra,
                      TlArray **cols, int64_t *n, TlError *err)
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
        if (need && !need[c]) continue;
        for (int i = 0; i < n_b; i++) parts[i] = bs[i]->cols[c];
        parts[n_b] = extra ? tl_array_new_null(s->fields[c].type, extra) : NULL;
        if (extra && !parts[n_b]) { st = tl_error_oom(err); goto done; }
        if (n_b + (extra ? 1 : 0) == 0)
            cols[c] = tl_array_new_null(s->fields[c].type, 0);
        else
            cols[c] = tl_array_concat(parts, n_b + (extra ? 1 : 0));
        tl_array_release(extra ? parts[n_b] : NULL);
        if (!cols[c]) { st = tl_error_oom(err); goto done; }
    }
done:
    for (int i = 0; i < n_b; i++) tl_batch_free(bs[i]);
    tl_free(bs);
    tl_free(parts);
    return st;
}

/* Keys k of the given arrays (whole columns), cast to the compared types,
 * rows [off, off + n). */
static TlStatus key_slice(Join *j, TlArray *const *cols, const int *kc,
                          int64_t off, int64_t n, TlArray **keys, int *made,
                          TlError *err)
{
    TlStatus st = TL_OK;
    *made = 0;
    for (int k = 0; k < j->n_keys && st == TL_OK; k++) {
        TlArray *sl = tl_array_slice(cols[kc[k]], off, n);
        if (!sl) return tl_error_oom(err);
        st = as_type(sl, j->kt[k], &keys[k], err);
        tl_array_release(sl);
        if (st == TL_OK) (*made)++;
    }
    return st;
}

/* build_left: index the left, stream the right keeping its matching rows. */
static TlStatus build_on_left(Join *j, TlError *err)
{
    const TlSchema *rs = j->right->schema;
    int64_t chunk = tl_batch_rows(), nl = 0, n_kept = 0, cap_kept = 0;
    TlArray **lcols = tl_calloc((size_t)(j->nl ? j->nl : 1), sizeof *lcols);
    TlArray *keys[64];
    bool *need = tl_calloc((size_t)(j->rn ? j->rn : 1), sizeof *need);
    TlArray ***kparts = tl_calloc((size_t)(j->rn ? j->rn : 1), sizeof *kparts);
    int n_parts = 0, cap_parts = 0, made = 0;
    uint32_t *rtail = NULL, *rids = NULL, *kidx = NULL;
    TlStatus st = TL_OK;

    if (!lcols || !need || !kparts) { st = tl_error_oom(err); goto done; }
    if (j->n_keys > 64) {
        st = tl_error(err, TL_ERR_USAGE, "a join takes at most 64 keys");
        goto done;
    }
    for (int k = 0; k < j->n_keys; k++) need[j->rk[k]] = true;
    for (int k = 0; k < j->n_rcols; k++) need[j->rcols[k]] = true;

    /* the left, whole, as one batch */
    if ((st = drain(j->left, NULL, 0, lcols, &nl, err)) != TL_OK) goto done;
    j->left->free(j->left);
    j->left = NULL;
    j->lb = tl_batch_new(j->left_schema, j->nl, nl);
    j->lids = tl_malloc((size_t)(nl ? nl : 1) * sizeof *j->lids);
    if (!j->lb || !j->lids) { st = tl_error_oom(err); goto done; }
    j->lids_cap = nl;
    for (int c = 0; c < j->nl; c++) {
        j->lb->cols[c] = lcols[c];
        lcols[c] = NULL;
    }
    j->li = 0;
    if (j->never) {
        for (int64_t i = 0; i < nl; i++) j->lids[i] = NONE;
    } else {
        if ((st = tl_grouper_new(j->kt, j->n_keys, false, &j->g, err)) != TL_OK)
            goto done;
        for (int64_t off = 0; off < nl; off += chunk) {
            int64_t n = nl - off < chunk ? nl - off : chunk;
            st = key_slice(j, j->lb->cols, j->lk, off, n, keys, &made, err);
            if (st == TL_OK)
                st = tl_grouper_map(j->g, (const TlArray *const *)keys, n,
                                    j->lids + off, err);
            for (int k = 0; k < made; k++) tl_array_release(keys[k]);
            made = 0;
            if (st != TL_OK) goto done;
        }
        j->n_groups = tl_grouper_count(j->g);
    }
    j->head = tl_malloc((size_t)(j->n_groups ? j->n_groups : 1) * sizeof *j->head);
    rtail = tl_malloc((size_t)(j->n_groups ? j->n_groups : 1) * sizeof *rtail);
    if (!j->head || !rtail) { st = tl_error_oom(err); goto done; }
    for (uint32_t g = 0; g < j->n_groups; g++) j->head[g] = NONE;

    /* the right, streaming: keep what matches (right, full: everything) */
    for (;;) {
        TlBatch *b = NULL;
        int64_t nk = 0;
        if ((st = j->right->next(j->right, &b, err)) != TL_OK) goto done;
        if (!b) break;
        if (b->n_rows == 0) {
            tl_batch_free(b);
            continue;
        }
        uint32_t *v = tl_realloc(rids, (size_t)b->n_rows * sizeof *v);
        uint32_t *w = v ? tl_realloc(kidx, (size_t)b->n_rows * sizeof *w) : NULL;
        if (v) rids = v;
        if (w) kidx = w;
        if (!v || !w) {
            tl_batch_free(b);
            st = tl_error_oom(err);
            goto done;
        }
        if (j->g) {
            st = key_slice(j, b->cols, j->rk, 0, b->n_rows, keys, &made, err);
            if (st == TL_OK)
                st = tl_grouper_find(j->g, (const TlArray *const *)keys, b->n_rows,
                                     rids, err);
            for (int k = 0; k < made; k++) {
                /* a null in any key: no match */
                for (int64_t i = 0; st == TL_OK && keys[k]->null_count > 0 &&
                                    i < b->n_rows; i++)
                    if (!tl_array_valid(keys[k], i)) rids[i] = NONE;
                tl_array_release(keys[k]);
            }
            made = 0;
        } else {
            for (int64_t i = 0; i < b->n_rows; i++) rids[i] = NONE;
        }
        if (st != TL_OK) {
            tl_batch_free(b);
            goto done;
        }
        if (n_kept + b->n_rows >= (int64_t)NONE - 1) {
            tl_batch_free(b);
            st = tl_error(err, TL_ERR_DATA, "join: the right input has too many "
                          "rows (more than %u)", NONE - 2);
            goto done;
        }
        if (n_kept + b->n_rows > cap_kept) {
            int64_t nc = cap_kept ? cap_kept : 1024;
            while (nc < n_kept + b->n_rows) nc *= 2;
            uint32_t *nx = tl_realloc(j->next, (size_t)nc * sizeof *nx);
            uint8_t *mt = nx ? tl_realloc(j->matched, (size_t)nc) : NULL;
            if (nx) j->next = nx;
            if (mt) j->matched = mt;
            if (!nx || !mt) {
                tl_batch_free(b);
                st = tl_error_oom(err);
                goto done;
            }
            cap_kept = nc;
        }
        for (int64_t i = 0; i < b->n_rows; i++) {
            /* ids past the left's groups: created by a grouper without a
             * find of its own, so no left row has them */
            uint32_t g = rids[i] < j->n_groups ? rids[i] : NONE;
            if (g == NONE && !j->keep_unmatched_right) continue;
            uint32_t kr = (uint32_t)(n_kept + nk);
            kidx[nk++] = (uint32_t)i;
            j->next[kr] = NONE;
            j->matched[kr] = g != NONE;
            if (g == NONE) continue;
            if (j->head[g] == NONE) j->head[g] = kr;
            else j->next[rtail[g]] = kr;
            rtail[g] = kr;
        }
        if (nk > 0) {
            if (n_parts == cap_parts) {
                int nc = cap_parts ? cap_parts * 2 : 16;
                for (int c = 0; c < j->rn; c++) {
                    if (!need[c]) continue;
                    TlArray **pv = tl_realloc(kparts[c], (size_t)(nc + 1) * sizeof *pv);
                    if (!pv) {
                        tl_batch_free(b);
                        st = tl_error_oom(err);
                        goto done;
                    }
                    kparts[c] = pv;
                }
                cap_parts = nc;
            }
            for (int c = 0; c < j->rn; c++) {
                if (!need[c]) continue;
                kparts[c][n_parts] = tl_array_take(b->cols[c], kidx, nk);
                if (!kparts[c][n_parts]) {
                    for (int d = 0; d < c; d++)
                        if (need[d]) tl_array_release(kparts[d][n_parts]);
                    tl_batch_free(b);
                    st = tl_error_oom(err);
                    goto done;
                }
            }
            n_parts++;
            n_kept += nk;
        }
        tl_batch_free(b);
    }
    j->right->free(j->right);
    j->right = NULL;

    /* the kept rows, plus one null row, are the right table */
    j->rarr = tl_calloc((size_t)(j->rn ? j->rn : 1), sizeof *j->rarr);
    if (!j->rarr) { st = tl_error_oom(err); goto done; }
    for (int c = 0; c < j->rn; c++) {
        if (!need[c]) continue;
        if (!kparts[c]) {
            kparts[c] = tl_malloc(sizeof *kparts[c]);
            if (!kparts[c]) { st = tl_error_oom(err); goto done; }
        }
        kparts[c][n_parts] = tl_array_new_null(rs->fields[c].type, 1);
        if (!kparts[c][n_parts]) { st = tl_error_oom(err); goto done; }
        j->rarr[c] = tl_array_concat(kparts[c], n_parts + 1);
        tl_array_release(kparts[c][n_parts]);
        if (!j->rarr[c]) { st = tl_error_oom(err); goto done; }
    }
    j->n_r = n_kept;
    if (!j->keep_unmatched_right) {
        tl_free(j->matched);
        j->matched = NULL;
    } else if (!j->matched) {
        j->matched = tl_calloc(1, 1);
        if (!j->matched) { st = tl_error_oom(err); goto done; }
    }
done:
    for (int c = 0; lcols && c < j->nl; c++) tl_array_release(lcols[c]);
    tl_free(lcols);
    for (int c = 0; kparts && c < j->rn; c++) {
        for (int i = 0; kparts[c] && i < n_parts; i++) tl_array_release(kparts[c][i]);
        tl_free(kparts[c]);
    }
    tl_free(kparts);
    tl_free(need);
    tl_free(rtail);
    tl_free(rids);
    tl_free(kidx);
    j->built = st == TL_OK;
    return st;
}

static TlStatus join_next(TlOperator *op, TlBatch **out, TlError *err)
{
    Join *j = (Join *)op;
    *out = NULL;
    if (!j->built) TL_TRY(j->build_left ? build_on_left(j, err) : build(j, err));
    while (!j->left_done) {
        int64_t n = 0;
        if (!j->lb) {
            if (!j->left) { /* build_left: the whole left was one batch */
                j->left_done = true;
                break;
            }
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
    j->base.schema = schema;
    j->base.stats = left->stats;
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
