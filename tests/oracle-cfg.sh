#!/bin/bash
# CFG soundness oracle over the test programs: builds every tests/programs/* with gcc (g++ for
# C++) at -O0/-O2/-O3, PIE and non-PIE, and with clang -O2 for the C programs; runs each once
# under callgrind; then checks with build/tests/cfg_oracle that the CFG of the binary, and the
# CFG of a stripped copy, explain every executed instruction, jump, fall-through and call, and
# that the stripped copy's functions match the symbol table. One line per build, then a total.
# Exit 0 when everything matches, 1 on any miss or failure, 77 when valgrind is missing.
# Usage: tests/oracle-cfg.sh [NAME-FILTER]   (e.g. "switch" or "-O3-")

set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/support/build-jobs.sh
source tests/support/build-jobs.sh

OUT=build/tests/programs
ORACLE=build/tests/cfg_oracle
INPUT=tests/programs/stdin.c
JOBS=2
FILTER=${1:-}

if ! command -v valgrind >/dev/null 2>&1; then
	echo "valgrind not found: skipping"
	exit 77
fi
# Always through make: the oracle links the CFG library statically and must not be stale.
make -s "$ORACLE" || { echo "cannot build $ORACLE"; exit 1; }
mkdir -p "$OUT"

# Lists "compiler opt pie name source" for every build.
list_builds() {
	local src name opt pie
	for src in tests/programs/*.c tests/programs/*.cpp; do
		[ -e "$src" ] || continue
		name=$(basename "${src%.*}")
		for opt in O0 O2 O3; do
			for pie in pie nopie; do
				case $src in
				*.cpp) echo "g++ $opt $pie $name-$opt-$pie $src" ;;
				*) echo "gcc $opt $pie $name-$opt-$pie $src" ;;
				esac
			done
		done
		case $src in
		*.c)
			for pie in pie nopie; do
				echo "clang O2 $pie $name-clang-O2-$pie $src"
			done
			;;
		esac
	done
}

# Builds, profiles and checks one binary; prints one result line; the status is the verdict.
run_one() {
	local cc=$1 opt=$2 pie=$3 name=$4 src=$5
	local bin=$OUT/$name strip_bin=$OUT/$name.stripped cg=$OUT/$name.cg log=$OUT/$name.log
	local pieflags line1 line2 line3 ok=1 rc nrc

	if [ "$pie" = pie ]; then pieflags="-fPIE -pie"; else pieflags="-fno-pie -no-pie"; fi
	: >"$log"
	# shellcheck disable=SC2086
	if ! $cc -$opt -g $pieflags -o "$bin" "$src" >>"$log" 2>&1; then
		echo "FAIL $name: compile error (see $log)"
		return 1
	fi
	strip -o "$strip_bin" "$bin" >>"$log" 2>&1 || { echo "FAIL $name: strip"; return 1; }
	rm -f "$cg"
	# Some programs end with a status or a signal on purpose: callgrind's run must end as
	# the native one does. (An inner shell keeps "Segmentation fault" notes in the log.)
	bash -c '"$@"' _ "$bin" <"$INPUT" >/dev/null 2>>"$log"
	nrc=$?
	bash -c '"$@"' _ valgrind --tool=callgrind --dump-instr=yes --collect-jumps=yes \
		--skip-plt=no --callgrind-out-file="$cg" "$bin" <"$INPUT" >/dev/null 2>>"$log"
	rc=$?
	if [ $rc -ne $nrc ] || [ ! -s "$cg" ]; then
		echo "FAIL $name: callgrind run exited $rc, natively $nrc (see $log)"
		return 1
	fi
	{
		echo "== cfg_oracle --binary $bin"
		"$ORACLE" --binary "$bin" --callgrind "$cg"
	} >>"$log" 2>&1 || ok=0
	line1=$(grep '^cfg_oracle ' "$log" | tail -n 1)
	{
		echo "== cfg_oracle --binary $bin --cfg-binary $strip_bin"
		"$ORACLE" --binary "$bin" --callgrind "$cg" --cfg-binary "$strip_bin"
	} >>"$log" 2>&1 || ok=0
	line2=$(grep '^cfg_oracle ' "$log" | tail -n 1)
	{
		echo "== cfg_oracle --match-stripped $bin $strip_bin"
		"$ORACLE" --match-stripped "$bin" "$strip_bin"
	} >>"$log" 2>&1 || ok=0
	line3=$(grep '^match-stripped ' "$log" | tail -n 1)

	# Compact: "insns N jumps N falls N calls N misses a/b/c/d" per CFG, and the match ratio.
	summarize() {
		sed -n 's/.*insns \([0-9]*\), jumps \([0-9]*\), fallthroughs \([0-9]*\), calls \([0-9]*\); misses: insn \([0-9]*\), jump \([0-9]*\), fallthrough \([0-9]*\), call \([0-9]*\).*/checked \1\/\2\/\3\/\4 misses \5\/\6\/\7\/\8/p'
	}
	local s1 s2 s3
	s1=$(echo "$line1" | summarize)
	s2=$(echo "$line2" | summarize)
	s3=$(echo "$line3" | sed -n 's/.*funcs \([0-9]*\), found in stripped \([0-9]*\) (\([0-9.]*%\)).*/\2\/\1 (\3)/p')
	if [ $ok -eq 1 ]; then
		echo "ok   $name: cfg ${s1:-?}; stripped ${s2:-?}; funcs $s3"
		return 0
	fi
	echo "FAIL $name: cfg ${s1:-error}; stripped ${s2:-error}; funcs ${s3:-error} (see $log)"
	grep -E '^(miss|missing|cfg_oracle:)' "$log" | head -n 8 | sed 's/^/     /'
	return 1
}

start=$(date +%s)
jobs_begin
n=0
while read -r cc opt pie name src; do
	case $name in *"$FILTER"*) ;; *) continue ;; esac
	n=$((n + 1))
	echo "$OUT/$name.log" >"$jobs_dir/$n.log"
	job_start $n run_one "$cc" "$opt" "$pie" "$name" "$src"
done < <(list_builds)
jobs_end $n
# Totals over every oracle run of this invocation (unstripped and stripped CFGs).
totals=$(for ((i = 1; i <= n; i++)); do cat "$(cat "$jobs_dir/$i.log")" 2>/dev/null; done |
	grep '^cfg_oracle ' | tr -d ',;' | awk '
	{ for (i = 1; i < NF; i++) {
		if ($i == "insns") ci += $(i + 1); if ($i == "jumps") cj += $(i + 1);
		if ($i == "fallthroughs") cf += $(i + 1); if ($i == "calls") cc += $(i + 1);
		if ($i == "insn") mi += $(i + 1); if ($i == "jump") mj += $(i + 1);
		if ($i == "fallthrough") mf += $(i + 1); if ($i == "call") mc += $(i + 1); } }
	END { printf "checked insns %d, jumps %d, fallthroughs %d, calls %d; " \
		"misses insn %d, jump %d, fallthrough %d, call %d", ci, cj, cf, cc, mi, mj, mf, mc }')
echo "oracle-cfg: $n builds, $jobs_pass ok, $jobs_fail failed in $(($(date +%s) - start))s; $totals"
[ $jobs_fail -eq 0 ] && [ $n -gt 0 ]
