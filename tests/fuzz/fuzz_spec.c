/*
 * fuzz_spec.c -- libFuzzer target for the JSON pipeline reader.
 *
 * Input: any bytes, written to a temporary file and read with
 * tally_spec_from_json.  Invariants: it returns 0 or fills an error whose
 * exit code is 2 (a bad pipeline file is a usage error) with a non-empty
 * message; a returned spec frees cleanly (ASan/LSan check).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/tally.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[] = "/tmp/tally-fuzz-spec-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return 0;
    if (write(fd, data, size) != (ssize_t)size) { close(fd); unlink(path); return 0; }
    close(fd);
    TallySpec spec;
    TallyError err;
    memset(&spec, 0, sizeof spec);
    memset(&err, 0, sizeof err);
    int rc = tally_spec_from_json(path, &spec, &err);
    unlink(path);
    if (rc != 0 && (err.exit_code != 2 || err.message[0] == 0)) {
        fprintf(stderr, "bad error: rc=%d exit=%d msg=%s\n", rc, err.exit_code, err.message);
        abort();
    }
    tally_spec_free(&spec);
    return 0;
}
