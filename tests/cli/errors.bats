#!/usr/bin/env bats
# run-cli: weight=10
# Every error path: the exit status (1 data or runtime, 2 usage), the
# message on standard error (exact where the CLI writes it, a precise
# pattern where it names files, lines and columns), nothing on standard
# output, and no output file or temporary file left behind (each failing
# run is given `-o out.csv`).

load helpers

setup() {
    enter_workdir
    cp "$DATA/sales.csv" .
}

# ------------------------------------------------------------ usage (2)

@test "unknown flag suggests the nearest one" {
    run_tally sales.csv --fitler 'qty > 1' -o out.csv
    assert_err 2 'tally: unknown option "--fitler" (did you mean "--filter"?)'
    assert_only_files sales.csv
}

@test "unknown flag with nothing near" {
    run_tally sales.csv --frobnicate -o out.csv
    assert_err 2 'tally: unknown option "--frobnicate" (try tally --help)'
    assert_only_files sales.csv
}

@test "unknown flag written with =value is named without the value" {
    run_tally sales.csv --selct=id
    assert_err 2 'tally: unknown option "--selct" (did you mean "--select"?)'
}

@test "unknown short flag" {
    run_tally sales.csv -x
    assert_err 2 'tally: unknown option "-x" (try tally --help)'
}

@test "missing value at the end" {
    run_tally sales.csv -o out.csv --filter
    assert_err 2 'tally: option "--filter" needs a value'
    assert_only_files sales.csv
}

@test "missing value before another flag" {
    run_tally sales.csv --select --head 1 -o out.csv
    assert_err 2 'tally: option "--select" needs a value'
    assert_only_files sales.csv
}

@test "a flag without a value given one" {
    run_tally sales.csv --stats=yes
    assert_err 2 'tally: option "--stats" takes no value'
}

@test "no input" {
    run_tally --filter 'x > 1' -o out.csv
    assert_err 2 'tally: no input given (try tally --help)'
    assert_only_files sales.csv
}

@test "tally alone prints a short usage with three examples" {
    run_tally
    assert_err 2 <<'EOF'
tally: no input given
usage: tally [OPTIONS] INPUT... [STEP...] [-o OUTPUT]
examples:
  tally sales.csv                       the file as a table (CSV into a pipe)
  tally sales.csv --filter 'amount > 100' --sort -amount --head 10
  tally sales.csv --group-by region --agg 'n = count(), sum(amount)' -o r.csv
tally --help lists every option; man tally explains them.
EOF
    # options but no input: the one-line error
    run_tally --threads 2
    assert_err 2 'tally: no input given (try tally --help)'
}

@test "--head x, --head -1 and --limit 1.5" {
    run_tally sales.csv --head x -o out.csv
    assert_err 2 'tally: --head: expected a non-negative integer, got "x"'
    run_tally sales.csv --head -1
    assert_err 2 'tally: --head: expected a non-negative integer, got "-1"'
    run_tally sales.csv --limit=1.5
    assert_err 2 'tally: --limit: expected a non-negative integer, got "1.5"'
    run_tally sales.csv --head 99999999999999999999
    assert_err 2 'tally: --head: expected a non-negative integer, got "99999999999999999999"'
    assert_only_files sales.csv
}

@test "--by not directly after --head" {
    run_tally sales.csv --by region
    assert_err 2 'tally: option "--by" must follow --head N'
    run_tally sales.csv --head 1 --select id --by region
    assert_err 2 'tally: option "--by" must follow --head N'
}

@test "--group-by without --agg" {
    run_tally sales.csv --group-by region -o out.csv
    assert_err 2 'tally: option "--group-by" must be followed by --agg LIST (got nothing)'
    run_tally sales.csv --group-by region --sort region
    assert_err 2 'tally: option "--group-by" must be followed by --agg LIST (got "--sort")'
    assert_only_files sales.csv
}

@test "--join without --on, and --on, --how, --suffix without --join" {
    run_tally sales.csv --join sales.csv --head 1
    assert_err 2 'tally: option "--join" needs --on KEYS'
    run_tally sales.csv --on id
    assert_err 2 'tally: option "--on" must follow --join INPUT'
    run_tally sales.csv --how left
    assert_err 2 'tally: option "--how" must follow --join INPUT'
    run_tally sales.csv --join sales.csv --on id --how sideways
    assert_err 2 'tally: --how: expected inner, left, right, full, semi or anti, got "sideways"'
}

@test "--delimiter of two characters" {
    run_tally sales.csv --delimiter ';;'
    assert_err 2 'tally: --delimiter: expected one character (or \t), got ";;"'
}

@test "tally schema takes no steps" {
    run_tally schema sales.csv --filter 'qty > 1'
    assert_err 2 'tally: tally schema prints the input columns and takes no steps (got "--filter")'
}

# --------------------------------------------------------- files (1)

@test "missing input file" {
    run_tally nope.csv -o out.csv
    assert_err_glob 1 '*nope.csv*'
    assert_only_files sales.csv
}

@test "unreadable path (a file used as a folder)" {
    run_tally sales.csv/inner.csv -o out.csv
    assert_err_glob 1 '*sales.csv/inner.csv*'
    assert_only_files sales.csv
}

@test "unreadable file (no read permission)" {
    [ "$(id -u)" -ne 0 ] || skip "root reads any file"
    printf 'a\n1\n' > locked.csv
    chmod 000 locked.csv
    run_tally locked.csv -o out.csv
    assert_err_glob 1 '*locked.csv*'
}

@test "a directory as input" {
    mkdir dir.csv
    run_tally dir.csv -o out.csv
    assert_err_glob 1 '*dir.csv*'
    assert_only_files sales.csv dir.csv
}

@test "a glob that matches nothing" {
    run_tally 'nothing/*.csv' -o out.csv
    assert_err_glob 1 '*nothing/\*.csv*'
    assert_only_files sales.csv
}

@test "output into a folder that does not exist" {
    run_tally sales.csv -o no/such/dir/out.csv
    assert_err_glob 1 '*no/such/dir/out.csv*'
    assert_only_files sales.csv
}

@test "missing join input is named" {
    run_tally sales.csv --join nope.csv --on id -o out.csv
    skip_if_unsupported
    assert_err_glob 1 '*nope.csv*'
    assert_only_files sales.csv
}

# ---------------------------------------------------------- data (1)

@test "ragged row names the file and line" {
    printf 'a,b\n1,2\n3,4\n5\n6,7\n' > ragged.csv
    run_tally ragged.csv -o out.csv
    assert_err_glob 1 '*ragged.csv*4*'
    assert_only_files sales.csv ragged.csv
}

@test "a row with too many fields names the file and line" {
    printf 'a,b\n1,2\n3,4,5\n' > wide.csv
    run_tally wide.csv -o out.csv
    assert_err_glob 1 '*wide.csv*3*'
    assert_only_files sales.csv wide.csv
}

@test "unterminated quote names the file and the line it opens on" {
    printf 'a,b\n1,2\n3,"open\n4,5\n' > quote.csv
    run_tally quote.csv -o out.csv
    assert_err_glob 1 '*quote.csv*3*'
    assert_only_files sales.csv quote.csv
}

@test "a ragged row late in a large file leaves no partial output" {
    { echo 'a,b'; seq 1 20000 | sed 's/$/,x/'; echo 'oops'; } > late.csv
    run_tally late.csv -o out.csv
    assert_err_glob 1 '*late.csv*20002*'
    assert_only_files sales.csv late.csv
}

@test "--schema value that does not convert names file, line and column" {
    printf 'id,price\n1,2.5\n2,3\n3,4\n4,cheap\n' > s.csv
    run_tally s.csv --schema 'price:float' -o out.csv
    assert_err_glob 1 '*s.csv*5*'
    [[ "$stderr" == *price* || "$stderr" == *2* ]]
    [[ "$stderr" == *cheap* ]]
    assert_only_files sales.csv s.csv
}

@test "--schema with an unknown type" {
    run_tally sales.csv --schema 'qty:integr' -o out.csv
    assert_err_glob 2 '*integr*'
    assert_only_files sales.csv
}

@test "--schema that is not name:type" {
    run_tally sales.csv --schema 'qty' -o out.csv
    assert_err_glob 2 '*--schema*'
    assert_only_files sales.csv
}

# ------------------------------------------------------ expressions (2)

@test "a syntax error shows the expression with a caret" {
    run_tally sales.csv --filter 'qty > 3 )' -o out.csv
    [ "$status" -eq 2 ] || { show; return 1; }
    [[ "$stderr" == "tally: "* ]]
    assert_stderr_line 2 '  --filter: qty > 3 )'
    assert_stderr_line 3 '                    ^'
    [ -z "$output" ]
    assert_only_files sales.csv
}

@test "an unfinished expression points past its end" {
    run_tally sales.csv --where 'qty >'
    [ "$status" -eq 2 ] || { show; return 1; }
    assert_stderr_line 2 '  --where: qty >'
    [[ "$(printf '%s\n' "$stderr" | sed -n 3p)" =~ ^\ {15,16}\^$ ]] || { show; return 1; }
}

@test "unknown column with a suggestion and a caret" {
    run_tally sales.csv --filter 'qyt > 3' -o out.csv
    assert_err 2 <<'EOF'
tally: unknown column "qyt" (did you mean "qty"?)
  --filter: qyt > 3
            ^^^
EOF
    assert_only_files sales.csv
}

@test "unknown column in a later select item points into the whole list" {
    run_tally sales.csv --select 'id, prodcut'
    assert_err 2 <<'EOF'
tally: unknown column "prodcut" (did you mean "product"?)
  --select: id, prodcut
                ^^^^^^^
EOF
}

@test "unknown column in --sort, --drop, --group-by, --by and --distinct" {
    run_tally sales.csv --sort regoin
    assert_err_glob 2 '*"regoin"*"region"*'
    run_tally sales.csv --drop regoin
    assert_err_glob 2 '*"regoin"*"region"*'
    run_tally sales.csv --group-by regoin --agg 'count()'
    assert_err_glob 2 '*"regoin"*"region"*'
    run_tally sales.csv --head 1 --by regoin
    assert_err_glob 2 '*"regoin"*"region"*'
    run_tally sales.csv --distinct regoin
    assert_err_glob 2 '*"regoin"*"region"*'
    run_tally sales.csv --rename 'regoin:r'
    assert_err_glob 2 '*"regoin"*"region"*'
}

@test "a column dropped earlier is unknown later" {
    run_tally sales.csv --drop qty --filter 'qty > 1'
    assert_err_glob 2 '*unknown column "qty"*'
}

@test "type mismatch shows the expression with a caret" {
    run_tally sales.csv --filter "product + 1 > 0" -o out.csv
    [ "$status" -eq 2 ] || { show; return 1; }
    [[ "$stderr" == "tally: "* ]]
    assert_stderr_line 2 '  --filter: product + 1 > 0'
    [[ "$(printf '%s\n' "$stderr" | sed -n 3p)" == "            ^"* ]] || { show; return 1; }
    assert_only_files sales.csv
}

@test "comparing a string with a number is a type error" {
    run_tally sales.csv --filter "region > 3"
    assert_err_glob 2 '*--filter: region > 3*'
}

@test "unknown function" {
    run_tally sales.csv --select 'sqr(qty)'
    assert_err_glob 2 '*sqr*'
}

@test "wrong number of arguments" {
    run_tally sales.csv --select 'round()'
    assert_err_glob 2 '*round*'
    run_tally sales.csv --select "replace(product, 'a')"
    assert_err_glob 2 '*replace*'
}

@test "an aggregate in a filter is a usage error" {
    run_tally sales.csv --filter 'sum(qty) > 1'
    assert_err_glob 2 '*sum*'
}

@test "a non-aggregate in --agg is a usage error" {
    run_tally sales.csv --group-by region --agg 'qty'
    assert_err_glob 2 '*--agg*'
}

@test "--with without a name" {
    run_tally sales.csv --with 'qty + 1'
    assert_err_glob 2 '*--with*'
}

@test "an empty item in a list" {
    run_tally sales.csv --select 'id,,qty'
    assert_err_glob 2 '*--select*'
}

@test "an unterminated string literal" {
    run_tally sales.csv --filter "region = 'north"
    assert_err_glob 2 "*--filter: region = 'north*"
}

@test "very deep nesting is an error, not a crash" {
    local deep
    deep="$(printf '(%.0s' $(seq 5000))1$(printf ')%.0s' $(seq 5000))"
    run_tally sales.csv --filter "$deep = 1" -o out.csv
    [ "$status" -eq 2 ] || { echo "status $status"; return 1; }
    [[ "$stderr" == "tally: "* ]]
    assert_only_files sales.csv
}

# -------------------------------------------------------- runtime (1)

@test "integer overflow in arithmetic is an error" {
    printf 'x\n1\n9223372036854775807\n' > big.csv
    run_tally big.csv --with 'y = x + 1' -o out.csv
    assert_err_glob 1 '*overflow*'
    assert_only_files sales.csv big.csv
    run_tally big.csv --with 'y = x * 2'
    assert_err_glob 1 '*overflow*'
    run_tally big.csv --with 'y = -x - 2'
    assert_err_glob 1 '*overflow*'
}

@test "integer sum overflow is an error" {
    printf 'x\n9223372036854775807\n1\n' > big.csv
    run_tally big.csv --agg 's = sum(x)' -o out.csv
    assert_err_glob 1 '*overflow*'
    assert_only_files sales.csv big.csv
}

@test "a cast that does not convert is an error, try_cast gives null" {
    run_tally sales.csv --select 'cast(product as int) as p' -o out.csv
    assert_err_glob 1 '*apple*'
    assert_only_files sales.csv
    assert_run_out sales.csv --head 2 --select 'try_cast(product as int) as p, id' <<'EOF'
p,id
,1
,2
EOF
}

@test "sqrt of a negative and ln of zero are errors" {
    run_tally sales.csv --select 'sqrt(0 - qty) as s' -o out.csv
    assert_err_glob 1 '*sqrt*'
    run_tally sales.csv --select 'ln(qty - qty) as s'
    assert_err_glob 1 '*ln*'
    assert_only_files sales.csv
}

@test "binary garbage does not crash" {
    head -c 20000 /dev/urandom > junk.csv 2>/dev/null || true
    printf '\0\0\0\n\0,\0\n' >> junk.csv
    run_tally junk.csv -o out.csv
    [ "$status" -eq 0 ] || [ "$status" -eq 1 ] || { show; return 1; }
    if [ "$status" -eq 1 ]; then assert_only_files sales.csv junk.csv; fi
}

# ------------------------------------------------------ pipeline files

@test "malformed JSON names the file" {
    printf '{"inputs": ["sales.csv"], "steps": [\n' > bad.json
    run_tally -f bad.json -o out.csv
    assert_err_glob 2 '*bad.json*'
    assert_only_files sales.csv bad.json
}

@test "a missing pipeline file names it (a usage error)" {
    run_tally -f missing.json
    assert_err_glob 2 '*missing.json*'
}

@test "a bad expression in a pipeline file names its JSON path" {
    echo '{"inputs": ["sales.csv"], "steps": [{"limit": 5}, {"filter": "qty >> 2"}]}' > p.json
    run_tally -f p.json -o out.csv
    assert_err_glob 2 '*/steps/1/filter*'
    assert_only_files sales.csv p.json
}

@test "an unknown column in an agg names /steps/N/agg/NAME" {
    echo '{"inputs": ["sales.csv"], "steps": [{"group_by": ["region"], "agg": {"total": "sum(qtty)"}}]}' > p.json
    run_tally -f p.json
    assert_err_glob 2 '*unknown column "qtty"*/steps/0/agg/total*'
}

@test "an unknown step names its path" {
    echo '{"inputs": ["sales.csv"], "steps": [{"filter": "qty > 1"}, {"filtre": "qty > 1"}]}' > p.json
    run_tally -f p.json
    assert_err_glob 2 '*/steps/1*'
}

@test "a limit that is not a number names its path" {
    echo '{"inputs": ["sales.csv"], "steps": [{"limit": "ten"}]}' > p.json
    run_tally -f p.json
    assert_err_glob 2 '*/steps/0/limit*'
}
