/*
 * stream.c -- compressed inputs decompressed by a thread of their own while
 * the readers parse, in bounded memory.
 *
 * Every gzip and zstd input of 1 MiB or more decompressed (and any size
 * with TALLY_STREAM_STEP) is streamed: its output buffer is one anonymous
 * mapping whose address never moves, reserved (MAP_NORESERVE: address
 * space, not memory) at the size the zstd frames announce plus slack, or,
 * when the size is not announced (gzip, zstd written by a pipe, frame
 * headers ZSTD_findDecompressedSize cannot walk), at what the compressed
 * size can expand to (gzip at most 1032:1, zstd 32768:1 per block; at
 * most RESERVE_MAX).  A decompressor thread (not a pool task: readers
 * block on it) fills it while readers parse what is ready:
 *
 *   opener: mmap -> first step here (so libzstd's and zlib's allocations
 *           happen on the opening thread, which keeps TALLY_FAIL_ALLOC
 *           deterministic) -> thread
 *   thread: steps of at most STREAM_STEP input and about STREAM_OUT
 *           output (zstd: ZSTD_decompressStream straight into the mapping,
 *           ZSTD_d_stableOutBuffer, fed ZSTD_CALL bytes a call so that one
 *           call's output stays bounded even for a bomb; gzip: inflate with
 *           avail_out bounded); after each step `ready` is published under
 *           the stream's mutex and waiters are woken.  It stays at most
 *           STREAM_LEAD bytes ahead of the most any reader asked for
 *           (`demand`, raised by tl_input_wait), so a reader slower than
 *           the decompressor does not leave the whole output resident.
 *           The end is DONE or FAILED.
 *   readers: tl_input_wait(b, want) blocks until `want` bytes are ready,
 *           the stream failed or it ended short of want (a size not
 *           announced: tl_input_size then gives the end);
 *           tl_input_finish waits for the end (and lifts the bound: its
 *           caller reads to the end).
 *
 * The TlBuf's size is the announced size, or the reservation while the
 * size is unknown (its bytes past the end read as zeros); tl_input_size
 * gives the final size once the stream has ended.  A stream of unknown
 * size that ends within its first STREAM_MIN bytes is handed out as an
 * ordinary buffer of exactly its bytes; one that ends in the opening
 * steps past them, as a stream of that size.
 *
 * Memory: the pages of a decoded morsel are marked (tl_input_drop_read)
 * when its batches' last view into the input goes (format.c pins the
 * morsel: tl_input_pin); once they lie a
 * frame window behind its output (libzstd reads that window for matches;
 * zlib keeps its own) the thread moves whole marked 64-page chunks ahead
 * of its output (mremap MREMAP_DONTUNMAP: recycled, so it writes into
 * pages that need no fault, zeroing or cgroup charge) and gives the rest
 * back (MADV_DONTNEED), readers directly once it is done; either way a
 * given back page reads as zeros.  A filler thread prefaults the fresh
 * chunks ahead that recycling does not cover and drops the partly given
 * back ones, so that kernel work stays off the decompressor (the critical
 * path).  Such a stream is "holed": a reopen (a restart, another reader)
 * decompresses it anew, and a stream two readers hold at once drops
 * nothing.  Resident memory is thus about STREAM_LEAD, the morsels in
 * flight, the frame window and the recycled chunks waiting ahead, plus
 * what batches still view (and the longest record: --max-record-size).
 * Its last release cancels and joins the threads.  Every live stream is
 * in its run's registry (TlInputs) so tl_input_check_streams (lib/run,
 * before the writer's finish) can report a
 * stream that fails after a run stopped reading early (--head): the result
 * is then an error, as when the whole input was decompressed at open; the
 * rest is then decompressed and given back as it goes (drained).
 *
 * Errors: a truncated stream, data after the last gzip member and a
 * stream past its reservation have the whole-buffer path's message as is;
 * for a corrupt one, the byte offset libzstd and zlib report depends on
 * the output buffers they were given, so the input is decompressed whole
 * once more (compress.c, tl_decompress) for the message users saw before
 * streaming.
 *
 * Pipes (tl_stream_pipe): standard input or a FIFO of a run whose output
 * may stream (TlCtx.stream_pipes) is read the same way, by a thread whose
 * step is one read(2) of what the pipe has (polled, so a cancel is seen
 * while the writer is silent), into a reservation of unknown size; none
 * of its pages is given back (a pipe cannot be read again), so a restart
 * or a second reader reads the same bytes.
 *
 * TALLY_NO_STREAM=1 turns streaming off, TALLY_NO_RECYCLE=1 the moving of
 * pages (they are only dropped), TALLY_NO_PREFILL=1 the filler thread;
 * TALLY_STREAM_STEP=N (tests) streams every input, in steps of N
 * compressed bytes.
 *
 * This file is the decompressor's side (the threads, their steps, the
 * start); stream_pages.c the readers' (recycling and giving pages back,
 * pins, waiting); stream_impl.h the Stream they share.
 */
#include "stream_impl.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define STREAM_STEP ((size_t)256 << 10) /* input per decompression step */
#define STREAM_OUT ((size_t)1 << 20)    /* output per step, about */
#define ZSTD_CALL ((size_t)512)         /* input per libzstd call: <= 16 MiB out */
#define STREAM_SLACK ((size_t)1 << 20)  /* room past the announced size */
#define STREAM_MIN ((size_t)1 << 20)    /* smaller outputs: whole, at once */
#define RESERVE_MAX ((size_t)1 << 40)   /* address space for an unknown size */
#define RATIO_GZIP 1032                 /* deflate's largest expansion */
#define RATIO_ZSTD 32768                /* a 4-byte RLE block: 128 KiB */
#define POLL_MS 50                        /* a pipe's reader checks cancel */
#define PREFILL_LOW 8                     /* chunks kept populated ahead */
#define PREFILL_STEP 8                    /* chunks prefaulted at a time */

/* See stream_impl.h. */
void tl_stream_held(Stream *s, int64_t n)
{
    __atomic_add_fetch(&s->held, n, __ATOMIC_RELAXED);
    tl_held_add(s->inputs, n);
}

/* See stream_impl.h. */
void tl_stream_give_back(Stream *s, size_t lo, size_t hi)
{
    if (hi <= lo) return;
    __atomic_store_n(&s->holed, 1, __ATOMIC_RELEASE);
    madvise(s->data + lo, hi - lo, MADV_DONTNEED);
    tl_stream_held(s, -(int64_t)(hi - lo));
}

/* ---------------------------------------------------------------- steps */

/* The stream went past its mapping: the frames hold more than they
 * announce (the whole path's message then), or, unannounced, more than
 * the reservation. */
static int overflow(Stream *s, TlError *err)
{
    if (s->known) {
        tl_error(err, TL_ERR_DATA, "%s: corrupt zstd data in the block or frame "
                 "at byte %zu: more data than the frame headers announce",
                 tl_quote_name(s->name).s, s->in.pos);
    } else {
        s->exact = true;
        tl_error(err, TL_ERR_DATA, "%s: decompressed data longer than the %zu "
                 "bytes of address space reserved for it", tl_quote_name(s->name).s,
                 s->map_size);
    }
    return -1;
}

/* zstd: ZSTD_decompressStream calls on at most s->step more bytes of
 * input, ZSTD_CALL at a time, until about STREAM_OUT bytes came out.
 * 0 more to do, 1 the stream ended well, -1 failed (*err). */
static int zstd_step(Stream *s, TlError *err)
{
    size_t stop = s->in.size - s->in.pos > s->step ? s->in.pos + s->step : s->in.size;
    size_t start = s->out_pos, ret = 1;
    /* the output buffer is the same at every call (ZSTD_d_stableOutBuffer:
     * libzstd decodes straight into it); the input comes a call at a time */
    ZSTD_outBuffer out = {s->data, s->map_size, s->out_pos};
    for (;;) {
        ZSTD_inBuffer part = s->in;
        if (stop - part.pos > ZSTD_CALL) part.size = part.pos + ZSTD_CALL;
        else part.size = stop;
        ret = ZSTD_decompressStream(s->dctx, &out, &part);
        s->in.pos = part.pos;
        s->out_pos = out.pos;
        if (ZSTD_isError(ret)) {
            if (ZSTD_getErrorCode(ret) == ZSTD_error_memory_allocation) {
                tl_error_oom(err);
                s->exact = true;
            } else {
                tl_error(err, TL_ERR_DATA, "%s: corrupt zstd data in the block "
                         "or frame at byte %zu: %s", tl_quote_name(s->name).s,
                         s->in.pos, ZSTD_getErrorName(ret));
            }
            return -1;
        }
        if (s->in.pos >= stop || out.pos == out.size || out.pos - start >= STREAM_OUT)
            break;
    }
    if (ret == 0 && s->in.pos == s->in.size) {
        if (!s->known || s->out_pos == s->size) return 1;
        tl_error(err, TL_ERR_DATA, "%s: corrupt zstd data: the frames hold "
                 "%zu bytes, their headers announce %zu", tl_quote_name(s->name).s,
                 s->out_pos, s->size);
        return -1;
    }
    if (ret != 0 && s->in.pos == s->in.size && out.pos < out.size) {
        s->exact = true;
        tl_error(err, TL_ERR_DATA, "%s: truncated zstd stream: it ends at byte "
                 "%zu, inside a frame", tl_quote_name(s->name).s, s->in.size);
        return -1;
    }
    if (s->out_pos == s->map_size) return overflow(s, err);
    return 0;
}

/* gzip: one inflate call on at most s->step bytes of input and STREAM_OUT
 * of output; members follow one another to the end, as in compress.c's
 * gunzip.  Returns as zstd_step. */
static int gzip_step(Stream *s, TlError *err)
{
    const uint8_t *src = s->in.src;
    size_t n = s->in.size, in_len = n - s->in.pos, out_len = s->map_size - s->out_pos;
    int rc;
    if (in_len > s->step) in_len = s->step;
    if (out_len > STREAM_OUT) out_len = STREAM_OUT;
    s->z.next_in = (Bytef *)(uintptr_t)(src + s->in.pos);
    s->z.avail_in = (uInt)in_len;
    s->z.next_out = s->data + s->out_pos;
    s->z.avail_out = (uInt)out_len;
    rc = inflate(&s->z, Z_NO_FLUSH);
    s->in.pos += in_len - s->z.avail_in;
    s->out_pos += out_len - s->z.avail_out;
    if (rc == Z_STREAM_END) {
        size_t pos = s->in.pos;
        if (pos == n) return 1;
        if (n - pos >= 2 && src[pos] == 0x1f && src[pos + 1] == 0x8b) {
            if (inflateReset(&s->z) != Z_OK) {
                s->exact = true;
                tl_error_oom(err);
                return -1;
            }
            return 0;
        }
        if (tl_all_zero(src + pos, n - pos)) return 1;
        s->exact = true;
        tl_error(err, TL_ERR_DATA, "%s: unexpected data after the gzip stream at byte %zu",
                 tl_quote_name(s->name).s, pos);
        return -1;
    }
    if (rc == Z_MEM_ERROR) {
        s->exact = true;
        tl_error_oom(err);
        return -1;
    }
    if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_STREAM_ERROR) {
        tl_error(err, TL_ERR_DATA, "%s: corrupt gzip data at byte %zu: %s",
                 tl_quote_name(s->name).s, s->in.pos, s->z.msg ? s->z.msg : "invalid stream");
        return -1;
    }
    if (s->in.pos == n && s->z.avail_out > 0) {
        s->exact = true;
        tl_error(err, TL_ERR_DATA, "%s: truncated gzip stream: it ends at byte %zu, "
                 "inside a member", tl_quote_name(s->name).s, n);
        return -1;
    }
    if (s->out_pos == s->map_size) return overflow(s, err);
    return 0;
}

/* pipe: one read of what the pipe has (up to STREAM_OUT), waiting for it
 * in polls of POLL_MS so that a cancel (the run ended early: `| head`)
 * is seen while the writer is silent.  Returns as zstd_step. */
static int pipe_step(Stream *s, TlError *err)
{
    size_t room = s->size - s->out_pos;
    if (room == 0) return overflow(s, err);
    for (;;) {
        struct pollfd pf = {.fd = s->fd, .events = POLLIN};
        ssize_t got;
        int pr;
        if (__atomic_load_n(&s->cancel, __ATOMIC_ACQUIRE)) {
            tl_error(err, TL_ERR_IO, "%s: reading cancelled", tl_quote_name(s->name).s);
            return -1;
        }
        pr = poll(&pf, 1, POLL_MS);
        if (pr < 0 && errno != EINTR) {
            tl_error(err, TL_ERR_IO, "cannot read %s: %s", tl_quote_name(s->name).s,
                     strerror(errno));
            return -1;
        }
        if (pr <= 0) continue;
        got = read(s->fd, s->data + s->out_pos, room < STREAM_OUT ? room : STREAM_OUT);
        if (got < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            tl_error(err, TL_ERR_IO, "cannot read %s: %s", tl_quote_name(s->name).s,
                     strerror(errno));
            return -1;
        }
        if (got == 0) return 1;
        s->out_pos += (size_t)got;
        return 0;
    }
}

/* One step; the held counter follows the output (decompressed bytes: a
 * pipe's are not counted). */
static int stream_step(Stream *s, TlError *err)
{
    size_t before = s->out_pos;
    int rc = s->pipe ? pipe_step(s, err)
             : s->codec == TL_COMP_GZIP ? gzip_step(s, err) : zstd_step(s, err);
    if (!s->pipe) tl_stream_held(s, (int64_t)(s->out_pos - before));
    return rc;
}

/* The stream failed (err): unless the message is the whole-buffer path's
 * already, decompress it whole to get that message, which is what users
 * saw before streaming (libzstd and zlib report a corrupt block at an
 * offset that depends on the output buffer they were given). */
static void stream_error(Stream *s, TlError *err)
{
    TlBuf *tmp = NULL;
    TlError whole;
    if (s->exact || err->code == TL_ERR_OOM) return;
    if (tl_decompress(s->inputs, s->codec, s->name, s->raw->data, s->raw->size, &tmp,
                      &whole) != TL_OK)
        *err = whole;
    tl_buf_release(tmp);
}

/* An unannounced stream ended at out_pos: what lies past it reads as
 * zeros (recycled chunks waiting ahead hold old bytes), then the size is
 * published. */
static void stream_seal(Stream *s)
{
    size_t end = s->out_pos, up = (end + s->page - 1) / s->page * s->page;
    if (!s->known) {
        size_t hi = s->fill * 64 * s->page;
        if (up > end && up <= s->map_size) memset(s->data + end, 0, up - end);
        /* recycled chunks left the held count when they moved */
        if (hi > up) madvise(s->data + up, hi - up, MADV_DONTNEED);
    }
    __atomic_store_n(&s->end, end, __ATOMIC_RELEASE);
}

/* Publish a step's outcome (rc as stream_step) and wake the waiters. */
static void stream_publish(Stream *s, int rc, const TlError *err)
{
    if (rc > 0) stream_seal(s);
    pthread_mutex_lock(&s->mu);
    if (rc < 0) s->err = *err;
    __atomic_store_n(&s->ready, s->out_pos < s->size ? s->out_pos : s->size,
                     __ATOMIC_RELEASE);
    if (rc) __atomic_store_n(&s->state, rc > 0 ? ST_DONE : ST_FAILED, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* Block while the output is STREAM_LEAD past what readers asked for;
 * false when cancelled. */
static bool stream_await_demand(Stream *s)
{
    pthread_mutex_lock(&s->mu);
    while (!__atomic_load_n(&s->cancel, __ATOMIC_ACQUIRE) && s->demand < SIZE_MAX - STREAM_LEAD &&
           s->out_pos >= s->demand + STREAM_LEAD)
        pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
    return !__atomic_load_n(&s->cancel, __ATOMIC_ACQUIRE);
}

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
            tl_stream_drop_partial(s, late, false);
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
 * PREFILL_STEP fresh chunks (recycled chunks then go after them).  Never
 * past the readers' demand and STREAM_LEAD: the output stops there. */
static void stream_prefill(Stream *s)
{
    size_t chunk = 64 * s->page;
    size_t out_chunk = (s->out_pos + chunk - 1) / chunk;
    size_t last = s->size / chunk, hi, demand;
    if (!s->filler_started) return;
    if (s->fill < out_chunk) s->fill = out_chunk;
    if (s->fill - out_chunk >= PREFILL_LOW || s->fill >= last) return;
    hi = s->fill + PREFILL_STEP < last ? s->fill + PREFILL_STEP : last;
    pthread_mutex_lock(&s->mu); /* the filler wakes at stream_publish */
    demand = s->demand < SIZE_MAX - STREAM_LEAD ? s->demand + STREAM_LEAD : SIZE_MAX;
    if (hi * chunk > demand + chunk) {
        pthread_mutex_unlock(&s->mu);
        return;
    }
    if (s->pop_lo < s->fill) s->pop_lo = s->fill;
    s->pop_hi = hi;
    pthread_mutex_unlock(&s->mu);
    s->fill = hi;
}

/* Drained (tl_input_check_streams): nobody reads on, so everything a
 * window behind the output goes back as it comes. */
static void stream_drain(Stream *s)
{
    size_t limit;
    if (s->window == SIZE_MAX || s->out_pos <= s->window) return;
    limit = (s->out_pos - s->window) / s->page * s->page;
    /* from where the output was when draining began: the pages before it
     * went back as readers marked them, or are views of batches */
    if (!s->drained) s->drained = limit;
    if (limit > s->drained) tl_stream_give_back(s, s->drained, limit);
    if (limit > s->drained) s->drained = limit;
}

static void *stream_main(void *arg)
{
    Stream *s = arg;
    TlError err;
    int rc = 0;
    memset(&err, 0, sizeof err);
    while (rc == 0) {
        if (!stream_await_demand(s)) {
            rc = -1;
            s->exact = true;
            tl_error(&err, TL_ERR_DATA, "%s: decompression cancelled", tl_quote_name(s->name).s);
        } else {
            rc = stream_step(s, &err);
            if (rc < 0) stream_error(s, &err);
        }
        if (rc == 0 && __atomic_load_n(&s->drain, __ATOMIC_ACQUIRE)) stream_drain(s);
        else if (rc == 0 && s->decoded && s->out_pos > s->window &&
                 !__atomic_load_n(&s->shared, __ATOMIC_ACQUIRE))
            tl_stream_drop_marked(s, s->out_pos - s->window);
        if (rc == 0) stream_prefill(s);
        stream_publish(s, rc, &err);
    }
    return NULL;
}

static void stream_free(Stream *s)
{
    if (s->started || s->filler_started) {
        pthread_mutex_lock(&s->mu);
        __atomic_store_n(&s->cancel, 1, __ATOMIC_RELEASE);
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
    }
    if (s->started) pthread_join(s->thread, NULL);
    if (s->filler_started) pthread_join(s->filler, NULL);
    if (s->inputs) {
        pthread_mutex_lock(&s->inputs->streams_mu);
        for (Stream **pp = &s->inputs->streams; *pp; pp = &(*pp)->next)
            if (*pp == s) {
                *pp = s->next;
                break;
            }
        pthread_mutex_unlock(&s->inputs->streams_mu);
    }
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    ZSTD_freeDCtx(s->dctx);
    if (s->z_ready) inflateEnd(&s->z);
    if (s->own_fd) close(s->fd);
    tl_free(s->decoded);
    if (s->data) munmap(s->data, s->map_size);
    tl_held_add(s->inputs, -__atomic_load_n(&s->held, __ATOMIC_RELAXED));
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

/* See stream_impl.h. */
Stream *tl_stream_of(const TlBuf *b)
{
    return b && b->release == stream_release ? b->owner : NULL;
}

/* ---------------------------------------------------------------- start */

/* The size raw's zstd frames announce, 0 when they do not all announce
 * one (or cannot be walked); *window the largest frame window, SIZE_MAX
 * when a frame cannot be walked (its window is then unknown: nothing is
 * given back). */
static size_t zstd_frames(const TlBuf *raw, size_t *window)
{
    unsigned long long f = ZSTD_findDecompressedSize(raw->data, raw->size);
    size_t pos = 0;
    *window = 0;
    while (pos < raw->size) {
        ZSTD_frameHeader zfh;
        size_t fc = ZSTD_findFrameCompressedSize(raw->data + pos, raw->size - pos);
        if (ZSTD_isError(fc) || fc == 0 ||
            ZSTD_getFrameHeader(&zfh, raw->data + pos, raw->size - pos) != 0) {
            *window = SIZE_MAX;
            break;
        }
        if (zfh.frameType == ZSTD_frame && zfh.windowSize > *window)
            *window = zfh.windowSize > SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)zfh.windowSize;
        pos += fc;
    }
    if (f == ZSTD_CONTENTSIZE_UNKNOWN || f == ZSTD_CONTENTSIZE_ERROR || f > SIZE_MAX / 2)
        return 0;
    return (size_t)f;
}

/* The decoder state: libzstd with a stable output buffer, or zlib for
 * gzip members.  false: out of memory (err), or *whole set when libzstd
 * has no stable output (then the caller decompresses whole). */
static bool stream_codec(Stream *s, bool *whole, TlError *err)
{
    *whole = false;
    if (s->codec == TL_COMP_GZIP) {
        s->z.zalloc = tl_z_alloc;
        s->z.zfree = tl_z_free;
        if (inflateInit2(&s->z, 16 + MAX_WBITS) != Z_OK) {
            tl_error_oom(err);
            return false;
        }
        s->z_ready = true;
        return true;
    }
    s->dctx = ZSTD_createDCtx_advanced(tl_zs_mem);
    if (!s->dctx) {
        tl_error_oom(err);
        return false;
    }
    if (ZSTD_isError(ZSTD_DCtx_setParameter(s->dctx, ZSTD_d_stableOutBuffer, 1))) {
        *whole = true;
        return false;
    }
    return true;
}

/* Map the output: the announced size and slack, or a reservation of what
 * n compressed bytes can expand to, halved while the address space will
 * not have it (ulimit -v).  false: no room at all. */
static bool stream_map(Stream *s, size_t n)
{
    size_t ratio = s->codec == TL_COMP_GZIP ? RATIO_GZIP : RATIO_ZSTD;
    if (s->known) {
        s->map_size = s->size + STREAM_SLACK;
    } else {
        s->map_size = n < (RESERVE_MAX - STREAM_SLACK) / ratio ? n * ratio + STREAM_SLACK
                                                               : RESERVE_MAX;
        s->map_size = (s->map_size + 4095) / 4096 * 4096;
    }
    for (;;) {
        s->data = mmap(NULL, s->map_size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (s->data != MAP_FAILED) break;
        s->data = NULL;
        if (s->known || s->map_size < 2 * STREAM_MIN) return false;
        s->map_size /= 2;
    }
    if (!s->known) s->size = s->map_size - STREAM_SLACK;
    return true;
}

/* An unannounced stream that ended while opening: an ordinary buffer of
 * its bytes (NULL: out of memory). */
static TlBuf *stream_whole(Stream *s)
{
    uint8_t *p = tl_malloc(s->out_pos ? s->out_pos : 1);
    TlBuf *b;
    if (!p) return NULL;
    memcpy(p, s->data, s->out_pos);
    b = tl_buf_adopt(p, s->out_pos);
    if (!b) tl_free(p);
    return b;
}

/* Hand s out as *out (the buffer owns it from here), register it with the
 * run's inputs, and, unless step rc already ended it, start its thread
 * (after the page filler, when filler: stream_main reads filler_started);
 * without a thread the stream is finished here. */
static TlStatus stream_go(Stream *s, int rc, bool filler, TlBuf **out, TlError *err)
{
    *out = tl_buf_wrap(s->data, s->size, stream_release, s);
    if (!*out) {
        stream_free(s);
        return tl_error_oom(err);
    }
    s->buf = *out;
    if (s->inputs) {
        pthread_mutex_lock(&s->inputs->streams_mu);
        s->next = s->inputs->streams;
        s->inputs->streams = s;
        pthread_mutex_unlock(&s->inputs->streams_mu);
    }
    if (rc != 0) return TL_OK;
    if (filler && pthread_create(&s->filler, NULL, stream_fill_main, s) == 0)
        s->filler_started = true;
    if (pthread_create(&s->thread, NULL, stream_main, s) == 0) {
        s->started = true;
    } else {
        TlError e;
        while (rc == 0) rc = stream_step(s, &e);
        if (rc < 0) stream_error(s, &e);
        stream_publish(s, rc, &e);
    }
    return TL_OK;
}

/* See compress_impl.h. */
TlStatus tl_stream_start(const TlCtx *ctx, TlCompression c, const char *name,
                         TlBuf *raw, TlBuf **out, TlError *err)
{
    Stream *s;
    const TlTuning *tune = TL_TUNING(ctx);
    size_t step = STREAM_STEP, min = STREAM_MIN, announced = 0, window = 0;
    bool whole;
    long ps;
    int rc;
    *out = NULL;
    if ((c != TL_COMP_ZSTD && c != TL_COMP_GZIP) || tune->no_stream) return TL_OK;
    if (tune->stream_step > 0) {
        /* tests: stream any size, in steps of this many bytes */
        step = tune->stream_step;
        min = 1;
    }
    if (raw->size < 4 || tl_compression_sniff(raw->data, raw->size) != c) return TL_OK;
    if (c == TL_COMP_ZSTD) {
        announced = zstd_frames(raw, &window);
        if (announced && announced < min) return TL_OK;
    } else {
        window = (size_t)1 << 15;
    }
    s = tl_calloc(1, sizeof *s);
    if (!s) return tl_error_oom(err);
    s->codec = c;
    s->inputs = ctx ? ctx->inputs : NULL;
    s->known = announced > 0;
    s->size = announced;
    s->step = step;
    s->window = window;
    s->name = tl_strdup(name);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (!s->name) {
        stream_free(s);
        return tl_error_oom(err);
    }
    if (!stream_codec(s, &whole, err)) {
        stream_free(s);
        return whole ? TL_OK : err->code; /* whole: decompress it whole */
    }
    if (!stream_map(s, raw->size)) {
        stream_free(s);
        return TL_OK; /* no room to map: decompress it whole */
    }
    s->raw = tl_buf_retain(raw);
    /* pages readers are done with (tl_input_drop_read) */
    ps = sysconf(_SC_PAGESIZE);
    s->page = ps > 0 ? (size_t)ps : 4096;
    s->n_pages = s->map_size / s->page + 1;
    if (s->window != SIZE_MAX) {
        s->window += (size_t)64 << 10; /* drops run between steps: margin only */
        /* decoded and the edge bitmaps: one allocation */
        size_t words = s->n_pages / 64 + 1;
        s->decoded = tl_calloc(6 * words, sizeof *s->decoded);
        s->left = s->decoded + words;
        s->right = s->left + words;
        s->multi = s->right + words;
        s->bound = s->multi + words;
        s->edged = s->bound + words;
        s->no_recycle = tune->no_recycle;
        if (!s->decoded) {
            stream_free(s);
            return tl_error_oom(err);
        }
    }
    s->in.src = raw->data;
    s->in.size = raw->size;
    /* the first steps here: the codec allocates its buffers on this
     * thread; an unannounced size is known if it ends within min */
    do {
        rc = stream_step(s, err);
    } while (rc == 0 && !s->known && s->out_pos < min);
    if (rc < 0) {
        TlStatus st;
        stream_error(s, err);
        st = err->code;
        stream_free(s);
        return st;
    }
    if (rc > 0 && !s->known && s->out_pos < min) {
        *out = stream_whole(s);
        stream_free(s);
        return *out ? TL_OK : tl_error_oom(err);
    }
    if (rc > 0 && !s->known) {
        /* ended past min in the first steps: its size is known now */
        stream_seal(s);
        s->known = true;
        s->size = s->out_pos;
    }
    if (rc > 0) stream_seal(s);
    s->ready = s->out_pos < s->size ? s->out_pos : s->size;
    s->state = rc > 0 ? ST_DONE : ST_RUNNING;
    return stream_go(s, rc, !tune->no_prefill, out, err);
}

/* pipe: the rest of fd after first[0, n) into one ordinary buffer, as
 * format.c reads a pipe whole. */
static TlStatus pipe_whole(int fd, const char *name, const uint8_t *first, size_t n,
                           TlBuf **out, TlError *err)
{
    size_t cap = n > ((size_t)1 << 16) ? n * 2 : (size_t)1 << 16, len = n;
    uint8_t *data = tl_malloc(cap);
    if (!data) return tl_error_oom(err);
    memcpy(data, first, n);
    for (;;) {
        ssize_t got;
        if (len == cap) {
            uint8_t *g = cap > SIZE_MAX / 2 ? NULL : tl_realloc(data, cap * 2);
            if (!g) {
                tl_free(data);
                return tl_error_oom(err);
            }
            data = g;
            cap *= 2;
        }
        got = read(fd, data + len, cap - len);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            int e = errno;
            tl_free(data);
            return tl_error(err, TL_ERR_IO, "cannot read %s: %s", tl_quote_name(name).s,
                            strerror(e));
        }
        if (got == 0) break;
        len += (size_t)got;
    }
    *out = tl_buf_adopt(data, len);
    if (!*out) {
        tl_free(data);
        return tl_error_oom(err);
    }
    return TL_OK;
}

/* See compress.h. */
TlStatus tl_stream_pipe(const TlCtx *ctx, int fd, bool own, const char *name, TlBuf **out,
                        TlError *err)
{
    uint8_t first[4096];
    size_t n = 0;
    Stream *s;
    long ps;
    TlStatus st;
    *out = NULL;
    /* enough to tell a compressed input by its magic bytes, or the end */
    while (n < 4) {
        ssize_t got = read(fd, first + n, sizeof first - n);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            st = tl_error(err, TL_ERR_IO, "cannot read %s: %s", tl_quote_name(name).s,
                          strerror(errno));
            if (own) close(fd);
            return st;
        }
        if (got == 0) break;
        n += (size_t)got;
    }
    s = n < 4 || tl_compression_sniff(first, n) != TL_COMP_NONE ? NULL
                                                                 : tl_calloc(1, sizeof *s);
    if (s) {
        s->map_size = RESERVE_MAX;
        for (;;) {
            s->data = mmap(NULL, s->map_size, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (s->data != MAP_FAILED) break;
            s->data = NULL;
            if (s->map_size < 2 * STREAM_MIN) break;
            s->map_size /= 2;
        }
        if (!s->data) {
            tl_free(s);
            s = NULL;
        }
    }
    if (!s) {
        /* the end came, or a compressed input (decompressed whole, as
         * before), or no address space: read it whole */
        st = pipe_whole(fd, name, first, n, out, err);
        if (own) close(fd);
        return st;
    }
    s->pipe = true;
    s->fd = fd;
    s->own_fd = own;
    s->exact = true;
    s->window = SIZE_MAX; /* nothing is given back: a pipe is read once */
    s->inputs = ctx ? ctx->inputs : NULL;
    s->size = s->map_size - STREAM_SLACK;
    ps = sysconf(_SC_PAGESIZE);
    s->page = ps > 0 ? (size_t)ps : 4096;
    s->n_pages = s->map_size / s->page + 1;
    s->name = tl_strdup(name);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (!s->name) {
        stream_free(s);
        return tl_error_oom(err);
    }
    memcpy(s->data, first, n);
    s->out_pos = s->ready = n;
    s->state = ST_RUNNING;
    return stream_go(s, 0, false, out, err);
}

