/*
 * test_spec.c -- the JSON pipeline reader (lib/dsl/spec.c): the man page's
 * example, every step kind and option, origins (JSON pointers), and the
 * error paths with their exact messages.  Pipeline files are written to a
 * scratch folder.
 */
#include "../../lib/core/core.h"
#include "../../lib/tally.h"
#include "tl_test.h"

#include <stdlib.h>
#include <unistd.h>

static char dir[256];
static char path[512];
static TallySpec spec;
static TallyError err;

/* Write text to dir/name and read it as a pipeline; returns the status. */
static int load_as(const char *name, const char *text)
{
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) return -100;
    fwrite(text, 1, strlen(text), f);
    fclose(f);
    tally_spec_free(&spec);
    memset(&spec, 0, sizeof spec);
    memset(&err, 0, sizeof err);
    return tally_spec_from_json(path, &spec, &err);
}

static int load(const char *text) { return load_as("p.json", text); }

/* The error message with the "<path>: " prefix replaced by "p.json: ". */
static const char *msg(void)
{
    static char buf[4200];
    size_t n = strlen(path);
    if (strncmp(err.message, path, n) == 0)
        snprintf(buf, sizeof buf, "p.json%s", err.message + n);
    else
        snprintf(buf, sizeof buf, "%s", err.message);
    return buf;
}

/* Load text expecting exit 2 and an empty spec; returns the message. */
static const char *load_err(const char *text)
{
    int rc = load(text);
    if (rc != 2 || err.exit_code != 2) {
        fprintf(stderr, "expected exit 2 for %s, got %d (%s)\n", text, rc, err.message);
        return "NO ERROR";
    }
    if (spec.n_steps != 0 || spec.steps != NULL || spec.n_inputs != 0)
        return "SPEC NOT CLEARED";
    return msg();
}

TL_TEST(test_cli_example)
{
    int rc = load("{\n"
                  "  \"inputs\": [\"sales.csv\"],\n"
                  "  \"steps\": [\n"
                  "    {\"filter\": \"amount > 100 and region != 'test'\"},\n"
                  "    {\"group_by\": [\"region\"], \"agg\": {\"total\": \"sum(amount)\", \"n\": \"count()\"}},\n"
                  "    {\"sort\": [\"total desc\"]},\n"
                  "    {\"limit\": 10}\n"
                  "  ],\n"
                  "  \"output\": \"top_regions.csv\"\n"
                  "}\n");
    CHECK_EQ_INT(rc, 0);
    if (rc) {
        fprintf(stderr, "%s\n", err.message);
        return;
    }
    CHECK_EQ_INT(spec.n_inputs, 1);
    CHECK_EQ_STR(spec.inputs[0], "sales.csv");
    CHECK_EQ_STR(spec.output, "top_regions.csv");
    CHECK_EQ_STR(spec.spec_dir, dir);
    CHECK_EQ_INT(spec.n_steps, 4);
    if (spec.n_steps != 4) return;
    TallyStep *s = spec.steps;
    CHECK_EQ_INT(s[0].kind, TALLY_STEP_FILTER);
    CHECK_EQ_STR(s[0].origin, "/steps/0");
    CHECK(!s[0].split);
    CHECK_EQ_INT(s[0].n_items, 1);
    CHECK_EQ_STR(s[0].items[0].text, "amount > 100 and region != 'test'");
    CHECK_EQ_STR(s[0].items[0].origin, "/steps/0/filter");

    CHECK_EQ_INT(s[1].kind, TALLY_STEP_GROUP_BY);
    CHECK_EQ_STR(s[1].origin, "/steps/1");
    CHECK_EQ_INT(s[1].n_items, 1);
    CHECK_EQ_STR(s[1].items[0].text, "region");
    CHECK_EQ_STR(s[1].items[0].origin, "/steps/1/group_by/0");
    CHECK_EQ_INT(s[1].n_aggs, 2);
    CHECK(s[1].agg_names != NULL);
    if (s[1].n_aggs == 2 && s[1].agg_names) {
        CHECK_EQ_STR(s[1].agg_names[0], "total");
        CHECK_EQ_STR(s[1].aggs[0].text, "sum(amount)");
        CHECK_EQ_STR(s[1].aggs[0].origin, "/steps/1/agg/total");
        CHECK_EQ_STR(s[1].agg_names[1], "n");
        CHECK_EQ_STR(s[1].aggs[1].text, "count()");
        CHECK_EQ_STR(s[1].aggs[1].origin, "/steps/1/agg/n");
    }
    CHECK_EQ_INT(s[2].kind, TALLY_STEP_SORT);
    CHECK_EQ_STR(s[2].items[0].text, "total desc");
    CHECK_EQ_STR(s[2].items[0].origin, "/steps/2/sort/0");
    CHECK_EQ_INT(s[3].kind, TALLY_STEP_LIMIT);
    CHECK_EQ_INT(s[3].limit, 10);
    CHECK_EQ_INT(s[3].n_by, 0);
    CHECK(spec.from == NULL && spec.to == NULL && spec.delimiter == 0);
}

TL_TEST(test_all_steps)
{
    int rc = load("{\"input\": \"a.csv\", \"steps\": ["
                  "{\"select\": [\"a\", \"b * 2 as c\"]},"
                  "{\"with\": {\"c\": \"a + 1\", \"d/e~f\": \"2\"}},"
                  "{\"drop\": [\"x\"]},"
                  "{\"rename\": {\"old\": \"new\", \"o2\": \"n 2\"}},"
                  "{\"agg\": {\"n\": \"count()\"}},"
                  "{\"group_by\": [\"k\"], \"agg\": [\"sum(x)\", \"m = max(y)\"]},"
                  "{\"limit\": 2, \"by\": [\"k\"]},"
                  "{\"distinct\": true},"
                  "{\"distinct\": [\"a\", \"b\"]},"
                  "{\"join\": {\"input\": \"b.csv\", \"on\": [\"id\"], \"how\": \"LEFT\"}},"
                  "{\"join\": {\"input\": \"c.csv\", \"on\": [\"id\", \"k\"], \"how\": \"inner\", \"suffix\": \"_c\"}},"
                  "{\"group_by\": [\"k\"]}"
                  "], \"delimiter\": \"\\t\", \"null\": \"NA\", \"no_header\": true,"
                  " \"schema\": \"a:int\", \"from\": \"csv\", \"to\": \"tsv\", \"threads\": 4}");
    CHECK_EQ_INT(rc, 0);
    if (rc) {
        fprintf(stderr, "%s\n", err.message);
        return;
    }
    CHECK_EQ_INT(spec.n_inputs, 1);
    CHECK_EQ_STR(spec.inputs[0], "a.csv");
    CHECK(spec.output == NULL);
    CHECK_EQ_INT(spec.delimiter, '\t');
    CHECK_EQ_STR(spec.null_text, "NA");
    CHECK(spec.no_header);
    CHECK_EQ_STR(spec.schema, "a:int");
    CHECK_EQ_STR(spec.from, "csv");
    CHECK_EQ_STR(spec.to, "tsv");
    CHECK_EQ_INT(spec.threads, 4);
    CHECK_EQ_INT(spec.n_steps, 13);
    if (spec.n_steps != 13) return;
    TallyStep *s = spec.steps;
    CHECK_EQ_INT(s[0].kind, TALLY_STEP_SELECT);
    CHECK_EQ_INT(s[0].n_items, 2);
    CHECK_EQ_STR(s[0].items[1].text, "b * 2 as c");
    CHECK_EQ_STR(s[0].items[1].origin, "/steps/0/select/1");
    /* one WITH step per key */
    CHECK_EQ_INT(s[1].kind, TALLY_STEP_WITH);
    CHECK_EQ_STR(s[1].origin, "/steps/1");
    CHECK_EQ_STR(s[1].names[0], "c");
    CHECK_EQ_STR(s[1].items[0].text, "a + 1");
    CHECK_EQ_STR(s[1].items[0].origin, "/steps/1/with/c");
    CHECK_EQ_INT(s[2].kind, TALLY_STEP_WITH);
    CHECK_EQ_STR(s[2].origin, "/steps/1");
    CHECK_EQ_STR(s[2].names[0], "d/e~f");
    CHECK_EQ_STR(s[2].items[0].origin, "/steps/1/with/d~1e~0f");
    CHECK_EQ_INT(s[3].kind, TALLY_STEP_DROP);
    CHECK_EQ_STR(s[3].items[0].text, "x");
    CHECK_EQ_INT(s[4].kind, TALLY_STEP_RENAME);
    CHECK_EQ_INT(s[4].n_items, 2);
    CHECK_EQ_STR(s[4].names[0], "old");
    CHECK_EQ_STR(s[4].items[0].text, "new");
    CHECK_EQ_STR(s[4].items[0].origin, "/steps/3/rename/old");
    CHECK_EQ_STR(s[4].names[1], "o2");
    CHECK_EQ_STR(s[4].items[1].text, "n 2");
    CHECK_EQ_INT(s[5].kind, TALLY_STEP_GROUP_BY);
    CHECK_EQ_INT(s[5].n_items, 0);
    CHECK_EQ_INT(s[5].n_aggs, 1);
    CHECK_EQ_STR(s[5].agg_names[0], "n");
    CHECK_EQ_INT(s[6].kind, TALLY_STEP_GROUP_BY);
    CHECK_EQ_INT(s[6].n_items, 1);
    CHECK_EQ_INT(s[6].n_aggs, 2);
    CHECK(s[6].agg_names == NULL);
    CHECK_EQ_STR(s[6].aggs[1].text, "m = max(y)");
    CHECK_EQ_STR(s[6].aggs[1].origin, "/steps/5/agg/1");
    CHECK_EQ_INT(s[7].kind, TALLY_STEP_LIMIT);
    CHECK_EQ_INT(s[7].limit, 2);
    CHECK_EQ_INT(s[7].n_by, 1);
    CHECK_EQ_STR(s[7].by[0].text, "k");
    CHECK_EQ_STR(s[7].by[0].origin, "/steps/6/by/0");
    CHECK_EQ_INT(s[8].kind, TALLY_STEP_DISTINCT);
    CHECK_EQ_INT(s[8].n_items, 0);
    CHECK_EQ_INT(s[9].kind, TALLY_STEP_DISTINCT);
    CHECK_EQ_INT(s[9].n_items, 2);
    CHECK_EQ_INT(s[10].kind, TALLY_STEP_JOIN);
    CHECK_EQ_STR(s[10].join_input, "b.csv");
    CHECK_EQ_STR(s[10].how, "left");
    CHECK_EQ_STR(s[10].suffix, "_right");
    CHECK_EQ_STR(s[10].items[0].text, "id");
    CHECK_EQ_STR(s[10].items[0].origin, "/steps/9/join/on/0");
    CHECK(s[11].how == NULL);
    CHECK_EQ_STR(s[11].suffix, "_c");
    CHECK_EQ_INT(s[11].n_items, 2);
    CHECK_EQ_INT(s[12].kind, TALLY_STEP_GROUP_BY);
    CHECK_EQ_INT(s[12].n_aggs, 0);
}

TL_TEST(test_spec_dir)
{
    CHECK_EQ_INT(load("{\"inputs\": [\"x.csv\", \"sub/y.csv\", \"/abs/z.csv\"]}"), 0);
    CHECK_EQ_INT(spec.n_inputs, 3);
    CHECK_EQ_STR(spec.inputs[1], "sub/y.csv");
    CHECK_EQ_STR(spec.inputs[2], "/abs/z.csv");
    CHECK_EQ_STR(spec.spec_dir, dir);
    CHECK_EQ_INT(spec.n_steps, 0);
    /* a bare file name: the current folder */
    char cwd[512];
    if (getcwd(cwd, sizeof cwd) && chdir(dir) == 0) {
        memset(&err, 0, sizeof err);
        tally_spec_free(&spec);
        CHECK_EQ_INT(tally_spec_from_json("p.json", &spec, &err), 0);
        CHECK_EQ_STR(spec.spec_dir, ".");
        CHECK(chdir(cwd) == 0);
    }
    CHECK_EQ_INT(load("{\"delimiter\": \"\\\\t\"}"), 0); /* a backslash and a t */
    CHECK_EQ_INT(spec.delimiter, '\t');
    CHECK_EQ_INT(load("{\"delimiter\": \";\"}"), 0);
    CHECK_EQ_INT(spec.delimiter, ';');
    /* BOM and an empty steps list are fine */
    CHECK_EQ_INT(load("\xEF\xBB\xBF{\"inputs\": [\"x.csv\"], \"steps\": []}"), 0);
}

TL_TEST(test_errors)
{
    char want[1024];
    memset(&err, 0, sizeof err);
    snprintf(path, sizeof path, "%s/missing.json", dir);
    CHECK_EQ_INT(tally_spec_from_json(path, &spec, &err), 2);
    snprintf(want, sizeof want, "cannot open pipeline \"%s\": No such file or directory", path);
    CHECK_EQ_STR(err.message, want);
    CHECK_EQ_INT(err.exit_code, 2);

    memset(&err, 0, sizeof err);
    CHECK_EQ_INT(tally_spec_from_json(dir, &spec, &err), 2);
    CHECK(strstr(err.message, "cannot read pipeline") != NULL);

    CHECK_EQ_STR(load_err("{\n  \"inputs\": [\"a\",]\n}"),
                 "p.json: invalid JSON near line 2, column 18");
    CHECK_EQ_STR(load_err(""), "p.json: invalid JSON near line 1, column 1");
    CHECK_EQ_STR(load_err("{} x"), "p.json: invalid JSON near line 1, column 4");
    CHECK_EQ_STR(load_err("{\"inputs\": [\"é\" \"b\"]}"),
                 "p.json: invalid JSON near line 1, column 17");
    CHECK_EQ_STR(load_err("[]"),
                 "p.json: expected a JSON object such as {\"inputs\": [...], \"steps\": [...]}, got an array");
    CHECK_EQ_STR(load_err("{\"inptus\": []}"),
                 "p.json: unknown key \"inptus\" (did you mean \"inputs\"?)");
    CHECK_EQ_STR(load_err("{\"zzz\": 1}"), "p.json: unknown key \"zzz\"");
    CHECK_EQ_STR(load_err("{\"inputs\": []}"),
                 "p.json: /inputs: expected a non-empty array of file names");
    CHECK_EQ_STR(load_err("{\"inputs\": \"a.csv\"}"),
                 "p.json: /inputs: expected a non-empty array of file names");
    CHECK_EQ_STR(load_err("{\"inputs\": [\"a\", 3]}"),
                 "p.json: /inputs/1: expected a file name, got a number");
    CHECK_EQ_STR(load_err("{\"input\": \"a\", \"inputs\": [\"b\"]}"),
                 "p.json: give \"input\" or \"inputs\", not both");
    CHECK_EQ_STR(load_err("{\"inputs\": [\"a\"], \"inputs\": [\"b\"]}"),
                 "p.json: /: duplicate key \"inputs\"");
    CHECK_EQ_STR(load_err("{\"steps\": {}}"), "p.json: /steps: expected an array of steps, got an object");
    CHECK_EQ_STR(load_err("{\"steps\": [{\"filter\": \"a\"}, {\"limit\": 1}, {\"filtr\": \"x\"}]}"),
                 "p.json: /steps/2: unknown step \"filtr\" (did you mean \"filter\"?)");
    CHECK_EQ_STR(load_err("{\"steps\": [{\"limit\": 1, \"byy\": [\"k\"]}]}"),
                 "p.json: /steps/0: unknown key \"byy\" (did you mean \"by\"?)");
    CHECK_EQ_STR(load_err("{\"steps\": [{}, {\"limit\": -1}]}"),
                 "p.json: /steps/0: empty step (expected a key such as \"filter\")");
    CHECK_EQ_STR(load_err("{\"steps\": [{\"filter\": \"a\"}, {\"limit\": -1}]}"),
                 "p.json: /steps/1/limit: expected a non-negative integer");
    CHECK_EQ_STR(load_err("{\"steps\": [{\"filter\": \"a\"}, {\"limit\": 1.5}]}"),
                 "p.json: /steps/1/limit: expected a non-negative integer");
    CHECK_EQ_STR(load_err("{\"steps\": [{\"filter\": \"a\"}, {\"limit\": \"10\"}]}"),
                 "p.json: /steps/1/limit: expected a non-negative integer");
    CHECK_EQ_STR(load_err("{\"steps\": [{\"filter\": \"a\", \"select\": [\"b\"]}]}"),
                 "p.json: /steps/0: one step per object: found \"filter\" and \"select\"");
    CHECK_EQ_STR(load_err("{\"steps\": [{\"by\": [\"k\"]}]}"),
                 "p.json: /steps/0: \"by\" goes with \"limit\": {\"limit\": N, \"by\": [...]}");
    CHECK_EQ_STR(load_err("{\"steps\": [{\"sort\": [\"a\"], \"by\": [\"k\"]}]}"),
                 "p.json: /steps/0: \"by\" goes with \"limit\", not with \"sort\"");
    CHECK_EQ_STR(load_err("{\"steps\": [\"filter\"]}"),
                 "p.json: /steps/0: expected an object such as {\"filter\": \"x > 1\"}, got a string");
    CHECK_EQ_STR(load_err("{\"steps\": [{\"filter\": 1}]}"),
                 "p.json: /steps/0/filter: expected a string, got a number");
    CHECK_EQ_STR(load_err("{\"steps\": [{\"select\": []}]}"),
                 "p.json: /steps/0/select: expected a non-empty array of strings");
    CHECK_EQ_STR(load_err("{\"steps\": [{\"select\": \"a, b\"}]}"),
                 "p.json: /steps/0/select: expected an array of strings, got a string");
    CHECK_EQ_STR(load_err("{\"steps\": [{\"select\": [\"a\", null]}]}"),
                 "p.json: /steps/0/select/1: expected a string, got null");
    CHECK_EQ_STR(load_err("{\"steps\": [{\"with\": {\"c\": 1}}]}"),
                 "p.json: /steps/0/with/c: expected a string, got a number");
    CHECK_EQ_STR(load_err("{\"steps\": [{\"with\": {}}]}"),
                 "p.json: /steps/0/with: expected a non-empty object");
    CHECK_EQ_STR(load_err("{\"steps\": [{\"agg\": {\"n\": \"count()\", \"n\": \"sum(x)\"}}]}"),
                 "p.json: /steps/0/agg: duplicate key \"n\"");
    CHECK_EQ_STR(load_err("{\"steps\": [{\"group_by\": [\"k\"], \"agg\": 3}]}"),
                 "p.json: /steps/0/agg: expected an object {\"NAME\": \"AGG(EXPR)\"}, got a number");
    CHECK_EQ_STR(load_err("{\"steps\": [{\"distinct\": false}]}"),
                 "p.json: /steps/0/distinct: expected true or an array of column names");
    CHECK_EQ_STR(load_err("{\"steps\": [{\"join\": {\"input\": \"b.csv\"}}]}"),
                 "p.json: /steps/0/join: missing \"on\" (the key columns)");
    CHECK_EQ_STR(load_err("{\"steps\": [{\"join\": {\"on\": [\"k\"]}}]}"),
                 "p.json: /steps/0/join: missing \"input\" (the file to join with)");
    CHECK_EQ_STR(load_err("{\"steps\": [{\"join\": {\"input\": \"b\", \"on\": [\"k\"], \"how\": \"lft\"}}]}"),
                 "p.json: /steps/0/join/how: unknown join type \"lft\" (did you mean \"left\"?)"
                 " (use inner, left, right, full, semi or anti)");
    CHECK_EQ_STR(load_err("{\"steps\": [{\"join\": {\"input\": \"b\", \"on\": [\"k\"], \"type\": \"left\"}}]}"),
                 "p.json: /steps/0/join: unknown key \"type\"");
    CHECK_EQ_STR(load_err("{\"delimiter\": \",,\"}"),
                 "p.json: /delimiter: expected a single character such as \",\" or \"\\t\"");
    CHECK_EQ_STR(load_err("{\"no_header\": 1}"), "p.json: /no_header: expected true or false");
    CHECK_EQ_STR(load_err("{\"threads\": 100000}"),
                 "p.json: /threads: 100000 is too large (at most 4096)");
    CHECK_EQ_STR(load_err("{\"output\": \"\"}"), "p.json: /output: expected a non-empty string");
    CHECK_EQ_STR(load_err("{\"a/b\": 1}"), "p.json: unknown key \"a/b\"");
    CHECK_EQ_STR(load_err("{\"steps\": [{\"rename\": {\"a/b\": 1}}]}"),
                 "p.json: /steps/0/rename/a~1b: expected a string, got a number");
}

TL_TEST(test_nul_and_depth)
{
    /* a NUL byte inside the file */
    snprintf(path, sizeof path, "%s/nul.json", dir);
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite("{\"inputs\": [\"a\0\"]}", 1, 18, f);
        fclose(f);
    }
    memset(&err, 0, sizeof err);
    CHECK_EQ_INT(tally_spec_from_json(path, &spec, &err), 2);
    CHECK(strstr(err.message, "invalid JSON near line 1, column 15 (a NUL byte)") != NULL);

    /* deep nesting: an error, not a crash */
    size_t n = 100000;
    char *t = malloc(2 * n + 64);
    if (!t) return;
    size_t k = (size_t)sprintf(t, "{\"steps\": ");
    memset(t + k, '[', n);
    memset(t + k + n, ']', n);
    strcpy(t + k + 2 * n, "}");
    CHECK_EQ_INT(load(t), 2);
    CHECK(strstr(err.message, "invalid JSON") != NULL);
    k = (size_t)sprintf(t, "{\"steps\": ");
    for (int i = 0; i < 500; i++) k += (size_t)sprintf(t + k, "[");
    for (int i = 0; i < 500; i++) k += (size_t)sprintf(t + k, "]");
    strcpy(t + k, "}");
    CHECK_EQ_INT(load(t), 2);
    CHECK_EQ_STR(msg(), "p.json: /steps/0: expected an object such as {\"filter\": \"x > 1\"}, got an array");
    free(t);
}

TL_TEST(test_big_limit)
{
    CHECK_EQ_INT(load("{\"steps\": [{\"limit\": 0}]}"), 0);
    CHECK_EQ_INT(spec.steps[0].limit, 0);
    CHECK_EQ_INT(load("{\"steps\": [{\"limit\": 1e30}]}"), 2);
    CHECK_EQ_INT(load("{\"steps\": [{\"limit\": 9007199254740992}]}"), 0);
    CHECK_EQ_INT(spec.steps[0].limit, 9007199254740992LL);
}

/* Fail the Nth allocation (and every later one) for N = 1, 2, ... until
 * the file loads: every failure must be exit 1 "out of memory" with the spec
 * cleared (LSan, in the asan build, checks that nothing leaks). */
TL_TEST(test_out_of_memory)
{
    const char *text = "{\"inputs\": [\"a.csv\", \"b.csv\"], \"steps\": ["
                       "{\"filter\": \"x > 1\"}, {\"with\": {\"c\": \"1\", \"d\": \"2\"}},"
                       "{\"group_by\": [\"k\"], \"agg\": {\"n\": \"count()\"}},"
                       "{\"rename\": {\"a\": \"b\"}}, {\"limit\": 3, \"by\": [\"k\"]},"
                       "{\"join\": {\"input\": \"j.csv\", \"on\": [\"k\"]}}],"
                       " \"output\": \"o.csv\"}";
    int failures = 0;
    for (uint64_t n = 1; n < 2000; n++) {
        tl_alloc_fail_mode(n, true);
        int rc = load(text);
        tl_alloc_fail_mode(0, false);
        if (rc == 0) {
            CHECK_EQ_INT(spec.n_steps, 7);
            break;
        }
        failures++;
        CHECK_EQ_INT(rc, 1);
        CHECK_EQ_STR(err.message, "out of memory");
        CHECK(spec.steps == NULL && spec.inputs == NULL && spec.output == NULL);
        if (rc != 1) break;
    }
    CHECK(failures > 10);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/tally-spec-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    TL_RUN(test_cli_example);
    TL_RUN(test_all_steps);
    TL_RUN(test_spec_dir);
    TL_RUN(test_errors);
    TL_RUN(test_nul_and_depth);
    TL_RUN(test_big_limit);
    TL_RUN(test_out_of_memory);
    tally_spec_free(&spec);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
    return tl_test_summary(__FILE__);
}
