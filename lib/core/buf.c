/*
 * buf.c -- immutable, refcounted byte regions (arrow-rs Buffer).
 *
 * A TlBuf is one of three kinds, told apart by its fields:
 *
 *   owned    parent == NULL, release == NULL.  tl_buf_new puts the bytes in
 *            the same allocation, right after the header (one malloc, one
 *            free); tl_buf_adopt points at a separate tl_malloc'd region.
 *   slice    parent != NULL: data points into the parent's bytes and the
 *            slice holds one reference to the parent.  Slices of slices hang
 *            off the root, so chains never grow.
 *   wrapped  release != NULL: foreign memory (an mmapped file, an imported
 *            Arrow array); release(owner, data, size) runs once, when the
 *            last reference goes.
 *
 *   tl_buf_new:   [ TlBuf header (48 bytes) | data ... ]   data = header + 1
 *
 * Once a buffer is shared it is never written again, so readers need no
 * locks; the refcount uses atomic builtins so buffers may cross threads.
 * tl_buf_adopt takes its region over also when it fails (frees it);
 * tl_buf_wrap does not (the foreign memory stays the caller's on failure).
 */
#include "core.h"

static inline uint8_t *inline_data(TlBuf *b)
{
    return (uint8_t *)(b + 1);
}

/* A new buffer of size bytes (zeroed when zero is true), refcount 1; size 0
 * gives a valid empty buffer.  NULL on OOM. */
TlBuf *tl_buf_new(size_t size, bool zero)
{
    TlBuf *b;
    if (size > SIZE_MAX - sizeof(TlBuf)) return NULL;
    b = tl_malloc(sizeof(TlBuf) + size);
    if (!b) return NULL;
    b->data = inline_data(b);
    b->size = size;
    b->refcount = 1;
    b->parent = NULL;
    b->release = NULL;
    b->owner = NULL;
    if (zero && size) memset(b->data, 0, size);
    return b;
}

/* A buffer owning the tl_malloc'd region data[0..size) (data may be NULL
 * when size is 0).  On OOM the region is freed and NULL returned. */
TlBuf *tl_buf_adopt(uint8_t *data, size_t size)
{
    TlBuf *b = tl_malloc(sizeof(TlBuf));
    if (!b) {
        tl_free(data);
        return NULL;
    }
    b->data = data ? data : inline_data(b);
    b->size = size;
    b->refcount = 1;
    b->parent = NULL;
    b->release = NULL;
    b->owner = NULL;
    if (!data) b->size = 0;
    return b;
}

/* A buffer over foreign memory; release(owner, data, size) runs when the last
 * reference is dropped.  On OOM NULL is returned and release is not called:
 * the memory stays the caller's. */
TlBuf *tl_buf_wrap(uint8_t *data, size_t size,
                   void (*release)(void *, uint8_t *, size_t), void *owner)
{
    TlBuf *b = tl_malloc(sizeof(TlBuf));
    if (!b) return NULL;
    b->data = data;
    b->size = size;
    b->refcount = 1;
    b->parent = NULL;
    b->release = release;
    b->owner = owner;
    return b;
}

/* A new buffer viewing b's bytes [off, off+len) (clamped to b's size); it
 * keeps b's root alive.  b is borrowed.  NULL on OOM. */
TlBuf *tl_buf_slice(TlBuf *b, size_t off, size_t len)
{
    TlBuf *root, *s;
    if (off > b->size) off = b->size;
    if (len > b->size - off) len = b->size - off;
    root = b->parent ? b->parent : b;
    s = tl_malloc(sizeof(TlBuf));
    if (!s) return NULL;
    s->data = b->data + off;
    s->size = len;
    s->refcount = 1;
    s->parent = tl_buf_retain(root);
    s->release = NULL;
    s->owner = NULL;
    return s;
}

/* Add a reference to b and return it; NULL-safe. */
TlBuf *tl_buf_retain(TlBuf *b)
{
    if (b) __atomic_add_fetch(&b->refcount, 1, __ATOMIC_RELAXED);
    return b;
}

/* Drop a reference to b; the last one frees it (and drops its parent, or
 * runs its release callback).  NULL-safe. */
void tl_buf_release(TlBuf *b)
{
    if (!b) return;
    if (__atomic_sub_fetch(&b->refcount, 1, __ATOMIC_ACQ_REL) != 0) return;
    if (b->parent) {
        tl_buf_release(b->parent);
    } else if (b->release) {
        b->release(b->owner, b->data, b->size);
    } else if (b->data != inline_data(b)) {
        tl_free(b->data);
    }
    tl_free(b);
}
