/*
 * radix.h -- the radix split shared by the partitioned group-by
 * (agg_radix.c) and top-N per group (op_topn_by.c).
 *
 * Both spread their groups over TL_RADIX_P partitions by the top bits of
 * one hash of each row's group key (tl_grouper_hash, lib/group: keys equal
 * by the groupers' rules hash equal, so every group lives in exactly one
 * partition).  A morsel's rows are split by partition on the
 * pool (tl_radix_split, stable, so each partition sees its rows in input
 * order); partition p then folds its rows of each morsel, in morsel order
 * (partq.h), into its own grouper (lib/group, given the same hashes:
 * tl_grouper_map_hashed) and its own per-group state: aggregate states for
 * the group-by, bounded heaps for top-N.  The partition count is a
 * constant, so nothing depends on the thread count.
 */
#ifndef TL_RADIX_H
#define TL_RADIX_H

#include "../core/core.h"

#define TL_RADIX_BITS 4
#define TL_RADIX_P (1 << TL_RADIX_BITS)

/* The partition of a row hash: its top bits. */
static inline int tl_radix_part(uint64_t h)
{
    return (int)(h >> (64 - TL_RADIX_BITS));
}

/* Split rows [0, n) by the partitions of their hashes h, stably: rows[]
 * the row numbers, partition after partition, ascending within each;
 * partition p's are rows[off[p] .. off[p + 1]).  hs (or NULL): the
 * hashes in the same order. */
void tl_radix_split(const uint64_t *h, int64_t n, uint32_t *rows, uint64_t *hs,
                    uint32_t off[TL_RADIX_P + 1]);

#endif
