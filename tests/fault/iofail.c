/*
 * iofail.c -- an LD_PRELOAD shim that makes the Nth file operation fail.
 *
 * TALLY_IOFAIL="OP:N:ERRNO" makes the Nth call of OP fail with ERRNO, where
 * OP is one of open, read, write, fsync, rename and ERRNO is ENOSPC, EIO,
 * EACCES, ENOENT (a file gone since) or EINTR-free names listed below.
 * Only calls on descriptors above 2 count for read/write/fsync (standard streams stay usable, so the error
 * message still reaches stderr); open counts every open/openat of a path
 * outside /proc, /sys and /dev.  TALLY_IOFAIL_ALL=1 makes every call from the
 * Nth on fail.  When the variable is unset the shim changes nothing.
 *
 * The shim prints nothing; the test compares what tally did against the
 * failure it asked for.  It is built as build/iofail.so by `make check`.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static char op_name[16];
static long fail_at = -1, calls;
static int fail_errno, fail_all, inited;

static void init(void)
{
    if (inited) return;
    inited = 1;
    const char *s = getenv("TALLY_IOFAIL");
    if (!s) return;
    const char *c1 = strchr(s, ':');
    if (!c1 || (size_t)(c1 - s) >= sizeof op_name) return;
    memcpy(op_name, s, (size_t)(c1 - s));
    fail_at = strtol(c1 + 1, NULL, 10);
    const char *c2 = strchr(c1 + 1, ':');
    const char *e = c2 ? c2 + 1 : "EIO";
    fail_errno = !strcmp(e, "ENOSPC") ? ENOSPC : !strcmp(e, "EACCES") ? EACCES
               : !strcmp(e, "ENOENT") ? ENOENT
               : !strcmp(e, "EDQUOT") ? EDQUOT : !strcmp(e, "EROFS") ? EROFS : EIO;
    fail_all = getenv("TALLY_IOFAIL_ALL") != NULL;
}

/* True when this call of `op` is the one (or one of those) to fail. */
static int should_fail(const char *op)
{
    init();
    if (fail_at < 0 || strcmp(op, op_name) != 0) return 0;
    calls++;
    return calls == fail_at || (fail_all && calls > fail_at);
}

static int counted_path(const char *p)
{
    return p && strncmp(p, "/proc/", 6) && strncmp(p, "/sys/", 5) && strncmp(p, "/dev/", 5);
}

#define REAL(ret, name, ...) \
    static ret (*real_##name)(__VA_ARGS__); \
    if (!real_##name) real_##name = (ret (*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name)

ssize_t write(int fd, const void *buf, size_t n)
{
    REAL(ssize_t, write, int, const void *, size_t);
    if (fd > 2 && should_fail("write")) { errno = fail_errno; return -1; }
    return real_write(fd, buf, n);
}

ssize_t read(int fd, void *buf, size_t n)
{
    REAL(ssize_t, read, int, void *, size_t);
    if (fd > 2 && should_fail("read")) { errno = fail_errno; return -1; }
    return real_read(fd, buf, n);
}

int fsync(int fd)
{
    REAL(int, fsync, int);
    if (fd > 2 && should_fail("fsync")) { errno = fail_errno; return -1; }
    return real_fsync(fd);
}

int fdatasync(int fd)
{
    REAL(int, fdatasync, int);
    if (fd > 2 && should_fail("fsync")) { errno = fail_errno; return -1; }
    return real_fdatasync(fd);
}

int rename(const char *a, const char *b)
{
    REAL(int, rename, const char *, const char *);
    if (should_fail("rename")) { errno = fail_errno; return -1; }
    return real_rename(a, b);
}

int open(const char *path, int flags, ...)
{
    REAL(int, open, const char *, int, ...);
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, mode_t);
        va_end(ap);
    }
    if (counted_path(path) && should_fail("open")) { errno = fail_errno; return -1; }
    return real_open(path, flags, mode);
}

int open64(const char *path, int flags, ...) __attribute__((alias("open")));

int openat(int dirfd, const char *path, int flags, ...)
{
    REAL(int, openat, int, const char *, int, ...);
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, mode_t);
        va_end(ap);
    }
    if (counted_path(path) && should_fail("open")) { errno = fail_errno; return -1; }
    return real_openat(dirfd, path, flags, mode);
}
