/*
 * gzip.c -- gzip through zlib: a whole buffer inflated (the whole-buffer
 * path, compress.c), and deflate for compressed output (TlCompressor).
 *
 * Members are read until the input ends (concatenated members, as gzip
 * and BGZF write them); trailing zero bytes (tar-style padding) are
 * ignored, anything else after a member is an error.  A stream that ends
 * inside a member is "truncated ... at byte N" (N = the compressed size);
 * a decoder error is "corrupt ... at byte N" with N the compressed offset
 * zlib had reached.  Neither is ever a short result.  The output buffer
 * starts at the size the last member announces (ISIZE), capped by
 * deflate's maximum ratio.
 */
#include "compress_impl.h"

#include <limits.h>

/* ------------------------------------------------------------- zlib mem */

/* See compress_impl.h. */
voidpf tl_z_alloc(voidpf opaque, uInt items, uInt size)
{
    (void)opaque;
    if (size && items > SIZE_MAX / size) return Z_NULL;
    return tl_malloc((size_t)items * size);
}

/* See compress_impl.h. */
void tl_z_free(voidpf opaque, voidpf p)
{
    (void)opaque;
    tl_free(p);
}

/* --------------------------------------------------------------- gzip */

/* See compress_impl.h. */
bool tl_all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i]) return false;
    return true;
}

/* See compress_impl.h. */
TlStatus tl_gunzip(const char *name, const uint8_t *src, size_t n, TlOutBuf *o,
                       TlError *err)
{
    z_stream z;
    size_t pos = 0;
    uint64_t isize = 0;
    TlStatus st = TL_OK;
    memset(&z, 0, sizeof z);
    z.zalloc = tl_z_alloc;
    z.zfree = tl_z_free;
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return tl_error_oom(err);
    if (n >= 18)
        isize = (uint64_t)src[n - 4] | (uint64_t)src[n - 3] << 8 |
                (uint64_t)src[n - 2] << 16 | (uint64_t)src[n - 1] << 24;
    for (;;) {
        size_t in_len = n - pos, out_len;
        int rc;
        if ((st = tl_out_reserve(o, tl_out_start(isize, n, 1032), err)) != TL_OK) break;
        if (in_len > UINT_MAX) in_len = UINT_MAX;
        out_len = o->cap - o->len;
        if (out_len > UINT_MAX) out_len = UINT_MAX;
        z.next_in = (Bytef *)(uintptr_t)(src + pos);
        z.avail_in = (uInt)in_len;
        z.next_out = o->data + o->len;
        z.avail_out = (uInt)out_len;
        rc = inflate(&z, Z_NO_FLUSH);
        pos += in_len - z.avail_in;
        o->len += out_len - z.avail_out;
        if (rc == Z_STREAM_END) {
            if (pos == n) break;
            if (n - pos >= 2 && src[pos] == 0x1f && src[pos + 1] == 0x8b) {
                if (inflateReset(&z) != Z_OK) {
                    st = tl_error_oom(err);
                    break;
                }
                continue;
            }
            if (tl_all_zero(src + pos, n - pos)) break;
            st = tl_error(err, TL_ERR_DATA,
                          "%s: unexpected data after the gzip stream at byte %zu",
                          tl_quote_name(name).s, pos);
            break;
        }
        if (rc == Z_MEM_ERROR) {
            st = tl_error_oom(err);
            break;
        }
        if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_STREAM_ERROR) {
            st = tl_error(err, TL_ERR_DATA, "%s: corrupt gzip data at byte %zu: %s",
                          tl_quote_name(name).s, pos, z.msg ? z.msg : "invalid stream");
            break;
        }
        /* Z_OK or Z_BUF_ERROR: out of input, or of output space */
        if (pos == n && z.avail_out > 0) {
            st = tl_error(err, TL_ERR_DATA,
                          "%s: truncated gzip stream: it ends at byte %zu, "
                          "inside a member", tl_quote_name(name).s, n);
            break;
        }
    }
    inflateEnd(&z);
    return st;
}

/* ------------------------------------------------------------ writing */

/* See compress_impl.h: deflate with a gzip header at z->level, or the
 * same stream reset for another output. */
TlStatus tl_gzip_start(TlCompressor *z, TlError *err)
{
    if (z->z_ready) {
        if (deflateReset(&z->z) != Z_OK) return tl_error_oom(err);
        return TL_OK;
    }
    memset(&z->z, 0, sizeof z->z);
    z->z.zalloc = tl_z_alloc;
    z->z.zfree = tl_z_free;
    if (deflateInit2(&z->z, z->level, Z_DEFLATED, 16 + MAX_WBITS, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return tl_error_oom(err);
    z->z_ready = true;
    return TL_OK;
}

/* See compress_impl.h. */
TlStatus tl_gzip_write(TlCompressor *z, const uint8_t *p, size_t n, bool finish,
                       TlEmitFn emit, void *ctx, TlError *err)
{
    for (;;) {
        size_t in_len = n > UINT_MAX ? UINT_MAX : n;
        bool last = finish && in_len == n;
        int rc;
        z->z.next_in = (Bytef *)(uintptr_t)p;
        z->z.avail_in = (uInt)in_len;
        do {
            z->z.next_out = z->out;
            z->z.avail_out = (uInt)TL_OUT_CHUNK;
            rc = deflate(&z->z, last ? Z_FINISH : Z_NO_FLUSH);
            if (rc == Z_STREAM_ERROR || rc == Z_MEM_ERROR)
                return tl_error(err, TL_ERR_DATA, "gzip compression failed");
            size_t got = TL_OUT_CHUNK - z->z.avail_out;
            if (got) TL_TRY(emit(ctx, z->out, got, err));
        } while (z->z.avail_out == 0 || (last && rc != Z_STREAM_END));
        if (in_len == n) return TL_OK; /* (p may be NULL with n 0: no p + 0) */
        p += in_len;
        n -= in_len;
    }
}
