#!/usr/bin/env bats
# Float sums, means, std, var, corr and covar (kernels/xsum.c) do not
# depend on the layout of the input: the same rows shuffled, read as CSV
# or as NDJSON, under --threads 1, 2 and 3 and with batches of 7 rows give
# the same bytes, and sums and means are the exact sums rounded once.

load helpers

# gen_rows N SEED: a header and N rows "g,x,y": g one of five keys, x a
# decimal with 0 to 8 digits after the point and up to 9 digits in all
# (magnitudes 1e-8 to 1e8, either sign), y a decimal in 0..1 (a
# Park-Miller generator in awk: exact in doubles, the same everywhere).
gen_rows() {
    awk -v n="$1" -v s="$2" 'function r() { s = (s * 16807) % 2147483647; return s }
    BEGIN {
        print "g,x,y"
        for (i = 0; i < n; i++) {
            a = r() % 1000000000; d = r() % 9; sg = (r() % 3 == 0) ? "-" : ""
            p = 1; for (k = 0; k < d; k++) p *= 10
            ip = int(a / p); fp = a - ip * p
            x = d ? sprintf("%s%d.%0" d "d", sg, ip, fp) : sprintf("%s%d.5", sg, ip)
            printf "%s,%s,0.%04d\n", substr("abcde", r() % 5 + 1, 1), x, r() % 10000
        }
    }'
}

# gen_ints N SEED: a header and N rows "g,k,j" of integers: most below
# 2^26 (whose squares and products add as integers), some below 2^31 and
# a few up to 2^41 (whose products take the double path, rounded product
# plus error), so batches of 7 rows take either path.
gen_ints() {
    awk -v n="$1" -v s="$2" 'function r() { s = (s * 16807) % 2147483647; return s }
    BEGIN {
        print "g,k,j"
        for (i = 0; i < n; i++) {
            c = r() % 10
            k = c < 6 ? r() % 100000 : c < 9 ? r() : r() * 1024 + r() % 1024
            c = r() % 10
            j = c < 6 ? r() % 1000 - 500 : c < 9 ? -r() : r() * 512 + r() % 512
            printf "%s,%.0f,%.0f\n", substr("abc", r() % 3 + 1, 1), k, j
        }
    }'
}

# shuffle SEED < CSV: the header, then the rows in an order of the seed's.
shuffle() {
    awk -v s="$1" 'function r() { s = (s * 16807) % 2147483647; return s }
    NR == 1 { print "k\t" $0; next } { printf "%d\t%s\n", r(), $0 }' |
        LC_ALL=C sort -s -t "$(printf '\t')" -k1,1n | cut -f2-
}

# make_inputs [GEN]: rows.csv (gen_rows, or GEN), its shuffles s1.csv and
# s2.csv, and the three as NDJSON (written by tally, whose output reads
# back as the same doubles).
make_inputs() {
    "${1:-gen_rows}" 3000 12345 > rows.csv
    shuffle 777 < rows.csv > s1.csv
    shuffle 4242 < rows.csv > s2.csv
    local f
    for f in rows s1 s2; do
        "$TALLY" "$f.csv" -o "$f.ndjson" || return 1
    done
}

# layouts WANT ARGS...: tally INPUT ARGS prints WANT's bytes for every
# input (rows, two shuffles, CSV and NDJSON), under --threads 1, 2, 3 with
# the default batch size and with TALLY_BATCH_ROWS=7 (one tally_matrix per
# input, helpers.bash).
layouts() {
    local want=$1 f t
    shift
    for f in rows.csv s1.csv s2.csv rows.ndjson s1.ndjson s2.ndjson; do
        for t in $(matrix_threads 1 2 3); do
            echo "--threads $t"
            echo "TALLY_BATCH_ROWS=7 --threads $t"
        done | tally_matrix --want "$want" "$f" "$@" || { echo "input $f"; return 1; }
    done
}

STATS='n = count(), s = sum(x), m = mean(x), sd = std(x), v = var(x), c = corr(x, y), cv = covar(x, y)'

@test "sum, mean, std, var, corr, covar: the same bytes for any row order, format, thread count and batch size" {
    make_inputs
    cat > want.csv <<'EOF'
n,s,m,sd,v,c,cv
3000,55229443689.757805,18409814.5632526,179078064.41729566,3.2068953155445096e+16,-0.014715944257797414,-763903.5538186028
EOF
    layouts want.csv --agg "$STATS"
}

@test "the same statistics per group: the same bytes for any row order, format, thread count and batch size" {
    make_inputs
    cat > want.csv <<'EOF'
g,n,s,m,sd,v,c,cv
a,616,14055315477.436115,22817070.580253433,196024637.27272773,3.842565841790448e+16,-0.010966485054649932,-625566.5689383834
b,617,2433180185.2101507,3943565.940373016,174452654.85339144,3.0433728785396516e+16,0.0008140185476016934,41913.01165536292
c,621,9554662244.101503,15385929.539615948,176378660.77474,3.1109431976690812e+16,-0.04904135642781273,-2522332.576067208
d,567,11455988713.10366,20204565.63157612,165923329.11555934,2.753055114479022e+16,-0.06499392994300585,-3067275.146798668
e,579,17730297069.906372,30622274.73213536,179824734.46264014,3.233693512455903e+16,0.04125711532236697,2125709.894746577
EOF
    layouts want.csv --group-by g --agg "$STATS" --sort g
}

@test "integer columns (some products exact as integers, some not): the same bytes for any layout" {
    make_inputs gen_ints
    cat > want.csv <<'EOF'
g,n,s,m,sd,v,c,cv
a,1056,107940890681140,102216752538.95833,372370142502.7519,4.2290649603442515e+22,-0.01866087685975903,-1.4289896264169003e+21
b,946,105920573627799,111966779733.40276,390274386047.51465,4.295791788759238e+22,0.04637745985972871,3.7514453069658215e+21
c,998,120823942164971,121066074313.59819,410646950191.0376,3.6120274962600904e+22,-0.013999356558189405,-1.0925773690454362e+21
EOF
    layouts want.csv --group-by g --agg 'n = count(), s = sum(k), m = mean(k), sd = std(k), v = var(j), c = corr(k, j), cv = covar(k, j)' --sort g
}

@test "float sums are exact, rounded once: ten 0.1 sum to 1.0, 1e16 + 1 + 1 - 1e16 to 2.0, in any order" {
    printf 'x\n0.1\n0.1\n0.1\n0.1\n0.1\n0.1\n0.1\n0.1\n0.1\n0.1\n' > tenth.csv
    run_tally tenth.csv --agg 's = sum(x), m = mean(x)'
    assert_ok
    assert_out <<'EOF'
s,m
1.0,0.1
EOF
    printf 'x\n1e16\n1.0\n1.0\n-1e16\n' > big.csv
    printf 'x\n-1e16\n1.0\n1e16\n1.0\n' > big2.csv
    for f in big.csv big2.csv; do
        run_tally "$f" --agg 's = sum(x), m = mean(x), v = var(x)'
        assert_ok
        assert_out <<'EOF'
s,m,v
2.0,0.5,6.666666666666667e+31
EOF
    done
}

@test "var, std, covar and corr come from exact sums: exact where the answer is a double, a constant column has var 0 and corr null" {
    printf 'x,y,k\n1000000001,4,7.1\n1000000002,3,7.1\n1000000003,2,7.1\n1000000004,1,7.1\n' > m.csv
    run_tally m.csv --agg 'v = var(x), sd = std(x), cv = covar(x, y), c = corr(x, y), vk = var(k), ck = corr(x, k)'
    assert_ok
    assert_out <<'EOF'
v,sd,cv,c,vk,ck
1.6666666666666667,1.2909944487358056,-1.6666666666666667,-1.0,0.0,
EOF
}

@test "inf and nan: inf wins a sum, inf and -inf give nan, an exact sum beyond the double range is inf; var is nan when its sums overflow" {
    printf 'g,x\na,1e308\na,1e308\na,-1e308\nb,1e308\nb,1e308\nc,inf\nc,1\nd,inf\nd,-inf\ne,nan\ne,1\nf,-1e308\nf,-1e308\n' > sp.csv
    for t in 1 2; do
        run_tally sp.csv --threads $t --group-by g --agg 's = sum(x), m = mean(x), v = var(x)'
        assert_ok
        assert_out <<'EOF'
g,s,m,v
a,1e+308,3.333333333333333e+307,nan
b,inf,inf,nan
c,inf,inf,nan
d,nan,nan,nan
e,nan,nan,nan
f,-inf,-inf,nan
EOF
    done
}

@test "a constant column has var and std 0 for any count (a moment within the rounding bound is 0)" {
    printf 'x\n0.1\n0.1\n0.1\n0.1\n0.1\n0.1\n0.1\n' > c.csv
    assert_run_out c.csv --agg 'sd = std(sqrt(x)), v = var(x), cv = covar(x, x)' <<'EOF2'
sd,v,cv
0.0,0.0,0.0
EOF2
}
