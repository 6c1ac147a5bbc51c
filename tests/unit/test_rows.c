/*
 * test_rows.c -- the row operators of lib/exec/op_rows.c (tail, sample, row
 * number) and op_limit.c's offset, against references computed here from
 * the row positions, for several batch sizes; and --sample's size parser
 * (tally_parse_sample, lib/tally_spec.c).
 *
 * The source hands out an int64 column `pos` (the row's position) and a
 * string column (long strings, in data blocks, with nulls), so a wrong row,
 * a lost string block or a wrong order shows in the values.
 */
#include <stdio.h>
#include <string.h>

#include "../../kernels/hash.h"
#include "../../lib/exec/ops.h"
#include "../../lib/tally.h"
#include "tl_test.h"
#include "tl_source.h"

enum { N = 5000 };

static void make_cols(TlSchema *sc, TlArray **cols, int64_t n)
{
    TlError err;
    TlBuilder a, b;
    char buf[64];
    memset(sc, 0, sizeof *sc);
    tl_schema_add(sc, "pos", TL_TINT64, &err);
    tl_schema_add(sc, "s", TL_TSTRING, &err);
    tl_builder_init(&a, TL_TINT64);
    tl_builder_init(&b, TL_TSTRING);
    for (int64_t i = 0; i < n; i++) {
        tl_builder_append_i64(&a, i);
        if (i % 7 == 3) {
            tl_builder_append_null(&b);
        } else {
            int len = snprintf(buf, sizeof buf, "row number %lld, a long one", (long long)i);
            tl_builder_append_str(&b, buf, (size_t)len);
        }
    }
    cols[0] = tl_builder_finish(&a);
    cols[1] = tl_builder_finish(&b);
}

/* Whether out (pos, s) holds exactly the rows want[0..n) in order. */
static bool rows_are(TlArray **out, int64_t rows, const int64_t *want, int64_t n)
{
    char buf[64];
    if (rows != n) {
        fprintf(stderr, "  %lld rows, wanted %lld\n", (long long)rows, (long long)n);
        return false;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t p = tl_array_i64(out[0])[i];
        if (p != want[i]) {
            fprintf(stderr, "  row %lld: pos %lld, wanted %lld\n", (long long)i,
                    (long long)p, (long long)want[i]);
            return false;
        }
        if (p % 7 == 3) {
            if (tl_array_valid(out[1], i)) return false;
            continue;
        }
        int len = snprintf(buf, sizeof buf, "row number %lld, a long one", (long long)p);
        const TlView *v = &tl_array_views(out[1])[i];
        if (!tl_array_valid(out[1], i) || (int)tl_view_len(*v) != len ||
            memcmp(tl_view_ptr(v, out[1]->data), buf, (size_t)len) != 0)
            return false;
    }
    return true;
}

/* Drain op (2 columns) and compare with want; frees op. */
static bool check_op(TlOperator *op, const int64_t *want, int64_t n)
{
    TlError err = {0};
    TlStatus st;
    TlArray *out[2] = {NULL, NULL};
    int64_t rows = source_drain(op, out, 2, &st, &err);
    bool ok = st == TL_OK && (rows == 0 ? n == 0 : rows_are(out, rows, want, n));
    op->free(op);
    tl_array_release(out[0]);
    tl_array_release(out[1]);
    return ok;
}

static const int64_t pers[] = {1, 7, 100, 1000, N};

TL_TEST(tail_is_the_last_rows)
{
    TlSchema sc;
    TlArray *cols[2];
    TlError err = {0};
    int64_t want[N];
    make_cols(&sc, cols, N);
    static const int64_t ns[] = {0, 1, 2, 6, 7, 999, 1000, 1001, N - 1, N, N + 5};
    for (size_t p = 0; p < sizeof pers / sizeof pers[0]; p++)
        for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
            int64_t n = ns[k] < N ? ns[k] : N;
            for (int64_t i = 0; i < n; i++) want[i] = N - n + i;
            TlOperator *op;
            CHECK(tl_op_tail_new(source(&sc, cols, N, pers[p]), ns[k], &op, &err) == TL_OK);
            CHECK(check_op(op, want, n));
        }
    tl_array_release(cols[0]);
    tl_array_release(cols[1]);
    tl_schema_free(&sc);
}

TL_TEST(offset_and_limit)
{
    TlSchema sc;
    TlArray *cols[2];
    TlError err = {0};
    int64_t want[N];
    make_cols(&sc, cols, N);
    static const int64_t offs[] = {0, 1, 6, 7, 1000, N - 1, N, N + 3};
    static const int64_t lims[] = {-1, 0, 1, 7, 2500, N};
    for (size_t p = 0; p < sizeof pers / sizeof pers[0]; p++)
        for (size_t o = 0; o < sizeof offs / sizeof offs[0]; o++)
            for (size_t l = 0; l < sizeof lims / sizeof lims[0]; l++) {
                int64_t n = 0;
                for (int64_t i = offs[o]; i < N && (lims[l] < 0 || n < lims[l]); i++)
                    want[n++] = i;
                TlOperator *op;
                CHECK(tl_op_limit_new(source(&sc, cols, N, pers[p]), offs[o], lims[l], &op,
                                      &err) == TL_OK);
                CHECK(check_op(op, want, n));
            }
    tl_array_release(cols[0]);
    tl_array_release(cols[1]);
    tl_schema_free(&sc);
}

/* The documented hash of row i under seed (man/tally.1, --sample). */
static uint64_t ref_hash(uint64_t seed, int64_t i)
{
    return tl_k_hash_mix64(tl_k_hash_mix64(seed ^ 0x5851F42D4C957F2Dull) +
                           (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ull);
}

TL_TEST(sample_count_is_the_bottom_n_in_order)
{
    TlSchema sc;
    TlArray *cols[2];
    TlError err = {0};
    static int64_t want[N];
    static bool keep[N];
    make_cols(&sc, cols, N);
    static const int64_t ns[] = {0, 1, 10, 600, 2000, N, N + 1};
    static const uint64_t seeds[] = {0, 1, 12345};
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++)
        for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
            /* the reference: rank every row by (hash, position) */
            int64_t n = 0;
            for (int64_t i = 0; i < N; i++) {
                int64_t below = 0;
                uint64_t h = ref_hash(seeds[s], i);
                keep[i] = false;
                for (int64_t j = 0; j < N && below < ns[k]; j++) {
                    uint64_t g = ref_hash(seeds[s], j);
                    if (g < h || (g == h && j < i)) below++;
                }
                keep[i] = below < ns[k];
            }
            for (int64_t i = 0; i < N; i++)
                if (keep[i]) want[n++] = i;
            for (size_t p = 0; p < sizeof pers / sizeof pers[0]; p++) {
                TlOperator *op;
                CHECK(tl_op_sample_new(source(&sc, cols, N, pers[p]), ns[k], -1, seeds[s],
                                       &op, &err) == TL_OK);
                CHECK(check_op(op, want, n));
            }
        }
    tl_array_release(cols[0]);
    tl_array_release(cols[1]);
    tl_schema_free(&sc);
}

TL_TEST(sample_percent_keeps_rows_below_the_bar)
{
    TlSchema sc;
    TlArray *cols[2];
    TlError err = {0};
    static int64_t want[N];
    make_cols(&sc, cols, N);
    static const double pcts[] = {0, 0.5, 10, 33.3, 99.9, 100};
    for (size_t k = 0; k < sizeof pcts / sizeof pcts[0]; k++) {
        int64_t n = 0;
        uint64_t bar = pcts[k] >= 100 ? 0 : (uint64_t)(pcts[k] / 100.0 * 18446744073709551616.0);
        for (int64_t i = 0; i < N; i++)
            if (pcts[k] >= 100 || ref_hash(7, i) < bar) want[n++] = i;
        if (pcts[k] == 10) CHECK(n > 400 && n < 600);
        for (size_t p = 0; p < sizeof pers / sizeof pers[0]; p++) {
            TlOperator *op;
            CHECK(tl_op_sample_new(source(&sc, cols, N, pers[p]), -1, pcts[k], 7, &op,
                                   &err) == TL_OK);
            CHECK(check_op(op, want, n));
        }
    }
    tl_array_release(cols[0]);
    tl_array_release(cols[1]);
    tl_schema_free(&sc);
}

TL_TEST(row_number_counts_across_batches)
{
    TlSchema sc, out_sc = {0};
    TlArray *cols[2];
    TlError err = {0};
    make_cols(&sc, cols, N);
    tl_schema_add(&out_sc, "pos", TL_TINT64, &err);
    tl_schema_add(&out_sc, "s", TL_TSTRING, &err);
    tl_schema_add(&out_sc, "rn", TL_TINT64, &err);
    for (size_t p = 0; p < sizeof pers / sizeof pers[0]; p++) {
        TlOperator *op;
        TlArray *out[3];
        TlStatus st;
        CHECK(tl_op_row_number_new(source(&sc, cols, N, pers[p]), &out_sc, &op, &err) ==
              TL_OK);
        int64_t rows = source_drain(op, out, 3, &st, &err);
        CHECK(st == TL_OK && rows == N);
        bool ok = true;
        for (int64_t i = 0; i < rows; i++)
            ok = ok && tl_array_i64(out[2])[i] == i + 1 && tl_array_i64(out[0])[i] == i;
        CHECK(ok);
        op->free(op);
        for (int c = 0; c < 3; c++) tl_array_release(out[c]);
    }
    tl_array_release(cols[0]);
    tl_array_release(cols[1]);
    tl_schema_free(&sc);
    tl_schema_free(&out_sc);
}

TL_TEST(parse_sample_sizes)
{
    int64_t rows;
    double pct;
    CHECK(tally_parse_sample("10", &rows, &pct) && rows == 10 && pct == -1);
    CHECK(tally_parse_sample("0", &rows, &pct) && rows == 0);
    CHECK(tally_parse_sample("10%", &rows, &pct) && rows == -1 && pct == 10);
    CHECK(tally_parse_sample("2.5%", &rows, &pct) && pct == 2.5);
    CHECK(tally_parse_sample("100%", &rows, &pct) && pct == 100);
    CHECK(tally_parse_sample("100.0%", &rows, &pct) && pct == 100);
    CHECK(tally_parse_sample("0%", &rows, &pct) && pct == 0);
    CHECK(tally_parse_sample("9223372036854775807", &rows, &pct) && rows == INT64_MAX);
    static const char *const bad[] = {"", "-1", "+1", "1.5", "100.01%", "101%", "10.%",
                                      ".5%", "1e2%", "5 ", " 5", "5x", "%", "10%%",
                                      "9223372036854775808", "inf%", "nan"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (tally_parse_sample(bad[i], &rows, &pct)) CHECK(!bad[i]);
}

int main(void)
{
    TL_RUN(tail_is_the_last_rows);
    TL_RUN(offset_and_limit);
    TL_RUN(sample_count_is_the_bottom_n_in_order);
    TL_RUN(sample_percent_keeps_rows_below_the_bar);
    TL_RUN(row_number_counts_across_batches);
    TL_RUN(parse_sample_sizes);
    return tl_test_summary(__FILE__);
}
