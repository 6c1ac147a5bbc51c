#!/usr/bin/env bats
# run-cli: weight=10
# Parquet output (-o FILE.parquet, --to parquet): every type written and
# read back by tally, nulls, empty strings, all-null columns, no rows,
# several row groups, every codec and level, dictionary and PLAIN chunks,
# round trips (CSV -> Parquet -> CSV, Parquet -> Parquet) with the same
# bytes for every --threads and batch size, atomic output, and every bad
# flag value.  DuckDB's reading of the same files is checked by
# tests/diff/parquet_readback.mjs (the last test here).

load helpers

setup() {
    enter_workdir
    cat > types.ndjson <<'EOF'
{"i":1,"f":1.5,"b":true,"s":"abc","d":"2024-01-31","t":"2024-01-31 12:00:00.5","n":null}
{"i":null,"f":-0.0,"b":false,"s":"","d":"2020-02-29","t":null,"n":null}
{"i":3,"f":null,"b":null,"s":null,"d":null,"t":"1970-01-01 00:00:00","n":null}
{"i":-9223372036854775808,"f":1e-300,"b":true,"s":"hello, \"world\"","d":"1900-01-01","t":"2262-01-01 00:00:00.000001","n":null}
{"i":9223372036854775807,"f":-1.7976931348623157e308,"b":false,"s":"é ü 日本","d":"9999-12-31","t":"1900-01-01 00:00:00","n":null}
EOF
}

@test "every type written and read back: the same values, nulls and empty strings" {
    run_tally types.ndjson --schema 'd:date,t:timestamp' -o out.parquet
    assert_ok
    assert_run_out out.parquet --to ndjson <<'EOF'
{"i":1,"f":1.5,"b":true,"s":"abc","d":"2024-01-31","t":"2024-01-31 12:00:00.5","n":null}
{"i":null,"f":-0.0,"b":false,"s":"","d":"2020-02-29","t":null,"n":null}
{"i":3,"f":null,"b":null,"s":null,"d":null,"t":"1970-01-01 00:00:00","n":null}
{"i":-9223372036854775808,"f":1e-300,"b":true,"s":"hello, \"world\"","d":"1900-01-01","t":"2262-01-01 00:00:00.000001","n":null}
{"i":9223372036854775807,"f":-1.7976931348623157e+308,"b":false,"s":"é ü 日本","d":"9999-12-31","t":"1900-01-01 00:00:00","n":null}
EOF
    assert_run_out schema out.parquet <<'EOF'
column,type
i,int64
f,float64
b,bool
s,string
d,date
t,timestamp
n,null
EOF
    assert_only_files types.ndjson out.parquet
}

@test "--to parquet writes Parquet whatever the suffix; no rows is a file of no row group" {
    run_tally types.ndjson --head 0 --to parquet -o empty.pq
    assert_ok
    assert_run_out empty.pq --from parquet <<'EOF'
i,f,b,s,d,t,n
EOF
    assert_run_out schema --from parquet empty.pq <<'EOF'
column,type
i,int64
f,float64
b,bool
s,string
d,date
t,timestamp
n,null
EOF
    [ "$(head -c 4 empty.pq)" = PAR1 ]
    [ "$(tail -c 4 empty.pq)" = PAR1 ]
}

@test "created_by names tally and its version; no wall-clock time: two runs, the same bytes" {
    run_tally types.ndjson -o a.parquet
    assert_ok
    sleep 1
    run_tally types.ndjson -o b.parquet
    assert_ok
    cmp a.parquet b.parquet
    version=$("$TALLY" --version)
    [ "$(grep -a -o 'tally version [0-9.]*' a.parquet)" = "${version/tally /tally version }" ]
}

@test "row groups of --row-group-size rows: several, read back in order" {
    seq 1 10 | sed '1i x' > ten.csv
    run_tally ten.csv -o rg.parquet --row-group-size 3
    assert_ok
    run_tally rg.parquet --stats
    [ "$status" -eq 0 ]
    [ "$output" = "$(cat ten.csv)" ]
    # one batch per row group: 3 + 3 + 3 + 1 rows
    [[ "$stderr" == *"batches: 4"* ]]
    run_tally ten.csv -o one.parquet
    assert_ok
    run_tally one.parquet --stats
    [[ "$stderr" == *"batches: 1"* ]]
}

@test "every codec, and --compress-level within each codec's range" {
    seq 1 3000 | awk 'BEGIN{print "k,v,s"} {print $1 % 7 "," $1 * 1.5 ",row" $1 % 13}' > in.csv
    "$TALLY" in.csv > want.csv
    for c in zstd snappy gzip lz4 none; do
        run_tally in.csv -o "$c.parquet" --parquet-compression "$c"
        assert_ok
        run_tally "$c.parquet" -o "$c.csv"
        assert_ok
        cmp want.csv "$c.csv"
    done
    run_tally in.csv -o dflt.parquet
    cmp dflt.parquet zstd.parquet
    for c in zstd:19 gzip:9 gzip:1 lz4:12 zstd:1; do
        run_tally in.csv -o l.parquet --parquet-compression "${c%:*}" --compress-level "${c#*:}"
        assert_ok
        run_tally l.parquet -o l.csv
        cmp want.csv l.csv
    done
    # the codecs make different files
    [ "$(cat ./*.parquet | wc -c)" -gt 0 ]
    ! cmp -s zstd.parquet snappy.parquet
    ! cmp -s gzip.parquet none.parquet
    ! cmp -s lz4.parquet none.parquet
}

@test "dictionary chunks and PLAIN chunks (a dictionary past 1 MiB) read back the same" {
    # 100000 distinct 24-byte strings: the dictionary would pass 1 MiB;
    # few distinct values: a dictionary pays
    awk 'BEGIN{print "u,few,x"; for (i = 0; i < 100000; i++) printf "u%023d,v%d,%d\n", i, i % 5, i % 3}' > big.csv
    "$TALLY" big.csv > want.csv
    run_tally big.csv -o big.parquet
    assert_ok
    run_tally big.parquet -o got.csv
    assert_ok
    cmp want.csv got.csv
    # 2.4 MB of distinct strings, PLAIN and compressed; the rest dictionary-coded
    [ "$(wc -c < big.parquet)" -lt 1500000 ]
}

@test "CSV -> Parquet -> CSV gives the same bytes; Parquet -> Parquet the same for any --threads" {
    awk 'BEGIN{print "id,name,score,ok,day,at"; for (i = 0; i < 20000; i++) printf "%d,n%d,%s,%s,2024-0%d-1%d,2024-01-0%d 10:00:0%d.25\n", i - 500, i % 97, (i % 11 ? i / 8 : ""), (i % 3 ? "true" : "false"), i % 9 + 1, i % 10, i % 9 + 1, i % 10}' > in.csv
    "$TALLY" in.csv > want.csv
    run_tally in.csv -o a.parquet --row-group-size 5000
    assert_ok
    run_tally a.parquet -o back.csv
    assert_ok
    cmp want.csv back.csv
    run_tally a.parquet -o p1.parquet --threads 1
    assert_ok
    run_tally a.parquet -o p4.parquet --threads 4
    assert_ok
    TALLY_BATCH_ROWS=7 "$TALLY" a.parquet -o p7.parquet --threads 3
    cmp p1.parquet p4.parquet
    cmp p1.parquet p7.parquet
    run_tally in.csv -o c4.parquet --threads 4 --row-group-size 5000
    cmp a.parquet c4.parquet
}

@test "a steps' output to Parquet: filter, group-by, sort" {
    run_tally types.ndjson --filter 'i is not null' --select 'i, s' --sort -i -o out.parquet
    assert_ok
    assert_run_out out.parquet <<'EOF'
i,s
9223372036854775807,é ü 日本
3,
1,abc
-9223372036854775808,"hello, ""world"""
EOF
}

@test "a type widened after the first batch (a restart) and standard output" {
    { echo x,y; seq 1 3000 | sed 's/.*/&,a&/'; echo 1.5,b; } > late.csv
    "$TALLY" late.csv > want.csv
    run_tally late.csv -o late.parquet --row-group-size 1000
    assert_ok
    assert_run_out schema late.parquet <<'EOF'
column,type
x,float64
y,string
EOF
    run_tally late.parquet -o back.csv
    cmp want.csv back.csv
    "$TALLY" late.csv --to parquet --row-group-size 1000 > stdout.parquet
    cmp late.parquet stdout.parquet
    "$TALLY" late.csv --to parquet --row-group-size 1000 -o - > dash.parquet
    cmp late.parquet dash.parquet
}

@test "a failed run leaves no Parquet file" {
    printf 'x\n1\n2\nabc\n' > bad.csv
    run_tally bad.csv --schema x:int -o out.parquet
    [ "$status" -eq 1 ]
    : > empty.csv
    run_tally empty.csv -o out.parquet
    assert_err 1 'tally: Parquet output needs at least one column; the result has none'
    assert_only_files types.ndjson bad.csv empty.csv
}

@test "bad Parquet flag values are usage errors" {
    run_tally types.ndjson -o x.parquet --parquet-compression brotli
    assert_err 2 'tally: --parquet-compression: expected zstd, snappy, gzip, lz4 or none, got "brotli"'
    run_tally types.ndjson -o x.parquet --row-group-size 0
    assert_err 2 'tally: --row-group-size: expected a row count from 1 to 2147483647, got "0"'
    run_tally types.ndjson -o x.parquet --row-group-size 2147483648
    assert_err 2 'tally: --row-group-size: expected a row count from 1 to 2147483647, got "2147483648"'
    run_tally types.ndjson -o x.parquet --row-group-size ten
    assert_err 2 'tally: --row-group-size: expected a row count from 1 to 2147483647, got "ten"'
    run_tally types.ndjson -o x.parquet --parquet-compression snappy --compress-level 3
    assert_err 2 'tally: --compress-level: the Parquet codec snappy has no levels'
    run_tally types.ndjson -o x.parquet --parquet-compression none --compress-level 3
    assert_err 2 'tally: --compress-level: the Parquet codec none has no levels'
    run_tally types.ndjson -o x.parquet --parquet-compression gzip --compress-level 10
    assert_err 2 'tally: --compress-level: Parquet gzip levels are 1 to 9, got 10'
    run_tally types.ndjson -o x.parquet --parquet-compression lz4 --compress-level 13
    assert_err 2 'tally: --compress-level: Parquet lz4 levels are 1 to 12, got 13'
    run_tally types.ndjson -o x.parquet.gz
    assert_err 2 'tally: -o "x.parquet.gz": Parquet output is compressed inside the file (--parquet-compression), not as .gz'
    run_tally types.ndjson -o x.csv --row-group-size 5
    assert_err 2 'tally: --row-group-size applies to Parquet output, not csv'
    run_tally types.ndjson -o x.csv --parquet-compression gzip
    assert_err 2 'tally: --parquet-compression applies to Parquet output, not csv'
    run_tally types.ndjson -o x.parquet --out-null NA
    assert_err 2 'tally: --out-null applies to CSV and TSV output, not parquet'
    run_tally types.ndjson -o x.parquet --out-delimiter ';'
    assert_err 2 'tally: --out-delimiter applies to CSV output, not parquet'
    assert_only_files types.ndjson
}

@test "pipeline files carry parquet_compression and row_group_size" {
    seq 1 10 | sed '1i x' > ten.csv
    printf '{"input": "ten.csv", "output": "p.parquet", "parquet_compression": "gzip", "row_group_size": 4}\n' > p.json
    run_tally -f p.json
    assert_ok
    run_tally ten.csv -o q.parquet --parquet-compression gzip --row-group-size 4
    assert_ok
    cmp p.parquet q.parquet
    # the command line overrides the file
    run_tally -f p.json --parquet-compression none --row-group-size 10
    assert_ok
    run_tally ten.csv -o r.parquet --parquet-compression none --row-group-size 10
    cmp p.parquet r.parquet
    printf '{"input": "ten.csv", "output": "p.parquet", "parquet_compression": "lzo"}\n' > bad.json
    run_tally -f bad.json
    assert_err 2 'tally: bad.json: /parquet_compression: expected zstd, snappy, gzip, lz4 or none'
    printf '{"input": "ten.csv", "output": "p.parquet", "row_group_size": 0}\n' > bad.json
    run_tally -f bad.json
    assert_err 2 'tally: bad.json: /row_group_size: expected a row count from 1 to 2147483647'
}

@test "DuckDB reads tally's Parquet files value by value (tests/diff/parquet_readback.mjs)" {
    script=$BATS_TEST_DIRNAME/../diff/parquet_readback.mjs
    oracle=${ORACLE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tally/oracle}
    if [ ! -d "$oracle/node_modules/@duckdb/node-api" ] || ! command -v node >/dev/null; then
        [ "${CI:-}" != true ] || { echo "no DuckDB oracle (scripts/setup-oracles)"; return 1; }
        skip "no DuckDB oracle (scripts/setup-oracles installs it)"
    fi
    # under ASan (several times slower) 1e5 rows instead of 1e6
    run env PARQUET_READBACK_ROWS=${TALLY_ASAN:+100000} node "$script" "$TALLY" "$PWD"
    [ "$status" -eq 0 ] || { echo "$output"; return 1; }
    [[ "$output" == *"parquet_readback: "*" files, "*" values, all equal"* ]] || { echo "$output"; return 1; }
}

@test "a failed write of Parquet output leaves the old file untouched and no temporary file" {
    [ -z "${TALLY_ASAN:-}" ] || skip "LD_PRELOAD shim is not used with ASan"
    shim="$BATS_TEST_DIRNAME/../../build/iofail.so"
    [ -f "$shim" ] || skip "build/iofail.so not built"
    printf 'old\n' > out.parquet
    run --separate-stderr env LD_PRELOAD="$shim" TALLY_IOFAIL="write:1:ENOSPC" \
        "$TALLY" types.ndjson -o out.parquet
    assert_err 1 'tally: cannot write "out.parquet": No space left on device'
    [ "$(cat out.parquet)" = old ]
    assert_only_files types.ndjson out.parquet
}
