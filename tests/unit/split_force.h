/*
 * split_force.h -- for the readers' tests: set the tuning switches
 * (lib/core/ctx.h) that readers opened afterwards without a run context
 * read.  TALLY_TEST_CSV_MORSEL / TALLY_TEST_NDJSON_MORSEL: records per
 * morsel and in the inference batch (0: the batch size) and a fixed
 * morsel target in bytes (0: the default, growing); 0 and 0 unsets them.
 * TALLY_TEST_CSV_SCAN: how the CSV reader finds records.  Include after
 * formats/fmt_impl.h.
 */
#ifndef TL_SPLIT_FORCE_H
#define TL_SPLIT_FORCE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static inline void split_force(const char *name, int64_t rows, int64_t bytes)
{
    char v[64];
    if (rows <= 0 && bytes <= 0) {
        unsetenv(name);
        return;
    }
    snprintf(v, sizeof v, "%lld:%lld", (long long)(rows > 0 ? rows : 0),
             (long long)(bytes > 0 ? bytes : 0));
    setenv(name, v, 1);
}

static inline void tl_csv_split_force(int64_t rows, int64_t bytes)
{
    split_force("TALLY_TEST_CSV_MORSEL", rows, bytes);
}

static inline void tl_ndjson_split_force(int64_t rows, int64_t bytes)
{
    split_force("TALLY_TEST_NDJSON_MORSEL", rows, bytes);
}

/* Force how CSV readers opened afterwards find records (0 the general
 * tokenizer alone, 1/2/3 the fast one with scalar/SSE2/AVX2 scanning, -1
 * the automatic choice); returns the mode they use (tl_csv_scan_best). */
static inline int tl_csv_scan_mode(int force)
{
    char v[16];
    if (force < 0) {
        unsetenv("TALLY_TEST_CSV_SCAN");
    } else {
        snprintf(v, sizeof v, "%d", force);
        setenv("TALLY_TEST_CSV_SCAN", v, 1);
    }
    return tl_csv_scan_best(force);
}

#endif
