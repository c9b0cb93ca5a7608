#!/bin/bash
# Test driver for `make test`: runs every unit-test binary build/tests/test_* (cmocka) and
# every tests/*.sh script, each as one test: exit 0 passes, 77 skips, anything else fails
# (with CI=true a skip fails too). Prints each test's name and verdict (and the output of a
# failing test), and as its last line "N passed, N failed" (", N skipped" when any were).
# Exits non-zero when any test failed.

set -u
cd "$(dirname "$0")/.." || exit 1

LOGDIR=build/tests/logs
mkdir -p "$LOGDIR"

# Never the user's calibration or stored rates; and `run`/`record` use the default site costs
# instead of calibrating (placement stays deterministic; tests/bpf-calibrate.sh checks the
# automatic calibration with a directory of its own).
export XDG_CACHE_HOME=$PWD/build/tests/xdg-cache XDG_CONFIG_HOME=$PWD/build/tests/xdg-config
export EDGEPROF_NO_CALIBRATE=1

passed=0
failed=0
skipped=0
failures=()

# run_test NAME COMMAND...: output goes to the terminal and to $LOGDIR/NAME.log.
run_test() {
	local name=$1 log rc verdict
	shift
	log=$LOGDIR/$name.log
	echo "=== $name"
	"$@" >"$log" 2>&1 </dev/null
	rc=$?
	case $rc in
	0)
		verdict=PASS
		passed=$((passed + 1))
		;;
	77)
		if [ "${CI:-}" = true ]; then
			verdict="FAIL (skipped, and CI=true)"
			failed=$((failed + 1))
			failures+=("$name")
		else
			verdict=SKIP
			skipped=$((skipped + 1))
		fi
		;;
	*)
		verdict="FAIL (exit $rc)"
		failed=$((failed + 1))
		failures+=("$name")
		;;
	esac
	case $verdict in
	PASS) tail -n 1 "$log" | sed 's/^/    /' ;;
	*) tail -n 40 "$log" | sed 's/^/    /' ;;
	esac
	echo "$verdict: $name"
}

for t in build/tests/test_*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	run_test "$(basename "$t")" "$t"
done
for t in tests/*.sh; do
	[ -f "$t" ] || continue
	[ "$t" = tests/run.sh ] && continue
	run_test "$(basename "$t" .sh)" bash "$t"
done

if [ ${#failures[@]} -gt 0 ]; then
	echo "failed: ${failures[*]} (logs in $LOGDIR)"
fi
if [ $skipped -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ $failed -eq 0 ]
