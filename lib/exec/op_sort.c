/*
 * op_sort.c -- stable sort, and top-k when only the first `limit` rows are
 * wanted.
 *
 * Full sort: every child batch is kept as a chunk with its evaluated key
 * arrays (a key that is a plain column is that column, no copy), and its
 * other data columns packed into rows (pack_chunk, on the pool per morsel
 * when the child is a scan): fixed offsets, 8 bytes a number, 16 a string
 * view (block numbers rebased to the chunk's list of data blocks), 4 a
 * date, 1 a bool, nulls in a separate per-row mask only where a chunk has
 * nulls; the columns are released, so memory stays what they held.  At the
 * end a permutation of global row indexes (chunk after chunk) is sorted and
 * the output is gathered per output batch of tl_batch_rows() rows straight
 * from the chunks (gather_packed): each output row is one random read of
 * one or two cache lines (a tile of rows located and prefetched while the
 * previous tile is copied out) instead of one per column, which made the
 * gather a quarter of a big sort's time.  With several keys the key
 * columns are packed too (the sort reads their encoded rows; the chunk's
 * key references hold the columns until then, and drop_keys trims their
 * pages before the sort's scratch): an output row is then one random read
 * of one page, where three arrays cost three TLB misses a row.  A single
 * key column stays a column, gathered by (chunk, row) pairs
 * (tl_array_take_multi), except a single int64, timestamp, date or
 * float64 key column, which is made in order from the sort's own sorted
 * images (key_from_images; floats only when each image gives its value
 * back bit for bit, so -0.0 and NaN payloads take the gather).  Nothing is
 * concatenated; strings share the chunks' data buffers.  Memory per row: the input once, 4 bytes of
 * permutation, plus the sort's own keys while it runs (see sort_perm).
 * TALLY_SORT_PACK=0 keeps every column (the column gather, for tests);
 * =2 packs only chunks of even length, and a mixed set is unpacked again
 * after the sort (out_prepare), which tests that path.
 *
 * Output pipeline (more than one thread): output batches are gathered
 * ahead by pool tasks, a ring of 2 x threads batches (out_start / out_fill
 * / out_next), so the gathering runs on the workers while the caller
 * formats and writes earlier batches; before, the writer's thread gathered
 * most columns itself while the worker formatted, and the output phase ran
 * at the pace of that one thread.  The batches are cut exactly as the
 * serial path cuts them.
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
 *     When every row has the same length (string keys all of one length,
 *     "id0000001905"), the row set has no offsets: a fixed width, 8 bytes
 *     a row less, and one random read per row in the sort's tie runs
 *     instead of two (offset, then bytes).
 * The column gather (tl_array_take_multi; top-k, and unpacked chunks)
 * runs one column per task.
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

/* Rows in columns: data columns of the child schema plus evaluated keys.
 * A full sort's chunk keeps its data columns packed as rows instead (see
 * pack_chunk): data[] is then all NULL and rows != NULL. */
typedef struct Chunk {
    TlArray **data;  /* n_data */
    TlArray **keys;  /* n_keys */
    int64_t n_rows;
    uint8_t *rows;   /* packed: n_rows rows of pk_row bytes, or NULL */
    uint8_t *rows_mem; /* the allocation rows lies in */
    uint8_t *nulls;  /* packed: pk_mask bytes a row, bit i = column i is
                        null; NULL when no column has a null here */
    uint8_t *info;   /* packed: per column PK_NULLS | PK_TNULL */
    TlBuf **bufs;    /* packed: the string columns' data blocks, in column
                        order (views' block numbers are rebased to it) */
    uint32_t n_bufs;
} Chunk;

enum { PK_NULLS = 1, PK_TNULL = 2, PK_BLOCK = 256 };

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
    /* output batches gathered ahead on the pool (full sort, > 1 thread) */
    TlWait *wait;
    struct OutSlot *slots;   /* ring of n_slots */
    int n_slots, head, inflight;
    int64_t submitted;       /* rows of perm handed to slots so far */
    /* packed rows (pack_chunk): column i at byte pk_off[i] of a row */
    int pack;                /* 0 off, 1 every chunk, 2 chunks of even length */
    bool keys_packed;        /* key columns are packed too (several keys) */
    int *pk_off;
    size_t pk_row, pk_mask;  /* bytes of a row, of a row's null mask */
    uint64_t *kimg;          /* packed output of a single numeric key column:
                                its sorted images (see sort_native), or NULL */
    int64_t kimg_m, kimg_nn; /* values, nulls */
    TlType kimg_type;
    bool kimg_on;            /* the key column is made from kimg */
    int64_t *starts;         /* packed output: chunk c's first global row */
    int *first;              /* chunk of global row b << LOC_SHIFT */
} SortOp;

enum { LOC_SHIFT = 12 };

/* One output batch being gathered by a pool task: rows perm[off, off+n). */
typedef struct OutSlot {
    SortOp *s;
    int64_t off, n;
    TlArray **cols;          /* n_data gathered columns (the task fills) */
    int state;               /* OUT_*; BUSY -> DONE under s->wait */
    TlStatus st;             /* the task's result */
} OutSlot;

enum { OUT_FREE = 0, OUT_BUSY, OUT_DONE };

static void chunk_free(Chunk *c, int n_data, int n_keys)
{
    if (c->data)
        for (int i = 0; i < n_data; i++) tl_array_release(c->data[i]);
    if (c->keys)
        for (int i = 0; i < n_keys; i++) tl_array_release(c->keys[i]);
    tl_free(c->data);
    tl_free(c->keys);
    tl_free(c->rows_mem);
    tl_free(c->nulls);
    tl_free(c->info);
    for (uint32_t k = 0; k < c->n_bufs; k++) tl_buf_release(c->bufs[k]);
    tl_free(c->bufs);
    memset(c, 0, sizeof *c);
}

/* n bytes for a chunk's packed rows, starting on a cache line (a 96-byte
 * row then always spans two lines, never three); *mem: the allocation to
 * free.  (Transparent huge pages for these blocks were tried: the gather's
 * page walks got cheaper, but faulting them in cost more system time than
 * that saved.) */
static uint8_t *rows_alloc(size_t n, uint8_t **mem)
{
    uint8_t *m = tl_malloc(n + 64);
    if (!m) return NULL;
    *mem = m;
    return (uint8_t *)(((uintptr_t)m + 63) & ~(uintptr_t)63);
}

/* Bytes a packed row gives a column of type t. */
static size_t pk_width(TlType t)
{
    switch (t) {
    case TL_TNULL: return 0;
    case TL_TBOOL: return 1;
    case TL_TDATE: return 4;
    case TL_TSTRING: return 16;
    default: return 8;
    }
}

/* A full sort's chunk: its data columns become rows of pk_row bytes (the
 * output gather then reads one or two cache lines per row instead of one
 * per column: each row is a random read, and the gather was a quarter of
 * a big sort's time).  Column i's value at byte pk_off[i] (an int64,
 * float64 or timestamp 8 bytes, a date 4, a bool 1, a string its 16-byte
 * view with the block number rebased to c->bufs, type null nothing); nulls
 * in a separate mask, only when the chunk has some.  The packed columns
 * are released: memory stays what the columns held.  The column of a
 * single sort key (pk_off -1) stays a column: the sort reads it, and
 * packing it too would hold it twice until the sort is done (several keys
 * are packed: see tl_op_sort_new).  A chunk with a column
 * whose type is neither the schema's nor null stays in columns. */
static TlStatus pack_chunk(const SortOp *s, Chunk *c, TlError *err)
{
    const TlField *f = s->base.schema->fields;
    int nd = s->n_data;
    int64_t n = c->n_rows;
    size_t W = s->pk_row, mb = s->pk_mask;
    uint32_t nb = 0;
    if (s->pack == 0 || (s->pack == 2 && n % 2)) return TL_OK;
    for (int i = 0; i < nd; i++) {
        TlType t = c->data[i]->type;
        if (s->pk_off[i] < 0) continue; /* a key column stays */
        if (t != f[i].type && t != TL_TNULL) return TL_OK;
        if (t == TL_TSTRING) nb += c->data[i]->n_data;
    }
    c->info = tl_calloc((size_t)nd + 1, 1);
    c->rows = rows_alloc((size_t)n * W, &c->rows_mem);
    c->bufs = nb ? tl_malloc(nb * sizeof *c->bufs) : NULL;
    if (!c->info || !c->rows || (nb && !c->bufs)) goto oom;
    /* nulls and string blocks first, then the values a block of rows at a
     * time (all columns of a block while it is in the cache) */
    for (int i = 0; i < nd; i++) {
        const TlArray *a = c->data[i];
        if (s->pk_off[i] < 0) continue;
        if (a->type == TL_TNULL || a->null_count > 0) {
            uint8_t bit = (uint8_t)(1u << (i % 8));
            uint8_t *m = NULL;
            c->info[i] = a->type == TL_TNULL ? PK_NULLS | PK_TNULL : PK_NULLS;
            if (!c->nulls && !(c->nulls = tl_calloc(n ? (size_t)n * mb : 1, 1))) goto oom;
            m = c->nulls + i / 8;
            for (int64_t r = 0; r < n; r++)
                if (!tl_array_valid(a, r)) m[(size_t)r * mb] |= bit;
        }
    }
    for (int64_t r0 = 0; r0 < n; r0 += PK_BLOCK) {
        int64_t r1 = n - r0 < PK_BLOCK ? n : r0 + PK_BLOCK;
        uint32_t base = 0;
        for (int i = 0; i < nd; i++) {
            const TlArray *a = c->data[i];
            if (s->pk_off[i] < 0) continue;
            uint8_t *d = c->rows + s->pk_off[i];
            if (a->type == TL_TNULL) {
                size_t w = pk_width(f[i].type);
                for (int64_t r = r0; r < r1 && w; r++) memset(d + (size_t)r * W, 0, w);
                continue;
            }
            switch (f[i].type) {
            case TL_TBOOL:
                for (int64_t r = r0; r < r1; r++) d[(size_t)r * W] = tl_array_bool(a, r);
                break;
            case TL_TDATE: {
                const int32_t *v = tl_array_i32(a);
                for (int64_t r = r0; r < r1; r++) memcpy(d + (size_t)r * W, &v[r], 4);
                break;
            }
            case TL_TSTRING: {
                const TlView *v = tl_array_views(a);
                for (int64_t r = r0; r < r1; r++) {
                    TlView x = v[r];
                    if (x.in.len > TL_VIEW_INLINE) x.out.buf += base;
                    memcpy(d + (size_t)r * W, &x, 16);
                }
                base += a->n_data;
                break;
            }
            default: { /* int64, float64, timestamp */
                const int64_t *v = tl_array_i64(a);
                for (int64_t r = r0; r < r1; r++) memcpy(d + (size_t)r * W, &v[r], 8);
                break;
            }
            }
        }
    }
    for (int i = 0; i < nd; i++)
        if (s->pk_off[i] >= 0 && c->data[i]->type == TL_TSTRING)
            for (uint32_t k = 0; k < c->data[i]->n_data; k++)
                c->bufs[c->n_bufs++] = tl_buf_retain(c->data[i]->data[k]);
    for (int i = 0; i < nd; i++) {
        if (s->pk_off[i] < 0) continue;
        tl_array_release(c->data[i]);
        c->data[i] = NULL;
    }
    return TL_OK;
oom:
    tl_free(c->info);
    tl_free(c->rows_mem);
    tl_free(c->nulls);
    for (uint32_t k = 0; k < c->n_bufs; k++) tl_buf_release(c->bufs[k]);
    tl_free(c->bufs);
    c->info = c->rows = c->rows_mem = c->nulls = NULL;
    c->bufs = NULL;
    c->n_bufs = 0;
    return tl_error_oom(err);
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
    if (!rows_out) drop_keys(s);
    int64_t n = s->pool_rows;
    IotaJob ij = {perm, n};
    TlStatus st = tl_pool_for((n + (1 << 20) - 1) >> 20, iota_piece, &ij, err);
    if (st == TL_OK) st = tl_k_psort_rows(&r, perm, n, 0, err);
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
 * keys != NULL) from the chunks into out_data[] / keys[]; with par, a
 * column per pool task (big n), else all on the calling thread. */
static TlStatus gather(SortOp *s, const uint32_t *g, int64_t n, TlArray **out_data,
                       TlArray **out_keys, bool par, TlError *err)
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
    if (par && n >= 4096) { /* a column per task */
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

/* Rows per tile of the packed gather: a tile's rows are located and
 * prefetched while the previous tile is copied out. */
enum { PK_TILE = 32 };

typedef struct PkTile {
    const uint8_t *src[PK_TILE];  /* the packed rows */
    uint32_t part[PK_TILE], row[PK_TILE];
} PkTile;

/* Locate global rows g[0..m) in the chunks and prefetch their rows (and
 * null masks when there are any). */
static void pk_locate(const SortOp *s, const uint32_t *g, int m, bool masks, PkTile *t)
{
    size_t W = s->pk_row;
    for (int j = 0; j < m; j++) {
        int64_t x = g[j];
        size_t b = (size_t)(x >> LOC_SHIFT);
        int lo = s->first[b], hi = s->first[b + 1];
        while (lo < hi) { /* the last chunk starting at or before x */
            int mid = (lo + hi + 1) / 2;
            if (s->starts[mid] <= x) lo = mid;
            else hi = mid - 1;
        }
        const Chunk *c = &s->chunks[lo];
        uint32_t r = (uint32_t)(x - s->starts[lo]);
        const uint8_t *p = c->rows + (size_t)r * W;
        t->part[j] = (uint32_t)lo;
        t->row[j] = r;
        t->src[j] = p;
        for (size_t q = 0; q < W; q += 64) __builtin_prefetch(p + q);
        if (W) __builtin_prefetch(p + W - 1); /* a row across three lines */
        if (masks && c->nulls) __builtin_prefetch(c->nulls + (size_t)r * s->pk_mask);
    }
}

/* Gather global rows g[0..n) of every data column from packed chunks into
 * out[] (the same arrays tl_array_take_multi makes from the columns: a
 * column of type null in every chunk of [c0, c1) gives type null; string
 * columns list the data blocks of chunks [c0, c1), chunk after chunk).
 * Rows must lie in chunks [c0, c1).  On failure out[] may hold some
 * arrays (the caller releases them). */
static TlStatus gather_packed(const SortOp *s, const uint32_t *g, int64_t n, int c0, int c1,
                              bool keys, TlArray **out, TlError *err)
{
    const TlField *f = s->base.schema->fields;
    int nd = s->n_data;
    size_t mb = s->pk_mask;
    uint32_t n_bufs = 0, *bbase = NULL;
    bool masks = false;
    TlBuf **vals = tl_calloc((size_t)nd * 2 + 1, sizeof *vals), **valid = NULL;
    int64_t *nullc = tl_calloc((size_t)nd + 1, sizeof *nullc);
    PkTile *tiles = tl_malloc(2 * sizeof *tiles);
    uint32_t *kpart = NULL, *krow = NULL; /* for the key columns */
    TlStatus st = TL_OK;
    bbase = tl_malloc(((size_t)s->n_chunks + 1) * sizeof *bbase);
    if (!vals || !nullc || !tiles || !bbase) goto oom;
    valid = vals + nd;
    for (int c = c0; c < c1; c++) {
        bbase[c] = n_bufs;
        n_bufs += s->chunks[c].n_bufs;
    }
    for (int i = 0; i < nd; i++) {
        bool tnull = true, nulls = false;
        if (s->pk_off[i] < 0) {
            if (keys && !kpart) {
                kpart = tl_malloc((size_t)(n ? n : 1) * sizeof *kpart);
                krow = tl_malloc((size_t)(n ? n : 1) * sizeof *krow);
                if (!kpart || !krow) goto oom;
            }
            continue;
        }
        for (int c = c0; c < c1; c++) {
            tnull = tnull && (s->chunks[c].info[i] & PK_TNULL);
            nulls = nulls || (s->chunks[c].info[i] & PK_NULLS);
        }
        if (tnull) {
            if (!(out[i] = tl_array_new_null(TL_TNULL, n))) goto oom;
            continue;
        }
        TlType t = f[i].type;
        vals[i] = tl_buf_new(t == TL_TBOOL ? tl_bitmap_bytes(n) : pk_width(t) * (size_t)n,
                             t == TL_TBOOL);
        if (!vals[i]) goto oom;
        if (nulls && n > 0) {
            if (!(valid[i] = tl_buf_new(tl_bitmap_bytes(n), true))) goto oom;
            masks = true;
        }
    }
    PkTile *cur = &tiles[0], *nxt = &tiles[1];
    if (n > 0) pk_locate(s, g, n < PK_TILE ? (int)n : PK_TILE, masks, cur);
    for (int64_t t0 = 0; t0 < n; t0 += PK_TILE) {
        int m = n - t0 < PK_TILE ? (int)(n - t0) : PK_TILE;
        for (int j = 0; kpart && j < m; j++) {
            kpart[t0 + j] = cur->part[j] - (uint32_t)c0;
            krow[t0 + j] = cur->row[j];
        }
        if (t0 + PK_TILE < n)
            pk_locate(s, g + t0 + PK_TILE,
                      n - t0 - PK_TILE < PK_TILE ? (int)(n - t0 - PK_TILE) : PK_TILE, masks,
                      nxt);
        for (int i = 0; i < nd; i++) {
            if (!vals[i]) continue;
            size_t off = (size_t)s->pk_off[i];
            uint8_t *d = vals[i]->data;
            switch (f[i].type) {
            case TL_TBOOL:
                for (int j = 0; j < m; j++)
                    if (cur->src[j][off]) tl_bit_set(d, t0 + j);
                break;
            case TL_TDATE:
                d += (size_t)t0 * 4;
                for (int j = 0; j < m; j++) memcpy(d + (size_t)j * 4, cur->src[j] + off, 4);
                break;
            case TL_TSTRING: {
                TlView *v = (TlView *)d + t0;
                for (int j = 0; j < m; j++) {
                    TlView x;
                    memcpy(&x, cur->src[j] + off, 16);
                    if (x.in.len > TL_VIEW_INLINE) x.out.buf += bbase[cur->part[j]];
                    v[j] = x;
                }
                break;
            }
            default:
                d += (size_t)t0 * 8;
                for (int j = 0; j < m; j++) memcpy(d + (size_t)j * 8, cur->src[j] + off, 8);
                break;
            }
            if (valid[i]) {
                uint8_t bit = (uint8_t)(1u << (i % 8));
                for (int j = 0; j < m; j++) {
                    const uint8_t *mk = s->chunks[cur->part[j]].nulls;
                    if (mk && (mk[(size_t)cur->row[j] * mb + (size_t)i / 8] & bit))
                        nullc[i]++;
                    else
                        tl_bit_set(valid[i]->data, t0 + j);
                }
            }
        }
        PkTile *tmp = cur;
        cur = nxt;
        nxt = tmp;
    }
    for (int i = 0; kpart && i < nd; i++) {
        if (s->pk_off[i] >= 0 || (s->kimg_on && i == s->key_col[0])) continue;
        TlArray **parts = tl_malloc(((size_t)(c1 - c0) + 1) * sizeof *parts);
        if (!parts) goto oom;
        for (int c = c0; c < c1; c++) parts[c - c0] = s->chunks[c].data[i];
        out[i] = tl_array_take_multi(parts, c1 - c0, kpart, krow, n);
        tl_free(parts);
        if (!out[i]) goto oom;
    }
    for (int i = 0; i < nd; i++) {
        TlBuf **data = NULL;
        if (!vals[i]) continue;
        if (f[i].type == TL_TSTRING && n_bufs > 0) {
            uint32_t k = 0;
            if (!(data = tl_malloc(n_bufs * sizeof *data))) goto oom;
            for (int c = c0; c < c1; c++)
                for (uint32_t b = 0; b < s->chunks[c].n_bufs; b++)
                    data[k++] = tl_buf_retain(s->chunks[c].bufs[b]);
        }
        out[i] = tl_array_new(f[i].type, n, vals[i], valid[i], nullc[i], data,
                              data ? n_bufs : 0);
        vals[i] = valid[i] = NULL; /* taken over, also on failure */
        if (!out[i]) goto oom;
    }
    goto done;
oom:
    st = tl_error_oom(err);
done:
    for (int i = 0; vals && i < 2 * nd; i++) tl_buf_release(vals[i]); /* and valid[] */
    tl_free(vals);
    tl_free(nullc);
    tl_free(tiles);
    tl_free(bbase);
    tl_free(kpart);
    tl_free(krow);
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
    st = gather(s, perm, k, kept.data, kept.keys, true, err);
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
    if (s->limit < 0) st = pack_chunk(s, c, err);
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
    /* Packing freed every chunk's columns: give the free pages they left
     * inside the heaps back before the sort's scratch comes on top. */
    tl_alloc_trim();
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

/* Chunk c of a mixed output (some chunks packed, some not) back into
 * columns (a pool task). */
static void unpack_task(void *arg, int64_t ci)
{
    SortOp *s = arg;
    Chunk *c = &s->chunks[ci];
    TlError e;
    uint32_t *g;
    if (!c->rows) return;
    g = tl_malloc((size_t)(c->n_rows ? c->n_rows : 1) * sizeof *g);
    if (!g) return; /* rows stay: out_prepare sees it */
    for (int64_t r = 0; r < c->n_rows; r++) g[r] = (uint32_t)(s->starts[ci] + r);
    if (gather_packed(s, g, c->n_rows, (int)ci, (int)ci + 1, false, c->data, &e) == TL_OK) {
        tl_free(c->rows_mem);
        c->rows_mem = NULL;
        tl_free(c->nulls);
        tl_free(c->info);
        for (uint32_t k = 0; k < c->n_bufs; k++) tl_buf_release(c->bufs[k]);
        tl_free(c->bufs);
        c->rows = c->nulls = c->info = NULL;
        c->bufs = NULL;
        c->n_bufs = 0;
    }
    tl_free(g);
}

/* After the sort: the chunk lookup of the packed gather, or, when only
 * some chunks are packed, those chunks back into columns (the column
 * gather then serves all). */
static TlStatus out_prepare(SortOp *s, TlError *err)
{
    int nc = s->n_chunks, packed = 0;
    if (!s->perm || nc == 0) return TL_OK;
    for (int c = 0; c < nc; c++) packed += s->chunks[c].rows != NULL;
    if (packed == 0) {
        tl_free(s->kimg);
        s->kimg = NULL;
        return TL_OK;
    }
    int64_t total = s->pool_rows;
    size_t n_blocks = (size_t)(total >> LOC_SHIFT) + 2;
    s->starts = tl_malloc(((size_t)nc + 1) * sizeof *s->starts);
    s->first = tl_malloc(n_blocks * sizeof *s->first);
    if (!s->starts || !s->first) return tl_error_oom(err);
    s->starts[0] = 0;
    for (int c = 0; c < nc; c++) s->starts[c + 1] = s->starts[c] + s->chunks[c].n_rows;
    for (size_t b = 0, c = 0; b < n_blocks; b++) {
        int64_t x = (int64_t)b << LOC_SHIFT;
        while ((int)c + 1 < nc && s->starts[c + 1] <= x) c++;
        s->first[b] = (int)c;
    }
    if (packed == nc) {
        if (s->kimg) { /* the key column comes from the images */
            int kc = s->key_col[0];
            for (int c = 0; c < nc; c++) {
                tl_array_release(s->chunks[c].data[kc]);
                s->chunks[c].data[kc] = NULL;
            }
            s->kimg_on = true;
        }
        return TL_OK;
    }
    tl_free(s->kimg);
    s->kimg = NULL;
    TL_TRY(tl_pool_for(nc, unpack_task, s, err));
    for (int c = 0; c < nc; c++)
        if (s->chunks[c].rows) return tl_error_oom(err);
    return TL_OK;
}

/* The key column (single numeric key) at output rows [off, off + n) from
 * the sorted images: values in order, nulls before or after them, as
 * put_nulls placed them.  Only when every image gives its value back bit
 * for bit (sort_native checked).  NULL on OOM. */
static TlArray *key_from_images(const SortOp *s, int64_t off, int64_t n)
{
    TlType t = s->kimg_type;
    /* values at output rows [v0, v1) are kimg[p - v0]; the batch's values
     * are rows [a, b) */
    int64_t v0 = s->nulls_first[0] ? s->kimg_nn : 0, v1 = v0 + s->kimg_m;
    int64_t a = off > v0 ? off : v0, b = off + n < v1 ? off + n : v1;
    uint64_t flip = s->desc[0] ? ~0ull : 0, sign = 1ull << 63;
    if (b < a) b = a;
    const uint64_t *img = s->kimg + (a - v0); /* img[i]: output row a + i */
    int64_t k = b - a, j0 = a - off;          /* at batch row j0 + i */
    TlBuf *vals = tl_buf_new((t == TL_TDATE ? 4 : 8) * (size_t)(n ? n : 1), true);
    TlBuf *valid = NULL;
    if (!vals) return NULL;
    if (b - a < n) {
        if (!(valid = tl_buf_new(tl_bitmap_bytes(n), true))) {
            tl_buf_release(vals);
            return NULL;
        }
        for (int64_t j = a - off; j < b - off; j++) tl_bit_set(valid->data, j);
    }
    if (t == TL_TFLOAT64) {
        double *d = (double *)vals->data + j0;
        for (int64_t i = 0; i < k; i++) d[i] = tl_k_f64_from_image(img[i] ^ flip);
    } else if (t == TL_TDATE) {
        int32_t *d = (int32_t *)vals->data + j0;
        for (int64_t i = 0; i < k; i++) d[i] = (int32_t)(int64_t)(img[i] ^ flip ^ sign);
    } else {
        int64_t *d = (int64_t *)vals->data + j0;
        for (int64_t i = 0; i < k; i++) d[i] = (int64_t)(img[i] ^ flip ^ sign);
    }
    return tl_array_new(t, n, vals, valid, n - (b - a), NULL, 0);
}

/* Output rows perm[off, off + n) of every data column into cols[]: from
 * the packed rows, or by the column gather (with par, a column per task). */
static TlStatus out_gather(SortOp *s, int64_t off, int64_t n, TlArray **cols, bool par,
                           TlError *err)
{
    if (s->n_chunks > 0 && s->chunks[0].rows) {
        TL_TRY(gather_packed(s, s->perm + off, n, 0, s->n_chunks, true, cols, err));
        if (s->kimg_on && !(cols[s->key_col[0]] = key_from_images(s, off, n)))
            return tl_error_oom(err);
        return TL_OK;
    }
    return gather(s, s->perm + off, n, cols, NULL, par, err);
}

/* A pool task: gather slot o's rows (every data column, on this thread). */
static void out_task(void *arg)
{
    OutSlot *o = arg;
    SortOp *s = o->s;
    TlError e;
    TlStatus st = out_gather(s, o->off, o->n, o->cols, false, &e);
    tl_wait_lock(s->wait);
    o->st = st;
    o->state = OUT_DONE;
    tl_wait_signal(s->wait);
    tl_wait_unlock(s->wait);
}

/* Release the columns a slot holds. */
static void out_clear(SortOp *s, OutSlot *o)
{
    for (int c = 0; c < s->n_data; c++) {
        tl_array_release(o->cols[c]);
        o->cols[c] = NULL;
    }
}

/* Wait for every slot in flight (before freeing what tasks read), then
 * free the ring. */
static void out_stop(SortOp *s)
{
    if (s->wait && s->inflight > 0) {
        tl_wait_lock(s->wait);
        for (int i = 0; s->slots && i < s->n_slots; i++)
            while (s->slots[i].state == OUT_BUSY) tl_wait_step(s->wait);
        tl_wait_unlock(s->wait);
    }
    for (int i = 0; s->slots && i < s->n_slots; i++)
        if (s->slots[i].cols) {
            out_clear(s, &s->slots[i]);
            tl_free(s->slots[i].cols);
        }
    tl_free(s->slots);
    s->slots = NULL;
    tl_wait_free(s->wait);
    s->wait = NULL;
}

/* Start the pipeline of output batches (full sort with more than one
 * thread): a ring of slots, each an output batch gathered by a pool task,
 * so the gathering of later batches runs on the workers while the caller
 * writes earlier ones.  Batch boundaries are those of the serial path. */
static TlStatus out_start(SortOp *s, TlError *err)
{
    int threads = tl_pool_threads();
    if (threads <= 1 || !s->perm || s->n_out <= tl_batch_rows()) return TL_OK;
    s->n_slots = threads * 2 > 16 ? 16 : threads * 2;
    s->wait = tl_wait_new();
    s->slots = tl_calloc((size_t)s->n_slots, sizeof *s->slots);
    if (!s->wait || !s->slots) goto oom;
    for (int i = 0; i < s->n_slots; i++) {
        s->slots[i].s = s;
        s->slots[i].cols = tl_calloc((size_t)s->n_data + 1, sizeof *s->slots[i].cols);
        if (!s->slots[i].cols) goto oom;
    }
    return TL_OK;
oom:
    out_stop(s); /* nothing in flight yet */
    return tl_error_oom(err);
}

/* Hand the next batches to free slots (in order) until the ring is full. */
static void out_fill(SortOp *s)
{
    while (s->inflight < s->n_slots && s->submitted < s->n_out) {
        OutSlot *o = &s->slots[(s->head + s->inflight) % s->n_slots];
        TlError e;
        o->off = s->submitted;
        o->n = s->n_out - s->submitted;
        if (o->n > tl_batch_rows()) o->n = tl_batch_rows();
        o->st = TL_OK;
        o->state = OUT_BUSY;
        s->submitted += o->n;
        s->inflight++;
        if (tl_pool_submit(out_task, o, &e) != TL_OK) out_task(o); /* OOM: here */
    }
}

/* The next output batch from the pipeline into b (rows columns). */
static TlStatus out_next(SortOp *s, TlBatch *b, TlError *err)
{
    OutSlot *o;
    out_fill(s);
    o = &s->slots[s->head];
    tl_wait_lock(s->wait);
    while (o->state == OUT_BUSY) tl_wait_step(s->wait);
    tl_wait_unlock(s->wait);
    s->head = (s->head + 1) % s->n_slots;
    s->inflight--;
    o->state = OUT_FREE;
    if (o->st != TL_OK) {
        out_clear(s, o);
        return tl_error_oom(err); /* gather fails only out of memory */
    }
    for (int c = 0; c < s->n_data; c++) {
        b->cols[c] = o->cols[c];
        o->cols[c] = NULL;
    }
    out_fill(s); /* the workers go on while the caller uses b */
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
        TL_TRY(out_prepare(s, err));
        TL_TRY(out_start(s, err));
    }
    if (s->emitted >= s->n_out) {
        out_stop(s);
        free_chunks(s); /* done: drop the input early */
        return TL_OK;
    }
    int64_t rows = s->n_out - s->emitted;
    if (rows > tl_batch_rows()) rows = tl_batch_rows();
    TlBatch *b = tl_batch_new(op->schema, s->n_data, rows);
    if (!b) return tl_error_oom(err);
    if (s->perm) {
        TlStatus st = s->slots ? out_next(s, b, err)
                               : out_gather(s, s->emitted, rows, b->cols, true, err);
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
    out_stop(s); /* tasks read the chunks and perm */
    if (s->child) s->child->free(s->child);
    free_chunks(s);
    tl_free(s->chunks);
    tl_free(s->perm);
    tl_free(s->pk_off);
    tl_free(s->kimg);
    tl_free(s->starts);
    tl_free(s->first);
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
    /* packed rows: a full sort's data columns, each at a fixed offset;
     * key columns stay columns (-1) */
    const char *pk = getenv("TALLY_SORT_PACK");
    s->pack = pk && strcmp(pk, "0") == 0 ? 0 : pk && strcmp(pk, "2") == 0 ? 2 : 1;
    s->pk_off = tl_malloc(((size_t)s->n_data + 1) * sizeof *s->pk_off);
    if (!s->pk_off) {
        sort_free(&s->base);
        return tl_error_oom(err);
    }
    /* A single key column stays a column: the native and string sorts
     * read it, and the output makes it from the sorted images (kimg).
     * Several keys are packed like the other columns: the sort reads
     * their encoded rows, and the output then reads each row from one
     * place, one page (a gather from three arrays was three TLB misses a
     * row, the bulk of a big sort's output time).  The chunk's key
     * references hold the columns until the rows are encoded. */
    for (int i = 0; i < s->n_data; i++) s->pk_off[i] = 0;
    for (int k = 0; k < n_keys && n_keys == 1; k++)
        if (s->key_col[k] >= 0) s->pk_off[s->key_col[k]] = -1;
    for (int k = 0; k < n_keys && n_keys > 1 && s->pack != 0; k++)
        if (s->key_col[k] >= 0) s->keys_packed = true;
    for (int i = 0; i < s->n_data; i++) {
        if (s->pk_off[i] < 0) continue;
        s->pk_off[i] = (int)s->pk_row;
        s->pk_row += pk_width(child->schema->fields[i].type);
    }
    s->pk_row = (s->pk_row + 7) / 8 * 8;
    s->pk_mask = ((size_t)s->n_data + 7) / 8;
    *out = &s->base;
    return TL_OK;
}
