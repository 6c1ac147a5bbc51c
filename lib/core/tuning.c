/*
 * tuning.c -- the run's tuning, read from the environment: the one place
 * of the library that calls getenv (scripts/check-globals holds it so).
 *
 * A run reads it once, at its start (lib/run/run.c), so a switch cannot
 * change in the middle of an algorithm, and a process that sets its
 * environment between runs (tests/support/matrix_run.c) gets each run's
 * own.  The parsing of each variable is the one its user had before it
 * moved here: a flag is on when the variable is set (any value, even
 * empty) unless noted.
 */
#include "core.h"
#include "ctx.h"
#include "text.h"

#include <stdlib.h>
#include <string.h>

/* TALLY_BATCH_ROWS as a number (at least 1, at most 2^30), else
 * TL_BATCH_ROWS. */
static int64_t read_batch_rows(void)
{
    const char *s = getenv("TALLY_BATCH_ROWS");
    int64_t n = TL_BATCH_ROWS;
    if (s && *s) {
        char *end;
        long long v = strtoll(s, &end, 10);
        if (*end == '\0') {
            if (v < 1) v = 1;
            if (v > ((int64_t)1 << 30)) v = (int64_t)1 << 30;
            n = v;
        }
    }
    return n;
}

static bool is_set(const char *name)
{
    return getenv(name) != NULL;
}

/* "0" -> 0, "1" -> 1 (or "2" -> 2 where two is given), anything else ->
 * dflt. */
static int level(const char *name, int max, int dflt)
{
    const char *s = getenv(name);
    if (!s) return dflt;
    for (int v = 0; v <= max; v++)
        if (s[0] == (char)('0' + v) && s[1] == '\0') return v;
    return dflt;
}

/* TALLY_TEST_SHRINK=MORSEL:BYTES; unset or malformed: never. */
static void read_shrink(TlTuning *t)
{
    const char *s = getenv("TALLY_TEST_SHRINK");
    char *end;
    long long k, n;
    t->shrink_morsel = -1;
    t->shrink_to = 0;
    if (!s || !*s) return;
    k = strtoll(s, &end, 10);
    if (*end != ':' || k < 0) return;
    n = strtoll(end + 1, &end, 10);
    if (*end != '\0' || n < 0) return;
    t->shrink_morsel = k;
    t->shrink_to = (uint64_t)n;
}

/* name=ROWS:BYTES, both at least 0; unset or malformed: 0 and 0. */
static void read_pair(const char *name, int64_t *rows, int64_t *bytes)
{
    const char *s = getenv(name);
    char *end;
    long long r, b;
    *rows = *bytes = 0;
    if (!s || !*s) return;
    r = strtoll(s, &end, 10);
    if (*end != ':' || r < 0) return;
    b = strtoll(end + 1, &end, 10);
    if (*end != '\0' || b < 0) return;
    *rows = r;
    *bytes = b;
}

/* TALLY_NOW: a timestamp (or date), a trailing Z allowed. */
static void read_now(TlTuning *t)
{
    const char *s = getenv("TALLY_NOW");
    size_t n;
    if (!s) return;
    n = strlen(s);
    if (n && (s[n - 1] == 'Z' || s[n - 1] == 'z')) n--;
    t->now_env = tl_parse_timestamp(s, n, &t->now_us) ? 1 : -1;
}

/* See ctx.h. */
void tl_tuning_read(TlTuning *t)
{
    const char *s;
    memset(t, 0, sizeof *t);
    t->batch_rows = read_batch_rows();
    t->no_late = is_set("TALLY_NO_LATE");
    t->no_guess = is_set("TALLY_NO_GUESS");
    t->agg_serial = is_set("TALLY_AGG_SERIAL");
    t->agg_radix_off = level("TALLY_AGG_RADIX", 0, -1) == 0;
    t->agg_pre = level("TALLY_AGG_PRE", 1, -1);
    t->group_no_runs = is_set("TALLY_GROUP_NO_RUNS");
    t->group_rows = is_set("TALLY_GROUP_ROWS");
    t->sort_serial = is_set("TALLY_SORT_SERIAL");
    t->sort_pack = level("TALLY_SORT_PACK", 2, 1);
    s = getenv("TALLY_JOIN_BUILD");
    t->join_build = !s ? 0 : strcmp(s, "left") == 0 ? 1 : -1;
    t->no_copy = is_set("TALLY_NO_COPY");
    t->no_stream = is_set("TALLY_NO_STREAM");
    s = getenv("TALLY_STREAM_STEP");
    t->stream_step = s && atol(s) > 0 ? (size_t)atol(s) : 0;
    t->no_recycle = is_set("TALLY_NO_RECYCLE");
    t->no_prefill = is_set("TALLY_NO_PREFILL");
    s = getenv("TALLY_NO_TMPFILE");
    t->no_tmpfile = s && *s;
    read_shrink(t);
    read_pair("TALLY_TEST_CSV_MORSEL", &t->csv_morsel_rows, &t->csv_morsel_bytes);
    read_pair("TALLY_TEST_NDJSON_MORSEL", &t->nd_morsel_rows, &t->nd_morsel_bytes);
    t->csv_scan = level("TALLY_TEST_CSV_SCAN", 3, -1);
    read_now(t);
    t->memory_limit = getenv("TALLY_MEMORY_LIMIT");
    t->tmpdir = getenv("TMPDIR");
    t->force_spill = level("TALLY_FORCE_SPILL", 1, 0) == 1;
}

/* See ctx.h. */
void tl_tuning_read_fault(uint64_t *fail_at, bool *fail_all)
{
    const char *s = getenv("TALLY_FAIL_ALLOC"), *all;
    *fail_at = 0;
    if (s && *s) {
        char *end;
        unsigned long long n = strtoull(s, &end, 10);
        if (*end == '\0' && n > 0) *fail_at = n;
    }
    all = getenv("TALLY_FAIL_ALLOC_ALL");
    *fail_all = all && all[0] == '1';
}

/* See ctx.h. */
const TlTuning *tl_ctx_tuning(const TlCtx *c, TlTuning *scratch)
{
    if (c) return &c->tuning;
    tl_tuning_read(scratch);
    return scratch;
}

/* See ctx.h. */
int64_t tl_ctx_batch_rows(const TlCtx *c)
{
    return c ? c->tuning.batch_rows : read_batch_rows();
}
