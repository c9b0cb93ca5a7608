#!/usr/bin/env bash
# Non-interference of `edgeprof run --probes uprobe`: its uprobes live in the profiled process
# (and the children it forks) only, never in another process running the same binary.
# Builds a small stdin-reading program into a private directory (no process but this test's
# maps it), starts A = `edgeprof run --probes uprobe` of it blocked on an empty fifo, and
# while A is held there:
#   - A's executable mapping differs from the file (the kernel's int3s: the probes are in;
#     the control that makes the next check mean something);
#   - B, the same binary run natively and blocked on another fifo, has an executable mapping
#     equal to the file byte for byte (no uprobe in its mm), and the uprobe-multi links on
#     the binary are all bound to a pid (bpftool);
#   - C, the same binary under valgrind --tool=callgrind, completes with the native output and
#     exit status (valgrind takes a uprobe's int3 for the guest's own and dies with SIGTRAP).
# Then A and B finish with the native output. Needs root and BPF (skips otherwise; CI=true
# turns the skip into a failure in tests/run.sh). Exit 0 pass, 77 skip, else fail.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/support/bpf-checks.sh
source tests/support/bpf-checks.sh
EDGEPROF=${EDGEPROF:-build/edgeprof}

[ -x "$EDGEPROF" ] || { echo "FAIL: $EDGEPROF not built (run make)"; exit 1; }
EDGEPROF=$(realpath "$EDGEPROF")
[ "$(id -u)" = 0 ] || { echo "SKIP: edgeprof run needs root"; exit 77; }
for c in gcc python3 bpftool valgrind timeout; do
	command -v "$c" >/dev/null || { echo "SKIP: $c not found"; exit 77; }
done

tmp=$(mktemp -d /tmp/ep-bound.XXXXXX)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	rm -rf "${tmp:?}"
}
trap cleanup EXIT

fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

cat >"$tmp/prog.c" <<'CEOF_b14'
#include <stdio.h>
int main(void)
{
	long n = 0, odd = 0;
	int c;

	while ((c = getchar()) != EOF) {
		n++;
		if (c & 1)
			odd++;
		else if (c == '\n')
			n += 2;
	}
	printf("%ld %ld\n", n, odd);
	return 0;
}
CEOF_b14
gcc -O1 -fPIE -pie -o "$tmp/prog" "$tmp/prog.c" || { echo "FAIL: cannot build"; exit 1; }
seq 1 2000 >"$tmp/input"
"$tmp/prog" <"$tmp/input" >"$tmp/native.out" || { echo "FAIL: native run"; exit 1; }
"$tmp/prog" </dev/null >"$tmp/native-empty.out"

# text_diff PID: the number of bytes of PID's executable mappings of prog that differ from
# the file (-1 when PID maps no executable page of it).
text_diff() {
	python3 - "$1" "$tmp/prog" <<'PYEOF_b14'
import sys
pid, path = sys.argv[1], sys.argv[2]
diff, seen = 0, False
with open(path, "rb") as f:
    data = f.read()
try:
    maps = open(f"/proc/{pid}/maps").read().splitlines()
    mem = open(f"/proc/{pid}/mem", "rb")
except OSError:
    print(-1)
    sys.exit(0)
for line in maps:
    parts = line.split()
    if len(parts) < 6 or parts[5] != path or "x" not in parts[1]:
        continue
    lo, hi = (int(x, 16) for x in parts[0].split("-"))
    off = int(parts[2], 16)
    mem.seek(lo)
    got = mem.read(hi - lo)
    want = data[off:off + len(got)].ljust(len(got), b"\0")
    diff += sum(a != b for a, b in zip(got, want))
    seen = True
print(diff if seen else -1)
PYEOF_b14
}

# wait_mapped PID: waits (10 s at most) until PID maps prog executable; prints text_diff.
wait_mapped() {
	local d i
	for i in $(seq 100); do
		d=$(text_diff "$1")
		[ "$d" != -1 ] && { echo "$d"; return; }
		sleep 0.1
	done
	echo -1
}

mkfifo "$tmp/fa" "$tmp/fb"
exec 3<>"$tmp/fa" 4<>"$tmp/fb" # held open: A and B block reading them

# A: profiled with uprobes only, blocked on fifo a.
# (3 and 4 closed in every child: a writer left open in the reader would never give it EOF.)
timeout 120 "$EDGEPROF" -q run --probes uprobe -o "$tmp/a.data" "$tmp/prog" <"$tmp/fa" \
	>"$tmp/a.out" 2>"$tmp/a.err" 3>&- 4>&- &
epid=$!
pids+=("$epid")
apid=
for i in $(seq 100); do
	apid=$(python3 -c '
import os, sys
for d in os.listdir("/proc"):
    if d.isdigit():
        try:
            st = open(f"/proc/{d}/stat").read()
            ppid = int(st.rsplit(")", 1)[1].split()[1])
            if os.readlink(f"/proc/{d}/exe") == sys.argv[1] and \
               os.readlink(f"/proc/{ppid}/exe") == sys.argv[2]:
                print(d)
        except (OSError, ValueError):
            pass' "$tmp/prog" "$EDGEPROF")
	[ -n "$apid" ] && break
	kill -0 "$epid" 2>/dev/null || break
	sleep 0.1
done
if [ -z "$apid" ]; then
	skip_if_no_bpf "$tmp/a.err"
	echo "FAIL: the profiled process never ran: $(head -n 3 "$tmp/a.err")"
	exit 1
fi
pids+=("$apid")
# A's probes go in at its exec stop: wait until they show (the control).
for i in $(seq 100); do
	da=$(text_diff "$apid")
	[ "$da" -gt 0 ] 2>/dev/null && break
	sleep 0.1
done
[ "$da" -gt 0 ] 2>/dev/null || fail "the profiled process shows no probe in its code ($da bytes differ)"

# B: the same binary, natively, blocked on fifo b.
"$tmp/prog" <"$tmp/fb" >"$tmp/b.out" 3>&- 4>&- &
bpid=$!
pids+=("$bpid")
db=$(wait_mapped "$bpid")
[ "$db" = 0 ] || fail "an unprofiled process of the same binary has $db code bytes changed (uprobes in its mm)"

# Every uprobe-multi link on prog is bound to a pid.
unbound=$(bpftool -j link show 2>/dev/null | python3 -c '
import json, sys
n = 0
for l in json.load(sys.stdin) or []:
    if l.get("type") == "uprobe_multi" and l.get("path") == sys.argv[1] and not l.get("pid"):
        n += 1
print(n)' "$tmp/prog")
nlinks=$(uprobe_links "$tmp/prog" | wc -l)
[ "$nlinks" -gt 0 ] || fail "no uprobe-multi link on the binary while it is profiled"
[ "$unbound" = 0 ] || fail "$unbound uprobe-multi links on the binary are not bound to a process"

# C: the same binary under callgrind, while A is still profiled.
timeout 120 valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$tmp/prog" \
	<"$tmp/input" >"$tmp/c.out" 2>"$tmp/c.err" 3>&- 4>&-
crc=$?
[ "$crc" = 0 ] || fail "callgrind of the same binary exited $crc while it was profiled: $(grep -m1 -i 'signal\|sigtrap' "$tmp/c.err")"
cmp -s "$tmp/c.out" "$tmp/native.out" || fail "callgrind run output differs from the native one"

# Let A and B finish.
exec 3>&- 4>&-
wait "$bpid"
brc=$?
wait "$epid"
arc=$?
[ "$brc" = 0 ] && cmp -s "$tmp/b.out" "$tmp/native-empty.out" || fail "B: status $brc or output differs"
[ "$arc" = 0 ] && cmp -s "$tmp/a.out" "$tmp/native-empty.out" || fail "A: status $arc or output differs: $(head -n 2 "$tmp/a.err")"
[ -s "$tmp/a.data" ] || fail "A wrote no profile"
left=$(uprobe_links "$tmp/prog" | wc -l)
[ "$left" = 0 ] || fail "$left uprobe-multi links left on the binary after the run"

echo "run-bound-probes: profiled process: $da code bytes with probes, $nlinks links, $unbound unbound;" \
	"other process: $db bytes changed; callgrind alongside: exit $crc"
if [ "$fails" -gt 0 ]; then
	echo "run-bound-probes: $fails failures"
	exit 1
fi
echo "run-bound-probes: ok"
