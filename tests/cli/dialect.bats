#!/usr/bin/env bats
# CSV dialects: the delimiter sniffed from the first records (among , ; |
# and tab; the suffix breaks ties; --delimiter overrides), and the hints
# field-count errors give about it; --decimal-comma.  Quote and escape:
# dialect_quote.bats.

load helpers

@test "sniffing: a semicolon file with decimal commas reads as semicolon-separated" {
    printf 'name;price;n\nanvil;1,5;2\nbolt;0,25;10\n' > semi.csv
    assert_run_out semi.csv <<'EOF'
name,price,n
anvil,"1,5",2
bolt,"0,25",10
EOF
}

@test "sniffing: pipe and tab in a .csv file, from standard input too" {
    printf 'a|b|c\n1|2|3\n' > pipe.csv
    assert_run_out pipe.csv <<'EOF'
a,b,c
1,2,3
EOF
    run_tally_in "$(printf 'a\tb\n1\t2\n')" -
    assert_ok
    assert_out "$(printf 'a,b\n1,2')"
}

@test "sniffing: a comma file stays comma-separated though its values hold semicolons" {
    printf 'id,note\n1,a;b\n2,c;d\n' > c.csv
    assert_run_out c.csv <<'EOF'
id,note
1,a;b
2,c;d
EOF
}

@test "sniffing: delimiters inside quoted fields do not count" {
    printf 'a;b\n"x,y,z";1\n"p,q,r";2\n' > q.csv
    assert_run_out q.csv --select b <<'EOF'
b
1
2
EOF
}

@test "sniffing: most fields wins, and a tie goes to the suffix's delimiter" {
    printf 'a;b;c,d\n1;2;3,4\n' > most.csv
    assert_run_out most.csv <<'EOF'
a,b,"c,d"
1,2,"3,4"
EOF
    # both , and tab give 2 fields: .csv takes the comma, .tsv the tab
    printf 'a,b\tc\n1,2\t3\n' > tie.csv
    cp tie.csv tie.tsv
    assert_run_out tie.csv <<'EOF'
a,b	c
1,2	3
EOF
    assert_run_out tie.tsv <<'EOF'
"a,b",c
"1,2",3
EOF
}

@test "sniffing: --delimiter overrides it" {
    printf 'a;b;c,d\n1;2;3,4\n' > o.csv
    assert_run_out o.csv --delimiter , <<'EOF'
a;b;c,d
1;2;3,4
EOF
    assert_run_out o.csv --delimiter '|' --select 'length("a;b;c,d") as n' <<'EOF'
n
7
EOF
}

@test "sniffing: the right side of a join is sniffed on its own" {
    printf 'id,x\n1,a\n2,b\n' > left.csv
    printf 'id;y\n1;p\n2;q\n' > right.csv
    assert_run_out left.csv --join right.csv --on id <<'EOF'
id,x,y
1,a,p
2,b,q
EOF
}

@test "sniffing: a record cut by the end of the 64 KiB sample does not count" {
    # the third record runs past 64 KiB with its commas there: counted as
    # cut (1 comma-field) it would make the comma inconsistent and the
    # semicolon win; left out, the comma gives the most fields
    { printf 'a;b,c,d\n1;2,3,4\n5;'; head -c 65536 /dev/zero | tr '\0' x; printf ',7,8\n'; } > cut.csv
    assert_run_out cut.csv --select c,d <<'EOF'
c,d
3,4
7,8
EOF
}

@test "sniffing: a ragged semicolon file fails naming the sniffed delimiter" {
    printf 'a;b\n1;2\n3;4;5\n' > rag.csv
    run_tally rag.csv
    assert_err 1 "tally: rag.csv:3: expected 2 fields, found 3 (CSV, delimiter ';' sniffed from the first records: --delimiter sets it; --ragged skip drops such rows)"
}

@test "a file read as one column whose header holds another delimiter suggests --delimiter" {
    printf 'a;b\n1;2\n3,4\n' > one.csv
    run_tally one.csv --delimiter ,
    assert_err 1 "tally: one.csv:3: expected 1 field, found 2 (read as one column, but the header holds ';': try --delimiter ';'; --ragged skip drops such rows)"
    printf 'a|b\n1;2\n' > two.csv
    run_tally two.csv --delimiter ';'
    assert_err 1 "tally: two.csv:2: expected 1 field, found 2 (read as one column, but the header holds '|': try --delimiter '|'; --ragged skip drops such rows)"
}

@test "a ragged row's error names the dialect and --ragged" {
    printf 'a,b\n1,2\n3,4,5\n' > r.csv
    run_tally r.csv
    assert_err 1 "tally: r.csv:3: expected 2 fields, found 3 (CSV, delimiter ','; --ragged skip drops such rows)"
    printf 'a,b\n1,2\n3\n' > s.csv
    run_tally s.csv
    assert_err 1 "tally: s.csv:3: expected 2 fields, found 1 (CSV, delimiter ','; --ragged pad or skip reads such rows)"
}

@test "--ragged pad fills short rows with nulls; a long row stays an error" {
    printf 'a,b,c\n1,2,3\n4,5\n6\n' > p.csv
    assert_run_out p.csv --ragged pad --with 'cnull = c is null' <<'EOF'
a,b,c,cnull
1,2,3,false
4,5,,true
6,,,true
EOF
    printf 'a,b\n1,2\n3,4,5\n' > l.csv
    run_tally l.csv --ragged pad
    assert_err 1 "tally: l.csv:3: expected 2 fields, found 3 (CSV, delimiter ','; --ragged skip drops such rows)"
}

@test "--ragged skip drops rows of another field count" {
    printf 'a,b\n1,2\n3\n4,5,6\n7,8\n' > k.csv
    assert_run_out k.csv --ragged skip <<'EOF'
a,b
1,2
7,8
EOF
}

@test "--ragged pad and skip agree with a padded file through filters, projections and threads" {
    awk 'BEGIN { print "a,b,c"; for (i = 0; i < 50000; i++) if (i % 10 == 3) printf "%d,x%d\n", i, i; else printf "%d,x%d,s%d\n", i, i, i }' > pad.csv
    awk -F, 'NR == 1 || NF == 3 { print; next } { print $0 "," }' pad.csv > padded.csv
    run_tally padded.csv --filter 'a % 997 = 3' --select c,b
    assert_ok
    local want=$output
    TALLY_BATCH_ROWS=1000 run_tally pad.csv --ragged pad --filter 'a % 997 = 3' --select c,b --threads 3
    assert_ok
    assert_out "$want"
    run_tally pad.csv --ragged skip --agg 'n = count()'
    assert_ok
    assert_out "$(printf 'n\n45000')"
}

@test "--ragged takes error, pad or skip" {
    printf 'a\n1\n' > x.csv
    run_tally x.csv --ragged maybe
    assert_err 2 'tally: --ragged: expected error, pad or skip, got "maybe"'
}

@test "--skip N skips a preamble before the header; lines keep their numbers" {
    printf 'Report of 2024\r\nexported by "X\r\na;b\r\n1;2\r\n3;4;5\r\n' > pre.csv
    run_tally pre.csv --skip 2
    assert_err 1 "tally: pre.csv:5: expected 2 fields, found 3 (CSV, delimiter ';' sniffed from the first records: --delimiter sets it; --ragged skip drops such rows)"
    assert_run_out pre.csv --skip 2 --ragged skip <<'EOF'
a,b
1,2
EOF
    # more lines than the file has: no columns, no rows
    run_tally pre.csv --skip 9
    assert_ok
    assert_out ""
}

@test "--skip takes a non-negative integer" {
    printf 'a\n1\n' > x.csv
    run_tally x.csv --skip -1
    assert_err 2 'tally: --skip: expected a non-negative integer, got "-1"'
}

@test "--quote none reads quotes in CSV as data" {
    printf 'a,b\n"x,1\n2",3\n' > nq.csv
    assert_run_out nq.csv --to ndjson <<'EOF'
{"a":"x,1\n2","b":3}
EOF
    assert_run_out nq.csv --quote none --to ndjson <<'EOF'
{"a":"\"x","b":1}
{"a":"2\"","b":3}
EOF
}

@test "--quote '\"' turns quoting on for TSV (escapes are still decoded)" {
    printf 'a\tb\n"x\ty"\t1\n"q""r\\\\s"\t2\n' > qt.tsv
    assert_run_out qt.tsv --quote '"' --to ndjson <<'EOF'
{"a":"x\ty","b":1}
{"a":"q\"r\\s","b":2}
EOF
}

@test "pipeline files take skip, ragged, quote, out_null and out_no_header" {
    printf 'junk "\na,b\n"1,2\n;x\n3\n' > pj.csv
    printf '{"input": "pj.csv", "skip": 1, "ragged": "pad", "quote": "none", "comment": ";", "out_null": "NA", "out_no_header": true}\n' > pj.json
    assert_run_out -f pj.json <<'EOF'
"""1",2
3,NA
EOF
    printf '{"input": "pj.csv", "ragged": "maybe"}\n' > bad.json
    run_tally -f bad.json
    assert_err 2 'tally: bad.json: /ragged: expected "error", "pad" or "skip"'
    printf '{"input": "pj.csv", "quote": "xy"}\n' > bad2.json
    run_tally -f bad2.json
    assert_err 2 "tally: bad2.json: /quote: expected a single character such as \"'\" or \"none\""
}

@test "--comment C skips lines starting with C, before and after the header" {
    printf '# exported\n# by x\na;b\n1;2\n# mid, "comment\n3;4\n' > cm.csv
    assert_run_out cm.csv --comment '#' <<'EOF'
a,b
1,2
3,4
EOF
    printf '#c\na,b\n1,2\n#x\n3,4,5\n' > cm2.csv
    run_tally cm2.csv --comment '#'
    assert_err 1 "tally: cm2.csv:5: expected 2 fields, found 3 (CSV, delimiter ','; --ragged skip drops such rows)"
}

@test "a file whose first line starts with # suggests --comment where none was sniffed" {
    printf '# exported\na,b\n1,2\n' > c.csv
    run_tally c.csv --comment none --skip 0
    assert_err 1 "tally: c.csv:2: expected 1 field, found 2 (CSV, delimiter ','; --ragged skip drops such rows)"
    printf '# a,b\n1,2\n1,2,3\n' > c.csv
    run_tally c.csv
    assert_err 1 "tally: c.csv:3: expected 2 fields, found 3 (CSV, delimiter ','; the first line starts with '#': try --comment '#'; --ragged skip drops such rows)"
}

@test "--comment agrees with the file without its comments, with quoted line breaks, any threads and batch size" {
    awk 'BEGIN { print "a,b"; for (i = 0; i < 20000; i++) { if (i % 97 == 0) print "# note, \"x\" " i; printf "%d,\"v\n%d\"\n", i, i } }' > bigc.csv
    grep -v '^#' bigc.csv > bign.csv
    run_tally bign.csv
    assert_ok
    local want=$output
    TALLY_BATCH_ROWS=50 run_tally bigc.csv --comment '#' --threads 3
    assert_ok
    assert_out "$want"
}

@test "--comment takes one character" {
    printf 'a\n1\n' > x.csv
    run_tally x.csv --comment '//'
    assert_err 2 'tally: --comment: expected one character or none, got "//"'
}

@test "the right side of a join is read with the main input's --skip and --comment" {
    printf 'title\nid,a\n#c\n1,p\n' > jl.csv
    printf 'title\nid,b\n1,q\n#c\n' > jr.csv
    assert_run_out jl.csv --skip 1 --comment '#' --join jr.csv --on id <<'EOF'
id,a,b
1,p,q
EOF
}

@test "a quote error names --quote none, which reads the file" {
    printf 'k,v\n1,"5" inch\n' > q.csv
    run_tally q.csv
    assert_err 1 'tally: q.csv:2:6: unexpected character after closing quote (a quote opens a quoted field: --quote none reads quotes as data)'
    printf 'k,v\n1,"open\n' > u.csv
    run_tally u.csv
    assert_err 1 'tally: u.csv:2:3: unterminated quoted field (a quote opens a quoted field: --quote none reads quotes as data)'
    assert_run_out q.csv --quote none --to ndjson <<'EOF'
{"k":1,"v":"\"5\" inch"}
EOF
}

@test "--decimal-comma reads 1,5 as the float64 1.5; timestamps keep their point" {
    printf 'name;price;n;when\nanvil;1,5;2;2024-01-02 10:00:00.5\nbolt;0,25;10;2024-01-03\nnut;-3,0e2;1;\n' > dc.csv
    assert_run_out dc.csv --decimal-comma <<'EOF'
name,price,n,when
anvil,1.5,2,2024-01-02 10:00:00.5
bolt,0.25,10,2024-01-03 00:00:00
nut,-300.0,1,
EOF
    assert_run_out schema dc.csv --decimal-comma <<'EOF'
column,type
name,string
price,float64
n,int64
when,timestamp
EOF
    assert_run_out dc.csv --decimal-comma --agg 's = sum(price)' <<'EOF'
s
-298.25
EOF
    # without it the commas are text
    assert_run_out dc.csv --select price <<'EOF'
price
"1,5"
"0,25"
"-3,0e2"
EOF
}

@test "--decimal-comma: a point (decimal or thousands) keeps a column text; --schema refuses it" {
    printf 'a;b;c;d\n1.234,5;1.5;00,5;1,00000000000000000001\n2;2,5;1,0;2\n' > dc2.csv
    assert_run_out dc2.csv --decimal-comma --to ndjson <<'EOF'
{"a":"1.234,5","b":"1.5","c":"00,5","d":"1,00000000000000000001"}
{"a":"2","b":"2,5","c":"1,0","d":"2"}
EOF
    run_tally dc2.csv --decimal-comma --schema 'b:float'
    assert_err 1 'tally: dc2.csv:2:2: "1.5" is not a valid float64 (column "b"; --decimal-comma reads only a comma as the decimal point)'
    assert_run_out dc2.csv --decimal-comma --schema 'c:float' --select c <<'EOF'
c
0.5
1.0
EOF
}

@test "--decimal-comma: ';' stands in for the suffix's ',', a consistent ',' still wins" {
    printf 'price\n1,5\n2,75\n' > one.csv
    assert_run_out one.csv --decimal-comma <<'EOF'
price
1.5
2.75
EOF
    printf 'x,y\n"1,5",2\n' > q.csv
    assert_run_out q.csv --decimal-comma --to ndjson <<'EOF'
{"x":1.5,"y":2}
EOF
    printf 'a;b\n1,5;2\n3;4;5\n' > rg.csv
    run_tally rg.csv --decimal-comma
    assert_err 1 "tally: rg.csv:3: expected 2 fields, found 3 (CSV, delimiter ';'; --ragged skip drops such rows)"
}

@test "--decimal-comma: widening on a later batch, threads, filters and round trips agree" {
    printf 'k;v\na;1\nb;2\nc;3\nd;4,5\n' > rs.csv
    TALLY_BATCH_ROWS=2 run_tally rs.csv --decimal-comma --to ndjson
    assert_ok
    assert_out <<'EOF'
{"k":"a","v":1.0}
{"k":"b","v":2.0}
{"k":"c","v":3.0}
{"k":"d","v":4.5}
EOF
    awk 'BEGIN { print "id;v;n"; for (i = 0; i < 20000; i++)
        printf "%d;%d,%02d;%d\n", i, i % 1000 - 500, i % 100, i % 5 }' > big.csv
    tr ',' '.' < big.csv > dot.csv
    run_tally dot.csv --filter 'n = 3' --select 'id, v'
    assert_ok
    local want=$output
    for th in 1 3; do
        TALLY_BATCH_ROWS=300 run_tally big.csv --decimal-comma --threads $th --filter 'n = 3' --select 'id, v'
        assert_ok
        assert_out "$want"
    done
    run_tally dot.csv --agg 's = sum(v), n = count()'
    assert_ok
    assert_out "$(printf 's,n\n-9999.999999999998,20000')"
    want=$output
    for fmt in csv tsv ndjson; do
        run_tally big.csv --decimal-comma -o back.$fmt
        assert_ok
        run_tally back.$fmt --agg 's = sum(v), n = count()'
        assert_ok
        assert_out "$want"
    done
}

@test "errors about a decimal comma name --decimal-comma" {
    printf 'k;v\na;1,5\nb;2\n' > c1.csv
    run_tally c1.csv --schema v:float
    assert_err 1 'tally: c1.csv:2:2: "1,5" is not a valid float64 (column "v"; --decimal-comma reads a comma as the decimal point)'
    run_tally c1.csv --agg 's = sum(v)'
    assert_err 2 <<'EOF'
tally: sum needs a numeric argument, not string
  --agg: s = sum(v)
                 ^
  column "v" is string because c1.csv:2 holds "1,5" (--decimal-comma reads a comma as the decimal point)
EOF
    printf 'k;v\na;1,5\nb;2.5\n' > c2.csv
    run_tally c2.csv --decimal-comma --agg 's = sum(v)'
    assert_err 2 <<'EOF'
tally: sum needs a numeric argument, not string
  --agg: s = sum(v)
                 ^
  column "v" is string because c2.csv:3 holds "2.5", a point where --decimal-comma reads only a comma
EOF
}

@test "--decimal-comma in a pipeline file" {
    printf 'k;v\na;1,5\n' > p.csv
    printf '{"input": "p.csv", "decimal_comma": true, "to": "ndjson"}\n' > p.json
    assert_run_out -f p.json <<'EOF'
{"k":"a","v":1.5}
EOF
    printf '{"input": "p.csv", "decimal_comma": 1}\n' > b.json
    run_tally -f b.json
    assert_err 2 'tally: b.json: /decimal_comma: expected true or false'
}

@test "comment sniffing: '#' lines around ';' records are comments, as DuckDB's sniffer finds" {
    printf '# exported by X\n# more\na;b\n# note\n1;3\n6;7\n' > c.csv
    assert_run_out c.csv <<'EOF2'
a,b
1,3
6,7
EOF2
    run_tally c.csv --comment none
    assert_ok
    assert_out '# exported by X
# more
a;b
# note
1;3
6;7'
    printf '{"input": "c.csv", "comment": "none", "steps": [{"limit": 1}]}\n' > p.json
    assert_run_out -f p.json <<'EOF2'
# exported by X
# more
EOF2
}

@test "comment sniffing: values starting with '#' stay values" {
    printf 'color,name\n#ff0000,red\n#00ff00,green\n' > c.csv
    assert_run_out c.csv <<'EOF2'
color,name
#ff0000,red
#00ff00,green
EOF2
}

@test "comment sniffing: a comment after data is no comment; the error names the sniffed one" {
    printf '# exported\na;b\n1;3#5;7\n6;7\n' > c.csv
    run_tally c.csv
    assert_err 1 "tally: c.csv:3: expected 2 fields, found 3 (CSV, delimiter ';' sniffed from the first records: --delimiter sets it; comment '#' sniffed from the first records: --comment sets it; --ragged skip drops such rows)"
    run_tally c.csv --comment '##'
    assert_err 2 'tally: --comment: expected one character or none, got "##"'
}

@test "preamble sniffing: lines before the header are skipped when the rest reads consistently" {
    printf 'Sales report\nmore notes,...\nregion,amount,day\nnorth,5,2024-01-01\nsouth,7,2024-01-02\n' > p.csv
    assert_run_out p.csv <<'EOF2'
region,amount,day
north,5,2024-01-01
south,7,2024-01-02
EOF2
    run_tally p.csv --skip 0
    assert_err 1 "tally: p.csv:2: expected 1 field, found 2 (CSV, delimiter ','; --ragged skip drops such rows)"
    printf '{"input": "p.csv", "skip": 0}\n' > q.json
    run_tally -f q.json
    assert_err 1 "tally: ./p.csv:2: expected 1 field, found 2 (CSV, delimiter ','; --ragged skip drops such rows)"
}

@test "preamble sniffing: no preamble under numbers, trailing delimiters or a longer first line" {
    printf 'price\n1,5\n2,75\n' > n.csv
    run_tally n.csv
    assert_err 1 "tally: n.csv:2: expected 1 field, found 2 (CSV, delimiter ','; --ragged skip drops such rows)"
    printf 'c1,c2\n1,2,\n3,4,\n' > t.csv
    run_tally t.csv
    assert_err 1 "tally: t.csv:2: expected 2 fields, found 3 (CSV, delimiter ','; --ragged skip drops such rows)"
    printf 'a,b,c\n1,2\n3,4\n' > l.csv
    run_tally l.csv
    assert_err 1 "tally: l.csv:2: expected 3 fields, found 2 (CSV, delimiter ','; --ragged pad or skip reads such rows)"
}

@test "preamble sniffing: a later ragged row names the sniffed preamble" {
    { printf 'report\nx;y\n'; seq 1 30 | sed 's/$/;1/'; printf '5;6;7\n'; } > r.csv
    run_tally r.csv
    assert_err 1 "tally: r.csv:33: expected 2 fields, found 3 (CSV, delimiter ';' sniffed from the first records: --delimiter sets it; 1 line of preamble sniffed: --skip sets it; --ragged skip drops such rows)"
}
