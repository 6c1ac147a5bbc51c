#!/usr/bin/env bats
# run-cli: weight=1
# First contact with the build: a plain `make` on a machine without the
# libraries stops before compiling, naming the missing Debian packages and
# the command that installs them (Makefile, MISSING_PKGS).

load helpers

ROOT=$BATS_TEST_DIRNAME/../..

@test "make without the libraries lists the missing packages and how to install them" {
    run env PKG_CONFIG_LIBDIR="$PWD/none" PKG_CONFIG_PATH= make -C "$ROOT" --no-print-directory \
        -n B="$PWD/b" all
    [ "$status" -eq 2 ]
    [[ "$output" == "make: the build needs these packages, which are missing: libbrotli-dev libcjson-dev liblz4-dev libpcre2-dev libsnappy-dev libutf8proc-dev libxxhash-dev libzstd-dev zlib1g-dev
make: install them with:  sudo apt-get install -y libbrotli-dev libcjson-dev liblz4-dev libpcre2-dev libsnappy-dev libutf8proc-dev libxxhash-dev libzstd-dev zlib1g-dev
make: (or run \`make setup\`, which installs everything the build and tests need)"* ]]
    [[ "${lines[3]}" == "Makefile:"*": *** missing packages.  Stop." ]]
    [ ! -e b ]
    # make clean needs none of them
    run env PKG_CONFIG_LIBDIR="$PWD/none" PKG_CONFIG_PATH= make -C "$ROOT" -n B="$PWD/b" clean
    [ "$status" -eq 0 ]
}

@test "make without pkg-config names it too" {
    mkdir bin
    for t in sh make; do ln -s "$(command -v "$t")" "bin/$t"; done
    run env PATH="$PWD/bin" make -C "$ROOT" --no-print-directory -n B="$PWD/b" all
    [ "$status" -eq 2 ]
    [ "${lines[0]}" = "make: the build needs these packages, which are missing: pkg-config libbrotli-dev libcjson-dev liblz4-dev libpcre2-dev libsnappy-dev libutf8proc-dev libxxhash-dev libzstd-dev zlib1g-dev" ]
}
