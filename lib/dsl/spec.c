/*
 * spec.c -- a JSON pipeline file -> TallySpec (the `-f` front door).
 *
 * The file is read whole, parsed by cJSON (with its allocations routed
 * through tl_malloc, so fault injection reaches them and an allocation
 * failure is told apart from a syntax error), then walked once.  The shape
 * (man/tally.1, "Pipeline files"):
 *
 *   { "inputs": ["a.csv", ...] | "input": "a.csv",
 *     "steps": [ {STEP}, ... ],
 *     "output": "out.csv",
 *     "delimiter": ",", "null": "NA", "header": false, "no_header": false,
 *     "schema": "a:int,b:string", "from": "csv", "to": "csv", "threads": 4,
 *     "with_filename": false, "out_delimiter": ";", "compress_level": 9,
 *     "sorted": false, "no_infer": false, "quoted_as_string": false,
 *     "quiet": false, "out_null": "NA", "out_no_header": false,
 *     "ragged": "error", "skip": 0, "quote": "\"", "escape": "\\",
 *     "comment": "#", "decimal_comma": false, "max_columns": 1000000,
 *     "max_record_size": 268435456, "parquet_compression": "zstd",
 *     "memory_limit": "256MiB", "temp_dir": "/var/tmp",
 *     "row_group_size": 122880 }
 *
 *   STEP is an object with one step key:
 *     {"filter": "EXPR"}              {"select": ["EXPR [as NAME]", ...]}
 *     {"with": {"NAME": "EXPR", ...}} (one WITH step per key, in order)
 *     {"drop": ["NAME", ...]}         {"rename": {"OLD": "NEW", ...}}
 *     {"group_by": ["KEY", ...], "agg": {"NAME": "AGG(EXPR)", ...}}
 *                                     (group_by may also be an object
 *                                      {"NAME": "EXPR", ...}: named keys)
 *     {"agg": {...}}                  (whole-input aggregate; agg may also be
 *                                      an array of "[NAME =] AGG(EXPR)")
 *     {"sort": ["EXPR [asc|desc] [nulls first|last]", ...]}
 *     {"limit": N, "by": ["KEY", ...]} {"limit": N, "offset": M}
 *     {"offset": M}                   {"tail": N}
 *     {"sample": N | "P%", "seed": S} {"with_row_number": "NAME"}
 *     {"distinct": true | ["NAME", ...]}
 *     {"join": {"input": "b.csv", "on": ["k"], "how": "left", "suffix": "_r"}}
 *       "input" may also be a pipeline object of its own, {"inputs": [...],
 *       "steps": [...], "delimiter": ..., "schema": ..., ...} (no "output",
 *       "to" or "threads"): the right side is filtered or aggregated first.
 *       Either way the step gets a join_spec.
 *
 * Every text keeps its JSON pointer as origin ("/steps/2/filter",
 * "/steps/1/select/0", "/steps/3/agg/total"), so expression errors later
 * show where in the file the text came from; lists are stored with
 * split = false (a JSON array is already split).  Relative paths stay as
 * written; spec_dir (the file's folder) lets the engine resolve them.
 *
 * Errors are usage errors (exit 2) that start with the file name and the
 * JSON pointer of the offending value:
 *   p.json: /steps/2: unknown step "filtr" (did you mean "filter"?)
 * except out of memory (exit 1).  Unknown keys are errors at every level, so
 * a typo never silently drops a step or an option.  On failure the spec is
 * freed and zeroed.
 */
#include "../core/budget.h"
#include "../tally.h"
#include "lexer.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#define MAX_FILE ((size_t)64 << 20) /* a pipeline file is small */

typedef struct Path {
    char *buf;
    size_t len, cap;
} Path;

typedef struct Ctx {
    const char *file;   /* the path as given, for messages */
    TallySpec *spec;
    TallyError *err;
    Path path;          /* JSON pointer of the value being read */
} Ctx;

/* ------------------------------------------------------------- errors */

static int vfail(Ctx *c, int code, bool with_path, const char *fmt, va_list ap)
{
    TallyError *e = c->err;
    int n = snprintf(e->message, sizeof e->message, "%s: ", c->file);
    if (n < 0) n = 0;
    if (with_path && (size_t)n < sizeof e->message) {
        int k = snprintf(e->message + n, sizeof e->message - (size_t)n, "%s: ",
                         c->path.len ? c->path.buf : "/");
        if (k > 0) n += k;
    }
    if ((size_t)n < sizeof e->message)
        vsnprintf(e->message + n, sizeof e->message - (size_t)n, fmt, ap);
    e->exit_code = code;
    return -1;
}

/* A usage error about the value at the current path. */
static int fail(Ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(Ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(c, 2, true, fmt, ap);
    va_end(ap);
    return -1;
}

/* A usage error about the file as a whole. */
static int fail_file(Ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail_file(Ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(c, 2, false, fmt, ap);
    va_end(ap);
    return -1;
}

/* A usage error with no file prefix (the message names the file). */
static int fail_raw(Ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail_raw(Ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err->message, sizeof c->err->message, fmt, ap);
    va_end(ap);
    c->err->exit_code = 2;
    return -1;
}

static int oom(Ctx *c)
{
    snprintf(c->err->message, sizeof c->err->message, "out of memory");
    c->err->exit_code = 1;
    return -1;
}

/* --------------------------------------------------------- JSON pointer */

static bool path_put(Path *p, const char *s, size_t n)
{
    if (p->len + n + 1 > p->cap) {
        size_t nc = p->cap ? p->cap : 64;
        while (nc < p->len + n + 1) nc *= 2;
        char *b = tl_realloc(p->buf, nc);
        if (!b) return false;
        p->buf = b;
        p->cap = nc;
    }
    memcpy(p->buf + p->len, s, n);
    p->len += n;
    p->buf[p->len] = 0;
    return true;
}

/* Append "/key" (with ~ and / escaped as ~0 and ~1); *mark receives the
 * length to restore with path_pop. */
static int path_key(Ctx *c, const char *key, size_t *mark)
{
    *mark = c->path.len;
    if (!path_put(&c->path, "/", 1)) return oom(c);
    for (const char *s = key; *s; s++) {
        bool ok = *s == '~'   ? path_put(&c->path, "~0", 2)
                  : *s == '/' ? path_put(&c->path, "~1", 2)
                              : path_put(&c->path, s, 1);
        if (!ok) return oom(c);
    }
    return 0;
}

static int path_index(Ctx *c, int i, size_t *mark)
{
    char b[24];
    int n = snprintf(b, sizeof b, "/%d", i);
    *mark = c->path.len;
    return path_put(&c->path, b, (size_t)n) ? 0 : oom(c);
}

static void path_pop(Ctx *c, size_t mark)
{
    c->path.len = mark;
    if (c->path.buf) c->path.buf[mark] = 0;
}

/* ------------------------------------------------------------- values */

static const char *type_word(const cJSON *v)
{
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsBool(v)) return "a boolean";
    if (cJSON_IsNull(v)) return "null";
    if (cJSON_IsArray(v)) return "an array";
    if (cJSON_IsObject(v)) return "an object";
    return "an invalid value";
}

/* *out = a spec-owned copy of the string v (at the current path). */
static int get_string(Ctx *c, const cJSON *v, bool nonempty, char **out)
{
    if (!cJSON_IsString(v) || !v->valuestring)
        return fail(c, "expected a string, got %s", type_word(v));
    if (nonempty && !v->valuestring[0]) return fail(c, "expected a non-empty string");
    char *s = tally_strdup(v->valuestring);
    if (!s) return oom(c);
    tally_free(*out); /* a repeated option: the last one wins */
    *out = s;
    return 0;
}

/* A non-negative integer number (at most max). */
static int get_count(Ctx *c, const cJSON *v, double max, int64_t *out)
{
    double d = cJSON_IsNumber(v) ? v->valuedouble : -1;
    if (!cJSON_IsNumber(v) || !isfinite(d) || d < 0 || d != floor(d))
        return fail(c, "expected a non-negative integer");
    if (d > max) return fail(c, "%.17g is too large (at most %.17g)", d, max);
    *out = d >= 9223372036854775807.0 ? INT64_MAX : (int64_t)d;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Fails when object obj has a key twice (sorted, so large objects are
 * cheap). */
static int check_dups(Ctx *c, const cJSON *obj)
{
    int n = cJSON_GetArraySize(obj);
    if (n < 2) return 0;
    const char **keys = tl_malloc((size_t)n * sizeof *keys);
    if (!keys) return oom(c);
    int k = 0;
    for (const cJSON *it = obj->child; it && k < n; it = it->next)
        keys[k++] = it->string ? it->string : "";
    qsort(keys, (size_t)k, sizeof *keys, cmp_str);
    for (int i = 1; i < k; i++) {
        if (strcmp(keys[i - 1], keys[i]) == 0) {
            int rc = fail(c, "duplicate key %s", tl_quote_name(keys[i]).s);
            tl_free(keys);
            return rc;
        }
    }
    tl_free(keys);
    return 0;
}

/* Append the strings of array v to *list, each with origin path/i.
 * min_n: the fewest elements accepted. */
static int str_list(Ctx *c, const cJSON *v, int min_n, TallyText **list, int *n)
{
    if (!cJSON_IsArray(v))
        return fail(c, "expected an array of strings, got %s", type_word(v));
    if (cJSON_GetArraySize(v) < min_n) return fail(c, "expected a non-empty array of strings");
    int i = 0;
    for (const cJSON *it = v->child; it; it = it->next, i++) {
        size_t mark;
        if (path_index(c, i, &mark)) return -1;
        if (!cJSON_IsString(it) || !it->valuestring)
            return fail(c, "expected a string, got %s", type_word(it));
        if (!tally_text_push(list, n, it->valuestring, c->path.buf)) return oom(c);
        path_pop(c, mark);
    }
    return 0;
}

/* Append the entries of object v (name -> string) to *list with origins
 * path/name, and the names to the parallel array *names. */
static int str_map(Ctx *c, const cJSON *v, TallyText **list, int *n, char ***names)
{
    if (!cJSON_IsObject(v)) return fail(c, "expected an object, got %s", type_word(v));
    int size = cJSON_GetArraySize(v);
    if (size == 0) return fail(c, "expected a non-empty object");
    if (check_dups(c, v)) return -1;
    char **nm = tally_realloc(*names, (size_t)(*n + size) * sizeof *nm);
    if (!nm) return oom(c);
    *names = nm;
    for (const cJSON *it = v->child; it; it = it->next) {
        size_t mark;
        const char *key = it->string ? it->string : "";
        if (path_key(c, key, &mark)) return -1;
        if (!cJSON_IsString(it) || !it->valuestring)
            return fail(c, "expected a string, got %s", type_word(it));
        char *k = tally_strdup(key);
        if (!k) return oom(c);
        if (!tally_text_push(list, n, it->valuestring, c->path.buf)) {
            tally_free(k);
            return oom(c);
        }
        nm[*n - 1] = k;
        path_pop(c, mark);
    }
    return 0;
}

/* -------------------------------------------------------------- steps */

static const char *const step_keys[] = {"filter", "select", "with",  "drop",
                                        "rename", "group_by", "agg", "sort",
                                        "limit", "by", "distinct", "join",
                                        "describe", "offset", "tail", "sample",
                                        "seed", "with_row_number"};
enum { K_FILTER, K_SELECT, K_WITH, K_DROP, K_RENAME, K_GROUP_BY, K_AGG,
       K_SORT, K_LIMIT, K_BY, K_DISTINCT, K_JOIN, K_DESCRIBE, K_OFFSET, K_TAIL,
       K_SAMPLE, K_SEED, K_ROW_NUMBER, K_COUNT };

static int find_key(const char *const *keys, int n, const char *k)
{
    for (int i = 0; i < n; i++)
        if (strcmp(keys[i], k) == 0) return i;
    return -1;
}

/* `did you mean` text for key among keys, into buf. */
static const char *near(const char *key, const char *const *keys, int n,
                        char *buf, size_t cap)
{
    const char *s = tl_suggest(key, strlen(key), keys, (size_t)n);
    if (!s) return "";
    snprintf(buf, cap, " (did you mean \"%s\"?)", s);
    return buf;
}

/* Start a step of the given kind with origin = the current path. */
static TallyStep *new_step(Ctx *c, TallyStepKind kind)
{
    TallyStep *st = tally_spec_add_step(c->spec, kind);
    if (!st) {
        oom(c);
        return NULL;
    }
    st->origin = tally_strdup(c->path.buf);
    if (!st->origin) {
        oom(c);
        return NULL;
    }
    return st;
}

/* Run the statements in ... with `/key` appended to the current path. */
#define WITH_KEY(c, key, ...)                                                  \
    do {                                                                       \
        size_t mark_;                                                          \
        if (path_key(c, key, &mark_)) return -1;                               \
        __VA_ARGS__;                                                           \
        path_pop(c, mark_);                                                    \
    } while (0)

static int top(Ctx *c, const cJSON *root);

/* The right side of a join: a file name, or a nested pipeline object. */
static int join_input(Ctx *c, const cJSON *v, TallyStep *st)
{
    TallySpec *js = tally_alloc(sizeof *js);
    if (!js) return oom(c);
    st->join_spec = js;
    if (cJSON_IsString(v)) {
        if (get_string(c, v, true, &st->join_input)) return -1;
        if (!(js->inputs = tally_alloc(sizeof(char *)))) return oom(c);
        if (!(js->inputs[0] = tally_strdup(st->join_input))) return oom(c);
        js->n_inputs = 1;
        return 0;
    }
    if (!cJSON_IsObject(v))
        return fail(c, "expected a file name or a pipeline object such as "
                    "{\"inputs\": [\"b.csv\"], \"steps\": [...]}, got %s",
                    type_word(v));
    static const char *const banned[] = {"output", "to", "threads", "memory_limit",
                                         "temp_dir"};
    for (int i = 0; i < 5; i++)
        if (cJSON_GetObjectItemCaseSensitive(v, banned[i]))
            return fail(c, "%s has no meaning for the input of a join",
                        tl_quote_name(banned[i]).s);
    TallySpec *outer = c->spec;
    c->spec = js;
    int rc = top(c, v);
    c->spec = outer;
    if (rc) return -1;
    if (js->n_inputs == 0) return fail(c, "missing \"inputs\" (the files to join with)");
    if (!(st->join_input = tally_strdup(js->inputs[0]))) return oom(c);
    return 0;
}

static int step_join(Ctx *c, const cJSON *v)
{
    static const char *const keys[] = {"input", "on", "how", "suffix"};
    static const char *const hows[] = {"inner", "left", "right", "full", "semi", "anti"};
    char sug[64];
    if (!cJSON_IsObject(v))
        return fail(c, "expected an object such as {\"input\": \"b.csv\", \"on\": [\"k\"]}, got %s",
                    type_word(v));
    if (check_dups(c, v)) return -1;
    TallyStep *st = new_step(c, TALLY_STEP_JOIN);
    if (!st) return -1;
    for (const cJSON *it = v->child; it; it = it->next) {
        const char *key = it->string ? it->string : "";
        int k = find_key(keys, 4, key);
        if (k < 0)
            return fail(c, "unknown key %s%s", tl_quote_name(key).s,
                        near(key, keys, 4, sug, sizeof sug));
        WITH_KEY(c, key, {
            if (k == 0 && join_input(c, it, st)) return -1;
            if (k == 1 && str_list(c, it, 1, &st->items, &st->n_items)) return -1;
            if (k == 3 && get_string(c, it, false, &st->suffix)) return -1;
            if (k == 2) {
                if (!cJSON_IsString(it) || !it->valuestring)
                    return fail(c, "expected a string, got %s", type_word(it));
                int h = -1;
                for (int i = 0; i < 6; i++)
                    if (strcasecmp(hows[i], it->valuestring) == 0) h = i;
                if (h < 0)
                    return fail(c, "unknown join type %s%s (use inner, left, right, "
                                "full, semi or anti)",
                                tl_quote_name(it->valuestring).s,
                                near(it->valuestring, hows, 6, sug, sizeof sug));
                tally_free(st->how);
                st->how = NULL;
                if (h > 0 && !(st->how = tally_strdup(hows[h]))) return oom(c);
            }
        });
    }
    if (!st->join_input) return fail(c, "missing \"input\" (the file to join with)");
    if (st->n_items == 0) return fail(c, "missing \"on\" (the key columns)");
    if (!st->suffix && !(st->suffix = tally_strdup("_right"))) return oom(c);
    return 0;
}

/* One element of "steps", at the current path /steps/N. */
static int step(Ctx *c, const cJSON *v)
{
    const cJSON *val[K_COUNT] = {0};
    char sug[64];
    int n_main = 0, first = -1, second = -1;
    if (!cJSON_IsObject(v))
        return fail(c, "expected an object such as {\"filter\": \"x > 1\"}, got %s",
                    type_word(v));
    if (check_dups(c, v)) return -1;
    int size = cJSON_GetArraySize(v);
    if (size == 0) return fail(c, "empty step (expected a key such as \"filter\")");
    for (const cJSON *it = v->child; it; it = it->next) {
        const char *key = it->string ? it->string : "";
        int k = find_key(step_keys, K_COUNT, key);
        if (k < 0)
            return fail(c, "unknown %s %s%s", size == 1 ? "step" : "key", tl_quote_name(key).s,
                        near(key, step_keys, K_COUNT, sug, sizeof sug));
        val[k] = it;
        /* modifiers of limit, group_by, sample ("offset" is a step of its
         * own without "limit") */
        if (k == K_BY || k == K_AGG || k == K_SEED || k == K_OFFSET) continue;
        if (n_main++ == 0) first = k;
        else if (second < 0) second = k;
    }
    if (val[K_AGG] && !val[K_GROUP_BY]) {
        if (n_main++ == 0) first = K_AGG;
        else if (second < 0) second = K_AGG;
    }
    if (val[K_OFFSET] && !val[K_LIMIT]) {
        if (n_main++ == 0) first = K_OFFSET;
        else if (second < 0) second = K_OFFSET;
    }
    if (val[K_BY] && !val[K_LIMIT] && n_main == 0)
        return fail(c, "\"by\" goes with \"limit\": {\"limit\": N, \"by\": [...]}");
    if (n_main > 1)
        return fail(c, "one step per object: found %s and %s",
                    tl_quote_name(step_keys[first]).s, tl_quote_name(step_keys[second]).s);
    if (val[K_BY] && first != K_LIMIT)
        return fail(c, "\"by\" goes with \"limit\", not with %s",
                    tl_quote_name(step_keys[first]).s);
    if (val[K_SEED] && first != K_SAMPLE)
        return fail(c, "\"seed\" goes with \"sample\": {\"sample\": N, \"seed\": S}");
    if (val[K_OFFSET] && val[K_BY])
        return fail(c, "\"offset\" does not go with \"by\": make it a step "
                    "{\"offset\": N} of its own");

    TallyStep *st;
    const cJSON *x = val[first];
    switch (first) {
    case K_FILTER:
        if (!(st = new_step(c, TALLY_STEP_FILTER))) return -1;
        WITH_KEY(c, "filter", {
            if (!cJSON_IsString(x) || !x->valuestring)
                return fail(c, "expected a string, got %s", type_word(x));
            if (!tally_text_push(&st->items, &st->n_items, x->valuestring, c->path.buf))
                return oom(c);
        });
        return 0;
    case K_SELECT:
        if (!(st = new_step(c, TALLY_STEP_SELECT))) return -1;
        WITH_KEY(c, "select", {
            if (str_list(c, x, 1, &st->items, &st->n_items)) return -1;
        });
        return 0;
    case K_DROP:
        if (!(st = new_step(c, TALLY_STEP_DROP))) return -1;
        WITH_KEY(c, "drop", {
            if (str_list(c, x, 1, &st->items, &st->n_items)) return -1;
        });
        return 0;
    case K_SORT:
        if (!(st = new_step(c, TALLY_STEP_SORT))) return -1;
        WITH_KEY(c, "sort", {
            if (str_list(c, x, 1, &st->items, &st->n_items)) return -1;
        });
        return 0;
    case K_RENAME:
        if (!(st = new_step(c, TALLY_STEP_RENAME))) return -1;
        WITH_KEY(c, "rename", {
            if (str_map(c, x, &st->items, &st->n_items, &st->names)) return -1;
        });
        return 0;
    case K_WITH:
        WITH_KEY(c, "with", {
            if (!cJSON_IsObject(x))
                return fail(c, "expected an object {\"NAME\": \"EXPR\"}, got %s", type_word(x));
            if (cJSON_GetArraySize(x) == 0) return fail(c, "expected a non-empty object");
            if (check_dups(c, x)) return -1;
        });
        for (const cJSON *it = x->child; it; it = it->next) {
            const char *key = it->string ? it->string : "";
            size_t m1 = c->path.len, m2;
            if (!(st = new_step(c, TALLY_STEP_WITH))) return -1;
            if (path_key(c, "with", &m2) || path_key(c, key, &m2)) return -1;
            if (!cJSON_IsString(it) || !it->valuestring)
                return fail(c, "expected a string, got %s", type_word(it));
            if (!(st->names = tally_alloc(sizeof *st->names))) return oom(c);
            if (!tally_text_push(&st->items, &st->n_items, it->valuestring, c->path.buf))
                return oom(c);
            if (!(st->names[0] = tally_strdup(key))) return oom(c);
            path_pop(c, m1);
        }
        return 0;
    case K_GROUP_BY:
    case K_AGG:
        if (!(st = new_step(c, TALLY_STEP_GROUP_BY))) return -1;
        if (val[K_GROUP_BY])
            WITH_KEY(c, "group_by", {
                const cJSON *g = val[K_GROUP_BY];
                if (cJSON_IsObject(g)) {
                    if (str_map(c, g, &st->items, &st->n_items, &st->names)) return -1;
                } else if (str_list(c, g, 0, &st->items, &st->n_items)) {
                    return -1;
                }
            });
        if (val[K_AGG])
            WITH_KEY(c, "agg", {
                const cJSON *a = val[K_AGG];
                if (cJSON_IsArray(a)) {
                    if (str_list(c, a, 1, &st->aggs, &st->n_aggs)) return -1;
                } else if (cJSON_IsObject(a)) {
                    if (str_map(c, a, &st->aggs, &st->n_aggs, &st->agg_names)) return -1;
                } else {
                    return fail(c, "expected an object {\"NAME\": \"AGG(EXPR)\"}, got %s",
                                type_word(a));
                }
            });
        return 0;
    case K_LIMIT:
        if (!(st = new_step(c, TALLY_STEP_LIMIT))) return -1;
        WITH_KEY(c, "limit", {
            if (get_count(c, x, 9.2233720368547758e18, &st->limit)) return -1;
        });
        if (val[K_OFFSET])
            WITH_KEY(c, "offset", {
                if (get_count(c, val[K_OFFSET], 9.2233720368547758e18, &st->offset))
                    return -1;
            });
        if (val[K_BY])
            WITH_KEY(c, "by", {
                if (str_list(c, val[K_BY], 1, &st->by, &st->n_by)) return -1;
            });
        return 0;
    case K_DISTINCT:
        if (!(st = new_step(c, TALLY_STEP_DISTINCT))) return -1;
        WITH_KEY(c, "distinct", {
            if (cJSON_IsArray(x)) {
                if (str_list(c, x, 0, &st->items, &st->n_items)) return -1;
            } else if (!cJSON_IsTrue(x)) {
                return fail(c, "expected true or an array of column names");
            }
        });
        return 0;
    case K_OFFSET:
    case K_TAIL:
        if (!(st = new_step(c, TALLY_STEP_LIMIT))) return -1;
        st->tail = first == K_TAIL;
        WITH_KEY(c, step_keys[first], {
            int64_t n;
            if (get_count(c, x, 9.2233720368547758e18, &n)) return -1;
            st->limit = first == K_TAIL ? n : -1;
            st->offset = first == K_TAIL ? 0 : n;
        });
        return 0;
    case K_SAMPLE:
        if (!(st = new_step(c, TALLY_STEP_SAMPLE))) return -1;
        WITH_KEY(c, "sample", {
            if (cJSON_IsNumber(x)) {
                if (get_count(c, x, 9.2233720368547758e18, &st->limit)) return -1;
                st->sample_pct = -1;
            } else if (!cJSON_IsString(x) || !x->valuestring ||
                       !tally_parse_sample(x->valuestring, &st->limit, &st->sample_pct)) {
                return fail(c, "expected a row count N or a percent \"P%%\" "
                            "(0 to 100)");
            }
        });
        if (val[K_SEED])
            WITH_KEY(c, "seed", {
                int64_t n;
                if (get_count(c, val[K_SEED], 9.2233720368547758e18, &n)) return -1;
                st->seed = (uint64_t)n;
            });
        return 0;
    case K_ROW_NUMBER:
        if (!(st = new_step(c, TALLY_STEP_ROW_NUMBER))) return -1;
        WITH_KEY(c, "with_row_number", {
            if (!cJSON_IsString(x) || !x->valuestring)
                return fail(c, "expected a string, got %s", type_word(x));
            if (!tally_text_push(&st->items, &st->n_items, x->valuestring, c->path.buf))
                return oom(c);
        });
        return 0;
    case K_DESCRIBE:
        if (!(st = new_step(c, TALLY_STEP_DESCRIBE))) return -1;
        WITH_KEY(c, "describe", {
            if (!cJSON_IsTrue(x)) return fail(c, "expected true");
        });
        return 0;
    case K_JOIN:
        WITH_KEY(c, "join", {
            if (step_join(c, x)) return -1;
        });
        return 0;
    default:
        return fail(c, "empty step");
    }
}

/* ---------------------------------------------------------- top level */

static const char *const top_keys[] = {"inputs", "input", "steps", "output",
                                       "delimiter", "null", "no_header", "header",
                                       "schema", "from", "to", "threads",
                                       "with_filename", "out_delimiter",
                                       "compress_level", "sorted", "no_infer",
                                       "quoted_as_string", "quiet",
                                       "out_null", "out_no_header", "ragged",
                                       "skip", "quote", "comment", "escape",
                                       "decimal_comma", "max_columns",
                                       "max_record_size", "parquet_compression",
                                       "row_group_size", "memory_limit", "temp_dir"};
enum { T_INPUTS, T_INPUT, T_STEPS, T_OUTPUT, T_DELIM, T_NULL, T_NO_HEADER, T_HEADER,
       T_SCHEMA, T_FROM, T_TO, T_THREADS, T_WITH_FILENAME, T_OUT_DELIM,
       T_COMPRESS_LEVEL, T_SORTED, T_NO_INFER, T_QUOTED_AS_STRING, T_QUIET,
       T_OUT_NULL, T_OUT_NO_HEADER, T_RAGGED, T_SKIP, T_QUOTE, T_COMMENT, T_ESCAPE,
       T_DECIMAL_COMMA, T_MAX_COLUMNS, T_MAX_RECORD_SIZE, T_PARQUET_COMPRESSION,
       T_ROW_GROUP_SIZE, T_MEMORY_LIMIT, T_TEMP_DIR, T_COUNT };

static int push_input(Ctx *c, const char *s)
{
    TallySpec *sp = c->spec;
    char **in = tally_realloc(sp->inputs, (size_t)(sp->n_inputs + 1) * sizeof *in);
    if (!in) return oom(c);
    sp->inputs = in;
    if (!(in[sp->n_inputs] = tally_strdup(s))) return oom(c);
    sp->n_inputs++;
    return 0;
}

static int top_value(Ctx *c, int k, const cJSON *v)
{
    TallySpec *sp = c->spec;
    switch (k) {
    case T_INPUT:
        if (!cJSON_IsString(v) || !v->valuestring || !v->valuestring[0])
            return fail(c, "expected a file name");
        return push_input(c, v->valuestring);
    case T_INPUTS: {
        if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0)
            return fail(c, "expected a non-empty array of file names");
        int i = 0;
        for (const cJSON *it = v->child; it; it = it->next, i++) {
            size_t mark;
            if (path_index(c, i, &mark)) return -1;
            if (!cJSON_IsString(it) || !it->valuestring || !it->valuestring[0])
                return fail(c, "expected a file name, got %s", type_word(it));
            if (push_input(c, it->valuestring)) return -1;
            path_pop(c, mark);
        }
        return 0;
    }
    case T_STEPS: {
        if (!cJSON_IsArray(v)) return fail(c, "expected an array of steps, got %s", type_word(v));
        int i = 0;
        for (const cJSON *it = v->child; it; it = it->next, i++) {
            size_t mark;
            if (path_index(c, i, &mark)) return -1;
            if (step(c, it)) return -1;
            path_pop(c, mark);
        }
        return 0;
    }
    case T_OUTPUT: return get_string(c, v, true, &sp->output);
    case T_NULL: return get_string(c, v, false, &sp->null_text);
    case T_OUT_NULL: return get_string(c, v, false, &sp->out_null);
    case T_PARQUET_COMPRESSION:
        if (get_string(c, v, false, &sp->parquet_compression)) return -1;
        if (!tally_parquet_codec_ok(sp->parquet_compression))
            return fail(c, "expected zstd, snappy, gzip, lz4 or none");
        return 0;
    case T_OUT_NO_HEADER:
        if (!cJSON_IsBool(v)) return fail(c, "expected true or false");
        sp->out_no_header = cJSON_IsTrue(v);
        return 0;
    case T_SKIP:
        if (get_count(c, v, 9.2233720368547758e18, &sp->skip)) return -1;
        if (sp->skip == 0) sp->skip = -1; /* given: no preamble sniffed (tally.h) */
        return 0;
    case T_MAX_COLUMNS:
        if (get_count(c, v, 2147483647, &sp->max_columns)) return -1;
        if (sp->max_columns < 1) return fail(c, "expected a count from 1 to 2147483647");
        return 0;
    case T_MAX_RECORD_SIZE: /* bytes, at least 1 MiB as --max-record-size */
        if (get_count(c, v, 9.2233720368547758e18, &sp->max_record_size)) return -1;
        if (sp->max_record_size < ((int64_t)1 << 20))
            return fail(c, "expected a number of bytes, 1048576 or more");
        return 0;
    case T_MEMORY_LIMIT: { /* a size as --memory-limit takes it */
        uint64_t b;
        if (!cJSON_IsString(v) || !v->valuestring || !tl_size_parse(v->valuestring, &b))
            return fail(c, "expected a size such as \"500MB\", \"4GiB\" or \"50%%\"");
        return get_string(c, v, true, &sp->memory_limit);
    }
    case T_TEMP_DIR: return get_string(c, v, true, &sp->temp_dir);
    case T_RAGGED: {
        static const char *const how[] = {"error", "pad", "skip"};
        for (int i = 0; i < 3; i++)
            if (cJSON_IsString(v) && v->valuestring && strcmp(v->valuestring, how[i]) == 0) {
                sp->ragged = i;
                return 0;
            }
        return fail(c, "expected \"error\", \"pad\" or \"skip\"");
    }
    case T_COMMENT:
        if (cJSON_IsString(v) && v->valuestring && strcmp(v->valuestring, "none") == 0) {
            sp->comment = '\n'; /* no comments, none sniffed (tally.h) */
            return 0;
        }
        if (!cJSON_IsString(v) || !v->valuestring || strlen(v->valuestring) != 1 ||
            v->valuestring[0] == '\n' || v->valuestring[0] == '\r')
            return fail(c, "expected a single character such as \"#\", or \"none\"");
        sp->comment = v->valuestring[0];
        return 0;
    case T_QUOTE:
    case T_ESCAPE: {
        int ch;
        if (cJSON_IsString(v) && v->valuestring && strcmp(v->valuestring, "none") == 0)
            ch = -1;
        else if (cJSON_IsString(v) && v->valuestring && strlen(v->valuestring) == 1 &&
                 v->valuestring[0] != '\n' && v->valuestring[0] != '\r')
            ch = (unsigned char)v->valuestring[0];
        else
            return fail(c, "expected a single character such as \"'\" or \"none\"");
        if (k == T_QUOTE) sp->quote = ch;
        else sp->escape = ch;
        return 0;
    }
    case T_SCHEMA: return get_string(c, v, true, &sp->schema);
    case T_FROM: return get_string(c, v, true, &sp->from);
    case T_TO: return get_string(c, v, true, &sp->to);
    case T_DELIM:
        if (cJSON_IsString(v) && v->valuestring && strcmp(v->valuestring, "\\t") == 0) {
            sp->delimiter = '\t'; /* "\\t" written as on the command line */
            return 0;
        }
        if (!cJSON_IsString(v) || !v->valuestring || strlen(v->valuestring) != 1 ||
            v->valuestring[0] == '\n' || v->valuestring[0] == '\r' ||
            v->valuestring[0] == '"')
            return fail(c, "expected a single character such as \",\" or \"\\t\"");
        sp->delimiter = v->valuestring[0];
        return 0;
    case T_NO_HEADER:
        if (!cJSON_IsBool(v)) return fail(c, "expected true or false");
        sp->no_header = cJSON_IsTrue(v);
        return 0;
    case T_HEADER:
        if (!cJSON_IsBool(v)) return fail(c, "expected true or false");
        sp->header = cJSON_IsTrue(v);
        return 0;
    case T_WITH_FILENAME:
        if (!cJSON_IsBool(v)) return fail(c, "expected true or false");
        sp->with_filename = cJSON_IsTrue(v);
        return 0;
    case T_SORTED:
        if (!cJSON_IsBool(v)) return fail(c, "expected true or false");
        sp->sorted = cJSON_IsTrue(v);
        return 0;
    case T_NO_INFER:
        if (!cJSON_IsBool(v)) return fail(c, "expected true or false");
        sp->no_infer = cJSON_IsTrue(v);
        return 0;
    case T_QUOTED_AS_STRING:
        if (!cJSON_IsBool(v)) return fail(c, "expected true or false");
        sp->quoted_as_string = cJSON_IsTrue(v);
        return 0;
    case T_DECIMAL_COMMA:
        if (!cJSON_IsBool(v)) return fail(c, "expected true or false");
        sp->decimal_comma = cJSON_IsTrue(v);
        return 0;
    case T_QUIET:
        if (!cJSON_IsBool(v)) return fail(c, "expected true or false");
        sp->quiet = cJSON_IsTrue(v);
        return 0;
    case T_OUT_DELIM:
        if (cJSON_IsString(v) && v->valuestring && strcmp(v->valuestring, "\\t") == 0) {
            sp->out_delimiter = '\t';
            return 0;
        }
        if (!cJSON_IsString(v) || !v->valuestring || strlen(v->valuestring) != 1 ||
            v->valuestring[0] == '\n' || v->valuestring[0] == '\r' ||
            v->valuestring[0] == '"')
            return fail(c, "expected a single character such as \",\" or \"\\t\"");
        sp->out_delimiter = v->valuestring[0];
        return 0;
    case T_COMPRESS_LEVEL: {
        int64_t n;
        if (get_count(c, v, 22, &n)) return -1;
        if (n < 1) return fail(c, "expected a level from 1 to 22");
        sp->compress_level = (int)n;
        return 0;
    }
    case T_ROW_GROUP_SIZE: {
        int64_t n;
        if (get_count(c, v, INT32_MAX, &n)) return -1;
        if (n < 1) return fail(c, "expected a row count from 1 to 2147483647");
        sp->row_group_size = n;
        return 0;
    }
    case T_THREADS: {
        int64_t n;
        if (get_count(c, v, 4096, &n)) return -1;
        sp->threads = (int)n;
        return 0;
    }
    default:
        return 0;
    }
}

static int top(Ctx *c, const cJSON *root)
{
    char sug[64];
    const cJSON *seen[T_COUNT] = {0};
    if (!cJSON_IsObject(root))
        return fail_file(c, "expected a JSON object such as {\"inputs\": [...], \"steps\": [...]}, got %s",
                         type_word(root));
    if (check_dups(c, root)) return -1;
    for (const cJSON *it = root->child; it; it = it->next) {
        const char *key = it->string ? it->string : "";
        int k = find_key(top_keys, T_COUNT, key);
        if (k < 0)
            return fail_file(c, "unknown key %s%s", tl_quote_name(key).s,
                             near(key, top_keys, T_COUNT, sug, sizeof sug));
        seen[k] = it;
    }
    if (seen[T_INPUT] && seen[T_INPUTS])
        return fail_file(c, "give \"input\" or \"inputs\", not both");
    /* a fixed order, so errors do not depend on the order of the keys */
    for (int k = 0; k < T_COUNT; k++) {
        size_t mark;
        if (!seen[k]) continue;
        if (path_key(c, top_keys[k], &mark)) return -1;
        if (top_value(c, k, seen[k])) return -1;
        path_pop(c, mark);
    }
    return 0;
}

/* ------------------------------------------------------------ reading */

/* Read the whole file (or standard input for "-") into *buf (tl_malloc'd,
 * NUL-terminated). */
static int read_file(Ctx *c, const char *path, char **buf, size_t *len)
{
    bool std = strcmp(path, "-") == 0;
    FILE *f = std ? stdin : fopen(path, "rb");
    size_t n = 0, cap = 0;
    char *b = NULL;
    *buf = NULL;
    if (!f)
        return fail_raw(c, "cannot open pipeline %s: %s", tl_quote_name(c->file).s,
                        strerror(errno));
    for (;;) {
        if (cap - n < 4096 + 1) {
            size_t nc = cap ? cap * 2 : 8192;
            char *t = tl_realloc(b, nc);
            if (!t) {
                tl_free(b);
                if (!std) fclose(f);
                return oom(c);
            }
            b = t;
            cap = nc;
        }
        size_t got = fread(b + n, 1, cap - n - 1, f);
        n += got;
        if (n > MAX_FILE) {
            tl_free(b);
            if (!std) fclose(f);
            return fail_raw(c, "pipeline %s is too large (over %zu MiB)", tl_quote_name(c->file).s,
                            MAX_FILE >> 20);
        }
        if (got == 0) break;
    }
    if (ferror(f)) {
        int e = errno;
        tl_free(b);
        if (!std) fclose(f);
        return fail_raw(c, "cannot read pipeline %s: %s", tl_quote_name(c->file).s, strerror(e));
    }
    if (!std) fclose(f);
    b[n] = 0;
    *buf = b;
    *len = n;
    return 0;
}

static bool cjson_oom; /* an allocation failed inside cJSON */

static void *cjson_malloc(size_t n)
{
    void *p = tl_malloc(n);
    if (!p) cjson_oom = true;
    return p;
}

static void cjson_free(void *p) { tl_free(p); }

/* The folder of path ("." for a bare file name), spec-owned. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return tally_strdup(".");
    if (slash == path) return tally_strdup("/");
    size_t n = (size_t)(slash - path);
    char *d = tally_alloc(n + 1);
    if (d) memcpy(d, path, n);
    return d;
}

/* Read the pipeline file at path into *spec (zeroed by the caller).  Returns
 * 0, or the exit status (2 for a bad file, 1 for out of memory) with err
 * filled and spec freed. */
int tally_spec_from_json(const char *path, TallySpec *spec, TallyError *err)
{
    Ctx c;
    char *text = NULL;
    size_t len = 0;
    cJSON *root = NULL;
    int rc = 0;
    memset(&c, 0, sizeof c);
    c.spec = spec;
    c.err = err;
    err->exit_code = 0;
    err->message[0] = 0;
    c.file = path; /* messages name the file as given */

    if (read_file(&c, path, &text, &len)) goto fail;
    size_t skip = len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0; /* BOM */
    const char *nul = memchr(text + skip, 0, len - skip);
    const char *end = NULL;
    cJSON_Hooks hooks = {cjson_malloc, cjson_free};
    cJSON_InitHooks(&hooks);
    cjson_oom = false;
    if (!nul) root = cJSON_ParseWithLengthOpts(text + skip, len - skip + 1, &end, 1);
    if (!root) {
        if (cjson_oom) {
            oom(&c);
            goto fail;
        }
        const char *at = nul ? nul : end ? end : text + skip;
        if (at < text) at = text;
        if (at > text + len) at = text + len;
        size_t line = 1, col = 1;
        for (const char *s = text + skip; s < at; s++) {
            if (*s == '\n') line++, col = 1;
            else if (((unsigned char)*s & 0xC0) != 0x80) col++;
        }
        fail_file(&c, "invalid JSON near line %zu, column %zu%s", line, col,
                  nul ? " (a NUL byte)" : "");
        goto fail;
    }
    if (top(&c, root)) goto fail;
    if (strcmp(path, "-") != 0 && !(spec->spec_dir = dir_of(path))) {
        oom(&c);
        goto fail;
    }
    goto done;
fail:
    rc = err->exit_code ? err->exit_code : 2;
    err->exit_code = rc;
    tally_spec_free(spec);
    memset(spec, 0, sizeof *spec);
done:
    cJSON_Delete(root);
    tl_free(text);
    tl_free(c.path.buf);
    return rc;
}
