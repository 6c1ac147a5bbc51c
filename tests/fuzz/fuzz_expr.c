/*
 * fuzz_expr.c -- libFuzzer target for the expression parser.
 *
 * Input: any bytes, taken as one expression text.  Invariants checked beyond
 * "no crash": when the text parses, printing the tree and parsing the printed
 * text again succeeds and gives an equal tree (tl_expr_equal), and printing
 * that second tree gives the same bytes (the printer is a fixed point).
 * Items are exercised too: the text is also split and parsed as a select
 * list, a sort list, aggregates, group keys and names (column selectors
 * among them), and taken as a column glob.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/dsl/dsl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char printed[1 << 16], printed2[1 << 16];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) return 0;
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    if (strlen(text) != size) { free(text); return 0; } /* NUL inside */

    TlError err;
    TlExprArena ea;
    if (tl_ea_init(&ea, &err) != TL_OK) { free(text); return 0; }
    uint16_t src, src2;
    TlExprId id, id2;
    if (tl_ea_add_src(&ea, text, "--fuzz", &src, &err) == TL_OK &&
        tl_parse_expr(&ea, src, 0, (uint32_t)size, &id, &err) == TL_OK) {
        size_t n = tl_expr_print(&ea, id, printed, sizeof printed);
        if (n < sizeof printed - 1) {
            if (tl_ea_add_src(&ea, printed, "--fuzz", &src2, &err) != TL_OK) goto done;
            TlStatus st = tl_parse_expr(&ea, src2, 0, (uint32_t)n, &id2, &err);
            if (st == TL_ERR_OOM) goto done;
            if (st != TL_OK) {
                fprintf(stderr, "printed text does not parse:\n%s\n%s\n", printed, err.msg);
                abort();
            }
            if (!tl_expr_equal(&ea, id, id2)) {
                fprintf(stderr, "round trip changed the tree:\n%s\n", printed);
                abort();
            }
            size_t n2 = tl_expr_print(&ea, id2, printed2, sizeof printed2);
            if (n2 != n || memcmp(printed, printed2, n) != 0) {
                fprintf(stderr, "printer not a fixed point:\n%s\n%s\n", printed, printed2);
                abort();
            }
        }
    }
    TlItem *items;
    uint32_t n_items;
    (void)tl_parse_items(&ea, src, true, TL_ITEM_SELECT, &items, &n_items, &err);
    (void)tl_parse_items(&ea, src, true, TL_ITEM_SORT, &items, &n_items, &err);
    (void)tl_parse_items(&ea, src, true, TL_ITEM_ASSIGN, &items, &n_items, &err);
    (void)tl_parse_items(&ea, src, true, TL_ITEM_KEY, &items, &n_items, &err);
    (void)tl_parse_items(&ea, src, true, TL_ITEM_NAME, &items, &n_items, &err);
    /* the text as a column pattern, against itself and a name */
    (void)tl_glob_match(text, text);
    (void)tl_glob_match(text, "v1_id\xc3\xa9[x]");
done:
    tl_ea_free(&ea);
    free(text);
    return 0;
}
