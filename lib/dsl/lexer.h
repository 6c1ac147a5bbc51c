/*
 * lexer.h -- tokens of the expression language (internal to lib/dsl).
 *
 * The lexer turns srcs[src].text[start, end) into an array of tokens before
 * the parser runs, so the parser can look ahead freely (`date '...'`,
 * `name(`, `not in`, `-5::int`).  A token is a kind and a byte span; its
 * value (number, unescaped string, name) is decoded by the parser from the
 * span.  Words are one kind, TL_TK_WORD; tl_lex_keyword says whether a word is
 * a keyword (case-insensitive), because some keywords (date, timestamp, asc,
 * desc, nulls, first, last) are also valid column and function names.
 *
 * The token array always ends with one TL_TK_EOF token whose span is the
 * empty range at `end`.
 */
#ifndef TL_LEXER_H
#define TL_LEXER_H

#include "dsl.h"

typedef enum TlTokKind {
    TL_TK_EOF = 0,
    TL_TK_INT,      /* 123 */
    TL_TK_FLOAT,    /* 1.5  .5  1e3  1.5e-3 */
    TL_TK_STRING,   /* 'it''s' (span includes the quotes) */
    TL_TK_WORD,     /* [A-Za-z_][A-Za-z0-9_]*: name or keyword */
    TL_TK_QNAME,    /* "unit price" (span includes the quotes) */
    TL_TK_LPAREN, TL_TK_RPAREN, TL_TK_COMMA, TL_TK_STAR,
    TL_TK_PLUS, TL_TK_MINUS, TL_TK_SLASH, TL_TK_DSLASH, TL_TK_PERCENT,
    TL_TK_CONCAT,   /* || */
    TL_TK_EQ,       /* =  */
    TL_TK_EQEQ,     /* == */
    TL_TK_NE,       /* != or <> */
    TL_TK_LT, TL_TK_LE, TL_TK_GT, TL_TK_GE,
    TL_TK_DCOLON,   /* :: */
    TL_TK_COLON,    /* :  (rename items) */
} TlTokKind;

/* Keywords; TL_KW_NONE for a plain word. */
typedef enum TlKeyword {
    TL_KW_NONE = 0,
    /* reserved: never a bare column name */
    TL_KW_AND, TL_KW_OR, TL_KW_NOT, TL_KW_IN, TL_KW_IS, TL_KW_NULL,
    TL_KW_LIKE, TL_KW_BETWEEN, TL_KW_TRUE, TL_KW_FALSE, TL_KW_CASE,
    TL_KW_WHEN, TL_KW_THEN, TL_KW_ELSE, TL_KW_END, TL_KW_AS, TL_KW_CAST,
    TL_KW_TRY_CAST,
    /* soft: keywords only where the grammar expects them */
    TL_KW_DATE, TL_KW_TIMESTAMP, TL_KW_ASC, TL_KW_DESC, TL_KW_NULLS,
    TL_KW_FIRST, TL_KW_LAST,
} TlKeyword;

#define TL_KW_FIRST_SOFT TL_KW_DATE

typedef struct TlToken {
    uint8_t kind;      /* TlTokKind */
    uint8_t kw;        /* TlKeyword, for TL_TK_WORD */
    uint32_t start;    /* byte offset in the source text */
    uint32_t len;
} TlToken;

/* Tokenize text[start, end).  *toks is tl_malloc'd (the caller frees it with
 * tl_free, also after a failure) and ends with a TL_TK_EOF token.  Errors
 * (unterminated string or quoted name, a character that starts no token) are
 * TL_ERR_USAGE with a caret, reported through ea/src. */
TlStatus tl_lex(const TlExprArena *ea, uint16_t src, uint32_t start,
                uint32_t end, TlToken **toks, uint32_t *n_toks, TlError *err);

/* The keyword spelled by s[0..len) (case-insensitive), or TL_KW_NONE. */
TlKeyword tl_lex_keyword(const char *s, size_t len);

/* True when s is a bare name that can be printed without double quotes:
 * [A-Za-z_][A-Za-z0-9_]* and not any keyword. */
bool tl_lex_is_plain_name(const char *s, size_t len);

#endif
