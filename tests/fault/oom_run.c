/*
 * oom_run.c -- the out-of-memory loop of scripts/oom-loop, in one process.
 *
 *   oom-run NAME ARGS...
 *
 * Runs the tally command line ARGS (as cmd/main.c would: cli_flags_parse,
 * then tally_run) once for every allocation failure point N = 1, 2, 3, ...:
 * allocation N from the start of the parse fails, and so does every later
 * one (tl_alloc_fail_mode, the TALLY_FAIL_ALLOC=N TALLY_FAIL_ALLOC_ALL=1 of
 * a separate process), until a run succeeds.  After each failing run it
 * checks what a process per point checked, and more:
 *
 *   - the run returned 1 with a message (main prints it as "tally: ...");
 *   - anything the library printed on standard error itself starts with
 *     "tally: ";
 *   - the output file (the argument after -o, which ARGS must hold) and no
 *     temporary file ("tmp-" in the output's folder) is left behind;
 *   - no heap block leaked (LeakSanitizer's recoverable check, when built
 *     with ASan: the same check a process does at exit);
 *   - no file descriptor leaked (the count of /proc/self/fd).
 *
 * A memory error stops the whole process with ASan's report, so the loop
 * fails loudly.  One process instead of one per failure point: the ASan
 * runtime starts once (about 80 ms a process on the machines of
 * RELIABILITY.md) and LeakSanitizer's scan of its own tables faults them
 * in once.  Prints "oom: NAME: N failure points checked" on standard error
 * and "oom-counts: PASSED FAILED" on standard output.
 */
#include "../../cmd/flags.h"
#include "../../lib/core/core.h"
#include "../../lib/tally.h"
#include "../support/sanitizer.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_POINTS 20000
#define MAX_REPORTS 5

/* The first bytes of a file into buf (NUL-terminated); how many. */
static size_t read_head(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    buf[n] = '\0';
    if (f) fclose(f);
    return n;
}

/* One run of the command line, allocation n failing (0: none); returns
 * tally's exit status and leaves the message in err. */
static int run_once(int argc, char **argv, uint64_t n, TallyError *err)
{
    TallyMode mode = TALLY_RUN;
    TallySpec spec;
    memset(&spec, 0, sizeof spec);
    memset(err, 0, sizeof *err);
    CliAction action = CLI_RUN;
    tl_alloc_fail_mode(n, true);
    int rc = cli_flags_parse(argc, argv, mode, &spec, &action, err);
    if (rc == 0 && action == CLI_RUN) rc = cli_exit_status(tally_run(&spec, mode, NULL, err));
    tally_spec_free(&spec);
    tl_alloc_fail_mode(0, false);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: oom-run NAME ARGS... (with -o OUTPUT)\n");
        return 2;
    }
    const char *name = argv[1];
    const char *out = NULL;
    for (int i = 2; i + 1 < argc; i++)
        if (strcmp(argv[i], "-o") == 0) out = argv[i + 1];
    if (!out) {
        fprintf(stderr, "oom-run: %s: no -o OUTPUT among the arguments\n", name);
        return 2;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", out);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    else snprintf(dir, sizeof dir, ".");

    char errpath[4200];
    snprintf(errpath, sizeof errpath, "%s/.oom-stderr", dir);
    int saved_err = dup(2);
    int fds0 = tl_count_entries("/proc/self/fd", NULL);
    int tmps0 = tl_count_entries(dir, "tmp-");
    long pass = 0, fail = 0;
    uint64_t n = 1;
    for (;; n++) {
        if (n > MAX_POINTS) {
            fprintf(stderr, "oom: %s: still failing at %d\n", name, MAX_POINTS);
            fail++;
            break;
        }
        unlink(out);
        /* the library's own writes to standard error go to a file */
        int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, 2) < 0) {
            perror("oom-run: stderr");
            return 2;
        }
        close(fd);
        TallyError err;
        int rc = run_once(argc - 2, argv + 2, n, &err);
        fflush(stderr);
        dup2(saved_err, 2);
        if (rc == 0) break;

        char bad[512] = "", head[256];
        size_t bl = 0;
#define BAD(...) bl += (size_t)snprintf(bad + bl, bl < sizeof bad ? sizeof bad - bl : 0, __VA_ARGS__)
        if (rc != 1) BAD("; exit %d", rc);
        if (!err.message[0]) BAD("; no message");
        if (read_head(errpath, head, sizeof head) > 0 && strncmp(head, "tally: ", 7) != 0)
            BAD("; stderr: %.60s", head);
        if (access(out, F_OK) == 0) BAD("; output file left");
        if (tl_count_entries(dir, "tmp-") != tmps0) BAD("; temporary file left");
        if (tl_count_entries("/proc/self/fd", NULL) != fds0) BAD("; file descriptor leaked");
#if TL_ASAN
        if (__lsan_do_recoverable_leak_check()) BAD("; memory leaked");
#endif
        if (bl) {
            fail++;
            if (fail <= MAX_REPORTS)
                fprintf(stderr, "oom: %s at allocation %llu%s\n  tally: %s\n", name,
                        (unsigned long long)n, bad + 1, err.message);
        } else {
            pass++;
        }
        if (fail > MAX_REPORTS) {
            fprintf(stderr, "oom: %s: stopped after %d failures\n", name, MAX_REPORTS);
            break;
        }
    }
    unlink(errpath);
    fprintf(stderr, "oom: %s: %llu failure points checked\n", name,
            (unsigned long long)(n - 1));
    printf("oom-counts: %ld %ld\n", pass, fail);
    return 0;
}
