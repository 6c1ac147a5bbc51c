/*
 * bitmap.c -- counting and copying runs of bits.
 *
 * Bitmaps are Arrow's: bit i lives in byte i/8 at position i%8 (least
 * significant bit first), a set bit meaning "valid" (validity) or "true"
 * (bool values).  Offsets are in bits and need not be byte aligned, because
 * slicing an array only moves its offset.
 *
 * tl_bitmap_count walks the unaligned head bit by bit, the body 64 bits at a
 * time with popcount, then the tail.  tl_bitmap_copy aligns the destination
 * to a byte and then assembles each destination byte from (at most) two
 * source bytes, with a memcpy fast path when both offsets share alignment.
 * Bits of dst outside [dst_off, dst_off+len) are left as they were.
 */
#include "core.h"

/* Number of set bits in bits[off, off+len). */
int64_t tl_bitmap_count(const uint8_t *bits, int64_t off, int64_t len)
{
    int64_t count = 0, i = off, end = off + len;
    if (len <= 0) return 0;
    while (i < end && (i & 7)) {
        count += tl_bit_get(bits, i);
        i++;
    }
    {
        const uint8_t *p = bits + (i >> 3);
        while (end - i >= 64) {
            uint64_t w;
            memcpy(&w, p, 8);
            count += __builtin_popcountll(w);
            p += 8;
            i += 64;
        }
        while (end - i >= 8) {
            count += __builtin_popcount(*p);
            p++;
            i += 8;
        }
    }
    while (i < end) {
        count += tl_bit_get(bits, i);
        i++;
    }
    return count;
}

/* Copy len bits from src starting at bit src_off to dst starting at bit
 * dst_off.  Other bits of dst are preserved.  src and dst must not overlap. */
void tl_bitmap_copy(uint8_t *dst, int64_t dst_off, const uint8_t *src,
                    int64_t src_off, int64_t len)
{
    if (len <= 0) return;
    /* head: bit by bit until dst is byte aligned */
    while (len > 0 && (dst_off & 7)) {
        tl_bit_put(dst, dst_off, tl_bit_get(src, src_off));
        dst_off++;
        src_off++;
        len--;
    }
    if (len >= 8) {
        uint8_t *d = dst + (dst_off >> 3);
        const uint8_t *s = src + (src_off >> 3);
        int64_t nbytes = len >> 3;
        unsigned shift = (unsigned)(src_off & 7);
        if (shift == 0) {
            memcpy(d, s, (size_t)nbytes);
        } else {
            int64_t k;
            for (k = 0; k < nbytes; k++)
                d[k] = (uint8_t)((s[k] >> shift) | (s[k + 1] << (8 - shift)));
        }
        dst_off += nbytes * 8;
        src_off += nbytes * 8;
        len -= nbytes * 8;
    }
    while (len > 0) {
        tl_bit_put(dst, dst_off, tl_bit_get(src, src_off));
        dst_off++;
        src_off++;
        len--;
    }
}

/* Set (v true) or clear bits [off, off+len) of dst. */
void tl_bitmap_fill(uint8_t *dst, int64_t off, int64_t len, bool v)
{
    if (len <= 0) return;
    while (len > 0 && (off & 7)) {
        tl_bit_put(dst, off, v);
        off++;
        len--;
    }
    if (len >= 8) {
        memset(dst + (off >> 3), v ? 0xff : 0, (size_t)(len >> 3));
        off += len & ~(int64_t)7;
        len &= 7;
    }
    while (len > 0) {
        tl_bit_put(dst, off, v);
        off++;
        len--;
    }
}
