/*
 * fn_format.c -- format(fmt, ...) in the style of C++'s fmt (DuckDB's
 * format) and printf(fmt, ...) in the style of C's printf (DuckDB's
 * printf), over whole arrays.
 *
 *   format    {} {N} {:spec} with spec [[fill]align][sign][#][0][width][,]
 *             [.precision][type]; {{ and }} are braces.  Types: none, s
 *             (text); d x X o b B (int64); e E f F g G a A (float64).  An
 *             int64 takes no precision; a float64 without a type is its
 *             shortest round-trip text (as tally writes floats), with a
 *             precision the %g form; text is cut to the precision.
 *   printf    %[flags][width][.precision][length]type, flags - + space 0
 *             #, length letters (h l L q j z t) ignored; d i u x X o c take
 *             an int64 (a bool as 0 or 1), e E f F g G a A a float64, s
 *             text; %% is a percent sign.
 *
 * As in DuckDB the kinds must agree: an int64 for %f or {:s}, a string for
 * %d, is an error, and so is a missing argument; text is a string, or a
 * bool, date or timestamp as tally writes them.  Widths and precisions of
 * text count characters (code points).  Right alignment is the default for
 * numbers, left for text in format (right in printf, as C).  Null in any argument gives null.  Errors are
 * data errors naming the row (the message is DuckDB's), also for a
 * constant format: the argument types are only met per value.
 */
#include "fn_impl.h"
#include "../lib/core/text.h"

#include <math.h>
#include <stdio.h>

typedef struct Out {
    char *p;
    size_t len, cap;
    bool oom;
} Out;

static void put(Out *o, const char *s, size_t n)
{
    if (o->oom || n == 0) return;
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 64;
        while (cap < o->len + n) cap *= 2;
        char *q = tl_realloc(o->p, cap);
        if (!q) {
            o->oom = true;
            return;
        }
        o->p = q;
        o->cap = cap;
    }
    memcpy(o->p + o->len, s, n);
    o->len += n;
}

static size_t cp_len(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

/* Byte length of the first k code points of s[0..n). */
static size_t cp_prefix(const char *s, size_t n, size_t k)
{
    size_t i = 0;
    while (i < n && k > 0) {
        i++;
        while (i < n && ((unsigned char)s[i] & 0xC0) == 0x80) i++;
        k--;
    }
    return i;
}

typedef struct Spec {
    char fill[5];      /* one UTF-8 character */
    size_t fill_len;
    char align;        /* '<' '>' '^' or 0 */
    char sign;         /* '+' ' ' '-' or 0 */
    bool alt, zero, comma;
    bool text_right;   /* printf: text too aligns right by default */
    long width, prec;  /* -1: none */
    char type;         /* 0: none */
} Spec;

/* The argument's kind for formatting. */
enum { K_INT, K_FLOAT, K_TEXT };

typedef struct Arg {
    int kind;
    int64_t i;
    double f;
    const char *s;
    size_t n;
    char tmp[TL_FMT_MAX];
    const char *type_name; /* DuckDB's name, for messages */
} Arg;

static void get_arg(const TlDatum *d, int64_t row, bool printf_, Arg *a)
{
    const TlArray *x = d->array;
    int64_t i = d->scalar ? 0 : row;
    switch (x->type) {
    case TL_TINT64: a->kind = K_INT; a->i = tl_array_i64(x)[i]; a->type_name = "int"; return;
    case TL_TFLOAT64: a->kind = K_FLOAT; a->f = tl_array_f64(x)[i]; a->type_name = "float"; return;
    case TL_TBOOL:
        a->type_name = "bool";
        if (printf_) { /* printf: %d of a bool is 0 or 1, %s its text */
            a->i = tl_array_bool(x, i);
        }
        a->kind = K_TEXT;
        a->s = tl_array_bool(x, i) ? "true" : "false";
        a->n = strlen(a->s);
        return;
    case TL_TDATE:
        a->kind = K_TEXT; a->type_name = "date";
        a->n = tl_fmt_date(tl_array_i32(x)[i], a->tmp);
        a->s = a->tmp;
        return;
    case TL_TTIMESTAMP:
        a->kind = K_TEXT; a->type_name = "timestamp";
        a->n = tl_fmt_timestamp(tl_array_i64(x)[i], a->tmp);
        a->s = a->tmp;
        return;
    case TL_TTIMESTAMPTZ:
        a->kind = K_TEXT; a->type_name = "timestamptz";
        a->n = tl_fmt_timestamptz(tl_array_i64(x)[i], a->tmp);
        a->s = a->tmp;
        return;
    case TL_TSTRING: {
        const TlView *v = &tl_array_views(x)[i];
        a->kind = K_TEXT; a->type_name = "string";
        a->s = (const char *)tl_view_ptr(v, x->data);
        a->n = tl_view_len(*v);
        return;
    }
    default: /* no value of this type reaches here (nulls are skipped first) */
        a->kind = K_TEXT; a->type_name = tl_type_name(x->type);
        a->s = "";
        a->n = 0;
        return;
    }
}

/* Append core (the sign and digits, or text) padded to the spec's width. */
static void pad_out(Out *o, const Spec *sp, const char *core, size_t n,
                    bool numeric)
{
    size_t w = cp_len(core, n);
    size_t fill = sp->width > 0 && (size_t)sp->width > w ? (size_t)sp->width - w : 0;
    char align = sp->align ? sp->align : numeric || sp->text_right ? '>' : '<';
    const char *f = sp->fill_len ? sp->fill : " ";
    size_t fl = sp->fill_len ? sp->fill_len : 1;
    size_t before = align == '<' ? 0 : align == '>' ? fill : fill / 2;
    for (size_t k = 0; k < before; k++) put(o, f, fl);
    put(o, core, n);
    for (size_t k = before; k < fill; k++) put(o, f, fl);
}

/* A number's text: sign, prefix, digits (zero-padded to the width when the
 * spec asks for 0 and no alignment), into buf. */
static size_t number(const Spec *sp, const Arg *a, char *buf, size_t cap,
                     const char **why)
{
    char digits[512], fmt[32];
    bool neg;
    const char *prefix = "";
    size_t nd;
    char t = sp->type;
    if (a->kind == K_INT) {
        if (sp->prec >= 0) {
            *why = "precision not allowed for this argument type";
            return 0;
        }
        uint64_t u = a->i < 0 ? (uint64_t)0 - (uint64_t)a->i : (uint64_t)a->i;
        neg = a->i < 0;
        if (t == 'b' || t == 'B') {
            char rev[65];
            size_t k = 0;
            do { rev[k++] = (char)('0' + (u & 1)); u >>= 1; } while (u);
            for (nd = 0; nd < k; nd++) digits[nd] = rev[k - 1 - nd];
            digits[nd] = 0;
            if (sp->alt) prefix = t == 'b' ? "0b" : "0B";
        } else {
            const char *conv = t == 'x' ? "llx" : t == 'X' ? "llX" : t == 'o' ? "llo" : "llu";
            snprintf(fmt, sizeof fmt, "%%%s", conv);
            nd = (size_t)snprintf(digits, sizeof digits, fmt, (unsigned long long)u);
            if (sp->alt && (t == 'x' || t == 'X')) prefix = t == 'x' ? "0x" : "0X";
            if (sp->alt && t == 'o' && u != 0) prefix = "0";
        }
    } else {
        double v = a->f;
        neg = signbit(v) && !isnan(v);
        v = fabs(v);
        if (t == 0 && sp->prec < 0) {
            nd = tl_fmt_f64(v, digits);
        } else {
            char ct = t ? t : 'g';
            if (sp->prec >= 0)
                snprintf(fmt, sizeof fmt, "%%%s.%ld%c", sp->alt ? "#" : "", sp->prec > 300 ? 300 : sp->prec, ct);
            else
                snprintf(fmt, sizeof fmt, "%%%s%c", sp->alt ? "#" : "", ct);
            nd = (size_t)snprintf(digits, sizeof digits, fmt, v);
            if (nd >= sizeof digits) nd = sizeof digits - 1;
        }
    }
    if (sp->comma) { /* separators in the integer part */
        size_t int_end = 0;
        while (int_end < nd && digits[int_end] >= '0' && digits[int_end] <= '9') int_end++;
        char tmp[768];
        size_t k = 0;
        for (size_t i = 0; i < int_end; i++) {
            if (i > 0 && (int_end - i) % 3 == 0) tmp[k++] = ',';
            tmp[k++] = digits[i];
        }
        memcpy(tmp + k, digits + int_end, nd - int_end);
        k += nd - int_end;
        if (k >= sizeof digits) k = sizeof digits - 1;
        memcpy(digits, tmp, k);
        nd = k;
    }
    size_t len = 0;
    char sgn = neg ? '-' : sp->sign == '+' ? '+' : sp->sign == ' ' ? ' ' : 0;
    if (sgn) buf[len++] = sgn;
    size_t pl = strlen(prefix);
    memcpy(buf + len, prefix, pl);
    len += pl;
    bool finite = a->kind == K_INT || isfinite(a->f);
    if (sp->zero && !sp->align && finite && sp->width > 0 &&
        (size_t)sp->width > len + nd) {
        size_t z = (size_t)sp->width - len - nd;
        if (z > cap - len - nd - 1) z = cap - len - nd - 1;
        memset(buf + len, '0', z);
        len += z;
    }
    memcpy(buf + len, digits, nd);
    return len + nd;
}

/* One argument by spec into o; false with *why on a mismatch. */
static bool emit(Out *o, const Spec *sp, const Arg *a, const char **why,
                 char *why_buf, size_t why_cap)
{
    char t = sp->type;
    bool int_t = t == 'd' || t == 'x' || t == 'X' || t == 'o' || t == 'b' || t == 'B';
    bool flt_t = t == 'e' || t == 'E' || t == 'f' || t == 'F' || t == 'g' || t == 'G' ||
                 t == 'a' || t == 'A';
    if (a->kind == K_INT && sp->prec >= 0) { /* fmt checks this first */
        *why = "precision not allowed for this argument type";
        return false;
    }
    bool ok = a->kind == K_TEXT ? (t == 0 || t == 's')
            : a->kind == K_INT ? (t == 0 || int_t) : (t == 0 || flt_t);
    if (!ok) {
        snprintf(why_buf, why_cap,
                 "Invalid type specifier \"%c\" for formatting a value of type %s",
                 t, a->type_name);
        *why = why_buf;
        return false;
    }
    if (a->kind == K_TEXT) {
        size_t n = sp->prec >= 0 ? cp_prefix(a->s, a->n, (size_t)sp->prec) : a->n;
        pad_out(o, sp, a->s, n, false);
        return true;
    }
    char buf[1400];
    size_t n = number(sp, a, buf, sizeof buf, why);
    if (*why) return false;
    pad_out(o, sp, buf, n, true);
    return true;
}

static long parse_num(const char *s, size_t n, size_t *i)
{
    long v = 0;
    while (*i < n && s[*i] >= '0' && s[*i] <= '9') {
        if (v < 100000) v = v * 10 + (s[*i] - '0');
        (*i)++;
    }
    return v;
}

static bool is_align(char c) { return c == '<' || c == '>' || c == '^'; }

/* fmt's spec s[0..n) (after ':'); false when malformed. */
static bool parse_fmt_spec(const char *s, size_t n, Spec *sp)
{
    size_t i = 0;
    memset(sp, 0, sizeof *sp);
    sp->width = sp->prec = -1;
    size_t cl = n ? cp_prefix(s, n, 1) : 0;
    if (cl < n && is_align(s[cl])) {
        memcpy(sp->fill, s, cl);
        sp->fill_len = cl;
        sp->align = s[cl];
        i = cl + 1;
    } else if (i < n && is_align(s[i])) {
        sp->align = s[i++];
    }
    if (i < n && (s[i] == '+' || s[i] == '-' || s[i] == ' ')) sp->sign = s[i++];
    if (i < n && s[i] == '#') sp->alt = true, i++;
    if (i < n && s[i] == '0') sp->zero = true, i++;
    if (i < n && s[i] >= '0' && s[i] <= '9') sp->width = parse_num(s, n, &i);
    if (i < n && s[i] == ',') sp->comma = true, i++;
    if (i < n && s[i] == '.') {
        i++;
        if (i >= n || s[i] < '0' || s[i] > '9') return false;
        sp->prec = parse_num(s, n, &i);
    }
    if (i < n) sp->type = s[i++];
    return i == n;
}

/* format: one row into o.  false with *why. */
static bool do_format(Out *o, const char *f, size_t n, const TlDatum *args,
                      int n_args, int64_t row, const char **why, char *wb,
                      size_t wc)
{
    int next = 0;
    bool manual = false;
    for (size_t i = 0; i < n;) {
        char c = f[i];
        if (c == '}') {
            if (i + 1 < n && f[i + 1] == '}') {
                put(o, "}", 1);
                i += 2;
                continue;
            }
            *why = "unmatched '}' in format string";
            return false;
        }
        if (c != '{') {
            size_t j = i;
            while (j < n && f[j] != '{' && f[j] != '}') j++;
            put(o, f + i, j - i);
            i = j;
            continue;
        }
        if (i + 1 < n && f[i + 1] == '{') {
            put(o, "{", 1);
            i += 2;
            continue;
        }
        size_t j = i + 1;
        while (j < n && f[j] != '}') j++;
        if (j >= n) {
            *why = "invalid format string";
            return false;
        }
        size_t k = i + 1;
        long idx;
        if (k < j && f[k] >= '0' && f[k] <= '9') {
            if (next > 0) {
                *why = "cannot switch from automatic to manual argument indexing";
                return false;
            }
            idx = parse_num(f, j, &k);
            manual = true;
        } else {
            if (manual) {
                *why = "cannot switch from manual to automatic argument indexing";
                return false;
            }
            idx = next++;
        }
        Spec sp;
        if (k < j && f[k] != ':') {
            *why = "invalid format string";
            return false;
        }
        if (!parse_fmt_spec(f + (k < j ? k + 1 : j), k < j ? j - k - 1 : 0, &sp)) {
            *why = "invalid format specifier";
            return false;
        }
        if (idx + 1 >= n_args) {
            snprintf(wb, wc, "Argument index \"%ld\" out of range", idx);
            *why = wb;
            return false;
        }
        Arg a;
        get_arg(&args[idx + 1], row, false, &a);
        if (!emit(o, &sp, &a, why, wb, wc)) return false;
        i = j + 1;
    }
    return true;
}

/* printf: one row into o.  false with *why. */
static bool do_printf(Out *o, const char *f, size_t n, const TlDatum *args,
                      int n_args, int64_t row, const char **why, char *wb,
                      size_t wc)
{
    int next = 0;
    for (size_t i = 0; i < n;) {
        if (f[i] != '%') {
            size_t j = i;
            while (j < n && f[j] != '%') j++;
            put(o, f + i, j - i);
            i = j;
            continue;
        }
        if (i + 1 < n && f[i + 1] == '%') {
            put(o, "%", 1);
            i += 2;
            continue;
        }
        Spec sp;
        memset(&sp, 0, sizeof sp);
        sp.width = sp.prec = -1;
        sp.text_right = true;
        size_t k = i + 1;
        for (; k < n; k++) {
            if (f[k] == '-') sp.align = '<';
            else if (f[k] == '+') sp.sign = '+';
            else if (f[k] == ' ') { if (sp.sign != '+') sp.sign = ' '; }
            else if (f[k] == '0') sp.zero = true;
            else if (f[k] == '#') sp.alt = true;
            else break;
        }
        if (k < n && f[k] >= '1' && f[k] <= '9') sp.width = parse_num(f, n, &k);
        if (k < n && f[k] == '.') {
            k++;
            sp.prec = parse_num(f, n, &k);
        }
        while (k < n && strchr("hlLqjzt", f[k])) k++;
        if (k >= n) {
            *why = "invalid format string";
            return false;
        }
        char t = f[k];
        if (sp.align) sp.zero = false;
        if (next + 1 >= n_args) {
            snprintf(wb, wc, "Argument index \"%d\" out of range", next);
            *why = wb;
            return false;
        }
        Arg a;
        get_arg(&args[next + 1], row, true, &a);
        const TlArray *x = args[next + 1].array;
        next++;
        /* printf's letters onto fmt's: d i u -> d, c: a character */
        if (t == 'i' || t == 'u') t = 'd';
        if (x->type == TL_TBOOL && (t == 'd' || t == 'x' || t == 'X' || t == 'o')) {
            a.kind = K_INT; /* a bool as 0 or 1 */
            a.type_name = "bool";
        }
        if (t == 'c' && a.kind == K_INT) {
            char ch[5];
            uint32_t cp = (uint32_t)a.i;
            size_t cl = 0;
            if (cp < 0x80) ch[cl++] = (char)cp;
            else if (cp < 0x800) { ch[cl++] = (char)(0xC0 | (cp >> 6)); ch[cl++] = (char)(0x80 | (cp & 0x3F)); }
            else if (cp < 0x10000) { ch[cl++] = (char)(0xE0 | (cp >> 12)); ch[cl++] = (char)(0x80 | ((cp >> 6) & 0x3F)); ch[cl++] = (char)(0x80 | (cp & 0x3F)); }
            else { ch[cl++] = (char)(0xF0 | ((cp >> 18) & 7)); ch[cl++] = (char)(0x80 | ((cp >> 12) & 0x3F)); ch[cl++] = (char)(0x80 | ((cp >> 6) & 0x3F)); ch[cl++] = (char)(0x80 | (cp & 0x3F)); }
            sp.zero = false;
            pad_out(o, &sp, ch, cl, false);
            i = k + 1;
            continue;
        }
        if (a.kind == K_INT && sp.prec >= 0 && t != 's') sp.prec = -1; /* %.3d: C's minimum digits, not kept */
        if (t == 'd' && a.kind == K_INT) t = 0;
        sp.type = t == 's' && a.kind == K_TEXT ? 0 : t;
        if (a.kind == K_FLOAT && t == 's') sp.type = 's';
        if (a.kind == K_FLOAT && sp.type && sp.prec < 0 && strchr("eEfFgG", sp.type))
            sp.prec = 6; /* C's default precision */
        if (!emit(o, &sp, &a, why, wb, wc)) return false;
        i = k + 1;
    }
    return true;
}

static TlStatus format_fn(bool printf_, const TlDatum *args, int n_args,
                          int64_t n_rows, TlArray **out, int64_t *err_row,
                          TlError *err)
{
    TlBuf *validity = NULL;
    bool all_null;
    TL_TRY(tl_k_fn_nulls(args, n_args, n_rows, &all_null, &validity, err));
    if (all_null) return tl_k_fn_null_result(TL_TSTRING, n_rows, out, err);
    TlBuilder b;
    Out o = {0};
    TlStatus st;
    tl_builder_init(&b, TL_TSTRING);
    if (!tl_builder_reserve(&b, n_rows)) goto oom;
    for (int64_t i = 0; i < n_rows; i++) {
        if (!tl_k_fn_row_valid(validity, i)) {
            if (!tl_builder_append_null(&b)) goto oom;
            continue;
        }
        const TlView *fv = &tl_array_views(args[0].array)[args[0].scalar ? 0 : i];
        const char *f = (const char *)tl_view_ptr(fv, args[0].array->data);
        size_t fn = tl_view_len(*fv);
        const char *why = NULL;
        char wb[160];
        o.len = 0;
        bool ok = printf_ ? do_printf(&o, f, fn, args, n_args, i, &why, wb, sizeof wb)
                          : do_format(&o, f, fn, args, n_args, i, &why, wb, sizeof wb);
        if (o.oom) goto oom;
        if (!ok) {
            *err_row = i;
            st = tl_error(err, TL_ERR_DATA, "%s", why);
            goto fail;
        }
        if (o.len > UINT32_MAX) {
            *err_row = i;
            st = tl_error(err, TL_ERR_DATA, "string result is too long (more than 4294967295 bytes)");
            goto fail;
        }
        if (!tl_builder_append_str(&b, o.p ? o.p : "", o.len)) goto oom;
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

static TlStatus k_format(const TlDatum *args, int n_args, int64_t n_rows,
                         TlArray **out, int64_t *err_row, TlError *err)
{
    TL_FN_BROADCAST(k_format);
    return format_fn(false, args, n_args, n_rows, out, err_row, err);
}

static TlStatus k_printf(const TlDatum *args, int n_args, int64_t n_rows,
                         TlArray **out, int64_t *err_row, TlError *err)
{
    TL_FN_BROADCAST(k_printf);
    return format_fn(true, args, n_args, n_rows, out, err_row, err);
}

/* A string format, then arguments of any type (each its own). */
static bool types_format(const TlType *a, int n, TlType *r, TlType *w)
{
    if (n < 1 || (a[0] != TL_TSTRING && a[0] != TL_TNULL)) return false;
    w[0] = TL_TSTRING;
    for (int i = 1; i < n; i++) w[i] = a[i] == TL_TNULL ? TL_TSTRING : a[i];
    *r = TL_TSTRING;
    return true;
}

/* The format family's table for the registry (fn.c). */
const TlFnDef tl_k_fn_format_defs[] = {
    {"format", k_format, types_format},
    {"printf", k_printf, types_format},
};
/* Number of entries in tl_k_fn_format_defs. */
const int tl_k_fn_format_count =
    (int)(sizeof tl_k_fn_format_defs / sizeof tl_k_fn_format_defs[0]);
