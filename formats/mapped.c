/*
 * mapped.c -- mapped input files that may change underneath a run.
 *
 * A regular input file is mapped read-only (format.c).  Another process
 * may truncate it while tally reads it (log rotation with copytruncate
 * does exactly that): a read through the mapping of a page that now lies
 * past the file's end raises SIGBUS, which kills the process.  Three parts
 * turn that into a data error:
 *
 *   registry  every mapping's address range sits in a process-wide table
 *             that a signal handler can read without locks or allocation:
 *             chunks of slots, linked and never freed; a slot's base is
 *             published after its size and cleared before the unmap.
 *   handler   tl_input_guard_install (the program calls it once) installs a
 *             SIGBUS handler.  A fault inside a registered range maps
 *             anonymous zero pages from the faulting page to the range's
 *             end, marks the slot and returns: the read resumes and sees
 *             zeros.  A fault anywhere else restores the disposition found
 *             at installation and returns, so the fault repeats and ends
 *             the process as it would have without the handler.
 *   checks    decoders copy their morsels with pread (tl_input_pread): a
 *             short read marks the slot and zero-fills.  After each morsel,
 *             split and open, format.c checks the input (tl_input_check:
 *             the mark, then fstat); the run checks every input again
 *             before it commits (tl_input_changed), and that error wins
 *             over whatever else the zeros caused (a bad value, a restart).
 *
 * So a run reads a file as it was at open, up to its size then: bytes
 * appended later are not read; a file that shrinks is the error
 * "FILE: changed size while being read (was N bytes, now M)", never zeros
 * in an output.
 *
 * Descriptors.  The mapping does not need its file open; pread does.  A
 * glob of thousands of files maps them all (planning reads every header),
 * so their descriptors are a bounded pool: at most max_open (an eighth of
 * the RLIMIT_NOFILE soft limit, between 4 and 64) stay open, and the least
 * recently used idle one is closed when another is needed.  A closed one is
 * reopened by path and used only when it is still the same file (device and
 * inode); when it is not, the reader reads the mapping, which still holds
 * the original file's pages.
 */
#include "fmt_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------- registry */

/* One mapped range.  base 0: free.  Written under g_lock, read by the
 * handler with atomic loads. */
typedef struct Slot {
    uintptr_t base;
    size_t span;              /* the mapping's length, whole pages */
    int shrank;               /* the file was found shorter than mapped */
    void *owner;              /* its Mapped (not for the handler) */
    struct Chunk *chunk;      /* the chunk holding it */
} Slot;

#define CHUNK_SLOTS 1024

typedef struct Chunk {
    Slot slot[CHUNK_SLOTS];
    int used;                 /* slots taken (g_lock): full chunks are skipped */
    struct Chunk *next;       /* published with a release store */
} Chunk;

/* A mapped input: the TlBuf's owner. */
typedef struct Mapped {
    char *path;
    int fd;                   /* -1: closed (the pool reopens it) */
    dev_t dev;
    ino_t ino;
    size_t size;              /* bytes mapped: the size at open */
    Slot *slot;
    int users;                /* preads and fstats in flight */
    struct Mapped *prev, *next; /* the pool's open list, most recent first */
} Mapped;

/* At most this many inputs are mapped at once; more are read into memory
 * (tl_input_map says no).  Every mapping is an entry of the process's
 * memory map, whose size the kernel limits (vm.max_map_count, 65,530 by
 * default), and the allocator needs entries of its own: a glob of 100,000
 * files mapped whole would leave it none. */
#define MAX_MAPPED 16384

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_mapped;          /* inputs mapped now */
static Chunk g_chunks;        /* the first chunk; more are linked on */
static int g_any;             /* some slot was marked since the reset */
static size_t g_page = 4096;  /* set at installation */
static struct sigaction g_old; /* SIGBUS's disposition before ours */
static bool g_installed;
/* the first shrink found, kept when its input is released before the run
 * reports it (a restart, the plan freed after an error) */
static char g_report[TL_ERRMSG_MAX];

/* A free slot (base 0) for a range, from the table or a new chunk; NULL on
 * OOM.  Under g_lock. */
static Slot *slot_take(void)
{
    Chunk *c = &g_chunks;
    for (;;) {
        for (int i = 0; c->used < CHUNK_SLOTS && i < CHUNK_SLOTS; i++)
            if (__atomic_load_n(&c->slot[i].base, __ATOMIC_RELAXED) == 0) {
                c->used++;
                c->slot[i].chunk = c;
                return &c->slot[i];
            }
        if (!c->next) {
            /* never freed: the handler may be walking it */
            Chunk *n = tl_calloc(1, sizeof *n);
            if (!n) return NULL;
            __atomic_store_n(&c->next, n, __ATOMIC_RELEASE);
        }
        c = c->next;
    }
}

/* Mark s: its file is shorter than its mapping.  Async-signal-safe. */
static void slot_mark(Slot *s)
{
    __atomic_store_n(&s->shrank, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&g_any, 1, __ATOMIC_RELEASE);
}

/* The SIGBUS handler (see the top of the file). */
static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    const uintptr_t a = (uintptr_t)si->si_addr;
    (void)sig;
    (void)uc;
    for (Chunk *c = &g_chunks; c; c = __atomic_load_n(&c->next, __ATOMIC_ACQUIRE)) {
        for (int i = 0; i < CHUNK_SLOTS; i++) {
            Slot *s = &c->slot[i];
            uintptr_t base = __atomic_load_n(&s->base, __ATOMIC_ACQUIRE);
            if (base == 0 || a < base || a - base >= s->span) continue;
            uintptr_t page = a & ~(uintptr_t)(g_page - 1);
            if (mmap((void *)page, base + s->span - page, PROT_READ,
                     MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
                goto fall;
            slot_mark(s);
            return;
        }
    }
fall:
    sigaction(SIGBUS, &g_old, NULL);
}

/* Install the SIGBUS handler that turns a fault in a mapped input's range
 * into zero pages and a mark (see the top of the file).  Process-wide: the
 * program calls it once at start, before any input is mapped; a library
 * user that does not call it gets a SIGBUS death on a shrinking input, as
 * before. */
void tl_input_guard_install(void)
{
    struct sigaction sa;
    long page = sysconf(_SC_PAGESIZE);
    if (g_installed) return;
    if (page > 0) g_page = (size_t)page;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, &g_old) == 0) g_installed = true;
}

/* ------------------------------------------------------------------ pool */

static Mapped *g_open;        /* open descriptors, most recently used first */
static int g_n_open, g_max_open;

/* Take m off the open list (its descriptor is closed or about to be).
 * Under g_lock. */
static void pool_unlink(Mapped *m)
{
    if (m->prev) m->prev->next = m->next;
    else g_open = m->next;
    if (m->next) m->next->prev = m->prev;
    m->prev = m->next = NULL;
    g_n_open--;
}

/* Put m, whose descriptor is open, first on the open list.  Under g_lock. */
static void pool_push(Mapped *m)
{
    m->prev = NULL;
    m->next = g_open;
    if (g_open) g_open->prev = m;
    g_open = m;
    g_n_open++;
}

/* Make room for one more open descriptor: close the least recently used
 * idle one when the pool is full.  Under g_lock. */
static void pool_room(void)
{
    if (!g_max_open) {
        struct rlimit rl;
        rlim_t n = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur / 8 : 8;
        g_max_open = n < 4 ? 4 : n > 64 ? 64 : (int)n;
    }
    if (g_n_open < g_max_open) return;
    Mapped *last = g_open;
    while (last && last->next) last = last->next;
    for (Mapped *m = last; m; m = m->prev) {
        if (m->users) continue;
        pool_unlink(m);
        close(m->fd);
        m->fd = -1;
        return;
    }
}

/* m's descriptor, reopened when the pool closed it, with m->users counted;
 * -1 when the path no longer names the file mapped (or cannot be opened).
 * Under g_lock. */
static int pool_get(Mapped *m)
{
    if (m->fd < 0) {
        struct stat st;
        int fd;
        pool_room();
        do {
            fd = open(m->path, O_RDONLY | O_CLOEXEC);
        } while (fd < 0 && errno == EINTR);
        if (fd < 0) return -1;
        if (fstat(fd, &st) != 0 || st.st_dev != m->dev || st.st_ino != m->ino) {
            close(fd);
            return -1;
        }
        m->fd = fd;
        pool_push(m);
    } else if (g_open != m) {
        pool_unlink(m);
        pool_push(m);
    }
    m->users++;
    return m->fd;
}

/* The end of a use of m's descriptor (pool_get): it may be closed again. */
static void pool_put(Mapped *m)
{
    pthread_mutex_lock(&g_lock);
    m->users--;
    pthread_mutex_unlock(&g_lock);
}

/* ---------------------------------------------------------------- inputs */

/* The current size of m's file (fstat on its descriptor), or -1 when the
 * pool cannot give one (the path names another file now: a rotated log's
 * successor says nothing about the file mapped). */
static long long size_now(Mapped *m)
{
    struct stat st;
    int fd;
    pthread_mutex_lock(&g_lock);
    fd = pool_get(m);
    pthread_mutex_unlock(&g_lock);
    if (fd >= 0) {
        int rc = fstat(fd, &st);
        pool_put(m);
        if (rc == 0) return (long long)st.st_size;
    }
    return -1;
}

/* The error for m, whose file shrank. */
static TlStatus shrank_error(Mapped *m, TlError *err)
{
    long long now = size_now(m);
    if (now < 0 || (unsigned long long)now >= m->size)
        return tl_error(err, TL_ERR_DATA, "%s: changed size while being read "
                        "(was %zu bytes)", m->path, m->size);
    return tl_error(err, TL_ERR_DATA, "%s: changed size while being read "
                    "(was %zu bytes, now %lld)", m->path, m->size, now);
}

/* A mapped input's release (tl_buf_wrap): the slot is cleared before the
 * range is unmapped, so the handler never maps over another mapping that
 * takes its addresses. */
static void release_mapped(void *owner, uint8_t *data, size_t size)
{
    Mapped *m = owner;
    bool shrank = __atomic_load_n(&m->slot->shrank, __ATOMIC_ACQUIRE);
    TlError e;
    if (shrank) shrank_error(m, &e); /* before the lock: it takes it */
    pthread_mutex_lock(&g_lock);
    if (shrank && !g_report[0]) memcpy(g_report, e.msg, sizeof g_report);
    __atomic_store_n(&m->slot->base, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&m->slot->shrank, 0, __ATOMIC_RELAXED);
    m->slot->chunk->used--;
    g_mapped--;
    if (m->fd >= 0) {
        pool_unlink(m);
        close(m->fd);
    }
    pthread_mutex_unlock(&g_lock);
    munmap(data, size);
    tl_free(m->path);
    tl_free(m);
}

/* See fmt_impl.h. */
TlStatus tl_input_map(const char *path, int fd, const struct stat *st, TlBuf **out,
                      TlError *err)
{
    const size_t size = (size_t)st->st_size;
    Mapped *m;
    void *map;
    *out = NULL;
    if (__atomic_load_n(&g_mapped, __ATOMIC_RELAXED) >= MAX_MAPPED) return TL_OK;
    map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) return TL_OK; /* the caller reads the file */
    m = tl_calloc(1, sizeof *m);
    if (m) m->path = tl_strdup(path);
    if (!m || !m->path) goto oom;
    m->fd = fd;
    m->dev = st->st_dev;
    m->ino = st->st_ino;
    m->size = size;
    pthread_mutex_lock(&g_lock);
    m->slot = slot_take();
    if (m->slot) {
        m->slot->shrank = 0;
        m->slot->owner = m;
        m->slot->span = (size + g_page - 1) & ~(g_page - 1);
        __atomic_store_n(&m->slot->base, (uintptr_t)map, __ATOMIC_RELEASE);
        pool_room();
        pool_push(m);
        g_mapped++;
    }
    pthread_mutex_unlock(&g_lock);
    if (!m->slot) goto oom;
    *out = tl_buf_wrap(map, size, release_mapped, m);
    if (!*out) {
        pthread_mutex_lock(&g_lock);
        pool_unlink(m);
        m->fd = -1; /* still the caller's */
        pthread_mutex_unlock(&g_lock);
        release_mapped(m, map, size);
        return tl_error_oom(err);
    }
    madvise(map, size, MADV_SEQUENTIAL);
    return TL_OK;
oom:
    if (m) tl_free(m->path);
    tl_free(m);
    munmap(map, size);
    return tl_error_oom(err);
}

/* True when b is a read-only mapping of a regular file made by
 * tl_input_load: pages given back with MADV_DONTNEED fault in again from the
 * file.  False for every heap buffer (standard input, decompressed input). */
bool tl_input_mapped(const TlBuf *b)
{
    return b && b->release == release_mapped;
}

/* See fmt_impl.h. */
bool tl_input_pread(const TlBuf *b, uint8_t *dst, size_t off, size_t n)
{
    Mapped *m = b->owner;
    int fd;
    pthread_mutex_lock(&g_lock);
    fd = pool_get(m);
    pthread_mutex_unlock(&g_lock);
    if (fd < 0) return false;
    while (n > 0) {
        ssize_t got = pread(fd, dst, n, (off_t)off);
        if (got < 0 && errno == EINTR) continue;
        if (got == 0) { /* the file ends before the mapping does */
            slot_mark(m->slot);
            memset(dst, 0, n);
            break;
        }
        if (got < 0) {
            pool_put(m);
            return false;
        }
        dst += got;
        off += (size_t)got;
        n -= (size_t)got;
    }
    pool_put(m);
    return true;
}

/* See fmt_impl.h. */
TlStatus tl_input_check(const TlBuf *b, TlError *err)
{
    Mapped *m;
    if (!tl_input_mapped(b)) return TL_OK;
    m = b->owner;
    if (!__atomic_load_n(&m->slot->shrank, __ATOMIC_ACQUIRE)) {
        long long now = size_now(m);
        if (now < 0 || (unsigned long long)now >= m->size) return TL_OK;
        slot_mark(m->slot);
    }
    return shrank_error(m, err);
}

/* See format.h. */
TlStatus tl_input_changed(TlError *err)
{
    Mapped *found = NULL;
    if (!__atomic_load_n(&g_any, __ATOMIC_ACQUIRE)) return TL_OK;
    pthread_mutex_lock(&g_lock);
    if (g_report[0]) {
        tl_error(err, TL_ERR_DATA, "%s", g_report);
        pthread_mutex_unlock(&g_lock);
        return TL_ERR_DATA;
    }
    for (Chunk *c = &g_chunks; c && !found; c = c->next)
        for (int i = 0; i < CHUNK_SLOTS && !found; i++)
            if (__atomic_load_n(&c->slot[i].base, __ATOMIC_ACQUIRE) &&
                __atomic_load_n(&c->slot[i].shrank, __ATOMIC_ACQUIRE))
                found = c->slot[i].owner;
    pthread_mutex_unlock(&g_lock);
    /* the caller is between attempts or before its commit: no reader runs,
     * so found stays mapped */
    return found ? shrank_error(found, err) : TL_OK;
}

/* See format.h. */
void tl_input_changes_reset(void)
{
    pthread_mutex_lock(&g_lock);
    g_report[0] = '\0';
    __atomic_store_n(&g_any, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&g_lock);
}
