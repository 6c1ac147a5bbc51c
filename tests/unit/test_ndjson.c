/*
 * test_ndjson.c -- the NDJSON reader and writer (formats/ndjson_read.c,
 * formats/ndjson_write.c).
 *
 * Batches hold 2 rows here (TALLY_BATCH_ROWS is set before the first
 * allocation), so restarts on a wider type or a late key and every batch
 * boundary are exercised with small inputs.  Results are rendered as text
 * by csv_test_util.h ("a:int64,b:string\n1|x\n"; ~ null, '' empty).
 */
#include "tl_test.h"
#include "csv_test_util.h"
#include "../../formats/infer.h"

static char got[1 << 16];
static TlError err;

/* Read path as the driver does: on TL_ERR_RESTART reopen with the hints.
 * *restarts counts them (may be NULL). */
static TlStatus read_all(const char *path, const TlReadOptions *opt, int *restarts)
{
    TlTypeHints h;
    TlStatus st;
    int n = 0;
    memset(&h, 0, sizeof h);
    do {
        st = tu_read(path, opt, &h, got, sizeof got, &err);
    } while (st == TL_ERR_RESTART && ++n < 50);
    tl_hints_free(&h);
    if (restarts) *restarts = n;
    return st;
}

#define READ(path) read_all((path), NULL, NULL)

TL_TEST(test_types_and_flattening)
{
    const char *p = tu_file("a.ndjson",
                            "{\"i\": 1, \"f\": 2.5, \"s\": \"x\", \"b\": true, \"n\": null,"
                            " \"o\": {\"x\": 1, \"y\": {\"z\": \"deep\"}}, \"arr\": [1, 2]}\n"
                            "{\"s\": \"2024-01-31\", \"i\": -3, \"f\": 1e3, \"b\": false}\n",
                            -1);
    CHECK_EQ_INT(READ(p), TL_OK);
    CHECK_EQ_STR(got, "i:int64,f:float64,s:string,b:bool,n:null,o.x:int64,"
                      "o.y.z:string,arr:string\n"
                      "1|2.5|x|T|~|1|deep|[1,2]\n"
                      "-3|1000.0|2024-01-31|F|~|~|~|~\n");
}

TL_TEST(test_widening)
{
    /* int then float -> float64; bool with a number -> string (its JSON
     * text); a string column takes numbers and literals as their text;
     * objects and arrays in a scalar column are their compact JSON text */
    const char *p = tu_file("w.ndjson",
                            "{\"a\":1,\"b\":true,\"c\":\"x\",\"d\":1}\n"
                            "{\"a\":2.5,\"b\":7,\"c\":1.50,\"d\":[ 1 , {\"k\" : \"v w\"} ]}\n"
                            "{\"a\":3,\"b\":false,\"c\":true}\n",
                            -1);
    int restarts = 0;
    CHECK_EQ_INT(read_all(p, NULL, &restarts), TL_OK);
    CHECK_EQ_STR(got, "a:float64,b:string,c:string,d:string\n"
                      "1.0|true|x|1\n"
                      "2.5|7|1.50|[1,{\"k\":\"v w\"}]\n"
                      "3.0|false|true|~\n");
    CHECK_EQ_INT(restarts, 0); /* the first batch holds lines 1 and 2 */
    p = tu_file("w2.ndjson", "{\"a\":1}\n{\"a\":2}\n{\"a\":2.5}\n{\"a\":\"z\"}\n", -1);
    CHECK_EQ_INT(read_all(p, NULL, &restarts), TL_OK);
    CHECK_EQ_STR(got, "a:string\n1\n2\n2.5\nz\n");
    CHECK(restarts >= 1);
}

TL_TEST(test_dates)
{
    /* strings that are all dates: date; dates and timestamps: timestamp
     * (a bare date is midnight); an escaped, offset or impossible one:
     * string */
    const char *p = tu_file("dt.ndjson",
                            "{\"d\":\"2024-01-31\",\"t\":\"2024-01-31T10:00:00.25\","
                            "\"e\":\"2024\\u002d01-01\",\"z\":\"2024-01-31 10:00:00Z\","
                            "\"x\":\"2024-02-30\"}\n"
                            "{\"d\":null,\"t\":\"2024-02-01\",\"e\":\"2024-01-02\","
                            "\"z\":\"2024-01-31\",\"x\":\"2024-02-28\"}\n",
                            -1);
    CHECK_EQ_INT(READ(p), TL_OK);
    CHECK_EQ_STR(got, "d:date,t:timestamp,e:string,z:string,x:string\n"
                      "2024-01-31|2024-01-31 10:00:00.25|2024-01-01|2024-01-31 10:00:00Z|2024-02-30\n"
                      "~|2024-02-01 00:00:00|2024-01-02|2024-01-31|2024-02-28\n");
    /* a date and a text: string, the date kept as written */
    p = tu_file("dt2.ndjson", "{\"d\":\"2024-01-01\"}\n{\"d\":\"soon\"}\n", -1);
    CHECK_EQ_INT(READ(p), TL_OK);
    CHECK_EQ_STR(got, "d:string\n2024-01-01\nsoon\n");
}

TL_TEST(test_escapes_and_unicode)
{
    const char *p = tu_file("e.ndjson",
                            "{\"s\":\"q\\\"b\\\\s\\/n\\nt\\tb\\bf\\fr\\r\",\"k\\u0041\":1}\n"
                            "{\"s\":\"\\u00e9\\u20ac\\ud83d\\ude00 caf\xc3\xa9\",\"kA\":2}\n",
                            -1);
    CHECK_EQ_INT(READ(p), TL_OK);
    CHECK_EQ_STR(got, "s:string,kA:int64\n"
                      "q\"b\\s/n\nt\tb\bf\fr\r|1\n"
                      "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 caf\xc3\xa9|2\n");
}

TL_TEST(test_numbers)
{
    const char *p = tu_file("n.ndjson",
                            "{\"big\":12345678901234567890,\"min\":-9223372036854775808,"
                            "\"max\":9223372036854775807,\"huge\":1e400,\"neg0\":-0.0,\"e\":1E-2}\n",
                            -1);
    CHECK_EQ_INT(READ(p), TL_OK);
    /* numbers no double holds exactly keep their text (formats/infer.h) */
    CHECK_EQ_STR(got, "big:string,min:int64,max:int64,huge:string,neg0:float64,e:float64\n"
                      "12345678901234567890|-9223372036854775808|9223372036854775807|"
                      "1e400|-0.0|0.01\n");
    p = tu_file("n2.ndjson", "{\"a\":9223372036854775808}\n{\"a\":-9223372036854775809}\n", -1);
    CHECK_EQ_INT(READ(p), TL_OK);
    CHECK_EQ_STR(got, "a:string\n9223372036854775808\n-9223372036854775809\n");
}

/* {"a":[[...]]} with levels brackets. */
static const char *nested(int levels)
{
    static char buf[4096];
    size_t n = 0;
    n += (size_t)sprintf(buf, "{\"a\":");
    for (int i = 0; i < levels; i++) buf[n++] = '[';
    for (int i = 0; i < levels; i++) buf[n++] = ']';
    buf[n++] = '}';
    buf[n++] = '\n';
    buf[n] = 0;
    return buf;
}

TL_TEST(test_nesting_depth)
{
    /* names have at most 8 parts: the object at the 8th part is JSON text */
    const char *p = tu_file("d.ndjson",
                            "{\"a\":{\"b\":{\"c\":{\"d\":{\"e\":{\"f\":{\"g\":{\"h\":{\"i\":1}}}}}}}},"
                            "\"x\":{\"y\":2}}\n",
                            -1);
    CHECK_EQ_INT(READ(p), TL_OK);
    CHECK_EQ_STR(got, "a.b.c.d.e.f.g.h:string,x.y:int64\n{\"i\":1}|2\n");
    /* arrays nest up to 1024 levels */
    p = tu_file("deep.ndjson", nested(1024), -1);
    CHECK_EQ_INT(READ(p), TL_OK);
    p = tu_file("deeper.ndjson", nested(1025), -1);
    CHECK_EQ_INT(READ(p), TL_ERR_DATA);
    CHECK(strstr(err.msg, "nested too deeply") != NULL);
}

TL_TEST(test_duplicates_and_empty)
{
    const char *p = tu_file("dup.ndjson",
                            "{\"a\":1,\"b\":{},\"a\":2}\n"
                            "\xef\xbb\xbf" "\n"
                            "   \r\n"
                            "{}\r\n"
                            "{\"a.b\":5,\"a\":{\"b\":6}}\n",
                            -1);
    /* a BOM is only skipped at the start: here it is a data error */
    CHECK_EQ_INT(READ(p), TL_ERR_DATA);
    p = tu_file("dup.ndjson",
                "\xef\xbb\xbf{\"a\":1,\"b\":{},\"a\":2}\n"
                "   \r\n"
                "{}\r\n"
                "{\"a.b\":5,\"a\":{\"b\":6}}",
                -1);
    CHECK_EQ_INT(READ(p), TL_OK);
    CHECK_EQ_STR(got, "a:int64,b:string,a.b:int64\n2|{}|~\n~|~|~\n~|~|6\n");
    p = tu_file("empty.ndjson", "", 0);
    CHECK_EQ_INT(READ(p), TL_OK);
    CHECK_EQ_STR(got, "\n");
    p = tu_file("blank.ndjson", "\n\n  \n", -1);
    CHECK_EQ_INT(READ(p), TL_OK);
    CHECK_EQ_STR(got, "\n");
}

TL_TEST(test_late_keys)
{
    /* keys after the first batch: the run restarts and the new columns
     * come after the first batch's, in order of appearance */
    const char *p = tu_file("late.ndjson",
                            "{\"a\":1}\n{\"a\":2}\n{\"c\":\"x\",\"a\":3}\n{\"b\":true}\n"
                            "{\"d\":{\"e\":1}}\n",
                            -1);
    int restarts = 0;
    CHECK_EQ_INT(read_all(p, NULL, &restarts), TL_OK);
    CHECK_EQ_STR(got, "a:int64,c:string,b:bool,d.e:int64\n"
                      "1|~|~|~\n2|~|~|~\n3|x|~|~\n~|~|T|~\n~|~|~|1\n");
    CHECK(restarts >= 1);
    /* keys added in many batches: one restart finds them all */
    p = tu_file("many.ndjson",
                "{\"a\":1}\n{\"a\":2}\n{\"b\":3}\n{\"a\":4}\n{\"c\":5}\n{\"a\":6}\n"
                "{\"d\":7}\n", -1);
    CHECK_EQ_INT(read_all(p, NULL, &restarts), TL_OK);
    CHECK_EQ_STR(got, "a:int64,b:int64,c:int64,d:int64\n1|~|~|~\n2|~|~|~\n~|3|~|~\n"
                      "4|~|~|~\n~|~|5|~\n6|~|~|~\n~|~|~|7\n");
    CHECK_EQ_INT(restarts, 1);
    /* without hints a late key is a data error */
    CHECK_EQ_INT(tu_read(p, NULL, NULL, got, sizeof got, &err), TL_ERR_DATA);
    CHECK(strstr(err.msg, "\"b\"") != NULL);
}

static void check_error(const char *text, const char *want)
{
    const char *p = tu_file("data.ndjson", text, -1);
    char full[512];
    CHECK_EQ_INT(READ(p), TL_ERR_DATA);
    snprintf(full, sizeof full, "%s:%s", p, want);
    CHECK_EQ_STR(err.msg, full);
}

TL_TEST(test_errors)
{
    check_error("{\"a\":1}\n{\"a\":2}\n{\"a\": x}\n",
                "3:7: invalid value (expected a string, number, object, array, true, "
                "false or null)");
    check_error("{\"a\":\"\\ud800\"}\n", "1:7: high surrogate not followed by a low "
                                          "surrogate \\u escape");
    check_error("{\"a\":\"\\ud800\\u0041\"}\n", "1:7: high surrogate not followed by a "
                                                "low surrogate \\u escape");
    check_error("{\"a\":\"\\udc00\"}\n", "1:7: lone low surrogate in a \\u escape");
    check_error("{\"a\":\"\\u12g4\"}\n", "1:7: invalid \\u escape (4 hex digits expected)");
    check_error("{\"a\":\"\\x\"}\n", "1:7: invalid escape in a string");
    check_error("{\"a\":\"\x01\"}\n", "1:7: control character in a string (must be "
                                      "escaped)");
    check_error("{\"\xc3\xa9\":\"\xc3\xa9\xff\"}\n", "1:8: invalid UTF-8 in a string");
    check_error("{\"a\":\"\xed\xa0\x80\"}\n", "1:7: invalid UTF-8 in a string");
    check_error("{\"a\":\"x\n\"}\n", "1:8: unterminated string (the line ends here)");
    check_error("{\"a\":01}\n", "1:7: ',' or '}' expected");
    check_error("{\"a\":1.}\n", "1:8: invalid number (a digit expected after '.')");
    check_error("{\"a\":1e}\n", "1:8: invalid number (a digit expected in the exponent)");
    check_error("{\"a\":-x}\n", "1:7: invalid number (a digit expected)");
    check_error("{\"a\":+1}\n", "1:6: invalid value (expected a string, number, object, "
                                "array, true, false or null)");
    check_error("{\"a\":tru}\n", "1:6: invalid value (expected a string, number, object, "
                                 "array, true, false or null)");
    check_error("{\"a\":1,}\n", "1:8: a key (a string in double quotes) expected");
    check_error("{a:1}\n", "1:2: a key (a string in double quotes) expected");
    check_error("{\"a\" 1}\n", "1:6: ':' expected after the key");
    check_error("{\"a\":1} 2\n", "1:9: unexpected text after the object (one object per "
                                 "line)");
    check_error("{\"a\":1}{\"a\":2}\n", "1:8: unexpected text after the object (one "
                                        "object per line)");
    /* a .ndjson file starting with '[' names --from json (formats/json_doc.c) */
    check_error("[1]\n", "1:1: a JSON array, not NDJSON (NDJSON holds one object per "
                         "line; --from json reads JSON documents)");
    check_error("{\"a\":1}\n[1]\n", "2:1: an array where an object was expected (NDJSON "
                                   "holds one object per line)");
    check_error("  7\n", "1:3: a JSON object expected (NDJSON holds one object per line)");
    check_error("{\"a\":[1,2}\n", "1:10: ',' or ']' expected");
    check_error("{\"a\":{\"b\":1]}\n", "1:12: ',' or '}' expected");
    check_error("{\"a\":[{\"b\" 1}]}\n", "1:12: ':' expected after the key");
    check_error("{\"a\":1\n", "1:7: ',' or '}' expected (the line ends here)");
    check_error("{\"a\":", "1:6: a value expected (the line ends here)");
    check_error("{\"a\":[", "1:7: a value expected (the line ends here)");
    check_error("{\"a\":\"x", "1:8: unterminated string (the line ends here)");
    check_error("{\"a\":\"\\", "1:8: unterminated string (the line ends here)");
}

TL_TEST(test_schema_fixed)
{
    const char *p = tu_file("s.ndjson",
                            "{\"d\":\"2024-01-31\",\"t\":\"2024-01-31 10:00:00\",\"i\":1}\n"
                            "{\"d\":null,\"t\":\"2024-01-31T10:00:00.5\",\"i\":2}\n",
                            -1);
    TlSchema fixed = {0};
    TlReadOptions o = {0};
    TlError e2;
    CHECK_EQ_INT(tl_schema_add(&fixed, "d", TL_TDATE, &e2), TL_OK);
    CHECK_EQ_INT(tl_schema_add(&fixed, "t", TL_TTIMESTAMP, &e2), TL_OK);
    CHECK_EQ_INT(tl_schema_add(&fixed, "i", TL_TFLOAT64, &e2), TL_OK);
    CHECK_EQ_INT(tl_schema_add(&fixed, "z", TL_TSTRING, &e2), TL_OK);
    o.schema = &fixed;
    CHECK_EQ_INT(read_all(p, &o, NULL), TL_OK);
    CHECK_EQ_STR(got, "d:date,t:timestamp,i:float64,z:string\n"
                      "2024-01-31|2024-01-31 10:00:00|1.0|~\n"
                      "~|2024-01-31 10:00:00.5|2.0|~\n");
    p = tu_file("s2.ndjson", "{\"d\":\"2024-01-31\"}\n{\"d\":\"2024-01-31\"}\n"
                             "{\"d\":  \"2024-02-30\"}\n", -1);
    CHECK_EQ_INT(read_all(p, &o, NULL), TL_ERR_DATA);
    {
        char want[512];
        snprintf(want, sizeof want, "%s:3:8: \"2024-02-30\" is not a valid date "
                 "(column \"d\")", p);
        CHECK_EQ_STR(err.msg, want);
    }
    p = tu_file("s3.ndjson", "{\"i\":true}\n", -1);
    CHECK_EQ_INT(read_all(p, &o, NULL), TL_ERR_DATA);
    {
        char want[512];
        snprintf(want, sizeof want, "%s:1:6: true is not a valid float64 (column \"i\")", p);
        CHECK_EQ_STR(err.msg, want);
    }
    tl_schema_free(&fixed);
}

TL_TEST(test_projection_stats)
{
    const char *p = tu_file("p.ndjson",
                            "{\"a\":1,\"b\":\"x\",\"c\":2.5}\n"
                            "{\"a\":2,\"b\":\"a long string over twelve\",\"c\":3}\n"
                            "{\"c\":4,\"b\":\"y\"}\n",
                            -1);
    TlReader *r = NULL;
    TlReadOptions o = {0};
    int cols[2] = {2, 1};
    TlBatch *b;
    int64_t rows = 0;
    got[0] = 0;
    CHECK_EQ_INT(tl_reader_open(p, &o, NULL, &r, &err), TL_OK);
    CHECK_EQ_INT(tl_reader_project(r, cols, 2, &err), TL_OK);
    while (tl_reader_next(r, &b, &err) == TL_OK && b) {
        CHECK_EQ_INT(b->n_cols, 2);
        tu_batch(got, sizeof got, b);
        rows += b->n_rows;
        tl_batch_free(b);
    }
    CHECK_EQ_INT(rows, 3);
    CHECK_EQ_STR(got, "2.5|x\n3.0|a long string over twelve\n4.0|y\n");
    CHECK_EQ_INT(tl_reader_stats(r)->rows, 3);
    CHECK_EQ_INT(tl_reader_stats(r)->converted[0], 0);
    CHECK_EQ_INT(tl_reader_stats(r)->converted[1], 3);
    CHECK_EQ_INT(tl_reader_stats(r)->converted[2], 3);
    CHECK_EQ_INT(tl_reader_project(r, (int[]){5}, 1, &err), TL_ERR_USAGE);
    tl_reader_close(r);
    CHECK_EQ_INT(READ("/nonexistent/x.ndjson"), TL_ERR_IO);
}

/* Read path and write it as NDJSON to out; returns the status. */
static TlStatus to_ndjson(const char *path, const char *out, TlError *e)
{
    TlTypeHints h;
    TlStatus st;
    TlSink *sink = NULL;
    int attempts = 0;
    memset(&h, 0, sizeof h);
    st = tl_sink_open(NULL, out, &sink, e);
    while (st == TL_OK) {
        TlReader *r = NULL;
        TlWriter *w = NULL;
        st = tl_reader_open(path, NULL, &h, &r, e);
        if (st == TL_OK) st = tl_writer_open(sink, "ndjson", tl_reader_schema(r), NULL, &w, e);
        while (st == TL_OK) {
            TlBatch *b = NULL;
            st = tl_reader_next(r, &b, e);
            if (st != TL_OK || !b) break;
            st = tl_writer_write(w, b, e);
            tl_batch_free(b);
        }
        if (st == TL_OK) st = tl_writer_finish(w, e);
        tl_writer_free(w);
        tl_reader_close(r);
        if (st != TL_ERR_RESTART || ++attempts > 50) break;
        st = tl_sink_reset(sink, e);
    }
    if (st == TL_OK) st = tl_sink_commit(sink, e);
    tl_sink_close(sink);
    tl_hints_free(&h);
    return st;
}

TL_TEST(test_writer)
{
    char out[512], text[4096];
    const char *p = tu_file("wr.csv",
                            "i,f,s,b,d,t,n\n"
                            "1,2.5,\"q\"\"\\\x01\t\xc3\xa9\",true,2024-01-31,2024-01-31 12:00:00.5,\n"
                            ",inf,\xff\xfe ok,false,,,\n"
                            "3,nan,,,1999-12-31,,\n"
                            "4,-0.0,\"\",,,,\n",
                            -1);
    snprintf(out, sizeof out, "%s/out.ndjson", tu_dir);
    CHECK_EQ_INT(to_ndjson(p, out, &err), TL_OK);
    CHECK(tu_slurp(out, text, sizeof text) > 0);
    CHECK_EQ_STR(text,
                 "{\"i\":1,\"f\":2.5,\"s\":\"q\\\"\\\\\\u0001\\t\xc3\xa9\",\"b\":true,"
                 "\"d\":\"2024-01-31\",\"t\":\"2024-01-31 12:00:00.5\",\"n\":null}\n"
                 "{\"i\":null,\"f\":null,\"s\":\"\xef\xbf\xbd\xef\xbf\xbd ok\",\"b\":false,"
                 "\"d\":null,\"t\":null,\"n\":null}\n"
                 "{\"i\":3,\"f\":null,\"s\":null,\"b\":null,\"d\":\"1999-12-31\",\"t\":null,"
                 "\"n\":null}\n"
                 "{\"i\":4,\"f\":-0.0,\"s\":\"\",\"b\":null,\"d\":null,\"t\":null,\"n\":null}\n");
    /* NDJSON -> NDJSON keeps every value */
    p = tu_file("rt.ndjson",
                "{\"a b\":\"x\\u0000y\",\"c\\\"\":[1, 2],\"e\":1e-7,\"f\":{\"g\":\"\\ud83d\\ude00\"}}\n"
                "{}\n",
                -1);
    CHECK_EQ_INT(to_ndjson(p, out, &err), TL_OK);
    CHECK(tu_slurp(out, text, sizeof text) > 0);
    CHECK_EQ_STR(text, "{\"a b\":\"x\\u0000y\",\"c\\\"\":\"[1,2]\",\"e\":1e-07,"
                       "\"f.g\":\"\xf0\x9f\x98\x80\"}\n"
                       "{\"a b\":null,\"c\\\"\":null,\"e\":null,\"f.g\":null}\n");
    /* no columns: one {} per row */
    p = tu_file("none.ndjson", "{}\n{}\n", -1);
    CHECK_EQ_INT(to_ndjson(p, out, &err), TL_OK);
    CHECK(tu_slurp(out, text, sizeof text) > 0);
    CHECK_EQ_STR(text, "{}\n{}\n");
}

TL_TEST(test_oom)
{
    const char *p = tu_file("oom.ndjson",
                            "{\"a\":1,\"b\":\"x\\n\",\"c\":{\"d\":[1]}}\n"
                            "{\"a\":2.5,\"b\":\"a long string over twelve\",\"e\":true}\n"
                            "{\"a\":3,\"c\":{\"d\":null}}\n",
                            -1);
    char out[512];
    bool ok = false;
    snprintf(out, sizeof out, "%s/oom-out.ndjson", tu_dir);
    for (uint64_t n = 1; n < 5000 && !ok; n++) {
        TlStatus st;
        tl_alloc_fail_at(n);
        st = to_ndjson(p, out, &err);
        tl_alloc_fail_at(0);
        if (st == TL_OK) ok = true;
        else CHECK(st == TL_ERR_OOM || st == TL_ERR_IO);
    }
    CHECK(ok);
}

int main(void)
{
    setenv("TALLY_BATCH_ROWS", "2", 1);
    tu_init();
    TL_RUN(test_types_and_flattening);
    TL_RUN(test_widening);
    TL_RUN(test_dates);
    TL_RUN(test_escapes_and_unicode);
    TL_RUN(test_numbers);
    TL_RUN(test_nesting_depth);
    TL_RUN(test_duplicates_and_empty);
    TL_RUN(test_late_keys);
    TL_RUN(test_errors);
    TL_RUN(test_schema_fixed);
    TL_RUN(test_projection_stats);
    TL_RUN(test_writer);
    TL_RUN(test_oom);
    tu_cleanup();
    return tl_test_summary(__FILE__);
}
