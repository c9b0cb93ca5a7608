#!/usr/bin/env bash
# `edgeprof export --format gcov-json` against gcov 12's own `gcov --json-format`: each test
# program below is built twice from the same source at gcc -O0, once with -g (profiled by
# `edgeprof run`, exported as gcov JSON and as an lcov tracefile) and once with --coverage
# (run on the same arguments, read by `gcov --json-format -b`). Checked:
# - the file is gzip-compressed JSON with the keys of gcov's document, its files', functions',
#   lines' and branches' objects, each key holding a value of the same JSON type as gcov's,
#   and format_version "1";
# - every line's count equals the lcov export's DA count and every line lcov has is there; the
#   branches of each line, taken then not taken per jump, equal the lcov export's BRDA counts
#   (0 for "-"); each function's execution_count equals lcov's FNDA.
# gcovr 5.2 (Debian 12) reads gcov's text reports and its own JSON only, not gcov's JSON
# intermediate format: that reader is not checked here (tests/export-lcov.sh checks gcovr
# on --format gcov). A bad command line gets exit 2.
# Needs root and BPF (CI=true turns a skip into a failure), gcc, gcov and python3.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/support/bpf-checks.sh
source tests/support/bpf-checks.sh
# shellcheck source=tests/support/checks.sh
source tests/support/checks.sh
need_root_and gcc gcov python3

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"

for spec in loops:2 switch:2 callbacks:2; do
	IFS=: read -r name args <<<"$spec"
	d=$tmp/$name
	mkdir -p "$d"
	src=$PWD/tests/programs/$name.c
	if ! gcc -O0 -g -o "$d/prog" "$src" || ! (cd "$d" && gcc -O0 --coverage -o cov "$src"); then
		bad "$name: cannot build"
		continue
	fi
	# shellcheck disable=SC2086
	(cd "$d" && ./cov $args >/dev/null 2>&1 && gcov --json-format -b -o . cov-"$name".gcda >gcov.log 2>&1)
	# shellcheck disable=SC2086
	if ! timeout -k 5 120 "$EDGEPROF" -q run -o "$d/p.data" -- "$d/prog" $args >/dev/null 2>"$d/ep.err"; then
		skip_if_no_bpf "$d/ep.err"
		bad "$name: edgeprof run failed: $(tail -n 2 "$d/ep.err")"
		continue
	fi
	if ! "$EDGEPROF" export --format gcov-json -o "$d/p.json.gz" "$d/p.data" 2>"$d/json.err" ||
		! "$EDGEPROF" export --format lcov -o "$d/p.info" "$d/p.data" 2>"$d/lcov.err"; then
		bad "$name: export failed: $(head -n 2 "$d/json.err" "$d/lcov.err")"
		continue
	fi
	gj=$(ls "$d"/cov-*.gcov.json.gz 2>/dev/null | head -n 1)
	[ -n "$gj" ] || { bad "$name: gcov wrote no JSON: $(head -n 3 "$d/gcov.log")"; continue; }
	if python3 - "$d/p.json.gz" "$gj" "$d/p.info" >"$d/cmp.txt" 2>&1 <<'PY'; then
import gzip, json, sys

ours = json.load(gzip.open(sys.argv[1]))
gcov = json.load(gzip.open(sys.argv[2]))
problems = []

def shape(path, a, b):
    """Every key of gcov's object B is in A with a value of the same JSON type, and A has no
    other key; lists: each element of A against B's first."""
    if type(a) is not type(b):
        problems.append("%s: %s, gcov %s" % (path, type(a).__name__, type(b).__name__))
    elif isinstance(b, dict):
        if set(a) != set(b):
            problems.append("%s: keys %s, gcov %s" % (path, sorted(a), sorted(b)))
        for k in b:
            if k in a:
                shape(path + "." + k, a[k], b[k])
    elif isinstance(b, list) and b:
        for x in a:
            shape(path + "[]", x, b[0])

def first_with(docs, key):
    for f in docs["files"]:
        for l in f["lines"]:
            if l[key]:
                return l
    return None

shape("", ours, gcov)
if ours["format_version"] != "1":
    problems.append("format_version %r" % ours["format_version"])
# Lines with branches, in both, for the branch objects' shape.
a, b = first_with(ours, "branches"), first_with(gcov, "branches")
if a and b:
    shape("lines[].branches[]", a["branches"][0], b["branches"][0])
else:
    problems.append("no line with branches (ours %s, gcov %s)" % (bool(a), bool(b)))

da, br, fn, cur = {}, {}, {}, None
for l in open(sys.argv[3]):
    l = l.strip()
    if l.startswith("SF:"):
        cur = l[3:]
    elif l.startswith("DA:"):
        n, c = l[3:].split(",")
        da[(cur, int(n))] = int(c)
    elif l.startswith("BRDA:"):
        n, blk, side, c = l[5:].split(",")
        br.setdefault((cur, int(n)), []).append(0 if c == "-" else int(c))
    elif l.startswith("FNDA:"):
        c, name = l[5:].split(",", 1)
        fn[(cur, name)] = int(c)
lines = {(f["file"], l["line_number"]): l for f in ours["files"] for l in f["lines"]}
for k, c in da.items():
    if k not in lines:
        problems.append("%s:%d: lcov %d, missing" % (k[0], k[1], c))
    elif lines[k]["count"] != c:
        problems.append("%s:%d: count %d, lcov %d" % (k[0], k[1], lines[k]["count"], c))
for k, l in lines.items():
    if k not in da:
        problems.append("%s:%d: not in lcov" % k)
    got = [x["count"] for x in l["branches"]]
    if got != br.get(k, []):
        problems.append("%s:%d: branches %s, lcov %s" % (k[0], k[1], got, br.get(k, [])))
    if [x["fallthrough"] for x in l["branches"]] != [False, True] * (len(got) // 2):
        problems.append("%s:%d: fallthrough flags" % k)
funcs = {(f["file"], g["name"]): g["execution_count"] for f in ours["files"] for g in f["functions"]}
if funcs != fn:
    problems.append("functions %s, lcov %s" % (funcs, fn))
if problems:
    print("\n".join(problems[:10]))
    sys.exit(1)
print("same keys and types as gcov's; %d lines, %d branches, %d functions equal lcov's" % (
    len(lines), sum(len(v) for v in br.values()), len(funcs)))
PY
		ok "$name: $(cat "$d/cmp.txt")"
	else
		bad "$name: $(head -n 10 "$d/cmp.txt")"
	fi
done

"$EDGEPROF" export --format gcov-jsn -o "$tmp/x" "$tmp/loops/p.data" 2>"$tmp/err"
rc=$?
if [ "$rc" = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ]; then
	ok "unknown format: exit 2, $(cat "$tmp/err")"
else
	bad "unknown format: exit $rc, $(cat "$tmp/err")"
fi

checks_summary export-gcov-json
