/*
 * radix.c -- the radix split (radix.h).
 *
 * A counting sort on the partition: one pass counts, one places, so a
 * morsel's split costs two reads of its hashes and one scattered write of
 * its row numbers into TL_RADIX_P runs (few enough that each run's write
 * position stays in cache).
 */
#include "radix.h"

void tl_radix_split(const uint64_t *h, int64_t n, uint32_t *rows, uint64_t *hs,
                    uint32_t off[TL_RADIX_P + 1])
{
    uint32_t cnt[TL_RADIX_P] = {0}, pos[TL_RADIX_P];
    for (int64_t i = 0; i < n; i++) cnt[tl_radix_part(h[i])]++;
    off[0] = 0;
    for (int p = 0; p < TL_RADIX_P; p++) {
        pos[p] = off[p];
        off[p + 1] = off[p] + cnt[p];
    }
    if (hs) {
        for (int64_t i = 0; i < n; i++) {
            uint32_t at = pos[tl_radix_part(h[i])]++;
            rows[at] = (uint32_t)i;
            hs[at] = h[i];
        }
    } else {
        for (int64_t i = 0; i < n; i++) rows[pos[tl_radix_part(h[i])]++] = (uint32_t)i;
    }
}
