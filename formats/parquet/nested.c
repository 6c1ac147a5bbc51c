/*
 * nested.c -- a nested column (a list, a map, a struct at the 8th part of
 * a name) read as the JSON text of each row's value, as the NDJSON reader
 * keeps arrays: [1,2], {"k":"v"}, [{"a":1,"b":null}].
 *
 * The values come from the primitive leaves under the column (schema.c
 * made its shape, PqNode, and its sub-leaves), each a stream of entries:
 * a repetition level (0: a new row; r: another element of the list whose
 * elements repeat at level r), a definition level (how far down the path
 * the entry is defined), and, when defined all the way, a value.  A row is
 * rebuilt by walking the shape with one cursor per leaf (Dremel's record
 * assembly, recursively):
 *
 *   node absent (its first leaf's definition level below the node's):
 *                  null, or [] / {} for a list or map present without
 *                  elements; every leaf under it has one entry for that
 *   leaf           its value (null below its own level)
 *   struct         {"field":value,...} in schema order
 *   list           elements while the first leaf's next entry repeats at
 *                  the list's level; a map: "key":value pairs
 *
 * Every element takes at least one entry of the first leaf, so a walk
 * ends; a leaf whose entries run out, a row that does not start at
 * repetition level 0 and entries left over at the end of the row group are
 * errors naming the column, so levels that disagree between leaves cannot
 * make a wrong value.  Entries are read a window at a time (pq_col_entries:
 * at most WINDOW per leaf), so memory stays bounded whatever the lists
 * hold.
 *
 * Spelling: numbers as tally writes them (floats as the shortest round
 * trip; inf and nan, which JSON cannot hold, as null, as the NDJSON writer
 * does), DECIMALs wider than 15 digits as their exact digits, booleans
 * true/false, every other value a JSON string (dates, timestamps, times,
 * UUIDs, text escaped as the NDJSON writer escapes it); map keys always
 * strings.
 */
#include "parquet.h"
#include "../json_text.h"
#include "../../lib/core/text.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#define WINDOW 4096
/* The longest JSON text one value may have: a few kilobytes of a
 * well-compressed file can hold gigabytes of text (parquet-testing's
 * large_string_map), and one cell of that size helps nobody. */
#define MAX_TEXT ((size_t)256 << 20)

typedef struct Cursor {
    PqCol *col;
    PqEntries e;        /* the window */
    int64_t pos;        /* next entry in the window */
    int64_t vi;         /* next value in the window */
    bool end;           /* the chunk has no more entries */
} Cursor;

struct PqNest {
    const PqLeaf *leaf;
    const char *name;       /* the file, escaped */
    const char *col_name;
    int rg;
    Cursor *cur;            /* one per sub-leaf */
    uint8_t *text;          /* the row's JSON text */
    size_t len, cap;
    TlError *err;
};

static TlStatus fail(PqNest *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static TlStatus fail(PqNest *n, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tl_error(n->err, TL_ERR_DATA, "%s: column %s, row group %d: %s", n->name,
                    tl_quote_name(n->col_name).s, n->rg, msg);
}

TlStatus pq_nest_open(const PqChunkRef *ref, const PqColumnChunk *chunks, PqNest **out,
                      TlError *err)
{
    const PqLeaf *l = ref->leaf;
    PqNest *n = tl_calloc(1, sizeof *n);
    *out = NULL;
    if (!n) return tl_error_oom(err);
    n->leaf = l;
    n->name = ref->name;
    n->col_name = ref->col_name;
    n->rg = ref->rg;
    n->cur = tl_calloc((size_t)l->n_subs, sizeof *n->cur);
    if (!n->cur) {
        tl_free(n);
        return tl_error_oom(err);
    }
    for (int s = 0; s < l->n_subs; s++) {
        PqChunkRef r = *ref;
        r.leaf = &l->subs[s];
        r.chunk = &chunks[l->subs[s].chunk];
        r.rows = r.chunk->has_meta ? r.chunk->meta.num_values : 0;
        r.nested = true;
        TlStatus st = pq_col_open(&r, &n->cur[s].col, err);
        if (st != TL_OK) {
            pq_nest_free(n);
            return st;
        }
    }
    *out = n;
    return TL_OK;
}

void pq_nest_free(PqNest *n)
{
    if (!n) return;
    for (int s = 0; s < n->leaf->n_subs; s++) {
        tl_array_release(n->cur[s].e.vals);
        pq_col_free(n->cur[s].col);
    }
    tl_free(n->cur);
    tl_free(n->text);
    tl_free(n);
}

int64_t pq_nest_bytes(PqNest *n)
{
    int64_t b = 0;
    for (int s = 0; s < n->leaf->n_subs; s++) b += pq_col_bytes(n->cur[s].col);
    return b;
}

/* Make sure leaf s has a current entry (false: its chunk has ended). */
static TlStatus ready(PqNest *n, int s, bool *have)
{
    Cursor *c = &n->cur[s];
    if (c->pos < c->e.n) {
        *have = true;
        return TL_OK;
    }
    tl_array_release(c->e.vals);
    c->e.vals = NULL;
    c->e.n = 0;
    c->pos = c->vi = 0;
    if (!c->end) TL_TRY(pq_col_entries(c->col, WINDOW, &c->e, n->err));
    c->end = c->e.n == 0;
    *have = !c->end;
    return TL_OK;
}

/* The current entry of leaf s (which must have one). */
static TlStatus entry(PqNest *n, int s, uint32_t *rep, uint32_t *def)
{
    bool have;
    TL_TRY(ready(n, s, &have));
    if (!have)
        return fail(n, "the leaves of the nested column hold different numbers of values");
    *rep = n->cur[s].e.rep[n->cur[s].pos];
    *def = n->cur[s].e.def[n->cur[s].pos];
    return TL_OK;
}

static void advance(PqNest *n, int s)
{
    Cursor *c = &n->cur[s];
    if (c->e.def[c->pos] == (uint32_t)n->leaf->subs[s].max_def) c->vi++;
    c->pos++;
}

/* ---------------------------------------------------------------- text */

static TlStatus room(PqNest *n, size_t more)
{
    if (n->cap - n->len >= more) return TL_OK;
    if (more > MAX_TEXT || n->len > MAX_TEXT - more)
        return fail(n, "a value whose JSON text is longer than 256 MiB (the most tally makes "
                       "of one nested value)");
    size_t cap = n->cap ? n->cap : 256;
    while (cap - n->len < more) cap *= 2;
    uint8_t *g = tl_realloc(n->text, cap);
    if (!g) return tl_error_oom(n->err);
    n->text = g;
    n->cap = cap;
    return TL_OK;
}

static TlStatus put(PqNest *n, const void *s, size_t k)
{
    TL_TRY(room(n, k));
    memcpy(n->text + n->len, s, k);
    n->len += k;
    return TL_OK;
}

static TlStatus put_string(PqNest *n, const uint8_t *s, size_t k)
{
    bool repaired = false;
    TL_TRY(room(n, 6 * k + 2));
    n->len = (size_t)(put_json_string(n->text + n->len, s, k, &repaired) - n->text);
    return TL_OK;
}

/* Value i of the leaf's window array a, as JSON (quoted: a map key). */
static TlStatus put_value(PqNest *n, const PqLeaf *l, const TlArray *a, int64_t i, bool key)
{
    char buf[TL_FMT_MAX + 2];
    size_t k;
    switch (a->type) {
    case TL_TNULL:
        return put(n, "null", 4);
    case TL_TBOOL:
        k = (size_t)snprintf(buf, sizeof buf, "%s", tl_array_bool(a, i) ? "true" : "false");
        break;
    case TL_TINT64:
        k = tl_fmt_i64(tl_array_i64(a)[i], buf);
        break;
    case TL_TFLOAT64:
        if (!isfinite(tl_array_f64(a)[i]) && !key) return put(n, "null", 4);
        k = tl_fmt_f64(tl_array_f64(a)[i], buf);
        break;
    case TL_TDATE:
        return put_string(n, (const uint8_t *)buf, tl_fmt_date(tl_array_i32(a)[i], buf));
    case TL_TTIMESTAMP:
        return put_string(n, (const uint8_t *)buf, tl_fmt_timestamp(tl_array_i64(a)[i], buf));
    case TL_TTIMESTAMPTZ:
        return put_string(n, (const uint8_t *)buf, tl_fmt_timestamptz(tl_array_i64(a)[i], buf));
    default: {
        const TlView *v = &tl_array_views(a)[i];
        const uint8_t *p = tl_view_ptr(v, a->data);
        /* wider DECIMALs are numbers; JSON-annotated text is JSON already */
        if ((l->conv == PQ_CV_DEC_TEXT || l->json) && !key) return put(n, p, tl_view_len(*v));
        return put_string(n, p, tl_view_len(*v));
    }
    }
    return key ? put_string(n, (const uint8_t *)buf, k) : put(n, buf, k);
}

/* ----------------------------------------------------------------- walk */

/* Every leaf under node d takes one entry: the node is absent here. */
static TlStatus skip(PqNest *n, const PqNode *d)
{
    for (int s = d->first_sub; s < d->first_sub + d->n_subs; s++) {
        uint32_t rep, def;
        TL_TRY(entry(n, s, &rep, &def));
        advance(n, s);
    }
    return TL_OK;
}

static TlStatus emit(PqNest *n, const PqNode *d);

/* A map's key, always a JSON string. */
static TlStatus emit_key(PqNest *n, const PqNode *d)
{
    size_t at = n->len, k;
    uint8_t small[64], *copy;
    if (d->kind == PQ_N_LEAF) {
        const PqLeaf *l = &n->leaf->subs[d->sub];
        Cursor *c = &n->cur[d->sub];
        uint32_t rep, def;
        TL_TRY(entry(n, d->sub, &rep, &def));
        if (def == (uint32_t)l->max_def) TL_TRY(put_value(n, l, c->e.vals, c->vi, true));
        else TL_TRY(put(n, "\"null\"", 6));
        advance(n, d->sub);
        return TL_OK;
    }
    /* a key that is not a primitive: its JSON text as a string */
    TL_TRY(emit(n, d));
    k = n->len - at;
    copy = k <= sizeof small ? small : tl_malloc(k);
    if (!copy) return tl_error_oom(n->err);
    memcpy(copy, n->text + at, k);
    n->len = at;
    TlStatus st = put_string(n, copy, k);
    if (copy != small) tl_free(copy);
    return st;
}

static TlStatus emit(PqNest *n, const PqNode *d)
{
    uint32_t rep, def;
    bool have;
    TL_TRY(entry(n, d->first_sub, &rep, &def));
    if (d->nullable && def < (uint32_t)d->def) {
        TL_TRY(skip(n, d));
        return put(n, "null", 4);
    }
    switch (d->kind) {
    case PQ_N_LEAF: {
        const PqLeaf *l = &n->leaf->subs[d->sub];
        Cursor *c = &n->cur[d->sub];
        if (def == (uint32_t)l->max_def) TL_TRY(put_value(n, l, c->e.vals, c->vi, false));
        else TL_TRY(put(n, "null", 4));
        advance(n, d->sub);
        return TL_OK;
    }
    case PQ_N_STRUCT:
        TL_TRY(put(n, "{", 1));
        for (int k = 0; k < d->n_kids; k++) {
            if (k) TL_TRY(put(n, ",", 1));
            TL_TRY(put_string(n, (const uint8_t *)d->kids[k]->name, strlen(d->kids[k]->name)));
            TL_TRY(put(n, ":", 1));
            TL_TRY(emit(n, d->kids[k]));
        }
        return put(n, "}", 1);
    case PQ_N_LIST:
    case PQ_N_MAP:
        break;
    }
    if (def < (uint32_t)d->elem_def) {
        TL_TRY(skip(n, d));
        return put(n, d->kind == PQ_N_LIST ? "[]" : "{}", 2);
    }
    TL_TRY(put(n, d->kind == PQ_N_LIST ? "[" : "{", 1));
    for (bool first = true;; first = false) {
        if (!first) TL_TRY(put(n, ",", 1));
        if (d->kind == PQ_N_LIST) {
            TL_TRY(emit(n, d->kids[0]));
        } else {
            TL_TRY(emit_key(n, d->kids[0]));
            TL_TRY(put(n, ":", 1));
            if (d->n_kids > 1) TL_TRY(emit(n, d->kids[1]));
            else TL_TRY(put(n, "null", 4));
        }
        /* another element: the first leaf's next entry repeats at this level */
        TL_TRY(ready(n, d->first_sub, &have));
        if (!have || n->cur[d->first_sub].e.rep[n->cur[d->first_sub].pos] != (uint32_t)d->rep)
            break;
    }
    return put(n, d->kind == PQ_N_LIST ? "]" : "}", 1);
}

TlStatus pq_nest_read(PqNest *n, int64_t rows, TlArray **out, TlError *err)
{
    const PqLeaf *l = n->leaf;
    TlBuilder b;
    TlStatus st = TL_OK;
    n->err = err;
    *out = NULL;
    tl_builder_init(&b, TL_TSTRING);
    if (!tl_builder_reserve(&b, rows)) goto oom;
    for (int64_t i = 0; i < rows && st == TL_OK; i++) {
        uint32_t rep, def;
        for (int s = 0; s < l->n_subs && st == TL_OK; s++) {
            st = entry(n, s, &rep, &def);
            if (st == TL_OK && rep != 0)
                st = fail(n, "a row whose values do not start at repetition level 0");
        }
        if (st != TL_OK) break;
        if ((st = entry(n, 0, &rep, &def)) != TL_OK) break;
        if (def < (uint32_t)l->base_def || (l->node->nullable && def < (uint32_t)l->node->def)) {
            /* the value, or a struct above the column, is null */
            if ((st = skip(n, l->node)) != TL_OK) break;
            if (!tl_builder_append_null(&b)) goto oom;
            continue;
        }
        n->len = 0;
        if ((st = emit(n, l->node)) != TL_OK) break;
        if (!tl_builder_append_str(&b, n->text, n->len)) goto oom;
    }
    if (st != TL_OK) {
        tl_builder_free(&b);
        return st;
    }
    *out = tl_builder_finish(&b);
    return *out ? TL_OK : tl_error_oom(err);
oom:
    tl_builder_free(&b);
    return tl_error_oom(err);
}

TlStatus pq_nest_end(PqNest *n, TlError *err)
{
    n->err = err;
    for (int s = 0; s < n->leaf->n_subs; s++) {
        bool have;
        TL_TRY(ready(n, s, &have));
        if (have) return fail(n, "values left over after the row group's last row");
    }
    return TL_OK;
}
