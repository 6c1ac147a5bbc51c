/*
 * pattern.h -- input patterns with `**` and `{a,b}` (pattern.c).
 */
#ifndef TL_RUN_PATTERN_H
#define TL_RUN_PATTERN_H

#include "../core/core.h"

/* Whether pattern asks for more than glob(3) gives: a `**` path component
 * or a `{...}` group holding a comma. */
bool tl_glob_extended(const char *pattern);

/* Every file (not folder) that pattern matches: `{a,b,...}` groups
 * expanded first (nested groups too), then per alternative `*`, `?` and
 * `[...]` within one path component (a leading `.` only matched by a `.`)
 * and `**` as a whole component for any number of folders, zero included
 * (symbolic links to folders are not followed; a last `**` matches every
 * file below, at any depth; names starting with `.` are skipped).  The matches of every
 * alternative, sorted by bytes, without duplicates, in *out (n entries,
 * each and the array freed with tl_free); none is not an error here. */
TlStatus tl_glob_expand(const char *pattern, char ***out, size_t *n, TlError *err);

#endif
