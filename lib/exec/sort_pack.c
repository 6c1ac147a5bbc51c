/*
 * sort_pack.c -- a full sort's chunks packed into rows, and output rows
 * gathered back into columns, for op_sort.c.
 *
 * A full sort keeps each child batch as a chunk; tl_sort_pack_chunk turns
 * its data columns into rows of fixed offsets (kernels/rowpack.h: 8 bytes
 * a number, 16 a string view with its block number rebased to the chunk's
 * list of data blocks, 4 a date, 1 a bool, nulls in a per-row mask beside
 * the rows, only where the chunk has nulls) and releases the columns.  The output then gathers each row
 * with one random read of one or two cache lines (tl_sort_gather_packed,
 * a tile of rows located and prefetched while the previous tile is copied
 * out) instead of one read per column.  Chunks left in columns (top-k,
 * TALLY_SORT_PACK=0, mixed types) go through tl_sort_gather, one column
 * per pool task (tl_array_take_multi).
 */
#include <stdlib.h>

#include "sort_impl.h"

/* Release everything chunk c holds (columns, keys, packed rows, blocks)
 * and zero it. */
void tl_sort_chunk_free(Chunk *c, int n_data, int n_keys)
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
TlStatus tl_sort_pack_chunk(const SortOp *s, Chunk *c, TlError *err)
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
    /* nulls first, then the values a block of rows at a time (all columns
     * of a block while it is in the cache) */
    for (int i = 0; i < nd; i++) {
        const TlArray *a = c->data[i];
        if (s->pk_off[i] < 0 || (a->type != TL_TNULL && a->null_count == 0)) continue;
        c->info[i] = a->type == TL_TNULL ? PK_NULLS | PK_TNULL : PK_NULLS;
        if (!c->nulls && !(c->nulls = tl_calloc(n ? (size_t)n * mb : 1, 1))) goto oom;
        tl_k_rowpack_put_nulls(a, NULL, n, c->nulls, mb, i);
    }
    for (int64_t r0 = 0; r0 < n; r0 += PK_BLOCK) {
        int64_t r1 = n - r0 < PK_BLOCK ? n : r0 + PK_BLOCK;
        uint32_t base = 0;
        for (int i = 0; i < nd; i++) {
            const TlArray *a = c->data[i];
            if (s->pk_off[i] < 0) continue;
            tl_k_rowpack_put(a, f[i].type, NULL, r0, r1, c->rows + s->pk_off[i], W, base);
            if (a->type == TL_TSTRING) base += a->n_data;
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
TlStatus tl_sort_gather(SortOp *s, const uint32_t *g, int64_t n, TlArray **out_data,
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
    const uint8_t *mask[PK_TILE]; /* their null masks, or NULL */
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
        t->mask[j] = masks && c->nulls ? c->nulls + (size_t)r * s->pk_mask : NULL;
        for (size_t q = 0; q < W; q += 64) __builtin_prefetch(p + q);
        if (W) __builtin_prefetch(p + W - 1); /* a row across three lines */
        if (t->mask[j]) __builtin_prefetch(t->mask[j]);
    }
}

/* Gather global rows g[0..n) of every data column from packed chunks into
 * out[] (the same arrays tl_array_take_multi makes from the columns: a
 * column of type null in every chunk of [c0, c1) gives type null; string
 * columns list the data blocks of chunks [c0, c1), chunk after chunk).
 * Rows must lie in chunks [c0, c1).  On failure out[] may hold some
 * arrays (the caller releases them). */
TlStatus tl_sort_gather_packed(const SortOp *s, const uint32_t *g, int64_t n, int c0, int c1,
                               bool keys, TlArray **out, TlError *err)
{
    const TlField *f = s->base.schema->fields;
    int nd = s->n_data;
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
        vals[i] = tl_buf_new(t == TL_TBOOL ? tl_bitmap_bytes(n) : tl_k_rowpack_width(t) * (size_t)n,
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
            tl_k_rowpack_get(f[i].type, cur->src, m, (size_t)s->pk_off[i], bbase, cur->part,
                             vals[i]->data, t0);
            if (valid[i])
                nullc[i] += tl_k_rowpack_get_valid(cur->mask, m, 0, i, valid[i]->data, t0);
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