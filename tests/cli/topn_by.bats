#!/usr/bin/env bats
# run-cli: weight=25
# Top N per group after a sort (`--sort -v --head N --by k`): the optimizer
# folds it into one sort node with a bounded heap per group
# (lib/opt/topn_by.c, lib/exec/op_topn_by.c).  The output must be that of
# the full sort followed by head --by, row for row: checked against
# --no-optimize on seeded random data with ties, nulls, NaN and -0.0, at
# several batch sizes (groups and heaps span batches).

load helpers

gen() {
    python3 - "$1" <<'EOF'
import random, sys
random.seed(int(sys.argv[1]))
print('id,g,h,v,s')
for i in range(3000):
    g = random.choice(['a', 'b', 'c', '', 'dd', 'e,e'] + [f'k{j}' for j in range(30)])
    g = '"' + g + '"' if ',' in g else g
    h = random.choice(['1', '2', '', '3'])
    r = random.random()
    v = '' if r < 0.1 else 'nan' if r < 0.15 else '-0.0' if r < 0.2 else str(random.randint(-10, 10) / 2)
    s = random.choice(['x', 'y', '', 'a longer string than twelve', 'x'])
    print(f'{i},{g},{h},{v},{s}')
EOF
}

@test "topn-by: the same rows in the same order as sort + head --by (random data)" {
    for seed in 1 2 3; do
        gen $seed > t.csv
        for args in "--sort -v --head 2 --by g" \
                    "--sort v --head 3 --by g,h" \
                    "--sort s,-v --head 1 --by h" \
                    "--sort 'v desc nulls first',s --head 5 --by s" \
                    "--sort h --head 7 --by g" \
                    "--filter 'v is not null' --sort -v --head 2 --by g --select g,v"; do
            eval "run_tally t.csv $args --no-optimize"
            assert_ok
            local want=$output
            [ "$(printf '%s\n' "$want" | wc -l)" -gt 3 ] || { show; return 1; }
            for rows in 1 7 100000; do
                eval "TALLY_BATCH_ROWS=$rows run_tally t.csv $args"
                assert_ok
                [ "$output" = "$want" ] || { echo "seed $seed rows $rows: $args"; show; return 1; }
            done
        done
    done
}

@test "topn-by: ties keep input order, by hand" {
    write t.csv <<'EOF'
k,v,n
a,1,1
b,2,2
a,3,3
a,3,4
b,2,5
a,,6
b,9,7
a,3,8
EOF
    assert_run_out t.csv --sort -v --head 2 --by k <<'EOF'
k,v,n
b,9,7
a,3,3
a,3,4
b,2,2
EOF
    run_tally explain t.csv --sort -v --head 2 --by k
    assert_ok
    [[ "$output" == *"sort v desc limit 2 by k"* ]] || { show; return 1; }
}
