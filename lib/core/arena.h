/*
 * arena.h -- flat, growable storage addressed by 32-bit ids.
 *
 * Plan and expression nodes live in arenas: a node refers to its children by
 * id, not by pointer, so the arena may move when it grows, copying a plan is
 * copying integers, and the whole arena is freed at once at the end of the
 * run.  Nothing is freed item by item.
 *
 * TlStrPool is the arena's companion for names and literal text: a bump
 * allocator of never-moving chunks, so the char pointers it returns stay
 * valid until tl_strpool_free.
 */
#ifndef TL_ARENA_H
#define TL_ARENA_H

#include "core.h"

#define TL_NO_ID UINT32_MAX

typedef struct TlArena {
    uint8_t *items;
    size_t item_size;
    uint32_t n, cap;
} TlArena;

void tl_arena_init(TlArena *a, size_t item_size);
/* Push a zeroed item; returns its id in *id.  TL_ERR_OOM on failure. */
TlStatus tl_arena_push(TlArena *a, uint32_t *id, TlError *err);
/* Pointer to item id; valid until the next push. */
static inline void *tl_arena_at(const TlArena *a, uint32_t id)
{
    return a->items + (size_t)id * a->item_size;
}
void tl_arena_free(TlArena *a);

typedef struct TlStrChunk TlStrChunk;
typedef struct TlStrPool {
    TlStrChunk *head;
} TlStrPool;

void tl_strpool_init(TlStrPool *p);
/* Copy s[0..len) plus a NUL into the pool.  NULL on OOM. */
char *tl_strpool_dup(TlStrPool *p, const char *s, size_t len);
/* Raw bytes from the pool (8-byte aligned).  NULL on OOM. */
void *tl_strpool_alloc(TlStrPool *p, size_t n);
void tl_strpool_free(TlStrPool *p);

#endif
