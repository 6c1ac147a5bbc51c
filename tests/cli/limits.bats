#!/usr/bin/env bats
# run-cli: weight=25
# Pathological inputs give a result or a clear error in bounded time and
# memory: no stack overflow, no quadratic blow-up (RELIABILITY.md, limits).
# Each run is under `timeout`, and under a memory cap (ulimit -v) where the
# build is not ASan (ASan reserves terabytes of address space).

load helpers

# bounded CMD...: run tally with a time limit and, outside ASan, 2 GiB of
# address space.
bounded() {
    local cap=""
    [ -n "${TALLY_ASAN:-}" ] || cap="ulimit -v 2097152;"
    run --separate-stderr bash -c "$cap"' exec timeout 60 "$@"' _ "$TALLY" "$@"
}

@test "a 100 MB single field" {
    python3 -c "import sys; sys.stdout.write('s\n' + 'x' * 100_000_000 + '\n')" > big.csv
    bounded big.csv --agg 'n = count(), l = max(length(s))'
    assert_ok
    assert_out "n,l
1,100000000"
}

@test "a 100 MB quoted field with doubled quotes" {
    python3 -c "import sys; sys.stdout.write('s\n\"' + 'a\"\"' * 25_000_000 + '\"\n')" > q.csv
    bounded q.csv --agg 'l = max(length(s))'
    assert_ok
    assert_out "l
50000000"
}

@test "a million columns in a header" {
    python3 -c "
n = 1_000_000
print(','.join('c%d' % i for i in range(n)))
print(','.join(str(i) for i in range(n)))" > wide.csv
    bounded wide.csv --select c999999,c0
    assert_ok
    assert_out "c999999,c0
999999,0"
}

@test "a million identical column names are made unique quickly" {
    python3 -c "
n = 1_000_000
print(','.join('c' for i in range(n)))
print(','.join('1' for i in range(n)))" > same.csv
    bounded same.csv --select c --head 1 --quiet
    assert_ok
    assert_out "c
1"
}

@test "a last line without a newline" {
    printf 'a,b\n1,2\n3,4' > t.csv
    bounded t.csv --agg 's = sum(b)'
    assert_ok
    assert_out "s
6"
}

@test "a 10,000-level parenthesized expression is an error, not a crash" {
    expr=$(python3 -c "print('(' * 10000 + 'a' + ')' * 10000)")
    printf 'a\n1\n' > t.csv
    bounded t.csv --filter "$expr"
    [ "$status" -eq 2 ]
    [[ "$stderr" == "tally: "*"nested too deeply"* ]] || { show; false; }
}

@test "a 30,000-term sum is an error or a result, not a crash" {
    expr=$(python3 -c "print('+'.join(['a'] * 30000))")
    printf 'a\n1\n' > t.csv
    bounded t.csv --select "$expr as s"
    [ "$status" -eq 0 ] || [ "$status" -eq 2 ]
    [[ "$status" -eq 0 || "$stderr" == "tally: "* ]] || { show; false; }
}

@test "deeply nested JSON in a pipeline file is an error" {
    python3 -c "print('{\"inputs\": ' + '[' * 100000 + ']' * 100000 + '}')" > deep.json
    bounded -f deep.json
    [ "$status" -eq 2 ]
    [[ "$stderr" == "tally: "*"deep.json"* ]] || { show; false; }
}

@test "100,000 steps on the command line are an error or a result" {
    printf 'a\n1\n' > t.csv
    args=$(python3 -c "print(' '.join(['--filter a>0'] * 20000))")
    # shellcheck disable=SC2086
    bounded t.csv $args
    [ "$status" -eq 0 ] || [ "$status" -eq 2 ]
}

@test "a million rows of one-character lines" {
    python3 -c "import sys; sys.stdout.write('a\n' + '1\n' * 1_000_000)" > tall.csv
    bounded tall.csv --agg 'n = count(), s = sum(a)'
    assert_ok
    assert_out "n,s
1000000,1000000"
}
