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

#include <stdio.h>

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

/* What a flag's value is, for the shell completions (complete.c). */
typedef enum CliVal {
    CLI_VAL_NONE,     /* no value */
    CLI_VAL_TEXT,     /* free text (an expression, a number): nothing to offer */
    CLI_VAL_COLUMNS,  /* column names of the first input (a LIST) */
    CLI_VAL_FILE,     /* a file name */
    CLI_VAL_CHOICE,   /* one of choices[] */
} CliVal;

/* One flag of the table --help is printed from. */
typedef struct CliFlagInfo {
    const char *name;             /* "--filter", "-o" */
    int arg;                      /* 0 no value, 1 a value, 2 an optional one */
    CliVal val;
    const char *const *choices;   /* CLI_VAL_CHOICE: NULL-terminated */
    char desc[96];                /* from its --help line */
} CliFlagInfo;

/* Flag i of the table (0, 1, ... in --help's order) into *out; false past
 * the last. */
bool cli_flag_info(int i, CliFlagInfo *out);

/* `tally completions SHELL` (complete.c): print the completion script for
 * bash, zsh or fish made from the flag table; anything else is a usage
 * error (2, the message in err). */
int cli_completions(int argc, char **argv, TallyError *err);

/* Print the --help text (made from the flag table, cmd/flags.c). */
void cli_print_help(FILE *out);

/* The short usage with examples of a bare `tally`. */
extern const char cli_usage_text[];

#endif
