/*
 * partq.c -- ordered partition queues (partq.h).
 *
 * Pushed items form a singly linked list of nodes, oldest first; node k
 * carries the item, its sequence number and `left`, the partitions not yet
 * done with it.  Partition p has a cursor cur[p]: the next node it must
 * run, or NULL when it has caught up.  There is at most one pool task per
 * partition, and it exists exactly while cur[p] is not NULL: push sets the
 * cursors of caught-up partitions to the new node and submits their tasks;
 * a task runs fn on its cursor's node, moves the cursor on, and returns
 * when it reaches the end of the list.  Order within a partition follows
 * from the single task; partitions run concurrently.
 *
 * A node whose `left` drops to zero is released (drop, outside the lock).
 * Since each partition runs the nodes in order, nodes are released in push
 * order too, so the list's tail is released last; push appends after the
 * tail only while it is still alive.
 *
 * One TlWait guards everything; waiters (push's backpressure, finish, free)
 * loop on tl_wait_step, which runs queued pool tasks meanwhile, so with one
 * thread every task runs on the waiter.  When a task cannot be submitted
 * (out of memory), the pusher runs the partition's work itself, inline.
 */
#include "partq.h"

#include "../core/pool.h"

typedef struct Node {
    struct Node *next;
    void *item;
    int64_t seq;
    int left;
} Node;

typedef struct TaskArg {
    TlPartQ *q;
    int p;
} TaskArg;

struct TlPartQ {
    int n_parts;
    TlPartFn fn;
    TlPartDrop drop;
    void *ctx;
    int max_pending;
    TlWait *w;
    Node *tail;          /* the newest node, NULL once released */
    Node **cur;          /* per partition: next node to run, or NULL */
    TaskArg *args;       /* per partition: the task's argument */
    int64_t pushed;      /* items pushed so far (next sequence number) */
    int64_t pending;     /* pushed, not yet released */
    int tasks;           /* partition tasks submitted and not finished */
    bool cancel;         /* free: skip fn */
    bool failed;         /* some fn failed */
    int64_t *err_seq;    /* per partition: item of its first error, or -1 */
    TlStatus *err_st;
    TlError *errs;
};

/* Drain partition p's queue (see the design above). */
static void part_task(void *arg)
{
    TaskArg *ta = arg;
    TlPartQ *q = ta->q;
    int p = ta->p;
    tl_wait_lock(q->w);
    for (;;) {
        Node *n = q->cur[p];
        bool run = !q->cancel && q->err_seq[p] < 0;
        tl_wait_unlock(q->w);
        TlStatus st = TL_OK;
        TlError e = {0};
        if (run) st = q->fn(q->ctx, n->item, n->seq, p, &e);
        tl_wait_lock(q->w);
        if (st != TL_OK) {
            q->err_seq[p] = n->seq;
            q->err_st[p] = st;
            q->errs[p] = e;
            q->failed = true;
        }
        Node *next = n->next;
        q->cur[p] = next;
        if (--n->left == 0) {
            if (q->tail == n) q->tail = NULL;
            tl_wait_unlock(q->w);
            q->drop(q->ctx, n->item);
            tl_free(n);
            tl_wait_lock(q->w);
            q->pending--;
            tl_wait_signal(q->w);
        }
        if (!next) break;
    }
    q->tasks--;
    tl_wait_signal(q->w);
    tl_wait_unlock(q->w);
}

/* See partq.h. */
TlStatus tl_partq_new(int n_parts, TlPartFn fn, TlPartDrop drop, void *ctx,
                      int max_pending, TlPartQ **out, TlError *err)
{
    *out = NULL;
    if (n_parts < 1) return tl_error(err, TL_ERR_USAGE, "internal: partq needs a partition");
    TlPartQ *q = tl_calloc(1, sizeof *q);
    if (!q) return tl_error_oom(err);
    q->n_parts = n_parts;
    q->fn = fn;
    q->drop = drop;
    q->ctx = ctx;
    q->max_pending = max_pending >= 1 ? max_pending : 2 * tl_pool_threads() + 2;
    q->w = tl_wait_new();
    q->cur = tl_calloc((size_t)n_parts, sizeof *q->cur);
    q->args = tl_calloc((size_t)n_parts, sizeof *q->args);
    q->err_seq = tl_calloc((size_t)n_parts, sizeof *q->err_seq);
    q->err_st = tl_calloc((size_t)n_parts, sizeof *q->err_st);
    q->errs = tl_calloc((size_t)n_parts, sizeof *q->errs);
    if (!q->w || !q->cur || !q->args || !q->err_seq || !q->err_st || !q->errs) {
        tl_partq_free(q);
        return tl_error_oom(err);
    }
    for (int p = 0; p < n_parts; p++) {
        q->args[p].q = q;
        q->args[p].p = p;
        q->err_seq[p] = -1;
    }
    *out = q;
    return TL_OK;
}

/* See partq.h. */
TlStatus tl_partq_push(TlPartQ *q, void *item, TlError *err)
{
    Node *n = tl_calloc(1, sizeof *n);
    if (!n) {
        q->drop(q->ctx, item);
        return tl_error_oom(err);
    }
    n->item = item;
    n->left = q->n_parts;
    tl_wait_lock(q->w);
    while (q->pending > q->max_pending) tl_wait_step(q->w);
    n->seq = q->pushed++;
    if (q->tail) q->tail->next = n;
    q->tail = n;
    q->pending++;
    for (int p = 0; p < q->n_parts; p++) {
        if (q->cur[p]) continue; /* its task will reach n */
        q->cur[p] = n;
        q->tasks++;
        TlError e2 = {0};
        if (tl_pool_submit(part_task, &q->args[p], &e2) != TL_OK) {
            /* no memory for the task: run it here */
            tl_wait_unlock(q->w);
            part_task(&q->args[p]);
            tl_wait_lock(q->w);
        }
    }
    tl_wait_unlock(q->w);
    return TL_OK;
}

/* See partq.h. */
bool tl_partq_failed(TlPartQ *q)
{
    tl_wait_lock(q->w);
    bool f = q->failed;
    tl_wait_unlock(q->w);
    return f;
}

/* Wait until nothing is pending and no task runs; lock held. */
static void wait_idle(TlPartQ *q)
{
    while (q->pending > 0 || q->tasks > 0) tl_wait_step(q->w);
}

/* See partq.h. */
TlStatus tl_partq_finish(TlPartQ *q, TlError *err)
{
    tl_wait_lock(q->w);
    wait_idle(q);
    int best = -1;
    for (int p = 0; p < q->n_parts; p++)
        if (q->err_seq[p] >= 0 && (best < 0 || q->err_seq[p] < q->err_seq[best]))
            best = p;
    tl_wait_unlock(q->w);
    if (best < 0) return TL_OK;
    *err = q->errs[best];
    return q->err_st[best];
}

/* See partq.h. */
void tl_partq_free(TlPartQ *q)
{
    if (!q) return;
    if (q->w) {
        tl_wait_lock(q->w);
        q->cancel = true;
        wait_idle(q);
        tl_wait_unlock(q->w);
    }
    tl_wait_free(q->w);
    tl_free(q->cur);
    tl_free(q->args);
    tl_free(q->err_seq);
    tl_free(q->err_st);
    tl_free(q->errs);
    tl_free(q);
}
