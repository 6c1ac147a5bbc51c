#!/usr/bin/env bats
# CSV/TSV quoting: --quote C (any character) and --escape C (DuckDB's
# escape: C + quote or C + C inside a quoted field), both sniffed from the
# first records when not given; round trips through every output format;
# the messages a quote error and a field-count error give about them.

load helpers

# A single-quoted file: '' inside is one quote, delimiters and line breaks
# inside quoted fields are data, '' alone is the empty string.
sq_file() {
    printf "id,name,note\n1,'O''Brien','a, b'\n2,x,'two\nlines'\n3,'',plain\n" > sq.csv
}

@test "--quote \"'\" reads single-quoted fields" {
    sq_file
    assert_run_out sq.csv --quote "'" --to ndjson <<'EOF'
{"id":1,"name":"O'Brien","note":"a, b"}
{"id":2,"name":"x","note":"two\nlines"}
{"id":3,"name":"","note":"plain"}
EOF
}

@test "sniffing: a single quote that quotes fields of the first records is the quote" {
    sq_file
    assert_run_out sq.csv <<'EOF'
id,name,note
1,O'Brien,"a, b"
2,x,"two
lines"
3,"",plain
EOF
}

@test "sniffing: a one-column file gets its quote sniffed too" {
    printf "movie_title\n'Doc'\n'a,b'\n" > one.csv
    assert_run_out one.csv --to ndjson <<'EOF'
{"movie_title":"Doc"}
{"movie_title":"a,b"}
EOF
    printf 'title\n"say \\"hi\\""\n' > one_esc.csv
    assert_run_out one_esc.csv --to ndjson <<'EOF'
{"title":"say \"hi\""}
EOF
}

@test "sniffing: apostrophes inside or opening unclosed values leave the quote '\"'" {
    printf "id,name,size\n1,O'Brien,\"5\"\"\"\n2,'70s,2\n" > apos.csv
    assert_run_out apos.csv --to ndjson <<'EOF'
{"id":1,"name":"O'Brien","size":"5\""}
{"id":2,"name":"'70s","size":"2"}
EOF
    # a double and a single quote that both quote fields: '"' comes first
    printf "a,b\n\"x\",'y'\n" > both.csv
    assert_run_out both.csv --to ndjson <<'EOF'
{"a":"x","b":"'y'"}
EOF
}

@test "sniffing: a single-quoted field the 64 KiB sample cuts is no evidence; --quote reads it" {
    {
        printf "a,b\n1,'x\n"
        head -c 70000 /dev/zero | tr '\0' 'y'
        printf ",z'\n"
    } > long.csv
    assert_run_out long.csv --select 'length(a) as la, length(b) as lb' <<'EOF'
la,lb
1,2
70000,2
EOF
    assert_run_out long.csv --quote "'" --select 'a, length(b) as lb' <<'EOF'
a,lb
1,70004
EOF
}

@test "--quote takes any character, and semicolons stay sniffed" {
    printf 'a;b\n~x;y~;1\n~p~~q~;2\n' > tilde.csv
    assert_run_out tilde.csv --quote '~' --to ndjson <<'EOF'
{"a":"x;y","b":1}
{"a":"p~q","b":2}
EOF
}

@test "--quote \"'\" turns quoting on for TSV (escapes are still decoded)" {
    printf "a\tb\n'x\ty'\t1\n'q''r\\\\\\\\s'\t2\n" > qt.tsv
    assert_run_out qt.tsv --quote "'" --to ndjson <<'EOF'
{"a":"x\ty","b":1}
{"a":"q'r\\s","b":2}
EOF
    # not sniffed in TSV: quotes are data there
    run_tally qt.tsv
    assert_err 1 "tally: qt.tsv:2: expected 2 fields, found 3 (TSV, delimiter '\\t'; --ragged skip drops such rows)"
}

@test "a TSV field-count error on a field starting with a double quote names --quote" {
    printf 'a\tb\n"x\ty"\t1\n' > dq.tsv
    run_tally dq.tsv
    assert_err 1 "tally: dq.tsv:2: expected 2 fields, found 3 (TSV, delimiter '\\t'; a field starts with \": --quote '\"' quotes with it; --ragged skip drops such rows)"
    assert_run_out dq.tsv --quote '"' --to ndjson <<'EOF'
{"a":"x\ty","b":1}
EOF
}

# Backslash escapes inside quoted fields; a doubled quote is still a quote
# and any other backslash is kept as written.
esc_file() {
    printf 'id,text\n1,"say \\"hi\\""\n2,"back\\\\slash"\n3,"keep \\n as is"\n4,"doubled "" too"\n' > esc.csv
}

@test "--escape '\\' reads \\\" as a quote and \\\\ as a backslash, and keeps any other" {
    esc_file
    assert_run_out esc.csv --escape '\' --to ndjson <<'EOF'
{"id":1,"text":"say \"hi\""}
{"id":2,"text":"back\\slash"}
{"id":3,"text":"keep \\n as is"}
{"id":4,"text":"doubled \" too"}
EOF
}

@test "sniffing: the backslash escape is taken where the first records need it" {
    esc_file
    assert_run_out esc.csv <<'EOF'
id,text
1,"say ""hi"""
2,back\slash
3,keep \n as is
4,"doubled "" too"
EOF
    # a backslash the records do not need as an escape stays data
    printf 'p,q\n"C:\\dir\\",1\n' > win.csv
    assert_run_out win.csv --to ndjson <<'EOF'
{"p":"C:\\dir\\","q":1}
EOF
}

@test "--escape none and --escape with the quote leave only doubled quotes" {
    esc_file
    run_tally esc.csv --escape none
    assert_err 1 "tally: esc.csv:2:10: unexpected character after closing quote (a quote opens a quoted field: --escape '\\' reads \\\" as a quote; --quote none reads quotes as data)"
    run_tally esc.csv --escape '"'
    assert_err 1 "tally: esc.csv:2:10: unexpected character after closing quote (a quote opens a quoted field: --escape '\\' reads \\\" as a quote; --quote none reads quotes as data)"
}

@test "a custom quote and escape together, with --quote and --escape in a pipeline file" {
    printf "k|v\n1|'it\\\\'s'\n2|'a|b'\n" > both.txt
    printf '{"input": "both.txt", "from": "csv", "quote": "'"'"'", "escape": "\\\\", "to": "ndjson"}\n' > p.json
    assert_run_out -f p.json <<'EOF'
{"k":1,"v":"it's"}
{"k":2,"v":"a|b"}
EOF
    assert_run_out both.txt --from csv --quote "'" --escape '\' --to ndjson <<'EOF'
{"k":1,"v":"it's"}
{"k":2,"v":"a|b"}
EOF
    printf '{"input": "both.txt", "escape": ""}\n' > bad.json
    run_tally -f bad.json
    assert_err 2 "tally: bad.json: /escape: expected a single character such as \"'\" or \"none\""
}

@test "round trips: single-quoted and escaped input through CSV, TSV and NDJSON output" {
    sq_file
    esc_file
    for f in sq esc; do
        run_tally $f.csv --to ndjson
        assert_ok
        local want=$output
        for fmt in csv tsv ndjson; do
            run_tally $f.csv -o back.$fmt
            assert_ok
            run_tally back.$fmt --to ndjson
            assert_ok
            # TSV has one value for null and the empty string
            if [ $fmt = tsv ]; then
                assert_out "${want//\"name\":\"\"/\"name\":null}"
            else
                assert_out "$want"
            fi
        done
    done
    run_tally sq.csv -o back.csv
    assert_ok
    run cat back.csv
    assert_out <<'EOF'
id,name,note
1,O'Brien,"a, b"
2,x,"two
lines"
3,"",plain
EOF
}

@test "a file quoted with ' reads the same with any threads and batch size" {
    awk "BEGIN { print \"id,txt,v\"; for (i = 0; i < 30000; i++) {
        t = i % 3 == 0 ? \"a,b\" : i % 3 == 1 ? \"it''s\" : \"two\\nlines\";
        printf \"%d,'%s',%d\\n\", i, t, i % 7 } }" > big.csv
    awk 'BEGIN { print "id,txt,v"; for (i = 0; i < 30000; i++) {
        t = i % 3 == 0 ? "a,b" : i % 3 == 1 ? "it'"'"'s" : "two\nlines";
        printf "%d,\"%s\",%d\n", i, t, i % 7 } }' > ref.csv
    run_tally ref.csv --agg 'n = count(), s = sum(v), l = sum(length(txt))'
    assert_ok
    assert_out "$(printf 'n,s,l\n30000,89995,160000')"
    local want=$output
    run_tally ref.csv
    local rows=$output
    for th in 1 3; do
        TALLY_BATCH_ROWS=100 run_tally big.csv --threads $th --agg 'n = count(), s = sum(v), l = sum(length(txt))'
        assert_ok
        assert_out "$want"
        run_tally big.csv --threads $th
        assert_ok
        assert_out "$rows"
    done
}

@test "the right side of a join is read with the main input's --quote and --escape" {
    printf "id;a\n1;'x;y'\n" > l.csv
    printf "id;b\n1;'p\\\\'q'\n" > r.csv
    assert_run_out l.csv --quote "'" --escape '\' --join r.csv --on id --to ndjson <<'EOF'
{"id":1,"a":"x;y","b":"p'q"}
EOF
}

@test "a quote error names the quote, how it was decided and the knob" {
    printf "a,b\n'x',2\n'open,3\n" > un.csv
    run_tally un.csv --quote "'"
    assert_err 1 "tally: un.csv:3:1: unterminated quoted field (quote \"'\" from --quote; --quote none reads quotes as data)"
    printf "a,b\n1,'x'y\n" > after.csv
    run_tally after.csv --quote "'"
    assert_err 1 "tally: after.csv:2:6: unexpected character after closing quote (quote \"'\" from --quote; --quote none reads quotes as data)"
    {
        printf 'id,name\n'
        for i in $(seq 1 21); do printf "%d,'n%d'\n" "$i" "$i"; done
        printf "22,'open\n"
    } > s.csv
    run_tally s.csv
    assert_err 1 "tally: s.csv:23:4: unterminated quoted field (quote \"'\" sniffed from the first records: --quote sets it; --quote none reads quotes as data)"
    {
        printf 'id,t\n'
        for i in $(seq 1 21); do printf '%d,"a\\"b"\n' "$i"; done
        printf '22,"open\\",x\n'
    } > e.csv
    run_tally e.csv
    assert_err 1 "tally: e.csv:23:4: unterminated quoted field (a quote opens a quoted field; escape '\\' sniffed from the first records: --escape sets it; --quote none reads quotes as data)"
    run_tally e.csv --escape '\'
    assert_err 1 "tally: e.csv:23:4: unterminated quoted field (a quote opens a quoted field; escape '\\' from --escape; --quote none reads quotes as data)"
}

@test "a field-count error names a sniffed quote, or suggests --quote \"'\"" {
    {
        printf 'id,name\n'
        for i in $(seq 1 21); do printf "%d,'n%d'\n" "$i" "$i"; done
        printf "22,'a,b',c\n"
    } > n.csv
    run_tally n.csv
    assert_err 1 "tally: n.csv:23: expected 2 fields, found 3 (CSV, delimiter ','; quote \"'\" sniffed from the first records: --quote sets it; --ragged skip drops such rows)"
    printf "a,b\n'x,1',2\n'y',3\n4,5,6\n" > r.csv
    run_tally r.csv
    assert_err 1 "tally: r.csv:2: expected 2 fields, found 3 (CSV, delimiter ','; a field starts with ': --quote \"'\" quotes with it; --ragged skip drops such rows)"
    assert_run_out r.csv --quote "'" --ragged skip --to ndjson <<'EOF'
{"a":"x,1","b":2}
{"a":"y","b":3}
EOF
}

@test "bad --quote and --escape values are usage errors" {
    printf 'a,b\n1,2\n' > x.csv
    printf 'a\tb\n1\t2\n' > x.tsv
    run_tally x.csv --quote ab
    assert_err 2 'tally: --quote: expected one character or none, got "ab"'
    run_tally x.csv --quote ''
    assert_err 2 'tally: --quote: expected one character or none, got ""'
    run_tally x.csv --escape '\\'
    assert_err 2 'tally: --escape: expected one character or none, got "\\\\"'
    run_tally x.csv --quote $'\n'
    assert_err 2 'tally: --quote: expected one character or none, got "\n"'
    run_tally x.csv --delimiter ';' --quote ';'
    assert_err 2 'tally: --quote: the delimiter cannot also be the quote'
    run_tally x.csv --delimiter ';' --escape ';'
    assert_err 2 'tally: --escape: the delimiter cannot also be the escape'
    run_tally x.csv --quote ','
    assert_err 2 "tally: --quote ',' is the delimiter (--delimiter sets another)"
    run_tally x.csv --quote none --escape '\'
    assert_err 2 'tally: --escape: --quote none turns quoting off, so nothing is escaped'
    run_tally x.tsv --escape '\'
    assert_err 2 'tally: --escape: TSV has its own backslash escapes (\t \n \r \\), decoded in any case'
}
