/*
 * input_impl.h -- what a run keeps of its inputs (TlInputs, input.h), for
 * the files that fill it: input.c (standard input), compress/compress.c
 * (the last decompressed file, the count of bytes held) and
 * compress/stream.c (the run's streams).
 */
#ifndef TL_INPUT_IMPL_H
#define TL_INPUT_IMPL_H

#include "input.h"

#include <pthread.h>

struct Stream;
/* See input.h. */
struct TlInputs {
    TlBuf *stdin_buf;          /* standard input, or NULL (input.c) */
    struct {                   /* the last decompressed file (compress/compress.c) */
        char *path;
        size_t raw_size;
        uint64_t raw_hash;
        TlBuf *data;
    } cache;
    int64_t held, held_peak;   /* atomic: decompressed bytes in memory */
    pthread_mutex_t streams_mu;
    struct Stream *streams;    /* the run's streams (compress/stream.c) */
};

#endif
