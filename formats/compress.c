/*
 * compress.c -- gzip (zlib) and zstd (libzstd streaming API) streams.
 *
 * Every format reader sees "the input is one buffer" (fmt_impl.h).  The
 * whole-buffer path below decompresses all of it up front into one owned
 * buffer, at the cost of its decompressed size in memory; large inputs
 * are streamed instead (below, "Streaming").
 *
 *   raw TlBuf --suffix .gz/.zst, or magic bytes for "-" and unknown
 *               suffixes--> inflate / ZSTD_decompressStream into a growing
 *               buffer --> TlBuf (owned)
 *
 * gzip: members are read until the input ends (concatenated members, as
 * gzip and BGZF write them); trailing zero bytes (tar-style padding) are
 * ignored, anything else after a member is an error.  zstd: frames are
 * read until the input ends (multi-frame files; skippable frames are
 * skipped by libzstd).  A stream that ends inside a member or frame is
 * "truncated ... at byte N" (N = the compressed size); a decoder error is
 * "corrupt ... at byte N" with N the compressed offset the decoder had
 * reached (zstd: the start of the block or frame that fails, since
 * libzstd consumes input a block, or a whole frame, at a time).  Neither is ever a short result.
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
 * this file's whole-buffer path serves the small ones, TALLY_NO_STREAM=1,
 * and the messages of corrupt streams.
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
#include "fmt_impl.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <xxhash.h>

#define OUT_CHUNK ((size_t)1 << 20)      /* compressor output chunk */
#define MIN_START ((size_t)1 << 16)      /* smallest decompression buffer */

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

typedef struct OutBuf {
    uint8_t *data;
    size_t len, cap;
} OutBuf;

static TlStatus out_reserve(OutBuf *o, size_t start, TlError *err)
{
    size_t cap;
    uint8_t *g;
    if (o->len < o->cap) return TL_OK;
    if (!o->data) {
        cap = start < MIN_START ? MIN_START : start;
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

/* The initial buffer size from an announced size, capped by what n
 * compressed bytes can expand to (ratio), plus slack for the last call. */
static size_t start_size(uint64_t announced, size_t n, size_t ratio)
{
    uint64_t cap = (uint64_t)n * ratio + MIN_START;
    if (announced > cap) announced = cap;
    if (announced > SIZE_MAX / 2) announced = SIZE_MAX / 2;
    return (size_t)announced + MIN_START;
}

/* A whole buffer's release: its bytes leave the held count of its run's
 * inputs (owner; NULL: none). */
static void whole_release(void *owner, uint8_t *data, size_t size)
{
    tl_held_add(owner, -(int64_t)size);
    tl_free(data);
}

static TlStatus out_finish(TlInputs *in, OutBuf *o, TlBuf **out, TlError *err)
{
    if (o->cap - o->len > OUT_CHUNK) {
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

static TlStatus gunzip(const char *name, const uint8_t *src, size_t n, OutBuf *o,
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
        if ((st = out_reserve(o, start_size(isize, n, 1032), err)) != TL_OK) break;
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

const ZSTD_customMem tl_zs_mem = {zs_alloc, zs_free, NULL};

static TlStatus unzstd(const char *name, const uint8_t *src, size_t n, OutBuf *o,
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
        if ((st = out_reserve(o, start_size(announced, n, 4096), err)) != TL_OK) break;
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

/* See compress.h. */
TlStatus tl_decompress(TlInputs *in, TlCompression c, const char *name,
                       const uint8_t *src, size_t n, TlBuf **out, TlError *err)
{
    OutBuf o = {0};
    TlStatus st;
    *out = NULL;
    if (n >= 4 && tl_compression_sniff(src, n) != c)
        return tl_error(err, TL_ERR_DATA,
                        "%s: not %s data: no %s magic number at byte 0", tl_quote_name(name).s,
                        tl_compression_name(c), tl_compression_name(c));
    if (c == TL_COMP_GZIP) st = gunzip(name, src, n, &o, err);
    else if (c == TL_COMP_ZSTD) st = unzstd(name, src, n, &o, err);
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

struct TlCompressor {
    TlCompression c;
    int level;
    z_stream z;
    bool z_ready;
    ZSTD_CCtx *cc;
    uint8_t *out;
};

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
    if (z->c == TL_COMP_GZIP) {
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
    z->out = tl_malloc(OUT_CHUNK);
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

static TlStatus deflate_write(TlCompressor *z, const uint8_t *p, size_t n,
                              bool finish, TlEmitFn emit, void *ctx, TlError *err)
{
    for (;;) {
        size_t in_len = n > UINT_MAX ? UINT_MAX : n;
        bool last = finish && in_len == n;
        int rc;
        z->z.next_in = (Bytef *)(uintptr_t)p;
        z->z.avail_in = (uInt)in_len;
        do {
            z->z.next_out = z->out;
            z->z.avail_out = (uInt)OUT_CHUNK;
            rc = deflate(&z->z, last ? Z_FINISH : Z_NO_FLUSH);
            if (rc == Z_STREAM_ERROR || rc == Z_MEM_ERROR)
                return tl_error(err, TL_ERR_DATA, "gzip compression failed");
            size_t got = OUT_CHUNK - z->z.avail_out;
            if (got) TL_TRY(emit(ctx, z->out, got, err));
        } while (z->z.avail_out == 0 || (last && rc != Z_STREAM_END));
        if (in_len == n) return TL_OK; /* (p may be NULL with n 0: no p + 0) */
        p += in_len;
        n -= in_len;
    }
}

static TlStatus zstd_write(TlCompressor *z, const uint8_t *p, size_t n, bool finish,
                           TlEmitFn emit, void *ctx, TlError *err)
{
    ZSTD_inBuffer in = {p, n, 0};
    for (;;) {
        ZSTD_outBuffer out = {z->out, OUT_CHUNK, 0};
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

/* See compress.h. */
TlStatus tl_compressor_write(TlCompressor *z, const void *data, size_t n,
                             bool finish, TlEmitFn emit, void *ctx, TlError *err)
{
    if (z->c == TL_COMP_GZIP) return deflate_write(z, data, n, finish, emit, ctx, err);
    return zstd_write(z, data, n, finish, emit, ctx, err);
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
