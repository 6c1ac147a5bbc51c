/*
 * lexer.c -- expression text -> token array.
 *
 * One pass over the bytes, no allocation per token beyond the growing array.
 * Tokens carry spans only; the parser decodes values from the text, so the
 * lexer never copies.  Rules:
 *
 *   numbers   123 -> INT;  1.5  1.  .5  1e3  1.5e-3 -> FLOAT.  An exponent
 *             is taken only when digits follow the `e` (and its sign), so
 *             `1e` lexes as INT `1` and WORD `e` and the parser complains.
 *   strings   '...' with '' for a quote; may hold any byte, even newlines.
 *   names     [A-Za-z_][A-Za-z0-9_]* (WORD, maybe a keyword) or "..." with
 *             "" for a double quote (QNAME).  Non-ASCII letters need quotes.
 *   symbols   ( ) , * + - / // % || = == != <> < <= > >= :: : ~ !~
 *
 * A byte that starts no token is a syntax error with a caret under it (the
 * whole UTF-8 sequence for a non-ASCII character; when that character sits
 * in a word, the caret is under the word and the message says to
 * double-quote it).
 */
#include "lexer.h"

#include <stdio.h>

static bool is_alpha(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* Length of the UTF-8 sequence starting at s[i] (1 for a stray byte). */
static uint32_t utf8_len(const char *s, uint32_t i, uint32_t end)
{
    unsigned char c = (unsigned char)s[i];
    uint32_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    uint32_t k = 1;
    while (k < n && i + k < end && ((unsigned char)s[i + k] & 0xC0) == 0x80) k++;
    return k;
}

/* Whether byte c can be part of a name as the user meant it: an ASCII
 * letter, digit or '_', or any byte of a non-ASCII character. */
static bool name_byte(char c)
{
    unsigned char u = (unsigned char)c;
    return u >= 0x80 || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') ||
           (u >= '0' && u <= '9') || u == '_';
}

/* Length of the number starting at s[i]; sets *is_float. */
static uint32_t lex_number(const char *s, uint32_t i, uint32_t end, bool *is_float)
{
    uint32_t j = i;
    *is_float = false;
    while (j < end && is_digit((unsigned char)s[j])) j++;
    if (j < end && s[j] == '.') {
        *is_float = true;
        j++;
        while (j < end && is_digit((unsigned char)s[j])) j++;
    }
    if (j < end && (s[j] == 'e' || s[j] == 'E')) {
        uint32_t k = j + 1;
        if (k < end && (s[k] == '+' || s[k] == '-')) k++;
        if (k < end && is_digit((unsigned char)s[k])) {
            while (k < end && is_digit((unsigned char)s[k])) k++;
            *is_float = true;
            j = k;
        }
    }
    return j - i;
}

/* Length of the quoted token starting at s[i] (quote q, doubled to escape),
 * or 0 when it is not terminated before end. */
static uint32_t lex_quoted(const char *s, uint32_t i, uint32_t end, char q)
{
    uint32_t j = i + 1;
    while (j < end) {
        if (s[j] == q) {
            if (j + 1 < end && s[j + 1] == q) {
                j += 2;
                continue;
            }
            return j + 1 - i;
        }
        j++;
    }
    return 0;
}

static bool push_tok(TlToken **toks, uint32_t *n, uint32_t *cap, TlTokKind kind,
                     TlKeyword kw, uint32_t start, uint32_t len)
{
    if (*n == *cap) {
        uint32_t nc = *cap ? *cap * 2 : 16;
        TlToken *t = tl_realloc(*toks, (size_t)nc * sizeof *t);
        if (!t) return false;
        *toks = t;
        *cap = nc;
    }
    (*toks)[*n].kind = (uint8_t)kind;
    (*toks)[*n].kw = (uint8_t)kw;
    (*toks)[*n].start = start;
    (*toks)[*n].len = len;
    (*n)++;
    return true;
}

/* Tokenize srcs[src].text[start, end) into *toks (see lexer.h).  On failure
 * *toks may still hold memory the caller must tl_free. */
TlStatus tl_lex(const TlExprArena *ea, uint16_t src, uint32_t start,
                uint32_t end, TlToken **toks, uint32_t *n_toks, TlError *err)
{
    const char *s = ea->srcs[src].text;
    uint32_t n = 0, cap = 0, i = start;
    *toks = NULL;
    *n_toks = 0;
    while (i < end) {
        unsigned char c = (unsigned char)s[i];
        TlTokKind kind;
        TlKeyword kw = TL_KW_NONE;
        uint32_t len = 1;
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
            c == '\v') {
            i++;
            continue;
        }
        if (is_digit(c) || (c == '.' && i + 1 < end && is_digit((unsigned char)s[i + 1]))) {
            bool is_float;
            len = lex_number(s, i, end, &is_float);
            kind = is_float ? TL_TK_FLOAT : TL_TK_INT;
        } else if (is_alpha(c)) {
            while (i + len < end && (is_alpha((unsigned char)s[i + len]) ||
                                     is_digit((unsigned char)s[i + len])))
                len++;
            kind = TL_TK_WORD;
            kw = tl_keyword(s + i, len);
        } else if (c == '\'' || c == '"') {
            len = lex_quoted(s, i, end, (char)c);
            if (len == 0) {
                *n_toks = n;
                return tl_error_at(err, TL_ERR_USAGE, ea, src, i, end - i,
                                   "syntax error: unterminated %s",
                                   c == '\'' ? "string" : "quoted name");
            }
            kind = c == '\'' ? TL_TK_STRING : TL_TK_QNAME;
        } else {
            char c2 = i + 1 < end ? s[i + 1] : 0;
            switch (c) {
            case '(': kind = TL_TK_LPAREN; break;
            case ')': kind = TL_TK_RPAREN; break;
            case ',': kind = TL_TK_COMMA; break;
            case '*': kind = TL_TK_STAR; break;
            case '+': kind = TL_TK_PLUS; break;
            case '-': kind = TL_TK_MINUS; break;
            case '%': kind = TL_TK_PERCENT; break;
            case '/':
                kind = TL_TK_SLASH;
                if (c2 == '/') kind = TL_TK_DSLASH, len = 2;
                break;
            case '|':
                if (c2 != '|') goto bad;
                kind = TL_TK_CONCAT, len = 2;
                break;
            case '=':
                kind = TL_TK_EQ;
                if (c2 == '=') kind = TL_TK_EQEQ, len = 2;
                break;
            case '!':
                if (c2 == '~') {
                    kind = TL_TK_NTILDE, len = 2;
                    break;
                }
                if (c2 != '=') goto bad;
                kind = TL_TK_NE, len = 2;
                break;
            case '~': kind = TL_TK_TILDE; break;
            case '<':
                kind = TL_TK_LT;
                if (c2 == '=') kind = TL_TK_LE, len = 2;
                else if (c2 == '>') kind = TL_TK_NE, len = 2;
                break;
            case '>':
                kind = TL_TK_GT;
                if (c2 == '=') kind = TL_TK_GE, len = 2;
                break;
            case ':':
                kind = TL_TK_COLON;
                if (c2 == ':') kind = TL_TK_DCOLON, len = 2;
                break;
            default:
                goto bad;
            }
        }
        if (!push_tok(toks, &n, &cap, kind, kw, i, len)) goto oom;
        i += len;
        continue;
    bad:
        *n_toks = n;
        len = utf8_len(s, i, end);
        if ((unsigned char)s[i] >= 0x80) {
            /* a non-ASCII letter inside a word: the word is a name that
             * needs double quotes */
            uint32_t ws = i, we = i + len;
            while (ws > 0 && name_byte(s[ws - 1])) ws--;
            while (we < end && name_byte(s[we])) we++;
            if (ws < i || we > i + len) {
                char word[TL_QUOTE_NAME_SHOW + 1];
                snprintf(word, sizeof word, "%.*s", (int)(we - ws), s + ws);
                return tl_error_at(err, TL_ERR_USAGE, ea, src, ws, we - ws,
                                   "syntax error: unexpected %s (a name with "
                                   "non-ASCII letters must be double-quoted: %s)",
                                   tl_quote(s + i, len).s, tl_quote_name(word).s);
            }
        }
        return tl_error_at(err, TL_ERR_USAGE, ea, src, i, len,
                           "syntax error: unexpected %s", tl_quote(s + i, len).s);
    }
    if (!push_tok(toks, &n, &cap, TL_TK_EOF, TL_KW_NONE, end, 0)) goto oom;
    *n_toks = n;
    return TL_OK;
oom:
    *n_toks = n;
    return tl_error_oom(err);
}
