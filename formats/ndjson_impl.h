/*
 * ndjson_impl.h -- what the NDJSON reader's files share: the reader, its
 * decoders' cursors, the key tables and the fields of tokenized lines
 * (ndjson_read.c describes the design).
 *
 *   ndjson_read.c   splitting into morsels, the reader's operations, open
 *   ndjson_scan.c   tokenizing: JSON scanning, keys and columns, objects,
 *                   line shapes
 *   ndjson_build.c  type inference, conversion into arrays, decoding a
 *                   morsel (restarts, late keys)
 */
#ifndef TL_NDJSON_IMPL_H
#define TL_NDJSON_IMPL_H

#include "fmt_impl.h"
#include "../lib/core/text.h"
#include "infer.h"
#include "json_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <xxhash.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define MAX_PARTS 8             /* most parts of a flattened column name */
#define MAX_NEST 1024           /* deepest nesting of arrays and objects */
#define MAX_BATCH_FIELDS ((int64_t)1 << 22)

enum {
    V_NULL = 0, V_FALSE, V_TRUE, V_INT, V_FLOAT, V_STR, V_STRESC, V_JSON,
    V_NUMTXT /* a number no double holds exactly (infer.h): its text */
};

typedef struct NdField {
    uint64_t off;
    uint32_t len;
    uint32_t kind;
} NdField;

/* The fields one column received in the batch tokenized last, in row
 * order.  Dense while its key came in every row so far (f[i] is row i's
 * field: the common case, stored by store's fast path); sparse from the
 * first row without it (rows[i] is f[i]'s row).  So a key absent from a
 * row costs nothing, a column costs the fields it holds (not rows x
 * columns), and the nulls of the rows without it are made once, when
 * the column is converted (row_fields, ndjson_build.c). */
typedef struct NdCol {
    NdField *f;        /* cap fields */
    uint32_t *rows;    /* NULL or cap rows (kept when the next batch is
                          dense again) */
    int64_t n;         /* fields stored in this batch */
    int64_t cap;
    uint64_t fast;     /* store appends row n itself when 0 < n <= fast:
                          cap - 1 while dense and growing, else 0 */
    bool sparse;       /* rows holds the rows of f[0..n) */
    TlType seen;       /* late columns: the type of their values so far */
} NdCol;

typedef struct Entry {
    int32_t parent;    /* node the key belongs to */
    int32_t col;       /* column of a plain value under this key, or -1 */
    int32_t node;      /* node of an object under this key, or -1 */
    uint32_t key_len;
    bool plain;        /* printable ASCII without " and \: matches raw text */
    uint64_t hash;
    uint8_t *key;      /* decoded key bytes */
} Entry;

typedef struct Node {
    char *path;        /* "a.b." (empty for the root) */
    size_t path_len;
    int parts;         /* parts in the names of its columns */
} Node;

/* One key of the line shape (parse_shaped): the text `"key":` as it must
 * appear, its first 16 bytes as two masked words. */
typedef struct NdSlot {
    uint64_t w[2], m[2];
    const uint8_t *key;  /* the entry's key bytes (keys over 13 bytes) */
    uint32_t key_len;
    int32_t col;         /* its column (known at open) */
} NdSlot;

#define MAX_SHAPE 64    /* most keys in a line shape */


struct NdReader;

/* What tokenizing and converting a run of lines needs, private to one
 * thread: the position, the key tables (a copy of those open built, plus
 * keys met since), the fields of the lines and scratch memory.  Open has
 * one (it discovers the columns); every decoder has one; next() reads
 * through a decoder of its own.  Names follow the reader's where they mean
 * the same thing. */
typedef struct NdCursor {
    struct NdReader *rd;     /* read only, except that open's cursor adds
                                the columns it discovers to rd->schema */
    const char *name;        /* rd's, for messages */
    TlBuf *input;            /* rd's (borrowed) */
    const uint8_t *p;
    size_t size;
    size_t start;            /* after the BOM */
    size_t pos;              /* where the next line starts */
    int64_t line;            /* line of pos, 1-based */
    size_t line_start;       /* first byte of the line being tokenized */

    TlSchema *schema;        /* &rd->schema */
    const bool *skip;        /* rd->skip (decoders): columns not stored */
    int n_open;              /* columns known at open (INT32_MAX while open
                                discovers them) */
    TlSchema late;           /* keys first seen after the first batch */
    NdCol *cols;             /* per column of schema then late */
    int cols_cap;

    Entry *entries;
    int n_entries, entries_cap;
    int32_t *table;          /* hash -> entry index, -1 empty */
    uint32_t table_mask;
    int32_t *seq;            /* entry of the k-th key of the previous line */
    int seq_cap;
    Node *nodes;
    int n_nodes, nodes_cap;
    uint8_t *keybuf;         /* a decoded escaped key */
    size_t keybuf_cap;
    uint8_t nest[MAX_NEST];  /* skip_value's stack of open brackets */
    NdSlot shape[MAX_SHAPE]; /* the keys of the last line parse_object read
                                (when flat and known), for parse_shaped */
    int shape_len;           /* 0: no shape */
    int shape_keys;          /* keys of the line parse_object read last,
                                when its shape is still to be made */
    int shape_miss;          /* lines in a row the shape did not fit */
    int shape_wait;          /* lines to read before trying it again */

    int64_t max_rows;
    int64_t n_rows;          /* records tokenized */
    int32_t *touched;        /* columns with fields in this batch */
    int n_touched, touched_cap;
    NdField *spread;         /* one column's fields, one per row (nulls
                                where its key is absent), for conversion */
    int64_t spread_cap;
    int64_t *row_line;       /* max_rows */
    bool saw_late;           /* a key not known at open was met */
    bool saw_lone_cr;        /* a record ended at a lone CR */
    bool full;               /* a key was one column more than --max-columns
                                (the line's error) */
    size_t batch_start, batch_end;
    TlBuf *window;
    size_t window_base;
    TlError *err;            /* of the call tokenizing */
} NdCursor;

typedef struct NdDecoder {
    TlDecoder base;
    NdCursor cur;
    TlInputCopy copy;        /* the morsel read with pread (nd_decode) */
} NdDecoder;

typedef struct NdReader {
    TlReader base;
    char *name;              /* for messages: path or "<stdin>" */
    TlBuf *input;
    const uint8_t *p;
    size_t size;
    size_t start;            /* after the BOM */

    TlSchema schema;         /* every column, its type (fixed after open) */
    int n_open;              /* schema.n_fields */
    bool *fixed;             /* per column: type fixed by --schema */
    TlTypeHints *hints;
    NdCursor *keys;          /* open's cursor: the key tables decoders copy
                                (never changed after open) */
    size_t sample_end;       /* where open's sample ended, and its line */
    int64_t sample_line;

    int *proj;
    int n_proj;
    TlSchema proj_schema;
    bool *skip;              /* per column: not projected (decoders do not
                                store its fields) */
    int64_t max_rows;        /* most records a morsel holds */
    int64_t max_cols;        /* --max-columns */

    /* split: where the next morsel starts */
    size_t split_pos;
    int64_t split_line;
    int64_t split_seq;
    size_t split_bytes;      /* its target size */
    size_t fixed_bytes;      /* a fixed target (the tuning's, tests), or 0 */
    bool guess;              /* cut at the first LF past the target
                                (tl_reader_guess; see nd_split) */
    size_t max_record;       /* --max-record-size (a stream's split) */
    TlDecoder *own;          /* next()'s decoder */
    int64_t late_seq;        /* lowest morsel seq met with a late key
                                (atomic; INT64_MAX: none) */
} NdReader;

/* Total columns: those known at open (or discovered so far) plus late ones. */
static inline int n_all_cols(const NdCursor *r)
{
    return r->schema->n_fields + r->late.n_fields;
}

/* The row of column col's i-th field. */
static inline int64_t field_row(const NdCol *col, int64_t i)
{
    return col->sparse ? (int64_t)col->rows[i] : i;
}

/* The field of column c at row (a zero field, null, where it has none). */
static inline NdField field_at(const NdCursor *r, int c, int64_t row)
{
    const NdCol *col = &r->cols[c];
    int64_t lo = 0, hi = col->n;
    if (!col->sparse) return row < col->n ? col->f[row] : (NdField){0, 0, V_NULL};
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if ((int64_t)col->rows[mid] < row) lo = mid + 1;
        else hi = mid;
    }
    return lo < col->n && (int64_t)col->rows[lo] == row ? col->f[lo]
                                                         : (NdField){0, 0, V_NULL};
}

/* ndjson_scan.c */
TlStatus tl_nd_ensure_cols(NdCursor *r, int n);
void tl_nd_clear_fields(NdCursor *r);
TlStatus tl_nd_tokenize(NdCursor *r, size_t end, TlError *err);

/* ndjson_build.c */
/* The character (1-based) of its line where field f's value starts (a
 * string's opening quote), as data errors name it. */
int64_t tl_nd_value_col(const NdReader *r, const NdCursor *cu, NdField f);
TlType tl_nd_infer_column(const NdCursor *r, int c, TlType t, int64_t *why);
/* Tokenize the input from cu->pos to its end for keys first seen after
 * open's sample (cu->late), keeping each one's type in cols[c].seen;
 * stops early at a key one column more than --max-columns (cu->full) and,
 * with seq >= 0, once a morsel before seq is known to hold late keys too
 * (r->late_seq: then this scan's result is never used).  The input must
 * be complete (tl_input_finish). */
TlStatus tl_nd_scan_late(NdReader *r, NdCursor *cu, int64_t seq, TlError *err);
/* cu's late keys with their types, as a widen schema (infer.h). */
TlStatus tl_nd_late_widen(const NdCursor *cu, TlSchema **widen, TlError *err);
TlStatus tl_nd_decode_morsel(NdReader *r, NdCursor *cu, const TlMorsel *m,
                             TlBatch **out, TlSchema **widen, TlError *err);

#endif
