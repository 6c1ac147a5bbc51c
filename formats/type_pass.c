/*
 * type_pass.c -- every column's final type before any row is converted
 * (format.h, tl_reader_type_pass).
 *
 * A text reader infers types from its first batch and widens them by
 * restarting the run when a later value does not fit (format.h).  That is
 * right for a run whose output waits for its end, and wrong for one that
 * streams its rows: a restart after rows went out would write them twice.
 * So a streaming run (lib/run) settles the types first, with this pass:
 *
 *   split    the reader's morsels, serially, a window of 4 per thread;
 *            their ends guessed (tl_reader_guess) where the reader can, a
 *            failed guess (or one whose lines a note needs) split again
 *   types    each morsel on the pool (one decoder per lane, lanes taking
 *            morsels in turn): the format's morsel_types op tokenizes it
 *            as a decode would and runs the inference over every field,
 *            from no value, converting none
 *   fold     in morsel order, each column's types joined: the same type
 *            stays, null gives way to anything, int64 and float64 make
 *            float64, date and timestamp make timestamp, anything else
 *            mixed makes a string (infer.h), and a float64 column with an
 *            integer that is no exact float64 is a string
 *
 * The join is what restarts reach: a restart widens a column by the same
 * inference over the misfit morsel, from the type so far, and types only
 * widen, so the types a run ends with are the narrowest that hold every
 * value, which the join of every morsel's narrowest is.  The first error
 * in morsel order is the one reported, as in a read; the value that made
 * a column a string is noted in the hints from the first morsel, in
 * order, that made it one (the planner's "is string because" message).
 *
 * Memory: a window of morsels' results (a few values per column), the
 * lanes' decoders; no value is materialized.
 */
#include "fmt_impl.h"
#include "infer.h"
#include "../lib/core/pool.h"

#include <string.h>

#define WINDOW_PER_LANE 4
#define WINDOW_BYTES ((size_t)16 << 20) /* results of a window, at most */

typedef struct Pass {
    TlReader *r;
    int n_cols;
    TlMorsel *m;              /* the window's morsels */
    int nm;
    TlColTypes *res;          /* nm * n_cols */
    int64_t *rows;            /* per morsel */
    TlStatus *st;             /* per morsel */
    TlError *errs;            /* per morsel */
    TlDecoder **dec;          /* per lane */
    const char *file;         /* the input's name in messages */
    int64_t next;             /* atomic: the next morsel a lane takes */
} Pass;

static void lane_main(void *arg, int64_t lane)
{
    Pass *p = arg;
    for (;;) {
        int64_t k = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
        if (k >= p->nm) break;
        const char *file = NULL;
        p->st[k] = p->r->ops->morsel_types(p->r, p->dec[lane], &p->m[k],
                                           p->res + k * p->n_cols, &p->rows[k], &file,
                                           &p->errs[k]);
        if (k == 0) p->file = file;
    }
}

/* The join of two inferred types (see the top). */
static TlType join(TlType a, TlType b)
{
    if (a == b || b == TL_TNULL) return a;
    if (a == TL_TNULL) return b;
    if ((a == TL_TINT64 && b == TL_TFLOAT64) || (a == TL_TFLOAT64 && b == TL_TINT64))
        return TL_TFLOAT64;
    if ((a == TL_TDATE && b == TL_TTIMESTAMP) || (a == TL_TTIMESTAMP && b == TL_TDATE))
        return TL_TTIMESTAMP;
    return TL_TSTRING;
}

/* A column's fold: its type so far, and the notes that may explain it. */
typedef struct Fold {
    TlType type;
    bool not_float;           /* an integer so far is no exact float64 */
    TlColNote *why;           /* the value that made it a string */
    TlColNote *int_why;       /* the first such integer */
} Fold;

static void take_note(TlColNote **to, TlColTypes *from)
{
    if (*to || !from->note) return;
    *to = from->note;
    from->note = NULL;
}

/* Whether folding a morsel's results res would take a note from it (its
 * lines are needed then). */
static bool wants_note(const Pass *p, const Fold *fold, const TlColTypes *res)
{
    for (int c = 0; c < p->n_cols; c++) {
        const Fold *f = &fold[c];
        if (res[c].fixed || !res[c].note) continue;
        if (res[c].not_float ? !f->int_why
                             : !f->why && f->type != TL_TSTRING &&
                                   join(f->type, (TlType)res[c].type) == TL_TSTRING)
            return true;
    }
    return false;
}

static void free_results(Pass *p)
{
    for (int64_t k = 0; k < (int64_t)p->nm * p->n_cols; k++) {
        tl_free(p->res[k].note);
        p->res[k].note = NULL;
    }
}

/* See format.h. */
bool tl_reader_can_type_pass(const TlReader *r)
{
    return r->ops->morsel_types && r->ops->split &&
           (!r->input || !tl_input_is_stream(r->input));
}

/* See format.h. */
TlStatus tl_reader_type_pass(TlReader *r, TlTypeHints *hints, int64_t *rows,
                             int64_t *bytes, int64_t *morsels, TlError *err)
{
    const TlSchema *s = tl_reader_schema(r);
    int lanes = tl_pool_threads(), cap;
    Pass p;
    Fold *fold = NULL;
    TlStatus st = TL_OK;
    bool end = false;

    *rows = *bytes = *morsels = 0;
    if (!tl_reader_can_type_pass(r))
        return tl_error(err, TL_ERR_DATA, "internal error: a type pass over a "
                        "reader that has none");
    memset(&p, 0, sizeof p);
    p.r = r;
    p.n_cols = s->n_fields;
    /* a window's results stay small also for a million columns */
    cap = lanes * WINDOW_PER_LANE;
    if ((size_t)cap * (size_t)(p.n_cols ? p.n_cols : 1) * sizeof *p.res > WINDOW_BYTES) {
        size_t fit = WINDOW_BYTES / ((size_t)(p.n_cols ? p.n_cols : 1) * sizeof *p.res);
        cap = fit < 1 ? 1 : (int)fit;
    }
    if (lanes > cap) lanes = cap;
    p.m = tl_calloc((size_t)cap, sizeof *p.m);
    p.res = tl_calloc((size_t)cap * (size_t)(p.n_cols ? p.n_cols : 1), sizeof *p.res);
    p.rows = tl_calloc((size_t)cap, sizeof *p.rows);
    p.st = tl_calloc((size_t)cap, sizeof *p.st);
    p.errs = tl_calloc((size_t)cap, sizeof *p.errs);
    p.dec = tl_calloc((size_t)lanes, sizeof *p.dec);
    fold = tl_calloc((size_t)(p.n_cols ? p.n_cols : 1), sizeof *fold);
    if (!p.m || !p.res || !p.rows || !p.st || !p.errs || !p.dec || !fold) {
        st = tl_error_oom(err);
        goto done;
    }
    /* from the types open gave: its first batch, the hints so far, --schema;
     * a string column stays one, so only the others are read (projected) */
    for (int c = 0; c < p.n_cols; c++) fold[c].type = s->fields[c].type;
    if (p.n_cols > 0) {
        int *cols = tl_malloc((size_t)p.n_cols * sizeof *cols), n = 0;
        if (!cols) {
            st = tl_error_oom(err);
            goto done;
        }
        for (int c = 0; c < p.n_cols; c++)
            if (s->fields[c].type != TL_TSTRING) cols[n++] = c;
        /* all strings: the records are still read, for their errors */
        if (n == 0) cols[n++] = 0;
        st = tl_reader_project(r, cols, n, err);
        tl_free(cols);
    }
    /* decoders made here, not in the lanes: allocations stay in one order */
    for (int i = 0; i < lanes && st == TL_OK; i++) st = tl_decoder_new(r, &p.dec[i], err);
    /* guessed morsel ends, as a scan of one input takes them (format.h):
     * the splitter then reads a few bytes a morsel, not all of them */
    if (!TL_TUNING(r->ctx)->no_guess) tl_reader_guess(r);

    while (st == TL_OK && !end) {
        p.nm = 0;
        while (p.nm < cap) {
            bool got = false;
            if ((st = tl_reader_split(r, &p.m[p.nm], &got, err)) != TL_OK) break;
            if (!got) {
                end = true;
                break;
            }
            p.nm++;
        }
        if (st != TL_OK || p.nm == 0) break;
        p.next = 0;
        st = tl_pool_for(p.nm < lanes ? p.nm : lanes, lane_main, &p, err);
        for (int k = 0; st == TL_OK && k < p.nm; k++) {
            TlColTypes *res = p.res + (int64_t)k * p.n_cols;
            if (p.m[k].line < 0 && (p.st[k] != TL_OK || wants_note(&p, fold, res))) {
                /* a guessed morsel failed (a wrong guess, or an error or a
                 * note that needs its lines): this one and the rest of the
                 * window again, split by reading every byte */
                st = tl_reader_resplit(r, &p.m[k], err);
                end = false;
                break;
            }
            if (p.st[k] != TL_OK) {
                *err = p.errs[k];
                st = p.st[k];
                break;
            }
            for (int c = 0; c < p.n_cols; c++) {
                Fold *f = &fold[c];
                TlType t;
                if (res[c].fixed) continue;
                t = join(f->type, (TlType)res[c].type);
                if (res[c].not_float) {
                    f->not_float = true;
                    take_note(&f->int_why, &res[c]);
                } else if (t == TL_TSTRING && f->type != TL_TSTRING) {
                    take_note(&f->why, &res[c]);
                }
                f->type = t;
            }
            *rows += p.rows[k];
            *bytes += (int64_t)(p.m[k].end - p.m[k].begin);
            (*morsels)++;
        }
        free_results(&p);
    }
    if (st == TL_OK && r->input) st = tl_input_check(r->input, err);
    /* only what widened goes to the hints: every other column's type is
     * the one a reader opened with these hints infers from its sample */
    for (int c = 0; st == TL_OK && hints && c < p.n_cols; c++) {
        Fold *f = &fold[c];
        const TlColNote *why = f->why;
        if (f->type == TL_TFLOAT64 && f->not_float) {
            f->type = TL_TSTRING;
            why = f->int_why;
        }
        if (f->type == s->fields[c].type) continue;
        st = tl_hint_set(hints, s->fields[c].name, f->type, err);
        if (st == TL_OK && f->type == TL_TSTRING && why)
            st = tl_hint_note(hints, s->fields[c].name, p.file, why->line, why->text,
                              why->len, why->quoted, err);
    }
done:
    if (p.res) free_results(&p);
    for (int i = 0; p.dec && i < lanes; i++) tl_decoder_free(p.dec[i]);
    for (int c = 0; fold && c < p.n_cols; c++) {
        tl_free(fold[c].why);
        tl_free(fold[c].int_why);
    }
    tl_free(fold);
    tl_free(p.m);
    tl_free(p.res);
    tl_free(p.rows);
    tl_free(p.st);
    tl_free(p.errs);
    tl_free(p.dec);
    return st;
}
