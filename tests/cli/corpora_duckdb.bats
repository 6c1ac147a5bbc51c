#!/usr/bin/env bats
# tests/corpora/duckdb_corpora.mjs (make corpora-duckdb) on a small corpus of
# its own: one file per class, the expected file's check (worse fails,
# better is reported), and a missing corpus or oracle under CI=true.
# The tests that need DuckDB are skipped when scripts/setup-oracles has not
# run, except under CI.

load helpers

SCRIPT=$BATS_TEST_DIRNAME/../corpora/duckdb_corpora.mjs

# corpus: one file of each class DuckDB 1.5.6 and today's tally give, but
# "columns" (another column count: since tally sniffs the delimiter, no
# small file is known to give it).
corpus() {
    mkdir -p c/duckdb-csv c/duckdb-json c/duckdb-csv/fuzzing
    printf 'a,b\n1,x\n2,y\n' > c/duckdb-csv/same.csv
    printf 'a,b\n1,""\n2,y\n' > c/duckdb-csv/kept.csv
    printf 'a,b\n1,"x"y\n2,z\n' > c/duckdb-csv/refuses.csv
    printf 'a;b\n1;x\n2;y\n' > c/duckdb-csv/semicolon.csv
    # hexadecimal numbers: DuckDB types them (so line 1 is data), tally's
    # header detection takes them for text (so line 1 is the header)
    printf '0x1,a\n0x2,b\n' > c/duckdb-csv/different.csv
    printf 'not read\n' > c/duckdb-csv/fuzzing/left_out.csv
    printf '{"a":1}\n{"a":\n' > c/duckdb-json/bad.ndjson
    printf '{"a":1,"b":{"c":"x"}}\n' > c/duckdb-json/same.ndjson
}

need_oracle() {
    node -e "require('$(printf %s "${ORACLE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tally/oracle}")/node_modules/@duckdb/node-api')" 2>/dev/null && return 0
    [ -n "${CI:-}" ] && [ "$CI" != false ] && return 0
    skip "no DuckDB oracle (scripts/setup-oracles)"
}

@test "corpora-duckdb: one file of each class, counts and the per-file TSV" {
    need_oracle
    corpus
    run --separate-stderr env CORPORA="$PWD/c" node "$SCRIPT" run "$TALLY" --tsv out.tsv
    [ "$status" -eq 0 ]
    [ "$output" = "corpora-duckdb: 7 files under $PWD/c (duckdb-csv, duckdb-json, csv-spectrum, rust-csv)
  same            3
  kept            1
  refuses         1
  different       1
  columns         0
  crash           0
  duckdb-refuses  1
  duckdb-timeout  0
tally refuses (DuckDB reads), by reader DuckDB used and message:
     1  [csv] FILE:N:N: unexpected character after closing quote (a quote opens a quoted field: --quote none reads quotes as data)" ]
    [ "$(cut -f1,2 out.tsv)" = "# path	class
duckdb-csv/different.csv	different
duckdb-csv/kept.csv	kept
duckdb-csv/refuses.csv	refuses
duckdb-csv/same.csv	same
duckdb-csv/semicolon.csv	same
duckdb-json/bad.ndjson	duckdb-refuses
duckdb-json/same.ndjson	same" ]
    [ "$(grep '^duckdb-csv/different' out.tsv | cut -f3)" = "row 1 column 1: tally \"0x2\", DuckDB \"1\" (DuckDB finds no header: its row 1 is tally's header)" ]
    [ "$(grep '^duckdb-csv/refuses' out.tsv | cut -f3)" = "tally: duckdb-csv/refuses.csv:2:6: unexpected character after closing quote (a quote opens a quoted field: --quote none reads quotes as data)" ]
}

@test "corpora-duckdb: check fails on a class worse than expected and reports a better one" {
    need_oracle
    corpus
    DUCKDB_EXPECTED=$PWD/exp.tsv CORPORA="$PWD/c" node "$SCRIPT" regen "$TALLY" > /dev/null
    run --separate-stderr env DUCKDB_EXPECTED="$PWD/exp.tsv" CORPORA="$PWD/c" node "$SCRIPT" check "$TALLY"
    [ "$status" -eq 0 ]
    [ "${lines[${#lines[@]}-1]}" = "corpora-duckdb: 0 worse, 0 better, 0 other changes than tests/corpora/duckdb_expected.tsv" ]
    sed -i 's#^\(duckdb-csv/refuses.csv\)\trefuses#\1\tsame#; s#^\(duckdb-csv/semicolon.csv\)\tsame#\1\trefuses#' exp.tsv
    run --separate-stderr env DUCKDB_EXPECTED="$PWD/exp.tsv" CORPORA="$PWD/c" node "$SCRIPT" check "$TALLY"
    [ "$status" -eq 1 ]
    [ "$(printf '%s\n' "${lines[@]}" | tail -n 3)" = "not ok duckdb-csv/refuses.csv: same -> refuses: tally: duckdb-csv/refuses.csv:2:6: unexpected character after closing quote (a quote opens a quoted field: --quote none reads quotes as data)
better duckdb-csv/semicolon.csv: refuses -> same
corpora-duckdb: 1 worse, 1 better, 0 other changes than tests/corpora/duckdb_expected.tsv (run: node tests/corpora/duckdb_corpora.mjs regen TALLY, and review the diff)" ]
}

@test "corpora-duckdb: a missing corpus fails under CI=true and is a skip outside CI" {
    run --separate-stderr env CI=true CORPORA="$PWD/none" node "$SCRIPT" check "$TALLY"
    [ "$status" -eq 1 ]
    [ "$output" = "corpora-duckdb: no file found under $PWD/none (set CORPORA=DIR)
corpora-duckdb: failed (CI=true: corpora and oracle are required)" ]
    run --separate-stderr env -u CI CORPORA="$PWD/none" node "$SCRIPT" check "$TALLY"
    [ "$status" -eq 0 ]
    [ "$output" = "corpora-duckdb: no file found under $PWD/none (set CORPORA=DIR)
corpora-duckdb: skipped" ]
}

@test "corpora-duckdb: a missing oracle fails under CI=true" {
    corpus
    run --separate-stderr env CI=true ORACLE_DIR="$PWD/none" CORPORA="$PWD/c" node "$SCRIPT" check "$TALLY"
    [ "$status" -eq 1 ]
    [ "$output" = "corpora-duckdb: DuckDB (@duckdb/node-api) not found under $PWD/none: run scripts/setup-oracles
corpora-duckdb: failed (CI=true: corpora and oracle are required)" ]
}

@test "corpora-duckdb: an unknown mode is a usage error" {
    run --separate-stderr node "$SCRIPT" bogus "$TALLY"
    [ "$status" -eq 2 ]
    [ "$stderr" = "usage: duckdb_corpora.mjs run|check|regen TALLY [--tsv OUT]" ]
}
