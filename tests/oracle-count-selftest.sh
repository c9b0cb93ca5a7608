#!/bin/bash
# Self-test of the count-exactness oracle (build/tests/count_oracle) that does not need
# `edgeprof run`: for every tests/programs/* built with gcc -O2 (g++ for C++) and clang -O2,
# runs callgrind, builds a "perfect" profile with tests/oracle/fake_profile.py (its own
# callgrind reader, from `edgeprof cfg --json`), and requires count_oracle to accept it; then
# requires it to reject copies with one count changed by 1 (a block, a function, one edge of
# each kind that occurs, "violations"), and to fail with status 2 on bad input.
# Exit 0 when all hold, 1 otherwise, 77 when valgrind is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=tests/support/callgrind-run.sh
source tests/support/callgrind-run.sh

OUT=build/tests/count-selftest
ORACLE=build/tests/count_oracle
FAKE=tests/oracle/fake_profile.py
INPUT=tests/programs/stdin.c
KINDS="block function violations fallthrough taken not_taken jump switch call_return
       tail_call return noreturn exception unresolved"

if ! command -v valgrind >/dev/null 2>&1; then
	echo "valgrind not found: skipping"
	exit 77
fi
[ -x build/edgeprof ] || make -s build/edgeprof || { echo "cannot build build/edgeprof"; exit 1; }
make -s "$ORACLE" || { echo "cannot build $ORACLE"; exit 1; }
mkdir -p "$OUT"

# build_one CC OPT SRC NAME: compiles, runs callgrind, writes NAME.cfg.json, NAME.prof.json
# and NAME.cgfiles (the callgrind outputs to sum).
build_one() {
	local cc=$1 opt=$2 src=$3 name=$4 bin=$OUT/$4
	mkdir -p "$bin.cg"
	$cc "-$opt" -g -fPIE -pie -o "$bin" "$src" >"$bin.log" 2>&1 || return 1
	# A program may exit non-zero on purpose: only the callgrind outputs matter here.
	cg_run "$bin.cg" "$INPUT" /dev/null "$bin"
	[ ${#CG_FILES[@]} -gt 0 ] || return 1
	printf '%s\n' "${CG_FILES[@]}" >"$bin.cgfiles"
	build/edgeprof cfg --json "$bin" >"$bin.cfg.json" 2>>"$bin.log" &&
		python3 "$FAKE" --binary "$bin" --cfg "$bin.cfg.json" --callgrind "${CG_FILES[@]}" \
			-o "$bin.prof.json" 2>>"$bin.log"
}

fail=0
checks=0
builds=()
running=0
for src in tests/programs/*.c tests/programs/*.cpp; do
	[ -e "$src" ] || continue
	base=$(basename "${src%.*}")
	case $src in
	*.cpp) set -- "g++ O2 $base-O2" "clang++ O2 $base-clang-O2" ;;
	*) set -- "gcc O2 $base-O2" "clang O2 $base-clang-O2" ;;
	esac
	for b in "$@"; do
		read -r cc opt name <<<"$b"
		builds+=("$name")
		(build_one "$cc" "$opt" "$src" "$name" || echo "FAIL $name: build/callgrind/fake profile (see $OUT/$name.log)") &
		running=$((running + 1))
		if [ $running -ge 2 ]; then
			wait -n || true
			running=$((running - 1))
		fi
	done
done
wait

declare -A perturbed=()
for name in "${builds[@]}"; do
	bin=$OUT/$name
	[ -s "$bin.prof.json" ] || { fail=1; continue; }
	mapfile -t cgs <"$bin.cgfiles"
	args=(--binary "$bin")
	for c in "${cgs[@]}"; do args+=(--callgrind "$c"); done
	checks=$((checks + 1))
	if line=$("$ORACLE" --profile "$bin.prof.json" "${args[@]}" 2>&1); then
		echo "ok   $name: $(echo "$line" | tail -n 1 | sed 's/^count_oracle [^:]*: //')"
	else
		echo "FAIL $name: the perfect profile is rejected"
		echo "$line" | head -n 10 | sed 's/^/     /'
		fail=1
		continue
	fi
	# Each kind once, in the first build that has one (and blocks/functions in every build).
	for kind in $KINDS; do
		case $kind in block | function) ;; *) [ -z "${perturbed[$kind]:-}" ] || continue ;; esac
		rc=0
		python3 "$FAKE" --binary "$bin" --cfg "$bin.cfg.json" --callgrind "${cgs[@]}" \
			--perturb "$kind" -o "$bin.bad.json" 2>/dev/null || rc=$?
		[ $rc -eq 2 ] && continue # no item of that kind in this build
		[ $rc -eq 0 ] || { echo "FAIL $name: fake_profile --perturb $kind"; fail=1; continue; }
		perturbed[$kind]=$name
		checks=$((checks + 1))
		rc=0
		line=$("$ORACLE" --profile "$bin.bad.json" "${args[@]}" 2>&1) || rc=$?
		if [ $rc -ne 1 ] || ! echo "$line" | grep -q 'differences 1 FAIL$'; then
			echo "FAIL $name: a $kind count off by one is not caught exactly once (exit $rc)"
			echo "$line" | tail -n 3 | sed 's/^/     /'
			fail=1
		fi
	done
done
for kind in $KINDS; do
	[ -n "${perturbed[$kind]:-}" ] || echo "note: no edge of kind $kind in any build"
done
echo "perturbed: $(for k in $KINDS; do [ -n "${perturbed[$k]:-}" ] && printf '%s ' "$k"; done)"

# Load and usage errors exit 2.
bin=$OUT/${builds[0]}
expect2() { # DESCRIPTION ARGS...
	local what=$1 rc=0
	shift
	checks=$((checks + 1))
	"$ORACLE" "$@" >/dev/null 2>&1 || rc=$?
	[ $rc -eq 2 ] || { echo "FAIL: $what: exit $rc, expected 2"; fail=1; }
}
cg1=$(head -n 1 "$bin.cgfiles")
expect2 "no arguments"
expect2 "missing callgrind file" --profile "$bin.prof.json" --binary "$bin" --callgrind /nonexistent
expect2 "not a JSON profile" --profile "$cg1" --binary "$bin" --callgrind "$cg1"
other=$OUT/${builds[1]}
expect2 "another binary's profile (build id)" --profile "$other.prof.json" --binary "$bin" --callgrind "$cg1"

echo "count-oracle-selftest: ${#builds[@]} builds, $checks checks, $([ $fail -eq 0 ] && echo ok || echo FAILED)"
exit $fail
