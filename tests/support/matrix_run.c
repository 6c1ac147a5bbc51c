/*
 * matrix_run.c -- the thread matrices of tests/cli, every run in one
 * process (tally-matrix).
 *
 *   tally-matrix [--ok] [--want FILE] [--out PATH] DIR ARGS... < VARIANTS
 *
 * Runs the tally command line ARGS once per line of standard input.  A
 * line is a variant: NAME=VALUE words set the environment (as a shell's
 * `NAME=VALUE cmd` does; an empty VALUE sets an empty variable), the words
 * after them are appended to ARGS, e.g. "TALLY_BATCH_ROWS=7 --threads 8".
 * Words are split at spaces; no quoting.
 *
 * Without --want, the first variant is the reference: every other one must
 * exit with its status and write the same bytes to standard output and
 * standard error.  --ok: every variant, the reference too, must also exit 0
 * with nothing on standard error.  With --want FILE (implies --ok), every
 * variant must print FILE's bytes.  --out PATH: the command line writes
 * PATH (-o), which is compared the same way (with --want: PATH must hold
 * FILE's bytes and standard output be empty), and removed before each
 * run.  The reference's files stay in DIR (want.out, want.err, want.status
 * with its exit status, want.file for --out); each run's in got.out and
 * got.err.
 *
 * The first difference stops the matrix: exit 1, with the variant, both
 * statuses and the first differing line on standard output, and the run's
 * standard error (a sanitizer's report, say).  Exit 0 when all agree, 2 on
 * a usage or system error.
 *
 * The runs happen in this process, one after another: each calls the
 * program's own main (cmd/main.c compiled as tally_main) with the
 * variant's environment set, standard output and error redirected to
 * files, and afterwards shuts the thread pool down (the next run's
 * --threads configures it anew) and checks what the end of a process of
 * build/tally would: no heap block leaked (LeakSanitizer's recoverable
 * check, in the ASan build) and no file descriptor left open (the count
 * of /proc/self/fd); either failing makes the run's status 101 (a leak)
 * or 102 (a descriptor), which fails the matrix even in the reference.
 * The reference, the first run, starts from the state of a new process.
 * A process per run cost an ASan build 50 to 100 ms of start-up and exit
 * (the sanitizer runtime's start, LeakSanitizer's scan of its own 9 MB of
 * tables); a run here costs what tally does with the input
 * (RELIABILITY.md, "Time budget").  The library
 * reads its test switches (TALLY_BATCH_ROWS, TALLY_NO_LATE, ...) from the
 * environment when a run needs them, never cached across runs.
 */
#include "../../lib/core/pool.h"
#include "sanitizer.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tally_main(int argc, char **argv);

#define MAX_WORDS 64

static const char *dir;

/* DIR/name into buf. */
static const char *path_in(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", dir, name);
    return buf;
}

/* A whole file into memory, with room for a NUL after its n bytes (NULL
 * and *n = 0 when missing); caller frees. */
static char *slurp(const char *path, size_t *n)
{
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, len = 0;
    char *b = malloc(cap);
    size_t got;
    while (b && (got = fread(b + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            char *nb = realloc(b, cap *= 2);
            if (!nb) free(b);
            b = nb;
        }
    }
    fclose(f);
    if (!b) {
        perror("tally-matrix: read");
        exit(2);
    }
    *n = len;
    return b;
}

/* Whether two files hold the same bytes (a missing file equals an empty
 * one only if both are missing); else print where they first differ. */
static bool same_file(const char *want_path, const char *got_path, const char *what)
{
    size_t nw, ng;
    char *w = slurp(want_path, &nw), *g = slurp(got_path, &ng);
    bool same = (w == NULL) == (g == NULL) && nw == ng && memcmp(w ? w : "", g ? g : "", nw) == 0;
    if (!same) {
        size_t i = 0, line = 1, start = 0;
        while (i < nw && i < ng && w[i] == g[i]) {
            if (w[i] == '\n') line++, start = i + 1;
            i++;
        }
        printf("%s differs at line %zu (%zu bytes wanted, %zu got)%s%s\n", what, line, nw, ng,
               w ? "" : "; wanted no file", g ? "" : "; got no file");
        size_t ew = start, eg = start;
        while (ew < nw && w[ew] != '\n' && ew - start < 200) ew++;
        while (eg < ng && g[eg] != '\n' && eg - start < 200) eg++;
        printf("  wanted: %.*s\n  got:    %.*s\n", (int)(start < nw ? ew - start : 0),
               w ? w + start : "", (int)(start < ng ? eg - start : 0), g ? g + start : "");
    }
    free(w);
    free(g);
    return same;
}

/* Copy a file (for the reference's --out file). */
static void copy_file(const char *from, const char *to)
{
    size_t n;
    char *b = slurp(from, &n);
    unlink(to);
    if (!b) return; /* no file: want.file stays missing too */
    FILE *f = fopen(to, "wb");
    if (!f || fwrite(b, 1, n, f) != n || fclose(f) != 0) {
        perror("tally-matrix: write");
        exit(2);
    }
    free(b);
}

/* Run ARGS plus the variant's words; standard output and error go to
 * DIR/<out> and DIR/<err>.  Returns tally's exit status, or 100 + a
 * reason this driver found after the run (printed on its stderr file):
 * 101 a leak, 102 a file descriptor left open. */
static int run_variant(int argc, char **argv, char *line, const char *out, const char *err)
{
    char *words[MAX_WORDS];
    int nw = 0;
    for (char *w = strtok(line, " \t\n"); w; w = strtok(NULL, " \t\n")) {
        if (nw == MAX_WORDS) {
            fprintf(stderr, "tally-matrix: more than %d words in a variant\n", MAX_WORDS);
            exit(2);
        }
        words[nw++] = w;
    }
    char po[4200], pe[4200];
    path_in(po, sizeof po, out);
    path_in(pe, sizeof pe, err);

    /* the variant's environment, the previous values kept */
    char *names[MAX_WORDS], *old[MAX_WORDS];
    int ne = 0;
    for (; ne < nw && words[ne][0] != '-' && strchr(words[ne], '='); ne++) {
        char *eq = strchr(words[ne], '=');
        *eq = '\0';
        names[ne] = words[ne];
        const char *prev = getenv(names[ne]);
        old[ne] = prev ? strdup(prev) : NULL;
        setenv(names[ne], eq + 1, 1);
    }
    char **av = malloc(sizeof *av * (size_t)(argc + nw - ne + 2));
    if (!av) exit(2);
    int ac = 0;
    av[ac++] = "tally";
    for (int k = 0; k < argc; k++) av[ac++] = argv[k];
    for (int i = ne; i < nw; i++) av[ac++] = words[i];
    av[ac] = NULL;

    fflush(stdout);
    fflush(stderr);
    int so = dup(1), se = dup(2);
    int fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int fe = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (so < 0 || se < 0 || fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0) {
        perror("tally-matrix: redirect");
        exit(2);
    }
    close(fo);
    close(fe);
    int fds0 = tl_count_entries("/proc/self/fd", NULL);
    int rc = tally_main(ac, av);
    tl_pool_shutdown();
    fflush(stdout);
    fflush(stderr);
    if (rc == 0 || rc == 1 || rc == 2) {
        if (tl_count_entries("/proc/self/fd", NULL) != fds0) {
            fprintf(stderr, "tally-matrix: a file descriptor left open\n");
            rc = 102;
        }
#if TL_ASAN
        else if (__lsan_do_recoverable_leak_check()) {
            fprintf(stderr, "tally-matrix: memory leaked (report above)\n");
            rc = 101;
        }
#endif
        fflush(stderr);
    }
    dup2(so, 1);
    dup2(se, 2);
    close(so);
    close(se);
    free(av);
    for (int i = 0; i < ne; i++) {
        if (old[i]) setenv(names[i], old[i], 1);
        else unsetenv(names[i]);
        free(old[i]);
    }
    return rc;
}

/* Print the head of a run's standard error (the reason it failed). */
static void show_err(const char *name)
{
    char p[4200];
    size_t n;
    char *b = slurp(path_in(p, sizeof p, name), &n);
    if (b && n) {
        size_t k = 0, lines = 0;
        while (k < n && lines < 40)
            if (b[k++] == '\n') lines++;
        printf("--- its standard error:\n%.*s%s", (int)k, b, b[k - 1] == '\n' ? "" : "\n");
    }
    free(b);
}

/* An empty file at path. */
static void empty_file(const char *path)
{
    FILE *f = fopen(path, "wb");
    if (!f || fclose(f) != 0) {
        perror("tally-matrix: write");
        exit(2);
    }
}

int main(int argc, char **argv)
{
    const char *want = NULL, *outp = NULL;
    bool ok_only = false;
    int a = 1;
    for (; a < argc && strncmp(argv[a], "--", 2) == 0; a++) {
        if (strcmp(argv[a], "--ok") == 0) ok_only = true;
        else if (strcmp(argv[a], "--want") == 0 && a + 1 < argc) want = argv[++a];
        else if (strcmp(argv[a], "--out") == 0 && a + 1 < argc) outp = argv[++a];
        else break;
    }
    if (argc - a < 2 || strncmp(argv[a], "--", 2) == 0) {
        fprintf(stderr, "usage: tally-matrix [--ok] [--want FILE] [--out PATH] DIR ARGS..."
                        " < VARIANTS\n");
        return 2;
    }
    dir = argv[a++];
    mkdir(dir, 0755);
    char wo[4200], we[4200], wf[4200], go[4200], ge[4200];
    path_in(wo, sizeof wo, "want.out");
    path_in(we, sizeof we, "want.err");
    path_in(wf, sizeof wf, "want.file");
    path_in(go, sizeof go, "got.out");
    path_in(ge, sizeof ge, "got.err");
    if (want) {
        /* the reference is given: status 0, FILE on stdout (or in --out) */
        copy_file(want, outp ? wf : wo);
        if (outp) empty_file(wo);
        empty_file(we);
        ok_only = true;
    }
    /* every variant is read first: no run may see the rest of them on
     * its standard input */
    size_t nin;
    char *in = slurp("/dev/stdin", &nin);
    if (!in || !freopen("/dev/null", "r", stdin)) {
        perror("tally-matrix: standard input");
        return 2;
    }
    in[nin] = '\0';
    int want_status = 0, runs = 0;
    const char *first = "";
    for (char *variant = in, *eol; variant; variant = eol ? eol + 1 : NULL) {
        if ((eol = strchr(variant, '\n')) != NULL) *eol = '\0';
        if (variant[strspn(variant, " \t")] == '\0') continue;
        char *words = strdup(variant); /* run_variant cuts it into words */
        if (!words) {
            perror("tally-matrix");
            return 2;
        }
        bool reference = !want && runs == 0;
        if (outp) unlink(outp);
        int st = run_variant(argc - a, argv + a, words, reference ? "want.out" : "got.out",
                             reference ? "want.err" : "got.err");
        free(words);
        runs++;
        bool ok = true;
        if (reference) {
            want_status = st;
            first = variant;
            if (outp) copy_file(outp, wf);
            char ps[4200];
            FILE *f = fopen(path_in(ps, sizeof ps, "want.status"), "w");
            if (!f || fprintf(f, "%d\n", st) < 0 || fclose(f) != 0) {
                perror("tally-matrix: want.status");
                return 2;
            }
        } else {
            if (st != want_status) printf("status %d, wanted %d\n", st, want_status);
            ok = st == want_status;
            ok = same_file(wo, go, "standard output") && ok;
            ok = same_file(we, ge, "standard error") && ok;
            if (outp) ok = same_file(wf, outp, outp) && ok;
        }
        if (st >= 100) {
            /* a leak or an open descriptor, in the reference too */
            printf("status %d: tally-matrix found %s after the run\n", st,
                   st == 101 ? "a leak" : st == 102 ? "a descriptor left open" : "a problem");
            ok = false;
        }
        if (ok && ok_only && st != 0) {
            printf("status %d\n", st);
            ok = false;
        }
        if (ok && ok_only && reference) {
            struct stat sb;
            if (stat(we, &sb) == 0 && sb.st_size > 0) {
                printf("standard error not empty\n");
                ok = false;
            }
        }
        if (!ok) {
            printf("--- %s: [%s]%s%s; ARGS:", reference ? "the reference failed" : "differs",
                   variant, reference ? "" : " from ",
                   reference ? "" : want ? want : first);
            for (int k = a; k < argc; k++) printf(" %s", argv[k]);
            printf("\n");
            show_err(reference ? "want.err" : "got.err");
            free(in);
            fflush(stdout);
            return 1;
        }
    }
    free(in);
    if (runs == 0) {
        fprintf(stderr, "tally-matrix: no variant on standard input\n");
        return 2;
    }
    return 0;
}
