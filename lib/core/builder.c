/*
 * builder.c -- growing an array one value at a time.
 *
 * A builder owns plain tl_malloc'd memory while it grows and hands it to
 * buffers (tl_buf_adopt) when finished, so finishing copies nothing:
 *
 *   values     element array, or a bitmap for bool; doubles as it fills.
 *   validity   absent until the first null; then allocated with the same
 *              capacity and back-filled with 1s for the rows before it.
 *              Bytes past the last element are kept zero (deterministic).
 *   data       string bytes longer than 12 go into blocks of 16 KiB,
 *              doubling up to 1 MiB (bigger when one string is bigger),
 *              appended and never moved; views address them by (block
 *              index, offset).
 *
 *   views:  [len|bytes....] [len|pfx|0|0] [len|pfx|0|17] [len|bytes....] ...
 *                                  |             |
 *   data[0]: |<- string 1 ->|<- string 2 ->| ......... unused ......... |
 *
 * tl_builder_finish shrinks the last block to the bytes used (blocks are
 * addressed by index, so reallocating before the freeze is safe), wraps
 * everything into a TlArray and resets the builder for the next batch.
 * Every append returns false on OOM and leaves the builder valid.
 */
#include "core.h"

#define BLOCK_MIN ((size_t)1 << 20) /* bytes of a string data block ... */
#define BLOCK_FIRST ((size_t)1 << 14) /* ... after the first ones: 16 KiB, doubling */
#define MIN_ELEMS 16                /* first allocation, in elements (doubles) */

/* Initialise an empty builder of type t. */
void tl_builder_init(TlBuilder *b, TlType type)
{
    memset(b, 0, sizeof *b);
    b->type = type;
}

/* Bytes per element (0 for bool and null); inlined on the append paths. */
static inline size_t width_of(TlType t)
{
    switch (t) {
    case TL_TINT64:
    case TL_TFLOAT64:
    case TL_TTIMESTAMP:
    case TL_TTIMESTAMPTZ:
        return 8;
    case TL_TDATE:
        return 4;
    case TL_TSTRING:
        return sizeof(TlView);
    default:
        return 0;
    }
}

/* Element capacity of the values buffer. */
static int64_t cap_elems(const TlBuilder *b)
{
    size_t w;
    if (b->type == TL_TBOOL) return (int64_t)b->values_cap * 8;
    w = width_of(b->type);
    return w ? (int64_t)(b->values_cap / w) : INT64_MAX;
}

/* Resize the validity bitmap to hold `elems` bits, zeroing new bytes. */
static bool grow_validity(TlBuilder *b, int64_t elems)
{
    size_t bytes = tl_bitmap_bytes(elems);
    uint8_t *p;
    if (bytes <= b->validity_cap) return true;
    p = tl_realloc(b->validity, bytes);
    if (!p) return false;
    memset(p + b->validity_cap, 0, bytes - b->validity_cap);
    b->validity = p;
    b->validity_cap = bytes;
    return true;
}

/* Make room for `need` elements in total (values and, if present,
 * validity), growing geometrically. */
static bool grow(TlBuilder *b, int64_t need)
{
    int64_t cap = cap_elems(b), new_cap;
    size_t bytes, w;
    uint8_t *p;
    if (need <= cap) return b->validity ? grow_validity(b, need) : true;
    new_cap = cap < MIN_ELEMS ? MIN_ELEMS : cap;
    while (new_cap < need) {
        if (new_cap > INT64_MAX / 2) return false;
        new_cap *= 2;
    }
    if (b->type == TL_TBOOL) {
        bytes = tl_bitmap_bytes(new_cap);
    } else {
        w = width_of(b->type);
        if ((uint64_t)new_cap > SIZE_MAX / w) return false;
        bytes = (size_t)new_cap * w;
    }
    p = tl_realloc(b->values, bytes);
    if (!p) return false;
    if (b->type == TL_TBOOL) memset(p + b->values_cap, 0, bytes - b->values_cap);
    b->values = p;
    b->values_cap = bytes;
    return b->validity ? grow_validity(b, new_cap) : true;
}

/* Make room for n_more further elements, so that many appends of fixed-width
 * values cannot fail.  False on OOM. */
bool tl_builder_reserve(TlBuilder *b, int64_t n_more)
{
    if (n_more <= 0) return true;
    if (b->length > INT64_MAX - n_more) return false;
    return grow(b, b->length + n_more);
}

/* Room for one more element of w bytes (w == 0: a bit). */
static inline bool room(TlBuilder *b, size_t w)
{
    size_t used = w ? (size_t)b->length * w + w : (size_t)b->length / 8 + 1;
    if (used <= b->values_cap &&
        (!b->validity || (size_t)b->length < b->validity_cap * 8))
        return true;
    return grow(b, b->length + 1);
}

/* Room for one more element of the builder's type. */
static inline bool room1(TlBuilder *b)
{
    return room(b, width_of(b->type));
}

/* Mark element b->length valid (when a validity bitmap exists). */
static inline void mark_valid(TlBuilder *b)
{
    if (b->validity) tl_bit_set(b->validity, b->length);
}

/* Append a null. */
bool tl_builder_append_null(TlBuilder *b)
{
    size_t w;
    if (b->type == TL_TNULL) {
        b->length++;
        b->null_count++;
        return true;
    }
    if (!room1(b)) return false;
    if (!b->validity) {
        /* first null: a bitmap as large as values, 1s for rows so far */
        int64_t cap = cap_elems(b);
        size_t bytes = tl_bitmap_bytes(cap);
        b->validity = tl_calloc(bytes, 1);
        if (!b->validity) return false;
        b->validity_cap = bytes;
        tl_bitmap_fill(b->validity, 0, b->length, true);
    }
    tl_bit_clear(b->validity, b->length);
    w = width_of(b->type);
    if (b->type == TL_TBOOL)
        tl_bit_clear(b->values, b->length);
    else
        memset(b->values + (size_t)b->length * w, 0, w);
    b->length++;
    b->null_count++;
    return true;
}

/* Append a bool (bool builders). */
bool tl_builder_append_bool(TlBuilder *b, bool v)
{
    if (b->type != TL_TBOOL) return false;
    if (!room(b, 0)) return false;
    tl_bit_put(b->values, b->length, v);
    mark_valid(b);
    b->length++;
    return true;
}

/* Append an int64 (int64 and timestamp builders). */
bool tl_builder_append_i64(TlBuilder *b, int64_t v)
{
    if (width_of(b->type) != 8) return false;
    if (!room(b, 8)) return false;
    memcpy(b->values + (size_t)b->length * 8, &v, 8);
    mark_valid(b);
    b->length++;
    return true;
}

/* Append a double (float64 builders). */
bool tl_builder_append_f64(TlBuilder *b, double v)
{
    if (width_of(b->type) != 8) return false;
    if (!room(b, 8)) return false;
    memcpy(b->values + (size_t)b->length * 8, &v, 8);
    mark_valid(b);
    b->length++;
    return true;
}

/* Append an int32 (date builders). */
bool tl_builder_append_i32(TlBuilder *b, int32_t v)
{
    if (b->type != TL_TDATE) return false;
    if (!room(b, 4)) return false;
    memcpy(b->values + (size_t)b->length * 4, &v, 4);
    mark_valid(b);
    b->length++;
    return true;
}

/* Room for len more bytes in the current block, starting a new block when
 * needed: at least len bytes, and BLOCK_FIRST doubling with each block up to
 * BLOCK_MIN, so a builder of a few strings (a small morsel) does not take
 * 1 MiB, and a big one still has few blocks. */
static bool block_room(TlBuilder *b, size_t len)
{
    uint8_t *mem;
    TlBuf *blk;
    size_t size;
    if (b->n_data > 0 && b->data[b->n_data - 1]->size - b->block_used >= len)
        return true;
    if (b->n_data == UINT32_MAX) return false;
    if (b->n_data == b->data_cap) {
        uint32_t cap = b->data_cap ? b->data_cap * 2 : 4;
        TlBuf **d;
        if (cap < b->data_cap) cap = UINT32_MAX;
        d = tl_realloc(b->data, sizeof(TlBuf *) * cap);
        if (!d) return false;
        b->data = d;
        b->data_cap = cap;
    }
    size = b->n_data >= 6 ? BLOCK_MIN : BLOCK_FIRST << b->n_data;
    if (size < len) size = len;
    mem = tl_malloc(size);
    if (!mem) return false;
    blk = tl_buf_adopt(mem, size);
    if (!blk) return false;
    b->data[b->n_data++] = blk;
    b->block_used = 0;
    return true;
}

/* Append the string s[0..len) (string builders).  False on OOM or when len
 * does not fit 32 bits. */
bool tl_builder_append_str(TlBuilder *b, const void *s, size_t len)
{
    TlView v;
    if (b->type != TL_TSTRING || len > UINT32_MAX) return false;
    if (!room(b, sizeof(TlView))) return false;
    if (len <= TL_VIEW_INLINE) {
        v = tl_view_inline(s, (uint32_t)len);
    } else {
        TlBuf *blk;
        if (!block_room(b, len)) return false;
        blk = b->data[b->n_data - 1];
        memcpy(blk->data + b->block_used, s, len);
        v.out.len = (uint32_t)len;
        memcpy(v.out.prefix, s, 4);
        v.out.buf = b->n_data - 1;
        v.out.off = (uint32_t)b->block_used;
        b->block_used += len;
    }
    memcpy(b->values + (size_t)b->length * sizeof(TlView), &v, sizeof v);
    mark_valid(b);
    b->length++;
    return true;
}

/* Append element i of a (of the builder's type, or of type null), null or
 * not.  a is borrowed.  False on OOM. */
bool tl_builder_append_from(TlBuilder *b, const TlArray *a, int64_t i)
{
    if (!tl_array_valid(a, i)) return tl_builder_append_null(b);
    switch (a->type) {
    case TL_TBOOL:
        return tl_builder_append_bool(b, tl_array_bool(a, i));
    case TL_TINT64:
    case TL_TTIMESTAMP:
    case TL_TTIMESTAMPTZ:
        return tl_builder_append_i64(b, tl_array_i64(a)[i]);
    case TL_TFLOAT64:
        return tl_builder_append_f64(b, tl_array_f64(a)[i]);
    case TL_TDATE:
        return tl_builder_append_i32(b, tl_array_i32(a)[i]);
    case TL_TSTRING: {
        const TlView *v = &tl_array_views(a)[i];
        if (v->in.len <= TL_VIEW_INLINE && b->type == TL_TSTRING) {
            if (!room1(b)) return false;
            memcpy(b->values + (size_t)b->length * sizeof(TlView), v,
                   sizeof *v);
            mark_valid(b);
            b->length++;
            return true;
        }
        return tl_builder_append_str(b, tl_view_ptr(v, a->data), v->in.len);
    }
    default:
        return tl_builder_append_null(b);
    }
}

/* Release everything the builder holds and make it empty again. */
void tl_builder_free(TlBuilder *b)
{
    uint32_t i;
    tl_free(b->values);
    tl_free(b->validity);
    for (i = 0; i < b->n_data; i++) tl_buf_release(b->data[i]);
    tl_free(b->data);
    tl_builder_init(b, b->type);
}

/* Freeze the builder's contents into a new array (owned by the caller) and
 * reset the builder to empty, keeping its type.  On OOM the contents are
 * lost, the builder is reset all the same, and NULL is returned. */
TlArray *tl_builder_finish(TlBuilder *b)
{
    TlType type = b->type;
    int64_t length = b->length, null_count = b->null_count;
    TlBuf *values = NULL, *validity = NULL, **data = NULL;
    uint32_t n_data = 0;
    uint8_t *vmem, *nmem;
    size_t vbytes, vcap;

    if (type == TL_TNULL) {
        tl_builder_free(b);
        return tl_array_new(TL_TNULL, length, NULL, NULL, length, NULL, 0);
    }
    vbytes = type == TL_TBOOL ? tl_bitmap_bytes(length)
                              : width_of(type) * (size_t)length;
    /* take everything out of the builder first: it is reset whatever
     * happens next */
    vmem = b->values;
    vcap = b->values_cap;
    nmem = null_count > 0 ? b->validity : NULL;
    if (!nmem) tl_free(b->validity);
    if (b->n_data > 0) {
        TlBuf *last = b->data[b->n_data - 1];
        if (b->block_used < last->size) {
            uint8_t *p = tl_realloc(last->data, b->block_used ? b->block_used : 1);
            if (p) {
                last->data = p;
                last->size = b->block_used;
            }
        }
        data = b->data;
        n_data = b->n_data;
    } else {
        tl_free(b->data);
    }
    tl_builder_init(b, type);

    /* give back a large unused tail of values (best effort) */
    if (vmem && vbytes > 0 && vcap - vbytes > 4096 && vcap - vbytes > vbytes / 4) {
        uint8_t *p = tl_realloc(vmem, vbytes);
        if (p) vmem = p;
    }
    if (vmem) {
        values = tl_buf_adopt(vmem, vbytes);
    } else {
        values = tl_buf_new(0, false);
    }
    if (!values) goto fail;
    if (nmem) {
        validity = tl_buf_adopt(nmem, tl_bitmap_bytes(length));
        nmem = NULL;
        if (!validity) goto fail;
    }
    return tl_array_new(type, length, values, validity, null_count, data,
                        n_data);
fail:
    tl_free(nmem);
    tl_buf_release(values);
    {
        uint32_t i;
        for (i = 0; i < n_data; i++) tl_buf_release(data[i]);
        tl_free(data);
    }
    return NULL;
}
