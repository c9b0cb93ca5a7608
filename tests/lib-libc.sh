#!/usr/bin/env bash
# `run --lib libc` with libc counted in process: libc's sites are patched at the dynamic
# loader's rendezvous, except those of the functions the loader runs before it (ifunc
# resolvers, __libc_early_init and what they call), which keep uprobes from the exec. Checked
# against the uprobe mechanism (--probes uprobe, itself checked against callgrind by lib.sh
# and oracle-run.sh) in the same environment: callgrind's own runs of libc differ in the ifunc
# resolvers and the string functions they pick (valgrind's CPU has no AVX-512), which this
# comparison does not. On a private copy of libc.so.6 (found through LD_LIBRARY_PATH), so
# that no uprobe goes into the libc every process of the machine maps (registering thousands
# there stalls fork() machine-wide). For sed (one process), fork_child (children that
# inherit the patched code and the shared counters, and exit through exit()) and longjmp
# (libc's longjmp, whose entry the tracer watches, so no counter may be written over it):
#  - the program's output is the native one;
#  - at least 90% of libc's probe sites are counted in process;
#  - libc's section equals the --probes uprobe run's in every block, edge and invocation
#    count that run determines (and the binary's section too).
# Needs root and BPF (CI=true turns a skip into a failure). Exit 0 pass, 77 skip, else fail.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/support/bpf-checks.sh
source tests/support/bpf-checks.sh
# shellcheck source=tests/support/checks.sh
source tests/support/checks.sh
EDGEPROF=${EDGEPROF:-build/edgeprof}

[ -x "$EDGEPROF" ] || { echo "FAIL: build first (make all)"; exit 1; }
EDGEPROF=$(realpath "$EDGEPROF")
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
for c in gcc python3 sed setarch; do
	command -v "$c" >/dev/null || { echo "SKIP: $c not found"; exit 77; }
done
libc=$(ldd /bin/true | awk '/libc\.so/ {print $3}')
[ -n "$libc" ] && [ -f "$libc" ] || { echo "SKIP: no shared libc.so.6"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "${tmp:?}"' EXIT
mkdir "$tmp/lib"
cp "$(realpath "$libc")" "$tmp/lib/libc.so.6"
export LD_LIBRARY_PATH=$tmp/lib

# "PERCENT text": the share of a section's probe sites counted in process.
mechanisms() {
	python3 - "$1" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["probes"]
by = {}
for c in p["classes"].values():
    by[c["mechanism"]] = by.get(c["mechanism"], 0) + c["sites"]
inproc = by.get("in-process", 0)
print(f"{100 * inproc // max(p['sites'], 1)} {inproc} of {p['sites']} libc sites in process, {by.get('uprobe', 0)} uprobes")
PY
}

# Compares two sections (report --json) count by count: prints a summary, fails on any
# difference.
same_counts() {
	python3 - "$1" "$2" <<'PY'
import json, sys
def load(f):
    p = json.load(open(f))
    c = {}
    for fn in p["functions"]:
        c[("inv", fn["addr"])] = fn["count"]
        for b in fn.get("blocks", []):
            c[("block", fn["addr"], b["addr"])] = b["count"]
        for e in fn.get("edges", []):
            c[("edge", fn["addr"], e["from"], e["to"], e.get("kind"))] = e["count"]
    return p, c
pa, a = load(sys.argv[1])
pb, b = load(sys.argv[2])
names = {fn["addr"]: fn["name"] for fn in pa["functions"]}
# A count uprobes cannot determine (null) that the in-process counters measured is no
# difference: a block of only VEX instructions (no uprobe there) in a function with block
# counters and entries from another function's code (glibc's __memset_avx2_unaligned_erms).
# The reverse, a count the in-process run lost, is one.
only = [k for k in a if a[k] is not None and k in b and b[k] is None]
diff = [k for k in set(a) | set(b) if a.get(k) != b.get(k) and k not in only]
kinds = {k: sum(1 for x in a if x[0] == k) for k in ("block", "edge", "inv")}
ran = sum(1 for x, v in a.items() if x[0] == "block" and v)
if diff:
    for k in sorted(diff)[:5]:
        print(f"{k[0]} {names.get(k[1], k[1])} {' '.join(map(str, k[2:]))}: in process {a.get(k)}, uprobes {b.get(k)}")
    sys.exit(f"{len(diff)} differences")
print(f"{kinds['block']} blocks ({ran} ran), {kinds['edge']} edges, {kinds['inv']} functions: 0 differences ({len(only)} counts known only in process)")
PY
}

for p in fork_child longjmp; do
	gcc -O2 -g -o "$tmp/$p" "tests/programs/$p.c" || { echo "FAIL: cannot build $p"; exit 1; }
done
seq 1 2000 | sed 's/$/ abcabc a-b-a/' >"$tmp/input"
declare -A CMDS=([sed]="sed -e s/a/b/g -e /7/d $tmp/input" [fork_child]="$tmp/fork_child 20"
	[longjmp]="$tmp/longjmp")

for name in sed fork_child longjmp; do
	read -r -a cmd <<<"${CMDS[$name]}"
	setarch -R "${cmd[@]}" >"$tmp/native" 2>/dev/null
	for mech in auto uprobe; do
		if ! setarch -R "$EDGEPROF" -q run --probes "$mech" --lib libc -o "$tmp/$mech.data" -- "${cmd[@]}" \
			>"$tmp/out" 2>"$tmp/err"; then
			skip_if_no_bpf "$tmp/err"
			bad "$name --probes $mech: edgeprof run --lib libc failed: $(head -c 300 "$tmp/err")"
			continue 2
		fi
		cmp -s "$tmp/native" "$tmp/out" || bad "$name --probes $mech: output differs from the native one"
		"$EDGEPROF" report --lib libc --json "$tmp/$mech.data" >"$tmp/$mech-lib.json" 2>/dev/null &&
			"$EDGEPROF" report --json "$tmp/$mech.data" >"$tmp/$mech-main.json" 2>/dev/null ||
			{ bad "$name --probes $mech: edgeprof report failed"; continue 2; }
	done
	msg=$(mechanisms "$tmp/auto-lib.json")
	[ "${msg%% *}" -ge 90 ] && ok "$name: ${msg#* }" || bad "$name: libc not mostly in process: ${msg#* }"
	for section in lib main; do
		if msg=$(same_counts "$tmp/auto-$section.json" "$tmp/uprobe-$section.json" 2>&1); then
			ok "$name, $section section: in process = uprobes: $msg"
		else
			bad "$name, $section section: in process != uprobes: $msg"
		fi
	done
done

checks_summary lib-libc
