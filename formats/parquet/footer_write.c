/*
 * footer_write.c -- the Thrift structures tally writes (parquet.thrift;
 * meta.c reads them): page headers, and the footer's FileMetaData with its
 * schema, row groups, column chunks and statistics.
 *
 * What goes in, field by field, is only what a reader needs and what the
 * data decides: no wall-clock time, no path, no key-value metadata, and
 * created_by "tally version V", so the same rows give the same footer.
 * The schema is flat: a root named "schema" and one OPTIONAL leaf per
 * column, annotated with both the LogicalType and, where one means the
 * same, the legacy ConvertedType (UTF8, DATE) for older readers; a
 * timestamp has no ConvertedType, since TIMESTAMP_MICROS would claim it is
 * adjusted to UTC.  column_orders says every column uses its type's
 * order, which is what makes readers trust min_value/max_value.
 */
#include "pqwrite.h"
#include "thrift.h"

void pq_page_header_put(PqTw *w, int type, size_t raw, size_t comp, int64_t num_values,
                        int encoding)
{
    pq_tw_begin(w);
    pq_tw_i32(w, 1, type);
    pq_tw_i32(w, 2, (int32_t)raw);
    pq_tw_i32(w, 3, (int32_t)comp);
    if (type == PQ_PAGE_DICTIONARY) {
        pq_tw_struct(w, 7);
        pq_tw_i32(w, 1, (int32_t)num_values);
        pq_tw_i32(w, 2, encoding);
        pq_tw_end(w);
    } else {
        pq_tw_struct(w, 5);
        pq_tw_i32(w, 1, (int32_t)num_values);
        pq_tw_i32(w, 2, encoding);
        pq_tw_i32(w, 3, PQ_ENC_RLE);
        pq_tw_i32(w, 4, PQ_ENC_RLE);
        pq_tw_end(w);
    }
    pq_tw_end(w);
}

static void schema_elem(PqTw *w, const TlField *f)
{
    pq_tw_begin(w);
    pq_tw_i32(w, 1, pq_write_phys(f->type));
    pq_tw_i32(w, 3, PQ_OPTIONAL);
    pq_tw_binary(w, 4, f->name, strlen(f->name));
    if (f->type == TL_TSTRING) pq_tw_i32(w, 6, PQ_CT_UTF8);
    if (f->type == TL_TDATE) pq_tw_i32(w, 6, PQ_CT_DATE);
    if (f->type == TL_TSTRING || f->type == TL_TDATE || f->type == TL_TTIMESTAMP ||
        f->type == TL_TTIMESTAMPTZ || f->type == TL_TNULL) {
        pq_tw_struct(w, 10); /* LogicalType, a union */
        switch (f->type) {
        case TL_TSTRING: pq_tw_struct(w, PQ_LT_STRING); break;
        case TL_TDATE: pq_tw_struct(w, PQ_LT_DATE); break;
        case TL_TNULL: pq_tw_struct(w, PQ_LT_UNKNOWN); break;
        default:
            pq_tw_struct(w, PQ_LT_TIMESTAMP);
            /* isAdjustedToUTC: a timestamptz is an instant */
            pq_tw_bool(w, 1, f->type == TL_TTIMESTAMPTZ);
            pq_tw_struct(w, 2);        /* unit: a TimeUnit union */
            pq_tw_struct(w, PQ_UNIT_MICROS);
            pq_tw_end(w);
            pq_tw_end(w);
            break;
        }
        pq_tw_end(w);
        pq_tw_end(w);
    }
    pq_tw_end(w);
}

static void column_chunk(PqTw *w, const TlField *f, const PqChunkOut *c, int64_t at, int codec)
{
    int enc[3], n_enc = 0;
    pq_tw_begin(w);
    pq_tw_i64(w, 2, at);
    pq_tw_struct(w, 3); /* ColumnMetaData */
    pq_tw_i32(w, 1, c->phys);
    enc[n_enc++] = PQ_ENC_PLAIN;
    enc[n_enc++] = PQ_ENC_RLE;
    if (c->dict) enc[n_enc++] = PQ_ENC_RLE_DICTIONARY;
    pq_tw_list(w, 2, PQ_T_I32, (size_t)n_enc);
    for (int i = 0; i < n_enc; i++) pq_tw_elem_i32(w, enc[i]);
    pq_tw_list(w, 3, PQ_T_BINARY, 1);
    pq_tw_elem_binary(w, f->name, strlen(f->name));
    pq_tw_i32(w, 4, codec);
    pq_tw_i64(w, 5, c->num_values);
    pq_tw_i64(w, 6, c->uncompressed);
    pq_tw_i64(w, 7, c->compressed);
    pq_tw_i64(w, 9, at + c->data_offset);
    if (c->dict_offset >= 0) pq_tw_i64(w, 11, at + c->dict_offset);
    pq_tw_struct(w, 12); /* Statistics */
    pq_tw_i64(w, 3, c->null_count);
    if (c->has_minmax) {
        pq_tw_binary(w, 5, c->max, c->max_len);
        pq_tw_binary(w, 6, c->min, c->min_len);
    }
    pq_tw_end(w);
    pq_tw_end(w);
    pq_tw_end(w);
}

void pq_footer_put(PqTw *w, const TlSchema *schema, const PqRgOut *rgs, int n_rgs,
                   int64_t rows, int codec, const char *created_by)
{
    int n = schema->n_fields;
    pq_tw_begin(w);
    pq_tw_i32(w, 1, 1); /* version */
    pq_tw_list(w, 2, PQ_T_STRUCT, (size_t)n + 1);
    pq_tw_begin(w);
    pq_tw_binary(w, 4, "schema", 6);
    pq_tw_i32(w, 5, n);
    pq_tw_end(w);
    for (int c = 0; c < n; c++) schema_elem(w, &schema->fields[c]);
    pq_tw_i64(w, 3, rows);
    pq_tw_list(w, 4, PQ_T_STRUCT, (size_t)n_rgs);
    for (int g = 0; g < n_rgs; g++) {
        const PqRgOut *rg = &rgs[g];
        pq_tw_begin(w);
        pq_tw_list(w, 1, PQ_T_STRUCT, (size_t)n);
        for (int c = 0; c < n; c++)
            column_chunk(w, &schema->fields[c], &rg->cols[c], rg->col_offset[c], codec);
        pq_tw_i64(w, 2, rg->uncompressed);
        pq_tw_i64(w, 3, rg->rows);
        pq_tw_i64(w, 5, rg->offset);
        pq_tw_i64(w, 6, rg->compressed);
        if (g <= INT16_MAX) pq_tw_i16(w, 7, (int16_t)g);
        pq_tw_end(w);
    }
    pq_tw_binary(w, 6, created_by, strlen(created_by));
    pq_tw_list(w, 7, PQ_T_STRUCT, (size_t)n);
    for (int c = 0; c < n; c++) {
        pq_tw_begin(w);
        pq_tw_struct(w, 1); /* TYPE_ORDER */
        pq_tw_end(w);
        pq_tw_end(w);
    }
    pq_tw_end(w);
}
