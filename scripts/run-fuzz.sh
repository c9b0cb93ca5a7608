#!/usr/bin/env bash
# Runs libFuzzer targets for a bounded time: scripts/run-fuzz.sh SECONDS TARGET...
# Each TARGET (build/fuzz/fuzz_NAME) runs for SECONDS on a scratch corpus under build/fuzz/
# seeded from tests/fuzz/corpus/NAME/, with UBSan made fatal so undefined behaviour is a
# finding too. Prints per target the executions done and the crashes found (crash, leak,
# timeout and OOM artifacts); exits non-zero when any target found something.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

if [ $# -lt 2 ] || ! [[ $1 =~ ^[0-9]+$ ]]; then
	echo "usage: scripts/run-fuzz.sh SECONDS TARGET..." >&2
	exit 2
fi
seconds=$1
shift

export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}

status=0
printf '%-22s %12s %9s %8s  %s\n' TARGET EXECUTIONS SECONDS CRASHES CORPUS
for target in "$@"; do
	name=$(basename "$target")
	short=${name#fuzz_}
	seeds=tests/fuzz/corpus/$short
	work=build/fuzz/run/$name
	if [ ! -x "$target" ]; then
		echo "run-fuzz: $target: not built" >&2
		status=1
		continue
	fi
	rm -rf "$work"
	mkdir -p "$work/corpus" "$work/artifacts"
	max_len=4096
	if [ -d "$seeds" ]; then
		cp "$seeds"/* "$work/corpus/" 2>/dev/null
		# Room to grow past the largest seed, without exploring huge inputs.
		largest=$(find "$seeds" -type f -printf '%s\n' | sort -n | tail -1)
		[ -n "$largest" ] && [ "$largest" -gt $((max_len / 2)) ] && max_len=$((largest * 2))
	else
		echo "run-fuzz: note: no seed corpus $seeds for $name" >&2
	fi
	"$target" -max_total_time="$seconds" -print_final_stats=1 -max_len="$max_len" \
		-timeout=10 -rss_limit_mb=2048 -artifact_prefix="$work/artifacts/" \
		"$work/corpus" >"$work/log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
	crashes=$(find "$work/artifacts" -type f | wc -l)
	ncorpus=$(find "$work/corpus" -type f | wc -l)
	printf '%-22s %12s %9s %8s  %s\n' "$name" "${execs:-?}" "$seconds" "$crashes" \
		"$ncorpus files"
	if [ "$rc" != 0 ] || [ "$crashes" != 0 ]; then
		status=1
		echo "run-fuzz: $name: exit $rc, $crashes finding(s) in $work/artifacts/; log: $work/log" >&2
		grep -m1 -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$work/log" >&2
		for a in "$work"/artifacts/*; do
			[ -e "$a" ] && echo "run-fuzz:   reproduce: $target $a" >&2
		done
	fi
done
exit $status
