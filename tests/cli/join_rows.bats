#!/usr/bin/env bats
# join_rows.bats -- the join's right table is packed rows (lib/exec/op_join.c:
# pack, gather_rows): every column type of the right side (bool, int64,
# float64, short and long strings, date, timestamp, an all-null column),
# nulls in each, the null-padded rows of left and full joins, and the key
# columns that right and full joins fill in from unmatched right rows; the
# same bytes built on either side, under --threads 1 and 7, with one morsel
# or many (TALLY_BATCH_ROWS=2: each right morsel a block of its own, long
# strings in every block's own data buffers).

load helpers

setup() {
    enter_workdir
    printf 'k,a\n1,x\n2,y\n3,z\n,n\n5,w\n2,v\n' > l.csv
    printf '%s\n' 'k,b,i,f,s,d,t,e' \
        '1,true,10,1.5,short,2024-01-02,2024-01-02T03:04:05,' \
        '2,,-3,,a-string-longer-than-twelve,,2024-02-03T00:00:00,' \
        '1,false,,2.25,,2023-12-31,,' \
        '4,true,7,0.5,another-long-string-value,2020-02-29,,' \
        ',false,8,3,nullkey-and-long-too,2021-01-01,,' \
        '2,true,9,-1,x,,,' \
        '7,,,,,,,' > r.csv
}

# every_way HOW: the join's output under each side built, thread count and
# morsel size must be the bytes of expected.csv.
every_way() {
    local side th br
    for side in left right; do
        for th in 1 7; do
            for br in 2 65536; do
                TALLY_JOIN_BUILD=$side TALLY_BATCH_ROWS=$br "$TALLY" l.csv \
                    --join r.csv --on k --how "$1" --threads $th -o got.csv ||
                    { echo "failed: $side $th $br"; return 1; }
                cmp got.csv expected.csv ||
                    { echo "differs: $side $th $br"; diff got.csv expected.csv; return 1; }
            done
        done
    done
}

@test "inner join: every right column type, with nulls, from packed rows" {
    cat > expected.csv <<'EOF'
k,a,b,i,f,s,d,t,e
1,x,true,10,1.5,short,2024-01-02,2024-01-02 03:04:05,
1,x,false,,2.25,,2023-12-31,,
2,y,,-3,,a-string-longer-than-twelve,,2024-02-03 00:00:00,
2,y,true,9,-1.0,x,,,
2,v,,-3,,a-string-longer-than-twelve,,2024-02-03 00:00:00,
2,v,true,9,-1.0,x,,,
EOF
    every_way inner
}

@test "left join: null-padded rows take every right column as null" {
    cat > expected.csv <<'EOF'
k,a,b,i,f,s,d,t,e
1,x,true,10,1.5,short,2024-01-02,2024-01-02 03:04:05,
1,x,false,,2.25,,2023-12-31,,
2,y,,-3,,a-string-longer-than-twelve,,2024-02-03 00:00:00,
2,y,true,9,-1.0,x,,,
3,z,,,,,,,
,n,,,,,,,
5,w,,,,,,,
2,v,,-3,,a-string-longer-than-twelve,,2024-02-03 00:00:00,
2,v,true,9,-1.0,x,,,
EOF
    every_way left
}

@test "full join: unmatched right rows fill the key from the packed rows" {
    cat > expected.csv <<'EOF'
k,a,b,i,f,s,d,t,e
1,x,true,10,1.5,short,2024-01-02,2024-01-02 03:04:05,
1,x,false,,2.25,,2023-12-31,,
2,y,,-3,,a-string-longer-than-twelve,,2024-02-03 00:00:00,
2,y,true,9,-1.0,x,,,
3,z,,,,,,,
,n,,,,,,,
5,w,,,,,,,
2,v,,-3,,a-string-longer-than-twelve,,2024-02-03 00:00:00,
2,v,true,9,-1.0,x,,,
4,,true,7,0.5,another-long-string-value,2020-02-29,,
,,false,8,3.0,nullkey-and-long-too,2021-01-01,,
7,,,,,,,,
EOF
    every_way full
}

@test "right join on string keys: long keys filled in from the packed rows" {
    printf 'k,a\nkey-number-one-long,1\nshort,2\n' > l.csv
    printf 'k,v\nshort,s1\nkey-number-two-long,s2\nkey-number-one-long,s3\n,s4\n' > r.csv
    cat > expected.csv <<'EOF'
k,a,v
key-number-one-long,1,s3
short,2,s1
key-number-two-long,,s2
,,s4
EOF
    every_way right
}

@test "many right morsels with long strings: rows found across blocks" {
    awk 'BEGIN {
        print "k,s" > "r.csv"
        for (i = 0; i < 2000; i++) print i ",long-string-number-" i "-" (i * 7) % 13 > "r.csv"
        print "k,lv" > "l.csv"
        for (i = 0; i < 3000; i++) {
            k = (i * 37) % 2500
            print k "," i > "l.csv"
            if (k < 2000) print k "," i ",long-string-number-" k "-" (k * 7) % 13 > "expected.csv"
        }
    }'
    sed -i '1i k,lv,s' expected.csv
    for br in 7 65536; do
        for th in 1 7; do
            TALLY_BATCH_ROWS=$br "$TALLY" l.csv --join r.csv --on k --threads $th -o got.csv
            cmp got.csv expected.csv
        done
    done
}
