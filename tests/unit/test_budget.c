/*
 * test_budget.c -- the memory budget (lib/core/budget.c) and spill files
 * (formats/spill.c): the size syntax, reservations refused past the limit
 * (also from several threads at once), and blocks of every column type
 * written and read back equal, slices and nulls included.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "../../formats/spill.h"
#include "../../lib/core/budget.h"
#include "tl_test.h"

TL_TEST(size_syntax)
{
    static const struct {
        const char *s;
        uint64_t v;
    } ok[] = {
        {"500MB", 500000000ull}, {"4GiB", 4294967296ull}, {"1.5kb", 1500},
        {"2K", 2000}, {"100", 100}, {"3mib", 3145728}, {"1TB", 1000000000000ull},
        {"1tib", 1099511627776ull}, {"7b", 7}, {"0.5KiB", 512}, {"2g", 2000000000ull},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        uint64_t v = 0;
        CHECK(tl_size_parse(ok[i].s, &v));
        CHECK(v == ok[i].v);
    }
    static const char *const bad[] = {"", "MB", "-1", "0", "0.4", "1.5XB", "12Q", "101%",
                                      "0%", "%", "1 MB", "nan", "1e30TB", NULL};
    for (int i = 0; bad[i]; i++) {
        uint64_t v;
        CHECK(!tl_size_parse(bad[i], &v));
    }
    uint64_t half = 0;
    CHECK(tl_size_parse("50%", &half));
    CHECK(half == tl_mem_physical() / 2 || half + 1 == tl_mem_physical() / 2 + 1);
    CHECK(tl_budget_default() <= tl_mem_physical() / 5 * 4);
    CHECK(tl_budget_default() > 0);
    char t[32];
    tl_size_text(1000, t, sizeof t);
    CHECK(strcmp(t, "1000 bytes") == 0);
    tl_size_text(3 << 20, t, sizeof t);
    CHECK(strcmp(t, "3 MiB") == 0);
    tl_size_text(1536, t, sizeof t);
    CHECK(strcmp(t, "1.5 KiB") == 0);
}

TL_TEST(reservations)
{
    TlBudget b;
    tl_budget_init(&b, 1000);
    TlReservation r1 = {&b, 0}, r2 = {&b, 0}, none = {NULL, 0};
    CHECK(tl_reserve_grow(&r1, 600));
    CHECK(!tl_reserve_grow(&r2, 401)); /* would pass the limit: nothing taken */
    CHECK(r2.held == 0);
    CHECK(tl_reserve_grow(&r2, 400));
    CHECK(!tl_reserve_grow(&r1, 1));
    tl_reserve_shrink(&r1, 100);
    CHECK(tl_reserve_grow(&r2, 100));
    CHECK(atomic_load(&b.used) == 1000 && atomic_load(&b.peak) == 1000);
    tl_reserve_release(&r1);
    tl_reserve_release(&r2);
    tl_reserve_shrink(&r2, 5); /* nothing held: nothing given */
    CHECK(atomic_load(&b.used) == 0);
    CHECK(!tl_reserve_grow(&r1, 1001));
    CHECK(tl_reserve_grow(&none, (uint64_t)1 << 62)); /* no budget: never refused */
    TlError err = {0};
    b.limit_text = "1KB";
    CHECK(tl_budget_too_small(&b, "sort", 4096, &err) == TL_ERR_DATA);
    CHECK(strcmp(err.msg, "sort needs at least 4 KiB of memory; the memory limit is "
                          "1000 bytes (1KB) (raise --memory-limit)") == 0);
}

typedef struct Racer {
    TlBudget *b;
    int got;
} Racer;

static void *race(void *arg)
{
    Racer *r = arg;
    TlReservation res = {r->b, 0};
    for (int i = 0; i < 100000; i++)
        if (tl_reserve_grow(&res, 3)) r->got++;
    return NULL;
}

TL_TEST(reservations_from_threads_never_pass_the_limit)
{
    TlBudget b;
    tl_budget_init(&b, 30000);
    Racer r[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        r[i] = (Racer){&b, 0};
        pthread_create(&t[i], NULL, race, &r[i]);
    }
    int total = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        total += r[i].got;
    }
    CHECK_EQ_INT(total, 10000);
    CHECK(atomic_load(&b.used) == 30000 && atomic_load(&b.peak) == 30000);
}

/* Whether a and b hold the same values (bits of floats included). */
static bool same(const TlArray *a, const TlArray *b)
{
    if (a->length != b->length || a->null_count != b->null_count) return false;
    if (a->type != b->type) return false;
    for (int64_t i = 0; i < a->length; i++) {
        bool va = tl_array_valid(a, i), vb = tl_array_valid(b, i);
        if (va != vb) return false;
        if (!va) continue;
        switch (a->type) {
        case TL_TBOOL:
            if (tl_array_bool(a, i) != tl_array_bool(b, i)) return false;
            break;
        case TL_TDATE:
            if (tl_array_i32(a)[i] != tl_array_i32(b)[i]) return false;
            break;
        case TL_TSTRING: {
            const TlView *x = tl_array_views(a) + i, *y = tl_array_views(b) + i;
            if (!tl_view_eq(x, a->data, y, b->data)) return false;
            break;
        }
        default:
            if (memcmp(&tl_array_i64(a)[i], &tl_array_i64(b)[i], 8)) return false;
        }
    }
    return true;
}

TL_TEST(spill_blocks_round_trip)
{
    TlBudget budget;
    TlSpill *f = NULL;
    TlError err = {0};
    tl_budget_init(&budget, 1 << 20);
    budget.temp_dir = "/tmp";
    CHECK(tl_spill_open(&budget, false, &f, &err) == TL_OK);
    if (!f) return;
    TlBuilder bi, bf, bs, bd, bb;
    tl_builder_init(&bi, TL_TINT64);
    tl_builder_init(&bf, TL_TFLOAT64);
    tl_builder_init(&bs, TL_TSTRING);
    tl_builder_init(&bd, TL_TDATE);
    tl_builder_init(&bb, TL_TBOOL);
    for (int i = 0; i < 1000; i++) {
        if (i % 7 == 3) tl_builder_append_null(&bi);
        else tl_builder_append_i64(&bi, (int64_t)i * 1000003 - 5000);
        tl_builder_append_f64(&bf, i % 5 == 0 ? -0.0 : i % 5 == 1 ? NAN : i / 3.0);
        if (i % 11 == 0) tl_builder_append_null(&bs);
        else if (i % 2) tl_builder_append_str(&bs, "short", 5);
        else tl_builder_append_str(&bs, "a string longer than twelve bytes", 20 + i % 13);
        tl_builder_append_i32(&bd, i - 500);
        if (i % 13 == 0) tl_builder_append_null(&bb);
        else tl_builder_append_bool(&bb, i % 3 == 0);
    }
    TlArray *whole[6] = {tl_builder_finish(&bi), tl_builder_finish(&bf), tl_builder_finish(&bs),
                         tl_builder_finish(&bd), tl_builder_finish(&bb),
                         tl_array_new_null(TL_TNULL, 1000)};
    /* three blocks: slices at odd offsets (bitmaps not byte-aligned) */
    static const int64_t off[] = {0, 333, 901}, len[] = {333, 568, 99};
    TlArray *put[3][6];
    uint64_t at = 0;
    for (int k = 0; k < 3; k++) {
        for (int c = 0; c < 6; c++) put[k][c] = tl_array_slice(whole[c], off[k], len[k]);
        size_t raw = 0;
        CHECK(tl_spill_put(f, put[k], 6, len[k], &raw, &err) == TL_OK);
        CHECK(raw > 0);
    }
    CHECK(atomic_load(&budget.spilled) == tl_spill_end(f));
    for (int k = 0; k < 3; k++) {
        TlArray *got[6];
        int64_t n = 0;
        CHECK(tl_spill_get(f, &at, got, 6, &n, &err) == TL_OK);
        CHECK(n == len[k]);
        for (int c = 0; c < 6; c++) {
            CHECK(same(put[k][c], got[c]));
            tl_array_release(got[c]);
            tl_array_release(put[k][c]);
        }
    }
    CHECK(at == tl_spill_end(f));
    CHECK(atomic_load(&budget.read_back) == tl_spill_end(f));
    TlArray *none[6];
    int64_t n;
    CHECK(tl_spill_get(f, &at, none, 6, &n, &err) == TL_ERR_IO); /* past the end */
    for (int c = 0; c < 6; c++) tl_array_release(whole[c]);
    tl_spill_close(f);
}

TL_TEST(spill_dir_errors)
{
    TlError err = {0};
    CHECK(tl_spill_check_dir("/tmp", "--temp-dir", &err) == TL_OK);
    CHECK(tl_spill_check_dir("/nonexistent-dir-of-tally", "--temp-dir", &err) == TL_ERR_USAGE);
    CHECK(strcmp(err.msg, "cannot create a spill file in \"/nonexistent-dir-of-tally\" "
                          "(--temp-dir): No such file or directory") == 0);
    TlBudget b;
    TlSpill *f = NULL;
    tl_budget_init(&b, 1000);
    b.temp_dir = "/nonexistent-dir-of-tally";
    b.temp_from = "$TMPDIR";
    CHECK(tl_spill_open(&b, true, &f, &err) == TL_ERR_USAGE && !f);
    CHECK(strcmp(err.msg, "cannot create a spill file in \"/nonexistent-dir-of-tally\" "
                          "($TMPDIR): No such file or directory") == 0);
}

int main(void)
{
    TL_RUN(size_syntax);
    TL_RUN(reservations);
    TL_RUN(reservations_from_threads_never_pass_the_limit);
    TL_RUN(spill_blocks_round_trip);
    TL_RUN(spill_dir_errors);
    return tl_test_summary(__FILE__);
}
