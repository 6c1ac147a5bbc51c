/*
 * fuzz_ndjson.c -- libFuzzer target for the NDJSON reader and writer.
 *
 * Input: the whole input is the file, read with --from ndjson as the driver
 * reads it: open, read every batch of every column, and on TL_ERR_RESTART
 * reopen with the widened hints.
 *
 * Invariants beyond "no crash": the status is TL_OK or TL_ERR_DATA (with a
 * message naming the file).  On "plain" inputs (ASCII, LF line ends, no
 * surrogate \u escapes, nesting at most 200) a simple reference validator
 * (below: recursive descent over RFC 8259, each non-blank line one object)
 * decides the outcome: the reader must accept exactly what it accepts.  And
 * whenever the reader accepts an input, writing what it read as NDJSON and
 * reading that back gives the same column names and values (non-finite
 * floats, which the writer turns into null, compare as null).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../formats/format.h"
#include "../../formats/infer.h"
#include "../../lib/core/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ------------------------------------------------------ reference parser */

typedef struct Ref {
    const uint8_t *p;
    size_t i, n;
    bool plain;
} Ref;

static void ws(Ref *r)
{
    while (r->i < r->n && (r->p[r->i] == ' ' || r->p[r->i] == '\t')) r->i++;
}

static bool lit(Ref *r, const char *s)
{
    size_t k = strlen(s);
    if (r->n - r->i < k || memcmp(r->p + r->i, s, k) != 0) return false;
    r->i += k;
    return true;
}

static bool digit(Ref *r)
{
    return r->i < r->n && r->p[r->i] >= '0' && r->p[r->i] <= '9';
}

static bool string(Ref *r)
{
    if (!lit(r, "\"")) return false;
    for (;;) {
        if (r->i >= r->n) return false;
        uint8_t c = r->p[r->i++];
        if (c == '"') return true;
        if (c < 0x20) return false;
        if (c != '\\') continue;
        if (r->i >= r->n) return false;
        c = r->p[r->i++];
        if (strchr("\"\\/bfnrt", c) && c) continue;
        if (c != 'u' || r->n - r->i < 4) return false;
        for (int k = 0; k < 4; k++)
            if (!strchr("0123456789abcdefABCDEF", r->p[r->i + k]) || !r->p[r->i + k])
                return false;
        if ((r->p[r->i] == 'd' || r->p[r->i] == 'D') && strchr("89abcdefABCDEF", r->p[r->i + 1]))
            r->plain = false; /* a surrogate: the reader's rules, not JSON's */
        r->i += 4;
    }
}

static bool number(Ref *r)
{
    lit(r, "-");
    if (lit(r, "0")) {
    } else if (digit(r) && r->p[r->i] != '0') {
        while (digit(r)) r->i++;
    } else {
        return false;
    }
    if (lit(r, ".")) {
        if (!digit(r)) return false;
        while (digit(r)) r->i++;
    }
    if (lit(r, "e") || lit(r, "E")) {
        if (!lit(r, "+")) lit(r, "-");
        if (!digit(r)) return false;
        while (digit(r)) r->i++;
    }
    return true;
}

static bool value(Ref *r, int depth)
{
    if (depth > 200) {
        r->plain = false;
        return false;
    }
    ws(r);
    if (r->i >= r->n) return false;
    switch (r->p[r->i]) {
    case '{':
        r->i++;
        ws(r);
        if (lit(r, "}")) return true;
        for (;;) {
            ws(r);
            if (!string(r)) return false;
            ws(r);
            if (!lit(r, ":")) return false;
            if (!value(r, depth + 1)) return false;
            ws(r);
            if (lit(r, ",")) continue;
            return lit(r, "}");
        }
    case '[':
        r->i++;
        ws(r);
        if (lit(r, "]")) return true;
        for (;;) {
            if (!value(r, depth + 1)) return false;
            ws(r);
            if (lit(r, ",")) continue;
            return lit(r, "]");
        }
    case '"':
        return string(r);
    case 't': return lit(r, "true");
    case 'f': return lit(r, "false");
    case 'n': return lit(r, "null");
    default: return number(r);
    }
}

/* Whether every non-blank line is one JSON object; *plain false when the
 * input is outside what the reference decides. */
static bool reference(const uint8_t *p, size_t n, bool *plain)
{
    size_t s = 0;
    *plain = true;
    for (size_t i = 0; i < n; i++)
        if (p[i] >= 0x80 || p[i] == '\r') *plain = false;
    if (!*plain) return false;
    while (s < n) {
        const uint8_t *nl = memchr(p + s, '\n', n - s);
        size_t e = nl ? (size_t)(nl - p) : n;
        Ref r = {p + s, 0, e - s, true};
        ws(&r);
        if (r.i < r.n) {
            bool ok = r.p[r.i] == '{' && value(&r, 0);
            if (ok) ws(&r);
            if (!r.plain) {
                *plain = false;
                return false;
            }
            if (!ok || r.i != r.n) return false;
        }
        s = e + 1;
    }
    return true;
}

/* --------------------------------------------------------------- running */

typedef struct Text {
    char *s;
    size_t len, cap;
} Text;

static void put(Text *t, const void *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->s = realloc(t->s, t->cap);
        if (!t->s) abort();
    }
    memcpy(t->s + t->len, s, n);
    t->len += n;
}

/* Render element i of a: a tag and the value's bytes. */
static void cell(Text *t, const TlArray *a, int64_t i)
{
    char buf[TL_FMT_MAX];
    size_t n = 0;
    if (!tl_array_valid(a, i) ||
        (a->type == TL_TFLOAT64 && !__builtin_isfinite(tl_array_f64(a)[i]))) {
        put(t, "~|", 2);
        return;
    }
    switch (a->type) {
    case TL_TBOOL: n = (size_t)sprintf(buf, "b%d", tl_array_bool(a, i)); break;
    case TL_TINT64: buf[0] = 'i'; n = 1 + tl_fmt_i64(tl_array_i64(a)[i], buf + 1); break;
    case TL_TFLOAT64: buf[0] = 'f'; n = 1 + tl_fmt_f64(tl_array_f64(a)[i], buf + 1); break;
    case TL_TSTRING: {
        const TlView *v = &tl_array_views(a)[i];
        n = (size_t)sprintf(buf, "s%u:", (unsigned)tl_view_len(*v));
        put(t, buf, n);
        put(t, tl_view_ptr(v, a->data), tl_view_len(*v));
        put(t, "|", 1);
        return;
    }
    default: n = (size_t)sprintf(buf, "?%d", (int)a->type); break;
    }
    put(t, buf, n);
    put(t, "|", 1);
}

/* Read path (as NDJSON) fully, rendering names and rows into *out (may be
 * NULL) and writing NDJSON to copy_to (may be NULL). */
static TlStatus run(const char *path, Text *out, const char *copy_to, TlError *err)
{
    TlReadOptions ro;
    TlTypeHints hints;
    TlStatus st;
    TlSink *sink = NULL;
    memset(&ro, 0, sizeof ro);
    memset(&hints, 0, sizeof hints);
    ro.from = "ndjson";
    st = copy_to ? tl_sink_open(NULL, copy_to, &sink, err) : TL_OK;
    for (int attempt = 0; st == TL_OK && attempt < 64; attempt++) {
        TlReader *r = NULL;
        TlWriter *w = NULL;
        if (out) out->len = 0;
        st = tl_reader_open(path, &ro, &hints, &r, err);
        if (st == TL_OK) {
            const TlSchema *s = tl_reader_schema(r);
            if (out)
                for (int c = 0; c < s->n_fields; c++) {
                    put(out, s->fields[c].name, strlen(s->fields[c].name));
                    put(out, "\n", 1);
                }
            if (sink) st = tl_writer_open(sink, "ndjson", s, NULL, &w, err);
            TlBatch *b;
            while (st == TL_OK && (st = tl_reader_next(r, &b, err)) == TL_OK && b) {
                if (b->n_cols != s->n_fields) abort();
                if (out)
                    for (int64_t i = 0; i < b->n_rows; i++) {
                        for (int c = 0; c < b->n_cols; c++) cell(out, b->cols[c], i);
                        put(out, "\n", 1);
                    }
                if (w) st = tl_writer_write(w, b, err);
                tl_batch_free(b);
            }
            if (st == TL_OK && w) st = tl_writer_finish(w, err);
        }
        tl_writer_free(w);
        tl_reader_close(r);
        if (st != TL_ERR_RESTART) break;
        if (sink) st = tl_sink_reset(sink, err);
        if (st == TL_OK) st = TL_ERR_RESTART;
    }
    if (st == TL_OK && sink) st = tl_sink_commit(sink, err);
    tl_sink_close(sink);
    tl_hints_free(&hints);
    return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[] = "/tmp/tally-fuzz-ndjson-XXXXXX";
    char copy[64];
    int fd = mkstemp(path);
    TlError err;
    Text first = {0}, second = {0};
    if (fd < 0) return 0;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        unlink(path);
        return 0;
    }
    close(fd);
    snprintf(copy, sizeof copy, "%s.copy.ndjson", path);

    TlStatus st = run(path, &first, copy, &err);
    if (st != TL_OK && st != TL_ERR_DATA) {
        fprintf(stderr, "unexpected status %d: %s\n", st, err.msg);
        abort();
    }
    if (st == TL_ERR_DATA && strstr(err.msg, path) == NULL) {
        fprintf(stderr, "error does not name the file: %s\n", err.msg);
        abort();
    }
    bool plain;
    bool ok = reference(data, size, &plain);
    if (plain && ok != (st == TL_OK)) {
        fprintf(stderr, "reference %s, reader %s: %s\n", ok ? "accepts" : "rejects",
                st == TL_OK ? "accepts" : "rejects", st == TL_OK ? "" : err.msg);
        abort();
    }
    if (st == TL_OK) {
        TlStatus st2 = run(copy, &second, NULL, &err);
        if (st2 != TL_OK) {
            fprintf(stderr, "reading the written NDJSON failed: %s\n", err.msg);
            abort();
        }
        if (first.len != second.len ||
            (first.len > 0 && memcmp(first.s, second.s, first.len) != 0)) {
            fprintf(stderr, "round trip differs:\n%.*s\n---\n%.*s\n", (int)first.len,
                    first.s, (int)second.len, second.s);
            abort();
        }
    }
    unlink(copy);
    unlink(path);
    free(first.s);
    free(second.s);
    return 0;
}
