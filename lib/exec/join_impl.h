/*
 * join_impl.h -- the hash join's state, shared by its two files:
 *
 *   op_join.c   the operator: building each side, stages and windows on
 *               the pool, handing out results, placing errors
 *   join_out.c  the rows: packing right morsels into blocks, probing,
 *               gathering and producing output batches (see op_join.c's
 *               top comment for the design of both)
 *
 * Internal to lib/exec: nothing outside these two files includes it.
 */
#ifndef TL_JOIN_IMPL_H
#define TL_JOIN_IMPL_H

#include "../../kernels/core_kernels.h"
#include "../core/pool.h"
#include "../plan/plan.h"
#include "join_table.h"
#include "ops.h"

#include <string.h>

#define NONE TL_JT_NONE

/* The items of one morsel or range, handed out in order: output batches,
 * or the results of the stage the operator above installed. */
typedef struct Res {
    void **b;
    int n, i, cap;
} Res;

/* A map the operator above fused into the join (add_map). */
typedef struct Map {
    TlMapFn fn;
    void *ctx;
    void (*ctx_free)(void *ctx);
} Map;

/* A block of the right table: one right morsel's rows (build right) or the
 * rows kept from one (build left), packed row-major (see pack). */
typedef struct RBlock {
    uint8_t *rows;      /* n rows of j->rw bytes, or NULL (no slots) */
    int64_t n;
    TlBuf ***data;      /* per slot: the data buffers of its long views, or NULL */
    uint32_t *n_data;   /* per slot */
    bool *nulls;        /* per slot: some row is null */
    TlArray **keys;     /* build right: the morsel's key columns, for the table */
    uint32_t *lh;       /* build left: per row, the first left row of its key, or NONE */
} RBlock;

enum { W_PROBE, W_KEEP, W_PACK, W_RANGE, W_TAIL };

/* A window of inputs run on the pool when the child has no stage. */
typedef struct Win {
    int kind;
    int n, i, cap;
    TlBatch **in;       /* W_PROBE, W_KEEP, W_PACK: the input batches */
    TlBatch **keep;     /* W_PROBE: the same rows, for place_item */
    int64_t *first;     /* W_PROBE: each batch's first row among the left's */
    int64_t *off;       /* W_RANGE, W_TAIL: first row of each range */
    void **res;         /* Res* or RBlock* per input */
    TlStatus *st;
    TlError *errs;
    bool end;           /* the source is exhausted */
} Win;

typedef struct Join {
    TlOperator base;
    TlOperator *left, *right;
    int how;
    int n_keys;
    int *lk, *rk;          /* key columns (copies) */
    int *rcols;            /* right output columns (copy) */
    int n_rcols;
    TlType *kt;            /* per key: the type both sides are compared in */
    bool never;            /* a key pair with a null-typed column */
    bool built;
    bool build_left;       /* index the left, stream the right */
    bool keep_unmatched_right; /* right, full */
    bool keep_unmatched_left;  /* left, full */
    const TlSchema *left_schema;
    const TlSchema *join_schema; /* the join's own output (base.schema: after maps) */
    int nl;                /* left schema width */
    int rn;                /* right schema width */
    TlType *rtype;         /* per right column: its type */
    /* the right table (built, or the kept rows when build_left): blocks of
     * packed rows, rows numbered across them in order.  A row holds the
     * slots (the right columns the output takes) at slot_off[s], then one
     * null bit per slot from null_off on. */
    int n_slots;
    int *slot_col;         /* per slot: its right column */
    int *col_slot;         /* per right column: its slot, or -1 */
    size_t *slot_off;      /* per slot: byte offset in a row */
    size_t rw;             /* row width */
    size_t null_off;
    RBlock **blk;          /* n_rp + 1 blocks: the last holds the null row */
    uint8_t **brows;       /* n_rp + 1: each block's rows */
    bool *slot_nulls;      /* per slot: some block has a null in it */
    TlBuf ***sdata;        /* per slot: every block's data buffers, in order */
    uint32_t *sn_data;     /* per slot */
    uint32_t **sbase;      /* per slot with data: each block's first index */
    int n_rp;              /* blocks before the null row's */
    int64_t *rstart;       /* n_rp + 2: first row of each part; [n_rp] = n_r */
    uint32_t *rblk;        /* per block of 1 << rshift rows: its first row's part */
    int rshift;
    int64_t n_r;
    TlJoinTable *t;
    const uint32_t *nxt;   /* chains over the right table's rows */
    uint8_t *matched;      /* right, full: n_r */
    /* build_left */
    TlBatch *lb;           /* the whole left */
    uint32_t *rhead;       /* per left row (a key's first): first kept row */
    uint32_t *rnext;       /* per kept row */
    int64_t range_off;     /* next left row to hand to a range */
    int64_t left_rows;     /* rows pulled from the left into windows */
    /* fused from above: maps over each output batch, then a stage */
    Map *maps;
    int n_maps;
    bool has_stage;
    TlStage stage;
    /* consuming */
    bool staged;           /* the current source runs our stage */
    Win win;
    Res *cur;
    bool probe_done;
    bool tail_started;
    int64_t tail;          /* right/full: first right row of the next range */
    int64_t cap;           /* tl_batch_rows() */
} Join;

/* join_out.c.  Any thread unless said otherwise: they read the table and
 * write only what they return (and `matched`). */
void tl_join_res_free(const Join *j, Res *r);      /* NULL-safe */
void tl_join_block_free(const Join *j, RBlock *k); /* NULL-safe */
/* Bytes a value of type t takes in a packed row. */
size_t tl_join_slot_width(TlType t);
/* Cast a to type t when it differs (a new reference either way). */
TlStatus tl_join_as_type(TlArray *a, TlType t, TlArray **out, TlError *err);
/* Build right: one left morsel (consumed) -> its output (Res, or NULL). */
TlStatus tl_join_probe(Join *j, TlBatch *b, void **result, TlError *err);
/* Build left: one right morsel (consumed) -> the rows to keep, packed
 * (RBlock, or NULL), with their left keys' first rows. */
TlStatus tl_join_keep(Join *j, TlBatch *b, void **result, TlError *err);
/* Build right: one right morsel (consumed) -> its rows packed, with its
 * key columns (RBlock, or NULL for no rows). */
TlStatus tl_join_pack(Join *j, TlBatch *b, void **result, TlError *err);
/* Build left: left rows [off, off + n) -> their output (Res, or NULL);
 * tl_join_range: the range of tl_batch_rows() rows from off. */
TlStatus tl_join_range_rows(Join *j, int64_t off, int64_t n, void **result,
                            TlError *err);
TlStatus tl_join_range(Join *j, int64_t off, void **result, TlError *err);
/* Right, full: right rows [off, end) that no left row matched -> their
 * output (Res, or NULL), after every probe (`matched` is final);
 * tl_join_tail: the range of tl_batch_rows() rows from off. */
TlStatus tl_join_tail_rows(Join *j, int64_t off, int64_t end, void **result,
                           TlError *err);
TlStatus tl_join_tail(Join *j, int64_t off, void **result, TlError *err);

#endif
