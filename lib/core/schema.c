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

/* Case-insensitive Levenshtein distance of a and b, giving up (returning
 * limit + 1) once it must exceed limit.  row has room for lb + 1 entries. */
static size_t distance(const char *a, size_t la, const char *b, size_t lb,
                       size_t *row, size_t limit)
{
    size_t i, j;
    if ((la > lb ? la - lb : lb - la) > limit) return limit + 1;
    for (j = 0; j <= lb; j++) row[j] = j;
    for (i = 1; i <= la; i++) {
        size_t diag = row[0], best;
        row[0] = i;
        best = row[0];
        for (j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t cost = tolower((unsigned char)a[i - 1]) !=
                          tolower((unsigned char)b[j - 1]);
            size_t v = diag + cost;
            if (up + 1 < v) v = up + 1;
            if (row[j - 1] + 1 < v) v = row[j - 1] + 1;
            row[j] = v;
            diag = up;
            if (v < best) best = v;
        }
        if (best > limit) return limit + 1;
    }
    return row[lb];
}

/* The name of the field of s closest to `name` (case-insensitive edit
 * distance at most max(1, strlen(name)/3); smallest distance, then first
 * field), or NULL when none is near enough.  The pointer is s's own. */
const char *tl_schema_suggest(const TlSchema *s, const char *name)
{
    size_t len = strlen(name), limit = len / 3 > 1 ? len / 3 : 1;
    size_t best = limit + 1, stack[128], *row;
    const char *pick = NULL;
    int i;
    for (i = 0; i < s->n_fields; i++) {
        const char *f = s->fields[i].name;
        size_t lf = strlen(f), d;
        row = lf < 128 ? stack : tl_malloc(sizeof(size_t) * (lf + 1));
        if (!row) continue;
        d = distance(name, len, f, lf, row, limit);
        if (row != stack) tl_free(row);
        if (d < best) {
            best = d;
            pick = f;
        }
    }
    return pick;
}
