# edgeprof: one Makefile for the libraries (cfg/, estimators/), the BPF objects (bpf/), the
# command (user/), the tests (tests/), the fuzz targets and the benchmarks.
#   make            build build/edgeprof
#   make deps       install the Debian packages (scripts/install-deps.sh, root)
#   make test       build and run every test (unit, oracle, end-to-end)
#   make check-corpus  soundness/exactness checks on real programs from Debian sources (slow)
#   make check-coverage  lcov/gcov exports of lua5.4 and bzip2 against gcov -b of --coverage builds
#                   of the same sources: every difference explained (root; scripts/coverage-corpus.sh)
#   make check-distro  Debian's own /usr/bin programs checked block by block against callgrind
#   make check-pgo  clang-19 sample PGO of lua5.4 from an edgeprof profile, timed against the
#                   plain build and instrumentation PGO (slow; root; scripts/pgo-lua.sh)
#   make check-python  python3.11's own regression tests natively and under edgeprof run:
#                   equal results, 0 violations (slow; root; libpython3.11-testsuite)
#   make fuzz       run the fuzz targets for a bounded time
#   make bench      benchmarks (not part of make test; bench/setup.sh installs BOLT first)

CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
LLVM_STRIP ?= llvm-strip
BUILD    := build
CSTD     := -std=gnu11
WARN     := -Wall -Wextra -Wshadow -Wno-unused-parameter -Wmissing-prototypes
CFLAGS   ?= -O2 -g
CFLAGS   += $(CSTD) $(WARN) -I. -D_GNU_SOURCE
LIBS     := -lelf -ldw -lcapstone -ljansson -lxxhash -lz -lm
FUZZ_SECONDS ?= 60

.DELETE_ON_ERROR:
.PHONY: all deps test unit-tests check-path-oracle check-corpus check-coverage check-distro check-python check-bolt check-pgo fuzz bench bench-extra clean example

CFG_SRCS  := $(sort $(wildcard cfg/*.c))
EST_SRCS  := $(sort $(wildcard estimators/*.c))
USER_SRCS := $(sort $(wildcard user/*.c user/*/*.c))
BPF_SRCS  := $(sort $(wildcard bpf/*.bpf.c))
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
TSUP_SRCS := $(sort $(wildcard tests/support/*.c))

CFG_OBJS  := $(CFG_SRCS:%.c=$(BUILD)/%.o)
EST_OBJS  := $(EST_SRCS:%.c=$(BUILD)/%.o)
USER_OBJS := $(USER_SRCS:%.c=$(BUILD)/%.o)
TSUP_OBJS := $(TSUP_SRCS:%.c=$(BUILD)/%.o)
BPF_OBJS  := $(BPF_SRCS:bpf/%.bpf.c=$(BUILD)/bpf/%.bpf.o)
BPF_SKELS := $(BPF_SRCS:bpf/%.bpf.c=$(BUILD)/bpf/%.skel.h)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

all: $(BUILD)/edgeprof $(BUILD)/libuser.a

deps:
	scripts/install-deps.sh

$(BUILD)/libcfg.a: $(CFG_OBJS)
	@mkdir -p $(@D)
	$(AR) rcs $@ $^

$(BUILD)/libestimators.a: $(EST_OBJS)
	@mkdir -p $(@D)
	$(AR) rcs $@ $^

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -I$(BUILD)/bpf -c $< -o $@

# user/ objects may include BPF skeletons.
$(USER_OBJS): $(BPF_SKELS)

# Everything of user/ but main.o, for edgeprof and for the tests that link user/ code.
$(BUILD)/libuser.a: $(filter-out $(BUILD)/user/main.o,$(USER_OBJS))
	@mkdir -p $(@D)
	$(AR) rcs $@ $^

$(BUILD)/edgeprof: $(BUILD)/user/main.o $(BUILD)/libuser.a $(BUILD)/libestimators.a $(BUILD)/libcfg.a
	$(CC) $(CFLAGS) $^ -o $@ $(LIBS) $(if $(BPF_SRCS),-lbpf)

# --- BPF: vmlinux.h from the running kernel's BTF, objects, skeletons --------------------
$(BUILD)/bpf/vmlinux.h:
	@mkdir -p $(@D)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(BUILD)/bpf/vmlinux.h
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_x86 -I$(BUILD)/bpf -I. -c $< -o $@
	$(LLVM_STRIP) -g $@

$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@

# --- tests ---------------------------------------------------------------------------------
$(BUILD)/tests/test_%: tests/unit/test_%.c $(TSUP_OBJS) $(BUILD)/libuser.a $(BUILD)/libestimators.a $(BUILD)/libcfg.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests $^ -o $@ $(LIBS) -lbpf -lcmocka

$(BUILD)/tests/cfg_oracle: tests/oracle/cfg_oracle.c $(TSUP_OBJS) $(BUILD)/libcfg.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests $^ -o $@ $(LIBS)

$(BUILD)/tests/count_oracle: tests/oracle/count_oracle.c $(BUILD)/tests/support/callgrind.o
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests $^ -o $@ -ljansson -lcapstone

# The path-profile oracle (tests/path-oracle.sh): a single-stepping tracer and the replay of
# its traces into Ball-Larus path counts; neither links edgeprof's libraries.
$(BUILD)/tests/step_trace: tests/oracle/step_trace.c tests/oracle/step_trace.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< -o $@

$(BUILD)/tests/path_oracle: tests/oracle/path_oracle.c tests/oracle/step_trace.h tests/support/json_hex.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests $< -o $@ -ljansson

$(BUILD)/tests/sweep_oracle: tests/oracle/sweep_oracle.c $(BUILD)/tests/support/callgrind.o
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests $^ -o $@ -ljansson

$(BUILD)/tests/time_oracle: tests/oracle/time_oracle.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< -o $@ -ljansson -lm

ORACLES := $(BUILD)/tests/cfg_oracle $(BUILD)/tests/count_oracle $(BUILD)/tests/time_oracle \
	   $(BUILD)/tests/sweep_oracle

unit-tests: $(UNIT_BINS)

test: all unit-tests $(ORACLES)
	tests/run.sh

check-corpus: all $(ORACLES)
	scripts/check-corpus.sh
	scripts/check-corpus-counts.sh
	scripts/attach-corpus.sh

check-coverage: all
	scripts/coverage-corpus.sh

check-bolt: all
	scripts/bolt-corpus.sh

check-distro: all $(ORACLES)
	scripts/check-distro.sh

# The path oracle checked against callgrind (not part of make test).
check-path-oracle: all $(BUILD)/tests/step_trace $(BUILD)/tests/path_oracle $(BUILD)/tests/count_oracle
	tests/path-oracle.sh

# Issue 18: lua5.4 rebuilt with clang-19 -fprofile-sample-use from edgeprof's profile.
check-pgo: all
	scripts/pgo-lua.sh

# Non-interference on a test suite nobody here wrote (issue 14): not part of make test.
check-python: all
	scripts/check-python-suite.sh

# --- fuzzing (clang libFuzzer with ASan/UBSan) --------------------------------------------
FUZZ_CFLAGS := $(CSTD) -g -O1 -I. -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined
$(BUILD)/fuzz/%: tests/fuzz/%.c $(CFG_SRCS) $(EST_SRCS)
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) $^ -o $@ $(LIBS)

fuzz: $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
	scripts/run-fuzz.sh $(FUZZ_SECONDS) $^

# Per-hit cost of in-process counter trampolines (not part of make bench).
$(BUILD)/bench/trampoline_cost: bench/trampoline_cost.c $(BUILD)/libuser.a $(BUILD)/libcfg.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $^ -o $@ $(LIBS)

bench: all
	bench/setup.sh || echo "make bench: bench/setup.sh failed: the bolt column will say missing" >&2
	bench/bench.sh

bench-extra: all
	bench/run.sh

example: all
	scripts/example.sh

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -type f -name '*.d' 2>/dev/null)
