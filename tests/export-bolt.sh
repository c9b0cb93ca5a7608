#!/usr/bin/env bash
# `edgeprof export --format bolt` against BOLT's own exact counts: each program below, built
# with -Wl,--emit-relocs at gcc -O1 and -O2, is instrumented by llvm-bolt -instrument
# -conservative-instrumentation (a counter on every edge: BOLT's default mode infers counts
# and is not always exact) and run; the same program uninstrumented is run under
# `edgeprof run` with the same arguments and exported. Compared as sets of records (BOLT's
# reader ignores their order):
# - every record both files have has the same count in both;
# - a record only BOLT has is a call from an indirect call or tail jump (`call *`, or `jmp *`
#   into another function's start: edgeprof does not record indirect call targets);
# - a record only edgeprof has is explained: (a) its function is one BOLT does not
#   instrument (IsSimple 0 in llvm-bolt -print-cfg); (b) an entry record "0 [unknown] 0 1 F
#   0 0 N" where BOLT has the same total of records into F's start (its indirect calls into
#   F, which edgeprof writes as entries), or where F's entry block has no successors (BOLT
#   writes no entry record there); (c) the fall-through of a jcc whose taken side leaves the
#   function symbol (a conditional tail call, or a jump into f.cold: BOLT writes none);
# - in a function where BOLT writes entries at an offset other than 0 (around calls with
#   exception landing pads: "0 [unknown] 0 1 main 2c 39"), those and edgeprof's entry
#   record of the function (BOLT's count of entries is split differently there).
# Any other record fails the test; the outputs of both runs must equal the native run's.
# Needs root and BPF (CI=true turns a skip into a failure), and llvm-bolt-19 with its
# runtime (scripts/install-deps.sh installs bolt-19 and libbolt-19-dev).
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/support/bpf-checks.sh
source tests/support/bpf-checks.sh
# shellcheck source=tests/support/checks.sh
source tests/support/checks.sh
EDGEPROF=${EDGEPROF:-build/edgeprof}
# Called by its real path: through the llvm-bolt-19 link it looks for its runtime in /usr/lib.
BOLT=/usr/lib/llvm-19/bin/llvm-bolt

[ -x "$EDGEPROF" ] || { echo "FAIL: $EDGEPROF not built (run make)"; exit 1; }
EDGEPROF=$(realpath "$EDGEPROF")
[ "$(id -u)" = 0 ] || { echo "SKIP: edgeprof run needs root"; exit 77; }
for c in gcc g++ python3 objdump; do
	command -v "$c" >/dev/null || { echo "SKIP: $c not found"; exit 77; }
done
[ -x "$BOLT" ] && [ -f /usr/lib/llvm-19/lib/libbolt_rt_instr.a ] ||
	{ echo "SKIP: $BOLT or its runtime missing (apt-get install bolt-19 libbolt-19-dev)"; exit 77; }

tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
chmod 755 "$tmp"

# name:source:args
PROGRAMS=(loops:loops.c:2 switch:switch.c:2 recursion:recursion.c:2 callbacks:callbacks.c:2
	tailcall:tailcall.c:2 cold:cold.c:2 deep_recursion:deep_recursion.c:1 example:example.c:1
	exceptions:exceptions.cpp:2)

for opt in O1 O2; do
	for spec in "${PROGRAMS[@]}"; do
		IFS=: read -r name src args <<<"$spec"
		d=$tmp/$opt-$name
		mkdir -p "$d"
		cc=gcc
		[ "${src##*.}" = cpp ] && cc=g++
		if ! $cc "-$opt" -g -Wl,--emit-relocs -o "$d/prog" "tests/programs/$src" 2>"$d/cc.err"; then
			bad "$opt $name: cannot build: $(head -n 2 "$d/cc.err")"
			continue
		fi
		if ! "$BOLT" "$d/prog" -instrument -conservative-instrumentation \
			-instrumentation-file="$d/bolt.fdata" -o "$d/prog.inst" >"$d/bolt.log" 2>&1; then
			bad "$opt $name: llvm-bolt -instrument failed: $(tail -n 2 "$d/bolt.log")"
			continue
		fi
		"$BOLT" "$d/prog" -o "$d/prog.cfg" -print-cfg >"$d/cfg.txt" 2>&1
		rm -f "$d/bolt.fdata"
		# shellcheck disable=SC2086
		"$d/prog" $args >"$d/native.out" 2>/dev/null
		# shellcheck disable=SC2086
		"$d/prog.inst" $args >"$d/inst.out" 2>/dev/null
		# shellcheck disable=SC2086
		if ! timeout -k 5 120 "$EDGEPROF" -q run -o "$d/p.data" -- "$d/prog" $args \
			>"$d/ep.out" 2>"$d/ep.err"; then
			skip_if_no_bpf "$d/ep.err"
		fi
		if ! cmp -s "$d/native.out" "$d/inst.out" || ! cmp -s "$d/native.out" "$d/ep.out"; then
			bad "$opt $name: outputs differ from the native run's"
			continue
		fi
		if ! "$EDGEPROF" export --format bolt -o "$d/ep.fdata" "$d/p.data" 2>"$d/export.err"; then
			bad "$opt $name: export failed: $(head -n 2 "$d/export.err")"
			continue
		fi
		objdump -d --no-show-raw-insn -w "$d/prog" >"$d/dis.txt"
		if python3 tests/support/fdata_compare.py "$d" >"$d/cmp.txt" 2>&1; then
			ok "$opt $name: $(head -n 1 "$d/cmp.txt")"
		else
			bad "$opt $name: $(head -n 6 "$d/cmp.txt")"
		fi
	done
done

checks_summary export-bolt
