/*
 * errors.c -- error messages that point into an expression.
 *
 * tl_error_at writes the message, then the source text with its origin, then
 * a caret line under the offending span:
 *
 *   unknown column "amout" (did you mean "amount"?)
 *     --filter: amout > 100
 *               ^^^^^
 *
 * The lines are joined by '\n' with no trailing newline.  Alignment is by
 * character, not byte: a UTF-8 sequence counts as one column, both for the
 * spaces before the caret and for the carets themselves, so the caret sits
 * under the right text on a terminal.  Control characters (tab, newline, ...)
 * are shown as spaces so they cannot break the layout.  Texts longer than
 * WINDOW_MIN bytes are cut to a window of about WINDOW bytes around the span,
 * with "..." on each cut side.  A span of length 0 (the end of the text, an
 * empty item) still gets one caret.
 *
 * tl_suggest, the "did you mean" helper for names drawn from a fixed list
 * (functions, pipeline-file keys), lives here too.
 */
#include "expr.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>

#define WINDOW_MIN 100 /* texts up to this many bytes are shown whole */
#define WINDOW 80      /* bytes shown around the span of a longer text */
#define BEFORE 30      /* of which before the span start */

typedef struct Out {
    char *buf;
    size_t len, cap;
} Out;

static void put(Out *o, const char *s, size_t n)
{
    if (o->len + 1 >= o->cap) return;
    if (n > o->cap - 1 - o->len) n = o->cap - 1 - o->len;
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    o->buf[o->len] = 0;
}

static void put_rep(Out *o, char c, size_t n)
{
    while (n-- > 0 && o->len + 1 < o->cap) {
        o->buf[o->len++] = c;
        o->buf[o->len] = 0;
    }
}

static bool is_cont(unsigned char c) { return (c & 0xC0) == 0x80; }

/* Characters (UTF-8 lead bytes) in s[a, b). */
static size_t n_chars(const char *s, size_t a, size_t b)
{
    size_t n = 0;
    for (size_t i = a; i < b; i++) n += !is_cont((unsigned char)s[i]);
    return n;
}

/* Fill err with code and the formatted message, then the text of srcs[src]
 * and a caret line under [start, start+len) (see the top of this file).
 * Returns code. */
TlStatus tl_error_at(TlError *err, TlStatus code, const TlExprArena *ea,
                     uint16_t src, uint32_t start, uint32_t len,
                     const char *fmt, ...)
{
    va_list ap;
    if (!err) return code;
    err->code = code;
    err->col = NULL;
    va_start(ap, fmt);
    if (vsnprintf(err->msg, sizeof err->msg, fmt, ap) < 0) err->msg[0] = 0;
    va_end(ap);
    err->msg[sizeof err->msg - 1] = 0;
    if (!ea || src >= ea->n_srcs || !ea->srcs[src].text) return code;

    const char *text = ea->srcs[src].text;
    const char *origin = ea->srcs[src].origin ? ea->srcs[src].origin : "";
    size_t n = strlen(text);
    size_t s = start < n ? start : n;
    size_t e = len < n - s ? s + len : n;
    size_t ws = 0, we = n;
    if (n > WINDOW_MIN) {
        ws = s > BEFORE ? s - BEFORE : 0;
        we = ws + WINDOW;
        if (we > n) {
            we = n;
            ws = n - WINDOW;
        }
        while (ws > 0 && ws < n && is_cont((unsigned char)text[ws])) ws--;
        while (we < n && we > ws && is_cont((unsigned char)text[we])) we--;
        if (ws > s) ws = s;
    }

    Out o = {err->msg, strlen(err->msg), sizeof err->msg};
    put(&o, "\n  ", 3);
    put(&o, origin, strlen(origin));
    put(&o, ": ", 2);
    if (ws > 0) put(&o, "...", 3);
    for (size_t i = ws; i < we; i++) {
        unsigned char c = (unsigned char)text[i];
        char d = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
        put(&o, &d, 1);
    }
    if (we < n) put(&o, "...", 3);
    put(&o, "\n  ", 3);
    put_rep(&o, ' ', n_chars(origin, 0, strlen(origin)) + 2 + (ws > 0 ? 3 : 0) +
                         n_chars(text, ws, s));
    size_t carets = n_chars(text, s, e < we ? e : we);
    put_rep(&o, '^', carets ? carets : 1);
    return code;
}

