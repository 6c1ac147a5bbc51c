/*
 * cpu.c -- CPU features from glibc's table (cpu.h).
 *
 * With glibc 2.33 or later on x86-64, CPU_FEATURE_ACTIVE reads the
 * features the dynamic loader found at start-up (it already ran CPUID and
 * checked the OS's XSAVE state for AVX), and __x86_get_cpuid_feature_leaf
 * gives leaf 1's EAX for the family: no CPUID instruction runs here.  The
 * family test alone identifies AMD's slow-PDEP parts: Intel never used
 * families 15h or 17h.  Elsewhere (other C libraries, older glibc) the GCC
 * builtins answer, at the cost of libgcc's CPUID constructor.
 *
 * The answer is computed once and cached in a relaxed atomic: every thread
 * computes the same value, so a race only repeats the work.
 */
#include "cpu.h"

#include <limits.h> /* any C library header: defines __GLIBC__ on glibc */

#if defined(__x86_64__) && defined(__GLIBC__)
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33)
#include <sys/platform/x86.h>
#define TL_CPU_GLIBC 1
#endif
#endif

static unsigned probe(void)
{
    unsigned f = 0;
#if defined(TL_CPU_GLIBC)
    const struct cpuid_feature *l1 = __x86_get_cpuid_feature_leaf(CPUID_INDEX_1);
    unsigned eax = l1 ? l1->cpuid_array[0] : 0;
    unsigned family = (eax >> 8) & 0xf;
    if (family == 0xf) family += (eax >> 20) & 0xff;
    if (CPU_FEATURE_ACTIVE(AVX2)) f |= TL_CPU_AVX2;
    if (CPU_FEATURE_ACTIVE(POPCNT)) f |= TL_CPU_POPCNT;
    if (CPU_FEATURE_ACTIVE(BMI1)) f |= TL_CPU_BMI1;
    if (CPU_FEATURE_ACTIVE(BMI2)) f |= TL_CPU_BMI2;
    if (family == 0x15 || family == 0x17) f |= TL_CPU_SLOW_PDEP;
#elif defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) f |= TL_CPU_AVX2;
    if (__builtin_cpu_supports("popcnt")) f |= TL_CPU_POPCNT;
    if (__builtin_cpu_supports("bmi")) f |= TL_CPU_BMI1;
    if (__builtin_cpu_supports("bmi2")) f |= TL_CPU_BMI2;
    if (__builtin_cpu_is("amdfam15h") || __builtin_cpu_is("amdfam17h"))
        f |= TL_CPU_SLOW_PDEP;
#endif
    return f;
}

/* See cpu.h. */
unsigned tl_cpu_features(void)
{
    static unsigned known; /* probe() | 1u << 31 once computed */
    unsigned k = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (!k) {
        k = probe() | 1u << 31;
        __atomic_store_n(&known, k, __ATOMIC_RELAXED);
    }
    return k & ~(1u << 31);
}
