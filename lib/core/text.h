/*
 * text.h -- converting single values between text and their typed form.
 *
 * One place decides how a value is spelled, so the CSV reader, the CSV
 * writer, cast(), try_cast() and literals all agree (man/tally.1,
 * "Output formatting" and "Type inference").
 *
 * Parsing (text -> value) is strict: the whole text must be consumed, no
 * surrounding spaces, and the result must be exact (an integer that does not
 * fit int64 is not an int; it may still parse as a float).
 *   bool       true | false (case-insensitive)
 *   int64      [+-]?[0-9]+ within int64
 *   float64    decimal or exponent notation strtod accepts (no hex), plus
 *              inf, -inf, +inf, infinity, nan (case-insensitive)
 *   date       YYYY-MM-DD
 *   timestamp  YYYY-MM-DD[ T]HH:MM:SS[.f{1,6}] (a date alone is midnight)
 *
 * Formatting (value -> text) writes into a caller buffer of at least
 * TL_FMT_MAX bytes and returns the length (no NUL is counted; one is
 * written):
 *   float64    shortest digits that round-trip, Python repr layout:
 *              71.0, 0.1, 1000000000000000.0, 1e-05, 1e+16, 2.5e-07,
 *              inf, -inf, nan, -0.0
 *   bool       true / false
 *   date       YYYY-MM-DD (years outside 0..9999 with a sign / extra digits)
 *   timestamp  YYYY-MM-DD HH:MM:SS plus .fraction without trailing zeros
 */
#ifndef TL_TEXT_H
#define TL_TEXT_H

#include "core.h"

#define TL_FMT_MAX 64

bool tl_parse_bool(const char *s, size_t len, bool *out);
bool tl_parse_i64(const char *s, size_t len, int64_t *out);
bool tl_parse_f64(const char *s, size_t len, double *out);
bool tl_parse_date(const char *s, size_t len, int32_t *out);
bool tl_parse_timestamp(const char *s, size_t len, int64_t *out);
/* A timestamp with its offset from UTC: tl_parse_timestamp's text (not a
 * bare date) followed by Z or +hh, +hhmm, +hh:mm (or -), optionally after
 * a space; *out is the instant in UTC. */
bool tl_parse_timestamptz(const char *s, size_t len, int64_t *out);

size_t tl_fmt_i64(int64_t v, char *buf);
size_t tl_fmt_f64(double v, char *buf);
size_t tl_fmt_date(int32_t days, char *buf);
size_t tl_fmt_timestamp(int64_t micros, char *buf);
/* tl_fmt_timestamp and +00: a timestamptz as DuckDB writes one in UTC. */
size_t tl_fmt_timestamptz(int64_t micros, char *buf);

/* Civil calendar helpers (proleptic Gregorian). */
int32_t tl_days_from_civil(int64_t y, unsigned m, unsigned d);
void tl_civil_from_days(int32_t days, int64_t *y, unsigned *m, unsigned *d);

#endif
