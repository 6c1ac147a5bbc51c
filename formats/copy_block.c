/*
 * copy_block.c -- the strings a text reader cannot view in place.
 *
 * The CSV and NDJSON readers make a string column of views: a long value
 * is viewed in the input itself (the window, data buffer 0) when its bytes
 * are there as written, and copied into one growing block (data buffer 1)
 * when they had to change (doubled quotes, backslash escapes, compacted
 * JSON).  Views hold offsets, so the block may move while it grows; at the
 * end it becomes the column's last data buffer, shrunk to its use, and
 * when no view points into the window the block alone is buffer 0.  One
 * helper for both readers keeps the two buffer layouts the same.
 */
#include "fmt_impl.h"

bool tl_copy_block_reserve(TlCopyBlock *b, size_t more)
{
    size_t cap = b->cap ? b->cap : 4096;
    uint8_t *g;
    if (b->used + more <= b->cap) return true;
    while (cap < b->used + more) cap *= 2;
    g = tl_realloc(b->data, cap);
    if (!g) return false;
    b->data = g;
    b->cap = cap;
    return true;
}

TlStatus tl_copy_block_buffers(TlCopyBlock *b, TlBuf *window, TlView *views,
                               int64_t n, TlBuf ***data, uint32_t *n_data,
                               TlError *err)
{
    TlBuf **d;
    uint32_t k = 0;
    *data = NULL;
    *n_data = 0;
    if (!window && !b->used) return TL_OK;
    d = tl_malloc(2 * sizeof *d);
    if (!d) return tl_error_oom(err);
    if (window) d[k++] = tl_buf_retain(window);
    if (b->used) {
        uint8_t *shrunk = tl_realloc(b->data, b->used);
        if (shrunk) b->data = shrunk;
        d[k] = tl_buf_adopt(b->data, b->used); /* owns the bytes, also on failure */
        b->data = NULL;
        if (!d[k]) {
            while (k) tl_buf_release(d[--k]);
            tl_free(d);
            return tl_error_oom(err);
        }
        k++;
        if (!window) /* the block is buffer 0: re-point its views */
            for (int64_t row = 0; row < n; row++)
                if (views[row].in.len > TL_VIEW_INLINE) views[row].out.buf = 0;
    }
    *data = d;
    *n_data = k;
    return TL_OK;
}
