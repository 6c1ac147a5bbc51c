/*
 * test_compress_stream.c -- streamed zstd inputs (formats/compress/compress.c,
 * "Streaming"): tl_input_load_stream hands out the buffer while a thread
 * decompresses it; tl_input_wait gives growing prefixes that are the
 * decompressed bytes; tl_input_finish / tl_input_check_streams report the
 * end; a corrupt stream fails with the whole-buffer path's message, also
 * through tl_input_load; the restart cache serves the same stream; frames
 * without a content size and gzip stream too, their size known at the
 * end; small inputs are decompressed whole.
 */
#include "tl_test.h"

#include "../../formats/compress.h"
#include "../../formats/fmt_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

/* A run's context for the loads below: its inputs (the restart cache, the
 * registry of streams, the held count) live across the calls of a test as
 * across the attempts of a run; its tuning is read anew at each call, so
 * that the TALLY_* variables a test sets take effect. */
static TlCtx g_ctx;

static const TlCtx *cx(void)
{
    tl_tuning_read(&g_ctx.tuning);
    return &g_ctx;
}

#define N_PLAIN ((size_t)3 << 20)

static uint8_t *plain;
static char dir[] = "/tmp/tl_stream_XXXXXX";

static char *path_of(const char *name)
{
    static char buf[256];
    snprintf(buf, sizeof buf, "%s/%s", dir, name);
    return buf;
}

static void write_file(const char *name, const void *p, size_t n)
{
    FILE *f = fopen(path_of(name), "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(p, 1, n, f) == n);
    fclose(f);
}

/* plain compressed with its content size in the frame header */
static uint8_t *zst;
static size_t zst_n;

static void setup_files(void)
{
    uint64_t x = 88172645463325252ull;
    plain = malloc(N_PLAIN);
    for (size_t i = 0; i < N_PLAIN; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        plain[i] = (uint8_t)('a' + (x % 8)); /* compressible, not trivial */
    }
    zst = malloc(ZSTD_compressBound(N_PLAIN));
    zst_n = ZSTD_compress(zst, ZSTD_compressBound(N_PLAIN), plain, N_PLAIN, 3);
    CHECK(!ZSTD_isError(zst_n));
    write_file("a.csv.zst", zst, zst_n);
}

TL_TEST(stream_prefixes_are_the_bytes)
{
    TlBuf *b = NULL;
    TlError err;
    size_t ready = 0, want = 1;
    tl_compress_cache_free(cx());
    setenv("TALLY_STREAM_STEP", "4096", 1);
    CHECK((tl_input_load_stream(cx(), path_of("a.csv.zst"), &b, &err)) == TL_OK);
    CHECK(b && b->size == N_PLAIN);
    while (b && want <= N_PLAIN) {
        CHECK((tl_input_wait(b, want, &ready, &err)) == TL_OK);
        CHECK(ready >= want && ready <= N_PLAIN);
        CHECK(memcmp(b->data, plain, ready) == 0);
        want = ready + 100000;
    }
    CHECK((tl_input_finish(b, &err)) == TL_OK);
    CHECK(!tl_input_streaming(b));
    CHECK(memcmp(b->data, plain, N_PLAIN) == 0);
    CHECK((tl_input_check_streams(cx(), &err)) == TL_OK);
    tl_buf_release(b);
    tl_compress_cache_free(cx());
    unsetenv("TALLY_STREAM_STEP");
}

TL_TEST(stream_cache_serves_the_same_buffer)
{
    TlBuf *a = NULL, *b = NULL;
    TlError err;
    setenv("TALLY_STREAM_STEP", "4096", 1);
    CHECK((tl_input_load_stream(cx(), path_of("a.csv.zst"), &a, &err)) == TL_OK);
    CHECK((tl_input_load_stream(cx(), path_of("a.csv.zst"), &b, &err)) == TL_OK);
    CHECK(a == b);
    /* tl_input_load waits for the end */
    tl_buf_release(b);
    b = NULL;
    CHECK((tl_input_load(cx(), path_of("a.csv.zst"), &b, &err)) == TL_OK);
    CHECK(b == a && !tl_input_streaming(b));
    tl_buf_release(a);
    tl_buf_release(b);
    tl_compress_cache_free(cx());
    unsetenv("TALLY_STREAM_STEP");
}

TL_TEST(corrupt_stream_fails_as_the_whole_path)
{
    uint8_t *bad = malloc(zst_n);
    TlBuf *b = NULL, *whole = NULL;
    TlError err, werr;
    size_t ready = 0;
    memcpy(bad, zst, zst_n);
    for (size_t i = zst_n - 200; i < zst_n - 190; i++) bad[i] ^= 0x5a;
    write_file("bad.csv.zst", bad, zst_n);
    CHECK(tl_decompress(NULL, TL_COMP_ZSTD, path_of("bad.csv.zst"), bad, zst_n, &whole,
                        &werr) == TL_ERR_DATA);
    CHECK(whole == NULL);
    setenv("TALLY_STREAM_STEP", "4096", 1);
    CHECK((tl_input_load_stream(cx(), path_of("bad.csv.zst"), &b, &err)) == TL_OK);
    if (b) {
        /* the start is there; the end is the error */
        CHECK((tl_input_wait(b, 1000, &ready, &err)) == TL_OK);
        CHECK(tl_input_wait(b, N_PLAIN, &ready, &err) == TL_ERR_DATA);
        CHECK_EQ_STR(err.msg, werr.msg);
        CHECK(tl_input_finish(b, &err) == TL_ERR_DATA);
        CHECK_EQ_STR(err.msg, werr.msg);
        CHECK(tl_input_check_streams(cx(), &err) == TL_ERR_DATA);
        CHECK_EQ_STR(err.msg, werr.msg);
        tl_buf_release(b);
        /* only the restart cache holds it now: no reader of this run */
        CHECK(tl_input_check_streams(cx(), &err) == TL_OK);
    }
    tl_compress_cache_free(cx());
    CHECK(tl_input_check_streams(cx(), &err) == TL_OK); /* no live stream left */
    b = NULL;
    CHECK(tl_input_load(cx(), path_of("bad.csv.zst"), &b, &err) == TL_ERR_DATA);
    CHECK(b == NULL);
    CHECK_EQ_STR(err.msg, werr.msg);
    tl_compress_cache_free(cx());
    unsetenv("TALLY_STREAM_STEP");
    free(bad);
}

/* Mappings of /proc/self/maps that overlap [p, p + n). */
static int maps_over(const uint8_t *p, size_t n)
{
    FILE *f = fopen("/proc/self/maps", "r");
    unsigned long lo, hi;
    char line[512];
    int count = 0;
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo < (uintptr_t)(p + n) &&
            hi > (uintptr_t)p)
            count++;
    fclose(f);
    return count;
}

/* Read a 1 KiB-window stream as a reader does: wait, check, give back
 * (tl_input_drop_read) in morsels of `morsel` bytes.  Recycled chunks (moved ahead
 * of the output, then written by libzstd over their old bytes) must hold
 * exactly the decompressed bytes, the zeros past the size stay zeros, and
 * a moved chunk is a mapping of its own (none with TALLY_NO_RECYCLE). */
static void read_giving_back(const char *name, const uint8_t *want, size_t n,
                             size_t morsel, int *maps)
{
    TlBuf *b = NULL;
    TlError err;
    size_t pos = 0, ready = 0, page = (size_t)sysconf(_SC_PAGESIZE);
    bool ok = true;
    tl_compress_cache_free(cx());
    setenv("TALLY_STREAM_STEP", "8192", 1);
    CHECK((tl_input_load_stream(cx(), path_of(name), &b, &err)) == TL_OK);
    CHECK(b && b->size == n);
    while (b && pos < n) {
        size_t end = pos + morsel;
        if (end > n) end = n;
        CHECK((tl_input_wait(b, end, &ready, &err)) == TL_OK);
        if (memcmp(b->data + pos, want + pos, end - pos) != 0) ok = false;
        tl_input_drop_read(b, pos, end);
        pos = end;
    }
    CHECK(ok);
    CHECK((tl_input_finish(b, &err)) == TL_OK);
    if (b) {
        *maps = maps_over(b->data, b->size);
        for (size_t i = n; i % page; i++)
            if (b->data[i] != 0) ok = false;
        CHECK(ok);
        /* dropped pages read as zeros: the stream is decompressed anew */
        CHECK(b->data[page] == 0);
    }
    tl_buf_release(b);
    tl_compress_cache_free(cx());
    unsetenv("TALLY_STREAM_STEP");
}

TL_TEST(given_back_pages_are_recycled_ahead)
{
    size_t n = ((size_t)8 << 20) + 1000;
    uint8_t *p = malloc(n), *z = malloc(ZSTD_compressBound(n));
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    size_t zn;
    int maps = 0, tries = 0;
    for (size_t i = 0; i < n; i++) p[i] = plain[(i * 7) % N_PLAIN];
    ZSTD_CCtx_setParameter(cc, ZSTD_c_windowLog, 10);
    zn = ZSTD_compress2(cc, z, ZSTD_compressBound(n), p, n);
    CHECK(!ZSTD_isError(zn));
    write_file("w.csv.zst", z, zn);
    /* morsels of odd sizes: chunks with a kept page are dropped instead */
    read_giving_back("w.csv.zst", p, n, 300 << 10, &maps);
    read_giving_back("w.csv.zst", p, n, 777777, &maps);
    /* the decompressor does not wait for readers: a reader held up long
     * enough (a loaded machine) finds it done and nothing to recycle, so
     * at least one of a few runs must show moved chunks */
    do
        read_giving_back("w.csv.zst", p, n, (size_t)1 << 20, &maps);
    while (maps <= 1 && ++tries < 8);
    CHECK(maps > 1);
    /* without the filler thread (prefaults ahead, drops partial chunks) */
    setenv("TALLY_NO_PREFILL", "1", 1);
    read_giving_back("w.csv.zst", p, n, 300 << 10, &maps);
    unsetenv("TALLY_NO_PREFILL");
    setenv("TALLY_NO_RECYCLE", "1", 1);
    read_giving_back("w.csv.zst", p, n, (size_t)1 << 20, &maps);
    CHECK(maps == 1);
    unsetenv("TALLY_NO_RECYCLE");
    unlink(path_of("w.csv.zst"));
    ZSTD_freeCCtx(cc);
    free(p);
    free(z);
}

/* gzip of p[0..n) into out (cap bytes); its size. */
static size_t gzip_of(const uint8_t *p, size_t n, uint8_t *out, size_t cap)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    CHECK(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    z.next_in = (Bytef *)(uintptr_t)p;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END);
    deflateEnd(&z);
    return cap - z.avail_out;
}

/* A stream of unknown size: b->size is its reservation until the end,
 * tl_input_size its size once it ended, zeros past it; tl_input_load
 * gives a buffer of exactly its bytes. */
static void check_unannounced(const char *name)
{
    TlBuf *b = NULL;
    TlError err;
    size_t ready = 0;
    CHECK((tl_input_load_stream(cx(), path_of(name), &b, &err)) == TL_OK);
    CHECK(b && tl_input_is_stream(b) && b->size > N_PLAIN);
    if (!b) return;
    CHECK((tl_input_wait(b, 1000, &ready, &err)) == TL_OK);
    CHECK(ready >= 1000 && memcmp(b->data, plain, 1000) == 0);
    CHECK((tl_input_wait(b, b->size, &ready, &err)) == TL_OK);
    CHECK(ready == N_PLAIN && tl_input_size(b) == N_PLAIN && !tl_input_streaming(b));
    CHECK(memcmp(b->data, plain, N_PLAIN) == 0);
    for (size_t i = N_PLAIN; i < N_PLAIN + 8192; i++)
        if (b->data[i]) {
            CHECK(b->data[i] == 0);
            break;
        }
    tl_buf_release(b);
    tl_compress_cache_free(cx());
    b = NULL;
    CHECK((tl_input_load(cx(), path_of(name), &b, &err)) == TL_OK);
    CHECK(b && b->size == N_PLAIN && memcmp(b->data, plain, N_PLAIN) == 0);
    tl_buf_release(b);
    tl_compress_cache_free(cx());
}

TL_TEST(unannounced_size_streams_and_small_inputs_are_whole)
{
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    uint8_t *out = malloc(ZSTD_compressBound(N_PLAIN) + 64);
    ZSTD_outBuffer o = {out, ZSTD_compressBound(N_PLAIN) + 64, 0};
    ZSTD_inBuffer in = {plain, N_PLAIN / 2, 0};
    TlBuf *b = NULL;
    TlError err;
    int64_t now = 0, peak = 0;
    /* streaming compression without a pledged size: no content size */
    while (in.pos < in.size)
        CHECK(!ZSTD_isError(ZSTD_compressStream2(cc, &o, &in, ZSTD_e_continue)));
    in.size = N_PLAIN;
    while (ZSTD_compressStream2(cc, &o, &in, ZSTD_e_end) != 0) {
    }
    write_file("u.csv.zst", out, o.pos);
    CHECK(ZSTD_getFrameContentSize(out, o.pos) == ZSTD_CONTENTSIZE_UNKNOWN);
    check_unannounced("u.csv.zst");
    write_file("u.csv.gz", out, gzip_of(plain, N_PLAIN, out, o.size));
    check_unannounced("u.csv.gz");
    /* every byte held was given back with its buffer */
    tl_decompressed_held(cx(), &now, &peak);
    CHECK(now == 0 && peak >= (int64_t)N_PLAIN);
    /* under 1 MiB without TALLY_STREAM_STEP: whole, size announced or not */
    o.pos = ZSTD_compress(out, ZSTD_compressBound(N_PLAIN), plain, 1000, 3);
    write_file("s.csv.zst", out, o.pos);
    CHECK((tl_input_load_stream(cx(), path_of("s.csv.zst"), &b, &err)) == TL_OK);
    CHECK(b && !tl_input_is_stream(b) && b->size == 1000);
    tl_buf_release(b);
    tl_compress_cache_free(cx());
    write_file("s.csv.gz", out, gzip_of(plain, 1000, out, o.size));
    b = NULL;
    CHECK((tl_input_load_stream(cx(), path_of("s.csv.gz"), &b, &err)) == TL_OK);
    CHECK(b && !tl_input_is_stream(b) && b->size == 1000);
    CHECK(b && memcmp(b->data, plain, 1000) == 0);
    tl_buf_release(b);
    tl_compress_cache_free(cx());
    ZSTD_freeCCtx(cc);
    free(out);
}

int main(void)
{
    TlError ierr;
    CHECK(mkdtemp(dir) != NULL);
    CHECK(tl_inputs_new(&g_ctx.inputs, &ierr) == TL_OK);
    setup_files();
    TL_RUN(stream_prefixes_are_the_bytes);
    TL_RUN(stream_cache_serves_the_same_buffer);
    TL_RUN(corrupt_stream_fails_as_the_whole_path);
    TL_RUN(given_back_pages_are_recycled_ahead);
    TL_RUN(unannounced_size_streams_and_small_inputs_are_whole);
    unlink(path_of("a.csv.zst"));
    unlink(path_of("bad.csv.zst"));
    unlink(path_of("u.csv.zst"));
    unlink(path_of("s.csv.zst"));
    rmdir(dir);
    free(plain);
    free(zst);
    tl_inputs_free(g_ctx.inputs);
    return tl_test_summary(__FILE__);
}
