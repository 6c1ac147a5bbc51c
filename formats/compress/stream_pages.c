/*
 * stream_pages.c -- the readers' side of a streamed input (stream.c tells
 * the design): pages readers are done with, recycled ahead of the
 * decompressor's output or given back; the morsels' pins; waiting for
 * bytes and for the end; the run's check of its streams.
 */
#include "stream_impl.h"

#include <errno.h>
#include <sys/mman.h>

/* ------------------------------------------------------------ recycling */

/* Recycling.  A chunk is the 64 pages of one word of the decoded bitmap.
 * A chunk readers are done with wholly is moved (mremap, MREMAP_DONTUNMAP:
 * its old place stays mapped and reads as zeros, as after MADV_DONTNEED)
 * to the first chunk wholly ahead of the output, where the decoder writes
 * into it next: the pages keep their physical memory, so the decompressor
 * neither faults on fresh memory (zeroing, cgroup charge: expensive on a
 * VM that gives freed pages back to the host) nor pays for giving pages
 * back.  Moves are whole aligned chunks, so a mapping (a moved chunk is a
 * mapping of its own) never straddles one and every move is one mremap.
 * Targets lie wholly before the announced size (readers may rely on zeros
 * past it; an unannounced stream's end is zeroed when it comes,
 * stream_seal), and at most RECYCLE_AHEAD bytes wait ahead of the output,
 * so memory stays bounded.  A chunk with pages readers keep (the page
 * holding a morsel's last byte) is dropped (MADV_DONTNEED) page run by
 * page run once it lies RECYCLE_LAG behind the window; until then the
 * rest of its pages may still come. */
static bool stream_move(Stream *s, size_t w, size_t n)
{
    size_t chunk = 64 * s->page;
    return mremap(s->data + w * chunk, n * chunk, n * chunk,
                  MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP,
                  s->data + s->fill * chunk) != MAP_FAILED;
}

/* Recycle or drop the n whole chunks from chunk w on.  Consecutive chunks
 * that were moved together lie in one mapping and move in one mremap; a
 * run that spans mappings (EFAULT) moves a chunk at a time.  A recycled
 * chunk leaves the held count (its bytes are gone; the output that
 * overwrites it counts again). */
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
        tl_stream_held(s, -(int64_t)(k * chunk));
        s->fill += k;
        w += k;
        n -= k;
    }
    if (n) tl_stream_give_back(s, w * chunk, (w + n) * chunk);
}

/* Drop the marked pages of the chunks before chunk late that readers are
 * done with in part (whole ones are the decompressor's to recycle, unless
 * whole is set). */
void tl_stream_drop_partial(Stream *s, size_t late, bool whole)
{
    for (size_t w = 0; w < late; w++) {
        uint64_t bits = __atomic_load_n(&s->decoded[w], __ATOMIC_RELAXED);
        if (!bits || (bits == ~(uint64_t)0 && !whole)) continue;
        bits = __atomic_exchange_n(&s->decoded[w], 0, __ATOMIC_ACQ_REL);
        while (bits) {
            int b = __builtin_ctzll(bits), e = b;
            while (e < 64 && (bits >> e & 1)) e++;
            tl_stream_give_back(s, (w * 64 + (size_t)b) * s->page, (w * 64 + (size_t)e) * s->page);
            bits &= e == 64 ? 0 : ~(uint64_t)0 << e;
        }
    }
}

/* Give back the pages marked decoded that lie wholly before limit
 * (libzstd still reads the last window of output for its matches):
 * whole chunks are recycled; partial ones are dropped once they lie
 * RECYCLE_LAG further behind (the rest of their pages may still come), by
 * the filler thread when there is one, at once when not recycling. */
void tl_stream_drop_marked(Stream *s, size_t limit)
{
    size_t words = (limit / s->page) / 64, late = 0, run = 0, n = 0;
    if (s->no_recycle) {
        tl_stream_drop_partial(s, words, true);
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
    if (late) tl_stream_drop_partial(s, late, false);
}

/* ------------------------------------------------------------- readers */

/* Pages [lo, hi) are done with: marked for the decompressor, or given
 * back at once when it is gone (nothing reads the window any more). */
static void mark_pages(Stream *s, size_t lo, size_t hi)
{
    if (hi > s->n_pages) hi = s->n_pages;
    if (hi <= lo) return;
    if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == ST_DONE) {
        tl_stream_give_back(s, lo * s->page, hi * s->page);
        return;
    }
    for (size_t p = lo; p < hi; p++)
        __atomic_fetch_or(&s->decoded[p / 64], (uint64_t)1 << (p % 64), __ATOMIC_RELEASE);
}

/* Edge pages.  The page holding byte x - 1 of a morsel boundary x (the
 * last byte of one morsel, which the next may read: a message looks back
 * to its line's start; and, unless x is page-aligned, the first bytes of
 * the next) is done with when the morsels on both sides are: the one
 * before sets `left`, the one after `right` (so a morsel reported twice,
 * by a wrapping reader and its inner one, counts once), and whichever
 * sees both marks it, once (`edged`).  A page holding two boundaries or
 * more (morsels smaller than a page) is never given back: morsels in
 * between may still read it (`multi`, set by tl_input_cut before such a
 * morsel is handed out).  Batches that view the input never call this,
 * so their pages stay. */
static void edge_done(Stream *s, size_t p, uint64_t *mine, uint64_t *other)
{
    uint64_t bit = (uint64_t)1 << (p % 64);
    if (p >= s->n_pages || (__atomic_load_n(&s->multi[p / 64], __ATOMIC_ACQUIRE) & bit))
        return;
    __atomic_fetch_or(&mine[p / 64], bit, __ATOMIC_SEQ_CST);
    if (!(__atomic_load_n(&other[p / 64], __ATOMIC_SEQ_CST) & bit)) return;
    if (__atomic_fetch_or(&s->edged[p / 64], bit, __ATOMIC_ACQ_REL) & bit) return;
    mark_pages(s, p, p + 1);
}

/* The splitter registers boundary x's page (see edge_done). */
static void edge_cut(Stream *s, size_t x)
{
    size_t p = (x - 1) / s->page;
    uint64_t bit = (uint64_t)1 << (p % 64);
    if (x == 0 || p >= s->n_pages) return;
    if (s->bound[p / 64] & bit)
        __atomic_fetch_or(&s->multi[p / 64], bit, __ATOMIC_RELEASE);
    s->bound[p / 64] |= bit;
}

/* See fmt_impl.h. */
void tl_input_cut(const TlBuf *b, size_t begin, size_t end)
{
    Stream *s = tl_stream_of(b);
    if (!s || !s->decoded || end <= begin) return;
    if (begin == s->cut_begin && end == s->cut_end) return; /* a wrapper's again */
    if (begin != s->cut_end) edge_cut(s, begin);
    edge_cut(s, end);
    s->cut_begin = begin;
    s->cut_end = end;
}

/* See fmt_impl.h.  The pages wholly in [begin, end) are marked, but the
 * one holding byte end - 1; it and the one holding begin - 1 are edge
 * pages (edge_done).  The decompressor gives marked pages back once they
 * are a window behind it (stream_drop_marked). */
void tl_input_drop_read(const TlBuf *b, size_t begin, size_t end)
{
    Stream *s = tl_stream_of(b);
    size_t lo, hi;
    if (!s || !s->decoded || __atomic_load_n(&s->shared, __ATOMIC_ACQUIRE)) return;
    if (end <= begin || end > __atomic_load_n(&s->ready, __ATOMIC_ACQUIRE)) return;
    /* from now on a reopen decompresses anew: the marks are this reader's */
    __atomic_store_n(&s->holed, 1, __ATOMIC_RELEASE);
    lo = (begin + s->page - 1) / s->page;
    hi = end / s->page;
    if (end % s->page == 0 && hi > lo) hi--;
    mark_pages(s, lo, hi);
    if (begin > 0) edge_done(s, (begin - 1) / s->page, s->right, s->left);
    edge_done(s, (end - 1) / s->page, s->left, s->right);
}

/* Pins (fmt_impl.h, tl_input_pin).  A batch's string views of the input
 * go through wraps of the same bytes whose release drops a reference of
 * the pin; the morsel itself holds one until it is over.  The last
 * release marks the morsel's pages (tl_input_drop_read) unless a view
 * could not be moved (`keep`: the pages then stay, as without pins). */
struct TlPin {
    TlBuf *input;             /* a reference */
    size_t begin, end;
    int64_t refs;             /* atomic */
    int keep;                 /* atomic */
};

static void pin_release(void *owner, uint8_t *data, size_t size)
{
    TlPin *p = owner;
    (void)data;
    (void)size;
    if (__atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    if (!__atomic_load_n(&p->keep, __ATOMIC_ACQUIRE))
        tl_input_drop_read(p->input, p->begin, p->end);
    tl_buf_release(p->input);
    tl_free(p);
}

/* See fmt_impl.h. */
TlPin *tl_input_pin(const TlBuf *b, size_t begin, size_t end)
{
    Stream *s = tl_stream_of(b);
    TlPin *p;
    if (!s || !s->decoded || __atomic_load_n(&s->shared, __ATOMIC_ACQUIRE)) return NULL;
    p = tl_calloc(1, sizeof *p);
    if (!p) return NULL;
    p->input = tl_buf_retain((TlBuf *)(uintptr_t)b);
    p->begin = begin;
    p->end = end;
    p->refs = 1;
    return p;
}

/* See fmt_impl.h.  Only arrays the batch alone holds (just decoded) are
 * changed. */
void tl_pin_views(TlPin *p, TlBatch *batch)
{
    if (!p || !batch) return;
    for (int c = 0; c < batch->n_cols; c++) {
        TlArray *a = batch->cols[c];
        for (uint32_t i = 0; a && i < a->n_data; i++) {
            TlBuf *old = a->data[i], *w;
            if (!old || (old != p->input && old->parent != p->input)) continue;
            w = __atomic_load_n(&a->refcount, __ATOMIC_ACQUIRE) == 1
                    ? tl_buf_wrap(old->data, old->size, pin_release, p) : NULL;
            if (!w) {
                __atomic_store_n(&p->keep, 1, __ATOMIC_RELEASE);
                continue;
            }
            __atomic_add_fetch(&p->refs, 1, __ATOMIC_ACQ_REL);
            a->data[i] = w;
            tl_buf_release(old);
        }
    }
}

/* See fmt_impl.h. */
void tl_pin_done(TlPin *p)
{
    if (p) pin_release(p, NULL, 0);
}

/* See fmt_impl.h. */
void tl_input_share(const TlBuf *b)
{
    Stream *s = tl_stream_of(b);
    if (s) __atomic_store_n(&s->shared, 1, __ATOMIC_RELEASE);
}

/* See compress_impl.h. */
bool tl_stream_holed(const TlBuf *b)
{
    Stream *s = tl_stream_of(b);
    return s && __atomic_load_n(&s->holed, __ATOMIC_ACQUIRE);
}

/* See fmt_impl.h. */
TlStatus tl_input_restream(const TlCtx *ctx, const char *path, TlBuf **b,
                           TlError *err)
{
    Stream *s = tl_stream_of(*b);
    TlCompression c;
    TlBuf *raw, *res = NULL;
    TlStatus st;
    if (!s || !tl_stream_holed(*b)) return TL_OK;
    c = s->codec;
    raw = tl_buf_retain(s->raw);
    tl_buf_release(*b);
    *b = NULL;
    st = tl_stream_start(ctx, c, tl_input_name(path), raw, &res, err);
    if (st == TL_OK && !res)
        st = tl_decompress(ctx ? ctx->inputs : NULL, c, tl_input_name(path), raw->data,
                           raw->size, &res, err);
    tl_buf_release(raw);
    *b = res;
    return st;
}

/* See fmt_impl.h. */
bool tl_input_streaming(const TlBuf *b)
{
    Stream *s = tl_stream_of(b);
    return s && __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != ST_DONE;
}

/* See fmt_impl.h. */
bool tl_input_is_stream(const TlBuf *b)
{
    return tl_stream_of(b) != NULL;
}

/* See fmt_impl.h. */
size_t tl_input_size(const TlBuf *b)
{
    Stream *s = tl_stream_of(b);
    size_t end;
    if (!s) return b ? b->size : 0;
    if (s->known) return s->size;
    end = __atomic_load_n(&s->end, __ATOMIC_ACQUIRE);
    return end ? end : b->size;
}

/* Readers asked for want bytes: the decompressor may go on to
 * STREAM_LEAD past them. */
static void stream_demand(Stream *s, size_t want)
{
    if (want <= __atomic_load_n(&s->demand, __ATOMIC_RELAXED)) return;
    pthread_mutex_lock(&s->mu);
    if (want > s->demand) {
        __atomic_store_n(&s->demand, want, __ATOMIC_RELAXED);
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
}

/* See fmt_impl.h. */
TlStatus tl_input_wait(const TlBuf *b, size_t want, size_t *ready, TlError *err)
{
    Stream *s = tl_stream_of(b);
    size_t got;
    TlStatus st = TL_OK;
    if (!s) {
        if (ready) *ready = b ? b->size : 0;
        return TL_OK;
    }
    if (want > s->size) want = s->size;
    stream_demand(s, want);
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

/* Wait for s's end; its error if it failed. */
static TlStatus stream_finish(Stream *s, TlError *err)
{
    TlStatus st = TL_OK;
    stream_demand(s, SIZE_MAX);
    pthread_mutex_lock(&s->mu);
    while (s->state == ST_RUNNING) pthread_cond_wait(&s->cv, &s->mu);
    if (s->state == ST_FAILED) {
        *err = s->err;
        st = err->code;
    }
    pthread_mutex_unlock(&s->mu);
    return st;
}

/* See fmt_impl.h: the caller reads to the end, so the output is no longer
 * held back (the memory is then the whole input's). */
TlStatus tl_input_finish(const TlBuf *b, TlError *err)
{
    Stream *s = tl_stream_of(b);
    return s ? stream_finish(s, err) : TL_OK;
}

/* See compress.h.  A stream only the restart cache holds belongs to no
 * reader of this attempt (an earlier attempt of the run read it).  The
 * others are drained: the run is over, so their pages go back as the rest
 * is decompressed. */
TlStatus tl_input_check_streams(const TlCtx *ctx, TlError *err)
{
    TlInputs *in = ctx ? ctx->inputs : NULL;
    TlStatus st = TL_OK;
    if (!in) return TL_OK;
    pthread_mutex_lock(&in->streams_mu);
    for (Stream *s = in->streams; s && st == TL_OK; s = s->next) {
        if (tl_compress_cache_only(in, s->buf)) continue;
        if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == ST_RUNNING &&
            !__atomic_load_n(&s->shared, __ATOMIC_ACQUIRE))
            __atomic_store_n(&s->drain, 1, __ATOMIC_RELEASE);
        st = stream_finish(s, err);
    }
    pthread_mutex_unlock(&in->streams_mu);
    return st;
}
