/* test_partq.c -- ordered partition queues (lib/exec/partq.h): per
 * partition order, release after every partition, backpressure, the first
 * error in (item, partition) order, cancel on free, on 1, 2 and 4 threads. */
#include <stdlib.h>

#include "../../lib/core/pool.h"
#include "../../lib/exec/partq.h"
#include "tl_test.h"

#define NP 5
#define NITEMS 200

typedef struct Item {
    int64_t id;
    int done; /* partitions done (atomic) */
} Item;

typedef struct Ctx {
    int64_t last[NP];      /* per partition: last item id run */
    int64_t runs[NP];
    int bad_order;         /* a partition saw items out of order */
    int released;          /* atomic */
    int bad_release;       /* released before every partition ran it */
    int live, max_live;    /* atomic: items allocated, not released */
    int64_t fail_item;     /* fn fails for (fail_item, fail_p) ... */
    int fail_p;
    int64_t fail_item2;    /* ... and (fail_item2, fail_p2) */
    int fail_p2;
    int busy;              /* spin a little in fn */
} Ctx;

static TlStatus fn(void *c, void *it, int64_t seq, int p, TlError *err)
{
    Ctx *x = c;
    Item *item = it;
    if (seq != item->id) x->bad_order = 1;
    if (item->id != x->last[p] + 1) x->bad_order = 1;
    x->last[p] = item->id;
    x->runs[p]++;
    if (x->busy) {
        volatile int s = 0;
        for (int i = 0; i < x->busy; i++) s += i;
        (void)s;
    }
    __atomic_add_fetch(&item->done, 1, __ATOMIC_RELAXED);
    if ((item->id == x->fail_item && p == x->fail_p) ||
        (item->id == x->fail_item2 && p == x->fail_p2))
        return tl_error(err, TL_ERR_DATA, "fail at item %lld part %d",
                        (long long)item->id, p);
    return TL_OK;
}

static void drop(void *c, void *it)
{
    Ctx *x = c;
    Item *item = it;
    __atomic_add_fetch(&x->released, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&x->live, 1, __ATOMIC_RELAXED);
    (void)item;
    tl_free(item);
}

static void ctx_init(Ctx *x)
{
    memset(x, 0, sizeof *x);
    for (int p = 0; p < NP; p++) x->last[p] = -1;
    x->fail_item = x->fail_item2 = -1;
}

static TlStatus push_n(TlPartQ *q, Ctx *x, int n, bool stop_on_fail, int *pushed,
                       TlError *err)
{
    *pushed = 0;
    for (int i = 0; i < n; i++) {
        if (stop_on_fail && tl_partq_failed(q)) break;
        Item *it = tl_calloc(1, sizeof *it);
        if (!it) return tl_error_oom(err);
        it->id = i;
        int live = __atomic_add_fetch(&x->live, 1, __ATOMIC_RELAXED);
        if (live > x->max_live) x->max_live = live;
        TL_TRY(tl_partq_push(q, it, err));
        (*pushed)++;
    }
    return TL_OK;
}

static void run_ok(int busy)
{
    Ctx x;
    ctx_init(&x);
    x.busy = busy;
    TlPartQ *q = NULL;
    TlError err = {0};
    CHECK(tl_partq_new(NP, fn, drop, &x, 3, &q, &err) == TL_OK);
    int pushed = 0;
    CHECK(push_n(q, &x, NITEMS, false, &pushed, &err) == TL_OK);
    CHECK(tl_partq_finish(q, &err) == TL_OK);
    tl_partq_free(q);
    CHECK_EQ_INT(pushed, NITEMS);
    CHECK(!x.bad_order);
    CHECK_EQ_INT(x.released, NITEMS);
    CHECK_EQ_INT(x.live, 0);
    /* at most max_pending + 1 pending, plus the one being allocated */
    CHECK(x.max_live <= 3 + 2);
    for (int p = 0; p < NP; p++) {
        CHECK_EQ_INT(x.runs[p], NITEMS);
        CHECK_EQ_INT(x.last[p], NITEMS - 1);
    }
}

TL_TEST(test_order_and_release)
{
    run_ok(0);
    run_ok(2000);
}

/* Two failures: the one at the lower item wins, whichever ran first; the
 * failing partition skips its later items, the others run everything. */
static void run_fail(bool stop_on_fail)
{
    Ctx x;
    ctx_init(&x);
    x.fail_item = 40;
    x.fail_p = 1;
    x.fail_item2 = 30;
    x.fail_p2 = 3;
    TlPartQ *q = NULL;
    TlError err = {0};
    CHECK(tl_partq_new(NP, fn, drop, &x, 0, &q, &err) == TL_OK);
    int pushed = 0;
    CHECK(push_n(q, &x, NITEMS, stop_on_fail, &pushed, &err) == TL_OK);
    TlStatus st = tl_partq_finish(q, &err);
    CHECK(st == TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, "fail at item 30 part 3");
    CHECK(tl_partq_failed(q));
    tl_partq_free(q);
    CHECK(!x.bad_order);
    CHECK_EQ_INT(x.released, pushed);
    CHECK_EQ_INT(x.live, 0);
    CHECK_EQ_INT(x.runs[3], 31);
    CHECK_EQ_INT(x.runs[1] <= 41 ? 1 : 0, 1);
    if (!stop_on_fail) {
        CHECK_EQ_INT(pushed, NITEMS);
        CHECK_EQ_INT(x.runs[0], NITEMS);
        CHECK_EQ_INT(x.runs[1], 41);
    } else {
        CHECK(pushed >= 31);
    }
}

TL_TEST(test_first_error)
{
    run_fail(false);
    run_fail(true);
}

/* Same partition failing twice: its first failure is reported. */
TL_TEST(test_same_partition)
{
    Ctx x;
    ctx_init(&x);
    x.fail_item = 7;
    x.fail_p = 0;
    x.fail_item2 = 3;
    x.fail_p2 = 0;
    TlPartQ *q = NULL;
    TlError err = {0};
    CHECK(tl_partq_new(NP, fn, drop, &x, 2, &q, &err) == TL_OK);
    int pushed = 0;
    CHECK(push_n(q, &x, 20, false, &pushed, &err) == TL_OK);
    CHECK(tl_partq_finish(q, &err) == TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, "fail at item 3 part 0");
    tl_partq_free(q);
    CHECK_EQ_INT(x.runs[0], 4);
    CHECK_EQ_INT(x.live, 0);
}

/* Free without finish: everything is released, nothing leaks. */
TL_TEST(test_free_cancels)
{
    Ctx x;
    ctx_init(&x);
    x.busy = 1000;
    TlPartQ *q = NULL;
    TlError err = {0};
    CHECK(tl_partq_new(NP, fn, drop, &x, 4, &q, &err) == TL_OK);
    int pushed = 0;
    CHECK(push_n(q, &x, 50, false, &pushed, &err) == TL_OK);
    tl_partq_free(q);
    CHECK_EQ_INT(x.released, 50);
    CHECK_EQ_INT(x.live, 0);
    CHECK(!x.bad_order);
    tl_partq_free(NULL);
}

TL_TEST(test_one_partition_empty)
{
    Ctx x;
    ctx_init(&x);
    TlPartQ *q = NULL;
    TlError err = {0};
    CHECK(tl_partq_new(0, fn, drop, &x, 4, &q, &err) == TL_ERR_USAGE);
    CHECK(q == NULL);
    CHECK(tl_partq_new(1, fn, drop, &x, 4, &q, &err) == TL_OK);
    CHECK(tl_partq_finish(q, &err) == TL_OK); /* nothing pushed */
    tl_partq_free(q);
    CHECK_EQ_INT(x.released, 0);
}

int main(void)
{
    /* Threads: the pool is configured once; 1 is the inline path, the
     * others run concurrently (TL_PARTQ_THREADS picks, default 4). */
    const char *t = getenv("TL_PARTQ_THREADS");
    tl_pool_configure(t ? atoi(t) : 4);
    TL_RUN(test_order_and_release);
    TL_RUN(test_first_error);
    TL_RUN(test_same_partition);
    TL_RUN(test_free_cancels);
    TL_RUN(test_one_partition_empty);
    tl_pool_shutdown();
    return tl_test_summary(__FILE__);
}
