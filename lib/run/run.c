/*
 * run.c -- tally_run: the driver behind every mode.
 *
 * A run is a loop of attempts:
 *
 *   read options   delimiter, --null, --no-header, --schema (parsed here),
 *                  --from; inputs expanded (globs, the pipeline file's folder)
 *                  into one list with one group per scan: the main inputs,
 *                  then every join's right side (nested pipelines included)
 *                  in the order the planner meets them (steps in order,
 *                  depth first).  A right side's options default to its
 *                  enclosing pipeline's (delimiter, null, no_header, from;
 *                  not the schema).
 *   attempt        build the plan (opens the readers, learns the schemas)
 *                  -> optimize (unless --no-optimize) -> operators
 *                  -> pull batches from the root into the writer
 *   restart        a reader met a value its column's type cannot hold: it
 *                  recorded the wider type in this run's hints and returned
 *                  TL_ERR_RESTART.  The output written so far is discarded
 *                  (tl_sink_reset), the plan freed, and the next attempt
 *                  plans with the hints, so the result is as if the wider
 *                  type had been known from the start.  Types only widen, so
 *                  this ends; an attempt that restarts without widening
 *                  anything is reported instead of looping.  Planning
 *                  restarts too when a step names a column an input's
 *                  sample did not hold and its reader finds it further
 *                  on (tl_reader_more_columns; once an input).
 *   settle         a run whose output can stream (below, "streaming")
 *                  settles its types first, so it never restarts
 *   commit         only a complete run commits its sink; on any error the
 *                  sink is closed without commit, so an existing output file
 *                  is left untouched and standard output gets nothing
 *                  (a streaming one keeps the rows already written).
 *
 * The modes share the loop: TALLY_RUN writes the pipeline's result as CSV or
 * TSV; TALLY_SCHEMA runs the bare scan over everything (all columns, with
 * restarts) and prints `column,type` rows; TALLY_EXPLAIN plans (with the
 * first batch's types) and prints the plan text.  The counters of the
 * successful attempt (plus the number of restarts) go back to the caller
 * in a TallyStats, which the CLI prints for --stats.
 */
#include "../opt/opt.h"
#include "../plan/plan.h"
#include "../../formats/compress.h"
#include "../../formats/registry.h"
#include "../../formats/infer.h"
#include "../../formats/spill.h"
#include "../core/budget.h"
#include "../core/ctx.h"
#include "../core/pool.h"
#include "../exec/ops.h"
#include "pattern.h"

#include <ctype.h>
#include <glob.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* The inputs of one scan: r->display/paths/hints [first, first + n). */
typedef struct Group {
    int first, n;
    TlReadOptions read;
    TlSchema fixed;           /* --schema / --join-schema */
    bool has_schema;
} Group;

typedef struct Run {
    const TallySpec *spec;
    TallyMode mode;
    TlReadOptions read;
    TlSchema fixed;           /* --schema */
    char **display, **paths;  /* expanded inputs */
    int n_inputs, cap_inputs;
    TlTypeHints *hints;       /* per input */
    Group *groups;            /* groups[0]: the main inputs */
    int n_groups, cap_groups;
    TlPlanGroup *plan_groups; /* per group, for the planner */
    char *out_path;           /* NULL: standard output */
    bool out_unnamed;         /* out_path's suffix names no format, nor
                                 does --to (unnamed_format) */
    const char *out_format;   /* "csv" / "tsv" / "ndjson" / "json" / "table" */
    const char *out_comp;     /* "gz" / "zst" from the -o suffix, or NULL */
    TlSink *sink;
    TlExecStats stats;
    int64_t rows_written;
    char *converted;          /* "a=10 b=10" of the successful attempt */
    TlCtx ctx;                /* the run's context (lib/core/ctx.h): its
                                 tuning, read once at the start */
    bool settled;             /* the types were settled for streaming (or
                                 found unsettleable): not asked again */
    bool streaming;           /* standard output gets rows as they come */
    TlBudget budget;          /* ctx.budget: the memory limit, the temp
                                 folder, the spill counters */
    char *temp_dir;           /* budget.temp_dir (owned) */
} Run;

/* See tally.h: the SIGBUS handler for mapped inputs (formats/mapped.c). */
void tally_guard_inputs(void)
{
    tl_input_guard_install();
}

/* Number of online processors (at least 1). */
int tally_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 4096 ? 4096 : (int)n;
}

/* ------------------------------------------------------------ options */

static char *trim(char *s)
{
    char *e;
    while (isspace((unsigned char)*s)) s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) *--e = '\0';
    return s;
}

/* --schema 'name:type,...' into r->fixed.  A name may be double-quoted
 * ("unit price":float); the type is the text after the last colon. */
static TlStatus parse_schema(TlSchema *fixed, const char *text, const char *flag,
                             TlError *err)
{
    char *copy = tl_strdup(text), *item, *save = NULL;
    TlStatus st = TL_OK;
    if (!copy) return tl_error_oom(err);
    for (item = strtok_r(copy, ",", &save); item && st == TL_OK;
         item = strtok_r(NULL, ",", &save)) {
        char *colon = strrchr(item, ':'), *name, *type;
        TlType t;
        if (!colon) {
            st = tl_error(err, TL_ERR_USAGE, "%s: expected NAME:TYPE, got %s", flag,
                          tl_quote_name(trim(item)).s);
            break;
        }
        *colon = '\0';
        name = trim(item);
        type = trim(colon + 1);
        size_t nl = strlen(name);
        if (nl >= 2 && name[0] == '"' && name[nl - 1] == '"') {
            name[nl - 1] = '\0';
            name++;
        }
        if (!*name) {
            st = tl_error(err, TL_ERR_USAGE, "%s: a column name is missing", flag);
            break;
        }
        if (!tl_type_parse(type, strlen(type), &t) || t == TL_TNULL) {
            st = tl_error(err, TL_ERR_USAGE,
                          "%s: unknown type %s for column %s", flag,
                          tl_quote_name(type).s, tl_quote_name(name).s);
            break;
        }
        if (tl_schema_find(fixed, name) >= 0) {
            st = tl_error(err, TL_ERR_USAGE, "%s: column %s given twice", flag,
                          tl_quote_name(name).s);
            break;
        }
        st = tl_schema_add(fixed, name, t, err);
    }
    tl_free(copy);
    return st;
}

/* dir + "/" + path, or a copy of path when it is absolute or dir is NULL. */
static char *join_path(const char *dir, const char *path)
{
    if (!dir || !*dir || path[0] == '/' || strcmp(path, "-") == 0)
        return tl_strdup(path);
    size_t n = strlen(dir) + strlen(path) + 2;
    char *s = tl_malloc(n);
    if (s) snprintf(s, n, "%s/%s", dir, path);
    return s;
}

static TlStatus add_input(Run *r, const char *display, const char *path,
                          TlError *err)
{
    if (r->n_inputs == r->cap_inputs) {
        int nc = r->cap_inputs ? r->cap_inputs * 2 : 4;
        char **d = tl_realloc(r->display, (size_t)nc * sizeof *d);
        if (!d) return tl_error_oom(err);
        r->display = d;
        char **p = tl_realloc(r->paths, (size_t)nc * sizeof *p);
        if (!p) return tl_error_oom(err);
        r->paths = p;
        r->cap_inputs = nc;
    }
    r->display[r->n_inputs] = tl_strdup(display);
    r->paths[r->n_inputs] = tl_strdup(path);
    if (!r->display[r->n_inputs] || !r->paths[r->n_inputs]) {
        tl_free(r->display[r->n_inputs]);
        tl_free(r->paths[r->n_inputs]);
        return tl_error_oom(err);
    }
    r->n_inputs++;
    return TL_OK;
}

/* Inputs: relative to the pipeline file's folder; a pattern with * ? [ that
 * names no file is expanded (sorted), and must match something; one with
 * `**` or `{a,b}` is expanded by pattern.c (sorted too). */
static TlStatus expand_inputs(Run *r, const TallySpec *s, const char *dir,
                              TlError *err)
{
    size_t dl = dir ? strlen(dir) : 0;
    for (int i = 0; i < s->n_inputs; i++) {
        const char *in = s->inputs[i];
        char *path = join_path(dir, in);
        struct stat sb;
        TlStatus st = TL_OK;
        if (!path) return tl_error_oom(err);
        bool ext = tl_glob_extended(in);
        if ((ext || strpbrk(in, "*?[")) && stat(path, &sb) == 0) ext = false;
        if (ext) {
            char **m = NULL;
            size_t nm = 0;
            st = tl_glob_expand(path, &m, &nm, err);
            if (st == TL_OK && nm == 0)
                st = tl_error(err, TL_ERR_IO, "no file matches %s", tl_quote_name(in).s);
            for (size_t k = 0; k < nm; k++) {
                const char *shown = m[k];
                if (dir && in[0] != '/' && strncmp(m[k], dir, dl) == 0 && m[k][dl] == '/')
                    shown = m[k] + dl + 1;
                if (st == TL_OK) st = add_input(r, shown, m[k], err);
                tl_free(m[k]);
            }
            tl_free(m);
        } else if (strpbrk(in, "*?[") && stat(path, &sb) != 0) {
            glob_t g;
            int rc = glob(path, 0, NULL, &g);
            if (rc == GLOB_NOMATCH) {
                st = tl_error(err, TL_ERR_IO, "no file matches %s", tl_quote_name(in).s);
            } else if (rc != 0) {
                st = tl_error(err, TL_ERR_IO, "cannot expand %s", tl_quote_name(in).s);
            } else {
                for (size_t k = 0; k < g.gl_pathc && st == TL_OK; k++) {
                    const char *m = g.gl_pathv[k];
                    const char *shown = m;
                    if (dir && in[0] != '/' && strncmp(m, dir, dl) == 0 && m[dl] == '/')
                        shown = m + dl + 1;
                    st = add_input(r, shown, m, err);
                }
            }
            if (rc != GLOB_NOMATCH) globfree(&g);
        } else {
            st = add_input(r, in, path, err);
        }
        tl_free(path);
        TL_TRY(st);
    }
    return TL_OK;
}

/* A group for spec s (read options from `parent` unless s sets them), then
 * one per join step's right side, depth first. */
static TlStatus add_group(Run *r, const TallySpec *s, const TlReadOptions *parent,
                          const char *dir, int depth, TlError *err)
{
    TlReadOptions read;
    Group *g;
    int gi;
    if (depth > 64)
        return tl_error(err, TL_ERR_USAGE, "joins are nested too deeply");
    if (r->n_groups == r->cap_groups) {
        int nc = r->cap_groups ? r->cap_groups * 2 : 4;
        Group *v = tl_realloc(r->groups, (size_t)nc * sizeof *v);
        if (!v) return tl_error_oom(err);
        r->groups = v;
        r->cap_groups = nc;
    }
    gi = r->n_groups++;
    g = &r->groups[gi];
    memset(g, 0, sizeof *g);
    if (parent) g->read = *parent;
    g->read.schema = NULL;
    if (s->delimiter) g->read.delimiter = s->delimiter;
    if (s->null_text) g->read.null_text = s->null_text;
    if (s->header && s->no_header)
        return tl_error(err, TL_ERR_USAGE, "--header and --no-header exclude each other "
                        "(line 1 is either the header or data)");
    if (s->header || s->no_header) { /* a join's own choice over the enclosing one */
        g->read.header = s->header;
        g->read.no_header = s->no_header;
    }
    if (s->ragged) g->read.ragged = (uint8_t)s->ragged; /* TlRagged */
    if (s->skip) g->read.skip = s->skip;
    if (s->max_record_size) g->read.max_record = (size_t)s->max_record_size;
    if (s->max_columns) g->read.max_columns = s->max_columns;
    if (s->quote) g->read.quote = s->quote;
    if (s->escape) g->read.escape = s->escape;
    if (s->decimal_comma) g->read.decimal_comma = true;
    if (s->comment) g->read.comment = s->comment;
    if (s->from) g->read.from = s->from;
    if (s->no_infer) g->read.no_infer = true;
    if (s->quoted_as_string) g->read.quoted_as_string = true;
    if (s->quiet) g->read.quiet = true;
    g->read.with_filename = s->with_filename;
    if (s->schema) {
        g->has_schema = true;
        TL_TRY(parse_schema(&g->fixed, s->schema, gi ? "--join-schema" : "--schema",
                            err));
    }
    if (g->read.no_infer && tl_schema_find(&g->fixed, "*") < 0) {
        /* the last entry, so the ones given by name win (infer.h) */
        g->has_schema = true;
        TL_TRY(tl_schema_add(&g->fixed, "*", TL_TSTRING, err));
    }
    g->first = r->n_inputs;
    TL_TRY(expand_inputs(r, s, dir, err));
    g = &r->groups[gi];
    g->n = r->n_inputs - g->first;
    if (g->n == 0)
        return tl_error(err, TL_ERR_USAGE, gi ? "no input given for a join"
                                              : "no input given");
    read = g->read;
    for (int i = 0; i < s->n_steps; i++) {
        const TallyStep *st = &s->steps[i];
        if (st->kind != TALLY_STEP_JOIN || !st->join_spec) continue;
        TL_TRY(add_group(r, st->join_spec, &read,
                         st->join_spec->spec_dir ? st->join_spec->spec_dir : dir,
                         depth + 1, err));
    }
    return TL_OK;
}

/* A pipe (or socket) is consumed by reading it: the same one named twice
 * in a run (as two inputs, or a main input and a join's right side) would
 * wait forever at its second open for a writer that has gone.  So naming
 * one twice is a usage error; standard input (-) counts whatever it is (it
 * is read once; the cross-group case keeps its own older message). */
static TlStatus check_pipes(const Run *r, TlError *err)
{
    struct stat *ids = tl_calloc((size_t)r->n_inputs + 1, sizeof *ids);
    int *seen = tl_calloc((size_t)r->n_inputs + 1, sizeof *seen);
    int n_seen = 0; /* the pipes so far, compared with each new one */
    TlStatus st = TL_OK;
    if (!ids || !seen) {
        tl_free(ids);
        tl_free(seen);
        return tl_error_oom(err);
    }
    for (int i = 0; i < r->n_inputs && st == TL_OK; i++) {
        bool std = strcmp(r->paths[i], "-") == 0;
        if (std ? fstat(0, &ids[i]) != 0 : stat(r->paths[i], &ids[i]) != 0)
            continue; /* opening it reports the error */
        if (!std && !S_ISFIFO(ids[i].st_mode) && !S_ISSOCK(ids[i].st_mode)) continue;
        for (int k = 0; k < n_seen && st == TL_OK; k++) {
            int j = seen[k];
            bool same = (std && strcmp(r->paths[j], "-") == 0) ||
                        (ids[i].st_dev == ids[j].st_dev && ids[i].st_ino == ids[j].st_ino);
            if (!same) continue;
            if (strcmp(r->display[i], r->display[j]) == 0)
                st = tl_error(err, TL_ERR_USAGE, "input %s is given twice; "
                              "a pipe or standard input can be read only once",
                              tl_quote_name(r->display[i]).s);
            else
                st = tl_error(err, TL_ERR_USAGE, "inputs %s and %s are "
                              "the same pipe; a pipe can be read only once",
                              tl_quote_name(r->display[j]).s, tl_quote_name(r->display[i]).s);
        }
        seen[n_seen++] = i;
    }
    tl_free(ids);
    tl_free(seen);
    return st;
}

/* Every group's inputs, then the hints and the planner's view. */
static TlStatus expand_all(Run *r, TlError *err)
{
    int stdin_groups = 0;
    TL_TRY(add_group(r, r->spec, NULL, r->spec->spec_dir, 0, err));
    for (int k = 0; k < r->n_groups; k++) {
        Group *g = &r->groups[k];
        bool std = false;
        g->read.ctx = &r->ctx;
        if (g->has_schema) g->read.schema = &g->fixed;
        for (int i = g->first; i < g->first + g->n; i++)
            if (strcmp(r->paths[i], "-") == 0) std = true;
        stdin_groups += std;
    }
    if (stdin_groups > 1)
        return tl_error(err, TL_ERR_USAGE,
                        "standard input (-) can feed only one side of a join");
    TL_TRY(check_pipes(r, err));
    r->read = r->groups[0].read;
    r->hints = tl_calloc((size_t)r->n_inputs, sizeof *r->hints);
    r->plan_groups = tl_calloc((size_t)r->n_groups, sizeof *r->plan_groups);
    if (!r->hints || !r->plan_groups) return tl_error_oom(err);
    for (int k = 0; k < r->n_groups; k++) {
        r->plan_groups[k].first = r->groups[k].first;
        r->plan_groups[k].n = r->groups[k].n;
        r->plan_groups[k].read = &r->groups[k].read;
    }
    return TL_OK;
}

static TlStatus prepare(Run *r, TlError *err)
{
    const TallySpec *s = r->spec;
    TL_TRY(expand_all(r, err));
    if (r->mode == TALLY_RUN && s->output && strcmp(s->output, "-") != 0) {
        r->out_path = join_path(s->spec_dir, s->output);
        if (!r->out_path) return tl_error_oom(err);
    }
    return TL_OK;
}

/* -o PATH with no suffix that names a format (and no --to): a usage error
 * for a file (a new or regular target: a file named out.txt or out that
 * holds CSV is a trap for whoever opens it later), CSV for a stream (a
 * device, FIFO or descriptor has no name to mislead).  Asked once the sink
 * is open, so a path that cannot be written at all says so first; the
 * sink, not committed, leaves nothing behind. */
static TlStatus unnamed_format(Run *r, TlError *err)
{
    TlTarget t;
    TlTargetKind kind;
    const char *base = strrchr(r->spec->output, '/'), *dot;
    size_t n;
    char text[256], binary[128];
    TL_TRY(tl_target_resolve(r->out_path, &t, err));
    kind = t.kind;
    tl_target_free(&t);
    if (kind == TL_TARGET_STREAM) return TL_OK;
    base = base ? base + 1 : r->spec->output;
    n = strlen(base) - (r->out_comp ? strlen(r->out_comp) + 1 : 0);
    for (dot = base + n; dot > base && dot[-1] != '.'; dot--) {
    }
    /* the suffixes written: text formats' also compressed, binary ones' not */
    tl_format_list(text, sizeof text, TL_FORMATS_WRITE | TL_FORMATS_TEXT | TL_FORMATS_SUFFIXES,
                   " ");
    tl_format_list(binary, sizeof binary,
                   TL_FORMATS_WRITE | TL_FORMATS_BINARY | TL_FORMATS_SUFFIXES, " ");
    if (dot > base + 1)
        return tl_error(err, TL_ERR_USAGE, "-o %s: the suffix \".%.*s\" names no output "
                        "format (%s, each also with .gz or .zst, or %s); --to FORMAT sets "
                        "one", tl_quote_name(r->spec->output).s, (int)(base + n - dot), dot,
                        text, binary);
    return tl_error(err, TL_ERR_USAGE, "-o %s: no suffix names the output format (%s, "
                    "each also with .gz or .zst, or %s); --to FORMAT sets one",
                    tl_quote_name(r->spec->output).s, text, binary);
}

/* The output format: --to, else the -o suffix (see unnamed_format), else
 * CSV. */
static TlStatus output_format(Run *r, TlError *err)
{
    const char *fmt = r->spec->to, *sfx = NULL;
    const TlFormat *f;
    if (r->out_path) sfx = tl_format_from_path(r->out_path, &r->out_comp);
    if (!fmt) fmt = sfx;
    if (!fmt && r->out_path) r->out_unnamed = true;
    if (!fmt) fmt = "csv";
    f = tl_format_named(fmt);
    if (!f || !f->write) {
        char list[256];
        return tl_error(err, TL_ERR_USAGE, "unsupported output format %s (tally writes %s)",
                        tl_quote_name(fmt).s,
                        tl_format_list(list, sizeof list, TL_FORMATS_WRITE, ", "));
    }
    r->out_format = f->name;
    if (strcmp(r->out_format, "parquet") == 0) {
        /* Parquet compresses its pages itself (--parquet-compression) */
        if (r->out_comp)
            return tl_error(err, TL_ERR_USAGE, "-o %s: Parquet output is compressed "
                            "inside the file (--parquet-compression), not as .%s",
                            tl_quote_name(r->spec->output).s, r->out_comp);
    } else {
        if (r->spec->compress_level && !r->out_comp)
            return tl_error(err, TL_ERR_USAGE, "--compress-level needs a compressed "
                            "output (-o FILE.gz, -o FILE.zst or Parquet)");
        if (r->spec->parquet_compression || r->spec->row_group_size)
            return tl_error(err, TL_ERR_USAGE, "%s applies to Parquet output, not %s",
                            r->spec->parquet_compression ? "--parquet-compression"
                                                         : "--row-group-size",
                            r->out_format);
    }
    if (r->spec->out_delimiter && strcmp(r->out_format, "csv") != 0)
        return tl_error(err, TL_ERR_USAGE,
                        "--out-delimiter applies to CSV output, not %s", r->out_format);
    if ((r->spec->out_null || r->spec->out_no_header) &&
        (strcmp(r->out_format, "ndjson") == 0 || strcmp(r->out_format, "table") == 0 ||
         strcmp(r->out_format, "parquet") == 0))
        return tl_error(err, TL_ERR_USAGE, "%s applies to CSV and TSV output, not %s",
                        r->spec->out_null ? "--out-null" : "--out-no-header",
                        r->out_format);
    if (r->spec->out_null) {
        /* the null text must not end a field or a line of the output */
        const char *bad = strcmp(r->out_format, "tsv") == 0 ? "\t\n\r" : "\"\n\r";
        char delim = r->spec->out_delimiter ? r->spec->out_delimiter : ',';
        if (strpbrk(r->spec->out_null, bad) ||
            (strcmp(r->out_format, "csv") == 0 && strchr(r->spec->out_null, delim)))
            return tl_error(err, TL_ERR_USAGE,
                            "--out-null \"%s\": %s output cannot write null as text "
                            "holding a %s, a line break%s", r->spec->out_null,
                            r->out_format, strcmp(r->out_format, "tsv") == 0 ? "tab" : "quote",
                            strcmp(r->out_format, "csv") == 0 ? " or the delimiter" : "");
    }
    return TL_OK;
}

/* ------------------------------------------------------------ attempts */

static TlStatus hints_copy(const Run *r, TlTypeHints *snap, TlError *err)
{
    for (int i = 0; i < r->n_inputs; i++)
        TL_TRY(tl_schema_copy(&snap[i].cols, &r->hints[i].cols, err));
    return TL_OK;
}

static bool hints_equal(const Run *r, const TlTypeHints *snap)
{
    for (int i = 0; i < r->n_inputs; i++)
        if (!tl_schema_same(&snap[i].cols, &r->hints[i].cols)) return false;
    return true;
}

/* "name=count ..." for the columns the readers converted, in the order of
 * the scan's (full) schema, counts summed over inputs (by the scan). */
static TlStatus collect_converted(Run *r, const TlPlan *p, TlError *err)
{
    const TlSchema *u = tl_plan_node(p, p->scan)->schema;
    const int64_t *sum = p->converted;
    size_t cap = 64, len = 0;
    char *s = tl_malloc(cap);
    if (!s) return tl_error_oom(err);
    s[0] = '\0';
    for (int j = 0; sum && j < u->n_fields; j++) {
        if (sum[j] == 0) continue;
        size_t need = len + strlen(u->fields[j].name) + 32;
        if (need > cap) {
            while (cap < need) cap *= 2;
            char *ns = tl_realloc(s, cap);
            if (!ns) {
                tl_free(s);
                return tl_error_oom(err);
            }
            s = ns;
        }
        len += (size_t)snprintf(s + len, cap - len, "%s%s=%lld", len ? " " : "",
                                u->fields[j].name, (long long)sum[j]);
    }
    tl_free(r->converted);
    r->converted = s;
    return TL_OK;
}

static TlStatus build_plan(Run *r, bool no_steps, TlPlan **out, TlError *err)
{
    TlPlanOptions po;
    memset(&po, 0, sizeof po);
    po.display = r->display;
    po.paths = r->paths;
    po.n_inputs = r->n_inputs;
    po.read = &r->read;
    po.hints = r->hints;
    po.groups = r->plan_groups;
    po.n_groups = r->n_groups;
    po.no_steps = no_steps;
    po.now = r->ctx.now;
    TL_TRY(tl_plan_build(r->spec, &po, out, err));
    if (!no_steps && !r->spec->no_optimize) {
        TlStatus st = tl_opt_run(*out, err);
        if (st != TL_OK) {
            tl_plan_free(*out);
            *out = NULL;
            return st;
        }
    }
    return TL_OK;
}

/* ------------------------------------------------------------ streaming
 *
 * A run writes to standard output as it goes (tl_sink_stream) only when
 * nothing it writes can be taken back: its plan is a chain of streaming
 * steps (scan, filter, project, limit), its output a text format that
 * writes rows as they come, and no restart can happen, because every
 * column's type is settled before the first row: fixed (--schema for
 * every column, --no-infer, Parquet's own) or found by the type pass
 * over the whole input (tl_reader_type_pass).  The pass is for regular
 * files whose reader has one and a plan without a limit (a limit reads a
 * prefix, whose types are the run's; its output is small and waits);
 * standard input and pipes stream only with fixed types. */

/* Whether the output is a text format written to standard output. */
static bool stdout_text(const Run *r)
{
    const char *f = r->out_format;
    return !r->out_path && (strcmp(f, "csv") == 0 || strcmp(f, "tsv") == 0 ||
                            strcmp(f, "ndjson") == 0 || strcmp(f, "json") == 0);
}

/* Before planning, from the spec alone: the run may stream with types
 * fixed by --schema or --no-infer, so its pipes (standard input, FIFOs)
 * are read as they come (TlCtx.stream_pipes), and rows can go out while
 * their writers still write.  Planning decides for good (settle_types);
 * a pipe read so serves a buffered run just as well. */
static bool pipes_may_stream(const Run *r)
{
    const TallySpec *s = r->spec;
    if (r->mode != TALLY_RUN || !stdout_text(r) || r->n_groups != 1 ||
        !r->groups[0].has_schema)
        return false;
    for (int i = 0; i < s->n_steps; i++) {
        TallyStepKind k = s->steps[i].kind;
        if (k == TALLY_STEP_LIMIT ? s->steps[i].n_by > 0
                                  : k != TALLY_STEP_FILTER && k != TALLY_STEP_SELECT &&
                                        k != TALLY_STEP_WITH && k != TALLY_STEP_DROP &&
                                        k != TALLY_STEP_RENAME)
            return false;
    }
    return true;
}

/* The plan from top down is scan, filter, project and limit nodes only;
 * *limit: one is a limit. */
static bool chain_streams(const TlPlan *p, TlPlanId top, bool *limit)
{
    *limit = false;
    for (TlPlanId id = top; id != TL_NO_ID;) {
        const TlPlanNode *n = tl_plan_node(p, id);
        switch (n->kind) {
        case TL_PLAN_SCAN: return true;
        case TL_PLAN_LIMIT: *limit = true; break;
        case TL_PLAN_FILTER: case TL_PLAN_PROJECT: break;
        default: return false;
        }
        id = n->child;
    }
    return false;
}

/* Every column of cols has its type from --schema (or --no-infer's *). */
static bool all_fixed(const TlReadOptions *read, const TlSchema *cols)
{
    if (!read->schema) return false;
    for (int c = 0; c < cols->n_fields; c++)
        if (tl_fixed_find(read->schema, cols->fields[c].name) < 0) return false;
    return true;
}

static bool regular_file(const char *path)
{
    struct stat sb;
    return strcmp(path, "-") != 0 && stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* The type pass over input in (a fresh reader), into its hints; *changed
 * when they widened.  With counts, what it read is added there (schema
 * mode's --stats). */
static TlStatus type_pass(const TlPlanInput *in, bool *changed, TlExecStats *counts,
                          TlError *err)
{
    TlReader *rd = NULL;
    TlSchema before = {0};
    int64_t rows, bytes, morsels;
    TlStatus st = tl_schema_copy(&before, &in->hints->cols, err);
    if (st == TL_OK) st = tl_reader_open(in->path, in->read, in->hints, &rd, err);
    if (st == TL_OK && !tl_reader_can_type_pass(rd))
        st = tl_error(err, TL_ERR_DATA, "internal error: no type pass for %s",
                      tl_quote_name(in->display).s);
    if (st == TL_OK) st = tl_reader_type_pass(rd, in->hints, &rows, &bytes, &morsels, err);
    if (st == TL_OK && counts) {
        counts->rows_read += rows;
        counts->bytes_read += bytes;
        counts->batches_read += morsels;
    }
    if (st == TL_OK && !tl_schema_same(&before, &in->hints->cols)) *changed = true;
    tl_reader_close(rd);
    tl_schema_free(&before);
    return st;
}

/* Whether input in can have its types settled by a pass (when not fixed). */
static bool can_pass(const TlPlanInput *in)
{
    TlReader *rd = NULL;
    TlError e;
    bool ok;
    if (!regular_file(in->path)) return false;
    if (in->reader) return tl_reader_can_type_pass(in->reader);
    if (tl_reader_open(in->path, in->read, NULL, &rd, &e) != TL_OK) return false;
    ok = tl_reader_can_type_pass(rd);
    tl_reader_close(rd);
    return ok;
}

/* Decide whether this run streams (see above), settling the types with
 * passes when it needs them; *changed: a pass widened a hint (the plan
 * must be built again).  Once a run. */
static TlStatus settle_types(Run *r, const TlPlan *p, TlPlanId top, bool *changed,
                             TlError *err)
{
    bool limit, need_pass = false;
    *changed = false;
    r->settled = true;
    if (!stdout_text(r)) return TL_OK;
    if (!chain_streams(p, top, &limit)) return TL_OK;
    for (int i = 0; i < p->n_inputs; i++) {
        const TlPlanInput *in = &p->inputs[i];
        if (!in->path || in->types_final ||
            all_fixed(in->read, &p->shapes[in->shape].cols))
            continue;
        if (limit || !can_pass(in)) return TL_OK;
        need_pass = true;
    }
    for (int i = 0; need_pass && i < p->n_inputs; i++) {
        const TlPlanInput *in = &p->inputs[i];
        if (!in->path || in->types_final ||
            all_fixed(in->read, &p->shapes[in->shape].cols))
            continue;
        TL_TRY(type_pass(in, changed, NULL, err));
    }
    r->streaming = true;
    return TL_OK;
}

/* Schema mode: the types by type passes instead of reading every row,
 * when every input has one and no --schema is given (its types are
 * checked against the values only by reading them; so are the pages of
 * a Parquet file read beside a text file). */
static TlStatus schema_pass(Run *r, const TlPlan *p, bool *done, bool *changed,
                            TlError *err)
{
    *done = false;
    *changed = false;
    for (int i = 0; i < p->n_inputs; i++) {
        const TlPlanInput *in = &p->inputs[i];
        if (!in->path) continue;
        if (in->types_final || in->read->schema || !can_pass(in)) return TL_OK;
    }
    for (int i = 0; i < p->n_inputs; i++) {
        const TlPlanInput *in = &p->inputs[i];
        if (!in->path) continue;
        TL_TRY(type_pass(in, changed, &r->stats, err));
    }
    *done = true;
    return TL_OK;
}

/* Write `column,type` rows for schema s through a CSV writer. */
static TlStatus write_schema(Run *r, const TlSchema *s, TlError *err)
{
    TlSchema out = {0};
    TlBuilder bn, bt;
    TlBatch *b = NULL;
    TlWriter *w = NULL;
    TlStatus st;
    tl_builder_init(&bn, TL_TSTRING);
    tl_builder_init(&bt, TL_TSTRING);
    st = tl_schema_add(&out, "column", TL_TSTRING, err);
    if (st == TL_OK) st = tl_schema_add(&out, "type", TL_TSTRING, err);
    for (int i = 0; st == TL_OK && i < s->n_fields; i++) {
        const char *tn = tl_type_name(s->fields[i].type);
        if (!tl_builder_append_str(&bn, s->fields[i].name, strlen(s->fields[i].name)) ||
            !tl_builder_append_str(&bt, tn, strlen(tn)))
            st = tl_error_oom(err);
    }
    if (st == TL_OK) {
        b = tl_batch_new(&out, 2, s->n_fields);
        if (!b) st = tl_error_oom(err);
    }
    if (st == TL_OK) {
        b->cols[0] = tl_builder_finish(&bn);
        b->cols[1] = tl_builder_finish(&bt);
        if (!b->cols[0] || !b->cols[1]) st = tl_error_oom(err);
    }
    if (st == TL_OK) st = tl_writer_open(r->sink, "csv", &out, NULL, &w, err);
    if (st == TL_OK && s->n_fields > 0) st = tl_writer_write(w, b, err);
    if (st == TL_OK) st = tl_input_check_streams(&r->ctx, err);
    if (st == TL_OK) st = tl_writer_finish(w, err);
    tl_writer_free(w);
    tl_batch_free(b);
    tl_builder_free(&bn);
    tl_builder_free(&bt);
    tl_schema_free(&out);
    return st;
}

/* One attempt of a run or schema mode.  Fills r->stats on success. */
static TlStatus attempt(Run *r, TlError *err)
{
    bool schema_mode = r->mode == TALLY_SCHEMA;
    TlPlan *p = NULL;
    TlOperator *root = NULL;
    TlWriter *w = NULL;
    TlStatus st;
    TlWriteOptions wo;
    TlPlanId top;
    bool read_rows;

    st = build_plan(r, schema_mode, &p, err);
    if (st != TL_OK) return st;
    /* schema mode reads the rows for the types they show (CSV, NDJSON),
     * unless every input's types are its file's own (Parquet) or a type
     * pass finds them */
    read_rows = !schema_mode;
    for (int i = 0; !read_rows && i < p->n_inputs; i++)
        read_rows = !p->inputs[i].types_final;
    top = p->opt_root != TL_NO_ID ? p->opt_root : p->root;
    if (schema_mode && read_rows) {
        bool passed, changed;
        if ((st = schema_pass(r, p, &passed, &changed, err)) != TL_OK) goto done;
        if (passed) {
            read_rows = false;
            if (changed) {
                tl_plan_free(p);
                p = NULL;
                if ((st = build_plan(r, true, &p, err)) != TL_OK) goto done;
            }
        }
    }
    if (!schema_mode && !r->settled) {
        /* after planning, so the plan's own errors come first */
        bool changed;
        if ((st = settle_types(r, p, top, &changed, err)) != TL_OK) goto done;
        if (changed) {
            tl_plan_free(p);
            p = NULL;
            if ((st = build_plan(r, false, &p, err)) != TL_OK) goto done;
            top = p->opt_root != TL_NO_ID ? p->opt_root : p->root;
        }
    }
    if (!read_rows) goto schema;
    if ((st = tl_exec_build(p, top, &r->stats, &root, err)) != TL_OK) goto done;
    if (!schema_mode) {
        memset(&wo, 0, sizeof wo);
        wo.delimiter = strcmp(r->out_format, "tsv") == 0 ? '\t' : ',';
        if (r->spec->out_delimiter) wo.delimiter = r->spec->out_delimiter;
        wo.header = !r->spec->out_no_header;
        wo.null_text = r->spec->out_null;
        wo.width = r->spec->table_width;
        wo.max_rows = r->spec->table_rows;
        wo.color = r->spec->color;
        wo.parquet_compression = r->spec->parquet_compression;
        wo.compress_level = r->spec->compress_level;
        wo.row_group_size = r->spec->row_group_size;
        wo.created_by = "tally version " TALLY_VERSION;
        st = tl_writer_open(r->sink, r->out_format, root->schema, &wo, &w, err);
        if (st != TL_OK) goto done;
        if (r->streaming && !tl_sink_stream(r->sink)) r->streaming = false;
    }
    for (;;) {
        TlBatch *b = NULL;
        if ((st = root->next(root, &b, err)) != TL_OK) goto done;
        if (!b) break;
        if (w) st = tl_writer_write(w, b, err);
        r->rows_written += b->n_rows;
        tl_batch_free(b);
        /* streaming: what the writer handed over goes out now */
        if (st == TL_OK && r->streaming) st = tl_sink_flush(r->sink, err);
        if (st != TL_OK) goto done;
    }
    /* the run is over: a streamed input it stopped reading early (--head)
     * must still decompress to its end without error, as when inputs were
     * decompressed whole at open (formats/compress/compress.c) */
    if (w && (st = tl_input_check_streams(&r->ctx, err)) != TL_OK) goto done;
    if (w && (st = tl_writer_finish(w, err)) != TL_OK) goto done;
    /* a scan sums its readers' counters as it lets them go */
    root->free(root);
    root = NULL;
    if ((st = collect_converted(r, p, err)) != TL_OK) goto done;
schema:
    if (schema_mode) st = write_schema(r, tl_plan_node(p, p->root)->schema, err);
done:
    tl_writer_free(w);
    if (root) root->free(root);
    tl_plan_free(p);
    return st;
}

/* Run attempts until one does not restart. */
static TlStatus run_loop(Run *r, TlError *err)
{
    TlTypeHints *snap = tl_calloc((size_t)r->n_inputs, sizeof *snap);
    int64_t restarts = 0;
    TlStatus st;
    if (!snap) return tl_error_oom(err);
    for (;;) {
        for (int i = 0; i < r->n_inputs; i++) tl_schema_free(&snap[i].cols);
        if ((st = hints_copy(r, snap, err)) != TL_OK) break;
        memset(&r->stats, 0, sizeof r->stats);
        r->rows_written = 0;
        /* the budget's counters are the attempt's too (the last one freed
         * its operators, so nothing is held) */
        atomic_store(&r->budget.peak, 0);
        atomic_store(&r->budget.spilled, 0);
        atomic_store(&r->budget.read_back, 0);
        atomic_store(&r->budget.sort_runs, 0);
        st = attempt(r, err);
        /* a shrunk input wins over what its zeros did (format.h) */
        if (tl_input_changed(err) != TL_OK) st = err->code;
        if (st != TL_ERR_RESTART) break;
        if (hints_equal(r, snap)) {
            char msg[TL_ERRMSG_MAX];
            snprintf(msg, sizeof msg, "%s", err->msg);
            st = tl_error(err, TL_ERR_DATA,
                          "internal error: type inference restarted without "
                          "widening a type (%s)", msg);
            break;
        }
        restarts++;
        if ((st = tl_sink_reset(r->sink, err)) != TL_OK) break;
    }
    r->stats.restarts = restarts;
    for (int i = 0; i < r->n_inputs; i++) tl_schema_free(&snap[i].cols);
    tl_free(snap);
    return st;
}

static TlStatus run_explain(Run *r, TlError *err)
{
    TlPlan *p = NULL;
    char *text = NULL;
    size_t len = 0;
    TlStatus st;
    /* a step that names a key first seen after an input's first batch
     * plans again with it (tl_reader_more_columns: a scan once an input,
     * so at most once an input) */
    for (int k = 0; (st = build_plan(r, false, &p, err)) == TL_ERR_RESTART &&
                    k < r->n_inputs; k++) {
    }
    if (st == TL_OK) st = tl_plan_explain(p, &text, &len, err);
    if (st == TL_OK) st = tl_sink_open(&r->ctx, NULL, &r->sink, err);
    if (st == TL_OK) st = tl_sink_write(r->sink, text, len, err);
    if (st == TL_OK && r->spec->verbose) {
        /* --verbose: the optimizer's log (lib/opt/opt.c) */
        const char *log = p->opt_log ? p->opt_log : "  (none)\n";
        st = tl_sink_write(r->sink, "rules:\n", 7, err);
        if (st == TL_OK) st = tl_sink_write(r->sink, log, strlen(log), err);
    }
    if (st == TL_OK) st = tl_sink_commit(r->sink, err);
    tl_free(text);
    tl_plan_free(p);
    return st;
}

/* -o naming one of the run's inputs: fine for a regular file (the sink
 * replaces it atomically, and a mapped input keeps the old inode), refused
 * for anything written in place (a FIFO or device would be read and written
 * at once: the run could block or read its own output). */
static TlStatus check_output_input(Run *r, TlError *err)
{
    TlTarget t;
    TlStatus st = TL_OK;
    TL_TRY(tl_target_resolve(r->out_path, &t, err));
    for (int i = 0; t.kind == TL_TARGET_STREAM && i < r->n_inputs; i++) {
        struct stat sb;
        int got = strcmp(r->paths[i], "-") == 0 ? fstat(0, &sb) : stat(r->paths[i], &sb);
        if (got == 0 && sb.st_dev == t.dev && sb.st_ino == t.ino) {
            st = tl_error(err, TL_ERR_USAGE, "-o %s is also an input; only a "
                          "regular file can be both (it is replaced atomically)",
                          tl_quote_name(r->spec->output).s);
            break;
        }
    }
    tl_target_free(&t);
    return st;
}

/* The run's instant, once: TALLY_NOW's, else the clock's. */
static TlStatus read_now(Run *r, TlError *err)
{
    const TlTuning *t = &r->ctx.tuning;
    struct timespec ts;
    if (t->now_env < 0)
        return tl_error(err, TL_ERR_USAGE,
                        "TALLY_NOW is not a timestamp (expected "
                        "YYYY-MM-DDTHH:MM:SS[.ffffff][Z], in UTC)");
    if (t->now_env > 0) {
        r->ctx.now = t->now_us;
        return TL_OK;
    }
    clock_gettime(CLOCK_REALTIME, &ts);
    r->ctx.now = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
    return TL_OK;
}

/* The run's memory budget: --memory-limit (or the pipeline file's
 * memory_limit), else TALLY_MEMORY_LIMIT, else 80% of memory or of the
 * cgroup's limit; the temporary folder: --temp-dir (checked now: a folder
 * the user named must take a file), else $TMPDIR, else /tmp (checked when
 * a spill file is made). */
static TlStatus budget_setup(Run *r, TlError *err)
{
    const TallySpec *sp = r->spec;
    const TlTuning *t = &r->ctx.tuning;
    uint64_t limit = 0;
    const char *text = sp->memory_limit ? sp->memory_limit : t->memory_limit;
    if (text && *text) {
        if (!tl_size_parse(text, &limit))
            return tl_error(err, TL_ERR_USAGE, "%s: expected a size such as 500MB, 4GiB or "
                            "50%%, got %s", sp->memory_limit ? "--memory-limit"
                            : "TALLY_MEMORY_LIMIT", tl_quote_str(text).s);
    } else {
        limit = tl_budget_default();
        text = NULL;
    }
    tl_budget_init(&r->budget, limit);
    r->budget.limit_text = text;
    r->budget.force_spill = t->force_spill;
    if (sp->temp_dir) {
        r->temp_dir = join_path(sp->spec_dir, sp->temp_dir);
        r->budget.temp_from = "--temp-dir";
    } else if (t->tmpdir && *t->tmpdir) {
        r->temp_dir = tl_strdup(t->tmpdir);
        r->budget.temp_from = "$TMPDIR";
    } else {
        r->temp_dir = tl_strdup("/tmp");
        r->budget.temp_from = "the default";
    }
    if (!r->temp_dir) return tl_error_oom(err);
    r->budget.temp_dir = r->temp_dir;
    r->ctx.budget = &r->budget;
    if (sp->temp_dir) TL_TRY(tl_spill_check_dir(r->temp_dir, "--temp-dir", err));
    return TL_OK;
}

static TlStatus run(Run *r, TlError *err)
{
    TL_TRY(read_now(r, err));
    TL_TRY(budget_setup(r, err));
    TL_TRY(tl_inputs_new(&r->ctx.inputs, err));
    TL_TRY(prepare(r, err));
    if (r->mode == TALLY_EXPLAIN) return run_explain(r, err);
    if (r->mode == TALLY_RUN) TL_TRY(output_format(r, err));
    if (r->out_path) TL_TRY(check_output_input(r, err));
    TL_TRY(tl_sink_open(&r->ctx, r->out_path, &r->sink, err));
    if (r->out_unnamed) TL_TRY(unnamed_format(r, err));
    if (r->out_comp)
        TL_TRY(tl_sink_set_compression(r->sink, r->out_comp,
                                       r->spec->compress_level, err));
    r->ctx.stream_pipes = pipes_may_stream(r);
    TL_TRY(run_loop(r, err));
    TL_TRY(tl_sink_commit(r->sink, err));
    return TL_OK;
}

/* See tally.h.  Async-signal-safe: only unlinks the names in the cleanup
 * table (lib/core/cleanup.c). */
void tally_remove_temp_files(void)
{
    tl_cleanup_run();
}

typedef struct RunCall {
    Run *r;
    TlError *err;
    TlStatus st;
} RunCall;

static void *run_call(void *arg)
{
    RunCall *c = arg;
    c->st = run(c->r, c->err);
    return NULL;
}

/* The public status of an internal one.  A restart never gets here
 * (run_loop turns one that widens nothing into a data error). */
static TallyStatus public_status(TlStatus st)
{
    switch (st) {
    case TL_OK: return TALLY_OK;
    case TL_ERR_PIPE: return TALLY_CLOSED;
    case TL_ERR_USAGE: return TALLY_ERR_USAGE;
    case TL_ERR_IO: return TALLY_ERR_IO;
    case TL_ERR_OOM: return TALLY_ERR_OOM;
    default: return TALLY_ERR_DATA;
    }
}

/* The counters of a completed run into *out; the converted list changes
 * hands. */
static void take_stats(Run *r, TallyStats *out)
{
    const TlExecStats *s = &r->stats;
    out->rows_read = s->rows_read;
    out->bytes_read = s->bytes_read;
    out->batches = s->batches_read;
    out->groups = s->groups;
    out->rows_sorted = s->rows_sorted;
    out->rows_written = r->rows_written;
    out->restarts = s->restarts;
    /* compressed inputs: the most decompressed bytes held in memory at
     * once (formats/compress.h; with streaming it depends on timing) */
    tl_decompressed_held(&r->ctx, NULL, &out->decompressed_held_peak);
    out->memory_limit = (int64_t)r->budget.limit;
    out->memory_held_peak = (int64_t)atomic_load(&r->budget.peak);
    out->spilled_bytes = (int64_t)atomic_load(&r->budget.spilled);
    out->spill_read_bytes = (int64_t)atomic_load(&r->budget.read_back);
    out->sort_runs = atomic_load(&r->budget.sort_runs);
    out->resident_peak = (int64_t)tl_mem_resident_peak();
    out->converted = r->converted;
    r->converted = NULL;
}

/* See tally.h.  Runs spec in mode; on failure the message is in err.  The
 * run goes on a thread with a deep stack (pool.h), so long pipelines and
 * long operator chains in expressions fit; without one, on this thread with
 * the shallow bounds. */
TallyStatus tally_run(const TallySpec *spec, TallyMode mode, TallyStats *stats,
                      TallyError *uerr)
{
    Run r;
    TlError err;
    TlStatus st;
    memset(&r, 0, sizeof r);
    memset(&err, 0, sizeof err);
    r.spec = spec;
    r.mode = mode;
    tl_tuning_read(&r.ctx.tuning);
    tl_alloc_tune();
    tl_pool_configure(spec->threads); /* 0: every online CPU */
    tl_input_changes_reset();
    {
        RunCall c = {&r, &err, TL_OK};
        if (!tl_run_deep(run_call, &c)) run_call(&c);
        st = c.st;
    }

    if (stats) {
        memset(stats, 0, sizeof *stats);
        if (st == TL_OK) take_stats(&r, stats);
    }
    tl_sink_close(r.sink);
    for (int i = 0; i < r.n_inputs; i++) {
        tl_free(r.display[i]);
        tl_free(r.paths[i]);
        if (r.hints) tl_hints_free(&r.hints[i]);
    }
    tl_free(r.display);
    tl_free(r.paths);
    tl_free(r.hints);
    tl_free(r.out_path);
    tl_free(r.temp_dir);
    tl_free(r.converted);
    tl_schema_free(&r.fixed);
    for (int k = 0; k < r.n_groups; k++) tl_schema_free(&r.groups[k].fixed);
    tl_free(r.groups);
    tl_free(r.plan_groups);
    tl_inputs_free(r.ctx.inputs); /* after every reader and batch */

    if (uerr) {
        uerr->message[0] = '\0';
        if (st != TL_OK && st != TL_ERR_PIPE) {
            snprintf(uerr->message, sizeof uerr->message, "%s",
                     err.msg[0] ? err.msg : "failed");
        }
    }
    return public_status(st);
}
