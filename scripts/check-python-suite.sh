#!/usr/bin/env bash
# Non-interference check on a test suite nobody here wrote (issue 14, acceptance point 2):
# Debian's python3.11 (stripped; package libpython3.11-testsuite) runs modules of its own
# regression tests natively, then under `edgeprof -v run` with the default mechanism
# (in-process counters where proven safe, uprobes elsewhere). It requires every test's result
# (junit XML of `python3.11 -m test --junit-xml`) and the "== Tests result" line to be equal
# in both runs, and the profile to have 0 flow-conservation violations (`edgeprof report
# --json`); it counts the sites patched, refused by the patcher ("refuse N sites" in the -v
# log) and left to uprobes (site classes in the profile). Prints a table and writes
# bench/results-python-suite.md (times native vs under edgeprof). Slow (minutes): run by
# `make check-python`, not by `make test`. Exit 0 pass, 1 differences, 77 skip (not root,
# python3.11 or its test suite missing).
#   usage: scripts/check-python-suite.sh [--probes auto|uprobe] [MODULE...]
#   env: PY (default /usr/bin/python3.11), OUT (default build/python-suite),
#        RESULTS (default bench/results-python-suite.md; "-" for none), SUITE_TIMEOUT (s)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
EDGEPROF=$ROOT/build/edgeprof
PY=${PY:-/usr/bin/python3.11}
OUT=${OUT:-$ROOT/build/python-suite}
RESULTS=${RESULTS:-$ROOT/bench/results-python-suite.md}
TIMEOUT=${SUITE_TIMEOUT:-7200}
PROBES=auto

# Modules that exercise threads, signals, fork/exec, exceptions, sys.settrace, generators,
# unicode, json, re, math, struct, itertools, collections, io and time, and pass natively.
MODULES=(test_threading test_signal test_subprocess test_exceptions test_os
	test_sys_settrace test_generators test_unicode test_json test_re test_math test_struct
	test_itertools test_collections test_time test_sys test_fork1 test_contextlib test_io)

if [ "${1:-}" = --probes ]; then
	PROBES=${2:?--probes needs auto or uprobe}
	shift 2
fi
[ $# -gt 0 ] && MODULES=("$@")

if [ "$(id -u)" -ne 0 ]; then
	echo "check-python-suite: skipped: edgeprof run needs root" >&2
	exit 77
fi
if [ ! -x "$PY" ] || ! "$PY" -c 'import test.libregrtest, test.test_threading' 2>/dev/null; then
	echo "check-python-suite: skipped: $PY with its test suite is needed" \
		"(apt-get install python3.11 libpython3.11-testsuite)" >&2
	exit 77
fi
if [ ! -x "$EDGEPROF" ]; then
	echo "check-python-suite: $EDGEPROF is missing: run make first" >&2
	exit 1
fi

mkdir -p "${OUT:?}"
# The tests run in a scratch directory of their own (they create files in the cwd).
CWD=$OUT/cwd
mkdir -p "$CWD"

now() { date +%s.%N; }

# Uprobes on PY's file (anyone's: uprobes trap every process of the file) slow the native run
# down too; say how many were installed when it started.
foreign_uprobes() {
	command -v bpftool >/dev/null 2>&1 || {
		echo "?"
		return
	}
	bpftool link show 2>/dev/null | awk -v p="$(readlink -f "$PY")" \
		'$1 == "uprobe.multi" && $3 == p { n += $5 } END { print n + 0 }'
}

# run_suite TAG CMD...: runs the modules with CMD prefixed; sets RC and SECS.
run_suite() {
	local tag=$1 t0 t1
	shift
	rm -f "$OUT/$tag.xml" "$OUT/$tag.log" "$OUT/$tag.err"
	t0=$(now)
	RC=0
	(cd "$CWD" && timeout --kill-after=30 "$TIMEOUT" "$@" "$PY" -m test -v \
		--junit-xml "$OUT/$tag.xml" "${MODULES[@]}" </dev/null >"$OUT/$tag.log" \
		2>"$OUT/$tag.err") || RC=$?
	t1=$(now)
	SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
}

echo "check-python-suite: ${#MODULES[@]} modules of $PY's test suite, natively..."
FOREIGN=$(foreign_uprobes)
run_suite native
NRC=$RC NSECS=$SECS
echo "check-python-suite: native: exit $NRC in $NSECS s; under edgeprof run --probes $PROBES..."
rm -f "$OUT/ep.data" "$OUT/ep.json"
run_suite edgeprof "$EDGEPROF" -v run --probes "$PROBES" -o "$OUT/ep.data" --
ERC=$RC ESECS=$SECS
echo "check-python-suite: edgeprof: exit $ERC in $ESECS s"

FAIL=0
if [ "$ERC" -ne "$NRC" ]; then
	echo "FAIL: exit status $ERC under edgeprof, $NRC natively" \
		"(see $OUT/edgeprof.err, $OUT/edgeprof.log)"
	grep -m 3 -E 'Fatal Python error|Segmentation|Aborted|Killed' "$OUT/edgeprof.err" || true
	FAIL=1
fi
if ! "$EDGEPROF" report --json "$OUT/ep.data" >"$OUT/ep.json" 2>"$OUT/report.err"; then
	echo "FAIL: edgeprof report --json failed: $(head -n 3 "$OUT/report.err")"
	exit 1
fi
CRC=0
"$PY" "$ROOT/scripts/python-suite-compare.py" "$OUT/native.xml" "$OUT/native.log" \
	"$OUT/edgeprof.xml" "$OUT/edgeprof.log" "$OUT/ep.json" "$OUT/ep.data" "$OUT/edgeprof.err" \
	>"$OUT/compare.txt" || CRC=$?
if [ "$CRC" -eq 2 ]; then
	echo "FAIL: cannot compare the runs (see $OUT)"
	exit 1
fi
[ "$CRC" -ne 0 ] && FAIL=1
grep '^diff ' "$OUT/compare.txt" | head -n 20 || true

declare -A F
while read -r k v; do
	[ "$k" = diff ] || [ "$k" = missing ] || [ "$k" = module ] || F[$k]=$v
done <"$OUT/compare.txt"
RATIO=$(awk -v a="$NSECS" -v b="$ESECS" 'BEGIN { printf "%.2f", b / a }')
VERDICT=PASS
[ "$FAIL" -ne 0 ] && VERDICT=FAIL

table() {
	echo "| | native | edgeprof run --probes $PROBES |"
	echo "|---|---|---|"
	echo "| tests (junit cases) | ${F[tests]} | |"
	echo "| passed | ${F[native_pass]} | ${F[edgeprof_pass]} |"
	echo "| skipped | ${F[native_skipped]} | ${F[edgeprof_skipped]} |"
	echo "| failed | ${F[native_failure]} | ${F[edgeprof_failure]} |"
	echo "| errors | ${F[native_error]} | ${F[edgeprof_error]} |"
	echo "| Tests result | ${F[native_result]} | ${F[edgeprof_result]} |"
	echo "| exit status | $NRC | $ERC |"
	echo "| wall time (s) | $NSECS | $ESECS (${RATIO}x) |"
	echo "| uprobes of other sessions on the binary at the native run's start | $FOREIGN | |"
	echo "| tests whose result differs | | ${F[differences]} |"
	echo "| flow-conservation violations | | ${F[violations]} |"
	echo "| probe sites planned (final plan) | | ${F[sites]} |"
	echo "| sites patched (in process: patch / patch-flags) | | ${F[sites_patched]}" \
		"(${F[class_patch]} / ${F[class_patch_flags]}) |"
	echo "| sites refused by the patcher (placed again without them) | | ${F[sites_refused]} |"
	echo "| sites left to uprobes (stepped / emulated / nop5 / never) | | ${F[sites_uprobe]}" \
		"(${F[class_stepped]} / ${F[class_emulated]} / ${F[class_nop5]} / ${F[class_never]}) |"
	echo "| counter hits in process / by uprobes | | ${F[hits_patched]} / ${F[hits_uprobe]} |"
	echo
	echo "Per module (passed/skipped/failed+errors; one edgeprof run holds them all, so the"
	echo "violations and sites above are the whole run's):"
	echo
	echo "| module | native | edgeprof run | tests whose result differs |"
	echo "|---|---|---|---|"
	awk '$1 == "module" { printf "| %s | %s | %s | %s |\n", $2, $3, $4, $5 }' "$OUT/compare.txt"
}

echo
table
echo
echo "check-python-suite: $VERDICT"

if [ "$RESULTS" != - ]; then
	{
		echo "# python3.11's own regression tests under edgeprof run"
		echo
		echo "Generated by \`make check-python\` (scripts/check-python-suite.sh) on $(date -u '+%Y-%m-%d %H:%M UTC')," \
			"load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores."
		echo "Binary: $PY ($(dpkg-query -W -f '${Package} ${Version}' python3.11 2>/dev/null || echo '?'), stripped)," \
			"\`$PY -m test -v --junit-xml FILE MODULES\` run serially, natively and under" \
			"\`edgeprof -v run --probes $PROBES\`. Verdict: **$VERDICT**."
		echo
		echo "Modules (${#MODULES[@]}): ${MODULES[*]}"
		echo
		table
		if grep -q '^diff ' "$OUT/compare.txt"; then
			echo
			echo "Tests whose result differs:"
			echo
			grep '^diff ' "$OUT/compare.txt" | head -n 50 | sed 's/^diff /- /'
		fi
		if [ "$ERC" -ne "$NRC" ]; then
			echo
			echo "Under edgeprof the suite exited with status $ERC (natively $NRC):"
			echo
			grep -m 5 -E 'Fatal Python error|Segmentation|Aborted|Killed|^  File' \
				"$OUT/edgeprof.err" | sed 's/^/    /' || true
		fi
	} >"$RESULTS"
	echo "check-python-suite: wrote $RESULTS"
fi
exit "$FAIL"
