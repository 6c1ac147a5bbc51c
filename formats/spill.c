/*
 * spill.c -- spill files (spill.h): unlinked temporary files of compressed
 * blocks of columns.
 *
 * A block on disk is a 16-byte header (the sizes before and after
 * compression) and a zstd frame (level 1: the codec's fastest level
 * compresses these blocks about as fast as a disk writes them).  Before
 * compression a block is
 *
 *   n_cols, n_rows                                   8 bytes each
 *   per column: type, null_count, validity bytes, values bytes, data bytes
 *               (8 bytes each), then the validity bitmap, the values and
 *               the string bytes, each padded to 8
 *
 * with everything at offset 0: bitmaps re-based, string views rewritten so
 * that a long string's view points into the one data section (block 0).
 * Read back, the columns are slices of one buffer holding the block, so
 * reading costs one read, one decompression and no copy.
 */
#include "spill.h"
#include "compress/compress_impl.h" /* zstd allocating through tl_malloc */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

struct TlSpill {
    int fd;
    uint64_t end;           /* bytes written */
    TlBudget *b;            /* counters (may be NULL) */
    const char *dir;        /* for messages (the budget's, borrowed) */
    ZSTD_CCtx *cctx;
    ZSTD_DCtx *dctx;
    uint8_t *raw, *comp;    /* scratch, reused from block to block */
    size_t raw_cap, comp_cap;
};

enum { HEAD = 16, COL_HEAD = 40 };

static size_t pad8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

/* An unlinked file in dir: O_TMPFILE, else mkstemp + unlink.  -1 with
 * errno set on failure. */
static int make_file(const char *dir, bool no_tmpfile)
{
    int fd = -1;
#ifdef O_TMPFILE
    if (!no_tmpfile) {
        fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd >= 0) return fd;
        if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) return -1;
    }
#endif
    size_t n = strlen(dir) + 32;
    char *path = tl_malloc(n);
    if (!path) {
        errno = ENOMEM;
        return -1;
    }
    snprintf(path, n, "%s/tally-spill-XXXXXX", dir);
    fd = mkostemp(path, O_CLOEXEC);
    if (fd >= 0) unlink(path); /* gone before anything is written */
    int e = errno;
    tl_free(path);
    errno = e;
    return fd;
}

static TlStatus dir_error(const char *dir, const char *from, int e, TlError *err)
{
    if (e == ENOMEM) return tl_error_oom(err);
    return tl_error(err, TL_ERR_USAGE, "cannot create a spill file in %s (%s): %s",
                    tl_quote_name(dir).s, from ? from : "the temporary folder", strerror(e));
}

/* See spill.h. */
TlStatus tl_spill_check_dir(const char *dir, const char *from, TlError *err)
{
    struct stat st;
    if (stat(dir, &st) != 0) return dir_error(dir, from, errno, err);
    if (!S_ISDIR(st.st_mode)) return dir_error(dir, from, ENOTDIR, err);
    int fd = make_file(dir, false);
    if (fd < 0) return dir_error(dir, from, errno, err);
    close(fd);
    return TL_OK;
}

/* See spill.h. */
TlStatus tl_spill_open(TlBudget *b, bool no_tmpfile, TlSpill **out, TlError *err)
{
    const char *dir = b && b->temp_dir ? b->temp_dir : "/tmp";
    *out = NULL;
    TlSpill *f = tl_calloc(1, sizeof *f);
    if (!f) return tl_error_oom(err);
    f->b = b;
    f->dir = dir;
    f->fd = make_file(dir, no_tmpfile);
    if (f->fd < 0) {
        int e = errno;
        tl_free(f);
        return dir_error(dir, b ? b->temp_from : NULL, e, err);
    }
    *out = f;
    return TL_OK;
}

/* See spill.h. */
void tl_spill_close(TlSpill *f)
{
    if (!f) return;
    if (f->fd >= 0) close(f->fd);
    ZSTD_freeCCtx(f->cctx);
    ZSTD_freeDCtx(f->dctx);
    tl_free(f->raw);
    tl_free(f->comp);
    tl_free(f);
}

/* See spill.h. */
uint64_t tl_spill_end(const TlSpill *f)
{
    return f->end;
}

static bool reserve(uint8_t **p, size_t *cap, size_t n)
{
    if (n <= *cap) return true;
    size_t c = *cap ? *cap : 4096;
    while (c < n) c *= 2;
    uint8_t *q = tl_realloc(*p, c);
    if (!q) return false;
    *p = q;
    *cap = c;
    return true;
}

static size_t value_bytes(TlType t, int64_t n)
{
    switch (t) {
    case TL_TNULL: return 0;
    case TL_TBOOL: return tl_bitmap_bytes(n);
    case TL_TDATE: return 4 * (size_t)n;
    case TL_TSTRING: return 16 * (size_t)n;
    default: return 8 * (size_t)n;
    }
}

/* Bytes of long strings (longer than inline) of the valid rows of a. */
static uint64_t long_bytes(const TlArray *a, int64_t n)
{
    uint64_t t = 0;
    if (a->type != TL_TSTRING) return 0;
    const TlView *v = tl_array_views(a);
    for (int64_t i = 0; i < n; i++)
        if (v[i].in.len > TL_VIEW_INLINE && tl_array_valid(a, i)) t += v[i].in.len;
    return t;
}

static void put_u64(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, 8);
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* One column at p (room counted by the caller); returns the bytes used. */
static size_t put_col(uint8_t *p, const TlArray *a, int64_t n, uint64_t dlen)
{
    bool nulls = a->type != TL_TNULL && a->null_count > 0 && a->validity;
    size_t vl = nulls ? tl_bitmap_bytes(n) : 0, xl = value_bytes(a->type, n);
    uint8_t *q = p + COL_HEAD;
    put_u64(p, (uint64_t)a->type);
    put_u64(p + 8, (uint64_t)(a->type == TL_TNULL ? n : nulls ? a->null_count : 0));
    put_u64(p + 16, vl);
    put_u64(p + 24, xl);
    put_u64(p + 32, dlen);
    if (vl) {
        memset(q, 0, pad8(vl));
        tl_bitmap_copy(q, 0, a->validity->data, a->offset, n);
        q += pad8(vl);
    }
    if (a->type == TL_TBOOL) {
        memset(q, 0, pad8(xl));
        tl_bitmap_copy(q, 0, a->values->data, a->offset, n);
    } else if (a->type == TL_TSTRING) {
        const TlView *v = tl_array_views(a);
        TlView *o = (TlView *)q;
        uint8_t *d = q + pad8(xl);
        uint32_t at = 0;
        for (int64_t i = 0; i < n; i++) {
            uint32_t len = v[i].in.len;
            if (!tl_array_valid(a, i)) {
                memset(&o[i], 0, sizeof o[i]);
            } else if (len <= TL_VIEW_INLINE) {
                o[i] = v[i];
            } else {
                o[i] = v[i];
                o[i].out.buf = 0;
                o[i].out.off = at;
                memcpy(d + at, tl_view_ptr(&v[i], a->data), len);
                at += len;
            }
        }
        if (dlen) memset(d + dlen, 0, pad8(dlen) - dlen);
    } else if (xl) {
        size_t w = a->type == TL_TDATE ? 4 : 8;
        memcpy(q, a->values->data + (size_t)a->offset * w, xl);
        memset(q + xl, 0, pad8(xl) - xl);
    }
    q += pad8(xl) + pad8(dlen);
    return (size_t)(q - p);
}

/* Write n bytes at p, all of them. */
static TlStatus write_all(TlSpill *f, const uint8_t *p, size_t n, TlError *err)
{
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(f->fd, p + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            int e = w < 0 ? errno : ENOSPC;
            char nt[32], st[32];
            tl_size_text(n, nt, sizeof nt);
            tl_size_text(f->end, st, sizeof st);
            return tl_error(err, TL_ERR_IO,
                            "cannot write a spill file in %s: %s (a block of %s, after %s "
                            "spilled)", tl_quote_name(f->dir).s, strerror(e), nt, st);
        }
        done += (size_t)w;
    }
    return TL_OK;
}

/* See spill.h. */
TlStatus tl_spill_put(TlSpill *f, TlArray *const *cols, int n_cols, int64_t n_rows,
                      size_t *raw, TlError *err)
{
    size_t need = HEAD;
    uint64_t *dl = tl_malloc(((size_t)n_cols + 1) * sizeof *dl);
    if (!dl) return tl_error_oom(err);
    for (int c = 0; c < n_cols; c++) {
        const TlArray *a = cols[c];
        dl[c] = long_bytes(a, n_rows);
        if (dl[c] > UINT32_MAX) {
            tl_free(dl);
            return tl_error(err, TL_ERR_DATA, "cannot spill a batch holding more than 4 GiB "
                            "of strings in one column");
        }
        need += COL_HEAD + pad8(a->validity ? tl_bitmap_bytes(n_rows) : 0) +
                pad8(value_bytes(a->type, n_rows)) + pad8(dl[c]);
    }
    if (!reserve(&f->raw, &f->raw_cap, need)) {
        tl_free(dl);
        return tl_error_oom(err);
    }
    put_u64(f->raw, (uint64_t)n_cols);
    put_u64(f->raw + 8, (uint64_t)n_rows);
    size_t at = HEAD;
    for (int c = 0; c < n_cols; c++) at += put_col(f->raw + at, cols[c], n_rows, dl[c]);
    tl_free(dl);
    if (raw) *raw = at;
    size_t bound = ZSTD_compressBound(at);
    if (!reserve(&f->comp, &f->comp_cap, bound + HEAD)) return tl_error_oom(err);
    if (!f->cctx && !(f->cctx = ZSTD_createCCtx_advanced(tl_zs_mem))) return tl_error_oom(err);
    size_t z = ZSTD_compressCCtx(f->cctx, f->comp + HEAD, bound, f->raw, at, 1);
    if (ZSTD_isError(z)) {
        if (ZSTD_getErrorCode(z) == ZSTD_error_memory_allocation) return tl_error_oom(err);
        return tl_error(err, TL_ERR_IO, "cannot compress a spill block: %s",
                        ZSTD_getErrorName(z));
    }
    put_u64(f->comp, at);
    put_u64(f->comp + 8, z);
    TL_TRY(write_all(f, f->comp, z + HEAD, err));
    f->end += z + HEAD;
    if (f->b) atomic_fetch_add(&f->b->spilled, z + HEAD);
    return TL_OK;
}

/* Read n bytes at off into p. */
static TlStatus read_at(TlSpill *f, uint64_t off, uint8_t *p, size_t n, TlError *err)
{
    size_t done = 0;
    if (lseek(f->fd, (off_t)off, SEEK_SET) < 0) goto fail;
    while (done < n) {
        ssize_t r = read(f->fd, p + done, n - done);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) goto fail;
        if (r == 0) {
            errno = EIO;
            goto fail;
        }
        done += (size_t)r;
    }
    return TL_OK;
fail:
    return tl_error(err, TL_ERR_IO, "cannot read a spill file in %s: %s",
                    tl_quote_name(f->dir).s, strerror(errno));
}

static TlStatus corrupt(TlSpill *f, TlError *err)
{
    return tl_error(err, TL_ERR_IO, "a spill file in %s reads back wrong",
                    tl_quote_name(f->dir).s);
}

/* The column at raw[*at, lim) of buffer rb, n rows; *at advanced. */
static TlStatus get_col(TlSpill *f, TlBuf *rb, size_t *at, size_t lim, int64_t n,
                        TlArray **out, TlError *err)
{
    const uint8_t *p = rb->data + *at;
    if (lim - *at < COL_HEAD) return corrupt(f, err);
    TlType t = (TlType)get_u64(p);
    int64_t nulls = (int64_t)get_u64(p + 8);
    size_t vl = get_u64(p + 16), xl = get_u64(p + 24), dl = get_u64(p + 32);
    size_t pos = *at + COL_HEAD;
    if (t >= TL_TYPE_COUNT || xl != value_bytes(t, n) ||
        (vl && vl != tl_bitmap_bytes(n)) || lim - pos < pad8(vl) + pad8(xl) + pad8(dl))
        return corrupt(f, err);
    *at = pos + pad8(vl) + pad8(xl) + pad8(dl);
    if (t == TL_TNULL) {
        *out = tl_array_new_null(TL_TNULL, n);
        return *out ? TL_OK : tl_error_oom(err);
    }
    TlBuf *valid = vl ? tl_buf_slice(rb, pos, vl) : NULL;
    TlBuf *vals = tl_buf_slice(rb, pos + pad8(vl), xl ? xl : 1);
    TlBuf **data = NULL;
    if ((vl && !valid) || !vals) goto oom;
    if (dl) {
        data = tl_malloc(sizeof *data);
        if (!data || !(data[0] = tl_buf_slice(rb, pos + pad8(vl) + pad8(xl), dl))) {
            tl_free(data);
            goto oom;
        }
    }
    *out = tl_array_new(t, n, vals, valid, nulls, data, dl ? 1 : 0);
    return *out ? TL_OK : tl_error_oom(err);
oom:
    tl_buf_release(valid);
    tl_buf_release(vals);
    return tl_error_oom(err);
}

/* See spill.h. */
TlStatus tl_spill_get(TlSpill *f, uint64_t *off, TlArray **cols, int n_cols, int64_t *n_rows,
                      TlError *err)
{
    uint8_t head[HEAD];
    TlStatus st = TL_OK;
    for (int c = 0; c < n_cols; c++) cols[c] = NULL;
    if (*off + HEAD > f->end) return corrupt(f, err);
    TL_TRY(read_at(f, *off, head, HEAD, err));
    uint64_t raw = get_u64(head), z = get_u64(head + 8);
    if (z > f->end - *off - HEAD || raw < HEAD) return corrupt(f, err);
    if (!reserve(&f->comp, &f->comp_cap, z)) return tl_error_oom(err);
    TL_TRY(read_at(f, *off + HEAD, f->comp, z, err));
    if (f->b) atomic_fetch_add(&f->b->read_back, z + HEAD);
    TlBuf *rb = tl_buf_new(raw, false);
    if (!rb) return tl_error_oom(err);
    if (!f->dctx && !(f->dctx = ZSTD_createDCtx_advanced(tl_zs_mem))) {
        tl_buf_release(rb);
        return tl_error_oom(err);
    }
    size_t got = ZSTD_decompressDCtx(f->dctx, rb->data, raw, f->comp, z);
    if (ZSTD_isError(got) || got != raw || get_u64(rb->data) != (uint64_t)n_cols) {
        tl_buf_release(rb);
        if (ZSTD_isError(got) && ZSTD_getErrorCode(got) == ZSTD_error_memory_allocation)
            return tl_error_oom(err);
        return corrupt(f, err);
    }
    *n_rows = (int64_t)get_u64(rb->data + 8);
    size_t at = HEAD;
    for (int c = 0; c < n_cols && st == TL_OK; c++)
        st = get_col(f, rb, &at, raw, *n_rows, &cols[c], err);
    tl_buf_release(rb);
    if (st != TL_OK) {
        for (int c = 0; c < n_cols; c++) {
            tl_array_release(cols[c]);
            cols[c] = NULL;
        }
        return st;
    }
    *off += HEAD + z;
    return TL_OK;
}
