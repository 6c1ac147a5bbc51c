#!/usr/bin/env bats
# scripts/check-globals (ARCHITECTURE.md, "The run context"): the library
# reads the environment only in lib/core/tuning.c, and keeps no variable
# that is not const outside the script's list of reasons.  Each test runs
# the script on a copy of the sources with something planted.

load helpers

ROOT=$BATS_TEST_DIRNAME/../..

copy_tree() {
    mkdir -p t/scripts
    cp "$ROOT/scripts/check-globals" t/scripts/
    cp -r "$ROOT/lib" "$ROOT/formats" "$ROOT/kernels" "$ROOT/cmd" t/
}

@test "check-globals: the sources pass" {
    run "$ROOT/scripts/check-globals"
    [ "$status" -eq 0 ]
    [ "$output" = "" ]
}

@test "check-globals: a getenv outside tuning.c, a global and a static in a function each fail, named" {
    copy_tree
    n=$(wc -l < t/kernels/hash.c)
    cat >> t/kernels/hash.c <<'C'
static int planted;
int tl_planted(void);
int tl_planted(void)
{
    static long calls;
    return planted + (int)calls++ + (getenv("TALLY_X") != NULL);
}
C
    run t/scripts/check-globals
    [ "$status" -eq 1 ]
    [ "$output" = "check-globals: kernels/hash.c:$((n + 6)): getenv outside lib/core/tuning.c (read the run's tuning, lib/core/ctx.h)
check-globals: kernels/hash.c:$((n + 1)): planted is a process-wide variable; put it in the run context (lib/core/ctx.h) or, if it must be process-wide, in scripts/check-globals with the reason
check-globals: kernels/hash.c:$((n + 5)): calls is a process-wide variable; put it in the run context (lib/core/ctx.h) or, if it must be process-wide, in scripts/check-globals with the reason
check-globals: process-wide state outside the run context (ARCHITECTURE.md, The run context)" ]
}

@test "check-globals: const tables, prototypes and types are not globals; cmd/ is the program's" {
    copy_tree
    cat >> t/kernels/hash.c <<'C'
static const char *const names[] = {"a", "b"};
static const struct { int k; const char *v; } table[] = {{1, "x"}};
typedef struct Planted { int n; } Planted;
int tl_planted(void (*fn)(void *), const char *const *p);
C
    printf 'static int shown;\nint cli_planted(void);\nint cli_planted(void) { return shown + (getenv("X") != 0); }\n' >> t/cmd/main.c
    run t/scripts/check-globals
    [ "$status" -eq 0 ]
    [ "$output" = "" ]
}

@test "check-globals: a pointer to const is not const, and a listed name that is gone fails" {
    copy_tree
    n=$(wc -l < t/kernels/hash.c)
    printf 'static const char *last_name;\n' >> t/kernels/hash.c
    sed -i 's/\bcjson_oom\b/cjson_failed/g' t/lib/dsl/spec.c
    run t/scripts/check-globals
    [ "$status" -eq 1 ]
    [[ "$output" == *"check-globals: kernels/hash.c:$((n + 1)): last_name is a process-wide variable;"* ]]
    [[ "$output" == *"check-globals: lib/dsl/spec.c:"*": cjson_failed is a process-wide variable;"* ]]
    [[ "$output" == *"check-globals: lib/dsl/spec.c: cjson_oom is listed but not found; take it off the list"* ]]
}
