#!/usr/bin/env bats
# Long pipelines and long operator chains: planning, optimizing and running
# cost time linear in the number of steps, columns and expression nodes
# (lib/plan/plan.c: runs of `with` items share one node, also when each
# reads the one before; lib/dsl/parser.c: long or/and chains are balanced;
# lib/opt/simplify.c: a chain of || literals folds as a balanced tree;
# lib/core/pool.h: the deep stack).  Each test generates its pipeline;
# expected outputs are computed separately in python, never by tally.  Runs
# are under `timeout`, so a quadratic regression shows as a failure, not a
# hang; the tests marked "quick" allow 20 s where linear takes well under
# one (quadratic took 40 s and more).

load helpers

# timed ARGS...: run tally with a time limit.
timed() {
    run --separate-stderr timeout 120 "$TALLY" "$@"
}

# timed_args FILE: run tally with the arguments in FILE, one per line (bats'
# `run` is slow with 20,000 arguments of its own).
timed_args() {
    run --separate-stderr bash -c 'mapfile -t a < "$1"; exec timeout 120 "$0" "${a[@]}"' \
        "$TALLY" "$1"
}

# quick_args FILE: timed_args with 20 s.
quick_args() {
    run --separate-stderr bash -c 'mapfile -t a < "$1"; exec timeout 20 "$0" "${a[@]}"' \
        "$TALLY" "$1"
}

setup() {
    enter_workdir
    printf 'a,b\n1,2\n3,4\n,5\n' > in.csv
}

@test "10,000 with steps replacing a column" {
    # each is a projection of its own: 2,500 under ASan, where 10,000 take 8 s
    local n=10000
    [ -z "${TALLY_ASAN:-}" ] || n=2500
    python3 -c "print('in.csv\n' + '--with\na = a + 1\n' * $n, end='')" > args
    timed_args args
    assert_ok
    assert_out "a,b
$((n + 1)),2
$((n + 3)),4
,5"
}

@test "10,000 with steps each adding a column" {
    python3 -c "print('in.csv\n' + ''.join('--with\nc%d = a + %d\n' % (i, i) for i in range(1, 10001)), end='')" > args
    timed_args args
    assert_ok
    python3 -c "
n = 10000
print(','.join(['a', 'b'] + ['c%d' % i for i in range(1, n + 1)]))
for a, b in ((1, 2), (3, 4), (None, 5)):
    print(','.join(['' if a is None else str(a), str(b)] +
                   ['' if a is None else str(a + i) for i in range(1, n + 1)]))
" > want.csv
    assert_out "$(cat want.csv)"
}

@test "a later with step reads the columns earlier ones added and replaced" {
    timed in.csv --with 'a = a * 10' --with 'c = a + 1' --with 'd = b' \
        --with 'e = c + d' --with 'f = 1' --with 'g = f + 1'
    assert_ok
    assert_out "a,b,c,d,e,f,g
10,2,11,2,13,1,2
30,4,31,4,35,1,2
,5,,5,,1,2"
}

@test "explain: consecutive with steps are one projection, also when one reads another" {
    timed explain in.csv --with 'c1 = a + 1' --with 'c2 = b * 2' --with 'c3 = c1 + 1'
    assert_ok
    assert_out "logical plan:
  project a, b, a + 1 as c1, b * 2 as c2, c1 + 1 as c3
    scan in.csv
optimized plan:
  project a, b, a + 1 as c1, b * 2 as c2, c1 + 1 as c3
    scan in.csv
output: a int64, b int64, c1 int64, c2 int64, c3 int64"
    # a replaced column starts a projection, and so does reading the column
    # the projection's first step replaced (its new value)
    timed explain in.csv --with 'a = a * 10' --with 'c1 = b + 1' --with 'c2 = a + c1' --with 'b = c2'
    assert_ok
    assert_out "logical plan:
  project a, c2 as b, c1, c2
    project a, b, c1, a + c1 as c2
      project a * 10 as a, b, b + 1 as c1
        scan in.csv
optimized plan:
  project a, a + c1 as b, c1, a + c1 as c2
    project a * 10 as a, b + 1 as c1
      scan in.csv
output: a int64, b int64, c1 int64, c2 int64"
    timed in.csv --with 'a = a * 10' --with 'c1 = b + 1' --with 'c2 = a + c1' --with 'b = c2'
    assert_ok
    assert_out "a,b,c1,c2
10,13,3,13
30,35,5,35
,,6,"
}

@test "quick: 10,000 with steps each reading the one before" {
    python3 -c "print('in.csv\n--with\nc1 = a + 1\n' + ''.join('--with\nc%d = c%d + 1\n' % (i, i - 1) for i in range(2, 10001)), end='')" > args
    quick_args args
    assert_ok
    python3 -c "
n = 10000
print(','.join(['a', 'b'] + ['c%d' % i for i in range(1, n + 1)]))
for a, b in ((1, 2), (3, 4), (None, 5)):
    print(','.join(['' if a is None else str(a), str(b)] +
                   ['' if a is None else str(a + i) for i in range(1, n + 1)]))
" > want.csv
    assert_out "$(cat want.csv)"
    # explain, and a filter and a select over the chain: the filter sinks
    # with the chain substituted as far as the growth bound lets it, the
    # select keeps what the last column reads
    { echo explain; cat args; } > explain_args
    quick_args explain_args
    assert_ok
    [ "${#lines[@]}" -eq 7 ] || { show; return 1; }
    [ "${lines[6]}" = "output: a int64, b int64, $(seq -f 'c%g int64' -s ', ' 1 10000)" ] || { show; return 1; }
    printf -- '--filter\nc10000 > 10002\n--select\na, c10000\n' >> args
    quick_args args
    assert_ok
    assert_out "a,c10000
3,10003"
}

@test "a pipeline file with 10,000 steps: with (both kinds), filter, sort, head" {
    python3 -c "
import json
steps = [{'filter': 'b > 2'}]
steps += [{'with': {'a': 'a + 1'}} for _ in range(5000)]
steps += [{'with': {'c%d' % i: 'b * %d' % i}} for i in range(1, 4999)]
steps += [{'sort': ['-b']}, {'limit': 1}, {'select': ['a', 'b', 'c4998']}]
print(json.dumps({'inputs': ['in.csv'], 'steps': steps}))
" > p.json
    timed -f p.json
    assert_ok
    assert_out "a,b,c4998
,5,24990"
}

@test "a flat chain of 10,000 or terms, with nulls" {
    python3 -c "
import json
terms = ['a = %d' % (i + 10) for i in range(9999)] + ['b = 5']
print(json.dumps({'inputs': ['in.csv'], 'steps': [{'filter': ' or '.join(terms)}]}))
" > p.json
    timed -f p.json
    assert_ok
    assert_out "a,b
,5"
}

@test "a flat chain of 10,000 and terms, with nulls" {
    python3 -c "
import json
terms = ['a != %d' % (i + 10) for i in range(9999)] + ['b != 2']
print(json.dumps({'inputs': ['in.csv'], 'steps': [{'filter': ' and '.join(terms)}]}))
" > p.json
    timed -f p.json
    assert_ok
    assert_out "a,b
3,4"
}

@test "balanced or/and chains of 3,000 terms give three-valued logic's results" {
    # chains over 1,000 terms are balanced trees: true, false and null terms
    # mixed; python evaluates the same terms left to right (Kleene logic)
    python3 -c "
import json
rows = [(1, 2), (3, 4), (None, 5), (7, None)]
def term(i):
    k = i % 4
    if k == 0: return ('a = %d' % (i + 100), lambda a, b: None if a is None else a == i + 100)
    if k == 1: return ('b > %d' % (i + 10), lambda a, b: None if b is None else b > i + 10)
    if k == 2: return ('a < %d' % (-i), lambda a, b: None if a is None else a < -i)
    return ('b != %d' % (i % 3 + 3), lambda a, b: None if b is None else b != i % 3 + 3)
def kleene(vals, is_or):
    seen_null = False
    for v in vals:
        if v is None: seen_null = True
        elif v == is_or: return is_or
    return None if seen_null else (not is_or)
fmt = lambda v: '' if v is None else ('true' if v else 'false')
terms = [term(i) for i in range(3000)]
ors = [t for t in terms if not t[0].startswith('b !=')] + [('a = 7', lambda a, b: None if a is None else a == 7)]
ands = [('not (%s)' % t[0], (lambda f: lambda a, b: None if f(a, b) is None else not f(a, b))(t[1])) for t in terms if not t[0].startswith('b !=')]
ands += [terms[3]]
sel = [' or '.join(t[0] for t in ors) + ' as o', ' and '.join(t[0] for t in ands) + ' as n']
print(json.dumps({'inputs': ['in2.csv'], 'steps': [{'select': ['a'] + sel}]}), file=open('p.json', 'w'))
with open('want.csv', 'w') as w:
    print('a,o,n', file=w)
    for a, b in rows:
        print(','.join(['' if a is None else str(a),
                        fmt(kleene([f(a, b) for _, f in ors], True)),
                        fmt(kleene([f(a, b) for _, f in ands], False))]), file=w)
"
    printf 'a,b\n1,2\n3,4\n,5\n7,\n' > in2.csv
    timed -f p.json
    assert_ok
    assert_out "$(cat want.csv)"
}

@test "a flat chain of 10,000 + terms and of 10,000 || terms" {
    python3 -c "
import json
plus = ' + '.join(['a'] * 10000)
cat = ' || '.join([\"'x'\"] * 10000)
print(json.dumps({'inputs': ['in.csv'],
                  'steps': [{'select': [plus + ' as s', 'length(%s) as l' % cat]}]}))
" > p.json
    timed -f p.json
    assert_ok
    assert_out "s,l
10000,10000
30000,10000
,10000"
}

@test "quick: flat chains of 40,000 terms: or, and, || of literals and of columns" {
    python3 -c "
import json
n = 40000
ors = ' or '.join(['a = %d' % (i + 10) for i in range(n - 1)] + ['b = 5'])
ands = ' and '.join(['a != %d' % (i + 10) for i in range(n - 1)] + ['b != 2'])
lits = ' || '.join([\"'x'\"] * n)
cols = ' || '.join(['a::string'] * n)
print(json.dumps({'inputs': ['in.csv'], 'steps': [
    {'filter': '(%s) or (%s)' % (ors, ands)},
    {'select': ['a', 'length(%s) as l' % lits, 'length(%s) as m' % cols]}]}))
" > p.json
    run --separate-stderr timeout 20 "$TALLY" -f p.json
    assert_ok
    assert_out "a,l,m
3,40000,40000
,40000,"
}

@test "true nesting is still limited to 1,000 levels" {
    python3 -c "print('(' * 1001 + 'a' + ')' * 1001)" > e.txt
    timed in.csv --filter "$(cat e.txt)"
    assert_err_glob 2 "tally: expression nested too deeply (more than 1000 levels)"*
}

@test "a chain of more than 100,000 operators is an error" {
    python3 -c "
import json
print(json.dumps({'inputs': ['in.csv'],
                  'steps': [{'select': [' + '.join(['a'] * 100002)]}]}))
" > p.json
    timed -f p.json
    assert_err_glob 2 "tally: "*"expression too long (a chain of more than 100000 operators)"*
}

@test "without the address space for a deep stack, the shallow bounds apply" {
    [ -z "${TALLY_ASAN:-}" ] || skip "ASan reserves terabytes of address space"
    python3 -c "print('in.csv\n' + '--with\na = a + 1\n' * 5000, end='')" > args
    run --separate-stderr bash -c 'ulimit -v 900000; mapfile -t a < "$1"; exec "$0" "${a[@]}"' \
        "$TALLY" args
    assert_err 2 "tally: the pipeline is too long (more than 4096 steps)"
    run --separate-stderr bash -c 'ulimit -v 900000; exec "$0" in.csv --with "a = a + 1"' "$TALLY"
    assert_ok
    assert_out "a,b
2,2
4,4
,5"
}

@test "explain: below 64 levels, lines keep a 128-space indent and show their level" {
    python3 -c "print('explain\nin.csv\n' + '--with\na = a + 1\n' * 70, end='')" > args
    timed_args args
    assert_ok
    python3 -c "
def tree():
    for level in range(1, 72):
        line = 'project a + 1 as a, b' if level <= 70 else 'scan in.csv'
        if level <= 64:
            print(' ' * (2 * level) + line)
        else:
            print(' ' * 128 + '[%d] ' % level + line)
print('logical plan:')
tree()
print('optimized plan:')
tree()
print('output: a int64, b int64')
" > want.txt
    assert_out "$(cat want.txt)"
}

@test "explain prints a balanced chain so that it parses back to the same plan" {
    python3 -c "
import json
t = ['a = %d' % i if i % 2 else 'b > %d' % i for i in range(5000)]
print(json.dumps({'inputs': ['in.csv'], 'steps': [{'filter': ' or '.join(t)}]}))
" > p1.json
    timed explain --no-optimize -f p1.json
    assert_ok
    printf '%s\n' "$output" > e1.txt
    python3 -c "
import json
line = [l for l in open('e1.txt') if l.startswith('  filter ')][0][9:].rstrip('\n')
assert line.count('(') == 15, line.count('(')
print(json.dumps({'inputs': ['in.csv'], 'steps': [{'filter': line}]}))
" > p2.json
    timed explain --no-optimize -f p2.json
    assert_ok
    assert_out "$(cat e1.txt)"
}

# n_steps: pairs of steps for the tests below: 10,000 on the release build,
# 2,500 under ASan (the same shapes, linear either way).
n_steps() {
    if [ -n "${TALLY_ASAN:-}" ]; then echo 2500; else echo 10000; fi
}

# explain_tree LEVEL LINE...: explain's tree lines, one per level from
# LEVEL down (below 64 levels: a 128-space indent and the level).
explain_tree_py='
def tree(level, lines):
    for line in lines:
        if level <= 64:
            print(" " * (2 * level) + line)
        else:
            print(" " * 128 + "[%d] " % level + line)
        level += 1
'

@test "quick: with + filter pairs, each reading the one before, are one projection" {
    # lib/plan/plan.c: a filter between two with steps is a guard of the
    # run (before: each filter ended a projection and the next listed every
    # column, 10,000 pairs took 41.5 s and 6.8 GB).  The middle filter
    # drops the row a = 1, the first drops the null.
    local n; n=$(n_steps)
    python3 -c "
n = $n
out = ['in.csv']
for i in range(1, n + 1):
    out += ['--with', 'c%d = %s + 1' % (i, 'a' if i == 1 else 'c%d' % (i - 1))]
    out += ['--filter', 'c%d > %d' % (i, i + 1 if i == n // 2 else 0)]
print('\n'.join(out))
" > args
    python3 -c "
n = $n
print(','.join(['a', 'b'] + ['c%d' % i for i in range(1, n + 1)]))
print(','.join(['3', '4'] + [str(3 + i) for i in range(1, n + 1)]))
" > want.csv
    for opt in --threads=1 --threads=4 --no-optimize; do
        { echo "$opt"; cat args; } > args2
        quick_args args2
        assert_ok
        assert_out "$(cat want.csv)"
    done
    # explain: the guards print in the projection; the first 126 leave it
    # as filters (their substituted predicate, 2i + 3 nodes, is within the
    # 256-node growth bound), the rest stay
    { echo explain; cat args; } > explain_args
    quick_args explain_args
    assert_ok
    python3 -c "$explain_tree_py
n, m = $n, 126
def item(i):
    return '%s + 1 as c%d' % ('a' if i == 1 else 'c%d' % (i - 1), i)
def guard(i):
    return 'filter c%d > %d' % (i, i + 1 if i == n // 2 else 0)
def project(first_guard):
    v = ['a', 'b']
    for i in range(1, n + 1):
        v.append(item(i))
        if first_guard <= i < n:
            v.append(guard(i))
    return 'project ' + ', '.join(v)
print('logical plan:')
tree(1, ['filter c%d > 0' % n, project(1), 'scan in.csv'])
print('optimized plan:')
tree(1, ['filter c%d > 0' % n, project(m + 1)] +
        ['filter a%s > 0' % (' + 1' * i) for i in range(m, 0, -1)] +
        ['scan in.csv (a first, the rest only for kept rows)'])
print('output: ' + ', '.join(['a int64', 'b int64'] + ['c%d int64' % i for i in range(1, n + 1)]))
" > want.txt
    assert_out "$(cat want.txt)"
}

@test "quick: with + filter pairs each adding a column from the input, and as a pipeline file" {
    local n; n=$(n_steps)
    python3 -c "
import json
n = $n
out, steps = ['in.csv'], []
for i in range(1, n + 1):
    out += ['--with', 'c%d = a + %d' % (i, i), '--filter', 'c%d > %d' % (i, i + 2 if i == n else 0)]
    steps += [{'with': {'c%d' % i: 'a + %d' % i}}, {'filter': 'c%d > %d' % (i, i + 2 if i == n else 0)}]
print('\n'.join(out), file=open('args', 'w'))
json.dump({'inputs': ['in.csv'], 'steps': steps}, open('p.json', 'w'))
print(','.join(['a', 'b'] + ['c%d' % i for i in range(1, n + 1)]), file=open('want.csv', 'w'))
print(','.join(['3', '4'] + [str(3 + i) for i in range(1, n + 1)]), file=open('want.csv', 'a'))
"
    quick_args args
    assert_ok
    assert_out "$(cat want.csv)"
    run --separate-stderr timeout 20 "$TALLY" -f p.json --threads 3
    assert_ok
    assert_out "$(cat want.csv)"
    # every guard leaves the run: each substituted predicate is small
    run --separate-stderr timeout 20 "$TALLY" explain -f p.json
    assert_ok
    python3 -c "$explain_tree_py
n = $n
def pred(i):
    return '> %d' % (i + 2 if i == n else 0)
print('logical plan:')
v = ['a', 'b']
for i in range(1, n + 1):
    v.append('a + %d as c%d' % (i, i))
    if i < n:
        v.append('filter c%d %s' % (i, pred(i)))
tree(1, ['filter c%d %s' % (n, pred(n)), 'project ' + ', '.join(v), 'scan in.csv'])
print('optimized plan:')
tree(1, ['project ' + ', '.join(['a', 'b'] + ['a + %d as c%d' % (i, i) for i in range(1, n + 1)])] +
        ['filter a + %d %s' % (i, pred(i)) for i in range(n, 0, -1)] +
        ['scan in.csv (a first, the rest only for kept rows)'])
print('output: ' + ', '.join(['a int64', 'b int64'] + ['c%d int64' % i for i in range(1, n + 1)]))
" > want.txt
    assert_out "$(cat want.txt)"
}

@test "a guard keeps a later with step from the rows its filter drops" {
    printf 's,a\n1,5\nbad,6\n3,7\n' > s.csv
    timed s.csv --with 'x = s' --filter "x != 'bad'" --with 'y = cast(x as int64)' \
        --filter 'y > 1' --with 'z = y * 2'
    assert_ok
    assert_out "s,a,x,y,z
3,7,3,3,6"
    timed explain --no-optimize s.csv --with 'x = s' --filter "x != 'bad'" \
        --with 'y = cast(x as int64)'
    assert_ok
    assert_out "logical plan:
  project s, a, s as x, filter x != 'bad', cast(x as int64) as y
    scan s.csv
optimized plan:
  project s, a, s as x, filter x != 'bad', cast(x as int64) as y
    scan s.csv
output: s string, a int64, x string, y int64"
    # the optimizer moves a guard out of the projection (substituted)
    timed explain --verbose s.csv --with 'x = a' --filter 'x > 5' --with 'y = x + 1'
    assert_ok
    assert_out "logical plan:
  project s, a, a as x, filter x > 5, x + 1 as y
    scan s.csv
optimized plan:
  project s, a, a as x, x + 1 as y
    filter a > 5
      scan s.csv (a first, the rest only for kept rows)
output: s string, a int64, x int64, y int64
rules:
  pushdown-filter: x > 5 moved out of project"
    # the row a guard keeps is named by its line, after a sort by its row
    timed s.csv --with 'x = s' --filter 'a > 5' --with 'y = cast(x as int64)'
    assert_err 1 'tally: s.csv:3: cannot cast "bad" to int64
  --with: y = cast(x as int64)
              ^^^^^^^^^^^^^^^^'
    timed s.csv --sort=-a --with 'x = s' --filter 'a < 7' --with 'y = cast(x as int64)'
    assert_err 1 'tally: row 1 of the sort'"'"'s result: cannot cast "bad" to int64
  --with: y = cast(x as int64)
              ^^^^^^^^^^^^^^^^'
    # a filter reading the column the run's first step replaced is a node
    timed explain --no-optimize s.csv --with 'a = a * 10' --filter 'a > 60' --with 'c = a + 1'
    assert_ok
    assert_out "logical plan:
  project s, a, a + 1 as c
    filter a > 60
      project s, a * 10 as a
        scan s.csv
optimized plan:
  project s, a, a + 1 as c
    filter a > 60
      project s, a * 10 as a
        scan s.csv
output: s string, a int64, c int64"
}

@test "quick: alternating select and with steps" {
    local n; n=$(n_steps)
    python3 -c "
n = $n
print('\n'.join(['in.csv'] + sum((['--select', 'a, b', '--with', 'b = a + %d' % i] for i in range(1, n + 1)), [])))
" > args
    quick_args args
    assert_ok
    assert_out "a,b
1,$((n + 1))
3,$((n + 3))
,"
    { echo explain; cat args; } > explain_args
    quick_args explain_args
    assert_ok
    python3 -c "$explain_tree_py
n = $n
print('logical plan:')
tree(1, sum((['project a, a + %d as b' % i, 'project a, b'] for i in range(n, 0, -1)), []) + ['scan in.csv'])
print('optimized plan:')
tree(1, ['project a, a + %d as b' % n, 'project a', 'scan in.csv columns a'])
print('output: a int64, b int64')
" > want.txt
    assert_out "$(cat want.txt)"
}

@test "quick: many filters, many renames" {
    local n; n=$(n_steps)
    python3 -c "
n = $n
print('\n'.join(['in.csv'] + sum((['--filter', 'a > %d' % -i] for i in range(1, n + 1)), [])))
" > args
    quick_args args
    assert_ok
    assert_out "a,b
1,2
3,4"
    python3 -c "
n = $n
print('\n'.join(['in.csv'] + sum((['--rename', 'a:x' if i % 2 == 0 else 'x:a'] for i in range(n + 1)), [])))
" > args
    quick_args args
    assert_ok
    assert_out "x,b
1,2
3,4
,5"
}

@test "quick: with steps each adding a column, then drops of every one, or one select" {
    # lib/plan/plan.c: consecutive drop steps are one projection (before:
    # one per step over every column left, 10,000 drops took 55 s, 6.6 GB)
    local n; n=$(n_steps)
    python3 -c "
n = $n
adds = sum((['--with', 'c%d = a + %d' % (i, i)] for i in range(1, n + 1)), [])
drops = sum((['--drop', 'c%d' % i] for i in range(1, n + 1)), [])
print('\n'.join(['in.csv'] + adds + drops), file=open('args', 'w'))
print('\n'.join(['in.csv'] + adds + ['--select', 'a, c%d' % n]), file=open('args_select', 'w'))
print('\n'.join(['in.csv'] + adds + drops + ['--select', 'c%d' % (n // 2)]), file=open('args_gone', 'w'))
print('\n'.join(['in.csv'] + adds + drops[:n] + ['--drop', 'c%d' % (n // 4)]), file=open('args_twice', 'w'))
"
    quick_args args
    assert_ok
    assert_out "a,b
1,2
3,4
,5"
    quick_args args_select
    assert_ok
    assert_out "a,c$n
1,$((n + 1))
3,$((n + 3))
,"
    local half="c$((n / 2))" quarter="c$((n / 4))"
    quick_args args_gone
    assert_err 2 "tally: unknown column \"$half\": step $((n + n / 2)) (--drop) dropped it
  --select: $half
            ${half//?/^}"
    quick_args args_twice
    assert_err 2 "tally: unknown column \"$quarter\": step $((n + n / 4)) (--drop) dropped it
  --drop: $quarter
          ${quarter//?/^}"
    { echo explain; cat args; } > explain_args
    quick_args explain_args
    assert_ok
    python3 -c "
n = $n
print('logical plan:')
print('  project a, b')
print('    project a, b, ' + ', '.join('a + %d as c%d' % (i, i) for i in range(1, n + 1)))
print('      scan in.csv')
print('optimized plan:')
print('  project a, b')
print('    scan in.csv')
print('output: a int64, b int64')
" > want.txt
    assert_out "$(cat want.txt)"
}

@test "quick: with steps each adding a column, then a rename of each, one step apiece" {
    # lib/plan/runs.c: consecutive rename steps are one projection (before:
    # one per step over every column, 2,000 renames of 2,000 columns took
    # 44 s; each step also compared every pair of names)
    local n; n=$(n_steps)
    local half="c$((n / 2))"
    python3 -c "
n = $n
adds = sum((['--with', 'c%d = a + %d' % (i, i)] for i in range(1, n + 1)), [])
renames = sum((['--rename', 'c%d:d%d' % (i, i)] for i in range(1, n + 1)), [])
print('\n'.join(['in.csv'] + adds + renames + ['--select', 'b, d1, d%d' % n]), file=open('args', 'w'))
print('\n'.join(['in.csv'] + adds + renames + ['--select', 'c%d' % (n // 2)]), file=open('args_gone', 'w'))
print('\n'.join(['in.csv'] + adds + renames + ['--rename', 'a:d%d' % n]), file=open('args_dup', 'w'))
"
    quick_args args
    assert_ok
    assert_out "b,d1,d$n
2,2,$((n + 1))
4,4,$((n + 3))
5,,"
    quick_args args_gone
    assert_err 2 "tally: unknown column \"$half\": step $((n + n / 2)) (--rename) renamed it to \"d$((n / 2))\"
  --select: $half
            ${half//?/^}"
    local item="a:d$n"
    quick_args args_dup
    assert_err 2 "tally: duplicate column name \"d$n\"
  --rename: $item
            ${item//?/^}"
}
