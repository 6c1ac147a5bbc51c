/* run-unit: weight=7 */
/*
 * test_write_parallel.c -- the writers' parallel pipeline (formats/
 * write_common.c): the same bytes for every thread count, errors in order,
 * nothing half-written, nothing used after free.
 *
 * The pool can be sized only before it starts (lib/core/pool.c), so every
 * thread count runs in its own forked child, which writes a file the
 * parent compares.  The batches are built once in the parent (the child
 * inherits them): random columns of every type with nulls, strings with
 * delimiters, quotes, newlines, long and invalid UTF-8 text, floats with
 * -0.0, inf and nan; batch sizes mix tiny (formatted inline), medium and
 * larger-than-a-slice (several tasks) ones.  The CSV reference is a naive
 * value-by-value formatter written here.
 */
#include "tl_test.h"
#include "../../formats/format.h"
#include "../../lib/core/pool.h"
#include "../../lib/core/text.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define N_COLS 7
#define MAX_BATCHES 32

static TlError err;
static char dir[256];
static TlSchema schema;
static TlBatch *batches[MAX_BATCHES];
static int n_batches;
static TlSchema schema2;            /* the out-of-memory test: id, s */
static TlBatch *batches2[4];
static int64_t n_nonfinite, n_bad_utf8; /* expected NDJSON warnings */

static uint64_t rng = 0x9E3779B97F4A7C15u;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static const char *const strs[] = {
    "", "a", "x,y", "say \"hi\"", "line\nbreak", "cr\rhere", "tab\there",
    " spaced ", "a string longer than twelve bytes, with a comma",
    "\"\"", "bad \xff\xfe utf8", "caf\xc3\xa9", "ctl \x01 char", "\\slash",
    "long \"quoted\" text\nover two lines and more than twelve"};
#define N_STRS (sizeof strs / sizeof strs[0])

static bool bad_utf8(const char *s) { return strchr(s, '\xff') != NULL; }

static double pick_float(void)
{
    static const double sp[] = {0.0, -0.0, 1e-5, 71.0, 0.1, 1e300, 5e-324, -2.5};
    uint64_t r = next_rand() % 16;
    if (r < 8) return sp[r];
    if (r == 8) return 1.0 / 0.0;
    if (r == 9) return -1.0 / 0.0;
    if (r == 10) return __builtin_nan("");
    return (double)(int64_t)(next_rand() % 2000001 - 1000000) / 1000.0;
}

static TlArray *make_col(int c, int64_t n)
{
    TlBuilder b;
    static const TlType types[N_COLS] = {TL_TINT64, TL_TFLOAT64, TL_TSTRING, TL_TDATE,
                                         TL_TTIMESTAMP, TL_TBOOL, TL_TNULL};
    if (types[c] == TL_TNULL) return tl_array_new_null(TL_TNULL, n);
    tl_builder_init(&b, types[c]);
    for (int64_t i = 0; i < n; i++) {
        bool ok;
        if (next_rand() % 10 == 0) {
            ok = tl_builder_append_null(&b);
        } else {
            switch (types[c]) {
            case TL_TINT64:
                ok = tl_builder_append_i64(&b, (int64_t)(next_rand() >> 1) -
                                                   (int64_t)(next_rand() >> 1));
                break;
            case TL_TFLOAT64: {
                double d = pick_float();
                n_nonfinite += !__builtin_isfinite(d);
                ok = tl_builder_append_f64(&b, d);
                break;
            }
            case TL_TSTRING: {
                const char *s = strs[next_rand() % N_STRS];
                n_bad_utf8 += bad_utf8(s);
                ok = tl_builder_append_str(&b, s, strlen(s));
                break;
            }
            case TL_TDATE:
                ok = tl_builder_append_i32(&b, (int32_t)(next_rand() % 80000) - 20000);
                break;
            case TL_TTIMESTAMP:
                ok = tl_builder_append_i64(&b, (int64_t)(next_rand() % 4000000000000000u) -
                                                   1000000000000000);
                break;
            default:
                ok = tl_builder_append_bool(&b, next_rand() & 1);
                break;
            }
        }
        if (!ok) break;
    }
    return tl_builder_finish(&b);
}

/* Rows per batch: tiny ones (inline while nothing is in flight), ones larger
 * than a slice, tiny ones behind big ones (queued in order), empty ones. */
static const int64_t sizes[] = {5,    3000,  70000, 1,    4095, 4096, 20000, 0,
                                65543, 2,    30000, 13,  7000, 66000, 1,  3};

static void build_batches(void)
{
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0] && n_batches < MAX_BATCHES; k++) {
        TlBatch *b = tl_batch_new(&schema, N_COLS, sizes[k]);
        if (!b) break;
        for (int c = 0; c < N_COLS; c++) b->cols[c] = make_col(c, sizes[k]);
        batches[n_batches++] = b;
    }
}

/* ------------------------------------------------- the naive reference */

typedef struct Str {
    char *p;
    size_t len, cap;
} Str;

static void put(Str *s, const char *p, size_t n)
{
    if (s->len + n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < s->len + n + 1) cap *= 2;
        s->p = realloc(s->p, cap);
        s->cap = cap;
    }
    memcpy(s->p + s->len, p, n);
    s->len += n;
}

static void put_field(Str *s, const char *p, size_t n)
{
    bool q = n == 0;
    for (size_t i = 0; i < n; i++)
        if (p[i] == ',' || p[i] == '"' || p[i] == '\r' || p[i] == '\n') q = true;
    if (!q) {
        put(s, p, n);
        return;
    }
    put(s, "\"", 1);
    for (size_t i = 0; i < n; i++) put(s, p[i] == '"' ? "\"\"" : p + i, p[i] == '"' ? 2 : 1);
    put(s, "\"", 1);
}

static Str csv_reference(void)
{
    Str s = {0};
    char buf[TL_FMT_MAX];
    for (int c = 0; c < N_COLS; c++) {
        put_field(&s, schema.fields[c].name, strlen(schema.fields[c].name));
        put(&s, c + 1 < N_COLS ? "," : "\n", 1);
    }
    for (int k = 0; k < n_batches; k++) {
        const TlBatch *b = batches[k];
        for (int64_t i = 0; i < b->n_rows; i++)
            for (int c = 0; c < N_COLS; c++) {
                const TlArray *a = b->cols[c];
                if (tl_array_valid(a, i)) {
                    switch (a->type) {
                    case TL_TINT64: put(&s, buf, tl_fmt_i64(tl_array_i64(a)[i], buf)); break;
                    case TL_TFLOAT64: put(&s, buf, tl_fmt_f64(tl_array_f64(a)[i], buf)); break;
                    case TL_TDATE: put(&s, buf, tl_fmt_date(tl_array_i32(a)[i], buf)); break;
                    case TL_TTIMESTAMP:
                        put(&s, buf, tl_fmt_timestamp(tl_array_i64(a)[i], buf));
                        break;
                    case TL_TBOOL:
                        put(&s, tl_array_bool(a, i) ? "true" : "false",
                            tl_array_bool(a, i) ? 4 : 5);
                        break;
                    case TL_TSTRING: {
                        const TlView *v = &tl_array_views(a)[i];
                        put_field(&s, (const char *)tl_view_ptr(v, a->data), tl_view_len(*v));
                        break;
                    }
                    default: break;
                    }
                }
                put(&s, c + 1 < N_COLS ? "," : "\n", 1);
            }
    }
    return s;
}

/* ------------------------------------------------------------- helpers */

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *p = NULL;
    long n;
    *len = 0;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    p = malloc((size_t)n + 1);
    if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    if (p) {
        p[n] = '\0';
        *len = (size_t)n;
    }
    fclose(f);
    return p;
}

static bool file_equals(const char *path, const char *want, size_t want_len)
{
    size_t len;
    char *got = read_file(path, &len);
    bool same = got && len == want_len && memcmp(got, want, len) == 0;
    if (got && !same) {
        size_t i = 0;
        while (i < len && i < want_len && got[i] == want[i]) i++;
        fprintf(stderr, "%s: %zu bytes, want %zu, first difference at %zu\n", path, len,
                want_len, i);
    }
    free(got);
    return same;
}

/* Leftover temporary files (".name.tmp-XXXXXX") in dir. */
static int tmp_files(void)
{
    int n = 0;
    struct dirent *e;
    DIR *d = opendir(dir);
    if (!d) return -1;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".tmp-")) n++;
    closedir(d);
    return n;
}

static int threads_running(void)
{
    int n = 0;
    struct dirent *e;
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

/* Write bs[from, to) of schema s with format to path and commit. */
static TlStatus write_set(const char *path, const char *format, const TlSchema *s,
                          TlBatch *const *bs, int from, int to, TlError *e)
{
    TlSink *sink = NULL;
    TlWriter *w = NULL;
    TlWriteOptions wo = {.delimiter = ',', .header = true};
    TlStatus st = tl_sink_open(NULL, path, &sink, e);
    if (st == TL_OK) st = tl_writer_open(sink, format, s, &wo, &w, e);
    for (int k = from; st == TL_OK && k < to; k++) st = tl_writer_write(w, bs[k], e);
    if (st == TL_OK) st = tl_writer_finish(w, e);
    if (st == TL_OK) st = tl_sink_commit(sink, e);
    tl_writer_free(w);
    tl_sink_close(sink);
    return st;
}

/* Write batches [from, to) with format to path and commit. */
static TlStatus write_all(const char *path, const char *format, int from, int to,
                          TlError *e)
{
    return write_set(path, format, &schema, batches, from, to, e);
}

/* Run fn(arg) in a child with a pool of `threads`; its exit status. */
static int in_child(int threads, int (*fn)(void *), void *arg)
{
    int status = -1;
    pid_t pid;
    fflush(NULL);
    pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int rc;
        tl_pool_configure(threads);
        rc = tl_pool_threads() == threads ? fn(arg) : 90;
        tl_pool_shutdown();
        fflush(NULL);
        exit(rc);
    }
    if (waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---------------------------------------------------------------- tests */

typedef struct WriteJob {
    const char *format;
    char path[300];
    char err_path[300];
} WriteJob;

static int child_write(void *arg)
{
    WriteJob *j = arg;
    TlError e = {0};
    if (!freopen(j->err_path, "w", stderr)) return 91;
    if (write_all(j->path, j->format, 0, n_batches, &e) != TL_OK) {
        fprintf(stdout, "write failed: %s\n", e.msg);
        return 1;
    }
    return 0;
}

/* CSV and NDJSON bytes (and NDJSON's warnings) for 1, 2, 4 and 7 threads:
 * CSV equals the naive reference, NDJSON is the same for all. */
TL_TEST(test_same_bytes_every_thread_count)
{
    static const int threads[] = {1, 2, 4, 7};
    Str ref = csv_reference();
    char *nd1 = NULL, *warn1 = NULL;
    size_t nd1_len = 0, warn1_len = 0;
    char want_warn[256];
    snprintf(want_warn, sizeof want_warn,
             "tally: warning: %lld inf/nan values written as null (JSON cannot hold them)\n"
             "tally: warning: %lld strings held invalid UTF-8, replaced with U+FFFD\n",
             (long long)n_nonfinite, (long long)n_bad_utf8);
    CHECK(n_nonfinite > 1 && n_bad_utf8 > 1);
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        WriteJob j = {"csv", "", ""};
        snprintf(j.path, sizeof j.path, "%s/out_%d.csv", dir, threads[t]);
        snprintf(j.err_path, sizeof j.err_path, "%s/err_%d.csv.txt", dir, threads[t]);
        CHECK_EQ_INT(in_child(threads[t], child_write, &j), 0);
        CHECK(file_equals(j.path, ref.p, ref.len));

        j.format = "ndjson";
        snprintf(j.path, sizeof j.path, "%s/out_%d.ndjson", dir, threads[t]);
        snprintf(j.err_path, sizeof j.err_path, "%s/err_%d.ndjson.txt", dir, threads[t]);
        CHECK_EQ_INT(in_child(threads[t], child_write, &j), 0);
        if (t == 0) {
            nd1 = read_file(j.path, &nd1_len);
            warn1 = read_file(j.err_path, &warn1_len);
            CHECK(nd1 && nd1_len > ref.len);
            CHECK_EQ_STR(warn1, want_warn);
        } else {
            CHECK(nd1 && file_equals(j.path, nd1, nd1_len));
            CHECK(warn1 && file_equals(j.err_path, warn1, warn1_len));
        }
    }
    free(nd1);
    free(warn1);
    free(ref.p);
    CHECK_EQ_INT(tmp_files(), 0);
}

/* Each batch written alone, at each thread count, matches the same slice of
 * the reference (tiny, empty and big batches each first in line). */
static int child_each_batch(void *arg)
{
    Str *ref = arg;
    size_t at = 0, len;
    size_t header = (size_t)(memchr(ref->p, '\n', ref->len) - (void *)ref->p) + 1;
    char path[300];
    snprintf(path, sizeof path, "%s/each.csv", dir);
    at = header;
    for (int k = 0; k < n_batches; k++) {
        TlError e = {0};
        char *got;
        if (write_all(path, "csv", k, k + 1, &e) != TL_OK) return 1;
        got = read_file(path, &len);
        if (!got || len < header || memcmp(got, ref->p, header) != 0 ||
            at + len - header > ref->len || memcmp(got + header, ref->p + at, len - header) != 0) {
            free(got);
            return 10 + k;
        }
        at += len - header;
        free(got);
    }
    return at == ref->len ? 0 : 2;
}

TL_TEST(test_each_batch_alone)
{
    Str ref = csv_reference();
    CHECK_EQ_INT(in_child(1, child_each_batch, &ref), 0);
    CHECK_EQ_INT(in_child(3, child_each_batch, &ref), 0);
    free(ref.p);
}

/* A small output starts no worker; a big one does (proof that the pool
 * path runs at all). */
static int child_threads(void *arg)
{
    char path[300];
    TlError e = {0};
    (void)arg;
    int base = threads_running(); /* 1, or more under a sanitizer */
    snprintf(path, sizeof path, "%s/small.csv", dir);
    if (base < 1) return 3;
    if (write_all(path, "csv", 0, 1, &e) != TL_OK) return 1; /* 5 rows */
    if (threads_running() != base) return 4;
    if (write_all(path, "ndjson", 3, 4, &e) != TL_OK) return 1; /* 1 row */
    if (threads_running() != base) return 5;
    if (write_all(path, "csv", 2, 3, &e) != TL_OK) return 1; /* 70000 rows */
    if (threads_running() < base + 3) return 6; /* the 3 workers */
    return 0;
}

TL_TEST(test_small_output_spawns_nothing)
{
    CHECK_EQ_INT(in_child(4, child_threads, NULL), 0);
}

/* The sink fails midway (RLIMIT_FSIZE: write returns EFBIG) while slices
 * are in flight: an I/O error naming the file, the same error again on
 * every later call, no output file, no temporary file left, no crash or
 * leak under ASan. */
typedef struct FailJob {
    rlim_t limit;
    const char *format;
} FailJob;

static int child_sink_fail(void *arg)
{
    const FailJob *j = arg;
    struct rlimit rl = {j->limit, j->limit};
    char path[300];
    TlSink *sink = NULL;
    TlWriter *w = NULL;
    TlWriteOptions wo = {.delimiter = ',', .header = true};
    TlError e = {0}, e2 = {0};
    TlStatus st;
    int k, rc = 0;
    snprintf(path, sizeof path, "%s/fail.%s", dir, j->format);
    signal(SIGXFSZ, SIG_IGN);
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) return 92;
    st = tl_sink_open(NULL, path, &sink, &e);
    if (st == TL_OK) st = tl_writer_open(sink, j->format, &schema, &wo, &w, &e);
    if (st != TL_OK) return 93;
    for (k = 0; st == TL_OK && k < n_batches; k++) st = tl_writer_write(w, batches[k], &e);
    if (st == TL_OK) st = tl_writer_finish(w, &e);
    if (st != TL_ERR_IO || !strstr(e.msg, "fail.") || !strstr(e.msg, "File too large")) {
        fprintf(stdout, "status %d: %s\n", st, e.msg);
        rc = 1;
    }
    /* sticky: the same error again, and finish fails too */
    if (k < n_batches && tl_writer_write(w, batches[k], &e2) != TL_ERR_IO) rc = 2;
    if (tl_writer_finish(w, &e2) != TL_ERR_IO || strcmp(e2.msg, e.msg) != 0) rc = 3;
    tl_writer_free(w);
    tl_sink_close(sink);
    if (access(path, F_OK) == 0) rc = 4;
    return rc;
}

TL_TEST(test_sink_failure_midway)
{
    static const rlim_t limits[] = {1000, 70000, 300000, 1500000, 4000000};
    static const int threads[] = {1, 2, 4};
    for (size_t l = 0; l < sizeof limits / sizeof limits[0]; l++)
        for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
            FailJob j = {limits[l], l % 2 ? "ndjson" : "csv"};
            CHECK_EQ_INT(in_child(threads[t], child_sink_fail, &j), 0);
        }
    CHECK_EQ_INT(tmp_files(), 0);
}

/* Out of memory at each allocation of a parallel write (task buffers grow on
 * worker threads, so which call fails varies): every run either succeeds
 * with the bytes of a first, clean run or fails with TL_ERR_OOM and leaves
 * no file.  A narrow set of batches (5, 70000, 3, 66000 rows: slices in
 * flight behind an inline one, tiny ones queued behind) keeps it quick. */
static int child_oom(void *arg)
{
    char path[300];
    uint64_t before, calls;
    TlError e = {0};
    int failures = 0;
    size_t ref_len;
    char *ref;
    (void)arg;
    snprintf(path, sizeof path, "%s/oom_%d.csv", dir, tl_pool_threads());
    before = tl_alloc_count();
    if (write_set(path, "csv", &schema2, batches2, 0, 4, &e) != TL_OK) return 1;
    calls = tl_alloc_count() - before;
    ref = read_file(path, &ref_len);
    if (!ref) return 6;
    for (uint64_t k = 1; k <= calls + 5; k++) {
        TlStatus st;
        unlink(path);
        tl_alloc_fail_at(k);
        st = write_set(path, "csv", &schema2, batches2, 0, 4, &e);
        tl_alloc_fail_at(0);
        if (st == TL_OK) {
            size_t len;
            char *got = read_file(path, &len);
            bool same = got && len == ref_len && memcmp(got, ref, len) == 0;
            free(got);
            if (!same) return 2;
        } else {
            failures++;
            if (st != TL_ERR_OOM) {
                fprintf(stdout, "fail at %llu: status %d: %s\n", (unsigned long long)k, st,
                        e.msg);
                return 3;
            }
            if (access(path, F_OK) == 0) return 4;
        }
    }
    free(ref);
    return failures > 0 ? 0 : 5;
}

TL_TEST(test_oom_anywhere)
{
    char a[300], b[300];
    size_t la, lb;
    char *pa, *pb;
    CHECK_EQ_INT(in_child(1, child_oom, NULL), 0);
    CHECK_EQ_INT(in_child(4, child_oom, NULL), 0);
    snprintf(a, sizeof a, "%s/oom_1.csv", dir);
    snprintf(b, sizeof b, "%s/oom_4.csv", dir);
    pa = read_file(a, &la);
    pb = read_file(b, &lb);
    CHECK(pa && pb && la == lb && memcmp(pa, pb, la) == 0);
    free(pa);
    free(pb);
}

int main(void)
{
    static const char *const names[N_COLS] = {"id", "x,f", "s\"q", "d", "t", "b", "n"};
    static const TlType types[N_COLS] = {TL_TINT64, TL_TFLOAT64, TL_TSTRING, TL_TDATE,
                                         TL_TTIMESTAMP, TL_TBOOL, TL_TNULL};
    snprintf(dir, sizeof dir, "/tmp/tl_write_parallel_%d", (int)getpid());
    mkdir(dir, 0700);
    static const int64_t sizes2[4] = {5, 70000, 3, 66000};
    for (int c = 0; c < N_COLS; c++) tl_schema_add(&schema, names[c], types[c], &err);
    tl_schema_add(&schema2, "id", TL_TINT64, &err);
    tl_schema_add(&schema2, "s", TL_TSTRING, &err);
    for (int k = 0; k < 4; k++) {
        batches2[k] = tl_batch_new(&schema2, 2, sizes2[k]);
        if (!batches2[k]) return 1;
        batches2[k]->cols[0] = make_col(0, sizes2[k]);
        batches2[k]->cols[1] = make_col(2, sizes2[k]);
    }
    n_nonfinite = n_bad_utf8 = 0;
    build_batches();
    CHECK_EQ_INT(n_batches, (int)(sizeof sizes / sizeof sizes[0]));
    TL_RUN(test_same_bytes_every_thread_count);
    TL_RUN(test_each_batch_alone);
    TL_RUN(test_small_output_spawns_nothing);
    TL_RUN(test_sink_failure_midway);
    TL_RUN(test_oom_anywhere);
    for (int k = 0; k < n_batches; k++) tl_batch_free(batches[k]);
    for (int k = 0; k < 4; k++) tl_batch_free(batches2[k]);
    tl_schema_free(&schema);
    tl_schema_free(&schema2);
    {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", dir);
    }
    return tl_test_summary(__FILE__);
}
