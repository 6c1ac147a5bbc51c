/*
 * flags.c -- argv -> TallySpec, the command-line front door.
 *
 * The command line is read once, left to right.  Every argument is one of:
 *
 *   a positional INPUT   anything not starting with '-', or exactly "-"
 *                        (standard input); everything after "--"
 *   a step flag          --filter --where --select --with --drop --rename
 *                        --group-by --agg --sort --head --limit --distinct
 *                        --join; each appends one TallyStep, so steps keep
 *                        the order they were typed in
 *   a step modifier      --agg after --group-by, --by after --head, and
 *                        --on / --how / --suffix / --join-delimiter /
 *                        --join-schema / --join-from after --join: they
 *                        complete the step just before them (options may
 *                        stand in between, other steps and inputs may not)
 *                        and are errors elsewhere.  --join makes the step's
 *                        join_spec (a pipeline of the one input); the
 *                        --join-* options set its read options
 *   an option            input/output/run settings; the last one given wins
 *
 * Values are written `--flag VALUE` or `--flag=VALUE`.  A value may start
 * with '-' (`--sort -amount`); a value is "missing" only at the end of argv
 * or when the next argument is itself a known long flag.  `--distinct` has
 * an optional LIST: `--distinct=LIST` always, and `--distinct LIST` when
 * the next argument does not start with '-' and is not an existing file
 * (so `tally --distinct data.csv` still reads data.csv).
 *
 * Flag-form texts are stored whole with split = true (the library splits a
 * LIST at commas outside parentheses and quotes, so its error carets point
 * into the text the user typed); origins are the flag as typed ("--where").
 *
 * With -f PIPELINE.json the steps and inputs come from the file
 * (tally_spec_from_json); the command line may then carry only options,
 * which override the file's (-o relative to the current directory).
 */
#include "flags.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char cli_usage_text[] =
"usage: tally [OPTIONS] INPUT... [STEP...] [-o OUTPUT]\n"
"examples:\n"
"  tally sales.csv                       the file as a table (CSV into a pipe)\n"
"  tally sales.csv --filter 'amount > 100' --sort -amount --head 10\n"
"  tally sales.csv --group-by region --agg 'n = count(), sum(amount)' -o r.csv\n"
"tally --help lists every option; man tally explains them.\n";

/* ------------------------------------------------------------ the table */

typedef enum FlagArg { ARG_NONE, ARG_REQ, ARG_OPT } FlagArg;

typedef enum FlagId {
    F_FILTER, F_SELECT, F_WITH, F_DROP, F_RENAME, F_GROUP_BY, F_AGG, F_SORT,
    F_HEAD, F_BY, F_TAIL, F_OFFSET, F_SAMPLE, F_SEED, F_WITH_ROW_NUMBER,
    F_DISTINCT, F_DESCRIBE, F_JOIN, F_ON, F_HOW, F_SUFFIX,
    F_JOIN_DELIMITER, F_JOIN_SCHEMA, F_JOIN_FROM,
    F_DELIMITER, F_NULL, F_NO_HEADER, F_HEADER, F_SCHEMA, F_FROM, F_TO, F_OUTPUT,
    F_FILE, F_THREADS, F_STATS, F_NO_OPTIMIZE, F_VERBOSE, F_HELP, F_VERSION,
    F_OUT_DELIMITER, F_WITH_FILENAME, F_COMPRESS_LEVEL, F_SORTED,
    F_NO_INFER, F_QUOTED_AS_STRING, F_QUIET,
    F_OUT_NO_HEADER, F_OUT_NULL, F_RAGGED, F_SKIP, F_QUOTE, F_COMMENT,
    F_ESCAPE, F_DECIMAL_COMMA, F_MAX_COLUMNS, F_MAX_RECORD, F_ROWS, F_COLOR,
    F_PARQUET_COMPRESSION, F_ROW_GROUP_SIZE, F_MEMORY_LIMIT, F_TEMP_DIR,
} FlagId;

/* What a flag's value is: CliVal (flags.h), for the shell completions. */
#define VAL_NONE CLI_VAL_NONE
#define VAL_TEXT CLI_VAL_TEXT
#define VAL_COLUMNS CLI_VAL_COLUMNS
#define VAL_FILE CLI_VAL_FILE
#define VAL_CHOICE CLI_VAL_CHOICE

static const char *const join_hows[] = {"inner", "left", "right", "full",
                                        "semi", "anti", NULL};
static const char *const to_formats[] = {"csv", "tsv", "ndjson", "jsonl", "json",
                                         "table", "parquet", NULL};
static const char *const from_formats[] = {"csv", "tsv", "ndjson", "jsonl", "json",
                                           "parquet", NULL};
static const char *const ragged_modes[] = {"error", "pad", "skip", NULL};
static const char *const quote_choices[] = {"none", NULL};
static const char *const parquet_codecs[] = {"zstd", "snappy", "gzip", "lz4", "none",
                                             NULL};
static const char *const color_choices[] = {"auto", "always", "never", NULL};

typedef struct Flag {
    const char *name;   /* "--filter" or "-o" */
    FlagId id;
    FlagArg arg;
    CliVal val;
    const char *const *choices;  /* VAL_CHOICE: NULL-terminated */
    /* The --help line(s) that document this flag and the flags after it up
     * to the next entry with help (aliases, flags named on the same line):
     * --help prints them in table order, so every flag is in --help and
     * the completions (which take each flag's description from its line)
     * list exactly the flags --help shows. */
    const char *help;
} Flag;

#define H(text) NULL, text
#define CHOICES(v) .val = VAL_CHOICE, .choices = v

static const char help_head[] =
"usage: tally [OPTIONS] INPUT... [STEP...] [-o OUTPUT]\n"
"       tally [OPTIONS] -f PIPELINE.json [-o OUTPUT]      --version; -h, --help\n"
"       tally explain|describe ARGS...  the plans | stats per column (--describe)\n"
"       tally schema INPUT...   column types; tally completions bash|zsh|fish\n"
"\n"
"Steps in order; a LIST takes v*, a:c, #2, columns('re'), '* exclude (x)':\n";

static const char help_tail[] =
"\n"
"Exit status: 0 ok, 1 bad data or I/O, 2 bad usage, 128+N signal N; man tally\n";

static const Flag flags[] = {
    {"--filter", F_FILTER, ARG_REQ, VAL_TEXT, H(
"  --filter EXPR, --where EXPR    keep rows where EXPR is true\n")},
    {"--where", F_FILTER, ARG_REQ, VAL_TEXT, NULL, NULL},
    {"--select", F_SELECT, ARG_REQ, VAL_COLUMNS, H(
"  --select LIST                  keep these columns/expressions ('b*2 as c')\n")},
    {"--with", F_WITH, ARG_REQ, VAL_TEXT, H(
"  --with 'NAME = EXPR', --with-row-number NAME  add a column; NAME: 1, 2, ...\n")},
    {"--with-row-number", F_WITH_ROW_NUMBER, ARG_REQ, VAL_TEXT, NULL, NULL},
    {"--drop", F_DROP, ARG_REQ, VAL_COLUMNS, H(
"  --drop LIST, --rename 'OLD:NEW,...'  remove columns; rename columns\n")},
    {"--rename", F_RENAME, ARG_REQ, VAL_TEXT, NULL, NULL},
    {"--group-by", F_GROUP_BY, ARG_REQ, VAL_COLUMNS, H(
"  --group-by LIST --agg LIST     one row per key: --agg 'n = count(), sum(x)';\n"
"                                 named keys 'k = EXPR'; 'r = sum(a)/count()';\n"
"                                 --agg alone: all rows; --sorted: keys in runs\n")},
    {"--agg", F_AGG, ARG_REQ, VAL_TEXT, NULL, NULL},
    {"--sorted", F_SORTED, ARG_NONE, VAL_NONE, NULL, NULL},
    {"--sort", F_SORT, ARG_REQ, VAL_COLUMNS, H(
"  --sort LIST                    stable sort: 'x', '-x', 'x desc nulls first'\n")},
    {"--head", F_HEAD, ARG_REQ, VAL_TEXT, H(
"  --head N [--by LIST], --tail N  first N rows (of each group), last N; --limit\n")},
    {"--by", F_BY, ARG_REQ, VAL_COLUMNS, NULL, NULL},
    {"--limit", F_HEAD, ARG_REQ, VAL_TEXT, NULL, NULL},
    {"--tail", F_TAIL, ARG_REQ, VAL_TEXT, NULL, NULL},
    {"--offset", F_OFFSET, ARG_REQ, VAL_TEXT, H(
"  --offset N, --sample N|P% [--seed S]  skip N rows; N or P% rows at random\n")},
    {"--sample", F_SAMPLE, ARG_REQ, VAL_TEXT, NULL, NULL},
    {"--seed", F_SEED, ARG_REQ, VAL_TEXT, NULL, NULL},
    {"--distinct", F_DISTINCT, ARG_OPT, VAL_COLUMNS, H(
"  --distinct [LIST]              drop duplicate rows (on LIST, keep the first)\n")},
    {"--join", F_JOIN, ARG_REQ, VAL_FILE, H(
"  --join INPUT --on KEYS [--how inner|left|right|full|semi|anti] [--suffix S]\n"
"    KEYS: 'id', 'a,b' or 'l=r'; --join-delimiter/-schema/-from read INPUT\n")},
    {"--on", F_ON, ARG_REQ, VAL_COLUMNS, NULL, NULL},
    {"--how", F_HOW, ARG_REQ, CHOICES(join_hows)},
    {"--suffix", F_SUFFIX, ARG_REQ, VAL_TEXT, NULL, NULL},
    {"--join-delimiter", F_JOIN_DELIMITER, ARG_REQ, VAL_TEXT, NULL, NULL},
    {"--join-schema", F_JOIN_SCHEMA, ARG_REQ, VAL_TEXT, NULL, NULL},
    {"--join-from", F_JOIN_FROM, ARG_REQ, CHOICES(from_formats)},
    {"--describe", F_DESCRIBE, ARG_NONE, VAL_NONE, H(
"\n"
"Options:\n")},
    {"-o", F_OUTPUT, ARG_REQ, VAL_FILE, H(
"  -o, --output FILE       write FILE atomically (.csv .tsv .ndjson .jsonl .json\n"
"                          .parquet, + .gz/.zst; else --to); devices in place\n")},
    {"--output", F_OUTPUT, ARG_REQ, VAL_FILE, NULL, NULL},
    {"-f", F_FILE, ARG_REQ, VAL_FILE, H(
"  -f, --file PIPELINE     JSON pipeline; --from/--to csv|tsv|ndjson|json|parquet\n")},
    {"--file", F_FILE, ARG_REQ, VAL_FILE, NULL, NULL},
    {"--from", F_FROM, ARG_REQ, CHOICES(from_formats)},
    {"--to", F_TO, ARG_REQ, CHOICES(to_formats)},
    {"--delimiter", F_DELIMITER, ARG_REQ, VAL_TEXT, H(
"  --delimiter C, --quote Q, --escape E  else sniffed ('\\t': tab; Q, E: none)\n")},
    {"--quote", F_QUOTE, ARG_REQ, CHOICES(quote_choices)},
    {"--escape", F_ESCAPE, ARG_REQ, CHOICES(quote_choices)},
    {"--with-filename", F_WITH_FILENAME, ARG_NONE, VAL_NONE, H(
"  --with-filename, --comment C  add a `filename` column; skip lines starting C\n")},
    {"--comment", F_COMMENT, ARG_REQ, VAL_TEXT, NULL, NULL},
    {"--compress-level", F_COMPRESS_LEVEL, ARG_REQ, VAL_TEXT, H(
"  --compress-level N      gz 1-9 (6) zst 1-22 (3); --max-record-size SIZE (256M)\n")},
    {"--max-record-size", F_MAX_RECORD, ARG_REQ, VAL_TEXT, NULL, NULL},
    {"--parquet-compression", F_PARQUET_COMPRESSION, ARG_REQ, CHOICES(parquet_codecs),
     .help = (
"  --parquet-compression zstd|snappy|gzip|lz4|none; --row-group-size N (122880)\n")},
    {"--row-group-size", F_ROW_GROUP_SIZE, ARG_REQ, VAL_TEXT, NULL, NULL},
    {"--null", F_NULL, ARG_REQ, VAL_TEXT, H(
"  --null STR, --decimal-comma  STR is null (TSV: also \\N); 1,5 is 1.5\n")},
    {"--decimal-comma", F_DECIMAL_COMMA, ARG_NONE, VAL_NONE, NULL, NULL},
    {"--header", F_HEADER, ARG_NONE, VAL_NONE, H(
"  --header, --no-header   line 1 names/data (else guessed); --skip N lines first\n")},
    {"--no-header", F_NO_HEADER, ARG_NONE, VAL_NONE, NULL, NULL},
    {"--skip", F_SKIP, ARG_REQ, VAL_TEXT, NULL, NULL},
    {"--ragged", F_RAGGED, ARG_REQ, CHOICES(ragged_modes), .help = (
"  --ragged error|pad|skip rows of another field count; --max-columns N (1000000)\n")},
    {"--max-columns", F_MAX_COLUMNS, ARG_REQ, VAL_TEXT, NULL, NULL},
    {"--out-no-header", F_OUT_NO_HEADER, ARG_NONE, VAL_NONE, H(
"  --out-no-header         output: no header; --out-null S, --out-delimiter C\n")},
    {"--out-null", F_OUT_NULL, ARG_REQ, VAL_TEXT, NULL, NULL},
    {"--out-delimiter", F_OUT_DELIMITER, ARG_REQ, VAL_TEXT, NULL, NULL},
    {"--schema", F_SCHEMA, ARG_REQ, VAL_TEXT, H(
"  --schema 'NAME:TYPE,...'  int float bool string date timestamp[tz]; NAME: glob\n")},
    {"--no-infer", F_NO_INFER, ARG_NONE, VAL_NONE, H(
"  --no-infer, --quoted-as-string  every column / quoted-value columns strings\n")},
    {"--quoted-as-string", F_QUOTED_AS_STRING, ARG_NONE, VAL_NONE, NULL, NULL},
    {"--threads", F_THREADS, ARG_REQ, VAL_TEXT, H(
"  --threads N, --stats    worker threads (0: all cores); counters to stderr\n")},
    {"--stats", F_STATS, ARG_NONE, VAL_NONE, NULL, NULL},
    {"--memory-limit", F_MEMORY_LIMIT, ARG_REQ, VAL_TEXT, H(
"  --memory-limit SIZE     500MB 4GiB 50% (80% of RAM); --temp-dir DIR to spill\n")},
    {"--temp-dir", F_TEMP_DIR, ARG_REQ, VAL_FILE, NULL, NULL},
    {"--no-optimize", F_NO_OPTIMIZE, ARG_NONE, VAL_NONE, H(
"  --no-optimize, --quiet  run as written; no notes; --verbose: explain's rules\n")},
    {"--quiet", F_QUIET, ARG_NONE, VAL_NONE, NULL, NULL},
    {"--verbose", F_VERBOSE, ARG_NONE, VAL_NONE, NULL, NULL},
    {"--rows", F_ROWS, ARG_REQ, VAL_TEXT, H(
"  --rows N|all (40), --color auto|always|never  tables: terminal, --to table\n")},
    {"--color", F_COLOR, ARG_REQ, CHOICES(color_choices)},
    /* named on the head's second line */
    {"--version", F_VERSION, ARG_NONE, VAL_NONE, NULL, NULL},
    {"-h", F_HELP, ARG_NONE, VAL_NONE, NULL, NULL},
    {"--help", F_HELP, ARG_NONE, VAL_NONE, NULL, NULL},
};
#undef H
#undef CHOICES
#define N_FLAGS ((int)(sizeof flags / sizeof flags[0]))

/* See flags.h.  The description is the text of the flag's help line after
 * the flag column (the first run of two spaces), or the whole line; a
 * flag whose entry opens a section says what the head says of it. */
bool cli_flag_info(int i, CliFlagInfo *out)
{
    if (i < 0 || i >= N_FLAGS) return false;
    const Flag *f = &flags[i];
    int h = i;
    while (h > 0 && !flags[h].help) h--;
    const char *line = flags[h].help, *end, *gap;
    /* flags documented outside the table's lines */
    if (f->id == F_DESCRIBE) line = "  --describe  statistics of every column (a step)\n";
    if (f->id == F_VERSION) line = "  --version  print the version\n";
    if (f->id == F_HELP) line = "  --help  print this help\n";
    while (*line == ' ') line++;
    end = strchr(line, '\n');
    if (!end) end = line + strlen(line);
    gap = strstr(line, "  ");
    if (gap && gap < end) {
        line = gap;
        while (*line == ' ') line++;
    }
    out->name = f->name;
    out->arg = f->arg == ARG_NONE ? 0 : f->arg == ARG_REQ ? 1 : 2;
    out->val = f->val;
    out->choices = f->choices;
    snprintf(out->desc, sizeof out->desc, "%.*s", (int)(end - line), line);
    return true;
}

/* See flags.h: the head, each flag's lines in table order, the tail. */
void cli_print_help(FILE *out)
{
    fputs(help_head, out);
    for (int i = 0; i < N_FLAGS; i++)
        if (flags[i].help) fputs(flags[i].help, out);
    fputs(help_tail, out);
}

/* Find a flag by its exact spelling (name_len bytes of name). */
static const Flag *flag_find(const char *name, size_t name_len)
{
    for (int i = 0; i < N_FLAGS; i++)
        if (strlen(flags[i].name) == name_len &&
            memcmp(flags[i].name, name, name_len) == 0)
            return &flags[i];
    return NULL;
}

/* The known long flag nearest to `typed`, or NULL when none is close. */
static const char *flag_suggest(const char *typed)
{
    const char *longs[N_FLAGS];
    size_t n = 0, tl = strlen(typed);
    for (int i = 0; i < N_FLAGS; i++) {
        const char *name = flags[i].name;
        if (name[1] != '-') continue;
        /* "--group" for "--group-by": a prefix of a flag counts as near */
        if (tl >= 4 && strncmp(name, typed, tl) == 0) return name;
        longs[n++] = name;
    }
    return tally_suggest(typed, longs, n);
}

/* ------------------------------------------------------------ the state */

/* Which step the next modifier may complete. */
typedef enum Ctx { CTX_NONE, CTX_GROUP, CTX_HEAD, CTX_SAMPLE, CTX_JOIN } Ctx;

typedef struct Parser {
    TallySpec *spec;
    TallyMode mode;
    TallyError *err;
    Ctx ctx;
    int ctx_step;          /* index of the step ctx refers to */
    const char *ctx_flag;  /* the flag that opened ctx, as typed */
    bool join_has_on;
    const char *first_step_flag; /* for `tally schema` */
    const char *file;      /* -f */
    /* options given on the command line (override a pipeline file's) */
    bool set_output, set_from, set_to, set_delim, set_null, set_no_header, set_header,
        set_schema, set_threads, set_stats, set_no_optimize, set_verbose;
    bool set_out_delim, set_with_filename, set_compress_level, set_sorted;
    bool set_no_infer, set_quoted_as_string, set_quiet;
    bool set_out_no_header, set_out_null, set_ragged, set_skip, set_quote;
    bool set_comment, set_escape, set_decimal_comma, set_max_columns;
    bool set_max_record, set_rows, set_parquet_compression, set_row_group_size;
    bool set_memory_limit, set_temp_dir;
    bool output_dash;      /* -o -: standard output asked for by name */
} Parser;

/* The --color of the last parse: a choice for the program (cmd/term.c),
 * not part of the spec, whose `color` says only whether to colour.  Reset
 * by every cli_flags_parse (tally-matrix runs mains one after another). */
static CliColor g_color;

/* See flags.h. */
CliColor cli_color_choice(void)
{
    return g_color;
}

static int usage(Parser *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* User text quoted for a message (tally_quote: escaped, cut when long),
 * returned by value so it can sit in usage()'s argument list. */
typedef struct Quoted {
    char s[1100];
} Quoted;

static Quoted quoted(const char *s)
{
    Quoted q;
    tally_quote(q.s, sizeof q.s, s);
    return q;
}

/* Fill the error with a usage message (exit status 2) and return 2. */
static int usage(Parser *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err->message, sizeof p->err->message, fmt, ap);
    va_end(ap);
    p->err->exit_code = 2;
    return 2;
}

static int oom(Parser *p)
{
    snprintf(p->err->message, sizeof p->err->message, "out of memory");
    p->err->exit_code = 1;
    return 1;
}

/* Replace *slot with a copy of value. */
static int set_str(Parser *p, char **slot, const char *value)
{
    char *s = tally_strdup(value);
    if (!s) return oom(p);
    tally_free(*slot);
    *slot = s;
    return 0;
}

static int push_input(Parser *p, const char *path)
{
    TallySpec *s = p->spec;
    char **v = tally_realloc(s->inputs, (size_t)(s->n_inputs + 1) * sizeof *v);
    if (!v) return oom(p);
    s->inputs = v;
    v[s->n_inputs] = tally_strdup(path);
    if (!v[s->n_inputs]) return oom(p);
    s->n_inputs++;
    return 0;
}

/* Append a step made by `flag` whose one item is `text`. */
static int add_step(Parser *p, TallyStepKind kind, const char *flag,
                    const char *text, bool split, TallyStep **out)
{
    TallyStep *st = tally_spec_add_step(p->spec, kind);
    if (!st) return oom(p);
    st->split = split;
    st->origin = tally_strdup(flag);
    if (!st->origin) return oom(p);
    if (text && !tally_text_push(&st->items, &st->n_items, text, flag))
        return oom(p);
    if (out) *out = st;
    return 0;
}

/* Parse a non-negative decimal integer (no sign, no spaces). */
static bool parse_count(const char *s, int64_t *out)
{
    if (!*s) return false;
    int64_t v = 0;
    for (const char *c = s; *c; c++) {
        if (*c < '0' || *c > '9') return false;
        if (v > (INT64_MAX - (*c - '0')) / 10) return false;
        v = v * 10 + (*c - '0');
    }
    *out = v;
    return true;
}

/* A size in bytes: digits, then optionally K, M or G (KiB, MiB, GiB; "KiB"
 * and "KB" spell the same), at least 1. */
static bool parse_size(const char *s, int64_t *out)
{
    int64_t v = 0, unit = 1;
    const char *c = s;
    if (*c < '0' || *c > '9') return false;
    for (; *c >= '0' && *c <= '9'; c++) {
        if (v > (INT64_MAX - (*c - '0')) / 10) return false;
        v = v * 10 + (*c - '0');
    }
    if (*c == 'K' || *c == 'k') unit = (int64_t)1 << 10;
    else if (*c == 'M' || *c == 'm') unit = (int64_t)1 << 20;
    else if (*c == 'G' || *c == 'g') unit = (int64_t)1 << 30;
    if (unit > 1) {
        c++;
        if (*c == 'i') c++;
        if (*c == 'B') c++;
    }
    if (*c || v < 1 || v > INT64_MAX / unit) return false;
    *out = v * unit;
    return true;
}

static int parse_delimiter(Parser *p, const char *flag, const char *v,
                           char *slot)
{
    char c;
    if (strcmp(v, "\\t") == 0 || strcmp(v, "tab") == 0) c = '\t';
    else if (strlen(v) == 1) c = v[0];
    else
        return usage(p, "%s: expected one character (or \\t), got %s",
                     flag, quoted(v).s);
    if (c == '"' || c == '\n' || c == '\r')
        return usage(p, "%s: a quote or a line break cannot separate fields",
                     flag);
    *slot = c;
    return 0;
}

/* Close the step context before an argument that is not one of its
 * modifiers: checks that the step is complete. */
static int end_ctx(Parser *p, const char *next)
{
    if (p->ctx == CTX_GROUP) {
        const TallyStep *prev = p->ctx_step > 0 ? &p->spec->steps[p->ctx_step - 1] : NULL;
        /* --agg LIST --group-by KEYS: the --agg made a step of its own */
        if (prev && prev->kind == TALLY_STEP_GROUP_BY && prev->n_items == 0)
            return usage(p, "option %s must be followed by --agg LIST "
                         "(got %s; the --agg before it aggregates every row "
                         "on its own: move it after %s)", quoted(p->ctx_flag).s,
                         next ? quoted(next).s : "nothing", p->ctx_flag);
        /* --agg LIST ... --group-by KEYS: the same, other steps between */
        for (int j = p->ctx_step - 2; j >= 0; j--)
            if (p->spec->steps[j].kind == TALLY_STEP_GROUP_BY &&
                p->spec->steps[j].n_items == 0)
                return usage(p, "option %s must be followed by --agg LIST "
                             "(got %s; the --agg of step %d aggregates every "
                             "row on its own: an --agg goes right after its %s)",
                             quoted(p->ctx_flag).s, next ? quoted(next).s : "nothing",
                             j + 1, p->ctx_flag);
        return usage(p, "option %s must be followed by --agg LIST "
                     "(got %s)", quoted(p->ctx_flag).s,
                     next ? quoted(next).s : "nothing");
    }
    if (p->ctx == CTX_JOIN && !p->join_has_on)
        return usage(p, "option %s needs --on KEYS", quoted(p->ctx_flag).s);
    p->ctx = CTX_NONE;
    return 0;
}

static int need_step_ctx(Parser *p, const char *flag, Ctx ctx, const char *what)
{
    if (p->ctx != ctx) return usage(p, "option %s must follow %s", quoted(flag).s, what);
    return 0;
}

/* No input on the command line.  When standard input is a pipe or a file,
 * the user most likely meant to read it: say that it is named "-". */
static int no_input(Parser *p, bool bare, CliAction *action)
{
    struct stat st;
    if (fstat(0, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISREG(st.st_mode)))
        return usage(p, "no input given (standard input is a %s: to read it, "
                     "give - as the input)", S_ISFIFO(st.st_mode) ? "pipe" : "file");
    if (bare) { /* `tally` alone: someone trying it out */
        *action = CLI_USAGE;
        return usage(p, "no input given");
    }
    return usage(p, "no input given (try tally --help)");
}

/* One flag with its value (NULL for ARG_NONE, or ARG_OPT without one). */
static int apply(Parser *p, const Flag *f, const char *typed, const char *v)
{
    TallySpec *s = p->spec;
    TallyStep *st = NULL;
    int rc;
    bool is_modifier = f->id == F_AGG || f->id == F_BY || f->id == F_SEED ||
                       f->id == F_ON ||
                       f->id == F_HOW || f->id == F_SUFFIX ||
                       f->id == F_JOIN_DELIMITER || f->id == F_JOIN_SCHEMA ||
                       f->id == F_JOIN_FROM;
    bool is_step = f->id <= F_JOIN_FROM;

    /* A modifier completes its step; another step closes the context.
     * Options (-o, --threads, ...) may stand in between. */
    if (is_step && !(is_modifier && (p->ctx == CTX_JOIN || f->id == F_AGG ||
                                     f->id == F_BY || f->id == F_SEED)))
        if ((rc = end_ctx(p, typed))) return rc;
    if (is_step && !p->first_step_flag) p->first_step_flag = typed;

    switch (f->id) {
    case F_FILTER:
        return add_step(p, TALLY_STEP_FILTER, typed, v, false, NULL);
    case F_SELECT:
        return add_step(p, TALLY_STEP_SELECT, typed, v, true, NULL);
    case F_WITH:
        return add_step(p, TALLY_STEP_WITH, typed, v, false, NULL);
    case F_DROP:
        return add_step(p, TALLY_STEP_DROP, typed, v, true, NULL);
    case F_RENAME:
        return add_step(p, TALLY_STEP_RENAME, typed, v, true, NULL);
    case F_SORT:
        return add_step(p, TALLY_STEP_SORT, typed, v, true, NULL);
    case F_GROUP_BY:
        if ((rc = add_step(p, TALLY_STEP_GROUP_BY, typed, v, true, NULL))) return rc;
        p->ctx = CTX_GROUP;
        p->ctx_step = s->n_steps - 1;
        p->ctx_flag = typed;
        return 0;
    case F_AGG:
        if (p->ctx == CTX_GROUP) {
            st = &s->steps[p->ctx_step];
            p->ctx = CTX_NONE;
        } else {
            if ((rc = end_ctx(p, typed))) return rc;
            if ((rc = add_step(p, TALLY_STEP_GROUP_BY, typed, NULL, true, &st)))
                return rc;
        }
        if (!tally_text_push(&st->aggs, &st->n_aggs, v, typed)) return oom(p);
        return 0;
    case F_HEAD: {
        int64_t n;
        if (!parse_count(v, &n))
            return usage(p, "%s: expected a non-negative integer, got %s",
                         typed, quoted(v).s);
        if ((rc = add_step(p, TALLY_STEP_LIMIT, typed, NULL, true, &st))) return rc;
        st->limit = n;
        p->ctx = CTX_HEAD;
        p->ctx_step = s->n_steps - 1;
        p->ctx_flag = typed;
        return 0;
    }
    case F_TAIL:
    case F_OFFSET: {
        int64_t n;
        if (!parse_count(v, &n))
            return usage(p, "%s: expected a non-negative integer, got %s",
                         typed, quoted(v).s);
        if ((rc = add_step(p, TALLY_STEP_LIMIT, typed, NULL, true, &st))) return rc;
        st->tail = f->id == F_TAIL;
        st->limit = f->id == F_TAIL ? n : -1;
        st->offset = f->id == F_TAIL ? 0 : n;
        return 0;
    }
    case F_SAMPLE: {
        int64_t n = -1;
        double pct = -1;
        if (!tally_parse_sample(v, &n, &pct))
            return usage(p, "%s: expected a row count N or a percent P%% "
                         "(0 to 100), got %s", typed, quoted(v).s);
        if ((rc = add_step(p, TALLY_STEP_SAMPLE, typed, NULL, true, &st))) return rc;
        st->limit = n;
        st->sample_pct = pct;
        p->ctx = CTX_SAMPLE;
        p->ctx_step = s->n_steps - 1;
        p->ctx_flag = typed;
        return 0;
    }
    case F_SEED: {
        int64_t n;
        if ((rc = need_step_ctx(p, typed, CTX_SAMPLE, "--sample N"))) return rc;
        if (!parse_count(v, &n))
            return usage(p, "%s: expected a non-negative integer, got %s",
                         typed, quoted(v).s);
        s->steps[p->ctx_step].seed = (uint64_t)n;
        p->ctx = CTX_NONE;
        return 0;
    }
    case F_WITH_ROW_NUMBER:
        return add_step(p, TALLY_STEP_ROW_NUMBER, typed, v, false, NULL);
    case F_BY:
        if ((rc = need_step_ctx(p, typed, CTX_HEAD, "--head N"))) return rc;
        st = &s->steps[p->ctx_step];
        p->ctx = CTX_NONE;
        if (!tally_text_push(&st->by, &st->n_by, v, typed)) return oom(p);
        return 0;
    case F_DISTINCT:
        return add_step(p, TALLY_STEP_DISTINCT, typed, v && *v ? v : NULL,
                        true, NULL);
    case F_DESCRIBE:
        return add_step(p, TALLY_STEP_DESCRIBE, typed, NULL, true, NULL);
    case F_JOIN:
        if ((rc = add_step(p, TALLY_STEP_JOIN, typed, NULL, true, &st))) return rc;
        if (!(st->join_input = tally_strdup(v))) return oom(p);
        /* the right side: a pipeline of one input, no steps */
        if (!(st->join_spec = tally_alloc(sizeof *st->join_spec))) return oom(p);
        if (!(st->join_spec->inputs = tally_alloc(sizeof(char *)))) return oom(p);
        if (!(st->join_spec->inputs[0] = tally_strdup(v))) return oom(p);
        st->join_spec->n_inputs = 1;
        p->ctx = CTX_JOIN;
        p->ctx_step = s->n_steps - 1;
        p->ctx_flag = typed;
        p->join_has_on = false;
        return 0;
    case F_ON:
        if ((rc = need_step_ctx(p, typed, CTX_JOIN, "--join INPUT"))) return rc;
        st = &s->steps[p->ctx_step];
        if (p->join_has_on)
            return usage(p, "option %s given twice for one --join", quoted(typed).s);
        if (!tally_text_push(&st->items, &st->n_items, v, typed)) return oom(p);
        p->join_has_on = true;
        return 0;
    case F_HOW: {
        if ((rc = need_step_ctx(p, typed, CTX_JOIN, "--join INPUT"))) return rc;
        bool ok = false;
        for (size_t i = 0; join_hows[i]; i++)
            if (strcmp(v, join_hows[i]) == 0) ok = true;
        if (!ok)
            return usage(p, "%s: expected inner, left, right, full, semi or "
                         "anti, got %s", typed, quoted(v).s);
        return set_str(p, &s->steps[p->ctx_step].how, v);
    }
    case F_SUFFIX:
        if ((rc = need_step_ctx(p, typed, CTX_JOIN, "--join INPUT"))) return rc;
        return set_str(p, &s->steps[p->ctx_step].suffix, v);
    case F_JOIN_DELIMITER:
        if ((rc = need_step_ctx(p, typed, CTX_JOIN, "--join INPUT"))) return rc;
        return parse_delimiter(p, typed, v,
                               &s->steps[p->ctx_step].join_spec->delimiter);
    case F_JOIN_SCHEMA:
        if ((rc = need_step_ctx(p, typed, CTX_JOIN, "--join INPUT"))) return rc;
        return set_str(p, &s->steps[p->ctx_step].join_spec->schema, v);
    case F_JOIN_FROM:
        if ((rc = need_step_ctx(p, typed, CTX_JOIN, "--join INPUT"))) return rc;
        return set_str(p, &s->steps[p->ctx_step].join_spec->from, v);
    case F_DELIMITER:
        p->set_delim = true;
        return parse_delimiter(p, typed, v, &s->delimiter);
    case F_NULL:
        p->set_null = true;
        return set_str(p, &s->null_text, v);
    case F_NO_HEADER:
        p->set_no_header = true;
        s->no_header = true;
        return 0;
    case F_HEADER:
        p->set_header = true;
        s->header = true;
        return 0;
    case F_SCHEMA:
        p->set_schema = true;
        return set_str(p, &s->schema, v);
    case F_FROM:
        p->set_from = true;
        return set_str(p, &s->from, v);
    case F_TO:
        p->set_to = true;
        return set_str(p, &s->to, v);
    case F_OUTPUT:
        p->set_output = true;
        if (!*v) return usage(p, "%s: expected a file name", typed);
        if (strcmp(v, "-") == 0) {     /* -o - : standard output */
            tally_free(s->output);
            s->output = NULL;
            p->output_dash = true;
            return 0;
        }
        p->output_dash = false;
        return set_str(p, &s->output, v);
    case F_FILE:
        if (!*v) return usage(p, "%s: expected a file name", typed);
        p->file = v;
        return 0;
    case F_THREADS: {
        int64_t n;
        if (!parse_count(v, &n) || n > 4096)
            return usage(p, "%s: expected a non-negative integer up to 4096, "
                         "got %s", typed, quoted(v).s);
        p->set_threads = true;
        s->threads = (int)n;
        return 0;
    }
    case F_OUT_DELIMITER: {
        char keep = s->delimiter;
        int r2;
        p->set_out_delim = true;
        if ((r2 = parse_delimiter(p, typed, v, &s->out_delimiter))) return r2;
        s->delimiter = keep;
        return 0;
    }
    case F_OUT_NO_HEADER:
        p->set_out_no_header = true;
        s->out_no_header = true;
        return 0;
    case F_OUT_NULL:
        p->set_out_null = true;
        return set_str(p, &s->out_null, v);
    case F_MEMORY_LIMIT:
        if (!tally_memory_limit_ok(v))
            return usage(p, "%s: expected a size such as 500MB, 4GiB or 50%%, got %s",
                         typed, quoted(v).s);
        p->set_memory_limit = true;
        return set_str(p, &s->memory_limit, v);
    case F_TEMP_DIR:
        if (!*v) return usage(p, "%s: expected a directory, got \"\"", typed);
        p->set_temp_dir = true;
        return set_str(p, &s->temp_dir, v);
    case F_MAX_COLUMNS: {
        int64_t n;
        if (!parse_count(v, &n) || n < 1 || n > INT32_MAX)
            return usage(p, "%s: expected a count from 1 to 2147483647, got %s",
                         typed, quoted(v).s);
        p->set_max_columns = true;
        s->max_columns = n;
        return 0;
    }
    case F_COMMENT:
        if (strcmp(v, "none") == 0) { /* no comments, none sniffed (tally.h) */
            s->comment = '\n';
            p->set_comment = true;
            return 0;
        }
        if (strlen(v) != 1 || v[0] == '\n' || v[0] == '\r')
            return usage(p, "%s: expected one character or none, got \"%s\"", typed, v);
        s->comment = v[0];
        p->set_comment = true;
        return 0;
    case F_QUOTE:
    case F_ESCAPE: {
        int c;
        if (strcmp(v, "none") == 0) c = -1;
        else if (strlen(v) == 1 && v[0] != '\n' && v[0] != '\r') c = (unsigned char)v[0];
        else
            return usage(p, "%s: expected one character or none, got %s", typed,
                         quoted(v).s);
        if (f->id == F_QUOTE) {
            s->quote = c;
            p->set_quote = true;
        } else {
            s->escape = c;
            p->set_escape = true;
        }
        return 0;
    }
    case F_MAX_RECORD:
        /* at least 1 MiB: smaller compressed inputs are decompressed
         * whole (formats/compress/stream.c), so the bound is the same for all */
        if (!parse_size(v, &s->max_record_size) || s->max_record_size < ((int64_t)1 << 20))
            return usage(p, "%s: expected a size of 1M or more (bytes, or with K, M "
                         "or G for KiB, MiB, GiB), got %s", typed, quoted(v).s);
        p->set_max_record = true;
        return 0;
    case F_SKIP:
        if (!parse_count(v, &s->skip))
            return usage(p, "%s: expected a non-negative integer, got \"%s\"",
                         typed, v);
        if (s->skip == 0) s->skip = -1; /* given: no preamble sniffed (tally.h) */
        p->set_skip = true;
        return 0;
    case F_RAGGED:
        p->set_ragged = true;
        if (strcmp(v, "error") == 0) s->ragged = 0;
        else if (strcmp(v, "pad") == 0) s->ragged = 1;
        else if (strcmp(v, "skip") == 0) s->ragged = 2;
        else
            return usage(p, "%s: expected error, pad or skip, got \"%s\"", typed, v);
        return 0;
    case F_WITH_FILENAME:
        p->set_with_filename = true;
        s->with_filename = true;
        return 0;
    case F_SORTED:
        p->set_sorted = true;
        s->sorted = true;
        return 0;
    case F_NO_INFER:
        p->set_no_infer = true;
        s->no_infer = true;
        return 0;
    case F_QUOTED_AS_STRING:
        p->set_quoted_as_string = true;
        s->quoted_as_string = true;
        return 0;
    case F_DECIMAL_COMMA:
        p->set_decimal_comma = true;
        s->decimal_comma = true;
        return 0;
    case F_QUIET:
        p->set_quiet = true;
        s->quiet = true;
        return 0;
    case F_COMPRESS_LEVEL: {
        int64_t n;
        if (!parse_count(v, &n) || n < 1 || n > 22)
            return usage(p, "%s: expected a level from 1 to 22, got %s",
                         typed, quoted(v).s);
        p->set_compress_level = true;
        s->compress_level = (int)n;
        return 0;
    }
    case F_PARQUET_COMPRESSION:
        if (!tally_parquet_codec_ok(v))
            return usage(p, "%s: expected zstd, snappy, gzip, lz4 or none, got %s", typed,
                         quoted(v).s);
        p->set_parquet_compression = true;
        return set_str(p, &s->parquet_compression, v);
    case F_ROW_GROUP_SIZE: {
        int64_t n;
        if (!parse_count(v, &n) || n < 1 || n > INT32_MAX)
            return usage(p, "%s: expected a row count from 1 to 2147483647, got %s",
                         typed, quoted(v).s);
        p->set_row_group_size = true;
        s->row_group_size = n;
        return 0;
    }
    case F_STATS:
        p->set_stats = true;
        s->stats = true;
        return 0;
    case F_NO_OPTIMIZE:
        p->set_no_optimize = true;
        s->no_optimize = true;
        return 0;
    case F_VERBOSE:
        p->set_verbose = true;
        s->verbose = true;
        return 0;
    case F_ROWS: {
        int64_t n;
        if (strcmp(v, "all") == 0) n = -1;
        else if (!parse_count(v, &n) || n < 1 || n > INT32_MAX)
            return usage(p, "%s: expected a count of rows from 1, or all, got %s",
                         typed, quoted(v).s);
        p->set_rows = true;
        s->table_rows = n;
        return 0;
    }
    case F_COLOR:
        if (strcmp(v, "auto") == 0) g_color = CLI_COLOR_AUTO;
        else if (strcmp(v, "always") == 0) g_color = CLI_COLOR_ALWAYS;
        else if (strcmp(v, "never") == 0) g_color = CLI_COLOR_NEVER;
        else
            return usage(p, "%s: expected auto, always or never, got %s", typed,
                         quoted(v).s);
        return 0;
    case F_HELP:
    case F_VERSION:
        return 0;   /* handled by the caller */
    }
    return 0;
}

/* Does the argument look like one of our long flags (for "missing value")? */
static bool is_known_long_flag(const char *a)
{
    if (strncmp(a, "--", 2) != 0 || a[2] == 0) return false;
    const char *eq = strchr(a, '=');
    return flag_find(a, eq ? (size_t)(eq - a) : strlen(a)) != NULL;
}

static bool is_existing_path(const char *a)
{
    struct stat sb;
    return stat(a, &sb) == 0;
}

/* Move a path given on the command line (*from, relative to the current
 * folder) over the pipeline file's (*to, whose paths are relative to the
 * file's folder): made absolute when the file has a folder.  0, or the
 * status of a usage or memory error (reported). */
static int move_path(Parser *p, char **from, char **to, const TallySpec *file_spec)
{
    char *path = *from;
    if (path && path[0] != '/' && file_spec->spec_dir) {
        char cwd[4096];
        if (!getcwd(cwd, sizeof cwd))
            return usage(p, "cannot read the current directory: %s", strerror(errno));
        size_t n = strlen(cwd) + strlen(path) + 2;
        char *abs = tally_alloc(n);
        if (!abs) return oom(p);
        snprintf(abs, n, "%s/%s", cwd, path);
        tally_free(path);
        path = abs;
    }
    tally_free(*to);
    *to = path;
    *from = NULL;
    return 0;
}

/* Move the command-line options over a spec read from a pipeline file. */
static int merge_overrides(Parser *p, TallySpec *cli, TallySpec *file_spec)
{
#define MOVE(flag, field)                                                      \
    if (p->flag) {                                                             \
        tally_free(file_spec->field);                                    \
        file_spec->field = cli->field;                                         \
        cli->field = NULL;                                                     \
    }
    MOVE(set_from, from)
    MOVE(set_to, to)
    MOVE(set_null, null_text)
    MOVE(set_schema, schema)
    MOVE(set_out_null, out_null)
    MOVE(set_parquet_compression, parquet_compression)
    MOVE(set_memory_limit, memory_limit)
#undef MOVE
    int rc;
    if (p->set_temp_dir &&
        (rc = move_path(p, &cli->temp_dir, &file_spec->temp_dir, file_spec)) != 0)
        return rc;
    if (p->set_output && (rc = move_path(p, &cli->output, &file_spec->output, file_spec)) != 0)
        return rc;
    if (p->set_delim) file_spec->delimiter = cli->delimiter;
    if (p->set_no_header || p->set_header) { /* over the file's choice */
        file_spec->no_header = p->set_no_header;
        file_spec->header = p->set_header;
    }
    if (p->set_threads) file_spec->threads = cli->threads;
    if (p->set_stats) file_spec->stats = true;
    if (p->set_out_delim) file_spec->out_delimiter = cli->out_delimiter;
    if (p->set_with_filename) file_spec->with_filename = true;
    if (p->set_out_no_header) file_spec->out_no_header = true;
    if (p->set_ragged) file_spec->ragged = cli->ragged;
    if (p->set_skip) file_spec->skip = cli->skip;
    if (p->set_max_record) file_spec->max_record_size = cli->max_record_size;
    if (p->set_quote) file_spec->quote = cli->quote;
    if (p->set_escape) file_spec->escape = cli->escape;
    if (p->set_comment) file_spec->comment = cli->comment;
    if (p->set_max_columns) file_spec->max_columns = cli->max_columns;
    if (p->set_sorted) file_spec->sorted = true;
    if (p->set_no_infer) file_spec->no_infer = true;
    if (p->set_quoted_as_string) file_spec->quoted_as_string = true;
    if (p->set_decimal_comma) file_spec->decimal_comma = true;
    if (p->set_quiet) file_spec->quiet = true;
    if (p->set_compress_level) file_spec->compress_level = cli->compress_level;
    if (p->set_row_group_size) file_spec->row_group_size = cli->row_group_size;
    if (p->set_no_optimize) file_spec->no_optimize = true;
    if (p->set_verbose) file_spec->verbose = true;
    if (p->set_rows) file_spec->table_rows = cli->table_rows;
    return 0;
}

/* -o - names standard output as an output like any -o: it gets the CSV
 * (or its --to), never the table of a terminal (cmd/term.c). */
static int dash_csv(Parser *p)
{
    if (p->output_dash && !p->spec->output && !p->spec->to &&
        !(p->spec->to = tally_strdup("csv")))
        return oom(p);
    return 0;
}

/* See flags.h. */
int cli_flags_parse(int argc, char **argv, TallyMode mode, TallySpec *spec,
                    CliAction *action, TallyError *err)
{
    Parser p;
    memset(&p, 0, sizeof p);
    p.spec = spec;
    p.mode = mode;
    p.err = err;
    err->exit_code = 0;
    err->message[0] = 0;
    *action = CLI_RUN;
    g_color = CLI_COLOR_AUTO;
    int rc;
    bool only_inputs = false;   /* after "--" */

    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (only_inputs || a[0] != '-' || a[1] == 0) {
            if ((rc = end_ctx(&p, a))) return rc;
            if ((rc = push_input(&p, a))) return rc;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_inputs = true;
            continue;
        }
        const char *eq = a[1] == '-' ? strchr(a, '=') : NULL;
        size_t name_len = eq ? (size_t)(eq - a) : strlen(a);
        const Flag *f = flag_find(a, name_len);
        if (!f) {
            char typed[256];
            snprintf(typed, sizeof typed, "%.*s",
                     (int)(name_len < 200 ? name_len : 200), a);
            const char *near = flag_suggest(typed);
            if (near)
                return usage(&p, "unknown option %s (did you mean %s?)",
                             quoted(typed).s, quoted(near).s);
            return usage(&p, "unknown option %s (try tally --help)", quoted(typed).s);
        }
        /* the flag as typed, without "=value" (the table spells every
         * accepted name, aliases included, so this is what the user typed) */
        const char *typed = f->name;
        const char *v = NULL;
        if (f->arg == ARG_NONE) {
            if (eq) return usage(&p, "option %s takes no value", quoted(f->name).s);
        } else if (eq) {
            v = eq + 1;
        } else if (f->arg == ARG_REQ) {
            if (i + 1 >= argc || is_known_long_flag(argv[i + 1]))
                return usage(&p, "option %s needs a value", quoted(f->name).s);
            v = argv[++i];
        } else if (i + 1 < argc && argv[i + 1][0] != '-' &&
                   !is_existing_path(argv[i + 1])) {
            v = argv[++i];
        }
        if (f->id == F_HELP) { *action = CLI_HELP; return 0; }
        if (f->id == F_VERSION) { *action = CLI_VERSION; return 0; }
        if ((rc = apply(&p, f, typed, v))) return rc;
    }
    if ((rc = end_ctx(&p, NULL))) return rc;

    if (mode == TALLY_SCHEMA && p.first_step_flag)
        return usage(&p, "tally schema prints the input columns and takes no "
                     "steps (got %s)", quoted(p.first_step_flag).s);

    if (p.file) {
        if (spec->n_inputs > 0 || spec->n_steps > 0)
            return usage(&p, "-f: inputs and steps come from %s; give only "
                         "options (such as -o) on the command line", p.file);
        TallySpec file_spec;
        memset(&file_spec, 0, sizeof file_spec);
        rc = tally_spec_from_json(p.file, &file_spec, err);
        if (rc == 0 && file_spec.n_inputs == 0) {
            usage(&p, "%s: no inputs given (\"inputs\" is empty)", p.file);
            rc = 2;
        }
        if (rc == 0) rc = merge_overrides(&p, spec, &file_spec);
        if (rc != 0) {
            if (err->exit_code == 0) err->exit_code = rc;
            tally_spec_free(&file_spec);
            return err->exit_code;
        }
        tally_spec_free(spec);
        *spec = file_spec;
        return dash_csv(&p);
    }
    if (spec->n_inputs == 0) return no_input(&p, argc == 0 && mode == TALLY_RUN, action);
    return dash_csv(&p);
}

/* See flags.h. */
int cli_exit_status(TallyStatus st)
{
    switch (st) {
    case TALLY_OK:
    case TALLY_CLOSED:
        return 0;
    case TALLY_ERR_USAGE:
        return 2;
    default:
        return 1;
    }
}
