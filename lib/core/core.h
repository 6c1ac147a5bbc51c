/*
 * core.h -- the columnar core every other module stands on.
 *
 * Ownership, stated once (jq's jv.h style):
 *   - Functions named *_new, *_retain, *_freeze, *_finish return an OWNED
 *     reference; the caller must drop it with the matching *_release.
 *   - Every other pointer argument is BORROWED for the duration of the call.
 *   - Buffers and arrays are immutable once frozen; sharing them is a
 *     refcount bump, slicing them is an offset change.
 *
 * Errors: every fallible function returns TlStatus (0 = TL_OK) and fills the
 * TlError it is handed.  Out of memory is an error like any other: the
 * allocator hook returns NULL, the caller reports TL_ERR_OOM.
 *
 * Data model (Arrow layouts):
 *
 *   TlArray  length, offset (elements), values buffer, optional validity
 *            bitmap (set bit = valid; NULL pointer = no nulls, never "all
 *            null"), cached null_count.
 *     bool       values: bitmap, bit i = value of element i
 *     int64      values: int64_t[]
 *     float64    values: double[]
 *     date       values: int32_t[]  days since 1970-01-01
 *     timestamp  values: int64_t[]  microseconds since 1970-01-01 00:00:00
 *     string     values: TlView[]   + data buffers (see below)
 *     null       no buffers; every element is null (null_count == length)
 *
 *   TlView (16 bytes), drawn:
 *     len <= 12:  | len:u32 | bytes[12] (zero padded)              |
 *     len  > 12:  | len:u32 | prefix[4] | buf_index:u32 | offset:u32 |
 *   Two inline views are equal iff their 16 bytes are equal.  Long views point
 *   into array->data[buf_index] at offset; data buffers are appended in blocks
 *   and never moved, so a view stays valid while its array lives.
 */
#ifndef TL_CORE_H
#define TL_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------------------ types */

typedef enum TlType {
    TL_TNULL = 0, /* the type of the literal null / an all-null column */
    TL_TBOOL,
    TL_TINT64,
    TL_TFLOAT64,
    TL_TSTRING,
    TL_TDATE,
    TL_TTIMESTAMP,
    TL_TTIMESTAMPTZ, /* a timestamp with a time zone: the instant, int64
                        microseconds since the epoch in UTC, written with
                        +00 (DuckDB's TIMESTAMP WITH TIME ZONE in UTC) */
    TL_TYPE_COUNT
} TlType;

/* "bool", "int64", "float64", "string", "date", "timestamp", "null". */
const char *tl_type_name(TlType t);
/* Parse a type name as written by users: int, int64, integer, bigint, float,
 * float64, double, bool, boolean, string, str, varchar, text, date, timestamp,
 * datetime.  Case-insensitive.  Returns false if unknown. */
bool tl_type_parse(const char *s, size_t len, TlType *out);
/* Bytes per element in the values buffer (0 for bool (bits) and null). */
size_t tl_type_width(TlType t);

/* ----------------------------------------------------------------- errors */

typedef int TlStatus;
enum {
    TL_OK = 0,
    TL_ERR_DATA = 1,    /* bad input data or runtime failure: exit 1 */
    TL_ERR_USAGE = 2,   /* bad flags, bad expression, unknown column: exit 2 */
    TL_ERR_OOM = 3,     /* allocation failed: exit 1 */
    TL_ERR_IO = 4,      /* read/write/open failure: exit 1 */
    TL_ERR_RESTART = 5, /* internal: inference widened a type; rerun the plan */
    TL_ERR_PIPE = 6,    /* internal: stdout closed (EPIPE); end quietly, exit 0 */
};

#define TL_ERRMSG_MAX 4096

/* One per run.  msg is what the user sees after "tally: ". */
typedef struct TlError {
    TlStatus code;
    char msg[TL_ERRMSG_MAX];
    /* A data error raised while evaluating an expression over one input
     * column: that column's name (in the expression arena, alive as long as
     * the plan), so the step that placed the row can name the field the
     * value was read from; NULL otherwise.  Every tl_error* resets it. */
    const char *col;
} TlError;

/* Set code and a printf-formatted message; returns code, so a caller can
 * write `return tl_error(err, TL_ERR_DATA, "...")`. */
TlStatus tl_error(TlError *err, TlStatus code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Set TL_ERR_OOM with a fixed message (never allocates). */
TlStatus tl_error_oom(TlError *err);

/* Data shown in a message (lib/core/quote.c has the rule): values longer
 * than TL_QUOTE_SHOW bytes show their first TL_QUOTE_CUT bytes, names longer
 * than TL_QUOTE_NAME_SHOW their first TL_QUOTE_NAME_CUT. */
#define TL_QUOTE_SHOW 64
#define TL_QUOTE_CUT 48
#define TL_QUOTE_NAME_SHOW 256
#define TL_QUOTE_NAME_CUT 240
/* A quoted or escaped piece of data, returned by value so it can sit in a
 * printf argument list: tl_error(err, c, "no column %s", tl_quote_str(n).s). */
typedef struct TlQuoted {
    char s[TL_QUOTE_NAME_SHOW * 4 + 64];
} TlQuoted;
/* s[0, n) between double quotes, escaped, cut with its length when long.
 * A NULL s gives (none). */
TlQuoted tl_quote(const char *s, size_t n);
/* tl_quote of a NUL-terminated string. */
TlQuoted tl_quote_str(const char *s);
/* A name (column, file, key, flag value) quoted like tl_quote, cut only
 * past TL_QUOTE_NAME_SHOW bytes. */
TlQuoted tl_quote_name(const char *s);
/* tl_quote_name without the quotes: for file names at the head of
 * "FILE:LINE:COL: ..." messages. */
TlQuoted tl_escape_name(const char *s);
/* The source text of a JSON string (between its quotes, escapes as written)
 * quoted like tl_quote, its backslash escapes kept as they are. */
TlQuoted tl_quote_json(const char *s, size_t n);
/* tl_quote without the quotes: for source text that is not a string. */
TlQuoted tl_escape_value(const char *s, size_t n);
/* A whole message src escaped into dst[0, cap) (newlines kept, nothing
 * quoted); returns the length written. */
size_t tl_escape_text(char *dst, size_t cap, const char *src);

#define TL_TRY(x)                                                              \
    do {                                                                       \
        TlStatus tl_try_st_ = (x);                                             \
        if (tl_try_st_ != TL_OK) return tl_try_st_;                            \
    } while (0)

/* -------------------------------------------------------------- allocator */

/* Every allocation of the program goes through these (Lua's frealloc).
 * They return NULL on failure and never abort.  tl_realloc(p, 0) frees.
 * A test build (-DTL_FAULT) can make the Nth call fail: set the environment
 * variable TALLY_FAIL_ALLOC=N before the first allocation. */
void *tl_malloc(size_t n);
void *tl_calloc(size_t count, size_t size);
void *tl_realloc(void *p, size_t n);
void tl_free(void *p);
/* Arrays that grow to many MiB (group-by states, a grouper's key list):
 * from TL_BIG_BYTES on they live in their own mapping, so growing is a
 * remap (no copy, no second touch of the pages already written) and the
 * new bytes come zeroed from the system.  tl_realloc_big(NULL, n) or
 * (p, n) returns an array of n bytes whose bytes past the old size are
 * zero (NULL on failure, p untouched; counted and injectable like
 * tl_realloc); free with tl_free_big only (NULL is fine). */
#define TL_BIG_BYTES ((size_t)1 << 20)
void *tl_realloc_big(void *p, size_t n);
void tl_free_big(void *p);
/* Give freed memory back to the system now (the C library keeps freed blocks
 * for reuse): after dropping a large amount that later allocations will not
 * reuse, so the peak resident memory does not count it twice. */
void tl_alloc_trim(void);
/* Fix the C library's thresholds for mapping blocks and trimming heaps, so
 * memory a morsel frees stays for the next one instead of going back to
 * the system and being faulted in again.  Once per process, before the
 * work (tally_run); later calls do nothing. */
void tl_alloc_tune(void);
/* tl_strdup / tl_strndup: NULL on OOM. */
char *tl_strdup(const char *s);
char *tl_strndup(const char *s, size_t n);
/* Number of allocation calls so far (for tests and --stats). */
uint64_t tl_alloc_count(void);
/* Fault injection for tests: make the nth allocation call from now fail
 * (1 = the next call); 0 turns it off.  tl_alloc_fail_mode(n, true) also
 * fails every call after that one. */
void tl_alloc_fail_at(uint64_t n);
void tl_alloc_fail_mode(uint64_t n, bool all);

/* ---------------------------------------------------------------- buffers */

/* An immutable, refcounted byte region.  `data` may be owned (freed with
 * tl_free), borrowed from a parent buffer (a slice, which holds a reference
 * to the parent), or wrapped foreign memory (release callback). */
typedef struct TlBuf TlBuf;
struct TlBuf {
    uint8_t *data;
    size_t size;
    int64_t refcount;
    TlBuf *parent;                          /* slice: keeps parent alive */
    void (*release)(void *owner, uint8_t *data, size_t size); /* wrap */
    void *owner;
};

/* Allocate size bytes (zeroed when zero is true).  NULL on OOM. */
TlBuf *tl_buf_new(size_t size, bool zero);
/* Take ownership of a tl_malloc'd region. NULL on OOM (data is then freed). */
TlBuf *tl_buf_adopt(uint8_t *data, size_t size);
/* Wrap foreign memory; release(owner, data, size) runs at the last release.
 * On OOM (NULL) release is NOT called: the caller still owns the memory. */
TlBuf *tl_buf_wrap(uint8_t *data, size_t size,
                   void (*release)(void *, uint8_t *, size_t), void *owner);
/* A view of [off, off+len) sharing b's bytes.  NULL on OOM. */
TlBuf *tl_buf_slice(TlBuf *b, size_t off, size_t len);
TlBuf *tl_buf_retain(TlBuf *b);  /* NULL-safe */
void tl_buf_release(TlBuf *b);   /* NULL-safe */

/* memcpy of n bytes without a C library call for the short fields and keys
 * that writers and groupers copy per value: up to 16 bytes are two
 * overlapping fixed-size moves; longer ones call memcpy.  Reads exactly
 * [src, src + n), writes exactly [dst, dst + n). */
static inline void tl_copy_short(uint8_t *dst, const uint8_t *src, size_t n)
{
    if (n >= 8 && n <= 16) {
        uint64_t a, b;
        memcpy(&a, src, 8);
        memcpy(&b, src + n - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t a, b;
        memcpy(&a, src, 4);
        memcpy(&b, src + n - 4, 4);
        memcpy(dst, &a, 4);
        memcpy(dst + n - 4, &b, 4);
    } else if (n < 4) {
        for (size_t i = 0; i < n; i++) dst[i] = src[i];
    } else {
        memcpy(dst, src, n);
    }
}

/* ---------------------------------------------------------------- bitmaps */

static inline bool tl_bit_get(const uint8_t *bits, int64_t i)
{
    return (bits[i >> 3] >> (i & 7)) & 1;
}
static inline void tl_bit_set(uint8_t *bits, int64_t i)
{
    bits[i >> 3] |= (uint8_t)(1u << (i & 7));
}
static inline void tl_bit_clear(uint8_t *bits, int64_t i)
{
    bits[i >> 3] &= (uint8_t)~(1u << (i & 7));
}
static inline void tl_bit_put(uint8_t *bits, int64_t i, bool v)
{
    if (v) tl_bit_set(bits, i); else tl_bit_clear(bits, i);
}
static inline size_t tl_bitmap_bytes(int64_t n_bits)
{
    return (size_t)((n_bits + 7) / 8);
}
/* Number of set bits in bits[off, off+len). */
int64_t tl_bitmap_count(const uint8_t *bits, int64_t off, int64_t len);
/* Copy len bits from src at src_off to dst at dst_off. */
void tl_bitmap_copy(uint8_t *dst, int64_t dst_off, const uint8_t *src,
                    int64_t src_off, int64_t len);
/* Set (v true) or clear bits [off, off+len) of dst. */
void tl_bitmap_fill(uint8_t *dst, int64_t off, int64_t len, bool v);

/* ------------------------------------------------------------------ views */

#define TL_VIEW_INLINE 12

typedef union TlView {
    struct {
        uint32_t len;
        uint8_t data[TL_VIEW_INLINE];
    } in;
    struct {
        uint32_t len;
        uint8_t prefix[4];
        uint32_t buf;
        uint32_t off;
    } out;
    uint64_t w[2];
} TlView;

_Static_assert(sizeof(TlView) == 16, "TlView is 16 bytes");

static inline uint32_t tl_view_len(TlView v) { return v.in.len; }

/* Pointer to the bytes of v; `bufs` is the owning array's data buffers. */
static inline const uint8_t *tl_view_ptr(const TlView *v, TlBuf *const *bufs)
{
    return v->in.len <= TL_VIEW_INLINE ? v->in.data
                                       : bufs[v->out.buf]->data + v->out.off;
}
/* An inline view of s (len <= 12). */
TlView tl_view_inline(const void *s, uint32_t len);
/* Byte equality; views from arrays with data buffers abufs / bbufs. */
bool tl_view_eq(const TlView *a, TlBuf *const *abufs, const TlView *b,
                TlBuf *const *bbufs);
/* memcmp order (shorter prefix sorts first): <0, 0, >0. */
int tl_view_cmp(const TlView *a, TlBuf *const *abufs, const TlView *b,
                TlBuf *const *bbufs);

/* ----------------------------------------------------------------- arrays */

typedef struct TlArray {
    int64_t refcount;
    TlType type;
    int64_t length;
    int64_t offset;      /* elements, applies to values and validity */
    int64_t null_count;  /* always exact */
    TlBuf *validity;     /* NULL = no nulls */
    TlBuf *values;       /* NULL only for type null */
    TlBuf **data;        /* string: data blocks referenced by long views */
    uint32_t n_data;
} TlArray;

/* Typed access to element i (already adjusted for offset). */
static inline bool tl_array_valid(const TlArray *a, int64_t i)
{
    if (a->type == TL_TNULL) return false;
    return a->validity == NULL || tl_bit_get(a->validity->data, a->offset + i);
}
static inline const int64_t *tl_array_i64(const TlArray *a)
{
    return (const int64_t *)a->values->data + a->offset;
}
static inline const double *tl_array_f64(const TlArray *a)
{
    return (const double *)a->values->data + a->offset;
}
static inline const int32_t *tl_array_i32(const TlArray *a)
{
    return (const int32_t *)a->values->data + a->offset;
}
static inline const TlView *tl_array_views(const TlArray *a)
{
    return (const TlView *)a->values->data + a->offset;
}
static inline bool tl_array_bool(const TlArray *a, int64_t i)
{
    return tl_bit_get(a->values->data, a->offset + i);
}

/* Assemble an array from owned buffer references (this call takes them over,
 * also on failure).  null_count < 0 means "count it from validity".  If the
 * validity bitmap has no zero bit it is dropped (NULL = no nulls).  data/n_data:
 * the array takes over the array `data` (tl_malloc'd) too.  NULL on OOM. */
TlArray *tl_array_new(TlType type, int64_t length, TlBuf *values,
                      TlBuf *validity, int64_t null_count, TlBuf **data,
                      uint32_t n_data);
/* An array of `length` nulls of the given type (values zeroed, validity all 0). */
TlArray *tl_array_new_null(TlType type, int64_t length);
TlArray *tl_array_retain(TlArray *a); /* NULL-safe */
void tl_array_release(TlArray *a);    /* NULL-safe */
/* Zero-copy slice [off, off+len).  NULL on OOM. */
TlArray *tl_array_slice(TlArray *a, int64_t off, int64_t len);
/* Gather rows idx[0..n) of a (idx values < a->length; idx may repeat).  String
 * arrays share a's data buffers.  NULL on OOM. */
TlArray *tl_array_take(TlArray *a, const uint32_t *idx, int64_t n);
/* Concatenate arrays of the same type (parts of type null may be mixed in and
 * become nulls).  n == 1 returns a new reference to parts[0].  NULL on OOM. */
TlArray *tl_array_concat(TlArray *const *parts, int n);
/* Gather rows (part[i], row[i]), i < n, of parts[0..n_parts) (one type;
 * type-null parts give nulls) into a new array without concatenating the
 * parts; strings share every part's data buffers.  NULL on OOM. */
TlArray *tl_array_take_multi(TlArray *const *parts, int n_parts,
                             const uint32_t *part, const uint32_t *row,
                             int64_t n);

/* --------------------------------------------------------------- builders */

/* A growable array under construction.  Append values, then finish to get
 * an immutable TlArray.  Strings: bytes longer than 12 go into data blocks
 * (16 KiB doubling up to 1 MiB, or one string's size) that never move.  All appends return false on OOM (the
 * builder stays valid and must still be released with tl_builder_free). */
typedef struct TlBuilder {
    TlType type;
    int64_t length;
    int64_t null_count;
    uint8_t *values;
    size_t values_cap;  /* bytes */
    uint8_t *validity;  /* allocated lazily at the first null */
    size_t validity_cap;/* bytes */
    TlBuf **data;       /* string blocks, the last one being filled */
    uint32_t n_data, data_cap;
    size_t block_used;  /* bytes used in data[n_data-1] */
} TlBuilder;

void tl_builder_init(TlBuilder *b, TlType type);
bool tl_builder_reserve(TlBuilder *b, int64_t n_more);
bool tl_builder_append_null(TlBuilder *b);
bool tl_builder_append_bool(TlBuilder *b, bool v);
bool tl_builder_append_i64(TlBuilder *b, int64_t v);   /* int64, timestamp */
bool tl_builder_append_f64(TlBuilder *b, double v);
bool tl_builder_append_i32(TlBuilder *b, int32_t v);   /* date */
bool tl_builder_append_str(TlBuilder *b, const void *s, size_t len);
/* Append element i of a (same type as the builder; may be null). */
bool tl_builder_append_from(TlBuilder *b, const TlArray *a, int64_t i);
/* Freeze into an array; the builder is reset to empty (also on OOM, when
 * the contents are lost).  NULL on OOM. */
TlArray *tl_builder_finish(TlBuilder *b);
void tl_builder_free(TlBuilder *b);

/* ---------------------------------------------------------------- schemas */

typedef struct TlField {
    char *name;  /* owned (tl_malloc) */
    TlType type;
} TlField;

/* A zeroed TlSchema is a valid empty schema.  Only the functions below
 * change one (they keep the capacity and the name index in step). */
typedef struct TlSchema {
    int n_fields;
    TlField *fields;  /* owned */
    int cap_fields;
    int32_t *index;   /* name hash -> field position (-1: empty), built once
                         a schema is wide enough to need it; NULL below */
    uint32_t index_mask;
} TlSchema;

/* Index of the field named `name` (exact, case-sensitive), or -1. */
int tl_schema_find(const TlSchema *s, const char *name);
/* Append a field (name copied).  TL_ERR_OOM on failure. */
TlStatus tl_schema_add(TlSchema *s, const char *name, TlType type, TlError *err);
TlStatus tl_schema_copy(TlSchema *dst, const TlSchema *src, TlError *err);
/* The same names with the same types, in the same order. */
bool tl_schema_same(const TlSchema *a, const TlSchema *b);
void tl_schema_free(TlSchema *s); /* frees fields, leaves an empty schema */
/* "Did you mean" (suggest.c): the field name, or the candidate, nearest to
 * a typed name by case-insensitive edit distance (an adjacent swap is one
 * edit), or NULL when none is near enough. */
const char *tl_schema_suggest(const TlSchema *s, const char *name);
const char *tl_suggest(const char *s, size_t len, const char *const *cands,
                       size_t n_cands);
size_t tl_edit_distance(const char *a, size_t la, const char *b, size_t lb);

/* ---------------------------------------------------------------- batches */

#define TL_BATCH_ROWS 65536 /* default maximum rows per batch */

/* A batch: equal-length columns.  The schema is borrowed from the operator
 * that produced it and lives as long as the plan. */
typedef struct TlBatch {
    const TlSchema *schema;
    int64_t n_rows;
    int n_cols;
    TlArray **cols; /* owned references */
} TlBatch;

/* Allocate a batch with n_cols NULL columns.  NULL on OOM. */
TlBatch *tl_batch_new(const TlSchema *schema, int n_cols, int64_t n_rows);
void tl_batch_free(TlBatch *b); /* releases columns; NULL-safe */

/* Maximum rows per batch for code outside a run: TALLY_BATCH_ROWS from the
 * environment (min 1; a stress switch for tests), else TL_BATCH_ROWS.
 * Within a run, readers and operators size their batches with their
 * context's tuning (tl_ctx_batch_rows, ctx.h), read once at its start. */
int64_t tl_batch_rows(void);

/* ------------------------------------------------------ signal cleanup */

/* Paths to unlink if a signal ends the process (cleanup.c): a fixed table,
 * safe to read from a signal handler. */
#define TL_CLEANUP_PATH_MAX 4096
int tl_cleanup_add(const char *path);    /* slot, or -1: not registered */
void tl_cleanup_remove(int slot);        /* -1: no-op */
void tl_cleanup_run(void);               /* async-signal-safe */

#endif
