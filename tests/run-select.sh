#!/usr/bin/env bash
# `edgeprof run` and `edgeprof record` with --only / --exclude (function-name globs and
# file:GLOB source-file globs).
# example.c (gcc -O2): with --only, with --exclude and with file: patterns, the selected
# functions are exactly the ones the patterns say; every other one is "excluded", reason "not
# selected", in `report` and `report --json`, and has no probe site nor counter; fewer sites
# are placed than without a pattern; the selected functions' block and edge counts equal
# callgrind's (build/tests/count_oracle, no difference allowed); lcov and BOLT exports name
# no excluded function (as a branch source).
# Exactness around excluded code: in tailcall.c, longjmp_mix.c, runs_off.c (gcc -O2) and
# exceptions.cpp (g++ -O2) every function that ran is excluded in turn (calls into it and
# returns from it, tail calls into and out of it, longjmps and exceptions through its frames,
# code shared with it): the other functions' counts still equal callgrind's, 0 violations.
# A pattern matching no function: one stderr line, exit 2, no profile (the program does not
# run), unless another pattern matches (then a warning and a normal run). `record -p` takes
# the same options: a window with --only counts the selected function only; --only with no
# match exits 2 before attaching (the process runs on).
# Needs root (skips otherwise), valgrind, and BPF (skips when unavailable; CI=true fails).
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/support/bpf-checks.sh
source tests/support/bpf-checks.sh
# shellcheck source=tests/support/checks.sh
source tests/support/checks.sh
# shellcheck source=tests/support/callgrind-run.sh
source tests/support/callgrind-run.sh
ORACLE=build/tests/count_oracle
INPUT=tests/programs/stdin.c
need_root_and gcc g++ python3 valgrind timeout
make -s "$ORACLE" || { echo "FAIL: cannot build $ORACLE"; exit 1; }

tmp=$(mktemp -d)
trap 'kill_started; rm -rf "$tmp"' EXIT

# build NAME COMPILER SRC: $tmp/NAME/prog, and its callgrind counts on $INPUT (CGARGS_NAME).
declare -A CGARGS
build() {
	local d=$tmp/$1 f
	mkdir -p "$d"
	"$2" -O2 -g -fPIE -pie -o "$d/prog" "$3" 2>"$d/build.log" || return 1
	cg_run "$d" "$INPUT" "$d/native.out" "$d/prog"
	[ ${#CG_FILES[@]} -gt 0 ] || return 1
	CGARGS[$1]=""
	for f in "${CG_FILES[@]}"; do CGARGS[$1]+=" --callgrind $f"; done
}

# profile NAME TAG ARGS...: edgeprof run ARGS on NAME's program into $tmp/NAME/TAG.{data,json};
# the status is edgeprof's (the program exits 0).
profile() {
	local d=$tmp/$1 t=$2 rc=0
	shift 2
	timeout -k 5 60 "$EDGEPROF" run "$@" -o "$d/$t.data" -- "$d/prog" <"$INPUT" \
		>"$d/$t.out" 2>"$d/$t.err" || rc=$?
	[ "$rc" = 0 ] && "$EDGEPROF" report --json "$d/$t.data" >"$d/$t.json" 2>>"$d/$t.err"
	return $rc
}

# exact NAME TAG: the profile's counts equal callgrind's (prints the oracle's verdict).
exact() {
	# shellcheck disable=SC2086
	"$ORACLE" --profile "$tmp/$1/$2.json" --binary "$tmp/$1/prog" ${CGARGS[$1]} \
		>"$tmp/$1/$2.oracle" 2>&1
}

# selection NAME TAG: "selected-names|excluded-not-selected-names|sites|bad" of a profile:
# bad counts sites or counters in excluded functions and excluded functions whose reason is
# not "not selected" or that have blocks or edges.
selection() {
	python3 - "$tmp/$1/$2.data" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
fs = d["functions"]
sel = sorted(f["name"] for f in fs if f["status"] != "excluded")
exc = sorted(f["name"] for f in fs if f["status"] == "excluded" and f["reason"] == "not selected")
bad = sum(1 for f in fs if f["status"] == "excluded" and (f["blocks"] or f["edges"]))
bad += sum(1 for s in d["placement"]["sites"] if fs[s["func"]]["status"] == "excluded")
bad += sum(1 for c in d["placement"]["counters"] if fs[c["func"]]["status"] == "excluded")
print(",".join(sel) + "|" + ",".join(exc) + "|" + str(len(d["placement"]["sites"])) + "|" + str(bad))
EOF
}

build example gcc tests/programs/example.c || { echo "FAIL: cannot build or callgrind example.c"; exit 1; }
if ! profile example all; then
	skip_if_no_bpf "$tmp/example/all.err"
	echo "FAIL: edgeprof run failed: $(head -n 1 "$tmp/example/all.err")"
	exit 1
fi
IFS='|' read -r all_sel _ all_sites _ <<<"$(selection example all)"
exact example all && ok "without patterns: counts equal callgrind's ($all_sites sites)" ||
	bad "without patterns: $(tail -n 1 "$tmp/example/all.oracle")"

# check TAG EXPECTED-SELECTED ARGS...: a run with ARGS selects exactly EXPECTED (sorted, comma
# separated), everything else is excluded as not selected, with no site or counter, fewer
# sites than without patterns, and exact counts.
check() {
	local t=$1 want=$2 sel exc sites nbad
	shift 2
	if ! profile example "$t" "$@"; then
		bad "$*: edgeprof run failed: $(head -n 1 "$tmp/example/$t.err")"
		return
	fi
	IFS='|' read -r sel exc sites nbad <<<"$(selection example "$t")"
	[ "$sel" = "$want" ] && ok "$*: selects $sel" || bad "$*: selects '$sel', expected '$want'"
	[ -n "$exc" ] && [ "$nbad" = 0 ] && ok "$*: the others are excluded, not selected, no sites" ||
		bad "$*: excluded '$exc', $nbad sites, counters or counts in excluded functions"
	[ "$sites" -lt "$all_sites" ] && ok "$*: $sites probe sites instead of $all_sites" ||
		bad "$*: $sites probe sites, $all_sites without patterns"
	exact example "$t" && ok "$*: counts equal callgrind's" ||
		bad "$*: $(tail -n 1 "$tmp/example/$t.oracle")"
}

check only1 "insert" --only insert
check only2 "count_words.constprop.0,insert,main" --only 'count_words*' --only insert --only main
check excl "$(tr , '\n' <<<"$all_sel" | grep -v -e '^insert$' -e '^main$' | paste -sd,)" \
	--exclude insert --exclude 'ma?n'
check onlyexcl "count_words.constprop.0,main" --only 'count_words*' --only main --exclude insert
# file: patterns: the functions whose entry's line is in example.c (by base name and by a
# glob over the path), as the full profile's report --json says.
want=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(",".join(sorted(f["name"] for f in d["functions"] if (f.get("file") or "").endswith("/example.c"))))' \
	"$tmp/example/all.json")
[ -n "$want" ] || bad "no function of example.c in the full profile"
check file1 "$want" --only file:example.c
check file2 "$want" --only 'file:*/programs/ex*.c'
check file3 "$(tr , '\n' <<<"$all_sel" | grep -vxF -f <(tr , '\n' <<<"$want") | paste -sd,)" \
	--exclude 'file:example.c'

# report, report --json and the exports say so.
if "$EDGEPROF" report "$tmp/example/only1.data" >"$tmp/report.txt" 2>&1 &&
	grep -Eq '^  main +0x[0-9a-f]+ +excluded +not selected' "$tmp/report.txt" &&
	grep -q '^functions: .*1 exact (chords).* excluded' "$tmp/report.txt"; then
	ok "report lists the other functions as excluded, not selected"
else
	bad "report does not say main is excluded, not selected ($tmp/report.txt)"
fi
if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ex = [f for f in d["inexact"] if f["name"] == "main"]
assert [f["name"] for f in d["functions"]] == ["insert"], d["functions"]
assert ex and ex[0]["status"] == "excluded" and ex[0]["reason"] == "not selected"
assert d["placement"]["excluded_functions"] == len(d["inexact"])' "$tmp/example/only1.json"; then
	ok "report --json: only insert has counts; main is excluded, not selected"
else
	bad "report --json does not say so ($tmp/example/only1.json)"
fi
if "$EDGEPROF" export --format lcov -o "$tmp/only.info" "$tmp/example/only1.data" 2>"$tmp/err" &&
	[ "$(grep '^FN:' "$tmp/only.info" | cut -d, -f2 | paste -sd,)" = insert ]; then
	ok "lcov export: a function record for insert only"
else
	bad "lcov export: $(grep '^FN:' "$tmp/only.info" 2>/dev/null | paste -sd' ') $(head -n 1 "$tmp/err")"
fi
if "$EDGEPROF" export --format bolt -o "$tmp/only.fdata" "$tmp/example/only1.data" 2>"$tmp/err" &&
	[ "$(awk '$1 == 1 { print $2 }' "$tmp/only.fdata" | sort -u | paste -sd,)" = insert/1 ]; then
	ok "bolt export: branch records from insert only"
else
	bad "bolt export: sources $(awk '$1 == 1 { print $2 }' "$tmp/only.fdata" 2>/dev/null | sort -u | paste -sd,) $(head -n 1 "$tmp/err")"
fi

# No match: one line, exit 2, the program not run, no profile.
for args in "--only nosuch" "--exclude 'no*such'" "--only file:nosuch.c --exclude nosuch"; do
	eval "set -- $args"
	rm -f "$tmp/marker" "$tmp/nomatch.data"
	rc=0
	timeout -k 5 60 "$EDGEPROF" run "$@" -o "$tmp/nomatch.data" -- /bin/touch "$tmp/marker" \
		>"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	if [ "$rc" = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q '^edgeprof: no function matches' "$tmp/err" &&
		[ ! -e "$tmp/marker" ] && [ ! -e "$tmp/nomatch.data" ]; then
		ok "$args: exit 2, one line ($(cat "$tmp/err")), nothing run"
	else
		bad "$args: exit $rc, stderr: $(paste -sd'|' "$tmp/err"), marker $([ -e "$tmp/marker" ] && echo made || echo absent)"
	fi
done
if profile example partial --only nosuch --only insert &&
	[ "$(grep -c . "$tmp/example/partial.err")" = 1 ] &&
	grep -q "warning: --only 'nosuch' matches no function" "$tmp/example/partial.err"; then
	ok "--only nosuch --only insert: a warning for nosuch, a normal run"
else
	bad "--only nosuch --only insert: $(paste -sd'|' "$tmp/example/partial.err")"
fi

# Excluding any one function never makes another's counts wrong.
build tailcall gcc tests/programs/tailcall.c || bad "cannot build tailcall.c"
build longjmp_mix gcc tests/programs/longjmp_mix.c || bad "cannot build longjmp_mix.c"
build runs_off gcc tests/programs/runs_off.c || bad "cannot build runs_off.c"
build exceptions g++ tests/programs/exceptions.cpp || bad "cannot build exceptions.cpp"
for name in tailcall longjmp_mix runs_off exceptions; do
	[ -n "${CGARGS[$name]:-}" ] || continue
	profile "$name" all || { bad "$name: edgeprof run failed"; continue; }
	n=0
	nbad=0
	for fn in $(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(f["name"] for f in d["functions"] + d["inexact"] if (f.get("count") or 0) > 0 or (f.get("block_execs") or 0) > 0))' \
		"$tmp/$name/all.json"); do
		n=$((n + 1))
		if ! profile "$name" "x-$fn" --exclude "$fn" || ! exact "$name" "x-$fn"; then
			nbad=$((nbad + 1))
			echo "  --exclude $fn: $(tail -n 1 "$tmp/$name/x-$fn.oracle" 2>/dev/null || head -n 1 "$tmp/$name/x-$fn.err")"
		fi
	done
	[ "$n" -gt 2 ] && [ "$nbad" = 0 ] && ok "$name: each of $n functions that ran excluded in turn: the others' counts equal callgrind's" ||
		bad "$name: $nbad of $n runs with one function excluded are not exact"
done

# record -p: the same options.
cat >"$tmp/loop.c" <<'EOF'
#include <unistd.h>
__attribute__((noinline)) int work(int i) { return i % 7 ? i * 3 : i / 2; }
__attribute__((noinline)) int other(int i) { return i & 1 ? i + 1 : i - 1; }
int main(void)
{
	volatile int s = 0;

	for (int i = 0; i < 600; i++) {
		s += work(i) + other(i);
		usleep(100000);
	}
	return s == 42;
}
EOF
gcc -O2 -g -o "$tmp/loop" "$tmp/loop.c" || { echo "FAIL: cannot build loop.c"; exit 1; }
"$tmp/loop" &
loop=$!
disown "$loop" # no "Killed" line from bash when the EXIT trap kills it
started+=("$loop")
sleep 0.2
rc=0
timeout -k 5 60 "$EDGEPROF" record -p "$loop" -d 0.5 --only work -o "$tmp/rec.data" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
if [ "$rc" = 0 ] && "$EDGEPROF" report --json "$tmp/rec.data" >"$tmp/rec.json" 2>>"$tmp/err" &&
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [f["name"] for f in d["functions"]] == ["work"], d["functions"]
assert d["functions"][0]["count"] > 0
assert any(f["name"] == "other" and f["reason"] == "not selected" for f in d["inexact"])' "$tmp/rec.json"; then
	ok "record -p --only work: work counted, other excluded, not selected"
else
	bad "record -p --only work: exit $rc, $(paste -sd'|' "$tmp/err")"
fi
rc=0
timeout -k 5 60 "$EDGEPROF" record -p "$loop" -d 0.5 --only nosuch -o "$tmp/rec2.data" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
if [ "$rc" = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && [ ! -e "$tmp/rec2.data" ] && kill -0 "$loop" 2>/dev/null; then
	ok "record -p --only nosuch: exit 2, one line, nothing attached, the process runs on"
else
	bad "record -p --only nosuch: exit $rc, $(paste -sd'|' "$tmp/err")"
fi

checks_summary run-select
