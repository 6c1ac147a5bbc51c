/*
 * registry.h -- the formats tally knows, in one table (registry.c).
 *
 * Everything that tells one format from another outside its own reader
 * and writer files is an entry's field: the names --from and --to accept,
 * the path suffixes, the bytes its content starts with, and the functions
 * that open a reader and a writer.  Choosing an input's format
 * (tl_format_for_input), dispatching (format.c), sniffing standard input,
 * the output format of a run (lib/run) and the lists in messages all read
 * the table, so a format is added by one entry there and its own files.
 */
#ifndef TL_REGISTRY_H
#define TL_REGISTRY_H

#include "format.h"

/* A format's reader: open path ("-" = standard input) as format.h's
 * tl_reader_open says; opt is never NULL. */
typedef TlStatus (*TlReaderOpenFn)(const char *path, const TlReadOptions *opt,
                                   TlTypeHints *hints, TlReader **out, TlError *err);
/* A format's writer on sink, the header written; opt may be NULL (the
 * format's defaults). */
typedef TlStatus (*TlWriterOpenFn)(TlSink *sink, const TlSchema *schema,
                                   const TlWriteOptions *opt, TlWriter **out,
                                   TlError *err);

typedef struct TlFormat {
    const char *name;         /* canonical, as tl_format_from_path returns it */
    const char *names[3];     /* the --from/--to names, NULL-ended */
    /* path suffixes, read and written (a trailing ".gz"/".zst" aside);
     * none: not a format of files (the table for people) */
    const char *suffixes[3];
    const char *read_suffix;  /* a suffix read as this format, never written
                                 under (".geojson"), or NULL */
    /* the bytes a file of this format starts with: a file whose suffix
     * names no format, and standard input, are this format when they do */
    const char *magic;
    size_t magic_len;
    /* standard input: this format when its first byte that is not blank
     * (space, tab, line end, after a UTF-8 BOM) is one of these; NULL:
     * never.  Neither magic nor this: CSV. */
    const char *lead;
    /* binary: compressed inside the file (never as .gz/.zst around it) */
    bool binary;
    TlReaderOpenFn open;      /* NULL: not read (yet) */
    TlWriterOpenFn write;     /* NULL: not written (yet) */
} TlFormat;

/* The format --from/--to name (case-insensitive) names, or NULL. */
const TlFormat *tl_format_named(const char *name);

/* The format of the input path ("-" = standard input) for opt (not NULL):
 * opt->from, else the path's suffix, else (standard input) sniffed, else
 * a format's magic bytes, else CSV.  Errors: TL_ERR_USAGE for an unknown
 * --from, standard input's load errors. */
TlStatus tl_format_for_input(const char *path, const TlReadOptions *opt,
                             const TlFormat **out, TlError *err);

/* Which formats tl_format_list names. */
enum {
    TL_FORMATS_READ = 1,      /* read */
    TL_FORMATS_WRITE = 2,     /* written */
    TL_FORMATS_TEXT = 4,      /* not binary */
    TL_FORMATS_BINARY = 8,    /* binary */
    TL_FORMATS_SUFFIXES = 16, /* their suffixes, not their names */
};
/* The names (or suffixes) of the formats `which` selects, in table order,
 * joined by sep, into buf (whole words, as many as cap bytes hold);
 * returns buf. */
const char *tl_format_list(char *buf, size_t cap, unsigned which, const char *sep);

#endif
