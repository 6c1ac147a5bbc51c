/*
 * ndjson_write.c -- the NDJSON writer (stub while it is being written).
 */
#include "fmt_impl.h"

/* Open an NDJSON writer (not implemented yet). */
TlStatus tl_ndjson_writer_open(TlSink *sink, const TlSchema *schema,
                               TlWriter **out, TlError *err)
{
    (void)sink;
    (void)schema;
    *out = NULL;
    return tl_error(err, TL_ERR_USAGE, "writing the ndjson format is not supported yet");
}
