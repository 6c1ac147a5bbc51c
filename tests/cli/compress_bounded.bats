#!/usr/bin/env bats
# run-cli: weight=25
# Compressed inputs in bounded memory (formats/compress/stream.c): gzip, zstd whose
# frames announce their size and zstd written by a pipe (no size) all
# stream, giving the plain file's results for every --threads; a record
# longer than --max-record-size is an error naming the file and line, not
# memory without end; a decompression bomb ends quickly in bounded memory.

load helpers

setup() {
    enter_workdir
    # 20,000 rows; v turns float late (a restart), s is long (views into
    # the input) and quoted; NDJSON with a key that appears late
    awk 'BEGIN {
        print "k,v,s" > "t.csv"
        for (i = 1; i <= 20000; i++) {
            v = (i == 15000) ? "2.5" : i
            printf "k%d,%s,\"a long string, number %d\"\n", i % 7, v, i > "t.csv"
            extra = (i == 18000) ? ",\"late\":true" : ""
            printf "{\"k\":\"k%d\",\"v\":%s%s}\n", i % 7, v, extra > "t.ndjson"
        }
    }'
    for f in t.csv t.ndjson; do
        zstd -q -f $f -o $f.zst         # announces its size
        zstd -q -c < $f > p.$f.zst      # written by a pipe: no size
        gzip -c $f > $f.gz
    done
}

# The release build only: ASan's shadow memory and quarantine make peak
# RSS meaningless (helpers.bash: TALLY_ASAN marks that build).
is_asan() {
    [ -n "${TALLY_ASAN:-}" ] || [[ "$TALLY" == */asan/* ]]
}

# same_streamed PLAIN ARGS...: each compressed form of PLAIN, streamed in
# steps of 700 compressed bytes with 7-row batches under --threads 1, 2 and
# 7, and whole at the default step, prints the plain file's output (exit 0,
# nothing on standard error).
same_streamed() {
    local plain=$1 f th
    shift
    TALLY_BATCH_ROWS=7 "$TALLY" "$plain" "$@" > want7.out
    "$TALLY" "$plain" "$@" > want.out
    for f in $plain.zst p.$plain.zst $plain.gz; do
        for th in $(matrix_threads 1 2 7); do
            echo "TALLY_STREAM_STEP=700 TALLY_BATCH_ROWS=7 --threads $th"
        done | tally_matrix --want want7.out "$f" "$@"
        "$TALLY" "$f" --threads 2 "$@" > got.out
        cmp want.out got.out
    done
}

@test "gzip, zstd and unknown-size zstd stream to the plain results for every --threads" {
    for f in t.csv t.ndjson; do
        same_streamed $f --agg 'n = count(), s = sum(v)'
        same_streamed $f --filter 'v > 19990' --select k,v
        same_streamed $f --group-by k --agg 'n = count(), m = max(v)'
        same_streamed $f --head 3
    done
    same_streamed t.csv --filter 'v % 5000 = 0' --select s
}

@test "standard input compressed streams: gzip and unknown-size zstd" {
    "$TALLY" t.csv --group-by k --agg 'sum(v)' > want.out
    for f in t.csv.gz p.t.csv.zst; do
        TALLY_STREAM_STEP=500 "$TALLY" - --group-by k --agg 'sum(v)' < $f > got.out
        cmp want.out got.out
        "$TALLY" - --group-by k --agg 'sum(v)' < $f > got.out
        cmp want.out got.out
    done
}

@test "a record longer than --max-record-size: FILE:LINE, exit 1, no output" {
    # line 3 is 3 MB long, with a line end after it, then more records
    { printf 'a,b\n1,2\n'; head -c 3000000 /dev/zero | tr '\0' 'x'; printf ',9\n3,4\n'; } > long.csv
    { printf '{"a":1}\n{"a":"'; head -c 3000000 /dev/zero | tr '\0' 'x'; printf '"}\n{"a":2}\n'; } > long.ndjson
    for f in long.csv long.ndjson; do
        gzip -c $f > $f.gz
        zstd -q -f $f -o $f.zst
        zstd -q -c < $f > p.$f.zst
    done
    for f in long.csv long.ndjson; do
        local line=3
        [ $f = long.ndjson ] && line=2
        for z in $f.gz $f.zst p.$f.zst; do
            for step in "" 4096; do
                TALLY_STREAM_STEP=$step run_tally $z --max-record-size 1M --agg 'n = count()' -o out.csv
                assert_err 1 "tally: $z:$line: record longer than 1048576 bytes (--max-record-size)"
                [ ! -e out.csv ]
            done
            # under the bound: read as usual
            run_tally $z --max-record-size 4M --agg 'n = count()'
            assert_ok
            assert_out $'n\n3'
        done
        # a plain file is mapped: its records cost no memory, no bound
        run_tally $f --max-record-size 1M --agg 'n = count()'
        assert_ok
        assert_out $'n\n3'
    done
    # the last record, without a line end
    { printf 'a\n1\n'; head -c 3000000 /dev/zero | tr '\0' 'y'; } | gzip -c > end.csv.gz
    run_tally end.csv.gz --max-record-size 2M --agg 'n = count()'
    assert_err 1 "tally: end.csv.gz:3: record longer than 2097152 bytes (--max-record-size)"
    # standard input
    run --separate-stderr bash -c '"$1" - --max-record-size 1M --agg "n = count()" < p.long.csv.zst' _ "$TALLY"
    assert_err 1 "tally: <stdin>:3: record longer than 1048576 bytes (--max-record-size)"
}

@test "--quote and --escape of a streamed CSV: results as the plain file's; a long record still found" {
    # quote ' and escape \ are split record by record (no SIMD scan)
    awk 'BEGIN {
        print "k,s"
        for (i = 1; i <= 3000; i++) printf "%d,\047a\\\047b, %d\047\n", i % 5, i
    }' > q.csv
    gzip -c q.csv > q.csv.gz
    zstd -q -c < q.csv > p.q.csv.zst
    "$TALLY" q.csv --quote "'" --escape '\' --group-by k --agg 'n = count(), m = max(s)' > want.out
    for z in q.csv.gz p.q.csv.zst; do
        TALLY_STREAM_STEP=500 TALLY_BATCH_ROWS=7 run_tally $z --quote "'" --escape '\' \
            --group-by k --agg 'n = count(), m = max(s)'
        assert_ok
        assert_out "$(cat want.out)"
    done
    assert_out $'k,n,m\n1,600,"a\'b, 996"\n2,600,"a\'b, 997"\n3,600,"a\'b, 998"\n4,600,"a\'b, 999"\n0,600,"a\'b, 995"'
    # line 4 is one quoted field of 1.5 MB with delimiters and line ends in it
    { printf "a,b\n1,'x'\n2,'y'\n3,'"; head -c 1500000 /dev/zero | tr '\0' ','; printf "\n'\n4,'z'\n"; } |
        gzip -c > ql.csv.gz
    run_tally ql.csv.gz --quote "'" --max-record-size 1M --agg 'n = count()'
    assert_err 1 "tally: ql.csv.gz:4: record longer than 1048576 bytes (--max-record-size)"
    run_tally ql.csv.gz --quote "'" --max-record-size 2M --agg 'n = count()'
    assert_ok
    assert_out $'n\n4'
}

@test "a step names an NDJSON key first seen after the first batch, in a streamed input" {
    # t.ndjson's key late is on line 18000 only: the planner asks the reader
    # for the columns after its sample, which reads the stream to its end
    "$TALLY" t.ndjson --filter 'late' --select k,v,late > want.out
    [ "$(cat want.out)" = $'k,v,late\nk3,18000.0,true' ]
    same_streamed t.ndjson --filter 'late' --select k,v,late
    same_streamed t.ndjson --agg 'n = count(late), s = sum(v)'
}

@test "--max-record-size takes bytes or K, M, G, at least 1M; anything else is a usage error" {
    { printf 'a\n'; head -c 1500000 /dev/zero | tr '\0' 'x'; printf '\n'; } | gzip -c > w.csv.gz
    run_tally w.csv.gz --max-record-size 1M --agg 'n = count()'
    assert_err 1 "tally: w.csv.gz:2: record longer than 1048576 bytes (--max-record-size)"
    for size in 1500000 1465K 2M 2MiB 2MB 1g 1G; do
        TALLY_STREAM_STEP=100000 run_tally w.csv.gz --max-record-size $size --agg 'n = count()'
        assert_ok
        assert_out $'n\n1'
    done
    for size in 0 -1 x 4X 1.5M 4K 1048575 1023K 99999999999999999999 99999999999G ''; do
        run_tally w.csv.gz --max-record-size "$size" --agg 'n = count()'
        assert_err 2 "tally: --max-record-size: expected a size of 1M or more (bytes, or with K, M or G for KiB, MiB, GiB), got \"$size\""
    done
}

@test "a zero bomb ends quickly with the record error, in bounded memory" {
    # 260 MiB of zero bytes and no line end: a few KB compressed
    head -c 272629760 /dev/zero | zstd -q -c > bomb.zst
    head -c 272629760 /dev/zero | gzip -1 -c > bomb.gz
    head -c 272629760 /dev/zero > zeros && zstd -q zeros -o bomb.csv.zst && rm zeros
    for f in bomb.zst bomb.gz bomb.csv.zst; do
        run --separate-stderr /usr/bin/time -f '%M' "$TALLY" $f --max-record-size 4M --agg 'n = count()'
        [ "$status" = 1 ] || { show; false; }
        [ "${lines[*]:-}" = "" ] || { show; false; }
        local msg rss
        msg=$(printf '%s\n' "$stderr" | head -n 1)
        rss=$(printf '%s\n' "$stderr" | tail -n 1)
        [ "$msg" = "tally: $f:1: record longer than 4194304 bytes (--max-record-size)" ] || { show; false; }
        # 260 MiB decompressed would show; the bound, the lead and the
        # binary stay well under 96 MB
        is_asan || [ "$rss" -lt 98304 ] || { echo "peak RSS $rss KB"; false; }
        run_tally $f --from ndjson --max-record-size 4M
        assert_err 1 "tally: $f:1: record longer than 4194304 bytes (--max-record-size)"
    done
    # the default bound
    run_tally bomb.zst --agg 'n = count()'
    assert_err 1 "tally: bomb.zst:1: record longer than 268435456 bytes (--max-record-size)"
}

@test "a large count streams in bounded memory; --stats shows the decompressed bytes held" {
    # 64 MiB of "1\n" (about 100 KB compressed): decompressed whole it
    # would take 64 MB more
    yes 1 | head -c 67108864 > ones.csv
    zstd -q -19 ones.csv -o ones.csv.zst
    gzip -1 -c ones.csv > ones.csv.gz
    zstd -q -c < ones.csv > ones.p.zst
    for f in ones.csv.zst ones.csv.gz ones.p.zst; do
        run --separate-stderr /usr/bin/time -f '%M' "$TALLY" $f --no-header --agg 'n = count()' --stats
        [ "$status" = 0 ] || { show; false; }
        [ "$output" = $'n\n33554432' ] || { show; false; }
        [[ "$stderr" == *"rows_read: 33554432"* ]] || { show; false; }
        local held rss
        held=$(printf '%s\n' "$stderr" | sed -n 's/^decompressed_held_peak: //p')
        rss=$(printf '%s\n' "$stderr" | tail -n 1)
        [ -n "$held" ] && [ "$held" -gt 0 ] && [ "$held" -lt 67108864 ] || { show; false; }
        is_asan || [ "$rss" -lt 65536 ] || { echo "peak RSS $rss KB"; false; }
    done
    # a plain input prints no such line
    run_tally ones.csv --no-header --agg 'n = count()' --stats
    assert_out $'n\n33554432'
    [[ "$stderr" != *decompressed* ]]
}

@test "filters and selects of long strings stream: views given back with their batches" {
    # 128 MiB of records whose s is a long string (a view into the input)
    { echo 'k,s'; yes '1,a rather long string value that is the same on every line' | head -c 134217728; } > ls.csv
    gzip -1 -c ls.csv > ls.csv.gz
    zstd -q -c < ls.csv > p.ls.csv.zst
    for args in "--select s" "--filter k=1 --select s,k"; do
        "$TALLY" ls.csv $args -o want.csv
        for f in ls.csv.gz p.ls.csv.zst; do
            run_tally $f $args -o got.csv --stats
            [ "$status" = 0 ] || { show; false; }
            cmp want.csv got.csv
            local held
            held=$(printf '%s\n' "$stderr" | sed -n 's/^decompressed_held_peak: //p')
            # half the input: held back batch by batch, not all of it
            [ "$held" -lt 67108864 ] || { show; false; }
        done
    done
}

@test "a streamed gzip or unknown-size zstd cut short: the error, also after --head" {
    yes 'a,b' | head -c 3000000 > big.csv
    gzip -c big.csv > big.csv.gz
    zstd -q -c < big.csv > big.p.zst
    local n
    for f in big.csv.gz big.p.zst; do
        n=$(stat -c %s $f)
        head -c $((n - 100)) $f > cut.$f
        for args in "--agg count()" "--head 1"; do
            run_tally cut.$f $args -o out.csv
            [ "$status" = 1 ] || { show; false; }
            case $f in
                *.gz) assert_err 1 "tally: \"cut.$f\": truncated gzip stream: it ends at byte $((n - 100)), inside a member" ;;
                *) assert_err 1 "tally: \"cut.$f\": truncated zstd stream: it ends at byte $((n - 100)), inside a frame" ;;
            esac
            [ ! -e out.csv ]
        done
    done
}

@test "max_record_size in a pipeline file; the flag overrides it; its usage error" {
    { printf 'a,b\n1,2\n'; head -c 3000000 /dev/zero | tr '\0' 'x'; printf ',9\n3,4\n'; } | gzip -c > long.csv.gz
    printf '{"input": "long.csv.gz", "max_record_size": 1048576, "steps": [{"agg": {"n": "count()"}}]}' > p.json
    run_tally -f p.json
    assert_err 1 "tally: ./long.csv.gz:3: record longer than 1048576 bytes (--max-record-size)"
    run_tally -f p.json --max-record-size 4M
    assert_ok
    assert_out $'n\n3'
    printf '{"input": "long.csv.gz", "max_record_size": 1000}' > small.json
    run_tally -f small.json
    assert_err 2 "tally: small.json: /max_record_size: expected a number of bytes, 1048576 or more"
}
