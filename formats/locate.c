/*
 * locate.c -- find the physical line of a record, for error messages.
 *
 * A check above the reader (the group-by's --sorted check) knows a bad row
 * only by its number in the stream of records; the message should name the
 * file and line like every other data error.  Lines and records differ (a
 * quoted CSV field may hold line ends; empty lines are skipped), and only
 * the reader knows how, so this asks the reader itself: it reopens the
 * input as tl_reader_open did (loc_path, loc_opt, no type hints, no
 * filename column), with one record per morsel (TlReadOptions.morsel_rows),
 * projects no column, and walks the morsels in order.  Each morsel's line
 * is where its record starts; decoding it (no column converted) says
 * whether it held a record or only an empty line.
 * So records are counted exactly as the scan counted them, by the same
 * code.
 *
 * Serial and slow-ish (a decode call per record); it runs once, on an
 * error path.
 */
#include "fmt_impl.h"

/* See format.h. */
TlStatus tl_reader_locate(const TlReader *r, int64_t rec, int64_t *line,
                          int64_t *n_records, const char **name, TlError *err)
{
    *line = 0;
    *n_records = 0;
    *name = NULL;
    if (!r || !r->loc_path)
        return tl_error(err, TL_ERR_USAGE, "internal: this input cannot be "
                        "located");
    return tl_input_locate(r->loc_path, &r->loc_opt, rec, line, n_records, name, err);
}

/* See format.h. */
TlStatus tl_input_locate(const char *path, const TlReadOptions *opt, int64_t rec,
                         int64_t *line, int64_t *n_records, const char **name,
                         TlError *err)
{
    TlReadOptions o = *opt;
    TlReader *x = NULL;
    TlDecoder *d = NULL;
    TlStatus st;
    int64_t count = 0;

    *line = 0;
    *n_records = 0;
    *name = tl_input_name(path);
    o.with_filename = false;
    o.morsel_rows = 1;
    st = tl_reader_open(path, &o, NULL, &x, err);
    if (st != TL_OK) goto done;
    if (!tl_reader_can_split(x)) {
        st = tl_error(err, TL_ERR_USAGE, "internal: this input cannot be "
                      "located");
        goto done;
    }
    st = tl_reader_project(x, NULL, 0, err);
    if (st == TL_OK) st = tl_decoder_new(x, &d, err);
    while (st == TL_OK) {
        TlMorsel m;
        bool got = false;
        TlBatch *b = NULL;
        TlSchema *widen = NULL;
        st = tl_reader_split(x, &m, &got, err);
        if (st != TL_OK || !got) break;
        st = tl_reader_decode(x, d, &m, &b, &widen, err);
        if (widen) {
            tl_schema_free(widen);
            tl_free(widen);
        }
        int64_t rows = b ? b->n_rows : 0;
        tl_batch_free(b);
        if (st != TL_OK) break;
        if (count + rows > rec) {
            *line = m.line;
            break;
        }
        count += rows;
    }
    if (st == TL_OK && *line == 0) *n_records = count;
done:
    tl_decoder_free(d);
    tl_reader_close(x);
    return st;
}
