/*
 * test_csv_restart.c -- the restart protocol of format.h with batches of
 * two rows (TALLY_BATCH_ROWS is set before anything reads it): a later
 * value that does not fit widens the type in the hints and returns
 * TL_ERR_RESTART; reopening with the hints gives the wide type from the
 * first row on.
 */
#include "tl_test.h"
#include "../../formats/infer.h"
#include "../../formats/compress.h"
#include "csv_test_util.h"

static char got[1 << 16];
static TlError err;

/* Read path to the end with the given projection (NULL: all columns). */
static TlStatus read_proj(const char *path, const TlReadOptions *o, TlTypeHints *h,
                          const int *cols, int n_cols)
{
    TlReader *r = NULL;
    TlStatus st;
    got[0] = '\0';
    st = tl_reader_open(path, o, h, &r, &err);
    if (st != TL_OK) return st;
    if (cols) st = tl_reader_project(r, cols, n_cols, &err);
    tu_schema(got, sizeof got, tl_reader_schema(r));
    while (st == TL_OK) {
        TlBatch *b = NULL;
        st = tl_reader_next(r, &b, &err);
        if (st != TL_OK || !b) break;
        tu_batch(got, sizeof got, b);
        tl_batch_free(b);
    }
    tl_reader_close(r);
    return st;
}

static TlType hint_of(const TlTypeHints *h, const char *name)
{
    int i = tl_schema_find(&h->cols, name);
    return i < 0 ? TL_TYPE_COUNT : h->cols.fields[i].type;
}

TL_TEST(test_int_to_float)
{
    const char *p = tu_file("w.csv", "a,b\n1,x\n2,y\n3.5,z\n4,w\n", -1);
    TlTypeHints h = {0};
    TlReadOptions o = {0};
    CHECK_EQ_INT(tl_batch_rows(), 2);
    CHECK_EQ_INT(read_proj(p, &o, &h, NULL, 0), TL_ERR_RESTART);
    CHECK_EQ_INT(hint_of(&h, "a"), TL_TFLOAT64);
    CHECK_EQ_INT(read_proj(p, &o, &h, NULL, 0), TL_OK);
    CHECK_EQ_STR(got, "a:float64,b:string\n1.0|x\n2.0|y\n3.5|z\n4.0|w\n");
    tl_hints_free(&h);
}

TL_TEST(test_null_column_and_several)
{
    /* b is all null in the first batch; c widens in the same batch */
    const char *p = tu_file("n.csv", "a,b,c\n1,,1\n2,,2\n3,q,x\n4,,5\n5,7,6\n", -1);
    TlTypeHints h = {0};
    TlReadOptions o = {0};
    CHECK_EQ_INT(read_proj(p, &o, &h, NULL, 0), TL_ERR_RESTART);
    CHECK_EQ_INT(hint_of(&h, "b"), TL_TSTRING);
    CHECK_EQ_INT(hint_of(&h, "c"), TL_TSTRING); /* both at once */
    CHECK_EQ_INT(h.cols.n_fields, 2);
    CHECK_EQ_INT(read_proj(p, &o, &h, NULL, 0), TL_OK);
    CHECK_EQ_STR(got, "a:int64,b:string,c:string\n1|~|1\n2|~|2\n3|q|x\n4|~|5\n5|7|6\n");
    tl_hints_free(&h);
}

TL_TEST(test_unprojected_never_restarts)
{
    const char *p = tu_file("u.csv", "a,b\n1,2\n3,4\n5,oops\n", -1);
    TlTypeHints h = {0};
    TlReadOptions o = {0};
    int cols[1] = {0};
    CHECK_EQ_INT(read_proj(p, &o, &h, cols, 1), TL_OK);
    CHECK_EQ_STR(got, "a:int64,b:int64\n1\n3\n5\n");
    CHECK_EQ_INT(h.cols.n_fields, 0);
    /* the ragged check still sees unprojected fields in later batches */
    p = tu_file("u2.csv", "a,b\n1,2\n3,4\n5\n", -1);
    CHECK_EQ_INT(read_proj(p, &o, &h, cols, 1), TL_ERR_DATA);
}

TL_TEST(test_date_widening_and_hint_start)
{
    const char *p = tu_file("d.csv", "d\n2024-01-01\n2024-01-02\n2024-01-03 04:05:06\n", -1);
    TlTypeHints h = {0};
    TlReadOptions o = {0};
    CHECK_EQ_INT(read_proj(p, &o, &h, NULL, 0), TL_ERR_RESTART);
    CHECK_EQ_INT(hint_of(&h, "d"), TL_TTIMESTAMP);
    CHECK_EQ_INT(read_proj(p, &o, &h, NULL, 0), TL_OK);
    CHECK_EQ_STR(got, "d:timestamp\n2024-01-01 00:00:00\n2024-01-02 00:00:00\n"
                      "2024-01-03 04:05:06\n");
    tl_hints_free(&h);
}

TL_TEST(test_schema_fixed_later_batch)
{
    char want[1024];
    const char *p = tu_file("s.csv", "id,amount\n1,5\n2,6\n3,\"7\"\"\"\n", -1);
    TlSchema s = {0};
    TlTypeHints h = {0};
    TlReadOptions o = {0};
    tl_schema_add(&s, "amount", TL_TINT64, &err);
    o.schema = &s;
    CHECK_EQ_INT(read_proj(p, &o, &h, NULL, 0), TL_ERR_DATA);
    snprintf(want, sizeof want, "%s:4:2: \"7\\\"\" is not a valid int64 (column \"amount\")", p);
    CHECK_EQ_STR(err.msg, want);
    tl_schema_free(&s);
}

TL_TEST(test_stdin_reread)
{
    /* "-" is read once a run (its context's inputs) and served again after
     * a restart */
    const char *p = tu_file("in.csv", "a\n1\n2\nx\n", -1);
    TlTypeHints h = {0};
    TlReadOptions o = {0};
    TlCtx cx = {0};
    TlError ierr;
    int saved = dup(0);
    tl_tuning_read(&cx.tuning);
    CHECK(tl_inputs_new(&cx.inputs, &ierr) == TL_OK);
    o.ctx = &cx;
    FILE *f = fopen(p, "rb");
    if (!f) return;
    dup2(fileno(f), 0);
    fclose(f);
    CHECK_EQ_INT(read_proj("-", &o, &h, NULL, 0), TL_ERR_RESTART);
    CHECK_EQ_INT(read_proj("-", &o, &h, NULL, 0), TL_OK);
    CHECK_EQ_STR(got, "a:string\n1\n2\nx\n");
    dup2(saved, 0);
    close(saved);
    tl_hints_free(&h);
    p = tu_file("in2.csv", "a,b\n1,2,3\n", -1);
    tl_inputs_free(cx.inputs); /* a new run */
    CHECK(tl_inputs_new(&cx.inputs, &ierr) == TL_OK);
    f = fopen(p, "rb");
    saved = dup(0);
    dup2(fileno(f), 0);
    fclose(f);
    CHECK_EQ_INT(read_proj("-", &o, NULL, NULL, 0), TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, "<stdin>:2: expected 2 fields, found 3 (CSV, delimiter ','; "
                          "--ragged skip drops such rows)");
    dup2(saved, 0);
    close(saved);
    tl_inputs_free(cx.inputs);
}

int main(void)
{
    setenv("TALLY_BATCH_ROWS", "2", 1);
    tu_init();
    TL_RUN(test_int_to_float);
    TL_RUN(test_null_column_and_several);
    TL_RUN(test_unprojected_never_restarts);
    TL_RUN(test_date_widening_and_hint_start);
    TL_RUN(test_schema_fixed_later_batch);
    TL_RUN(test_stdin_reread);
    tu_cleanup();
    return tl_test_summary(__FILE__);
}
