#!/usr/bin/env bats
# run-cli: weight=5 spill
# sort.bats -- --sort: ordering rules per type, directions and null
# placement, stability, expressions, sort before/after group-by, the JSON
# form, top-k (--sort + --head) against a full sort, many batches, errors.

load helpers

setup() {
    enter_workdir
    cat > t.csv <<'EOF'
id,x,f,s,d
1,3,1.5,b,2024-01-02
2,-1,nan,,2023-05-01
3,,-0.0,a,
4,2,0.0,ab,2024-01-01
5,-3,-inf,a,2023-05-01
6,3,,b,2022-12-31
EOF
}

@test "ints: ascending with nulls last is the default, stable on ties" {
    assert_run_out t.csv --sort x --select id,x <<'EOF'
id,x
5,-3
2,-1
4,2
1,3
6,3
3,
EOF
}

@test "desc nulls first / desc nulls last: the null placement holds in both directions" {
    assert_run_out t.csv --sort 'x desc nulls first' --select id,x <<'EOF'
id,x
3,
1,3
6,3
4,2
2,-1
5,-3
EOF
    assert_run_out t.csv --sort 'x desc nulls last' --select id,x <<'EOF'
id,x
1,3
6,3
4,2
2,-1
5,-3
3,
EOF
    assert_run_out t.csv --sort 'x nulls first' --select id,x <<'EOF'
id,x
3,
5,-3
2,-1
4,2
1,3
6,3
EOF
}

@test "floats: -inf < -0.0 = 0.0 < numbers < NaN, null last; -f reverses all but the null" {
    assert_run_out t.csv --sort f --select id,f <<'EOF'
id,f
5,-inf
3,-0.0
4,0.0
1,1.5
2,nan
6,
EOF
    assert_run_out t.csv --sort -f --select id,f <<'EOF'
id,f
2,nan
1,1.5
3,-0.0
4,0.0
5,-inf
6,
EOF
}

@test "strings by bytes: a prefix sorts first, desc reverses, equal strings keep input order" {
    cat > s.csv <<'EOF'
id,s
1,ab
2,a
3,B
4,abc
5,a
6,b
EOF
    assert_run_out s.csv --sort s <<'EOF'
id,s
3,B
2,a
5,a
1,ab
4,abc
6,b
EOF
    assert_run_out s.csv --sort 's desc' <<'EOF'
id,s
6,b
4,abc
1,ab
2,a
5,a
3,B
EOF
}

@test "dates, and two keys with mixed directions" {
    assert_run_out t.csv --sort 'd, id desc' --select id,d <<'EOF'
id,d
6,2022-12-31
5,2023-05-01
2,2023-05-01
4,2024-01-01
1,2024-01-02
3,
EOF
}

@test "expression keys: abs(x) desc, a boolean comparison" {
    assert_run_out t.csv --sort 'abs(x) desc, id' --select id,x <<'EOF'
id,x
1,3
5,-3
6,3
4,2
2,-1
3,
EOF
    assert_run_out t.csv --sort 'x > 1, id desc' --select id,x <<'EOF'
id,x
5,-3
2,-1
6,3
4,2
1,3
3,
EOF
}

@test "the JSON form gives the same rows as the flags" {
    printf '{"inputs": ["t.csv"], "steps": [{"sort": ["abs(x) desc", "id"]}, {"select": ["id"]}]}\n' > p.json
    run_tally -f p.json
    assert_ok
    local json_out=$output
    assert_run_out t.csv --sort 'abs(x) desc, id' --select id <<'EOF'
id
1
5
6
4
2
3
EOF
    assert_out "$json_out"
}

@test "sort after a group-by, and before one (first() sees the sorted order)" {
    assert_run_out t.csv --filter 's is not null' --group-by s --agg 'n = count(), m = max(x)' --sort 'n desc, s' <<'EOF'
s,n,m
a,2,-3
b,2,3
ab,1,2
EOF
    assert_run_out t.csv --filter 's is not null' --sort -x --group-by s --agg 'first_id = first(id)' <<'EOF'
s,first_id
b,1
ab,4
a,5
EOF
}

@test "top-k: --sort + --head equals the full sort's first rows (ties in input order, many batches)" {
    awk 'BEGIN { print "id,k,v"; for (i = 0; i < 5000; i++) printf "%d,%d,%s\n", i, (i * 7919) % 13, (i % 11 == 0 ? "" : (i * 31) % 17) }' > big.csv
    for spec in 'k' '-k' 'k, v desc' 'v nulls first' 'v desc nulls last, k'; do
        for n in 1 7 100 4999 6000; do
            run_tally big.csv --sort "$spec" -o full.csv
            assert_ok
            TALLY_BATCH_ROWS=256 run_tally big.csv --sort "$spec" --head "$n"
            assert_ok
            [ "$output" = "$(head -n $((n + 1)) full.csv)" ] || { echo "spec=$spec n=$n"; return 1; }
        done
    done
}

@test "many small batches give the same order as one batch (every sort path)" {
    awk 'BEGIN { print "id,i,f,s"; for (i = 0; i < 3000; i++) printf "%d,%s,%s,%s\n", i, (i % 9 == 0 ? "" : (i * 37) % 101), ((i * 13) % 7) / 4 - 0.5, (i % 5 == 0 ? "" : "s" (i * 17) % 53) }' > m.csv
    for spec in 'i' '-f' 's desc nulls first' 'f, s' 's, i desc'; do
        run_tally m.csv --sort "$spec" -o one.csv
        assert_ok
        TALLY_BATCH_ROWS=100 run_tally m.csv --sort "$spec" -o many.csv
        assert_ok
        cmp one.csv many.csv
    done
}

@test "an unknown sort column is a usage error with a caret and no output file" {
    run_tally t.csv --sort 'id, nosuch' -o out.csv
    assert_err 2 <<'EOF'
tally: unknown column "nosuch"
  --sort: id, nosuch
              ^^^^^^
EOF
    assert_only_files t.csv
}

@test "an aggregate or a broken expression in --sort is a usage error with a caret" {
    run_tally t.csv --sort 'sum(x)'
    assert_err 2 <<'EOF'
tally: aggregate "sum" is not allowed here
  --sort: sum(x)
          ^^^^^^
EOF
    run_tally t.csv --sort 'x +'
    assert_err 2 <<'EOF'
tally: syntax error: unexpected end of expression
  --sort: x +
             ^
EOF
}

@test "an empty input sorts to the header only" {
    printf 'a,b\n' > e.csv
    assert_run_out e.csv --sort -a <<'EOF'
a,b
EOF
    assert_run_out e.csv --sort a --head 3 <<'EOF'
a,b
EOF
}
