/*
 * test_eval.c -- resolve (lib/plan/resolve.c) and evaluation
 * (lib/expr/eval.c) end to end: parse a text, resolve it against a small
 * schema, evaluate it over one batch, print the result.
 *
 * The batch (6 rows):
 *
 *   a int64    1      -3     null   4      0      9223372036854775807
 *   b float64  2.5    null   -0.0   nan    1.0    -4.0
 *   s string   x      yy     null   <long> x      ""
 *   d date     01-01  02-03  null   12-31  1970   01-15   (2024 unless said)
 *   t bool     true   false  null   true   false  null
 *   amount     10     20     30     40     50     60
 */
#include "../../lib/dsl/dsl.h"
#include "../../lib/expr/eval.h"
#include "../../lib/plan/resolve.h"
#include "../../lib/core/text.h"
#include "tl_test.h"

#include <math.h>
#include <stdio.h>

static TlExprArena ea;
static TlError err;
static TlSchema sch;
static TlBatch *batch;

#define LONG_S "a long string value here"

static void setup(void)
{
    TlBuilder b;
    int64_t av[] = {1, -3, 0, 4, 0, INT64_MAX};
    double bv[] = {2.5, 0, -0.0, NAN, 1.0, -4.0};
    const char *sv[] = {"x", "yy", NULL, LONG_S, "x", ""};
    const char *dv[] = {"2024-01-01", "2024-02-03", NULL, "2023-12-31",
                        "1970-01-01", "2024-01-15"};
    const char *tv = "TFNTFN";
    tl_ea_init(&ea, &err);
    tl_schema_add(&sch, "a", TL_TINT64, &err);
    tl_schema_add(&sch, "b", TL_TFLOAT64, &err);
    tl_schema_add(&sch, "s", TL_TSTRING, &err);
    tl_schema_add(&sch, "d", TL_TDATE, &err);
    tl_schema_add(&sch, "t", TL_TBOOL, &err);
    tl_schema_add(&sch, "amount", TL_TINT64, &err);
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
    tl_builder_init(&b, TL_TDATE);
    for (int i = 0; i < 6; i++) {
        int32_t d;
        if (!dv[i]) tl_builder_append_null(&b);
        else if (tl_parse_date(dv[i], strlen(dv[i]), &d)) tl_builder_append_i32(&b, d);
    }
    batch->cols[3] = tl_builder_finish(&b);
    tl_builder_free(&b);
    tl_builder_init(&b, TL_TBOOL);
    for (int i = 0; i < 6; i++)
        if (tv[i] == 'N') tl_builder_append_null(&b);
        else tl_builder_append_bool(&b, tv[i] == 'T');
    batch->cols[4] = tl_builder_finish(&b);
    tl_builder_free(&b);
    tl_builder_init(&b, TL_TINT64);
    for (int i = 0; i < 6; i++) tl_builder_append_i64(&b, (i + 1) * 10);
    batch->cols[5] = tl_builder_finish(&b);
    tl_builder_free(&b);
}

static void cell(const TlArray *a, int64_t i, char *buf)
{
    if (!tl_array_valid(a, i)) { strcpy(buf, "N"); return; }
    switch (a->type) {
    case TL_TBOOL: strcpy(buf, tl_array_bool(a, i) ? "T" : "F"); break;
    case TL_TINT64: tl_fmt_i64(tl_array_i64(a)[i], buf); break;
    case TL_TFLOAT64: tl_fmt_f64(tl_array_f64(a)[i], buf); break;
    case TL_TDATE: tl_fmt_date(tl_array_i32(a)[i], buf); break;
    case TL_TTIMESTAMP: tl_fmt_timestamp(tl_array_i64(a)[i], buf); break;
    case TL_TSTRING: {
        const TlView *v = &tl_array_views(a)[i];
        memcpy(buf, tl_view_ptr(v, a->data), tl_view_len(*v));
        buf[tl_view_len(*v)] = 0;
        break;
    }
    default: strcpy(buf, "?");
    }
}

static const char *show(const TlArray *a)
{
    static char out[8192];
    char c[256];
    size_t len = 0;
    int64_t nulls = 0;
    out[0] = 0;
    for (int64_t i = 0; i < a->length; i++) {
        cell(a, i, c);
        nulls += !tl_array_valid(a, i);
        len += (size_t)snprintf(out + len, sizeof out - len, "%s%s", i ? "," : "", c);
    }
    if (nulls != a->null_count) strcat(out, " (bad null_count)");
    return out;
}

/* Parse, resolve (allow_agg false) against sch. */
static TlStatus prep(const char *text, bool allow_agg, TlExprId *id)
{
    uint16_t src;
    TlExprId root;
    TL_TRY(tl_ea_add_src(&ea, text, "--with", &src, &err));
    TL_TRY(tl_parse_expr(&ea, src, 0, (uint32_t)strlen(text), &root, &err));
    return tl_resolve_expr(&ea, root, &sch, allow_agg, id, &err);
}

/* Evaluate text over the batch: "<type>: v,v,v" or "ERR<code>: <first
 * line of the message>". */
static const char *ev_on(const char *text, const TlBatch *in)
{
    static char out[8192];
    TlExprId id;
    TlArray *r = NULL;
    TlStatus st = prep(text, false, &id);
    if (st == TL_OK) st = tl_eval(&ea, id, in, &r, &err);
    if (st != TL_OK) {
        char *nl;
        snprintf(out, sizeof out, "ERR%d: %s", st, err.msg);
        if ((nl = strchr(out, '\n'))) *nl = 0;
        return out;
    }
    if (r->length != in->n_rows) {
        tl_array_release(r);
        return "WRONG LENGTH";
    }
    if (r->type != (TlType)tl_ea_node(&ea, id)->type) {
        tl_array_release(r);
        return "WRONG TYPE";
    }
    snprintf(out, sizeof out, "%s: %s", tl_type_name(r->type), show(r));
    tl_array_release(r);
    return out;
}

static const char *ev(const char *text) { return ev_on(text, batch); }

/* The full message of the error text gives (or "OK"). */
static const char *msg(const char *text, bool allow_agg)
{
    TlExprId id;
    TlArray *r = NULL;
    TlStatus st = prep(text, allow_agg, &id);
    if (st == TL_OK && !allow_agg) st = tl_eval(&ea, id, batch, &r, &err);
    tl_array_release(r);
    return st == TL_OK ? "OK" : err.msg;
}

/* ------------------------------------------------------------ basics */

TL_TEST(test_columns_literals)
{
    CHECK_EQ_STR(ev("a"), "int64: 1,-3,N,4,0,9223372036854775807");
    CHECK_EQ_STR(ev("1 + 2"), "int64: 3,3,3,3,3,3");
    CHECK_EQ_STR(ev("null"), "null: N,N,N,N,N,N");
    CHECK_EQ_STR(ev("'hi'"), "string: hi,hi,hi,hi,hi,hi");
    CHECK_EQ_STR(ev("date '2024-01-31' + 1"),
                 "date: 2024-02-01,2024-02-01,2024-02-01,2024-02-01,2024-02-01,2024-02-01");
    CHECK_EQ_STR(ev("\"amount\" * 2"), "int64: 20,40,60,80,100,120");
}

TL_TEST(test_arith)
{
    CHECK_EQ_STR(ev("a - 1"), "int64: 0,-4,N,3,-1,9223372036854775806");
    CHECK_EQ_STR(ev("amount + b"), "float64: 12.5,N,30.0,nan,51.0,56.0");
    CHECK_EQ_STR(ev("amount / 4"), "float64: 2.5,5.0,7.5,10.0,12.5,15.0");
    CHECK_EQ_STR(ev("a / 0"), "float64: inf,-inf,N,inf,nan,inf");
    CHECK_EQ_STR(ev("a // 2"), "int64: 0,-1,N,2,0,4611686018427387903");
    CHECK_EQ_STR(ev("a % 2"), "int64: 1,-1,N,0,0,1");
    CHECK_EQ_STR(ev("a // 0"), "int64: N,N,N,N,N,N");
    CHECK_EQ_STR(ev("a % (amount - 20)"), "int64: 1,N,N,4,0,7");
    CHECK_EQ_STR(ev("b // 0"), "float64: N,N,N,N,N,N");
    CHECK_EQ_STR(ev("b % 0"), "float64: nan,N,nan,nan,nan,nan");
    CHECK_EQ_STR(ev("-b"), "float64: -2.5,N,0.0,nan,-1.0,4.0");
    CHECK_EQ_STR(ev("-amount"), "int64: -10,-20,-30,-40,-50,-60");
    CHECK_EQ_STR(ev("null + 1"), "int64: N,N,N,N,N,N");
    CHECK_EQ_STR(ev("d + 1"), "date: 2024-01-02,2024-02-04,N,2024-01-01,1970-01-02,2024-01-16");
    CHECK_EQ_STR(ev("1 + d"), "date: 2024-01-02,2024-02-04,N,2024-01-01,1970-01-02,2024-01-16");
    CHECK_EQ_STR(ev("d - 1"), "date: 2023-12-31,2024-02-02,N,2023-12-30,1969-12-31,2024-01-14");
    CHECK_EQ_STR(ev("d - date '2024-01-01'"), "int64: 0,33,N,-1,-19723,14");
    CHECK_EQ_STR(ev("s || a"), "string: x1,yy-3,N," LONG_S "4,x0,9223372036854775807");
    CHECK_EQ_STR(ev("s || '|' || b"), "string: x|2.5,N,N," LONG_S "|nan,x|1.0,|-4.0");
    CHECK_EQ_STR(ev("s || null"), "string: N,N,N,N,N,N");
    CHECK_EQ_STR(ev("a + 1"), "ERR1: integer overflow in \"a + 1\": 9223372036854775807 + 1");
    CHECK_EQ_STR(ev("a * -2"), "ERR1: integer overflow in \"a * -2\": 9223372036854775807 * -2");
    CHECK_EQ_STR(ev("amount - 9223372036854775807 - 12"),
                 "ERR1: integer overflow in \"amount - 9223372036854775807 - 12\": "
                 "-9223372036854775797 - 12");
    CHECK_EQ_STR(ev("-(amount - 9223372036854775807 - 11)"),
                 "ERR1: integer overflow in \"-(amount - 9223372036854775807 - 11)\": "
                 "-(-9223372036854775808)");
    CHECK_EQ_STR(ev("(amount - 10 - 9223372036854775807 - 1) // -1"),
                 "ERR1: integer overflow in \"(amount - 10 - 9223372036854775807 - 1) // -1\": "
                 "-9223372036854775808 // -1");
}

TL_TEST(test_error_format)
{
    CHECK_EQ_STR(msg("a * 2", false),
                 "integer overflow in \"a * 2\": 9223372036854775807 * 2\n"
                 "  --with: a * 2\n"
                 "          ^^^^^");
    CHECK_EQ_STR(msg("amout > 1", false),
                 "unknown column \"amout\" (did you mean \"amount\"?)\n"
                 "  --with: amout > 1\n"
                 "          ^^^^^");
    CHECK_EQ_STR(msg("zzzzzz > 1", false),
                 "unknown column \"zzzzzz\"\n"
                 "  --with: zzzzzz > 1\n"
                 "          ^^^^^^");
    CHECK_EQ_STR(msg("a > 's'", false),
                 "cannot compare int64 with string\n"
                 "  --with: a > 's'\n"
                 "          ^^^^^^^");
    CHECK_EQ_STR(msg("1 + cast(s as int)", false),
                 "cannot cast \"x\" to int64\n"
                 "  --with: 1 + cast(s as int)\n"
                 "              ^^^^^^^^^^^^^^");
    CHECK_EQ_STR(msg("a > 0 and sum(a) > 1", false),
                 "aggregate \"sum\" is not allowed here\n"
                 "  --with: a > 0 and sum(a) > 1\n"
                 "                    ^^^^^^");
}

TL_TEST(test_type_errors)
{
    CHECK_EQ_STR(ev("a + s"), "ERR2: cannot apply \"+\" to int64 and string");
    CHECK_EQ_STR(ev("t * 2"), "ERR2: cannot apply \"*\" to bool and int64");
    CHECK_EQ_STR(ev("-s"), "ERR2: cannot apply \"-\" to string");
    CHECK_EQ_STR(ev("d = 1"), "ERR2: cannot compare date with int64");
    CHECK_EQ_STR(ev("a in (1, 'x')"), "ERR2: cannot compare int64 with string");
    CHECK_EQ_STR(ev("a and t"), "ERR2: an operand of \"and\" must be bool, not int64");
    CHECK_EQ_STR(ev("not s"), "ERR2: an operand of \"not\" must be bool, not string");
    CHECK_EQ_STR(ev("if(a, 1, 2)"), "ERR2: the condition of if must be bool, not int64");
    CHECK_EQ_STR(ev("case when a then 1 end"), "ERR2: a case condition must be bool, not int64");
    CHECK_EQ_STR(ev("if(t, 1, 'x')"), "ERR2: cannot mix int64 and string in if");
    CHECK_EQ_STR(ev("case when t then d else 's' end"), "ERR2: cannot mix date and string in case");
    CHECK_EQ_STR(ev("coalesce(a, s)"), "ERR2: cannot mix int64 and string in coalesce");
    CHECK_EQ_STR(ev("cast(t as date)"), "ERR2: cannot cast bool to date");
    CHECK_EQ_STR(ev("sqrt(s)"), "ERR2: no function matches sqrt(string)");
    CHECK_EQ_STR(ev("d > '2024-02-30'"), "ERR2: cannot cast \"2024-02-30\" to date");
}

/* ------------------------------------------------------- comparisons */

TL_TEST(test_compare)
{
    CHECK_EQ_STR(ev("a > 0"), "bool: T,F,N,T,F,T");
    CHECK_EQ_STR(ev("0 < a"), "bool: T,F,N,T,F,T");
    CHECK_EQ_STR(ev("b = 0"), "bool: F,N,T,F,F,F");          /* -0.0 = 0 */
    CHECK_EQ_STR(ev("b > 1e308"), "bool: F,N,F,T,F,F");      /* nan above all */
    CHECK_EQ_STR(ev("b = b"), "bool: T,N,T,T,T,T");          /* nan = nan */
    CHECK_EQ_STR(ev("a = b"), "bool: F,N,N,F,F,F");          /* int vs float */
    CHECK_EQ_STR(ev("amount >= 2.5e1"), "bool: F,F,T,T,T,T");
    CHECK_EQ_STR(ev("s = 'x'"), "bool: T,F,N,F,T,F");
    CHECK_EQ_STR(ev("s >= 'a long'"), "bool: T,T,N,T,T,F");
    CHECK_EQ_STR(ev("s = '" LONG_S "'"), "bool: F,F,N,T,F,F");
    CHECK_EQ_STR(ev("d > '2024-01-10'"), "bool: F,T,N,F,F,T");
    CHECK_EQ_STR(ev("'2024-01-10' < d"), "bool: F,T,N,F,F,T");
    CHECK_EQ_STR(ev("d < timestamp '2024-01-01 00:00:01'"), "bool: T,F,N,T,T,F");
    CHECK_EQ_STR(ev("d = null"), "bool: N,N,N,N,N,N");
    CHECK_EQ_STR(ev("t = true"), "bool: T,F,N,T,F,N");
    CHECK_EQ_STR(ev("t < true"), "bool: F,T,N,F,T,N");
    CHECK_EQ_STR(ev("a between 0 and 4"), "bool: T,F,N,T,T,F");
    CHECK_EQ_STR(ev("a not between 0 and 4"), "bool: F,T,N,F,F,T");
    CHECK_EQ_STR(ev("a between null and 4"), "bool: N,N,N,N,N,F");
    CHECK_EQ_STR(ev("d between '2024-01-01' and '2024-01-31'"), "bool: T,F,N,F,F,T");
    CHECK_EQ_STR(ev("s is null"), "bool: F,F,T,F,F,F");
    CHECK_EQ_STR(ev("a is not null"), "bool: T,T,F,T,T,T");
    CHECK_EQ_STR(ev("null is null"), "bool: T,T,T,T,T,T");
}

TL_TEST(test_logic_in)
{
    CHECK_EQ_STR(ev("t and a > 0"), "bool: T,F,N,T,F,N");
    CHECK_EQ_STR(ev("t or a > 0"), "bool: T,F,N,T,F,T");
    CHECK_EQ_STR(ev("t or null"), "bool: T,N,N,T,N,N");
    CHECK_EQ_STR(ev("t and null"), "bool: N,F,N,N,F,N");
    CHECK_EQ_STR(ev("not t"), "bool: F,T,N,F,T,N");
    CHECK_EQ_STR(ev("a in (1, 4, null)"), "bool: T,N,N,T,N,N");
    CHECK_EQ_STR(ev("a not in (1, 4)"), "bool: F,T,N,F,T,T");
    CHECK_EQ_STR(ev("a not in (1, null)"), "bool: F,N,N,N,N,N");
    CHECK_EQ_STR(ev("a in (1.0, 4.5)"), "bool: T,F,N,F,F,F");
    CHECK_EQ_STR(ev("s in ('x', '" LONG_S "')"), "bool: T,F,N,T,T,F");
    CHECK_EQ_STR(ev("b in (0, nan)"), "ERR2: unknown column \"nan\"");
    CHECK_EQ_STR(ev("b in (0, cast('nan' as float))"), "bool: F,N,T,T,F,F");
    CHECK_EQ_STR(ev("a in (amount // 10, 4)"), "bool: T,F,N,T,F,F");
    CHECK_EQ_STR(ev("a in (amount, null)"), "bool: N,N,N,N,N,N");
    CHECK_EQ_STR(ev("d in ('2024-01-01', '1970-01-01')"), "bool: T,F,N,F,T,F");
    CHECK_EQ_STR(ev("amount in (1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,30)"),
                 "bool: T,T,T,F,F,F");
    CHECK_EQ_STR(ev("s like 'x%'"), "bool: T,F,N,F,T,F");
    CHECK_EQ_STR(ev("s not like 'x%'"), "bool: F,T,N,T,F,T");
}

/* --------------------------------------------------------------- casts */

TL_TEST(test_casts)
{
    CHECK_EQ_STR(ev("cast(a as string)"), "string: 1,-3,N,4,0,9223372036854775807");
    CHECK_EQ_STR(ev("cast(b as int)"), "ERR1: cannot cast nan to int64");
    CHECK_EQ_STR(ev("try_cast(b as int)"), "int64: 2,N,0,N,1,-4"); /* 2.5: half to even */
    CHECK_EQ_STR(ev("try_cast(s as int)"), "int64: N,N,N,N,N,N");
    CHECK_EQ_STR(ev("cast(s as int)"), "ERR1: cannot cast \"x\" to int64");
    CHECK_EQ_STR(ev("s::date"), "ERR1: cannot cast \"x\" to date");
    CHECK_EQ_STR(ev("cast(d as timestamp)"),
                 "timestamp: 2024-01-01 00:00:00,2024-02-03 00:00:00,N,"
                 "2023-12-31 00:00:00,1970-01-01 00:00:00,2024-01-15 00:00:00");
    CHECK_EQ_STR(ev("cast(t as int)"), "int64: 1,0,N,1,0,N");
    CHECK_EQ_STR(ev("cast(a as bool)"), "bool: T,T,N,T,F,T");
    CHECK_EQ_STR(ev("cast(b as string)"), "string: 2.5,N,-0.0,nan,1.0,-4.0");
    CHECK_EQ_STR(ev("cast('2.5' as int)"), "int64: 3,3,3,3,3,3");
    CHECK_EQ_STR(ev("cast(null as date)"), "date: N,N,N,N,N,N");
}

/* ------------------------------------------------- lazy conditionals */

TL_TEST(test_lazy)
{
    /* the untaken branch would fail */
    CHECK_EQ_STR(ev("sqrt(b)"),
                 "ERR1: cannot take the square root of a negative number in "
                 "\"sqrt(b)\": sqrt(-4.0)");
    CHECK_EQ_STR(ev("case when b >= 0 then sqrt(b) end"), "float64: 1.5811388300841898,N,-0.0,nan,1.0,N");
    CHECK_EQ_STR(ev("if(b < 0, -1.0, sqrt(b))"), "float64: 1.5811388300841898,N,-0.0,nan,1.0,-1.0");
    CHECK_EQ_STR(ev("if(a < 1000, a * 1000, 0)"), "int64: 1000,-3000,0,4000,0,0");
    CHECK_EQ_STR(ev("if(a < 1000, a * 1000, a * 2)"),
                 "ERR1: integer overflow in \"a * 2\": 9223372036854775807 * 2");
    CHECK_EQ_STR(ev("coalesce(if(a is null, 5, a), cast(s as int))"),
                 "int64: 1,-3,5,4,0,9223372036854775807");
    CHECK_EQ_STR(ev("coalesce(s, cast(a as int))"), "ERR2: cannot mix string and int64 in coalesce");
    CHECK_EQ_STR(ev("coalesce(a, 100)"), "int64: 1,-3,100,4,0,9223372036854775807");
    CHECK_EQ_STR(ev("coalesce(b, a, 7)"), "float64: 2.5,-3.0,-0.0,nan,1.0,-4.0");
    CHECK_EQ_STR(ev("coalesce(null, t, a > 0)"), "bool: T,F,N,T,F,T");
    CHECK_EQ_STR(ev("coalesce(s)"), "string: x,yy,N," LONG_S ",x,");
    /* and / or do not evaluate a failing right side where the left decides */
    CHECK_EQ_STR(ev("a < 1000 and a * 1000 > 0"), "bool: T,F,N,T,F,F");
    CHECK_EQ_STR(ev("a >= 1000 or a * 1000 > 0"), "bool: T,F,N,T,F,T");
    CHECK_EQ_STR(ev("a * 1000 > 0 and a < 1000"),
                 "ERR1: integer overflow in \"a * 1000\": 9223372036854775807 * 1000");
    /* case forms */
    CHECK_EQ_STR(ev("case when t then 'yes' when not t then 'no' else 'unknown' end"),
                 "string: yes,no,unknown,yes,no,unknown");
    CHECK_EQ_STR(ev("case a when 1 then 'one' when 4 then 'four' else 'other' end"),
                 "string: one,other,other,four,other,other");
    CHECK_EQ_STR(ev("case when a > 0 then case when a > 2 then 'big' else 'small' end "
                    "else s || '!' end"),
                 "string: small,yy!,N,big,x!,big");
    CHECK_EQ_STR(ev("case when a > 0 then 1 when b > 0 then 2.5 end"),
                 "float64: 1.0,N,N,1.0,2.5,1.0");
    CHECK_EQ_STR(ev("case when true then a end"), "int64: 1,-3,N,4,0,9223372036854775807");
    CHECK_EQ_STR(ev("case when false then a end"), "int64: N,N,N,N,N,N");
    CHECK_EQ_STR(ev("case when null then 1 else 2 end"), "int64: 2,2,2,2,2,2");
    CHECK_EQ_STR(ev("if(t, d, null)"), "date: 2024-01-01,N,N,2023-12-31,N,N");
    CHECK_EQ_STR(ev("if(t, s, '" LONG_S "!')"),
                 "string: x," LONG_S "!," LONG_S "!," LONG_S "," LONG_S "!," LONG_S "!");
}

/* A 200-row batch: lazy branches across several words and sub-batches. */
TL_TEST(test_lazy_big)
{
    TlBatch *big = tl_batch_new(&sch, 6, 200);
    TlBuilder b;
    char expect[8192];
    size_t len;
    tl_builder_init(&b, TL_TINT64);
    for (int i = 0; i < 200; i++) {
        if (i % 7 == 0) tl_builder_append_null(&b);
        else tl_builder_append_i64(&b, i - 100);
    }
    big->cols[0] = tl_builder_finish(&b);
    tl_builder_free(&b);
    for (int c = 1; c < 6; c++) big->cols[c] = tl_array_new_null(sch.fields[c].type, 200);
    len = (size_t)snprintf(expect, sizeof expect, "int64: ");
    for (int i = 0; i < 200; i++) {
        int64_t a = i - 100;
        char v[32];
        if (i % 7 == 0) strcpy(v, "1");          /* coalesce(..., 1) */
        else if (a % 3 == 0) snprintf(v, sizeof v, "%lld", (long long)(a * 2));
        else if (a % 3 == 1 || a % 3 == -1) snprintf(v, sizeof v, "%lld", (long long)-a);
        else strcpy(v, "1");
        len += (size_t)snprintf(expect + len, sizeof expect - len, "%s%s", i ? "," : "", v);
    }
    CHECK_EQ_STR(ev_on("coalesce(case when a % 3 = 0 then a * 2 when a % 3 != 0 "
                       "and a % 3 != 2 and a % 3 != -2 then -a end, 1)", big),
                 expect);
    tl_batch_free(big);
}

/* --------------------------------------------------------- aggregates */

TL_TEST(test_aggregates)
{
    TlExprId id;
    CHECK_EQ_INT(prep("sum(a)", true, &id), TL_OK);
    CHECK_EQ_INT(tl_ea_node(&ea, id)->type, TL_TINT64);
    CHECK_EQ_INT(prep("sum(b * 2)", true, &id), TL_OK);
    CHECK_EQ_INT(tl_ea_node(&ea, id)->type, TL_TFLOAT64);
    CHECK_EQ_INT(prep("count()", true, &id), TL_OK);
    CHECK_EQ_INT(tl_ea_node(&ea, id)->type, TL_TINT64);
    CHECK_EQ_INT(prep("mean(a)", true, &id), TL_OK);
    CHECK_EQ_INT(tl_ea_node(&ea, id)->type, TL_TFLOAT64);
    CHECK_EQ_INT(prep("max(s)", true, &id), TL_OK);
    CHECK_EQ_INT(tl_ea_node(&ea, id)->type, TL_TSTRING);
    CHECK_EQ_INT(prep("quantile(a, 0.25)", true, &id), TL_OK);
    CHECK_EQ_INT(prep("string_agg(a, '-')", true, &id), TL_OK);
    CHECK_EQ_INT(tl_ea_node(&ea, id)->type, TL_TSTRING);
    CHECK_EQ_INT(tl_ea_node(&ea, tl_ea_arg(&ea, tl_ea_node(&ea, id), 0))->type, TL_TSTRING);
    CHECK_EQ_INT(prep("any(a > 0)", true, &id), TL_OK);
    CHECK_EQ_INT(tl_ea_node(&ea, id)->type, TL_TBOOL);
    CHECK_EQ_INT(prep("corr(a, b)", true, &id), TL_OK);
    CHECK_EQ_INT(tl_ea_node(&ea, id)->type, TL_TFLOAT64);
    CHECK_EQ_INT(prep("sum(sum(a))", true, &id), TL_ERR_USAGE);
    CHECK(strstr(err.msg, "aggregate \"sum\" is not allowed here") == err.msg);
    CHECK_EQ_INT(prep("sum(a)", false, &id), TL_ERR_USAGE);
    CHECK(strstr(err.msg, "aggregate \"sum\" is not allowed here") == err.msg);
    CHECK_EQ_INT(prep("sum(s)", true, &id), TL_ERR_USAGE);
    CHECK(strstr(err.msg, "sum needs a numeric argument, not string") == err.msg);
    CHECK_EQ_INT(prep("quantile(a, 1.5)", true, &id), TL_ERR_USAGE);
    CHECK_EQ_INT(prep("quantile(a, b)", true, &id), TL_ERR_USAGE);
    CHECK_EQ_INT(prep("string_agg(s, s)", true, &id), TL_ERR_USAGE);
    CHECK_EQ_INT(prep("all(a)", true, &id), TL_ERR_USAGE);
    CHECK_EQ_INT(prep("corr(a, s)", true, &id), TL_ERR_USAGE);
    CHECK_EQ_INT(tl_agg_result_type(TL_OP_MIN, TL_TDATE), TL_TDATE);
    CHECK_EQ_INT(tl_agg_result_type(TL_OP_COUNT_DISTINCT, TL_TSTRING), TL_TINT64);
    CHECK_EQ_INT(tl_agg_result_type(TL_OP_SUM, TL_TNULL), TL_TINT64);
    CHECK_EQ_INT(tl_agg_result_type(TL_OP_MEDIAN, TL_TINT64), TL_TFLOAT64);
}

/* ------------------------------------------------------------- filter */

TL_TEST(test_filter)
{
    TlExprId id;
    uint32_t *sel = NULL;
    int64_t n = -1;
    bool all = true;
    CHECK_EQ_INT(prep("a > 0", false, &id), TL_OK);
    CHECK_EQ_INT(tl_eval_filter(&ea, id, batch, &sel, &n, &all, &err), TL_OK);
    CHECK(n == 3 && !all && sel && sel[0] == 0 && sel[1] == 3 && sel[2] == 5);
    tl_free(sel);
    CHECK_EQ_INT(prep("amount > 0", false, &id), TL_OK);
    CHECK_EQ_INT(tl_eval_filter(&ea, id, batch, &sel, &n, &all, &err), TL_OK);
    CHECK(n == 6 && all && !sel);
    CHECK_EQ_INT(prep("true", false, &id), TL_OK);
    CHECK_EQ_INT(tl_eval_filter(&ea, id, batch, &sel, &n, &all, &err), TL_OK);
    CHECK(n == 6 && all && !sel);
    CHECK_EQ_INT(prep("null", false, &id), TL_OK);
    CHECK_EQ_INT(tl_eval_filter(&ea, id, batch, &sel, &n, &all, &err), TL_OK);
    CHECK(n == 0 && !all && !sel);
    CHECK_EQ_INT(prep("t", false, &id), TL_OK);
    CHECK_EQ_INT(tl_eval_filter(&ea, id, batch, &sel, &n, &all, &err), TL_OK);
    CHECK(n == 2 && !all && sel[0] == 0 && sel[1] == 3);
    tl_free(sel);
    CHECK_EQ_INT(prep("a * 2 > 0", false, &id), TL_OK);
    CHECK_EQ_INT(tl_eval_filter(&ea, id, batch, &sel, &n, &all, &err), TL_ERR_DATA);
}

/* Resolving twice gives the same tree (the optimizer may re-resolve). */
TL_TEST(test_resolve_idempotent)
{
    TlExprId id, id2;
    char p1[512], p2[512];
    uint32_t before;
    CHECK_EQ_INT(prep("if(a > b, d + 1, '2024-01-01' < d) is null or s || a = 'x'",
                      false, &id), TL_ERR_USAGE); /* date vs bool branches */
    CHECK_EQ_INT(prep("coalesce(a + b, amount) > 1 and d > '2024-01-01' or s || a = 'x'",
                      false, &id), TL_OK);
    tl_expr_print(&ea, id, p1, sizeof p1);
    before = ea.nodes.n;
    CHECK_EQ_INT(tl_resolve_expr(&ea, id, &sch, false, &id2, &err), TL_OK);
    tl_expr_print(&ea, id2, p2, sizeof p2);
    CHECK_EQ_STR(p1, p2);
    CHECK_EQ_INT(ea.nodes.n, before);
}

/* Fail each allocation of an evaluation in turn: every failure must be a
 * clean TL_ERR_OOM (ASan reports any leak at exit). */
TL_TEST(test_oom)
{
    static const char *texts[] = {
        ("case when a > 0 then s || '!' when b > 0 then cast(b as string) else "
         "coalesce(s, '" LONG_S "') end"),
        ("a in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18) "
         "or s in ('x', 'y') and not t and b between 0 and 3"),
        "a < 1000 and a * 1000 > 0 or d > '2024-01-01'",
        "try_cast(s as int) + a // 2 - amount % 3",
        "coalesce(a, amount * 2, 1) is null or d - 1 > d",
    };
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
        TlExprId id;
        int okay = 0;
        CHECK_EQ_INT(prep(texts[k], false, &id), TL_OK);
        for (uint64_t n = 1; n < 2000 && !okay; n++) {
            TlArray *r = NULL;
            uint32_t *sel = NULL;
            int64_t n_sel;
            bool all;
            TlStatus st;
            tl_alloc_fail_at(n);
            st = tl_eval(&ea, id, batch, &r, &err);
            tl_alloc_fail_at(0);
            if (st == TL_OK) {
                okay = 1;
                tl_array_release(r);
            } else {
                CHECK_EQ_INT(st, TL_ERR_OOM);
            }
            if (k == 0 || k == 3) continue; /* not predicates */
            tl_alloc_fail_at(n);
            st = tl_eval_filter(&ea, id, batch, &sel, &n_sel, &all, &err);
            tl_alloc_fail_at(0);
            tl_free(sel);
            if (st != TL_OK) CHECK_EQ_INT(st, TL_ERR_OOM);
        }
        CHECK(okay);
    }
}

int main(void)
{
    setup();
    TL_RUN(test_columns_literals);
    TL_RUN(test_arith);
    TL_RUN(test_error_format);
    TL_RUN(test_type_errors);
    TL_RUN(test_compare);
    TL_RUN(test_logic_in);
    TL_RUN(test_casts);
    TL_RUN(test_lazy);
    TL_RUN(test_lazy_big);
    TL_RUN(test_aggregates);
    TL_RUN(test_filter);
    TL_RUN(test_resolve_idempotent);
    TL_RUN(test_oom);
    tl_batch_free(batch);
    tl_schema_free(&sch);
    tl_ea_free(&ea);
    return tl_test_summary(__FILE__);
}
