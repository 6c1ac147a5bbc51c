#!/usr/bin/env bats
# The JSON pipeline form (-f): the same output and the same `tally explain`
# text as the flag form, paths relative to the pipeline file's folder, and
# errors that name the JSON path of the offending value.

load helpers

setup() {
    enter_workdir
    cp "$EXAMPLES/sales.csv" .
    cp "$DATA/sales.csv" small.csv
}

# The pipeline of man/tally.1, "Pipeline files", without its output.
cli_md_json() {
    cat > p.json <<'EOF'
{
  "inputs": ["sales.csv"],
  "steps": [
    {"filter": "amount > 100 and region != 'test'"},
    {"group_by": ["region"], "agg": {"total": "sum(amount)", "n": "count()"}},
    {"sort": ["total desc"]},
    {"limit": 10}
  ]
}
EOF
}

FLAGS=(sales.csv --filter "amount > 100 and region != 'test'" --group-by region
       --agg 'total = sum(amount), n = count()' --sort 'total desc' --head 10)

@test "the JSON form gives the flag form's output" {
    cli_md_json
    # expected: amounts > 100 outside region 'test', summed by hand
    assert_run_out -f p.json <<'EOF'
region,total,n
north,1997.25,6
west,1807.75,6
east,1235.0,5
south,1157.0,5
EOF
    assert_run_out "${FLAGS[@]}" <<'EOF'
region,total,n
north,1997.25,6
west,1807.75,6
east,1235.0,5
south,1157.0,5
EOF
}

@test "the JSON form and the flag form explain to the same text" {
    cli_md_json
    run_tally explain -f p.json
    assert_ok
    local json_text=$output
    [ -n "$json_text" ]
    run_tally explain "${FLAGS[@]}"
    assert_ok
    assert_out "$json_text"
}

@test "every step kind gives the same plan and output in both forms" {
    cat > all.json <<'EOF'
{"inputs": ["small.csv"],
 "steps": [
   {"filter": "price < 4"},
   {"with": {"v": "qty * price", "w": "v + 1"}},
   {"rename": {"product": "item"}},
   {"drop": ["day"]},
   {"select": ["id", "region", "item", "v", "w * 2 as w2"]},
   {"sort": ["region", "v desc nulls first"]},
   {"limit": 2, "by": ["region"]},
   {"distinct": ["item"]},
   {"group_by": ["item"], "agg": {"n": "count()", "s": "sum(v)"}}
 ]}
EOF
    local flags=(small.csv --filter 'price < 4' --with 'v = qty * price' --with 'w = v + 1'
        --rename 'product:item' --drop day --select 'id, region, item, v, w * 2 as w2'
        --sort 'region, v desc nulls first' --head 2 --by region --distinct item
        --group-by item --agg 'n = count(), s = sum(v)')
    run_tally -f all.json
    assert_ok
    local json_out=$output
    run_tally "${flags[@]}"
    assert_ok
    assert_out "$json_out"
    # by hand: price < 4 drops ids 6 and 8; sorted by region, v desc nulls
    # first: east 7 (14.0), 4 (1.5); north 3 (11.25), 1 (4.5); south 2 (null),
    # 5 (12.5); two per region keeps all six; distinct item keeps 7 (pear),
    # 4 (apple)
    assert_out <<'EOF'
item,n,s
pear,1,14.0
apple,1,1.5
EOF
    run_tally explain -f all.json
    assert_ok
    local json_plan=$output
    run_tally explain "${flags[@]}"
    assert_ok
    assert_out "$json_plan"
}

@test "distinct true and a whole-input agg in JSON" {
    cat > d.json <<'EOF'
{"inputs": ["small.csv"], "steps": [{"select": ["product"]}, {"distinct": true}, {"agg": {"n": "count()"}}]}
EOF
    assert_run_out -f d.json <<'EOF'
n
3
EOF
}

@test "paths in a pipeline file are relative to its folder" {
    mkdir -p proj/data
    cp small.csv proj/data/in.csv
    cat > proj/p.json <<'EOF'
{"inputs": ["data/in.csv"], "steps": [{"limit": 2}, {"select": ["id"]}], "output": "out/result.csv"}
EOF
    mkdir proj/out
    mkdir elsewhere
    cd elsewhere
    run_tally -f ../proj/p.json
    assert_ok
    [ -z "$(ls -A)" ]
    [ "$(cat ../proj/out/result.csv)" = "$(printf 'id\n1\n2')" ]
}

@test "an input option in the file applies" {
    printf 'a;b\n1;2\n' > semi.csv
    echo '{"inputs": ["semi.csv"], "delimiter": ";", "steps": [{"select": ["b"]}]}' > p.json
    assert_run_out -f p.json <<'EOF'
b
2
EOF
}

@test "a pipeline file from standard input" {
    run --separate-stderr bash -c 'echo "{\"inputs\": [\"small.csv\"], \"steps\": [{\"limit\": 1}, {\"select\": [\"id\"]}]}" | "$1" -f -' _ "$TALLY"
    assert_ok
    assert_out "$(printf 'id\n1')"
}

@test "join in JSON" {
    cp "$DATA/regions.csv" .
    echo '{"inputs": ["small.csv"], "steps": [{"join": {"input": "regions.csv", "on": ["region"], "how": "anti"}}, {"select": ["id"]}]}' > j.json
    run_tally -f j.json
    skip_if_unsupported
    assert_ok
    assert_out "$(printf 'id\n4\n7\n8')"
}

# ---------------------------------------------------------------- errors

@test "errors name the JSON path: select item" {
    echo '{"inputs": ["small.csv"], "steps": [{"limit": 1}, {"select": ["id", "nope"]}]}' > p.json
    run_tally -f p.json -o out.csv
    assert_err_glob 2 '*unknown column "nope"*/steps/1/select/1*'
    [ ! -e out.csv ]
}

@test "errors name the JSON path: with" {
    echo '{"inputs": ["small.csv"], "steps": [{"with": {"v": "qty +"}}]}' > p.json
    run_tally -f p.json
    assert_err_glob 2 '*/steps/0/with/v*'
}

@test "errors name the JSON path: sort" {
    echo '{"inputs": ["small.csv"], "steps": [{"sort": ["id", "qyt desc"]}]}' > p.json
    run_tally -f p.json
    assert_err_glob 2 '*"qyt"*"qty"*/steps/0/sort/1*'
}

@test "errors name the JSON path: a step that is not an object" {
    echo '{"inputs": ["small.csv"], "steps": [{"limit": 1}, 42]}' > p.json
    run_tally -f p.json
    assert_err_glob 2 'tally: p.json*/steps/1*'
}

@test "errors name the JSON path: a misspelt step suggests the right one" {
    echo '{"inputs": ["small.csv"], "steps": [{"filtr": "id > 1"}]}' > p.json
    run_tally -f p.json
    assert_err 2 'tally: p.json: /steps/0: unknown step "filtr" (did you mean "filter"?)'
}

@test "errors name the JSON path: inputs of the wrong type" {
    echo '{"inputs": 5, "steps": []}' > p.json
    run_tally -f p.json
    assert_err_glob 2 'tally: p.json*/inputs*'
}

@test "a missing input named in a pipeline file is a data error" {
    echo '{"inputs": ["nope.csv"], "steps": []}' > p.json
    run_tally -f p.json
    assert_err_glob 1 '*nope.csv*'
}
