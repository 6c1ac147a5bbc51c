/*
 * write_common.c -- the text writers' shared output buffer and their
 * in-order parallel pipeline (write_common.h).
 *
 * Formatting is the writer's main cost and every batch formats on its own,
 * so batches are formatted in parallel on the thread pool (lib/core/pool.h)
 * and their bytes go to the sink from the calling thread, strictly in input
 * order: the output is the same bytes for every thread count.
 *
 *   put(batch)   cut into slices of whole chunks, sized by the output
 *                bytes per row seen so far to about SLICE_BYTES (so memory
 *                stays bounded for wide rows); each slice takes a
 *                slot of a ring (n_slots = 2 x threads, at most 64), holding
 *                references to the batch's columns, its row range and its
 *                own TlWriteBuf, and is queued as a pool task
 *   task         formats its rows into the slot's buffer, drops the column
 *                references, marks the slot done (under the pipe's TlWait)
 *   in order     the calling thread writes the oldest slot as soon as it is
 *                done; when every slot is busy it waits for the oldest,
 *                helping with queued tasks meanwhile (tl_wait_step), so
 *                with a single thread everything still runs
 *
 *   slots:   [head: done -> write] [busy] [busy] [free] ...
 *
 * Inline: with one thread (--threads 1) nothing is queued at all, and with
 * more a small batch (< SMALL_ROWS rows) arriving while nothing is in
 * flight is formatted on the calling thread too: a small output never
 * starts a worker.  Inline slices go through the same buffer, in order.
 *
 * Errors: a slot records its task's error (out of memory growing its
 * buffer); it is reported when that slot's turn comes, so the earliest
 * failure in output order wins, also over an error of the calling thread
 * (which first waits for the slots in flight and checks them).  The first
 * error sticks: no byte is written after it, and every later call returns
 * it.  free() waits for every busy slot before freeing what tasks use.
 *
 * Counters (NDJSON's warnings) are per slot and summed when the slot is
 * written, so they are the same for every thread count.
 *
 * Sized by the output, not for the largest one: a buffer's scratch starts
 * at FIRST_CHUNK rows per chunk and grows (up to tl_write_chunk_rows) when
 * a slice needs more, its bytes start at 4 KiB and double, and the ring's
 * slots past the first are allocated when a batch first goes to the pool.
 * A ten-row output so touches a few pages, not ~300 KB (start-up time:
 * every fresh page costs a fault).  Chunk sizes never change the bytes.
 */
#include "write_common.h"
#include "../lib/core/pool.h"
#include "../lib/core/text.h"

#include <stdio.h>

#define SMALL_ROWS 4096
#define MAX_SLOTS 64
#define SLICE_BYTES ((size_t)2 << 20) /* aimed-at output bytes per slice */
#define MAX_CHUNKS 64                 /* slice rows <= 64 chunks */
#define FIRST_CHUNK 16                /* rows per chunk of a new buffer */
#define FIRST_OUT ((size_t)4 << 10)   /* first capacity of a buffer's bytes */

enum { SLOT_FREE = 0, SLOT_BUSY, SLOT_DONE };

typedef struct Slot {
    TlWritePipe *pipe;
    TlBatch *batch;      /* references to the columns (task frees) */
    int64_t off, n;      /* the slice's rows */
    TlWriteBuf buf;
    bool ready;          /* buf allocated */
    int state;           /* SLOT_*; BUSY -> DONE under pipe->wait */
    TlStatus st;         /* the task's result */
    TlError err;
} Slot;

struct TlWritePipe {
    TlSink *sink;
    int n_cols;
    const TlWriteFormat *f;
    const void *ctx;
    int n_slots, head, inflight;
    int n_alloc;         /* slots allocated: 1, or n_slots once parallel */
    Slot *slots;
    TlWait *wait;        /* NULL: one thread, everything inline */
    int64_t chunk;       /* rows per chunk */
    size_t row_bytes;    /* output bytes per row, estimated (>= 1) */
    int64_t count[TL_WRITE_COUNTERS];
    TlStatus st;         /* the first error, sticky */
    TlError err;
};

/* ------------------------------------------------------------ buffers */

/* See write_common.h. */
int64_t tl_write_chunk_rows(int n_cols)
{
    if (n_cols <= 16) return 1024;
    return 16384 / n_cols < 16 ? 16 : 16384 / n_cols;
}

/* Give b scratch (pieces, text) for chunks of `chunk` rows, replacing
 * what it had (its contents are scratch).  false on OOM, b unchanged. */
static bool buf_scratch(TlWriteBuf *b, int n_cols, int64_t chunk)
{
    size_t cols = (size_t)(n_cols > 0 ? n_cols : 0) + 1;
    TlPiece *pc = tl_malloc(cols * (size_t)chunk * sizeof *pc);
    uint8_t *t = pc ? tl_malloc(cols * (size_t)chunk * TL_FMT_MAX) : NULL;
    if (!t) {
        tl_free(pc);
        return false;
    }
    tl_free(b->pieces);
    tl_free(b->text);
    b->pieces = pc;
    b->text = t;
    b->chunk = chunk;
    return true;
}

/* See write_common.h.  The first scratch is small (FIRST_CHUNK rows, a
 * header needs one); buf_fit grows it for the slices that need more. */
bool tl_write_buf_init(TlWriteBuf *b, int n_cols)
{
    int64_t full = tl_write_chunk_rows(n_cols);
    memset(b, 0, sizeof *b);
    return buf_scratch(b, n_cols, full < FIRST_CHUNK ? full : FIRST_CHUNK);
}

/* Make b's chunks hold a slice of `rows` rows in one chunk, up to the full
 * tl_write_chunk_rows (at least doubling, so a run of growing slices
 * reallocates a few times only).  false on OOM, b unchanged. */
static bool buf_fit(TlWriteBuf *b, int n_cols, int64_t rows)
{
    int64_t full = tl_write_chunk_rows(n_cols), want = rows < full ? rows : full;
    if (b->chunk >= want) return true;
    if (want < 2 * b->chunk) want = 2 * b->chunk < full ? 2 * b->chunk : full;
    return buf_scratch(b, n_cols, want);
}

/* See write_common.h. */
void tl_write_buf_free(TlWriteBuf *b)
{
    if (!b) return;
    tl_free(b->out);
    tl_free(b->pieces);
    tl_free(b->text);
    memset(b, 0, sizeof *b);
}

/* See write_common.h. */
bool tl_write_buf_grow(TlWriteBuf *b, size_t need)
{
    size_t cap = b->cap ? b->cap : FIRST_OUT;
    uint8_t *g;
    while (cap < b->len + need) cap *= 2;
    g = tl_realloc(b->out, cap);
    if (!g) return false;
    b->out = g;
    b->cap = cap;
    return true;
}

/* See write_common.h. */
int64_t tl_write_value_pieces(const TlArray *a, int64_t off, int64_t n, TlPiece *pc,
                              uint8_t **text, uint32_t temporal_kind,
                              bool nonfinite_null)
{
    const bool nulls = a->type == TL_TNULL || a->null_count > 0;
    uint8_t *t = *text;
    int64_t nonfinite = 0;
    switch (a->type) {
    case TL_TBOOL:
        for (int64_t i = 0; i < n; i++) {
            if (nulls && !tl_array_valid(a, off + i)) {
                pc[i] = (TlPiece){NULL, 0, TL_PIECE_NULL};
                continue;
            }
            pc[i] = tl_array_bool(a, off + i)
                        ? (TlPiece){(const uint8_t *)"true", 4, TL_PIECE_PLAIN}
                        : (TlPiece){(const uint8_t *)"false", 5, TL_PIECE_PLAIN};
        }
        break;
    case TL_TFLOAT64: {
        const double *d = tl_array_f64(a) + off;
        for (int64_t i = 0; i < n; i++) {
            size_t len;
            if (nulls && !tl_array_valid(a, off + i)) {
                pc[i] = (TlPiece){NULL, 0, TL_PIECE_NULL};
                continue;
            }
            if (nonfinite_null && !__builtin_isfinite(d[i])) {
                nonfinite++;
                pc[i] = (TlPiece){NULL, 0, TL_PIECE_NULL};
                continue;
            }
            len = tl_fmt_f64(d[i], (char *)t);
            pc[i] = (TlPiece){t, (uint32_t)len, TL_PIECE_PLAIN};
            t += len;
        }
        break;
    }
#define FORMAT_LOOP(GET, FMT, KIND)                                            \
    for (int64_t i = 0; i < n; i++) {                                          \
        size_t len;                                                            \
        if (nulls && !tl_array_valid(a, off + i)) {                            \
            pc[i] = (TlPiece){NULL, 0, TL_PIECE_NULL};                         \
            continue;                                                          \
        }                                                                      \
        len = FMT(GET(a)[off + i], (char *)t);                                 \
        pc[i] = (TlPiece){t, (uint32_t)len, KIND};                             \
        t += len;                                                              \
    }
    case TL_TINT64:
        FORMAT_LOOP(tl_array_i64, tl_fmt_i64, TL_PIECE_PLAIN)
        break;
    case TL_TDATE:
        FORMAT_LOOP(tl_array_i32, tl_fmt_date, temporal_kind)
        break;
    case TL_TTIMESTAMP:
        FORMAT_LOOP(tl_array_i64, tl_fmt_timestamp, temporal_kind)
        break;
    case TL_TTIMESTAMPTZ:
        FORMAT_LOOP(tl_array_i64, tl_fmt_timestamptz, temporal_kind)
        break;
#undef FORMAT_LOOP
    default: /* type null (and strings, which callers spell themselves) */
        for (int64_t i = 0; i < n; i++) pc[i] = (TlPiece){NULL, 0, TL_PIECE_NULL};
        break;
    }
    *text = t;
    return nonfinite;
}

/* See write_common.h. */
TlStatus tl_write_format_rows(const TlWriteFormat *f, const void *ctx,
                              const TlBatch *batch, int n_cols, int64_t off,
                              int64_t n, TlWriteBuf *b, TlError *err)
{
    const int64_t chunk = b->chunk;
    for (int64_t o = off; o < off + n; o += chunk) {
        int64_t m = off + n - o < chunk ? off + n - o : chunk;
        uint8_t *t = b->text;
        for (int c = 0; c < n_cols; c++)
            f->pieces(ctx, batch->cols[c], o, m, &b->pieces[(size_t)c * (size_t)chunk],
                      &t, b);
        TL_TRY(f->rows(ctx, b, m, err));
    }
    return TL_OK;
}

/* ----------------------------------------------------------- pipeline */

static void copy_error(TlError *dst, const TlError *src)
{
    if (dst == src) return;
    dst->code = src->code;
    snprintf(dst->msg, sizeof dst->msg, "%s", src->msg);
}

/* Record the first error (e) and return it in err. */
static TlStatus stick(TlWritePipe *p, const TlError *e, TlError *err)
{
    if (p->st == TL_OK) {
        p->st = e->code != TL_OK ? e->code : TL_ERR_IO;
        copy_error(&p->err, e);
        p->err.code = p->st;
    }
    copy_error(err, &p->err);
    return p->st;
}

/* See write_common.h. */
TlStatus tl_write_pipe_new(TlSink *sink, int n_cols, const TlWriteFormat *f,
                           const void *ctx, TlWritePipe **out, TlError *err)
{
    TlWritePipe *p;
    int threads = tl_pool_threads();
    *out = NULL;
    p = tl_calloc(1, sizeof *p);
    if (!p) return tl_error_oom(err);
    p->sink = sink;
    p->n_cols = n_cols;
    p->f = f;
    p->ctx = ctx;
    p->n_slots = threads <= 1 ? 1 : threads * 2 > MAX_SLOTS ? MAX_SLOTS : threads * 2;
    p->chunk = tl_write_chunk_rows(n_cols);
    p->row_bytes = 16 * ((size_t)n_cols + 1);
    /* one slot until a batch goes to the pool (slots_all) */
    p->slots = tl_calloc(1, sizeof *p->slots);
    if (!p->slots) goto oom;
    p->n_alloc = 1;
    p->slots[0].pipe = p;
    if (threads > 1 && !(p->wait = tl_wait_new())) goto oom;
    *out = p;
    return TL_OK;
oom:
    tl_write_pipe_free(p);
    return tl_error_oom(err);
}

/* Allocate the whole ring before the first batch goes to the pool (only
 * slot 0 exists before, and nothing is in flight). */
static TlStatus slots_all(TlWritePipe *p, TlError *err)
{
    Slot *s;
    if (p->n_alloc == p->n_slots) return TL_OK;
    s = tl_realloc(p->slots, (size_t)p->n_slots * sizeof *s);
    if (!s) return tl_error_oom(err);
    memset(s + p->n_alloc, 0, (size_t)(p->n_slots - p->n_alloc) * sizeof *s);
    for (int i = p->n_alloc; i < p->n_slots; i++) s[i].pipe = p;
    p->slots = s;
    p->n_alloc = p->n_slots;
    return TL_OK;
}

/* Allocate s's buffer on first use, with chunks fit for `rows` rows. */
static TlStatus slot_ready(TlWritePipe *p, Slot *s, int64_t rows, TlError *err)
{
    if (!s->ready) {
        if (!tl_write_buf_init(&s->buf, p->n_cols)) {
            tl_write_buf_free(&s->buf);
            return tl_error_oom(err);
        }
        s->ready = true;
    }
    return buf_fit(&s->buf, p->n_cols, rows) ? TL_OK : tl_error_oom(err);
}

/* Rows of the next slice of a batch with `left` rows to go: about
 * SLICE_BYTES of output by the latest estimate, whole chunks, between one
 * and MAX_CHUNKS chunks.  (Slicing never changes the bytes written.) */
static int64_t slice_rows(const TlWritePipe *p, int64_t left)
{
    int64_t chunks = (int64_t)(SLICE_BYTES / p->row_bytes) / p->chunk;
    int64_t n = (chunks < 1 ? 1 : chunks > MAX_CHUNKS ? MAX_CHUNKS : chunks) * p->chunk;
    return left < n ? left : n;
}

/* Add the counters of b (rows formatted rows) and hand its bytes to the
 * sink; b's size updates the bytes-per-row estimate. */
static TlStatus emit(TlWritePipe *p, TlWriteBuf *b, int64_t rows, TlError *err)
{
    TlStatus st = TL_OK;
    if (rows > 0) p->row_bytes = b->len / (size_t)rows + 1;
    for (int i = 0; i < TL_WRITE_COUNTERS; i++) {
        p->count[i] += b->count[i];
        b->count[i] = 0;
    }
    if (b->len > 0) st = tl_sink_write(p->sink, b->out, b->len, err);
    b->len = 0;
    return st == TL_OK ? TL_OK : stick(p, err, err);
}

/* Write the oldest slots in order while they are done; wait for the
 * oldest while more than keep slots are in flight. */
static TlStatus drain(TlWritePipe *p, int keep, TlError *err)
{
    while (p->inflight > 0) {
        Slot *s = &p->slots[p->head];
        bool done;
        tl_wait_lock(p->wait);
        while (s->state == SLOT_BUSY && p->inflight > keep) tl_wait_step(p->wait);
        done = s->state == SLOT_DONE;
        tl_wait_unlock(p->wait);
        if (!done) return TL_OK;
        p->head = (p->head + 1) % p->n_slots;
        p->inflight--;
        s->state = SLOT_FREE;
        if (s->st != TL_OK) return stick(p, &s->err, err);
        TL_TRY(emit(p, &s->buf, s->n, err));
    }
    return TL_OK;
}

/* The calling thread failed with err: wait for the slots in flight; the
 * earliest of them that failed has the error to report, else err. */
static TlStatus fail_ordered(TlWritePipe *p, TlError *err)
{
    if (p->inflight > 0) {
        tl_wait_lock(p->wait);
        for (int i = 0; i < p->inflight; i++) {
            Slot *s = &p->slots[(p->head + i) % p->n_slots];
            while (s->state == SLOT_BUSY) tl_wait_step(p->wait);
        }
        tl_wait_unlock(p->wait);
        for (int i = 0; i < p->inflight; i++) {
            Slot *s = &p->slots[(p->head + i) % p->n_slots];
            if (s->st != TL_OK) return stick(p, &s->err, err);
        }
    }
    return stick(p, err, err);
}

static void format_task(void *arg)
{
    Slot *s = arg;
    TlWritePipe *p = s->pipe;
    TlStatus st = tl_write_format_rows(p->f, p->ctx, s->batch, p->n_cols, s->off,
                                       s->n, &s->buf, &s->err);
    tl_batch_free(s->batch);
    s->batch = NULL;
    tl_wait_lock(p->wait);
    s->st = st;
    s->state = SLOT_DONE;
    tl_wait_signal(p->wait);
    tl_wait_unlock(p->wait);
    /* p may be freed from here on */
}

/* Format b on the calling thread, slice by slice, writing each (nothing is
 * in flight). */
static TlStatus put_inline(TlWritePipe *p, const TlBatch *b, TlError *err)
{
    Slot *s = &p->slots[p->head];
    for (int64_t off = 0, n; off < b->n_rows; off += n) {
        n = slice_rows(p, b->n_rows - off);
        if (slot_ready(p, s, n, err) != TL_OK) return stick(p, err, err);
        s->buf.len = 0;
        if (tl_write_format_rows(p->f, p->ctx, b, p->n_cols, off, n, &s->buf, err) !=
            TL_OK)
            return stick(p, err, err);
        TL_TRY(emit(p, &s->buf, n, err));
    }
    return TL_OK;
}

/* See write_common.h. */
TlStatus tl_write_pipe_put(TlWritePipe *p, const TlBatch *b, TlError *err)
{
    if (p->st != TL_OK) return stick(p, &p->err, err);
    if (b->n_rows <= 0) return TL_OK;
    if (!p->wait || (p->inflight == 0 && b->n_rows < SMALL_ROWS))
        return put_inline(p, b, err);
    if (slots_all(p, err) != TL_OK) return stick(p, err, err);
    for (int64_t off = 0, n = 0; off < b->n_rows; off += n) {
        Slot *s;
        TlBatch *copy;
        TlError serr;
        TL_TRY(drain(p, p->n_slots - 1, err));
        s = &p->slots[(p->head + p->inflight) % p->n_slots];
        n = slice_rows(p, b->n_rows - off);
        if (slot_ready(p, s, n, err) != TL_OK) return fail_ordered(p, err);
        copy = tl_batch_new(NULL, b->n_cols, b->n_rows);
        if (!copy) {
            tl_error_oom(err);
            return fail_ordered(p, err);
        }
        for (int c = 0; c < b->n_cols; c++) copy->cols[c] = tl_array_retain(b->cols[c]);
        s->batch = copy;
        s->off = off;
        s->n = n;
        s->buf.len = 0;
        s->st = TL_OK;
        s->state = SLOT_BUSY;
        p->inflight++;
        /* out of memory queueing: format it here instead */
        if (tl_pool_submit(format_task, s, &serr) != TL_OK) format_task(s);
    }
    /* write what is already done, without waiting */
    return drain(p, p->n_slots, err);
}

/* See write_common.h. */
TlStatus tl_write_pipe_put_cols(TlWritePipe *p, int n_cols, const TlBatch *b,
                                TlError *err)
{
    if (n_cols == 0) return TL_OK;
    if (b->n_cols != n_cols)
        return tl_error(err, TL_ERR_DATA, "internal: writer expected %d columns, got %d",
                        n_cols, b->n_cols);
    return tl_write_pipe_put(p, b, err);
}

/* See write_common.h. */
TlStatus tl_write_pipe_finish(TlWritePipe *p, int64_t count[TL_WRITE_COUNTERS],
                              TlError *err)
{
    if (p->st != TL_OK) return stick(p, &p->err, err);
    TL_TRY(drain(p, 0, err));
    for (int i = 0; i < TL_WRITE_COUNTERS; i++) {
        if (count) count[i] = p->count[i];
        p->count[i] = 0;
    }
    return TL_OK;
}

/* See write_common.h. */
void tl_write_pipe_free(TlWritePipe *p)
{
    if (!p) return;
    if (p->wait && p->slots) {
        tl_wait_lock(p->wait);
        for (int i = 0; i < p->n_alloc; i++)
            while (p->slots[i].state == SLOT_BUSY) tl_wait_step(p->wait);
        tl_wait_unlock(p->wait);
    }
    if (p->slots)
        for (int i = 0; i < p->n_alloc; i++) {
            tl_batch_free(p->slots[i].batch);
            tl_write_buf_free(&p->slots[i].buf);
        }
    tl_wait_free(p->wait);
    tl_free(p->slots);
    tl_free(p);
}
