/*
 * keywords.c -- the words of the expression language that are not names.
 *
 * One list for both directions of the text: the lexer (lib/dsl) tags a word
 * with its keyword, and the printer (print.c) and explain double-quote a
 * column name that would read back as one, so that printed text parses to
 * the same tree.  Reserved words (and, null, case, ...) are never a bare
 * column name; soft ones (date, asc, first, ...) are keywords only where
 * the grammar expects them, but a name spelled like one is still printed
 * quoted.
 */
#include "expr.h"

#include <strings.h>

static const struct {
    const char *word;
    TlKeyword kw;
} keywords[] = {
    {"and", TL_KW_AND},       {"or", TL_KW_OR},
    {"not", TL_KW_NOT},       {"in", TL_KW_IN},
    {"is", TL_KW_IS},         {"null", TL_KW_NULL},
    {"like", TL_KW_LIKE},     {"between", TL_KW_BETWEEN},
    {"true", TL_KW_TRUE},     {"false", TL_KW_FALSE},
    {"case", TL_KW_CASE},     {"when", TL_KW_WHEN},
    {"then", TL_KW_THEN},     {"else", TL_KW_ELSE},
    {"end", TL_KW_END},       {"as", TL_KW_AS},
    {"cast", TL_KW_CAST},     {"try_cast", TL_KW_TRY_CAST},
    {"date", TL_KW_DATE},     {"timestamp", TL_KW_TIMESTAMP},
    {"asc", TL_KW_ASC},       {"desc", TL_KW_DESC},
    {"nulls", TL_KW_NULLS},   {"first", TL_KW_FIRST},
    {"last", TL_KW_LAST},     {"ilike", TL_KW_ILIKE},
};

/* Look up a keyword (case-insensitive); TL_KW_NONE for other words. */
TlKeyword tl_keyword(const char *s, size_t len)
{
    if (len < 2 || len > 9) return TL_KW_NONE;
    for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++) {
        if (strlen(keywords[i].word) == len &&
            strncasecmp(keywords[i].word, s, len) == 0)
            return keywords[i].kw;
    }
    return TL_KW_NONE;
}

static bool is_alpha(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* True for a name that prints bare: a word that is not a keyword. */
bool tl_name_is_plain(const char *s, size_t len)
{
    if (len == 0 || !is_alpha((unsigned char)s[0])) return false;
    for (size_t i = 1; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!is_alpha(c) && !is_digit(c)) return false;
    }
    return tl_keyword(s, len) == TL_KW_NONE;
}
