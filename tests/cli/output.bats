#!/usr/bin/env bats
# run-cli: weight=5
# Output formatting (floats as Python repr / DuckDB, dates, timestamps,
# booleans, null vs ""), atomic -o and its format suffix, and a closed
# standard output.

load helpers

setup() {
    enter_workdir
    printf 'x\n1\n' > one.csv
}

@test "floats: shortest round-trip digits, positional between 1e-4 and 1e16" {
    assert_run_out one.csv --select '71.0 as a, 0.1 as b, 0.00001 as c, 1e16 as d, 1e15 as e, 2.5e-07 as f, 0.1 + 0.2 as g, 0.0001 as h, 9999999999999998.0 as i, 1.5e300 as j, 5e-324 as k, 123456789.125 as l' <<'EOF'
a,b,c,d,e,f,g,h,i,j,k,l
71.0,0.1,1e-05,1e+16,1000000000000000.0,2.5e-07,0.30000000000000004,0.0001,9999999999999998.0,1.5e+300,5e-324,123456789.125
EOF
}

@test "floats: inf, -inf, nan and -0.0" {
    assert_run_out one.csv --select '1/0 as a, -1/0 as b, 0/0 as c, -0.0 as d, 1e308 * 10 as e, -(1e308 * 10) as f' <<'EOF'
a,b,c,d,e,f
inf,-inf,nan,-0.0,inf,-inf
EOF
}

@test "floats read from CSV are written in the same layout" {
    printf 'v\n1.50\n1e3\n-0.0\ninf\n-inf\nnan\n.5\n1E-7\n1.2345678901234567e+19\n' > f.csv
    assert_run_out f.csv <<'EOF'
v
1.5
1000.0
-0.0
inf
-inf
nan
0.5
1e-07
1.2345678901234567e+19
EOF
    # an integer a double cannot hold keeps the column's text as it is
    printf 'v\n1.5\n12345678901234567890\n' > g.csv
    assert_run_out g.csv <<'EOF'
v
1.5
12345678901234567890
EOF
}

@test "integer division results are floats" {
    assert_run_out one.csv --select '7 / 2 as a, 6 / 3 as b, x / 3 as c' <<'EOF'
a,b,c
3.5,2.0,0.3333333333333333
EOF
}

@test "booleans are true and false" {
    assert_run_out one.csv --select '1 < 2 as t, 1 > 2 as f, null::bool as n' <<'EOF'
t,f,n
true,false,
EOF
}

@test "dates are YYYY-MM-DD" {
    assert_run_out one.csv --select "date '2024-01-31' as a, date '2024-02-29' as b, date '1969-12-31' as c" <<'EOF'
a,b,c
2024-01-31,2024-02-29,1969-12-31
EOF
}

@test "timestamps trim the fraction's trailing zeros" {
    assert_run_out one.csv --select "timestamp '2024-01-31 12:00:00' as a, timestamp '2024-01-31 03:04:05.5' as b, timestamp '2024-01-31 03:04:05.120' as c, timestamp '2024-01-31 03:04:05.000001' as d, timestamp '2024-01-31 03:04:05.123456' as e" <<'EOF'
a,b,c,d,e
2024-01-31 12:00:00,2024-01-31 03:04:05.5,2024-01-31 03:04:05.12,2024-01-31 03:04:05.000001,2024-01-31 03:04:05.123456
EOF
}

@test "timestamps read with a T are written with a space" {
    printf 't\n2024-05-06T07:08:09\n2024-05-06 07:08:09.250\n' > t.csv
    assert_run_out t.csv <<'EOF'
t
2024-05-06 07:08:09
2024-05-06 07:08:09.25
EOF
}

@test "date_trunc returns a timestamp" {
    assert_run_out one.csv --select "date_trunc('month', date '2024-03-15') as m, date_trunc('hour', timestamp '2024-03-15 10:45:30') as h" <<'EOF'
m,h
2024-03-01 00:00:00,2024-03-15 10:00:00
EOF
}

@test "cast(x as string) formats the same way" {
    assert_run_out one.csv --select "cast(1.0 as string) as a, cast(1e16 as string) as b, cast(date '2024-01-02' as string) as c, cast(true as string) as d, cast(timestamp '2024-01-02 03:04:05.5' as string) as e, length(cast(0.1 + 0.2 as string)) as n" <<'EOF'
a,b,c,d,e,n
1.0,1e+16,2024-01-02,true,2024-01-02 03:04:05.5,19
EOF
}

@test "null is an empty field, an empty string is \"\"" {
    assert_run_out one.csv --select "'' as e, null as n, 'x' as s, x" <<'EOF'
e,n,s,x
"",,x,1
EOF
}

@test "fields and names that need quotes get them" {
    assert_run_out one.csv --select "'a\"b' as \"q,1\", 'l1
l2' as nl, 'x,y' as c" <<'EOF'
"q,1",nl,c
"a""b","l1
l2","x,y"
EOF
}

@test "a filter that keeps nothing writes the header" {
    assert_run_out one.csv --filter 'x > 5' <<'EOF'
x
EOF
}

@test "output is byte-identical from run to run" {
    { echo 'k,v'; for i in $(seq 1 300); do echo "k$((i % 7)),$i.25"; done; } > d.csv
    run_tally d.csv --group-by k --agg 's = sum(v), m = mean(v), sd = std(v)' -o a.csv
    assert_ok
    run_tally d.csv --group-by k --agg 's = sum(v), m = mean(v), sd = std(v)' -o b.csv
    assert_ok
    cmp a.csv b.csv
}

# ------------------------------------------------------------ atomic -o

@test "-o replaces an existing file and leaves no temporary file" {
    printf 'old\n' > out.csv
    run_tally one.csv -o out.csv
    assert_ok
    [ "$(cat out.csv)" = "$(printf 'x\n1')" ]
    assert_only_files one.csv out.csv
}

@test "a data error late in the input leaves an existing output byte-identical" {
    printf 'old contents\nsecond line' > out.csv
    cp out.csv before.csv
    { echo 'a,b'; seq 1 30000 | sed 's/$/,y/'; echo '1,2,3'; } > bad.csv
    run_tally bad.csv -o out.csv
    assert_err_glob 1 '*bad.csv*30002*'
    cmp before.csv out.csv
    assert_only_files one.csv out.csv before.csv bad.csv
}

@test "a runtime error leaves an existing output byte-identical" {
    printf 'old\n' > out.csv
    cp out.csv before.csv
    { echo 'v'; seq 1 30000; echo 9223372036854775807; } > big.csv
    run_tally big.csv --with 'w = v + 1' -o out.csv
    assert_err_glob 1 '*overflow*'
    cmp before.csv out.csv
    assert_only_files one.csv out.csv before.csv big.csv
}

@test "a usage error leaves an existing output byte-identical" {
    printf 'old\n' > out.csv
    run_tally one.csv --filter 'nope > 1' -o out.csv
    [ "$status" -eq 2 ]
    [ "$(cat out.csv)" = old ]
    assert_only_files one.csv out.csv
}

@test "-o a file whose suffix names no format is a usage error unless --to names one" {
    run_tally one.csv -o out.txt
    assert_err 2 'tally: -o "out.txt": the suffix ".txt" names no output format (.csv .tsv .ndjson .jsonl .json, each also with .gz or .zst, or .parquet); --to FORMAT sets one'
    run_tally one.csv -o out.dat.gz
    assert_err 2 'tally: -o "out.dat.gz": the suffix ".dat" names no output format (.csv .tsv .ndjson .jsonl .json, each also with .gz or .zst, or .parquet); --to FORMAT sets one'
    mkdir sub.d
    run_tally one.csv -o sub.d/report
    assert_err 2 'tally: -o "sub.d/report": no suffix names the output format (.csv .tsv .ndjson .jsonl .json, each also with .gz or .zst, or .parquet); --to FORMAT sets one'
    [ -z "$(ls -A sub.d)" ]
    rmdir sub.d
    assert_only_files one.csv
    # an existing file is left as it was
    printf 'old\n' > keep.txt
    run_tally one.csv -o keep.txt
    [ "$status" -eq 2 ]
    [ "$(cat keep.txt)" = old ]
    run_tally one.csv -o keep.txt --to tsv
    assert_ok
    [ "$(cat keep.txt)" = "$(printf 'x\n1')" ]
    run_tally one.csv -o out --to ndjson
    assert_ok
    [ "$(cat out)" = '{"x":1}' ]
    assert_only_files one.csv keep.txt out
}

@test "--to and --from with an unknown format list the known ones" {
    run_tally one.csv --to xml
    assert_err 2 'tally: unsupported output format "xml" (tally writes csv, tsv, ndjson, jsonl, json, table, parquet)'
    run_tally one.csv --from xml
    assert_err 2 'tally: --from: unknown format "xml" (tally reads csv, tsv, ndjson, jsonl, json, parquet)'
    # the table for people is written, never read; every format read is listed
    run_tally one.csv --from table
    assert_err 2 'tally: --from: unknown format "table" (tally reads csv, tsv, ndjson, jsonl, json, parquet)'
    assert_only_files one.csv
}

@test "the output may be the input file" {
    printf 'v\n3\n1\n2\n' > data.csv
    run_tally data.csv --sort v -o data.csv
    assert_ok
    [ "$(cat data.csv)" = "$(printf 'v\n1\n2\n3')" ]
    assert_only_files one.csv data.csv
}

@test "a write error on standard output is reported" {
    [ -w /dev/full ] || skip "no /dev/full"
    run --separate-stderr bash -c '"$1" "$2" > /dev/full' _ "$TALLY" one.csv
    [ "$status" -eq 1 ] || { show; return 1; }
    [[ "$stderr" == "tally: "* ]]
}

# -------------------------------------------------- closed standard output

@test "| head -1 ends quietly with status 0" {
    seq 1 200000 | sed '1i n' > big.csv
    run --separate-stderr bash -c 'set -o pipefail; "$1" "$2" | head -1' _ "$TALLY" big.csv
    [ "$status" -eq 0 ] || { show; return 1; }
    [ "$output" = n ]
    [ -z "$stderr" ] || { show; return 1; }
}

@test "| head -1 after a sort ends quietly too" {
    seq 1 200000 | sed '1i n' > big.csv
    run --separate-stderr bash -c 'set -o pipefail; "$1" "$2" --sort -n | head -2' _ "$TALLY" big.csv
    [ "$status" -eq 0 ] || { show; return 1; }
    [ "$output" = "$(printf 'n\n200000')" ]
    [ -z "$stderr" ] || { show; return 1; }
}
