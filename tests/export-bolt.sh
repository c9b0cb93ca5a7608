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
		if python3 - "$d" >"$d/cmp.txt" 2>&1 <<'PY'; then
import collections, re, sys
d = sys.argv[1]

def records(path):
    out = {}
    for line in open(path):
        f = line.split()
        if len(f) != 8:
            sys.exit("bad record in %s: %r" % (path, line))
        out[tuple(f[:6])] = int(f[7])
    return out

bolt, ep = records(d + "/bolt.fdata"), records(d + "/ep.fdata")
# BOLT's view: which functions it instruments, which have an entry block without successors.
simple, no_succ, cur, in_entry = {}, set(), None, False
for line in open(d + "/cfg.txt"):
    m = re.match(r'Binary Function "(.*?)(\(\*\d+\))?" after building cfg', line)
    if m:
        cur, in_entry = m.group(1), False
        continue
    m = re.match(r'\s+IsSimple\s+:\s+(\d)', line)
    if m and cur:
        simple[cur] = m.group(1) == "1"
    if re.match(r'^\.LBB', line):
        in_entry = False
    if cur and "Entry Point" in line:
        in_entry = True
        no_succ.add(cur)
    if in_entry and "Successors:" in line:
        no_succ.discard(cur)
# The instructions of the binary, by function symbol and offset.
insn, syms, base = {}, {}, None
for line in open(d + "/dis.txt"):
    m = re.match(r'([0-9a-f]+) <(.*)>:', line)
    if m:
        base = (m.group(2), int(m.group(1), 16))
        continue
    m = re.match(r'\s+([0-9a-f]+):\s+(.*)', line)
    if m and base:
        insn[(base[0], int(m.group(1), 16) - base[1])] = m.group(2)
plain = lambda bolt_name: re.sub(r'/\d+$', '', bolt_name)

def text(func, off):
    return insn.get((plain(func), int(off, 16)), "")

into = lambda recs, f: sum(n for k, n in recs.items() if k[3] == "1" and k[4] == f and k[5] == "0")
# Functions BOLT gives entries inside (around calls with landing pads): its own artifact.
inner_entries = {k[4] for k in bolt if k[0] == "0" and k[5] != "0"}
same = only_bolt = 0
explained = collections.Counter()
fails = []
for k in sorted(set(bolt) | set(ep)):
    if k in bolt and k in ep:
        if bolt[k] != ep[k]:
            fails.append("count differs: %s bolt %d edgeprof %d" % (" ".join(k), bolt[k], ep[k]))
        same += 1
    elif k in bolt:
        t = text(k[1], k[2])
        if k[0] == "1" and (re.search(r'call\s+\*', t) or
                            (re.search(r'jmp\s+\*', t) and k[5] == "0" and k[1] != k[4])):
            only_bolt += 1
        elif k[0] == "0" and k[4] in inner_entries:
            explained["BOLT's entries inside a function with landing pads"] += 1
        else:
            fails.append("only BOLT: %s %d (%s)" % (" ".join(k), bolt[k], t))
    else:
        t = text(k[1], k[2])
        if k[0] == "1" and not simple.get(k[1], True):
            explained["function BOLT does not instrument"] += 1
        elif k[0] == "0" and k[4] in inner_entries:
            explained["BOLT's entries inside a function with landing pads"] += 1
        elif k[0] == "0" and (into(bolt, k[4]) == into(ep, k[4]) or k[4] in no_succ):
            explained["entry record (indirect calls, or an entry block without successors)"] += 1
        elif k[0] == "1" and k[1] == k[4] and re.match(r'j(?!mp)', t) and \
                re.search(r'<([^>+]*)', t) and plain(k[1]) != re.search(r'<([^>+]*)', t).group(1):
            explained["fall-through of a jcc leaving the function"] += 1
        else:
            fails.append("only edgeprof: %s %d (%s)" % (" ".join(k), ep[k], t))
print("%d records equal, %d only BOLT's (indirect calls), %d explained (%s)" % (
    same, only_bolt, sum(explained.values()),
    "; ".join("%d %s" % (n, w) for w, n in sorted(explained.items())) or "none"))
for f in fails:
    print(f)
sys.exit(1 if fails or not same else 0)
PY
			ok "$opt $name: $(head -n 1 "$d/cmp.txt")"
		else
			bad "$opt $name: $(head -n 6 "$d/cmp.txt")"
		fi
	done
done

checks_summary export-bolt
