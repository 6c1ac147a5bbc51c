/*
 * pattern.c -- input patterns with `**` and `{a,b}`, which glob(3) lacks
 * (GLOB_BRACE is a GNU extension without `**`, and its brace matches come
 * out grouped by alternative).
 *
 * Braces are expanded textually into plain patterns, each pattern is
 * walked one path component at a time (a component without wildcards is
 * one stat, not a listing), and all matches are sorted and deduplicated at
 * the end: the order of the inputs depends on the names only, never on the
 * order of the alternatives or of readdir, and a file two alternatives
 * match is read once.
 */
#include "pattern.h"

#include <dirent.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Bounds that keep a hostile pattern from exploding: alternatives after
 * brace expansion, and folders deep below a `**`. */
#define MAX_ALTS 4096
#define MAX_DEPTH 256

typedef struct List {
    char **v;
    size_t n, cap;
} List;

static bool list_push(List *l, char *s)
{
    if (!s) return false;
    if (l->n == l->cap) {
        size_t nc = l->cap ? 2 * l->cap : 16;
        char **v = tl_realloc(l->v, nc * sizeof *v);
        if (!v) {
            tl_free(s);
            return false;
        }
        l->v = v;
        l->cap = nc;
    }
    l->v[l->n++] = s;
    return true;
}

static void list_free(List *l)
{
    for (size_t i = 0; i < l->n; i++) tl_free(l->v[i]);
    tl_free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

static char *cat3(const char *a, size_t an, const char *b, size_t bn, const char *c)
{
    size_t cn = strlen(c);
    char *s = tl_malloc(an + bn + cn + 1);
    if (!s) return NULL;
    memcpy(s, a, an);
    memcpy(s + an, b, bn);
    memcpy(s + an + bn, c, cn + 1);
    return s;
}

/* The first `{` whose group holds a comma at its own level: *open, *close
 * (its `}`); false when there is none.  A backslash escapes the next
 * character, as in glob(3). */
static bool find_group(const char *p, const char **open, const char **close)
{
    for (const char *o = p; *o; o++) {
        if (*o == '\\' && o[1]) {
            o++;
            continue;
        }
        if (*o != '{') continue;
        int depth = 0;
        bool comma = false;
        for (const char *c = o; *c; c++) {
            if (*c == '\\' && c[1]) {
                c++;
                continue;
            }
            if (*c == '{') depth++;
            else if (*c == '}' && --depth == 0) {
                if (!comma) break;
                *open = o;
                *close = c;
                return true;
            } else if (*c == ',' && depth == 1) {
                comma = true;
            }
        }
    }
    return false;
}

/* Expand the brace groups of p into out (recursively: each alternative
 * may hold more groups). */
static TlStatus expand_braces(const char *p, List *out, TlError *err)
{
    const char *o, *c;
    if (!find_group(p, &o, &c)) {
        if (out->n >= MAX_ALTS)
            return tl_error(err, TL_ERR_USAGE, "%s: more than %d alternatives",
                            tl_quote_name(p).s, MAX_ALTS);
        return list_push(out, tl_strdup(p)) ? TL_OK : tl_error_oom(err);
    }
    const char *start = o + 1;
    int depth = 0;
    for (const char *x = o + 1; x <= c; x++) {
        if (*x == '\\' && x[1] && x < c) {
            x++;
            continue;
        }
        if (*x == '{') depth++;
        else if (*x == '}' && depth > 0) depth--;
        else if ((*x == ',' && depth == 0) || x == c) {
            char *alt = cat3(p, (size_t)(o - p), start, (size_t)(x - start), c + 1);
            if (!alt) return tl_error_oom(err);
            TlStatus st = expand_braces(alt, out, err);
            tl_free(alt);
            TL_TRY(st);
            start = x + 1;
        }
    }
    return TL_OK;
}

static bool has_wild(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == '*' || s[i] == '?' || s[i] == '[' || s[i] == '\\') return true;
    return false;
}

static bool is_dir(const char *path, bool follow)
{
    struct stat sb;
    if ((follow ? stat(path, &sb) : lstat(path, &sb)) != 0) return false;
    return S_ISDIR(sb.st_mode);
}

/* base + "/" + name[0, n) (base "" for a relative pattern's start). */
static char *child_path(const char *base, const char *name, size_t n)
{
    size_t bl = strlen(base);
    bool slash = bl > 0 && base[bl - 1] != '/';
    char *s = tl_malloc(bl + n + 2);
    if (!s) return NULL;
    memcpy(s, base, bl);
    if (slash) s[bl++] = '/';
    memcpy(s + bl, name, n);
    s[bl + n] = '\0';
    return s;
}

/* A component of the pattern, with glob(3)'s backslash escapes removed
 * (for one without wildcards, which is looked up by name). */
static char *unescape(const char *s, size_t n)
{
    char *u = tl_malloc(n + 1), *w = u;
    if (!u) return NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\' && i + 1 < n) i++;
        *w++ = s[i];
    }
    *w = '\0';
    return u;
}

typedef struct Walk {
    const char *const *seg; /* the pattern's components */
    const size_t *len;
    int n_seg;
    List *out;
    TlError *err;
} Walk;

/* Match components i.. of the pattern below folder `base`. */
static TlStatus walk(Walk *w, const char *base, int i, int depth)
{
    const char *seg = w->seg[i];
    size_t len = w->len[i];
    bool last = i == w->n_seg - 1;
    TlStatus st = TL_OK;

    if (depth > MAX_DEPTH) return TL_OK;
    if (len == 2 && seg[0] == '*' && seg[1] == '*') {
        /* `**`: zero folders here, then every folder below (not through
         * symbolic links, so a link cycle cannot loop); last, every file
         * below */
        if (!last) TL_TRY(walk(w, base, i + 1, depth + 1));
    } else if (!has_wild(seg, len)) {
        char *name = unescape(seg, len), *path;
        if (!name) return tl_error_oom(w->err);
        path = child_path(base, name, strlen(name));
        tl_free(name);
        if (!path) return tl_error_oom(w->err);
        struct stat sb;
        if (stat(path, &sb) == 0) {
            if (last && !S_ISDIR(sb.st_mode)) {
                if (!list_push(w->out, path)) return tl_error_oom(w->err);
                path = NULL;
            } else if (!last && S_ISDIR(sb.st_mode)) {
                st = walk(w, path, i + 1, depth + 1);
            }
        }
        tl_free(path);
        return st;
    }
    DIR *d = opendir(*base ? base : ".");
    if (!d) return TL_OK; /* unreadable or not a folder: no match, as glob(3) */
    char *pat = tl_malloc(len + 1);
    if (!pat) {
        closedir(d);
        return tl_error_oom(w->err);
    }
    memcpy(pat, seg, len);
    pat[len] = '\0';
    bool star2 = len == 2 && seg[0] == '*' && seg[1] == '*';
    for (struct dirent *e; st == TL_OK && (e = readdir(d));) {
        const char *nm = e->d_name;
        if (strcmp(nm, ".") == 0 || strcmp(nm, "..") == 0) continue;
        if (star2 ? nm[0] == '.' : fnmatch(pat, nm, FNM_PERIOD) != 0) continue;
        char *path = child_path(base, nm, strlen(nm));
        if (!path) {
            st = tl_error_oom(w->err);
            break;
        }
        if (star2) {
            /* a last `**` is every file at any depth below base */
            if (is_dir(path, false)) {
                st = walk(w, path, i, depth + 1);
            } else if (last && !is_dir(path, true)) {
                if (!list_push(w->out, path)) st = tl_error_oom(w->err);
                path = NULL;
            }
        } else if (last) {
            if (!is_dir(path, true)) {
                if (!list_push(w->out, path)) st = tl_error_oom(w->err);
                path = NULL;
            }
        } else if (is_dir(path, true)) {
            st = walk(w, path, i + 1, depth + 1);
        }
        tl_free(path);
    }
    tl_free(pat);
    closedir(d);
    return st;
}

/* One pattern without braces: its matches appended to out. */
static TlStatus match_one(const char *p, List *out, TlError *err)
{
    const char *seg[MAX_DEPTH];
    size_t len[MAX_DEPTH];
    int n = 0;
    const char *s = p;
    while (*s == '/') s++;
    while (*s) {
        const char *e = strchr(s, '/');
        size_t l = e ? (size_t)(e - s) : strlen(s);
        if (n == MAX_DEPTH)
            return tl_error(err, TL_ERR_USAGE, "%s: more than %d path components",
                            tl_quote_name(p).s, MAX_DEPTH);
        if (l > 0 && !(l == 1 && s[0] == '.' && n > 0)) { /* "a//b", "a/./b" */
            seg[n] = s;
            len[n++] = l;
        }
        s += l;
        while (*s == '/') s++;
    }
    if (n == 0) return TL_OK;
    Walk w = {seg, len, n, out, err};
    return walk(&w, p[0] == '/' ? "/" : "", 0, 0);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* See pattern.h. */
bool tl_glob_extended(const char *pattern)
{
    const char *o, *c;
    for (const char *s = pattern; (s = strstr(s, "**")); s += 2) {
        bool starts = s == pattern || s[-1] == '/';
        bool ends = s[2] == '\0' || s[2] == '/';
        if (starts && ends) return true;
    }
    return find_group(pattern, &o, &c);
}

/* See pattern.h. */
TlStatus tl_glob_expand(const char *pattern, char ***out, size_t *n, TlError *err)
{
    List alts = {0}, found = {0};
    TlStatus st = expand_braces(pattern, &alts, err);
    for (size_t i = 0; st == TL_OK && i < alts.n; i++)
        st = match_one(alts.v[i], &found, err);
    list_free(&alts);
    if (st != TL_OK) {
        list_free(&found);
        return st;
    }
    if (found.n > 1) qsort(found.v, found.n, sizeof *found.v, cmp_str);
    size_t k = 0;
    for (size_t i = 0; i < found.n; i++) {
        if (k > 0 && strcmp(found.v[k - 1], found.v[i]) == 0) {
            tl_free(found.v[i]);
            continue;
        }
        found.v[k++] = found.v[i];
    }
    *out = found.v;
    *n = k;
    return TL_OK;
}
