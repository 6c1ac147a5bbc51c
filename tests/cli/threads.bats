#!/usr/bin/env bats
# run-cli: weight=15 matrix
# --threads: the output is byte-identical for every thread count, and for a
# fixed TALLY_BATCH_ROWS (morsel boundaries follow the batch size, so float
# subtotals may differ between batch sizes, never between thread counts).

load helpers

# same_for_threads ARGS...: run tally with ARGS under --threads 1, 2, 3 and
# 8 (8 only under ASan: matrix_threads, helpers.bash), with the default
# batch size and with TALLY_BATCH_ROWS=7 (many morsels); every run exits 0
# with nothing on standard error and, per batch size, prints the bytes of
# the --threads 1 run (tally_matrix --ok, helpers.bash).  The --threads 1
# output of the default batch size is left in $output.
same_for_threads() {
    local rows t
    for rows in "" 7; do
        for t in $(matrix_threads 1 2 3 8); do
            echo "TALLY_BATCH_ROWS=$rows --threads $t"
        done | tally_matrix --ok "$@" || return 1
        [ -n "$rows" ] || output=$(cat mx/want.out)
    done
    stderr=
}

# ===================================================================
# group-by and --agg (lib/exec/op_agg.c's morsel stage)
# ===================================================================

# h2o ROWS: an H2O-style table g.csv (id1..id6, v1..v3) from a fixed
# generator, with empty (null) values in every column now and then.
h2o() {
    awk -v n="$1" 'BEGIN {
        s = 12345
        print "id1,id2,id3,id4,id5,id6,v1,v2,v3"
        for (i = 0; i < n; i++) {
            for (j = 0; j < 10; j++) { s = (s * 16807) % 2147483647; r[j] = s }
            id1 = sprintf("id%03d", r[0] % 10 + 1)
            id2 = sprintf("id%03d", r[1] % 10 + 1)
            id3 = sprintf("id%010d", r[2] % 400 + 1)
            id4 = r[3] % 10 + 1
            id5 = r[4] % 10 + 1
            id6 = r[5] % 400 + 1
            v1 = r[6] % 5 + 1
            v2 = r[7] % 15 + 1
            v3 = sprintf("%.4f", (r[8] % 1000000) / 10000)
            if (r[9] % 97 == 0) v3 = ""
            if (r[9] % 89 == 0) v1 = ""
            if (r[9] % 83 == 0) id2 = ""
            if (r[9] % 79 == 0) id4 = ""
            print id1 "," id2 "," id3 "," id4 "," id5 "," id6 "," v1 "," v2 "," v3
        }
    }' > g.csv
}

@test "threads: H2O q1-q3 shapes (few and many groups, string keys) are the same for every thread count" {
    h2o 6000
    same_for_threads g.csv --group-by id1 --agg 'v1 = sum(v1)'
    [ "$(printf '%s\n' "$output" | wc -l)" -eq 11 ]
    same_for_threads g.csv --group-by id1,id2 --agg 'v1 = sum(v1)'
    same_for_threads g.csv --group-by id3 --agg 'v1 = sum(v1), v3 = mean(v3)'
    [ "$(printf '%s\n' "$output" | wc -l)" -eq 401 ]
}

@test "threads: H2O q4-q7 and q9 shapes (int keys, sums, median, std, corr)" {
    h2o 6000
    same_for_threads g.csv --group-by id4 --agg 'v1 = mean(v1), v2 = mean(v2), v3 = mean(v3)'
    same_for_threads g.csv --group-by id6 --agg 'v1 = sum(v1), v2 = sum(v2), v3 = sum(v3)'
    same_for_threads g.csv --group-by id4,id5 --agg 'median_v3 = median(v3), sd_v3 = std(v3)'
    same_for_threads g.csv --group-by id3 --agg 'range_v1_v2 = max(v1) - min(v2)'
    same_for_threads g.csv --group-by id2,id4 --agg 'r2 = pow(corr(v1, v2), 2)'
}

@test "threads: H2O q8 and q10 shapes (top 2 per group; six keys, a group per row)" {
    h2o 6000
    same_for_threads g.csv --filter 'v3 is not null' --sort -v3 --head 2 --by id6 \
        --select 'id6, v3 as largest2_v3'
    same_for_threads g.csv --group-by id1,id2,id3,id4,id5,id6 --agg 'v3 = sum(v3), count = count()'
    [ "$(printf '%s\n' "$output" | wc -l)" -gt 5000 ]
}

@test "threads: every aggregate function, with keys and without" {
    h2o 3000
    local aggs="n = count(), nv = count(v3), s = sum(v1), sf = sum(v3), m = mean(v1),
        mf = mean(v3), lo = min(v3), hi = max(id3), los = min(id2), fi = first(v3),
        la = last(id2), fi2 = first(v1), la2 = last(v3), an = any(v1 > 4), al = all(v2 > 1),
        sd = std(v3), va = var(v1), co = corr(v1, v3), cv = covar(v2, v3),
        med = median(v3), q = quantile(v1, 0.9), cd = count_distinct(id3),
        sa = string_agg(id2, '|')"
    same_for_threads g.csv --group-by id4 --agg "$aggs"
    same_for_threads g.csv --group-by id1,id5 --agg "$aggs"
    same_for_threads g.csv --group-by id3 --agg "$aggs"
    same_for_threads g.csv --agg "$aggs"
    same_for_threads g.csv --filter 'v2 > 3' --with 'w = v1 * 2' --group-by id5 \
        --agg 'w = sum(w), n = count()'
}

@test "threads: exact aggregates through the stage equal the serial path byte for byte" {
    h2o 5000
    local aggs="n = count(), nv = count(v1), s = sum(v1), m = mean(v2), lo = min(v3),
        hi = max(id3), fi = first(v3), la = last(id2), an = any(v1 > 4), al = all(v2 > 1),
        med = median(v3), q = quantile(v1, 0.9), cd = count_distinct(id3),
        sa = string_agg(id2, '|')"
    local keys
    # per batch size, the serial path (TALLY_AGG_SERIAL=1, the reference)
    # and --threads 3: exit 0, nothing on standard error, the same bytes
    # (tally_matrix --ok, helpers.bash)
    for keys in id4 id1,id2 id3 id1,id2,id3,id4,id5,id6; do
        for rows in "" 7; do
            {
                echo "TALLY_BATCH_ROWS=$rows TALLY_AGG_SERIAL=1"
                echo "TALLY_BATCH_ROWS=$rows --threads 3"
            } | tally_matrix --ok g.csv --group-by "$keys" --agg "$aggs"
        done
    done
}

@test "threads: group-by errors are the same for every thread count" {
    # --threads 1, 2 and 8: the same status, stdout and stderr as the first
    # (tally_matrix, helpers.bash), which is the error wanted
    local t
    printf 'k,v\na,9223372036854775807\nb,1\na,1\n' > o.csv
    for t in 1 2 8; do
        echo "TALLY_BATCH_ROWS=1 --threads $t"
    done | tally_matrix o.csv --group-by k --agg 's = sum(v)'
    matrix_result
    assert_err_glob 1 'tally: sum overflows int64 in group k="a"*'
    printf 'k\na\na\nb\na\n' > r.csv
    for t in 1 2 8; do
        echo "TALLY_BATCH_ROWS=2 --threads $t"
    done | tally_matrix r.csv --sorted --group-by k --agg 'n = count()'
    matrix_result
    assert_err 1 'tally: r.csv:5: --sorted: key k="a" reappears after its run ended'
}
