#!/usr/bin/env bats
# run-cli: weight=30 matrix spill
# Sort, top-k and top-N per group on all cores (lib/exec/op_sort.c,
# lib/exec/op_topn_by.c, kernels/sort.c): the output must be byte-identical
# for every --threads and batch size, and equal to the unoptimized plan's
# (a full stable sort, then head / head --by).  Seeded random data with many
# ties, nulls, NaN, -0.0 and strings that are prefixes of each other; a small
# file cut into 7-row morsels, and one large enough (80,000 rows) for the
# parallel sort kernels (runs + merges, parallel MSD levels).

load helpers

gen() {
    python3 - "$1" "$2" <<'EOF'
import random, sys
random.seed(int(sys.argv[1]))
n = int(sys.argv[2])
print('id,g,h,v,w,s')
for i in range(n):
    g = random.choice(['a', 'b', 'c', '', 'dd', 'e,e'] + [f'k{j}' for j in range(40)])
    g = '"' + g + '"' if ',' in g else g
    h = random.choice(['1', '2', '', '3', '-7'])
    r = random.random()
    v = '' if r < 0.1 else 'nan' if r < 0.15 else '-0.0' if r < 0.2 else '0.0' if r < 0.25 \
        else str(random.randint(-20, 20) / 4)
    w = '' if random.random() < 0.05 else str(random.randint(-3, 3))
    s = random.choice(['x', 'xx', 'x' * 9, 'x' * 8, '', 'id0000001234', 'id0000001235',
                       'a longer string than twelve', 'id00000012'])
    print(f'{i},{g},{h},{v},{w},{s}')
EOF
}

SHAPES=(
    "--sort v"
    "--sort -v"
    "--sort s"
    "--sort -s"
    "--sort w"
    "--sort 'v desc nulls first',s"
    "--sort s,-v"
    "--sort g,h,-w"
    "--sort 'w * 2'"
    "--sort -v --head 10"
    "--sort v --head 1"
    "--sort s,w --head 500"
    "--sort 'v nulls first' --head 37"
    "--sort -v --head 2 --by g"
    "--sort v --head 3 --by g,h"
    "--sort s,-v --head 1 --by h"
    "--filter 'v is not null' --sort -v --head 2 --by g --select g,v"
)

# check FILE ROWS...: every shape with --threads 1, 2, 3, 8 (8 only under
# ASan: matrix_threads, helpers.bash) at each batch size equals the
# --no-optimize --threads 1 output, the reference, byte for byte; every run
# exits 0 with nothing on standard error (tally_matrix --ok, helpers.bash).
# The shapes' quoted sort keys go through eval, in ARGS.
check() {
    local file=$1 args rows t
    shift
    for args in "${SHAPES[@]}"; do
        {
            echo "--no-optimize --threads 1"
            for rows in "$@"; do
                for t in $(matrix_threads 1 2 3 8); do
                    echo "TALLY_BATCH_ROWS=$rows --threads $t"
                done
            done
        } | eval "tally_matrix --ok $file $args" || return 1
        [ "$(wc -l < mx/want.out)" -gt 1 ] || { echo "$args"; cat mx/want.out; return 1; }
    done
}

@test "threads: sort, top-k and top-n-by are the same for every --threads (small morsels)" {
    gen 1 2500 > t.csv
    check t.csv 7 1000
}

@test "threads: sort, top-k and top-n-by are the same for every --threads (parallel kernels)" {
    gen 2 80000 > t.csv
    check t.csv 65536 5000
}

@test "threads: the serial batch path (TALLY_SORT_SERIAL) gives the same bytes" {
    gen 3 3000 > t.csv
    local args
    for args in "--sort -v --head 10" "--sort -v --head 2 --by g" "--sort s,-v"; do
        printf '%s\n' "--threads 3" "TALLY_SORT_SERIAL=1 --threads 3" |
            eval "tally_matrix --ok t.csv $args" || return 1
    done
}
