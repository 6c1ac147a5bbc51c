/*
 * cleanup.c -- the paths to remove if the process is killed by a signal.
 *
 * A file sink that cannot create its output as an unnamed file (O_TMPFILE,
 * formats/sink.c) writes a named temporary file beside the target, and even
 * an unnamed one gets a name for the instant between linking it into the
 * folder and renaming it over the target.  If SIGINT, SIGTERM or SIGHUP
 * ends the process in between, that name would stay behind.  The CLI's
 * signal handler (cmd/main.c) calls tl_cleanup_run, which unlinks every
 * registered path, before it lets the signal end the process.
 *
 * A signal handler may run at any instruction of any thread, so the table
 * is the one shape it can read safely: a fixed array of slots in static
 * storage (no allocation, no lock), each with an atomic state.  A slot is
 * claimed by a compare-and-swap (free -> busy), its path copied, then
 * published (busy -> ready); the handler only reads ready slots and only
 * calls unlink, which is async-signal-safe.  Releasing sets the state back
 * to free before the path may be overwritten.  This table and the
 * allocator hook are the only process-wide state tally keeps: signals
 * belong to the process, not to a run.
 *
 * A path that does not fit (longer than TL_CLEANUP_PATH_MAX) or a full table
 * is not registered; the caller still removes its file on every ordinary
 * exit, only a signal could then leave it behind.
 */
#include "core.h"

#include <stdatomic.h>
#include <unistd.h>

#define SLOTS 16

enum { SLOT_FREE, SLOT_BUSY, SLOT_READY };

static struct {
    atomic_int state;
    char path[TL_CLEANUP_PATH_MAX];
} slots[SLOTS];

/* Register path for removal by tl_cleanup_run.  Returns the slot to pass to
 * tl_cleanup_remove, or -1 when the path is too long or the table full. */
int tl_cleanup_add(const char *path)
{
    size_t n = strlen(path);
    if (n >= TL_CLEANUP_PATH_MAX) return -1;
    for (int i = 0; i < SLOTS; i++) {
        int want = SLOT_FREE;
        if (!atomic_compare_exchange_strong(&slots[i].state, &want, SLOT_BUSY)) continue;
        memcpy(slots[i].path, path, n + 1);
        atomic_store(&slots[i].state, SLOT_READY);
        return i;
    }
    return -1;
}

/* Forget a registered path (the file was renamed or removed).  slot -1 is
 * ignored. */
void tl_cleanup_remove(int slot)
{
    if (slot >= 0 && slot < SLOTS) atomic_store(&slots[slot].state, SLOT_FREE);
}

/* Unlink every registered path.  Async-signal-safe: for signal handlers. */
void tl_cleanup_run(void)
{
    for (int i = 0; i < SLOTS; i++)
        if (atomic_load(&slots[i].state) == SLOT_READY) (void)unlink(slots[i].path);
}
