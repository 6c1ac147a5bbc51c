#!/usr/bin/env bats
# Signals (cmd/main.c, lib/core/cleanup.c, formats/sink.c): SIGINT, SIGTERM
# and SIGHUP mid-run remove the temporary output and end tally by the same
# signal (status 130, 143, 129); the old target is untouched.  The output is
# an unnamed O_TMPFILE file where the filesystem allows, so even SIGKILL
# leaves nothing; TALLY_NO_TMPFILE=1 takes the named-file path a filesystem
# without O_TMPFILE gets.
#
# Each run reads a FIFO the test holds open: tally opens its output before
# its inputs, so once tally has the FIFO open (its /proc/PID/fd shows it),
# its temporary output exists and it waits for the rest of its input.

load helpers

setup() {
    enter_workdir
    printf 'old target\n' > out.csv
    mkfifo slow
}

# start_blocked [ENV=VALUE...]: start tally reading the FIFO into out.csv
# with the signals' default actions (a background job of a non-interactive
# shell starts with SIGINT ignored); wait until it holds its output open,
# then give it part of its input.  Sets $pid.
start_blocked() {
    env --default-signal=INT,TERM,HUP "$@" "$TALLY" --from csv slow -o out.csv \
        2> err.txt 3>&- &
    pid=$!
    open_fifo
    printf 'a,b\n1,x\n' >&4
}

# open_fifo: open the FIFO as descriptor 4 (read-write, so neither side
# blocks in open), then wait until tally ($pid) has it open, which it does
# after opening its output (the wait is bounded, so a tally that died early
# fails the test, not hangs it)
open_fifo() {
    exec 4<> slow
    for _ in $(seq 1 100); do
        ls -l "/proc/$pid/fd" 2>/dev/null | grep -q '/slow$' && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    echo "tally never opened its input"; cat err.txt
    return 1
}

# finish SIGNAL STATUS: send SIGNAL, check the exit status, that nothing but
# the test's files is left and the target is untouched.
finish() {
    local want=$2 got=0
    kill -s "$1" "$pid"
    wait "$pid" || got=$?
    exec 4>&-
    [ "$got" -eq "$want" ] || { echo "status $got, wanted $want"; cat err.txt; return 1; }
    [ ! -s err.txt ] || { cat err.txt; return 1; }
    [ "$(cat out.csv)" = 'old target' ]
    assert_only_files out.csv slow err.txt
}

@test "SIGINT mid-run: exit 130, no temporary file, target untouched" {
    start_blocked
    finish INT 130
}

@test "SIGTERM mid-run: exit 143, no temporary file, target untouched" {
    start_blocked
    finish TERM 143
}

@test "SIGHUP mid-run: exit 129, no temporary file, target untouched" {
    start_blocked
    finish HUP 129
}

@test "without O_TMPFILE the named temporary file is there mid-run and removed by SIGINT" {
    start_blocked TALLY_NO_TMPFILE=1
    [ "$(ls -A | grep -c '^\.out\.csv\.tmp-')" -eq 1 ]
    finish INT 130
}

@test "without O_TMPFILE, SIGTERM removes the named temporary file" {
    start_blocked TALLY_NO_TMPFILE=1
    finish TERM 143
}

@test "without O_TMPFILE, SIGHUP removes the named temporary file" {
    start_blocked TALLY_NO_TMPFILE=1
    finish HUP 129
}

@test "SIGKILL mid-run leaves no file where O_TMPFILE works" {
    python3 -c 'import os; os.open(".", os.O_TMPFILE | os.O_WRONLY)' 2>/dev/null ||
        skip "this filesystem refuses O_TMPFILE"
    start_blocked
    finish KILL 137
}

@test "a signal ignored at start stays ignored (nohup)" {
    bash -c 'trap "" HUP; exec "$0" --from csv slow -o out.csv' "$TALLY" 2> err.txt 3>&- &
    pid=$!
    open_fifo
    printf 'a,b\n1,x\n' >&4
    kill -s HUP "$pid"
    sleep 0.2
    printf '2,y\n' >&4
    exec 4>&-
    wait "$pid"
    [ ! -s err.txt ]
    [ "$(cat out.csv)" = "$(printf 'a,b\n1,x\n2,y')" ]
    assert_only_files out.csv slow err.txt
}

@test "a run that is not interrupted commits as usual" {
    start_blocked TALLY_NO_TMPFILE=1
    printf '2,y\n' >&4
    exec 4>&-
    wait "$pid"
    [ "$(cat out.csv)" = "$(printf 'a,b\n1,x\n2,y')" ]
    assert_only_files out.csv slow err.txt
}
