/*
 * compress_impl.h -- what the files of formats/compress/ share behind
 * formats/compress.h:
 *
 *   compress.c   names and magic bytes, the whole-buffer path's output
 *                buffer and dispatch, the input hook and the restart
 *                cache, the count of bytes held, the compressor object
 *   gzip.c       zlib: inflate a whole buffer, deflate an output
 *   zstd.c       libzstd: the same
 *   stream.c     decompression by a thread while readers parse (and
 *                stream_pages.c: the readers' side; stream_impl.h)
 *
 * Parquet's page codecs (formats/parquet/) take the allocators below.
 */
#ifndef TL_COMPRESS_IMPL_H
#define TL_COMPRESS_IMPL_H

#include "../compress.h"
#include "../input_impl.h"

#include <pthread.h>
#include <zlib.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_customMem: allocations through tl_malloc */
#include <zstd.h>
#include <zstd_errors.h>

/* zlib's and libzstd's allocations go through tl_malloc (TALLY_FAIL_ALLOC
 * reaches them). */
voidpf tl_z_alloc(voidpf opaque, uInt items, uInt size);
void tl_z_free(voidpf opaque, voidpf p);
extern const ZSTD_customMem tl_zs_mem;
/* True when p[0..n) holds only zero bytes (gzip's tar-style padding). */
bool tl_all_zero(const uint8_t *p, size_t n);

/* Start decompressing raw (c: gzip or zstd) on a thread of its own
 * (stream.c); *out NULL and TL_OK when the input is better decompressed
 * whole (small, the tuning's no_stream, no room to map): the caller then calls
 * tl_decompress.  raw is retained on success. */
TlStatus tl_stream_start(const TlCtx *ctx, TlCompression c, const char *name,
                         TlBuf *raw, TlBuf **out, TlError *err);
/* b is a stream some of whose pages were given back (a reopen must
 * decompress it anew). */
bool tl_stream_holed(const TlBuf *b);
/* b is the restart cache's buffer and nothing else holds it
 * (no reader of this attempt: tl_input_check_streams passes it over). */
bool tl_compress_cache_only(const TlInputs *in, const TlBuf *b);

/* The counter of decompressed bytes held in memory (compress.h,
 * tl_decompressed_held): add n (negative: given back).  in NULL: none. */
void tl_held_add(TlInputs *in, int64_t n);

/* ------------------------------------------- the whole-buffer path */

#define TL_OUT_CHUNK ((size_t)1 << 20) /* compressor output chunk */
#define TL_MIN_START ((size_t)1 << 16) /* smallest decompression buffer */

/* A whole buffer's decompressed bytes as they grow. */
typedef struct TlOutBuf {
    uint8_t *data;
    size_t len, cap;
} TlOutBuf;

/* Room for more output in o: the first buffer of `start` bytes (at
 * least TL_MIN_START), then doubled.  Errors: TL_ERR_OOM. */
TlStatus tl_out_reserve(TlOutBuf *o, size_t start, TlError *err);
/* The initial buffer size from an announced size, capped by what n
 * compressed bytes can expand to (ratio), plus slack for the last call. */
size_t tl_out_start(uint64_t announced, size_t n, size_t ratio);
/* All of src[0..n) decompressed into o (gzip.c, zstd.c); name is the
 * input's, for messages.  Errors: TL_ERR_DATA (corrupt, truncated, data
 * after the stream, with the byte offset), TL_ERR_OOM. */
TlStatus tl_gunzip(const char *name, const uint8_t *src, size_t n, TlOutBuf *o,
                   TlError *err);
TlStatus tl_unzstd(const char *name, const uint8_t *src, size_t n, TlOutBuf *o,
                   TlError *err);

/* --------------------------------------------------------- writing */

struct TlCompressor {
    TlCompression c;
    int level;
    z_stream z;
    bool z_ready;
    ZSTD_CCtx *cc;
    uint8_t *out;
};

/* Start (or, made already, restart) z's stream: gzip.c, zstd.c. */
TlStatus tl_gzip_start(TlCompressor *z, TlError *err);
TlStatus tl_zstd_start(TlCompressor *z, TlError *err);
/* Compress p[0..n) into z's stream, finish ending it; chunks to emit. */
TlStatus tl_gzip_write(TlCompressor *z, const uint8_t *p, size_t n, bool finish,
                       TlEmitFn emit, void *ctx, TlError *err);
TlStatus tl_zstd_write(TlCompressor *z, const uint8_t *p, size_t n, bool finish,
                       TlEmitFn emit, void *ctx, TlError *err);

#endif
