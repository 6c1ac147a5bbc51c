#!/usr/bin/env bats
# run-cli: weight=40 matrix
# Late materialization (formats/csv_read.c "late materialization",
# lib/exec/op_scan.c run_late): a filter fused into the scan, and a top-k's
# per-morsel stage, read their own columns first and the CSV reader
# converts the other columns only for the rows they keep.  Nothing about
# the output may change: values, types (a value on a dropped row that does
# not fit its column still widens it), errors, and bytes for every
# --threads.  TALLY_NO_LATE=1 turns the two-step decoding off: the
# reference every test compares with.

load helpers

# same_as_reference ARGS...: tally ARGS gives the same status, stdout and
# stderr with and without late materialization and under --no-optimize,
# for --threads 1, 2 and 7 (7 only under ASan: matrix_threads) and
# TALLY_BATCH_ROWS unset, 7 and 2 (tally_matrix, helpers.bash).  Leaves
# the default run's results in $status/$output/$stderr.
same_as_reference() {
    local rows t
    for rows in "" 7 2; do
        {
            echo "TALLY_NO_LATE=1 TALLY_BATCH_ROWS=$rows --threads 1"
            for t in $(matrix_threads 1 2 7); do
                echo "TALLY_BATCH_ROWS=$rows --threads $t"
                echo "TALLY_BATCH_ROWS=$rows --threads $t --no-optimize"
            done
        } | tally_matrix "$@" || return 1
    done
    rm -rf mx
    run_tally "$@"
}

@test "late: a filter on one column keeps every column" {
    printf 'k,s,i,f\n1,aa,10,1.5\n2,bb,20,2.5\n1,cc,30,3.5\n3,dd,40,4.5\n1,ee,50,5.5\n' > t.csv
    same_as_reference t.csv --filter "k = 1"
    assert_ok
    assert_out <<'EOF'
k,s,i,f
1,aa,10,1.5
1,cc,30,3.5
1,ee,50,5.5
EOF
}

@test "late: int column widened to float by a value on a dropped row" {
    # c is int64 in the first batch (2 rows); "2.5" sits on a row the filter drops
    printf 'a,b,c\n1,x,2\n2,y,3\n3,z,2.5\n4,w,5\n1,v,7\n' > w.csv
    same_as_reference w.csv --filter "a = 1"
    TALLY_BATCH_ROWS=2 run_tally w.csv --filter "a = 1"
    assert_ok
    assert_out <<'EOF'
a,b,c
1,x,2.0
1,v,7.0
EOF
    TALLY_BATCH_ROWS=2 run_tally schema w.csv
    assert_out <<'EOF'
column,type
a,int64
b,string
c,float64
EOF
}

@test "late: a float column widened to string by a value on a dropped row" {
    # "abc", and values that only look like numbers for the tokenizer's
    # float64 check (plain_f64_fast, 16 bytes at a time): a value it wrongly
    # passed would not widen c; one it wrongly failed only costs time.  Each
    # bad value alone in its file, amid values that pass (16 bytes, a sign,
    # one digit), with bytes after it to read.
    local v
    for v in abc 1.2.3 5-3 --5 - 1..2 1.-2 -. 1.5x 123456789012345x 12345678901234.5x; do
        printf 'a,c,s\n1,2.5,x\n2,-0.5,y\n3,%s,z\n4,1234567890.12345,w\n1,7,v\n' "$v" > w.csv
        same_as_reference w.csv --filter "a = 1"
        TALLY_BATCH_ROWS=2 run_tally w.csv --filter "a = 1" --to ndjson
        assert_ok
        assert_out <<'EOF'
{"a":1,"c":"2.5","s":"x"}
{"a":1,"c":"7","s":"v"}
EOF
    done
    printf 'a,c,s\n1,2.5,x\n2,-0.5,y\n3,5.0,z\n4,1234567890.12345,w\n1,7,v\n' > w.csv
    same_as_reference w.csv --filter "a = 1"
    TALLY_BATCH_ROWS=2 run_tally w.csv --filter "a = 1" --to ndjson
    assert_ok
    assert_out <<'EOF'
{"a":1,"c":2.5,"s":"x"}
{"a":1,"c":7.0,"s":"v"}
EOF
}

@test "late: a filter on one column keeping one int column checks it on every row" {
    # one stored field and one checked int64 column, found from the masks
    # (the tokenizer's lean_chk path in PDEP mode).  The tokenizer checks
    # once the first morsel kept few rows, so each file starts with eight
    # rows the filter drops (TALLY_BATCH_ROWS=7: a first morsel keeping
    # none).  The checked column before and after the filtered one, first
    # and last, a null, a negative, 17 digits, a record over 64 bytes; then
    # a value on a dropped row, in the middle of a later morsel, that widens
    # the column (to float64, to string), or a quoted 7 that ends the path
    # and stays an int64.
    local drop v
    drop=$(printf 'y,d,0,z\n%.0s' 1 2 3 4 5 6 7 8)
    {
        echo 's,pad,n,t'
        echo "$drop"
        printf 'x,aa,1,p\ny,bb,-22,q\nx,cc,,r\ny,dd,12345678901234567,s\n'
        printf 'x,%s,333,t\ny,ee,4,u\nx,ff,55,v\n' "$(printf 'w%.0s' $(seq 70))"
    } > k.csv
    same_as_reference k.csv --filter "s = 'x'" --select s,n
    assert_ok
    assert_out <<'EOF'
s,n
x,1
x,
x,333
x,55
EOF
    same_as_reference k.csv --filter "t = 'q'" --select n,t
    assert_ok
    assert_out <<'EOF'
n,t
-22,q
EOF
    for v in 2.5 abc '"7"' 1-2; do
        {
            echo 'n,s'
            echo "$drop" | sed 's/^y,d,0,z$/0,y/'
            printf '1,x\n2,y\n3,y\n4,y\n5,y\n%s,y\n6,y\n7,y\n8,x\n' "$v"
        } > w.csv
        same_as_reference w.csv --filter "s = 'x'" --select n,s
        assert_ok
        TALLY_BATCH_ROWS=7 run_tally w.csv --filter "s = 'x'" --select n,s --to ndjson
        assert_ok
        case $v in
        2.5) assert_out '{"n":1.0,"s":"x"}
{"n":8.0,"s":"x"}' ;;
        '"7"') assert_out '{"n":1,"s":"x"}
{"n":8,"s":"x"}' ;;
        *) assert_out '{"n":"1","s":"x"}
{"n":"8","s":"x"}' ;;
        esac
    done
}

@test "late: every row dropped still widens" {
    printf 'a,c\n1,2\n2,3\n3,2.5\n4,5\n' > w.csv
    same_as_reference w.csv --filter "a = 3" --select c
    TALLY_BATCH_ROWS=2 run_tally w.csv --filter "a = 3" --select c
    assert_ok
    assert_out <<'EOF'
c
2.5
EOF
    TALLY_BATCH_ROWS=2 run_tally w.csv --filter "a = 9" --to ndjson
    assert_ok
    assert_out ''
    TALLY_BATCH_ROWS=2 run_tally w.csv --filter "a = 1" --to ndjson
    assert_ok
    assert_out '{"a":1,"c":2.0}'
}

@test "late: a --schema column's bad value on a dropped row is still an error" {
    printf 'a,b,c\n1,x,2\n2,y,3\n3,z,oops\n4,w,5\n' > s.csv
    same_as_reference s.csv --schema c:int64 --filter "a = 1"
    TALLY_BATCH_ROWS=2 run_tally s.csv --schema c:int64 --filter "a = 1"
    [ "$status" -eq 1 ]
    # standard output streams (man tally, OUTPUT): the row before stays
    [ "$output" = $'a,b,c\n1,x,2' ]
    [ "$stderr" = 'tally: s.csv:4:3: "oops" is not a valid int64 (column "c")' ]
}

@test "late: a --schema date column and a bool column convert early, same results" {
    printf 'a,d,ok,n\n1,2024-01-02,true,\n2,2024-02-03,false,\n1,2024-03-04,TRUE,\n3,xx,true,\n' > s.csv
    same_as_reference s.csv --schema d:date --filter "a = 1"
    [ "$status" -eq 1 ]
    [ "$stderr" = 'tally: s.csv:5:2: "xx" is not a valid date (column "d")' ]
    printf 'a,d,ok,n\n1,2024-01-02,true,\n2,2024-02-03,false,\n1,2024-03-04,TRUE,\n' > t.csv
    same_as_reference t.csv --filter "a = 1"
    assert_ok
    assert_out <<'EOF'
a,d,ok,n
1,2024-01-02,true,
1,2024-03-04,true,
EOF
}

@test "late: quoted fields with newlines, escaped quotes, long strings, nulls" {
    {
        printf 'k,s,n,f\n'
        printf '1,"two\nlines",5,1.5\n'
        printf '2,"say ""hi""",,2.5\n'
        printf '1,"a ""quoted"" string longer than twelve bytes",NA,\n'
        printf '1,plain string longer than twelve bytes,7,NA\n'
        printf '3,"",8,3.5\n'
        printf '1,"",9,4\n'
        printf '1,,"10","5.5"\n'
    } > q.csv
    same_as_reference q.csv --filter "k = 1" --null NA
    assert_ok
    assert_out <<'EOF'
k,s,n,f
1,"two
lines",5,1.5
1,"a ""quoted"" string longer than twelve bytes",,
1,plain string longer than twelve bytes,7,
1,"",9,4.0
1,,10,5.5
EOF
    same_as_reference q.csv --filter "n > 6" --null NA --to ndjson
    assert_ok
    assert_out <<'EOF'
{"k":1,"s":"plain string longer than twelve bytes","n":7,"f":null}
{"k":3,"s":"","n":8,"f":3.5}
{"k":1,"s":"","n":9,"f":4.0}
{"k":1,"s":null,"n":10,"f":5.5}
EOF
}

@test "late: an error in the predicate after a dropped-row widening" {
    # the plain path widens v first (restart), then fails in the predicate
    printf 'a,v\n1,2\n0,3\nbad,x\n' > e.csv
    same_as_reference e.csv --filter "cast(a as int64) > 0"
    [ "$status" -eq 1 ]
    [ "$output" = "" ]
    [ "${stderr%%$'\n'*}" = 'tally: e.csv:4:1: cannot cast "bad" to int64 (column "a")' ]
}

@test "late: filter then projection and a later filter" {
    printf 'id,g,v,w\n1,a,10,x\n2,b,20,y\n3,a,30,z\n4,b,40,w\n5,a,50,v\n' > p.csv
    same_as_reference p.csv --filter "g = 'a'" --select id,v
    assert_ok
    assert_out <<'EOF'
id,v
1,10
3,30
5,50
EOF
    same_as_reference p.csv --filter "g = 'a'" --with "z = v * 2" --filter "z > 30"
    assert_ok
    assert_out <<'EOF'
id,g,v,w,z
3,a,30,z,60
5,a,50,v,100
EOF
}

@test "late: top-k keeps ties in input order across morsels" {
    awk 'BEGIN { print "id,k,s,v"; for (i = 1; i <= 300; i++) printf "%d,%d,s%03d,%d\n", i, i % 4, i, i * 7 % 13 }' > k.csv
    same_as_reference k.csv --sort k --head 5
    assert_ok
    assert_out <<'EOF'
id,k,s,v
4,0,s004,2
8,0,s008,4
12,0,s012,6
16,0,s016,8
20,0,s020,10
EOF
    same_as_reference k.csv --sort -k --head 3
    assert_ok
    assert_out <<'EOF'
id,k,s,v
3,3,s003,8
7,3,s007,10
11,3,s011,12
EOF
    same_as_reference k.csv --sort -v,k --head 4
    same_as_reference k.csv --sort s --head 2
    same_as_reference k.csv --sort k --head 1000
}

@test "late: top-k widening by a value on a row that is not among the best" {
    printf 'k,v\n1,2\n2,3\n3,2.5\n4,5\n5,6\n' > w.csv
    same_as_reference w.csv --sort -k --head 2
    TALLY_BATCH_ROWS=2 run_tally w.csv --sort -k --head 2
    assert_ok
    assert_out <<'EOF'
k,v
5,6.0
4,5.0
EOF
}

@test "late: random data, many predicates, identical to the reference" {
    awk 'BEGIN {
        s = 4242
        print "a,b,c,d,e"
        for (i = 0; i < 1200; i++) {
            s = (s * 1103515245 + 12345) % 2147483648; a = s % 10
            s = (s * 1103515245 + 12345) % 2147483648; b = s % 1000 - 500
            s = (s * 1103515245 + 12345) % 2147483648; c = (s % 100000) / 100
            s = (s * 1103515245 + 12345) % 2147483648; d = s % 7
            e = "w" (s % 37)
            if (d == 0) b = ""
            if (d == 1 && a == 3) c = ""
            if (i % 97 == 5) e = "\"q,\"\"" e "\"\"\""
            if (i == 1000) b = "1.5"
            if (i == 1100) c = "x" c
            printf "%s,%s,%s,%s,%s\n", a, b, c, d, e
        }
    }' > r.csv
    for pred in "a = 3" "a > 7 and d < 3" "b is null" "e like 'w1%'" "a = 3 or b > 400" "d = 99"; do
        same_as_reference r.csv --filter "$pred"
        same_as_reference r.csv --filter "$pred" --select b,e
    done
    same_as_reference r.csv --sort -a,e --head 7
    same_as_reference r.csv --sort d --head 20
}
