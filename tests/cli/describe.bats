#!/usr/bin/env bats
# tally describe INPUT... and the --describe step: one row of statistics per
# column (man/tally.1, --describe), the same bytes for any input format,
# thread count and batch size.

load helpers

header='column,type,count,nulls,distinct,approx,min,max,mean,std,q25,q50,q75,min_len,max_len,top'

every_type() {
    printf 'id,name,x,when,ok\n1,alice,1.5,2024-01-01,true\n2,bob,,2024-02-01 10:00:00,false\n3,alice,2.5,,true\n4,,4.0,2023-05-06,\n5,émile,-1,2024-01-01,true\n' > t.csv
}

@test "describe: one row per column, statistics by type" {
    every_type
    assert_run_out describe t.csv <<EOF
$header
id,int64,5,0,5,false,1,5,3.0,1.5811388300841898,2.0,3.0,4.0,,,
name,string,4,1,3,false,alice,émile,,,,,,3,5,"alice (2), bob (1), émile (1)"
x,float64,4,1,4,false,-1.0,4.0,1.75,2.101586702153082,0.875,2.0,2.875,,,
when,timestamp,4,1,3,false,2023-05-06 00:00:00,2024-02-01 10:00:00,,,,,,,,
ok,bool,4,1,2,false,false,true,,,,,,,,
EOF
}

@test "describe: the same bytes for any --threads, batch size and compression" {
    every_type
    run_tally describe t.csv
    assert_ok
    want=$output
    for t in 1 2 4; do
        for rows in 1 2 65536; do
            TALLY_BATCH_ROWS=$rows run_tally describe t.csv --threads "$t"
            assert_ok
            assert_out "$want"
        done
    done
    gzip -k t.csv
    run_tally describe t.csv.gz
    assert_ok
    assert_out "$want"
}

@test "describe: NDJSON and CSV of the same values give the same bytes" {
    printf 'n,s,f\n1,a,0.5\n2,,1.5\n,b,\n3,a,-2.0\n' > v.csv
    printf '{"n":1,"s":"a","f":0.5}\n{"n":2,"s":null,"f":1.5}\n{"n":null,"s":"b","f":null}\n{"n":3,"s":"a","f":-2.0}\n' > v.ndjson
    run_tally describe v.ndjson
    assert_ok
    assert_out <<EOF
$header
n,int64,3,1,3,false,1,3,2.0,1.0,1.5,2.0,2.5,,,
s,string,3,1,2,false,a,b,,,,,,1,1,"a (2), b (1)"
f,float64,3,1,3,false,-2.0,1.5,0.0,1.8027756377319946,-0.75,0.5,1.0,,,
EOF
    want=$output
    run_tally describe v.csv
    assert_ok
    assert_out "$want"
}

@test "describe: most frequent values tie by first appearance; quartiles interpolate" {
    printf 'k,v\nb,1\na,2\nb,3\na,4\nc,10\n' > ties.csv
    assert_run_out ties.csv --describe --select column,distinct,top,q25,q50,q75 <<'EOF'
column,distinct,top,q25,q50,q75
k,3,"b (2), a (2), c (1)",,,
v,5,,2.0,3.0,4.0
EOF
}

@test "describe: one row gives no std; several inputs unite by name" {
    printf 'n,s\n7,x\n' > one.csv
    assert_run_out describe one.csv <<EOF
$header
n,int64,1,0,1,false,7,7,7.0,,7.0,7.0,7.0,,,
s,string,1,0,1,false,x,x,,,,,,1,1,x (1)
EOF
    printf 'a,b\n1,x\n' > a.csv
    printf 'b,c\ny,2.5\n' > b.csv
    assert_run_out describe a.csv b.csv <<EOF
$header
a,int64,1,1,1,false,1,1,1.0,,1.0,1.0,1.0,,,
b,string,2,0,2,false,x,y,,,,,,1,1,"x (1), y (1)"
c,float64,1,1,1,false,2.5,2.5,2.5,,2.5,2.5,2.5,,,
EOF
}

@test "describe: an input of no rows has zero counts and nulls; of no columns, the header" {
    printf 'a,b\n' > h.csv
    assert_run_out describe h.csv <<EOF
$header
a,null,0,0,0,false,,,,,,,,,,
b,null,0,0,0,false,,,,,,,,,,
EOF
    : > empty.csv
    assert_run_out describe empty.csv <<EOF
$header
EOF
    every_type
    assert_run_out t.csv --filter 'id > 9' --describe --select column,type,count,nulls,min <<'EOF'
column,type,count,nulls,min
id,int64,0,0,
name,string,0,0,
x,float64,0,0,
when,timestamp,0,0,
ok,bool,0,0,
EOF
}

@test "--describe is a step: steps before it shape its input, steps after it read its rows" {
    every_type
    assert_run_out t.csv --filter 'id >= 2' --select 'name, x * 2 as x2' --describe \
        --filter 'nulls > 0' --select column,count,nulls,mean <<'EOF'
column,count,nulls,mean
name,3,1,
x2,3,1,3.6666666666666665
EOF
    # tally describe ARGS is tally ARGS --describe
    run_tally describe t.csv --filter 'id >= 2' --select 'name, x * 2 as x2'
    assert_ok
    want=$output
    run_tally t.csv --filter 'id >= 2' --select 'name, x * 2 as x2' --describe
    assert_ok
    assert_out "$want"
    run_tally explain t.csv --describe
    assert_ok
    [[ "$output" == *"  describe"$'\n'"    scan t.csv"* ]] || { show; false; }
}

@test "describe: writes to -o and any output format" {
    printf 'n\n1\n2\n' > n.csv
    run_tally describe n.csv -o out.ndjson
    assert_ok
    run cat out.ndjson
    assert_out <<'EOF'
{"column":"n","type":"int64","count":2,"nulls":0,"distinct":2,"approx":false,"min":"1","max":"2","mean":1.5,"std":0.7071067811865476,"q25":1.25,"q50":1.5,"q75":1.75,"min_len":null,"max_len":null,"top":null}
EOF
}

@test "describe: distinct is exact up to 10,000 values, then an estimate within its error" {
    seq 1 10000 | awk 'BEGIN { print "n,s" } { print $1 ",k" ($1 % 9999) }' > exact.csv
    assert_run_out exact.csv --describe --select column,distinct,approx,min,max,q50,top <<'EOF'
column,distinct,approx,min,max,q50,top
n,10000,false,1,10000,5000.5,
s,9999,false,k0,k9998,,"k1 (2), k2 (1), k3 (1)"
EOF
    # past the bound: HyperLogLog, relative standard error 0.81%; the
    # estimate is deterministic, and checked against 3 standard errors
    for n in 10001 100000 250000; do
        seq 1 "$n" | awk 'BEGIN { print "n,s" } { print $1 ",k" $1 }' > many.csv
        run_tally many.csv --describe --select column,distinct,approx,top,min_len,max_len
        assert_ok
        [ "${#lines[@]}" -eq 3 ] || { show; false; }
        for line in "${lines[@]:1}"; do
            IFS=, read -r col est approx top lo hi <<< "$line"
            [ "$approx" = true ] && [ -z "$top" ] || { show; false; }
            awk -v e="$est" -v n="$n" 'BEGIN { d = (e - n) / n; exit !(d <= 0.0243 && d >= -0.0243) }' ||
                { echo "$col: estimate $est for $n"; false; }
        done
        [ "${lines[2]##*,}" = "$(awk -v n=${#n} 'BEGIN { print n + 1 }')" ] || { show; false; }
    done
    TALLY_BATCH_ROWS=1000 run_tally many.csv --threads 3 --describe --select column,distinct
    assert_ok
    want=$output
    run_tally many.csv --threads 1 --describe --select column,distinct
    assert_ok
    assert_out "$want"
}

@test "describe: bad usage and bad input" {
    every_type
    run_tally describe t.csv --describe=yes
    assert_err 2 'tally: option "--describe" takes no value'
    run_tally describe
    assert_err 2 'tally: no input given (try tally --help)'
    run_tally describe missing.csv
    assert_err 1 'tally: cannot open "missing.csv": No such file or directory'
    run_tally desribe t.csv
    assert_err 2 'tally: "desribe" is neither a command nor a file (did you mean tally describe?)'
    run_tally schema t.csv --describe
    assert_err 2 'tally: tally schema prints the input columns and takes no steps (got "--describe")'
    printf 'a,b\n1,2\n3\n' > ragged.csv
    run_tally describe ragged.csv
    assert_err_glob 1 'tally: ragged.csv:3*'
}

@test "describe: integers far apart (hashed, not counted by value) and at the int64 limits" {
    printf 'n\n1\n1000000\n-5\n\n1000000\n-9223372036854775808\n9223372036854775807\n' > sp.csv
    assert_run_out describe sp.csv <<EOF
$header
n,int64,6,1,5,false,-9223372036854775808,9223372036854775807,333332.5,5.833372668713516e+18,-3.5,500000.5,1000000.0,,,
EOF
    assert_run_out sp.csv --filter 'n > -10 and n < 10000000' --describe <<EOF
$header
n,int64,4,0,3,false,-5,1000000,499999.0,577351.4238953603,-0.5,500000.5,1000000.0,,,
EOF
}

@test "describe in a pipeline file: {\"describe\": true}" {
    every_type
    printf '{"inputs": ["t.csv"], "steps": [{"filter": "id > 1"}, {"describe": true}, {"select": ["column", "count"]}]}' > p.json
    assert_run_out -f p.json <<'EOF'
column,count
id,4
name,3
x,3
when,3
ok,3
EOF
    printf '{"inputs": ["t.csv"], "steps": [{"describe": 1}]}' > bad.json
    run_tally -f bad.json
    assert_err 2 'tally: bad.json: /steps/0/describe: expected true'
}

@test "describe: quartiles past the exact bound (selected from every value) equal the sorted ones" {
    # 150,000 rows, about 100,000 distinct values (past the bound), a third
    # of them repeated;
    # the expected quartiles are quantile_cont over the sorted values
    seq 1 150000 | awk 'BEGIN { print "x" } { v = ($1 * 7919) % 150001; if ($1 % 3 == 0) v = $1 % 50; printf "%.2f\n", v / 4 }' > q.csv
    for rows in 65536 5000; do
        TALLY_BATCH_ROWS=$rows run_tally q.csv --threads 3 --describe --select column,approx,min,max,q25,q50,q75
        assert_ok
        assert_out <<'EOF'
column,approx,min,max,q25,q50,q75
x,true,0.0,37498.75,9.25,9373.875,23435.8125
EOF
    done
}
