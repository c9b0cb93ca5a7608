#!/usr/bin/env bash
# `edgeprof -p PID` on a real program: starts lua5.4 (built from Debian sources by
# scripts/corpus.sh) on scripts/workloads/attach-long.lua (recursion, tables, strings,
# coroutines and pcall errors, i.e. longjmps, until killed), attaches to it for SECONDS
# (default 3) after it has run for a second, and checks that every function of the profile
# conserves flow (0 violations, 0 unwind failures) and that lua5.4 is still running and making
# progress afterwards. Prints the window's figures: probe hits, virtual edges, and how long the
# process was stopped at the attach and at the detach. Ends only the lua5.4 it started.
#   usage: scripts/attach-corpus.sh [SECONDS]
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
EDGEPROF=${EDGEPROF:-$ROOT/build/edgeprof}
LUA=$ROOT/corpus/bin/lua5.4
SECONDS_ATTACHED=${1:-3}

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

"$LUA" "$ROOT/scripts/workloads/attach-long.lua" 100 >"$tmp/lua.out" 2>&1 </dev/null &
lua_pid=$!
sleep 1
"$EDGEPROF" -p "$lua_pid" -d "$SECONDS_ATTACHED" -o "$tmp/lua.data"
before=$(wc -l <"$tmp/lua.out")
sleep 1
after=$(wc -l <"$tmp/lua.out")
kill -0 "$lua_pid" 2>/dev/null || { echo "FAIL: lua5.4 is not running after the detach"; exit 1; }
[ "$after" -gt "$before" ] || { echo "FAIL: lua5.4 made no progress after the detach"; exit 1; }
python3 - "$tmp/lua.data" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
r = p["run"]
funcs = p["functions"]
bad = [f["name"] for f in funcs if f["violations"]]
print(f"lua5.4 attached {r['seconds']:.2f} s: {len(funcs)} functions, "
      f"{sum(1 for f in funcs if f['count'])} entered, {p['probes']['hits']} probe hits, "
      f"{r['virtual_edges']} virtual edges, {p['violations']} violations, "
      f"{r['unwind_failures']} unwind failures; stopped {r['held_attach_s'] * 1e3:.2f} ms to "
      f"attach, {r['held_detach_s'] * 1e3:.2f} ms to detach")
if bad or r["unwind_failures"]:
    sys.exit(f"FAIL: conservation fails in {bad[:10]}")
print("ok: every function conserves flow; lua5.4 ran on after the detach")
PY
