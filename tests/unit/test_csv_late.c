/*
 * test_csv_late.c -- late materialization in the CSV reader (format.h,
 * "late materialization"): tl_reader_decode_early + tl_reader_decode_rest
 * against tl_reader_decode.
 *
 * For seeded random inputs (int, float and string columns with nulls,
 * quoted and escaped fields, long strings, and now and then a value that
 * misfits its column: "2.5" or "+5" in an int column, "abc" or "1e3" in a
 * float column, so some morsels restart and some only look doubtful), a
 * few forced morsel sizes, random early columns and random row selections
 * (none, all, some), every morsel decoded both ways must give the same
 * status, message and widened types, and the selected rows of the plain
 * batch must be exactly the late batch's rows.  Also: --schema columns
 * (errors on unselected rows are still reported), a format without late
 * decoding refuses it, and decode_rest without decode_early is an error.
 */
#include "tl_test.h"
#include "../../formats/infer.h"
#include "csv_test_util.h"
#include "tl_sb.h"
#include "../../formats/fmt_impl.h"
#include "split_force.h"

static uint64_t rng = 88172645463325252ULL;

static uint32_t rnd(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng >> 33);
}

/* Rows of b (sel[0..n) of them, or all when sel is NULL) as text. */
static void sb_rows(Sb *s, const TlBatch *b, const uint32_t *sel, int64_t n)
{
    if (!b) return;
    if (!sel) n = b->n_rows;
    for (int64_t j = 0; j < n; j++) {
        int64_t r = sel ? sel[j] : j;
        for (int c = 0; c < b->n_cols; c++) {
            if (c) sb_put(s, "|", 1);
            sb_str(s, tl_type_name(b->cols[c]->type));
            sb_put(s, ":", 1);
            if (!tl_array_valid(b->cols[c], r)) sb_put(s, "~", 1);
            else sb_value(s, b->cols[c], r);
        }
        sb_put(s, "\n", 1);
    }
}

static void sb_widen(Sb *s, const TlSchema *w)
{
    for (int f = 0; w && f < w->n_fields; f++) {
        sb_str(s, w->fields[f].name);
        sb_put(s, ":", 1);
        sb_str(s, tl_type_name(w->fields[f].type));
        sb_put(s, ",", 1);
    }
}

static void widen_free(TlSchema *w)
{
    if (w) {
        tl_schema_free(w);
        tl_free(w);
    }
}

static int64_t morsels_checked, restarts_seen, errors_seen, rows_selected;

/* Check every morsel of path (opened with o and hints h) both ways. */
static void check_file(const char *path, const TlReadOptions *o, TlTypeHints *h)
{
    TlReader *r = NULL;
    TlDecoder *d1 = NULL, *d2 = NULL;
    TlError err = {0};
    int n_proj;
    CHECK_EQ_INT(tl_reader_open(path, o, h, &r, &err), TL_OK);
    if (!r) return;
    CHECK(tl_reader_can_late(r));
    n_proj = tl_reader_schema(r)->n_fields;
    CHECK_EQ_INT(tl_decoder_new(r, &d1, &err), TL_OK);
    CHECK_EQ_INT(tl_decoder_new(r, &d2, &err), TL_OK);
    for (;;) {
        TlMorsel m;
        bool got = false, early[16];
        TlBatch *pb = NULL, *eb = NULL, *lb = NULL;
        TlSchema *pw = NULL, *ew = NULL, *lw = NULL;
        TlError pe = {0}, le = {0};
        TlStatus ps, ls;
        uint32_t *sel;
        int64_t n_sel = 0;
        Sb a = {0}, b = {0};
        CHECK_EQ_INT(tl_reader_split(r, &m, &got, &err), TL_OK);
        if (!got) break;
        morsels_checked++;
        ps = tl_reader_decode(r, d1, &m, &pb, &pw, &pe);
        for (int k = 0; k < 16; k++) early[k] = rnd() % 3 == 0;
        ls = tl_reader_decode_early(r, d2, &m, early, n_proj, rnd() % 2 ? -1 : 5,
                                    &eb, &ew, &le);
        if (ls == TL_OK && eb) {
            int mode = (int)(rnd() % 5);
            sel = malloc(((size_t)eb->n_rows + 1) * sizeof *sel);
            for (int64_t i = 0; i < eb->n_rows; i++)
                if (mode == 3 || (mode == 2 && rnd() % 5 == 0) ||
                    (mode == 1 && rnd() % 2 == 0) || (mode == 4 && rnd() % 40 == 0))
                    sel[n_sel++] = (uint32_t)i;
            if (mode == 3 && rnd() % 2) n_sel = -1;
            for (int k = 0; k < n_proj; k++)
                if (early[k] && k < eb->n_cols) CHECK(eb->cols[k] != NULL);
            ls = tl_reader_decode_rest(r, d2, eb, sel, n_sel, &lb, &lw, &le);
            if (ls == TL_OK) {
                if (n_sel == 0) CHECK(lb == NULL);
                else CHECK(lb != NULL);
            }
            if (ps == TL_OK && ls == TL_OK) {
                sb_rows(&a, pb, n_sel < 0 ? NULL : sel, n_sel);
                sb_rows(&b, lb, NULL, 0);
                CHECK_EQ_STR(sb_text(&a), sb_text(&b));
                rows_selected += n_sel < 0 ? eb->n_rows : n_sel;
            }
            free(sel);
        } else if (ls == TL_OK) {
            CHECK(pb == NULL);
            tl_reader_decode_end(r, d2);
        }
        if (ls != TL_OK && !ew) ew = lw, lw = NULL;
        CHECK_EQ_INT(ls, ps);
        if (ps != TL_OK) {
            Sb wa = {0}, wb = {0};
            CHECK_EQ_STR(le.msg, pe.msg);
            sb_widen(&wa, pw);
            sb_widen(&wb, ew ? ew : lw);
            CHECK_EQ_STR(sb_text(&wa), sb_text(&wb));
            if (ps == TL_ERR_RESTART) {
                restarts_seen++;
                CHECK_EQ_INT(tl_reader_widen(r, pw, &err), TL_OK);
            } else {
                errors_seen++;
            }
            sb_free(&wa);
            sb_free(&wb);
        }
        sb_free(&a);
        sb_free(&b);
        tl_batch_free(pb);
        tl_batch_free(eb);
        tl_batch_free(lb);
        widen_free(pw);
        widen_free(ew);
        widen_free(lw);
        if (ps != TL_OK) break;
    }
    tl_decoder_free(d1);
    tl_decoder_free(d2);
    tl_reader_close(r);
}

/* A random CSV: i, j (adjacent ints), f (float), s (string), g (small
 * int), t (string). */
static void gen(Sb *s, int rows, int bad)
{
    sb_str(s, "i,j,f,s,g,t\n");
    for (int i = 0; i < rows; i++) {
        char buf[128];
        uint32_t x = rnd();
        if (x % 11 == 0) snprintf(buf, sizeof buf, ",");
        else snprintf(buf, sizeof buf, "%d,", (int)(rnd() % 200000) - 100000);
        if (bad && i > 20 && rnd() % 200 == 0)
            snprintf(buf, sizeof buf, "%s,", rnd() % 2 ? "2.5" : "+5");
        if (x % 13 == 1) snprintf(buf, sizeof buf, "\"%u\",", rnd() % 100);
        sb_str(s, buf);
        if (x % 5 == 3) snprintf(buf, sizeof buf, "-%u,", rnd() % 100);
        else if (x % 17 == 4) snprintf(buf, sizeof buf, ",");
        else snprintf(buf, sizeof buf, "%u,", rnd() % (x % 3 ? 1000u : 1000000000u));
        if (bad && i > 20 && rnd() % 300 == 0) snprintf(buf, sizeof buf, "1x,");
        sb_str(s, buf);
        if (x % 7 == 2) buf[0] = 0;
        else snprintf(buf, sizeof buf, "%u.%02u", rnd() % 1000, rnd() % 100);
        if (bad && i > 20 && rnd() % 200 == 0) snprintf(buf, sizeof buf, "%s", rnd() % 2 ? "abc" : "1e3");
        sb_str(s, buf);
        sb_str(s, ",");
        switch (rnd() % 6) {
        case 0: sb_str(s, "\"line\nbreak\""); break;
        case 1: sb_str(s, "\"say \"\"hi\"\" to everyone here\""); break;
        case 2: sb_str(s, "a longer plain string value"); break;
        case 3: break;
        case 4: sb_str(s, "\"\""); break;
        default: snprintf(buf, sizeof buf, "w%u", rnd() % 50); sb_str(s, buf);
        }
        snprintf(buf, sizeof buf, ",%u,t%u\n", rnd() % 5, rnd() % 1000);
        sb_str(s, buf);
    }
}

TL_TEST(test_random)
{
    static const int64_t rows[] = {1, 3, 17, 0};
    for (int round = 0; round < 24; round++) {
        Sb s = {0};
        char name[32];
        const char *path;
        gen(&s, 50 + (int)(rnd() % 400), round % 3 != 0);
        snprintf(name, sizeof name, "r%d.csv", round);
        path = tu_file(name, s.p, (long)s.n);
        for (int li = 0; li < 4; li++) {
            TlTypeHints h = {0};
            tl_csv_split_force(rows[li], li == 2 ? 300 : 0);
            /* the restart loop, checked at each attempt */
            for (int attempt = 0; attempt < 6; attempt++) {
                int64_t before = restarts_seen;
                check_file(path, NULL, &h);
                if (restarts_seen == before) break;
            }
            tl_hints_free(&h);
        }
        sb_free(&s);
    }
    tl_csv_split_force(0, 0);
    CHECK(morsels_checked > 500);
    CHECK(restarts_seen > 5);
    CHECK(rows_selected > 1000);
}

TL_TEST(test_schema_fixed)
{
    TlSchema fixed = {0};
    TlReadOptions o = {0};
    TlError err = {0};
    const char *path = tu_file("s.csv", "a,c\n1,2\n2,3\n3,oops\n4,5\n", -1);
    CHECK_EQ_INT(tl_schema_add(&fixed, "c", TL_TINT64, &err), TL_OK);
    o.schema = &fixed;
    tl_csv_split_force(2, 0);
    errors_seen = 0;
    for (int i = 0; i < 20; i++) check_file(path, &o, NULL);
    CHECK(errors_seen >= 20);
    tl_csv_split_force(0, 0);
    tl_schema_free(&fixed);
}

TL_TEST(test_misuse)
{
    TlReader *r = NULL;
    TlDecoder *d = NULL;
    TlError err = {0};
    TlBatch *b = NULL, *eb = NULL;
    TlSchema *w = NULL;
    uint32_t sel[1] = {0};
    const char *path = tu_file("m.csv", "a,b\n1,2\n", -1);
    const char *nd = tu_file("m.ndjson", "{\"a\":1}\n", -1);
    CHECK_EQ_INT(tl_reader_open(path, NULL, NULL, &r, &err), TL_OK);
    CHECK_EQ_INT(tl_decoder_new(r, &d, &err), TL_OK);
    eb = tl_batch_new(tl_reader_schema(r), 2, 1);
    CHECK_EQ_INT(tl_reader_decode_rest(r, d, eb, sel, 1, &b, &w, &err), TL_ERR_DATA);
    CHECK(strstr(err.msg, "internal error") != NULL);
    CHECK(b == NULL);
    tl_reader_decode_end(r, d); /* nothing open: harmless */
    tl_batch_free(eb);
    tl_decoder_free(d);
    tl_reader_close(r);
    r = NULL;
    CHECK_EQ_INT(tl_reader_open(nd, NULL, NULL, &r, &err), TL_OK);
    CHECK(!tl_reader_can_late(r));
    {
        TlMorsel m = {0, 0, 1, 1};
        bool early[1] = {true};
        CHECK_EQ_INT(tl_reader_decode_early(r, NULL, &m, early, 1, -1, &b, &w, &err),
                     TL_ERR_USAGE);
        CHECK(b == NULL && w == NULL);
    }
    tl_reader_close(r);
}

int main(void)
{
    tu_init();
    TL_RUN(test_random);
    TL_RUN(test_schema_fixed);
    TL_RUN(test_misuse);
    fprintf(stderr, "morsels: %lld, restarts: %lld, errors: %lld, rows selected: %lld\n",
            (long long)morsels_checked, (long long)restarts_seen,
            (long long)errors_seen, (long long)rows_selected);
    tu_cleanup();
    return tl_test_summary(__FILE__);
}
