#!/usr/bin/env bats
# run-cli: weight=1
# left right lpad rpad reverse repeat strpos/instr initcap (man/tally.1,
# EXPRESSIONS, String functions), counted in characters.  Expected values
# are DuckDB 1.5.6's answers to the same calls (initcap, which DuckDB
# lacks, PostgreSQL's rule), and every error.

load helpers

sample() {
    printf 's,n,f\nhéllo,2,xy\nhéllo,-2,xy\nabc,5,xy\nabcdef,3,x\nabc,-1,x\né,3,ñ\n,1,x\nabc,,x\n' > s.csv
}

@test "left, right, lpad, rpad, reverse, repeat and strpos count characters, as DuckDB" {
    sample
    assert_run_out s.csv --select "left(s, n) as l, right(s, n) as r, lpad(s, n, f) as lp, rpad(s, n, f) as rp, reverse(s) as rv, repeat(s, n) as rep, strpos(s, 'l') as sp, instr(s, '') as e" <<'EOF'
l,r,lp,rp,rv,rep,sp,e
hé,lo,hé,hé,olléh,héllohéllo,3,1
hél,llo,"","",olléh,"",3,1
abc,abc,xyabc,abcxy,cba,abcabcabcabcabc,0,1
abc,def,abc,abc,fedcba,abcdefabcdefabcdef,0,1
ab,bc,"","",cba,"",0,1
é,é,ññé,éññ,é,ééé,0,1
,,,,,,,
,,,,cba,,0,1
EOF
}

@test "reverse keeps grapheme clusters whole, and reverses ASCII byte by byte" {
    printf 's\n"a\r\nb"\n🇫🇷🇩🇪\n👍🏽a\nxé\n' > g.csv
    run_tally g.csv --select "reverse(s) as r"
    assert_ok
    assert_out $'r\n"b\n\ra"\n🇩🇪🇫🇷\na👍🏽\néx'
}

@test "initcap capitalizes each run of letters and digits" {
    run_tally_in $'s\nhello wORLD-foo_bar 1st\nÉCOLE normale\n' - --select "initcap(s) as i"
    assert_ok
    assert_out $'i\nHello World-Foo_Bar 1st\nÉcole Normale'
}

@test "padding with an empty fill is a data error naming the row" {
    run_tally_in $'s\nabcdef\nab\n' - --select "lpad(s, 5, '') as x"
    assert_err 1 <<'EOF'
tally: <stdin>:3:1: insufficient padding (an empty fill) in "lpad(s, 5, '')": lpad("ab", 5, "") (column "s")
  --select: lpad(s, 5, '') as x
            ^^^^^^^^^^^^^^
EOF
}

@test "a repeat over 4 GiB is a data error, not an allocation" {
    run_tally_in $'s\nab\n' - --select "repeat(s, 3000000000) as x"
    assert_err 1 <<'EOF'
tally: <stdin>:2:1: string result is too long (more than 4294967295 bytes) in "repeat(s, 3000000000)": repeat("ab", 3000000000) (column "s")
  --select: repeat(s, 3000000000) as x
            ^^^^^^^^^^^^^^^^^^^^^
EOF
}

@test "padding past 4 GiB is a data error, not an allocation" {
    run_tally_in $'s\nab\n' - --select "rpad(s, 5000000000, 'x') as x"
    assert_err 1 <<'EOF'
tally: <stdin>:2:1: string result is too long (more than 4294967295 bytes) in "rpad(s, 5000000000, 'x')": rpad("ab", 5000000000, "x") (column "s")
  --select: rpad(s, 5000000000, 'x') as x
            ^^^^^^^^^^^^^^^^^^^^^^^^
EOF
}

@test "wrong argument types and counts are usage errors" {
    run_tally_in $'s,n\nab,1\n' - --select "left(n, s) as x"
    assert_err 2 <<'EOF'
tally: no function matches left(int64, string)
  --select: left(n, s) as x
            ^^^^^^^^^^
EOF
    run_tally_in $'s,n\nab,1\n' - --select "lpad(s, 3) as x"
    assert_err 2 <<'EOF'
tally: lpad() takes 3 arguments, got 2
  --select: lpad(s, 3) as x
            ^^^^^^^^^^
EOF
    run_tally_in $'s,n\nab,1\n' - --select "strpos(s, n) as x"
    assert_err 2 <<'EOF'
tally: no function matches strpos(string, int64)
  --select: strpos(s, n) as x
            ^^^^^^^^^^^^
EOF
}
