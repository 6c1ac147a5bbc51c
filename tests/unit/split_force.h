/*
 * split_force.h -- for the readers' morsel tests: set the tuning switches
 * TALLY_TEST_CSV_MORSEL / TALLY_TEST_NDJSON_MORSEL (lib/core/ctx.h) that
 * readers opened afterwards without a run context read: records per
 * morsel and in the inference batch (0: the batch size) and a fixed
 * morsel target in bytes (0: the default, growing).  0 and 0 unsets them.
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

#endif
