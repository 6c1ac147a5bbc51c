/*
 * arena.c -- flat growable item arrays addressed by id, and a string pool.
 *
 * TlArena: items of one size in one array that doubles when full.  Items
 * are zeroed when pushed; ids are indexes, so growing (which may move the
 * array) never invalidates an id, only raw pointers from tl_arena_at.
 * TL_NO_ID (UINT32_MAX) is never handed out.
 *
 * TlStrPool: a list of chunks, newest first; allocations bump through the
 * head chunk and never move.  A chunk is at least 64 KiB; a request larger
 * than a quarter of that gets a chunk of its own, linked behind the head so
 * the head keeps filling.  Everything is freed at once.
 *
 *   head -> [next|size|used| bytes.......... ] -> [ ... ] -> NULL
 */
#include "arena.h"

#define CHUNK_MIN ((size_t)64 << 10)

struct TlStrChunk {
    TlStrChunk *next;
    size_t size, used;
    _Alignas(8) uint8_t bytes[];
};

/* Initialise an empty arena of items of item_size bytes. */
void tl_arena_init(TlArena *a, size_t item_size)
{
    a->items = NULL;
    a->item_size = item_size ? item_size : 1;
    a->n = a->cap = 0;
}

/* Push a zeroed item and store its id in *id.  TL_ERR_OOM on failure (the
 * arena is unchanged). */
TlStatus tl_arena_push(TlArena *a, uint32_t *id, TlError *err)
{
    if (a->n == a->cap) {
        uint64_t cap = a->cap ? (uint64_t)a->cap * 2 : 16;
        uint8_t *p;
        if (cap > TL_NO_ID) cap = TL_NO_ID;
        if (cap <= a->n || cap > SIZE_MAX / a->item_size)
            return tl_error_oom(err);
        p = tl_realloc(a->items, (size_t)cap * a->item_size);
        if (!p) return tl_error_oom(err);
        a->items = p;
        a->cap = (uint32_t)cap;
    }
    memset(a->items + (size_t)a->n * a->item_size, 0, a->item_size);
    *id = a->n++;
    return TL_OK;
}

/* Free the arena's items and leave it empty (item size kept). */
void tl_arena_free(TlArena *a)
{
    tl_free(a->items);
    a->items = NULL;
    a->n = a->cap = 0;
}

/* Initialise an empty pool. */
void tl_strpool_init(TlStrPool *p)
{
    p->head = NULL;
}

/* n raw bytes from the pool, 8-byte aligned, valid until tl_strpool_free.
 * NULL on OOM. */
void *tl_strpool_alloc(TlStrPool *p, size_t n)
{
    TlStrChunk *c = p->head;
    size_t size;
    void *r;
    if (n > SIZE_MAX - sizeof(TlStrChunk) - 8) return NULL;
    n = (n + 7) & ~(size_t)7;
    if (n == 0) n = 8;
    if (c && c->size - c->used >= n) {
        r = c->bytes + c->used;
        c->used += n;
        return r;
    }
    size = n > CHUNK_MIN / 4 ? n : CHUNK_MIN;
    c = tl_malloc(sizeof(TlStrChunk) + size);
    if (!c) return NULL;
    c->size = size;
    c->used = n;
    if (size == n && p->head) {
        /* a chunk of its own: keep filling the current head */
        c->next = p->head->next;
        p->head->next = c;
    } else {
        c->next = p->head;
        p->head = c;
    }
    return c->bytes;
}

/* Copy s[0..len) and a NUL into the pool; NULL on OOM. */
char *tl_strpool_dup(TlStrPool *p, const char *s, size_t len)
{
    char *d = tl_strpool_alloc(p, len + 1);
    if (!d) return NULL;
    if (len) memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

/* Free every chunk of the pool; the pool is empty afterwards. */
void tl_strpool_free(TlStrPool *p)
{
    TlStrChunk *c = p->head;
    while (c) {
        TlStrChunk *next = c->next;
        tl_free(c);
        c = next;
    }
    p->head = NULL;
}
