/*
 * main.c -- the tally program: dispatch and exit codes.
 *
 *   tally [OPTIONS] INPUT... [STEP...] [-o OUTPUT]     run a pipeline
 *   tally [OPTIONS] -f PIPELINE.json [-o OUTPUT]       run a pipeline file
 *   tally explain ARGS...                              print the plan
 *   tally schema INPUT...                              print column types
 *   tally describe ARGS...                             statistics per column
 *                                                      (ARGS --describe)
 *   tally completions bash|zsh|fish                    a completion script
 *   tally --help | --version | help
 *   tally                                              short usage, exit 2
 *
 * A run whose result goes to a terminal is drawn as a table (term.c
 * decides, before the run; the library only draws what the spec says).
 *
 * Like zstd's programs/, this file uses only the public header: flags.c
 * builds a TallySpec, tally_run does the work and reports how it ended (a
 * TallyStatus, with a message) and what it did (TallyStats).  The program
 * chooses the exit status (cli_exit_status in flags.c: 0 ok, 2 usage, 1
 * anything else), prints the message as "tally: <message>" on standard
 * error, and for --stats the counters once the output is committed.
 * Nothing else is printed on error, so scripts can match the message.  The
 * message is escaped before it is printed (see print_error).
 *
 * The CLI owns what is process-wide, so it is set up here, not in the
 * library:
 *
 *   SIGPIPE     ignored: writing to a closed pipe (`tally ... | head -1`)
 *               then fails with EPIPE, which the library turns into a quiet
 *               exit 0, instead of the process dying half way through a
 *               write.
 *   SIGINT, SIGTERM, SIGHUP
 *               a handler removes the run's temporary output files
 *               (tally_remove_temp_files, async-signal-safe), restores the
 *               default action and raises the signal again, so the shell
 *               sees the usual death by that signal (status 130, 143, 129).
 *               A signal ignored when tally starts (nohup, a background job
 *               of a non-interactive shell) stays ignored.
 *   fds 0, 1, 2 each one that is closed at start is opened on /dev/null
 *               (read-only), so no file tally opens can take its number
 *               (with 2 closed, the output file would otherwise be
 *               descriptor 2 and warnings would land in it).  Messages
 *               to a closed 2 are dropped, the exit status still tells; a
 *               result for a closed 1 is an error ("standard output is
 *               closed", exit 1), never a silent success.
 *   SIGBUS      input files are memory-mapped, and one truncated by another
 *               process while it is read would kill tally with SIGBUS;
 *               tally_guard_inputs turns that into the error "FILE: changed
 *               size while being read".
 */
#include "../lib/tally.h"
#include "flags.h"
#include "term.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Print a message as "tally: <message>" (with a trailing newline).  Data in
 * a message is quoted where it is embedded; escaping the whole message once
 * more here (a no-op on escaped text) guarantees that nothing the user's
 * data holds reaches the terminal as a control sequence. */
static void print_error(const char *msg)
{
    static char safe[4 * sizeof ((TallyError *)0)->message];
    tally_escape_message(safe, sizeof safe, msg);
    size_t n = strlen(safe);
    if (!cli_color_for(2, true)) {
        fprintf(stderr, "tally: %s%s", safe, n && safe[n - 1] == '\n' ? "" : "\n");
        return;
    }
    /* colour: the caret lines under an expression (spaces, then ^s) red */
    fputs("tally: ", stderr);
    for (char *line = safe; *line;) {
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        size_t sp = strspn(line, " ");
        size_t hat = strspn(line + sp, "^");
        if (line != safe && hat > 0 && sp + hat == len)
            fprintf(stderr, "%.*s\033[31m%.*s\033[0m\n", (int)sp, line, (int)hat, line + sp);
        else
            fprintf(stderr, "%.*s\n", (int)len, line);
        line += len + (nl != NULL);
    }
}

/* --stats: the run's counters on standard error, one `key: value` a line. */
static void print_stats(const TallyStats *s)
{
    fprintf(stderr,
            "rows_read: %lld\nbytes_read: %lld\nbatches: %lld\nconverted:%s%s\n"
            "groups: %lld\nrows_sorted: %lld\nrows_written: %lld\nrestarts: %lld\n",
            (long long)s->rows_read, (long long)s->bytes_read,
            (long long)s->batches,
            s->converted && *s->converted ? " " : "",
            s->converted ? s->converted : "", (long long)s->groups,
            (long long)s->rows_sorted, (long long)s->rows_written,
            (long long)s->restarts);
    if (s->decompressed_held_peak > 0)
        fprintf(stderr, "decompressed_held_peak: %lld\n", (long long)s->decompressed_held_peak);
    fprintf(stderr, "memory_limit: %lld\nmemory_held_peak: %lld\n",
            (long long)s->memory_limit, (long long)s->memory_held_peak);
    if (s->spilled_bytes > 0) {
        fprintf(stderr, "spilled_bytes: %lld\nspill_read_bytes: %lld\nsort_runs: %lld\n",
                (long long)s->spilled_bytes, (long long)s->spill_read_bytes,
                (long long)s->sort_runs);
        /* the process's, so it depends on timing: only where a run spilled */
        if (s->resident_peak > 0)
            fprintf(stderr, "resident_peak: %lld\n", (long long)s->resident_peak);
    }
}

/* `tally help` prints the help, and a first argument that names no file but
 * is one typo away from a command (`tally explian`) is a usage error that
 * suggests it: without this both would be "cannot open" errors about a
 * file the user never meant.  Returns the exit status, or -1 to go on. */
static int command_hint(int argc, char **argv)
{
    static const char *const commands[] = {"explain", "schema", "describe",
                                           "completions", "help"};
    struct stat st;
    char msg[1200], q[1100];
    if (argc < 2 || argv[1][0] == '-' || strchr(argv[1], '/') ||
        strchr(argv[1], '.') || strcmp(argv[1], "explain") == 0 ||
        strcmp(argv[1], "schema") == 0 || strcmp(argv[1], "describe") == 0 ||
        strcmp(argv[1], "completions") == 0 || stat(argv[1], &st) == 0)
        return -1;
    if (strcmp(argv[1], "help") == 0) {
        cli_print_help(stdout);
        return 0;
    }
    const char *near = tally_suggest(argv[1], commands,
                                     sizeof commands / sizeof commands[0]);
    if (!near) return -1;
    snprintf(msg, sizeof msg, "%s is neither a command nor a file (did you mean "
             "tally %s?)", tally_quote(q, sizeof q, argv[1]),
             strcmp(near, "help") == 0 ? "--help" : near);
    print_error(msg);
    return 2;
}

/* SIGINT, SIGTERM, SIGHUP: remove the temporary output, then die by the
 * same signal (its default action; the signal is blocked while this runs,
 * so it arrives when the handler returns). */
static void on_fatal_signal(int sig)
{
    struct sigaction dfl;
    tally_remove_temp_files();
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
}

/* Install on_fatal_signal for the signals that end a run, leaving alone
 * those ignored at start. */
static void install_signal_handlers(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaddset(&sa.sa_mask, sigs[i]);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        sigaction(sigs[i], &sa, NULL);
    }
    signal(SIGPIPE, SIG_IGN);
}

/* Open /dev/null on each of descriptors 0, 1, 2 that is closed (lowest
 * first, so open returns that number).  Read-only, also for 1 and 2: a
 * write there still fails (EBADF) instead of vanishing, so `-o /dev/stdout`
 * with standard output closed is an error too, and messages are dropped.
 * Returns a mask of the closed ones (bit fd), or -1 when one could not be
 * reserved. */
static int reserve_std_fds(void)
{
    int closed = 0;
    for (int fd = 0; fd <= 2; fd++) {
        int got;
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
        closed |= 1 << fd;
        got = open("/dev/null", O_RDONLY);
        if (got != fd) {
            if (got >= 0) close(got);
            return -1;
        }
    }
    return closed;
}

/* Parse the command line, run it, print an error if any; returns the
 * exit status (0, 1 or 2). */
int main(int argc, char **argv)
{
    int closed = reserve_std_fds();
    if (closed < 0) {
        print_error("cannot open /dev/null for a closed standard descriptor");
        return 1;
    }
    install_signal_handlers();
    tally_guard_inputs();

    TallyMode mode = TALLY_RUN;
    int first = 1;
    bool describe = false;
    int hint = command_hint(argc, argv);
    if (hint >= 0) return hint;
    if (argc > 1 && strcmp(argv[1], "completions") == 0) {
        TallyError cerr;
        memset(&cerr, 0, sizeof cerr);
        int crc = cli_completions(argc - 2, argv + 2, &cerr);
        if (crc == 0 && (closed & 2)) {
            print_error("standard output is closed");
            return 1;
        }
        if (crc != 0) print_error(cerr.message);
        return crc;
    }
    if (argc > 1 && strcmp(argv[1], "explain") == 0) {
        mode = TALLY_EXPLAIN;
        first = 2;
    } else if (argc > 1 && strcmp(argv[1], "schema") == 0) {
        mode = TALLY_SCHEMA;
        first = 2;
    } else if (argc > 1 && strcmp(argv[1], "describe") == 0) {
        describe = true;
        first = 2;
    }

    TallySpec spec;
    memset(&spec, 0, sizeof spec);
    TallyError err;
    memset(&err, 0, sizeof err);
    CliAction action = CLI_RUN;
    int rc = cli_flags_parse(argc - first, argv + first, mode, &spec, &action,
                             &err);
    /* `tally describe` alone is a command without its input, like
     * `tally explain` alone, not a first try of the program */
    if (describe && action == CLI_USAGE) {
        action = CLI_RUN;
        snprintf(err.message, sizeof err.message, "no input given (try tally --help)");
    }
    /* `tally describe ARGS` is `tally ARGS --describe`: the statistics of
     * the pipeline's result (of the inputs when there is no step) */
    if (rc == 0 && describe && action == CLI_RUN) {
        TallyStep *st = tally_spec_add_step(&spec, TALLY_STEP_DESCRIBE);
        if (!st || !(st->origin = tally_strdup("describe"))) {
            snprintf(err.message, sizeof err.message, "out of memory");
            rc = 1;
        } else {
            st->split = true;
        }
    }
    if (rc == 0 && (closed & 2) &&
        (action != CLI_RUN || mode != TALLY_RUN || !spec.output)) {
        /* the result would go to a descriptor the caller closed */
        snprintf(err.message, sizeof err.message, "standard output is closed");
        rc = 1;
    } else if (rc == 0 && action == CLI_RUN && cli_terminal_setup(&spec, mode) != 0) {
        /* a table or not, its width and colour: set in the spec above;
         * here only when that failed for memory */
        snprintf(err.message, sizeof err.message, "out of memory");
        rc = 1;
    } else if (rc == 0 && action == CLI_HELP) {
        cli_print_help(stdout);
    } else if (rc == 0 && action == CLI_VERSION) {
        fputs("tally " TALLY_VERSION "\n", stdout);
    } else if (rc == 0) {
        TallyStats stats;
        TallyStatus st = tally_run(&spec, mode, &stats, &err);
        /* explain runs no pipeline: there is nothing to count */
        if (st == TALLY_OK && spec.stats && mode != TALLY_EXPLAIN) print_stats(&stats);
        tally_free(stats.converted);
        rc = cli_exit_status(st);
    }
    /* --help into a closed pipe is not an error either: no flush check */
    if (rc != 0) {
        print_error(err.message[0] ? err.message : "failed");
        if (rc == 2 && action == CLI_USAGE) fputs(cli_usage_text, stderr);
        if (rc != 1 && rc != 2) rc = 1;
    }
    tally_spec_free(&spec);
    return rc;
}
