#!/usr/bin/env bats
# run-cli: weight=25
# Compressed inputs and outputs (formats/compress/compress.c): gzip and zstd by suffix
# or magic bytes, concatenated members and frames, standard input sniffing,
# -o x.gz / x.zst with --compress-level, and clean errors (file and byte
# offset, exit 1, no output file) for truncated or corrupt streams.

load helpers

setup() {
    enter_workdir
    printf 'k,v\na,1\nb,2\na,3\nc,4\n' > t.csv
    gzip -c t.csv > t.csv.gz
    zstd -q -c t.csv > t.csv.zst
}

@test "gzip and zstd inputs give the uncompressed result" {
    run_tally t.csv --group-by k --agg 'sum(v),count()'
    assert_ok
    local want=$output
    for f in t.csv.gz t.csv.zst; do
        run_tally "$f" --group-by k --agg 'sum(v),count()'
        assert_ok
        assert_out "$want"
    done
    assert_out <<'EOF'
k,sum_v,count
a,4,2
b,2,1
c,4,1
EOF
}

@test "suffixes are case-insensitive and a .tsv.gz is tab-separated" {
    printf 'a\tb\n1\t2\n' | gzip -c > X.TSV.GZ
    assert_run_out X.TSV.GZ <<'EOF'
a,b
1,2
EOF
}

@test "concatenated gzip members are read to the end" {
    { printf 'k,v\na,1\n' | gzip -c; printf 'b,2\n' | gzip -c; } > m.csv.gz
    assert_run_out m.csv.gz <<'EOF'
k,v
a,1
b,2
EOF
}

@test "trailing zero padding after a gzip member is ignored, other bytes are not" {
    { cat t.csv.gz; head -c 64 /dev/zero; } > pad.csv.gz
    run_tally pad.csv.gz --agg 'count()'
    assert_ok
    assert_out $'count\n4'
    { cat t.csv.gz; printf 'junk'; } > junk.csv.gz
    run_tally junk.csv.gz -o out.csv
    assert_err 1 "tally: \"junk.csv.gz\": unexpected data after the gzip stream at byte $(stat -c %s t.csv.gz)"
    assert_only_files t.csv t.csv.gz t.csv.zst pad.csv.gz junk.csv.gz
}

@test "multi-frame zstd is read to the end" {
    { printf 'k,v\na,1\n' | zstd -q -c; printf 'b,2\n' | zstd -q -c; } > m.csv.zst
    assert_run_out m.csv.zst <<'EOF'
k,v
a,1
b,2
EOF
}

@test "an unknown suffix is sniffed by magic bytes" {
    cp t.csv.gz data.bin
    cp t.csv.zst data.z
    for f in data.bin data.z; do
        run_tally "$f" --agg 'sum(v)'
        assert_ok
        assert_out $'sum_v\n10'
    done
}

@test "standard input: gzip, zstd, NDJSON and CSV are sniffed; --from overrides" {
    run --separate-stderr bash -c '"$1" - --agg "sum(v)" < t.csv.gz' _ "$TALLY"
    assert_ok
    assert_out $'sum_v\n10'
    run --separate-stderr bash -c '"$1" - --agg "sum(v)" < t.csv.zst' _ "$TALLY"
    assert_ok
    assert_out $'sum_v\n10'
    run_tally_in $'\n  {"v": 5}\n{"v": 6}\n' - --agg 'sum(v)'
    assert_ok
    assert_out $'sum_v\n11'
    run_tally_in $'{x,y\n1,2\n' - --from csv
    assert_ok
    assert_out $'{x,y\n1,2'
    run_tally_in $'v\n7\n' - --agg 'sum(v)'
    assert_ok
    assert_out $'sum_v\n7'
}

@test "standard input compressed NDJSON is sniffed after decompression" {
    printf '{"v": 1}\n{"v": 2}\n' | gzip -c > j.gz
    run --separate-stderr bash -c '"$1" - --agg "sum(v)" < j.gz' _ "$TALLY"
    assert_ok
    assert_out $'sum_v\n3'
}

@test "a restart (type widened after the first batch) re-reads compressed input" {
    { printf 'v\n'; seq 1 5; printf 'x\n'; } | zstd -q -c > w.csv.zst
    TALLY_BATCH_ROWS=2 run_tally w.csv.zst --stats -o out.csv.gz
    [ "$status" -eq 0 ] || { show; false; }
    [[ "$stderr" == *"restarts: 1"* ]] || { show; false; }
    run gzip -dc out.csv.gz
    [ "$output" = "$(printf 'v\n1\n2\n3\n4\n5\nx')" ] || { show; false; }
}

@test "-o FILE.zst and FILE.gz compress; they decompress to the plain output" {
    run_tally t.csv --sort -v
    local want=$output
    run_tally t.csv --sort -v -o out.csv.zst
    assert_ok
    run zstd -q -dc out.csv.zst
    [ "$output" = "$want" ] || { show; false; }
    run_tally t.csv --sort -v -o out.csv.gz --compress-level 9
    assert_ok
    run gzip -dc out.csv.gz
    [ "$output" = "$want" ] || { show; false; }
    run_tally t.csv --sort -v -o out.tsv.zst --compress-level 19
    assert_ok
    run zstd -q -dc out.tsv.zst
    [ "$output" = "$(printf 'k\tv\nc\t4\na\t3\nb\t2\na\t1')" ] || { show; false; }
    # round trip through tally itself
    assert_run_out out.csv.zst --sort -v <<EOF
$want
EOF
}

@test "--to overrides the format but the .gz suffix still compresses" {
    run_tally t.csv --to tsv -o out.gz --head 1
    assert_ok
    run gzip -dc out.gz
    [ "$output" = "$(printf 'k\tv\na\t1')" ] || { show; false; }
}

@test "--compress-level: range per format, and only with a compressed output" {
    run_tally t.csv -o out.csv.gz --compress-level 10
    assert_err 2 'tally: --compress-level: gzip levels are 1 to 9, got 10'
    run_tally t.csv -o out.csv.zst --compress-level 23
    assert_err 2 'tally: --compress-level: expected a level from 1 to 22, got "23"'
    run_tally t.csv -o out.csv --compress-level 3
    assert_err 2 'tally: --compress-level needs a compressed output (-o FILE.gz, -o FILE.zst or Parquet)'
    run_tally t.csv --compress-level 0
    assert_err 2 'tally: --compress-level: expected a level from 1 to 22, got "0"'
    assert_only_files t.csv t.csv.gz t.csv.zst
}

@test "truncated gzip and zstd inputs: exit 1 naming file and offset, no output" {
    head -c 20 t.csv.gz > tr.csv.gz
    head -c 15 t.csv.zst > tr.csv.zst
    run_tally tr.csv.gz -o out.csv
    assert_err 1 'tally: "tr.csv.gz": truncated gzip stream: it ends at byte 20, inside a member'
    run_tally tr.csv.zst -o out.csv
    assert_err 1 'tally: "tr.csv.zst": truncated zstd stream: it ends at byte 15, inside a frame'
    : > empty.csv.gz
    run_tally empty.csv.gz
    assert_err 1 'tally: "empty.csv.gz": truncated gzip stream: it ends at byte 0, inside a member'
    assert_only_files t.csv t.csv.gz t.csv.zst tr.csv.gz tr.csv.zst empty.csv.gz
}

@test "every truncation of a gzip and a zstd file fails cleanly" {
    local n f cut
    for f in t.csv.gz t.csv.zst; do
        n=$(stat -c %s "$f")
        for ((cut = 0; cut < n; cut++)); do
            head -c "$cut" "$f" > "cut.${f#t.}"
            run_tally "cut.${f#t.}" -o out.csv
            [ "$status" -eq 1 ] || { echo "cut at $cut of $f"; show; false; }
            [[ "$stderr" == 'tally: "cut.'*'": truncated '*"at byte $cut, "* ]] ||
                [[ "$stderr" == 'tally: "cut.'*'": corrupt '* ]] || { echo "cut at $cut"; show; false; }
            [ ! -e out.csv ] || { echo "output left at $cut"; false; }
        done
    done
}

@test "corrupt gzip and zstd inputs: exit 1 with the offset, no output" {
    cp t.csv.gz bad.csv.gz
    printf '\x00\x01' | dd of=bad.csv.gz bs=1 seek=12 conv=notrunc 2> /dev/null
    run_tally bad.csv.gz -o out.csv
    assert_err 1 'tally: "bad.csv.gz": corrupt gzip data at byte 18: invalid stored block lengths'
    cp t.csv.zst bad.csv.zst
    printf '\xff\xff\xff' | dd of=bad.csv.zst bs=1 seek=8 conv=notrunc 2> /dev/null
    run_tally bad.csv.zst -o out.csv
    assert_err 1 'tally: "bad.csv.zst": corrupt zstd data in the block or frame at byte 0: Data corruption detected'
    # a .gz that is not gzip at all
    cp t.csv plain.csv.gz
    run_tally plain.csv.gz
    assert_err 1 'tally: "plain.csv.gz": not gzip data: no gzip magic number at byte 0'
    assert_only_files t.csv t.csv.gz t.csv.zst bad.csv.gz bad.csv.zst plain.csv.gz
}

@test "a zstd checksum mismatch is an error, not silent" {
    printf 'k,v\na,1\n' | zstd -q -c --check > ck.csv.zst
    n=$(stat -c %s ck.csv.zst)
    printf '\x00' | dd of=ck.csv.zst bs=1 seek=$((n - 1)) conv=notrunc 2> /dev/null
    run_tally ck.csv.zst
    assert_err_glob 1 'tally: "ck.csv.zst": corrupt zstd data * at byte *: *'
}

@test "a gzip CRC mismatch is an error, not silent" {
    n=$(stat -c %s t.csv.gz)
    cp t.csv.gz crc.csv.gz
    printf '\x00\x00' | dd of=crc.csv.gz bs=1 seek=$((n - 8)) conv=notrunc 2> /dev/null
    run_tally crc.csv.gz
    assert_err_glob 1 'tally: "crc.csv.gz": corrupt gzip data at byte *: incorrect data check'
}

@test "pipeline file: compress_level and a compressed input relative to the file" {
    mkdir p
    cp t.csv.zst p/
    printf '{"inputs": ["t.csv.zst"], "steps": [{"agg": ["sum(v)"]}], "output": "o.csv.gz", "compress_level": 1}' > p/run.json
    run_tally -f p/run.json
    assert_ok
    run gzip -dc p/o.csv.gz
    [ "$output" = "$(printf 'sum_v\n10')" ] || { show; false; }
}
