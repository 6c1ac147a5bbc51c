#!/usr/bin/env bats
# run-cli: matrix spill
# The full sort's packed rows (lib/exec/op_sort.c: pack_chunk, gather_packed,
# out_prepare): each chunk's data columns are packed into rows and the output
# is gathered from them, batches ahead on the pool.  The bytes must equal the
# column gather's (TALLY_SORT_PACK=0) for every type (ints, floats with NaN
# and -0.0, long and short strings, bools, dates, timestamps, all-null and
# null-typed columns, nulls everywhere), every --threads and batch size, and
# when only some chunks are packed (TALLY_SORT_PACK=2: chunks of even length;
# the others stay in columns and the packed ones are unpacked again; the
# 30,000-row file is cut into morsels of both parities).  A single int64,
# date, timestamp or float64 key column is made from the sorted images
# (floats only when no -0.0 or NaN loses its bits: -f takes the gather).

load helpers

gen_csv() {
    python3 - "$1" "$2" <<'EOF'
import random, sys
random.seed(int(sys.argv[1]))
n = int(sys.argv[2])
print('k,s,l,b,d,t,f,e,i')
for r in range(n):
    k = '' if random.random() < 0.05 else str(random.randint(-50, 50))
    s = random.choice(['', 'x', 'id0000001234', 'id00000012345', 'a longer string than twelve',
                       'été déjà vu, encore', 'zz'])
    s = '"' + s + '"' if ',' in s else s
    l = random.choice(['', 'l' * 13, 'l' * 40, 'lm' * 9]) + str(random.randint(0, 9))
    b = random.choice(['true', 'false', ''])
    d = random.choice(['', '2024-01-05', '1999-12-31', '2030-06-30'])
    t = random.choice(['', '2024-01-05T10:00:00', '1970-01-01T00:00:01'])
    f = random.choice(['', 'nan', '-0.0', '0.0', '1.5', '-2.25', '1e300'])
    i = str(random.randint(-3, 3))
    print(f'{k},{s},{l},{b},{d},{t},{f},,{i}')
EOF
}

SHAPES=(
    "--sort k"
    "--sort -f"
    "--sort s"
    "--sort 'k, s desc'"
    "--sort l,i --select l,k,b"
    "--sort 'i * 2',k"
    "--sort 'd desc nulls first'"
    "--sort t --select t,k"
    "--with 'g = k * 0.5' --sort 'g desc nulls first'"
    "--with 'g = k * 0.5' --sort g"
    "--with 'y = null' --with 'z = if(i > 2, k, null)' --sort d,t"
)

# check FILE PACK ROWS: every shape with TALLY_SORT_PACK=PACK and batch size
# ROWS, under --threads 1, 2 and 7 (7 only under ASan: matrix_threads,
# helpers.bash), equals the column gather's output (TALLY_SORT_PACK=0
# --threads 1, the reference) byte for byte; every run exits 0 with nothing
# on standard error (tally_matrix --ok, helpers.bash).  The shapes' quoted
# keys go through eval, in ARGS.
check() {
    local file=$1 pack=$2 rows=$3 args t
    for args in "${SHAPES[@]}"; do
        {
            echo "TALLY_SORT_PACK=0 --threads 1"
            for t in $(matrix_threads 1 2 7); do
                echo "TALLY_SORT_PACK=$pack TALLY_BATCH_ROWS=$rows --threads $t"
            done
        } | eval "tally_matrix --ok $file $args" || return 1
        [ "$(wc -l < mx/want.out)" -gt 1 ] || { echo "$args"; cat mx/want.out; return 1; }
    done
}

@test "sort packed: the same bytes as the column gather, tiny morsels" {
    gen_csv 1 700 > t.csv
    check t.csv 1 7
}

@test "sort packed: the same bytes as the column gather, many chunks of varied sizes" {
    gen_csv 2 30000 > t.csv
    check t.csv 1 65536
    check t.csv 2 65536
}

@test "sort packed: long runs of nulls, whole chunks without and with them (NDJSON)" {
    python3 - > t.ndjson <<'EOF'
import random
random.seed(3)
for r in range(3000):
    x = random.randint(0, 9) if r > 2600 else None
    s = ('s' * 20 + str(r % 7)) if r % 5 else None
    print('{"k": %d, "x": %s, "s": %s}' % (random.randint(0, 20), 'null' if x is None else x,
                                           'null' if s is None else '"%s"' % s))
EOF
    # TALLY_SORT_PACK 1 and 2 at batch sizes 7, 64 and 65536, --threads 2:
    # the column gather's bytes (TALLY_SORT_PACK=0 --threads 1), exit 0 and
    # nothing on standard error (tally_matrix --ok, helpers.bash)
    local pack rows
    {
        echo "TALLY_SORT_PACK=0 --threads 1"
        for pack in 1 2; do
            for rows in 7 64 65536; do
                echo "TALLY_SORT_PACK=$pack TALLY_BATCH_ROWS=$rows --threads 2"
            done
        done
    } | tally_matrix --ok t.ndjson --sort k
}

@test "sort packed: an empty input and a one-row input" {
    printf 'k,s\n' > e.csv
    printf 'k,s\n1,a longer string than twelve\n' > o.csv
    run_tally e.csv --sort k
    assert_out 'k,s'
    run_tally o.csv --sort k --threads 2
    assert_out 'k,s
1,a longer string than twelve'
}
