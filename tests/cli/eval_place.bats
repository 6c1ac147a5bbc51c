#!/usr/bin/env bats
# run-cli: spill
# eval_place.bats -- an error raised while evaluating a row of a filter,
# with or select over an input names the file and line of the record (man
# tally, ERRORS): the first record of the input that fails, whatever the
# morsel layout, batch size and thread count.

load 'helpers'

# 300 good rows, a 20-digit... no: an int64 at its maximum, then quoted
# records spanning two lines each, then a negative number.
write_big() {
    {
        echo 'a,b'
        for i in $(seq 1 300); do echo "$i,x"; done
        echo '9223372036854775807,y'
        for i in $(seq 1 40); do printf '%d,"two\nlines"\n' "$i"; done
        echo '-4,z'
    } > big.csv
}

@test "eval place: a failed cast names the file and line, with the caret" {
    printf 'a,b\n1,x\n2,y\nzz,q\n4,r\n' > c.csv
    run_tally c.csv --with 'n = cast(a as int64)'
    assert_err 1 <<'EOF'
tally: c.csv:4:1: cannot cast "zz" to int64 (column "a")
  --with: n = cast(a as int64)
              ^^^^^^^^^^^^^^^^
EOF
    # a filter before it that keeps the row, a select after it
    run_tally c.csv --filter "b != 'x'" --select 'b, a::int64 as n' -o out.csv
    assert_err 1 <<'EOF'
tally: c.csv:4:1: cannot cast "zz" to int64 (column "a")
  --select: b, a::int64 as n
               ^^^^^^^^
EOF
    assert_only_files c.csv
    # a filter that drops the row: no error
    run_tally c.csv --filter "b != 'q'" --with 'n = cast(a as int64)'
    assert_ok
}

@test "eval place: overflow and sqrt, the same line for every batch size and thread count" {
    write_big
    for rows in 3 64 100000; do
        for t in 1 2; do
            # -o: standard output would keep the rows before the error
            TALLY_BATCH_ROWS=$rows run_tally big.csv --threads "$t" --with 'c = a * 2' -o out.csv
            assert_err 1 <<'EOF'
tally: big.csv:302:1: integer overflow in "a * 2": 9223372036854775807 * 2 (column "a")
  --with: c = a * 2
              ^^^^^
EOF
            # lines, not records: each quoted record before it takes two
            TALLY_BATCH_ROWS=$rows run_tally big.csv --threads "$t" --filter 'a < 100' --with 'r = sqrt(a)' -o out.csv
            assert_err 1 <<'EOF'
tally: big.csv:383:1: cannot take the square root of a negative number in "sqrt(a)": sqrt(-4.0) (column "a")
  --with: r = sqrt(a)
              ^^^^^^^
EOF
        done
    done
}

@test "eval place: the first failing record of the input wins, whichever step fails" {
    # the filter fails on line 4, the with on line 3 (a row the filter
    # keeps): line 3 is reported, although the filter runs first
    printf 'a,b\n1,2\n-1,3\n4,bad\n' > f.csv
    run_tally f.csv --filter 'cast(b as int64) > 0' --with 'r = sqrt(a)'
    assert_err 1 <<'EOF'
tally: f.csv:3:1: cannot take the square root of a negative number in "sqrt(a)": sqrt(-1.0) (column "a")
  --with: r = sqrt(a)
              ^^^^^^^
EOF
    printf 'a,b\n1,2\n5,bad\n-1,3\n' > g.csv
    run_tally g.csv --filter 'cast(b as int64) > 0' --with 'r = sqrt(a)'
    assert_err 1 <<'EOF'
tally: g.csv:3:2: cannot cast "bad" to int64 (column "b")
  --filter: cast(b as int64) > 0
            ^^^^^^^^^^^^^^^^
EOF
}

@test "eval place: a filter read through late materialization" {
    printf 'a,b,c\n1,x,p\n0,y,q\nbad,z,r\n' > e.csv
    for late in "" 1; do
        TALLY_NO_LATE=$late run_tally e.csv --filter 'cast(a as int64) > 0' --select b
        assert_err 1 <<'EOF'
tally: e.csv:4:1: cannot cast "bad" to int64 (column "a")
  --filter: cast(a as int64) > 0
            ^^^^^^^^^^^^^^^^
EOF
    done
}

@test "eval place: NDJSON lines, blank lines counted; standard input and gzip" {
    printf '{"a":1}\n\n{"a":"x"}\n{"a":-1}\n' > n.ndjson
    run_tally n.ndjson --with 'c = cast(a as int64)'
    assert_err 1 <<'EOF'
tally: n.ndjson:3:6: cannot cast "x" to int64 (column "a")
  --with: c = cast(a as int64)
              ^^^^^^^^^^^^^^^^
EOF
    printf 'a\n1\n\nbad\n' > s.csv
    gzip -k s.csv
    run_tally s.csv.gz --with 'c = cast(a as int64)'
    assert_err 1 <<'EOF'
tally: s.csv.gz:4:1: cannot cast "bad" to int64 (column "a")
  --with: c = cast(a as int64)
              ^^^^^^^^^^^^^^^^
EOF
    run_tally_in "$(cat s.csv)" - --with 'c = cast(a as int64)'
    assert_err 1 <<'EOF'
tally: <stdin>:4:1: cannot cast "bad" to int64 (column "a")
  --with: c = cast(a as int64)
              ^^^^^^^^^^^^^^^^
EOF
}

@test "eval place: several inputs: the file the record is in" {
    printf 'a\n1\n2\n' > one.csv
    printf 'a\n3\nbad\n' > two.csv
    run_tally one.csv two.csv --with 'c = cast(a as int64)' -o out.csv
    assert_err 1 <<'EOF'
tally: two.csv:3:1: cannot cast "bad" to int64 (column "a")
  --with: c = cast(a as int64)
              ^^^^^^^^^^^^^^^^
EOF
}

@test "eval place: after a group-by the row of its result is named; a head passes lines on" {
    printf 'k,a\n1,5\n2,bad\n3,7\n' > L.csv
    for rows in 1 100000; do
        TALLY_BATCH_ROWS=$rows run_tally L.csv --group-by a --agg 'n = count()' --with 'c = cast(a as int64)'
        assert_err 1 <<'EOF2'
tally: row 2 of the group-by's result: cannot cast "bad" to int64
  --with: c = cast(a as int64)
              ^^^^^^^^^^^^^^^^
EOF2
        # a filter on a key moves below the group-by, onto the input's lines
        TALLY_BATCH_ROWS=$rows run_tally L.csv --group-by a --agg 'n = count()' --filter 'a::int64 > 0'
        assert_err 1 <<'EOF2'
tally: L.csv:3:2: cannot cast "bad" to int64 (column "a")
  --filter: a::int64 > 0
            ^^^^^^^^
EOF2
        TALLY_BATCH_ROWS=$rows run_tally L.csv --group-by a --agg 'n = count()' --filter 'n::string::int64 > 0 and a::int64 > 0'
        assert_err 1 <<'EOF2'
tally: row 2 of the group-by's result: cannot cast "bad" to int64
  --filter: n::string::int64 > 0 and a::int64 > 0
                                     ^^^^^^^^
EOF2
    done
    run_tally L.csv --head 3 --select 'k, a::int64 as b'
    assert_err 1 <<'EOF2'
tally: L.csv:3:2: cannot cast "bad" to int64 (column "a")
  --select: k, a::int64 as b
               ^^^^^^^^
EOF2
}

@test "eval place: after a join the left input's line" {
    printf 'k,a\n1,5\n2,bad\n' > L.csv
    printf 'k,z\n1,q\n2,r\n' > R.csv
    run_tally L.csv --join R.csv --on k --with 'c = cast(a as int64)'
    assert_err 1 <<'EOF2'
tally: L.csv:3:2: cannot cast "bad" to int64 (column "a")
  --with: c = cast(a as int64)
              ^^^^^^^^^^^^^^^^
EOF2
}

# The same data as CSV, TSV, NDJSON and a pretty-printed JSON document
# whose second object spans three lines.
write_formats() {
    printf 'id,name,qty\n1,apple,3\n2,pear,n/a\n3,fig,5\n' > s.csv
    printf 'id\tname\tqty\n1\tapple\t3\n2\tpear\tn/a\n3\tfig\t5\n' > s.tsv
    printf '{"id":1,"name":"apple","qty":"3"}\n{"id":2, "name":"pear", "qty":"n/a"}\n{"id":3,"name":"fig","qty":"5"}\n' > s.ndjson
    printf '[\n  {"id": 1, "name": "apple", "qty": "3"},\n  {"id": 2,\n   "name": "pear",\n   "qty": "n/a"},\n  {"id": 3, "name": "fig", "qty": "5"}\n]\n' > s.json
}

# assert_first LINE: exit status 1, nothing on standard output, and LINE the
# first line of standard error (the expression and caret follow).
assert_first() {
    if [ "$status" -ne 1 ] || [ -n "$output" ]; then
        show
        return 1
    fi
    assert_stderr_line 1 "$1"
}

@test "eval place: the column of the failing value, per format, every step and thread count" {
    write_formats
    for t in 1 4; do
        # the field number in CSV and TSV, the character of the value in
        # NDJSON, the value's own line and character in a JSON document
        for f in s.csv:3:3 s.tsv:3:3 s.ndjson:2:31 s.json:5:11; do
            want="tally: $f: cannot cast \"n/a\" to int64 (column \"qty\")"
            file=${f%%:*}
            run_tally "$file" --threads "$t" --with 'q = cast(qty as int64)'
            assert_first "$want"
            run_tally "$file" --threads "$t" --head 9 --with 'q = qty::int64'
            assert_first "$want"
            run_tally "$file" --threads "$t" --filter 'id > 0' --select 'id, qty::int64 as q'
            assert_first "$want"
            run_tally "$file" --threads "$t" --group-by name --agg 's = sum(qty::int64)'
            assert_first "$want"
            run_tally "$file" --threads "$t" --sort 'trim(qty)::int64'
            assert_first "$want"
        done
    done
    run_tally s.json --threads 4 --with 'q = cast(qty as int64)'
    assert_err 1 <<'EOF'
tally: s.json:5:11: cannot cast "n/a" to int64 (column "qty")
  --with: q = cast(qty as int64)
              ^^^^^^^^^^^^^^^^^^
EOF
}

@test "eval place: a value from several columns names the line; a made column is not the input's" {
    printf 'a,b\n1,2\n9223372036854775807,1\n' > ab.csv
    for t in 1 4; do
        run_tally ab.csv --threads "$t" --with 'c = a + b'
        assert_err 1 <<'EOF'
tally: ab.csv:3: integer overflow in "a + b": 9223372036854775807 + 1
  --with: c = a + b
              ^^^^^
EOF
        # b made from a: its value is not the input's b
        run_tally ab.csv --threads "$t" --with 'b = a' --with 'c = b * 2'
        assert_err 1 <<'EOF'
tally: ab.csv:3: integer overflow in "b * 2": 9223372036854775807 * 2
  --with: c = b * 2
              ^^^^^
EOF
        # one column, through a function
        run_tally ab.csv --threads "$t" --with 'c = abs(a) * 2'
        assert_err 1 <<'EOF'
tally: ab.csv:3:1: integer overflow in "abs(a) * 2": 9223372036854775807 * 2 (column "a")
  --with: c = abs(a) * 2
              ^^^^^^^^^^
EOF
    done
}

@test "eval place: after a join the left input's column; after a group-by the row of its result" {
    printf 'k,a\n1,5\n2,bad\n3,7\n' > L.csv
    printf 'k,z\n1,q\n2,r\n3,s\n' > R.csv
    for t in 1 4; do
        for side in left right; do
            export TALLY_JOIN_BUILD=$side
            run_tally L.csv --threads "$t" --join R.csv --on k --with 'c = a::int64'
            assert_err 1 <<'EOF'
tally: L.csv:3:2: cannot cast "bad" to int64 (column "a")
  --with: c = a::int64
              ^^^^^^^^
EOF
            unset TALLY_JOIN_BUILD
        done
        run_tally L.csv --threads "$t" --group-by a --agg 'n = count()' --with 'c = a::int64'
        assert_err 1 <<'EOF'
tally: row 2 of the group-by's result: cannot cast "bad" to int64
  --with: c = a::int64
              ^^^^^^^^
EOF
    done
}
