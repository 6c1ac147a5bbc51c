/*
 * spill.h -- spill files: where an operator over its memory budget puts
 * what it holds (lib/core/budget.h), as blocks of columns.
 *
 * A spill file is created already unlinked (O_TMPFILE, else mkstemp and an
 * immediate unlink) in the budget's temporary folder, so it leaves nothing
 * behind on any exit, SIGKILL included: its space goes back when its
 * descriptor closes.  It is append-only: each block (one batch's columns)
 * is serialized, compressed with zstd level 1 and written in one write; a
 * reader reads a block back from its offset in one read.  Blocks are as
 * large as the batches put (a batch of the run's batch size: megabytes).
 *
 * An operator keeps, per sequence of blocks it wrote (a sorted run, a
 * partition), the offsets where it starts and ends (TlSpillSpan); several
 * sequences share one file and are read back in any order.
 *
 * Errors: a folder that is missing, not a folder or refuses a new file is
 * TL_ERR_USAGE (exit 2) naming the folder and who chose it; a failed write
 * (a full disk) is TL_ERR_IO naming the folder and how many bytes the
 * block needed; a failed read TL_ERR_IO.
 */
#ifndef TL_SPILL_H
#define TL_SPILL_H

#include "../lib/core/budget.h"
#include "../lib/core/core.h"

typedef struct TlSpill TlSpill;

/* Blocks [off, end) of a spill file, rows in all. */
typedef struct TlSpillSpan {
    uint64_t off, end;
    int64_t rows;
} TlSpillSpan;

/* Whether a spill file can be made in dir (from: who chose it, for the
 * message: "--temp-dir"); makes one and closes it. */
TlStatus tl_spill_check_dir(const char *dir, const char *from, TlError *err);

/* A new spill file in b's temporary folder.  b gets the bytes written and
 * read back counted. */
TlStatus tl_spill_open(TlBudget *b, bool no_tmpfile, TlSpill **out, TlError *err);
/* Close (the file's space goes back). NULL-safe. */
void tl_spill_close(TlSpill *f);

/* The offset the next block will be written at. */
uint64_t tl_spill_end(const TlSpill *f);

/* Append the n_rows rows of cols[0..n_cols) as one block.  *raw, when not
 * NULL, receives the block's size before compression. */
TlStatus tl_spill_put(TlSpill *f, TlArray *const *cols, int n_cols, int64_t n_rows,
                      size_t *raw, TlError *err);

/* Read the block at *off (advanced past it): its n_cols columns into
 * cols[] (owned), its rows into *n_rows. */
TlStatus tl_spill_get(TlSpill *f, uint64_t *off, TlArray **cols, int n_cols, int64_t *n_rows,
                      TlError *err);

#endif
