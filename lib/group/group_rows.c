/*
 * group_rows.c -- the grouper for any other key set: several keys, float
 * keys, keys of the null type, or none at all.
 *
 * Each batch's keys are encoded, column by column, in a compact encoding
 * made for equality only (grouping needs no order):
 *
 *   | null bits: ceil(n_keys/8) bytes | key 0 | key 1 | ... |
 *
 *   int64, timestamp, date  zigzag varint (1 to 10 bytes; "90" takes one)
 *   bool                    1 byte
 *   float64                 8 bytes: the canonical value (NaN one NaN,
 *                           -0.0 -> 0.0)
 *   string                  varint length, then the bytes
 *   null (any type)         nothing: its bit in the null bits
 *
 * Given the key types the encoding decodes without ambiguity, so two rows
 * are equal keys (NaN = NaN, -0.0 = 0.0, all nulls alike) exactly when their
 * bytes are equal.  It is about half the size of the order-preserving row
 * encoding (kernels/rowenc.h) on typical keys: H2O's six keys take 31 bytes
 * instead of 58, and every group keeps one.  The table is open addressing
 * on the encoded bytes, linear probing, power of two, grown before 75% load
 * (a probe compares 4-byte tags, eight slots to a cache line, so longer
 * runs cost little, and a table of 1e7 near-unique keys takes half the
 * slots, half the page faults of growing):
 *
 *   slot (8 bytes):  | tag: uint32 (hash >> 32) | gid: uint32 (UINT32_MAX empty) |
 *
 *   keys[gid] -> | len: uint32 | encoded row (len bytes) |
 *                in blocks of >= 1 MiB that never move:
 *   block list:  [ row row row ... ] -> [ ... ] -> ...
 *
 * The high 32 bits of the row's XXH3 are the tag, and the tag's low bits
 * pick the slot (home()); a probe compares tag, then length, then bytes
 * (inline, 8 at a time).  So growing needs neither the rows nor their
 * hashes: one pass over the old slots moves each entry by its tag (a table
 * over 2^32 slots recomputes the hashes from the stored rows).  Hashes of
 * a batch are computed first, so the probe loop prefetches the slot of the
 * row PREFETCH rows ahead.  Zero keys encode every row to the empty string:
 * one group.
 *
 * The key columns are not kept in builders while grouping: at the end the
 * stored rows are decoded (decode_rows: values written in place into
 * arrays of the batch's size, long strings into blocks), range by range as
 * the output batches are built, after the table is freed, so the keys
 * live once.  tl_grouper_keys_multi decodes the rows of several groupers
 * (op_agg's radix partitions) straight into output order.
 *
 * Hashes: XXH3 of the encoded row, or the caller's row hashes
 * (tl_grouper_map_hashed: op_agg's radix path hashes the key columns once
 * to pick the partition, kernels/hash.h, and passes them on); a grouper is
 * fed one way only (hash_kind), since its slots keep the hashes' tags.
 * Float keys are the exception: the encoding folds -0.0 into 0.0, so their
 * first-row values are kept in builders.
 */
#include "group.h"

#include "../../kernels/hash.h"

#define EMPTY UINT32_MAX
#define PREFETCH 16 /* rows ahead whose slot is prefetched */
#define BLOCK_MIN ((size_t)1 << 20)

typedef struct RSlot {
    uint32_t tag;
    uint32_t gid;
} RSlot;

typedef struct RBlock RBlock;
struct RBlock {
    RBlock *next;
    size_t used, cap;
    uint8_t bytes[];
};

typedef struct Enc {
    uint8_t *bytes;     /* all rows of the batch */
    int64_t *off;       /* row i: bytes[off[i], off[i+1]) */
    int64_t bytes_cap, off_cap;
} Enc;

typedef struct RowsGrouper {
    TlGrouper head;
    RSlot *slots;
    uint64_t mask;
    const uint8_t **keys;  /* gid -> length-prefixed encoded row */
    uint32_t keys_cap;
    RBlock *blocks;        /* newest first */
    uint64_t *hashes;      /* per-batch scratch */
    int64_t hashes_cap;
    Enc enc;               /* per-batch scratch: the encoded rows */
    TlBuilder *fkb;        /* per float key: first-row values (else unused) */
    TlArray **fdone;       /* the finished fkb, after the first keys call */
    uint64_t *ghash;       /* sealed local grouper: each group's row hash */
    bool ended;            /* rows_keys called: the table is gone */
    int8_t hash_kind;      /* 0 none yet, 1 own XXH3 of the encoded rows,
                            * 2 the caller's (tl_grouper_map_hashed) */
} RowsGrouper;

/* ------------------------------------------------- the compact encoding */

static inline uint64_t zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline uint8_t *put_varint(uint8_t *p, uint64_t u)
{
    while (u >= 0x80) {
        *p++ = (uint8_t)(u | 0x80);
        u >>= 7;
    }
    *p++ = (uint8_t)u;
    return p;
}

static inline const uint8_t *get_varint(const uint8_t *p, uint64_t *u)
{
    uint64_t v = 0;
    int shift = 0;
    while (*p & 0x80) {
        v |= (uint64_t)(*p++ & 0x7f) << shift;
        shift += 7;
    }
    *u = v | ((uint64_t)*p++ << shift);
    return p;
}

static inline bool is_null(const TlArray *a, int64_t i)
{
    return a->type == TL_TNULL || !tl_array_valid(a, i);
}

/* A key column as encode_rows reads it: its kind and values, decided
 * once per batch. */
enum { EK_SKIP, EK_I64, EK_I32, EK_BOOL, EK_F64, EK_STR };
typedef struct EncCol {
    int kind;
    bool nulls;               /* test each row's validity */
    const TlArray *a;
    const void *v;            /* values */
} EncCol;

/* Encode rows [0, n) of keys[0..nk) into e (see the design above): one
 * pass, row by row, into a buffer sized by a bound (ints at most 10
 * bytes, string lengths at most 5 plus the bytes), so no sizes pass. */
static TlStatus encode_rows(Enc *e, const TlArray *const *keys, int nk,
                            int64_t n, TlError *err)
{
    int nb = (nk + 7) / 8;
    EncCol cs[16], *c = cs;
    TlStatus st = TL_OK;
    if (nk > 16) {
        c = tl_malloc((size_t)nk * sizeof *c);
        if (!c) return tl_error_oom(err);
    }
    if (e->off_cap < n + 1) {
        int64_t *o = tl_realloc(e->off, (size_t)(n + 1) * sizeof *o);
        if (!o) {
            st = tl_error_oom(err);
            goto done;
        }
        e->off = o;
        e->off_cap = n + 1;
    }
    uint64_t bound = (uint64_t)n * (uint64_t)nb + 1;
    bool any_nulls = false;
    for (int k = 0; k < nk; k++) {
        const TlArray *a = keys[k];
        c[k].a = a;
        c[k].nulls = a->type == TL_TNULL || a->null_count > 0;
        any_nulls |= c[k].nulls;
        c[k].kind = EK_SKIP;
        c[k].v = NULL;
        if (a->type == TL_TNULL || a->null_count == a->length) continue;
        switch (a->type) {
        case TL_TINT64: case TL_TTIMESTAMP: case TL_TTIMESTAMPTZ:
            c[k].kind = EK_I64;
            c[k].v = tl_array_i64(a);
            bound += (uint64_t)n * 10;
            break;
        case TL_TDATE:
            c[k].kind = EK_I32;
            c[k].v = tl_array_i32(a);
            bound += (uint64_t)n * 10;
            break;
        case TL_TBOOL:
            c[k].kind = EK_BOOL;
            bound += (uint64_t)n;
            break;
        case TL_TFLOAT64:
            c[k].kind = EK_F64;
            c[k].v = tl_array_f64(a);
            bound += (uint64_t)n * 8;
            break;
        case TL_TSTRING: {
            const TlView *v = tl_array_views(a);
            uint64_t len = 0;
            for (int64_t i = 0; i < n; i++) len += v[i].in.len;
            c[k].kind = EK_STR;
            c[k].v = v;
            bound += (uint64_t)n * 5 + len;
            break;
        }
        default:
            st = tl_error(err, TL_ERR_DATA, "internal error: cannot group "
                          "on %s", tl_type_name(a->type));
            goto done;
        }
    }
    if (!e->bytes || (uint64_t)e->bytes_cap < bound) {
        if (bound > (uint64_t)INT64_MAX / 2) {
            st = tl_error_oom(err);
            goto done;
        }
        uint8_t *b = tl_realloc(e->bytes, (size_t)bound);
        if (!b) {
            st = tl_error_oom(err);
            goto done;
        }
        e->bytes = b;
        e->bytes_cap = (int64_t)bound;
    }
    uint8_t *const base = e->bytes;
    uint8_t *p = base;
    int64_t *off = e->off;
    for (int64_t i = 0; i < n; i++) {
        off[i] = p - base;
        uint8_t *bits = p;
        for (int j = 0; j < nb; j++) p[j] = 0;
        p += nb;
        for (int k = 0; k < nk; k++) {
            const EncCol *ck = &c[k];
            if (any_nulls && ck->nulls && is_null(ck->a, i)) {
                bits[k / 8] |= (uint8_t)(1u << (k % 8));
                continue;
            }
            switch (ck->kind) {
            case EK_I64:
                p = put_varint(p, zigzag(((const int64_t *)ck->v)[i]));
                break;
            case EK_I32:
                p = put_varint(p, zigzag(((const int32_t *)ck->v)[i]));
                break;
            case EK_BOOL:
                *p++ = tl_array_bool(ck->a, i);
                break;
            case EK_F64: {
                double d = tl_k_f64_canon(((const double *)ck->v)[i]);
                memcpy(p, &d, 8);
                p += 8;
                break;
            }
            case EK_STR: {
                const TlView *v = &((const TlView *)ck->v)[i];
                uint32_t len = v->in.len;
                p = put_varint(p, len);
                tl_copy_short(p, tl_view_ptr(v, ck->a->data), len);
                p += len;
                break;
            }
            default:
                break;
            }
        }
    }
    off[n] = p - base;
done:
    if (c != cs) tl_free(c);
    return st;
}

static void enc_free(Enc *e)
{
    tl_free(e->bytes);
    tl_free(e->off);
    memset(e, 0, sizeof *e);
}

/* A key column being decoded: values written in place, the validity
 * bitmap made at the first null, long string bytes in blocks (16 KiB
 * doubling up to 1 MiB, or one string's size) that never move. */
typedef struct DCol {
    TlBuf *vals;
    TlBuf *valid;      /* NULL until the first null */
    int64_t nulls;
    TlBuf **data;      /* finished string blocks */
    uint32_t n_data, data_cap;
    uint8_t *blk;      /* the block being filled (index n_data), or NULL */
    size_t blk_used, blk_cap;
} DCol;

#define DBLOCK_FIRST ((size_t)1 << 14)
#define DBLOCK_MAX ((size_t)1 << 20)

/* Move the block being filled to c->data (shrunk to its bytes). */
static bool dcol_close_block(DCol *c)
{
    if (!c->blk) return true;
    if (c->n_data == c->data_cap) {
        uint32_t cap = c->data_cap ? 2 * c->data_cap : 4;
        TlBuf **d = tl_realloc(c->data, (size_t)cap * sizeof *d);
        if (!d) return false;
        c->data = d;
        c->data_cap = cap;
    }
    uint8_t *m = c->blk_used < c->blk_cap ? tl_realloc(c->blk, c->blk_used ? c->blk_used : 1)
                                          : c->blk;
    if (!m) m = c->blk; /* keep the larger block */
    c->blk = NULL;
    TlBuf *b = tl_buf_adopt(m, c->blk_used);
    if (!b) return false;
    c->data[c->n_data++] = b;
    return true;
}

/* A long string's view, its bytes copied into c's blocks. */
static bool dcol_long(DCol *c, const uint8_t *s, uint32_t len, TlView *v)
{
    if (!c->blk || c->blk_cap - c->blk_used < len) {
        size_t cap = c->blk ? 2 * c->blk_cap : DBLOCK_FIRST;
        if (!dcol_close_block(c)) return false;
        if (c->n_data == UINT32_MAX) return false;
        if (cap > DBLOCK_MAX) cap = DBLOCK_MAX;
        if (cap < len) cap = len;
        c->blk = tl_malloc(cap);
        if (!c->blk) return false;
        c->blk_cap = cap;
        c->blk_used = 0;
    }
    memcpy(c->blk + c->blk_used, s, len);
    v->out.len = len;
    memcpy(v->out.prefix, s, 4);
    v->out.buf = c->n_data;
    v->out.off = (uint32_t)c->blk_used;
    c->blk_used += len;
    return true;
}

/* Row i of c is null: its value stays zero, its validity bit 0. */
static bool dcol_null(DCol *c, int64_t i, int64_t n)
{
    if (!c->valid) {
        c->valid = tl_buf_new(tl_bitmap_bytes(n), true);
        if (!c->valid) return false;
        tl_bitmap_fill(c->valid->data, 0, n, true);
    }
    tl_bit_clear(c->valid->data, i);
    c->nulls++;
    return true;
}

static void dcol_free(DCol *c)
{
    tl_buf_release(c->vals);
    tl_buf_release(c->valid);
    for (uint32_t j = 0; j < c->n_data; j++) tl_buf_release(c->data[j]);
    tl_free(c->data);
    tl_free(c->blk);
    memset(c, 0, sizeof *c);
}

/* Decode rows[0..n) (encoded keys of types[0..nk)) into out[0..nk): each
 * column's values written straight into an array of n elements (the
 * encoding is trusted: the grouper wrote it). */
static TlStatus decode_rows(const uint8_t *const *rows, int64_t n,
                            const TlType *types, int nk, TlArray **out,
                            TlError *err)
{
    int nb = (nk + 7) / 8;
    TlStatus st = TL_OK;
    DCol *c = tl_calloc((size_t)nk + 1, sizeof *c);
    if (!c) return tl_error_oom(err);
    for (int k = 0; k < nk; k++) {
        out[k] = NULL;
        size_t bytes;
        switch (types[k]) {
        case TL_TNULL: continue;
        case TL_TBOOL: bytes = tl_bitmap_bytes(n); break;
        case TL_TDATE: bytes = (size_t)n * 4; break;
        case TL_TSTRING: bytes = (size_t)n * sizeof(TlView); break;
        default: bytes = (size_t)n * 8; break;
        }
        /* bool bits and null slots rely on zeroed values */
        c[k].vals = tl_buf_new(bytes, types[k] == TL_TBOOL);
        if (!c[k].vals) {
            st = tl_error_oom(err);
            goto done;
        }
    }
    for (int64_t i = 0; i < n; i++) {
        const uint8_t *p = rows[i], *bits = p;
        p += nb;
        for (int k = 0; k < nk; k++) {
            TlType t = types[k];
            if (t == TL_TNULL) continue;
            uint8_t *vals = c[k].vals->data;
            if (bits[k / 8] & (1u << (k % 8))) {
                if (!dcol_null(&c[k], i, n)) {
                    st = tl_error_oom(err);
                    goto done;
                }
                switch (t) {
                case TL_TBOOL: break;
                case TL_TDATE: memset(vals + (size_t)i * 4, 0, 4); break;
                case TL_TSTRING: memset(vals + (size_t)i * 16, 0, 16); break;
                default: memset(vals + (size_t)i * 8, 0, 8); break;
                }
                continue;
            }
            uint64_t u;
            switch (t) {
            case TL_TINT64: case TL_TTIMESTAMP: case TL_TTIMESTAMPTZ: {
                p = get_varint(p, &u);
                int64_t v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
                memcpy(vals + (size_t)i * 8, &v, 8);
                break;
            }
            case TL_TDATE: {
                p = get_varint(p, &u);
                int32_t v = (int32_t)((int64_t)(u >> 1) ^ -(int64_t)(u & 1));
                memcpy(vals + (size_t)i * 4, &v, 4);
                break;
            }
            case TL_TBOOL:
                if (*p++) tl_bit_set(vals, i);
                break;
            case TL_TFLOAT64:
                memcpy(vals + (size_t)i * 8, p, 8);
                p += 8;
                break;
            default: {
                p = get_varint(p, &u);
                uint32_t len = (uint32_t)u;
                uint8_t *dst = vals + (size_t)i * 16;
                if (len <= TL_VIEW_INLINE) {
                    /* written in place (a view built aside and copied
                     * stalls on store forwarding) */
                    uint64_t z = 0;
                    memcpy(dst, &z, 8);
                    memcpy(dst + 8, &z, 8);
                    memcpy(dst, &len, 4);
                    tl_copy_short(dst + 4, p, len);
                } else {
                    TlView v;
                    if (!dcol_long(&c[k], p, len, &v)) {
                        st = tl_error_oom(err);
                        goto done;
                    }
                    memcpy(dst, &v, 16);
                }
                p += len;
                break;
            }
            }
        }
    }
    for (int k = 0; k < nk; k++) {
        if (types[k] == TL_TNULL) {
            out[k] = tl_array_new_null(TL_TNULL, n);
        } else {
            if (!dcol_close_block(&c[k])) {
                st = tl_error_oom(err);
                goto done;
            }
            out[k] = tl_array_new(types[k], n, c[k].vals, c[k].valid, c[k].nulls,
                                  c[k].data, c[k].n_data);
            c[k].vals = c[k].valid = NULL; /* taken over, also on failure */
            c[k].data = NULL;
            c[k].n_data = 0;
        }
        if (!out[k]) {
            st = tl_error_oom(err);
            goto done;
        }
    }
done:
    for (int k = 0; k < nk; k++) dcol_free(&c[k]);
    tl_free(c);
    if (st != TL_OK)
        for (int k = 0; k < nk; k++) {
            tl_array_release(out[k]);
            out[k] = NULL;
        }
    return st;
}

static RSlot *alloc_slots(uint64_t cap)
{
    RSlot *s = tl_malloc((size_t)cap * sizeof *s);
    if (s)
        for (uint64_t i = 0; i < cap; i++) s[i].gid = EMPTY;
    return s;
}

static inline uint32_t key_len(const uint8_t *k)
{
    uint32_t len;
    memcpy(&len, k, 4);
    return len;
}

/* A row hash's home slot: the hash rotated by 32 bits, masked, so while
 * the table has at most 2^32 slots the home is the tag's low bits (a slot
 * knows its home without the row). */
static inline uint64_t home(uint64_t h, uint64_t mask)
{
    return (h >> 32 | h << 32) & mask;
}

/* Double the table.  Up to 2^32 slots every group's home follows from its
 * slot's tag: one pass over the old slots, whose entries land at their
 * index or one old capacity above (two sequential streams, no row read, no
 * hash).  Beyond, groups are reinserted in id order from their stored rows
 * (which sit in the blocks in id order). */
static TlStatus grow(RowsGrouper *g, TlError *err)
{
    uint64_t cap = (g->mask + 1) * 2;
    RSlot *s = alloc_slots(cap);
    if (!s) return tl_error_oom(err);
    uint64_t mask = cap - 1;
    if (mask <= UINT32_MAX) {
        for (uint64_t i = 0; i <= g->mask; i++) {
            const RSlot *o = &g->slots[i];
            if (o->gid == EMPTY) continue;
            uint64_t p = o->tag & mask;
            while (s[p].gid != EMPTY) p = (p + 1) & mask;
            s[p] = *o;
        }
    } else {
        /* the caller's hashes cannot be recomputed from the rows (2^32
         * slots would take 32 GiB: a limit, not a case that happens) */
        if (g->hash_kind == 2) {
            tl_free(s);
            return tl_error(err, TL_ERR_DATA, "too many groups (more than %u "
                            "in one partition)", (unsigned)(UINT32_MAX / 2));
        }
        for (uint32_t gid = 0; gid < g->head.n_groups; gid++) {
            const uint8_t *k = g->keys[gid];
            uint64_t h = tl_k_hash_bytes(k + 4, key_len(k));
            uint64_t p = home(h, mask);
            while (s[p].gid != EMPTY) p = (p + 1) & mask;
            s[p].tag = (uint32_t)(h >> 32);
            s[p].gid = gid;
        }
    }
    tl_free(g->slots);
    g->slots = s;
    g->mask = mask;
    return TL_OK;
}

/* Copy a row behind its length into the never-moving blocks. */
static const uint8_t *keep(RowsGrouper *g, const uint8_t *p, uint32_t len)
{
    RBlock *b = g->blocks;
    size_t need = (size_t)len + 4;
    if (!b || b->cap - b->used < need) {
        size_t cap = need > BLOCK_MIN ? need : BLOCK_MIN;
        b = tl_malloc(sizeof *b + cap);
        if (!b) return NULL;
        b->next = g->blocks;
        b->used = 0;
        b->cap = cap;
        g->blocks = b;
    }
    uint8_t *dst = b->bytes + b->used;
    memcpy(dst, &len, 4);
    if (len <= 32) {
        if (len > 16) {
            tl_copy_short(dst + 4, p, 16);
            tl_copy_short(dst + 20, p + 16, len - 16);
        } else {
            tl_copy_short(dst + 4, p, len);
        }
    } else {
        memcpy(dst + 4, p, len);
    }
    b->used += need;
    return dst;
}

/* Byte equality of two short keys without a libc call. */
static inline bool keys_eq(const uint8_t *a, const uint8_t *b, size_t len)
{
    while (len >= 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y) return false;
        a += 8;
        b += 8;
        len -= 8;
    }
    while (len--)
        if (*a++ != *b++) return false;
    return true;
}

static inline TlStatus lookup(RowsGrouper *g, const TlArray *const *keys,
                              int64_t i, const uint8_t *row, size_t len,
                              uint64_t h, uint32_t *id, TlError *err)
{
    uint32_t tag = (uint32_t)(h >> 32);
    for (;;) {
        uint64_t p = home(h, g->mask);
        for (;;) {
            const RSlot *s = &g->slots[p];
            if (s->gid == EMPTY) break;
            if (s->tag == tag) {
                const uint8_t *k = g->keys[s->gid];
                if (key_len(k) == len && keys_eq(k + 4, row, len)) {
                    *id = s->gid;
                    return TL_OK;
                }
            }
            p = (p + 1) & g->mask;
        }
        if (((uint64_t)g->head.n_groups + 1) * 4 > (g->mask + 1) * 3) {
            TL_TRY(grow(g, err));
            continue;
        }
        if (len > UINT32_MAX - 8)
            return tl_error(err, TL_ERR_DATA, "group key longer than 4 GiB");
        if (g->head.n_groups >= g->keys_cap) {
            uint64_t want = g->keys_cap ? (uint64_t)g->keys_cap + g->keys_cap / 2 : 1024;
            uint32_t cap = want > UINT32_MAX ? UINT32_MAX : (uint32_t)want;
            const uint8_t **k = tl_realloc_big((void *)g->keys, (size_t)cap * sizeof *k);
            if (!k) return tl_error_oom(err);
            g->keys = k;
            g->keys_cap = cap;
        }
        const uint8_t *kept = keep(g, row, (uint32_t)len);
        if (!kept) return tl_error_oom(err);
        TL_TRY(tl_grouper_add(&g->head, keys, i, id, err));
        g->keys[*id] = kept;
        if (g->fkb)
            for (int k = 0; k < g->head.n_keys; k++)
                if (g->head.types[k] == TL_TFLOAT64 &&
                    !tl_builder_append_from(&g->fkb[k], keys[k], i))
                    return tl_error_oom(err);
        RSlot *s = &g->slots[p];
        s->tag = tag;
        s->gid = *id;
        return TL_OK;
    }
}

/* Map a batch: encode its rows, hash them (XXH3 of the encoded bytes)
 * unless the caller's hashes hv are given, probe.  One grouper is fed one
 * way only: a table's entries must all hash alike. */
static TlStatus rows_map_with(RowsGrouper *g, const TlArray *const *keys,
                              int64_t n, const uint64_t *hv, uint32_t *ids,
                              TlError *err)
{
    int8_t kind = hv ? 2 : 1;
    if (g->hash_kind != 0 && g->hash_kind != kind)
        return tl_error(err, TL_ERR_DATA, "internal error: a grouper fed with "
                        "and without row hashes");
    if (g->ended || !g->slots)
        return tl_error(err, TL_ERR_DATA, "internal error: map after keys");
    g->hash_kind = kind;
    /* A key column of the null type encodes as nulls of the key's type
     * (encode_rows sets its null bits), equal to the nulls of other batches. */
    TL_TRY(encode_rows(&g->enc, keys, g->head.n_keys, n, err));
    const uint8_t *b = g->enc.bytes;
    const int64_t *off = g->enc.off;
    if (!hv) {
        if (g->hashes_cap < n) {
            uint64_t *h = tl_realloc(g->hashes, (size_t)n * sizeof *h);
            if (!h) return tl_error_oom(err);
            g->hashes = h;
            g->hashes_cap = n;
        }
        for (int64_t i = 0; i < n; i++)
            g->hashes[i] = tl_k_hash_bytes(b + off[i], (size_t)(off[i + 1] - off[i]));
        hv = g->hashes;
    }
    for (int64_t i = 0; i < n; i++) {
        if (i + PREFETCH < n)
            __builtin_prefetch(&g->slots[home(hv[i + PREFETCH], g->mask)]);
        TL_TRY(lookup(g, keys, i, b + off[i], (size_t)(off[i + 1] - off[i]),
                      hv[i], &ids[i], err));
    }
    return TL_OK;
}

static TlStatus rows_map(TlGrouper *gh, const TlArray *const *keys, int64_t n,
                         uint32_t *ids, TlError *err)
{
    return rows_map_with((RowsGrouper *)gh, keys, n, NULL, ids, err);
}

static TlStatus rows_map_hashed(TlGrouper *gh, const TlArray *const *keys,
                                int64_t n, const uint64_t *hashes, uint32_t *ids,
                                TlError *err)
{
    return rows_map_with((RowsGrouper *)gh, keys, n, hashes, ids, err);
}

/* Decode the stored rows of a range of groups into key columns (see
 * group.h).  The first call frees the table: the input has ended.  Float
 * keys come from their builders instead: the encoding maps -0.0 to 0.0,
 * and a group's key is its first row's value. */
static TlStatus rows_keys(TlGrouper *gh, uint32_t first, uint32_t n,
                          TlArray **out, TlError *err)
{
    RowsGrouper *g = (RowsGrouper *)gh;
    if (!g->ended) {
        /* the first call ends the input; later ones only read, so they may
         * run at once on several threads (op_agg's output) */
        g->ended = true;
        tl_free(g->slots);
        g->slots = NULL;
        tl_free(g->hashes);
        g->hashes = NULL;
        g->hashes_cap = 0;
        enc_free(&g->enc);
    }
    if (g->fkb && !g->fdone) {
        g->fdone = tl_calloc((size_t)gh->n_keys, sizeof *g->fdone);
        if (!g->fdone) return tl_error_oom(err);
        for (int k = 0; k < gh->n_keys; k++)
            if (gh->types[k] == TL_TFLOAT64 &&
                !(g->fdone[k] = tl_builder_finish(&g->fkb[k])))
                return tl_error_oom(err);
    }
    const uint8_t **rows = tl_malloc(((size_t)n + 1) * sizeof *rows);
    if (!rows) return tl_error_oom(err);
    for (uint32_t i = 0; i < n; i++) rows[i] = g->keys[first + i] + 4;
    TlStatus st = decode_rows(rows, n, gh->types, gh->n_keys, out, err);
    tl_free(rows);
    for (int k = 0; st == TL_OK && g->fdone && k < gh->n_keys; k++) {
        if (!g->fdone[k]) continue;
        tl_array_release(out[k]);
        out[k] = tl_array_slice(g->fdone[k], first, n);
        if (!out[k]) st = tl_error_oom(err);
    }
    if (st != TL_OK)
        for (int k = 0; k < gh->n_keys; k++) {
            tl_array_release(out[k]);
            out[k] = NULL;
        }
    return st;
}

/* tl_grouper_keys_multi over row groupers (see group.h): the picked
 * groups' stored rows decoded straight into the output order.  With float
 * keys (their first-row values live in builders) the generic way. */
static TlStatus rows_keys_multi(TlGrouper *const *gs, const uint8_t *part,
                                const uint32_t *gid, int64_t n, TlArray **out,
                                TlError *err)
{
    const RowsGrouper *g0 = NULL;
    for (int64_t i = 0; i < n && !g0; i++) g0 = (const RowsGrouper *)gs[part[i]];
    if (!g0) return tl_error(err, TL_ERR_DATA, "internal error: keys_multi");
    const uint8_t **rows = tl_malloc(((size_t)n + 1) * sizeof *rows);
    if (!rows) return tl_error_oom(err);
    for (int64_t i = 0; i < n; i++) {
        const RowsGrouper *g = (const RowsGrouper *)gs[part[i]];
        if (g->fkb || !g->ended || g->head.n_keys != g0->head.n_keys) {
            tl_free(rows);
            err->msg[0] = '\0';
            return TL_ERR_USAGE; /* the generic way */
        }
        rows[i] = g->keys[gid[i]] + 4;
    }
    TlStatus st = decode_rows(rows, n, g0->head.types, g0->head.n_keys, out, err);
    tl_free(rows);
    return st;
}

static void rows_free(TlGrouper *gh)
{
    RowsGrouper *g = (RowsGrouper *)gh;
    enc_free(&g->enc);
    if (g->fkb)
        for (int k = 0; k < gh->n_keys; k++) tl_builder_free(&g->fkb[k]);
    tl_free(g->fkb);
    if (g->fdone)
        for (int k = 0; k < gh->n_keys; k++) tl_array_release(g->fdone[k]);
    tl_free(g->fdone);
    tl_grouper_fini(gh);
    tl_free(g->slots);
    tl_free_big((void *)g->keys);
    tl_free(g->hashes);
    tl_free(g->ghash);
    while (g->blocks) {
        RBlock *b = g->blocks;
        g->blocks = b->next;
        tl_free(b);
    }
    tl_free(g);
}

/* tl_grouper_seal_local: keep the stored rows, hash each once (on the
 * worker), free the table.  Not with float keys (their first-row values
 * live in builders that tl_grouper_add cannot fill from stored rows). */
static bool rows_seal_local(TlGrouper *gh, TlError *err)
{
    RowsGrouper *g = (RowsGrouper *)gh;
    if (g->fkb) return false;
    uint32_t n = gh->n_groups;
    g->ghash = tl_malloc(((size_t)n + 1) * sizeof *g->ghash);
    if (!g->ghash) {
        tl_error_oom(err);
        return false;
    }
    for (uint32_t j = 0; j < n; j++) {
        const uint8_t *k = g->keys[j];
        g->ghash[j] = tl_k_hash_bytes(k + 4, key_len(k));
    }
    tl_free(g->slots);
    g->slots = NULL;
    tl_free(g->hashes);
    g->hashes = NULL;
    g->hashes_cap = 0;
    enc_free(&g->enc);
    return true;
}

/* tl_grouper_merge: probe g with the local groups' stored rows and hashes
 * (no encoding, no hashing on the consumer). */
static TlStatus rows_merge(TlGrouper *gh, TlGrouper *lh, uint32_t *map,
                           TlError *err)
{
    RowsGrouper *g = (RowsGrouper *)gh, *l = (RowsGrouper *)lh;
    uint32_t n = lh->n_groups;
    if (g->fkb || !l->ghash || !g->slots || g->hash_kind == 2)
        return tl_error(err, TL_ERR_DATA, "internal error: grouper merge");
    g->hash_kind = 1;
    for (uint32_t j = 0; j < n; j++) {
        if (j + PREFETCH < n)
            __builtin_prefetch(&g->slots[home(l->ghash[j + PREFETCH], g->mask)]);
        const uint8_t *k = l->keys[j];
        TL_TRY(lookup(g, NULL, j, k + 4, key_len(k), l->ghash[j], &map[j], err));
    }
    return TL_OK;
}

static const TlGrouperVt rows_vt = {rows_map, rows_free, rows_keys, NULL,
                                    rows_seal_local, rows_merge,
                                    rows_keys_multi, rows_map_hashed};

/* Create the grouper on encoded rows (see group.h). */
TlStatus tl_group_rows_new(const TlType *types, int n_keys, bool keep_keys,
                           TlGrouper **out, TlError *err)
{
    *out = NULL;
    RowsGrouper *g = tl_calloc(1, sizeof *g);
    if (!g) return tl_error_oom(err);
    TlStatus st = tl_grouper_init(&g->head, &rows_vt, types, n_keys, keep_keys,
                                  false, err);
    if (st != TL_OK) {
        tl_free(g);
        return st;
    }
    g->mask = 15; /* grows by doubling: a small input stays small */
    g->slots = alloc_slots(g->mask + 1);
    if (!g->slots) {
        rows_free(&g->head);
        return tl_error_oom(err);
    }
    bool floats = false;
    for (int k = 0; k < n_keys; k++) floats |= types[k] == TL_TFLOAT64;
    if (keep_keys && floats) {
        g->fkb = tl_calloc((size_t)n_keys, sizeof *g->fkb);
        if (!g->fkb) {
            rows_free(&g->head);
            return tl_error_oom(err);
        }
        for (int k = 0; k < n_keys; k++) tl_builder_init(&g->fkb[k], types[k]);
    }
    *out = &g->head;
    return TL_OK;
}
