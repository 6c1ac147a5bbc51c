#!/usr/bin/env bats
# run-cli: weight=30 matrix
# threads_join.bats -- the hash join on all cores (lib/exec/op_join.c,
# join_table.c): every join kind, 1-3 keys, duplicates and nulls in keys,
# empty sides, built on either side, under --threads 1, 2, 3 and 8 and with
# TALLY_BATCH_ROWS=7 (many morsels): every run prints exactly the output of
# a nested-loop reference join written in awk, which follows the order
# rule of man/tally.1, JOINS (left rows in input order, each followed by its matches in
# right input order, then for right and full joins the unmatched right rows
# in right input order).

load helpers

# table FILE PREFIX ROWS DOMAIN NULL_PCT SEED: a CSV with key columns k1..k3
# (integers in [0, DOMAIN), empty = null about NULL_PCT% of the time), a
# PREFIX"v" column holding the row number and a PREFIX"s" word column.
table() {
    awk -v p="$2" -v n="$3" -v d="$4" -v np="$5" -v seed="$6" 'BEGIN {
        srand(seed)
        print "k1,k2,k3," p "v," p "s"
        for (r = 0; r < n; r++) {
            line = ""
            for (k = 1; k <= 3; k++) {
                v = (rand() * 100 < np) ? "" : int(rand() * d)
                line = line v ","
            }
            print line r "," p "w" int(rand() * 1000)
        }
    }' > "$1"
}

# reference HOW NKEYS: the expected output of l.csv joined with r.csv on
# k1..kNKEYS (a key with a null never matches).
reference() {
    awk -F, -v how="$1" -v nk="$2" '
    function keyof(f, k, i) {
        k = ""
        for (i = 1; i <= nk; i++) {
            if (f[i] == "") return ""
            k = k f[i] SUBSEP
        }
        return k
    }
    FNR == 1 { file++; if (file == 1) lhead = $0; else rhead = $0; next }
    file == 1 { nl++; lrow[nl] = $0; split($0, f, ","); lkey[nl] = keyof(f) }
    file == 2 { nr++; split($0, f, ","); rkey[nr] = keyof(f)
                rk[nr] = ""; for (i = 1; i <= nk; i++) rk[nr] = rk[nr] f[i] ","
                rest = ""; for (i = nk + 1; i <= 3; i++) rest = rest f[i] ","
                rout[nr] = rest f[4] "," f[5] }
    END {
        narrow = how == "semi" || how == "anti"
        split(rhead, h, ",")
        head = lhead
        if (!narrow) { for (i = nk + 1; i <= 3; i++) head = head "," h[i] "_right"
                       head = head "," h[4] "," h[5] }
        print head
        for (l = 1; l <= nl; l++) {
            any = 0
            for (r = 1; r <= nr; r++) {
                if (lkey[l] == "" || lkey[l] != rkey[r]) continue
                any = 1; hit[r] = 1
                if (!narrow) print lrow[l] "," rout[r]
            }
            if (how == "semi" && any) print lrow[l]
            if (how == "anti" && !any) print lrow[l]
            if ((how == "left" || how == "full") && !any) {
                pad = ""; for (i = nk + 1; i <= 3; i++) pad = pad ","
                print lrow[l] "," pad ","
            }
        }
        if (how == "right" || how == "full")
            for (r = 1; r <= nr; r++) if (!hit[r]) {
                mid = ""; for (i = nk + 1; i <= 3; i++) mid = mid ","
                print rk[r] mid ",," rout[r]
            }
    }' l.csv r.csv
}

# same_as_reference HOW NKEYS: tally's join of l.csv and r.csv, built on
# either side (TALLY_JOIN_BUILD), under --threads 1, 2, 3 and 8 (8 only
# under ASan: matrix_threads, helpers.bash) and TALLY_BATCH_ROWS unset and
# 7, exits 0 with nothing on standard error and prints exactly the
# reference's bytes (want.csv; tally_matrix --want, helpers.bash).
same_as_reference() {
    local how=$1 nk=$2 on=k1 rows t side
    [ "$nk" -ge 2 ] && on=k1,k2
    [ "$nk" -ge 3 ] && on=k1,k2,k3
    reference "$how" "$nk" > want.csv
    for side in right left; do
        for rows in "" 7; do
            for t in $(matrix_threads 1 2 3 8); do
                echo "TALLY_JOIN_BUILD=$side TALLY_BATCH_ROWS=$rows --threads $t"
            done
        done
    done | tally_matrix --want want.csv l.csv --join r.csv --on "$on" --how "$how"
}

# every_key_count HOW: 1, 2 and 3 keys on a few random tables (duplicates,
# nulls, a skewed small domain and a wide one).
every_key_count() {
    local how=$1 nk seed
    for nk in 1 2 3; do
        for seed in 1 2; do
            table l.csv l $((150 + seed * 37)) $((2 + seed * 2)) 12 "$seed$nk"
            table r.csv r $((90 + seed * 23)) $((2 + seed * 2)) 12 "$((seed + 7))$nk"
            same_as_reference "$how" "$nk" || return 1
        done
        table l.csv l 400 60 5 "3$nk"
        table r.csv r 300 60 5 "4$nk"
        same_as_reference "$how" "$nk" || return 1
    done
}

@test "inner join: every thread count and batch size, either build side, equals the reference" {
    every_key_count inner
}

@test "left join: every thread count and batch size, either build side, equals the reference" {
    every_key_count left
}

@test "right join: every thread count and batch size, either build side, equals the reference" {
    every_key_count right
}

@test "full join: every thread count and batch size, either build side, equals the reference" {
    every_key_count full
}

@test "semi join: every thread count and batch size, either build side, equals the reference" {
    every_key_count semi
}

@test "anti join: every thread count and batch size, either build side, equals the reference" {
    every_key_count anti
}

@test "empty sides (no rows after the header): every kind, thread count and build side" {
    local how
    for how in inner left right full semi anti; do
        table l.csv l 40 5 10 11
        table r.csv r 0 5 10 12
        same_as_reference "$how" 2 || return 1
        table l.csv l 0 5 10 13
        table r.csv r 40 5 10 14
        same_as_reference "$how" 2 || return 1
        table l.csv l 0 5 10 15
        table r.csv r 0 5 10 16
        same_as_reference "$how" 1 || return 1
    done
}

@test "keys that are all null on one side never match, under every thread count" {
    local how
    table l.csv l 50 4 100 21
    table r.csv r 50 4 0 22
    for how in inner left right full semi anti; do
        same_as_reference "$how" 1 || return 1
    done
}

@test "many matches per left row split across output batches (TALLY_BATCH_ROWS=7)" {
    local how
    table l.csv l 60 1 0 31
    table r.csv r 50 1 0 32
    for how in inner left right full; do
        same_as_reference "$how" 3 || return 1
    done
}

@test "a join below a filter and a group-by: the same bytes for every thread count" {
    # per batch size, --threads 1, 2, 3 and 8 (8 only under ASan:
    # matrix_threads, helpers.bash) exit 0 with nothing on standard error and
    # print the bytes of the first (tally_matrix --ok, helpers.bash)
    local t rows
    table l.csv l 3000 50 5 41
    table r.csv r 2000 50 5 42
    for rows in "" 7; do
        for t in $(matrix_threads 1 2 3 8); do
            echo "TALLY_BATCH_ROWS=$rows --threads $t"
        done | tally_matrix --ok l.csv --filter 'lv % 3 != 0' \
            --join r.csv --on k1,k2 --how full \
            --group-by k1 --agg 'n = count(), s = sum(rv), m = max(ls)'
    done
}

@test "a filter, a projection and a group-by after a join (fused into the join's tasks) equal the reference" {
    local how side rows t
    table l.csv l 700 30 8 51
    table r.csv r 500 30 8 52
    for how in inner left full; do
        reference "$how" 2 > joined.csv
        # keep rows whose rv is even (a null rv fails the filter), then count
        # rows and sum lv per k1, groups in order of first appearance
        awk -F, 'NR > 1 && $7 != "" && $7 % 2 == 0 {
                     if (!($1 in n)) order[++g] = $1
                     n[$1]++; s[$1] += $4; if ($4 != "") c[$1]++ }
                 END { print "k1,n,s"
                       for (i = 1; i <= g; i++)
                           print order[i] "," n[order[i]] "," (c[order[i]] ? s[order[i]] : "") }' \
            joined.csv > want.csv
        # built on either side, --threads 1, 2, 3 and 8 (8 only under ASan:
        # matrix_threads, helpers.bash), TALLY_BATCH_ROWS unset and 7: exit
        # 0, nothing on standard error, want.csv's bytes (tally_matrix --want)
        for side in right left; do
            for rows in "" 7; do
                for t in $(matrix_threads 1 2 3 8); do
                    echo "TALLY_JOIN_BUILD=$side TALLY_BATCH_ROWS=$rows --threads $t"
                done
            done
        done | tally_matrix --want want.csv l.csv --join r.csv --on k1,k2 --how "$how" \
            --filter 'rv % 2 = 0' --with 'x = lv + 1' --group-by k1 \
            --agg 'n = count(), s = sum(x - 1)'
    done
}
