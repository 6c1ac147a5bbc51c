/*
 * column.c -- one column chunk, read a batch at a time.
 *
 * A chunk is a dictionary page (optional, first) and data pages, each
 * behind a Thrift page header.  pq_col_read(n) fills one array of n rows:
 *
 *   for each stretch of rows inside one page:
 *     definition levels -> which rows hold a value (a level below the
 *                          maximum is a null: flat columns have no
 *                          repetition, so a row is one value)
 *     the m values      -> decoded (values.c) and converted (convert.c)
 *                          into the first m slots of the stretch, or, for
 *                          a dictionary-encoded page, copied by index from
 *                          the dictionary converted once per chunk
 *     spread            -> moved back to front to their rows, nulls zeroed
 *
 * Pages are decompressed one at a time into a buffer of their own; an
 * uncompressed page is a slice of the mapped file.  Long strings stay
 * views into those buffers (the batch's array holds them), so a string is
 * copied only when a value had to be made (convert.c).  The dictionary's
 * blocks come first among a batch's data blocks, so a view taken from the
 * dictionary needs no renumbering.
 *
 * Checked here: page sizes inside the chunk, the chunk ending before its
 * rows do, a page holding more values than the row group has rows left, a
 * dictionary page that is not first or comes twice, a dictionary-encoded
 * page without a dictionary, an index past the dictionary, definition
 * levels above the maximum, a v2 page whose null count disagrees with its
 * levels, page checksums (CRC-32, when the writer stored one).  Every
 * error names the file, the column and the row group.
 */
#include "parquet.h"

#include <stdarg.h>
#include <stdio.h>
#include <zlib.h>

struct PqCol {
    PqChunkRef ref;
    const uint8_t *p, *end;   /* the chunk's bytes not read yet */
    int64_t rows_left;        /* rows of the row group not read yet */
    int64_t bytes;            /* compressed bytes read */
    bool started, data_seen;
    int def_width;
    /* the dictionary, converted to the column's type */
    TlBuf *dict;              /* dict_n values of the output width */
    int64_t dict_n;
    TlBuf *dict_data[2];      /* its string blocks */
    uint32_t n_dict_data;
    bool has_dict;
    /* the current data page */
    TlBuf *page;
    int64_t page_left;        /* rows left in it */
    bool page_dict, v2;
    int64_t v2_nulls, nulls_seen;
    PqRle def, rep;
    int rep_width;
    const uint8_t *bp, *bp_end; /* BIT_PACKED levels (deprecated) */
    uint64_t bp_bit;
    bool def_bitpacked;
    PqValues vals;
    /* the batch being filled */
    PqOut out;
    /* scratch for one batch */
    uint32_t *levels, *reps, *idx;
    uint8_t *phys;
    int64_t scratch_n;
    char what[sizeof(TlQuoted) + 64];
};

static TlStatus fail(PqCol *c, TlError *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static TlStatus fail(PqCol *c, TlError *err, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tl_error(err, TL_ERR_DATA, "%s: column %s, row group %d: %s", c->ref.name,
                    tl_quote_name(c->ref.col_name).s, c->ref.rg, msg);
}

/* A decoder's failure: why NULL means out of memory. */
static TlStatus fail_why(PqCol *c, TlError *err, const char *why)
{
    return why ? fail(c, err, "%s", why) : tl_error_oom(err);
}

TlStatus pq_col_open(const PqChunkRef *ref, PqCol **out, TlError *err)
{
    PqCol *c;
    const PqColumnMeta *m = &ref->chunk->meta;
    int64_t start = m->data_page_offset, len = m->total_compressed_size;
    *out = NULL;
    c = tl_calloc(1, sizeof *c);
    if (!c) return tl_error_oom(err);
    c->ref = *ref;
    c->rows_left = ref->rows;
    c->out.side_idx = c->out.page_idx = -1;
    c->def_width = pq_bit_width((uint32_t)ref->leaf->max_def);
    c->rep_width = pq_bit_width((uint32_t)ref->leaf->max_rep);
    snprintf(c->what, sizeof c->what, "page header (column %s, row group %d)",
             tl_quote_name(ref->col_name).s, ref->rg);
    /* a dictionary page comes before the data pages; writers that had none
     * sometimes wrote 0 for its offset */
    if (m->dictionary_page_offset > 0 && m->dictionary_page_offset < start)
        start = m->dictionary_page_offset;
    if (m->type != ref->leaf->phys) {
        TlStatus st = fail(c, err, "the column chunk's type %s differs from the schema's %s",
                           pq_phys_name(m->type), pq_phys_name(ref->leaf->phys));
        tl_free(c);
        return st;
    }
    if (start < 4 || len < 0 || (uint64_t)start > ref->input->size ||
        (uint64_t)len > ref->input->size - (uint64_t)start) {
        TlStatus st = fail(c, err, "the column chunk (%lld bytes at byte %lld) lies outside "
                           "the file's %zu bytes", (long long)len, (long long)start,
                           ref->input->size);
        tl_free(c);
        return st;
    }
    /* old parquet-mr left the dictionary page header out of the chunk's
     * size: let its pages run that much further, still inside the data */
    if (ref->pad && (uint64_t)start + (uint64_t)len < ref->data_end)
        len += (int64_t)(ref->data_end - (uint64_t)(start + len)) < ref->pad
                   ? (int64_t)(ref->data_end - (uint64_t)(start + len))
                   : ref->pad;
    c->p = ref->input->data + start;
    c->end = c->p + len;
    *out = c;
    return TL_OK;
}

void pq_col_free(PqCol *c)
{
    if (!c) return;
    tl_buf_release(c->dict);
    for (uint32_t i = 0; i < c->n_dict_data; i++) tl_buf_release(c->dict_data[i]);
    tl_buf_release(c->page);
    pq_values_free(&c->vals);
    pq_out_free(&c->out);
    tl_free(c->levels);
    tl_free(c->reps);
    tl_free(c->idx);
    tl_free(c->phys);
    tl_free(c);
}

int64_t pq_col_bytes(PqCol *c)
{
    int64_t b = c->bytes;
    c->bytes = 0;
    return b;
}

/* Scratch for n values (levels, indices, physical values). */
static TlStatus scratch(PqCol *c, int64_t n, TlError *err)
{
    if (n < 1) n = 1;
    if (n <= c->scratch_n) return TL_OK;
    tl_free(c->levels);
    tl_free(c->reps);
    tl_free(c->idx);
    tl_free(c->phys);
    c->levels = tl_malloc((size_t)n * sizeof *c->levels);
    c->reps = tl_malloc((size_t)n * sizeof *c->reps);
    c->idx = tl_malloc((size_t)n * sizeof *c->idx);
    c->phys = tl_malloc((size_t)n * 16);
    c->scratch_n = c->levels && c->reps && c->idx && c->phys ? n : 0;
    return c->scratch_n ? TL_OK : tl_error_oom(err);
}

static void phys_at(PqCol *c, PqPhys *ph)
{
    memset(ph, 0, sizeof *ph);
    ph->i32 = (int32_t *)(void *)c->phys;
    ph->i64 = (int64_t *)(void *)c->phys;
    ph->f32 = (float *)(void *)c->phys;
    ph->f64 = (double *)(void *)c->phys;
    ph->b8 = c->phys;
    ph->bytes = (PqStr *)(void *)c->phys;
}

/* The page's bytes: decompressed into a buffer of its own, or, stored
 * uncompressed, a slice of the file.  head: bytes at the start that are
 * never compressed (a v2 page's levels). */
static TlStatus page_bytes(PqCol *c, const PqPageHeader *h, const uint8_t *data, size_t head,
                           bool compressed, TlBuf **out, TlError *err)
{
    char why[256], cb[32];
    TlStatus st;
    TlBuf *b;
    size_t n = (size_t)h->compressed_size, un = (size_t)h->uncompressed_size;
    *out = NULL;
    if (!compressed || c->ref.chunk->meta.codec == PQ_CODEC_UNCOMPRESSED) {
        *out = tl_buf_slice((TlBuf *)(uintptr_t)c->ref.input,
                            (size_t)(data - c->ref.input->data), n);
        return *out ? TL_OK : tl_error_oom(err);
    }
    if (head > un || head > n)
        return fail(c, err, "a page whose levels (%zu bytes) are longer than the page", head);
    b = tl_buf_new(un ? un : 1, false);
    if (!b) return tl_error_oom(err);
    memcpy(b->data, data, head);
    /* a v2 page of nulls only may hold levels and no compressed bytes at all */
    st = n == head && un == head ? TL_OK
                                 : pq_decompress(c->ref.codecs, c->ref.chunk->meta.codec,
                                                 data + head, n - head, b->data + head,
                                                 un - head, why, sizeof why);
    if (st != TL_OK) {
        tl_buf_release(b);
        if (st == TL_ERR_OOM) return tl_error_oom(err);
        return fail(c, err, "cannot decompress a %s page: %s",
                    pq_codec_name(c->ref.chunk->meta.codec, cb, sizeof cb), why);
    }
    b->size = un;
    *out = b;
    return TL_OK;
}

static TlStatus read_dictionary(PqCol *c, const PqPageHeader *h, const uint8_t *data,
                                TlError *err)
{
    const PqLeaf *l = c->ref.leaf;
    size_t w = pq_out_width(l->type);
    TlBuf *page = NULL;
    PqValues v;
    PqPhys ph;
    PqOut o;
    const char *why = NULL;
    char eb[32];
    TlStatus st;
    if (c->has_dict) return fail(c, err, "a second dictionary page");
    if (c->data_seen) return fail(c, err, "a dictionary page after data pages");
    if (!pq_encoding_ok(h->encoding, l->phys, true))
        return fail(c, err, "a dictionary page in the %s encoding",
                    pq_encoding_name(h->encoding, eb, sizeof eb));
    TL_TRY(page_bytes(c, h, data, 0, true, &page, err));
    if ((uint64_t)h->num_values > (uint64_t)page->size * 8 + 8) {
        size_t bytes = page->size;
        tl_buf_release(page);
        return fail(c, err, "a dictionary page of %d values in %zu bytes", h->num_values,
                    bytes);
    }
    memset(&o, 0, sizeof o);
    o.side_idx = o.page_idx = -1;
    o.page = page;
    st = scratch(c, h->num_values, err);
    c->dict = st == TL_OK ? tl_buf_new((size_t)h->num_values * (w ? w : 1) + 1, false) : NULL;
    if (st == TL_OK && !c->dict) st = tl_error_oom(err);
    if (st == TL_OK) {
        phys_at(c, &ph);
        o.dst = c->dict->data;
        if (!pq_values_init(&v, PQ_ENC_PLAIN, l->phys, l->type_length, page->data, page->size,
                            h->num_values, &why) ||
            !pq_values_next(&v, h->num_values, &ph, c->idx, &why))
            st = fail_why(c, err, why);
        pq_values_free(&v);
    }
    if (st == TL_OK) {
        st = pq_convert(l, &ph, &o);
        if (st == TL_ERR_DATA) st = fail(c, err, "%s", o.msg);
        else if (st == TL_ERR_OOM) st = tl_error_oom(err);
    }
    if (st == TL_OK && pq_out_finish(&o) != TL_OK) st = tl_error_oom(err);
    if (st == TL_OK) {
        c->dict_n = h->num_values;
        c->has_dict = true;
        for (uint32_t i = 0; i < o.n_data && i < 2; i++) {
            c->dict_data[i] = o.data[i];
            o.data[i] = NULL;
        }
        c->n_dict_data = o.n_data < 2 ? o.n_data : 2;
    }
    pq_out_free(&o);
    tl_buf_release(page);
    return st;
}

/* Set up the data page h whose bytes (compressed) start at data. */
static TlStatus start_page(PqCol *c, const PqPageHeader *h, const uint8_t *data, TlError *err)
{
    const PqLeaf *l = c->ref.leaf;
    const char *why = NULL;
    char eb[32];
    size_t head = 0, lv = 0;
    const uint8_t *p, *end;
    c->data_seen = true;
    if (h->num_values > c->rows_left)
        return fail(c, err, c->ref.nested ? "a page of %d values where the column chunk has "
                                            "%lld values left"
                                          : "a page of %d values where the row group has %lld "
                                            "rows left",
                    h->num_values, (long long)c->rows_left);
    if (!pq_encoding_ok(h->encoding, l->phys, false))
        return fail(c, err, "the %s encoding is not supported for %s values",
                    pq_encoding_name(h->encoding, eb, sizeof eb), pq_phys_name(l->phys));
    c->page_dict = h->encoding == PQ_ENC_PLAIN_DICTIONARY || h->encoding == PQ_ENC_RLE_DICTIONARY;
    if (c->page_dict && !c->has_dict)
        return fail(c, err, "a dictionary-encoded page without a dictionary page");
    c->v2 = h->type == PQ_PAGE_DATA_V2;
    if (c->v2) {
        head = (size_t)h->rep_bytes + (size_t)h->def_bytes;
        if (head > (size_t)h->compressed_size)
            return fail(c, err, "a page whose levels (%zu bytes) are longer than the page",
                        head);
    }
    tl_buf_release(c->page);
    c->page = NULL;
    TL_TRY(page_bytes(c, h, data, head, !c->v2 || h->is_compressed, &c->page, err));
    p = c->page->data;
    end = p + c->page->size;
    c->def_bitpacked = false;
    if (c->v2) {
        if (l->max_rep > 0) pq_rle_init(&c->rep, p, (size_t)h->rep_bytes, c->rep_width);
        p += h->rep_bytes;
        if (l->max_def > 0) pq_rle_init(&c->def, p, (size_t)h->def_bytes, c->def_width);
        p += h->def_bytes;
        c->v2_nulls = h->num_nulls;
        c->nulls_seen = 0;
    } else {
        if (l->max_rep > 0) {
            if (h->rep_encoding != PQ_ENC_RLE)
                return fail(c, err, "repetition levels in the %s encoding",
                            pq_encoding_name(h->rep_encoding, eb, sizeof eb));
            if (end - p < 4) return fail(c, err, "repetition levels past the page");
            lv = (size_t)p[0] | (size_t)p[1] << 8 | (size_t)p[2] << 16 | (size_t)p[3] << 24;
            p += 4;
            if (lv > (size_t)(end - p)) return fail(c, err, "repetition levels past the page");
            pq_rle_init(&c->rep, p, lv, c->rep_width);
            p += lv;
        }
        if (l->max_def == 0) {
            /* no definition levels */
        } else if (h->def_encoding == PQ_ENC_BIT_PACKED) {
            lv = ((size_t)h->num_values * (size_t)c->def_width + 7) / 8;
            if (lv > (size_t)(end - p)) return fail(c, err, "definition levels past the page");
            c->def_bitpacked = true;
            c->bp = p;
            c->bp_end = p + lv;
            c->bp_bit = 0;
            p += lv;
        } else if (h->def_encoding == PQ_ENC_RLE) {
            if (end - p < 4) return fail(c, err, "definition levels past the page");
            lv = (size_t)p[0] | (size_t)p[1] << 8 | (size_t)p[2] << 16 | (size_t)p[3] << 24;
            p += 4;
            if (lv > (size_t)(end - p)) return fail(c, err, "definition levels past the page");
            pq_rle_init(&c->def, p, lv, c->def_width);
            p += lv;
        } else {
            return fail(c, err, "definition levels in the %s encoding",
                        pq_encoding_name(h->def_encoding, eb, sizeof eb));
        }
    }
    pq_values_free(&c->vals);
    if (!pq_values_init(&c->vals, h->encoding, l->phys, l->type_length, p, (size_t)(end - p),
                        h->num_values, &why))
        return fail_why(c, err, why);
    c->page_left = h->num_values;
    c->out.page = c->page;
    c->out.page_idx = -1;
    return TL_OK;
}

/* Move to the next data page (reading a dictionary page on the way). */
static TlStatus next_page(PqCol *c, TlError *err)
{
    for (;;) {
        PqThrift t;
        PqPageHeader h;
        const uint8_t *data;
        if (c->p >= c->end)
            return fail(c, err, c->ref.nested ? "the column chunk ends %lld values before "
                                                "its metadata says"
                                              : "the column chunk ends %lld rows before the "
                                                "row group does",
                        (long long)c->rows_left);
        pq_th_init(&t, c->p, (size_t)(c->end - c->p), (uint64_t)(c->p - c->ref.input->data),
                   c->ref.name, c->what, err);
        TL_TRY(pq_page_header_decode(&t, &h));
        data = c->p + pq_th_used(&t);
        if ((size_t)h.compressed_size > (size_t)(c->end - data))
            return fail(c, err, "a page of %d bytes runs past the end of its column chunk",
                        h.compressed_size);
        c->p = data + h.compressed_size;
        c->bytes += (int64_t)pq_th_used(&t) + h.compressed_size;
        if (h.has_crc && (uint32_t)crc32(0L, data, (uInt)h.compressed_size) != h.crc)
            return fail(c, err, "the page at byte %zu fails its checksum",
                        (size_t)(data - c->ref.input->data));
        if (h.type == PQ_PAGE_DICTIONARY) {
            TL_TRY(read_dictionary(c, &h, data, err));
        } else if (h.type == PQ_PAGE_DATA || h.type == PQ_PAGE_DATA_V2) {
            if (h.num_values == 0) continue;
            return start_page(c, &h, data, err);
        }
        /* index pages and page types newer than this reader: skipped */
    }
}

/* The next n definition levels of the page into c->levels. */
static TlStatus levels(PqCol *c, int64_t n, TlError *err)
{
    const char *why = NULL;
    if (!c->def_bitpacked) {
        if (!pq_rle_next(&c->def, c->levels, n, &why)) return fail_why(c, err, why);
        return TL_OK;
    }
    /* BIT_PACKED: most significant bit first */
    for (int64_t i = 0; i < n; i++) {
        uint32_t v = 0;
        for (int b = 0; b < c->def_width; b++, c->bp_bit++) {
            if ((c->bp_bit >> 3) >= (uint64_t)(c->bp_end - c->bp))
                return fail(c, err, "definition levels end before the page's values");
            v = v << 1 | (uint32_t)(c->bp[c->bp_bit >> 3] >> (7 - (c->bp_bit & 7)) & 1);
        }
        c->levels[i] = v;
    }
    return TL_OK;
}

/* Move the m values at dst[0, m) to the rows of dst[0, k) whose level is
 * lv (back to front: a value's row is never before its slot); zero the
 * others. */
static void spread(uint8_t *dst, size_t w, const uint32_t *lev, uint32_t lv, int64_t k, int64_t m)
{
    int64_t j = m;
    for (int64_t i = k - 1; i >= 0 && j < i + 1; i--) {
        if (lev[i] == lv) {
            j--;
            if (j != i) memcpy(dst + (size_t)i * w, dst + (size_t)j * w, w);
        } else {
            memset(dst + (size_t)i * w, 0, w);
        }
    }
}

/* The m values of the stretch starting at dst. */
static TlStatus values(PqCol *c, uint8_t *dst, int64_t m, TlError *err)
{
    const PqLeaf *l = c->ref.leaf;
    const char *why = NULL;
    PqPhys ph;
    TlStatus st;
    phys_at(c, &ph);
    if (!pq_values_next(&c->vals, m, &ph, c->idx, &why)) return fail_why(c, err, why);
    if (c->page_dict) {
        size_t w = pq_out_width(l->type);
        const uint8_t *dict = c->dict->data;
        const uint32_t *idx = c->idx;
        uint32_t top = 0;
        for (int64_t i = 0; i < m; i++) top |= idx[i] >= (uint64_t)c->dict_n;
        if (top)
            for (int64_t i = 0; i < m; i++)
                if (idx[i] >= (uint64_t)c->dict_n)
                    return fail(c, err, "dictionary index %u out of range (the dictionary "
                                "holds %lld values)", idx[i], (long long)c->dict_n);
        /* gathers of the widths there are, each a fixed-size copy */
        switch (w) {
        case 16:
            for (int64_t i = 0; i < m; i++) memcpy(dst + 16 * i, dict + 16 * (size_t)idx[i], 16);
            break;
        case 8:
            for (int64_t i = 0; i < m; i++) memcpy(dst + 8 * i, dict + 8 * (size_t)idx[i], 8);
            break;
        case 4:
            for (int64_t i = 0; i < m; i++) memcpy(dst + 4 * i, dict + 4 * (size_t)idx[i], 4);
            break;
        default:
            for (int64_t i = 0; i < m; i++) dst[i] = dict[idx[i]];
            break;
        }
        return TL_OK;
    }
    c->out.dst = dst;
    st = pq_convert(l, &ph, &c->out);
    if (st == TL_ERR_DATA) return fail(c, err, "%s", c->out.msg);
    if (st != TL_OK) return tl_error_oom(err);
    return TL_OK;
}

/* Pack staged booleans (a byte each) into a bitmap. */
static TlBuf *pack_bools(const uint8_t *b, int64_t n)
{
    TlBuf *bits = tl_buf_new(tl_bitmap_bytes(n) + 1, true);
    if (!bits) return NULL;
    for (int64_t i = 0; i < n; i++)
        if (b[i]) tl_bit_set(bits->data, i);
    return bits;
}

/* Start a batch's PqOut: the dictionary's blocks first (its views need no
 * renumbering), then the current page's when a view needs it. */
static TlStatus out_begin(PqCol *c, TlError *err)
{
    pq_out_free(&c->out);
    c->out.page = c->page;
    if (c->n_dict_data == 0) return TL_OK;
    if (!(c->out.data = tl_malloc(4 * sizeof *c->out.data))) return tl_error_oom(err);
    c->out.cap_data = 4;
    for (uint32_t i = 0; i < c->n_dict_data; i++)
        c->out.data[c->out.n_data++] = tl_buf_retain(c->dict_data[i]);
    return TL_OK;
}

/* The array of n values staged in vals (and valid), both taken over. */
static TlStatus make_array(PqCol *c, TlBuf *vals, TlBuf *valid, int64_t n, TlArray **out,
                           TlError *err)
{
    const PqLeaf *l = c->ref.leaf;
    TlStatus st = TL_OK;
    if (l->type == TL_TBOOL) {
        TlBuf *bits = pack_bools(vals->data, n);
        tl_buf_release(vals);
        vals = bits;
    }
    if (!vals || (l->type == TL_TSTRING && pq_out_finish(&c->out) != TL_OK)) {
        tl_buf_release(vals);
        tl_buf_release(valid);
        st = tl_error_oom(err);
    } else if (l->type == TL_TSTRING) {
        *out = tl_array_new(l->type, n, vals, valid, -1, c->out.data, c->out.n_data);
        c->out.data = NULL;
        c->out.n_data = c->out.cap_data = 0;
    } else {
        *out = tl_array_new(l->type, n, vals, valid, -1, NULL, 0);
    }
    if (st == TL_OK && !*out) st = tl_error_oom(err);
    c->out.page_idx = -1;
    pq_out_free(&c->out);
    c->out.page = c->page;
    return st;
}

/* Decode the definition levels of the next k entries of the page into
 * c->levels (and the repetition levels into c->reps for a nested leaf);
 * *m: the entries holding a value. */
static TlStatus entry_levels(PqCol *c, int64_t k, int64_t *m, TlError *err)
{
    const PqLeaf *l = c->ref.leaf;
    uint32_t lv = (uint32_t)l->max_def;
    const char *why = NULL;
    *m = k;
    if (l->max_rep > 0) {
        if (!pq_rle_next(&c->rep, c->reps, k, &why)) return fail_why(c, err, why);
        for (int64_t i = 0; i < k; i++)
            if (c->reps[i] > (uint32_t)l->max_rep)
                return fail(c, err, "a repetition level of %u above the column's maximum %d",
                            c->reps[i], l->max_rep);
    }
    if (l->max_def == 0) return TL_OK;
    TL_TRY(levels(c, k, err));
    *m = 0;
    for (int64_t i = 0; i < k; i++) {
        if (c->levels[i] == lv) (*m)++;
        else if (c->levels[i] > lv)
            return fail(c, err, "a definition level of %u above the column's maximum %u",
                        c->levels[i], lv);
    }
    return TL_OK;
}

/* After k entries of the page, m of them values: counters, and a v2
 * page's null count checked at its end. */
static TlStatus entries_done(PqCol *c, int64_t k, int64_t m, TlError *err)
{
    c->rows_left -= k;
    c->page_left -= k;
    c->nulls_seen += k - m;
    if (c->page_left == 0 && c->v2 && c->nulls_seen != c->v2_nulls)
        return fail(c, err, "a page whose header counts %lld nulls holds %lld",
                    (long long)c->v2_nulls, (long long)c->nulls_seen);
    return TL_OK;
}

TlStatus pq_col_read(PqCol *c, int64_t n, TlArray **out, TlError *err)
{
    const PqLeaf *l = c->ref.leaf;
    size_t w = pq_out_width(l->type);
    TlBuf *vals = NULL, *valid = NULL;
    int64_t row = 0;
    TlStatus st = TL_OK;
    *out = NULL;
    if (n > c->rows_left) return fail(c, err, "internal: %lld rows asked, %lld left",
                                      (long long)n, (long long)c->rows_left);
    if (l->conv == PQ_CV_NULL) {
        c->rows_left -= n;
        *out = tl_array_new_null(TL_TNULL, n);
        return *out ? TL_OK : tl_error_oom(err);
    }
    /* the first page first: the dictionary, whose blocks lead the batch's */
    if (!c->started && n > 0) {
        TL_TRY(next_page(c, err));
        c->started = true;
    }
    TL_TRY(scratch(c, n, err));
    TL_TRY(out_begin(c, err));
    vals = tl_buf_new((size_t)n * w + 1, false);
    if (l->max_def > 0) valid = tl_buf_new(tl_bitmap_bytes(n) + 1, true);
    if (!vals || (l->max_def > 0 && !valid)) {
        st = tl_error_oom(err);
        goto fail;
    }
    while (row < n) {
        int64_t k, m;
        uint8_t *dst = vals->data + (size_t)row * w;
        if (c->page_left == 0 && (st = next_page(c, err)) != TL_OK) goto fail;
        k = n - row < c->page_left ? n - row : c->page_left;
        if ((st = entry_levels(c, k, &m, err)) != TL_OK) goto fail;
        for (int64_t i = 0; m < k && i < k; i++)
            if (c->levels[i] == (uint32_t)l->max_def) tl_bit_set(valid->data, row + i);
        if (m == k && valid) tl_bitmap_fill(valid->data, row, k, true);
        if (m > 0 && (st = values(c, dst, m, err)) != TL_OK) goto fail;
        if (m < k) spread(dst, w, c->levels, (uint32_t)l->max_def, k, m);
        row += k;
        if ((st = entries_done(c, k, m, err)) != TL_OK) goto fail;
    }
    return make_array(c, vals, valid, n, out, err);
fail:
    tl_buf_release(vals);
    tl_buf_release(valid);
    c->out.page_idx = -1;
    pq_out_free(&c->out);
    c->out.page = c->page;
    return st;
}

TlStatus pq_col_entries(PqCol *c, int64_t max, PqEntries *e, TlError *err)
{
    const PqLeaf *l = c->ref.leaf;
    size_t w = pq_out_width(l->type);
    TlBuf *vals = NULL;
    int64_t k, m;
    TlStatus st;
    memset(e, 0, sizeof *e);
    if (c->rows_left == 0) return TL_OK;
    if (!c->started) {
        TL_TRY(next_page(c, err));
        c->started = true;
    } else if (c->page_left == 0) {
        TL_TRY(next_page(c, err));
    }
    k = max < c->page_left ? max : c->page_left;
    TL_TRY(scratch(c, k, err));
    TL_TRY(entry_levels(c, k, &m, err));
    if (l->max_rep == 0) memset(c->reps, 0, (size_t)k * sizeof *c->reps);
    if (l->max_def == 0)
        for (int64_t i = 0; i < k; i++) c->levels[i] = 0;
    TL_TRY(out_begin(c, err));
    vals = tl_buf_new((size_t)m * w + 1, false);
    if (!vals) st = tl_error_oom(err);
    else if (l->conv == PQ_CV_NULL) st = TL_OK;
    else st = m > 0 ? values(c, vals->data, m, err) : TL_OK;
    if (st == TL_OK) st = entries_done(c, k, m, err);
    if (st == TL_OK && l->conv == PQ_CV_NULL) {
        tl_buf_release(vals);
        e->vals = tl_array_new_null(TL_TNULL, m);
        st = e->vals ? TL_OK : tl_error_oom(err);
    } else if (st == TL_OK) {
        st = make_array(c, vals, NULL, m, &e->vals, err);
    } else {
        tl_buf_release(vals);
        pq_out_free(&c->out);
        c->out.page = c->page;
    }
    if (st != TL_OK) return st;
    e->n = k;
    e->rep = c->reps;
    e->def = c->levels;
    return TL_OK;
}
