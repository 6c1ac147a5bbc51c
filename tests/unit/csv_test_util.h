/*
 * csv_test_util.h -- helpers shared by the CSV reader/writer/sink tests:
 * a scratch folder, writing small files, and rendering what a reader
 * returns as text ("a:int64,b:string\n1|x\n~|''\n"; ~ is null, '' the
 * empty string) so a test compares one string.
 */
#ifndef CSV_TEST_UTIL_H
#define CSV_TEST_UTIL_H

#include "../../formats/format.h"
#include "../../lib/core/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char tu_dir[256];

static inline void tu_init(void)
{
    snprintf(tu_dir, sizeof tu_dir, "/tmp/tally-test-XXXXXX");
    if (!mkdtemp(tu_dir)) {
        perror("mkdtemp");
        exit(1);
    }
}

static inline void tu_cleanup(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tu_dir);
    if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
}

/* Write data (n bytes, or strlen when n < 0) to tu_dir/name; returns the
 * path in a static buffer (one of 8 rotating). */
static inline const char *tu_file(const char *name, const char *data, long n)
{
    static char paths[8][512];
    static int next;
    char *p = paths[next++ % 8];
    FILE *f;
    snprintf(p, 512, "%s/%s", tu_dir, name);
    f = fopen(p, "wb");
    if (!f) {
        perror(p);
        exit(1);
    }
    fwrite(data, 1, n < 0 ? strlen(data) : (size_t)n, f);
    fclose(f);
    return p;
}

/* Slurp a file into buf (NUL-terminated); returns length or -1. */
static inline long tu_slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n;
    if (!f) return -1;
    n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
    return (long)n;
}

static inline void tu_append(char *out, size_t cap, const char *s, size_t n)
{
    size_t have = strlen(out);
    if (have + n + 1 > cap) n = cap - have - 1;
    memcpy(out + have, s, n);
    out[have + n] = '\0';
}

static inline void tu_cell(char *out, size_t cap, const TlArray *a, int64_t i)
{
    char buf[TL_FMT_MAX];
    size_t n = 0;
    if (!tl_array_valid(a, i)) {
        tu_append(out, cap, "~", 1);
        return;
    }
    switch (a->type) {
    case TL_TBOOL: n = (size_t)sprintf(buf, "%s", tl_array_bool(a, i) ? "T" : "F"); break;
    case TL_TINT64: n = tl_fmt_i64(tl_array_i64(a)[i], buf); break;
    case TL_TFLOAT64: n = tl_fmt_f64(tl_array_f64(a)[i], buf); break;
    case TL_TDATE: n = tl_fmt_date(tl_array_i32(a)[i], buf); break;
    case TL_TTIMESTAMP: n = tl_fmt_timestamp(tl_array_i64(a)[i], buf); break;
    case TL_TSTRING: {
        const TlView *v = &tl_array_views(a)[i];
        if (tl_view_len(*v) == 0) tu_append(out, cap, "''", 2);
        else tu_append(out, cap, (const char *)tl_view_ptr(v, a->data), tl_view_len(*v));
        return;
    }
    default: break;
    }
    tu_append(out, cap, buf, n);
}

static inline void tu_schema(char *out, size_t cap, const TlSchema *s)
{
    for (int c = 0; c < s->n_fields; c++) {
        if (c) tu_append(out, cap, ",", 1);
        tu_append(out, cap, s->fields[c].name, strlen(s->fields[c].name));
        tu_append(out, cap, ":", 1);
        tu_append(out, cap, tl_type_name(s->fields[c].type),
                  strlen(tl_type_name(s->fields[c].type)));
    }
    tu_append(out, cap, "\n", 1);
}

/* Append a batch's rows to out. */
static inline void tu_batch(char *out, size_t cap, const TlBatch *b)
{
    for (int64_t r = 0; r < b->n_rows; r++) {
        for (int c = 0; c < b->n_cols; c++) {
            if (c) tu_append(out, cap, "|", 1);
            tu_cell(out, cap, b->cols[c], r);
        }
        tu_append(out, cap, "\n", 1);
    }
}

/* Read the whole input: out gets the schema line then the rows.  Returns
 * the status; err holds the message. */
static inline TlStatus tu_read(const char *path, const TlReadOptions *opt, TlTypeHints *hints,
                        char *out, size_t cap, TlError *err)
{
    TlReader *r = NULL;
    TlStatus st;
    TlReadOptions dflt = {0};
    out[0] = '\0';
    err->code = 0;
    err->msg[0] = '\0';
    st = tl_reader_open(path, opt ? opt : &dflt, hints, &r, err);
    if (st != TL_OK) return st;
    tu_schema(out, cap, tl_reader_schema(r));
    for (;;) {
        TlBatch *b = NULL;
        st = tl_reader_next(r, &b, err);
        if (st != TL_OK || !b) break;
        tu_batch(out, cap, b);
        tl_batch_free(b);
    }
    tl_reader_close(r);
    return st;
}

#endif
