/*
 * schema.c -- ordered lists of named, typed fields.
 *
 * A schema owns its field array and every name in it.  Lookups are exact
 * and case-sensitive (column names are data), through a hash index once a
 * schema is wide; the forgiving "did you mean" lives in suggest.c.
 */
#include "core.h"

#include <ctype.h>

/* Schemas narrower than this are searched linearly; wider ones keep an
 * open-addressing index of names, so that files with a million columns
 * still resolve every name in constant time. */
#define INDEX_MIN 32

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    while (*s) h = (h ^ (uint8_t)*s++) * 16777619u;
    return h;
}

/* Put field i into the index, unless an earlier field has the same name
 * (lookups return the first). */
static void index_put(TlSchema *s, int i)
{
    uint32_t h = name_hash(s->fields[i].name) & s->index_mask;
    while (s->index[h] >= 0) {
        if (strcmp(s->fields[s->index[h]].name, s->fields[i].name) == 0) return;
        h = (h + 1) & s->index_mask;
    }
    s->index[h] = i;
}

/* (Re)build the index for at least `n` fields at a load of at most 1/2. */
static bool index_build(TlSchema *s, int n)
{
    uint32_t cap = 64;
    int32_t *idx;
    while (cap < (uint32_t)n * 2) cap *= 2;
    idx = tl_malloc(cap * sizeof *idx);
    if (!idx) return false;
    memset(idx, 0xff, cap * sizeof *idx);
    tl_free(s->index);
    s->index = idx;
    s->index_mask = cap - 1;
    for (int i = 0; i < s->n_fields; i++) index_put(s, i);
    return true;
}

/* Index of the field named exactly `name` (the first, if several), or -1. */
int tl_schema_find(const TlSchema *s, const char *name)
{
    int i;
    if (s->index) {
        uint32_t h = name_hash(name) & s->index_mask;
        for (; s->index[h] >= 0; h = (h + 1) & s->index_mask)
            if (strcmp(s->fields[s->index[h]].name, name) == 0) return s->index[h];
        return -1;
    }
    for (i = 0; i < s->n_fields; i++)
        if (strcmp(s->fields[i].name, name) == 0) return i;
    return -1;
}

/* Append a field named `name` (copied) of type `type`; amortized constant
 * time.  TL_ERR_OOM (and s unchanged) on failure. */
TlStatus tl_schema_add(TlSchema *s, const char *name, TlType type, TlError *err)
{
    char *copy;
    if (s->n_fields == s->cap_fields) {
        int cap = s->cap_fields ? s->cap_fields * 2 : 8;
        TlField *f = tl_realloc(s->fields, sizeof(TlField) * (size_t)cap);
        if (!f) return tl_error_oom(err);
        s->fields = f;
        s->cap_fields = cap;
    }
    if (s->n_fields + 1 >= INDEX_MIN &&
        (s->index == NULL || (uint32_t)(s->n_fields + 1) * 2 > s->index_mask + 1) &&
        !index_build(s, s->n_fields + 1))
        return tl_error_oom(err);
    copy = tl_strdup(name);
    if (!copy) return tl_error_oom(err);
    s->fields[s->n_fields].name = copy;
    s->fields[s->n_fields].type = type;
    s->n_fields++;
    if (s->index) index_put(s, s->n_fields - 1);
    return TL_OK;
}

/* Make dst (which must be empty or freed) a deep copy of src.  On OOM dst is
 * left empty and TL_ERR_OOM returned. */
TlStatus tl_schema_copy(TlSchema *dst, const TlSchema *src, TlError *err)
{
    int i;
    memset(dst, 0, sizeof *dst);
    if (src->n_fields == 0) return TL_OK;
    dst->fields = tl_calloc((size_t)src->n_fields, sizeof(TlField));
    if (!dst->fields) return tl_error_oom(err);
    dst->cap_fields = src->n_fields;
    for (i = 0; i < src->n_fields; i++) {
        dst->fields[i].name = tl_strdup(src->fields[i].name);
        dst->fields[i].type = src->fields[i].type;
        if (!dst->fields[i].name) {
            dst->n_fields = i;
            tl_schema_free(dst);
            return tl_error_oom(err);
        }
    }
    dst->n_fields = src->n_fields;
    if (src->index && !index_build(dst, dst->n_fields)) {
        tl_schema_free(dst);
        return tl_error_oom(err);
    }
    return TL_OK;
}

/* Free the fields and names of s and leave it empty.  NULL-safe. */
void tl_schema_free(TlSchema *s)
{
    int i;
    if (!s) return;
    for (i = 0; i < s->n_fields; i++) tl_free(s->fields[i].name);
    tl_free(s->fields);
    tl_free(s->index);
    memset(s, 0, sizeof *s);
}

/* See core.h. */
bool tl_schema_same(const TlSchema *a, const TlSchema *b)
{
    if (a->n_fields != b->n_fields) return false;
    for (int c = 0; c < a->n_fields; c++)
        if (a->fields[c].type != b->fields[c].type ||
            strcmp(a->fields[c].name, b->fields[c].name) != 0)
            return false;
    return true;
}
