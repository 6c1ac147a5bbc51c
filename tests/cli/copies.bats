#!/usr/bin/env bats
# run-cli: weight=10
# Copies (formats/csv_read.c, "0c. Copies"; format.c tl_input_copy): a
# decoder of a mapped CSV file with two or more columns, or of a mapped
# NDJSON file, reads its morsel, and a few bytes either side, into a buffer
# of its own with pread and decodes through a copy of the reader (NDJSON:
# of the cursor) addressing that buffer; long string views keep pointing
# into the mapping, and NDJSON's scan for late keys reads the mapping.  Values, errors (file, line, column),
# restarts and late materialization must be those of decoding through the
# mapping (TALLY_NO_COPY=1), for every --threads and with morsels of 7
# records (TALLY_BATCH_ROWS=7: every few records a morsel boundary, so
# records, quoted fields and long strings sit at both ends of morsels).

load helpers

# make_data: one python3 process writes the inputs (about 3,000 records):
#   long.csv    k (short), s (20 to 60 bytes: longer than a view inlines;
#               every 11th quoted with a delimiter, doubled quotes and a
#               line end inside), v int, x float; no line end after the last
#   crlf.csv    long.csv with CRLF line ends and one at the end
#   ragged.csv  long.csv with one field too few in record 2500 (line 2729)
#   open.csv    long.csv ending inside a quoted field
#   widen.csv   long.csv with v = "n/a" in record 2800 (v restarts as string)
#   long.ndjson the records of long.csv as objects ("s" with its line end
#               and quotes escaped), a key "late" first in record 2500,
#               "later" in record 2900 (one restart finds both)
#   bad.ndjson  long.ndjson without "late", a line cut short at record 2600
make_data() {
    python3 - <<'EOF'
import random
random.seed(11)
recs = []
for i in range(3000):
    s = "text-%d-" % i + "x" * random.randrange(8, 48)
    if i % 11 == 0:
        s = '"' + s + ', with ""quotes""\nand a second line"'
    recs.append(["k%02d" % random.randrange(30), s, str(random.randrange(1000)),
                  "%.3f" % (random.random() * 100)])
def write(name, rows, nl="\n", last=False):
    text = nl.join(["k,s,v,x"] + [",".join(r) for r in rows])
    with open(name, "w", newline="") as f:
        f.write(text + (nl if last else ""))
write("long.csv", recs)
write("crlf.csv", recs, "\r\n", True)
rg = [list(r) for r in recs]
rg[2499] = rg[2499][:3]
write("ragged.csv", rg, "\n", True)
op = [list(r) for r in recs]
op[-1][1] = '"never closed'
write("open.csv", op)
wd = [list(r) for r in recs]
wd[2799][2] = "n/a"
write("widen.csv", wd, "\n", True)
import json
objs = [{"k": r[0], "s": r[1].strip('"').replace('""', '"'), "v": int(r[2]), "x": float(r[3])}
        for r in recs]
lines = [json.dumps(o) for o in objs]
with open("long.ndjson", "w") as f:
    for i, (o, l) in enumerate(zip(objs, lines)):
        f.write(json.dumps(dict(o, late=i)) if i == 2499 else
                json.dumps(dict(o, later="yes")) if i == 2899 else l)
        f.write("\n")
with open("bad.ndjson", "w") as f:
    for i, l in enumerate(lines):
        f.write((l[:20] if i == 2599 else l) + "\n")
EOF
}

same_copy() { same_as_switch TALLY_NO_COPY "$@"; } # (helpers.bash)

@test "copies: long strings, quoted line ends and the last record read as through the mapping" {
    make_data
    same_copy long.csv
    files_ok want
    [ "$(wc -l < want.out)" -eq 3274 ] # a header, 3000 records, 273 of them two lines
    tail -n 1 long.csv > last.txt
    grep -qF -f last.txt want.out
    same_copy crlf.csv --select s,x
    files_ok want
    same_copy long.csv --group-by s --agg 'n = count(), v = sum(v)' --sort s --head 5
    files_ok want
}

@test "copies: a filter converts the kept rows' long strings as through the mapping" {
    make_data
    same_copy long.csv --filter "k = 'k07'"
    files_ok want
    same_copy long.csv --filter 'v > 990' --select s,x
    files_ok want
    same_copy long.csv --filter "s like '%quotes%'" --select k,s
    files_ok want
    [ "$(grep -c 'with ""quotes""' want.out)" -eq 273 ]
}

@test "copies: errors name the same line and column, restarts widen the same way" {
    make_data
    same_copy ragged.csv --agg 'n = count()'
    [ "$want_status" -eq 1 ]
    grep -q '^tally: ragged.csv:2729: expected 4 fields, found 3' want.err
    same_copy open.csv --agg 'n = count()'
    [ "$want_status" -eq 1 ]
    grep -q '^tally: open.csv:3274:5: unterminated quoted field' want.err
    # a record that does not parse starts the morsel that reports it (the
    # split ends the one before): its column counts from the line's start,
    # the byte before the morsel (record 1, and 8 with TALLY_BATCH_ROWS=7)
    printf 'k,v\nhh,"1"x\n' > first.csv
    same_copy first.csv
    [ "$(cat want.err)" = 'tally: first.csv:2:7: unexpected character after closing quote (a quote opens a quoted field: --quote none reads quotes as data)' ]
    printf 'k,v\na,1\nb,2\nc,3\nd,4\ne,5\nf,6\ng,7\nhh,"8"x\n' > eighth.csv
    same_copy eighth.csv --select v
    [ "$(cat want.err)" = 'tally: eighth.csv:9:7: unexpected character after closing quote (a quote opens a quoted field: --quote none reads quotes as data)' ]
    same_copy widen.csv --group-by v --agg 'n = count()' --sort v --head 3
    files_ok want
    same_copy widen.csv --filter 'x >= 0' --select k,v
    files_ok want
    [ "$(grep ',n/a$' want.out)" = "$(grep ',n/a,' widen.csv | cut -d, -f1),n/a" ]
}

@test "copies: NDJSON reads as through the mapping, late keys and errors included" {
    make_data
    same_copy long.ndjson --select k,s,v,x
    files_ok want
    [ "$(wc -l < want.out)" -eq 3274 ]
    same_copy long.ndjson --group-by s --agg 'n = count(), v = sum(v)' --sort s --head 5
    files_ok want
    # with 7-record morsels "late" restarts the run once, and the scan for
    # late keys reads on to the input's end to find "later" too (--stats:
    # the restarts are compared); at the default size, open's first batch
    # holds every key
    same_copy long.ndjson --stats
    [ "$want_status" -eq 0 ]
    [ "$(head -n 1 want.out)" = k,s,v,x,late,later ]
    [ "$(grep -c ',2499,$' want.out)" -eq 1 ]
    same_copy bad.ndjson --agg 'n = count()'
    [ "$want_status" -eq 1 ]
    grep -q '^tally: bad.ndjson:2600:' want.err
    # a value that does not convert in the first line of a morsel (lines 1
    # and 8 with TALLY_BATCH_ROWS=7): its column counts from the line start
    printf '{"k":"a","v":"1x"}\n' > first.ndjson
    same_copy first.ndjson --schema 'v:int64'
    [ "$(cat want.err)" = 'tally: first.ndjson:1:14: "1x" is not a valid int64 (column "v")' ]
    for i in 1 2 3 4 5 6 7; do printf '{"k":"a","v":%d}\n' $i; done > eighth.ndjson
    printf '{"k":"hh","v":"8x"}\n' >> eighth.ndjson
    same_copy eighth.ndjson --schema 'v:int64'
    [ "$(cat want.err)" = 'tally: eighth.ndjson:8:15: "8x" is not a valid int64 (column "v")' ]
    # lines ended by lone CRs: the column is counted from the last LF, here
    # the input's start, before the morsel and its copy
    tr '\n' '\r' < eighth.ndjson > cr.ndjson
    same_copy cr.ndjson --schema 'v:int64'
    [ "$(cat want.err)" = 'tally: cr.ndjson:8:127: "8x" is not a valid int64 (column "v")' ]
}
