#!/bin/bash
# Count-exactness oracle for `edgeprof run`: builds every tests/programs/* with gcc -O0/-O2/-O3
# and clang -O2 (g++/clang++ for C++), all PIE; runs each natively, under
# `edgeprof run` (the default placement and mechanism: in-process counters where proven safe),
# `edgeprof run --probes uprobe` (uprobes only), `edgeprof run --placement naive` and
# `edgeprof run --probes uprobe --induction=always` (loops counted by induction), and under
# callgrind (tests/support/callgrind-run.sh), with the same arguments and stdin; requires the
# program's stdout and exit status under edgeprof (and callgrind) to be the native ones; then
# checks both profiles (`edgeprof report --json`) with build/tests/count_oracle, which allows
# no difference at all. One line per build, then a total; exit 1 on any difference or failure
# (also when `edgeprof run` does not exist yet: this is a real test, not a skip).
# Usage: tests/oracle-run.sh [NAME-FILTER]   (e.g. "switch" or "-clang-")
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=tests/support/callgrind-run.sh
source tests/support/callgrind-run.sh
# shellcheck source=tests/support/build-jobs.sh
source tests/support/build-jobs.sh

OUT=build/tests/oracle-run
ORACLE=build/tests/count_oracle
EDGEPROF=${EDGEPROF:-build/edgeprof} # overridable to test this script with a stand-in
INPUT=tests/programs/stdin.c # stdin of every run (the stdin program counts it)
JOBS=${JOBS:-2}               # builds in parallel, hence callgrind runs at a time
FILTER=${1:-}
RUN_TIMEOUT=120 # seconds per edgeprof run (status 124 when it hangs)
# Arguments per program (default none).
declare -A RUN_ARGS=([exit_deep]="5" [signal_death]="segv" [fork_child]="100"
	[exec_deep]="--fork /bin/true" [exec_kill]="8 /bin/sleep")
# Known inexact runs (build/variant -> what the run must warn): with block counters in process
# (naive), a signal handler's siglongjmp out of a fault in a displaced instruction leaves a
# trampoline pc in the signal frame, which the unwinder cannot go through (no CFI there): the
# frame the longjmp lands in is not found, and the run says so (issue 15's closing note).
declare -A KNOWN_INEXACT=([loop_fault-O2/naive]="unwinding failed"
	[loop_fault-O3/naive]="unwinding failed" [loop_fault-clang-O2/naive]="unwinding failed")
# callgrind writes nothing for an image an exec replaces: the counts up to the exec are
# dumped when execv is entered (exec_deep's child).
CG_VG_FLAGS+=(--dump-before=execv)

if ! command -v valgrind >/dev/null 2>&1; then
	echo "oracle-run: valgrind not found"
	exit 1
fi
if ! "$EDGEPROF" run --help >/dev/null 2>&1; then
	echo "oracle-run: FAIL: '$EDGEPROF run' does not exist yet (edgeprof run --help fails)"
	exit 1
fi
make -s "$ORACLE" || { echo "oracle-run: cannot build $ORACLE"; exit 1; }
mkdir -p "$OUT"

# Lists "compiler opt name source" for every build.
list_builds() {
	local src name opt
	for src in tests/programs/*.c tests/programs/*.cpp; do
		[ -e "$src" ] || continue
		name=$(basename "${src%.*}")
		for opt in O0 O2 O3; do
			case $src in
			*.cpp) echo "g++ $opt $name-$opt $src" ;;
			*) echo "gcc $opt $name-$opt $src" ;;
			esac
		done
		case $src in
		*.cpp) echo "clang++ O2 $name-clang-O2 $src" ;;
		*) echo "clang O2 $name-clang-O2 $src" ;;
		esac
	done
}

# check_run NAME WHAT RC OUTFILE: compares a run's status and stdout with the native run's.
check_run() {
	local dir=$OUT/$1
	if [ "$3" != "$(cat "$dir/native.rc")" ]; then
		echo "$2 exit status $3, natively $(cat "$dir/native.rc")"
		return 1
	fi
	if ! cmp -s "$4" "$dir/native.out"; then
		echo "$2 stdout differs from the native run ($4)"
		return 1
	fi
}

# profile_one NAME PROG-BASE PLACEMENT-ARGS...: edgeprof run + report + count_oracle; prints
# the oracle's summary (or the failure) as one line; the status is the verdict.
profile_one() {
	local name=$1 tag=$2 dir=$OUT/$1 rc=0 args cgargs=() f
	shift 2
	local data=$dir/$tag.data json=$dir/$tag.json
	read -r -a args <<<"${RUN_ARGS[$name]:-}"
	rm -f "$data" "$json"
	{ timeout --kill-after=10 "$RUN_TIMEOUT" \
		"$EDGEPROF" run "$@" -o "$data" -- "$dir/prog" "${args[@]}" <"$INPUT" \
		>"$dir/$tag.out" 2>"$dir/$tag.log"; } 2>/dev/null || rc=$?
	check_run "$name" "$tag:" "$rc" "$dir/$tag.out" || return 1
	if ! "$EDGEPROF" report --json "$data" >"$json" 2>>"$dir/$tag.log"; then
		echo "$tag: edgeprof report --json failed (see $dir/$tag.log)"
		return 1
	fi
	for f in "${CG_FILES[@]}"; do cgargs+=(--callgrind "$f"); done
	rc=0
	"$ORACLE" --profile "$json" --binary "$dir/prog" "${cgargs[@]}" >"$dir/$tag.oracle" 2>&1 || rc=$?
	local patched ind_in ind_out ind=""
	patched=$(grep -o '"class":"patch[a-z-]*"' "$data" | wc -l)
	# Jump-table dispatches that ran: counted in process (indexed by the table entry), or
	# left to uprobes. The builds of the switch programs and the optimised ones of the
	# computed-goto program have only table forms the in-process counters take: every one
	# that ran and has a site must be counted in process.
	ind_in=$(grep -oE '"kind":"indirect","class":"patch[a-z-]*","counters":\[[0-9,]*\],"hits":[1-9][0-9]*' "$data" | wc -l || true)
	ind_out=$(grep -oE '"kind":"indirect","class":"[a-z0-9-]*","counters":\[[0-9,]*\],"hits":[1-9][0-9]*' "$data" | grep -vc '"class":"patch' || true)
	if [ "$tag" = optimal ]; then
		ind=" ($ind_in table jumps in process, $ind_out by uprobes)"
		case $name in
		switch-O[023] | switch-clang-O2 | switch_split-O[023] | switch_split-clang-O2 | \
			computed_goto-O[23] | computed_goto-clang-O2)
			if [ "$ind_out" -ne 0 ]; then
				echo "$tag: $ind_out executed table jumps counted by uprobes: all should be in process ($data)"
				return 1
			fi
			;;
		esac
		# switch and computed_goto measure some of their case edges at their table jumps
		# (switch_split's plan measures them elsewhere, and so do switch's gcc -O2/-O3
		# builds since short case blocks are patched through springboards: one counter per
		# case block costs what the table jump's would).
		case $name in
		switch-O0 | switch-clang-O2 | computed_goto-O[23] | computed_goto-clang-O2)
			if [ "$ind_in" -eq 0 ]; then
				echo "$tag: no executed table jump counted in process ($data)"
				return 1
			fi
			;;
		esac
	fi
	# Every instruction the program ran lies in a block edgeprof counted: no function that
	# ran is left out (runs_off's ro_b, which another function jumps into, was excluded).
	if [ "$rc" = 0 ] && ! grep -q 'executed instructions covered 100.0%' "$dir/$tag.oracle"; then
		echo "$tag: executed instructions outside every counted block: $(tail -n 1 "$dir/$tag.oracle" | sed 's/.*executed instructions covered \([0-9.]*%\).*/covered \1/') ($dir/$tag.json)"
		return 1
	fi
	# A known limitation, reported: the run must say why its counts are not exact.
	if [ "$rc" = 1 ] && [ -n "${KNOWN_INEXACT[$name/$tag]:-}" ]; then
		if grep -q "${KNOWN_INEXACT[$name/$tag]}" "$dir/$tag.log"; then
			mv "$dir/$tag.oracle" "$dir/$tag.oracle.known" # not in the totals
			echo "$tag: not exact, as known and reported ('${KNOWN_INEXACT[$name/$tag]}')"
			return 0
		fi
		echo "$tag: not exact and not reported as known ('${KNOWN_INEXACT[$name/$tag]}' missing from $dir/$tag.log)"
		return 1
	fi
	case $rc in
	0)
		# "optimal: blocks 56, edges 74 (null 0/0, outside .text 2 funcs, covers 100.0%)"
		sed -n 's/^count_oracle .*: functions [0-9]*, blocks \([0-9]*\), edges \([0-9]*\) checked (null: functions [0-9]*, blocks \([0-9]*\), edges \([0-9]*\); outside .text: functions \([0-9]*\); executed instructions covered \([0-9.]*%\)).*/blocks \1, edges \2 (null \3\/\4, outside .text \5 funcs, covers \6)/p' \
			"$dir/$tag.oracle" | sed "s/^/$tag: /; s/\$/, $patched sites in process$ind/"
		;;
	1)
		echo "$tag: $(tail -n 1 "$dir/$tag.oracle" | sed 's/^count_oracle [^:]*: //')"
		grep '^diff ' "$dir/$tag.oracle" | head -n 5 | sed 's/^/     /'
		return 1
		;;
	*)
		echo "$tag: count_oracle error: $(tail -n 1 "$dir/$tag.oracle")"
		return 1
		;;
	esac
}

# run_one CC OPT NAME SRC: one build; prints one line (and details on failure).
run_one() {
	local cc=$1 opt=$2 name=$3 src=$4 dir=$OUT/$3 rc=0 args l1 l2 l3 l4 ok=1
	rm -rf "$dir"
	mkdir -p "$dir"
	read -r -a args <<<"${RUN_ARGS[$(basename "${src%.*}")]:-}"
	if ! $cc "-$opt" -g -fPIE -pie -o "$dir/prog" "$src" >"$dir/build.log" 2>&1; then
		echo "FAIL $name: compile error (see $dir/build.log)"
		return 1
	fi
	{ "$dir/prog" "${args[@]}" <"$INPUT" >"$dir/native.out" 2>/dev/null; } 2>/dev/null || rc=$?
	echo "$rc" >"$dir/native.rc"
	cg_run "$dir" "$INPUT" "$dir/callgrind.out" "$dir/prog" "${args[@]}"
	if [ ${#CG_FILES[@]} -eq 0 ]; then
		echo "FAIL $name: no callgrind output (see $dir/callgrind.log)"
		return 1
	fi
	if ! l1=$(check_run "$name" "callgrind:" "$CG_RC" "$dir/callgrind.out"); then
		echo "FAIL $name: $l1"
		return 1
	fi
	RUN_ARGS[$name]="${args[*]}"
	l1=$(profile_one "$name" optimal) || ok=0
	l3=$(profile_one "$name" uprobe --probes uprobe) || ok=0
	l2=$(profile_one "$name" naive --placement naive) || ok=0
	# Every loop proved counted by induction is counted so (cfg/induction.h).
	l4=$(profile_one "$name" induction --probes uprobe --induction=always) || ok=0
	if [ $ok -eq 1 ]; then
		echo "ok   $name: ${l1%%$'\n'*}; ${l3%%$'\n'*}; ${l2%%$'\n'*}; ${l4%%$'\n'*}"
		return 0
	fi
	echo "FAIL $name:"
	printf '%s\n%s\n%s\n%s\n' "$l1" "$l3" "$l2" "$l4" | sed 's/^/     /'
	return 1
}

start=$(date +%s)
jobs_begin
n=0
while read -r cc opt name src; do
	case $name in *"$FILTER"*) ;; *) continue ;; esac
	n=$((n + 1))
	echo "$OUT/$name" >"$jobs_dir/$n.dir"
	job_start $n run_one "$cc" "$opt" "$name" "$src"
done < <(list_builds)
jobs_end $n
totals=$(for ((i = 1; i <= n; i++)); do
	d=$(cat "$jobs_dir/$i.dir" 2>/dev/null) && cat "$d/optimal.oracle" "$d/naive.oracle" "$d/induction.oracle" 2>/dev/null
done |
	sed -n 's/^count_oracle .*: functions [0-9]*, blocks \([0-9]*\), edges \([0-9]*\) checked .*differences \([0-9]*\).*/\1 \2 \3/p' |
	awk '{ b += $1; e += $2; d += $3 } END { printf "checked blocks %d, edges %d; differences %d", b, e, d }')
echo "oracle-run: $n builds, $jobs_pass ok, $jobs_fail failed in $(($(date +%s) - start))s; $totals"
[ $jobs_fail -eq 0 ] && [ $n -gt 0 ]
