#!/usr/bin/env bats
# run-cli: weight=5
# join.bats -- --join INPUT --on KEYS [--how ...] and the JSON join step:
# every join kind, key forms, suffixes, right-side options, nested pipelines,
# explain, type inference on the right side, and every error.

load helpers

# l.csv and r.csv: duplicates on both sides and a null key on each.
fixtures() {
    printf 'id,name,v\n1,a,10\n2,b,20\n3,c,30\n2,bb,21\n,n,0\n' > l.csv
    printf 'id,name,w\n2,x,200\n1,y,100\n2,z,201\n4,q,400\n,nn,9\n' > r.csv
}

@test "inner join (the default): left rows in order, each with its matches in right order" {
    fixtures
    assert_run_out l.csv --join r.csv --on id <<'EOF'
id,name,v,name_right,w
1,a,10,y,100
2,b,20,x,200
2,b,20,z,201
2,bb,21,x,200
2,bb,21,z,201
EOF
}

@test "left join pads unmatched left rows with nulls; a null key never matches" {
    fixtures
    assert_run_out l.csv --join r.csv --on id --how left <<'EOF'
id,name,v,name_right,w
1,a,10,y,100
2,b,20,x,200
2,b,20,z,201
3,c,30,,
2,bb,21,x,200
2,bb,21,z,201
,n,0,,
EOF
}

@test "right join: unmatched right rows last, in right order, key from the right" {
    fixtures
    assert_run_out l.csv --join r.csv --on id --how right <<'EOF'
id,name,v,name_right,w
1,a,10,y,100
2,b,20,x,200
2,b,20,z,201
2,bb,21,x,200
2,bb,21,z,201
4,,,q,400
,,,nn,9
EOF
}

@test "full join: both kinds of unmatched rows" {
    fixtures
    assert_run_out l.csv --join r.csv --on id --how=full <<'EOF'
id,name,v,name_right,w
1,a,10,y,100
2,b,20,x,200
2,b,20,z,201
3,c,30,,
2,bb,21,x,200
2,bb,21,z,201
,n,0,,
4,,,q,400
,,,nn,9
EOF
}

@test "semi join: each matching left row once, left columns only" {
    fixtures
    assert_run_out l.csv --join r.csv --on id --how semi <<'EOF'
id,name,v
1,a,10
2,b,20
2,bb,21
EOF
}

@test "anti join is NOT EXISTS: a null left key is kept even with null right keys" {
    fixtures
    assert_run_out l.csv --join r.csv --on id --how anti <<'EOF'
id,name,v
3,c,30
,n,0
EOF
}

@test "several keys: --on a,b (full join, duplicates, null in one key)" {
    printf 'a,b,x\n1,p,A\n1,q,B\n2,p,C\n,p,D\n' > m1.csv
    printf 'a,b,y\n1,q,Y1\n2,p,Y2\n1,p,Y3\n1,q,Y4\n,p,Y5\n' > m2.csv
    assert_run_out m1.csv --join m2.csv --on a,b --how full <<'EOF'
a,b,x,y
1,p,A,Y3
1,q,B,Y1
1,q,B,Y4
2,p,C,Y2
,p,D,
,p,,Y5
EOF
}

@test "--on left_name=right_name: the right key column is not repeated" {
    fixtures
    printf 'rid,w\n1,100\n3,300\n' > r2.csv
    assert_run_out l.csv --join r2.csv --on id=rid --how left <<'EOF'
id,name,v,w
1,a,10,100
2,b,20,
3,c,30,300
2,bb,21,
,n,0,
EOF
}

@test "int64 keys match float64 keys numerically; a full join's key becomes float64" {
    fixtures
    printf 'id,f\n1.0,one\n2.5,twohalf\n2,two\n' > rf.csv
    assert_run_out l.csv --join rf.csv --on id --how full <<'EOF'
id,name,v,f
1.0,a,10,one
2.0,b,20,two
3.0,c,30,
2.0,bb,21,two
,n,0,
2.5,,,twohalf
EOF
}

@test "--suffix names clashing right columns (key columns never clash)" {
    fixtures
    assert_run_out l.csv --join r.csv --on id --suffix _r --select id,name,name_r --head 2 <<'EOF'
id,name,name_r
1,a,y
2,b,x
EOF
}

@test "the right input may be a glob or standard input" {
    fixtures
    mkdir parts
    printf 'id,w\n1,100\n' > parts/p1.csv
    printf 'id,w\n2,200\n' > parts/p2.csv
    assert_run_out l.csv --join 'parts/*.csv' --on id <<'EOF'
id,name,v,w
1,a,10,100
2,b,20,200
2,bb,21,200
EOF
    run --separate-stderr bash -c 'cat r.csv | "$1" l.csv --join - --on id --how semi' _ "$TALLY"
    assert_ok
    assert_out "$(printf 'id,name,v\n1,a,10\n2,b,20\n2,bb,21')"
}

@test "--join-delimiter, --join-from and --join-schema apply to the right input" {
    fixtures
    printf 'id;w\n1;100\n2;200\n' > rs.txt
    assert_run_out l.csv --join rs.txt --join-delimiter ';' --on id --select id,w <<'EOF'
id,w
1,100
2,200
2,200
EOF
    printf 'id\tw\n1\t100\n' > rt.dat
    assert_run_out l.csv --join rt.dat --join-from tsv --on id --select w <<'EOF'
w
100
EOF
    assert_run_out l.csv --join r.csv --join-schema 'w:float' --on id --select w --head 2 <<'EOF'
w
100.0
200.0
EOF
}

@test "an empty right side: inner is empty, left is null-padded" {
    fixtures
    printf 'id,w\n' > empty.csv
    assert_run_out l.csv --join empty.csv --on id <<'EOF'
id,name,v,w
EOF
    assert_run_out l.csv --join empty.csv --on id --how left --select id,w <<'EOF'
id,w
1,
2,
3,
2,
,
EOF
}

@test "a right column widened later in the input restarts the run with its type" {
    fixtures
    printf 'id,w\n1,100\n2,200\n2,x\n' > rw.csv
    TALLY_BATCH_ROWS=1 assert_run_out l.csv --join rw.csv --on id --select id,w <<'EOF'
id,w
1,100
2,200
2,x
2,200
2,x
EOF
}

@test "JSON: the input may be a nested pipeline, filtered and aggregated first" {
    fixtures
    cat > n.json <<'EOF'
{"inputs": ["l.csv"], "steps": [
  {"join": {"input": {"inputs": ["r.csv"], "steps": [{"filter": "w > 150"},
     {"group_by": ["id"], "agg": {"n": "count()", "top": "max(w)"}}]},
   "on": ["id"], "how": "left"}}
]}
EOF
    assert_run_out -f n.json <<'EOF'
id,name,v,n,top
1,a,10,,
2,b,20,2,201
3,c,30,,
2,bb,21,2,201
,n,0,,
EOF
}

@test "JSON: a nested input's own options (delimiter) read the right side" {
    fixtures
    printf 'id;w\n1;100\n' > rs.txt
    echo '{"input": "l.csv", "steps": [{"join": {"input": {"input": "rs.txt", "delimiter": ";"}, "on": ["id"]}}]}' > d.json
    assert_run_out -f d.json <<'EOF'
id,name,v,w
1,a,10,100
EOF
}

@test "explain shows the join, the right side below it, and columns pushed into both scans" {
    fixtures
    assert_run_out explain l.csv --join r.csv --on id --select name,w <<'EOF'
logical plan:
  project name, w
    join inner on id
      scan r.csv
      scan l.csv
optimized plan:
  project name, w
    join inner on id
      scan r.csv columns id, w
      scan l.csv columns id, name
output: name string, w int64
EOF
}

@test "explain: the flag and JSON forms of a join give the same plan" {
    fixtures
    echo '{"input": "l.csv", "steps": [{"join": {"input": "r.csv", "on": ["id=id"], "how": "semi"}}]}' > s.json
    run_tally explain -f s.json
    assert_ok
    local json=$output
    run_tally explain l.csv --join r.csv --on id=id --how semi
    assert_ok
    assert_out "$json"
    [[ "$output" == *"join semi on id"* ]]
}

# ---------------------------------------------------------------- errors

@test "error: unknown key column, left or right, with a suggestion" {
    fixtures
    run_tally l.csv --join r.csv --on idd -o out.csv
    assert_err 2 <<'EOF'
tally: unknown column "idd" in the left input of the join (did you mean "id"?)
  --on: idd
        ^^^
EOF
    [ ! -e out.csv ]
    run_tally l.csv --join r.csv --on id=ids
    assert_err 2 <<'EOF'
tally: unknown column "ids" in the right input of the join (did you mean "id"?)
  --on: id=ids
        ^^^^^^
EOF
}

@test "error: incompatible key types name the key" {
    fixtures
    run_tally l.csv --join r.csv --on id=name
    assert_err 2 <<'EOF'
tally: join key "id": cannot compare int64 (left) with string (right)
  --on: id=name
        ^^^^^^^
EOF
}

@test "error: a key must be a column name" {
    fixtures
    run_tally l.csv --join r.csv --on 'id+1'
    assert_err 2 <<'EOF'
tally: a join key is a column name or LEFT_NAME=RIGHT_NAME
  --on: id+1
        ^^^^
EOF
}

@test "error: a clashing name whose suffixed name is taken too" {
    printf 'id,w,w_right\n1,2,3\n' > a.csv
    printf 'id,w\n1,5\n' > b.csv
    run_tally a.csv --join b.csv --on id
    assert_err 2 'tally: --join: the right column "w" clashes, and "w_right" is taken too (choose another suffix)'
}

@test "error: standard input on both sides" {
    run_tally - --join - --on id
    assert_err 2 'tally: standard input (-) can feed only one side of a join'
}

@test "error: right-side options must follow --join" {
    fixtures
    run_tally l.csv --join-delimiter ';'
    assert_err 2 'tally: option "--join-delimiter" must follow --join INPUT'
    run_tally l.csv --join r.csv --on id --join-delimiter ';;'
    assert_err 2 'tally: --join-delimiter: expected one character (or \t), got ";;"'
    run_tally l.csv --join r.csv --on id --join-schema 'w:blob'
    assert_err 2 'tally: --join-schema: unknown type "blob" for column "w"'
}

@test "error: a missing right file is named" {
    fixtures
    run_tally l.csv --join nope.csv --on id -o out.csv
    [ "$status" -eq 1 ]
    [[ "$stderr" == *nope.csv* ]]
    [ ! -e out.csv ]
}

@test "error: JSON join inputs" {
    fixtures
    echo '{"input": "l.csv", "steps": [{"join": {"input": {"input": "r.csv", "output": "x.csv"}, "on": ["id"]}}]}' > b.json
    run_tally -f b.json
    assert_err 2 'tally: b.json: /steps/0/join/input: "output" has no meaning for the input of a join'
    echo '{"input": "l.csv", "steps": [{"join": {"input": 3, "on": ["id"]}}]}' > b2.json
    run_tally -f b2.json
    assert_err 2 'tally: b2.json: /steps/0/join/input: expected a file name or a pipeline object such as {"inputs": ["b.csv"], "steps": [...]}, got a number'
    echo '{"input": "l.csv", "steps": [{"join": {"input": {"steps": []}, "on": ["id"]}}]}' > b3.json
    run_tally -f b3.json
    assert_err 2 'tally: b3.json: /steps/0/join/input: missing "inputs" (the files to join with)'
    echo '{"input": "l.csv", "steps": [{"join": {"input": "r.csv", "on": ["nope"]}}]}' > b4.json
    run_tally -f b4.json
    assert_err 2 <<'EOF'
tally: unknown column "nope" in the left input of the join
  /steps/0/join/on/0: nope
                      ^^^^
EOF
}

@test "the output is the same whichever side the hash table is built on" {
    fixtures
    local side want
    want=$(printf '%s\n' 'id,name,v,name_right,w' '1,a,10,y,100' '2,b,20,x,200' \
        '2,b,20,z,201' '3,c,30,,' '2,bb,21,x,200' '2,bb,21,z,201' ',n,0,,' \
        '4,,,q,400' ',,,nn,9')
    for side in left right; do
        TALLY_JOIN_BUILD=$side run_tally l.csv --join r.csv --on id --how full
        assert_ok
        assert_out "$want"
        TALLY_JOIN_BUILD=$side run_tally l.csv --join r.csv --on id --how anti
        assert_ok
        assert_out "$(printf 'id,name,v\n3,c,30\n,n,0')"
    done
}

@test "a small left input joined with a large right one (built on the left)" {
    printf 'k,tag\n7,seven\n3,three\n' > small.csv
    { echo 'k,n'; seq 1 5000 | awk '{print $1 % 10 "," $1}'; } > big.csv
    run_tally small.csv --join big.csv --on k --group-by tag --agg 'rows = count(), lo = min(n)'
    assert_ok
    assert_out "$(printf 'tag,rows,lo\nseven,500,7\nthree,500,3')"
}

@test "joins nested in join inputs: a few levels run, hundreds are a usage error" {
    fixtures
    python3 -c "
import sys
s='\"r.csv\"'
for i in range(int(sys.argv[1])):
    s='{\"input\": \"r.csv\", \"steps\": [{\"join\": {\"input\": %s, \"on\": [\"id\"], \"how\": \"semi\"}}]}' % s
print('{\"input\": \"l.csv\", \"steps\": [{\"join\": {\"input\": %s, \"on\": [\"id\"]}}], \"output\": \"out.csv\"}' % s)" 5 > p5.json
    run_tally -f p5.json
    assert_ok
    assert_out ''
    [ "$(cat out.csv)" = "$(printf 'id,name,v,name_right,w\n1,a,10,y,100\n2,b,20,x,200\n2,b,20,z,201\n2,bb,21,x,200\n2,bb,21,z,201')" ]
    python3 -c "
s='\"r.csv\"'
for i in range(200):
    s='{\"input\": \"r.csv\", \"steps\": [{\"join\": {\"input\": %s, \"on\": [\"id\"]}}]}' % s
print('{\"input\": \"l.csv\", \"steps\": [{\"join\": {\"input\": %s, \"on\": [\"id\"]}}]}' % s)" > p200.json
    run_tally -f p200.json
    assert_err 2 'tally: joins are nested too deeply'
}
