/*
 * stream_impl.h -- what the two halves of a streamed input share: the
 * decompressor's side (stream.c: the thread, its steps, the start) and
 * the readers' side (stream_pages.c: recycling and giving pages back,
 * pins, waiting for bytes).  stream.c's comment tells the whole design.
 */
#ifndef TL_STREAM_IMPL_H
#define TL_STREAM_IMPL_H

#include "compress_impl.h"

#define STREAM_LEAD ((size_t)16 << 20)  /* output ahead of the readers' demand */
#define RECYCLE_AHEAD ((size_t)16 << 20) /* recycled pages waiting ahead */
#define RECYCLE_LAG ((size_t)4 << 20)    /* partial chunks wait this long */

enum { ST_RUNNING, ST_DONE, ST_FAILED };

typedef struct Stream {
    TlCompression codec;
    bool pipe;                /* a pipe read as it comes (tl_stream_pipe) */
    int fd;                   /* pipe: its descriptor */
    bool own_fd;              /* pipe: fd is closed with the stream */
    TlBuf *raw;               /* the compressed bytes (a reference) */
    char *name;               /* for messages */
    uint8_t *data;            /* map_size bytes mapped; the first size used */
    size_t size, map_size;    /* size: announced, or the reservation */
    bool known;               /* the frames announced the size */
    size_t end;               /* atomic: the final size once known, else 0 */
    size_t step;              /* input per step (STREAM_STEP) */
    ZSTD_DCtx *dctx;          /* zstd: the thread's after the start */
    z_stream z;               /* gzip: the same */
    bool z_ready;
    ZSTD_inBuffer in;         /* the compressed bytes and how far read */
    size_t out_pos;
    bool exact;               /* the failing step's message is the whole path's */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t ready;             /* under mu; also read atomically */
    size_t demand;            /* under mu: the most bytes a reader waited for */
    int state;                /* under mu; also read atomically */
    TlError err;              /* ST_FAILED: why (written before state) */
    int cancel;               /* atomic: the buffer is going away */
    int drain;                /* atomic: nobody reads on: give everything back */
    pthread_t thread;
    bool started;
    int holed;                /* atomic: pages were marked or dropped (tl_input_drop_read) */
    uint64_t *decoded;        /* atomic bits: pages readers are done with */
    uint64_t *left, *right, *multi, *bound, *edged; /* edge pages (edge_done) */
    size_t cut_begin, cut_end; /* the splitter's: the last morsel cut */
    size_t n_pages, page, window; /* window: the largest frame window */
    size_t drained;           /* the decompressor's: given back below this */
    int shared;               /* atomic: more than one reader: never drop */
    size_t fill;              /* the decompressor's: next recycling target chunk */
    pthread_t filler;         /* prefaults fresh chunks ahead (stream_fill_main) */
    bool filler_started;
    size_t pop_lo, pop_hi;    /* under mu: chunks the filler is to prefault */
    bool no_recycle;          /* the decompressor's: drop pages, never move them */
    int64_t held;             /* atomic: bytes counted in tl_held_add */
    TlBuf *buf;               /* the buffer handed out (not a reference) */
    TlInputs *inputs;         /* the run's (its registry and held count), or NULL */
    struct Stream *next;      /* the registry */
} Stream;

/* The held-bytes counter, for this stream and its run. */
void tl_stream_held(Stream *s, int64_t n);
/* Give back [lo, hi) of s's mapping (page-aligned by the caller). */
void tl_stream_give_back(Stream *s, size_t lo, size_t hi);
/* The stream behind b, or NULL when b is an ordinary buffer. */
Stream *tl_stream_of(const TlBuf *b);
/* Recycling (stream_pages.c): chunks readers are done with wholly moved
 * ahead of the output or given back, below limit; chunks done with in
 * part dropped once they lie `late` behind (whole: every one). */
void tl_stream_drop_marked(Stream *s, size_t limit);
void tl_stream_drop_partial(Stream *s, size_t late, bool whole);

#endif
