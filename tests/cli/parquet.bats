#!/usr/bin/env bats
# run-cli: weight=3
# Parquet input: every type and its mapping, every codec, page formats v1
# and v2 with their encodings, row groups and batches, structs, nulls,
# projection, detection by suffix, magic number, --from and standard
# input, inputs mixed with CSV, and every refusal (exit 1, FILE: column,
# row group, no output file).  The files and DuckDB's answers (NAME.csv)
# come from scripts/gen-parquet-fixtures.mjs, which says how DuckDB's
# reading maps onto tally's types.

load helpers

P=$BATS_TEST_DIRNAME/data/parquet

setup() {
    enter_workdir
}

# same_as FILE.csv ARGS...: tally ARGS prints exactly FILE.csv, whatever the
# threads and batch size.
same_as() {
    local want=$1
    shift
    {
        echo "--threads 1"
        for t in $(matrix_threads 2 7); do echo "--threads $t"; done
        echo "TALLY_BATCH_ROWS=7 --threads 1"
        echo "TALLY_BATCH_ROWS=1000 --threads $(matrix_threads 3)"
    } | tally_matrix --ok --want "$want" "$@"
}

@test "read: every type as DuckDB reads it (format v1 pages)" {
    same_as "$P/types.csv" "$P/types.parquet"
}

@test "read: every type as DuckDB reads it (format v2: delta and byte-stream-split encodings)" {
    same_as "$P/types_v2.csv" "$P/types_v2.parquet"
}

@test "schema: the types tally gives each Parquet type" {
    assert_run_out schema "$P/types.parquet" <<'EOF'
column,type
id,int64
b,bool
i8,int64
i16,int64
i32,int64
i64,int64
u8,int64
u16,int64
u32,int64
u64,int64
f,float64
d,float64
dec4,float64
dec10,float64
dec18,string
dec30,string
s,string
bl,string
dt,date
ts,timestamp
ts_ms,timestamp
ts_ns,timestamp
ts_s,timestamp
tstz,timestamptz
tm,string
tmtz,string
uu,string
e,string
EOF
}

@test "read: every codec, two row groups, any threads and batch size" {
    for c in uncompressed snappy gzip zstd lz4_raw brotli; do
        same_as "$P/mixed.csv" "$P/codec_$c.parquet"
    done
}

@test "read: data page v2 with delta, byte-stream-split and dictionary encodings" {
    same_as "$P/mixed.csv" "$P/pages_v2.parquet"
}

@test "group-by, filter, head over a Parquet file" {
    assert_run_out "$P/codec_snappy.parquet" --group-by region \
        --agg 'rows = count(), s = sum(n), m = max(x), items = count(item)' <<'EOF'
region,rows,s,m,items
north,525,-100,262.0,420
south,525,-1250,262.125,420
east,525,-3400,262.25,420
west,525,1450,262.375,420
EOF
    assert_run_out "$P/pages_v2.parquet" --filter 'flag and n > 400' --select 'id, item, region' \
        --head 4 <<'EOF'
id,item,region
27,item-13807,west
54,item-27614,east
81,item-41421,south
135,,west
EOF
}

@test "projection: only the columns the plan uses are read" {
    run_tally "$P/codec_zstd.parquet" --select region --head 2 --stats
    [ "$status" -eq 0 ]
    assert_out $'region\nnorth\nsouth'
    assert_stderr_line 2 "bytes_read: 107"
    assert_stderr_line 4 "converted: region=2048"
    run_tally "$P/codec_zstd.parquet" --agg 'n = count()' --stats
    [ "$status" -eq 0 ]
    assert_out $'n\n2100'
    assert_stderr_line 2 "bytes_read: 0"
}

@test "read: structs as parent.child columns, a null parent makes its children null" {
    same_as "$P/structs.csv" "$P/structs.parquet"
    assert_run_out "$P/structs.parquet" --select '"s.b", "deep.x.y"' <<'EOF'
s.b,deep.x.y
x,1.5
,
z,
EOF
}

@test "read: nulls, empty strings, all-null columns, no rows" {
    same_as "$P/nulls.csv" "$P/nulls.parquet"
    assert_run_out schema "$P/nulls.parquet" <<'EOF'
column,type
id,int64
none,int64
empty,string
nothing,string
EOF
    same_as "$P/no_rows.csv" "$P/no_rows.parquet"
}

@test "read: INT96 timestamps and deprecated BIT_PACKED levels" {
    same_as "$P/int96.csv" "$P/int96.parquet"
    assert_run_out "$P/bit_packed_levels.parquet" <<'EOF'
id,v
1,7
2,
3,9
EOF
}

@test "detection: magic number without a suffix, --from, standard input, gzip around it" {
    cp "$P/nulls.parquet" data.bin
    cp "$P/nulls.parquet" data.csv
    gzip -c "$P/nulls.parquet" > nulls.parquet.gz
    want=$(cat "$P/nulls.csv")
    run_tally data.bin
    assert_ok
    assert_out "$want"
    run_tally --from parquet data.csv
    assert_ok
    assert_out "$want"
    run_tally nulls.parquet.gz
    assert_ok
    assert_out "$want"
    run --separate-stderr bash -c '"$1" - < "$2"' _ "$TALLY" "$P/nulls.parquet"
    assert_ok
    assert_out "$want"
    run --separate-stderr bash -c '"$1" --from parquet - < "$2"' _ "$TALLY" "$P/nulls.parquet"
    assert_ok
    assert_out "$want"
    # a CSV file named .parquet is not read as CSV
    printf 'a,b\n1,2\n' > fake.parquet
    run_tally fake.parquet
    assert_err 1 "tally: fake.parquet: not a Parquet file (it does not start with PAR1)"
}

@test "inputs: Parquet beside CSV, columns by name, int64 widened to float64 or string" {
    printf 'id,n,region\n9000,0.5,north\n9001,7,x\n' > more.csv
    assert_run_out "$P/codec_gzip.parquet" more.csv --filter 'id < 2 or id >= 9000' \
        --select 'id, n, region' <<'EOF'
id,n,region
0,-500.0,north
1,-463.0,south
9000,0.5,north
9001,7.0,x
EOF
    printf 'id,flag\n9000,maybe\n' > flags.csv
    assert_run_out "$P/codec_gzip.parquet" flags.csv --filter 'id < 2 or id >= 9000' \
        --select 'id, flag' <<'EOF'
id,flag
0,true
1,false
9000,maybe
EOF
    assert_run_out schema "$P/codec_gzip.parquet" flags.csv <<'EOF'
column,type
id,int64
n,int64
x,float64
region,string
item,string
flag,string
EOF
}

@test "--schema widens a Parquet column or is refused" {
    assert_run_out "$P/nulls.parquet" --schema 'id:float,none:string' --head 2 <<'EOF'
id,none,empty,nothing
0.0,,"",
1.0,,,
EOF
    run_tally "$P/nulls.parquet" --schema 'id:date'
    assert_err 2 "tally: --schema: column \"id\" of $P/nulls.parquet is int64 in the Parquet file and cannot be read as date (use cast)"
}

@test "--with-filename and --join with Parquet inputs" {
    assert_run_out "$P/int96.parquet" --with-filename --select 'filename, id' --head 1 <<EOF
filename,id
$P/int96.parquet,1
EOF
    assert_run_out "$P/int96.parquet" --join "$P/bit_packed_levels.parquet" --on id \
        --select 'id, ts, v' <<'EOF'
id,ts,v
1,2024-01-01 10:00:00.123456,7
2,,
3,1970-01-01 00:00:00,9
EOF
}

@test "read: lists, maps, structs in lists, deep structs as JSON text" {
    same_as "$P/nested.csv" "$P/nested.parquet"
    same_as "$P/nested_v2.csv" "$P/nested_v2.parquet"
    assert_run_out "$P/nested.parquet" --select 'id, m, "s.k"' --filter "m != '{}'" <<'EOF'
id,m,s.k
1,"{""x"":1,""y"":null}","[1.5,2.5]"
4,"{""z"":3}",[]
EOF
    assert_run_out schema "$P/nested.parquet" <<'EOF'
column,type
id,int64
ints,string
strs,string
s.k,string
m,string
structs,string
lists,string
dates,string
bools,string
deep.a.b.c.d.e.f.g,string
EOF
}

@test "schema reads the footer only: no row, no page" {
    assert_run_out schema "$P/bad_interval.parquet" <<'EOF'
column,type
id,int64
v,string
EOF
    # its pages are damaged, its footer is not
    run_tally schema "$P/bad_dict_index.parquet" --stats
    [ "$status" -eq 0 ]
    assert_out $'column,type\nv,int64'
    assert_stderr_line 1 "rows_read: 0"
    # beside a CSV input, whose rows give its types, every input is read
    printf 'id,v\n1.5,x\n' > more.csv
    run_tally schema "$P/bad_dict_index.parquet" more.csv
    assert_err 1 "tally: $P/bad_dict_index.parquet: column \"v\", row group 0: dictionary index 3 out of range (the dictionary holds 2 values)"
    assert_run_out schema "$P/nulls.parquet" more.csv <<'EOF'
column,type
id,float64
none,int64
empty,string
nothing,string
v,string
EOF
}

@test "unsupported yet: INTERVAL; the other columns still read" {
    run_tally "$P/bad_interval.parquet"
    assert_err 1 "tally: $P/bad_interval.parquet: column \"v\": INTERVAL values are not supported yet"
    assert_run_out "$P/bad_interval.parquet" --select id <<'EOF'
id
1
2
3
EOF
}

@test "values tally cannot hold: uint64 past int64, timestamps with nanoseconds" {
    run_tally "$P/u64_max.parquet"
    assert_err 1 "tally: $P/u64_max.parquet: column \"big\", row group 0: the unsigned value 18446744073709551615 is beyond int64's range"
    run_tally "$P/ts_nanos.parquet"
    assert_err 1 "tally: $P/ts_nanos.parquet: column \"t\", row group 0: the timestamp 2024-01-01 00:00:00.123456789 has nanoseconds, which tally's microsecond timestamps cannot hold"
    assert_run_out "$P/u64_max.parquet" --select id <<'EOF'
id
1
EOF
}

# bad FILE MESSAGE: reading FILE into out.csv fails with exit 1 and
# "tally: $P/FILE: MESSAGE", and leaves no file.
bad() {
    run_tally "$P/$1" -o out.csv
    assert_err 1 "tally: $P/$1: $2"
    assert_only_files
}

@test "bad files: magic numbers, truncation, footer length, encryption" {
    bad bad_magic.parquet "not a Parquet file (it does not start with PAR1)"
    bad truncated.parquet "not a Parquet file, or a truncated one (it does not end with PAR1)"
    bad bad_footer_length.parquet "corrupt Parquet file: its footer length (16222 bytes) is past the start of the file (16222 bytes)"
    bad encrypted_footer.parquet "encrypted Parquet files are not supported"
    bad encrypted_columns.parquet "column \"v\", row group 0: encrypted columns are not supported"
    assert_run_out "$P/encrypted_columns.parquet" --select id <<'EOF'
id
1
2
3
EOF
    printf 'PAR1' > tiny.parquet
    run_tally tiny.parquet
    assert_err 1 "tally: tiny.parquet: not a Parquet file (4 bytes, too short for one)"
}

@test "bad files: pages, levels, dictionary, encodings, codecs" {
    bad bad_page_header.parquet "corrupt Parquet page header (column \"v\", row group 0): PageHeader: field 2 has the unexpected wire type list (byte 7)"
    bad bad_dict_index.parquet "column \"v\", row group 0: dictionary index 3 out of range (the dictionary holds 2 values)"
    bad bad_levels.parquet "column \"v\", row group 0: RLE/bit-packed data ends before its values do"
    bad bad_page_count.parquet "column \"v\", row group 0: a page of 3 values where the row group has 2 rows left"
    bad bad_chunk_short.parquet "column \"v\", row group 0: the column chunk ends 2 rows before the row group does"
    bad bad_encoding.parquet "column \"v\", row group 0: the BIT_PACKED encoding is not supported for INT32 values"
    bad bad_codec.parquet "column \"v\", row group 0: cannot decompress a LZO page: the LZO codec is not supported"
    bad bad_snappy.parquet "column \"v\", row group 0: cannot decompress a SNAPPY page: corrupt snappy data"
    bad bad_gzip_size.parquet "column \"v\", row group 0: cannot decompress a GZIP page: gzip data gives 12 bytes, the page header says 16"
    bad bad_gzip_crc.parquet "column \"id\", row group 0: cannot decompress a GZIP page: corrupt gzip data (incorrect data check)"
}

@test "fixtures: the committed files and answers are what DuckDB makes today" {
    local oracle=${ORACLE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tally/oracle}
    if [ ! -d "$oracle/node_modules/@duckdb/node-api" ]; then
        [ "${CI:-}" != true ] || { echo "CI=true: the oracle is required (scripts/setup-oracles)"; return 1; }
        skip "no DuckDB oracle (scripts/setup-oracles)"
    fi
    run node "$BATS_TEST_DIRNAME/../../scripts/gen-parquet-fixtures.mjs" check
    [ "$status" -eq 0 ] || { echo "$output"; return 1; }
}
