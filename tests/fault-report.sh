#!/bin/bash
# A fault the kernel raises in the profiled program (SIGSEGV on a bad load) is reported by
# `edgeprof run` with its pc and the mapping that holds the pc (the program's file, a
# trampoline of the in-process counters, the uprobe XOL page), so that a crash under edgeprof
# can be told from the program's own (python3.11's intermittent SIGSEGV in its test suite had
# no core and no pc). A signal the program sends itself (raise) is not a fault: no report.
# The program's status passes through either way.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/support/checks.sh
source tests/support/checks.sh
# shellcheck source=tests/support/bpf-checks.sh
source tests/support/bpf-checks.sh

EDGEPROF=${EDGEPROF:-build/edgeprof}
tmp=$(mktemp -d)
trap 'rm -rf "${tmp:?}"' EXIT

cat >"$tmp/f.c" <<'CSRC_FAULT'
#include <signal.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	volatile int *p = (int *)(long)(argc - 2);

	printf("start\n");
	fflush(stdout);
	if (argc > 1 && strcmp(argv[1], "raise") == 0)
		raise(SIGSEGV);
	return *p;
}
CSRC_FAULT
gcc -O0 -g -o "$tmp/f" "$tmp/f.c" || { bad "cannot build the test program"; checks_summary fault-report; exit 1; }

for probes in auto uprobe; do
	rc=0
	"$EDGEPROF" run --probes "$probes" -o "$tmp/p.data" -- "$tmp/f" x >"$tmp/out" 2>"$tmp/err" || rc=$?
	skip_if_no_bpf "$tmp/err"
	line=$(grep 'Segmentation fault (code 1) at pc 0x' "$tmp/err")
	if [ "$rc" = 139 ] && [ -n "$line" ] && echo "$line" | grep -q 'address (nil)' &&
		echo "$line" | grep -qE 'pc in [0-9a-f]+-[0-9a-f]+ '; then
		ok "--probes $probes: the fault is reported with its pc and mapping, status 139"
	else
		bad "--probes $probes: status $rc, report '$line'"
	fi
	rc=0
	"$EDGEPROF" run --probes "$probes" -o "$tmp/p.data" -- "$tmp/f" raise >"$tmp/out" 2>"$tmp/err" || rc=$?
	if [ "$rc" = 139 ] && ! grep -q 'at pc 0x' "$tmp/err"; then
		ok "--probes $probes: a raised SIGSEGV is no fault report, status 139"
	else
		bad "--probes $probes: raise: status $rc, $(grep 'at pc' "$tmp/err")"
	fi
done
checks_summary fault-report
