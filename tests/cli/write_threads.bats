#!/usr/bin/env bats
# run-cli: weight=15 matrix
# The writers format batches in parallel and write them in order
# (formats/write_common.c): CSV, TSV and NDJSON output and NDJSON's warnings
# are the same bytes for every --threads and batch size, and a write that
# fails midway (I/O fault shim) leaves nothing behind under --threads 3.

load helpers

# gen ROWS: w.csv with ints, floats (-0.0, inf, nan, tiny), strings with
# quotes, delimiters, embedded newlines and invalid UTF-8, dates and nulls.
gen() {
    awk -v n="$1" 'BEGIN {
        s = 4242
        print "i,f,s,d"
        for (r = 0; r < n; r++) {
            s = (s * 1103515245 + 12345) % 2147483648
            i = (s % 7 == 0) ? "" : s - 1000000000
            k = s % 11
            f = k == 0 ? "-0.0" : k == 1 ? "inf" : k == 2 ? "nan" : k == 3 ? "" : k == 4 ? "1e-5" : (s % 100000) / 7
            k = int(s / 11) % 9
            t = k == 0 ? "\"say \"\"hi\"\", ok\"" : k == 1 ? "\"two\nlines\"" : k == 2 ? "" : k == 3 ? "bad \377 byte" : k == 4 ? "tab\there" : "plain" r
            d = (s % 13 == 0) ? "" : sprintf("20%02d-%02d-%02d", s % 30, s % 12 + 1, s % 28 + 1)
            print i "," f "," t "," d
        }
    }' > w.csv
}

# same_bytes FORMAT ARGS...: w.csv ARGS -o out.FORMAT under --threads 1, 2,
# 3 and 8 (8 only under ASan: matrix_threads, helpers.bash), default
# batches and TALLY_BATCH_ROWS=7: exit 0, and the same file, standard
# output and standard error as the first run, --threads 1 with default
# batches (tally_matrix --out, helpers.bash).  Leaves that run's file in
# base.FORMAT and its standard error in base.err.
same_bytes() {
    local fmt=$1 rows t st
    shift
    {
        for rows in "" 7; do
            for t in $(matrix_threads 1 2 3 8); do
                echo "TALLY_BATCH_ROWS=$rows --threads $t"
            done
        done
    } | tally_matrix --out "out.$fmt" w.csv "$@" -o "out.$fmt" || return 1
    read -r st < mx/want.status
    [ "$st" -eq 0 ] || { echo "status $st"; cat mx/want.err; return 1; }
    cp mx/want.file "base.$fmt"
    cp mx/want.err base.err
}

@test "CSV output is the same bytes for every thread count and batch size" {
    gen 150000
    same_bytes csv
    [ "$(wc -c < base.csv)" -gt 3000000 ]
    # the writer only re-spells what it read
    run --separate-stderr "$TALLY" base.csv --threads 3 -o again.csv
    [ "$status" -eq 0 ]
    cmp base.csv again.csv
}

@test "TSV and a pipeline's output are the same bytes for every thread count" {
    gen 100000
    same_bytes tsv --with 'g = i % 10' --filter 'i is null or i > -900000000'
}

@test "NDJSON output and its warnings are the same for every thread count" {
    gen 120000
    same_bytes ndjson
    grep -q 'inf/nan values written as null' base.err
    grep -q 'strings held invalid UTF-8' base.err
    [ "$(wc -l < base.ndjson)" -eq 120000 ]
}

@test "a write failing at any point under --threads 3 leaves the old output" {
    [ -z "${TALLY_ASAN:-}" ] || skip "LD_PRELOAD shim is not used with ASan"
    SHIM="$BATS_TEST_DIRNAME/../../build/iofail.so"
    [ -f "$SHIM" ] || skip "build/iofail.so not built"
    gen 60000
    printf 'old contents\n' > out.csv
    n=1
    while :; do
        run env LD_PRELOAD="$SHIM" TALLY_IOFAIL="write:$n:ENOSPC" "$TALLY" w.csv --threads 3 -o out.csv
        [ "$status" -eq 0 ] && break
        [ "$status" -eq 1 ]
        [[ "$output" == "tally: "*"out.csv"*"No space left on device"* ]]
        [ "$(cat out.csv)" = "old contents" ]
        [ -z "$(ls -A | grep -v -e '^w.csv$' -e '^out.csv$')" ]
        n=$((n + 1))
        [ $n -le 1000 ]
    done
    [ "$n" -gt 5 ]   # the output really took several writes
    run "$TALLY" w.csv --threads 1 -o base.csv
    cmp base.csv out.csv
}
