/*
 * test_registry.c -- the table of formats (formats/registry.c): names and
 * aliases, the lists messages print, an input's format by --from, suffix,
 * read-only suffix and magic bytes, and the writer dispatch's errors.
 */
#include "../../formats/registry.h"
#include "tl_test.h"

#include <stdio.h>
#include <unistd.h>

TL_TEST(names)
{
    CHECK_EQ_STR(tl_format_named("CSV")->name, "csv");
    CHECK_EQ_STR(tl_format_named("jsonl")->name, "ndjson");
    CHECK_EQ_STR(tl_format_named("Feather")->name, "arrow");
    CHECK_EQ_STR(tl_format_named("table")->name, "table");
    CHECK(tl_format_named("xml") == NULL);
    CHECK(tl_format_named("") == NULL);
    /* a format's canonical name is one of its names */
    CHECK(tl_format_named("parquet")->open != NULL);
    CHECK(tl_format_named("parquet")->binary);
    CHECK(tl_format_named("arrow")->open == NULL);
    CHECK(tl_format_named("table")->open == NULL && tl_format_named("table")->write);
}

TL_TEST(lists)
{
    char b[256];
    CHECK_EQ_STR(tl_format_list(b, sizeof b, TL_FORMATS_WRITE, ", "),
                 "csv, tsv, ndjson, jsonl, json, table, parquet");
    CHECK_EQ_STR(tl_format_list(b, sizeof b, TL_FORMATS_READ | TL_FORMATS_TEXT, ", "),
                 "csv, tsv, ndjson, jsonl, json");
    CHECK_EQ_STR(tl_format_list(b, sizeof b, TL_FORMATS_READ, ", "),
                 "csv, tsv, ndjson, jsonl, json, parquet");
    CHECK_EQ_STR(tl_format_list(b, sizeof b,
                                TL_FORMATS_WRITE | TL_FORMATS_TEXT | TL_FORMATS_SUFFIXES, " "),
                 ".csv .tsv .ndjson .jsonl .json");
    CHECK_EQ_STR(tl_format_list(b, sizeof b,
                                TL_FORMATS_WRITE | TL_FORMATS_BINARY | TL_FORMATS_SUFFIXES, " "),
                 ".parquet");
    CHECK_EQ_STR(tl_format_list(b, sizeof b, TL_FORMATS_BINARY | TL_FORMATS_SUFFIXES, " "),
                 ".parquet .arrow .feather");
    /* cut at a whole word when the buffer is short */
    CHECK_EQ_STR(tl_format_list(b, 12, TL_FORMATS_WRITE, ", "), "csv, tsv");
}

/* The format tl_format_for_input picks for path with --from `from`. */
static const char *input_format(const char *path, const char *from)
{
    TlReadOptions o = {0};
    const TlFormat *f = NULL;
    static TlError e; /* its message outlives the call */
    o.from = from;
    if (tl_format_for_input(path, &o, &f, &e) != TL_OK) return e.msg;
    return f->name;
}

TL_TEST(inputs)
{
    char dir[] = "/tmp/tally-registry-XXXXXX", path[128];
    FILE *fp;
    CHECK(mkdtemp(dir) != NULL);
    CHECK_EQ_STR(input_format("a/b.TSV.gz", NULL), "tsv");
    CHECK_EQ_STR(input_format("b.jsonl.zst", NULL), "ndjson");
    CHECK_EQ_STR(input_format("b.geojson.gz", NULL), "json");
    CHECK_EQ_STR(input_format("b.feather", NULL), "arrow");
    CHECK_EQ_STR(input_format("b.csv", "ndjson"), "ndjson");
    CHECK_EQ_STR(input_format("b.csv", "table"),
                 "--from: unknown format \"table\" (tally reads csv, tsv, ndjson, jsonl, json, "
                 "parquet)");
    /* no suffix of a format: magic bytes, else CSV (a missing file too:
     * opening it says what is wrong) */
    snprintf(path, sizeof path, "%s/p.dat", dir);
    fp = fopen(path, "wb");
    CHECK(fp != NULL);
    fputs("PAR1", fp);
    fclose(fp);
    CHECK_EQ_STR(input_format(path, NULL), "parquet");
    CHECK_EQ_STR(input_format(path, "csv"), "csv");
    fp = fopen(path, "wb");
    fputs("PAR", fp);
    fclose(fp);
    CHECK_EQ_STR(input_format(path, NULL), "csv");
    unlink(path);
    CHECK_EQ_STR(input_format(path, NULL), "csv");
    rmdir(dir);
}

TL_TEST(writers)
{
    TlWriter *w = (TlWriter *)&w;
    TlError e;
    CHECK_EQ_INT(tl_writer_open(NULL, "xml", NULL, NULL, &w, &e), TL_ERR_USAGE);
    CHECK(w == NULL);
    CHECK_EQ_STR(e.msg, "--to: unknown format \"xml\" (tally writes csv, tsv, ndjson, jsonl, "
                        "json, table, parquet)");
    CHECK_EQ_INT(tl_writer_open(NULL, "feather", NULL, NULL, &w, &e), TL_ERR_USAGE);
    CHECK_EQ_STR(e.msg, "writing the arrow format is not supported yet");
}

int main(void)
{
    TL_RUN(names);
    TL_RUN(lists);
    TL_RUN(inputs);
    TL_RUN(writers);
    return tl_test_summary(__FILE__);
}
