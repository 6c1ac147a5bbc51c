/*
 * test_parser.c -- the expression front end (lib/dsl): lexer, Pratt parser,
 * printer, equality, caret errors, items and auto names, the op table.
 *
 * Most checks go through pp(): parse a text, print the tree, compare with
 * the expected canonical text; each also checks the round trip (printed
 * text parses to an equal tree and prints identically).
 */
#include "../../lib/dsl/dsl.h"
#include "tl_test.h"

#include <math.h>
#include <stdlib.h>

static TlExprArena ea;
static TlError err;

static TlStatus parse(const char *text, const char *origin, TlExprId *id)
{
    uint16_t src;
    TlStatus st = tl_ea_add_src(&ea, text, origin, &src, &err);
    if (st != TL_OK) return st;
    return tl_parse_expr(&ea, src, 0, (uint32_t)strlen(text), id, &err);
}

/* Parse text and print it; round-trips the printed text too.  Returns a
 * static buffer, or "ERROR: <message>". */
static const char *pp(const char *text)
{
    static char out[8192], again[8192];
    TlExprId id, id2;
    if (parse(text, "--filter", &id) != TL_OK) {
        snprintf(out, sizeof out, "ERROR: %s", err.msg);
        return out;
    }
    tl_expr_print(&ea, id, out, sizeof out);
    if (parse(out, "--printed", &id2) != TL_OK) {
        fprintf(stderr, "printed text of %s does not parse: %s\n%s\n", text, out, err.msg);
        return "ROUND TRIP PARSE FAILED";
    }
    if (!tl_expr_equal(&ea, id, id2)) {
        fprintf(stderr, "round trip of %s changed the tree: %s\n", text, out);
        return "ROUND TRIP NOT EQUAL";
    }
    tl_expr_print(&ea, id2, again, sizeof again);
    if (strcmp(out, again) != 0) return "PRINTER NOT A FIXED POINT";
    return out;
}

/* Parse text expecting an error; returns the whole message. */
static const char *perr(const char *text, const char *origin)
{
    TlExprId id;
    if (parse(text, origin, &id) == TL_OK) return "NO ERROR";
    if (err.code != TL_ERR_USAGE) return "NOT A USAGE ERROR";
    return err.msg;
}

static const TlExpr *node_of(const char *text)
{
    TlExprId id;
    if (parse(text, "--filter", &id) != TL_OK) {
        fprintf(stderr, "%s: %s\n", text, err.msg);
        return NULL;
    }
    return tl_ea_node(&ea, id);
}

static const TlExpr *arg(const TlExpr *e, uint32_t i)
{
    return tl_ea_node(&ea, tl_ea_arg(&ea, e, i));
}

/* ------------------------------------------------------------ tests */

TL_TEST(test_precedence)
{
    static const char *cases[][2] = {
        {"a + b * c", "a + b * c"},
        {"(a + b) * c", "(a + b) * c"},
        {"a * (b + c)", "a * (b + c)"},
        {"a - b - c", "a - b - c"},
        {"a - (b - c)", "a - (b - c)"},
        {"((a))", "a"},
        {"a / b * c", "a / b * c"},
        {"a // b % c", "a // b % c"},
        {"a or b and c", "a or b and c"},
        {"(a or b) and c", "(a or b) and c"},
        {"a and b or c and d", "a and b or c and d"},
        {"a and (b and c)", "a and (b and c)"},
        {"not a = b", "not a = b"},
        {"not a and b", "not a and b"},
        {"not (a and b)", "not (a and b)"},
        {"NOT NOT a", "not not a"},
        {"a = not b", "a = (not b)"},
        {"-x::int", "-cast(x as int64)"},
        {"-5::string", "-cast(5 as string)"},
        {"x::int::string", "cast(cast(x as int64) as string)"},
        {"-(5)", "-(5)"},
        {"- -5", "-(-5)"},
        {"--x", "-(-x)"},
        {"-(a + b)", "-(a + b)"},
        {"-a * b", "-a * b"},
        {"+a", "a"},
        {"1 - -1", "1 - -1"},
        {"a || b || c", "a || b || c"},
        {"a + b || c", "a + b || c"},
        {"a || (b + c)", "a || b + c"},
        {"(a || b) + c", "(a || b) + c"},
        {"a || b = c", "a || b = c"},
        {"a < b and b <= c or c > d and d >= e", "a < b and b <= c or c > d and d >= e"},
        {"a <> b", "a != b"},
        {"a == b", "a = b"},
        {"a != b", "a != b"},
        {"(a = b) = c", "(a = b) = c"},
        {"a = (b = c)", "a = (b = c)"},
        {"x between 1 and 2 and y", "x between 1 and 2 and y"},
        {"x not between a + 1 and b * 2", "x not between a + 1 and b * 2"},
        {"x between (a and b) and c", "x between (a and b) and c"},
        {"x IS NULL", "x is null"},
        {"x is not null or y", "x is not null or y"},
        {"(a = b) is null", "(a = b) is null"},
        {"x in (1, 2, 3)", "x in (1, 2, 3)"},
        {"x NOT IN ('a')", "x not in ('a')"},
        {"x + 1 in (a or b, 2)", "x + 1 in (a or b, 2)"},
        {"name like 'a%'", "name like 'a%'"},
        {"name not like 'a' || b", "name not like 'a' || b"},
        {"not x in (1)", "not x in (1)"},
        {"(not x) in (1)", "(not x) in (1)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CHECK_EQ_STR(pp(cases[i][0]), cases[i][1]);
}

TL_TEST(test_functions)
{
    CHECK_EQ_STR(pp("SUM(x)"), "sum(x)");
    CHECK_EQ_STR(pp("avg(x)"), "mean(x)");
    CHECK_EQ_STR(pp("COUNT(*)"), "count(*)");
    CHECK_EQ_STR(pp("count()"), "count()");
    CHECK_EQ_STR(pp("count(x)"), "count(x)");
    CHECK_EQ_STR(pp("coalesce(a, b, 0)"), "coalesce(a, b, 0)");
    CHECK_EQ_STR(pp("if(a > 1, 'y', 'n')"), "if(a > 1, 'y', 'n')");
    CHECK_EQ_STR(pp("quantile(x, 0.5)"), "quantile(x, 0.5)");
    CHECK_EQ_STR(pp("first(x) + last(y)"), "first(x) + last(y)");
    CHECK_EQ_STR(pp("date_trunc('month', ts)"), "date_trunc('month', ts)");
    CHECK_EQ_STR(pp("cast(x as integer)"), "cast(x as int64)");
    CHECK_EQ_STR(pp("TRY_CAST(x AS double)"), "try_cast(x as float64)");
    CHECK_EQ_STR(pp("x::date"), "cast(x as date)");
    CHECK_EQ_STR(pp("case when a then 1 end"), "case when a then 1 end");
    CHECK_EQ_STR(pp("case when a > 1 then 'x' when b then 'y' else 'z' end"),
                 "case when a > 1 then 'x' when b then 'y' else 'z' end");
    CHECK_EQ_STR(pp("case x when 1 then 'a' when 2 then 'b' else 'c' end"),
                 "case when x = 1 then 'a' when x = 2 then 'b' else 'c' end");
    CHECK_EQ_STR(pp("sqrt(abs(x)) * round(y, 2)"), "sqrt(abs(x)) * round(y, 2)");

    const TlExpr *e = node_of("count(*)");
    CHECK(e && e->kind == TL_X_CALL && e->op == TL_OP_COUNT && e->n_args == 0 &&
          (e->flags & TL_XF_STAR));
    e = node_of("if(c, a, b)");
    CHECK(e && e->kind == TL_X_CALL && e->op == TL_OP_IF && e->n_args == 3);
    e = node_of("try_cast(x as int)");
    CHECK(e && e->kind == TL_X_CAST && e->lit_type == TL_TINT64 && (e->flags & TL_XF_TRY));
    e = node_of("case when a then 1 else 2 end");
    CHECK(e && e->kind == TL_X_CASE && e->n_args == 3 && (e->flags & TL_XF_ELSE));
    /* simple case reuses the operand's node */
    e = node_of("case x when 1 then 'a' when 2 then 'b' end");
    CHECK(e && e->kind == TL_X_CASE && e->n_args == 4 && !(e->flags & TL_XF_ELSE));
    if (e && e->n_args == 4) {
        const TlExpr *c1 = arg(e, 0), *c2 = arg(e, 2);
        CHECK(c1->op == TL_OP_EQ && c2->op == TL_OP_EQ);
        CHECK_EQ_INT(tl_ea_arg(&ea, c1, 0), tl_ea_arg(&ea, c2, 0));
    }
    e = node_of("x not in (1, 2)");
    CHECK(e && e->kind == TL_X_IN && e->n_args == 3 && (e->flags & TL_XF_NOT));
    e = node_of("x not between 1 and 2");
    CHECK(e && e->op == TL_OP_BETWEEN && (e->flags & TL_XF_NOT) && e->n_args == 3);
    e = node_of("x is not null");
    CHECK(e && e->op == TL_OP_IS_NULL && (e->flags & TL_XF_NOT));
    e = node_of("x not like 'a'");
    CHECK(e && e->op == TL_OP_LIKE && (e->flags & TL_XF_NOT));
}

TL_TEST(test_literals)
{
    const TlExpr *e;
    e = node_of("42");
    CHECK(e && e->kind == TL_X_LIT && e->lit_type == TL_TINT64 && e->v.i == 42);
    e = node_of("-9223372036854775808");
    CHECK(e && e->kind == TL_X_LIT && e->lit_type == TL_TINT64 && e->v.i == INT64_MIN);
    e = node_of("9223372036854775807");
    CHECK(e && e->lit_type == TL_TINT64 && e->v.i == INT64_MAX);
    e = node_of("9223372036854775808"); /* does not fit: a float */
    CHECK(e && e->lit_type == TL_TFLOAT64 && e->v.f == 9223372036854775808.0);
    e = node_of("-1.5e3");
    CHECK(e && e->kind == TL_X_LIT && e->lit_type == TL_TFLOAT64 && e->v.f == -1500.0);
    e = node_of(".5");
    CHECK(e && e->lit_type == TL_TFLOAT64 && e->v.f == 0.5);
    e = node_of("1e3");
    CHECK(e && e->lit_type == TL_TFLOAT64 && e->v.f == 1000.0);
    e = node_of("1.");
    CHECK(e && e->lit_type == TL_TFLOAT64 && e->v.f == 1.0);
    e = node_of("1e999");
    CHECK(e && e->lit_type == TL_TFLOAT64 && isinf(e->v.f) && e->v.f > 0);
    e = node_of("-0.0");
    CHECK(e && e->lit_type == TL_TFLOAT64 && e->v.f == 0 && signbit(e->v.f));
    e = node_of("'it''s'");
    CHECK(e && e->lit_type == TL_TSTRING && e->v.str.n == 4 && memcmp(e->v.str.s, "it's", 4) == 0);
    e = node_of("''");
    CHECK(e && e->lit_type == TL_TSTRING && e->v.str.n == 0);
    e = node_of("TRUE");
    CHECK(e && e->lit_type == TL_TBOOL && e->v.b);
    e = node_of("false");
    CHECK(e && e->lit_type == TL_TBOOL && !e->v.b);
    e = node_of("Null");
    CHECK(e && e->kind == TL_X_LIT && e->lit_type == TL_TNULL);
    e = node_of("date '2024-01-31'");
    CHECK(e && e->lit_type == TL_TDATE && e->v.d == 19753);
    e = node_of("timestamp '1970-01-01 00:00:01.5'");
    CHECK(e && e->lit_type == TL_TTIMESTAMP && e->v.i == 1500000);
    e = node_of("-x");
    CHECK(e && e->kind == TL_X_CALL && e->op == TL_OP_NEG);
    e = node_of("-5::int");
    CHECK(e && e->kind == TL_X_CALL && e->op == TL_OP_NEG);

    CHECK_EQ_STR(pp("42"), "42");
    CHECK_EQ_STR(pp("-42"), "-42");
    CHECK_EQ_STR(pp("-9223372036854775808"), "-9223372036854775808");
    CHECK_EQ_STR(pp("1.0"), "1.0");
    CHECK_EQ_STR(pp("1e3"), "1000.0");
    CHECK_EQ_STR(pp("-1.5e3"), "-1500.0");
    CHECK_EQ_STR(pp("1e16"), "1e+16");
    CHECK_EQ_STR(pp("0.00001"), "1e-05");
    CHECK_EQ_STR(pp("1e999"), "1e999");
    CHECK_EQ_STR(pp("-1e999"), "-1e999");
    CHECK_EQ_STR(pp("-(1e999)"), "-(1e999)");
    CHECK_EQ_STR(pp("-0.0"), "-0.0");
    CHECK_EQ_STR(pp("99999999999999999999"), "1e+20");
    CHECK_EQ_STR(pp("'it''s'"), "'it''s'");
    CHECK_EQ_STR(pp("'a\nb'"), "'a\nb'");
    CHECK_EQ_STR(pp("true or FALSE or NULL"), "true or false or null");
    CHECK_EQ_STR(pp("date '2024-01-31'"), "date '2024-01-31'");
    CHECK_EQ_STR(pp("TIMESTAMP '2024-01-31 12:00:00'"), "timestamp '2024-01-31 12:00:00'");
    CHECK_EQ_STR(pp("timestamp '2024-01-31'"), "timestamp '2024-01-31 00:00:00'");
    CHECK_EQ_STR(pp("timestamp '2024-01-31T03:04:05.25'"), "timestamp '2024-01-31 03:04:05.25'");
}

TL_TEST(test_columns)
{
    const TlExpr *e = node_of("\"unit price\"");
    CHECK(e && e->kind == TL_X_COL && strcmp(e->name, "unit price") == 0 && e->col == -1);
    e = node_of("\"a\"\"b\"");
    CHECK(e && e->kind == TL_X_COL && strcmp(e->name, "a\"b") == 0);
    e = node_of("Amount");
    CHECK(e && e->kind == TL_X_COL && strcmp(e->name, "Amount") == 0);
    /* soft keywords are column names where no keyword can stand */
    e = node_of("date");
    CHECK(e && e->kind == TL_X_COL && strcmp(e->name, "date") == 0);
    e = node_of("first + last");
    CHECK(e && e->kind == TL_X_CALL && e->op == TL_OP_ADD);
    CHECK_EQ_STR(pp("\"unit price\" * 2"), "\"unit price\" * 2");
    CHECK_EQ_STR(pp("\"x\""), "x");
    CHECK_EQ_STR(pp("\"and\" + \"end\""), "\"and\" + \"end\"");
    CHECK_EQ_STR(pp("date + timestamp"), "\"date\" + \"timestamp\"");
    CHECK_EQ_STR(pp("\"a\"\"b\""), "\"a\"\"b\"");
    CHECK_EQ_STR(pp("\"2x\" + \"é\""), "\"2x\" + \"é\"");
    CHECK_EQ_STR(pp("sum + count"), "sum + count");
    CHECK_EQ_STR(pp("_a1"), "_a1");
}

static void check_span(const char *text, uint32_t start, uint32_t len)
{
    const TlExpr *e = node_of(text);
    CHECK(e != NULL);
    if (!e) return;
    if (e->start != start || e->len != len)
        fprintf(stderr, "span of %s: %u+%u, expected %u+%u\n", text, e->start,
                e->len, start, len);
    CHECK(e->start == start && e->len == len);
}

TL_TEST(test_spans)
{
    check_span("a + b * c", 0, 9);
    check_span("  a + b  ", 2, 5);
    check_span("(a + b) * c", 0, 11);
    check_span("(a + b)", 1, 5);
    check_span("sum(x) + 1", 0, 10);
    check_span("sum( x )", 0, 8);
    check_span("x is not null", 0, 13);
    check_span("x not in (1, 2)", 0, 15);
    check_span("x between 1 and 2", 0, 17);
    check_span("-5", 0, 2);
    check_span("- x", 0, 3);
    check_span("not x", 0, 5);
    check_span("x::int", 0, 6);
    check_span("cast(x as int)", 0, 14);
    check_span("case when a then b end", 0, 22);
    check_span("date '2024-01-31'", 0, 17);
    check_span("\"a b\"", 0, 5);
    check_span("'it''s'", 0, 7);

    const TlExpr *e = node_of("(a + b) * c");
    if (e) {
        const TlExpr *l = arg(e, 0), *r = arg(e, 1);
        CHECK(l->start == 1 && l->len == 5);
        CHECK(r->start == 10 && r->len == 1);
    }
    e = node_of("case x when 10 then 1 end");
    if (e) {
        const TlExpr *c = arg(e, 0);
        CHECK(c->op == TL_OP_EQ && c->start == 12 && c->len == 2);
    }
}

TL_TEST(test_caret_errors)
{
    CHECK_EQ_STR(perr("amount > 100 and", "--filter"),
                 "syntax error: unexpected end of expression\n"
                 "  --filter: amount > 100 and\n"
                 "                            ^");
    CHECK_EQ_STR(perr("a * * b", "--filter"),
                 "syntax error: unexpected \"*\"\n"
                 "  --filter: a * * b\n"
                 "                ^");
    CHECK_EQ_STR(perr("x = 'abc", "--filter"),
                 "syntax error: unterminated string\n"
                 "  --filter: x = 'abc\n"
                 "                ^^^^");
    CHECK_EQ_STR(perr("\"abc", "--filter"),
                 "syntax error: unterminated quoted name\n"
                 "  --filter: \"abc\n"
                 "            ^^^^");
    CHECK_EQ_STR(perr("summ(amount) > 1", "/steps/2/filter"),
                 "unknown function \"summ\" (did you mean \"sum\"?)\n"
                 "  /steps/2/filter: summ(amount) > 1\n"
                 "                   ^^^^");
    CHECK_EQ_STR(perr("frobnicate(x)", "--filter"),
                 "unknown function \"frobnicate\"\n"
                 "  --filter: frobnicate(x)\n"
                 "            ^^^^^^^^^^");
    CHECK_EQ_STR(perr("1 + sum(x, y)", "--filter"),
                 "sum() takes 1 argument, got 2\n"
                 "  --filter: 1 + sum(x, y)\n"
                 "                ^^^^^^^^^");
    CHECK_EQ_STR(perr("substr(x)", "--filter"),
                 "substr() takes 2 to 3 arguments, got 1\n"
                 "  --filter: substr(x)\n"
                 "            ^^^^^^^^^");
    CHECK_EQ_STR(perr("coalesce()", "--filter"),
                 "coalesce() takes at least 1 argument, got 0\n"
                 "  --filter: coalesce()\n"
                 "            ^^^^^^^^^^");
    CHECK_EQ_STR(perr("a = b = c", "--filter"),
                 "syntax error: unexpected \"=\"\n"
                 "  --filter: a = b = c\n"
                 "                  ^");
    CHECK_EQ_STR(perr("a < b is null", "--filter"),
                 "syntax error: unexpected \"is\"\n"
                 "  --filter: a < b is null\n"
                 "                  ^^");
    CHECK_EQ_STR(perr("(a + b", "--filter"),
                 "syntax error: expected \")\"\n"
                 "  --filter: (a + b\n"
                 "                  ^");
    CHECK_EQ_STR(perr("x::foo", "--filter"),
                 "unknown type \"foo\"\n"
                 "  --filter: x::foo\n"
                 "               ^^^");
    CHECK_EQ_STR(perr("cast(x as integr)", "--filter"),
                 "unknown type \"integr\" (did you mean \"integer\"?)\n"
                 "  --filter: cast(x as integr)\n"
                 "                      ^^^^^^");
    CHECK_EQ_STR(perr("d > date '2024-13-01'", "--filter"),
                 "invalid date '2024-13-01' (expected YYYY-MM-DD)\n"
                 "  --filter: d > date '2024-13-01'\n"
                 "                ^^^^^^^^^^^^^^^^^");
    CHECK_EQ_STR(perr("sum(*)", "--filter"),
                 "syntax error: \"*\" is only allowed in count(*)\n"
                 "  --filter: sum(*)\n"
                 "                ^");
    CHECK_EQ_STR(perr("a b", "--filter"),
                 "syntax error: unexpected \"b\"\n"
                 "  --filter: a b\n"
                 "              ^");
    CHECK_EQ_STR(perr("a and", "--filter"),
                 "syntax error: unexpected end of expression\n"
                 "  --filter: a and\n"
                 "                 ^");
    CHECK_EQ_STR(perr("a # b", "--filter"),
                 "syntax error: unexpected \"#\"\n"
                 "  --filter: a # b\n"
                 "              ^");
    CHECK_EQ_STR(perr("x is 5", "--filter"),
                 "syntax error: expected \"null\"\n"
                 "  --filter: x is 5\n"
                 "                 ^");
    CHECK_EQ_STR(perr("case when a then 1", "--filter"),
                 "syntax error: expected \"when\", \"else\" or \"end\"\n"
                 "  --filter: case when a then 1\n"
                 "                              ^");
    CHECK_EQ_STR(perr("f(a b)", "--filter"),
                 "unknown function \"f\"\n"
                 "  --filter: f(a b)\n"
                 "            ^");
    CHECK_EQ_STR(perr("abs(a b)", "--filter"),
                 "syntax error: expected \",\" or \")\"\n"
                 "  --filter: abs(a b)\n"
                 "                  ^");
    CHECK_EQ_STR(perr("", "--filter"),
                 "syntax error: unexpected end of expression\n"
                 "  --filter: \n"
                 "            ^");
    CHECK_EQ_STR(perr("x in ()", "--filter"),
                 "syntax error: unexpected \")\"\n"
                 "  --filter: x in ()\n"
                 "                  ^");
    CHECK_EQ_STR(perr("a 'str'", "--filter"),
                 "syntax error: unexpected 'str'\n"
                 "  --filter: a 'str'\n"
                 "              ^^^^^");
    /* tabs and newlines are shown as spaces so the caret lines up */
    CHECK_EQ_STR(perr("a\t*\n* b", "--filter"),
                 "syntax error: unexpected \"*\"\n"
                 "  --filter: a * * b\n"
                 "                ^");
    /* alignment counts characters, not bytes */
    CHECK_EQ_STR(perr("'é' * * b", "--filter"),
                 "syntax error: unexpected \"*\"\n"
                 "  --filter: 'é' * * b\n"
                 "                  ^");
    CHECK_EQ_STR(perr("a + é", "--filter"),
                 "syntax error: unexpected \"é\"\n"
                 "  --filter: a + é\n"
                 "                ^");
}

TL_TEST(test_caret_window)
{
    char text[1024];
    size_t n = 0;
    for (int i = 0; i < 60; i++) n += (size_t)sprintf(text + n, "a%d + ", i % 10);
    size_t bad = n;
    n += (size_t)sprintf(text + n, "* ");
    for (int i = 0; i < 30; i++) n += (size_t)sprintf(text + n, "b + ");
    n += (size_t)sprintf(text + n, "c");
    const char *m = perr(text, "--filter");
    const char *l2 = strchr(m, '\n');
    CHECK(l2 != NULL);
    if (!l2) return;
    l2++;
    const char *l3 = strchr(l2, '\n');
    CHECK(l3 != NULL);
    if (!l3) return;
    l3++;
    CHECK(strncmp(l2, "  --filter: ...", 15) == 0);
    CHECK(strncmp(l3 - 4, "...\n", 4) == 0);
    CHECK(l3 - l2 - 1 < 110); /* a window, not the whole text */
    const char *caret = strchr(l3, '^');
    CHECK(caret != NULL && caret[1] == 0);
    if (caret) CHECK(l2[caret - l3] == '*');
    CHECK(bad > 100);

    /* the span near the end: the window stops at the end, no trailing ... */
    n = 0;
    for (int i = 0; i < 40; i++) n += (size_t)sprintf(text + n, "x + ");
    n += (size_t)sprintf(text + n, "y )");
    m = perr(text, "--filter");
    l2 = strchr(m, '\n') + 1;
    l3 = strchr(l2, '\n') + 1;
    caret = strchr(l3, '^');
    CHECK(caret && l2[caret - l3] == ')' && l2[caret - l3 + 1] == '\n');
}

TL_TEST(test_depth_limit)
{
    size_t n = 10000;
    char *t = malloc(2 * n + 2);
    if (!t) return;
    memset(t, '(', n);
    t[n] = '1';
    memset(t + n + 1, ')', n);
    t[2 * n + 1] = 0;
    const char *m = perr(t, "--filter");
    CHECK(strstr(m, "expression nested too deeply") == m);
    /* prefix chains */
    memset(t, '-', n);
    t[n] = 'x';
    t[n + 1] = 0;
    CHECK(strstr(perr(t, "--filter"), "nested too deeply") != NULL);
    /* left-associative chains are flat to parse but deep as trees */
    size_t k = 0;
    for (int i = 0; i < 3000; i++) k += (size_t)sprintf(t + k, "1+");
    t[k++] = '1';
    t[k] = 0;
    CHECK(strstr(perr(t, "--filter"), "nested too deeply") != NULL);
    k = 0;
    for (int i = 0; i < 3000; i++) k += (size_t)sprintf(t + k, "not ");
    t[k++] = 'x';
    t[k] = 0;
    CHECK(strstr(perr(t, "--filter"), "nested too deeply") != NULL);
    /* moderate nesting is fine */
    memset(t, '(', 500);
    t[500] = '1';
    memset(t + 501, ')', 500);
    t[1001] = 0;
    CHECK_EQ_STR(pp(t), "1");
    k = 0;
    for (int i = 0; i < 900; i++) k += (size_t)sprintf(t + k, "a+");
    t[k++] = 'a';
    t[k] = 0;
    TlExprId id;
    CHECK(parse(t, "--filter", &id) == TL_OK);
    free(t);
}

TL_TEST(test_equal)
{
    TlExprId a = 0, b = 0;
    CHECK(parse("x + 1", "--t", &a) == TL_OK && parse("(x) + (1)", "--t", &b) == TL_OK);
    CHECK(tl_expr_equal(&ea, a, b));
    CHECK(parse("x + 2", "--t", &b) == TL_OK);
    CHECK(!tl_expr_equal(&ea, a, b));
    CHECK(parse("x + 1.0", "--t", &b) == TL_OK);
    CHECK(!tl_expr_equal(&ea, a, b));
    CHECK(parse("y + 1", "--t", &b) == TL_OK);
    CHECK(!tl_expr_equal(&ea, a, b));
    CHECK(parse("0.0", "--t", &a) == TL_OK && parse("-0.0", "--t", &b) == TL_OK);
    CHECK(!tl_expr_equal(&ea, a, b));
    CHECK(parse("x in (1, 2)", "--t", &a) == TL_OK && parse("x not in (1, 2)", "--t", &b) == TL_OK);
    CHECK(!tl_expr_equal(&ea, a, b));
    CHECK(parse("'ab'", "--t", &a) == TL_OK && parse("'ab'", "--t", &b) == TL_OK);
    CHECK(tl_expr_equal(&ea, a, b));
    CHECK(parse("'ab'", "--t", &a) == TL_OK && parse("'abc'", "--t", &b) == TL_OK);
    CHECK(!tl_expr_equal(&ea, a, b));
    CHECK(parse("avg(x)", "--t", &a) == TL_OK && parse("mean(x)", "--t", &b) == TL_OK);
    CHECK(tl_expr_equal(&ea, a, b));
}

TL_TEST(test_print_truncation)
{
    TlExprId id;
    char small[8];
    CHECK(parse("abc + defgh", "--t", &id) == TL_OK);
    size_t n = tl_expr_print(&ea, id, small, sizeof small);
    CHECK_EQ_INT(n, 11);
    CHECK_EQ_STR(small, "abc + d");
    CHECK_EQ_INT(tl_expr_print(&ea, id, NULL, 0), 11);
}

TL_TEST(test_round_trip)
{
    static const char *exprs[] = {
        "amount > 100 and region != 'test'",
        "sum(amount) / count(*)",
        "coalesce(a, b, c) || '-' || lower(trim(name))",
        "case when x < 0 then -x when x = 0 then null else x end",
        "case k when 'a' then 1 else 0 end",
        "not (a or b) and not c",
        "x between -1 and 1 or y not between a and b",
        "cast(x as string) like '%a%' and y::float > 1.5",
        "a % b // c * d / e - f + g",
        "if(a is null, 0, a) in (1, 2, -3)",
        "- - - x",
        "-(-(-1))",
        "1 - (2 - (3 - 4))",
        "(((a = b) = c) = d)",
        "starts_with(\"unit price\", 'x''y')",
        "date '2024-02-29' < d and ts >= timestamp '2024-01-01 00:00:00.000001'",
        "quantile(x, 0.95) + median(y) - std(z)",
        "try_cast('12' as int) * 2",
        "(not a) = (not b)",
        "not a = not b",
        "a or not b and c",
        "-x::int * +y",
        "-2147483648 * 2",
        "0.1 + 0.2",
        "1.7976931348623157e308 * 10",
        "5e-324",
        "count() + count(*) + count(x)",
        "string_agg(name, ', ')",
    };
    for (size_t i = 0; i < sizeof exprs / sizeof exprs[0]; i++) {
        const char *r = pp(exprs[i]);
        if (strncmp(r, "ERROR", 5) == 0 || strncmp(r, "ROUND", 5) == 0 ||
            strncmp(r, "PRINTER", 7) == 0)
            fprintf(stderr, "%s -> %s\n", exprs[i], r);
        CHECK(strncmp(r, "ERROR", 5) != 0 && strncmp(r, "ROUND", 5) != 0 &&
              strncmp(r, "PRINTER", 7) != 0);
    }
    /* a hand-built NaN literal prints as a cast (no literal spells NaN) */
    TlExpr lit;
    memset(&lit, 0, sizeof lit);
    lit.kind = TL_X_LIT;
    lit.lit_type = TL_TFLOAT64;
    lit.v.f = NAN;
    lit.col = -1;
    TlExprId id;
    char buf[64];
    CHECK(tl_ea_push(&ea, &lit, NULL, 0, &id, &err) == TL_OK);
    tl_expr_print(&ea, id, buf, sizeof buf);
    CHECK_EQ_STR(buf, "cast('nan' as float64)");
}

/* ------------------------------------------------------------- items */

static TlItem *items(const char *text, const char *origin, bool split, TlItemKind kind,
                     uint32_t *n)
{
    uint16_t src;
    TlItem *it = NULL;
    *n = 0;
    if (tl_ea_add_src(&ea, text, origin, &src, &err) != TL_OK) return NULL;
    if (tl_parse_items(&ea, src, split, kind, &it, n, &err) != TL_OK) return NULL;
    return it;
}

static const char *item_expr(const TlItem *it)
{
    static char buf[256];
    if (it->expr == TL_NO_ID) return "(none)";
    tl_expr_print(&ea, it->expr, buf, sizeof buf);
    return buf;
}

TL_TEST(test_items_select)
{
    uint32_t n;
    TlItem *it = items("a, b * 2 as c, sum(amount), \"unit price\", count(*), avg(x),"
                       " upper(name), (b + 1), b  *  2, concat(a, ' , '), x AS \"my col\","
                       " COUNT(), Count_Distinct(k), sum(x + 1), 'a b', count(x) as end",
                       "--select", true, TL_ITEM_SELECT, &n);
    CHECK(it != NULL);
    if (!it) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }
    CHECK_EQ_INT(n, 16);
    if (n != 16) return;
    CHECK(it[0].name == NULL);
    CHECK_EQ_STR(it[0].auto_name, "a");
    CHECK_EQ_STR(it[1].name, "c");
    CHECK_EQ_STR(it[1].auto_name, "b*2");
    CHECK_EQ_STR(item_expr(&it[1]), "b * 2");
    CHECK_EQ_STR(it[2].auto_name, "sum_amount");
    CHECK_EQ_STR(it[3].auto_name, "unit price");
    CHECK_EQ_STR(it[4].auto_name, "count");
    CHECK_EQ_STR(it[5].auto_name, "avg_x");
    CHECK_EQ_STR(it[6].auto_name, "upper(name)");
    CHECK_EQ_STR(it[7].auto_name, "(b+1)");
    CHECK_EQ_STR(it[8].auto_name, "b*2");
    CHECK_EQ_STR(it[9].auto_name, "concat(a,' , ')");
    CHECK_EQ_STR(it[10].name, "my col");
    CHECK_EQ_STR(it[11].auto_name, "count");
    CHECK_EQ_STR(it[12].auto_name, "count_distinct_k");
    CHECK_EQ_STR(it[13].auto_name, "sum(x+1)");
    CHECK_EQ_STR(it[14].auto_name, "'a b'");
    CHECK_EQ_STR(it[15].name, "end");
    CHECK_EQ_INT(it[1].start, 3);
    CHECK_EQ_INT(it[1].len, 10);

    /* JSON lists are not split */
    it = items("concat(a, b) as ab", "/steps/0/select/0", false, TL_ITEM_SELECT, &n);
    CHECK(it && n == 1 && strcmp(it[0].name, "ab") == 0);
    it = items("a, b", "/steps/0/select/0", false, TL_ITEM_SELECT, &n);
    CHECK(it == NULL);
    CHECK_EQ_STR(err.msg, "syntax error: unexpected \",\"\n"
                          "  /steps/0/select/0: a, b\n"
                          "                      ^");
    it = items("a,,b", "--select", true, TL_ITEM_SELECT, &n);
    CHECK(it == NULL);
    CHECK_EQ_STR(err.msg, "syntax error: empty item in list\n"
                          "  --select: a,,b\n"
                          "              ^");
    it = items("a, ", "--select", true, TL_ITEM_SELECT, &n);
    CHECK(it == NULL && strstr(err.msg, "empty item") != NULL);
    it = items("   ", "/steps/0/filter", false, TL_ITEM_EXPR, &n);
    CHECK(it == NULL && strstr(err.msg, "empty expression") != NULL);
    it = items("a as", "--select", true, TL_ITEM_SELECT, &n);
    CHECK(it == NULL);
    CHECK_EQ_STR(err.msg, "syntax error: expected a column name after \"as\"\n"
                          "  --select: a as\n"
                          "                ^");
    it = items("a as b c", "--select", true, TL_ITEM_SELECT, &n);
    CHECK(it == NULL && strstr(err.msg, "unexpected \"c\"") != NULL);
    it = items("f(a, 'x,y'), \"p,q\"", "--select", true, TL_ITEM_SELECT, &n);
    CHECK(it == NULL && strstr(err.msg, "unknown function \"f\"") != NULL);
    it = items("abs(a), 'x,y', \"p,q\"", "--select", true, TL_ITEM_SELECT, &n);
    CHECK(it && n == 3);
    if (it && n == 3) CHECK_EQ_STR(it[2].auto_name, "p,q");
}

TL_TEST(test_items_assign)
{
    uint32_t n;
    TlItem *it = items("n = count(), total = sum(x), sum(y), \"my col\" = 1, x == 1,"
                       " mean(v) , date = max(d)",
                       "--agg", true, TL_ITEM_ASSIGN, &n);
    CHECK(it && n == 7);
    if (!it || n != 7) return;
    CHECK_EQ_STR(it[0].name, "n");
    CHECK_EQ_STR(item_expr(&it[0]), "count()");
    CHECK_EQ_STR(it[1].name, "total");
    CHECK(it[2].name == NULL);
    CHECK_EQ_STR(it[2].auto_name, "sum_y");
    CHECK_EQ_STR(it[3].name, "my col");
    CHECK(it[4].name == NULL);
    CHECK_EQ_STR(item_expr(&it[4]), "x = 1");
    CHECK_EQ_STR(it[5].auto_name, "mean_v");
    CHECK_EQ_STR(it[6].name, "date");
    it = items("c = a + b", "--with", false, TL_ITEM_ASSIGN, &n);
    CHECK(it && n == 1 && strcmp(it[0].name, "c") == 0);
    if (it) CHECK_EQ_STR(item_expr(&it[0]), "a + b");
    it = items("null = x", "--with", false, TL_ITEM_ASSIGN, &n); /* not a name */
    CHECK(it && n == 1 && it[0].name == NULL);
    it = items("c = ", "--with", false, TL_ITEM_ASSIGN, &n);
    CHECK(it == NULL && strstr(err.msg, "unexpected end") != NULL);
}

TL_TEST(test_items_sort)
{
    uint32_t n;
    TlItem *it = items("-v, k desc nulls first, a ASC, -\"b c\", -v nulls first, -x + 1,"
                       " x nulls last, y DESC, -date",
                       "--sort", true, TL_ITEM_SORT, &n);
    CHECK(it && n == 9);
    if (!it || n != 9) return;
    CHECK(it[0].desc && !it[0].nulls_first);
    CHECK_EQ_STR(item_expr(&it[0]), "v");
    CHECK_EQ_STR(it[0].auto_name, "v");
    CHECK(it[1].desc && it[1].nulls_first);
    CHECK(!it[2].desc && !it[2].nulls_first);
    CHECK(it[3].desc);
    CHECK_EQ_STR(item_expr(&it[3]), "\"b c\"");
    CHECK(it[4].desc && it[4].nulls_first);
    CHECK(!it[5].desc);
    CHECK_EQ_STR(item_expr(&it[5]), "-x + 1");
    CHECK(!it[6].desc && !it[6].nulls_first);
    CHECK(it[7].desc);
    CHECK(it[8].desc);
    CHECK_EQ_STR(item_expr(&it[8]), "\"date\"");
    const TlExpr *e = tl_ea_node(&ea, it[0].expr);
    CHECK(e->kind == TL_X_COL && e->start == 1 && e->len == 1);

    it = items("x nulls", "--sort", true, TL_ITEM_SORT, &n);
    CHECK(it == NULL);
    CHECK_EQ_STR(err.msg, "syntax error: expected \"first\" or \"last\" after \"nulls\"\n"
                          "  --sort: x nulls\n"
                          "                 ^");
    it = items("x desc asc", "--sort", true, TL_ITEM_SORT, &n);
    CHECK(it == NULL && strstr(err.msg, "unexpected \"asc\"") != NULL);
}

TL_TEST(test_items_names)
{
    uint32_t n;
    TlItem *it = items("a, \"b c\", end, Date", "--drop", true, TL_ITEM_NAME, &n);
    CHECK(it && n == 4);
    if (it && n == 4) {
        CHECK_EQ_STR(it[0].name, "a");
        CHECK_EQ_STR(it[1].name, "b c");
        CHECK_EQ_STR(it[2].name, "end");
        CHECK_EQ_STR(it[3].name, "Date");
        CHECK(it[0].expr == TL_NO_ID);
    }
    it = items("a b", "--drop", true, TL_ITEM_NAME, &n);
    CHECK(it == NULL && strstr(err.msg, "unexpected \"b\"") != NULL);
    it = items("a + 1", "--drop", true, TL_ITEM_NAME, &n);
    CHECK(it == NULL);
    it = items("1", "--drop", true, TL_ITEM_NAME, &n);
    CHECK(it == NULL && strstr(err.msg, "a number is not a column here: write #1 "
                                        "for column 1") != NULL);
    it = items("1 2", "--drop", true, TL_ITEM_NAME, &n);
    CHECK(it == NULL && strstr(err.msg, "expected a column name") != NULL);

    it = items("a:b, \"x y\" : z,old:\"new name\"", "--rename", true, TL_ITEM_RENAME, &n);
    CHECK(it && n == 3);
    if (it && n == 3) {
        CHECK_EQ_STR(it[0].name, "a");
        CHECK_EQ_STR(it[0].name2, "b");
        CHECK_EQ_STR(it[1].name, "x y");
        CHECK_EQ_STR(it[1].name2, "z");
        CHECK_EQ_STR(it[2].name2, "new name");
    }
    it = items("a", "--rename", true, TL_ITEM_RENAME, &n);
    CHECK(it == NULL);
    CHECK_EQ_STR(err.msg, "syntax error: expected \":\" (write OLD:NEW)\n"
                          "  --rename: a\n"
                          "             ^");
    it = items("a:", "--rename", true, TL_ITEM_RENAME, &n);
    CHECK(it == NULL && strstr(err.msg, "expected a new column name") != NULL);
    it = items("a:b:c", "--rename", true, TL_ITEM_RENAME, &n);
    CHECK(it == NULL && strstr(err.msg, "unexpected \":\"") != NULL);
}

TL_TEST(test_items_expr)
{
    uint32_t n;
    TlItem *it = items("region, year(d), \"k\"", "--group-by", true, TL_ITEM_EXPR, &n);
    CHECK(it && n == 3);
    if (it && n == 3) {
        CHECK_EQ_STR(it[0].auto_name, "region");
        CHECK_EQ_STR(it[1].auto_name, "year(d)");
        CHECK_EQ_STR(it[2].auto_name, "k");
    }
    it = items("amount > 100 and region != 'x, y'", "--filter", false, TL_ITEM_EXPR, &n);
    CHECK(it && n == 1);
}

TL_TEST(test_op_table)
{
    for (int op = 1; op < TL_OP_COUNT_; op++) {
        const TlOpInfo *info = tl_op_info((TlOp)op);
        CHECK(info && info->name != NULL);
        if (!info || !info->name) continue;
        if (info->is_function)
            CHECK_EQ_INT(tl_op_lookup(info->name, strlen(info->name)), op);
        else
            CHECK_EQ_INT(tl_op_lookup(info->name, strlen(info->name)), TL_OP_NONE);
        CHECK(info->max_args < 0 || info->max_args >= info->min_args);
    }
    CHECK_EQ_INT(tl_op_lookup("AVG", 3), TL_OP_MEAN);
    CHECK_EQ_INT(tl_op_lookup("Sum", 3), TL_OP_SUM);
    CHECK_EQ_INT(tl_op_lookup("sumx", 4), TL_OP_NONE);
    CHECK_EQ_INT(tl_op_lookup("sumx", 3), TL_OP_SUM);
    CHECK_EQ_INT(tl_op_lookup("and", 3), TL_OP_NONE);
    CHECK(tl_op_is_agg(TL_OP_COUNT) && tl_op_is_agg(TL_OP_ALL) && !tl_op_is_agg(TL_OP_IF));
}

TL_TEST(test_error_at_direct)
{
    uint16_t src;
    CHECK(tl_ea_add_src(&ea, "amout > 100", "--filter", &src, &err) == TL_OK);
    TlStatus st = tl_error_at(&err, TL_ERR_USAGE, &ea, src, 0, 5,
                              "unknown column \"%s\" (did you mean \"%s\"?)", "amout", "amount");
    CHECK_EQ_INT(st, TL_ERR_USAGE);
    CHECK_EQ_INT(err.code, TL_ERR_USAGE);
    CHECK_EQ_STR(err.msg, "unknown column \"amout\" (did you mean \"amount\"?)\n"
                          "  --filter: amout > 100\n"
                          "            ^^^^^");
    /* out-of-range spans are clamped */
    tl_error_at(&err, TL_ERR_DATA, &ea, src, 100, 5, "x");
    CHECK_EQ_STR(err.msg, "x\n  --filter: amout > 100\n                       ^");
    tl_error_at(&err, TL_ERR_DATA, &ea, src, 8, 100, "y");
    CHECK_EQ_STR(err.msg, "y\n  --filter: amout > 100\n                    ^^^");
}

/* Fail the Nth allocation (and every later one) for N = 1, 2, ... until a
 * parse succeeds: every failure must be a clean TL_ERR_OOM. */
TL_TEST(test_out_of_memory)
{
    const char *text = "case k when 1 then sum(a) + 'x''y' else \"q r\" end as z,"
                       " -v, coalesce(a, b, c, d, e, f, g, h, i, j, k) in (1, 2, 3)";
    int failures = 0;
    for (uint64_t n = 1; n < 1000; n++) {
        TlExprArena a;
        TlError e;
        uint16_t src;
        TlItem *it;
        uint32_t k;
        if (tl_ea_init(&a, &e) != TL_OK) break;
        tl_alloc_fail_mode(n, true);
        TlStatus st = tl_ea_add_src(&a, text, "--select", &src, &e);
        if (st == TL_OK) st = tl_parse_items(&a, src, true, TL_ITEM_SELECT, &it, &k, &e);
        tl_alloc_fail_mode(0, false);
        tl_ea_free(&a);
        if (st == TL_OK) break;
        failures++;
        CHECK_EQ_INT(st, TL_ERR_OOM);
        CHECK_EQ_STR(e.msg, "out of memory");
        if (st != TL_ERR_OOM) break;
    }
    CHECK(failures > 3);
}

int main(void)
{
    if (tl_ea_init(&ea, &err) != TL_OK) return 1;
    TL_RUN(test_precedence);
    TL_RUN(test_functions);
    TL_RUN(test_literals);
    TL_RUN(test_columns);
    TL_RUN(test_spans);
    TL_RUN(test_caret_errors);
    TL_RUN(test_caret_window);
    TL_RUN(test_depth_limit);
    TL_RUN(test_equal);
    TL_RUN(test_print_truncation);
    TL_RUN(test_round_trip);
    TL_RUN(test_items_select);
    TL_RUN(test_items_assign);
    TL_RUN(test_items_sort);
    TL_RUN(test_items_names);
    TL_RUN(test_items_expr);
    TL_RUN(test_op_table);
    TL_RUN(test_error_at_direct);
    TL_RUN(test_out_of_memory);
    tl_ea_free(&ea);
    return tl_test_summary(__FILE__);
}
