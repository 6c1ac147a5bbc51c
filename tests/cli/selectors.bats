#!/usr/bin/env bats
# Column selectors (man/tally.1, SELECTORS): globs, ranges, positions and
# exclusion in --select, --drop, --group-by, --sort, --distinct and --by,
# flag and JSON forms, expanded at plan time against the schema of their
# step (explain shows the columns); named group keys; every error.

load helpers

data() {
    printf 'id1,id2,id3,v1,v2,d\na,x,1,10,1.5,2024-01-05\nb,y,2,20,2.5,2024-02-07\na,y,3,30,,2024-01-20\nb,x,1,20,0.5,2024-02-11\n' > t.csv
}

# expect: exit 0, nothing on standard error, standard output as on stdin.
expect() {
    local want
    want=$(cat)
    if [ "$status" -ne 0 ] || [ -n "$stderr" ] || [ "$output" != "$want" ]; then
        show
        printf -- '--- want\n%s\n' "$want"
        return 1
    fi
}

# expect_usage: exit 2, nothing on standard output, the message on stdin.
expect_usage() {
    local want
    want=$(cat)
    if [ "$status" -ne 2 ] || [ -n "$output" ] || [ "$stderr" != "$want" ]; then
        show
        printf -- '--- want\n%s\n' "$want"
        return 1
    fi
}

@test "select: glob, range, positions, exclusion and star, with expressions" {
    data
    run_tally t.csv --select 'id1, v*, v1 * 2 as w'
    expect <<'EOF'
id1,v1,v2,w
a,10,1.5,20
b,20,2.5,40
a,30,,60
b,20,0.5,40
EOF
    run_tally t.csv --select 'id1:id3' --head 2
    expect <<'EOF'
id1,id2,id3
a,x,1
b,y,2
EOF
    run_tally t.csv --select '#6, #1' --head 2
    expect <<'EOF'
d,id1
2024-01-05,a
2024-02-07,b
EOF
    run_tally t.csv --select '#2:#3, "v1":v2' --head 1
    expect <<'EOF'
id2,id3,v1,v2
x,1,10,1.5
EOF
    run_tally t.csv --select '* exclude (v1, v2)' --head 1
    expect <<'EOF'
id1,id2,id3,d
a,x,1,2024-01-05
EOF
    run_tally t.csv --select 'id? exclude id2, * exclude (id1:v2)' --head 1
    expect <<'EOF'
id1,id3,d
a,1,2024-01-05
EOF
    run_tally t.csv --select '*' --head 1
    expect <<'EOF'
id1,id2,id3,v1,v2,d
a,x,1,10,1.5,2024-01-05
EOF
    run_tally t.csv --select '#1 as first, id2:id2 as "second one", v2' --head 1
    expect <<'EOF'
first,second one,v2
a,x,1.5
EOF
    run_tally t.csv --select 'v[!1], id[13]' --head 1
    expect <<'EOF'
v2,id1,id3
1.5,a,1
EOF
}

@test "select: a plain number is a literal; a pattern over existing columns is an expression" {
    data
    run_tally t.csv --select '1, id1' --head 2
    expect <<'EOF'
1,id1
1,a
1,b
EOF
    # v1 and v2 exist: a product; there is no column v: the pattern v*2
    run_tally t.csv --select 'v1*v2' --head 2
    expect <<'EOF'
v1*v2
15.0
50.0
EOF
    run_tally t.csv --select 'v*2' --head 2
    expect <<'EOF'
v2
1.5
2.5
EOF
}

@test "a column named like a pattern: the name wins, quoted or not" {
    printf 'v*,v1,v2\n1,2,3\n' > s.csv
    run_tally s.csv --select 'v*'
    expect <<'EOF'
v*
1
EOF
    run_tally s.csv --select '"v*", v[0-9]'
    expect <<'EOF'
v*,v1,v2
1,2,3
EOF
    run_tally s.csv --drop 'v[0-9]'
    expect <<'EOF'
v*
1
EOF
}

@test "selectors see the schema of their step, after the steps before" {
    data
    run_tally t.csv --with 'v3 = v1 + 1' --select 'v*' --head 1
    expect <<'EOF'
v1,v2,v3
10,1.5,11
EOF
    run_tally t.csv --select 'v2, id1, v1' --select '#1:#2' --head 1
    expect <<'EOF'
v2,id1
1.5,a
EOF
    run_tally t.csv --drop id1 --drop 'v*' --drop '#3' --head 1
    expect <<'EOF'
id2,id3
x,1
EOF
    run_tally t.csv --rename 'v1:w1' --select 'v*, w*' --head 1
    expect <<'EOF'
v2,w1
1.5,10
EOF
}

@test "sort: a selector's direction applies to each of its columns" {
    data
    run_tally t.csv --sort 'v* desc nulls first'
    expect <<'EOF'
id1,id2,id3,v1,v2,d
a,y,3,30,,2024-01-20
b,y,2,20,2.5,2024-02-07
b,x,1,20,0.5,2024-02-11
a,x,1,10,1.5,2024-01-05
EOF
    run_tally t.csv --sort '-id?' --select 'id1:id3'
    expect <<'EOF'
id1,id2,id3
b,y,2
b,x,1
a,y,3
a,x,1
EOF
    run_tally t.csv --sort '#4 desc, #2' --select '#1, #2, #4'
    expect <<'EOF'
id1,id2,v1
a,y,30
b,x,20
b,y,20
a,x,10
EOF
}

@test "group-by, distinct and --by take selectors" {
    data
    run_tally t.csv --group-by '* exclude (id2:d)' --agg 'total = sum(v1)'
    expect <<'EOF'
id1,total
a,40
b,40
EOF
    run_tally t.csv --group-by '#1, id3' --agg 'n = count()'
    expect <<'EOF'
id1,id3,n
a,1,1
b,2,1
a,3,1
b,1,1
EOF
    run_tally t.csv --distinct '#1' --select 'id1:id2'
    expect <<'EOF'
id1,id2
a,x
b,y
EOF
    run_tally t.csv --distinct 'v*' --select 'v*'
    expect <<'EOF'
v1,v2
10,1.5
20,2.5
30,
20,0.5
EOF
    run_tally t.csv --sort -v1 --head 1 --by 'id[1]' --select 'id1, v1'
    expect <<'EOF'
id1,v1
a,30
b,20
EOF
}

@test "named group keys: NAME = EXPR and EXPR as NAME; unnamed keys keep their text" {
    data
    run_tally t.csv --group-by "m = date_trunc('month', d)" --agg 'n = count()' --sort m
    expect <<'EOF'
m,n
2024-01-01 00:00:00,2
2024-02-01 00:00:00,2
EOF
    run_tally t.csv --group-by "id1, date_trunc('month', d) as m" --agg 'v = sum(v1)'
    expect <<'EOF'
id1,m,v
a,2024-01-01 00:00:00,40
b,2024-02-01 00:00:00,40
EOF
    run_tally t.csv --group-by "date_trunc('month', d)" --agg 'n = count()'
    expect <<'EOF'
"date_trunc('month',d)",n
2024-01-01 00:00:00,2
2024-02-01 00:00:00,2
EOF
    # a comparison as a key: == or parentheses (a leading NAME = names it)
    run_tally t.csv --group-by '(id1 = id2), id1 == id2' --agg 'n = count()'
    expect <<'EOF'
(id1=id2),id1==id2,n
false,false,4
EOF
    run_tally t.csv --group-by 'k = id1, k = id2' --agg 'n = count()'
    expect_usage <<'EOF'
tally: duplicate output column "k"
  --group-by: k = id1, k = id2
                       ^^^^^^^
EOF
}

@test "pipeline file: selectors in each step, group_by keys as an object" {
    data
    cat > p.json <<'EOF'
{"inputs": ["t.csv"], "steps": [
  {"drop": ["#2:#3"]},
  {"group_by": {"m": "date_trunc('month', d)"}, "agg": {"n": "count()", "v": "sum(v1)"}},
  {"sort": ["#1 desc"]}]}
EOF
    run_tally -f p.json
    expect <<'EOF'
m,n,v
2024-02-01 00:00:00,2,40
2024-01-01 00:00:00,2,40
EOF
    cat > q.json <<'EOF'
{"inputs": ["t.csv"], "steps": [{"select": ["v*", "#1"]}, {"distinct": ["id?"]},
  {"sort": ["-v*"]}, {"group_by": ["* exclude (v2)", "k = 1"]}]}
EOF
    run_tally -f q.json
    expect <<'EOF'
v1,id1,k
20,b,1
10,a,1
EOF
    cat > e.json <<'EOF'
{"inputs": ["t.csv"], "steps": [{"select": ["id1", "z*"]}]}
EOF
    run_tally -f e.json
    expect_usage <<'EOF'
tally: no column matches z*
  /steps/0/select/1: z*
                     ^^
EOF
    cat > n.json <<'EOF'
{"inputs": ["t.csv"], "steps": [{"sort": ["2"]}]}
EOF
    run_tally -f n.json
    expect_usage <<'EOF'
tally: a number is not a column here: write #2 for column 2
  /steps/0/sort/0: 2
                   ^
EOF
}

@test "explain shows the columns a selector expanded to" {
    data
    run_tally explain t.csv --select 'id1:id2, v*' --sort '#3 desc' \
        --group-by 'id?, m = v1 * 2' --agg 'n = count()'
    expect <<'EOF'
logical plan:
  aggregate by id1, id2, v1 * 2 as m: n = count()
    sort v1 desc
      project id1, id2, v1, v2
        scan t.csv
optimized plan:
  aggregate by id1, id2, v1 * 2 as m: n = count()
    sort v1 desc
      project id1, id2, v1
        scan t.csv columns id1, id2, v1
output: id1 string, id2 string, m int64, n int64
EOF
}

@test "errors: a selector that matches nothing, in every step" {
    data
    run_tally t.csv --select 'z*'
    expect_usage <<'EOF'
tally: no column matches z*
  --select: z*
            ^^
EOF
    run_tally t.csv --sort 'id1, z? desc'
    expect_usage <<'EOF'
tally: no column matches z?
  --sort: id1, z? desc
               ^^
EOF
    run_tally t.csv --group-by 'w*' --agg 'n = count()'
    expect_usage <<'EOF'
tally: no column matches w*
  --group-by: w*
              ^^
EOF
    run_tally t.csv --drop 'x*'
    expect_usage <<'EOF'
tally: no column matches x*
  --drop: x*
          ^^
EOF
    run_tally t.csv --distinct 'q[0-9]'
    expect_usage <<'EOF'
tally: no column matches q[0-9]
  --distinct: q[0-9]
              ^^^^^^
EOF
    run_tally t.csv --select '* exclude (v1, v3)'
    expect_usage <<'EOF'
tally: unknown column "v3" (did you mean "v1"?)
  --select: * exclude (v1, v3)
                           ^^
EOF
    run_tally t.csv --select 'id1, v* as v'
    expect_usage <<'EOF'
tally: as "v" names one column, but the selector matches 2
  --select: id1, v* as v
                 ^^^^^^^
EOF
    run_tally t.csv --select '* exclude (*)'
    expect_usage <<'EOF'
tally: the selector leaves no column
  --select: * exclude (*)
            ^^^^^^^^^^^^^
EOF
    run_tally t.csv --drop '*'
    expect_usage <<'EOF'
tally: cannot drop every column
  --drop: *
          ^
EOF
}

@test "errors: ranges and positions" {
    data
    run_tally t.csv --select 'id3:id1'
    expect_usage <<'EOF'
tally: the range ends before it starts: "id3" is column #3, "id1" is column #1
  --select: id3:id1
            ^^^^^^^
EOF
    run_tally t.csv --select 'id1:vv1'
    expect_usage <<'EOF'
tally: unknown column "vv1" (did you mean "v1"?)
  --select: id1:vv1
                ^^^
EOF
    run_tally t.csv --select '#0'
    expect_usage <<'EOF'
tally: column positions start at #1
  --select: #0
            ^^
EOF
    run_tally t.csv --sort '#2:#7'
    expect_usage <<'EOF'
tally: #7 is past the last column (#6, "d")
  --sort: #2:#7
             ^^
EOF
    run_tally t.csv --select 'id1' --distinct '#2'
    expect_usage <<'EOF'
tally: #2 is past the last column (#1, "id1")
  --distinct: #2
              ^^
EOF
}

@test "errors: a plain number in --sort, --group-by and --distinct suggests #N" {
    data
    run_tally t.csv --sort 1
    expect_usage <<'EOF'
tally: a number is not a column here: write #1 for column 1
  --sort: 1
          ^
EOF
    run_tally t.csv --sort 'id1, -2'
    expect_usage <<'EOF'
tally: a number is not a column here: write #2 desc for column 2
  --sort: id1, -2
               ^^
EOF
    run_tally t.csv --group-by 1 --agg 'n = count()'
    expect_usage <<'EOF'
tally: a number is not a column here: write #1 for column 1
  --group-by: 1
              ^
EOF
    run_tally t.csv --distinct 3
    expect_usage <<'EOF'
tally: a number is not a column here: write #3 for column 3
  --distinct: 3
              ^
EOF
}

@test "NDJSON: a selector finds the columns after the first batch" {
    printf '{"a":1}\n{"a":2}\n{"a":3}\n{"a":4,"v9":5}\n' > s.ndjson
    TALLY_BATCH_ROWS=2 run_tally s.ndjson --select 'v*' --filter 'v9 is not null'
    expect <<'EOF'
v9
5
EOF
    TALLY_BATCH_ROWS=2 run_tally s.ndjson --filter 'a > 3' --select '#2'
    expect <<'EOF'
v9
5
EOF
    TALLY_BATCH_ROWS=2 run_tally s.ndjson --select 'q*'
    expect_usage <<'EOF'
tally: no column matches q*
  --select: q*
            ^^
EOF
}

@test "columns('re'): a partial match of the names, in every step" {
    data
    run_tally t.csv --select "columns('v'), columns('^id[0-9]\$') exclude id2" --head 1
    expect <<'EOF2'
v1,v2,id1,id3
10,1.5,a,1
EOF2
    run_tally t.csv --select "COLUMNS ( 'd\$' ) as day, columns('^v1\$') as w" --head 1
    expect <<'EOF2'
day,w
2024-01-05,10
EOF2
    # case matters, unless the pattern says otherwise
    run_tally t.csv --select "columns('(?i)^V')" --head 1
    expect <<'EOF2'
v1,v2
10,1.5
EOF2
    run_tally t.csv --select "* exclude (columns('^v'), id3)" --head 1
    expect <<'EOF2'
id1,id2,d
a,x,2024-01-05
EOF2
    run_tally t.csv --sort "columns('^v') desc nulls first" --select "columns('')"
    expect <<'EOF2'
id1,id2,id3,v1,v2,d
a,y,3,30,,2024-01-20
b,y,2,20,2.5,2024-02-07
b,x,1,20,0.5,2024-02-11
a,x,1,10,1.5,2024-01-05
EOF2
    run_tally t.csv --sort "-columns('id[23]')" --select "columns('^id')"
    expect <<'EOF2'
id1,id2,id3
a,y,3
b,y,2
a,x,1
b,x,1
EOF2
    run_tally t.csv --group-by "columns('1\$') exclude v1" --agg 'n = count()'
    expect <<'EOF2'
id1,n
a,2
b,2
EOF2
    run_tally t.csv --drop "columns('^(id|d)')"
    expect <<'EOF2'
v1,v2
10,1.5
20,2.5
30,
20,0.5
EOF2
    run_tally t.csv --distinct "columns('^id1')" --select "columns('id[12]')"
    expect <<'EOF2'
id1,id2
a,x
b,y
EOF2
    run_tally t.csv --sort -v1 --head 1 --by "columns('^id1')" --select 'id1, v1'
    expect <<'EOF2'
id1,v1
a,30
b,20
EOF2
    # a quote in the pattern is doubled, as in every string literal
    printf "it's,v\n1,2\n" > q.csv
    run_tally q.csv --select "columns('''')"
    expect <<'EOF2'
it's
1
EOF2
    run_tally explain t.csv --select "columns('^v'), columns('1') exclude v1"
    expect <<'EOF2'
logical plan:
  project v1, v2, id1
    scan t.csv
optimized plan:
  project v1, v2, id1
    scan t.csv columns id1, v1, v2
output: v1 int64, v2 float64, id1 string
EOF2
}

@test "columns('re') in the pipeline file and after an NDJSON sample" {
    data
    cat > r.json <<'EOF2'
{"inputs": ["t.csv"], "steps": [{"select": ["columns('^(id1|v)')"]},
  {"sort": ["columns('^v') desc"]}, {"distinct": ["columns('id')"]}]}
EOF2
    run_tally -f r.json
    expect <<'EOF2'
id1,v1,v2
a,30,
b,20,2.5
EOF2
    cat > e.json <<'EOF2'
{"inputs": ["t.csv"], "steps": [{"group_by": ["columns('v(')"], "agg": {"n": "count()"}}]}
EOF2
    run_tally -f e.json
    expect_usage <<'EOF2'
tally: invalid regular expression: missing closing parenthesis
  /steps/0/group_by/0: columns('v(')
                                  ^
EOF2
    printf '{"a":1}\n{"a":2}\n{"a":3}\n{"a":4,"v9":5}\n' > s.ndjson
    TALLY_BATCH_ROWS=2 run_tally s.ndjson --select "columns('^v')" --filter 'v9 is not null'
    expect <<'EOF2'
v9
5
EOF2
    TALLY_BATCH_ROWS=2 run_tally s.ndjson --select "columns('q')"
    expect_usage <<'EOF2'
tally: no column matches columns('q')
  --select: columns('q')
            ^^^^^^^^^^^^
EOF2
}

@test "errors: columns('re') that matches nothing, is invalid, or names several" {
    data
    run_tally t.csv --select "id1, columns('^z')"
    expect_usage <<'EOF2'
tally: no column matches columns('^z')
  --select: id1, columns('^z')
                 ^^^^^^^^^^^^^
EOF2
    run_tally t.csv --sort "columns('V') desc"
    expect_usage <<'EOF2'
tally: no column matches columns('V')
  --sort: columns('V') desc
          ^^^^^^^^^^^^
EOF2
    run_tally t.csv --drop "* exclude (columns('x\$'))"
    expect_usage <<'EOF2'
tally: no column matches columns('x$')
  --drop: * exclude (columns('x$'))
                     ^^^^^^^^^^^^^
EOF2
    run_tally t.csv --select "columns('a(b')"
    expect_usage <<'EOF2'
tally: invalid regular expression: missing closing parenthesis
  --select: columns('a(b')
                        ^
EOF2
    run_tally t.csv --distinct "columns('v[')"
    expect_usage <<'EOF2'
tally: invalid regular expression: missing terminating ] for character class
  --distinct: columns('v[')
                         ^
EOF2
    run_tally t.csv --group-by "columns('x\\Z')" --agg 'n = count()'
    expect_usage <<'EOF2'
tally: invalid regular expression: \Z is not supported (use \z or $)
  --group-by: columns('x\Z')
                        ^
EOF2
    run_tally t.csv --select "columns('^v') as v"
    expect_usage <<'EOF2'
tally: as "v" names one column, but the selector matches 2
  --select: columns('^v') as v
            ^^^^^^^^^^^^^^^^^^
EOF2
    # no selector inside an expression, nor with anything but one literal
    run_tally t.csv --select "columns(v)"
    expect_usage <<'EOF2'
tally: columns('re') stands alone as an item of a list of columns, with one string literal (man tally, SELECTORS)
  --select: columns(v)
            ^^^^^^^
EOF2
    run_tally t.csv --agg "m = max(COLUMNS('v'))"
    expect_usage <<'EOF2'
tally: columns('re') stands alone as an item of a list of columns, with one string literal (man tally, SELECTORS)
  --agg: m = max(COLUMNS('v'))
                 ^^^^^^^
EOF2
    run_tally t.csv --sort "columns('v'):d"
    expect_usage <<'EOF2'
tally: columns('re') stands alone as an item of a list of columns, with one string literal (man tally, SELECTORS)
  --sort: columns('v'):d
          ^^^^^^^
EOF2
    run_tally t.csv --select "columns('') exclude (*)"
    expect_usage <<'EOF2'
tally: the selector leaves no column
  --select: columns('') exclude (*)
            ^^^^^^^^^^^^^^^^^^^^^^^
EOF2
}
