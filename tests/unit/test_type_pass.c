/*
 * test_type_pass.c -- the type pass (formats/type_pass.c) against the
 * restarts it stands in for: with morsels of four records, random CSV
 * files whose columns mix every inferred shape (short and long integers,
 * floats, dates, timestamps, bools, nulls, text, leading zeros) are read
 * to the end restarting as a run does, and the types they end with must
 * be those the type pass finds from one fresh open, with which the read
 * then never restarts and gives the same values.  Data errors are the
 * read's; --schema columns are left alone; threads do not matter.  Quoted
 * values with line breaks make guessed morsel ends fail (split again).
 */
#include "tl_test.h"
#include "../../formats/infer.h"
#include "../../lib/core/pool.h"
#include "csv_test_util.h"

static char got[1 << 16], want[1 << 16];
static TlError err;

/* Read path to its end into out (schema line, then rows). */
static TlStatus read_all(const char *path, const TlReadOptions *o, TlTypeHints *h,
                         char *out, size_t cap)
{
    TlReader *r = NULL;
    TlStatus st;
    out[0] = '\0';
    st = tl_reader_open(path, o, h, &r, &err);
    if (st != TL_OK) return st;
    tu_schema(out, cap, tl_reader_schema(r));
    while (st == TL_OK) {
        TlBatch *b = NULL;
        st = tl_reader_next(r, &b, &err);
        if (st != TL_OK || !b) break;
        tu_batch(out, cap, b);
        tl_batch_free(b);
    }
    tl_reader_close(r);
    return st;
}

/* Read with restarts, as lib/run does, until a read needs none. */
static TlStatus read_restarting(const char *path, const TlReadOptions *o, TlTypeHints *h,
                                char *out, size_t cap)
{
    TlStatus st;
    int k = 0;
    while ((st = read_all(path, o, h, out, cap)) == TL_ERR_RESTART && k++ < 32) {
    }
    return st;
}

static TlStatus pass(const char *path, const TlReadOptions *o, TlTypeHints *h)
{
    TlReader *r = NULL;
    int64_t rows, bytes, morsels;
    TlStatus st = tl_reader_open(path, o, h, &r, &err);
    if (st != TL_OK) return st;
    CHECK(tl_reader_can_type_pass(r));
    st = tl_reader_type_pass(r, h, &rows, &bytes, &morsels, &err);
    tl_reader_close(r);
    return st;
}

static uint64_t rng = 88172645463325252ull;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* A value of the column's usual shape, now and then another. */
static const char *value(unsigned shape, char *buf)
{
    static const char *odd[] = {"", "1.5", "1152921504606846977", "2024-01-02",
                                "2024-01-02 10:00:00", "true", "x", "007", "+5",
                                "12345678901234567890", "0.1234567890123456789",
                                "-0", "1e3", "nan", "\"5\"", "\"a,\nb\"",
                                "\"x\"\"y\""};
    if (rnd(17) == 0) shape = 100 + rnd(sizeof odd / sizeof odd[0]);
    switch (shape) {
    case 0: snprintf(buf, 32, "%u", rnd(100000)); return buf;
    case 1: snprintf(buf, 32, "%u.%u", rnd(1000), 1 + rnd(9)); return buf;
    case 2: snprintf(buf, 32, "2024-0%u-1%u", 1 + rnd(9), rnd(10)); return buf;
    case 3: return rnd(2) ? "true" : "False";
    case 4: return "";
    default: return odd[shape - 100];
    }
}

TL_TEST(test_random_files_match_restarts)
{
    long n = tl_test_scaled(400, 8);
    char buf[4][32];
    for (long f = 0; f < n; f++) {
        char text[8192];
        size_t len = 0;
        unsigned shape[4], rows = 1 + rnd(40);
        TlTypeHints ha = {0}, hb = {0};
        TlReadOptions o = {0};
        const char *p;
        len += (size_t)snprintf(text + len, sizeof text - len, "a,b,c,d\n");
        for (int c = 0; c < 4; c++) shape[c] = rnd(5);
        for (unsigned r = 0; r < rows; r++) {
            for (int c = 0; c < 4; c++) value(shape[c], buf[c]);
            len += (size_t)snprintf(text + len, sizeof text - len, "%s,%s,%s,%s\n",
                                    value(shape[0], buf[0]), value(shape[1], buf[1]),
                                    value(shape[2], buf[2]), value(shape[3], buf[3]));
        }
        p = tu_file("r.csv", text, (long)len);
        CHECK_EQ_INT(read_restarting(p, &o, &ha, want, sizeof want), TL_OK);
        CHECK_EQ_INT(pass(p, &o, &hb), TL_OK);
        CHECK_EQ_INT(read_all(p, &o, &hb, got, sizeof got), TL_OK); /* no restart */
        CHECK_EQ_STR(got, want);
        if (strcmp(got, want) != 0) fprintf(stderr, "file:\n%s", text);
        tl_hints_free(&ha);
        tl_hints_free(&hb);
    }
}

TL_TEST(test_long_integer_then_float_is_string)
{
    /* an exact int64 that is no exact float64, then a float in a later
     * morsel: float64 cannot hold it, so a string (with its note) */
    const char *p = tu_file("l.csv", "w\n1152921504606846977\n2\n3\n4\n5\n6\n0.5\n", -1);
    TlTypeHints h = {0};
    TlReadOptions o = {0};
    const TlInferNote *note;
    CHECK_EQ_INT(pass(p, &o, &h), TL_OK);
    CHECK_EQ_INT(h.cols.fields[tl_schema_find(&h.cols, "w")].type, TL_TSTRING);
    note = tl_hint_find_note(&h, "w");
    CHECK(note != NULL);
    if (note) CHECK_EQ_INT(note->line, 2);
    tl_hints_free(&h);
}

TL_TEST(test_errors_are_the_reads)
{
    const char *p = tu_file("e.csv", "a,b\n1,2\n3,4\n5,6\n7,8\n9\n11,12\n", -1);
    TlTypeHints h = {0};
    TlReadOptions o = {0};
    char msg[TL_ERRMSG_MAX];
    CHECK_EQ_INT(read_restarting(p, &o, &h, want, sizeof want), TL_ERR_DATA);
    snprintf(msg, sizeof msg, "%s", err.msg);
    tl_hints_free(&h);
    memset(&h, 0, sizeof h);
    CHECK_EQ_INT(pass(p, &o, &h), TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, msg);
    tl_hints_free(&h);
}

TL_TEST(test_schema_columns_left_alone)
{
    const char *p = tu_file("s.csv", "a,b\n1,2\n3,4\n5,6\n7,8\nx,y\n", -1);
    TlTypeHints h = {0};
    TlSchema fixed = {0};
    TlReadOptions o = {0};
    CHECK_EQ_INT(tl_schema_add(&fixed, "a", TL_TSTRING, &err), TL_OK);
    o.schema = &fixed;
    CHECK_EQ_INT(pass(p, &o, &h), TL_OK);
    CHECK_EQ_INT(tl_schema_find(&h.cols, "a"), -1);
    CHECK_EQ_INT(h.cols.fields[tl_schema_find(&h.cols, "b")].type, TL_TSTRING);
    tl_hints_free(&h);
    tl_schema_free(&fixed);
}

int main(void)
{
    setenv("TALLY_BATCH_ROWS", "4", 1);
    tl_pool_configure(3);
    tu_init();
    TL_RUN(test_random_files_match_restarts);
    TL_RUN(test_long_integer_then_float_is_string);
    TL_RUN(test_errors_are_the_reads);
    TL_RUN(test_schema_columns_left_alone);
    tu_cleanup();
    return tl_test_summary(__FILE__);
}
