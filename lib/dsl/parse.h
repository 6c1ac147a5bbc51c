/*
 * parse.h -- the parser's state, shared by parser.c and items.c (internal to
 * lib/dsl).
 *
 * A TlParser holds the token array of one source range and a cursor.  Items
 * (items.c) drive it: parse an expression, then look at what follows (`as`,
 * `desc`, `nulls first`, ...).  Each parsed expression comes back as a
 * TlPNode: its id plus the depth of its tree and its *syntactic* span, which
 * includes enclosing parentheses (the node's own span does not), so that a
 * parent's span and an item's auto name cover the text exactly as written.
 */
#ifndef TL_PARSE_H
#define TL_PARSE_H

#include "lexer.h"

typedef struct TlParser {
    TlExprArena *ea;
    uint16_t src;
    const char *text;      /* ea->srcs[src].text (stable: it is in the pool) */
    TlToken *toks;         /* ends with TL_TK_EOF */
    uint32_t n_toks, pos;
    uint32_t depth;        /* current recursion depth */
    TlExprId *stk;         /* children being collected (call args, in lists) */
    uint32_t n_stk, cap_stk;
} TlParser;

typedef struct TlPNode {
    TlExprId id;
    uint32_t depth;        /* height of the tree under id (a leaf is 1) */
    uint32_t start, end;   /* syntactic span, parentheses included */
} TlPNode;

/* Tokenize srcs[src].text[start, end) and set the cursor on the first token.
 * The parser must be closed with tl_parser_close, also after a failure. */
TlStatus tl_parser_open(TlParser *p, TlExprArena *ea, uint16_t src,
                        uint32_t start, uint32_t end, TlError *err);
void tl_parser_close(TlParser *p);

/* Parse one expression at the cursor (loosest precedence); the cursor is left
 * on the first token that does not continue it. */
TlStatus tl_parser_expr(TlParser *p, TlPNode *out, TlError *err);

/* The token `ahead` positions after the cursor (the EOF token past the end). */
static inline const TlToken *tl_parser_tok(const TlParser *p, uint32_t ahead)
{
    uint32_t i = p->pos + ahead;
    return &p->toks[i < p->n_toks ? i : p->n_toks - 1];
}

/* "syntax error: unexpected ..." with a caret under the cursor's token. */
TlStatus tl_parser_unexpected(TlParser *p, TlError *err);

/* Decode a WORD or QNAME token into a NUL-terminated name in ea->pool. */
TlStatus tl_parser_name(TlParser *p, const TlToken *t, const char **name,
                        TlError *err);

#endif
