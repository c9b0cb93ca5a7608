#!/usr/bin/env bash
# `edgeprof -p PID` at arbitrary moments of a process that spends nearly all its time in
# longjmp (tests/targets/longjmp_spin.c: THREADS threads leaving three calls by longjmp or
# siglongjmp, or returning, round after round): the attach and the detach often hold a
# thread inside the C library's longjmp, past the watch at its entry and before it lands
# (lua5.4's coroutines and pcall errors did so in 2-3 of 10 windows: its skipped frames were
# left twice, or entered and never left). For gcc -O2 and clang -O2, 1 and 3 threads, with
# in-process counters (--probes auto) and with uprobes only, WINDOWS windows (default 2) of
# 0.2 s each on one process, with --placement naive (a counter on every block: a virtual edge
# too many or too few cannot be absorbed by an unmeasured edge, as it can with chords); every
# window's profile must conserve flow in every function (0 violations: the independent check
# of the virtual edges that the attach and the detach add)
# with 0 unwinding failures, and its counts must fit the program's structure (each round
# calls round_of and tick once and ends in exactly one of returned, landed, sig_landed, so
# those counts differ by at most the rounds cut by the window's two ends, one per thread
# each; depth1..depth3 are entered once a round); after each detach the code bytes equal the
# file's; at the end the program's own check of every round says 0 errors, as natively.
# Prints how many holds caught a thread inside a longjmp. Needs root and BPF (CI=true turns a
# skip into a failure). Exit 0 pass, 77 skip, else fail.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/support/bpf-checks.sh
source tests/support/bpf-checks.sh
# shellcheck source=tests/support/checks.sh
source tests/support/checks.sh
# shellcheck source=tests/support/attach-windows.sh
source tests/support/attach-windows.sh
EDGEPROF=${EDGEPROF:-build/edgeprof}
WINDOWS=${WINDOWS:-2}

[ -x "$EDGEPROF" ] || { echo "FAIL: $EDGEPROF not built (run make)"; exit 1; }
EDGEPROF=$(realpath "$EDGEPROF")
[ "$(id -u)" = 0 ] || { echo "SKIP: edgeprof record needs root"; exit 77; }
for c in gcc clang python3 bc timeout; do
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
	python3 - "$@" <<'PYEOF_cw'
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
ends = c("returned") + c("landed") + c("sig_landed")
# A window's two ends each cut at most one round a thread.
for name, n in [("tick", c("tick")), ("returned+landed+sig_landed", ends),
                ("depth1", c("depth1"))]:
    if abs(n - rounds) > 2 * threads:
        errs.append(f"{name} {n} against round_of {rounds}")
for a, b in [("depth1", "depth2"), ("depth2", "depth3")]:
    if abs(c(a) - c(b)) > 2 * threads:
        errs.append(f"{a} {c(a)} against {b} {c(b)}")
if rounds < 10:
    errs.append(f"only {rounds} rounds in the window")
if errs:
    sys.exit("; ".join(errs))
print(f"{rounds} rounds, {p['run']['virtual_edges']} virtual edges, stopped "
      f"{p['run']['held_attach_s'] * 1e3:.1f}/{p['run']['held_detach_s'] * 1e3:.1f} ms")
PYEOF_cw
}

caught=0
holds=0
# window_hook W: counts the thread holds of the window and those that caught a thread inside
# a longjmp (run on until it landed).
window_hook() {
	holds=$((holds + 2 * threads))
	caught=$((caught + $(grep -c 'held inside a longjmp: landed' "$tmp/err")))
}
for b in gcc:-O2 clang:-O2; do
	cc=${b%%:*} opt=${b#*:}
	bin="$tmp/longjmp_spin_${cc}${opt}"
	if ! "$cc" "$opt" -g -pthread -o "$bin" tests/targets/longjmp_spin.c; then
		bad "cannot build longjmp_spin with $cc $opt"
		continue
	fi
	native=$( (sleep 0.2; echo) | "$bin" 3)
	for probes in auto uprobe; do
		for threads in 1 3; do
			name="$cc $opt, $probes, $threads threads"
			t0=$(date +%s.%N)
			attach_windows "$bin" "$threads" "$probes" "$native"
			if [ -z "$WHY" ]; then
				ok "$name: $WINDOWS windows conserve flow and fit the program (last: $MSG; $(echo "$(date +%s.%N) - $t0" | bc | cut -c1-5) s)"
			else
				bad "$name: $WHY"
			fi
		done
	done
done
echo "attach-longjmp: $caught of $holds thread holds (attach and detach) caught a thread inside a longjmp (run on until it landed)"
checks_summary attach-longjmp
