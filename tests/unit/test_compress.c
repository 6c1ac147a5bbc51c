/* run-unit: weight=7 */
/*
 * test_compress.c -- formats/compress/compress.c: sniffing, round trips through the
 * compressor and decompressor (gzip and zstd, empty to multi-MiB, several
 * output chunks), concatenated members and frames, every truncation and
 * byte flips of small streams (errors name the offset, never a short
 * result), compressor reset, level checks, the sink's compressing layer
 * (reset, commit, bad level, standard output), zstd's golden frames when the
 * shared corpora are present, and an allocation-failure loop.
 */
#include "tl_test.h"

#include "../../formats/compress.h"
#include "../../formats/format.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>


typedef struct Bytes {
    uint8_t *p;
    size_t n, cap;
} Bytes;

static TlStatus emit(void *ctx, const uint8_t *d, size_t n, TlError *err)
{
    Bytes *b = ctx;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->n + n) cap *= 2;
        uint8_t *g = realloc(b->p, cap);
        if (!g) return tl_error_oom(err);
        b->p = g;
        b->cap = cap;
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
    return TL_OK;
}

/* Compress src in pieces of `piece` bytes; returns the stream (malloc'd). */
static TlStatus do_compress(TlCompression c, int level, const uint8_t *src, size_t n,
                         size_t piece, Bytes *out, TlError *err)
{
    TlCompressor *z = NULL;
    memset(out, 0, sizeof *out);
    TL_TRY(tl_compressor_new(c, level, &z, err));
    TlStatus st = TL_OK;
    for (size_t off = 0; off < n && st == TL_OK; off += piece) {
        size_t k = n - off < piece ? n - off : piece;
        st = tl_compressor_write(z, src + off, k, false, emit, out, err);
    }
    if (st == TL_OK) st = tl_compressor_write(z, NULL, 0, true, emit, out, err);
    tl_compressor_free(z);
    return st;
}

static uint8_t *sample(size_t n, unsigned seed)
{
    uint8_t *p = malloc(n ? n : 1);
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        /* compressible: CSV-like digits and separators, some noise */
        p[i] = (i % 17 == 16) ? '\n' : (i % 5 == 4) ? ',' : (uint8_t)('0' + (x >> 16) % 10);
        if ((x >> 8) % 97 == 0) p[i] = (uint8_t)(x >> 24);
    }
    return p;
}

static void round_trip(TlCompression c, int level, size_t n, size_t piece)
{
    uint8_t *src = sample(n, (unsigned)n);
    Bytes z;
    TlError err = {0};
    TlBuf *out = NULL;
    CHECK_EQ_INT(do_compress(c, level, src, n, piece, &z, &err), TL_OK);
    CHECK(tl_compression_sniff(z.p, z.n) == c);
    CHECK_EQ_INT(tl_decompress(NULL, c, "x", z.p, z.n, &out, &err), TL_OK);
    CHECK(out != NULL);
    if (out) {
        CHECK(out->size == n);
        CHECK(out->size == n && memcmp(out->data, src, n) == 0);
    }
    tl_buf_release(out);
    free(z.p);
    free(src);
}

TL_TEST(test_names_and_sniff)
{
    CHECK(tl_compression_from_name("gz") == TL_COMP_GZIP);
    CHECK(tl_compression_from_name("ZST") == TL_COMP_ZSTD);
    CHECK(tl_compression_from_name("zstd") == TL_COMP_ZSTD);
    CHECK(tl_compression_from_name(NULL) == TL_COMP_NONE);
    CHECK(tl_compression_from_name("bz2") == TL_COMP_NONE);
    CHECK(tl_compression_sniff((const uint8_t *)"\x1f\x8b\x08", 3) == TL_COMP_GZIP);
    CHECK(tl_compression_sniff((const uint8_t *)"\x1f", 1) == TL_COMP_NONE);
    CHECK(tl_compression_sniff((const uint8_t *)"\x28\xb5\x2f\xfd", 4) == TL_COMP_ZSTD);
    CHECK(tl_compression_sniff((const uint8_t *)"\x5a\x2a\x4d\x18", 4) == TL_COMP_ZSTD);
    CHECK(tl_compression_sniff((const uint8_t *)"a,b\n", 4) == TL_COMP_NONE);
    CHECK(tl_compression_sniff(NULL, 0) == TL_COMP_NONE);
    CHECK_EQ_STR(tl_compression_name(TL_COMP_GZIP), "gzip");
    CHECK_EQ_STR(tl_compression_name(TL_COMP_ZSTD), "zstd");
}

TL_TEST(test_round_trips)
{
    static const size_t sizes[] = {0, 1, 100, 65535, 65536, 300000, 3 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        round_trip(TL_COMP_GZIP, 0, sizes[i], 4096);
        round_trip(TL_COMP_ZSTD, 0, sizes[i], 4096);
    }
    round_trip(TL_COMP_GZIP, 1, 200000, 200000);
    round_trip(TL_COMP_GZIP, 9, 200000, 7);
    round_trip(TL_COMP_ZSTD, 1, 200000, 200000);
    round_trip(TL_COMP_ZSTD, 19, 200000, 999);
}

TL_TEST(test_levels)
{
    TlError err = {0};
    TlCompressor *z = NULL;
    CHECK_EQ_INT(tl_compress_level_check(TL_COMP_GZIP, 9, &err), TL_OK);
    CHECK_EQ_INT(tl_compress_level_check(TL_COMP_GZIP, 10, &err), TL_ERR_USAGE);
    CHECK_EQ_STR(err.msg, "--compress-level: gzip levels are 1 to 9, got 10");
    CHECK_EQ_INT(tl_compress_level_check(TL_COMP_ZSTD, 22, &err), TL_OK);
    CHECK_EQ_INT(tl_compress_level_check(TL_COMP_ZSTD, 0, &err), TL_ERR_USAGE);
    CHECK_EQ_INT(tl_compressor_new(TL_COMP_GZIP, 12, &z, &err), TL_ERR_USAGE);
    CHECK(z == NULL);
    CHECK_EQ_INT(tl_compressor_new(TL_COMP_NONE, 0, &z, &err), TL_ERR_USAGE);
    CHECK(z == NULL);
}

/* A reset discards the stream begun so far: the output is only what came
 * after it. */
TL_TEST(test_reset)
{
    for (int k = 0; k < 2; k++) {
        TlCompression c = k ? TL_COMP_ZSTD : TL_COMP_GZIP;
        TlCompressor *z = NULL;
        TlError err = {0};
        Bytes out = {0};
        TlBuf *d = NULL;
        CHECK_EQ_INT(tl_compressor_new(c, 0, &z, &err), TL_OK);
        CHECK_EQ_INT(tl_compressor_write(z, "first,", 6, false, emit, &out, &err), TL_OK);
        out.n = 0; /* the sink truncates its file */
        CHECK_EQ_INT(tl_compressor_reset(z, &err), TL_OK);
        CHECK_EQ_INT(tl_compressor_write(z, "second", 6, true, emit, &out, &err), TL_OK);
        CHECK_EQ_INT(tl_decompress(NULL, c, "x", out.p, out.n, &d, &err), TL_OK);
        CHECK(d && d->size == 6 && memcmp(d->data, "second", 6) == 0);
        tl_buf_release(d);
        tl_compressor_free(z);
        free(out.p);
    }
}

static void concat_check(TlCompression c)
{
    Bytes a, b;
    TlError err = {0};
    TlBuf *d = NULL;
    CHECK_EQ_INT(do_compress(c, 0, (const uint8_t *)"k,v\n1,2\n", 8, 8, &a, &err), TL_OK);
    CHECK_EQ_INT(do_compress(c, 0, (const uint8_t *)"3,4\n", 4, 4, &b, &err), TL_OK);
    uint8_t *both = malloc(a.n + b.n + 8);
    memcpy(both, a.p, a.n);
    memcpy(both + a.n, b.p, b.n);
    CHECK_EQ_INT(tl_decompress(NULL, c, "x", both, a.n + b.n, &d, &err), TL_OK);
    CHECK(d && d->size == 12 && memcmp(d->data, "k,v\n1,2\n3,4\n", 12) == 0);
    tl_buf_release(d);
    d = NULL;
    /* garbage after the last member/frame */
    memcpy(both + a.n + b.n, "garbage!", 8);
    CHECK_EQ_INT(tl_decompress(NULL, c, "x", both, a.n + b.n + 8, &d, &err), TL_ERR_DATA);
    CHECK(d == NULL);
    free(both);
    free(a.p);
    free(b.p);
}

TL_TEST(test_concatenated)
{
    concat_check(TL_COMP_GZIP);
    concat_check(TL_COMP_ZSTD);
}

/* Every truncation fails with a message naming the file (never a short
 * result); so does every single-byte flip that the decoder notices, and a
 * flip it does not notice must still give the full length. */
static void damage_check(TlCompression c)
{
    uint8_t *src = sample(5000, 7);
    Bytes z;
    TlError err = {0};
    CHECK_EQ_INT(do_compress(c, 0, src, 5000, 5000, &z, &err), TL_OK);
    for (size_t cut = 0; cut < z.n; cut++) {
        TlBuf *d = NULL;
        TlStatus st = tl_decompress(NULL, c, "cut.bin", z.p, cut, &d, &err);
        CHECK_EQ_INT(st, TL_ERR_DATA);
        CHECK(d == NULL);
        CHECK(strncmp(err.msg, "\"cut.bin\": ", 11) == 0);
        CHECK(strstr(err.msg, " at byte ") != NULL);
        tl_buf_release(d);
    }
    for (size_t i = 0; i < z.n; i++) {
        TlBuf *d = NULL;
        z.p[i] ^= 0x10;
        TlStatus st = tl_decompress(NULL, c, "flip.bin", z.p, z.n, &d, &err);
        z.p[i] ^= 0x10;
        if (st == TL_OK) {
            /* only a header flag the checksums do not cover, such as gzip's
               OS byte or mtime, may go unnoticed */
            CHECK(d && d->size == 5000 && memcmp(d->data, src, 5000) == 0);
        } else {
            CHECK_EQ_INT(st, TL_ERR_DATA);
            CHECK(strncmp(err.msg, "\"flip.bin\": ", 12) == 0);
        }
        tl_buf_release(d);
    }
    free(z.p);
    free(src);
}

TL_TEST(test_damage)
{
    damage_check(TL_COMP_GZIP);
    damage_check(TL_COMP_ZSTD);
}

TL_TEST(test_messages)
{
    TlError err = {0};
    TlBuf *d = NULL;
    CHECK_EQ_INT(tl_decompress(NULL, TL_COMP_GZIP, "e.gz", (const uint8_t *)"", 0, &d, &err),
                 TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, "\"e.gz\": truncated gzip stream: it ends at byte 0, inside a member");
    CHECK_EQ_INT(tl_decompress(NULL, TL_COMP_ZSTD, "e.zst", (const uint8_t *)"", 0, &d, &err),
                 TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, "\"e.zst\": truncated zstd stream: it ends at byte 0, inside a frame");
    CHECK_EQ_INT(tl_decompress(NULL, TL_COMP_GZIP, "p.gz", (const uint8_t *)"a,b\n", 4, &d, &err),
                 TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, "\"p.gz\": not gzip data: no gzip magic number at byte 0");
    CHECK_EQ_INT(tl_decompress(NULL, TL_COMP_ZSTD, "p.zst", (const uint8_t *)"a,b\n", 4, &d, &err),
                 TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, "\"p.zst\": not zstd data: no zstd magic number at byte 0");
    CHECK(d == NULL);
}

/* zstd's golden frames (shared corpora; skipped when absent).  With
 * libzstd < 1.5.6, zeroSeq_2B.zst fails and the error frames decode (see
 * zstd-golden/SOURCE.md): then only "no crash, a clean status" is
 * checked for those. */
static Bytes slurp(const char *path)
{
    Bytes b = {0};
    FILE *f = fopen(path, "rb");
    if (!f) return b;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    b.p = malloc(n > 0 ? (size_t)n : 1);
    b.n = fread(b.p, 1, n > 0 ? (size_t)n : 0, f);
    fclose(f);
    return b;
}

TL_TEST(test_zstd_golden)
{
    static const struct { const char *file; long size; bool fixed_in_156; } good[] = {
        {"golden-decompression/block-128k.zst", 131068, false},
        {"golden-decompression/empty-block.zst", 0, false},
        {"golden-decompression/rle-first-block.zst", 1048576, false},
        {"golden-decompression/zeroSeq_2B.zst", -1, true},
    };
    static const char *const bad[] = {
        "golden-decompression-errors/off0.bin.zst",
        "golden-decompression-errors/truncated_huff_state.zst",
        "golden-decompression-errors/zeroSeq_extraneous.zst",
    };
    bool new_lib = ZSTD_versionNumber() >= 10506;
    char path[1024], golden[512];
    TlError err = {0};
    snprintf(golden, sizeof golden, "%s/zstd-golden/tests", tl_test_corpora());
    if (tl_test_corpora_missing(golden)) return;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", golden, good[i].file);
        Bytes b = slurp(path);
        TlBuf *d = NULL;
        TlStatus st = tl_decompress(NULL, TL_COMP_ZSTD, good[i].file, b.p, b.n, &d, &err);
        if (!good[i].fixed_in_156 || new_lib) {
            CHECK_EQ_INT(st, TL_OK);
            if (good[i].size >= 0) CHECK(d && (long)d->size == good[i].size);
        } else {
            CHECK(st == TL_OK || st == TL_ERR_DATA); /* libzstd 1.5.4 limitation */
        }
        tl_buf_release(d);
        free(b.p);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", golden, bad[i]);
        Bytes b = slurp(path);
        TlBuf *d = NULL;
        TlStatus st = tl_decompress(NULL, TL_COMP_ZSTD, bad[i], b.p, b.n, &d, &err);
        if (new_lib) CHECK_EQ_INT(st, TL_ERR_DATA);
        else CHECK(st == TL_OK || st == TL_ERR_DATA); /* libzstd 1.5.4 limitation */
        tl_buf_release(d);
        free(b.p);
    }
    /* golden-compression inputs round-trip through both compressors */
    snprintf(path, sizeof path, "%s/golden-compression", golden);
    DIR *dir = opendir(path);
    struct dirent *e;
    int n_files = 0;
    while (dir && (e = readdir(dir))) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/golden-compression/%s", golden, e->d_name);
        Bytes raw = slurp(path);
        for (int k = 0; k < 2; k++) {
            TlCompression c = k ? TL_COMP_ZSTD : TL_COMP_GZIP;
            Bytes z;
            TlBuf *d = NULL;
            CHECK_EQ_INT(do_compress(c, k ? 19 : 9, raw.p, raw.n, 65536, &z, &err), TL_OK);
            CHECK_EQ_INT(tl_decompress(NULL, c, e->d_name, z.p, z.n, &d, &err), TL_OK);
            CHECK(d && d->size == raw.n && memcmp(d->data, raw.p, raw.n) == 0);
            tl_buf_release(d);
            free(z.p);
        }
        free(raw.p);
        n_files++;
    }
    if (dir) closedir(dir);
    CHECK(n_files > 0);
}

/* Every allocation failure in decompression and compression is TL_ERR_OOM
 * (never a crash or a wrong result). */
TL_TEST(test_oom)
{
    uint8_t *src = sample(200000, 3);
    for (int k = 0; k < 2; k++) {
        TlCompression c = k ? TL_COMP_ZSTD : TL_COMP_GZIP;
        Bytes z;
        TlError err = {0};
        CHECK_EQ_INT(do_compress(c, 0, src, 200000, 65536, &z, &err), TL_OK);
        int failures = 0;
        for (uint64_t n = 1; n < 200; n++) {
            TlBuf *d = NULL;
            tl_alloc_fail_at(n);
            TlStatus st = tl_decompress(NULL, c, "x", z.p, z.n, &d, &err);
            tl_alloc_fail_at(0);
            if (st == TL_OK) {
                CHECK(d && d->size == 200000 && memcmp(d->data, src, 200000) == 0);
                tl_buf_release(d);
                break;
            }
            CHECK_EQ_INT(st, TL_ERR_OOM);
            failures++;
        }
        CHECK(failures > 0);
        for (uint64_t n = 1; n < 200; n++) {
            Bytes y;
            tl_alloc_fail_at(n);
            TlStatus st = do_compress(c, 0, src, 200000, 65536, &y, &err);
            tl_alloc_fail_at(0);
            free(y.p);
            if (st == TL_OK) break;
            CHECK_EQ_INT(st, TL_ERR_OOM);
        }
        free(z.p);
    }
    free(src);
}

/* The sink's compressing layer: reset discards, commit ends the stream;
 * standard output cannot compress. */
TL_TEST(test_sink_compression)
{
    char dir[] = "/tmp/tl-compress-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    for (int k = 0; k < 2; k++) {
        char path[128];
        TlSink *s = NULL;
        TlError err = {0};
        TlBuf *d = NULL;
        snprintf(path, sizeof path, "%s/out.csv.%s", dir, k ? "zst" : "gz");
        CHECK_EQ_INT(tl_sink_open(NULL, path, &s, &err), TL_OK);
        CHECK_EQ_INT(tl_sink_set_compression(s, k ? "zst" : "gz", k ? 5 : 2, &err), TL_OK);
        uint8_t *big = sample(300000, 11);
        CHECK_EQ_INT(tl_sink_write(s, big, 300000, &err), TL_OK);
        CHECK_EQ_INT(tl_sink_reset(s, &err), TL_OK);
        CHECK_EQ_INT(tl_sink_write(s, "a,b\n", 4, &err), TL_OK);
        CHECK_EQ_INT(tl_sink_write(s, big, 200000, &err), TL_OK);
        CHECK_EQ_INT(tl_sink_commit(s, &err), TL_OK);
        tl_sink_close(s);
        Bytes f = slurp(path);
        CHECK(tl_compression_sniff(f.p, f.n) == (k ? TL_COMP_ZSTD : TL_COMP_GZIP));
        CHECK_EQ_INT(tl_decompress(NULL, k ? TL_COMP_ZSTD : TL_COMP_GZIP, path, f.p, f.n, &d, &err),
                     TL_OK);
        CHECK(d && d->size == 200004 && memcmp(d->data, "a,b\n", 4) == 0 &&
              memcmp(d->data + 4, big, 200000) == 0);
        tl_buf_release(d);
        free(f.p);
        free(big);
        unlink(path);
        /* a bad level is refused before anything is written */
        CHECK_EQ_INT(tl_sink_open(NULL, path, &s, &err), TL_OK);
        CHECK_EQ_INT(tl_sink_set_compression(s, k ? "zst" : "gz", 99, &err), TL_ERR_USAGE);
        tl_sink_close(s);
        CHECK(access(path, F_OK) != 0);
    }
    TlSink *so = NULL;
    TlError err = {0};
    CHECK_EQ_INT(tl_sink_open(NULL, NULL, &so, &err), TL_OK);
    CHECK_EQ_INT(tl_sink_set_compression(so, "gz", 0, &err), TL_ERR_USAGE);
    CHECK_EQ_STR(err.msg, "compressed output needs a file (-o FILE.gz)");
    CHECK_EQ_INT(tl_sink_set_compression(so, NULL, 0, &err), TL_OK);
    tl_sink_close(so);
    rmdir(dir);
}

int main(void)
{
    TL_RUN(test_names_and_sniff);
    TL_RUN(test_round_trips);
    TL_RUN(test_levels);
    TL_RUN(test_reset);
    TL_RUN(test_concatenated);
    TL_RUN(test_damage);
    TL_RUN(test_messages);
    TL_RUN(test_zstd_golden);
    TL_RUN(test_oom);
    TL_RUN(test_sink_compression);
    return tl_test_summary(__FILE__);
}
