#!/usr/bin/env bats
# run-cli: weight=5
# Reading and writing CSV: quoting, line endings, BOM, null markers, headers,
# delimiters, .tsv, and type inference that widens in a later batch
# (TALLY_BATCH_ROWS=2 makes batches of two rows).

load helpers

@test "quoting round trips byte for byte" {
    printf 'id,text\n1,plain\n2,"has,comma"\n3,"say ""hi"""\n4,"two\nlines"\n5,""\n6,\n7,"cr\rinside"\n' > q.csv
    run_tally q.csv -o out.csv
    assert_ok
    cmp q.csv out.csv
}

@test "a field is quoted only when it must be" {
    printf 'a,b\n"plain","1"\n"x y",2\n' > q.csv
    run_tally q.csv
    assert_ok
    assert_out <<'EOF'
a,b
plain,1
x y,2
EOF
}

@test "quoted values keep their commas, quotes and newlines through a pipeline" {
    printf 'k,text\n1,"a,b"\n2,"say ""hi"""\n1,"x\ny"\n' > q.csv
    run_tally q.csv --group-by k --agg "t = string_agg(text, '|')"
    assert_ok
    assert_out "$(printf 'k,t\n1,"a,b|x\ny"\n2,"say ""hi"""')"
}

@test "CRLF line endings are read; output uses LF" {
    printf 'a,b\r\n1,x\r\n2,"y"\r\n3,z\r\n' > crlf.csv
    run_tally crlf.csv --filter "b = 'y' or b = 'z'"
    assert_ok
    assert_out "$(printf 'a,b\n2,y\n3,z')"
    run_tally crlf.csv -o out.csv
    assert_ok
    printf 'a,b\n1,x\n2,y\n3,z\n' > want.csv
    cmp out.csv want.csv
}

@test "a UTF-8 byte order mark is not part of the first column name" {
    printf '\xef\xbb\xbfid,name\n1,\xc3\xa9t\xc3\xa9\n' > bom.csv
    run_tally bom.csv --select 'id, name'
    assert_ok
    assert_out "$(printf 'id,name\n1,\xc3\xa9t\xc3\xa9')"
}

@test "the last line may lack its newline" {
    printf 'a,b\n1,2\n3,4' > nonl.csv
    assert_run_out nonl.csv --agg 's = sum(b)' <<'EOF'
s
6
EOF
}

@test "a header-only file gives a header-only result" {
    printf 'a,b\n' > empty.csv
    assert_run_out empty.csv <<'EOF'
a,b
EOF
    assert_run_out empty.csv --agg 'n = count(), s = sum(a)' <<'EOF'
n,s
0,
EOF
}

@test "an unquoted empty field is null, a quoted one is an empty string" {
    printf 'id,s\n1,""\n2,\n3,x\n' > e.csv
    assert_run_out e.csv --select 'id, s is null as isnull, length(s) as len' <<'EOF'
id,isnull,len
1,false,0
2,true,
3,false,1
EOF
}

@test "empty strings and nulls are written apart" {
    printf 'id,s\n1,""\n2,\n' > e.csv
    run_tally e.csv -o out.csv
    assert_ok
    cmp e.csv out.csv
}

@test "--null marks a text as null; without it the text is a value" {
    printf 'a,b\n1,NA\nNA,2\n' > na.csv
    assert_run_out na.csv <<'EOF'
a,b
1,NA
NA,2
EOF
    assert_run_out na.csv --null NA --with 'c = a + 1' <<'EOF'
a,b,c
1,,2
,2,
EOF
}

@test "--no-header keeps the first line as data" {
    printf '"x,1",2\ny,3\n' > nh.csv
    assert_run_out nh.csv --no-header --sort -column2 <<'EOF'
column1,column2
y,3
"x,1",2
EOF
}

@test "--delimiter with quoted fields" {
    printf 'a|b\n"x|y"|1\nz|2\n' > pipe.csv
    assert_run_out pipe.csv --delimiter '|' --select a <<'EOF'
a
x|y
z
EOF
}

@test ".tsv input is split at tabs; stdout stays CSV" {
    printf 'name\tnote\nann\thello, world\nbob\tok\n' > t.tsv
    assert_run_out t.tsv <<'EOF'
name,note
ann,"hello, world"
bob,ok
EOF
}

@test ".tsv in, .tsv out" {
    printf 'name\tn\nann\t1\nbob\t2\n' > t.tsv
    run_tally t.tsv --with 'm = n * 2' -o out.tsv
    assert_ok
    printf 'name\tn\tm\nann\t1\t2\nbob\t2\t4\n' > want.tsv
    cmp out.tsv want.tsv
}

@test "a quoted header name is a column name with spaces" {
    printf '"unit price",qty\n2.5,4\n' > h.csv
    assert_run_out h.csv --select '"unit price" * qty as total, "unit price"' <<'EOF'
total,unit price
10.0,2.5
EOF
}

@test "inference: each column gets the narrowest type" {
    printf 'b,i,f,d,t,s\ntrue,1,1.5,2024-01-02,2024-01-02 03:04:05,x\nfalse,-2,2,2024-02-29,2024-01-02T00:00:00,1\n' > types.csv
    assert_run_out types.csv --select 'not b as nb, i * 3 as i3, f * 2 as f2, day(d) as dd, hour(t) as h, s || s as ss' <<'EOF'
nb,i3,f2,dd,h,ss
false,3,3.0,2,3,xx
true,-6,4.0,29,0,11
EOF
}

@test "inference: an integer too big for int64 keeps its text (a string column)" {
    printf 'v\n9223372036854775807\n9223372036854775808\n' > big.csv
    assert_run_out big.csv <<'EOF'
v
9223372036854775807
9223372036854775808
EOF
}

# --------------------------------------- widening in a later batch

@test "widening int -> float in a later batch rereads every value as float" {
    printf 'k,v\na,1\nb,2\na,3\nb,4\na,2.5\n' > w.csv
    export TALLY_BATCH_ROWS=2
    assert_run_out w.csv <<'EOF'
k,v
a,1.0
b,2.0
a,3.0
b,4.0
a,2.5
EOF
    assert_run_out w.csv --group-by k --agg 's = sum(v), m = max(v)' <<'EOF'
k,s,m
a,6.5,3.0
b,6.0,4.0
EOF
}

@test "widening int -> string in a later batch sorts as strings" {
    printf 'v,n\n10,1\n9,2\n2,3\n1,4\nabc,5\n' > w.csv
    export TALLY_BATCH_ROWS=2
    assert_run_out w.csv --sort v <<'EOF'
v,n
1,4
10,1
2,3
9,2
abc,5
EOF
}

@test "widening date -> timestamp in a later batch" {
    printf 'd\n2024-01-02\n2024-01-01\n2024-01-03\n2024-01-01 12:30:00\n' > w.csv
    export TALLY_BATCH_ROWS=2
    assert_run_out w.csv --sort d <<'EOF'
d
2024-01-01 00:00:00
2024-01-01 12:30:00
2024-01-02 00:00:00
2024-01-03 00:00:00
EOF
}

@test "widening bool -> string in a later batch keeps the text" {
    printf 'b\ntrue\nfalse\ntrue\nfalse\nmaybe\n' > w.csv
    export TALLY_BATCH_ROWS=2
    assert_run_out w.csv --group-by b --agg 'n = count()' <<'EOF'
b,n
true,2
false,2
maybe,1
EOF
}

@test "a column that is null in the first batches takes its later type" {
    printf 'id,v\n1,\n2,\n3,\n4,\n5,7\n6,8.5\n' > w.csv
    export TALLY_BATCH_ROWS=2
    assert_run_out w.csv --filter 'v > 1' --with 'w = v * 2' <<'EOF'
id,v,w
5,7.0,14.0
6,8.5,17.0
EOF
}

@test "a column that widens but is not tested by the filter keeps its text" {
    printf 'k,v\na,1\nb,2\na,3\nb,x\n' > w.csv
    export TALLY_BATCH_ROWS=2
    assert_run_out w.csv --filter "k = 'a'" --select v <<'EOF'
v
1
3
EOF
}

@test "widening beyond the first 64K-row batch without a small batch size" {
    { echo 'n'; seq 1 70000; echo '0.5'; } > long.csv
    assert_run_out long.csv --agg 's = sum(n), c = count(), m = min(n)' <<'EOF'
s,c,m
2450035000.5,70001,0.5
EOF
}

@test "compressed input (.csv.gz) is read by suffix" {
    printf 'a,b\n1,2\n3,4\n' > z.csv
    gzip -k z.csv
    run_tally z.csv.gz --agg 's = sum(b)'
    skip_if_unsupported
    assert_ok
    assert_out "$(printf 's\n6')"
}
@test "a wide file's types come from every record of the first batch, in chunks of fewer records" {
    # 300 columns: open infers 873 records at a time (2^18 fields), so the
    # values below sit in the second chunk; the types must still be known
    # at open (no restart): c0 null then int64, c10 int64 then a string,
    # c250 int64 then a float
    awk 'BEGIN {
        for (c = 0; c < 300; c++) printf "%sc%d", (c ? "," : ""), c; print ""
        for (r = 1; r <= 1000; r++) {
            for (c = 0; c < 300; c++) {
                v = r % 7
                if (c == 0) v = r < 950 ? "" : r
                if (c == 10 && r == 900) v = "x"
                if (c == 250 && r == 960) v = "2.5"
                printf "%s%s", (c ? "," : ""), v
            }
            print ""
        }
    }' > wide.csv
    run_tally wide.csv --filter "c0 = 960" --select c0,c10,c250 --to ndjson --stats
    [ "$status" -eq 0 ] || { show; false; }
    [ "$output" = '{"c0":960,"c10":"1","c250":2.5}' ] || { show; false; }
    [[ "$stderr" == *"restarts: 0"* ]] || { show; false; }
}

