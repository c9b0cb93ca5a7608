# shellcheck shell=bash
# Counted checks and the processes a test started, for the end-to-end tests that run programs
# of their own (attach, lib). A bash library meant to be SOURCED (it sets no shell options).
#
#   ok MSG, bad MSG      count a passed (failed) check and print "ok: MSG" ("FAIL: MSG")
#   checks_summary NAME  prints "NAME: P of N checks passed"; fails when any check failed
#   started              array: the test appends the pid of every process it starts
#   kill_started         SIGKILLs those processes, by pid (for the test's EXIT trap)
#   text_intact PID BIN  the executable mappings of BIN in PID hold the file's bytes
#   need_root_and TOOL...  sets EDGEPROF (default build/edgeprof) to its absolute path; exits
#                        1 when it is not built, 77 (skip) when not root or a TOOL is missing

fails=0
checks=0
started=()

ok() {
	checks=$((checks + 1))
	echo "ok: $*"
}

bad() {
	checks=$((checks + 1))
	fails=$((fails + 1))
	echo "FAIL: $*"
}

checks_summary() {
	echo "$1: $((checks - fails)) of $checks checks passed"
	[ "$fails" = 0 ]
}

need_root_and() {
	local c
	EDGEPROF=${EDGEPROF:-build/edgeprof}
	[ -x "$EDGEPROF" ] || { echo "FAIL: $EDGEPROF not built (run make)"; exit 1; }
	EDGEPROF=$(realpath "$EDGEPROF")
	[ "$(id -u)" = 0 ] || { echo "SKIP: edgeprof run needs root"; exit 77; }
	for c in "$@"; do
		command -v "$c" >/dev/null ||
			{ echo "SKIP: $c not found (scripts/install-deps.sh installs it)"; exit 77; }
	done
}

kill_started() {
	local p
	for p in "${started[@]}"; do kill -KILL "$p" 2>/dev/null; done
}

# text_intact PID BIN: the executable mappings of BIN in PID hold the file's bytes.
text_intact() {
	python3 - "$1" "$2" <<'EOF'
import os, sys
pid, path = sys.argv[1], os.path.realpath(sys.argv[2])
data = open(path, "rb").read()
n = 0
with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb") as mem:
    for line in maps:
        f = line.split()
        if len(f) < 6 or f[5] != path or "x" not in f[1]:
            continue
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        off = int(f[2], 16)
        mem.seek(lo)
        got = mem.read(hi - lo)
        want = data[off:off + len(got)]
        if got[:len(want)] != want:
            bad = next(i for i in range(len(want)) if got[i] != want[i])
            sys.exit(f"byte at {lo + bad:#x} is {got[bad]:#04x}, file has {want[bad]:#04x}")
        n += 1
sys.exit(0 if n else "no executable mapping of the binary")
EOF
}
