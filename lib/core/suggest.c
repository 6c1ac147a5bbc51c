/*
 * suggest.c -- "did you mean" for names: the one edit distance of the program.
 *
 * The distance is the optimal string alignment distance (insertions,
 * deletions, substitutions, and a swap of two adjacent characters counting as
 * one edit, so "qyt" is one edit from "qty"), compared case-insensitively.
 * Names longer than TL_SUGGEST_MAX bytes are never suggested for.
 *
 * A candidate is near enough when it is at most max(1, min(3, len/3)) edits
 * away and the distance is smaller than the typed name itself (so "x" does
 * not suggest "y").  Among near candidates the smallest distance wins, ties
 * going to the first, so the answer is deterministic.
 */
#include "core.h"

#include <ctype.h>

#define TL_SUGGEST_MAX 64

/* Case-insensitive optimal string alignment distance of a[0..la) and
 * b[0..lb); SIZE_MAX when either is longer than TL_SUGGEST_MAX. */
size_t tl_edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
    static const size_t W = TL_SUGGEST_MAX + 1;
    size_t d[(TL_SUGGEST_MAX + 1) * (TL_SUGGEST_MAX + 1)];
    size_t i, j;
    if (la > TL_SUGGEST_MAX || lb > TL_SUGGEST_MAX) return SIZE_MAX;
    for (i = 0; i <= la; i++) d[i * W] = i;
    for (j = 0; j <= lb; j++) d[j] = j;
    for (i = 1; i <= la; i++) {
        int ca = tolower((unsigned char)a[i - 1]);
        for (j = 1; j <= lb; j++) {
            int cb = tolower((unsigned char)b[j - 1]);
            size_t v = d[(i - 1) * W + j - 1] + (ca != cb);
            if (d[(i - 1) * W + j] + 1 < v) v = d[(i - 1) * W + j] + 1;
            if (d[i * W + j - 1] + 1 < v) v = d[i * W + j - 1] + 1;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb &&
                d[(i - 2) * W + j - 2] + 1 < v)
                v = d[(i - 2) * W + j - 2] + 1;
            d[i * W + j] = v;
        }
    }
    return d[la * W + lb];
}

/* The most edits a suggestion for a name of len bytes may be away. */
static size_t limit_for(size_t len)
{
    size_t limit = len / 3;
    return limit < 1 ? 1 : limit > 3 ? 3 : limit;
}

/* Fold candidate c into the running best (see the top of the file). */
static void consider(const char *s, size_t len, const char *c, size_t *best_d,
                     const char **best)
{
    size_t d = tl_edit_distance(s, len, c, strlen(c));
    if (d < *best_d && d <= limit_for(len) && d < len) {
        *best_d = d;
        *best = c;
    }
}

/* The candidate nearest to s[0..len), or NULL when none is near enough. */
const char *tl_suggest(const char *s, size_t len, const char *const *cands,
                       size_t n_cands)
{
    const char *best = NULL;
    size_t best_d = SIZE_MAX, i;
    for (i = 0; i < n_cands; i++) consider(s, len, cands[i], &best_d, &best);
    return best;
}

/* The field name of s nearest to `name`, or NULL; the pointer is s's own. */
const char *tl_schema_suggest(const TlSchema *s, const char *name)
{
    const char *best = NULL;
    size_t best_d = SIZE_MAX, len = strlen(name);
    int i;
    for (i = 0; i < s->n_fields; i++)
        consider(name, len, s->fields[i].name, &best_d, &best);
    return best;
}
