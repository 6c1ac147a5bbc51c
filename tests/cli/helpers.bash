# helpers.bash -- shared by the tests/cli/*.bats files (load 'helpers').
#
# $TALLY is the binary under test (scripts/run-cli sets it).  Every test runs
# in its own empty folder under $BATS_TEST_TMPDIR, so files a test writes never
# leak into another (see enter_workdir).  Expected outputs are written out in full: heredocs in
# the test, or files under tests/cli/expected/.

bats_require_minimum_version 1.5.0

# Colour is the terminal tests' business (table.bats): a CLICOLOR_FORCE or
# NO_COLOR of the caller's environment must not colour or uncolour the
# messages every other test compares byte for byte.
unset CLICOLOR_FORCE NO_COLOR

: "${TALLY:=$BATS_TEST_DIRNAME/../../build/tally}"
CLI_DIR=$BATS_TEST_DIRNAME
DATA=$BATS_TEST_DIRNAME/data
EXPECTED=$BATS_TEST_DIRNAME/expected
EXAMPLES=$BATS_TEST_DIRNAME/../../examples

# Work in an empty folder of our own (bats keeps its own files for
# `run --separate-stderr` in $BATS_TEST_TMPDIR itself).
enter_workdir() {
    mkdir -p "$BATS_TEST_TMPDIR/work" && cd "$BATS_TEST_TMPDIR/work" || return 1
}

setup() {
    enter_workdir
}

# run_tally ARGS...: run tally; $status, $output (stdout only) and $stderr.
run_tally() {
    run --separate-stderr "$TALLY" "$@"
}

# run_tally_in TEXT ARGS...: like run_tally with TEXT on standard input.
run_tally_in() {
    local input=$1
    shift
    run --separate-stderr bash -c 'printf "%s" "$1" | "$2" "${@:3}"' _ \
        "$input" "$TALLY" "$@"
}

# Show what tally did (bats prints this only when the test fails).
show() {
    echo "status: $status"
    echo "--- stdout"
    printf '%s\n' "$output"
    echo "--- stderr"
    printf '%s\n' "${stderr:-}"
}

# assert_ok: exit status 0 and nothing on standard error.
assert_ok() {
    if [ "$status" -ne 0 ] || [ -n "${stderr:-}" ]; then
        show
        return 1
    fi
}

# assert_out [TEXT]: standard output is exactly TEXT (or standard input when
# no argument is given; bats strips trailing newlines from both).
assert_out() {
    local want
    if [ $# -gt 0 ]; then want=$1; else want=$(cat); fi
    if [ "$output" != "$want" ]; then
        show
        echo "--- wanted stdout"
        printf '%s\n' "$want"
        echo "--- diff (wanted -> got)"
        diff <(printf '%s\n' "$want") <(printf '%s\n' "$output") || true
        return 1
    fi
}

# assert_run_out ARGS...: run tally with ARGS, expect success and the stdout
# given on standard input.
assert_run_out() {
    local want
    want=$(cat)
    run_tally "$@"
    assert_ok
    assert_out "$want"
}

# assert_err CODE [MESSAGE]: exit status CODE, nothing on stdout and
# standard error exactly MESSAGE (or standard input).
assert_err() {
    local code=$1 want
    shift
    if [ $# -gt 0 ]; then want=$1; else want=$(cat); fi
    if [ "$status" -ne "$code" ] || [ "${stderr:-}" != "$want" ] || [ -n "$output" ]; then
        show
        echo "--- wanted status $code and stderr"
        printf '%s\n' "$want"
        return 1
    fi
}

# assert_err_glob CODE PATTERN: exit status CODE, nothing on stdout,
# standard error matches the shell PATTERN and starts with "tally: ".
assert_err_glob() {
    local code=$1 pat=$2
    # shellcheck disable=SC2053
    if [ "$status" -ne "$code" ] || [[ "${stderr:-}" != $pat ]] ||
        [[ "${stderr:-}" != "tally: "* ]] || [ -n "$output" ]; then
        show
        echo "--- wanted status $code and stderr matching: $pat"
        return 1
    fi
}

# assert_stderr_line N TEXT: line N (1-based) of standard error is TEXT.
assert_stderr_line() {
    local n=$1 want=$2 got
    got=$(printf '%s\n' "$stderr" | sed -n "${n}p")
    if [ "$got" != "$want" ]; then
        show
        echo "--- wanted stderr line $n: [$want]"
        echo "--- got                  : [$got]"
        return 1
    fi
}

# assert_only_files NAME...: the test folder holds exactly these files (so a
# failed run left no partial output and no temporary file behind).
assert_only_files() {
    local want got
    want=$(printf '%s\n' "$@" | sort)
    got=$(ls -A | sort)
    if [ "$want" != "$got" ]; then
        echo "--- wanted files:"
        printf '%s\n' "$want"
        echo "--- found files:"
        printf '%s\n' "$got"
        return 1
    fi
}

# write FILE: write standard input to FILE exactly (heredoc; keeps the final
# newline).
write() {
    cat > "$1"
}

# skip_if_unsupported: skip when the engine says a feature is not there yet
# (so the suite separates "missing" from "wrong").
skip_if_unsupported() {
    if [[ "${stderr:-}" == *"not supported"* || "${stderr:-}" == *"not implemented"* ||
          "${stderr:-}" == *"not yet"* ]]; then
        skip "engine: ${stderr}"
    fi
}

# --- large outputs and thread matrices (RELIABILITY.md, "Time budget") ---
#
# bats's `run` keeps every output in a variable and splits it into an array
# of lines, which for outputs of thousands of lines costs more than tally
# itself: tests with large outputs keep them in files (tally_files), and
# thread matrices compare the bytes of many runs in one process
# (tally_matrix).

# tally_files PREFIX ARGS...: run tally ARGS with standard output in
# PREFIX.out and standard error in PREFIX.err; sets $status.
tally_files() {
    local p=$1
    shift
    status=0
    "$TALLY" "$@" > "$p.out" 2> "$p.err" || status=$?
}

# files_ok PREFIX: the run of tally_files PREFIX exited 0 with nothing on
# standard error (else show what it printed and fail).
files_ok() {
    if [ "$status" -ne 0 ] || [ -s "$1.err" ]; then
        echo "status: $status"
        echo "--- stderr"
        head -n 20 "$1.err"
        return 1
    fi
}

# tally_matrix [--ok] [--want FILE] [--out PATH] ARGS...: run tally ARGS
# once per line of standard input, a variant: NAME=VALUE settings of the
# environment, then arguments appended to ARGS ("TALLY_BATCH_ROWS=7
# --threads 8").  The first variant is the reference, whose status, stdout
# and stderr every other must repeat (--want FILE: every variant prints
# FILE's bytes; --ok: every variant exits 0 with an empty stderr; --out
# PATH: the file written with -o PATH is compared too).  On a difference
# it prints the variant and the first differing line, and fails.  The runs
# happen one after another in one process, tally-matrix next to $TALLY
# (tests/support/matrix_run.c: the program's own main per run, a leak and
# descriptor check after each), which saves a process start (50-100 ms
# under ASan), a bats loop and two cmp per run (RELIABILITY.md, "Time
# budget").
# Leaves the reference's files in mx/want.out and mx/want.err, its exit
# status in mx/want.status (none with --want).
tally_matrix() {
    local opts=()
    while [ $# -gt 0 ]; do
        case $1 in
            --ok) opts+=("$1"); shift ;;
            --want|--out) opts+=("$1" "$2"); shift 2 ;;
            *) break ;;
        esac
    done
    local driver=${TALLY_MATRIX:-$(dirname "$TALLY")/tally-matrix}
    if [ ! -x "$driver" ]; then
        echo "no $driver (make $(dirname "$TALLY")/tally-matrix)"
        return 1
    fi
    "$driver" "${opts[@]}" mx "$@"
}

# matrix_result: the reference run of the last tally_matrix in $status,
# $output and $stderr (as run_tally leaves them).
matrix_result() {
    read -r status < mx/want.status
    output=$(cat mx/want.out)
    stderr=$(cat mx/want.err)
}

# same_as_switch VAR ARGS...: tally ARGS with the test switch VAR=1 and
# --threads 1 (the reference), and without the switch under --threads 1, 2
# and 7 (matrix_threads), each with the default batch size and with
# TALLY_BATCH_ROWS=7: the same exit status, standard output and standard
# error (tally_matrix).  Afterwards the reference run's files at the default
# batch size are in want.out / want.err, its status in $want_status and
# $status (for files_ok want).
same_as_switch() {
    local var=$1 rows t
    shift
    for rows in 7 ""; do
        {
            echo "$var=1 TALLY_BATCH_ROWS=$rows --threads 1"
            for t in $(matrix_threads 1 2 7); do
                echo "TALLY_BATCH_ROWS=$rows --threads $t"
            done
        } | tally_matrix "$@" || return 1
    done
    cp mx/want.out want.out
    cp mx/want.err want.err
    read -r want_status < mx/want.status
    status=$want_status
}

# matrix_threads N...: the --threads values a thread-matrix test runs (the
# files that prove byte-identical output for every --threads): all of them
# against the release build (where make check runs the matrix files only
# with CLI_ALL=1, scripts/run-cli), only the last under ASan (TALLY_ASAN):
# the largest count, pooled, with more threads than cores.  Most matrices'
# reference run and the OOM loop's pipelines use --threads 1 (every task
# inline on the waiter) under ASan, and every other CLI test's default run
# uses all cores; the counts in between reach the same code with other
# interleavings, which is TSan's field (scripts/tsan-smoke), not ASan's.
matrix_threads() {
    if [ -n "${TALLY_ASAN:-}" ]; then
        echo "${!#}"
    else
        echo "$*"
    fi
}
