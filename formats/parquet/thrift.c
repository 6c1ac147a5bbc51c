/*
 * thrift.c -- Thrift's compact protocol, read with a bound on every step
 * (thrift.h says which checks and why).
 *
 * The encoding, in short: a field is a header byte (high nibble: the id's
 * step from the previous field's, 1 to 15, or 0 followed by the id as a
 * zigzag varint; low nibble: the wire type), then its value; a struct ends
 * with a 0 byte.  Integers of 16, 32 and 64 bits are zigzag ULEB128
 * varints, i8 one byte, doubles 8 bytes little-endian, binary a varint
 * length then the bytes.  A list starts with a byte holding its size (15:
 * a varint follows) and its element type; elements have no headers, and a
 * bool element takes a byte of its own (a bool field lives in its wire
 * type).  A map is a varint size and, when not empty, one byte of key and
 * value types.
 */
#include "thrift.h"

#include <stdarg.h>
#include <stdio.h>

void pq_th_init(PqThrift *t, const uint8_t *p, size_t n, uint64_t off,
                const char *name, const char *what, TlError *err)
{
    t->p = t->base = p;
    t->end = p + n;
    t->base_off = off;
    t->depth = 0;
    t->name = name;
    t->what = what;
    t->err = err;
}

TlStatus pq_th_fail(PqThrift *t, const char *fmt, ...)
{
    char detail[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    return tl_error(t->err, TL_ERR_DATA, "%s: corrupt Parquet %s: %s (byte %llu)", t->name,
                    t->what, detail, (unsigned long long)(t->base_off + pq_th_used(t)));
}

static const char *type_name(int type)
{
    static const char *const names[] = {"stop", "bool", "bool", "i8", "i16", "i32", "i64",
                                        "double", "binary", "list", "set", "map", "struct"};
    return type >= 0 && type <= PQ_T_STRUCT ? names[type] : "unknown";
}

/* An unsigned LEB128 varint of at most max_bytes bytes. */
static TlStatus varint(PqThrift *t, int max_bytes, uint64_t *v)
{
    uint64_t x = 0;
    for (int i = 0;; i++) {
        uint8_t b;
        if (i == max_bytes) return pq_th_fail(t, "a varint longer than %d bytes", max_bytes);
        if (t->p >= t->end) return pq_th_fail(t, "truncated varint");
        b = *t->p++;
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) break;
    }
    *v = x;
    return TL_OK;
}

static int64_t unzigzag(uint64_t x)
{
    return (int64_t)(x >> 1) ^ -(int64_t)(x & 1);
}

/* A size (binary length, list or map count): a varint that an int32 holds
 * and that is not negative there. */
static TlStatus size_varint(PqThrift *t, const char *what, int32_t *n)
{
    uint64_t x = 0;
    TL_TRY(varint(t, 5, &x));
    if (x > UINT32_MAX) return pq_th_fail(t, "%s does not fit 32 bits", what);
    if (x > INT32_MAX) return pq_th_fail(t, "%s %lld is negative", what, (long long)(int32_t)x);
    *n = (int32_t)x;
    return TL_OK;
}

TlStatus pq_th_begin(PqThrift *t, PqThStruct *s, const char *name)
{
    if (t->depth >= PQ_TH_MAX_DEPTH)
        return pq_th_fail(t, "structures nested deeper than %d levels", PQ_TH_MAX_DEPTH);
    t->depth++;
    s->name = name;
    s->last = 0;
    s->seen = 0;
    return TL_OK;
}

TlStatus pq_th_field(PqThrift *t, PqThStruct *s, int *id, int *type)
{
    uint8_t b;
    int delta;
    if (t->p >= t->end) return pq_th_fail(t, "truncated %s", s->name);
    b = *t->p++;
    if (b == 0) {
        *type = PQ_T_STOP;
        *id = 0;
        t->depth--;
        return TL_OK;
    }
    *type = b & 0x0f;
    delta = b >> 4;
    if (*type > PQ_T_STRUCT)
        return pq_th_fail(t, "%s holds a field of unknown wire type %d", s->name, *type);
    if (delta) {
        *id = s->last + delta;
    } else {
        uint64_t x = 0;
        int64_t v;
        TL_TRY(varint(t, 3, &x));
        v = unzigzag(x);
        if (v < INT16_MIN || v > INT16_MAX)
            return pq_th_fail(t, "%s: field id %lld does not fit 16 bits", s->name, (long long)v);
        *id = (int)v;
    }
    if (*id <= s->last)
        return pq_th_fail(t, "%s: field id %d after field %d (ids must grow)", s->name, *id,
                          s->last);
    s->last = *id;
    if (*id < 32) s->seen |= 1u << *id;
    return TL_OK;
}

TlStatus pq_th_bad_type(PqThrift *t, const PqThStruct *s, int id, int type)
{
    return pq_th_fail(t, "%s: field %d has the unexpected wire type %s", s->name, id,
                      type_name(type));
}

static TlStatus want(PqThrift *t, bool ok, int type, const char *expected)
{
    if (ok) return TL_OK;
    return pq_th_fail(t, "a %s where %s was expected", type_name(type), expected);
}

TlStatus pq_th_bool(PqThrift *t, int type, bool in_list, bool *v)
{
    TL_TRY(want(t, type == PQ_T_TRUE || type == PQ_T_FALSE, type, "a bool"));
    if (!in_list) {
        *v = type == PQ_T_TRUE;
        return TL_OK;
    }
    if (t->p >= t->end) return pq_th_fail(t, "truncated bool");
    if (*t->p > 2) return pq_th_fail(t, "bool byte %u is neither 0, 1 nor 2", *t->p);
    *v = *t->p++ == 1;
    return TL_OK;
}

TlStatus pq_th_i64(PqThrift *t, int type, int64_t *v)
{
    uint64_t x = 0;
    TL_TRY(want(t, type == PQ_T_I8 || type == PQ_T_I16 || type == PQ_T_I32 || type == PQ_T_I64,
                type, "an integer"));
    if (type == PQ_T_I8) {
        if (t->p >= t->end) return pq_th_fail(t, "truncated i8");
        *v = (int8_t)*t->p++;
        return TL_OK;
    }
    TL_TRY(varint(t, type == PQ_T_I16 ? 3 : type == PQ_T_I32 ? 5 : 10, &x));
    *v = unzigzag(x);
    if (type == PQ_T_I16 && (*v < INT16_MIN || *v > INT16_MAX))
        return pq_th_fail(t, "i16 %lld out of range", (long long)*v);
    if (type == PQ_T_I32 && (*v < INT32_MIN || *v > INT32_MAX))
        return pq_th_fail(t, "i32 %lld out of range", (long long)*v);
    return TL_OK;
}

TlStatus pq_th_i32(PqThrift *t, int type, int32_t *v)
{
    int64_t x;
    if (type == PQ_T_I64) return pq_th_fail(t, "an i64 where an i32 was expected");
    TL_TRY(pq_th_i64(t, type, &x));
    *v = (int32_t)x;
    return TL_OK;
}

TlStatus pq_th_double(PqThrift *t, int type, double *v)
{
    uint64_t bits = 0;
    TL_TRY(want(t, type == PQ_T_DOUBLE, type, "a double"));
    if (t->end - t->p < 8) return pq_th_fail(t, "truncated double");
    for (int i = 7; i >= 0; i--) bits = bits << 8 | t->p[i];
    memcpy(v, &bits, sizeof *v);
    t->p += 8;
    return TL_OK;
}

TlStatus pq_th_binary(PqThrift *t, int type, const uint8_t **p, uint32_t *n)
{
    int32_t len;
    TL_TRY(want(t, type == PQ_T_BINARY, type, "a binary"));
    TL_TRY(size_varint(t, "binary length", &len));
    if ((size_t)len > (size_t)(t->end - t->p))
        return pq_th_fail(t, "binary of %d bytes past the end (%zu bytes left)", len,
                          (size_t)(t->end - t->p));
    *p = t->p;
    *n = (uint32_t)len;
    t->p += len;
    return TL_OK;
}

TlStatus pq_th_list(PqThrift *t, int type, int *elem, int32_t *n)
{
    uint8_t b;
    TL_TRY(want(t, type == PQ_T_LIST || type == PQ_T_SET, type, "a list"));
    if (t->p >= t->end) return pq_th_fail(t, "truncated list header");
    b = *t->p++;
    *elem = b & 0x0f;
    *n = b >> 4;
    if (*n == 15) TL_TRY(size_varint(t, "list size", n));
    if (*elem < PQ_T_TRUE || *elem > PQ_T_STRUCT)
        return pq_th_fail(t, "list of unknown element type %d", *elem);
    if ((size_t)*n > (size_t)(t->end - t->p))
        return pq_th_fail(t, "list of %d elements in %zu bytes", *n, (size_t)(t->end - t->p));
    return TL_OK;
}

TlStatus pq_th_skip(PqThrift *t, int type, bool in_list)
{
    uint64_t x = 0;
    int32_t n;
    int elem, k, v;
    const uint8_t *p;
    uint32_t len;
    PqThStruct s;
    TlStatus st = TL_OK;
    switch (type) {
    case PQ_T_TRUE:
    case PQ_T_FALSE:
        if (!in_list) return TL_OK;
        if (t->p >= t->end) return pq_th_fail(t, "truncated bool");
        t->p++;
        return TL_OK;
    case PQ_T_I8:
        if (t->p >= t->end) return pq_th_fail(t, "truncated i8");
        t->p++;
        return TL_OK;
    case PQ_T_I16:
    case PQ_T_I32:
    case PQ_T_I64:
        return varint(t, type == PQ_T_I16 ? 3 : type == PQ_T_I32 ? 5 : 10, &x);
    case PQ_T_DOUBLE:
        if (t->end - t->p < 8) return pq_th_fail(t, "truncated double");
        t->p += 8;
        return TL_OK;
    case PQ_T_BINARY:
        return pq_th_binary(t, type, &p, &len);
    case PQ_T_LIST:
    case PQ_T_SET:
        TL_TRY(pq_th_list(t, type, &elem, &n));
        if (t->depth >= PQ_TH_MAX_DEPTH)
            return pq_th_fail(t, "structures nested deeper than %d levels", PQ_TH_MAX_DEPTH);
        t->depth++;
        for (int32_t i = 0; i < n && st == TL_OK; i++) st = pq_th_skip(t, elem, true);
        t->depth--;
        return st;
    case PQ_T_MAP:
        TL_TRY(size_varint(t, "map size", &n));
        if (n == 0) return TL_OK;
        if (t->p >= t->end) return pq_th_fail(t, "truncated map header");
        k = *t->p >> 4;
        v = *t->p & 0x0f;
        t->p++;
        if (k < PQ_T_TRUE || k > PQ_T_STRUCT || v < PQ_T_TRUE || v > PQ_T_STRUCT)
            return pq_th_fail(t, "map of unknown key or value type");
        if ((size_t)n > (size_t)(t->end - t->p) / 2)
            return pq_th_fail(t, "map of %d entries in %zu bytes", n, (size_t)(t->end - t->p));
        if (t->depth >= PQ_TH_MAX_DEPTH)
            return pq_th_fail(t, "structures nested deeper than %d levels", PQ_TH_MAX_DEPTH);
        t->depth++;
        for (int32_t i = 0; i < n && st == TL_OK; i++) {
            st = pq_th_skip(t, k, true);
            if (st == TL_OK) st = pq_th_skip(t, v, true);
        }
        t->depth--;
        return st;
    case PQ_T_STRUCT:
        TL_TRY(pq_th_begin(t, &s, "struct"));
        for (;;) {
            int id, ft;
            TL_TRY(pq_th_field(t, &s, &id, &ft));
            if (ft == PQ_T_STOP) return TL_OK;
            TL_TRY(pq_th_skip(t, ft, false));
        }
    default:
        return pq_th_fail(t, "a value of unknown wire type %d", type);
    }
}
