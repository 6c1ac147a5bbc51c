/*
 * budget.h -- the run's memory budget: one accountant per run (TlCtx.budget),
 * reservations that operators grow and shrink, refused past the limit.
 *
 * An operator that may hold much (sort today; group-by, distinct and the
 * join build the same way) keeps one TlReservation.  Before it holds more
 * it asks tl_reserve_grow for the bytes; a refusal means "spill what you
 * hold, then ask again", never an error by itself.  It gives bytes back
 * with tl_reserve_shrink when it frees them (a run written to disk) and
 * everything with tl_reserve_release when it ends.  Only an operator that
 * cannot go on without memory it was refused (the minimum of its
 * algorithm, e.g. a merge of two runs) fails, with tl_budget_too_small.
 *
 * The counters are atomics, so reservations of operators running at once
 * (a join feeding a group-by) share the one limit without a lock; what
 * they spilled and read back is counted here too, for --stats.
 *
 * A reservation whose budget is NULL (code run outside a run, a unit test)
 * is never refused: nothing is counted.
 */
#ifndef TL_BUDGET_H
#define TL_BUDGET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core.h"

typedef struct TlBudget {
    uint64_t limit;             /* bytes held by all reservations at most */
    const char *limit_text;     /* as the user wrote it ("256MiB"), for
                                   messages; NULL: the default */
    const char *temp_dir;       /* where spill files go (borrowed) */
    const char *temp_from;      /* who chose it: "--temp-dir", "TMPDIR",
                                   or "the default" */
    bool force_spill;           /* TALLY_FORCE_SPILL: spill at the
                                   smallest sizes (tests) */
    _Atomic uint64_t used, peak;
    _Atomic uint64_t spilled, read_back; /* bytes written to spill files,
                                   read back from them (compressed) */
    _Atomic int64_t sort_runs;  /* runs the sorts wrote */
} TlBudget;

typedef struct TlReservation {
    TlBudget *b;                /* NULL: unlimited, nothing counted */
    uint64_t held;
} TlReservation;

/* A budget of limit bytes, nothing held. */
void tl_budget_init(TlBudget *b, uint64_t limit);

/* Take `bytes` more for r, unless the budget's total would pass its
 * limit: then take nothing and return false (the caller spills). */
bool tl_reserve_grow(TlReservation *r, uint64_t bytes);
/* Give `bytes` of r back (at most what it holds). */
void tl_reserve_shrink(TlReservation *r, uint64_t bytes);
/* Give everything r holds back. */
void tl_reserve_release(TlReservation *r);

/* The error of an operator the budget cannot serve even at its minimum:
 * "OP needs at least N of memory (--memory-limit is L)", TL_ERR_DATA
 * (exit 1). */
TlStatus tl_budget_too_small(const TlBudget *b, const char *op, uint64_t need,
                             TlError *err);

/* Parse a size: a number of bytes with an optional unit, B, KB, MB, GB,
 * TB (powers of 1000, as DuckDB reads them; K, M, G, T alone alike) or
 * KiB, MiB, GiB, TiB (powers of 1024), in any case; or a percentage of
 * physical memory ("50%").  Fractions are allowed ("1.5GB").  At least 1
 * byte.  false on anything else. */
bool tl_size_parse(const char *s, uint64_t *out);

/* Physical memory, and the memory limit of the process's cgroup (v2
 * memory.max, v1 memory.limit_in_bytes; UINT64_MAX when there is none). */
uint64_t tl_mem_physical(void);
uint64_t tl_mem_cgroup_limit(void);
/* The default limit: 80% of the lower of the two. */
uint64_t tl_budget_default(void);

/* The process's peak resident memory (VmHWM of /proc/self/status: file
 * pages included); 0 where the file does not say. */
uint64_t tl_mem_resident_peak(void);

/* "256 MiB", "1.5 GiB", "512 bytes": a byte count for messages. */
void tl_size_text(uint64_t n, char *buf, size_t cap);

#endif
