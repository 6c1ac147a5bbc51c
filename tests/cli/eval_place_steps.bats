#!/usr/bin/env bats
# run-cli: spill
# eval_place_steps.bats -- where a row comes from, in the message of an
# error raised while evaluating it (man tally, ERRORS), for the steps that
# are not the scan's fused filters and projections: group-by keys and
# aggregate arguments, sort keys, expressions over a join's result, and
# rows made by a group-by, sort or join, or passed on by a head, distinct
# or --head N --by.  The same message for every batch size, thread count,
# join build side and aggregate path.

load 'helpers'

# 300 good rows, an int64 at its maximum (line 302), quoted records of two
# lines each, then a negative number (line 383).
write_big() {
    {
        echo 'a,b'
        for i in $(seq 1 300); do echo "$i,x"; done
        echo '9223372036854775807,y'
        for i in $(seq 1 40); do printf '%d,"two\nlines"\n' "$i"; done
        echo '-4,z'
    } > big.csv
    printf 'b,w\nx,1\ny,2\n"two\nlines",3\nz,4\n' > bw.csv
}

# assert_fails_with LINE: exit status 1, nothing on standard output, and
# LINE the first line of standard error (the expression and caret follow).
assert_fails_with() {
    if [ "$status" -ne 1 ] || [ -n "$output" ]; then
        show
        return 1
    fi
    assert_stderr_line 1 "$1"
}

# The two messages of big.csv's bad records.
OVERFLOW='tally: big.csv:302:1: integer overflow in "a * 2": 9223372036854775807 * 2 (column "a")'
SQRT='tally: big.csv:383:1: cannot take the square root of a negative number in "sqrt(a)": sqrt(-4.0) (column "a")'

@test "eval place steps: group-by keys and aggregate arguments name the line, on every path" {
    printf 'k,a\nx,1\ny,2\nx,zz\ny,4\n' > c.csv
    for path in "" TALLY_AGG_SERIAL=1 TALLY_AGG_RADIX=0; do
        # shellcheck disable=SC2086
        run --separate-stderr env $path "$TALLY" c.csv --group-by k --agg 's = sum(cast(a as int64))'
        assert_err 1 <<'EOF'
tally: c.csv:4:2: cannot cast "zz" to int64 (column "a")
  --agg: s = sum(cast(a as int64))
                 ^^^^^^^^^^^^^^^^
EOF
        # shellcheck disable=SC2086
        run --separate-stderr env $path "$TALLY" c.csv --agg 's = sum(a::int64), m = max(a)'
        assert_err 1 <<'EOF'
tally: c.csv:4:2: cannot cast "zz" to int64 (column "a")
  --agg: s = sum(a::int64), m = max(a)
                 ^^^^^^^^
EOF
        # shellcheck disable=SC2086
        run --separate-stderr env $path "$TALLY" c.csv --group-by 'a::int64' --agg 'n = count()'
        assert_err 1 <<'EOF'
tally: c.csv:4:2: cannot cast "zz" to int64 (column "a")
  --group-by: a::int64
              ^^^^^^^^
EOF
    done
    # a sum that leaves the int64 range names its group, not a row
    printf 'k,a\nx,9223372036854775807\nx,1\ny,1\n' > o.csv
    run_tally o.csv --group-by k --agg 's = sum(a)'
    assert_err 1 <<'EOF'
tally: sum overflows int64 in group k="x"
  --agg: s = sum(a)
             ^^^^^^
EOF
}

@test "eval place steps: sort keys name the line: full sort, top-k, --head N --by" {
    printf 'k,a\nx,3\ny,2\nx,zz\ny,4\n' > c.csv
    for env in "" TALLY_SORT_SERIAL=1 TALLY_NO_LATE=1; do
        for steps in "--sort a::int64" "--sort a::int64 --head 1" "--sort a::int64 --head 1 --by k"; do
            # shellcheck disable=SC2086
            run --separate-stderr env $env "$TALLY" c.csv $steps
            assert_err 1 <<'EOF'
tally: c.csv:4:2: cannot cast "zz" to int64 (column "a")
  --sort: a::int64
          ^^^^^^^^
EOF
        done
    done
}

@test "eval place steps: big input: every step, batch size, thread count and join side" {
    write_big
    for rows in 3 64 100000; do
        for t in 1 2; do
            export TALLY_BATCH_ROWS=$rows
            run_tally big.csv --threads "$t" --group-by b --agg 's = sum(a * 2)'
            assert_fails_with "$OVERFLOW"
            run_tally big.csv --threads "$t" --agg 'r = max(sqrt(a))'
            assert_fails_with "$SQRT"
            run_tally big.csv --threads "$t" --sort 'sqrt(a)'
            assert_fails_with "$SQRT"
            run_tally big.csv --threads "$t" --sort 'a * 2' --head 2
            assert_fails_with "$OVERFLOW"
            run_tally big.csv --threads "$t" --sort 'sqrt(a)' --head 2 --by b
            assert_fails_with "$SQRT"
            run_tally big.csv --threads "$t" --head 1000 --with 'c = a * 2'
            assert_fails_with "$OVERFLOW"
            run_tally big.csv --threads "$t" --distinct --filter 'a < 100' --select 'sqrt(a) as r'
            assert_fails_with "$SQRT"
            for side in left right; do
                export TALLY_JOIN_BUILD=$side
                run_tally big.csv --threads "$t" --join bw.csv --on b --with 'c = a * 2'
                assert_fails_with "$OVERFLOW"
                run_tally big.csv --threads "$t" --join bw.csv --on b --filter 'a < 100' --group-by w --agg 'r = sum(sqrt(a))'
                assert_fails_with "$SQRT"
                unset TALLY_JOIN_BUILD
            done
            unset TALLY_BATCH_ROWS
        done
    done
}

@test "eval place steps: after a join, the left input's line; the right's for its unmatched rows" {
    printf 'k,a\n1,5\n2,bad\n3,7\n' > L.csv
    printf 'k,z\n1,q\n2,r\n4,6\n5,bad\n' > R.csv
    for side in left right; do
        export TALLY_JOIN_BUILD=$side
        run_tally L.csv --join R.csv --on k --filter 'a::int64 > 0'
        assert_err 1 <<'EOF'
tally: L.csv:3:2: cannot cast "bad" to int64 (column "a")
  --filter: a::int64 > 0
            ^^^^^^^^
EOF
        # the bad value is the right's: the left row it was joined with is named
        run_tally L.csv --join R.csv --on k --with 'c = z::int64'
        assert_err 1 <<'EOF'
tally: L.csv:2: cannot cast "q" to int64
  --with: c = z::int64
              ^^^^^^^^
EOF
        # the right rows no left row matched come last: named by the right's lines
        run_tally L.csv --join R.csv --on k --how right --filter 'k > 2' --with 'c = z::int64'
        assert_err 1 <<'EOF'
tally: R.csv:5: cannot cast "bad" to int64
  --with: c = z::int64
              ^^^^^^^^
EOF
        run_tally L.csv --join R.csv --on k --how full --filter 'k > 3' --with 'c = z::int64'
        assert_err 1 <<'EOF'
tally: R.csv:5: cannot cast "bad" to int64
  --with: c = z::int64
              ^^^^^^^^
EOF
        unset TALLY_JOIN_BUILD
    done
}

@test "eval place steps: filters moved into a join's side or kept above it" {
    printf 'k,a\n1,5\n2,bad\n3,7\n' > L.csv
    printf 'k,z\n1,q\n2,r\n' > R.csv
    # a left join takes the filter into its left side, over the scan
    run_tally explain L.csv --join R.csv --on k --how left --filter 'a::int64 > 0'
    assert_ok
    assert_out <<'EOF'
logical plan:
  filter cast(a as int64) > 0
    join left on k
      scan R.csv
      scan L.csv
optimized plan:
  join left on k
    scan R.csv
    filter cast(a as int64) > 0
      scan L.csv (a first, the rest only for kept rows)
output: k int64, a string, z string
EOF
    run_tally L.csv --join R.csv --on k --how left --filter 'a::int64 > 0'
    assert_err 1 <<'EOF'
tally: L.csv:3:2: cannot cast "bad" to int64 (column "a")
  --filter: a::int64 > 0
            ^^^^^^^^
EOF
    # an inner join keeps a filter that can fail above itself
    run_tally L.csv --join R.csv --on k --filter "z != 'x' and a::int64 > 0"
    assert_err 1 <<'EOF'
tally: L.csv:3:2: cannot cast "bad" to int64 (column "a")
  --filter: z != 'x' and a::int64 > 0
                         ^^^^^^^^
EOF
}

@test "eval place steps: rows a group-by, sort or join made: their number in its result" {
    printf 'k,a\nx,1\ny,2\nx,bad\nz,4\n' > c.csv
    printf 'k,z\nx,1\ny,bad\n' > r.csv
    run_tally c.csv --group-by a --agg 'n = count()' --sort 'a::int64'
    assert_err 1 <<'EOF'
tally: row 3 of the group-by's result: cannot cast "bad" to int64
  --sort: a::int64
          ^^^^^^^^
EOF
    for env in "" TALLY_AGG_SERIAL=1; do
        # shellcheck disable=SC2086
        run --separate-stderr env $env "$TALLY" c.csv --group-by a,k --agg 'n = count()' --group-by k --agg 's = sum(a::int64)'
        assert_err 1 <<'EOF'
tally: row 3 of the group-by's result: cannot cast "bad" to int64
  --agg: s = sum(a::int64)
                 ^^^^^^^^
EOF
    done
    # through a filter that drops rows of the group-by's result
    run_tally c.csv --group-by a --agg 'n = count()' --filter "n > 1 or a != '2'" --with 'c = a::int64'
    assert_err 1 <<'EOF'
tally: row 3 of the group-by's result: cannot cast "bad" to int64
  --with: c = a::int64
              ^^^^^^^^
EOF
    run_tally c.csv --agg 's = count()' --with 'c = s * 9223372036854775807'
    assert_err 1 <<'EOF'
tally: row 1 of the aggregate's result: integer overflow in "s * 9223372036854775807": 4 * 9223372036854775807
  --with: c = s * 9223372036854775807
              ^^^^^^^^^^^^^^^^^^^^^^^
EOF
    run_tally c.csv --sort k --with 'c = a::int64'
    assert_err 1 <<'EOF'
tally: row 2 of the sort's result: cannot cast "bad" to int64
  --with: c = a::int64
              ^^^^^^^^
EOF
    run_tally c.csv --sort k --head 1 --by a --with 'c = a::int64'
    assert_err 1 <<'EOF'
tally: row 2 of the head's result: cannot cast "bad" to int64
  --with: c = a::int64
              ^^^^^^^^
EOF
    # a join over a group-by's rows names the group-by's row it joined
    run_tally c.csv --group-by k --agg 'n = count()' --join r.csv --on k --with 'c = z::int64'
    assert_err 1 <<'EOF'
tally: row 2 of the group-by's result: cannot cast "bad" to int64
  --with: c = z::int64
              ^^^^^^^^
EOF
    # a head between a join and the failing step: the join's row
    run_tally c.csv --join r.csv --on k --head 5 --with 'c = a::int64'
    assert_err 1 <<'EOF'
tally: row 3 of the join's result: cannot cast "bad" to int64
  --with: c = a::int64
              ^^^^^^^^
EOF
}

@test "eval place steps: head, distinct and --head N --by pass the input's lines on" {
    printf 'k,a\nx,1\ny,2\nx,1\nz,bad\n' > c.csv
    for steps in "--head 9" "--distinct" "--head 1 --by k" "--filter a!='2' --head 9"; do
        # shellcheck disable=SC2086
        run --separate-stderr "$TALLY" c.csv $steps --with 'c = a::int64'
        assert_err 1 <<'EOF'
tally: c.csv:5:2: cannot cast "bad" to int64 (column "a")
  --with: c = a::int64
              ^^^^^^^^
EOF
    done
    # a JSON document: the line and column of the value in the document
    printf '[{"a":"1"},\n{"a":"x"}]\n' > d.json
    run_tally d.json --head 5 --with 'c = a::int64'
    assert_err 1 <<'EOF'
tally: d.json:2:6: cannot cast "x" to int64 (column "a")
  --with: c = a::int64
              ^^^^^^^^
EOF
}

@test "eval place steps: TSV and --with-filename inputs name their lines" {
    printf 'k\ta\nx\t1\ny\t2\nz\tb\\\\ad\n' > t.tsv
    printf 'k,a\nx,1\nz,bad\n' > c.csv
    for rows in 1 100000; do
        export TALLY_BATCH_ROWS=$rows
        run_tally t.tsv --with 'c = a::int64'
        assert_err 1 <<'EOF2'
tally: t.tsv:4:2: cannot cast "b\\ad" to int64 (column "a")
  --with: c = a::int64
              ^^^^^^^^
EOF2
        run_tally t.tsv --group-by k --agg 's = sum(a::int64)'
        assert_err 1 <<'EOF2'
tally: t.tsv:4:2: cannot cast "b\\ad" to int64 (column "a")
  --agg: s = sum(a::int64)
                 ^^^^^^^^
EOF2
        run_tally c.csv t.tsv --with-filename --head 9 --with 'c = a::int64'
        assert_err 1 <<'EOF2'
tally: c.csv:3:2: cannot cast "bad" to int64 (column "a")
  --with: c = a::int64
              ^^^^^^^^
EOF2
        unset TALLY_BATCH_ROWS
    done
}
