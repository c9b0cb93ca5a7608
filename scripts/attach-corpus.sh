#!/usr/bin/env bash
# `edgeprof -p PID` on a real program: starts lua5.4 (built from Debian sources by
# scripts/corpus.sh) on scripts/workloads/attach-long.lua (recursion, tables, strings,
# coroutines and pcall errors, i.e. longjmps) for TOTAL rounds (default 40000, several seconds),
# attaches to it for SECONDS (default 3) after it has run for a second, with the default
# mechanism (in-process counters where proven safe; PROBES=uprobe for uprobes only), and checks
# that every function of the profile conserves flow (0 violations, 0 unwind failures), that
# right after the detach lua5.4's executable pages hold the file's bytes again, and that lua5.4
# then runs to the end with the output of a native run. Prints the window's figures: sites
# counted in process and by uprobes, probe hits, virtual edges, and how long the process was
# held at the attach and at the detach. Ends only the lua5.4 it started.
#   usage: scripts/attach-corpus.sh [SECONDS [TOTAL]]
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
EDGEPROF=${EDGEPROF:-$ROOT/build/edgeprof}
LUA=${LUA:-$ROOT/corpus/bin/lua5.4}
# shellcheck source=tests/support/checks.sh
source "$ROOT/tests/support/checks.sh"
SECONDS_ATTACHED=${1:-3}
TOTAL=${2:-40000}
PROBES=${PROBES:-auto}

[ -x "$LUA" ] || { echo "attach-corpus: $LUA missing (run scripts/corpus.sh)" >&2; exit 1; }
[ -x "$EDGEPROF" ] || { echo "attach-corpus: $EDGEPROF missing (run make)" >&2; exit 1; }
tmp=$(mktemp -d)
lua_pid=
cleanup() {
	# (waited for, so that bash does not report the kill of its own child as a failure)
	[ -z "$lua_pid" ] || { kill -KILL "$lua_pid" && wait "$lua_pid"; } 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

"$LUA" "$ROOT/scripts/workloads/attach-long.lua" 1000 "$TOTAL" >"$tmp/native.out" 2>&1 </dev/null
"$LUA" "$ROOT/scripts/workloads/attach-long.lua" 1000 "$TOTAL" >"$tmp/lua.out" 2>&1 </dev/null &
lua_pid=$!
sleep 1
"$EDGEPROF" -p "$lua_pid" -d "$SECONDS_ATTACHED" --probes "$PROBES" -o "$tmp/lua.data"
if kill -0 "$lua_pid" 2>/dev/null; then
	if ! err=$(text_intact "$lua_pid" "$LUA" 2>&1); then
		echo "FAIL: lua5.4's code differs from the file after the detach: $err"
		exit 1
	fi
	left=$(grep -E '/dev/zero|SYSV' "/proc/$lua_pid/maps" | cut -d' ' -f1 | tr '\n' ' ' || true)
	if [ -n "$left" ]; then
		echo "FAIL: shared anonymous mappings left in lua5.4 after the detach: $left"
		exit 1
	fi
	echo "ok: lua5.4's code equals the file's after the detach, no region of edgeprof's left"
else
	echo "attach-corpus: lua5.4 ended within the window (raise TOTAL): its code was not checked"
fi
wait "$lua_pid" || { echo "FAIL: lua5.4 exited $? after the detach"; exit 1; }
lua_pid=
cmp -s "$tmp/native.out" "$tmp/lua.out" || { echo "FAIL: lua5.4's output differs from a native run's"; exit 1; }
echo "ok: lua5.4 ran on to the end with a native run's output ($(tail -n 1 "$tmp/lua.out"))"
python3 - "$tmp/lua.data" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
r = p["run"]
funcs = p["functions"]
classes = [st["class"] for st in p["placement"]["sites"]]
inproc = sum(c.startswith("patch") for c in classes)
bad = [f["name"] for f in funcs if f["violations"]]
print(f"lua5.4 attached {r['seconds']:.2f} s: {inproc} sites counted in process, "
      f"{len(classes) - inproc} by uprobes; {len(funcs)} functions, "
      f"{sum(1 for f in funcs if f['count'])} entered, {p['probes']['hits']} probe hits, "
      f"{r['virtual_edges']} virtual edges, {p['violations']} violations, "
      f"{r['unwind_failures']} unwind failures; stopped {r['held_attach_s'] * 1e3:.2f} ms to "
      f"attach, {r['held_detach_s'] * 1e3:.2f} ms to detach")
if bad or r["unwind_failures"]:
    sys.exit(f"FAIL: conservation fails in {bad[:10]}")
print("ok: every function conserves flow; lua5.4 ran on after the detach")
PY
