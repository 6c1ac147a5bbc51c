#!/usr/bin/env bats
# run-cli: weight=1
# format (fmt's {} style) and printf (C's % style), as DuckDB has them
# (man/tally.1, EXPRESSIONS, String functions).  Expected values are
# DuckDB 1.5.6's answers to the same calls; every error.

load helpers

one() {
    printf 'x,s,f,d\n1,ab,2.5,2024-01-02\n' > one.csv
}

@test "format: positions, alignment, fill, sign, bases, precision, thousands" {
    one
    assert_run_out one.csv --select "format('{} {}', s, x) as a, format('{:>5}|{:<5}|{:^5}', 'a', 'b', 'c') as b, format('{1} {0}', 'a', 'b') as c, format('{:.2f}', 3.14159) as d, format('{:05d}', 42) as e, format('{:x}|{:X}|{:o}|{:b}|{:#b}|{:#o}|{:#X}', 255, 255, 8, 5, 5, 8, 255) as f, format('{:,}', -1234567) as g, format('{:,.2f}', 1234567.891) as h, format('{:*^9}', s) as i, format('{{}}') as j" <<'EOF'
a,b,c,d,e,f,g,h,i,j
ab 1,    a|b    |  c  ,b a,3.14,00042,ff|FF|10|101|0b101|010|0XFF,"-1,234,567","1,234,567.89",***ab****,{}
EOF
}

@test "format: floats shortest by default, %g with a precision, e f g a types" {
    one
    assert_run_out one.csv --select "format('{}', f) as a, format('{}', 1e20) as b, format('{}', 1e-5) as c, format('{:.2}', 3.14159) as d, format('{:.10}', 1.0/3) as e, format('{:f}|{:.1f}|{:e}|{:.3e}|{:g}|{:.3g}|{:10.3f}|{:<10.3f}|{:010.3f}', 1.5, 2.25, 1234.5, 1234.5, 1234.5, 3.14159, 3.14159, 3.14159, -3.14159) as f, format('{:a}', 1.0) as g" <<'EOF'
a,b,c,d,e,f,g
2.5,1e+20,1e-05,3.1,0.3333333333,1.500000|2.2|1.234500e+03|1.234e+03|1234.5|3.14|     3.142|3.142     |-00003.142,0x1p+0
EOF
}

@test "format: text is cut to the precision; bools, dates and timestamps as text" {
    one
    assert_run_out one.csv --select "format('{:.3}|{:8.3}|', 'abcdef', 'abcdef') as a, format('{:>6}', true) as b, format('{:>12}', d) as c, format('{}', cast('2024-01-02 03:04:05.123456' as timestamp)) as e" <<'EOF'
a,b,c,e
abc|abc     |,  true,  2024-01-02,2024-01-02 03:04:05.123456
EOF
}

@test "printf: C's conversions, flags, widths and precisions" {
    one
    assert_run_out one.csv --select "printf('%d %s', x, s) as a, printf('%5.2f|%-5s|%05d', 3.14159, 'ab', 42) as b, printf('%x|%X|%o|%#x|%#o|%08d|%-8d|%+d|% d|%c', 255, 255, 8, 255, 8, -42, 42, 42, 42, 65) as c, printf('%f|%.3f|%10.2f|%+f|%e|%.2e|%g|%G|%E', 1.5, 3.14159, 2.5, 1.0, 12345.678, 12345.678, 0.0001, 1e20, 1.5) as d, printf('%5.1s|%05s|%%', 'abc', 'ab') as e, printf('%s|%d|%s', true, true, d) as f, printf('%ld %d', 5, 6, 7) as g" <<'EOF'
a,b,c,d,e,f,g
1 ab, 3.14|ab   |00042,ff|FF|10|0xff|010|-0000042|42      |+42| 42|A,1.500000|3.142|      2.50|+1.000000|1.234568e+04|1.23e+04|0.0001|1E+20|1.500000E+00,    a|   ab|%,true|1|2024-01-02,5 6
EOF
}

@test "a null argument or format gives null" {
    run_tally_in $'x,s\n1,\n' - --select "format('{}', s) as a, printf(s, x) as b, format('{}{}', x, s) as c"
    assert_ok
    assert_out $'a,b,c\n,,'
}

@test "kinds that do not fit and missing arguments are data errors naming the row" {
    one
    run_tally one.csv --select "printf('%d', s) as r"
    assert_err 1 <<'EOF'
tally: one.csv:2:2: Invalid type specifier "d" for formatting a value of type string in "printf('%d', s)": printf("%d", "ab") (column "s")
  --select: printf('%d', s) as r
            ^^^^^^^^^^^^^^^
EOF
    run_tally one.csv --select "printf('%s', x) as r"
    assert_err 1 <<'EOF'
tally: one.csv:2:1: Invalid type specifier "s" for formatting a value of type int in "printf('%s', x)": printf("%s", 1) (column "x")
  --select: printf('%s', x) as r
            ^^^^^^^^^^^^^^^
EOF
    run_tally one.csv --select "format('{} {}', x) as r"
    assert_err 1 <<'EOF'
tally: one.csv:2:1: Argument index "1" out of range in "format('{} {}', x)": format("{} {}", 1) (column "x")
  --select: format('{} {}', x) as r
            ^^^^^^^^^^^^^^^^^^
EOF
    run_tally one.csv --select "format('{:.2f}', x) as r"
    assert_err 1 <<'EOF'
tally: one.csv:2:1: precision not allowed for this argument type in "format('{:.2f}', x)": format("{:.2f}", 1) (column "x")
  --select: format('{:.2f}', x) as r
            ^^^^^^^^^^^^^^^^^^^
EOF
    run_tally one.csv --select "format('}', x) as r"
    assert_err 1 <<'EOF'
tally: one.csv:2:1: unmatched '}' in format string in "format('}', x)": format("}", 1) (column "x")
  --select: format('}', x) as r
            ^^^^^^^^^^^^^^
EOF
    run_tally one.csv --select "format('{', x) as r"
    assert_err 1 <<'EOF'
tally: one.csv:2:1: invalid format string in "format('{', x)": format("{", 1) (column "x")
  --select: format('{', x) as r
            ^^^^^^^^^^^^^^
EOF
}

@test "the format must be a string" {
    one
    run_tally one.csv --select "format(x, s) as r"
    assert_err 2 <<'EOF'
tally: no function matches format(int64, string)
  --select: format(x, s) as r
            ^^^^^^^^^^^^
EOF
}

@test "format and printf: a timestamptz as its text with +00" {
    printf 't\n2024-03-05T07:08:09Z\n2024-03-05 09:08:09+02:00\n' > tz.csv
    assert_run_out tz.csv --select "format('<{}>', t) as f, printf('%s|%25s', t, t) as p" <<'EOF2'
f,p
<2024-03-05 07:08:09+00>,2024-03-05 07:08:09+00|   2024-03-05 07:08:09+00
<2024-03-05 07:08:09+00>,2024-03-05 07:08:09+00|   2024-03-05 07:08:09+00
EOF2
}
