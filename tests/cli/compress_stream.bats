#!/usr/bin/env bats
# run-cli: matrix
# Streamed zstd inputs (formats/compress/compress.c, "Streaming"): a thread
# decompresses while the readers parse.  TALLY_STREAM_STEP=N streams any
# zstd input in steps of N bytes, so these small files cross many step and
# morsel boundaries; every result must equal the uncompressed input's (and
# TALLY_NO_STREAM=1's, the whole-buffer path), for every --threads, and a
# stream that fails after some morsels were handed out must give the error
# the whole-buffer path gives (its own, before any data error).

load helpers

setup() {
    enter_workdir
    # one awk: CSV and NDJSON of 6000 rows; v turns float after the first
    # batch (a restart), s holds quotes, a new key appears late in NDJSON
    awk 'BEGIN {
        print "k,v,s" > "t.csv"
        for (i = 1; i <= 6000; i++) {
            v = (i == 5000) ? "2.5" : i
            printf "k%d,%s,\"x,%d \"\"q\"\"\"\n", i % 7, v, i > "t.csv"
            extra = (i == 5500) ? ",\"late\":true" : ""
            printf "{\"k\":\"k%d\",\"v\":%s,\"s\":\"x,%d\"%s}\n", i % 7, v, i, extra > "t.ndjson"
        }
    }'
    zstd -q -c t.csv > t.csv.zst
    zstd -q -c t.ndjson > t.ndjson.zst
}

# same_for_all FILE ARGS...: the streamed FILE (TALLY_STREAM_STEP=700,
# TALLY_BATCH_ROWS=7) under --threads 1, 2 and 7 prints the plain file's
# output with TALLY_BATCH_ROWS=7, exits 0, nothing on standard error
# (tally_matrix --want, helpers.bash); TALLY_STREAM_STEP=4096 --threads 2
# prints the plain file's output at the default batch size.
same_for_all() {
    local f=$1 plain=${1%.zst} th
    shift
    "$TALLY" "$plain" "$@" > want.out
    TALLY_BATCH_ROWS=7 "$TALLY" "$plain" "$@" > want7.out
    for th in 1 2 7; do
        echo "TALLY_STREAM_STEP=700 TALLY_BATCH_ROWS=7 --threads $th"
    done | tally_matrix --want want7.out "$f" "$@"
    TALLY_STREAM_STEP=4096 "$TALLY" "$f" --threads 2 "$@" > got.out
    cmp want.out got.out
}

@test "streamed CSV and NDJSON give the plain results for every --threads" {
    for f in t.csv.zst t.ndjson.zst; do
        same_for_all $f
        same_for_all $f --group-by k --agg 'sum(v),count(),max(s)'
        same_for_all $f --filter 'v > 100' --select s,v
        same_for_all $f --head 3
        same_for_all $f --sort v --head 5
    done
}

@test "streamed standard input is sniffed and read as the file" {
    for f in t.csv.zst t.ndjson.zst; do
        "$TALLY" "${f%.zst}" --group-by k --agg 'sum(v)' > want.out
        TALLY_STREAM_STEP=500 "$TALLY" - --group-by k --agg 'sum(v)' < $f > got.out
        cmp want.out got.out
    done
}

# A frame whose header announces its size, with a corrupt byte late in
# its data: the streamed and the whole-buffer path fail the same way.
@test "a stream failing after morsels were handed out: its error, as before" {
    printf 'k,v\nbad\n' > e.csv # a data error at line 2 of the stream
    printf '{"k":1}\nbad\n' > e.ndjson
    awk 'BEGIN { for (i = 0; i < 40000; i++) {
        printf "k%d,%d\n", i % 3, i >> "e.csv"
        printf "{\"k\":%d}\n", i >> "e.ndjson" } }'
    for f in e.csv e.ndjson; do
        zstd -q -c $f > $f.zst
        local n
        n=$(stat -c %s $f.zst)
        # corrupt bytes near the end of the compressed data
        cp $f.zst bad.$f.zst
        printf '\xff\xff\xff\xff' | dd of=bad.$f.zst bs=1 seek=$((n - 40)) conv=notrunc status=none
        # per ARGS: the whole-buffer path (TALLY_NO_STREAM=1, the first
        # variant) fails with the zstd error and no out.csv; streamed in
        # steps of 1000 and 100000 bytes, the same status, stdout, stderr
        # and no out.csv (tally_matrix --out, helpers.bash)
        for args in "--agg count()" "--head 2" "--threads 1 --agg count()"; do
            {
                echo "TALLY_NO_STREAM=1"
                for step in 1000 100000; do
                    echo "TALLY_STREAM_STEP=$step"
                done
            } | tally_matrix --out out.csv bad.$f.zst $args -o out.csv
            matrix_result
            [ "$status" = 1 ]
            [[ "$stderr" == *"\"bad.$f.zst\": "*'zstd'* ]]
            [ ! -e mx/want.file ]
        done
    done
    # uncorrupted: the data errors
    TALLY_STREAM_STEP=1000 run_tally e.csv.zst --agg 'count()'
    assert_err 1 "tally: e.csv.zst:2: expected 2 fields, found 1 (CSV, delimiter ','; --ragged pad or skip reads such rows)"
    TALLY_NO_STREAM=1 run_tally e.ndjson.zst --agg 'count()'
    local want_err=$stderr
    [[ "$want_err" == *'e.ndjson.zst:2:'* ]]
    TALLY_STREAM_STEP=1000 run_tally e.ndjson.zst --agg 'count()'
    [ "$status" = 1 ]
    [ "$stderr" = "$want_err" ]
}

@test "a restart re-reads the streamed input from the cache" {
    for f in t.csv.zst t.ndjson.zst; do
        TALLY_BATCH_ROWS=1000 TALLY_STREAM_STEP=3000 run_tally $f --stats --agg 'sum(v)'
        [ "$status" = 0 ]
        assert_out $'sum_v\n17998002.5'
        [[ "$stderr" == *"restarts: "[12]* ]]
    done
}

@test "streamed edge cases: blank lines of a one-column file, CRLF in quotes, lone CR, multi-frame" {
    awk 'BEGIN {
        print "a" > "one.csv"
        for (i = 0; i < 3000; i++) print (i % 5 ? i : "") > "one.csv"
        for (i = 0; i < 50; i++) print "" > "one.csv"
        printf "k,v,t\r\n" > "crlf.csv"
        for (i = 0; i < 3000; i++)
            printf "k%d,%d,\"l1\r\nl2 %d, \"\"q\"\"\"\r\n", i % 5, i, i > "crlf.csv"
        printf "k,v\r" > "cr.csv"
        for (i = 0; i < 3000; i++) printf "x%d,%d\r", i % 3, i > "cr.csv"
        for (i = 0; i < 3000; i++)
            printf "{\"a\":%d,\"b\":\"s%d\"}%s", i, i,
                   (i % 3 == 0 ? "\r\n" : (i % 3 == 1 ? "\n" : "\r")) > "mix.ndjson"
        print "a,b" > "multi.csv"
        for (i = 0; i < 40000; i++) print i "," 2 * i > (i < 20000 ? "multi.csv" : "part2")
    }'
    zstd -q -c multi.csv > multi.csv.zst
    zstd -q -c part2 >> multi.csv.zst # a second frame
    cat part2 >> multi.csv
    for f in one.csv crlf.csv cr.csv mix.ndjson; do zstd -q -c $f > $f.zst; done
    for f in one.csv crlf.csv cr.csv mix.ndjson multi.csv; do
        for th in 1 2; do
            TALLY_BATCH_ROWS=7 "$TALLY" $f --threads $th > want.out
            TALLY_BATCH_ROWS=7 TALLY_STREAM_STEP=50 "$TALLY" $f.zst --threads $th > got.out
            cmp want.out got.out
        done
    done
    run_tally multi.csv.zst --agg 'count(),sum(b)'
    assert_out $'count,sum_b\n40000,1599960000'
}

# A 1 KiB zstd window: decoded pages of batches without views into the
# input are given back while the stream runs; restarts and a self-join
# (two readers of one stream) must still see every byte.
@test "decoded pages given back: results, restarts and two readers unchanged" {
    awk 'BEGIN { print "k,v,s"
        for (i = 1; i <= 60000; i++)
            printf "k%d,%s,long string value number %d\n", i % 7, (i == 50000 ? "2.5" : i), i }' > w.csv
    zstd -q --zstd=wlog=10 -c w.csv > w.csv.zst
    for args in "--agg sum(v),count()" "--group-by k --agg sum(v)" "--filter v>59990 --select s,v"; do
        for th in 1 2; do
            TALLY_BATCH_ROWS=1000 "$TALLY" w.csv --threads $th $args > want.out
            TALLY_BATCH_ROWS=1000 TALLY_STREAM_STEP=2000 "$TALLY" w.csv.zst --threads $th $args > got.out
            cmp want.out got.out
            TALLY_BATCH_ROWS=1000 TALLY_STREAM_STEP=2000 "$TALLY" - --threads $th $args < w.csv.zst > got.out
            cmp want.out got.out
        done
    done
    # both sides streamed; s is unique (60,000 matches: k would give 514 million)
    TALLY_BATCH_ROWS=1000 "$TALLY" w.csv --join w.csv --on s --agg 'count(),sum(v)' > want.out
    TALLY_BATCH_ROWS=1000 TALLY_STREAM_STEP=2000 "$TALLY" w.csv.zst --join w.csv.zst --on s \
        --agg 'count(),sum(v)' > got.out
    cmp want.out got.out
}

# Recycling (compress.c): whole 64-page chunks readers are done with move
# ahead of the decompressor's output, which it then writes into.  Default
# morsels (growing to 2 MiB) make most chunks whole; readers start after a
# 4 MiB schema sample, so 10 MB, and a 1 KiB window and small steps keep
# the decompressor running while readers give pages back (strace shows a
# few mremap calls per run in the release build).
@test "recycled pages of a streamed input: results unchanged for every --threads" {
    awk 'BEGIN { print "k,v,s"
        for (i = 1; i <= 300000; i++) printf "k%d,%d,some text for row %d\n", i % 13, i, i }' > r.csv
    zstd -q --zstd=wlog=10 -c r.csv > r.csv.zst
    args=(--group-by k --agg 'sum(v),count(),min(v)')
    "$TALLY" r.csv "${args[@]}" > want.out
    # streamed in 1 KiB steps under --threads 1, 2 and 7, and under
    # --threads 2 without recycling and without the prefill: exit 0, nothing
    # on standard error, the plain file's output (tally_matrix --want,
    # helpers.bash)
    {
        for th in 1 2 7; do
            echo "TALLY_STREAM_STEP=1024 --threads $th"
        done
        echo "TALLY_NO_RECYCLE=1 TALLY_STREAM_STEP=1024 --threads 2"
        echo "TALLY_NO_PREFILL=1 TALLY_STREAM_STEP=1024 --threads 2"
    } | tally_matrix --want want.out r.csv.zst "${args[@]}"
    "$TALLY" r.csv.zst "${args[@]}" -o got.csv
    "$TALLY" r.csv "${args[@]}" -o want.csv
    cmp want.csv got.csv
}
