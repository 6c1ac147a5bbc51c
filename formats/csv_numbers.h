/*
 * csv_numbers.h -- the CSV reader's number parsers and shape checks, as
 * static inline functions (they sit in the converters' loops and in the
 * tokenizer, so they must inline).  Included by csv_read.c only, after it
 * defines CSV_X86 and CSV_LITTLE.
 *
 * Two modes share each parser: exact (an inferred column, formats/infer.h:
 * a leading zero, a '+' or digits a double does not hold are misfits) and
 * any (a --schema column: every spelling tl_parse_i64/tl_parse_f64 takes).
 * The inline shapes are exact by construction (at most 16 digits, 15 with
 * a point), so the exact mode adds only the leading-zero check there and
 * falls back to tl_exact_i64/tl_exact_f64 for the rest.  The plain_*
 * checks accept a subset of what both modes convert (late
 * materialization: a field they pass converts for sure).
 */
#ifndef TL_CSV_NUMBERS_H
#define TL_CSV_NUMBERS_H

#include "infer.h"
#include "../lib/core/text.h"

#include <stdint.h>
#include <string.h>

/* ------------------------------------------- checks (late materialization) */

/* [-]digits, 1 to 18 of them, no leading zero: parse_i64_gen takes it in
 * either mode. */
static inline bool plain_i64(const uint8_t *s, uint32_t len)
{
    uint32_t i = len > 0 && s[0] == '-';
    if (len - i - 1 >= 18) return false; /* also len == i */
    if (s[i] == '0' && len > i + 1) return false;
    for (; i < len; i++)
        if ((unsigned)s[i] - '0' > 9) return false;
    return true;
}

/* [-]digits[.digits], at most 16 bytes (15 digits without a point), no
 * leading zero: parse_f64_gen takes it in either mode (each is exact). */
static inline bool plain_f64(const uint8_t *s, uint32_t len)
{
    uint32_t i = len > 0 && s[0] == '-', k = i;
    if (len > 16 || tl_leading_zero((const char *)s, len)) return false;
    while (k < len && (unsigned)s[k] - '0' <= 9) k++;
    if (k == i) return false;
    if (k == len) return len - i <= 15;
    if (s[k] != '.' || k + 1 == len) return false;
    for (k++; k < len; k++)
        if ((unsigned)s[k] - '0' > 9) return false;
    return true;
}

/* plain_i64 for a field that can be read 8 bytes at a time (room: input
 * bytes from s on): one load, the bytes past len made '0', a leading '-'
 * made '0', then the SWAR digit test of parse_i64_inline. */
static inline bool plain_i64_fast(const uint8_t *s, uint32_t len, size_t room)
{
    if (tl_leading_zero((const char *)s, len)) return false;
    if (CSV_LITTLE && len - 1 < 8 && room >= 8) {
        uint64_t x, km = len == 8 ? ~(uint64_t)0 : ((uint64_t)1 << (8 * len)) - 1;
        memcpy(&x, s, 8);
        x = (x & km) | (0x3030303030303030ULL & ~km);
        if ((x & 0xff) == '-') {
            if (len == 1) return false;
            x = (x & ~(uint64_t)0xff) | 0x30;
        }
        return ((x & 0xF0F0F0F0F0F0F0F0ULL) |
                (((x + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4)) ==
               0x3333333333333333ULL;
    }
    return plain_i64(s, len);
}

/* plain_f64 for a field of at most 16 bytes that can be read 16 at a time
 * (room: input bytes from s on): one SSE2 load; the bytes within len that
 * are not digits, a leading '-' aside, must be none, or one '.' with a
 * digit on each side. */
static inline bool plain_f64_fast(const uint8_t *s, uint32_t len, size_t room)
{
#if CSV_X86
    if (len - 1 < 16 && room >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)s);
        __m128i dg = _mm_sub_epi8(x, _mm_set1_epi8('0'));
        __m128i isd = _mm_cmpeq_epi8(_mm_min_epu8(dg, _mm_set1_epi8(9)), dg);
        unsigned want = len == 16 ? 0xFFFFu : (1u << len) - 1;
        unsigned nd = want & ~(unsigned)_mm_movemask_epi8(isd), i = s[0] == '-';
        nd &= ~i; /* bit 0: the sign */
        if (tl_leading_zero((const char *)s, len)) return false;
        if (nd == 0) return len > i && len - i <= 15;
        if (nd & (nd - 1)) return false;
        unsigned at = (unsigned)__builtin_ctz(nd);
        return s[at] == '.' && at > i && at + 1 < len;
    }
#else
    (void)room;
#endif
    return plain_f64(s, len);
}

/* ------------------------------------------------------------- parsers */

/* tl_parse_i64 (exact: tl_exact_i64, which also refuses a leading zero or
 * '+') with the common case inline: [-]digits, at most 18 of them (no
 * overflow possible); anything else goes to the general parser. */
static inline bool parse_i64_gen(const char *s, size_t len, size_t room,
                                 int64_t *out, bool exact)
{
    uint64_t v = 0;
    size_t i = s[0] == '-';
    if (exact && s[i] == '0' && len > i + 1) return false; /* "007" */
    if (CSV_LITTLE && len - i - 1 < 8 && room >= 8 + i) {
        /* [-]1 to 8 digits: one load, SWAR (see f64_swar) */
        const size_t nd = len - i;
        uint64_t x, km = nd == 8 ? ~(uint64_t)0 : ((uint64_t)1 << (8 * nd)) - 1;
        memcpy(&x, s + i, 8);
        x = ((x & km) << (8 * (8 - nd))) |
            (0x3030303030303030ULL & ~(km << (8 * (8 - nd))));
        if (((x & 0xF0F0F0F0F0F0F0F0ULL) |
             (((x + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4)) ==
            0x3333333333333333ULL) {
            x -= 0x3030303030303030ULL;
            x = x * 10 + (x >> 8);
            x = (((x & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
                 (((x >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >>
                32;
            v = (uint32_t)x;
            *out = i ? (int64_t)(0 - v) : (int64_t)v;
            return true;
        }
        /* e.g. "+5": it decides */
        return exact ? tl_exact_i64(s, len, out) : tl_parse_i64(s, len, out);
    }
    if (len - 1 >= 18 || i == len)
        return exact ? tl_exact_i64(s, len, out) : tl_parse_i64(s, len, out);
    for (; i < len; i++) {
        unsigned d = (unsigned)(unsigned char)s[i] - '0';
        if (d > 9) /* "+5", or not a number */
            return exact ? tl_exact_i64(s, len, out) : tl_parse_i64(s, len, out);
        v = v * 10 + d;
    }
    *out = s[0] == '-' ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

static inline bool parse_i64_exact(const char *s, size_t len, size_t room, int64_t *out)
{
    return parse_i64_gen(s, len, room, out, true);
}

static inline bool parse_i64_any(const char *s, size_t len, size_t room, int64_t *out)
{
    return parse_i64_gen(s, len, room, out, false);
}

/* [-]digits[.digits] with at most 8 bytes after the sign, some digit
 * before the dot, parsed branch-free: one 8-byte load (room allows it),
 * the dot found and squeezed out, the digits checked and combined with
 * three multiplies (the SWAR steps of Lemire's fast_float), then one exact
 * division (Clinger: m < 10^8).  False: not this shape (the caller then
 * tries the general path).  Little-endian only. */
static inline bool f64_swar(const char *s, size_t len, size_t room, double *out)
{
    static const double p10[8] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7};
    const bool neg = s[0] == '-';
    const size_t n = len - neg;
    uint64_t x, keep, y, z, km;
    size_t nd, frac = 0;
    double v;
    if (!CSV_LITTLE || n - 1 >= 8 || room < 8 + (size_t)neg) return false;
    memcpy(&x, s + neg, 8);
    keep = n == 8 ? ~(uint64_t)0 : ((uint64_t)1 << (8 * n)) - 1;
    x &= keep;
    y = x ^ (0x2E2E2E2E2E2E2E2EULL & keep); /* '.' bytes become 0 */
    z = (y - 0x0101010101010101ULL) & ~y & 0x8080808080808080ULL & keep;
    nd = n;
    if (z) {
        size_t dp = (size_t)__builtin_ctzll(z) / 8; /* the first '.' */
        uint64_t low = ((uint64_t)1 << (8 * dp)) - 1;
        if (dp == 0) return false; /* ".5" */
        x = (x & low) | ((x >> 8) & ~low);
        nd = n - 1;
        frac = nd - dp;
        if (nd == 0) return false;
    }
    /* nd digits in the low bytes: move them up, '0's below */
    km = nd == 8 ? ~(uint64_t)0 : ((uint64_t)1 << (8 * nd)) - 1;
    x = (x << (8 * (8 - nd))) | (0x3030303030303030ULL & ~(km << (8 * (8 - nd))));
    if (((x & 0xF0F0F0F0F0F0F0F0ULL) |
         (((x + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4)) !=
        0x3333333333333333ULL)
        return false; /* a non-digit (or a second dot) */
    x -= 0x3030303030303030ULL;
    x = x * 10 + (x >> 8);
    x = (((x & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
         (((x >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >> 32;
    v = (double)(uint32_t)x;
    if (frac) v /= p10[frac];
    *out = neg ? -v : v;
    return true;
}

/* tl_parse_f64 (exact: tl_exact_f64) with the common cases inline: short
 * ones by f64_swar, then [-]digits[.digits] in at most 16 bytes with a
 * significand up to 2^53, so one IEEE division by an exact power of ten
 * rounds correctly (Clinger); anything else (and every syntax question)
 * goes to the general parser.  The inline shapes have at most 16 digits
 * and, with a point, at most 15, so each is exact in a double: the exact
 * mode adds only the leading-zero check. */
static inline bool parse_f64_gen(const char *s, size_t len, size_t room,
                                 double *out, bool exact)
{
    static const double p10[16] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    uint64_t m = 0;
    size_t i = s[0] == '-', start = i, dot = 0; /* dot: just past the '.' */
    double v;
    if (exact && tl_leading_zero(s, len)) return false;
    if (f64_swar(s, len, room, out)) return true;
    if (len - 1 >= 16 || i == len) goto general;
    for (; i < len; i++) {
        unsigned d = (unsigned)(unsigned char)s[i] - '0';
        if (d <= 9) {
            m = m * 10 + d;
            continue;
        }
        if (s[i] != '.' || dot) goto general;
        dot = i + 1;
    }
    if (dot == start + 1 || m > ((uint64_t)1 << 53)) goto general;
    v = (double)m;
    if (dot && dot < len) v /= p10[len - dot];
    *out = s[0] == '-' ? -v : v;
    return true;
general:
    return exact ? tl_exact_f64(s, len, out) : tl_parse_f64(s, len, out);
}

static inline bool parse_f64_inline(const char *s, size_t len, size_t room, double *out)
{
    return parse_f64_gen(s, len, room, out, true);
}

static inline bool parse_f64_any(const char *s, size_t len, size_t room, double *out)
{
    return parse_f64_gen(s, len, room, out, false);
}

#endif
