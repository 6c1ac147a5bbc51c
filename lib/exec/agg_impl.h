/*
 * agg_impl.h -- the group-by operator's state, shared by its two files:
 *
 *   op_agg.c     the operator: the serial and staged paths, --sorted runs,
 *                the output batches (ordered.h)
 *   agg_radix.c  the radix-partitioned staged path (see op_agg.c's top
 *                comment for the design of both)
 *
 * Internal to lib/exec: nothing outside these two files includes it.
 */
#ifndef TL_AGG_IMPL_H
#define TL_AGG_IMPL_H

#include <stdio.h>
#include <stdlib.h>

#include "../../formats/format.h"
#include "../../kernels/hash.h"
#include "../core/pool.h"
#include "../core/text.h"
#include "../group/group.h"
#include "agg.h"
#include "../expr/eval.h"
#include "exec.h"
#include "ordered.h"
#include "partq.h"
#include "radix.h"

/* One partition of the radix state: its groups, their states, and per
 * group its first appearance: the row in its morsel (first[g]) and, per
 * morsel, the partition's group count after it (mcount[m]), so group g
 * first appeared in the first morsel m with mcount[m] > g. */
typedef struct RPart {
    TlGrouper *g;
    TlAgg **states;           /* n_aggs */
    uint32_t *first;
    int64_t first_cap;
    uint32_t *mcount;
    int64_t mcount_cap;
    uint32_t *ids;            /* scratch: the morsel's rows' ids */
    int64_t ids_cap;
    uint32_t n;               /* groups, after sealing */
    int bad;                  /* sealing: -2 ok, -1 the keys failed, else
                               * the first aggregate that failed */
    TlStatus seal_st;         /* its status */
    TlError *seal_err;        /* its error (allocated on failure only) */
} RPart;

typedef struct AggOp {
    TlOperator base;
    TlOperator *child;
    const TlExprArena *ea;
    TlExprId *keys;
    int n_keys;
    TlExprId *aggs;
    int n_aggs;
    TlExprId *x_ids, *y_ids;  /* per aggregate: argument ids or TL_NO_ID */
    TlGrouper *grouper;       /* NULL with no keys */
    int runs;                 /* run-length grouping: 0 trying, 1 on, -1 off */
    int runs_bad;             /* batches where runs did not pay */
    bool clustered;           /* input clustered on the keys: always runs */
    bool check;               /* --sorted: a reappearing key is an error */
    uint32_t prev_id;         /* group of the last run (check) */
    int64_t rows_seen;        /* input rows before this batch (check) */
    const char **src;         /* check: the inputs whose records the rows are */
    const TlReadOptions *src_read;
    int n_src;
    uint32_t *starts;         /* per batch: first rows of key runs */
    uint32_t *run_ids;
    int64_t starts_cap;
    TlAgg **states;
    uint32_t *ids;
    int64_t ids_cap;
    TlType *kt;               /* key types (local groupers of the stage) */
    TlAggSpec *specs;         /* per aggregate (partial states of the stage) */
    bool staged;              /* the child runs our stage (morsel results) */
    uint32_t *map;            /* stage: local group -> global group */
    int64_t map_cap;
    bool consumed;
    bool keys_ended;          /* output: the grouper's first keys call made */
    TlOrdered *ring;          /* output batches built ahead: two per thread */
    int64_t out_total;        /* output batches */
    int64_t out_take;         /* the next to hand out */
    int64_t n_groups;
    /* the radix path (staged, with keys) */
    bool radix;
    RPart *parts;             /* TL_RADIX_P */
    TlPartQ *pq;              /* made at the second morsel */
    void *first_item;         /* the first morsel, until the second comes */
    int n_args;               /* distinct argument expressions */
    TlExprId *arg_ids;
    int *xi, *yi;             /* per aggregate: index into arg_ids or -1 */
    bool pre_ok;              /* morsels with few groups may pre-aggregate */
    int pre_mode;             /* TALLY_AGG_PRE: 0 by sample, 1 always */
    int64_t *mrows;           /* per morsel: its rows */
    int64_t n_morsels, mrows_cap;
    uint8_t *order;           /* output position -> partition */
    uint32_t *snap;           /* per output batch: TL_RADIX_P partition cursors */
} AggOp;

/* An argument array of the current batch, shared by equal expression ids. */

/* op_agg.c: " in group k=v, ..." for group gid of grouper g, into buf. */
void tl_agg_group_text_in(AggOp *a, TlGrouper *g, uint32_t gid, char *buf,
                          size_t cap);

/* agg_radix.c */
void tl_agg_radix_drop(void *ctx, void *item);
TlStatus tl_agg_radix_init(AggOp *a, TlError *err);
void tl_agg_radix_free(AggOp *a);
TlStatus tl_agg_radix_work(AggOp *a, TlBatch *b, void **result, TlError *err);
TlStatus tl_agg_radix_consume(AggOp *a, TlError *err);
TlStatus tl_agg_radix_batch(AggOp *a, int64_t first, int64_t rows, TlBatch *b,
                            TlError *err);

#endif
