/*
 * codec.c -- a page's bytes decompressed, exactly to the size its header
 * announces.
 *
 * Every codec writes into the caller's buffer of uncompressed_page_size
 * bytes and must fill it exactly: a stream that ends short or would run
 * past it is corrupt, and says so.  The libraries come from Debian's -dev
 * packages, linked from their static archives (Makefile), so a run that
 * reads no Parquet pays nothing for them at start-up:
 *
 *   SNAPPY   libsnappy, through its C API (snappy-c.h): the stream's own
 *            length header is checked against the page header first
 *   GZIP     zlib, gzip or zlib framing; concatenated members are read on
 *   ZSTD     libzstd, one decompression context per reader; several frames
 *   LZ4_RAW  liblz4's block format
 *   LZ4      the deprecated codec: Hadoop's framing (blocks, each with
 *            big-endian decompressed and compressed sizes) as parquet-mr
 *            wrote it, else a bare LZ4 block as old Arrow releases wrote it
 *   BROTLI   libbrotlidec, streamed into the buffer
 *
 * zlib, zstd and brotli allocate through tl_malloc (the one allocator);
 * snappy and lz4 decode into the buffer without allocating.
 */
#include "parquet.h"

#include <stdarg.h>
#include <stdio.h>

#include <brotli/decode.h>
#include <lz4.h>
#include <snappy-c.h>
#include "../compress/compress_impl.h" /* zlib and zstd allocating through tl_malloc */

struct PqCodecs {
    ZSTD_DCtx *zstd; /* made at the first ZSTD page */
};

TlStatus pq_codecs_new(PqCodecs **out, TlError *err)
{
    *out = tl_calloc(1, sizeof **out);
    return *out ? TL_OK : tl_error_oom(err);
}

void pq_codecs_free(PqCodecs *c)
{
    if (!c) return;
    if (c->zstd) ZSTD_freeDCtx(c->zstd);
    tl_free(c);
}

const char *pq_codec_name(int codec, char *buf, size_t cap)
{
    static const char *const n[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO",
                                    "BROTLI", "LZ4", "ZSTD", "LZ4_RAW"};
    if (codec >= 0 && codec <= PQ_CODEC_LZ4_RAW) return n[codec];
    snprintf(buf, cap, "codec %d", codec);
    return buf;
}

static TlStatus why_is(char *why, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static TlStatus why_is(char *why, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
    return TL_ERR_DATA;
}

static TlStatus gunzip(const uint8_t *src, size_t n, uint8_t *dst, size_t dst_n, char *why,
                       size_t cap)
{
    z_stream z;
    int rc;
    size_t done = 0;
    memset(&z, 0, sizeof z);
    z.zalloc = tl_z_alloc;
    z.zfree = tl_z_free;
    if (inflateInit2(&z, 15 + 32) != Z_OK) return TL_ERR_OOM;
    z.next_in = (Bytef *)(uintptr_t)src;
    for (;;) {
        size_t in_left = n - (size_t)(z.next_in - src);
        uInt in_now = in_left > UINT_MAX ? UINT_MAX : (uInt)in_left;
        size_t out_left = dst_n - done;
        uInt out_now = out_left > UINT_MAX ? UINT_MAX : (uInt)out_left;
        Bytef *before = z.next_in;
        z.avail_in = in_now;
        z.next_out = dst + done;
        z.avail_out = out_now;
        rc = inflate(&z, Z_NO_FLUSH);
        done += out_now - z.avail_out;
        if (rc == Z_MEM_ERROR) {
            inflateEnd(&z);
            return TL_ERR_OOM;
        }
        if (rc == Z_STREAM_END) {
            /* another member may follow (concatenated gzip) */
            if ((size_t)(z.next_in - src) < n && done < dst_n) {
                if (inflateReset(&z) != Z_OK) break;
                continue;
            }
            break;
        }
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
            snprintf(why, cap, "corrupt gzip data (%s)", z.msg ? z.msg : "invalid stream");
            inflateEnd(&z);
            return TL_ERR_DATA;
        }
        if (z.next_in == before && out_now == z.avail_out) {
            inflateEnd(&z);
            if (done == dst_n)
                return why_is(why, cap, "gzip data longer than the page's %zu bytes",
                              dst_n);
            return why_is(why, cap, "truncated gzip data (%zu of %zu bytes)", done, dst_n);
        }
    }
    inflateEnd(&z);
    if (done != dst_n)
        return why_is(why, cap, "gzip data gives %zu bytes, the page header says %zu", done,
                      dst_n);
    return TL_OK;
}

/* Hadoop's LZ4 framing; false when the bytes are not framed that way. */
static bool lz4_hadoop(const uint8_t *src, size_t n, uint8_t *dst, size_t dst_n)
{
    size_t done = 0;
    while (n > 0) {
        uint32_t raw, comp;
        int got;
        if (n < 8) return false;
        raw = (uint32_t)src[0] << 24 | (uint32_t)src[1] << 16 | (uint32_t)src[2] << 8 | src[3];
        comp = (uint32_t)src[4] << 24 | (uint32_t)src[5] << 16 | (uint32_t)src[6] << 8 | src[7];
        src += 8;
        n -= 8;
        if (comp > n || raw > dst_n - done || comp > INT32_MAX || raw > INT32_MAX) return false;
        got = LZ4_decompress_safe((const char *)src, (char *)dst + done, (int)comp, (int)raw);
        if (got < 0 || (uint32_t)got != raw) return false;
        done += raw;
        src += comp;
        n -= comp;
    }
    return done == dst_n;
}

static TlStatus unbrotli(const uint8_t *src, size_t n, uint8_t *dst, size_t dst_n, char *why,
                         size_t cap)
{
    BrotliDecoderState *s =
        BrotliDecoderCreateInstance(tl_zs_mem.customAlloc, tl_zs_mem.customFree, NULL);
    size_t in_left = n, out_left = dst_n;
    const uint8_t *in = src;
    uint8_t *out = dst;
    BrotliDecoderResult rc;
    if (!s) return TL_ERR_OOM;
    rc = BrotliDecoderDecompressStream(s, &in_left, &in, &out_left, &out, NULL);
    if (rc == BROTLI_DECODER_RESULT_ERROR) {
        BrotliDecoderErrorCode e = BrotliDecoderGetErrorCode(s);
        BrotliDecoderDestroyInstance(s);
        if (e <= BROTLI_DECODER_ERROR_ALLOC_CONTEXT_MODES && e >= BROTLI_DECODER_ERROR_UNREACHABLE)
            return TL_ERR_OOM;
        snprintf(why, cap, "corrupt brotli data (%s)", BrotliDecoderErrorString(e));
        return TL_ERR_DATA;
    }
    BrotliDecoderDestroyInstance(s);
    if (rc == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT)
        return why_is(why, cap, "brotli data longer than the page's %zu bytes", dst_n);
    if (rc != BROTLI_DECODER_RESULT_SUCCESS)
        return why_is(why, cap, "truncated brotli data (%zu of %zu bytes)", dst_n - out_left,
                      dst_n);
    if (out_left)
        return why_is(why, cap, "brotli data gives %zu bytes, the page header says %zu",
                      dst_n - out_left, dst_n);
    return TL_OK;
}

TlStatus pq_decompress(PqCodecs *c, int codec, const uint8_t *src, size_t n, uint8_t *dst,
                       size_t dst_n, char *why, size_t cap)
{
    size_t len;
    int got;
    switch (codec) {
    case PQ_CODEC_UNCOMPRESSED:
        if (n != dst_n)
            return why_is(why, cap, "an uncompressed page of %zu bytes whose header says %zu",
                          n, dst_n);
        memcpy(dst, src, n);
        return TL_OK;
    case PQ_CODEC_SNAPPY:
        if (snappy_uncompressed_length((const char *)src, n, &len) != SNAPPY_OK)
            return why_is(why, cap, "corrupt snappy data (no valid length header)");
        if (len != dst_n)
            return why_is(why, cap, "snappy data of %zu bytes, the page header says %zu", len,
                          dst_n);
        if (snappy_uncompress((const char *)src, n, (char *)dst, &len) != SNAPPY_OK ||
            len != dst_n)
            return why_is(why, cap, "corrupt snappy data");
        return TL_OK;
    case PQ_CODEC_GZIP:
        return gunzip(src, n, dst, dst_n, why, cap);
    case PQ_CODEC_ZSTD:
        if (!c->zstd) {
            c->zstd = ZSTD_createDCtx_advanced(tl_zs_mem);
            if (!c->zstd) return TL_ERR_OOM;
        }
        len = ZSTD_decompressDCtx(c->zstd, dst, dst_n, src, n);
        if (ZSTD_isError(len)) {
            if (ZSTD_getErrorCode(len) == ZSTD_error_memory_allocation) return TL_ERR_OOM;
            if (ZSTD_getErrorCode(len) == ZSTD_error_dstSize_tooSmall)
                return why_is(why, cap, "zstd data longer than the page's %zu bytes",
                              dst_n);
            snprintf(why, cap, "corrupt zstd data (%s)", ZSTD_getErrorName(len));
            return TL_ERR_DATA;
        }
        if (len != dst_n)
            return why_is(why, cap, "zstd data gives %zu bytes, the page header says %zu", len,
                          dst_n);
        return TL_OK;
    case PQ_CODEC_LZ4_RAW:
    case PQ_CODEC_LZ4:
        if (n > INT32_MAX || dst_n > INT32_MAX)
            return why_is(why, cap, "an LZ4 page of %zu bytes (at most %zu)", n > dst_n ? n : dst_n,
                          (size_t)INT32_MAX);
        if (codec == PQ_CODEC_LZ4 && lz4_hadoop(src, n, dst, dst_n)) return TL_OK;
        got = LZ4_decompress_safe((const char *)src, (char *)dst, (int)n, (int)dst_n);
        if (got < 0) return why_is(why, cap, "corrupt lz4 data");
        if ((size_t)got != dst_n)
            return why_is(why, cap, "lz4 data gives %zu bytes, the page header says %zu",
                          (size_t)got, dst_n);
        return TL_OK;
    case PQ_CODEC_BROTLI:
        return unbrotli(src, n, dst, dst_n, why, cap);
    default: {
        char b[32];
        snprintf(why, cap, "the %s codec is not supported", pq_codec_name(codec, b, sizeof b));
        return TL_ERR_DATA;
    }
    }
}
