#!/usr/bin/env bats
# run-cli: spill
# The examples of the command-line contract (man/tally.1, EXAMPLES) that use the foundation steps, each in
# its flag form and its JSON form (which must agree), with the output worked
# out by hand.  Also the files shipped in examples/.

load helpers

setup() {
    enter_workdir
    cat > ex.csv <<'EOF'
a,b,k,v
1,10,x,5
2,20,y,3
3,,x,9
4,40,y,1
5,50,x,7
EOF
}

# both 'STEPS' FLAGS...: run the JSON steps and the flags on ex.csv, require
# the same output from both, and leave it in $output.
both() {
    local steps=$1
    shift
    printf '{"inputs": ["ex.csv"], "steps": %s}\n' "$steps" > p.json
    run_tally -f p.json
    assert_ok
    local json_out=$output
    run_tally ex.csv "$@"
    assert_ok
    assert_out "$json_out"
}

@test "filter: {filter: EXPR} and --filter EXPR" {
    both '[{"filter": "v > 4 and b is not null"}]' --filter 'v > 4 and b is not null'
    assert_out <<'EOF'
a,b,k,v
1,10,x,5
5,50,x,7
EOF
}

@test "select: {select: [a, b * 2 as c]}" {
    both '[{"select": ["a", "b * 2 as c"]}]' --select 'a, b * 2 as c'
    assert_out <<'EOF'
a,c
1,20
2,40
3,
4,80
5,100
EOF
}

@test "with: {with: {NAME: EXPR}} adds a column" {
    both '[{"with": {"c": "a + b"}}]' --with 'c = a + b'
    assert_out <<'EOF'
a,b,k,v,c
1,10,x,5,11
2,20,y,3,22
3,,x,9,
4,40,y,1,44
5,50,x,7,55
EOF
}

@test "drop: {drop: [a]}" {
    both '[{"drop": ["a"]}, {"limit": 1}]' --drop a --head 1
    assert_out <<'EOF'
b,k,v
10,x,5
EOF
}

@test "rename: {rename: {OLD: NEW}}" {
    both '[{"rename": {"a": "first"}}, {"limit": 1}]' --rename 'a:first' --head 1
    assert_out <<'EOF'
first,b,k,v
1,10,x,5
EOF
}

@test "group-by: {group_by: [k], agg: {n: count()}}" {
    both '[{"group_by": ["k"], "agg": {"n": "count()"}}]' --group-by k --agg 'n = count()'
    assert_out <<'EOF'
k,n
x,3
y,2
EOF
}

@test "--agg alone aggregates the whole input; sum(v) -> sum_v, count() -> count" {
    both '[{"agg": ["sum(v)", "count()"]}]' --agg 'sum(v), count()'
    assert_out <<'EOF'
sum_v,count
25,5
EOF
}

@test "sort: {sort: [a, b desc nulls first]}" {
    both '[{"sort": ["k", "b desc nulls first"]}, {"select": ["a"]}]' --sort 'k, b desc nulls first' --select a
    assert_out <<'EOF'
a
3
5
1
4
2
EOF
}

@test "sort: -b is short for b desc" {
    both '[{"sort": ["b desc"]}, {"select": ["a"]}]' --sort -b --select a
    assert_out <<'EOF'
a
5
4
2
1
3
EOF
}

@test "limit: {limit: 10} keeps the first rows" {
    both '[{"limit": 2}]' --head 2
    assert_out <<'EOF'
a,b,k,v
1,10,x,5
2,20,y,3
EOF
}

@test "limit by: after --sort -v the top N per group" {
    both '[{"sort": ["v desc"]}, {"limit": 2, "by": ["k"]}, {"select": ["a", "k", "v"]}]' --sort -v --head 2 --by k --select a,k,v
    assert_out <<'EOF'
a,k,v
3,x,9
5,x,7
2,y,3
4,y,1
EOF
}

@test "distinct: {distinct: [a]} keeps the first row of each" {
    both '[{"distinct": ["k"]}]' --distinct k
    assert_out <<'EOF'
a,b,k,v
1,10,x,5
2,20,y,3
EOF
}

@test "a filter after a group-by acts on the groups" {
    both '[{"group_by": ["k"], "agg": {"s": "sum(v)"}}, {"filter": "s > 10"}]' --group-by k --agg 's = sum(v)' --filter 's > 10'
    assert_out <<'EOF'
k,s
x,21
EOF
}

@test "literals of the expression language" {
    assert_run_out ex.csv --head 1 --select "42 as i, -1.5e3 as f, 'it''s' as s, true as t, false as u, null as n, date '2024-01-31' as d, timestamp '2024-01-31 12:00:00' as ts" <<'EOF'
i,f,s,t,u,n,d,ts
42,-1500.0,it's,true,false,,2024-01-31,2024-01-31 12:00:00
EOF
}

@test "case when x > 0 then sqrt(x) end never fails on negative x" {
    printf 'x\n4\n-4\n' > neg.csv
    assert_run_out neg.csv --select 'x, case when x > 0 then sqrt(x) end as r' <<'EOF'
x,r
4,2.0
-4,
EOF
}

@test "float layout examples: 71.0 0.1 1000000000000000.0 1e-05 1e+16 03:04:05.5" {
    assert_run_out ex.csv --head 1 --select "71.0 as a, 0.1 as b, 1e15 as c, 0.00001 as d, 1e16 as e, timestamp '2024-01-01 03:04:05.5' as t, 1/0 as i, 0/0 as n" <<'EOF'
a,b,c,d,e,t,i,n
71.0,0.1,1000000000000000.0,1e-05,1e+16,2024-01-01 03:04:05.5,inf,nan
EOF
}

@test "examples/top_regions.json: the man page's pipeline on examples/sales.csv" {
    # amounts > 100 outside region 'test', by region, summed by hand
    assert_run_out -f "$EXAMPLES/top_regions.json" <<'EOF'
region,total,n
north,1997.25,6
west,1807.75,6
east,1235.0,5
south,1157.0,5
EOF
}

@test "scripts/demo runs and prints its commands and results" {
    [ -x "$BATS_TEST_DIRNAME/../../scripts/demo" ] || skip "no scripts/demo"
    run --separate-stderr env TALLY="$TALLY" "$BATS_TEST_DIRNAME/../../scripts/demo"
    [ "$status" -eq 0 ] || { show; return 1; }
    [[ "$output" == *'$ '*tally*"region"* ]] || { show; return 1; }
    [[ "$output" == *"north"* ]]
    [[ "$output" == *$'month,revenue,best\n2024-01,3175.75,north\n2024-02,1219.25,east\n'* ]] || { show; return 1; }
}
