#!/usr/bin/env bats
# run-cli: weight=5
# Many inputs: paths and quoted globs (matches sorted by name) concatenated,
# schemas unified by column name, --with-filename, --from/--to overrides,
# mixed formats in one run, the TSV writer and --out-delimiter.

load helpers

setup() {
    enter_workdir
    mkdir d
    printf 'id,x\n2,1.5\n' > d/b.csv
    printf 'id,y\n1,a\n' > d/a.csv
    printf 'id,x\n3,7\n' > d/c.csv
}

@test "a glob reads its matches sorted by name, unified by column name" {
    assert_run_out 'd/*.csv' <<'EOF'
id,y,x
1,a,
2,,1.5
3,,7.0
EOF
}

@test "paths and globs are read in the order given" {
    assert_run_out d/c.csv 'd/[ab].csv' d/c.csv <<'EOF'
id,x,y
3,7.0,
1,,a
2,1.5,
3,7.0,
EOF
}

@test "types widen across inputs: int + float is float, other mixes are string" {
    printf 'id,x\nq,2\n' > d/s.csv
    assert_run_out schema d/a.csv d/b.csv d/c.csv d/s.csv <<'EOF'
column,type
id,string
y,string
x,float64
EOF
}

@test "a glob that matches nothing is an error" {
    run_tally 'd/*.tsv' -o out.csv
    assert_err 1 'tally: no file matches "d/*.tsv"'
    [ ! -e out.csv ]
}

@test "--with-filename adds a first column naming each row's input" {
    assert_run_out 'd/*.csv' --with-filename <<'EOF'
filename,id,y,x
d/a.csv,1,a,
d/b.csv,2,,1.5
d/c.csv,3,,7.0
EOF
}

@test "--with-filename works with steps and standard input" {
    assert_run_out 'd/*.csv' --with-filename --filter 'id > 1' --select 'filename, id' <<'EOF'
filename,id
d/b.csv,2
d/c.csv,3
EOF
    run_tally_in $'v\n1\n2\n' - --with-filename --group-by filename --agg 'count()'
    assert_ok
    assert_out $'filename,count\n<stdin>,2'
}

@test "--with-filename: an input with a filename column is an error" {
    printf 'filename,z\n1,2\n' > d/fn.csv
    run_tally d/fn.csv --with-filename -o out.csv
    assert_err 2 'tally: --with-filename: "d/fn.csv" already has a column named "filename"'
    [ ! -e out.csv ]
}

@test "--with-filename over many batches and a restart" {
    { printf 'v\n'; seq 1 9; printf 'x\n'; } > d/w.csv
    TALLY_BATCH_ROWS=3 run_tally d/w.csv --with-filename --group-by filename --agg 'count(),max(v)'
    assert_ok
    assert_out $'filename,count,max_v\nd/w.csv,10,x'
}

@test "mixed formats in one run: CSV, NDJSON and compressed TSV" {
    printf '{"id": 9, "x": 2}\n' > d/e.ndjson
    printf 'id\tx\n4\t5\n' | gzip -c > d/f.tsv.gz
    assert_run_out d/c.csv d/e.ndjson d/f.tsv.gz --with-filename <<'EOF'
filename,id,x
d/c.csv,3,7
d/e.ndjson,9,2
d/f.tsv.gz,4,5
EOF
}

@test "--from overrides the suffix for every input; --to the output's" {
    printf 'id\tx\n4\t5\n' > d/f.txt
    assert_run_out d/f.txt --from tsv <<'EOF'
id,x
4,5
EOF
    run_tally d/c.csv --to tsv
    assert_ok
    assert_out "$(printf 'id\tx\n3\t7')"
    run_tally d/c.csv --to tsv -o out.csv
    assert_ok
    [ "$(cat out.csv)" = "$(printf 'id\tx\n3\t7')" ]
}

@test "TSV writer: -o x.tsv, tabs escaped and quotes written as they are" {
    printf 'a,b\n"x\ty",1\n"q""r",2\nplain,3\n' > q.csv
    run_tally q.csv -o out.tsv
    assert_ok
    [ "$(cat out.tsv)" = "$(printf 'a\tb\nx\\ty\t1\nq"r\t2\nplain\t3')" ] || { cat out.tsv; false; }
    # and it reads back
    assert_run_out out.tsv <<'EOF'
a,b
x	y,1
"q""r",2
plain,3
EOF
}

@test "--out-delimiter sets the CSV output separator; --delimiter stays the input's" {
    printf 'a;b\n1;x,y\n' > semi.csv
    assert_run_out semi.csv --delimiter ';' --out-delimiter '|' <<'EOF'
a|b
1|x,y
EOF
    assert_run_out semi.csv --delimiter ';' <<'EOF'
a,b
1,"x,y"
EOF
    printf 'a,b\n"1|2",3\n' > p.csv
    assert_run_out p.csv --out-delimiter '|' <<'EOF'
a|b
"1|2"|3
EOF
    run_tally p.csv --out-delimiter '\t'
    assert_ok
    assert_out "$(printf 'a\tb\n1|2\t3')"
}

@test "--out-delimiter: errors" {
    run_tally d/a.csv --out-delimiter '"'
    assert_err 2 'tally: --out-delimiter: a quote or a line break cannot separate fields'
    run_tally d/a.csv --out-delimiter ';' -o out.tsv
    assert_err 2 'tally: --out-delimiter applies to CSV output, not tsv'
    [ ! -e out.tsv ]
}

@test "pipeline file: globs relative to its folder, with_filename (the path as opened), out_delimiter" {
    printf '{"inputs": ["d/*.csv"], "with_filename": true, "out_delimiter": ";", "steps": [{"select": ["filename", "id"]}]}' > run.json
    mkdir other
    cd other
    assert_run_out -f ../run.json <<'EOF'
filename;id
../d/a.csv;1
../d/b.csv;2
../d/c.csv;3
EOF
}

@test "pipeline file: bad with_filename, out_delimiter, compress_level values" {
    printf '{"input": "d/a.csv", "with_filename": 1}' > a.json
    run_tally -f a.json
    assert_err_glob 2 '*with_filename*expected true or false*'
    printf '{"input": "d/a.csv", "out_delimiter": ";;"}' > b.json
    run_tally -f b.json
    assert_err_glob 2 '*out_delimiter*expected a single character*'
    printf '{"input": "d/a.csv", "compress_level": 99}' > c.json
    run_tally -f c.json
    assert_err_glob 2 '*compress_level*'
}
