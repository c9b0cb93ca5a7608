#!/bin/bash
# Another session's uprobes on the same file: a uprobe is an int3 in the text of every
# process that maps the file, so a second `edgeprof run` of the same binary (the in-process
# counters, the default) finds bytes at some patch sites that are not the file's. Seen while
# two engineers profiled Debian's python3.11: edgeprof stopped with "the bytes at 0x44d6f5
# are not the expected ones" and the program did not run at all (exit 1). Such sites must be
# counted without patching them: the second run's program must run as natively, its profile
# exact (checked against the program's own counters), and the first session undisturbed.
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
	if (argc > 2) /* stay alive, uprobes installed, for the other session */
		sleep((unsigned)atoi(argv[2]));
	return 0;
}
CSRC_FU
gcc -O2 -g -o "$tmp/fu" "$tmp/fu.c" || { bad "cannot build the test program"; checks_summary foreign-uprobes; exit 1; }
"$tmp/fu" 3000 >"$tmp/native.out"
"$tmp/fu" 10 >"$tmp/native10.out"

# Session A: uprobes only, the program sleeps after its loop with them installed.
"$EDGEPROF" -q run --probes uprobe -o "$tmp/a.data" -- "$tmp/fu" 10 15 >"$tmp/a.out" 2>"$tmp/a.err" &
started+=($!)
apid=$!
for _ in $(seq 1 300); do
	[ -s "$tmp/a.out" ] && break
	kill -0 "$apid" 2>/dev/null || break
	sleep 0.1
done
if [ ! -s "$tmp/a.out" ]; then
	wait "$apid"
	skip_if_no_bpf "$tmp/a.err"
	bad "the first session did not start: $(head -c 300 "$tmp/a.err")"
	checks_summary foreign-uprobes
	exit 1
fi

# Session B, while A's uprobes are in the file's text: the default mechanism.
rc=0
"$EDGEPROF" -v run -o "$tmp/b.data" -- "$tmp/fu" 3000 >"$tmp/b.out" 2>"$tmp/b.err" || rc=$?
if [ "$rc" = 0 ] && cmp -s "$tmp/b.out" "$tmp/native.out"; then
	ok "the second session's program ran as natively (exit 0, same output)"
else
	bad "second session: exit $rc, output '$(head -c 100 "$tmp/b.out")': $(grep -m 2 -E 'error|expected' "$tmp/b.err")"
fi
if grep -q 'differ from the file' "$tmp/b.err"; then
	ok "the sites holding the other session's breakpoints were not patched"
else
	bad "no site was seen holding another session's breakpoint (is the first session's plan on step?)"
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
wait "$apid"
arc=$?
if [ "$arc" = 0 ] && cmp -s "$tmp/a.out" "$tmp/native10.out"; then
	ok "the first session's program ended normally"
else
	bad "first session: exit $arc, output '$(head -c 100 "$tmp/a.out")'"
fi
checks_summary foreign-uprobes
