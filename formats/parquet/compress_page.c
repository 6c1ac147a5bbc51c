/*
 * compress_page.c -- a page's bytes compressed by the codec the user chose
 * (--parquet-compression; codec.c reads them back):
 *
 *   ZSTD     one frame, level 1-22 (default 3), no checksum (the format
 *            has its own page CRC, which tally does not write)
 *   SNAPPY   the raw snappy format (snappy-c.h); no level
 *   GZIP     one gzip member (deflate, level 1-9, default 6)
 *   LZ4_RAW  an LZ4 block: LZ4_compress_default, or LZ4HC at the level
 *            given (1-12)
 *
 * A PqCctx is one thread's state (zstd's context is large and costly to
 * make, so it lives as long as the writer: writer.c keeps a free list and
 * hands one to each column task).  Every codec is deterministic for the
 * same bytes and level, so pages do not depend on which thread made them.
 */
#include "pqwrite.h"

#include <lz4.h>
#include <lz4hc.h>
#include <snappy-c.h>
#include "../compress/compress_impl.h" /* zlib and zstd allocating through tl_malloc */

struct PqCctx {
    int codec, level;
    ZSTD_CCtx *z;
};

PqCctx *pq_cctx_new(int codec, int level)
{
    PqCctx *c = tl_calloc(1, sizeof *c);
    if (!c) return NULL;
    c->codec = codec;
    c->level = level;
    if (codec == PQ_CODEC_ZSTD) {
        c->z = ZSTD_createCCtx_advanced(tl_zs_mem);
        if (!c->z || ZSTD_isError(ZSTD_CCtx_setParameter(c->z, ZSTD_c_compressionLevel,
                                                         level ? level : 3))) {
            pq_cctx_free(c);
            return NULL;
        }
    }
    return c;
}

void pq_cctx_free(PqCctx *c)
{
    if (!c) return;
    if (c->z) ZSTD_freeCCtx(c->z);
    tl_free(c);
}

static bool gzip(int level, const uint8_t *src, size_t n, PqBytes *out)
{
    z_stream z;
    uLong bound;
    int rc;
    memset(&z, 0, sizeof z);
    z.zalloc = tl_z_alloc;
    z.zfree = tl_z_free;
    if (n > UINT_MAX / 2) return false;
    if (deflateInit2(&z, level ? level : 6, Z_DEFLATED, 16 + MAX_WBITS, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return false;
    bound = deflateBound(&z, (uLong)n);
    if (!pq_bytes_reserve(out, bound)) {
        deflateEnd(&z);
        return false;
    }
    z.next_in = (Bytef *)(uintptr_t)src;
    z.avail_in = (uInt)n;
    z.next_out = out->p + out->len;
    z.avail_out = (uInt)bound;
    rc = deflate(&z, Z_FINISH);
    if (rc == Z_STREAM_END) out->len += bound - z.avail_out;
    deflateEnd(&z);
    return rc == Z_STREAM_END;
}

bool pq_compress(PqCctx *c, const uint8_t *src, size_t n, PqBytes *out)
{
    switch (c->codec) {
    case PQ_CODEC_UNCOMPRESSED:
        pq_bytes_put(out, src, n);
        return !out->oom;
    case PQ_CODEC_ZSTD: {
        size_t bound = ZSTD_compressBound(n), got;
        if (!pq_bytes_reserve(out, bound)) return false;
        got = ZSTD_compress2(c->z, out->p + out->len, bound, src, n);
        if (ZSTD_isError(got)) return false;
        out->len += got;
        return true;
    }
    case PQ_CODEC_SNAPPY: {
        size_t bound = snappy_max_compressed_length(n);
        if (!pq_bytes_reserve(out, bound)) return false;
        if (snappy_compress((const char *)src, n, (char *)out->p + out->len, &bound) != SNAPPY_OK)
            return false;
        out->len += bound;
        return true;
    }
    case PQ_CODEC_GZIP:
        return gzip(c->level, src, n, out);
    case PQ_CODEC_LZ4_RAW: {
        int bound, got;
        if (n > LZ4_MAX_INPUT_SIZE) return false;
        bound = LZ4_compressBound((int)n);
        if (!pq_bytes_reserve(out, (size_t)bound)) return false;
        got = c->level ? LZ4_compress_HC((const char *)src, (char *)out->p + out->len, (int)n,
                                         bound, c->level)
                       : LZ4_compress_default((const char *)src, (char *)out->p + out->len,
                                              (int)n, bound);
        if (got <= 0) return false;
        out->len += (size_t)got;
        return true;
    }
    default:
        return false;
    }
}
