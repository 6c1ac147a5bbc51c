/*
 * fuzz_gzip.c -- libFuzzer target for the gzip layer (formats/compress/compress.c).
 *
 * Two invariants per input:
 *   1. Decompressing the input as gzip ends with TL_OK or TL_ERR_DATA (a
 *      message naming the input and "at byte"), never a crash; TL_ERR_OOM
 *      only if an allocation really failed.
 *   2. Compressing the input (level from its first byte) and decompressing
 *      the result gives the input back, byte for byte.
 */
#include "fuzz_compress.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_decompress_check(TL_COMP_GZIP, data, size);
    fuzz_round_trip(TL_COMP_GZIP, size ? 1 + data[0] % 9 : 6, data, size);
    return 0;
}
