/*
 * alloc.c -- the one allocation hook of the program (Lua's frealloc).
 *
 * Every byte tally allocates goes through tl_malloc / tl_calloc / tl_realloc
 * and comes back through tl_free.  Having one door gives two things:
 *
 *   - a counter of allocation calls (tl_alloc_count, shown by --stats);
 *   - fault injection: the Nth allocation call can be made to fail (return
 *     NULL), and optionally every call after it, so tests can walk a code
 *     path through every allocation and check that each failure ends in a
 *     clean TL_ERR_OOM with nothing leaked (SQLite's *fault.test, Lua's
 *     ltests.c).
 *
 * Fault injection has two triggers.  Unit tests call tl_alloc_fail_at(n)
 * (always compiled in: one well-predicted branch per call).  Builds with
 * -DTL_FAULT also read the environment before the first allocation:
 *
 *   TALLY_FAIL_ALLOC=N        the Nth allocation call (1-based) fails
 *   TALLY_FAIL_ALLOC_ALL=1    ... and so does every later one
 *
 * Counters use relaxed atomics so worker threads may allocate later without
 * changing this file.  Only calls that allocate count: tl_free, and
 * tl_realloc(p, 0) (which frees), do not.
 */
#include "core.h"
#include "ctx.h"

#include <stdlib.h>
#include <sys/mman.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

static uint64_t n_calls;   /* allocation calls so far */
static uint64_t fail_at;   /* call number that fails; 0 = none */
static int fail_all;       /* calls after fail_at fail too */

#ifdef TL_FAULT
static int env_read;

/* Read TALLY_FAIL_ALLOC / TALLY_FAIL_ALLOC_ALL once, at the first call
 * (tuning.c reads the environment). */
static void read_env(void)
{
    bool all;
    env_read = 1;
    tl_tuning_read_fault(&fail_at, &all);
    fail_all = all;
}
#endif

/* Count one allocation call; true when this call must fail. */
static inline bool count_and_check(void)
{
    uint64_t n;
#ifdef TL_FAULT
    if (!env_read) read_env();
#endif
    n = __atomic_add_fetch(&n_calls, 1, __ATOMIC_RELAXED);
    if (__builtin_expect(fail_at != 0, 0)) {
        if (n == fail_at || (fail_all && n > fail_at)) return true;
    }
    return false;
}

/* Make the nth allocation call from now fail (1 = the very next call); 0
 * turns fault injection off.  With `all`, every later call fails as well.
 * For tests. */
void tl_alloc_fail_mode(uint64_t n, bool all)
{
#ifdef TL_FAULT
    if (!env_read) read_env();
#endif
    if (n == 0) {
        fail_at = 0;
        fail_all = 0;
        return;
    }
    fail_at = __atomic_load_n(&n_calls, __ATOMIC_RELAXED) + n;
    fail_all = all;
}

/* Make the nth allocation call from now fail, once (1 = the next call);
 * 0 turns fault injection off.  For tests. */
void tl_alloc_fail_at(uint64_t n)
{
    tl_alloc_fail_mode(n, false);
}

/* Number of allocation calls made so far. */
uint64_t tl_alloc_count(void)
{
    return __atomic_load_n(&n_calls, __ATOMIC_RELAXED);
}

/* malloc through the hook; NULL on failure (also for n == 0 requests that
 * the C library answers with NULL). */
void *tl_malloc(size_t n)
{
    if (count_and_check()) return NULL;
    return malloc(n ? n : 1);
}

/* calloc through the hook; NULL on failure or when count * size overflows. */
void *tl_calloc(size_t count, size_t size)
{
    if (count_and_check()) return NULL;
    if (size && count > SIZE_MAX / size) return NULL;
    if (count == 0 || size == 0) return calloc(1, 1);
    return calloc(count, size);
}

/* realloc through the hook.  tl_realloc(p, 0) frees p and returns NULL.  On
 * failure p is left untouched and NULL is returned. */
void *tl_realloc(void *p, size_t n)
{
    if (n == 0) {
        free(p);
        return NULL;
    }
    if (count_and_check()) return NULL;
    return realloc(p, n);
}

/* Free memory from tl_malloc / tl_calloc / tl_realloc; NULL is fine. */
void tl_free(void *p)
{
    free(p);
}

/* tl_realloc_big's header, right before the array: the bytes in use, and
 * the mapping's length (0: a malloc'd block, below TL_BIG_BYTES). */
typedef struct BigHead {
    size_t used;
    size_t mapped;
    size_t pad[2];            /* 32 bytes: the array stays 32-byte aligned */
} BigHead;

/* See core.h. */
void *tl_realloc_big(void *p, size_t n)
{
    BigHead *h = p ? (BigHead *)p - 1 : NULL;
    size_t used = h ? h->used : 0, page = 4096;
    if (n > SIZE_MAX / 2) return NULL;
    if (count_and_check()) return NULL;
    size_t total = sizeof(BigHead) + (n ? n : 1);
    if (total < TL_BIG_BYTES && (!h || h->mapped == 0)) {
        BigHead *q = realloc(h, total);
        if (!q) return NULL;
        if (n > used) memset((uint8_t *)(q + 1) + used, 0, n - used);
        q->used = n;
        q->mapped = 0;
        return q + 1;
    }
    size_t len = (total + page - 1) & ~(page - 1);
    BigHead *q;
    if (h && h->mapped) {
        if (len == h->mapped) {
            q = h;
        } else {
            q = mremap(h, h->mapped, len, MREMAP_MAYMOVE);
            if (q == MAP_FAILED) return NULL;
        }
        /* shrunk then grown in place: the bytes past n must read zero */
        if (n < used) memset((uint8_t *)(q + 1) + n, 0, (len < used + sizeof *q ? len - sizeof *q : used) - n);
    } else {
        q = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (q == MAP_FAILED) return NULL;
        if (h) {
            memcpy(q + 1, h + 1, used < n ? used : n);
            free(h);
        }
    }
    q->used = n;
    q->mapped = len;
    return q + 1;
}

/* See core.h. */
void tl_free_big(void *p)
{
    if (!p) return;
    BigHead *h = (BigHead *)p - 1;
    if (h->mapped) munmap(h, h->mapped);
    else free(h);
}

/* See core.h.  glibc's malloc_trim also returns whole free pages inside the
 * heaps, not only the top. */
void tl_alloc_trim(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

/* See core.h.  glibc's own thresholds are dynamic: a block is mapped when
 * it is larger than the largest block freed so far, and the top of a heap
 * is given back once more than twice that is free there.  A scan allocates
 * and frees a morsel's arrays (a few hundred KB to about 2.3 MiB) morsel
 * after morsel, and with those rules the heaps shrank and grew again every
 * cycle, faulting the same pages in anew: up to 8,000 page faults more per
 * 1e7-row group-by at two threads, and at one thread 11,500 faults against
 * 2,500 (q1), costly on a VM where a fault takes tens of microseconds.
 * Fixed instead: blocks from 4 MiB on are mapped, and a heap top is
 * trimmed past 16 MiB free (higher values kept more memory per arena:
 * group-by q6 peak +17 %). */
void tl_alloc_tune(void)
{
#ifdef __GLIBC__
    static bool done;
    if (done) return;
    done = true;
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
    mallopt(M_TRIM_THRESHOLD, 16 << 20);
#endif
}

/* Copy a NUL-terminated string; NULL on OOM. */
char *tl_strdup(const char *s)
{
    return tl_strndup(s, strlen(s));
}

/* Copy at most n bytes of s (stopping at a NUL) plus a terminating NUL;
 * NULL on OOM. */
char *tl_strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *d = tl_malloc(len + 1);
    if (!d) return NULL;
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}
