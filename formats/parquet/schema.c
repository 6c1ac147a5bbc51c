/*
 * schema.c -- Parquet's schema tree -> tally's columns.
 *
 * The footer lists the schema depth first: each group element says how
 * many children follow it.  Walking it gives the leaves, in the order of
 * the column chunks of every row group, each with its maximum definition
 * and repetition levels (one per OPTIONAL or REPEATED element on its path,
 * one per REPEATED one).
 *
 * Columns, as the NDJSON reader makes them from objects: a leaf under
 * groups that are neither repeated nor a LIST or MAP is one column named by
 * its path, parent.child (a null parent makes the child null: its
 * definition level stops short); a path of more than 8 parts, and any
 * repeated, LIST or MAP element, make one column named by the path down to
 * that element, whose values need the nesting rules not written yet (it is
 * listed with the type string, the type its JSON text will have, and
 * reading it is an error that says so).
 *
 * Types: the annotation (LogicalType, else the legacy ConvertedType)
 * decides, where it is one tally knows for the physical type; otherwise the
 * physical type alone (an annotation newer than this reader is ignored, as
 * parquet-format asks).  man/tally.1 ("Parquet") has the table.
 */
#include "parquet.h"
#include "../infer.h"

#include <stdio.h>

#define MAX_PARTS 8     /* as the NDJSON reader flattens objects */
#define MAX_DEPTH 64    /* schema nesting; deeper is corrupt for any use */

typedef struct Walk {
    const PqFileMeta *m;
    const char *name;   /* the file, as given (unescaped) */
    int next;           /* next schema element */
    int chunk;          /* next column chunk index */
    PqLeaf *leaves;
    int n, cap;
    char **names;       /* leaf names (owned), as leaves */
    TlError *err;
} Walk;

const char *pq_phys_name(int phys)
{
    static const char *const n[] = {"BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE",
                                    "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
    return phys >= 0 && phys <= PQ_FIXED_LEN_BYTE_ARRAY ? n[phys] : "?";
}

static TlStatus fail(Walk *w, const char *fmt, const char *detail)
{
    char msg[256];
    snprintf(msg, sizeof msg, fmt, detail);
    return tl_error(w->err, TL_ERR_DATA, "%s: corrupt Parquet schema: %s",
                    tl_escape_name(w->name).s, msg);
}

/* Decimal of precision p and scale s: float64 up to 15 digits. */
static void decimal(PqLeaf *l, int32_t p, int32_t s)
{
    if (p < 1 || s < 0 || s > p) {
        l->unsupported = "a DECIMAL whose precision and scale are not valid";
        return;
    }
    l->precision = p;
    l->scale = s;
    l->conv = p <= 15 ? PQ_CV_DEC_F64 : PQ_CV_DEC_TEXT;
}

/* The leaf's tally type and conversion from its element e. */
static void map_type(PqLeaf *l, const PqSchemaElem *e)
{
    const PqLogical *lt = &e->logical;
    int ct = e->converted;
    int lk = lt->kind;
    l->conv = PQ_CV_BYTES;
    if (lk == PQ_LT_UNKNOWN) {
        l->conv = PQ_CV_NULL;
    } else if (lk == PQ_LT_DECIMAL || (lk == PQ_LT_NONE && ct == PQ_CT_DECIMAL)) {
        if (l->phys == PQ_INT32 || l->phys == PQ_INT64 || l->phys == PQ_BYTE_ARRAY ||
            l->phys == PQ_FIXED_LEN_BYTE_ARRAY) {
            if (lk == PQ_LT_DECIMAL) decimal(l, lt->precision, lt->scale);
            else decimal(l, e->precision, e->scale < 0 ? 0 : e->scale);
            goto typed;
        }
    }
    switch (l->phys) {
    case PQ_BOOLEAN: l->conv = PQ_CV_BOOL; break;
    case PQ_INT32:
        l->conv = PQ_CV_I32;
        if (lk == PQ_LT_DATE || (lk == PQ_LT_NONE && ct == PQ_CT_DATE)) l->conv = PQ_CV_DATE;
        else if (lk == PQ_LT_INTEGER && !lt->is_signed) l->conv = PQ_CV_U32;
        else if (lk == PQ_LT_NONE && (ct == PQ_CT_UINT_8 || ct == PQ_CT_UINT_16 ||
                                      ct == PQ_CT_UINT_32))
            l->conv = PQ_CV_U32;
        else if ((lk == PQ_LT_TIME && lt->unit == PQ_UNIT_MILLIS) ||
                 (lk == PQ_LT_NONE && ct == PQ_CT_TIME_MILLIS))
            l->conv = PQ_CV_TIME_MS;
        break;
    case PQ_INT64:
        l->conv = PQ_CV_I64;
        if (lk == PQ_LT_TIMESTAMP)
            l->conv = lt->unit == PQ_UNIT_MILLIS ? PQ_CV_TS_MS
                      : lt->unit == PQ_UNIT_MICROS ? PQ_CV_TS_US : PQ_CV_TS_NS;
        else if (lk == PQ_LT_NONE && ct == PQ_CT_TIMESTAMP_MILLIS) l->conv = PQ_CV_TS_MS;
        else if (lk == PQ_LT_NONE && ct == PQ_CT_TIMESTAMP_MICROS) l->conv = PQ_CV_TS_US;
        else if (lk == PQ_LT_INTEGER && !lt->is_signed) l->conv = PQ_CV_U64;
        else if (lk == PQ_LT_NONE && ct == PQ_CT_UINT_64) l->conv = PQ_CV_U64;
        else if (lk == PQ_LT_TIME)
            l->conv = lt->unit == PQ_UNIT_MICROS ? PQ_CV_TIME_US
                      : lt->unit == PQ_UNIT_NANOS ? PQ_CV_TIME_NS : PQ_CV_I64;
        else if (lk == PQ_LT_NONE && ct == PQ_CT_TIME_MICROS) l->conv = PQ_CV_TIME_US;
        break;
    case PQ_INT96: l->conv = PQ_CV_INT96; break;
    case PQ_FLOAT: l->conv = PQ_CV_F32; break;
    case PQ_DOUBLE: l->conv = PQ_CV_F64; break;
    case PQ_BYTE_ARRAY: break;
    case PQ_FIXED_LEN_BYTE_ARRAY:
        if (lk == PQ_LT_UUID && l->type_length == 16) l->conv = PQ_CV_UUID;
        else if (lk == PQ_LT_FLOAT16 && l->type_length == 2) l->conv = PQ_CV_F16;
        else if (lk == PQ_LT_NONE && ct == PQ_CT_INTERVAL)
            l->unsupported = "INTERVAL values are not supported yet";
        break;
    }
typed:
    if (l->conv == PQ_CV_TIME_MS || l->conv == PQ_CV_TIME_US || l->conv == PQ_CV_TIME_NS)
        l->time_utc = lk == PQ_LT_TIME && lt->utc;
    switch (l->conv) {
    case PQ_CV_NULL: l->type = TL_TNULL; break;
    case PQ_CV_BOOL: l->type = TL_TBOOL; break;
    case PQ_CV_I32: case PQ_CV_U32: case PQ_CV_I64: case PQ_CV_U64: l->type = TL_TINT64; break;
    case PQ_CV_F32: case PQ_CV_F64: case PQ_CV_DEC_F64: case PQ_CV_F16:
        l->type = TL_TFLOAT64;
        break;
    case PQ_CV_DATE: l->type = TL_TDATE; break;
    case PQ_CV_TS_MS: case PQ_CV_TS_US: case PQ_CV_TS_NS: case PQ_CV_INT96:
        l->type = TL_TTIMESTAMP;
        break;
    default: l->type = TL_TSTRING; break;
    }
}

/* The element's name: its bytes up to a NUL (as NDJSON keys). */
static size_t name_len(const PqSchemaElem *e)
{
    const void *z = memchr(e->name.p, 0, e->name.n);
    return z ? (size_t)((const uint8_t *)z - e->name.p) : e->name.n;
}

static TlStatus add_leaf(Walk *w, const PqLeaf *l, const char *path, size_t plen)
{
    if (w->n == w->cap) {
        int cap = w->cap ? w->cap * 2 : 16;
        PqLeaf *nl = tl_realloc(w->leaves, (size_t)cap * sizeof *nl);
        if (!nl) return tl_error_oom(w->err);
        w->leaves = nl;
        char **nn = tl_realloc(w->names, (size_t)cap * sizeof *nn);
        if (!nn) return tl_error_oom(w->err);
        w->names = nn;
        w->cap = cap;
    }
    w->names[w->n] = tl_strndup(path, plen);
    if (!w->names[w->n]) return tl_error_oom(w->err);
    w->leaves[w->n++] = *l;
    return TL_OK;
}

/* Skip the subtree of element i (already taken), counting its leaves'
 * column chunks. */
static TlStatus skip_tree(Walk *w, int32_t children, int depth)
{
    if (depth > MAX_DEPTH) return fail(w, "nested deeper than %s levels", "64");
    for (int32_t k = 0; k < children; k++) {
        const PqSchemaElem *e;
        if (w->next >= w->m->n_schema)
            return fail(w, "a group lists more children than the schema %s", "holds");
        e = &w->m->schema[w->next++];
        if (e->num_children > 0) TL_TRY(skip_tree(w, e->num_children, depth + 1));
        else if (e->type >= 0) w->chunk++;
    }
    return TL_OK;
}

/* The children of a group whose path is path[0, plen) (parts: its part
 * count), def and rep its levels. */
static TlStatus walk(Walk *w, int32_t children, char *path, size_t plen, int parts, int def,
                     int rep, int depth)
{
    if (depth > MAX_DEPTH) return fail(w, "nested deeper than %s levels", "64");
    for (int32_t k = 0; k < children; k++) {
        const PqSchemaElem *e;
        size_t nl, len;
        int d, r, i;
        bool nested;
        PqLeaf l;
        if (w->next >= w->m->n_schema)
            return fail(w, "a group lists more children than the schema %s", "holds");
        i = w->next++;
        e = &w->m->schema[i];
        nl = name_len(e);
        len = plen + (plen ? 1 : 0) + nl;
        char *p = tl_malloc(len + 1);
        if (!p) return tl_error_oom(w->err);
        memcpy(p, path, plen);
        if (plen) p[plen] = '.';
        memcpy(p + len - nl, e->name.p, nl);
        p[len] = 0;
        d = def + (e->repetition == PQ_OPTIONAL || e->repetition == PQ_REPEATED);
        r = rep + (e->repetition == PQ_REPEATED);
        nested = e->repetition == PQ_REPEATED || e->converted == PQ_CT_LIST ||
                 e->converted == PQ_CT_MAP || e->converted == PQ_CT_MAP_KEY_VALUE ||
                 e->logical.kind == PQ_LT_LIST || e->logical.kind == PQ_LT_MAP ||
                 parts + 1 > MAX_PARTS;
        memset(&l, 0, sizeof l);
        l.elem = i;
        l.chunk = w->chunk;
        l.max_def = d;
        l.max_rep = r;
        TlStatus st = TL_OK;
        if (nested) {
            l.elem = -1;
            l.type = TL_TSTRING;
            l.unsupported = parts + 1 > MAX_PARTS
                                ? "structs nested more than 8 levels deep are not supported yet"
                                : "lists and maps (repeated fields) are not supported yet";
            if (e->num_children > 0) {
                st = skip_tree(w, e->num_children, depth + 1);
            } else if (e->type >= 0) {
                w->chunk++;
            }
            if (st == TL_OK) st = add_leaf(w, &l, p, len);
        } else if (e->num_children > 0) {
            st = walk(w, e->num_children, p, len, parts + 1, d, r, depth + 1);
        } else if (e->type >= 0) {
            l.phys = e->type;
            l.type_length = e->type_length;
            w->chunk++;
            if (l.phys == PQ_FIXED_LEN_BYTE_ARRAY && l.type_length < 0) {
                l.type = TL_TSTRING;
                l.unsupported = "a FIXED_LEN_BYTE_ARRAY without its length";
            } else {
                map_type(&l, e);
            }
            st = add_leaf(w, &l, p, len);
        }
        /* a group without children and without a type holds no column */
        tl_free(p);
        TL_TRY(st);
    }
    return TL_OK;
}

TlStatus pq_schema_build(const PqFileMeta *m, const char *name, bool quiet, PqLeaf **leaves,
                         int *n_leaves, int *n_chunks, TlSchema *schema, TlError *err)
{
    Walk w = {m, name, 1, 0, NULL, 0, 0, NULL, err};
    TlStatus st;
    size_t *lens = NULL;
    *leaves = NULL;
    *n_leaves = *n_chunks = 0;
    if (m->n_schema < 1) return fail(&w, "%s", "no root element");
    if (m->schema[0].num_children < 0) return fail(&w, "%s", "the root is not a group");
    st = walk(&w, m->schema[0].num_children, (char *)"", 0, 0, 0, 0, 0);
    if (st == TL_OK && w.next != m->n_schema)
        st = fail(&w, "%s", "elements past the root's children");
    if (st == TL_OK && w.n && !(lens = tl_malloc((size_t)w.n * sizeof *lens)))
        st = tl_error_oom(err);
    for (int i = 0; st == TL_OK && i < w.n; i++) lens[i] = strlen(w.names[i]);
    if (st == TL_OK)
        st = tl_names_unique((const char *const *)w.names, lens, w.n, name, quiet, schema, err);
    for (int i = 0; st == TL_OK && i < w.n; i++) schema->fields[i].type = w.leaves[i].type;
    for (int i = 0; i < w.n; i++) tl_free(w.names[i]);
    tl_free(w.names);
    tl_free(lens);
    if (st != TL_OK) {
        tl_free(w.leaves);
        return st;
    }
    *leaves = w.leaves;
    *n_leaves = w.n;
    *n_chunks = w.chunk;
    return TL_OK;
}
