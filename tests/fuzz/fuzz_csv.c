/*
 * fuzz_csv.c -- libFuzzer target for the CSV/TSV reader.
 *
 * Input: the first byte picks options (bit 0: --no-header; bits 1-2: the
 * delimiter , \t ; |; bit 3: --null NA; bits 4-5: the reader's scan mode,
 * tl_csv_scan_mode: 0 its general tokenizer alone, 1-3 the fast one with
 * scalar / SSE2 / AVX2 scanning; bit 6: header, preamble and comment
 * guessed, not fixed), the rest is the file.  The reader runs as the driver runs it: open, read every batch of
 * every column, and on TL_ERR_RESTART reopen with the widened hints.
 *
 * Invariants beyond "no crash": the status is TL_OK or TL_ERR_DATA (with a
 * message naming the file); and for inputs without blank lines, a simple
 * reference tokenizer (below, RFC 4180 with the reader's line-end rules)
 * decides the outcome: ragged or unterminated input must fail, and a clean
 * input must succeed with the reference's number of rows and columns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../formats/fmt_impl.h"
#include "../unit/split_force.h"
#include "../../formats/infer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reference: count records and check they all have the header's field
 * count.  Returns -1 for malformed input (ragged, unterminated quote, text
 * after a closing quote), else the number of data rows; *n_cols gets the
 * header's field count. */
static long reference(const uint8_t *p, size_t n, char delim, bool no_header, int *n_cols)
{
    size_t i = 0;
    long records = 0;
    int want = -1;
    while (i < n) {
        int fields = 0;
        for (;;) {
            if (i < n && p[i] == '"') {
                i++;
                for (;;) {
                    if (i >= n) return -1;
                    if (p[i] == '"') {
                        if (i + 1 < n && p[i + 1] == '"') { i += 2; continue; }
                        i++;
                        break;
                    }
                    i++;
                }
                if (i < n && p[i] != (uint8_t)delim && p[i] != '\n' && p[i] != '\r') return -1;
            } else {
                while (i < n && p[i] != (uint8_t)delim && p[i] != '\n' && p[i] != '\r') i++;
            }
            fields++;
            if (i >= n) break;
            if (p[i] == (uint8_t)delim) { i++; continue; }
            if (p[i] == '\r' && i + 1 < n && p[i + 1] == '\n') i++;
            i++;
            break;
        }
        if (want < 0) want = fields;
        else if (fields != want) return -1;
        records++;
    }
    *n_cols = want < 0 ? 0 : want;
    return no_header ? records : records - 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    static const char delims[4] = {',', '\t', ';', '|'};
    uint8_t opt = data[0];
    const uint8_t *body = data + 1;
    size_t n = size - 1;
    char path[] = "/tmp/tally-fuzz-csv-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return 0;
    if (write(fd, body, n) != (ssize_t)n) { close(fd); unlink(path); return 0; }
    close(fd);

    TlReadOptions ro;
    memset(&ro, 0, sizeof ro);
    ro.delimiter = delims[(opt >> 1) & 3];
    ro.no_header = opt & 1;
    /* bit 6: the reader guesses the format, the header, the preamble and
     * the comment character as a bare run does (only survival is checked
     * then); else they are fixed, so that the reference's count applies */
    bool guess = opt & 64;
    if (!guess) {
        ro.header = !ro.no_header;
        ro.skip = -1;
        ro.comment = TL_COMMENT_NONE;
        ro.from = "csv"; /* not Parquet by a leading PAR1 */
    }
    ro.quiet = true;
    ro.null_text = (opt & 8) ? "NA" : NULL;
    tl_csv_scan_mode((opt >> 4) & 3);
    TlTypeHints hints;
    memset(&hints, 0, sizeof hints);
    TlError err;
    TlStatus st;
    int64_t rows = 0;
    int cols = -1;
    for (int attempt = 0; attempt < 64; attempt++) {
        TlReader *r = NULL;
        rows = 0;
        st = tl_reader_open(path, &ro, &hints, &r, &err);
        if (st == TL_OK) {
            cols = tl_reader_schema(r)->n_fields;
            TlBatch *b;
            while ((st = tl_reader_next(r, &b, &err)) == TL_OK && b) {
                if (b->n_cols != cols) abort();
                rows += b->n_rows;
                tl_batch_free(b);
            }
        }
        tl_reader_close(r);
        if (st != TL_ERR_RESTART) break;
    }
    tl_hints_free(&hints);
    unlink(path);
    if (st != TL_OK && st != TL_ERR_DATA) {
        fprintf(stderr, "unexpected status %d: %s\n", st, err.msg);
        abort();
    }
    if (st == TL_ERR_DATA && strstr(err.msg, path) == NULL) {
        fprintf(stderr, "error does not name the file: %s\n", err.msg);
        abort();
    }
    /* Compare with the reference only on plain inputs: nothing guessed, no
     * blank line, no BOM, a header with at least two columns, and no empty
     * input. */
    bool plain = !guess && n > 0 && !(n >= 3 && memcmp(body, "\xEF\xBB\xBF", 3) == 0);
    for (size_t i = 0; plain && i < n; i++) {
        if ((body[i] == '\n' || body[i] == '\r') && (i == 0 || body[i - 1] == '\n' || body[i - 1] == '\r'))
            plain = false;
        if (body[i] == 0) plain = false;
    }
    int ref_cols = 0;
    long ref = plain ? reference(body, n, ro.delimiter, ro.no_header, &ref_cols) : 0;
    if (plain && ref_cols >= 2) {
        if (ref < 0 && st == TL_OK) {
            fprintf(stderr, "reader accepted malformed input\n");
            abort();
        }
        if (ref >= 0 && st != TL_OK) {
            fprintf(stderr, "reader rejected well-formed input: %s\n", err.msg);
            abort();
        }
        if (ref >= 0 && (rows != ref || cols != ref_cols)) {
            fprintf(stderr, "reader: %lld rows %d cols, reference: %ld rows %d cols\n",
                    (long long)rows, cols, ref, ref_cols);
            abort();
        }
    }
    return 0;
}
