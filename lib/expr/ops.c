/*
 * ops.c -- the operator and function table.
 *
 * One row per TlOp (designated initializers keep rows and enum in step; a
 * unit test checks that no op lacks a row).  A row gives the canonical
 * spelling -- the function name the printer writes, or the operator symbol --
 * the arity range and whether the op is called as name(...).  Operators
 * (and, +, between, ...) are reached only through the grammar, never by
 * tl_op_lookup.  Aliases map other spellings onto a row (avg -> mean); the
 * printer always writes the canonical name, so `avg(x)` prints as `mean(x)`.
 */
#include "expr.h"

#include <strings.h>

#define FN(op, name, lo, hi) [op] = {name, lo, hi, true}
#define OPR(op, name, lo, hi) [op] = {name, lo, hi, false}

static const TlOpInfo rows[TL_OP_COUNT_] = {
    OPR(TL_OP_NONE, "?", 0, 0),
    OPR(TL_OP_AND, "and", 2, 2),
    OPR(TL_OP_OR, "or", 2, 2),
    OPR(TL_OP_NOT, "not", 1, 1),
    OPR(TL_OP_EQ, "=", 2, 2),
    OPR(TL_OP_NE, "!=", 2, 2),
    OPR(TL_OP_LT, "<", 2, 2),
    OPR(TL_OP_LE, "<=", 2, 2),
    OPR(TL_OP_GT, ">", 2, 2),
    OPR(TL_OP_GE, ">=", 2, 2),
    OPR(TL_OP_IS_NULL, "is null", 1, 1),
    OPR(TL_OP_BETWEEN, "between", 3, 3),
    OPR(TL_OP_LIKE, "like", 2, 2),
    OPR(TL_OP_ILIKE, "ilike", 2, 2),
    OPR(TL_OP_ADD, "+", 2, 2),
    OPR(TL_OP_SUB, "-", 2, 2),
    OPR(TL_OP_MUL, "*", 2, 2),
    OPR(TL_OP_DIV, "/", 2, 2),
    OPR(TL_OP_IDIV, "//", 2, 2),
    OPR(TL_OP_MOD, "%", 2, 2),
    OPR(TL_OP_NEG, "-", 1, 1),
    OPR(TL_OP_CONCAT_OP, "||", 2, 2),
    FN(TL_OP_IF, "if", 3, 3),
    FN(TL_OP_COALESCE, "coalesce", 1, -1),
    FN(TL_OP_ROW_NUMBER, "row_number", 0, 0),
    FN(TL_OP_ABS, "abs", 1, 1),
    FN(TL_OP_ROUND, "round", 1, 2),
    FN(TL_OP_FLOOR, "floor", 1, 1),
    FN(TL_OP_CEIL, "ceil", 1, 1),
    FN(TL_OP_SQRT, "sqrt", 1, 1),
    FN(TL_OP_LN, "ln", 1, 1),
    FN(TL_OP_EXP, "exp", 1, 1),
    FN(TL_OP_POW, "pow", 2, 2),
    FN(TL_OP_LENGTH, "length", 1, 1),
    FN(TL_OP_LOWER, "lower", 1, 1),
    FN(TL_OP_UPPER, "upper", 1, 1),
    FN(TL_OP_TRIM, "trim", 1, 1),
    FN(TL_OP_LTRIM, "ltrim", 1, 1),
    FN(TL_OP_RTRIM, "rtrim", 1, 1),
    FN(TL_OP_SUBSTR, "substr", 2, 3),
    FN(TL_OP_REPLACE, "replace", 3, 3),
    FN(TL_OP_CONTAINS, "contains", 2, 2),
    FN(TL_OP_STARTS_WITH, "starts_with", 2, 2),
    FN(TL_OP_ENDS_WITH, "ends_with", 2, 2),
    FN(TL_OP_SPLIT_PART, "split_part", 3, 3),
    FN(TL_OP_CONCAT, "concat", 1, -1),
    FN(TL_OP_LEFT, "left", 2, 2),
    FN(TL_OP_RIGHT, "right", 2, 2),
    FN(TL_OP_LPAD, "lpad", 3, 3),
    FN(TL_OP_RPAD, "rpad", 3, 3),
    FN(TL_OP_REVERSE, "reverse", 1, 1),
    FN(TL_OP_REPEAT, "repeat", 2, 2),
    FN(TL_OP_STRPOS, "strpos", 2, 2),
    FN(TL_OP_INITCAP, "initcap", 1, 1),
    FN(TL_OP_FORMAT, "format", 1, -1),
    FN(TL_OP_PRINTF, "printf", 1, -1),
    FN(TL_OP_REGEXP_MATCHES, "regexp_matches", 2, 3),
    FN(TL_OP_REGEXP_FULL_MATCH, "regexp_full_match", 2, 3),
    FN(TL_OP_REGEXP_REPLACE, "regexp_replace", 3, 4),
    FN(TL_OP_REGEXP_EXTRACT, "regexp_extract", 2, 4),
    FN(TL_OP_REGEXP_SPLIT, "regexp_split_to_array", 2, 3),
    FN(TL_OP_YEAR, "year", 1, 1),
    FN(TL_OP_MONTH, "month", 1, 1),
    FN(TL_OP_DAY, "day", 1, 1),
    FN(TL_OP_HOUR, "hour", 1, 1),
    FN(TL_OP_MINUTE, "minute", 1, 1),
    FN(TL_OP_SECOND, "second", 1, 1),
    FN(TL_OP_DATE_TRUNC, "date_trunc", 2, 2),
    FN(TL_OP_DAYOFWEEK, "dayofweek", 1, 1),
    FN(TL_OP_ISODOW, "isodow", 1, 1),
    FN(TL_OP_DAYOFYEAR, "dayofyear", 1, 1),
    FN(TL_OP_WEEK, "week", 1, 1),
    FN(TL_OP_QUARTER, "quarter", 1, 1),
    FN(TL_OP_YEARWEEK, "yearweek", 1, 1),
    FN(TL_OP_ISOYEAR, "isoyear", 1, 1),
    FN(TL_OP_DATE_DIFF, "date_diff", 3, 3),
    FN(TL_OP_DATE_ADD, "date_add", 2, 2),
    FN(TL_OP_STRFTIME, "strftime", 2, 2),
    FN(TL_OP_STRPTIME, "strptime", 2, 2),
    FN(TL_OP_TRY_STRPTIME, "try_strptime", 2, 2),
    FN(TL_OP_EPOCH, "epoch", 1, 1),
    FN(TL_OP_EPOCH_MS, "epoch_ms", 1, 1),
    FN(TL_OP_EPOCH_US, "epoch_us", 1, 1),
    FN(TL_OP_TO_TIMESTAMP, "to_timestamp", 1, 1),
    FN(TL_OP_NOW, "now", 0, 0),
    FN(TL_OP_CURRENT_DATE, "current_date", 0, 0),
    OPR(TL_OP_INTERVAL, "interval", 1, 1),
    FN(TL_OP_COUNT, "count", 0, 1),
    FN(TL_OP_COUNT_DISTINCT, "count_distinct", 1, 1),
    FN(TL_OP_SUM, "sum", 1, 1),
    FN(TL_OP_MEAN, "mean", 1, 1),
    FN(TL_OP_MIN, "min", 1, 1),
    FN(TL_OP_MAX, "max", 1, 1),
    FN(TL_OP_FIRST, "first", 1, 1),
    FN(TL_OP_LAST, "last", 1, 1),
    FN(TL_OP_MEDIAN, "median", 1, 1),
    FN(TL_OP_QUANTILE, "quantile", 2, 2),
    FN(TL_OP_STD, "std", 1, 1),
    FN(TL_OP_VAR, "var", 1, 1),
    FN(TL_OP_CORR, "corr", 2, 2),
    FN(TL_OP_COVAR, "covar", 2, 2),
    FN(TL_OP_STRING_AGG, "string_agg", 1, 2),
    FN(TL_OP_ANY, "any", 1, 1),
    FN(TL_OP_ALL, "all", 1, 1),
    FN(TL_OP_COUNT_IF, "count_if", 1, 1),
    FN(TL_OP_MODE, "mode", 1, 1),
    FN(TL_OP_ARG_MAX, "arg_max", 2, 2),
    FN(TL_OP_ARG_MIN, "arg_min", 2, 2),
    FN(TL_OP_QUANTILE_DISC, "quantile_disc", 2, 2),
    FN(TL_OP_APPROX_COUNT_DISTINCT, "approx_count_distinct", 1, 1),
};

/* Other spellings accepted for functions (DuckDB's names among them). */
static const struct {
    const char *name;
    TlOp op;
} aliases[] = {
    {"avg", TL_OP_MEAN},
    {"ceiling", TL_OP_CEIL},
    {"power", TL_OP_POW},
    {"substring", TL_OP_SUBSTR},
    {"stddev", TL_OP_STD},
    {"stddev_samp", TL_OP_STD},
    {"var_samp", TL_OP_VAR},
    {"variance", TL_OP_VAR},
    {"covar_samp", TL_OP_COVAR},
    {"quantile_cont", TL_OP_QUANTILE},
    {"max_by", TL_OP_ARG_MAX},
    {"min_by", TL_OP_ARG_MIN},
    {"instr", TL_OP_STRPOS},
    {"string_split_regex", TL_OP_REGEXP_SPLIT},
    {"datediff", TL_OP_DATE_DIFF},
    {"dayofmonth", TL_OP_DAY},
    {"weekofyear", TL_OP_WEEK},
    {"current_timestamp", TL_OP_NOW},
    {"get_current_timestamp", TL_OP_NOW},
};

/* The table row of op (a row for TL_OP_NONE when op is out of range). */
const TlOpInfo *tl_op_info(TlOp op)
{
    if ((unsigned)op >= TL_OP_COUNT_) op = TL_OP_NONE;
    return &rows[op];
}

/* The function spelled name[0..len) (case-insensitive, aliases included),
 * or TL_OP_NONE.  Operators are not functions and are never found. */
TlOp tl_op_lookup(const char *name, size_t len)
{
    for (int i = 0; i < TL_OP_COUNT_; i++) {
        const TlOpInfo *r = &rows[i];
        if (r->name && r->is_function && strlen(r->name) == len &&
            strncasecmp(r->name, name, len) == 0)
            return (TlOp)i;
    }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
        if (strlen(aliases[i].name) == len &&
            strncasecmp(aliases[i].name, name, len) == 0)
            return aliases[i].op;
    }
    return TL_OP_NONE;
}

/* The function name nearest to name[0..len), for "did you mean", or NULL. */
const char *tl_op_suggest(const char *name, size_t len)
{
    const char *cands[TL_OP_COUNT_ + sizeof aliases / sizeof aliases[0]];
    size_t n = 0;
    for (int i = 0; i < TL_OP_COUNT_; i++)
        if (rows[i].name && rows[i].is_function) cands[n++] = rows[i].name;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        cands[n++] = aliases[i].name;
    return tl_suggest(name, len, cands, n);
}
