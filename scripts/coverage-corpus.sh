#!/usr/bin/env bash
# `make check-coverage`: edgeprof's coverage exports of the corpus (lua5.4 and bzip2, the plain
# -O2 -g binaries of scripts/corpus.sh) against gcov on the same sources built by the same
# recipes plus --coverage (scripts/corpus.sh --coverage, into build/coverage/):
# 1. the same deterministic workload runs on the --coverage build (its .gcda files next to its
#    objects) and, under `edgeprof run` and under callgrind (tests/support/callgrind-run.sh: the
#    oracle of what the -O2 code executed), on the plain binary; their outputs must be equal.
#    lua5.4: scripts/workloads/workload.lua N (N=$COV_LUA_N, default 5); bzip2: -9 -c of a
#    generated 256 KiB file, then -d -c of the result (two edgeprof profiles, merged);
# 2. gcov -b --json-format reads the .gcda files, edgeprof exports lcov and gcov text;
# 3. scripts/coverage-compare.py compares the executed-line sets per source file and gives every
#    difference a reason checked against both binaries' DWARF line tables (objdump
#    --dwarf=decodedline), and compares branch counts on lines with one conditional jump;
# 4. genhtml reads the lcov tracefile and `gcovr -g -k` the gcov text reports. The plain corpus
#    binaries may have been built in another checkout: their DWARF's source paths are mapped
#    to this checkout's corpus/src/ (SF: lines; the gcov reports' Source: line and source text,
#    which `edgeprof export` leaves empty when it cannot open the file) before they are read.
# Writes bench/results-coverage.md (OUT=...). Needs root and BPF, gcov, genhtml, gcovr.
# Exit 0 when both programs have no unexplained difference and both tools read the files.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/workloads/workloads.sh
source scripts/workloads/workloads.sh
# shellcheck source=tests/support/callgrind-run.sh
source tests/support/callgrind-run.sh

EDGEPROF=$ROOT/build/edgeprof
OUT=${OUT:-$ROOT/bench/results-coverage.md}
WORK=$ROOT/build/coverage/work
COVBIN=$ROOT/build/coverage/bin
COVOBJ=$ROOT/build/coverage/obj
LUA_N=${COV_LUA_N:-5}

die() {
	echo "coverage-corpus: error: $*" >&2
	exit 1
}
[ -x "$EDGEPROF" ] || die "$EDGEPROF not built (run make)"
for c in gcov genhtml gcovr objdump nm python3 valgrind; do
	command -v "$c" >/dev/null || die "'$c' not found (apt-get install lcov gcovr)"
done
[ "$(id -u)" = 0 ] || die "edgeprof run needs root"
scripts/corpus.sh --quiet --coverage || die "building the corpus (scripts/corpus.sh --coverage)"
SRC=$(realpath corpus/src)

FAILED=0
report() { # STATUS NAME DETAIL
	printf 'coverage-corpus: %-4s %-7s %s\n' "$1" "$2" "$3"
	[ "$1" = PASS ] || FAILED=1
}

# run_both NAME TAG ARGS...: runs the workload ARGS (binary path relative to the corpus bin
# directory as $BIN) on the --coverage build and under edgeprof on the plain binary, with
# profile $W/TAG.data, and under callgrind on the plain binary (the oracle of the -O2 code's
# counts, files added to CGF); fails unless the three print the same output.
run_both() {
	local name=$1 tag=$2
	shift 2
	"$COVBIN/$name" "$@" </dev/null >"$W/$tag.cov.out"
	"$EDGEPROF" -q run -o "$W/$tag.data" -- "$CORPUS_BIN_DIR/$name" "$@" </dev/null >"$W/$tag.ep.out" 2>"$W/$tag.ep.err" ||
		die "$name: edgeprof run failed: $(tail -n 2 "$W/$tag.ep.err")"
	cmp -s "$W/$tag.cov.out" "$W/$tag.ep.out" || die "$name: the two builds print different outputs ($W/$tag.*.out)"
	mkdir -p "$W/cg-$tag"
	cg_run "$W/cg-$tag" /dev/null "$W/$tag.cg.out" "$CORPUS_BIN_DIR/$name" "$@"
	[ "$CG_RC" = 0 ] || die "$name: the run under callgrind failed ($W/cg-$tag/callgrind.log)"
	cmp -s "$W/$tag.cov.out" "$W/$tag.cg.out" || die "$name: the run under callgrind prints another output"
	CGF+=("${CG_FILES[@]}")
}

# fix_gcov_text FILE: maps the Source: path to $SRC and fills in missing source text.
fix_gcov_text() {
	python3 - "$1" "$SRC" <<'PY'
import re, sys
path, src = sys.argv[1:3]
lines = open(path).read().split("\n")
m = re.match(r"(\s*-:\s*0:Source:).*/corpus/src/(.*)$", lines[0])
if m:
    new = src + "/" + m.group(2)
    lines[0] = m.group(1) + new
    text = open(new, errors="replace").read().split("\n")
    for i, l in enumerate(lines):
        f = l.split(":", 2)
        if len(f) == 3 and f[1].strip().isdigit() and f[2] == "" and 0 < int(f[1]) <= len(text):
            lines[i] = l + text[int(f[1]) - 1]
open(path, "w").write("\n".join(lines))
PY
}

SECTIONS=()
for name in lua5.4 bzip2; do
	W=$WORK/$name
	rm -rf "$W" && mkdir -p "$W/gcov"
	rm -f "$COVOBJ/$name"/*.gcda
	CGF=()
	case "$name" in
	lua5.4)
		run_both lua5.4 p "$CORPUS_WORKLOAD_DIR/workload.lua" "$LUA_N"
		src=$(dirname "$(ls -d "$SRC"/lua5.4-*/src/lapi.c)")
		desc="scripts/workloads/workload.lua $LUA_N"
		;;
	bzip2)
		in=$(_corpus_bzip2_input 256) || die "generating the bzip2 input"
		run_both bzip2 c -9 -c "$in"
		cp "$W/c.cov.out" "$W/in.bz2"
		run_both bzip2 d -d -c "$W/in.bz2"
		cmp -s "$W/d.ep.out" "$in" || die "bzip2: decompression does not give the input back"
		"$EDGEPROF" -q merge "$W/c.data" "$W/d.data" -o "$W/p.data" || die "bzip2: edgeprof merge failed"
		src=$(ls -d "$SRC"/bzip2-*/ | head -n 1)
		desc="bzip2 -9 -c of a generated 256 KiB file, then bzip2 -d -c of its output"
		;;
	esac
	(cd "$W/gcov" && gcov -b --json-format -o "$COVOBJ/$name" "$COVOBJ/$name"/*.gcda >../gcov.log 2>&1) ||
		die "$name: gcov failed (see $W/gcov.log)"
	"$EDGEPROF" export --format lcov -o "$W/p.info" "$W/p.data" 2>"$W/export.err" || die "$name: export lcov failed"
	"$EDGEPROF" export --format gcov -o "$W/epgcov" "$W/p.data" 2>>"$W/export.err" || die "$name: export gcov failed"
	objdump --dwarf=decodedline --wide "$CORPUS_BIN_DIR/$name" >"$W/plain.lines"
	objdump --dwarf=decodedline --wide "$COVBIN/$name" >"$W/cov.lines"
	if python3 scripts/coverage-compare.py "$name" "$W" "$src" "$CORPUS_BIN_DIR/$name" "$W/section.md" "${CGF[@]}" >"$W/compare.txt"; then
		report PASS "$name" "$(head -n 1 "$W/compare.txt" | sed 's/^coverage-compare: [^:]*: //')"
	else
		report FAIL "$name" "$(head -n 1 "$W/compare.txt" | sed 's/^coverage-compare: [^:]*: //') (see $W/compare.txt)"
	fi
	# The tools that read edgeprof's files.
	sed -E "s#^SF:.*/corpus/src/#SF:$SRC/#" "$W/p.info" >"$W/p.local.info"
	if genhtml -o "$W/html" "$W/p.local.info" >"$W/genhtml.log" 2>&1 && [ -s "$W/html/index.html" ]; then
		gh=$(grep -E '^  (lines|functions|branches)' "$W/genhtml.log" | sed 's/^ *//' | paste -sd ';' | sed 's/;/; /g')
		report PASS "$name" "genhtml: $gh"
	else
		gh="FAILED: $(tail -n 2 "$W/genhtml.log")"
		report FAIL "$name" "genhtml: $gh"
	fi
	for f in "$W/epgcov"/*.gcov; do fix_gcov_text "$f"; done
	if (cd "$W/epgcov" && gcovr -g -k -r "$SRC" . >"$W/gcovr.txt" 2>"$W/gcovr.err" &&
		gcovr -g -k -b -r "$SRC" . >"$W/gcovr-b.txt" 2>>"$W/gcovr.err") && [ ! -s "$W/gcovr.err" ]; then
		gr="lines $(grep '^TOTAL' "$W/gcovr.txt" | awk '{print $3" of "$2" ("$4")"}'), branches $(grep '^TOTAL' "$W/gcovr-b.txt" | awk '{print $3" of "$2" ("$4")"}')"
		report PASS "$name" "gcovr -g -k: $gr"
	else
		gr="FAILED: $(head -n 2 "$W/gcovr.err")"
		report FAIL "$name" "gcovr: $gr"
	fi
	{
		cat "$W/section.md"
		echo "- workload: $desc; gcov: $(grep -m1 'Lines executed' "$W/gcov.log" || true) (the first unit's)"
		echo "- genhtml on edgeprof's tracefile: $gh"
		echo "- gcovr -g -k on edgeprof's gcov text reports: $gr"
		echo
	} >"$W/full.md"
	SECTIONS+=("$W/full.md")
done

{
	cat <<EOF
# Coverage against gcov on the corpus (make check-coverage)

Generated by scripts/coverage-corpus.sh on $(date -u +%Y-%m-%d) at commit $(git rev-parse --short HEAD).
edgeprof's lcov export of the plain corpus binary (gcc -O2 -g, scripts/corpus.sh) next to gcov -b
of the same Debian sources built with the same flags plus --coverage, on the same workload.
Reasons are checked mechanically by scripts/coverage-compare.py (its header defines each one)
against both binaries' DWARF line tables and, for the oracle classes (after-noreturn,
copy-not-called, exit-copy-not-run, path-not-run; if-converted, shared-block, merged-target),
against callgrind's instruction counts of the plain -O2 binary on the same workload and objdump:
each of those requires callgrind's count of the line to equal edgeprof's, so the difference is in
the compiled code, not a miscount. "unexplained" lines make the check fail. The exactness line
compares edgeprof's count of every line with callgrind's (separate runs: lua's string hash seed
depends on time and addresses, so a few lstring.c counts can differ by a few; listed if so).

EOF
	cat "${SECTIONS[@]}"
} >"$OUT"
echo "coverage-corpus: wrote $OUT"
exit "$FAILED"
