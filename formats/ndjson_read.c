/*
 * ndjson_read.c -- the NDJSON reader (stub while it is being written).
 */
#include "fmt_impl.h"

/* Open an NDJSON input (not implemented yet). */
TlStatus tl_ndjson_reader_open(const char *path, const TlReadOptions *opt,
                               TlTypeHints *hints, TlReader **out, TlError *err)
{
    (void)opt;
    (void)hints;
    *out = NULL;
    return tl_error(err, TL_ERR_USAGE,
                    "cannot read \"%s\": the ndjson format is not supported yet", path);
}
