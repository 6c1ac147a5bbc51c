/*
 * types.c -- names, spellings and widths of the logical types.
 *
 * The canonical name of a type (tl_type_name) is what error messages,
 * `tally schema` and explain print.  Users may write several aliases
 * (tl_type_parse), matched case-insensitively.  tl_type_width is the byte
 * width of one element in an array's values buffer:
 *
 *   bool 0 (bits)  int64 8  float64 8  string 16 (TlView)  date 4
 *   timestamp 8    null 0 (no buffer)
 */
#include "core.h"

#include <strings.h>

/* Canonical lower-case name of t ("int64", ...); "?" for an invalid value. */
const char *tl_type_name(TlType t)
{
    switch (t) {
    case TL_TNULL: return "null";
    case TL_TBOOL: return "bool";
    case TL_TINT64: return "int64";
    case TL_TFLOAT64: return "float64";
    case TL_TSTRING: return "string";
    case TL_TDATE: return "date";
    case TL_TTIMESTAMP: return "timestamp";
    case TL_TTIMESTAMPTZ: return "timestamptz";
    default: return "?";
    }
}

static const struct {
    const char *name;
    TlType type;
} aliases[] = {
    {"int", TL_TINT64},         {"int64", TL_TINT64},
    {"integer", TL_TINT64},     {"bigint", TL_TINT64},
    {"float", TL_TFLOAT64},     {"float64", TL_TFLOAT64},
    {"double", TL_TFLOAT64},    {"bool", TL_TBOOL},
    {"boolean", TL_TBOOL},      {"string", TL_TSTRING},
    {"str", TL_TSTRING},        {"varchar", TL_TSTRING},
    {"text", TL_TSTRING},       {"date", TL_TDATE},
    {"timestamp", TL_TTIMESTAMP}, {"datetime", TL_TTIMESTAMP},
    {"timestamptz", TL_TTIMESTAMPTZ},
};

/* Parse a user-written type name s[0..len) (case-insensitive, aliases as
 * listed in core.h).  Returns false when unknown. */
bool tl_type_parse(const char *s, size_t len, TlType *out)
{
    size_t i;
    for (i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
        if (strlen(aliases[i].name) == len &&
            strncasecmp(aliases[i].name, s, len) == 0) {
            *out = aliases[i].type;
            return true;
        }
    }
    return false;
}

/* Bytes per element in the values buffer of a type (0 for bool and null). */
size_t tl_type_width(TlType t)
{
    switch (t) {
    case TL_TINT64:
    case TL_TFLOAT64:
    case TL_TTIMESTAMP:
    case TL_TTIMESTAMPTZ:
        return 8;
    case TL_TDATE:
        return 4;
    case TL_TSTRING:
        return sizeof(TlView);
    default:
        return 0;
    }
}
