/*
 * input.c -- an input's bytes as one immutable buffer (input.h).
 *
 * tl_input_load turns a path into one buffer.  A regular file is mapped
 * (read() if mapping fails; a small one is read); a pipe or other special
 * file is read fully; "-" reads standard input fully ONCE into the run's
 * inputs (TlCtx.inputs), so that when inference widens a type and the run
 * restarts, the reader sees exactly the same bytes again.  A compressed
 * input is then decompressed (compress.c), whole or streamed (stream.c).
 *
 *   path --stat--> regular  --mmap--> TlBuf (mapped.c: registered
 *                                     for the SIGBUS handler, its
 *                                     descriptor in a bounded pool)
 *                  other    --read--> TlBuf (owned)
 *   "-"  --------> cache (TlBuf, one reference held by the cache)
 *
 * Decoders read their morsel through a pread copy (tl_input_copy) rather
 * than the mapping, and decoded blocks of a mapped input are given back
 * (tl_input_drop).
 */
#include "input.h"
#include "input_impl.h"
#include "compress.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The name data errors use for path: "<stdin>" for "-", else path itself. */
const char *tl_input_name(const char *path)
{
    return strcmp(path, "-") == 0 ? "<stdin>" : path;
}


/* Read fd to its end into one owned buffer. */
static TlStatus read_all(int fd, const char *path, TlBuf **out, TlError *err)
{
    size_t cap = 1 << 16, len = 0;
    uint8_t *data = tl_malloc(cap);
    if (!data) return tl_error_oom(err);
    for (;;) {
        ssize_t got;
        if (len == cap) {
            uint8_t *grown;
            if (cap > SIZE_MAX / 2) {
                tl_free(data);
                return tl_error_oom(err);
            }
            grown = tl_realloc(data, cap * 2);
            if (!grown) {
                tl_free(data);
                return tl_error_oom(err);
            }
            data = grown;
            cap *= 2;
        }
        got = read(fd, data + len, cap - len);
        if (got < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            tl_free(data);
            return tl_error(err, TL_ERR_IO, "cannot read %s: %s",
                            tl_quote_name(tl_input_name(path)).s, strerror(e));
        }
        if (got == 0) break;
        len += (size_t)got;
    }
    if (cap - len > ((size_t)4 << 10)) {
        /* a small file of a big glob keeps only its bytes */
        uint8_t *fit = tl_realloc(data, len ? len : 1);
        if (fit) data = fit;
    }
    *out = tl_buf_adopt(data, len);
    if (!*out) return tl_error_oom(err);
    return TL_OK;
}

/* A regular file smaller than this is read, not mapped: a mapping costs
 * more system calls than such a file's bytes (a glob of many small files
 * opens each twice, planning and scan), and a private copy cannot change
 * while it is read. */
#define SMALL_FILE ((off_t)64 << 10)

/* The n bytes a small regular file had at open (fewer if it shrank since:
 * the copy is then what it holds now, read at once). */
static TlStatus read_small(int fd, const char *path, size_t n, TlBuf **out,
                           TlError *err)
{
    uint8_t *data = tl_malloc(n);
    size_t len = 0;
    if (!data) return tl_error_oom(err);
    while (len < n) {
        ssize_t got = pread(fd, data + len, n - len, (off_t)len);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            int e = errno;
            tl_free(data);
            return tl_error(err, TL_ERR_IO, "cannot read %s: %s",
                            tl_quote_name(path).s, strerror(e));
        }
        if (got == 0) break;
        len += (size_t)got;
    }
    *out = tl_buf_adopt(data, len);
    if (!*out) return tl_error_oom(err);
    return TL_OK;
}

/* Load the whole input named path ("-" = standard input) as one buffer; an
 * owned reference is returned in *out.  Standard input is read once per
 * run and served from the run's inputs afterwards.  Errors: TL_ERR_IO naming
 * the path (missing, unreadable, a directory), TL_ERR_OOM.  A compressed
 * input may come back still streaming (tl_input_load_stream). */
static TlStatus input_load(const TlCtx *ctx, const char *path, TlBuf **out,
                           TlError *err)
{
    struct stat st;
    int fd;
    TlStatus st_code;
    *out = NULL;
    if (strcmp(path, "-") == 0) {
        /* read once a run (kept in its inputs), else once a call */
        TlBuf *once = NULL, **in = ctx && ctx->inputs ? &ctx->inputs->stdin_buf : &once;
        if (!*in) {
            bool got = fstat(0, &st) == 0;
            if (got && S_ISDIR(st.st_mode))
                return tl_error(err, TL_ERR_IO,
                                "cannot read \"<stdin>\": Is a directory");
            if (ctx && ctx->stream_pipes && got &&
                (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
                TL_TRY(tl_stream_pipe(ctx, 0, false, tl_input_name(path), in, err));
            else
                TL_TRY(read_all(0, path, in, err));
            if (!tl_input_is_stream(*in))
                TL_TRY(tl_input_decompress(ctx, path, in, err)); /* compress.c */
        }
        /* decompressed anew when a reader dropped decoded pages; shared
         * (no more dropping) while another reader holds it */
        TL_TRY(tl_input_restream(ctx, path, in, err));
        if (__atomic_load_n(&(*in)->refcount, __ATOMIC_ACQUIRE) > 1)
            tl_input_share(*in);
        *out = in == &once ? once : tl_buf_retain(*in);
        return TL_OK;
    }
    do {
        fd = open(path, O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return tl_error(err, TL_ERR_IO, "cannot open %s: %s", tl_quote_name(path).s,
                        strerror(errno));
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return tl_error(err, TL_ERR_IO, "cannot open %s: %s", tl_quote_name(path).s,
                        strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return tl_error(err, TL_ERR_IO, "cannot open %s: %s", tl_quote_name(path).s,
                        strerror(EISDIR));
    }
    if (ctx && ctx->stream_pipes && S_ISFIFO(st.st_mode)) {
        /* stream.c owns fd from here */
        TL_TRY(tl_stream_pipe(ctx, fd, true, path, out, err));
        return tl_input_is_stream(*out) ? TL_OK : tl_input_decompress(ctx, path, out, err);
    }
    if (S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size < SMALL_FILE) {
        st_code = read_small(fd, path, (size_t)st.st_size, out, err);
        close(fd);
        if (st_code == TL_OK) st_code = tl_input_decompress(ctx, path, out, err);
        return st_code;
    }
    if (S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uint64_t)st.st_size <= (uint64_t)SIZE_MAX) {
        /* mapped.c owns fd from here when it maps the file */
        if (tl_input_map(path, fd, &st, out, err) != TL_OK) {
            close(fd);
            return err->code;
        }
        if (*out) return tl_input_decompress(ctx, path, out, err);
        /* fall back to read() */
    }
    st_code = read_all(fd, path, out, err);
    close(fd);
    if (st_code == TL_OK) st_code = tl_input_decompress(ctx, path, out, err);
    return st_code;
}

/* See input.h: the input complete (a stream is waited for). */
TlStatus tl_input_load(const TlCtx *ctx, const char *path, TlBuf **out, TlError *err)
{
    TL_TRY(input_load(ctx, path, out, err));
    return tl_input_whole(out, err);
}

/* See input.h. */
TlStatus tl_input_whole(TlBuf **b, TlError *err)
{
    size_t size;
    if (tl_input_finish(*b, err) != TL_OK) {
        tl_buf_release(*b);
        *b = NULL;
        return err->code;
    }
    size = tl_input_size(*b);
    if (size != (*b)->size) {
        /* a stream of unknown size: its bytes, not its reservation */
        TlBuf *exact = tl_buf_slice(*b, 0, size);
        tl_buf_release(*b);
        *b = exact;
        if (!exact) return tl_error_oom(err);
    }
    return TL_OK;
}

/* See input.h: the input, maybe still streaming. */
TlStatus tl_input_load_stream(const TlCtx *ctx, const char *path, TlBuf **out,
                              TlError *err)
{
    return input_load(ctx, path, out, err);
}

/* See input.h. */
const uint8_t *tl_input_copy(const TlCtx *ctx, const TlBuf *b, TlInputCopy *c,
                             size_t begin, size_t end, size_t *hi)
{
    size_t lo;
    /* tests: TALLY_NO_COPY */
    if (TL_TUNING(ctx)->no_copy || !tl_input_mapped(b) || !b->owner || begin > end || end > b->size)
        return NULL;
    lo = begin > TL_COPY_PAD ? begin - TL_COPY_PAD : 0;
    *hi = b->size - end > TL_COPY_PAD ? end + TL_COPY_PAD : b->size;
    if (*hi - lo > c->cap) {
        /* the first buffer holds a morsel of the largest usual size (one
         * grown morsel by morsel would touch fresh pages at every step),
         * or the whole input when it is smaller: a 2 MiB block for a small
         * file cost more than the file (under ASan, a mapping and its
         * shadow per decoder) */
        size_t cap = c->cap ? c->cap * 2 : TL_COPY_FIRST;
        if (!c->cap && cap > b->size) cap = b->size;
        if (cap < *hi - lo) cap = *hi - lo;
        uint8_t *g = tl_malloc(cap);
        if (!g) return NULL;
        tl_free(c->data);
        c->data = g;
        c->cap = cap;
    }
    if (!tl_input_pread(b, c->data, lo, *hi - lo)) return NULL;
    return c->data - lo;
}

void tl_input_copy_free(TlInputCopy *c)
{
    tl_free(c->data);
    c->data = NULL;
    c->cap = 0;
}

/* tl_input_drop's block size for an input of n bytes. */
static uintptr_t drop_block(size_t n)
{
    uintptr_t B = (uintptr_t)2 << 20;
    while (B < ((uintptr_t)8 << 20) && B * 32 <= n) B *= 2;
    return B;
}

/* See input.h.  The input's address space is cut into blocks of B
 * bytes (B from 2 to 8 MiB, the largest power of two that is at most a
 * sixteenth of the input): block k, [k B, (k + 1) B), goes when a decoded
 * morsel holds the address (k + 1) B + B, one block behind it.  Morsels
 * cut the input into disjoint ranges, so each block goes once; a block is
 * a whole number of huge pages (a mapping of huge pages is cleared, not
 * split), and one madvise per block, not per morsel, means fewer
 * TLB-flush interrupts to the other cores.  The block behind keeps the
 * pages that the other decoders' morsels, just before this one, still
 * read (a page read after all faults in again: slower, never wrong). */
void tl_input_drop(const TlBuf *b, size_t begin, size_t end)
{
    const uintptr_t base = (uintptr_t)b->data, lead = 2 * drop_block(b->size);
    const uintptr_t B = drop_block(b->size), lo_addr = base + begin, hi_addr = base + end;
    uintptr_t k0, k1, lo, hi;
    if (!tl_input_mapped(b) || end <= begin || hi_addr <= lead) return;
    /* the blocks k whose trigger (k + 1) B + B lies in [lo_addr, hi_addr) */
    k0 = lo_addr <= lead ? 0 : (lo_addr - lead + B - 1) / B;
    k1 = (hi_addr - 1 - lead) / B;
    if (k1 < k0) return;
    lo = k0 * B > base ? k0 * B : base;
    hi = (k1 + 1) * B < base + b->size ? (k1 + 1) * B : base + b->size;
    if (hi > lo) madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* ------------------------------------------------------ the run's inputs */

/* See input.h. */
TlStatus tl_inputs_new(TlInputs **out, TlError *err)
{
    TlInputs *in = tl_calloc(1, sizeof *in);
    *out = NULL;
    if (!in) return tl_error_oom(err);
    if (pthread_mutex_init(&in->streams_mu, NULL) != 0) {
        tl_free(in);
        return tl_error_oom(err);
    }
    *out = in;
    return TL_OK;
}

/* See input.h.  The cached buffers go first: releasing the last
 * reference of a stream frees it, which takes it off the registry and its
 * bytes off the count, both of which are in. */
void tl_inputs_free(TlInputs *in)
{
    if (!in) return;
    tl_buf_release(in->stdin_buf);
    in->stdin_buf = NULL;
    tl_buf_release(in->cache.data);
    tl_free(in->cache.path);
    pthread_mutex_destroy(&in->streams_mu);
    tl_free(in);
}
