/*
 * compress.h -- gzip and zstd streams under any input or output format.
 *
 * Reading: tl_decompress turns a whole compressed buffer into one owned
 * buffer of its decompressed bytes (concatenated gzip members and
 * multi-frame zstd are read to the end).  Inputs of 1 MiB or more
 * decompressed are streamed instead (compress/stream.c): a thread of its
 * own fills the buffer while readers parse what is ready, in bounded
 * memory (input.h, tl_input_wait).  The implementation is the folder
 * formats/compress/: one file per codec (gzip.c, zstd.c), what they share
 * (compress.c) and the stream thread (stream.c, stream_pages.c).  tl_input_decompress is the hook
 * tl_input_load calls: it picks the compression by the path's suffix
 * (".gz", ".zst") or, for standard input and unknown suffixes, by magic
 * bytes, and swaps the raw buffer for the decompressed one.
 *
 * Writing: a TlCompressor turns the bytes a writer produces into a gzip or
 * zstd stream, handing compressed chunks to an emit callback (the sink).
 *
 * Errors are TL_ERR_DATA naming the input and the byte offset in the
 * compressed stream where the problem shows ("\"x.csv.gz\": corrupt gzip
 * data at byte 57: invalid block type"); a truncated stream is an error,
 * never a silently short result.
 */
#ifndef TL_COMPRESS_H
#define TL_COMPRESS_H

#include "input.h"

typedef enum TlCompression {
    TL_COMP_NONE = 0,
    TL_COMP_GZIP,
    TL_COMP_ZSTD,
} TlCompression;

/* "gz"/"gzip" -> TL_COMP_GZIP, "zst"/"zstd" -> TL_COMP_ZSTD, else NONE. */
TlCompression tl_compression_from_name(const char *name);
/* The compression whose magic bytes start p[0..n), or TL_COMP_NONE. */
TlCompression tl_compression_sniff(const uint8_t *p, size_t n);
/* "gzip" / "zstd" / "none". */
const char *tl_compression_name(TlCompression c);

/* Decompress all of src[0..n) (a gzip or zstd stream) into a new owned
 * buffer *out, counted as held in `in` until released (NULL: not
 * counted).  name is used in messages.  Errors: TL_ERR_DATA (corrupt or
 * truncated, with the byte offset), TL_ERR_OOM. */
TlStatus tl_decompress(TlInputs *in, TlCompression c, const char *name,
                       const uint8_t *src, size_t n, TlBuf **out, TlError *err);

/* The tl_input_load hook: when path ("-" = standard input) names a
 * compressed input (suffix, else magic bytes for stdin and unknown
 * suffixes), replace *buf (released) with its decompressed bytes.
 * On error *buf is released and set to NULL. */
TlStatus tl_input_decompress(const TlCtx *ctx, const char *path, TlBuf **buf,
                             TlError *err);
/* Wait until every streamed input of the run (ctx's, formats/compress/stream.c) is
 * decompressed to its end; the first that failed gives its error
 * (TL_ERR_DATA "...truncated/corrupt ... at byte N").  For the end of a run
 * that may have stopped reading early: lib/run calls it before the
 * writer's finish.  ctx NULL or without inputs: nothing to wait for. */
TlStatus tl_input_check_streams(const TlCtx *ctx, TlError *err);
/* Decompressed bytes held in memory now and the most at once, over every
 * input of ctx's run (whole buffers, and streams' pages until given
 * back); zeros without inputs. */
void tl_decompressed_held(const TlCtx *ctx, int64_t *now, int64_t *peak);
/* Drop the run's cached last decompressed file. */
void tl_compress_cache_free(const TlCtx *ctx);

/* ------------------------------------------------------------- writing */

/* Where a compressor's output goes: return TL_OK or fill err. */
typedef TlStatus (*TlEmitFn)(void *ctx, const uint8_t *data, size_t n,
                             TlError *err);

typedef struct TlCompressor TlCompressor;

/* level 0: the format's default (gzip 6, zstd 3).  Valid levels: gzip 1-9,
 * zstd 1-22 (tl_compress_level_check). */
TlStatus tl_compressor_new(TlCompression c, int level, TlCompressor **out,
                           TlError *err);
/* Check a --compress-level for c: TL_ERR_USAGE naming the valid range. */
TlStatus tl_compress_level_check(TlCompression c, int level, TlError *err);
/* Compress data[0..n); finish ends the stream (trailer, checksum).  Output
 * chunks go to emit(ctx, ...). */
TlStatus tl_compressor_write(TlCompressor *z, const void *data, size_t n,
                             bool finish, TlEmitFn emit, void *ctx,
                             TlError *err);
/* Start a new stream (a restart discarded the output). */
TlStatus tl_compressor_reset(TlCompressor *z, TlError *err);
void tl_compressor_free(TlCompressor *z); /* NULL-safe */

/* Read pipe fd (standard input, a FIFO) by a thread of its own while
 * readers parse what came (TlCtx.stream_pipes: a run whose output streams
 * with fixed types): *out a stream of unknown size, ended by the pipe's
 * end, whose bytes all stay (window SIZE_MAX: none is given back, as with a
 * pipe read whole).  A pipe that ends within its first bytes, or starts
 * with gzip's or zstd's magic bytes (then decompressed whole, as before),
 * is read whole into an ordinary buffer instead.  own: fd is the
 * stream's, closed with it (or here, when read whole).  Errors: TL_ERR_IO
 * "cannot read NAME: ...", TL_ERR_OOM. */
TlStatus tl_stream_pipe(const TlCtx *ctx, int fd, bool own, const char *name, TlBuf **out,
                        TlError *err);

#endif
