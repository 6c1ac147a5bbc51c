/*
 * sink.c -- where output bytes go, all or nothing.
 *
 * A run writes its whole output into a sink and only commits it once the
 * run has succeeded; a restart (format.h) resets the sink and writes again.
 * So nothing half-written is ever visible.  What a path names is decided
 * first (target.c): a new or regular file is replaced atomically, anything
 * else is written in place, never replaced:
 *
 *   file sink    (new or regular final target)
 *                bytes -> 64 KiB buffer -> an unnamed file in the target's
 *                folder (open O_TMPFILE), or where the filesystem refuses
 *                that, "<dir>/.<name>.tmp-XXXXXX"
 *                commit: flush, fsync, link the unnamed file in as
 *                ".<name>.tmp-XXXXXX" (linkat cannot replace), rename that
 *                over <dir>/<name>
 *                close without commit: the unnamed file vanishes with its
 *                descriptor; a named one is unlinked
 *   stream sink  (standard output, or a device, FIFO, socket, /dev/fd/N)
 *                bytes -> memory (up to 64 MiB) -> spill to an unnamed
 *                temporary file beyond that
 *                commit: copy the spill file, then the memory, to the
 *                descriptor (1, or the target opened at tl_sink_open)
 *   streaming    (standard output, once lib/run knows the run cannot
 *                restart: tl_sink_stream) bytes -> a DIRECT_BUF buffer ->
 *                descriptor 1 when full and at each tl_sink_flush; a run
 *                that fails after that leaves what went out (as any Unix
 *                filter), and a reset after it is an internal error
 *
 * A signal that ends the process mid-run (cmd/main.c) leaves nothing: the
 * unnamed file has no name to leave, and every name the sink gives a
 * temporary file is in the cleanup table (lib/core/cleanup.c) from before
 * it exists until after it is renamed, which the handler unlinks.  Only
 * SIGKILL on a filesystem without O_TMPFILE (or in the instant between the
 * link and the rename) can leave a ".tmp-" file; the target is never
 * touched before the rename.
 *
 * Writeback starts while the run goes on: every WRITEBACK_CHUNK bytes
 * written to the temporary file are handed to the kernel's writeback at
 * once (sync_file_range(SYNC_FILE_RANGE_WRITE): start the writes, do not
 * wait), so the disk works while tally still computes, and the fsync at
 * commit only waits for the last chunk instead of the whole file (a 500 MB
 * answer on a slow disk otherwise spends seconds in that one fsync).  It
 * is only a hint: its errors are ignored, and the fsync still decides.
 *
 * A sink with a path may compress (tl_sink_set_compression, compress.c):
 * the bytes then pass through a gzip or zstd stream on their way to the
 * temporary file or the stream buffer; a reset starts a new stream, commit
 * ends it.
 *
 * Write errors name the output path ("cannot write \"out.csv\": No space left
 * on device").  EPIPE on a stream is TL_ERR_PIPE, which the CLI turns into
 * a quiet exit (SIGPIPE is ignored by main): the reader chose to stop.
 *
 * TALLY_NO_TMPFILE (tests) makes the file sink take the named-file path as
 * a filesystem without O_TMPFILE would.
 */
#include "format.h"
#include "compress.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FILE_BUF_SIZE ((size_t)64 << 10)
#define STREAM_MEM_MAX ((size_t)64 << 20)
#define STREAM_FIRST ((size_t)4 << 10)
#define WRITEBACK_CHUNK ((uint64_t)8 << 20)
#define DIRECT_BUF ((size_t)64 << 10)

struct TlSink {
    bool stream;         /* stream sink (see the top) */
    bool committed;
    char *path;          /* the target as named (messages); NULL: stdout */
    char *final;         /* file sink: the target after its symlinks */
    char *tmp_path;      /* file sink: the temporary file's name, or NULL */
    int cleanup;         /* tmp_path's slot in the cleanup table, or -1 */
    int fd;              /* file sink: temp fd; stream sink: spill fd; or -1 */
    int out_fd;          /* stream sink: where commit writes (1 or opened) */
    bool own_out;        /* stream sink: out_fd is closed by tl_sink_close */
    mode_t mode;         /* file sink: the mode the result gets */
    FILE *spill;         /* stream sink: the spill file (tmpfile) */
    bool spilled;        /* stream sink: spill holds bytes */
    TlCompressor *z;     /* compresses on the way out, or NULL */
    uint8_t *buf;        /* pending bytes */
    size_t len, cap;
    uint64_t written;    /* file sink: bytes in the temporary file */
    uint64_t kicked;     /* file sink: writeback started below this offset */
    bool direct;         /* streaming (tl_sink_stream) */
    uint64_t sent;       /* streaming: bytes written out */
};

/* write(2) all of data[0..n) to fd, retrying on EINTR and short writes.
 * Returns 0 or an errno value. */
static int write_all(int fd, const uint8_t *data, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, data, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        if (w == 0) return EIO;
        data += w;
        n -= (size_t)w;
    }
    return 0;
}

static TlStatus write_error(const TlSink *s, int e, TlError *err)
{
    if (s->stream && e == EPIPE)
        return tl_error(err, TL_ERR_PIPE, "%s closed",
                        s->path ? s->path : "standard output");
    if (!s->path)
        return tl_error(err, TL_ERR_IO, "cannot write to standard output: %s",
                        strerror(e));
    return tl_error(err, TL_ERR_IO, "cannot write %s: %s", tl_quote_name(s->path).s, strerror(e));
}

static TlStatus spill_error(const char *what, int e, TlError *err)
{
    return tl_error(err, TL_ERR_IO, "cannot %s a temporary file for the output: %s",
                    what, strerror(e));
}

/* stream sink: move the memory buffer to the spill file. */
static TlStatus spill_memory(TlSink *s, TlError *err)
{
    int e;
    if (!s->spill) {
        s->spill = tmpfile();
        if (!s->spill) return spill_error("create", errno, err);
        s->fd = fileno(s->spill);
    }
    e = write_all(s->fd, s->buf, s->len);
    if (e) return spill_error("write", e, err);
    s->len = 0;
    s->spilled = true;
    return TL_OK;
}

/* streaming: the buffer out to the descriptor. */
static TlStatus flush_direct(TlSink *s, TlError *err)
{
    int e = write_all(s->out_fd, s->buf, s->len);
    if (e) return write_error(s, e, err);
    s->sent += s->len;
    s->len = 0;
    return TL_OK;
}

/* streaming: data[0..n) through the buffer (see the top). */
static TlStatus emit_direct(TlSink *s, const uint8_t *d, size_t n, TlError *err)
{
    if (s->len + n > s->cap) {
        TL_TRY(flush_direct(s, err));
        if (n >= s->cap) {
            int e = write_all(s->out_fd, d, n);
            if (e) return write_error(s, e, err);
            s->sent += n;
            return TL_OK;
        }
    }
    memcpy(s->buf + s->len, d, n);
    s->len += n;
    return TL_OK;
}

/* stream sink: keep data[0..n) until commit (TlEmitFn). */
static TlStatus emit_stream(void *ctx, const uint8_t *d, size_t n, TlError *err)
{
    TlSink *s = ctx;
    if (s->direct) return emit_direct(s, d, n, err);
    if (s->len + n > s->cap) {
        size_t cap = s->cap;
        uint8_t *g;
        if (s->len + n > STREAM_MEM_MAX) {
            TL_TRY(spill_memory(s, err));
            if (n > STREAM_MEM_MAX / 2) {
                int e = write_all(s->fd, d, n);
                if (e) return spill_error("write", e, err);
                return TL_OK;
            }
        }
        while (cap < s->len + n) cap *= 2;
        if (cap > s->cap) {
            g = tl_realloc(s->buf, cap);
            if (!g) return tl_error_oom(err);
            s->buf = g;
            s->cap = cap;
        }
    }
    memcpy(s->buf + s->len, d, n);
    s->len += n;
    return TL_OK;
}

/* file sink: data[0..n) to the temporary file as is (TlEmitFn). */
static TlStatus emit_fd(void *ctx, const uint8_t *data, size_t n, TlError *err)
{
    TlSink *s = ctx;
    int e = write_all(s->fd, data, n);
    if (e) return write_error(s, e, err);
    s->written += n;
#ifdef SYNC_FILE_RANGE_WRITE
    if (s->written - s->kicked >= WRITEBACK_CHUNK) {
        /* start the writeback of what is complete (see the top) */
        (void)sync_file_range(s->fd, (off_t)s->kicked, (off_t)(s->written - s->kicked),
                              SYNC_FILE_RANGE_WRITE);
        s->kicked = s->written;
    }
#endif
    return TL_OK;
}

/* file sink: data[0..n) to the temporary file, through the compressor if
 * there is one (finish ends its stream). */
static TlStatus put_file(TlSink *s, const uint8_t *data, size_t n, bool finish,
                         TlError *err)
{
    if (s->z) return tl_compressor_write(s->z, data, n, finish, emit_fd, s, err);
    return emit_fd(s, data, n, err);
}

/* file sink: write the buffer to the temporary file. */
static TlStatus flush_file(TlSink *s, TlError *err)
{
    TL_TRY(put_file(s, s->buf, s->len, false, err));
    s->len = 0;
    return TL_OK;
}

/* Compress a sink's output: comp "gz" or "zst" (NULL or "": none), level 0
 * for the default.  Call before the first write.  Errors: TL_ERR_USAGE (bad
 * level, or standard output), TL_ERR_OOM. */
TlStatus tl_sink_set_compression(TlSink *s, const char *comp, int level,
                                 TlError *err)
{
    TlCompression c = tl_compression_from_name(comp);
    if (c == TL_COMP_NONE) return TL_OK;
    if (!s->path)
        return tl_error(err, TL_ERR_USAGE,
                        "compressed output needs a file (-o FILE.%s)", comp);
    tl_compressor_free(s->z);
    s->z = NULL;
    return tl_compressor_new(c, level, &s->z, err);
}

/* A name for a temporary file beside final: "<dir>/.<name>.tmp-XXXXXX".
 * NULL on OOM. */
static char *temp_name(const char *final)
{
    const char *slash = strrchr(final, '/');
    const char *name = slash ? slash + 1 : final;
    size_t dir_len = slash ? (size_t)(slash - final) + 1 : 0, n;
    char *t;
    n = dir_len + strlen(name) + 16;
    t = tl_malloc(n);
    if (t) snprintf(t, n, "%.*s.%s.tmp-XXXXXX", (int)dir_len, final, name);
    return t;
}

/* Fill the XXXXXX at the end of name with fresh letters (the name is only
 * ever created with O_EXCL or link, which fail on a clash). */
static void fill_x(char *name, unsigned attempt)
{
    static const char abc[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    struct timespec ts;
    uint64_t v;
    char *x = name + strlen(name) - 6;
    clock_gettime(CLOCK_REALTIME, &ts);
    v = ((uint64_t)ts.tv_nsec << 16) ^ (uint64_t)ts.tv_sec ^
        ((uint64_t)getpid() << 40) ^ ((uint64_t)attempt * 0x9e3779b97f4a7c15u);
    for (int i = 0; i < 6; i++) {
        x[i] = abc[v % 62];
        v = v / 62 + (v << 13);
    }
}

/* The mode the result gets: the mode of the file it replaces, else what a
 * new file would get under the umask. */
static mode_t result_mode(const TlTarget *t)
{
    struct stat st;
    mode_t mask;
    if (t->kind == TL_TARGET_REGULAR && stat(t->final, &st) == 0) return st.st_mode & 07777;
    mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

/* file sink: create the temporary file in the folder of s->final: unnamed
 * when the filesystem allows, else named and registered for signal
 * cleanup. */
static TlStatus open_temp(const TlCtx *ctx, TlSink *s, TlError *err)
{
#ifdef O_TMPFILE
    /* commit links the file in through /proc/self/fd/N (or AT_EMPTY_PATH,
     * which needs a capability): without /proc, a name from the start */
    if (!TL_TUNING(ctx)->no_tmpfile && access("/proc/self/fd", X_OK) == 0) {
        const char *slash = strrchr(s->final, '/');
        char *dir = slash ? tl_strndup(s->final, (size_t)(slash - s->final) + 1)
                          : tl_strdup(".");
        if (!dir) return tl_error_oom(err);
        s->fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
        tl_free(dir);
        if (s->fd >= 0) return TL_OK;
        if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
            return tl_error(err, TL_ERR_IO, "cannot write %s: %s", tl_quote_name(s->path).s,
                            strerror(errno));
    }
#endif
    s->tmp_path = temp_name(s->final);
    if (!s->tmp_path) return tl_error_oom(err);
    for (unsigned k = 0; k < 100; k++) {
        fill_x(s->tmp_path, k);
        /* registered before it exists: a signal at any point finds it */
        s->cleanup = tl_cleanup_add(s->tmp_path);
        s->fd = open(s->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (s->fd >= 0) return TL_OK;
        tl_cleanup_remove(s->cleanup);
        s->cleanup = -1;
        if (errno != EEXIST) break;
    }
    tl_error(err, TL_ERR_IO, "cannot write %s: %s", tl_quote_name(s->path).s, strerror(errno));
    tl_free(s->tmp_path);
    s->tmp_path = NULL;
    return err->code;
}

/* stream sink for a target that is not replaced: its own descriptor
 * duplicated, or the path opened for writing (a regular file reached
 * through another process's /proc/PID/fd link is appended to, never
 * truncated). */
static TlStatus open_stream(TlSink *s, const TlTarget *t, TlError *err)
{
    if (t->fd >= 0) {
        s->out_fd = fcntl(t->fd, F_DUPFD_CLOEXEC, 3);
    } else {
        int flags = O_WRONLY | O_NOCTTY | O_CLOEXEC | (t->regular ? O_APPEND : 0);
        do {
            s->out_fd = open(t->final, flags);
        } while (s->out_fd < 0 && errno == EINTR);
    }
    if (s->out_fd < 0)
        return tl_error(err, TL_ERR_IO, "cannot write %s: %s", tl_quote_name(s->path).s,
                        strerror(errno));
    s->own_out = true;
    return TL_OK;
}

/* Open a sink: path NULL (or "-") means standard output.  A file sink
 * creates its temporary file now and a stream target is opened now (a FIFO
 * waits for its reader), so a missing or unwritable target fails before
 * any work (TL_ERR_IO naming path).  The sink is owned by the caller
 * (tl_sink_close). */
TlStatus tl_sink_open(const TlCtx *ctx, const char *path, TlSink **out, TlError *err)
{
    TlSink *s;
    TlTarget t;
    TlStatus st;
    *out = NULL;
    s = tl_calloc(1, sizeof *s);
    if (!s) return tl_error_oom(err);
    s->fd = -1;
    s->out_fd = 1;
    s->cleanup = -1;
    if (path && strcmp(path, "-") != 0) {
        s->path = tl_strdup(path);
        if (!s->path) goto oom;
        if (tl_target_resolve(path, &t, err) != TL_OK) goto fail;
        if (t.kind == TL_TARGET_STREAM) {
            s->stream = true;
            st = open_stream(s, &t, err);
        } else {
            s->mode = result_mode(&t);
            s->final = t.final;
            t.final = NULL;
            st = open_temp(ctx, s, err);
        }
        tl_target_free(&t);
        if (st != TL_OK) goto fail;
    } else {
        s->stream = true;
    }
    s->cap = s->stream ? STREAM_FIRST : FILE_BUF_SIZE; /* a stream's doubles */
    s->buf = tl_malloc(s->cap);
    if (!s->buf) goto oom;
    if (!s->stream) (void)fchmod(s->fd, s->mode);
    *out = s;
    return TL_OK;
oom:
    tl_error_oom(err);
fail:
    tl_sink_close(s);
    return err->code;
}

/* Append data[0..n) to the sink.  Errors: TL_ERR_IO naming the output. */
TlStatus tl_sink_write(TlSink *s, const void *data, size_t n, TlError *err)
{
    const uint8_t *d = data;
    if (s->committed)
        return tl_error(err, TL_ERR_IO, "internal: write after commit");
    if (s->stream) {
        if (s->z) return tl_compressor_write(s->z, d, n, false, emit_stream, s, err);
        return emit_stream(s, d, n, err);
    }
    if (s->len + n > s->cap) {
        TL_TRY(flush_file(s, err));
        if (n >= s->cap) return put_file(s, d, n, false, err);
    }
    memcpy(s->buf + s->len, d, n);
    s->len += n;
    return TL_OK;
}

/* See format.h: standard output only, uncompressed, before commit; what
 * was buffered so far goes out at the next flush. */
bool tl_sink_stream(TlSink *s)
{
    if (!s->stream || s->path || s->z || s->committed || s->spilled) return false;
    if (s->cap < DIRECT_BUF) {
        uint8_t *g = tl_realloc(s->buf, DIRECT_BUF);
        if (!g) return false;
        s->buf = g;
        s->cap = DIRECT_BUF;
    }
    s->direct = true;
    return true;
}

/* See format.h. */
TlStatus tl_sink_flush(TlSink *s, TlError *err)
{
    if (!s->direct || s->len == 0) return TL_OK;
    return flush_direct(s, err);
}

/* Throw away everything written so far (a restart): the temporary file is
 * truncated, buffered bytes dropped. */
TlStatus tl_sink_reset(TlSink *s, TlError *err)
{
    s->len = 0;
    if (s->committed) return tl_error(err, TL_ERR_IO, "internal: reset after commit");
    if (s->direct && s->sent > 0)
        return tl_error(err, TL_ERR_DATA, "internal error: a column's type changed "
                        "after rows went to standard output");
    if (s->z) TL_TRY(tl_compressor_reset(s->z, err));
    if (s->stream) {
        if (s->spill && s->spilled) {
            if (ftruncate(s->fd, 0) != 0 || lseek(s->fd, 0, SEEK_SET) != 0)
                return spill_error("reset", errno, err);
        }
        s->spilled = false;
        return TL_OK;
    }
    if (ftruncate(s->fd, 0) != 0 || lseek(s->fd, 0, SEEK_SET) != 0)
        return write_error(s, errno, err);
    s->written = s->kicked = 0;
    return TL_OK;
}

/* stream: the spill file's bytes, then memory, to out_fd. */
static TlStatus commit_stream(TlSink *s, TlError *err)
{
    int e;
    if (s->z) TL_TRY(tl_compressor_write(s->z, NULL, 0, true, emit_stream, s, err));
    if (s->spilled) {
        uint8_t chunk[1 << 16];
        if (lseek(s->fd, 0, SEEK_SET) != 0) return spill_error("read", errno, err);
        for (;;) {
            ssize_t got = read(s->fd, chunk, sizeof chunk);
            if (got < 0) {
                if (errno == EINTR) continue;
                return spill_error("read", errno, err);
            }
            if (got == 0) break;
            e = write_all(s->out_fd, chunk, (size_t)got);
            if (e) return write_error(s, e, err);
        }
    }
    e = write_all(s->out_fd, s->buf, s->len);
    if (e) return write_error(s, e, err);
    s->len = 0;
    if (s->own_out) {
        e = close(s->out_fd);
        s->out_fd = -1;
        s->own_out = false;
        if (e != 0 && errno != EINTR) return write_error(s, errno, err);
    }
    return TL_OK;
}

/* file sink, unnamed temporary file: give it a hidden name beside the
 * target (registered for signal cleanup until renamed).  linkat through
 * AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; /proc/self/fd/N works for
 * everyone where /proc is mounted. */
static TlStatus link_temp(TlSink *s, TlError *err)
{
    char proc[64];
    int e = 0;
    s->tmp_path = temp_name(s->final);
    if (!s->tmp_path) return tl_error_oom(err);
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", s->fd);
    for (unsigned k = 0; k < 100; k++) {
        fill_x(s->tmp_path, k);
        s->cleanup = tl_cleanup_add(s->tmp_path);
        if (linkat(s->fd, "", AT_FDCWD, s->tmp_path, AT_EMPTY_PATH) == 0 ||
            (errno != EEXIST &&
             linkat(AT_FDCWD, proc, AT_FDCWD, s->tmp_path, AT_SYMLINK_FOLLOW) == 0))
            return TL_OK;
        e = errno;
        tl_cleanup_remove(s->cleanup);
        s->cleanup = -1;
        if (e != EEXIST) break;
    }
    tl_free(s->tmp_path);
    s->tmp_path = NULL;
    return write_error(s, e, err);
}

/* Make the output visible: a file sink is flushed, fsynced and renamed over
 * its target; a stream sink copies its bytes to its descriptor (EPIPE:
 * TL_ERR_PIPE).  After a failed commit the sink can only be closed. */
TlStatus tl_sink_commit(TlSink *s, TlError *err)
{
    int e;
    if (s->committed) return TL_OK;
    if (s->stream) {
        TL_TRY(commit_stream(s, err));
        s->committed = true;
        return TL_OK;
    }
    TL_TRY(flush_file(s, err));
    if (s->z) TL_TRY(put_file(s, NULL, 0, true, err));
    while (fsync(s->fd) != 0) {
        if (errno == EINTR) continue;
        if (errno == EINVAL || errno == EROFS) break; /* cannot sync: fine */
        return write_error(s, errno, err);
    }
    if (!s->tmp_path) TL_TRY(link_temp(s, err));
    e = close(s->fd);
    s->fd = -1;
    if (e != 0 && errno != EINTR) return write_error(s, errno, err);
    if (rename(s->tmp_path, s->final) != 0) return write_error(s, errno, err);
    tl_cleanup_remove(s->cleanup);
    s->cleanup = -1;
    tl_free(s->tmp_path);
    s->tmp_path = NULL;
    s->committed = true;
    {
        /* make the rename itself durable; failures here lose nothing */
        const char *slash = strrchr(s->final, '/');
        char *dir = slash ? tl_strndup(s->final, (size_t)(slash - s->final) + 1)
                          : tl_strdup(".");
        if (dir) {
            int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (dfd >= 0) {
                (void)fsync(dfd);
                close(dfd);
            }
            tl_free(dir);
        }
    }
    return TL_OK;
}

/* Free the sink; an uncommitted file sink's temporary file is removed, so
 * the target keeps its old contents (or stays absent), and an uncommitted
 * stream target was never written.  NULL-safe. */
void tl_sink_close(TlSink *s)
{
    if (!s) return;
    if (s->spill) {
        fclose(s->spill);
    } else if (s->fd >= 0) {
        close(s->fd);
    }
    if (s->own_out && s->out_fd >= 0) close(s->out_fd);
    if (s->tmp_path) unlink(s->tmp_path);
    tl_cleanup_remove(s->cleanup);
    tl_free(s->tmp_path);
    tl_free(s->final);
    tl_free(s->path);
    tl_compressor_free(s->z);
    tl_free(s->buf);
    tl_free(s);
}
