/*
 * ndjson_read.c -- the NDJSON reader: one JSON object per line.
 *
 * The whole input is one immutable buffer (format.c maps the file or reads
 * standard input once).  It is read as morsels (format.h, "morsel-parallel
 * reading"): tl_reader_split cuts byte ranges of whole lines, and any
 * number of decoders turn morsels into batches at once.  next() is the same
 * thing done serially: split, decode with a decoder of the reader's own,
 * widen, count -- so both ways give the same batches by construction.
 *
 * The reader is three files around ndjson_impl.h (their shared types):
 * this one (splitting into morsels, the reader's operations, open),
 * ndjson_scan.c (tokenizing lines into fields) and ndjson_build.c (type
 * inference, conversion into arrays, decoding a morsel).
 *
 * Splitting (serial, cheap): JSON strings cannot hold a raw newline, so
 * every LF ends a line; a morsel ends after the line end that is its
 * max_rows-th or that reaches its byte target (64 KiB for the first, then
 * doubling up to 2 MiB; TALLY_TEST_NDJSON_MORSEL for tests).  16 bytes at a
 * time with SSE2 count the LFs and look for a lone CR (one not followed by
 * LF); a morsel holding one is cut by a careful bytewise scan that tracks
 * strings and brackets, because a lone CR right after a line's object ends
 * a record (and a line, for line numbers) while elsewhere it is white
 * space.  Boundaries depend only on the bytes and max_rows.  The first
 * morsel starts at byte 0 (a BOM is skipped when decoding), so the morsels'
 * sizes add up to the input's.
 *
 * Guessed ends (format.h, tl_reader_guess: a scan of one complete input):
 * the split reads only the bytes from the target size to the next LF and
 * hands the morsel out with line -1, so the consumer no longer reads (and
 * faults in) every byte before the decoders do.  Every LF ends a line, so
 * the guess is the careful cut unless the morsel holds a record ended by a
 * lone CR or max_rows line ends: decode_morsel checks both and fails such
 * a morsel, and any other failure of a guessed morsel (an error, whose
 * message needs the line; a late key) too.  The consumer then drops it and
 * the later ones and calls nd_resplit, which counts the lines before it
 * from the input's start and splits carefully from then on: morsels,
 * values, errors and counters are the careful split's.
 *
 * Decoding a morsel goes through a cursor (NdCursor): everything mutable
 * while tokenizing -- position, line, the key tables, the fields, scratch.
 * Open's cursor discovers the columns; each decoder starts from a copy of
 * its key tables, which are never changed after open, so decoders share
 * nothing mutable: the reader's schema, types, projection and hints are
 * only read (one atomic aside: late_keys).  A batch is read in two passes:
 *
 *   1. Tokenize the morsel's lines with a hand-written scanner that
 *      validates the JSON fully (strings with every escape and surrogate
 *      pairs, UTF-8, numbers, literals, nesting) and records, per column,
 *      a field for each row that holds its key, without copying anything:
 *
 *        cols[c].f[i] = { off:u64 | len:u32 | kind:u32 }
 *
 *      in row order: f[i] is row i's field while every row so far held the
 *      key (dense, nearly always), else rows[i] is its row (sparse: a wide
 *      file whose rows hold a few of its many keys costs the fields it
 *      has, not rows x columns; NdCol).  kind is what the value is: null
 *      (0, so a zeroed field is a missing key), false, true, integer,
 *      other number, string, string with escapes, or raw JSON (an array,
 *      an empty object, or an object nested deeper than MAX_PARTS).
 *      off/len cover a string without its quotes, or the value's text.
 *      Decoders store only the projected columns' fields (and late
 *      keys'); every value is still validated.
 *
 *      Lines that repeat the previous line's keys (nearly all, in such
 *      files) take a shorter road, parse_shaped: the line's shape is the
 *      list of its keys (when flat, plain and known), each as the bytes
 *      `"key":` to compare as two masked words; a value is read from one
 *      16-byte SSE2 load when it is a plain string or a number without
 *      exponent that ends within it (the next position then waits for no
 *      byte loads), else by the ordinary scanners.  Values of unprojected
 *      columns are validated the same way, just not stored.  A line that
 *      does not fit the shape (another key, a nested value, anything
 *      invalid) is read again from its start by parse_object, which makes
 *      the shape anew and reports the errors: both roads store the same
 *      fields, and every message comes from parse_object.
 *
 *   2. Convert only the projected columns, one loop per column and type
 *      over one field per row (a sparse column's spread once, its nulls
 *      zeroed fields).
 *      Strings without escapes become views into the input buffer (or are
 *      inlined when short); escaped strings are decoded and raw JSON is
 *      compacted into a block the array owns.
 *
 * Streamed input (a zstd file decompressed by a thread while it is read,
 * fmt_impl.h): open samples the bytes ready (opening again with more when
 * the sample reaches their end), the splitter cuts in the bytes ready and
 * takes a cut TL_INPUT_AHEAD before their end (decoders read a line and a
 * byte past it, never further), and late_keys waits for the whole input
 * before scanning the rest of it.
 *
 * Memory: once a morsel of a mapped file is decoded, the input's pages a
 * block (2 to 8 MiB) behind it are given back (tl_input_drop), as the CSV
 * reader does: a scan of a 1 GB file holds a few blocks of it, not all of
 * it; a string view read later faults its page in from the file.
 *
 * Errors: a morsel reports its first problem in input order, so what the
 * user sees does not depend on where morsels are cut: a syntax error ends
 * tokenizing, but the rows before it are still converted and a value among
 * them that does not fit (the lowest row; then the first projected column)
 * comes first.
 *
 * Keys: a key is looked up under its parent object (a "node"; node 0 is the
 * line's object) in a hash table of entries {parent, key bytes} -> column
 * and/or child node.  The fast path remembers, for the k-th key of the
 * previous line, which entry it was: when lines repeat their key order
 * (nearly always) a key costs one memcmp.  Nested objects are flattened
 * into `parent.child` columns while the name has fewer than MAX_PARTS parts;
 * deeper objects, empty objects and every array become a string column
 * holding the value's compact JSON text.  A key seen twice in one object:
 * the last value wins (as DuckDB), also when two spellings name the same
 * column ("a.b" and {"a":{"b":..}}).  Columns keep the order of their
 * first appearance; a missing key is null.
 *
 * Types (format.h, "restart protocol"): tl_reader_open tokenizes the first
 * batch (max_rows lines: the inference sample), which discovers the
 * columns, and infers each column's type from its values: true/false bool,
 * integers int64, other numbers float64 when a double holds them exactly
 * (infer.h; else V_NUMTXT: their text, a string), strings and raw JSON
 * string (a string that looks like a date
 * stays a string), starting from the run's hint.  Widening: int64 ->
 * float64 -> string; any other mix is string, and a number or literal in a
 * string column is its JSON text.  When a morsel holds a value that does
 * not fit, decode returns TL_ERR_RESTART with the projected columns' types
 * widened by that morsel's values in *widen (tl_reader_widen puts them in
 * the hints).  A key first seen after the inference sample also restarts
 * the run, with the new column in *widen: the decoder tokenizes the rest of
 * the input first, so every late key is found by one restart (hint columns
 * absent from the sample come after its columns, so the order is still
 * that of first appearance); without hints a late key is a data error.
 * --schema fixes types; a value that does not convert is then an error
 * naming file, line and column.
 *
 * Lines end at LF, CRLF, or a lone CR right after an object; blank lines
 * are skipped; a UTF-8 BOM is skipped.  Every line must hold exactly one
 * object.
 */
#include "ndjson_impl.h"

/* ------------------------------------------------------------ splitting */

#define MORSEL_FIRST ((size_t)64 << 10) /* bytes of the first morsel */
#define MORSEL_MOST ((size_t)2 << 20)   /* bytes a morsel grows to */

/* The target size of r's morsel after one of b bytes: doubling up to
 * MORSEL_MOST (a fixed size stays). */
static size_t morsel_next(const NdReader *r, size_t b)
{
    if (r->fixed_bytes || b >= MORSEL_MOST) return b;
    return b * 2 < MORSEL_MOST ? b * 2 : MORSEL_MOST;
}

/* The end of the morsel starting at begin, for input whose lines end at
 * LF (or CRLF): after the line end that is the max_lines-th, or lies at or
 * after byte limit - 1, or at the input's end; *lines = line ends in it.
 * Returns 0 with *lone set when a CR not followed by LF comes first (the
 * careful scan decides then). */
static size_t find_end_fast(const uint8_t *p, size_t n, size_t begin, size_t limit,
                            int64_t max_lines, int64_t *lines, bool *lone)
{
    size_t i = begin;
    int64_t nl = 0;
#ifdef __SSE2__
    const __m128i lf = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r');
    while (i + 16 < n) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        uint32_t ml = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, lf));
        uint32_t mc = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, cr));
        if (mc) {
            uint32_t next_lf = (ml >> 1) | ((uint32_t)(p[i + 16] == '\n') << 15);
            if (mc & ~next_lf) break; /* the bytewise loop finds it in order */
        }
        for (; ml; ml &= ml - 1) { /* lines are long: few bits a block */
            size_t at = i + (size_t)__builtin_ctz(ml);
            if (++nl >= max_lines || at + 1 >= limit) {
                *lines = nl;
                return at + 1;
            }
        }
        i += 16;
    }
#endif
    for (; i < n; i++) {
        if (p[i] == '\r' && (i + 1 >= n || p[i + 1] != '\n')) {
            *lone = true;
            return 0;
        }
        if (p[i] == '\n' && (++nl >= max_lines || i + 1 >= limit)) {
            *lines = nl;
            return i + 1;
        }
    }
    *lines = nl;
    return n;
}

/* find_end_fast for input with lone CRs: a lone CR right after a line's
 * object (outside strings, brackets closed, spaces or tabs between) ends a
 * record and counts as a line end, as the tokenizer has it; elsewhere it is
 * white space.  A malformed line may be misjudged, but only after the
 * place where decoding it reports its first error. */
static size_t find_end_careful(const uint8_t *p, size_t n, size_t begin, size_t limit,
                               int64_t max_lines, int64_t *lines)
{
    int64_t nl = 0, depth = 0;
    bool str = false, closed = false;
    for (size_t i = begin; i < n; i++) {
        uint8_t c = p[i];
        if (c == '\n') {
            /* a line end */
        } else if (str) {
            if (c == '\\' && i + 1 < n && p[i + 1] != '\n') i++;
            else if (c == '"') str = false;
            continue;
        } else if (c == '\r') {
            if (!closed || depth != 0 || (i + 1 < n && p[i + 1] == '\n')) continue;
        } else if (closed) {
            if (c != ' ' && c != '\t') closed = false;
            continue;
        } else {
            if (c == '"') str = true;
            else if (c == '{' || c == '[') depth++;
            else if (c == '}' || c == ']') closed = --depth == 0 && c == '}';
            continue;
        }
        depth = 0;
        str = closed = false;
        if (++nl >= max_lines || i + 1 >= limit) {
            *lines = nl;
            return i + 1;
        }
    }
    *lines = nl;
    return n;
}

/* ----------------------------------------------------------- the reader */

/* Set up cursor cu for r: with proto, a copy of its key tables (a decoder);
 * without, open's cursor that discovers the columns. */
static TlStatus cursor_init(NdReader *r, NdCursor *cu, const NdCursor *proto,
                            TlError *err)
{
    memset(cu, 0, sizeof *cu);
    cu->rd = r;
    cu->name = r->name;
    cu->input = r->input;
    cu->p = r->p;
    cu->size = r->size;
    cu->start = cu->pos = r->start;
    cu->line = 1;
    cu->schema = &r->schema;
    cu->n_open = proto ? r->n_open : INT32_MAX;
    cu->max_rows = r->max_rows;
    cu->err = err;
    cu->row_line = tl_malloc((size_t)cu->max_rows * sizeof *cu->row_line);
    if (!cu->row_line) return tl_error_oom(err);
    if (!proto) {
        cu->nodes = tl_calloc(8, sizeof *cu->nodes);
        if (!cu->nodes) return tl_error_oom(err);
        cu->nodes_cap = 8;
        cu->nodes[0].path = tl_strdup("");
        if (!cu->nodes[0].path) return tl_error_oom(err);
        cu->n_nodes = 1;
        return TL_OK;
    }
    TL_TRY(tl_nd_ensure_cols(cu, r->n_open));
    cu->skip = r->skip;
    cu->nodes = tl_calloc((size_t)proto->nodes_cap, sizeof *cu->nodes);
    cu->entries = tl_calloc((size_t)proto->entries_cap + 1, sizeof *cu->entries);
    if (!cu->nodes || !cu->entries) return tl_error_oom(err);
    cu->nodes_cap = proto->nodes_cap;
    cu->entries_cap = proto->entries_cap + 1;
    for (int i = 0; i < proto->n_nodes; i++) {
        const Node *s = &proto->nodes[i];
        cu->nodes[i] = *s;
        cu->nodes[i].path = tl_malloc(s->path_len + 1);
        if (!cu->nodes[i].path) return tl_error_oom(err);
        memcpy(cu->nodes[i].path, s->path, s->path_len + 1);
        cu->n_nodes = i + 1;
    }
    for (int e = 0; e < proto->n_entries; e++) {
        const Entry *s = &proto->entries[e];
        cu->entries[e] = *s;
        cu->entries[e].key = tl_malloc((size_t)s->key_len + 1);
        if (!cu->entries[e].key) return tl_error_oom(err);
        memcpy(cu->entries[e].key, s->key, (size_t)s->key_len + 1);
        cu->n_entries = e + 1;
    }
    if (proto->table) {
        size_t bytes = ((size_t)proto->table_mask + 1) * sizeof *cu->table;
        cu->table = tl_malloc(bytes);
        if (!cu->table) return tl_error_oom(err);
        memcpy(cu->table, proto->table, bytes);
        cu->table_mask = proto->table_mask;
    }
    return TL_OK;
}

static void cursor_free(NdCursor *cu)
{
    tl_buf_release(cu->window);
    tl_schema_free(&cu->late);
    for (int c = 0; c < cu->cols_cap; c++) {
        tl_free(cu->cols[c].f);
        tl_free(cu->cols[c].rows);
    }
    tl_free(cu->touched);
    tl_free(cu->spread);
    tl_free(cu->cols);
    for (int e = 0; e < cu->n_entries; e++) tl_free(cu->entries[e].key);
    tl_free(cu->entries);
    tl_free(cu->table);
    tl_free(cu->seq);
    for (int i = 0; i < cu->n_nodes; i++) tl_free(cu->nodes[i].path);
    tl_free(cu->nodes);
    tl_free(cu->keybuf);
    tl_free(cu->row_line);
}

static const TlReaderOps ndjson_ops;

static const TlSchema *nd_schema(const TlReader *base)
{
    return &((const NdReader *)base)->schema;
}

static TlStatus nd_project(TlReader *base, const int *cols, int n_cols, TlError *err)
{
    NdReader *r = (NdReader *)base;
    int *proj = NULL;
    TlSchema ps = {0};
    if (n_cols < 0) n_cols = 0;
    if (n_cols > 0) {
        proj = tl_malloc((size_t)n_cols * sizeof *proj);
        if (!proj) return tl_error_oom(err);
    }
    for (int i = 0; i < n_cols; i++) {
        if (cols[i] < 0 || cols[i] >= r->schema.n_fields) {
            tl_free(proj);
            tl_schema_free(&ps);
            return tl_error(err, TL_ERR_USAGE, "%s: no column number %d", r->name,
                            cols[i] + 1);
        }
        proj[i] = cols[i];
        if (tl_schema_add(&ps, r->schema.fields[cols[i]].name,
                          r->schema.fields[cols[i]].type, err) != TL_OK) {
            tl_free(proj);
            tl_schema_free(&ps);
            return err->code;
        }
    }
    tl_free(r->proj);
    tl_schema_free(&r->proj_schema);
    r->proj = proj;
    r->n_proj = n_cols;
    r->proj_schema = ps;
    for (int c = 0; c < r->n_open; c++) r->skip[c] = true;
    for (int i = 0; i < n_cols; i++) r->skip[proj[i]] = false;
    return TL_OK;
}

/* The first line of the whole lines [pos, end) longer than
 * --max-record-size (its line end not counted): its line in *at; false
 * when none.  A line at a time: only for a stretch longer than the bound. */
static bool long_line(const NdReader *r, size_t pos, size_t end, int64_t line, int64_t *at)
{
    bool cr = memchr(r->p + pos, '\r', end - pos) != NULL;
    while (pos < end) {
        const uint8_t *lf;
        size_t next, e;
        int64_t l = 0;
        if (cr) {
            next = find_end_careful(r->p, end, pos, 0, 1, &l);
        } else {
            lf = memchr(r->p + pos, '\n', end - pos);
            next = lf ? (size_t)(lf - r->p) + 1 : end;
            l = lf != NULL;
        }
        e = next;
        if (e > pos && r->p[e - 1] == '\n') e--;
        if (e > pos && r->p[e - 1] == '\r') e--;
        if (e - pos > r->max_record) {
            *at = line;
            return true;
        }
        pos = next;
        line += l;
    }
    return false;
}

/* A line of a stream longer than --max-record-size in the bytes [begin,
 * ready) the split looked at (held in memory until its end: decompressed
 * bytes, stream.c): a whole one, or the last when it has no end yet (it
 * starts after the last LF, or a lone CR that ends a record).  Its line
 * is counted as nd_resplit counts. */
static TlStatus line_too_long(const NdReader *r, size_t begin, size_t ready, TlError *err)
{
    const uint8_t *lf;
    size_t start;
    int64_t lines = 0, at;
    if (ready - begin <= r->max_record || !tl_input_is_stream(r->input)) return TL_OK;
    lf = memrchr(r->p + begin, '\n', ready - begin);
    start = lf ? (size_t)(lf - r->p) + 1 : begin;
    while (ready - start > r->max_record && memchr(r->p + start, '\r', ready - start)) {
        size_t e = find_end_careful(r->p, ready, start, 0, 1, &lines);
        if (e >= ready) break;
        start = e;
    }
    if (start - begin > r->max_record && long_line(r, begin, start, r->split_line, &at))
        return tl_error(err, TL_ERR_DATA, "%s:%lld: record longer than %zu bytes "
                        "(--max-record-size)", r->name, (long long)at, r->max_record);
    if (ready - start <= r->max_record) return TL_OK;
    lines = 0;
    if (memchr(r->p + begin, '\r', start - begin))
        find_end_careful(r->p, start, begin, SIZE_MAX, INT64_MAX, &lines);
    else
        lines = tl_count_lf(r->p + begin, start - begin);
    return tl_error(err, TL_ERR_DATA, "%s:%lld: record longer than %zu bytes "
                    "(--max-record-size)", r->name, (long long)(r->split_line + lines),
                    r->max_record);
}

/* Morsels: whole lines, cut at LF (and at a lone CR that ends a record),
 * at most max_rows lines, growing from MORSEL_FIRST bytes by doubling to
 * MORSEL_MOST.  The first starts at byte 0 (before a BOM) so the morsels'
 * bytes add up to the input's size. */
static TlStatus nd_split(TlReader *base, TlMorsel *m, bool *got, TlError *err)
{
    NdReader *r = (NdReader *)base;
    size_t begin = r->split_pos, limit, end, size = tl_input_size(r->input);
    int64_t lines = 0;
    bool lone = false;
    *got = false;
    if (begin >= size) return TL_OK;
    limit = r->size - begin > r->split_bytes ? begin + r->split_bytes : r->size;
    if (r->guess) {
        /* only the bytes from the target to the next LF are read; the
         * line is known only when split again */
        const uint8_t *lf = memchr(r->p + limit - 1, '\n', r->size - (limit - 1));
        end = lf ? (size_t)(lf - r->p) + 1 : r->size;
        m->line = -1;
        goto cut;
    }
    for (size_t want = limit + TL_INPUT_AHEAD;;) {
        /* a streamed input (fmt_impl.h): cut in the bytes ready, and take
         * the cut when it lies TL_INPUT_AHEAD before their end (it is
         * then where the whole input puts it) or they are all (where a
         * stream of unknown size ended); else wait for twice the bytes
         * (a long line is scanned a few times), up to --max-record-size */
        size_t ready, more;
        TL_TRY(tl_input_wait(r->input, want, &ready, err));
        size = tl_input_size(r->input);
        lines = 0;
        lone = false;
        end = find_end_fast(r->p, ready, begin, limit < ready ? limit : ready,
                            r->max_rows, &lines, &lone);
        if (lone)
            end = find_end_careful(r->p, ready, begin, limit < ready ? limit : ready,
                                   r->max_rows, &lines);
        if (ready >= size || (end < ready && ready - end >= TL_INPUT_AHEAD)) {
            TL_TRY(line_too_long(r, begin, end, err));
            break;
        }
        TL_TRY(line_too_long(r, begin, end, err));
        more = ready - begin < ((size_t)1 << 20) ? (size_t)1 << 20 : ready - begin;
        want = ready + more;
    }
    m->line = r->split_line;
    r->split_line += lines;
cut:
    m->seq = r->split_seq++;
    m->begin = begin;
    m->end = end;
    r->split_pos = end;
    r->split_bytes = morsel_next(r, r->split_bytes);
    *got = true;
    return TL_OK;
}

/* See format.h: guess morsel ends from now on (not for a stream: it is
 * cut in the bytes ready, its lines checked against --max-record-size).
 * JSON strings hold no raw LF, so every LF ends a line. */
static void nd_guess(TlReader *base)
{
    NdReader *r = (NdReader *)base;
    if (!tl_input_is_stream(r->input) && r->split_seq == 0) r->guess = true;
}

/* See format.h: the next split starts at guessed morsel m, which began at
 * a line start (the morsels before it were checked), and reads every byte
 * from now on; m's line is counted from the input's start (careful about
 * lone CRs only when the bytes hold a CR). */
static TlStatus nd_resplit(TlReader *base, const TlMorsel *m, TlError *err)
{
    NdReader *r = (NdReader *)base;
    int64_t lines = 0;
    if (m->line >= 0 || m->begin > r->size)
        return tl_error(err, TL_ERR_DATA, "%s: internal error: split again "
                        "from a morsel not guessed", r->name);
    if (memchr(r->p, '\r', (size_t)m->begin))
        find_end_careful(r->p, (size_t)m->begin, 0, SIZE_MAX, INT64_MAX, &lines);
    else
        lines = tl_count_lf(r->p, (size_t)m->begin);
    r->guess = false;
    r->split_pos = (size_t)m->begin;
    r->split_seq = m->seq;
    r->split_line = 1 + lines;
    r->split_bytes = r->fixed_bytes ? r->fixed_bytes : MORSEL_FIRST;
    for (int64_t k = 0; k < m->seq; k++) {
        size_t next = morsel_next(r, r->split_bytes);
        if (next == r->split_bytes) break; /* at its most, or forced */
        r->split_bytes = next;
    }
    return TL_OK;
}

static TlStatus nd_decoder_new(TlReader *base, TlDecoder **out, TlError *err)
{
    NdReader *r = (NdReader *)base;
    NdDecoder *d = tl_calloc(1, sizeof *d);
    *out = NULL;
    if (!d) return tl_error_oom(err);
    d->base.ops = &ndjson_ops;
    if (cursor_init(r, &d->cur, r->keys, err) != TL_OK) {
        cursor_free(&d->cur);
        tl_free(d);
        return err->code;
    }
    *out = &d->base;
    return TL_OK;
}

static void nd_decoder_free(TlDecoder *base)
{
    NdDecoder *d = (NdDecoder *)base;
    cursor_free(&d->cur);
    tl_input_copy_free(&d->copy);
    tl_free(d);
}

/* Decode morsel m; for a mapped file through a copy of it (the CSV
 * reader's "copies": the cursor's p and size address the morsel and
 * TL_COPY_PAD bytes either side, read with tl_input_copy, so every read
 * stays in the copy; late_keys, which reads on to the input's end, goes
 * back to the mapping). */
static TlStatus nd_decode(TlReader *base, TlDecoder *d, const TlMorsel *m,
                          TlBatch **out, TlSchema **widen, TlError *err)
{
    NdReader *r = (NdReader *)base;
    NdCursor *cu = &((NdDecoder *)d)->cur;
    size_t hi;
    const uint8_t *p = tl_input_copy(r->base.ctx, r->input, &((NdDecoder *)d)->copy, m->begin, m->end, &hi);
    TlStatus st;
    /* the input's end: a stream of unknown size that ended has r->size
     * the address space reserved for it */
    cu->p = r->p;
    cu->size = tl_input_size(r->input);
    if (p) {
        cu->p = p;
        cu->size = hi;
    }
    st = tl_nd_decode_morsel(r, cu, m, out, widen, err);
    cu->p = r->p;
    cu->size = tl_input_size(r->input);
    if (st == TL_OK) tl_input_drop(r->input, m->begin, m->end);
    return st;
}

static TlStatus nd_widen(TlReader *base, const TlSchema *widen, TlError *err)
{
    NdReader *r = (NdReader *)base;
    if (!r->hints || !widen) return TL_OK;
    for (int i = 0; i < widen->n_fields; i++)
        TL_TRY(tl_hint_set(r->hints, widen->fields[i].name, widen->fields[i].type, err));
    return tl_widen_note(r->hints, widen, r->name, err);
}

static void nd_count(TlReader *base, int64_t rows, int64_t bytes)
{
    NdReader *r = (NdReader *)base;
    r->base.stats.bytes += bytes;
    if (rows <= 0) return;
    r->base.stats.rows += rows;
    r->base.stats.batches++;
    for (int k = 0; k < r->n_proj; k++) r->base.stats.converted[r->proj[k]] += rows;
}

/* next(): the morsels, in order, through a decoder of the reader's own. */
static TlStatus nd_next(TlReader *base, TlBatch **out, TlError *err)
{
    NdReader *r = (NdReader *)base;
    *out = NULL;
    if (!r->own) TL_TRY(nd_decoder_new(base, &r->own, err));
    for (;;) {
        TlMorsel m;
        TlSchema *widen = NULL;
        TlBatch *b = NULL;
        bool got = false;
        TlStatus st;
        TL_TRY(nd_split(base, &m, &got, err));
        if (!got) return TL_OK;
        st = nd_decode(base, r->own, &m, &b, &widen, err);
        if (widen) {
            TlError werr;
            if (nd_widen(base, widen, &werr) != TL_OK) {
                *err = werr;
                st = werr.code;
            }
            tl_schema_free(widen);
            tl_free(widen);
        }
        if (st != TL_OK) return st;
        nd_count(base, b ? b->n_rows : 0, (int64_t)(m.end - m.begin));
        if (b) {
            *out = b;
            return TL_OK;
        }
    }
}

static void nd_close(TlReader *base)
{
    NdReader *r = (NdReader *)base;
    if (r->own) nd_decoder_free(r->own);
    if (r->keys) cursor_free(r->keys);
    tl_free(r->keys);
    tl_free(r->name);
    tl_buf_release(r->input);
    tl_schema_free(&r->schema);
    tl_free(r->fixed);
    tl_free(r->skip);
    tl_free(r->proj);
    tl_schema_free(&r->proj_schema);
    tl_free(r->base.stats.converted);
    tl_free(r);
}

/* See format.h: the keys after open's sample, found as a decoder finds
 * late keys (with a cursor of its own), go into the hints. */
static TlStatus nd_more_columns(TlReader *base, bool *found, TlError *err)
{
    NdReader *r = (NdReader *)base;
    NdCursor cu;
    TlSchema *w = NULL;
    TlStatus st;
    *found = false;
    if (!r->hints || r->hints->all_columns) return TL_OK;
    TL_TRY(tl_input_finish(r->input, err));
    st = cursor_init(r, &cu, r->keys, err);
    if (st == TL_OK) {
        /* to the input's end: a stream of unknown size that ended has
         * r->size the address space reserved for it */
        cu.size = tl_input_size(r->input);
        cu.pos = r->sample_end;
        cu.line = r->sample_line;
        st = tl_nd_scan_late(r, &cu, -1, err);
    }
    if (st == TL_OK && cu.full)
        st = tl_too_many_columns(err, r->name, cu.line, r->max_cols);
    if (st == TL_OK && cu.late.n_fields > 0) {
        st = tl_nd_late_widen(&cu, &w, err);
        if (st == TL_OK) st = nd_widen(base, w, err);
        *found = st == TL_OK;
    }
    if (st == TL_OK) r->hints->all_columns = true;
    if (w) {
        tl_schema_free(w);
        tl_free(w);
    }
    cursor_free(&cu);
    return st;
}

/* The line of record i of the morsel d decoded last (fmt_impl.h). */
static int64_t nd_row_line(const TlReader *r, TlDecoder *d, int64_t i)
{
    (void)r;
    return ((NdDecoder *)d)->cur.row_line[i];
}
/* Column k's field in record i of d's morsel; false when it has none. */
static bool value_field(const TlReader *base, TlDecoder *d, int64_t i, int k, NdField *f)
{
    const NdReader *r = (const NdReader *)base;
    const NdCursor *cu = &((NdDecoder *)d)->cur;
    if (k < 0 || k >= r->n_proj || i < 0 || i >= cu->n_rows) return false;
    *f = field_at(cu, r->proj[k], i);
    return !(f->kind == V_NULL && f->len == 0);
}

/* Where column k's value lies in record i (fmt_impl.h): the character its
 * value starts at; 0 when the record has no such key. */
static int64_t nd_row_col(const TlReader *base, TlDecoder *d, int64_t i, int k,
                          int64_t *line)
{
    NdField f;
    (void)line;
    if (!value_field(base, d, i, k, &f)) return 0;
    return tl_nd_value_col((const NdReader *)base, &((NdDecoder *)d)->cur, f);
}

/* See fmt_impl.h. */
size_t tl_ndjson_value_offset(const TlReader *r, TlDecoder *d, int64_t row, int k)
{
    NdField f;
    if (!value_field(r, d, row, k, &f)) return SIZE_MAX;
    return (size_t)f.off - (f.kind == V_STR || f.kind == V_STRESC);
}

static const TlReaderOps ndjson_ops = {
    .schema = nd_schema, .project = nd_project, .next = nd_next, .close = nd_close,
    .split = nd_split, .decoder_new = nd_decoder_new, .decoder_free = nd_decoder_free,
    .decode = nd_decode, .widen = nd_widen, .count = nd_count,
    .guess = nd_guess, .resplit = nd_resplit, .row_line = nd_row_line,
    .row_col = nd_row_col, .more_columns = nd_more_columns};

/* Add column name (type null) unless present; its index in *c. */
static TlStatus add_column(NdReader *r, NdCursor *cu, const char *name, int *c,
                           TlError *err)
{
    *c = tl_schema_find(&r->schema, name);
    if (*c >= 0) return TL_OK;
    if (r->schema.n_fields >= r->max_cols)
        return tl_too_many_columns(err, r->name, 0, r->max_cols);
    cu->err = err;
    TL_TRY(tl_nd_ensure_cols(cu, r->schema.n_fields + 1));
    TL_TRY(tl_schema_add(&r->schema, name, TL_TNULL, err));
    *c = r->schema.n_fields - 1;
    return TL_OK;
}

/* After the first batch: append hint columns it did not hold, apply
 * --schema (a name not in the data is added), infer the other types. */
static TlStatus decide_types(NdReader *r, NdCursor *cu, const TlSchema *fixed,
                             TlTypeHints *hints, TlError *err)
{
    int c;
    if (hints)
        for (int i = 0; i < hints->cols.n_fields; i++)
            TL_TRY(add_column(r, cu, hints->cols.fields[i].name, &c, err));
    if (fixed)
        for (int i = 0; i < fixed->n_fields; i++)
            if (!tl_fixed_is_glob(fixed->fields[i].name))
                TL_TRY(add_column(r, cu, fixed->fields[i].name, &c, err));
    r->fixed = tl_calloc((size_t)r->schema.n_fields + 1, sizeof *r->fixed);
    if (!r->fixed) return tl_error_oom(err);
    for (c = 0; fixed && c < r->schema.n_fields; c++) {
        int i = tl_fixed_find(fixed, r->schema.fields[c].name);
        if (i < 0) continue;
        r->schema.fields[c].type = fixed->fields[i].type;
        r->fixed[c] = true;
    }
    for (c = 0; c < r->schema.n_fields; c++) {
        TlType t = TL_TNULL;
        int64_t why;
        if (r->fixed[c]) continue;
        if (hints) {
            int h = tl_schema_find(&hints->cols, r->schema.fields[c].name);
            if (h >= 0) t = hints->cols.fields[h].type;
        }
        r->schema.fields[c].type = tl_nd_infer_column(cu, c, t, &why);
        if (why >= 0 && hints) {
            NdField f = field_at(cu, c, why);
            TL_TRY(tl_hint_note(hints, r->schema.fields[c].name, r->name,
                                cu->row_line[why], (const char *)cu->p + f.off, f.len,
                                false, err));
        }
    }
    return TL_OK;
}

/* One attempt of tl_ndjson_reader_open with the first need bytes of a
 * streamed input (the whole of any other); *sure false: the sample came
 * too near the end of the bytes it saw, so it may differ from the whole
 * input's (the reader is returned all the same). */
static TlStatus nd_open(const char *path, const TlReadOptions *opt, TlTypeHints *hints,
                        size_t need, bool *sure, size_t *next, TlReader **out,
                        TlError *err)
{
    NdReader *r;
    NdCursor *cu;
    int *all = NULL;
    size_t ready, full;
    TlStatus sample_st;
    *out = NULL;
    *sure = true;
    r = tl_calloc(1, sizeof *r);
    if (!r) return tl_error_oom(err);
    r->base.ops = &ndjson_ops;
    r->base.ctx = opt ? opt->ctx : NULL;
    r->hints = hints;
    r->split_line = 1;
    r->late_seq = INT64_MAX;
    r->fixed_bytes = (size_t)TL_TUNING(r->base.ctx)->nd_morsel_bytes;
    r->split_bytes = r->fixed_bytes ? r->fixed_bytes : MORSEL_FIRST;
    r->max_rows = opt && opt->morsel_rows > 0            ? opt->morsel_rows
                  : TL_TUNING(r->base.ctx)->nd_morsel_rows ? TL_TUNING(r->base.ctx)->nd_morsel_rows
                                                           : tl_ctx_batch_rows(r->base.ctx);
    r->max_cols = tl_max_columns(opt);
    r->name = tl_strdup(tl_escape_name(tl_input_name(path)).s);
    if (!r->name) goto oom;
    if (opt && opt->text) r->input = tl_buf_retain(opt->text);
    else if (tl_input_load_stream(r->base.ctx, path, &r->input, err) != TL_OK) goto fail;
    r->base.input = r->input;
    r->p = r->input->data;
    /* a streamed input: the sample sees the bytes ready (need); it is
     * taken when it ends TL_INPUT_AHEAD before their end, else the caller
     * opens again with more */
    if (tl_input_wait(r->input, need, &ready, err) != TL_OK) goto fail;
    full = tl_input_size(r->input);
    r->max_record = opt && opt->max_record ? opt->max_record : TL_MAX_RECORD;
    r->size = ready;
    *sure = ready >= full; /* an error from part of the input: try all of it */
    if (r->size >= 3 && r->p[0] == 0xEF && r->p[1] == 0xBB && r->p[2] == 0xBF)
        r->start = 3;
    r->keys = cu = tl_malloc(sizeof *cu);
    if (!cu) goto oom;
    if (cursor_init(r, cu, NULL, err) != TL_OK) goto fail;
    /* a bad line ends the sample; decoding reports it in its place (so a
     * problem before it in the input comes first whatever the sample) */
    sample_st = tl_nd_tokenize(cu, r->size, err);
    if (sample_st != TL_OK && err->code != TL_ERR_DATA) goto fail;
    r->sample_end = cu->pos;
    r->sample_line = cu->line;
    if (ready < full) {
        *sure = sample_st == TL_OK && cu->n_rows == cu->max_rows &&
                ready - cu->pos >= TL_INPUT_AHEAD;
        r->size = cu->size = full;
        if (!*sure) {
            /* the bytes may end inside a line: no longer than
             * --max-record-size */
            if (line_too_long(r, 0, ready, err) != TL_OK) {
                *sure = true;
                goto fail;
            }
            *next = tl_tail_line(r->p, 0, ready) + r->max_record + 1;
        }
    }
    r->max_rows = cu->max_rows; /* fewer for wide input */
    if (decide_types(r, cu, opt ? opt->schema : NULL, hints, err) != TL_OK) goto fail;
    r->n_open = cu->n_open = r->schema.n_fields;
    /* the sample's fields are not needed any more */
    for (int c = 0; c < cu->cols_cap; c++) {
        NdCol *col = &cu->cols[c];
        tl_free(col->f);
        tl_free(col->rows);
        *col = (NdCol){.seen = col->seen};
    }
    cu->n_rows = cu->n_touched = 0;
    r->base.stats.converted = tl_calloc((size_t)r->n_open + 1, sizeof(int64_t));
    r->skip = tl_calloc((size_t)r->n_open + 1, sizeof *r->skip);
    all = tl_malloc(((size_t)r->n_open + 1) * sizeof *all);
    if (!r->base.stats.converted || !r->skip || !all) goto oom;
    for (int i = 0; i < r->n_open; i++) all[i] = i;
    if (nd_project(&r->base, all, r->n_open, err) != TL_OK) goto fail;
    tl_free(all);
    *out = &r->base;
    return TL_OK;
oom:
    tl_error_oom(err);
fail:
    tl_free(all);
    nd_close(&r->base);
    return err->code;
}

/* Open the NDJSON input at path: load it, tokenize the first batch (which
 * discovers the columns) and decide every column's type.  Batches then
 * hold all columns until tl_reader_project.  hints (may be NULL) give
 * minimum types and extra columns by name and receive widened types and
 * late keys on restart.  A streamed input (fmt_impl.h) is opened on the
 * bytes ready, and again with more while the sample reaches their end. */
typedef struct NdOpenArgs {
    const char *path;
    const TlReadOptions *opt;
    TlTypeHints *hints;
} NdOpenArgs;

static TlStatus nd_open_try(void *ctx, size_t need, bool *sure, size_t *next,
                            TlReader **out, TlError *err)
{
    const NdOpenArgs *a = ctx;
    return nd_open(a->path, a->opt, a->hints, need, sure, next, out, err);
}

TlStatus tl_ndjson_reader_open(const char *path, const TlReadOptions *opt,
                               TlTypeHints *hints, TlReader **out, TlError *err)
{
    NdOpenArgs a = {path, opt, hints};
    return tl_reader_open_ready(nd_open_try, &a, out, err);
}
