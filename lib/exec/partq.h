/*
 * partq.h -- ordered partition queues: run per-partition work of a stream
 * of items on the pool, in item order within each partition, partitions in
 * parallel.
 *
 * A consumer that receives items (morsel results) in order and must fold
 * each into P independent partitions (radix-partitioned aggregation, a
 * partitioned top-n) pushes them here.  For every partition p, fn(ctx,
 * item, p) runs for item k only after it returned for item k-1 (of the
 * same p); different partitions run concurrently on the pool
 * (tl_pool_submit), so fn may touch partition p's state without locks.
 * When every partition is done with an item, drop(ctx, item) releases it.
 *
 * Backpressure: tl_partq_push waits (helping with queued pool tasks) while
 * more than max_pending items are pushed but not yet released, so memory
 * stays bounded.  With --threads 1 every task runs inline on the waiter
 * (push's wait or finish), in queue order.
 *
 * Errors: after fn fails for (item k, partition p), p skips fn for the
 * items after k (they are still released).  tl_partq_finish waits for all
 * and returns the first error in (item, partition) order, so the result
 * depends neither on the threads nor on timing; a caller that stops
 * pushing once tl_partq_failed() is true still gets the same first error.
 */
#ifndef TL_PARTQ_H
#define TL_PARTQ_H

#include "../core/core.h"

typedef struct TlPartQ TlPartQ;

/* Work of partition p on item (any thread; never concurrently for the same
 * p).  seq: the item's number, 0 for the first item pushed. */
typedef TlStatus (*TlPartFn)(void *ctx, void *item, int64_t seq, int p,
                             TlError *err);
/* Release an item every partition is done with (any thread). */
typedef void (*TlPartDrop)(void *ctx, void *item);

/* A queue set of n_parts (>= 1) partitions; max_pending < 1 means
 * 2 * tl_pool_threads() + 2.  TL_ERR_OOM. */
TlStatus tl_partq_new(int n_parts, TlPartFn fn, TlPartDrop drop, void *ctx,
                      int max_pending, TlPartQ **out, TlError *err);

/* Queue item (taken over: dropped through drop on every path, also when
 * this call fails) for every partition, after the items pushed before.
 * Waits while too many items are pending.  TL_ERR_OOM only (fn's errors
 * come from tl_partq_finish). */
TlStatus tl_partq_push(TlPartQ *q, void *item, TlError *err);

/* True once some fn call failed (the caller may stop pushing early). */
bool tl_partq_failed(TlPartQ *q);

/* Wait until every pushed item has been run through every partition and
 * released; returns the first error in (item, partition) order, or TL_OK.
 * No push may follow. */
TlStatus tl_partq_finish(TlPartQ *q, TlError *err);

/* Wait for running work (pending items still queued are dropped without
 * running fn), then free the queue.  NULL-safe. */
void tl_partq_free(TlPartQ *q);

#endif
