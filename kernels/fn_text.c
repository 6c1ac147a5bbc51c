/*
 * fn_text.c -- left right lpad rpad reverse repeat strpos initcap, as
 * DuckDB has them (initcap, which DuckDB lacks, as PostgreSQL's).
 *
 * Counts and positions are in characters (Unicode code points of UTF-8;
 * a byte that starts no character counts as one), as DuckDB and the other
 * string functions (fn_string.c).  reverse keeps each grapheme cluster
 * whole (a letter and its combining accent, a flag, an emoji with its skin
 * tone: utf8proc's grapheme breaks), and reverses an all-ASCII string byte
 * by byte, as DuckDB does (so '\r\n' turns into '\n\r' there).
 *
 *   left(s, n)      the first n characters; n < 0: all but the last -n
 *   right(s, n)     the last n characters; n < 0: all but the first -n
 *   lpad(s, n, f)   s cut or padded on the left with f repeated to n
 *                   characters; n < 0 gives ''; padding with an empty f
 *                   is an error ("insufficient padding")
 *   rpad(s, n, f)   the same on the right
 *   repeat(s, n)    s n times ('' for n <= 0); more than 4 GiB is an error
 *   strpos(s, t)    the 1-based character position of the first t in s,
 *                   0 when absent, 1 for an empty t; alias instr
 *   initcap(s)      each word's first letter upper case, the rest lower
 *                   (a word: a run of letters and digits, Unicode's)
 *
 * Null in any argument gives null.  Results are copied into new strings
 * (TlBuilder): these functions make new text more often than pieces.
 */
#include "fn_impl.h"

#include <utf8proc.h>

/* Byte length of the character at p[0..n) (n > 0), 1 for a stray byte. */
static inline size_t ch_len(const uint8_t *p, size_t n)
{
    size_t len = p[0] < 0xC2 ? 1 : p[0] < 0xE0 ? 2 : p[0] < 0xF0 ? 3 : p[0] < 0xF5 ? 4 : 1;
    if (len > n) return 1;
    for (size_t i = 1; i < len; i++)
        if ((p[i] & 0xC0) != 0x80) return 1;
    return len;
}

/* Characters in p[0..n). */
static size_t n_chars(const uint8_t *p, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i += ch_len(p + i, n - i)) c++;
    return c;
}

/* Byte offset of character k (k <= count) of p[0..n). */
static size_t char_off(const uint8_t *p, size_t n, size_t k)
{
    size_t i = 0;
    for (; k > 0 && i < n; k--) i += ch_len(p + i, n - i);
    return i;
}

typedef struct Out {
    uint8_t *p;
    size_t len, cap;
    bool oom;
} Out;

static uint8_t *out_room(Out *o, size_t n)
{
    if (o->oom) return NULL;
    if (o->len + n > o->cap || !o->p) { /* never NULL + 0: room for an empty result too */
        size_t cap = o->cap ? o->cap : 64;
        while (cap < o->len + n) cap *= 2;
        uint8_t *q = tl_realloc(o->p, cap);
        if (!q) {
            o->oom = true;
            return NULL;
        }
        o->p = q;
        o->cap = cap;
    }
    return o->p + o->len;
}

static void out_put(Out *o, const void *s, size_t n)
{
    uint8_t *d = n ? out_room(o, n) : NULL;
    if (!d) return;
    memcpy(d, s, n);
    o->len += n;
}

enum { T_LEFT, T_RIGHT, T_LPAD, T_RPAD, T_REVERSE, T_REPEAT, T_STRPOS, T_INITCAP };

/* Argument k's string at row i. */
#define STR(k, i, p, n)                                                        \
    do {                                                                       \
        const TlView *v_ = &tl_array_views(args[k].array)[args[k].scalar ? 0 : (i)]; \
        p = tl_view_ptr(v_, args[k].array->data);                              \
        n = tl_view_len(*v_);                                                  \
    } while (0)
#define INT(k, i) (tl_array_i64(args[k].array)[args[k].scalar ? 0 : (i)])

enum { PAD_OK, PAD_EMPTY, PAD_LONG };

/* s padded to w characters with f (on the left when `left`): PAD_EMPTY
 * when padding is needed and f is empty, PAD_LONG when the result would
 * pass 4 GiB (checked before anything is written). */
static int pad(Out *o, const uint8_t *s, size_t n, int64_t w, const uint8_t *f,
               size_t fn, bool left)
{
    if (w <= 0) return PAD_OK;
    size_t have = n_chars(s, n);
    if (have >= (uint64_t)w) {
        out_put(o, s, char_off(s, n, (size_t)w));
        return PAD_OK;
    }
    if (fn == 0) return PAD_EMPTY;
    uint64_t need = (uint64_t)w - have, fc = n_chars(f, fn);
    if (need > UINT32_MAX ||
        n + (need / fc) * fn + char_off(f, fn, (size_t)(need % fc)) > UINT32_MAX)
        return PAD_LONG;
    if (!left) out_put(o, s, n);
    for (size_t left_ = (size_t)need, j = 0; left_ > 0 && !o->oom; left_--) {
        size_t k = ch_len(f + j, fn - j);
        out_put(o, f + j, k);
        j += k;
        if (j == fn) j = 0;
    }
    if (left) out_put(o, s, n);
    return PAD_OK;
}

static void reverse(Out *o, const uint8_t *s, size_t n)
{
    uint8_t *d = out_room(o, n);
    if (!d) return;
    bool ascii = true;
    for (size_t i = 0; i < n && ascii; i++) ascii = s[i] < 0x80;
    if (ascii) {
        for (size_t i = 0; i < n; i++) d[i] = s[n - 1 - i];
        o->len += n;
        return;
    }
    /* clusters from the front, each copied to its mirrored place */
    size_t i = 0;
    utf8proc_int32_t state = 0;
    while (i < n) {
        size_t start = i;
        utf8proc_int32_t prev = -1;
        for (;;) {
            utf8proc_int32_t cp;
            utf8proc_ssize_t k = utf8proc_iterate(s + i, (utf8proc_ssize_t)(n - i), &cp);
            if (k <= 0) { /* a stray byte is a cluster of its own */
                if (i == start) i++;
                break;
            }
            if (prev >= 0 && utf8proc_grapheme_break_stateful(prev, cp, &state)) break;
            prev = cp;
            i += (size_t)k;
            if (i >= n) break;
        }
        state = 0;
        memcpy(d + (n - i), s + start, i - start);
    }
    o->len += n;
}

static void initcap(Out *o, const uint8_t *s, size_t n)
{
    bool in_word = false;
    for (size_t i = 0; i < n && !o->oom;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t k = utf8proc_iterate(s + i, (utf8proc_ssize_t)(n - i), &cp);
        if (k <= 0) {
            out_put(o, s + i, 1);
            i++;
            in_word = false;
            continue;
        }
        utf8proc_category_t c = utf8proc_category(cp);
        bool alnum = (c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO) ||
                     (c >= UTF8PROC_CATEGORY_ND && c <= UTF8PROC_CATEGORY_NO);
        utf8proc_int32_t m = alnum ? (in_word ? utf8proc_tolower(cp) : utf8proc_toupper(cp)) : cp;
        uint8_t *d = out_room(o, 4);
        if (d) o->len += (size_t)utf8proc_encode_char(m, d);
        in_word = alnum;
        i += (size_t)k;
    }
}

static TlStatus text_fn(int fn, const TlDatum *args, int n_args, int64_t n_rows,
                        TlArray **out, int64_t *err_row, TlError *err)
{
    TlBuf *validity = NULL;
    bool all_null;
    TlType rt = fn == T_STRPOS ? TL_TINT64 : TL_TSTRING;
    TL_TRY(tl_k_fn_nulls(args, n_args, n_rows, &all_null, &validity, err));
    if (all_null) return tl_k_fn_null_result(rt, n_rows, out, err);
    TlBuilder b;
    Out o = {0};
    TlStatus st = TL_OK;
    tl_builder_init(&b, rt);
    if (!tl_builder_reserve(&b, n_rows)) goto oom;
    for (int64_t i = 0; i < n_rows; i++) {
        if (!tl_k_fn_row_valid(validity, i)) {
            if (!tl_builder_append_null(&b)) goto oom;
            continue;
        }
        const uint8_t *s, *t = NULL;
        size_t n, tn = 0;
        STR(0, i, s, n);
        o.len = 0;
        switch (fn) {
        case T_LEFT:
        case T_RIGHT: {
            int64_t k = INT(1, i);
            size_t c = n_chars(s, n), keep;
            if (k >= 0) keep = (uint64_t)k < c ? (size_t)k : c;
            else keep = (uint64_t)(-(k + 1)) + 1 < c ? c - (size_t)(-(k + 1)) - 1 : 0;
            size_t off = fn == T_LEFT ? 0 : char_off(s, n, c - keep);
            size_t end = fn == T_LEFT ? char_off(s, n, keep) : n;
            out_put(&o, s + off, end - off);
            break;
        }
        case T_LPAD:
        case T_RPAD:
            STR(2, i, t, tn);
            switch (pad(&o, s, n, INT(1, i), t, tn, fn == T_LPAD)) {
            case PAD_EMPTY:
                *err_row = i;
                st = tl_error(err, TL_ERR_DATA, "insufficient padding (an empty fill)");
                goto fail;
            case PAD_LONG:
                *err_row = i;
                st = tl_error(err, TL_ERR_DATA,
                              "string result is too long (more than 4294967295 bytes)");
                goto fail;
            default:
                break;
            }
            break;
        case T_REVERSE: reverse(&o, s, n); break;
        case T_REPEAT: {
            int64_t k = INT(1, i);
            if (k > 0 && n > 0 && (uint64_t)k > UINT32_MAX / n) {
                *err_row = i;
                st = tl_error(err, TL_ERR_DATA,
                              "string result is too long (more than 4294967295 bytes)");
                goto fail;
            }
            for (int64_t r = 0; r < k && n > 0 && !o.oom; r++) out_put(&o, s, n);
            break;
        }
        case T_STRPOS: {
            STR(1, i, t, tn);
            const uint8_t *h = tl_k_fn_find(s, n, t, tn);
            int64_t pos = h ? (int64_t)n_chars(s, (size_t)(h - s)) + 1 : 0;
            if (!tl_builder_append_i64(&b, pos)) goto oom;
            continue;
        }
        default: initcap(&o, s, n); break;
        }
        if (o.oom || !tl_builder_append_str(&b, o.p ? o.p : (const uint8_t *)"", o.len))
            goto oom;
    }
    tl_free(o.p);
    tl_buf_release(validity);
    *out = tl_builder_finish(&b);
    tl_builder_free(&b);
    return *out ? TL_OK : tl_error_oom(err);
oom:
    st = tl_error_oom(err);
fail:
    tl_free(o.p);
    tl_builder_free(&b);
    tl_buf_release(validity);
    return st;
}

#define TEXT_KERNEL(fname, which)                                              \
    static TlStatus fname(const TlDatum *args, int n_args, int64_t n_rows,     \
                          TlArray **out, int64_t *err_row, TlError *err)       \
    {                                                                          \
        TL_FN_BROADCAST(fname);                                                \
        return text_fn(which, args, n_args, n_rows, out, err_row, err);        \
    }
TEXT_KERNEL(k_left, T_LEFT)
TEXT_KERNEL(k_right, T_RIGHT)
TEXT_KERNEL(k_lpad, T_LPAD)
TEXT_KERNEL(k_rpad, T_RPAD)
TEXT_KERNEL(k_reverse, T_REVERSE)
TEXT_KERNEL(k_repeat, T_REPEAT)
TEXT_KERNEL(k_strpos, T_STRPOS)
TEXT_KERNEL(k_initcap, T_INITCAP)

static bool types_si(const TlType *a, int n, TlType *r, TlType *w)
{
    return tl_k_fn_sig(a, n, "si", 2, TL_TSTRING, r, w);
}
static bool types_sis(const TlType *a, int n, TlType *r, TlType *w)
{
    return tl_k_fn_sig(a, n, "sis", 3, TL_TSTRING, r, w);
}
static bool types_s(const TlType *a, int n, TlType *r, TlType *w)
{
    return tl_k_fn_sig(a, n, "s", 1, TL_TSTRING, r, w);
}
static bool types_ss_int(const TlType *a, int n, TlType *r, TlType *w)
{
    return tl_k_fn_sig(a, n, "ss", 2, TL_TINT64, r, w);
}

/* The text family's table for the registry (fn.c). */
const TlFnDef tl_k_fn_text_defs[] = {
    {"left", k_left, types_si},       {"right", k_right, types_si},
    {"lpad", k_lpad, types_sis},      {"rpad", k_rpad, types_sis},
    {"reverse", k_reverse, types_s},  {"repeat", k_repeat, types_si},
    {"strpos", k_strpos, types_ss_int}, {"initcap", k_initcap, types_s},
};
/* Number of entries in tl_k_fn_text_defs. */
const int tl_k_fn_text_count =
    (int)(sizeof tl_k_fn_text_defs / sizeof tl_k_fn_text_defs[0]);
