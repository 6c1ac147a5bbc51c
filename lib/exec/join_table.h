/*
 * join_table.h -- the hash join's table: built once (in parallel), then
 * probed read-only from any number of threads at once.
 *
 * The table indexes rows [0, n) of some key columns (whole arrays, already
 * cast to the types both sides compare in).  Every distinct key tuple has a
 * chain of its rows in row order:
 *
 *   probe(key) -> first row -> next[row] -> ... -> TL_JT_NONE
 *
 * Rows with a null in any key are never linked (null keys never match) and
 * a probe row with a null key finds nothing.  Equality is the engine's:
 * NaN = NaN, -0.0 = 0.0, strings by bytes.
 *
 * Nothing about the table depends on the number of threads: chains are in
 * row order whichever thread inserted them (see join_table.c).
 */
#ifndef TL_JOIN_TABLE_H
#define TL_JOIN_TABLE_H

#include "../core/core.h"

#define TL_JT_NONE UINT32_MAX

typedef struct TlJoinTable TlJoinTable;

/* Index rows [0, n) of keys[0..n_keys) (each n rows long, all of the same
 * types the probe side will use; n < TL_JT_NONE - 1; the arrays are
 * retained).  want_rep: also keep, per row, the first row of its key
 * (tl_join_table_rep).  Hashing and inserting run on the thread pool. */
TlStatus tl_join_table_build(TlArray *const *keys, int n_keys, int64_t n,
                             bool want_rep, TlJoinTable **out, TlError *err);

/* For each row i < n of keys[0..n_keys) (the build's types): first[i] is
 * the first build row with an equal key tuple, or TL_JT_NONE (no such row,
 * or a null in the probe row's keys).  Thread-safe: the table is only read. */
TlStatus tl_join_table_probe(const TlJoinTable *t, TlArray *const *keys,
                             int64_t n, uint32_t *first, TlError *err);

/* tl_join_table_probe, and more[i] (when more is not NULL): 0 when the
 * chain of first[i] is that one row (next need not be read), else 1. */
TlStatus tl_join_table_probe_more(const TlJoinTable *t, TlArray *const *keys,
                                  int64_t n, uint32_t *first, uint8_t *more,
                                  TlError *err);

/* next[row]: the next build row with the same key, or TL_JT_NONE. */
const uint32_t *tl_join_table_next(const TlJoinTable *t);

/* rep[row]: the first build row with row's key, or TL_JT_NONE when row has
 * a null key (only when built with want_rep, else NULL). */
const uint32_t *tl_join_table_rep(const TlJoinTable *t);

void tl_join_table_free(TlJoinTable *t); /* NULL-safe */

#endif
