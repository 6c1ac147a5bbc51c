/*
 * op_rows.c -- operators that pick rows by their position: the last N rows
 * (tail), a seeded sample, and row numbers.
 *
 * All three run on the consumer side of their child, which hands batches
 * out strictly in input order (the scan takes its morsels back in order),
 * so a row's position is a counter of the rows seen before it: the same
 * for every --threads and batch size, with no per-morsel offsets to share
 * between tasks.  Their work per row is a few arithmetic operations, so
 * running it on one thread costs little next to decoding.
 *
 * Tail holds the batches that may still contain one of the last N rows:
 * at most N rows plus one batch, whatever the input's size.
 *
 * The sample decides each row from h(i) = fmix64(fmix64(seed ^ C) + (i + 1)
 * * 0x9E3779B97F4A7C15) (murmur3's 64-bit finalizer, i the row's 0-based
 * position in the step's input): a percent P keeps the rows with
 * h(i) < P/100 * 2^64; a count N keeps the N rows of smallest (h(i), i),
 * in input order.  The count form holds its candidates copied out of their
 * batches (so no input block stays alive for one row), and once it holds
 * more than 2N it keeps only the N smallest and raises its bar to the Nth:
 * memory stays O(N) rows and each row is copied a constant number of times
 * on average.  This is not DuckDB's reservoir sample (whose rows depend on
 * its threads); it is a bottom-N sketch over a fixed hash.
 */
#include "ops.h"
#include "../../kernels/hash.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ tail */

typedef struct Tail {
    TlOperator base;
    TlOperator *child;
    int64_t n;
    TlBatch **q;      /* held batches, oldest first, from q[head] */
    int nq, head, cap;
    int64_t held;     /* rows in q[head..nq) */
    int64_t rows_in;  /* rows read from the child */
    int64_t skip;     /* rows of q[head] before the first of the last n */
    bool read;        /* the child is read to its end */
} Tail;

static TlStatus tail_read(Tail *t, TlError *err)
{
    TlBatch *b;
    for (;;) {
        b = NULL;
        TL_TRY(t->child->next(t->child, &b, err));
        if (!b) break;
        if (b->n_rows == 0) {
            tl_batch_free(b);
            continue;
        }
        if (t->nq == t->cap) {
            if (t->head > 0) { /* slide the live part down */
                for (int i = t->head; i < t->nq; i++) t->q[i - t->head] = t->q[i];
                t->nq -= t->head;
                t->head = 0;
            } else {
                int nc = t->cap ? 2 * t->cap : 8;
                TlBatch **q = tl_realloc(t->q, (size_t)nc * sizeof *q);
                if (!q) {
                    tl_batch_free(b);
                    return tl_error_oom(err);
                }
                t->q = q;
                t->cap = nc;
            }
        }
        t->q[t->nq++] = b;
        t->held += b->n_rows;
        t->rows_in += b->n_rows;
        /* drop the oldest batch once the others hold n rows */
        while (t->nq - t->head > 1 && t->held - t->q[t->head]->n_rows >= t->n) {
            t->held -= t->q[t->head]->n_rows;
            tl_batch_free(t->q[t->head]);
            t->q[t->head++] = NULL;
        }
    }
    t->skip = t->held > t->n ? t->held - t->n : 0;
    t->read = true;
    return TL_OK;
}

static TlStatus tail_next(TlOperator *op, TlBatch **out, TlError *err)
{
    Tail *t = (Tail *)op;
    TlBatch *b, *nb;
    *out = NULL;
    if (t->n == 0) return TL_OK;
    if (!t->read) TL_TRY(tail_read(t, err));
    if (t->head == t->nq) return TL_OK;
    b = t->q[t->head];
    t->q[t->head++] = NULL;
    if (t->skip == 0) {
        b->schema = op->schema;
        *out = b;
        return TL_OK;
    }
    nb = tl_batch_new(op->schema, b->n_cols, b->n_rows - t->skip);
    for (int c = 0; nb && c < b->n_cols; c++) {
        nb->cols[c] = tl_array_slice(b->cols[c], t->skip, b->n_rows - t->skip);
        if (!nb->cols[c]) {
            tl_batch_free(nb);
            nb = NULL;
        }
    }
    tl_batch_free(b);
    if (!nb) return tl_error_oom(err);
    t->skip = 0;
    *out = nb;
    return TL_OK;
}

/* See exec.h (TlOperator.origin): the output is the child's last rows. */
static void tail_origin(TlOperator *op, int64_t row, TlPlaceVal *v, char *buf,
                        size_t cap)
{
    Tail *t = (Tail *)op;
    int64_t kept = t->rows_in < t->n ? t->rows_in : t->n;
    tl_origin(t->child, t->rows_in - kept + row, v, buf, cap);
}

static void tail_free(TlOperator *op)
{
    Tail *t = (Tail *)op;
    if (!t) return;
    for (int i = 0; i < t->nq; i++) tl_batch_free(t->q[i]);
    tl_free(t->q);
    if (t->child) t->child->free(t->child);
    tl_free(t);
}

/* See ops.h. */
TlStatus tl_op_tail_new(TlOperator *child, int64_t limit, TlOperator **out,
                        TlError *err)
{
    Tail *t = tl_calloc(1, sizeof *t);
    *out = NULL;
    if (!t) {
        child->free(child);
        return tl_error_oom(err);
    }
    t->base.next = tail_next;
    t->base.free = tail_free;
    t->base.origin = tail_origin;
    t->base.schema = child->schema;
    t->base.stats = child->stats;
    t->base.ctx = child->ctx;
    t->child = child;
    t->n = limit;
    *out = &t->base;
    return TL_OK;
}

/* ---------------------------------------------------------------- sample */

/* A run of candidate rows, copied, in input order, with their keys. */
typedef struct Piece {
    TlBatch *rows;
    uint64_t *h;
    int64_t *pos;
} Piece;

typedef struct Key {
    uint64_t h;
    int64_t pos;
} Key;

typedef struct Sample {
    TlOperator base;
    TlOperator *child;
    int64_t rows;      /* count form: rows kept; -1: the percent form */
    uint64_t bar;      /* percent form: keep h < bar (all when keep_all) */
    bool keep_all;
    uint64_t seed_mix;
    int64_t pos;       /* rows read from the child */
    /* count form */
    Piece *pieces;
    int n_pieces, cap_pieces, next_piece;
    int64_t held;
    bool have_bar;     /* bar_h: keep only h < bar_h (the Nth smallest) */
    uint64_t bar_h;
    bool read;
    /* origin: the child's positions of the last batch handed out */
    int64_t *last_pos;
    int64_t last_n, out_rows;
} Sample;

static uint64_t sample_hash(const Sample *s, int64_t pos)
{
    return tl_k_hash_mix64(s->seed_mix + (uint64_t)(pos + 1) * 0x9E3779B97F4A7C15ull);
}

/* Rows idx[0..n) of b copied into a new batch of schema sch (own strings:
 * holding it keeps none of b's blocks alive). */
static TlStatus copy_rows(TlBatch *const *src, const uint32_t *which,
                          const uint32_t *idx, int64_t n, const TlSchema *sch,
                          int n_cols, TlBatch **out, TlError *err)
{
    TlBatch *nb = tl_batch_new(sch, n_cols, n);
    if (!nb) return tl_error_oom(err);
    for (int c = 0; c < n_cols; c++) {
        TlBuilder bl;
        tl_builder_init(&bl, sch->fields[c].type);
        bool ok = tl_builder_reserve(&bl, n);
        for (int64_t i = 0; ok && i < n; i++)
            ok = tl_builder_append_from(&bl, src[which ? which[i] : 0]->cols[c], idx[i]);
        nb->cols[c] = ok ? tl_builder_finish(&bl) : NULL;
        tl_builder_free(&bl);
        if (!nb->cols[c]) {
            tl_batch_free(nb);
            return tl_error_oom(err);
        }
    }
    *out = nb;
    return TL_OK;
}

static void piece_free(Piece *p)
{
    tl_batch_free(p->rows);
    tl_free(p->h);
    tl_free(p->pos);
    p->rows = NULL;
    p->h = NULL;
    p->pos = NULL;
}

static TlStatus push_piece(Sample *s, Piece pc, TlError *err)
{
    if (s->n_pieces == s->cap_pieces) {
        int nc = s->cap_pieces ? 2 * s->cap_pieces : 16;
        Piece *v = tl_realloc(s->pieces, (size_t)nc * sizeof *v);
        if (!v) {
            piece_free(&pc);
            return tl_error_oom(err);
        }
        s->pieces = v;
        s->cap_pieces = nc;
    }
    s->pieces[s->n_pieces++] = pc;
    s->held += pc.rows->n_rows;
    return TL_OK;
}

static int key_cmp(const void *a, const void *b)
{
    const Key *x = a, *y = b;
    if (x->h != y->h) return x->h < y->h ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Keep only the s->rows smallest keys held, in input order, in pieces of
 * at most the batch size; the bar becomes the largest key kept. */
static TlStatus compact(Sample *s, TlError *err)
{
    Key *keys = NULL, bar;
    Piece *old = s->pieces;
    int n_old = s->n_pieces;
    int64_t k = 0, batch = tl_ctx_batch_rows(s->base.ctx);
    uint32_t *which = NULL, *idx = NULL;
    TlStatus st = TL_OK;

    if (s->held <= s->rows) return TL_OK;
    keys = tl_malloc((size_t)s->held * sizeof *keys);
    if (!keys) return tl_error_oom(err);
    for (int i = 0; i < n_old; i++)
        for (int64_t r = 0; r < old[i].rows->n_rows; r++)
            keys[k++] = (Key){old[i].h[r], old[i].pos[r]};
    qsort(keys, (size_t)k, sizeof *keys, key_cmp);
    bar = keys[s->rows - 1];
    tl_free(keys);
    s->have_bar = true;
    s->bar_h = bar.h;

    s->pieces = NULL;
    s->n_pieces = s->cap_pieces = 0;
    s->held = 0;
    which = tl_malloc((size_t)(batch + 1) * sizeof *which);
    idx = tl_malloc((size_t)(batch + 1) * sizeof *idx);
    Piece pc = {0};
    pc.h = tl_malloc((size_t)(batch + 1) * sizeof *pc.h);
    pc.pos = tl_malloc((size_t)(batch + 1) * sizeof *pc.pos);
    TlBatch **srcs = tl_malloc((size_t)(n_old + 1) * sizeof *srcs);
    int64_t m = 0;
    if (!which || !idx || !pc.h || !pc.pos || !srcs) {
        st = tl_error_oom(err);
        goto done;
    }
    for (int i = 0; i < n_old; i++) srcs[i] = old[i].rows;
    for (int i = 0; i <= n_old && st == TL_OK; i++) {
        int64_t nr = i < n_old ? old[i].rows->n_rows : 0;
        for (int64_t r = 0; r <= nr; r++) {
            bool flush = m == batch || (i == n_old && m > 0);
            if (flush) {
                st = copy_rows(srcs, which, idx, m, s->base.schema,
                               s->base.schema->n_fields, &pc.rows, err);
                if (st == TL_OK) {
                    Piece full = pc;
                    pc.rows = NULL;
                    pc.h = tl_malloc((size_t)(batch + 1) * sizeof *pc.h);
                    pc.pos = tl_malloc((size_t)(batch + 1) * sizeof *pc.pos);
                    st = push_piece(s, full, err);
                    if (st == TL_OK && (!pc.h || !pc.pos)) st = tl_error_oom(err);
                }
                m = 0;
                if (st != TL_OK) break;
            }
            if (r == nr) break;
            Key key = {old[i].h[r], old[i].pos[r]};
            if (key_cmp(&key, &bar) > 0) continue;
            which[m] = (uint32_t)i;
            idx[m] = (uint32_t)r;
            pc.h[m] = key.h;
            pc.pos[m] = key.pos;
            m++;
        }
    }
done:
    piece_free(&pc);
    tl_free(which);
    tl_free(idx);
    tl_free(srcs);
    for (int i = 0; i < n_old; i++) piece_free(&old[i]);
    tl_free(old);
    return st;
}

/* Count form: read the child, keeping the candidates. */
static TlStatus sample_read(Sample *s, TlError *err)
{
    uint32_t *idx = NULL;
    int64_t cap = 0;
    TlStatus st = TL_OK;
    for (;;) {
        TlBatch *b = NULL;
        Piece pc = {0};
        int64_t m = 0;
        if ((st = s->child->next(s->child, &b, err)) != TL_OK) break;
        if (!b) break;
        if (b->n_rows > cap) {
            tl_free(idx);
            cap = b->n_rows;
            idx = tl_malloc((size_t)cap * sizeof *idx);
            if (!idx) {
                tl_batch_free(b);
                st = tl_error_oom(err);
                break;
            }
        }
        pc.h = tl_malloc((size_t)(b->n_rows ? b->n_rows : 1) * sizeof *pc.h);
        pc.pos = tl_malloc((size_t)(b->n_rows ? b->n_rows : 1) * sizeof *pc.pos);
        if (!pc.h || !pc.pos) {
            piece_free(&pc);
            tl_batch_free(b);
            st = tl_error_oom(err);
            break;
        }
        for (int64_t r = 0; r < b->n_rows; r++) {
            int64_t pos = s->pos + r;
            uint64_t h = sample_hash(s, pos);
            /* a later row loses a tie with the bar: its position is larger */
            if (s->have_bar && h >= s->bar_h) continue;
            idx[m] = (uint32_t)r;
            pc.h[m] = h;
            pc.pos[m] = pos;
            m++;
        }
        s->pos += b->n_rows;
        if (m > 0)
            st = copy_rows(&b, NULL, idx, m, s->base.schema, b->n_cols, &pc.rows, err);
        tl_batch_free(b);
        if (st == TL_OK && m > 0) st = push_piece(s, pc, err);
        else piece_free(&pc);
        if (st != TL_OK) break;
        if (s->rows <= (INT64_MAX - 1024) / 2 && s->held > 2 * s->rows + 1024 &&
            (st = compact(s, err)) != TL_OK)
            break;
    }
    tl_free(idx);
    if (st == TL_OK) st = compact(s, err);
    s->read = true;
    return st;
}

/* Remember where the rows of the batch handed out came from (origin). */
static void sample_handed(Sample *s, const int64_t *pos, int64_t n)
{
    tl_free(s->last_pos);
    s->last_pos = tl_malloc((size_t)(n ? n : 1) * sizeof *s->last_pos);
    if (s->last_pos) memcpy(s->last_pos, pos, (size_t)n * sizeof *pos);
    s->last_n = s->last_pos ? n : 0;
    s->out_rows += n;
}

static TlStatus sample_next(TlOperator *op, TlBatch **out, TlError *err)
{
    Sample *s = (Sample *)op;
    *out = NULL;
    if (s->rows >= 0) {
        if (s->rows == 0) return TL_OK;
        if (!s->read) TL_TRY(sample_read(s, err));
        if (s->next_piece == s->n_pieces) return TL_OK;
        Piece *pc = &s->pieces[s->next_piece++];
        sample_handed(s, pc->pos, pc->rows->n_rows);
        *out = pc->rows;
        pc->rows = NULL;
        piece_free(pc);
        return TL_OK;
    }
    for (;;) {
        TlBatch *b = NULL, *nb;
        int64_t m = 0;
        TL_TRY(s->child->next(s->child, &b, err));
        if (!b) return TL_OK;
        uint32_t *idx = tl_malloc((size_t)(b->n_rows ? b->n_rows : 1) * sizeof *idx);
        int64_t *pos = tl_malloc((size_t)(b->n_rows ? b->n_rows : 1) * sizeof *pos);
        if (!idx || !pos) {
            tl_free(idx);
            tl_free(pos);
            tl_batch_free(b);
            return tl_error_oom(err);
        }
        for (int64_t r = 0; r < b->n_rows; r++) {
            if (!s->keep_all && sample_hash(s, s->pos + r) >= s->bar) continue;
            idx[m] = (uint32_t)r;
            pos[m++] = s->pos + r;
        }
        s->pos += b->n_rows;
        if (m == 0) {
            tl_free(idx);
            tl_free(pos);
            tl_batch_free(b);
            continue;
        }
        nb = tl_batch_new(op->schema, b->n_cols, m);
        for (int c = 0; nb && c < b->n_cols; c++) {
            nb->cols[c] = m == b->n_rows ? tl_array_retain(b->cols[c])
                                         : tl_array_take(b->cols[c], idx, m);
            if (!nb->cols[c]) {
                tl_batch_free(nb);
                nb = NULL;
            }
        }
        tl_batch_free(b);
        if (nb) sample_handed(s, pos, m);
        tl_free(idx);
        tl_free(pos);
        if (!nb) return tl_error_oom(err);
        *out = nb;
        return TL_OK;
    }
}

/* See exec.h (TlOperator.origin): a row of the batch handed out last is
 * the child's row at its remembered position. */
static void sample_origin(TlOperator *op, int64_t row, TlPlaceVal *v, char *buf,
                          size_t cap)
{
    Sample *s = (Sample *)op;
    int64_t i = row - (s->out_rows - s->last_n);
    buf[0] = '\0';
    if (s->last_pos && i >= 0 && i < s->last_n)
        tl_origin(s->child, s->last_pos[i], v, buf, cap);
}

static void sample_free(TlOperator *op)
{
    Sample *s = (Sample *)op;
    if (!s) return;
    for (int i = 0; i < s->n_pieces; i++) piece_free(&s->pieces[i]);
    tl_free(s->pieces);
    tl_free(s->last_pos);
    if (s->child) s->child->free(s->child);
    tl_free(s);
}

/* See ops.h. */
TlStatus tl_op_sample_new(TlOperator *child, int64_t rows, double pct,
                          uint64_t seed, TlOperator **out, TlError *err)
{
    Sample *s = tl_calloc(1, sizeof *s);
    *out = NULL;
    if (!s) {
        child->free(child);
        return tl_error_oom(err);
    }
    s->base.next = sample_next;
    s->base.free = sample_free;
    s->base.origin = sample_origin;
    s->base.schema = child->schema;
    s->base.stats = child->stats;
    s->base.ctx = child->ctx;
    s->child = child;
    s->rows = pct < 0 ? rows : -1;
    s->keep_all = pct >= 100;
    /* 2^64 * pct / 100 (a pct just below 100 may round up to 2^64) */
    if (pct >= 0 && pct < 100) {
        double bar = pct / 100.0 * 18446744073709551616.0;
        s->bar = bar >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)bar;
    }
    s->seed_mix = tl_k_hash_mix64(seed ^ 0x5851F42D4C957F2Dull);
    *out = &s->base;
    return TL_OK;
}

/* ------------------------------------------------------------ row number */

typedef struct RowNumber {
    TlOperator base;
    TlOperator *child;
    int64_t next;     /* the number of the next row, from 1 */
} RowNumber;

static TlStatus rownum_next(TlOperator *op, TlBatch **out, TlError *err)
{
    RowNumber *r = (RowNumber *)op;
    TlBatch *b = NULL, *nb;
    TlBuilder bl;
    bool ok;
    *out = NULL;
    TL_TRY(r->child->next(r->child, &b, err));
    if (!b) return TL_OK;
    nb = tl_batch_new(op->schema, b->n_cols + 1, b->n_rows);
    tl_builder_init(&bl, TL_TINT64);
    ok = nb && tl_builder_reserve(&bl, b->n_rows);
    for (int64_t i = 0; ok && i < b->n_rows; i++)
        ok = tl_builder_append_i64(&bl, r->next + i);
    if (ok) {
        for (int c = 0; c < b->n_cols; c++) nb->cols[c] = tl_array_retain(b->cols[c]);
        nb->cols[b->n_cols] = tl_builder_finish(&bl);
        ok = nb->cols[b->n_cols] != NULL;
    }
    tl_builder_free(&bl);
    r->next += b->n_rows;
    tl_batch_free(b);
    if (!ok) {
        tl_batch_free(nb);
        return tl_error_oom(err);
    }
    *out = nb;
    return TL_OK;
}

/* See exec.h (TlOperator.origin): row i is the child's row i. */
static void rownum_origin(TlOperator *op, int64_t row, TlPlaceVal *v, char *buf,
                          size_t cap)
{
    tl_origin(((RowNumber *)op)->child, row, v, buf, cap);
}

static void rownum_free(TlOperator *op)
{
    RowNumber *r = (RowNumber *)op;
    if (!r) return;
    if (r->child) r->child->free(r->child);
    tl_free(r);
}

/* See ops.h. */
TlStatus tl_op_row_number_new(TlOperator *child, const TlSchema *schema,
                              TlOperator **out, TlError *err)
{
    RowNumber *r = tl_calloc(1, sizeof *r);
    *out = NULL;
    if (!r) {
        child->free(child);
        return tl_error_oom(err);
    }
    r->base.next = rownum_next;
    r->base.free = rownum_free;
    r->base.origin = rownum_origin;
    r->base.schema = schema;
    r->base.stats = child->stats;
    r->base.ctx = child->ctx;
    r->child = child;
    r->next = 1;
    *out = &r->base;
    return TL_OK;
}
