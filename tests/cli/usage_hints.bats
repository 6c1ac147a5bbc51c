#!/usr/bin/env bats
# usage_hints.bats -- usage errors that used to mislead now say what to do:
# --agg before --group-by, a string in double quotes, a non-ASCII name
# unquoted, a column an earlier step dropped, `tally help` and a mistyped
# command, and no input while standard input is a pipe.

load 'helpers'

setup() {
    enter_workdir
    printf 'region,größe,v\nnorth,1,2\nsouth,3,4\n' > r.csv
}

@test "usage hints: --agg before --group-by says to move it" {
    run_tally r.csv --agg 'n = count()' --group-by region
    assert_err 2 'tally: option "--group-by" must be followed by --agg LIST (got nothing; the --agg before it aggregates every row on its own: move it after --group-by)'
    run_tally r.csv --agg 'n = count()' --group-by region --filter 'n > 1' -o out.csv
    assert_err 2 'tally: option "--group-by" must be followed by --agg LIST (got "--filter"; the --agg before it aggregates every row on its own: move it after --group-by)'
    assert_only_files r.csv
    # other steps between them: the --agg is named by its step
    run_tally r.csv --agg 'n = count()' --filter 'n > 1' --group-by region
    assert_err 2 'tally: option "--group-by" must be followed by --agg LIST (got nothing; the --agg of step 1 aggregates every row on its own: an --agg goes right after its --group-by)'
    run_tally r.csv --select v --agg 'n = count()' --with 'm = n' --drop m --group-by region --head 1
    assert_err 2 'tally: option "--group-by" must be followed by --agg LIST (got "--head"; the --agg of step 2 aggregates every row on its own: an --agg goes right after its --group-by)'
    # an --agg that follows its own --group-by is not named
    run_tally r.csv --group-by v --agg 'n = count()' --filter 'n > 0' --group-by region
    assert_err 2 'tally: option "--group-by" must be followed by --agg LIST (got nothing)'
    # without an --agg before it, the message stays the short one
    run_tally r.csv --filter 'v > 1' --group-by region
    assert_err 2 'tally: option "--group-by" must be followed by --agg LIST (got nothing)'
}

@test "usage hints: a string in double quotes is a column name: say to use single quotes" {
    run_tally r.csv --filter 'region = "north"'
    assert_err 2 <<'EOF'
tally: unknown column "north" (double quotes name a column; a string takes single quotes: 'north')
  --filter: region = "north"
                     ^^^^^^^
EOF
    run_tally r.csv --filter "region = \"it's\""
    assert_err 2 <<'EOF'
tally: unknown column "it's" (double quotes name a column; a string takes single quotes: 'it''s')
  --filter: region = "it's"
                     ^^^^^^
EOF
    # a quoted name near a real one keeps its "did you mean"
    run_tally r.csv --filter '"regoin" = 1'
    assert_err 2 <<'EOF'
tally: unknown column "regoin" (did you mean "region"?)
  --filter: "regoin" = 1
            ^^^^^^^^
EOF
    # and the fix works
    run_tally r.csv --filter "region = 'north'" --select '"größe"'
    assert_ok
    assert_out <<'EOF'
größe
1
EOF
}

@test "usage hints: a non-ASCII name unquoted: say to double-quote it" {
    run_tally r.csv --filter 'größe > 1'
    assert_err 2 <<'EOF'
tally: syntax error: unexpected "ö" (a name with non-ASCII letters must be double-quoted: "größe")
  --filter: größe > 1
            ^^^^^
EOF
    run_tally r.csv --select 'region, größe'
    assert_err 2 <<'EOF'
tally: syntax error: unexpected "ö" (a name with non-ASCII letters must be double-quoted: "größe")
  --select: region, größe
                    ^^^^^
EOF
    # a non-ASCII symbol on its own is just unexpected
    run_tally r.csv --filter 'v × 2 > 1'
    assert_err 2 <<'EOF'
tally: syntax error: unexpected "×"
  --filter: v × 2 > 1
              ^
EOF
}

@test "usage hints: a column an earlier step dropped names that step" {
    run_tally r.csv --select region --select v
    assert_err 2 <<'EOF'
tally: unknown column "v": step 1 (--select) dropped it
  --select: v
            ^
EOF
    run_tally r.csv --filter 'v > 1' --drop v --with 'w = v + 1'
    assert_err 2 <<'EOF'
tally: unknown column "v": step 2 (--drop) dropped it
  --with: w = v + 1
              ^
EOF
    run_tally r.csv --group-by region --agg 'n = count()' --sort v
    assert_err 2 <<'EOF'
tally: unknown column "v": step 1 (--group-by) dropped it
  --sort: v
          ^
EOF
    # the last step that dropped it is named
    run_tally r.csv --drop v --with 'v = 1' --select region --filter 'v = 1'
    assert_err 2 <<'EOF'
tally: unknown column "v": step 3 (--select) dropped it
  --filter: v = 1
            ^
EOF
    # a rename says the new name, on the command line and in a pipeline file
    run_tally r.csv --rename 'v:w' --filter 'v > 1'
    assert_err 2 <<'EOF'
tally: unknown column "v": step 1 (--rename) renamed it to "w"
  --filter: v > 1
            ^
EOF
    printf '{"inputs": ["r.csv"], "steps": [{"rename": {"v": "w x"}}, {"select": ["region"]}, {"sort": ["v"]}]}' > p.json
    run_tally -f p.json
    assert_err 2 <<'EOF'
tally: unknown column "v": step 1 (/steps/0) renamed it to "w x"
  /steps/2/sort/0: v
                   ^
EOF
    # a name that never was a column keeps its "did you mean"
    run_tally r.csv --select region --filter 'regin = 1'
    assert_err 2 <<'EOF'
tally: unknown column "regin" (did you mean "region"?)
  --filter: regin = 1
            ^^^^^
EOF
}

@test "usage hints: tally help prints the help" {
    run_tally help
    [ "$status" -eq 0 ] || { show; return 1; }
    [ -z "$stderr" ] || { show; return 1; }
    [[ "${lines[0]}" == "usage: tally [OPTIONS] INPUT... [STEP...] [-o OUTPUT]" ]] || { show; return 1; }
    run_tally --help
    local want=$output
    run_tally help
    [ "$output" = "$want" ] || { show; return 1; }
}

@test "usage hints: a mistyped command suggests the command" {
    run_tally explian r.csv
    assert_err 2 'tally: "explian" is neither a command nor a file (did you mean tally explain?)'
    run_tally shcema r.csv
    assert_err 2 'tally: "shcema" is neither a command nor a file (did you mean tally schema?)'
    run_tally hlep
    assert_err 2 'tally: "hlep" is neither a command nor a file (did you mean tally --help?)'
    # a file of that name is an input, as always
    cp r.csv explian
    run_tally explian --select region
    assert_ok
    assert_out <<'EOF'
region
north
south
EOF
    # a name far from every command is a missing file
    run_tally sales
    assert_err 1 'tally: cannot open "sales": No such file or directory'
}

@test "usage hints: no input while standard input is a pipe or a file suggests -" {
    run_tally_in 'a
1
' --filter 'a > 0'
    assert_err 2 'tally: no input given (standard input is a pipe: to read it, give - as the input)'
    run --separate-stderr "$TALLY" --filter 'v > 2' < r.csv
    assert_err 2 'tally: no input given (standard input is a file: to read it, give - as the input)'
    run --separate-stderr "$TALLY" --filter 'v > 2' < /dev/null
    assert_err 2 'tally: no input given (try tally --help)'
    run --separate-stderr "$TALLY" - --filter 'v > 2' < r.csv
    assert_ok
    assert_out <<'EOF'
region,größe,v
south,3,4
EOF
}
