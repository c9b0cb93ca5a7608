#!/usr/bin/env bash
# Fork children killed while the tracer handles their first stop (issue 14: Python's test_os
# test_waitstatus_to_exitcode_kill, os.spawnv(P_NOWAIT) then os.kill(pid, SIGKILL)).
# tests/programs/racy/kill_child.c forks N children from main -> spawn and SIGKILLs each as soon as
# /proc says it is in a tracing stop: the SIGKILL then mostly lands while edgeprof attaches
# the child's probes and unwinds its frames at its first stop. Such a child goes straight to
# its PTRACE_EVENT_EXIT stop, which the tracer's PTRACE_CONT for the first stop resumed
# unseen (its frames were entered, never left: counts silently wrong, spawn's count short of
# N), or the unwinding failed half-way (libdwfl then aborted edgeprof at the next unwinding
# of that process: "pid_set_initial_registers: Assertion `pid_arg->tid_attached == 0'").
# Under `edgeprof -vv run` (--probes auto and uprobe, twice each) it requires: the native
# output and exit status, no abort, a profile with no flow-conservation violation and
# nothing inexact, main counted once and spawn exactly N times (the parent calls it N times;
# the children only resume in it). Needs root (skips otherwise). Exit 0 pass, 77 skip.
set -u
cd "$(dirname "$0")/.." || exit 1
EDGEPROF=${EDGEPROF:-build/edgeprof}

[ -x "$EDGEPROF" ] || { echo "FAIL: $EDGEPROF not built (run make)"; exit 1; }
EDGEPROF=$(realpath "$EDGEPROF")
[ "$(id -u)" = 0 ] || { echo "SKIP: edgeprof run needs root"; exit 77; }
for c in gcc python3; do
	command -v "$c" >/dev/null || { echo "SKIP: $c not found"; exit 77; }
done

tmp=$(mktemp -d /tmp/ep-killchild.XXXXXX)
trap 'rm -rf "${tmp:?}"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

N=20
gcc -O2 -g -o "$tmp/kill_child" tests/programs/racy/kill_child.c || { echo "FAIL: cannot build"; exit 1; }
native=$("$tmp/kill_child" $N) || { echo "FAIL: kill_child fails natively"; exit 1; }

raced=0
for probes in auto uprobe; do
	for round in 1 2; do
		n="$probes.$round"
		out=$("$EDGEPROF" -vv run --probes "$probes" -o "$tmp/$n.data" "$tmp/kill_child" $N \
			2>"$tmp/$n.err")
		rc=$?
		[ $rc -eq 0 ] || fail "$n: edgeprof exited $rc: $(grep -v '^edgeprof: debug' "$tmp/$n.err" | tail -2)"
		[ "$out" = "$native" ] || fail "$n: output '$out', native '$native'"
		[ $rc -eq 0 ] || continue
		raced=$((raced + $(grep -c 'ended in its first stop\|killed in its first stop' "$tmp/$n.err")))
		"$EDGEPROF" report --json "$tmp/$n.data" >"$tmp/$n.json" 2>"$tmp/$n.rerr" ||
			{ fail "$n: report: $(cat "$tmp/$n.rerr")"; continue; }
		msg=$(python3 - "$tmp/$n.json" $N <<'PYEOF_kc41'
import json, sys
d = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
bad = []
if d.get("violations"):
    bad.append("violations: %s" % d["violations"])
if d.get("inexact"):
    bad.append("inexact: %s" % d["inexact"])
count = {f["name"]: f.get("count") for f in d["functions"]}
if count.get("main") != 1:
    bad.append("main counted %s times, not 1" % count.get("main"))
if count.get("spawn") != n:
    bad.append("spawn counted %s times, not %d" % (count.get("spawn"), n))
print("; ".join(bad))
PYEOF_kc41
)
		[ -z "$msg" ] || fail "$n: $msg"
	done
done
echo "    kill-child: $raced children killed in their first stop (4 runs of $N)"
[ $fails -eq 0 ] || exit 1
echo "    kill-child: ok"
