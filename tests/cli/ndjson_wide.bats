#!/usr/bin/env bats
# Wide and sparse NDJSON (formats/ndjson_scan.c, ndjson_build.c; man/tally.1,
# NDJSON, --max-columns): a key absent from a line costs nothing, columns the
# pipeline does not use are not converted, a step may name a key first seen
# in the last line, and --max-columns caps the columns of every format with
# an error naming the line.

load helpers

# wide.ndjson: 80,000 lines, line i holds only the key k<i> with the value i
# (every key but the first ~2,000 is first seen after the first batch).
make_wide() {
    awk 'BEGIN { for (i = 0; i < 80000; i++) printf "{\"k%d\":%d}\n", i, i }' > wide.ndjson
}

# sparse.ndjson: 100,000 lines {"id":i}, and "v":i on every 7th.
make_sparse() {
    awk 'BEGIN { for (i = 0; i < 100000; i++)
        if (i % 7 == 0) printf "{\"id\":%d,\"v\":%d}\n", i, i
        else printf "{\"id\":%d}\n", i }' > sparse.ndjson
}

# An ASan build (TALLY_ASAN, or the runtime linked in): its memory figures
# are not the release build's.
is_asan() {
    [ -n "${TALLY_ASAN:-}" ] || grep -qa __asan_init "$TALLY"
}

# peak_kb ARGS...: run tally ARGS (output discarded) and print its peak
# resident memory in KB (-1 when it failed).
peak_kb() {
    python3 -c '
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if r.returncode == 0 else -1)
' "$TALLY" "$@"
}

# ------------------------------------------------------------ wide, sparse

@test "80,000 keys, one a line: count, count and sum of a key, any thread count" {
    make_wide
    printf '%s\n' '--threads 1' '--threads 2' 'TALLY_BATCH_ROWS=1000 --threads 2' |
        tally_matrix --ok wide.ndjson \
            --agg 'n = count(), c = count(k5), s = sum(k5), t = sum(k79999)'
    matrix_result
    assert_out "n,c,s,t
80000,1,5,79999"
}

@test "only the columns the pipeline uses are converted (--stats)" {
    make_wide
    run_tally wide.ndjson --agg 'c = count(k5)' --stats
    [ "$status" -eq 0 ] || { show; false; }
    assert_out "c
1"
    assert_stderr_line 4 "converted: k5=80000"
}

@test "a sparse key: count, sum, min and max over the lines that hold it" {
    make_sparse
    printf '%s\n' '--threads 1' '--threads 2' 'TALLY_BATCH_ROWS=7 --threads 2' |
        tally_matrix --ok sparse.ndjson \
            --agg 'n = count(), c = count(v), s = sum(v), lo = min(v), hi = max(v)'
    matrix_result
    assert_out "n,c,s,lo,hi
100000,14286,714264285,0,99995"
}

@test "a sparse key in a filter and a group-by" {
    make_sparse
    run_tally sparse.ndjson --filter 'v is not null and v > 99960' --select 'id, v'
    assert_ok
    assert_out "id,v
99967,99967
99974,99974
99981,99981
99988,99988
99995,99995"
    run_tally sparse.ndjson --with 'g = v is null' --group-by g --agg 'n = count()' --sort g
    assert_ok
    assert_out "g,n
false,14286
true,85714"
}

@test "a step may name a key first seen after the first batch (planned again)" {
    make_wide
    run_tally wide.ndjson --select 'k79999, k0' --filter 'k79999 is not null or k0 is not null'
    assert_ok
    assert_out "k79999,k0
,0
79999,"
    run_tally explain wide.ndjson --agg 's = sum(k77777)'
    assert_ok
    assert_out "logical plan:
  aggregate: s = sum(k77777)
    scan wide.ndjson
optimized plan:
  aggregate: s = sum(k77777)
    scan wide.ndjson columns k77777
output: s int64"
}

@test "a key first seen in the last line: named, selected with *, and in the schema" {
    awk 'BEGIN { for (i = 0; i < 70000; i++) print "{\"a\":1}"; print "{\"a\":2,\"z\":5}" }' > late.ndjson
    run_tally late.ndjson --agg 's = sum(z), c = count(z), n = count()'
    assert_ok
    assert_out "s,c,n
5,1,70001"
    run_tally late.ndjson --filter 'a = 2'
    assert_ok
    assert_out "a,z
2,5"
    run_tally schema late.ndjson
    assert_ok
    assert_out "column,type
a,int64
z,int64"
    # a name no line holds is still unknown, after the one read
    run_tally late.ndjson --agg 's = sum(zz)'
    assert_err 2 'tally: unknown column "zz" (did you mean "z"?)
  --agg: s = sum(zz)
                 ^^'
}

@test "-o round trip: a missing key is null in the output, and reads back the same" {
    printf '{"a":1}\n{"b":"x"}\n{"c":true,"a":2}\n' > tiny.ndjson
    TALLY_BATCH_ROWS=1 run_tally tiny.ndjson -o out.ndjson
    assert_ok
    run cat out.ndjson
    assert_out '{"a":1,"b":null,"c":null}
{"a":null,"b":"x","c":null}
{"a":2,"b":null,"c":true}'
    # 3,000 lines of 900 keys, three a line (late keys with 64-line batches)
    awk 'BEGIN { for (i = 0; i < 3000; i++)
        printf "{\"k%d\":%d,\"s%d\":\"s%d\",\"f%d\":%d.5}\n",
            i % 300, i, (i * 7 + 1) % 300, i, (i * 13 + 2) % 300, i }' > sp.ndjson
    TALLY_BATCH_ROWS=64 "$TALLY" sp.ndjson -o out.ndjson
    "$TALLY" out.ndjson -o back.ndjson
    cmp out.ndjson back.ndjson
    "$TALLY" sp.ndjson --to csv > a.csv
    "$TALLY" out.ndjson --to csv > b.csv
    cmp a.csv b.csv
    [ "$(wc -l < out.ndjson)" -eq 3000 ]
    run_tally out.ndjson --agg 'n = count(), c = count(k0), s = sum(k0), t = max(s0), f = sum(f0)'
    assert_ok
    assert_out "n,c,s,t,f
3000,10,13500,s857,13965.0"
}

@test "many keys, every line has all of them: the same values as a narrow read" {
    awk 'BEGIN { for (i = 0; i < 20000; i++) {
        printf "{"; for (k = 0; k < 300; k++) printf "%s\"c%d\":%d", k ? "," : "", k, i + k
        printf "}\n" } }' > dense.ndjson
    printf '%s\n' '--threads 1' '--threads 2' 'TALLY_BATCH_ROWS=100 --threads 2' |
        tally_matrix --ok dense.ndjson --agg 'n = count(), a = sum(c0), b = sum(c299), m = max(c150)'
    matrix_result
    assert_out "n,a,b,m
20000,199990000,205970000,20149"
}

@test "peak memory of the 80,000-key file stays small (release build)" {
    is_asan && skip "ASan's memory is not the release build's"
    make_wide
    # rows x columns before sparse fields: 1.74 GB peak; now about 55 MB
    local kb
    kb=$(peak_kb wide.ndjson --agg 'n = count()')
    [ "$kb" -gt 0 ] && [ "$kb" -lt 200000 ] || { echo "peak RSS: $kb KB"; false; }
    kb=$(peak_kb wide.ndjson --agg 's = sum(k79999)')
    [ "$kb" -gt 0 ] && [ "$kb" -lt 200000 ] || { echo "peak RSS: $kb KB"; false; }
}

# ----------------------------------------------------------- --max-columns

@test "--max-columns: a new key past the cap names its line, exit 1, no output file" {
    make_wide
    run_tally wide.ndjson --agg 'n = count()' --max-columns 100 -o out.csv
    assert_err 1 "tally: wide.ndjson:101: more than 100 columns (--max-columns 100)"
    assert_only_files wide.ndjson
    run_tally wide.ndjson --agg 'n = count()' --max-columns=79999
    assert_err 1 "tally: wide.ndjson:80000: more than 79999 columns (--max-columns 79999)"
    run_tally wide.ndjson --agg 'n = count()' --max-columns 80000
    assert_ok
    assert_out "n
80000"
}

@test "--max-columns: one line with too many keys, a step naming a key past it, JSON, --schema" {
    printf '{"a":1}\n{"a":1,"b":2,"c":3,"d":4}\n' > one.ndjson
    run_tally one.ndjson --max-columns 3
    assert_err 1 "tally: one.ndjson:2: more than 3 columns (--max-columns 3)"
    make_wide
    run_tally wide.ndjson --select k5000 --max-columns 3000
    assert_err 1 "tally: wide.ndjson:3001: more than 3000 columns (--max-columns 3000)"
    # a line in a JSON document, and --schema columns not in the data
    printf '[{"a":1},\n{"b":2},\n{"c":3}]\n' > doc.json
    run_tally doc.json --max-columns 2
    assert_err 1 "tally: doc.json:3: more than 2 columns (--max-columns 2)"
    printf '{"a":1}\n' > a.ndjson
    run_tally a.ndjson --schema 'b:int' --max-columns 1
    assert_err 1 "tally: a.ndjson: more than 1 column (--max-columns 1)"
}

@test "--max-columns: a CSV or TSV header, --skip and --no-header" {
    python3 -c "
n = 1_000_001
print(','.join('c%d' % i for i in range(n)))
print(','.join('1' for i in range(n)))" > wide.csv
    run_tally wide.csv --agg 'n = count()'
    assert_err 1 "tally: wide.csv:1: more than 1000000 columns (--max-columns 1000000)"
    run_tally wide.csv --agg 'n = count()' --max-columns 1000001
    assert_ok
    assert_out "n
1"
    printf 'title\n\na,b,c\n1,2,3\n' > s.csv
    run_tally s.csv --skip 1 --max-columns 2
    assert_err 1 "tally: s.csv:3: more than 2 columns (--max-columns 2)"
    run_tally s.csv --skip 1 --max-columns 3
    assert_ok
    assert_out "a,b,c
1,2,3"
    printf 'a\tb\tc\n1\t2\t3\n' > t.tsv
    run_tally t.tsv --max-columns 2
    assert_err 1 "tally: t.tsv:1: more than 2 columns (--max-columns 2)"
    printf '1,2,3\n' > n.csv
    run_tally n.csv --no-header --max-columns 2
    assert_err 1 "tally: n.csv:1: more than 2 columns (--max-columns 2)"
}

@test "--max-columns in a pipeline file, and its usage errors" {
    printf 'a,b,c\n1,2,3\n' > t.csv
    printf '{"input": "t.csv", "max_columns": 2}' > p.json
    run_tally -f p.json
    assert_err 1 "tally: ./t.csv:1: more than 2 columns (--max-columns 2)"
    run_tally -f p.json --max-columns 3
    assert_ok
    assert_out "a,b,c
1,2,3"
    printf '{"input": "t.csv", "max_columns": 0}' > p0.json
    run_tally -f p0.json
    assert_err 2 "tally: p0.json: /max_columns: expected a count from 1 to 2147483647"
    run_tally t.csv --max-columns 0
    assert_err 2 'tally: --max-columns: expected a count from 1 to 2147483647, got "0"'
    run_tally t.csv --max-columns 2147483648
    assert_err 2 'tally: --max-columns: expected a count from 1 to 2147483647, got "2147483648"'
    run_tally t.csv --max-columns
    assert_err 2 'tally: option "--max-columns" needs a value'
}
