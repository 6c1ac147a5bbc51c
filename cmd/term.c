/*
 * term.c -- what the program does differently for a person at a terminal.
 *
 * The library knows no terminals: it writes a table when the spec says
 * `to = "table"`, of the width, rows and colour the spec gives.  This file
 * decides them (man/tally.1, "Tables" and ENVIRONMENT):
 *
 *   table   a run whose result goes to standard output, with no output
 *           format asked for (-o, even -o -; --to; or the CSV-only
 *           --out-delimiter, --out-null, --out-no-header), is a table when
 *           standard output is a terminal.  Pipes, redirects and -o files
 *           keep getting exactly the CSV they always did.
 *   width   the terminal's (TIOCGWINSZ on standard output), else $COLUMNS,
 *           else 80.
 *   colour  --color=always or never; auto (the default): NO_COLOR set to
 *           anything non-empty turns it off (no-color.org), else
 *           CLICOLOR_FORCE (non-empty, not "0") turns it on, else colour
 *           when the text goes to a terminal.  The same rule, for standard
 *           error, colours the caret lines of error messages.
 */
#include "term.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

static bool env_set(const char *name)
{
    const char *v = getenv(name);
    return v && *v;
}

/* See term.h. */
bool cli_color_for(int fd, bool to_fd)
{
    switch (cli_color_choice()) {
    case CLI_COLOR_ALWAYS: return true;
    case CLI_COLOR_NEVER: return false;
    case CLI_COLOR_AUTO: break;
    }
    if (env_set("NO_COLOR")) return false;
    if (env_set("CLICOLOR_FORCE") && strcmp(getenv("CLICOLOR_FORCE"), "0") != 0)
        return true;
    return to_fd && isatty(fd);
}

/* The width of the terminal on standard output, else $COLUMNS, else 80. */
static int table_width(void)
{
    struct winsize ws;
    const char *cols = getenv("COLUMNS");
    if (isatty(1) && ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    if (cols && *cols) {
        char *end;
        long n = strtol(cols, &end, 10);
        if (!*end && n > 0 && n <= 100000) return (int)n;
    }
    return 80;
}

/* See term.h. */
int cli_terminal_setup(TallySpec *spec, TallyMode mode)
{
    if (mode != TALLY_RUN) return 0;
    if (!spec->output && !spec->to && !spec->out_delimiter && !spec->out_null &&
        !spec->out_no_header && isatty(1)) {
        spec->to = tally_strdup("table");
        if (!spec->to) return -1;
    }
    if (!spec->to || strcasecmp(spec->to, "table") != 0) return 0;
    spec->table_width = table_width();
    spec->color = cli_color_for(1, !spec->output);
    return 0;
}
