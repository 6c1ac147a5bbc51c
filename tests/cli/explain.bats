#!/usr/bin/env bats
# tally explain: the plan before and after optimization, printed to
# standard output; nothing is run and no output file is written.

load helpers

setup() {
    enter_workdir
    cp "$EXAMPLES/sales.csv" .
    cp "$DATA/sales.csv" small.csv
}

@test "explain prints the logical plan, the optimized plan and the output columns" {
    assert_run_out explain sales.csv --filter "units > 10 and region != 'test'" \
        --group-by region --agg 'total = sum(units), n = count()' --sort 'total desc' --head 10 <<'EOF'
logical plan:
  limit 10
    sort total desc
      aggregate by region: total = sum(units), n = count()
        filter units > 10 and region != 'test'
          scan sales.csv
optimized plan:
  sort total desc limit 10
    aggregate by region: total = sum(units), n = count()
      filter units > 10 and region != 'test'
        scan sales.csv columns region, units
output: region string, total int64, n int64
EOF
}

@test "explain: the optimizer folds the cast of a constant" {
    run_tally explain sales.csv --filter 'amount > 100'
    assert_ok
    [[ "$output" == *"optimized plan:
  filter amount > 100.0
"* ]] || { show; return 1; }
}

@test "explain writes no output file and reads no further than it must" {
    run_tally explain small.csv --select id -o out.csv
    assert_ok
    [[ "$output" == "logical plan:"* ]]
    assert_only_files sales.csv small.csv
}

@test "explain of a bare scan" {
    assert_run_out explain small.csv <<'EOF'
logical plan:
  scan small.csv
optimized plan:
  scan small.csv
output: id int64, region string, product string, qty int64, price float64, day date
EOF
}

@test "explain shows select, with, drop and rename as projections with names" {
    run_tally explain small.csv --with 'v = qty * price' --rename 'product:item' --drop day --select 'id, item, v * 2 as v2'
    assert_ok
    [[ "$output" == *"logical plan:"*"optimized plan:"*"output: id int64, item string, v2 float64" ]] || { show; return 1; }
}

@test "explain shows the optimizer pushing a projection into the scan" {
    run_tally explain small.csv --filter 'qty > 3' --select id
    assert_ok
    [[ "$output" == *"optimized plan:"*"scan small.csv columns id, qty"* ]] || { show; return 1; }
}

@test "explain shows a sort and a head folded into top-k" {
    run_tally explain small.csv --sort -qty --head 3
    assert_ok
    [[ "$output" == *"optimized plan:"*"  sort qty desc limit 3"* ]] || { show; return 1; }
}

@test "explain --no-optimize shows the plan as written twice" {
    run_tally explain small.csv --sort -qty --head 3 --no-optimize
    assert_ok
    local logical optimized
    logical=$(printf '%s\n' "$output" | sed -n '/^logical plan:/,/^optimized plan:/p' | sed '1d;$d')
    optimized=$(printf '%s\n' "$output" | sed -n '/^optimized plan:/,/^output:/p' | sed '1d;$d')
    [ -n "$logical" ]
    [ "$logical" = "$optimized" ] || { show; return 1; }
}

@test "explain shows distinct, limit by and HAVING" {
    run_tally explain small.csv --group-by region --agg 'n = count()' --filter 'n > 1' --distinct n --head 1 --by n
    assert_ok
    [[ "$output" == *"logical plan:
  limit 1 by n
    distinct n
      filter n > 1
        aggregate by region: n = count()
          scan small.csv"* ]] || { show; return 1; }
}

@test "explain reports the same usage errors as a run" {
    run_tally explain small.csv --filter 'qyt > 1'
    local explain_err=$stderr
    [ "$status" -eq 2 ]
    run_tally small.csv --filter 'qyt > 1'
    [ "$status" -eq 2 ]
    [ "$stderr" = "$explain_err" ]
}

@test "explain is deterministic" {
    run_tally explain small.csv --filter 'qty > 1 or price < 2' --group-by product --agg 'sum(qty)' --sort product
    assert_ok
    local first=$output
    run_tally explain small.csv --filter 'qty > 1 or price < 2' --group-by product --agg 'sum(qty)' --sort product
    assert_out "$first"
}

@test "explain: a filter over a CSV scan is tested in the reader, its columns first" {
    run_tally explain sales.csv --filter "units > 10" --select region,units,amount
    assert_ok || return 1
    [[ "$output" == *"    scan sales.csv columns region, units, amount (units first, the rest only for kept rows)"* ]] || { show; return 1; }
    # NDJSON converts whole morsels: no note
    printf '{"units":1,"region":"a"}\n' > s.ndjson
    run_tally explain s.ndjson --filter "units > 10"
    assert_ok || return 1
    [[ "$output" == *"    scan s.ndjson"$'\n'"output:"* ]] || { show; return 1; }
    # a predicate reading every scanned column: no note
    run_tally explain sales.csv --filter "units > 10" --select units
    [[ "$output" == *"    scan sales.csv columns units"$'\n'"output:"* ]] || { show; return 1; }
}
