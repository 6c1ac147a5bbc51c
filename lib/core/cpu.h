/*
 * cpu.h -- what the CPU can do, without asking it at start-up.
 *
 * GCC's __builtin_cpu_init / __builtin_cpu_supports link libgcc's
 * __cpu_indicator_init, a constructor that runs a dozen CPUID instructions
 * before main in every process; CPUID traps to the hypervisor on a VM, so
 * that alone cost ~0.1 ms of a 2 ms run.  glibc's dynamic loader has already
 * read the CPU's features (and whether the OS enables their registers):
 * tl_cpu_features answers from that table (<sys/platform/x86.h>, glibc
 * 2.33 and later) and falls back to the GCC builtins elsewhere.
 */
#ifndef TL_CPU_H
#define TL_CPU_H

enum {
    TL_CPU_AVX2 = 1u << 0,      /* usable: the CPU has it and the OS saves ymm */
    TL_CPU_POPCNT = 1u << 1,
    TL_CPU_BMI1 = 1u << 2,
    TL_CPU_BMI2 = 1u << 3,
    TL_CPU_SLOW_PDEP = 1u << 4  /* BMI2's PDEP/PEXT microcoded: AMD family
                                   15h (Bulldozer) and 17h (Zen 1, Zen 2) */
};

/* The TL_CPU_* bits of this CPU (0 off x86-64).  Thread-safe; cheap after
 * the first call, and the first call runs no CPUID with glibc >= 2.33. */
unsigned tl_cpu_features(void);

#endif
