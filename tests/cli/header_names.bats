#!/usr/bin/env bats
# Header names made unique without shadowing a real column (man tally,
# "Column names"): a repeat becomes name_2, name_3, ...; an empty name
# columnN (1-based); both skip every name the header holds; each rename of
# a duplicate is noted on standard error unless --quiet.

load helpers

@test "duplicates: a,a,a_1 keeps the real a_1 and names the second a a_2" {
    printf 'a,a,a_1\n1,2,3\n' > d.csv
    run_tally d.csv --select a_1
    assert_out 'a_1
3'
    [ "$stderr" = 'tally: note: d.csv: renamed duplicate column "a" (column 2) to "a_2"' ]
    run_tally d.csv
    assert_out 'a,a_2,a_1
1,2,3'
}

@test "duplicates: many repeats count up, skipping taken names" {
    printf 'a,a,a_2,a,b,a,b\n1,2,3,4,5,6,7\n' > d.csv
    run_tally d.csv
    assert_out 'a,a_3,a_2,a_4,b,a_5,b_2
1,2,3,4,5,6,7'
    assert_stderr_line 1 'tally: note: d.csv: renamed duplicate column "a" (column 2) to "a_3"'
    assert_stderr_line 2 'tally: note: d.csv: renamed duplicate column "a" (column 4) to "a_4"'
    assert_stderr_line 3 'tally: note: d.csv: renamed duplicate column "a" (column 6) to "a_5"'
    assert_stderr_line 4 'tally: note: d.csv: renamed duplicate column "b" (column 7) to "b_2"'
    [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 4 ]
}

@test "empty names: columnN by 1-based position, skipping taken names" {
    printf ',column1\n1,2\n' > e.csv
    run_tally e.csv --select column1
    assert_out 'column1
2'
    [ "$stderr" = 'tally: note: e.csv: column 1 has no name and "column1" is taken; named it "column1_2"' ]
    printf 'x,,""\n1,2,3\n' > f.csv
    assert_run_out f.csv <<'EOF'
x,column2,column3
1,2,3
EOF
}

@test "--quiet drops the notes; the names stay" {
    printf 'a,a,,column3\n1,2,3,4\n' > d.csv
    run_tally d.csv --quiet
    assert_ok
    assert_out 'a,a_2,column3_2,column3
1,2,3,4'
}

@test "the note comes once per run, also when the run restarts" {
    { echo 'a,a'; for i in $(seq 1 30); do echo "$i,$i"; done; echo 'x,1.5'; } > d.csv
    for th in 1 2; do
        TALLY_BATCH_ROWS=4 run_tally d.csv --threads $th
        [ "$status" -eq 0 ]
        [ "$(printf '%s\n' "$output" | sed -n '2p;$p')" = '1,1.0
x,1.5' ]
        [ "$stderr" = 'tally: note: d.csv: renamed duplicate column "a" (column 2) to "a_2"' ]
    done
}

@test "--no-header names are unaffected; a header of distinct names gives no note" {
    printf 'a,a\n1,2\n' > d.csv
    run_tally d.csv --no-header
    assert_ok
    assert_out 'column1,column2
a,a
1,2'
}

@test "a join's input is renamed and noted the same way" {
    printf 'k,v\n1,a\n' > l.csv
    printf 'k,w,w\n1,b,c\n' > r.csv
    run_tally l.csv --join r.csv --on k
    assert_out 'k,v,w,w_2
1,a,b,c'
    [ "$stderr" = 'tally: note: r.csv: renamed duplicate column "w" (column 3) to "w_2"' ]
}

@test "NDJSON: a repeated key and a flattened name equal to another key are one column" {
    printf '{"a":1,"a":2}\n{"a.b":1,"a":{"b":2}}\n' > n.ndjson
    assert_run_out n.ndjson <<'EOF'
a,a.b
2,
,2
EOF
}

@test "names: past ten renames one line says how many more" {
    printf 'a,a,a,a,a,a,a,a,a,a,a,a,a\n1,2,3,4,5,6,7,8,9,10,11,12,13\n' > m.csv
    run_tally m.csv --select a_13
    assert_out "a_13
13"
    assert_stderr_line 10 'tally: note: m.csv: renamed duplicate column "a" (column 11) to "a_11"'
    assert_stderr_line 11 'tally: note: m.csv: 2 more columns renamed the same way (--quiet hides these notes)'
    [ "$(printf '%s\n' "$stderr" | wc -l)" = 11 ]
}
