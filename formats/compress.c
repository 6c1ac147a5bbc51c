/*
 * compress.c -- gzip (zlib) and zstd (libzstd streaming API) streams.
 *
 * Reading decompresses the whole input up front into one owned buffer, so
 * every format reader keeps seeing "the input is one buffer" (fmt_impl.h).
 * The price: a compressed input costs its decompressed size in memory.
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
 * Streaming (zstd whose frames all announce their content size, the
 * usual case for files the zstd tool wrote): the decompressed size F is
 * known before a byte is decompressed, so the output buffer is one
 * anonymous mapping of F bytes (plus slack for a lying frame) whose
 * address never moves, and a decompressor thread of its own (not a pool
 * task: readers block on it) fills it while the readers already parse:
 *
 *   opener: ZSTD_findDecompressedSize -> mmap F -> first step here (so
 *           libzstd's allocations happen on the opening thread, which
 *           keeps TALLY_FAIL_ALLOC deterministic) -> thread
 *   thread: ZSTD_decompressStream 256 KiB of input at a time, straight
 *           into the mapping (ZSTD_d_stableOutBuffer); after each step `ready` (bytes decompressed) is published under the
 *           stream's mutex and waiters are woken; the end is DONE or
 *           FAILED with the same message the whole-buffer path gives
 *   readers: tl_input_wait(b, want) blocks until `want` bytes are ready
 *           (or the stream failed); tl_input_finish waits for the end.
 *
 * The buffer is a TlBuf of size F from the start (readers see the final
 * size; they must not read bytes before waiting for them: see fmt_impl.h).
 * Memory: format.c marks the whole pages of a decoded morsel whose batch
 * holds no view into the input (tl_input_drop_read); once they lie a
 * frame window behind its output (libzstd reads that window for matches)
 * the thread moves whole marked 64-page chunks ahead of its output
 * (mremap MREMAP_DONTUNMAP: recycled, so it writes into pages that need
 * no fault, zeroing or cgroup charge) and gives the rest back
 * (MADV_DONTNEED), readers directly once it is done; either way a given
 * back page reads as zeros.  A filler thread prefaults the fresh chunks
 * ahead that recycling does not cover and drops the partly given back
 * ones, so that kernel work stays off the decompressor (the critical
 * path).  Such a stream is "holed": a reopen (a restart, another reader)
 * decompresses it anew, and a stream two readers hold at once drops
 * nothing.  Its last release cancels and joins the threads.  Every live stream is in a
 * registry so tl_input_check_streams (tl_writer_finish) can report a
 * stream that fails after a run stopped reading early (--head): the
 * result is then an error, as when the whole input was decompressed at
 * open.  Streams whose size is not announced (gzip, zstd written by a
 * pipe, and anything ZSTD_findDecompressedSize cannot walk: truncated or
 * corrupt frame headers) are decompressed whole as before.  Inputs under
 * 1 MiB too.  TALLY_NO_STREAM=1 turns streaming off, TALLY_NO_RECYCLE=1
 * the moving of pages (they are only dropped), TALLY_NO_PREFILL=1 the
 * filler thread; TALLY_STREAM_STEP=N (tests) streams every zstd input in
 * steps of N compressed bytes.
 *
 * Writing: a TlCompressor wraps deflate (gzip header, level 1-9) or
 * ZSTD_compressStream2 (checksummed frame, level 1-22) and hands the
 * compressed chunks to an emit callback.
 */
#include "compress.h"
#include "fmt_impl.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <strings.h>
#include <xxhash.h>
#include <zlib.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_customMem: allocations through tl_malloc */
#include <zstd.h>
#include <zstd_errors.h>

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

static TlStatus out_finish(OutBuf *o, TlBuf **out, TlError *err)
{
    if (o->cap - o->len > OUT_CHUNK) {
        uint8_t *g = tl_realloc(o->data, o->len ? o->len : 1);
        if (g) {
            o->data = g;
            o->cap = o->len ? o->len : 1;
        }
    }
    *out = tl_buf_adopt(o->data, o->len);
    o->data = NULL;
    if (!*out) return tl_error_oom(err);
    return TL_OK;
}

/* ------------------------------------------------------------- zlib mem */

static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
    (void)opaque;
    if (size && items > SIZE_MAX / size) return Z_NULL;
    return tl_malloc((size_t)items * size);
}

static void z_free(voidpf opaque, voidpf p)
{
    (void)opaque;
    tl_free(p);
}

/* --------------------------------------------------------------- gzip */

static bool all_zero(const uint8_t *p, size_t n)
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
    z.zalloc = z_alloc;
    z.zfree = z_free;
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
            if (all_zero(src + pos, n - pos)) break;
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

static const ZSTD_customMem zs_mem = {zs_alloc, zs_free, NULL};

static TlStatus unzstd(const char *name, const uint8_t *src, size_t n, OutBuf *o,
                       TlError *err)
{
    ZSTD_DCtx *d = ZSTD_createDCtx_advanced(zs_mem);
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
TlStatus tl_decompress(TlCompression c, const char *name, const uint8_t *src,
                       size_t n, TlBuf **out, TlError *err)
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
    if (st == TL_OK) st = out_finish(&o, out, err);
    tl_free(o.data);
    return st;
}

/* ----------------------------------------------------------- streaming */

#define STREAM_STEP ((size_t)256 << 10) /* input per decompression step */
#define STREAM_SLACK ((size_t)1 << 20)  /* room past the announced size */
#define STREAM_MIN ((size_t)1 << 20)    /* smaller outputs: whole, at once */
#define RECYCLE_AHEAD ((size_t)16 << 20) /* recycled pages waiting ahead */
#define RECYCLE_LAG ((size_t)4 << 20)    /* partial chunks wait this long */
#define PREFILL_LOW 8                     /* chunks kept populated ahead */
#define PREFILL_STEP 8                    /* chunks prefaulted at a time */

enum { ST_RUNNING, ST_DONE, ST_FAILED };

typedef struct Stream {
    TlBuf *raw;               /* the compressed bytes (a reference) */
    char *name;               /* for messages */
    uint8_t *data;            /* map_size bytes mapped; the first size used */
    size_t size, map_size;
    size_t step;              /* input per step (STREAM_STEP) */
    ZSTD_DCtx *dctx;          /* the thread's after the start */
    ZSTD_inBuffer in;
    size_t out_pos;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t ready;             /* under mu; also read atomically */
    int state;                /* under mu; also read atomically */
    TlError err;              /* ST_FAILED: why (written before state) */
    int cancel;               /* atomic: the buffer is going away */
    pthread_t thread;
    bool started;
    int holed;                /* atomic: pages were dropped (tl_input_drop_read) */
    uint64_t *decoded;        /* atomic bits: pages readers are done with */
    size_t n_pages, page, window; /* window: the largest frame window */
    int shared;               /* atomic: more than one reader: never drop */
    size_t fill;              /* the decompressor's: next recycling target chunk */
    pthread_t filler;         /* prefaults fresh chunks ahead (stream_fill_main) */
    bool filler_started;
    size_t pop_lo, pop_hi;    /* under mu: chunks the filler is to prefault */
    bool no_recycle;          /* the decompressor's: drop pages, never move them */
    TlBuf *buf;               /* the buffer handed out (not a reference) */
    struct Stream *next;      /* the registry */
} Stream;

static pthread_mutex_t g_streams_mu = PTHREAD_MUTEX_INITIALIZER;
static Stream *g_streams;

/* One ZSTD_decompressStream call on at most s->step more bytes of input:
 * 0 more to do, 1 the stream ended well, -1 failed (*err; stream_error
 * then gives the whole-buffer path's message). */
static int stream_step(Stream *s, TlError *err)
{
    size_t left = s->in.size - s->in.pos, ret;
    ZSTD_outBuffer out;
    ZSTD_inBuffer part = s->in;
    /* the output buffer is the same at every call (ZSTD_d_stableOutBuffer:
     * libzstd decodes straight into it); the input comes a step at a time */
    out.dst = s->data;
    out.pos = s->out_pos;
    out.size = s->map_size;
    if (left > s->step) part.size = s->in.pos + s->step;
    ret = ZSTD_decompressStream(s->dctx, &out, &part);
    s->in.pos = part.pos;
    s->out_pos = out.pos;
    if (ZSTD_isError(ret)) {
        if (ZSTD_getErrorCode(ret) == ZSTD_error_memory_allocation) tl_error_oom(err);
        else
            tl_error(err, TL_ERR_DATA, "%s: corrupt zstd data in the block "
                     "or frame at byte %zu: %s", tl_quote_name(s->name).s, s->in.pos,
                     ZSTD_getErrorName(ret));
        return -1;
    }
    if (ret == 0 && s->in.pos == s->in.size) {
        if (s->out_pos == s->size) return 1;
        tl_error(err, TL_ERR_DATA, "%s: corrupt zstd data: the frames hold "
                 "%zu bytes, their headers announce %zu", tl_quote_name(s->name).s,
                 s->out_pos, s->size);
        return -1;
    }
    if (ret != 0 && s->in.pos == s->in.size && out.pos < out.size) {
        tl_error(err, TL_ERR_DATA, "%s: truncated zstd stream: it ends at byte "
                 "%zu, inside a frame", tl_quote_name(s->name).s, s->in.size);
        return -1;
    }
    if (s->out_pos == s->map_size) {
        tl_error(err, TL_ERR_DATA, "%s: corrupt zstd data in the block or frame "
                 "at byte %zu: more data than the frame headers announce",
                 tl_quote_name(s->name).s, s->in.pos);
        return -1;
    }
    return 0;
}

/* The stream failed (err): decompress it whole to get the message the
 * whole-buffer path gives, which is what users saw before streaming
 * (libzstd reports a corrupt frame at a different offset when it decodes
 * it into a small output buffer than into one big enough for the frame). */
static void stream_error(Stream *s, TlError *err)
{
    TlBuf *tmp = NULL;
    TlError whole;
    if (err->code == TL_ERR_OOM) return;
    if (tl_decompress(TL_COMP_ZSTD, s->name, s->raw->data, s->raw->size, &tmp,
                      &whole) != TL_OK)
        *err = whole;
    tl_buf_release(tmp);
}

/* Publish a step's outcome (rc as stream_step) and wake the waiters. */
static void stream_publish(Stream *s, int rc, const TlError *err)
{
    pthread_mutex_lock(&s->mu);
    if (rc < 0) s->err = *err;
    __atomic_store_n(&s->ready, s->out_pos < s->size ? s->out_pos : s->size,
                     __ATOMIC_RELEASE);
    if (rc) __atomic_store_n(&s->state, rc > 0 ? ST_DONE : ST_FAILED, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void stream_drop_marked(Stream *s, size_t limit);

static void stream_drop_partial(Stream *s, size_t late, bool whole);

/* The filler thread, woken with the readers at every step
 * (stream_publish): prefault (MADV_POPULATE_WRITE) the fresh chunks the
 * decompressor will write into (stream_prefill), and drop the pages of
 * chunks readers are done with in part (stream_drop_partial), so that
 * kernel work (page allocation, zeroing, cgroup charge; unmapping) runs on
 * another core, not on the decompressor's, which is the critical path.  A
 * chunk it has not prefaulted in time the decompressor faults in itself,
 * as without it; without MADV_POPULATE_WRITE (kernels before 5.14) it
 * only drops. */
static void *stream_fill_main(void *arg)
{
    Stream *s = arg;
    size_t chunk = 64 * s->page, late = 0;
    bool populate = true;
    pthread_mutex_lock(&s->mu);
    while (!__atomic_load_n(&s->cancel, __ATOMIC_ACQUIRE)) {
        size_t limit = s->ready > s->window ? s->ready - s->window : 0;
        size_t want = limit > RECYCLE_LAG ? ((limit - RECYCLE_LAG) / s->page) / 64 : 0;
        if (s->pop_lo < s->pop_hi) {
            size_t lo = s->pop_lo, hi = s->pop_hi;
            s->pop_lo = hi;
            pthread_mutex_unlock(&s->mu);
            if (populate &&
                madvise(s->data + lo * chunk, (hi - lo) * chunk, MADV_POPULATE_WRITE) != 0 &&
                errno == EINVAL)
                populate = false;
            pthread_mutex_lock(&s->mu);
            continue;
        }
        if (s->decoded && want > late && !__atomic_load_n(&s->shared, __ATOMIC_ACQUIRE)) {
            late = want;
            pthread_mutex_unlock(&s->mu);
            stream_drop_partial(s, late, false);
            pthread_mutex_lock(&s->mu);
            continue;
        }
        pthread_cond_wait(&s->cv, &s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Keep PREFILL_LOW chunks ahead of the output populated: when fewer
 * (recycled or prefaulted) wait there, hand the filler the next
 * PREFILL_STEP fresh chunks (recycled chunks then go after them). */
static void stream_prefill(Stream *s)
{
    size_t chunk = 64 * s->page;
    size_t out_chunk = (s->out_pos + chunk - 1) / chunk;
    size_t last = s->size / chunk, hi;
    if (!s->filler_started) return;
    if (s->fill < out_chunk) s->fill = out_chunk;
    if (s->fill - out_chunk >= PREFILL_LOW || s->fill >= last) return;
    hi = s->fill + PREFILL_STEP < last ? s->fill + PREFILL_STEP : last;
    pthread_mutex_lock(&s->mu); /* the filler wakes at stream_publish */
    if (s->pop_lo < s->fill) s->pop_lo = s->fill;
    s->pop_hi = hi;
    pthread_mutex_unlock(&s->mu);
    s->fill = hi;
}

static void *stream_main(void *arg)
{
    Stream *s = arg;
    TlError err;
    int rc = 0;
    memset(&err, 0, sizeof err);
    while (rc == 0) {
        if (__atomic_load_n(&s->cancel, __ATOMIC_ACQUIRE)) {
            rc = -1;
            tl_error(&err, TL_ERR_DATA, "%s: decompression cancelled", tl_quote_name(s->name).s);
        } else {
            rc = stream_step(s, &err);
            if (rc < 0) stream_error(s, &err);
        }
        if (rc == 0 && s->decoded && s->out_pos > s->window &&
            !__atomic_load_n(&s->shared, __ATOMIC_ACQUIRE))
            stream_drop_marked(s, s->out_pos - s->window);
        if (rc == 0) stream_prefill(s);
        stream_publish(s, rc, &err);
    }
    return NULL;
}

static void stream_free(Stream *s)
{
    if (s->started) {
        __atomic_store_n(&s->cancel, 1, __ATOMIC_RELEASE);
        pthread_join(s->thread, NULL);
    }
    if (s->filler_started) {
        pthread_mutex_lock(&s->mu);
        __atomic_store_n(&s->cancel, 1, __ATOMIC_RELEASE);
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->filler, NULL);
    }
    pthread_mutex_lock(&g_streams_mu);
    for (Stream **pp = &g_streams; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    pthread_mutex_unlock(&g_streams_mu);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    ZSTD_freeDCtx(s->dctx);
    tl_free(s->decoded);
    if (s->data) munmap(s->data, s->map_size);
    tl_buf_release(s->raw);
    tl_free(s->name);
    tl_free(s);
}

static void stream_release(void *owner, uint8_t *data, size_t size)
{
    (void)data;
    (void)size;
    stream_free(owner);
}

/* The stream behind b, or NULL when b is an ordinary buffer. */
static Stream *stream_of(const TlBuf *b)
{
    return b && b->release == stream_release ? b->owner : NULL;
}

/* Start streaming raw (zstd) when its frames announce their total size;
 * *out NULL (and TL_OK) when they do not or the input is small, so the
 * caller decompresses it whole.  raw is retained on success. */
static TlStatus stream_start(TlCompression c, const char *name, TlBuf *raw,
                             TlBuf **out, TlError *err)
{
    unsigned long long f;
    Stream *s;
    const char *env = getenv("TALLY_STREAM_STEP");
    size_t step = STREAM_STEP, min = STREAM_MIN;
    int rc;
    *out = NULL;
    if (c != TL_COMP_ZSTD || getenv("TALLY_NO_STREAM")) return TL_OK;
    if (env && atol(env) > 0) {
        /* tests: stream any size, in steps of this many bytes */
        step = (size_t)atol(env);
        min = 1;
    }
    if (raw->size < 4 || tl_compression_sniff(raw->data, raw->size) != TL_COMP_ZSTD)
        return TL_OK;
    f = ZSTD_findDecompressedSize(raw->data, raw->size);
    if (f == ZSTD_CONTENTSIZE_UNKNOWN || f == ZSTD_CONTENTSIZE_ERROR ||
        f < min || f > SIZE_MAX / 2)
        return TL_OK;
    s = tl_calloc(1, sizeof *s);
    if (!s) return tl_error_oom(err);
    s->size = (size_t)f;
    s->step = step;
    s->map_size = s->size + STREAM_SLACK;
    s->name = tl_strdup(name);
    s->dctx = ZSTD_createDCtx_advanced(zs_mem);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (!s->name || !s->dctx) {
        stream_free(s);
        return tl_error_oom(err);
    }
    if (ZSTD_isError(ZSTD_DCtx_setParameter(s->dctx, ZSTD_d_stableOutBuffer, 1))) {
        stream_free(s);
        return TL_OK; /* decompress it whole */
    }
    s->data = mmap(NULL, s->map_size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (s->data == MAP_FAILED) {
        s->data = NULL;
        stream_free(s);
        return TL_OK; /* no room to map: decompress it whole */
    }
    s->raw = tl_buf_retain(raw);
    /* pages readers are done with (tl_input_drop_read), and the largest
     * window any frame's matches reach back */
    {
        long ps = sysconf(_SC_PAGESIZE);
        size_t pos = 0;
        s->page = ps > 0 ? (size_t)ps : 4096;
        s->n_pages = s->map_size / s->page + 1;
        while (pos < raw->size) {
            ZSTD_frameHeader zfh;
            size_t fc = ZSTD_findFrameCompressedSize(raw->data + pos, raw->size - pos);
            if (ZSTD_isError(fc) || fc == 0 ||
                ZSTD_getFrameHeader(&zfh, raw->data + pos, raw->size - pos) != 0) {
                s->window = SIZE_MAX;
                break;
            }
            if (zfh.frameType == ZSTD_frame && zfh.windowSize > s->window)
                s->window = zfh.windowSize > SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)zfh.windowSize;
            pos += fc;
        }
        if (s->window != SIZE_MAX) {
            s->window += (size_t)64 << 10; /* drops run between steps: margin only */
            s->decoded = tl_calloc(s->n_pages / 64 + 1, sizeof *s->decoded);
            s->no_recycle = getenv("TALLY_NO_RECYCLE") != NULL;
            if (!s->decoded) {
                stream_free(s);
                return tl_error_oom(err);
            }
        }
    }
    s->in.src = raw->data;
    s->in.size = raw->size;
    /* the first step here: libzstd allocates its buffers on this thread */
    rc = stream_step(s, err);
    if (rc < 0) {
        TlStatus st;
        stream_error(s, err);
        st = err->code;
        stream_free(s);
        return st;
    }
    s->ready = s->out_pos < s->size ? s->out_pos : s->size;
    s->state = rc > 0 ? ST_DONE : ST_RUNNING;
    *out = tl_buf_wrap(s->data, s->size, stream_release, s);
    if (!*out) {
        stream_free(s);
        return tl_error_oom(err);
    }
    s->buf = *out;
    pthread_mutex_lock(&g_streams_mu);
    s->next = g_streams;
    g_streams = s;
    pthread_mutex_unlock(&g_streams_mu);
    if (rc == 0) {
        /* the filler first: stream_main reads filler_started */
        if (!getenv("TALLY_NO_PREFILL") &&
            pthread_create(&s->filler, NULL, stream_fill_main, s) == 0)
            s->filler_started = true;
        if (pthread_create(&s->thread, NULL, stream_main, s) == 0) {
            s->started = true;
        } else {
            /* no thread: finish here */
            TlError e;
            while (rc == 0) rc = stream_step(s, &e);
            if (rc < 0) stream_error(s, &e);
            stream_publish(s, rc, &e);
        }
    }
    return TL_OK;
}

/* Recycling.  A chunk is the 64 pages of one word of the decoded bitmap.
 * A chunk readers are done with wholly is moved (mremap, MREMAP_DONTUNMAP:
 * its old place stays mapped and reads as zeros, as after MADV_DONTNEED)
 * to the first chunk wholly ahead of the output, where libzstd writes into
 * it next: the pages keep their physical memory, so the decompressor
 * neither faults on fresh memory (zeroing, cgroup charge: expensive on a
 * VM that gives freed pages back to the host) nor pays for giving pages
 * back.  Moves are whole aligned chunks, so a mapping (a moved chunk is a
 * mapping of its own) never straddles one and every move is one mremap.
 * Targets lie wholly before the announced size (readers may rely on zeros
 * past it), and at most RECYCLE_AHEAD bytes wait ahead of the output, so
 * memory stays bounded.  A chunk with pages readers keep (the page holding
 * a morsel's last byte) is dropped (MADV_DONTNEED) page run by page run
 * once it lies RECYCLE_LAG behind the window; until then the rest of its
 * pages may still come. */
static bool stream_move(Stream *s, size_t w, size_t n)
{
    size_t chunk = 64 * s->page;
    return mremap(s->data + w * chunk, n * chunk, n * chunk,
                  MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP,
                  s->data + s->fill * chunk) != MAP_FAILED;
}

/* Recycle or drop the n whole chunks from chunk w on.  Consecutive chunks
 * that were moved together lie in one mapping and move in one mremap; a
 * run that spans mappings (EFAULT) moves a chunk at a time. */
static void stream_recycle(Stream *s, size_t w, size_t n)
{
    size_t chunk = 64 * s->page;
    size_t out_chunk = (s->out_pos + chunk - 1) / chunk;
    size_t last = s->size / chunk; /* targets lie below this chunk */
    __atomic_store_n(&s->holed, 1, __ATOMIC_RELEASE);
    if (s->fill < out_chunk) s->fill = out_chunk;
    while (n && !s->no_recycle && s->fill < last &&
           (s->fill - out_chunk) * chunk < RECYCLE_AHEAD) {
        size_t k = n;
        if (k > last - s->fill) k = last - s->fill;
        if (k > RECYCLE_AHEAD / chunk - (s->fill - out_chunk))
            k = RECYCLE_AHEAD / chunk - (s->fill - out_chunk);
        if (!stream_move(s, w, k)) {
            if (k == 1 || errno != EFAULT || !stream_move(s, w, k = 1)) {
                s->no_recycle = true; /* no DONTUNMAP (old kernel), too many maps */
                break;
            }
        }
        s->fill += k;
        w += k;
        n -= k;
    }
    if (n) madvise(s->data + w * chunk, n * chunk, MADV_DONTNEED);
}

/* Drop the marked pages of the chunks before chunk late that readers are
 * done with in part (whole ones are the decompressor's to recycle, unless
 * whole is set). */
static void stream_drop_partial(Stream *s, size_t late, bool whole)
{
    for (size_t w = 0; w < late; w++) {
        uint64_t bits = __atomic_load_n(&s->decoded[w], __ATOMIC_RELAXED);
        if (!bits || (bits == ~(uint64_t)0 && !whole)) continue;
        bits = __atomic_exchange_n(&s->decoded[w], 0, __ATOMIC_ACQ_REL);
        while (bits) {
            int b = __builtin_ctzll(bits), e = b;
            while (e < 64 && (bits >> e & 1)) e++;
            __atomic_store_n(&s->holed, 1, __ATOMIC_RELEASE);
            madvise(s->data + (w * 64 + (size_t)b) * s->page, (size_t)(e - b) * s->page,
                    MADV_DONTNEED);
            bits &= e == 64 ? 0 : ~(uint64_t)0 << e;
        }
    }
}

/* Give back the pages marked decoded that lie wholly before limit
 * (libzstd still reads the last window of output for its matches):
 * whole chunks are recycled; partial ones are dropped once they lie
 * RECYCLE_LAG further behind (the rest of their pages may still come), by
 * the filler thread when there is one, at once when not recycling. */
static void stream_drop_marked(Stream *s, size_t limit)
{
    size_t words = (limit / s->page) / 64, late = 0, run = 0, n = 0;
    if (s->no_recycle) {
        stream_drop_partial(s, words, true);
        return;
    }
    for (size_t w = 0; w < words; w++) {
        uint64_t bits = __atomic_load_n(&s->decoded[w], __ATOMIC_RELAXED);
        if (bits != ~(uint64_t)0) continue;
        /* acquire: the readers' last reads of the chunk come first; the
         * filler may have taken it meanwhile (when it filled up late) */
        if (__atomic_exchange_n(&s->decoded[w], 0, __ATOMIC_ACQ_REL) != ~(uint64_t)0)
            continue;
        if (n && run + n != w) {
            stream_recycle(s, run, n);
            n = 0;
        }
        if (!n) run = w;
        n++;
    }
    if (n) stream_recycle(s, run, n);
    if (!s->filler_started && limit > RECYCLE_LAG)
        late = ((limit - RECYCLE_LAG) / s->page) / 64;
    if (late) stream_drop_partial(s, late, false);
}

/* See fmt_impl.h.  The whole pages of [begin, end) are marked, except the
 * one holding byte end - 1 (a message about the next morsel's first record
 * may look back to its line's start); the decompressor gives them back
 * once they are a window behind it (stream_drop_marked). */
void tl_input_drop_read(const TlBuf *b, size_t begin, size_t end)
{
    Stream *s = stream_of(b);
    size_t lo, hi;
    if (!s || !s->decoded || __atomic_load_n(&s->shared, __ATOMIC_ACQUIRE)) return;
    if (end > __atomic_load_n(&s->ready, __ATOMIC_ACQUIRE)) return;
    lo = (begin + s->page - 1) / s->page;
    hi = end / s->page;
    if (hi > lo) hi--;
    if (hi > s->n_pages) hi = s->n_pages;
    if (hi <= lo) return;
    if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == ST_DONE) {
        /* the decompressor is gone: nothing reads the window any more */
        __atomic_store_n(&s->holed, 1, __ATOMIC_RELEASE);
        madvise(s->data + lo * s->page, (hi - lo) * s->page, MADV_DONTNEED);
        return;
    }
    for (size_t p = lo; p < hi; p++)
        __atomic_fetch_or(&s->decoded[p / 64], (uint64_t)1 << (p % 64), __ATOMIC_RELEASE);
}

/* See fmt_impl.h. */
void tl_input_share(const TlBuf *b)
{
    Stream *s = stream_of(b);
    if (s) __atomic_store_n(&s->shared, 1, __ATOMIC_RELEASE);
}

static bool stream_holed(const TlBuf *b)
{
    Stream *s = stream_of(b);
    return s && __atomic_load_n(&s->holed, __ATOMIC_ACQUIRE);
}

/* See fmt_impl.h. */
TlStatus tl_input_restream(const char *path, TlBuf **b, TlError *err)
{
    Stream *s = stream_of(*b);
    TlBuf *raw, *res = NULL;
    TlStatus st;
    if (!s || !stream_holed(*b)) return TL_OK;
    raw = tl_buf_retain(s->raw);
    tl_buf_release(*b);
    *b = NULL;
    st = stream_start(TL_COMP_ZSTD, tl_input_name(path), raw, &res, err);
    if (st == TL_OK && !res)
        st = tl_decompress(TL_COMP_ZSTD, tl_input_name(path), raw->data, raw->size,
                           &res, err);
    tl_buf_release(raw);
    *b = res;
    return st;
}

/* See fmt_impl.h. */
bool tl_input_streaming(const TlBuf *b)
{
    Stream *s = stream_of(b);
    return s && __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != ST_DONE;
}

/* See fmt_impl.h. */
bool tl_input_is_stream(const TlBuf *b)
{
    return stream_of(b) != NULL;
}

/* See fmt_impl.h. */
TlStatus tl_input_wait(const TlBuf *b, size_t want, size_t *ready, TlError *err)
{
    Stream *s = stream_of(b);
    size_t got;
    TlStatus st = TL_OK;
    if (!s) {
        if (ready) *ready = b ? b->size : 0;
        return TL_OK;
    }
    if (want > s->size) want = s->size;
    got = __atomic_load_n(&s->ready, __ATOMIC_ACQUIRE);
    if (got < want) {
        pthread_mutex_lock(&s->mu);
        while (s->ready < want && s->state == ST_RUNNING)
            pthread_cond_wait(&s->cv, &s->mu);
        got = s->ready;
        if (got < want && s->state == ST_FAILED) {
            *err = s->err;
            st = err->code;
        }
        pthread_mutex_unlock(&s->mu);
    }
    if (ready) *ready = got;
    return st;
}

/* See fmt_impl.h. */
TlStatus tl_input_finish(const TlBuf *b, TlError *err)
{
    Stream *s = stream_of(b);
    TlStatus st = TL_OK;
    if (!s) return TL_OK;
    pthread_mutex_lock(&s->mu);
    while (s->state == ST_RUNNING) pthread_cond_wait(&s->cv, &s->mu);
    if (s->state == ST_FAILED) {
        *err = s->err;
        st = err->code;
    }
    pthread_mutex_unlock(&s->mu);
    return st;
}

static struct CacheEntry {
    char *path;
    size_t raw_size;
    uint64_t raw_hash;
    TlBuf *data;
} g_cache; /* the last decompressed file, so a restart does not decompress it again */

/* See compress.h.  A stream only the restart cache holds belongs to no
 * reader of this run (an earlier run of the process read it). */
TlStatus tl_input_check_streams(TlError *err)
{
    TlStatus st = TL_OK;
    pthread_mutex_lock(&g_streams_mu);
    for (Stream *s = g_streams; s && st == TL_OK; s = s->next) {
        if (g_cache.data == s->buf &&
            __atomic_load_n(&s->buf->refcount, __ATOMIC_ACQUIRE) == 1)
            continue;
        pthread_mutex_lock(&s->mu);
        while (s->state == ST_RUNNING) pthread_cond_wait(&s->cv, &s->mu);
        if (s->state == ST_FAILED) {
            *err = s->err;
            st = err->code;
        }
        pthread_mutex_unlock(&s->mu);
    }
    pthread_mutex_unlock(&g_streams_mu);
    return st;
}

/* ------------------------------------------------------- the input hook */


/* See compress.h. */
void tl_compress_cache_free(void)
{
    tl_buf_release(g_cache.data);
    tl_free(g_cache.path);
    memset(&g_cache, 0, sizeof g_cache);
}

/* See compress.h. */
TlStatus tl_input_decompress(const char *path, TlBuf **buf, TlError *err)
{
    const char *comp = NULL, *fmt = NULL;
    bool is_stdin = strcmp(path, "-") == 0;
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
    hash = is_stdin ? 0 : XXH3_64bits(raw->data, raw->size);
    if (!is_stdin && g_cache.data && strcmp(g_cache.path, path) == 0 &&
        g_cache.raw_size == raw->size && g_cache.raw_hash == hash &&
        !stream_holed(g_cache.data)) {
        tl_buf_release(raw);
        /* a reader still holds it: two readers of one stream, whose pages
         * therefore stay (tl_input_drop_read) */
        if (__atomic_load_n(&g_cache.data->refcount, __ATOMIC_ACQUIRE) > 1)
            tl_input_share(g_cache.data);
        *buf = tl_buf_retain(g_cache.data);
        return TL_OK;
    }
    st = stream_start(c, tl_input_name(path), raw, &res, err);
    if (st == TL_OK && !res)
        st = tl_decompress(c, tl_input_name(path), raw->data, raw->size, &res, err);
    tl_buf_release(raw);
    *buf = NULL;
    if (st != TL_OK) return st;
    if (!is_stdin) {
        char *p = tl_strdup(path);
        if (p) {
            tl_compress_cache_free();
            g_cache.path = p;
            g_cache.raw_size = raw_size;
            g_cache.raw_hash = hash;
            g_cache.data = tl_buf_retain(res);
        }
    }
    *buf = res;
    return TL_OK;
}

/* See compress.h.  Blanks are spaces, tabs, line ends and a UTF-8 BOM. */
TlStatus tl_stdin_sniff(const char **fmt, TlError *err)
{
    TlBuf *b = NULL;
    size_t i = 0;
    size_t ready = 0;
    TlStatus st = TL_OK;
    TL_TRY(tl_input_load_stream("-", &b, err));
    /* a streamed input: look only at bytes decompressed already */
    st = tl_input_wait(b, 4, &ready, err);
    if (st == TL_OK && ready >= 3 && memcmp(b->data, "\xef\xbb\xbf", 3) == 0) i = 3;
    for (; st == TL_OK; i++) {
        if (i >= ready && (st = tl_input_wait(b, i + 4096, &ready, err)) != TL_OK) break;
        if (i >= ready) break;
        if (b->data[i] != ' ' && b->data[i] != '\t' && b->data[i] != '\r' &&
            b->data[i] != '\n')
            break;
    }
    *fmt = st == TL_OK && i < ready && (b->data[i] == '{' || b->data[i] == '[') ? "json"
                                                                              : "csv";
    /* Parquet's magic number (its bytes are never blank) */
    if (st == TL_OK && ready >= 4 && memcmp(b->data, "PAR1", 4) == 0) *fmt = "parquet";
    tl_buf_release(b);
    return st;
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
        z->z.zalloc = z_alloc;
        z->z.zfree = z_free;
        if (deflateInit2(&z->z, z->level, Z_DEFLATED, 16 + MAX_WBITS, 8,
                         Z_DEFAULT_STRATEGY) != Z_OK)
            return tl_error_oom(err);
        z->z_ready = true;
        return TL_OK;
    }
    if (!z->cc) {
        z->cc = ZSTD_createCCtx_advanced(zs_mem);
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
