#!/usr/bin/env bats
# tally schema: one `column,type` CSV row per input column, in order, with
# the type inference of a full run (every value read, widened as needed).

load helpers

@test "schema names every inferred type" {
    printf 'b,i,f,d,t,s,n\ntrue,1,1.5,2024-01-02,2024-01-02 03:04:05,x,\nfalse,2,2,2024-01-03,2024-01-03T00:00:00,y,\n' > t.csv
    assert_run_out schema t.csv <<'EOF'
column,type
b,bool
i,int64
f,float64
d,date
t,timestamp
s,string
n,null
EOF
}

@test "schema reads the whole input: a late value widens the type" {
    { echo 'a,b'; for i in $(seq 1 50); do echo "$i,2024-01-01"; done; echo '0.5,2024-01-01 10:00:00'; } > w.csv
    export TALLY_BATCH_ROWS=4
    assert_run_out schema w.csv <<'EOF'
column,type
a,float64
b,timestamp
EOF
}

@test "schema of several inputs unites them by name" {
    printf 'x,y,z\n1,,a\n' > a.csv
    printf 'y,x,w,z\n2024-01-01,1.5,true,3\n' > b.csv
    assert_run_out schema a.csv b.csv <<'EOF'
column,type
x,float64
y,date
z,string
w,bool
EOF
}

@test "schema honours --schema, --no-header, --delimiter and --null" {
    printf 'id;v\n007;NA\n010;2\n' > s.csv
    assert_run_out schema s.csv --delimiter ';' --null NA --schema 'id:string' <<'EOF'
column,type
id,string
v,int64
EOF
    assert_run_out schema s.csv --delimiter ';' --no-header <<'EOF'
column,type
column1,string
column2,string
EOF
}

@test "schema quotes a column name when CSV needs it" {
    printf '"a,b",c\n1,2\n' > q.csv
    assert_run_out schema q.csv <<'EOF'
column,type
"a,b",int64
c,int64
EOF
}

@test "schema of the example data" {
    assert_run_out schema "$EXAMPLES/sales.csv" <<'EOF'
column,type
order_id,int64
date,date
region,string
product,string
units,int64
unit_price,float64
amount,float64
customer,string
EOF
}

@test "schema of a missing file fails like a run" {
    run_tally schema nope.csv
    assert_err_glob 1 '*nope.csv*'
}

@test "schema with no input is a usage error" {
    run_tally schema
    assert_err 2 'tally: no input given (try tally --help)'
}
