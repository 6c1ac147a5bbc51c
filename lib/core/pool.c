/*
 * pool.c -- the process-wide thread pool (pool.h).
 *
 * One mutex guards the queue, a singly linked FIFO of task nodes; workers
 * sleep on one condition variable while it is empty.  Nodes come from
 * tl_malloc, so an allocation failure is an error of the submitting call
 * like any other.  Workers are started at the first submit, up to
 * threads - 1 of them; a failed pthread_create just leaves fewer workers
 * (the waiters' help keeps every task running).
 *
 * Workers and tl_run_deep's thread get TL_DEEP_STACK bytes of stack (see
 * pool.h); a worker that cannot get it is not started, so every thread that
 * runs tasks has the stack the bounds of a deep run assume.
 *
 * TlWait pairs a mutex with a condition variable for callers that wait for
 * results.  tl_wait_step runs a queued task when there is one, so waiting
 * never idles a thread while work is queued, and sleeps otherwise; the
 * sleep is bounded (2 ms) as a guard against a wake-up sent between the
 * queue check and the sleep by a thread that did not hold the lock.
 */
#include "pool.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

typedef struct Task {
    struct Task *next;
    TlTaskFn fn;
    void *arg;
} Task;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    Task *head, *tail;
    int threads;         /* configured, caller included; 0 = not yet */
    int n_workers;
    pthread_t *workers;
    bool started, stop;
} P = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, 0, 0,
       NULL, false, false};

/* Whether this thread was started with TL_DEEP_STACK bytes of stack. */
static _Thread_local bool deep_stack;

/* See pool.h. */
bool tl_stack_deep(void)
{
    return deep_stack;
}

typedef struct Deep {
    void *(*fn)(void *);
    void *arg;
} Deep;

static void *deep_main(void *arg)
{
    Deep *d = arg;
    deep_stack = true;
    return d->fn(d->arg);
}

/* Start fn(arg) on a new thread with a deep stack; false when impossible. */
static bool deep_create(pthread_t *t, void *(*fn)(void *), Deep *d)
{
    pthread_attr_t attr;
    bool ok;
    if (pthread_attr_init(&attr) != 0) return false;
    ok = pthread_attr_setstacksize(&attr, TL_DEEP_STACK) == 0 &&
         pthread_create(t, &attr, fn, d) == 0;
    pthread_attr_destroy(&attr);
    return ok;
}

/* See pool.h. */
bool tl_run_deep(void *(*fn)(void *), void *arg)
{
    Deep d = {fn, arg};
    pthread_t t;
    if (!deep_create(&t, deep_main, &d)) return false;
    pthread_join(t, NULL);
    return true;
}

static int online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

/* See pool.h. */
void tl_pool_configure(int n)
{
    pthread_mutex_lock(&P.mu);
    if (!P.started) P.threads = n > 0 ? (n > 256 ? 256 : n) : online_cpus();
    pthread_mutex_unlock(&P.mu);
}

/* See pool.h. */
int tl_pool_threads(void)
{
    int n;
    pthread_mutex_lock(&P.mu);
    if (P.threads == 0) P.threads = online_cpus();
    n = P.threads;
    pthread_mutex_unlock(&P.mu);
    return n;
}

/* Pop the oldest task; call with P.mu held. */
static Task *pop(void)
{
    Task *t = P.head;
    if (t) {
        P.head = t->next;
        if (!P.head) P.tail = NULL;
    }
    return t;
}

static void run_task(Task *t)
{
    TlTaskFn fn = t->fn;
    void *arg = t->arg;
    tl_free(t);
    fn(arg);
}

static void *worker_main(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&P.mu);
    for (;;) {
        Task *t = pop();
        if (t) {
            pthread_mutex_unlock(&P.mu);
            run_task(t);
            pthread_mutex_lock(&P.mu);
            continue;
        }
        if (P.stop) break;
        pthread_cond_wait(&P.cv, &P.mu);
    }
    pthread_mutex_unlock(&P.mu);
    return NULL;
}

/* Start the workers; call with P.mu held. */
static void start_workers(void)
{
    int want;
    P.started = true;
    if (P.threads == 0) P.threads = online_cpus();
    want = P.threads - 1;
    if (want <= 0) return;
    P.workers = tl_calloc((size_t)want, sizeof *P.workers);
    if (!P.workers) return; /* no workers: helpers run every task */
    for (int i = 0; i < want; i++) {
        static Deep d = {worker_main, NULL};
        if (!deep_create(&P.workers[P.n_workers], deep_main, &d)) break;
        P.n_workers++;
    }
}

/* See pool.h. */
TlStatus tl_pool_submit(TlTaskFn fn, void *arg, TlError *err)
{
    Task *t = tl_malloc(sizeof *t);
    if (!t) return tl_error_oom(err);
    t->next = NULL;
    t->fn = fn;
    t->arg = arg;
    pthread_mutex_lock(&P.mu);
    if (!P.started) start_workers();
    if (P.tail) P.tail->next = t;
    else P.head = t;
    P.tail = t;
    pthread_cond_signal(&P.cv);
    pthread_mutex_unlock(&P.mu);
    return TL_OK;
}

/* See pool.h. */
bool tl_pool_help(void)
{
    Task *t;
    pthread_mutex_lock(&P.mu);
    t = pop();
    pthread_mutex_unlock(&P.mu);
    if (!t) return false;
    run_task(t);
    return true;
}

/* See pool.h. */
void tl_pool_shutdown(void)
{
    pthread_mutex_lock(&P.mu);
    P.stop = true;
    pthread_cond_broadcast(&P.cv);
    pthread_mutex_unlock(&P.mu);
    for (int i = 0; i < P.n_workers; i++) pthread_join(P.workers[i], NULL);
    while (tl_pool_help()) {
    }
    pthread_mutex_lock(&P.mu);
    tl_free(P.workers);
    P.workers = NULL;
    P.n_workers = 0;
    P.started = false;
    P.stop = false;
    pthread_mutex_unlock(&P.mu);
}

/* ------------------------------------------------------------- waiting */

struct TlWait {
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

/* See pool.h. */
TlWait *tl_wait_new(void)
{
    TlWait *w = tl_malloc(sizeof *w);
    if (!w) return NULL;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    return w;
}

/* See pool.h. */
void tl_wait_free(TlWait *w)
{
    if (!w) return;
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    tl_free(w);
}

/* See pool.h. */
void tl_wait_lock(TlWait *w) { pthread_mutex_lock(&w->mu); }
/* See pool.h. */
void tl_wait_unlock(TlWait *w) { pthread_mutex_unlock(&w->mu); }
/* See pool.h. */
void tl_wait_signal(TlWait *w) { pthread_cond_broadcast(&w->cv); }

/* See pool.h. */
void tl_wait_step(TlWait *w)
{
    Task *t;
    struct timespec ts;
    pthread_mutex_lock(&P.mu);
    t = pop();
    pthread_mutex_unlock(&P.mu);
    if (t) {
        pthread_mutex_unlock(&w->mu);
        run_task(t);
        pthread_mutex_lock(&w->mu);
        return;
    }
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 2000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(&w->cv, &w->mu, &ts);
}

/* ---------------------------------------------------------- parallel for */

typedef struct ForJob {
    void (*fn)(void *arg, int64_t i);
    void *arg;
    int64_t n, next;
    int queued;  /* submitted for_task calls not yet returned */
    TlWait *w;
} ForJob;

static void for_loop(ForJob *j)
{
    for (;;) {
        int64_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (i >= j->n) break;
        j->fn(j->arg, i);
    }
}

static void for_task(void *p)
{
    ForJob *j = p;
    for_loop(j);
    tl_wait_lock(j->w);
    if (--j->queued == 0) tl_wait_signal(j->w);
    tl_wait_unlock(j->w);
}

/* See pool.h.  The caller runs indexes too, then waits until every task
 * it queued has returned (queued tasks nobody picked up run on the caller
 * through tl_wait_step), so j never outlives a task that uses it. */
TlStatus tl_pool_for(int64_t n, void (*fn)(void *arg, int64_t i), void *arg,
                     TlError *err)
{
    ForJob j = {fn, arg, n, 0, 0, NULL};
    int helpers = tl_pool_threads() - 1;
    TlStatus st = TL_OK;
    if (n <= 0) return TL_OK;
    if (helpers <= 0 || n == 1) {
        for (int64_t i = 0; i < n; i++) fn(arg, i);
        return TL_OK;
    }
    if (!(j.w = tl_wait_new())) return tl_error_oom(err);
    if (helpers > n - 1) helpers = (int)(n - 1);
    for (int k = 0; k < helpers; k++) {
        tl_wait_lock(j.w);
        j.queued++;
        tl_wait_unlock(j.w);
        if ((st = tl_pool_submit(for_task, &j, err)) != TL_OK) {
            tl_wait_lock(j.w);
            j.queued--;
            tl_wait_unlock(j.w);
            st = TL_OK; /* fewer helpers; the caller does the rest */
            break;
        }
    }
    for_loop(&j);
    tl_wait_lock(j.w);
    while (j.queued > 0) tl_wait_step(j.w);
    tl_wait_unlock(j.w);
    tl_wait_free(j.w);
    return st;
}
