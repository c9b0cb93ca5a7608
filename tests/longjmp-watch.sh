#!/bin/bash
# Longjmps without stops: in a program that calls setjmp and longjmp, the frames a longjmp
# leaves are carried by longjmp pseudo-edges (derived by propagation), so `edgeprof run`
# stops the program at no longjmp until it catches a signal; from its first caught signal on,
# every longjmp is watched and unwound (a handler could longjmp out of any instruction).
# tests/programs/longjmp_count.c counts its own longjmps (and those after its SIGUSR1); for
# gcc -O0/-O2 and both counting mechanisms this checks, against the program's own figures:
# without a signal, 0 longjmps unwound and the derived second returns of setjmp
# (run.longjmp.resumed) = its longjmps; with the signal, the longjmps unwound = those after
# it and the derived ones still = all of them; 0 violations and the native output always.
# (Edge and block counts of these programs are checked against callgrind by oracle-run.)
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/support/checks.sh
source tests/support/checks.sh

EDGEPROF=${EDGEPROF:-build/edgeprof}
tmp=$(mktemp -d)
trap 'rm -rf "${tmp:?}"' EXIT
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (uprobes, BPF and ptrace)"
	exit 77
fi

# The value of run.longjmp.KEY (or run.violations... : "violations") in profile $1.
field() {
	python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
if sys.argv[2] == "violations":
    print(p.get("violations", sum(len(f.get("violations", [])) for f in p["functions"])))
else:
    print(p["run"].get("longjmp", {}).get(sys.argv[2], "none"))' "$1" "$2"
}

for opt in O0 O2; do
	prog=$tmp/longjmp_count-$opt
	if ! gcc -$opt -o "$prog" tests/programs/longjmp_count.c; then
		bad "$opt: cannot build tests/programs/longjmp_count.c"
		continue
	fi
	for probes in auto uprobe; do
		for arg in none signal; do
			args=()
			[ "$arg" = signal ] && args=(signal)
			tag="$opt --probes $probes ${arg/none/no signal}"
			native=$("$prog" "${args[@]}")
			total=$(sed -n 's/^longjmps: //p' <<<"$native")
			after=$(sed -n 's/^after signal: //p' <<<"$native")
			if ! "$EDGEPROF" -v run --probes "$probes" -o "$tmp/p.data" "$prog" "${args[@]}" \
				>"$tmp/out" 2>"$tmp/err"; then
				bad "$tag: edgeprof run failed: $(tail -1 "$tmp/err")"
				continue
			fi
			[ "$(cat "$tmp/out")" = "$native" ] || bad "$tag: output differs from the native run's"
			unwound=$(sed -n 's/.*longjmps stopped and unwound: \([0-9]*\).*/\1/p' "$tmp/err")
			want=0
			[ "$arg" = signal ] && want=$after
			if [ "$unwound" = "$want" ] && [ "$(field "$tmp/p.data" unwound)" = "$want" ]; then
				ok "$tag: $unwound longjmps unwound (the program made $total, $after after its signal)"
			else
				bad "$tag: ${unwound:-?} longjmps unwound, expected $want (the program made $total, $after after its signal)"
			fi
			resumed=$(field "$tmp/p.data" resumed)
			if [ "$resumed" = "$total" ]; then
				ok "$tag: derived second returns of setjmp $resumed = the program's longjmps"
			else
				bad "$tag: derived second returns of setjmp $resumed, the program made $total longjmps"
			fi
			viol=$(field "$tmp/p.data" violations)
			if [ "$viol" = 0 ]; then
				ok "$tag: 0 violations"
			else
				bad "$tag: $viol violations"
			fi
		done
	done
done
checks_summary longjmp-watch
