/*
 * test_selector.c -- column selectors' text (lib/dsl/selector.c): the glob
 * matcher, and which items read as selectors with what parts.  What a
 * selector matches in a schema, and its errors, are in
 * tests/cli/selectors.bats (the planner expands them).
 */
#include "../../kernels/fn_regex.h"
#include "../../lib/dsl/dsl.h"
#include "tl_test.h"

#include <fnmatch.h>
#include <stdlib.h>

static TlExprArena ea;
static TlError err;

TL_TEST(test_glob_match)
{
    static const struct { const char *pat, *name; bool want; } cases[] = {
        {"*", "", true},           {"*", "anything", true},
        {"v*", "v", true},         {"v*", "v1", true},
        {"v*", "xv1", false},      {"*1", "v1", true},
        {"*1", "v12", false},      {"id?", "id1", true},
        {"id?", "id", false},      {"id?", "id12", false},
        {"?", "é", true},          {"??", "é", false},     /* a code point */
        {"v[12]", "v1", true},     {"v[12]", "v3", false},
        {"v[1-3]", "v3", true},    {"v[!1-3]", "v3", false},
        {"v[!1-3]", "v4", true},   {"v[^1]", "v2", true},
        {"[é]x", "éx", true},      {"v[", "v[", true},      /* unclosed: itself */
        {"a*b*c", "axxbyyc", true}, {"a*b*c", "axxbyy", false},
        {"*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
        {"v.*", "v.x", true},      {"v.*", "vx", false},
        {"V*", "v1", false},       /* case matters, as in names */
        {"*_id", "user_id", true}, {"**", "x", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool got = tl_glob_match(cases[i].pat, cases[i].name);
        if (got != cases[i].want)
            fprintf(stderr, "glob %s on %s: got %d\n", cases[i].pat, cases[i].name, got);
        CHECK(got == cases[i].want);
    }
}

static TlItem *items(const char *text, bool split, TlItemKind kind, uint32_t *n);

/* Random ASCII patterns and names against fnmatch(3) (POSIX globs, C
 * locale: the same `*`, `?`, `[...]`, `[!...]`, and an unclosed `[` is
 * itself). */
TL_TEST(test_glob_vs_fnmatch)
{
    static const char pat_chars[] = "ab*?[]!-c", name_chars[] = "abc[]-!*?";
    uint64_t x = 0x9E3779B97F4A7C15u;
    int n = (int)tl_test_scaled(200000, 10), compared = 0, matched = 0;
    for (int k = 0; k < n; k++) {
        char pat[12], name[12];
        int lp, ln;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        lp = (int)(x % 10);
        ln = (int)((x >> 8) % 10);
        for (int i = 0; i < lp; i++) pat[i] = pat_chars[(x >> (16 + 3 * i)) % 9];
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        for (int i = 0; i < ln; i++) name[i] = name_chars[(x >> (3 * i)) % 9];
        pat[lp] = name[ln] = 0;
        /* fnmatch reads a set that starts with `]` or holds a range ending
         * in `]` differently from ours only in forms no column pattern
         * needs: skip sets with `]` first and ranges with a `[` or `]` end */
        if (strstr(pat, "[]") || strstr(pat, "[!]") || strstr(pat, "-]") ||
            strstr(pat, "[-") || strstr(pat, "!-") || strstr(pat, "[[") ||
            strstr(pat, "-["))
            continue;
        bool want = fnmatch(pat, name, 0) == 0, got = tl_glob_match(pat, name);
        compared++;
        matched += want;
        if (want != got) fprintf(stderr, "glob %s on %s: got %d, fnmatch %d\n", pat, name, got, want);
        CHECK(want == got);
        if (want != got) return;
    }
    CHECK(compared > n / 4 && matched > n / 100); /* the skips leave most */
}

/* Random selector-shaped texts through every item kind: no crash, no leak
 * (run under ASan), and each either parses or fails with a message. */
TL_TEST(test_selector_noise)
{
    static const char *const bits[] = {"v", "*", "?", "[1-2]", "#", "1", "0", ":", "\"", "a b",
                                       " exclude ", "(", ")", ",", " desc", " nulls first",
                                       " as ", "-", "x", " ", "é", "::", "[!",
                                       "columns('", "')", "''", "COLUMNS ("};
    uint64_t x = 0x2545F4914F6CDD1Du;
    int n = (int)tl_test_scaled(20000, 10);
    for (int k = 0; k < n; k++) {
        char text[128] = "";
        size_t len = 0;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        for (int i = 0, m = (int)(x % 8) + 1; i < m; i++) {
            const char *b = bits[(x >> (4 * i + 5)) % (sizeof bits / sizeof bits[0])];
            size_t bl = strlen(b);
            if (len + bl >= sizeof text) break;
            memcpy(text + len, b, bl + 1);
            len += bl;
        }
        static const TlItemKind kinds[] = {TL_ITEM_SELECT, TL_ITEM_SORT, TL_ITEM_KEY,
                                           TL_ITEM_NAME};
        for (size_t j = 0; j < 4; j++) {
            uint32_t cnt;
            err.msg[0] = 0;
            TlItem *it = items(text, true, kinds[j], &cnt);
            CHECK(it != NULL || err.msg[0] != 0);
        }
    }
    tl_ea_free(&ea);
    CHECK(tl_ea_init(&ea, &err) == TL_OK);
}

static TlItem *items(const char *text, bool split, TlItemKind kind, uint32_t *n)
{
    uint16_t src;
    TlItem *it = NULL;
    *n = 0;
    if (tl_ea_add_src(&ea, text, "--test", &src, &err) != TL_OK) return NULL;
    if (tl_parse_items(&ea, src, split, kind, &it, n, &err) != TL_OK) return NULL;
    return it;
}

TL_TEST(test_selector_forms)
{
    uint32_t n;
    TlItem *it = items("v*, id1:id3, #2, #1:#3, \"a b\":c, * exclude (x, #4, y*), id", true,
                       TL_ITEM_SELECT, &n);
    CHECK(it && n == 7);
    if (!it || n != 7) return;
    CHECK(it[0].sel && it[0].sel->base.kind == TL_SEL_GLOB);
    CHECK_EQ_STR(it[0].sel->base.a.name, "v*");
    CHECK(it[0].expr == TL_NO_ID);
    CHECK(it[1].sel && it[1].sel->base.kind == TL_SEL_RANGE);
    CHECK_EQ_STR(it[1].sel->base.a.name, "id1");
    CHECK_EQ_STR(it[1].sel->base.b.name, "id3");
    CHECK(it[2].sel && it[2].sel->base.kind == TL_SEL_POS && it[2].sel->base.a.pos == 2);
    CHECK(it[3].sel && it[3].sel->base.kind == TL_SEL_RANGE &&
          it[3].sel->base.a.pos == 1 && it[3].sel->base.b.pos == 3 &&
          !it[3].sel->base.a.name);
    CHECK(it[4].sel && it[4].sel->base.kind == TL_SEL_RANGE);
    CHECK_EQ_STR(it[4].sel->base.a.name, "a b");
    const TlSelector *x = it[5].sel;
    CHECK(x && x->base.kind == TL_SEL_GLOB && x->n_excl == 3);
    if (x && x->n_excl == 3) {
        CHECK(x->excl[0].kind == TL_SEL_NAME);
        CHECK(x->excl[1].kind == TL_SEL_POS && x->excl[1].a.pos == 4);
        CHECK(x->excl[2].kind == TL_SEL_GLOB);
        /* spans point into the source, for carets */
        CHECK(x->excl[2].len == 2);
    }
    CHECK(it[6].sel == NULL && it[6].expr != TL_NO_ID); /* a plain name */
    /* in select, a selector may take a name (the planner checks it has one
     * column); elsewhere `as` ends no selector */
    it = items("#1 as x, v* AS \"y z\"", true, TL_ITEM_SELECT, &n);
    CHECK(it && n == 2);
    if (it && n == 2) {
        CHECK(it[0].sel && it[0].name && strcmp(it[0].name, "x") == 0);
        CHECK(it[1].sel && it[1].name && strcmp(it[1].name, "y z") == 0);
    }
    CHECK(items("#1 as x", false, TL_ITEM_SORT, &n) == NULL);
}

TL_TEST(test_selector_not)
{
    /* names, quoted names and expressions stay what they were */
    static const char *const plain[] = {"\"v*\"", "a", "a * b", "count(*)", "a + 1",
                                        "id1 :: int", "-v"};
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        uint32_t n;
        TlItem *it = items(plain[i], false, TL_ITEM_SORT, &n);
        CHECK(it && n == 1 && it[0].sel == NULL);
    }
    /* `a*b` is a pattern that also reads as an expression: both kept */
    uint32_t n;
    TlItem *it = items("a*b", false, TL_ITEM_SELECT, &n);
    CHECK(it && n == 1 && it[0].sel && it[0].expr != TL_NO_ID);
    /* a selector shape the grammar refuses falls to the expression parser,
     * which reports it */
    CHECK(items("v* as", false, TL_ITEM_SELECT, &n) == NULL);
    CHECK(items("v* as w*", false, TL_ITEM_SELECT, &n) == NULL);
    CHECK(items("#", false, TL_ITEM_SELECT, &n) == NULL);
    CHECK(items("* exclude (a", false, TL_ITEM_SELECT, &n) == NULL);
    /* filters and aggregates take no selectors */
    CHECK(items("v*", false, TL_ITEM_EXPR, &n) == NULL);
}

TL_TEST(test_selector_sort)
{
    uint32_t n;
    TlItem *it = items("v* desc nulls first, -id?, #2 asc, -#1 nulls last", true,
                       TL_ITEM_SORT, &n);
    CHECK(it && n == 4);
    if (!it || n != 4) return;
    CHECK(it[0].sel && it[0].desc && it[0].nulls_first);
    CHECK(it[1].sel && it[1].desc && !it[1].nulls_first);
    CHECK(it[2].sel && !it[2].desc);
    CHECK(it[3].sel && it[3].desc && !it[3].nulls_first);
    /* no selector: `-v * asc` and `v * desc` read as products with columns
     * named asc and desc (which the planner then does not find) */
    it = items("-v* asc", false, TL_ITEM_SORT, &n);
    CHECK(it && n == 1 && !it[0].sel);
    it = items("v* desc", false, TL_ITEM_SELECT, &n); /* direction: sort only */
    CHECK(it && n == 1 && !it[0].sel);
}

/* columns('re'): the pattern's value (a doubled quote is one), the span of
 * its literal for carets, any case and blanks around the literal; in every
 * part of a selector but a range. */
TL_TEST(test_selector_regex)
{
    uint32_t n;
    const char *text = "columns('^v[0-9]$'), COLUMNS ( 'it''s' ) as x, "
                       "* exclude (columns('d'), a)";
    TlItem *it = items(text, true, TL_ITEM_SELECT, &n);
    CHECK(it && n == 3);
    if (!it || n != 3) return;
    const TlSelPart *b = &it[0].sel->base;
    CHECK(it[0].sel && b->kind == TL_SEL_REGEX && it[0].expr == TL_NO_ID);
    CHECK_EQ_STR(b->a.name, "^v[0-9]$");
    CHECK(b->start == 0 && b->len == 19 && b->a.start == 8 && b->a.len == 10);
    b = &it[1].sel->base;
    CHECK(it[1].sel && b->kind == TL_SEL_REGEX);
    CHECK_EQ_STR(b->a.name, "it's");
    CHECK(b->a.len == 7 && strncmp(text + b->a.start, "'it''s'", 7) == 0);
    CHECK_EQ_STR(it[1].name, "x");
    const TlSelector *x = it[2].sel;
    CHECK(x && x->n_excl == 2 && x->excl[0].kind == TL_SEL_REGEX);
    it = items("columns('^v') desc nulls first", false, TL_ITEM_SORT, &n);
    CHECK(it && n == 1 && it[0].sel && it[0].desc && it[0].nulls_first);
    it = items("-columns('')", false, TL_ITEM_SORT, &n);
    CHECK(it && n == 1 && it[0].sel && it[0].desc);
    if (it && it[0].sel) CHECK_EQ_STR(it[0].sel->base.a.name, "");
    it = items("columns('x')", false, TL_ITEM_NAME, &n);
    CHECK(it && n == 1 && it[0].sel && it[0].sel->base.kind == TL_SEL_REGEX);
    /* no selector: an expression (a column named columns; a call the
     * resolver reports, there being no function columns) or a syntax
     * error the expression parser reports */
    static const char *const not_sel[] = {"columns(v)", "columns('a'):b", "columns('a'",
                                          "columns('a' 'b')", "columns", "columnsx('a')"};
    for (size_t i = 0; i < sizeof not_sel / sizeof not_sel[0]; i++) {
        it = items(not_sel[i], false, TL_ITEM_SELECT, &n);
        CHECK(it == NULL || (n == 1 && !it[0].sel));
    }
}

/* The matcher of columns('re'): regexp_matches' partial match. */
TL_TEST(test_regex_search)
{
    static const struct { const char *re, *name; bool want; } cases[] = {
        {"v", "v1", true},        {"v", "xv", true},        {"^v", "xv", false},
        {"^v[0-9]$", "v1", true}, {"^v[0-9]$", "v10", false}, {"", "any", true},
        {"V", "v1", false},       {"é$", "café", true},     {"1$", "v1\n", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TlRegex *re;
        size_t pos;
        bool hit = !cases[i].want;
        CHECK(tl_k_regex_compile(cases[i].re, strlen(cases[i].re), "", 0, false, &re,
                                 &pos, &err) == TL_OK);
        CHECK(tl_k_regex_search(re, cases[i].name, strlen(cases[i].name), &hit,
                                &err) == TL_OK);
        if (hit != cases[i].want)
            fprintf(stderr, "regex %s on %s: got %d\n", cases[i].re, cases[i].name, hit);
        CHECK(hit == cases[i].want);
        tl_k_regex_free(re);
    }
}

TL_TEST(test_group_keys)
{
    uint32_t n;
    TlItem *it = items("m = date_trunc('month', d), date_trunc('day', d) as dd, k, v*",
                       true, TL_ITEM_KEY, &n);
    CHECK(it && n == 4);
    if (!it || n != 4) return;
    CHECK_EQ_STR(it[0].name, "m");
    CHECK_EQ_STR(it[1].name, "dd");
    CHECK(it[2].name == NULL && strcmp(it[2].auto_name, "k") == 0);
    CHECK(it[3].sel != NULL);
    /* a comparison key is written with == or in parentheses */
    it = items("(a = b), a == b", true, TL_ITEM_KEY, &n);
    CHECK(it && n == 2 && !it[0].name && !it[1].name);
    CHECK(items("m = x as n", false, TL_ITEM_KEY, &n) == NULL);
}

int main(void)
{
    if (tl_ea_init(&ea, &err) != TL_OK) return 1;
    TL_RUN(test_glob_match);
    TL_RUN(test_glob_vs_fnmatch);
    TL_RUN(test_selector_noise);
    TL_RUN(test_selector_forms);
    TL_RUN(test_selector_not);
    TL_RUN(test_selector_sort);
    TL_RUN(test_selector_regex);
    TL_RUN(test_regex_search);
    TL_RUN(test_group_keys);
    tl_ea_free(&ea);
    return tl_test_summary(__FILE__);
}
