/*
 * ctx.h -- the run context: what one run of the library owns and every
 * layer below it may read.
 *
 * lib/run creates a TlCtx at the start of a run, fills its tuning from the
 * environment once (tl_tuning_read, the only reader of TALLY_* variables in
 * the library), and hands a pointer down through the structs that already
 * travel: the reader options (TlReadOptions.ctx), each operator
 * (TlOperator.ctx, passed from child to parent like the counters), the
 * groupers, the input loaders.  The type lives here, in the lowest layer,
 * so that formats, kernels, groupers and operators can take it without an
 * include going up; only lib/run creates and frees one.
 *
 * A NULL context is allowed wherever one is taken: the code then reads the
 * environment's tuning at that point (tl_ctx_tuning), which is what a unit
 * test that calls a reader or an operator directly wants.  A run never
 * passes NULL, so within a run every switch is read once, at its start,
 * and stays the same for the whole run (restarts included).
 *
 * The memory budget and the temporary folder are in TlCtx.budget
 * (budget.h).
 */
#ifndef TL_CTX_H
#define TL_CTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Switches and sizes, read from the environment once per run.  Every
 * TALLY_* variable the library honours is a member here (man/tally.1,
 * ENVIRONMENT, lists those a user may set; the rest are for tests and
 * benchmarks, to force one path of an algorithm). */
typedef struct TlTuning {
    int64_t batch_rows;     /* TALLY_BATCH_ROWS (1 .. 2^30), else TL_BATCH_ROWS */
    /* scan (lib/exec/op_scan.c) */
    bool no_late;           /* TALLY_NO_LATE: no late materialization */
    bool no_guess;          /* TALLY_NO_GUESS: no guessed morsel ends */
    /* group-by (lib/exec/op_agg.c, agg_radix.c, lib/group) */
    bool agg_serial;        /* TALLY_AGG_SERIAL: no stage on the scan */
    bool agg_radix_off;     /* TALLY_AGG_RADIX=0: partials, not partitions */
    int agg_pre;            /* TALLY_AGG_PRE: 0 never pre-aggregate, 1
                               always, -1 (unset or else) by the data */
    bool group_no_runs;     /* TALLY_GROUP_NO_RUNS: no runs of equal keys */
    bool group_rows;        /* TALLY_GROUP_ROWS: the row grouper for any key */
    /* sort and top-N per group (op_sort.c, op_topn_by.c) */
    bool sort_serial;       /* TALLY_SORT_SERIAL: no stage on the scan */
    int sort_pack;          /* TALLY_SORT_PACK: 0 columns, 2, else 1 */
    /* join (lib/exec/physical.c) */
    int join_build;         /* TALLY_JOIN_BUILD: 1 left, -1 right (any other
                               value), 0 unset: by the inputs' sizes */
    /* input bytes (formats/input.c, compress/stream.c) */
    bool no_copy;           /* TALLY_NO_COPY: decoders read the mapping */
    bool no_stream;         /* TALLY_NO_STREAM: decompress whole at open */
    size_t stream_step;     /* TALLY_STREAM_STEP: stream any size in steps
                               of this many bytes; 0: the default */
    bool no_recycle;        /* TALLY_NO_RECYCLE: keep read stream pages */
    bool no_prefill;        /* TALLY_NO_PREFILL: no page-filling thread */
    /* output (formats/sink.c) */
    bool no_tmpfile;        /* TALLY_NO_TMPFILE (non-empty): named temp file */
    /* TALLY_TEST_SHRINK=MORSEL:BYTES: when a reader starts decoding morsel
     * shrink_morsel of its input, it truncates the file to shrink_to bytes,
     * as another process might (formats/mapped.c); -1: never */
    int64_t shrink_morsel;
    uint64_t shrink_to;
    /* TALLY_TEST_CSV_MORSEL=ROWS:BYTES, TALLY_TEST_NDJSON_MORSEL (tests):
     * the CSV (NDJSON) reader's records per morsel and in the inference
     * batch (0: batch_rows) and a fixed morsel target in bytes (0: the
     * default, growing) */
    int64_t csv_morsel_rows, csv_morsel_bytes;
    int64_t nd_morsel_rows, nd_morsel_bytes;
    int csv_scan;           /* TALLY_TEST_CSV_SCAN=0..3: how the CSV reader
                               finds records (tl_csv_scan_best); -1: the
                               best there is */
    /* TALLY_NOW=YYYY-MM-DD[( |T)HH:MM:SS[.f]][Z]: the instant now() and
     * current_date give, for reproducible runs and tests; now_env 0 unset,
     * 1 set (now_us), -1 set but not a timestamp (a usage error) */
    int now_env;
    int64_t now_us;
    /* memory budget and spilling (budget.h, lib/run/run.c) */
    const char *memory_limit; /* TALLY_MEMORY_LIMIT, or NULL (environment
                               text, valid while the environment is) */
    const char *tmpdir;     /* TMPDIR, or NULL: where spill files go when
                               no --temp-dir is given */
    bool force_spill;       /* TALLY_FORCE_SPILL=1: spill at the smallest
                               sizes (tests) */
} TlTuning;

/* One run's context.  Created, owned and freed by lib/run; borrowed by
 * everything below for the run's length. */
typedef struct TlCtx {
    TlTuning tuning;
    /* the run's instant (microseconds since the epoch, UTC): TALLY_NOW's,
     * else the clock read once when the run starts, so every row and every
     * restarted attempt sees the same now() */
    int64_t now;
    /* what the run keeps of its inputs (formats/compress.h, TlInputs):
     * standard input read once, the last decompressed file (so a restart
     * does not decompress it again), the registry of decompression
     * streams and the count of decompressed bytes held.  Its type is the
     * formats layer's; lib/run creates and frees it.  NULL: nothing is
     * kept (a reader opened by a unit test) */
    struct TlInputs *inputs;
    /* standard input and FIFOs are read by a thread while readers parse
     * (formats/stream.c, tl_stream_pipe) instead of whole first: set by
     * lib/run for a run whose output may stream with fixed types, so its
     * rows go out while the pipe's writer still writes */
    bool stream_pipes;
    /* the run's memory budget (budget.h): the limit, the reservations'
     * total, the temporary folder and the spill counters.  NULL: no
     * limit, nothing counted (a unit test's operator) */
    struct TlBudget *budget;
} TlCtx;

/* Fill t from the environment (tuning.c). */
void tl_tuning_read(TlTuning *t);

/* The allocator's fault injection (TL_FAULT builds, alloc.c), read from the
 * environment before the first allocation of the process, so it cannot
 * wait for a run: TALLY_FAIL_ALLOC=N (0: none) and TALLY_FAIL_ALLOC_ALL=1. */
void tl_tuning_read_fault(uint64_t *fail_at, bool *fail_all);

/* c's tuning; with c NULL, the environment's now, read into *scratch. */
const TlTuning *tl_ctx_tuning(const TlCtx *c, TlTuning *scratch);

/* The tuning of context c (an expression: TL_TUNING(op->ctx)->no_late;
 * c is evaluated twice); with c NULL, the environment's, read into a
 * compound literal that lives until the end of the enclosing block. */
#define TL_TUNING(c) ((c) ? &(c)->tuning : tl_ctx_tuning(NULL, &(TlTuning){0}))

/* Maximum rows per batch of the run (tuning.batch_rows); with c NULL, the
 * environment's (tl_batch_rows). */
int64_t tl_ctx_batch_rows(const TlCtx *c);

#endif
