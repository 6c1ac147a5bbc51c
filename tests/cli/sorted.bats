#!/usr/bin/env bats
# --sorted: a key that comes back after its run ended is a data error naming
# the input file and the physical line where the offending record starts
# (the reader locates the record: quoted fields spanning lines, empty lines,
# several inputs, standard input, NDJSON), or the row of the group-by's input
# when the rows are not the input's records one to one (a filter below).
# Lines were counted by hand.

load helpers

@test "sorted: quoted fields with line ends and empty lines: the record's first line" {
    # records: a (lines 2-3), b (5-7), a (8); line 4 and 6 are empty
    printf 'k,note\na,"x\ny"\n\nb,"p\n\nq"\na,z\n' > q.csv
    local t
    for t in 1 2 7; do
        run_tally q.csv --sorted --group-by k --agg 'n = count()' --threads "$t" -o out.csv
        assert_err 1 'tally: q.csv:8: --sorted: key k="a" reappears after its run ended'
        TALLY_BATCH_ROWS=1 run_tally q.csv --sorted --group-by k --agg 'n = count()' --threads "$t"
        assert_err 1 'tally: q.csv:8: --sorted: key k="a" reappears after its run ended'
    done
    assert_only_files q.csv
    # CRLF line ends, and a quoted field that ends a line inside quotes
    printf 'k,v\r\nb,"1\r\n2"\r\nc,3\r\nb,4\r\n' > crlf.csv
    run_tally crlf.csv --sorted --group-by k --agg 'n = count()'
    assert_err 1 'tally: crlf.csv:5: --sorted: key k="b" reappears after its run ended'
}

@test "sorted: a one-column file: an empty line is a null record and counts" {
    printf 'k\na\n\nb\na\n' > c1.csv
    run_tally c1.csv --sorted --group-by k --agg 'n = count()'
    assert_err 1 'tally: c1.csv:5: --sorted: key k="a" reappears after its run ended'
}

@test "sorted: several inputs: the file the record is in, its line there" {
    printf 'k,v\na,1\nb,2\n' > one.csv
    printf 'k,v\nb,3\n\nc,4\na,5\n' > two.csv
    run_tally one.csv two.csv --sorted --group-by k --agg 'n = count()' -o out.csv
    assert_err 1 'tally: two.csv:5: --sorted: key k="a" reappears after its run ended'
    # the violation in the first file
    printf 'k,v\na,1\nb,2\na,3\n' > three.csv
    run_tally three.csv two.csv --sorted --group-by k --agg 'n = count()'
    assert_err 1 'tally: three.csv:4: --sorted: key k="a" reappears after its run ended'
    assert_only_files one.csv two.csv three.csv
}

@test "sorted: standard input, NDJSON, projections in between" {
    printf 'region,qty\nnorth,1\nnorth,2\nsouth,3\neast,4\neast,5\nsouth,6\n' > s.csv
    run_tally_in "$(cat s.csv)" - --sorted --group-by region --agg 'n = count()'
    assert_err 1 'tally: <stdin>:7: --sorted: key region="south" reappears after its run ended'
    run_tally s.csv --sorted --with 'r = upper(region)' --select r,qty --group-by r --agg 'n = count()'
    assert_err 1 'tally: s.csv:7: --sorted: key r="SOUTH" reappears after its run ended'
    printf '{"k":"a"}\n{"k":"b"}\n\n{"k":"a"}\n' > d.ndjson
    run_tally d.ndjson --sorted --group-by k --agg 'n = count()'
    assert_err 1 'tally: d.ndjson:4: --sorted: key k="a" reappears after its run ended'
}

@test "sorted: after a filter the message names the row of the group-by's input" {
    printf 'region,qty\nnorth,1\nnorth,2\nsouth,3\neast,4\neast,5\nsouth,6\n' > s.csv
    local t
    for t in 1 2; do
        run_tally s.csv --filter 'qty > 1' --sorted --group-by region --agg 'n = count()' --threads "$t" -o out.csv
        assert_err 1 "tally: --sorted: key region=\"south\" reappears at row 5 of the group-by's input after its run ended"
    done
    assert_only_files s.csv
}
