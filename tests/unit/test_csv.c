/*
 * test_csv.c -- the CSV/TSV reader and writer (formats/csv_read.c,
 * formats/csv_write.c) and tl_format_from_path.  Restarts across batches
 * are in test_csv_restart.c (it needs a tiny batch size from the start);
 * the sink is in test_sink.c.
 */
#include "tl_test.h"
#include "csv_test_util.h"
#include "../../formats/csv_dialect.h"

static char got[1 << 16];
static TlError err;

#define READ(path, opt) tu_read((path), (opt), NULL, got, sizeof got, &err)

TL_TEST(test_basic_types)
{
    const char *p = tu_file("basic.csv",
                            "i,f,s,b,d,t,n\n"
                            "1,2.5,x,true,2024-01-31,2024-01-31 12:00:00,\n"
                            "-3,1e3,hello,FALSE,1999-12-31,2024-01-31T01:02:03.5,\n",
                            -1);
    CHECK_EQ_INT(READ(p, NULL), TL_OK);
    CHECK_EQ_STR(got, "i:int64,f:float64,s:string,b:bool,d:date,t:timestamp,n:null\n"
                      "1|2.5|x|T|2024-01-31|2024-01-31 12:00:00|~\n"
                      "-3|1000.0|hello|F|1999-12-31|2024-01-31 01:02:03.5|~\n");
}

TL_TEST(test_inference_mixes)
{
    const char *p = tu_file("mix.csv",
                            "a,b,c,d,e\n"
                            "1,2024-01-01,true,007,1\n"
                            "2.5,2024-01-01 10:00:00,1,8,x\n",
                            -1);
    CHECK_EQ_INT(READ(p, NULL), TL_OK);
    /* "007" keeps its leading zeros: d is a string */
    CHECK_EQ_STR(got, "a:float64,b:timestamp,c:string,d:string,e:string\n"
                      "1.0|2024-01-01 00:00:00|true|007|1\n"
                      "2.5|2024-01-01 10:00:00|1|8|x\n");
}

TL_TEST(test_quoting)
{
    const char *p = tu_file("quote.csv",
                            "a,b\n"
                            "\"x,y\",\"say \"\"hi\"\"\"\n"
                            "\"\",\"a\r\nb\"\n"
                            "\"c\rd\",\"e\nf\"\n"
                            "\"a long quoted \"\"value\"\" here\",\"5\"\n",
                            -1);
    CHECK_EQ_INT(READ(p, NULL), TL_OK);
    CHECK_EQ_STR(got, "a:string,b:string\n"
                      "x,y|say \"hi\"\n"
                      "''|a\r\nb\n"
                      "c\rd|e\nf\n"
                      "a long quoted \"value\" here|5\n");
}

TL_TEST(test_line_ends)
{
    const char *crlf = tu_file("crlf.csv", "a,b\r\n1,2\r\n3,4\r\n", -1);
    const char *cr = tu_file("cr.csv", "a,b\r1,2\r3,4", -1);
    const char *mixed = tu_file("mixed.csv", "a,b\n1,2\r\n3,4\r5,6", -1);
    CHECK_EQ_INT(READ(crlf, NULL), TL_OK);
    CHECK_EQ_STR(got, "a:int64,b:int64\n1|2\n3|4\n");
    CHECK_EQ_INT(READ(cr, NULL), TL_OK);
    CHECK_EQ_STR(got, "a:int64,b:int64\n1|2\n3|4\n");
    CHECK_EQ_INT(READ(mixed, NULL), TL_OK);
    CHECK_EQ_STR(got, "a:int64,b:int64\n1|2\n3|4\n5|6\n");
}

TL_TEST(test_bom_and_tsv)
{
    const char *p = tu_file("bom.csv", "\xEF\xBB\xBFname,v\nx,1\n", -1);
    const char *t = tu_file("t.tsv", "a\tb c\n1,5\tx y\n", -1);
    TlReadOptions o = {0};
    CHECK_EQ_INT(READ(p, NULL), TL_OK);
    CHECK_EQ_STR(got, "name:string,v:int64\nx|1\n");
    CHECK_EQ_INT(READ(t, NULL), TL_OK);
    CHECK_EQ_STR(got, "a:string,b c:string\n1,5|x y\n");
    o.delimiter = ';';
    p = tu_file("semi.txt", "a;b\n1;2\n", -1);
    CHECK_EQ_INT(READ(p, &o), TL_OK);
    CHECK_EQ_STR(got, "a:int64,b:int64\n1|2\n");
}

TL_TEST(test_null_text)
{
    const char *p = tu_file("null.csv", "a,b\nNA,x\n2,\"NA\"\n,NA\n", -1);
    TlReadOptions o = {0};
    o.null_text = "NA";
    CHECK_EQ_INT(READ(p, &o), TL_OK);
    CHECK_EQ_STR(got, "a:int64,b:string\n~|x\n2|NA\n~|~\n");
    CHECK_EQ_INT(READ(p, NULL), TL_OK);
    CHECK_EQ_STR(got, "a:string,b:string\nNA|x\n2|NA\n~|NA\n");
}

TL_TEST(test_headers)
{
    const char *p = tu_file("nohdr.csv", "1,x\n2,y\n", -1);
    const char *q = tu_file("dup.csv", "a,,a,\"\",a_1,a\n1,2,3,4,5,6\n", -1);
    TlReadOptions o = {0};
    o.no_header = true;
    CHECK_EQ_INT(READ(p, &o), TL_OK);
    CHECK_EQ_STR(got, "column1:int64,column2:string\n1|x\n2|y\n");
    CHECK_EQ_INT(READ(q, NULL), TL_OK);
    /* renames skip every name the header holds (a_1 stays the real one) */
    CHECK_EQ_STR(got, "a:int64,column2:int64,a_2:int64,column4:int64,a_1:int64,"
                      "a_3:int64\n1|2|3|4|5|6\n");
}

TL_TEST(test_empty_lines)
{
    const char *multi = tu_file("blank.csv", "a,b\n\n1,2\n\r\n\n3,4\n\n\n", -1);
    const char *single = tu_file("single.csv", "a\n1\n\n\"\"\n2\n\n\n", -1);
    const char *last = tu_file("last.csv", "a,b\n1,2", -1);
    const char *empty = tu_file("empty.csv", "", 0);
    const char *hdr = tu_file("hdr.csv", "a,b\n", -1);
    CHECK_EQ_INT(READ(multi, NULL), TL_OK);
    CHECK_EQ_STR(got, "a:int64,b:int64\n1|2\n3|4\n");
    CHECK_EQ_INT(READ(single, NULL), TL_OK);
    CHECK_EQ_STR(got, "a:string\n1\n~\n''\n2\n");
    CHECK_EQ_INT(READ(last, NULL), TL_OK);
    CHECK_EQ_STR(got, "a:int64,b:int64\n1|2\n");
    CHECK_EQ_INT(READ(empty, NULL), TL_OK);
    CHECK_EQ_STR(got, "\n");
    CHECK_EQ_INT(READ(hdr, NULL), TL_OK);
    CHECK_EQ_STR(got, "a:null,b:null\n");
}

TL_TEST(test_errors)
{
    char want[1024];
    const char *p = tu_file("ragged.csv", "a,b,c\n1,2,3\n\"x\ny\",2,3\n1,2,3,4\n", -1);
    CHECK_EQ_INT(READ(p, NULL), TL_ERR_DATA);
    snprintf(want, sizeof want, "%s: expected 3 fields, found 4", p);
    /* line 5: the quoted newline on line 3 makes the 4th record start there */
    snprintf(want, sizeof want, "%s:5: expected 3 fields, found 4 (CSV, delimiter ','; "
             "--ragged skip drops such rows)", p);
    CHECK_EQ_STR(err.msg, want);

    p = tu_file("few.csv", "a,b,c\n1,2\n", -1);
    CHECK_EQ_INT(READ(p, NULL), TL_ERR_DATA);
    snprintf(want, sizeof want, "%s:2: expected 3 fields, found 2 (CSV, delimiter ','; "
             "--ragged pad or skip reads such rows)", p);
    CHECK_EQ_STR(err.msg, want);

    p = tu_file("unterm.csv", "a,b\n1,2\n3,\"abc\n4,5\n", -1);
    CHECK_EQ_INT(READ(p, NULL), TL_ERR_DATA);
    snprintf(want, sizeof want, "%s:3:3: unterminated quoted field" TL_CSV_QUOTE_HINT, p);
    CHECK_EQ_STR(err.msg, want);

    p = tu_file("after.csv", "a,b\n1,2\n\"ab\"c,2\n", -1);
    CHECK_EQ_INT(READ(p, NULL), TL_ERR_DATA);
    snprintf(want, sizeof want, "%s:3:5: unexpected character after closing quote"
             TL_CSV_QUOTE_HINT, p);
    CHECK_EQ_STR(err.msg, want);

    /* columns count characters, not bytes */
    p = tu_file("utf8.csv", "a,b\n\xC3\xA9t\xC3\xA9,\"x\"y\n", -1);
    CHECK_EQ_INT(READ(p, NULL), TL_ERR_DATA);
    snprintf(want, sizeof want, "%s:2:8: unexpected character after closing quote"
             TL_CSV_QUOTE_HINT, p);
    CHECK_EQ_STR(err.msg, want);

    CHECK_EQ_INT(READ("/nonexistent/x.csv", NULL), TL_ERR_IO);
    CHECK_EQ_STR(err.msg, "cannot open \"/nonexistent/x.csv\": No such file or directory");
    CHECK_EQ_INT(READ(tu_dir, NULL), TL_ERR_IO);
    snprintf(want, sizeof want, "cannot open \"%s\": Is a directory", tu_dir);
    CHECK_EQ_STR(err.msg, want);
    p = tu_file("x.arrow", "", 0);
    CHECK_EQ_INT(READ(p, NULL), TL_ERR_USAGE);
    /* .parquet has its reader (formats/parquet/): an empty file is bad data */
    p = tu_file("x.parquet", "", 0);
    CHECK_EQ_INT(READ(p, NULL), TL_ERR_DATA);
    snprintf(want, sizeof want, "%s: not a Parquet file (0 bytes, too short for one)", p);
    CHECK_EQ_STR(err.msg, want);
}

TL_TEST(test_schema_override)
{
    char want[1024];
    TlSchema s = {0};
    TlReadOptions o = {0};
    const char *p = tu_file("schema.csv", "id,amount\n1,5\n2,abc\n", -1);
    const char *q = tu_file("schema2.csv", "id,amount\n1,5\n2,7\n", -1);
    CHECK_EQ_INT(tl_schema_add(&s, "amount", TL_TINT64, &err), TL_OK);
    o.schema = &s;
    CHECK_EQ_INT(READ(p, &o), TL_ERR_DATA);
    snprintf(want, sizeof want, "%s:3:2: \"abc\" is not a valid int64 (column \"amount\")", p);
    CHECK_EQ_STR(err.msg, want);
    s.fields[0].type = TL_TSTRING;
    CHECK_EQ_INT(READ(q, &o), TL_OK);
    CHECK_EQ_STR(got, "id:int64,amount:string\n1|5\n2|7\n");
    s.fields[0].type = TL_TFLOAT64;
    CHECK_EQ_INT(READ(q, &o), TL_OK);
    CHECK_EQ_STR(got, "id:int64,amount:float64\n1|5.0\n2|7.0\n");
    tl_schema_free(&s);
    CHECK_EQ_INT(tl_schema_add(&s, "amout", TL_TINT64, &err), TL_OK);
    CHECK_EQ_INT(tu_read(q, &o, NULL, got, sizeof got, &err), TL_ERR_USAGE);
    snprintf(want, sizeof want, "--schema: no column \"amout\" in %s (did you mean \"amount\"?)", q);
    CHECK_EQ_STR(err.msg, want);
    tl_schema_free(&s);
}

TL_TEST(test_projection_stats)
{
    const char *p = tu_file("proj.csv", "a,b,c\n1,x,2.5\n2,y,3.5\n3,z,\n", -1);
    TlReader *r = NULL;
    TlReadOptions o = {0};
    TlBatch *b = NULL;
    int cols[2] = {2, 0};
    const TlReaderStats *st;
    CHECK_EQ_INT(tl_reader_open(p, &o, NULL, &r, &err), TL_OK);
    if (!r) return;
    CHECK_EQ_INT(tl_reader_project(r, cols, 2, &err), TL_OK);
    CHECK_EQ_INT(tl_reader_next(r, &b, &err), TL_OK);
    CHECK(b != NULL);
    if (b) {
        got[0] = '\0';
        tu_schema(got, sizeof got, b->schema);
        tu_batch(got, sizeof got, b);
        CHECK_EQ_STR(got, "c:float64,a:int64\n2.5|1\n3.5|2\n~|3\n");
        tl_batch_free(b);
    }
    CHECK_EQ_INT(tl_reader_next(r, &b, &err), TL_OK);
    CHECK(b == NULL);
    st = tl_reader_stats(r);
    CHECK_EQ_INT(st->rows, 3);
    CHECK_EQ_INT(st->batches, 1);
    CHECK_EQ_INT(st->bytes, (int64_t)strlen("a,b,c\n1,x,2.5\n2,y,3.5\n3,z,\n"));
    CHECK_EQ_INT(st->converted[0], 3);
    CHECK_EQ_INT(st->converted[1], 0);
    CHECK_EQ_INT(st->converted[2], 3);
    cols[0] = 3;
    CHECK_EQ_INT(tl_reader_project(r, cols, 1, &err), TL_ERR_USAGE);
    /* an empty projection still counts rows and checks every record */
    tl_reader_close(r);
    p = tu_file("proj2.csv", "a,b\n1,2\n3\n", -1);
    CHECK_EQ_INT(tl_reader_open(p, &o, NULL, &r, &err), TL_ERR_DATA);
    p = tu_file("proj3.csv", "a,b\n1,2\n3,4\n", -1);
    CHECK_EQ_INT(tl_reader_open(p, &o, NULL, &r, &err), TL_OK);
    if (!r) return;
    CHECK_EQ_INT(tl_reader_project(r, NULL, 0, &err), TL_OK);
    CHECK_EQ_INT(tl_reader_next(r, &b, &err), TL_OK);
    CHECK(b && b->n_rows == 2 && b->n_cols == 0);
    tl_batch_free(b);
    tl_reader_close(r);
}

TL_TEST(test_long_strings)
{
    /* long views point into the file; escaped ones are copied */
    const char *p = tu_file("long.csv",
                            "s\n"
                            "exactly12chr\n"
                            "thirteen char\n"
                            "\"quoted but plain text\"\n"
                            "\"has \"\"escaped\"\" quotes inside\"\n"
                            "\"a\"\"b\"\n",
                            -1);
    TlReader *r = NULL;
    TlBatch *b = NULL;
    TlReadOptions o = {0};
    CHECK_EQ_INT(tl_reader_open(p, &o, NULL, &r, &err), TL_OK);
    if (!r) return;
    CHECK_EQ_INT(tl_reader_next(r, &b, &err), TL_OK);
    tl_reader_close(r); /* the batch must outlive the reader */
    if (!b) return;
    got[0] = '\0';
    tu_batch(got, sizeof got, b);
    CHECK_EQ_STR(got, "exactly12chr\nthirteen char\nquoted but plain text\n"
                      "has \"escaped\" quotes inside\na\"b\n");
    CHECK_EQ_INT(b->cols[0]->n_data, 2);
    tl_batch_free(b);
}

TL_TEST(test_many_batches)
{
    /* 70000 rows: more than one default batch */
    static char buf[70000 * 12 + 16];
    size_t n = 0;
    TlReader *r = NULL;
    TlReadOptions o = {0};
    int64_t rows = 0, sum = 0, batches = 0;
    n += (size_t)sprintf(buf, "k,v\n");
    for (int i = 0; i < 70000; i++) n += (size_t)sprintf(buf + n, "%d,s%d\n", i, i % 7);
    const char *p = tu_file("big.csv", buf, (long)n);
    CHECK_EQ_INT(tl_reader_open(p, &o, NULL, &r, &err), TL_OK);
    if (!r) return;
    for (;;) {
        TlBatch *b = NULL;
        if (tl_reader_next(r, &b, &err) != TL_OK || !b) break;
        for (int64_t i = 0; i < b->n_rows; i++) sum += tl_array_i64(b->cols[0])[i];
        rows += b->n_rows;
        batches++;
        tl_batch_free(b);
    }
    CHECK_EQ_INT(rows, 70000);
    CHECK_EQ_INT(sum, (int64_t)70000 * 69999 / 2);
    CHECK(batches >= 2);
    tl_reader_close(r);
}

/* ----------------------------------------------------------- writer */

static TlStatus write_csv(const char *out_path, const char *format, const TlSchema *s,
                          TlBatch *b)
{
    TlSink *sink = NULL;
    TlWriter *w = NULL;
    TlWriteOptions wo = {.header = true};
    TlStatus st = tl_sink_open(NULL, out_path, &sink, &err);
    if (st == TL_OK) st = tl_writer_open(sink, format, s, &wo, &w, &err);
    if (st == TL_OK && b) st = tl_writer_write(w, b, &err);
    if (st == TL_OK) st = tl_writer_finish(w, &err);
    if (st == TL_OK) st = tl_sink_commit(sink, &err);
    tl_writer_free(w);
    tl_sink_close(sink);
    return st;
}

TL_TEST(test_writer_round_trip)
{
    const char *src = tu_file("rt.csv",
                              "\"na,me\",\"q\"\"t\",plain\n"
                              "\"a,b\",\"say \"\"hi\"\"\",\n"
                              "\"\",\"line\nbreak\",x\n"
                              ",\"cr\rhere\",\" spaced \"\n",
                              -1);
    char out_path[512], text[4096];
    TlReader *r = NULL;
    TlBatch *b = NULL;
    TlReadOptions o = {0};
    char first[4096];
    snprintf(out_path, sizeof out_path, "%s/rt_out.csv", tu_dir);
    CHECK_EQ_INT(tl_reader_open(src, &o, NULL, &r, &err), TL_OK);
    if (!r) return;
    CHECK_EQ_INT(tl_reader_next(r, &b, &err), TL_OK);
    CHECK_EQ_INT(write_csv(out_path, "csv", tl_reader_schema(r), b), TL_OK);
    tl_batch_free(b);
    tl_reader_close(r);
    tu_slurp(out_path, text, sizeof text);
    CHECK_EQ_STR(text, "\"na,me\",\"q\"\"t\",plain\n"
                       "\"a,b\",\"say \"\"hi\"\"\",\n"
                       "\"\",\"line\nbreak\",x\n"
                       ",\"cr\rhere\", spaced \n");
    /* reading the output back gives the same values */
    CHECK_EQ_INT(READ(src, NULL), TL_OK);
    memcpy(first, got, sizeof first);
    CHECK_EQ_INT(READ(out_path, NULL), TL_OK);
    CHECK_EQ_STR(got, first);
}

TL_TEST(test_writer_types)
{
    const char *src = tu_file("wt.csv",
                              "i,f,b,d,t,n\n"
                              "1,71,true,2024-01-31,2024-01-31 03:04:05.500,\n"
                              ",0.1,,,,\n"
                              "-9,1e16,false,1970-01-01,1970-01-01,\n",
                              -1);
    char out_path[512], text[4096];
    TlReader *r = NULL;
    TlBatch *b = NULL;
    TlReadOptions o = {0};
    snprintf(out_path, sizeof out_path, "%s/wt_out.tsv", tu_dir);
    CHECK_EQ_INT(tl_reader_open(src, &o, NULL, &r, &err), TL_OK);
    if (!r) return;
    CHECK_EQ_INT(tl_reader_next(r, &b, &err), TL_OK);
    CHECK_EQ_INT(write_csv(out_path, "csv", tl_reader_schema(r), b), TL_OK);
    tu_slurp(out_path, text, sizeof text);
    CHECK_EQ_STR(text, "i,f,b,d,t,n\n"
                       "1,71.0,true,2024-01-31,2024-01-31 03:04:05.5,\n"
                       ",0.1,,,,\n"
                       "-9,1e+16,false,1970-01-01,1970-01-01 00:00:00,\n");
    CHECK_EQ_INT(write_csv(out_path, "tsv", tl_reader_schema(r), b), TL_OK);
    tu_slurp(out_path, text, sizeof text);
    CHECK_EQ_STR(text, "i\tf\tb\td\tt\tn\n"
                       "1\t71.0\ttrue\t2024-01-31\t2024-01-31 03:04:05.5\t\n"
                       "\t0.1\t\t\t\t\n"
                       "-9\t1e+16\tfalse\t1970-01-01\t1970-01-01 00:00:00\t\n");
    tl_batch_free(b);
    tl_reader_close(r);
    CHECK_EQ_INT(write_csv(out_path, "xml", NULL, NULL), TL_ERR_USAGE);
}

TL_TEST(test_writer_sliced)
{
    /* arrays with offsets (slices) and a string needing an escape in TSV */
    TlSchema s = {0};
    TlBuilder bi, bs;
    TlBatch *b;
    char out_path[512], text[4096];
    snprintf(out_path, sizeof out_path, "%s/sl_out.tsv", tu_dir);
    tl_schema_add(&s, "n", TL_TINT64, &err);
    tl_schema_add(&s, "s", TL_TSTRING, &err);
    tl_builder_init(&bi, TL_TINT64);
    tl_builder_init(&bs, TL_TSTRING);
    for (int i = 0; i < 5; i++) {
        char v[64];
        int n = sprintf(v, i == 3 ? "tab\there %d and a long tail" : "v%d", i);
        tl_builder_append_i64(&bi, i);
        if (i == 2) tl_builder_append_null(&bs);
        else tl_builder_append_str(&bs, v, (size_t)n);
    }
    b = tl_batch_new(&s, 2, 3);
    {
        TlArray *a = tl_builder_finish(&bi), *c = tl_builder_finish(&bs);
        b->cols[0] = tl_array_slice(a, 2, 3);
        b->cols[1] = tl_array_slice(c, 2, 3);
        tl_array_release(a);
        tl_array_release(c);
    }
    CHECK_EQ_INT(write_csv(out_path, "tsv", &s, b), TL_OK);
    tu_slurp(out_path, text, sizeof text);
    CHECK_EQ_STR(text, "n\ts\n2\t\n3\ttab\\there 3 and a long tail\n4\tv4\n");
    tl_batch_free(b);
    tl_builder_free(&bi);
    tl_builder_free(&bs);
    tl_schema_free(&s);
}

TL_TEST(test_format_from_path)
{
    const char *comp = "x";
    CHECK_EQ_STR(tl_format_from_path("a/b.CSV", &comp), "csv");
    CHECK(comp == NULL);
    CHECK_EQ_STR(tl_format_from_path("b.tsv.gz", &comp), "tsv");
    CHECK_EQ_STR(comp, "gz");
    CHECK_EQ_STR(tl_format_from_path("b.jsonl.ZST", &comp), "ndjson");
    CHECK_EQ_STR(comp, "zst");
    CHECK_EQ_STR(tl_format_from_path("b.ndjson", NULL), "ndjson");
    CHECK_EQ_STR(tl_format_from_path("b.JSON.gz", NULL), "json");
    CHECK(tl_format_from_path("b.geojson", NULL) == NULL);
    CHECK_EQ_STR(tl_format_from_path("b.parquet", NULL), "parquet");
    CHECK_EQ_STR(tl_format_from_path("b.feather", NULL), "arrow");
    CHECK_EQ_STR(tl_format_from_path("b.arrow", NULL), "arrow");
    CHECK(tl_format_from_path("b.txt", &comp) == NULL);
    CHECK(tl_format_from_path("-", NULL) == NULL);
    CHECK(tl_format_from_path(".gz", NULL) == NULL);
}

int main(void)
{
    tu_init();
    TL_RUN(test_basic_types);
    TL_RUN(test_inference_mixes);
    TL_RUN(test_quoting);
    TL_RUN(test_line_ends);
    TL_RUN(test_bom_and_tsv);
    TL_RUN(test_null_text);
    TL_RUN(test_headers);
    TL_RUN(test_empty_lines);
    TL_RUN(test_errors);
    TL_RUN(test_schema_override);
    TL_RUN(test_projection_stats);
    TL_RUN(test_long_strings);
    TL_RUN(test_many_batches);
    TL_RUN(test_writer_round_trip);
    TL_RUN(test_writer_types);
    TL_RUN(test_writer_sliced);
    TL_RUN(test_format_from_path);
    tu_cleanup();
    return tl_test_summary(__FILE__);
}
