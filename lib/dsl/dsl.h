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
    TL_ITEM_KEY,    /* [NAME =] EXPR [as NAME]        (group-by keys)        */
} TlItemKind;

/* Column selectors (man/tally.1, SELECTORS), read where a list of columns
 * is (select, sort, group-by keys, drop, distinct, by: items of kind SELECT,
 * SORT, KEY and NAME).  lib/dsl reads their text; the planner expands them
 * against the schema of their step (lib/plan/select.c). */
typedef enum TlSelKind {
    TL_SEL_NAME,    /* a bare or double-quoted name: exactly that column */
    TL_SEL_GLOB,    /* v*  id?  v[12]  *  (a pattern, tl_glob_match) */
    TL_SEL_POS,     /* #3: the third column, 1-based */
    TL_SEL_RANGE,   /* id1:id3, #2:#4: from a through b in schema order */
    TL_SEL_REGEX,   /* columns('^v[0-9]$'): a.name the pattern (its value),
                       a.start/len its string literal; a partial match */
} TlSelKind;

typedef struct TlSelEnd {
    const char *name;      /* the name or pattern; NULL: a position */
    int64_t pos;           /* the position as written (0 and past the end
                              kept for the planner's message) */
    uint32_t start, len;   /* span in the item's source */
} TlSelEnd;

typedef struct TlSelPart {
    uint8_t kind;          /* TlSelKind */
    TlSelEnd a, b;         /* NAME, GLOB, POS, REGEX: a; RANGE: a through b */
    uint32_t start, len;
} TlSelPart;

typedef struct TlSelector {
    TlSelPart base;
    TlSelPart *excl;       /* `exclude (...)`: columns taken out again */
    uint32_t n_excl;
} TlSelector;

/* Whether name matches the glob pattern: `*` any run of characters, `?`
 * one character (a UTF-8 code point), `[abc]`, `[a-z]`, `[!a-z]` one of
 * (or none of) a set; everything else itself.  Linear backtracking. */
bool tl_glob_match(const char *pattern, const char *name);

/* Read text[a, b) of srcs[src] as a selector item (sort: with an optional
 * leading `-` and `asc|desc` `nulls first|last`, into *desc and
 * *nulls_first; as_name not NULL: with an optional `as NAME`, into
 * *as_name).  *out is NULL when the text is no selector (a plain name, an
 * expression, a syntax error the expression parser reports); only out of
 * memory fails. */
TlStatus tl_parse_selector(TlExprArena *ea, uint16_t src, uint32_t a, uint32_t b,
                           bool sort, const char **as_name, TlSelector **out,
                           bool *desc, bool *nulls_first, TlError *err);

typedef struct TlItem {
    TlExprId expr;      /* TL_NO_ID for NAME/RENAME items */
    const char *name;   /* explicit name (as/=, NAME, OLD), or NULL */
    const char *name2;  /* RENAME: NEW */
    const char *auto_name; /* name when none is given (see tl_item_auto_name) */
    const TlSelector *sel; /* a selector (SELECT, SORT, KEY, NAME items), or
                              NULL.  A lone pattern that also reads as an
                              expression (`a*b`) has expr set too: the
                              planner picks one reading */
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
