/*
 * fn_regex.c -- regexp_matches regexp_full_match regexp_replace
 * regexp_extract regexp_split_to_array, with PCRE2 (JIT where the machine
 * has it), following DuckDB, whose engine is RE2.
 *
 * Making PCRE2 answer as RE2 does for the patterns both accept: subjects
 * and patterns are UTF-8 (PCRE2_UTF; bytes that are not valid UTF-8 match
 * nothing, PCRE2_MATCH_INVALID_UTF, instead of failing); `$` matches only
 * at the very end (PCRE2_DOLLAR_ENDONLY), `.` everything but a newline
 * (LF only, set here, whatever the build's default); \d \w \s \b and POSIX
 * classes are ASCII (no PCRE2_UCP), case folding is Unicode's (`é` matches
 * `É` with i); `\Z`, which RE2 refuses and PCRE2 reads as "end or before a
 * final newline", is refused as RE2 does.  PCRE2 accepts more than RE2
 * (backreferences, lookaround, possessive quantifiers, (?<name>...)): a
 * difference the man page lists.  A full match (regexp_full_match, ~) is a
 * pattern compiled anchored at both ends (PCRE2_ANCHORED|ENDANCHORED), so
 * `a|abc` fully matches 'abc' as in RE2.
 *
 * Options (DuckDB's letters): c case-sensitive, i case-insensitive (the
 * last of the two wins), l literal, m n p newline-sensitive (`.` stops at
 * a newline: the default), s `.` matches a newline too, g every match
 * (regexp_replace only); blanks are ignored, any other letter is an error.
 *
 * Replacement (RE2's Rewrite): \0..\9 insert a group, \\ a backslash; a
 * group the pattern does not have leaves the string unchanged, and so does
 * another escape in a single replacement (under g, the text before it is
 * kept: RE2's GlobalReplace).  Under g an empty match right after the
 * previous match is skipped (`a*` over 'baaac' gives '-b-c-').
 *
 * Splitting (DuckDB's string_split_regex): each search starts on the rest
 * of the string as a subject of its own, so `^` matches at every piece; an
 * empty match at the piece's start cuts one character off, any other match
 * ends the piece; the last piece is kept unless an empty match ate the last
 * character.  The pieces are written as a JSON array of strings (tally has
 * no list type).
 *
 * Catastrophic patterns cannot hang a run: PCRE2's match limit (10,000,000
 * steps) turns them into a data error naming the value.
 */
#include "fn_regex.h"
#include "fn_impl.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>

struct TlRegex {
    pcre2_general_context *gctx;
    pcre2_code *code;
    bool jit;       /* JIT compiled: matched with pcre2_jit_match */
    bool global;    /* option g */
    uint32_t groups; /* capturing groups */
};

static void *re_malloc(PCRE2_SIZE n, void *ud)
{
    (void)ud;
    return tl_malloc(n);
}

static void re_free(void *p, void *ud)
{
    (void)ud;
    tl_free(p);
}

typedef struct ReOpts {
    bool caseless, dotall, literal, global;
} ReOpts;

static bool parse_flags(const char *f, size_t nf, bool allow_g, ReOpts *o,
                        size_t *bad)
{
    memset(o, 0, sizeof *o);
    for (size_t i = 0; i < nf; i++) {
        switch (f[i]) {
        case 'c': o->caseless = false; break;
        case 'i': o->caseless = true; break;
        case 'l': o->literal = true; break;
        case 'm': case 'n': case 'p': o->dotall = false; break;
        case 's': o->dotall = true; break;
        case ' ': case '\t': case '\n': break;
        case 'g':
            if (allow_g) {
                o->global = true;
                break;
            }
            /* fall through */
        default:
            if (bad) *bad = i;
            return false;
        }
    }
    return true;
}

/* See fn_regex.h. */
bool tl_k_regex_flags_ok(const char *flags, size_t nf, bool allow_g,
                         size_t *bad)
{
    ReOpts o;
    return parse_flags(flags, nf, allow_g, &o, bad);
}

/* The offset of a `\Z` outside \Q...\E in p[0..n), or n. */
static size_t find_big_z(const char *p, size_t n)
{
    bool quoted = false;
    for (size_t i = 0; i + 1 < n; i++) {
        if (p[i] != '\\') continue;
        char c = p[i + 1];
        if (quoted) {
            if (c == 'E') quoted = false;
        } else if (c == 'Q') {
            quoted = true;
        } else if (c == 'Z') {
            return i;
        }
        i++; /* the escaped character */
    }
    return n;
}

/* See fn_regex.h. */
void tl_k_regex_free(TlRegex *re)
{
    if (!re) return;
    pcre2_code_free(re->code);
    pcre2_general_context_free(re->gctx);
    tl_free(re);
}

/* See fn_regex.h. */
TlStatus tl_k_regex_compile(const char *pat, size_t n, const char *flags,
                            size_t nf, bool full, TlRegex **out, size_t *pos,
                            TlError *err)
{
    ReOpts o;
    size_t bad = 0;
    pcre2_compile_context *cctx = NULL;
    int code = 0;
    PCRE2_SIZE off = 0;
    *out = NULL;
    *pos = 0;
    if (!parse_flags(flags, nf, true, &o, &bad)) {
        *pos = bad;
        return tl_error(err, TL_ERR_USAGE, "unknown regular expression option");
    }
    if (!o.literal && (bad = find_big_z(pat, n)) < n) {
        *pos = bad;
        return tl_error(err, TL_ERR_USAGE, "\\Z is not supported (use \\z or $)");
    }
    TlRegex *re = tl_calloc(1, sizeof *re);
    if (!re) return tl_error_oom(err);
    re->global = o.global;
    re->gctx = pcre2_general_context_create(re_malloc, re_free, NULL);
    if (re->gctx) cctx = pcre2_compile_context_create(re->gctx);
    if (!cctx) goto oom;
    pcre2_set_newline(cctx, PCRE2_NEWLINE_LF);
    uint32_t opt = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF;
    if (o.caseless) opt |= PCRE2_CASELESS;
    if (full) opt |= PCRE2_ANCHORED | PCRE2_ENDANCHORED;
    if (o.literal) opt |= PCRE2_LITERAL;
    else opt |= PCRE2_DOLLAR_ENDONLY | (o.dotall ? PCRE2_DOTALL : 0);
    re->code = pcre2_compile((PCRE2_SPTR)pat, n, opt, &code, &off, cctx);
    pcre2_compile_context_free(cctx);
    if (!re->code) {
        PCRE2_UCHAR msg[200];
        if (code == PCRE2_ERROR_NOMEMORY || code == PCRE2_ERROR_HEAP_FAILED) goto oom;
        if (pcre2_get_error_message(code, msg, sizeof msg) < 0)
            snprintf((char *)msg, sizeof msg, "error %d", code);
        tl_k_regex_free(re);
        *pos = off;
        return tl_error(err, TL_ERR_USAGE, "%s", (const char *)msg);
    }
    re->jit = pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE) == 0;
    pcre2_pattern_info(re->code, PCRE2_INFO_CAPTURECOUNT, &re->groups);
    *out = re;
    return TL_OK;
oom:
    tl_k_regex_free(re);
    return tl_error_oom(err);
}

/* ------------------------------------------------------------ matching */

enum { F_MATCHES, F_FULL, F_REPLACE, F_EXTRACT, F_SPLIT };

static const struct {
    const char *name;
    int fn, flags_arg;
} fns[] = {
    {"regexp_matches", F_MATCHES, 2},
    {"regexp_full_match", F_FULL, 2},
    {"regexp_replace", F_REPLACE, 3},
    {"regexp_extract", F_EXTRACT, 3},
    {"regexp_split_to_array", F_SPLIT, 2},
};

static int fn_of(const char *name)
{
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (strcmp(fns[i].name, name) == 0) return (int)i;
    return -1;
}

/* See fn_regex.h. */
bool tl_k_regex_fn(const char *name, int *flags_arg, bool *allow_g,
                   bool *full)
{
    int k = fn_of(name);
    if (k < 0) return false;
    *flags_arg = fns[k].flags_arg;
    *allow_g = fns[k].fn == F_REPLACE;
    *full = fns[k].fn == F_FULL;
    return true;
}

/* Patterns that are not constants: the last few distinct ones of a kernel
 * call stay compiled, so rows that repeat a handful of patterns compile
 * each once per call (batch). */
#define RE_CACHE 8

typedef struct Compiled {
    TlRegex *re;
    pcre2_match_data *md;
    const uint8_t *pat; /* the row's pattern (borrowed for the call) */
    size_t len;
} Compiled;

/* One kernel call's matcher: the compiled pattern in use and match data
 * sized for it (per call, so per thread). */
typedef struct Matcher {
    const TlRegex *re;        /* in use */
    pcre2_match_data *md;     /* its match data */
    pcre2_match_data *given_md; /* the match data of a constant pattern */
    pcre2_match_context *mctx;
    Compiled cache[RE_CACHE];
    int n_cache, evict;
} Matcher;

static void matcher_drop(Matcher *m)
{
    pcre2_match_data_free(m->given_md);
    pcre2_match_context_free(m->mctx);
    for (int i = 0; i < m->n_cache; i++) {
        pcre2_match_data_free(m->cache[i].md);
        tl_k_regex_free(m->cache[i].re);
    }
    memset(m, 0, sizeof *m);
}

/* Match data for re; false on OOM. */
static bool match_data(Matcher *m, const TlRegex *re, pcre2_match_data **md)
{
    *md = pcre2_match_data_create_from_pattern(re->code, re->gctx);
    if (!m->mctx) m->mctx = pcre2_match_context_create(re->gctx);
    return *md && m->mctx;
}

/* Match s[0..n) from byte `start`; 1 on a match (ovector in m->md), 0 on
 * none, TL_ERR_DATA when the match limit is hit, TL_ERR_OOM. */
static int re_match(Matcher *m, const uint8_t *s, size_t n, size_t start)
{
    int rc;
    if (m->re->jit) {
        rc = pcre2_jit_match(m->re->code, s, n, start, 0, m->md, m->mctx);
        /* the JIT stack is small: the interpreter (heap) takes over */
        if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
            rc = pcre2_match(m->re->code, s, n, start, PCRE2_NO_JIT, m->md,
                             m->mctx);
    } else {
        rc = pcre2_match(m->re->code, s, n, start, 0, m->md, m->mctx);
    }
    if (rc >= 0) return 1;
    if (rc == PCRE2_ERROR_NOMATCH) return 0;
    if (rc == PCRE2_ERROR_NOMEMORY || rc == PCRE2_ERROR_HEAP_FAILED)
        return -TL_ERR_OOM;
    return -TL_ERR_DATA;
}

/* See fn_regex.h. */
TlStatus tl_k_regex_search(const TlRegex *re, const char *s, size_t n,
                           bool *hit, TlError *err)
{
    Matcher m = {0};
    int rc = -TL_ERR_OOM;
    *hit = false;
    if (match_data(&m, re, &m.given_md)) {
        m.re = re;
        m.md = m.given_md;
        rc = re_match(&m, (const uint8_t *)s, n, 0);
    }
    matcher_drop(&m);
    if (rc == -TL_ERR_OOM) return tl_error_oom(err);
    if (rc < 0)
        return tl_error(err, TL_ERR_DATA, "regular expression too complex for "
                        "this value (match limit)");
    *hit = rc > 0;
    return TL_OK;
}

/* Byte length of the UTF-8 character at p[0..n) (n > 0); 1 for a byte that
 * starts none. */
static size_t char_len(const uint8_t *p, size_t n)
{
    size_t len = p[0] < 0xC2 ? 1 : p[0] < 0xE0 ? 2 : p[0] < 0xF0 ? 3 : p[0] < 0xF5 ? 4 : 1;
    if (len > n) return 1;
    for (size_t i = 1; i < len; i++)
        if ((p[i] & 0xC0) != 0x80) return 1;
    return len;
}

/* A growing byte buffer for one result string. */
typedef struct Buf {
    uint8_t *p;
    size_t len, cap;
    bool oom;
} Buf;

static void buf_put(Buf *b, const void *s, size_t n)
{
    if (b->oom || n == 0) return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n) cap *= 2;
        uint8_t *q = tl_realloc(b->p, cap);
        if (!q) {
            b->oom = true;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

/* The highest \N of a replacement, -1 when none. */
static int max_group(const uint8_t *r, size_t n)
{
    int mx = -1;
    for (size_t i = 0; i + 1 < n; i++) {
        if (r[i] != '\\') continue;
        if (r[i + 1] >= '0' && r[i + 1] <= '9' && r[i + 1] - '0' > mx)
            mx = r[i + 1] - '0';
        i++;
    }
    return mx;
}

/* Append the replacement r[0..rn) for the match in ov over s; false at an
 * escape that is neither \N nor \\ (what came before it is appended). */
static bool rewrite(Buf *b, const uint8_t *r, size_t rn, const uint8_t *s,
                    const PCRE2_SIZE *ov)
{
    for (size_t i = 0; i < rn; i++) {
        if (r[i] != '\\') {
            buf_put(b, &r[i], 1);
            continue;
        }
        if (++i == rn) return false;
        if (r[i] >= '0' && r[i] <= '9') {
            int g = r[i] - '0';
            if (ov[2 * g] != PCRE2_UNSET)
                buf_put(b, s + ov[2 * g], ov[2 * g + 1] - ov[2 * g]);
        } else if (r[i] == '\\') {
            buf_put(b, "\\", 1);
        } else {
            return false;
        }
    }
    return true;
}

/* regexp_replace of one string: *changed false leaves it as it is. */
static int replace_one(Matcher *m, Buf *b, const uint8_t *s, size_t n,
                       const uint8_t *r, size_t rn, bool *changed)
{
    *changed = false;
    b->len = 0;
    if (max_group(r, rn) > (int)m->re->groups) return 0;
    if (!m->re->global) {
        int rc = re_match(m, s, n, 0);
        if (rc <= 0) return rc;
        const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(m->md);
        buf_put(b, s, ov[0]);
        if (!rewrite(b, r, rn, s, ov)) return 0;
        buf_put(b, s + ov[1], n - ov[1]);
        *changed = true;
        return 0;
    }
    size_t p = 0, last_end = SIZE_MAX, count = 0;
    while (p <= n) {
        int rc = re_match(m, s, n, p);
        if (rc < 0) return rc;
        if (rc == 0) break;
        const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(m->md);
        if (p < ov[0]) buf_put(b, s + p, ov[0] - p);
        if (ov[0] == last_end && ov[1] == ov[0]) {
            /* an empty match where the last one ended: step one character */
            if (p < n) {
                size_t k = char_len(s + p, n - p);
                buf_put(b, s + p, k);
                p += k;
            } else {
                p++;
            }
            continue;
        }
        rewrite(b, r, rn, s, ov);
        p = ov[1];
        last_end = p;
        count++;
    }
    if (count == 0) return 0;
    if (p < n) buf_put(b, s + p, n - p);
    *changed = true;
    return 0;
}

/* JSON string text of s[0..n) into b, as DuckDB's to_json writes it. */
static void json_str(Buf *b, const uint8_t *s, size_t n)
{
    buf_put(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        char esc[8];
        const char *e = NULL;
        switch (c) {
        case '"': e = "\\\""; break;
        case '\\': e = "\\\\"; break;
        case '\b': e = "\\b"; break;
        case '\f': e = "\\f"; break;
        case '\n': e = "\\n"; break;
        case '\r': e = "\\r"; break;
        case '\t': e = "\\t"; break;
        default:
            if (c < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", c);
                e = esc;
            }
        }
        if (e) buf_put(b, e, strlen(e));
        else buf_put(b, &c, 1);
    }
    buf_put(b, "\"", 1);
}

/* regexp_split_to_array of one string, as a JSON array (file comment). */
static int split_one(Matcher *m, Buf *b, const uint8_t *s, size_t n)
{
    size_t start = 0, pieces = 0;
    bool ate_last = false;
    b->len = 0;
    buf_put(b, "[", 1);
    while (start < n) {
        int rc = re_match(m, s + start, n - start, 0);
        if (rc < 0) return rc;
        if (rc == 0) break;
        const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(m->md);
        size_t end, next;
        if (ov[1] == 0) { /* empty, at the start: one character */
            end = next = start + char_len(s + start, n - start);
            ate_last = true;
        } else {
            end = start + ov[0];
            next = start + ov[1];
            ate_last = false;
        }
        if (pieces++) buf_put(b, ",", 1);
        json_str(b, s + start, end - start);
        start = next;
    }
    if (!(start == n && ate_last)) {
        if (pieces++) buf_put(b, ",", 1);
        json_str(b, s + start, n - start);
    }
    buf_put(b, "]", 1);
    return 0;
}

/* The compiled pattern for row i: the given one, or the row's pattern and
 * options, compiled here unless the cache has it. */
static TlStatus row_regex(Matcher *m, const TlRegex *given, int fn,
                          const TlView *pv, const TlArray *pa,
                          const uint8_t *flags, size_t nf, TlError *err)
{
    if (given) {
        if (m->re == given) return TL_OK;
        if (!match_data(m, given, &m->given_md)) return tl_error_oom(err);
        m->re = given;
        m->md = m->given_md;
        return TL_OK;
    }
    const uint8_t *p = tl_view_ptr(pv, pa->data);
    size_t n = tl_view_len(*pv), pos;
    for (int i = 0; i < m->n_cache; i++) {
        Compiled *c = &m->cache[i];
        if (c->len == n && memcmp(c->pat, p, n) == 0) {
            m->re = c->re;
            m->md = c->md;
            return TL_OK;
        }
    }
    TlRegex *re;
    TlStatus st = tl_k_regex_compile((const char *)p, n, (const char *)flags,
                                     nf, fn == F_FULL, &re, &pos, err);
    if (st == TL_ERR_USAGE) {
        char why[160];
        snprintf(why, sizeof why, "%.150s", err->msg);
        return tl_error(err, TL_ERR_DATA, "invalid regular expression (%s at offset %zu)",
                        why, pos);
    }
    if (st != TL_OK) return st;
    Compiled *c;
    if (m->n_cache < RE_CACHE) {
        c = &m->cache[m->n_cache++];
    } else { /* the oldest goes */
        c = &m->cache[m->evict];
        m->evict = (m->evict + 1) % RE_CACHE;
        pcre2_match_data_free(c->md);
        tl_k_regex_free(c->re);
    }
    *c = (Compiled){.re = re, .pat = p, .len = n};
    m->re = NULL; /* no pattern in use until its match data exists */
    if (!match_data(m, re, &c->md)) return tl_error_oom(err);
    m->re = re;
    m->md = c->md;
    return TL_OK;
}

/* See fn_regex.h. */
TlStatus tl_k_regex_call(const char *name, const TlRegex *re,
                         const TlDatum *args, int n_args, int64_t n_rows,
                         TlArray **out, int64_t *err_row, TlError *err)
{
    int k = fn_of(name);
    if (k < 0) return tl_error(err, TL_ERR_DATA, "not a regexp function");
    int fn = fns[k].fn, fa = fns[k].flags_arg;
    bool pred = fn == F_MATCHES || fn == F_FULL;
    TlType rt = pred ? TL_TBOOL : TL_TSTRING;
    int n_null = fn == F_REPLACE ? 3 : 2; /* the arguments a null of which is null */
    TlBuf *validity = NULL, *values = NULL;
    TlBuilder bld;
    Matcher m = {0};
    Buf b = {0};
    TlStatus st = TL_OK;
    bool all_null;
    const uint8_t *flags = (const uint8_t *)"";
    size_t nf = 0;
    int group = 0;
    bool group_null = false;
    if (n_args > fa) {
        const TlArray *fa_ = args[fa].array;
        if (fa_->type != TL_TSTRING || !tl_array_valid(fa_, 0))
            return tl_error(err, TL_ERR_DATA, "regular expression options must not be null");
        const TlView *fv = tl_array_views(fa_);
        flags = tl_view_ptr(&fv[0], fa_->data);
        nf = tl_view_len(fv[0]);
        size_t bad;
        if (!tl_k_regex_flags_ok((const char *)flags, nf, fn == F_REPLACE, &bad))
            return tl_error(err, TL_ERR_DATA, "unknown regular expression option");
    }
    if (fn == F_EXTRACT && n_args > 2) {
        const TlArray *ga = args[2].array;
        if (ga->type != TL_TINT64 || !tl_array_valid(ga, 0)) group_null = true;
        else {
            int64_t g = tl_array_i64(ga)[0];
            if (g < 0 || g > 9)
                return tl_error(err, TL_ERR_DATA, "group must be between 0 and 9");
            group = (int)g;
        }
    }
    if (fn == F_SPLIT) n_null = 1; /* a null pattern does not split */
    TL_TRY(tl_k_fn_nulls(args, n_null, n_rows, &all_null, &validity, err));
    if (all_null) return tl_k_fn_null_result(rt, n_rows, out, err);
    const TlArray *sa = args[0].array, *pa = args[1].array;
    const TlView *sv = tl_array_views(sa);
    const TlView *pv = pa->type == TL_TSTRING ? tl_array_views(pa) : NULL;
    const TlArray *ra = fn == F_REPLACE ? args[2].array : NULL;
    const TlView *rv = ra ? tl_array_views(ra) : NULL;
    bool s_sc = args[0].scalar, p_sc = args[1].scalar;
    bool r_sc = ra && args[2].scalar;
    bool p_null_ok = fn == F_SPLIT; /* rows with a null pattern */
    uint8_t *bits = NULL;
    int64_t i = 0;
    if (pred) {
        values = tl_buf_new(tl_bitmap_bytes(n_rows), true);
        if (!values) goto oom;
        bits = values->data;
    } else {
        tl_builder_init(&bld, TL_TSTRING);
        if (!tl_builder_reserve(&bld, n_rows)) goto oom_b;
    }
    for (i = 0; i < n_rows; i++) {
        if (!tl_k_fn_row_valid(validity, i)) {
            if (!pred && !tl_builder_append_null(&bld)) goto oom_b;
            continue;
        }
        const TlView *s = &sv[s_sc ? 0 : i];
        const uint8_t *sp = tl_view_ptr(s, sa->data);
        size_t sn = tl_view_len(*s);
        bool p_null = p_null_ok && (pa->type == TL_TNULL ||
                                    !tl_array_valid(pa, p_sc ? 0 : i));
        if (p_null) { /* split by a null pattern: the string whole */
            b.len = 0;
            buf_put(&b, "[", 1);
            json_str(&b, sp, sn);
            buf_put(&b, "]", 1);
            if (b.oom || !tl_builder_append_str(&bld, b.p, b.len)) goto oom_b;
            continue;
        }
        if (fn == F_EXTRACT && group_null) {
            if (!tl_builder_append_str(&bld, "", 0)) goto oom_b;
            continue;
        }
        st = row_regex(&m, re, fn, pv ? &pv[p_sc ? 0 : i] : NULL, pa, flags,
                       nf, err);
        if (st != TL_OK) goto fail_row;
        int rc = 0;
        switch (fn) {
        case F_MATCHES:
        case F_FULL:
            rc = re_match(&m, sp, sn, 0);
            if (rc > 0) tl_bit_set(bits, i);
            break;
        case F_EXTRACT: {
            rc = re_match(&m, sp, sn, 0);
            const uint8_t *e = (const uint8_t *)"";
            size_t en = 0;
            if (rc > 0 && (uint32_t)group <= m.re->groups) {
                const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(m.md);
                if (ov[2 * group] != PCRE2_UNSET) {
                    e = sp + ov[2 * group];
                    en = ov[2 * group + 1] - ov[2 * group];
                }
            }
            if (rc >= 0 && !tl_builder_append_str(&bld, e, en)) goto oom_b;
            break;
        }
        case F_REPLACE: {
            const TlView *r = &rv[r_sc ? 0 : i];
            bool changed;
            rc = replace_one(&m, &b, sp, sn, tl_view_ptr(r, ra->data),
                             tl_view_len(*r), &changed);
            if (rc >= 0 && !tl_builder_append_str(&bld, changed ? b.p : sp,
                                                  changed ? b.len : sn))
                goto oom_b;
            if (b.oom) goto oom_b;
            break;
        }
        default:
            rc = split_one(&m, &b, sp, sn);
            if (b.oom) goto oom_b;
            if (rc >= 0 && !tl_builder_append_str(&bld, b.p, b.len)) goto oom_b;
            break;
        }
        if (rc == -TL_ERR_OOM) goto oom_any;
        if (rc < 0) {
            st = tl_error(err, TL_ERR_DATA,
                          "regular expression too complex for this value "
                          "(match limit)");
            goto fail_row;
        }
        if (b.len > UINT32_MAX) {
            st = tl_error(err, TL_ERR_DATA,
                          "string result is too long (more than 4294967295 bytes)");
            goto fail_row;
        }
    }
    matcher_drop(&m);
    tl_free(b.p);
    if (pred) {
        *out = tl_array_new(TL_TBOOL, n_rows, values, validity, -1, NULL, 0);
        return *out ? TL_OK : tl_error_oom(err);
    }
    tl_buf_release(validity);
    *out = tl_builder_finish(&bld);
    tl_builder_free(&bld);
    return *out ? TL_OK : tl_error_oom(err);
fail_row:
    *err_row = i;
    goto fail;
oom_any:
oom_b:
oom:
    st = tl_error_oom(err);
fail:
    if (!pred) tl_builder_free(&bld);
    matcher_drop(&m);
    tl_free(b.p);
    tl_buf_release(values);
    tl_buf_release(validity);
    return st;
}

/* ------------------------------------------------------ the family table */

static bool types_match(const TlType *a, int n, TlType *r, TlType *w)
{
    return tl_k_fn_sig(a, n, "sss", 2, TL_TBOOL, r, w);
}
static bool types_replace(const TlType *a, int n, TlType *r, TlType *w)
{
    return tl_k_fn_sig(a, n, "ssss", 3, TL_TSTRING, r, w);
}
static bool types_extract(const TlType *a, int n, TlType *r, TlType *w)
{
    return tl_k_fn_sig(a, n, "ssis", 2, TL_TSTRING, r, w);
}
static bool types_split(const TlType *a, int n, TlType *r, TlType *w)
{
    return tl_k_fn_sig(a, n, "sss", 2, TL_TSTRING, r, w);
}

#define RE_KERNEL(fname, sname)                                                \
    static TlStatus fname(const TlDatum *args, int n_args, int64_t n_rows,     \
                          TlArray **out, int64_t *err_row, TlError *err)       \
    {                                                                          \
        TL_FN_BROADCAST(fname);                                                \
        return tl_k_regex_call(sname, NULL, args, n_args, n_rows, out,         \
                               err_row, err);                                  \
    }
RE_KERNEL(k_matches, "regexp_matches")
RE_KERNEL(k_full_match, "regexp_full_match")
RE_KERNEL(k_replace, "regexp_replace")
RE_KERNEL(k_extract, "regexp_extract")
RE_KERNEL(k_split, "regexp_split_to_array")

/* The regexp family's table for the registry (fn.c). */
const TlFnDef tl_k_fn_regex_defs[] = {
    {"regexp_matches", k_matches, types_match},
    {"regexp_full_match", k_full_match, types_match},
    {"regexp_replace", k_replace, types_replace},
    {"regexp_extract", k_extract, types_extract},
    {"regexp_split_to_array", k_split, types_split},
};
/* Number of entries in tl_k_fn_regex_defs. */
const int tl_k_fn_regex_count =
    (int)(sizeof tl_k_fn_regex_defs / sizeof tl_k_fn_regex_defs[0]);
