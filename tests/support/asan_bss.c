/*
 * asan_bss.c -- linked into the ASan+UBSan tally of make check only
 * (build/asan/tally), never into a program users run.
 *
 * The sanitizer runtime keeps about 9 MB of tables in the program's .bss
 * (the stack depot), and LeakSanitizer reads all of it at exit, looking
 * for pointers: on a VM where a page fault costs 10-20 microseconds, the
 * ~2,400 faults of that read were a third of what a short run costs under
 * ASan, and the CLI suite starts thousands of runs (RELIABILITY.md, "Time
 * budget").  Before main, this asks the kernel to back the .bss with huge
 * pages (MADV_HUGEPAGE, then MADV_COLLAPSE for the parts the runtime has
 * already touched) and to map the rest in one call (MADV_POPULATE_READ).
 * Each step is a hint: on a kernel without it, madvise fails and nothing
 * changes.  What the program and the sanitizers do is the same.
 */
#include <stdint.h>
#include <sys/mman.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

extern char __bss_start[], _end[];

void tl_asan_bss_huge(void);

__attribute__((constructor(101))) void tl_asan_bss_huge(void)
{
    uintptr_t lo = ((uintptr_t)__bss_start + 4095) & ~(uintptr_t)4095;
    uintptr_t hi = (uintptr_t)_end & ~(uintptr_t)4095;
    if (hi <= lo) return;
    madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
    madvise((void *)lo, hi - lo, MADV_COLLAPSE);
    madvise((void *)lo, hi - lo, MADV_POPULATE_READ);
}
