#!/usr/bin/env bats
# Row utilities: --tail, --offset (with --head: SQL's LIMIT/OFFSET), a seeded
# --sample (a count or a percent, --seed), --with-row-number; their JSON
# forms, their plans and every error.  The same bytes for every --threads
# and batch size: rows_threads.bats.

load helpers

setup() {
    enter_workdir
    write r.csv <<'EOF'
id,name,v
1,ann,7
2,bob,3
3,cid,10
4,dan,6
5,eve,2
6,fay,9
7,gus,5
8,hal,1
EOF
}

@test "--tail N: the last N rows, in order" {
    assert_run_out r.csv --tail 3 <<'EOF'
id,name,v
6,fay,9
7,gus,5
8,hal,1
EOF
}

@test "--tail: more rows than there are, none, and after a filter" {
    run_tally r.csv --tail 20 --select id --out-no-header
    assert_ok
    assert_out "$(seq 1 8)"
    assert_run_out r.csv --tail 0 <<'EOF'
id,name,v
EOF
    assert_run_out r.csv --filter 'v > 5' --tail 2 --select id <<'EOF'
id
4
6
EOF
}

@test "--tail across batches of two rows and one" {
    for rows in 1 2 3; do
        TALLY_BATCH_ROWS=$rows run_tally r.csv --tail 3 --select id
        assert_ok
        assert_out $'id\n6\n7\n8'
    done
}

@test "--offset N skips N rows; with --head it is LIMIT/OFFSET" {
    assert_run_out r.csv --offset 6 <<'EOF'
id,name,v
7,gus,5
8,hal,1
EOF
    assert_run_out r.csv --offset 2 --head 3 --select id <<'EOF'
id
3
4
5
EOF
    assert_run_out r.csv --offset 9 <<'EOF'
id,name,v
EOF
}

@test "--head then --offset: steps apply in the order given" {
    # the first 5 rows, then skip 3 of them
    assert_run_out r.csv --head 5 --offset 3 --select id <<'EOF'
id
4
5
EOF
    assert_run_out r.csv --offset 1 --offset 2 --head 1 --select id <<'EOF'
id
4
EOF
}

@test "--sort then --offset and --head: rows 3 and 4 of the sorted order" {
    assert_run_out r.csv --sort v --offset 2 --head 2 <<'EOF'
id,name,v
2,bob,3
7,gus,5
EOF
    assert_run_out r.csv --sort -v --offset 6 --select id <<'EOF'
id
5
8
EOF
}

@test "explain: --sort --offset --head keeps a bounded top-(head+offset) heap, then skips" {
    run_tally explain r.csv --sort v --offset 10 --head 5
    assert_ok
    assert_out <<'EOF'
logical plan:
  limit 5
    offset 10
      sort v
        scan r.csv
optimized plan:
  limit 5 offset 10
    sort v limit 15
      scan r.csv
output: id int64, name string, v int64
EOF
}

@test "explain: --tail and --offset alone, --sample and --with-row-number" {
    run_tally explain r.csv --offset 3 --tail 2 --sample 10% --seed 4 --sample 2 \
        --with-row-number rn
    assert_ok
    assert_out <<'EOF'
logical plan:
  row number rn
    sample 2 seed 0
      sample 10% seed 4
        tail 2
          offset 3
            scan r.csv
optimized plan:
  row number rn
    sample 2 seed 0
      sample 10% seed 4
        tail 2
          offset 3
            scan r.csv
output: id int64, name string, v int64, rn int64
EOF
}

@test "explain: a fractional percent in its shortest spelling" {
    run_tally explain r.csv --sample 33.3%
    assert_ok
    [[ "$output" == *"sample 33.3% seed 0"* ]]
}

@test "--sample N: N rows chosen by the seed, in input order" {
    assert_run_out r.csv --sample 3 <<'EOF'
id,name,v
2,bob,3
4,dan,6
5,eve,2
EOF
    assert_run_out r.csv --sample 3 --seed 1 <<'EOF'
id,name,v
1,ann,7
3,cid,10
5,eve,2
EOF
    assert_run_out r.csv --sample 3 --seed 100 --select id <<'EOF'
id
1
5
7
EOF
}

@test "--sample P%: each row kept by its hash; 0% none, 100% all" {
    assert_run_out r.csv --sample 50% --select id <<'EOF'
id
2
4
5
7
EOF
    assert_run_out r.csv --sample 0% <<'EOF'
id,name,v
EOF
    run_tally r.csv --sample 100% --select id --out-no-header
    assert_ok
    assert_out "$(seq 1 8)"
    run_tally r.csv --sample 8 --select id --out-no-header
    assert_ok
    assert_out "$(seq 1 8)"
    assert_run_out r.csv --sample 0 <<'EOF'
id,name,v
EOF
}

@test "--sample N keeps the rows of smallest hash: a larger N keeps a superset" {
    seq 1 5000 | awk 'BEGIN { print "id" } { print }' > n.csv
    run_tally n.csv --sample 40 --seed 3 -o a.csv
    assert_ok
    run_tally n.csv --sample 400 --seed 3 -o b.csv
    assert_ok
    [ "$(wc -l < a.csv)" -eq 41 ]
    [ "$(wc -l < b.csv)" -eq 401 ]
    [ -z "$(comm -23 <(sort a.csv) <(sort b.csv))" ]
    # in input order
    [ "$(tail -n +2 b.csv)" = "$(tail -n +2 b.csv | sort -n)" ]
    # the percent form keeps about its share
    run_tally n.csv --sample 10% --agg 'n = count()' --out-no-header
    assert_ok
    [ "$output" -gt 400 ] && [ "$output" -lt 600 ]
}

@test "--sample decides on the step's input positions: after a filter" {
    # the 3 smallest hashes of seed 0 over 8 rows are at positions 1, 3, 4
    # (ids 2, 4, 5); after the filter (ids 1 2 3 4 6 7) the 2 smallest of
    # positions 0..5 are two of those: 3 and 4 (ids 4 and 6)
    assert_run_out r.csv --filter 'v > 2' --sample 2 --select id <<'EOF'
id
4
6
EOF
}

@test "--with-row-number NAME: 1..n in input order, before the following steps" {
    assert_run_out r.csv --with-row-number rn --filter 'v > 5' --with-row-number k \
        --select 'id, rn, k' <<'EOF'
id,rn,k
1,1,1
3,3,2
4,4,3
6,6,4
EOF
    assert_run_out r.csv --sort -v --with-row-number rank --head 3 <<'EOF'
id,name,v,rank
3,cid,10,1
6,fay,9,2
1,ann,7,3
EOF
}

@test "--with-row-number across batches of one row" {
    TALLY_BATCH_ROWS=1 run_tally r.csv --with-row-number rn --tail 2 --select rn
    assert_ok
    assert_out $'rn\n7\n8'
}

@test "JSON forms: offset with limit, offset, tail, sample with seed, with_row_number" {
    write p.json <<'EOF'
{"inputs": ["r.csv"], "steps": [
  {"offset": 1},
  {"limit": 5, "offset": 1},
  {"tail": 3},
  {"with_row_number": "rn"},
  {"sample": 2, "seed": 1},
  {"select": ["id", "rn"]}]}
EOF
    # rows 2..8, then 3..7, then 5 6 7 numbered 1 2 3, then 2 of them
    assert_run_out -f p.json <<'EOF'
id,rn
5,1
7,3
EOF
    write q.json <<'EOF'
{"inputs": ["r.csv"], "steps": [{"sample": "50%"}, {"select": ["id"]}]}
EOF
    assert_run_out -f q.json <<'EOF'
id
2
4
5
7
EOF
}

@test "errors: a negative or non-numeric --tail, --offset" {
    run_tally r.csv --tail -1
    assert_err 2 'tally: --tail: expected a non-negative integer, got "-1"'
    run_tally r.csv --tail x
    assert_err 2 'tally: --tail: expected a non-negative integer, got "x"'
    run_tally r.csv --offset 1.5
    assert_err 2 'tally: --offset: expected a non-negative integer, got "1.5"'
    run_tally r.csv --offset -2 -o out.csv
    assert_err 2 'tally: --offset: expected a non-negative integer, got "-2"'
    assert_only_files r.csv
}

@test "errors: a bad --sample size or percent" {
    local v
    for v in -1 abc 101% 100.5% 10.% 1e2% ' 5' 5x '%'; do
        run_tally r.csv --sample "$v"
        assert_err 2 "tally: --sample: expected a row count N or a percent P% (0 to 100), got \"$v\""
    done
}

@test "errors: a bad --seed, or one not right after --sample" {
    run_tally r.csv --sample 3 --seed -3
    assert_err 2 'tally: --seed: expected a non-negative integer, got "-3"'
    run_tally r.csv --sample 3 --seed x
    assert_err 2 'tally: --seed: expected a non-negative integer, got "x"'
    run_tally r.csv --seed 3
    assert_err 2 'tally: option "--seed" must follow --sample N'
    run_tally r.csv --sample 3 --filter 'v > 1' --seed 3
    assert_err 2 'tally: option "--seed" must follow --sample N'
}

@test "errors: --with-row-number with a name the input has, or none" {
    run_tally r.csv --with-row-number id
    assert_err 2 'tally: --with-row-number: column "id" already exists'
    run_tally r.csv --with-row-number ''
    assert_err 2 'tally: --with-row-number: expected a column name'
}

@test "errors: the JSON forms name their path" {
    printf '{"inputs": ["r.csv"], "steps": [{"sample": "200%%"}]}' > a.json
    run_tally -f a.json
    assert_err 2 'tally: a.json: /steps/0/sample: expected a row count N or a percent "P%" (0 to 100)'
    printf '{"inputs": ["r.csv"], "steps": [{"tail": -1}]}' > b.json
    run_tally -f b.json
    assert_err 2 'tally: b.json: /steps/0/tail: expected a non-negative integer'
    printf '{"inputs": ["r.csv"], "steps": [{"limit": 1, "seed": 2}]}' > c.json
    run_tally -f c.json
    assert_err 2 'tally: c.json: /steps/0: "seed" goes with "sample": {"sample": N, "seed": S}'
    printf '{"inputs": ["r.csv"], "steps": [{"limit": 1, "offset": 2, "by": ["id"]}]}' > d.json
    run_tally -f d.json
    assert_err 2 'tally: d.json: /steps/0: "offset" does not go with "by": make it a step {"offset": N} of its own'
    printf '{"inputs": ["r.csv"], "steps": [{"sample": 2, "seed": 1.5}]}' > e.json
    run_tally -f e.json
    assert_err 2 'tally: e.json: /steps/0/seed: expected a non-negative integer'
    printf '{"inputs": ["r.csv"], "steps": [{"with_row_number": "v"}]}' > f.json
    run_tally -f f.json
    assert_err 2 'tally: /steps/0: column "v" already exists'
    printf '{"inputs": ["r.csv"], "steps": [{"offset": "x"}]}' > g.json
    run_tally -f g.json
    assert_err 2 'tally: g.json: /steps/0/offset: expected a non-negative integer'
}

@test "globs: ** reaches any depth, {a,b} alternatives; sorted, each file once" {
    mkdir -p logs/2024/01 logs/2024/02 logs/old
    printf 'id,v\n1,a\n' > logs/top.csv
    printf 'id,v\n2,b\n' > logs/2024/01/x.csv
    printf 'id,v\n3,c\n' > logs/2024/02/x.csv
    printf 'id,v\n4,d\n' > logs/old/y.csv
    printf '{"id": 5, "v": "e"}\n' > logs/2024/z.ndjson
    # sorted by bytes across folders: "logs/2024/" < "logs/old/" < "logs/top"
    assert_run_out 'logs/**/*.csv' --with-filename <<'EOF'
filename,id,v
logs/2024/01/x.csv,2,b
logs/2024/02/x.csv,3,c
logs/old/y.csv,4,d
logs/top.csv,1,a
EOF
    assert_run_out 'logs/{old,2024/02}/*.csv' --with-filename --select filename <<'EOF'
filename
logs/2024/02/x.csv
logs/old/y.csv
EOF
    # a last ** is every file below, of any format
    assert_run_out 'logs/2024/**' --select id <<'EOF'
id
2
3
5
EOF
    # alternatives that overlap still read each file once
    assert_run_out 'logs/{*,top}.csv' --select id <<'EOF'
id
1
EOF
}

@test "globs: ** and {a,b} in a pipeline file are relative to its folder" {
    mkdir -p p/d/e
    printf 'id\n1\n' > p/d/e/a.csv
    printf 'id\n2\n' > p/d/b.csv
    printf '{"inputs": ["d/**/{a,b}.csv"], "steps": [{"with_row_number": "rn"}]}' > p/q.json
    assert_run_out -f p/q.json --with-filename <<'EOF'
filename,id,rn
p/d/b.csv,2,1
p/d/e/a.csv,1,2
EOF
    run_tally explain -f p/q.json
    assert_ok
    [[ "$output" == *"scan d/b.csv, d/e/a.csv"* ]]
}

@test "globs: a pattern that matches nothing, and a file whose name has braces" {
    mkdir -p d
    run_tally 'd/**/*.csv'
    assert_err 1 'tally: no file matches "d/**/*.csv"'
    run_tally 'd/{a,b}.csv'
    assert_err 1 'tally: no file matches "d/{a,b}.csv"'
    printf 'id\n7\n' > 'd/{a,b}.csv'
    assert_run_out 'd/{a,b}.csv' <<'EOF'
id
7
EOF
}

@test "row_number(): the row's position in the step's input, 1-based" {
    assert_run_out r.csv --with 'r = row_number()' --filter 'v > 5' --with 'k = row_number() * 10' <<'EOF'
id,name,v,r,k
1,ann,7,1,10
3,cid,10,3,20
4,dan,6,4,30
6,fay,9,6,40
EOF
    assert_run_out r.csv --filter 'row_number() % 2 = 0' --select id <<'EOF'
id
2
4
6
8
EOF
    assert_run_out r.csv --sort v --select 'id, row_number() as rank' --head 3 <<'EOF'
id,rank
8,1
5,2
2,3
EOF
    assert_run_out r.csv --sort 'row_number() desc' --head 2 --select id <<'EOF'
id
8
7
EOF
    assert_run_out r.csv --group-by 'row_number() % 3' --agg 'n = count(), m = max(row_number())' <<'EOF'
row_number()%3,n,m
1,3,7
2,3,8
0,2,6
EOF
}

@test "row_number(): in a pipeline file, after a join, in explain" {
    printf '{"inputs": ["r.csv"], "steps": [{"with": {"rn": "row_number()"}}, {"filter": "rn > 6"}]}' > p.json
    assert_run_out -f p.json <<'EOF'
id,name,v,rn
7,gus,5,7
8,hal,1,8
EOF
    assert_run_out r.csv --filter 'v < 5' --join r.csv --on id --select 'id, row_number() as rn' <<'EOF'
id,rn
2,1
5,2
8,3
EOF
    run_tally explain r.csv --with 'r = row_number()' --filter 'r > 5'
    assert_ok
    assert_out <<'EOF'
logical plan:
  filter r > 5
    project id, name, v, r
      project id, name, v, "row_number()", "row_number()" as r
        row number "row_number()"
          scan r.csv
optimized plan:
  project id, name, v, "row_number()" as r
    filter "row_number()" > 5
      row number "row_number()"
        scan r.csv
output: id int64, name string, v int64, r int64
EOF
}

@test "row_number(): arguments are an error with a caret" {
    run_tally r.csv --select 'row_number(1)'
    assert_err 2 <<'EOF'
tally: row_number() takes 0 arguments, got 1
  --select: row_number(1)
            ^^^^^^^^^^^^^
EOF
}

@test "explain: below a row number the scan reads only the columns needed" {
    run_tally explain r.csv --with-row-number rn --select 'id, rn'
    assert_ok
    assert_out <<'EOF'
logical plan:
  project id, rn
    row number rn
      scan r.csv
optimized plan:
  project id, rn
    row number rn
      scan r.csv columns id
output: id int64, rn int64
EOF
    assert_run_out r.csv --with-row-number rn --select 'rn, id' --tail 2 <<'EOF'
rn,id
7,7
8,8
EOF
}
