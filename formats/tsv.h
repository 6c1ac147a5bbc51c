/*
 * tsv.h -- the IANA TSV dialect (tsv.c): a writer that never quotes and
 * writes tab, LF, CR and backslash as \t \n \r \\.
 */
#ifndef TL_TSV_H
#define TL_TSV_H

#include "format.h"

/* Open a TSV writer on sink and, if header, write the column names (escaped
 * as values are).  null_text (NULL: empty) is written for null.  The sink
 * is borrowed and must outlive the writer; schema is only read here. */
TlStatus tl_tsv_writer_open(TlSink *sink, const TlSchema *schema, bool header,
                            const char *null_text, TlWriter **out, TlError *err);

/* Decode the IANA TSV escapes \t \n \r \\ of s[0..n) into out (room for
 * n bytes; other backslashes are kept); returns the decoded length. */
size_t tl_tsv_unescape(const uint8_t *s, size_t n, uint8_t *out);
/* The same in place on a NUL-terminated string (a header name). */
void tl_tsv_unescape_str(char *s);
/* Wrap *inout, a CSV reader opened with TlReadOptions.tsv, so that string
 * values come out with their escapes decoded (tsv_read.c).  On failure the
 * inner reader is closed and *inout is NULL (TL_ERR_OOM). */
TlStatus tl_tsv_reader_wrap(TlReader **inout, TlError *err);

#endif
