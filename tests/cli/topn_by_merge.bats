#!/usr/bin/env bats
# run-cli: matrix
# Top N per group, the end (lib/exec/op_topn_by.c): with fast keys every
# kept row is ordered at once by parallel radix sorts; with encoded keys
# the partitions' sorted rows merge in ranges on the pool (cut at the
# largest partition's quantiles, at least 16384 rows per range).  Many
# kept rows (head 40 of ~6-row groups keeps nearly all 60,000), so several
# ranges: the output must equal the unoptimized plan (a full stable sort,
# then head --by), byte for byte, for every thread count.

load helpers

gen() {
    python3 - <<'PY'
import random
random.seed(21)
print('g,s,v,w')
for i in range(60000):
    g = '' if random.random() < 0.01 else str(random.randint(1, 10000))
    s = '' if random.random() < 0.05 else random.choice(['a', 'b', 'c', 'x' * 14]) + str(random.randint(0, 50))
    r = random.random()
    v = '' if r < 0.05 else 'nan' if r < 0.07 else str(random.randint(-300, 300) / 4)
    w = str(random.randint(-5, 5))
    print(f'{g},{s},{v},{w}')
PY
}

SHAPES=(
    "--sort s,-v --head 40 --by g"
    "--sort 's desc nulls first' --head 40 --by g"
    "--sort -v --head 40 --by g"
    "--sort 'v nulls first' --head 40 --by w,g"
)

# Every shape under --threads 1, 2, 3 and 7 (7 only under ASan:
# matrix_threads, helpers.bash) and with TALLY_BATCH_ROWS=999 --threads 2
# equals the --no-optimize --threads 1 output, the reference, byte for
# byte; every run exits 0 with nothing on standard error (tally_matrix
# --ok, helpers.bash; the shapes' quoted keys go through eval, in ARGS).
@test "topn-by merge: many kept rows, ranges merged in parallel, same bytes as sort + head --by" {
    gen > t.csv
    local args t
    for args in "${SHAPES[@]}"; do
        {
            echo "--no-optimize --threads 1"
            for t in $(matrix_threads 1 2 3 7); do
                echo "--threads $t"
            done
            echo "TALLY_BATCH_ROWS=999 --threads 2"
        } | eval "tally_matrix --ok t.csv $args" || return 1
        [ "$(wc -l < mx/want.out)" -gt 40000 ] || { echo "$args: $(wc -l < mx/want.out) rows"; return 1; }
    done
}
