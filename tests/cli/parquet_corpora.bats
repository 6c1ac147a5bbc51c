#!/usr/bin/env bats
# run-cli: weight=6
# The Parquet corpora ($CORPORA/parquet-testing, $CORPORA/duckdb-parquet;
# CORPORA defaults to ../shared/corpora beside the clone): every file reads
# or is refused with the message tests/corpora-parquet-refused.txt lists
# for it (scripts/parquet-sweep), every file read gives DuckDB's answer
# under tally's mappings but the listed differences
# (scripts/parquet-golden.mjs, tests/corpora/parquet_*), the delta-encoded
# files equal the values parquet-testing states for them, and a missing
# corpus is a skip, or a failure under CI=true.

load helpers

SWEEP=$BATS_TEST_DIRNAME/../../scripts/parquet-sweep
GOLDEN=$BATS_TEST_DIRNAME/../../scripts/parquet-golden.mjs
CORP=${CORPORA:-$BATS_TEST_DIRNAME/../../../shared/corpora}

need_corpora() {
    [ -d "$CORP/parquet-testing" ] && [ -d "$CORP/duckdb-parquet" ] && return 0
    [ "${CI:-}" != true ] || { echo "CI=true: the corpora are required ($CORP)"; return 1; }
    skip "no Parquet corpora under $CORP"
}

@test "parquet corpora: every file reads or is refused as listed, never a crash" {
    need_corpora
    run env CORPORA="$CORP" "$SWEEP" "$TALLY"
    [ "$status" -eq 0 ] || { echo "$output"; return 1; }
    [ "$output" = "parquet-sweep: 203 files: 160 read, 43 refused, 0 problems" ] ||
        { echo "$output"; return 1; }
}

@test "parquet corpora: delta encodings give the values parquet-testing expects" {
    need_corpora
    local d=$CORP/parquet-testing/data
    for f in delta_binary_packed delta_byte_array delta_encoding_optional_column \
             delta_encoding_required_column; do
        "$TALLY" "$d/$f.parquet" -o "$f.csv"
        run python3 -c '
import csv, sys
got = list(csv.reader(open(sys.argv[1], newline="")))[1:]
want = list(csv.reader(open(sys.argv[2], newline="")))[1:]
if got != want:
    bad = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    print(f"row {bad + 1}: {got[bad] if bad < len(got) else None} != {want[bad] if bad < len(want) else None}")
    sys.exit(1)
print(len(got))' "$f.csv" "$d/${f}_expect.csv"
        [ "$status" -eq 0 ] || { echo "$f: $output"; return 1; }
    done
}

@test "parquet corpora: every file tally reads gives DuckDB's answer, but the known differences" {
    need_corpora
    run env CORPORA="$CORP" node "$GOLDEN" check "$TALLY"
    [ "$status" -eq 0 ] || { echo "$output"; return 1; }
    [ "$output" = "parquet-golden: 141 same, 2 known, 17 DuckDB refuses, 0 failed" ] ||
        { echo "$output"; return 1; }
}

@test "parquet-golden: a changed answer, and a known difference that is gone, fail" {
    need_corpora
    local exp=$BATS_TEST_DIRNAME/../corpora/parquet_expected.tsv
    local known=$BATS_TEST_DIRNAME/../corpora/parquet_known.txt
    # another hash for a file tally reads as DuckDB does
    awk -F '\t' 'BEGIN { OFS = "\t" } $1 == "parquet-testing/data/alltypes_plain.parquet" { $3 = "0" } { print }' \
        "$exp" > exp.tsv
    run env CORPORA="$CORP" PARQUET_EXPECTED="$PWD/exp.tsv" node "$GOLDEN" check "$TALLY"
    [ "$status" -eq 1 ]
    [[ "$output" == *"parquet-golden: parquet-testing/data/alltypes_plain.parquet: tally's 8 rows differ from DuckDB's 8"* ]]
    # a known difference that tally no longer has
    { cat "$known"; printf 'parquet-testing/data/alltypes_plain.parquet\tnone\n'; } > known.txt
    run env CORPORA="$CORP" PARQUET_KNOWN="$PWD/known.txt" node "$GOLDEN" check "$TALLY"
    [ "$status" -eq 1 ]
    [[ "$output" == *"parquet-golden: parquet-testing/data/alltypes_plain.parquet: listed in "*"/known.txt but now the same as DuckDB's answer"* ]]
}

@test "parquet-sweep: a missing corpus fails under CI=true, is a skip outside CI" {
    run env CI=true CORPORA="$PWD/none" "$SWEEP" "$TALLY"
    [ "$status" -eq 1 ]
    [ "$output" = "parquet-sweep: $PWD/none/parquet-testing not found (set CORPORA=DIR)
parquet-sweep: 0 files (CI=true: the corpora are required)" ]
    run env -u CI CORPORA="$PWD/none" "$SWEEP" "$TALLY"
    [ "$status" -eq 0 ]
    [ "$output" = "parquet-sweep: $PWD/none/parquet-testing not found (set CORPORA=DIR)
parquet-sweep: skipped" ]
}

@test "parquet-sweep: a refusal that is not listed, or otherwise than listed, is a problem" {
    mkdir -p c/parquet-testing c/duckdb-parquet
    printf 'PAR1 not really\n' > c/parquet-testing/a.parquet
    cp "$BATS_TEST_DIRNAME/data/parquet/nulls.parquet" c/duckdb-parquet/b.parquet
    run env CORPORA="$PWD/c" "$SWEEP" "$TALLY"
    [ "$status" -eq 1 ]
    [[ "$output" == *"parquet-sweep: parquet-testing/a.parquet: refused, not listed: not a Parquet file, or a truncated one (it does not end with PAR1)"* ]]
    [[ "$output" == *"parquet-sweep: 2 files: 1 read, 0 refused, "*" problems" ]]
}
