/*
 * csv_dialect.h -- CSV/TSV dialect decisions made before and beside the
 * CSV reader (csv_dialect.c): which delimiter, quote and escape a text
 * input uses, and the hints errors give about them.
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
/* The longest preamble the sniffer looks for (lines before the header). */
#define TL_SNIFF_SKIP 10

/* What the options fix of a CSV/TSV dialect (tl_csv_sniff decides the
 * rest). */
typedef struct TlCsvGiven {
    char delim;      /* --delimiter, 0: sniffed among ',' ';' '|' tab */
    char dflt;       /* the suffix's delimiter (',' or tab): breaks ties */
    int quote;       /* --quote: the character; 0: sniffed ('"' or '\''),
                        -1: none (quotes are data) */
    int escape;      /* --escape: the character; 0: sniffed (none or
                        backslash), -1: none */
    char comment;    /* --comment: the character; 0: sniffed (none or '#'),
                        TL_COMMENT_NONE: none */
    bool skip_given; /* --skip: no preamble is sniffed */
} TlCsvGiven;

/* A CSV/TSV dialect: how tl_csv_parse_record reads records. */
typedef struct TlCsvDialect {
    char delim;
    char quote;      /* opens a quoted field at a field's start; 0: none */
    char escape;     /* inside a quoted field, escape followed by the quote
                        or by itself is that character; 0: none (a doubled
                        quote is a quote in any case) */
    bool delim_sniffed;  /* decided from the data (no --delimiter) */
    bool quote_sniffed;  /* the quote sniffed is not '"' */
    bool escape_sniffed; /* an escape was sniffed */
    bool quote_given;    /* by --quote (the reader sets it) */
    char comment;        /* lines starting with it are skipped; 0: none */
    bool comment_sniffed; /* '#' found by the sniffer (no --comment) */
    int skip;            /* lines of a preamble before the header, sniffed
                            (no --skip); 0: none */
} TlCsvDialect;

/* The dialect of the text p[0..n) (after any BOM and --skip lines) for
 * what g leaves open.  The candidates are every combination of delimiter
 * (',' ';' '|' tab), quote ('"', and '\'' when the sample holds one) and
 * escape (none, and backslash when the sample holds one) that g allows.
 * The sample is the first TL_SNIFF_RECORDS records (blank lines and
 * comment lines skipped) within TL_SNIFF_BYTES; a record cut by the end of
 * the sample when more input follows (more_follows) is left out.  A
 * candidate is consistent when every sampled record parses under it (a
 * quoted field closes; only the delimiter or a line end follows a closing
 * quote) into the same number of fields, more than one; a sniffed quote
 * other than '"' must also quote a field of the sample, not cut by its
 * end.  Of the consistent candidates the one with the most fields wins;
 * ties go to the suffix's delimiter (g->dflt), then to a candidate whose
 * quote quotes some field, then to the order above.  With none
 * consistent: the first quote and escape, and the delimiter splitting the
 * header into the most fields (ties as above); when none splits it, the
 * given delimiter or g->dflt, with the first candidate quote and escape
 * under which every sampled record parses and some field is quoted.
 * The comment: with g->comment 0 and a sampled line starting with '#',
 * the rule runs again with '#' lines skipped, and that answer is taken
 * when it is consistent and the first is not, or it gives more fields.
 * The preamble: when no candidate is consistent and g->skip_given is
 * false, the rule runs again after the first s lines for s = 1, 2, ...
 * up to TL_SNIFF_SKIP; the first s for which a candidate is consistent
 * over at least two records, and under which each of the s lines has
 * fewer fields than the records after them, is taken (out->skip), unless
 * every one of those records ends with the delimiter (a trailing
 * delimiter makes records longer than their header) or the first of them
 * holds nothing but number-like fields (no header).
 * Deterministic: depends only on the bytes. */
void tl_csv_sniff(const uint8_t *p, size_t n, bool more_follows, const TlCsvGiven *g,
                  TlCsvDialect *out);

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
 * sniffed (dflt: the suffix's) to differ from the suffix's: `CSV,
 * delimiter ','` or `CSV, delimiter ';' sniffed from the first records:
 * --delimiter sets it`, then the quote and escape when they are not the
 * format's defaults (`; quote "'" sniffed from the first records: --quote
 * sets it`, `; no quotes`, `; escape '\'`); a first line
 * starting with '#' without --comment (comment 0) adds `the first line
 * starts with '#': try --comment '#'`. */
void tl_csv_dialect_hint(const uint8_t *hdr, size_t n, int n_cols, const TlCsvDialect *d,
                         char dflt, bool tsv, char comment, char *buf, size_t cap);

/* The end of a quote error's message (into buf, from its leading space):
 * TL_CSV_QUOTE_HINT for CSV's default dialect; else the quote and escape
 * and how they were decided, and the options that change them.
 * backslash: the closing quote followed a backslash, so `--escape '\'
 * reads \" as a quote` is added. */
void tl_csv_quote_hint(const TlCsvDialect *d, bool tsv, bool backslash, char *buf,
                       size_t cap);

/* How a delimiter, quote or escape character is spelled in messages and
 * on the command line, into buf: "','", "'\t'" for tab, "\"'\"" for the
 * single quote; returns buf. */
const char *tl_csv_char_spelling(char c, char buf[8]);

#endif
