/*
 * test_parquet_thrift.c -- formats/parquet/thrift.c and meta.c: the
 * compact protocol read field by field (every wire type, short and long
 * field headers, lists), and every way bytes can be corrupt: a length or
 * count past the end, a negative count, a field id that does not grow, a
 * wrong wire type, structures nested past the bound, a varint too long, a
 * missing required field, every truncation of a footer and of a page
 * header, and random byte flips (each a clean TL_ERR_DATA naming the file
 * and byte, or a decode that frees cleanly; never a read past the buffer,
 * which the ASan build would catch).
 */
#include "tl_test.h"

#include "../../formats/parquet/meta.h"

#include <stdio.h>
#include <stdlib.h>

/* A compact-protocol writer for building test bytes. */
typedef struct W {
    uint8_t b[8192];
    size_t n;
    int last[16]; /* last field id per struct level */
    int depth;
} W;

static void put(W *w, uint8_t x) { w->b[w->n++] = x; }

static void uvar(W *w, uint64_t v)
{
    while (v >= 0x80) {
        put(w, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    put(w, (uint8_t)v);
}

static void zz(W *w, int64_t v) { uvar(w, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63)); }

static void field(W *w, int id, int type)
{
    int d = id - w->last[w->depth];
    if (d > 0 && d <= 15) {
        put(w, (uint8_t)(d << 4 | type));
    } else {
        put(w, (uint8_t)type);
        zz(w, id);
    }
    w->last[w->depth] = id;
}

static void begin(W *w) { w->last[++w->depth] = 0; }
static void end(W *w)
{
    put(w, 0);
    w->depth--;
}
static void f_i32(W *w, int id, int64_t v) { field(w, id, PQ_T_I32); zz(w, v); }
static void f_i64(W *w, int id, int64_t v) { field(w, id, PQ_T_I64); zz(w, v); }
static void f_str(W *w, int id, const char *s)
{
    field(w, id, PQ_T_BINARY);
    uvar(w, strlen(s));
    memcpy(w->b + w->n, s, strlen(s));
    w->n += strlen(s);
}
static void list(W *w, int elem, int n)
{
    if (n < 15) {
        put(w, (uint8_t)(n << 4 | elem));
    } else {
        put(w, (uint8_t)(0xf0 | elem));
        uvar(w, (uint64_t)n);
    }
}

/* A footer: root + one optional INT64 leaf "x" (TIMESTAMP micros), 3 rows
 * in one row group of one column chunk. */
static void footer(W *w)
{
    memset(w, 0, sizeof *w);
    begin(w);
    f_i32(w, 1, 2);
    field(w, 2, PQ_T_LIST);
    list(w, PQ_T_STRUCT, 2);
    begin(w);
    f_str(w, 4, "schema");
    f_i32(w, 5, 1);
    end(w);
    begin(w);
    f_i32(w, 1, PQ_INT64);
    f_i32(w, 3, PQ_OPTIONAL);
    f_str(w, 4, "x");
    field(w, 10, PQ_T_STRUCT); /* LogicalType */
    begin(w);
    field(w, 8, PQ_T_STRUCT); /* TIMESTAMP */
    begin(w);
    field(w, 1, PQ_T_TRUE);
    field(w, 2, PQ_T_STRUCT); /* TimeUnit */
    begin(w);
    field(w, 2, PQ_T_STRUCT); /* MICROS */
    begin(w);
    end(w);
    end(w);
    end(w);
    end(w);
    end(w);
    f_i64(w, 3, 3);
    field(w, 4, PQ_T_LIST);
    list(w, PQ_T_STRUCT, 1);
    begin(w); /* RowGroup */
    field(w, 1, PQ_T_LIST);
    list(w, PQ_T_STRUCT, 1);
    begin(w); /* ColumnChunk */
    f_i64(w, 2, 4);
    field(w, 3, PQ_T_STRUCT);
    begin(w); /* ColumnMetaData */
    f_i32(w, 1, PQ_INT64);
    field(w, 2, PQ_T_LIST);
    list(w, PQ_T_I32, 2);
    zz(w, PQ_ENC_PLAIN);
    zz(w, PQ_ENC_RLE);
    field(w, 3, PQ_T_LIST);
    list(w, PQ_T_BINARY, 1);
    uvar(w, 1);
    put(w, 'x');
    f_i32(w, 4, PQ_CODEC_SNAPPY);
    f_i64(w, 5, 3);
    f_i64(w, 6, 40);
    f_i64(w, 7, 30);
    f_i64(w, 9, 4);
    end(w);
    end(w);
    f_i64(w, 2, 40);
    f_i64(w, 3, 3);
    end(w);
    f_str(w, 6, "tally test");
    end(w);
}

TL_TEST(test_fields)
{
    W w;
    PqThrift t;
    PqThStruct s;
    TlError err = {0};
    int id, ty, elem;
    int32_t v32, n;
    int64_t v64;
    bool b;
    double d;
    const uint8_t *p;
    uint32_t len;
    memset(&w, 0, sizeof w);
    begin(&w);
    f_i32(&w, 1, -5);
    field(&w, 2, PQ_T_TRUE);
    f_str(&w, 3, "ab");
    field(&w, 4, PQ_T_LIST);
    list(&w, PQ_T_I32, 17);
    for (int i = 0; i < 17; i++) zz(&w, i - 8);
    f_i64(&w, 300, -1234567890123LL); /* long form */
    field(&w, 301, PQ_T_DOUBLE);
    d = 2.5;
    memcpy(w.b + w.n, &d, 8);
    w.n += 8;
    field(&w, 302, PQ_T_I8);
    put(&w, 0xfe);
    end(&w);
    pq_th_init(&t, w.b, w.n, 100, "f.parquet", "footer", &err);
    CHECK_EQ_INT(pq_th_begin(&t, &s, "S"), TL_OK);
    CHECK_EQ_INT(pq_th_field(&t, &s, &id, &ty), TL_OK);
    CHECK_EQ_INT(id, 1);
    CHECK_EQ_INT(pq_th_i32(&t, ty, &v32), TL_OK);
    CHECK_EQ_INT(v32, -5);
    CHECK_EQ_INT(pq_th_field(&t, &s, &id, &ty), TL_OK);
    CHECK_EQ_INT(pq_th_bool(&t, ty, false, &b), TL_OK);
    CHECK(b);
    CHECK_EQ_INT(pq_th_field(&t, &s, &id, &ty), TL_OK);
    CHECK_EQ_INT(pq_th_binary(&t, ty, &p, &len), TL_OK);
    CHECK(len == 2 && memcmp(p, "ab", 2) == 0);
    CHECK_EQ_INT(pq_th_field(&t, &s, &id, &ty), TL_OK);
    CHECK_EQ_INT(pq_th_list(&t, ty, &elem, &n), TL_OK);
    CHECK_EQ_INT(n, 17);
    for (int i = 0; i < n; i++) {
        CHECK_EQ_INT(pq_th_i32(&t, elem, &v32), TL_OK);
        CHECK_EQ_INT(v32, i - 8);
    }
    CHECK_EQ_INT(pq_th_field(&t, &s, &id, &ty), TL_OK);
    CHECK_EQ_INT(id, 300);
    CHECK_EQ_INT(pq_th_i64(&t, ty, &v64), TL_OK);
    CHECK(v64 == -1234567890123LL);
    CHECK_EQ_INT(pq_th_field(&t, &s, &id, &ty), TL_OK);
    CHECK_EQ_INT(pq_th_double(&t, ty, &d), TL_OK);
    CHECK(d == 2.5);
    CHECK_EQ_INT(pq_th_field(&t, &s, &id, &ty), TL_OK);
    CHECK_EQ_INT(pq_th_i64(&t, ty, &v64), TL_OK);
    CHECK_EQ_INT(v64, -2);
    CHECK_EQ_INT(pq_th_field(&t, &s, &id, &ty), TL_OK);
    CHECK_EQ_INT(ty, PQ_T_STOP);
    CHECK_EQ_INT(pq_th_used(&t), w.n);
    /* an i32 read of an i64 field is a type error */
    pq_th_init(&t, w.b, w.n, 0, "f.parquet", "footer", &err);
    CHECK_EQ_INT(pq_th_i32(&t, PQ_T_I64, &v32), TL_ERR_DATA);
}

/* Decode bytes as a FileMetaData; returns the status, err filled. */
static TlStatus decode(const uint8_t *p, size_t n, TlError *err)
{
    PqFileMeta m;
    TlStatus st = pq_meta_decode(p, n, 1000, "f.parquet", &m, err);
    pq_meta_free(&m);
    return st;
}

TL_TEST(test_footer)
{
    W w;
    PqFileMeta m;
    TlError err = {0};
    footer(&w);
    CHECK_EQ_INT(pq_meta_decode(w.b, w.n, 0, "f.parquet", &m, &err), TL_OK);
    CHECK_EQ_INT(m.version, 2);
    CHECK_EQ_INT(m.n_schema, 2);
    CHECK_EQ_INT(m.schema[0].num_children, 1);
    CHECK(m.schema[1].name.n == 1 && m.schema[1].name.p[0] == 'x');
    CHECK_EQ_INT(m.schema[1].type, PQ_INT64);
    CHECK_EQ_INT(m.schema[1].repetition, PQ_OPTIONAL);
    CHECK_EQ_INT(m.schema[1].logical.kind, PQ_LT_TIMESTAMP);
    CHECK_EQ_INT(m.schema[1].logical.unit, PQ_UNIT_MICROS);
    CHECK(m.schema[1].logical.utc);
    CHECK_EQ_INT(m.num_rows, 3);
    CHECK_EQ_INT(m.n_rgs, 1);
    CHECK_EQ_INT(m.rgs[0].num_rows, 3);
    CHECK_EQ_INT(m.rgs[0].n_cols, 1);
    CHECK(m.rgs[0].cols[0].has_meta);
    CHECK_EQ_INT(m.rgs[0].cols[0].meta.codec, PQ_CODEC_SNAPPY);
    CHECK_EQ_INT(m.rgs[0].cols[0].meta.total_compressed_size, 30);
    CHECK_EQ_INT(m.rgs[0].cols[0].meta.dictionary_page_offset, -1);
    CHECK_EQ_INT(m.rgs[0].cols[0].meta.encodings, 1u << PQ_ENC_PLAIN | 1u << PQ_ENC_RLE);
    CHECK(m.created_by.n == 10 && memcmp(m.created_by.p, "tally test", 10) == 0);
    pq_meta_free(&m);
    /* every truncation fails cleanly */
    for (size_t k = 0; k < w.n; k++) {
        err.code = TL_OK;
        CHECK_EQ_INT(decode(w.b, k, &err), TL_ERR_DATA);
        CHECK(strncmp(err.msg, "f.parquet: corrupt Parquet footer: ", 35) == 0);
    }
}

TL_TEST(test_corrupt_length)
{
    W w;
    TlError err = {0};
    memset(&w, 0, sizeof w);
    begin(&w);
    field(&w, 6, PQ_T_BINARY);
    uvar(&w, 100);
    put(&w, 'a');
    put(&w, 'b');
    CHECK_EQ_INT(decode(w.b, w.n, &err), TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, "f.parquet: corrupt Parquet footer: binary of 100 bytes past the "
                          "end (2 bytes left) (byte 1002)");
    /* a length of 2^32 does not fit 32 bits */
    w.n = 1;
    uvar(&w, (uint64_t)1 << 32);
    CHECK_EQ_INT(decode(w.b, w.n, &err), TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, "f.parquet: corrupt Parquet footer: binary length does not fit 32 "
                          "bits (byte 1006)");
}

TL_TEST(test_negative_count)
{
    W w;
    TlError err = {0};
    memset(&w, 0, sizeof w);
    begin(&w);
    field(&w, 2, PQ_T_LIST);
    put(&w, 0xf0 | PQ_T_STRUCT);
    uvar(&w, 0x80000000u);
    CHECK_EQ_INT(decode(w.b, w.n, &err), TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, "f.parquet: corrupt Parquet footer: list size -2147483648 is "
                          "negative (byte 1007)");
    /* a count larger than the bytes left */
    w.n = 1;
    list(&w, PQ_T_STRUCT, 1000);
    CHECK_EQ_INT(decode(w.b, w.n, &err), TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, "f.parquet: corrupt Parquet footer: list of 1000 elements in 0 "
                          "bytes (byte 1004)");
    /* a schema element count of the right size but wrong bytes */
    w.n = 1;
    list(&w, PQ_T_STRUCT, 3);
    put(&w, 0);
    put(&w, 0);
    put(&w, 0);
    CHECK_EQ_INT(decode(w.b, w.n, &err), TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, "f.parquet: corrupt Parquet footer: SchemaElement lacks its required "
                          "field name (byte 1003)");
}

TL_TEST(test_field_order)
{
    W w;
    TlError err = {0};
    memset(&w, 0, sizeof w);
    begin(&w);
    f_i64(&w, 3, 1);
    f_i32(&w, 1, 1); /* back: long form */
    CHECK_EQ_INT(decode(w.b, w.n, &err), TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, "f.parquet: corrupt Parquet footer: FileMetaData: field id 1 after "
                          "field 3 (ids must grow) (byte 1004)");
    /* the same id twice */
    memset(&w, 0, sizeof w);
    begin(&w);
    f_i64(&w, 3, 1);
    put(&w, PQ_T_I64);
    zz(&w, 3);
    zz(&w, 1);
    CHECK_EQ_INT(decode(w.b, w.n, &err), TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, "f.parquet: corrupt Parquet footer: FileMetaData: field id 3 after "
                          "field 3 (ids must grow) (byte 1004)");
    /* an unknown wire type */
    memset(&w, 0, sizeof w);
    put(&w, 0x1d);
    CHECK_EQ_INT(decode(w.b, w.n, &err), TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, "f.parquet: corrupt Parquet footer: FileMetaData holds a field of "
                          "unknown wire type 13 (byte 1001)");
    /* a known field of the wrong wire type */
    memset(&w, 0, sizeof w);
    begin(&w);
    f_str(&w, 3, "x");
    CHECK_EQ_INT(decode(w.b, w.n, &err), TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, "f.parquet: corrupt Parquet footer: FileMetaData: field 3 has the "
                          "unexpected wire type binary (byte 1001)");
}

TL_TEST(test_depth)
{
    W w;
    TlError err = {0};
    memset(&w, 0, sizeof w);
    begin(&w);
    /* an unknown field holding structs 40 deep: skipped, up to the bound */
    field(&w, 15, PQ_T_STRUCT);
    for (int i = 0; i < 40; i++) put(&w, 1 << 4 | PQ_T_STRUCT);
    for (int i = 0; i < 41; i++) put(&w, 0);
    put(&w, 0);
    CHECK_EQ_INT(decode(w.b, w.n, &err), TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, "f.parquet: corrupt Parquet footer: structures nested deeper than "
                          "32 levels (byte 1032)");
    /* lists of lists count too */
    memset(&w, 0, sizeof w);
    begin(&w);
    field(&w, 15, PQ_T_LIST);
    for (int i = 0; i < 40; i++) list(&w, PQ_T_LIST, 1);
    CHECK_EQ_INT(decode(w.b, w.n, &err), TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, "f.parquet: corrupt Parquet footer: structures nested deeper than "
                          "32 levels (byte 1033)");
    /* within the bound: skipped; then the required fields are missing */
    memset(&w, 0, sizeof w);
    begin(&w);
    field(&w, 15, PQ_T_STRUCT);
    for (int i = 0; i < 20; i++) put(&w, 1 << 4 | PQ_T_STRUCT);
    for (int i = 0; i < 21; i++) put(&w, 0);
    put(&w, 0);
    CHECK_EQ_INT(decode(w.b, w.n, &err), TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, "f.parquet: corrupt Parquet footer: FileMetaData lacks its required "
                          "field schema (byte 1043)");
}

TL_TEST(test_varints)
{
    W w;
    TlError err = {0};
    memset(&w, 0, sizeof w);
    begin(&w);
    field(&w, 3, PQ_T_I64);
    for (int i = 0; i < 11; i++) put(&w, 0xff);
    CHECK_EQ_INT(decode(w.b, w.n, &err), TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, "f.parquet: corrupt Parquet footer: a varint longer than 10 bytes "
                          "(byte 1011)");
    /* an i32 out of its range */
    memset(&w, 0, sizeof w);
    begin(&w);
    field(&w, 1, PQ_T_I32);
    zz(&w, (int64_t)1 << 33);
    CHECK_EQ_INT(decode(w.b, w.n, &err), TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, "f.parquet: corrupt Parquet footer: i32 8589934592 out of range "
                          "(byte 1006)");
    /* an i32 varint longer than an i32's */
    memset(&w, 0, sizeof w);
    begin(&w);
    field(&w, 1, PQ_T_I32);
    for (int i = 0; i < 6; i++) put(&w, 0xff);
    CHECK_EQ_INT(decode(w.b, w.n, &err), TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, "f.parquet: corrupt Parquet footer: a varint longer than 5 bytes "
                          "(byte 1006)");
    /* a truncated varint */
    memset(&w, 0, sizeof w);
    begin(&w);
    field(&w, 3, PQ_T_I64);
    put(&w, 0x80);
    CHECK_EQ_INT(decode(w.b, w.n, &err), TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, "f.parquet: corrupt Parquet footer: truncated varint (byte 1002)");
}

/* A v2 data page header. */
static void page_v2(W *w, int nulls)
{
    memset(w, 0, sizeof *w);
    begin(w);
    f_i32(w, 1, PQ_PAGE_DATA_V2);
    f_i32(w, 2, 100);
    f_i32(w, 3, 50);
    field(w, 8, PQ_T_STRUCT);
    begin(w);
    f_i32(w, 1, 10);
    f_i32(w, 2, nulls);
    f_i32(w, 3, 10);
    f_i32(w, 4, PQ_ENC_RLE_DICTIONARY);
    f_i32(w, 5, 2);
    f_i32(w, 6, 0);
    field(w, 7, PQ_T_FALSE);
    end(w);
    end(w);
}

TL_TEST(test_page_header)
{
    W w;
    PqThrift t;
    PqPageHeader h;
    TlError err = {0};
    page_v2(&w, 3);
    pq_th_init(&t, w.b, w.n, 50, "f.parquet", "page header", &err);
    CHECK_EQ_INT(pq_page_header_decode(&t, &h), TL_OK);
    CHECK_EQ_INT(h.type, PQ_PAGE_DATA_V2);
    CHECK_EQ_INT(h.uncompressed_size, 100);
    CHECK_EQ_INT(h.compressed_size, 50);
    CHECK_EQ_INT(h.num_values, 10);
    CHECK_EQ_INT(h.num_nulls, 3);
    CHECK_EQ_INT(h.encoding, PQ_ENC_RLE_DICTIONARY);
    CHECK_EQ_INT(h.def_bytes, 2);
    CHECK(!h.is_compressed);
    CHECK_EQ_INT(pq_th_used(&t), w.n);
    for (size_t k = 0; k < w.n; k++) {
        pq_th_init(&t, w.b, k, 50, "f.parquet", "page header", &err);
        CHECK_EQ_INT(pq_page_header_decode(&t, &h), TL_ERR_DATA);
    }
    page_v2(&w, -1);
    pq_th_init(&t, w.b, w.n, 50, "f.parquet", "page header", &err);
    CHECK_EQ_INT(pq_page_header_decode(&t, &h), TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, "f.parquet: corrupt Parquet page header: DataPageHeaderV2 with a "
                          "negative or impossible count (byte 73)");
    /* a data page type without its data page header */
    memset(&w, 0, sizeof w);
    begin(&w);
    f_i32(&w, 1, PQ_PAGE_DATA);
    f_i32(&w, 2, 10);
    f_i32(&w, 3, 10);
    end(&w);
    pq_th_init(&t, w.b, w.n, 0, "f.parquet", "page header", &err);
    CHECK_EQ_INT(pq_page_header_decode(&t, &h), TL_ERR_DATA);
    CHECK_EQ_STR(err.msg, "f.parquet: corrupt Parquet page header: a page of type 0 without "
                          "its header (byte 7)");
}

TL_TEST(test_flips)
{
    W w;
    uint8_t buf[sizeof w.b];
    unsigned seed = 12345;
    long rounds = tl_test_scaled(20000, 10);
    int ok = 0, bad = 0;
    footer(&w);
    for (long r = 0; r < rounds; r++) {
        TlError err = {0};
        TlStatus st;
        memcpy(buf, w.b, w.n);
        for (int k = 0; k < 1 + (int)(r % 4); k++) {
            seed = seed * 1103515245u + 12345u;
            buf[(seed >> 8) % w.n] ^= (uint8_t)(1u << ((seed >> 4) % 8));
        }
        st = decode(buf, w.n, &err);
        CHECK(st == TL_OK || st == TL_ERR_DATA);
        if (st == TL_OK) ok++;
        else bad++;
        if (st == TL_ERR_DATA)
            CHECK(strncmp(err.msg, "f.parquet: corrupt Parquet footer: ", 35) == 0);
    }
    CHECK(ok > 0 && bad > 0);
}

int main(void)
{
    TL_RUN(test_fields);
    TL_RUN(test_footer);
    TL_RUN(test_corrupt_length);
    TL_RUN(test_negative_count);
    TL_RUN(test_field_order);
    TL_RUN(test_depth);
    TL_RUN(test_varints);
    TL_RUN(test_page_header);
    TL_RUN(test_flips);
    return tl_test_summary(__FILE__);
}
