#!/usr/bin/env zsh
# complete_zsh.zsh SCRIPT < LINES: for each line of standard input, the
# candidates zsh's completion offers at its end with SCRIPT loaded as
# tally's completion (`tally completions zsh`): one a line, sorted, then a
# line "--".  An interactive zsh runs in a pseudo-terminal (zsh/zpty);
# each line is typed with a tab after it, and a wrapper around compadd
# records what the completion functions add.  Exit 3: no zpty; 4: the
# shell did not answer.
zmodload zsh/zpty || exit 3
script=$1
out=$(mktemp) || exit 3
ack=$out.ack
lines=("${(@f)$(cat)}")

# send TEXT, then wait until the shell has run it (it writes ack),
# reading what it prints meanwhile (a full terminal would stop it)
step() {
    rm -f $ack
    zpty -w z "$1; print ok > ${(q)ack}"
    local i junk
    for i in {1..300}; do
        while zpty -rt z junk 2>/dev/null; do :; done
        [[ -s $ack ]] && return 0
        sleep 0.05
    done
    return 1
}

zpty z zsh -f -i || exit 3
step "PS1= RPROMPT=; autoload -U compinit; compinit -u -D; source ${(q)script}" || exit 4
step "zstyle ':completion:*' list-prompt ''; LISTMAX=1000000" || exit 4
step "compadd() { local -a __h; builtin compadd -O __h \"\$@\"; (( \$#__h )) && print -rl -- \$__h >> ${(q)out}; builtin compadd \"\$@\"; }" || exit 4
# ^T completes, then marks the end of the line's candidates; each line is
# typed, completed, and only then erased, so completion never sees
# typeahead (which would change what it does)
step "tcomp() { zle complete-word; print -r -- '-- end' >> ${(q)out}; }; zle -N tcomp; bindkey '^T' tcomp" || exit 4
n=0
for line in $lines; do
    zpty -w -n z "$line"$'\C-t'
    (( n++ ))
    for i in {1..300}; do
        while zpty -rt z junk 2>/dev/null; do :; done
        (( $(grep -c -- '^-- end$' $out 2>/dev/null) >= n )) && break
        sleep 0.05
    done
    (( $(grep -c -- '^-- end$' $out 2>/dev/null) >= n )) || exit 4
    zpty -w -n z $'\C-u'
done
step ":" || exit 4
zpty -d z
# each block sorted, without duplicates
local -a block
while IFS= read -r l; do
    if [[ $l == '-- end' ]]; then
        (( $#block )) && print -rl -- ${(ou)block}
        print -- --
        block=()
    else
        block+=("$l")
    fi
done < $out
rm -f $out $ack
