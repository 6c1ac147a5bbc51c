#!/usr/bin/env bats
# run-cli: weight=5 spill
# SQL semantics as DuckDB has them (man/tally.1, SEMANTICS).
# Every expected value here was worked out by hand (or with python3's math
# module for the irrational ones), never copied from tally's output.

load helpers

# ---------------------------------------------------- three-valued logic

tv() {
    cat > tv.csv <<'EOF'
a,b
true,true
true,false
true,
false,true
false,false
false,
,true
,false
,
EOF
}

@test "and, or, not and = follow three-valued logic" {
    tv
    assert_run_out tv.csv --select 'a and b as x, a or b as y, not a as z, a = b as e' <<'EOF'
x,y,z,e
true,true,false,true
false,true,false,false
,true,false,
false,true,true,false
false,false,true,true
false,,true,
,true,,
false,,,
,,,
EOF
}

@test "a filter keeps only true: null drops the row" {
    tv
    assert_run_out tv.csv --filter 'a or b' <<'EOF'
a,b
true,true
true,false
true,
false,true
,true
EOF
    assert_run_out tv.csv --filter 'not (a and b)' <<'EOF'
a,b
true,false
false,true
false,false
false,
,false
EOF
}

@test "comparisons with null are null; is null is not" {
    printf 'id,v\n1,1\n2,\n' > n.csv
    assert_run_out n.csv --select 'id, v = null as eq, null = null as nn, v is null as isn, v is not null as notn, v <> 1 as ne' <<'EOF'
id,eq,nn,isn,notn,ne
1,,,false,true,false
2,,,true,false,
EOF
    assert_run_out n.csv --filter 'v = null or v != null' <<'EOF'
id,v
EOF
}

@test "in with a null in the list" {
    printf 'x\n1\n2\n' > i.csv
    assert_run_out i.csv --select 'x, x in (1, null) as a, x not in (1, null) as b, x in (3, 2) as c, x not in (3, 4) as d' <<'EOF'
x,a,b,c,d
1,true,false,false,true
2,,,true,true
EOF
}

# ------------------------------------------------------- division rules

@test "integer // truncates toward zero, % has the dividend's sign, by zero is null" {
    printf 'i,j\n7,2\n-7,2\n7,-2\n-7,-2\n7,0\n0,3\n' > d.csv
    assert_run_out d.csv --select 'i // j as q, i % j as r, i / j as f' <<'EOF'
q,r,f
3,1,3.5
-3,-1,-3.5
-3,1,-3.5
3,-1,3.5
,,inf
0,0,0.0
EOF
}

@test "float // is plain division, null by zero, and % is fmod (x % 0 is nan), as DuckDB" {
    printf 'x,y\n7.5,2.0\n-7.5,2.0\n7.5,-2.0\n1.0,0.0\n-1.0,-0.0\n0.0,0.0\n' > d.csv
    assert_run_out d.csv --select 'x // y as q, x % y as r, x / y as f' <<'EOF'
q,r,f
3.75,1.5,3.75
-3.75,-1.5,-3.75
-3.75,1.5,-3.75
,nan,inf
,nan,inf
,nan,nan
EOF
}

@test "a float casts to int half to even, a decimal string half away from zero, as DuckDB" {
    printf 'x,s\n2.5,2.5\n3.5,-2.5\n-2.5,0.5\n0.5,1.5\n' > h.csv
    assert_run_out h.csv --select 'cast(x as int) as a, cast(s as string)::int as b' <<'EOF'
a,b
2,3
4,-3
-2,1
0,2
EOF
}

@test "upper and lower map every character one to one, as DuckDB" {
    printf 's\nstraße\nǅemal\nİstanbul\nⓐ ﬁ\n' > u.csv
    assert_run_out u.csv --select 'upper(s) as u, lower(s) as l' <<'EOF'
u,l
STRAẞE,straße
ǄEMAL,ǆemal
İSTANBUL,istanbul
Ⓐ ﬁ,ⓐ ﬁ
EOF
}

@test "substr with a start before the string's beginning cuts the window, as DuckDB" {
    printf 's\nhello\nss\n' > s.csv
    assert_run_out s.csv --select "substr(s, -7, 3) as a, substr(s, -10, 3) as b, substr(s, 0, 2) as c, substr(s, -1, -2) as d" <<'EOF'
a,b,c,d
h,"",h,ll
"","",s,s
EOF
}

@test "an int and a float divide as floats" {
    printf 'x\n1\n' > one.csv
    assert_run_out one.csv --select '7 // 2.0 as a, 7 % 2.5 as b, 1 / 0 as c, 0 / 0 as d, -1 / 0 as e' <<'EOF'
a,b,c,d,e
3.5,2.0,inf,nan,-inf
EOF
}

# ------------------------------------------------------- NaN and -0.0

nan_file() {
    printf 'v\n1.0\nnan\n-0.0\n0.0\ninf\nnan\n-inf\n' > f.csv
}

@test "NaN equals NaN and is greater than every number; -0.0 equals 0.0" {
    nan_file
    assert_run_out f.csv --select 'v, v = v as self, v = 0.0 as zero, v > 1e308 as big, v > 1/0 as above_inf' <<'EOF'
v,self,zero,big,above_inf
1.0,true,false,false,false
nan,true,false,true,true
-0.0,true,true,false,false
0.0,true,true,false,false
inf,true,false,true,false
nan,true,false,true,true
-inf,true,false,false,false
EOF
}

@test "sort puts NaN after every float and keeps -0.0 and 0.0 in input order" {
    nan_file
    assert_run_out f.csv --sort v <<'EOF'
v
-inf
-0.0
0.0
1.0
inf
nan
nan
EOF
    assert_run_out f.csv --sort -v <<'EOF'
v
nan
nan
inf
1.0
-0.0
0.0
-inf
EOF
}

@test "group-by and distinct put NaNs together and -0.0 with 0.0" {
    nan_file
    assert_run_out f.csv --group-by v --agg 'n = count()' --select n <<'EOF'
n
1
2
2
1
1
EOF
    assert_run_out f.csv --distinct <<'EOF'
v
1.0
nan
-0.0
inf
-inf
EOF
    assert_run_out f.csv --agg 'k = count_distinct(v), lo = min(v), hi = max(v)' <<'EOF'
k,lo,hi
5,-inf,nan
EOF
}

@test "a filter on = 0 keeps -0.0 too" {
    nan_file
    assert_run_out f.csv --filter 'v = 0' <<'EOF'
v
-0.0
0.0
EOF
}

# ------------------------------------------------- lazy conditionals

lazy_file() {
    printf 'id,x\n1,4\n2,-1\n3,9\n4,\n' > s.csv
}

@test "case evaluates sqrt only for the rows that reach it" {
    lazy_file
    assert_run_out s.csv --select 'id, case when x >= 0 then sqrt(x) else -1.0 end as r' <<'EOF'
id,r
1,2.0
2,-1.0
3,3.0
4,-1.0
EOF
}

@test "if evaluates a branch only for its rows" {
    lazy_file
    assert_run_out s.csv --select 'id, if(x >= 0, sqrt(x), null) as r, if(x > 0, ln(x), 0.0) as l' <<'EOF'
id,r,l
1,2.0,1.3862943611198906
2,,0.0
3,3.0,2.1972245773362196
4,,0.0
EOF
}

@test "coalesce evaluates a later argument only where the earlier ones are null" {
    lazy_file
    assert_run_out s.csv --select 'id, coalesce(if(x < 0, 0.0, null), sqrt(x)) as r' <<'EOF'
id,r
1,2.0
2,0.0
3,3.0
4,
EOF
}

@test "case without else gives null; the first true branch wins" {
    lazy_file
    assert_run_out s.csv --select "id, case when x > 5 then 'big' when x > 0 then 'small' end as c, case when x > 0 then 'pos' when x > 5 then 'never' else 'other' end as d" <<'EOF'
id,c,d
1,small,pos
2,,other
3,big,pos
4,,other
EOF
}

# ----------------------------------------------------------- aggregates

@test "sum of no values is null; count() counts rows, count(x) values" {
    printf 'k,v\na,1\nb,\na,2\nb,\n' > g.csv
    assert_run_out g.csv --group-by k --agg 'n = count(), c = count(v), s = sum(v), m = mean(v), lo = min(v)' <<'EOF'
k,n,c,s,m,lo
a,2,2,3,1.5,1
b,2,0,,,
EOF
    assert_run_out g.csv --filter 'false' --agg 'n = count(), c = count(v), s = sum(v), m = mean(v), hi = max(v)' <<'EOF'
n,c,s,m,hi
0,0,,,
EOF
}

@test "first and last return the first and last row's value, null included" {
    printf 'k,v\na,\na,1\na,2\nb,3\nb,\n' > fl.csv
    assert_run_out fl.csv --group-by k --agg 'f = first(v), l = last(v)' <<'EOF'
k,f,l
a,,2
b,3,
EOF
}

@test "median and quantile interpolate (quantile_cont)" {
    printf 'v,k\n3,a\n1,a\n,a\n4,a\n2,a\n' > m.csv
    assert_run_out m.csv --agg 'med = median(v), q25 = quantile(v, 0.25), q0 = quantile(v, 0), q1 = quantile(v, 1)' <<'EOF'
med,q25,q0,q1
2.5,1.75,1.0,4.0
EOF
    printf 'v\n5.0\n1.0\n3.0\n' > odd.csv
    assert_run_out odd.csv --agg 'med = median(v), q = quantile(v, 0.75)' <<'EOF'
med,q
3.0,4.0
EOF
}

@test "std and var are the sample versions; one value gives null" {
    printf 'k,v\na,1\na,2\na,3\na,4\na,5\nb,7\n' > sd.csv
    assert_run_out sd.csv --group-by k --agg 'var = var(v), std = std(v), mean = avg(v)' <<'EOF'
k,var,std,mean
a,2.5,1.5811388300841898,3.0
b,,,7.0
EOF
}

@test "covar is the sample covariance and corr is 1 for a line" {
    printf 'x,y\n1,2\n2,4\n3,6\n' > c.csv
    run_tally c.csv --agg 'cv = covar(x, y), r = corr(x, y), rn = corr(x, 0 - y)'
    assert_ok
    local line
    line=$(printf '%s\n' "$output" | sed -n 2p)
    [ "$(printf '%s\n' "$output" | sed -n 1p)" = "cv,r,rn" ]
    [ "${line%%,*}" = "2.0" ] || { show; return 1; }
    awk -F, '{ exit !(($2 - 1) ^ 2 < 1e-24 && ($3 + 1) ^ 2 < 1e-24) }' <<< "$line" || { show; return 1; }
}

@test "any and all skip nulls" {
    printf 'k,b\na,true\na,false\na,\nb,true\nb,\nc,\n' > b.csv
    assert_run_out b.csv --group-by k --agg 'y = any(b), z = all(b)' <<'EOF'
k,y,z
a,true,false
b,true,true
c,,
EOF
}

@test "count_distinct skips nulls" {
    printf 'v,k\na,1\nb,1\n,1\na,1\n' > cd.csv
    assert_run_out cd.csv --agg 'k = count_distinct(v), n = count(v)' <<'EOF'
k,n
2,3
EOF
}

@test "integer sum is exact and may pass through overflow on the way" {
    printf 'v\n9223372036854775807\n-9223372036854775807\n5\n' > s1.csv
    assert_run_out s1.csv --agg 's = sum(v)' <<'EOF'
s
5
EOF
    printf 'v\n9223372036854775807\n1\n-2\n' > s2.csv
    assert_run_out s2.csv --agg 's = sum(v)' <<'EOF'
s
9223372036854775806
EOF
}

@test "group-by puts all null keys in one group, in order of first appearance" {
    printf 'k,v\n,1\nx,2\n,3\ny,4\nx,5\n' > nk.csv
    assert_run_out nk.csv --group-by k --agg 's = sum(v)' <<'EOF'
k,s
,4
x,7
y,4
EOF
}

@test "strings sort and compare by bytes" {
    printf 's\nb\nB\na\n\xc3\xa9\nA\n' > st.csv
    run_tally st.csv --sort s
    assert_ok
    assert_out "$(printf 's\nA\nB\na\nb\n\xc3\xa9')"
    assert_run_out st.csv --agg 'lo = min(s)' <<'EOF'
lo
A
EOF
    assert_run_out st.csv --filter "s < 'a'" <<'EOF'
s
B
A
EOF
}

# ------------------------------------------------------------ functions

fn_file() {
    printf 'x\n1\n' > one.csv
}

@test "string functions count Unicode characters" {
    fn_file
    assert_run_out one.csv --select "length('héllo') as n, upper('héllo') as u, lower('ÀB') as l, substr('héllo', 2, 3) as s, length('') as e" <<'EOF'
n,u,l,s,e
5,HÉLLO,àb,éll,0
EOF
}

@test "trim, ltrim and rtrim remove spaces" {
    fn_file
    assert_run_out one.csv --select "'[' || trim('  a b  ') || ']' as t, '[' || ltrim('  a ') || ']' as l, '[' || rtrim('  a ') || ']' as r" <<'EOF'
t,l,r
[a b],[a ],[  a]
EOF
}

@test "replace, contains, starts_with, ends_with, split_part, concat" {
    fn_file
    assert_run_out one.csv --select "replace('a-b-c', '-', '+') as r, contains('abc', 'b') as c, starts_with('abc', 'ab') as s, ends_with('abc', 'bc') as e, split_part('a,b,c', ',', 2) as p, concat('a', null, 'b') as k, 'a' || null as n, 'it''s' as q" <<'EOF'
r,c,s,e,p,k,n,q
a+b+c,true,true,true,b,ab,,it's
EOF
}

@test "like, between, in" {
    fn_file
    assert_run_out one.csv --select "'apple' like 'a%' as a, 'apple' like '_pple' as b, 'apple' not like '%x%' as c, 5 between 1 and 5 as d, 6 not between 1 and 5 as e, 3 in (1, 2, 3) as f, 'Apple' like 'a%' as g" <<'EOF'
a,b,c,d,e,f,g
true,true,true,true,true,true,false
EOF
}

@test "math functions" {
    fn_file
    assert_run_out one.csv --select 'abs(-3) as a, round(2.5) as b, round(-2.5) as c, floor(-1.5) as d, ceil(1.2) as e, pow(2, 10) as f, exp(0) as g, sqrt(16) as h, abs(-2.5) as i' <<'EOF'
a,b,c,d,e,f,g,h,i
3,3.0,-3.0,-2.0,2.0,1024.0,1.0,4.0,2.5
EOF
}

@test "date and time parts" {
    fn_file
    assert_run_out one.csv --select "year(date '2024-03-15') as y, month(date '2024-03-15') as m, day(date '2024-03-15') as d, hour(timestamp '2024-03-15 10:45:30') as h, minute(timestamp '2024-03-15 10:45:30') as mi, second(timestamp '2024-03-15 10:45:30') as s" <<'EOF'
y,m,d,h,mi,s
2024,3,15,10,45,30
EOF
}

@test "dates compare with date literals" {
    cp "$DATA/sales.csv" .
    assert_run_out sales.csv --filter "day > date '2024-01-03'" --select id <<'EOF'
id
6
7
8
EOF
}

@test "casts" {
    fn_file
    assert_run_out one.csv --select "cast('12' as int) + 1 as a, '12'::int * 2 as b, cast(12 as float) as c, cast('2024-01-02' as date) as d, cast('true' as bool) as e, cast(x as string) || 'x' as f, try_cast('x' as float) as g" <<'EOF'
a,b,c,d,e,f,g
13,24,12.0,2024-01-02,true,1x,
EOF
}

@test "a double-quoted column name" {
    printf '"unit price",n\n2.5,2\n' > q.csv
    assert_run_out q.csv --select '"unit price" * n as total' <<'EOF'
total
5.0
EOF
}

@test "int and float arithmetic types" {
    fn_file
    assert_run_out one.csv --select 'x + 1 as a, x + 1.0 as b, x * 2 as c, x * 0.5 as d, -x as e' <<'EOF'
a,b,c,d,e
2,2.0,2,0.5,-1
EOF
}
