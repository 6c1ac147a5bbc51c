/*
 * test_quote.c -- tl_quote and friends (lib/core/quote.c): the escapes, the
 * UTF-8 decoding behind them (overlong, surrogate and truncated sequences
 * are bytes, not characters), the cut with its length, errno kept, and a
 * whole message escaped twice staying the same.
 */
#include "../../lib/core/core.h"
#include "tl_test.h"

#include <errno.h>

static void check_quote(const char *s, size_t n, const char *want)
{
    TlQuoted q = tl_quote(s, n);
    CHECK_EQ_STR(q.s, want);
}

TL_TEST(escapes)
{
    check_quote("abc", 3, "\"abc\"");
    check_quote("", 0, "\"\"");
    check_quote("a\"b\\c", 5, "\"a\\\"b\\\\c\"");
    check_quote("\t\n\r\x01\x1b\x7f", 6, "\"\\t\\n\\r\\x01\\x1b\\x7f\"");
    check_quote("a\0b", 3, "\"a\\x00b\"");
    check_quote("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9,
                "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\""); /* é € 😀 kept */
    check_quote("\xc2\x9b" "2J", 4, "\"\\u009b2J\"");            /* C1 CSI */
    check_quote("\xe2\x80\xae" "x", 4, "\"\\u202ex\"");          /* RLO */
    check_quote("\xe2\x81\xa6\xe2\x80\xa8", 6, "\"\\u2066\\u2028\"");
    check_quote("\xc0\xaf", 2, "\"\\xc0\\xaf\"");                /* overlong */
    check_quote("\xed\xa0\x80", 3, "\"\\xed\\xa0\\x80\"");       /* surrogate */
    check_quote("\xe2\x82", 2, "\"\\xe2\\x82\"");                /* truncated */
    check_quote("\xf4\x90\x80\x80", 4, "\"\\xf4\\x90\\x80\\x80\""); /* > U+10FFFF */
    check_quote("\xff" "a", 2, "\"\\xffa\"");
    CHECK_EQ_STR(tl_quote(NULL, 0).s, "(none)");
}

TL_TEST(cut_with_length)
{
    char buf[20000];
    memset(buf, 'a', sizeof buf);
    /* 64 bytes are shown whole, 65 are cut to 48 */
    CHECK_EQ_STR(tl_quote(buf, 64).s,
                 "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"");
    CHECK_EQ_STR(tl_quote(buf, 65).s,
                 "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xe2\x80\xa6\" (65 bytes)");
    CHECK_EQ_STR(tl_quote(buf, 12345).s,
                 "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xe2\x80\xa6\" (12,345 bytes)");
    CHECK_EQ_STR(tl_quote(buf, 1234567).s + 53, " (1,234,567 bytes)");
    /* 47 'a' then a 2-byte character that would end past byte 48: cut before it */
    buf[47] = (char)0xc3;
    buf[48] = (char)0xa9;
    CHECK_EQ_STR(tl_quote(buf, 100).s,
                 "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xe2\x80\xa6\" (100 bytes)");
    /* names are shown whole up to 256 bytes */
    buf[47] = buf[48] = 'a';
    buf[256] = 0;
    CHECK_EQ_INT((long long)strlen(tl_quote_name(buf).s), 258);
    buf[256] = 'a';
    buf[257] = 0;
    CHECK_EQ_STR(tl_quote_name(buf).s + 241, "\xe2\x80\xa6\" (257 bytes)");
    CHECK_EQ_STR(tl_escape_name(buf).s + 240, "\xe2\x80\xa6 (257 bytes)");
}

TL_TEST(json_and_unquoted)
{
    /* a JSON string's escapes stay as written */
    CHECK_EQ_STR(tl_quote_json("a\\\"b\\u001b", 10).s, "\"a\\\"b\\u001b\"");
    CHECK_EQ_STR(tl_quote_json("\x1b\xc2\x9b", 3).s, "\"\\x1b\\u009b\"");
    CHECK_EQ_STR(tl_escape_name("x\x1b[1m\".csv").s, "x\\x1b[1m\".csv");
    CHECK_EQ_STR(tl_escape_value("{\"a\":1}", 7).s, "{\"a\":1}");
}

TL_TEST(keeps_errno)
{
    errno = ENOENT;
    (void)tl_quote_name("a\x1b");
    CHECK_EQ_INT(errno, ENOENT);
    errno = EACCES;
    (void)tl_quote(NULL, 0);
    CHECK_EQ_INT(errno, EACCES);
}

TL_TEST(whole_message)
{
    char a[256], b[256];
    const char *msg = "bad \x1b[2J \"x\"\n  --filter: a\tb\n  ^";
    CHECK_EQ_INT((long long)tl_escape_text(a, sizeof a, msg), 36);
    CHECK_EQ_STR(a, "bad \\x1b[2J \"x\"\n  --filter: a\\tb\n  ^");
    tl_escape_text(b, sizeof b, a);
    CHECK_EQ_STR(b, a); /* escaped text has no control bytes left */
    /* a small buffer ends on a whole character */
    tl_escape_text(a, 4, "ab\xc3\xa9");
    CHECK_EQ_STR(a, "ab");
}

int main(void)
{
    TL_RUN(escapes);
    TL_RUN(cut_with_length);
    TL_RUN(json_and_unquoted);
    TL_RUN(keeps_errno);
    TL_RUN(whole_message);
    return tl_test_summary(__FILE__);
}
