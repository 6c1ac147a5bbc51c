#!/usr/bin/env bats
# NDJSON line shapes (formats/ndjson_scan.c, parse_shaped): a line with the
# previous line's keys in the same order is read by a shorter road; any
# other line (keys reordered, added or dropped, nested values, whitespace,
# long keys, escapes, bad values) is read again by the ordinary parser.
# Both roads must give the same values, and the errors (named by line and
# column) must be the ordinary parser's, also in a column not projected.

load helpers

@test "ndjson shapes: lines that keep, change and break the previous line's keys" {
    write in.ndjson <<'EOF'
{"id":1,"name":"ann","score":1.5,"tag":"x"}
{"id":2,"name":"bob","score":-0.25,"tag":"y"}
{"id":3,"name":"caf\u00e9 \"q\"","score":10,"tag":"z"}
{"id":4,"name":"día","score":1e2,"tag":"w"}
{"id": 5, "name": "eve", "score": 2.0, "tag": "v"}
{"name":"fay","id":6,"score":3,"tag":"u"}
{"name":"gus","id":7,"score":-0,"tag":"t"}
{"name":"hal","id":8,"score":5,"tag":"s","extra":true}
{"name":"ivy","id":9,"score":6}
{"name":"jo","id":10,"score":7,"tag":{"n":1}}
{"name":"kim","id":11,"score":8,"tag":[1, {"k" : "v"}]}
{"name":"lee","id":12,"score":9,"tag":null,"name":"lee2"}
{"name":"mo","id":13,"score":123456789012345.5,"tag":"a_string_longer_than_sixteen_bytes"}
{"name":"ned","id":-9223372036854775808,"score":0.0,"tag":"\ud83d\ude00"}
	{"name" :"oz","id":15 ,"score":1 , "tag":"r"}  
{"name":"pat","id":16,"score":1,"tag":"q"}
EOF
    write want.csv <<'EOF'
id,name,score,tag,extra,tag.n
1,ann,1.5,x,,
2,bob,-0.25,y,,
3,"café ""q""",10.0,z,,
4,día,100.0,w,,
5,eve,2.0,v,,
6,fay,3.0,u,,
7,gus,-0.0,t,,
8,hal,5.0,s,true,
9,ivy,6.0,,,
10,jo,7.0,,,1
11,kim,8.0,"[1,{""k"":""v""}]",,
12,lee2,9.0,,,
13,mo,123456789012345.5,a_string_longer_than_sixteen_bytes,,
-9223372036854775808,ned,0.0,😀,,
15,oz,1.0,r,,
16,pat,1.0,q,,
EOF
    for rows in "" 2 7; do
        for t in $(matrix_threads 1 2 7); do
            TALLY_BATCH_ROWS=$rows "$TALLY" in.ndjson --threads "$t" -o out.csv
            cmp want.csv out.csv
        done
    done
    # only some columns projected: the others are still read (and skipped)
    run_tally in.ndjson --select 'name, "tag.n"'
    assert_ok
    assert_out <<'EOF'
name,tag.n
ann,
bob,
"café ""q""",
día,
eve,
fay,
gus,
hal,
ivy,
jo,1
kim,
lee2,
mo,
ned,
oz,
pat,
EOF
    run_tally in.ndjson --select id --where 'id > 12'
    assert_ok
    assert_out <<'EOF'
id
13
15
16
EOF
}

@test "ndjson shapes: long keys that share their first bytes, in both orders" {
    local a=a_key_longer_than_sixteen_ f=fourteen_key_ g=fifteen_chars_ s=sixteen_chars__
    awk -v a=$a -v f=$f -v g=$g -v s=$s 'BEGIN {
        for (i = 0; i < 6; i++) {
            x = (i % 4 < 2) ? 1 : 2; y = 3 - x; v = 10 * i
            printf "{\"%s%d\":%d,\"%s%d\":%d,\"%s%d\":%d,\"%s%d\":%d,", a, x, v + 1, a, y, v + 2, f, x, v + 3, f, y, v + 4
            printf "\"%s%d\":%d,\"%s%d\":%d,\"%s%d\":%d,\"%s%d\":%d}\n", g, x, v + 5, g, y, v + 6, s, x, v + 7, s, y, v + 8
        }
    }' > in.ndjson
    assert_run_out in.ndjson <<EOF
${a}1,${a}2,${f}1,${f}2,${g}1,${g}2,${s}1,${s}2
1,2,3,4,5,6,7,8
11,12,13,14,15,16,17,18
22,21,24,23,26,25,28,27
32,31,34,33,36,35,38,37
41,42,43,44,45,46,47,48
51,52,53,54,55,56,57,58
EOF
}

# bad LINE MESSAGE: three good lines of one shape, then LINE, then a good
# one; reading only "id" fails with MESSAGE and leaves no output file.
bad() {
    printf '%s\n' '{"id":1,"v":"a"}' '{"id":2,"v":2.5}' '{"id":3,"v":"c"}' "$1" \
        '{"id":5,"v":5}' > in.ndjson
    run_tally in.ndjson --select id -o out.csv
    assert_err 1 "tally: in.ndjson:$2"
    assert_only_files in.ndjson
    rm in.ndjson
}

@test "ndjson shapes: a bad value in a column not read is still an error, named by line and column" {
    bad '{"id":4,"v":1.}' "4:15: invalid number (a digit expected after '.')"
    bad '{"id":4,"v":1e}' "4:15: invalid number (a digit expected in the exponent)"
    bad '{"id":4,"v":-}' "4:14: invalid number (a digit expected)"
    bad '{"id":4,"v":01}' "4:14: ',' or '}' expected"
    bad '{"id":4,"v":tru}' "4:13: invalid value (expected a string, number, object, array, true, false or null)"
    bad '{"id":4,"v":"a\qb"}' "4:15: invalid escape in a string"
    bad $'{"id":4,"v":"a\tb"}' "4:15: control character in a string (must be escaped)"
    bad '{"id":4,"v":"\ud800"}' "4:14: high surrogate not followed by a low surrogate \\u escape"
    bad $'{"id":4,"v":"\xff"}' "4:14: invalid UTF-8 in a string"
    bad '{"id":4,"v":[1,}' "4:16: invalid value (expected a string, number, object, array, true, false or null)"
    bad '{"id":4,"v":"x",}' "4:17: a key (a string in double quotes) expected"
    bad '{"id":4 "v":1}' "4:9: ',' or '}' expected"
    bad '{"id":4,"v":1' "4:14: ',' or '}' expected (the line ends here)"
    bad '{"id":4,"v":1}x' "4:15: unexpected text after the object (one object per line)"
}
