#!/usr/bin/env bats
# scripts/run-corpora without its corpora: a skip on a developer's machine,
# a failure under CI (CI=true), never "0 passed" taken for a pass there.

load helpers

RUN_CORPORA=$BATS_TEST_DIRNAME/../../scripts/run-corpora

@test "run-corpora: a missing corpora folder fails under CI=true" {
    run --separate-stderr env CI=true CORPORA="$PWD/none" "$RUN_CORPORA" "$TALLY"
    [ "$status" -eq 1 ]
    [ "$output" = "corpora: $PWD/none not found (set CORPORA=DIR)
corpora: 0 passed, 1 failed (CI=true: the corpora are required)" ]
}

@test "run-corpora: a missing corpora folder is a skip outside CI" {
    run --separate-stderr env -u CI CORPORA="$PWD/none" "$RUN_CORPORA" "$TALLY"
    [ "$status" -eq 0 ]
    [ "$output" = "corpora: $PWD/none not found (set CORPORA=DIR)
corpora: 0 passed, 0 failed (skipped)" ]
}

@test "run-corpora: a corpora folder without a file fails under CI=true" {
    mkdir empty
    run --separate-stderr env CI=true CORPORA="$PWD/empty" CORPORA_JOBS=1 "$RUN_CORPORA" "$TALLY"
    [ "$status" -eq 1 ]
    [ "$output" = "corpora: 0 passed, 1 failed" ]
    [[ "$stderr" == *"corpora: no file found under $PWD/empty (CI=true: the corpora are required)"* ]]
}
