/*
 * reader.c -- the Parquet reader behind format.h's interface.
 *
 *   open     the whole file is loaded (mapped; standard input and
 *            compressed inputs are read into memory), its two magic
 *            numbers and footer length checked, the footer decoded
 *            (meta.c) and the schema turned into columns (schema.c); the
 *            types come from the file, so there is no inference and no
 *            restart
 *   project  the columns the plan uses: only their column chunks are ever
 *            read (a column that is not projected costs nothing but its
 *            footer entry)
 *   next     row groups in order, each cut into batches of at most
 *            tl_batch_rows() rows; a batch holds one array per projected
 *            column, read by that column's chunk reader (column.c), so a
 *            batch never spans two row groups and only the pages a batch
 *            needs are decompressed
 *
 * The reader cannot split: a column chunk's pages hold no row offsets, so
 * a morsel could not start mid-chunk without decoding what comes before.
 * The scan reads it serially and runs the rest of the plan on the pool
 * (lib/exec/op_scan.c).
 *
 * Types that the plan asks to be wider than the file's (a column that is
 * int64 here and float64 in another input, or --schema) are widened per
 * batch (convert.c, pq_widen): int64 to float64, anything to string; any
 * other --schema type for a Parquet column is a usage error.
 */
#include "parquet.h"
#include "../infer.h"

#include <stdio.h>

typedef struct PqReader {
    TlReader base;
    TlBuf *input;
    char *name;              /* for messages, escaped */
    PqFileMeta meta;
    PqLeaf *leaves;
    int n_leaves, n_chunks;
    TlSchema schema;         /* every column, as batches give it */
    TlSchema proj_schema;
    int *proj;               /* schema column of each batch column */
    int n_proj;
    int rg;                  /* the row group being read */
    int64_t rg_done;         /* its rows read */
    PqCol **cols;            /* its column readers, one per batch column */
    PqNest **nests;          /* or, for a nested column, its reader */
    bool cols_open;
    PqCodecs *codecs;
    int64_t pad;             /* PqChunkRef.pad for this file's writer */
    uint64_t data_end;       /* the footer's start */
    int64_t max_rows;        /* rows per batch (the run's tuning) */
} PqReader;

static const TlSchema *pq_schema(const TlReader *base)
{
    return &((const PqReader *)base)->schema;
}

static void close_cols(PqReader *r)
{
    for (int j = 0; r->cols && j < r->n_proj; j++) {
        pq_col_free(r->cols[j]);
        pq_nest_free(r->nests[j]);
        r->cols[j] = NULL;
        r->nests[j] = NULL;
    }
    r->cols_open = false;
}

static TlStatus unsupported(const PqReader *r, int i, TlError *err)
{
    return tl_error(err, TL_ERR_DATA, "%s: column %s: %s", r->name,
                    tl_quote_name(r->schema.fields[i].name).s, r->leaves[i].unsupported);
}

static TlStatus pq_project(TlReader *base, const int *cols, int n_cols, TlError *err)
{
    PqReader *r = (PqReader *)base;
    int *proj = tl_malloc((size_t)(n_cols ? n_cols : 1) * sizeof *proj);
    PqCol **pc = tl_calloc((size_t)(n_cols ? n_cols : 1), sizeof *pc);
    PqNest **pn = tl_calloc((size_t)(n_cols ? n_cols : 1), sizeof *pn);
    TlSchema ps = {0};
    TlStatus st = proj && pc && pn ? TL_OK : tl_error_oom(err);
    for (int j = 0; st == TL_OK && j < n_cols; j++) {
        proj[j] = cols[j];
        if (r->leaves[cols[j]].unsupported) st = unsupported(r, cols[j], err);
        else st = tl_schema_add(&ps, r->schema.fields[cols[j]].name,
                                r->schema.fields[cols[j]].type, err);
    }
    if (st != TL_OK) {
        tl_free(proj);
        tl_free(pc);
        tl_free(pn);
        tl_schema_free(&ps);
        return st;
    }
    close_cols(r);
    tl_free(r->proj);
    tl_free(r->cols);
    tl_free(r->nests);
    tl_schema_free(&r->proj_schema);
    r->proj = proj;
    r->cols = pc;
    r->nests = pn;
    r->n_proj = n_cols;
    r->proj_schema = ps;
    return TL_OK;
}

/* Whether column chunk cc (of column col) can be read. */
static TlStatus chunk_ok(const PqReader *r, const PqColumnChunk *cc, const char *col,
                         TlError *err)
{
    if (cc->encrypted)
        return tl_error(err, TL_ERR_DATA, "%s: column %s, row group %d: encrypted columns "
                        "are not supported", r->name, tl_quote_name(col).s, r->rg);
    if (cc->has_file_path)
        return tl_error(err, TL_ERR_DATA, "%s: column %s, row group %d: the column's data "
                        "lies in another file, which is not supported", r->name,
                        tl_quote_name(col).s, r->rg);
    if (!cc->has_meta)
        return tl_error(err, TL_ERR_DATA, "%s: corrupt Parquet footer: column %s, row "
                        "group %d has no metadata", r->name, tl_quote_name(col).s, r->rg);
    return TL_OK;
}

/* Column readers for the projected columns of row group r->rg. */
static TlStatus open_cols(PqReader *r, TlError *err)
{
    const PqRowGroup *g = &r->meta.rgs[r->rg];
    for (int j = 0; j < r->n_proj; j++) {
        const PqLeaf *l = &r->leaves[r->proj[j]];
        const char *col = r->schema.fields[r->proj[j]].name;
        PqChunkRef ref;
        memset(&ref, 0, sizeof ref);
        if (l->conv == PQ_CV_JSON)
            for (int s = 0; s < l->n_subs; s++)
                TL_TRY(chunk_ok(r, &g->cols[l->subs[s].chunk], col, err));
        else
            TL_TRY(chunk_ok(r, &g->cols[l->chunk], col, err));
        ref.input = r->input;
        ref.name = r->name;
        ref.col_name = col;
        ref.leaf = l;
        ref.chunk = &g->cols[l->chunk];
        ref.rg = r->rg;
        ref.rows = g->num_rows;
        ref.codecs = r->codecs;
        ref.pad = r->pad;
        ref.data_end = r->data_end;
        if (l->conv == PQ_CV_JSON) TL_TRY(pq_nest_open(&ref, g->cols, &r->nests[j], err));
        else TL_TRY(pq_col_open(&ref, &r->cols[j], err));
    }
    r->cols_open = true;
    return TL_OK;
}

static TlStatus pq_next(TlReader *base, TlBatch **out, TlError *err)
{
    PqReader *r = (PqReader *)base;
    TlBatch *b;
    int64_t n;
    *out = NULL;
    for (;;) {
        if (r->rg >= r->meta.n_rgs) return TL_OK;
        if (r->rg_done < r->meta.rgs[r->rg].num_rows) break;
        close_cols(r);
        r->rg++;
        r->rg_done = 0;
    }
    if (!r->cols_open) TL_TRY(open_cols(r, err));
    n = r->meta.rgs[r->rg].num_rows - r->rg_done;
    if (n > r->max_rows) n = r->max_rows;
    b = tl_batch_new(&r->proj_schema, r->n_proj, n);
    if (!b) return tl_error_oom(err);
    for (int j = 0; j < r->n_proj; j++) {
        TlArray *a = NULL;
        TlType want = r->proj_schema.fields[j].type;
        TlStatus st = r->nests[j] ? pq_nest_read(r->nests[j], n, &a, err)
                                  : pq_col_read(r->cols[j], n, &a, err);
        b->cols[j] = a; /* the batch frees it on any failure below */
        if (st == TL_OK && r->nests[j] && r->rg_done + n == r->meta.rgs[r->rg].num_rows)
            st = pq_nest_end(r->nests[j], err);
        if (st == TL_OK && a->type != want) {
            b->cols[j] = pq_widen(a, want);
            tl_array_release(a);
            if (!b->cols[j]) st = tl_error_oom(err);
        }
        if (st != TL_OK) {
            tl_batch_free(b);
            return st;
        }
        r->base.stats.converted[r->proj[j]] += n;
        r->base.stats.bytes += r->nests[j] ? pq_nest_bytes(r->nests[j])
                                           : pq_col_bytes(r->cols[j]);
    }
    r->rg_done += n;
    r->base.stats.rows += n;
    r->base.stats.batches++;
    *out = b;
    return TL_OK;
}

static void pq_close(TlReader *base)
{
    PqReader *r = (PqReader *)base;
    close_cols(r);
    tl_free(r->cols);
    tl_free(r->nests);
    tl_free(r->proj);
    tl_schema_free(&r->proj_schema);
    tl_schema_free(&r->schema);
    pq_leaves_free(r->leaves, r->n_leaves);
    pq_meta_free(&r->meta);
    pq_codecs_free(r->codecs);
    tl_buf_release(r->input);
    tl_free(r->name);
    tl_free(r->base.stats.converted);
    tl_free(r);
}

static const TlReaderOps pq_ops = {
    .schema = pq_schema,
    .project = pq_project,
    .next = pq_next,
    .close = pq_close,
};

/* The type column i is read as: the file's, unless --schema or the run's
 * hints want it wider. */
static TlStatus decide_type(PqReader *r, int i, const TlReadOptions *opt, TlTypeHints *hints,
                            TlError *err)
{
    TlField *f = &r->schema.fields[i];
    TlType have = r->leaves[i].type;
    if (r->leaves[i].unsupported) return TL_OK;
    if (opt->schema) {
        int k = tl_fixed_find(opt->schema, f->name);
        if (k >= 0) {
            TlType t = opt->schema->fields[k].type;
            if (t != have && t != TL_TSTRING && have != TL_TNULL &&
                !(have == TL_TINT64 && t == TL_TFLOAT64))
                return tl_error(err, TL_ERR_USAGE, "--schema: column %s of %s is %s in the "
                                "Parquet file and cannot be read as %s (use cast)",
                                tl_quote_name(f->name).s, r->name, tl_type_name(have),
                                tl_type_name(t));
            f->type = t;
            return TL_OK;
        }
    }
    if (hints) {
        int h = tl_schema_find(&hints->cols, f->name);
        if (h >= 0) {
            TlType t = hints->cols.fields[h].type;
            if (t == TL_TSTRING || have == TL_TNULL || (have == TL_TINT64 && t == TL_TFLOAT64))
                f->type = t;
        }
    }
    return TL_OK;
}

/* Whether the writer is parquet-mr before 1.2.9, which left the dictionary
 * page header out of a column chunk's size (IMPALA-694, PARQUET-816): its
 * chunks may run up to 100 bytes longer than they say, as Arrow's reader
 * allows.  A parquet-mr without a version counts as old. */
static bool old_parquet_mr(const PqStr *by)
{
    static const char tag[] = "parquet-mr";
    int v[3] = {0, 0, 0}, k = 0;
    size_t i = sizeof tag - 1;
    if (by->n < i || memcmp(by->p, tag, i) != 0) return false;
    while (i < by->n && (by->p[i] < '0' || by->p[i] > '9')) {
        if (by->p[i] == '(') return true; /* "parquet-mr (build ...)": no version */
        i++;
    }
    if (i == by->n) return true;
    for (; i < by->n && k < 3; i++) {
        if (by->p[i] >= '0' && by->p[i] <= '9') v[k] = v[k] * 10 + (by->p[i] - '0');
        else if (by->p[i] == '.') k++;
        else break;
    }
    return v[0] < 1 || (v[0] == 1 && (v[1] < 2 || (v[1] == 2 && v[2] < 9)));
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static TlStatus open_file(PqReader *r, const char *path, const TlReadOptions *opt,
                          TlTypeHints *hints, TlError *err)
{
    const uint8_t *d;
    size_t size;
    uint32_t flen;
    TL_TRY(tl_input_load(opt->ctx, path, &r->input, err));
    r->base.input = r->input; /* format.c checks that a mapped file did not shrink */
    d = r->input->data;
    size = r->input->size;
    if (size >= 4 && memcmp(d, "PAR1", 4) != 0 && memcmp(d, "PARE", 4) != 0)
        return tl_error(err, TL_ERR_DATA, "%s: not a Parquet file (it does not start with "
                        "PAR1)", r->name);
    if (size < 12)
        return tl_error(err, TL_ERR_DATA, "%s: not a Parquet file (%zu bytes, too short for "
                        "one)", r->name, size);
    if (memcmp(d + size - 4, "PARE", 4) == 0)
        return tl_error(err, TL_ERR_DATA, "%s: encrypted Parquet files are not supported",
                        r->name);
    if (memcmp(d + size - 4, "PAR1", 4) != 0)
        return tl_error(err, TL_ERR_DATA, "%s: not a Parquet file, or a truncated one (it "
                        "does not end with PAR1)", r->name);
    flen = le32(d + size - 8);
    if (flen > size - 12)
        return tl_error(err, TL_ERR_DATA, "%s: corrupt Parquet file: its footer length (%u "
                        "bytes) is past the start of the file (%zu bytes)", r->name, flen, size);
    TL_TRY(pq_meta_decode(d + size - 8 - flen, flen, size - 8 - flen, r->name, &r->meta, err));
    /* an encrypted file with a plaintext footer: its columns that are not
     * encrypted read, the others are refused when a pipeline reads them */
    r->data_end = size - 8 - flen;
    r->pad = old_parquet_mr(&r->meta.created_by) ? 100 : 0;
    TL_TRY(pq_schema_build(&r->meta, tl_input_name(path), opt->quiet, &r->leaves,
                           &r->n_leaves, &r->n_chunks, &r->schema, err));
    for (int g = 0; g < r->meta.n_rgs; g++)
        if (r->meta.rgs[g].n_cols != r->n_chunks)
            return tl_error(err, TL_ERR_DATA, "%s: corrupt Parquet footer: row group %d has %d "
                            "column chunks, the schema %d columns", r->name, g,
                            r->meta.rgs[g].n_cols, r->n_chunks);
    for (int i = 0; i < r->n_leaves; i++) TL_TRY(decide_type(r, i, opt, hints, err));
    return TL_OK;
}

TlStatus tl_parquet_reader_open(const char *path, const TlReadOptions *opt,
                                TlTypeHints *hints, TlReader **out, TlError *err)
{
    static const TlReadOptions defaults = {0};
    PqReader *r;
    int *all = NULL;
    TlStatus st;
    *out = NULL;
    if (!opt) opt = &defaults;
    r = tl_calloc(1, sizeof *r);
    if (!r) return tl_error_oom(err);
    r->base.ops = &pq_ops;
    r->base.types_final = true; /* the schema's types, not the rows' */
    r->max_rows = tl_ctx_batch_rows(opt->ctx);
    r->name = tl_strdup(tl_escape_name(tl_input_name(path)).s);
    st = r->name ? pq_codecs_new(&r->codecs, err) : tl_error_oom(err);
    if (st == TL_OK) st = open_file(r, path, opt, hints, err);
    if (st == TL_OK) {
        r->base.stats.converted = tl_calloc((size_t)r->n_leaves + 1, sizeof(int64_t));
        all = tl_malloc(((size_t)r->n_leaves + 1) * sizeof *all);
        if (!r->base.stats.converted || !all) st = tl_error_oom(err);
    }
    /* every column until the plan projects: unsupported ones are left out
     * here and refused when a projection names them */
    int n_all = 0;
    for (int i = 0; st == TL_OK && i < r->n_leaves; i++)
        if (!r->leaves[i].unsupported) all[n_all++] = i;
    if (st == TL_OK) st = pq_project(&r->base, all, n_all, err);
    tl_free(all);
    if (st != TL_OK) {
        pq_close(&r->base);
        return st;
    }
    *out = &r->base;
    return TL_OK;
}
