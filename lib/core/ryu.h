/*
 * ryu.h -- shortest round-trip decimal digits of a double (Ryu, internal to
 * lib/core; text.c lays the digits out).
 */
#ifndef TL_RYU_H
#define TL_RYU_H

#include <stdbool.h>
#include <stdint.h>

/* For a finite v > 0: the shortest decimal m x 10^e that reads back as v,
 * the closest to v among the shortest (ties to even).  m has no more than 17
 * digits and may end in zeros.  Returns false when this build has no 128-bit
 * integers (the caller then uses its slow path). */
bool tl_ryu_d2d(double v, uint64_t *m, int32_t *e);

#endif
