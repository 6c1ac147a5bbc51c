/*
 * format.c -- the format-independent half of format.h.
 *
 * Two jobs (the input's bytes are input.c's):
 *   1. Dispatch: tl_reader_open and tl_writer_open call the constructor
 *      of the format the registry (registry.c) names; tl_reader_* and
 *      tl_writer_* forward to the table of operations it filled in
 *      (fmt_impl.h).
 *   2. Inputs that change: every open, split, morsel and batch ends with a
 *      check (shrink_first) that a mapped input is not now shorter than at
 *      open; when one is, its error replaces whatever the reader returned
 *      (mapped.c explains why that is sound).
 */
#include "fmt_impl.h"
#include "registry.h"
#include "filename.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* ------------------------------------------------------ readers' helpers */

/* See fmt_impl.h. */
int64_t tl_max_columns(const TlReadOptions *opt)
{
    return opt && opt->max_columns > 0 ? opt->max_columns : TL_MAX_COLUMNS;
}

/* See fmt_impl.h.  Readers check before they hold the column, so a
 * header or a file of ever new keys cannot exhaust memory first. */
TlStatus tl_too_many_columns(TlError *err, const char *name, int64_t line, int64_t max)
{
    const char *s = max == 1 ? "" : "s";
    if (line <= 0) /* columns named by --schema, not by a line */
        return tl_error(err, TL_ERR_DATA, "%s: more than %lld column%s (--max-columns %lld)",
                        name, (long long)max, s, (long long)max);
    return tl_error(err, TL_ERR_DATA, "%s:%lld: more than %lld column%s (--max-columns %lld)",
                    name, (long long)line, (long long)max, s, (long long)max);
}

/* See fmt_impl.h. */
size_t tl_tail_line(const uint8_t *p, size_t from, size_t n)
{
    const uint8_t *lf, *cr;
    size_t a, b;
    if (n <= from) return from;
    lf = memrchr(p + from, '\n', n - from);
    cr = memrchr(p + from, '\r', n - from);
    a = lf ? (size_t)(lf - p) + 1 : from;
    b = cr ? (size_t)(cr - p) + 1 : from;
    return a > b ? a : b;
}

/* See fmt_impl.h. */
int64_t tl_count_lf(const uint8_t *s, size_t n)
{
    int64_t lines = 0;
    const uint8_t *e = s + n, *q;
    while (s < e && (q = memchr(s, '\n', (size_t)(e - s))) != NULL) {
        lines++;
        s = q + 1;
    }
    return lines;
}

/* ------------------------------------------------------------ readers */

static TlStatus shrink_first(const TlReader *r, TlStatus st, TlBatch **out,
                             TlSchema **widen, TlError *err);

/* See fmt_impl.h. */
TlStatus tl_reader_open_ready(TlOpenTry try, void *ctx, TlReader **out, TlError *err)
{
    size_t need = (size_t)4 << 20;
    for (;;) {
        bool sure;
        size_t next = 0;
        TlStatus st = try(ctx, need, &sure, &next, out, err);
        if (sure) return st;
        if (st == TL_OK) {
            tl_reader_close(*out);
            *out = NULL;
            need = need > SIZE_MAX / 4 ? SIZE_MAX : need * 4;
            if (next > 0 && need > next) need = next;
        } else {
            /* an error from part of the input may not be the whole's */
            if (st == TL_ERR_OOM) return st;
            need = SIZE_MAX;
        }
    }
}

/* Open a reader for path in the format the registry chooses
 * (tl_format_for_input, registry.c).  Compressed inputs are decompressed
 * by tl_input_load (input.c, compress.c).  See format.h. */
TlStatus tl_reader_open(const char *path, const TlReadOptions *opt,
                        TlTypeHints *hints, TlReader **out, TlError *err)
{
    static const TlReadOptions defaults = {0};
    const TlFormat *f;
    TlStatus st;
    *out = NULL;
    if (!opt) opt = &defaults;
    TL_TRY(tl_format_for_input(path, opt, &f, err));
    if (!f->open)
        return tl_error(err, TL_ERR_USAGE,
                        "cannot read %s: the %s format is not supported yet",
                        tl_quote_name(path).s, f->name);
    st = f->open(path, opt, hints, out, err);
    st = shrink_first(st == TL_OK ? *out : NULL, st, NULL, NULL, err);
    if (st != TL_OK && *out) {
        tl_reader_close(*out);
        *out = NULL;
    }
    if (st == TL_OK && opt->with_filename)
        st = tl_filename_reader_wrap(path, out, err); /* filename.c */
    if (st == TL_OK) { /* for tl_reader_locate (locate.c) */
        (*out)->loc_path = tl_strdup(path);
        (*out)->loc_opt = *opt;
        if (!(*out)->loc_path) {
            tl_reader_close(*out);
            *out = NULL;
            st = tl_error_oom(err);
        }
    }
    return st;
}

/* The reader's columns and their current types. */
const TlSchema *tl_reader_schema(const TlReader *r)
{
    return r->ops->schema(r);
}

/* See format.h. */
TlStatus tl_reader_more_columns(TlReader *r, bool *found, TlError *err)
{
    *found = false;
    if (!r->ops->more_columns) return TL_OK;
    return r->ops->more_columns(r, found, err);
}

/* See format.h. */
bool tl_reader_may_find_columns(const TlReader *r)
{
    return r->ops->more_columns != NULL;
}

/* Choose the columns later batches hold (see format.h). */
TlStatus tl_reader_project(TlReader *r, const int *cols, int n_cols, TlError *err)
{
    return r->ops->project(r, cols, n_cols, err);
}

/* A reader's error (st, in err) while its input streams: when the stream
 * fails anywhere, its error replaces st (an input decompressed whole
 * failed at open, before any data error or restart).  Waits for the
 * stream's end; decoders may call it (the decompressor is a thread of its
 * own, so this always ends).  *widen (may be NULL) is dropped then. */
static TlStatus stream_first(const TlReader *r, TlStatus st, TlSchema **widen,
                             TlError *err)
{
    TlError serr;
    if (st == TL_OK || !r->input || !tl_input_streaming(r->input)) return st;
    if (tl_input_finish(r->input, &serr) == TL_OK) return st;
    if (widen && *widen) {
        tl_schema_free(*widen);
        tl_free(*widen);
        *widen = NULL;
    }
    *err = serr;
    return serr.code;
}

/* The result st of reading r's input (a decode's batch *out and *widen;
 * either may be NULL): when a mapped input was found shorter than at open
 * (mapped.c: this reader's file by fstat, or any input by a fault or a short
 * read), that error replaces st and what was read is dropped, for the
 * bytes read may have been the zeros that stand in for the lost ones. */
static TlStatus shrink_first(const TlReader *r, TlStatus st, TlBatch **out,
                             TlSchema **widen, TlError *err)
{
    TlError serr;
    if ((!r || !r->input || tl_input_check(r->input, &serr) == TL_OK) &&
        tl_input_changed(&serr) == TL_OK)
        return st;
    if (out) {
        tl_batch_free(*out);
        *out = NULL;
    }
    if (widen && *widen) {
        tl_schema_free(*widen);
        tl_free(*widen);
        *widen = NULL;
    }
    *err = serr;
    return serr.code;
}

/* The test-only injection of the run's tuning (TALLY_TEST_SHRINK, ctx.h):
 * truncate r's file when morsel seq starts, as another process would. */
static void inject(const TlReader *r, int64_t seq)
{
    const TlCtx *c = r->loc_opt.ctx;
    int fd;
    if (!c || c->tuning.shrink_morsel != seq || !r->loc_path) return;
    fd = open(r->loc_path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return;
    if (ftruncate(fd, (off_t)c->tuning.shrink_to) != 0) { /* the test then fails */ }
    close(fd);
}

/* The next batch, owned by the caller, or *out = NULL at the end. */
TlStatus tl_reader_next(TlReader *r, TlBatch **out, TlError *err)
{
    TlStatus st = stream_first(r, r->ops->next(r, out, err), NULL, err);
    return shrink_first(r, st, out, NULL, err);
}

/* See format.h. */
uint64_t tl_reader_lead(const TlReader *r, uint64_t pos)
{
    size_t ready = 0;
    TlError e; /* not written: waiting for 0 bytes cannot fail */
    if (!r->input || !tl_input_streaming(r->input)) return UINT64_MAX;
    tl_input_wait(r->input, 0, &ready, &e);
    return ready > pos ? ready - pos : 0;
}

/* See format.h: morsel reading. */
bool tl_reader_can_split(const TlReader *r)
{
    return r->ops->split != NULL;
}

/* See format.h. */
TlStatus tl_reader_split(TlReader *r, TlMorsel *m, bool *got, TlError *err)
{
    TlStatus st = shrink_first(r, r->ops->split(r, m, got, err), NULL, NULL, err);
    if (st != TL_OK) *got = false;
    if (*got && r->input) tl_input_cut(r->input, m->begin, m->end);
    return st;
}

/* See format.h. */
void tl_reader_guess(TlReader *r)
{
    if (r->ops->guess) r->ops->guess(r);
}

/* See format.h. */
TlStatus tl_reader_resplit(TlReader *r, const TlMorsel *m, TlError *err)
{
    if (!r->ops->resplit)
        return tl_error(err, TL_ERR_DATA, "internal error: a morsel to split again "
                        "from a reader that does not guess");
    return r->ops->resplit(r, m, err);
}

/* See format.h. */
TlStatus tl_decoder_new(TlReader *r, TlDecoder **out, TlError *err)
{
    return r->ops->decoder_new(r, out, err);
}

/* See format.h. */
void tl_decoder_free(TlDecoder *d)
{
    if (!d) return;
    tl_pin_done(d->pin);
    d->pin = NULL;
    d->ops->decoder_free(d);
}

/* See format.h. */
TlStatus tl_reader_decode(TlReader *r, TlDecoder *d, const TlMorsel *m,
                          TlBatch **out, TlSchema **widen, TlError *err)
{
    TlStatus st;
    *widen = NULL;
    inject(r, m->seq);
    st = stream_first(r, r->ops->decode(r, d, m, out, widen, err), widen, err);
    st = shrink_first(r, st, out, widen, err);
    if (st == TL_OK && *out && r->input && !r->outer) {
        /* a stream's pages go back when the batch's views of them do */
        TlPin *pin = tl_input_pin(r->input, m->begin, m->end);
        tl_pin_views(pin, *out);
        tl_pin_done(pin);
    }
    return st;
}

/* See format.h. */
bool tl_reader_can_redecode(const TlReader *r)
{
    return r->ops->row_line && r->loc_path && (!r->input || !tl_input_is_stream(r->input));
}

/* See format.h. */
void tl_decoder_row_line(const TlReader *r, TlDecoder *d, int64_t row,
                         int64_t *line, char *name, size_t cap)
{
    *line = 0;
    if (cap) name[0] = 0;
    if (!tl_reader_can_redecode(r) || row < 0) return;
    *line = r->ops->row_line(r, d, row);
    if (cap) snprintf(name, cap, "%s", tl_escape_name(tl_input_name(r->loc_path)).s);
}

/* See format.h. */
int64_t tl_decoder_row_col(const TlReader *r, TlDecoder *d, int64_t row, int k,
                           int64_t *line)
{
    if (!tl_reader_can_redecode(r) || row < 0 || k < 0 || !r->ops->row_col) return 0;
    return r->ops->row_col(r, d, row, k, line);
}

/* See format.h. */
TlStatus tl_reader_widen(TlReader *r, const TlSchema *widen, TlError *err)
{
    return r->ops->widen(r, widen, err);
}

/* See format.h. */
void tl_reader_count(TlReader *r, int64_t rows, int64_t bytes)
{
    r->ops->count(r, rows, bytes);
}

/* See format.h: late materialization. */
bool tl_reader_can_late(const TlReader *r)
{
    return r->ops->decode_early && r->ops->decode_rest && r->ops->decode_end;
}

/* See format.h. */
TlStatus tl_reader_decode_early(TlReader *r, TlDecoder *d, const TlMorsel *m,
                                const bool *early, int n_early, int64_t few,
                                TlBatch **out, TlSchema **widen, TlError *err)
{
    *out = NULL;
    *widen = NULL;
    if (!tl_reader_can_late(r))
        return tl_error(err, TL_ERR_USAGE,
                        "internal error: this format cannot convert columns late");
    inject(r, m->seq);
    TlStatus st = stream_first(r, r->ops->decode_early(r, d, m, early, n_early, few,
                                                       out, widen, err),
                               widen, err);
    st = shrink_first(r, st, out, widen, err);
    tl_pin_done(d->pin);
    d->pin = NULL;
    if (st == TL_OK && *out && r->input && !r->outer) {
        /* the morsel is over at decode_rest or decode_end */
        d->pin = tl_input_pin(r->input, m->begin, m->end);
        tl_pin_views(d->pin, *out);
    }
    return st;
}

/* See format.h. */
TlStatus tl_reader_decode_rest(TlReader *r, TlDecoder *d, const TlBatch *early,
                               const uint32_t *sel, int64_t n, TlBatch **out,
                               TlSchema **widen, TlError *err)
{
    *out = NULL;
    *widen = NULL;
    if (!tl_reader_can_late(r))
        return tl_error(err, TL_ERR_USAGE,
                        "internal error: this format cannot convert columns late");
    TlStatus st = stream_first(r, r->ops->decode_rest(r, d, early, sel, n, out,
                                                      widen, err),
                               widen, err);
    st = shrink_first(r, st, out, widen, err);
    if (st == TL_OK && *out) tl_pin_views(d->pin, *out);
    tl_pin_done(d->pin);
    d->pin = NULL;
    return st;
}

/* See format.h. */
void tl_reader_decode_end(TlReader *r, TlDecoder *d)
{
    if (d) {
        tl_pin_done(d->pin);
        d->pin = NULL;
    }
    if (d && tl_reader_can_late(r)) r->ops->decode_end(r, d);
}

/* See format.h. */
bool tl_reader_types_final(const TlReader *r)
{
    return r->types_final;
}

/* See format.h. */
const TlCtx *tl_reader_ctx(const TlReader *r)
{
    return r->loc_opt.ctx;
}

/* Counters of what the reader did; valid until tl_reader_close. */
const TlReaderStats *tl_reader_stats(const TlReader *r)
{
    return &r->stats;
}

/* Free the reader and everything it owns (batches already handed out stay
 * valid: they hold their own references).  NULL-safe. */
void tl_reader_close(TlReader *r)
{
    if (!r) return;
    tl_free(r->loc_path);
    r->ops->close(r);
}

/* ------------------------------------------------------------ writers */

/* Open a writer of format (a --to name of the registry, case-insensitive;
 * NULL: CSV) on sink and write the header.  opt may be NULL (the format's
 * defaults: comma, header on).  The sink stays owned by the caller and
 * must outlive the writer. */
TlStatus tl_writer_open(TlSink *sink, const char *format, const TlSchema *schema,
                        const TlWriteOptions *opt, TlWriter **out, TlError *err)
{
    const TlFormat *f = tl_format_named(format ? format : "csv");
    char list[256];
    *out = NULL;
    if (!f)
        return tl_error(err, TL_ERR_USAGE, "--to: unknown format %s (tally writes %s)",
                        tl_quote_name(format).s,
                        tl_format_list(list, sizeof list, TL_FORMATS_WRITE, ", "));
    if (!f->write)
        return tl_error(err, TL_ERR_USAGE,
                        "writing the %s format is not supported yet", f->name);
    return f->write(sink, schema, opt, out, err);
}

/* Write one batch (columns in the schema's order). */
TlStatus tl_writer_write(TlWriter *w, const TlBatch *b, TlError *err)
{
    return w->ops->write(w, b, err);
}

/* Flush what the writer buffers into its sink (the sink still needs
 * tl_sink_commit). */
TlStatus tl_writer_finish(TlWriter *w, TlError *err)
{
    return w->ops->finish(w, err);
}

/* Free the writer (not its sink).  NULL-safe. */
void tl_writer_free(TlWriter *w)
{
    if (w) w->ops->free(w);
}
