/*
 * quote.c -- the one way data reaches a message: quoted, escaped, cut.
 *
 * Anything a message embeds that came from the user's data or command line
 * (a value, a column name, a file name, a JSON key, a group key, a schema
 * entry) goes through tl_quote, so a hostile value cannot move the cursor,
 * recolour or retitle the terminal, or hide text with bidirectional controls,
 * and a 100 MB field does not become a 100 MB message.  The rule, also in the
 * man page (DIAGNOSTICS):
 *
 *   - the value is shown between double quotes; a '"' or '\' inside it is
 *     written '\"' or '\\', so the quoted text reads back unambiguously;
 *   - tab, newline and carriage return are written '\t', '\n', '\r'; every
 *     other byte below 0x20, DEL (0x7f), and every byte that is not part of
 *     valid UTF-8 is written '\xHH' (two lowercase hex digits);
 *   - valid UTF-8 is kept as is, except the C1 controls U+0080..U+009F
 *     (which some terminals obey like ESC sequences), the bidirectional
 *     controls U+200E, U+200F, U+202A..U+202E, U+2066..U+2069 and the line
 *     and paragraph separators U+2028, U+2029, written '\uHHHH';
 *   - a value longer than TL_QUOTE_SHOW (64) bytes shows its first
 *     TL_QUOTE_CUT (48) bytes (never cutting a character), an ellipsis
 *     inside the quotes, and its length: "aaaa…" (12,345 bytes); names
 *     (columns, files, keys: tl_quote_name) are cut the same way only past
 *     TL_QUOTE_NAME_SHOW (256) bytes, since the user may need all of one.
 *
 * tl_quote_json shows the source text of a JSON string: its escapes are
 * already in this style, so only what JSON leaves raw is escaped.
 * tl_escape_name and tl_escape_value are the same without the quotes, for
 * the file name that heads a "FILE:LINE:COL: ..." message and for source
 * text that is not a string (a JSON number or object).  tl_escape_text
 * applies the same escapes without quotes or cutting to a whole message
 * (keeping its newlines); the CLI runs every message through it before
 * printing, as a net under any call site that forgot to quote.
 * Escaped text holds no control bytes, so running it twice changes nothing.
 *
 * Results are returned by value in a fixed-size struct (TlQuoted): C11 gives
 * such a temporary a lifetime up to the end of the full expression, so a
 * caller writes tl_error(err, c, "bad %s", tl_quote_str(name).s) with no
 * buffer of its own and no allocation (errors must work when memory is out).
 * The functions leave errno as they found it, so strerror(errno) may sit in
 * the same argument list.
 */
#include "core.h"

#include <errno.h>
#include <stdio.h>

typedef struct Out {
    char *buf;
    size_t len, cap; /* len < cap always; buf[len] == 0 */
} Out;

static void put(Out *o, const char *s, size_t n)
{
    if (n > o->cap - 1 - o->len) n = o->cap - 1 - o->len;
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    o->buf[o->len] = 0;
}

/* Length of the valid UTF-8 sequence at s[0, n), its code point in *cp; 0 if
 * the bytes there are not valid UTF-8 (overlong, surrogate, beyond U+10FFFF,
 * truncated). */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned char c = s[0];
    size_t len;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF) { len = 2; v = c & 0x1F; min = 0x80; }
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; v = c & 0x0F; min = 0x800; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; v = c & 0x07; min = 0x10000; }
    else return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return len;
}

/* Whether code point cp (valid, >= 0x80) is written as \uHHHH. */
static bool hidden_cp(uint32_t cp)
{
    return (cp >= 0x80 && cp <= 0x9F) || cp == 0x200E || cp == 0x200F ||
           (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

/* Append s[0, n) to o with the escapes at the top of this file.  quoted: also
 * escape '"' and '\'; keep_nl: keep '\n' as is (whole messages). */
static void escape(Out *o, const unsigned char *s, size_t n, bool quoted,
                   bool keep_nl)
{
    static const char hex[] = "0123456789abcdef";
    size_t i = 0;
    while (i < n && o->len + 1 < o->cap) {
        unsigned char c = s[i];
        uint32_t cp;
        size_t k;
        char e[8];
        if (c >= 0x20 && c < 0x7f) {
            if (quoted && (c == '"' || c == '\\')) {
                e[0] = '\\';
                e[1] = (char)c;
                put(o, e, 2);
            } else {
                put(o, (const char *)s + i, 1);
            }
            i++;
            continue;
        }
        if (c == '\n' && keep_nl) {
            put(o, "\n", 1);
            i++;
            continue;
        }
        if (c == '\t' || c == '\n' || c == '\r') {
            e[0] = '\\';
            e[1] = c == '\t' ? 't' : c == '\n' ? 'n' : 'r';
            put(o, e, 2);
            i++;
            continue;
        }
        k = c < 0x80 ? 0 : utf8_seq(s + i, n - i, &cp);
        if (k == 0) { /* control byte or invalid UTF-8 */
            e[0] = '\\';
            e[1] = 'x';
            e[2] = hex[c >> 4];
            e[3] = hex[c & 15];
            put(o, e, 4);
            i++;
        } else if (hidden_cp(cp)) {
            e[0] = '\\';
            e[1] = 'u';
            for (int d = 0; d < 4; d++) e[2 + d] = hex[(cp >> (12 - 4 * d)) & 15];
            put(o, e, 6);
            i += k;
        } else {
            /* a whole character or nothing, so a full buffer never ends
             * inside one */
            if (k > o->cap - 1 - o->len) break;
            put(o, (const char *)s + i, k);
            i += k;
        }
    }
}

/* n written with a comma every three digits ("12,345"). */
static void put_count(Out *o, size_t n)
{
    char d[32], g[48];
    int nd = snprintf(d, sizeof d, "%zu", n), j = 0;
    for (int i = 0; i < nd; i++) {
        if (i > 0 && (nd - i) % 3 == 0) g[j++] = ',';
        g[j++] = d[i];
    }
    put(o, g, (size_t)j);
}

/* s[0, n) escaped, between quotes when quoted, and cut to its first `cut`
 * bytes (whole characters) with an ellipsis and its length when longer than
 * `show` bytes. */
static TlQuoted quote(const char *s, size_t n, size_t show, size_t cut,
                      bool quoted, bool esc_quotes)
{
    TlQuoted q;
    Out o = {q.s, 0, sizeof q.s};
    size_t shown = n;
    int saved = errno; /* callers pass strerror(errno) beside a quote */
    q.s[0] = 0;
    if (!s) {
        put(&o, "(none)", 6);
        return q;
    }
    if (n > show) {
        uint32_t cp;
        size_t i = 0, k;
        /* cut after whole characters only (an invalid byte counts as one) */
        while (i < cut) {
            k = utf8_seq((const unsigned char *)s + i, n - i, &cp);
            if (k == 0) k = 1;
            if (i + k > cut) break;
            i += k;
        }
        shown = i;
    }
    if (quoted) put(&o, "\"", 1);
    escape(&o, (const unsigned char *)s, shown, esc_quotes, false);
    if (shown < n) {
        put(&o, "\xe2\x80\xa6", 3); /* U+2026 HORIZONTAL ELLIPSIS */
        if (quoted) put(&o, "\"", 1);
        put(&o, " (", 2);
        put_count(&o, n);
        put(&o, " bytes)", 7);
    } else if (quoted) {
        put(&o, "\"", 1);
    }
    errno = saved;
    return q;
}

/* See core.h. */
TlQuoted tl_quote(const char *s, size_t n)
{
    return quote(s, n, TL_QUOTE_SHOW, TL_QUOTE_CUT, true, true);
}

/* See core.h. */
TlQuoted tl_quote_str(const char *s)
{
    return quote(s, s ? strlen(s) : 0, TL_QUOTE_SHOW, TL_QUOTE_CUT, true, true);
}

/* See core.h. */
TlQuoted tl_quote_name(const char *s)
{
    return quote(s, s ? strlen(s) : 0, TL_QUOTE_NAME_SHOW, TL_QUOTE_NAME_CUT,
                 true, true);
}

/* See core.h. */
TlQuoted tl_escape_value(const char *s, size_t n)
{
    return quote(s, n, TL_QUOTE_SHOW, TL_QUOTE_CUT, false, false);
}

/* See core.h. */
TlQuoted tl_quote_json(const char *s, size_t n)
{
    /* JSON writes '"' and '\' as \" and \\ already, and its other escapes
     * (\n, \u001b) are the ones tl_quote writes: keep them as they are */
    return quote(s, n, TL_QUOTE_SHOW, TL_QUOTE_CUT, true, false);
}

/* See core.h. */
TlQuoted tl_escape_name(const char *s)
{
    return quote(s, s ? strlen(s) : 0, TL_QUOTE_NAME_SHOW, TL_QUOTE_NAME_CUT,
                 false, false);
}

/* See core.h. */
size_t tl_escape_text(char *dst, size_t cap, const char *src)
{
    Out o = {dst, 0, cap};
    if (cap == 0) return 0;
    dst[0] = 0;
    escape(&o, (const unsigned char *)src, strlen(src), false, true);
    return o.len;
}
