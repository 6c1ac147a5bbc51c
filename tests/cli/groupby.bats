#!/usr/bin/env bats
# run-cli: weight=5
# Group-by engine: expressions over aggregates, the groupers' key equality
# and order, head --by after a sort, and the group-by errors.  Expected values
# were worked out by hand.

load helpers

sales() {
    cat > s.csv <<'EOF'
region,item,qty,price
north,apple,3,1.5
south,pear,,2.0
north,pear,2,2.5
east,apple,5,
south,apple,1,1.0
north,apple,4,0.5
EOF
}

@test "expressions over aggregates: ratios and differences per group" {
    sales
    # north: (4.5 + 5 + 2) / 9; south: the pear has no qty, 1 / 1; east: no price
    assert_run_out s.csv --group-by region --agg \
        'avg_price = sum(qty * price) / sum(qty), n = count(), spread = max(qty) - min(qty)' <<'EOF'
region,avg_price,n,spread
north,1.2777777777777777,3,2
south,1.0,2,0
east,,1,0
EOF
}

@test "expressions over aggregates: functions of aggregates, unnamed items" {
    cat > c.csv <<'EOF'
k,x,y
a,1,2
a,2,4
a,3,6
b,1,1
b,2,0
b,3,1
EOF
    # a: y = 2x, corr 1; b: corr 0
    assert_run_out c.csv --group-by k --agg 'r2 = pow(corr(x, y), 2), sum(x) + 1' <<'EOF'
k,r2,sum(x)+1
a,1.0,7
b,0.0,7
EOF
}

@test "expressions over aggregates may use group keys and literals" {
    sales
    assert_run_out s.csv --group-by region,item --agg "x = region || ':' || item, n = count() * 10" <<'EOF'
region,item,x,n
north,apple,north:apple,20
south,pear,south:pear,10
north,pear,north:pear,10
east,apple,east:apple,10
south,apple,south:apple,10
EOF
}

@test "expressions over aggregates without keys, also over no rows" {
    sales
    assert_run_out s.csv --agg 'r = sum(qty) / count(qty), m = sum(qty)' <<'EOF'
r,m
3.0,15
EOF
    assert_run_out s.csv --filter false --agg 'r = sum(qty) / count(qty), c = count() + 1' <<'EOF'
r,c
,1
EOF
}

@test "a filter after group-by sees the items computed over aggregates" {
    sales
    assert_run_out s.csv --group-by region --agg 'mean_qty = sum(qty) / count(qty)' --filter 'mean_qty >= 3' <<'EOF'
region,mean_qty
north,3.0
east,5.0
EOF
}

@test "a repeated aggregate call is computed once" {
    sales
    run_tally explain s.csv --group-by region --agg 'a = sum(qty) / count(), b = sum(qty)'
    assert_ok
    [[ "$output" == *'aggregate by region: "sum(qty)" = sum(qty), "count()" = count()'* ]] || { show; return 1; }
    assert_run_out s.csv --group-by region --agg 'a = sum(qty) / count(), b = sum(qty)' <<'EOF'
region,a,b
north,3.0,9
south,0.5,1
east,5.0,5
EOF
}

@test "a column outside any aggregate that is not a key is a usage error" {
    sales
    run_tally s.csv --group-by region --agg 'x = qty + sum(qty)' -o out.csv
    assert_err 2 <<'EOF'
tally: column "qty" must be a group key or inside an aggregate such as sum(qty)
  --agg: x = qty + sum(qty)
             ^^^
EOF
    assert_only_files s.csv
}

@test "several int, float and bool keys: nulls, -0.0 = 0.0, NaN = NaN, first appearance" {
    cat > f.csv <<'EOF'
a,b,c
1,2.0,true
1,-0.0,false
1,0.0,false
,,
,,
1,nan,true
1,nan,true
2,2.0,true
1,2.0,
EOF
    assert_run_out f.csv --group-by a,b,c --agg 'n = count()' <<'EOF'
a,b,c,n
1,2.0,true,1
1,-0.0,false,2
,,,2
1,nan,true,2
2,2.0,true,1
1,2.0,,1
EOF
}

@test "--sort -v then --head --by keeps the top N per group in sorted order" {
    cat > h.csv <<'EOF'
id,v
a,1
b,5
a,7
b,
a,3
b,2
c,4
a,7
EOF
    assert_run_out h.csv --filter 'v is not null' --sort -v --head 2 --by id --select 'id, v as top2' <<'EOF'
id,top2
a,7
a,7
b,5
c,4
b,2
EOF
}

@test "sum over int64 that leaves the range names the group; no output file" {
    cat > big.csv <<'EOF'
region,x
north,9223372036854775807
south,1
north,1
EOF
    run_tally big.csv --group-by region --agg 's = sum(x)' -o out.csv
    assert_err 1 <<'EOF'
tally: sum overflows int64 in group region="north"
  --agg: s = sum(x)
             ^^^^^^
EOF
    assert_only_files big.csv
    # intermediate overflow does not count
    printf 'x\n9223372036854775807\n1\n-2\n' > mid.csv
    assert_run_out mid.csv --agg 's = sum(x)' <<'EOF'
s
9223372036854775806
EOF
}

@test "sum over a string and quantile outside 0..1 are usage errors with a caret" {
    sales
    run_tally s.csv --group-by region --agg 's = sum(item)'
    assert_err 2 <<'EOF'
tally: sum needs a numeric argument, not string
  --agg: s = sum(item)
                 ^^^^
EOF
    run_tally s.csv --agg 'q = quantile(qty, 1.5)'
    assert_err 2 <<'EOF'
tally: quantile needs a number between 0 and 1 as its second argument
  --agg: q = quantile(qty, 1.5)
                           ^^^
EOF
    run_tally s.csv --agg 'q = sum(sum(qty))'
    assert_err_glob 2 '*aggregate*not allowed*'
}

@test "grouping by runs of equal keys gives the row-by-row answer (keys coming back, nulls, NaN)" {
    # one awk, not a shell loop: under bats every shell command is traced
    awk 'BEGIN { print "k,f,v"
      for (i = 1; i <= 3000; i++) {
        g = int(i / 7) % 50                 # runs of 7 rows, keys come back
        m = g % 5
        f = m == 0 ? "" : m == 1 ? "nan" : m == 2 ? "-0.0" : m == 3 ? "0.0" : g ".5"
        k = g % 11 == 0 ? "" : "key" (g % 13)
        print k "," f "," i
      } }' > runs.csv
    run_tally runs.csv --group-by k,f --agg 'n = count(), s = sum(v), fv = first(v)'
    assert_ok
    local with_runs=$output
    TALLY_GROUP_NO_RUNS=1 run_tally runs.csv --group-by k,f --agg 'n = count(), s = sum(v), fv = first(v)'
    assert_ok
    [ "$output" = "$with_runs" ] || { show; return 1; }
    # the first group (g = 0: rows 1-6 and 8 runs of 7 from row 350 on) by hand
    [ "$(printf '%s\n' "$output" | sed -n 2p)" = ',,62,88389,1' ] || { show; return 1; }
}

clustered() {
    awk 'BEGIN { print "k,f,v"
      for (i = 1; i <= 3000; i++) {
        g = int(i / 7)                      # runs of 7 rows, each key once
        m = g % 5
        f = m == 0 ? "" : m == 1 ? "nan" : m == 2 ? "-0.0" : m == 3 ? "0.0" : g ".5"
        k = g == 5 ? "" : "key" g           # one null key
        print k "," f "," i
      } }' > runs.csv
}

@test "--sorted groups clustered input by runs: the hash path's answer, batch boundaries too" {
    clustered
    TALLY_GROUP_NO_RUNS=1 run_tally runs.csv --group-by k,f --agg 'n = count(), s = sum(v)'
    assert_ok
    local want=$output
    for rows in 1 3 64 100000; do
        TALLY_BATCH_ROWS=$rows run_tally runs.csv --sorted --group-by k,f --agg 'n = count(), s = sum(v)'
        assert_ok
        [ "$output" = "$want" ] || { show; return 1; }
    done
    # the pipeline file's top-level option
    printf '{"input": "runs.csv", "sorted": true, "steps": [{"group_by": ["k", "f"], "agg": {"n": "count()", "s": "sum(v)"}}]}' > p.json
    run_tally -f p.json
    assert_ok
    [ "$output" = "$want" ] || { show; return 1; }
}

@test "--sorted: a key that comes back after its run ended is a data error naming file and line" {
    write sales.csv <<'EOF'
region,qty
north,1
north,2
south,3
east,4
east,5
south,6
north,7
EOF
    run_tally sales.csv --sorted --group-by region --agg 'n = count()' -o out.csv
    assert_err 1 'tally: sales.csv:7: --sorted: key region="south" reappears after its run ended'
    assert_only_files sales.csv
    TALLY_BATCH_ROWS=2 run_tally sales.csv --sorted --group-by region --agg 'n = count()'
    assert_err 1 'tally: sales.csv:7: --sorted: key region="south" reappears after its run ended'
    # two keys: (north, 1) comes back at row 4
    printf 'a,b\nnorth,1\nnorth,2\nnorth,2\nnorth,1\n' > two.csv
    run_tally two.csv --sorted --group-by a,b --agg 'n = count()'
    assert_err 1 'tally: two.csv:5: --sorted: key a="north", b=1 reappears after its run ended'
    # without --sorted the same input is simply grouped
    assert_run_out sales.csv --group-by region --agg 'n = count()' <<'EOF'
region,n
north,3
south,2
east,2
EOF
}

@test "a group-by right after a sort on its keys groups by runs (any direction)" {
    clustered
    run_tally runs.csv --sort -k,f --group-by k,f --agg 'n = count(), s = sum(v)' --no-optimize
    assert_ok
    local want=$output
    TALLY_BATCH_ROWS=5 run_tally runs.csv --sort -k,f --group-by k,f --agg 'n = count(), s = sum(v)'
    assert_ok
    [ "$output" = "$want" ] || { show; return 1; }
    TALLY_GROUP_NO_RUNS=1 run_tally runs.csv --sort -k,f --group-by k,f --agg 'n = count(), s = sum(v)'
    assert_ok
    [ "$output" = "$want" ] || { show; return 1; }
}
