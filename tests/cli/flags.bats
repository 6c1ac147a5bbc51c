#!/usr/bin/env bats
# run-cli: weight=10
# Every flag of the command line (man/tally.1, OPTIONS), each in both the
# `--flag value` and the `--flag=value` spelling somewhere, on the fixture
# data/sales.csv (8 rows; qty is null in row 2, region in row 8).

load helpers

setup() {
    enter_workdir
    cp "$DATA/sales.csv" "$DATA/regions.csv" .
}

# ------------------------------------------------------------------ steps

@test "--filter keeps rows where the predicate is true (null drops the row)" {
    assert_run_out sales.csv --filter 'qty > 3' <<'EOF'
id,region,product,qty,price,day
3,north,pear,5,2.25,2024-01-02
5,south,apple,10,1.25,2024-01-03
7,east,pear,7,2.0,2024-01-05
8,,fig,4,4.0,2024-01-05
EOF
}

@test "--where and --filter=EXPR are the same step" {
    run_tally sales.csv --filter 'qty > 3'
    assert_ok
    local want=$output
    run_tally sales.csv --where 'qty > 3'
    assert_ok
    assert_out "$want"
    run_tally sales.csv '--filter=qty > 3'
    assert_ok
    assert_out "$want"
    run_tally sales.csv '--where=qty > 3'
    assert_ok
    assert_out "$want"
}

@test "--select keeps columns and expressions in the order given" {
    assert_run_out sales.csv --head 3 --select 'price, id, qty * 2 as q2' <<'EOF'
price,id,q2
1.5,1,6
2.25,2,
2.25,3,10
EOF
}

@test "--select names an item without 'as' by its text without spaces" {
    assert_run_out sales.csv --head 2 --select 'id, qty * 2, upper(product)' <<'EOF'
id,qty*2,upper(product)
1,6,APPLE
2,,PEAR
EOF
}

@test "--select=LIST with a comma inside parentheses does not split there" {
    assert_run_out sales.csv --head 2 "--select=id,coalesce(qty, 0) as q,'a,b' as s" <<'EOF'
id,q,s
1,3,"a,b"
2,0,"a,b"
EOF
}

@test "--with appends a new column" {
    assert_run_out sales.csv --head 3 --with 'total = qty * price' --select 'id,total' <<'EOF'
id,total
1,4.5
2,
3,11.25
EOF
}

@test "--with on an existing name replaces it in place" {
    assert_run_out sales.csv --head 2 --with 'qty = qty * 10' <<'EOF'
id,region,product,qty,price,day
1,north,apple,30,1.5,2024-01-01
2,south,pear,,2.25,2024-01-02
EOF
}

@test "--with is repeatable and later ones see earlier ones" {
    assert_run_out sales.csv --head 2 --with 'a = id + 1' '--with=b = a * 10' --select 'id,a,b' <<'EOF'
id,a,b
1,2,20
2,3,30
EOF
}

@test "--drop removes columns" {
    assert_run_out sales.csv --head 2 --drop 'price,day' <<'EOF'
id,region,product,qty
1,north,apple,3
2,south,pear,
EOF
}

@test "--rename renames columns in place" {
    assert_run_out sales.csv --head 1 --rename 'qty:quantity,day:date' <<'EOF'
id,region,product,quantity,price,date
1,north,apple,3,1.5,2024-01-01
EOF
}

@test "--group-by with --agg gives one row per key in order of first appearance" {
    assert_run_out sales.csv --group-by region --agg 'n = count(), total = sum(qty)' <<'EOF'
region,n,total
north,3,10
south,2,10
east,2,8
,1,4
EOF
}

@test "--agg items without a name are named agg_column" {
    assert_run_out sales.csv --group-by=product '--agg=count(), sum(qty), max(price)' <<'EOF'
product,count,sum_qty,max_price
apple,3,14,1.5
pear,3,12,2.25
fig,2,6,4.0
EOF
}

@test "--group-by on several keys" {
    assert_run_out sales.csv --filter 'region is not null' --group-by 'region, product' --agg 'n = count()' <<'EOF'
region,product,n
north,apple,1
south,pear,1
north,pear,1
east,apple,1
south,apple,1
north,fig,1
east,pear,1
EOF
}

@test "--agg alone aggregates the whole input to one row" {
    assert_run_out sales.csv --agg 'n = count(), s = sum(qty), m = min(day)' <<'EOF'
n,s,m
8,32,2024-01-01
EOF
}

@test "--sort is ascending with nulls last" {
    assert_run_out sales.csv --sort qty --select id <<'EOF'
id
4
6
1
8
3
7
5
2
EOF
}

@test "--sort -x is descending, still nulls last" {
    assert_run_out sales.csv --sort=-qty --select id <<'EOF'
id
5
7
3
8
1
6
4
2
EOF
}

@test "--sort 'x desc nulls first'" {
    assert_run_out sales.csv --sort 'qty desc nulls first' --select id <<'EOF'
id
2
5
7
3
8
1
6
4
EOF
}

@test "--sort on several keys, and it is stable" {
    assert_run_out sales.csv --sort 'region, -price' --select id <<'EOF'
id
7
4
6
3
1
2
5
8
EOF
    assert_run_out sales.csv --sort product --select id <<'EOF'
id
1
4
5
6
8
2
3
7
EOF
}

@test "--head N and --limit N keep the first N rows" {
    assert_run_out sales.csv --head 2 --select id <<'EOF'
id
1
2
EOF
    assert_run_out sales.csv --limit=2 --select id <<'EOF'
id
1
2
EOF
}

@test "--tail=N, --offset=N, --sample=N --seed=S, --with-row-number=NAME" {
    assert_run_out sales.csv --tail=2 --select id <<'EOF'
id
7
8
EOF
    assert_run_out sales.csv --offset=6 --select=id <<'EOF'
id
7
8
EOF
    # seed 5: the 2 smallest hashes are at positions 4 and 5 (0-based)
    assert_run_out sales.csv --sample=2 --seed=5 --with-row-number=n --select id,n <<'EOF'
id,n
5,1
6,2
EOF
    assert_run_out sales.csv --sample=25% --select id <<'EOF'
id
4
5
EOF
}

@test "--head 0 writes only the header" {
    assert_run_out sales.csv --head 0 <<'EOF'
id,region,product,qty,price,day
EOF
}

@test "--head larger than the input keeps every row" {
    run_tally sales.csv --head 1000
    assert_ok
    assert_out "$(cat sales.csv)"
}

@test "--head N --by LIST keeps the first N rows of each group in current order" {
    assert_run_out sales.csv --head 1 --by region --select id,region <<'EOF'
id,region
1,north
2,south
4,east
8,
EOF
}

@test "--sort then --head --by is the top N per group" {
    assert_run_out sales.csv --sort -qty --head 1 --by=region --select id,qty <<'EOF'
id,qty
5,10
7,7
3,5
8,4
EOF
}

@test "--distinct drops duplicate rows" {
    assert_run_out sales.csv --select product --distinct <<'EOF'
product
apple
pear
fig
EOF
}

@test "--distinct LIST keeps the first row of each value" {
    assert_run_out sales.csv --distinct product --select id,product <<'EOF'
id,product
1,apple
2,pear
6,fig
EOF
    assert_run_out sales.csv --distinct=product --select id,product <<'EOF'
id,product
1,apple
2,pear
6,fig
EOF
}

@test "--distinct followed by an option takes no list" {
    assert_run_out sales.csv --select region --distinct --head 2 <<'EOF'
region
north
south
EOF
}

@test "--distinct followed by an existing file takes no list: the file is an input" {
    assert_run_out --select product --distinct sales.csv <<'EOF'
product
apple
pear
fig
EOF
}

@test "--join --on is an inner join by default, right non-key columns after" {
    run_tally sales.csv --join regions.csv --on region
    skip_if_unsupported
    assert_ok
    assert_out <<'EOF'
id,region,product,qty,price,day,manager,product_right
1,north,apple,3,1.5,2024-01-01,ann,x
2,south,pear,,2.25,2024-01-02,bob,y
3,north,pear,5,2.25,2024-01-02,ann,x
5,south,apple,10,1.25,2024-01-03,bob,y
6,north,fig,2,4.0,2024-01-04,ann,x
EOF
}

@test "--join --how left keeps unmatched left rows; null keys never match" {
    run_tally sales.csv --join regions.csv --on region --how left --select id,manager
    skip_if_unsupported
    assert_ok
    assert_out <<'EOF'
id,manager
1,ann
2,bob
3,ann
4,
5,bob
6,ann
7,
8,
EOF
}

@test "--join --how right and full add unmatched right rows at the end, key from the right" {
    run_tally sales.csv --join regions.csv --on region --how right --select id,region,manager
    skip_if_unsupported
    assert_ok
    assert_out <<'EOF'
id,region,manager
1,north,ann
2,south,bob
3,north,ann
5,south,bob
6,north,ann
,west,cy
EOF
    run_tally sales.csv --join regions.csv --on region --how=full --select id,region,manager
    assert_ok
    assert_out <<'EOF'
id,region,manager
1,north,ann
2,south,bob
3,north,ann
4,east,
5,south,bob
6,north,ann
7,east,
8,,
,west,cy
EOF
}

@test "--join --how semi and anti output the left columns only" {
    run_tally sales.csv --join regions.csv --on region --how semi
    skip_if_unsupported
    assert_ok
    assert_out <<'EOF'
id,region,product,qty,price,day
1,north,apple,3,1.5,2024-01-01
2,south,pear,,2.25,2024-01-02
3,north,pear,5,2.25,2024-01-02
5,south,apple,10,1.25,2024-01-03
6,north,fig,2,4.0,2024-01-04
EOF
    run_tally sales.csv --join regions.csv --on region --how anti --select id
    assert_ok
    assert_out <<'EOF'
id
4
7
8
EOF
}

@test "--join --suffix names a clashing right column" {
    run_tally sales.csv --join regions.csv --on region --suffix _r --head 1
    skip_if_unsupported
    assert_ok
    assert_out <<'EOF'
id,region,product,qty,price,day,manager,product_r
1,north,apple,3,1.5,2024-01-01,ann,x
EOF
}

# ---------------------------------------------------------------- options

@test "--delimiter reads another separator" {
    printf 'a;b\n1;x,y\n2;z\n' > semi.csv
    assert_run_out semi.csv --delimiter ';' --select b <<'EOF'
b
"x,y"
z
EOF
    assert_run_out semi.csv '--delimiter=;' --select a <<'EOF'
a
1
2
EOF
}

@test "--delimiter accepts \\t and tab for a tab" {
    printf 'a\tb\n1\tx y\n' > t.txt
    assert_run_out t.txt --from csv --delimiter '\t' --select b <<'EOF'
b
x y
EOF
    assert_run_out t.txt --from csv --delimiter tab --select a <<'EOF'
a
1
EOF
}

@test "--null reads a marker as null" {
    printf 'a,b\n1,NA\nNA,2\n3,4\n' > na.csv
    assert_run_out na.csv --null NA --agg 'n = count(), na = count(a), nb = count(b), s = sum(b)' <<'EOF'
n,na,nb,s
3,2,2,6
EOF
}

@test "--no-header names the columns column1, column2, ..." {
    printf '1,x\n2,y\n' > nh.csv
    assert_run_out nh.csv --no-header <<'EOF'
column1,column2
1,x
2,y
EOF
    assert_run_out nh.csv --no-header --filter 'column1 > 1' --select column2 <<'EOF'
column2
y
EOF
}

@test "--schema fixes a column's type" {
    printf 'code,n\n007,1\n010,2\n' > codes.csv
    assert_run_out codes.csv --schema 'code:string' <<'EOF'
code,n
007,1
010,2
EOF
    assert_run_out codes.csv '--schema=code:string,n:float' --select n <<'EOF'
n
1.0
2.0
EOF
}

@test "--from reads a file whose suffix says nothing" {
    printf 'a,b\n1,2\n' > data.txt
    assert_run_out data.txt --from csv --with 'c = a + b' <<'EOF'
a,b,c
1,2,3
EOF
}

@test "--from=tsv reads tabs from standard input" {
    run_tally_in $'a\tb\n1\t2\n' - --from=tsv --select b
    assert_ok
    assert_out <<'EOF'
b
2
EOF
}

@test "--to tsv writes tabs to standard output" {
    run_tally sales.csv --head 1 --select id,region --to tsv
    assert_ok
    assert_out "$(printf 'id\tregion\n1\tnorth')"
}

@test "-o and --output write the file and nothing to stdout" {
    run_tally sales.csv --head 1 --select id,region -o out.csv
    assert_ok
    assert_out ''
    printf 'id,region\n1,north\n' > want.csv
    cmp out.csv want.csv
    run_tally sales.csv --head 1 --select id,region --output=out2.csv
    assert_ok
    cmp out2.csv want.csv
}

@test "-o with a .tsv suffix writes tab-separated values" {
    run_tally sales.csv --head 1 --select id,region -o out.tsv
    assert_ok
    printf 'id\tregion\n1\tnorth\n' > want.tsv
    cmp out.tsv want.tsv
}

@test "-o - writes to standard output" {
    assert_run_out sales.csv --head 1 --select id -o - <<'EOF'
id
1
EOF
}

@test "-f and --file run a pipeline file" {
    cat > p.json <<'EOF'
{"inputs": ["sales.csv"], "steps": [{"filter": "qty > 3"}, {"select": ["id"]}]}
EOF
    assert_run_out -f p.json <<'EOF'
id
3
5
7
8
EOF
    assert_run_out --file=p.json <<'EOF'
id
3
5
7
8
EOF
}

@test "-o on the command line overrides the pipeline file's output" {
    cat > p.json <<'EOF'
{"inputs": ["sales.csv"], "steps": [{"limit": 1}, {"select": ["id"]}], "output": "file_out.csv"}
EOF
    run_tally -f p.json -o cli_out.csv
    assert_ok
    [ ! -e file_out.csv ]
    [ "$(cat cli_out.csv)" = "$(printf 'id\n1')" ]
}

@test "-f with inputs or steps on the command line is a usage error" {
    echo '{"inputs": ["sales.csv"], "steps": []}' > p.json
    run_tally -f p.json --head 1
    assert_err 2 'tally: -f: inputs and steps come from p.json; give only options (such as -o) on the command line'
    run_tally -f p.json sales.csv
    assert_err 2 'tally: -f: inputs and steps come from p.json; give only options (such as -o) on the command line'
}

@test "--threads does not change the output" {
    run_tally sales.csv --group-by product --agg 'n = count(), s = sum(price)' --sort -s
    assert_ok
    local want=$output
    for t in 1 2 4; do
        run_tally sales.csv --threads $t --group-by product --agg 'n = count(), s = sum(price)' --sort -s
        assert_ok
        assert_out "$want"
    done
    run_tally sales.csv --threads=0 --group-by product --agg 'n = count(), s = sum(price)' --sort -s
    assert_ok
    assert_out "$want"
}

@test "--threads x is a usage error" {
    run_tally sales.csv --threads x
    assert_err 2 'tally: --threads: expected a non-negative integer up to 4096, got "x"'
}

@test "--stats prints counters to stderr and leaves stdout alone" {
    run_tally sales.csv --filter 'qty > 3' --select id
    assert_ok
    local want=$output
    run_tally sales.csv --filter 'qty > 3' --select id --stats
    [ "$status" -eq 0 ]
    assert_out "$want"
    [ -n "$stderr" ]
}

@test "--no-optimize gives the same output" {
    run_tally sales.csv --filter 'qty > 1 and qty > 2 and true' --select 'id, qty' --sort -qty --head 3
    assert_ok
    local want=$output
    run_tally sales.csv --no-optimize --filter 'qty > 1 and qty > 2 and true' --select 'id, qty' --sort -qty --head 3
    assert_ok
    assert_out "$want"
    assert_out <<'EOF'
id,qty
5,10
7,7
3,5
EOF
}

@test "--help summarises every flag on one screen" {
    run_tally --help
    assert_ok
    [[ "$output" == "usage: tally "* ]]
    local lines
    lines=$(printf '%s\n' "$output" | wc -l)
    [ "$lines" -le 40 ]
    [ -z "$(printf '%s\n' "$output" | awk 'length > 80')" ]
    for f in --filter --where --select --with --drop --rename --group-by --agg \
        --sort --head --limit --by --distinct --join --on --how --suffix \
        --delimiter --null --no-header --schema --from --to --output --file \
        --threads --stats --memory-limit --temp-dir --no-optimize --help --version explain schema \
        describe --describe completions --rows --color table; do
        [[ "$output" == *"$f"* ]] || { echo "missing $f"; return 1; }
    done
}

@test "-h is --help, and --help wins wherever it is" {
    run_tally --help
    local want=$output
    run_tally -h
    assert_ok
    assert_out "$want"
    run_tally sales.csv --filter 'x' --help
    assert_ok
    assert_out "$want"
}

@test "--version" {
    run_tally --version
    assert_ok
    assert_out 'tally 0.1.0'
}

# -------------------------------------------------------------- positionals

@test "- reads standard input" {
    run_tally_in $'a,b\n1,2\n3,4\n' - --filter 'a > 1'
    assert_ok
    assert_out <<'EOF'
a,b
3,4
EOF
}

@test "-- ends the options: a file named like a flag" {
    printf 'a\n1\n' > ./-x.csv
    assert_run_out -- -x.csv <<'EOF'
a
1
EOF
}

@test "an input may also come after the steps" {
    run_tally sales.csv --filter 'qty > 3' --select id
    local want=$output
    run_tally --filter 'qty > 3' --select id sales.csv
    assert_ok
    assert_out "$want"
}

@test "several inputs are concatenated and matched by column name" {
    printf 'x,y\n1,a\n2,b\n' > a.csv
    printf 'y,z\nc,true\n' > b.csv
    assert_run_out a.csv b.csv <<'EOF'
x,y,z
1,a,
2,b,
,c,true
EOF
}

@test "a quoted glob reads every matching file in name order" {
    mkdir logs
    printf 'n\n1\n' > logs/b.csv
    printf 'n\n2\n' > logs/a.csv
    printf 'n\n3\n' > logs/c.txt
    assert_run_out 'logs/*.csv' <<'EOF'
n
2
1
EOF
}

@test "an int64 column in one input and float64 in another becomes float64" {
    printf 'v\n1\n2\n' > i.csv
    printf 'v\n0.5\n' > f.csv
    assert_run_out i.csv f.csv <<'EOF'
v
1.0
2.0
0.5
EOF
}

@test "--rename: a new name is the rest of the item, spaces included; quotes for a comma" {
    printf 'x,y\n1,2\n' > r.csv
    assert_run_out r.csv --rename 'x:x value, y:why  not' <<'EOF2'
x value,why  not
1,2
EOF2
    assert_run_out r.csv --rename 'x:"a,b"' --select '"a,b"' <<'EOF2'
"a,b"
1
EOF2
    run_tally r.csv --rename 'x:'
    assert_err 2 'tally: syntax error: expected a new column name
  --rename: x:
              ^'
}
