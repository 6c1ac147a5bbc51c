/*
 * schema.c -- ordered lists of named, typed fields.
 *
 * A schema owns its field array and every name in it.  Lookups are exact
 * and case-sensitive (column names are data); the "did you mean" helper is
 * the forgiving one: Levenshtein distance over case-folded ASCII, accepting
 * a distance up to max(1, len/3) of the name asked for, the smallest
 * distance winning and ties going to the earlier field.
 */
#include "core.h"

#include <ctype.h>

/* Index of the field named exactly `name`, or -1. */
int tl_schema_find(const TlSchema *s, const char *name)
{
    int i;
    for (i = 0; i < s->n_fields; i++)
        if (strcmp(s->fields[i].name, name) == 0) return i;
    return -1;
}

/* Append a field named `name` (copied) of type `type`.  TL_ERR_OOM (and s
 * unchanged) on failure. */
TlStatus tl_schema_add(TlSchema *s, const char *name, TlType type, TlError *err)
{
    TlField *f;
    char *copy = tl_strdup(name);
    if (!copy) return tl_error_oom(err);
    f = tl_realloc(s->fields, sizeof(TlField) * (size_t)(s->n_fields + 1));
    if (!f) {
        tl_free(copy);
        return tl_error_oom(err);
    }
    s->fields = f;
    f[s->n_fields].name = copy;
    f[s->n_fields].type = type;
    s->n_fields++;
    return TL_OK;
}

/* Make dst (which must be empty or freed) a deep copy of src.  On OOM dst is
 * left empty and TL_ERR_OOM returned. */
TlStatus tl_schema_copy(TlSchema *dst, const TlSchema *src, TlError *err)
{
    int i;
    dst->n_fields = 0;
    dst->fields = NULL;
    if (src->n_fields == 0) return TL_OK;
    dst->fields = tl_calloc((size_t)src->n_fields, sizeof(TlField));
    if (!dst->fields) return tl_error_oom(err);
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
    return TL_OK;
}

/* Free the fields and names of s and leave it empty.  NULL-safe. */
void tl_schema_free(TlSchema *s)
{
    int i;
    if (!s) return;
    for (i = 0; i < s->n_fields; i++) tl_free(s->fields[i].name);
    tl_free(s->fields);
    s->fields = NULL;
    s->n_fields = 0;
}
