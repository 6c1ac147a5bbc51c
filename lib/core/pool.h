/*
 * pool.h -- the process-wide thread pool: a fixed set of workers and one
 * FIFO queue of short tasks.
 *
 * Sizing: tl_pool_configure(n) once before the run (--threads; 0 = every
 * online CPU).  n counts the calling thread, so the pool starts n - 1
 * workers, and it starts them lazily, at the first tl_pool_submit: a run
 * with nothing to share (a tiny file) never creates a thread.
 *
 * Tasks must not block on other tasks.  A thread that waits for a task's
 * result calls tl_pool_help() in its wait loop: it runs a queued task
 * itself, so with one thread (no workers) every task still runs, inline, on
 * the waiter, in queue order.  This is what makes --threads 1 the same code
 * path as --threads 8.
 *
 * Determinism is the caller's business: the pool promises nothing about
 * which thread runs a task or when; callers number their work (morsel
 * sequence numbers) and combine results in that order.
 */
#ifndef TL_POOL_H
#define TL_POOL_H

#include "core.h"

typedef void (*TlTaskFn)(void *arg);

/* Threads a run may use, the caller included: n >= 1, or 0 for the number
 * of online CPUs.  Call before the first submit (later calls are ignored
 * once workers run). */
void tl_pool_configure(int n);
/* The configured thread count (>= 1). */
int tl_pool_threads(void);
/* Queue fn(arg).  A worker, or a thread in tl_pool_help(), runs it.  Fails
 * only when out of memory (the task is then not queued). */
TlStatus tl_pool_submit(TlTaskFn fn, void *arg, TlError *err);
/* Run one queued task on the calling thread; false when the queue is empty. */
bool tl_pool_help(void);
/* Run fn(arg, i) for every i in [0, n), spread over the pool and the
 * caller; returns when every call has returned.  Calls may run in any order
 * and concurrently. */
TlStatus tl_pool_for(int64_t n, void (*fn)(void *arg, int64_t i), void *arg,
                     TlError *err);
/* Stop and join the workers (at exit; queued tasks are run first). */
void tl_pool_shutdown(void);

/* Deep stacks.  Plans, optimizer rules, operators and expression walks
 * recurse along a pipeline's chain of steps and along an expression's
 * chains of operators (`a + b + c ...`), so their stack use grows with the
 * length of what the user wrote.  tl_run_deep runs fn(arg) on a thread whose
 * stack is TL_DEEP_STACK bytes (reserved address space: pages are touched
 * only as deep as the recursion goes), waits for it, and returns true; the
 * pool's workers get the same size.  When such a thread cannot be created
 * (an address-space limit), it returns false without running fn, and the
 * caller runs it on its own stack with the shallow bounds.  Bounds consult
 * tl_stack_deep(): whether the calling thread has a deep stack. */
#ifndef TL_DEEP_STACK
#define TL_DEEP_STACK ((size_t)1 << 30)
#endif
bool tl_run_deep(void *(*fn)(void *), void *arg);
bool tl_stack_deep(void);

/* A mutex + condition pair for the waiters of pool work (tl_wait_*). */
typedef struct TlWait TlWait;
TlWait *tl_wait_new(void);
void tl_wait_free(TlWait *w);
void tl_wait_lock(TlWait *w);
void tl_wait_unlock(TlWait *w);
/* Wake every thread waiting on w (call with the lock held or not). */
void tl_wait_signal(TlWait *w);
/* With the lock held: help with one queued task (dropping the lock while
 * it runs), or, when the queue is empty, sleep until tl_wait_signal.  The
 * caller re-checks its condition in a loop. */
void tl_wait_step(TlWait *w);

#endif
