/*
 * sort_impl.h -- the sort operator's state, shared by its three files:
 *
 *   op_sort.c    the operator: chunks in, top-k pool, stages on the
 *                pool per morsel, the output batches (ordered.h)
 *   sort_perm.c  the stable sort of the permutation of global row indexes
 *   sort_pack.c  chunks packed into rows, and the gather of output rows
 *   sort_spill.c the external sort's merge of spilled runs (a loser tree)
 *
 * Internal to lib/exec: nothing outside these files includes it.
 */
#ifndef TL_SORT_IMPL_H
#define TL_SORT_IMPL_H

#include "../../formats/spill.h"
#include "../../kernels/rowenc.h"
#include "../../kernels/rowpack.h"
#include "../../kernels/sort.h"
#include "../core/pool.h"
#include "../expr/eval.h"
#include "exec.h"
#include "ordered.h"

/* Rows in columns: data columns of the child schema plus evaluated keys.
 * A full sort's chunk keeps its data columns packed as rows instead (see
 * pack_chunk): data[] is then all NULL and rows != NULL. */
typedef struct Chunk {
    TlArray **data;  /* n_data */
    TlArray **keys;  /* n_keys */
    int64_t n_rows;
    uint8_t *rows;   /* packed: n_rows rows of pk_row bytes, or NULL */
    uint8_t *rows_mem; /* the allocation rows lies in */
    uint8_t *nulls;  /* packed: pk_mask bytes a row, bit i = column i is
                        null; NULL when no column has a null here */
    uint8_t *info;   /* packed: per column PK_NULLS | PK_TNULL */
    TlBuf **bufs;    /* packed: the string columns' data blocks, in column
                        order (views' block numbers are rebased to it) */
    uint32_t n_bufs;
} Chunk;

enum { PK_NULLS = 1, PK_TNULL = 2, PK_BLOCK = 256, SEEN_BUFS = 256 };

typedef struct SortOp {
    TlOperator base;
    TlOperator *child;
    const TlExprArena *ea;
    TlExprId *keys;
    int *key_col;            /* key k is data column key_col[k], or -1 */
    bool *desc, *nulls_first;
    int n_keys;
    int n_data;
    int64_t limit;           /* -1: all */
    bool consumed;
    Chunk *chunks;
    int n_chunks, cap_chunks;
    int64_t pool_rows;
    uint8_t *thr;            /* top-k threshold row, or NULL */
    size_t thr_len;
    /* output */
    uint32_t *perm;          /* global row indexes; NULL: chunks in order */
    int64_t n_out, emitted;
    TlOrdered *ring;         /* output batches gathered ahead on the pool
                                (full sort, > 1 thread), or NULL */
    /* packed rows (pack_chunk): column i at byte pk_off[i] of a row */
    int pack;                /* 0 off, 1 every chunk, 2 chunks of even length */
    bool keys_packed;        /* key columns are packed too (several keys) */
    int *pk_off;
    size_t pk_row, pk_mask;  /* bytes of a row, of a row's null mask */
    uint64_t *kimg;          /* packed output of a single numeric key column:
                                its sorted images (see sort_native), or NULL */
    int64_t kimg_m, kimg_nn; /* values, nulls */
    TlType kimg_type;
    bool kimg_on;            /* the key column is made from kimg */
    int64_t *starts;         /* packed output: chunk c's first global row */
    int *first;              /* chunk of global row b << LOC_SHIFT */
    /* external sort (full sort over its reservation): see op_sort.c */
    TlReservation res;       /* what the chunks held are charged to */
    TlSpill *spill;          /* the runs' file, or NULL */
    TlSpillSpan *runs;       /* sorted runs in input order */
    int n_runs, cap_runs;
    size_t max_block;        /* largest block written, uncompressed */
    TlBuf *seen[SEEN_BUFS];  /* buffers charged lately (op_sort.c, chunk_bytes) */
    int n_seen;
    struct SortMerge *merge; /* the output: runs merged, or NULL */
} SortOp;

enum { LOC_SHIFT = 12 };

/* sort_pack.c */
void tl_sort_chunk_free(Chunk *c, int n_data, int n_keys);
TlStatus tl_sort_pack_chunk(const SortOp *s, Chunk *c, TlError *err);
TlStatus tl_sort_gather(SortOp *s, const uint32_t *g, int64_t n, TlArray **out_data,
                        TlArray **out_keys, bool par, TlError *err);
TlStatus tl_sort_gather_packed(const SortOp *s, const uint32_t *g, int64_t n, int c0, int c1,
                               bool keys, TlArray **out, TlError *err);

/* sort_spill.c: merge the spilled runs (the caller wrote them all):
 * cascades while there are more runs than the budget holds open, then
 * merges the rest batch by batch into the output. */
TlStatus tl_sort_merge_start(SortOp *s, TlError *err);
TlStatus tl_sort_merge_next(SortOp *s, TlBatch **out, TlError *err);
void tl_sort_merge_free(SortOp *s);

/* sort_perm.c */
bool tl_sort_native_type(TlType t);
TlStatus tl_sort_perm(SortOp *s, uint32_t *perm, TlRows *rows_out, TlError *err);

#endif
