/*
 * test_mapped.c -- mapped inputs that change underneath a run
 * (formats/mapped.c).
 *
 *   shrink     a mapped input truncated after it was loaded: a read
 *              through the mapping past the new end gives zeros instead
 *              of SIGBUS (the handler), the input is marked, and
 *              tl_input_check and tl_input_changed give the exact message;
 *              reset forgets it.
 *   pread      a short pread zero-fills and marks the input the same way.
 *   report     a shrunk input released before the run asked still reports.
 *   outside    a SIGBUS outside every mapped input (a mapping the test made
 *              itself) still ends the process by SIGBUS (in a child; under
 *              ASan, by ASan's report of it).
 *   many       more inputs than descriptors allowed: every one still reads
 *              through pread (the pool reopens by path).
 */
#include "tl_test.h"
#include "../../formats/fmt_impl.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char g_dir[64];

/* A file of n bytes 'a'..'z' in the test folder; its path (static slot k). */
static const char *make_file(int k, size_t n)
{
    static char paths[8][96];
    char *p = paths[k % 8];
    FILE *f;
    snprintf(p, sizeof paths[0], "%s/f%d.csv", g_dir, k);
    f = fopen(p, "wb");
    for (size_t i = 0; i < n; i++) fputc('a' + (int)(i % 26), f);
    fclose(f);
    return p;
}

static void shrink_to(const char *path, off_t n)
{
    CHECK(truncate(path, n) == 0);
}

TL_TEST(test_shrink)
{
    const size_t n = (size_t)1 << 20;
    const char *p = make_file(0, n);
    TlBuf *b = NULL;
    TlError err;
    char want[256];
    tl_input_changes_reset();
    CHECK(tl_input_load(NULL, p, &b, &err) == TL_OK);
    CHECK(tl_input_mapped(b));
    CHECK(tl_input_check(b, &err) == TL_OK);
    CHECK(tl_input_changed(&err) == TL_OK);
    shrink_to(p, 5000);
    /* a page past the end: zeros, not SIGBUS */
    volatile const uint8_t *d = b->data;
    CHECK_EQ_INT(d[n - 1], 0);
    CHECK_EQ_INT(d[600000], 0);
    CHECK_EQ_INT(d[10], 'a' + 10);
    snprintf(want, sizeof want, "%s: changed size while being read "
             "(was 1048576 bytes, now 5000)", p);
    CHECK(tl_input_check(b, &err) == TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, want);
    CHECK(tl_input_changed(&err) == TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, want);
    tl_input_changes_reset();
    CHECK(tl_input_changed(&err) == TL_OK);
    tl_buf_release(b);
}

TL_TEST(test_pread)
{
    const char *p = make_file(1, 300000);
    TlBuf *b = NULL;
    TlError err;
    uint8_t buf[1000];
    tl_input_changes_reset();
    CHECK(tl_input_load(NULL, p, &b, &err) == TL_OK);
    CHECK(tl_input_pread(b, buf, 1000, sizeof buf));
    CHECK_EQ_INT(buf[0], 'a' + 1000 % 26);
    CHECK(tl_input_changed(&err) == TL_OK);
    shrink_to(p, 200500);
    memset(buf, 'x', sizeof buf);
    CHECK(tl_input_pread(b, buf, 200000, sizeof buf));
    CHECK_EQ_INT(buf[499], 'a' + 200499 % 26);
    CHECK_EQ_INT(buf[500], 0);
    CHECK_EQ_INT(buf[999], 0);
    CHECK(tl_input_changed(&err) == TL_ERR_DATA);
    tl_buf_release(b);
    tl_input_changes_reset();
}

TL_TEST(test_report_after_release)
{
    const char *p = make_file(2, 100000);
    TlBuf *b = NULL;
    TlError err;
    char want[256];
    tl_input_changes_reset();
    CHECK(tl_input_load(NULL, p, &b, &err) == TL_OK);
    shrink_to(p, 0);
    volatile const uint8_t *d = b->data;
    CHECK_EQ_INT(d[50000], 0);
    tl_buf_release(b);
    snprintf(want, sizeof want, "%s: changed size while being read "
             "(was 100000 bytes, now 0)", p);
    CHECK(tl_input_changed(&err) == TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, want);
    tl_input_changes_reset();
    CHECK(tl_input_changed(&err) == TL_OK);
}

TL_TEST(test_outside)
{
    const char *p = make_file(3, 100000);
    pid_t pid = fork();
    int status = 0;
    if (pid == 0) {
        int fd = open(p, O_RDONLY);
        volatile const uint8_t *m = mmap(NULL, 100000, PROT_READ, MAP_PRIVATE, fd, 0);
        if (truncate(p, 0) != 0) _exit(3);
        (void)m[90000]; /* SIGBUS: not a registered input */
        _exit(0);
    }
    CHECK(pid > 0);
    CHECK(waitpid(pid, &status, 0) == pid);
    if (TL_ASAN) {
        /* the disposition found at installation is ASan's: it reports
         * "BUS on unknown address" and exits 1 */
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) != 0);
    } else {
        CHECK(WIFSIGNALED(status));
        if (WIFSIGNALED(status)) CHECK_EQ_INT(WTERMSIG(status), SIGBUS);
    }
}

TL_TEST(test_many)
{
    enum { N = 40 };
    TlBuf *b[N];
    TlError err;
    for (int i = 0; i < N; i++) {
        /* 64 KiB and more: smaller files are read, not mapped (format.c) */
        const char *p = make_file(10 + i, 70000 + (size_t)i);
        b[i] = NULL;
        CHECK(tl_input_load(NULL, p, &b[i], &err) == TL_OK);
    }
    for (int i = 0; i < N; i++) {
        uint8_t c = 0;
        CHECK(b[i] && tl_input_mapped(b[i]) && tl_input_pread(b[i], &c, 69999 + (size_t)i, 1));
        CHECK_EQ_INT(c, 'a' + (69999 + i) % 26);
    }
    for (int i = 0; i < N; i++) tl_buf_release(b[i]);
}

int main(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/tl_mapped_%d", (int)getpid());
    struct rlimit low;
    if (mkdir(g_dir, 0700) != 0) return 1;
    /* 32 descriptors: the pool keeps 4 (test_many maps 40 files) */
    if (getrlimit(RLIMIT_NOFILE, &low) != 0) return 1;
    low.rlim_cur = 32;
    if (setrlimit(RLIMIT_NOFILE, &low) != 0) return 1;
    tl_input_guard_install();
    TL_RUN(test_shrink);
    TL_RUN(test_pread);
    TL_RUN(test_report_after_release);
    TL_RUN(test_outside);
    TL_RUN(test_many);
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", g_dir);
    return tl_test_summary("test_mapped");
}
