#!/usr/bin/env bats
# run-cli: weight=8
# The table for people (man/tally.1, "Tables"): in a real pseudo-terminal
# (tmux, at widths 40, 80 and 200, screens compared with the golden files
# of tests/cli/data/table/*.screen), with --to table into a file, and the
# guarantee that pipes and files keep getting exactly the CSV; --rows,
# --color, NO_COLOR and CLICOLOR_FORCE.
#
# UPDATE_GOLDEN=1 rewrites the golden screens from what tally draws (then
# read them: the box must be straight in a terminal).

load helpers

TDATA=$DATA/table

# need_tmux: tmux runs the terminal tests; missing, they skip, except under
# CI=true, where they fail (scripts/setup-deps installs it).
need_tmux() {
    command -v tmux >/dev/null 2>&1 && return 0
    if [ "${CI:-}" = true ]; then
        echo "tmux is not installed (scripts/setup-deps installs it)"
        return 1
    fi
    skip "tmux is not installed"
}

# term_run WIDTH ARGS...: run tally with ARGS (after any NAME=VALUE words,
# which go to its environment) on a tmux terminal WIDTH columns wide and 60
# lines high (WIDTH "nosize": a terminal that reports a size of 0 x 0).  Sets $screen (what the terminal shows, trailing blank lines
# dropped; the last line is "[exit N]") and writes the bytes tally wrote to
# the terminal to the file raw.
term_run() {
    local width=$1 sock i
    shift
    need_tmux || return 1
    {
        echo 'while [ ! -e go ]; do sleep 0.02; done'
        [ "$width" = nosize ] && echo 'stty cols 0 rows 0'
        echo 'unset COLUMNS' # the caller's, if exported
        printf 'exec env'
        while [ $# -gt 0 ] && [[ "$1" == *=* ]] && [[ "$1" != -* ]]; do
            printf ' %q' "$1"
            shift
        done
        printf ' %q' "$TALLY" "$@"
        echo
    } > run.sh
    rm -f go raw done
    sock=$(mktemp -u /tmp/tally-tmux.XXXXXX)
    [ "$width" = nosize ] && width=80
    LC_ALL=C.UTF-8 tmux -u -S "$sock" -f /dev/null new-session -d -x "$width" -y 60 \
        "bash run.sh; printf '[exit %d]' \$?; touch done; sleep 60"
    tmux -S "$sock" pipe-pane -o "cat > '$PWD/raw'"
    touch go
    for i in $(seq 200); do
        [ -e done ] && break
        sleep 0.05
    done
    screen=$(tmux -S "$sock" capture-pane -p | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}')
    tmux -S "$sock" kill-server
    rm -f "$sock"
    [ -e done ] || { echo "tally did not finish on the terminal"; return 1; }
}

# screen_is NAME: $screen is tests/cli/data/table/NAME.screen.
screen_is() {
    local want=$TDATA/$1.screen
    if [ -n "${UPDATE_GOLDEN:-}" ]; then
        printf '%s\n' "$screen" > "$want"
    fi
    if [ "$screen" != "$(cat "$want")" ]; then
        diff <(printf '%s\n' "$screen") "$want"
        return 1
    fi
}

# no_escapes: the bytes tally wrote to the terminal hold no ESC.
no_escapes() {
    local n
    n=$(tr -cd '\033' < raw | wc -c)
    [ "$n" -eq 0 ] || { echo "$n escape bytes"; od -c raw | head; return 1; }
}

make_wide1000() {
    awk 'BEGIN { for (r = 0; r < 4; r++) { line = "";
        for (c = 1; c <= 1000; c++) line = line (c > 1 ? "," : "") (r ? (r * 1000 + c) : "c" c);
        print line } }' > wide1000.csv
}

@test "table: CJK, emoji, combining and accented text stay aligned at widths 40, 80, 200" {
    for w in 40 80 200; do
        term_run "$w" "$TDATA/wide.csv"
        screen_is "wide.w$w"
    done
}

@test "table: null is null, the empty string \"\", a string null \"null\"" {
    for w in 40 80 200; do
        term_run "$w" NO_COLOR=1 "$TDATA/nulls.csv"
        screen_is "nulls.w$w"
        no_escapes
    done
}

@test "table: 0 rows and 1 row" {
    for w in 40 80 200; do
        term_run "$w" NO_COLOR=1 "$TDATA/empty.csv"
        screen_is "empty.w$w"
        term_run "$w" NO_COLOR=1 "$TDATA/one.csv"
        screen_is "one.w$w"
    done
}

@test "table: 1,000 columns elide the middle ones to fit 40, 80, 200 cells" {
    make_wide1000
    for w in 40 80 200; do
        term_run "$w" NO_COLOR=1 wide1000.csv
        screen_is "wide1000.w$w"
    done
}

@test "table: 100 rows show the first and last 20; --rows 6 the first and last 3" {
    seq 1 100 | sed 1ix > h.csv
    term_run 40 NO_COLOR=1 h.csv --with 'y = x * 1.5'
    screen_is rows100.w40
    term_run 80 NO_COLOR=1 h.csv --rows 6
    screen_is rows6.w80
    term_run 80 NO_COLOR=1 h.csv --rows 7 --filter 'x > 95'
    screen_is rows7of5.w80
}

@test "table: colour on a terminal by default; none with NO_COLOR or --color=never" {
    term_run 80 "$TDATA/nulls.csv"
    screen_is nulls.w80
    # bold names, dim types and nulls
    grep -q $'\033\\[1mid\033\\[0m' raw
    grep -q $'\033\\[2mnull\033\\[0m' raw
    term_run 80 NO_COLOR=1 "$TDATA/nulls.csv"
    screen_is nulls.w80
    no_escapes
    term_run 80 "$TDATA/nulls.csv" --color=never
    screen_is nulls.w80
    no_escapes
    # NO_COLOR wins over CLICOLOR_FORCE; --color=always over NO_COLOR
    term_run 80 NO_COLOR=1 CLICOLOR_FORCE=1 "$TDATA/nulls.csv"
    no_escapes
    term_run 80 NO_COLOR=1 "$TDATA/nulls.csv" --color=always
    grep -q $'\033\\[1mid\033\\[0m' raw
    # an empty NO_COLOR does not count
    term_run 80 NO_COLOR= "$TDATA/nulls.csv"
    grep -q $'\033\\[1mid\033\\[0m' raw
}

@test "table: on a terminal --to csv, -o and the CSV-only output options give CSV" {
    term_run 80 "$TDATA/nulls.csv" --to csv
    [ "$screen" = $'id,s,x\n1,"",1.5\n2,,\n3,text,-2.25\n4,null,\n[exit 0]' ]
    no_escapes
    term_run 80 "$TDATA/nulls.csv" --out-null NA
    [ "$screen" = $'id,s,x\n1,"",1.5\n2,NA,NA\n3,text,-2.25\n4,null,NA\n[exit 0]' ]
    term_run 80 "$TDATA/nulls.csv" -o -
    [ "$screen" = $'id,s,x\n1,"",1.5\n2,,\n3,text,-2.25\n4,null,\n[exit 0]' ]
    term_run 80 "$TDATA/nulls.csv" -o out.csv
    [ "$screen" = '[exit 0]' ]
    [ "$(cat out.csv)" = $'id,s,x\n1,"",1.5\n2,,\n3,text,-2.25\n4,null,' ]
}

@test "table: error carets are red on a terminal, plain with NO_COLOR and in a pipe" {
    term_run 80 "$TDATA/nulls.csv" --filter 'xx > 1'
    [ "$screen" = $'tally: unknown column "xx" (did you mean "x"?)\n  --filter: xx > 1\n            ^^\n[exit 2]' ]
    grep -q $'            \033\\[31m\\^\\^\033\\[0m' raw
    term_run 80 NO_COLOR=1 "$TDATA/nulls.csv" --filter 'xx > 1'
    no_escapes
    run_tally "$TDATA/nulls.csv" --filter 'xx > 1'
    assert_err 2 <<'EOF'
tally: unknown column "xx" (did you mean "x"?)
  --filter: xx > 1
            ^^
EOF
}

@test "table: into a pipe the same commands give exactly the CSV of --to csv" {
    make_wide1000
    for args in "$TDATA/wide.csv" "$TDATA/nulls.csv" "$TDATA/empty.csv" \
        "$TDATA/one.csv" wide1000.csv; do
        run_tally $args
        assert_ok
        local piped=$output
        run_tally $args --to csv
        [ "$output" = "$piped" ]
        [[ "$piped" != *"│"* ]]
    done
    run_tally "$TDATA/nulls.csv"
    assert_out <<'EOF'
id,s,x
1,"",1.5
2,,
3,text,-2.25
4,null,
EOF
    # CLICOLOR_FORCE colours nothing of the CSV: only a table has colour
    run --separate-stderr env CLICOLOR_FORCE=1 "$TALLY" "$TDATA/nulls.csv"
    assert_out <<'EOF'
id,s,x
1,"",1.5
2,,
3,text,-2.25
4,null,
EOF
}

@test "--to table into a file: the width of \$COLUMNS, else 80" {
    run --separate-stderr env -u COLUMNS "$TALLY" "$TDATA/wide.csv" -o t.txt --to table
    assert_ok
    cat > want <<'EOF'
┌───────┬────────┬──────────────┬──────────────────────────────────┐
│    id │ name   │ city         │ note                             │
│ int64 │ string │ string       │ string                           │
├───────┼────────┼──────────────┼──────────────────────────────────┤
│     1 │ Zoë    │ 東京         │ café                             │
│     2 │ José   │ 서울         │ 😀 ok                            │
│     3 │ Ａｂｃ │ Paris        │ naïve                            │
│     4 │ Ω      │ 北京市朝阳区 │ A long note that is far wider t… │
└───────┴────────┴──────────────┴──────────────────────────────────┘
4 rows, 4 columns
EOF
    cmp t.txt want
    run --separate-stderr env COLUMNS=30 "$TALLY" "$TDATA/wide.csv" --to table
    assert_ok
    assert_out <<'EOF'
┌───────┬───┬────────────────┐
│    id │ … │ note           │
│ int64 │   │ string         │
├───────┼───┼────────────────┤
│     1 │ … │ café           │
│     2 │ … │ 😀 ok          │
│     3 │ … │ naïve          │
│     4 │ … │ A long note t… │
└───────┴───┴────────────────┘
4 rows, 4 columns (2 shown)
EOF
    # a COLUMNS that is not a width is ignored; --color=always into a file
    run --separate-stderr env COLUMNS=wide "$TALLY" "$TDATA/one.csv" --to table --color=always
    assert_ok
    assert_out "$(printf '┌───────┬────────┐\n│  \033[1monly\033[0m │ \033[1mone\033[0m    │\n│ \033[2mint64\033[0m │ \033[2mstring\033[0m │\n├───────┼────────┤\n│    42 │ row    │\n└───────┴────────┘\n1 row, 2 columns')"
}

@test "--to table: --rows all, control characters escaped, one column cut to the width" {
    seq 1 45 | sed 1in > n.csv
    run --separate-stderr env COLUMNS=80 "$TALLY" n.csv --to table --rows all
    assert_ok
    [ "$(printf '%s\n' "$output" | wc -l)" -eq 51 ]
    [ "$(printf '%s\n' "$output" | tail -1)" = "45 rows, 1 column" ]
    printf '{"s":"a\\tb\\u001b[31mred\\n\\u202eevil"}\n{"s":"\\"quoted\\""}\n' > c.ndjson
    run --separate-stderr env COLUMNS=20 "$TALLY" c.ndjson --to table
    assert_ok
    assert_out <<'EOF'
┌──────────────────┐
│ s                │
│ string           │
├──────────────────┤
│ a\tb\x1b[31mred… │
│ """quoted"""     │
└──────────────────┘
2 rows, 1 column
EOF
}

@test "--rows and --color: bad values are usage errors listing the choices" {
    run_tally "$TDATA/one.csv" --rows 0
    assert_err 2 'tally: --rows: expected a count of rows from 1, or all, got "0"'
    run_tally "$TDATA/one.csv" --rows many
    assert_err 2 'tally: --rows: expected a count of rows from 1, or all, got "many"'
    run_tally "$TDATA/one.csv" --color=blue
    assert_err 2 'tally: --color: expected auto, always or never, got "blue"'
    run_tally "$TDATA/one.csv" --color
    assert_err 2 'tally: option "--color" needs a value'
    run_tally "$TDATA/one.csv" --to table --out-null NA
    assert_err 2 'tally: --out-null applies to CSV and TSV output, not table'
    run_tally "$TDATA/one.csv" --to tabel
    assert_err 2 'tally: unsupported output format "tabel" (tally writes csv, tsv, ndjson, jsonl, json, table, parquet)'
}

@test "--to table: a type widened by a restart, and a closed pipe is quiet" {
    { echo v; seq 1 30; echo 2.5; } > w.csv
    run --separate-stderr env TALLY_BATCH_ROWS=4 COLUMNS=80 "$TALLY" w.csv --to table --rows 4
    assert_ok
    assert_out <<'OUT'
┌─────────┐
│       v │
│ float64 │
├─────────┤
│     1.0 │
│     2.0 │
│       … │
│    30.0 │
│     2.5 │
└─────────┘
31 rows (4 shown), 1 column
OUT
    seq 1 200000 | sed 1ix > long.csv
    run --separate-stderr bash -c '"$1" long.csv --to table --rows all | head -1; echo "${PIPESTATUS[0]}"' _ "$TALLY"
    [ "$status" -eq 0 ]
    [ -z "$stderr" ]
    [ "$output" = $'┌────────┐\n0' ]
}

@test "table: a terminal that reports no size: \$COLUMNS, else 80" {
    term_run nosize NO_COLOR=1 COLUMNS=30 "$TDATA/wide.csv"
    [ "$screen" = "$(cat "$TDATA/wide.w30.file")"$'\n[exit 0]' ]
    term_run nosize NO_COLOR=1 "$TDATA/wide.csv"
    [ "$screen" = "$(cat "$TDATA/wide.w80.screen")" ]
}
