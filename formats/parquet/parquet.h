/*
 * parquet.h -- what the files of formats/parquet/ share.
 *
 *   thrift.c   the compact protocol (thrift.h)
 *   meta.c     footer and page headers -> C structs (meta.h)
 *   schema.c   the schema tree -> tally columns: names, types, levels
 *   codec.c    page decompression (snappy, gzip, zstd, lz4, brotli)
 *   rle.c      RLE/bit-packed hybrid runs and DELTA_BINARY_PACKED
 *   values.c   a page's values, encoding by encoding -> physical values
 *   convert.c  physical values -> tally values (annotations applied)
 *   column.c   one column chunk: pages, levels, nulls -> arrays
 *   reader.c   the TlReader: footer, projection, row groups -> batches
 *
 * A column is read a batch at a time: column.c walks the chunk's pages,
 * decodes the batch's definition levels, asks values.c for that many
 * non-null values in their physical form (PqPhys), has convert.c turn them
 * into the column's tally type straight into the batch's array, and spreads
 * them over the rows that are not null.
 */
#ifndef TL_PQ_PARQUET_H
#define TL_PQ_PARQUET_H

#include "../fmt_impl.h"
#include "meta.h"

/* How a physical value becomes a tally value (schema.c picks, convert.c
 * does). */
typedef enum PqConv {
    PQ_CV_NULL,      /* UNKNOWN annotation: every value null */
    PQ_CV_BOOL,
    PQ_CV_I32,       /* INT32, signed annotations -> int64 */
    PQ_CV_U32,       /* INT32 with an unsigned annotation -> int64 */
    PQ_CV_I64,
    PQ_CV_U64,       /* INT64 unsigned -> int64, an error above its range */
    PQ_CV_F32,
    PQ_CV_F64,
    PQ_CV_DATE,      /* INT32 days */
    PQ_CV_TS_MS,     /* INT64 timestamps -> microseconds */
    PQ_CV_TS_US,
    PQ_CV_TS_NS,     /* an error when the nanoseconds are not whole microseconds */
    PQ_CV_INT96,     /* legacy nanosecond timestamps, as TS_NS */
    PQ_CV_TIME_MS,   /* INT32 / INT64 times of day -> text */
    PQ_CV_TIME_US,
    PQ_CV_TIME_NS,
    PQ_CV_DEC_F64,   /* DECIMAL with precision <= 15 -> float64 */
    PQ_CV_DEC_TEXT,  /* wider DECIMAL -> its exact text */
    PQ_CV_BYTES,     /* BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY -> string */
    PQ_CV_UUID,      /* FIXED[16] UUID -> text */
    PQ_CV_F16,       /* FIXED[2] FLOAT16 -> float64 */
    PQ_CV_JSON,      /* a list, map or deep struct: its JSON text (nested.c) */
} PqConv;

/* A nested value's shape (schema.c builds it, nested.c walks it). */
typedef enum PqNodeKind { PQ_N_LEAF, PQ_N_STRUCT, PQ_N_LIST, PQ_N_MAP } PqNodeKind;

typedef struct PqNode {
    PqNodeKind kind;
    char *name;              /* a struct field's name (owned), else NULL */
    bool nullable;           /* may be null: present from definition level def */
    int def;
    int elem_def;            /* LIST, MAP: level from which it has elements */
    int rep;                 /* LIST, MAP: repetition level of its elements */
    struct PqNode **kids;    /* STRUCT: fields; LIST: element; MAP: key, value */
    int n_kids;
    int sub;                 /* LEAF: its index among the column's sub-leaves */
    int first_sub, n_subs;   /* the sub-leaves under this node */
} PqNode;

/* One column of the file as tally sees it: a primitive leaf, or a nested
 * column (conv PQ_CV_JSON) whose values come from the leaves under it. */
typedef struct PqLeaf {
    int elem;                /* schema element; -1: a group */
    int chunk;               /* its column chunk's index in every row group */
    int phys;                /* physical type */
    int32_t type_length;     /* FIXED_LEN_BYTE_ARRAY */
    int max_def, max_rep;
    TlType type;
    PqConv conv;
    int32_t scale, precision;
    bool time_utc;           /* a TIME adjusted to UTC: "+00" after it */
    bool json;               /* text annotated JSON (raw inside a nested value) */
    const char *unsupported; /* why it cannot be read yet, or NULL */
    /* PQ_CV_JSON */
    PqNode *node;            /* the value's shape (owned) */
    struct PqLeaf *subs;     /* the primitive leaves under it (owned) */
    int n_subs;
    int base_def;            /* below it, an ancestor struct is null */
} PqLeaf;

/* The file's columns (schema.c): leaves[i] is schema column i, named in
 * schema (names made unique as CSV headers are).  name: the file as given
 * (unescaped); quiet: no notes on standard error about renames.  Free the
 * leaves with pq_leaves_free. */
TlStatus pq_schema_build(const PqFileMeta *m, const char *name, bool quiet, PqLeaf **leaves,
                         int *n_leaves, int *n_chunks, TlSchema *schema, TlError *err);
void pq_leaves_free(PqLeaf *leaves, int n);
/* Human name of a leaf's physical type and annotation ("INT64", "BYTE_ARRAY
 * (STRING)"), for messages. */
const char *pq_phys_name(int phys);

/* ---------------------------------------------------------------- codecs */

typedef struct PqCodecs PqCodecs;
TlStatus pq_codecs_new(PqCodecs **out, TlError *err);
void pq_codecs_free(PqCodecs *c);
/* "SNAPPY", "GZIP", ...; "codec N" for an unknown one (in buf). */
const char *pq_codec_name(int codec, char *buf, size_t cap);
/* Decompress src[0, n) into exactly dst[0, dst_n).  TL_ERR_DATA with a
 * reason in why (a static or why_buf's text), TL_ERR_OOM. */
TlStatus pq_decompress(PqCodecs *c, int codec, const uint8_t *src, size_t n, uint8_t *dst,
                       size_t dst_n, char *why, size_t why_cap);

/* ------------------------------------------- RLE/bit-packed hybrid, delta */

typedef struct PqRle {
    const uint8_t *p, *end;
    int width;               /* bits per value, 0..32 */
    uint32_t rep_left;       /* values left in the current RLE run */
    uint32_t rep_value;
    uint64_t lit_left;       /* values left in the current bit-packed run */
    const uint8_t *lit;      /* that run's bytes */
    uint64_t lit_bit;        /* bit offset of its next value */
    const uint8_t *lit_end;
} PqRle;

void pq_rle_init(PqRle *r, const uint8_t *p, size_t n, int width);
/* The next n values into out; false (with why) when the runs end first or
 * are corrupt. */
bool pq_rle_next(PqRle *r, uint32_t *out, int64_t n, const char **why);
/* Bits needed for values up to max (levels' bit width). */
int pq_bit_width(uint32_t max);

typedef struct PqDelta {
    const uint8_t *p, *end;
    uint64_t block_size, n_mini, mini_size;
    uint64_t total, done;
    uint64_t last;           /* the previous value (wrapping arithmetic) */
    uint64_t min_delta;
    const uint8_t *widths;   /* the current block's miniblock bit widths */
    uint64_t mini;           /* index of the current miniblock in its block */
    const uint8_t *mini_data, *mini_end;
    int mini_width;
    uint64_t mini_pos;       /* values of the miniblock taken */
    bool in_block;
} PqDelta;

/* A DELTA_BINARY_PACKED stream at p[0, n): reads the header. */
bool pq_delta_init(PqDelta *d, const uint8_t *p, size_t n, const char **why);
/* The next n values (each the running sum, wrapped to 64 bits). */
bool pq_delta_next(PqDelta *d, int64_t *out, int64_t n, const char **why);
/* Where the stream ends once every value was read (pq_delta_next up to
 * total): the byte after its last miniblock. */
const uint8_t *pq_delta_end(const PqDelta *d);

/* --------------------------------------------------------------- values */

/* A run of physical values, as values.c decodes them. */
typedef struct PqPhys {
    int64_t n;
    int32_t *i32;            /* INT32 */
    int64_t *i64;            /* INT64 */
    float *f32;
    double *f64;
    uint8_t *b8;             /* BOOLEAN: 0 / 1 */
    PqStr *bytes;            /* BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY, INT96 */
} PqPhys;

/* Where converted values go: the batch's values at the run's first row,
 * and for strings the batch's data blocks. */
typedef struct PqOut {
    uint8_t *dst;            /* n values of the column's width */
    TlBuf **data;            /* string blocks the views point into */
    uint32_t n_data, cap_data;
    const TlBuf *page;       /* the buffer physical bytes lie in, if any */
    int page_idx;            /* its index in data, -1 until a view needs it */
    uint8_t *side;           /* text made here (escapes, decimals, times) */
    size_t side_len, side_cap;
    int side_idx;            /* the side block's index in data, -1 until used */
    char msg[200];           /* a conversion's error */
} PqOut;

/* Convert in (leaf's physical type) into o->dst as leaf->type values.
 * TL_ERR_DATA with o->msg, TL_ERR_OOM. */
TlStatus pq_convert(const PqLeaf *leaf, const PqPhys *in, PqOut *o);
/* Width of a leaf's values in a batch (bool: one byte, packed later). */
size_t pq_out_width(TlType t);
/* Make the side block a data block of the batch (frozen). */
TlStatus pq_out_finish(PqOut *o);
void pq_out_free(PqOut *o);
/* a, read as type `to`: int64 -> float64, anything -> string, null -> any
 * (hints of a run over several inputs, --schema).  NULL on OOM. */
TlArray *pq_widen(TlArray *a, TlType to);

/* ---------------------------------------------------------------- pages */

/* A page's value stream (values.c). */
typedef struct PqValues {
    int encoding;
    int phys;
    int32_t type_length;
    const uint8_t *p, *end;  /* the encoded values */
    const uint8_t *base;     /* BYTE_STREAM_SPLIT: the streams */
    int64_t bss_n, bss_i;    /* BYTE_STREAM_SPLIT: values in all, taken */
    uint64_t bool_bit;       /* PLAIN booleans: next bit */
    PqRle rle;               /* dictionary indices, RLE booleans */
    PqDelta delta;           /* DELTA_BINARY_PACKED; DLBA/DBA lengths */
    int32_t *lens, *prefix;  /* DLBA/DBA: lengths (owned), DBA prefixes */
    int64_t n_lens, lens_i;
    uint8_t *prev;           /* DBA: the previous value (owned) */
    size_t prev_len, prev_cap;
    uint8_t *made;           /* DBA: values made for the current run */
    size_t made_cap;
} PqValues;

/* Start the values of a data page: p[0, n) after the levels, encoding as
 * the page header says, n_values at most.  false with why. */
bool pq_values_init(PqValues *v, int encoding, int phys, int32_t type_length,
                    const uint8_t *p, size_t n, int64_t n_values, const char **why);
/* The next n values into ph (its arrays sized by the caller for n).
 * Dictionary indices instead go to idx.  false with why. */
bool pq_values_next(PqValues *v, int64_t n, PqPhys *ph, uint32_t *idx, const char **why);
void pq_values_free(PqValues *v);
/* Whether encoding is one the reader decodes for physical type phys. */
bool pq_encoding_ok(int encoding, int phys, bool dictionary_page);
const char *pq_encoding_name(int encoding, char *buf, size_t cap);

/* ---------------------------------------------------------------- column */

typedef struct PqCol PqCol;

/* Everything a column chunk reader needs to know about where it is. */
typedef struct PqChunkRef {
    const TlBuf *input;      /* the whole file */
    const char *name;        /* the file, escaped */
    const char *col_name;    /* the tally column's name */
    const PqLeaf *leaf;
    const PqColumnChunk *chunk;
    int rg;                  /* row group index */
    int64_t rows;            /* the row group's rows; nested: the chunk's values */
    bool nested;             /* a leaf under a nested column (pq_col_entries) */
    int64_t pad;             /* bytes a chunk may run past its size (old writers) */
    uint64_t data_end;       /* where the pages end: the footer's start */
    PqCodecs *codecs;
} PqChunkRef;

TlStatus pq_col_open(const PqChunkRef *ref, PqCol **out, TlError *err);
/* The next n rows of the column as one array (owned). */
TlStatus pq_col_read(PqCol *c, int64_t n, TlArray **out, TlError *err);
/* A leaf under a nested column: the next entries of its chunk, at most
 * max (within one page): each entry's repetition and definition levels
 * (valid until the next call), and the values of the entries at the leaf's
 * maximum definition level, in order (owned).  n = 0 at the chunk's end. */
typedef struct PqEntries {
    int64_t n;
    const uint32_t *rep, *def;
    TlArray *vals;
} PqEntries;
TlStatus pq_col_entries(PqCol *c, int64_t max, PqEntries *e, TlError *err);
/* Bytes of the file (page headers and pages) the column read since the
 * last call. */
int64_t pq_col_bytes(PqCol *c);
void pq_col_free(PqCol *c);

/* A nested column (nested.c): its leaves' chunks of one row group
 * (chunks: the row group's), read as JSON text a batch at a time. */
typedef struct PqNest PqNest;
TlStatus pq_nest_open(const PqChunkRef *ref, const PqColumnChunk *chunks, PqNest **out,
                      TlError *err);
/* The next rows values (JSON text, null where the value or a struct above
 * it is null), owned. */
TlStatus pq_nest_read(PqNest *n, int64_t rows, TlArray **out, TlError *err);
/* At the row group's end: no leaf may hold more entries. */
TlStatus pq_nest_end(PqNest *n, TlError *err);
int64_t pq_nest_bytes(PqNest *n);
void pq_nest_free(PqNest *n);

#endif
