/*
 * test_plan.c -- plan building, explain, the optimizer and tally_run, on
 * small CSV files in a temporary folder.
 *
 * Specs are built in C the way the two front doors build them: the flag
 * form (whole texts, split = true) and the JSON form (one item per text,
 * names apart); both must explain the same.  Batches are shrunk to 4 rows
 * (TALLY_BATCH_ROWS) so limits, restarts and filters cross batch edges.
 */
#include "../../lib/exec/ops.h"
#include "../../lib/opt/opt.h"
#include "../../lib/plan/plan.h"
#include "../../lib/tally.h"
#include "tl_test.h"
#include "../../formats/infer.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_dir[512];

static char *path_of(const char *name)
{
    static char buf[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
    return buf[k];
}

static void write_file(const char *name, const char *text)
{
    FILE *f = fopen(path_of(name), "wb");
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

/* The whole file, tl_malloc'd, or NULL. */
static char *read_path(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *s;
    long n;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    s = tl_malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        tl_free(s);
        s = NULL;
    }
    if (s) s[n] = '\0';
    fclose(f);
    return s;
}

/* tally_run with standard output captured into *out (tl_malloc'd). */
static TallyStatus run_capture(const TallySpec *spec, TallyMode mode, char **out,
                               TallyError *err)
{
    char *cap = path_of("stdout.txt");
    int saved, fd;
    TallyStatus rc;
    fflush(stdout);
    saved = dup(1);
    fd = open(cap, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    close(fd);
    memset(err, 0, sizeof *err);
    rc = tally_run(spec, mode, NULL, err);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    *out = read_path(cap);
    return rc;
}

/* A spec over one input named relative to the test folder. */
static void spec_init(TallySpec *s, const char *input)
{
    memset(s, 0, sizeof *s);
    s->inputs = tally_alloc(4 * sizeof *s->inputs);
    s->inputs[0] = tally_strdup(input);
    s->n_inputs = 1;
    s->spec_dir = tally_strdup(g_dir);
}

static TallyStep *step(TallySpec *s, TallyStepKind kind, const char *text,
                       bool split, const char *origin)
{
    TallyStep *st = tally_spec_add_step(s, kind);
    st->split = split;
    st->origin = tally_strdup(origin);
    if (text) tally_text_push(&st->items, &st->n_items, text, origin);
    return st;
}

/* Run spec into out.csv; returns how it ended and the file text. */
static TallyStatus run_to_file(TallySpec *s, char **text, TallyError *err)
{
    TallyStatus rc;
    unlink(path_of("out.csv"));
    tally_free(s->output);
    s->output = tally_strdup("out.csv");
    memset(err, 0, sizeof *err);
    rc = tally_run(s, TALLY_RUN, NULL, err);
    *text = read_path(path_of("out.csv"));
    return rc;
}

static const char *sales =
    "region,amount,note\n"
    "north,150,a\n"
    "south,50,b\n"
    "north,300,c\n"
    "test,500,d\n"
    "east,120,e\n"
    "south,200,f\n"
    "east,80,g\n"
    "west,1000,h\n"
    "north,101,i\n";

static const char *explain_want =
    "logical plan:\n"
    "  limit 2\n"
    "    sort total desc\n"
    "      aggregate by region: total = sum(amount), n = count()\n"
    "        filter amount > 100 and region != 'test'\n"
    "          scan sales.csv\n"
    "optimized plan:\n"
    "  sort total desc limit 2\n"
    "    aggregate by region: total = sum(amount), n = count()\n"
    "      filter amount > 100 and region != 'test'\n"
    "        scan sales.csv columns region, amount\n"
    "output: region string, total int64, n int64\n";

static void flag_form(TallySpec *s)
{
    spec_init(s, "sales.csv");
    step(s, TALLY_STEP_FILTER, "amount > 100 and region != 'test'", false,
         "--filter");
    TallyStep *g = step(s, TALLY_STEP_GROUP_BY, "region", true, "--group-by");
    tally_text_push(&g->aggs, &g->n_aggs, "total = sum(amount), n = count()",
                    "--agg");
    step(s, TALLY_STEP_SORT, "-total", true, "--sort");
    step(s, TALLY_STEP_LIMIT, NULL, true, "--head")->limit = 2;
}

static void json_form(TallySpec *s)
{
    spec_init(s, "sales.csv");
    step(s, TALLY_STEP_FILTER, "amount > 100 and region != 'test'", false,
         "/steps/0/filter");
    TallyStep *g = step(s, TALLY_STEP_GROUP_BY, "region", false, "/steps/1");
    tally_text_push(&g->aggs, &g->n_aggs, "sum(amount)", "/steps/1/agg/total");
    tally_text_push(&g->aggs, &g->n_aggs, "count()", "/steps/1/agg/n");
    g->agg_names = tally_alloc(2 * sizeof(char *));
    g->agg_names[0] = tally_strdup("total");
    g->agg_names[1] = tally_strdup("n");
    step(s, TALLY_STEP_SORT, "total desc", false, "/steps/2/sort/0");
    step(s, TALLY_STEP_LIMIT, NULL, false, "/steps/3")->limit = 2;
}

TL_TEST(test_explain_both_forms)
{
    TallySpec s;
    TallyError err;
    char *out = NULL;
    write_file("sales.csv", sales);

    flag_form(&s);
    CHECK_EQ_INT(run_capture(&s, TALLY_EXPLAIN, &out, &err), TALLY_OK);
    CHECK_EQ_STR(out, explain_want);
    tl_free(out);
    tally_spec_free(&s);

    json_form(&s);
    CHECK_EQ_INT(run_capture(&s, TALLY_EXPLAIN, &out, &err), TALLY_OK);
    CHECK_EQ_STR(out, explain_want);
    tl_free(out);
    tally_spec_free(&s);
}

TL_TEST(test_run_pipeline)
{
    TallySpec s;
    TallyError err;
    char *out = NULL;
    write_file("sales.csv", sales);
    flag_form(&s);
    CHECK_EQ_INT(run_to_file(&s, &out, &err), TALLY_OK);
    CHECK_EQ_STR(out, "region,total,n\nwest,1000,1\nnorth,551,3\n");
    tl_free(out);
    s.no_optimize = true;
    CHECK_EQ_INT(run_to_file(&s, &out, &err), TALLY_OK);
    CHECK_EQ_STR(out, "region,total,n\nwest,1000,1\nnorth,551,3\n");
    tl_free(out);
    tally_spec_free(&s);
}

TL_TEST(test_select_with_drop_rename)
{
    TallySpec s;
    TallyError err;
    char *out = NULL;
    write_file("t.csv", "a,b,c\n1,x,2.5\n2,y,\n3,z,1\n");
    spec_init(&s, "t.csv");
    step(&s, TALLY_STEP_WITH, "a = a * 10", false, "--with");
    step(&s, TALLY_STEP_WITH, "d = a + 1", false, "--with");
    step(&s, TALLY_STEP_DROP, "b", true, "--drop");
    step(&s, TALLY_STEP_RENAME, "a:b,c:a", true, "--rename");
    CHECK_EQ_INT(run_to_file(&s, &out, &err), TALLY_OK);
    CHECK_EQ_STR(out, "b,a,d\n10,2.5,11\n20,,21\n30,1.0,31\n");
    tl_free(out);
    step(&s, TALLY_STEP_SELECT, "d, b * 2 as twice, a", true, "--select");
    CHECK_EQ_INT(run_to_file(&s, &out, &err), TALLY_OK);
    CHECK_EQ_STR(out, "d,twice,a\n11,20,2.5\n21,40,\n31,60,1.0\n");
    tl_free(out);
    tally_spec_free(&s);

    /* rename swaps */
    spec_init(&s, "t.csv");
    step(&s, TALLY_STEP_RENAME, "a:b,b:a", true, "--rename");
    step(&s, TALLY_STEP_LIMIT, NULL, true, "--head")->limit = 1;
    CHECK_EQ_INT(run_to_file(&s, &out, &err), TALLY_OK);
    CHECK_EQ_STR(out, "b,a,c\n1,x,2.5\n");
    tl_free(out);
    tally_spec_free(&s);
}

TL_TEST(test_limit_filter_distinct)
{
    TallySpec s;
    TallyError err;
    char *out = NULL;
    write_file("sales.csv", sales);
    spec_init(&s, "sales.csv");
    step(&s, TALLY_STEP_FILTER, "amount >= 100", false, "--filter");
    step(&s, TALLY_STEP_SELECT, "region", true, "--select");
    step(&s, TALLY_STEP_DISTINCT, NULL, true, "--distinct");
    step(&s, TALLY_STEP_LIMIT, NULL, true, "--head")->limit = 3;
    CHECK_EQ_INT(run_to_file(&s, &out, &err), TALLY_OK);
    CHECK_EQ_STR(out, "region\nnorth\ntest\neast\n");
    tl_free(out);
    tally_spec_free(&s);

    spec_init(&s, "sales.csv");
    step(&s, TALLY_STEP_LIMIT, NULL, true, "--head")->limit = 0;
    CHECK_EQ_INT(run_to_file(&s, &out, &err), TALLY_OK);
    CHECK_EQ_STR(out, "region,amount,note\n");
    tl_free(out);
    tally_spec_free(&s);
}

/* Drive the plan by hand to see the counters. */
static int64_t rows_read_by(TallySpec *s, bool optimize, char **explain)
{
    TlTypeHints hints;
    TlReadOptions ro;
    TlPlanOptions po;
    TlPlan *p = NULL;
    TlOperator *op = NULL;
    TlExecStats stats;
    TlError err;
    char *disp[1], *paths[1];
    int64_t rows = -1;
    memset(&hints, 0, sizeof hints);
    memset(&ro, 0, sizeof ro);
    memset(&po, 0, sizeof po);
    memset(&stats, 0, sizeof stats);
    disp[0] = s->inputs[0];
    paths[0] = path_of(s->inputs[0]);
    po.display = disp;
    po.paths = paths;
    po.n_inputs = 1;
    po.read = &ro;
    po.hints = &hints;
    if (tl_plan_build(s, &po, &p, &err) != TL_OK) goto done;
    if (optimize && tl_opt_run(p, &err) != TL_OK) goto done;
    if (explain) {
        size_t len;
        if (tl_plan_explain(p, explain, &len, &err) != TL_OK) goto done;
    }
    if (tl_exec_build(p, optimize ? p->opt_root : p->root, &stats, &op, &err))
        goto done;
    for (;;) {
        TlBatch *b = NULL;
        if (op->next(op, &b, &err) != TL_OK) goto done;
        if (!b) break;
        tl_batch_free(b);
    }
    rows = stats.rows_read;
done:
    if (op) op->free(op);
    tl_plan_free(p);
    tl_hints_free(&hints);
    return rows;
}

TL_TEST(test_head_stops_early)
{
    TallySpec s;
    char *ex = NULL;
    write_file("sales.csv", sales);
    spec_init(&s, "sales.csv");
    step(&s, TALLY_STEP_LIMIT, NULL, true, "--head")->limit = 5;
    /* batches of 4 rows: 5 rows need two batches, not all three */
    CHECK_EQ_INT(rows_read_by(&s, true, NULL), 8);
    CHECK_EQ_INT(rows_read_by(&s, false, NULL), 8);
    tally_spec_free(&s);

    /* sort + limit: everything is read, the limit folds into the sort */
    spec_init(&s, "sales.csv");
    step(&s, TALLY_STEP_SORT, "amount", true, "--sort");
    step(&s, TALLY_STEP_LIMIT, NULL, true, "--head")->limit = 5;
    step(&s, TALLY_STEP_LIMIT, NULL, true, "--head")->limit = 3;
    CHECK_EQ_INT(rows_read_by(&s, true, &ex), 9);
    CHECK(ex && strstr(ex, "optimized plan:\n  sort amount limit 3\n    scan sales.csv\n"));
    tl_free(ex);
    tally_spec_free(&s);

    /* a limit sinks below a project into the sort */
    spec_init(&s, "sales.csv");
    step(&s, TALLY_STEP_SORT, "-amount", true, "--sort");
    step(&s, TALLY_STEP_SELECT, "region", true, "--select");
    step(&s, TALLY_STEP_LIMIT, NULL, true, "--head")->limit = 2;
    CHECK_EQ_INT(rows_read_by(&s, true, &ex), 9);
    CHECK(ex && strstr(ex, "optimized plan:\n"
                           "  project region\n"
                           "    sort amount desc limit 2\n"
                           "      scan sales.csv columns region, amount\n"));
    tl_free(ex);
    tally_spec_free(&s);
}

TL_TEST(test_projection_pushdown)
{
    TallySpec s;
    char *ex = NULL;
    write_file("sales.csv", sales);
    spec_init(&s, "sales.csv");
    step(&s, TALLY_STEP_WITH, "x = amount * 2", false, "--with");
    step(&s, TALLY_STEP_FILTER, "note != 'b'", false, "--filter");
    step(&s, TALLY_STEP_SELECT, "region", true, "--select");
    CHECK_EQ_INT(rows_read_by(&s, true, &ex), 9);
    CHECK_EQ_STR(ex,
                 "logical plan:\n"
                 "  project region\n"
                 "    filter note != 'b'\n"
                 "      project region, amount, note, amount * 2 as x\n"
                 "        scan sales.csv\n"
                 "optimized plan:\n"
                 "  project region\n"
                 "    filter note != 'b'\n"
                 "      scan sales.csv columns region, note (note first, the rest only for kept rows)\n"
                 "output: region string\n");
    tl_free(ex);
    tally_spec_free(&s);

    /* nothing referenced: no column is converted */
    spec_init(&s, "sales.csv");
    TallyStep *g = step(&s, TALLY_STEP_GROUP_BY, NULL, true, "--agg");
    tally_text_push(&g->aggs, &g->n_aggs, "count()", "--agg");
    CHECK_EQ_INT(rows_read_by(&s, true, &ex), 9);
    CHECK(ex && strstr(ex, "scan sales.csv columns (none)\n"));
    tl_free(ex);
    tally_spec_free(&s);
}

TL_TEST(test_restart_widens)
{
    TallySpec s;
    TallyError err;
    char *out = NULL;
    /* the first batch (4 rows) says int64; row 6 says float64, row 8 string */
    write_file("w.csv", "k,v\na,1\nb,2\nc,3\nd,4\ne,5\nf,2.5\ng,6\nh,x\n");
    spec_init(&s, "w.csv");
    step(&s, TALLY_STEP_SELECT, "v", true, "--select");
    CHECK_EQ_INT(run_to_file(&s, &out, &err), TALLY_OK);
    CHECK_EQ_STR(out, "v\n1\n2\n3\n4\n5\n2.5\n6\nx\n");
    tl_free(out);
    tally_spec_free(&s);

    write_file("f.csv", "k,v\na,1\nb,2\nc,3\nd,4\ne,5\nf,2.5\n");
    spec_init(&s, "f.csv");
    step(&s, TALLY_STEP_FILTER, "v > 1", false, "--filter");
    CHECK_EQ_INT(run_to_file(&s, &out, &err), TALLY_OK);
    CHECK_EQ_STR(out, "k,v\nb,2.0\nc,3.0\nd,4.0\ne,5.0\nf,2.5\n");
    tl_free(out);
    tally_spec_free(&s);

    /* null in the first batch: planned as null, not string, so the filter
     * resolves; the later value restarts the run as int64 */
    write_file("n.csv", "k,v\na,\nb,\nc,\nd,\ne,5\nf,1\n");
    spec_init(&s, "n.csv");
    step(&s, TALLY_STEP_FILTER, "v > 1", false, "--filter");
    CHECK_EQ_INT(run_to_file(&s, &out, &err), TALLY_OK);
    CHECK_EQ_STR(out, "k,v\ne,5\n");
    tl_free(out);
    tally_spec_free(&s);

    /* schema mode reads everything */
    write_file("e.csv", "a,b,c\n1,,x\n2,,y\n3,,z\n4,,w\n5.5,,v\n");
    spec_init(&s, "e.csv");
    CHECK_EQ_INT(run_capture(&s, TALLY_SCHEMA, &out, &err), TALLY_OK);
    CHECK_EQ_STR(out, "column,type\na,float64\nb,null\nc,string\n");
    tl_free(out);
    tally_spec_free(&s);
}

TL_TEST(test_several_inputs)
{
    TallySpec s;
    TallyError err;
    char *out = NULL;
    write_file("i1.csv", "a,b\n1,x\n2,y\n");
    write_file("i2.csv", "b,a,c\nz,1.5,\nw,007,\n");
    spec_init(&s, "i1.csv");
    s.inputs[1] = tally_strdup("i2.csv");
    s.n_inputs = 2;
    CHECK_EQ_INT(run_to_file(&s, &out, &err), TALLY_OK);
    /* a: int64 + float64 + "007" (an id: a string) -> string, every
     * value with its own text; c: empty everywhere stays null */
    CHECK_EQ_STR(out, "a,b,c\n1,x,\n2,y,\n1.5,z,\n007,w,\n");
    tl_free(out);
    CHECK_EQ_INT(run_capture(&s, TALLY_SCHEMA, &out, &err), TALLY_OK);
    CHECK_EQ_STR(out, "column,type\na,string\nb,string\nc,null\n");
    tl_free(out);
    tally_spec_free(&s);

    /* int64 + string -> string, read as text in both ("007" stays) */
    write_file("i3.csv", "a\nq\n");
    spec_init(&s, "i2.csv");
    s.inputs[1] = tally_strdup("i3.csv");
    s.n_inputs = 2;
    step(&s, TALLY_STEP_SELECT, "a", true, "--select");
    CHECK_EQ_INT(run_to_file(&s, &out, &err), TALLY_OK);
    CHECK_EQ_STR(out, "a\n1.5\n007\nq\n");
    tl_free(out);
    tally_spec_free(&s);
}

static void check_usage(TallySpec *s, const char *want_start)
{
    TallyError err;
    char *out = NULL;
    TallyStatus rc = run_to_file(s, &out, &err);
    CHECK_EQ_INT(rc, TALLY_ERR_USAGE);
    CHECK(out == NULL);
    if (strncmp(err.message, want_start, strlen(want_start)) != 0) {
        CHECK_EQ_STR(err.message, want_start);
    }
    tl_free(out);
    tally_spec_free(s);
}

TL_TEST(test_usage_errors)
{
    TallySpec s;
    write_file("sales.csv", sales);

    spec_init(&s, "sales.csv");
    step(&s, TALLY_STEP_FILTER, "amount + 1", false, "--filter");
    check_usage(&s, "filter must be a boolean expression, got int64");

    spec_init(&s, "sales.csv");
    TallyStep *g = step(&s, TALLY_STEP_GROUP_BY, "region", true, "--group-by");
    tally_text_push(&g->aggs, &g->n_aggs, "x = amount + 1", "--agg");
    check_usage(&s, "column \"amount\" must be a group key or inside an "
                    "aggregate such as sum(amount)");

    spec_init(&s, "sales.csv");
    g = step(&s, TALLY_STEP_GROUP_BY, "region", true, "--group-by");
    tally_text_push(&g->aggs, &g->n_aggs, "sum(amount) + amount", "--agg");
    check_usage(&s, "column \"amount\" must be a group key");

    spec_init(&s, "sales.csv");
    step(&s, TALLY_STEP_DROP, "amout", true, "--drop");
    check_usage(&s, "unknown column \"amout\" (did you mean \"amount\"?)");

    spec_init(&s, "sales.csv");
    step(&s, TALLY_STEP_SELECT, "region, amount as region", true, "--select");
    check_usage(&s, "duplicate output column \"region\"");

    spec_init(&s, "sales.csv");
    step(&s, TALLY_STEP_WITH, "amount * 2", false, "--with");
    check_usage(&s, "expected NAME = EXPR");

    spec_init(&s, "sales.csv");
    step(&s, TALLY_STEP_RENAME, "region:amount", true, "--rename");
    check_usage(&s, "duplicate column name \"amount\"");

    spec_init(&s, "sales.csv");
    s.schema = tally_strdup("region:string,amount:intt");
    check_usage(&s, "--schema: unknown type \"intt\" for column \"amount\"");

    spec_init(&s, "sales.csv");
    s.to = tally_strdup("xml");
    check_usage(&s, "unsupported output format \"xml\"");

    spec_init(&s, "sales.csv");
    step(&s, TALLY_STEP_LIMIT, NULL, true, "--head")->limit = 1;
    tally_text_push(&s.steps[0].by, &s.steps[0].n_by, "regio", "--by");
    check_usage(&s, "unknown column \"regio\"");
}

TL_TEST(test_failed_run_keeps_output)
{
    TallySpec s;
    TallyError err;
    char *out = NULL;
    write_file("bad.csv", "a\n1\n2\n3\n4\n0\n");
    write_file("out.csv", "old\n");
    spec_init(&s, "bad.csv");
    s.output = tally_strdup("out.csv");
    s.schema = tally_strdup("a:int");
    step(&s, TALLY_STEP_WITH, "b = 10 // a + cast('x' as int)", false, "--with");
    memset(&err, 0, sizeof err);
    CHECK_EQ_INT(tally_run(&s, TALLY_RUN, NULL, &err), TALLY_ERR_DATA);
    CHECK(err.message[0] != '\0');
    out = read_path(path_of("out.csv"));
    CHECK_EQ_STR(out, "old\n");
    tl_free(out);
    tally_spec_free(&s);

    /* a missing input is an I/O error */
    spec_init(&s, "nope.csv");
    CHECK_EQ_INT(run_capture(&s, TALLY_RUN, &out, &err), TALLY_ERR_IO);
    CHECK(strstr(err.message, "nope.csv") != NULL);
    tl_free(out);
    tally_spec_free(&s);
}

/* Run s into out.csv; *st gets its counters (free st->converted). */
static TallyStatus run_stats(TallySpec *s, TallyStats *st)
{
    TallyError err;
    tally_free(s->output);
    s->output = tally_strdup("out.csv");
    memset(&err, 0, sizeof err);
    return tally_run(s, TALLY_RUN, st, &err);
}

TL_TEST(test_stats)
{
    TallySpec s;
    TallyStats st;
    char *text = NULL;
    write_file("sales.csv", sales);
    spec_init(&s, "sales.csv");
    step(&s, TALLY_STEP_SELECT, "amount", true, "--select");
    step(&s, TALLY_STEP_LIMIT, NULL, true, "--head")->limit = 5;
    CHECK_EQ_INT(run_stats(&s, &st), TALLY_OK);
    CHECK_EQ_INT(st.rows_read, 8);
    CHECK_EQ_INT(st.batches, 2);
    CHECK_EQ_STR(st.converted, "amount=8");
    CHECK_EQ_INT(st.rows_written, 5);
    CHECK_EQ_INT(st.restarts, 0);
    tally_free(st.converted);
    tally_spec_free(&s);

    write_file("w.csv", "k,v\na,1\nb,2\nc,3\nd,4\ne,5\nf,2.5\n");
    spec_init(&s, "w.csv");
    TallyStep *g = step(&s, TALLY_STEP_GROUP_BY, "k", true, "--group-by");
    tally_text_push(&g->aggs, &g->n_aggs, "sum(v)", "--agg");
    CHECK_EQ_INT(run_stats(&s, &st), TALLY_OK);
    CHECK_EQ_INT(st.rows_read, 6);
    CHECK_EQ_STR(st.converted, "k=6 v=6");
    CHECK_EQ_INT(st.groups, 6);
    CHECK_EQ_INT(st.restarts, 1);
    tally_free(st.converted);
    text = read_path(path_of("out.csv"));
    CHECK_EQ_STR(text, "k,sum_v\na,1.0\nb,2.0\nc,3.0\nd,4.0\ne,5.0\nf,2.5\n");
    tl_free(text);

    /* a failed run counts nothing */
    tally_free(s.inputs[0]);
    s.inputs[0] = tally_strdup("nope.csv");
    CHECK_EQ_INT(run_stats(&s, &st), TALLY_ERR_IO);
    CHECK_EQ_INT(st.rows_read, 0);
    CHECK(st.converted == NULL);
    tally_spec_free(&s);
}

TL_TEST(test_too_long)
{
    TallySpec s;
    write_file("sales.csv", sales);
    spec_init(&s, "sales.csv");
    /* ten nodes per step: the bound is on nodes, and a run plans on a deep
     * stack (TL_PLAN_MAX_NODES) */
    for (int i = 0; i < TL_PLAN_MAX_NODES / 10 + 1; i++)
        step(&s, TALLY_STEP_WITH, "amount = amount + 1, amount = amount + 1, "
             "amount = amount + 1, amount = amount + 1, amount = amount + 1, "
             "amount = amount + 1, amount = amount + 1, amount = amount + 1, "
             "amount = amount + 1, amount = amount + 1", true, "--with");
    check_usage(&s, "the pipeline is too long");
}

static void rm_dir(void)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", g_dir);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    setenv("TALLY_BATCH_ROWS", "4", 1);
    snprintf(g_dir, sizeof g_dir, "%s/tally-plan-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    TL_RUN(test_explain_both_forms);
    TL_RUN(test_run_pipeline);
    TL_RUN(test_select_with_drop_rename);
    TL_RUN(test_limit_filter_distinct);
    TL_RUN(test_head_stops_early);
    TL_RUN(test_projection_pushdown);
    TL_RUN(test_restart_widens);
    TL_RUN(test_several_inputs);
    TL_RUN(test_usage_errors);
    TL_RUN(test_failed_run_keeps_output);
    TL_RUN(test_stats);
    TL_RUN(test_too_long);
    rm_dir();
    return tl_test_summary(__FILE__);
}
