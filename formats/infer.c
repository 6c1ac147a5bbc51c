/*
 * infer.c -- type inference that never changes a value (infer.h), shared
 * by the CSV and NDJSON readers.
 *
 * A text is accepted as a number only when the number tally writes for it
 * has the same value and the same significant digits: the check is done on
 * digits, never on doubles alone.  A decimal with at most 15 significant
 * digits in the normal range always comes back from its double unchanged
 * (15 = DBL_DIG), so only longer ones are formatted (tl_fmt_f64, shortest
 * round trip) and their digit strings compared -- a cost paid by 16- and
 * 17-digit values only.  Leading zeros and '+' signs are refused by
 * spelling: "007" and "+7" are the same number as "7" but not the same
 * text, and such columns are ids or codes far more often than numbers.
 *
 * The readers keep their own fast paths for the common shapes (plain
 * digits, digits.digits); this file is what those paths fall back to, so
 * both agree by construction.
 *
 * Also here, because both readers need them: the run's type hints and the
 * first value that made a column a string (carried across a restart inside
 * the widen schema, TlWiden), --schema entries with globs, and unique
 * header names.
 */
#include "infer.h"
#include "../lib/core/text.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------- numbers */

/* See infer.h. */
bool tl_exact_i64(const char *s, size_t len, int64_t *out)
{
    size_t i = len > 0 && s[0] == '-';
    if (len == 0 || s[0] == '+') return false;
    if (i < len && s[i] == '0' && len > i + 1) return false; /* "007" */
    return tl_parse_i64(s, len, out);
}

/* The significant digits of a decimal text (sign, leading and trailing
 * zeros dropped) into dig (at most cap of them; false when there are more)
 * and *exp such that the value is 0.DIGITS * 10^exp.  No digit: *nd = 0. */
static bool sig_digits(const char *s, size_t len, char *dig, size_t cap,
                       size_t *nd, long long *exp)
{
    size_t i = 0, n = 0;
    long long e = 0, lead = 0;
    bool seen = false, point = false;
    if (i < len && (s[i] == '-' || s[i] == '+')) i++;
    for (; i < len; i++) {
        char c = s[i];
        if (c == '.') {
            point = true;
            continue;
        }
        if (c < '0' || c > '9') break;
        if (!seen && c == '0') {
            if (point) lead++; /* 0.00x: the exponent goes down */
            continue;
        }
        seen = true;
        if (n == cap) return false;
        dig[n++] = c;
        if (!point) e++;
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        long long x = 0;
        bool neg = false;
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
        for (; i < len; i++)
            if (x < 100000000) x = x * 10 + (s[i] - '0');
        e += neg ? -x : x;
    }
    while (n > 0 && dig[n - 1] == '0') n--;
    *nd = n;
    *exp = e - lead;
    return true;
}

/* See infer.h. */
bool tl_exact_f64(const char *s, size_t len, double *out)
{
    char a[24], b[24], buf[TL_FMT_MAX];
    size_t i = len > 0 && s[0] == '-', na, nb;
    long long ea, eb;
    double v;
    if (len == 0 || s[0] == '+' || tl_leading_zero(s, len)) return false;
    if (!tl_parse_f64(s, len, out)) return false;
    v = *out;
    if (s[i] != '.' && (s[i] < '0' || s[i] > '9')) return true; /* inf, nan */
    /* more than 17 significant digits: no double's shortest form has them */
    if (!sig_digits(s, len, a, 17, &na, &ea)) return false;
    if (na == 0) return true;                         /* a zero: 0.0, -0.0 */
    if (isinf(v) || v == 0) return false;              /* overflow, underflow */
    if (na <= 15 && fabs(v) >= DBL_MIN) return true;   /* DBL_DIG digits */
    tl_fmt_f64(v, buf);
    if (!sig_digits(buf, strlen(buf), b, 17, &nb, &eb)) return false;
    return na == nb && ea == eb && memcmp(a, b, na) == 0;
}

/* The narrowest type of one text alone (len > 0). */
static TlType infer_one(const char *s, size_t len)
{
    bool b;
    int64_t i;
    double f;
    int32_t d;
    if (tl_parse_bool(s, len, &b)) return TL_TBOOL;
    if (tl_exact_i64(s, len, &i)) return TL_TINT64;
    if (tl_exact_f64(s, len, &f)) return TL_TFLOAT64;
    if (tl_parse_date(s, len, &d)) return TL_TDATE;
    if (tl_parse_timestamp(s, len, &i)) return TL_TTIMESTAMP;
    if (tl_parse_timestamptz(s, len, &i)) return TL_TTIMESTAMPTZ;
    return TL_TSTRING;
}

/* See infer.h. */
TlType tl_infer_widen(TlType so_far, const char *s, size_t len)
{
    bool b;
    int64_t i;
    double f;
    TlType t;
    switch (so_far) {
    case TL_TSTRING:
        return TL_TSTRING;
    case TL_TBOOL:
        return tl_parse_bool(s, len, &b) ? TL_TBOOL : TL_TSTRING;
    case TL_TFLOAT64:
        return tl_exact_f64(s, len, &f) ? TL_TFLOAT64 : TL_TSTRING;
    case TL_TTIMESTAMP:
        /* a bare date parses as a timestamp (midnight) */
        return tl_parse_timestamp(s, len, &i) ? TL_TTIMESTAMP : TL_TSTRING;
    case TL_TTIMESTAMPTZ:
        /* every value with its offset; a naive one makes the column text */
        return tl_parse_timestamptz(s, len, &i) ? TL_TTIMESTAMPTZ : TL_TSTRING;
    default:
        break;
    }
    t = infer_one(s, len);
    if (so_far == TL_TNULL || so_far == t) return t;
    if (so_far == TL_TINT64 && t == TL_TFLOAT64) return TL_TFLOAT64;
    if (so_far == TL_TDATE && t == TL_TTIMESTAMP) return TL_TTIMESTAMP;
    return TL_TSTRING;
}

/* See infer.h.  The comma becomes a point in a copy, so the rule and its
 * checks are tl_infer_widen's own; only a float64 reading of the copy is
 * taken (a comma never makes a date, a timestamp or a bool). */
TlType tl_infer_widen_dc(TlType so_far, const char *s, size_t len)
{
    char buf[64];
    const char *comma = memchr(s, ',', len);
    TlType t;
    if (!comma) {
        t = tl_infer_widen(so_far, s, len);
        if ((t == TL_TINT64 || t == TL_TFLOAT64) && memchr(s, '.', len)) return TL_TSTRING;
        return t;
    }
    if (len >= sizeof buf || memchr(s, '.', len) ||
        memchr(comma + 1, ',', len - (size_t)(comma - s) - 1))
        return TL_TSTRING;
    memcpy(buf, s, len);
    buf[comma - s] = '.';
    if (infer_one(buf, len) != TL_TFLOAT64) return TL_TSTRING;
    return tl_infer_widen(so_far, buf, len);
}

/* ---------------------------------------------------------------- hints */

/* See infer.h. */
TlStatus tl_hint_set(TlTypeHints *h, const char *name, TlType t, TlError *err)
{
    int i = tl_schema_find(&h->cols, name);
    if (i < 0) return tl_schema_add(&h->cols, name, t, err);
    h->cols.fields[i].type = t;
    return TL_OK;
}

/* See infer.h. */
const TlInferNote *tl_hint_find_note(const TlTypeHints *h, const char *name)
{
    for (int i = 0; h && i < h->n_notes; i++)
        if (strcmp(h->notes[i].column, name) == 0) return &h->notes[i];
    return NULL;
}

/* See infer.h.  Notes are few (one per column that became a string), and
 * looked up only on an error path, so a list suffices. */
TlStatus tl_hint_note(TlTypeHints *h, const char *name, const char *file, int64_t line,
                      const char *text, size_t len, bool quoted, TlError *err)
{
    TlInferNote *n;
    if (!h || tl_hint_find_note(h, name)) return TL_OK;
    if (h->n_notes == h->cap_notes) {
        int cap = h->cap_notes ? h->cap_notes * 2 : 4;
        TlInferNote *g = tl_realloc(h->notes, (size_t)cap * sizeof *g);
        if (!g) return tl_error_oom(err);
        h->notes = g;
        h->cap_notes = cap;
    }
    n = &h->notes[h->n_notes];
    n->column = tl_strdup(name);
    n->file = tl_strdup(file);
    n->text = tl_strndup(text, len);
    n->line = line;
    n->quoted = quoted;
    if (!n->column || !n->file || !n->text) {
        tl_free(n->column);
        tl_free(n->file);
        tl_free(n->text);
        return tl_error_oom(err);
    }
    h->n_notes++;
    return TL_OK;
}

/* See infer.h. */
void tl_hints_free(TlTypeHints *h)
{
    if (!h) return;
    tl_schema_free(&h->cols);
    for (int i = 0; i < h->n_notes; i++) {
        tl_free(h->notes[i].column);
        tl_free(h->notes[i].file);
        tl_free(h->notes[i].text);
    }
    tl_free(h->notes);
    h->notes = NULL;
    h->n_notes = h->cap_notes = 0;
}

/* See infer.h. */
TlSchema *tl_widen_new(const char *column, int64_t line, const char *text, size_t len,
                       bool quoted)
{
    size_t cl = column ? strlen(column) : 0;
    TlWiden *w = tl_calloc(1, sizeof *w + (column ? cl + len + 2 : 0));
    if (!w) return NULL;
    if (column) {
        w->column = w->text_buf;
        memcpy(w->column, column, cl + 1);
        w->text = w->text_buf + cl + 1;
        memcpy(w->text, text, len);
        w->text_len = len;
        w->line = line;
        w->quoted = quoted;
    }
    return &w->types;
}

/* See infer.h.  Every widen schema of the readers that call this comes
 * from tl_widen_new. */
TlStatus tl_widen_note(TlTypeHints *h, const TlSchema *w, const char *file, TlError *err)
{
    const TlWiden *x = (const TlWiden *)(const void *)w;
    if (!h || !x->column) return TL_OK;
    return tl_hint_note(h, x->column, file, x->line, x->text, x->text_len, x->quoted, err);
}

/* -------------------------------------------------------------- --schema */

/* See infer.h.  Only * and ?: brackets are common in real column names
 * ("price[usd]") and are matched as they are. */
bool tl_fixed_is_glob(const char *name)
{
    return strpbrk(name, "*?") != NULL;
}

/* Whether name matches glob pat, where * matches any run of characters
 * and ? one character (a UTF-8 sequence counts as one); every other byte
 * matches itself.  Backtracks only to the last *, so it is linear in
 * practice and O(|pat| |name|) at worst. */
static bool glob_match(const char *pat, const char *name)
{
    const char *star = NULL, *resume = NULL;
    while (*name) {
        if (*pat == '?') {
            pat++;
            name++;
            while (((unsigned char)*name & 0xC0) == 0x80) name++;
        } else if (*pat == '*') {
            star = ++pat;
            resume = name;
        } else if (*pat == *name) {
            pat++;
            name++;
        } else if (star) {
            pat = star;
            do resume++;
            while (((unsigned char)*resume & 0xC0) == 0x80);
            name = resume;
        } else {
            return false;
        }
    }
    while (*pat == '*') pat++;
    return *pat == '\0';
}

/* See infer.h. */
int tl_fixed_find(const TlSchema *fixed, const char *name)
{
    int i;
    if (!fixed) return -1;
    i = tl_schema_find(fixed, name);
    if (i >= 0) return i;
    for (i = 0; i < fixed->n_fields; i++)
        if (tl_fixed_is_glob(fixed->fields[i].name) &&
            glob_match(fixed->fields[i].name, name))
            return i;
    return -1;
}

/* ---------------------------------------------------------- header names */

/* Add base_k (k = *next, *next + 1, ...) for the first k whose name is
 * neither in the header nor given; *next moves past it (so a name repeated
 * many times costs one probe per repeat, not one per earlier repeat). */
static TlStatus add_suffixed(const char *base, size_t blen, int *next,
                             const TlSchema *header, TlSchema *out, TlError *err)
{
    size_t n = blen + 24;
    char *name = tl_malloc(n);
    TlStatus st;
    if (!name) return tl_error_oom(err);
    for (;; (*next)++) {
        snprintf(name, n, "%.*s_%d", (int)blen, base, *next);
        if (tl_schema_find(header, name) < 0 && tl_schema_find(out, name) < 0) break;
    }
    (*next)++;
    st = tl_schema_add(out, name, TL_TNULL, err);
    tl_free(name);
    return st;
}

/* See infer.h. */
/* Renames noted one by one on standard error; past these, one line says
 * how many more. */
#define MAX_RENAME_NOTES 10

TlStatus tl_names_unique(const char *const *names, const size_t *lens, int n,
                         const char *file, bool quiet, TlSchema *out, TlError *err)
{
    TlSchema header = {0}, bases = {0};
    int *next = tl_calloc((size_t)n + 1, sizeof *next);
    TlStatus st = next ? TL_OK : tl_error_oom(err);
    char tmp[32];
    int noted = 0;
    /* every name the header holds, so no rename takes one */
    for (int i = 0; st == TL_OK && i < n; i++) {
        char *s;
        if (lens[i] == 0) continue;
        s = tl_strndup(names[i], lens[i]);
        if (!s) {
            st = tl_error_oom(err);
            break;
        }
        if (tl_schema_find(&header, s) < 0) st = tl_schema_add(&header, s, TL_TNULL, err);
        tl_free(s);
    }
    for (int i = 0; st == TL_OK && i < n; i++) {
        const char *base = names[i];
        size_t blen = lens[i];
        char *s;
        int b;
        if (blen == 0) {
            blen = (size_t)snprintf(tmp, sizeof tmp, "column%d", i + 1);
            base = tmp;
        }
        s = tl_strndup(base, blen);
        if (!s) {
            st = tl_error_oom(err);
            break;
        }
        if (tl_schema_find(out, s) < 0 && (lens[i] > 0 || tl_schema_find(&header, s) < 0)) {
            st = tl_schema_add(out, s, TL_TNULL, err);
            tl_free(s);
            continue;
        }
        b = tl_schema_find(&bases, s);
        if (b < 0) {
            st = tl_schema_add(&bases, s, TL_TNULL, err);
            b = bases.n_fields - 1;
            next[b] = 2;
        }
        tl_free(s);
        if (st == TL_OK) st = add_suffixed(base, blen, &next[b], &header, out, err);
        if (st != TL_OK || quiet) continue;
        /* the first few renames one by one, then only how many more: a
         * header of a million equal names must not print a million lines */
        if (++noted > MAX_RENAME_NOTES) continue;
        if (lens[i] == 0)
            fprintf(stderr, "tally: note: %s: column %d has no name and %s is taken; "
                    "named it %s\n", tl_escape_name(file).s, i + 1,
                    tl_quote_name(bases.fields[b].name).s,
                    tl_quote_name(out->fields[out->n_fields - 1].name).s);
        else
            fprintf(stderr, "tally: note: %s: renamed duplicate column %s (column %d) "
                    "to %s\n", tl_escape_name(file).s, tl_quote_name(bases.fields[b].name).s,
                    i + 1, tl_quote_name(out->fields[out->n_fields - 1].name).s);
    }
    if (st == TL_OK && noted > MAX_RENAME_NOTES)
        fprintf(stderr, "tally: note: %s: %d more columns renamed the same way "
                "(--quiet hides these notes)\n", tl_escape_name(file).s,
                noted - MAX_RENAME_NOTES);
    tl_schema_free(&header);
    tl_schema_free(&bases);
    tl_free(next);
    return st;
}
