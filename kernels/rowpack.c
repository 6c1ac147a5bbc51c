/*
 * rowpack.c -- columns packed into fixed-width rows, and back (rowpack.h).
 *
 * One column at a time over a run of rows: the type is decided once per
 * call, the loops move bytes only.  Callers pick the runs so that the rows
 * they touch stay in the cache while every column passes (the sort packs
 * 256 rows at a time, its gather unpacks tiles of 32 prefetched rows, the
 * join 64 rows copied close together).
 */
#include "rowpack.h"

size_t tl_k_rowpack_width(TlType t)
{
    switch (t) {
    case TL_TNULL: return 0;
    case TL_TBOOL: return 1;
    case TL_TDATE: return 4;
    case TL_TSTRING: return 16;
    default: return 8;
    }
}

/* Run BODY for rows r in [r0, r1), with i the row of a it reads: two loops,
 * so the plain one has no indirection. */
#define EACH_ROW(BODY)                                                         \
    do {                                                                       \
        if (sel) {                                                             \
            for (int64_t r = r0; r < r1; r++) {                                \
                int64_t i = sel[r];                                            \
                BODY;                                                          \
            }                                                                  \
        } else {                                                               \
            for (int64_t r = r0; r < r1; r++) {                                \
                int64_t i = r;                                                 \
                BODY;                                                          \
            }                                                                  \
        }                                                                      \
    } while (0)

void tl_k_rowpack_put(const TlArray *a, TlType t, const uint32_t *sel, int64_t r0, int64_t r1,
                      uint8_t *dst, size_t stride, uint32_t base)
{
    if (a->type == TL_TNULL) {
        size_t w = tl_k_rowpack_width(t);
        for (int64_t r = r0; r < r1 && w; r++) memset(dst + (size_t)r * stride, 0, w);
        return;
    }
    switch (t) {
    case TL_TBOOL:
        EACH_ROW(dst[(size_t)r * stride] = tl_array_bool(a, i));
        break;
    case TL_TDATE: {
        const int32_t *v = tl_array_i32(a);
        EACH_ROW(memcpy(dst + (size_t)r * stride, &v[i], 4));
        break;
    }
    case TL_TSTRING: {
        const TlView *v = tl_array_views(a);
        EACH_ROW({
            TlView x = v[i];
            if (x.in.len > TL_VIEW_INLINE) x.out.buf += base;
            memcpy(dst + (size_t)r * stride, &x, 16);
        });
        break;
    }
    default: { /* int64, float64, timestamp */
        const int64_t *v = tl_array_i64(a);
        EACH_ROW(memcpy(dst + (size_t)r * stride, &v[i], 8));
        break;
    }
    }
}

bool tl_k_rowpack_put_nulls(const TlArray *a, const uint32_t *sel, int64_t n, uint8_t *mask,
                            size_t stride, int col)
{
    uint8_t *m = mask + col / 8, bit = (uint8_t)(1u << (col & 7));
    bool any = false;
    int64_t r0 = 0, r1 = n;
    if (a->type == TL_TNULL) {
        for (int64_t r = 0; r < n; r++) m[(size_t)r * stride] |= bit;
        return n > 0;
    }
    if (a->null_count == 0) return false;
    EACH_ROW(if (!tl_array_valid(a, i)) {
        m[(size_t)r * stride] |= bit;
        any = true;
    });
    return any;
}

void tl_k_rowpack_get(TlType t, const uint8_t *const *src, int m, size_t off,
                      const uint32_t *base, const uint32_t *part, uint8_t *vals, int64_t i0)
{
    switch (t) {
    case TL_TBOOL:
        for (int j = 0; j < m; j++)
            if (src[j][off]) tl_bit_set(vals, i0 + j);
        break;
    case TL_TDATE: {
        uint8_t *d = vals + (size_t)i0 * 4;
        for (int j = 0; j < m; j++) memcpy(d + (size_t)j * 4, src[j] + off, 4);
        break;
    }
    case TL_TSTRING: {
        TlView *v = (TlView *)(void *)vals + i0;
        if (!base) {
            for (int j = 0; j < m; j++) memcpy(&v[j], src[j] + off, 16);
            break;
        }
        for (int j = 0; j < m; j++) {
            TlView x;
            memcpy(&x, src[j] + off, 16);
            if (x.in.len > TL_VIEW_INLINE) x.out.buf += base[part[j]];
            v[j] = x;
        }
        break;
    }
    default: {
        uint8_t *d = vals + (size_t)i0 * 8;
        for (int j = 0; j < m; j++) memcpy(d + (size_t)j * 8, src[j] + off, 8);
        break;
    }
    }
}

int64_t tl_k_rowpack_get_valid(const uint8_t *const *mask, int m, size_t off, int col,
                               uint8_t *valid, int64_t i0)
{
    size_t byte = off + (size_t)col / 8;
    uint8_t bit = (uint8_t)(1u << (col & 7));
    int64_t nulls = 0;
    for (int j = 0; j < m; j++) {
        const uint8_t *mk = mask[j];
        if (mk && (mk[byte] & bit)) nulls++;
        else tl_bit_set(valid, i0 + j);
    }
    return nulls;
}
