#!/usr/bin/env bats
# run-cli: weight=60 matrix
# The radix-partitioned group-by (lib/exec/op_agg.c, staged path with keys):
# output byte-identical for every --threads, for many morsels
# (TALLY_BATCH_ROWS=7), with morsels pre-aggregated or not (TALLY_AGG_PRE=1
# always where the aggregates allow, 0 never, unset: by each morsel's
# sample), and to the serial path (TALLY_AGG_SERIAL=1) wherever results are
# exact: integers, strings, first/last, string_agg, count_distinct, median,
# float sums of integer values.  Keys of every type: int, float with -0.0,
# NaN and nulls, short and long (> 12 bytes) strings, dates, bools, nulls.

load helpers

# gen ROWS CARD: t.csv with keys ki (int), kf (float: -0.0, 0.0, NaN,
# nan, nulls, CARD values), ks (strings, short and long), kd (date), kb
# (bool) and values v (int), w (integer-valued float), t (string), with
# nulls here and there.  CARD bounds the distinct values of each key.
# Under ASan 2/5 of ROWS: with TALLY_BATCH_ROWS=7 still hundreds of morsels
# with rows in every partition, at 2/5 of the cost.
gen() {
    local n=$1
    [ -z "${TALLY_ASAN:-}" ] || n=$((n * 2 / 5))
    awk -v n="$n" -v card="$2" 'BEGIN {
        s = 4242
        print "ki,kf,ks,kd,kb,v,w,t"
        for (i = 0; i < n; i++) {
            for (j = 0; j < 9; j++) { s = (s * 16807) % 2147483647; r[j] = s }
            ki = r[0] % card
            f = r[1] % (card + 5)
            if (f == 0) kf = "-0.0"; else if (f == 1) kf = "0.0"
            else if (f == 2) kf = "NaN"; else if (f == 3) kf = "nan"
            else if (f == 4) kf = ""; else kf = sprintf("%.2f", f / 4)
            k = r[2] % card
            ks = (k % 2) ? sprintf("s%d", k) : sprintf("a-long-string-key-%08d", k)
            kd = sprintf("2024-%02d-%02d", r[3] % 12 + 1, r[3] % 28 + 1)
            kb = (r[4] % 2) ? "true" : "false"
            v = r[5] % 1000 - 300
            w = sprintf("%d.0", r[6] % 100)
            t = sprintf("t%d", r[7] % 50)
            if (r[8] % 31 == 0) ki = ""
            if (r[8] % 37 == 0) ks = ""
            if (r[8] % 41 == 0) kd = ""
            if (r[8] % 43 == 0) kb = ""
            if (r[8] % 29 == 0) v = ""
            if (r[8] % 47 == 0) w = ""
            if (r[8] % 53 == 0) t = ""
            print ki "," kf "," ks "," kd "," kb "," v "," w "," t
        }
    }' > t.csv
}

# same_everywhere [--noserial] ARGS...: tally ARGS under --threads 1, 2, 3
# and 7 (7 only under ASan: matrix_threads), TALLY_BATCH_ROWS unset and 7,
# TALLY_AGG_PRE unset, 0 and 1 (--threads 3 only with it unset), and
# (without --noserial) TALLY_AGG_SERIAL=1: every run exits 0 with nothing
# on standard error and prints the same bytes per batch size (with
# --noserial per batch size and TALLY_AGG_PRE, where float subtotals
# follow the morsels and their pre-aggregation): one tally_matrix
# (helpers.bash) each, its first variant TALLY_AGG_PRE unset and --threads
# 1.  Under ASan only TALLY_BATCH_ROWS=7 (hundreds of morsels: every
# partition, pre-aggregation and merge path); the default size makes these
# files one morsel, a path every other group-by test runs under ASan.
# Leaves in $output the first batch size's reference output (with
# --noserial its TALLY_AGG_PRE=1 matrix's).
same_everywhere() {
    local serial=1 rows pre first=1 sizes=("" 7)
    if [ "$1" = --noserial ]; then serial=; shift; fi
    [ -z "${TALLY_ASAN:-}" ] || sizes=(7)
    for rows in "${sizes[@]}"; do
        if [ -n "$serial" ]; then
            {
                for pre in "" 0 1; do
                    pre_variants "$rows" "$pre"
                done
                echo "TALLY_AGG_SERIAL=1 TALLY_BATCH_ROWS=$rows"
            } | tally_matrix --ok "$@" || return 1
        else
            for pre in "" 0 1; do
                pre_variants "$rows" "$pre" | tally_matrix --ok "$@" || return 1
            done
        fi
        [ -z "$first" ] || output=$(cat mx/want.out)
        first=
    done
    stderr=
}

# pre_variants ROWS PRE: same_everywhere's variants (tally_matrix) for
# TALLY_BATCH_ROWS=ROWS and TALLY_AGG_PRE=PRE: --threads 1, 2, 3 and 7
# (matrix_threads), without 3 when PRE is set.
pre_variants() {
    local t
    for t in $(matrix_threads 1 2 3 7); do
        if [ -z "$2" ] || [ "$t" != 3 ]; then
            echo "TALLY_AGG_PRE=$2 TALLY_BATCH_ROWS=$1 --threads $t"
        fi
    done
}

EXACT="n = count(), nv = count(v), s = sum(v), mi = min(v), ma = max(t), fi = first(t), la = last(w), sw = sum(w), mv = mean(v), sa = string_agg(t, '|'), an = any(kb), al = all(kb)"
HOLISTIC="md = median(w), q = quantile(v, 0.25), cd = count_distinct(t), fi = first(v), sa = string_agg(t)"

@test "agg_partitioned: few groups (pre-aggregated morsels), every key type, exact" {
    gen 3000 6
    for keys in ki kf ks kd kb "ki,kf" "ks,kd,kb" "kf,ks,ki,kd"; do
        same_everywhere t.csv --group-by "$keys" --agg "$EXACT" || return 1
    done
}

@test "agg_partitioned: many groups (rows to partitions), every key type, exact" {
    gen 5000 2000
    for keys in ki kf ks "ki,kf" "ks,kd" "kf,ks,ki,kd,kb"; do
        same_everywhere t.csv --group-by "$keys" --agg "$EXACT" || return 1
    done
}

@test "agg_partitioned: median, quantile, count_distinct (never pre-aggregated)" {
    gen 4000 300
    for keys in ki ks "kf,kb" "ks,kd"; do
        same_everywhere t.csv --group-by "$keys" --agg "$HOLISTIC" || return 1
    done
}

@test "agg_partitioned: float sums, std, corr: the same for every thread count" {
    gen 4000 50
    for keys in ki "ks,kb"; do
        same_everywhere --noserial t.csv --group-by "$keys" \
            --agg "s = sum(v / 7), m = mean(w / 3), sd = std(v), c = corr(v, w)" || return 1
    done
}

@test "agg_partitioned: the first appearance order and known values" {
    # k is a string column: NaN and nan are different strings here
    printf 'k,v\nb,1\n-0.0,2\na,3\n0.0,4\nb,5\nNaN,6\n,7\nnan,8\na-very-long-key-indeed,9\n,10\n' > k.csv
    same_everywhere k.csv --group-by k --agg "n = count(), s = sum(v), sa = string_agg(v)"
    assert_out <<'EOF'
k,n,s,sa
b,2,6,"1,5"
-0.0,1,2,2
a,1,3,3
0.0,1,4,4
NaN,1,6,6
,2,17,"7,10"
nan,1,8,8
a-very-long-key-indeed,1,9,9
EOF
    printf 'f,v\n-0.0,2\n0.0,4\nNaN,6\nnan,8\n,1\n' > f.csv
    same_everywhere f.csv --group-by f --agg "n = count(), s = sum(v), fi = first(v)"
    assert_out <<'EOF'
f,n,s,fi
-0.0,2,6,2
nan,2,14,6
,1,1,1
EOF
}

@test "agg_partitioned: empty input and all-null keys" {
    printf 'k,v\n' > e.csv
    same_everywhere e.csv --group-by k --agg "n = count(), s = sum(v)"
    assert_out 'k,n,s'
    awk 'BEGIN { print "k,j,v"; for (i = 0; i < 500; i++) print ",," i }' > n.csv
    same_everywhere n.csv --group-by k,j --agg "n = count(), s = sum(v), f = first(v), l = last(v)"
    assert_out <<'EOF'
k,j,n,s,f,l
,,500,124750,0,499
EOF
}

@test "agg_partitioned: more groups than a morsel and than an output batch" {
    # 30,000 rows: k has 20,011 groups, s 15,013, (s, k) one per row.  Under
    # ASan 3,000 rows (2,003 and 1,511 groups): with TALLY_BATCH_ROWS=7 both
    # sizes have groups in every partition of thousands of 7-row morsels and
    # hundreds of 7-row output batches, and the 30,000-row file cost ~170 CPU
    # seconds under ASan (RELIABILITY.md, "Time budget").
    local n=30000 pk=20011 ps=15013
    [ -z "${TALLY_ASAN:-}" ] || { n=3000; pk=2003; ps=1511; }
    awk -v n=$n -v pk=$pk -v ps=$ps 'BEGIN { print "k,s,v"; for (i = 0; i < n; i++)
        printf "%d,key-number-%07d,%d\n", (i * 7919) % pk, (i * 104729) % ps, i }' > m.csv
    same_everywhere m.csv --group-by k --agg "n = count(), s = sum(v), f = first(s)"
    [ "$(printf '%s\n' "$output" | wc -l)" = $((pk + 1)) ]
    same_everywhere m.csv --group-by s,k --agg "n = count(), l = last(v)"
    [ "$(printf '%s\n' "$output" | wc -l)" = $((n + 1)) ]
    TALLY_BATCH_ROWS=1000 run_tally m.csv --group-by s --agg "n = count()" --threads 2
    assert_ok
    [ "$(printf '%s\n' "$output" | sed -n 2p)" = "key-number-0000000,2" ]
    [ "$(printf '%s\n' "$output" | wc -l)" = $((ps + 1)) ]
}

@test "agg_partitioned: sum overflow names the first group in output order, no output file" {
    # groups a, b, c, d; b overflows first in the input, but a comes first
    # in the output; d overflows only in the second aggregate.
    printf 'k,v,w\na,1,1\nb,9000000000000000000,1\nc,5,1\nb,9000000000000000000,1\n' > o.csv
    printf 'a,9000000000000000000,1\na,9000000000000000000,1\nd,1,9000000000000000000\nd,1,9000000000000000000\n' >> o.csv
    # TALLY_BATCH_ROWS unset, 1, 2 and 7, TALLY_AGG_PRE unset, 0 and 1,
    # --threads 1, 2 and 7: the same status, stdout, stderr and (missing)
    # out.csv as the first run (tally_matrix --out, helpers.bash), which
    # exits 1 naming group a and writes no out.csv
    local rows pre t
    for rows in "" 1 2 7; do
        for pre in "" 0 1; do
            for t in 1 2 7; do
                echo "TALLY_AGG_PRE=$pre TALLY_BATCH_ROWS=$rows --threads $t"
            done
        done
    done | tally_matrix --out out.csv o.csv --group-by k \
        --agg "s = sum(v), s2 = sum(w)" -o out.csv
    matrix_result
    [ "$status" -eq 1 ] || { show; return 1; }
    [[ "$stderr" == *"sum overflows int64 in group k=\"a\""* ]] || { show; return 1; }
    [ ! -e mx/want.file ] || { echo "partial output"; return 1; }
    TALLY_AGG_SERIAL=1 run_tally o.csv --group-by k --agg "s = sum(v), s2 = sum(w)"
    local serial=$stderr
    run_tally o.csv --group-by k --agg "s = sum(v), s2 = sum(w)" --threads 2
    [ "$stderr" = "$serial" ] || { echo "serial: $serial"; show; return 1; }
    run_tally o.csv --group-by k --agg "s2 = sum(w), s = sum(v)" --threads 2
    [[ "$stderr" == *"sum overflows int64 in group k=\"d\""* ]] || { show; return 1; }
}

@test "agg_partitioned: q10-like near-unique keys and a filter below" {
    gen 6000 100000
    same_everywhere t.csv --group-by ki,ks,kd,kb,kf --agg "n = count(), s = sum(v), sw = sum(w)"
    same_everywhere t.csv --filter "v > 100" --group-by ks --agg "n = count(), l = last(t)"
    same_everywhere t.csv --with "g = v % 17" --group-by g --agg "n = count(), s = sum(w)"
}
