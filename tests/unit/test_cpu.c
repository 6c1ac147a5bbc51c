/*
 * test_cpu.c -- tl_cpu_features (lib/core/cpu.h) agrees with GCC's CPUID
 * builtins, which the test may pay for (the program does not).
 */
#include "../../lib/core/cpu.h"
#include "tl_test.h"

#include <pthread.h>

TL_TEST(same_as_builtins)
{
    unsigned f = tl_cpu_features();
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    CHECK(!!(f & TL_CPU_AVX2) == !!__builtin_cpu_supports("avx2"));
    CHECK(!!(f & TL_CPU_POPCNT) == !!__builtin_cpu_supports("popcnt"));
    CHECK(!!(f & TL_CPU_BMI1) == !!__builtin_cpu_supports("bmi"));
    CHECK(!!(f & TL_CPU_BMI2) == !!__builtin_cpu_supports("bmi2"));
    CHECK(!!(f & TL_CPU_SLOW_PDEP) ==
          (__builtin_cpu_is("amdfam15h") || __builtin_cpu_is("amdfam17h")));
    /* every x86-64 CPU with AVX2 has POPCNT (SSE4.2 era) */
    if (f & TL_CPU_AVX2) CHECK(f & TL_CPU_POPCNT);
#else
    CHECK_EQ_INT(f, 0);
#endif
    CHECK((f & ~31u) == 0); /* only the TL_CPU_* bits */
}

static void *probe_thread(void *out)
{
    *(unsigned *)out = tl_cpu_features();
    return NULL;
}

TL_TEST(stable_across_calls_and_threads)
{
    unsigned a = tl_cpu_features(), b = tl_cpu_features(), c = ~0u;
    pthread_t t;
    CHECK_EQ_INT(a, b);
    CHECK(pthread_create(&t, NULL, probe_thread, &c) == 0);
    pthread_join(t, NULL);
    CHECK_EQ_INT(a, c);
}

int main(void)
{
    TL_RUN(same_as_builtins);
    TL_RUN(stable_across_calls_and_threads);
    return tl_test_summary(__FILE__);
}
