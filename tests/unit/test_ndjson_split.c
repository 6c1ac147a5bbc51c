/* run-unit: weight=17 */
/*
 * test_ndjson_split.c -- morsel reading of the NDJSON reader (format.h,
 * "morsel-parallel reading"; formats/ndjson_read.c) and of the
 * --with-filename wrapper around it (formats/filename.c).
 *
 * Inputs come from a seeded generator of nasty NDJSON: nested objects
 * (flattened and too deep), arrays, empty objects, every escape, surrogate
 * pairs, raw UTF-8, escaped keys, missing and duplicate keys, dotted keys
 * that meet flattened ones, integers beyond int64, ints that turn into
 * floats and strings, keys first seen late, blank lines, white space
 * (CR included) inside objects, CRLF and lone-CR line ends, a BOM, no
 * final newline, and sometimes a bad line or a --schema column a value
 * does not convert to.  Each input is read under several forced morsel
 * limits (tl_ndjson_split_force: records and bytes per morsel, from one
 * record per morsel to one morsel for everything), through the driver's
 * restart loop (reopen with the hints after TL_ERR_RESTART):
 *
 *   next == morsels   tl_reader_next against split + decode in a shuffled
 *                     order with a fresh decoder per morsel (and against
 *                     two decoders taking turns), consumed in morsel order
 *                     (widen on restart, count per morsel): the same rows,
 *                     values, error text, hints after every restart and
 *                     counters, attempt by attempt;
 *   any cuts          the final outcome (types, values, or the error and
 *                     its message) and the counters of rows, bytes and
 *                     converted fields are the same for every limit;
 *   threads           two threads decode the morsels of one reader at once
 *                     (run under make asan), same batches as next;
 *   shape             morsels are contiguous, cover the input, start small
 *                     and grow, and hold at most the forced rows;
 *   filename          --with-filename over NDJSON (and CSV) splits when the
 *                     inner reader does and its batches equal next's.
 */
#include "tl_test.h"
#include "../../formats/infer.h"
#include "csv_test_util.h"
#include "tl_sb.h"
#include "../../formats/fmt_impl.h"
#include "split_force.h"

#include <pthread.h>

/* ------------------------------------------------------------- text */

static void sb_schema(Sb *s, const TlSchema *sc)
{
    for (int c = 0; c < sc->n_fields; c++) {
        sb_str(s, c ? "," : "#");
        sb_str(s, sc->fields[c].name);
        sb_str(s, ":");
        sb_str(s, tl_type_name(sc->fields[c].type));
    }
    sb_str(s, "\n");
}

/* Rows as text: cells split by |, strings in '', ~ for null. */
static void sb_batch(Sb *s, const TlBatch *b)
{
    for (int64_t r = 0; r < b->n_rows; r++) {
        for (int c = 0; c < b->n_cols; c++) {
            const TlArray *a = b->cols[c];
            bool str = a->type == TL_TSTRING;
            if (c) sb_put(s, "|", 1);
            if (!tl_array_valid(a, r)) {
                sb_put(s, "~", 1);
                continue;
            }
            if (str) sb_put(s, "'", 1);
            sb_value(s, a, r);
            if (str) sb_put(s, "'", 1);
        }
        sb_put(s, "\n", 1);
    }
}

/* ------------------------------------------------------------ generator */

static uint64_t rng;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int pick(int n)
{
    return (int)(rnd() % (uint64_t)n);
}

static void ws(Sb *s)
{
    static const char *w[] = {"", "", "", "", " ", "  ", "\t", " \r "};
    sb_str(s, w[pick(8)]);
}

static void gen_string(Sb *s)
{
    static const char *parts[] = {
        "plain", "a b", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t",
        "\\u00e9", "\\u0041", "\\ud83d\\ude00", "\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac",
        "\xf0\x9f\x98\x80", "2024-01-31", ",", "{", "]", "long enough to leave the view"};
    int n = pick(4);
    sb_str(s, "\"");
    for (int i = 0; i < n; i++) sb_str(s, parts[pick((int)(sizeof parts / sizeof *parts))]);
    sb_str(s, "\"");
}

static void gen_value(Sb *s, int depth);

static void gen_number(Sb *s)
{
    static const char *odd[] = {"0", "-0", "9223372036854775807", "-9223372036854775808",
                                "9223372036854775808", "123456789012345678901234",
                                "-99999999999999999999"};
    if (pick(6) == 0) {
        sb_str(s, odd[pick(7)]);
        return;
    }
    sb_fmt(s, "%lld", (long long)pick(2001) - 1000);
}

static void gen_float(Sb *s)
{
    static const char *f[] = {"1.5", "-0.0", "1e10", "2.5E-3", "0.1", "-7.25e+2"};
    sb_str(s, f[pick(6)]);
}

static void gen_object(Sb *s, int depth)
{
    int n = pick(4);
    static const char *keys[] = {"x", "y", "z", "q\\u0041"};
    sb_str(s, "{");
    ws(s);
    for (int i = 0; i < n; i++) {
        if (i) {
            sb_str(s, ",");
            ws(s);
        }
        sb_str(s, "\"");
        sb_str(s, keys[pick(4)]);
        sb_str(s, "\":");
        ws(s);
        gen_value(s, depth + 1);
        ws(s);
    }
    sb_str(s, "}");
}

static void gen_value(Sb *s, int depth)
{
    switch (pick(depth > 3 ? 7 : 9)) {
    case 0: case 1: gen_number(s); break;
    case 2: gen_float(s); break;
    case 3: gen_string(s); break;
    case 4: sb_str(s, pick(2) ? "true" : "false"); break;
    case 5: sb_str(s, "null"); break;
    case 6: gen_string(s); break;
    case 7: {
        int n = pick(3);
        sb_str(s, "[");
        ws(s);
        for (int i = 0; i < n; i++) {
            if (i) sb_str(s, ", ");
            gen_value(s, depth + 1);
        }
        sb_str(s, "]");
        break;
    }
    default: gen_object(s, depth); break;
    }
}

/* One key and its value; col says which column family. */
static void gen_member(Sb *s, int col, int line)
{
    switch (col) {
    case 0: /* n: int, sometimes a float, rarely a string */
        sb_str(s, "\"n\":");
        ws(s);
        if (pick(40) == 0) gen_float(s);
        else if (pick(150) == 0) gen_string(s);
        else gen_number(s);
        break;
    case 1: /* b: bool or null */
        sb_str(s, "\"b\":");
        sb_str(s, pick(5) == 0 ? "null" : pick(2) ? "true" : "false");
        break;
    case 2:
        sb_str(s, "\"s\":");
        ws(s);
        gen_string(s);
        break;
    case 3: /* o: flattened object */
        sb_str(s, "\"o\":");
        gen_object(s, 1);
        break;
    case 4:
        sb_str(s, "\"any\":");
        gen_value(s, 0);
        break;
    case 5: /* the same column as {"o":{"x":..}} */
        sb_str(s, "\"o.x\":");
        gen_number(s);
        break;
    case 6: /* an escaped key: "kA" */
        sb_str(s, "\"k\\u0041\":");
        gen_value(s, 2);
        break;
    case 7: /* late keys */
        if (line > 40 && pick(3) == 0) {
            sb_str(s, pick(2) ? "\"late\":" : "\"later\":");
            gen_value(s, 3);
        } else {
            sb_str(s, "\"arr\":[1, {\"u\": 2}]");
        }
        break;
    default:
        sb_str(s, "\"deep\":{\"a\":{\"b\":{\"c\":{\"d\":{\"e\":{\"f\":{\"g\":{\"h\":1}}}}}}}}");
        break;
    }
}

static void gen_line_end(Sb *s)
{
    int k = pick(20);
    sb_str(s, k < 15 ? "\n" : k < 18 ? "\r\n" : k < 19 ? " \r" : "\t\r\n");
}

/* A random NDJSON text; *bad_line says whether it holds a bad line.  With
 * n_first the first line holds "n" (a --schema column absent from the
 * inference sample goes after the sample's columns, so the column order
 * would depend on the sample's size). */
static void gen_input(Sb *s, uint64_t seed, int lines, bool n_first, bool *bad_line)
{
    static const char *bad[] = {
        "{\"n\": x}", "[1]", "{\"n\":1} 2", "{\"s\":\"open", "{\"n\":1,}",
        "{\"s\":\"\\ud800\"}", "{\"s\":\"\x01\"}", "  7", "{\"n\":1.}", "{\"o\":{\"x\":1]}"};
    int bad_at = -1;
    rng = seed * 0x9E3779B97F4A7C15ull + 1;
    if (pick(4) == 0) bad_at = pick(lines + 1);
    *bad_line = bad_at >= 0 && bad_at < lines;
    if (pick(6) == 0) sb_str(s, "\xef\xbb\xbf");
    if (n_first) sb_str(s, "{\"n\":0}\n");
    for (int line = 0; line < lines; line++) {
        if (line == bad_at) {
            sb_str(s, bad[pick(10)]);
            sb_str(s, "\n");
            continue;
        }
        if (pick(12) == 0) {
            static const char *blank[] = {"", "  ", "\t\r", " \r "};
            sb_str(s, blank[pick(4)]);
            sb_str(s, "\n");
            continue;
        }
        if (pick(10) == 0) sb_str(s, pick(2) ? " " : "\r");
        sb_str(s, "{");
        ws(s);
        {
            int n = 0;
            for (int col = 0; col < 9; col++) {
                if (pick(10) < 3) continue; /* missing */
                if (n++) {
                    sb_str(s, ",");
                    ws(s);
                }
                gen_member(s, col, line);
                ws(s);
            }
            if (n && pick(20) == 0) { /* a duplicate key: the last wins */
                sb_str(s, ",");
                gen_member(s, pick(3), line);
            }
        }
        sb_str(s, "}");
        if (line + 1 < lines || pick(3)) gen_line_end(s);
    }
}

/* ----------------------------------------------------------- outcomes */

typedef struct Outcome {
    Sb text;        /* the last attempt: schema, rows */
    Sb trace;       /* every attempt: restart messages and hints */
    Sb counts;      /* the last attempt: rows, bytes, converted */
    int64_t batches;
    TlStatus st;
    char msg[TL_ERRMSG_MAX];
    int restarts;
} Outcome;

static void outcome_free(Outcome *o)
{
    sb_free(&o->text);
    sb_free(&o->trace);
    sb_free(&o->counts);
}

enum { VIA_NEXT, VIA_SHUFFLED, VIA_TWO, VIA_GUESS };

typedef struct Piece {
    TlMorsel m;
    TlBatch *b;
    TlSchema *widen;
    TlStatus st;
    TlError err;
} Piece;

static void shuffle(int *order, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = pick(i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

/* One attempt through morsels: split all, decode in some order, consume
 * in order as op_scan does.  VIA_GUESS: with guessed morsel ends
 * (tl_reader_guess), a failed guessed morsel dropped with every later one
 * and the input split again from it (tl_reader_resplit), as op_scan does. */
static TlStatus read_morsels(TlReader *r, int how, Outcome *o, TlError *e)
{
    Piece *pc = NULL;
    int n = 0, cap = 0, *order;
    TlDecoder *two[2] = {NULL, NULL};
    TlStatus st = TL_OK;
    int64_t seq0 = 0; /* seq of the first morsel of this round */
    TlMorsel again;
    bool resplit;
    if (how == VIA_GUESS) tl_reader_guess(r);
round:
    resplit = false;
    n = 0;
    for (;;) {
        TlMorsel m;
        bool got = false;
        st = tl_reader_split(r, &m, &got, e);
        if (st != TL_OK) return st;
        if (!got) break;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            pc = realloc(pc, (size_t)cap * sizeof *pc);
        }
        memset(&pc[n], 0, sizeof pc[n]);
        pc[n++].m = m;
    }
    order = malloc(sizeof *order * (size_t)(n + 1));
    for (int i = 0; i < n; i++) order[i] = i;
    shuffle(order, n);
    if (how == VIA_TWO) {
        CHECK_EQ_INT(tl_decoder_new(r, &two[0], e), TL_OK);
        CHECK_EQ_INT(tl_decoder_new(r, &two[1], e), TL_OK);
    }
    for (int k = 0; k < n; k++) {
        Piece *p = &pc[order[k]];
        TlDecoder *d = NULL;
        if (how == VIA_TWO) {
            d = two[k % 2];
        } else if (tl_decoder_new(r, &d, &p->err) != TL_OK) {
            p->st = p->err.code;
            continue;
        }
        p->st = tl_reader_decode(r, d, &p->m, &p->b, &p->widen, &p->err);
        CHECK(p->st == TL_ERR_RESTART || p->widen == NULL);
        if (how != VIA_TWO) tl_decoder_free(d);
    }
    tl_decoder_free(two[0]);
    tl_decoder_free(two[1]);
    for (int i = 0; i < n && st == TL_OK; i++) {
        Piece *p = &pc[i];
        CHECK_EQ_INT(p->m.seq, seq0 + i);
        CHECK(how == VIA_GUESS || p->m.line >= 1);
        if (p->st != TL_OK && p->m.line < 0) {
            again = p->m;
            resplit = true;
            break;
        }
        if (p->st != TL_OK) {
            *e = p->err;
            st = p->st;
            if (st == TL_ERR_RESTART && p->widen && tl_reader_widen(r, p->widen, e) != TL_OK)
                st = e->code;
            break;
        }
        tl_reader_count(r, p->b ? p->b->n_rows : 0, (int64_t)(p->m.end - p->m.begin));
        if (p->b) sb_batch(&o->text, p->b);
    }
    for (int i = 0; i < n; i++) {
        tl_batch_free(pc[i].b);
        if (pc[i].widen) {
            tl_schema_free(pc[i].widen);
            tl_free(pc[i].widen);
        }
    }
    free(order);
    if (resplit) {
        st = tl_reader_resplit(r, &again, e);
        if (st != TL_OK) {
            free(pc);
            return st;
        }
        seq0 = again.seq;
        goto round;
    }
    free(pc);
    return st;
}

static TlStatus read_next(TlReader *r, Outcome *o, TlError *e)
{
    for (;;) {
        TlBatch *b = NULL;
        TlStatus st = tl_reader_next(r, &b, e);
        if (st != TL_OK) return st;
        if (!b) return TL_OK;
        sb_batch(&o->text, b);
        tl_batch_free(b);
    }
}

/* The driver's loop over attempts; project: read "n" and the columns with
 * names of even length, in reverse order (chosen by name, as the CLI does,
 * so the same columns are read whatever the inference sample saw). */
static void run(const char *path, const TlReadOptions *opt, int how, bool project,
                Outcome *o)
{
    TlTypeHints h;
    TlError e;
    memset(&h, 0, sizeof h);
    memset(o, 0, sizeof *o);
    for (;;) {
        TlReader *r = NULL;
        TlStatus st;
        o->text.n = 0;
        if (o->text.p) o->text.p[0] = 0;
        o->counts.n = 0;
        if (o->counts.p) o->counts.p[0] = 0;
        st = tl_reader_open(path, opt, &h, &r, &e);
        if (st == TL_OK) {
            /* the types of the columns read (only they are widened) */
            const TlSchema *sc = tl_reader_schema(r);
            TlSchema ps = {0};
            int cols[256], nc = 0;
            for (int c = project ? sc->n_fields - 1 : 0; c >= 0 && c < sc->n_fields && nc < 256;
                 c += project ? -1 : 1)
                if (!project || strlen(sc->fields[c].name) % 2 == 0 ||
                    strcmp(sc->fields[c].name, "n") == 0)
                    cols[nc++] = c;
            for (int k = 0; k < nc; k++)
                tl_schema_add(&ps, sc->fields[cols[k]].name, sc->fields[cols[k]].type, &e);
            sb_schema(&o->text, &ps);
            tl_schema_free(&ps);
            if (project) st = tl_reader_project(r, cols, nc, &e);
        }
        if (st == TL_OK) {
            CHECK(tl_reader_can_split(r));
            st = how == VIA_NEXT ? read_next(r, o, &e) : read_morsels(r, how, o, &e);
        }
        if (r) {
            const TlReaderStats *rs = tl_reader_stats(r);
            const TlSchema *sc = tl_reader_schema(r);
            sb_fmt(&o->counts, "rows %lld", rs->rows);
            sb_fmt(&o->counts, " bytes %lld", rs->bytes);
            for (int c = 0; c < sc->n_fields && rs->converted; c++)
                sb_fmt(&o->counts, " %lld", rs->converted[c]);
            o->batches = rs->batches;
            tl_reader_close(r);
        }
        o->st = st;
        snprintf(o->msg, sizeof o->msg, "%s", st == TL_OK ? "" : e.msg);
        if (st != TL_ERR_RESTART) break;
        sb_str(&o->trace, e.msg);
        sb_str(&o->trace, "\n");
        sb_schema(&o->trace, &h.cols);
        if (++o->restarts > 40) break;
    }
    tl_hints_free(&h);
}

static bool same_attempts(const Outcome *a, const Outcome *b)
{
    return a->st == b->st && strcmp(a->msg, b->msg) == 0 &&
           strcmp(sb_text(&a->text), sb_text(&b->text)) == 0 &&
           strcmp(sb_text(&a->trace), sb_text(&b->trace)) == 0 &&
           strcmp(sb_text(&a->counts), sb_text(&b->counts)) == 0 &&
           a->batches == b->batches && a->restarts == b->restarts;
}

/* The same final result (the values only when the run succeeds). */
static bool same_final(const Outcome *a, const Outcome *b)
{
    if (a->st != b->st || strcmp(a->msg, b->msg) != 0) return false;
    if (a->st != TL_OK) return true;
    return strcmp(sb_text(&a->text), sb_text(&b->text)) == 0 &&
           strcmp(sb_text(&a->counts), sb_text(&b->counts)) == 0;
}

static void report(const char *what, uint64_t seed, int li, const Outcome *a,
                   const Outcome *b)
{
    fprintf(stderr, "%s: seed %llu limits %d\n  st %d/%d msg [%s] / [%s]\n"
            "  restarts %d/%d batches %lld/%lld counts [%s] / [%s]\n"
            "--- a\n%.2000s\n--- b\n%.2000s\n--- trace a\n%.1000s\n--- trace b\n%.1000s\n",
            what, (unsigned long long)seed, li, a->st, b->st, a->msg, b->msg,
            a->restarts, b->restarts, (long long)a->batches, (long long)b->batches,
            sb_text(&a->counts), sb_text(&b->counts), sb_text(&a->text),
            sb_text(&b->text), sb_text(&a->trace), sb_text(&b->trace));
}

static const int64_t limits[][2] = {
    {0, 0}, {1, 0}, {3, 16}, {7, 1}, {50, 200}, {100000, (int64_t)1 << 30}};
#define N_LIMITS ((int)(sizeof limits / sizeof *limits))

TL_TEST(test_random_inputs)
{
    int inputs = 0, with_error = 0, restarted = 0;
    /* 90 inputs; 30 under ASan (tl_test_scaled): every residue of the
     * seed's % 3, % 5 and % 7 choices still occurs */
    uint64_t seeds = (uint64_t)tl_test_scaled(90, 3);
    for (uint64_t seed = 1; seed <= seeds; seed++) {
        Sb in = {0};
        bool bad = false;
        char name[64];
        const char *path;
        TlSchema fixed = {0};
        TlReadOptions opt;
        TlError e;
        Outcome first;
        bool project = seed % 3 == 0;
        gen_input(&in, seed, (int)(seed % 7 == 0 ? 0 : 1 + (seed * 37) % 150), seed % 5 == 0,
                  &bad);
        snprintf(name, sizeof name, "r%llu.ndjson", (unsigned long long)seed);
        path = tu_file(name, sb_text(&in), (long)in.n);
        memset(&opt, 0, sizeof opt);
        if (seed % 5 == 0) {
            /* --schema n:int64: a float or string there is an error */
            CHECK_EQ_INT(tl_schema_add(&fixed, "n", TL_TINT64, &e), TL_OK);
            opt.schema = &fixed;
        }
        memset(&first, 0, sizeof first);
        for (int li = 0; li < N_LIMITS; li++) {
            Outcome o[4];
            rng = seed * 7919 + (uint64_t)li;
            tl_ndjson_split_force(limits[li][0], limits[li][1]);
            run(path, &opt, VIA_NEXT, project, &o[0]);
            run(path, &opt, VIA_SHUFFLED, project, &o[1]);
            run(path, &opt, VIA_TWO, project, &o[2]);
            run(path, &opt, VIA_GUESS, project, &o[3]);
            for (int k = 1; k < 4; k++)
                if (!same_attempts(&o[0], &o[k])) {
                    CHECK(!"next == morsels");
                    report(k == 1 ? "next vs shuffled" : k == 2 ? "next vs two decoders"
                                                              : "next vs guessed ends",
                           seed, li, &o[0], &o[k]);
                }
            if (li == 0) {
                first = o[0];
                memset(&o[0], 0, sizeof o[0]);
                inputs++;
                with_error += first.st != TL_OK;
                CHECK(first.st != TL_ERR_RESTART);
                if (!bad && !opt.schema) CHECK_EQ_INT(first.st, TL_OK);
            } else if (li == 1) {
                restarted += o[0].restarts > 0;
            }
            if (li > 0 && !same_final(&first, &o[0])) {
                CHECK(!"the outcome does not depend on the cuts");
                report("limits 0 vs", seed, li, &first, &o[0]);
            }
            for (int k = 0; k < 4; k++) outcome_free(&o[k]);
        }
        outcome_free(&first);
        tl_schema_free(&fixed);
        sb_free(&in);
    }
    tl_ndjson_split_force(0, 0);
    /* the generator reaches what it is meant to */
    printf("random inputs: %d, ending in an error: %d, restarting with one record a "
           "morsel: %d\n", inputs, with_error, restarted);
    CHECK(inputs == (int)seeds);
    CHECK(with_error >= 10);
    CHECK(restarted >= 25);
}

/* Hand-written inputs whose outcome is known, under every limit. */
static void check_all_limits(const char *text, const char *want_text, const char *want_msg)
{
    const char *path = tu_file("k.ndjson", text, -1);
    for (int li = 0; li < N_LIMITS; li++) {
        Outcome o;
        tl_ndjson_split_force(limits[li][0], limits[li][1]);
        run(path, NULL, VIA_SHUFFLED, false, &o);
        if (want_msg) {
            char full[512];
            snprintf(full, sizeof full, "%s:%s", path, want_msg);
            CHECK_EQ_STR(o.msg, full);
        } else {
            CHECK_EQ_INT(o.st, TL_OK);
            CHECK_EQ_STR(sb_text(&o.text), want_text);
        }
        outcome_free(&o);
    }
    tl_ndjson_split_force(0, 0);
}

TL_TEST(test_known_outcomes)
{
    /* lone CR ends a record after an object; inside one it is white space */
    check_all_limits("{\"a\":1}\r{\"a\":\r2}\r\n\r\n{\"a\" :3} \r{\"b\":\"x\"}",
                     "#a:int64,b:string\n1|~\n2|~\n3|~\n~|'x'\n", NULL);
    /* line numbers count lone-CR record ends */
    check_all_limits("{\"a\":1}\r{\"a\":2}\r\n\n{\"a\":\r x}\n",
                     NULL, "4:8: invalid value (expected a string, number, object, "
                           "array, true, false or null)");
    /* a BOM, then a value beyond int64 (no exact double): the column keeps its text */
    check_all_limits("\xef\xbb\xbf{\"a\":1}\n{\"a\":18446744073709551616}\n",
                     "#a:string\n'1'\n'18446744073709551616'\n", NULL);
    /* a late key and a widening late in the input */
    check_all_limits("{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n{\"a\":4.5,\"z\":[1]}\n",
                     "#a:float64,z:string\n1.0|~\n2.0|~\n3.0|~\n4.5|'[1]'\n", NULL);
    /* the first bad line wins, whatever comes after it */
    check_all_limits("{\"a\":1}\n{\"a\":2,\"late\":1}\n{\"a\":tru}\n{\"a\":[}\n",
                     NULL, "3:6: invalid value (expected a string, number, object, "
                           "array, true, false or null)");
    /* no lines, only blank lines */
    check_all_limits("", "\n", NULL);
    check_all_limits("\n \r\n\t\n", "\n", NULL);
}

TL_TEST(test_schema_error_first_in_order)
{
    /* a value --schema cannot take comes before a bad line: it is reported,
     * however the input is cut (and whatever the inference sample saw) */
    const char *path = tu_file("f.ndjson", "{\"d\":\"2024-01-01\"}\n{\"d\":\"soon\"}\n"
                                           "{\"d\":\"2024-01-02\",\"e\":1}\n{\"d\":}\n", -1);
    TlSchema fixed = {0};
    TlReadOptions opt;
    TlError e;
    char want[512];
    memset(&opt, 0, sizeof opt);
    CHECK_EQ_INT(tl_schema_add(&fixed, "d", TL_TDATE, &e), TL_OK);
    opt.schema = &fixed;
    snprintf(want, sizeof want, "%s:2:6: \"soon\" is not a valid date (column \"d\")", path);
    for (int li = 0; li < N_LIMITS; li++) {
        Outcome o;
        tl_ndjson_split_force(limits[li][0], limits[li][1]);
        run(path, &opt, VIA_NEXT, false, &o);
        CHECK_EQ_INT(o.st, TL_ERR_DATA);
        CHECK_EQ_STR(o.msg, want);
        outcome_free(&o);
    }
    tl_ndjson_split_force(0, 0);
    tl_schema_free(&fixed);
    /* two columns that cannot take a value: the lower row is reported,
     * not the first column's */
    path = tu_file("f2.ndjson", "{\"a\":1,\"b\":2}\n{\"a\":1,\"b\":\"x\"}\n"
                                "{\"a\":\"y\",\"b\":2}\n", -1);
    memset(&fixed, 0, sizeof fixed);
    CHECK_EQ_INT(tl_schema_add(&fixed, "a", TL_TINT64, &e), TL_OK);
    CHECK_EQ_INT(tl_schema_add(&fixed, "b", TL_TINT64, &e), TL_OK);
    opt.schema = &fixed;
    snprintf(want, sizeof want, "%s:2:12: \"x\" is not a valid int64 (column \"b\")", path);
    for (int li = 0; li < N_LIMITS; li++) {
        Outcome o;
        tl_ndjson_split_force(limits[li][0], limits[li][1]);
        run(path, &opt, VIA_SHUFFLED, false, &o);
        CHECK_EQ_STR(o.msg, want);
        outcome_free(&o);
    }
    tl_ndjson_split_force(0, 0);
    tl_schema_free(&fixed);
}

TL_TEST(test_morsel_shape)
{
    Sb in = {0};
    const char *path;
    TlReader *r = NULL;
    TlError e;
    uint64_t at = 0, prev = 0;
    int64_t line = 1, n = 0;
    for (int i = 0; i < 40000; i++) {
        sb_fmt(&in, "{\"i\":%lld,\"s\":\"some text here\"}", i);
        sb_str(&in, i % 3 ? "\n" : "\r\n");
    }
    path = tu_file("shape.ndjson", sb_text(&in), (long)in.n);
    CHECK_EQ_INT(tl_reader_open(path, NULL, NULL, &r, &e), TL_OK);
    for (;;) {
        TlMorsel m;
        bool got = false;
        CHECK_EQ_INT(tl_reader_split(r, &m, &got, &e), TL_OK);
        if (!got) break;
        CHECK_EQ_INT(m.seq, n);
        CHECK_EQ_INT(m.begin, at);
        CHECK_EQ_INT(m.line, line);
        CHECK(m.end > m.begin);
        CHECK(in.p[m.end - 1] == '\n');
        if (n == 0) CHECK(m.end - m.begin < (100 << 10));
        if (n > 0 && m.end < in.n) CHECK(m.end - m.begin >= prev);
        CHECK(m.end - m.begin <= (3 << 20));
        for (uint64_t i = m.begin; i < m.end; i++) line += in.p[i] == '\n';
        prev = m.end - m.begin;
        at = m.end;
        n++;
    }
    CHECK_EQ_INT(at, in.n);
    CHECK(n >= 4);
    tl_reader_close(r);
    /* forced rows: at most that many records a morsel */
    tl_ndjson_split_force(1000, 0);
    CHECK_EQ_INT(tl_reader_open(path, NULL, NULL, &r, &e), TL_OK);
    n = 0;
    for (;;) {
        TlMorsel m;
        bool got = false;
        int64_t lines = 0;
        CHECK_EQ_INT(tl_reader_split(r, &m, &got, &e), TL_OK);
        if (!got) break;
        for (uint64_t i = m.begin; i < m.end; i++) lines += in.p[i] == '\n';
        CHECK(lines <= 1000);
        n++;
    }
    CHECK(n >= 40);
    tl_reader_close(r);
    tl_ndjson_split_force(0, 0);
    sb_free(&in);
}

/* --------------------------------------------------------- two threads */

typedef struct Share {
    TlReader *r;
    Piece *pc;
    int n;
    int who;
} Share;

static void *decode_half(void *arg)
{
    Share *s = arg;
    TlDecoder *d = NULL;
    if (tl_decoder_new(s->r, &d, &s->pc[0].err) != TL_OK) return NULL;
    for (int i = s->who; i < s->n; i += 2)
        s->pc[i].st = tl_reader_decode(s->r, d, &s->pc[i].m, &s->pc[i].b, &s->pc[i].widen,
                                       &s->pc[i].err);
    tl_decoder_free(d);
    return NULL;
}

TL_TEST(test_two_threads)
{
    Sb in = {0}, want = {0}, got_text = {0};
    const char *path;
    TlTypeHints h;
    TlReader *r = NULL;
    TlError e;
    Piece *pc = NULL;
    int n = 0, cap = 0;
    bool bad = true;
    TlStatus st;
    for (uint64_t seed = 4242; bad; seed++) {
        in.n = 0;
        gen_input(&in, seed, 3000, false, &bad);
    }
    path = tu_file("threads.ndjson", sb_text(&in), (long)in.n);
    memset(&h, 0, sizeof h);
    tl_ndjson_split_force(0, 512);
    /* the hints of a serial run, so the threaded attempt needs no restart */
    do {
        Outcome tmp;
        memset(&tmp, 0, sizeof tmp);
        r = NULL;
        st = tl_reader_open(path, NULL, &h, &r, &e);
        if (st == TL_OK) st = read_next(r, &tmp, &e);
        tl_reader_close(r);
        outcome_free(&tmp);
    } while (st == TL_ERR_RESTART);
    CHECK_EQ_INT(st, TL_OK);
    CHECK_EQ_INT(tl_reader_open(path, NULL, &h, &r, &e), TL_OK);
    {
        TlBatch *b = NULL;
        while (tl_reader_next(r, &b, &e) == TL_OK && b) {
            sb_batch(&want, b);
            tl_batch_free(b);
        }
    }
    tl_reader_close(r);
    CHECK_EQ_INT(tl_reader_open(path, NULL, &h, &r, &e), TL_OK);
    for (;;) {
        TlMorsel m;
        bool got = false;
        CHECK_EQ_INT(tl_reader_split(r, &m, &got, &e), TL_OK);
        if (!got) break;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            pc = realloc(pc, (size_t)cap * sizeof *pc);
        }
        memset(&pc[n], 0, sizeof pc[n]);
        pc[n++].m = m;
    }
    CHECK(n > 100);
    {
        pthread_t t[2];
        Share sh[2] = {{r, pc, n, 0}, {r, pc, n, 1}};
        for (int k = 0; k < 2; k++) pthread_create(&t[k], NULL, decode_half, &sh[k]);
        for (int k = 0; k < 2; k++) pthread_join(t[k], NULL);
    }
    for (int i = 0; i < n; i++) {
        CHECK_EQ_INT(pc[i].st, TL_OK);
        CHECK(pc[i].widen == NULL);
        if (pc[i].b) sb_batch(&got_text, pc[i].b);
        tl_batch_free(pc[i].b);
    }
    CHECK_EQ_STR(sb_text(&got_text), sb_text(&want));
    CHECK(want.n > 10000);
    tl_reader_close(r);
    tl_ndjson_split_force(0, 0);
    tl_hints_free(&h);
    free(pc);
    sb_free(&in);
    sb_free(&want);
    sb_free(&got_text);
}

/* ----------------------------------------------------------- filename */

TL_TEST(test_with_filename)
{
    Sb in = {0};
    bool bad;
    const char *paths[2];
    TlReadOptions opt;
    memset(&opt, 0, sizeof opt);
    opt.with_filename = true;
    gen_input(&in, 99, 400, false, &bad);
    paths[0] = tu_file("wf.ndjson", "{\"a\":1,\"b\":\"x\"}\n{\"a\":2.5}\r\n{\"c\":true}\n", -1);
    paths[1] = tu_file("wf2.ndjson", sb_text(&in), (long)in.n);
    for (int p = 0; p < 2; p++)
        for (int li = 0; li < N_LIMITS; li++) {
            Outcome o[3];
            tl_ndjson_split_force(limits[li][0], limits[li][1]);
            run(paths[p], &opt, VIA_NEXT, li % 2 == 1, &o[0]);
            run(paths[p], &opt, VIA_SHUFFLED, li % 2 == 1, &o[1]);
            run(paths[p], &opt, VIA_TWO, li % 2 == 1, &o[2]);
            CHECK(same_attempts(&o[0], &o[1]));
            CHECK(same_attempts(&o[0], &o[2]));
            if (p == 0 && li == 0) {
                char want[1024];
                snprintf(want, sizeof want, "#filename:string,a:float64,b:string,c:bool\n"
                         "'%s'|1.0|'x'|~\n'%s'|2.5|~|~\n'%s'|~|~|T\n",
                         paths[0], paths[0], paths[0]);
                CHECK_EQ_STR(sb_text(&o[0].text), want);
            }
            if (p == 0 && li == 1) /* projected: reversed, names of even length */
                CHECK(strncmp(sb_text(&o[1].text), "#filename:string\n", 17) == 0);
            for (int k = 0; k < 3; k++) outcome_free(&o[k]);
        }
    tl_ndjson_split_force(0, 0);
    sb_free(&in);
}

TL_TEST(test_with_filename_csv)
{
    /* the wrapper follows its inner reader: it splits when CSV does */
    const char *path = tu_file("wf.csv", "a,b\n1,x\n2,y\n", -1);
    TlReadOptions opt;
    TlReader *r = NULL, *plain = NULL;
    TlError e;
    TlBatch *b = NULL;
    Sb text = {0};
    memset(&opt, 0, sizeof opt);
    CHECK_EQ_INT(tl_reader_open(path, &opt, NULL, &plain, &e), TL_OK);
    opt.with_filename = true;
    CHECK_EQ_INT(tl_reader_open(path, &opt, NULL, &r, &e), TL_OK);
    CHECK(tl_reader_can_split(r) == tl_reader_can_split(plain));
    while (tl_reader_next(r, &b, &e) == TL_OK && b) {
        sb_batch(&text, b);
        tl_batch_free(b);
    }
    {
        char want[1024];
        snprintf(want, sizeof want, "'%s'|1|'x'\n'%s'|2|'y'\n", path, path);
        CHECK_EQ_STR(sb_text(&text), want);
    }
    CHECK_EQ_INT(tl_reader_stats(r)->rows, 2);
    tl_reader_close(r);
    tl_reader_close(plain);
    sb_free(&text);
}

int main(void)
{
    tu_init();
    TL_RUN(test_known_outcomes);
    TL_RUN(test_schema_error_first_in_order);
    TL_RUN(test_morsel_shape);
    TL_RUN(test_random_inputs);
    TL_RUN(test_two_threads);
    TL_RUN(test_with_filename);
    TL_RUN(test_with_filename_csv);
    tu_cleanup();
    return tl_test_summary(__FILE__);
}
