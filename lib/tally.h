/*
 * tally.h -- the only public header.  cmd/ includes nothing else.
 *
 * A run is described by a TallySpec: inputs, options, steps and an output.
 * The command line (cmd/flags.c) and a pipeline file (-f, lib/dsl/spec.c)
 * are two front doors onto this one spec; the plan built from it is the same.
 *
 * Ownership: a TallySpec owns every string it points to (allocated with
 * tally_strdup); tally_spec_free releases them all.
 */
#ifndef TALLY_H
#define TALLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TALLY_VERSION "0.1.0"

/* A piece of user text and where it came from, for error messages.  origin
 * is "--filter", "--select", ... for flags, or a JSON path such as
 * "/steps/2/agg/total" for a pipeline file. */
typedef struct TallyText {
    char *text;
    char *origin;
} TallyText;

typedef enum TallyStepKind {
    TALLY_STEP_FILTER,    /* items[0]: predicate */
    TALLY_STEP_SELECT,    /* items: select items ("expr [as name]") */
    TALLY_STEP_WITH,      /* names[0] = items[0]; when names[0] is NULL the
                             item is the whole 'NAME = EXPR' text */
    TALLY_STEP_DROP,      /* items: column names */
    TALLY_STEP_RENAME,    /* names[i] -> items[i] (old -> new); when names is
                             NULL, items[0] is the whole 'OLD:NEW,...' text */
    TALLY_STEP_GROUP_BY,  /* items: key expressions (may be none: whole-input
                             aggregate); aggs: "[NAME =] AGG(EXPR)" items,
                             agg_names[i] set when the name came separately */
    TALLY_STEP_SORT,      /* items: "expr [asc|desc] [nulls first|last]" or "-expr" */
    TALLY_STEP_LIMIT,     /* limit (-1: all), offset, tail; by: optional
                             per-group keys */
    TALLY_STEP_DISTINCT,  /* items: optional columns */
    TALLY_STEP_JOIN,      /* join_input, items: key columns, how, suffix */
    TALLY_STEP_DESCRIBE,  /* no items: one row of statistics per column */
    TALLY_STEP_SAMPLE,    /* limit rows, or sample_pct percent; seed */
    TALLY_STEP_ROW_NUMBER,/* items[0]: the new column's name */
} TallyStepKind;

/* A list of texts.  `split` true means each text is a comma LIST still to be
 * split (flag form: commas inside parentheses or quotes do not split); false
 * means each text is one item (JSON form). */
typedef struct TallyStep {
    TallyStepKind kind;
    char *origin;           /* "--filter" or "/steps/2" */
    bool split;
    TallyText *items;
    int n_items;
    char **names;           /* parallel to items, entries may be NULL; or NULL */
    TallyText *aggs;        /* group-by */
    int n_aggs;
    char **agg_names;       /* parallel to aggs, entries may be NULL; or NULL */
    int64_t limit;          /* limit: rows kept, -1 all; sample: rows kept */
    int64_t offset;         /* limit: rows skipped first (--offset) */
    bool tail;              /* limit: the last `limit` rows (--tail) */
    double sample_pct;      /* sample: percent 0..100, or -1: `limit` rows */
    uint64_t seed;          /* sample: --seed (default 0) */
    TallyText *by;          /* limit ... by */
    int n_by;
    char *join_input;       /* join */
    char *how;              /* join: inner (NULL), left, right, full, semi, anti */
    char *suffix;           /* join: default "_right" */
    struct TallySpec *join_spec; /* join: the right side as a pipeline of its
                               own (inputs, steps, read options; output, to,
                               threads unused).  The flag form makes one
                               from join_input and --join-delimiter,
                               --join-schema, --join-from.  Its unset
                               delimiter, null, header, no_header and from are
                               taken from the enclosing spec. */
} TallyStep;

typedef struct TallySpec {
    char **inputs;
    int n_inputs;
    TallyStep *steps;
    int n_steps;
    char *output;           /* NULL: standard output */
    char *from;             /* input format override, or NULL */
    char *to;               /* output format override, or NULL */
    char delimiter;         /* 0: from the suffix (',' or '\t') */
    char *null_text;        /* --null STR, or NULL */
    bool no_header;         /* --no-header: line 1 is data */
    bool header;            /* --header: line 1 is the header (neither:
                               detected) */
    char *schema;           /* --schema 'name:type,...', or NULL */
    bool no_infer;          /* --no-infer: every column a string */
    bool quoted_as_string;  /* --quoted-as-string */
    bool quiet;             /* --quiet: no notes on standard error */
    int threads;            /* 0: all cores */
    bool stats;             /* --stats: the CLI prints the TallyStats */
    bool no_optimize;
    bool verbose;           /* explain: list the optimizer rules that fired */
    char *spec_dir;         /* folder of the pipeline file: inputs/outputs are
                               relative to it; NULL for the flag form */
    bool with_filename;     /* --with-filename: add a `filename` column */
    char out_delimiter;     /* --out-delimiter for CSV output; 0: ',' */
    bool out_no_header;     /* --out-no-header: write no header line */
    char *out_null;         /* --out-null: how CSV/TSV output writes null */
    int64_t skip;           /* --skip N: CSV/TSV lines before the header;
                               0: sniffed; -1: none (--skip 0) */
    int64_t max_record_size; /* --max-record-size: a compressed input's
                               longest record, bytes; 0: the default */
    int quote;              /* --quote: 0 the format's (CSV: sniffed), -1
                               none, else the character */
    int escape;             /* --escape: 0 sniffed (CSV), -1 none, else the
                               character */
    bool decimal_comma;     /* --decimal-comma: "1,5" is the number 1.5 */
    char comment;           /* --comment C: input lines starting with C skipped;
                               0: sniffed; '\n': none (--comment none) */
    int ragged;             /* --ragged: 0 error, 1 pad, 2 skip (CSV/TSV
                               rows with another field count than the header) */
    int64_t max_columns;    /* --max-columns N: more columns in an input is a
                               data error; 0: the default (1,000,000) */
    int compress_level;     /* --compress-level for -o x.gz / x.zst and Parquet's
                               codec; 0: default */
    char *parquet_compression; /* --parquet-compression: zstd snappy gzip lz4
                               none; NULL: zstd */
    int64_t row_group_size; /* --row-group-size: Parquet output's rows per row
                               group; 0: the default (122,880) */
    bool sorted;            /* --sorted: every group-by's input is clustered
                               on its keys (checked; a key that comes back
                               after its run ended is a data error) */
    int table_width;        /* --to table: the line width in cells (the CLI
                               reads it from the terminal); 0: 80 */
    int64_t table_rows;     /* --to table: rows shown, the first and the
                               last half; 0: 40, -1: all (--rows) */
    bool color;             /* --to table: colour the header and the nulls
                               (the CLI decides: --color, NO_COLOR) */
    char *memory_limit;     /* --memory-limit SIZE as written ("256MiB",
                               "50%"), or NULL: TALLY_MEMORY_LIMIT, else the
                               default (80% of memory or the cgroup's limit) */
    char *temp_dir;         /* --temp-dir DIR: spill files; NULL: $TMPDIR,
                               else /tmp */
} TallySpec;

/* A --sample size: digits, a row count (*rows; *pct = -1), or a decimal
 * number from 0 to 100 and '%' (*pct; *rows = -1), as "10", "2.5%".  false
 * for anything else (a sign, spaces, an exponent, more than 100%). */
bool tally_parse_sample(const char *s, int64_t *rows, double *pct);

/* Whether s names a Parquet codec of --parquet-compression (zstd snappy
 * gzip lz4 none). */
bool tally_parquet_codec_ok(const char *s);

/* Whether s is a size --memory-limit takes ("500MB", "4GiB", "50%"). */
bool tally_memory_limit_ok(const char *s);

/* Allocation for spec strings (through the one allocator hook). */
char *tally_strdup(const char *s);
void *tally_alloc(size_t n);      /* zeroed */
void *tally_realloc(void *p, size_t n);
void tally_free(void *p);         /* NULL-safe */
void tally_spec_free(TallySpec *spec);

/* Append a zeroed step and return it, or NULL on OOM. */
TallyStep *tally_spec_add_step(TallySpec *spec, TallyStepKind kind);
/* Append text/origin to a step list (copies both).  false on OOM. */
bool tally_text_push(TallyText **list, int *n, const char *text, const char *origin);

/* Errors reported by the library: message is printed after "tally: ".
 * exit_code is set by the pipeline-file reader (tally_spec_from_json): 1
 * (out of memory, unreadable file) or 2 (usage); tally_run reports a
 * TallyStatus instead and leaves it alone. */
typedef struct TallyError {
    int exit_code;
    char message[4096];
} TallyError;

/* Read a JSON pipeline file into spec (zeroed by the caller).  Returns 0 on
 * success, else fills err. */
int tally_spec_from_json(const char *path, TallySpec *spec, TallyError *err);

typedef enum TallyMode {
    TALLY_RUN,      /* run and write the output */
    TALLY_EXPLAIN,  /* print the plan before and after optimization */
    TALLY_SCHEMA,   /* print each input column's name and type */
} TallyMode;

/* How a run ended.  The library says what happened; the program chooses
 * what to make of it (cmd/main.c: exit status 0, 1 or 2). */
typedef enum TallyStatus {
    TALLY_OK = 0,
    TALLY_CLOSED,      /* standard output was closed by its reader (EPIPE):
                          the run stopped early, nothing is wrong, err holds
                          no message */
    TALLY_ERR_USAGE,   /* the command or pipeline is wrong: flags, an
                          expression, an unknown column */
    TALLY_ERR_DATA,    /* an input holds what the pipeline cannot take, or
                          evaluation failed on a value */
    TALLY_ERR_IO,      /* a file could not be opened, read or written */
    TALLY_ERR_OOM,     /* out of memory */
} TallyStatus;

/* What a completed run did: the counters of the attempt that completed
 * (TALLY_RUN, TALLY_SCHEMA), plus how many attempts type inference
 * restarted before it.  Zero after TALLY_EXPLAIN or a failure. */
typedef struct TallyStats {
    int64_t rows_read, bytes_read, batches;
    int64_t groups, rows_sorted, rows_written, restarts;
    int64_t decompressed_held_peak; /* compressed inputs: the most
                                       decompressed bytes held at once (0:
                                       none; with streaming it depends on
                                       timing) */
    int64_t memory_limit;           /* the run's memory budget, bytes */
    int64_t memory_held_peak;       /* the most the operators' reservations
                                       held at once */
    int64_t spilled_bytes, spill_read_bytes; /* written to spill files and
                                       read back (compressed bytes) */
    int64_t sort_runs;              /* sorted runs the sorts spilled */
    int64_t resident_peak;          /* the process's peak resident memory
                                       (VmHWM, file pages included); 0:
                                       unknown */
    char *converted;   /* "name=count ...": values the readers converted
                          per column, in the scan's column order, or NULL;
                          owned, free with tally_free */
} TallyStats;

/* Run spec in the given mode.  On failure err holds the message.  stats,
 * when not NULL, is filled (zeroed first). */
TallyStatus tally_run(const TallySpec *spec, TallyMode mode, TallyStats *stats,
                      TallyError *err);

/* Install the process-wide SIGBUS handler that makes a memory-mapped input
 * file shrinking during a run a data error ("FILE: changed size while
 * being read ...", status 1) instead of a signal death.  Call once, at
 * program start, before any run; it keeps any earlier SIGBUS disposition
 * for faults outside mapped inputs. */
void tally_guard_inputs(void);

/* The candidate nearest to `typed` for a "did you mean", or NULL (the
 * library's one edit distance, lib/core/suggest.c). */
const char *tally_suggest(const char *typed, const char *const *cands, size_t n);

/* s between double quotes with control characters and invalid UTF-8
 * escaped and a long value cut (lib/core/quote.c), into buf; returns buf.
 * For putting user text into a message. */
const char *tally_quote(char *buf, size_t cap, const char *s);
/* msg with every control character but newline (and invalid UTF-8)
 * escaped, into dst: what the CLI prints, so no message can drive the
 * terminal. */
void tally_escape_message(char *dst, size_t cap, const char *msg);
/* Remove the temporary output files of runs under way (their targets are
 * untouched).  Async-signal-safe: for a handler of a signal that ends the
 * process (the CLI calls it on SIGINT, SIGTERM and SIGHUP, then lets the
 * signal's default action end the process). */
void tally_remove_temp_files(void);

/* Number of online processors (for --threads default and --help). */
int tally_cpu_count(void);

#endif
