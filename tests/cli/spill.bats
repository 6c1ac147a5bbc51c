#!/usr/bin/env bats
# run-cli: weight=2
# The memory budget and spilling (man/tally.1, MEMORY; lib/core/budget.c,
# formats/spill.c, lib/exec/sort_spill.c): --memory-limit, TALLY_MEMORY_LIMIT
# and the pipeline file's memory_limit; --temp-dir; the external sort's
# output byte for byte the in-memory sort's, for every --threads, under a
# real budget and under TALLY_FORCE_SPILL; no spill file left behind on any
# exit; every error.

load helpers

setup() {
    enter_workdir
    mkdir tmp
    # 20,000 rows: ints with duplicates and nulls, floats with -0.0, nan
    # and inf, short and long strings, dates, bools (a deterministic LCG)
    awk 'BEGIN {
        x = 12345; print "i,f,s,d,b"
        for (r = 0; r < 20000; r++) {
            x = (x * 1103515245 + 12345) % 2147483648; i = x % 97 - 40
            x = (x * 1103515245 + 12345) % 2147483648; f = (x % 1000) / 8 - 60
            x = (x * 1103515245 + 12345) % 2147483648; k = x % 13
            fs = k == 0 ? "" : k == 1 ? "-0.0" : k == 2 ? "nan" : k == 3 ? "inf" : k == 4 ? "0.0" : f
            x = (x * 1103515245 + 12345) % 2147483648; k = x % 11
            s = k == 0 ? "" : k < 4 ? "s" (x % 7) : "a long string of text number " (x % 50)
            x = (x * 1103515245 + 12345) % 2147483648
            d = x % 9 == 0 ? "" : sprintf("2024-0%d-1%d", x % 9 + 1, x % 10)
            b = x % 5 == 0 ? "" : x % 2 ? "true" : "false"
            print (x % 17 == 0 ? "" : i) "," fs "," s "," d "," b
        }
    }' > in.csv
}

# spill_same KEYS ARGS...: the sort by KEYS with ARGS (and the environment
# given with env before it) writes the same bytes as the in-memory sort.
spill_same() {
    local keys=$1
    shift
    "$TALLY" in.csv --sort "$keys" -o want.csv
    "$@" "$TALLY" in.csv --sort "$keys" --temp-dir tmp -o got.csv --stats 2> stats.txt ||
        { cat stats.txt; return 1; }
    cmp want.csv got.csv
    grep -q '^sort_runs: ' stats.txt || { echo "no spill"; cat stats.txt; return 1; }
    [ -z "$(ls -A tmp)" ]
    rm -f want.csv got.csv
}

@test "spill: forced spilling gives the in-memory sort's bytes, every key type" {
    for keys in i f s d b 'f desc' 's desc nulls first' 'd,i desc' 'b,s,f' \
        'i * 2' 'i nulls first,f desc nulls first'; do
        spill_same "$keys" env TALLY_FORCE_SPILL=1 || { echo "keys: $keys"; return 1; }
    done
}

@test "spill: a real budget spills runs, cascades their merge, same bytes for every --threads" {
    for t in 1 2 4; do
        "$TALLY" in.csv --sort 's,i desc' -o want.csv
        TALLY_BATCH_ROWS=1000 "$TALLY" in.csv --sort 's,i desc' --memory-limit 200KB \
            --threads $t --temp-dir tmp -o got.csv --stats 2> stats.txt
        cmp want.csv got.csv
        grep -qx 'sort_runs: 21' stats.txt || { cat stats.txt; return 1; }
        grep -qx 'memory_limit: 200000' stats.txt
        [ -z "$(ls -A tmp)" ]
    done
}

@test "spill: 90% of the rows on one key stay in input order (stable)" {
    awk 'BEGIN { print "k,n"; for (r = 0; r < 3000; r++) print (r % 10 ? 7 : r % 13) "," r }' > in.csv
    spill_same k env TALLY_FORCE_SPILL=1
    spill_same 'k desc' env TALLY_FORCE_SPILL=1
}

@test "spill: --sort with --head keeps its bounded pool and never spills" {
    run_tally in.csv --sort f --head 3 --select f --memory-limit 1KB --stats
    [ "$status" -eq 0 ]
    assert_out <<'EOF'
f
-60.0
-60.0
-60.0
EOF
    [[ "$stderr" != *sort_runs* ]]
    TALLY_FORCE_SPILL=1 run_tally in.csv --sort f --head 3 --select f --stats
    [ "$status" -eq 0 ]
    [[ "$stderr" != *sort_runs* ]]
}

@test "spill: --memory-limit units (DuckDB's: MB 10^6, MiB 2^20) and percent" {
    for pair in 500MB:500000000 4GiB:4294967296 1.5kb:1500 2K:2000 100:100 \
        3mib:3145728 1TB:1000000000000 1b:1; do
        run_tally in.csv --head 1 --select i --memory-limit "${pair%%:*}" --stats
        [ "$status" -eq 0 ]
        [[ "$stderr" == *$'\nmemory_limit: '"${pair#*:}"$'\n'* ]] || { show; echo "$pair"; return 1; }
    done
    local half=$(( $(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) * 1024 / 2 ))
    run_tally in.csv --head 1 --memory-limit 50% --stats
    [[ "$stderr" == *$'\nmemory_limit: '"$half"$'\n'* ]] || { show; echo "$half"; return 1; }
}

@test "spill: TALLY_MEMORY_LIMIT sets the budget; --memory-limit wins over it" {
    TALLY_MEMORY_LIMIT=2MiB run_tally in.csv --head 1 --stats
    [[ "$stderr" == *$'\nmemory_limit: 2097152\n'* ]] || { show; return 1; }
    TALLY_MEMORY_LIMIT=2MiB run_tally in.csv --head 1 --stats --memory-limit 3MB
    [[ "$stderr" == *$'\nmemory_limit: 3000000\n'* ]] || { show; return 1; }
}

@test "spill: the default budget is at most 80% of physical memory" {
    local most=$(( $(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) * 1024 / 5 * 4 ))
    run_tally in.csv --head 1 --stats
    local got
    got=$(printf '%s\n' "$stderr" | sed -n 's/^memory_limit: //p')
    [ -n "$got" ] && [ "$got" -le "$most" ] && [ "$got" -gt 0 ]
}

@test "spill: the pipeline file's memory_limit and temp_dir" {
    mkdir -p p/spilldir
    cp in.csv p/in.csv
    printf '{"input": "in.csv", "steps": [{"sort": ["s", "i"]}], "memory_limit": "200KB", "temp_dir": "spilldir"}\n' > p/pipe.json
    "$TALLY" in.csv --sort s,i -o want.csv
    TALLY_BATCH_ROWS=1000 run_tally -f p/pipe.json -o got.csv --stats
    [ "$status" -eq 0 ]
    [[ "$stderr" == *$'\nmemory_limit: 200000\n'* ]] || { show; return 1; }
    [[ "$stderr" == *$'\nsort_runs: '* ]] || { show; return 1; }
    cmp want.csv got.csv
    [ -z "$(ls -A p/spilldir)" ]
    printf '{"input": "in.csv", "temp_dir": "nowhere"}\n' > p/bad.json
    run_tally -f p/bad.json
    assert_err 2 'tally: cannot create a spill file in "p/nowhere" (--temp-dir): No such file or directory'
    printf '{"input": "in.csv", "memory_limit": "lots"}\n' > p/bad.json
    run_tally -f p/bad.json
    assert_err 2 'tally: p/bad.json: /memory_limit: expected a size such as "500MB", "4GiB" or "50%"'
    printf '{"input": "in.csv", "memory_limit": 100}\n' > p/bad.json
    run_tally -f p/bad.json
    assert_err 2 'tally: p/bad.json: /memory_limit: expected a size such as "500MB", "4GiB" or "50%"'
}

@test "spill: a limit that is not a size is a usage error" {
    for bad in lots 0 -5 1.5XB 101% 0% '' 12Q 'MB'; do
        run_tally in.csv --memory-limit "$bad"
        assert_err 2 "tally: --memory-limit: expected a size such as 500MB, 4GiB or 50%, got \"$bad\"" ||
            { echo "value: $bad"; return 1; }
    done
    TALLY_MEMORY_LIMIT=lots run_tally in.csv
    assert_err 2 'tally: TALLY_MEMORY_LIMIT: expected a size such as 500MB, 4GiB or 50%, got "lots"'
}

@test "spill: a missing, non-folder or unwritable --temp-dir is a usage error" {
    run_tally in.csv --temp-dir nope
    assert_err 2 'tally: cannot create a spill file in "nope" (--temp-dir): No such file or directory'
    run_tally in.csv --temp-dir in.csv
    assert_err 2 'tally: cannot create a spill file in "in.csv" (--temp-dir): Not a directory'
    run_tally in.csv --temp-dir /sys
    assert_err 2 'tally: cannot create a spill file in "/sys" (--temp-dir): Permission denied'
    if [ "$(id -u)" != 0 ]; then
        mkdir ro && chmod 555 ro
        run_tally in.csv --temp-dir ro
        assert_err 2 'tally: cannot create a spill file in "ro" (--temp-dir): Permission denied'
    fi
    run_tally in.csv --temp-dir ''
    assert_err 2 'tally: --temp-dir: expected a directory, got ""'
}

@test "spill: \$TMPDIR is the default folder, checked only when a spill file is needed" {
    TMPDIR=$PWD/tmp TALLY_FORCE_SPILL=1 run_tally in.csv --sort i -o out.csv --stats
    [ "$status" -eq 0 ]
    [ -z "$(ls -A tmp)" ]
    TMPDIR=$PWD/nope run_tally in.csv --sort i --head 2 --select i
    assert_ok
    TMPDIR=$PWD/nope TALLY_FORCE_SPILL=1 run_tally in.csv --sort i -o out2.csv
    assert_err 2 "tally: cannot create a spill file in \"$PWD/nope\" (\$TMPDIR): No such file or directory"
    [ ! -e out2.csv ]
}

@test "spill: a budget below what the merge needs fails naming the sort and the limit" {
    TALLY_BATCH_ROWS=1000 run_tally in.csv --sort s --memory-limit 20KB -o out.csv --temp-dir tmp
    assert_err 1 'tally: sort (merging its spilled runs) needs at least 76.4 KiB of memory; the memory limit is 19.5 KiB (20KB) (raise --memory-limit)'
    [ ! -e out.csv ]
    [ -z "$(ls -A tmp)" ]
}

@test "spill: a full disk or a failed read while spilling is a clean error" {
    [ -z "${TALLY_ASAN:-}" ] || skip "LD_PRELOAD shim is not used with ASan"
    local shim="$BATS_TEST_DIRNAME/../../build/iofail.so"
    [ -f "$shim" ] || skip "build/iofail.so not built"
    printf 'old\n' > out.csv
    TALLY_FORCE_SPILL=1 LD_PRELOAD=$shim TALLY_IOFAIL=write:1:ENOSPC \
        run_tally in.csv --sort i -o out.csv --temp-dir tmp
    assert_err_glob 1 'tally: cannot write a spill file in "tmp": No space left on device (a block of * bytes, after 0 bytes spilled)'
    [ "$(cat out.csv)" = old ]
    [ -z "$(ls -A tmp)" ]
    TALLY_FORCE_SPILL=1 LD_PRELOAD=$shim TALLY_IOFAIL=write:40:EIO \
        run_tally in.csv --sort i -o out.csv --temp-dir tmp
    assert_err_glob 1 'tally: cannot write a spill file in "tmp": Input/output error (a block of *, after * spilled)'
    [ "$(cat out.csv)" = old ]
    TALLY_FORCE_SPILL=1 LD_PRELOAD=$shim TALLY_IOFAIL=read:5:EIO \
        run_tally in.csv --sort i -o out.csv --temp-dir tmp
    assert_err 1 'tally: cannot read a spill file in "tmp": Input/output error'
    [ "$(cat out.csv)" = old ]
    assert_only_files in.csv out.csv tmp
    [ -z "$(ls -A tmp)" ]
}

# start_spilling [ENV=VALUE...]: a forced-spill sort of 300,000 rows in
# batches of 3 (a run each: seconds of spilling) to standard output (here
# /dev/null: an output file's own temporary file is signals.bats'
# business), in the background; returns once it holds a spill file open
# in tmp.  Sets $pid.
start_spilling() {
    awk 'BEGIN { print "a,b"; for (r = 0; r < 300000; r++) print (r * 7919) % 1000 "," r }' > big.csv
    env --default-signal=INT "$@" TALLY_FORCE_SPILL=1 TALLY_BATCH_ROWS=3 "$TALLY" big.csv --sort a \
        --temp-dir tmp > /dev/null 2> err.txt &
    pid=$!
    for _ in $(seq 1 200); do
        ls -l "/proc/$pid/fd" 2>/dev/null | grep -q "$PWD/tmp/" && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.02
    done
    echo "tally never opened a spill file"; cat err.txt
    return 1
}

@test "spill: no spill file is left after SIGINT or SIGKILL of a spilling run" {
    for env in TALLY_NO_TMPFILE= TALLY_NO_TMPFILE=1; do
        start_spilling "$env"
        local got=0
        kill -INT "$pid"
        wait "$pid" || got=$?
        [ "$got" -eq 130 ] || { echo "status $got"; cat err.txt; return 1; }
        [ -z "$(ls -A tmp)" ]
        start_spilling "$env"
        got=0
        kill -KILL "$pid"
        wait "$pid" || got=$?
        [ "$got" -eq 137 ]
        [ -z "$(ls -A tmp)" ] || { ls -la tmp; return 1; }
        rm -f big.csv err.txt
        assert_only_files in.csv tmp
    done
}

@test "spill: a type-inference restart after runs were spilled starts the sort afresh" {
    { echo 'a,b'; seq 1 30 | sed 's/$/,x/'; echo '1.5,y'; } > in.csv
    "$TALLY" in.csv --sort 'a desc' -o want.csv
    TALLY_BATCH_ROWS=4 TALLY_FORCE_SPILL=1 run_tally in.csv --sort 'a desc' --temp-dir tmp \
        -o got.csv --stats
    [ "$status" -eq 0 ]
    cmp want.csv got.csv
    [[ "$stderr" == *$'\nrestarts: 1\n'* ]] || { show; return 1; }
    [[ "$stderr" == *$'\nsort_runs: 15\n'* ]] || { show; return 1; }
    [ -z "$(ls -A tmp)" ]
}
