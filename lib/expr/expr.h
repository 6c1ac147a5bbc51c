/*
 * expr.h -- expression nodes, shared by the parser (lib/dsl), name resolution
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
 * Operators and functions are one enum, TlOp; the table in lib/expr/ops.c
 * gives each its spelling, arity and whether it is an aggregate.
 */
#ifndef TL_EXPR_H
#define TL_EXPR_H

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
    TL_XF_FILTER = 16, /* an aggregate's filter (where c): c is its last arg */
    TL_XF_MASK = 32, /* if(c, x, null) that resolve made of a filtered
                        aggregate's argument x: prints as x */
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
    TL_OP_ILIKE,       /* args x, pattern; flags & TL_XF_NOT */
    /* arithmetic */
    TL_OP_ADD, TL_OP_SUB, TL_OP_MUL, TL_OP_DIV, TL_OP_IDIV, TL_OP_MOD,
    TL_OP_NEG, TL_OP_CONCAT_OP, /* || */
    /* conditional */
    TL_OP_IF, TL_OP_COALESCE,
    /* the row's position: resolve makes it a column (lib/plan/plan.h,
     * TL_ROW_NUMBER_COL), so it is never evaluated */
    TL_OP_ROW_NUMBER,
    /* math */
    TL_OP_ABS, TL_OP_ROUND, TL_OP_FLOOR, TL_OP_CEIL, TL_OP_SQRT, TL_OP_LN,
    TL_OP_EXP, TL_OP_POW,
    /* string */
    TL_OP_LENGTH, TL_OP_LOWER, TL_OP_UPPER, TL_OP_TRIM, TL_OP_LTRIM,
    TL_OP_RTRIM, TL_OP_SUBSTR, TL_OP_REPLACE, TL_OP_CONTAINS,
    TL_OP_STARTS_WITH, TL_OP_ENDS_WITH, TL_OP_SPLIT_PART, TL_OP_CONCAT,
    TL_OP_LEFT, TL_OP_RIGHT, TL_OP_LPAD, TL_OP_RPAD, TL_OP_REVERSE,
    TL_OP_REPEAT, TL_OP_STRPOS, TL_OP_INITCAP, TL_OP_FORMAT, TL_OP_PRINTF,
    /* regular expressions (kernels/fn_regex.h) */
    TL_OP_REGEXP_MATCHES, TL_OP_REGEXP_FULL_MATCH, TL_OP_REGEXP_REPLACE,
    TL_OP_REGEXP_EXTRACT, TL_OP_REGEXP_SPLIT,
    /* date */
    TL_OP_YEAR, TL_OP_MONTH, TL_OP_DAY, TL_OP_HOUR, TL_OP_MINUTE,
    TL_OP_SECOND, TL_OP_DATE_TRUNC, TL_OP_DAYOFWEEK, TL_OP_ISODOW,
    TL_OP_DAYOFYEAR, TL_OP_WEEK, TL_OP_QUARTER, TL_OP_YEARWEEK, TL_OP_ISOYEAR,
    TL_OP_DATE_DIFF, TL_OP_DATE_ADD, TL_OP_STRFTIME, TL_OP_STRPTIME,
    TL_OP_TRY_STRPTIME, TL_OP_EPOCH, TL_OP_EPOCH_MS, TL_OP_EPOCH_US,
    TL_OP_TO_TIMESTAMP,
    TL_OP_LAST_KERNEL_FN = TL_OP_TO_TIMESTAMP, /* kernels/fn.h: ABS .. here */
    /* the run's instant (TlExprArena.now) */
    TL_OP_NOW, TL_OP_CURRENT_DATE,
    /* interval 'TEXT': arg 0 its text; only beside a date or timestamp in
     * + and - and date_add (lib/plan/resolve.c) */
    TL_OP_INTERVAL,
    /* aggregates (TL_OP_FIRST_AGG <= op) */
    TL_OP_COUNT, TL_OP_COUNT_DISTINCT, TL_OP_SUM, TL_OP_MEAN, TL_OP_MIN,
    TL_OP_MAX, TL_OP_FIRST, TL_OP_LAST, TL_OP_MEDIAN, TL_OP_QUANTILE,
    TL_OP_STD, TL_OP_VAR, TL_OP_CORR, TL_OP_COVAR, TL_OP_STRING_AGG,
    TL_OP_ANY, TL_OP_ALL, TL_OP_COUNT_IF, TL_OP_MODE, TL_OP_ARG_MAX,
    TL_OP_ARG_MIN, TL_OP_QUANTILE_DISC, TL_OP_APPROX_COUNT_DISTINCT,
    TL_OP_COUNT_
} TlOp;

#define TL_OP_FIRST_AGG TL_OP_COUNT
static inline bool tl_op_is_agg(TlOp op) { return op >= TL_OP_FIRST_AGG && op < TL_OP_COUNT_; }

/* An aggregate's type rule (agg_rules.c): what each of its (at most two)
 * arguments may be, and its result type. */
typedef enum TlAggArg {
    TL_AA_NONE,       /* no such argument */
    TL_AA_ANY,        /* any type */
    TL_AA_NUM,        /* int64 or float64 ("a numeric argument") */
    TL_AA_NUMS,       /* the same, one of two ("numeric arguments") */
    TL_AA_BOOL,       /* bool */
    TL_AA_STRING,     /* anything, cast to string */
    TL_AA_ORDERED,    /* int64, float64, date or timestamp */
    TL_AA_FRACTION,   /* a number literal in [0, 1] */
    TL_AA_SEPARATOR,  /* a string literal */
} TlAggArg;

typedef enum TlAggResult {
    TL_AR_INT64, TL_AR_FLOAT64,
    TL_AR_SUM,        /* float64 over float64, else int64 */
    TL_AR_ARG,        /* the first argument's type */
    TL_AR_ARG1,       /* the second argument's type */
    TL_AR_STRING, TL_AR_BOOL,
    TL_AR_BETWEEN,    /* a value between the first argument's (a mean,
                         an interpolation): a timestamp over dates, the
                         argument's type over timestamps, else float64 */
} TlAggResult;

typedef struct TlAggRule {
    uint8_t arg[2];   /* TlAggArg */
    uint8_t result;   /* TlAggResult */
} TlAggRule;

/* The rule of aggregate op, or NULL when op is no aggregate. */
const TlAggRule *tl_agg_rule(TlOp op);
/* The result type of aggregate op over arguments of these types. */
TlType tl_agg_rule_result(TlOp op, TlType arg0, TlType arg1);

typedef struct TlOpInfo {
    const char *name;   /* function spelling ("sum"), or operator ("+") */
    int8_t min_args, max_args; /* -1 max: variadic */
    bool is_function;   /* called as name(...) */
} TlOpInfo;

/* The op table entry; tl_op_lookup finds a function by name (case-insensitive,
 * also the aliases avg -> mean), returning TL_OP_NONE if unknown. */
const TlOpInfo *tl_op_info(TlOp op);
TlOp tl_op_lookup(const char *name, size_t len);
/* The function name nearest to name[0..len), or NULL. */
const char *tl_op_suggest(const char *name, size_t len);

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
    TL_KW_FIRST, TL_KW_LAST, TL_KW_ILIKE,
} TlKeyword;

#define TL_KW_FIRST_SOFT TL_KW_DATE

/* The keyword spelled by s[0..len) (case-insensitive), or TL_KW_NONE
 * (keywords.c). */
TlKeyword tl_keyword(const char *s, size_t len);

/* True when s is a bare name that can be printed without double quotes:
 * [A-Za-z_][A-Za-z0-9_]* and not any keyword. */
bool tl_name_is_plain(const char *s, size_t len);

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

typedef struct TlExprRegex TlExprRegex; /* regex.c */

typedef struct TlExprArena {
    TlArena nodes;   /* TlExpr */
    TlArena args;    /* TlExprId, children lists */
    TlExprSrc *srcs;
    uint32_t n_srcs, cap_srcs;
    TlStrPool pool;
    int64_t now;        /* now() and current_date: the run's instant in
                           microseconds, set once by the planner */
    bool unknown_name;  /* a name was in no schema it was looked up in (the
                           planner may then ask the readers for columns
                           after their samples: tl_reader_more_columns) */
    TlExprRegex *regexes;   /* the constant patterns, compiled (regex.c) */
    uint32_t n_regexes, cap_regexes;
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

/* Print expression id in canonical form (fully parenthesized where needed so
 * that parsing the printed text gives the same tree).  Returns the length;
 * writes at most cap-1 bytes plus a NUL. */
size_t tl_expr_print(const TlExprArena *ea, TlExprId id, char *buf, size_t cap);

/* Regular expressions compiled once (regex.c).  tl_ea_regex_prepare checks
 * the regexp_* call `call` (resolved): constant options of known letters, a
 * constant group, and compiles a constant pattern into the arena; a usage
 * error with a caret otherwise.  tl_ea_regex_compile compiles the constant
 * pattern pat[0..n) with its options flags[0..nf) (checked; both must live
 * as long as the arena, in its pool or static) into the arena once, for a
 * full match when `full`: *out; an invalid pattern is a usage error with a
 * caret under its offending character in the string literal written at
 * [start, start + len) of srcs[src] (the pattern of a regexp_* call, of a
 * `columns('re')` selector).  tl_ea_regex_lookup finds a compiled pattern
 * (NULL: none; the kernel compiles it).  tl_ea_free frees them. */
struct TlRegex;
TlStatus tl_ea_regex_prepare(TlExprArena *ea, TlExprId call, TlError *err);
TlStatus tl_ea_regex_compile(TlExprArena *ea, uint16_t src, uint32_t start,
                             uint32_t len, const char *pat, size_t n,
                             const char *flags, size_t nf, bool full,
                             const struct TlRegex **out, TlError *err);
const struct TlRegex *tl_ea_regex_lookup(const TlExprArena *ea,
                                         const char *pat, size_t n,
                                         const char *flags, size_t nf,
                                         bool full);
void tl_ea_regex_free(TlExprArena *ea);

/* Equality of two trees by structure and values (for tests and optimizer). */
bool tl_expr_equal(const TlExprArena *ea, TlExprId a, TlExprId b);

#endif
