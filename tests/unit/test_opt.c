/*
 * test_opt.c -- the optimizer's rules on the expression arena and on small
 * hand-built plans.
 *
 * Expressions are parsed and resolved against a schema of 6 columns, then
 * simplified in a value or a filter context (tl_opt_simplify_expr) and
 * printed.  Every rule gets a test that it fires and one that it does not
 * fire where it would be wrong.  Besides the printed form, each rewrite is
 * checked semantically: the original and the simplified expression are
 * evaluated over a batch full of nulls, NaN, -0.0 and extremes, and must
 * give the same values (value context) or select the same rows (filter
 * context).
 *
 *   a int64    1    -3    null  4     0     5
 *   b float64  2.5  null  -0.0  nan   1.0   -4.0
 *   s string   x    yy    null  zz    x     ""
 *   t bool     T    F     null  T     F     null
 *   u bool     F    null  T     T     null  F
 *   k int64    5    5     6     7     null  5
 */
#include "../../lib/opt/rules.h"
#include "../../lib/dsl/dsl.h"
#include "../../lib/expr/eval.h"
#include "../../lib/plan/resolve.h"
#include "tl_test.h"

#include <math.h>
#include <stdio.h>

static TlPlan *P;
static TlError err;
static TlSchema sch;
static TlBatch *batch;

static void setup(void)
{
    TlBuilder b;
    int64_t av[] = {1, -3, 0, 4, 0, 5}, kv[] = {5, 5, 6, 7, 0, 5};
    double bv[] = {2.5, 0, -0.0, NAN, 1.0, -4.0};
    const char *sv[] = {"x", "yy", NULL, "zz", "x", ""};
    const char *tv = "TFNTFN", *uv = "FNTTNF";
    P = tl_calloc(1, sizeof *P);
    tl_arena_init(&P->nodes, sizeof(TlPlanNode));
    tl_arena_init(&P->ids, sizeof(TlExprId));
    tl_arena_init(&P->ints, sizeof(int32_t));
    P->root = P->opt_root = P->scan = TL_NO_ID;
    tl_ea_init(&P->ea, &err);
    tl_schema_add(&sch, "a", TL_TINT64, &err);
    tl_schema_add(&sch, "b", TL_TFLOAT64, &err);
    tl_schema_add(&sch, "s", TL_TSTRING, &err);
    tl_schema_add(&sch, "t", TL_TBOOL, &err);
    tl_schema_add(&sch, "u", TL_TBOOL, &err);
    tl_schema_add(&sch, "k", TL_TINT64, &err);
    batch = tl_batch_new(&sch, 6, 6);
    tl_builder_init(&b, TL_TINT64);
    for (int i = 0; i < 6; i++)
        if (i == 2) tl_builder_append_null(&b);
        else tl_builder_append_i64(&b, av[i]);
    batch->cols[0] = tl_builder_finish(&b);
    tl_builder_free(&b);
    tl_builder_init(&b, TL_TFLOAT64);
    for (int i = 0; i < 6; i++)
        if (i == 1) tl_builder_append_null(&b);
        else tl_builder_append_f64(&b, bv[i]);
    batch->cols[1] = tl_builder_finish(&b);
    tl_builder_free(&b);
    tl_builder_init(&b, TL_TSTRING);
    for (int i = 0; i < 6; i++)
        if (!sv[i]) tl_builder_append_null(&b);
        else tl_builder_append_str(&b, sv[i], strlen(sv[i]));
    batch->cols[2] = tl_builder_finish(&b);
    tl_builder_free(&b);
    for (int c = 0; c < 2; c++) {
        const char *v = c ? uv : tv;
        tl_builder_init(&b, TL_TBOOL);
        for (int i = 0; i < 6; i++)
            if (v[i] == 'N') tl_builder_append_null(&b);
            else tl_builder_append_bool(&b, v[i] == 'T');
        batch->cols[3 + c] = tl_builder_finish(&b);
        tl_builder_free(&b);
    }
    tl_builder_init(&b, TL_TINT64);
    for (int i = 0; i < 6; i++)
        if (i == 4) tl_builder_append_null(&b);
        else tl_builder_append_i64(&b, kv[i]);
    batch->cols[5] = tl_builder_finish(&b);
    tl_builder_free(&b);
}

static void teardown(void)
{
    tl_batch_free(batch);
    tl_schema_free(&sch);
    tl_plan_free(P);
}

static TlExprId prep(const char *text)
{
    uint16_t src;
    TlExprId root, id = TL_NO_ID;
    if (tl_ea_add_src(&P->ea, text, "--filter", &src, &err) != TL_OK ||
        tl_parse_expr(&P->ea, src, 0, (uint32_t)strlen(text), &root, &err) != TL_OK ||
        tl_resolve_expr(&P->ea, root, &sch, false, &id, &err) != TL_OK)
        fprintf(stderr, "prep failed: %s: %s\n", text, err.msg);
    return id;
}

/* A digest of e over the batch: per row T/F/N (bool) or the value, or the
 * selected rows in a filter context, or "ERR". */
static void digest(TlExprId e, bool pred, char *out, size_t cap)
{
    TlArray *a = NULL;
    out[0] = 0;
    if (pred) {
        uint32_t *sel = NULL;
        int64_t n = 0;
        bool all = false;
        if (tl_eval_filter(&P->ea, e, batch, &sel, &n, &all, &err) != TL_OK) {
            snprintf(out, cap, "ERR");
            return;
        }
        size_t len = 0;
        for (int64_t i = 0; i < n; i++)
            len += (size_t)snprintf(out + len, cap - len, "%u,", all ? (unsigned)i : sel[i]);
        tl_free(sel);
        return;
    }
    if (tl_eval(&P->ea, e, batch, &a, &err) != TL_OK) {
        snprintf(out, cap, "ERR");
        return;
    }
    size_t len = 0;
    for (int64_t i = 0; i < a->length && len < cap - 40; i++) {
        if (!tl_array_valid(a, i)) len += (size_t)snprintf(out + len, cap - len, "N,");
        else if (a->type == TL_TBOOL)
            len += (size_t)snprintf(out + len, cap - len, "%c,", tl_array_bool(a, i) ? 'T' : 'F');
        else if (a->type == TL_TINT64)
            len += (size_t)snprintf(out + len, cap - len, "%lld,", (long long)tl_array_i64(a)[i]);
        else if (a->type == TL_TFLOAT64) {
            double f = tl_array_f64(a)[i];
            len += (size_t)snprintf(out + len, cap - len, "%a,", f);
        } else
            len += (size_t)snprintf(out + len, cap - len, "?,");
    }
    tl_array_release(a);
}

/* Simplify text; return the printed result and check the rewrite keeps
 * the semantics. */
static const char *simp(const char *text, bool pred)
{
    static char buf[512];
    char d1[512], d2[512];
    TlExprId e = prep(text), out = TL_NO_ID;
    if (e == TL_NO_ID) return "PREP";
    if (tl_opt_simplify_expr(P, e, pred, "test", &out, &err) != TL_OK) return "FAIL";
    digest(e, pred, d1, sizeof d1);
    digest(out, pred, d2, sizeof d2);
    if (strcmp(d1, "ERR") != 0 && strcmp(d1, d2) != 0) {
        fprintf(stderr, "semantics changed for %s: %s vs %s\n", text, d1, d2);
        return "SEMANTICS";
    }
    tl_expr_print(&P->ea, out, buf, sizeof buf);
    return buf;
}

#define V(text) simp(text, false)
#define F(text) simp(text, true)

TL_TEST(fold_constants)
{
    CHECK_EQ_STR(V("1 + 2 * 3"), "7");
    CHECK_EQ_STR(V("a + (1 + 2)"), "a + 3");
    CHECK_EQ_STR(V("b > 100"), "b > 100.0");          /* cast folded */
    CHECK_EQ_STR(V("upper('ab') || 'c'"), "'ABc'");
    CHECK_EQ_STR(V("-0.0"), "-0.0");
    CHECK_EQ_STR(V("0.0 / 0.0"), "cast('nan' as float64)");
    CHECK_EQ_STR(V("1 // 0"), "null");                 /* null, not an error */
    CHECK_EQ_STR(V("null + 1"), "null");
    /* errors are left for run time */
    CHECK_EQ_STR(V("9223372036854775807 + 1"), "9223372036854775807 + 1");
    CHECK_EQ_STR(V("cast('x' as int)"), "cast('x' as int64)");
    CHECK_EQ_STR(V("sqrt(-1.0)"), "sqrt(-1.0)");
    CHECK_EQ_STR(V("if(a > 0, sqrt(-1.0), 1.0)"), "if(a > 0, sqrt(-1.0), 1.0)");
    /* no identities */
    CHECK_EQ_STR(V("b + 0.0"), "b + 0.0");
    CHECK_EQ_STR(V("a * 1"), "a * 1");
}

TL_TEST(and_or_identities)
{
    CHECK_EQ_STR(V("t and true"), "t");
    CHECK_EQ_STR(V("t or false"), "t");
    /* value context: these stay (or are only folded when constant) */
    CHECK_EQ_STR(V("true and t"), "true and t");
    CHECK_EQ_STR(V("t and false"), "t and false");
    CHECK_EQ_STR(V("t and null"), "t and null");
    /* filter context */
    CHECK_EQ_STR(F("true and t"), "t");
    CHECK_EQ_STR(F("t and false"), "false");
    CHECK_EQ_STR(F("false and t"), "false");
    CHECK_EQ_STR(F("t and null"), "false");
    CHECK_EQ_STR(F("t or null"), "t");
    CHECK_EQ_STR(F("false or t"), "t");
    CHECK_EQ_STR(F("t or true"), "true");
    CHECK_EQ_STR(F("a > 1 and (true and u)"), "a > 1 and u");
    /* the context does not pass through NOT or functions */
    CHECK_EQ_STR(F("not (t and null)"), "not t"); /* not null folds to null */
    CHECK_EQ_STR(V("not (t and null)"), "not t or null");
    CHECK_EQ_STR(F("coalesce(t and null, true)"), "coalesce(t and null, true)");
}

TL_TEST(and_not)
{
    CHECK_EQ_STR(F("t and not t"), "false");
    CHECK_EQ_STR(F("u and (a > 1 and not u)"), "false");
    CHECK_EQ_STR(V("t and not t"), "t and not t");  /* null and not null = null */
    CHECK_EQ_STR(F("t and not u"), "t and not u");
}

TL_TEST(contradictions)
{
    CHECK_EQ_STR(F("a > 5 and a <= 5"), "false");
    CHECK_EQ_STR(F("a = k and a != k"), "false");
    CHECK_EQ_STR(F("a < k and k < a"), "false");   /* swapped operands */
    CHECK_EQ_STR(F("b > 1.0 and b <= 1.0"), "false");
    CHECK_EQ_STR(F("b = 1.0 and (s = 'x' and b < 1.0)"), "false");
    CHECK_EQ_STR(F("a is null and a is not null"), "false");
    /* compatible case sets stay */
    CHECK_EQ_STR(F("a >= 5 and a <= 5"), "a >= 5 and a <= 5");
    CHECK_EQ_STR(F("a < k and a != k"), "a < k and a != k");
    CHECK_EQ_STR(F("a < k and k > a"), "a < k and k > a");
    /* not in a value context */
    CHECK_EQ_STR(V("a > 5 and a <= 5"), "a > 5 and a <= 5");
}

TL_TEST(not_rules)
{
    CHECK_EQ_STR(V("not not t"), "t");
    CHECK_EQ_STR(V("not (a < k)"), "a >= k");
    CHECK_EQ_STR(V("not (a = 1)"), "a != 1");
    CHECK_EQ_STR(V("not (b <= 1.0)"), "b > 1.0");     /* NaN and -0.0 rows */
    CHECK_EQ_STR(V("not (s > 'x')"), "s <= 'x'");
    CHECK_EQ_STR(V("not (t and u)"), "not t or not u");
    CHECK_EQ_STR(V("not (a > 1 or s = 'x')"), "a <= 1 and s != 'x'");
    CHECK_EQ_STR(V("not (a is null)"), "a is not null");
    CHECK_EQ_STR(V("not (a in (1, null))"), "a not in (1, null)");
    CHECK_EQ_STR(V("not (a between 1 and 4)"), "a not between 1 and 4");
    CHECK_EQ_STR(V("not (s like 'x%')"), "s not like 'x%'");
    CHECK_EQ_STR(V("not not not (a > 1 and not (k = 5))"), "a <= 1 or k = 5");
}

TL_TEST(case_branches)
{
    CHECK_EQ_STR(V("case when true then a else k end"), "a");
    CHECK_EQ_STR(V("case when false then a else k end"), "k");
    CHECK_EQ_STR(V("case when null then a when t then k end"), "case when t then k end");
    CHECK_EQ_STR(V("case when t then a when true then k when u then 1 end"),
                 "case when t then a else k end");
    CHECK_EQ_STR(V("case when false then a end"), "null");
    CHECK_EQ_STR(V("if(1 > 2, a, k)"), "k");
    CHECK_EQ_STR(V("if(t, a, k)"), "if(t, a, k)");
    CHECK_EQ_STR(V("coalesce(3, a)"), "3");
    CHECK_EQ_STR(V("coalesce(a, 3)"), "coalesce(a, 3)");
}

/* ---------------------------------------------------------- plans */

static TlPlanId scan_node(void)
{
    TlPlanId id;
    tl_plan_push(P, TL_PLAN_SCAN, TL_NO_ID, &id, &err);
    tl_plan_node(P, id)->schema = &sch;
    return id;
}

static TlPlanId filter_node(TlPlanId child, const char *text, const TlSchema *in)
{
    TlExprId e;
    uint16_t src;
    TlExprId root;
    uint32_t start;
    TlPlanId id;
    tl_ea_add_src(&P->ea, text, "--filter", &src, &err);
    tl_parse_expr(&P->ea, src, 0, (uint32_t)strlen(text), &root, &err);
    if (tl_resolve_expr(&P->ea, root, in, false, &e, &err) != TL_OK)
        fprintf(stderr, "resolve: %s\n", err.msg);
    tl_plan_push_ids(P, &e, 1, &start, &err);
    tl_plan_push(P, TL_PLAN_FILTER, child, &id, &err);
    tl_plan_node(P, id)->exprs = start;
    tl_plan_node(P, id)->n_exprs = 1;
    return id;
}

/* Optimize the plan at root and print the tree. */
static const char *opt_tree(TlPlanId root)
{
    static char out[2048];
    char *buf = NULL;
    size_t len = 0, cap = 0;
    TlPlanId r = root;
    out[0] = 0;
    if (tl_opt_simplify(P, r, &r, &err) != TL_OK ||
        tl_opt_pushdown_filter(P, r, &r, &err) != TL_OK ||
        tl_opt_simplify(P, r, &r, &err) != TL_OK)
        return "FAIL";
    if (tl_plan_print_tree(P, r, 0, &buf, &len, &cap, &err) != TL_OK) return "FAIL";
    snprintf(out, sizeof out, "%s", buf);
    tl_free(buf);
    return out;
}

TL_TEST(pushdown_filters)
{
    TlSchema *ws;
    TlPlanId s = scan_node(), w, f, sorted, lim;
    TlExprId ex[7];
    uint32_t start;
    /* with v = a * 2, then filter v > 4 and s = 'x' */
    tl_plan_schema_new(P, &ws, &err);
    for (int c = 0; c < 6; c++) {
        TlExpr t;
        memset(&t, 0, sizeof t);
        t.kind = TL_X_COL;
        t.type = (uint8_t)sch.fields[c].type;
        t.col = c;
        t.name = sch.fields[c].name;
        tl_ea_push(&P->ea, &t, NULL, 0, &ex[c], &err);
        tl_schema_add(ws, sch.fields[c].name, sch.fields[c].type, &err);
    }
    ex[6] = prep("a * 2");
    tl_schema_add(ws, "v", TL_TINT64, &err);
    tl_plan_push_ids(P, ex, 7, &start, &err);
    tl_plan_push(P, TL_PLAN_PROJECT, s, &w, &err);
    tl_plan_node(P, w)->exprs = start;
    tl_plan_node(P, w)->n_exprs = 7;
    tl_plan_node(P, w)->schema = ws;
    f = filter_node(w, "v > 4 and s = 'x'", ws);
    CHECK_EQ_STR(opt_tree(f),
                 "project a, b, s, t, u, k, a * 2 as v\n"
                 "  filter a * 2 > 4 and s = 'x'\n"
                 "    scan \n");
    /* below a sort without a limit; not below a limit */
    {
        int32_t fl = 0;
        uint32_t ks, fs;
        TlExprId key = ex[0];
        tl_plan_push_ids(P, &key, 1, &ks, &err);
        tl_plan_push_ints(P, &fl, 1, &fs, &err);
        tl_plan_push(P, TL_PLAN_SORT, s, &sorted, &err);
        tl_plan_node(P, sorted)->exprs = ks;
        tl_plan_node(P, sorted)->n_exprs = 1;
        tl_plan_node(P, sorted)->flags = fs;
    }
    CHECK_EQ_STR(opt_tree(filter_node(sorted, "k = 5", &sch)),
                 "sort a\n  filter k = 5\n    scan \n");
    tl_plan_push(P, TL_PLAN_LIMIT, s, &lim, &err);
    tl_plan_node(P, lim)->limit = 3;
    CHECK_EQ_STR(opt_tree(filter_node(lim, "k = 5", &sch)),
                 "filter k = 5\n  limit 3\n    scan \n");
    /* a guard keeps its place: filters never pass each other */
    CHECK_EQ_STR(opt_tree(filter_node(filter_node(sorted, "a > 0", &sch),
                                      "10 // a > 1", &sch)),
                 "sort a\n  filter 10 // a > 1\n    filter a > 0\n      scan \n");
    /* a filter that is always true goes away */
    CHECK_EQ_STR(opt_tree(filter_node(s, "t or true", &sch)), "scan \n");
}

TL_TEST(pushdown_having_on_keys)
{
    TlSchema *as;
    TlPlanId s = scan_node(), g;
    TlExprId keys[2], agg;
    uint32_t ks, gs;
    keys[0] = prep("k");
    keys[1] = prep("b");
    agg = prep("k"); /* stand-in aggregate column; only schema matters */
    {
        uint16_t src;
        TlExprId root;
        const char *text = "sum(a)";
        tl_ea_add_src(&P->ea, text, "--agg", &src, &err);
        tl_parse_expr(&P->ea, src, 0, (uint32_t)strlen(text), &root, &err);
        tl_resolve_expr(&P->ea, root, &sch, true, &agg, &err);
    }
    tl_plan_schema_new(P, &as, &err);
    tl_schema_add(as, "k", TL_TINT64, &err);
    tl_schema_add(as, "b", TL_TFLOAT64, &err);
    tl_schema_add(as, "n", TL_TINT64, &err);
    tl_plan_push_ids(P, keys, 2, &ks, &err);
    tl_plan_push_ids(P, &agg, 1, &gs, &err);
    tl_plan_push(P, TL_PLAN_AGGREGATE, s, &g, &err);
    tl_plan_node(P, g)->exprs = ks;
    tl_plan_node(P, g)->n_exprs = 2;
    tl_plan_node(P, g)->aggs = gs;
    tl_plan_node(P, g)->n_aggs = 1;
    tl_plan_node(P, g)->schema = as;
    CHECK_EQ_STR(opt_tree(filter_node(g, "k > 5", as)),
                 "aggregate by k, b: n = sum(a)\n  filter k > 5\n    scan \n");
    /* an aggregate column, or a float key, keeps it above */
    CHECK_EQ_STR(opt_tree(filter_node(g, "n > 5", as)),
                 "filter n > 5\n  aggregate by k, b: n = sum(a)\n    scan \n");
    CHECK_EQ_STR(opt_tree(filter_node(g, "b > 0.0", as)),
                 "filter b > 0.0\n  aggregate by k, b: n = sum(a)\n    scan \n");
}

TL_TEST(rule_log)
{
    TlExprId e = prep("not (a < 1)"), out;
    size_t before = P->opt_log_len;
    CHECK_EQ_INT(tl_opt_simplify_expr(P, e, false, "filter", &out, &err), TL_OK);
    CHECK(P->opt_log && strstr(P->opt_log + before,
                               "not-compare in filter: not a < 1 -> a >= 1") != NULL);
}

TL_TEST(cse_and_memo)
{
    TlSchema *ps;
    TlPlanId s = scan_node(), pr, out;
    TlExprId ex[3];
    uint32_t start;
    TlEvalMemo memo;
    ex[0] = prep("(a * 2) + 1");
    ex[1] = prep("(a * 2) * 3");
    ex[2] = prep("a * 2");
    tl_plan_schema_new(P, &ps, &err);
    tl_schema_add(ps, "x", TL_TINT64, &err);
    tl_schema_add(ps, "y", TL_TINT64, &err);
    tl_schema_add(ps, "z", TL_TINT64, &err);
    tl_plan_push_ids(P, ex, 3, &start, &err);
    tl_plan_push(P, TL_PLAN_PROJECT, s, &pr, &err);
    tl_plan_node(P, pr)->exprs = start;
    tl_plan_node(P, pr)->n_exprs = 3;
    tl_plan_node(P, pr)->schema = ps;
    CHECK_EQ_INT(tl_opt_cse(P, pr, &out, &err), TL_OK);
    CHECK(out != pr);
    {
        const TlPlanNode *n = tl_plan_node(P, out);
        TlExprId x = tl_plan_expr(P, n->exprs, 0), y = tl_plan_expr(P, n->exprs, 1);
        TlExprId z = tl_plan_expr(P, n->exprs, 2);
        TlExprId xa = tl_ea_arg(&P->ea, tl_ea_node(&P->ea, x), 0);
        TlExprId ya = tl_ea_arg(&P->ea, tl_ea_node(&P->ea, y), 0);
        TlExprId v[3] = {x, y, z};
        CHECK(xa == ya);
        CHECK(z == xa);
        /* the memo computes the shared a * 2 once per batch */
        memset(&memo, 0, sizeof memo);
        CHECK_EQ_INT(tl_eval_memo_init(&memo, &P->ea, v, 3, &err), TL_OK);
        CHECK(tl_eval_memo_shared(&memo, xa));
        CHECK(!tl_eval_memo_shared(&memo, x));
        memo.batch = batch;
        for (int i = 0; i < 3; i++) {
            TlArray *a = NULL, *b = NULL;
            CHECK_EQ_INT(tl_eval_memo(&P->ea, v[i], batch, &memo, &a, &err), TL_OK);
            CHECK_EQ_INT(tl_eval(&P->ea, ex[i], batch, &b, &err), TL_OK);
            CHECK(a && b && a->length == 6 && a->null_count == b->null_count);
            for (int64_t r = 0; a && b && r < 6; r++)
                if (tl_array_valid(b, r))
                    CHECK_EQ_INT(tl_array_i64(a)[r], tl_array_i64(b)[r]);
            tl_array_release(a);
            tl_array_release(b);
        }
        CHECK_EQ_INT(memo.n, 1);
        tl_eval_memo_clear(&memo);
        CHECK_EQ_INT(memo.n, 0);
        /* another batch is not served from the cache */
        {
            TlArray *a = NULL;
            CHECK_EQ_INT(tl_eval_memo(&P->ea, x, batch, &memo, &a, &err), TL_OK);
            CHECK_EQ_INT(memo.n, 0); /* memo.batch is NULL now */
            tl_array_release(a);
        }
        tl_eval_memo_free(&memo);
    }
    /* nothing shared: the node stays */
    {
        TlExprId one = prep("a + k");
        TlPlanId p2;
        tl_plan_push_ids(P, &one, 1, &start, &err);
        tl_plan_push(P, TL_PLAN_PROJECT, s, &p2, &err);
        tl_plan_node(P, p2)->exprs = start;
        tl_plan_node(P, p2)->n_exprs = 1;
        tl_plan_node(P, p2)->schema = ps;
        CHECK_EQ_INT(tl_opt_cse(P, p2, &out, &err), TL_OK);
        CHECK(out == p2);
    }
}

TL_TEST(merge_projects)
{
    TlSchema *ls, *us;
    TlPlanId s = scan_node(), low, up, out;
    TlExprId le[2], ue[2];
    uint32_t start;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    le[0] = prep("a * 2");
    le[1] = prep("k");
    tl_plan_schema_new(P, &ls, &err);
    tl_schema_add(ls, "v", TL_TINT64, &err);
    tl_schema_add(ls, "k", TL_TINT64, &err);
    tl_plan_push_ids(P, le, 2, &start, &err);
    tl_plan_push(P, TL_PLAN_PROJECT, s, &low, &err);
    tl_plan_node(P, low)->exprs = start;
    tl_plan_node(P, low)->n_exprs = 2;
    tl_plan_node(P, low)->schema = ls;
    /* upper: k, v as w (columns of the lower one) */
    for (int i = 0; i < 2; i++) {
        TlExpr t;
        memset(&t, 0, sizeof t);
        t.kind = TL_X_COL;
        t.type = TL_TINT64;
        t.col = 1 - i;
        t.name = ls->fields[1 - i].name;
        tl_ea_push(&P->ea, &t, NULL, 0, &ue[i], &err);
    }
    tl_plan_schema_new(P, &us, &err);
    tl_schema_add(us, "k", TL_TINT64, &err);
    tl_schema_add(us, "w", TL_TINT64, &err);
    tl_plan_push_ids(P, ue, 2, &start, &err);
    tl_plan_push(P, TL_PLAN_PROJECT, low, &up, &err);
    tl_plan_node(P, up)->exprs = start;
    tl_plan_node(P, up)->n_exprs = 2;
    tl_plan_node(P, up)->schema = us;
    CHECK_EQ_INT(tl_opt_merge_projects(P, up, &out, &err), TL_OK);
    CHECK_EQ_INT(tl_plan_print_tree(P, out, 0, &buf, &len, &cap, &err), TL_OK);
    CHECK_EQ_STR(buf, "project k, a * 2 as w\n  scan \n");
    tl_free(buf);
    /* a computing upper project does not merge */
    CHECK_EQ_INT(tl_opt_merge_projects(P, low, &out, &err), TL_OK);
    CHECK(out == low);
}

int main(void)
{
    setup();
    TL_RUN(fold_constants);
    TL_RUN(and_or_identities);
    TL_RUN(and_not);
    TL_RUN(contradictions);
    TL_RUN(not_rules);
    TL_RUN(case_branches);
    TL_RUN(pushdown_filters);
    TL_RUN(pushdown_having_on_keys);
    TL_RUN(rule_log);
    TL_RUN(cse_and_memo);
    TL_RUN(merge_projects);
    teardown();
    return tl_test_summary(__FILE__);
}
