#!/usr/bin/env bats
# -o targets (formats/target.c, formats/sink.c): a path's symlinks are
# followed to the final target; a regular or new file is replaced atomically
# in the final target's folder; a device, FIFO, socket or open descriptor is
# written in place, never replaced, and only at commit (an error writes
# nothing to it).  Devices and FIFOs are the test's own mknod/mkfifo files in
# its work folder, never the real /dev.

load helpers

setup() {
    enter_workdir
    printf 'a,b\n1,x\n2,y\n' > in.csv
    # a late data error: line 30002 has three fields
    { echo 'a,b'; seq 1 30000 | sed 's/$/,y/'; echo '1,2,3'; } > bad.csv
}

# node_id FILE: type, device numbers and inode of FILE (a replaced node
# changes them)
node_id() {
    stat -c '%F %t:%T %i' "$1"
}

# reader FIFO OUT: copy what FIFO receives into OUT in the background
# (fd 3 closed so bats does not wait for it); the pid is in $reader_pid
reader() {
    cat "$1" > "$2" 3>&- &
    reader_pid=$!
}

@test "-o a character device writes to it and leaves the node alone" {
    mknod null c 1 3 || skip "cannot mknod here"
    before=$(node_id null)
    run_tally in.csv -o null
    assert_ok
    assert_out ''
    [ "$(node_id null)" = "$before" ]
    assert_only_files in.csv bad.csv null
}

@test "-o a symlink to a character device writes through the link" {
    mknod null c 1 3 || skip "cannot mknod here"
    ln -s null out.csv
    before=$(node_id null)
    run_tally in.csv -o out.csv
    assert_ok
    [ "$(node_id null)" = "$before" ]
    [ -L out.csv ]
    [ "$(readlink out.csv)" = null ]
    assert_only_files in.csv bad.csv null out.csv
}

@test "-o a FIFO writes CSV to its reader and keeps the FIFO" {
    mkfifo pipe
    reader pipe got
    run_tally in.csv --filter 'a > 1' -o pipe
    assert_ok
    wait "$reader_pid"
    [ -p pipe ]
    [ "$(cat got)" = "$(printf 'a,b\n2,y')" ]
}

@test "-o a FIFO named .ndjson writes NDJSON; an unknown suffix gets CSV" {
    mkfifo pipe.ndjson pipe.dat
    reader pipe.ndjson got1
    run_tally in.csv -o pipe.ndjson
    assert_ok
    wait "$reader_pid"
    [ "$(cat got1)" = "$(printf '{"a":1,"b":"x"}\n{"a":2,"b":"y"}')" ]
    reader pipe.dat got2
    run_tally in.csv -o pipe.dat
    assert_ok
    wait "$reader_pid"
    [ "$(cat got2)" = "$(printf 'a,b\n1,x\n2,y')" ]
}

@test "--to overrides the format for a FIFO" {
    mkfifo pipe
    reader pipe got
    run_tally in.csv --to tsv -o pipe
    assert_ok
    wait "$reader_pid"
    [ "$(cat got)" = "$(printf 'a\tb\n1\tx\n2\ty')" ]
}

@test "a data error writes nothing to a FIFO" {
    mkfifo pipe
    reader pipe got
    run_tally bad.csv -o pipe
    assert_err 1 "tally: bad.csv:30002: expected 2 fields, found 3 (CSV, delimiter ','; --ragged skip drops such rows)"
    wait "$reader_pid"
    [ -p pipe ]
    [ ! -s got ]
}

@test "a FIFO reader that stops early ends the run quietly (as | head does)" {
    seq 1 300000 | sed '1i a' > many.csv
    mkfifo pipe
    head -1 pipe > got 3>&- &
    reader_pid=$!
    run_tally many.csv -o pipe
    assert_ok
    wait "$reader_pid"
    [ "$(cat got)" = a ]
    [ -p pipe ]
}

@test "a gzip suffix on a FIFO compresses what goes through it" {
    mkfifo pipe.csv.gz
    reader pipe.csv.gz got.gz
    run_tally in.csv -o pipe.csv.gz
    assert_ok
    wait "$reader_pid"
    [ "$(gzip -dc got.gz)" = "$(printf 'a,b\n1,x\n2,y')" ]
}

@test "-o a link to /proc/self/fd/1 (what /dev/stdout is) writes to standard output" {
    ln -s /proc/self/fd/1 stdout
    run_tally in.csv -o stdout
    assert_ok
    assert_out 'a,b
1,x
2,y'
    [ -L stdout ]
}

@test "-o /proc/self/fd/1 into a regular file writes where the shell points it; >> appends" {
    ln -s /proc/self/fd/1 stdout
    printf 'first\n' > log.csv
    run bash -c '"$1" in.csv -o stdout >> log.csv && "$1" in.csv -o stdout >> log.csv' _ "$TALLY"
    [ "$status" -eq 0 ] || { show; return 1; }
    [ "$(cat log.csv)" = "$(printf 'first\na,b\n1,x\n2,y\na,b\n1,x\n2,y')" ]
    [ -L stdout ]
}

@test "-o a process substitution (/dev/fd/N) writes to the command" {
    run bash -c '"$1" in.csv --filter "a = 2" -o >(cat > got); status=$?; wait; exit $status' _ "$TALLY"
    [ "$status" -eq 0 ] || { show; return 1; }
    for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s got ] && break; sleep 0.1; done
    [ "$(cat got)" = "$(printf 'a,b\n2,y')" ]
}

@test "-o a descriptor that is not open is an error" {
    run_tally in.csv -o /proc/self/fd/9
    assert_err 1 'tally: cannot write "/proc/self/fd/9": No such file or directory'
}

@test "-o a socket is an error and the socket stays" {
    python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' sock ||
        skip "no python3"
    run_tally in.csv -o sock
    assert_err 1 'tally: cannot write "sock": No such device or address'
    [ -S sock ]
}

@test "-o a symlink replaces its target atomically and the link stays" {
    mkdir sub
    printf 'old\n' > sub/real.csv
    ln -s sub/real.csv out.csv
    ln -s out.csv chain.csv
    run_tally in.csv -o chain.csv
    assert_ok
    [ -L out.csv ]
    [ "$(readlink out.csv)" = sub/real.csv ]
    [ -L chain.csv ]
    [ "$(readlink chain.csv)" = out.csv ]
    [ "$(cat sub/real.csv)" = "$(printf 'a,b\n1,x\n2,y')" ]
    [ "$(ls -A sub)" = real.csv ]
    assert_only_files in.csv bad.csv sub out.csv chain.csv
}

@test "a relative symlink in another folder is followed from that folder" {
    mkdir -p d1 d2
    printf 'old\n' > d2/real.csv
    ln -s ../d2/real.csv d1/link.csv
    run_tally in.csv -o d1/link.csv
    assert_ok
    [ "$(cat d2/real.csv)" = "$(printf 'a,b\n1,x\n2,y')" ]
    [ -L d1/link.csv ]
    [ "$(ls -A d1)" = link.csv ]
    [ "$(ls -A d2)" = real.csv ]
}

@test "a dangling symlink gets its target created" {
    mkdir sub
    ln -s sub/new.csv out.csv
    run_tally in.csv -o out.csv
    assert_ok
    [ -L out.csv ]
    [ "$(cat sub/new.csv)" = "$(printf 'a,b\n1,x\n2,y')" ]
}

@test "a data error leaves a symlink's target byte-identical" {
    printf 'old\n' > real.csv
    ln -s real.csv out.csv
    run_tally bad.csv -o out.csv
    assert_err 1 "tally: bad.csv:30002: expected 2 fields, found 3 (CSV, delimiter ','; --ragged skip drops such rows)"
    [ "$(cat real.csv)" = old ]
    [ -L out.csv ]
    assert_only_files in.csv bad.csv real.csv out.csv
}

@test "a symlink loop is an error" {
    ln -s loop.csv loop.csv
    run_tally in.csv -o loop.csv
    assert_err 1 'tally: cannot write "loop.csv": Too many levels of symbolic links'
}

@test "a symlink to a folder is an error" {
    mkdir sub
    ln -s sub out
    run_tally in.csv -o out
    assert_err 1 'tally: cannot write "out": Is a directory'
}

@test "-o a FIFO that is also an input is refused (exit 2)" {
    mkfifo pipe
    ln -s pipe link
    run_tally pipe -o pipe
    assert_err 2 'tally: -o "pipe" is also an input; only a regular file can be both (it is replaced atomically)'
    run_tally in.csv --join link --on a -o pipe
    assert_err 2 'tally: -o "pipe" is also an input; only a regular file can be both (it is replaced atomically)'
    [ -p pipe ]
}

@test "-o the input file: whole-new on success, whole-old on error" {
    { echo 'a,b'; seq 1 30000 | sed 's/$/,y/'; } > f.csv
    run_tally f.csv --filter 'a % 1000 = 0' -o f.csv
    assert_ok
    [ "$(wc -l < f.csv)" -eq 31 ]
    [ "$(tail -1 f.csv)" = 30000,y ]
    cp bad.csv before.csv
    run_tally bad.csv --filter 'a > 5' -o bad.csv
    assert_err 1 "tally: bad.csv:30002: expected 2 fields, found 3 (CSV, delimiter ','; --ragged skip drops such rows)"
    cmp before.csv bad.csv
    assert_only_files in.csv bad.csv before.csv f.csv
}

@test "-o the input through a symlink replaces the file the link names" {
    printf 'a\n3\n1\n2\n' > real.csv
    ln -s real.csv link.csv
    run_tally link.csv --sort a -o link.csv
    assert_ok
    [ -L link.csv ]
    [ "$(cat real.csv)" = "$(printf 'a\n1\n2\n3')" ]
}

@test "an input mapped by another run while -o replaces it keeps its old bytes" {
    seq 1 100000 | sed '1i a' > f.csv
    mkfifo slow
    # run A maps f.csv, then waits for its second input, a FIFO
    "$TALLY" f.csv slow --from csv --agg 'n = count(), s = sum(a)' > a.out 2>&1 3>&- &
    pid=$!
    exec 4> slow
    # run B replaces f.csv meanwhile
    run_tally f.csv --filter 'a <= 10' -o f.csv
    assert_ok
    printf 'a\n1\n' >&4
    exec 4>&-
    wait "$pid"
    [ "$(cat a.out)" = "$(printf 'n,s\n100001,5000050001')" ]
    [ "$(cat f.csv)" = "$(seq 1 10 | sed '1i a')" ]
}
