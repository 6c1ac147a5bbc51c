/* test_ordered.c -- the ordered ring of pool tasks (lib/exec/ordered.h):
 * results in item order whatever the tasks' timing, at most `depth` items
 * held, inputs handed to their item, an item's error returned when that
 * item is taken (the items before it handed out first), free with items in
 * flight; in a child with one thread (every task inline), then with four. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../lib/core/pool.h"
#include "../../lib/exec/ordered.h"
#include "tl_test.h"

typedef struct Res {
    int64_t seq;
    int64_t in;        /* the input's value, or -1 without one */
} Res;

typedef struct Ctx {
    int live, max_live;    /* atomic: results made, not yet freed */
    int started;           /* atomic: items whose work began */
    int64_t fail;          /* the item whose work fails, or -1 */
    int busy;              /* spin in the early items, so later ones finish first */
} Ctx;

static TlStatus work(void *c, int64_t seq, void *in, void **out, TlError *err)
{
    Ctx *x = c;
    __atomic_add_fetch(&x->started, 1, __ATOMIC_RELAXED);
    if (x->busy && seq % 3 == 0) {
        volatile int s = 0;
        for (int i = 0; i < x->busy; i++) s += i;
        (void)s;
    }
    Res *r = tl_malloc(sizeof *r);
    int64_t v = -1;
    if (in) {
        v = *(int64_t *)in;
        tl_free(in);
    }
    if (!r) return tl_error_oom(err);
    r->seq = seq;
    r->in = v;
    int live = __atomic_add_fetch(&x->live, 1, __ATOMIC_RELAXED);
    int m = __atomic_load_n(&x->max_live, __ATOMIC_RELAXED);
    while (live > m && !__atomic_compare_exchange_n(&x->max_live, &m, live, false,
                                                    __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    *out = r;
    if (seq == x->fail) /* the result made is dropped by the ring */
        return tl_error(err, TL_ERR_DATA, "item %lld failed", (long long)seq);
    return TL_OK;
}

static void drop(void *c, void *out)
{
    Ctx *x = c;
    __atomic_sub_fetch(&x->live, 1, __ATOMIC_RELAXED);
    tl_free(out);
}

static void ctx_init(Ctx *x, int busy)
{
    memset(x, 0, sizeof *x);
    x->fail = -1;
    x->busy = busy;
}

/* tl_ordered_next over 0..n-1: every result in order, no more than depth
 * alive at once (the caller frees each before taking the next). */
static void run_next(int64_t n, int depth, int busy)
{
    Ctx x;
    TlOrdered *o = NULL;
    TlError err = {0};
    int bad = 0;
    int64_t got = 0;
    ctx_init(&x, busy);
    CHECK(tl_ordered_new(depth, work, drop, &x, &o, &err) == TL_OK);
    for (;;) {
        void *r = NULL;
        CHECK(tl_ordered_next(o, n, &r, &err) == TL_OK);
        if (!r) break;
        Res *res = r;
        if (res->seq != got || res->in != -1) bad++;
        got++;
        drop(&x, r);
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(got, n);
    CHECK_EQ_INT(tl_ordered_count(o), 0);
    CHECK_EQ_INT(tl_ordered_queued(o), n);
    void *r = (void *)1;
    CHECK(tl_ordered_next(o, n, &r, &err) == TL_OK); /* past the end: NULL again */
    CHECK(r == NULL);
    tl_ordered_free(o);
    CHECK_EQ_INT(x.live, 0);
    CHECK(x.max_live <= depth + 1);
    CHECK_EQ_INT(x.started, n);
}

TL_TEST(test_next_in_order)
{
    run_next(0, 4, 0);
    run_next(1, 4, 0);
    run_next(200, 1, 0);
    run_next(200, 3, 0);
    run_next(200, 8, 3000);
}

/* tl_ordered_put / take with inputs: each item's work gets its own input;
 * room and count follow the depth. */
TL_TEST(test_put_take_inputs)
{
    Ctx x;
    TlOrdered *o = NULL;
    TlError err = {0};
    int bad = 0;
    int64_t next_in = 0, taken = 0;
    ctx_init(&x, 2000);
    CHECK(tl_ordered_new(5, work, drop, &x, &o, &err) == TL_OK);
    while (taken < 100) {
        while (tl_ordered_room(o) && next_in < 100) {
            int64_t *in = tl_malloc(sizeof *in);
            *in = 1000 + next_in++;
            tl_ordered_put(o, in);
        }
        CHECK(tl_ordered_count(o) <= 5);
        CHECK(!tl_ordered_room(o) || next_in == 100);
        void *r = NULL;
        CHECK(tl_ordered_take(o, &r, &err) == TL_OK);
        Res *res = r;
        if (!res || res->seq != taken || res->in != 1000 + taken) bad++;
        taken++;
        drop(&x, r);
    }
    CHECK_EQ_INT(bad, 0);
    tl_ordered_free(o);
    CHECK_EQ_INT(x.live, 0);
}

/* An item's error comes when that item is taken: the ones before it are
 * handed out first, its result is dropped. */
TL_TEST(test_error_in_order)
{
    Ctx x;
    TlOrdered *o = NULL;
    TlError err = {0};
    int64_t got = 0;
    TlStatus st = TL_OK;
    ctx_init(&x, 3000);
    x.fail = 13;
    CHECK(tl_ordered_new(6, work, drop, &x, &o, &err) == TL_OK);
    for (;;) {
        void *r = NULL;
        st = tl_ordered_next(o, 50, &r, &err);
        if (st != TL_OK || !r) {
            CHECK(r == NULL);
            break;
        }
        CHECK_EQ_INT(((Res *)r)->seq, got);
        got++;
        drop(&x, r);
    }
    CHECK(st == TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, "item 13 failed");
    CHECK_EQ_INT(got, 13);
    tl_ordered_free(o); /* the items queued after 13 are waited for, dropped */
    CHECK_EQ_INT(x.live, 0);
}

/* Free while items are in flight: their work finishes, their results are
 * dropped, nothing leaks. */
TL_TEST(test_free_in_flight)
{
    Ctx x;
    TlOrdered *o = NULL;
    TlError err = {0};
    void *r = NULL;
    ctx_init(&x, 5000);
    CHECK(tl_ordered_new(7, work, drop, &x, &o, &err) == TL_OK);
    CHECK(tl_ordered_next(o, 100, &r, &err) == TL_OK);
    CHECK(r != NULL);
    drop(&x, r);
    CHECK_EQ_INT(tl_ordered_count(o), 7);
    tl_ordered_free(o);
    CHECK_EQ_INT(x.live, 0);
    CHECK_EQ_INT(x.started, 8);
    tl_ordered_free(NULL);
}

static int run_all(int threads)
{
    tl_pool_configure(threads);
    fprintf(stderr, "test_ordered: %d thread(s)\n", threads);
    TL_RUN(test_next_in_order);
    TL_RUN(test_put_take_inputs);
    TL_RUN(test_error_in_order);
    TL_RUN(test_free_in_flight);
    tl_pool_shutdown();
    return tl_test_summary(__FILE__);
}

/* Everything twice: in a child with one thread (every task inline, on the
 * taker), then here with four (the pool is configured once per process). */
int main(void)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int rc = run_all(1);
        fflush(NULL);
        _exit(rc);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return 1;
    int rc = run_all(4);
    return (WIFEXITED(status) && WEXITSTATUS(status) == 0) ? rc : 1;
}
