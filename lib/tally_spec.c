/*
 * tally_spec.c -- building and freeing a TallySpec (lib/tally.h).
 *
 * A TallySpec is the one description of a run that both front doors fill:
 * cmd/flags.c from argv and lib/dsl/spec.c from a pipeline file.  It is a
 * plain tree of arrays and strings, and it owns every string it points to.
 * Ownership rule, stated once: every pointer in a spec was allocated with
 * tally_strdup / tally_alloc / tally_realloc (which go through the one
 * allocator hook of lib/core), and tally_spec_free releases them all, so a
 * caller that hits an error half way through building a spec just frees it.
 *
 * Lists (steps, texts) grow by one element per append with tl_realloc.
 * Their capacity is not stored, so any builder may also allocate a list of
 * exactly n elements with tally_alloc and later append to it; specs hold a
 * handful of steps, so the copying this costs never matters.
 */
#include "core/budget.h"
#include "core/core.h"
#include "tally.h"

#include <stdio.h>
#include <string.h>

/* Copy s into memory owned by a spec.  NULL for a NULL s or on OOM. */
char *tally_strdup(const char *s)
{
    if (!s) return NULL;
    return tl_strdup(s);
}

/* Zeroed memory of n bytes owned by a spec (n == 0 gives a valid 1-byte
 * block so NULL always means out of memory).  NULL on OOM. */
void *tally_alloc(size_t n)
{
    return tl_calloc(1, n ? n : 1);
}

/* Resize p (owned by a spec) to n bytes; the old block stays valid when
 * this returns NULL (out of memory). */
void *tally_realloc(void *p, size_t n)
{
    return tl_realloc(p, n ? n : 1);
}

/* Release memory from tally_alloc / tally_realloc / tally_strdup.
 * NULL-safe. */
void tally_free(void *p)
{
    tl_free(p);
}

/* Make room for one more element in *list (elem bytes each, n in use).
 * Lists are only ever built here, so their capacity follows from n: 4, then
 * the next power of two; growing at powers of two keeps 100,000 steps on a
 * command line linear (one element at a time, realloc copied the list each
 * time: 30 s under ASan).  false on OOM (the list is unchanged). */
static bool list_grow(void **list, int n, size_t elem)
{
    size_t cap = 4;
    while (cap < (size_t)n) cap *= 2;
    if ((size_t)n + 1 <= cap && *list) return true;
    if ((size_t)n + 1 > cap) cap *= 2;
    void *p = tl_realloc(*list, cap * elem);
    if (!p) return false;
    *list = p;
    return true;
}

/* Append a copy of text and origin to the list *list holding *n texts.
 * origin may be NULL.  Returns false on OOM (the list is unchanged). */
bool tally_text_push(TallyText **list, int *n, const char *text,
                     const char *origin)
{
    void *p = *list;
    if (!list_grow(&p, *n, sizeof(TallyText))) return false;
    *list = p;
    char *t = tally_strdup(text ? text : "");
    char *o = origin ? tally_strdup(origin) : NULL;
    if (!t || (origin && !o)) {
        tl_free(t);
        tl_free(o);
        return false;
    }
    (*list)[*n].text = t;
    (*list)[*n].origin = o;
    (*n)++;
    return true;
}

/* Append a zeroed step of the given kind to spec and return it; NULL on
 * OOM.  The pointer is valid until the next tally_spec_add_step. */
TallyStep *tally_spec_add_step(TallySpec *spec, TallyStepKind kind)
{
    void *p = spec->steps;
    if (!list_grow(&p, spec->n_steps, sizeof(TallyStep))) return NULL;
    spec->steps = p;
    TallyStep *st = &spec->steps[spec->n_steps++];
    memset(st, 0, sizeof *st);
    st->kind = kind;
    return st;
}

static void texts_free(TallyText *t, int n)
{
    if (!t) return;
    for (int i = 0; i < n; i++) {
        tl_free(t[i].text);
        tl_free(t[i].origin);
    }
    tl_free(t);
}

static void names_free(char **names, int n)
{
    if (!names) return;
    for (int i = 0; i < n; i++) tl_free(names[i]);
    tl_free(names);
}

/* Release everything spec owns and zero it (the struct itself belongs to
 * the caller).  NULL-safe and safe on a half-built spec. */
void tally_spec_free(TallySpec *spec)
{
    if (!spec) return;
    for (int i = 0; i < spec->n_inputs; i++) tl_free(spec->inputs[i]);
    tl_free(spec->inputs);
    for (int i = 0; i < spec->n_steps; i++) {
        TallyStep *st = &spec->steps[i];
        tl_free(st->origin);
        texts_free(st->items, st->n_items);
        names_free(st->names, st->n_items);
        texts_free(st->aggs, st->n_aggs);
        names_free(st->agg_names, st->n_aggs);
        texts_free(st->by, st->n_by);
        tl_free(st->join_input);
        tl_free(st->how);
        tl_free(st->suffix);
        if (st->join_spec) {
            tally_spec_free(st->join_spec);
            tl_free(st->join_spec);
        }
    }
    tl_free(spec->steps);
    tl_free(spec->output);
    tl_free(spec->from);
    tl_free(spec->to);
    tl_free(spec->null_text);
    tl_free(spec->out_null);
    tl_free(spec->parquet_compression);
    tl_free(spec->schema);
    tl_free(spec->spec_dir);
    tl_free(spec->memory_limit);
    tl_free(spec->temp_dir);
    memset(spec, 0, sizeof *spec);
}

/* The candidate nearest to `typed`, or NULL (see lib/core/suggest.c). */
const char *tally_suggest(const char *typed, const char *const *cands, size_t n)
{
    return tl_suggest(typed, strlen(typed), cands, n);
}

/* s quoted for a message into buf (see lib/core/quote.c); returns buf. */
const char *tally_quote(char *buf, size_t cap, const char *s)
{
    TlQuoted q = tl_quote_str(s);
    if (cap > 0) snprintf(buf, cap, "%s", q.s);
    return buf;
}

/* A whole message escaped into dst (see lib/core/quote.c). */
void tally_escape_message(char *dst, size_t cap, const char *msg)
{
    tl_escape_text(dst, cap, msg);
}

/* See tally.h. */
bool tally_memory_limit_ok(const char *s)
{
    uint64_t b;
    return tl_size_parse(s, &b);
}

/* See tally.h. */
bool tally_parquet_codec_ok(const char *s)
{
    static const char *const names[] = {"zstd", "snappy", "gzip", "lz4", "none"};
    for (size_t i = 0; s && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i]) == 0) return true;
    return false;
}

/* See tally.h.  The percent is read by hand rather than strtod so that only
 * plain decimals pass: no sign, exponent, hex, "inf" or "nan". */
bool tally_parse_sample(const char *s, int64_t *rows, double *pct)
{
    const char *c = s;
    int64_t v = 0;
    double frac = 0, scale = 1;
    if (!s || *c < '0' || *c > '9') return false;
    for (; *c >= '0' && *c <= '9'; c++) {
        if (v > (INT64_MAX - (*c - '0')) / 10) return false;
        v = v * 10 + (*c - '0');
    }
    if (!*c) {
        *rows = v;
        *pct = -1;
        return true;
    }
    if (*c == '.') {
        c++;
        if (*c < '0' || *c > '9') return false;
        for (; *c >= '0' && *c <= '9'; c++) {
            scale /= 10;
            frac += (*c - '0') * scale;
        }
    }
    if (c[0] != '%' || c[1] || v > 100 || (v == 100 && frac > 0)) return false;
    *pct = (double)v + frac;
    *rows = -1;
    return true;
}
