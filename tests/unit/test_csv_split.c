/* run-unit: weight=28 */
/*
 * test_csv_split.c -- morsel reading of the CSV reader (format.h,
 * "morsel-parallel reading"): tl_reader_split + tl_reader_decode against
 * tl_reader_next and against one morsel covering all the data.
 *
 * For each input (a seeded random generator of nasty CSVs: quotes with
 * delimiters, LF / CR / CRLF inside and between records, doubled and loose
 * quotes, empty fields, blank lines, one-column files, BOM, --null text, no
 * header, TSV, ragged records and bad quotes; plus every CSV/TSV under
 * $CORPORA) and several forced morsel limits
 * (tl_csv_split_force: records and bytes per morsel):
 *
 *   next == morsels   split everything, decode in forward, reverse and
 *                     shuffled order with a fresh decoder each, concatenate
 *                     in morsel order: the same rows, values, error text,
 *                     widened types, hints and counters as tl_reader_next;
 *   whole == morsels  every column fixed to string (so only tokenizing can
 *                     fail): one decode of the whole data range gives the
 *                     same rows and the same first error as the morsels --
 *                     split boundaries are real record boundaries with the
 *                     right line numbers;
 *   final             after the restart loop, inputs without errors give
 *                     the same types and values whatever the morsels.
 *
 * Plus two threads decoding different morsels of one reader at once (run
 * under make asan), a big mapped file whose decoded pages are dropped
 * (values still right afterwards, resident memory bounded), and the
 * morsel shape (small first, growing, contiguous, whole records).
 */
#include "tl_test.h"
#include "csv_test_util.h"
#include "tl_sb.h"
#include "../../formats/fmt_impl.h"
#include "split_force.h"
#include "../../formats/infer.h"

#include <dirent.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>

/* ------------------------------------------------------------- rendering */

/* Rows as text: cells split by \x1f, rows ended by \x1e\n, \x01 for
 * null, else the value's text (tl_sb.h). */
static void sb_batch(Sb *s, const TlBatch *b)
{
    for (int64_t r = 0; r < b->n_rows; r++) {
        for (int c = 0; c < b->n_cols; c++) {
            if (c) sb_put(s, "\x1f", 1);
            if (!tl_array_valid(b->cols[c], r)) sb_put(s, "\x01", 1);
            else sb_value(s, b->cols[c], r);
        }
        sb_put(s, "\x1e\n", 2);
    }
}

static void sb_schema(Sb *s, const TlSchema *sc)
{
    for (int c = 0; c < sc->n_fields; c++) {
        sb_str(s, sc->fields[c].name);
        sb_str(s, ":");
        sb_str(s, tl_type_name(sc->fields[c].type));
        sb_str(s, ",");
    }
    sb_str(s, "\n");
}

/* What one read produced. */
typedef struct Res {
    Sb text;          /* schema line, then rows */
    TlStatus st;
    char msg[sizeof(((TlError *)0)->msg)];
    Sb widen;         /* (name:type,) of a restart */
    Sb hints;         /* the hints afterwards */
    int64_t rows, batches, bytes, conv;
    int64_t morsels;
} Res;

static void res_free(Res *r)
{
    sb_free(&r->text);
    sb_free(&r->widen);
    sb_free(&r->hints);
}

static void res_finish(Res *res, TlReader *r, const TlTypeHints *h)
{
    const TlReaderStats *st = tl_reader_stats(r);
    res->rows = st->rows;
    res->batches = st->batches;
    res->bytes = st->bytes;
    res->conv = 0;
    for (int c = 0; c < tl_reader_schema(r)->n_fields; c++) res->conv += st->converted[c];
    if (h) sb_schema(&res->hints, &h->cols);
}

static int failures_shown;

/* Compare two results; name says what is compared. */
static void res_check(const char *what, const char *input, const Res *a,
                      const Res *b, bool counters)
{
    bool same = a->st == b->st && strcmp(sb_text(&a->text), sb_text(&b->text)) == 0 &&
                strcmp(a->msg, b->msg) == 0 &&
                strcmp(sb_text(&a->widen), sb_text(&b->widen)) == 0 &&
                strcmp(sb_text(&a->hints), sb_text(&b->hints)) == 0;
    if (same && counters)
        same = a->rows == b->rows && a->batches == b->batches &&
               a->bytes == b->bytes && a->conv == b->conv;
    CHECK(same);
    if (!same && failures_shown++ < 5) {
        fprintf(stderr, "--- %s differs for %s\n", what, input);
        fprintf(stderr, "A: st %d msg \"%s\" widen \"%s\" hints \"%s\" rows %lld "
                "batches %lld bytes %lld conv %lld\n%s\n", (int)a->st, a->msg,
                sb_text(&a->widen), sb_text(&a->hints), (long long)a->rows,
                (long long)a->batches, (long long)a->bytes, (long long)a->conv,
                sb_text(&a->text));
        fprintf(stderr, "B: st %d msg \"%s\" widen \"%s\" hints \"%s\" rows %lld "
                "batches %lld bytes %lld conv %lld\n%s\n", (int)b->st, b->msg,
                sb_text(&b->widen), sb_text(&b->hints), (long long)b->rows,
                (long long)b->batches, (long long)b->bytes, (long long)b->conv,
                sb_text(&b->text));
    }
}

/* ----------------------------------------------------------------- reads */

/* Through tl_reader_next. */
static void read_next(const char *path, const TlReadOptions *o, TlTypeHints *h,
                      Res *res)
{
    TlReader *r = NULL;
    TlError err = {0};
    memset(res, 0, sizeof *res);
    res->st = tl_reader_open(path, o, h, &r, &err);
    if (res->st != TL_OK) {
        memcpy(res->msg, err.msg, sizeof res->msg);
        return;
    }
    sb_schema(&res->text, tl_reader_schema(r));
    for (;;) {
        TlBatch *b = NULL;
        res->st = tl_reader_next(r, &b, &err);
        if (res->st != TL_OK || !b) break;
        sb_batch(&res->text, b);
        tl_batch_free(b);
    }
    if (res->st != TL_OK) memcpy(res->msg, err.msg, sizeof res->msg);
    res_finish(res, r, h);
    tl_reader_close(r);
}

typedef struct Piece {
    TlMorsel m;
    TlBatch *b;
    TlSchema *widen;
    TlStatus st;
    TlError err;
} Piece;

static uint64_t rng_state;

static uint32_t rnd(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng_state >> 33);
}

/* Take the pieces in morsel order as a consumer does: batches until the
 * first failure; widen + count in order. */
static void assemble(TlReader *r, Piece *pc, int64_t n, TlTypeHints *h, Res *res)
{
    res->st = TL_OK;
    for (int64_t i = 0; i < n; i++) {
        if (pc[i].st != TL_OK) {
            res->st = pc[i].st;
            memcpy(res->msg, pc[i].err.msg, sizeof res->msg);
            if (pc[i].st == TL_ERR_RESTART) {
                TlError e2 = {0};
                CHECK(pc[i].widen != NULL);
                if (pc[i].widen) {
                    for (int f = 0; f < pc[i].widen->n_fields; f++) {
                        sb_str(&res->widen, pc[i].widen->fields[f].name);
                        sb_str(&res->widen, ":");
                        sb_str(&res->widen, tl_type_name(pc[i].widen->fields[f].type));
                        sb_str(&res->widen, ",");
                    }
                    sb_str(&res->widen, "\n");
                    CHECK_EQ_INT(tl_reader_widen(r, pc[i].widen, &e2), TL_OK);
                }
            } else {
                CHECK(pc[i].widen == NULL);
            }
            break;
        }
        CHECK(pc[i].widen == NULL);
        tl_reader_count(r, pc[i].b ? pc[i].b->n_rows : 0,
                        (int64_t)(pc[i].m.end - pc[i].m.begin));
        if (pc[i].b) sb_batch(&res->text, pc[i].b);
    }
    res_finish(res, r, h);
}

static void pieces_free(Piece *pc, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        tl_batch_free(pc[i].b);
        if (pc[i].widen) {
            tl_schema_free(pc[i].widen);
            tl_free(pc[i].widen);
        }
    }
    free(pc);
}

/* Split r completely, checking the morsels' shape. */
static Piece *split_all(TlReader *r, int64_t *n_out)
{
    int64_t n = 0, cap = 16;
    Piece *pc = calloc((size_t)cap, sizeof *pc);
    TlError err = {0};
    uint64_t prev_end = 0;
    for (;;) {
        TlMorsel m;
        bool got = false;
        CHECK_EQ_INT(tl_reader_split(r, &m, &got, &err), TL_OK);
        if (!got) break;
        CHECK_EQ_INT(m.seq, n);
        CHECK(m.end > m.begin);
        if (n > 0) CHECK_EQ_INT(m.begin, prev_end);
        prev_end = m.end;
        if (n == cap) {
            pc = realloc(pc, (size_t)cap * 2 * sizeof *pc);
            memset(pc + cap, 0, (size_t)cap * sizeof *pc);
            cap *= 2;
        }
        pc[n++].m = m;
    }
    *n_out = n;
    return pc;
}

/* Decode p with a fresh decoder, or with d when given. */
static void decode_piece(TlReader *r, Piece *p, TlDecoder *d)
{
    TlDecoder *own = NULL;
    if (!d) {
        CHECK_EQ_INT(tl_decoder_new(r, &own, &p->err), TL_OK);
        d = own;
    }
    p->st = tl_reader_decode(r, d, &p->m, &p->b, &p->widen, &p->err);
    if (p->st == TL_OK && p->b) CHECK(p->b->n_rows > 0);
    tl_decoder_free(own);
}

/* Through split + decode; order 0 forward, 1 reverse, 2 shuffled. */
static void read_morsels(const char *path, const TlReadOptions *o, TlTypeHints *h,
                         int order, Res *res)
{
    TlReader *r = NULL;
    TlError err = {0};
    Piece *pc;
    int64_t n, *perm;
    memset(res, 0, sizeof *res);
    res->st = tl_reader_open(path, o, h, &r, &err);
    if (res->st != TL_OK) {
        memcpy(res->msg, err.msg, sizeof res->msg);
        return;
    }
    CHECK(tl_reader_can_split(r));
    sb_schema(&res->text, tl_reader_schema(r));
    pc = split_all(r, &n);
    res->morsels = n;
    perm = malloc((size_t)(n + 1) * sizeof *perm);
    for (int64_t i = 0; i < n; i++) perm[i] = order == 1 ? n - 1 - i : i;
    if (order == 2)
        for (int64_t i = n - 1; i > 0; i--) {
            int64_t j = (int64_t)(rnd() % (uint32_t)(i + 1)), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
    /* a fresh decoder for each of the first morsels, then three in turn
     * (a decoder's scratch from one morsel must not leak into another) */
    {
        TlDecoder *ds[3] = {NULL, NULL, NULL};
        for (int k = 0; k < 3; k++) CHECK_EQ_INT(tl_decoder_new(r, &ds[k], &err), TL_OK);
        for (int64_t i = 0; i < n; i++)
            decode_piece(r, &pc[perm[i]], i < 8 ? NULL : ds[i % 3]);
        for (int k = 0; k < 3; k++) tl_decoder_free(ds[k]);
    }
    assemble(r, pc, n, h, res);
    free(perm);
    pieces_free(pc, n);
    tl_reader_close(r);
}

static void piece_clear(Piece *p)
{
    tl_batch_free(p->b);
    if (p->widen) {
        tl_schema_free(p->widen);
        tl_free(p->widen);
    }
    memset(p, 0, sizeof *p);
}

/* As the scan of one input (op_scan.c) reads a reader that guesses where
 * morsels end (tl_reader_guess): up to `ahead` morsels split and decoded
 * before the head is taken; a guessed head that failed drops them all and
 * the reader splits again from it (tl_reader_resplit).  *resplits counts
 * those. */
static void read_guessed(const char *path, const TlReadOptions *o, TlTypeHints *h,
                         int ahead, Res *res, int64_t *resplits)
{
    TlReader *r = NULL;
    TlError err = {0};
    Piece q[4];
    int nq = 0;
    int64_t seq = 0;
    bool done = false;
    memset(res, 0, sizeof *res);
    memset(q, 0, sizeof q);
    res->st = tl_reader_open(path, o, h, &r, &err);
    if (res->st != TL_OK) {
        memcpy(res->msg, err.msg, sizeof res->msg);
        return;
    }
    sb_schema(&res->text, tl_reader_schema(r));
    tl_reader_guess(r);
    for (;;) {
        while (!done && nq < ahead) {
            bool got = false;
            CHECK_EQ_INT(tl_reader_split(r, &q[nq].m, &got, &err), TL_OK);
            if (!got) {
                done = true;
                break;
            }
            CHECK_EQ_INT(q[nq].m.seq, seq);
            seq++;
            decode_piece(r, &q[nq], NULL);
            nq++;
        }
        if (nq == 0) break;
        if (q[0].st != TL_OK && q[0].m.line < 0) {
            TlMorsel m = q[0].m;
            for (int i = 0; i < nq; i++) piece_clear(&q[i]);
            nq = 0;
            CHECK_EQ_INT(tl_reader_resplit(r, &m, &err), TL_OK);
            seq = m.seq;
            done = false;
            (*resplits)++;
            continue;
        }
        if (q[0].st != TL_OK) {
            res->st = q[0].st;
            memcpy(res->msg, q[0].err.msg, sizeof res->msg);
            if (q[0].st == TL_ERR_RESTART && q[0].widen) {
                TlError e2 = {0};
                for (int f = 0; f < q[0].widen->n_fields; f++) {
                    sb_str(&res->widen, q[0].widen->fields[f].name);
                    sb_str(&res->widen, ":");
                    sb_str(&res->widen, tl_type_name(q[0].widen->fields[f].type));
                    sb_str(&res->widen, ",");
                }
                sb_str(&res->widen, "\n");
                CHECK_EQ_INT(tl_reader_widen(r, q[0].widen, &e2), TL_OK);
            }
            break;
        }
        tl_reader_count(r, q[0].b ? q[0].b->n_rows : 0,
                        (int64_t)(q[0].m.end - q[0].m.begin));
        if (q[0].b) sb_batch(&res->text, q[0].b);
        piece_clear(&q[0]);
        memmove(q, q + 1, (size_t)(nq - 1) * sizeof *q);
        memset(&q[nq - 1], 0, sizeof q[0]);
        nq--;
    }
    for (int i = 0; i < nq; i++) piece_clear(&q[i]);
    res_finish(res, r, h);
    tl_reader_close(r);
}

/* One decode of the whole data range (where the first morsel starts to
 * where the last ends). */
static void read_whole(const char *path, const TlReadOptions *o, TlTypeHints *h,
                       Res *res)
{
    TlReader *r = NULL;
    TlError err = {0};
    Piece p, *pc;
    int64_t n;
    memset(res, 0, sizeof *res);
    memset(&p, 0, sizeof p);
    res->st = tl_reader_open(path, o, h, &r, &err);
    if (res->st != TL_OK) {
        memcpy(res->msg, err.msg, sizeof res->msg);
        return;
    }
    sb_schema(&res->text, tl_reader_schema(r));
    pc = split_all(r, &n);
    if (n > 0) {
        p.m = pc[0].m;
        p.m.end = pc[n - 1].m.end;
        decode_piece(r, &p, NULL);
        assemble(r, &p, 1, h, res);
        tl_batch_free(p.b);
        if (p.widen) {
            tl_schema_free(p.widen);
            tl_free(p.widen);
        }
    }
    pieces_free(pc, n);
    tl_reader_close(r);
}

typedef void (*ReadFn)(const char *, const TlReadOptions *, TlTypeHints *, Res *);

/* Read with fn, restarting (with the hints) until no restart is asked. */
static void read_final(ReadFn fn, int order, const char *path,
                       const TlReadOptions *o, Res *res)
{
    TlTypeHints h = {0};
    for (int attempt = 0; attempt < 40; attempt++) {
        if (fn) fn(path, o, &h, res);
        else read_morsels(path, o, &h, order, res);
        if (res->st != TL_ERR_RESTART) break;
        res_free(res);
    }
    tl_hints_free(&h);
}

/* A schema fixing every column of path to string, or NULL if it does not open. */
static TlSchema *string_schema(const char *path, const TlReadOptions *o)
{
    TlReader *r = NULL;
    TlError err = {0};
    TlSchema *s;
    const TlSchema *rs;
    if (tl_reader_open(path, o, NULL, &r, &err) != TL_OK) return NULL;
    s = tl_calloc(1, sizeof *s);
    rs = tl_reader_schema(r);
    for (int c = 0; c < rs->n_fields; c++)
        if (tl_schema_add(s, rs->fields[c].name, TL_TSTRING, &err) != TL_OK) abort();
    tl_reader_close(r);
    return s;
}

static int64_t guessed_reads, guessed_resplits; /* reads that split again */

static const int64_t limit_rows[] = {1, 2, 3, 7, 64, 0};
static const int64_t limit_bytes[] = {1, 0, 37, 1000};

/* Every check on one input under one morsel limit. */
static void check_input(const char *path, const TlReadOptions *o, int level)
{
    bool deep = level >= 2;
    int nr = deep ? 6 : level == 1 ? 3 : 1, nb = deep ? 4 : 2;
    TlSchema *ss = string_schema(path, o);
    for (int i = 0; i < nr; i++) {
        for (int j = 0; j < nb; j++) {
            char what[64];
            Res a, b;
            TlTypeHints ha = {0}, hb = {0};
            int64_t lr = deep ? limit_rows[i] : level == 1 ? (int64_t[]){1, 3, 0}[i] : 0;
            int64_t lb = level == 0 ? (j ? 4096 : 0) : limit_bytes[j];
            tl_csv_split_force(lr, lb);
            snprintf(what, sizeof what, "next/morsels rows %lld bytes %lld",
                     (long long)lr, (long long)lb);
            read_next(path, o, &ha, &a);
            read_morsels(path, o, &hb, i % 3, &b);
            /* next() sets bytes to the input size at its end; morsels cover
             * the data, counted from the header's end */
            if (a.st == TL_OK && b.st == TL_OK) b.bytes = a.bytes = 0;
            /* a restart's widened types are what the hints received */
            CHECK_EQ_STR(sb_text(&b.widen), b.st == TL_ERR_RESTART ? sb_text(&b.hints) : "");
            sb_free(&b.widen);
            res_check(what, path, &a, &b, a.st == TL_OK);
            res_free(&b);
            tl_hints_free(&hb);
            /* guessed morsel ends, checked and split again where wrong:
             * the same as tl_reader_next (so as a careful split); every
             * other limit, to keep the test's time */
            if ((i + j) % 2 == 0) {
                TlTypeHints hc = {0};
                int64_t resplits = 0;
                read_guessed(path, o, &hc, 1 + (i + j) % 3, &b, &resplits);
                guessed_reads++;
                guessed_resplits += resplits > 0;
                if (a.st == TL_OK && b.st == TL_OK) b.bytes = a.bytes = 0;
                sb_free(&b.widen);
                snprintf(what, sizeof what, "next/guessed rows %lld bytes %lld",
                         (long long)lr, (long long)lb);
                res_check(what, path, &a, &b, a.st == TL_OK);
                res_free(&b);
                tl_hints_free(&hc);
            }
            res_free(&a);
            tl_hints_free(&ha);
            if (ss) {
                TlReadOptions os = *o;
                os.schema = ss;
                snprintf(what, sizeof what, "whole/morsels (strings) rows %lld bytes %lld",
                         (long long)lr, (long long)lb);
                read_whole(path, &os, NULL, &a);
                read_morsels(path, &os, NULL, (i + j) % 3, &b);
                a.bytes = b.bytes = a.batches = b.batches = 0;
                if (a.msg[0] || a.text.n || b.text.n) res_check(what, path, &a, &b, false);
                res_free(&a);
                res_free(&b);
            }
            if (deep && !o->schema) {
                read_final(read_whole, 0, path, o, &a);
                if (a.st == TL_OK) {
                    read_final(NULL, (i + j) % 3, path, o, &b);
                    a.bytes = b.bytes = a.batches = b.batches = 0;
                    a.hints.n = b.hints.n = 0;
                    if (a.hints.p) a.hints.p[0] = '\0';
                    if (b.hints.p) b.hints.p[0] = '\0';
                    snprintf(what, sizeof what, "final rows %lld bytes %lld",
                             (long long)lr, (long long)lb);
                    res_check(what, path, &a, &b, false);
                    res_free(&b);
                }
                res_free(&a);
            }
        }
    }
    tl_csv_split_force(0, 0);
    if (ss) {
        tl_schema_free(ss);
        tl_free(ss);
    }
}

/* ------------------------------------------------------- random inputs */

static void gen_value(Sb *s, int kind, int row, char delim, bool one_col,
                      int *errs)
{
    uint32_t x = rnd() % 100;
    char buf[64];
    if (x < 8) return;                       /* empty: null */
    if (x < 11) {
        sb_str(s, "NA");
        return;
    }
    if (x < 14) {
        sb_str(s, "\"\"");                   /* empty string */
        return;
    }
    if (x < 24) {
        /* quoted with trouble inside */
        static const char *q[] = {"\"a,b\"", "\"x\ny\"", "\"a\"\"b\"", "\"l1\r\nl2\"",
                                  "\"cr\rx\"", "\"\"\"\"", "\"tab\there\"",
                                  "\"\n\n\"", "\"12\"", "\"ends\r\""};
        const char *v = q[rnd() % 10];
        for (const char *c = v; *c; c++) {
            char ch = *c == ',' ? delim : *c;
            sb_put(s, &ch, 1);
        }
        return;
    }
    if (x < 26 && !one_col) {
        sb_str(s, "ab\"c");                  /* a loose quote: data */
        return;
    }
    if (x == 26 && (*errs)++ < 1 && rnd() % 4 == 0) {
        sb_str(s, "\"ab\"c");                /* unexpected character */
        return;
    }
    switch (kind) {
    case 0: snprintf(buf, sizeof buf, "%d", (int)(rnd() % 2000) - 1000); break;
    case 1: snprintf(buf, sizeof buf, "%d.%d", (int)(rnd() % 100), (int)(rnd() % 100)); break;
    case 2: snprintf(buf, sizeof buf, "2024-0%d-1%d", 1 + (int)(rnd() % 9), (int)(rnd() % 10)); break;
    case 3: snprintf(buf, sizeof buf, "%s", rnd() % 2 ? "true" : "false"); break;
    case 4: snprintf(buf, sizeof buf, "w%u%s", rnd() % 1000, rnd() % 5 ? "" : "longer than twelve"); break;
    default:
        /* mostly ints, a late float or word: restarts */
        if (row > 20 && rnd() % 15 == 0) snprintf(buf, sizeof buf, "%s", rnd() % 2 ? "1.5" : "zz");
        else snprintf(buf, sizeof buf, "%d", (int)(rnd() % 50));
        break;
    }
    sb_str(s, buf);
}

static const char *gen_newline(int style)
{
    static const char *nl[] = {"\n", "\r\n", "\r"};
    if (style < 3) return nl[style];
    return nl[rnd() % 3];
}

/* A random CSV; *o gets matching options. */
static void gen_csv(Sb *s, TlReadOptions *o, char *name, size_t name_cap, int idx)
{
    int n_cols = rnd() % 4 == 0 ? 1 : 1 + (int)(rnd() % 5);
    int n_rows = (int)(rnd() % (rnd() % 8 == 0 ? 400 : 40));
    int style = (int)(rnd() % 4), errs = 0;
    int kinds[8];
    bool tsv = rnd() % 5 == 0;
    char delim = tsv ? '\t' : ',';
    memset(o, 0, sizeof *o);
    o->no_header = rnd() % 6 == 0;
    if (rnd() % 3 == 0) o->null_text = "NA";
    snprintf(name, name_cap, "r%d.%s", idx, tsv ? "tsv" : "csv");
    for (int c = 0; c < n_cols; c++) kinds[c] = (int)(rnd() % 6);
    if (rnd() % 10 == 0) sb_str(s, "\xEF\xBB\xBF");
    if (rnd() % 8 == 0) sb_str(s, gen_newline(style)); /* blank lines first */
    if (!o->no_header) {
        for (int c = 0; c < n_cols; c++) {
            char h[16];
            if (c) sb_put(s, &delim, 1);
            snprintf(h, sizeof h, "%s", rnd() % 8 == 0 ? "" : rnd() % 6 == 0 ? "dup" : "");
            if (!h[0] && rnd() % 8) snprintf(h, sizeof h, "c%d", c);
            sb_str(s, h);
        }
        sb_str(s, gen_newline(style));
    }
    for (int row = 0; row < n_rows; row++) {
        int nf = n_cols;
        if (rnd() % 60 == 0) nf += rnd() % 2 ? 1 : -1; /* ragged */
        if (rnd() % 12 == 0) sb_str(s, gen_newline(style)); /* blank line */
        for (int c = 0; c < nf; c++) {
            if (c) sb_put(s, &delim, 1);
            gen_value(s, kinds[c < n_cols ? c : 0], row, delim, n_cols == 1, &errs);
        }
        if (row + 1 < n_rows || rnd() % 3) sb_str(s, gen_newline(style));
    }
    if (rnd() % 6 == 0) {
        sb_str(s, gen_newline(style));
        sb_str(s, gen_newline(style)); /* trailing blank lines */
    }
    if (rnd() % 25 == 0) sb_str(s, "\"never closed,\n1,2\n"); /* unterminated */
}

TL_TEST(test_random_inputs)
{
    for (int i = 0; i < 300; i++) {
        Sb s = {0};
        TlReadOptions o;
        char name[32];
        const char *path;
        rng_state = 0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1);
        gen_csv(&s, &o, name, sizeof name, i);
        path = tu_file(name, sb_text(&s), (long)s.n);
        check_input(path, &o, i < 120 ? 2 : 1);
        sb_free(&s);
    }
    /* guesses were wrong (quotes, row limits, errors) and right */
    CHECK(guessed_resplits > 0);
    CHECK(guessed_resplits < guessed_reads);
}

/* Hand-written edge cases (each also under every scan mode). */
TL_TEST(test_edge_inputs)
{
    static const char *cases[] = {
        "a,b\n1,2\n3,4",                       /* no final line end */
        "a,b\r\n1,2\r\n3,4\r\n",
        "a,b\r1,2\r3,4\r",
        "a\n1\n\n2\n\n\n",                      /* one column: nulls, trailing */
        "a\n\n\n\n",
        "a\r\n\r\n1\r\n\r\n",
        "a,b\n\n\n1,2\n\n3,4\n\n",
        "a,b\n\"x\ny\",1\n\"p\"\"q\",2\n",
        "a,b\n\"x\r\ny\",1\r\n\"\",2\r\n",
        "a,b\n1,\"open\n2,3\n",                /* unterminated */
        "a,b\n1,2\n\"x\"y,3\n4,5\n",           /* after closing quote */
        "a,b\n1,2\n3\n4,5\n",                   /* ragged */
        "a,b\n1,2\n3,4,5\n",
        "a,b\nab\"c,1\nd,e\"\n",               /* loose quotes */
        "\xEF\xBB\xBF" "a,b\n1,2\n",
        "\xEF\xBB\xBF",
        "",
        "\n\n",
        "a,b\n",
        "x\n\"\"\n\n\"\"\n",
        "a,b\n1,2\n1.5,x\n",                   /* restart */
        "a\n\"q\"\n\"\r\"\n\"\n\"\n",
        /* quoted fields longer than a 64-byte block, line ends inside */
        "a,b\n1,\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\naaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\naaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\raaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"\n"
        "2,x\n3,\"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n"
        "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\"\"b\"\n4,y\n",
        /* a loose quote, then a line end inside what parity calls quotes */
        "a,b\n1,ab\"c\n2,d\n3,\"e\"\n4,f\n",
        "a,b\n1,\"x\"y\n2,z\n",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TlReadOptions o = {0};
        char name[32];
        const char *path;
        snprintf(name, sizeof name, "e%zu.csv", i);
        path = tu_file(name, cases[i], -1);
        for (int mode = 0; mode <= 3; mode++) {
            tl_csv_scan_mode(mode);
            check_input(path, &o, 2);
        }
        tl_csv_scan_mode(-1);
        o.no_header = true;
        check_input(path, &o, 2);
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------- corpora */

static int corpus_files;

static void walk(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    if (!d) return;
    while ((e = readdir(d))) {
        char path[1024];
        struct stat sb;
        size_t n = strlen(e->d_name);
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &sb) != 0) continue;
        if (S_ISDIR(sb.st_mode)) {
            walk(path);
            continue;
        }
        if (!S_ISREG(sb.st_mode) || sb.st_size > (8 << 20)) continue;
        if ((n > 4 && (strcmp(e->d_name + n - 4, ".csv") == 0 ||
                       strcmp(e->d_name + n - 4, ".tsv") == 0)) ||
            (n > 7 && strcmp(e->d_name + n - 7, ".csv.gz") == 0)) {
            TlReadOptions o = {0};
            double t0 = now_s();
            /* every file in the release build, every third under ASan,
             * where scripts/run-corpora also reads each one with tally */
            int nth = corpus_files++;
            if (TL_ASAN && nth % 3 != 0) continue;
            check_input(path, &o, strstr(e->d_name, ".gz") ? 0 : sb.st_size < (4 << 10) ? 2 : sb.st_size < (16 << 10) ? 1 : 0);
            if (getenv("TL_TEST_TIMES") && now_s() - t0 > 0.3)
                fprintf(stderr, "%s: %.2f s\n", path, now_s() - t0);
        }
    }
    closedir(d);
}

TL_TEST(test_corpora)
{
    if (tl_test_corpora_missing(tl_test_corpora())) return;
    walk(tl_test_corpora());
    fprintf(stderr, "test_csv_split: %d corpus files\n", corpus_files);
    CHECK(corpus_files > 100);
}

/* ---------------------------------------------------- morsels, threads */

static const char *big_file(int rows)
{
    Sb s = {0};
    const char *path;
    char line[128];
    sb_str(&s, "id,name,v,q\n");
    for (int i = 0; i < rows; i++) {
        snprintf(line, sizeof line, "%d,name-%d-with-a-long-tail,%d.%d,%s\n", i,
                 i % 97, i % 1000, i % 7, i % 13 == 0 ? "\"q,\n\"\"x\"" : "plain");
        sb_str(&s, line);
    }
    path = tu_file("big.csv", sb_text(&s), (long)s.n);
    sb_free(&s);
    return path;
}

TL_TEST(test_morsel_shape)
{
    const char *path = big_file(200000);
    TlReader *r = NULL;
    TlError err = {0};
    Piece *pc;
    int64_t n;
    tl_csv_split_force(0, 0);
    CHECK_EQ_INT(tl_reader_open(path, NULL, NULL, &r, &err), TL_OK);
    pc = split_all(r, &n);
    CHECK(n > 8);
    /* small first, growing, at most 4 MB */
    CHECK(pc[0].m.end - pc[0].m.begin < (64u << 10));
    CHECK_EQ_INT(pc[0].m.line, 2);
    for (int64_t i = 1; i + 1 < n; i++) {
        CHECK(pc[i].m.end - pc[i].m.begin >= pc[i - 1].m.end - pc[i - 1].m.begin ||
              pc[i].m.end - pc[i].m.begin > (1u << 20));
        CHECK(pc[i].m.end - pc[i].m.begin <= (4u << 20));
    }
    pieces_free(pc, n);
    tl_reader_close(r);
}

typedef struct Job {
    TlReader *r;
    Piece *pc;
    int64_t n;
    int which;  /* decode the morsels with i % 2 == which */
} Job;

static void *decode_job(void *arg)
{
    Job *j = arg;
    TlDecoder *d = NULL;
    TlError err = {0};
    if (tl_decoder_new(j->r, &d, &err) != TL_OK) return NULL;
    for (int64_t i = j->which; i < j->n; i += 2)
        j->pc[i].st = tl_reader_decode(j->r, d, &j->pc[i].m, &j->pc[i].b,
                                       &j->pc[i].widen, &j->pc[i].err);
    tl_decoder_free(d);
    return NULL;
}

TL_TEST(test_two_threads)
{
    const char *path = big_file(30000);
    for (int round = 0; round < 3; round++) {
        TlReader *r = NULL;
        TlError err = {0};
        Piece *pc;
        int64_t n;
        pthread_t t[2];
        Job jobs[2];
        Res a, b;
        tl_csv_split_force(round == 0 ? 7 : round == 1 ? 500 : 0, 0);
        read_next(path, NULL, NULL, &a);
        memset(&b, 0, sizeof b);
        CHECK_EQ_INT(tl_reader_open(path, NULL, NULL, &r, &err), TL_OK);
        sb_schema(&b.text, tl_reader_schema(r));
        pc = split_all(r, &n);
        CHECK(n > 2);
        for (int k = 0; k < 2; k++) {
            jobs[k] = (Job){r, pc, n, k};
            CHECK_EQ_INT(pthread_create(&t[k], NULL, decode_job, &jobs[k]), 0);
        }
        for (int k = 0; k < 2; k++) pthread_join(t[k], NULL);
        assemble(r, pc, n, NULL, &b);
        a.bytes = b.bytes = 0;
        res_check("two threads", path, &a, &b, true);
        res_free(&a);
        res_free(&b);
        pieces_free(pc, n);
        tl_reader_close(r);
    }
    tl_csv_split_force(0, 0);
}

/* Resident KB of this process's mapping of path (/proc/self/smaps), so
 * allocator caches (ASan's quarantine) do not count. */
static long mapped_kb(const char *path)
{
    char line[1024];
    long kb = 0;
    bool in = false;
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return 0;
    while (fgets(line, sizeof line, f)) {
        long v;
        bool header = (line[0] >= '0' && line[0] <= '9') || (line[0] >= 'a' && line[0] <= 'f');
        if (header) { /* "start-end perms offset dev inode path" */
            in = strstr(line, path) != NULL;
            continue;
        }
        if (in && sscanf(line, "Rss: %ld kB", &v) == 1) kb += v;
    }
    fclose(f);
    return kb;
}

/* A mapped file: decoded pages go back to the file, and long string views
 * into them still read right afterwards. */
TL_TEST(test_pages_dropped)
{
    const char *path = big_file(400000); /* ~ 20 MB */
    TlReader *r = NULL;
    TlError err = {0};
    TlDecoder *d = NULL;
    long peak = 0, before;
    Sb kept = {0}, again = {0};
    TlBatch *first = NULL;
    struct stat sb;
    tl_csv_split_force(0, 0);
    CHECK_EQ_INT(stat(path, &sb), 0);
    CHECK_EQ_INT(tl_reader_open(path, NULL, NULL, &r, &err), TL_OK);
    CHECK_EQ_INT(tl_decoder_new(r, &d, &err), TL_OK);
    before = mapped_kb(path);
    for (;;) {
        TlMorsel m;
        bool got = false;
        TlBatch *b = NULL;
        TlSchema *w = NULL;
        long now;
        CHECK_EQ_INT(tl_reader_split(r, &m, &got, &err), TL_OK);
        if (!got) break;
        CHECK_EQ_INT(tl_reader_decode(r, d, &m, &b, &w, &err), TL_OK);
        if (!first) {
            first = b;
            sb_batch(&kept, b);
        } else {
            tl_batch_free(b);
        }
        now = mapped_kb(path);
        if (now > peak) peak = now;
    }
    /* the first batch's long strings point into dropped pages */
    sb_batch(&again, first);
    CHECK_EQ_STR(sb_text(&kept), sb_text(&again));
    fprintf(stderr, "test_csv_split: file %lld KB, mapped %ld KB resident after "
            "open, at most %ld KB after each morsel\n", (long long)sb.st_size / 1024,
            before, peak);
    CHECK(peak < (long)(sb.st_size / 1024) / 2);
    tl_batch_free(first);
    sb_free(&kept);
    sb_free(&again);
    tl_decoder_free(d);
    tl_reader_close(r);
}

/* Errors of decode name file, line and column like next(); restarts hand
 * the widened types back without touching the hints. */
TL_TEST(test_decode_restart_leaves_hints)
{
    const char *path = tu_file("w.csv", "a,b,c\n1,x,2\n3,y,4\n5.5,z,6\n", -1);
    TlTypeHints h = {0};
    TlReader *r = NULL;
    TlError err = {0};
    TlDecoder *d = NULL;
    TlMorsel m;
    bool got;
    TlBatch *b = NULL;
    TlSchema *w = NULL;
    tl_csv_split_force(0, 0);
    CHECK_EQ_INT(tl_reader_open(path, NULL, &h, &r, &err), TL_OK);
    CHECK_EQ_INT(tl_reader_split(r, &m, &got, &err), TL_OK);
    CHECK(got);
    CHECK_EQ_INT(tl_decoder_new(r, &d, &err), TL_OK);
    CHECK_EQ_INT(tl_reader_decode(r, d, &m, &b, &w, &err), TL_OK);
    CHECK(b != NULL);
    tl_batch_free(b);
    tl_decoder_free(d);
    tl_reader_close(r);
    tl_hints_free(&h);

    /* inference sees the first 2 rows: 5.5 restarts */
    memset(&h, 0, sizeof h);
    tl_csv_split_force(2, 0);
    CHECK_EQ_INT(tl_reader_open(path, NULL, &h, &r, &err), TL_OK);
    CHECK_EQ_INT(tl_reader_split(r, &m, &got, &err), TL_OK); /* rows 1, 2 */
    CHECK_EQ_INT(tl_reader_split(r, &m, &got, &err), TL_OK); /* row 3 */
    CHECK_EQ_INT(m.line, 4);
    CHECK_EQ_INT(tl_decoder_new(r, &d, &err), TL_OK);
    b = NULL;
    CHECK_EQ_INT(tl_reader_decode(r, d, &m, &b, &w, &err), TL_ERR_RESTART);
    {
        char want[700];
        snprintf(want, sizeof want,
                 "%s:4: column \"a\" holds a float64 value; reading again", path);
        CHECK_EQ_STR(err.msg, want);
    }
    CHECK(b == NULL);
    CHECK(w != NULL);
    CHECK_EQ_INT(h.cols.n_fields, 0); /* untouched by decode */
    if (w) {
        CHECK_EQ_INT(w->n_fields, 1);
        CHECK_EQ_STR(w->fields[0].name, "a");
        CHECK_EQ_INT(w->fields[0].type, TL_TFLOAT64);
        CHECK_EQ_INT(tl_reader_widen(r, w, &err), TL_OK);
        CHECK_EQ_INT(h.cols.n_fields, 1);
        CHECK_EQ_INT(h.cols.fields[0].type, TL_TFLOAT64);
        tl_schema_free(w);
        tl_free(w);
    }
    tl_decoder_free(d);
    tl_reader_close(r);
    tl_hints_free(&h);
    tl_csv_split_force(0, 0);
}

/* TEST_ONLY=name runs one test (e.g. test_two_threads under TSan);
 * TL_TEST_TIMES=1 prints how long each took (tl_test.h). */
#define TIMED(name)                                                            \
    do {                                                                       \
        if (getenv("TEST_ONLY") && strcmp(getenv("TEST_ONLY"), #name) != 0)    \
            break;                                                             \
        TL_RUN(name);                                                          \
    } while (0)

/* Inference's shortcuts for numbers answer what tl_infer_widen answers. */
TL_TEST(test_infer_shapes)
{
    static const char *v[] = {"1", "-1", "+5", "1.", ".5", "-.5", "-", "1.5", "-0.25",
                              "00.10", "1.2.3", "123456789012345678",
                              "1234567890123456789", "-12345678901234567",
                              "12345678901234567890.5", "1e5", "x", "true",
                              "2024-01-02", "2024-01-02 03:04:05", "nan", "0", "007",
                              "-0", "1234567890123456", "0.5"};
    const size_t n = sizeof v / sizeof v[0];
    tl_csv_split_force(0, 0);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            char text[128];
            TlReader *r = NULL;
            TlError err = {0};
            TlType t1 = tl_infer_widen(TL_TNULL, v[i], strlen(v[i]));
            TlType want = tl_infer_widen(t1, v[j], strlen(v[j]));
            if (t1 == TL_TINT64 && want == TL_TFLOAT64) /* the integer again, as a float */
                want = tl_infer_widen(tl_infer_widen(TL_TFLOAT64, v[i], strlen(v[i])),
                                      v[j], strlen(v[j]));
            const char *path;
            snprintf(text, sizeof text, "a\n%s\n%s\n", v[i], v[j]);
            path = tu_file("shape.csv", text, -1);
            CHECK_EQ_INT(tl_reader_open(path, NULL, NULL, &r, &err), TL_OK);
            if (r) {
                if (tl_reader_schema(r)->fields[0].type != want)
                    fprintf(stderr, "shape %s then %s\n", v[i], v[j]);
                CHECK_EQ_INT(tl_reader_schema(r)->fields[0].type, want);
            }
            tl_reader_close(r);
        }
    }
}

int main(void)
{
    setvbuf(stderr, NULL, _IONBF, 0);
    tu_init();
    TIMED(test_infer_shapes);
    TIMED(test_edge_inputs);
    TIMED(test_random_inputs);
    TIMED(test_morsel_shape);
    TIMED(test_two_threads);
    TIMED(test_pages_dropped);
    TIMED(test_decode_restart_leaves_hints);
    TIMED(test_corpora);
    tu_cleanup();
    return tl_test_summary(__FILE__);
}
