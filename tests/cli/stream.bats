#!/usr/bin/env bats
# run-cli: weight=12
# Standard output that streams (lib/run/run.c "streaming", formats/sink.c
# tl_sink_stream, formats/type_pass.c): a pipeline of filter, select,
# with, drop, rename and head steps writing CSV, TSV, NDJSON or JSON to
# standard output writes its rows as they come once every column's type
# is settled (fixed by --schema or --no-infer, or found by the type pass
# over a regular file), so `| head -1` ends the run at once; an error
# after rows went out exits 1 with them written; -o FILE stays all or
# nothing; whatever streams, the bytes are those of the buffered run.

load helpers

# big.csv in the file's temporary folder, about 50 MB: id (int), v (int),
# s (digits, except "x" in the very last record), so that a run that reads
# to the end fails there casting s, and one that stops early does not.
setup_file() {
    python3 - "$BATS_FILE_TMPDIR/big.csv" <<'EOF'
import sys
n = 2_500_000
with open(sys.argv[1], "w") as f:
    f.write("id,v,s\n")
    f.write("".join("%d,%d,%d\n" % (i, i % 1000, i % 77) for i in range(n - 1)))
    f.write("%d,1,x\n" % (n - 1))
EOF
}

# widen.csv: v is int64 in the first batch (TALLY_BATCH_ROWS=4) and 2.5 in
# record 9, so the buffered run restarts once; w holds 2^60+1's digits
# (an exact int64, no exact float64) early and 0.5 late: a string.
write_widen() {
    printf 'k,v,w\n' > widen.csv
    for i in 1 2 3 4 5 6 7 8; do printf 'a%d,%d,%d\n' "$i" "$i" "$i" >> widen.csv; done
    printf 'a9,2.5,1152921504606846977\n' >> widen.csv
    for i in 10 11 12 13; do printf 'a%d,%d,%d\n' "$i" "$i" "$i" >> widen.csv; done
    printf 'a14,14,0.5\n' >> widen.csv
}

@test "stream: | head -1 ends the run at once (--no-infer: no type pass)" {
    run bash -c '"$1" "$2" --no-infer --with "t = cast(s as int)" | head -1; echo "${PIPESTATUS[0]}"' \
        _ "$TALLY" "$BATS_FILE_TMPDIR/big.csv"
    [ "$output" = $'id,v,s,t\n0' ] || { show; false; }
}

@test "stream: | head -1 after the type pass ends the run before the failing record" {
    run --separate-stderr bash -c '"$1" "$2" --filter "v > 3" --with "t = cast(s as int)" | head -2; echo "${PIPESTATUS[0]}"' \
        _ "$TALLY" "$BATS_FILE_TMPDIR/big.csv"
    [ "$output" = $'id,v,s,t\n4,4,4,4\n0' ] || { show; false; }
    [ -z "$stderr" ] || { show; false; }
}

@test "stream: the same run read to its end fails on the last record; -o leaves no file" {
    run_tally "$BATS_FILE_TMPDIR/big.csv" --no-infer --with "t = cast(s as int)" -o out.csv
    [ "$status" -eq 1 ] || { show; false; }
    [ "${stderr%%$'\n'*}" = "tally: $BATS_FILE_TMPDIR/big.csv:2500001:3: cannot cast \"x\" to int64 (column \"s\")" ] || { show; false; }
    [ ! -e out.csv ] || { show; false; }
}

@test "stream: --head N stops reading once N rows are out" {
    run_tally "$BATS_FILE_TMPDIR/big.csv" --with "t = cast(s as int)" --head 2
    assert_ok
    assert_out $'id,v,s,t\n0,0,0,0\n1,1,1,1'
}

@test "stream: an error after rows went out exits 1 with the rows before it written" {
    printf 'a,s\n1,1\n2,2\n3,x\n' > e.csv
    TALLY_BATCH_ROWS=1 run_tally e.csv --schema s:string --with 't = cast(s as int)' --threads 1
    [ "$status" -eq 1 ] || { show; false; }
    assert_out $'a,s,t\n1,1,1\n2,2,2'
    [ "$stderr" = $'tally: e.csv:4:2: cannot cast "x" to int64 (column "s")\n  --with: t = cast(s as int)\n              ^^^^^^^^^^^^^^' ] || { show; false; }
    # -o FILE: all or nothing
    TALLY_BATCH_ROWS=1 run_tally e.csv --schema s:string --with 't = cast(s as int)' \
        --threads 1 -o out.csv
    [ "$status" -eq 1 ] || { show; false; }
    [ ! -e out.csv ] || { show; false; }
    # a blocking step waits for the end: nothing went out
    TALLY_BATCH_ROWS=1 run_tally e.csv --schema s:string --with 't = cast(s as int)' \
        --sort a --threads 1
    [ "$status" -eq 1 ] || { show; false; }
    assert_out ''
}

@test "stream: a file that restarts when buffered streams after the type pass, same bytes" {
    write_widen
    want=$'k,v,w\na1,1.0,1\na2,2.0,2\na3,3.0,3\na4,4.0,4\na5,5.0,5\na6,6.0,6\na7,7.0,7\na8,8.0,8\na9,2.5,1152921504606846977\na10,10.0,10\na11,11.0,11\na12,12.0,12\na13,13.0,13\na14,14.0,0.5'
    TALLY_BATCH_ROWS=4 run_tally widen.csv -o out.csv --stats
    [ "$status" -eq 0 ] || { show; false; }
    [[ "$stderr" == *"restarts: 3"* ]] || { show; false; }
    [ "$(cat out.csv)" = "$want" ] || { show; false; }
    TALLY_BATCH_ROWS=4 run_tally widen.csv --stats
    [ "$status" -eq 0 ] || { show; false; }
    [ "$output" = "$want" ] || { show; false; }
    [[ "$stderr" == *"restarts: 0"* ]] || { show; false; }
    TALLY_BATCH_ROWS=4 run_tally schema widen.csv
    assert_ok
    assert_out $'column,type\nk,string\nv,float64\nw,string'
}

@test "stream: the planner's note on a column the type pass made a string is the buffered run's" {
    write_widen
    TALLY_BATCH_ROWS=4 run_tally widen.csv --filter 'w > 1' -o out.csv
    [ "$status" -eq 2 ] || [ "$status" -eq 1 ] || { show; false; }
    want_err=$stderr
    want_status=$status
    TALLY_BATCH_ROWS=4 run_tally widen.csv --filter 'w > 1'
    [ "$status" -eq "$want_status" ] || { show; false; }
    [ "$stderr" = "$want_err" ] || { show; false; }
}

@test "stream: standard input streams with fixed types, and waits for its end without" {
    run bash -c '"$1" - --no-infer --with "t = cast(s as int)" < "$2" | head -1; echo "${PIPESTATUS[0]}"' \
        _ "$TALLY" "$BATS_FILE_TMPDIR/big.csv"
    [ "$output" = $'id,v,s,t\n0' ] || { show; false; }
    # inferred types: the output waits for the end, which fails
    run --separate-stderr bash -c '"$1" - --with "t = cast(s as int)" < "$2" | head -1; echo "${PIPESTATUS[0]}"' \
        _ "$TALLY" "$BATS_FILE_TMPDIR/big.csv"
    [ "$output" = '1' ] || { show; false; }
    [ "$stderr" = $'tally: <stdin>:2500001:3: cannot cast "x" to int64 (column "s")\n  --with: t = cast(s as int)\n              ^^^^^^^^^^^^^^' ] || { show; false; }
}

@test "stream: every thread count and batch size writes the buffered run's bytes" {
    python3 - <<'EOF'
import random
random.seed(3)
with open("m.csv", "w") as f:
    f.write("k,v,w,d\n")
    for i in range(6000):
        v = "%d" % random.randrange(1000) if i != 4321 else "7.25"
        d = "2024-01-%02d" % (i % 28 + 1) if i != 5000 else "2024-02-01 10:00:00"
        f.write("k%d,%s,%d,%s\n" % (i % 13, v, i, d))
EOF
    "$TALLY" m.csv --filter 'v > 500' --with 'x = v * 2' --drop w -o want.csv
    for to in csv ndjson json tsv; do
        "$TALLY" m.csv --filter 'v > 500' --with 'x = v * 2' --drop w --to $to -o "want.$to"
        {
            for t in $(matrix_threads 1 2 7); do
                echo "--threads $t"
                echo "TALLY_BATCH_ROWS=7 --threads $t"
            done
        } | tally_matrix --want "want.$to" m.csv --filter 'v > 500' --with 'x = v * 2' \
            --drop w --to $to || return 1
    done
}

# fifo_part N FIRST: rows FIRST .. FIRST+N-1 of id,v (v = id % 10), with the
# header when FIRST is 0.
fifo_part() {
    python3 -c "
import sys
n, first = int(sys.argv[1]), int(sys.argv[2])
sys.stdout.write(('id,v\n' if first == 0 else '') +
                 ''.join('%d,%d\n' % (i, i % 10) for i in range(first, first + n)))" "$1" "$2"
}

@test "stream: a FIFO's rows come out while its writer still writes (fixed types)" {
    mkfifo in.fifo out.fifo
    "$TALLY" in.fifo --no-infer --filter "v != '7'" > out.fifo 2> err.txt &
    local pid=$! l1= l2=
    exec 8< out.fifo
    exec 7> in.fifo
    # the first 4 MiB settle the dialect and the header (man tally, OUTPUT)
    fifo_part 600000 0 >&7
    read -t 30 -u 8 l1 && read -t 30 -u 8 l2 || true
    fifo_part 100000 600000 >&7
    exec 7>&-
    rest=$(wc -l <&8)
    exec 8<&-
    wait "$pid"
    [ "$l1,$l2" = "id,v,0,0" ] || { echo "first lines: $l1 / $l2"; false; }
    [ "$rest" = 629999 ] || { echo "rest: $rest"; false; }
    [ ! -s err.txt ] || { cat err.txt; false; }
}
