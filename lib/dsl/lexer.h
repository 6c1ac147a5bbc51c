/*
 * lexer.h -- tokens of the expression language (internal to lib/dsl).
 *
 * The lexer turns srcs[src].text[start, end) into an array of tokens before
 * the parser runs, so the parser can look ahead freely (`date '...'`,
 * `name(`, `not in`, `-5::int`).  A token is a kind and a byte span; its
 * value (number, unescaped string, name) is decoded by the parser from the
 * span.  Words are one kind, TL_TK_WORD; tl_keyword (lib/expr/keywords.c)
 * says whether a word is a keyword (case-insensitive), because some keywords
 * (date, timestamp, asc, desc, nulls, first, last) are also valid column and
 * function names.
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
    TL_TK_TILDE,    /* ~  (regular expression, full match) */
    TL_TK_NTILDE,   /* !~ */
} TlTokKind;

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

#endif
