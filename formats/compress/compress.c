/*
 * compress.c -- what gzip and zstd share (formats/compress.h): their names
 * and magic bytes, the whole-buffer path, the input hook with its restart
 * cache, the count of bytes held, and the compressor object.  Each
 * codec's own calls are in its file (gzip.c, zstd.c).
 *
 * Every format reader sees "the input is one buffer" (input.h).  The
 * whole-buffer path below decompresses all of it up front into one owned
 * buffer, at the cost of its decompressed size in memory; large inputs
 * are streamed instead (stream.c).
 *
 *   raw TlBuf --suffix .gz/.zst, or magic bytes for "-" and unknown
 *               suffixes--> inflate / ZSTD_decompressStream into a growing
 *               buffer --> TlBuf (owned)
 *
 * The output buffer starts at the size the stream announces (gzip's ISIZE
 * of the last member, zstd's frame content size), capped by the format's
 * maximum ratio, so the common case needs no regrowth; it doubles
 * otherwise.  Restarts (format.h) reopen inputs: the last decompressed
 * file is cached (keyed by path, size and an XXH3 hash of the compressed
 * bytes) so a restart does not decompress it again.
 *
 * Streaming: inputs of 1 MiB or more decompressed are handed out while a
 * thread of their own decompresses them, in bounded memory (stream.c);
 * the whole-buffer path serves the small ones, TALLY_NO_STREAM=1, and the
 * messages of corrupt streams.
 *
 * Memory held: every decompressed byte in memory, a whole buffer's or a
 * stream's until given back, is counted in the run's inputs (TlInputs,
 * tl_decompressed_held, --stats); the memory budget will charge it there.
 *
 * Writing: a TlCompressor wraps deflate (gzip header, level 1-9) or
 * ZSTD_compressStream2 (checksummed frame, level 1-22) and hands the
 * compressed chunks to an emit callback.
 */
#include "compress_impl.h"
#include "../format.h" /* tl_format_from_path */

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <xxhash.h>

/* ------------------------------------------------------------- naming */

/* See compress.h. */
TlCompression tl_compression_from_name(const char *name)
{
    if (!name) return TL_COMP_NONE;
    if (strcasecmp(name, "gz") == 0 || strcasecmp(name, "gzip") == 0)
        return TL_COMP_GZIP;
    if (strcasecmp(name, "zst") == 0 || strcasecmp(name, "zstd") == 0)
        return TL_COMP_ZSTD;
    return TL_COMP_NONE;
}

/* See compress.h.  gzip: 1f 8b; zstd: 28 b5 2f fd, or a skippable frame
 * (5? 2a 4d 18). */
TlCompression tl_compression_sniff(const uint8_t *p, size_t n)
{
    if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b) return TL_COMP_GZIP;
    if (n >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd)
        return TL_COMP_ZSTD;
    if (n >= 4 && (p[0] & 0xf0) == 0x50 && p[1] == 0x2a && p[2] == 0x4d &&
        p[3] == 0x18)
        return TL_COMP_ZSTD;
    return TL_COMP_NONE;
}

/* See compress.h. */
const char *tl_compression_name(TlCompression c)
{
    return c == TL_COMP_GZIP ? "gzip" : c == TL_COMP_ZSTD ? "zstd" : "none";
}

/* ------------------------------------------------------- output buffer */

/* See compress_impl.h. */
TlStatus tl_out_reserve(TlOutBuf *o, size_t start, TlError *err)
{
    size_t cap;
    uint8_t *g;
    if (o->len < o->cap) return TL_OK;
    if (!o->data) {
        cap = start < TL_MIN_START ? TL_MIN_START : start;
    } else {
        if (o->cap > SIZE_MAX / 2) return tl_error_oom(err);
        cap = o->cap * 2;
    }
    g = tl_realloc(o->data, cap);
    if (!g) return tl_error_oom(err);
    o->data = g;
    o->cap = cap;
    return TL_OK;
}

/* See compress_impl.h. */
size_t tl_out_start(uint64_t announced, size_t n, size_t ratio)
{
    uint64_t cap = (uint64_t)n * ratio + TL_MIN_START;
    if (announced > cap) announced = cap;
    if (announced > SIZE_MAX / 2) announced = SIZE_MAX / 2;
    return (size_t)announced + TL_MIN_START;
}

/* A whole buffer's release: its bytes leave the held count of its run's
 * inputs (owner; NULL: none). */
static void whole_release(void *owner, uint8_t *data, size_t size)
{
    tl_held_add(owner, -(int64_t)size);
    tl_free(data);
}

static TlStatus out_finish(TlInputs *in, TlOutBuf *o, TlBuf **out, TlError *err)
{
    if (o->cap - o->len > TL_OUT_CHUNK) {
        uint8_t *g = tl_realloc(o->data, o->len ? o->len : 1);
        if (g) {
            o->data = g;
            o->cap = o->len ? o->len : 1;
        }
    }
    *out = tl_buf_wrap(o->data, o->len, whole_release, in);
    if (!*out) return tl_error_oom(err);
    o->data = NULL;
    tl_held_add(in, (int64_t)(*out)->size);
    return TL_OK;
}

/* See compress.h. */
TlStatus tl_decompress(TlInputs *in, TlCompression c, const char *name,
                       const uint8_t *src, size_t n, TlBuf **out, TlError *err)
{
    TlOutBuf o = {0};
    TlStatus st;
    *out = NULL;
    if (n >= 4 && tl_compression_sniff(src, n) != c)
        return tl_error(err, TL_ERR_DATA,
                        "%s: not %s data: no %s magic number at byte 0", tl_quote_name(name).s,
                        tl_compression_name(c), tl_compression_name(c));
    if (c == TL_COMP_GZIP) st = tl_gunzip(name, src, n, &o, err);
    else if (c == TL_COMP_ZSTD) st = tl_unzstd(name, src, n, &o, err);
    else return tl_error(err, TL_ERR_USAGE, "internal: no compression to undo");
    if (st == TL_OK) st = out_finish(in, &o, out, err);
    tl_free(o.data);
    return st;
}

/* ------------------------------------------------------ the run's inputs */

/* See compress_impl.h. */
bool tl_compress_cache_only(const TlInputs *in, const TlBuf *b)
{
    return in && in->cache.data == b && __atomic_load_n(&b->refcount, __ATOMIC_ACQUIRE) == 1;
}

/* See compress_impl.h. */
void tl_held_add(TlInputs *in, int64_t n)
{
    if (!in) return;
    int64_t now = __atomic_add_fetch(&in->held, n, __ATOMIC_RELAXED);
    int64_t peak = __atomic_load_n(&in->held_peak, __ATOMIC_RELAXED);
    while (now > peak && !__atomic_compare_exchange_n(&in->held_peak, &peak, now, true,
                                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

/* See compress.h. */
void tl_decompressed_held(const TlCtx *ctx, int64_t *now, int64_t *peak)
{
    TlInputs *in = ctx ? ctx->inputs : NULL;
    if (now) *now = in ? __atomic_load_n(&in->held, __ATOMIC_RELAXED) : 0;
    if (peak) *peak = in ? __atomic_load_n(&in->held_peak, __ATOMIC_RELAXED) : 0;
}

/* ------------------------------------------------------- the input hook */


/* See compress.h. */
void tl_compress_cache_free(const TlCtx *ctx)
{
    TlInputs *in = ctx ? ctx->inputs : NULL;
    if (!in) return;
    tl_buf_release(in->cache.data);
    tl_free(in->cache.path);
    memset(&in->cache, 0, sizeof in->cache);
}

/* See compress.h. */
TlStatus tl_input_decompress(const TlCtx *ctx, const char *path, TlBuf **buf,
                             TlError *err)
{
    const char *comp = NULL, *fmt = NULL;
    bool is_stdin = strcmp(path, "-") == 0;
    TlInputs *in = ctx ? ctx->inputs : NULL;
    TlCompression c;
    TlBuf *raw = *buf, *res = NULL;
    size_t raw_size = raw->size;
    uint64_t hash;
    TlStatus st;
    if (!is_stdin) fmt = tl_format_from_path(path, &comp);
    c = tl_compression_from_name(comp);
    if (c == TL_COMP_NONE && (is_stdin || !fmt))
        c = tl_compression_sniff(raw->data, raw->size);
    if (c == TL_COMP_NONE) return TL_OK;
    hash = is_stdin || !in ? 0 : XXH3_64bits(raw->data, raw->size);
    if (!is_stdin && in && in->cache.data && strcmp(in->cache.path, path) == 0 &&
        in->cache.raw_size == raw->size && in->cache.raw_hash == hash &&
        !tl_stream_holed(in->cache.data)) {
        tl_buf_release(raw);
        /* a reader still holds it: two readers of one stream, whose pages
         * therefore stay (tl_input_drop_read) */
        if (__atomic_load_n(&in->cache.data->refcount, __ATOMIC_ACQUIRE) > 1)
            tl_input_share(in->cache.data);
        *buf = tl_buf_retain(in->cache.data);
        return TL_OK;
    }
    st = tl_stream_start(ctx, c, tl_input_name(path), raw, &res, err);
    if (st == TL_OK && !res)
        st = tl_decompress(in, c, tl_input_name(path), raw->data, raw->size, &res, err);
    tl_buf_release(raw);
    *buf = NULL;
    if (st != TL_OK) return st;
    if (!is_stdin && in) {
        char *p = tl_strdup(path);
        if (p) {
            tl_compress_cache_free(ctx);
            in->cache.path = p;
            in->cache.raw_size = raw_size;
            in->cache.raw_hash = hash;
            in->cache.data = tl_buf_retain(res);
        }
    }
    *buf = res;
    return TL_OK;
}

/* -------------------------------------------------------------- writing */

/* See compress.h. */
TlStatus tl_compress_level_check(TlCompression c, int level, TlError *err)
{
    if (c == TL_COMP_GZIP && (level < 1 || level > 9))
        return tl_error(err, TL_ERR_USAGE,
                        "--compress-level: gzip levels are 1 to 9, got %d", level);
    if (c == TL_COMP_ZSTD && (level < 1 || level > ZSTD_maxCLevel()))
        return tl_error(err, TL_ERR_USAGE,
                        "--compress-level: zstd levels are 1 to %d, got %d",
                        ZSTD_maxCLevel(), level);
    return TL_OK;
}

static TlStatus compressor_start(TlCompressor *z, TlError *err)
{
    return z->c == TL_COMP_GZIP ? tl_gzip_start(z, err) : tl_zstd_start(z, err);
}

/* See compress.h. */
TlStatus tl_compressor_new(TlCompression c, int level, TlCompressor **out,
                           TlError *err)
{
    TlCompressor *z;
    *out = NULL;
    if (c != TL_COMP_GZIP && c != TL_COMP_ZSTD)
        return tl_error(err, TL_ERR_USAGE, "internal: no compression chosen");
    if (level == 0) level = c == TL_COMP_GZIP ? 6 : 3;
    TL_TRY(tl_compress_level_check(c, level, err));
    z = tl_calloc(1, sizeof *z);
    if (!z) return tl_error_oom(err);
    z->c = c;
    z->level = level;
    z->out = tl_malloc(TL_OUT_CHUNK);
    if (!z->out) {
        tl_free(z);
        return tl_error_oom(err);
    }
    if (compressor_start(z, err) != TL_OK) {
        tl_compressor_free(z);
        return err->code;
    }
    *out = z;
    return TL_OK;
}

/* See compress.h. */
TlStatus tl_compressor_write(TlCompressor *z, const void *data, size_t n,
                             bool finish, TlEmitFn emit, void *ctx, TlError *err)
{
    if (z->c == TL_COMP_GZIP) return tl_gzip_write(z, data, n, finish, emit, ctx, err);
    return tl_zstd_write(z, data, n, finish, emit, ctx, err);
}

/* See compress.h. */
TlStatus tl_compressor_reset(TlCompressor *z, TlError *err)
{
    return compressor_start(z, err);
}

/* See compress.h. */
void tl_compressor_free(TlCompressor *z)
{
    if (!z) return;
    if (z->z_ready) deflateEnd(&z->z);
    ZSTD_freeCCtx(z->cc);
    tl_free(z->out);
    tl_free(z);
}
