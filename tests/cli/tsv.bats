#!/usr/bin/env bats
# TSV follows the IANA text/tab-separated-values format: no quoting on input
# (quotes are data), backslash escapes \t \n \r \\ decoded on input and
# written on output (never CSV quoting), an empty field and \N read as null,
# null written as an empty field unless --out-null; --out-no-header.

load helpers

@test "quotes in a TSV field are data" {
    printf 'name\tn\n"Weird Al" Yankovic\t1\n"open\t2\nclose"\t3\n' > q.tsv
    assert_run_out q.tsv --to ndjson <<'EOF'
{"name":"\"Weird Al\" Yankovic","n":1}
{"name":"\"open","n":2}
{"name":"close\"","n":3}
EOF
}

@test "escapes \\t \\n \\r \\\\ are decoded on input, other backslashes kept" {
    printf 'a\tn\nx\\ty\\nz\\rw\\\\v\\q\t1\n' > e.tsv
    assert_run_out e.tsv --to ndjson <<'EOF'
{"a":"x\ty\nz\rw\\v\\q","n":1}
EOF
}

@test "header names are decoded too" {
    printf 'a\\tb\tc\n1\t2\n' > h.tsv
    assert_run_out h.tsv --select '"a	b" as x' <<'EOF'
x
1
EOF
}

@test "an empty field and \\N read as null, in string and number columns" {
    printf 's\tn\n\t\\N\n\\N\t\nx\t3\n' > n.tsv
    assert_run_out n.tsv --with 'sn = s is null' --with 'nn = n is null' <<'EOF'
s,n,sn,nn
,,true,true
,,true,true
x,3,false,false
EOF
    run_tally schema n.tsv
    assert_ok
    assert_out "$(printf 'column,type\ns,string\nn,int64')"
}

@test "TSV output escapes tab, newline, CR and backslash and never quotes" {
    printf 'a,b\n"tab\there","two\nlines"\n"cr\rx","back\\slash ""q"""\n' > v.csv
    assert_run_out v.csv --to tsv <<'EOF'
a	b
tab\there	two\nlines
cr\rx	back\\slash "q"
EOF
    # every line has exactly one tab: cut -f works
    run bash -c "'$TALLY' v.csv --to tsv | cut -f2"
    [ "$output" = "$(printf '%s\n' b 'two\nlines' 'back\\slash "q"')" ]
}

@test "round trip: TSV with tabs, newlines, CRs, backslashes and quotes -> TSV -> same values" {
    printf 'k\tv\n1\ta\\tb\n2\tline\\nbreak\n3\tcr\\rhere\n4\tback\\\\slash\n5\t"quoted"\n6\t\\\\N\n' > in.tsv
    run_tally in.tsv -o out.tsv
    assert_ok
    cmp in.tsv out.tsv
    # and through CSV and NDJSON and back to TSV: the same values
    run_tally in.tsv -o mid.csv
    assert_ok
    run_tally mid.csv -o back.tsv
    assert_ok
    cmp in.tsv back.tsv
    run_tally in.tsv -o mid.ndjson
    assert_ok
    run_tally mid.ndjson -o back2.tsv
    assert_ok
    cmp in.tsv back2.tsv
}

@test "the string \\N (escaped as \\\\N) stays a string, null does not" {
    printf 'v\n\\\\N\n\\N\n' > s.tsv
    assert_run_out s.tsv --with 'isnull = v is null' --to ndjson <<'EOF'
{"v":"\\N","isnull":false}
{"v":null,"isnull":true}
EOF
}

@test "TSV output writes null as an empty field, so null and the empty string are one" {
    printf 'id,v\n1,""\n2,\n' > n.csv
    run_tally n.csv --to tsv
    assert_ok
    assert_out "$(printf 'id\tv\n1\t\n2\t')"
    assert_run_out n.csv --to tsv --out-null '\N' <<'EOF'
id	v
1	
2	\N
EOF
}

@test "--out-null for CSV output; a string spelled like it is quoted" {
    printf 'id,v\n1,\n2,NA\n3,""\n' > n.csv
    assert_run_out n.csv --out-null NA <<'EOF'
id,v
1,NA
2,"NA"
3,""
EOF
}

@test "--out-no-header writes no header line, --no-header is about the input" {
    printf 'a,b\n1,2\n' > h.csv
    assert_run_out h.csv --out-no-header <<'EOF'
1,2
EOF
    assert_run_out h.csv --to tsv --out-no-header <<'EOF'
1	2
EOF
    assert_run_out h.csv --no-header <<'EOF'
column1,column2
a,b
1,2
EOF
}

@test "--out-null and --out-no-header are usage errors for NDJSON output" {
    printf 'a\n1\n' > x.csv
    run_tally x.csv --to ndjson --out-null NA
    assert_err 2 "tally: --out-null applies to CSV and TSV output, not ndjson"
    run_tally x.csv --to ndjson --out-no-header
    assert_err 2 "tally: --out-no-header applies to CSV and TSV output, not ndjson"
}

@test "--out-null text that would break a field is refused" {
    printf 'a\n1\n' > x.csv
    run_tally x.csv --out-null 'a,b'
    assert_err 2 'tally: --out-null "a,b": csv output cannot write null as text holding a quote, a line break or the delimiter'
    run_tally x.csv --to tsv --out-null "$(printf 'a\tb')"
    assert_err 2 'tally: --out-null "a\tb": tsv output cannot write null as text holding a tab, a line break'
}

@test "--null STR replaces \\N as TSV's null text" {
    printf 'v\nNA\n\\N\nx\n' > n.tsv
    assert_run_out n.tsv --null NA --with 'isnull = v is null' <<'EOF'
v,isnull
,true
\N,false
x,false
EOF
}

@test "a ragged TSV row names its line" {
    printf 'a\tb\n1\t2\t3\n' > r.tsv
    run_tally r.tsv
    assert_err 1 "tally: r.tsv:2: expected 2 fields, found 3 (TSV, delimiter '\\t'; --ragged skip drops such rows)"
}

@test "a large TSV with stray quotes reads the same with any thread count and batch size" {
    awk 'BEGIN { print "i\ts"; for (i = 0; i < 100000; i++) printf "%d\t%s\n", i, (i % 1000 == 0 ? "\"open" : "x\"" i "\"\\t") }' > big.tsv
    run_tally big.tsv -o one.tsv --threads 1
    assert_ok
    cmp big.tsv one.tsv
    TALLY_BATCH_ROWS=100 run_tally big.tsv -o many.tsv --threads 4
    assert_ok
    cmp big.tsv many.tsv
    # a quote opening a field on one line and one closing it on the next
    awk 'BEGIN { print "a\tb"; for (i = 0; i < 20000; i++) { printf "%d\t\"q\n", i; printf "\"\t%d\n", i } }' > span.tsv
    TALLY_BATCH_ROWS=7 run_tally span.tsv -o span_out.tsv --threads 3
    assert_ok
    cmp span.tsv span_out.tsv
}
