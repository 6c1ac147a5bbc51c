/*
 * ast.h -- expression nodes, shared by the parser (lib/dsl), name resolution
 * and type checking (lib/plan/resolve.c), the optimizer and evaluation.
 *
 * All nodes of a run live in one TlExprArena, addressed by TlExprId.  The
 * parser pushes unresolved nodes (type TL_TNULL, col -1); resolve fills
 * `type` and `col` and may push new nodes (implicit casts).  A node never
 * changes kind after it is pushed; rewrites push new nodes and re-point ids.
 *
 * Every node keeps its source span: `src` indexes ea->srcs (the text of one
 * flag value or one JSON string, with its origin), and [start, start+len) are
 * byte offsets into that text.  Error messages print that text with a caret
 * line under the span (tl_error_at).
 *
 * Operators and functions are one enum, TlOp; the table in lib/dsl/ops.c
 * gives each its spelling, arity and whether it is an aggregate.
 */
#ifndef TL_AST_H
#define TL_AST_H

#include "../core/arena.h"
#include "../core/core.h"

typedef uint32_t TlExprId;

typedef enum TlExprKind {
    TL_X_COL,   /* column reference: name; resolve sets col (input index) */
    TL_X_LIT,   /* literal: lit_type + value (lit_type TL_TNULL = null) */
    TL_X_CALL,  /* operator or function: op, args */
    TL_X_CAST,  /* args[0] to cast_to; flags & TL_XF_TRY: try_cast */
    TL_X_CASE,  /* args: when1, then1, ..., [else]; flags & TL_XF_ELSE */
    TL_X_IN,    /* args: x, v1, v2, ...; flags & TL_XF_NOT: not in */
} TlExprKind;

enum {
    TL_XF_NOT = 1,   /* not in / not like / not between / is not null */
    TL_XF_TRY = 2,   /* try_cast */
    TL_XF_ELSE = 4,  /* case has an else branch (last arg) */
    TL_XF_STAR = 8,  /* count(*) written with a star */
};

typedef enum TlOp {
    TL_OP_NONE = 0,
    /* logic */
    TL_OP_AND, TL_OP_OR, TL_OP_NOT,
    /* comparison */
    TL_OP_EQ, TL_OP_NE, TL_OP_LT, TL_OP_LE, TL_OP_GT, TL_OP_GE,
    TL_OP_IS_NULL,     /* flags & TL_XF_NOT: is not null */
    TL_OP_BETWEEN,     /* args x, lo, hi; flags & TL_XF_NOT */
    TL_OP_LIKE,        /* args x, pattern; flags & TL_XF_NOT */
    /* arithmetic */
    TL_OP_ADD, TL_OP_SUB, TL_OP_MUL, TL_OP_DIV, TL_OP_IDIV, TL_OP_MOD,
    TL_OP_NEG, TL_OP_CONCAT_OP, /* || */
    /* conditional */
    TL_OP_IF, TL_OP_COALESCE,
    /* math */
    TL_OP_ABS, TL_OP_ROUND, TL_OP_FLOOR, TL_OP_CEIL, TL_OP_SQRT, TL_OP_LN,
    TL_OP_EXP, TL_OP_POW,
    /* string */
    TL_OP_LENGTH, TL_OP_LOWER, TL_OP_UPPER, TL_OP_TRIM, TL_OP_LTRIM,
    TL_OP_RTRIM, TL_OP_SUBSTR, TL_OP_REPLACE, TL_OP_CONTAINS,
    TL_OP_STARTS_WITH, TL_OP_ENDS_WITH, TL_OP_SPLIT_PART, TL_OP_CONCAT,
    /* date */
    TL_OP_YEAR, TL_OP_MONTH, TL_OP_DAY, TL_OP_HOUR, TL_OP_MINUTE,
    TL_OP_SECOND, TL_OP_DATE_TRUNC,
    /* aggregates (TL_OP_FIRST_AGG <= op) */
    TL_OP_COUNT, TL_OP_COUNT_DISTINCT, TL_OP_SUM, TL_OP_MEAN, TL_OP_MIN,
    TL_OP_MAX, TL_OP_FIRST, TL_OP_LAST, TL_OP_MEDIAN, TL_OP_QUANTILE,
    TL_OP_STD, TL_OP_VAR, TL_OP_CORR, TL_OP_COVAR, TL_OP_STRING_AGG,
    TL_OP_ANY, TL_OP_ALL,
    TL_OP_COUNT_
} TlOp;

#define TL_OP_FIRST_AGG TL_OP_COUNT
static inline bool tl_op_is_agg(TlOp op) { return op >= TL_OP_FIRST_AGG && op < TL_OP_COUNT_; }

typedef struct TlOpInfo {
    const char *name;   /* function spelling ("sum"), or operator ("+") */
    int8_t min_args, max_args; /* -1 max: variadic */
    bool is_function;   /* called as name(...) */
} TlOpInfo;

/* The op table entry; tl_op_lookup finds a function by name (case-insensitive,
 * also the aliases avg -> mean), returning TL_OP_NONE if unknown. */
const TlOpInfo *tl_op_info(TlOp op);
TlOp tl_op_lookup(const char *name, size_t len);

typedef struct TlExpr {
    uint8_t kind;      /* TlExprKind */
    uint8_t type;      /* TlType, after resolve */
    uint8_t lit_type;  /* TL_X_LIT: TlType of the literal; TL_X_CAST: target */
    uint8_t flags;     /* TL_XF_* */
    uint16_t op;       /* TL_X_CALL: TlOp */
    uint16_t src;      /* index into ea->srcs */
    uint32_t start, len;   /* span in srcs[src].text */
    uint32_t args;     /* first index into ea->args (list of TlExprId) */
    uint32_t n_args;
    int32_t col;       /* TL_X_COL: resolved input column, else -1 */
    const char *name;  /* TL_X_COL: column name (in ea->pool) */
    union {
        bool b;
        int64_t i;     /* int64, timestamp (micros) */
        double f;
        int32_t d;     /* date (days) */
        struct { const char *s; uint32_t n; } str; /* in ea->pool */
    } v;
} TlExpr;

typedef struct TlExprSrc {
    const char *text;    /* NUL-terminated, in ea->pool */
    const char *origin;  /* "--filter", "/steps/2/filter", ... in ea->pool */
} TlExprSrc;

typedef struct TlExprArena {
    TlArena nodes;   /* TlExpr */
    TlArena args;    /* TlExprId, children lists */
    TlExprSrc *srcs;
    uint32_t n_srcs, cap_srcs;
    TlStrPool pool;
    bool unknown_name;  /* a name was in no schema it was looked up in (the
                           planner may then ask the readers for columns
                           after their samples: tl_reader_more_columns) */
} TlExprArena;

TlStatus tl_ea_init(TlExprArena *ea, TlError *err);
void tl_ea_free(TlExprArena *ea);
static inline TlExpr *tl_ea_node(const TlExprArena *ea, TlExprId id)
{
    return (TlExpr *)tl_arena_at(&ea->nodes, id);
}
static inline TlExprId tl_ea_arg(const TlExprArena *ea, const TlExpr *e, uint32_t i)
{
    return *(TlExprId *)tl_arena_at(&ea->args, e->args + i);
}
/* Register a source text; copies text and origin into the pool. */
TlStatus tl_ea_add_src(TlExprArena *ea, const char *text, const char *origin,
                       uint16_t *src, TlError *err);
/* Push a node (copied from *tmpl) with the given children; returns its id. */
TlStatus tl_ea_push(TlExprArena *ea, const TlExpr *tmpl, const TlExprId *args,
                    uint32_t n_args, TlExprId *id, TlError *err);

/* Fill err with `code` and a message followed by the source text and a caret
 * line under [start, start+len) of srcs[src]:
 *
 *   unknown column "amout" (did you mean "amount"?)
 *     --filter: amout > 100
 *               ^^^^^
 *
 * Long texts are shown as a window around the span. */
TlStatus tl_error_at(TlError *err, TlStatus code, const TlExprArena *ea,
                     uint16_t src, uint32_t start, uint32_t len,
                     const char *fmt, ...) __attribute__((format(printf, 7, 8)));

/* ----------------------------------------------------------- parsing */

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

/* Print expression id in canonical form (fully parenthesized where needed so
 * that parsing the printed text gives the same tree).  Returns the length;
 * writes at most cap-1 bytes plus a NUL. */
size_t tl_expr_print(const TlExprArena *ea, TlExprId id, char *buf, size_t cap);

/* Equality of two trees by structure and values (for tests and optimizer). */
bool tl_expr_equal(const TlExprArena *ea, TlExprId a, TlExprId b);

#endif
