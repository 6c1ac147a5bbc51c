/*
 * fuzz_compress.h -- what fuzz_gzip.c and fuzz_zstd.c share: the two
 * invariants of the compression layer (see those files).  Header-only so
 * each target stays one translation unit (Makefile: fuzz_*.c).
 */
#ifndef FUZZ_COMPRESS_H
#define FUZZ_COMPRESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_decompressBound */
#include <zstd.h>

#include "../../formats/compress.h"

#define FUZZ_MAX_OUT ((unsigned long long)256 << 20)

static void fuzz_fail(const char *what, const char *msg)
{
    fprintf(stderr, "fuzz_compress: %s: %s\n", what, msg);
    abort();
}

/* Invariant 1: a clean status and, on error, a message naming the input. */
static void fuzz_decompress_check(TlCompression c, const uint8_t *data, size_t size)
{
    TlError err = {0};
    TlBuf *out = NULL;
    if (c == TL_COMP_ZSTD) {
        unsigned long long bound = ZSTD_decompressBound(data, size);
        if (bound != ZSTD_CONTENTSIZE_ERROR && bound > FUZZ_MAX_OUT) return;
    }
    TlStatus st = tl_decompress(NULL, c, "fuzz.bin", data, size, &out, &err);
    if (st == TL_OK) {
        if (!out) fuzz_fail("decompress", "TL_OK without a buffer");
    } else if (st == TL_ERR_DATA) {
        if (out) fuzz_fail("decompress", "an error with a buffer");
        if (strncmp(err.msg, "\"fuzz.bin\": ", 12) != 0 || !strstr(err.msg, "at byte"))
            fuzz_fail("decompress: message does not name the input and offset", err.msg);
    } else if (st != TL_ERR_OOM) {
        fuzz_fail("decompress: unexpected status", err.msg);
    }
    tl_buf_release(out);
}

typedef struct FuzzBytes {
    uint8_t *p;
    size_t n, cap;
} FuzzBytes;

static TlStatus fuzz_emit(void *ctx, const uint8_t *d, size_t n, TlError *err)
{
    FuzzBytes *b = ctx;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n) cap *= 2;
        uint8_t *g = realloc(b->p, cap);
        if (!g) return tl_error_oom(err);
        b->p = g;
        b->cap = cap;
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
    return TL_OK;
}

/* Invariant 2: compress (in two writes) then decompress gives the input. */
static void fuzz_round_trip(TlCompression c, int level, const uint8_t *data, size_t size)
{
    TlError err = {0};
    TlCompressor *z = NULL;
    FuzzBytes b = {0};
    TlBuf *out = NULL;
    size_t half = size / 2;
    if (tl_compressor_new(c, level, &z, &err) != TL_OK) fuzz_fail("compressor", err.msg);
    if (tl_compressor_write(z, data, half, false, fuzz_emit, &b, &err) != TL_OK ||
        tl_compressor_write(z, data + half, size - half, true, fuzz_emit, &b, &err) != TL_OK)
        fuzz_fail("compress", err.msg);
    tl_compressor_free(z);
    if (tl_decompress(NULL, c, "round-trip", b.p, b.n, &out, &err) != TL_OK)
        fuzz_fail("round trip", err.msg);
    if (out->size != size || (size && memcmp(out->data, data, size) != 0))
        fuzz_fail("round trip", "the bytes differ");
    tl_buf_release(out);
    free(b.p);
}

#endif
