#!/usr/bin/env bats
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

# out OUT ARGS...: tally ARGS (through eval) with standard output in OUT;
# fails unless it exits 0 with nothing on standard error.
out() {
    local o=$1
    shift
    eval "\"\$TALLY\" $*" > "$o" 2> err.txt
    local rc=$?
    if [ $rc -ne 0 ] || [ -s err.txt ]; then
        echo "exit $rc: $*"
        cat err.txt
        return 1
    fi
}

# check FILE PACK ROWS: every shape with TALLY_SORT_PACK=PACK and batch size
# ROWS equals the column gather's output (--threads 1), for several --threads.
check() {
    local file=$1 pack=$2 rows=$3
    for args in "${SHAPES[@]}"; do
        TALLY_SORT_PACK=0 out want.csv "$file $args --threads 1" || return 1
        [ "$(wc -l < want.csv)" -gt 1 ] || { echo "$args"; cat want.csv; return 1; }
        for t in $(matrix_threads 1 2 7); do
            TALLY_SORT_PACK=$pack TALLY_BATCH_ROWS=$rows out got.csv "$file $args --threads $t" ||
                return 1
            cmp -s want.csv got.csv || {
                echo "pack $pack rows $rows threads $t: $args"
                diff want.csv got.csv | head -n 20
                return 1
            }
        done
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
    for pack in 1 2; do
        for rows in 7 64 65536; do
            TALLY_SORT_PACK=0 out want.csv "t.ndjson --sort k --threads 1" || return 1
            TALLY_SORT_PACK=$pack TALLY_BATCH_ROWS=$rows out got.csv "t.ndjson --sort k --threads 2" ||
                return 1
            cmp -s want.csv got.csv || { echo "pack $pack rows $rows"; return 1; }
        done
    done
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
