/*
 * input.h -- an input as bytes: one immutable buffer per input, whatever
 * it is (a mapped regular file, a pipe read to its end, standard input
 * read once a run, a compressed input decompressed whole or streamed by a
 * thread while readers parse it), and what a run keeps of its inputs.
 *
 *   input.c      loading (map, read, stdin), the decoders' pread copies,
 *                dropping decoded pages, the run's inputs (TlInputs)
 *   mapped.c     mapped files: the SIGBUS guard, the descriptor pool,
 *                inputs that shrink while read
 *   compress.c   the decompression hook tl_input_load calls (compress.h)
 *   stream.c     streamed inputs: waiting for bytes, giving pages back
 *
 * It needs nothing of the reader interface, so any format's code, and
 * lib/run (which owns the run's inputs), may include it alone.
 */
#ifndef TL_INPUT_H
#define TL_INPUT_H

#include "../lib/core/core.h"
#include "../lib/core/ctx.h"

/* What a run keeps of its inputs (TlCtx.inputs): standard input, read
 * once so that a restarted attempt sees the same bytes (input.c); the
 * last decompressed file, so that a restart does not decompress it again
 * (compress.c); the registry of the run's decompression streams
 * (stream.c); and the count of decompressed bytes held.  Created by
 * lib/run at the start of a run; freed at its end, after every reader and
 * batch of the run is gone (a buffer it counted must not outlive it). */
typedef struct TlInputs TlInputs;
TlStatus tl_inputs_new(TlInputs **out, TlError *err);
void tl_inputs_free(TlInputs *in); /* NULL-safe */

/* The name data errors use for path: "<stdin>" for "-", else path. */
const char *tl_input_name(const char *path);

/* The whole input as one buffer: an owned reference in *out (mapped file,
 * read bytes, or the cached standard input).  ctx: the run's (its tuning
 * decides how a compressed input is streamed; NULL: the environment's).  Errors are TL_ERR_IO naming
 * path ("cannot open \"x.csv\": No such file or directory"). */
TlStatus tl_input_load(const TlCtx *ctx, const char *path, TlBuf **out, TlError *err);
/* Mapped inputs (mapped.c). */
struct stat;
/* Map path's regular file (open on fd, st its fstat, size > 0) into *out:
 * fd then belongs to the mapping (mapped.c's descriptor pool).  *out NULL
 * (TL_OK) when it cannot be mapped: the caller reads fd itself.
 * TL_ERR_OOM (fd still the caller's). */
TlStatus tl_input_map(const char *path, int fd, const struct stat *st, TlBuf **out,
                      TlError *err);
/* True when b (from tl_input_load) maps a regular file read-only, so its
 * pages may be dropped (MADV_DONTNEED) and fault in again from the file. */
bool tl_input_mapped(const TlBuf *b);
/* Bytes [off, off + n) of mapped input b into dst with pread(2) on its
 * file.  A file now shorter than the mapping gives zeros past its end and
 * marks the input shrunk (tl_input_check reports it).  False when the
 * file cannot be read (then read the mapping). */
bool tl_input_pread(const TlBuf *b, uint8_t *dst, size_t off, size_t n);
/* TL_ERR_DATA "FILE: changed size while being read (was N bytes, now M)"
 * when mapped input b is marked shrunk or its file is now shorter than
 * the mapping (fstat); TL_OK otherwise and for every other buffer. */
TlStatus tl_input_check(const TlBuf *b, TlError *err);
/* The morsel [begin, end) of a mapped input b is decoded: give back
 * (MADV_DONTNEED) the input's blocks of 2 to 8 MiB that lie one block
 * behind it (input.c), so resident memory holds a few blocks of a big
 * file, not all of it; a later read (a string view into the input) faults
 * the page in again from the file.  Nothing for heap buffers.
 * Thread-safe. */
void tl_input_drop(const TlBuf *b, size_t begin, size_t end);
/* A decoder's copy of its morsel (tl_input_copy). */
typedef struct TlInputCopy {
    uint8_t *data;
    size_t cap;
} TlInputCopy;
/* Read the bytes [begin, end) of a mapped input b, and TL_COPY_PAD bytes
 * either side (within the input), into c with pread(2) on the file the
 * mapping was made from (kept open), not through the mapping: on a virtual
 * machine a page's first touch through a fresh mapping costs more than
 * copying it, and c's buffer, reused morsel after morsel, stays mapped
 * (see the CSV reader, "copies").  Returns p with p[i] the input's byte i
 * for i in [begin - pad, *hi), *hi = min(end + TL_COPY_PAD, b->size); NULL
 * when b is not a mapped file, the tuning says no_copy (tests), memory runs
 * out or the read fails or comes up short: the caller reads the mapping. */
#define TL_COPY_PAD 64
/* The first buffer's size: the readers' morsels grow to 2 MiB. */
#define TL_COPY_FIRST (((size_t)2 << 20) + ((size_t)64 << 10))
const uint8_t *tl_input_copy(const TlCtx *ctx, const TlBuf *b, TlInputCopy *c,
                             size_t begin, size_t end, size_t *hi);
void tl_input_copy_free(TlInputCopy *c);
/* *b (an owned reference from tl_input_load_stream) waited for to its end
 * and made a buffer of exactly its bytes; on error released and NULL. */
TlStatus tl_input_whole(TlBuf **b, TlError *err);
/* tl_input_load, except that a compressed input may come back still
 * streaming (below): for readers that wait for their bytes. */
TlStatus tl_input_load_stream(const TlCtx *ctx, const char *path, TlBuf **out,
                              TlError *err);
/* Streamed inputs (stream.c).  A buffer from
 * tl_input_load_stream may still be filling: its size is final, but only
 * bytes reported ready may be read.  A reader's serial parts (open, split) wait for the bytes
 * they need; a morsel is handed out only when its bytes and
 * TL_INPUT_AHEAD bytes after it (or the input's end) are ready, so
 * decoders, which may look a few bytes past a morsel (SIMD loads, a line
 * end's next byte), never wait.  For ordinary buffers these return at once.
 *
 * tl_input_wait: block until at least want bytes (capped at b->size) are
 * ready, or the stream ended short of them; *ready (may be NULL) gets the
 * count.  Errors: the stream's (data error naming the file and byte
 * offset, or OOM) when it failed before want.  The decompressor stays a
 * bounded lead ahead of the most bytes waited for, so splitters wait for
 * what they read (stream.c).  tl_input_finish: wait for the end (the bound
 * is lifted: the caller reads on to the end); the stream's error if it
 * failed.  tl_input_streaming: b is a stream still being filled.
 *
 * A stream whose size is not announced (gzip, zstd written by a pipe)
 * has b->size the address space reserved for it until the end; its bytes
 * past the end read as zeros.  tl_input_size: b's size once known (the
 * final size of a stream that ended, b->size for any other buffer and an
 * announced stream); while a stream of unknown size runs, b->size.  A
 * splitter that got fewer bytes than it waited for reads the end there;
 * a decoder reads it to bound its reads (any morsel of a stream still
 * running lies, with TL_INPUT_AHEAD bytes after it, before the end). */
#define TL_INPUT_AHEAD ((size_t)64 << 10)
/* Give back the memory of a streamed input's decoded bytes [begin, end)
 * (format.c calls it for a morsel whose batch holds no view into the
 * input): they read as zeros afterwards, so the stream is marked and a
 * reopen (restart) decompresses again (tl_input_restream).  Nothing when
 * b is not a stream or is shared by two readers (tl_input_share). */
void tl_input_drop_read(const TlBuf *b, size_t begin, size_t end);
/* The splitter cut the morsel [begin, end) of b (format.c, in order, before
 * it is handed out): pages two morsels share are given back when both are
 * decoded, pages three share never (stream.c, edge_done). */
void tl_input_cut(const TlBuf *b, size_t begin, size_t end);
/* A morsel [begin, end) of stream b whose batches may view the input: its
 * pages are given back (tl_input_drop_read) when the morsel is over
 * (tl_pin_done) and the last buffer of its batches' views is released.
 * tl_input_pin: a pin for the morsel (NULL when b is no stream that gives
 * pages back, or out of memory: the pages then stay); tl_pin_views: the
 * batch's string arrays view the input through buffers of the pin from
 * now on (a view it cannot move keeps the pages for good);
 * tl_pin_done: the morsel is over (NULL-safe). */
typedef struct TlPin TlPin;
TlPin *tl_input_pin(const TlBuf *b, size_t begin, size_t end);
void tl_pin_views(TlPin *p, TlBatch *batch);
void tl_pin_done(TlPin *p);
void tl_input_share(const TlBuf *b);
/* *b (path's buffer) again, decompressed anew when pages of it were
 * dropped (standard input's cache: its compressed bytes are kept). */
TlStatus tl_input_restream(const TlCtx *ctx, const char *path, TlBuf **b,
                           TlError *err);
TlStatus tl_input_wait(const TlBuf *b, size_t want, size_t *ready, TlError *err);
TlStatus tl_input_finish(const TlBuf *b, TlError *err);
bool tl_input_streaming(const TlBuf *b);
size_t tl_input_size(const TlBuf *b);
/* b is a stream (being filled or not): its bytes may have been given back
 * (tl_input_drop_read), so a morsel of it is never decoded twice. */
bool tl_input_is_stream(const TlBuf *b);

#endif
