/*
 * op_scan.c -- the scan operator: reader batches in, plan batches out, as
 * morsels on the thread pool.
 *
 * A scan reads its inputs one after another (several inputs concatenate),
 * opening each one the plan did not keep open when it reaches it and
 * closing it once read ("opening and closing" below).  Each input's reader
 * is projected (by the builder, or as it is opened), so it converts only
 * the columns the plan uses; pos[k] says where output column k sits in that
 * reader's batches (-1: this input has no such column, so it is null here).
 *
 * Types: the plan fixed each column's type before the run.  A reader may
 * still hand a column over as the null type (it saw no value yet); the scan
 * turns it into an all-null array of the plan's type (string for a column
 * that is empty everywhere).  Any other difference means the reader widened
 * a type, which it reports as TL_ERR_RESTART before producing a batch, so it
 * cannot happen here; int64 where float64 is planned is still cast, as a
 * safety net.  When an input's batch already is the output (one input, all
 * columns in place, types equal) it is passed on without copying.
 *
 * Morsels (exec.h, "morsel parallelism").  The consumer thread -- whoever
 * calls next() -- cuts the input into morsels in order: tl_reader_split for
 * readers that can split, else one tl_reader_next batch per morsel (the
 * read is then serial, the rest of the work still parallel).  Morsel seq
 * lives in slot seq % n_slots of a ring; a task per morsel, run by any
 * thread of the pool, decodes it, fixes its columns to the plan's types,
 * applies the fused maps and the stage, and marks the slot done.  The
 * consumer hands slots out strictly by seq, so results, errors (the first
 * in input order wins), restarts (tl_reader_widen, in order) and counters
 * (tl_reader_count, in order) never depend on timing or thread count.
 *
 * Flow control: at most `window` morsels are in flight (twice the threads,
 * plus two), and the window opens gradually (1, then 3, 5, ... as morsels
 * are taken), so `--head 5` decodes one small morsel and a tiny file never
 * starts a thread.  The consumer runs the morsel it needs itself when no
 * one has started it, and otherwise helps with queued tasks while waiting
 * (tl_wait_step); with --threads 1 every task runs inline on the consumer.
 * Freeing the scan cancels what has not started and waits for what has.
 *
 * Late materialization (exec.h, TlLate): when the first map (a filter) or,
 * with no map, the stage (a top-k) has a late form and reads only some of
 * the columns, inputs whose reader can (tl_reader_can_late) decode each
 * morsel in two steps (run_late): the needed columns (part), then the late
 * form picks rows and fetches them whole (tl_late_fetch ->
 * tl_reader_decode_rest + fix_batch).  Decided once per scan before the
 * first morsel (prepare_late); the output is the same either way.
 * TALLY_NO_LATE turns it off.
 *
 * Guessed cuts (format.h, tl_reader_guess): a scan of one input lets its
 * reader guess where morsels end (the CSV reader then reads only a few
 * bytes per morsel on the consumer instead of all of them; the decoder
 * checks the guess).  When the head morsel was guessed and failed, for
 * whatever reason, every later morsel is dropped (waiting for those that
 * run), the reader splits again from the head morsel reading every byte,
 * and the scan goes on: the morsels, and so the output, errors and
 * counters, are those of a scan that never guessed.  TALLY_NO_GUESS turns
 * it off.
 *
 * Streams (a zstd input decompressed by its own thread while it is read,
 * formats/compress/compress.c): the decompressor is the critical path and needs a
 * core of its own, so a morsel it has only just produced is left to the
 * consumer (run when it becomes the head) instead of going to the pool;
 * once the decompressor is STREAM_LEAD_MORSELS morsels ahead (the parsing
 * is then what lags) or done, morsels go to the pool again.  Only who runs
 * a morsel changes, never the morsels.
 */
#include "ops.h"

#include <stdio.h>
#include <stdlib.h>

/* A morsel of a stream still being decompressed goes to the pool only when
 * the decompressor is this many morsels' worth ahead of its end. */
#define STREAM_LEAD_MORSELS 4

#include "../../kernels/core_kernels.h"
#include "../core/pool.h"
#include "../expr/eval.h"

enum { SLOT_FREE, SLOT_PENDING, SLOT_RUNNING, SLOT_DONE };

typedef struct ScanIn {
    TlReader *reader;         /* open, or NULL (see ready_input) */
    bool owned;               /* opened by the scan, closed once read */
    bool ready;               /* the cut reached it (ready_input) */
    bool any_cut;             /* a morsel of it was cut */
    bool finished;            /* finish_input: its counters are summed */
    const char *path;         /* the rest: TlScanInput's (borrowed) */
    const TlReadOptions *read;
    TlTypeHints *hints;
    const TlSchema *cols;
    const int *proj;
    int n_proj;
    const int *map;
    const int *pos;
    int64_t bytes;            /* its reader's input bytes, once closed */
    bool identity;
    bool split;               /* read as morsels (tl_reader_split) */
    TlDecoder **decoders;     /* idle decoders, a stack */
    int n_decoders;
    bool late;                /* decode in two steps (late materialization) */
    bool *early;              /* n_early: reader batch columns read first */
    int n_early;
} ScanIn;

typedef struct Map {
    TlMapFn fn;
    void *ctx;
    void (*ctx_free)(void *ctx);
} Map;

struct Scan;

typedef struct Slot {
    struct Scan *scan;
    int state;
    int input;
    TlMorsel m;               /* split inputs */
    TlBatch *batch;           /* read batch (not split) before the task;
                                 the output batch after it (no stage) */
    void *result;             /* stage result */
    int64_t rows;             /* records the morsel held */
    TlStatus st;
    TlError *err;             /* errs[slot]: written only on failure */
    TlSchema *widen;          /* TL_ERR_RESTART from a decode */
    int64_t late_rows, late_kept; /* run_late: rows decoded early, fetched */
    int64_t out_rows;         /* rows after the maps (handed out or staged) */
} Slot;

/* A morsel handed out, for scan_origin: its rows after the maps are the
 * scan's output rows from `before` on; its first record is record `rec`
 * of its input. */
typedef struct Past {
    int input;
    TlMorsel m;
    int64_t before, rec;
} Past;

typedef struct Scan {
    TlOperator base;
    ScanIn *in;
    int n_in, n_cols;
    const TlSchema *scan_schema;  /* before the maps */
    Map *maps;
    int n_maps;
    TlStage stage;
    bool has_stage, started;
    /* late materialization: the first map's late form, or the stage's */
    TlLateMapFn late_map;
    TlLateWorkFn late_work;
    bool *need;               /* n_cols: columns the late form reads first */
    bool *stage_need;         /* n_cols: the same for late_work */
    bool late_stage;          /* late_work is used */
    int64_t late_few;         /* rows late_work fetches at most, or -1 */
    int64_t map_few;          /* the same guess for the late map: set from
                                 the first morsel (see take) */
    /* morsel state, guarded by wait's lock where tasks touch it */
    int cut_in;               /* input being cut into morsels */
    bool cut_done;
    int64_t next_seq;         /* next morsel to cut */
    int64_t head;             /* next morsel to hand out */
    int64_t taken;
    Slot *slots;
    TlError *errs;            /* n_slots, tl_malloc'd: pages untouched
                                 unless a morsel fails (start-up) */
    int n_slots, window;
    int fin_in;               /* inputs before it are read and finished
                                 (finish_input): their bytes summed */
    int64_t stats_done;       /* in this */
    int64_t *converted;       /* n_conv: fields converted per column of the
                                 full scan, summed at finish (or NULL) */
    int n_conv;
    bool late_on;             /* prepare_late chose late materialization */
    int running;              /* tasks submitted, not finished */
    bool cancel;
    bool threads;             /* more than one thread configured */
    TlWait *wait;
    /* the morsels handed out with rows, in order (scan_origin) */
    Past *past;
    int64_t n_past, cap_past;
    int64_t out_total;        /* rows handed out so far */
    int64_t recs;             /* records of input recs_in handed out so far */
    int recs_in;
    bool past_lost;           /* out of memory recording them */
} Scan;

static TlStatus fix_column(const Scan *s, TlArray *a, TlType want, int k,
                           TlArray **out, TlError *err)
{
    int64_t bad;
    if (a->type == want) {
        *out = tl_array_retain(a);
        return TL_OK;
    }
    if (a->type == TL_TNULL) {
        *out = tl_array_new_null(want, a->length);
        return *out ? TL_OK : tl_error_oom(err);
    }
    if (a->type == TL_TINT64 && want == TL_TFLOAT64)
        return tl_cast_array(a, want, false, out, &bad, err);
    return tl_error(err, TL_ERR_DATA,
                    "internal error: column %s read as %s, planned as %s",
                    tl_quote_name(s->scan_schema->fields[k].name).s, tl_type_name(a->type),
                    tl_type_name(want));
}


/* Inputs are finished in order (finish_input), so the bytes of those
 * before `input` are summed once (a glob of thousands of files). */
static void update_stats(Scan *s, int input)
{
    TlExecStats *st = s->base.stats;
    if (!st) return;
    st->bytes_read = s->stats_done +
                     (s->in[input].reader ? tl_reader_stats(s->in[input].reader)->bytes
                                          : s->in[input].bytes);
}

/* ------------------------------------------------ opening and closing
 *
 * Inputs the plan kept open come with their reader; the others are opened
 * when the cut reaches them (ready_input) and closed when the consumer
 * has taken their last morsel (finish_input; an input that gave no morsel
 * at once, in cut).  So the readers open at a time are those with morsels
 * in flight, at most the window's, however many files a glob names. */

/* Open in's file as planned: the same column names as at planning (else
 * it changed since), types the plan can take, projected. */
static TlStatus open_reader(const Scan *s, const ScanIn *in, TlReader **out,
                            TlError *err)
{
    TlReader *r = NULL;
    const TlSchema *rs;
    bool same;
    TlStatus st;
    *out = NULL;
    TL_TRY(tl_reader_open(in->path, in->read, in->hints, &r, err));
    rs = tl_reader_schema(r);
    same = rs->n_fields == in->cols->n_fields;
    for (int c = 0; same && c < rs->n_fields; c++)
        same = strcmp(rs->fields[c].name, in->cols->fields[c].name) == 0;
    for (int k = 0; same && k < s->n_cols; k++) {
        TlType want = s->scan_schema->fields[k].type, t;
        if (in->pos[k] < 0) continue;
        t = rs->fields[in->proj[in->pos[k]]].type;
        same = t == want || t == TL_TNULL || (t == TL_TINT64 && want == TL_TFLOAT64);
    }
    if (!same) {
        tl_reader_close(r);
        return tl_error(err, TL_ERR_DATA, "%s: changed while being read (its columns "
                        "are not those it had when the run began)",
                        tl_escape_name(tl_input_name(in->path)).s);
    }
    st = tl_reader_project(r, in->proj, in->n_proj, err);
    if (st != TL_OK) {
        tl_reader_close(r);
        return st;
    }
    *out = r;
    return TL_OK;
}

static void input_late(Scan *s, ScanIn *in);

/* The cut reached input in (consumer): its reader, decoders, late form. */
static TlStatus ready_input(Scan *s, ScanIn *in, TlError *err)
{
    in->ready = true;
    if (!in->reader) {
        TL_TRY(open_reader(s, in, &in->reader, err));
        in->owned = true;
        in->split = tl_reader_can_split(in->reader);
    }
    in->decoders = tl_calloc((size_t)s->n_slots, sizeof *in->decoders);
    if (!in->decoders) return tl_error_oom(err);
    if (s->late_on) input_late(s, in);
    return TL_OK;
}

/* What in holds for reading: its idle decoders (no morsel of it is in
 * flight), its late columns, its reader when the scan opened it (its
 * bytes kept for the counters). */
static void release_input(Scan *s, ScanIn *in)
{
    if (s->threads) tl_wait_lock(s->wait);
    while (in->n_decoders > 0) tl_decoder_free(in->decoders[--in->n_decoders]);
    if (s->threads) tl_wait_unlock(s->wait);
    tl_free(in->decoders);
    in->decoders = NULL;
    tl_free(in->early);
    in->early = NULL;
    in->n_early = 0;
    in->late = false;
    if (in->owned) {
        in->bytes = tl_reader_stats(in->reader)->bytes;
        tl_reader_close(in->reader);
        in->reader = NULL;
        in->owned = false;
    }
}

/* in's reader's converted counters into the scan's. */
static void add_converted(Scan *s, const ScanIn *in)
{
    const TlReaderStats *rs = tl_reader_stats(in->reader);
    for (int j = 0; s->converted && rs->converted && j < s->n_conv; j++)
        if (in->map[j] >= 0) s->converted[j] += rs->converted[in->map[j]];
}

/* The consumer has taken every morsel of in: its counters into the
 * scan's, then release it. */
static void finish_input(Scan *s, ScanIn *in)
{
    if (in->reader) {
        in->bytes = tl_reader_stats(in->reader)->bytes;
        add_converted(s, in);
    }
    in->finished = true;
    s->stats_done += in->bytes;
    release_input(s, in);
}

/* Batch b of input i as a batch of the scan's schema (consumes b). */
static TlStatus fix_batch(const Scan *s, const ScanIn *in, TlBatch *b,
                          TlBatch **out, TlError *err)
{
    TlBatch *nb;
    bool same = in->identity && b->n_cols == s->n_cols;
    *out = NULL;
    for (int k = 0; same && k < s->n_cols; k++)
        same = b->cols[k]->type == s->scan_schema->fields[k].type;
    if (same) {
        b->schema = s->scan_schema;
        *out = b;
        return TL_OK;
    }
    nb = tl_batch_new(s->scan_schema, s->n_cols, b->n_rows);
    if (!nb) {
        tl_batch_free(b);
        return tl_error_oom(err);
    }
    for (int k = 0; k < s->n_cols; k++) {
        TlType want = s->scan_schema->fields[k].type;
        TlStatus st;
        if (in->pos[k] < 0 || in->pos[k] >= b->n_cols) {
            nb->cols[k] = tl_array_new_null(want, b->n_rows);
            st = nb->cols[k] ? TL_OK : tl_error_oom(err);
        } else {
            st = fix_column(s, b->cols[in->pos[k]], want, k, &nb->cols[k], err);
        }
        if (st != TL_OK) {
            tl_batch_free(nb);
            tl_batch_free(b);
            return st;
        }
    }
    tl_batch_free(b);
    *out = nb;
    return TL_OK;
}

/* A decoder of input i: an idle one, or a new one. */
static TlStatus get_decoder(Scan *s, ScanIn *in, TlDecoder **out, TlError *err)
{
    *out = NULL;
    if (s->threads) tl_wait_lock(s->wait);
    if (in->n_decoders > 0) *out = in->decoders[--in->n_decoders];
    if (s->threads) tl_wait_unlock(s->wait);
    if (*out) return TL_OK;
    return tl_decoder_new(in->reader, out, err);
}

static void put_decoder(Scan *s, ScanIn *in, TlDecoder *d)
{
    if (s->threads) tl_wait_lock(s->wait);
    in->decoders[in->n_decoders++] = d; /* room: one per slot */
    if (s->threads) tl_wait_unlock(s->wait);
}

/* See exec.h, "late materialization". */
struct TlLate {
    const Scan *s;
    ScanIn *in;
    Slot *sl;
    TlDecoder *d;
    TlBatch *early;
    bool fetched;
};

/* See exec.h: the rows sel[0..n) of the morsel with every column, as a
 * batch of the scan's schema (before its maps). */
TlStatus tl_late_fetch(TlLate *late, const uint32_t *sel, int64_t n,
                       TlBatch **out, TlError *err)
{
    TlBatch *rb = NULL;
    *out = NULL;
    if (late->fetched)
        return tl_error(err, TL_ERR_DATA, "internal error: rows fetched twice");
    late->fetched = true;
    late->sl->late_kept = n < 0 ? late->early->n_rows : n;
    TL_TRY(tl_reader_decode_rest(late->in->reader, late->d, late->early, sel, n,
                                 &rb, &late->sl->widen, err));
    if (!rb) return TL_OK;
    return fix_batch(late->s, late->in, rb, out, err);
}

/* A morsel through late materialization: decode the needed columns,
 * build the part batch, run the first map's (or the stage's) late form.
 * *out: the first map's output; *staged: the stage ran.  d is held until
 * the rest is converted. */
static TlStatus run_late(Scan *s, ScanIn *in, Slot *sl, TlDecoder *d,
                         TlBatch **out, bool *staged, TlError *err)
{
    TlBatch *eb = NULL, *part = NULL;
    TlLate late = {s, in, sl, d, NULL, false};
    TlStatus st;
    *out = NULL;
    st = tl_reader_decode_early(in->reader, d, &sl->m, in->early, in->n_early,
                                s->late_stage ? s->late_few : s->map_few, &eb,
                                &sl->widen, err);
    if (st != TL_OK || !eb) return st; /* the morsel is over */
    sl->rows = eb->n_rows;
    sl->late_rows = eb->n_rows;
    late.early = eb;
    part = tl_batch_new(s->scan_schema, s->n_cols, eb->n_rows);
    if (!part) st = tl_error_oom(err);
    for (int k = 0; st == TL_OK && k < s->n_cols; k++) {
        TlType want = s->scan_schema->fields[k].type;
        int p = in->pos[k];
        if (!s->need[k]) continue;
        if (p < 0 || p >= eb->n_cols) {
            part->cols[k] = tl_array_new_null(want, eb->n_rows);
            if (!part->cols[k]) st = tl_error_oom(err);
        } else if (!eb->cols[p]) {
            st = tl_error(err, TL_ERR_DATA,
                          "internal error: column %s was not converted early",
                          tl_quote_name(s->scan_schema->fields[k].name).s);
        } else {
            st = fix_column(s, eb->cols[p], want, k, &part->cols[k], err);
        }
    }
    if (st == TL_OK) {
        if (s->late_stage) {
            *staged = true;
            st = s->late_work(s->stage.ctx, part, &late, &sl->result, err);
        } else {
            st = s->late_map(s->maps[0].ctx, part, &late, out, err);
        }
        part = NULL; /* consumed */
    }
    tl_batch_free(part);
    if (!late.fetched) tl_reader_decode_end(in->reader, d);
    tl_batch_free(eb);
    return st;
}

/* What place_error runs over a morsel decoded again, for
 * tl_first_failing_row: the first n_maps maps, then the stage when it is
 * what failed (its result dropped).  The stage goes row by row as the maps
 * do: its work evaluates the operator's expressions (an aggregate's keys
 * and arguments, sort keys, a join's probe and what is fused above it) on
 * each row, and every row goes to it in input order. */
typedef struct Rerun {
    const Scan *s;
    int n_maps;
    bool stage;
    /* out: the scan column the failing value was read from, or -1 (see
     * read_from); set by each run, so it is that of the run whose error
     * tl_first_failing_row keeps */
    int col;
} Rerun;

/* A step failed on `in` (its input: the last row is the failing record, the
 * last of the prefix run) with err: the scan column (of the decoded batch
 * `all`, whose last row is that record) its failing value was read from,
 * or -1.  The expression names the column it reads (TlError.col); the
 * scan's column of that name is it when the step's input holds the very
 * value the record holds there, so a value a step made under the name
 * of an input column is never placed in the input. */
static int read_from(const Scan *s, const TlBatch *all, const TlBatch *in,
                     const TlError *err)
{
    int c, k;
    if (err->code != TL_ERR_DATA || !err->col || !in || in->n_rows < 1) return -1;
    c = tl_schema_find(in->schema, err->col);
    k = tl_schema_find(s->scan_schema, err->col);
    if (c < 0 || k < 0 || c >= in->n_cols || k >= all->n_cols) return -1;
    return tl_same_value(in->cols[c], in->n_rows - 1, all->cols[k], all->n_rows - 1) ? k : -1;
}

/* The steps of r over p (consumed). */
static TlStatus rerun(void *arg, TlBatch *p, TlError *err)
{
    Rerun *r = arg;
    const Scan *s = r->s;
    TlStatus st = TL_OK;
    void *res = NULL;
    TlBatch *all = tl_batch_ref(p), *in = NULL;
    for (int i = 0; st == TL_OK && p && i < r->n_maps; i++) {
        tl_batch_free(in);
        in = tl_batch_ref(p);
        st = s->maps[i].fn(s->maps[i].ctx, p, &p, err);
    }
    if (st == TL_OK && p && p->n_rows > 0 && r->stage) {
        tl_batch_free(in);
        in = tl_batch_ref(p);
        st = s->stage.work(s->stage.ctx, p, &res, err);
        p = NULL;
        if (res) s->stage.drop(s->stage.ctx, res);
    }
    if (st == TL_ERR_DATA && all) r->col = read_from(s, all, in, err);
    tl_batch_free(all);
    tl_batch_free(in);
    tl_batch_free(p);
    return st;
}

/* Morsel m decoded again for place_error as run_late decodes it: the
 * columns the late form (the first map's, or the stage's) reads (the others
 * all null; it does not read them), so a type the dropped rows would have
 * widened plays no part. */
static TlStatus decode_part(const Scan *s, ScanIn *in, TlDecoder *d,
                            const TlMorsel *m, TlBatch **out, TlSchema **widen,
                            TlError *err)
{
    TlBatch *eb = NULL, *part = NULL;
    TlStatus st = tl_reader_decode_early(in->reader, d, m, in->early, in->n_early,
                                         s->map_few, &eb, widen, err);
    if (st == TL_OK && eb && !(part = tl_batch_new(s->scan_schema, s->n_cols, eb->n_rows)))
        st = tl_error_oom(err);
    for (int k = 0; st == TL_OK && part && k < s->n_cols; k++) {
        TlType want = s->scan_schema->fields[k].type;
        int p = in->pos[k];
        if (s->need[k] && p >= 0 && p < eb->n_cols && eb->cols[p])
            st = fix_column(s, eb->cols[p], want, k, &part->cols[k], err);
        else if (!(part->cols[k] = tl_array_new_null(want, eb->n_rows)))
            st = tl_error_oom(err);
    }
    if (eb) tl_reader_decode_end(in->reader, d);
    tl_batch_free(eb);
    if (st != TL_OK) {
        tl_batch_free(part);
        part = NULL;
    }
    *out = part;
    return st;
}

/* A map (filter, with, select fused into the scan) or, when `stage`, the
 * stage (an aggregate's, a sort's, a join's probe) failed on morsel sl->m
 * with a data error: name the file and line of the record that fails.
 * Error path only, so the happy path pays nothing: the morsel is decoded
 * again with a decoder of its own and tl_first_failing_row (place.c) finds
 * the first record with which the maps fail; its error, the one reported,
 * is the same for any morsel layout and thread count (the consumer takes
 * the first failing morsel in input order).  On any trouble (a stream,
 * whose bytes may be gone; a format without lines; out of memory) the
 * message stays as it was. */
static void place_error(Scan *s, ScanIn *in, Slot *sl, bool late, bool stage,
                        TlError *err)
{
    Rerun all = {s, s->n_maps, stage, -1}, part = {s, stage ? 0 : 1, stage, -1};
    TlDecoder *d = NULL;
    TlBatch *b = NULL;
    TlSchema *widen = NULL;
    TlError e = {0}, first = {0};
    int64_t row, line = 0, col = 0;
    int k;
    char name[sizeof(TlQuoted)];
    bool late_part = false;
    TlStatus st;
    if (!tl_reader_can_redecode(in->reader) || sl->m.line < 1) return;
    if (tl_decoder_new(in->reader, &d, &e) != TL_OK) goto done;
    /* the whole morsel and every map, as without late materialization; a
     * late morsel whose dropped rows would widen a type (a restart the
     * late path never needed): its part and the late form's step (the
     * first map, or the stage when there is no map), which failed */
    st = tl_reader_decode(in->reader, d, &sl->m, &b, &widen, &e);
    if (st == TL_OK && b) st = fix_batch(s, in, b, &b, &e);
    if (st == TL_ERR_RESTART && late) {
        if (widen) tl_schema_free(widen);
        tl_free(widen);
        widen = NULL;
        late_part = true;
        st = decode_part(s, in, d, &sl->m, &b, &widen, &e);
    }
    if (st != TL_OK || !b) goto done;
    row = tl_first_failing_row(rerun, late_part ? &part : &all, b, &first);
    if (row < 0) goto done;
    tl_decoder_row_line(in->reader, d, row, &line, name, sizeof name);
    k = late_part ? part.col : all.col;
    if (line > 0 && k >= 0) col = tl_decoder_row_col(in->reader, d, row, in->pos[k], &line);
    if (line > 0) {
        char where[sizeof name + 48];
        if (col > 0)
            snprintf(where, sizeof where, "%s:%lld:%lld", name, (long long)line, (long long)col);
        else
            snprintf(where, sizeof where, "%s:%lld", name, (long long)line);
        tl_place_error(err, where, col > 0 ? s->scan_schema->fields[k].name : NULL, &first);
    }
done:
    if (widen) {
        tl_schema_free(widen);
        tl_free(widen);
    }
    tl_batch_free(b);
    tl_decoder_free(d);
}

/* The work of one morsel: decode (or take the read batch), fix, maps,
 * stage.  Touches only the slot and read-only scan state. */
static void run_slot(Slot *sl)
{
    Scan *s = sl->scan;
    ScanIn *in = &s->in[sl->input];
    TlBatch *b = sl->batch;
    TlError *err = sl->err;
    TlStatus st = TL_OK;
    int first_map = 0;
    bool staged = false;
    sl->batch = NULL;
    if (in->split) {
        TlDecoder *d = NULL;
        st = get_decoder(s, in, &d, err);
        if (st == TL_OK && in->late) {
            st = run_late(s, in, sl, d, &b, &staged, err);
            first_map = 1;
            put_decoder(s, in, d);
            /* the late form (the first map's, or the stage's) failed, or
             * the decode did (then decoding again fails too and the
             * message stays) */
            if (st == TL_ERR_DATA) place_error(s, in, sl, true, staged, err);
        } else if (st == TL_OK) {
            st = tl_reader_decode(in->reader, d, &sl->m, &b, &sl->widen, err);
            if (st == TL_OK && b) sl->rows = b->n_rows;
            put_decoder(s, in, d);
        }
    } else if (b) {
        sl->rows = b->n_rows;
    }
    if (st == TL_OK && b && b->n_rows == 0) {
        tl_batch_free(b);
        b = NULL;
    }
    if (st == TL_OK && b && !first_map) st = fix_batch(s, in, b, &b, err);
    for (int i = first_map; st == TL_OK && b && i < s->n_maps; i++)
        if ((st = s->maps[i].fn(s->maps[i].ctx, b, &b, err)) == TL_ERR_DATA && in->split)
            place_error(s, in, sl, false, false, err);
    sl->out_rows = staged ? sl->rows : b ? b->n_rows : 0;
    if (st == TL_OK && b && b->n_rows == 0) {
        tl_batch_free(b);
        b = NULL;
    }
    if (st == TL_OK && b && s->has_stage && !staged) {
        st = s->stage.work(s->stage.ctx, b, &sl->result, err);
        b = NULL;
        if (st == TL_ERR_DATA && in->split) place_error(s, in, sl, false, true, err);
    }
    if (st != TL_OK) {
        tl_batch_free(b);
        b = NULL;
    }
    sl->batch = b;
    sl->st = st;
}

static void slot_task(void *arg)
{
    Slot *sl = arg;
    Scan *s = sl->scan;
    bool skip;
    tl_wait_lock(s->wait);
    skip = s->cancel || sl->state != SLOT_PENDING;
    if (!skip) sl->state = SLOT_RUNNING;
    tl_wait_unlock(s->wait);
    if (!skip) run_slot(sl);
    tl_wait_lock(s->wait);
    if (!skip) sl->state = SLOT_DONE;
    s->running--;
    tl_wait_signal(s->wait);
    tl_wait_unlock(s->wait);
}

/* Release what a slot holds and mark it free. */
static void clear_slot(Scan *s, Slot *sl)
{
    tl_batch_free(sl->batch);
    if (sl->result && s->has_stage && s->stage.drop)
        s->stage.drop(s->stage.ctx, sl->result);
    if (sl->widen) {
        tl_schema_free(sl->widen);
        tl_free(sl->widen);
    }
    sl->batch = NULL;
    sl->result = NULL;
    sl->widen = NULL;
    sl->rows = 0;
    sl->late_rows = sl->late_kept = 0;
    sl->out_rows = 0;
    sl->st = TL_OK;
    sl->state = SLOT_FREE;
}

/* Cut the next morsel into its slot (consumer thread).  *got false at the
 * end of every input.  A read error of a non-split input is stored in the
 * slot (it surfaces in order); only allocation failures return here. */
static TlStatus cut(Scan *s, bool *got, bool *pending, TlError *err)
{
    *got = false;
    *pending = false;
    while (!s->cut_done) {
        ScanIn *in;
        Slot *sl = &s->slots[s->next_seq % s->n_slots];
        bool more = false;
        if (s->cut_in >= s->n_in) {
            s->cut_done = true;
            break;
        }
        in = &s->in[s->cut_in];
        sl->input = s->cut_in;
        if (!in->ready) {
            TlStatus st = ready_input(s, in, sl->err);
            if (st != TL_OK) {
                sl->m.line = 0; /* not a guessed morsel */
                sl->st = st;
                s->cut_done = true;
                goto publish;
            }
        }
        if (in->split) {
            TlStatus st = tl_reader_split(in->reader, &sl->m, &more, err);
            if (st != TL_OK) {
                sl->m.line = 0; /* no morsel, so not a guessed one to split again */
                sl->st = st;
                *sl->err = *err;
                more = true;
                s->cut_done = true; /* nothing after an error */
            }
        } else {
            TlStatus st = tl_reader_next(in->reader, &sl->batch, sl->err);
            if (st != TL_OK) {
                sl->st = st;
                more = true;
                s->cut_done = true;
            } else {
                more = sl->batch != NULL;
            }
        }
        if (!more) {
            /* no morsel at all: nothing of it is in flight */
            if (!in->any_cut) release_input(s, in);
            s->cut_in++;
            continue;
        }
        in->any_cut = true;
    publish:
        /* once PENDING, an old queued task of this slot may run it: decide
         * before publishing, and publish under the lock */
        *pending = sl->st == TL_OK;
        if (s->threads) tl_wait_lock(s->wait);
        sl->state = *pending ? SLOT_PENDING : SLOT_DONE;
        if (s->threads) tl_wait_unlock(s->wait);
        s->next_seq++;
        *got = true;
        return TL_OK;
    }
    return TL_OK;
}

/* Keep up to the allowed number of morsels in flight beyond head. */
static TlStatus fill(Scan *s, TlError *err)
{
    int64_t allow = 1 + 2 * s->taken;
    if (allow > s->window) allow = s->window;
    while (s->next_seq - s->head < allow && !s->cut_done) {
        bool got, pending;
        Slot *sl;
        TL_TRY(cut(s, &got, &pending, err));
        if (!got) break;
        sl = &s->slots[(s->next_seq - 1) % s->n_slots];
        if (!pending || !s->threads || s->next_seq - 1 == s->head)
            continue; /* run by the consumer when it needs it */
        if (s->in[sl->input].split &&
            tl_reader_lead(s->in[sl->input].reader, sl->m.end) <
                STREAM_LEAD_MORSELS * (sl->m.end - sl->m.begin))
            continue; /* a stream's decompressor has only just got here: see the top */
        tl_wait_lock(s->wait);
        s->running++;
        tl_wait_unlock(s->wait);
        if (tl_pool_submit(slot_task, sl, err) != TL_OK) {
            tl_wait_lock(s->wait);
            s->running--;
            tl_wait_unlock(s->wait);
            return TL_ERR_OOM;
        }
    }
    return TL_OK;
}

/* Wait until the head morsel is done (running it here when nobody has
 * started it).  false: no morsel is left. */
static TlStatus wait_head(Scan *s, Slot **out, TlError *err)
{
    Slot *sl;
    *out = NULL;
    TL_TRY(fill(s, err));
    if (s->head >= s->next_seq) return TL_OK;
    sl = &s->slots[s->head % s->n_slots];
    if (!s->threads) {
        if (sl->state == SLOT_PENDING) {
            run_slot(sl);
            sl->state = SLOT_DONE;
        }
    } else {
        bool mine = false;
        tl_wait_lock(s->wait);
        if (sl->state == SLOT_PENDING) {
            sl->state = SLOT_RUNNING; /* a queued task for it will skip */
            mine = true;
        }
        tl_wait_unlock(s->wait);
        if (mine) {
            run_slot(sl);
            tl_wait_lock(s->wait);
            sl->state = SLOT_DONE;
            tl_wait_unlock(s->wait);
        } else {
            tl_wait_lock(s->wait);
            while (sl->state != SLOT_DONE) tl_wait_step(s->wait);
            tl_wait_unlock(s->wait);
        }
    }
    *out = sl;
    return TL_OK;
}

/* Before the first morsel: decide which inputs decode in two steps (late
 * materialization, exec.h): those whose reader can, when the first map
 * (or, with no map, the stage) has a late form and some projected column
 * is not among the ones it reads first.  Per scan, so deterministic. */
static TlStatus prepare_late(Scan *s, TlError *err)
{
    if (TL_TUNING(s->base.ctx)->no_late) return TL_OK;
    if (s->n_maps == 0 && s->has_stage && s->late_work && s->stage_need) {
        s->late_stage = true;
        s->need = s->stage_need;
        s->stage_need = NULL;
    } else if (!(s->n_maps > 0 && s->late_map && s->need)) {
        return TL_OK;
    }
    s->late_on = true;
    return TL_OK;
}

/* Input in's late form (see prepare_late), once its reader is open.  Out
 * of memory it simply decodes whole. */
static void input_late(Scan *s, ScanIn *in)
{
    int width = 0;
    bool waits = false;
    if (!in->split || !tl_reader_can_late(in->reader)) return;
    for (int k = 0; k < s->n_cols; k++)
        if (in->pos[k] >= width) width = in->pos[k] + 1;
    in->early = tl_calloc((size_t)(width ? width : 1), sizeof *in->early);
    if (!in->early) return;
    in->n_early = width;
    for (int k = 0; k < s->n_cols; k++)
        if (in->pos[k] >= 0 && s->need[k]) in->early[in->pos[k]] = true;
    for (int p = 0; p < width; p++) waits |= !in->early[p];
    in->late = waits;
}

/* The head morsel was guessed and failed (see the top): drop it and every
 * later morsel, and split again from it. */
static TlStatus resplit(Scan *s, Slot *head, TlError *err)
{
    TlMorsel m = head->m;
    int input = head->input;
    for (int64_t q = s->next_seq - 1; q >= s->head; q--) {
        Slot *sl = &s->slots[q % s->n_slots];
        if (s->threads) {
            tl_wait_lock(s->wait);
            if (sl->state == SLOT_PENDING) sl->state = SLOT_FREE; /* its task skips */
            while (sl->state == SLOT_RUNNING) tl_wait_step(s->wait);
            clear_slot(s, sl);
            tl_wait_unlock(s->wait);
        } else {
            clear_slot(s, sl);
        }
    }
    s->next_seq = s->head;
    s->cut_in = input;
    s->cut_done = false;
    return tl_reader_resplit(s->in[input].reader, &m, err);
}

/* The end: every morsel was handed out, so no task holds a decoder; the
 * inputs not finished yet are (their idle decoders, a morsel's scratch
 * each, go now, as an operator that outlives its input, a join's side
 * kept to name rows in messages, need not keep them). */
static void finish_all(Scan *s)
{
    for (; s->fin_in < s->n_in; s->fin_in++)
        if (s->in[s->fin_in].ready) finish_input(s, &s->in[s->fin_in]);
}

/* Record head morsel sl, whose rows are handed out now (scan_origin). */
static void remember(Scan *s, const Slot *sl)
{
    if (s->n_past == s->cap_past && !s->past_lost) {
        int64_t nc = s->cap_past ? 2 * s->cap_past : 16;
        Past *p = tl_realloc(s->past, (size_t)nc * sizeof *p);
        if (p) {
            s->past = p;
            s->cap_past = nc;
        } else {
            s->past_lost = true;
        }
    }
    if (!s->past_lost)
        s->past[s->n_past++] = (Past){sl->input, sl->m, s->out_total, s->recs};
    s->out_total += sl->out_rows;
}

/* Hand out the head morsel: its status, counters, and its batch or result.
 * *out_b / *out_r NULL with *more true: the morsel left nothing (ask again);
 * *more false: the end. */
static TlStatus take(Scan *s, TlBatch **out_b, void **out_r, bool *more,
                     TlError *err)
{
    Slot *sl;
    ScanIn *in;
    TlStatus st;
    *out_b = NULL;
    *out_r = NULL;
    *more = false;
    if (!s->started) TL_TRY(prepare_late(s, err));
    s->started = true;
    TL_TRY(wait_head(s, &sl, err));
    if (!sl) {
        finish_all(s);
        return TL_OK;
    }
    *more = true;
    /* the inputs before this morsel's are read (morsels come in order) */
    for (; s->fin_in < sl->input; s->fin_in++) finish_input(s, &s->in[s->fin_in]);
    in = &s->in[sl->input];
    st = sl->st;
    if (st != TL_OK && in->split && sl->m.line < 0) return resplit(s, sl, err);
    if (st == TL_ERR_RESTART && sl->widen) {
        TlError werr;
        if (tl_reader_widen(in->reader, sl->widen, &werr) != TL_OK) {
            *err = werr;
            st = werr.code;
        } else {
            *err = *sl->err;
        }
    } else if (st != TL_OK) {
        *err = *sl->err;
    }
    if (st != TL_OK) {
        /* stop here: later morsels are dropped at free */
        s->cut_done = true;
        return st;
    }
    if (in->split) tl_reader_count(in->reader, sl->rows, (int64_t)(sl->m.end - sl->m.begin));
    if (s->head == 0 && sl->late_rows > 0 && !s->late_stage) {
        /* The first morsel ran alone (the window opens after it): when its
         * filter kept few rows, the next morsels store only the
         * predicate's fields and find the kept rows' fields again (the
         * reader re-reads a morsel whole that keeps many).  A guess for
         * speed only: the output is the same either way.  Set here, on the
         * consumer, before any other morsel is submitted or run. */
        s->map_few = sl->late_kept * 16 <= sl->late_rows ? sl->late_kept : -1;
    }
    if (s->base.stats && sl->rows > 0) {
        s->base.stats->rows_read += sl->rows;
        s->base.stats->batches_read++;
    }
    update_stats(s, sl->input);
    if (sl->input != s->recs_in) {
        s->recs_in = sl->input;
        s->recs = 0;
    }
    if (sl->out_rows > 0) remember(s, sl);
    s->recs += sl->rows;
    *out_b = sl->batch;
    *out_r = sl->result;
    sl->batch = NULL;
    sl->result = NULL;
    if (s->threads) tl_wait_lock(s->wait);
    clear_slot(s, sl);
    if (s->threads) tl_wait_unlock(s->wait);
    s->head++;
    s->taken++;
    return TL_OK;
}

static TlStatus scan_next(TlOperator *op, TlBatch **out, TlError *err)
{
    Scan *s = (Scan *)op;
    bool more = true;
    void *r;
    *out = NULL;
    if (s->has_stage)
        return tl_error(err, TL_ERR_DATA, "internal error: scan with a stage pulled as batches");
    while (more && !*out) TL_TRY(take(s, out, &r, &more, err));
    return TL_OK;
}

static TlStatus scan_next_result(TlOperator *op, void **result, TlError *err)
{
    Scan *s = (Scan *)op;
    bool more = true;
    TlBatch *b;
    *result = NULL;
    while (more && !*result) TL_TRY(take(s, &b, result, &more, err));
    return TL_OK;
}

/* Every map over p (consumed): how many rows they keep (tl_nth_kept_row). */
static TlStatus keep_maps(void *arg, TlBatch *p, int64_t *kept, TlError *err)
{
    const Scan *s = arg;
    TlStatus st = TL_OK;
    for (int i = 0; st == TL_OK && p && i < s->n_maps; i++)
        st = s->maps[i].fn(s->maps[i].ctx, p, &p, err);
    *kept = st == TL_OK && p ? p->n_rows : 0;
    tl_batch_free(p);
    return st;
}

/* See exec.h (TlOperator.origin): the morsel that handed out the row is
 * decoded again, as place_error does, and the maps run on prefixes of it
 * find the record that became the row; its line comes from the decoder or,
 * in a morsel whose end was guessed (its first line unknown), from
 * tl_reader_locate.  Consumer thread, error paths only; "" for a stream or
 * a format without lines. */
static void scan_origin(TlOperator *op, int64_t row, TlPlaceVal *v, char *buf, size_t cap)
{
    Scan *s = (Scan *)op;
    int64_t lo = 0, hi = s->n_past, rec, line = 0, col = 0;
    int k;
    TlDecoder *d = NULL;
    TlBatch *b = NULL;
    TlSchema *widen = NULL;
    TlError e = {0};
    char name[sizeof(TlQuoted)];
    const Past *p;
    const char *lname = NULL;
    int64_t n_recs = 0;
    ScanIn *in = NULL;
    TlReader *r = NULL;
    buf[0] = '\0';
    if (s->past_lost || row < 0 || row >= s->out_total || hi == 0) return;
    while (hi - lo > 1) { /* the last morsel that starts at or before row */
        int64_t mid = lo + (hi - lo) / 2;
        if (s->past[mid].before <= row) lo = mid;
        else hi = mid;
    }
    p = &s->past[lo];
    in = &s->in[p->input];
    /* its reader, opened again when the scan has closed it */
    if (!in->split || (!(r = in->reader) && open_reader(s, in, &r, &e) != TL_OK) ||
        !tl_reader_can_redecode(r))
        goto done;
    if (tl_decoder_new(r, &d, &e) != TL_OK) goto done;
    if (tl_reader_decode(r, d, &p->m, &b, &widen, &e) != TL_OK || !b ||
        fix_batch(s, in, b, &b, &e) != TL_OK)
        goto done;
    rec = tl_nth_kept_row(keep_maps, s, b, row - p->before);
    if (rec >= 0 && p->m.line >= 1)
        tl_decoder_row_line(r, d, rec, &line, name, sizeof name);
    else if (rec >= 0 &&
             tl_reader_locate(r, p->rec + rec, &line, &n_recs, &lname, &e) == TL_OK &&
             line > 0)
        snprintf(name, sizeof name, "%s", tl_escape_name(lname).s);
    /* the value's column, when the record holds the very value there */
    k = v && line > 0 ? tl_schema_find(s->scan_schema, v->col) : -1;
    if (k >= 0 && k < b->n_cols && tl_same_value(v->a, v->row, b->cols[k], rec))
        col = tl_decoder_row_col(r, d, rec, in->pos[k], &line);
    if (col > 0) {
        snprintf(buf, cap, "%s:%lld:%lld", name, (long long)line, (long long)col);
        v->placed = true;
    } else if (line > 0) {
        snprintf(buf, cap, "%s:%lld", name, (long long)line);
    }
done:
    if (widen) {
        tl_schema_free(widen);
        tl_free(widen);
    }
    tl_batch_free(b);
    tl_decoder_free(d);
    if (r && r != in->reader) tl_reader_close(r);
}

static TlStatus scan_add_map(TlOperator *op, TlMapFn fn, void *ctx,
                             void (*ctx_free)(void *ctx), const TlSchema *schema,
                             TlError *err)
{
    Scan *s = (Scan *)op;
    Map *m = s->started || s->has_stage
                 ? NULL
                 : tl_realloc(s->maps, (size_t)(s->n_maps + 1) * sizeof *m);
    if (!m) {
        if (ctx_free) ctx_free(ctx);
        if (s->started || s->has_stage)
            return tl_error(err, TL_ERR_DATA, "internal error: map added to a running scan");
        return tl_error_oom(err);
    }
    s->maps = m;
    m[s->n_maps].fn = fn;
    m[s->n_maps].ctx = ctx;
    m[s->n_maps].ctx_free = ctx_free;
    s->n_maps++;
    op->schema = schema;
    return TL_OK;
}

static TlStatus scan_set_late_map(TlOperator *op, TlLateMapFn fn, const bool *need,
                                  TlError *err)
{
    Scan *s = (Scan *)op;
    if (s->started || s->has_stage || s->n_maps != 1 || s->need) return TL_OK;
    s->need = tl_malloc((size_t)(s->n_cols ? s->n_cols : 1) * sizeof *s->need);
    if (!s->need) return tl_error_oom(err);
    memcpy(s->need, need, (size_t)s->n_cols * sizeof *s->need);
    s->late_map = fn;
    return TL_OK;
}

static TlStatus scan_set_late_stage(TlOperator *op, TlLateWorkFn fn,
                                    const bool *need, int64_t few, TlError *err)
{
    Scan *s = (Scan *)op;
    s->late_few = few;
    if (s->started || !s->has_stage || s->stage_need) return TL_OK;
    s->stage_need = tl_malloc((size_t)(s->n_cols ? s->n_cols : 1) * sizeof *s->need);
    if (!s->stage_need) return tl_error_oom(err);
    memcpy(s->stage_need, need, (size_t)s->n_cols * sizeof *s->need);
    s->late_work = fn;
    return TL_OK;
}

static TlStatus scan_set_stage(TlOperator *op, const TlStage *stage, TlError *err)
{
    Scan *s = (Scan *)op;
    if (s->started || s->has_stage)
        return tl_error(err, TL_ERR_DATA, "internal error: stage set on a running scan");
    s->stage = *stage;
    s->has_stage = true;
    return TL_OK;
}

static void scan_free(TlOperator *op)
{
    Scan *s = (Scan *)op;
    if (!s) return;
    if (s->wait) {
        tl_wait_lock(s->wait);
        s->cancel = true;
        while (s->running > 0) tl_wait_step(s->wait);
        tl_wait_unlock(s->wait);
    }
    for (int i = 0; s->slots && i < s->n_slots; i++) clear_slot(s, &s->slots[i]);
    tl_free(s->slots);
    for (int i = 0; i < s->n_maps; i++)
        if (s->maps[i].ctx_free) s->maps[i].ctx_free(s->maps[i].ctx);
    tl_free(s->maps);
    for (int i = 0; s->in && i < s->n_in; i++) {
        ScanIn *in = &s->in[i];
        /* what the inputs left unfinished (a limit) converted counts too */
        if (in->ready && !in->finished && in->reader) add_converted(s, in);
        for (int d = 0; d < in->n_decoders; d++) tl_decoder_free(in->decoders[d]);
        tl_free(in->decoders);
        tl_free(in->early);
        if (in->owned) tl_reader_close(in->reader);
    }
    tl_free(s->errs);
    tl_free(s->past);
    tl_free(s->in);
    tl_free(s->need);
    tl_free(s->stage_need);
    tl_wait_free(s->wait);
    tl_free(s);
}

/* See ops.h.  The readers given stay the plan's. */
TlStatus tl_op_scan_new(const TlSchema *schema, const TlScanInput *inputs,
                        int n_inputs, TlExecStats *stats, int64_t *converted,
                        int n_conv, TlOperator **out, TlError *err)
{
    Scan *s = tl_calloc(1, sizeof *s);
    int nc = schema->n_fields, threads = tl_pool_threads();
    *out = NULL;
    if (!s) return tl_error_oom(err);
    s->base.next = scan_next;
    s->base.free = scan_free;
    s->base.add_map = scan_add_map;
    s->base.set_stage = scan_set_stage;
    s->base.next_result = scan_next_result;
    s->base.origin = scan_origin;
    s->base.set_late_map = scan_set_late_map;
    s->base.set_late_stage = scan_set_late_stage;
    s->base.schema = schema;
    s->base.stats = stats;
    s->base.ctx = n_inputs > 0 ? tl_reader_ctx(inputs[0].reader) : NULL;
    s->scan_schema = schema;
    s->n_cols = nc;
    s->map_few = -1;
    s->converted = converted;
    s->n_conv = n_conv;
    s->threads = threads > 1;
    s->window = 2 * threads + 2;
    s->n_slots = s->window + 1;
    s->slots = tl_calloc((size_t)s->n_slots, sizeof *s->slots);
    s->errs = tl_malloc((size_t)s->n_slots * sizeof *s->errs);
    if (!s->slots || !s->errs) goto oom;
    for (int i = 0; i < s->n_slots; i++) {
        s->slots[i].scan = s;
        s->slots[i].err = &s->errs[i];
    }
    if (s->threads && !(s->wait = tl_wait_new())) goto oom;
    s->in = tl_calloc((size_t)(n_inputs ? n_inputs : 1), sizeof *s->in);
    if (!s->in) goto oom;
    s->n_in = n_inputs;
    for (int i = 0; i < n_inputs; i++) {
        ScanIn *in = &s->in[i];
        const TlScanInput *g = &inputs[i];
        in->reader = g->reader;
        in->split = in->reader && tl_reader_can_split(in->reader);
        in->path = g->path;
        in->read = g->read;
        in->hints = g->hints;
        in->cols = g->cols;
        in->proj = g->proj;
        in->n_proj = g->n_proj;
        in->map = g->map;
        in->pos = g->pos;
        in->identity = true;
        for (int k = 0; k < nc; k++)
            if (in->pos[k] != k) in->identity = false;
    }
    if (n_inputs == 1 && s->in[0].split && !TL_TUNING(s->base.ctx)->no_guess)
        tl_reader_guess(s->in[0].reader);
    *out = &s->base;
    return TL_OK;
oom:
    scan_free(&s->base);
    return tl_error_oom(err);
}
