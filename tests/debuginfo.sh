#!/usr/bin/env bash
# Separate debug files (cfg/debuginfo.c): a gcc -O2 -g program is split as Debian does
# (objcopy --only-keep-debug; strip --strip-debug --strip-unneeded) and its stripped copy must
# get back, from the debug file alone, the function names, sizes and source lines of the
# unstripped build (`edgeprof cfg`, compared address by address with the unstripped file):
#  - by build-id, DIR/.build-id/xx/rest.debug with DIR from $EDGEPROF_DEBUG_DIR;
#  - by .gnu_debuglink (objcopy --add-gnu-debuglink): next to the file, in its .debug/
#    subdirectory, and under DIR followed by the file's directory;
#  - and never from a debug file that does not belong to it: another build's debug file at
#    the build-id path, or a debuglink target whose CRC differs, gives no names (fun_<hex>);
#  - `edgeprof run` + `report` of the stripped copy: the report names the functions and their
#    source lines, with the same counts as a run of the unstripped build (needs root and BPF;
#    without them the cfg part still runs and the script exits 77).
# Exit 0 pass, 77 skip, anything else fail.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/support/bpf-checks.sh
source tests/support/bpf-checks.sh
# shellcheck source=tests/support/checks.sh
source tests/support/checks.sh
EDGEPROF=${EDGEPROF:-build/edgeprof}

[ -x "$EDGEPROF" ] || { echo "FAIL: $EDGEPROF not built (run make)"; exit 1; }
EDGEPROF=$(realpath "$EDGEPROF")
for c in gcc objcopy strip readelf python3; do
	command -v "$c" >/dev/null || { echo "SKIP: $c not found"; exit 77; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset EDGEPROF_DEBUG_DIR

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
gcc -O2 -g -o "$tmp/prog" "$tmp/prog.c" || { echo "SKIP: gcc cannot build"; exit 77; }
# Another build of the same source (another build-id): its debug file must never be taken.
gcc -O1 -g -o "$tmp/other" "$tmp/prog.c" || { bad "cannot build the -O1 copy"; exit 1; }
objcopy --only-keep-debug "$tmp/prog" "$tmp/prog.debug"
objcopy --only-keep-debug "$tmp/other" "$tmp/other.debug"
strip --strip-debug --strip-unneeded -o "$tmp/prog.s" "$tmp/prog"
bid=$(readelf -n "$tmp/prog.s" | awk '/Build ID/ {print $3}')
[ -n "$bid" ] || { bad "gcc gave the program no build-id"; exit 1; }
readelf -S "$tmp/prog.s" | grep -q '\.symtab\|\.debug_info' && bad "strip left .symtab or DWARF"

# table FILE [ENV...]: `edgeprof cfg FILE`'s function table as "ADDRESS NAME" lines.
table() {
	local f=$1
	shift
	env "$@" "$EDGEPROF" cfg "$f" 2>"$tmp/cfg.err" | awk 'NR > 1 && $1 ~ /^0x/ {print $1, $NF}'
}
# line FILE FUNC [ENV...]: the "source" line of `edgeprof cfg FILE FUNC`.
line() {
	local f=$1 fn=$2
	shift 2
	env "$@" "$EDGEPROF" cfg "$f" "$fn" 2>/dev/null | awk '$1 == "source" {print $2}'
}

table "$tmp/prog" >"$tmp/want"
for fn in main kind fib; do
	grep -q " $fn\$" "$tmp/want" || bad "the unstripped build has no function $fn"
done
want_line=$(line "$tmp/prog" kind)
case $want_line in *prog.c:*) ;; *) bad "the unstripped build has no source line for kind: '$want_line'" ;; esac

# found LABEL FILE ENV...: FILE's functions carry the unstripped build's names, addresses,
# and kind's source line.
found() {
	local label=$1 f=$2 w g
	shift 2
	table "$f" "$@" >"$tmp/got"
	for fn in main kind fib; do
		w=$(grep " $fn\$" "$tmp/want")
		grep -qx "$w" "$tmp/got" || bad "$label: '$w' missing: $(grep -c . "$tmp/got") functions, $(head -c 200 "$tmp/cfg.err")"
	done
	g=$(line "$f" kind "$@")
	[ "$g" = "$want_line" ] || bad "$label: kind's source line is '$g', want '$want_line'"
	ok "$label: names, addresses and lines of the unstripped build"
}
# notfound LABEL FILE ENV...: FILE's functions are unnamed and without lines (no debug file
# was taken).
notfound() {
	local label=$1 f=$2
	shift 2
	table "$f" "$@" >"$tmp/got"
	[ -s "$tmp/got" ] || bad "$label: edgeprof cfg listed no functions: $(head -c 200 "$tmp/cfg.err")"
	grep -qE ' (kind|fib)$' "$tmp/got" && bad "$label: names came from a debug file that does not belong to the file"
	[ -z "$(line "$f" "$(awk 'NR == 1 {print $1}' "$tmp/got")" "$@")" ] ||
		bad "$label: source lines came from a debug file that does not belong to the file"
	ok "$label: no names or lines taken"
}

notfound "stripped, no debug file" "$tmp/prog.s"

mkdir -p "$tmp/dbg/.build-id/${bid:0:2}"
cp "$tmp/prog.debug" "$tmp/dbg/.build-id/${bid:0:2}/${bid:2}.debug"
found "build-id" "$tmp/prog.s" EDGEPROF_DEBUG_DIR="$tmp/none:$tmp/dbg"
EDGEPROF_DEBUG_DIR=$tmp/dbg "$EDGEPROF" cfg "$tmp/prog.s" 2>/dev/null | tail -n 1 |
	grep -q "debug file $tmp/dbg/.build-id/" || bad "build-id: the summary does not name the debug file"

# Another build's debug file at this build's build-id path: refused (build-ids differ).
mkdir -p "$tmp/wrong/.build-id/${bid:0:2}"
cp "$tmp/other.debug" "$tmp/wrong/.build-id/${bid:0:2}/${bid:2}.debug"
notfound "another build's debug file at the build-id path" "$tmp/prog.s" EDGEPROF_DEBUG_DIR="$tmp/wrong"

# .gnu_debuglink: objcopy records the name and the CRC of the debug file.
mkdir -p "$tmp/l1" "$tmp/l2/.debug" "$tmp/l3" "$tmp/gdir$tmp/l3" "$tmp/l4"
for d in l1 l2 l3 l4; do
	(cd "$tmp" && objcopy --add-gnu-debuglink=prog.debug prog.s "$d/prog.l")
done
cp "$tmp/prog.debug" "$tmp/l1/"
cp "$tmp/prog.debug" "$tmp/l2/.debug/"
cp "$tmp/prog.debug" "$tmp/gdir$tmp/l3/"
found "debuglink next to the file" "$tmp/l1/prog.l"
found "debuglink in .debug/" "$tmp/l2/prog.l"
found "debuglink under a debug directory" "$tmp/l3/prog.l" EDGEPROF_DEBUG_DIR="$tmp/gdir"
notfound "debuglink target not there" "$tmp/l3/prog.l"
# The same name and build-id but other bytes (another CRC): refused.
cp "$tmp/prog.debug" "$tmp/l4/prog.debug"
printf 'x' >>"$tmp/l4/prog.debug"
notfound "debuglink target with another CRC" "$tmp/l4/prog.l"

# The unstripped build does not look elsewhere (its own .symtab and lines win).
table "$tmp/prog" EDGEPROF_DEBUG_DIR="$tmp/wrong" >"$tmp/got"
if cmp -s "$tmp/want" "$tmp/got"; then
	ok "unstripped build: its own symbols, whatever the debug directories hold"
else
	bad "the unstripped build's table changed with a debug directory set"
fi

# run + report: names, lines and counts of the stripped copy with its debug file.
if [ "$(id -u)" != 0 ]; then
	checks_summary debuginfo || exit 1
	echo "SKIP: run + report need root (cfg part passed)"
	exit 77
fi
for v in prog prog.s; do
	if ! EDGEPROF_DEBUG_DIR=$tmp/dbg "$EDGEPROF" -q run -o "$tmp/$v.data" -- "$tmp/$v" 30 \
		>/dev/null 2>"$tmp/run.err"; then
		[ "$fails" = 0 ] && skip_if_no_bpf "$tmp/run.err"
		bad "edgeprof run $v failed: $(head -c 300 "$tmp/run.err")"
		continue
	fi
	"$EDGEPROF" report --json "$tmp/$v.data" >"$tmp/$v.json" || bad "report --json $v failed"
	"$EDGEPROF" report "$tmp/$v.data" >"$tmp/$v.txt" || bad "report $v failed"
done
if [ -s "$tmp/prog.s.txt" ]; then
	grep -qE "^ +[0-9]+ +[0-9]+ +[0-9.]+% +kind +.*prog\.c:[0-9]+" "$tmp/prog.s.txt" ||
		bad "report of the stripped copy: no 'kind' line with its source: $(grep -m 3 -E 'kind|fun_' "$tmp/prog.s.txt")"
	cat >"$tmp/cmp.py" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
fa = {f["name"]: f for f in a["functions"]}
fb = {f["name"]: f for f in b["functions"]}
bad = 0
for name in ("main", "kind", "fib"):
    if name not in fb:
        print("stripped copy's profile has no function", name); bad += 1; continue
    ca = sorted((bl["addr"], bl["count"]) for bl in fa[name]["blocks"])
    cb = sorted((bl["addr"], bl["count"]) for bl in fb[name]["blocks"])
    if ca != cb or fa[name]["count"] != fb[name]["count"]:
        print(name, "block counts differ from the unstripped run"); bad += 1
    elif not fb[name]["count"]:
        print(name, "never ran"); bad += 1
    if fb[name].get("status") == "excluded":
        print(name, "excluded"); bad += 1
sys.exit(1 if bad else 0)
PY
	if python3 "$tmp/cmp.py" "$tmp/prog.json" "$tmp/prog.s.json" >"$tmp/cmp.out" 2>&1; then
		ok "run + report of the stripped copy: names, source lines and counts of the unstripped build"
	else
		bad "counts: $(head -c 400 "$tmp/cmp.out")"
	fi
fi
checks_summary debuginfo
