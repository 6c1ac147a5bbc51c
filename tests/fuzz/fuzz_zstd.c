/*
 * fuzz_zstd.c -- libFuzzer target for the zstd layer (formats/compress/compress.c).
 *
 * Two invariants per input:
 *   1. Decompressing the input as zstd ends with TL_OK or TL_ERR_DATA (a
 *      message naming the input and "at byte"), never a crash.  Inputs
 *      whose frames announce more than 256 MiB are skipped (memory limit of
 *      the fuzzer, not a property of tally).
 *   2. Compressing the input (level from its first byte, 1-9) and
 *      decompressing the result gives the input back, byte for byte.
 */
#include "fuzz_compress.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_decompress_check(TL_COMP_ZSTD, data, size);
    fuzz_round_trip(TL_COMP_ZSTD, size ? 1 + data[0] % 9 : 3, data, size);
    return 0;
}
