/*
 * selector.c -- the text of column selectors (man/tally.1, SELECTORS):
 *
 *   ITEM   [-]PART [exclude (PART, ...) | exclude PART] [asc|desc]
 *          [nulls first|last] [as NAME]
 *                          (`-`, direction, nulls: sort only; `as NAME`:
 *                           select only, for a selector of one column)
 *   PART   PATTERN | columns('REGEX') | #N | END:END
 *   END    NAME | "QUOTED NAME" | #N
 *
 * A PATTERN is a run of name characters with at least one of `*`, `?` or a
 * `[...]` set; `*` alone is every column.  `columns('REGEX')` (any case, as
 * DuckDB's COLUMNS) holds one string literal, '' for a quote in it; the
 * planner compiles it (a partial match, as regexp_matches).  A bare NAME alone, or a quoted
 * one, is no selector: it stays the column expression it always was, so a
 * double-quoted "v*" is the column of that name, never a pattern (as in
 * DuckDB, where quotes make an identifier).
 *
 * This file only reads the text and says whether it is a selector; it knows
 * no schema.  What a selector matches, and the errors when it matches
 * nothing, are the planner's (lib/plan/select.c), at the step where the
 * selector stands, so a selector sees the columns the earlier steps made.
 */
#include "dsl.h"

#include <strings.h>

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool name_byte(char c)
{
    unsigned char u = (unsigned char)c;
    return u >= 0x80 || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') ||
           (u >= '0' && u <= '9') || u == '_';
}

/* ------------------------------------------------------------ matching */

/* The code point at s (UTF-8; a stray byte is itself) and its length. */
static uint32_t cp_at(const char *s, int *len)
{
    unsigned char c = (unsigned char)s[0];
    int n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    uint32_t v = n == 1 ? c : c & (0x3F >> (n - 1));
    for (int k = 1; k < n; k++) {
        if (((unsigned char)s[k] & 0xC0) != 0x80) { *len = 1; return c; }
        v = (v << 6) | ((unsigned char)s[k] & 0x3F);
    }
    *len = n;
    return v;
}

/* The set at p (just after its `[`) against code point c: *matched, and
 * the length of the set through its `]`; 0 when no `]` closes it (the `[`
 * is then an ordinary character). */
static size_t set_match(const char *p, uint32_t c, bool *matched)
{
    size_t i = 0;
    bool neg = p[0] == '!' || p[0] == '^', in = false;
    if (neg) i++;
    for (bool first = true; p[i] && (p[i] != ']' || first); first = false) {
        int l1, l2;
        uint32_t lo = cp_at(p + i, &l1), hi = lo;
        i += (size_t)l1;
        if (p[i] == '-' && p[i + 1] && p[i + 1] != ']') {
            hi = cp_at(p + i + 1, &l2);
            i += 1 + (size_t)l2;
        }
        if (c >= lo && c <= hi) in = true;
    }
    if (p[i] != ']') return 0;
    *matched = in != neg;
    return i + 1;
}

/* See dsl.h.  The classic two-cursor match: on a mismatch, go back to the
 * last `*` and let it take one more character, so no input is read more
 * than (pattern length) times. */
bool tl_glob_match(const char *pattern, const char *name)
{
    const char *p = pattern, *s = name, *star = NULL, *retry = NULL;
    while (*s) {
        int n;
        uint32_t c = cp_at(s, &n);
        if (*p == '*') {
            star = ++p;
            retry = s;
            continue;
        }
        if (*p == '?') {
            p++;
            s += n;
            continue;
        }
        if (*p == '[') {
            bool m = false;
            size_t k = set_match(p + 1, c, &m);
            if (k && m) {
                p += 1 + k;
                s += n;
                continue;
            }
            if (!k && c == '[') {
                p++;
                s++;
                continue;
            }
        } else if (*p && *p == *s) {
            p++;
            s++;
            continue;
        }
        if (!star) return false;
        cp_at(retry, &n);
        retry += n;
        s = retry;
        p = star;
    }
    while (*p == '*') p++;
    return *p == 0;
}

/* ------------------------------------------------------------ reading */

typedef struct Scan {
    TlExprArena *ea;
    const char *t;
    uint32_t i, end;
} Scan;

static void skip_space(Scan *s)
{
    while (s->i < s->end && is_space(s->t[s->i])) s->i++;
}

/* Whether the word w (lower case) stands at the cursor, not inside a
 * longer name; the cursor moves past it when it does. */
static bool word(Scan *s, const char *w)
{
    size_t n = strlen(w);
    if (s->end - s->i < n || strncasecmp(s->t + s->i, w, n) != 0) return false;
    if (s->i + n < s->end && name_byte(s->t[s->i + n])) return false;
    s->i += (uint32_t)n;
    return true;
}

/* One END or PATTERN at the cursor into *e (*glob: it is a pattern).  1:
 * read; 0: not one; -1: out of memory. */
static int read_end(Scan *s, TlSelEnd *e, bool *glob)
{
    const char *t = s->t;
    uint32_t i = s->i, from = s->i;
    *glob = false;
    e->name = NULL;
    e->pos = 0;
    if (i < s->end && t[i] == '#') {
        i++;
        if (i >= s->end || t[i] < '0' || t[i] > '9') return 0;
        for (; i < s->end && t[i] >= '0' && t[i] <= '9'; i++)
            e->pos = e->pos < INT64_MAX / 10 ? e->pos * 10 + (t[i] - '0') : INT64_MAX;
    } else if (i < s->end && t[i] == '"') {
        char *d = tl_strpool_alloc(&s->ea->pool, s->end - i);
        size_t k = 0;
        if (!d) return -1;
        for (i++;; i++) {
            if (i >= s->end) return 0;
            if (t[i] == '"') {
                if (i + 1 < s->end && t[i + 1] == '"') i++;
                else break;
            }
            d[k++] = t[i];
        }
        i++;
        d[k] = 0;
        if (k == 0) return 0;
        e->name = d;
    } else {
        bool plain = i < s->end && !(t[i] >= '0' && t[i] <= '9');
        while (i < s->end) {
            if (t[i] == '[') {
                uint32_t j = i + 1;
                while (j < s->end && t[j] != ']' && !is_space(t[j])) j++;
                if (j >= s->end || t[j] != ']') return 0;
                i = j + 1;
                *glob = true;
            } else if (t[i] == '*' || t[i] == '?') {
                i++;
                *glob = true;
            } else if (name_byte(t[i]) || (t[i] == '.' && i > from)) {
                if ((unsigned char)t[i] >= 0x80 || t[i] == '.') plain = false;
                i++;
            } else {
                break;
            }
        }
        if (i == from || (!*glob && !plain)) return 0;
        e->name = tl_strpool_dup(&s->ea->pool, t + from, i - from);
        if (!e->name) return -1;
    }
    e->start = from;
    e->len = i - from;
    s->i = i;
    return 1;
}

/* `columns('REGEX')` at the cursor into *e: the pattern's value, the span
 * of its literal (for the caret under an invalid character).  As
 * read_end. */
static int read_regex(Scan *s, TlSelEnd *e)
{
    const char *t = s->t;
    uint32_t i, from;
    size_t k = 0;
    char *d;
    if (!word(s, "columns")) return 0;
    skip_space(s);
    if (s->i >= s->end || t[s->i] != '(') return 0;
    s->i++;
    skip_space(s);
    if (s->i >= s->end || t[s->i] != '\'') return 0;
    from = s->i;
    if (!(d = tl_strpool_alloc(&s->ea->pool, s->end - from))) return -1;
    for (i = from + 1;; i++) {
        if (i >= s->end) return 0;
        if (t[i] == '\'') {
            if (i + 1 < s->end && t[i + 1] == '\'') i++;
            else break;
        }
        d[k++] = t[i];
    }
    d[k] = 0;
    e->name = d;
    e->pos = 0;
    e->start = from;
    e->len = i + 1 - from;
    s->i = i + 1;
    skip_space(s);
    if (s->i >= s->end || t[s->i] != ')') return 0;
    s->i++;
    return 1;
}

/* One PART at the cursor (see read_end for the result). */
static int read_part(Scan *s, TlSelPart *p)
{
    bool glob, glob2;
    uint32_t from = s->i;
    int r = read_regex(s, &p->a);
    if (r != 0) {
        p->kind = TL_SEL_REGEX;
        p->start = from;
        p->len = s->i - from;
        if (r > 0 && s->i < s->end && s->t[s->i] == ':') return 0;
        return r;
    }
    s->i = from;
    r = read_end(s, &p->a, &glob);
    if (r <= 0) return r;
    p->start = p->a.start;
    p->kind = glob ? TL_SEL_GLOB : p->a.name ? TL_SEL_NAME : TL_SEL_POS;
    if (s->i < s->end && s->t[s->i] == ':' &&
        !(s->i + 1 < s->end && s->t[s->i + 1] == ':')) {
        if (glob) return 0;
        s->i++;
        if ((r = read_end(s, &p->b, &glob2)) <= 0 || glob2) return r < 0 ? -1 : 0;
        p->kind = TL_SEL_RANGE;
    }
    p->len = s->i - p->start;
    return 1;
}

/* The parts of `exclude (...)` or `exclude PART` into *x (pooled). */
static int read_excl(Scan *s, TlSelector *x)
{
    TlSelPart *v = NULL, *pooled;
    uint32_t n = 0, cap = 0;
    bool paren;
    int r = 1;
    skip_space(s);
    paren = s->i < s->end && s->t[s->i] == '(';
    if (paren) s->i++;
    for (;;) {
        if (n == cap) {
            uint32_t nc = cap ? 2 * cap : 4;
            TlSelPart *g = tl_realloc(v, nc * sizeof *g);
            if (!g) { r = -1; goto done; }
            v = g;
            cap = nc;
        }
        skip_space(s);
        if ((r = read_part(s, &v[n])) <= 0) goto done;
        n++;
        skip_space(s);
        if (!paren) break;
        if (s->i < s->end && s->t[s->i] == ',') { s->i++; continue; }
        if (s->i < s->end && s->t[s->i] == ')') { s->i++; break; }
        r = 0;
        goto done;
    }
    if (!(pooled = tl_strpool_alloc(&s->ea->pool, n * sizeof *pooled))) { r = -1; goto done; }
    memcpy(pooled, v, n * sizeof *pooled);
    x->excl = pooled;
    x->n_excl = n;
done:
    tl_free(v);
    return r;
}

/* See dsl.h. */
TlStatus tl_parse_selector(TlExprArena *ea, uint16_t src, uint32_t a, uint32_t b,
                           bool sort, const char **as_name, TlSelector **out,
                           bool *desc, bool *nulls_first, TlError *err)
{
    Scan s = {ea, ea->srcs[src].text, a, b};
    TlSelector x;
    bool minus = false, dir = false, nf = false;
    int r;
    *out = NULL;
    if (as_name) *as_name = NULL;
    memset(&x, 0, sizeof x);
    if (sort && s.i < s.end && s.t[s.i] == '-') {
        minus = true;
        s.i++;
    }
    if ((r = read_part(&s, &x.base)) < 0) return tl_error_oom(err);
    if (r == 0) return TL_OK;
    skip_space(&s);
    if (word(&s, "exclude")) {
        if ((r = read_excl(&s, &x)) < 0) return tl_error_oom(err);
        if (r == 0) return TL_OK;
        skip_space(&s);
    }
    if (sort) {
        if (word(&s, "desc")) dir = true;
        else if (word(&s, "asc") && minus) return TL_OK; /* `-v* asc` */
        dir = dir || minus;
        skip_space(&s);
        if (word(&s, "nulls")) {
            skip_space(&s);
            if (word(&s, "first")) nf = true;
            else if (!word(&s, "last")) return TL_OK;
            skip_space(&s);
        }
    }
    if (as_name && word(&s, "as")) {
        TlSelEnd e;
        bool glob;
        skip_space(&s);
        if ((r = read_end(&s, &e, &glob)) < 0) return tl_error_oom(err);
        if (r == 0 || glob || !e.name) return TL_OK;
        *as_name = e.name;
        skip_space(&s);
    }
    if (s.i != s.end) return TL_OK;
    if (x.base.kind == TL_SEL_NAME && x.n_excl == 0) return TL_OK;
    TlSelector *p = tl_strpool_alloc(&ea->pool, sizeof *p);
    if (!p) return tl_error_oom(err);
    *p = x;
    *out = p;
    *desc = dir;
    *nulls_first = nf;
    return TL_OK;
}
