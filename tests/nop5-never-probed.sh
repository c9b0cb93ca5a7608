#!/bin/bash
# No uprobe on a 5-byte nop: kernels from 6.18 optimise such a uprobe into a call to a
# trampoline page of the probed process; the call's return address lands in the red zone, and
# a child forked by another process running the same file executes the call without the page
# (a crash at a page-aligned address, seen on Debian's bash). A program whose blocks each hold
# a 5-byte nop (the cheapest uprobe class, so placement took it) is profiled with uprobes only:
# no site may be on a nopl 0x0(%rax,%rax,1), and the counts must stay exact (checked against
# the program's own counters).
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/support/checks.sh
source tests/support/checks.sh
# shellcheck source=tests/support/bpf-checks.sh
source tests/support/bpf-checks.sh

EDGEPROF=${EDGEPROF:-build/edgeprof}
tmp=$(mktemp -d)
trap 'rm -rf "${tmp:?}"' EXIT

cat >"$tmp/nop5.c" <<'CSRC_NOP5'
#include <stdio.h>
#include <stdlib.h>

#define NOP5 asm volatile(".byte 0x0f, 0x1f, 0x44, 0x00, 0x00" ::: "memory")

static unsigned long a, b, c;

static __attribute__((noinline)) void step(int i)
{
	if (i % 3 == 0) {
		NOP5;
		a++;
	} else if (i % 3 == 1) {
		NOP5;
		b++;
	} else {
		NOP5;
		c++;
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3000;

	for (int i = 0; i < n; i++)
		step(i);
	printf("%lu %lu %lu\n", a, b, c);
	return 0;
}
CSRC_NOP5
gcc -O2 -g -o "$tmp/nop5" "$tmp/nop5.c" || { bad "cannot build the test program"; checks_summary nop5-never-probed; exit 1; }

if ! "$EDGEPROF" -q run --probes uprobe -o "$tmp/p.data" -- "$tmp/nop5" 3000 >"$tmp/out" 2>"$tmp/err"; then
	skip_if_no_bpf "$tmp/err"
	bad "edgeprof run failed: $(head -c 300 "$tmp/err")"
	checks_summary nop5-never-probed
	exit 1
fi
python3 - "$tmp/p.data" "$tmp/nop5" "$tmp/out" <<'PY_NOP5' && ok "no site on a 5-byte nop, step's counts equal the program's" || bad "see above"
import json, subprocess, sys
prof, binary, out = sys.argv[1:4]
p = json.load(open(prof))
dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", binary], capture_output=True,
                     text=True, check=True).stdout
nops = set()
for line in dis.splitlines():
    if "nopl   0x0(%rax,%rax,1)" in line:
        nops.add(int(line.split(":")[0], 16))
step_nops = [a for a in nops]
on_nop = [s["addr"] for s in p["placement"]["sites"] if int(s["addr"], 16) in nops]
if not nops:
    sys.exit("FAIL: the program has no 5-byte nop (the test needs some)")
if on_nop:
    sys.exit(f"FAIL: uprobes on 5-byte nops at {on_nop}")
a, b, c = (int(x) for x in open(out).read().split())
f = next(f for f in p["functions"] if f["name"] == "step")
if f["count"] != a + b + c or f["violations"]:
    sys.exit(f"FAIL: step counted {f['count']} (violations {f['violations']}), the program {a + b + c}")
PY_NOP5
checks_summary nop5-never-probed
