/*
 * rle.c -- the two integer codings of Parquet's pages (Encodings.md):
 *
 *   RLE/bit-packed hybrid   runs, each a ULEB128 header: even, a run of one
 *                           value repeated (header >> 1 times, the value in
 *                           whole bytes); odd, (header >> 1) groups of 8
 *                           values bit-packed LSB first.  Definition
 *                           levels, dictionary indices, RLE booleans.
 *   DELTA_BINARY_PACKED     a header (block size, miniblocks per block,
 *                           value count, first value), then blocks: a
 *                           minimum delta, one bit width per miniblock,
 *                           the miniblocks' deltas bit-packed.
 *
 * Both decode on demand, n values at a time, so a page is never expanded
 * whole, and both check every byte they read against the end: a run or
 * miniblock that claims more bytes than are left yields only the values
 * whose bits are there (writers may stop the last run short), and asking
 * for a value past them is an error.  A repeated value wider than the bit
 * width, or a delta bit width over 64, is corrupt (an INT32 column's may
 * exceed 32: DuckDB writes 33 bits for deltas that span the int32 range,
 * and the wrapped sums' low 32 bits are still the values).  Counts are kept
 * in 64 bits, so no header can make one wrap.
 *
 * DELTA_BINARY_PACKED arithmetic wraps (two's complement), as the format
 * says; INT32 values are the low 32 bits of the 64-bit sums.
 */
#include "parquet.h"

int pq_bit_width(uint32_t max)
{
    return max ? 32 - __builtin_clz(max) : 0;
}

/* The w-bit value at bit offset bit of base (w <= 64); bytes at or past
 * end read as zero (callers check that the value's bits lie before end). */
static inline uint64_t unpack_at(const uint8_t *base, const uint8_t *end, uint64_t bit, int w)
{
    const uint8_t *q = base + (bit >> 3);
    int sh = (int)(bit & 7);
    uint64_t v;
    if (w == 0) return 0;
    if (end - q >= 9) {
        memcpy(&v, q, 8);
        v >>= sh;
        if (sh + w > 64) v |= (uint64_t)q[8] << (64 - sh);
    } else {
        uint8_t b[9] = {0};
        memcpy(b, q, (size_t)(end - q));
        memcpy(&v, b, 8);
        v >>= sh;
        if (sh + w > 64) v |= (uint64_t)b[8] << (64 - sh);
    }
    return w == 64 ? v : v & (((uint64_t)1 << w) - 1);
}

/* A ULEB128 varint of at most max_bytes bytes. */
static bool uleb(const uint8_t **p, const uint8_t *end, int max_bytes, uint64_t *v)
{
    uint64_t x = 0;
    for (int i = 0; i < max_bytes; i++) {
        uint8_t b;
        if (*p >= end) return false;
        b = *(*p)++;
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *v = x;
            return true;
        }
    }
    return false;
}

/* ------------------------------------------------------------------ RLE */

void pq_rle_init(PqRle *r, const uint8_t *p, size_t n, int width)
{
    memset(r, 0, sizeof *r);
    r->p = p;
    r->end = p + n;
    r->width = width;
}

static bool rle_header(PqRle *r, const char **why)
{
    uint64_t h;
    if (!uleb(&r->p, r->end, 5, &h) || h > UINT32_MAX) {
        *why = "a corrupt run header in RLE/bit-packed data";
        return false;
    }
    if (h & 1) {
        uint64_t values = (h >> 1) * 8, bytes = (h >> 1) * (uint64_t)r->width;
        uint64_t have = (uint64_t)(r->end - r->p);
        r->lit = r->p;
        r->lit_bit = 0;
        if (bytes > have) {
            /* a last run stopped short: the values whose bits are there */
            r->lit_left = r->width ? have * 8 / (uint64_t)r->width : values;
            if (r->lit_left > values) r->lit_left = values;
            r->p = r->end;
        } else {
            r->lit_left = values;
            r->p += bytes;
        }
        r->lit_end = r->p;
    } else {
        int nb = (r->width + 7) / 8;
        uint32_t v = 0;
        if (r->end - r->p < nb) {
            *why = "a truncated run in RLE/bit-packed data";
            return false;
        }
        for (int i = 0; i < nb; i++) v |= (uint32_t)r->p[i] << (8 * i);
        r->p += nb;
        if (r->width < 32 && (v >> r->width) != 0) {
            *why = "a run value wider than the bit width in RLE/bit-packed data";
            return false;
        }
        r->rep_left = (uint32_t)(h >> 1);
        r->rep_value = v;
    }
    return true;
}

bool pq_rle_next(PqRle *r, uint32_t *out, int64_t n, const char **why)
{
    while (n > 0) {
        if (r->rep_left) {
            int64_t k = n < (int64_t)r->rep_left ? n : (int64_t)r->rep_left;
            uint32_t v = r->rep_value;
            for (int64_t i = 0; i < k; i++) out[i] = v;
            out += k;
            n -= k;
            r->rep_left -= (uint32_t)k;
        } else if (r->lit_left) {
            int64_t k = n < (int64_t)r->lit_left ? n : (int64_t)r->lit_left, i = 0;
            int w = r->width;
            uint64_t bit = r->lit_bit;
            if (w > 0 && w <= 32 && r->lit_end - r->lit >= 8) {
                /* the values whose 8 bytes lie inside the run: one load each
                 * (w <= 32 bits at a shift below 8 fit a 64-bit word) */
                uint64_t safe = ((uint64_t)(r->lit_end - r->lit) - 8) * 8;
                uint64_t mask = ((uint64_t)1 << w) - 1;
                for (; i < k && bit <= safe; i++, bit += (uint64_t)w) {
                    uint64_t x;
                    memcpy(&x, r->lit + (bit >> 3), 8);
                    out[i] = (uint32_t)((x >> (bit & 7)) & mask);
                }
            }
            for (; i < k; i++, bit += (uint64_t)w)
                out[i] = (uint32_t)unpack_at(r->lit, r->lit_end, bit, w);
            r->lit_bit = bit;
            out += k;
            n -= k;
            r->lit_left -= (uint64_t)k;
        } else {
            if (r->p >= r->end) {
                *why = "RLE/bit-packed data ends before its values do";
                return false;
            }
            if (!rle_header(r, why)) return false;
        }
    }
    return true;
}

/* ---------------------------------------------------------------- delta */

static bool zigzag(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t x;
    if (!uleb(p, end, 10, &x)) return false;
    *v = (x >> 1) ^ (0 - (x & 1));
    return true;
}

bool pq_delta_init(PqDelta *d, const uint8_t *p, size_t n, const char **why)
{
    uint64_t first;
    memset(d, 0, sizeof *d);
    d->p = p;
    d->end = p + n;
    if (!uleb(&d->p, d->end, 10, &d->block_size) || !uleb(&d->p, d->end, 10, &d->n_mini) ||
        !uleb(&d->p, d->end, 10, &d->total) || !zigzag(&d->p, d->end, &first)) {
        *why = "a truncated DELTA_BINARY_PACKED header";
        return false;
    }
    if (d->block_size == 0 || d->block_size % 128 || d->block_size > ((uint64_t)1 << 31) ||
        d->n_mini == 0 || d->block_size % d->n_mini || (d->block_size / d->n_mini) % 32) {
        *why = "a DELTA_BINARY_PACKED header with an impossible block size";
        return false;
    }
    d->mini_size = d->block_size / d->n_mini;
    d->last = first;
    return true;
}

/* Start miniblock d->mini of the current block (its width checked). */
static bool mini_start(PqDelta *d, const char **why)
{
    uint64_t bytes, have = (uint64_t)(d->end - d->p);
    d->mini_width = d->widths[d->mini];
    if (d->mini_width > 64) {
        *why = "a DELTA_BINARY_PACKED bit width over 64";
        return false;
    }
    bytes = d->mini_size * (uint64_t)d->mini_width / 8;
    d->mini_data = d->p;
    d->p += bytes > have ? have : bytes;
    d->mini_end = d->p;
    d->mini_pos = 0;
    return true;
}

bool pq_delta_next(PqDelta *d, int64_t *out, int64_t n, const char **why)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t bit;
        if (d->done >= d->total) {
            *why = "DELTA_BINARY_PACKED data holds fewer values than the page";
            return false;
        }
        if (d->done++ == 0) {
            out[i] = (int64_t)d->last;
            continue;
        }
        if (!d->in_block || (d->mini_pos == d->mini_size && d->mini + 1 == d->n_mini)) {
            if (!zigzag(&d->p, d->end, &d->min_delta) ||
                (uint64_t)(d->end - d->p) < d->n_mini) {
                *why = "a truncated DELTA_BINARY_PACKED block header";
                return false;
            }
            d->widths = d->p;
            d->p += d->n_mini;
            d->mini = 0;
            d->in_block = true;
            if (!mini_start(d, why)) return false;
        } else if (d->mini_pos == d->mini_size) {
            d->mini++;
            if (!mini_start(d, why)) return false;
        }
        bit = d->mini_pos * (uint64_t)d->mini_width;
        if (bit + (uint64_t)d->mini_width > (uint64_t)(d->mini_end - d->mini_data) * 8) {
            *why = "DELTA_BINARY_PACKED data ends before its values do";
            return false;
        }
        d->last += d->min_delta + unpack_at(d->mini_data, d->mini_end, bit, d->mini_width);
        d->mini_pos++;
        out[i] = (int64_t)d->last;
    }
    return true;
}

const uint8_t *pq_delta_end(const PqDelta *d)
{
    return d->p;
}
