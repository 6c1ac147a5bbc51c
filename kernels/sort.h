/*
 * sort.h -- stable sort kernels over row indexes.
 *
 * Both kernels sort a permutation idx[0..n) (usually 0, 1, ..., n-1) and
 * are stable: indexes with equal keys keep their relative order in idx.
 * Row counts are limited to 2^32 - 1 (indexes are uint32_t).
 */
#ifndef TL_KERNELS_SORT_H
#define TL_KERNELS_SORT_H

#include "../lib/core/core.h"
#include "rowenc.h"

/* Stable LSD radix sort of keys[0..n) ascending, permuting idx[0..n) along
 * (byte passes on which every key agrees are skipped).  TL_ERR_OOM. */
TlStatus tl_k_sort_u64(uint64_t *keys, uint32_t *idx, int64_t n, TlError *err);

/* Sort keys[0..n) ascending, no payload: insertion sort for small n, LSD
 * radix otherwise; scratch holds n entries.  Never fails. */
void tl_k_sort_u64_keys(uint64_t *keys, uint64_t *scratch, int64_t n);

/* Stable sort of idx[0..n) by encoded row r[idx[i]] (tl_rows_cmp order):
 * MSD radix over 8-byte digits, small runs merge sorted.  TL_ERR_OOM. */
TlStatus tl_k_sort_rows(const TlRows *r, uint32_t *idx, int64_t n,
                        TlError *err);

/* Stable merge sort of idx[0..n) by full row comparison only (no prefix
 * pass); scratch must hold n entries. */
void tl_k_merge_sort_rows(const TlRows *r, uint32_t *idx, uint32_t *scratch,
                          int64_t n);

/* Stable sort of idx[0..n) by the strings (ptr[idx[i]], len[idx[i]]) in
 * memcmp order (a prefix first), reversed when desc (equal strings keep
 * their order): MSD radix over 8-byte digits read straight from the
 * strings, no encoding.  TL_ERR_OOM. */
TlStatus tl_k_sort_strs(const uint8_t *const *ptr, const uint32_t *len, bool desc,
                        uint32_t *idx, int64_t n, TlError *err);

/* ------------------------------------------------ parallel (lib/core/pool.h)
 *
 * The same three sorts on the thread pool: idx[0..n) is cut into `runs`
 * contiguous runs, each sorted by the serial kernel above on some pool
 * thread, then the runs are merged pairwise, level by level, each merge cut
 * into pieces at merge-path split points so every thread works on every
 * level; a tie goes to the left run.  A stable sort has exactly one result,
 * so the output never depends on runs or threads.  runs <= 0: one run per
 * pool thread when n is large enough, else the serial kernel.  Scratch: n
 * keys + n indexes, shared by the runs and the merges (rows and strings:
 * plus the n digits of the MSD levels, allocated once for all levels).
 * TL_ERR_OOM. */
TlStatus tl_k_psort_u64(uint64_t *keys, uint32_t *idx, int64_t n, int runs,
                        TlError *err);
TlStatus tl_k_psort_rows(const TlRows *r, uint32_t *idx, int64_t n, int runs,
                         TlError *err);
TlStatus tl_k_psort_strs(const uint8_t *const *ptr, const uint32_t *len, bool desc,
                         uint32_t *idx, int64_t n, int runs, TlError *err);

#endif
