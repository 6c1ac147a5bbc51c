/*
 * json_text.h -- the byte-level pieces of JSON text the NDJSON reader
 * scans with, as static inline functions and tables (they sit in the
 * tokenizer's inner loops): plain string runs, whitespace, UTF-8
 * sequences, \u escapes, and decoding an escaped string body; and the one
 * spelling of a string in JSON output (put_json_string).  Included by the
 * NDJSON reader and writer and by the Parquet reader (UTF-8 checks, lists
 * and maps as JSON text); each function is pure (bytes in, bytes out).
 */
#ifndef TL_JSON_TEXT_H
#define TL_JSON_TEXT_H

#include <stddef.h>
#include <stdint.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Bytes that stop the plain run of a string: quote, backslash, control
 * characters, and non-ASCII (checked as UTF-8). */
static const uint8_t str_stop[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};

/* The first byte at or after i that stops a string's plain run (or n):
 * sixteen bytes at a time with SSE2 (a signed compare below 0x20 flags
 * control characters and non-ASCII at once), else eight, the lowest
 * flagged byte being always a true stop. */
static inline size_t scan_plain(const uint8_t *p, size_t i, size_t n)
{
    const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'),
                  space = _mm_set1_epi8(0x20);
    while (i + 16 <= n) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote),
                                              _mm_cmpeq_epi8(x, bslash)),
                                 _mm_cmplt_epi8(x, space));
        uint32_t bits = (uint32_t)_mm_movemask_epi8(m);
        if (bits) return i + (size_t)__builtin_ctz(bits);
        i += 16;
    }
#endif
    while (i + 8 <= n) {
        uint64_t x, q, b, m;
        memcpy(&x, p + i, 8);
        q = x ^ (ones * '"');
        b = x ^ (ones * '\\');
        m = ((q - ones) & ~q) | ((b - ones) & ~b) | (x - ones * 0x20) | x;
        m &= high;
        if (m) return i + ((size_t)__builtin_ctzll(m) >> 3);
        i += 8;
    }
    while (i < n && !str_stop[p[i]]) i++;
    return i;
}

static inline size_t skip_ws(const uint8_t *p, size_t i, size_t n)
{
    while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r')) i++;
    return i;
}

/* Length of the valid UTF-8 sequence at s[0..n) (s[0] >= 0x80), or 0. */
static inline size_t utf8_seq(const uint8_t *s, size_t n)
{
    uint8_t c = s[0];
    if (c >= 0xC2 && c <= 0xDF) return n >= 2 && (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (n < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80) return 0;
        if (c == 0xE0 && s[1] < 0xA0) return 0;
        if (c == 0xED && s[1] >= 0xA0) return 0;
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (n < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 ||
            (s[3] & 0xC0) != 0x80)
            return 0;
        if (c == 0xF0 && s[1] < 0x90) return 0;
        if (c == 0xF4 && s[1] >= 0x90) return 0;
        return 4;
    }
    return 0;
}

/* Write s[0..n) as a JSON string (with quotes) at o, which has room for
 * 6 * n + 2 bytes (RFC 8259: quote, backslash and control characters
 * escaped, valid UTF-8 as is, each invalid sequence U+FFFD).  Returns the
 * end; *repaired is set when an invalid UTF-8 sequence was replaced.  The
 * NDJSON writer and the Parquet reader (lists and maps as JSON text). */
static inline uint8_t *put_json_string(uint8_t *o, const uint8_t *s, size_t n,
                                bool *repaired)
{
    size_t i = 0;
    *o++ = '"';
    while (i < n) {
        size_t start = i;
        while (i < n && s[i] >= 0x20 && s[i] != '"' && s[i] != '\\' && s[i] < 0x80) i++;
        memcpy(o, s + start, i - start);
        o += i - start;
        if (i >= n) break;
        uint8_t c = s[i];
        if (c >= 0x80) {
            size_t k = utf8_seq(s + i, n - i);
            if (k) {
                memcpy(o, s + i, k);
                o += k;
                i += k;
            } else {
                *o++ = 0xEF;
                *o++ = 0xBF;
                *o++ = 0xBD;
                *repaired = true;
                i++;
            }
            continue;
        }
        *o++ = '\\';
        switch (c) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '\b': *o++ = 'b'; break;
        case '\f': *o++ = 'f'; break;
        case '\n': *o++ = 'n'; break;
        case '\r': *o++ = 'r'; break;
        case '\t': *o++ = 't'; break;
        default:
            *o++ = 'u';
            *o++ = '0';
            *o++ = '0';
            *o++ = (uint8_t)"0123456789abcdef"[c >> 4];
            *o++ = (uint8_t)"0123456789abcdef"[c & 15];
            break;
        }
        i++;
    }
    *o++ = '"';
    return o;
}

static inline int hex_val(uint8_t c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Four hex digits at s (n bytes available) -> code unit, or -1. */
static inline int32_t hex4(const uint8_t *s, size_t n)
{
    int32_t v = 0;
    if (n < 4) return -1;
    for (int k = 0; k < 4; k++) {
        int h = hex_val(s[k]);
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

/* Decode the validated string body s[0..len) with escapes into out (room
 * for len bytes: decoding never grows); returns the decoded length. */
static inline size_t unescape(const uint8_t *s, size_t len, uint8_t *out)
{
    size_t i = 0, o = 0;
    while (i < len) {
        uint8_t c = s[i];
        uint32_t u;
        if (c != '\\') {
            out[o++] = c;
            i++;
            continue;
        }
        c = s[i + 1];
        i += 2;
        switch (c) {
        case 'b': out[o++] = '\b'; continue;
        case 'f': out[o++] = '\f'; continue;
        case 'n': out[o++] = '\n'; continue;
        case 'r': out[o++] = '\r'; continue;
        case 't': out[o++] = '\t'; continue;
        case 'u': break;
        default: out[o++] = c; continue;
        }
        u = (uint32_t)hex4(s + i, 4);
        i += 4;
        if (u >= 0xD800 && u <= 0xDBFF) {
            uint32_t lo = (uint32_t)hex4(s + i + 2, 4);
            i += 6;
            u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
        }
        if (u < 0x80) {
            out[o++] = (uint8_t)u;
        } else if (u < 0x800) {
            out[o++] = (uint8_t)(0xC0 | (u >> 6));
            out[o++] = (uint8_t)(0x80 | (u & 0x3F));
        } else if (u < 0x10000) {
            out[o++] = (uint8_t)(0xE0 | (u >> 12));
            out[o++] = (uint8_t)(0x80 | ((u >> 6) & 0x3F));
            out[o++] = (uint8_t)(0x80 | (u & 0x3F));
        } else {
            out[o++] = (uint8_t)(0xF0 | (u >> 18));
            out[o++] = (uint8_t)(0x80 | ((u >> 12) & 0x3F));
            out[o++] = (uint8_t)(0x80 | ((u >> 6) & 0x3F));
            out[o++] = (uint8_t)(0x80 | (u & 0x3F));
        }
    }
    return o;
}

#endif
