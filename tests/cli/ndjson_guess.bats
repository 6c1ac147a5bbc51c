#!/usr/bin/env bats
# NDJSON guessed morsel ends (formats/ndjson_read.c, nd_split / nd_resplit;
# format.h, tl_reader_guess): a scan cuts each morsel at the first LF past
# its target size without reading (or counting the lines of) the bytes
# before it; a guessed morsel that holds a record ended by a lone CR, as
# many line ends as a batch may hold, an error or a new key is split again
# carefully, its line counted from the start.  Values, errors (with their
# line numbers), restarts and --stats must be those of the careful split
# (TALLY_NO_GUESS=1) for every thread count and batch size.

load helpers

# gen N KIND: in.ndjson, N lines of ~40 bytes (several morsels); KIND:
# plain, lonecr (every third record ended by a lone CR, blank lines),
# bad (a bad number near the end, after lone CRs), late (a new key and a
# float near the end).
gen() {
    awk -v n="$1" -v kind="$2" 'BEGIN {
        for (i = 0; i < n; i++) {
            line = sprintf("{\"id\":%d,\"g\":\"g%02d\",\"v\":%d}", i, i % 13, (i * 7) % 1000)
            if (kind == "bad" && i == n - 300) line = "{\"id\":1,\"g\":\"x\",\"v\":01}"
            if (kind == "late" && i == n - 300) line = "{\"id\":1,\"g\":\"x\",\"v\":2.5,\"new\":true}"
            end = "\n"
            if (kind != "plain" && i % 3 == 1) end = "\r"
            if (kind != "plain" && i % 501 == 9) end = "\n \n\n"
            printf "%s%s", line, end
        }
    }' > in.ndjson
}

# same_as_careful ARGS...: tally ARGS under --threads 1, 2 and 7 gives the
# same status, output and errors as the careful split (TALLY_NO_GUESS=1,
# --threads 1), with the default batch size and with 7 rows.
same_as_careful() {
    local rows t want_status
    for rows in "" 7; do
        TALLY_NO_GUESS=1 TALLY_BATCH_ROWS=$rows tally_files want "$@" --threads 1
        want_status=$status
        for t in $(matrix_threads 1 2 7); do
            TALLY_BATCH_ROWS=$rows tally_files got "$@" --threads "$t"
            [ "$status" = "$want_status" ] || { echo "status $status, wanted $want_status ($t, $rows)"; return 1; }
            cmp want.out got.out
            cmp want.err got.err
        done
    done
}

@test "ndjson guess: plain lines, lone CRs and blank lines read as the careful split reads them" {
    gen 12000 plain
    same_as_careful in.ndjson --group-by g --agg 'n = count(), s = sum(v)' --sort g -o -
    gen 12000 lonecr
    same_as_careful in.ndjson --select 'id, v' -o -
    same_as_careful in.ndjson --stats --group-by g --agg 'n = count()' -o -
}

@test "ndjson guess: an error late in the input names the careful split's line" {
    gen 12000 bad
    same_as_careful in.ndjson --select id -o -
    run_tally in.ndjson --select id -o out.csv
    assert_err 1 "tally: in.ndjson:11749:22: ',' or '}' expected"
    assert_only_files in.ndjson want.out want.err got.out got.err
}

@test "ndjson guess: a new key and a wider type late in the input restart as before" {
    gen 12000 late
    same_as_careful in.ndjson --group-by g --agg 'n = count(), s = sum(v)' --sort g -o -
    same_as_careful in.ndjson --select 'id, v' -o -
}
