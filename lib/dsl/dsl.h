/*
 * dsl.h -- parsing the expression language: one expression, or a list of
 * items (select items, sort keys, names, renames) into the expression arena
 * of lib/expr.  The lexer (lexer.h) and the parser's state (parse.h) are
 * internal to lib/dsl.
 */
#ifndef TL_DSL_H
#define TL_DSL_H

#include "../expr/expr.h"

/* Parse srcs[src].text[start, end) as one expression.  Syntax errors are
 * TL_ERR_USAGE with a caret.  Nesting (parentheses, arguments) deeper than
 * TL_MAX_DEPTH is an error, not a stack overflow; so is a tree higher than
 * TL_MAX_HEIGHT (a chain of operators; TL_MAX_DEPTH on a thread without a
 * deep stack, lib/core/pool.h). */
#define TL_MAX_DEPTH 1000
#define TL_MAX_HEIGHT 100000
TlStatus tl_parse_expr(TlExprArena *ea, uint16_t src, uint32_t start,
                       uint32_t end, TlExprId *out, TlError *err);

typedef enum TlItemKind {
    TL_ITEM_EXPR,   /* EXPR                          (filter, group-by keys) */
    TL_ITEM_SELECT, /* EXPR [as NAME]                 (select)               */
    TL_ITEM_ASSIGN, /* [NAME =] EXPR                  (agg; with requires NAME) */
    TL_ITEM_SORT,   /* [-]EXPR [asc|desc] [nulls first|last]                 */
    TL_ITEM_NAME,   /* NAME (bare or double-quoted)   (drop, distinct, join on) */
    TL_ITEM_RENAME, /* OLD:NEW                                               */
} TlItemKind;

typedef struct TlItem {
    TlExprId expr;      /* TL_NO_ID for NAME/RENAME items */
    const char *name;   /* explicit name (as/=, NAME, OLD), or NULL */
    const char *name2;  /* RENAME: NEW */
    const char *auto_name; /* name when none is given (see tl_item_auto_name) */
    bool desc, nulls_first;
    uint16_t src;
    uint32_t start, len;   /* span of the whole item */
} TlItem;

/* Split srcs[src].text at commas outside parentheses and quotes (when
 * `split`; otherwise the whole text is one item) and parse each item as
 * `kind`.  *items is allocated from ea->pool.  An empty item is an error. */
TlStatus tl_parse_items(TlExprArena *ea, uint16_t src, bool split,
                        TlItemKind kind, TlItem **items, uint32_t *n_items,
                        TlError *err);

#endif
