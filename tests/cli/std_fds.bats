#!/usr/bin/env bats
# Closed standard descriptors (cmd/main.c): each of 0, 1, 2 that is closed
# at start is opened on /dev/null, so no file tally opens takes its number.
# A result for a closed standard output is an error; messages to a closed
# standard error are dropped and the exit status still tells.

load helpers

setup() {
    enter_workdir
    printf 'x\n1\ninf\nnan\n' > inf.csv
    printf 'a,b\n1,x\n2,y\n' > in.csv
}

# closed REDIRECTS ARGS...: run tally with ARGS under the shell redirections
# REDIRECTS (e.g. '2>&-'); $status, $output and $stderr as run_tally
closed() {
    local redir=$1
    shift
    run --separate-stderr bash -c "\"\$0\" \"\$@\" $redir" "$TALLY" "$@"
}

@test "2>&- with -o: a warning never lands in the output file" {
    closed '2>&-' inf.csv -o out.ndjson
    assert_ok
    [ "$(cat out.ndjson)" = "$(printf '{"x":1.0}\n{"x":null}\n{"x":null}')" ]
    assert_only_files inf.csv in.csv out.ndjson
}

@test "with standard error open, the same run shows the warning on it" {
    run_tally inf.csv -o out.ndjson
    [ "$status" -eq 0 ]
    [ "$stderr" = 'tally: warning: 2 inf/nan values written as null (JSON cannot hold them)' ]
}

@test "2>&- without -o: the result on standard output, the warning dropped" {
    closed '2>&-' inf.csv --to ndjson
    assert_ok
    assert_out '{"x":1.0}
{"x":null}
{"x":null}'
}

@test "2>&-: an error is silent but the exit status tells" {
    closed '2>&-' nope.csv
    assert_err 1 ''
    closed '2>&-' in.csv --filter 'nope > 1' -o out.csv
    assert_err 2 ''
    assert_only_files inf.csv in.csv
}

@test ">&- without -o: standard output is closed, exit 1" {
    closed '>&-' in.csv
    assert_err 1 'tally: standard output is closed'
}

@test ">&-: --help, --version, explain and schema need standard output too" {
    closed '>&-' --help
    assert_err 1 'tally: standard output is closed'
    closed '>&-' --version
    assert_err 1 'tally: standard output is closed'
    closed '>&-' explain in.csv
    assert_err 1 'tally: standard output is closed'
    closed '>&-' schema in.csv
    assert_err 1 'tally: standard output is closed'
}

@test ">&- with -o naming standard output (/proc/self/fd/1): an error, not a silent success" {
    ln -s /proc/self/fd/1 stdout
    closed '>&-' in.csv -o stdout
    assert_err 1 'tally: cannot write "stdout": Bad file descriptor'
}

@test ">&- with -o: the file is written, exit 0" {
    closed '>&-' in.csv -o out.csv
    assert_ok
    [ "$(cat out.csv)" = "$(printf 'a,b\n1,x\n2,y')" ]
}

@test ">&- 2>&-: exit 1 and nothing anywhere" {
    closed '>&- 2>&-' in.csv
    assert_err 1 ''
}

@test "<&- with a file input: as usual, with and without -o" {
    closed '<&-' in.csv
    assert_ok
    assert_out 'a,b
1,x
2,y'
    closed '<&-' in.csv -o out.csv
    assert_ok
    [ "$(cat out.csv)" = "$(printf 'a,b\n1,x\n2,y')" ]
}

@test "<&- with input -: read as empty, as from /dev/null" {
    closed '</dev/null' -
    want_status=$status want_out=$output want_err=$stderr
    closed '<&-' -
    [ "$status" -eq "$want_status" ]
    [ "$output" = "$want_out" ]
    [ "$stderr" = "$want_err" ]
}

@test "all three closed with -o: the file is written, exit 0" {
    closed '<&- >&- 2>&-' inf.csv -o out.ndjson
    assert_ok
    [ "$(cat out.ndjson)" = "$(printf '{"x":1.0}\n{"x":null}\n{"x":null}')" ]
    assert_only_files inf.csv in.csv out.ndjson
}
