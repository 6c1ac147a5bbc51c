#!/usr/bin/env bats
# tally completions bash|zsh|fish: each script, loaded in its real shell,
# offers every flag, each flag's values (choices, files, the input's column
# names, nothing for free text) and the inputs.  A shell that is missing
# skips its test, except under CI=true, where it fails (scripts/setup-deps
# installs bash-completion, zsh and fish).

load helpers

# Every flag, in --help's order, and what completing its value offers:
# text: nothing; columns: the header of data.csv; files: data.csv;
# none: the flag takes no value, so an input (data.csv) comes next.
FLAGS='--filter text
--where text
--select columns
--with text
--with-row-number text
--drop columns
--rename text
--group-by columns
--agg text
--sorted none
--sort columns
--head text
--by columns
--limit text
--tail text
--offset text
--sample text
--seed text
--distinct columns+files
--join files
--on columns
--how inner left right full semi anti
--suffix text
--join-delimiter text
--join-schema text
--join-from csv tsv ndjson jsonl json parquet
--describe none
-o files
--output files
-f files
--file files
--from csv tsv ndjson jsonl json parquet
--to csv tsv ndjson jsonl json table parquet
--delimiter text
--quote none-value
--escape none-value
--with-filename none
--comment text
--compress-level text
--max-record-size text
--parquet-compression zstd snappy gzip lz4 none
--row-group-size text
--null text
--decimal-comma none
--header none
--no-header none
--skip text
--ragged error pad skip
--max-columns text
--out-no-header none
--out-null text
--out-delimiter text
--schema text
--no-infer none
--quoted-as-string none
--threads text
--stats none
--memory-limit text
--temp-dir files
--no-optimize none
--quiet none
--verbose none
--rows text
--color auto always never
--version none
-h none
--help none'

need_shell() {
    if ! command -v "$1" >/dev/null 2>&1 || { [ -n "${2:-}" ] && [ ! -f "$2" ]; }; then
        [ "${CI:-}" = true ] && { echo "$1 is missing (${2:-$1}): run scripts/setup-deps"; return 1; }
        skip "$1 is not installed"
    fi
}

setup() {
    enter_workdir
    printf 'id,name,amount\n1,a,2\n' > data.csv
    S=$BATS_TEST_TMPDIR/s
    mkdir -p "$S"
    # tally on PATH for the scripts' column lookups
    mkdir -p "$S/bin"
    ln -sf "$TALLY" "$S/bin/tally"
    export PATH="$S/bin:$PATH"
}

# The lines to complete and, for each, the expected candidates (sorted, one
# a line, then "--"): every flag's value, then the flags themselves, the
# subcommands, the shells, a LIST after its comma and --flag=value.
cases() {
    local f v
    while read -r f v; do
        echo "tally data.csv $f "
    done <<< "$FLAGS"
    echo 'tally -'
    echo 'tally '
    echo 'tally completions '
}

expected() {
    local f v x
    while read -r f v; do
        case $v in
        text) ;;
        columns) printf '%s\n' amount id name ;;
        columns+files) printf '%s\n' amount data.csv id name ;;
        files|none) echo data.csv ;;
        none-value) echo none ;;
        *) for x in $v; do echo "$x"; done | sort ;;
        esac
        echo --
    done <<< "$FLAGS"
    cut -d' ' -f1 <<< "$FLAGS" | LC_ALL=C sort
    echo --
    printf '%s\n' completions data.csv describe explain help schema
    echo --
    printf '%s\n' bash fish zsh
    echo --
}

# check_blocks GOT: the shell's answers equal the expected ones.
check_blocks() {
    local want
    want=$(expected)
    if [ "$1" != "$want" ]; then
        diff <(printf '%s\n' "$want") <(printf '%s\n' "$1")
        return 1
    fi
}

@test "completions: bash (bash-completion, compgen) for every flag" {
    need_shell bash /usr/share/bash-completion/bash_completion
    "$TALLY" completions bash > "$S/tally.bash"
    cat > "$S/drive.bash" <<'EOF'
source /usr/share/bash-completion/bash_completion
source "$1"
while IFS= read -r line; do
    COMP_LINE=$line COMP_POINT=${#line}
    read -r -a COMP_WORDS <<< "$line"
    [[ $line == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    _tally
    ((${#COMPREPLY[@]})) && printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort -u
    echo --
done
EOF
    got=$(cases | bash "$S/drive.bash" "$S/tally.bash")
    check_blocks "$got"
    # a LIST completes after its last comma; --flag=value completes the value
    got=$(printf '%s\n' 'tally data.csv --select id,n' 'tally data.csv --how=le' |
          bash "$S/drive.bash" "$S/tally.bash")
    [ "$got" = $'id,name\n--\nleft\n--' ] || { echo "$got"; false; }
}

@test "completions: zsh for every flag" {
    need_shell zsh
    "$TALLY" completions zsh > "$S/_tally"
    got=$(cases | LC_ALL=C zsh "$CLI_DIR/../support/complete_zsh.zsh" "$S/_tally")
    check_blocks "$got"
    got=$(printf '%s\n' 'tally data.csv --select id,n' 'tally data.csv --how=le' |
          zsh "$CLI_DIR/../support/complete_zsh.zsh" "$S/_tally")
    [ "$got" = $'name\n--\nleft\n--' ] || { echo "$got"; false; }
}

@test "completions: fish for every flag" {
    need_shell fish
    "$TALLY" completions fish > "$S/tally.fish"
    # (fish also offers --distinct=, the optional value's spelling)
    got=$(cases | LC_ALL=C fish -c 'source $argv[1]
        while read -l line
            complete -C "$line" | string replace -r "\t.*" "" | string match -v -- --distinct= | sort -u
            printf "%s\n" --
        end' "$S/tally.fish")
    check_blocks "$got"
    got=$(printf '%s\n' 'tally data.csv --select id,n' 'tally data.csv --how=le' | fish -c 'source $argv[1]
        while read -l line
            complete -C "$line" | string replace -r "\t.*" ""
            printf "%s\n" --
        end' "$S/tally.fish")
    [ "$got" = $'id,name\n--\n--how=left\n--' ] || { echo "$got"; false; }
}

@test "completions: the scripts offer exactly the flags --help names" {
    run_tally --help
    assert_ok
    help_flags=$(grep -oE -- '(^|[ ,[(])--?[a-z][a-z-]*' <<< "$output" | grep -oE -- '--?[a-z][a-z-]*' |
                 grep -vE '^-(schema|from)$' | LC_ALL=C sort -u)
    table=$(cut -d' ' -f1 <<< "$FLAGS" | LC_ALL=C sort -u)
    # --join-schema and --join-from are spelled --join-delimiter/-schema/-from
    [ "$help_flags" = "$(grep -vxE -- '--join-(schema|from)' <<< "$table")" ] ||
        { diff <(echo "$table") <(echo "$help_flags"); false; }
}

@test "completions: an unknown or missing shell is a usage error naming the choices" {
    run_tally completions powershell
    assert_err 2 'tally: completions: expected bash, zsh or fish, got "powershell"'
    run_tally completions
    assert_err 2 'tally: completions: expected a shell: bash, zsh or fish'
    run_tally completions bash zsh
    assert_err 2 'tally: completions: expected one shell (bash, zsh or fish), got 2 arguments'
    run_tally completion bash
    assert_err 2 'tally: "completion" is neither a command nor a file (did you mean tally completions?)'
}

@test "make install puts the three scripts where the shells look" {
    root=$BATS_TEST_TMPDIR/root
    run make -C "$CLI_DIR/../.." -s install B="$(dirname "$TALLY")" DESTDIR="$root" PREFIX=/usr/local
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    for sh in bash zsh fish; do
        "$TALLY" completions "$sh" > "$S/want.$sh"
    done
    cmp "$S/want.bash" "$root/usr/local/share/bash-completion/completions/tally"
    cmp "$S/want.zsh" "$root/usr/local/share/zsh/site-functions/_tally"
    cmp "$S/want.fish" "$root/usr/local/share/fish/vendor_completions.d/tally.fish"
}
