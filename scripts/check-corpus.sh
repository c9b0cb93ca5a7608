#!/usr/bin/env bash
# Soundness checks of edgeprof's CFG recovery on real programs (lua5.4, bzip2, sqlite3 built
# from Debian sources by scripts/corpus.sh). For each workload of scripts/workloads/workloads.sh
# at its "check" size it:
#   1. runs the workload natively, then under callgrind (--dump-instr=yes --collect-jumps=yes
#      --skip-plt=no, output in build/corpus/NAME.callgrind.out), and requires the two runs to
#      print the same output (a cheap sign that the run is deterministic and complete);
#   2. runs the CFG soundness oracle on it: build/tests/cfg_oracle --binary BIN --callgrind OUT;
#   3. the same with the CFG recovered from a stripped copy (strip -o): --cfg-binary STRIPPED;
#   4. once per binary: build/tests/cfg_oracle --match-stripped BIN STRIPPED.
# Prints one line per workload per check and exits non-zero if any check failed.
# A callgrind output is reused while the binary, the inputs and the command are unchanged
# (--fresh forces new runs). At most 2 callgrind runs at a time (CORPUS_JOBS, default 2).
#   usage: scripts/check-corpus.sh [--fresh] [--callgrind-only] [WORKLOAD...]
#   (--callgrind-only: skip the oracle checks; WORKLOAD: a subset of lua5.4 bzip2 bzip2-d sqlite3)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/workloads/workloads.sh
source scripts/workloads/workloads.sh

OUTDIR=$ROOT/build/corpus
ORACLE=$ROOT/build/tests/cfg_oracle
JOBS=${CORPUS_JOBS:-2}
VG_FLAGS=(--tool=callgrind --dump-instr=yes --collect-jumps=yes --skip-plt=no)

FRESH=0
ORACLE_CHECKS=1
SELECTED=()
for arg in "$@"; do
	case "$arg" in
	--fresh) FRESH=1 ;;
	--callgrind-only) ORACLE_CHECKS=0 ;;
	-h | --help)
		sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	-*)
		echo "check-corpus: unknown option '$arg'" >&2
		exit 2
		;;
	*)
		[ -n "${CORPUS_SIZE[$arg.check]:-}" ] || {
			echo "check-corpus: unknown workload '$arg' (known: ${CORPUS_WORKLOADS[*]})" >&2
			exit 2
		}
		SELECTED+=("$arg")
		;;
	esac
done
[ ${#SELECTED[@]} -gt 0 ] || SELECTED=("${CORPUS_WORKLOADS[@]}")

command -v valgrind >/dev/null || {
	echo "check-corpus: valgrind not found (run 'make deps' as root)" >&2
	exit 1
}
scripts/corpus.sh --quiet || {
	echo "check-corpus: FAIL building the corpus (scripts/corpus.sh)" >&2
	exit 1
}
mkdir -p "$OUTDIR"

FAILED=0
report() { # STATUS NAME CHECK DETAIL
	printf 'check-corpus: %-4s %-8s %-19s %s\n' "$1" "$2" "$3" "$4"
	case "$1" in PASS | SKIP) ;; *) FAILED=1 ;; esac
}

# --- 1. inputs, native and callgrind runs ----------------------------------------------------
# run_one NAME: in a background job; writes $OUTDIR/NAME.status ("STATUS|DETAIL").
run_one() {
	local name=$1 base=$OUTDIR/$1
	local out=$base.callgrind.out st=$base.status
	rm -f "$st"
	if ! corpus_workload "$name" check >"$base.prepare.log" 2>&1; then
		echo "FAIL|preparing the input failed (see $base.prepare.log)" >"$st"
		return 0
	fi
	# The key of a callgrind output: binary, inputs, command and valgrind version.
	local key
	key=$({
		sha256sum "$CORPUS_WL_BIN" "${CORPUS_WL_INPUTS[@]}" | cut -d' ' -f1
		printf '%s\n' "${CORPUS_WL_CMD[@]}" "${VG_FLAGS[@]}"
		valgrind --version
	} | sha256sum | cut -d' ' -f1)
	if [ "$FRESH" = 0 ] && [ -s "$out" ] && [ -f "$base.key" ] && [ "$(cat "$base.key")" = "$key" ]; then
		echo "PASS|reused $out" >"$st"
		return 0
	fi
	rm -f "$out" "$base.key"
	if ! "${CORPUS_WL_CMD[@]}" </dev/null >"$base.native.stdout" 2>"$base.native.stderr"; then
		echo "FAIL|the workload fails natively (see $base.native.stderr)" >"$st"
		return 0
	fi
	local t0 t1 rc=0
	t0=$(date +%s.%N)
	valgrind "${VG_FLAGS[@]}" --callgrind-out-file="$out" -- "${CORPUS_WL_CMD[@]}" \
		</dev/null >"$base.callgrind.stdout" 2>"$base.callgrind.log" || rc=$?
	t1=$(date +%s.%N)
	if [ "$rc" != 0 ] || [ ! -s "$out" ]; then
		echo "FAIL|valgrind exited $rc (see $base.callgrind.log)" >"$st"
		return 0
	fi
	if ! cmp -s "$base.native.stdout" "$base.callgrind.stdout"; then
		echo "FAIL|output differs natively and under callgrind ($base.native.stdout, $base.callgrind.stdout)" >"$st"
		return 0
	fi
	echo "$key" >"$base.key"
	echo "PASS|$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s, $out" >"$st"
}

# Inputs first, in the foreground: the jobs below then only read them.
for name in "${SELECTED[@]}"; do
	corpus_workload "$name" check >"$OUTDIR/$name.prepare.log" 2>&1 || true
done
running=0
for name in "${SELECTED[@]}"; do
	if [ "$running" -ge "$JOBS" ]; then
		wait -n || true
		running=$((running - 1))
	fi
	run_one "$name" &
	running=$((running + 1))
done
wait || true

declare -A CG_OK=()
for name in "${SELECTED[@]}"; do
	st=$OUTDIR/$name.status
	if [ -f "$st" ]; then
		line=$(cat "$st")
	else
		line="FAIL|the callgrind job died (see $OUTDIR/$name.*)"
	fi
	report "${line%%|*}" "$name" callgrind "${line#*|}"
	[ "${line%%|*}" = PASS ] && CG_OK[$name]=1
done

# --- 2-4. the oracle -------------------------------------------------------------------------
if [ "$ORACLE_CHECKS" = 1 ]; then
	if [ ! -x "$ORACLE" ]; then
		report FAIL all cfg_oracle "$ORACLE not built (make build/tests/cfg_oracle; or --callgrind-only)"
	else
		# oracle NAME CHECK ARGS...: exit 0 = no misses, 1 = misses, 2 (or other) = error.
		oracle() {
			local name=$1 check=$2 rc=0 log=$OUTDIR/$1.$2.log summary
			shift 2
			"$ORACLE" "$@" >"$log" 2>&1 || rc=$?
			summary=$(grep -v '^[[:space:]]*$' "$log" | tail -n 1)
			case "$rc" in
			0) report PASS "$name" "$check" "$summary" ;;
			1) report FAIL "$name" "$check" "$summary (see $log)" ;;
			*) report FAIL "$name" "$check" "oracle error (exit $rc): $summary (see $log)" ;;
			esac
		}
		declare -A STRIPPED=()
		for name in "${SELECTED[@]}"; do
			corpus_workload "$name" check >/dev/null 2>&1 || true
			bin=$CORPUS_WL_BIN
			stripped=$OUTDIR/$(basename "$bin").stripped
			if [ -z "${STRIPPED[$bin]:-}" ]; then
				if ! strip -o "$stripped" "$bin" 2>"$OUTDIR/strip.log"; then
					report FAIL "$name" strip "strip -o failed (see $OUTDIR/strip.log)"
					continue
				fi
				STRIPPED[$bin]=1
				oracle "$name" match-stripped --match-stripped "$bin" "$stripped"
			fi
			if [ -z "${CG_OK[$name]:-}" ]; then
				report FAIL "$name" cfg-sound "no callgrind output"
				report FAIL "$name" cfg-sound-stripped "no callgrind output"
				continue
			fi
			out=$OUTDIR/$name.callgrind.out
			oracle "$name" cfg-sound --binary "$bin" --callgrind "$out"
			oracle "$name" cfg-sound-stripped --binary "$bin" --callgrind "$out" --cfg-binary "$stripped"
		done
	fi
fi

if [ "$FAILED" != 0 ]; then
	echo "check-corpus: FAILED"
	exit 1
fi
echo "check-corpus: all checks passed"
