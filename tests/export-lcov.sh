#!/usr/bin/env bash
# `edgeprof export --format lcov` against gcov: each test program below is built twice from
# the same source at gcc -O0, once with -g (profiled by `edgeprof run`, exported as an lcov
# tracefile) and once with --coverage (run on the same arguments, read by `gcov --json-format
# -b`). tests/support/lcov_vs_gcov.py requires the executed-line sets to be equal but for the
# known differences of line attribution (prologue on the opening brace, epilogue on the
# closing one, where gcov counts the function's start line), and equal branch counts on the
# lines with one conditional jump. genhtml and `lcov --summary` read every tracefile without
# error; `--format gcov` reports are read by `gcovr -g` with the same line, branch and
# function totals as the tracefile's; a binary without line tables gets one clear line and
# exit 1.
# Needs root and BPF (CI=true turns a skip into a failure), gcov, genhtml and lcov
# (scripts/install-deps.sh installs lcov and gcovr).
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/support/bpf-checks.sh
source tests/support/bpf-checks.sh
# shellcheck source=tests/support/checks.sh
source tests/support/checks.sh
EDGEPROF=${EDGEPROF:-build/edgeprof}

[ -x "$EDGEPROF" ] || { echo "FAIL: $EDGEPROF not built (run make)"; exit 1; }
EDGEPROF=$(realpath "$EDGEPROF")
[ "$(id -u)" = 0 ] || { echo "SKIP: edgeprof run needs root"; exit 77; }
for c in gcc gcov genhtml lcov gcovr python3; do
	command -v "$c" >/dev/null || { echo "SKIP: $c not found (apt-get install lcov gcovr)"; exit 77; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"

# name:args
PROGRAMS=(loops:2 switch:2 recursion:2 callbacks:2 tailcall:2 cold:2)

for spec in "${PROGRAMS[@]}"; do
	IFS=: read -r name args <<<"$spec"
	d=$tmp/$name
	mkdir -p "$d"
	src=$PWD/tests/programs/$name.c
	if ! gcc -O0 -g -o "$d/prog" "$src" || ! (cd "$d" && gcc -O0 --coverage -o cov "$src"); then
		bad "$name: cannot build"
		continue
	fi
	# shellcheck disable=SC2086
	(cd "$d" && ./cov $args >cov.out 2>&1 && gcov --json-format -b -o . cov-"$name".gcda >gcov.log 2>&1)
	# shellcheck disable=SC2086
	if ! timeout -k 5 120 "$EDGEPROF" -q run -o "$d/p.data" -- "$d/prog" $args >"$d/ep.out" 2>"$d/ep.err"; then
		skip_if_no_bpf "$d/ep.err"
		bad "$name: edgeprof run failed: $(tail -n 2 "$d/ep.err")"
		continue
	fi
	if ! "$EDGEPROF" export --format lcov -o "$d/p.info" "$d/p.data" 2>"$d/export.err"; then
		bad "$name: export failed: $(head -n 2 "$d/export.err")"
		continue
	fi
	gj=$(ls "$d"/*.gcov.json.gz 2>/dev/null | head -n 1)
	if [ -z "$gj" ]; then
		bad "$name: gcov wrote no JSON: $(head -n 3 "$d/gcov.log")"
		continue
	fi
	if python3 tests/support/lcov_vs_gcov.py "$d/p.info" "$gj" "$src" >"$d/cmp.txt" 2>&1; then
		ok "$(head -n 1 "$d/cmp.txt")"
	else
		bad "$name: $(head -n 6 "$d/cmp.txt")"
	fi
	# --format gcov: gcovr reads the reports, with the lcov tracefile's totals.
	if "$EDGEPROF" export --format gcov -o "$d/gcov" "$d/p.data" 2>"$d/export-gcov.err" &&
		(cd "$d/gcov" && gcovr -g -k -r "$(dirname "$src")" --json-summary "$d/gcovr.json" . >"$d/gcovr.log" 2>&1) &&
		python3 - "$d/gcovr.json" "$d/p.info" "$(basename "$src")" >"$d/gcovr.txt" 2>&1 <<'PY'; then
import json, os, sys
g = json.load(open(sys.argv[1]))
f = [x for x in g["files"] if os.path.basename(x["filename"]) == sys.argv[3]]
assert len(f) == 1, g["files"]
f, lc, cur = f[0], {}, None
for l in open(sys.argv[2]):
    l = l.strip()
    if l.startswith("SF:"):
        cur = os.path.basename(l[3:])
    elif cur == sys.argv[3] and l[:3] in ("LF:", "LH:") or cur == sys.argv[3] and l[:4] in (
            "BRF:", "BRH:", "FNF:", "FNH:"):
        k, v = l.split(":")
        lc[k] = int(v)
want = {"line_total": lc["LF"], "line_covered": lc["LH"], "branch_total": lc["BRF"],
        "branch_covered": lc["BRH"], "function_total": lc["FNF"], "function_covered": lc["FNH"]}
got = {k: f[k] for k in want}
assert got == want, (got, want)
print("lines %d/%d, branches %d/%d, functions %d/%d" % (
    got["line_covered"], got["line_total"], got["branch_covered"], got["branch_total"],
    got["function_covered"], got["function_total"]))
PY
		ok "$name: gcovr -g reads the gcov reports, as many lines, branches and functions as lcov's: $(cat "$d/gcovr.txt")"
	else
		bad "$name: gcov reports: $(head -n 3 "$d/export-gcov.err" "$d/gcovr.log" "$d/gcovr.txt" 2>/dev/null)"
	fi
	if genhtml -q -o "$d/html" "$d/p.info" >"$d/genhtml.log" 2>&1 && [ -s "$d/html/index.html" ] &&
		lcov --summary "$d/p.info" >"$d/summary.txt" 2>&1 && grep -q 'lines\.*:' "$d/summary.txt"; then
		ok "$name: genhtml and lcov --summary read it: $(grep 'lines\.*:' "$d/summary.txt" | sed 's/^ *//')"
	else
		bad "$name: genhtml or lcov rejected it: $(head -n 3 "$d/genhtml.log" "$d/summary.txt")"
	fi
done

# A binary without line tables: one line, exit 1, nothing written.
d=$tmp/nodebug
mkdir -p "$d"
gcc -O2 -g0 -o "$d/prog" tests/programs/loops.c
"$EDGEPROF" -q run -o "$d/p.data" -- "$d/prog" 1 >/dev/null 2>&1
"$EDGEPROF" export --format lcov -o "$d/p.info" "$d/p.data" >"$d/out" 2>"$d/err"
rc=$?
if [ "$rc" = 1 ] && [ "$(wc -l <"$d/err")" = 1 ] && grep -q "no line tables" "$d/err" && [ ! -e "$d/p.info" ]; then
	ok "no line tables: exit 1, $(cat "$d/err")"
else
	bad "no line tables: exit $rc, $(cat "$d/err"), file: $(ls "$d/p.info" 2>/dev/null)"
fi

checks_summary export-lcov
