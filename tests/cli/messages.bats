#!/usr/bin/env bats
# messages.bats -- data in error messages is quoted, escaped and cut (man
# tally, DIAGNOSTICS): control characters, invalid UTF-8, C1 and bidirectional
# controls never reach the terminal raw, and a long value shows its start and
# its length.  Each kind of message that embeds data has its exact stderr here.

load 'helpers'

ESC=$'\033'
BEL=$'\007'

# A column "a" whose second value retitles and recolours a terminal.
hostile_csv() {
    printf 'a,b\n1,x\n%s[31mRED%s]0;pwned%s,y\n' "$ESC" "$ESC" "$BEL" > e.csv
}

@test "messages: a failed cast in an expression shows the value escaped" {
    hostile_csv
    run_tally e.csv --with 'c = cast(a as int64)'
    assert_err 1 <<'EOF'
tally: e.csv:3:1: cannot cast "\x1b[31mRED\x1b]0;pwned\x07" to int64 (column "a")
  --with: c = cast(a as int64)
              ^^^^^^^^^^^^^^^^
EOF
}

@test "messages: a --schema type error shows the value escaped" {
    hostile_csv
    run_tally e.csv --schema 'a:int64'
    assert_err 1 'tally: e.csv:3:1: "\x1b[31mRED\x1b]0;pwned\x07" is not a valid int64 (column "a")'
}

@test "messages: an NDJSON string keeps its JSON escapes, raw bytes escaped" {
    printf '{"a":"\\u001b[31m \\"q\\" \302\233 \342\200\256"}\n' > j.ndjson
    run_tally j.ndjson --schema 'a:int64'
    assert_err 1 'tally: j.ndjson:1:6: "\u001b[31m \"q\" \u009b \u202e" is not a valid int64 (column "a")'
}

@test "messages: quotes, backslashes, tabs, newlines and invalid UTF-8 in a value" {
    printf 'a\n"x""y\\z\t\r\n\377"\n' > q.csv
    run_tally q.csv --schema 'a:int64'
    assert_err 1 'tally: q.csv:2:1: "x\"y\\z\t\r\n\xff" is not a valid int64 (column "a")'
}

@test "messages: a file name with an escape, in a data error and when missing" {
    printf 'k\na\n' > "x${ESC}[31m.csv"
    run_tally "x${ESC}[31m.csv" --schema 'k:int64'
    assert_err 1 'tally: x\x1b[31m.csv:2:1: "a" is not a valid int64 (column "k")'
    run_tally "no${ESC}]0;t${BEL}.csv"
    assert_err 1 'tally: cannot open "no\x1b]0;t\x07.csv": No such file or directory'
    run_tally "no${ESC}*.csv"
    assert_err 1 'tally: no file matches "no\x1b*.csv"'
}

@test "messages: a column name with an escape in the unknown-column suggestion" {
    printf 'na%sme,v\nab,1\n' "$ESC" > h.csv
    run_tally h.csv --select 'name'
    assert_err 2 <<'EOF'
tally: unknown column "name" (did you mean "na\x1bme"?)
  --select: name
            ^^^^
EOF
    run_tally h.csv --filter 'na_me > 1'
    assert_err 2 <<'EOF'
tally: unknown column "na_me" (did you mean "na\x1bme"?)
  --filter: na_me > 1
            ^^^^^
EOF
}

@test "messages: --schema entries with escapes" {
    printf 'k\n1\n' > s.csv
    run_tally s.csv --schema "k${ESC}[1m:int64"
    assert_err 2 'tally: --schema: no column "k\x1b[1m" in s.csv'
    run_tally s.csv --schema "k:int${BEL}"
    assert_err 2 'tally: --schema: unknown type "int\x07" for column "k"'
}

@test "messages: a long value shows its first 48 bytes, an ellipsis and its length" {
    { echo a; head -c 12345 /dev/zero | tr '\0' 'a'; echo; } > long.csv
    run_tally long.csv --schema 'a:int64'
    assert_err 1 'tally: long.csv:2:1: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…" (12,345 bytes) is not a valid int64 (column "a")'
    run_tally long.csv --with 'b = cast(a as int64)'
    assert_err 1 <<'EOF'
tally: long.csv:2:1: cannot cast "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…" (12,345 bytes) to int64 (column "a")
  --with: b = cast(a as int64)
              ^^^^^^^^^^^^^^^^
EOF
}

@test "messages: a long value is cut between characters, never inside one" {
    { echo a; printf 'é%.0s' $(seq 40); echo; } > u.csv
    run_tally u.csv --schema 'a:int64'
    assert_err 1 'tally: u.csv:2:1: "éééééééééééééééééééééééé…" (80 bytes) is not a valid int64 (column "a")'
}

@test "messages: an overflowing group's key and a --sorted key are escaped" {
    printf 'k,v\n%s]0;x%s,9223372036854775807\n%s]0;x%s,1\n' "$ESC" "$BEL" "$ESC" "$BEL" > o.csv
    run_tally o.csv --group-by k --agg 's = sum(v)'
    assert_err 1 <<'EOF'
tally: sum overflows int64 in group k="\x1b]0;x\x07"
  --agg: s = sum(v)
             ^^^^^^
EOF
    printf 'k\n%s\nb\n%s\n' "$ESC" "$ESC" > "s${ESC}.csv"
    run_tally "s${ESC}.csv" --sorted --group-by k --agg 'n = count()'
    assert_err 1 'tally: s\x1b.csv:4: --sorted: key k="\x1b" reappears after its run ended'
}

@test "messages: a function error shows its arguments escaped" {
    printf 'p,d\n%s[1m,2024-01-02\n' "$ESC" > f.csv
    run_tally f.csv --with 'b = date_trunc(p, d)'
    assert_err 1 <<'EOF'
tally: f.csv:2: unknown date part "\x1b[1m" for date_trunc (expected year, quarter, month, week, day, hour, minute or second) in "date_trunc(p, d)": date_trunc("\x1b[1m", 2024-01-02)
  --with: b = date_trunc(p, d)
              ^^^^^^^^^^^^^^^^
EOF
}

@test "messages: option values and expression text with escapes" {
    printf 'k\n1\n' > s.csv
    run_tally s.csv --threads "${ESC}[2J"
    assert_err 2 'tally: --threads: expected a non-negative integer up to 4096, got "\x1b[2J"'
    run_tally s.csv --filter "k ${ESC} 1"
    assert_err 2 <<'EOF'
tally: syntax error: unexpected "\x1b"
  --filter: k   1
              ^
EOF
}

@test "messages: whatever a message holds, no control character reaches stderr" {
    # a pipeline file's name heads its messages unquoted: the final escape
    # of every message before it is printed covers it
    printf '{"input": "s.csv", "stepz": []}' > "p${ESC}[1m.json"
    run_tally -f "p${ESC}[1m.json"
    assert_err 2 'tally: p\x1b[1m.json: unknown key "stepz" (did you mean "steps"?)'
}
