/*
 * meta.h -- Parquet's metadata as C structs: the footer (FileMetaData with
 * its schema, row groups, column chunks, column metadata and statistics)
 * and page headers (data page v1 and v2, dictionary page), decoded from
 * the compact protocol by meta.c.
 *
 * Strings and statistics point into the bytes they were decoded from (the
 * footer stays mapped for the reader's life), so decoding copies nothing
 * but the arrays of structs.  Optional fields that are absent read as -1
 * (enums, offsets) or as has_* false.  Only what the reader uses is kept;
 * every other field is skipped, checked like the rest.
 */
#ifndef TL_PQ_META_H
#define TL_PQ_META_H

#include "thrift.h"

/* Physical types (parquet.thrift: Type). */
enum {
    PQ_BOOLEAN = 0, PQ_INT32, PQ_INT64, PQ_INT96, PQ_FLOAT, PQ_DOUBLE, PQ_BYTE_ARRAY,
    PQ_FIXED_LEN_BYTE_ARRAY
};

/* ConvertedType (the legacy annotation). */
enum {
    PQ_CT_UTF8 = 0, PQ_CT_MAP, PQ_CT_MAP_KEY_VALUE, PQ_CT_LIST, PQ_CT_ENUM, PQ_CT_DECIMAL,
    PQ_CT_DATE, PQ_CT_TIME_MILLIS, PQ_CT_TIME_MICROS, PQ_CT_TIMESTAMP_MILLIS,
    PQ_CT_TIMESTAMP_MICROS, PQ_CT_UINT_8, PQ_CT_UINT_16, PQ_CT_UINT_32, PQ_CT_UINT_64,
    PQ_CT_INT_8, PQ_CT_INT_16, PQ_CT_INT_32, PQ_CT_INT_64, PQ_CT_JSON, PQ_CT_BSON,
    PQ_CT_INTERVAL
};

/* LogicalType: the union's field ids. */
enum {
    PQ_LT_NONE = 0, PQ_LT_STRING = 1, PQ_LT_MAP, PQ_LT_LIST, PQ_LT_ENUM, PQ_LT_DECIMAL,
    PQ_LT_DATE, PQ_LT_TIME, PQ_LT_TIMESTAMP, PQ_LT_INTEGER = 10, PQ_LT_UNKNOWN, PQ_LT_JSON,
    PQ_LT_BSON, PQ_LT_UUID, PQ_LT_FLOAT16, PQ_LT_VARIANT, PQ_LT_GEOMETRY, PQ_LT_GEOGRAPHY
};

enum { PQ_UNIT_MILLIS = 1, PQ_UNIT_MICROS, PQ_UNIT_NANOS };

enum { PQ_REQUIRED = 0, PQ_OPTIONAL, PQ_REPEATED };

/* Encodings. */
enum {
    PQ_ENC_PLAIN = 0, PQ_ENC_PLAIN_DICTIONARY = 2, PQ_ENC_RLE, PQ_ENC_BIT_PACKED,
    PQ_ENC_DELTA_BINARY_PACKED, PQ_ENC_DELTA_LENGTH_BYTE_ARRAY, PQ_ENC_DELTA_BYTE_ARRAY,
    PQ_ENC_RLE_DICTIONARY, PQ_ENC_BYTE_STREAM_SPLIT
};

/* Codecs. */
enum {
    PQ_CODEC_UNCOMPRESSED = 0, PQ_CODEC_SNAPPY, PQ_CODEC_GZIP, PQ_CODEC_LZO, PQ_CODEC_BROTLI,
    PQ_CODEC_LZ4, PQ_CODEC_ZSTD, PQ_CODEC_LZ4_RAW
};

/* Page types. */
enum { PQ_PAGE_DATA = 0, PQ_PAGE_INDEX, PQ_PAGE_DICTIONARY, PQ_PAGE_DATA_V2 };

typedef struct PqStr {
    const uint8_t *p;
    uint32_t n;
} PqStr;

typedef struct PqStats {
    PqStr min, max;             /* min_value/max_value, else legacy min/max */
    bool has_min, has_max, legacy; /* legacy: only the old signed-order fields */
    bool has_null_count;
    int64_t null_count;
} PqStats;

typedef struct PqLogical {
    int kind;                   /* PQ_LT_*, PQ_LT_NONE when absent */
    int32_t scale, precision;   /* DECIMAL */
    int unit;                   /* TIME, TIMESTAMP: PQ_UNIT_* */
    bool utc;                   /* TIME, TIMESTAMP: isAdjustedToUTC */
    int bit_width;              /* INTEGER */
    bool is_signed;             /* INTEGER */
} PqLogical;

typedef struct PqSchemaElem {
    PqStr name;
    int type;                   /* PQ_BOOLEAN.., -1: a group */
    int32_t type_length;        /* -1 when absent */
    int repetition;             /* PQ_REQUIRED.., -1 when absent */
    int32_t num_children;       /* -1 when absent */
    int converted;              /* PQ_CT_*, -1 when absent */
    int32_t scale, precision;   /* -1 when absent */
    PqLogical logical;
} PqSchemaElem;

typedef struct PqColumnMeta {
    int type;                   /* physical type */
    int codec;
    int64_t num_values;
    int64_t total_uncompressed_size, total_compressed_size;
    int64_t data_page_offset;
    int64_t dictionary_page_offset; /* -1 when absent */
    uint32_t encodings;         /* bit e: encoding e is used (e < 32) */
    PqStats stats;
    bool has_stats;
} PqColumnMeta;

typedef struct PqColumnChunk {
    bool has_file_path;         /* data in another file: not supported */
    bool has_meta;
    bool encrypted;             /* crypto_metadata or encrypted_column_metadata */
    PqColumnMeta meta;
} PqColumnChunk;

typedef struct PqRowGroup {
    PqColumnChunk *cols;        /* n_cols */
    int32_t n_cols;
    int64_t num_rows;
    int64_t total_byte_size;
} PqRowGroup;

typedef struct PqFileMeta {
    int32_t version;
    PqSchemaElem *schema;       /* n_schema, depth first; [0] is the root */
    int32_t n_schema;
    int64_t num_rows;
    PqRowGroup *rgs;            /* n_rgs */
    int32_t n_rgs;
    PqStr created_by;
    bool encrypted;             /* encryption_algorithm present */
} PqFileMeta;

typedef struct PqPageHeader {
    int type;                   /* PQ_PAGE_* (other values: skipped) */
    int32_t uncompressed_size, compressed_size;
    bool has_crc;
    uint32_t crc;
    /* data pages (v1 and v2) and the dictionary page */
    int32_t num_values;
    int encoding;
    /* v1 */
    int def_encoding, rep_encoding;
    /* v2 */
    int32_t num_nulls, num_rows;
    int32_t def_bytes, rep_bytes;
    bool is_compressed;         /* default true */
} PqPageHeader;

/* Decode the footer bytes p[0, n), which lie at file offset off, into *m
 * (arrays allocated; free with pq_meta_free).  name: the file, escaped. */
TlStatus pq_meta_decode(const uint8_t *p, size_t n, uint64_t off, const char *name,
                        PqFileMeta *m, TlError *err);
void pq_meta_free(PqFileMeta *m); /* NULL-safe, leaves *m zeroed */

/* Decode a page header from t (which says where it is, for messages). */
TlStatus pq_page_header_decode(PqThrift *t, PqPageHeader *h);

#endif
