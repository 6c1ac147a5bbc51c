/*
 * infer.h -- type inference that never changes a value, shared by the text
 * readers (csv_read.c, ndjson_read.c), and the bookkeeping around it: the
 * run's type hints, the first value that made a column a string (for the
 * planner's "column is string because ..." message), --schema entries with
 * globs, and header names made unique.
 *
 * The rule (man tally, "Type inference"): a column is inferred as bool,
 * int64, float64, date or timestamp only when every value's text reads back
 * as the same value from the text tally writes for it.  Accepted spellings:
 *   int64     -?digits within int64, no leading zero ("0" and "-0" are
 *             fine; "-0" is written 0)
 *   float64   -?digits[.digits][e[+-]digits], ".5", "5.", no leading zero
 *             before the point ("0.5" is fine, "00.5" is not), and at most
 *             as many significant digits as the double's shortest
 *             round-trip form has (so 1.50 -> 1.5, 1e3 -> 1000.0, but
 *             0.12345678901234567890 and 2^60's 19 digits stay text);
 *             inf, -inf, infinity, -infinity, nan in any case; an integer
 *             in a float64 column follows the same digit rule
 *   bool      true, false in any case (written true, false)
 *   date      YYYY-MM-DD;  timestamp: YYYY-MM-DD[ T]HH:MM:SS[.f{1,6}]
 * A leading '+' anywhere keeps the column a string.
 */
#ifndef TL_INFER_H
#define TL_INFER_H

#include "format.h"

/* An int64 spelled so that writing it back gives the same number: the
 * rule above.  *out is the value when true. */
bool tl_exact_i64(const char *s, size_t len, int64_t *out);
/* A float64 spelled so that the double's shortest round-trip digits are
 * the text's significant digits (the rule above). */
bool tl_exact_f64(const char *s, size_t len, double *out);
/* The first byte of a number is a zero followed by another digit ("007",
 * "-01.5"): such text is an id, never a number. */
static inline bool tl_leading_zero(const char *s, size_t len)
{
    size_t i = len > 0 && s[0] == '-';
    return i + 1 < len && s[i] == '0' && (unsigned)(unsigned char)s[i + 1] - '0' <= 9;
}

/* The narrowest type holding every value seen so far (so_far; TL_TNULL
 * when none) and the text s[0..len) (never empty: nulls are decided by the
 * caller), under the rule above.  Widening: int64 -> float64 -> string;
 * date -> timestamp -> string; anything else mixed -> string.  A caller
 * that widens int64 to float64 must check the earlier integers again as
 * floats (a 17-digit integer is an exact int64 but no exact double). */
TlType tl_infer_widen(TlType so_far, const char *s, size_t len);

/* tl_infer_widen for --decimal-comma: a number's decimal separator is
 * the comma (one at most), whose text is then read as with a point under
 * the rule above ("1,50" is 1.5, "-0,5e3" is -500.0); a text holding a '.'
 * is no number (neither a decimal point nor a thousands separator is read:
 * "1.5" and "1.234,5" keep a column a string).  Dates and timestamps are
 * as ever ("10:00:00.5"). */
TlType tl_infer_widen_dc(TlType so_far, const char *s, size_t len);

/* Record type t for column name in the hints (add or widen). */
TlStatus tl_hint_set(TlTypeHints *h, const char *name, TlType t, TlError *err);
/* Remember that text (len bytes; quoted: in quotes under
 * --quoted-as-string) at file:line made column name a string, unless a
 * value is already remembered for it (the first one stays). */
TlStatus tl_hint_note(TlTypeHints *h, const char *name, const char *file, int64_t line,
                      const char *text, size_t len, bool quoted, TlError *err);
/* The remembered value of column name, or NULL. */
const TlInferNote *tl_hint_find_note(const TlTypeHints *h, const char *name);
/* Free the hints' contents (not h itself); NULL-safe. */
void tl_hints_free(TlTypeHints *h);

/* A widen schema (format.h's restart protocol) that also carries the value
 * that made one column a string: allocated in one block whose first member
 * is the TlSchema, so tl_schema_free + tl_free release it like a plain one.
 * tl_widen_new gives one with no note. */
typedef struct TlWiden {
    TlSchema types;
    char *column;   /* NULL: no note; else points into text_buf */
    char *text;
    size_t text_len;
    int64_t line;
    bool quoted;
    char text_buf[];
} TlWiden;
TlSchema *tl_widen_new(const char *column, int64_t line, const char *text, size_t len,
                       bool quoted);
/* Copy w's note (if any) into the hints under the reader's name file. */
TlStatus tl_widen_note(TlTypeHints *h, const TlSchema *w, const char *file, TlError *err);

/* --schema with globs: the index of the entry that fixes column name (an
 * entry naming it exactly, else the first glob entry, in the order given,
 * that matches it), or -1. */
int tl_fixed_find(const TlSchema *fixed, const char *name);
/* Whether a --schema entry's name is a glob (holds * or ?). */
bool tl_fixed_is_glob(const char *name);

/* Header names made unique (man tally, "Column names"): names[i] (len
 * lens[i]) for i < n; a repeat becomes name_2, name_3, ... and an empty
 * name columnN (N = i + 1), each skipping every name the header holds and
 * every name given before.  The results are added to out in order; unless
 * quiet, each rename is noted on standard error naming file. */
TlStatus tl_names_unique(const char *const *names, const size_t *lens, int n,
                         const char *file, bool quiet, TlSchema *out, TlError *err);

#endif
