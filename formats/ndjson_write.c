/*
 * ndjson_write.c -- the NDJSON writer: one JSON object per row.
 *
 * Spelling: keys in column order, each row `{"a":1,"b":"x"}` and a newline.
 *   null              null
 *   bool              true / false
 *   int64             digits (tl_fmt_i64)
 *   float64           shortest round-trip digits (tl_fmt_f64: 71.0, 1e-05);
 *                     inf, -inf and nan, which JSON cannot hold, are null and
 *                     counted in a warning on standard error
 *   date, timestamp   strings ("2024-01-31", "2024-01-31 12:00:00.5")
 *   string            RFC 8259 escaping: " \ and the control characters
 *                     (\b \f \n \r \t, others \u00XX); valid UTF-8 passes
 *                     through, each invalid sequence becomes U+FFFD and the
 *                     strings so repaired are counted in a warning
 *
 * The column keys, already quoted and escaped with their ':' (and the ','
 * before them), are built once at open.  A batch is written in chunks of
 * CHUNK rows column by column first, as in csv_write.c, so the type is
 * decided once per column: each value becomes a piece {pointer, length,
 * kind}, then the rows are assembled from the pieces into `out`, which goes
 * to the sink whenever it fills.  Warnings are printed by finish, so a run
 * that restarts (and throws its output away) warns once.
 */
#include "fmt_impl.h"
#include "../lib/core/text.h"

#include <stdio.h>

#define CHUNK 1024
#define OUT_SIZE ((size_t)256 << 10)

enum { K_PLAIN = 0, K_NULL = 1, K_STRING = 2, K_QUOTED = 3 };

typedef struct Piece {
    const uint8_t *p;
    uint32_t len;
    uint32_t kind;
} Piece;

typedef struct NdjsonWriter {
    TlWriter base;
    int n_cols;
    uint8_t **keys;          /* per column: `{"name":` or `,"name":` */
    size_t *key_len;
    Piece *pieces;           /* n_cols * CHUNK */
    uint8_t *text;           /* formatted values of one chunk */
    uint8_t *out;
    size_t out_len, out_cap;
    int64_t n_nonfinite;     /* inf/nan written as null */
    int64_t n_bad_utf8;      /* strings with invalid UTF-8 repaired */
} NdjsonWriter;

static const char hex[] = "0123456789abcdef";

/* Length of the valid UTF-8 sequence at s[0..n) (n >= 1, s[0] >= 0x80), or
 * 0 when it is invalid (overlong, surrogate, beyond U+10FFFF, truncated). */
static inline size_t utf8_seq(const uint8_t *s, size_t n)
{
    uint8_t c = s[0];
    if (c >= 0xC2 && c <= 0xDF) {
        return n >= 2 && (s[1] & 0xC0) == 0x80 ? 2 : 0;
    }
    if (c >= 0xE0 && c <= 0xEF) {
        if (n < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80) return 0;
        if (c == 0xE0 && s[1] < 0xA0) return 0;  /* overlong */
        if (c == 0xED && s[1] >= 0xA0) return 0; /* surrogate */
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (n < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 ||
            (s[3] & 0xC0) != 0x80)
            return 0;
        if (c == 0xF0 && s[1] < 0x90) return 0;  /* overlong */
        if (c == 0xF4 && s[1] >= 0x90) return 0; /* > U+10FFFF */
        return 4;
    }
    return 0;
}

/* Write s[0..n) as a JSON string (with quotes) at o, which has room for
 * 6 * n + 2 bytes.  Returns the end; *repaired is set when an invalid UTF-8
 * sequence was replaced. */
static uint8_t *put_json_string(uint8_t *o, const uint8_t *s, size_t n,
                                bool *repaired)
{
    size_t i = 0;
    *o++ = '"';
    while (i < n) {
        size_t start = i;
        while (i < n && s[i] >= 0x20 && s[i] != '"' && s[i] != '\\' && s[i] < 0x80) i++;
        memcpy(o, s + start, i - start);
        o += i - start;
        if (i >= n) break;
        uint8_t c = s[i];
        if (c >= 0x80) {
            size_t k = utf8_seq(s + i, n - i);
            if (k) {
                memcpy(o, s + i, k);
                o += k;
                i += k;
            } else {
                *o++ = 0xEF;
                *o++ = 0xBF;
                *o++ = 0xBD;
                *repaired = true;
                i++;
            }
            continue;
        }
        *o++ = '\\';
        switch (c) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '\b': *o++ = 'b'; break;
        case '\f': *o++ = 'f'; break;
        case '\n': *o++ = 'n'; break;
        case '\r': *o++ = 'r'; break;
        case '\t': *o++ = 't'; break;
        default:
            *o++ = 'u';
            *o++ = '0';
            *o++ = '0';
            *o++ = (uint8_t)hex[c >> 4];
            *o++ = (uint8_t)hex[c & 15];
            break;
        }
        i++;
    }
    *o++ = '"';
    return o;
}

static TlStatus flush_out(NdjsonWriter *w, TlError *err)
{
    if (w->out_len == 0) return TL_OK;
    TL_TRY(tl_sink_write(w->base.sink, w->out, w->out_len, err));
    w->out_len = 0;
    return TL_OK;
}

/* Make room for need more bytes in out. */
static TlStatus out_reserve(NdjsonWriter *w, size_t need, TlError *err)
{
    if (w->out_len + need <= w->out_cap) return TL_OK;
    TL_TRY(flush_out(w, err));
    if (need > w->out_cap) {
        uint8_t *g = tl_realloc(w->out, need);
        if (!g) return tl_error_oom(err);
        w->out = g;
        w->out_cap = need;
    }
    return TL_OK;
}

/* Pieces for rows [off, off+n) of array a into pc[0..n). */
static void column_pieces(NdjsonWriter *w, const TlArray *a, int64_t off,
                          int64_t n, Piece *pc, uint8_t **text)
{
    const bool nulls = a->type == TL_TNULL || a->null_count > 0;
    uint8_t *t = *text;
    switch (a->type) {
    case TL_TSTRING: {
        const TlView *v = tl_array_views(a) + off;
        for (int64_t i = 0; i < n; i++) {
            if (nulls && !tl_array_valid(a, off + i)) {
                pc[i] = (Piece){NULL, 0, K_NULL};
                continue;
            }
            pc[i] = (Piece){tl_view_ptr(&v[i], a->data), tl_view_len(v[i]), K_STRING};
        }
        break;
    }
    case TL_TBOOL:
        for (int64_t i = 0; i < n; i++) {
            if (nulls && !tl_array_valid(a, off + i)) {
                pc[i] = (Piece){NULL, 0, K_NULL};
                continue;
            }
            pc[i] = tl_array_bool(a, off + i)
                        ? (Piece){(const uint8_t *)"true", 4, K_PLAIN}
                        : (Piece){(const uint8_t *)"false", 5, K_PLAIN};
        }
        break;
    case TL_TFLOAT64: {
        const double *d = tl_array_f64(a) + off;
        for (int64_t i = 0; i < n; i++) {
            size_t len;
            if (nulls && !tl_array_valid(a, off + i)) {
                pc[i] = (Piece){NULL, 0, K_NULL};
                continue;
            }
            if (!__builtin_isfinite(d[i])) {
                w->n_nonfinite++;
                pc[i] = (Piece){NULL, 0, K_NULL};
                continue;
            }
            len = tl_fmt_f64(d[i], (char *)t);
            pc[i] = (Piece){t, (uint32_t)len, K_PLAIN};
            t += len;
        }
        break;
    }
#define FORMAT_LOOP(GET, FMT, KIND)                                            \
    for (int64_t i = 0; i < n; i++) {                                          \
        size_t len;                                                            \
        if (nulls && !tl_array_valid(a, off + i)) {                            \
            pc[i] = (Piece){NULL, 0, K_NULL};                                  \
            continue;                                                          \
        }                                                                      \
        len = FMT(GET(a)[off + i], (char *)t);                                 \
        pc[i] = (Piece){t, (uint32_t)len, KIND};                               \
        t += len;                                                              \
    }
    case TL_TINT64:
        FORMAT_LOOP(tl_array_i64, tl_fmt_i64, K_PLAIN)
        break;
    case TL_TDATE:
        FORMAT_LOOP(tl_array_i32, tl_fmt_date, K_QUOTED)
        break;
    case TL_TTIMESTAMP:
        FORMAT_LOOP(tl_array_i64, tl_fmt_timestamp, K_QUOTED)
        break;
#undef FORMAT_LOOP
    default:
        for (int64_t i = 0; i < n; i++) pc[i] = (Piece){NULL, 0, K_NULL};
        break;
    }
    *text = t;
}

/* Assemble rows [0, n) of the pieces as lines. */
static TlStatus emit_rows(NdjsonWriter *w, int64_t n, TlError *err)
{
    for (int64_t row = 0; row < n; row++) {
        if (w->n_cols == 0) {
            TL_TRY(out_reserve(w, 3, err));
            memcpy(w->out + w->out_len, "{}\n", 3);
            w->out_len += 3;
            continue;
        }
        for (int c = 0; c < w->n_cols; c++) {
            const Piece *pc = &w->pieces[(size_t)c * CHUNK + row];
            size_t need = w->key_len[c] + (size_t)pc->len * 6 + 8;
            uint8_t *o;
            if (w->out_len + need > w->out_cap) TL_TRY(out_reserve(w, need, err));
            o = w->out + w->out_len;
            memcpy(o, w->keys[c], w->key_len[c]);
            o += w->key_len[c];
            switch (pc->kind) {
            case K_PLAIN:
                memcpy(o, pc->p, pc->len);
                o += pc->len;
                break;
            case K_NULL:
                memcpy(o, "null", 4);
                o += 4;
                break;
            case K_QUOTED:
                *o++ = '"';
                memcpy(o, pc->p, pc->len);
                o += pc->len;
                *o++ = '"';
                break;
            default: {
                bool repaired = false;
                o = put_json_string(o, pc->p, pc->len, &repaired);
                w->n_bad_utf8 += repaired;
                break;
            }
            }
            if (c + 1 == w->n_cols) {
                *o++ = '}';
                *o++ = '\n';
            }
            w->out_len = (size_t)(o - w->out);
        }
    }
    return TL_OK;
}

static TlStatus nd_write(TlWriter *base, const TlBatch *b, TlError *err)
{
    NdjsonWriter *w = (NdjsonWriter *)base;
    if (b->n_cols != w->n_cols)
        return tl_error(err, TL_ERR_DATA, "internal: writer expected %d columns, got %d",
                        w->n_cols, b->n_cols);
    for (int64_t off = 0; off < b->n_rows; off += CHUNK) {
        int64_t n = b->n_rows - off < CHUNK ? b->n_rows - off : CHUNK;
        uint8_t *t = w->text;
        for (int c = 0; c < w->n_cols; c++)
            column_pieces(w, b->cols[c], off, n, &w->pieces[(size_t)c * CHUNK], &t);
        TL_TRY(emit_rows(w, n, err));
    }
    return TL_OK;
}

static TlStatus nd_finish(TlWriter *base, TlError *err)
{
    NdjsonWriter *w = (NdjsonWriter *)base;
    TL_TRY(flush_out(w, err));
    if (w->n_nonfinite > 0)
        fprintf(stderr, "tally: warning: %lld inf/nan value%s written as null "
                "(JSON cannot hold them)\n", (long long)w->n_nonfinite,
                w->n_nonfinite == 1 ? "" : "s");
    if (w->n_bad_utf8 > 0)
        fprintf(stderr, "tally: warning: %lld string%s held invalid UTF-8, "
                "replaced with U+FFFD\n", (long long)w->n_bad_utf8,
                w->n_bad_utf8 == 1 ? "" : "s");
    w->n_nonfinite = w->n_bad_utf8 = 0;
    return TL_OK;
}

static void nd_free(TlWriter *base)
{
    NdjsonWriter *w = (NdjsonWriter *)base;
    if (w->keys)
        for (int c = 0; c < w->n_cols; c++) tl_free(w->keys[c]);
    tl_free(w->keys);
    tl_free(w->key_len);
    tl_free(w->pieces);
    tl_free(w->text);
    tl_free(w->out);
    tl_free(w);
}

static const TlWriterOps ndjson_writer_ops = {nd_write, nd_finish, nd_free};

/* Open an NDJSON writer on sink for columns of schema (see the top of this
 * file).  Nothing is written until the first batch.  The sink is borrowed and
 * must outlive the writer; schema is only read here. */
TlStatus tl_ndjson_writer_open(TlSink *sink, const TlSchema *schema,
                               TlWriter **out, TlError *err)
{
    NdjsonWriter *w;
    size_t n_cols = (size_t)schema->n_fields;
    *out = NULL;
    w = tl_calloc(1, sizeof *w);
    if (!w) return tl_error_oom(err);
    w->base.ops = &ndjson_writer_ops;
    w->base.sink = sink;
    w->n_cols = schema->n_fields;
    w->keys = tl_calloc(n_cols + 1, sizeof *w->keys);
    w->key_len = tl_calloc(n_cols + 1, sizeof *w->key_len);
    w->pieces = tl_malloc((n_cols + 1) * CHUNK * sizeof *w->pieces);
    w->text = tl_malloc((n_cols + 1) * CHUNK * TL_FMT_MAX);
    w->out_cap = OUT_SIZE;
    w->out = tl_malloc(w->out_cap);
    if (!w->keys || !w->key_len || !w->pieces || !w->text || !w->out) goto oom;
    for (int c = 0; c < w->n_cols; c++) {
        const char *name = schema->fields[c].name;
        size_t len = strlen(name);
        bool repaired = false;
        uint8_t *k = tl_malloc(len * 6 + 4), *o;
        if (!k) goto oom;
        w->keys[c] = k;
        o = k;
        *o++ = c == 0 ? '{' : ',';
        o = put_json_string(o, (const uint8_t *)name, len, &repaired);
        *o++ = ':';
        w->key_len[c] = (size_t)(o - k);
    }
    *out = &w->base;
    return TL_OK;
oom:
    nd_free(&w->base);
    return tl_error_oom(err);
}
