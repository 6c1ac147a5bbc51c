/*
 * test_fn_text.c -- the text kernels of fn_text.c (left right lpad rpad
 * reverse repeat strpos initcap) and fn_format.c (format printf): values
 * (DuckDB's answers), nulls, scalar and array arguments, errors with their
 * row, and out-of-memory at every allocation.
 */
#include "../../kernels/fn.h"
#include "tl_arrays.h"
#include "tl_test.h"


static const char *txt(const TlArray *a, int64_t i, char *buf, size_t cap)
{
    if (!tl_array_valid(a, i)) return "NULL";
    if (a->type == TL_TINT64) {
        snprintf(buf, cap, "%lld", (long long)tl_array_i64(a)[i]);
        return buf;
    }
    const TlView *v = &tl_array_views(a)[i];
    snprintf(buf, cap, "%.*s", (int)tl_view_len(*v), (const char *)tl_view_ptr(v, a->data));
    return buf;
}

/* Call name over d[0..n) for n_rows rows, releasing the arguments; the
 * status, *out the result. */
static TlStatus call(const char *name, TlDatum *d, int n, int64_t n_rows,
                     TlArray **out, int64_t *row)
{
    TlError err = {0};
    *out = NULL;
    *row = -1;
    TlStatus st = tl_k_fn_by_name(name)(d, n, n_rows, out, row, &err);
    for (int i = 0; i < n; i++) tl_array_release((TlArray *)d[i].array);
    return st;
}

TL_TEST(test_text_values)
{
    const char *s[] = {"héllo", "héllo", "abc", "abcdef", NULL, "é"};
    const int64_t n[] = {2, -2, 5, 3, 1, 3};
    static const struct {
        const char *fn;
        const char *want[6];
    } cases[] = {
        {"left", {"hé", "hél", "abc", "abc", "NULL", "é"}},
        {"right", {"lo", "llo", "abc", "def", "NULL", "é"}},
        {"repeat", {"héllohéllo", "", "abcabcabcabcabc", "abcdefabcdefabcdef", "NULL", "ééé"}},
    };
    char b[64];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        TlDatum d[2] = {{mk_str(s, 6), false}, {mk_ints(n, 6), false}};
        TlArray *r;
        int64_t row;
        CHECK_EQ_INT(call(cases[c].fn, d, 2, 6, &r, &row), TL_OK);
        for (int i = 0; i < 6; i++) CHECK_EQ_STR(txt(r, i, b, sizeof b), cases[c].want[i]);
        tl_array_release(r);
    }
    /* lpad / rpad with a scalar fill */
    const char *lp[] = {"hé", "", "xyabc", "abc", "NULL", "xyé"};
    const char *rp[] = {"hé", "", "abcxy", "abc", "NULL", "éxy"};
    for (int left = 0; left < 2; left++) {
        TlDatum d[3] = {{mk_str(s, 6), false}, {mk_ints(n, 6), false}, {mk_s1("xy"), true}};
        TlArray *r;
        int64_t row;
        CHECK_EQ_INT(call(left ? "lpad" : "rpad", d, 3, 6, &r, &row), TL_OK);
        for (int i = 0; i < 6; i++) CHECK_EQ_STR(txt(r, i, b, sizeof b), left ? lp[i] : rp[i]);
        tl_array_release(r);
    }
    /* an empty fill where padding is needed: the row */
    TlDatum d[3] = {{mk_str(s, 6), false}, {mk_ints(n, 6), false}, {mk_s1(""), true}};
    TlArray *r;
    int64_t row;
    CHECK_EQ_INT(call("lpad", d, 3, 6, &r, &row), TL_ERR_DATA);
    CHECK_EQ_INT(row, 2);
    /* reverse, strpos, initcap */
    const char *g[] = {"a\r\nb", "🇫🇷🇩🇪", "👍🏽a", "xe\xcc\x81", "", NULL};
    const char *rv[] = {"b\n\ra", "🇩🇪🇫🇷", "a👍🏽", "e\xcc\x81x", "", "NULL"};
    TlDatum dr[1] = {{mk_str(g, 6), false}};
    CHECK_EQ_INT(call("reverse", dr, 1, 6, &r, &row), TL_OK);
    for (int i = 0; i < 6; i++) CHECK_EQ_STR(txt(r, i, b, sizeof b), rv[i]);
    tl_array_release(r);
    const char *h[] = {"héllo", "", "ééé", "abc"};
    const char *nd[] = {"l", "", "é", "z"};
    const char *sp[] = {"3", "1", "1", "0"};
    TlDatum ds[2] = {{mk_str(h, 4), false}, {mk_str(nd, 4), false}};
    CHECK_EQ_INT(call("strpos", ds, 2, 4, &r, &row), TL_OK);
    for (int i = 0; i < 4; i++) CHECK_EQ_STR(txt(r, i, b, sizeof b), sp[i]);
    tl_array_release(r);
    TlDatum di[1] = {{mk_s1("hello wORLD-foo_bar 1st ÉCOLE"), true}};
    CHECK_EQ_INT(call("initcap", di, 1, 1, &r, &row), TL_OK);
    CHECK_EQ_STR(txt(r, 0, b, sizeof b), "Hello World-Foo_Bar 1st École");
    tl_array_release(r);
}

TL_TEST(test_format_values)
{
    char b[128];
    TlArray *r;
    int64_t row;
    TlDatum d1[4] = {{mk_s1("{1}|{0:>5}|{1:x}|{2}"), true}, {mk_s1("ab"), true},
                     {mk_i1(255), true}, {mk_f1(2.5), true}};
    CHECK_EQ_INT(call("format", d1, 4, 1, &r, &row), TL_OK);
    if (r) CHECK_EQ_STR(txt(r, 0, b, sizeof b), "255|   ab|ff|2.5");
    tl_array_release(r);
    /* fmt does not mix numbered and automatic arguments */
    TlDatum d0[3] = {{mk_s1("{1}{}"), true}, {mk_s1("ab"), true}, {mk_i1(1), true}};
    CHECK_EQ_INT(call("format", d0, 3, 1, &r, &row), TL_ERR_DATA);
    TlDatum d2[4] = {{mk_s1("%s|%5d|%.2f"), true}, {mk_s1("ab"), true},
                     {mk_i1(42), true}, {mk_f1(2.5), true}};
    CHECK_EQ_INT(call("printf", d2, 4, 1, &r, &row), TL_OK);
    if (r) CHECK_EQ_STR(txt(r, 0, b, sizeof b), "ab|   42|2.50");
    tl_array_release(r);
    /* an array of formats: the error is at the failing row */
    const char *fm[] = {"{}", "{:d}", "{:s}"};
    TlDatum d3[2] = {{mk_str(fm, 3), false}, {mk_i1(7), true}};
    CHECK_EQ_INT(call("format", d3, 2, 3, &r, &row), TL_ERR_DATA);
    CHECK_EQ_INT(row, 2);
}

static void oom_loop(const char *name, int n_args)
{
    const char *s[] = {"Some Long String Value ONE", "two", NULL, "Three Long String Value"};
    const int64_t n[] = {30, 2, 3, -4};
    for (uint64_t k = 1; k < 400; k++) {
        TlDatum d[3] = {{mk_str(s, 4), false}, {mk_ints(n, 4), false}, {mk_s1("ab"), true}};
        if (strcmp(name, "format") == 0 || strcmp(name, "printf") == 0) {
            tl_array_release((TlArray *)d[0].array);
            d[0] = (TlDatum){mk_s1(strcmp(name, "format") == 0 ? "{:>40}{}" : "%40s%d"), true};
            tl_array_release((TlArray *)d[1].array);
            d[1] = (TlDatum){mk_str(s, 4), false};
            tl_array_release((TlArray *)d[2].array);
            d[2] = (TlDatum){mk_ints(n, 4), false};
        }
        if (strcmp(name, "strpos") == 0) { /* (string, string) */
            tl_array_release((TlArray *)d[1].array);
            d[1] = (TlDatum){mk_s1("ng"), true};
        }
        TlArray *out = NULL;
        int64_t row;
        TlError e = {0};
        tl_alloc_fail_at(k);
        TlStatus st = tl_k_fn_by_name(name)(d, n_args, 4, &out, &row, &e);
        tl_alloc_fail_at(0);
        for (int i = 0; i < 3; i++) tl_array_release((TlArray *)d[i].array);
        if (st == TL_OK) {
            CHECK(k > 1);
            tl_array_release(out);
            return;
        }
        CHECK_EQ_INT(st, TL_ERR_OOM);
        CHECK(out == NULL);
    }
    CHECK(!"OOM loop did not finish");
}

TL_TEST(test_oom)
{
    oom_loop("left", 2);
    oom_loop("lpad", 3);
    oom_loop("repeat", 2);
    oom_loop("reverse", 1);
    oom_loop("initcap", 1);
    oom_loop("strpos", 2);
    oom_loop("format", 3);
    oom_loop("printf", 3);
}

int main(void)
{
    TL_RUN(test_text_values);
    TL_RUN(test_format_values);
    TL_RUN(test_oom);
    return tl_test_summary(__FILE__);
}
