/*
 * sanitizer.h -- what the test programs (tests/unit/tl_test.h,
 * tests/fault/oom_run.c, tests/support/matrix_run.c) share about the build
 * they run in and the process they run in.
 *
 * TL_ASAN is 1 in a build with AddressSanitizer (clang's __has_feature or
 * gcc's __SANITIZE_ADDRESS__), 0 otherwise; with it, LeakSanitizer's
 * interface (<sanitizer/lsan_interface.h>) is included, for the
 * recoverable leak check the run loops make after each run.
 */
#ifndef TL_SANITIZER_H
#define TL_SANITIZER_H

#include <dirent.h>
#include <string.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TL_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(TL_ASAN)
#define TL_ASAN 1
#endif
#ifndef TL_ASAN
#define TL_ASAN 0
#endif
#if TL_ASAN
#include <sanitizer/lsan_interface.h>
#endif

/* The entries of a folder whose name holds part (every entry when part is
 * NULL), "." and ".." aside; -1 when it cannot be read.  Open descriptors:
 * tl_count_entries("/proc/self/fd", NULL). */
static inline int tl_count_entries(const char *dir, const char *part)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (!part || strstr(e->d_name, part)) n++;
    }
    closedir(d);
    return n;
}

#endif
