#!/usr/bin/env bash
# End-to-end test of `edgeprof cfg`: builds a small C program with gcc -O2 -g, runs every
# output mode (table, one function, --json, --dot, --stats, help) and checks the results:
# the JSON is well formed, has the documented keys, its edges join block starts (or "exit"),
# its blocks do not overlap and lie in executable sections; the DOT is a digraph; --stats
# names every phase. Exit 0 pass, 77 skip (no gcc/python3), anything else fail.
set -u
cd "$(dirname "$0")/.." || exit 1
EDGEPROF=${EDGEPROF:-build/edgeprof}

fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

command -v gcc >/dev/null || { echo "SKIP: gcc not found"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
[ -x "$EDGEPROF" ] || { echo "FAIL: $EDGEPROF not built (run make)"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/prog.c" <<'PROG'
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static int kind(int c, int x)
{
	switch (c) {
	case 0: return x * 3 + 1;
	case 1: return x ^ 0x55;
	case 2: return x / 7;
	case 3: return x - 43;
	case 4: return x << 3;
	case 5: return x % 13;
	case 6: return ~x;
	default: return -1;
	}
}

__attribute__((noinline)) static long fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv)
{
	long sum = 0;
	int n = argc > 1 ? atoi(argv[1]) : 20;

	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			sum += kind((i + j) % 9, i);
	printf("%ld %ld\n", sum, fib(n % 25));
	return 0;
}
PROG
if ! gcc -O2 -g -o "$tmp/prog" "$tmp/prog.c" 2>"$tmp/gcc.err"; then
	echo "SKIP: gcc cannot build a test program: $(head -1 "$tmp/gcc.err")"
	exit 77
fi
BIN=$tmp/prog

# run NAME ARGS...: runs edgeprof, saves stdout/stderr in $tmp/NAME.{out,err}, sets $rc.
run() {
	local name=$1
	shift
	"$EDGEPROF" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
}

# ok NAME ARGS...: as run, and the command must succeed without diagnostics.
ok() {
	local name=$1
	run "$@"
	if [ "$rc" != 0 ]; then
		fail "edgeprof ${*:2}: exit $rc: $(head -3 "$tmp/$name.err")"
		return 1
	fi
	if [ -s "$tmp/$name.err" ]; then
		fail "edgeprof ${*:2}: unexpected stderr: $(head -3 "$tmp/$name.err")"
	fi
	return 0
}

# --- version and help ---
if ok version --version; then
	grep -qx 'edgeprof 0.1.0' "$tmp/version.out" || fail "--version prints '$(cat "$tmp/version.out")'"
fi
if ok help --help; then
	grep -q '^  cfg ' "$tmp/help.out" || fail "--help does not list the cfg command"
fi
if ok helpcfg help cfg; then
	grep -q 'usage: edgeprof cfg' "$tmp/helpcfg.out" || fail "'help cfg' does not print the cfg usage"
fi
if ok cfghelp cfg --help; then
	cmp -s "$tmp/cfghelp.out" "$tmp/helpcfg.out" || fail "'cfg --help' differs from 'help cfg'"
fi

# --- function table ---
if ok table cfg "$BIN"; then
	head -1 "$tmp/table.out" | grep -q 'ADDRESS.*BLOCKS.*EDGES.*LOOPS.*NAME' ||
		fail "table header missing: $(head -1 "$tmp/table.out")"
	for f in main kind fib; do
		grep -qE "^0x[0-9a-f]+ .* $f\$" "$tmp/table.out" || fail "table has no line for $f"
	done
	tail -1 "$tmp/table.out" | grep -qE '^[0-9]+ functions, [0-9]+ blocks, [0-9]+ edges' ||
		fail "summary line missing: $(tail -1 "$tmp/table.out")"
fi

# --- one function, by name and by address ---
main_addr=0x$(nm "$BIN" | awk '$3 == "main" { sub(/^0+/, "", $1); print $1 }')
if ok func cfg "$BIN" main; then
	for s in 'function main' 'blocks:' 'edges:' 'loops:' 'calls:' 'jump tables:' \
		'unresolved jumps:' 'prog.c:'; do
		grep -q "$s" "$tmp/func.out" || fail "'cfg BIN main' output lacks '$s'"
	done
	grep -qE 'loops: [1-9]' "$tmp/func.out" || fail "'cfg BIN main' finds no loop in main"
fi
if ok funcaddr cfg "$BIN" "$main_addr"; then
	cmp -s "$tmp/func.out" "$tmp/funcaddr.out" || fail "'cfg BIN $main_addr' differs from 'cfg BIN main'"
fi
if ok kind cfg "$BIN" kind; then
	grep -qE 'jump tables: [1-9]' "$tmp/kind.out" || echo "note: no jump table found in kind()"
fi

# --- JSON ---
ok jsonall cfg "$BIN" --json
ok jsonmain cfg "$BIN" main --json
ok jsonstats cfg "$BIN" --json --stats
build_id=$(readelf -n "$BIN" 2>/dev/null | awk '/Build ID/ { print $3 }')
if ! python3 - "$BIN" "$tmp/jsonall.out" "$tmp/jsonmain.out" "$tmp/jsonstats.out" \
	"$main_addr" "$build_id" <<'PY'; then
import json, re, struct, sys

binary, all_path, main_path, stats_path, main_addr, build_id = sys.argv[1:7]
HEX = re.compile(r'^0x[0-9a-f]+$')
errors = []

def err(msg):
    errors.append(msg)

# Executable sections of the ELF64 file: (name, start, end).
with open(binary, 'rb') as fh:
    elf = fh.read()
shoff, = struct.unpack_from('<Q', elf, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from('<HHH', elf, 0x3a)
def shdr(i):
    return struct.unpack_from('<IIQQQQIIQQ', elf, shoff + i * shentsize)
strtab_off = shdr(shstrndx)[4]
execs = []
for i in range(shnum):
    name, typ, flags, addr, off, size = shdr(i)[:6]
    if flags & 0x4 and size:
        nm = elf[strtab_off + name:elf.index(b'\0', strtab_off + name)].decode()
        execs.append((nm, addr, addr + size))
text = [s for s in execs if s[0] == '.text'][0]

def check_doc(path, want_stats):
    try:
        with open(path) as fh:
            doc = json.load(fh)
    except Exception as e:
        err('%s: not valid JSON: %s' % (path, e))
        return None
    b = doc.get('binary')
    if not isinstance(b, dict) or b.get('path') != binary:
        err('%s: binary.path is not %s' % (path, binary))
    elif build_id and b.get('build_id') != build_id:
        err('%s: binary.build_id %r != %r' % (path, b.get('build_id'), build_id))
    if not isinstance(doc.get('functions'), list):
        err('%s: no functions array' % path)
        return None
    if want_stats != ('stats' in doc):
        err('%s: stats key %s' % (path, 'missing' if want_stats else 'unexpected'))
    for f in doc['functions']:
        check_func(path, f)
    return doc

def check_func(path, f):
    for k in ('name', 'addr', 'blocks', 'edges', 'flags', 'calls', 'unresolved'):
        if k not in f:
            err('%s: function %s lacks %r' % (path, f.get('name'), k))
            return
    where = '%s: %s' % (path, f['name'])
    if not HEX.match(f['addr']):
        err('%s: addr %r is not lowercase hex' % (where, f['addr']))
    starts = set()
    prev_end = -1
    for bl in f['blocks']:
        if not HEX.match(bl.get('addr', '')) or not HEX.match(bl.get('end', '')):
            err('%s: bad block %r' % (where, bl))
            continue
        a, e = int(bl['addr'], 16), int(bl['end'], 16)
        if e <= a:
            err('%s: empty block %s' % (where, bl))
        if a < prev_end:
            err('%s: block %s overlaps the previous one' % (where, bl['addr']))
        prev_end = e
        if not any(lo <= a and e <= hi for _, lo, hi in execs):
            err('%s: block %s..%s outside the executable sections' % (where, bl['addr'], bl['end']))
        starts.add(bl['addr'])
    if f['blocks'] and f['addr'] not in starts:
        err('%s: entry %s is not a block start' % (where, f['addr']))
    for ed in f['edges']:
        if ed.get('from') not in starts:
            err('%s: edge from %r is not a block start' % (where, ed.get('from')))
        if ed.get('to') != 'exit' and ed.get('to') not in starts:
            err('%s: edge to %r is neither a block start nor "exit"' % (where, ed.get('to')))
        if not isinstance(ed.get('kind'), str):
            err('%s: edge without kind %r' % (where, ed))
    for lp in f.get('loops', []):
        if lp.get('header') not in starts:
            err('%s: loop header %r not a block' % (where, lp.get('header')))

doc = check_doc(all_path, False)
if doc:
    names = {f['name']: f for f in doc['functions']}
    for n in ('main', 'kind', 'fib'):
        if n not in names:
            err('%s: no function %s' % (all_path, n))
    if 'main' in names:
        m = names['main']
        if m['addr'] != main_addr:
            err('main at %s, nm says %s' % (m['addr'], main_addr))
        if not any(text[1] <= int(b['addr'], 16) < text[2] for b in m['blocks']):
            err('main has no block in .text')
        if not m.get('loops'):
            err('main: no loops in JSON')
        if not any(e['to'] == 'exit' for e in m['edges']):
            err('main: no edge to exit')
doc = check_doc(main_path, False)
if doc and [f['name'] for f in doc['functions']] != ['main']:
    err('%s: expected exactly main' % main_path)
doc = check_doc(stats_path, True)
if doc and not all(k in doc['stats'].get('seconds', {}) for k in
                   ('load', 'symbols', 'build', 'noreturn', 'analyze', 'output')):
    err('%s: stats.seconds lacks a phase' % stats_path)
for e in errors[:20]:
    print('  ' + e)
sys.exit(1 if errors else 0)
PY
	fail "JSON validation (see above)"
fi

# --- DOT ---
if ok dot cfg "$BIN" main --dot; then
	python3 - "$tmp/dot.out" <<'PY' || fail "DOT output malformed: $(head -2 "$tmp/dot.out")"
import re, sys
s = open(sys.argv[1]).read()
ok = re.match(r'\s*digraph\s+"main"\s*\{', s) and s.rstrip().endswith('}')
ok = ok and s.count('{') == s.count('}') and re.search(r'\bb\d+ -> (b\d+|exit) \[label="', s)
ok = ok and re.search(r'-> exit ', s) and 'prog.c:' in s
sys.exit(0 if ok else 1)
PY
fi
if command -v dot >/dev/null; then
	dot -Tsvg "$tmp/dot.out" -o /dev/null 2>"$tmp/dot.err" || fail "graphviz rejects the DOT: $(head -1 "$tmp/dot.err")"
fi

# --- stats ---
if ok stats cfg "$BIN" --stats; then
	for p in load symbols build noreturn analyze output total; do
		grep -qE "^$p +[0-9]+\.[0-9]+\$" "$tmp/stats.out" || fail "--stats lacks phase '$p'"
	done
	for t in functions blocks edges instructions 'jump tables' unresolved noreturn irreducible loops; do
		grep -q "^$t " "$tmp/stats.out" || fail "--stats lacks total '$t'"
	done
	grep -q ADDRESS "$tmp/stats.out" && fail "--stats alone also prints the function table"
fi
if ok funcstats cfg "$BIN" main --stats; then
	grep -q 'function main' "$tmp/funcstats.out" && grep -qE '^analyze ' "$tmp/funcstats.out" ||
		fail "'cfg BIN main --stats' lacks the function or the stats"
fi

# --- -v: details on stderr, same report on stdout ---
"$EDGEPROF" -v cfg "$BIN" >"$tmp/verbose.out" 2>"$tmp/verbose.err"
rc=$?
if [ "$rc" != 0 ]; then
	fail "edgeprof -v cfg BIN: exit $rc"
elif ! cmp -s "$tmp/verbose.out" "$tmp/table.out"; then
	fail "-v changes the report on stdout"
elif ! [ -s "$tmp/verbose.err" ] || grep -qv '^edgeprof: ' "$tmp/verbose.err"; then
	fail "-v: expected 'edgeprof: ' lines on stderr, got: $(head -2 "$tmp/verbose.err")"
fi

# --- a function another function runs into names where (tests/programs/runs_off.c: ro_a's
# jg into ro_b's tail); the target is read from objdump, not from edgeprof ---
if gcc -O2 -o "$tmp/runs_off" tests/programs/runs_off.c 2>"$tmp/runs_off.cc"; then
	tgt=$(objdump -d "$tmp/runs_off" | awk '/<ro_a>:/ { on = 1 } on && $0 ~ /\tjg / { print "0x" $(NF - 1); exit }')
	if ok foreign cfg "$tmp/runs_off" ro_b; then
		grep -q "entered by another function's code at $tgt\$" "$tmp/foreign.out" ||
			fail "cfg ro_b does not name $tgt (ro_a's jump target): $(grep entered "$tmp/foreign.out")"
	fi
	if ok foreignjson cfg "$tmp/runs_off" ro_b --json; then
		python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
f = d["functions"][0] if "functions" in d else d
sys.exit(0 if f.get("foreign_entries") == [sys.argv[2]] else "foreign_entries %s" % f.get("foreign_entries"))' \
			"$tmp/foreignjson.out" "$tgt" || fail "cfg --json ro_b: foreign_entries is not [$tgt]"
	fi
else
	fail "cannot build tests/programs/runs_off.c: $(head -2 "$tmp/runs_off.cc")"
fi

# --- a stripped copy still works (functions from .eh_frame) ---
strip -o "$tmp/prog.stripped" "$BIN"
if ok stripped cfg "$tmp/prog.stripped"; then
	tail -1 "$tmp/stripped.out" | grep -q 'stripped' || fail "stripped binary not reported as stripped"
fi

if [ "$fails" != 0 ]; then
	echo "cli-cfg: $fails failure(s)"
	exit 1
fi
echo "cli-cfg: ok"
exit 0
