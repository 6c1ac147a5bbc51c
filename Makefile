# tally -- one non-recursive Makefile.
#
#   make                 build/tally (release, -O2)
#   make demo            install missing packages, build, run a pipeline on examples/
#   make check           install missing packages, build, run every test (also
#                        under ASan+UBSan)
#   make install PREFIX=/usr/local
#
# Dependencies come from pkg-config; scripts/setup-deps installs them.

CC      ?= cc
PREFIX  ?= /usr/local
PKGS    := libzstd libcjson zlib libxxhash
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wno-unused-parameter
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CFLAGS  ?= -O2 -g
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) $(EXTRA_CFLAGS) $(PKG_CFLAGS) -I.
LDLIBS  = $(PKG_LIBS) -lm -lpthread

LIB_SRC := $(sort $(wildcard lib/*.c lib/*/*.c kernels/*.c formats/*.c))
CMD_SRC := $(sort $(wildcard cmd/*.c))
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))

# Build flavours: B is the output folder.
B ?= build
LIB_OBJ := $(LIB_SRC:%.c=$(B)/obj/%.o)
CMD_OBJ := $(CMD_SRC:%.c=$(B)/obj/%.o)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)

.PHONY: all demo check setup install clean unit asan tsan cli fuzz fuzz-smoke faults
all: $(B)/tally

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(B)/libtally.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/tally: $(CMD_OBJ) $(B)/libtally.a
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(CMD_OBJ) $(B)/libtally.a $(LDLIBS)

$(B)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(B)/libtally.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libtally.a $(LDLIBS)

unit: $(UNIT_BIN)
	@scripts/run-unit $(UNIT_BIN)

setup:
	@scripts/setup-deps

demo: setup
	@$(MAKE) --no-print-directory all
	@scripts/demo

# The sanitizer flavour: the same sources in build/asan.
ASAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
              -fno-sanitize-recover=all -DTL_FAULT
asan:
	@$(MAKE) --no-print-directory B=build/asan CFLAGS="$(ASAN_FLAGS)" \
	    LDFLAGS="-fsanitize=address,undefined" build/asan/tally unit

# The data-race flavour: ThreadSanitizer in build/tsan (scripts/tsan-smoke).
TSAN_FLAGS := -O1 -g -fsanitize=thread -fno-omit-frame-pointer
tsan:
	@$(MAKE) --no-print-directory -j$(JOBS) B=build/tsan CFLAGS="$(TSAN_FLAGS)" \
	    LDFLAGS="-fsanitize=thread" build/tsan/tally
	@scripts/tsan-smoke build/tsan/tally

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
check: setup
	@$(MAKE) --no-print-directory -j$(JOBS) EXTRA_CFLAGS=-Werror all build/iofail.so
	@$(MAKE) --no-print-directory EXTRA_CFLAGS=-Werror unit
	@$(MAKE) --no-print-directory -j$(JOBS) EXTRA_CFLAGS=-Werror B=build/asan \
	    CFLAGS="$(ASAN_FLAGS)" LDFLAGS="-fsanitize=address,undefined" build/asan/tally
	@$(MAKE) --no-print-directory EXTRA_CFLAGS=-Werror asan
	@scripts/check-includes
	@scripts/run-cli build/tally
	@TALLY_ASAN=1 scripts/run-cli build/asan/tally
	@scripts/oom-loop build/asan/tally
	@$(MAKE) --no-print-directory EXTRA_CFLAGS=-Werror tsan
	@$(MAKE) --no-print-directory fuzz-smoke
	@scripts/run-corpora build/asan/tally

# I/O fault injection shim for tests/cli/faults.bats (LD_PRELOAD).
build/iofail.so: tests/fault/iofail.c
	@mkdir -p build
	$(CC) -shared -fPIC -O2 -Wall -Wextra -o $@ $< -ldl

# Fuzzing with libFuzzer (clang): targets in tests/fuzz/fuzz_*.c, library
# objects built with coverage in build/fuzz.  fuzz-smoke runs each target for
# FUZZ_SMOKE_SECONDS on its seeds; fuzz runs each for FUZZ_SECONDS.
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_FLAGS := -O1 -g -fsanitize=address,undefined,fuzzer-no-link -fno-omit-frame-pointer -DTL_FAULT
FUZZ_SMOKE_SECONDS ?= 10
FUZZ_SECONDS ?= 300
fuzz-build:
	@$(MAKE) --no-print-directory -j$(JOBS) B=build/fuzz CC=clang CFLAGS="$(FUZZ_FLAGS)" build/fuzz/libtally.a
	@for f in $(FUZZ_SRC); do t=$$(basename $$f .c); \
	  clang -std=c11 -D_GNU_SOURCE -O1 -g -fsanitize=address,undefined,fuzzer -I. $(PKG_CFLAGS) \
	    -o build/fuzz/$$t $$f build/fuzz/libtally.a $(LDLIBS) || exit 1; done
fuzz-smoke: fuzz-build
	@scripts/run-fuzz $(FUZZ_SMOKE_SECONDS) $(FUZZ_SRC)
fuzz: fuzz-build
	@scripts/run-fuzz $(FUZZ_SECONDS) $(FUZZ_SRC)

install: $(B)/tally
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(B)/tally $(DESTDIR)$(PREFIX)/bin/tally
	install -m 644 man/tally.1 $(DESTDIR)$(PREFIX)/share/man/man1/tally.1

clean:
	rm -rf build

-include $(LIB_OBJ:.o=.d) $(CMD_OBJ:.o=.d)
