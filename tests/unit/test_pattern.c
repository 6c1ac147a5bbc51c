/*
 * test_pattern.c -- input patterns with `**` and `{a,b}` (lib/run/pattern.c)
 * over a folder tree made here: the matches, sorted and without
 * duplicates, hidden names and folders left out, links to folders not
 * followed, and the limits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/run/pattern.h"
#include "tl_test.h"

static char root[64];

static void touch(const char *rel)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    FILE *f = fopen(p, "w");
    if (f) fclose(f);
}

static void dir(const char *rel)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    mkdir(p, 0755);
}

/* The matches of pattern (below root), root's prefix removed, joined by
 * spaces. */
static const char *matches(const char *pattern)
{
    static char buf[1024];
    char p[256];
    char **m = NULL;
    size_t n = 0;
    TlError err = {0};
    snprintf(p, sizeof p, "%s/%s", root, pattern);
    buf[0] = '\0';
    if (tl_glob_expand(p, &m, &n, &err) != TL_OK) {
        snprintf(buf, sizeof buf, "error: %.900s", err.msg);
        return buf;
    }
    for (size_t i = 0; i < n; i++) {
        size_t rl = strlen(root) + 1;
        if (i) strcat(buf, " ");
        strncat(buf, strlen(m[i]) > rl ? m[i] + rl : m[i], sizeof buf - strlen(buf) - 1);
        tl_free(m[i]);
    }
    tl_free(m);
    return buf;
}

TL_TEST(extended_patterns)
{
    CHECK(tl_glob_extended("a/**/b.csv"));
    CHECK(tl_glob_extended("**"));
    CHECK(tl_glob_extended("x/**"));
    CHECK(tl_glob_extended("{a,b}.csv"));
    CHECK(tl_glob_extended("x/{a,{b,c}}.csv"));
    CHECK(!tl_glob_extended("a**.csv"));
    CHECK(!tl_glob_extended("*.csv"));
    CHECK(!tl_glob_extended("{a}.csv"));
    CHECK(!tl_glob_extended("\\{a,b}.csv"));
}

TL_TEST(star_star_and_braces)
{
    snprintf(root, sizeof root, "/tmp/tl_pattern_XXXXXX");
    CHECK(mkdtemp(root) != NULL);
    dir("a");
    dir("a/b");
    dir("c");
    dir(".h");
    dir("d");
    touch("x.csv");
    touch("a/y.csv");
    touch("a/b/z.csv");
    touch("a/b/q.tsv");
    touch("c/w.csv");
    touch(".h/h.csv");
    touch("a/.dot.csv");
    touch("d/k{1}.csv");
    char lnk[256], tgt[256];
    snprintf(lnk, sizeof lnk, "%s/c/up", root);
    snprintf(tgt, sizeof tgt, "%s", root);
    CHECK(symlink(tgt, lnk) == 0);

    CHECK_EQ_STR(matches("**/*.csv"), "a/b/z.csv a/y.csv c/w.csv d/k{1}.csv x.csv");
    CHECK_EQ_STR(matches("**"), "a/b/q.tsv a/b/z.csv a/y.csv c/w.csv d/k{1}.csv x.csv");
    CHECK_EQ_STR(matches("a/**/*.csv"), "a/b/z.csv a/y.csv");
    CHECK_EQ_STR(matches("{c,a}/*.csv"), "a/y.csv c/w.csv");
    CHECK_EQ_STR(matches("{a,a/b}/*"), "a/b/q.tsv a/b/z.csv a/y.csv");
    CHECK_EQ_STR(matches("{c,a/{b,x}}/*.{csv,tsv}"), "a/b/q.tsv a/b/z.csv c/w.csv");
    /* a file two alternatives match is listed once */
    CHECK_EQ_STR(matches("{x,*}.csv"), "x.csv");
    CHECK_EQ_STR(matches("**/{z,x}.csv"), "a/b/z.csv x.csv");
    CHECK_EQ_STR(matches("a/.*.csv"), "a/.dot.csv");
    CHECK_EQ_STR(matches("d/k{1}.csv"), "d/k{1}.csv");
    CHECK_EQ_STR(matches("**/nope.csv"), "");
    CHECK_EQ_STR(matches("nope/**"), "");
    /* "a/./b", "a//b" */
    CHECK_EQ_STR(matches("a/./b//*.csv"), "a/b/z.csv");

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK(system(cmd) == 0);
}

TL_TEST(too_many_alternatives)
{
    char **m = NULL;
    size_t n = 0;
    TlError err = {0};
    CHECK(tl_glob_expand("/{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}",
                         &m, &n, &err) == TL_ERR_USAGE);
    CHECK(strstr(err.msg, "more than 4096 alternatives") != NULL);
}

int main(void)
{
    TL_RUN(extended_patterns);
    TL_RUN(star_star_and_braces);
    TL_RUN(too_many_alternatives);
    return tl_test_summary(__FILE__);
}
