/*
 * registry.c -- the formats tally knows, one entry each (registry.h).
 *
 * An input's format, in this order of authority:
 *
 *   --from NAME          an entry's names (a format of files: one with
 *                        suffixes; the table for people is written only)
 *   the path's suffix    "a.tsv.gz" -> tsv (a trailing .gz/.zst is the
 *                        compression's), case-insensitively; then the
 *                        suffixes read but never written (".geojson")
 *   standard input       sniffed: magic bytes, else the first byte that is
 *                        not blank ({ or [: JSON), once it is decompressed
 *   magic bytes          a regular file's first bytes ("PAR1": Parquet)
 *   CSV                  everything else
 *
 * The table's order is the order of the lists in messages ("tally writes
 * csv, tsv, ndjson, jsonl, json, table, parquet") and of suffix matching.
 */
#include "registry.h"
#include "fmt_impl.h"
#include "tsv.h"

#include <fcntl.h>
#include <stdio.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------- the formats' constructors */

/* CSV and TSV share a reader: TSV's quotes are data and \N is null
 * (tsv_read.c decodes its escapes over the CSV reader). */
static TlStatus csv_open(const char *path, const TlReadOptions *opt,
                         TlTypeHints *hints, TlReader **out, TlError *err)
{
    TlReadOptions o = *opt;
    o.tsv = false;
    return tl_csv_reader_open(path, &o, opt->delimiter ? opt->delimiter : ',', hints,
                              out, err);
}

static TlStatus tsv_open(const char *path, const TlReadOptions *opt,
                         TlTypeHints *hints, TlReader **out, TlError *err)
{
    TlReadOptions o = *opt;
    TlStatus st;
    o.tsv = true; /* quotes are data, \N is null */
    st = tl_csv_reader_open(path, &o, opt->delimiter ? opt->delimiter : '\t', hints,
                            out, err);
    if (st == TL_OK) st = tl_tsv_reader_wrap(out, err); /* tsv_read.c */
    return st;
}

/* A .ndjson/.jsonl file that starts as a JSON document is an error naming
 * --from json (json_doc.c); --from ndjson reads it as NDJSON. */
static TlStatus ndjson_open(const char *path, const TlReadOptions *opt,
                            TlTypeHints *hints, TlReader **out, TlError *err)
{
    if (!opt->from) return tl_json_ndjson_open(path, opt, hints, out, err);
    return tl_ndjson_reader_open(path, opt, hints, out, err);
}

static TlStatus csv_write(TlSink *sink, const TlSchema *schema,
                          const TlWriteOptions *opt, TlWriter **out, TlError *err)
{
    return tl_csv_writer_open(sink, opt && opt->delimiter ? opt->delimiter : ',', schema,
                              opt ? opt->header : true, opt ? opt->null_text : NULL, out,
                              err);
}

/* IANA TSV: escapes, never quotes (tsv.c) */
static TlStatus tsv_write(TlSink *sink, const TlSchema *schema,
                          const TlWriteOptions *opt, TlWriter **out, TlError *err)
{
    return tl_tsv_writer_open(sink, schema, opt ? opt->header : true,
                              opt ? opt->null_text : NULL, out, err);
}

static TlStatus ndjson_write(TlSink *sink, const TlSchema *schema,
                             const TlWriteOptions *opt, TlWriter **out, TlError *err)
{
    return tl_ndjson_writer_open(sink, schema, out, err);
}

static TlStatus json_write(TlSink *sink, const TlSchema *schema,
                           const TlWriteOptions *opt, TlWriter **out, TlError *err)
{
    return tl_json_writer_open(sink, schema, out, err);
}

/* For people, not a file format: 40 rows unless asked. */
static TlStatus table_write(TlSink *sink, const TlSchema *schema,
                            const TlWriteOptions *opt, TlWriter **out, TlError *err)
{
    return tl_table_writer_open(sink, schema, opt ? opt->width : 0,
                                opt && opt->max_rows ? opt->max_rows : 40,
                                opt && opt->color, out, err);
}

/* ------------------------------------------------------------ the table */

static const TlFormat formats[] = {
    {.name = "csv", .names = {"csv"}, .suffixes = {".csv"},
     .open = csv_open, .write = csv_write},
    {.name = "tsv", .names = {"tsv"}, .suffixes = {".tsv"},
     .open = tsv_open, .write = tsv_write},
    {.name = "ndjson", .names = {"ndjson", "jsonl"}, .suffixes = {".ndjson", ".jsonl"},
     .open = ndjson_open, .write = ndjson_write},
    /* GeoJSON is JSON to read, but a JSON array written under its name
     * would not be GeoJSON.  A ".geojsonl" file stays CSV unless --from
     * says: read as NDJSON, a feature whose geometry is null beside ones
     * that hold an object would give a column "geometry" beside
     * "geometry.type"; its quote error names --from ndjson.  JSON by
     * content tells NDJSON from a document (json_doc.c). */
    {.name = "json", .names = {"json"}, .suffixes = {".json"}, .read_suffix = ".geojson",
     .lead = "{[", .open = tl_json_reader_open, .write = json_write},
    {.name = "table", .names = {"table"}, .write = table_write},
    {.name = "parquet", .names = {"parquet"}, .suffixes = {".parquet"},
     .magic = "PAR1", .magic_len = 4, .binary = true,
     .open = tl_parquet_reader_open, .write = tl_parquet_writer_open},
    {.name = "arrow", .names = {"arrow", "feather"}, .suffixes = {".arrow", ".feather"},
     .binary = true},
};
#define N_FORMATS (sizeof formats / sizeof formats[0])

static const TlFormat *const csv_format = &formats[0];

/* The longest magic of the table (what a sniff reads). */
static size_t magic_max(void)
{
    size_t m = 0;
    for (size_t i = 0; i < N_FORMATS; i++)
        if (formats[i].magic_len > m) m = formats[i].magic_len;
    return m;
}

/* The format whose magic bytes p[0..n) starts with, or NULL. */
static const TlFormat *by_magic(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < N_FORMATS; i++)
        if (formats[i].magic && n >= formats[i].magic_len &&
            memcmp(p, formats[i].magic, formats[i].magic_len) == 0)
            return &formats[i];
    return NULL;
}

/* -------------------------------------------------------------- naming */

static bool ends_with_ci(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && strncasecmp(s + n - k, suffix, k) == 0;
}

/* path's length without a trailing ".gz" or ".zst", which *comp names
 * ("gz", "zst" or NULL). */
static size_t strip_compression(const char *path, const char **comp)
{
    size_t n = strlen(path);
    *comp = NULL;
    if (ends_with_ci(path, n, ".gz")) {
        *comp = "gz";
        n -= 3;
    } else if (ends_with_ci(path, n, ".zst")) {
        *comp = "zst";
        n -= 4;
    }
    return n;
}

/* The format one of whose suffixes path[0..n) ends with, or NULL. */
static const TlFormat *by_suffix(const char *path, size_t n)
{
    for (size_t i = 0; i < N_FORMATS; i++)
        for (int k = 0; k < 3 && formats[i].suffixes[k]; k++)
            if (ends_with_ci(path, n, formats[i].suffixes[k])) return &formats[i];
    return NULL;
}

/* See format.h: the suffixes read and written (".geojson" is not). */
const char *tl_format_from_path(const char *path, const char **compression)
{
    const char *comp;
    const TlFormat *f;
    if (compression) *compression = NULL;
    if (!path) return NULL;
    f = by_suffix(path, strip_compression(path, &comp));
    if (compression) *compression = comp;
    return f ? f->name : NULL;
}

/* See registry.h. */
const TlFormat *tl_format_named(const char *name)
{
    for (size_t i = 0; i < N_FORMATS; i++)
        for (int k = 0; k < 3 && formats[i].names[k]; k++)
            if (strcasecmp(name, formats[i].names[k]) == 0) return &formats[i];
    return NULL;
}

/* See registry.h. */
const char *tl_format_list(char *buf, size_t cap, unsigned which, const char *sep)
{
    size_t used = 0;
    if (!cap) return buf;
    buf[0] = 0;
    for (size_t i = 0; i < N_FORMATS; i++) {
        const TlFormat *f = &formats[i];
        const char *const *words = which & TL_FORMATS_SUFFIXES ? f->suffixes : f->names;
        if ((which & TL_FORMATS_READ && !f->open) || (which & TL_FORMATS_WRITE && !f->write) ||
            (which & TL_FORMATS_TEXT && f->binary) || (which & TL_FORMATS_BINARY && !f->binary))
            continue;
        for (int k = 0; k < 3 && words[k]; k++) {
            int got = snprintf(buf + used, cap - used, "%s%s", used ? sep : "", words[k]);
            if (got < 0 || (size_t)got >= cap - used) {
                buf[used] = 0; /* whole words only */
                return buf;
            }
            used += (size_t)got;
        }
    }
    return buf;
}

/* ------------------------------------------------------------- sniffing */

/* The format of standard input by its first bytes (after decompression):
 * a format's magic, else a format whose lead holds its first byte that is
 * not blank (spaces, tabs, line ends, a UTF-8 BOM), else CSV.  Loads (and
 * caches) stdin; a streamed input is looked at in the bytes decompressed
 * already. */
static TlStatus sniff_stdin(const TlCtx *ctx, const TlFormat **out, TlError *err)
{
    TlBuf *b = NULL;
    size_t i = 0;
    size_t ready = 0;
    const TlFormat *magic;
    TlStatus st = TL_OK;
    TL_TRY(tl_input_load_stream(ctx, "-", &b, err));
    st = tl_input_wait(b, magic_max(), &ready, err);
    if (st == TL_OK && ready >= 3 && memcmp(b->data, "\xef\xbb\xbf", 3) == 0) i = 3;
    for (; st == TL_OK; i++) {
        if (i >= ready && (st = tl_input_wait(b, i + 4096, &ready, err)) != TL_OK) break;
        if (i >= ready) break;
        if (b->data[i] != ' ' && b->data[i] != '\t' && b->data[i] != '\r' &&
            b->data[i] != '\n')
            break;
    }
    *out = csv_format;
    for (size_t k = 0; st == TL_OK && i < ready && b->data[i] && k < N_FORMATS; k++)
        if (formats[k].lead && strchr(formats[k].lead, b->data[i])) {
            *out = &formats[k];
            break;
        }
    /* magic bytes are never blank */
    magic = st == TL_OK ? by_magic(b->data, ready) : NULL;
    if (magic) *out = magic;
    tl_buf_release(b);
    return st;
}

/* The format whose magic bytes the regular file at path starts with, or
 * NULL: a file whose suffix names no format is read by content (one read
 * of a few bytes, paid only by such files).  Anything else is not opened
 * here: opening a FIFO's reading end and closing it would let its writer
 * start and then die of SIGPIPE. */
static const TlFormat *sniff_file(const char *path)
{
    uint8_t m[16];
    size_t want = magic_max();
    ssize_t got;
    struct stat st;
    int fd;
    if (want > sizeof m) want = sizeof m;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return NULL;
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return NULL;
    got = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? pread(fd, m, want, 0) : -1;
    close(fd);
    return got > 0 ? by_magic(m, (size_t)got) : NULL;
}

/* See registry.h. */
TlStatus tl_format_for_input(const char *path, const TlReadOptions *opt,
                             const TlFormat **out, TlError *err)
{
    const char *comp;
    size_t n;
    *out = NULL;
    if (opt->from) {
        const TlFormat *f = tl_format_named(opt->from);
        if (!f || !f->suffixes[0]) {
            /* every format read (a format of files, with suffixes: the
             * table for people is written only) */
            char list[256];
            return tl_error(err, TL_ERR_USAGE, "--from: unknown format %s (tally reads %s)",
                            tl_quote_name(opt->from).s,
                            tl_format_list(list, sizeof list, TL_FORMATS_READ, ", "));
        }
        *out = f;
        return TL_OK;
    }
    if (strcmp(path, "-") == 0) return sniff_stdin(opt->ctx, out, err);
    n = strip_compression(path, &comp);
    if ((*out = by_suffix(path, n)) != NULL) return TL_OK;
    for (size_t i = 0; i < N_FORMATS; i++)
        if (formats[i].read_suffix && ends_with_ci(path, n, formats[i].read_suffix)) {
            *out = &formats[i];
            return TL_OK;
        }
    *out = sniff_file(path);
    if (!*out) *out = csv_format;
    return TL_OK;
}
