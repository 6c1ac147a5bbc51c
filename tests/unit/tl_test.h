/*
 * tl_test.h -- the tiny assertion header for unit tests.
 *
 * A test file defines test functions with TL_TEST(name) and a main that calls
 * TL_RUN(name) for each, then returns tl_test_summary().  A failed CHECK
 * prints file:line and the expression, marks the test failed and goes on.
 * With TL_TEST_TIMES set in the environment each test's wall time is
 * printed on standard error ("time NAME MS"), for the weights of
 * scripts/run-unit and the budget of RELIABILITY.md.  With TL_TEST_FILTER
 * set, only the tests whose name contains it run (`make unit
 * T=test_join:inner` sets it; scripts/run-unit fails when the filter
 * leaves no test to run, so a misspelt name cannot pass as "0 passed").
 */
#ifndef TL_TEST_H
#define TL_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../support/sanitizer.h"

static int tl_t_failed_checks, tl_t_tests, tl_t_failed_tests;

#define TL_TEST(name) static void name(void)
static inline double tl_t_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Whether the test called name runs: every test unless TL_TEST_FILTER
 * is set, then those whose name contains it. */
static inline int tl_t_selected(const char *name)
{
    const char *f = getenv("TL_TEST_FILTER");
    return !f || !*f || strstr(name, f) != NULL;
}

#define TL_RUN(name)                                                           \
    do {                                                                       \
        if (!tl_t_selected(#name)) break;                                      \
        int before_ = tl_t_failed_checks;                                      \
        double tl_t_start_ = tl_t_now_ms();                                    \
        name();                                                                \
        if (getenv("TL_TEST_TIMES"))                                           \
            fprintf(stderr, "time %s %.0f\n", #name,                           \
                    tl_t_now_ms() - tl_t_start_);                              \
        tl_t_tests++;                                                          \
        if (tl_t_failed_checks != before_) {                                   \
            tl_t_failed_tests++;                                               \
            fprintf(stderr, "FAIL %s\n", #name);                               \
        }                                                                      \
    } while (0)

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            tl_t_failed_checks++;                                              \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__,   \
                    #cond);                                                    \
        }                                                                      \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                     \
    do {                                                                       \
        long long a_ = (long long)(a), b_ = (long long)(b);                    \
        if (a_ != b_) {                                                        \
            tl_t_failed_checks++;                                              \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n",          \
                    __FILE__, __LINE__, #a, #b, a_, b_);                       \
        }                                                                      \
    } while (0)

#define CHECK_EQ_STR(a, b)                                                     \
    do {                                                                       \
        const char *a_ = (a), *b_ = (b);                                       \
        if (!a_ || !b_ || strcmp(a_, b_) != 0) {                               \
            tl_t_failed_checks++;                                              \
            fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n",      \
                    __FILE__, __LINE__, #a, #b, a_ ? a_ : "(null)",            \
                    b_ ? b_ : "(null)");                                       \
        }                                                                      \
    } while (0)

/* The size of a randomized or exhaustive test: n in the release build, n
 * / div (at least 1) under AddressSanitizer, where each case costs five to
 * ten times as much.  make check runs both builds' unit binaries, so the
 * full size still runs every time, and ASan still sees every code path
 * the cases reach, on fewer of them (RELIABILITY.md, "Time budget"). */
static inline long tl_test_scaled(long n, long div)
{
    if (!TL_ASAN || div <= 1) return n;
    return n / div > 0 ? n / div : 1;
}

/* The folder of the external corpora: $CORPORA (scripts/run-unit sets its
 * default, the corpora beside the clone, where CI has them), or "" when
 * unset.  A test that reads them skips when the folder is missing, except
 * under CI=true, where tl_test_corpora_missing fails it. */
static inline const char *tl_test_corpora(void)
{
    const char *c = getenv("CORPORA");
    return c ? c : "";
}

static inline int tl_ci(void)
{
    const char *ci = getenv("CI");
    return ci && strcmp(ci, "true") == 0;
}

/* Whether path is missing; under CI=true a missing corpus also fails the
 * running test (never "0 passed" for want of files). */
static inline int tl_test_corpora_missing(const char *path)
{
    if (access(path, R_OK) == 0) return 0;
    fprintf(stderr, "%s is missing%s\n", path,
            tl_ci() ? " (CI=true: the corpora are required)" : ", skipped");
    if (tl_ci()) tl_t_failed_checks++;
    return 1;
}

/* Prints "<file>: N passed, N failed" and returns the exit status. */
static inline int tl_test_summary(const char *file)
{
    printf("%s: %d passed, %d failed\n", file, tl_t_tests - tl_t_failed_tests,
           tl_t_failed_tests);
    return tl_t_failed_tests != 0;
}

#endif
