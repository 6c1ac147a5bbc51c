#!/usr/bin/env bats
# mode, arg_max/arg_min (max_by/min_by), quantile_disc, count_if,
# approx_count_distinct and agg(...) filter (where ...): values, nulls,
# empty groups, ties, the same bytes for any --threads and batch size, and
# every error.  Expected values are DuckDB 1.5's answers to the same query
# (tests/diff covers them on generated tables too).

load helpers

data() {
    cat > t.csv <<'EOF'
k,x,b,s,d
a,2,1,p,2024-01-02
a,1,3,q,2024-01-01
b,1,3,r,
a,1,,s,2024-01-05
b,,5,t,2024-02-01
a,2,3,u,2024-01-03
c,,,v,
EOF
}

@test "mode, arg_max, arg_min, max_by, quantile_disc, count_if, approx_count_distinct per group" {
    data
    # a: x 2 1 1 2 (a tie: 2 came first), b: the max of b is 5, on t;
    # c: no x, no b: null, except the counts of a sketch (0 or its values)
    assert_run_out t.csv --group-by k --agg 'm = mode(x), am = arg_max(s, b), an = arg_min(s, b), mb = max_by(s, b), nb = min_by(x, d), qd = quantile_disc(x, 0.5), qd2 = quantile_disc(d, 0.75), ci = count_if(x > 1), acd = approx_count_distinct(s)' <<'EOF'
k,m,am,an,mb,nb,qd,qd2,ci,acd
a,2,q,p,q,1,1,2024-01-03,2,4
b,1,t,r,t,,1,2024-02-01,0,2
c,,,,,,,,,1
EOF
}

@test "agg(...) filter (where ...) for counts, sums, first/last and distinct counts" {
    data
    assert_run_out t.csv --group-by k --agg 'n = count() filter (where x > 1), s = sum(x) filter (where b >= 3), f = first(s) filter (where x = 1), l = last(x) filter (where b is null), cd = count_distinct(s) filter (where x is not null), m = mode(s) filter (where b = 3)' <<'EOF'
k,n,s,f,l,cd,m
a,2,3,q,1,4,q
b,0,1,r,,1,r
c,0,,,,0,
EOF
    # without keys; count(*) too; a null condition keeps no row
    assert_run_out t.csv --agg 'n = count(*) filter (where x > 1), z = count() filter (where null), w = string_agg(s, '"'-'"') filter (where b > 1)' <<'EOF'
n,z,w
2,0,q-r-t-u
EOF
}

@test "explain prints the filter clause as written" {
    data
    run_tally explain t.csv --group-by k --agg 's = sum(x) filter (where b >= 3), n = count(*) filter (where b > 1)'
    assert_out <<'EOF'
logical plan:
  aggregate by k: s = sum(x) filter (where b >= 3), n = count(*) filter (where b > 1)
    scan t.csv
optimized plan:
  aggregate by k: s = sum(x) filter (where b >= 3), n = count(*) filter (where b > 1)
    scan t.csv columns k, x, b
output: k string, s int64, n int64
EOF
}

@test "quantile_disc picks a value (ceil(n*q)-th), floats and ints alike" {
    printf 'v,f\n1,1.5\n2,2.5\n3,3.5\n4,4.5\n' > q.csv
    assert_run_out q.csv --agg 'a = quantile_disc(v, 0), b = quantile_disc(v, 0.25), c = quantile_disc(v, 0.6), d = quantile_disc(v, 1), e = quantile_disc(f, 0.1), g = quantile_disc(v, 0.5) filter (where v > 1)' <<'EOF'
a,b,c,d,e,g
1,1,3,4,1.5,3
EOF
}

@test "the new aggregates give the same bytes for any --threads and batch size" {
    awk 'BEGIN { srand(7); print "k,x,b,s"; for (i = 0; i < 60000; i++)
        printf "k%d,%s,%s,s%d\n", int(rand()*300), (rand() < .1 ? "" : int(rand()*40)),
               (rand() < .1 ? "" : int(rand()*1000)), int(rand()*3000) }' > big.csv
    a='m = mode(x), am = arg_max(s, b), an = arg_min(x, b), qd = quantile_disc(b, 0.3), ci = count_if(x > 20), acd = approx_count_distinct(s), n = count() filter (where b > 500), f = first(s) filter (where x = 7), md = mode(s) filter (where b < 10)'
    run_tally big.csv --threads 1 --group-by k --agg "$a"
    assert_ok
    want=$output
    run_tally big.csv --threads 4 --group-by k --agg "$a"
    [ "$output" = "$want" ]
    TALLY_BATCH_ROWS=1000 run_tally big.csv --threads 3 --group-by k --agg "$a"
    [ "$output" = "$want" ]
}

@test "approx_count_distinct is within its error bound, and close for a few values" {
    seq 1 200000 | awk 'BEGIN { print "v" } { print $1 % 50000 }' > many.csv
    run_tally many.csv --agg 'a = approx_count_distinct(v), e = count_distinct(v)'
    assert_ok
    a=${output#*$'\n'}; a=${a%%,*}
    # 1.6% standard error: within 5% (three of them)
    [ "$a" -gt 47500 ] && [ "$a" -lt 52500 ]
    # linear counting of the 4096 registers: 20 values read 20; the 100
    # values 1000..1099 read 99 (values that share a register)
    assert_run_out many.csv --filter 'v < 20 or (v >= 1000 and v < 1100)' --with 'small = v < 20' --group-by small --agg 'a = approx_count_distinct(v)' <<'EOF'
small,a
true,20
false,99
EOF
}

@test "wrong argument types are usage errors with a caret" {
    data
    run_tally t.csv --agg 'n = count_if(x)'
    assert_err 2 <<'EOF'
tally: count_if needs a bool argument, not int64
  --agg: n = count_if(x)
                      ^
EOF
    run_tally t.csv --agg 'q = quantile_disc(s, 0.5)'
    assert_err 2 <<'EOF'
tally: quantile_disc needs a number, date or timestamp argument, not string
  --agg: q = quantile_disc(s, 0.5)
                           ^
EOF
    run_tally t.csv --agg 'q = quantile_disc(x, 2)'
    assert_err 2 <<'EOF'
tally: quantile_disc needs a number between 0 and 1 as its second argument
  --agg: q = quantile_disc(x, 2)
                              ^
EOF
    run_tally t.csv --agg 'a = arg_max(s)'
    assert_err 2 <<'EOF'
tally: arg_max() takes 2 arguments, got 1
  --agg: a = arg_max(s)
             ^^^^^^^^^^
EOF
}

@test "filter on a non-aggregate, a condition that is not bool, an aggregate inside: usage errors" {
    data
    run_tally t.csv --select 'y = abs(x) filter (where x > 1)'
    assert_err 2 <<'EOF'
tally: filter (where ...) applies only to an aggregate, not to abs()
  --select: y = abs(x) filter (where x > 1)
                       ^^^^^^
EOF
    run_tally t.csv --agg 's = sum(x) filter (where x)'
    assert_err 2 <<'EOF'
tally: the filter condition must be bool, not int64
  --agg: s = sum(x) filter (where x)
                                  ^
EOF
    run_tally t.csv --agg 's = sum(x) filter (where sum(x) > 1)'
    assert_err 2 <<'EOF'
tally: aggregate "sum" is not allowed here
  --agg: s = sum(x) filter (where sum(x) > 1)
                                  ^^^^^^
EOF
    run_tally t.csv --agg 's = sum(x) filter (x > 1)'
    assert_err 2 <<'EOF'
tally: syntax error: expected "where"
  --agg: s = sum(x) filter (x > 1)
                            ^
EOF
    run_tally t.csv --filter 'count() filter (where x > 1) > 0'
    assert_err 2 <<'EOF'
tally: aggregate "count" is not allowed here
  --filter: count() filter (where x > 1) > 0
            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^
EOF
}
