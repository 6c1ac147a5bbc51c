#!/usr/bin/env bats
# JSON by content (formats/json_doc.c): a .json input holds NDJSON, one
# top-level array of objects, or objects one after another (pretty-printed
# or not); --from json forces the detection, --from ndjson does not.
# -o x.json / --to json write one JSON array; .ndjson/.jsonl stay NDJSON.
# Structural problems name the file, line and column, exit 1, and leave
# no output file.

load helpers

pretty() {
    cat > p.json <<'EOF'
[
  {
    "id": 1,
    "name": "Ann \"A\" Lee",
    "score": 9.5,
    "tags": ["x", "y"],
    "user": {"city": "Oslo"}
  },
  {
    "id": 2,
    "name": "Bo",
    "score": null,
    "tags": [],
    "user": {"city": "Åre"}
  }
]
EOF
}

PRETTY_CSV='id,name,score,tags,user.city
1,"Ann ""A"" Lee",9.5,"[""x"",""y""]",Oslo
2,Bo,,[],Åre'

@test "json: NDJSON in a .json file is read as NDJSON" {
    printf '{"a":1}\n{"a":2,"b":"x"}\n' > x.json
    assert_run_out x.json <<'EOF'
a,b
1,
2,x
EOF
}

@test "json: one array of objects, on one line or pretty-printed" {
    printf '[{"a":1},{"a":2}]' > one.json
    assert_run_out one.json <<'EOF'
a
1
2
EOF
    pretty
    assert_run_out p.json <<<"$PRETTY_CSV"
}

@test "json: objects one after another: pretty-printed, on one line, or touching" {
    printf '{\n  "a": 1\n}\n{\n  "a": 2\n}\n' > seq.json
    printf '{"a": 1} {"a": 2}' > line.json
    printf '{"a":1}{"a":2}' > touch.json
    for f in seq.json line.json touch.json; do
        assert_run_out "$f" <<'EOF'
a
1
2
EOF
    done
}

@test "json: a BOM, CRLF and lone CR line ends, blanks around the array" {
    printf '\xef\xbb\xbf\r\n  [\r\n {"a": 1},\r\n\r\n {\r"a": 2\r}\r\n]\r\n\r\n' > crlf.json
    printf '[\r{"a": 1},\r{\r"a": 2\r}\r]\r' > cr.json
    printf '{"a": 1}\r{\r"a": 2}\r' > cr.ndjson
    for f in crlf.json cr.json cr.ndjson; do
        assert_run_out "$f" <<'EOF'
a
1
2
EOF
    done
}

@test "json: an empty array, an empty file and a blank file have no rows" {
    printf '[\n\t\n]' > ea.json
    : > e.json
    printf ' \n\n' > b.json
    for f in ea.json e.json b.json; do
        run_tally "$f"
        assert_ok
        assert_out ''
    done
    run_tally schema ea.json
    assert_ok
    assert_out 'column,type'
}

@test "json: --from json detects, standard input too; --from ndjson stays NDJSON" {
    pretty
    cp p.json p.txt
    assert_run_out --from json p.txt <<<"$PRETTY_CSV"
    run --separate-stderr bash -c '"$1" - < p.json' _ "$TALLY"
    assert_ok
    assert_out "$PRETTY_CSV"
    run_tally_in '[{"a":1}]' -
    assert_ok
    assert_out $'a\n1'
    run_tally --from ndjson p.json
    assert_err 1 'tally: p.json:1:1: an array where an object was expected (NDJSON holds one object per line)'
}

@test "json: a .ndjson or .jsonl file that holds a document names --from json" {
    pretty
    cp p.json p.jsonl
    run_tally p.jsonl -o out.csv
    assert_err 1 'tally: p.jsonl:1:1: a JSON array, not NDJSON (NDJSON holds one object per line; --from json reads JSON documents)'
    printf '{"a": 1}\n\n  {\n  "a": 2\n}\n' > s.ndjson
    run_tally s.ndjson -o out.csv
    assert_err 1 'tally: s.ndjson:3:3: an object over several lines (NDJSON holds one object per line; --from json reads JSON documents)'
    assert_only_files p.json p.jsonl s.ndjson
    assert_run_out --from json p.jsonl <<<"$PRETTY_CSV"
    assert_run_out --from json s.ndjson <<'EOF'
a
1
2
EOF
}

@test "json: a compressed document; --with-filename" {
    pretty
    gzip -c p.json > p.json.gz
    assert_run_out p.json.gz <<<"$PRETTY_CSV"
    printf '{\n  "id": 3\n}\n' > q.json
    assert_run_out p.json q.json --with-filename --select 'filename, id' <<'EOF'
filename,id
p.json,1
p.json,2
q.json,3
EOF
    run_tally_in $'{\n  "id": 3\n}\n{"id": 4}' -
    assert_ok
    assert_out $'id\n3\n4'
}

@test "json: pipelines over a document: filter, group-by, sort" {
    pretty
    assert_run_out p.json --filter 'id > 1' --select 'name, "user.city"' <<'EOF'
name,user.city
Bo,Åre
EOF
}

@test "json: structural errors name the line and column, exit 1, leave no file" {
    printf '[\n  {"a": 1},\n  {"a": 2}\n  {"a": 3}\n]\n' > e1.json
    run_tally e1.json -o out.csv
    assert_err 1 "tally: e1.json:4:3: expected ',' or ']' after the object, found an object"
    printf '[{"a":1}, 2]' > e2.json
    run_tally e2.json -o out.csv
    assert_err 1 "tally: e2.json:1:11: expected an object (a row) after ',', found a number"
    printf '[\n  [1, 2]\n]' > e3.json
    run_tally e3.json
    assert_err 1 "tally: e3.json:2:3: expected an object (a row) or ']', found an array"
    printf '[{"a":1},]' > e4.json
    run_tally e4.json
    assert_err 1 "tally: e4.json:1:10: expected an object (a row) after ',', found ']'"
    printf '[{"a":1}]\n[{"a":2}]\n' > e5.json
    run_tally e5.json
    assert_err 1 "tally: e5.json:2:1: expected the end of the file after the array's ']' (a .json file holds one array of objects), found an array"
    printf '[\n  {"a": 1}' > e6.json
    run_tally e6.json
    assert_err 1 "tally: e6.json:2:11: expected ',' or ']' after the object, found the end of the file"
    printf '[\n  {"a": [1, 2}\n]' > e7.json
    run_tally e7.json
    assert_err 1 "tally: e7.json:2:14: expected ']' to close the array that opens at 2:9, found '}'"
    printf '[\n  {"a": "x\n"}\n]' > e8.json
    run_tally e8.json
    assert_err 1 "tally: e8.json:2:11: unterminated string (the line ends here)"
    printf '[{"a": 1}, {"b": "x' > e9.json
    run_tally e9.json
    assert_err 1 "tally: e9.json:1:20: the file ends inside the string that opens at 1:18"
    printf '[\n  {"a": {"b": 1}\n' > e10.json
    run_tally e10.json
    assert_err 1 "tally: e10.json:3:1: the file ends inside the object that opens at 2:3"
    printf '{"a": 1},\n{"a": 2}\n' > e11.json
    run_tally e11.json
    assert_err 1 "tally: e11.json:1:9: expected '{' (the next object) or the end of the file, found ','"
    printf '%s' "$(printf '[%.0s' $(seq 1025))" > e12.json
    run_tally e12.json
    assert_err 1 "tally: e12.json:1:2: expected an object (a row) or ']', found an array"
    printf '[{"a":%s1%s}]' "$(printf '[%.0s' $(seq 1025))" "$(printf ']%.0s' $(seq 1025))" > e13.json
    run_tally e13.json
    assert_err 1 "tally: e13.json:1:1031: arrays and objects nested too deeply (more than 1024 levels)"
    # as deep as the NDJSON reader goes: the object and 1024 levels in it
    printf '[{"a":%s1%s}]' "$(printf '[%.0s' $(seq 1024))" "$(printf ']%.0s' $(seq 1024))" > deep.json
    run_tally deep.json --select 'length(a) as n'
    assert_ok
    assert_out $'n\n2049'
    rm deep.json
    assert_only_files e1.json e2.json e3.json e4.json e5.json e6.json e7.json e8.json \
        e9.json e10.json e11.json e12.json e13.json
}

@test "json: a top-level scalar is not a table" {
    printf '42\n' > n.json
    run_tally n.json
    assert_err 1 'tally: n.json:1:1: expected an array of objects or objects one after another, found a number'
    printf '\n  "duck"' > s.json
    run_tally s.json
    assert_err 1 'tally: s.json:2:3: expected an array of objects or objects one after another, found a string'
    printf 'null' > z.json
    run_tally z.json
    assert_err 1 'tally: z.json:1:1: expected an array of objects or objects one after another, found null'
    printf '[true]' > t.json
    run_tally t.json
    assert_err 1 "tally: t.json:1:2: expected an object (a row) or ']', found true"
    printf "'[]" > q.json
    run_tally q.json
    assert_err 1 "tally: q.json:1:1: expected an array of objects or objects one after another, found '''"
}

@test "json: errors inside objects name the document's line and column" {
    printf '[\n  {"a": 1},\n  {\n    "a": 2,\n    "b": tru\n  }\n]\n' > v.json
    run_tally v.json
    assert_err 1 'tally: v.json:5:10: invalid value (expected a string, number, object, array, true, false or null)'
    printf '[\n  {"a": 1},\n  {\n    "a":   "x"\n  }\n]\n' > t.json
    run_tally t.json --schema a:int
    assert_err 1 'tally: t.json:4:12: "x" is not a valid int64 (column "a")'
    printf '\xef\xbb\xbf{"a": 1}{\n"a": 2, "é": x}' > u.json
    run_tally u.json
    assert_err 1 'tally: u.json:2:14: invalid value (expected a string, number, object, array, true, false or null)'
}

@test "json: records before a structural problem are checked first" {
    # the bad value on line 3 comes before the missing ',' on line 5
    printf '[\n  {"a": 1},\n  {"a": 1x},\n  {"a": 2}\n  {"a": 3}\n]\n' > f.json
    run_tally f.json
    assert_err 1 "tally: f.json:3:10: ',' or '}' expected"
    for t in 1 2 4; do
        TALLY_BATCH_ROWS=1 run_tally f.json --threads "$t"
        assert_err 1 "tally: f.json:3:10: ',' or '}' expected"
    done
}

@test "json: widened types and late keys read again, the same for every thread count" {
    {
        printf '[\n'
        for i in $(seq 1 300); do printf '  {\n    "id": %d,\n    "v": %d\n  },\n' "$i" "$i"; done
        printf '  {\n    "id": 301,\n    "v": 0.5,\n    "late": "yes"\n  }\n]\n'
    } > w.json
    tally_matrix --ok w.json <<'EOF'
--threads 1
--threads 2
--threads 4
TALLY_BATCH_ROWS=1 --threads 1
TALLY_BATCH_ROWS=7 --threads 4
TALLY_BATCH_ROWS=64 --threads 2
EOF
    [ "$(head -n 2 mx/want.out)" = $'id,v,late\n1,1.0,' ]
    [ "$(tail -n 1 mx/want.out)" = '301,0.5,yes' ]
    run_tally w.json --agg 'n = count(), s = sum(v), l = max(late)'
    assert_ok
    assert_out $'n,s,l\n301,45150.5,yes'
}

@test "json: --sorted names the document line of the record" {
    printf '[\n  {"k": "a"},\n  {"k": "b"},\n\n  {\n    "k": "a"\n  }\n]\n' > so.json
    for t in 1 2; do
        run_tally so.json --sorted --group-by k --agg 'n = count()' --threads "$t"
        assert_err 1 'tally: so.json:5: --sorted: key k="a" reappears after its run ended'
    done
}

@test "json: -o x.json and --to json write one JSON array; [] when empty" {
    pretty
    run_tally p.json -o out.json
    assert_ok
    cat > want.json <<'EOF'
[
{"id":1,"name":"Ann \"A\" Lee","score":9.5,"tags":"[\"x\",\"y\"]","user.city":"Oslo"},
{"id":2,"name":"Bo","score":null,"tags":"[]","user.city":"Åre"}
]
EOF
    cmp out.json want.json
    run_tally p.json --to json
    assert_ok
    assert_out "$(cat want.json)"
    run_tally p.json --filter 'id > 5' -o none.json
    assert_ok
    [ "$(cat none.json)" = "[]" ]
    run_tally p.json --select id --head 1 --to json
    assert_ok
    assert_out $'[\n{"id":1}\n]'
    run_tally p.json --select id --to json -o out.csv
    assert_ok
    [ "$(cat out.csv)" = $'[\n{"id":1},\n{"id":2}\n]' ]
}

@test "json: .ndjson, .jsonl and --to ndjson stay one object a line" {
    printf '[{"a":1},{"a":2}]' > a.json
    run_tally a.json -o o.ndjson
    assert_ok
    run_tally a.json -o o.jsonl
    assert_ok
    [ "$(cat o.ndjson)" = $'{"a":1}\n{"a":2}' ]
    cmp o.ndjson o.jsonl
    run_tally a.json --to ndjson
    assert_ok
    assert_out $'{"a":1}\n{"a":2}'
    run_tally a.json -o o.json.gz
    assert_ok
    [ "$(gzip -dc o.json.gz)" = $'[\n{"a":1},\n{"a":2}\n]' ]
}

@test "json: a JSON array over every batch and thread count is the same bytes" {
    seq 1 5000 | awk 'BEGIN { print "id,name" } { print $1 ",n" $1 }' > big.csv
    tally_matrix --ok --out big.json big.csv -o big.json <<'EOF'
--threads 1
--threads 4
TALLY_BATCH_ROWS=1 --threads 2
TALLY_BATCH_ROWS=333 --threads 4
EOF
    head -n 3 mx/want.file > head.txt
    tail -n 2 mx/want.file > tail.txt
    [ "$(cat head.txt)" = $'[\n{"id":1,"name":"n1"},\n{"id":2,"name":"n2"},' ]
    [ "$(cat tail.txt)" = $'{"id":5000,"name":"n5000"}\n]' ]
}

@test "json: round trip CSV -> .json -> tally gives the same values" {
    cat > r.csv <<'EOF'
id,name,amount,ok,note
1,"Lee, Ann",12.5,true,"say ""hi"""
2,Bo,-3.0,false,
3,Åsa,1e-05,true,"two
lines"
4,"",0.1,,tab	here
EOF
    run_tally r.csv -o r.json
    assert_ok
    run_tally r.json
    assert_ok
    assert_out "$(cat r.csv)"
    run_tally r.json -o back.csv
    assert_ok
    cmp r.csv back.csv
}

@test ".geojson is read as JSON; JSON lines under another suffix name --from in a quote error" {
    printf '{"type":"FeatureCollection","features":[{"id":1}]}\n' > f.geojson
    assert_run_out f.geojson <<'EOF2'
type,features
FeatureCollection,"[{""id"":1}]"
EOF2
    printf '{"id":1,"name":"a"}\n{"id":2,"name":"b"}\n' > f.geojsonl
    run_tally f.geojsonl
    assert_err 1 "tally: f.geojsonl:1:15: unexpected character after closing quote (read as CSV, but the input starts with '{' as JSON does: --from ndjson reads JSON lines, --from json JSON documents)"
    assert_run_out f.geojsonl --from ndjson <<'EOF2'
id,name
1,a
2,b
EOF2
}
