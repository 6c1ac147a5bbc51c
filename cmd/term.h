/*
 * term.h -- the terminal's part of a run: the table and colour (term.c).
 */
#ifndef TALLY_CMD_TERM_H
#define TALLY_CMD_TERM_H

#include "flags.h"

/* Make a parsed run's spec a table when its result goes to a terminal
 * with no output format asked for, and give a table its width and colour.
 * Modes other than TALLY_RUN are left alone.  -1 when out of memory. */
int cli_terminal_setup(TallySpec *spec, TallyMode mode);

/* Whether text for descriptor fd may be coloured, by --color, NO_COLOR and
 * CLICOLOR_FORCE; to_fd false: the text goes elsewhere (-o FILE), so
 * auto gives no colour. */
bool cli_color_for(int fd, bool to_fd);

#endif
