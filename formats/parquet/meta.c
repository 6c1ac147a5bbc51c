/*
 * meta.c -- the footer and page headers, Thrift compact bytes -> the C
 * structs of meta.h.
 *
 * One function per Thrift struct, each the same loop: take the next field,
 * read it when its id is one the reader uses (checking its wire type), skip
 * it otherwise, and at the struct's end check that the fields the reader
 * cannot do without were there.  Fields parquet.thrift calls required but
 * the reader never looks at are not demanded: writers that leave them out
 * still produce readable files.
 *
 * Counts that size an allocation (schema elements, row groups, column
 * chunks) come from pq_th_list, which refuses a count larger than the bytes
 * left, so a corrupt count costs at most an allocation the size of the
 * footer.
 */
#include "meta.h"

/* ------------------------------------------------------------ fields */

static TlStatus f_i32(PqThrift *t, const PqThStruct *s, int id, int ty, int32_t *v)
{
    if (ty != PQ_T_I8 && ty != PQ_T_I16 && ty != PQ_T_I32) return pq_th_bad_type(t, s, id, ty);
    return pq_th_i32(t, ty, v);
}

static TlStatus f_i64(PqThrift *t, const PqThStruct *s, int id, int ty, int64_t *v)
{
    if (ty != PQ_T_I8 && ty != PQ_T_I16 && ty != PQ_T_I32 && ty != PQ_T_I64)
        return pq_th_bad_type(t, s, id, ty);
    return pq_th_i64(t, ty, v);
}

static TlStatus f_bool(PqThrift *t, const PqThStruct *s, int id, int ty, bool *v)
{
    if (ty != PQ_T_TRUE && ty != PQ_T_FALSE) return pq_th_bad_type(t, s, id, ty);
    return pq_th_bool(t, ty, false, v);
}

static TlStatus f_bin(PqThrift *t, const PqThStruct *s, int id, int ty, PqStr *v)
{
    if (ty != PQ_T_BINARY) return pq_th_bad_type(t, s, id, ty);
    return pq_th_binary(t, ty, &v->p, &v->n);
}

static TlStatus f_struct(PqThrift *t, const PqThStruct *s, int id, int ty)
{
    return ty == PQ_T_STRUCT ? TL_OK : pq_th_bad_type(t, s, id, ty);
}

static TlStatus f_list(PqThrift *t, const PqThStruct *s, int id, int ty, int elem_want,
                       int32_t *n)
{
    int elem;
    if (ty != PQ_T_LIST && ty != PQ_T_SET) return pq_th_bad_type(t, s, id, ty);
    TL_TRY(pq_th_list(t, ty, &elem, n));
    if (elem != elem_want && !(elem_want == PQ_T_I32 && (elem == PQ_T_I8 || elem == PQ_T_I16)))
        return pq_th_fail(t, "%s: field %d lists elements of an unexpected wire type", s->name,
                          id);
    return TL_OK;
}

/* Each bit of need that the struct did not hold is a missing field;
 * names[i] is bit i's. */
static TlStatus require(PqThrift *t, const PqThStruct *s, uint32_t need,
                        const char *const *names)
{
    for (int i = 0; i < 32; i++)
        if ((need >> i & 1) && !(s->seen >> i & 1))
            return pq_th_fail(t, "%s lacks its required field %s", s->name, names[i]);
    return TL_OK;
}

/* -------------------------------------------------------- small structs */

static TlStatus stats_decode(PqThrift *t, PqStats *out)
{
    PqThStruct s;
    int id, ty;
    PqStr old_min = {0}, old_max = {0};
    bool has_old_min = false, has_old_max = false;
    memset(out, 0, sizeof *out);
    TL_TRY(pq_th_begin(t, &s, "Statistics"));
    for (;;) {
        TL_TRY(pq_th_field(t, &s, &id, &ty));
        if (ty == PQ_T_STOP) break;
        switch (id) {
        case 1: TL_TRY(f_bin(t, &s, id, ty, &old_max)); has_old_max = true; break;
        case 2: TL_TRY(f_bin(t, &s, id, ty, &old_min)); has_old_min = true; break;
        case 3: TL_TRY(f_i64(t, &s, id, ty, &out->null_count)); out->has_null_count = true; break;
        case 5: TL_TRY(f_bin(t, &s, id, ty, &out->max)); out->has_max = true; break;
        case 6: TL_TRY(f_bin(t, &s, id, ty, &out->min)); out->has_min = true; break;
        default: TL_TRY(pq_th_skip(t, ty, false)); break;
        }
    }
    if (!out->has_min && !out->has_max && (has_old_min || has_old_max)) {
        out->min = old_min;
        out->max = old_max;
        out->has_min = has_old_min;
        out->has_max = has_old_max;
        out->legacy = true;
    }
    return TL_OK;
}

/* An empty struct or one whose fields are all skipped (the members of
 * TimeUnit and of most LogicalType arms). */
static TlStatus skip_struct(PqThrift *t, const PqThStruct *parent, int id, int ty)
{
    TL_TRY(f_struct(t, parent, id, ty));
    return pq_th_skip(t, ty, false);
}

/* TimeType or TimestampType: isAdjustedToUTC and the TimeUnit union. */
static TlStatus time_decode(PqThrift *t, PqLogical *lt)
{
    PqThStruct s, u;
    int id, ty, uid, uty;
    TL_TRY(pq_th_begin(t, &s, lt->kind == PQ_LT_TIME ? "TimeType" : "TimestampType"));
    for (;;) {
        TL_TRY(pq_th_field(t, &s, &id, &ty));
        if (ty == PQ_T_STOP) break;
        if (id == 1) {
            TL_TRY(f_bool(t, &s, id, ty, &lt->utc));
        } else if (id == 2) {
            TL_TRY(f_struct(t, &s, id, ty));
            TL_TRY(pq_th_begin(t, &u, "TimeUnit"));
            for (;;) {
                TL_TRY(pq_th_field(t, &u, &uid, &uty));
                if (uty == PQ_T_STOP) break;
                if (uid >= PQ_UNIT_MILLIS && uid <= PQ_UNIT_NANOS) lt->unit = uid;
                TL_TRY(skip_struct(t, &u, uid, uty));
            }
        } else {
            TL_TRY(pq_th_skip(t, ty, false));
        }
    }
    if (!lt->unit) return pq_th_fail(t, "%s lacks its time unit", s.name);
    return TL_OK;
}

static TlStatus logical_decode(PqThrift *t, PqLogical *lt)
{
    PqThStruct s, a;
    int id, ty, aid, aty;
    memset(lt, 0, sizeof *lt);
    TL_TRY(pq_th_begin(t, &s, "LogicalType"));
    for (;;) {
        TL_TRY(pq_th_field(t, &s, &id, &ty));
        if (ty == PQ_T_STOP) break;
        TL_TRY(f_struct(t, &s, id, ty));
        lt->kind = id;
        if (id == PQ_LT_TIME || id == PQ_LT_TIMESTAMP) {
            TL_TRY(time_decode(t, lt));
        } else if (id == PQ_LT_DECIMAL || id == PQ_LT_INTEGER) {
            int64_t v;
            bool b;
            TL_TRY(pq_th_begin(t, &a, id == PQ_LT_DECIMAL ? "DecimalType" : "IntType"));
            for (;;) {
                TL_TRY(pq_th_field(t, &a, &aid, &aty));
                if (aty == PQ_T_STOP) break;
                if ((aid == 1 || aid == 2) && (id == PQ_LT_DECIMAL || aid == 1)) {
                    TL_TRY(f_i64(t, &a, aid, aty, &v));
                    if (v < INT32_MIN || v > INT32_MAX)
                        return pq_th_fail(t, "%s: field %d out of range", a.name, aid);
                    if (id == PQ_LT_DECIMAL && aid == 1) lt->scale = (int32_t)v;
                    else if (id == PQ_LT_DECIMAL) lt->precision = (int32_t)v;
                    else lt->bit_width = (int)v;
                } else if (aid == 2) {
                    TL_TRY(f_bool(t, &a, aid, aty, &b));
                    lt->is_signed = b;
                } else {
                    TL_TRY(pq_th_skip(t, aty, false));
                }
            }
            if ((a.seen & 6u) != 6u)
                return pq_th_fail(t, "%s lacks a required field", a.name);
        } else {
            TL_TRY(pq_th_skip(t, ty, false));
        }
    }
    return TL_OK;
}

/* ------------------------------------------------------------- schema */

static TlStatus schema_elem_decode(PqThrift *t, PqSchemaElem *e)
{
    static const char *const names[] = {"", "", "", "", "name"};
    PqThStruct s;
    int id, ty;
    int32_t v;
    memset(e, 0, sizeof *e);
    e->type = e->repetition = e->converted = -1;
    e->type_length = e->num_children = e->scale = e->precision = -1;
    TL_TRY(pq_th_begin(t, &s, "SchemaElement"));
    for (;;) {
        TL_TRY(pq_th_field(t, &s, &id, &ty));
        if (ty == PQ_T_STOP) break;
        switch (id) {
        case 1: TL_TRY(f_i32(t, &s, id, ty, &v)); e->type = v; break;
        case 2: TL_TRY(f_i32(t, &s, id, ty, &e->type_length)); break;
        case 3: TL_TRY(f_i32(t, &s, id, ty, &v)); e->repetition = v; break;
        case 4: TL_TRY(f_bin(t, &s, id, ty, &e->name)); break;
        case 5: TL_TRY(f_i32(t, &s, id, ty, &e->num_children)); break;
        case 6: TL_TRY(f_i32(t, &s, id, ty, &v)); e->converted = v; break;
        case 7: TL_TRY(f_i32(t, &s, id, ty, &e->scale)); break;
        case 8: TL_TRY(f_i32(t, &s, id, ty, &e->precision)); break;
        case 10:
            TL_TRY(f_struct(t, &s, id, ty));
            TL_TRY(logical_decode(t, &e->logical));
            break;
        default: TL_TRY(pq_th_skip(t, ty, false)); break;
        }
    }
    if (e->type < -1 || e->type > PQ_FIXED_LEN_BYTE_ARRAY)
        return pq_th_fail(t, "schema element of unknown physical type %d", e->type);
    if (e->repetition < -1 || e->repetition > PQ_REPEATED)
        return pq_th_fail(t, "schema element of unknown repetition %d", e->repetition);
    return require(t, &s, 1u << 4, names);
}

/* ------------------------------------------------------- column chunks */

static TlStatus column_meta_decode(PqThrift *t, PqColumnMeta *c)
{
    static const char *const names[] = {"", "type", "", "", "codec", "num_values", "",
                                        "total_compressed_size", "", "data_page_offset"};
    PqThStruct s;
    int id, ty;
    int32_t v, n;
    memset(c, 0, sizeof *c);
    c->dictionary_page_offset = -1;
    TL_TRY(pq_th_begin(t, &s, "ColumnMetaData"));
    for (;;) {
        TL_TRY(pq_th_field(t, &s, &id, &ty));
        if (ty == PQ_T_STOP) break;
        switch (id) {
        case 1: TL_TRY(f_i32(t, &s, id, ty, &v)); c->type = v; break;
        case 2:
            TL_TRY(f_list(t, &s, id, ty, PQ_T_I32, &n));
            for (int32_t i = 0; i < n; i++) {
                TL_TRY(pq_th_i32(t, PQ_T_I32, &v));
                if (v >= 0 && v < 32) c->encodings |= 1u << v;
            }
            break;
        case 4: TL_TRY(f_i32(t, &s, id, ty, &v)); c->codec = v; break;
        case 5: TL_TRY(f_i64(t, &s, id, ty, &c->num_values)); break;
        case 6: TL_TRY(f_i64(t, &s, id, ty, &c->total_uncompressed_size)); break;
        case 7: TL_TRY(f_i64(t, &s, id, ty, &c->total_compressed_size)); break;
        case 9: TL_TRY(f_i64(t, &s, id, ty, &c->data_page_offset)); break;
        case 11: TL_TRY(f_i64(t, &s, id, ty, &c->dictionary_page_offset)); break;
        case 12:
            TL_TRY(f_struct(t, &s, id, ty));
            TL_TRY(stats_decode(t, &c->stats));
            c->has_stats = true;
            break;
        default: TL_TRY(pq_th_skip(t, ty, false)); break;
        }
    }
    TL_TRY(require(t, &s, 1u << 1 | 1u << 4 | 1u << 5 | 1u << 7 | 1u << 9, names));
    if (c->num_values < 0)
        return pq_th_fail(t, "negative num_values %lld", (long long)c->num_values);
    if (c->total_compressed_size < 0)
        return pq_th_fail(t, "negative total_compressed_size %lld",
                          (long long)c->total_compressed_size);
    return TL_OK;
}

static TlStatus column_chunk_decode(PqThrift *t, PqColumnChunk *c)
{
    PqThStruct s;
    int id, ty;
    PqStr path;
    memset(c, 0, sizeof *c);
    TL_TRY(pq_th_begin(t, &s, "ColumnChunk"));
    for (;;) {
        TL_TRY(pq_th_field(t, &s, &id, &ty));
        if (ty == PQ_T_STOP) break;
        switch (id) {
        case 1: TL_TRY(f_bin(t, &s, id, ty, &path)); c->has_file_path = true; break;
        case 3:
            TL_TRY(f_struct(t, &s, id, ty));
            TL_TRY(column_meta_decode(t, &c->meta));
            c->has_meta = true;
            break;
        case 8:
        case 9: c->encrypted = true; TL_TRY(pq_th_skip(t, ty, false)); break;
        default: TL_TRY(pq_th_skip(t, ty, false)); break;
        }
    }
    return TL_OK;
}

static TlStatus row_group_decode(PqThrift *t, PqRowGroup *g)
{
    static const char *const names[] = {"", "columns", "", "num_rows"};
    PqThStruct s;
    int id, ty;
    int32_t n;
    TL_TRY(pq_th_begin(t, &s, "RowGroup"));
    for (;;) {
        TL_TRY(pq_th_field(t, &s, &id, &ty));
        if (ty == PQ_T_STOP) break;
        switch (id) {
        case 1:
            TL_TRY(f_list(t, &s, id, ty, PQ_T_STRUCT, &n));
            if (g->cols) return pq_th_fail(t, "RowGroup lists its columns twice");
            g->cols = tl_calloc((size_t)(n ? n : 1), sizeof *g->cols);
            if (!g->cols) return tl_error_oom(t->err);
            g->n_cols = n;
            for (int32_t i = 0; i < n; i++) TL_TRY(column_chunk_decode(t, &g->cols[i]));
            break;
        case 2: TL_TRY(f_i64(t, &s, id, ty, &g->total_byte_size)); break;
        case 3: TL_TRY(f_i64(t, &s, id, ty, &g->num_rows)); break;
        default: TL_TRY(pq_th_skip(t, ty, false)); break;
        }
    }
    TL_TRY(require(t, &s, 1u << 1 | 1u << 3, names));
    if (g->num_rows < 0) return pq_th_fail(t, "negative num_rows %lld", (long long)g->num_rows);
    return TL_OK;
}

/* --------------------------------------------------------------- footer */

TlStatus pq_meta_decode(const uint8_t *p, size_t n, uint64_t off, const char *name,
                        PqFileMeta *m, TlError *err)
{
    static const char *const names[] = {"", "", "schema", "num_rows", "row_groups"};
    PqThrift th, *t = &th;
    PqThStruct s;
    int id, ty;
    int32_t cnt;
    memset(m, 0, sizeof *m);
    pq_th_init(t, p, n, off, name, "footer", err);
    TL_TRY(pq_th_begin(t, &s, "FileMetaData"));
    for (;;) {
        TL_TRY(pq_th_field(t, &s, &id, &ty));
        if (ty == PQ_T_STOP) break;
        switch (id) {
        case 1: TL_TRY(f_i32(t, &s, id, ty, &m->version)); break;
        case 2:
            TL_TRY(f_list(t, &s, id, ty, PQ_T_STRUCT, &cnt));
            if (m->schema) return pq_th_fail(t, "FileMetaData lists its schema twice");
            m->schema = tl_calloc((size_t)(cnt ? cnt : 1), sizeof *m->schema);
            if (!m->schema) return tl_error_oom(err);
            m->n_schema = cnt;
            for (int32_t i = 0; i < cnt; i++) TL_TRY(schema_elem_decode(t, &m->schema[i]));
            break;
        case 3: TL_TRY(f_i64(t, &s, id, ty, &m->num_rows)); break;
        case 4:
            TL_TRY(f_list(t, &s, id, ty, PQ_T_STRUCT, &cnt));
            if (m->rgs) return pq_th_fail(t, "FileMetaData lists its row groups twice");
            m->rgs = tl_calloc((size_t)(cnt ? cnt : 1), sizeof *m->rgs);
            if (!m->rgs) return tl_error_oom(err);
            m->n_rgs = cnt;
            for (int32_t i = 0; i < cnt; i++) TL_TRY(row_group_decode(t, &m->rgs[i]));
            break;
        case 6: TL_TRY(f_bin(t, &s, id, ty, &m->created_by)); break;
        case 8: m->encrypted = true; TL_TRY(pq_th_skip(t, ty, false)); break;
        default: TL_TRY(pq_th_skip(t, ty, false)); break;
        }
    }
    TL_TRY(require(t, &s, 1u << 2 | 1u << 3 | 1u << 4, names));
    if (m->num_rows < 0) return pq_th_fail(t, "negative num_rows %lld", (long long)m->num_rows);
    return TL_OK;
}

void pq_meta_free(PqFileMeta *m)
{
    if (!m) return;
    for (int32_t i = 0; m->rgs && i < m->n_rgs; i++) tl_free(m->rgs[i].cols);
    tl_free(m->rgs);
    tl_free(m->schema);
    memset(m, 0, sizeof *m);
}

/* --------------------------------------------------------- page headers */

static TlStatus data_page_decode(PqThrift *t, PqPageHeader *h)
{
    static const char *const names[] = {"", "num_values", "encoding"};
    PqThStruct s;
    int id, ty;
    int32_t v;
    TL_TRY(pq_th_begin(t, &s, "DataPageHeader"));
    for (;;) {
        TL_TRY(pq_th_field(t, &s, &id, &ty));
        if (ty == PQ_T_STOP) break;
        switch (id) {
        case 1: TL_TRY(f_i32(t, &s, id, ty, &h->num_values)); break;
        case 2: TL_TRY(f_i32(t, &s, id, ty, &v)); h->encoding = v; break;
        case 3: TL_TRY(f_i32(t, &s, id, ty, &v)); h->def_encoding = v; break;
        case 4: TL_TRY(f_i32(t, &s, id, ty, &v)); h->rep_encoding = v; break;
        default: TL_TRY(pq_th_skip(t, ty, false)); break;
        }
    }
    return require(t, &s, 1u << 1 | 1u << 2, names);
}

static TlStatus dict_page_decode(PqThrift *t, PqPageHeader *h)
{
    static const char *const names[] = {"", "num_values", "encoding"};
    PqThStruct s;
    int id, ty;
    int32_t v;
    TL_TRY(pq_th_begin(t, &s, "DictionaryPageHeader"));
    for (;;) {
        TL_TRY(pq_th_field(t, &s, &id, &ty));
        if (ty == PQ_T_STOP) break;
        switch (id) {
        case 1: TL_TRY(f_i32(t, &s, id, ty, &h->num_values)); break;
        case 2: TL_TRY(f_i32(t, &s, id, ty, &v)); h->encoding = v; break;
        default: TL_TRY(pq_th_skip(t, ty, false)); break;
        }
    }
    return require(t, &s, 1u << 1 | 1u << 2, names);
}

static TlStatus data_page_v2_decode(PqThrift *t, PqPageHeader *h)
{
    static const char *const names[] = {"", "num_values", "num_nulls", "num_rows", "encoding",
                                        "definition_levels_byte_length",
                                        "repetition_levels_byte_length"};
    PqThStruct s;
    int id, ty;
    int32_t v;
    TL_TRY(pq_th_begin(t, &s, "DataPageHeaderV2"));
    for (;;) {
        TL_TRY(pq_th_field(t, &s, &id, &ty));
        if (ty == PQ_T_STOP) break;
        switch (id) {
        case 1: TL_TRY(f_i32(t, &s, id, ty, &h->num_values)); break;
        case 2: TL_TRY(f_i32(t, &s, id, ty, &h->num_nulls)); break;
        case 3: TL_TRY(f_i32(t, &s, id, ty, &h->num_rows)); break;
        case 4: TL_TRY(f_i32(t, &s, id, ty, &v)); h->encoding = v; break;
        case 5: TL_TRY(f_i32(t, &s, id, ty, &h->def_bytes)); break;
        case 6: TL_TRY(f_i32(t, &s, id, ty, &h->rep_bytes)); break;
        case 7: TL_TRY(f_bool(t, &s, id, ty, &h->is_compressed)); break;
        default: TL_TRY(pq_th_skip(t, ty, false)); break;
        }
    }
    return require(t, &s, 0x7eu, names);
}

TlStatus pq_page_header_decode(PqThrift *t, PqPageHeader *h)
{
    static const char *const names[] = {"", "type", "uncompressed_page_size",
                                        "compressed_page_size"};
    PqThStruct s;
    int id, ty, sub = -1;
    int32_t v;
    memset(h, 0, sizeof *h);
    h->is_compressed = true;
    h->def_encoding = h->rep_encoding = PQ_ENC_RLE;
    TL_TRY(pq_th_begin(t, &s, "PageHeader"));
    for (;;) {
        TL_TRY(pq_th_field(t, &s, &id, &ty));
        if (ty == PQ_T_STOP) break;
        switch (id) {
        case 1: TL_TRY(f_i32(t, &s, id, ty, &v)); h->type = v; break;
        case 2: TL_TRY(f_i32(t, &s, id, ty, &h->uncompressed_size)); break;
        case 3: TL_TRY(f_i32(t, &s, id, ty, &h->compressed_size)); break;
        case 4:
            TL_TRY(f_i32(t, &s, id, ty, &v));
            h->crc = (uint32_t)v;
            h->has_crc = true;
            break;
        case 5:
        case 7:
        case 8:
            TL_TRY(f_struct(t, &s, id, ty));
            if (sub >= 0) return pq_th_fail(t, "PageHeader holds two page headers");
            sub = id;
            TL_TRY(id == 5 ? data_page_decode(t, h) : id == 7 ? dict_page_decode(t, h)
                                                              : data_page_v2_decode(t, h));
            break;
        default: TL_TRY(pq_th_skip(t, ty, false)); break;
        }
    }
    TL_TRY(require(t, &s, 0xeu, names));
    if (h->uncompressed_size < 0 || h->compressed_size < 0)
        return pq_th_fail(t, "negative page size");
    if ((h->type == PQ_PAGE_DATA && sub != 5) || (h->type == PQ_PAGE_DICTIONARY && sub != 7) ||
        (h->type == PQ_PAGE_DATA_V2 && sub != 8))
        return pq_th_fail(t, "a page of type %d without its header", h->type);
    if (h->num_values < 0) return pq_th_fail(t, "negative num_values %d", h->num_values);
    if (h->type == PQ_PAGE_DATA_V2 &&
        (h->num_nulls < 0 || h->num_rows < 0 || h->def_bytes < 0 || h->rep_bytes < 0 ||
         h->num_nulls > h->num_values))
        return pq_th_fail(t, "DataPageHeaderV2 with a negative or impossible count");
    return TL_OK;
}
