/* test_rowpack.c -- packed rows (kernels/rowpack.h): every type through a
 * pack and an unpack, with a selection, a sliced array, a type-null column,
 * null bits inside the row and beside it, and the string views' block
 * numbers rebased on the way in and on the way out. */
#include "../../kernels/rowpack.h"
#include "tl_test.h"

enum { N = 300 };

/* A column of type t: int64, float64, date, bool, string, or type null;
 * every seventh row null. */
static TlArray *make_col(TlType t)
{
    TlBuilder b;
    TlArray *a;
    char s[64];
    if (t == TL_TNULL) return tl_array_new_null(TL_TNULL, N + 5);
    tl_builder_init(&b, t);
    for (int i = 0; i < N + 5; i++) { /* 5 more: the test slices them off */
        if (i % 7 == 3) {
            tl_builder_append_null(&b);
            continue;
        }
        switch (t) {
        case TL_TINT64: tl_builder_append_i64(&b, (int64_t)i * 1000003 - 7); break;
        case TL_TFLOAT64: tl_builder_append_f64(&b, i * 0.25 - 3); break;
        case TL_TDATE: tl_builder_append_i32(&b, i - 100); break;
        case TL_TBOOL: tl_builder_append_bool(&b, i % 3 == 0); break;
        default: {
            /* short ones inline, long ones in the data blocks */
            int len = snprintf(s, sizeof s, i % 2 ? "s%d" : "a longer string number %d", i);
            tl_builder_append_str(&b, s, (uint32_t)len);
            break;
        }
        }
    }
    a = tl_builder_finish(&b);
    tl_builder_free(&b);
    return a;
}

/* Row r of a equals element i of the unpacked values/validity (views of
 * the unpacked column read through a's own blocks). */
static bool same(const TlArray *a, int64_t r, TlType t, const TlBuf *vals, const TlBuf *valid,
                 int64_t i)
{
    bool an = !tl_array_valid(a, r), bn = valid && !tl_bit_get(valid->data, i);
    if (an || bn) return an == bn;
    switch (t) {
    case TL_TBOOL: return tl_array_bool(a, r) == tl_bit_get(vals->data, i);
    case TL_TDATE: return tl_array_i32(a)[r] == ((const int32_t *)(const void *)vals->data)[i];
    case TL_TSTRING: {
        const TlView *v = (const TlView *)(const void *)vals->data + i;
        return tl_view_eq(&tl_array_views(a)[r], a->data, v, a->data);
    }
    default: return tl_array_i64(a)[r] == ((const int64_t *)(const void *)vals->data)[i];
    }
}

/* Pack the columns (sliced by 5; rows sel[] with with_sel) into rows of
 * width W with the masks inside the row (at mask_off) or beside the rows,
 * then unpack them in tiles of 32 rows in reverse row order. */
static void round_trip(bool inside, bool with_sel)
{
    TlType types[] = {TL_TINT64, TL_TFLOAT64, TL_TDATE, TL_TBOOL, TL_TSTRING, TL_TNULL};
    enum { NC = 6 };
    TlArray *full[NC], *cols[NC];
    size_t off[NC], W = 0;
    uint32_t sel[N];
    for (int r = 0; r < N; r++) sel[r] = (uint32_t)((r * 37) % N); /* 37 coprime to N */
    for (int c = 0; c < NC; c++) {
        full[c] = make_col(types[c]);
        cols[c] = tl_array_slice(full[c], 5, N);
        off[c] = W;
        W += tl_k_rowpack_width(types[c]);
    }
    CHECK_EQ_INT(W, 8 + 8 + 4 + 1 + 16);
    size_t mask_off = inside ? W : 0, stride_m = inside ? W + 1 : 1;
    if (inside) W += 1;
    uint8_t *rows = tl_calloc((size_t)N * W, 1);
    uint8_t *masks = inside ? rows + mask_off : tl_calloc(N, 1);
    const uint32_t *s = with_sel ? sel : NULL;
    for (int c = 0; c < NC; c++) {
        /* in two runs of rows, as the sort packs a block at a time */
        tl_k_rowpack_put(cols[c], types[c], s, 0, 100, rows + off[c], W, 2);
        tl_k_rowpack_put(cols[c], types[c], s, 100, N, rows + off[c], W, 2);
        CHECK(tl_k_rowpack_put_nulls(cols[c], s, N, masks, stride_m, c)); /* each has some */
    }
    /* unpack, rows N-1 .. 0 */
    int bad = 0;
    uint32_t base[2] = {0, (uint32_t)-2}, part[32]; /* the -2 undoes the packing's +2 */
    for (int c = 0; c < NC - 1; c++) {
        TlType t = types[c];
        TlBuf *vals = tl_buf_new(t == TL_TBOOL ? tl_bitmap_bytes(N) : tl_type_width(t) * N, true);
        TlBuf *valid = tl_buf_new(tl_bitmap_bytes(N), true);
        int64_t nulls = 0;
        for (int i0 = 0; i0 < N; i0 += 32) {
            int m = N - i0 < 32 ? N - i0 : 32;
            const uint8_t *src[32], *mk[32];
            for (int j = 0; j < m; j++) {
                int64_t r = N - 1 - (i0 + j);
                src[j] = rows + (size_t)r * W;
                /* inside: the row itself with the masks' offset (the join);
                 * beside: a row's mask, or NULL for a chunk without nulls */
                mk[j] = inside ? src[j] : r % 5 == 1 ? NULL : masks + r;
                part[j] = 1;
            }
            tl_k_rowpack_get(t, src, m, off[c], base, part, vals->data, i0);
            nulls += tl_k_rowpack_get_valid(mk, m, inside ? mask_off : 0, c, valid->data, i0);
        }
        int64_t want_nulls = 0;
        for (int i = 0; i < N; i++) {
            int64_t r = N - 1 - i, ar = with_sel ? sel[r] : r;
            bool masked = !(r % 5 == 1 && !inside); /* a NULL mask: no null */
            if (masked && !tl_array_valid(cols[c], ar)) want_nulls++;
            if (!masked) {
                if (!tl_bit_get(valid->data, i)) bad++;
                continue;
            }
            if (!same(cols[c], ar, t, vals, valid, i)) bad++;
        }
        CHECK_EQ_INT(nulls, want_nulls);
        tl_buf_release(vals);
        tl_buf_release(valid);
    }
    CHECK_EQ_INT(bad, 0);
    /* the type-null column: every row null, no bytes */
    for (int r = 0; r < N; r++)
        if (!(masks[(size_t)r * stride_m] & (1u << 5))) bad++;
    CHECK_EQ_INT(bad, 0);
    if (!inside) tl_free(masks);
    tl_free(rows);
    for (int c = 0; c < NC; c++) {
        tl_array_release(cols[c]);
        tl_array_release(full[c]);
    }
}

TL_TEST(test_round_trip)
{
    round_trip(false, false);
    round_trip(false, true);
    round_trip(true, false);
    round_trip(true, true);
}

/* A long view's block number: + base when packed, + base[part[j]] when
 * unpacked, none without a base table; inline views untouched. */
TL_TEST(test_rebase)
{
    TlBuilder b;
    tl_builder_init(&b, TL_TSTRING);
    tl_builder_append_str(&b, "short", 5);
    tl_builder_append_str(&b, "a string longer than twelve", 27);
    TlArray *a = tl_builder_finish(&b);
    tl_builder_free(&b);
    uint8_t rows[2 * 16];
    tl_k_rowpack_put(a, TL_TSTRING, NULL, 0, 2, rows, 16, 7);
    TlView v0, v1;
    memcpy(&v0, rows, 16);
    memcpy(&v1, rows + 16, 16);
    CHECK(memcmp(&v0, &tl_array_views(a)[0], 16) == 0);
    CHECK_EQ_INT(v1.out.buf, tl_array_views(a)[1].out.buf + 7);
    const uint8_t *src[2] = {rows, rows + 16};
    uint32_t base[3] = {100, 200, 300}, part[2] = {2, 1};
    TlView out[2];
    tl_k_rowpack_get(TL_TSTRING, src, 2, 0, base, part, (uint8_t *)out, 0);
    CHECK(memcmp(&out[0], &v0, 16) == 0);
    CHECK_EQ_INT(out[1].out.buf, v1.out.buf + 200);
    tl_k_rowpack_get(TL_TSTRING, src, 2, 0, NULL, NULL, (uint8_t *)out, 0);
    CHECK_EQ_INT(out[1].out.buf, v1.out.buf);
    tl_array_release(a);
}

int main(void)
{
    TL_RUN(test_round_trip);
    TL_RUN(test_rebase);
    return tl_test_summary(__FILE__);
}
