#!/usr/bin/env bats
# Type inference never changes a value (man tally, "Type inference"): the
# adversarial corpus in data/infer prints every value with its own text (or
# the documented canonical form) and survives CSV -> NDJSON -> CSV; the
# spellings accepted as numbers; --no-infer, --quoted-as-string, --schema
# globs; the "is string because" note on type errors; restarts.

load helpers

INFER=$DATA/infer

# ------------------------------------------------------------- the corpus

@test "corpus: tally FILE prints every value with its own text" {
    for f in leading_zeros plus_signs big_ids nulls precision; do
        run_tally "$INFER/$f.csv"
        assert_ok
        assert_out "$(cat "$INFER/$f.csv")"
    done
    # timestamps with Z or an offset: the canonical form, the instant in
    # UTC with +00 (DuckDB's TIMESTAMP WITH TIME ZONE)
    assert_run_out "$INFER/timestamps.csv" <<'EOF'
utc,offset,local,date
2024-01-31 10:00:00+00,2024-01-31 08:00:00+00,2024-01-31 10:00:00,2024-01-31
2024-02-29 23:59:59.5+00,2024-03-01 05:29:59+00,2024-02-29 23:59:59,2024-02-29
EOF
}

@test "corpus: a round trip CSV -> NDJSON -> CSV keeps every value" {
    for f in leading_zeros plus_signs big_ids nulls timestamps precision quoted; do
        "$TALLY" "$INFER/$f.csv" -o "$f.csv"
        "$TALLY" "$f.csv" -o "$f.ndjson"
        "$TALLY" "$f.ndjson" -o "$f.back.csv"
        cmp "$f.csv" "$f.back.csv"
    done
    cmp leading_zeros.csv "$INFER/leading_zeros.csv"
}

@test "corpus: the inferred types" {
    run_tally schema "$INFER/leading_zeros.csv" "$INFER/plus_signs.csv"
    assert_ok
    assert_out <<'EOF'
column,type
zip,string
code,string
account,string
phone,string
delta,string
EOF
    assert_run_out schema "$INFER/big_ids.csv" <<'EOF'
column,type
id,string
n,int64
EOF
    assert_run_out schema "$INFER/timestamps.csv" <<'EOF'
column,type
utc,timestamptz
offset,timestamptz
local,timestamp
date,date
EOF
    assert_run_out schema "$INFER/precision.csv" <<'EOF'
column,type
x,string
y,string
EOF
}

@test "corpus: quoted numbers infer as unquoted ones; quotes only where needed" {
    assert_run_out "$INFER/quoted.csv" <<'EOF'
zip,n,s
02134,5,x
00042,6,y
EOF
    assert_run_out "$INFER/quoted.csv" --with 'm = n * 2' --select m <<'EOF'
m
10
12
EOF
}

@test "corpus: NDJSON numbers no double holds keep their text, written back as strings" {
    assert_run_out "$INFER/ids.ndjson" <<'EOF'
id,zip,v,big
12345678901234567890,02134,1.5,1e400
98765432109876543210,00042,2.25,2
EOF
    assert_run_out "$INFER/ids.ndjson" --to ndjson <<'EOF'
{"id":"12345678901234567890","zip":"02134","v":1.5,"big":"1e400"}
{"id":"98765432109876543210","zip":"00042","v":2.25,"big":"2"}
EOF
}

# ------------------------------------------------------------ the spellings

@test "spellings: canonical forms that keep the value" {
    printf 'f,b,i,t\n1.50,TRUE,-0,2024-01-31T10:00:00.500\n1e3,False,5,2024-02-29 23:59:59\n.5,true,0,2024-03-01\n5.,FALSE,-7,2024-03-01 00:00:00.000001\n-0.0,true,1,2024-03-02T01:02:03\nInfinity,false,2,2024-03-03 04:05:06\nNaN,true,3,2024-03-04 05:06:07\n' > c.csv
    assert_run_out c.csv <<'EOF'
f,b,i,t
1.5,true,0,2024-01-31 10:00:00.5
1000.0,false,5,2024-02-29 23:59:59
0.5,true,0,2024-03-01 00:00:00
5.0,false,-7,2024-03-01 00:00:00.000001
-0.0,true,1,2024-03-02 01:02:03
inf,false,2,2024-03-03 04:05:06
nan,true,3,2024-03-04 05:06:07
EOF
    assert_run_out schema c.csv <<'EOF'
column,type
f,float64
b,bool
i,int64
t,timestamp
EOF
}

@test "spellings: an integer in a float column is written with .0" {
    printf 'x\n1\n1.5\n-3\n123456789012345\n' > f.csv
    assert_run_out f.csv <<'EOF'
x
1.0
1.5
-3.0
123456789012345.0
EOF
}

@test "spellings: each one that would change makes its column a string" {
    printf 'a,b,c,d,e,f,g,h\n1,1,1,1,1,1.5,1,1\n02134,+5,12345678901234567890,0.1000000000000000055511,00.5,9007199254740993,1e400,-007\n' > s.csv
    assert_run_out s.csv <<'EOF'
a,b,c,d,e,f,g,h
1,1,1,1,1,1.5,1,1
02134,+5,12345678901234567890,0.1000000000000000055511,00.5,9007199254740993,1e400,-007
EOF
    run_tally schema s.csv
    assert_ok
    [ "$(printf '%s\n' "$output" | grep -c ',string$')" -eq 8 ]
}

@test "spellings: 0, -0 and 0.5 are numbers; 17 exact digits are a number" {
    printf 'a,b\n0,0.5\n-0,0.30000000000000004\n7,-0.25\n' > z.csv
    assert_run_out z.csv --with 'a = a + 1' --with 'b = b * 2' <<'EOF'
a,b
1,1.0
1,0.6000000000000001
8,-0.5
EOF
}

@test "spellings: --schema converts what inference keeps as text" {
    assert_run_out "$INFER/leading_zeros.csv" --schema 'zip:int,code:float' <<'EOF'
zip,code,account
2134,7.0,0
42,-1.0,12
10001,5.0,00
EOF
    assert_run_out "$INFER/plus_signs.csv" --schema 'phone:int' <<'EOF'
phone,delta
318855443322,+1.5
14155550100,-2
EOF
}

# ------------------------------------------------------- flags that decide

@test "--no-infer: every column a string; --schema entries still win" {
    printf 'a,b,c\n1,2.5,true\n3,4,false\n' > t.csv
    assert_run_out schema t.csv --no-infer <<'EOF'
column,type
a,string
b,string
c,string
EOF
    assert_run_out schema t.csv --no-infer --schema 'b:float' <<'EOF'
column,type
a,string
b,float64
c,string
EOF
    assert_run_out t.csv --no-infer --with 'd = a || b' <<'EOF'
a,b,c,d
1,2.5,true,12.5
3,4,false,34
EOF
}

@test "--no-infer applies to a join's input too" {
    printf 'k,v\n1,a\n' > l.csv
    printf 'k,w\n1,b\n' > r.csv
    assert_run_out schema l.csv --no-infer <<'EOF'
column,type
k,string
v,string
EOF
    assert_run_out l.csv --no-infer --join r.csv --on k <<'EOF'
k,v,w
1,a,b
EOF
}

@test "--quoted-as-string: a column with a quoted value is a string" {
    assert_run_out schema "$INFER/quoted.csv" --quoted-as-string <<'EOF'
column,type
zip,string
n,string
s,string
EOF
    printf 'a,b\n1,2\n"3",4\n' > q.csv
    assert_run_out schema q.csv --quoted-as-string <<'EOF'
column,type
a,string
b,int64
EOF
}

@test "--quoted-as-string: a quoted value in a later morsel restarts to string" {
    { echo 'a,b'; for i in $(seq 1 40); do echo "$i,$i"; done; echo '"41",41'; } > q.csv
    for th in 1 2; do
        TALLY_BATCH_ROWS=4 run_tally q.csv --quoted-as-string --threads $th --sort '-b' --head 1
        assert_ok
        assert_out 'a,b
41,41'
        TALLY_BATCH_ROWS=4 run_tally schema q.csv --quoted-as-string --threads $th
        assert_out 'column,type
a,string
b,int64'
    done
}

@test "--schema globs: '*:string', 'id*:string', an exact name before a glob" {
    printf 'id,id_x,n,v\n1,2,3,4.5\n' > g.csv
    assert_run_out schema g.csv --schema '*:string' <<'EOF'
column,type
id,string
id_x,string
n,string
v,string
EOF
    assert_run_out schema g.csv --schema 'id*:string' <<'EOF'
column,type
id,string
id_x,string
n,int64
v,float64
EOF
    assert_run_out schema g.csv --schema 'id*:string,id_x:float,*:int,v:float' <<'EOF'
column,type
id,string
id_x,float64
n,int64
v,float64
EOF
    assert_run_out schema g.csv --schema 'nothing*:int,?:string' <<'EOF'
column,type
id,int64
id_x,int64
n,string
v,string
EOF
}

@test "--schema globs: * and ? only; brackets in a name match themselves" {
    printf 'price[usd],pa,ß\n1,2,3\n' > b.csv
    assert_run_out schema b.csv --schema 'price[usd]:string,p?:float,?:string' <<'EOF'
column,type
price[usd],string
pa,float64
ß,string
EOF
    run_tally b.csv --schema 'p[a]:string'
    assert_err 2 'tally: --schema: no column "p[a]" in b.csv'
}

@test "--schema globs: a plain name that matches nothing is still an error" {
    printf 'id,n\n1,2\n' > g.csv
    run_tally g.csv --schema 'id*:string,nn:int'
    assert_err 2 'tally: --schema: no column "nn" in g.csv (did you mean "n"?)'
}

@test "--schema glob: a value that does not convert names file, line, column" {
    printf 'id_a,id_b\n1,2\n3,x\n' > g.csv
    run_tally g.csv --schema 'id*:int'
    assert_err 1 'tally: g.csv:3:2: "x" is not a valid int64 (column "id_b")'
}

# ----------------------------------------------------------------- joins

@test "join: 01002 no longer matches 1002" {
    printf 'k,v\n01002,a\n1003,b\n' > l.csv
    printf 'k,w\n1002,x\n1003,y\n' > r.csv
    run_tally l.csv --join r.csv --on k
    assert_err 2 <<'EOF'
tally: join key "k": cannot compare string (left) with int64 (right)
  --on: k
        ^
  column "k" is string because l.csv:2 holds "01002", which would not read back as the same text (use --schema k:int to convert it)
EOF
    assert_run_out l.csv --join r.csv --on k --join-schema 'k:string' <<'EOF'
k,v,w
1003,b,y
EOF
    assert_run_out l.csv --no-infer --join r.csv --on k <<'EOF'
k,v,w
1003,b,y
EOF
}

# ------------------------------------------- the note on a type error

@test "note: sum over a column made string by NA names the value" {
    run_tally "$INFER/nulls.csv" --agg 's = sum(b)'
    assert_err 2 <<EOF
tally: sum needs a numeric argument, not string
  --agg: s = sum(b)
                 ^
  column "b" is string because $INFER/nulls.csv:2 holds "NA" (use --null NA or --schema b:float)
EOF
    run_tally "$INFER/nulls.csv" --null NA --agg 's = sum(b)'
    assert_err 2 <<EOF
tally: sum needs a numeric argument, not string
  --agg: s = sum(b)
                 ^
  column "b" is string because $INFER/nulls.csv:3 holds "N/A" (use --null N/A or --schema b:float)
EOF
    assert_run_out "$INFER/nulls.csv" --null NA --agg 's = sum(a)' <<'EOF'
s
6
EOF
}

@test "note: a comparison with a number names the value too" {
    printf 'x\n1\n2\nN/A\n' > n.csv
    run_tally n.csv --filter 'x > 5'
    assert_err 2 <<'EOF'
tally: cannot compare string with int64
  --filter: x > 5
            ^^^^^
  column "x" is string because n.csv:4 holds "N/A" (use --null N/A or --schema x:float)
EOF
}

@test "note: a number kept as text suggests the --schema that converts it" {
    run_tally "$INFER/leading_zeros.csv" --agg 's = sum(zip)'
    assert_err 2 <<EOF
tally: sum needs a numeric argument, not string
  --agg: s = sum(zip)
                 ^^^
  column "zip" is string because $INFER/leading_zeros.csv:2 holds "02134", which would not read back as the same text (use --schema zip:int to convert it)
EOF
    run_tally "$INFER/precision.csv" --agg 's = sum(x)'
    assert_err 2 <<EOF
tally: sum needs a numeric argument, not string
  --agg: s = sum(x)
                 ^
  column "x" is string because $INFER/precision.csv:4 holds "0.12345678901234567", which would not read back as the same text (use --schema x:float to convert it)
EOF
}

@test "note: a quoted value under --quoted-as-string" {
    printf 'a,b\n"1",2\n' > q.csv
    run_tally q.csv --quoted-as-string --with 'c = a + b'
    assert_err 2 <<'EOF'
tally: cannot apply "+" to string and int64
  --with: c = a + b
              ^^^^^
  column "a" is string because q.csv:2 holds "1" in quotes (--quoted-as-string)
EOF
}

@test "note: a text column gets no note" {
    printf 'name,n\nann,1\nbob,2\n' > t.csv
    run_tally t.csv --agg 's = sum(name)'
    assert_err 2 <<'EOF'
tally: sum needs a numeric argument, not string
  --agg: s = sum(name)
                 ^^^^
EOF
}

@test "note: from NDJSON" {
    printf '{"x":1}\n{"x":"NA"}\n{"x":3}\n' > n.ndjson
    run_tally n.ndjson --agg 's = sum(x)'
    assert_err 2 <<'EOF'
tally: sum needs a numeric argument, not string
  --agg: s = sum(x)
                 ^
  column "x" is string because n.ndjson:2 holds "NA" (use --null NA or --schema x:float)
EOF
}

# -------------------------------------------------------------- restarts

@test "restart: a value late in the file widens to string, same for any threads and batch" {
    { echo x; for i in $(seq 1 50); do echo "$i"; done; echo 0042; echo 7; } > late.csv
    for rows in 4 8 1000; do
        for th in 1 2; do
            TALLY_BATCH_ROWS=$rows run_tally late.csv --threads $th --filter "x = '0042' or x = '7'"
            if [ "$rows" = 1000 ]; then
                assert_ok
                assert_out 'x
7
0042
7'
            fi
            TALLY_BATCH_ROWS=$rows run_tally late.csv --threads $th --agg 's = sum(x)'
            assert_err 2 <<'EOF'
tally: sum needs a numeric argument, not string
  --agg: s = sum(x)
                 ^
  column "x" is string because late.csv:52 holds "0042", which would not read back as the same text (use --schema x:int to convert it)
EOF
            TALLY_BATCH_ROWS=$rows run_tally late.csv --threads $th
            assert_ok
            assert_out "$(cat late.csv)"
        done
    done
}

@test "restart: an int column meeting a float re-checks its big integers" {
    { echo x; echo 12345678901234567; for i in $(seq 1 30); do echo "$i"; done; echo 1.5; } > big.csv
    for rows in 4 1000; do
        for th in 1 2; do
            TALLY_BATCH_ROWS=$rows run_tally big.csv --threads $th
            assert_ok
            assert_out "$(cat big.csv)"
            TALLY_BATCH_ROWS=$rows run_tally schema big.csv --threads $th
            assert_out 'column,type
x,string'
        done
    done
}

@test "pipeline file: no_infer, quoted_as_string and quiet keys" {
    printf 'a,a,b\n"1",2,3\n' > t.csv
    printf '{"input": "t.csv", "no_infer": true, "quiet": true}' > p.json
    run_tally schema -f p.json
    assert_ok
    assert_out 'column,type
a,string
a_2,string
b,string'
    printf '{"input": "t.csv", "quoted_as_string": true, "quiet": true}' > q.json
    assert_run_out schema -f q.json <<'EOF'
column,type
a,string
a_2,int64
b,int64
EOF
    printf '{"input": "t.csv", "no_infer": "yes"}' > bad.json
    run_tally -f bad.json
    assert_err 2 'tally: bad.json: /no_infer: expected true or false'
}

@test "late materialization: a value on a dropped row still decides the type" {
    { echo 'a,b,f'; for i in $(seq 1 40); do
        case $i in
        30) echo "\"$i\",$i,$i.5" ;;
        31) echo "$i,$i,0$i.5" ;;
        *) echo "$i,$i,$i.5" ;;
        esac
    done; } > l.csv
    { echo 'a,b'; for i in $(seq 1 40); do
        if [ "$i" = 30 ]; then echo "0$i,$i"; else echo "$i,$i"; fi
    done; } > z.csv
    for th in 1 2; do
        TALLY_BATCH_ROWS=4 run_tally l.csv --threads $th --filter 'b > 39' --select 'a, f' --to ndjson
        assert_ok
        assert_out '{"a":40,"f":"40.5"}'
        TALLY_BATCH_ROWS=4 run_tally l.csv --quoted-as-string --threads $th --filter 'b > 39' --select a --to ndjson
        assert_ok
        assert_out '{"a":"40"}'
        TALLY_BATCH_ROWS=4 run_tally z.csv --threads $th --filter 'b > 39' --to ndjson
        assert_ok
        assert_out '{"a":"40","b":40}'
    done
}
