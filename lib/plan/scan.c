/*
 * scan.c -- the plan's scan node: its inputs, what planning learns of them,
 * and the union of their columns.
 *
 * Every input is opened once here for its columns and the types its first
 * rows give, and closed again unless it cannot be opened twice (a pipe,
 * standard input) or is among the first few of its scan: the scan
 * (lib/exec/op_scan.c) opens the others when it reaches them.  What is kept
 * per input is its path, its hints and a shape (plan.h, TlPlanShape): the
 * columns of its header, shared with the inputs before it that have the
 * same, so a glob of 100,000 files of one header plans one shape, one
 * union step and one map, and holds a few hundred bytes a file.
 */
#include "plan.h"
#include "../../formats/infer.h"

#include <string.h>
#include <sys/stat.h>

/* The union's type of a column of types a and b (man/tally.1, INPUTS). */
static TlType merge_type(TlType a, TlType b)
{
    if (a == b || b == TL_TNULL) return a;
    if (a == TL_TNULL) return b;
    if ((a == TL_TINT64 && b == TL_TFLOAT64) || (a == TL_TFLOAT64 && b == TL_TINT64))
        return TL_TFLOAT64;
    return TL_TSTRING;
}

/* Readers a scan keeps open from planning besides those of inputs that
 * cannot be opened twice: a run of one or a few files opens each once, a
 * glob of thousands holds no more than this many readers. */
#define KEEP_OPEN 8

/* The shape of columns rs among this scan's (from shape0 on): one of the
 * last few when it has the same columns (a glob's files mostly share one
 * header), else a new one. */
static TlStatus find_shape(TlPlan *p, int shape0, const TlSchema *rs, int *out,
                           TlError *err)
{
    TlPlanShape *sh;
    for (int k = p->n_shapes - 1; k >= shape0 && k >= p->n_shapes - 8; k--)
        if (tl_schema_same(&p->shapes[k].cols, rs)) {
            *out = k;
            return TL_OK;
        }
    if (p->n_shapes == p->cap_shapes) {
        int nc = p->cap_shapes ? p->cap_shapes * 2 : 4;
        TlPlanShape *v = tl_realloc(p->shapes, (size_t)nc * sizeof *v);
        if (!v) return tl_error_oom(err);
        p->shapes = v;
        p->cap_shapes = nc;
    }
    sh = &p->shapes[p->n_shapes];
    memset(sh, 0, sizeof *sh);
    p->n_shapes++;
    *out = p->n_shapes - 1;
    return tl_schema_copy(&sh->cols, rs, err);
}

/* Whether the reader of path may stay open after planning: it must when
 * its input cannot be opened a second time (standard input, a pipe);
 * otherwise only the first few of a scan do. */
static bool keep_open(const char *path, int k)
{
    struct stat sb;
    if (k < KEEP_OPEN || strcmp(path, "-") == 0) return true;
    return stat(path, &sb) == 0 && !S_ISREG(sb.st_mode);
}

/* The scan of inputs [first, first + n_in) read with `read`.  Each input
 * is opened for its columns and types (with its hints), noted as a shape,
 * and closed unless keep_open; the union is made over the shapes, in order
 * of first appearance, which is the inputs' order. */
TlStatus tl_plan_build_scan(TlPlan *p, const TlPlanOptions *o, int first, int n_in,
                            const TlReadOptions *read, TlPlanId *out, TlError *err)
{
    TlSchema *u;
    TlPlanId id;
    int end = first + n_in, shape0 = p->n_shapes;

    if (n_in < 1 || end > p->n_inputs)
        return tl_error(err, TL_ERR_USAGE, "no input given");
    for (int i = first; i < end; i++) {
        TlPlanInput *in = &p->inputs[i];
        TlReader *r = NULL;
        in->display = tl_strdup(o->display[i]);
        in->path = tl_strdup(o->paths[i]);
        in->read = read;
        in->hints = &o->hints[i];
        if (!in->display || !in->path) return tl_error_oom(err);
        TL_TRY(tl_reader_open(in->path, read, in->hints, &r, err));
        in->can_late = tl_reader_can_split(r) && tl_reader_can_late(r);
        in->types_final = tl_reader_types_final(r);
        in->more = tl_reader_may_find_columns(r);
        if (find_shape(p, shape0, tl_reader_schema(r), &in->shape, err) != TL_OK) {
            tl_reader_close(r);
            return err->code;
        }
        if (keep_open(in->path, i - first)) in->reader = r;
        else tl_reader_close(r);
    }

    /* The union.  The first input keeps all its columns (even repeated
     * names); later ones match by name. */
    TL_TRY(tl_plan_schema_new(p, &u, err));
    for (int k = shape0; k < p->n_shapes; k++) {
        const TlSchema *rs = &p->shapes[k].cols;
        for (int c = 0; c < rs->n_fields; c++) {
            int j = k == shape0 ? -1 : tl_schema_find(u, rs->fields[c].name);
            if (j < 0)
                TL_TRY(tl_schema_add(u, rs->fields[c].name, rs->fields[c].type,
                                     err));
            else
                u->fields[j].type = merge_type(u->fields[j].type,
                                               rs->fields[c].type);
        }
    }

    /* Where the scan's columns sit in each shape; the first input's shape
     * in place (its repeated names too), the others by name. */
    for (int k = shape0; k < p->n_shapes; k++) {
        TlPlanShape *sh = &p->shapes[k];
        sh->map = tl_malloc((size_t)(u->n_fields ? u->n_fields : 1) * sizeof(int));
        if (!sh->map) return tl_error_oom(err);
        for (int j = 0; j < u->n_fields; j++)
            sh->map[j] = k > shape0 ? tl_schema_find(&sh->cols, u->fields[j].name)
                         : j < sh->cols.n_fields ? j : -1;
    }

    /* Inputs narrower than the union read it through hints: those kept
     * open are opened again now, the others will be by the scan. */
    for (int i = first; n_in > 1 && i < end; i++) {
        TlPlanInput *in = &p->inputs[i];
        const TlPlanShape *sh = &p->shapes[in->shape];
        bool reopen = false;
        for (int j = 0; j < u->n_fields; j++) {
            int c = sh->map[j];
            TlType t = c >= 0 ? sh->cols.fields[c].type : TL_TNULL;
            if (t != TL_TNULL && t != u->fields[j].type) {
                TL_TRY(tl_hint_set(in->hints, sh->cols.fields[c].name,
                                   u->fields[j].type, err));
                reopen = true;
            }
        }
        if (!reopen || !in->reader) continue;
        tl_reader_close(in->reader);
        in->reader = NULL;
        TL_TRY(tl_reader_open(in->path, read, in->hints, &in->reader, err));
    }

    if (first == 0) {
        p->converted = tl_calloc((size_t)(u->n_fields ? u->n_fields : 1),
                                 sizeof *p->converted);
        if (!p->converted) return tl_error_oom(err);
    }
    TL_TRY(tl_plan_push(p, TL_PLAN_SCAN, TL_NO_ID, &id, err));
    tl_plan_node(p, id)->schema = u;
    tl_plan_node(p, id)->in0 = (uint32_t)first;
    tl_plan_node(p, id)->n_in = (uint32_t)n_in;
    *out = id;
    return TL_OK;
}

/* See plan.h.  An input whose columns come from a sample (NDJSON: the
 * first batch) may hold the column further on: the inputs planned so far
 * that may find columns scan for it (opened again when the plan closed
 * them); when one is found the hints have it and the run plans again
 * (TL_ERR_RESTART), else the error stands.  A scan is made once a run
 * (the hints remember it), so a misspelt name costs one read of the
 * input, and only when a reader's sample did not hold all of it. */
TlStatus tl_plan_more_columns(TlPlan *p, TlStatus st, TlError *err)
{
    bool any = false;
    for (int i = 0; i < p->n_inputs; i++) {
        TlPlanInput *in = &p->inputs[i];
        TlReader *r = in->reader;
        bool found = false;
        TlError e2;
        TlStatus s2;
        if (!in->path || !in->more || in->hints->all_columns) continue;
        if (!r && tl_reader_open(in->path, in->read, in->hints, &r, &e2) != TL_OK) {
            *err = e2;
            return e2.code;
        }
        s2 = tl_reader_more_columns(r, &found, &e2);
        if (r != in->reader) tl_reader_close(r);
        if (s2 != TL_OK) {
            *err = e2;
            return e2.code;
        }
        any = any || found;
    }
    if (!any) return st;
    return tl_error(err, TL_ERR_RESTART, "a step names a column first seen after the "
                    "first batch; planning again");
}
