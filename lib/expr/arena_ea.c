/*
 * arena_ea.c -- the expression arena: nodes, child lists, source texts.
 *
 * Layout (ast.h):
 *
 *   nodes  TlExpr[]     id -> node
 *   args   TlExprId[]   a node's children are args[e->args .. +n_args)
 *   srcs   TlExprSrc[]  one per flag value / JSON string, text + origin
 *   pool   strings      source texts, origins, names, string literals
 *
 * Everything is appended, nothing is freed before tl_ea_free.  A child list
 * is copied into `args` when its node is pushed, so a node's children never
 * change; rewrites push new nodes.  Because `nodes` and `args` may move when
 * they grow, tl_ea_push copies its template and child list before pushing
 * (callers may pass pointers into the arena itself).
 */
#include "expr.h"

/* Initialise an empty arena.  Cannot fail today; returns TL_OK. */
TlStatus tl_ea_init(TlExprArena *ea, TlError *err)
{
    (void)err;
    memset(ea, 0, sizeof *ea);
    tl_arena_init(&ea->nodes, sizeof(TlExpr));
    tl_arena_init(&ea->args, sizeof(TlExprId));
    tl_strpool_init(&ea->pool);
    return TL_OK;
}

/* Release everything the arena holds; the arena is left empty (and may be
 * freed again). */
void tl_ea_free(TlExprArena *ea)
{
    tl_ea_regex_free(ea);
    tl_arena_free(&ea->nodes);
    tl_arena_free(&ea->args);
    tl_free(ea->srcs);
    tl_strpool_free(&ea->pool);
    memset(ea, 0, sizeof *ea);
    tl_arena_init(&ea->nodes, sizeof(TlExpr));
    tl_arena_init(&ea->args, sizeof(TlExprId));
    tl_strpool_init(&ea->pool);
}

/* Register text (with its origin, e.g. "--filter") as a new source; both are
 * copied into the pool.  *src receives its index.  At most 65535 sources. */
TlStatus tl_ea_add_src(TlExprArena *ea, const char *text, const char *origin,
                       uint16_t *src, TlError *err)
{
    if (ea->n_srcs >= UINT16_MAX)
        return tl_error(err, TL_ERR_USAGE, "too many expressions (at most %u)",
                        (unsigned)UINT16_MAX);
    if (ea->n_srcs == ea->cap_srcs) {
        uint32_t nc = ea->cap_srcs ? ea->cap_srcs * 2 : 8;
        TlExprSrc *s = tl_realloc(ea->srcs, (size_t)nc * sizeof *s);
        if (!s) return tl_error_oom(err);
        ea->srcs = s;
        ea->cap_srcs = nc;
    }
    if (!text) text = "";
    if (!origin) origin = "";
    const char *t = tl_strpool_dup(&ea->pool, text, strlen(text));
    const char *o = tl_strpool_dup(&ea->pool, origin, strlen(origin));
    if (!t || !o) return tl_error_oom(err);
    ea->srcs[ea->n_srcs].text = t;
    ea->srcs[ea->n_srcs].origin = o;
    *src = (uint16_t)ea->n_srcs++;
    return TL_OK;
}

/* Push a copy of *tmpl whose children are args[0..n_args); the node's
 * args/n_args fields are set here.  *id receives the new id.  tmpl and args
 * may point into the arena. */
TlStatus tl_ea_push(TlExprArena *ea, const TlExpr *tmpl, const TlExprId *args,
                    uint32_t n_args, TlExprId *id, TlError *err)
{
    TlExpr node = *tmpl;
    TlExprId small[8], *copy = small;
    TlStatus st = TL_OK;
    if (n_args > 8) {
        copy = tl_malloc((size_t)n_args * sizeof *copy);
        if (!copy) return tl_error_oom(err);
    }
    if (n_args) memcpy(copy, args, (size_t)n_args * sizeof *copy);
    if (ea->args.n > UINT32_MAX - 1 - n_args || ea->nodes.n >= UINT32_MAX - 1) {
        st = tl_error(err, TL_ERR_USAGE, "expressions too large");
        goto done;
    }
    node.args = ea->args.n;
    node.n_args = n_args;
    for (uint32_t i = 0; i < n_args; i++) {
        uint32_t slot;
        st = tl_arena_push(&ea->args, &slot, err);
        if (st != TL_OK) goto done;
        *(TlExprId *)tl_arena_at(&ea->args, slot) = copy[i];
    }
    TlExprId nid;
    st = tl_arena_push(&ea->nodes, &nid, err);
    if (st != TL_OK) goto done;
    *tl_ea_node(ea, nid) = node;
    *id = nid;
done:
    if (copy != small) tl_free(copy);
    return st;
}
