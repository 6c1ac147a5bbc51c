#!/usr/bin/env bats
# Guessed morsel ends (formats/format.h tl_reader_guess, csv_read.c
# guess_cut, lib/exec/op_scan.c resplit): a scan cuts a CSV file after the
# first line end past each morsel's target size without reading the bytes
# before it; the decoder checks the guess (no quote in the morsel, fewer
# line ends than a morsel may hold), and a failed morsel -- wrong guess or
# data error -- makes the scan split again from it reading every byte.  The
# output, the errors (with their line numbers) and the morsel boundaries
# (float sums) must be those of the careful split (TALLY_NO_GUESS), for
# every --threads and TALLY_BATCH_ROWS.

load helpers

# make_data: one python3 process writes the inputs (about 300 KB each, so
# morsels of 16, 32, 64 and 128 KB are cut, most of them guessed):
#   plain.csv      no quote anywhere
#   quotes.csv     from row 3000 on, quoted fields holding LF, CRLF,
#                  delimiters and doubled quotes, and one field of 400 lines
#                  (guesses fall inside it)
#   ragged.csv     a record with one field too few at line 5001
#   widen.csv      the int column v holds 1.5 at row 5000 (a restart)
#   crlf.csv, cr.csv  plain.csv with CRLF and lone-CR line ends
make_data() {
    python3 - <<'EOF'
import random
random.seed(7)
def rows(n):
    out = []
    for i in range(n):
        out.append(["k%02d" % random.randrange(40), str(random.randrange(1000)),
                     "%.4f" % (random.random() * 100), "id%010d" % random.randrange(10**9)])
    return out
head = "k,v,x,s\n"
plain = rows(6000)
def write(name, text):
    with open(name, "w", newline="") as f:
        f.write(text)
write("plain.csv", head + "".join(",".join(r) + "\n" for r in plain))
write("crlf.csv", head.replace("\n", "\r\n") + "".join(",".join(r) + "\r\n" for r in plain))
write("cr.csv", head.replace("\n", "\r") + "".join(",".join(r) + "\r" for r in plain))
q = []
for i, r in enumerate(plain):
    r = list(r)
    if i >= 3000 and i % 7 == 0:
        r[3] = '"line one\nline, two\r\nsays ""hi"""'
    if i == 4100:
        r[3] = '"' + "\n".join("long %d" % j for j in range(400)) + '"'
    q.append(",".join(r) + "\n")
write("quotes.csv", head + "".join(q))
rg = [",".join(r) + "\n" for r in plain]
rg[4999] = "k01,5,1.5\n"
write("ragged.csv", head + "".join(rg))
wd = [list(r) for r in plain]
wd[4999][1] = "1.5"
write("widen.csv", head + "".join(",".join(r) + "\n" for r in wd))
EOF
}

same_guess() { same_as_switch TALLY_NO_GUESS "$@"; } # (helpers.bash)

@test "guessed cuts: a file without quotes reads as with the careful split" {
    make_data
    same_guess plain.csv
    same_guess plain.csv --agg 'n = count(), x = sum(x), v = sum(v)'
    same_guess plain.csv --group-by k --agg 'x = sum(x), n = count()'
    same_guess plain.csv --filter "k = 'k07'" --select k,v
    cmp want.out <(awk -F, 'NR == 1 {print "k,v"} NR > 1 && $1 == "k07" {print $1 "," $2}' plain.csv)
}

@test "guessed cuts: CRLF and lone CR line ends" {
    make_data
    same_guess crlf.csv --agg 'n = count(), x = sum(x)'
    same_guess crlf.csv
    same_guess cr.csv --agg 'n = count(), x = sum(x)'
    same_guess cr.csv --filter "k = 'k07'"
}

@test "guessed cuts: quoted fields with line ends later in the file split again" {
    make_data
    same_guess quotes.csv
    same_guess quotes.csv --agg 'n = count(), x = sum(x)'
    [ "$(cat want.out)" = "$(printf 'n,x\n6000,%s' "$(cut -d, -f2 want.out | tail -n 1)")" ]
    same_guess quotes.csv --filter "k = 'k07'" --select k,s
    same_guess quotes.csv --group-by s --agg 'n = count()'
    grep -q '^"line one' want.out
}

@test "guessed cuts: a ragged record names its line as the careful split does" {
    make_data
    same_guess ragged.csv --agg 'n = count()'
    [ "$want_status" -ne 0 ]
    grep -F 'ragged.csv:5001: expected 4 fields, found 3' want.err
    same_guess ragged.csv --filter "k = 'k07'" --select k,v
    [ "$want_status" -ne 0 ]
    TALLY_BATCH_ROWS=7 run_tally ragged.csv --threads 2 -o out.csv
    [ "$status" -ne 0 ]
    [ ! -e out.csv ]
}

@test "guessed cuts: a type widened late restarts as with the careful split" {
    make_data
    same_guess widen.csv --agg 'v = sum(v), n = count()'
    [ "$want_status" -eq 0 ]
    grep -q '^v,n$' want.out
    same_guess widen.csv --filter "k = 'k07'" --select k,v
    same_guess widen.csv --schema v:int64 --agg 'v = sum(v)'
    [ "$want_status" -ne 0 ]
    grep -F 'widen.csv:5001:2: "1.5" is not a valid int64' want.err
}
