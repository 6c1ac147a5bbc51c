/*
 * thrift.h -- a bounded, validating reader of Thrift's compact protocol,
 * the encoding of Parquet's footer and page headers (parquet-format,
 * parquet.thrift).
 *
 * The caller walks a structure it knows: pq_th_field hands out each field's
 * id and wire type in turn, the caller reads the fields it wants with the
 * typed readers and passes the others to pq_th_skip.  Every read is
 * checked against the end of the buffer, so corrupt bytes give an error,
 * never a read past it:
 *
 *   - a varint longer than its type allows, a length or count past the
 *     bytes left (every element takes at least one byte, so a count larger
 *     than the bytes left cannot be right, and no allocation is ever sized
 *     by an unchecked count), a negative length or count;
 *   - a field id that does not grow within a struct (writers emit fields in
 *     id order; a repeat or a step back is corruption, and refusing it
 *     keeps a field from being read twice);
 *   - a wire type the field's declaration does not allow;
 *   - structs nested deeper than PQ_TH_MAX_DEPTH (Parquet's own structures
 *     nest 7 deep; skipping an unknown field recurses, so the bound keeps
 *     the stack small whatever the bytes say).
 *
 * Errors are TL_ERR_DATA: "FILE: corrupt Parquet WHAT: DETAIL (byte N)",
 * N the offset in the file; WHAT says which structure ("footer", "page
 * header (row group 2, column \"x\")").
 */
#ifndef TL_PQ_THRIFT_H
#define TL_PQ_THRIFT_H

#include "../../lib/core/core.h"

#define PQ_TH_MAX_DEPTH 32

/* Wire types of the compact protocol. */
enum {
    PQ_T_STOP = 0,
    PQ_T_TRUE = 1,   /* a bool field holding true; in a list: any bool */
    PQ_T_FALSE = 2,
    PQ_T_I8 = 3,
    PQ_T_I16 = 4,
    PQ_T_I32 = 5,
    PQ_T_I64 = 6,
    PQ_T_DOUBLE = 7,
    PQ_T_BINARY = 8,
    PQ_T_LIST = 9,
    PQ_T_SET = 10,
    PQ_T_MAP = 11,
    PQ_T_STRUCT = 12,
};

typedef struct PqThrift {
    const uint8_t *p, *end, *base;
    uint64_t base_off;   /* file offset of base */
    int depth;
    const char *name;    /* the file, escaped for messages */
    const char *what;    /* the structure being read, for messages */
    TlError *err;
} PqThrift;

/* One struct being read: its name (for messages), the last field id, and
 * the ids below 32 met so far (for the checks of required fields). */
typedef struct PqThStruct {
    const char *name;
    int last;
    uint32_t seen;
} PqThStruct;

/* Read the n bytes at p, which lie at file offset off. */
void pq_th_init(PqThrift *t, const uint8_t *p, size_t n, uint64_t off,
                const char *name, const char *what, TlError *err);
/* Bytes consumed so far. */
static inline size_t pq_th_used(const PqThrift *t) { return (size_t)(t->p - t->base); }
/* TL_ERR_DATA with the message above (DETAIL printf-formatted). */
TlStatus pq_th_fail(PqThrift *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Enter a struct (at most PQ_TH_MAX_DEPTH deep). */
TlStatus pq_th_begin(PqThrift *t, PqThStruct *s, const char *name);
/* The next field: *id and *type; *type PQ_T_STOP at the struct's end (the
 * struct is then left). */
TlStatus pq_th_field(PqThrift *t, PqThStruct *s, int *id, int *type);

/* Typed reads of a field (type: the field's wire type) or a list element
 * (type: the list's element type).  Integers accept any narrower wire
 * type; a value out of the target's range is an error. */
TlStatus pq_th_bool(PqThrift *t, int type, bool in_list, bool *v);
TlStatus pq_th_i32(PqThrift *t, int type, int32_t *v);
TlStatus pq_th_i64(PqThrift *t, int type, int64_t *v);
TlStatus pq_th_double(PqThrift *t, int type, double *v);
/* Bytes of a binary or string, pointing into the buffer. */
TlStatus pq_th_binary(PqThrift *t, int type, const uint8_t **p, uint32_t *n);
/* A list (or set) header: element type and count (0 <= n <= bytes left). */
TlStatus pq_th_list(PqThrift *t, int type, int *elem, int32_t *n);
/* Skip a value of wire type type (a field's, or a list element's with
 * in_list). */
TlStatus pq_th_skip(PqThrift *t, int type, bool in_list);
/* "expected TYPE" failure for a field of s whose wire type is wrong. */
TlStatus pq_th_bad_type(PqThrift *t, const PqThStruct *s, int id, int type);

#endif
