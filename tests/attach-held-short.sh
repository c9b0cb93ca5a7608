#!/usr/bin/env bash
# `edgeprof -p PID` with in-process counters when a held thread's resume point lies inside a
# short window (tests/targets/held_short.c: a holder thread keeps the address of the jmp of
# sw_pick's 4-byte entry block, mov; jmp, in a stack word; tests/attach-longjmp.sh met the
# same shape by chance, a thread held at the je of gcc -O2's round_of, test; je, about once in
# 60 windows). The check gives the site the mov alone (2 bytes, to a springboard); the install
# must generate exactly that window: it used to recompute the window with no thread held (4
# bytes), refuse the difference and stop the attach ("cannot generate the counter"). For gcc
# -O2 and clang -O2, 1 and 3 worker threads, WINDOWS windows (default 3) on one process: every
# window attaches, patches sw_pick's entry with the 2-byte window (the debug log says so: a test
# that never met the shape would assert nothing), conserves flow in every function with --placement
# naive (0 violations, 0 unwinding failures), counts sw_pick as often as its only caller
# round_of (up to the calls cut by the window's two ends, one per thread each), and leaves the
# code bytes equal to the file's after the detach; at the end the program's own check of every
# round says 0 errors. Needs root and BPF (CI=true turns a skip into a failure). Exit 0 pass,
# 77 skip, else fail.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/support/bpf-checks.sh
source tests/support/bpf-checks.sh
# shellcheck source=tests/support/checks.sh
source tests/support/checks.sh
# shellcheck source=tests/support/attach-windows.sh
source tests/support/attach-windows.sh
EDGEPROF=${EDGEPROF:-build/edgeprof}
WINDOWS=${WINDOWS:-3}

[ -x "$EDGEPROF" ] || { echo "FAIL: $EDGEPROF not built (run make)"; exit 1; }
EDGEPROF=$(realpath "$EDGEPROF")
[ "$(id -u)" = 0 ] || { echo "SKIP: edgeprof record needs root"; exit 77; }
for c in gcc clang python3 nm timeout; do
	command -v "$c" >/dev/null || { echo "SKIP: $c not found"; exit 77; }
done

tmp=$(mktemp -d)
cleanup() {
	exec 7>&- 2>/dev/null
	kill_started
	rm -rf "${tmp:?}"
}
trap cleanup EXIT

# check_window PROFILE THREADS: conservation and the program's structure (see the header).
check_window() {
	python3 - "$@" <<'PYEOF_hs_cw'
import json, sys
p = json.load(open(sys.argv[1]))
threads = int(sys.argv[2])
funcs = {f["name"]: f for f in p["functions"]}
c = lambda n: funcs.get(n, {}).get("count") or 0
errs = []
if p["violations"]:
    bad = [(f["name"], f["violations"]) for f in p["functions"] if f["violations"]]
    errs.append(f"{p['violations']} violations in {bad}")
if p["run"]["unwind_failures"]:
    errs.append(f"{p['run']['unwind_failures']} unwind failures")
rounds = c("round_of")
if abs(c("sw_pick") - rounds) > 2 * threads:
    errs.append(f"sw_pick {c('sw_pick')} against round_of {rounds}")
if rounds < 10:
    errs.append(f"only {rounds} rounds in the window")
if errs:
    sys.exit("; ".join(errs))
print(f"{rounds} rounds, {p['run']['virtual_edges']} virtual edges")
PYEOF_hs_cw
}

# window_hook W: the install patched sw_pick's entry ($pick) with the 2-byte window.
window_hook() {
	grep -q "site $pick: a short window of 2 bytes" "$tmp/err" ||
		WHY="window $1: sw_pick's entry ($pick) was not patched with the 2-byte window the held thread leaves"
}

for b in gcc:-O2 clang:-O2; do
	cc=${b%%:*} opt=${b#*:}
	bin="$tmp/held_short_${cc}${opt}"
	if ! "$cc" "$opt" -g -pthread -o "$bin" tests/targets/held_short.c; then
		bad "cannot build held_short with $cc $opt"
		continue
	fi
	native=$(echo | "$bin" 2)
	pick=$(nm "$bin" | awk '$3 == "sw_pick" { print $1 }')
	pick=$(printf '%#x' "0x$pick")
	for threads in 1 3; do
		name="$cc $opt, $threads threads"
		attach_windows "$bin" "$threads" auto "$native"
		if [ -z "$WHY" ]; then
			ok "$name: $WINDOWS windows patch sw_pick's entry with the 2-byte window and conserve flow (last: $MSG)"
		else
			bad "$name: $WHY"
		fi
	done
done
checks_summary attach-held-short
