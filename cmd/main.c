/*
 * main.c -- the tally program: dispatch and exit codes.
 *
 *   tally [OPTIONS] INPUT... [STEP...] [-o OUTPUT]     run a pipeline
 *   tally [OPTIONS] -f PIPELINE.json [-o OUTPUT]       run a pipeline file
 *   tally explain ARGS...                              print the plan
 *   tally schema INPUT...                              print column types
 *   tally --help | --version | help
 *
 * Like zstd's programs/, this file uses only the public header: flags.c
 * builds a TallySpec, tally_run does the work and reports an exit status
 * (0 ok, 1 data or runtime, 2 usage) with a message that main prints as
 * "tally: <message>" on standard error.  Nothing else is printed on error,
 * so scripts can match the message.  The message is escaped before it is
 * printed (see print_error).
 *
 * SIGPIPE is ignored: writing to a closed pipe (`tally ... | head -1`) then
 * fails with EPIPE, which the library turns into a quiet exit 0, instead of
 * the process dying by a signal half way through a write.
 *
 * SIGBUS: input files are memory-mapped, and one truncated by another
 * process while it is read would kill tally with SIGBUS; tally_guard_inputs
 * turns that into the error "FILE: changed size while being read".
 */
#include "../lib/tally.h"
#include "flags.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Print a message as "tally: <message>" (with a trailing newline).  Data in
 * a message is quoted where it is embedded; escaping the whole message once
 * more here (a no-op on escaped text) guarantees that nothing the user's
 * data holds reaches the terminal as a control sequence. */
static void print_error(const char *msg)
{
    static char safe[4 * sizeof ((TallyError *)0)->message];
    tally_escape_message(safe, sizeof safe, msg);
    size_t n = strlen(safe);
    fprintf(stderr, "tally: %s%s", safe, n && safe[n - 1] == '\n' ? "" : "\n");
}

/* `tally help` prints the help, and a first argument that names no file but
 * is one typo away from a command (`tally explian`) is a usage error that
 * suggests it: without this both would be "cannot open" errors about a
 * file the user never meant.  Returns the exit status, or -1 to go on. */
static int command_hint(int argc, char **argv)
{
    static const char *const commands[] = {"explain", "schema", "help"};
    struct stat st;
    char msg[1200], q[1100];
    if (argc < 2 || argv[1][0] == '-' || strchr(argv[1], '/') ||
        strchr(argv[1], '.') || strcmp(argv[1], "explain") == 0 ||
        strcmp(argv[1], "schema") == 0 || stat(argv[1], &st) == 0)
        return -1;
    if (strcmp(argv[1], "help") == 0) {
        fputs(cli_help_text, stdout);
        return 0;
    }
    const char *near = tally_suggest(argv[1], commands, 3);
    if (!near) return -1;
    snprintf(msg, sizeof msg, "%s is neither a command nor a file (did you mean "
             "tally %s?)", tally_quote(q, sizeof q, argv[1]),
             strcmp(near, "help") == 0 ? "--help" : near);
    print_error(msg);
    return 2;
}

/* Parse the command line, run it, print an error if any; returns the
 * exit status (0, 1 or 2). */
int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    tally_guard_inputs();

    TallyMode mode = TALLY_RUN;
    int first = 1;
    int hint = command_hint(argc, argv);
    if (hint >= 0) return hint;
    if (argc > 1 && strcmp(argv[1], "explain") == 0) {
        mode = TALLY_EXPLAIN;
        first = 2;
    } else if (argc > 1 && strcmp(argv[1], "schema") == 0) {
        mode = TALLY_SCHEMA;
        first = 2;
    }

    TallySpec spec;
    memset(&spec, 0, sizeof spec);
    TallyError err;
    memset(&err, 0, sizeof err);
    CliAction action = CLI_RUN;
    int rc = cli_flags_parse(argc - first, argv + first, mode, &spec, &action,
                             &err);
    if (rc == 0 && action == CLI_HELP) {
        fputs(cli_help_text, stdout);
    } else if (rc == 0 && action == CLI_VERSION) {
        fputs("tally " TALLY_VERSION "\n", stdout);
    } else if (rc == 0) {
        rc = tally_run(&spec, mode, &err);
    }
    /* --help into a closed pipe is not an error either: no flush check */
    if (rc != 0) {
        print_error(err.message[0] ? err.message : "failed");
        if (rc != 1 && rc != 2) rc = 1;
    }
    tally_spec_free(&spec);
    return rc;
}
