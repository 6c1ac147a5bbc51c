#!/usr/bin/env bats
# run-cli: weight=10
# The optimizer (lib/opt): one explain golden per rule (the optimized plan
# and, with --verbose, the rules that fired), results that do not change
# (nulls, NaN, guards, --no-optimize), and the differential test.

load helpers

setup() {
    enter_workdir
    cp "$DATA/sales.csv" "$DATA/regions.csv" .
}

# opt_explain ARGS...: run `tally explain --verbose ARGS`, keep the text from
# "optimized plan:" on in $output.
opt_explain() {
    run_tally explain --verbose "$@"
    assert_ok || return 1
    output=$(sed -n '/^optimized plan:/,$p' <<<"$output")
}

@test "fold: literal-only expressions are computed once" {
    opt_explain sales.csv --filter '1 + 2 * 3 = qty'
    assert_out <<'EOF'
optimized plan:
  filter 7 = qty
    scan sales.csv (qty first, the rest only for kept rows)
output: id int64, region string, product string, qty int64, price float64, day date
rules:
  fold in filter: 2 * 3 -> 6
  fold in filter: 1 + 6 -> 7
EOF
}

@test "fold: an expression that would fail is left for run time" {
    opt_explain sales.csv --filter 'qty > 0 or 9223372036854775807 + 1 > 0'
    assert_out <<'EOF'
optimized plan:
  filter qty > 0 or 9223372036854775807 + 1 > 0
    scan sales.csv (qty first, the rest only for kept rows)
output: id int64, region string, product string, qty int64, price float64, day date
rules:
  (none)
EOF
    run_tally sales.csv --filter 'qty > 0 or 9223372036854775807 + 1 > 0' --select id
    [ "$status" -eq 1 ] && [[ "$stderr" == *"integer overflow"* ]] || { show; return 1; }
}

@test "and-true, or-false (everywhere)" {
    opt_explain sales.csv --filter 'qty > 1 and true' --filter 'price > 1.0 or false' \
        --select 'id, (qty > 2 and true) as big'
    assert_out <<'EOF'
optimized plan:
  project id, qty > 2 as big
    filter price > 1.0
      filter qty > 1
        scan sales.csv columns id, qty, price (qty first, the rest only for kept rows)
output: id int64, big bool
rules:
  and-true in filter: qty > 1 and true -> qty > 1
  or-false in filter: price > 1.0 or false -> price > 1.0
  and-true in project: qty > 2 and true -> qty > 2
EOF
}

@test "true-and, and-false, and-null only in a filter predicate" {
    opt_explain sales.csv --filter "true and qty > 1" --filter "region = 'x' and null" \
        --select "id, (true and qty > 1) as a, (qty > 1 and null) as b"
    assert_out <<'EOF'
optimized plan:
  project id, true and qty > 1 as a, qty > 1 and null as b
    filter false
      filter qty > 1
        scan sales.csv columns id, qty (qty first, the rest only for kept rows)
output: id int64, a bool, b bool
rules:
  true-and in filter: true and qty > 1 -> qty > 1
  and-false in filter: region = 'x' and null -> false
  cse in project: 1 repeated subexpression computed once
EOF
}

@test "a filter that is always true goes away" {
    opt_explain sales.csv --filter "qty > 1 or true"
    assert_out <<'EOF'
optimized plan:
  scan sales.csv
output: id int64, region string, product string, qty int64, price float64, day date
rules:
  or-true in filter: qty > 1 or true -> true
  drop-filter: filter true
EOF
}

@test "contradiction: comparisons of the same operands with disjoint case sets" {
    opt_explain sales.csv --filter 'qty > 5 and qty <= 5'
    assert_out <<'EOF'
optimized plan:
  filter false
    scan sales.csv (columns only for kept rows)
output: id int64, region string, product string, qty int64, price float64, day date
rules:
  contradiction in filter: qty > 5 and qty <= 5 -> false
EOF
    opt_explain sales.csv --filter 'qty >= 5 and qty <= 5'
    [[ "$output" == *"filter qty >= 5 and qty <= 5"* ]] || { show; return 1; }
}

@test "and-not: A and not A in a filter" {
    opt_explain sales.csv --filter "price > 2.0 and (region = 'north' and not (price > 2.0))"
    assert_out <<'EOF'
optimized plan:
  filter false
    scan sales.csv (columns only for kept rows)
output: id int64, region string, product string, qty int64, price float64, day date
rules:
  not-compare in filter: not price > 2.0 -> price <= 2.0
  contradiction in filter: price > 2.0 and (region = 'north' and price <= 2.0) -> false
EOF
}

@test "de-morgan, not-compare, not-not, not-flag" {
    opt_explain sales.csv --filter "not (qty < 2 or region = 'north')" \
        --filter "not (not contains(region, 'o'))" --filter 'not (qty in (1, 2))'
    assert_out <<'EOF'
optimized plan:
  filter qty not in (1, 2)
    filter contains(region, 'o')
      filter qty >= 2 and region != 'north'
        scan sales.csv (region, qty first, the rest only for kept rows)
output: id int64, region string, product string, qty int64, price float64, day date
rules:
  de-morgan in filter: not (qty < 2 or region = 'north') -> not qty < 2 and not region = 'north'
  not-compare in filter: not qty < 2 -> qty >= 2
  not-compare in filter: not region = 'north' -> region != 'north'
  not-not in filter: not not contains(region, 'o') -> contains(region, 'o')
  not-flag in filter: not qty in (1, 2) -> qty not in (1, 2)
EOF
}

@test "case-const: constant case and if branches" {
    opt_explain sales.csv --select "case when 1 > 2 then qty else price end as v, if(true, id, 0) as w"
    assert_out <<'EOF'
optimized plan:
  project price as v, id as w
    scan sales.csv columns id, price
output: v float64, w int64
rules:
  fold in project: 1 > 2 -> false
  case-const in project: case when false then cast(qty as float64) else price end -> price
  case-const in project: if(true, id, 0) -> id
EOF
}

@test "no identities: x + 0 and x * 1 stay" {
    opt_explain sales.csv --select 'price + 0.0 as a, qty * 1 as b'
    [[ "$output" == *"project price + 0.0 as a, qty * 1 as b"* ]] || { show; return 1; }
}

@test "pushdown: a filter after a with is the filter before it" {
    run_tally explain sales.csv --with 'v = qty * 2' --filter "region = 'north'"
    assert_ok
    a=$(sed -n '/^optimized plan:/,$p' <<<"$output")
    run_tally explain sales.csv --filter "region = 'north'" --with 'v = qty * 2'
    assert_ok
    b=$(sed -n '/^optimized plan:/,$p' <<<"$output")
    [ "$a" = "$b" ] || { echo "$a"; echo "$b"; return 1; }
    [[ "$a" == *"  project id, region, product, qty, price, day, qty * 2 as v
    filter region = 'north'
      scan sales.csv"* ]] || { echo "$a"; return 1; }
}

@test "pushdown: through a derived column, the expression is substituted" {
    opt_explain sales.csv --with 'v = qty * 2' --filter 'v > 4' --select id,v
    assert_out <<'EOF'
optimized plan:
  project id, qty * 2 as v
    filter qty * 2 > 4
      scan sales.csv columns id, qty (qty first, the rest only for kept rows)
output: id int64, v int64
rules:
  pushdown-filter: v > 4 moved below project
  merge-projects: a selection of a projection is one projection
EOF
}

@test "pushdown: below a sort, not below a limit" {
    opt_explain sales.csv --sort qty --filter 'qty > 1' --head 3 --filter 'id > 2'
    assert_out <<'EOF'
optimized plan:
  filter id > 2
    sort qty limit 3
      filter qty > 1
        scan sales.csv (qty first, the rest only for kept rows)
output: id int64, region string, product string, qty int64, price float64, day date
rules:
  pushdown-filter: qty > 1 moved below sort
EOF
}

@test "pushdown: HAVING on keys moves below the aggregate, on aggregates it stays" {
    opt_explain sales.csv --group-by region --agg 'n = count()' --filter "n > 1 and region != 'east'"
    assert_out <<'EOF'
optimized plan:
  filter n > 1
    aggregate by region: n = count()
      filter region != 'east'
        scan sales.csv columns region
output: region string, n int64
rules:
  split-filter: 1 of 2 conjuncts move below aggregate
  pushdown-filter: region != 'east' moved below aggregate
EOF
}

@test "pushdown: a float key stays above the aggregate (-0.0 and 0.0 are one group)" {
    opt_explain sales.csv --group-by price --agg 'n = count()' --filter 'price > 1.0'
    [[ "$output" == *"  filter price > 1.0
    aggregate by price"* ]] || { show; return 1; }
}

@test "pushdown: guards keep their order" {
    opt_explain sales.csv --filter 'qty > 0' --sort id --filter '10 // qty > 1'
    assert_out <<'EOF'
optimized plan:
  sort id
    filter 10 // qty > 1
      filter qty > 0
        scan sales.csv (qty first, the rest only for kept rows)
output: id int64, region string, product string, qty int64, price float64, day date
rules:
  pushdown-filter: 10 // qty > 1 moved below sort
EOF
}

@test "pushdown: into join sides (inner: both; left join: left only)" {
    opt_explain sales.csv --join regions.csv --on region \
        --filter "manager = 'ann' and qty > 2 and qty * 2 > 1"
    assert_out <<'EOF'
optimized plan:
  filter qty * 2 > 1
    join inner on region
      filter manager = 'ann'
        scan regions.csv (manager first, the rest only for kept rows)
      filter qty > 2
        scan sales.csv (qty first, the rest only for kept rows)
output: id int64, region string, product string, qty int64, price float64, day date, manager string, product_right string
rules:
  split-filter: 2 of 3 conjuncts move below join
  pushdown-filter: a predicate moved into the left side of a join
  pushdown-filter: a predicate moved into the right side of a join
EOF
    opt_explain sales.csv --join regions.csv --on region --how left \
        --filter "manager = 'ann'" --filter 'qty * 2 > 1'
    assert_out <<'EOF'
optimized plan:
  filter qty * 2 > 1
    filter manager = 'ann'
      join left on region
        scan regions.csv
        scan sales.csv
output: id int64, region string, product string, qty int64, price float64, day date, manager string, product_right string
rules:
  (none)
EOF
}

@test "--no-optimize runs the plan as written" {
    run_tally explain --no-optimize sales.csv --filter 'qty > 1 and true'
    assert_ok
    [[ "$output" == *"optimized plan:
  filter qty > 1 and true
    scan sales.csv"* ]] || { show; return 1; }
    run_tally explain --no-optimize --verbose sales.csv --filter 'qty > 1 and true'
    assert_ok
    [[ "$output" == *"rules:
  (none)" ]] || { show; return 1; }
}

@test "results: the same with and without the optimizer, nulls and NaN included" {
    printf 'x,y\n1,nan\n,-0.0\n3,0.0\n-2,\n0,nan\n' > d.csv
    for f in 'not (y < 1.0)' 'not (x > 1 or y = 0.0)' 'y = y and x is not null' \
             'not (x in (1, null))' 'x > 0 and not (x > 0)' 'y > 1.0 and y <= 1.0' \
             'case when x > 0 then y > 0.0 else null end'; do
        run_tally d.csv --filter "$f"
        a=$output
        run_tally d.csv --no-optimize --filter "$f"
        [ "$a" = "$output" ] || { echo "differs for $f"; echo "$a"; echo "$output"; return 1; }
    done
}

@test "differential: random pipelines agree with --no-optimize" {
    n=200
    [ -n "${TALLY_ASAN:-}" ] && n=40
    run "$CLI_DIR/../../scripts/difftest-opt" "$TALLY" "$n" 7
    [ "$status" -eq 0 ] || { echo "$output"; return 1; }
}

@test "cse: a repeated subexpression of one projection is computed once" {
    opt_explain sales.csv --select '(qty * 2) + 1 as x, (qty * 2) * 3 as y'
    assert_out <<'EOF'
optimized plan:
  project qty * 2 + 1 as x, qty * 2 * 3 as y
    scan sales.csv columns qty
output: x int64, y int64
rules:
  cse in project: 1 repeated subexpression computed once
EOF
    run_tally sales.csv --select '(qty * 2) + 1 as x, (qty * 2) * 3 as y, qty * 2 as z'
    a=$output
    run_tally sales.csv --no-optimize --select '(qty * 2) + 1 as x, (qty * 2) * 3 as y, qty * 2 as z'
    [ "$a" = "$output" ] || { echo "$a"; echo "$output"; return 1; }
}

@test "topn-by: limit N by over a sort is one sort node keeping N rows per group" {
    opt_explain sales.csv --filter 'price is not null' --sort -price --head 2 --by region --select region,price
    assert_out <<'EOF'
optimized plan:
  project region, price
    sort price desc limit 2 by region
      filter price is not null
        scan sales.csv columns region, price (price first, the rest only for kept rows)
output: region string, price float64
rules:
  topn-by: limit 2 by over a sort keeps a heap per group
EOF
    # a sort already cut to a top-k, or head 0, does not fold
    opt_explain sales.csv --sort -price --head 3 --head 2 --by region
    [[ "$output" != *"by region"*"topn-by"* ]] || { show; return 1; }
    [[ "$output" != *"topn-by"* ]] || { show; return 1; }
}
