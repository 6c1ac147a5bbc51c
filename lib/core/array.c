/*
 * array.c -- immutable columns: assemble, slice, gather, concatenate.
 *
 * A TlArray is a header over refcounted buffers (core.h draws the layouts).
 * Invariants every function here keeps, and every consumer may rely on:
 *
 *   - null_count is exact for [offset, offset+length);
 *   - validity == NULL exactly when null_count == 0 (an all-valid bitmap is
 *     dropped), except for type null, which has no buffers at all and
 *     null_count == length;
 *   - values != NULL for every type but null;
 *   - string arrays own `data`, a tl_malloc'd list of n_data buffer
 *     references that their long views index; slices and gathers copy that
 *     list (bumping refcounts), never the bytes;
 *   - once built, nothing is written again, so arrays are shared by
 *     tl_array_retain across operators and threads.
 *
 * Slicing moves the offset and keeps the buffers.  take() and concat() write
 * new values and validity at offset 0.  concat() appends the parts' data
 * lists and re-bases the buffer index of every long view.
 */
#include "core.h"

/* Release the first n references of data and the list itself. */
static void release_data(TlBuf **data, uint32_t n)
{
    uint32_t i;
    if (!data) return;
    for (i = 0; i < n; i++) tl_buf_release(data[i]);
    tl_free(data);
}

/* A new list holding a reference to each of a's data buffers; true with
 * *out == NULL when a has none; false on OOM. */
static bool copy_data(const TlArray *a, TlBuf ***out)
{
    TlBuf **d;
    uint32_t i;
    *out = NULL;
    if (a->n_data == 0) return true;
    d = tl_malloc(sizeof(TlBuf *) * a->n_data);
    if (!d) return false;
    for (i = 0; i < a->n_data; i++) d[i] = tl_buf_retain(a->data[i]);
    *out = d;
    return true;
}

/* Assemble an array from owned references (taken over, also on failure).
 * null_count < 0: count it from validity; an all-valid validity is dropped.
 * data/n_data: a tl_malloc'd list of string data buffers, taken over.  For
 * type null, values and validity are dropped.  NULL on OOM. */
TlArray *tl_array_new(TlType type, int64_t length, TlBuf *values,
                      TlBuf *validity, int64_t null_count, TlBuf **data,
                      uint32_t n_data)
{
    TlArray *a = tl_malloc(sizeof(TlArray));
    if (!a) goto fail;
    if (type == TL_TNULL) {
        tl_buf_release(values);
        tl_buf_release(validity);
        release_data(data, n_data);
        values = validity = NULL;
        data = NULL;
        n_data = 0;
        null_count = length;
    } else if (!validity) {
        null_count = 0;
    } else {
        if (null_count < 0)
            null_count = length - tl_bitmap_count(validity->data, 0, length);
        if (null_count == 0) {
            tl_buf_release(validity);
            validity = NULL;
        }
    }
    if (!data) n_data = 0;
    a->refcount = 1;
    a->type = type;
    a->length = length;
    a->offset = 0;
    a->null_count = null_count;
    a->validity = validity;
    a->values = values;
    a->data = data;
    a->n_data = n_data;
    return a;
fail:
    tl_buf_release(values);
    tl_buf_release(validity);
    release_data(data, n_data);
    return NULL;
}

/* Bytes of the values buffer for n elements of type t. */
static size_t values_bytes(TlType t, int64_t n)
{
    if (t == TL_TBOOL) return tl_bitmap_bytes(n);
    return tl_type_width(t) * (size_t)n;
}

/* An array of `length` nulls of type t: zeroed values (empty views for
 * strings) and an all-zero validity; type null has no buffers.  NULL on
 * OOM. */
TlArray *tl_array_new_null(TlType type, int64_t length)
{
    TlBuf *values = NULL, *validity = NULL;
    if (type == TL_TNULL)
        return tl_array_new(TL_TNULL, length, NULL, NULL, length, NULL, 0);
    values = tl_buf_new(values_bytes(type, length), true);
    if (!values) return NULL;
    if (length > 0) {
        validity = tl_buf_new(tl_bitmap_bytes(length), true);
        if (!validity) {
            tl_buf_release(values);
            return NULL;
        }
    }
    return tl_array_new(type, length, values, validity, length, NULL, 0);
}

/* Add a reference to a and return it; NULL-safe. */
TlArray *tl_array_retain(TlArray *a)
{
    if (a) __atomic_add_fetch(&a->refcount, 1, __ATOMIC_RELAXED);
    return a;
}

/* Drop a reference to a; the last one releases its buffers.  NULL-safe. */
void tl_array_release(TlArray *a)
{
    if (!a) return;
    if (__atomic_sub_fetch(&a->refcount, 1, __ATOMIC_ACQ_REL) != 0) return;
    tl_buf_release(a->values);
    tl_buf_release(a->validity);
    release_data(a->data, a->n_data);
    tl_free(a);
}

/* A zero-copy view of rows [off, off+len) of a (clamped to a's length),
 * sharing a's buffers.  a is borrowed.  NULL on OOM. */
TlArray *tl_array_slice(TlArray *a, int64_t off, int64_t len)
{
    TlArray *s;
    TlBuf **data;
    if (off < 0) off = 0;
    if (off > a->length) off = a->length;
    if (len < 0) len = 0;
    if (len > a->length - off) len = a->length - off;
    if (!copy_data(a, &data)) return NULL;
    s = tl_malloc(sizeof(TlArray));
    if (!s) {
        release_data(data, a->n_data);
        return NULL;
    }
    s->refcount = 1;
    s->type = a->type;
    s->length = len;
    s->offset = a->offset + off;
    s->values = tl_buf_retain(a->values);
    s->data = data;
    s->n_data = data ? a->n_data : 0;
    s->validity = NULL;
    if (a->type == TL_TNULL) {
        s->null_count = len;
    } else if (a->validity == NULL || a->null_count == 0) {
        s->null_count = 0;
    } else if (a->null_count == a->length) {
        s->null_count = len;
    } else {
        s->null_count =
            len - tl_bitmap_count(a->validity->data, s->offset, len);
    }
    if (s->null_count > 0 && a->type != TL_TNULL)
        s->validity = tl_buf_retain(a->validity);
    return s;
}

/* Gather n fixed-width elements of `width` bytes. */
static void gather_fixed(uint8_t *dst, const uint8_t *src, size_t width,
                         const uint32_t *idx, int64_t n)
{
    int64_t i;
    switch (width) {
    case 4: {
        const uint32_t *s = (const uint32_t *)src;
        uint32_t *d = (uint32_t *)dst;
        for (i = 0; i < n; i++) d[i] = s[idx[i]];
        break;
    }
    case 8: {
        const uint64_t *s = (const uint64_t *)src;
        uint64_t *d = (uint64_t *)dst;
        for (i = 0; i < n; i++) d[i] = s[idx[i]];
        break;
    }
    case 16: {
        const TlView *s = (const TlView *)src;
        TlView *d = (TlView *)dst;
        for (i = 0; i < n; i++) d[i] = s[idx[i]];
        break;
    }
    default:
        for (i = 0; i < n; i++)
            memcpy(dst + (size_t)i * width, src + (size_t)idx[i] * width, width);
    }
}

/* Gather bits src[off + idx[i]] into dst bits [0, n) (dst zeroed); returns
 * the number of set bits written. */
static int64_t gather_bits(uint8_t *dst, const uint8_t *src, int64_t off,
                           const uint32_t *idx, int64_t n)
{
    int64_t i, set = 0;
    for (i = 0; i < n; i++) {
        if (tl_bit_get(src, off + idx[i])) {
            tl_bit_set(dst, i);
            set++;
        }
    }
    return set;
}

/* Rows idx[0..n) of a, in that order (indexes < a->length, may repeat), as
 * a new array at offset 0.  String arrays share a's data buffers.  a is
 * borrowed.  NULL on OOM. */
TlArray *tl_array_take(TlArray *a, const uint32_t *idx, int64_t n)
{
    TlBuf *values = NULL, *validity = NULL, **data = NULL;
    int64_t null_count = 0;
    if (a->type == TL_TNULL) return tl_array_new_null(TL_TNULL, n);
    values = tl_buf_new(values_bytes(a->type, n), a->type == TL_TBOOL);
    if (!values) goto fail;
    if (a->type == TL_TBOOL) {
        gather_bits(values->data, a->values->data, a->offset, idx, n);
    } else {
        size_t w = tl_type_width(a->type);
        gather_fixed(values->data, a->values->data + (size_t)a->offset * w,
                     w, idx, n);
    }
    if (a->validity && a->null_count > 0 && n > 0) {
        validity = tl_buf_new(tl_bitmap_bytes(n), true);
        if (!validity) goto fail;
        null_count =
            n - gather_bits(validity->data, a->validity->data, a->offset, idx, n);
    }
    if (!copy_data(a, &data)) goto fail;
    return tl_array_new(a->type, n, values, validity, null_count, data,
                        data ? a->n_data : 0);
fail:
    tl_buf_release(values);
    tl_buf_release(validity);
    return NULL;
}

/* Rows (part[i], row[i]) of parts[0..n_parts), i < n, gathered into one new
 * array without concatenating the parts first (the sort's output gather).
 * Parts have one type; parts of type null may be mixed in and give nulls.
 * Strings: views are copied, every part's data buffers are shared (the
 * result lists them all, part after part, and views are rebased).  Parts
 * are borrowed.  NULL on OOM. */
TlArray *tl_array_take_multi(TlArray *const *parts, int n_parts,
                             const uint32_t *part, const uint32_t *row,
                             int64_t n)
{
    TlType type = TL_TNULL;
    TlBuf *values = NULL, *validity = NULL, **data = NULL;
    uint32_t n_data = 0, *base = NULL;
    const uint8_t **vbase = NULL;
    int64_t null_count = 0;
    bool any_nulls = false, null_part = false;
    int p;
    for (p = 0; p < n_parts; p++) {
        if (type == TL_TNULL) type = parts[p]->type;
        if (parts[p]->type == TL_TNULL) null_part = true;
        if (null_part || parts[p]->null_count > 0) any_nulls = true;
        n_data += parts[p]->n_data;
    }
    if (type == TL_TNULL) return tl_array_new_null(TL_TNULL, n);
    values = tl_buf_new(values_bytes(type, n), type == TL_TBOOL || null_part);
    if (!values) goto fail;
    if (any_nulls && n > 0) {
        validity = tl_buf_new(tl_bitmap_bytes(n), true);
        if (!validity) goto fail;
    }
    if (type == TL_TSTRING && n_data > 0) {
        uint32_t b = 0;
        data = tl_malloc(sizeof(TlBuf *) * n_data);
        base = tl_malloc(sizeof(uint32_t) * (size_t)n_parts);
        if (!data || !base) goto fail;
        for (p = 0; p < n_parts; p++) {
            base[p] = b;
            for (uint32_t k = 0; k < parts[p]->n_data; k++)
                data[b++] = tl_buf_retain(parts[p]->data[k]);
        }
    }
    vbase = tl_malloc(sizeof *vbase * (size_t)n_parts);
    if (!vbase) goto fail;
    {
        size_t w = tl_type_width(type);
        uint8_t *dst = values->data;
        /* Per part: where its values start (offset applied). */
        for (p = 0; p < n_parts; p++) {
            const TlArray *a = parts[p];
            vbase[p] = a->type == TL_TNULL || type == TL_TBOOL
                           ? NULL
                           : a->values->data + (size_t)a->offset * w;
        }
        /* Values: one loop per width; prefetching a few rows ahead keeps
         * several random reads in flight. */
#define TL_PF 48
        if (type == TL_TBOOL) {
            for (int64_t i = 0; i < n; i++) {
                const TlArray *a = parts[part[i]];
                if (a->type != TL_TNULL && tl_bit_get(a->values->data, a->offset + row[i]))
                    tl_bit_set(dst, i);
            }
        } else if (null_part) {
            for (int64_t i = 0; i < n; i++)
                if (vbase[part[i]])
                    memcpy(dst + (size_t)i * w, vbase[part[i]] + (size_t)row[i] * w, w);
        } else if (w == 8) {
            uint64_t *d = (uint64_t *)dst;
            for (int64_t i = 0; i < n; i++) {
                if (i + TL_PF < n)
                    __builtin_prefetch(vbase[part[i + TL_PF]] + (size_t)row[i + TL_PF] * 8);
                memcpy(&d[i], vbase[part[i]] + (size_t)row[i] * 8, 8);
            }
        } else if (w == 16) {
            TlView *d = (TlView *)dst;
            for (int64_t i = 0; i < n; i++) {
                if (i + TL_PF < n)
                    __builtin_prefetch(vbase[part[i + TL_PF]] + (size_t)row[i + TL_PF] * 16);
                TlView v;
                memcpy(&v, vbase[part[i]] + (size_t)row[i] * 16, 16);
                if (base && v.in.len > TL_VIEW_INLINE) v.out.buf += base[part[i]];
                d[i] = v;
            }
        } else if (w == 4) {
            uint32_t *d = (uint32_t *)dst;
            for (int64_t i = 0; i < n; i++) {
                if (i + TL_PF < n)
                    __builtin_prefetch(vbase[part[i + TL_PF]] + (size_t)row[i + TL_PF] * 4);
                memcpy(&d[i], vbase[part[i]] + (size_t)row[i] * 4, 4);
            }
        } else {
            for (int64_t i = 0; i < n; i++)
                memcpy(dst + (size_t)i * w, vbase[part[i]] + (size_t)row[i] * w, w);
        }
#undef TL_PF
        /* Validity, only when some part has nulls. */
        if (validity) {
            for (int64_t i = 0; i < n; i++) {
                const TlArray *a = parts[part[i]];
                if (a->type != TL_TNULL &&
                    (a->validity == NULL || tl_bit_get(a->validity->data, a->offset + row[i])))
                    tl_bit_set(validity->data, i);
                else
                    null_count++;
            }
        }
    }
    tl_free(vbase);
    tl_free(base);
    return tl_array_new(type, n, values, validity, null_count, data,
                        data ? n_data : 0);
fail:
    if (data)
        for (uint32_t k = 0; base && k < n_data && data[k]; k++) tl_buf_release(data[k]);
    tl_free(data);
    tl_free(base);
    tl_free(vbase);
    tl_buf_release(values);
    tl_buf_release(validity);
    return NULL;
}

/* The parts, of one type, one after another in a new array; n must be >= 1
 * (n == 0 gives an empty array of type null).  Parts of type null may be
 * mixed with parts of one other type and become nulls of that type.  A single part is returned as
 * a new reference to itself.  Parts are borrowed.  NULL on OOM. */
TlArray *tl_array_concat(TlArray *const *parts, int n)
{
    TlType type;
    int64_t length = 0, null_count = 0, pos;
    uint32_t n_data = 0, base;
    TlBuf *values = NULL, *validity = NULL, **data = NULL;
    int i;
    if (n <= 0) return tl_array_new_null(TL_TNULL, 0);
    if (n == 1) return tl_array_retain(parts[0]);
    /* Parts of type null may join parts of another type: they add nulls. */
    type = TL_TNULL;
    for (i = 0; i < n; i++) {
        if (type == TL_TNULL) type = parts[i]->type;
        length += parts[i]->length;
        null_count += parts[i]->type == TL_TNULL ? parts[i]->length
                                                 : parts[i]->null_count;
        n_data += parts[i]->n_data;
    }
    if (type == TL_TNULL) return tl_array_new_null(TL_TNULL, length);
    values = tl_buf_new(values_bytes(type, length), type == TL_TBOOL);
    if (!values) goto fail;
    if (null_count > 0) {
        validity = tl_buf_new(tl_bitmap_bytes(length), true);
        if (!validity) goto fail;
    }
    if (n_data > 0) {
        data = tl_malloc(sizeof(TlBuf *) * n_data);
        if (!data) goto fail;
    }
    pos = 0;
    base = 0;
    for (i = 0; i < n; i++) {
        const TlArray *p = parts[i];
        if (p->type == TL_TNULL) {
            size_t w = tl_type_width(type);
            if (type != TL_TBOOL)
                memset(values->data + (size_t)pos * w, 0, w * (size_t)p->length);
            /* validity bits stay 0; bool value bits are already 0 */
            pos += p->length;
            continue;
        }
        if (type == TL_TBOOL) {
            tl_bitmap_copy(values->data, pos, p->values->data, p->offset,
                           p->length);
        } else if (type == TL_TSTRING) {
            const TlView *src = tl_array_views(p);
            TlView *dst = (TlView *)values->data + pos;
            int64_t k;
            if (base == 0 || p->n_data == 0) {
                memcpy(dst, src, sizeof(TlView) * (size_t)p->length);
            } else {
                for (k = 0; k < p->length; k++) {
                    dst[k] = src[k];
                    if (src[k].in.len > TL_VIEW_INLINE) dst[k].out.buf += base;
                }
            }
        } else {
            size_t w = tl_type_width(type);
            memcpy(values->data + (size_t)pos * w,
                   p->values->data + (size_t)p->offset * w,
                   w * (size_t)p->length);
        }
        if (validity) {
            if (p->validity)
                tl_bitmap_copy(validity->data, pos, p->validity->data,
                               p->offset, p->length);
            else
                tl_bitmap_fill(validity->data, pos, p->length, true);
        }
        if (data) {
            uint32_t k;
            for (k = 0; k < p->n_data; k++)
                data[base + k] = tl_buf_retain(p->data[k]);
        }
        base += p->n_data;
        pos += p->length;
    }
    return tl_array_new(type, length, values, validity, null_count, data,
                        n_data);
fail:
    tl_buf_release(values);
    tl_buf_release(validity);
    tl_free(data);
    return NULL;
}
