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
        l->conv = PQ_CV_NULL; /* whatever the physical type */
        goto typed;
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
    case PQ_BYTE_ARRAY:
        l->json = lk == PQ_LT_JSON || (lk == PQ_LT_NONE && ct == PQ_CT_JSON);
        break;
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
        /* isAdjustedToUTC: an instant, DuckDB's TIMESTAMP WITH TIME ZONE */
        l->type = lk == PQ_LT_TIMESTAMP && lt->utc ? TL_TTIMESTAMPTZ : TL_TTIMESTAMP;
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

/* ------------------------------------------------------- nested columns
 *
 * A nested column's value is its JSON text; its shape is a tree of nodes
 * (parquet.h, PqNode) with the levels at which each node is present, and
 * its primitive leaves are the column's sub-leaves, in column chunk order.
 * The shapes, as LogicalTypes.md gives them (with its rules for files
 * written before the three-level lists):
 *
 *   <opt> group x (LIST) { repeated group list { <opt> T element } }
 *                                   a list of T (null when x is optional
 *                                   and absent, [] when it has no element)
 *   ... { repeated T element }      two-level: the repeated field is the
 *                                   element (also a repeated group of
 *                                   several fields, or one named "array"
 *                                   or "x_tuple": a struct element)
 *   <opt> group x (MAP) { repeated group key_value { key; <opt> value } }
 *                                   an object, keys as strings
 *   repeated T x                    (no annotation) a list of T, never null
 *   group x { ... }                 an object (a struct under a list or
 *                                   map, or one at the 8th part of a name)
 */

/* The build of one nested column. */
typedef struct Nest {
    Walk *w;
    PqLeaf *subs;
    int n_subs, cap_subs;
    const char *reason;     /* why the column cannot be read, or NULL */
} Nest;

static void node_free(PqNode *n)
{
    if (!n) return;
    for (int i = 0; i < n->n_kids; i++) node_free(n->kids[i]);
    tl_free(n->kids);
    tl_free(n->name);
    tl_free(n);
}

void pq_leaves_free(PqLeaf *leaves, int n)
{
    for (int i = 0; leaves && i < n; i++) {
        node_free(leaves[i].node);
        tl_free(leaves[i].subs);
    }
    tl_free(leaves);
}

/* A node into *out, which holds it also when this fails (for freeing). */
static TlStatus node_new(Nest *b, PqNodeKind kind, const PqSchemaElem *e, int n_kids,
                         PqNode **out)
{
    PqNode *n = tl_calloc(1, sizeof *n);
    *out = n;
    if (!n) return tl_error_oom(b->w->err);
    n->kind = kind;
    n->first_sub = b->n_subs;
    if (e && !(n->name = tl_strndup((const char *)e->name.p, name_len(e))))
        return tl_error_oom(b->w->err);
    if (n_kids && !(n->kids = tl_calloc((size_t)n_kids, sizeof *n->kids)))
        return tl_error_oom(b->w->err);
    return TL_OK;
}

/* The next schema element (a child of the one being built). */
static TlStatus take(Nest *b, const PqSchemaElem **e)
{
    Walk *w = b->w;
    if (w->next >= w->m->n_schema)
        return fail(w, "a group lists more children than the schema %s", "holds");
    *e = &w->m->schema[w->next++];
    return TL_OK;
}

/* A shape this reader does not know: its column is refused; the rest of
 * the group is skipped, its chunks counted: taken (already taken, whose
 * subtree follows) and the group's other siblings_left children. */
static TlStatus odd_shape(Nest *b, const PqSchemaElem *taken, int32_t siblings_left, int depth,
                          const char *why)
{
    if (!b->reason) b->reason = why;
    if (taken->num_children > 0) TL_TRY(skip_tree(b->w, taken->num_children, depth));
    else if (taken->type >= 0) b->w->chunk++;
    return skip_tree(b->w, siblings_left, depth);
}

static TlStatus build(Nest *b, const PqSchemaElem *e, int dp, int rp, int depth, bool elem,
                      PqNode **out);

/* The node of element e as a list's element or a map's key or value: its
 * own repetition is the list's (levels d, r already count it). */
static TlStatus element(Nest *b, const PqSchemaElem *e, int d, int r, int depth, PqNode **out)
{
    PqNode *n;
    if (e->num_children > 0) {
        TlStatus nst = node_new(b, PQ_N_STRUCT, e, e->num_children, out);
        n = *out;
        TL_TRY(nst);
        n->def = d;
        for (int32_t k = 0; k < e->num_children; k++) {
            const PqSchemaElem *c = NULL;
            TL_TRY(take(b, &c));
            TL_TRY(build(b, c, d, r, depth + 1, false, &n->kids[n->n_kids++]));
        }
        return TL_OK;
    }
    TlStatus nst = node_new(b, PQ_N_LEAF, e, 0, out);
    n = *out;
    TL_TRY(nst);
    n->def = d;
    if (e->type < 0) {
        if (!b->reason) b->reason = "an empty group in a nested column";
        return TL_OK;
    }
    if (b->n_subs == b->cap_subs) {
        int cap = b->cap_subs ? b->cap_subs * 2 : 4;
        PqLeaf *g = tl_realloc(b->subs, (size_t)cap * sizeof *g);
        if (!g) return tl_error_oom(b->w->err);
        b->subs = g;
        b->cap_subs = cap;
    }
    PqLeaf *l = &b->subs[b->n_subs];
    memset(l, 0, sizeof *l);
    l->elem = (int)(e - b->w->m->schema);
    l->chunk = b->w->chunk++;
    l->phys = e->type;
    l->type_length = e->type_length;
    l->max_def = d;
    l->max_rep = r;
    if (l->phys == PQ_FIXED_LEN_BYTE_ARRAY && l->type_length < 0)
        l->unsupported = "a FIXED_LEN_BYTE_ARRAY without its length";
    else
        map_type(l, e);
    if (l->unsupported && !b->reason) b->reason = l->unsupported;
    n->sub = b->n_subs++;
    return TL_OK;
}

/* The node of element e (taken; its children follow), under levels dp, rp.
 * elem: e is a list's element whose repetition the list counted (dp, rp
 * already include it; it is never null). */
static TlStatus build(Nest *b, const PqSchemaElem *e, int dp, int rp, int depth, bool elem,
                      PqNode **out)
{
    int d = elem ? dp : dp + (e->repetition == PQ_OPTIONAL || e->repetition == PQ_REPEATED);
    int r = elem ? rp : rp + (e->repetition == PQ_REPEATED);
    bool nullable = !elem && e->repetition == PQ_OPTIONAL;
    bool list = e->converted == PQ_CT_LIST || e->logical.kind == PQ_LT_LIST;
    bool map = e->converted == PQ_CT_MAP || e->converted == PQ_CT_MAP_KEY_VALUE ||
               e->logical.kind == PQ_LT_MAP;
    const PqSchemaElem *rep_e = NULL, *c = NULL;
    PqNode *n;
    *out = NULL;
    if (depth > MAX_DEPTH) return fail(b->w, "nested deeper than %s levels", "64");
    if (!elem && e->repetition == PQ_REPEATED) {
        /* an unannotated repeated field (or a legacy key_value group): a
         * list, or map, that is never null */
        bool kv = e->converted == PQ_CT_MAP_KEY_VALUE && e->num_children >= 1 &&
                  e->num_children <= 2;
        TlStatus nst = node_new(b, kv ? PQ_N_MAP : PQ_N_LIST, e, kv ? 2 : 1, out);
        n = *out;
        TL_TRY(nst);
        n->def = dp;
        n->elem_def = d;
        n->rep = r;
        if (!kv) return build(b, e, d, r, depth + 1, true, &n->kids[n->n_kids++]);
        for (int32_t k = 0; k < e->num_children; k++) {
            TL_TRY(take(b, &c));
            TL_TRY(build(b, c, d, r, depth + 1, false, &n->kids[n->n_kids++]));
        }
        return TL_OK;
    }
    if (e->num_children <= 0 || (!list && !map)) {
        /* a primitive or a struct */
        TlStatus st = element(b, e, d, r, depth, out);
        if (*out) (*out)->nullable = nullable;
        return st;
    }
    /* LIST or MAP: one repeated child */
    TlStatus nst = node_new(b, list ? PQ_N_LIST : PQ_N_MAP, e, 2, out);
    n = *out;
    TL_TRY(nst);
    n->nullable = nullable;
    n->def = d;
    n->elem_def = d + 1;
    n->rep = r + 1;
    TL_TRY(take(b, &rep_e));
    if (e->num_children != 1 || rep_e->repetition != PQ_REPEATED)
        return odd_shape(b, rep_e, e->num_children - 1, depth + 1,
                         list ? "a LIST whose child is not one repeated field"
                              : "a MAP whose child is not one repeated group");
    if (list) {
        size_t en = name_len(e), rn = name_len(rep_e);
        bool two_level = rep_e->num_children <= 0 || rep_e->num_children > 1 ||
                         (rn == 5 && memcmp(rep_e->name.p, "array", 5) == 0) ||
                         (rn == en + 6 && memcmp(rep_e->name.p, e->name.p, en) == 0 &&
                          memcmp(rep_e->name.p + en, "_tuple", 6) == 0);
        if (two_level) return build(b, rep_e, d + 1, r + 1, depth + 1, true, &n->kids[n->n_kids++]);
        TL_TRY(take(b, &c));
        return build(b, c, d + 1, r + 1, depth + 2, false, &n->kids[n->n_kids++]);
    }
    if (rep_e->num_children < 1 || rep_e->num_children > 2)
        return odd_shape(b, rep_e, 0, depth + 1, "a MAP whose entries are not a key and a value");
    for (int32_t k = 0; k < rep_e->num_children; k++) {
        TL_TRY(take(b, &c));
        TL_TRY(build(b, c, d + 1, r + 1, depth + 2, false, &n->kids[n->n_kids++]));
    }
    return TL_OK;
}

/* Each node's range of sub-leaves (leaves are made in order, so a node's
 * are its first kid's first to its last kid's last). */
static void fix_subs(PqNode *d)
{
    if (d->kind == PQ_N_LEAF) {
        d->n_subs = 1;
        d->first_sub = d->sub;
        return;
    }
    d->n_subs = 0;
    for (int k = 0; k < d->n_kids; k++) {
        fix_subs(d->kids[k]);
        if (k == 0) d->first_sub = d->kids[k]->first_sub;
        d->n_subs += d->kids[k]->n_subs;
    }
}

/* The nested column rooted at element e (taken), whose ancestors give it
 * levels def and rep, into *l. */
static TlStatus nested_column(Walk *w, const PqSchemaElem *e, int def, int rep, int depth,
                              PqLeaf *l)
{
    Nest b = {w, NULL, 0, 0, NULL};
    TlStatus st = build(&b, e, def, rep, depth, false, &l->node);
    l->subs = b.subs;
    l->n_subs = b.n_subs;
    l->type = TL_TSTRING;
    l->conv = PQ_CV_JSON;
    l->base_def = def;
    l->unsupported = b.reason;
    if (st == TL_OK && b.n_subs == 0 && !l->unsupported)
        l->unsupported = "a nested column without values";
    if (st == TL_OK && !l->unsupported) fix_subs(l->node);
    return st;
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
                 (e->num_children > 0 && parts + 1 >= MAX_PARTS);
        memset(&l, 0, sizeof l);
        l.elem = i;
        l.chunk = w->chunk;
        l.max_def = d;
        l.max_rep = r;
        TlStatus st = TL_OK;
        if (nested) {
            l.elem = -1;
            st = nested_column(w, e, def, rep, depth + 1, &l);
            if (st == TL_OK) st = add_leaf(w, &l, p, len);
            if (st != TL_OK) {
                node_free(l.node);
                tl_free(l.subs);
            }
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
        pq_leaves_free(w.leaves, w.n);
        return st;
    }
    *leaves = w.leaves;
    *n_leaves = w.n;
    *n_chunks = w.chunk;
    return TL_OK;
}
