/*
 * join_out.c -- the hash join's rows: right morsels packed into blocks of
 * row-major slots, left rows probed against the table, matches gathered
 * into output batches through the maps and stage fused above the join.
 * The design is op_join.c's (its top comment); the state is join_impl.h's.
 */
#include "join_impl.h"

void tl_join_res_free(const Join *j, Res *r)
{
    if (!r) return;
    for (int i = r->i; i < r->n; i++) {
        if (j->has_stage) j->stage.drop(j->stage.ctx, r->b[i]);
        else tl_batch_free(r->b[i]);
    }
    tl_free(r->b);
    tl_free(r);
}

void tl_join_block_free(const Join *j, RBlock *k)
{
    if (!k) return;
    for (int s = 0; k->data && s < j->n_slots; s++) {
        for (uint32_t d = 0; k->data[s] && d < k->n_data[s]; d++)
            tl_buf_release(k->data[s][d]);
        tl_free(k->data[s]);
    }
    for (int q = 0; k->keys && q < j->n_keys; q++) tl_array_release(k->keys[q]);
    tl_free(k->keys);
    tl_free(k->data);
    tl_free(k->n_data);
    tl_free(k->nulls);
    tl_free(k->rows);
    tl_free(k->lh);
    tl_free(k);
}

/* Bytes a value of type t takes in a packed row. */
size_t tl_join_slot_width(TlType t)
{
    return t == TL_TBOOL ? 1 : tl_type_width(t);
}

/* Pack rows idx[0..n) of b (idx NULL: rows 0..n) into a new block: the
 * slots' values and null bits, row after row, and the data buffers of the
 * string slots.  Any thread: reads b only. */
static TlStatus pack(const Join *j, const TlBatch *b, const uint32_t *idx,
                     int64_t n, RBlock **out, TlError *err)
{
    RBlock *k = tl_calloc(1, sizeof *k);
    size_t rw = j->rw, nb = ((size_t)j->n_slots + 7) / 8;
    *out = NULL;
    if (!k) return tl_error_oom(err);
    k->n = n;
    if (j->n_slots == 0) {
        *out = k;
        return TL_OK;
    }
    k->rows = tl_malloc((size_t)(n ? n : 1) * rw);
    k->data = tl_calloc((size_t)j->n_slots, sizeof *k->data);
    k->n_data = tl_calloc((size_t)j->n_slots, sizeof *k->n_data);
    k->nulls = tl_calloc((size_t)j->n_slots, sizeof *k->nulls);
    if (!k->rows || !k->data || !k->n_data || !k->nulls) goto oom;
    for (int64_t i = 0; i < n; i++) memset(k->rows + (size_t)i * rw + j->null_off, 0, nb);
    for (int s = 0; s < j->n_slots; s++) {
        const TlArray *a = b->cols[j->slot_col[s]];
        uint8_t *dst = k->rows + j->slot_off[s];
        uint8_t *nul = k->rows + j->null_off + (size_t)(s >> 3), bit = (uint8_t)(1u << (s & 7));
        size_t w = tl_join_slot_width(j->rtype[j->slot_col[s]]);
        if (a->type == TL_TNULL) {
            for (int64_t i = 0; i < n; i++) {
                memset(dst + (size_t)i * rw, 0, w);
                nul[(size_t)i * rw] |= bit;
            }
            k->nulls[s] = n > 0;
            continue;
        }
        if (a->type != j->rtype[j->slot_col[s]]) {
            TlStatus st = tl_error(err, TL_ERR_DATA, "internal error: a right "
                                   "batch's column is %s, expected %s",
                                   tl_type_name(a->type),
                                   tl_type_name(j->rtype[j->slot_col[s]]));
            tl_join_block_free(j, k);
            return st;
        }
        if (a->type == TL_TBOOL) {
            for (int64_t i = 0; i < n; i++)
                dst[(size_t)i * rw] = tl_array_bool(a, idx ? idx[i] : i);
        } else if (w == 8) {
            const uint8_t *v = a->values->data + (size_t)a->offset * 8;
            for (int64_t i = 0; i < n; i++)
                memcpy(dst + (size_t)i * rw, v + (size_t)(idx ? idx[i] : i) * 8, 8);
        } else if (w == 16) {
            const uint8_t *v = a->values->data + (size_t)a->offset * 16;
            for (int64_t i = 0; i < n; i++)
                memcpy(dst + (size_t)i * rw, v + (size_t)(idx ? idx[i] : i) * 16, 16);
            if (a->n_data > 0) {
                if (!(k->data[s] = tl_malloc(a->n_data * sizeof *k->data[s]))) goto oom;
                for (uint32_t d = 0; d < a->n_data; d++)
                    k->data[s][d] = tl_buf_retain(a->data[d]);
                k->n_data[s] = a->n_data;
            }
        } else {
            const uint8_t *v = a->values->data + (size_t)a->offset * w;
            for (int64_t i = 0; i < n; i++)
                memcpy(dst + (size_t)i * rw, v + (size_t)(idx ? idx[i] : i) * w, w);
        }
        if (a->null_count > 0) {
            for (int64_t i = 0; i < n; i++)
                if (!tl_array_valid(a, idx ? idx[i] : i)) {
                    nul[(size_t)i * rw] |= bit;
                    k->nulls[s] = true;
                }
        }
    }
    *out = k;
    return TL_OK;
oom:
    tl_join_block_free(j, k);
    return tl_error_oom(err);
}

/* Cast a to type t when it differs (a new reference either way). */
TlStatus tl_join_as_type(TlArray *a, TlType t, TlArray **out, TlError *err)
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

/* first[i] for rows [0, n) of columns cols (key columns kc): the first row
 * of the table with row i's key, or NONE; more (or NULL): see
 * tl_join_table_probe_more. */
static TlStatus find_first(Join *j, TlArray *const *cols, const int *kc,
                           int64_t n, uint32_t *first, uint8_t *more,
                           TlError *err)
{
    TlArray *keys[64];
    int made = 0;
    TlStatus st = TL_OK;
    if (!j->t) {
        for (int64_t i = 0; i < n; i++) first[i] = NONE;
        return TL_OK;
    }
    for (; made < j->n_keys; made++)
        if ((st = tl_join_as_type(cols[kc[made]], j->kt[made], &keys[made], err)) != TL_OK)
            break;
    if (st == TL_OK) st = tl_join_table_probe_more(j->t, keys, n, first, more, err);
    for (int k = 0; k < made; k++) tl_array_release(keys[k]);
    return st;
}

/* Where right rows ridx[0..n) are: part[i] and row[i] within it.  Returns
 * whether some row is the null row n_r.  Any thread: reads only. */
static bool locate(const Join *j, const uint32_t *ridx, int64_t n,
                   uint32_t *part, uint32_t *row)
{
    const int64_t *start = j->rstart;
    uint32_t null_row = (uint32_t)j->n_r;
    bool padded = false;
    for (int64_t i = 0; i < n; i++) {
        uint32_t r = ridx[i], p = j->rblk[r >> j->rshift];
        while (start[p + 1] <= (int64_t)r) p++;
        part[i] = p;
        row[i] = (uint32_t)(r - start[p]);
        padded |= r == null_row;
    }
    return padded;
}

/* The right table's rows located by part/row (n of them) as one array per
 * slot s with want[s] into out[s] (others NULL).  padded: the null row is
 * among them (a slot that never has a null otherwise gets no validity).
 * Rows are copied in chunks into a small scratch area first (one or two
 * cache lines each, prefetched ahead), the slots' columns then taken from
 * there.  Any thread: reads only. */
static TlStatus gather_rows(const Join *j, const uint32_t *part,
                            const uint32_t *row, int64_t n, bool padded,
                            const bool *want, TlArray **out, TlError *err)
{
    enum { CH = 64, PF = 12 };
    size_t rw = j->rw;
    uint8_t *tmp = tl_malloc(CH * (rw ? rw : 1));
    TlBuf **vals = tl_calloc((size_t)j->n_slots, sizeof *vals);
    TlBuf **valid = tl_calloc((size_t)j->n_slots, sizeof *valid);
    int64_t *nulls = tl_calloc((size_t)j->n_slots, sizeof *nulls);
    TlStatus st = TL_OK;
    for (int s = 0; s < j->n_slots; s++) out[s] = NULL;
    if (!tmp || !vals || !valid || !nulls) { st = tl_error_oom(err); goto done; }
    for (int s = 0; s < j->n_slots; s++) {
        TlType t = j->rtype[j->slot_col[s]];
        if (!want[s] || t == TL_TNULL) continue;
        vals[s] = tl_buf_new(t == TL_TBOOL ? tl_bitmap_bytes(n) : tl_type_width(t) * (size_t)n,
                             t == TL_TBOOL);
        if (!vals[s]) { st = tl_error_oom(err); goto done; }
        if ((padded || j->slot_nulls[s]) &&
            !(valid[s] = tl_buf_new(tl_bitmap_bytes(n), true))) {
            st = tl_error_oom(err);
            goto done;
        }
    }
    for (int64_t i0 = 0; i0 < n; i0 += CH) {
        int64_t m = n - i0 < CH ? n - i0 : CH;
        for (int64_t k = 0; k < m; k++) {
            int64_t i = i0 + k;
            if (i + PF < n) {
                const uint8_t *q = j->brows[part[i + PF]] + (size_t)row[i + PF] * rw;
                for (size_t o = 0; o < rw; o += 64) __builtin_prefetch(q + o);
                __builtin_prefetch(q + rw - 1);
            }
            memcpy(tmp + (size_t)k * rw, j->brows[part[i]] + (size_t)row[i] * rw, rw);
        }
        for (int s = 0; s < j->n_slots; s++) {
            const uint8_t *src = tmp + j->slot_off[s];
            TlType t = j->rtype[j->slot_col[s]];
            if (!vals[s]) continue;
            if (t == TL_TBOOL) {
                for (int64_t k = 0; k < m; k++)
                    if (src[(size_t)k * rw]) tl_bit_set(vals[s]->data, i0 + k);
            } else if (t == TL_TSTRING) {
                TlView *d = (TlView *)(void *)vals[s]->data + i0;
                const uint32_t *base = j->sbase[s];
                for (int64_t k = 0; k < m; k++) {
                    TlView v;
                    memcpy(&v, src + (size_t)k * rw, sizeof v);
                    if (base && v.in.len > TL_VIEW_INLINE) v.out.buf += base[part[i0 + k]];
                    d[k] = v;
                }
            } else if (tl_type_width(t) == 8) {
                uint8_t *d = vals[s]->data + (size_t)i0 * 8;
                for (int64_t k = 0; k < m; k++) memcpy(d + k * 8, src + (size_t)k * rw, 8);
            } else {
                size_t w = tl_type_width(t);
                uint8_t *d = vals[s]->data + (size_t)i0 * w;
                for (int64_t k = 0; k < m; k++) memcpy(d + (size_t)k * w, src + (size_t)k * rw, w);
            }
            if (valid[s]) {
                const uint8_t *nb = tmp + j->null_off + (size_t)(s >> 3);
                uint8_t bit = (uint8_t)(1u << (s & 7));
                for (int64_t k = 0; k < m; k++) {
                    if (nb[(size_t)k * rw] & bit) nulls[s]++;
                    else tl_bit_set(valid[s]->data, i0 + k);
                }
            }
        }
    }
    for (int s = 0; s < j->n_slots; s++) {
        TlType t = j->rtype[j->slot_col[s]];
        TlBuf **data = NULL;
        if (!want[s]) continue;
        if (t == TL_TNULL) {
            if (!(out[s] = tl_array_new_null(TL_TNULL, n))) { st = tl_error_oom(err); goto done; }
            continue;
        }
        if (j->sn_data[s] > 0) {
            if (!(data = tl_malloc(j->sn_data[s] * sizeof *data))) { st = tl_error_oom(err); goto done; }
            for (uint32_t d = 0; d < j->sn_data[s]; d++) data[d] = tl_buf_retain(j->sdata[s][d]);
        }
        out[s] = tl_array_new(t, n, vals[s], valid[s], valid[s] ? nulls[s] : 0, data,
                              data ? j->sn_data[s] : 0);
        vals[s] = valid[s] = NULL;
        if (!out[s]) { st = tl_error_oom(err); goto done; }
    }
done:
    for (int s = 0; s < j->n_slots; s++) {
        if (vals) tl_buf_release(vals[s]);
        if (valid) tl_buf_release(valid[s]);
        if (st != TL_OK && out[s]) {
            tl_array_release(out[s]);
            out[s] = NULL;
        }
    }
    tl_free(tmp);
    tl_free(vals);
    tl_free(valid);
    tl_free(nulls);
    return st;
}

/* A batch of n rows: left columns of lb gathered by lidx (or, for the
 * unmatched right rows, nulls with the key columns from the right), then
 * the right columns gathered by ridx.  Any thread: reads only. */
static TlStatus emit(const Join *j, TlBatch *lb, const uint32_t *lidx,
                     const uint32_t *ridx, int64_t n, bool tail, TlBatch **out,
                     TlError *err)
{
    const TlSchema *s = j->join_schema;
    int nl = j->nl, ns = j->n_slots;
    bool narrow = j->how == TL_JOIN_SEMI || j->how == TL_JOIN_ANTI, any = false;
    TlBatch *b = tl_batch_new(s, s->n_fields, n);
    uint32_t *part = NULL, *row = NULL;
    bool *want = tl_calloc((size_t)(ns ? ns : 1), sizeof *want);
    TlArray **sc = tl_calloc((size_t)(ns ? ns : 1), sizeof *sc);
    TlStatus st = TL_OK;
    if (!b || !want || !sc) { st = tl_error_oom(err); goto done; }
    /* the slots this batch takes */
    for (int k = 0; !narrow && k < j->n_rcols; k++) want[j->col_slot[j->rcols[k]]] = true;
    for (int c = 0; tail && c < nl; c++)
        for (int k = 0; k < j->n_keys; k++)
            if (j->lk[k] == c) {
                want[j->col_slot[j->rk[k]]] = true;
                break;
            }
    for (int q = 0; q < ns; q++) any |= want[q];
    if (any) {
        part = tl_malloc((size_t)(n ? n : 1) * sizeof *part);
        row = tl_malloc((size_t)(n ? n : 1) * sizeof *row);
        if (!part || !row) { st = tl_error_oom(err); goto done; }
        st = gather_rows(j, part, row, n, locate(j, ridx, n, part, row), want, sc, err);
        if (st != TL_OK) goto done;
    }
    for (int c = 0; c < nl && st == TL_OK; c++) {
        TlType t = s->fields[c].type;
        TlArray *a = NULL;
        if (!tail) {
            a = tl_array_take(lb->cols[c], lidx, n);
        } else {
            int key = -1;
            for (int k = 0; k < j->n_keys && key < 0; k++)
                if (j->lk[k] == c) key = k;
            a = key >= 0 ? tl_array_retain(sc[j->col_slot[j->rk[key]]])
                         : tl_array_new_null(t, n);
        }
        if (!a) { st = tl_error_oom(err); break; }
        if (a->type != t) {
            TlArray *x = NULL;
            st = tl_join_as_type(a, t, &x, err);
            tl_array_release(a);
            a = x;
        }
        b->cols[c] = a;
    }
    for (int k = 0; !narrow && k < j->n_rcols && st == TL_OK; k++)
        b->cols[nl + k] = tl_array_retain(sc[j->col_slot[j->rcols[k]]]);
done:
    for (int q = 0; sc && q < ns; q++) tl_array_release(sc[q]);
    tl_free(sc);
    tl_free(want);
    tl_free(part);
    tl_free(row);
    if (st != TL_OK) {
        tl_batch_free(b);
        return st;
    }
    *out = b;
    return TL_OK;
}

/* Append an output batch (consumed) to *r: through the fused maps, then
 * the fused stage if any.  Any thread: maps and stage work are pure. */
static TlStatus res_add(const Join *j, Res **r, TlBatch *b, TlError *err)
{
    void *item = b;
    for (int m = 0; m < j->n_maps && b; m++) {
        TlBatch *o = NULL;
        TL_TRY(j->maps[m].fn(j->maps[m].ctx, b, &o, err));
        b = o;
    }
    if (!b) return TL_OK;
    item = b;
    if (j->has_stage) {
        item = NULL;
        TL_TRY(j->stage.work(j->stage.ctx, b, &item, err));
        if (!item) return TL_OK;
    }
    if (!*r && !(*r = tl_calloc(1, sizeof **r))) goto oom;
    if ((*r)->n == (*r)->cap) {
        int nc = (*r)->cap ? (*r)->cap * 2 : 4;
        void **v = tl_realloc((*r)->b, (size_t)nc * sizeof *v);
        if (!v) goto oom;
        (*r)->b = v;
        (*r)->cap = nc;
    }
    (*r)->b[(*r)->n++] = item;
    return TL_OK;
oom:
    if (j->has_stage) j->stage.drop(j->stage.ctx, item);
    else tl_batch_free(item);
    return tl_error_oom(err);
}

/* The output of left rows lb (in order), row i's matches being the chain
 * first[i] -> nxt[...] of the right table (more, or NULL: more[i] 0 when
 * that chain is one row): batches of at most cap rows into *out (NULL when
 * there is no output row).  mark (or NULL): matched right rows get 1.  Any
 * thread: reads the table, writes only mark. */
static TlStatus produce(const Join *j, TlBatch *lb, const uint32_t *first,
                        const uint8_t *more, const uint32_t *nxt, uint8_t *mark,
                        Res **out, TlError *err)
{
    int64_t cap = j->cap, n = 0, rows = lb->n_rows;
    uint32_t null_row = (uint32_t)j->n_r;
    uint32_t *lidx = tl_malloc((size_t)cap * sizeof *lidx);
    uint32_t *ridx = tl_malloc((size_t)cap * sizeof *ridx);
    TlStatus st = TL_OK;
    TlBatch *b;
    *out = NULL;
    if (!lidx || !ridx) { st = tl_error_oom(err); goto done; }
#define FLUSH()                                                                \
    do {                                                                       \
        if ((st = emit(j, lb, lidx, ridx, n, false, &b, err)) != TL_OK ||      \
            (st = res_add(j, out, b, err)) != TL_OK)                           \
            goto done;                                                         \
        n = 0;                                                                 \
    } while (0)
    if (j->how == TL_JOIN_SEMI || j->how == TL_JOIN_ANTI) {
        bool want = j->how == TL_JOIN_SEMI;
        for (int64_t li = 0; li < rows; li++) {
            if ((first[li] != NONE) != want) continue;
            lidx[n++] = (uint32_t)li;
            if (n == cap) FLUSH();
        }
    } else {
        for (int64_t li = 0; li < rows; li++) {
            uint32_t r = first[li];
            if (r == NONE) {
                if (!j->keep_unmatched_left) continue;
                lidx[n] = (uint32_t)li;
                ridx[n++] = null_row;
                if (n == cap) FLUSH();
                continue;
            }
            if (more && !more[li]) {
                lidx[n] = (uint32_t)li;
                ridx[n++] = r;
                if (mark) __atomic_store_n(&mark[r], (uint8_t)1, __ATOMIC_RELAXED);
                if (n == cap) FLUSH();
                continue;
            }
            for (; r != NONE; r = nxt[r]) {
                lidx[n] = (uint32_t)li;
                ridx[n++] = r;
                if (mark) __atomic_store_n(&mark[r], (uint8_t)1, __ATOMIC_RELAXED);
                if (n == cap) FLUSH();
            }
        }
    }
    if (n > 0) FLUSH();
#undef FLUSH
done:
    tl_free(lidx);
    tl_free(ridx);
    if (st != TL_OK) {
        tl_join_res_free(j, *out);
        *out = NULL;
    }
    return st;
}

/* Build right: one left morsel (consumed) -> its output (Res, or NULL). */
TlStatus tl_join_probe(Join *j, TlBatch *b, void **result, TlError *err)
{
    uint32_t *first = tl_malloc((size_t)(b->n_rows ? b->n_rows : 1) * sizeof *first);
    uint8_t *more = tl_malloc((size_t)(b->n_rows ? b->n_rows : 1));
    Res *r = NULL;
    TlStatus st = first && more ? TL_OK : tl_error_oom(err);
    *result = NULL;
    if (st == TL_OK) st = find_first(j, b->cols, j->lk, b->n_rows, first, more, err);
    if (st == TL_OK) st = produce(j, b, first, more, j->nxt, j->matched, &r, err);
    tl_free(first);
    tl_free(more);
    tl_batch_free(b);
    *result = r;
    return st;
}

/* Build left: one right morsel (consumed) -> the rows to keep, packed
 * (RBlock, or NULL), with their left keys' first rows. */
TlStatus tl_join_keep(Join *j, TlBatch *b, void **result, TlError *err)
{
    int64_t n = b->n_rows, nk = 0;
    uint32_t *first = tl_malloc((size_t)(n ? n : 1) * sizeof *first);
    uint32_t *kidx = tl_malloc((size_t)(n ? n : 1) * sizeof *kidx);
    RBlock *k = NULL;
    TlStatus st = first && kidx ? TL_OK : tl_error_oom(err);
    *result = NULL;
    if (st == TL_OK) st = find_first(j, b->cols, j->rk, n, first, NULL, err);
    if (st != TL_OK) goto done;
    for (int64_t i = 0; i < n; i++) {
        /* first[i]: the first left row of the key, the head of its chain */
        if (first[i] == NONE && !j->keep_unmatched_right) continue;
        kidx[nk] = (uint32_t)i;
        first[nk++] = first[i];
    }
    if (nk == 0) goto done;
    if ((st = pack(j, b, kidx, nk, &k, err)) != TL_OK) goto done;
    k->lh = first;
    first = NULL;
done:
    tl_free(first);
    tl_free(kidx);
    tl_batch_free(b);
    *result = k;
    return st;
}

/* Build right: one right morsel (consumed) -> its rows packed, with its
 * key columns (RBlock, or NULL for no rows). */
TlStatus tl_join_pack(Join *j, TlBatch *b, void **result, TlError *err)
{
    RBlock *k = NULL;
    TlStatus st = TL_OK;
    *result = NULL;
    if (b->n_rows == 0) goto done;
    if ((st = pack(j, b, NULL, b->n_rows, &k, err)) != TL_OK) goto done;
    if (!(k->keys = tl_calloc((size_t)j->n_keys, sizeof *k->keys))) {
        tl_join_block_free(j, k);
        k = NULL;
        st = tl_error_oom(err);
        goto done;
    }
    for (int q = 0; q < j->n_keys; q++) k->keys[q] = tl_array_retain(b->cols[j->rk[q]]);
done:
    tl_batch_free(b);
    *result = k;
    return st;
}

/* Build left: left rows [off, off + n) -> their output (Res, or NULL). */
TlStatus tl_join_range_rows(Join *j, int64_t off, int64_t n, void **result, TlError *err)
{
    const uint32_t *rep = j->t ? tl_join_table_rep(j->t) : NULL;
    uint32_t *first = tl_malloc((size_t)n * sizeof *first);
    TlBatch *b = tl_batch_new(j->left_schema, j->nl, n);
    Res *r = NULL;
    TlStatus st = first && b ? TL_OK : tl_error_oom(err);
    *result = NULL;
    for (int c = 0; st == TL_OK && c < j->nl; c++)
        if (!(b->cols[c] = tl_array_slice(j->lb->cols[c], off, n)))
            st = tl_error_oom(err);
    if (st == TL_OK) {
        for (int64_t i = 0; i < n; i++) {
            uint32_t g = rep ? rep[off + i] : NONE;
            first[i] = g != NONE ? j->rhead[g] : NONE;
        }
        st = produce(j, b, first, NULL, j->rnext, NULL, &r, err);
    }
    tl_free(first);
    tl_batch_free(b);
    *result = r;
    return st;
}

/* Build left: left rows [off, off + cap) -> their output (Res, or NULL). */
TlStatus tl_join_range(Join *j, int64_t off, void **result, TlError *err)
{
    int64_t n = j->lb->n_rows - off < j->cap ? j->lb->n_rows - off : j->cap;
    return tl_join_range_rows(j, off, n, result, err);
}

/* Right, full: right rows [off, end) that no left row matched -> their
 * output (Res, or NULL).  Runs after every probe: `matched` is final. */
TlStatus tl_join_tail_rows(Join *j, int64_t off, int64_t end, void **result, TlError *err)
{
    int64_t n = 0;
    uint32_t *ridx = tl_malloc((size_t)j->cap * sizeof *ridx);
    TlBatch *b = NULL;
    Res *r = NULL;
    TlStatus st = ridx ? TL_OK : tl_error_oom(err);
    *result = NULL;
    for (int64_t i = off; st == TL_OK && i < end; i++)
        if (!j->matched[i]) ridx[n++] = (uint32_t)i;
    if (st == TL_OK && n > 0 &&
        (st = emit(j, NULL, NULL, ridx, n, true, &b, err)) == TL_OK)
        st = res_add(j, &r, b, err);
    tl_free(ridx);
    if (st != TL_OK) {
        tl_join_res_free(j, r);
        r = NULL;
    }
    *result = r;
    return st;
}

/* Right, full: right rows [off, off + cap) that no left row matched. */
TlStatus tl_join_tail(Join *j, int64_t off, void **result, TlError *err)
{
    return tl_join_tail_rows(j, off, j->n_r - off < j->cap ? j->n_r : off + j->cap, result, err);
}
