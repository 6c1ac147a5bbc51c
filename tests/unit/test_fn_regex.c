/*
 * test_fn_regex.c -- the regular expression kernels (kernels/fn_regex.c)
 * and ilike: compile errors and their offsets, options, each function with
 * a pattern compiled once and one compiled by the kernel (which must
 * agree), nulls, per-row patterns, and out-of-memory at every allocation.
 * Expected values are DuckDB's (RE2) answers to the same calls.
 */
#include "../../kernels/fn.h"
#include "../../kernels/fn_regex.h"
#include "tl_arrays.h"
#include "tl_test.h"

/* Row i as text ("NULL" for null) into buf. */
static const char *txt(const TlArray *a, int64_t i, char *buf, size_t cap)
{
    if (!tl_array_valid(a, i)) return "NULL";
    if (a->type == TL_TBOOL) return tl_array_bool(a, i) ? "true" : "false";
    const TlView *v = &tl_array_views(a)[i];
    snprintf(buf, cap, "%.*s", (int)tl_view_len(*v), (const char *)tl_view_ptr(v, a->data));
    return buf;
}

/* name(s, pattern, extra...) over one string, both with the pattern
 * compiled once beforehand and compiled by the kernel: the two must agree;
 * returns the answer as text (or "ERROR"). */
static const char *run1(const char *name, const char *s, const char *pat,
                        const char *extra, const char *flags)
{
    static char out[2][256];
    int fa;
    bool allow_g, full;
    CHECK(tl_k_regex_fn(name, &fa, &allow_g, &full));
    for (int pass = 0; pass < 2; pass++) {
        TlDatum d[4];
        int n = 0;
        d[n++] = (TlDatum){mk_s1(s), true};
        d[n++] = (TlDatum){mk_s1(pat), true};
        if (extra) d[n++] = (TlDatum){strcmp(name, "regexp_extract") == 0 ? mk_i1(atoi(extra)) : mk_s1(extra), true};
        if (flags) d[n++] = (TlDatum){mk_s1(flags), true};
        TlRegex *re = NULL;
        size_t pos;
        TlError err = {0};
        if (pass == 0)
            CHECK_EQ_INT(tl_k_regex_compile(pat, strlen(pat), flags ? flags : "",
                                            flags ? strlen(flags) : 0, full, &re,
                                            &pos, &err), TL_OK);
        TlArray *r = NULL;
        int64_t row = -1;
        TlStatus st = tl_k_regex_call(name, re, d, n, 1, &r, &row, &err);
        char tmp[256];
        snprintf(out[pass], sizeof out[pass], "%s", st == TL_OK ? txt(r, 0, tmp, sizeof tmp) : "ERROR");
        tl_array_release(r);
        tl_k_regex_free(re);
        for (int i = 0; i < n; i++) tl_array_release((TlArray *)d[i].array);
    }
    CHECK_EQ_STR(out[0], out[1]);
    return out[0];
}

TL_TEST(test_compile_errors)
{
    static const struct {
        const char *pat, *flags;
        size_t pos;
    } bad[] = {
        {"a(b", "", 3}, {"[", "", 1}, {"*", "", 0}, {"ab\\Z", "", 2},
        {"a", "x", 0}, {"a", "ic q", 3},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        TlRegex *re = NULL;
        size_t pos = 99;
        TlError err = {0};
        CHECK_EQ_INT(tl_k_regex_compile(bad[i].pat, strlen(bad[i].pat), bad[i].flags,
                                        strlen(bad[i].flags), false, &re, &pos, &err),
                     TL_ERR_USAGE);
        CHECK(re == NULL);
        CHECK_EQ_INT(pos, bad[i].pos);
        CHECK(err.msg[0] != 0);
    }
    size_t bad_at;
    CHECK(!tl_k_regex_flags_ok("ig", 2, false, &bad_at));
    CHECK_EQ_INT(bad_at, 1);
    CHECK(tl_k_regex_flags_ok("ig", 2, true, &bad_at));
    CHECK(tl_k_regex_flags_ok("c i\tl m n p s", 13, false, &bad_at));
    /* \Z inside \Q...\E is a literal Z, and l makes it a literal too */
    TlRegex *re = NULL;
    size_t pos;
    TlError err = {0};
    CHECK_EQ_INT(tl_k_regex_compile("\\Q\\Z\\E", 6, "", 0, false, &re, &pos, &err), TL_OK);
    tl_k_regex_free(re);
    CHECK_EQ_INT(tl_k_regex_compile("\\Z", 2, "l", 1, false, &re, &pos, &err), TL_OK);
    tl_k_regex_free(re);
}

TL_TEST(test_match)
{
    CHECK_EQ_STR(run1("regexp_matches", "abc", "b", NULL, NULL), "true");
    CHECK_EQ_STR(run1("regexp_matches", "abc", "B", NULL, "i"), "true");
    CHECK_EQ_STR(run1("regexp_matches", "abc", "B", NULL, "ic"), "false");
    CHECK_EQ_STR(run1("regexp_matches", "abc\n", "c$", NULL, NULL), "false");
    CHECK_EQ_STR(run1("regexp_matches", "abc\n", "c$", NULL, "m"), "false");
    CHECK_EQ_STR(run1("regexp_matches", "a\nb", "a.b", NULL, NULL), "false");
    CHECK_EQ_STR(run1("regexp_matches", "a\nb", "a.b", NULL, "s"), "true");
    CHECK_EQ_STR(run1("regexp_matches", "a\rb", "a.b", NULL, NULL), "true");
    CHECK_EQ_STR(run1("regexp_matches", "x\nb", "(?m)^b", NULL, NULL), "true");
    CHECK_EQ_STR(run1("regexp_matches", "a.c", "a.c", NULL, "l"), "true");
    CHECK_EQ_STR(run1("regexp_matches", "abc", "a.c", NULL, "l"), "false");
    CHECK_EQ_STR(run1("regexp_matches", "ÉCOLE", "é", NULL, "i"), "true");
    CHECK_EQ_STR(run1("regexp_matches", "é", "^.$", NULL, NULL), "true");
    CHECK_EQ_STR(run1("regexp_matches", "é", "\\w", NULL, NULL), "false");
    CHECK_EQ_STR(run1("regexp_matches", "é", "[[:alpha:]]", NULL, NULL), "false");
    CHECK_EQ_STR(run1("regexp_matches", "é", "\\pL", NULL, NULL), "true");
    CHECK_EQ_STR(run1("regexp_matches", "\xff" "a", "a", NULL, NULL), "true");
    CHECK_EQ_STR(run1("regexp_matches", "", "", NULL, NULL), "true");
    CHECK_EQ_STR(run1("regexp_full_match", "abc", "a|abc", NULL, NULL), "true");
    CHECK_EQ_STR(run1("regexp_full_match", "abc", "b", NULL, NULL), "false");
    CHECK_EQ_STR(run1("regexp_full_match", "abc", "ABC", NULL, "i"), "true");
}

TL_TEST(test_replace_extract_split)
{
    CHECK_EQ_STR(run1("regexp_replace", "baaac", "a*", "-", "g"), "-b-c-");
    CHECK_EQ_STR(run1("regexp_replace", "abc", "x*", "-", "g"), "-a-b-c-");
    CHECK_EQ_STR(run1("regexp_replace", "abc", "x*", "-", NULL), "-abc");
    CHECK_EQ_STR(run1("regexp_replace", "héllo", "", "-", "g"), "-h-é-l-l-o-");
    CHECK_EQ_STR(run1("regexp_replace", "abc", "(b)", "[\\1\\0\\\\]", NULL), "a[bb\\]c");
    CHECK_EQ_STR(run1("regexp_replace", "abc", "(b)", "[\\2]", NULL), "abc");
    CHECK_EQ_STR(run1("regexp_replace", "abcb", "(b)", "[\\q]", NULL), "abcb");
    CHECK_EQ_STR(run1("regexp_replace", "abcb", "(b)", "[\\q]", "g"), "a[c[");
    CHECK_EQ_STR(run1("regexp_replace", "abcb", "(b)", "x\\", "g"), "axcx");
    CHECK_EQ_STR(run1("regexp_replace", "abAB", "b", "X", "gi"), "aXAX");
    CHECK_EQ_STR(run1("regexp_replace", "aaa", "^a", "X", "g"), "Xaa");
    CHECK_EQ_STR(run1("regexp_extract", "abc123def", "[0-9]+", "0", NULL), "123");
    CHECK_EQ_STR(run1("regexp_extract", "abc", "[0-9]+", "0", NULL), "");
    CHECK_EQ_STR(run1("regexp_extract", "abc123", "([a-z]+)([0-9]+)", "2", NULL), "123");
    CHECK_EQ_STR(run1("regexp_extract", "abc", "(x)?abc", "1", NULL), "");
    CHECK_EQ_STR(run1("regexp_extract", "abc", "(a)", "2", NULL), "");
    CHECK_EQ_STR(run1("regexp_extract", "abc", "A", "0", "i"), "a");
    CHECK_EQ_STR(run1("regexp_split_to_array", "a1b22c", "[0-9]+", NULL, NULL), "[\"a\",\"b\",\"c\"]");
    CHECK_EQ_STR(run1("regexp_split_to_array", "", ",", NULL, NULL), "[\"\"]");
    CHECK_EQ_STR(run1("regexp_split_to_array", "", "", NULL, NULL), "[\"\"]");
    CHECK_EQ_STR(run1("regexp_split_to_array", ",a,", ",", NULL, NULL), "[\"\",\"a\",\"\"]");
    CHECK_EQ_STR(run1("regexp_split_to_array", "aXbc", "X*", NULL, NULL), "[\"a\",\"\",\"b\",\"c\"]");
    CHECK_EQ_STR(run1("regexp_split_to_array", "abc", "$", NULL, NULL), "[\"abc\",\"\"]");
    CHECK_EQ_STR(run1("regexp_split_to_array", "ab cd", "\\b", NULL, NULL), "[\"a\",\"b\",\" \",\"c\",\"d\"]");
    CHECK_EQ_STR(run1("regexp_split_to_array", "xay", "a|", NULL, NULL), "[\"x\",\"\",\"y\"]");
    CHECK_EQ_STR(run1("regexp_split_to_array", "ab", "b|", NULL, NULL), "[\"a\",\"\",\"\"]");
    CHECK_EQ_STR(run1("regexp_split_to_array", "q\"\\\t\x01", "x", NULL, NULL), "[\"q\\\"\\\\\\t\\u0001\"]");
}

/* Arrays: nulls in the string and in a per-row pattern, and a pattern
 * compiled again only when it changes. */
TL_TEST(test_arrays)
{
    const char *s[] = {"abc", NULL, "xbc", "abc", "abc"};
    const char *p[] = {"^a", "a", "^a", NULL, "c$"};
    TlDatum d[2] = {{mk_str(s, 5), false}, {mk_str(p, 5), false}};
    TlArray *r = NULL;
    int64_t row = -1;
    TlError err = {0};
    char b[64];
    CHECK_EQ_INT(tl_k_regex_call("regexp_matches", NULL, d, 2, 5, &r, &row, &err), TL_OK);
    const char *want[] = {"true", "NULL", "false", "NULL", "true"};
    for (int i = 0; i < 5; i++) CHECK_EQ_STR(txt(r, i, b, sizeof b), want[i]);
    tl_array_release(r);
    /* split: a null pattern gives the string whole (DuckDB) */
    CHECK_EQ_INT(tl_k_regex_call("regexp_split_to_array", NULL, d, 2, 5, &r, &row, &err), TL_OK);
    CHECK_EQ_STR(txt(r, 3, b, sizeof b), "[\"abc\"]");
    CHECK_EQ_STR(txt(r, 1, b, sizeof b), "NULL");
    tl_array_release(r);
    /* more distinct patterns than the kernel keeps compiled, alternating:
     * row i matches its own digit only */
    {
        const char *ss[30], *ps[30];
        char sbuf[30][4], pbuf[30][4];
        for (int i = 0; i < 30; i++) {
            snprintf(sbuf[i], sizeof sbuf[i], "%d", i % 10);
            snprintf(pbuf[i], sizeof pbuf[i], "^%d", (i * 7) % 10);
            ss[i] = sbuf[i];
            ps[i] = pbuf[i];
        }
        TlDatum e[2] = {{mk_str(ss, 30), false}, {mk_str(ps, 30), false}};
        CHECK_EQ_INT(tl_k_regex_call("regexp_matches", NULL, e, 2, 30, &r, &row, &err), TL_OK);
        for (int i = 0; i < 30; i++)
            CHECK_EQ_STR(txt(r, i, b, sizeof b), i % 10 == (i * 7) % 10 ? "true" : "false");
        tl_array_release(r);
        tl_array_release((TlArray *)e[0].array);
        tl_array_release((TlArray *)e[1].array);
    }
    /* an invalid per-row pattern: a data error at its row */
    const char *p2[] = {"a", "a", "(", "a", "a"};
    tl_array_release((TlArray *)d[1].array);
    d[1] = (TlDatum){mk_str(p2, 5), false};
    CHECK_EQ_INT(tl_k_regex_call("regexp_matches", NULL, d, 2, 5, &r, &row, &err), TL_ERR_DATA);
    CHECK_EQ_INT(row, 2);
    tl_array_release((TlArray *)d[0].array);
    tl_array_release((TlArray *)d[1].array);
}

TL_TEST(test_ilike)
{
    const char *s[] = {"ABC", "ÉCOLE", "ß", "İ", "ǅ", NULL};
    const char *w_a[] = {"true", "false", "false", "false", "false", "NULL"};
    const char *w_e[] = {"false", "true", "false", "false", "false", "NULL"};
    const char *w_i[] = {"false", "false", "false", "true", "false", "NULL"};
    const char *pats[] = {"a%", "é%", "I"};
    const char *const *wants[] = {w_a, w_e, w_i};
    TlFnKernel k = tl_k_fn_by_name("ilike");
    CHECK(k != NULL);
    for (int t = 0; t < 3; t++) {
        TlDatum d[2] = {{mk_str(s, 6), false}, {mk_s1(pats[t]), true}};
        TlArray *r = NULL;
        int64_t row;
        TlError err = {0};
        char b[16];
        CHECK_EQ_INT(k(d, 2, 6, &r, &row, &err), TL_OK);
        for (int i = 0; i < 6; i++) CHECK_EQ_STR(txt(r, i, b, sizeof b), wants[t][i]);
        tl_array_release(r);
        tl_array_release((TlArray *)d[0].array);
        tl_array_release((TlArray *)d[1].array);
    }
}

TL_TEST(test_oom)
{
    static const char *fns[] = {"regexp_matches", "regexp_replace", "regexp_extract",
                                "regexp_split_to_array", "ilike"};
    const char *s[] = {"Some Long String Value ONE", "two", NULL, "Three Long String Value"};
    for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++) {
        bool done = false;
        for (uint64_t k = 1; k < 400 && !done; k++) {
            TlDatum d[3] = {{mk_str(s, 4), false}, {mk_s1("(o)n"), true}, {mk_s1("<\\1>"), true}};
            int n = strcmp(fns[f], "regexp_replace") == 0 ? 3 : 2;
            TlArray *out = NULL;
            int64_t row = -1;
            TlError e = {0};
            tl_alloc_fail_at(k);
            TlStatus st = tl_k_fn_by_name(fns[f])(d, n, 4, &out, &row, &e);
            tl_alloc_fail_at(0);
            for (int i = 0; i < 3; i++) tl_array_release((TlArray *)d[i].array);
            if (st == TL_OK) {
                CHECK(k > 1);
                tl_array_release(out);
                done = true;
            } else {
                CHECK_EQ_INT(st, TL_ERR_OOM);
                CHECK(out == NULL);
            }
        }
        CHECK(done);
    }
}

int main(void)
{
    TL_RUN(test_compile_errors);
    TL_RUN(test_match);
    TL_RUN(test_replace_extract_split);
    TL_RUN(test_arrays);
    TL_RUN(test_ilike);
    TL_RUN(test_oom);
    return tl_test_summary(__FILE__);
}
