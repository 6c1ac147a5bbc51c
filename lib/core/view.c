/*
 * view.c -- 16-byte string views (Umbra / Arrow StringView).
 *
 *   len <= 12:  | len:u32 | bytes[12], zero padded               |
 *   len  > 12:  | len:u32 | prefix[4] | buf_index:u32 | offset:u32 |
 *                 \__________ w[0] __________/ \______ w[1] ______/
 *
 * The first 8 bytes (w[0]) are the length and the first four bytes of the
 * string in both layouts (inline padding is zero), so most unequal strings
 * are told apart by one 64-bit compare without touching the data buffers.
 * Two inline views are equal iff both words are equal.  For ordering, the
 * 4-byte prefix read big-endian orders like memcmp: where padded prefixes
 * differ, either real bytes differ or the shorter string ends there (its
 * padding 0 against a real byte), which memcmp order also puts first.
 */
#include "core.h"

/* An inline view of s[0..len); len must be <= TL_VIEW_INLINE. */
TlView tl_view_inline(const void *s, uint32_t len)
{
    TlView v;
    v.w[0] = 0;
    v.w[1] = 0;
    if (len > TL_VIEW_INLINE) len = TL_VIEW_INLINE;
    v.in.len = len;
    if (len) memcpy(v.in.data, s, len);
    return v;
}

/* True when the strings of a (data buffers abufs) and b (bbufs) have the
 * same bytes. */
bool tl_view_eq(const TlView *a, TlBuf *const *abufs, const TlView *b,
                TlBuf *const *bbufs)
{
    uint32_t len;
    if (a->w[0] != b->w[0]) return false;
    len = a->in.len;
    if (len <= TL_VIEW_INLINE) return a->w[1] == b->w[1];
    return memcmp(abufs[a->out.buf]->data + a->out.off + 4,
                  bbufs[b->out.buf]->data + b->out.off + 4, len - 4) == 0;
}

/* Compare the strings of a and b in memcmp order, a proper prefix sorting
 * first.  Returns <0, 0 or >0. */
int tl_view_cmp(const TlView *a, TlBuf *const *abufs, const TlView *b,
                TlBuf *const *bbufs)
{
    uint32_t pa, pb, la = a->in.len, lb = b->in.len, n;
    int c;
    memcpy(&pa, a->in.data, 4);
    memcpy(&pb, b->in.data, 4);
    if (pa != pb) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        pa = __builtin_bswap32(pa);
        pb = __builtin_bswap32(pb);
#endif
        return pa < pb ? -1 : 1;
    }
    n = la < lb ? la : lb;
    if (n > 4) {
        c = memcmp(tl_view_ptr(a, abufs) + 4, tl_view_ptr(b, bbufs) + 4, n - 4);
        if (c) return c < 0 ? -1 : 1;
    }
    return la < lb ? -1 : la > lb;
}
