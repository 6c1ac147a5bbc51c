/*
 * target.c -- what an output path names, decided before anything is written.
 *
 * `-o PATH` may name a file to create, a file to replace, or something that
 * is not a file at all: a device (/dev/null, a terminal), a FIFO, a socket,
 * or an open descriptor (/dev/stdout, /dev/fd/N, a shell's process
 * substitution >(cmd)).  Replacing the last kind with a regular file would
 * break it for everyone (as root, `-o /dev/null` would turn the machine's
 * null device into a file), so the path is resolved first and its final
 * object classified:
 *
 *   PATH --lstat--> symlink --readlink--> the link's target, relative to
 *        the link's folder (the kernel resolves the folder part, so `..`
 *        in a link means what it means to the kernel); at most 40 hops
 *        --lstat--> absent         TL_TARGET_NEW      atomic create
 *                   regular file   TL_TARGET_REGULAR  atomic replace
 *                   folder         error EISDIR
 *                   anything else  TL_TARGET_STREAM   written in place
 *
 * Only the last component is rewritten, so the final path names the same
 * folder the kernel would reach, and the sink's temporary file lands in the
 * folder of the final target: a symlink keeps pointing at the new file.
 *
 * Links in /proc are not paths: /proc/self/fd/N (what /dev/stdout and
 * /dev/fd/N lead to) reads as "pipe:[123]" or as the name a file had when
 * it was opened.  A symlink on procfs that leads to something other than a
 * folder is therefore an open file, written in place (TL_TARGET_STREAM)
 * whatever it is; when it is one of this process's own descriptors (same
 * device and inode as descriptor N), the sink writes to a duplicate of that
 * descriptor, so `-o /dev/stdout >>log` appends just as standard output
 * would.  Links to folders (/proc/self) resolve as text.
 */
#include "format.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define MAX_HOPS 40
#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

static TlStatus cannot(const char *path, int e, TlError *err)
{
    return tl_error(err, TL_ERR_IO, "cannot write %s: %s", tl_quote_name(path).s, strerror(e));
}

/* Whether the symlink at path lives on procfs (its filesystem, not its
 * target's: O_PATH | O_NOFOLLOW opens the link itself). */
static bool link_on_proc(const char *path)
{
    struct statfs sf;
    bool yes = false;
    int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return false;
    if (fstatfs(fd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC) yes = true;
    close(fd);
    return yes;
}

/* N when path's last component is a number N and descriptor N of this
 * process is the object st describes, else -1. */
static int own_descriptor(const char *path, const struct stat *st)
{
    const char *base = strrchr(path, '/');
    struct stat fst;
    long n = 0;
    base = base ? base + 1 : path;
    if (!*base) return -1;
    for (const char *c = base; *c; c++) {
        if (*c < '0' || *c > '9' || n > INT_MAX / 10) return -1;
        n = n * 10 + (*c - '0');
    }
    if (fstat((int)n, &fst) != 0) return -1;
    return fst.st_dev == st->st_dev && fst.st_ino == st->st_ino ? (int)n : -1;
}

/* The link at cur replaced by its target: absolute as is, relative joined
 * to cur's folder.  NULL on OOM or a failed readlink (errno set). */
static char *follow(const char *cur)
{
    char buf[PATH_MAX + 1];
    ssize_t n = readlink(cur, buf, sizeof buf - 1);
    const char *slash;
    size_t dir;
    char *next;
    if (n < 0) return NULL;
    if (n == (ssize_t)sizeof buf - 1) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    buf[n] = '\0';
    slash = strrchr(cur, '/');
    dir = buf[0] == '/' || !slash ? 0 : (size_t)(slash - cur) + 1;
    next = tl_malloc(dir + (size_t)n + 1);
    if (!next) {
        errno = ENOMEM;
        return NULL;
    }
    memcpy(next, cur, dir);
    memcpy(next + dir, buf, (size_t)n + 1);
    return next;
}

/* See format.h. */
TlStatus tl_target_resolve(const char *path, TlTarget *t, TlError *err)
{
    char *cur = tl_strdup(path);
    memset(t, 0, sizeof *t);
    t->fd = -1;
    if (!cur) return tl_error_oom(err);
    for (int hops = 0;; hops++) {
        struct stat lst, st;
        if (lstat(cur, &lst) != 0) {
            int e = errno;
            if (e == ENOENT && *cur && cur[strlen(cur) - 1] != '/') {
                t->kind = TL_TARGET_NEW;
                t->final = cur;
                return TL_OK;
            }
            tl_free(cur);
            return cannot(path, e, err);
        }
        if (S_ISLNK(lst.st_mode)) {
            char *next;
            if (hops == MAX_HOPS) {
                tl_free(cur);
                return cannot(path, ELOOP, err);
            }
            if (link_on_proc(cur) && stat(cur, &st) == 0 && !S_ISDIR(st.st_mode)) {
                t->kind = TL_TARGET_STREAM;
                t->final = cur;
                t->fd = own_descriptor(cur, &st);
                t->regular = S_ISREG(st.st_mode);
                t->dev = st.st_dev;
                t->ino = st.st_ino;
                return TL_OK;
            }
            next = follow(cur);
            if (!next) {
                int e = errno;
                tl_free(cur);
                return e == ENOMEM ? tl_error_oom(err) : cannot(path, e, err);
            }
            tl_free(cur);
            cur = next;
            continue;
        }
        if (S_ISDIR(lst.st_mode)) {
            tl_free(cur);
            return cannot(path, EISDIR, err);
        }
        t->kind = S_ISREG(lst.st_mode) ? TL_TARGET_REGULAR : TL_TARGET_STREAM;
        t->regular = S_ISREG(lst.st_mode);
        t->final = cur;
        t->dev = lst.st_dev;
        t->ino = lst.st_ino;
        return TL_OK;
    }
}

/* See format.h. */
void tl_target_free(TlTarget *t)
{
    tl_free(t->final);
    t->final = NULL;
}
