/*
 * op_sort.c -- stable sort, and top-k when only the first `limit` rows are
 * wanted.
 *
 * Full sort: every child batch is kept as a chunk with its evaluated key
 * arrays (a key that is a plain column is that column, no copy).  At the
 * end a permutation of global row indexes (chunk after chunk) is sorted and
 * the output is gathered per output batch of tl_batch_rows() rows straight
 * from the chunks by (chunk, row) pairs (tl_array_take_multi): nothing is
 * concatenated, strings copy their views and share the chunks' data
 * buffers.  Memory per row: the input once, 4 bytes of permutation, plus
 * the sort's own keys while it runs (see sort_perm).
 *
 * Sorting the permutation (sort_perm), on the thread pool
 * (lib/core/pool.h) wherever the work splits; a stable sort has exactly
 * one result, so the order never depends on --threads:
 *   - one key of a numeric type (int64, timestamp, date, float64, bool):
 *     nulls are split off in input order, the other rows get the unsigned
 *     image of their value (sign-flipped integer, total-order float image,
 *     inverted when descending), filled chunk by chunk in parallel, and go
 *     through the stable radix sort (tl_k_psort_u64: runs radix sorted
 *     apart, then merged at merge-path splits, ties to the left run;
 *     8 + 4 bytes per row, twice for the scratch);
 *   - one string key: nulls split off, the strings sorted by their views
 *     (tl_k_psort_strs: 8-byte digits read from the strings themselves, no
 *     encoding, a parallel MSD level while tie runs are big; 16 bytes of
 *     pointer + length per row, plus the radix keys);
 *   - anything else: each chunk's keys become order-preserving byte rows
 *     (kernels/rowenc.c draws the layout) written straight into one row
 *     set, chunks in parallel (lengths, then offsets, then bytes), and the
 *     stable row sort (tl_k_psort_rows) orders indexes by memcmp order.
 * The output gather (tl_array_take_multi) runs one column per task.
 *
 * Morsels: when the child is a scan (set_stage), the sort installs a stage
 * whose work runs on the pool per morsel: it evaluates the keys and, for
 * top-k, keeps only the morsel's own best k rows (a heap over key images
 * for one numeric key without nulls, else over encoded rows; ties to the
 * earlier row), in input order.  The consumer receives these chunks in
 * morsel order and treats them exactly as the batches of the serial path
 * (TALLY_SORT_SERIAL), so the result is the same: a row that is not among
 * the best k of its morsel is not among the best k overall.
 *
 * Spilling seam: a sort whose input does not fit in memory would sort
 * chunks as they fill a budget (the same sort_perm over those chunks),
 * write each as a sorted run (its rows in order, with their encoded keys),
 * and merge the runs at the end by comparing encoded keys with a heap over
 * the run heads; ties go to the earlier run, which keeps the sort stable.
 * Only consume() would change: the output side already gathers batch by
 * batch.
 *
 * Top-k (limit >= 0): a pool of candidate rows, kept small.  Once the pool
 * has held k rows, the encoded key of its k-th best row is the threshold;
 * a new row enters the pool only if its key is strictly smaller (an equal
 * key comes later in the input, so it loses the tie).  When the pool grows
 * past max(2k, 4096) rows it is compacted: sorted, cut to k, threshold
 * renewed; so it never holds more than that plus one input batch.  The
 * compacted rows are stored in sorted order, all before any later row, so
 * a stable sort of "pool, then new rows" is the order by (key, input
 * position), and the result equals a full sort + head.
 */
#include <stdlib.h>

#include "../../kernels/rowenc.h"
#include "../../kernels/sort.h"
#include "../core/pool.h"
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
    uint32_t *perm;          /* global row indexes; NULL: chunks in order */
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

static void free_chunks(SortOp *s)
{
    for (int i = 0; i < s->n_chunks; i++) chunk_free(&s->chunks[i], s->n_data, s->n_keys);
    s->n_chunks = 0;
    s->pool_rows = 0;
}

static bool native_type(TlType t)
{
    return t == TL_TINT64 || t == TL_TTIMESTAMP || t == TL_TDATE ||
           t == TL_TFLOAT64 || t == TL_TBOOL;
}

/* Give every chunk's key k the same type: a key that evaluated to the null
 * type in some chunks (a null literal branch) becomes nulls of the type
 * the other chunks have, so encodings agree across chunks.  Returns the
 * type (TL_TNULL if every chunk has it). */
static TlType unify_key(SortOp *s, int k, bool *oom)
{
    TlType t = TL_TNULL;
    for (int i = 0; i < s->n_chunks && t == TL_TNULL; i++) t = s->chunks[i].keys[k]->type;
    if (t == TL_TNULL) return t;
    for (int i = 0; i < s->n_chunks; i++) {
        TlArray *a = s->chunks[i].keys[k];
        if (a->type != TL_TNULL) continue;
        TlArray *nn = tl_array_new_null(t, a->length);
        if (!nn) {
            *oom = true;
            return t;
        }
        tl_array_release(a);
        s->chunks[i].keys[k] = nn;
    }
    return t;
}

/* Where each chunk's rows go in the arrays sort_native / sort_strings /
 * encode_all fill: chunk c's rows start at global row goff[c], its
 * non-null key values at voff[c], its nulls at noff[c]. */
typedef struct Fill {
    SortOp *s;
    int64_t *goff, *voff, *noff;     /* n_chunks + 1 each */
    uint64_t flip;
    uint64_t *img;                   /* native: value images */
    const uint8_t **ptr;             /* strings: every row's bytes */
    uint32_t *len;
    uint32_t *vidx, *nidx;           /* non-null rows, null rows */
    TlRows *rows;                    /* encoded rows */
    uint64_t *tot;                   /* encode: bytes per chunk */
    int failed;                      /* a task ran out of memory */
} Fill;

/* The chunk offsets of f (key 0's nulls split off); false on OOM. */
static bool fill_init(Fill *f, SortOp *s)
{
    int nc = s->n_chunks;
    memset(f, 0, sizeof *f);
    f->s = s;
    f->goff = tl_malloc(((size_t)nc + 1) * 3 * sizeof *f->goff);
    if (!f->goff) return false;
    f->voff = f->goff + nc + 1;
    f->noff = f->voff + nc + 1;
    f->goff[0] = f->voff[0] = f->noff[0] = 0;
    for (int c = 0; c < nc; c++) {
        int64_t nn = s->chunks[c].keys[0]->null_count;
        f->goff[c + 1] = f->goff[c] + s->chunks[c].n_rows;
        f->noff[c + 1] = f->noff[c] + nn;
        f->voff[c + 1] = f->voff[c] + s->chunks[c].n_rows - nn;
    }
    return true;
}

/* Chunk c of a single numeric key: images and indexes (a pool task). */
static void fill_native(void *arg, int64_t c)
{
    Fill *f = arg;
    const TlArray *k = f->s->chunks[c].keys[0];
    int64_t len = k->length, m = f->voff[c], nn = f->noff[c];
    uint32_t g = (uint32_t)f->goff[c];
    uint64_t flip = f->flip, *img = f->img;
    uint32_t *vidx = f->vidx;
    if (k->null_count) {
        for (int64_t i = 0; i < len; i++, g++) {
            if (!tl_array_valid(k, i)) {
                f->nidx[nn++] = g;
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
            vidx[m++] = g;
        }
        return;
    }
    /* No nulls: one loop per type, no per-row checks. */
    switch (k->type) {
    case TL_TFLOAT64: {
        const double *v = tl_array_f64(k);
        for (int64_t i = 0; i < len; i++) img[m + i] = tl_k_f64_image(v[i]) ^ flip;
        break;
    }
    case TL_TDATE: {
        const int32_t *v = tl_array_i32(k);
        for (int64_t i = 0; i < len; i++) img[m + i] = tl_k_i64_image(v[i]) ^ flip;
        break;
    }
    case TL_TBOOL:
        for (int64_t i = 0; i < len; i++) img[m + i] = (uint64_t)tl_array_bool(k, i) ^ flip;
        break;
    default: {
        const int64_t *v = tl_array_i64(k);
        for (int64_t i = 0; i < len; i++) img[m + i] = tl_k_i64_image(v[i]) ^ flip;
        break;
    }
    }
    for (int64_t i = 0; i < len; i++) vidx[m + i] = g + (uint32_t)i;
}

/* perm := nulls before or after the sorted values. */
static void put_nulls(uint32_t *perm, const uint32_t *vidx, int64_t m,
                      const uint32_t *nidx, int64_t nn, bool nulls_first)
{
    if (nulls_first) {
        if (nn) memcpy(perm, nidx, (size_t)nn * sizeof *perm);
        memcpy(perm + nn, vidx, (size_t)m * sizeof *perm);
    } else {
        memcpy(perm, vidx, (size_t)m * sizeof *perm);
        if (nn) memcpy(perm + m, nidx, (size_t)nn * sizeof *perm);
    }
}

/* Single numeric key over all chunks: nulls split off in order, images
 * filled per chunk and radix sorted, both on the pool. */
static TlStatus sort_native(SortOp *s, uint32_t *perm, TlError *err)
{
    Fill f;
    TlStatus st = TL_OK;
    if (!fill_init(&f, s)) return tl_error_oom(err);
    int64_t n = s->pool_rows, m = f.voff[s->n_chunks], nn = f.noff[s->n_chunks];
    f.flip = s->desc[0] ? ~0ull : 0;
    f.img = tl_malloc((size_t)(n ? n : 1) * sizeof *f.img);
    f.vidx = tl_malloc((size_t)(n ? n : 1) * sizeof *f.vidx);
    f.nidx = nn ? tl_malloc((size_t)nn * sizeof *f.nidx) : NULL;
    if (!f.img || !f.vidx || (nn && !f.nidx)) {
        st = tl_error_oom(err);
        goto done;
    }
    st = tl_pool_for(s->n_chunks, fill_native, &f, err);
    if (st == TL_OK) st = tl_k_psort_u64(f.img, f.vidx, m, 0, err);
    if (st == TL_OK) put_nulls(perm, f.vidx, m, f.nidx, nn, s->nulls_first[0]);
done:
    tl_free(f.goff);
    tl_free(f.img);
    tl_free(f.vidx);
    tl_free(f.nidx);
    return st;
}

/* Chunk c of a single string key: pointers, lengths, indexes. */
static void fill_strings(void *arg, int64_t c)
{
    Fill *f = arg;
    const TlArray *k = f->s->chunks[c].keys[0];
    const TlView *v = tl_array_views(k);
    int64_t m = f->voff[c], nn = f->noff[c];
    uint32_t g = (uint32_t)f->goff[c];
    for (int64_t i = 0; i < k->length; i++, g++) {
        f->ptr[g] = tl_view_ptr(&v[i], k->data);
        f->len[g] = tl_view_len(v[i]);
        if (k->null_count && !tl_array_valid(k, i)) f->nidx[nn++] = g;
        else f->vidx[m++] = g;
    }
}

/* Single string key over all chunks: nulls split off, the strings sorted
 * by their bytes (tl_k_psort_strs). */
static TlStatus sort_strings(SortOp *s, uint32_t *perm, TlError *err)
{
    Fill f;
    TlStatus st = TL_OK;
    if (!fill_init(&f, s)) return tl_error_oom(err);
    int64_t n = s->pool_rows, m = f.voff[s->n_chunks], nn = f.noff[s->n_chunks];
    f.ptr = tl_malloc((size_t)(n ? n : 1) * sizeof *f.ptr);
    f.len = tl_malloc((size_t)(n ? n : 1) * sizeof *f.len);
    f.vidx = tl_malloc((size_t)(n ? n : 1) * sizeof *f.vidx);
    f.nidx = nn ? tl_malloc((size_t)nn * sizeof *f.nidx) : NULL;
    if (!f.ptr || !f.len || !f.vidx || (nn && !f.nidx)) {
        st = tl_error_oom(err);
        goto done;
    }
    st = tl_pool_for(s->n_chunks, fill_strings, &f, err);
    if (st == TL_OK)
        st = tl_k_psort_strs(f.ptr, f.len, s->desc[0], f.vidx, m, 0, err);
    if (st == TL_OK) put_nulls(perm, f.vidx, m, f.nidx, nn, s->nulls_first[0]);
done:
    tl_free(f.goff);
    tl_free(f.ptr);
    tl_free(f.len);
    tl_free(f.vidx);
    tl_free(f.nidx);
    return st;
}

/* Chunk c's row lengths into rows->offs[goff[c] + 1 ...] and its total. */
static void enc_lens(void *arg, int64_t c)
{
    Fill *f = arg;
    const Chunk *ch = &f->s->chunks[c];
    uint64_t *len = f->rows->offs + f->goff[c] + 1, t = 0;
    tl_k_rowenc_lens((const TlArray *const *)ch->keys, f->s->n_keys, ch->n_rows, len);
    for (int64_t i = 0; i < ch->n_rows; i++) t += len[i];
    f->tot[c] = t;
}

/* Chunk c's lengths become offsets from its base tot[c].  (Its first
 * row's offset is the previous chunk's end: written by that chunk's task,
 * so encoding waits for the next pass.) */
static void enc_offs(void *arg, int64_t c)
{
    Fill *f = arg;
    uint64_t *o = f->rows->offs + f->goff[c] + 1, acc = f->tot[c];
    for (int64_t i = 0; i < f->s->chunks[c].n_rows; i++) {
        acc += o[i];
        o[i] = acc;
    }
}

/* Encode chunk c's rows at their offsets. */
static void enc_rows(void *arg, int64_t c)
{
    Fill *f = arg;
    const Chunk *ch = &f->s->chunks[c];
    TlRows *r = f->rows;
    TlError e = {0};
    int64_t g = f->goff[c];
    if (tl_k_rowenc_into((const TlArray *const *)ch->keys, f->s->n_keys, ch->n_rows,
                         f->s->desc, f->s->nulls_first,
                         r->offs ? r->bytes : r->bytes + (size_t)g * r->width,
                         r->offs ? r->offs + g : NULL, r->width, &e) != TL_OK)
        __atomic_store_n(&f->failed, 1, __ATOMIC_RELAXED);
}

/* Encode the keys of every chunk into one row set (rows in global order),
 * each chunk on some pool thread: lengths first, then the bytes at their
 * offsets.  A chunk whose string keys are all null encodes at a fixed
 * width while others need offsets, so the row set has offsets as soon as
 * any chunk does (tl_k_rowenc's rule: a string key with a non-null value). */
static TlStatus encode_all(SortOp *s, TlRows *out, TlError *err)
{
    Fill f;
    TlStatus st = TL_OK;
    bool var = false;
    int nc = s->n_chunks;
    memset(out, 0, sizeof *out);
    out->n_rows = s->pool_rows;
    for (int c = 0; c < nc; c++)
        for (int k = 0; k < s->n_keys; k++)
            if (s->chunks[c].keys[k]->type == TL_TSTRING &&
                s->chunks[c].keys[k]->null_count < s->chunks[c].n_rows)
                var = true;
    if (!fill_init(&f, s)) return tl_error_oom(err);
    f.rows = out;
    f.tot = tl_malloc(((size_t)nc + 1) * sizeof *f.tot);
    if (!f.tot) goto oom;
    size_t total;
    if (var) {
        out->offs = tl_malloc(((size_t)s->pool_rows + 1) * sizeof *out->offs);
        if (!out->offs) goto oom;
        out->offs[0] = 0;
        st = tl_pool_for(nc, enc_lens, &f, err);
        if (st != TL_OK) goto done;
        uint64_t acc = 0;
        for (int c = 0; c < nc; c++) {
            uint64_t t = f.tot[c];
            f.tot[c] = acc;
            acc += t;
        }
        total = (size_t)acc;
        st = tl_pool_for(nc, enc_offs, &f, err);
        if (st != TL_OK) goto done;
    } else {
        out->width = nc ? tl_k_rowenc_fixed((const TlArray *const *)s->chunks[0].keys,
                                            s->n_keys) : 0;
        total = out->width * (size_t)s->pool_rows;
    }
    out->bytes = tl_malloc(total ? total : 1);
    if (!out->bytes) goto oom;
    st = tl_pool_for(nc, enc_rows, &f, err);
    if (st != TL_OK) goto done;
    if (f.failed) goto oom;
    goto done;
oom:
    st = tl_error_oom(err);
done:
    tl_free(f.goff);
    tl_free(f.tot);
    if (st != TL_OK) tl_k_rows_free(out);
    return st;
}

/* perm := the stable sorted order of the global rows of all chunks.  When
 * rows_out is wanted (top-k thresholds) the encoded path is taken. */
static TlStatus sort_perm(SortOp *s, uint32_t *perm, TlRows *rows_out, TlError *err)
{
    bool oom = false;
    TlType t0 = TL_TNULL;
    for (int k = 0; k < s->n_keys; k++) {
        TlType t = unify_key(s, k, &oom);
        if (k == 0) t0 = t;
    }
    if (oom) return tl_error_oom(err);
    if (s->n_keys == 1 && rows_out == NULL && native_type(t0))
        return sort_native(s, perm, err);
    if (s->n_keys == 1 && rows_out == NULL && t0 == TL_TSTRING)
        return sort_strings(s, perm, err);
    TlRows r;
    TL_TRY(encode_all(s, &r, err));
    int64_t n = s->pool_rows;
    for (int64_t i = 0; i < n; i++) perm[i] = (uint32_t)i;
    TlStatus st = tl_k_psort_rows(&r, perm, n, 0, err);
    if (rows_out && st == TL_OK) *rows_out = r;
    else tl_k_rows_free(&r);
    return st;
}

typedef struct GatherJob {
    SortOp *s;
    const uint32_t *part, *row;   /* the rows: chunk, row in chunk */
    int64_t n;
    TlArray **out_data, **out_keys;
    TlArray **parts;              /* per task: n_chunks arrays */
} GatherJob;

/* Column c of the gather (data columns, then computed keys): a pool task;
 * a NULL output means out of memory. */
static void gather_col(void *arg, int64_t c)
{
    GatherJob *j = arg;
    SortOp *s = j->s;
    int nc = s->n_chunks;
    TlArray **parts = j->parts + (size_t)c * (size_t)nc;
    TlArray **out;
    if (c < s->n_data) {
        for (int p = 0; p < nc; p++) parts[p] = s->chunks[p].data[c];
        out = &j->out_data[c];
    } else {
        int k = (int)c - s->n_data;
        if (s->key_col[k] >= 0) return; /* a data column: retained after */
        for (int p = 0; p < nc; p++) parts[p] = s->chunks[p].keys[k];
        out = &j->out_keys[k];
    }
    *out = tl_array_take_multi(parts, nc, j->part, j->row, j->n);
}

/* Gather global rows g[0..n) of every data column (and key column when
 * keys != NULL) from the chunks into out_data[] / keys[]. */
static TlStatus gather(SortOp *s, const uint32_t *g, int64_t n, TlArray **out_data,
                       TlArray **out_keys, TlError *err)
{
    TlStatus st = TL_OK;
    int nc = s->n_chunks;
    int *first = NULL;
    int64_t *starts = tl_malloc(((size_t)nc + 1) * sizeof *starts);
    uint32_t *part = tl_malloc((size_t)(n ? n : 1) * sizeof *part);
    uint32_t *row = tl_malloc((size_t)(n ? n : 1) * sizeof *row);
    /* first[b]: the chunk holding global row b << BLOCK_SHIFT, so a row's
     * chunk is found between first[b] and first[b + 1] (usually equal). */
    enum { BLOCK_SHIFT = 12 };
    int64_t total = 0;
    for (int c = 0; c < nc; c++) total += s->chunks[c].n_rows;
    size_t n_blocks = (size_t)(total >> BLOCK_SHIFT) + 2;
    first = tl_malloc(n_blocks * sizeof *first);
    if (!starts || !part || !row || !first) goto oom;
    starts[0] = 0;
    for (int c = 0; c < nc; c++) starts[c + 1] = starts[c] + s->chunks[c].n_rows;
    for (size_t b = 0, c = 0; b < n_blocks; b++) {
        int64_t x = (int64_t)b << BLOCK_SHIFT;
        while ((int)c + 1 < nc && starts[c + 1] <= x) c++;
        first[b] = (int)c;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t x = g[i];
        size_t b = (size_t)(x >> BLOCK_SHIFT);
        int lo = first[b], hi = first[b + 1];
        while (lo < hi) { /* the last chunk starting at or before x */
            int mid = (lo + hi + 1) / 2;
            if (starts[mid] <= x) lo = mid;
            else hi = mid - 1;
        }
        part[i] = (uint32_t)lo;
        row[i] = (uint32_t)(x - starts[lo]);
    }
    GatherJob j = {s, part, row, n, out_data, out_keys, NULL};
    int cols = s->n_data + (out_keys ? s->n_keys : 0);
    j.parts = tl_malloc(((size_t)cols * (size_t)nc + 1) * sizeof *j.parts);
    if (!j.parts) goto oom;
    if (n >= 4096) { /* a column per task */
        st = tl_pool_for(cols, gather_col, &j, err);
    } else {
        for (int c = 0; c < cols; c++) gather_col(&j, c);
    }
    tl_free(j.parts);
    if (st != TL_OK) goto done;
    for (int c = 0; c < s->n_data; c++)
        if (!out_data[c]) goto oom;
    for (int k = 0; out_keys && k < s->n_keys; k++) {
        if (s->key_col[k] >= 0 && out_data[s->key_col[k]])
            out_keys[k] = tl_array_retain(out_data[s->key_col[k]]);
        if (!out_keys[k]) goto oom;
    }
    goto done;
oom:
    st = tl_error_oom(err);
done:
    tl_free(first);
    tl_free(starts);
    tl_free(part);
    tl_free(row);
    return st;
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
    if (s->limit >= 0 && s->base.stats && s->pool_rows > s->base.stats->sort_pool_peak)
        s->base.stats->sort_pool_peak = s->pool_rows;
    return TL_OK;
}

/* Top-k: sort the pool, keep its best `limit` rows in order as the only
 * chunk, renew the threshold. */
static TlStatus compact(SortOp *s, TlError *err)
{
    Chunk kept;
    TlRows r = {0};
    uint32_t *perm = NULL;
    TlStatus st;
    memset(&kept, 0, sizeof kept);
    if (s->n_chunks == 0) return TL_OK;
    int64_t n = s->pool_rows;
    int64_t k = n < s->limit ? n : s->limit;
    perm = tl_malloc((size_t)(n ? n : 1) * sizeof *perm);
    kept.data = tl_calloc((size_t)s->n_data + 1, sizeof *kept.data);
    kept.keys = tl_calloc((size_t)s->n_keys + 1, sizeof *kept.keys);
    if (!perm || !kept.data || !kept.keys) {
        st = tl_error_oom(err);
        goto done;
    }
    st = sort_perm(s, perm, &r, err);
    if (st != TL_OK) goto done;
    st = gather(s, perm, k, kept.data, kept.keys, err);
    if (st != TL_OK) goto done;
    kept.n_rows = k;
    if (k == s->limit && k > 0) {
        size_t len;
        const uint8_t *p = tl_rows_at(&r, perm[k - 1], &len);
        uint8_t *t = tl_realloc(s->thr, len ? len : 1);
        if (!t) {
            st = tl_error_oom(err);
            goto done;
        }
        memcpy(t, p, len);
        s->thr = t;
        s->thr_len = len;
    }
    free_chunks(s);
    st = push_chunk(s, &kept, err);
    memset(&kept, 0, sizeof kept);
done:
    chunk_free(&kept, s->n_data, s->n_keys);
    tl_k_rows_free(&r);
    tl_free(perm);
    return st;
}

/* Rows sel[0..m) of the chunk (keys and data), or every row when m is n. */
static TlStatus chunk_take(const SortOp *s, Chunk *c, const uint32_t *sel, int64_t m,
                           TlError *err)
{
    if (m == c->n_rows) return TL_OK;
    for (int i = 0; i < s->n_data; i++) {
        TlArray *t = tl_array_take(c->data[i], sel, m);
        if (!t) return tl_error_oom(err);
        tl_array_release(c->data[i]);
        c->data[i] = t;
    }
    for (int k = 0; k < s->n_keys; k++) {
        TlArray *t = s->key_col[k] >= 0 ? tl_array_retain(c->data[s->key_col[k]])
                                        : tl_array_take(c->keys[k], sel, m);
        if (!t) return tl_error_oom(err);
        tl_array_release(c->keys[k]);
        c->keys[k] = t;
    }
    c->n_rows = m;
    return TL_OK;
}

/* Order of rows i and j of r: bytes, then position. */
static inline int row_pos_cmp(const TlRows *r, uint32_t i, uint32_t j)
{
    size_t li, lj;
    const uint8_t *pi = tl_rows_at(r, i, &li), *pj = tl_rows_at(r, j, &lj);
    int c = tl_rows_cmp(pi, li, pj, lj);
    return c ? c : (i > j) - (i < j);
}

static int u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* sel[0..k) := the positions of the best k of the n rows of r (by key,
 * then position: the first k rows of a stable sort), ascending.  A max heap
 * of k positions: its root is the worst row kept; a later row enters only
 * with a strictly smaller key. */
static void select_best(const TlRows *r, int64_t n, int64_t k, uint32_t *sel)
{
    for (int64_t i = 0; i < n; i++) {
        uint32_t x = (uint32_t)i;
        if (i < k) { /* sift up */
            int64_t c = i;
            while (c > 0) {
                int64_t p = (c - 1) / 2;
                if (row_pos_cmp(r, sel[p], x) >= 0) break;
                sel[c] = sel[p];
                c = p;
            }
            sel[c] = x;
            continue;
        }
        size_t lx, lt;
        const uint8_t *px = tl_rows_at(r, i, &lx), *pt = tl_rows_at(r, sel[0], &lt);
        if (tl_rows_cmp(px, lx, pt, lt) >= 0) continue;
        int64_t c = 0; /* sift down from the root */
        for (;;) {
            int64_t l = 2 * c + 1, m = c;
            uint32_t big = x;
            if (l < k && row_pos_cmp(r, sel[l], big) > 0) m = l, big = sel[l];
            if (l + 1 < k && row_pos_cmp(r, sel[l + 1], big) > 0) m = l + 1, big = sel[l + 1];
            if (m == c) break;
            sel[c] = sel[m];
            c = m;
        }
        sel[c] = x;
    }
    qsort(sel, (size_t)k, sizeof *sel, u32_cmp);
}

/* select_best for one numeric key without nulls: u[i] is row i's image
 * (inverted when descending), compared with the row position as the
 * tie-break. */
static void select_best_u64(const uint64_t *u, int64_t n, int64_t k, uint32_t *sel)
{
#define GT(a, b) (u[a] > u[b] || (u[a] == u[b] && (a) > (b)))
    for (int64_t i = 0; i < n; i++) {
        uint32_t x = (uint32_t)i;
        if (i < k) {
            int64_t c = i;
            while (c > 0) {
                int64_t p = (c - 1) / 2;
                if (!GT(x, sel[p])) break;
                sel[c] = sel[p];
                c = p;
            }
            sel[c] = x;
            continue;
        }
        if (u[x] >= u[sel[0]]) continue;
        int64_t c = 0;
        for (;;) {
            int64_t l = 2 * c + 1, m = c;
            uint32_t big = x;
            if (l < k && GT(sel[l], big)) m = l, big = sel[l];
            if (l + 1 < k && GT(sel[l + 1], big)) m = l + 1, big = sel[l + 1];
            if (m == c) break;
            sel[c] = sel[m];
            c = m;
        }
        sel[c] = x;
    }
#undef GT
    qsort(sel, (size_t)k, sizeof *sel, u32_cmp);
}

/* Images of one numeric key without nulls (see sort_native), or false
 * when the key is not of that kind. */
static bool key_images(const SortOp *s, const Chunk *c, uint64_t *u)
{
    const TlArray *k = c->keys[0];
    if (s->n_keys != 1 || k->null_count || !native_type(k->type)) return false;
    uint64_t flip = s->desc[0] ? ~0ull : 0;
    int64_t n = k->length;
    switch (k->type) {
    case TL_TFLOAT64: {
        const double *v = tl_array_f64(k);
        for (int64_t i = 0; i < n; i++) u[i] = tl_k_f64_image(v[i]) ^ flip;
        break;
    }
    case TL_TDATE: {
        const int32_t *v = tl_array_i32(k);
        for (int64_t i = 0; i < n; i++) u[i] = tl_k_i64_image(v[i]) ^ flip;
        break;
    }
    case TL_TBOOL:
        for (int64_t i = 0; i < n; i++) u[i] = (uint64_t)tl_array_bool(k, i) ^ flip;
        break;
    default: {
        const int64_t *v = tl_array_i64(k);
        for (int64_t i = 0; i < n; i++) u[i] = tl_k_i64_image(v[i]) ^ flip;
        break;
    }
    }
    return true;
}

/* sel[0..limit) := the best `limit` (< n) of the n rows whose evaluated
 * keys c holds, ascending (see select_best). */
static TlStatus best_rows(const SortOp *s, const Chunk *c, int64_t n, uint32_t *sel,
                          TlError *err)
{
    TlRows r = {0};
    TlStatus st = TL_OK;
    uint64_t *u = tl_malloc((size_t)n * sizeof *u);
    if (!u) return tl_error_oom(err);
    if (key_images(s, c, u)) {
        select_best_u64(u, n, s->limit, sel);
    } else {
        st = tl_k_rowenc((const TlArray *const *)c->keys, s->n_keys, n, s->desc,
                         s->nulls_first, &r, err);
        if (st == TL_OK) select_best(&r, n, s->limit, sel);
    }
    tl_k_rows_free(&r);
    tl_free(u);
    return st;
}

/* A chunk of batch b's rows with their evaluated keys; with `best`, only
 * the batch's best `limit` rows (top-k candidates), in input order.
 * Consumes b's columns. */
static TlStatus make_chunk(const SortOp *s, TlBatch *b, bool best, Chunk *c,
                           TlError *err)
{
    uint32_t *sel = NULL;
    TlStatus st = TL_OK;
    int64_t n = b->n_rows;
    memset(c, 0, sizeof *c);
    c->keys = tl_calloc((size_t)s->n_keys + 1, sizeof *c->keys);
    c->data = tl_calloc((size_t)s->n_data + 1, sizeof *c->data);
    if (!c->keys || !c->data) goto oom;
    for (int k = 0; k < s->n_keys; k++) {
        st = tl_eval(s->ea, s->keys[k], b, &c->keys[k], err);
        if (st != TL_OK) goto done;
    }
    for (int i = 0; i < s->n_data; i++) {
        c->data[i] = b->cols[i];
        b->cols[i] = NULL;
    }
    c->n_rows = n;
    if (best && s->limit >= 0 && n > s->limit) {
        sel = tl_malloc((size_t)(s->limit ? s->limit : 1) * sizeof *sel);
        if (!sel) goto oom;
        st = best_rows(s, c, n, sel, err);
        if (st != TL_OK) goto done;
        st = chunk_take(s, c, sel, s->limit, err);
    }
    goto done;
oom:
    st = tl_error_oom(err);
done:
    if (st != TL_OK) chunk_free(c, s->n_data, s->n_keys);
    tl_free(sel);
    return st;
}

/* Put chunk c (taken over) into the pool: all its rows, or (top-k, once
 * there is a threshold) those whose key is strictly below it. */
static TlStatus offer_chunk(SortOp *s, Chunk *c, TlError *err)
{
    TlRows r = {0};
    uint32_t *sel = NULL;
    TlStatus st = TL_OK;
    int64_t n = c->n_rows, m = n;
    if (s->thr && n > 0) {
        st = tl_k_rowenc((const TlArray *const *)c->keys, s->n_keys, n, s->desc,
                         s->nulls_first, &r, err);
        if (st != TL_OK) goto done;
        sel = tl_malloc((size_t)n * sizeof *sel);
        if (!sel) {
            st = tl_error_oom(err);
            goto done;
        }
        m = 0;
        for (int64_t i = 0; i < n; i++) {
            size_t len;
            const uint8_t *p = tl_rows_at(&r, i, &len);
            if (tl_rows_cmp(p, len, s->thr, s->thr_len) < 0) sel[m++] = (uint32_t)i;
        }
        st = chunk_take(s, c, sel, m, err);
        if (st != TL_OK) goto done;
    }
    if (m > 0) {
        st = push_chunk(s, c, err); /* frees c on failure */
        memset(c, 0, sizeof *c);
    }
done:
    chunk_free(c, s->n_data, s->n_keys);
    tl_k_rows_free(&r);
    tl_free(sel);
    return st;
}

/* A stage result: a chunk and the rows its morsel held. */
typedef struct Cand {
    Chunk c;
    int64_t n_in;
} Cand;

static void stage_drop(void *ctx, void *result)
{
    SortOp *s = ctx;
    Cand *cd = result;
    if (!cd) return;
    chunk_free(&cd->c, s->n_data, s->n_keys);
    tl_free(cd);
}

/* The stage's work on a pool thread: evaluate the keys and, for top-k,
 * keep the morsel's own best `limit` rows.  Reads only the operator's
 * read-only fields. */
static TlStatus stage_work(void *ctx, TlBatch *b, void **result, TlError *err)
{
    SortOp *s = ctx;
    *result = NULL;
    Cand *cd = tl_calloc(1, sizeof *cd);
    if (!cd) {
        tl_batch_free(b);
        return tl_error_oom(err);
    }
    cd->n_in = b->n_rows;
    TlStatus st = make_chunk(s, b, true, &cd->c, err);
    tl_batch_free(b);
    if (st != TL_OK) {
        tl_free(cd);
        return st;
    }
    *result = cd;
    return TL_OK;
}

/* The stage's late form (exec.h, TlLate), top-k only: part holds the key
 * columns; the keys are evaluated on every row, the morsel's best `limit`
 * rows chosen as stage_work chooses them, and only those rows fetched with
 * every column; stage_work on them (already at most `limit` rows, in input
 * order) makes the same chunk the plain path makes. */
static TlStatus stage_late(void *ctx, TlBatch *part, TlLate *late, void **result,
                           TlError *err)
{
    SortOp *s = ctx;
    Chunk c;
    uint32_t *sel = NULL;
    TlBatch *b = NULL;
    TlStatus st = TL_OK;
    TlError kerr;
    int64_t n = part->n_rows;
    Cand *cd;
    *result = NULL;
    memset(&c, 0, sizeof c);
    if (s->limit <= 0 || n <= s->limit) {
        tl_batch_free(part);
        TL_TRY(tl_late_fetch(late, NULL, -1, &b, err));
        if (!b) return TL_OK;
        return stage_work(ctx, b, result, err);
    }
    c.keys = tl_calloc((size_t)s->n_keys + 1, sizeof *c.keys);
    sel = tl_malloc((size_t)s->limit * sizeof *sel);
    if (!c.keys || !sel) {
        st = tl_error_oom(err);
        goto done;
    }
    for (int k = 0; k < s->n_keys && st == TL_OK; k++)
        st = tl_eval(s->ea, s->keys[k], part, &c.keys[k], &kerr);
    if (st != TL_OK) {
        /* the plain path would have met a conversion error first */
        TlStatus fst = tl_late_fetch(late, NULL, -1, &b, err);
        if (fst == TL_OK) *err = kerr;
        else st = fst;
        goto done;
    }
    c.n_rows = n;
    st = best_rows(s, &c, n, sel, err);
    if (st == TL_OK) st = tl_late_fetch(late, sel, s->limit, &b, err);
    if (st != TL_OK || !b) goto done;
    st = stage_work(ctx, b, result, err);
    b = NULL;
    cd = *result;
    if (st == TL_OK && cd) cd->n_in = n;
done:
    tl_batch_free(part);
    tl_batch_free(b);
    chunk_free(&c, 0, s->n_keys);
    tl_free(sel);
    return st;
}

/* Count n more input rows (sort indexes are 32-bit). */
static TlStatus count_rows(int64_t *seen, int64_t n, TlError *err)
{
    *seen += n;
    if (*seen > (int64_t)UINT32_MAX)
        return tl_error(err, TL_ERR_DATA, "sort input has more than %u rows",
                        (unsigned)UINT32_MAX);
    return TL_OK;
}

/* Pull the whole input and prepare the chunks + perm.  A scan child runs
 * the stage (keys, top-k candidates) per morsel on the pool; the chunks
 * then arrive here in morsel order, as batches would. */
static TlStatus consume(SortOp *s, TlError *err)
{
    int64_t seen = 0;
    bool staged = false;
    if (s->child->set_stage && s->child->next_result &&
        getenv("TALLY_SORT_SERIAL") == NULL) {
        TlStage stage = {s, stage_work, stage_drop};
        TL_TRY(s->child->set_stage(s->child, &stage, err));
        staged = true;
        if (s->limit > 0 && s->child->set_late_stage && s->n_data > 0) {
            bool *need = tl_calloc((size_t)s->n_data, sizeof *need);
            TlStatus st;
            if (!need) return tl_error_oom(err);
            for (int k = 0; k < s->n_keys; k++)
                tl_expr_mark_cols(s->ea, s->keys[k], need, s->n_data);
            st = s->child->set_late_stage(s->child, stage_late, need, s->limit, err);
            tl_free(need);
            TL_TRY(st);
        }
    }
    for (;;) {
        TlStatus st = TL_OK;
        if (staged) {
            void *r = NULL;
            TL_TRY(s->child->next_result(s->child, &r, err));
            if (!r) break;
            Cand *cd = r;
            st = count_rows(&seen, cd->n_in, err);
            if (st == TL_OK) {
                st = offer_chunk(s, &cd->c, err);
                memset(&cd->c, 0, sizeof cd->c);
            }
            stage_drop(s, cd);
        } else {
            TlBatch *b = NULL;
            TL_TRY(s->child->next(s->child, &b, err));
            if (!b) break;
            if (b->n_rows > 0) {
                Chunk c;
                st = count_rows(&seen, b->n_rows, err);
                if (st == TL_OK) st = make_chunk(s, b, false, &c, err);
                if (st == TL_OK) st = offer_chunk(s, &c, err);
            }
            tl_batch_free(b);
        }
        TL_TRY(st);
        if (s->limit >= 0 && s->pool_rows / 2 >= s->limit &&
            s->pool_rows >= 4096)
            TL_TRY(compact(s, err));
    }
    if (s->base.stats) s->base.stats->rows_sorted += seen;
    if (s->limit >= 0) {
        TL_TRY(compact(s, err)); /* one sorted chunk of <= limit rows */
        s->n_out = s->pool_rows;
        return TL_OK;
    }
    if (s->n_chunks == 0) return TL_OK;
    int64_t n = s->pool_rows;
    s->perm = tl_malloc((size_t)(n ? n : 1) * sizeof *s->perm);
    if (!s->perm) return tl_error_oom(err);
    TL_TRY(sort_perm(s, s->perm, NULL, err));
    /* The keys are not needed any more, only the data columns. */
    for (int c = 0; c < s->n_chunks; c++)
        for (int k = 0; k < s->n_keys; k++) {
            tl_array_release(s->chunks[c].keys[k]);
            s->chunks[c].keys[k] = NULL;
        }
    s->n_out = n;
    return TL_OK;
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
    if (s->emitted >= s->n_out) {
        free_chunks(s); /* done: drop the input early */
        return TL_OK;
    }
    int64_t rows = s->n_out - s->emitted;
    if (rows > tl_batch_rows()) rows = tl_batch_rows();
    TlBatch *b = tl_batch_new(op->schema, s->n_data, rows);
    if (!b) return tl_error_oom(err);
    if (s->perm) {
        TlStatus st = gather(s, s->perm + s->emitted, rows, b->cols, NULL, err);
        if (st != TL_OK) {
            tl_batch_free(b);
            return st;
        }
    } else { /* top-k: the one chunk is in order */
        for (int c = 0; c < s->n_data; c++) {
            b->cols[c] = tl_array_slice(s->chunks[0].data[c], s->emitted, rows);
            if (!b->cols[c]) {
                tl_batch_free(b);
                return tl_error_oom(err);
            }
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
    free_chunks(s);
    tl_free(s->chunks);
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
