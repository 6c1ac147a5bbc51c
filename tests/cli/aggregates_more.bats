#!/usr/bin/env bats
# mode, arg_max/arg_min (max_by/min_by), quantile_disc, count_if,
# approx_count_distinct, agg(...) filter (where ...), and median, quantile
# and mean of dates and timestamps: values, nulls,
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

times() {
    cat > tm.csv <<'EOF'
g,d,t,z
a,2024-01-01,2024-01-01 00:00:00,2024-01-01 00:00:00+00
a,2024-01-02,2024-01-01 00:00:01,2024-01-01 00:00:01+00
b,2024-01-05,2024-01-02 12:00:00,2024-01-02 12:00:00+00
b,2024-03-01,2024-01-03 00:00:00.000003,2024-01-03 00:00:00.000003+00
a,,,
c,1969-12-31,1969-12-31 23:59:59.999999,1969-12-31 23:59:59.999999+00
c,1969-12-28,1969-12-31 23:59:59.999996,1969-12-31 23:59:59.999996+00
c,1969-12-30,,1969-12-31 23:59:59.999998+00
d,,,
EOF
}

@test "median, quantile and mean of dates and timestamps are timestamps, as DuckDB's" {
    times
    # even counts interpolate: a date at its midnight, llround(lo(1-d) +
    # hi*d) in microseconds (-2.5 rounds to -3); mean divides the exact sum
    # toward zero, up when the remainder is more than half the count; an
    # odd count is the middle value; a group of nulls is null (DuckDB 1.5's
    # answers, as the quantiles below)
    assert_run_out tm.csv --group-by g --agg 'md = median(d), mt = median(t), mz = median(z), ad = mean(d), at = avg(t), az = mean(z)' <<'EOF'
g,md,mt,mz,ad,at,az
a,2024-01-01 12:00:00,2024-01-01 00:00:00.5,2024-01-01 00:00:00.5+00,2024-01-01 12:00:00,2024-01-01 00:00:00.5,2024-01-01 00:00:00.5+00
b,2024-02-02 00:00:00,2024-01-02 18:00:00.000002,2024-01-02 18:00:00.000002+00,2024-02-02 00:00:00,2024-01-02 18:00:00.000001,2024-01-02 18:00:00.000001+00
c,1969-12-30 00:00:00,1969-12-31 23:59:59.999997,1969-12-31 23:59:59.999998+00,1969-12-29 16:00:00,1969-12-31 23:59:59.999998,1969-12-31 23:59:59.999998+00
d,,,,,,
EOF
    assert_run_out tm.csv --agg 'q1 = quantile(d, 0.25), q2 = quantile(t, 0.25), q3 = quantile_cont(z, 0.9), q4 = quantile(d, 0.3333333), q5 = quantile(t, 0), q6 = quantile(z, 1), n = median(d) filter (where g = '"'d'"')' <<'EOF'
q1,q2,q3,q4,q5,q6,n
1969-12-30 12:00:00,1983-07-02 17:59:59.999999,2024-01-02 16:48:00.000001+00,1969-12-30 23:59:59.98272,1969-12-31 23:59:59.999996,2024-01-03 00:00:00.000003+00,
EOF
    # the types: timestamp over dates and timestamps, timestamptz over timestamptz
    run_tally explain tm.csv --agg 'median(d), quantile(t, 0.5), mean(z), median(1.5)'
    assert_ok
    [ "${lines[${#lines[@]}-1]}" = 'output: median_d timestamp, "quantile(t,0.5)" timestamp, mean_z timestamptz, "median(1.5)" float64' ] || { show; return 1; }
}

@test "median, quantile and mean of timestamps: the same bytes for any --threads and batch size" {
    awk 'BEGIN { srand(11); print "k,d,t"; for (i = 0; i < 60000; i++)
        printf "k%d,%s,%s\n", int(rand()*300), (rand() < .1 ? "" : sprintf("%04d-%02d-%02d", 1900 + int(rand()*200), 1 + int(rand()*12), 1 + int(rand()*28))),
               (rand() < .1 ? "" : sprintf("20%02d-01-01 00:00:%02d.%06d", int(rand()*50), int(rand()*60), int(rand()*1000000))) }' > bigt.csv
    a='md = median(d), qt = quantile(t, 0.37), ad = mean(d), at = mean(t)'
    run_tally bigt.csv --threads 1 --group-by k --agg "$a"
    assert_ok
    want=$output
    run_tally bigt.csv --threads 4 --group-by k --agg "$a"
    [ "$output" = "$want" ]
    TALLY_BATCH_ROWS=1000 run_tally bigt.csv --threads 3 --group-by k --agg "$a"
    [ "$output" = "$want" ]
    run_tally bigt.csv --threads 1 --agg "$a"
    want=$output
    run_tally bigt.csv --threads 4 --agg "$a"
    [ "$output" = "$want" ]
}

@test "a median or mean of dates past the timestamp range fails its group" {
    times
    run_tally tm.csv --with 'e = if(g = '"'b'"', d + 200000000, d)' --group-by g --agg 'm = median(e)'
    assert_err 1 <<'EOF'
tally: median overflows int64 in group g="b"
  --agg: m = median(e)
             ^^^^^^^^^
EOF
    run_tally tm.csv --with 'e = d + 200000000' --agg 'm = mean(e)'
    assert_err 1 <<'EOF'
tally: mean overflows int64
  --agg: m = mean(e)
             ^^^^^^^
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
    run_tally t.csv --agg 'm = median(s)'
    assert_err 2 <<'EOF'
tally: median needs a number, date or timestamp argument, not string
  --agg: m = median(s)
                    ^
EOF
    run_tally t.csv --agg 'm = mean(b > 1)'
    assert_err 2 <<'EOF'
tally: mean needs a number, date or timestamp argument, not bool
  --agg: m = mean(b > 1)
                  ^^^^^
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
