#!/usr/bin/env bats
# I/O fault injection (tests/fault/iofail.c preloaded): a failed write, fsync
# or rename leaves an existing output file untouched and no temporary file
# behind, and exits 1 naming the output; a failed open of an input names it.
# Skipped under the sanitizer build (ASan must be the first preloaded library).

setup() {
    [ -z "${TALLY_ASAN:-}" ] || skip "LD_PRELOAD shim is not used with ASan"
    SHIM="$BATS_TEST_DIRNAME/../../build/iofail.so"
    [ -f "$SHIM" ] || skip "build/iofail.so not built"
    cd "$BATS_TEST_TMPDIR"
    printf 'k,v\na,1\nb,2\na,3\n' > in.csv
    printf 'old contents\n' > out.csv
}

# Run tally with the shim failing OP's Nth call with ERRNO.
run_faulty() {
    local spec=$1; shift
    run env LD_PRELOAD="$SHIM" TALLY_IOFAIL="$spec" "$TALLY" "$@"
}

assert_untouched() {
    [ "$(cat out.csv)" = "old contents" ]
    [ -z "$(ls -A | grep -v '^in.csv$' | grep -v '^out.csv$')" ]
}

@test "a failed write (ENOSPC) keeps the old output and names it" {
    run_faulty write:1:ENOSPC in.csv --group-by k --agg 's = sum(v)' -o out.csv
    [ "$status" -eq 1 ]
    [[ "$output" == "tally: "*"out.csv"*"No space left on device"* ]]
    assert_untouched
}

@test "a failed write (EIO) keeps the old output" {
    run_faulty write:1:EIO in.csv -o out.csv
    [ "$status" -eq 1 ]
    [[ "$output" == "tally: "*"out.csv"*"Input/output error"* ]]
    assert_untouched
}

@test "a failed fsync keeps the old output" {
    run_faulty fsync:1:EIO in.csv -o out.csv
    [ "$status" -eq 1 ]
    [[ "$output" == "tally: "*"out.csv"* ]]
    assert_untouched
}

@test "a failed rename keeps the old output and removes the temporary file" {
    run_faulty rename:1:EIO in.csv -o out.csv
    [ "$status" -eq 1 ]
    [[ "$output" == "tally: "*"out.csv"* ]]
    assert_untouched
}

@test "every write failure point of a larger output is clean" {
    seq 1 50000 | sed 's/^/x,/' | sed '1i k,v' > big.csv
    n=1
    while :; do
        run_faulty write:$n:ENOSPC big.csv --with 'w = v * 2' -o out.csv
        [ "$status" -eq 0 ] && break
        [ "$status" -eq 1 ]
        [[ "$output" == "tally: "*"out.csv"* ]]
        [ "$(cat out.csv)" = "old contents" ]
        [ -z "$(ls -A | grep -v -e '^in.csv$' -e '^out.csv$' -e '^big.csv$')" ]
        n=$((n + 1))
        [ $n -le 1000 ]
    done
    # the successful run wrote the whole output
    [ "$(wc -l < out.csv)" -eq 50001 ]
    [ "$n" -gt 2 ]   # the output really took several writes
}

@test "a failed open of the output's temporary file names the output" {
    run_faulty open:1:EACCES in.csv -o out.csv
    [ "$status" -eq 1 ]
    [ "$output" = 'tally: cannot write "out.csv": Permission denied' ]
    assert_untouched
}

@test "a failed open of the input names it" {
    # the output's temporary file is opened first, the input second
    run_faulty open:2:EACCES in.csv -o out.csv
    [ "$status" -eq 1 ]
    [[ "$output" == "tally: "*"in.csv"* ]]
    assert_untouched
}

@test "a file of a glob that vanishes or turns unreadable after planning: its open error, exit 1, old output kept" {
    # planning opens the 20 files (keeping the first 8 open), the sink its
    # temporary file, then the scan opens f09, f10, ...: open 23 is f10's
    mkdir g
    for i in $(seq -w 1 20); do printf 'a,b\n%d,x\n' $((10#$i)) > g/f$i.csv; done
    for th in 1 2; do
        run_faulty open:23:ENOENT 'g/*.csv' --threads $th --agg 'n = count(), s = sum(a)' -o out.csv
        [ "$status" -eq 1 ]
        [ "$output" = 'tally: cannot open "g/f10.csv": No such file or directory' ]
        run_faulty open:23:EACCES 'g/*.csv' --threads $th --agg 'n = count(), s = sum(a)' -o out.csv
        [ "$status" -eq 1 ]
        [ "$output" = 'tally: cannot open "g/f10.csv": Permission denied' ]
        [ "$(cat out.csv)" = "old contents" ]
        [ -z "$(ls -A | grep -v '^in.csv$' | grep -v '^out.csv$' | grep -v '^g$')" ]
    done
}
