/*
 * eval.c -- run a resolved expression over a batch, one kernel call per
 * node.
 *
 * The walk is a post-order recursion over the expression arena.  Each node
 * yields a Val: an owned array plus a flag saying whether it is a SCALAR (a
 * length-1 array standing for every row).  Literals are scalars, and an
 * operator whose arguments are all scalars runs its kernel over one row and
 * stays a scalar, so `v3 > 50` compares a column with one value instead of
 * a materialized column of 50s, and `1 + 2` is computed once per batch.
 * tl_eval broadcasts a scalar root to the batch length at the very end.
 *
 * Resolve (lib/plan/resolve.c) has already made every argument the type its
 * operator wants, so the only switch here is on the node's operator and its
 * argument types, once per node and batch; the kernels then switch once on
 * the type and run a typed loop (kernels/core_kernels.h, kernels/fn.h).
 *
 * Lazy branches.  if, case and coalesce evaluate a branch only on the rows
 * that reach it, so `case when x > 0 then sqrt(x) end` cannot fail on a
 * negative x:
 *
 *     rows of the batch        0 1 2 3 4 5
 *     when x > 0               T F T N F T   -> then on rows {0,2,5}
 *     (undecided rows)           1   3 4     -> next when / else on {1,3,4}
 *
 * A branch runs on a sub-batch holding only the rows that reach it and only
 * the columns the branch references (tl_array_take), and the pieces are put
 * back in row order by tl_k_scatter.  Every row list is kept relative to
 * the batch being evaluated, so nested conditionals compose.  When a piece
 * covers every row, it is the result as is (no take, no scatter).  `and`
 * and `or` are lazy the same way when their right side can fail (integer
 * arithmetic, casts, functions): it only runs where the left side does not
 * already decide the row (not false for and, not true for or), which is
 * what DuckDB's progressive filter evaluation gives.
 *
 * Errors.  A kernel that fails on data reports the failing row; the message
 * is written here, naming the values and pointing at the node:
 *
 *   integer overflow in "a * b": 9223372036854775807 * 2
 *     --with: c = a * b
 *                 ^^^^^
 */
#include "eval.h"
#include "../core/text.h"
#include "../../kernels/core_kernels.h"
#include "../../kernels/fn.h"
#include "../../kernels/fn_regex.h"

#include <stdarg.h>
#include <stdio.h>

typedef struct Val {
    TlArray *a;   /* owned */
    bool scalar;  /* a has length 1 and stands for every row */
} Val;

typedef struct Ev {
    const TlExprArena *ea;
    TlError *err;
    TlEvalMemo *memo;   /* NULL: no common-subexpression cache */
} Ev;

static TlStatus eval(Ev *ev, TlExprId id, const TlBatch *in, Val *out);

static inline const TlExpr *node(const Ev *ev, TlExprId id)
{
    return tl_ea_node(ev->ea, id);
}

static inline TlExprId arg(const Ev *ev, TlExprId id, uint32_t i)
{
    return tl_ea_arg(ev->ea, node(ev, id), i);
}

static inline TlDatum datum(const Val *v)
{
    TlDatum d;
    d.array = v->a;
    d.scalar = v->scalar;
    return d;
}

static void drop(Val *v)
{
    tl_array_release(v->a);
    v->a = NULL;
}

/* ------------------------------------------------------------ messages */

/* Room for one value in a message (a tl_quote result). */
#define VAL_MAX sizeof(TlQuoted)

/* Row i of a as text for a message: strings quoted (tl_quote: escaped, cut
 * when long), null as null. */
static void fmt_value(const TlArray *a, int64_t i, char *buf, size_t cap)
{
    char tmp[TL_FMT_MAX];
    if (!tl_array_valid(a, i)) {
        snprintf(buf, cap, "null");
        return;
    }
    switch (a->type) {
    case TL_TBOOL:
        snprintf(buf, cap, "%s", tl_array_bool(a, i) ? "true" : "false");
        return;
    case TL_TINT64: tl_fmt_i64(tl_array_i64(a)[i], tmp); break;
    case TL_TFLOAT64: tl_fmt_f64(tl_array_f64(a)[i], tmp); break;
    case TL_TDATE: tl_fmt_date(tl_array_i32(a)[i], tmp); break;
    case TL_TTIMESTAMP: tl_fmt_timestamp(tl_array_i64(a)[i], tmp); break;
    case TL_TTIMESTAMPTZ: tl_fmt_timestamptz(tl_array_i64(a)[i], tmp); break;
    case TL_TSTRING: {
        const TlView *v = &tl_array_views(a)[i];
        snprintf(buf, cap, "%s",
                 tl_quote((const char *)tl_view_ptr(v, a->data), tl_view_len(*v)).s);
        return;
    }
    default:
        snprintf(buf, cap, "null");
        return;
    }
    snprintf(buf, cap, "%s", tmp);
}

/* Value of v at batch row i. */
static void fmt_val(const Val *v, int64_t i, char *buf, size_t cap)
{
    fmt_value(v->a, v->scalar ? 0 : i, buf, cap);
}

/* The one column the expression id reads (its name), NULL when it reads
 * none or several: *seen carries the name met so far, *many whether a
 * second one was met. */
static void one_col(const TlExprArena *ea, TlExprId id, const char **seen, bool *many)
{
    const TlExpr *e = tl_ea_node(ea, id);
    if (e->kind == TL_X_COL) {
        if (*seen && strcmp(*seen, e->name) != 0) *many = true;
        *seen = e->name;
        return;
    }
    for (uint32_t i = 0; i < e->n_args && !*many; i++)
        one_col(ea, tl_ea_arg(ea, e, i), seen, many);
}

/* A TL_ERR_DATA error at node id: "<msg>", then the caret; err->col names
 * the one column the failing node reads (a value computed from several
 * columns names none), for the step that places the row. */
static TlStatus data_error(Ev *ev, TlExprId id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static TlStatus data_error(Ev *ev, TlExprId id, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    const TlExpr *e = node(ev, id);
    const char *col = NULL;
    bool many = false;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tl_error_at(ev->err, TL_ERR_DATA, ev->ea, e->src, e->start, e->len, "%s", msg);
    one_col(ev->ea, id, &col, &many);
    if (ev->err && !many) ev->err->col = col;
    return TL_ERR_DATA;
}

/* The source text of node id (cut at 60 bytes) into buf. */
static const char *node_text(Ev *ev, TlExprId id, char *buf, size_t cap)
{
    const TlExpr *e = node(ev, id);
    const char *s = "";
    uint32_t len = e->len;
    if (e->src < ev->ea->n_srcs) s = ev->ea->srcs[e->src].text + e->start;
    if (len > 60)
        snprintf(buf, cap, "%.57s...", s);
    else
        snprintf(buf, cap, "%.*s", (int)len, s);
    return buf;
}

/* "integer overflow in "a * b": 9223372036854775807 * 2" (binary) or
 * "...: -(-9223372036854775808)" (unary minus). */
static TlStatus overflow_error(Ev *ev, TlExprId id, const char *what,
                               const char *op, const Val *a, const Val *b,
                               int64_t row)
{
    char text[80], x[VAL_MAX], y[VAL_MAX];
    node_text(ev, id, text, sizeof text);
    fmt_val(a, row, x, sizeof x);
    if (!b) return data_error(ev, id, "%s in \"%s\": -(%s)", what, text, x);
    fmt_val(b, row, y, sizeof y);
    return data_error(ev, id, "%s in \"%s\": %s %s %s", what, text, x, op, y);
}

/* ------------------------------------------------------- sub-batches */

/* See eval.h. */
void tl_expr_mark_cols(const TlExprArena *ea, TlExprId id, bool *used, int n_cols)
{
    const TlExpr *e = tl_ea_node(ea, id);
    if (e->kind == TL_X_COL) {
        if (e->col >= 0 && e->col < n_cols) used[e->col] = true;
        return;
    }
    for (uint32_t i = 0; i < e->n_args; i++)
        tl_expr_mark_cols(ea, tl_ea_arg(ea, e, i), used, n_cols);
}

/* See eval.h. */
bool tl_expr_reads_from(const TlExprArena *ea, TlExprId id, int col)
{
    const TlExpr *e = tl_ea_node(ea, id);
    if (e->kind == TL_X_COL) return e->col >= col;
    for (uint32_t i = 0; i < e->n_args; i++)
        if (tl_expr_reads_from(ea, tl_ea_arg(ea, e, i), col)) return true;
    return false;
}

/* Evaluate id over rows[0..m) of `in` (a sorted subset; m == n_rows means
 * every row).  The result has m rows, or is a scalar. */
static TlStatus eval_on(Ev *ev, TlExprId id, const TlBatch *in,
                        const uint32_t *rows, int64_t m, Val *out)
{
    TlBatch sub;
    bool *used = NULL;
    TlStatus st = TL_OK;
    int c;
    if (m == in->n_rows || !rows) return eval(ev, id, in, out);
    sub.schema = in->schema;
    sub.n_rows = m;
    sub.n_cols = in->n_cols;
    sub.cols = tl_calloc((size_t)(in->n_cols > 0 ? in->n_cols : 1),
                         sizeof(TlArray *));
    used = tl_calloc((size_t)(in->n_cols > 0 ? in->n_cols : 1), sizeof(bool));
    if (!sub.cols || !used) {
        st = tl_error_oom(ev->err);
        goto done;
    }
    tl_expr_mark_cols(ev->ea, id, used, in->n_cols);
    for (c = 0; c < in->n_cols; c++) {
        if (!used[c] || !in->cols[c]) continue;
        sub.cols[c] = tl_array_take(in->cols[c], rows, m);
        if (!sub.cols[c]) {
            st = tl_error_oom(ev->err);
            goto done;
        }
    }
    st = eval(ev, id, &sub, out);
done:
    if (sub.cols)
        for (c = 0; c < in->n_cols; c++) tl_array_release(sub.cols[c]);
    tl_free(sub.cols);
    tl_free(used);
    return st;
}

/* A new identity row list [0, n). */
static uint32_t *identity(int64_t n)
{
    uint32_t *r = tl_malloc(sizeof(uint32_t) * (size_t)(n > 0 ? n : 1));
    int64_t i;
    if (r)
        for (i = 0; i < n; i++) r[i] = (uint32_t)i;
    return r;
}

/* The pieces of a lazily evaluated result. */
typedef struct Parts {
    TlKPart *p;
    uint32_t **owned;  /* rows lists to free */
    Val *vals;
    int n, cap;
} Parts;

static bool parts_add(Parts *ps, Val v, uint32_t *rows, int64_t m)
{
    if (ps->n == ps->cap) {
        int nc = ps->cap ? ps->cap * 2 : 4;
        TlKPart *p = tl_realloc(ps->p, sizeof(TlKPart) * (size_t)nc);
        uint32_t **o;
        Val *vs;
        if (p) ps->p = p;
        o = p ? tl_realloc(ps->owned, sizeof(uint32_t *) * (size_t)nc) : NULL;
        if (o) ps->owned = o;
        vs = o ? tl_realloc(ps->vals, sizeof(Val) * (size_t)nc) : NULL;
        if (!vs) return false;
        ps->vals = vs;
        ps->cap = nc;
    }
    ps->vals[ps->n] = v;
    ps->owned[ps->n] = rows;
    ps->p[ps->n].value = datum(&v);
    ps->p[ps->n].rows = rows;
    ps->p[ps->n].n_rows = m;
    ps->n++;
    return true;
}

static void parts_free(Parts *ps)
{
    int i;
    for (i = 0; i < ps->n; i++) {
        drop(&ps->vals[i]);
        tl_free(ps->owned[i]);
    }
    tl_free(ps->p);
    tl_free(ps->owned);
    tl_free(ps->vals);
}

/* Assemble the parts into the n-row result of `type`.  A part covering
 * every row is the result itself. */
static TlStatus parts_finish(Ev *ev, Parts *ps, TlType type, int64_t n,
                             Val *out)
{
    int i;
    for (i = ps->n - 1; i >= 0; i--) {
        if (ps->p[i].n_rows == n) { /* covers all: later parts are empty */
            bool later = false;
            int j;
            for (j = i + 1; j < ps->n; j++) later |= ps->p[j].n_rows > 0;
            if (later || ps->vals[i].a->type != type) break;
            *out = ps->vals[i];
            ps->vals[i].a = NULL;
            ps->p[i].value.array = NULL;
            return TL_OK;
        }
    }
    out->scalar = false;
    return tl_k_scatter(type, n, ps->p, ps->n, &out->a, ev->err);
}

/* ------------------------------------------------------- conditionals */

/* case when c1 then v1 ... [else e] end; if(c, a, b) is the same with one
 * pair (args c, a, b and an else). */
static TlStatus eval_case(Ev *ev, TlExprId id, const TlBatch *in,
                          uint32_t n_pairs, bool has_else, Val *out)
{
    Parts ps = {0};
    int64_t n = in->n_rows, n_rem = n;
    uint32_t *rem = NULL; /* NULL: every row */
    TlStatus st = TL_OK;
    TlType type = (TlType)node(ev, id)->type;
    uint32_t k;
    for (k = 0; k < n_pairs && n_rem > 0; k++) {
        Val cond = {0}, v = {0};
        TlDatum cd;
        uint32_t *t = NULL, *f = NULL;
        int64_t n_t, n_f;
        st = eval_on(ev, arg(ev, id, 2 * k), in, rem, n_rem, &cond);
        if (st != TL_OK) goto done;
        cd = datum(&cond);
        st = tl_k_partition(&cd, n_rem, &t, &n_t, &f, &n_f, ev->err);
        drop(&cond);
        if (st != TL_OK) goto done;
        if (n_t > 0) {
            if (rem) tl_k_sel_compose(rem, t, n_t, t);
            st = eval_on(ev, arg(ev, id, 2 * k + 1), in, t, n_t, &v);
            if (st == TL_OK && !parts_add(&ps, v, t, n_t)) {
                drop(&v);
                st = tl_error_oom(ev->err);
            }
            if (st != TL_OK) {
                tl_free(t);
                tl_free(f);
                goto done;
            }
        }
        if (rem && f) tl_k_sel_compose(rem, f, n_f, f);
        tl_free(rem);
        rem = f;
        n_rem = n_f;
    }
    if (n_rem > 0 && has_else) {
        Val v = {0};
        if (!rem && !(rem = identity(n))) {
            st = tl_error_oom(ev->err);
            goto done;
        }
        st = eval_on(ev, arg(ev, id, node(ev, id)->n_args - 1), in, rem, n_rem,
                     &v);
        if (st != TL_OK) goto done;
        if (!parts_add(&ps, v, rem, n_rem)) {
            drop(&v);
            st = tl_error_oom(ev->err);
            goto done;
        }
        rem = NULL;
    }
    st = parts_finish(ev, &ps, type, n, out);
done:
    tl_free(rem);
    parts_free(&ps);
    return st;
}

/* coalesce(a1, ..., ak): a(j+1) runs only on the rows aj left null. */
static TlStatus eval_coalesce(Ev *ev, TlExprId id, const TlBatch *in,
                              Val *out)
{
    Parts ps = {0};
    int64_t n = in->n_rows, n_rem = n;
    uint32_t *rem = NULL, k, n_args = node(ev, id)->n_args;
    TlStatus st = TL_OK;
    TlType type = (TlType)node(ev, id)->type;
    for (k = 0; k < n_args && n_rem > 0; k++) {
        Val v = {0};
        TlDatum d;
        uint32_t *nulls = NULL;
        int64_t n_null = 0;
        st = eval_on(ev, arg(ev, id, k), in, rem, n_rem, &v);
        if (st != TL_OK) goto done;
        d = datum(&v);
        if (k + 1 < n_args)
            st = tl_k_null_rows(&d, true, n_rem, &nulls, &n_null, ev->err);
        if (st != TL_OK) {
            drop(&v);
            goto done;
        }
        if (!rem && !(rem = identity(n))) {
            drop(&v);
            tl_free(nulls);
            st = tl_error_oom(ev->err);
            goto done;
        }
        if (!parts_add(&ps, v, rem, n_rem)) {
            drop(&v);
            tl_free(nulls);
            st = tl_error_oom(ev->err);
            goto done;
        }
        if (nulls) tl_k_sel_compose(rem, nulls, n_null, nulls);
        rem = nulls; /* the previous list now belongs to its part */
        n_rem = n_null;
    }
    st = parts_finish(ev, &ps, type, n, out);
done:
    tl_free(rem);
    parts_free(&ps);
    return st;
}

/* Whether evaluating id can fail on data (so a lazy and/or is worth it). */
static bool may_fail(const Ev *ev, TlExprId id)
{
    const TlExpr *e = node(ev, id);
    uint32_t i;
    if (e->kind == TL_X_CAST && !(e->flags & TL_XF_TRY) &&
        e->lit_type != TL_TSTRING)
        return true;
    if (e->kind == TL_X_CALL) {
        TlOp op = (TlOp)e->op;
        if ((op == TL_OP_ADD || op == TL_OP_SUB || op == TL_OP_MUL ||
             op == TL_OP_IDIV || op == TL_OP_NEG) &&
            e->type != TL_TFLOAT64)
            return true;
        if (op >= TL_OP_ABS && op <= TL_OP_LAST_KERNEL_FN) return true;
    }
    for (i = 0; i < e->n_args; i++)
        if (may_fail(ev, arg(ev, id, i))) return true;
    return false;
}

/* a and b / a or b, evaluating b only where a does not decide the row when
 * b may fail. */
static TlStatus eval_and_or(Ev *ev, TlExprId id, const TlBatch *in,
                            bool is_and, Val *out)
{
    Val a = {0}, b = {0}, fill = {0};
    TlDatum da, db;
    uint32_t *dec = NULL, *rest = NULL;
    int64_t n = in->n_rows, n_dec = 0, n_rest = 0;
    TlStatus st;
    TL_TRY(eval(ev, arg(ev, id, 0), in, &a));
    da = datum(&a);
    if (!a.scalar && n > 0 && may_fail(ev, arg(ev, id, 1))) {
        /* the rows a decides: false for and, true for or */
        Val dv = {0};
        TlDatum dd;
        if (is_and) {
            st = tl_k_not(&da, n, &dv.a, ev->err);
            if (st != TL_OK) goto done;
        } else {
            dv.a = tl_array_retain(a.a);
        }
        dd = datum(&dv);
        st = tl_k_partition(&dd, n, &dec, &n_dec, &rest, &n_rest, ev->err);
        drop(&dv);
        if (st != TL_OK) goto done;
    }
    if (n_dec == 0) {
        st = eval(ev, arg(ev, id, 1), in, &b);
    } else {
        Parts ps = {0};
        Val part = {0};
        /* decided rows: b = a's value there (false / true) is harmless */
        TlBuf *fv = tl_k_bits_buf(tl_k_bits_new(1, !is_and), 1);
        fill.a = fv ? tl_array_new(TL_TBOOL, 1, fv, NULL, 0, NULL, 0) : NULL;
        fill.scalar = true;
        if (!fill.a) {
            st = tl_error_oom(ev->err);
            goto done;
        }
        st = n_rest > 0 ? eval_on(ev, arg(ev, id, 1), in, rest, n_rest, &part)
                        : TL_OK;
        if (st != TL_OK) goto done;
        if (!parts_add(&ps, fill, dec, n_dec)) {
            drop(&part);
            parts_free(&ps);
            st = tl_error_oom(ev->err);
            goto done;
        }
        fill.a = NULL;
        dec = NULL;
        if (n_rest > 0) {
            if (!parts_add(&ps, part, rest, n_rest)) {
                drop(&part);
                parts_free(&ps);
                st = tl_error_oom(ev->err);
                goto done;
            }
            rest = NULL;
        }
        st = tl_k_scatter(TL_TBOOL, n, ps.p, ps.n, &b.a, ev->err);
        parts_free(&ps);
    }
    if (st != TL_OK) goto done;
    db = datum(&b);
    {
        int64_t m = a.scalar && b.scalar ? 1 : n;
        out->scalar = a.scalar && b.scalar;
        st = is_and ? tl_k_and(&da, &db, m, &out->a, ev->err)
                    : tl_k_or(&da, &db, m, &out->a, ev->err);
    }
done:
    drop(&a);
    drop(&b);
    drop(&fill);
    tl_free(dec);
    tl_free(rest);
    return st;
}

/* ---------------------------------------------------------- operators */

static TlKCmp cmp_of(TlOp op)
{
    switch (op) {
    case TL_OP_EQ: return TL_K_EQ;
    case TL_OP_NE: return TL_K_NE;
    case TL_OP_LT: return TL_K_LT;
    case TL_OP_LE: return TL_K_LE;
    case TL_OP_GT: return TL_K_GT;
    default: return TL_K_GE;
    }
}

static TlKArith arith_of(TlOp op)
{
    switch (op) {
    case TL_OP_ADD: return TL_K_ADD;
    case TL_OP_SUB: return TL_K_SUB;
    case TL_OP_MUL: return TL_K_MUL;
    case TL_OP_DIV: return TL_K_DIV;
    case TL_OP_IDIV: return TL_K_IDIV;
    default: return TL_K_MOD;
    }
}

/* Apply Kleene not to *v in place when `negate`. */
static TlStatus maybe_not(Ev *ev, bool negate, int64_t m, Val *v)
{
    TlArray *r;
    TlDatum d;
    if (!negate) return TL_OK;
    d = datum(v);
    TL_TRY(tl_k_not(&d, m, &r, ev->err));
    tl_array_release(v->a);
    v->a = r;
    return TL_OK;
}

/* The pattern of a regexp call compiled at resolve (args[1] and the options
 * args[fa], both constants), or NULL. */
static const TlRegex *find_regex(const Ev *ev, const Val *args, int n_args,
                                 int fa, bool full)
{
    const TlArray *p = args[1].a, *f = n_args > fa ? args[fa].a : NULL;
    if (!args[1].scalar || p->type != TL_TSTRING || !tl_array_valid(p, 0) ||
        (f && (!args[fa].scalar || f->type != TL_TSTRING || !tl_array_valid(f, 0))))
        return NULL;
    const TlView *pv = tl_array_views(p), *fv = f ? tl_array_views(f) : NULL;
    return tl_ea_regex_lookup(
        ev->ea, (const char *)tl_view_ptr(&pv[0], p->data), tl_view_len(pv[0]),
        f ? (const char *)tl_view_ptr(&fv[0], f->data) : "",
        f ? tl_view_len(fv[0]) : 0, full);
}

/* A function of kernels/fn.h. */
static TlStatus eval_fn(Ev *ev, TlExprId id, const Val *args, int n_args,
                        int64_t m, Val *out)
{
    const char *name = tl_op_info((TlOp)node(ev, id)->op)->name;
    TlFnKernel k = tl_k_fn_by_name(name);
    TlDatum d[16];
    int64_t row = 0;
    TlStatus st;
    int i;
    if (!k || n_args > 16)
        return data_error(ev, id, "function %s is not available", name);
    for (i = 0; i < n_args; i++) d[i] = datum(&args[i]);
    ev->err->msg[0] = 0;
    int fa;
    bool allow_g, full;
    if (tl_k_regex_fn(name, &fa, &allow_g, &full))
        st = tl_k_regex_call(name, find_regex(ev, args, n_args, fa, full), d,
                             n_args, m, &out->a, &row, ev->err);
    else
        st = k(d, n_args, m, &out->a, &row, ev->err);
    if (st == TL_ERR_DATA) {
        char kmsg[256], text[80], vals[3 * VAL_MAX];
        size_t len = 0;
        snprintf(kmsg, sizeof kmsg, "%.200s",
                 ev->err->msg[0] ? ev->err->msg : "invalid argument");
        vals[0] = 0;
        for (i = 0; i < n_args && len < sizeof vals - VAL_MAX; i++) {
            char v[VAL_MAX];
            fmt_val(&args[i], row, v, sizeof v);
            len += (size_t)snprintf(vals + len, sizeof vals - len, "%s%s",
                                    i ? ", " : "", v);
        }
        return data_error(ev, id, "%s in \"%s\": %s(%s)", kmsg,
                          node_text(ev, id, text, sizeof text), name, vals);
    }
    return st;
}

/* A cast node. */
static TlStatus eval_cast(Ev *ev, TlExprId id, const TlBatch *in, Val *out)
{
    const TlExpr *e = node(ev, id);
    Val x = {0};
    int64_t bad = 0;
    TlStatus st;
    TlType to = (TlType)e->lit_type;
    bool try_ = (e->flags & TL_XF_TRY) != 0;
    TL_TRY(eval(ev, arg(ev, id, 0), in, &x));
    st = tl_cast_array(x.a, to, try_, &out->a, &bad, ev->err);
    out->scalar = x.scalar;
    if (st == TL_ERR_DATA) {
        char v[VAL_MAX];
        fmt_value(x.a, bad, v, sizeof v);
        st = data_error(ev, id, "cannot cast %s to %s", v, tl_type_name(to));
    } else if (st == TL_ERR_USAGE) {
        st = data_error(ev, id, "cannot cast %s to %s",
                        tl_type_name(x.a->type), tl_type_name(to));
    }
    drop(&x);
    return st;
}

/* A literal as a one-row array. */
static TlStatus eval_lit(Ev *ev, const TlExpr *e, Val *out)
{
    TlBuilder b;
    TlType t = (TlType)e->type;
    bool ok;
    out->scalar = true;
    if (e->lit_type == TL_TNULL || t == TL_TNULL) {
        out->a = tl_array_new_null(t, 1);
        return out->a ? TL_OK : tl_error_oom(ev->err);
    }
    tl_builder_init(&b, t);
    switch (t) {
    case TL_TBOOL: ok = tl_builder_append_bool(&b, e->v.b); break;
    case TL_TINT64:
    case TL_TTIMESTAMP:
    case TL_TTIMESTAMPTZ: ok = tl_builder_append_i64(&b, e->v.i); break;
    case TL_TFLOAT64: ok = tl_builder_append_f64(&b, e->v.f); break;
    case TL_TDATE: ok = tl_builder_append_i32(&b, e->v.d); break;
    default:
        ok = tl_builder_append_str(&b, e->v.str.s ? e->v.str.s : "",
                                   e->v.str.n);
        break;
    }
    out->a = ok ? tl_builder_finish(&b) : NULL;
    tl_builder_free(&b);
    return out->a ? TL_OK : tl_error_oom(ev->err);
}

/* Arithmetic: + - * / // % with date variants. */
static TlStatus eval_arith(Ev *ev, TlExprId id, TlOp op, Val *v, int64_t m,
                           Val *out)
{
    TlDatum a = datum(&v[0]), b = datum(&v[1]);
    TlType ta = v[0].a->type, tb = v[1].a->type;
    int64_t row = 0;
    TlStatus st;
    if (ta == TL_TDATE && tb == TL_TDATE)
        return tl_k_date_diff(&a, &b, m, &out->a, ev->err);
    if (tb == TL_TSTRING) { /* timestamp +- interval (resolve.c) */
        st = tl_k_add_interval(&a, &b, op == TL_OP_SUB, m, &out->a, &row,
                               ev->err);
        if (st == TL_OK && ta == TL_TTIMESTAMPTZ) /* an instant stays one */
            out->a->type = TL_TTIMESTAMPTZ;
        if (st == TL_ERR_DATA)
            return overflow_error(ev, id, "timestamp out of range",
                                  tl_op_info(op)->name, &v[0], &v[1], row);
        return st;
    }
    if (ta == TL_TDATE || tb == TL_TDATE) {
        bool a_date = ta == TL_TDATE;
        st = tl_k_date_add(a_date ? &a : &b, a_date ? &b : &a,
                           op == TL_OP_SUB, m, &out->a, &row, ev->err);
        if (st == TL_ERR_DATA)
            return overflow_error(ev, id, "date out of range",
                                  tl_op_info(op)->name, &v[0], &v[1], row);
        return st;
    }
    st = tl_k_arith(arith_of(op), &a, &b, m, &out->a, &row, ev->err);
    if (st == TL_ERR_DATA)
        return overflow_error(ev, id, "integer overflow", tl_op_info(op)->name,
                              &v[0], &v[1], row);
    return st;
}

/* Apply call id's operator to its evaluated arguments v[0..n_args) over m
 * rows.  Not inlined: eval_call recurses once per level of the tree, and
 * this part's locals (and what the compiler inlines into it) would enlarge
 * every level's frame. */
__attribute__((noinline)) static TlStatus apply_call(Ev *ev, TlExprId id,
                                                     Val *v, uint32_t n_args,
                                                     int64_t m, Val *out)
{
    const TlExpr *e = node(ev, id);
    TlOp op = (TlOp)e->op;
    TlDatum d[3];
    int64_t row = 0;
    bool negate = (e->flags & TL_XF_NOT) != 0;
    TlStatus st = TL_OK;
    uint32_t i;

    for (i = 0; i < n_args && i < 3; i++) d[i] = datum(&v[i]);
    switch (op) {
    case TL_OP_NOT:
        st = tl_k_not(&d[0], m, &out->a, ev->err);
        break;
    case TL_OP_EQ: case TL_OP_NE: case TL_OP_LT:
    case TL_OP_LE: case TL_OP_GT: case TL_OP_GE:
        st = tl_k_compare(cmp_of(op), &d[0], &d[1], m, &out->a, ev->err);
        break;
    case TL_OP_IS_NULL:
        st = tl_k_is_null(&d[0], negate, m, &out->a, ev->err);
        break;
    case TL_OP_BETWEEN: {
        TlArray *ge = NULL, *le = NULL;
        TlDatum x, y;
        st = tl_k_compare(TL_K_GE, &d[0], &d[1], m, &ge, ev->err);
        if (st == TL_OK)
            st = tl_k_compare(TL_K_LE, &d[0], &d[2], m, &le, ev->err);
        if (st == TL_OK) {
            x.array = ge;
            x.scalar = false;
            y.array = le;
            y.scalar = false;
            st = tl_k_and(&x, &y, m, &out->a, ev->err);
        }
        tl_array_release(ge);
        tl_array_release(le);
        if (st == TL_OK) st = maybe_not(ev, negate, m, out);
        break;
    }
    case TL_OP_ADD: case TL_OP_SUB: case TL_OP_MUL:
    case TL_OP_DIV: case TL_OP_IDIV: case TL_OP_MOD:
        st = eval_arith(ev, id, op, v, m, out);
        break;
    case TL_OP_NEG:
        st = tl_k_neg(&d[0], m, &out->a, &row, ev->err);
        if (st == TL_ERR_DATA)
            st = overflow_error(ev, id, "integer overflow", "-", &v[0], NULL,
                                row);
        break;
    case TL_OP_CONCAT_OP: {
        TlDatum *all = n_args <= 3 ? d : tl_malloc(sizeof(TlDatum) * n_args);
        if (!all) {
            st = tl_error_oom(ev->err);
            break;
        }
        for (i = 0; i < n_args; i++) all[i] = datum(&v[i]);
        st = tl_k_concat_str(all, (int)n_args, m, &out->a, ev->err);
        if (all != d) tl_free(all);
        break;
    }
    case TL_OP_INTERVAL: /* its text, for + - and date_add */
        out->a = tl_array_retain(v[0].a);
        break;
    case TL_OP_NOW:
    case TL_OP_CURRENT_DATE: {
        /* the run's instant, read once (TlExprArena.now) */
        TlBuilder b;
        bool ok;
        int64_t now = ev->ea->now, day = now / INT64_C(86400000000);
        if (now % INT64_C(86400000000) < 0) day--;
        tl_builder_init(&b, op == TL_OP_NOW ? TL_TTIMESTAMPTZ : TL_TDATE);
        ok = op == TL_OP_NOW ? tl_builder_append_i64(&b, now)
                             : tl_builder_append_i32(&b, (int32_t)day);
        out->a = ok ? tl_builder_finish(&b) : NULL;
        tl_builder_free(&b);
        if (!out->a) st = tl_error_oom(ev->err);
        break;
    }
    default:
        st = eval_fn(ev, id, v, (int)n_args, m, out);
        if (st == TL_OK && (op == TL_OP_LIKE || op == TL_OP_ILIKE))
            st = maybe_not(ev, negate, m, out);
        break;
    }
    return st;
}

static TlStatus eval_call(Ev *ev, TlExprId id, const TlBatch *in, Val *out)
{
    const TlExpr *e = node(ev, id);
    TlOp op = (TlOp)e->op;
    uint32_t i, n_args = e->n_args;
    Val stack[4], *v = stack;
    bool all_scalar = true;
    TlStatus st = TL_OK;

    switch (op) {
    case TL_OP_IF:
        return eval_case(ev, id, in, 1, true, out);
    case TL_OP_COALESCE:
        return eval_coalesce(ev, id, in, out);
    case TL_OP_AND:
    case TL_OP_OR:
        return eval_and_or(ev, id, in, op == TL_OP_AND, out);
    default:
        break;
    }
    if (tl_op_is_agg(op))
        return data_error(ev, id, "aggregate \"%s\" is not allowed here",
                          tl_op_info(op)->name);
    if (n_args > 4) {
        v = tl_calloc(n_args, sizeof(Val));
        if (!v) return tl_error_oom(ev->err);
    }
    memset(v, 0, sizeof(Val) * (n_args > 4 ? n_args : 4));
    for (i = 0; i < n_args; i++) {
        st = eval(ev, arg(ev, id, i), in, &v[i]);
        if (st != TL_OK) goto done;
        all_scalar &= v[i].scalar;
    }
    out->scalar = all_scalar;
    st = apply_call(ev, id, v, n_args, all_scalar ? 1 : in->n_rows, out);
done:
    for (i = 0; i < n_args; i++) drop(&v[i]);
    if (v != stack) tl_free(v);
    if (st != TL_OK) {
        tl_array_release(out->a);
        out->a = NULL;
    }
    return st;
}

/* x [not] in (v1, ...): constant lists go to the IN kernel; a list with a
 * non-constant value is an or-chain of equalities (same Kleene result). */
static TlStatus eval_in(Ev *ev, TlExprId id, const TlBatch *in, Val *out)
{
    const TlExpr *e = node(ev, id);
    uint32_t i, n_vals = e->n_args - 1;
    bool negate = (e->flags & TL_XF_NOT) != 0, consts = true;
    Val x = {0}, *vals;
    const TlArray **arrs = NULL;
    TlDatum dx;
    TlStatus st = TL_OK;
    int64_t m;
    vals = tl_calloc(n_vals ? n_vals : 1, sizeof(Val));
    arrs = tl_calloc(n_vals ? n_vals : 1, sizeof(TlArray *));
    if (!vals || !arrs) {
        st = tl_error_oom(ev->err);
        goto done;
    }
    st = eval(ev, arg(ev, id, 0), in, &x);
    for (i = 0; st == TL_OK && i < n_vals; i++) {
        st = eval(ev, arg(ev, id, i + 1), in, &vals[i]);
        if (st == TL_OK) {
            consts &= vals[i].scalar;
            arrs[i] = vals[i].a;
        }
    }
    if (st != TL_OK) goto done;
    m = x.scalar && consts ? 1 : in->n_rows;
    out->scalar = x.scalar && consts;
    dx = datum(&x);
    if (consts) {
        st = tl_k_in_list(&dx, arrs, (int)n_vals, negate, m, &out->a, ev->err);
        goto done;
    }
    for (i = 0; i < n_vals; i++) {
        TlArray *eq = NULL, *acc;
        TlDatum dv = datum(&vals[i]), de, da;
        st = tl_k_compare(TL_K_EQ, &dx, &dv, m, &eq, ev->err);
        if (st != TL_OK) goto done;
        if (!out->a) {
            out->a = eq;
            continue;
        }
        de.array = eq;
        de.scalar = false;
        da.array = out->a;
        da.scalar = false;
        st = tl_k_or(&da, &de, m, &acc, ev->err);
        tl_array_release(eq);
        if (st != TL_OK) goto done;
        tl_array_release(out->a);
        out->a = acc;
    }
    st = maybe_not(ev, negate, m, out);
done:
    drop(&x);
    if (vals)
        for (i = 0; i < n_vals; i++) drop(&vals[i]);
    tl_free(vals);
    tl_free(arrs);
    if (st != TL_OK) {
        tl_array_release(out->a);
        out->a = NULL;
    }
    return st;
}

/* Evaluate node id over batch `in` into *out (owned). */
static TlStatus eval_node(Ev *ev, TlExprId id, const TlBatch *in, Val *out);

/* eval through the memo: a shared id over the memo's whole batch is
 * computed once (see eval.h). */
static TlStatus eval(Ev *ev, TlExprId id, const TlBatch *in, Val *out)
{
    TlEvalMemo *m = ev->memo;
    TlStatus st;
    if (!m || in != m->batch || !tl_eval_memo_shared(m, id))
        return eval_node(ev, id, in, out);
    for (uint32_t i = 0; i < m->n; i++)
        if (m->ids[i] == id) {
            out->a = tl_array_retain(m->vals[i]);
            out->scalar = m->scalars[i];
            return TL_OK;
        }
    st = eval_node(ev, id, in, out);
    if (st != TL_OK) return st;
    if (m->n == m->cap) {
        uint32_t nc = m->cap ? m->cap * 2 : 8;
        TlExprId *ids = tl_realloc(m->ids, nc * sizeof *ids);
        if (ids) m->ids = ids;
        TlArray **vals = ids ? tl_realloc(m->vals, nc * sizeof *vals) : NULL;
        if (vals) m->vals = vals;
        bool *sc = vals ? tl_realloc(m->scalars, nc * sizeof *sc) : NULL;
        if (sc) m->scalars = sc;
        if (!sc) return TL_OK; /* no room: simply not cached */
        m->cap = nc;
    }
    m->ids[m->n] = id;
    m->vals[m->n] = tl_array_retain(out->a);
    m->scalars[m->n++] = out->scalar;
    return TL_OK;
}

static TlStatus eval_node(Ev *ev, TlExprId id, const TlBatch *in, Val *out)
{
    const TlExpr *e = node(ev, id);
    out->a = NULL;
    out->scalar = false;
    switch ((TlExprKind)e->kind) {
    case TL_X_COL:
        if (e->col < 0 || e->col >= in->n_cols || !in->cols[e->col])
            return tl_error(ev->err, TL_ERR_DATA,
                            "internal error: column \"%s\" is not bound",
                            e->name ? e->name : "?");
        out->a = tl_array_retain(in->cols[e->col]);
        return TL_OK;
    case TL_X_LIT:
        return eval_lit(ev, e, out);
    case TL_X_CAST:
        return eval_cast(ev, id, in, out);
    case TL_X_CASE: {
        bool has_else = (e->flags & TL_XF_ELSE) != 0;
        return eval_case(ev, id, in, (e->n_args - (has_else ? 1 : 0)) / 2,
                         has_else, out);
    }
    case TL_X_IN:
        return eval_in(ev, id, in, out);
    case TL_X_CALL:
        return eval_call(ev, id, in, out);
    }
    return tl_error(ev->err, TL_ERR_DATA, "internal error: bad expression node");
}

/* Evaluate resolved expression id over batch `in` (see eval.h): *out is an
 * owned array of in->n_rows values of the node's type. */
TlStatus tl_eval(const TlExprArena *ea, TlExprId id, const TlBatch *in,
                 TlArray **out, TlError *err)
{
    return tl_eval_memo(ea, id, in, NULL, out, err);
}

/* An open-addressing set of expression ids (UINT32_MAX: a free slot), kept
 * at most half full. */
typedef struct IdSet {
    uint32_t *slot;
    uint32_t mask, n;
} IdSet;

static uint32_t id_slot(uint32_t id, uint32_t mask)
{
    return (id * 2654435761u) & mask;
}

static bool idset_has(const uint32_t *slot, uint32_t mask, uint32_t id)
{
    if (!slot) return false;
    for (uint32_t h = id_slot(id, mask);; h = (h + 1) & mask) {
        if (slot[h] == id) return true;
        if (slot[h] == UINT32_MAX) return false;
    }
}

/* Add id; false on OOM (the set is unchanged then). */
static bool idset_add(IdSet *s, uint32_t id)
{
    if ((s->n + 1) * 2 > (s->slot ? s->mask + 1 : 0)) {
        uint32_t cap = s->slot ? (s->mask + 1) * 2 : 64;
        uint32_t *v = tl_malloc((size_t)cap * sizeof *v);
        if (!v) return false;
        memset(v, 0xff, (size_t)cap * sizeof *v);
        for (uint32_t i = 0; s->slot && i <= s->mask; i++)
            if (s->slot[i] != UINT32_MAX) {
                uint32_t h = id_slot(s->slot[i], cap - 1);
                while (v[h] != UINT32_MAX) h = (h + 1) & (cap - 1);
                v[h] = s->slot[i];
            }
        tl_free(s->slot);
        s->slot = v;
        s->mask = cap - 1;
    }
    uint32_t h = id_slot(id, s->mask);
    while (s->slot[h] != UINT32_MAX) h = (h + 1) & s->mask;
    s->slot[h] = id;
    s->n++;
    return true;
}

/* See eval.h.  Depth first over the trees with an explicit stack: a non-leaf
 * id reached a second time is shared (its children are then not visited
 * again: the cache covers them). */
TlStatus tl_eval_memo_init(TlEvalMemo *memo, const TlExprArena *ea,
                           const TlExprId *exprs, int n, TlError *err)
{
    IdSet seen = {0}, shared = {0};
    TlExprId *stk = NULL;
    uint32_t n_stk = 0, cap_stk = 0;
    bool ok = true;
    for (int i = 0; ok && i < n; i++) {
        TlExprId root = exprs[i];
        const TlExpr *e;
        if (n_stk == cap_stk) {
            uint32_t nc = cap_stk ? cap_stk * 2 : 64;
            TlExprId *v = tl_realloc(stk, (size_t)nc * sizeof *v);
            if (!v) { ok = false; break; }
            stk = v;
            cap_stk = nc;
        }
        stk[n_stk++] = root;
        while (ok && n_stk > 0) {
            TlExprId id = stk[--n_stk];
            e = tl_ea_node(ea, id);
            if (e->n_args == 0) continue;
            if (idset_has(seen.slot, seen.mask, id)) {
                if (!idset_has(shared.slot, shared.mask, id))
                    ok = idset_add(&shared, id);
                continue;
            }
            if (!(ok = idset_add(&seen, id))) break;
            if (n_stk + e->n_args > cap_stk) {
                uint32_t nc = cap_stk ? cap_stk : 64;
                while (nc < n_stk + e->n_args) nc *= 2;
                TlExprId *v = tl_realloc(stk, (size_t)nc * sizeof *v);
                if (!v) { ok = false; break; }
                stk = v;
                cap_stk = nc;
            }
            for (uint32_t k = e->n_args; k-- > 0;)
                stk[n_stk++] = tl_ea_arg(ea, e, k);
        }
    }
    tl_free(stk);
    tl_free(seen.slot);
    if (!ok) {
        tl_free(shared.slot);
        return tl_error_oom(err);
    }
    memo->shared = shared.slot;
    memo->shared_mask = shared.mask;
    return TL_OK;
}

/* See eval.h. */
bool tl_eval_memo_shared(const TlEvalMemo *memo, TlExprId id)
{
    return idset_has(memo->shared, memo->shared_mask, id);
}

/* See eval.h. */
void tl_eval_memo_clear(TlEvalMemo *memo)
{
    for (uint32_t i = 0; i < memo->n; i++) tl_array_release(memo->vals[i]);
    memo->n = 0;
    memo->batch = NULL;
}

/* See eval.h. */
void tl_eval_memo_free(TlEvalMemo *memo)
{
    if (!memo) return;
    tl_eval_memo_clear(memo);
    tl_free(memo->shared);
    tl_free(memo->ids);
    tl_free(memo->vals);
    tl_free(memo->scalars);
    memset(memo, 0, sizeof *memo);
}

/* See eval.h. */
TlStatus tl_eval_memo(const TlExprArena *ea, TlExprId id, const TlBatch *in,
                      TlEvalMemo *memo, TlArray **out, TlError *err)
{
    Ev ev;
    Val v;
    ev.ea = ea;
    ev.err = err;
    ev.memo = memo;
    *out = NULL;
    TL_TRY(eval(&ev, id, in, &v));
    if (v.scalar && (v.a->length != in->n_rows || in->n_rows != 1)) {
        TlArray *b = tl_k_broadcast(v.a, in->n_rows);
        tl_array_release(v.a);
        if (!b) return tl_error_oom(err);
        v.a = b;
    }
    *out = v.a;
    return TL_OK;
}

/* Evaluate a predicate and select its true rows (see eval.h). */
TlStatus tl_eval_filter(const TlExprArena *ea, TlExprId id, const TlBatch *in,
                        uint32_t **sel, int64_t *n_sel, bool *all,
                        TlError *err)
{
    Ev ev;
    Val v;
    TlDatum d;
    TlStatus st;
    int64_t n = in->n_rows;
    ev.ea = ea;
    ev.err = err;
    ev.memo = NULL;
    *sel = NULL;
    *n_sel = 0;
    *all = false;
    TL_TRY(eval(&ev, id, in, &v));
    if (v.a->type != TL_TBOOL && v.a->type != TL_TNULL) {
        TlType t = v.a->type;
        tl_array_release(v.a);
        return data_error(&ev, id, "filter must be a boolean expression, got %s",
                          tl_type_name(t));
    }
    d = datum(&v);
    st = tl_k_sel_true(&d, n, sel, n_sel, err);
    tl_array_release(v.a);
    if (st != TL_OK) return st;
    *all = n > 0 && *n_sel == n;
    return TL_OK;
}
