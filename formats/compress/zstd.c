/*
 * zstd.c -- zstd through libzstd's streaming API: a whole buffer
 * decompressed (the whole-buffer path, compress.c), and checksummed
 * frames for compressed output (TlCompressor).
 *
 * Frames are read until the input ends (multi-frame files; skippable
 * frames are skipped by libzstd).  A stream that ends inside a frame is
 * "truncated ... at byte N" (N = the compressed size); a decoder error is
 * "corrupt ... at byte N" with N the start of the block or frame that
 * fails, since libzstd consumes input a block, or a whole frame, at a
 * time.  The output buffer starts at the frame's content size, capped by
 * zstd's maximum ratio.
 */
#include "compress_impl.h"

/* --------------------------------------------------------------- zstd */

static void *zs_alloc(void *opaque, size_t size)
{
    (void)opaque;
    return tl_malloc(size);
}

static void zs_free(void *opaque, void *p)
{
    (void)opaque;
    tl_free(p);
}

/* See compress_impl.h. */
const ZSTD_customMem tl_zs_mem = {zs_alloc, zs_free, NULL};

/* See compress_impl.h. */
TlStatus tl_unzstd(const char *name, const uint8_t *src, size_t n, TlOutBuf *o,
                       TlError *err)
{
    ZSTD_DCtx *d = ZSTD_createDCtx_advanced(tl_zs_mem);
    ZSTD_inBuffer in = {src, n, 0};
    unsigned long long announced = ZSTD_getFrameContentSize(src, n);
    TlStatus st = TL_OK;
    if (!d) return tl_error_oom(err);
    if (announced == ZSTD_CONTENTSIZE_UNKNOWN || announced == ZSTD_CONTENTSIZE_ERROR)
        announced = (unsigned long long)n * 4;
    for (;;) {
        ZSTD_outBuffer out;
        size_t ret;
        if ((st = tl_out_reserve(o, tl_out_start(announced, n, 4096), err)) != TL_OK) break;
        out.dst = o->data;
        out.size = o->cap;
        out.pos = o->len;
        ret = ZSTD_decompressStream(d, &out, &in);
        o->len = out.pos;
        if (ZSTD_isError(ret)) {
            if (ZSTD_getErrorCode(ret) == ZSTD_error_memory_allocation) {
                st = tl_error_oom(err);
            } else {
                st = tl_error(err, TL_ERR_DATA, "%s: corrupt zstd data in the block "
                              "or frame at byte %zu: %s",
                              tl_quote_name(name).s, in.pos, ZSTD_getErrorName(ret));
            }
            break;
        }
        if (ret == 0) {
            if (in.pos == in.size) break; /* the last frame ended */
            continue;                     /* the next frame */
        }
        if (in.pos == in.size && out.pos < out.size) {
            st = tl_error(err, TL_ERR_DATA,
                          "%s: truncated zstd stream: it ends at byte %zu, "
                          "inside a frame", tl_quote_name(name).s, n);
            break;
        }
    }
    ZSTD_freeDCtx(d);
    return st;
}

/* ------------------------------------------------------------ writing */

/* See compress_impl.h: a checksummed frame at z->level, the context
 * made once and reset for another output. */
TlStatus tl_zstd_start(TlCompressor *z, TlError *err)
{
    if (!z->cc) {
        z->cc = ZSTD_createCCtx_advanced(tl_zs_mem);
        if (!z->cc) return tl_error_oom(err);
    } else {
        ZSTD_CCtx_reset(z->cc, ZSTD_reset_session_only);
    }
    if (ZSTD_isError(ZSTD_CCtx_setParameter(z->cc, ZSTD_c_compressionLevel, z->level)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(z->cc, ZSTD_c_checksumFlag, 1)))
        return tl_error(err, TL_ERR_USAGE, "zstd: cannot set level %d", z->level);
    return TL_OK;
}

/* See compress_impl.h. */
TlStatus tl_zstd_write(TlCompressor *z, const uint8_t *p, size_t n, bool finish,
                       TlEmitFn emit, void *ctx, TlError *err)
{
    ZSTD_inBuffer in = {p, n, 0};
    for (;;) {
        ZSTD_outBuffer out = {z->out, TL_OUT_CHUNK, 0};
        size_t rem = ZSTD_compressStream2(z->cc, &out, &in,
                                          finish ? ZSTD_e_end : ZSTD_e_continue);
        if (ZSTD_isError(rem)) {
            if (ZSTD_getErrorCode(rem) == ZSTD_error_memory_allocation)
                return tl_error_oom(err);
            return tl_error(err, TL_ERR_DATA, "zstd compression failed: %s",
                            ZSTD_getErrorName(rem));
        }
        if (out.pos) TL_TRY(emit(ctx, z->out, out.pos, err));
        if (finish ? rem == 0 : in.pos == in.size) return TL_OK;
    }
}
