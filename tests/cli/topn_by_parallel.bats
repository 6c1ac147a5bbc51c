#!/usr/bin/env bats
# run-cli: weight=50 matrix
# Top N per group in partitions (lib/exec/op_topn_by.c): the groups are
# split by a hash of the by-columns, each partition keeps its heaps and
# compacts its rows, partitions run in parallel.  The output must be
# byte-identical for --threads 1, 2, 3, 7 and any batch size, and equal to
# the unoptimized plan (a full stable sort, then head --by).  Seeded random
# data: many ties (across morsels), nulls in the sort keys and by-columns,
# NaN and -0.0, int64 extremes, dates, timestamps, string by-columns, groups
# smaller than N, more groups than a morsel has rows.

load helpers

gen() {
    python3 - "$1" "$2" "$3" <<'EOF'
import random, sys
random.seed(int(sys.argv[1]))
n, ng = int(sys.argv[2]), int(sys.argv[3])
print('id,g,s,h,v,w,d,t')
for i in range(n):
    g = '' if random.random() < 0.02 else str(random.randint(1, ng))
    s = random.choice(['', 'a', 'b', 'a,b', 'x' * 13, 'y' * 20]) if random.random() < 0.3 \
        else 'k%d' % random.randint(1, ng // 3 + 1)
    s = '"' + s + '"' if ',' in s else s
    h = random.choice(['1', '2', '', '3'])
    r = random.random()
    v = '' if r < 0.08 else 'nan' if r < 0.12 else '-0.0' if r < 0.16 else '0.0' if r < 0.2 \
        else str(random.randint(-6, 6) / 2)
    r = random.random()
    w = '' if r < 0.05 else '9223372036854775807' if r < 0.07 \
        else '-9223372036854775808' if r < 0.09 else str(random.randint(-4, 4))
    d = '' if random.random() < 0.05 else '2024-01-%02d' % random.randint(1, 9)
    t = '' if random.random() < 0.05 else '2024-02-01T%02d:00:00' % random.randint(0, 5)
    print(f'{i},{g},{s},{h},{v},{w},{d},{t}')
EOF
}

SHAPES=(
    "--sort -v --head 2 --by g"
    "--sort v --head 3 --by g"
    "--sort 'v desc nulls first' --head 2 --by s"
    "--sort 'v nulls first' --head 1 --by g,s"
    "--sort w --head 2 --by g"
    "--sort -w --head 5 --by s"
    "--sort 'w desc nulls first' --head 1 --by g"
    "--sort 'w nulls first' --head 2 --by h,g"
    "--sort d --head 2 --by g"
    "--sort w --head 1 --by d"
    "--sort -v --head 2 --by t"
    "--sort -t --head 3 --by s"
    "--sort s,-v --head 2 --by g"
    "--sort h,w,-id --head 2 --by s"
    "--filter 'w > -5 and w < 5' --sort 'w * 2 + 1' --head 3 --by g"
    "--sort -v --head 40 --by g"
    "--filter 'v is not null' --sort -v --head 2 --by g --select 'g, v as top'"
)

# check FILE ROWS...: every shape with --threads 1, 2, 3, 7 (7 only under
# ASan: matrix_threads) at each batch size (and the default, which under
# ASan only the test without sizes runs) equals the --no-optimize
# --threads 1 output, the reference, byte for byte; every run exits 0 with
# nothing on standard error (tally_matrix --ok, helpers.bash).  The shapes'
# quoted sort keys go through eval, in ARGS.
check() {
    local file=$1 t rows args
    shift
    for args in "${SHAPES[@]}"; do
        {
            echo "--no-optimize --threads 1"
            for t in $(matrix_threads 1 2 3 7); do
                if [ $# -eq 0 ] || [ -z "${TALLY_ASAN:-}" ]; then
                    echo "--threads $t"
                fi
                for rows in "$@"; do
                    echo "TALLY_BATCH_ROWS=$rows --threads $t"
                done
            done
        } | eval "tally_matrix --ok $file $args" || return 1
        [ "$(wc -l < mx/want.out)" -gt 3 ] || { echo "$args"; cat mx/want.out; return 1; }
        eval "run_tally explain $file $args"
        [[ "$output" == *" by "* ]] || { echo "not folded: $args"; show; return 1; }
    done
}

@test "topn-by parallel: small morsels, more groups than a morsel has rows" {
    gen 11 3000 400 > t.csv
    check t.csv 7 1000
}

@test "topn-by parallel: morsels of default size, 10000 groups" {
    gen 12 60000 10000 > t.csv
    check t.csv
}

@test "topn-by parallel: few groups, long ones (heaps full early, compaction)" {
    gen 13 20000 3 > t.csv
    check t.csv 7 333
}

@test "topn-by parallel: the serial batch path (TALLY_SORT_SERIAL) gives the same bytes" {
    gen 14 5000 700 > t.csv
    for args in "${SHAPES[@]}"; do
        {
            echo "--threads 3"
            for rows in 7 65536; do
                echo "TALLY_SORT_SERIAL=1 TALLY_BATCH_ROWS=$rows --threads 3"
            done
        } | eval "tally_matrix --ok t.csv $args" || return 1
    done
}

@test "topn-by parallel: ties across morsels keep input order, by hand" {
    write t.csv <<'EOF'
k,v,n
a,1,1
b,2,2
a,3,3
,3,4
b,2,5
a,,6
b,9,7
a,3,8
,3,9
,,10
a,3,11
b,2,12
EOF
    write want1.csv <<'EOF'
k,v,n
b,9,7
a,3,3
,3,4
a,3,8
,3,9
b,2,2
EOF
    write want2.csv <<'EOF'
k,v,n
a,,6
,,10
a,1,1
b,2,2
b,2,5
b,2,12
a,3,3
,3,4
,3,9
EOF
    # --threads 1, 2 and 7 at batch sizes 1, 2, 3 and 65536: exit 0,
    # nothing on standard error, exactly these bytes (tally_matrix --want,
    # helpers.bash)
    local t rows
    for t in 1 2 7; do
        for rows in 1 2 3 65536; do
            echo "TALLY_BATCH_ROWS=$rows --threads $t"
        done
    done > variants
    tally_matrix --want want1.csv t.csv --sort -v --head 2 --by k < variants
    tally_matrix --want want2.csv t.csv --sort 'v nulls first' --head 3 --by k < variants
}

@test "topn-by parallel: empty input and nothing left after the filter" {
    printf 'k,v\n' > e.csv
    printf 'k,v\n' > want.csv
    # tally_matrix --want: exit 0, nothing on standard error, exactly "k,v"
    printf '%s\n' "--threads 1" "--threads 2" "--threads 7" |
        tally_matrix --want want.csv e.csv --sort -v --head 2 --by k
    printf 'k,v\na,1\nb,2\n' > f.csv
    printf 'TALLY_BATCH_ROWS=1 --threads %s\n' 1 2 7 |
        tally_matrix --want want.csv f.csv --filter 'v > 5' --sort -v --head 2 --by k
}

@test "topn-by parallel: an error in a sort key is the same for every thread count, no output" {
    python3 -c "
print('g,w')
for i in range(5000): print(f'{i % 50},{i}')
print('7,9223372036854775807')
for i in range(5000): print(f'{i % 50},{i}')
" > o.csv
    # --threads 1, 2 and 7 at batch sizes 7 and 65536: the same status,
    # stdout and stderr as the first run, and no out.csv from any
    # (tally_matrix --out, helpers.bash); the first run's are checked here
    local t rows
    for t in 1 2 7; do
        for rows in 7 65536; do
            echo "TALLY_BATCH_ROWS=$rows --threads $t"
        done
    done > variants
    tally_matrix --out out.csv o.csv --sort 'w * 2' --head 2 --by g -o out.csv < variants
    matrix_result
    assert_err_glob 1 'tally: o.csv:5002:2: integer overflow in "w \* 2": 9223372036854775807 \* 2 (column "w")*'
    [ ! -e mx/want.file ] && [ ! -e out.csv ] || { echo "partial output"; return 1; }
}
