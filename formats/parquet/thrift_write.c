/*
 * thrift_write.c -- Thrift's compact protocol, written: the footer and the
 * page headers of the files tally writes (thrift.c reads the same bytes;
 * its top comment describes the encoding).
 *
 * Field headers carry the id's step from the previous field of the same
 * struct (1 to 15 in the header's high nibble, else the id in full after
 * it), so the writer keeps the last id of every open struct.  A bool field
 * lives in its wire type.  Callers write fields in increasing id order, as
 * the reader insists.  Nothing here can fail but memory, and that is
 * sticky (pqwrite.h), so the encoders read like the structures they write.
 */
#include "pqwrite.h"
#include "thrift.h"

void pq_tw_init(PqTw *w)
{
    memset(w, 0, sizeof *w);
}

void pq_tw_free(PqTw *w)
{
    tl_free(w->p);
    memset(w, 0, sizeof *w);
}

static bool room(PqTw *w, size_t n)
{
    size_t cap;
    uint8_t *g;
    if (w->oom) return false;
    if (w->len + n <= w->cap) return true;
    cap = w->cap ? w->cap : 256;
    while (cap < w->len + n) cap *= 2;
    g = tl_realloc(w->p, cap);
    if (!g) {
        w->oom = true;
        return false;
    }
    w->p = g;
    w->cap = cap;
    return true;
}

void pq_tw_raw(PqTw *w, const void *p, size_t n)
{
    if (!n || !room(w, n)) return;
    memcpy(w->p + w->len, p, n);
    w->len += n;
}

static void byte(PqTw *w, uint8_t b)
{
    if (room(w, 1)) w->p[w->len++] = b;
}

static void varint(PqTw *w, uint64_t x)
{
    if (!room(w, 10)) return;
    while (x >= 0x80) {
        w->p[w->len++] = (uint8_t)(x | 0x80);
        x >>= 7;
    }
    w->p[w->len++] = (uint8_t)x;
}

static uint64_t zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static void field(PqTw *w, int id, int type)
{
    int16_t *last = &w->last[w->depth - 1];
    int step = id - *last;
    if (step > 0 && step <= 15) {
        byte(w, (uint8_t)(step << 4 | type));
    } else {
        byte(w, (uint8_t)type);
        varint(w, zigzag(id));
    }
    *last = (int16_t)id;
}

void pq_tw_begin(PqTw *w)
{
    if (w->depth == PQ_TW_MAX_DEPTH) { /* a programming error: no such struct */
        w->oom = true;
        return;
    }
    w->last[w->depth++] = 0;
}

void pq_tw_end(PqTw *w)
{
    byte(w, PQ_T_STOP);
    if (w->depth > 0) w->depth--;
}

void pq_tw_struct(PqTw *w, int id)
{
    field(w, id, PQ_T_STRUCT);
    pq_tw_begin(w);
}

void pq_tw_i16(PqTw *w, int id, int16_t v)
{
    field(w, id, PQ_T_I16);
    varint(w, zigzag(v));
}

void pq_tw_i32(PqTw *w, int id, int32_t v)
{
    field(w, id, PQ_T_I32);
    varint(w, zigzag(v));
}

void pq_tw_i64(PqTw *w, int id, int64_t v)
{
    field(w, id, PQ_T_I64);
    varint(w, zigzag(v));
}

void pq_tw_bool(PqTw *w, int id, bool v)
{
    field(w, id, v ? PQ_T_TRUE : PQ_T_FALSE);
}

void pq_tw_binary(PqTw *w, int id, const void *p, size_t n)
{
    field(w, id, PQ_T_BINARY);
    pq_tw_elem_binary(w, p, n);
}

void pq_tw_list(PqTw *w, int id, int elem, size_t n)
{
    field(w, id, PQ_T_LIST);
    if (n < 15) {
        byte(w, (uint8_t)(n << 4 | (size_t)elem));
    } else {
        byte(w, (uint8_t)(0xf0 | elem));
        varint(w, n);
    }
}

void pq_tw_elem_i32(PqTw *w, int32_t v)
{
    varint(w, zigzag(v));
}

void pq_tw_elem_binary(PqTw *w, const void *p, size_t n)
{
    varint(w, n);
    pq_tw_raw(w, p, n);
}
