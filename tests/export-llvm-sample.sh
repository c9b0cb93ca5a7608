#!/usr/bin/env bash
# `edgeprof export --format llvm-sample` against an independent oracle: tests/programs/
# sample_inline.c (inlining two levels deep, direct calls, several blocks per line, unrolled
# loops) built with clang-19 -O2 -g, once plain and once with -fdebug-info-for-profiling
# (discriminators and duplication factors), is profiled by `edgeprof run` and exported; then
# - `llvm-profdata-19 show --sample` reads the file, and LLVM's own rewrite of it
#   (`llvm-profdata-19 merge --sample --text`) passes the same check as the file itself;
# - tests/support/sample_vs_callgrind.py rebuilds the whole profile from callgrind's
#   per-instruction counts of the same run, keyed through llvm-symbolizer-19 (LLVM's DWARF
#   reader, not edgeprof's libdw) by inline path, line offset and discriminator, and requires
#   every function's TOTAL and HEAD, every line's count, call target and inlined call site to
#   be equal;
# - clang-19 -fprofile-sample-use=FILE compiles the program from it, and the result prints
#   the same output;
# - bad input gets one "edgeprof: " line, a non-zero exit and no file: a missing profile, a
#   profile of another build (build-id), a binary without line tables.
# Needs root and BPF (CI=true turns a skip into a failure), clang-19, llvm-19 (llvm-profdata,
# llvm-symbolizer), valgrind, objdump and python3.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/support/bpf-checks.sh
source tests/support/bpf-checks.sh
# shellcheck source=tests/support/checks.sh
source tests/support/checks.sh
# shellcheck source=tests/support/callgrind-run.sh
source tests/support/callgrind-run.sh
need_root_and clang-19 llvm-profdata-19 llvm-symbolizer-19 valgrind objdump gcc python3

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
src=$PWD/tests/programs/sample_inline.c
ARG=3000

# check_build NAME CFLAGS...: build, profile, export, compare.
check_build() {
	local name=$1 d=$tmp/$1
	shift
	mkdir -p "$d"
	if ! clang-19 -O2 -g "$@" -o "$d/prog" "$src" 2>"$d/cc.err"; then
		bad "$name: cannot build: $(head -n 2 "$d/cc.err")"
		return
	fi
	"$d/prog" $ARG >"$d/native.out"
	if ! timeout -k 5 120 "$EDGEPROF" -q run -o "$d/p.data" -- "$d/prog" $ARG >"$d/ep.out" 2>"$d/ep.err"; then
		skip_if_no_bpf "$d/ep.err"
		bad "$name: edgeprof run failed: $(tail -n 2 "$d/ep.err")"
		return
	fi
	if ! "$EDGEPROF" export --format llvm-sample -o "$d/prof.txt" "$d/p.data" 2>"$d/export.err" ||
		[ -s "$d/export.err" ] || [ ! -s "$d/prof.txt" ]; then
		bad "$name: export failed or warned: $(head -n 2 "$d/export.err")"
		return
	fi
	if llvm-profdata-19 show --sample "$d/prof.txt" >"$d/show.txt" 2>&1 &&
		grep -q '^Function: main: ' "$d/show.txt" &&
		llvm-profdata-19 merge --sample --text "$d/prof.txt" -o "$d/llvm.txt" 2>"$d/merge.err"; then
		ok "$name: llvm-profdata-19 reads it ($(grep -c '^Function: ' "$d/show.txt") functions)"
	else
		bad "$name: llvm-profdata-19 rejects it: $(head -n 3 "$d/show.txt" "$d/merge.err")"
		return
	fi
	cg_run "$d" /dev/null "$d/cg.stdout" "$d/prog" $ARG
	if [ "$CG_RC" != 0 ] || [ "${#CG_FILES[@]}" = 0 ]; then
		bad "$name: callgrind failed: $(tail -n 2 "$d/callgrind.log")"
		return
	fi
	for f in prof llvm; do
		if python3 tests/support/sample_vs_callgrind.py "$d/$f.txt" "$d/prog" "${CG_FILES[@]}" \
			>"$d/cmp-$f.txt" 2>&1; then
			ok "$name: $([ $f = llvm ] && echo "llvm-profdata's rewrite: ")$(tail -n 1 "$d/cmp-$f.txt")"
		else
			bad "$name: $f.txt against the oracle: $(head -n 12 "$d/cmp-$f.txt")"
		fi
	done
	if clang-19 -O2 -g "$@" -fprofile-sample-use="$d/prof.txt" -o "$d/pgo" "$src" 2>"$d/pgo.err" &&
		! grep -qi 'error\|could not\|malformed' "$d/pgo.err" &&
		"$d/pgo" $ARG >"$d/pgo.out" && cmp -s "$d/pgo.out" "$d/native.out"; then
		ok "$name: clang-19 -fprofile-sample-use builds from it, same output"
	else
		bad "$name: clang-19 -fprofile-sample-use: $(head -n 3 "$d/pgo.err")"
	fi
}

check_build plain
check_build profiling -fdebug-info-for-profiling
if grep -q '^ [0-9]*\.[0-9]*: ' "$tmp/profiling/prof.txt" 2>/dev/null; then
	ok "profiling: discriminators written"
else
	bad "profiling: no discriminator in the file"
fi

# Bad input: one line, a non-zero exit, nothing written.
bad_input() { # bad_input WHAT PATTERN EXPORT-ARGS...
	local what=$1 pat=$2 rc
	shift 2
	rm -f "$tmp/bad.txt"
	"$EDGEPROF" export --format llvm-sample -o "$tmp/bad.txt" "$@" >"$tmp/bad.out" 2>"$tmp/bad.err"
	rc=$?
	if [ "$rc" != 0 ] && [ "$(wc -l <"$tmp/bad.err")" = 1 ] && grep -q "^edgeprof: .*$pat" "$tmp/bad.err" &&
		[ ! -e "$tmp/bad.txt" ] && [ ! -s "$tmp/bad.out" ]; then
		ok "$what: exit $rc, $(cat "$tmp/bad.err")"
	else
		bad "$what: exit $rc, $(head -n 3 "$tmp/bad.err"), file: $(ls "$tmp/bad.txt" 2>/dev/null)"
	fi
}
bad_input "missing profile" "No such file" "$tmp/none.data"
if [ -s "$tmp/plain/p.data" ] && [ -x "$tmp/profiling/prog" ]; then
	bad_input "other build" "another build" "$tmp/plain/p.data" "$tmp/profiling/prog"
fi
mkdir -p "$tmp/nodebug"
gcc -O2 -g0 -o "$tmp/nodebug/prog" "$src"
if "$EDGEPROF" -q run -o "$tmp/nodebug/p.data" -- "$tmp/nodebug/prog" 10 >/dev/null 2>&1; then
	bad_input "no line tables" "no line tables" "$tmp/nodebug/p.data"
else
	bad "no line tables: edgeprof run failed"
fi

checks_summary export-llvm-sample
