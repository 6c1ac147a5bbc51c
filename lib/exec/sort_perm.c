/*
 * sort_perm.c -- the sort operator's stable sort of its permutation of
 * global row indexes (chunk after chunk), for op_sort.c.
 *
 * Sorting the permutation (tl_sort_perm), on the thread pool
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
 *     When every row has the same length (string keys all of one length,
 *     "id0000001905"), the row set has no offsets: a fixed width, 8 bytes
 *     a row less, and one random read per row in the sort's tie runs
 *     instead of two (offset, then bytes).
 */
#include <stdlib.h>

#include "sort_impl.h"

/* Whether a key of type t sorts by its 64-bit image (sort_native). */
bool tl_sort_native_type(TlType t)
{
    return t == TL_TINT64 || t == TL_TTIMESTAMP || t == TL_TTIMESTAMPTZ || t == TL_TDATE ||
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
    uint64_t *lmin, *lmax;           /* encode: shortest, longest row per chunk */
    uint8_t *inexact;                /* native: a chunk has a float whose
                                        image loses its bits (-0.0, NaN) */
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

/* Whether v comes back bit for bit from its image u (not -0.0, not a NaN
 * of another payload). */
static inline bool f64_exact(double v, uint64_t u)
{
    double back = tl_k_f64_from_image(u);
    return memcmp(&v, &back, 8) == 0;
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
            case TL_TFLOAT64:
                u = tl_k_f64_image(tl_array_f64(k)[i]);
                if (f->inexact && !f64_exact(tl_array_f64(k)[i], u)) f->inexact[c] = 1;
                break;
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
        uint64_t diff = 0;
        for (int64_t i = 0; i < len; i++) {
            uint64_t u = tl_k_f64_image(v[i]), a, b;
            double back = tl_k_f64_from_image(u);
            memcpy(&a, &v[i], 8);
            memcpy(&b, &back, 8);
            diff |= a ^ b;
            img[m + i] = u ^ flip;
        }
        if (f->inexact && diff) f->inexact[c] = 1;
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

/* A full sort's keys once the sort has what it needs from them (images
 * or encoded rows): released before the sort's scratch is allocated, so a
 * key column, which the packed rows hold too, is not held twice at the
 * peak.  Top-k gathers its keys, it keeps them. */
static void drop_keys(SortOp *s)
{
    if (s->limit >= 0) return;
    for (int c = 0; c < s->n_chunks; c++)
        for (int k = 0; k < s->n_keys; k++) {
            tl_array_release(s->chunks[c].keys[k]);
            s->chunks[c].keys[k] = NULL;
        }
    /* Packed key columns were held by these references only: their pages
     * go back before the sort's scratch comes on top (see consume). */
    if (s->keys_packed) tl_alloc_trim();
}

/* Single numeric key over all chunks: nulls split off in order, images
 * filled per chunk and radix sorted, both on the pool. */
static TlStatus sort_native(SortOp *s, uint32_t *perm, TlError *err)
{
    Fill f;
    TlStatus st = TL_OK;
    if (!fill_init(&f, s)) return tl_error_oom(err);
    int64_t n = s->pool_rows, m = f.voff[s->n_chunks], nn = f.noff[s->n_chunks];
    TlType t = s->chunks[0].keys[0]->type;
    /* A full sort on a data column of int64, timestamp, date or float64
     * keeps the sorted images: the output makes that column from them in
     * order instead of gathering it (out_prepare decides). */
    bool keep = s->limit < 0 && s->key_col[0] >= 0 && s->pack != 0 && t != TL_TBOOL;
    f.flip = s->desc[0] ? ~0ull : 0;
    if (keep && !(f.inexact = tl_calloc((size_t)s->n_chunks + 1, 1))) {
        tl_free(f.goff);
        return tl_error_oom(err);
    }
    f.img = tl_malloc((size_t)(n ? n : 1) * sizeof *f.img);
    f.vidx = tl_malloc((size_t)(n ? n : 1) * sizeof *f.vidx);
    f.nidx = nn ? tl_malloc((size_t)nn * sizeof *f.nidx) : NULL;
    if (!f.img || !f.vidx || (nn && !f.nidx)) {
        st = tl_error_oom(err);
        goto done;
    }
    st = tl_pool_for(s->n_chunks, fill_native, &f, err);
    if (st == TL_OK) drop_keys(s);
    if (st == TL_OK) st = tl_k_psort_u64(f.img, f.vidx, m, 0, err);
    if (st == TL_OK) put_nulls(perm, f.vidx, m, f.nidx, nn, s->nulls_first[0]);
    for (int c = 0; keep && c < s->n_chunks; c++)
        if (f.inexact[c]) keep = false;
    if (st == TL_OK && keep) {
        s->kimg = f.img;
        f.img = NULL;
        s->kimg_m = m;
        s->kimg_nn = nn;
        s->kimg_type = t;
    }
done:
    tl_free(f.goff);
    tl_free(f.inexact);
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
    uint64_t *len = f->rows->offs + f->goff[c] + 1, t = 0, mn = UINT64_MAX, mx = 0;
    tl_k_rowenc_lens((const TlArray *const *)ch->keys, f->s->n_keys, ch->n_rows, len);
    for (int64_t i = 0; i < ch->n_rows; i++) {
        t += len[i];
        mn = len[i] < mn ? len[i] : mn;
        mx = len[i] > mx ? len[i] : mx;
    }
    f->tot[c] = t;
    f->lmin[c] = mn;
    f->lmax[c] = mx;
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
    f.tot = tl_malloc(((size_t)nc + 1) * 3 * sizeof *f.tot);
    if (!f.tot) goto oom;
    f.lmin = f.tot + nc + 1;
    f.lmax = f.lmin + nc + 1;
    size_t total;
    if (var) {
        out->offs = tl_malloc(((size_t)s->pool_rows + 1) * sizeof *out->offs);
        if (!out->offs) goto oom;
        out->offs[0] = 0;
        st = tl_pool_for(nc, enc_lens, &f, err);
        if (st != TL_OK) goto done;
    }
    /* Rows that all came out the same length (string keys of one length,
     * "id0000001905") need no offsets: they are stored at a fixed width,
     * the same bytes, and the sort reads a row with one random access
     * instead of two (its offset, then its bytes). */
    bool same = var && s->pool_rows > 0;
    for (int c = 0; same && c < nc; c++)
        same = f.lmin[c] == f.lmax[0] && f.lmax[c] == f.lmax[0];
    if (same) {
        tl_free(out->offs);
        out->offs = NULL;
        out->width = (size_t)f.lmax[0];
        var = false;
    }
    if (var) {
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
        if (!same)
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

typedef struct IotaJob {
    uint32_t *perm;
    int64_t n;
} IotaJob;

/* Piece k of perm := 0, 1, ... (a pool task: perm is fresh memory, and
 * faulting 4 bytes a row in on one thread held up a big sort). */
static void iota_piece(void *arg, int64_t k)
{
    IotaJob *j = arg;
    int64_t lo = k << 20, hi = lo + (1 << 20) < j->n ? lo + (1 << 20) : j->n;
    for (int64_t i = lo; i < hi; i++) j->perm[i] = (uint32_t)i;
}

/* perm := the stable sorted order of the global rows of all chunks.  When
 * rows_out is wanted (top-k thresholds) the encoded path is taken. */
TlStatus tl_sort_perm(SortOp *s, uint32_t *perm, TlRows *rows_out, TlError *err)
{
    bool oom = false;
    TlType t0 = TL_TNULL;
    for (int k = 0; k < s->n_keys; k++) {
        TlType t = unify_key(s, k, &oom);
        if (k == 0) t0 = t;
    }
    if (oom) return tl_error_oom(err);
    if (s->n_keys == 1 && rows_out == NULL && tl_sort_native_type(t0))
        return sort_native(s, perm, err);
    if (s->n_keys == 1 && rows_out == NULL && t0 == TL_TSTRING)
        return sort_strings(s, perm, err);
    TlRows r;
    TL_TRY(encode_all(s, &r, err));
    if (!rows_out) drop_keys(s);
    int64_t n = s->pool_rows;
    IotaJob ij = {perm, n};
    TlStatus st = tl_pool_for((n + (1 << 20) - 1) >> 20, iota_piece, &ij, err);
    if (st == TL_OK) st = tl_k_psort_rows(&r, perm, n, 0, err);
    if (rows_out && st == TL_OK) *rows_out = r;
    else tl_k_rows_free(&r);
    return st;
}