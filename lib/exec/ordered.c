/*
 * ordered.c -- the ordered ring of pool tasks (ordered.h).
 *
 * depth slots in a ring; the items not yet taken occupy the `count` slots
 * from `head` on, oldest first, so item seq lives in slot seq % depth.  A
 * slot is BUSY from tl_ordered_put until its task has stored the result,
 * DONE until tl_ordered_take hands the result out, then FREE.  One pool
 * task per item; the task writes only its own slot, and publishes it by
 * setting DONE under the ring's TlWait, which is where the taker (and
 * tl_ordered_free) wait, helping with queued pool tasks meanwhile.
 */
#include "ordered.h"

#include "../core/pool.h"

enum { SLOT_FREE = 0, SLOT_BUSY, SLOT_DONE };

typedef struct Slot {
    TlOrdered *o;
    int64_t seq;
    void *in;
    void *res;
    int state;           /* SLOT_*; BUSY -> DONE under o->w */
    TlStatus st;
    TlError err;
} Slot;

struct TlOrdered {
    TlOrderedFn fn;
    TlOrderedDrop drop;
    void *ctx;
    TlWait *w;
    Slot *slots;
    int depth, head, count;
    int64_t queued;      /* items put so far */
};

TlStatus tl_ordered_new(int depth, TlOrderedFn fn, TlOrderedDrop drop, void *ctx,
                        TlOrdered **out, TlError *err)
{
    TlOrdered *o = tl_calloc(1, sizeof *o);
    *out = NULL;
    if (depth < 1) depth = 1;
    if (!o) return tl_error_oom(err);
    o->fn = fn;
    o->drop = drop;
    o->ctx = ctx;
    o->depth = depth;
    o->w = tl_wait_new();
    o->slots = tl_calloc((size_t)depth, sizeof *o->slots);
    if (!o->w || !o->slots) {
        tl_ordered_free(o);
        return tl_error_oom(err);
    }
    for (int i = 0; i < depth; i++) o->slots[i].o = o;
    *out = o;
    return TL_OK;
}

int tl_ordered_count(const TlOrdered *o)
{
    return o->count;
}

bool tl_ordered_room(const TlOrdered *o)
{
    return o->count < o->depth;
}

int64_t tl_ordered_queued(const TlOrdered *o)
{
    return o->queued;
}

/* A pool task: run one item's work, publish the result in its slot. */
static void slot_task(void *arg)
{
    Slot *s = arg;
    TlOrdered *o = s->o;
    void *res = NULL;
    TlStatus st = o->fn(o->ctx, s->seq, s->in, &res, &s->err);
    tl_wait_lock(o->w);
    s->res = res;
    s->st = st;
    s->state = SLOT_DONE;
    tl_wait_signal(o->w);
    tl_wait_unlock(o->w);
}

void tl_ordered_put(TlOrdered *o, void *in)
{
    Slot *s = &o->slots[(o->head + o->count) % o->depth];
    TlError e;
    s->seq = o->queued++;
    s->in = in;
    s->res = NULL;
    s->st = TL_OK;
    s->state = SLOT_BUSY;
    o->count++;
    if (tl_pool_submit(slot_task, s, &e) != TL_OK) slot_task(s); /* OOM: here */
}

/* Wait until slot s is no longer BUSY. */
static void slot_wait(TlOrdered *o, Slot *s)
{
    tl_wait_lock(o->w);
    while (s->state == SLOT_BUSY) tl_wait_step(o->w);
    tl_wait_unlock(o->w);
}

TlStatus tl_ordered_take(TlOrdered *o, void **out, TlError *err)
{
    Slot *s = &o->slots[o->head];
    void *res;
    *out = NULL;
    slot_wait(o, s);
    o->head = (o->head + 1) % o->depth;
    o->count--;
    s->state = SLOT_FREE;
    res = s->res;
    s->res = s->in = NULL;
    if (s->st != TL_OK) {
        if (res && o->drop) o->drop(o->ctx, res);
        *err = s->err;
        return s->st;
    }
    *out = res;
    return TL_OK;
}

TlStatus tl_ordered_next(TlOrdered *o, int64_t total, void **out, TlError *err)
{
    TlStatus st;
    *out = NULL;
    while (tl_ordered_room(o) && o->queued < total) tl_ordered_put(o, NULL);
    if (o->count == 0) return TL_OK;
    st = tl_ordered_take(o, out, err);
    while (st == TL_OK && tl_ordered_room(o) && o->queued < total) tl_ordered_put(o, NULL);
    return st;
}

void tl_ordered_free(TlOrdered *o)
{
    if (!o) return;
    for (int k = 0; o->slots && k < o->count; k++) {
        Slot *s = &o->slots[(o->head + k) % o->depth];
        slot_wait(o, s);
        if (s->res && o->drop) o->drop(o->ctx, s->res);
    }
    tl_free(o->slots);
    tl_wait_free(o->w);
    tl_free(o);
}
