#!/usr/bin/env bats
# run-cli: weight=15 matrix
# NDJSON read as morsels (formats/ndjson_read.c) and --with-filename
# (formats/filename.c) under --threads: the output, the errors and --stats
# are byte-identical for every thread count, and (no float sums here) for
# every batch size.

load helpers

# same_everywhere ARGS...: run tally with ARGS under --threads 1, 2, 3 and 8
# (8 only under ASan: matrix_threads, helpers.bash), with the default
# batch size and with TALLY_BATCH_ROWS=7 and 1000; every run ends with the
# same status, standard output and standard error as the first (one
# tally_matrix, helpers.bash).  With STATS_PER_BATCH_SIZE set, a
# tally_matrix per batch size, whose reference's status and standard
# output must be the first batch size's: --stats counts batches and
# restarts, which follow the batch size, so standard error is compared per
# batch size only.  The last matrix's reference results are left in
# $status, $output and $stderr (every run agreed with them).
same_everywhere() {
    local rows
    if [ -z "${STATS_PER_BATCH_SIZE:-}" ]; then
        size_variants "" 7 1000 | tally_matrix "$@" || return 1
    else
        for rows in "" 7 1000; do
            size_variants "$rows" | tally_matrix "$@" || return 1
            if [ -z "$rows" ]; then
                cp mx/want.out mx/first.out
                cp mx/want.status mx/first.status
            elif ! cmp -s mx/first.status mx/want.status || ! cmp -s mx/first.out mx/want.out; then
                echo "--- differs: TALLY_BATCH_ROWS=$rows from the default batch size: $*"
                echo "status $(cat mx/first.status) / $(cat mx/want.status)"
                diff mx/first.out mx/want.out | head -20
                return 1
            fi
        done
    fi
    matrix_result
}

# size_variants ROWS...: same_everywhere's variants (tally_matrix):
# TALLY_BATCH_ROWS=ROWS under --threads 1, 2, 3 and 8 (matrix_threads).
size_variants() {
    local rows t
    for rows in "$@"; do
        for t in $(matrix_threads 1 2 3 8); do
            echo "TALLY_BATCH_ROWS=$rows --threads $t"
        done
    done
}

# nd ROWS [LATE]: a fixed pseudo-random NDJSON file in.ndjson: nested
# objects, arrays, escapes and surrogate pairs, missing keys, blank lines,
# CRLF and lone-CR line ends; with LATE, from that line on a new key and a
# float where ints were.
nd() {
    awk -v n="$1" -v late="${2:-0}" 'BEGIN {
        s = 4242
        for (i = 0; i < n; i++) {
            for (j = 0; j < 8; j++) { s = (s * 16807) % 2147483647; r[j] = s }
            if (r[7] % 53 == 0) { printf "  \r\n"; continue }
            line = sprintf("{\"id\":%d,\"g\":\"g%02d\"", i, r[0] % 12)
            if (r[1] % 7 != 0) line = line sprintf(",\"v\":%d", r[1] % 1000 - 500)
            if (r[2] % 5 == 0) line = line ",\"s\":\"tab\\there \\\"q\\\" \\u00e9 \\ud83d\\ude00\""
            else line = line sprintf(",\"s\":\"plain %d\"", r[2] % 100)
            line = line sprintf(",\"o\":{\"a\":%d,\"b\":{\"c\":%s}}", r[3] % 10,
                                r[4] % 3 ? "true" : "null")
            if (r[5] % 11 == 0) line = line ",\"arr\":[1, {\"k\" : \"v\"}]"
            if (late && i >= late) {
                line = line sprintf(",\"x\":%d.5", r[6] % 10)
                if (i % 97 == 0) line = line ",\"v\":0.25"
            }
            line = line "}"
            e = r[6] % 10
            printf "%s%s", line, e < 7 ? "\n" : e < 9 ? "\r\n" : "\r"
        }
    }' > in.ndjson
}

@test "ndjson threads: a whole file, a group-by, a filter, a head" {
    nd 6000
    same_everywhere in.ndjson
    [ "$status" -eq 0 ]
    [ "$(printf '%s\n' "$output" | wc -l)" -eq "$(( $(grep -o '{"id"' in.ndjson | wc -l) + 1 ))" ]
    [ "$(printf '%s\n' "$output" | head -1)" = "id,g,v,s,o.a,o.b.c,arr" ]
    same_everywhere in.ndjson --group-by g --agg 'n = count(), v = sum(v), a = max("o.a")'
    assert_ok
    [ "$(printf '%s\n' "$output" | wc -l)" -eq 13 ]
    same_everywhere in.ndjson --filter 'v > 400 and "o.b.c"' --select 'id, s, arr'
    assert_ok
    same_everywhere in.ndjson --head 5 --select 'id, g'
    assert_ok
    assert_out $'id,g\n0,g06\n1,g11\n2,g09\n3,g05\n4,g09'
}

@test "ndjson threads: a new key and a wider type late in the file restart the same way" {
    # (a key first seen after the inference sample cannot be named in the
    # pipeline: the plan knows the sample's columns; whole rows show it)
    nd 6000 4000
    same_everywhere in.ndjson --group-by g --agg 'v = sum(v)' --sort g
    assert_ok
    [ "$(printf '%s\n' "$output" | head -2)" = $'g,v\ng00,-9362.75' ]
    STATS_PER_BATCH_SIZE=1 same_everywhere in.ndjson --stats -o out.csv
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"rows_read: $(grep -o '{"id"' in.ndjson | wc -l)"* ]]
    [ "$(head -1 out.csv)" = "id,g,v,s,o.a,o.b.c,arr,x" ]
    grep -q '^4000,g10,-468.0,plain 4,2,true,,9.5$' out.csv
}

@test "ndjson threads: the first bad line is reported, the same for every thread count" {
    nd 6000
    { head -n 3000 in.ndjson; printf '{"id":1,"g":tru}\n'; cat in.ndjson; } > bad.ndjson
    same_everywhere bad.ndjson --group-by g --agg 'n = count()'
    [ "$status" -eq 1 ]
    # lines end at LF, CRLF or a lone CR after an object
    line=$(( $(head -n 3000 in.ndjson | sed 's/\r$//' | tr '\r' '\n' | wc -l) + 1 ))
    [ "$stderr" = "tally: bad.ndjson:$line:13: invalid value (expected a string, number, object, array, true, false or null)" ]
    # a value --schema cannot take before it comes first
    { head -n 1000 in.ndjson; printf '{"id":"seven"}\n'; cat bad.ndjson; } > bad2.ndjson
    same_everywhere bad2.ndjson --schema 'id:int' --select id
    [ "$status" -eq 1 ]
    [[ "$stderr" == *':7: "seven" is not a valid int64 (column "id")' ]]
}

@test "ndjson threads: --with-filename over several NDJSON and CSV inputs" {
    nd 3000
    mv in.ndjson a.ndjson
    nd 2000 1500
    mv in.ndjson b.ndjson
    awk 'BEGIN { print "id,g,v"; for (i = 0; i < 4000; i++) printf "%d,g%02d,%d\n", i, i % 12, i % 9 }' > c.csv
    same_everywhere a.ndjson c.csv b.ndjson --with-filename
    assert_ok
    [ "$(printf '%s\n' "$output" | head -2)" = $'filename,id,g,v,s,o.a,o.b.c,arr,x\na.ndjson,0,g06,379.0,plain 31,1,,,' ]
    [ "$(printf '%s\n' "$output" | grep -c '^c.csv,')" -eq 4000 ]
    same_everywhere a.ndjson c.csv b.ndjson --with-filename --group-by filename --agg 'n = count(), v = sum(v)'
    assert_ok
    same_everywhere c.csv b.ndjson --with-filename --filter 'id % 1000 == 999' --select 'filename, id'
    assert_ok
    assert_out $'filename,id\nc.csv,999\nc.csv,1999\nc.csv,2999\nc.csv,3999\nb.ndjson,999\nb.ndjson,1999'
}

@test "ndjson and csv: pages given back after decoding (mapped file) read the same as standard input" {
    # long strings are views into the input; the mapped file's decoded pages
    # are dropped (tl_input_drop) and fault in again; stdin is a heap buffer,
    # never dropped.  ~3 MB, so many morsels and pages.
    awk 'BEGIN { for (i = 0; i < 40000; i++)
        printf "{\"k\":\"key-%05d-long-enough-for-a-view\",\"g\":%d,\"v\":%d}\n", i, i % 7, i }' > big.ndjson
    awk 'BEGIN { print "k,g,v"; for (i = 0; i < 40000; i++)
        printf "key-%05d-long-enough-for-a-view,%d,%d\n", i, i % 7, i }' > big.csv
    for f in big.ndjson big.csv; do
        fmt=${f#big.}
        run_tally "$f" --filter 'v % 997 = 0' --threads 2
        [ "$status" -eq 0 ]
        mapped=$output
        run bash -c "cat $f | '$TALLY' - --from $fmt --filter 'v % 997 = 0' --threads 2"
        [ "$status" -eq 0 ]
        [ "$output" = "$mapped" ]
        [ "${#lines[@]}" -eq 42 ]
        [ "${lines[1]}" = "key-00000-long-enough-for-a-view,0,0" ]
        [ "${lines[41]}" = "key-39880-long-enough-for-a-view,1,39880" ]
    done
}
