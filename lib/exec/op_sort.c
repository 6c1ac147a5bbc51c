/*
 * op_sort.c -- stable sort, and top-k when only the first `limit` rows are
 * wanted.
 *
 * Full sort: every child batch is kept with its evaluated key arrays.  At
 * the end each column is concatenated across batches (the batch's own
 * reference dropped right away, so at most one extra copy of one column is
 * alive; a key that is a plain column reuses the concatenated data column), a permutation of row indexes is sorted, and the output is
 * gathered from the concatenated columns in batches of tl_batch_rows().
 *
 * Sorting the permutation (sort_perm):
 *   - one key of a numeric type (int64, timestamp, date, float64, bool):
 *     nulls are split off in input order, the other rows get the unsigned
 *     image of their value (sign-flipped integer, total-order float image,
 *     inverted when descending) and go through the stable radix sort;
 *   - anything else: the keys become order-preserving byte rows
 *     (kernels/rowenc.c draws the layout) and the stable row sort
 *     (kernels/sort.c) orders indexes by memcmp.
 *
 * Top-k (limit >= 0): a pool of candidate rows, kept small.  Once the pool
 * has held k rows, the encoded key of its k-th best row is the threshold;
 * a new row enters the pool only if its key is strictly smaller (an equal
 * key comes later in the input, so it loses the tie).  When the pool grows
 * past max(2k, 4096) rows it is compacted: sorted, cut to k, threshold
 * renewed.  The compacted rows are stored in sorted order, all before any
 * later row, so a stable sort of "pool, then new rows" is the order by
 * (key, input position), and the result equals a full sort + head.
 */
#include "../../kernels/rowenc.h"
#include "../../kernels/sort.h"
#include "eval.h"
#include "exec.h"

/* Rows in columns: data columns of the child schema plus evaluated keys. */
typedef struct Chunk {
    TlArray **data;  /* n_data */
    TlArray **keys;  /* n_keys */
    int64_t n_rows;
} Chunk;

typedef struct SortOp {
    TlOperator base;
    TlOperator *child;
    const TlExprArena *ea;
    TlExprId *keys;
    int *key_col;            /* key k is data column key_col[k], or -1 */
    bool *desc, *nulls_first;
    int n_keys;
    int n_data;
    int64_t limit;           /* -1: all */
    bool consumed;
    Chunk *chunks;
    int n_chunks, cap_chunks;
    int64_t pool_rows;
    uint8_t *thr;            /* top-k threshold row, or NULL */
    size_t thr_len;
    /* output */
    TlArray **out_cols;      /* concatenated data columns */
    uint32_t *perm;          /* NULL: already in order */
    int64_t n_out, emitted;
} SortOp;

static void chunk_free(Chunk *c, int n_data, int n_keys)
{
    if (c->data)
        for (int i = 0; i < n_data; i++) tl_array_release(c->data[i]);
    if (c->keys)
        for (int i = 0; i < n_keys; i++) tl_array_release(c->keys[i]);
    tl_free(c->data);
    tl_free(c->keys);
    memset(c, 0, sizeof *c);
}

static bool native_type(TlType t)
{
    return t == TL_TINT64 || t == TL_TTIMESTAMP || t == TL_TDATE ||
           t == TL_TFLOAT64 || t == TL_TBOOL;
}

/* Single numeric key: nulls split off in order, images radix sorted. */
static TlStatus sort_native(const TlArray *k, bool desc, bool nulls_first,
                            uint32_t *perm, TlError *err)
{
    int64_t n = k->length, m = 0, nn = 0;
    uint64_t *img = tl_malloc((size_t)(n ? n : 1) * sizeof *img);
    uint32_t *vidx = tl_malloc((size_t)(n ? n : 1) * sizeof *vidx);
    uint32_t *nidx = k->null_count ? tl_malloc((size_t)k->null_count * sizeof *nidx)
                                   : NULL;
    TlStatus st = TL_OK;
    if (!img || !vidx || (k->null_count && !nidx)) {
        st = tl_error_oom(err);
        goto done;
    }
    uint64_t flip = desc ? ~0ull : 0;
    for (int64_t i = 0; i < n; i++) {
        if (k->null_count && !tl_array_valid(k, i)) {
            nidx[nn++] = (uint32_t)i;
            continue;
        }
        uint64_t u;
        switch (k->type) {
        case TL_TFLOAT64: u = tl_k_f64_image(tl_array_f64(k)[i]); break;
        case TL_TDATE: u = tl_k_i64_image(tl_array_i32(k)[i]); break;
        case TL_TBOOL: u = tl_array_bool(k, i); break;
        default: u = tl_k_i64_image(tl_array_i64(k)[i]); break;
        }
        img[m] = u ^ flip;
        vidx[m++] = (uint32_t)i;
    }
    st = tl_k_sort_u64(img, vidx, m, err);
    if (st != TL_OK) goto done;
    if (nulls_first) {
        if (nn) memcpy(perm, nidx, (size_t)nn * sizeof *perm);
        memcpy(perm + nn, vidx, (size_t)m * sizeof *perm);
    } else {
        memcpy(perm, vidx, (size_t)m * sizeof *perm);
        if (nn) memcpy(perm + m, nidx, (size_t)nn * sizeof *perm);
    }
done:
    tl_free(img);
    tl_free(vidx);
    tl_free(nidx);
    return st;
}

/* perm := the stable sorted order of rows [0, n) of key columns k. */
static TlStatus sort_perm(SortOp *s, TlArray *const *k, int64_t n, uint32_t *perm,
                          TlRows *rows_out, TlError *err)
{
    if (s->n_keys == 1 && native_type(k[0]->type) && rows_out == NULL)
        return sort_native(k[0], s->desc[0], s->nulls_first[0], perm, err);
    TlRows r;
    TL_TRY(tl_k_rowenc((const TlArray *const *)k, s->n_keys, n, s->desc,
                       s->nulls_first, &r, err));
    for (int64_t i = 0; i < n; i++) perm[i] = (uint32_t)i;
    TlStatus st = tl_k_sort_rows(&r, perm, n, err);
    if (rows_out && st == TL_OK) *rows_out = r;
    else tl_k_rows_free(&r);
    return st;
}

/* Concatenate column c of every chunk (data when is_key false) into one
 * array, dropping the chunks' references. */
static TlArray *concat_col(SortOp *s, int c, bool is_key)
{
    TlArray **parts = tl_malloc(((size_t)s->n_chunks + 1) * sizeof *parts);
    if (!parts) return NULL;
    for (int i = 0; i < s->n_chunks; i++)
        parts[i] = is_key ? s->chunks[i].keys[c] : s->chunks[i].data[c];
    TlArray *a = tl_array_concat(parts, s->n_chunks);
    if (a) {
        for (int i = 0; i < s->n_chunks; i++) {
            tl_array_release(parts[i]);
            if (is_key) s->chunks[i].keys[c] = NULL;
            else s->chunks[i].data[c] = NULL;
        }
    }
    tl_free(parts);
    return a;
}

/* Merge all chunks into one: concatenated data and key columns. */
static TlStatus merge_chunks(SortOp *s, Chunk *out, TlError *err)
{
    memset(out, 0, sizeof *out);
    out->data = tl_calloc((size_t)s->n_data + 1, sizeof *out->data);
    out->keys = tl_calloc((size_t)s->n_keys + 1, sizeof *out->keys);
    if (!out->data || !out->keys) goto oom;
    for (int c = 0; c < s->n_data; c++)
        if (!(out->data[c] = concat_col(s, c, false))) goto oom;
    for (int c = 0; c < s->n_keys; c++) {
        if (s->key_col[c] >= 0) {
            /* A plain column key is the data column: no second copy. */
            for (int i = 0; i < s->n_chunks; i++) {
                tl_array_release(s->chunks[i].keys[c]);
                s->chunks[i].keys[c] = NULL;
            }
            out->keys[c] = tl_array_retain(out->data[s->key_col[c]]);
        } else if (!(out->keys[c] = concat_col(s, c, true))) {
            goto oom;
        }
    }
    out->n_rows = s->pool_rows;
    for (int i = 0; i < s->n_chunks; i++) chunk_free(&s->chunks[i], s->n_data, s->n_keys);
    s->n_chunks = 0;
    return TL_OK;
oom:
    chunk_free(out, s->n_data, s->n_keys);
    return tl_error_oom(err);
}

static TlStatus push_chunk(SortOp *s, Chunk *c, TlError *err)
{
    if (s->n_chunks == s->cap_chunks) {
        int cap = s->cap_chunks ? s->cap_chunks * 2 : 16;
        Chunk *nc = tl_realloc(s->chunks, (size_t)cap * sizeof *nc);
        if (!nc) {
            chunk_free(c, s->n_data, s->n_keys);
            return tl_error_oom(err);
        }
        s->chunks = nc;
        s->cap_chunks = cap;
    }
    s->chunks[s->n_chunks++] = *c;
    s->pool_rows += c->n_rows;
    return TL_OK;
}

/* Top-k: sort the pool, keep its best `limit` rows in order, renew the
 * threshold. */
static TlStatus compact(SortOp *s, TlError *err)
{
    Chunk all, kept;
    TlRows r = {0};
    uint32_t *perm = NULL;
    TlStatus st;
    memset(&kept, 0, sizeof kept);
    if (s->n_chunks == 0) return TL_OK;
    TL_TRY(merge_chunks(s, &all, err));
    s->pool_rows = 0;
    int64_t n = all.n_rows;
    int64_t k = n < s->limit ? n : s->limit;
    perm = tl_malloc((size_t)(n ? n : 1) * sizeof *perm);
    kept.data = tl_calloc((size_t)s->n_data + 1, sizeof *kept.data);
    kept.keys = tl_calloc((size_t)s->n_keys + 1, sizeof *kept.keys);
    if (!perm || !kept.data || !kept.keys) {
        st = tl_error_oom(err);
        goto done;
    }
    st = sort_perm(s, all.keys, n, perm, &r, err);
    if (st != TL_OK) goto done;
    for (int c = 0; c < s->n_data; c++)
        if (!(kept.data[c] = tl_array_take(all.data[c], perm, k))) goto oom;
    for (int c = 0; c < s->n_keys; c++) {
        kept.keys[c] = s->key_col[c] >= 0 ? tl_array_retain(kept.data[s->key_col[c]])
                                          : tl_array_take(all.keys[c], perm, k);
        if (!kept.keys[c]) goto oom;
    }
    kept.n_rows = k;
    if (k == s->limit && k > 0) {
        size_t len;
        const uint8_t *p = tl_rows_at(&r, perm[k - 1], &len);
        uint8_t *t = tl_realloc(s->thr, len ? len : 1);
        if (!t) goto oom;
        memcpy(t, p, len);
        s->thr = t;
        s->thr_len = len;
    }
    st = push_chunk(s, &kept, err);
    memset(&kept, 0, sizeof kept);
    goto done;
oom:
    st = tl_error_oom(err);
done:
    chunk_free(&kept, s->n_data, s->n_keys);
    chunk_free(&all, s->n_data, s->n_keys);
    tl_k_rows_free(&r);
    tl_free(perm);
    return st;
}

/* Take the batch's rows (all, or those beating the top-k threshold) into
 * the pool, with their key arrays.  Consumes b's columns. */
static TlStatus add_batch(SortOp *s, TlBatch *b, TlError *err)
{
    Chunk c;
    TlRows r = {0};
    uint32_t *sel = NULL;
    TlStatus st = TL_OK;
    int64_t n = b->n_rows;
    memset(&c, 0, sizeof c);
    c.keys = tl_calloc((size_t)s->n_keys + 1, sizeof *c.keys);
    c.data = tl_calloc((size_t)s->n_data + 1, sizeof *c.data);
    if (!c.keys || !c.data) goto oom;
    for (int k = 0; k < s->n_keys; k++) {
        st = tl_eval(s->ea, s->keys[k], b, &c.keys[k], err);
        if (st != TL_OK) goto done;
    }
    int64_t m = n;
    if (s->thr) {
        st = tl_k_rowenc((const TlArray *const *)c.keys, s->n_keys, n, s->desc,
                         s->nulls_first, &r, err);
        if (st != TL_OK) goto done;
        sel = tl_malloc((size_t)n * sizeof *sel);
        if (!sel) goto oom;
        m = 0;
        for (int64_t i = 0; i < n; i++) {
            size_t len;
            const uint8_t *p = tl_rows_at(&r, i, &len);
            if (tl_rows_cmp(p, len, s->thr, s->thr_len) < 0) sel[m++] = (uint32_t)i;
        }
        if (m == 0) goto done;
    }
    if (m == n) {
        for (int i = 0; i < s->n_data; i++) {
            c.data[i] = b->cols[i];
            b->cols[i] = NULL;
        }
    } else {
        for (int i = 0; i < s->n_data; i++)
            if (!(c.data[i] = tl_array_take(b->cols[i], sel, m))) goto oom;
        for (int k = 0; k < s->n_keys; k++) {
            TlArray *t = s->key_col[k] >= 0 ? tl_array_retain(c.data[s->key_col[k]])
                                            : tl_array_take(c.keys[k], sel, m);
            if (!t) goto oom;
            tl_array_release(c.keys[k]);
            c.keys[k] = t;
        }
    }
    c.n_rows = m;
    st = push_chunk(s, &c, err);
    memset(&c, 0, sizeof c);
    goto done;
oom:
    st = tl_error_oom(err);
done:
    chunk_free(&c, s->n_data, s->n_keys);
    tl_k_rows_free(&r);
    tl_free(sel);
    return st;
}

/* Pull the whole input and prepare out_cols + perm. */
static TlStatus consume(SortOp *s, TlError *err)
{
    int64_t seen = 0;
    for (;;) {
        TlBatch *b = NULL;
        TL_TRY(s->child->next(s->child, &b, err));
        if (!b) break;
        TlStatus st = TL_OK;
        if (b->n_rows > 0) {
            seen += b->n_rows;
            if (seen > (int64_t)UINT32_MAX)
                st = tl_error(err, TL_ERR_DATA, "sort input has more than %u rows",
                              (unsigned)UINT32_MAX);
            else
                st = add_batch(s, b, err);
        }
        tl_batch_free(b);
        TL_TRY(st);
        if (s->limit >= 0 && s->pool_rows / 2 >= s->limit &&
            s->pool_rows >= 4096)
            TL_TRY(compact(s, err));
    }
    if (s->base.stats) s->base.stats->rows_sorted += seen;
    if (s->limit >= 0) {
        TL_TRY(compact(s, err)); /* one sorted chunk of <= limit rows */
        if (s->n_chunks == 0) return TL_OK;
        Chunk *c = &s->chunks[0];
        s->out_cols = c->data;
        c->data = NULL;
        s->n_out = c->n_rows;
        chunk_free(c, s->n_data, s->n_keys);
        s->n_chunks = 0;
        return TL_OK;
    }
    if (s->n_chunks == 0) return TL_OK;
    Chunk all;
    TL_TRY(merge_chunks(s, &all, err));
    int64_t n = all.n_rows;
    s->perm = tl_malloc((size_t)(n ? n : 1) * sizeof *s->perm);
    TlStatus st = s->perm ? sort_perm(s, all.keys, n, s->perm, NULL, err)
                          : tl_error_oom(err);
    if (st == TL_OK) {
        s->out_cols = all.data;
        all.data = NULL;
        s->n_out = n;
    }
    chunk_free(&all, s->n_data, s->n_keys);
    return st;
}

static TlStatus sort_next(TlOperator *op, TlBatch **out, TlError *err)
{
    SortOp *s = (SortOp *)op;
    *out = NULL;
    if (!s->consumed) {
        s->consumed = true;
        if (s->limit == 0) return TL_OK;
        TL_TRY(consume(s, err));
    }
    if (s->emitted >= s->n_out) return TL_OK;
    int64_t rows = s->n_out - s->emitted;
    if (rows > tl_batch_rows()) rows = tl_batch_rows();
    TlBatch *b = tl_batch_new(op->schema, s->n_data, rows);
    if (!b) return tl_error_oom(err);
    for (int c = 0; c < s->n_data; c++) {
        b->cols[c] = s->perm ? tl_array_take(s->out_cols[c], s->perm + s->emitted, rows)
                             : tl_array_slice(s->out_cols[c], s->emitted, rows);
        if (!b->cols[c]) {
            tl_batch_free(b);
            return tl_error_oom(err);
        }
    }
    s->emitted += rows;
    *out = b;
    return TL_OK;
}

static void sort_free(TlOperator *op)
{
    SortOp *s = (SortOp *)op;
    if (!s) return;
    if (s->child) s->child->free(s->child);
    for (int i = 0; i < s->n_chunks; i++) chunk_free(&s->chunks[i], s->n_data, s->n_keys);
    tl_free(s->chunks);
    if (s->out_cols)
        for (int c = 0; c < s->n_data; c++) tl_array_release(s->out_cols[c]);
    tl_free(s->out_cols);
    tl_free(s->perm);
    tl_free(s->thr);
    tl_free(s->keys);
    tl_free(s->key_col);
    tl_free(s->desc);
    tl_free(s->nulls_first);
    tl_free(s);
}

/* Create the sort / top-k operator (see exec.h).  Takes ownership of child,
 * also on failure.  desc / nulls_first may be NULL (all false). */
TlStatus tl_op_sort_new(TlOperator *child, const TlExprArena *ea,
                        const TlExprId *keys, const bool *desc,
                        const bool *nulls_first, int n_keys, int64_t limit,
                        TlOperator **out, TlError *err)
{
    *out = NULL;
    SortOp *s = tl_calloc(1, sizeof *s);
    if (!s) {
        child->free(child);
        return tl_error_oom(err);
    }
    s->base.next = sort_next;
    s->base.free = sort_free;
    s->base.schema = child->schema;
    s->base.stats = child->stats;
    s->child = child;
    s->ea = ea;
    s->n_keys = n_keys;
    s->n_data = child->schema->n_fields;
    s->limit = limit < 0 ? -1 : limit;
    s->keys = tl_malloc(((size_t)n_keys + 1) * sizeof *s->keys);
    s->key_col = tl_malloc(((size_t)n_keys + 1) * sizeof *s->key_col);
    s->desc = tl_calloc((size_t)n_keys + 1, sizeof *s->desc);
    s->nulls_first = tl_calloc((size_t)n_keys + 1, sizeof *s->nulls_first);
    if (!s->keys || !s->key_col || !s->desc || !s->nulls_first) {
        sort_free(&s->base);
        return tl_error_oom(err);
    }
    for (int k = 0; k < n_keys; k++) {
        s->keys[k] = keys[k];
        const TlExpr *e = tl_ea_node(ea, keys[k]);
        s->key_col[k] = e->kind == TL_X_COL && e->col >= 0 && e->col < s->n_data
                            ? e->col : -1;
        s->desc[k] = desc ? desc[k] : false;
        s->nulls_first[k] = nulls_first ? nulls_first[k] : false;
    }
    *out = &s->base;
    return TL_OK;
}
