/*
 * compress_impl.h -- what compress.c (the whole-buffer path, the input
 * hook, writing) and stream.c (decompression by a thread while readers
 * parse) share behind compress.h.
 */
#ifndef TL_COMPRESS_IMPL_H
#define TL_COMPRESS_IMPL_H

#include "compress.h"

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
/* compress.c: b is the restart cache's buffer and nothing else holds it
 * (no reader of this attempt: tl_input_check_streams passes it over). */
bool tl_compress_cache_only(const TlInputs *in, const TlBuf *b);

/* The counter of decompressed bytes held in memory (compress.h,
 * tl_decompressed_held): add n (negative: given back).  in NULL: none. */
void tl_held_add(TlInputs *in, int64_t n);

struct Stream;
/* See compress.h. */
struct TlInputs {
    TlBuf *stdin_buf;          /* standard input, or NULL (input.c) */
    struct {                   /* the last decompressed file (compress.c) */
        char *path;
        size_t raw_size;
        uint64_t raw_hash;
        TlBuf *data;
    } cache;
    int64_t held, held_peak;   /* atomic: decompressed bytes in memory */
    pthread_mutex_t streams_mu;
    struct Stream *streams;    /* the run's streams (stream.c) */
};

#endif
