#!/usr/bin/env bats
# Header detection (man tally, "Header detection"): without --header or
# --no-header, line 1 of a CSV/TSV input is data when each of its values
# fits the kind its column has in the records after it; names over numbers
# are a header, numbers only (or numbers beside text) are data, text only
# is a header.  A line read as data is noted on standard error.

load helpers

NOTE='tally: note: d.csv: line 1 read as data, not as a header (its values fit their columns): columns column1...; --header reads it as names'

@test "header: names over numbers are a header, with no note" {
    printf 'id,amount\n1,2.5\n2,3\n' > d.csv
    assert_run_out d.csv <<'EOF2'
id,amount
1,2.5
2,3.0
EOF2
}

@test "header: a file of numbers is data from line 1, named column1..., and noted" {
    printf '1,2.5\n2,3.5\n' > d.csv
    run_tally d.csv
    assert_out 'column1,column2
1,2.5
2,3.5'
    [ "$status" -eq 0 ]
    [ "$stderr" = "$NOTE" ]
    run_tally d.csv --agg 's = sum(column1)' --quiet
    assert_ok
    assert_out 's
3'
}

@test "header: numbers beside a text column are data (text fits text)" {
    printf '1,alice\n2,bob\n' > d.csv
    run_tally d.csv
    assert_out 'column1,column2
1,alice
2,bob'
    [ "$stderr" = "$NOTE" ]
}

@test "header: a file of text only has a header" {
    printf 'alice,paris\nbob,london\n' > d.csv
    assert_run_out d.csv <<'EOF2'
alice,paris
bob,london
EOF2
}

@test "header: years over amounts read as data; --header reads them as names" {
    printf '2019,2020\n5,6\n' > d.csv
    run_tally d.csv
    assert_out 'column1,column2
2019,2020
5,6'
    [ "$stderr" = "$NOTE" ]
    assert_run_out d.csv --header <<'EOF2'
2019,2020
5,6
EOF2
}

@test "header: --no-header reads names as data, quietly" {
    printf 'id,amount\n1,2\n' > d.csv
    assert_run_out d.csv --no-header <<'EOF2'
column1,column2
id,amount
1,2
EOF2
}

@test "header: --header with --no-header is a usage error" {
    printf '1,2\n' > d.csv
    run_tally d.csv --header --no-header
    assert_err 2 'tally: --header and --no-header exclude each other (line 1 is either the header or data)'
}

@test "header: a decimal on line 1 does not fit an integer column, an integer fits a decimal one" {
    printf '1.5\n3\n2\n' > d.csv
    assert_run_out d.csv <<'EOF2'
1.5
3
2
EOF2
    printf '3\n1.5\n2\n' > d.csv
    run_tally d.csv --quiet
    assert_ok
    assert_out 'column1
3.0
1.5
2.0'
}

@test "header: dates, times, timestamps and booleans are kinds; a date fits a timestamp column" {
    printf '2024-01-31,t,9:30\n2024-02-01,f,10:00:00\n' > d.csv
    run_tally d.csv --quiet
    assert_ok
    assert_out 'column1,column2,column3
2024-01-31,t,9:30
2024-02-01,f,10:00:00'
    printf '31.01.2024,x\n1/2/24,y\n' > d.csv
    run_tally d.csv --quiet
    assert_ok
    assert_out 'column1,column2
31.01.2024,x
1/2/24,y'
    printf '2024-01-31,x\n2024-02-01T10:00:00Z,y\n' > d.csv
    run_tally d.csv --quiet
    assert_ok
    assert_out 'column1,column2
2024-01-31,x
2024-02-01T10:00:00Z,y'
    # a timestamp with an offset is a timestamptz, written in UTC
    printf 'day,x\n2024-01-31 10:00:00+02:00,y\n' > d.csv
    assert_run_out d.csv <<'EOF2'
day,x
2024-01-31 08:00:00+00,y
EOF2
}

@test "header: a leading zero or a plus sign is text, as in type inference" {
    printf '007,1\n008,2\n' > d.csv
    run_tally d.csv --quiet
    assert_ok
    assert_out 'column1,column2
007,1
008,2'
    printf '+1\n+2\n' > d.csv
    assert_run_out d.csv <<'EOF2'
+1
+2
EOF2
}

@test "header: a column empty in the sample fits no value, an empty line 1 field fits any" {
    printf '1,x\n2,\n3,\n' > d.csv
    assert_run_out d.csv <<'EOF2'
1,x
2,
3,
EOF2
    printf '1,\n2,x\n' > d.csv
    run_tally d.csv --quiet
    assert_ok
    assert_out 'column1,column2
1,
2,x'
}

@test "header: a line 1 of empty fields is a header (generated names)" {
    printf ',\n1,2\n' > d.csv
    assert_run_out d.csv <<'EOF2'
column1,column2
1,2
EOF2
}

@test "header: a single line is a header only when all its fields are text" {
    printf 'a,b\n' > d.csv
    assert_run_out d.csv <<'EOF2'
a,b
EOF2
    printf '1,StreetA\n' > d.csv
    run_tally d.csv
    assert_out 'column1,column2
1,StreetA'
    [ "$stderr" = "$NOTE" ]
    printf 'AAA,\n' > d.csv
    run_tally d.csv --quiet
    assert_ok
    assert_out 'column1,column2
AAA,'
}

@test "header: a text value anywhere in the first 20,480 records counts, none after" {
    { echo 1; seq 2 3000; echo bla; } > d.csv
    run_tally d.csv --agg 'n = count()'
    assert_ok
    assert_out 'n
3000'
    { seq 1 20481; echo bla; } > d.csv
    run_tally d.csv --agg 'n = count()' --quiet --schema 'column1:string'
    assert_ok
    assert_out 'n
20482'
}

@test "header: --null text and TSV's \\N are empty; spaces around a value are ignored" {
    printf 'NA,1\n2, 3\n' > d.csv
    run_tally d.csv --null NA --quiet
    assert_ok
    assert_out 'column1,column2
,1
2, 3'
    printf '\\N\tx\n1\ty\n' > d.tsv
    run_tally d.tsv --quiet
    assert_ok
    assert_out 'column1,column2
,x
1,y'
}

@test "header: --decimal-comma numbers, standard input, --skip names the line judged" {
    printf '1,5;2\n2,5;3\n' > d.csv
    run_tally d.csv --decimal-comma --quiet
    assert_ok
    assert_out 'column1,column2
1.5,2
2.5,3'
    run_tally_in $'1,2\n3,4\n' -
    assert_out 'column1,column2
1,2
3,4'
    [ "$stderr" = 'tally: note: <stdin>: line 1 read as data, not as a header (its values fit their columns): columns column1...; --header reads it as names' ]
    printf 'exported today\n1,2\n' > d.csv
    run_tally d.csv --skip 1
    assert_out 'column1,column2
1,2'
    [ "$stderr" = 'tally: note: d.csv: line 2 read as data, not as a header (its values fit their columns): columns column1...; --header reads it as names' ]
}

@test "header: --schema naming a column of a line read as data says why it is missing" {
    printf '1,2\n3,4\n' > d.csv
    run_tally d.csv --schema 'id:int' --quiet
    assert_err 2 'tally: --schema: no column "id" in d.csv (line 1 was read as data, so the columns are column1...: --header reads it as names)'
    run_tally d.csv --schema '1:string' --header
    assert_ok
    assert_out '1,2
3,4'
    run_tally d.csv --schema 'column1:string' --quiet
    assert_ok
    assert_out 'column1,column2
1,2
3,4'
}

@test "header: pipeline files take \"header\" and \"no_header\"; the command line wins" {
    printf '1,2\n3,4\n' > d.csv
    printf '{"input": "d.csv", "header": true}\n' > p.json
    assert_run_out -f p.json <<'EOF2'
1,2
3,4
EOF2
    printf '{"input": "d.csv", "no_header": true}\n' > q.json
    assert_run_out -f q.json --header <<'EOF2'
1,2
3,4
EOF2
    printf '{"input": "d.csv", "header": true, "no_header": true}\n' > r.json
    run_tally -f r.json
    assert_err 2 'tally: --header and --no-header exclude each other (line 1 is either the header or data)'
    printf '{"input": "d.csv", "header": "yes"}\n' > s.json
    run_tally -f s.json
    assert_err_glob 2 'tally: s.json*header*expected true or false*'
}

@test "header: the right side of a join is judged on its own; --header reaches it" {
    printf 'k,v\n1,a\n2,b\n' > l.csv
    printf '1,x\n2,y\n' > r.csv
    run_tally l.csv --join r.csv --on 'k=column1' --quiet
    assert_ok
    assert_out 'k,v,column2
1,a,x
2,b,y'
    assert_run_out l.csv --join r.csv --on 'k="1"' --header <<'EOF2'
k,v,x
2,b,y
EOF2
}
