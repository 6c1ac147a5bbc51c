#!/usr/bin/env bats
# Inputs that change or multiply underneath tally (man page, "Inputs that
# change during a run"): a mapped file truncated while it is read, globs of
# thousands of files under a small descriptor limit (files of other headers
# and formats among them, files that change between planning and scan), the
# same pipe or standard input named twice.
#
# Truncation is made deterministic by the test-only switch
# TALLY_TEST_SHRINK=MORSEL:BYTES: the reader truncates its own file to BYTES
# when it starts decoding morsel MORSEL, as another process would (a larger
# BYTES makes the file grow instead).  TALLY_BATCH_ROWS=1000 gives the
# 20,000-row inputs twenty-odd morsels; TALLY_NO_COPY=1 makes the decoders
# read the mapping itself instead of pread copies, so the truncation meets
# them as SIGBUS (handled) rather than as a short read.

load helpers

# Under ASan, tally's SIGBUS handler replaces the sanitizer's only while
# allow_user_segv_handler is on (clang's default; with it off ASan reports
# "BUS on unknown address" and exits 1): the tests make sure it is.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allow_user_segv_handler=1"

make_inputs() {
    awk 'BEGIN { print "id,name,v"; for (i = 1; i <= 20000; i++) print i ",n" i "," i * 3 }' > s.csv
    awk 'BEGIN { for (i = 1; i <= 20000; i++) printf "{\"id\":%d,\"name\":\"n%d\",\"v\":%d}\n", i, i, i * 3 }' > s.ndjson
    cp s.csv keep.csv
    cp s.ndjson keep.ndjson
}

@test "a file truncated while read: exact error, exit 1, no output (csv, ndjson; threads 1, 2; -o, stdout; copy and mapping)" {
    make_inputs
    local csv_size ndjson_size
    csv_size=$(stat -c %s s.csv)
    ndjson_size=$(stat -c %s s.ndjson)
    "$TALLY" keep.csv --select "id, upper(name) as u" > full.csv
    "$TALLY" keep.ndjson --select "id, upper(name) as u" > full.ndjson
    for fmt in csv ndjson; do
        for th in 1 2; do
            for nocopy in "" 1; do
                for out in "-o out.$fmt" ""; do
                    cp keep.$fmt s.$fmt
                    run --separate-stderr env TALLY_TEST_SHRINK=3:100 TALLY_BATCH_ROWS=1000 \
                        ${nocopy:+TALLY_NO_COPY=1} "$TALLY" s.$fmt --threads $th \
                        --select "id, upper(name) as u" $out
                    local size=$csv_size
                    [ $fmt = csv ] || size=$ndjson_size
                    echo "case: $fmt threads=$th nocopy=$nocopy out=$out"
                    if [ -z "$out" ]; then
                        # standard output streams (man tally, OUTPUT): the
                        # rows before the error stay written, none after
                        [ "$status" -eq 1 ] || { show; false; }
                        [ "$stderr" = "tally: s.$fmt: changed size while being read (was $size bytes, now 100)" ] || { show; false; }
                        [[ "$(cat full.$fmt)" == "$output"* ]] || { show; false; }
                    else
                        assert_err 1 "tally: s.$fmt: changed size while being read (was $size bytes, now 100)"
                    fi
                    assert_only_files keep.csv keep.ndjson s.csv s.ndjson full.csv full.ndjson
                done
            done
        done
    done
}

@test "a file truncated while read: group-by, sort and a filter (late columns) fail the same way" {
    make_inputs
    for th in 1 2; do
        for args in "--group-by name --agg n=count()" "--sort name" "--filter v>30000 --select name"; do
            cp keep.csv s.csv
            run --separate-stderr env TALLY_TEST_SHRINK=2:5000 TALLY_BATCH_ROWS=1000 \
                "$TALLY" s.csv --threads $th $args -o out.csv
            echo "case: threads=$th $args"
            assert_err 1 "tally: s.csv: changed size while being read (was 354096 bytes, now 5000)"
            assert_only_files keep.csv keep.ndjson s.csv s.ndjson
        done
    done
}

@test "a file truncated in its first morsel, with --head" {
    make_inputs
    TALLY_TEST_SHRINK=0:10 run --separate-stderr "$TALLY" s.ndjson --head 3
    assert_err 1 "tally: s.ndjson: changed size while being read (was 754086 bytes, now 10)"
}

@test "a file that grows while read: the bytes it had at open, nothing appended" {
    make_inputs
    for fmt in csv ndjson; do
        for th in 1 2; do
            cp keep.$fmt s.$fmt
            TALLY_BATCH_ROWS=1000 "$TALLY" keep.$fmt --threads $th --agg 'n = count(), s = sum(v)' > want.out
            # grows by ~10 MB of NUL bytes when morsel 3 starts
            run --separate-stderr env TALLY_TEST_SHRINK=3:10000000 TALLY_BATCH_ROWS=1000 \
                "$TALLY" s.$fmt --threads $th --agg 'n = count(), s = sum(v)'
            assert_ok
            assert_out "$(cat want.out)"
            assert_out <<'EOF'
n,s
20000,600030000
EOF
            [ "$(stat -c %s s.$fmt)" = 10000000 ]
        done
    done
}

@test "a glob of 5,000 files under ulimit -n 256 (CSV threads 1 and 2, NDJSON, a sort)" {
    mkdir g
    awk 'BEGIN { for (i = 1; i <= 5000; i++) { f = "g/f" i ".csv"; print "a,b" > f; print i ",x" > f; close(f);
                 f = "g/f" i ".ndjson"; print "{\"a\":" i "}" > f; close(f) } }'
    for th in 1 2; do
        run --separate-stderr bash -c 'ulimit -n 256 && "$1" "g/*.csv" --threads $2 --agg "n = count(), s = sum(a)"' _ "$TALLY" $th
        assert_ok
        assert_out <<'EOF'
n,s
5000,12502500
EOF
    done
    run --separate-stderr bash -c 'ulimit -n 256 && "$1" "g/*.ndjson" --threads 2 --agg "n = count(), s = sum(a)"' _ "$TALLY"
    assert_ok
    assert_out <<'EOF'
n,s
5000,12502500
EOF
    # a sort holds string views into every file until its end
    run --separate-stderr bash -c 'ulimit -n 256 && "$1" "g/*.csv" --with-filename --sort -a --head 2' _ "$TALLY"
    assert_ok
    assert_out <<'EOF'
filename,a,b
g/f5000.csv,5000,x
g/f4999.csv,4999,x
EOF
}

@test "different headers late in a glob of 3,000 files: unified by name, types widened, under ulimit -n 64" {
    # the last two files bring a float a, a new column c, a string b and a
    # new column d after 2,998 files; planning closed them, the scan opens
    # each again when it reaches it
    mkdir g
    awk 'BEGIN { for (i = 1; i <= 2998; i++) { f = sprintf("g/f%04d.csv", i); print "a,b" > f; print i "," i > f; close(f) }
                 print "c,a" > "g/f2999.csv"; print "x,2.5" > "g/f2999.csv"; close("g/f2999.csv")
                 print "b,d" > "g/f3000.csv"; print "z,true" > "g/f3000.csv"; close("g/f3000.csv") }'
    for th in 1 2; do
        run --separate-stderr bash -c 'ulimit -n 64 && "$1" "g/*.csv" --threads $2 --agg "n = count(), sa = sum(a), nb = count(b), nc = count(c), nd = count(d)"' _ "$TALLY" $th
        assert_ok
        assert_out <<'EOF'
n,sa,nb,nc,nd
3000,4495503.5,2999,1,1
EOF
        run --separate-stderr bash -c 'ulimit -n 64 && "$1" "g/*.csv" --threads $2 --with-filename --filter "a >= 2997 or c is not null or d is not null"' _ "$TALLY" $th
        assert_ok
        assert_out <<'EOF'
filename,a,b,c,d
g/f2997.csv,2997.0,2997,,
g/f2998.csv,2998.0,2998,,
g/f2999.csv,2.5,,x,
g/f3000.csv,,z,,true
EOF
    done
    run --separate-stderr "$TALLY" schema 'g/*.csv'
    assert_ok
    assert_out <<'EOF'
column,type
a,float64
b,string
c,string
d,bool
EOF
}

@test "a glob of CSV, NDJSON and Parquet files: unified by name, id widened to float64 across formats, the scan opening the later ones" {
    mkdir m
    for i in 01 02 03 04 05 06 07 08 09 10; do printf 'id,region\n%d,east\n%d,west\n' $((10#$i)) $((10#$i * 100)) > m/a$i.csv; done
    printf '{"id": 1.5, "extra": "e"}\n{"id": 2, "region": "north"}\n' > m/b.ndjson
    cp "$BATS_TEST_DIRNAME/data/parquet/codec_zstd.parquet" m/c.parquet
    for th in 1 2; do
        run --separate-stderr "$TALLY" 'm/*' --threads $th --agg 'n = count(), s = sum(id), r = count(region), e = count(extra), f = count(flag)'
        assert_ok
        assert_out <<'EOF'
n,s,r,e,f
2122,2209508.5,2121,1,2100
EOF
        run --separate-stderr "$TALLY" 'm/*' --threads $th --with-filename --filter 'id < 2 or extra is not null' --select 'filename, id, region, extra, n' --head 4
        assert_ok
        assert_out <<'EOF'
filename,id,region,extra,n
m/a01.csv,1.0,east,,
m/b.ndjson,1.5,,e,
m/c.parquet,0.0,north,,-500
m/c.parquet,1.0,south,,-463
EOF
    done
    run --separate-stderr "$TALLY" schema 'm/*'
    assert_ok
    assert_out <<'EOF'
column,type
id,float64
region,string
extra,string
n,int64
x,float64
item,string
flag,bool
EOF
}

@test "an input whose header changes between planning and scanning: exact error, exit 1, no output" {
    # x.csv is read twice: first (kept open from planning, a private copy
    # of its bytes), and as the tenth input, which the scan opens anew;
    # the first one's reader empties the file as it starts its morsel 1
    for i in 1 2 3 4 5 6 7 8; do printf 'a,b\n%d,0\n' $i > y$i.csv; done
    for th in 1 2; do
        printf 'a,b\n1,2\n3,4\n5,6\n' > x.csv
        TALLY_TEST_SHRINK=1:0 TALLY_BATCH_ROWS=1 run --separate-stderr "$TALLY" x.csv y?.csv x.csv \
            --threads $th --agg 'n = count()' -o out.csv
        assert_err 1 'tally: x.csv: changed while being read (its columns are not those it had when the run began)'
        assert_only_files x.csv y1.csv y2.csv y3.csv y4.csv y5.csv y6.csv y7.csv y8.csv
    done
}

@test "the same pipe named twice is a usage error, not a hang" {
    mkfifo p
    run --separate-stderr timeout 10 "$TALLY" p p
    assert_err 2 'tally: input "p" is given twice; a pipe or standard input can be read only once'
    run --separate-stderr timeout 10 "$TALLY" p --join p --on a
    assert_err 2 'tally: input "p" is given twice; a pipe or standard input can be read only once'
    ln -s p q
    run --separate-stderr timeout 10 "$TALLY" p q
    assert_err 2 'tally: inputs "p" and "q" are the same pipe; a pipe can be read only once'
}

@test "standard input named twice is a usage error" {
    run_tally_in $'a\n1\n' - -
    assert_err 2 'tally: input "-" is given twice; a pipe or standard input can be read only once'
    run_tally_in $'a\n1\n' /dev/stdin -
    assert_err 2 'tally: inputs "/dev/stdin" and "-" are the same pipe; a pipe can be read only once'
    # a join's right side keeps its own message
    run_tally_in $'a\n1\n' - --join - --on a
    assert_err 2 'tally: standard input (-) can feed only one side of a join'
}

@test "a regular file named twice is read twice; two different pipes are fine" {
    printf 'a\n1\n' > a.csv
    run_tally a.csv a.csv
    assert_ok
    assert_out $'a\n1\n1'
    mkfifo p q
    (printf 'a\n1\n' > p &)
    (printf 'a\n2\n' > q &)
    run --separate-stderr timeout 10 "$TALLY" p q
    assert_ok
    assert_out $'a\n1\n2'
}
