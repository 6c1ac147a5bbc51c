/*
 * filename.h -- --with-filename (filename.c): a reader wrapper that adds a
 * constant `filename` string column to any format's reader.
 */
#ifndef TL_FILENAME_H
#define TL_FILENAME_H

#include "format.h"

/* Wrap *inout (a freshly opened reader of path) so its rows carry a
 * `filename` column (first); on success *inout is the wrapper, on failure
 * the inner reader is closed and *inout is NULL.  Errors: TL_ERR_USAGE when
 * the input already has a `filename` column, TL_ERR_OOM. */
TlStatus tl_filename_reader_wrap(const char *path, TlReader **inout, TlError *err);

#endif
