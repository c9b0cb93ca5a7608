#!/usr/bin/env bash
# BPF branch evaluation: builds tests/bpf_branch_test.c against edgeprof's probes.o, which
# probes every kind of conditional jump in its own executable and requires the BPF program's
# taken / not-taken counts to match what the CPU did exactly (plus a jb taken 300 of 1000
# times, a count site, a thread and a forked child). Needs root (or CAP_BPF + CAP_PERFMON):
# exit 77 (skip) when BPF is unavailable; tests/run.sh makes that a failure with CI=true.
set -u
cd "$(dirname "$0")/.." || exit 1

command -v gcc >/dev/null || { echo "SKIP: gcc not found"; exit 77; }
for f in build/user/count/probes.o build/user/util/log.o build/user/util/progress.o \
	build/user/util/clock.o build/libcfg.a; do
	[ -f "$f" ] || { echo "FAIL: $f not built (run make)"; exit 1; }
done
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: BPF unavailable: needs root (uprobes and BPF programs)"
	exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

gcc -O2 -g -std=gnu11 -Wall -Wextra -Wshadow -Wmissing-prototypes -Werror -D_GNU_SOURCE \
	-I. -Ibuild/bpf tests/bpf_branch_test.c build/user/count/probes.o build/user/util/log.o \
	build/user/util/progress.o build/user/util/clock.o build/libcfg.a -o "$tmp/bpf_branch_test" -lbpf -lelf -ldw -lcapstone -lpthread ||
	{ echo "FAIL: cannot build tests/bpf_branch_test.c"; exit 1; }
"$tmp/bpf_branch_test"
