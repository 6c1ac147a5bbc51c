/*
 * test_sink.c -- formats/sink.c: a file output appears complete or not at
 * all; standard output is held until commit and can be reset; EPIPE is
 * TL_ERR_PIPE.
 */
#include "tl_test.h"
#include "csv_test_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

static TlError err;
static char text[1 << 16];

/* Number of entries in tu_dir whose name contains ".tmp-". */
static int temp_files(void)
{
    DIR *d = opendir(tu_dir);
    struct dirent *e;
    int n = 0;
    if (!d) return -1;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".tmp-")) n++;
    closedir(d);
    return n;
}

/* Commit through the unnamed temporary file (named: 0 visible entries
 * while writing) or, with TALLY_NO_TMPFILE, the named one (1 entry). */
static void file_commit(bool named)
{
    char path[512];
    TlSink *s = NULL;
    struct stat st;
    snprintf(path, sizeof path, "%s/%s.csv", tu_dir, named ? "named" : "out");
    if (named) setenv("TALLY_NO_TMPFILE", "1", 1);
    CHECK_EQ_INT(tl_sink_open(NULL, path, &s, &err), TL_OK);
    unsetenv("TALLY_NO_TMPFILE");
    if (!s) return;
    CHECK_EQ_INT(temp_files(), named ? 1 : 0);
    CHECK_EQ_INT(tl_sink_write(s, "hello\n", 6, &err), TL_OK);
    CHECK(tu_slurp(path, text, sizeof text) < 0); /* not visible yet */
    CHECK_EQ_INT(tl_sink_commit(s, &err), TL_OK);
    tl_sink_close(s);
    CHECK_EQ_INT(tu_slurp(path, text, sizeof text), 6);
    CHECK_EQ_STR(text, "hello\n");
    CHECK_EQ_INT(temp_files(), 0);
    CHECK_EQ_INT(stat(path, &st), 0);
    CHECK((st.st_mode & 0444) == 0444 || (st.st_mode & 0400)); /* not 0600 only */
}

TL_TEST(test_file_commit)
{
    file_commit(false);
    file_commit(true);
}

/* The signal cleanup table: a named temporary file is registered while it
 * exists, so tl_cleanup_run (what the CLI's handler calls) removes it; a
 * committed or closed sink leaves nothing registered. */
TL_TEST(test_cleanup_table)
{
    char path[512];
    TlSink *s = NULL;
    snprintf(path, sizeof path, "%s/sig.csv", tu_dir);
    setenv("TALLY_NO_TMPFILE", "1", 1);
    CHECK_EQ_INT(tl_sink_open(NULL, path, &s, &err), TL_OK);
    unsetenv("TALLY_NO_TMPFILE");
    if (!s) return;
    CHECK_EQ_INT(temp_files(), 1);
    tl_cleanup_run();
    CHECK_EQ_INT(temp_files(), 0);
    tl_sink_close(s);
    {
        const char *p = tu_file("kept.tmp-x", "x", -1);
        int slot = tl_cleanup_add(p);
        CHECK(slot >= 0);
        tl_cleanup_remove(slot);
        tl_cleanup_run(); /* no longer registered: stays */
        CHECK_EQ_INT(access(p, F_OK), 0);
        unlink(p);
    }
}

/* A target that is not a regular file (here a pipe reached through
 * /proc/self/fd/N, as /dev/stdout or >(cmd) are) is written in place at
 * commit, never replaced, and nothing reaches it before. */
TL_TEST(test_stream_target)
{
    int p[2];
    char path[64], got[64];
    TlSink *s = NULL;
    ssize_t n;
    CHECK_EQ_INT(pipe(p), 0);
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    snprintf(path, sizeof path, "/proc/self/fd/%d", p[1]);
    CHECK_EQ_INT(tl_sink_open(NULL, path, &s, &err), TL_OK);
    if (s) {
        CHECK_EQ_INT(tl_sink_write(s, "a,b\n", 4, &err), TL_OK);
        CHECK(read(p[0], got, sizeof got) < 0); /* nothing before commit */
        CHECK_EQ_INT(tl_sink_commit(s, &err), TL_OK);
        tl_sink_close(s);
        n = read(p[0], got, sizeof got);
        CHECK_EQ_INT(n, 4);
        CHECK(n == 4 && memcmp(got, "a,b\n", 4) == 0);
    }
    close(p[0]);
    close(p[1]);
}

TL_TEST(test_file_reset_and_big_writes)
{
    char path[512];
    static char big[200000];
    TlSink *s = NULL;
    snprintf(path, sizeof path, "%s/reset.csv", tu_dir);
    memset(big, 'x', sizeof big);
    CHECK_EQ_INT(tl_sink_open(NULL, path, &s, &err), TL_OK);
    if (!s) return;
    CHECK_EQ_INT(tl_sink_write(s, big, sizeof big, &err), TL_OK);
    CHECK_EQ_INT(tl_sink_write(s, "first", 5, &err), TL_OK);
    CHECK_EQ_INT(tl_sink_reset(s, &err), TL_OK);
    CHECK_EQ_INT(tl_sink_write(s, "second\n", 7, &err), TL_OK);
    for (int i = 0; i < 20000; i++) CHECK_EQ_INT(tl_sink_write(s, "0123456789", 10, &err), TL_OK);
    CHECK_EQ_INT(tl_sink_commit(s, &err), TL_OK);
    tl_sink_close(s);
    {
        static char all[300000];
        long n = tu_slurp(path, all, sizeof all);
        CHECK_EQ_INT(n, 7 + 200000);
        CHECK(memcmp(all, "second\n0123456789", 17) == 0);
    }
}

TL_TEST(test_file_no_commit_keeps_old)
{
    char path[512];
    TlSink *s = NULL;
    const char *p = tu_file("keep.csv", "old contents\n", -1);
    snprintf(path, sizeof path, "%s", p);
    CHECK_EQ_INT(tl_sink_open(NULL, path, &s, &err), TL_OK);
    if (!s) return;
    CHECK_EQ_INT(tl_sink_write(s, "new", 3, &err), TL_OK);
    tl_sink_close(s);
    tu_slurp(path, text, sizeof text);
    CHECK_EQ_STR(text, "old contents\n");
    CHECK_EQ_INT(temp_files(), 0);
    tl_sink_close(NULL);
}

TL_TEST(test_file_errors)
{
    char path[512], want[1024];
    TlSink *s = NULL;
    snprintf(path, sizeof path, "%s/missing/out.csv", tu_dir);
    CHECK_EQ_INT(tl_sink_open(NULL, path, &s, &err), TL_ERR_IO);
    CHECK(s == NULL);
    snprintf(want, sizeof want, "cannot write \"%s\": No such file or directory", path);
    CHECK_EQ_STR(err.msg, want);
    CHECK_EQ_INT(tl_sink_open(NULL, tu_dir, &s, &err), TL_ERR_IO);
    snprintf(want, sizeof want, "cannot write \"%s\": Is a directory", tu_dir);
    CHECK_EQ_STR(err.msg, want);
    /* a write error (here EFBIG from a file size limit) names the output
     * and leaves no file behind */
    {
        static char big[300000];
        struct rlimit old, lim;
        TlStatus st = TL_OK;
        snprintf(path, sizeof path, "%s/limited.csv", tu_dir);
        signal(SIGXFSZ, SIG_IGN);
        getrlimit(RLIMIT_FSIZE, &old);
        lim = old;
        lim.rlim_cur = 100000;
        setrlimit(RLIMIT_FSIZE, &lim);
        CHECK_EQ_INT(tl_sink_open(NULL, path, &s, &err), TL_OK);
        for (int i = 0; i < 3 && st == TL_OK; i++) st = tl_sink_write(s, big, sizeof big, &err);
        if (st == TL_OK) st = tl_sink_commit(s, &err);
        tl_sink_close(s);
        setrlimit(RLIMIT_FSIZE, &old);
        CHECK_EQ_INT(st, TL_ERR_IO);
        snprintf(want, sizeof want, "cannot write \"%s\": File too large", path);
        CHECK_EQ_STR(err.msg, want);
        CHECK(access(path, F_OK) != 0);
        CHECK_EQ_INT(temp_files(), 0);
    }
    if (geteuid() != 0) {
        char ro[256];
        snprintf(ro, sizeof ro, "%.200s/ro", tu_dir);
        mkdir(ro, 0555);
        snprintf(path, sizeof path, "%s/out.csv", ro);
        CHECK_EQ_INT(tl_sink_open(NULL, path, &s, &err), TL_ERR_IO);
        snprintf(want, sizeof want, "cannot write \"%s\": Permission denied", path);
        CHECK_EQ_STR(err.msg, want);
    }
}

/* Run fn with fd 1 redirected to file path; returns fn's status. */
static TlStatus with_stdout(const char *path, TlStatus (*fn)(void))
{
    int saved = dup(1), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    TlStatus st;
    fflush(stdout);
    dup2(fd, 1);
    close(fd);
    st = fn();
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    return st;
}

static TlStatus stdout_small(void)
{
    TlSink *s = NULL;
    TlStatus st = tl_sink_open(NULL, NULL, &s, &err);
    if (st) return st;
    tl_sink_write(s, "discarded", 9, &err);
    tl_sink_reset(s, &err);
    tl_sink_write(s, "a,b\n", 4, &err);
    st = tl_sink_commit(s, &err);
    tl_sink_close(s);
    return st;
}

static TlStatus stdout_spill(void)
{
    /* more than 64 MiB: goes through the spill file */
    static char chunk[1 << 20];
    TlSink *s = NULL;
    TlStatus st = tl_sink_open(NULL, NULL, &s, &err);
    if (st) return st;
    memset(chunk, 'y', sizeof chunk);
    for (int i = 0; i < 70 && st == TL_OK; i++) st = tl_sink_write(s, chunk, sizeof chunk, &err);
    if (st == TL_OK) st = tl_sink_reset(s, &err);
    memset(chunk, 'z', sizeof chunk);
    for (int i = 0; i < 66 && st == TL_OK; i++) st = tl_sink_write(s, chunk, sizeof chunk, &err);
    if (st == TL_OK) st = tl_sink_write(s, "end\n", 4, &err);
    if (st == TL_OK) st = tl_sink_commit(s, &err);
    tl_sink_close(s);
    return st;
}

TL_TEST(test_stdout)
{
    char path[512];
    struct stat st;
    snprintf(path, sizeof path, "%s/stdout.txt", tu_dir);
    CHECK_EQ_INT(with_stdout(path, stdout_small), TL_OK);
    tu_slurp(path, text, sizeof text);
    CHECK_EQ_STR(text, "a,b\n");
    CHECK_EQ_INT(with_stdout(path, stdout_spill), TL_OK);
    CHECK_EQ_INT(stat(path, &st), 0);
    CHECK_EQ_INT(st.st_size, 66 * (1 << 20) + 4);
    {
        FILE *f = fopen(path, "rb");
        char head[4] = {0}, tail[5] = {0};
        if (f) {
            CHECK_EQ_INT(fread(head, 1, 3, f), 3);
            fseek(f, -4, SEEK_END);
            CHECK_EQ_INT(fread(tail, 1, 4, f), 4);
            fclose(f);
        }
        CHECK_EQ_STR(head, "zzz");
        CHECK_EQ_STR(tail, "end\n");
    }
}

TL_TEST(test_stdout_epipe)
{
    int fds[2], saved;
    TlSink *s = NULL;
    TlStatus st;
    if (pipe(fds) != 0) return;
    signal(SIGPIPE, SIG_IGN);
    close(fds[0]);
    fflush(stdout);
    saved = dup(1);
    dup2(fds[1], 1);
    close(fds[1]);
    st = tl_sink_open(NULL, NULL, &s, &err);
    if (st == TL_OK) st = tl_sink_write(s, "x\n", 2, &err);
    if (st == TL_OK) st = tl_sink_commit(s, &err);
    tl_sink_close(s);
    dup2(saved, 1);
    close(saved);
    CHECK_EQ_INT(st, TL_ERR_PIPE);
}

int main(void)
{
    tu_init();
    TL_RUN(test_file_commit);
    TL_RUN(test_file_reset_and_big_writes);
    TL_RUN(test_file_no_commit_keeps_old);
    TL_RUN(test_file_errors);
    TL_RUN(test_stdout);
    TL_RUN(test_stdout_epipe);
    TL_RUN(test_cleanup_table);
    TL_RUN(test_stream_target);
    tu_cleanup();
    return tl_test_summary(__FILE__);
}
