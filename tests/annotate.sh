#!/usr/bin/env bash
# `edgeprof annotate`: tests/programs/loops.c (gcc -O2 -g) is profiled and annotated, and
# what it prints is checked against `edgeprof report --json` (whose counts the other tests
# check against callgrind) and the lcov export:
# - every executed function is annotated (--top 1000), hottest first; every block's count
#   and every out-edge's target, kind and count equal the JSON's;
# - every source line's count, taken as the largest over the functions holding its code,
#   equals the lcov tracefile's DA count, and every line lcov counts as run is shown;
# - FUNCTION and FILE:LINE choose the function(s) (collatz_steps, loops.c:39), --no-source
#   prints no source; a binary whose source file is gone prints the disassembly and one
#   "source: cannot read" line per function, and --source-map OLD=NEW finds the file again;
# - bad input: one "edgeprof: " line and exit 1 (missing or truncated profile, no such
#   function, no code at FILE:LINE, a binary of another build); a bad command line exit 2.
# Needs root and BPF (edgeprof run) and python3.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/support/bpf-checks.sh
source tests/support/bpf-checks.sh
# shellcheck source=tests/support/checks.sh
source tests/support/checks.sh
need_root_and python3

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"

gcc -O2 -g -o "$tmp/loops" tests/programs/loops.c || { echo "FAIL: cannot build loops.c"; exit 1; }
if ! timeout -k 5 120 "$EDGEPROF" -q run -o "$tmp/p.data" -- "$tmp/loops" 2 >/dev/null 2>"$tmp/run.err"; then
	skip_if_no_bpf "$tmp/run.err"
	echo "FAIL: edgeprof run: $(tail -n 2 "$tmp/run.err")"
	exit 1
fi
"$EDGEPROF" report --json "$tmp/p.data" >"$tmp/p.json" || { echo "FAIL: report --json"; exit 1; }
"$EDGEPROF" export --format lcov -o "$tmp/p.info" "$tmp/p.data" 2>/dev/null || { echo "FAIL: export lcov"; exit 1; }

# --- all functions against the JSON and the tracefile -----------------------------------------
if "$EDGEPROF" annotate "$tmp/p.data" --top 1000 >"$tmp/all.txt" 2>"$tmp/all.err" &&
	python3 - "$tmp/p.json" "$tmp/all.txt" "$tmp/p.info" >"$tmp/cmp.txt" 2>&1 <<'PY'; then
import json, re, sys

doc = json.load(open(sys.argv[1]))
funcs = {int(f["addr"], 16): f for f in doc["functions"]}
text = open(sys.argv[2]).read().split("\n")
problems, seen, order, lines = [], set(), [], {}
cur = blocks = None
src = None
for l in text:
    m = re.match(r"== (\S+) at 0x([0-9a-f]+)", l)
    if m:
        cur = funcs[int(m.group(2), 16)]
        blocks = {int(b["addr"], 16): b for b in cur["blocks"]}
        seen.add(int(m.group(2), 16))
        order.append(cur)
        src = None
        continue
    m = re.match(r"source (\S+) \(", l)
    if m:
        src = m.group(1)
        continue
    if l.startswith("disassembly"):
        src = None
        continue
    m = re.match(r"\s+(\d+|\?)\s+(\d+)  ", l)
    if src and m:
        k = (src, int(m.group(2)))
        lines[k] = max(lines.get(k, -1), int(m.group(1)))
        continue
    m = re.match(r"block 0x([0-9a-f]+)(?: \(entry\))?: (\d+|\?)", l)
    if m:
        addr = int(m.group(1), 16)
        b = blocks[addr]
        want = "?" if b["count"] is None else str(b["count"])
        if m.group(2) != want:
            problems.append("%s block %x: %s, JSON %s" % (cur["name"], addr, m.group(2), want))
        outs = sorted((e["to"], e["kind"], "?" if e["count"] is None else str(e["count"]))
                      for e in cur["edges"] if int(e["from"], 16) == addr)
        continue
    if l.startswith("  -> "):
        got = sorted(tuple(x.split(" ")) for x in l[5:].split(", -> "))
        got = [(t if t == "exit" else t, k, c) for t, k, c in got]
        if got != outs:
            problems.append("%s block %x edges: %s, JSON %s" % (cur["name"], addr, got, outs))
executed = {a for a, f in funcs.items() if f["status"] != "excluded" and
            sum(b["count"] or 0 for b in f["blocks"]) > 0}
if seen != executed:
    problems.append("annotated %d functions, %d executed" % (len(seen), len(executed)))
tot = [sum(b["count"] or 0 for b in f["blocks"]) for f in order]
if tot != sorted(tot, reverse=True):
    problems.append("not hottest first: %s" % tot)
da, cur = {}, None
for l in open(sys.argv[3]):
    l = l.strip()
    if l.startswith("SF:"):
        cur = l[3:]
    elif l.startswith("DA:"):
        n, c = l[3:].split(",")
        da[(cur, int(n))] = int(c)
for k, c in lines.items():
    if da.get(k) != c:
        problems.append("%s:%d: annotate %d, lcov %s" % (k[0], k[1], c, da.get(k)))
for k, c in da.items():
    if c > 0 and k[0].endswith("/loops.c") and k not in lines:
        problems.append("%s:%d: lcov %d, not shown" % (k[0], k[1], c))
if problems:
    print("\n".join(problems[:10]))
    sys.exit(1)
print("%d functions, %d blocks, %d source lines equal the JSON's and lcov's" % (
    len(seen), sum(len(f["blocks"]) for f in order), len(lines)))
PY
	ok "$(cat "$tmp/cmp.txt")"
else
	bad "annotate vs report --json: $(head -n 10 "$tmp/cmp.txt" "$tmp/all.err")"
fi

# --- choosing functions, --no-source ----------------------------------------------------------
out=$("$EDGEPROF" annotate "$tmp/p.data" collatz_steps 2>&1)
if [ "$(grep -c '^== ' <<<"$out")" = 1 ] && grep -q '^== collatz_steps at' <<<"$out" &&
	grep -q '^source .*loops.c' <<<"$out" && grep -q '^block ' <<<"$out"; then
	ok "FUNCTION: collatz_steps alone, source and disassembly"
else
	bad "FUNCTION: $(head -n 5 <<<"$out")"
fi
line=$(grep -n 'x = (x & 1)' tests/programs/loops.c | cut -d: -f1)
out=$("$EDGEPROF" annotate "$tmp/p.data" "programs/loops.c:$line" 2>&1)
if [ "$(grep -c '^== ' <<<"$out")" -ge 1 ] && [ "$(grep '^== ' <<<"$out" | grep -vc 'collatz_steps')" = 0 ]; then
	ok "FILE:LINE: programs/loops.c:$line is in collatz_steps"
else
	bad "FILE:LINE: $(grep '^== ' <<<"$out" | head -n 3)"
fi
out=$("$EDGEPROF" annotate --no-source "$tmp/p.data" --top 2 2>&1)
if [ "$(grep -c '^== ' <<<"$out")" = 2 ] && ! grep -q '^source' <<<"$out" && grep -q '^block ' <<<"$out"; then
	ok "--no-source: disassembly only"
else
	bad "--no-source: $(head -n 5 <<<"$out")"
fi

# --- source files that cannot be read --------------------------------------------------------
mkdir -p "$tmp/src"
cp tests/programs/loops.c "$tmp/src/"
(cd "$tmp/src" && gcc -O2 -g -o "$tmp/moved" loops.c)
"$EDGEPROF" -q run -o "$tmp/m.data" -- "$tmp/moved" 2 >/dev/null 2>&1
mv "$tmp/src" "$tmp/elsewhere"
out=$("$EDGEPROF" annotate "$tmp/m.data" --top 3 2>"$tmp/m.err")
rc=$?
nf=$(grep -c '^== ' <<<"$out")
if [ "$rc" = 0 ] && [ "$nf" = 3 ] && [ "$(grep -c '^source: cannot read' <<<"$out")" = 3 ] &&
	[ "$(grep -c '^source' <<<"$out")" = 3 ] && grep -q '^block ' <<<"$out" && [ ! -s "$tmp/m.err" ]; then
	ok "no source file: disassembly, and $(grep -m1 '^source: cannot read' <<<"$out")"
else
	bad "no source file: exit $rc, $(grep '^source' <<<"$out" | head -n 3) $(cat "$tmp/m.err")"
fi
out=$("$EDGEPROF" annotate "$tmp/m.data" --top 3 --source-map "$tmp/src=$tmp/elsewhere" 2>&1)
if ! grep -q '^source: cannot read' <<<"$out" && [ "$(grep -c "^source $tmp/src/loops.c" <<<"$out")" = 3 ]; then
	ok "--source-map OLD=NEW reads the moved file"
else
	bad "--source-map: $(grep '^source' <<<"$out" | head -n 3)"
fi

# --- bad input ------------------------------------------------------------------------------
expect() { # expect STATUS NAME ARGS...: exit STATUS and one "edgeprof: " line on stderr
	local want=$1 name=$2 rc
	shift 2
	"$EDGEPROF" annotate "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" = "$want" ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q '^edgeprof: ' "$tmp/err"; then
		ok "$name: exit $rc, $(cat "$tmp/err")"
	else
		bad "$name: exit $rc (want $want), $(head -n 3 "$tmp/err")"
	fi
}
head -c 300 "$tmp/p.data" >"$tmp/cut.data"
expect 1 "missing profile" "$tmp/none.data" main
expect 1 "truncated profile" "$tmp/cut.data"
expect 1 "no such function" "$tmp/p.data" no_such_function
expect 1 "no code at FILE:LINE" "$tmp/p.data" loops.c:100000
expect 1 "binary of another build" "$tmp/p.data" --binary /bin/true
expect 2 "bad --top" "$tmp/p.data" --top x
expect 2 "unknown option" "$tmp/p.data" --frobnicate
expect 2 "too many arguments" "$tmp/p.data" main extra

checks_summary annotate
