#!/usr/bin/env bats
# run-cli: weight=1
# Regular expressions (man/tally.1, EXPRESSIONS, "Regular expressions"):
# regexp_matches, regexp_full_match and ~ / !~, regexp_replace,
# regexp_extract, regexp_split_to_array, ilike; options; every error.
# Expected values are DuckDB 1.5.6's answers to the same calls (RE2), asked
# one by one; where tally differs on purpose the test says so.

load helpers

words() {
    printf 's\nabc\nABC\nhéllo\na.c\naXbc\nbaaac\n\n"abc\n"\n' > w.csv
}

@test "regexp_matches is a partial match, ~ and regexp_full_match a full one, \$ only at the end" {
    words
    assert_run_out w.csv --select "s, regexp_matches(s, 'b') as m, regexp_matches(s, 'B', 'i') as mi, s ~ 'a.c' as f, s !~ 'a.c' as nf, regexp_full_match(s, 'ABC', 'i') as fi, regexp_matches(s, 'c\$') as d" <<'EOF'
s,m,mi,f,nf,fi,d
abc,true,true,true,false,true,true
ABC,false,true,false,true,true,false
héllo,false,false,false,true,false,false
a.c,false,false,true,false,false,true
aXbc,true,true,false,true,false,true
baaac,true,true,false,true,false,true
,,,,,,
"abc
",true,true,false,true,false,false
EOF
}

@test "a full match tries every alternative to reach the end" {
    run_tally_in $'s\nabc\nab\n' - --select "s ~ 'a|abc' as x, regexp_full_match(s, 'ab|abc') as y"
    assert_ok
    assert_out $'x,y\ntrue,true\nfalse,true'
}

@test "options: c and i (the last wins), l literal, s lets . match a newline" {
    words
    assert_run_out w.csv --select "regexp_matches(s, 'a', 'ic') as y, regexp_matches(s, 'A.C', 'li') as z, regexp_matches(s, 'c.', 's') as w, regexp_matches(s, 'c.', 'm') as v" <<'EOF'
y,z,w,v
true,false,false,false
false,false,false,false
false,false,false,false
true,true,false,false
true,false,false,false
true,false,false,false
,,,
true,false,true,false
EOF
}

@test "regexp_replace: first match, g for all, \\0-\\9 and \\\\, a missing group leaves the string, empty matches as RE2" {
    words
    assert_run_out w.csv --select "regexp_replace(s, 'a*', '-', 'g') as g, regexp_replace(s, '(b)', '[\\1\\0\\\\]') as r1, regexp_replace(s, '(b)', '[\\2]') as r2, regexp_replace(s, 'l', 'L') as r3, regexp_replace(s, 'l', 'L', 'g') as r4" <<'EOF'
g,r1,r2,r3,r4
-b-c-,a[bb\]c,abc,abc,abc
-A-B-C-,ABC,ABC,ABC,ABC
-h-é-l-l-o-,héllo,héllo,héLlo,héLLo
-.-c-,a.c,a.c,a.c,a.c
-X-b-c-,aX[bb\]c,aXbc,aXbc,aXbc
-b-c-,[bb\]aaac,baaac,baaac,baaac
,,,,
"-b-c-
-","a[bb\]c
","abc
","abc
","abc
"
EOF
}

@test "regexp_replace: another escape stops the replacement (under g the text before it stays)" {
    run_tally_in $'s\nabcb\n' - --select "regexp_replace(s, '(b)', '[\\q]') as a, regexp_replace(s, '(b)', '[\\q]', 'g') as b, regexp_replace(s, '(b)', 'x\\', 'g') as c, regexp_replace(s, '(b)', '\$1') as d"
    assert_ok
    assert_out $'a,b,c,d\nabcb,a[c[,axcx,a$1cb'
}

@test "regexp_extract: group 0 by default, '' without a match or group" {
    words
    assert_run_out w.csv --select "regexp_extract(s, '[a-z]+') as e0, regexp_extract(s, '([a-z])([a-z])', 2) as e2, regexp_extract(s, '(x)?b', 1) as e1, regexp_extract(s, 'B', 0, 'i') as ei" <<'EOF'
e0,e2,e1,ei
abc,b,"",b
"","","",B
h,l,"",""
a,"","",""
a,c,"",b
baaac,a,"",b
,,,
abc,b,"",b
EOF
}

@test "regexp_split_to_array gives a JSON array; empty matches split characters as DuckDB" {
    words
    assert_run_out w.csv --select "regexp_split_to_array(s, 'X*') as a, regexp_split_to_array(s, 'a') as b, string_split_regex(s, '^') as c" <<'EOF'
a,b,c
"[""a"",""b"",""c""]","["""",""bc""]","[""a"",""b"",""c""]"
"[""A"",""B"",""C""]","[""ABC""]","[""A"",""B"",""C""]"
"[""h"",""é"",""l"",""l"",""o""]","[""héllo""]","[""h"",""é"",""l"",""l"",""o""]"
"[""a"",""."",""c""]","["""","".c""]","[""a"",""."",""c""]"
"[""a"","""",""b"",""c""]","["""",""Xbc""]","[""a"",""X"",""b"",""c""]"
"[""b"",""a"",""a"",""a"",""c""]","[""b"","""","""",""c""]","[""b"",""a"",""a"",""a"",""c""]"
,,
"[""a"",""b"",""c"",""\n""]","["""",""bc\n""]","[""a"",""b"",""c"",""\n""]"
EOF
}

@test "ilike and not ilike compare lowercased text (simple Unicode mappings)" {
    run_tally_in $'s\nABC\nÉCOLE\nß\nİ\nǅ\n' - --select "s ilike 'a%' as a, s not ilike 'a%' as na, s ilike 'é%' as e, s ilike 'ss' as ss, s ilike 'i' as i, s ilike 'ǆ' as dz, s ilike '_' as one"
    assert_ok
    assert_out $'a,na,e,ss,i,dz,one\ntrue,false,false,false,false,false,false\nfalse,true,true,false,false,false,false\nfalse,true,false,false,false,false,true\nfalse,true,false,false,true,false,true\nfalse,true,false,false,false,true,true'
}

@test "a pattern from a column is compiled per distinct pattern" {
    run_tally_in $'s,p\n,a\nabc,\nabc,^a\nabc,^b\nxbc,b\n' - --select "regexp_matches(s, p) as m"
    assert_ok
    assert_out $'m\n\n\ntrue\nfalse\ntrue'
}

@test "PCRE2 syntax beyond RE2 is accepted (backreferences, lookahead)" {
    run_tally_in $'s\naab\nabb\n' - --select "regexp_matches(s, '(a)\\1') as back, regexp_matches(s, 'a(?=b)') as ahead"
    assert_ok
    assert_out $'back,ahead\ntrue,true\nfalse,true'
}

@test "the same answers with one thread and four, batch after batch" {
    seq 1 3000 | sed 's/^/id/' | (echo s; cat) > n.csv
    run_tally n.csv --threads 1 --filter "regexp_matches(s, '[13]7\$')" --agg 'n = count(), x = max(regexp_replace(s, '"'"'(\d)(\d)$'"'"', '"'"'\2\1'"'"'))'
    assert_ok
    local one=$output
    TALLY_BATCH_ROWS=100 run_tally n.csv --threads 4 --filter "regexp_matches(s, '[13]7\$')" --agg 'n = count(), x = max(regexp_replace(s, '"'"'(\d)(\d)$'"'"', '"'"'\2\1'"'"'))'
    assert_ok
    [ "$output" = "$one" ] || { show; false; }
    assert_out $'n,x\n60,id973'
}

# ------------------------------------------------------------------ errors

@test "an invalid pattern is a usage error with a caret at the offending character" {
    words
    run_tally w.csv --select "regexp_matches(s, 'a(b') as x"
    assert_err 2 <<'EOF'
tally: invalid regular expression: missing closing parenthesis
  --select: regexp_matches(s, 'a(b') as x
                                  ^
EOF
    run_tally w.csv --filter "s ~ 'it''s['"
    assert_err 2 <<'EOF'
tally: invalid regular expression: missing terminating ] for character class
  --filter: s ~ 'it''s['
                       ^
EOF
    run_tally w.csv --filter "s !~ '*'"
    assert_err 2 <<'EOF'
tally: invalid regular expression: quantifier does not follow a repeatable item
  --filter: s !~ '*'
                  ^
EOF
}

@test "\\Z is refused as RE2 does" {
    words
    run_tally w.csv --filter "regexp_matches(s, 'ab\\Z')"
    assert_err 2 <<'EOF'
tally: invalid regular expression: \Z is not supported (use \z or $)
  --filter: regexp_matches(s, 'ab\Z')
                                 ^
EOF
}

@test "an unknown option, or g outside regexp_replace, is a usage error with a caret" {
    words
    run_tally w.csv --select "regexp_replace(s, 'a', 'b', 'gx') as x"
    assert_err 2 <<'EOF'
tally: unknown option 'x' of regexp_replace (options: c i l m n p s g)
  --select: regexp_replace(s, 'a', 'b', 'gx') as x
                                          ^
EOF
    run_tally w.csv --filter "regexp_matches(s, 'a', 'g')"
    assert_err 2 <<'EOF'
tally: unknown option 'g' of regexp_matches (options: c i l m n p s; g only in regexp_replace)
  --filter: regexp_matches(s, 'a', 'g')
                                    ^
EOF
}

@test "options and the group must be constants; the group from 0 to 9" {
    run_tally_in $'s,p\nabc,i\n' - --filter "regexp_matches(s, 'a', p)"
    assert_err 2 <<'EOF'
tally: the options of regexp_matches must be a constant string (not null)
  --filter: regexp_matches(s, 'a', p)
                                   ^
EOF
    run_tally_in $'s,p\nabc,i\n' - --select "regexp_extract(s, 'a', 10) as x"
    assert_err 2 <<'EOF'
tally: the group of regexp_extract must be a constant from 0 to 9
  --select: regexp_extract(s, 'a', 10) as x
                                   ^^
EOF
    run_tally_in $'s,p\nabc,i\n' - --select "regexp_extract(s, 'a', length(s)) as x"
    assert_err 2 <<'EOF'
tally: the group of regexp_extract must be a constant from 0 to 9
  --select: regexp_extract(s, 'a', length(s)) as x
                                   ^^^^^^^^^
EOF
}

@test "wrong argument types and counts are usage errors" {
    run_tally_in $'s,n\nabc,1\n' - --filter "regexp_matches(n, 'a')"
    assert_err 2 <<'EOF'
tally: no function matches regexp_matches(int64, string)
  --filter: regexp_matches(n, 'a')
            ^^^^^^^^^^^^^^^^^^^^^^
EOF
    run_tally_in $'s,n\nabc,1\n' - --filter "n ilike 'a'"
    assert_err 2 <<'EOF'
tally: no function matches ilike(int64, string)
  --filter: n ilike 'a'
            ^^^^^^^^^^^
EOF
    run_tally_in $'s,n\nabc,1\n' - --select "regexp_extract(s, 'a', 'b') as x"
    assert_err 2 <<'EOF'
tally: no function matches regexp_extract(string, string, string)
  --select: regexp_extract(s, 'a', 'b') as x
            ^^^^^^^^^^^^^^^^^^^^^^^^^^^
EOF
}

@test "an invalid pattern read from the data is a data error naming the row" {
    run_tally_in $'s,p\nabc,b\nx(y,(\n' - --select "regexp_matches(s, p) as x"
    assert_err 1 <<'EOF'
tally: <stdin>:3: invalid regular expression (missing closing parenthesis at offset 1) in "regexp_matches(s, p)": regexp_matches("x(y", "(")
  --select: regexp_matches(s, p) as x
            ^^^^^^^^^^^^^^^^^^^^
EOF
}

@test "a pattern that backtracks without end stops at the match limit (exit 1, no hang)" {
    printf 's\naaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab\n' > c.csv
    run_tally c.csv --select "regexp_matches(s, '(a|aa)+\$') as x"
    assert_err 1 <<'EOF'
tally: c.csv:2:1: regular expression too complex for this value (match limit) in "regexp_matches(s, '(a|aa)+$')": regexp_matches("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab", "(a|aa)+$") (column "s")
  --select: regexp_matches(s, '(a|aa)+$') as x
            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
EOF
}
