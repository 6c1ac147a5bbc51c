/*
 * write_common.h -- what the text writers (csv_write.c, ndjson_write.c)
 * share: the per-batch output buffer and the in-order parallel pipeline.
 *
 * A writer formats rows in chunks, column by column first: each value of a
 * column becomes a piece {pointer, length, kind} (numbers formatted into
 * `text`, strings pointing at their bytes), then the rows are assembled
 * from the pieces into `out`.  A TlWriteBuf holds that scratch and the
 * bytes of one slice of a batch; the pipeline (write_common.c) gives every
 * slice in flight its own TlWriteBuf, formats slices on the thread pool and
 * hands their bytes to the sink strictly in order.
 */
#ifndef TL_WRITE_COMMON_H
#define TL_WRITE_COMMON_H

#include "fmt_impl.h"

/* One formatted value: bytes p[0..len) and a format-specific kind. */
typedef struct TlPiece {
    const uint8_t *p;
    uint32_t len;
    uint32_t kind;
} TlPiece;

/* Piece kinds both formats use; each adds its own from 2 on. */
enum { TL_PIECE_PLAIN = 0, TL_PIECE_NULL = 1 };

/* Pieces for rows [off, off+n) of a non-string array a into pc[0..n):
 * null -> TL_PIECE_NULL; bool -> "true" / "false"; numbers, dates and
 * timestamps formatted at *text (advanced) by lib/core/text.h, of kind
 * TL_PIECE_PLAIN, dates and timestamps of kind temporal_kind.  With
 * nonfinite_null, inf and nan become null pieces.  Returns how many did. */
int64_t tl_write_value_pieces(const TlArray *a, int64_t off, int64_t n, TlPiece *pc,
                              uint8_t **text, uint32_t temporal_kind,
                              bool nonfinite_null);

/* Number of format-specific counters a slice can bump (NDJSON's warnings). */
#define TL_WRITE_COUNTERS 2

/* The scratch and output of one slice. */
typedef struct TlWriteBuf {
    uint8_t *out;            /* formatted bytes [0, len) */
    size_t len, cap;
    TlPiece *pieces;         /* n_cols * chunk: [col 0: rows][col 1: rows]... */
    uint8_t *text;           /* formatted numbers of one chunk */
    int64_t chunk;           /* rows per chunk (the pieces' column stride) */
    int64_t count[TL_WRITE_COUNTERS]; /* summed in order by the pipeline */
} TlWriteBuf;

/* Rows per chunk for n_cols columns: at most 1024, fewer for wide tables so
 * the scratch stays near 1 MiB. */
int64_t tl_write_chunk_rows(int n_cols);
/* Allocate b's scratch for n_cols columns (out starts empty).  false on OOM
 * (b may be partly allocated; tl_write_buf_free it). */
bool tl_write_buf_init(TlWriteBuf *b, int n_cols);
void tl_write_buf_free(TlWriteBuf *b); /* NULL-safe, zeroes b */
/* Grow out so need more bytes fit (doubling).  false on OOM. */
bool tl_write_buf_grow(TlWriteBuf *b, size_t need);
/* Make room for need more bytes in out; TL_ERR_OOM on failure. */
static inline TlStatus tl_write_buf_reserve(TlWriteBuf *b, size_t need, TlError *err)
{
    if (b->len + need <= b->cap) return TL_OK;
    return tl_write_buf_grow(b, need) ? TL_OK : tl_error_oom(err);
}

/* How a format turns rows into bytes.  Both callbacks run on any thread,
 * concurrently for different slices: ctx is read only. */
typedef struct TlWriteFormat {
    /* Pieces for rows [off, off+n) of column a into pc[0..n); numbers are
     * formatted at *text, which is advanced.  May bump b->count[]. */
    void (*pieces)(const void *ctx, const TlArray *a, int64_t off, int64_t n,
                   TlPiece *pc, uint8_t **text, TlWriteBuf *b);
    /* Append rows [0, n) of b->pieces (column stride b->chunk) to b->out. */
    TlStatus (*rows)(const void *ctx, TlWriteBuf *b, int64_t n, TlError *err);
} TlWriteFormat;

/* Format rows [off, off+n) of batch (n_cols columns) into b->out (appended)
 * chunk by chunk.  Errors: TL_ERR_OOM. */
TlStatus tl_write_format_rows(const TlWriteFormat *f, const void *ctx,
                              const TlBatch *batch, int n_cols, int64_t off,
                              int64_t n, TlWriteBuf *b, TlError *err);

/* The in-order pipeline of one writer. */
typedef struct TlWritePipe TlWritePipe;

/* A pipeline writing batches of n_cols columns to sink with format f (f and
 * ctx are borrowed and must outlive the pipeline).  Sized by
 * tl_pool_threads(): one thread formats inline; more keep up to twice that
 * many slices in flight. */
TlStatus tl_write_pipe_new(TlSink *sink, int n_cols, const TlWriteFormat *f,
                           const void *ctx, TlWritePipe **out, TlError *err);
/* Format all rows of b (borrowed: the pipeline takes references to its
 * columns when it formats later) and write the bytes of every finished
 * slice, in order.  After an error every call returns that error. */
TlStatus tl_write_pipe_put(TlWritePipe *p, const TlBatch *b, TlError *err);
/* tl_write_pipe_put for a text writer of n_cols columns: a batch of another
 * width is an internal error, and a writer of no columns writes no rows. */
TlStatus tl_write_pipe_put_cols(TlWritePipe *p, int n_cols, const TlBatch *b,
                                TlError *err);
/* Wait for every slice in flight and write its bytes, in order.  count[]
 * (may be NULL) receives the counters summed over every slice written. */
TlStatus tl_write_pipe_finish(TlWritePipe *p, int64_t count[TL_WRITE_COUNTERS],
                              TlError *err);
/* Wait for the slices in flight (their bytes are dropped), free all.
 * NULL-safe. */
void tl_write_pipe_free(TlWritePipe *p);

#endif
