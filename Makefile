# tally -- one non-recursive Makefile.
#
#   make                 build/tally (release, -O2)
#   make demo            install missing packages, build, run a pipeline on examples/
#   make check           install missing packages, build, run every test (also
#                        under ASan+UBSan)
#   make install PREFIX=/usr/local
#   make unit [T=NAME[:FILTER]]
#                        the unit test binaries (all of them, or only
#                        build/tests/test_NAME; FILTER keeps the tests whose
#                        name contains it: TL_TEST_FILTER in tl_test.h)
#   make cli T=FILE[:FILTER]
#                        one bats file, tests/cli/FILE.bats, against the
#                        release build (FILTER: bats -f, a regular expression
#                        over the test names); without T, scripts/run-cli
#   make asan T=...      the ASan flavour's unit run takes T too
#
# Dependencies come from pkg-config; scripts/setup-deps installs them.

CC      ?= cc
PREFIX  ?= /usr/local
PKGS    := libzstd libcjson zlib libxxhash libutf8proc snappy liblz4 libbrotlidec libbrotlicommon libpcre2-8
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wno-unused-parameter
# A machine without the libraries (or pkg-config): stop before compiling,
# naming the Debian packages that are missing and the command that installs
# them, instead of a compiler error about the first header not found.
# Goals that install them first (setup, demo, check) or need none (clean,
# oracles) go ahead.
deb_pkg = $(or $(patsubst libbrotli%,libbrotli-dev,$(filter libbrotli%,$(1))),\
               $(if $(filter zlib,$(1)),zlib1g-dev),$(if $(filter snappy,$(1)),libsnappy-dev),\
               $(if $(filter libpcre2-8,$(1)),libpcre2-dev),$(1)-dev)
MISSING_PKGS := $(if $(shell command -v pkg-config 2>/dev/null),\
    $(sort $(foreach p,$(shell for p in $(PKGS); do pkg-config --exists $$p 2>/dev/null || echo $$p; done),$(call deb_pkg,$(p)))),\
    pkg-config $(sort $(foreach p,$(PKGS),$(call deb_pkg,$(p)))))
ifneq ($(strip $(MISSING_PKGS)),)
ifeq ($(filter setup demo check clean oracles,$(MAKECMDGOALS)),)
$(info make: the build needs these packages, which are missing: $(strip $(MISSING_PKGS)))
$(info make: install them with:  sudo apt-get install -y $(strip $(MISSING_PKGS)))
$(info make: (or run `make setup`, which installs everything the build and tests need))
$(error missing packages)
endif
endif
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
# Start-up time: every shared library costs the loader a few page faults
# (~0.05 ms each on a VM), so libzstd, zlib, libxxhash, libpcre2-8 and the
# others below are linked from
# their static archives when the system has them (Debian's -dev packages
# ship them), dynamically otherwise.  An archive is looked up in the
# package's pkg-config libdir, then in the compiler's search path.
# STATIC_DEPS=0 links everything dynamically.  libcjson has no archive on
# Debian: it stays dynamic.
STATIC_DEPS ?= 1
STATIC_PKGS := libzstd zlib libxxhash libutf8proc snappy liblz4 libbrotlidec libbrotlicommon libpcre2-8
ifeq ($(STATIC_DEPS),1)
static_ar = $(firstword $(wildcard $(addsuffix /lib$(1).a,$(shell pkg-config --variable=libdir $(2) 2>/dev/null))) \
            $(filter /%,$(shell $(CC) -print-file-name=lib$(1).a 2>/dev/null)))
STATIC_AR := $(foreach p,$(STATIC_PKGS),$(foreach l,$(patsubst -l%,%,$(shell pkg-config --libs-only-l $(p) 2>/dev/null)),\
               $(if $(call static_ar,$(l),$(p)),$(call static_ar,$(l),$(p)) STATIC_DROP_-l$(l))))
PKG_LIBS := $(filter-out $(patsubst STATIC_DROP_%,%,$(filter STATIC_DROP_%,$(STATIC_AR))),$(PKG_LIBS)) \
            $(filter-out STATIC_DROP_%,$(STATIC_AR))
endif
# libsnappy is C++: its archive needs the C++ runtime, linked from the
# compiler's static libstdc++ too (the parts snappy uses: operator new,
# std::string) and libgcc's unwinder from its archive (-static-libgcc), so no
# C++ or libgcc shared library loads at start-up; with a shared
# libsnappy the shared runtime comes along anyway.
ifneq ($(filter %/libsnappy.a,$(PKG_LIBS)),)
CXX_RT := $(firstword $(filter /%,$(shell $(CC) -print-file-name=libstdc++.a 2>/dev/null)) -lstdc++) -static-libgcc
else
CXX_RT := -lstdc++
endif
CFLAGS  ?= -O2 -g
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) $(EXTRA_CFLAGS) $(PKG_CFLAGS) -I.
LDLIBS  = $(PKG_LIBS) $(CXX_RT) -lm -lpthread

LIB_SRC := $(sort $(wildcard lib/*.c lib/*/*.c lib/*/*/*.c kernels/*.c formats/*.c formats/*/*.c))
CMD_SRC := $(sort $(wildcard cmd/*.c))
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))

# Build flavours: B is the output folder.
B ?= build
LIB_OBJ := $(LIB_SRC:%.c=$(B)/obj/%.o)
CMD_OBJ := $(CMD_SRC:%.c=$(B)/obj/%.o)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)

.PHONY: all demo check setup oracles diff corpora-duckdb install clean unit unit-bins asan tsan cli fuzz fuzz-smoke faults \
        fuzz-build fuzz-bins check-build check-build-release check-build-asan \
        check-build-tsan check-build-fuzz
all: $(B)/tally

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(B)/libtally.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# TALLY_EXTRA: objects linked into this flavour's tally and tally-matrix
# only (the ASan flavour's tests/support/asan_bss.c).
TALLY_EXTRA ?=
$(B)/tally: $(CMD_OBJ) $(TALLY_EXTRA) $(B)/libtally.a
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(CMD_OBJ) $(TALLY_EXTRA) $(B)/libtally.a $(LDLIBS)

# The out-of-memory loop in one process (scripts/oom-loop).
$(B)/oom-run: tests/fault/oom_run.c tests/support/sanitizer.h $(B)/obj/cmd/flags.o $(B)/libtally.a
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(B)/obj/cmd/flags.o $(B)/libtally.a $(LDLIBS)

# The thread matrices of tests/cli, every run in one process (tests/support/
# matrix_run.c): the program's main, compiled as tally_main, in a driver.
$(B)/obj/cmd/main_fn.o: cmd/main.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Dmain=tally_main -Wno-missing-prototypes -MMD -MP -c $< -o $@
$(B)/tally-matrix: tests/support/matrix_run.c tests/support/sanitizer.h $(B)/obj/cmd/main_fn.o \
                   $(B)/obj/cmd/flags.o $(B)/obj/cmd/complete.o $(B)/obj/cmd/term.o \
                   $(TALLY_EXTRA) $(B)/libtally.a
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(B)/obj/cmd/main_fn.o $(B)/obj/cmd/flags.o \
	    $(B)/obj/cmd/complete.o $(B)/obj/cmd/term.o $(TALLY_EXTRA) $(B)/libtally.a $(LDLIBS)

$(B)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) tests/support/sanitizer.h $(B)/libtally.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libtally.a $(LDLIBS)

# T=NAME[:FILTER] (make unit, make cli): one test file and, after the first
# colon, a filter of test names, which reaches the recipes through the
# environment ($$T; make exports command-line variables), so it may hold
# spaces.  T_NAME is the file's part: test_join, join or join.bats.
T ?=
T_NAME := $(basename $(notdir $(firstword $(subst :, ,$(T)))))
T_UNIT := $(if $(T_NAME),$(B)/tests/test_$(patsubst test_%,%,$(T_NAME)))
T_BATS := $(if $(T_NAME),tests/cli/$(T_NAME).bats)

ifeq ($(T_NAME),)
unit: $(UNIT_BIN)
	@scripts/run-unit $(UNIT_BIN)
else
unit: $(T_UNIT)
	@f=""; case "$$T" in *:*) f=$${T#*:} ;; esac; \
	    TL_TEST_FILTER="$$f" scripts/run-unit $(T_UNIT)
endif
unit-bins: $(UNIT_BIN)

# make cli T=FILE[:FILTER]: one bats file against this flavour's tally (the
# files run by make check need tally-matrix and, for faults.bats,
# iofail.so beside it); without T, the whole suite as make check's
# release pass runs it.
cli: $(B)/tally $(B)/tally-matrix build/iofail.so
ifeq ($(T_NAME),)
	@scripts/run-cli $(B)/tally
else
	@[ -f $(T_BATS) ] || { echo "make cli: no $(T_BATS)" >&2; exit 2; }
	@case "$$T" in \
	    *:*) TALLY=$(abspath $(B)/tally) bats -f "$${T#*:}" $(T_BATS) ;; \
	    *) TALLY=$(abspath $(B)/tally) bats $(T_BATS) ;; \
	esac
endif

setup:
	@scripts/timed setup scripts/setup-deps

# The test oracle (DuckDB for Node, scripts/setup-oracles) and the
# differential tests against it (tests/diff/diff.mjs): `make diff` checks the
# release build against DuckDB's committed answers and DuckDB itself.
oracles:
	@scripts/timed oracles scripts/setup-oracles
diff: oracles $(B)/tally
	@node tests/diff/diff.mjs live $(B)/tally

# tally's default reading of the DuckDB, csv-spectrum and rust-csv corpora
# ($$CORPORA) against DuckDB's auto-detecting readers
# (tests/corpora/duckdb_corpora.mjs): fails when a file's class is worse than
# in tests/corpora/duckdb_expected.tsv.  Not part of `make check`.
corpora-duckdb: oracles $(B)/tally
	@node tests/corpora/duckdb_corpora.mjs check $(B)/tally

demo: setup
	@$(MAKE) --no-print-directory all
	@scripts/demo

# The sanitizer flavour: the same sources in build/asan, built with clang
# (ASAN_CC): its ASan and UBSan start a process in three quarters of the
# time of gcc's (no libstdc++ loaded; 83 against 109 ms for a 10-row
# group-by on a VM where a page fault is costly), and the CLI suite starts
# thousands; its UBSan also checks pointer arithmetic on NULL.
ASAN_CC ?= clang
ASAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
              -fno-sanitize-recover=all -DTL_FAULT
# Huge pages for the sanitizer runtime's tables (tests/support/asan_bss.c).
ASAN_EXTRA := build/asan/obj/tests/support/asan_bss.o
asan:
	@$(MAKE) --no-print-directory CC=$(ASAN_CC) B=build/asan CFLAGS="$(ASAN_FLAGS)" \
	    LDFLAGS="-fsanitize=address,undefined" TALLY_EXTRA=$(ASAN_EXTRA) build/asan/tally \
	    build/asan/oom-run build/asan/tally-matrix unit

# The data-race flavour: ThreadSanitizer in build/tsan (scripts/tsan-smoke).
TSAN_FLAGS := -O1 -g -fsanitize=thread -fno-omit-frame-pointer
tsan:
	@$(MAKE) --no-print-directory -j$(JOBS) B=build/tsan CFLAGS="$(TSAN_FLAGS)" \
	    LDFLAGS="-fsanitize=thread" build/tsan/tally
	@scripts/tsan-smoke build/tsan/tally

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# make check: first the four builds (release with the unit tests, ASan+UBSan
# with the unit tests, TSan, libFuzzer) in one make, so its $(JOBS) job slots
# are shared and one flavour's serial steps (archive, links) overlap another's
# compiles; then every test phase, each spreading its independent parts over
# $(JOBS) processes, the costliest first (unit binaries of both builds,
# bats files against both binaries, OOM pipelines, fuzz targets, corpus
# shards; see RELIABILITY.md).  CI's budget is 15 minutes; each phase prints
# its time ("time: NAME N s", scripts/timed).
check: setup oracles
	@scripts/timed build $(MAKE) --no-print-directory -j$(JOBS) check-build
	@scripts/check-includes
	@scripts/check-globals
	@scripts/timed unit scripts/run-unit $(UNIT_BIN) $(UNIT_BIN:build/%=build/asan/%)
	@scripts/timed cli scripts/run-cli build/tally asan:build/asan/tally
	@scripts/timed diff node tests/diff/diff.mjs live build/asan/tally
	@scripts/timed oom scripts/oom-loop build/asan/oom-run
	@scripts/timed tsan scripts/tsan-smoke build/tsan/tally build/tally
	@scripts/timed fuzz scripts/run-fuzz $(FUZZ_SMOKE_SECONDS) $(FUZZ_SRC)
	@scripts/timed corpora scripts/run-corpora build/asan/tally

# The builds of check (run them with -j: they share the job slots).
check-build: check-build-release check-build-asan check-build-tsan check-build-fuzz
check-build-release:
	@$(MAKE) --no-print-directory EXTRA_CFLAGS=-Werror all build/iofail.so build/tally-matrix unit-bins
check-build-asan:
	@$(MAKE) --no-print-directory EXTRA_CFLAGS=-Werror CC=$(ASAN_CC) B=build/asan \
	    CFLAGS="$(ASAN_FLAGS)" LDFLAGS="-fsanitize=address,undefined" \
	    TALLY_EXTRA=$(ASAN_EXTRA) build/asan/tally \
	    build/asan/oom-run build/asan/tally-matrix unit-bins
check-build-tsan:
	@$(MAKE) --no-print-directory EXTRA_CFLAGS=-Werror B=build/tsan \
	    CFLAGS="$(TSAN_FLAGS)" LDFLAGS="-fsanitize=thread" build/tsan/tally
check-build-fuzz: fuzz-bins

# I/O fault injection shim for tests/cli/faults.bats (LD_PRELOAD).
build/iofail.so: tests/fault/iofail.c
	@mkdir -p build
	$(CC) -shared -fPIC -O2 -Wall -Wextra -o $@ $< -ldl

# Fuzzing with libFuzzer (clang): targets in tests/fuzz/fuzz_*.c, library
# objects built with coverage in build/fuzz.  fuzz-smoke runs each target for
# FUZZ_SMOKE_SECONDS on its seeds; fuzz runs each for FUZZ_SECONDS.
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_FLAGS := -O1 -g -fsanitize=address,undefined,fuzzer-no-link -fno-omit-frame-pointer -DTL_FAULT
FUZZ_SMOKE_SECONDS ?= 5
FUZZ_SECONDS ?= 300
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)
fuzz-build:
	@$(MAKE) --no-print-directory -j$(JOBS) fuzz-bins
fuzz-bins:
	@$(MAKE) --no-print-directory B=build/fuzz CC=clang CFLAGS="$(FUZZ_FLAGS)" $(FUZZ_BIN)
build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(wildcard tests/fuzz/*.h) build/fuzz/libtally.a
	clang -std=c11 -D_GNU_SOURCE -O1 -g -fsanitize=address,undefined,fuzzer -I. $(PKG_CFLAGS) \
	    -o $@ $< build/fuzz/libtally.a $(LDLIBS)
fuzz-smoke: fuzz-build
	@scripts/run-fuzz $(FUZZ_SMOKE_SECONDS) $(FUZZ_SRC)
fuzz: fuzz-build
	@scripts/run-fuzz $(FUZZ_SECONDS) $(FUZZ_SRC)

# The completion scripts go where each shell looks under PREFIX:
# bash-completion's completions/, zsh's site-functions, fish's
# vendor_completions.d (tally completions SHELL writes them).
SHARE = $(DESTDIR)$(PREFIX)/share
install: $(B)/tally
	install -d $(DESTDIR)$(PREFIX)/bin $(SHARE)/man/man1 \
	    $(SHARE)/bash-completion/completions $(SHARE)/zsh/site-functions \
	    $(SHARE)/fish/vendor_completions.d
	install -m 755 $(B)/tally $(DESTDIR)$(PREFIX)/bin/tally
	install -m 644 man/tally.1 $(SHARE)/man/man1/tally.1
	$(B)/tally completions bash > $(SHARE)/bash-completion/completions/tally
	$(B)/tally completions zsh > $(SHARE)/zsh/site-functions/_tally
	$(B)/tally completions fish > $(SHARE)/fish/vendor_completions.d/tally.fish

clean:
	rm -rf build

-include $(LIB_OBJ:.o=.d) $(CMD_OBJ:.o=.d)
