/*
 * test_csv_scan.c -- the CSV reader's fast tokenizer (formats/csv_tokenize.c)
 * against its general one: every scan mode (parse_record alone, scalar,
 * SSE2, AVX2 masks) must give the same schema, rows, status and message
 * for the same input.  Inputs are random CSV made of the shapes the fast
 * path takes or hands back: plain records, quoted fields with delimiters
 * and line ends inside, doubled quotes, LF / CRLF / lone CR line ends,
 * blank lines, ragged records, a missing last line end, long fields across
 * 64-byte blocks, records longer than the mask window, and projections
 * of every shape (the fast path locates only the fields it keeps).  Plus number
 * parsing against strtod/strtoll and integer formatting against printf
 * (lib/core/text.c fast paths).
 */
#include "tl_test.h"
#include "csv_test_util.h"
#include "../../formats/fmt_impl.h"
#include "split_force.h"
#include "../../formats/infer.h"

#include <errno.h>

static char ref[1 << 20], got[1 << 20], text[1 << 16];
static TlError err;

static unsigned long long rng = 88172645463325252ULL;

static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static size_t put(size_t at, const char *s)
{
    size_t n = strlen(s);
    if (at + n < sizeof text) {
        memcpy(text + at, s, n);
        at += n;
    }
    return at;
}

/* One random field of the given flavor into text at `at`. */
static size_t field(size_t at, char delim, int flavor)
{
    static const char *plain[] = {"id001", "42", "-7", "3.25", "x", "",
                                  "2024-01-02", "true", "a b", "1e5",
                                  "ab\"c"};
    unsigned k = rnd(100);
    if (flavor == 0 || k < 70) {
        if (rnd(20) == 0) { /* a long one, across blocks */
            unsigned len = 40 + rnd(120);
            for (unsigned i = 0; i < len && at + 1 < sizeof text; i++)
                text[at++] = (char)('a' + rnd(26));
            return at;
        }
        return put(at, plain[rnd(sizeof plain / sizeof *plain)]);
    }
    /* quoted, with specials inside */
    at = put(at, "\"");
    for (unsigned i = 0, len = rnd(8); i < len; i++) {
        char d[2] = {delim, 0};
        switch (rnd(6)) {
        case 0: at = put(at, d); break;
        case 1: at = put(at, "\n"); break;
        case 2: at = put(at, "\r\n"); break;
        case 3: at = put(at, "\"\""); break;
        default: at = put(at, "q"); break;
        }
    }
    return put(at, "\"");
}

/* A random CSV with nc columns into text; returns its length. */
static size_t random_csv(char delim, int nc, int rows, int flavor)
{
    size_t at = 0;
    const char *ends[] = {"\n", "\r\n", "\r"};
    const char *end = ends[rnd(3)];
    char d[2] = {delim, 0};
    for (int c = 0; c < nc; c++) {
        char name[16];
        snprintf(name, sizeof name, "%sc%d", c ? d : "", c);
        at = put(at, name);
    }
    at = put(at, end);
    for (int r = 0; r < rows; r++) {
        int cols = nc;
        if (flavor == 2 && rnd(200) == 0) cols += rnd(2) ? 1 : -1; /* ragged */
        if (flavor && rnd(50) == 0) at = put(at, end);              /* blank */
        if (rnd(100) == 0) end = ends[rnd(3)];                     /* mixed */
        for (int c = 0; c < cols; c++) {
            if (c) at = put(at, d);
            at = field(at, delim, flavor);
        }
        if (r + 1 < rows || rnd(2)) at = put(at, end);
    }
    return at;
}

/* Read path (with opt, NULL: the defaults) under every mode; all must
 * agree with mode 0, whose answer stays in ref. */
static TlStatus same_in_every_mode_opt(const char *path, const TlReadOptions *opt,
                                       const char *what)
{
    TlStatus st0, st;
    char msg0[sizeof err.msg];
    tl_csv_scan_mode(0);
    st0 = tu_read(path, opt, NULL, ref, sizeof ref, &err);
    snprintf(msg0, sizeof msg0, "%s", err.msg);
    for (int mode = 1; mode <= 3; mode++) {
        tl_csv_scan_mode(mode);
        st = tu_read(path, opt, NULL, got, sizeof got, &err);
        if (st != st0 || strcmp(got, ref) != 0 || strcmp(err.msg, msg0) != 0) {
            fprintf(stderr, "mode %d differs on %s (status %d vs %d, \"%s\" vs \"%s\")\n",
                    mode, what, (int)st, (int)st0, err.msg, msg0);
            CHECK(false);
            break;
        }
    }
    tl_csv_scan_mode(-1);
    return st0;
}

static void same_in_every_mode(const char *path, const char *what)
{
    same_in_every_mode_opt(path, NULL, what);
}

TL_TEST(test_modes_exist)
{
    CHECK_EQ_INT(tl_csv_scan_mode(0), 0);
    CHECK_EQ_INT(tl_csv_scan_mode(1), 1);
    CHECK(tl_csv_scan_mode(3) >= 2);
    CHECK(tl_csv_scan_mode(-1) >= 1);
}

TL_TEST(test_fixed_shapes)
{
    static const char *inputs[] = {
        "a,b\n1,2\n3,4\n",
        "a,b\n1,2\n3,4",
        "a,b\r\n1,2\r\n3,4\r\n",
        "a,b\r1,2\r3,4\r",
        "a,b\n1,2\n\n\n3,4\n\n",
        "a\n1\n\n2\n\n\n",
        "a\n\n\n",
        "a,b\n1,2,3\n",
        "a,b\n1\n",
        "a,b\n1,\n",
        "a,b\n1,2,\n",
        "a,b\n\"1,x\",2\n\"3\"\"\",4\n",
        "a,b\n1,\"2\nz\"\n5,6\n",
        "a,b\n1,\"unterminated\n",
        "a,b\n\"x\"y,2\n",
        "a,b\nx\"y,2\n",
        ("\xEF\xBB\xBF" "a,b\n1,2\n"), /* a BOM */
        "a,b\n,\n,\n",
    };
    char name[32];
    for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++) {
        snprintf(name, sizeof name, "fixed%zu.csv", i);
        same_in_every_mode(tu_file(name, inputs[i], -1), inputs[i]);
    }
}

TL_TEST(test_crlf_at_every_block_offset)
{
    /* the CR of a CRLF at each offset of a 64-byte block, and beyond */
    for (int pad = 0; pad < 140; pad++) {
        size_t at = put(0, "a,b\r\n");
        for (int r = 0; r < 6; r++) {
            for (int i = 0; i < pad + r; i++) text[at++] = 'x';
            at = put(at, ",1\r\n");
        }
        text[at] = '\0';
        same_in_every_mode(tu_file("crlf.csv", text, (long)at), "crlf");
    }
}

TL_TEST(test_window_ends_inside_records)
{
    /* long last fields (the fast tokenizer finds a record's end from the
     * line-end mask, word by word past its first 64 bytes): the 16 KiB
     * mask window ends inside records, often inside the last field, where
     * the delimiters seen so far are all the record has */
    for (int round = 0; round < 6; round++) {
        size_t at = put(0, "a,b,c\n");
        while (at < sizeof text - 600) {
            unsigned len = round < 3 ? 60 + rnd(400) : 200 + (unsigned)round;
            at = put(at, rnd(2) ? "7,xy," : "123,z,");
            for (unsigned i = 0; i < len; i++) text[at++] = (char)('a' + rnd(26));
            at = put(at, round & 1 ? "\r\n" : "\n");
        }
        text[at] = '\0';
        same_in_every_mode(tu_file("longrec.csv", text, (long)at), "long records");
    }
}

TL_TEST(test_random_inputs)
{
    char label[64];
    for (int it = 0; it < 400; it++) {
        static const char delims[] = ",\t;|";
        char delim = it % 7 == 0 ? delims[rnd(4)] : ',';
        int nc = 1 + (int)rnd(it % 5 == 0 ? 40 : 6);
        int rows = (int)rnd(it % 10 == 0 ? 2000 : 60);
        int flavor = (int)rnd(3);
        size_t n = random_csv(delim, nc, rows, flavor);
        const char *path;
        if (delim != ',') {
            /* other delimiters go through --delimiter-free paths: .tsv for
             * tab only; the rest are tested as commas */
            if (delim != '\t') {
                for (size_t i = 0; i < n; i++)
                    if (text[i] == delim) text[i] = ',';
                delim = ',';
            }
        }
        path = tu_file(delim == '\t' ? "rand.tsv" : "rand.csv", text, (long)n);
        snprintf(label, sizeof label, "random input %d (%d cols, flavor %d)", it, nc,
                 flavor);
        same_in_every_mode(path, label);
    }
}

/* text[0..n) with its quoting rewritten: every quote that opens or closes
 * a field becomes q, a doubled quote inside one becomes e followed by q
 * (e 0: q q), and any other q in the text becomes x; into out, returns
 * its length. */
static size_t requote(const char *in, size_t n, char delim, char q, char e, char x,
                      char *out, size_t cap)
{
    size_t k = 0;
    bool start = true, inq = false;
    for (size_t i = 0; i < n && k + 2 < cap; i++) {
        char c = in[i];
        if (inq) {
            if (c == '"' && i + 1 < n && in[i + 1] == '"') {
                out[k++] = e ? e : q;
                out[k++] = q;
                i++;
            } else if (c == '"') {
                out[k++] = q;
                inq = false;
            } else {
                out[k++] = c == q ? x : c;
            }
            continue;
        }
        if (start && c == '"') {
            out[k++] = q;
            inq = true;
            start = false;
            continue;
        }
        start = c == delim || c == '\n' || c == '\r';
        out[k++] = c == q ? x : c;
    }
    return k;
}

TL_TEST(test_quote_and_escape_dialects_in_every_mode)
{
    /* the random inputs requoted with ' (doubled inside) and with " and a
     * backslash escape read as the originals do, in every mode (with an
     * escape or a quote other than '"' the splitter parses record by
     * record; the fast tokenizer's masks mark the quote given) */
    static char orig[sizeof ref], alt[sizeof text];
    char label[80];
    for (int it = 0; it < 150; it++) {
        int nc = 1 + (int)rnd(it % 5 == 0 ? 30 : 6);
        int rows = (int)rnd(it % 10 == 0 ? 2000 : 60);
        size_t n = random_csv(',', nc, rows, 1 + (int)(it % 2));
        TlStatus st0, st;
        TlReadOptions o = {0};
        size_t m;
        if (n + 64 > sizeof text) continue; /* cut short: its last record differs */
        for (size_t i = 0; i < n; i++)
            if (text[i] == '\\' || text[i] == '\'') text[i] = 'b';
        tl_csv_scan_mode(0);
        st0 = tu_read(tu_file("orig.csv", text, (long)n), NULL, NULL, orig, sizeof orig, &err);
        tl_csv_scan_mode(-1);
        for (int v = 0; v < 2; v++) {
            o.quote = v == 0 ? '\'' : '"';
            o.escape = v == 0 ? -1 : '\\';
            m = requote(text, n, ',', (char)o.quote, v == 0 ? 0 : '\\', v == 0 ? '"' : '"',
                        alt, sizeof alt);
            snprintf(label, sizeof label, "requoted input %d, %s", it,
                     v == 0 ? "quote '" : "escape \\");
            st = same_in_every_mode_opt(tu_file("alt.csv", alt, (long)m), &o, label);
            CHECK_EQ_INT((int)st, (int)st0);
            if (st == TL_OK && st0 == TL_OK && v == 1 && strcmp(ref, orig) != 0) {
                fprintf(stderr, "%s reads otherwise\n", label);
                CHECK(false);
            }
        }
    }
}

/* Read path with only the columns cols[0..n) (tu_read with a projection). */
static TlStatus read_proj(const char *path, const int *cols, int n, char *out,
                          size_t cap)
{
    TlReader *r = NULL;
    TlReadOptions dflt = {0};
    TlStatus st;
    out[0] = '\0';
    err.code = 0;
    err.msg[0] = '\0';
    st = tl_reader_open(path, &dflt, NULL, &r, &err);
    if (st != TL_OK) return st;
    st = tl_reader_project(r, cols, n, &err);
    for (; st == TL_OK;) {
        TlBatch *b = NULL;
        st = tl_reader_next(r, &b, &err);
        if (st != TL_OK || !b) break;
        tu_batch(out, cap, b);
        tl_batch_free(b);
    }
    tl_reader_close(r);
    return st;
}

TL_TEST(test_projections_in_every_mode)
{
    /* the fast tokenizer locates only the delimiters bounding projected
     * fields (from a record's start or its end): every subset shape, on
     * records within one 64-byte word, across several, and longer than
     * the 16 KiB mask window */
    char label[96], msg0[sizeof err.msg];
    int cols[8];
    for (int it = 0; it < 300; it++) {
        int nc = 1 + (int)rnd(it % 4 == 0 ? 30 : 9), n = 0;
        size_t len = random_csv(',', nc, (int)rnd(it % 10 == 0 ? 1500 : 80),
                                (int)rnd(3));
        const char *path;
        TlStatus st0, st;
        if (it % 25 == 0) {
            /* a record longer than the window: one huge field */
            size_t at = len;
            for (int c = 0; c < nc; c++) {
                if (c) at = put(at, ",");
                if (c == nc / 2)
                    for (int i = 0; i < 20000 && at + 1 < sizeof text; i++)
                        text[at++] = (char)('a' + i % 26);
                else
                    at = put(at, "7");
            }
            at = put(at, "\n");
            at = put(at, "1");
            for (int c = 1; c < nc; c++) at = put(at, ",2");
            at = put(at, "\n");
            len = at;
        }
        path = tu_file("proj.csv", text, (long)len);
        switch (it % 5) {
        case 0: cols[n++] = nc - 1; break;                 /* the last */
        case 1: cols[n++] = 0; break;                      /* the first */
        case 2: cols[n++] = (int)rnd((unsigned)nc); break; /* any one */
        default:
            for (int k = 0; k < 1 + (int)rnd(6); k++) cols[n++] = (int)rnd((unsigned)nc);
        }
        tl_csv_scan_mode(0);
        st0 = read_proj(path, cols, n, ref, sizeof ref);
        snprintf(msg0, sizeof msg0, "%s", err.msg);
        for (int mode = 1; mode <= 3; mode++) {
            tl_csv_scan_mode(mode);
            st = read_proj(path, cols, n, got, sizeof got);
            snprintf(label, sizeof label, "projection %d (%d cols, mode %d)", it, nc, mode);
            if (st != st0 || strcmp(got, ref) != 0 || strcmp(err.msg, msg0) != 0) {
                fprintf(stderr, "%s differs (status %d vs %d, \"%s\" vs \"%s\")\n",
                        label, (int)st, (int)st0, err.msg, msg0);
                CHECK(false);
                break;
            }
        }
    }
    tl_csv_scan_mode(-1);
}

TL_TEST(test_parse_numbers_match_libc)
{
    char s[40];
    for (int it = 0; it < 200000; it++) {
        int len = 1 + (int)rnd(24), bad = 0;
        double d, want;
        int64_t v;
        char *end;
        long long w;
        for (int k = 0; k < len; k++) {
            unsigned c = rnd(it % 3 ? 11 : 15);
            s[k] = "0123456789.-+eE"[c];
        }
        if (rnd(3) == 0) s[0] = '-';
        s[len] = '\0';
        want = strtod(s, &end);
        if (*end == '\0' && tl_parse_f64(s, (size_t)len, &d))
            bad |= memcmp(&d, &want, sizeof d) != 0;
        else if (*end == '\0')
            bad = 1; /* strtod takes all of it: so must we */
        errno = 0;
        w = strtoll(s, &end, 10);
        if (*end == '\0' && errno == 0)
            bad |= !tl_parse_i64(s, (size_t)len, &v) || v != w;
        else
            bad |= tl_parse_i64(s, (size_t)len, &v);
        if (bad) {
            fprintf(stderr, "number parse differs from libc: \"%s\"\n", s);
            CHECK(false);
            break;
        }
    }
    /* exact fast-path limits */
    {
        double d;
        int64_t v;
        CHECK(tl_parse_f64("9007199254740993", 16, &d) && d == 9007199254740992.0);
        CHECK(tl_parse_f64("0.1", 3, &d) && d == 0.1);
        CHECK(tl_parse_f64("123456789012345678.9", 20, &d) &&
              d == strtod("123456789012345678.9", NULL));
        CHECK(tl_parse_f64("1.00000000000000000000001", 25, &d) && d == 1.0);
        CHECK(tl_parse_f64("-0", 2, &d) && d == 0.0 && __builtin_signbit(d));
        CHECK(!tl_parse_f64("1.2.3", 5, &d));
        CHECK(!tl_parse_f64("-", 1, &d));
        CHECK(tl_parse_i64("999999999999999999", 18, &v) && v == 999999999999999999LL);
        CHECK(tl_parse_i64("-9223372036854775808", 20, &v) && v == INT64_MIN);
        CHECK(!tl_parse_i64("9223372036854775808", 19, &v));
        CHECK(!tl_parse_i64("+", 1, &v));
        CHECK(!tl_parse_i64("12a", 3, &v));
    }
}

/* Read options fixing the type of every column to t (--schema '*:T'): the
 * converters then take every spelling the parser takes (a leading zero, a
 * '+', more digits than a double holds), which is what these tests compare
 * with strtod; inference's own rules are tested by test_float_exact_edges. */
static const TlReadOptions *fixed_as(TlType t)
{
    static TlSchema s;
    static TlReadOptions o;
    TlError e = {0};
    tl_schema_free(&s);
    if (tl_schema_add(&s, "*", t, &e) != TL_OK) abort();
    memset(&o, 0, sizeof o);
    o.schema = &s;
    return &o;
}

/* Read text[0..len) as file name in every scan mode, every column of type
 * t (TL_TNULL: inferred): true when each read succeeds and prints want
 * (else the mode, what it printed and want go to stderr).  The mode is
 * reset afterwards. */
static bool read_in_every_mode(const char *name, size_t len, const char *want, TlType t)
{
    bool ok = true;
    const TlReadOptions *o = t == TL_TNULL ? NULL : fixed_as(t);
    for (int mode = 0; mode <= 3 && ok; mode++) {
        tl_csv_scan_mode(mode);
        ok = tu_read(tu_file(name, text, (long)len), o, NULL, got, sizeof got, &err) ==
                 TL_OK &&
             strcmp(got, want) == 0;
        if (!ok) fprintf(stderr, "mode %d:\n%s\nwant:\n%s\n", mode, got, want);
    }
    tl_csv_scan_mode(-1);
    return ok;
}

TL_TEST(test_float_column_matches_strtod)
{
    /* the reader's inline float conversion against strtod, via tl_fmt_f64 */
    size_t at = put(0, "f\n0.5\n");
    char want[1 << 17], buf[TL_FMT_MAX], s[40];
    size_t wn = 0;
    wn = (size_t)snprintf(want, sizeof want, "f:float64\n0.5\n");
    for (int it = 0; it < 2000; it++) {
        int len = 1 + (int)rnd(19), dot = (int)rnd((unsigned)len + 2);
        size_t n;
        for (int k = 0; k < len; k++) s[k] = (char)('0' + rnd(10));
        if (dot < len) s[dot] = '.';
        if (rnd(4) == 0) {
            memmove(s + 1, s, (size_t)len);
            s[0] = '-';
            len++;
        }
        s[len] = '\0';
        if (strcmp(s, "-") == 0 || strcmp(s, ".") == 0 || strcmp(s, "-.") == 0) continue;
        at = put(at, s);
        at = put(at, "\n");
        n = tl_fmt_f64(strtod(s, NULL), buf);
        memcpy(want + wn, buf, n);
        wn += n;
        want[wn++] = '\n';
    }
    want[wn] = '\0';
    CHECK(read_in_every_mode("floats.csv", at, want, TL_TFLOAT64));
}

TL_TEST(test_float_sse_shapes)
{
    /* the AVX2 mode's SSE float path (f64_sse): its shape's edges, and the
     * ones it hands to the general path, equal strtod bit for bit in every
     * mode; fields at every distance from the input's start (the load ends
     * at the field's end) and the null text taking precedence */
    static const char *edge[] = {
        "0", "-0", "0.0", "-0.0", "-0.000000", "00000000000000.5", "0.000000000000001",
        "-0.00000000000001", "9", "-9", "1.5", "-1.5", "83.6498", "100.0000",
        "123456789012345", "1234567890123456", "-123456789012345", "4503599627370495",
        "4503599627370496", "4503599627370497", "9007199254740992", "9007199254740993",
        "999999999999999.9", "99999999999999.99", "0.1", "0.2", "0.3", "2.2250738585072014",
        "1.7976931348623157", "1e22", "1E5", "-1e-5", "5.", "-5.", ".5", "-.5", "+5",
        "+5.5", "12345678901234567", "1.00000000000000000001", "00000000000000001",
        "0000000000000000", "1.234567890123456", "3.14159265358979", "-2.5e+3",
        "91399620.84340797", "-944608837.2433843", "986.5452293525111"};
    const int n_edge = (int)(sizeof edge / sizeof *edge);
    char want[1 << 15], buf[TL_FMT_MAX];
    for (int pad = 0; pad < 20; pad++) {
        size_t at = put(0, "f"), wn;
        for (int k = 0; k < pad; k++) at = put(at, "g"); /* the header's length */
        at = put(at, "\n");
        wn = (size_t)snprintf(want, sizeof want, "f");
        for (int k = 0; k < pad; k++) want[wn++] = 'g';
        wn += (size_t)snprintf(want + wn, sizeof want - wn, ":float64\n");
        for (int i = 0; i < n_edge; i++) {
            const char *s = edge[(i + pad) % n_edge];
            size_t n = tl_fmt_f64(strtod(s, NULL), buf);
            at = put(at, s);
            at = put(at, "\n");
            memcpy(want + wn, buf, n);
            wn += n;
            want[wn++] = '\n';
        }
        want[wn] = '\0';
        if (!read_in_every_mode("edges.csv", at, want, TL_TFLOAT64)) {
            fprintf(stderr, "pad %d\n", pad);
            CHECK(false);
            break;
        }
    }
    {
        /* a null text that is a number: null, in every mode */
        TlReadOptions opt = {0};
        static const char csv[] = "longer_header_name\n1.25\n-1.5\n12345.678\n-1.5\n";
        opt.null_text = "-1.5";
        for (int mode = 0; mode <= 3; mode++) {
            tl_csv_scan_mode(mode);
            CHECK_EQ_INT(tu_read(tu_file("nullnum.csv", csv, (long)strlen(csv)), &opt,
                                 NULL, got, sizeof got, &err),
                         TL_OK);
            CHECK_EQ_STR(got, "longer_header_name:float64\n1.25\n~\n12345.678\n~\n");
        }
    }
    tl_csv_scan_mode(-1);
}

/* The same edges inferred (no --schema), one per file, in every mode and
 * at a few distances from the input's start: a float64 or int64 column
 * exactly when tl_infer_widen says so (leading zeros, '+', digits a double
 * does not hold keep the text), the value then strtod's. */
TL_TEST(test_float_exact_edges)
{
    static const char *edge[] = {
        "0", "-0", "0.0", "-0.0", "00.5", "0.5", "-01.5", "007", "+5", "+5.5", "5.", ".5",
        "1234567890123456", "9007199254740993", "12345678901234567", "0.1234567890123456",
        "0.30000000000000004", "1.00000000000000000001", "99999999999999.99", "1e22",
        "00000000000000001", "83.6498", "-944608837.2433843"};
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++)
        for (int pad = 0; pad < 4; pad++) {
            const char *s = edge[i];
            TlType t = tl_infer_widen(TL_TNULL, s, strlen(s));
            char want[256], buf[TL_FMT_MAX];
            size_t at = put(0, "f");
            for (int k = 0; k < pad; k++) at = put(at, "g");
            at = put(at, "\n");
            at = put(at, s);
            at = put(at, "\n");
            if (t == TL_TFLOAT64)
                tl_fmt_f64(strtod(s, NULL), buf);
            else if (t == TL_TINT64)
                tl_fmt_i64((int64_t)strtoll(s, NULL, 10), buf);
            else
                snprintf(buf, sizeof buf, "%s", s);
            snprintf(want, sizeof want, "f%.*s:%s\n%s\n", pad, "ggg", tl_type_name(t), buf);
            CHECK(read_in_every_mode("exact.csv", at, want, TL_TNULL));
        }
}

TL_TEST(test_int_column_matches_strtoll)
{
    /* the reader's inline integer conversion (SWAR up to 8 digits) */
    size_t at = put(0, "i\n");
    char want[1 << 17], buf[TL_FMT_MAX], s[40];
    size_t wn = (size_t)snprintf(want, sizeof want, "i:int64\n");
    for (int it = 0; it < 3000; it++) {
        int len = 1 + (int)rnd(18), k = 0;
        size_t n;
        if (rnd(4) == 0) s[k++] = rnd(5) ? '-' : '+';
        for (int d = 0; d < len; d++) s[k++] = (char)('0' + rnd(10));
        s[k] = '\0';
        at = put(at, s);
        at = put(at, "\n");
        n = tl_fmt_i64((int64_t)strtoll(s, NULL, 10), buf);
        memcpy(want + wn, buf, n);
        wn += n;
        want[wn++] = '\n';
    }
    want[wn] = '\0';
    for (int mode = 0; mode <= 3; mode++) {
        tl_csv_scan_mode(mode);
        CHECK_EQ_INT(tu_read(tu_file("ints.csv", text, (long)at), fixed_as(TL_TINT64), NULL,
                             got, sizeof got, &err),
                     TL_OK);
        CHECK(strcmp(got, want) == 0);
    }
    tl_csv_scan_mode(-1);
}

TL_TEST(test_fmt_i64_matches_printf)
{
    static const int64_t fixed[] = {0, 9, 10, 99, 100, 101, -1, -10, -100,
                                    INT64_MAX, INT64_MIN, 1000000007};
    char want[32], buf[32];
    for (int it = 0; it < 100000; it++) {
        int64_t v = it < 12 ? fixed[it]
                            : (int64_t)(((uint64_t)rnd(1u << 31) << 33) ^ rnd(1u << 31)) >>
                                  rnd(63);
        size_t n = tl_fmt_i64(v, buf);
        snprintf(want, sizeof want, "%lld", (long long)v);
        if (strcmp(buf, want) != 0 || n != strlen(want)) {
            fprintf(stderr, "tl_fmt_i64(%s) gave %s\n", want, buf);
            CHECK(false);
            break;
        }
    }
}

int main(void)
{
    tu_init();
    TL_RUN(test_modes_exist);
    TL_RUN(test_fixed_shapes);
    TL_RUN(test_crlf_at_every_block_offset);
    TL_RUN(test_window_ends_inside_records);
    TL_RUN(test_random_inputs);
    TL_RUN(test_quote_and_escape_dialects_in_every_mode);
    TL_RUN(test_projections_in_every_mode);
    TL_RUN(test_parse_numbers_match_libc);
    TL_RUN(test_float_column_matches_strtod);
    TL_RUN(test_float_sse_shapes);
    TL_RUN(test_float_exact_edges);
    TL_RUN(test_int_column_matches_strtoll);
    TL_RUN(test_fmt_i64_matches_printf);
    tu_cleanup();
    return tl_test_summary(__FILE__);
}
