/*
 * chunk_write.c -- one column of one row group, encoded: the bytes of its
 * pages and what the footer says of it (pqwrite.h).
 *
 *   gather     the row group's pieces of the column -> a definition level
 *              per row (1: a value, 0: null) and the values in their
 *              physical form, nulls left out (strings stay where the
 *              batch holds them)
 *   statistics null count, min and max (min_value/max_value: signed order
 *              for integers and dates, IEEE order without NaN for doubles
 *              with -0.0 as a zero minimum and +0.0 as a zero maximum,
 *              unsigned bytes for strings, false < true); a string bound
 *              longer than PQ_STAT_MAX bytes is left out, so the footer
 *              stays small whatever the data
 *   dictionary every type but bool tries one (encode.c) while its PLAIN
 *              bytes stay under DICT_MAX, and keeps it when the dictionary
 *              page plus the indices are smaller than the PLAIN values;
 *              otherwise the chunk is PLAIN
 *   pages      cut on rows once a page's values reach PAGE_BYTES (or
 *              PAGE_ROWS rows), so a page is a few hundred KiB to compress
 *              whatever the row group's size; data page v1: the levels
 *              (4-byte length, RLE/bit-packed, width 1), then the values
 *              (PLAIN, or one byte of bit width and the indices as runs),
 *              compressed by the writer's codec
 *
 * Everything depends on the column's values only, never on batches or
 * threads, so the same rows give the same bytes.
 */
#include "pqwrite.h"

#include <math.h>
#include <stdio.h>

#define PQ_STAT_MAX 256
#define DICT_MAX ((size_t)1 << 20)
#define PAGE_BYTES ((uint64_t)1 << 20)
#define PAGE_ROWS ((int64_t)1 << 20)

int pq_write_phys(TlType t)
{
    switch (t) {
    case TL_TBOOL: return PQ_BOOLEAN;
    case TL_TINT64:
    case TL_TTIMESTAMP: case TL_TTIMESTAMPTZ: return PQ_INT64;
    case TL_TFLOAT64: return PQ_DOUBLE;
    case TL_TSTRING: return PQ_BYTE_ARRAY;
    default: return PQ_INT32; /* date; null (UNKNOWN) */
    }
}

typedef struct Chunk {
    const PqChunkIn *in;
    PqChunkOut *out;
    int phys;
    int64_t n, nv;           /* rows, values */
    uint32_t *def;           /* per row */
    void *vals;              /* int32_t / int64_t (doubles as bits) / PqVal / uint32_t (bool) */
    uint32_t *idx;           /* dictionary indices, per value */
    PqDict dict;
    int bits;                /* index bit width */
    PqBytes raw, comp;       /* a page before and after compression */
    PqTw head;
} Chunk;

/* -------------------------------------------------------------- gather */

static size_t val_width(int phys)
{
    switch (phys) {
    case PQ_INT32: return 4;
    case PQ_BYTE_ARRAY: return sizeof(PqVal);
    case PQ_BOOLEAN: return 4;
    default: return 8;
    }
}

static bool gather(Chunk *c)
{
    const PqChunkIn *in = c->in;
    int64_t r = 0, k = 0;
    size_t w = val_width(c->phys);
    c->def = tl_malloc((size_t)(c->n ? c->n : 1) * sizeof *c->def);
    c->vals = tl_malloc((size_t)(c->n ? c->n : 1) * w);
    if (!c->def || !c->vals) return false;
    for (int p = 0; p < in->n_parts; p++) {
        const TlArray *a = in->parts[p];
        bool all = a->type != TL_TNULL && a->null_count == 0;
        if (a->type == TL_TNULL || a->null_count == a->length) {
            for (int64_t i = 0; i < a->length; i++) c->def[r++] = 0;
            continue;
        }
        for (int64_t i = 0; i < a->length; i++) c->def[r + i] = all || tl_array_valid(a, i);
        switch (c->phys) {
        case PQ_INT64:
        case PQ_DOUBLE: {
            const int64_t *v = (const int64_t *)a->values->data + a->offset;
            int64_t *o = (int64_t *)c->vals;
            if (all) {
                memcpy(o + k, v, (size_t)a->length * 8);
                k += a->length;
            } else {
                for (int64_t i = 0; i < a->length; i++)
                    if (c->def[r + i]) o[k++] = v[i];
            }
            break;
        }
        case PQ_INT32: {
            const int32_t *v = tl_array_i32(a);
            int32_t *o = (int32_t *)c->vals;
            for (int64_t i = 0; i < a->length; i++)
                if (c->def[r + i]) o[k++] = v[i];
            break;
        }
        case PQ_BOOLEAN: {
            uint32_t *o = (uint32_t *)c->vals;
            for (int64_t i = 0; i < a->length; i++)
                if (c->def[r + i]) o[k++] = tl_array_bool(a, i);
            break;
        }
        default: {
            const TlView *v = tl_array_views(a);
            PqVal *o = (PqVal *)c->vals;
            for (int64_t i = 0; i < a->length; i++)
                if (c->def[r + i])
                    o[k++] = (PqVal){tl_view_ptr(&v[i], a->data), tl_view_len(v[i])};
            break;
        }
        }
        r += a->length;
    }
    c->nv = k;
    return true;
}

/* ---------------------------------------------------------- statistics */

static bool set_stat(uint8_t **dst, uint32_t *len, const void *p, size_t n)
{
    *dst = tl_malloc(n ? n : 1);
    if (!*dst) return false;
    memcpy(*dst, p, n);
    *len = (uint32_t)n;
    return true;
}

static int str_cmp(const PqVal *a, const PqVal *b)
{
    int d = memcmp(a->p, b->p, a->n < b->n ? a->n : b->n);
    return d ? d : (a->n > b->n) - (a->n < b->n);
}

/* Statistics of the values, or of the dictionary's entries when the
 * chunk has one (the same bounds, from far fewer values). */
static bool stats(Chunk *c)
{
    PqChunkOut *o = c->out;
    int64_t nv = c->nv;
    const void *vals = c->vals;
    bool wide32 = false;     /* INT32 values held as int64 (the dictionary's) */
    const uint8_t *lo = NULL, *hi = NULL;
    size_t lo_n = 0, hi_n = 0;
    int64_t i64[2];
    int32_t i32[2];
    double f64[2];
    uint8_t b8[2];
    o->null_count = c->n - c->nv;
    if (c->nv == 0) return true;
    if (o->dict) {
        nv = c->dict.n;
        vals = c->phys == PQ_BYTE_ARRAY ? (const void *)c->dict.strs : (const void *)c->dict.fixed;
        wide32 = c->phys == PQ_INT32;
    }
    switch (c->phys) {
    case PQ_INT64:
    case PQ_INT32: {
        if (c->phys == PQ_INT64 || wide32) {
            const int64_t *v = vals;
            i64[0] = i64[1] = v[0];
            for (int64_t i = 1; i < nv; i++) {
                if (v[i] < i64[0]) i64[0] = v[i];
                if (v[i] > i64[1]) i64[1] = v[i];
            }
        } else {
            const int32_t *v = vals;
            i64[0] = i64[1] = v[0];
            for (int64_t i = 1; i < nv; i++) {
                if (v[i] < i64[0]) i64[0] = v[i];
                if (v[i] > i64[1]) i64[1] = v[i];
            }
        }
        if (c->phys == PQ_INT64) {
            lo = (const uint8_t *)&i64[0], hi = (const uint8_t *)&i64[1], lo_n = hi_n = 8;
        } else {
            i32[0] = (int32_t)i64[0], i32[1] = (int32_t)i64[1];
            lo = (const uint8_t *)&i32[0], hi = (const uint8_t *)&i32[1], lo_n = hi_n = 4;
        }
        break;
    }
    case PQ_DOUBLE: {
        const int64_t *v = vals;
        bool any = false;
        for (int64_t i = 0; i < nv; i++) {
            double x;
            memcpy(&x, &v[i], 8);
            if (isnan(x)) continue;
            if (!any || x < f64[0]) f64[0] = x;
            if (!any || x > f64[1]) f64[1] = x;
            any = true;
        }
        if (!any) return true; /* only NaN: no bounds */
        if (f64[0] == 0) f64[0] = -0.0;
        if (f64[1] == 0) f64[1] = 0.0;
        lo = (const uint8_t *)&f64[0], hi = (const uint8_t *)&f64[1], lo_n = hi_n = 8;
        break;
    }
    case PQ_BOOLEAN: {
        const uint32_t *v = vals;
        b8[0] = 1, b8[1] = 0;
        for (int64_t i = 0; i < nv; i++) {
            if (!v[i]) b8[0] = 0;
            else b8[1] = 1;
        }
        lo = &b8[0], hi = &b8[1], lo_n = hi_n = 1;
        break;
    }
    default: {
        const PqVal *v = vals, *mn = &v[0], *mx = &v[0];
        for (int64_t i = 1; i < nv; i++) {
            if (str_cmp(&v[i], mn) < 0) mn = &v[i];
            else if (str_cmp(&v[i], mx) > 0) mx = &v[i];
        }
        if (mn->n > PQ_STAT_MAX || mx->n > PQ_STAT_MAX) return true;
        lo = mn->p, hi = mx->p, lo_n = mn->n, hi_n = mx->n;
        break;
    }
    }
    if (!set_stat(&o->min, &o->min_len, lo, lo_n) || !set_stat(&o->max, &o->max_len, hi, hi_n))
        return false;
    o->has_minmax = true;
    return true;
}

/* --------------------------------------------------------------- pages */

/* PLAIN bytes of values [k0, k1) of vals (phys) onto b. */
static void plain(PqBytes *b, int phys, const void *vals, int64_t k0, int64_t k1)
{
    int64_t n = k1 - k0;
    switch (phys) {
    case PQ_INT64:
    case PQ_DOUBLE: pq_bytes_put(b, (const int64_t *)vals + k0, (size_t)n * 8); break;
    case PQ_INT32: pq_bytes_put(b, (const int32_t *)vals + k0, (size_t)n * 4); break;
    case PQ_BOOLEAN: {
        const uint32_t *v = (const uint32_t *)vals + k0;
        size_t bytes = (size_t)(n + 7) / 8;
        if (!pq_bytes_reserve(b, bytes)) return;
        memset(b->p + b->len, 0, bytes);
        for (int64_t i = 0; i < n; i++)
            if (v[i]) b->p[b->len + (size_t)(i >> 3)] |= (uint8_t)(1u << (i & 7));
        b->len += bytes;
        break;
    }
    default: {
        const PqVal *v = (const PqVal *)vals + k0;
        size_t bytes = 0;
        uint8_t *o;
        for (int64_t i = 0; i < n; i++) bytes += 4 + (size_t)v[i].n;
        if (!pq_bytes_reserve(b, bytes)) return;
        o = b->p + b->len;
        for (int64_t i = 0; i < n; i++) {
            uint32_t len = v[i].n;
            memcpy(o, &len, 4);
            memcpy(o + 4, v[i].p, len);
            o += 4 + len;
        }
        b->len += bytes;
        break;
    }
    }
}

/* The page in c->raw, compressed, after its header, onto the chunk. */
static TlStatus put_page(Chunk *c, int type, int64_t num_values, int encoding)
{
    PqChunkOut *o = c->out;
    const PqBytes *body = &c->raw;
    if (c->raw.oom) return TL_ERR_OOM;
    if (c->raw.len > INT32_MAX) {
        snprintf(o->why, sizeof o->why, "a page of %zu bytes, more than Parquet's 2 GiB",
                 c->raw.len);
        return TL_ERR_DATA;
    }
    if (c->in->cctx && !(c->comp.len = 0, pq_compress(c->in->cctx, c->raw.p, c->raw.len,
                                                      &c->comp))) {
        if (c->comp.oom) return TL_ERR_OOM;
        snprintf(o->why, sizeof o->why, "the codec failed to compress a page");
        return TL_ERR_DATA;
    }
    if (c->in->cctx) body = &c->comp;
    if (body->len > INT32_MAX) {
        snprintf(o->why, sizeof o->why, "a page of %zu bytes, more than Parquet's 2 GiB",
                 body->len);
        return TL_ERR_DATA;
    }
    pq_tw_free(&c->head);
    pq_page_header_put(&c->head, type, c->raw.len, body->len, num_values, encoding);
    if (c->head.oom) return TL_ERR_OOM;
    if (type == PQ_PAGE_DICTIONARY) o->dict_offset = (int64_t)o->bytes.len;
    else if (o->data_offset < 0) o->data_offset = (int64_t)o->bytes.len;
    pq_bytes_put(&o->bytes, c->head.p, c->head.len);
    pq_bytes_put(&o->bytes, body->p, body->len);
    if (o->bytes.oom) return TL_ERR_OOM;
    o->uncompressed += (int64_t)(c->head.len + c->raw.len);
    o->compressed += (int64_t)(c->head.len + body->len);
    return TL_OK;
}

/* Bits a value costs in a page, for cutting pages. */
static uint64_t cost(const Chunk *c, int64_t k)
{
    if (c->out->dict) return (uint64_t)c->bits;
    switch (c->phys) {
    case PQ_BOOLEAN: return 1;
    case PQ_INT32: return 32;
    case PQ_BYTE_ARRAY: return 8 * (4 + (uint64_t)((const PqVal *)c->vals)[k].n);
    default: return 64;
    }
}

static TlStatus data_pages(Chunk *c)
{
    int64_t r0 = 0, k0 = 0;
    while (r0 < c->n || (r0 == 0 && c->n == 0)) {
        int64_t r1 = r0, k1 = k0;
        uint64_t bits = 0;
        size_t at;
        uint32_t lev;
        while (r1 < c->n && r1 - r0 < PAGE_ROWS && bits < PAGE_BYTES * 8) {
            if (c->def[r1]) bits += cost(c, k1++);
            r1++;
        }
        c->raw.len = 0;
        if (!pq_bytes_reserve(&c->raw, 4)) return TL_ERR_OOM;
        at = c->raw.len;
        c->raw.len += 4;
        pq_rle_encode(&c->raw, c->def + r0, r1 - r0, 1);
        if (c->raw.oom) return TL_ERR_OOM;
        lev = (uint32_t)(c->raw.len - at - 4);
        memcpy(c->raw.p + at, &lev, 4);
        if (c->out->dict) {
            pq_bytes_put(&c->raw, &(uint8_t){(uint8_t)c->bits}, 1);
            pq_rle_encode(&c->raw, c->idx + k0, k1 - k0, c->bits);
        } else {
            plain(&c->raw, c->phys, c->vals, k0, k1);
        }
        TL_TRY(put_page(c, PQ_PAGE_DATA, r1 - r0,
                        c->out->dict ? PQ_ENC_RLE_DICTIONARY : PQ_ENC_PLAIN));
        r0 = r1;
        k0 = k1;
        if (c->n == 0) break;
    }
    return TL_OK;
}

/* Whether the chunk is written with a dictionary (built in c->dict). */
static bool try_dict(Chunk *c, bool *oom)
{
    bool full;
    uint64_t dict_cost, plain_cost;
    *oom = false;
    if (c->phys == PQ_BOOLEAN || c->nv == 0) return false;
    c->idx = tl_malloc((size_t)c->nv * sizeof *c->idx);
    if (!c->idx) return !(*oom = true);
    if (!pq_dict_build(&c->dict, c->phys, c->vals, c->nv, DICT_MAX, c->idx, &full)) {
        *oom = !full;
        return false;
    }
    c->bits = pq_bit_width((uint32_t)(c->dict.n - 1));
    if (c->bits == 0) c->bits = 1;
    if (c->phys == PQ_BYTE_ARRAY) {
        const PqVal *v = c->vals;
        plain_cost = 0;
        for (int64_t i = 0; i < c->nv; i++) plain_cost += 4 + (uint64_t)v[i].n;
    } else {
        plain_cost = (uint64_t)c->nv * (c->phys == PQ_INT32 ? 4 : 8);
    }
    dict_cost = c->dict.plain_bytes + ((uint64_t)c->nv * (uint64_t)c->bits + 7) / 8;
    return dict_cost < plain_cost;
}

TlStatus pq_chunk_encode(const PqChunkIn *in, PqChunkOut *out)
{
    Chunk c;
    TlStatus st = TL_OK;
    bool oom;
    memset(out, 0, sizeof *out);
    memset(&c, 0, sizeof c);
    c.in = in;
    c.out = out;
    c.phys = out->phys = pq_write_phys(in->type);
    c.n = out->num_values = in->rows;
    out->dict_offset = out->data_offset = -1;
    if (!gather(&c)) {
        st = TL_ERR_OOM;
        goto done;
    }
    out->dict = try_dict(&c, &oom);
    if (oom || !stats(&c)) {
        st = TL_ERR_OOM;
        goto done;
    }
    out->plain = !out->dict;
    if (out->dict) {
        const void *dv = c.phys == PQ_BYTE_ARRAY ? (const void *)c.dict.strs
                                                 : (const void *)c.dict.fixed;
        c.raw.len = 0;
        if (c.phys == PQ_INT32) { /* the dictionary keeps INT32 values widened */
            for (int64_t i = 0; i < c.dict.n; i++) {
                int32_t v = (int32_t)c.dict.fixed[i];
                pq_bytes_put(&c.raw, &v, 4);
            }
        } else {
            plain(&c.raw, c.phys, dv, 0, c.dict.n);
        }
        if ((st = put_page(&c, PQ_PAGE_DICTIONARY, c.dict.n, PQ_ENC_PLAIN)) != TL_OK) goto done;
    }
    st = data_pages(&c);
done:
    tl_free(c.def);
    tl_free(c.vals);
    tl_free(c.idx);
    pq_dict_free(&c.dict);
    pq_bytes_free(&c.raw);
    pq_bytes_free(&c.comp);
    pq_tw_free(&c.head);
    if (st != TL_OK) pq_chunk_out_free(out);
    return st;
}

void pq_chunk_out_free(PqChunkOut *c)
{
    pq_bytes_free(&c->bytes);
    tl_free(c->min);
    tl_free(c->max);
    c->min = c->max = NULL;
    c->has_minmax = false;
}
