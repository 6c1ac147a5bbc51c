#!/usr/bin/env bats
# run-cli: weight=6 matrix
# Row utilities on all cores: --sample, --with-row-number, row_number(),
# --tail and --offset choose rows by their position in the step's input, which the
# operators count on the consumer side (lib/exec/op_rows.c, op_limit.c):
# the output must be byte-identical for every --threads and batch size, and
# equal to the unoptimized plan's.  Morsels of 7 rows, of 1000, and the
# default.

load helpers

gen() {
    python3 - "$1" "$2" <<'EOF'
import random, sys
random.seed(int(sys.argv[1]))
print('id,g,v,s')
for i in range(int(sys.argv[2])):
    v = '' if random.random() < 0.1 else str(random.randint(-50, 50))
    s = random.choice(['x', 'a longer string than twelve', '', 'id0000001234'])
    print(f'{i},{random.choice("abcde")},{v},{s}')
EOF
}

SHAPES=(
    "--sample 100 --seed 5"
    "--sample 3.5%"
    "--filter 'v > 0' --sample 40 --seed 9"
    "--with-row-number rn --filter 'v > 0'"
    "--filter 'v > 0' --with-row-number rn --tail 50"
    "--with-row-number rn --sample 10 --with-row-number rn2"
    "--sort v,id --offset 20 --head 30"
    "--offset 777 --head 100"
    "--offset 29000"
    "--tail 1234 --select id"
    "--filter 'v > 0' --select 'id, row_number() as rn'"
    "--with 'r = row_number()' --filter 'r % 7 = 0' --with 'k = row_number()'"
    "--group-by g --agg 'n = count(), s = sum(row_number()), m = max(row_number())'"
)

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

@test "threads: sample, row numbers, tail and offset are the same for every --threads" {
    gen 1 30000 > t.csv
    check t.csv 7 1000 65536
}

@test "threads: the sample and row numbers of an NDJSON input equal the CSV's" {
    gen 2 5000 > t.csv
    run_tally t.csv -o t.ndjson
    assert_ok
    run_tally t.csv --with-row-number rn --sample 25 --seed 3 -o a.csv
    assert_ok
    TALLY_BATCH_ROWS=7 run_tally t.ndjson --with-row-number rn --sample 25 --seed 3 \
        --threads 3 -o b.csv
    assert_ok
    cmp a.csv b.csv
    [ "$(wc -l < a.csv)" -eq 26 ]
}
