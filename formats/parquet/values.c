/*
 * values.c -- a data page's values, encoding by encoding, in their physical
 * form (PqPhys), n at a time as column.c asks for them.
 *
 *   PLAIN                    fixed widths back to back (little-endian),
 *                            booleans bit-packed LSB first, BYTE_ARRAY a
 *                            4-byte length before each value
 *   PLAIN_DICTIONARY,        a byte of bit width, then the dictionary
 *   RLE_DICTIONARY           indices as RLE/bit-packed runs (handed to the
 *                            caller, which owns the dictionary)
 *   RLE                      booleans: a 4-byte length, then runs of width 1
 *   DELTA_BINARY_PACKED      INT32, INT64 (rle.c)
 *   DELTA_LENGTH_BYTE_ARRAY  every length delta-packed, then the bytes
 *   DELTA_BYTE_ARRAY         prefix lengths shared with the previous value,
 *                            then the suffixes as DELTA_LENGTH_BYTE_ARRAY
 *   BYTE_STREAM_SPLIT        byte k of every value in stream k
 *
 * Byte arrays are (pointer, length) pairs into the page (PqStr), so a
 * string is not copied until convert.c makes its view; the two encodings
 * that build values (DELTA_BYTE_ARRAY, and BYTE_STREAM_SPLIT of fixed
 * arrays) build them in the decoder's own buffer, which lives until the
 * next call.  Every length is checked against the bytes left before it is
 * used.
 */
#include "parquet.h"

#include <stdio.h>

const char *pq_encoding_name(int encoding, char *buf, size_t cap)
{
    static const char *const n[] = {"PLAIN", "GROUP_VAR_INT", "PLAIN_DICTIONARY", "RLE",
                                    "BIT_PACKED", "DELTA_BINARY_PACKED",
                                    "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY",
                                    "RLE_DICTIONARY", "BYTE_STREAM_SPLIT", "ALP"};
    if (encoding >= 0 && encoding <= 10) return n[encoding];
    snprintf(buf, cap, "encoding %d", encoding);
    return buf;
}

bool pq_encoding_ok(int e, int phys, bool dictionary_page)
{
    if (dictionary_page) return e == PQ_ENC_PLAIN || e == PQ_ENC_PLAIN_DICTIONARY;
    switch (e) {
    case PQ_ENC_PLAIN:
    case PQ_ENC_PLAIN_DICTIONARY:
    case PQ_ENC_RLE_DICTIONARY:
        return true;
    case PQ_ENC_RLE:
        return phys == PQ_BOOLEAN;
    case PQ_ENC_DELTA_BINARY_PACKED:
        return phys == PQ_INT32 || phys == PQ_INT64;
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
        return phys == PQ_BYTE_ARRAY;
    case PQ_ENC_DELTA_BYTE_ARRAY:
        return phys == PQ_BYTE_ARRAY || phys == PQ_FIXED_LEN_BYTE_ARRAY;
    case PQ_ENC_BYTE_STREAM_SPLIT:
        return phys == PQ_INT32 || phys == PQ_INT64 || phys == PQ_FLOAT ||
               phys == PQ_DOUBLE || phys == PQ_FIXED_LEN_BYTE_ARRAY;
    default:
        return false;
    }
}

/* Bytes of one PLAIN value of a fixed-width physical type (0: variable). */
static size_t fixed_width(int phys, int32_t type_length)
{
    switch (phys) {
    case PQ_INT32: case PQ_FLOAT: return 4;
    case PQ_INT64: case PQ_DOUBLE: return 8;
    case PQ_INT96: return 12;
    case PQ_FIXED_LEN_BYTE_ARRAY: return (size_t)type_length;
    default: return 0;
    }
}

/* All n lengths of a delta-packed length stream at *p into *out (owned);
 * *p moves past the stream. */
static bool lengths(const uint8_t **p, const uint8_t *end, int64_t max_n, int32_t **out,
                    int64_t *n, const char **why)
{
    PqDelta d;
    int64_t *tmp;
    if (!pq_delta_init(&d, *p, (size_t)(end - *p), why)) return false;
    if (d.total > (uint64_t)max_n) {
        *why = "a length stream holds more values than the page";
        return false;
    }
    *n = (int64_t)d.total;
    /* int64 sums narrowed in place to int32 lengths */
    tmp = tl_malloc((size_t)(*n ? *n : 1) * sizeof *tmp);
    if (!tmp) {
        *why = NULL; /* out of memory */
        return false;
    }
    if (!pq_delta_next(&d, tmp, *n, why)) {
        tl_free(tmp);
        return false;
    }
    for (int64_t i = 0; i < *n; i++) {
        if (tmp[i] < 0 || tmp[i] > INT32_MAX) {
            tl_free(tmp);
            *why = "a negative byte array length";
            return false;
        }
        ((int32_t *)tmp)[i] = (int32_t)tmp[i];
    }
    *out = (int32_t *)tmp;
    *p = pq_delta_end(&d);
    return true;
}

bool pq_values_init(PqValues *v, int encoding, int phys, int32_t type_length,
                    const uint8_t *p, size_t n, int64_t n_values, const char **why)
{
    const uint8_t *end = p + n;
    memset(v, 0, sizeof *v);
    v->encoding = encoding;
    v->phys = phys;
    v->type_length = type_length;
    v->p = p;
    v->end = end;
    switch (encoding) {
    case PQ_ENC_PLAIN:
        return true;
    case PQ_ENC_PLAIN_DICTIONARY:
    case PQ_ENC_RLE_DICTIONARY:
        if (n < 1) {
            /* a page of nulls only may hold no index at all */
            pq_rle_init(&v->rle, p, 0, 0);
            return true;
        }
        if (p[0] > 32) {
            *why = "a dictionary index bit width over 32";
            return false;
        }
        pq_rle_init(&v->rle, p + 1, n - 1, p[0]);
        return true;
    case PQ_ENC_RLE: {
        uint32_t len;
        if (n < 4) {
            *why = "RLE booleans without their length";
            return false;
        }
        len = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        if (len > n - 4) {
            *why = "RLE booleans longer than the page";
            return false;
        }
        pq_rle_init(&v->rle, p + 4, len, 1);
        return true;
    }
    case PQ_ENC_DELTA_BINARY_PACKED:
        return pq_delta_init(&v->delta, p, n, why);
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
        if (!lengths(&v->p, end, n_values, &v->lens, &v->n_lens, why)) return false;
        return true;
    case PQ_ENC_DELTA_BYTE_ARRAY: {
        int64_t n_pre;
        if (!lengths(&v->p, end, n_values, &v->prefix, &n_pre, why)) return false;
        if (!lengths(&v->p, end, n_values, &v->lens, &v->n_lens, why)) return false;
        if (n_pre != v->n_lens) {
            *why = "DELTA_BYTE_ARRAY prefix and suffix counts differ";
            return false;
        }
        return true;
    }
    case PQ_ENC_BYTE_STREAM_SPLIT: {
        size_t k = fixed_width(phys, type_length);
        if (k == 0 || n % k) {
            *why = "BYTE_STREAM_SPLIT data that is not a whole number of values";
            return false;
        }
        v->base = p;
        v->bss_n = (int64_t)(n / k);
        return true;
    }
    default:
        *why = "an unsupported encoding";
        return false;
    }
}

void pq_values_free(PqValues *v)
{
    tl_free(v->lens);
    tl_free(v->prefix);
    tl_free(v->prev);
    tl_free(v->made);
    memset(v, 0, sizeof *v);
}

/* v->made holding at least n bytes (its old contents dropped). */
static bool made_reserve(PqValues *v, size_t n)
{
    if (n <= v->made_cap) return true;
    uint8_t *m = tl_malloc(n);
    if (!m) return false;
    tl_free(v->made);
    v->made = m;
    v->made_cap = n;
    return true;
}

static bool plain(PqValues *v, int64_t n, PqPhys *ph, const char **why)
{
    size_t w = fixed_width(v->phys, v->type_length), left = (size_t)(v->end - v->p);
    if (v->phys == PQ_BOOLEAN) {
        uint64_t bits = (uint64_t)left * 8;
        if (v->bool_bit + (uint64_t)n > bits) goto short_page;
        for (int64_t i = 0; i < n; i++, v->bool_bit++)
            ph->b8[i] = (uint8_t)(v->p[v->bool_bit >> 3] >> (v->bool_bit & 7) & 1);
        return true;
    }
    if (v->phys == PQ_BYTE_ARRAY) {
        const uint8_t *p = v->p;
        for (int64_t i = 0; i < n; i++) {
            uint32_t len;
            if (v->end - p < 4) goto short_page;
            len = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                  (uint32_t)p[3] << 24;
            p += 4;
            if (len > (size_t)(v->end - p)) goto short_page;
            ph->bytes[i].p = p;
            ph->bytes[i].n = len;
            p += len;
        }
        v->p = p;
        return true;
    }
    if (w && (size_t)n > left / w) goto short_page;
    if (w == 0 && n > 0 && v->phys == PQ_FIXED_LEN_BYTE_ARRAY) {
        /* zero-length fixed arrays: every value empty */
        for (int64_t i = 0; i < n; i++) ph->bytes[i] = (PqStr){v->p, 0};
        return true;
    }
    switch (v->phys) {
    case PQ_INT32: memcpy(ph->i32, v->p, (size_t)n * 4); break;
    case PQ_INT64: memcpy(ph->i64, v->p, (size_t)n * 8); break;
    case PQ_FLOAT: memcpy(ph->f32, v->p, (size_t)n * 4); break;
    case PQ_DOUBLE: memcpy(ph->f64, v->p, (size_t)n * 8); break;
    default:
        for (int64_t i = 0; i < n; i++) ph->bytes[i] = (PqStr){v->p + (size_t)i * w, (uint32_t)w};
        break;
    }
    v->p += (size_t)n * w;
    return true;
short_page:
    *why = "the page holds fewer values than its header says";
    return false;
}

static bool dlba(PqValues *v, int64_t n, PqPhys *ph, const char **why)
{
    if (n > v->n_lens - v->lens_i) {
        *why = "DELTA_LENGTH_BYTE_ARRAY data holds fewer values than the page";
        return false;
    }
    for (int64_t i = 0; i < n; i++) {
        uint32_t len = (uint32_t)v->lens[v->lens_i++];
        if (len > (size_t)(v->end - v->p)) {
            *why = "DELTA_LENGTH_BYTE_ARRAY data shorter than its lengths";
            return false;
        }
        ph->bytes[i] = (PqStr){v->p, len};
        v->p += len;
    }
    return true;
}

static bool dba(PqValues *v, int64_t n, PqPhys *ph, const char **why)
{
    size_t need = 0, at = 0;
    if (n > v->n_lens - v->lens_i) {
        *why = "DELTA_BYTE_ARRAY data holds fewer values than the page";
        return false;
    }
    for (int64_t i = 0; i < n; i++)
        need += (size_t)v->prefix[v->lens_i + i] + (size_t)v->lens[v->lens_i + i];
    if (!made_reserve(v, need ? need : 1)) {
        *why = NULL;
        return false;
    }
    for (int64_t i = 0; i < n; i++, v->lens_i++) {
        size_t pre = (size_t)v->prefix[v->lens_i], suf = (size_t)v->lens[v->lens_i];
        uint8_t *dst = v->made + at;
        if (pre > v->prev_len) {
            *why = "a DELTA_BYTE_ARRAY prefix longer than the previous value";
            return false;
        }
        if (suf > (size_t)(v->end - v->p)) {
            *why = "DELTA_BYTE_ARRAY data shorter than its lengths";
            return false;
        }
        if (v->phys == PQ_FIXED_LEN_BYTE_ARRAY && pre + suf != (size_t)v->type_length) {
            *why = "a DELTA_BYTE_ARRAY value of another length than the column's";
            return false;
        }
        if (pre) memcpy(dst, v->prev, pre);
        if (suf) memcpy(dst + pre, v->p, suf);
        v->p += suf;
        ph->bytes[i] = (PqStr){dst, (uint32_t)(pre + suf)};
        at += pre + suf;
        if (pre + suf > v->prev_cap) {
            size_t cap = v->prev_cap ? v->prev_cap : 64;
            while (cap < pre + suf) cap *= 2;
            uint8_t *g = tl_realloc(v->prev, cap);
            if (!g) {
                *why = NULL;
                return false;
            }
            v->prev = g;
            v->prev_cap = cap;
        }
        if (pre + suf) memcpy(v->prev, dst, pre + suf);
        v->prev_len = pre + suf;
    }
    return true;
}

static bool bss(PqValues *v, int64_t n, PqPhys *ph, const char **why)
{
    size_t k = fixed_width(v->phys, v->type_length);
    uint8_t *dst;
    if (n > v->bss_n - v->bss_i) {
        *why = "BYTE_STREAM_SPLIT data holds fewer values than the page";
        return false;
    }
    if (v->phys == PQ_FIXED_LEN_BYTE_ARRAY) {
        if (!made_reserve(v, (size_t)n * k + 1)) {
            *why = NULL;
            return false;
        }
        dst = v->made;
    } else {
        dst = (uint8_t *)ph->i64; /* the scratch every typed array shares */
    }
    for (int64_t i = 0; i < n; i++) {
        const uint8_t *src = v->base + v->bss_i + i;
        for (size_t j = 0; j < k; j++) dst[(size_t)i * k + j] = src[j * (size_t)v->bss_n];
    }
    if (v->phys == PQ_FIXED_LEN_BYTE_ARRAY)
        for (int64_t i = 0; i < n; i++) ph->bytes[i] = (PqStr){dst + (size_t)i * k, (uint32_t)k};
    v->bss_i += n;
    return true;
}

bool pq_values_next(PqValues *v, int64_t n, PqPhys *ph, uint32_t *idx, const char **why)
{
    ph->n = n;
    if (n == 0) return true;
    switch (v->encoding) {
    case PQ_ENC_PLAIN:
        return plain(v, n, ph, why);
    case PQ_ENC_PLAIN_DICTIONARY:
    case PQ_ENC_RLE_DICTIONARY:
        return pq_rle_next(&v->rle, idx, n, why);
    case PQ_ENC_RLE:
        if (!pq_rle_next(&v->rle, idx, n, why)) return false;
        for (int64_t i = 0; i < n; i++) ph->b8[i] = (uint8_t)idx[i];
        return true;
    case PQ_ENC_DELTA_BINARY_PACKED:
        if (!pq_delta_next(&v->delta, ph->i64, n, why)) return false;
        if (v->phys == PQ_INT32) /* narrowed in place: i32 and i64 share the scratch */
            for (int64_t i = 0; i < n; i++) ph->i32[i] = (int32_t)(uint32_t)(uint64_t)ph->i64[i];
        return true;
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
        return dlba(v, n, ph, why);
    case PQ_ENC_DELTA_BYTE_ARRAY:
        return dba(v, n, ph, why);
    case PQ_ENC_BYTE_STREAM_SPLIT:
        return bss(v, n, ph, why);
    default:
        *why = "an unsupported encoding";
        return false;
    }
}
