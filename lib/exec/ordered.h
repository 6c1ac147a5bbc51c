/*
 * ordered.h -- an ordered ring of pool tasks: items numbered 0, 1, 2, ...
 * are queued in that order, run on the pool concurrently, and their
 * results are taken back in the same order.
 *
 * An operator whose output is a sequence of independent pieces (the sort's
 * output batches gathered from its chunks, the group-by's built from its
 * states, the join's probes of a child that is not a scan) produces the
 * next few of them on the workers while the caller formats and writes the
 * earlier ones.  At most `depth` items are queued or waiting to be taken,
 * which bounds the memory held ahead; the caller takes the oldest and
 * queues the next, so no item waits for a round of others (a barrier per
 * window would leave the workers idle behind the slowest).
 *
 * Nothing depends on the threads: an item's work sees only its number and
 * its input, and results come back in item order.  With --threads 1 every
 * task runs on the caller inside tl_ordered_take (tl_wait_step helps with
 * queued tasks), in queue order; a task the pool cannot queue (out of
 * memory) runs inline in tl_ordered_put.  An item's error is returned
 * when that item is taken, so the caller sees the errors in item order.
 */
#ifndef TL_ORDERED_H
#define TL_ORDERED_H

#include "../core/core.h"

typedef struct TlOrdered TlOrdered;

/* Item seq's work (any thread, concurrently with other items' work): in is
 * what tl_ordered_put was given (taken over), *out the result (NULL
 * allowed).  On failure *out is dropped. */
typedef TlStatus (*TlOrderedFn)(void *ctx, int64_t seq, void *in, void **out, TlError *err);
/* Release a result that is not handed out (caller's thread). */
typedef void (*TlOrderedDrop)(void *ctx, void *out);

/* A ring of depth (>= 1) items.  TL_ERR_OOM. */
TlStatus tl_ordered_new(int depth, TlOrderedFn fn, TlOrderedDrop drop, void *ctx,
                        TlOrdered **out, TlError *err);

/* Items queued and not yet taken. */
int tl_ordered_count(const TlOrdered *o);
/* Whether another item may be queued (count < depth). */
bool tl_ordered_room(const TlOrdered *o);
/* Items queued so far (the next item's number). */
int64_t tl_ordered_queued(const TlOrdered *o);

/* Queue the next item with input in (requires room). */
void tl_ordered_put(TlOrdered *o, void *in);

/* Wait for the oldest item (requires count > 0) and hand out its result,
 * or return its error (*out NULL). */
TlStatus tl_ordered_take(TlOrdered *o, void **out, TlError *err);

/* Items 0 .. total-1 without inputs: queue up to the depth, take the
 * oldest, queue the next (the workers go on while the caller uses *out).
 * *out NULL once all are taken. */
TlStatus tl_ordered_next(TlOrdered *o, int64_t total, void **out, TlError *err);

/* Wait for the items in flight (their work may read what the caller
 * frees next), drop every result not taken, free.  NULL-safe. */
void tl_ordered_free(TlOrdered *o);

#endif
