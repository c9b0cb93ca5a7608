#!/bin/bash
# Another tool's uprobes on the same file: a uprobe not bound to a process (perf probe -x,
# a tracefs uprobe event, bpftrace, an older edgeprof) is an int3 in the text of every process
# that maps the file, so an `edgeprof run` of that binary (the in-process counters, the
# default) finds bytes at some patch sites that are not the file's. Seen while two engineers
# profiled Debian's python3.11 (before edgeprof's own uprobes were bound to the profiled
# process): edgeprof stopped with "the bytes at 0x44d6f5 are not the expected ones" and the
# program did not run at all (exit 1). Such sites must be counted without patching them: the
# program must run as natively, its profile exact (checked against its own counters). The
# other tool here: file-wide tracefs uprobe events on every instruction of step(), removed
# at the end.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/support/checks.sh
source tests/support/checks.sh
# shellcheck source=tests/support/bpf-checks.sh
source tests/support/bpf-checks.sh

EDGEPROF=${EDGEPROF:-build/edgeprof}
tmp=$(mktemp -d)
trap 'kill_started; rm -rf "${tmp:?}"' EXIT

cat >"$tmp/fu.c" <<'CSRC_FU'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static unsigned long a, b, c;

static __attribute__((noinline)) void step(int i)
{
	if (i % 3 == 0)
		a++;
	else if (i % 5 == 1)
		b++;
	else
		c++;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3000;

	for (int i = 0; i < n; i++)
		step(i);
	printf("%lu %lu %lu\n", a, b, c);
	fflush(stdout);
	return 0;
}
CSRC_FU
gcc -O2 -g -o "$tmp/fu" "$tmp/fu.c" || { bad "cannot build the test program"; checks_summary foreign-uprobes; exit 1; }
"$tmp/fu" 3000 >"$tmp/native.out"

# The other tool: a tracefs uprobe event (as `perf probe -x` makes) on each instruction of
# step(), enabled, so every process mapping the file gets its int3s.
TRACEFS=/sys/kernel/tracing
[ -w "$TRACEFS/uprobe_events" ] || mount -t tracefs nodev "$TRACEFS" 2>/dev/null
if [ ! -w "$TRACEFS/uprobe_events" ]; then
	bad "no writable $TRACEFS/uprobe_events (tracefs with uprobe events)"
	checks_summary foreign-uprobes
	exit 1
fi
group=edgeprof_fu_$$
cleanup_events() {
	[ -d "$TRACEFS/events/$group" ] || return 0
	echo 0 >"$TRACEFS/events/$group/enable"
	grep -o "^p:$group/[a-z0-9_]*" "$TRACEFS/uprobe_events" 2>/dev/null | sed 's/^p:/-:/' |
		while read -r ev; do echo "$ev" >>"$TRACEFS/uprobe_events"; done
}
trap 'cleanup_events; kill_started; rm -rf "${tmp:?}"' EXIT
# File offsets of step()'s instructions: objdump -F gives the function's file offset.
offs=()
fo='' base=''
while read -r line; do
	if [[ $line =~ ^([0-9a-f]{16})\ \<step\>\ \(File\ Offset:\ 0x([0-9a-f]+)\):$ ]]; then
		base=${BASH_REMATCH[1]}
		fo=${BASH_REMATCH[2]}
	elif [ -n "$fo" ] && [ -z "$line" ]; then
		break
	elif [ -n "$fo" ] && [[ $line =~ ^([0-9a-f]+): ]]; then
		offs+=("$(printf '0x%x' $((16#${BASH_REMATCH[1]} - 16#$base + 16#$fo)))")
	fi
done < <(objdump -d -F --no-show-raw-insn "$tmp/fu")
if [ "${#offs[@]}" -lt 3 ]; then
	bad "cannot find step()'s instructions in the disassembly"
	checks_summary foreign-uprobes
	exit 1
fi
k=0
for off in "${offs[@]}"; do
	echo "p:$group/i$k $tmp/fu:$off" >>"$TRACEFS/uprobe_events" 2>/dev/null && k=$((k + 1))
done
[ "$k" != 0 ] && echo 1 >"$TRACEFS/events/$group/enable"
if [ "$k" = 0 ] || [ "$(cat "$TRACEFS/events/$group/enable" 2>/dev/null)" != 1 ]; then
	bad "cannot enable tracefs uprobe events on step() ($k of ${#offs[@]} registered)"
	checks_summary foreign-uprobes
	exit 1
fi
echo "($k tracefs uprobes on step(), file-wide)"

# edgeprof while those uprobes are in the file's text: the default mechanism.
rc=0
"$EDGEPROF" -v run -o "$tmp/b.data" -- "$tmp/fu" 3000 >"$tmp/b.out" 2>"$tmp/b.err" || rc=$?
if [ "$rc" = 0 ] && cmp -s "$tmp/b.out" "$tmp/native.out"; then
	ok "the program ran as natively under edgeprof (exit 0, same output)"
else
	bad "second session: exit $rc, output '$(head -c 100 "$tmp/b.out")': $(grep -m 2 -E 'error|expected' "$tmp/b.err")"
fi
if grep -q 'differ from the file' "$tmp/b.err"; then
	ok "the sites holding the other tool's breakpoints were not patched"
else
	bad "no site was seen holding another tool's breakpoint (is a site of the plan on step?)"
fi
if [ "$rc" = 0 ]; then
	python3 - "$tmp/b.data" "$tmp/b.out" <<'PY_FU' && ok "step's count equals the program's, no violation" || bad "see above"
import json, sys
p = json.load(open(sys.argv[1]))
a, b, c = (int(x) for x in open(sys.argv[2]).read().split())
f = next(f for f in p["functions"] if f["name"] == "step")
if f["count"] != a + b + c or f["violations"]:
    sys.exit(f"FAIL: step counted {f['count']} (violations {f['violations']}), the program {a + b + c}")
PY_FU
fi
cleanup_events
if grep -q "^p:$group/" "$TRACEFS/uprobe_events"; then
	bad "the tracefs uprobe events of this test are still registered"
else
	ok "the other tool's uprobes removed"
fi
checks_summary foreign-uprobes
