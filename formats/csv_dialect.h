/*
 * csv_dialect.h -- CSV/TSV dialect decisions made before and beside the
 * CSV reader (csv_dialect.c): which delimiter a text input uses, and the
 * hint an error gives when the delimiter looks wrong.
 */
#ifndef TL_CSV_DIALECT_H
#define TL_CSV_DIALECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tsv.h"

/* Added to the quote errors of the CSV reader: the knob that reads such a
 * file. */
#define TL_CSV_QUOTE_HINT " (a quote opens a quoted field: --quote none reads quotes as data)"

/* The bytes of input the sniffer looks at, at most (and at most
 * TL_SNIFF_RECORDS records, the header included). */
#define TL_SNIFF_BYTES ((size_t)64 << 10)
#define TL_SNIFF_RECORDS 21

/* The delimiter of the text p[0..n) (after any BOM): among ',' ';' '|' and
 * tab, the one that splits every one of the first records (blank lines
 * skipped; a record cut by the end of the sample when more input follows,
 * more_follows, is left out) into the same number of fields, more than one;
 * of several, the one giving the most fields; a tie goes to dflt (the
 * suffix's: ',' or tab), else to the first in that order.  When no
 * candidate is consistent, dflt.  Lines starting with comment (0: none)
 * are left out.  quotes: '"' opens a quoted field at a
 * field's start (CSV), false: quotes are data (IANA TSV).  Deterministic:
 * depends only on the bytes. */
char tl_csv_sniff_delimiter(const uint8_t *p, size_t n, bool more_follows,
                            char dflt, bool quotes, char comment);

/* --skip N: the offset after the first n lines of p[start..size) (LF,
 * CRLF or a lone CR end one; quotes do not count: a preamble is not CSV);
 * *skipped gets how many there were. */
size_t tl_csv_skip_lines(const uint8_t *p, size_t size, size_t start, int64_t n,
                         int64_t *skipped);

/* --comment C: the offset after the lines at p[pos..size) that start with
 * comment (and, with blanks, the blank lines among and after them: before
 * a header; in data a blank line may be a value), adding the lines passed
 * to *line. */
size_t tl_csv_skip_comments(const uint8_t *p, size_t size, size_t pos, uint8_t comment,
                            bool blanks, int64_t *line);

/* The dialect a field-count error names (into buf): for a header
 * hdr[0..n) read as one column that holds another delimiter candidate,
 * `read as one column, but the header holds ';': try --delimiter ';'`;
 * else the format and delimiter, with how it was decided when it was
 * sniffed (dflt: the suffix's, 0 when --delimiter gave it) to differ from
 * the suffix's: `CSV, delimiter ','` or `CSV, delimiter ';' sniffed from
 * the first records: --delimiter sets it`; a first line starting with '#'
 * without --comment (comment 0) adds `the first line starts with '#': try
 * --comment '#'`. */
void tl_csv_dialect_hint(const uint8_t *hdr, size_t n, int n_cols, char delim,
                         char dflt, bool tsv, char comment, char *buf, size_t cap);

/* How a delimiter is spelled in messages and on the command line: "','",
 * "'\t'" for tab. */
const char *tl_csv_delim_spelling(char delim);

#endif
