/*
 * flags.h -- the command line's front door: argv -> TallySpec.
 *
 * cmd/flags.c turns the arguments after the program name (and after the
 * `explain` / `schema` word, which main.c strips) into the same TallySpec a
 * pipeline file builds (lib/tally.h), keeping the steps in the order typed.
 */
#ifndef TALLY_CMD_FLAGS_H
#define TALLY_CMD_FLAGS_H

#include "../lib/tally.h"

/* What the command line asks for besides a run. */
typedef enum CliAction {
    CLI_RUN,      /* run the spec (in the mode main.c chose) */
    CLI_HELP,     /* --help / -h: print the summary, exit 0 */
    CLI_VERSION,  /* --version: print "tally 0.1.0", exit 0 */
    CLI_USAGE,    /* `tally` alone: the usage error, then the short usage
                     (cli_usage_text) on standard error, exit 2 */
} CliAction;

/* --color: whether a table (and error carets) may be coloured. */
typedef enum CliColor {
    CLI_COLOR_AUTO,   /* on a terminal, unless NO_COLOR (cmd/term.c) */
    CLI_COLOR_ALWAYS,
    CLI_COLOR_NEVER,
} CliColor;

/* Parse argv[0..argc) (the program name and subcommand already removed)
 * into *spec, which the caller zeroed and later frees with tally_spec_free
 * (also on failure).  mode is the subcommand's mode: TALLY_SCHEMA rejects
 * steps.  Returns 0 and sets *action, or fills err (exit_code 2 for usage
 * errors, or whatever tally_spec_from_json reports for -f) and returns its
 * exit code. */
int cli_flags_parse(int argc, char **argv, TallyMode mode, TallySpec *spec,
                    CliAction *action, TallyError *err);

/* The --color given to the last cli_flags_parse (CLI_COLOR_AUTO when none). */
CliColor cli_color_choice(void);

/* The exit status for how a run ended: 0 for success and for a standard
 * output closed by its reader (`tally ... | head -1`), 2 for usage errors,
 * 1 for everything else.  The one place a TallyStatus becomes an exit
 * status (main.c; the OOM loop's driver, tests/fault/oom_run.c). */
int cli_exit_status(TallyStatus st);

/* The --help text, and the short usage with examples of a bare `tally`. */
extern const char cli_help_text[];
extern const char cli_usage_text[];

#endif
