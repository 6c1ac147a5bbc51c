/*
 * sink.c -- where output bytes go, all or nothing.
 *
 * A run writes its whole output into a sink and only commits it once the
 * run has succeeded; a restart (format.h) resets the sink and writes again.
 * So nothing half-written is ever visible:
 *
 *   file sink    bytes -> 64 KiB buffer -> "<dir>/.<name>.tmp-XXXXXX"
 *                commit: flush, fsync, rename over <dir>/<name>
 *                close without commit: unlink the temporary file
 *   stdout sink  bytes -> memory (up to 64 MiB) -> spill to an anonymous
 *                temporary file beyond that
 *                commit: copy the spill file, then the memory, to fd 1
 *
 * Writeback starts while the run goes on: every WRITEBACK_CHUNK bytes
 * written to the temporary file are handed to the kernel's writeback at
 * once (sync_file_range(SYNC_FILE_RANGE_WRITE): start the writes, do not
 * wait), so the disk works while tally still computes, and the fsync at
 * commit only waits for the last chunk instead of the whole file (a 500 MB
 * answer on a slow disk otherwise spends seconds in that one fsync).  It
 * is only a hint: its errors are ignored, and the fsync still decides.
 *
 * A file sink may compress (tl_sink_set_compression, compress.c): the
 * buffered bytes then pass through a gzip or zstd stream on their way to the
 * temporary file; a reset starts a new stream, commit ends it.
 *
 * Write errors name the output path ("cannot write \"out.csv\": No space left
 * on device").  EPIPE on standard output is TL_ERR_PIPE, which the CLI turns
 * into a quiet exit (SIGPIPE is ignored by main).
 */
#include "format.h"
#include "compress.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILE_BUF_SIZE ((size_t)64 << 10)
#define STDOUT_MEM_MAX ((size_t)64 << 20)
#define STDOUT_FIRST ((size_t)4 << 10)
#define WRITEBACK_CHUNK ((uint64_t)8 << 20)

struct TlSink {
    bool to_stdout;
    bool committed;
    char *path;          /* file sink: the target */
    char *tmp_path;      /* file sink: the temporary file, NULL once renamed */
    int fd;              /* file sink: temp fd; stdout sink: spill fd; or -1 */
    FILE *spill;         /* stdout sink: the spill file (tmpfile) */
    bool spilled;        /* stdout sink: spill holds bytes */
    TlCompressor *z;     /* file sink: compresses on the way out, or NULL */
    uint8_t *buf;        /* pending bytes */
    size_t len, cap;
    uint64_t written;    /* file sink: bytes in the temporary file */
    uint64_t kicked;     /* file sink: writeback started below this offset */
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
    if (s->to_stdout) {
        if (e == EPIPE) return tl_error(err, TL_ERR_PIPE, "standard output closed");
        return tl_error(err, TL_ERR_IO, "cannot write to standard output: %s",
                        strerror(e));
    }
    return tl_error(err, TL_ERR_IO, "cannot write %s: %s", tl_quote_name(s->path).s, strerror(e));
}

/* stdout sink: move the memory buffer to the spill file. */
static TlStatus spill_memory(TlSink *s, TlError *err)
{
    int e;
    if (!s->spill) {
        s->spill = tmpfile();
        if (!s->spill)
            return tl_error(err, TL_ERR_IO,
                            "cannot create a temporary file for standard output: %s",
                            strerror(errno));
        s->fd = fileno(s->spill);
    }
    e = write_all(s->fd, s->buf, s->len);
    if (e)
        return tl_error(err, TL_ERR_IO,
                        "cannot write a temporary file for standard output: %s",
                        strerror(e));
    s->len = 0;
    s->spilled = true;
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

/* Compress a file sink's output: comp "gz" or "zst" (NULL or "": none),
 * level 0 for the default.  Call before the first write.  Errors:
 * TL_ERR_USAGE (bad level, or standard output), TL_ERR_OOM. */
TlStatus tl_sink_set_compression(TlSink *s, const char *comp, int level,
                                 TlError *err)
{
    TlCompression c = tl_compression_from_name(comp);
    if (c == TL_COMP_NONE) return TL_OK;
    if (s->to_stdout)
        return tl_error(err, TL_ERR_USAGE,
                        "compressed output needs a file (-o FILE.%s)", comp);
    tl_compressor_free(s->z);
    s->z = NULL;
    return tl_compressor_new(c, level, &s->z, err);
}

/* Open a sink: path NULL (or "-") means standard output.  A file sink creates its
 * temporary file now, so a missing or unwritable directory fails before any
 * work (TL_ERR_IO naming path).  The sink is owned by the caller
 * (tl_sink_close). */
TlStatus tl_sink_open(const char *path, TlSink **out, TlError *err)
{
    TlSink *s;
    const char *slash, *name;
    size_t dir_len, n;
    struct stat st;
    mode_t mode, mask;
    *out = NULL;
    s = tl_calloc(1, sizeof *s);
    if (!s) return tl_error_oom(err);
    s->fd = -1;
    if (!path || strcmp(path, "-") == 0) {
        s->to_stdout = true;
        s->cap = STDOUT_FIRST; /* doubles as needed: a small answer, few pages */
        s->buf = tl_malloc(s->cap);
        if (!s->buf) goto oom;
        *out = s;
        return TL_OK;
    }
    s->path = tl_strdup(path);
    s->cap = FILE_BUF_SIZE;
    s->buf = tl_malloc(s->cap);
    if (!s->path || !s->buf) goto oom;
    slash = strrchr(path, '/');
    name = slash ? slash + 1 : path;
    dir_len = slash ? (size_t)(slash - path) + 1 : 0; /* keeps the slash */
    if (*name == '\0' || (stat(path, &st) == 0 && S_ISDIR(st.st_mode))) {
        tl_error(err, TL_ERR_IO, "cannot write %s: %s", tl_quote_name(path).s, strerror(EISDIR));
        goto fail;
    }
    n = dir_len + strlen(name) + 16;
    s->tmp_path = tl_malloc(n);
    if (!s->tmp_path) goto oom;
    snprintf(s->tmp_path, n, "%.*s.%s.tmp-XXXXXX", (int)dir_len, path, name);
    s->fd = mkostemp(s->tmp_path, O_CLOEXEC);
    if (s->fd < 0) {
        tl_error(err, TL_ERR_IO, "cannot write %s: %s", tl_quote_name(path).s, strerror(errno));
        tl_free(s->tmp_path);
        s->tmp_path = NULL;
        goto fail;
    }
    /* mkstemp makes 0600; give the result the mode a new file would get
     * (or the mode of the file it replaces). */
    if (stat(path, &st) == 0) {
        mode = st.st_mode & 07777;
    } else {
        mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    (void)fchmod(s->fd, mode);
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
    if (s->to_stdout) {
        if (s->len + n > s->cap) {
            size_t cap = s->cap;
            uint8_t *g;
            if (s->len + n > STDOUT_MEM_MAX) {
                TL_TRY(spill_memory(s, err));
                if (n > STDOUT_MEM_MAX / 2) {
                    int e = write_all(s->fd, d, n);
                    if (e)
                        return tl_error(err, TL_ERR_IO,
                                        "cannot write a temporary file for "
                                        "standard output: %s", strerror(e));
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
    if (s->len + n > s->cap) {
        TL_TRY(flush_file(s, err));
        if (n >= s->cap) return put_file(s, d, n, false, err);
    }
    memcpy(s->buf + s->len, d, n);
    s->len += n;
    return TL_OK;
}

/* Throw away everything written so far (a restart): the temporary file is
 * truncated, buffered bytes dropped. */
TlStatus tl_sink_reset(TlSink *s, TlError *err)
{
    s->len = 0;
    if (s->to_stdout) {
        if (s->spill && s->spilled) {
            if (ftruncate(s->fd, 0) != 0 || lseek(s->fd, 0, SEEK_SET) != 0)
                return tl_error(err, TL_ERR_IO,
                                "cannot reset a temporary file for standard output: %s",
                                strerror(errno));
        }
        s->spilled = false;
        return TL_OK;
    }
    if (s->committed) return tl_error(err, TL_ERR_IO, "internal: reset after commit");
    if (ftruncate(s->fd, 0) != 0 || lseek(s->fd, 0, SEEK_SET) != 0)
        return write_error(s, errno, err);
    s->written = s->kicked = 0;
    if (s->z) TL_TRY(tl_compressor_reset(s->z, err));
    return TL_OK;
}

/* stdout: the spill file's bytes, then memory, to fd 1. */
static TlStatus commit_stdout(TlSink *s, TlError *err)
{
    int e;
    if (s->spilled) {
        uint8_t chunk[1 << 16];
        if (lseek(s->fd, 0, SEEK_SET) != 0)
            return tl_error(err, TL_ERR_IO,
                            "cannot read a temporary file for standard output: %s",
                            strerror(errno));
        for (;;) {
            ssize_t got = read(s->fd, chunk, sizeof chunk);
            if (got < 0) {
                if (errno == EINTR) continue;
                return tl_error(err, TL_ERR_IO,
                                "cannot read a temporary file for standard output: %s",
                                strerror(errno));
            }
            if (got == 0) break;
            e = write_all(1, chunk, (size_t)got);
            if (e) return write_error(s, e, err);
        }
    }
    e = write_all(1, s->buf, s->len);
    if (e) return write_error(s, e, err);
    s->len = 0;
    return TL_OK;
}

/* Make the output visible: a file sink is flushed, fsynced and renamed over
 * its target; a stdout sink copies its bytes to fd 1 (EPIPE: TL_ERR_PIPE).
 * After a failed commit the sink can only be closed. */
TlStatus tl_sink_commit(TlSink *s, TlError *err)
{
    int e;
    if (s->committed) return TL_OK;
    if (s->to_stdout) {
        TL_TRY(commit_stdout(s, err));
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
    e = close(s->fd);
    s->fd = -1;
    if (e != 0 && errno != EINTR) return write_error(s, errno, err);
    if (rename(s->tmp_path, s->path) != 0) return write_error(s, errno, err);
    tl_free(s->tmp_path);
    s->tmp_path = NULL;
    s->committed = true;
    {
        /* make the rename itself durable; failures here lose nothing */
        const char *slash = strrchr(s->path, '/');
        char *dir = slash ? tl_strndup(s->path, (size_t)(slash - s->path) + 1)
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
 * the target keeps its old contents (or stays absent).  NULL-safe. */
void tl_sink_close(TlSink *s)
{
    if (!s) return;
    if (s->spill) {
        fclose(s->spill);
    } else if (s->fd >= 0) {
        close(s->fd);
    }
    if (s->tmp_path) unlink(s->tmp_path);
    tl_free(s->tmp_path);
    tl_free(s->path);
    tl_compressor_free(s->z);
    tl_free(s->buf);
    tl_free(s);
}
