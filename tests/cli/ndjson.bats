#!/usr/bin/env bats
# run-cli: weight=5
# NDJSON input and output: types, flattening, round trips through CSV,
# JSON edge cases, the writer's spelling and warnings, and malformed lines
# (exit 1, file:line:column, no output file).

load helpers

setup() {
    enter_workdir
}

@test "read: types, nested keys flattened, arrays as JSON text, missing keys null" {
    write in.ndjson <<'EOF2'
{"id": 1, "name": "ann", "tags": ["a", "b"], "geo": {"lat": 1.5, "lon": -2}, "ok": true}
{"name": "bob", "id": 2, "geo": {"lat": 3}, "ok": false, "extra": null}
EOF2
    assert_run_out in.ndjson <<'EOF2'
id,name,tags,geo.lat,geo.lon,ok,extra
1,ann,"[""a"",""b""]",1.5,-2,true,
2,bob,,3.0,,false,
EOF2
    assert_run_out schema in.ndjson <<'EOF2'
column,type
id,int64
name,string
tags,string
geo.lat,float64
geo.lon,int64
ok,bool
extra,null
EOF2
}

@test "read: .jsonl suffix, --from ndjson and standard input" {
    printf '{"a":1}\n{"a":2}\n' > x.jsonl
    printf '{"a":1}\n{"a":2}\n' > x.txt
    assert_run_out x.jsonl --agg 's = sum(a)' <<'EOF2'
s
3
EOF2
    assert_run_out --from ndjson x.txt --agg 's = sum(a)' <<'EOF2'
s
3
EOF2
    run_tally_in '{"a":"x"}' --from ndjson -
    assert_ok
    assert_out $'a\nx'
}

@test "read: strings that are all dates are a date column, mixed numbers widen" {
    write in.ndjson <<'EOF2'
{"d": "2024-01-31", "n": 1, "m": true}
{"d": "2024-02-01", "n": 2.5, "m": 3}
EOF2
    assert_run_out schema in.ndjson <<'EOF2'
column,type
d,date
n,float64
m,string
EOF2
    assert_run_out in.ndjson <<'EOF2'
d,n,m
2024-01-31,1.0,true
2024-02-01,2.5,3
EOF2
}

@test "read: escapes, surrogate pairs, duplicate keys (last wins), huge integers" {
    write in.ndjson <<'EOF2'
{"s": "tab\there \"q\" \u00e9 \ud83d\ude00", "k": 1, "k": 2, "big": 123456789012345678901}
EOF2
    assert_run_out in.ndjson <<'EOF2'
s,k,big
"tab	here ""q"" é 😀",2,123456789012345678901
EOF2
}

@test "read: a key first seen late restarts the run with the new column" {
    { for i in 1 2 3; do echo "{\"a\":$i}"; done; echo '{"a":4,"b":"late"}'; } > in.ndjson
    TALLY_BATCH_ROWS=2 run_tally in.ndjson
    assert_ok
    assert_out $'a,b\n1,\n2,\n3,\n4,late'
}

@test "write: -o out.ndjson and --to ndjson spell every type" {
    write in.csv <<'EOF2'
i,f,s,b,d,t
1,2.5,"say ""hi""",true,2024-01-31,2024-01-31 12:00:00.5
,1e-05,,false,,
3,100.0,"",,,
EOF2
    run_tally in.csv -o out.ndjson
    assert_ok
    run cat out.ndjson
    assert_out <<'EOF2'
{"i":1,"f":2.5,"s":"say \"hi\"","b":true,"d":"2024-01-31","t":"2024-01-31 12:00:00.5"}
{"i":null,"f":1e-05,"s":null,"b":false,"d":null,"t":null}
{"i":3,"f":100.0,"s":"","b":null,"d":null,"t":null}
EOF2
    run_tally in.csv --select i,s --to ndjson
    assert_ok
    assert_out <<'EOF2'
{"i":1,"s":"say \"hi\""}
{"i":null,"s":null}
{"i":3,"s":""}
EOF2
    run_tally in.csv --select i --to jsonl --head 1
    assert_ok
    assert_out '{"i":1}'
}

@test "write: inf and nan become null with a warning; invalid UTF-8 becomes U+FFFD" {
    printf 'x,s\ninf,ok\nnan,\xff\n1.5,fine\n' > in.csv
    run_tally in.csv --to ndjson
    [ "$status" -eq 0 ]
    assert_out <<'EOF2'
{"x":null,"s":"ok"}
{"x":null,"s":"�"}
{"x":1.5,"s":"fine"}
EOF2
    [ "$stderr" = $'tally: warning: 2 inf/nan values written as null (JSON cannot hold them)\ntally: warning: 1 string held invalid UTF-8, replaced with U+FFFD' ] || { show; false; }
}

@test "write: control characters are escaped" {
    printf 's\n"a\nb\x01\x1f\\"\n' > in.csv
    run_tally in.csv --to ndjson
    assert_ok
    assert_out '{"s":"a\nb\u0001\u001f\\"}'
}

@test "round trip: CSV -> NDJSON -> CSV is identical" {
    cp "$DATA/sales.csv" .
    run_tally sales.csv -o sales.ndjson
    assert_ok
    run_tally sales.ndjson -o back.csv
    assert_ok
    cmp sales.csv back.csv
    cp "$EXAMPLES/sales.csv" big.csv
    run_tally big.csv -o big.ndjson
    assert_ok
    run_tally big.ndjson -o big2.csv
    assert_ok
    run_tally big.csv -o big1.csv
    cmp big1.csv big2.csv
}

@test "round trip: NDJSON -> NDJSON keeps values" {
    write in.ndjson <<'EOF2'
{"a":"\u0000\u001f\"\\/","b":-0.0,"c":1e300,"d":[1,{"e":null}],"f":{"g":{"h":true}}}
EOF2
    run_tally in.ndjson -o out.ndjson
    assert_ok
    run cat out.ndjson
    assert_out '{"a":"\u0000\u001f\"\\/","b":-0.0,"c":1e+300,"d":"[1,{\"e\":null}]","f.g.h":true}'
}

@test "group-by over NDJSON" {
    cp "$DATA/sales.csv" .
    run_tally sales.csv -o sales.ndjson
    run_tally sales.csv --group-by region --agg 'n = count(), s = sum(qty)' --sort region
    want=$output
    run_tally sales.ndjson --group-by region --agg 'n = count(), s = sum(qty)' --sort region
    assert_ok
    assert_out "$want"
}

@test "malformed line: exit 1, file:line:column, no output file" {
    printf '{"a":1}\n{"a":2}\n{"a": x}\n' > data.ndjson
    run_tally data.ndjson -o out.csv
    assert_err 1 'tally: data.ndjson:3:7: invalid value (expected a string, number, object, array, true, false or null)'
    assert_only_files data.ndjson
}

@test "malformed lines: each error names its place" {
    printf '{"a":1}\n{"a":"\\ud800"}\n' > d1.ndjson
    run_tally d1.ndjson -o out.ndjson
    assert_err 1 'tally: d1.ndjson:2:7: high surrogate not followed by a low surrogate \u escape'
    printf '{"a":1}\n[1,2]\n' > d2.ndjson
    run_tally d2.ndjson -o out.ndjson
    assert_err 1 'tally: d2.ndjson:2:1: an array where an object was expected (NDJSON holds one object per line)'
    printf '{"a":"x\n' > d3.ndjson
    run_tally d3.ndjson -o out.ndjson
    assert_err 1 'tally: d3.ndjson:1:8: unterminated string (the line ends here)'
    printf '{"a":1,\n"b":2}\n' > d4.ndjson
    run_tally d4.ndjson -o out.ndjson
    assert_err 1 'tally: d4.ndjson:1:1: an object over several lines (NDJSON holds one object per line; --from json reads JSON documents)'
    run_tally d4.ndjson --from ndjson
    assert_err 1 'tally: d4.ndjson:1:8: a key (a string in double quotes) expected (the line ends here)'
    printf '{"a":1} {"a":2}\n' > d5.ndjson
    run_tally d5.ndjson -o out.ndjson
    assert_err 1 'tally: d5.ndjson:1:9: unexpected text after the object (one object per line)'
    printf '{"\xc3\xa9":"\xff"}\n' > d6.ndjson
    run_tally d6.ndjson -o out.ndjson
    assert_err 1 'tally: d6.ndjson:1:7: invalid UTF-8 in a string'
    assert_only_files d1.ndjson d2.ndjson d3.ndjson d4.ndjson d5.ndjson d6.ndjson
}

@test "malformed line late in a large file leaves no partial output" {
    # one awk, not a shell loop: under bats every shell command is traced
    awk 'BEGIN { for (i = 1; i <= 100000; i++) printf "{\"a\":%d,\"b\":\"x%d\"}\n", i, i
                 print "{\"a\":1,\"b\":}" }' > big.ndjson
    run_tally big.ndjson -o out.ndjson
    assert_err 1 'tally: big.ndjson:100001:12: invalid value (expected a string, number, object, array, true, false or null)'
    assert_only_files big.ndjson
}

@test "--schema fixes types in NDJSON; a value that does not convert names its place" {
    printf '{"d":"2024-01-31","n":1}\n{"d":"soon","n":2}\n' > in.ndjson
    run_tally in.ndjson --schema 'n:float' --select n
    assert_ok
    assert_out $'n\n1.0\n2.0'
    run_tally in.ndjson --schema 'd:date' -o out.csv
    assert_err 1 'tally: in.ndjson:2:6: "soon" is not a valid date (column "d")'
    assert_only_files in.ndjson
}

@test "read: CRLF and lone CR line ends, blank lines, a BOM; dotted names quoted in expressions" {
    printf '\xef\xbb\xbf{"a":{"b":1}}\r\n\r\n{"a":{"b":2}}\r{"a":{"b":3}}' > in.ndjson
    assert_run_out in.ndjson --filter '"a.b" > 1' --select '"a.b" * 10 as x' <<'EOF2'
x
20
30
EOF2
}

@test "schema: an NDJSON file with no lines has no columns" {
    : > empty.ndjson
    run_tally schema empty.ndjson
    assert_ok
    assert_out 'column,type'
}
