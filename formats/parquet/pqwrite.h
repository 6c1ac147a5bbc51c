/*
 * pqwrite.h -- what the writer's files of formats/parquet/ share.
 *
 *   thrift_write.c  the compact protocol, written (PqTw)
 *   encode.c        RLE/bit-packed runs, PLAIN values, dictionaries
 *   compress_page.c a page's bytes compressed by the chosen codec
 *   chunk_write.c   one column chunk of a row group: levels, dictionary or
 *                   PLAIN, pages, statistics -> bytes and its metadata
 *   footer_write.c  FileMetaData and page headers as Thrift
 *   writer.c        the TlWriter: row groups cut at a fixed row count,
 *                   their columns encoded on the pool, written in order
 *
 * The mapping (man/tally.1, "Parquet output"): every column is OPTIONAL
 * (nulls are definition levels 0), int64 -> INT64, float64 -> DOUBLE,
 * bool -> BOOLEAN, string -> BYTE_ARRAY (STRING), date -> INT32 (DATE),
 * timestamp -> INT64 (TIMESTAMP(MICROS, isAdjustedToUTC false)), null (a
 * column of no value) -> INT32 (UNKNOWN).
 */
#ifndef TL_PQ_PQWRITE_H
#define TL_PQ_PQWRITE_H

#include "parquet.h"

/* --------------------------------------------------------------- thrift */

#define PQ_TW_MAX_DEPTH 8

/* A growing buffer of compact-protocol bytes.  Writes never fail one by
 * one: an allocation failure sets oom and later writes do nothing, so a
 * caller checks once, at the end. */
typedef struct PqTw {
    uint8_t *p;
    size_t len, cap;
    bool oom;
    int depth;
    int16_t last[PQ_TW_MAX_DEPTH]; /* the last field id of each open struct */
} PqTw;

void pq_tw_init(PqTw *w);
void pq_tw_free(PqTw *w);
/* Raw bytes (page data after a header, the magic). */
void pq_tw_raw(PqTw *w, const void *p, size_t n);
/* Open a struct: the outermost, or a list element (no field header). */
void pq_tw_begin(PqTw *w);
/* Close the open struct (its stop byte). */
void pq_tw_end(PqTw *w);
/* Fields of the open struct, in increasing id order. */
void pq_tw_struct(PqTw *w, int id);       /* then fields, then pq_tw_end */
void pq_tw_i16(PqTw *w, int id, int16_t v);
void pq_tw_i32(PqTw *w, int id, int32_t v);
void pq_tw_i64(PqTw *w, int id, int64_t v);
void pq_tw_bool(PqTw *w, int id, bool v);
void pq_tw_binary(PqTw *w, int id, const void *p, size_t n);
/* A list field of n elements of wire type elem, then the elements: */
void pq_tw_list(PqTw *w, int id, int elem, size_t n);
void pq_tw_elem_i32(PqTw *w, int32_t v);
void pq_tw_elem_binary(PqTw *w, const void *p, size_t n);

/* --------------------------------------------------------------- encode */

/* A growing byte buffer with the same sticky-failure rule as PqTw. */
typedef struct PqBytes {
    uint8_t *p;
    size_t len, cap;
    bool oom;
} PqBytes;

bool pq_bytes_reserve(PqBytes *b, size_t more);
void pq_bytes_put(PqBytes *b, const void *p, size_t n);
void pq_bytes_free(PqBytes *b);

/* values[0, n) (each < 2^width) as RLE/bit-packed hybrid runs onto out. */
void pq_rle_encode(PqBytes *out, const uint32_t *values, int64_t n, int width);

/* A string value the chunk encoder holds: bytes that live in the batch. */
typedef struct PqVal {
    const uint8_t *p;
    uint32_t n;
} PqVal;

/* The distinct values of a column chunk in first-seen order, and each
 * value's index among them.  phys: PQ_INT32, PQ_INT64, PQ_DOUBLE (as
 * 8-byte bit patterns, so -0.0 and every NaN stay what they were) or
 * PQ_BYTE_ARRAY.  Gives up (false, *full true) once the dictionary's
 * PLAIN bytes pass max_bytes or nearly every value is distinct (encode.c);
 * false with *full false is out of memory. */
typedef struct PqDict {
    int phys;
    int64_t n;               /* distinct values */
    size_t plain_bytes;      /* their PLAIN encoding's size */
    int64_t *fixed;          /* INT32 / INT64 / DOUBLE: the values (bits) */
    PqVal *strs;             /* BYTE_ARRAY */
    uint64_t *hashes;        /* per value */
    uint64_t *slots;         /* open addressing (encode.c); 0 empty */
    uint64_t mask;
} PqDict;

/* How often the dictionary build looks at how many values were distinct. */
#define PQ_DICT_PROBE 16384

bool pq_dict_build(PqDict *d, int phys, const void *vals, int64_t n, size_t max_bytes,
                   uint32_t *idx, bool *full);
void pq_dict_free(PqDict *d);

/* ---------------------------------------------------------------- pages */

/* One thread's compression state for codec (PQ_CODEC_*) at level (0:
 * the codec's default).  NULL on OOM. */
typedef struct PqCctx PqCctx;
PqCctx *pq_cctx_new(int codec, int level);
void pq_cctx_free(PqCctx *c); /* NULL-safe */
/* Compress src[0, n) onto out.  false on OOM or a library failure. */
bool pq_compress(PqCctx *c, const uint8_t *src, size_t n, PqBytes *out);

/* ---------------------------------------------------------------- chunk */

/* One column chunk's bytes and what the footer says of it.  Offsets are
 * relative to the chunk's first byte (writer.c adds where it landed). */
typedef struct PqChunkOut {
    PqBytes bytes;           /* dictionary page, then data pages */
    int phys;
    int64_t num_values;
    int64_t uncompressed, compressed;  /* headers included */
    int64_t dict_offset;     /* -1: no dictionary page */
    int64_t data_offset;
    bool dict;               /* RLE_DICTIONARY data pages */
    bool plain;              /* PLAIN data pages */
    int64_t null_count;
    bool has_minmax;
    uint8_t *min, *max;      /* PLAIN bytes of the statistics (owned) */
    uint32_t min_len, max_len;
    char why[160];           /* a failure other than memory */
} PqChunkOut;

typedef struct PqChunkIn {
    TlType type;
    TlArray *const *parts;   /* the row group's pieces of the column */
    int n_parts;
    int64_t rows;
    PqCctx *cctx;
} PqChunkIn;

/* Encode a chunk into *out (zeroed first).  TL_ERR_OOM, or TL_ERR_DATA
 * with out->why (a page Parquet's 32-bit sizes cannot hold, a codec that
 * failed). */
TlStatus pq_chunk_encode(const PqChunkIn *in, PqChunkOut *out);
void pq_chunk_out_free(PqChunkOut *c);
/* The physical type tally writes for t. */
int pq_write_phys(TlType t);

/* --------------------------------------------------------------- footer */

/* A data page's or dictionary page's header (footer_write.c). */
void pq_page_header_put(PqTw *w, int type, size_t raw, size_t comp, int64_t num_values,
                        int encoding);

/* What the footer says of one written row group. */
typedef struct PqRgOut {
    int64_t rows, offset, uncompressed, compressed;
    PqChunkOut *cols;        /* n_cols, bytes already written and freed */
    int64_t *col_offset;     /* where each chunk starts in the file */
} PqRgOut;

/* The footer: FileMetaData for columns of schema and the row groups,
 * every chunk compressed by codec. */
void pq_footer_put(PqTw *w, const TlSchema *schema, const PqRgOut *rgs, int n_rgs,
                   int64_t rows, int codec, const char *created_by);

#endif
