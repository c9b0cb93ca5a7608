#!/usr/bin/env bash
# A site whose proof fails is never patched, executed rather than analysed: the program
# tests/targets/patch_refusals.c (the hand-written shapes of tests/support/patch_fixtures.c:
# a 2-byte block, a jump from another function into the middle of a block, flags live across
# a block start, a leaf using its red zone across one; and pr_fault, whose SIGSEGV handler
# waits on stdin with a signal frame that resumes in the middle of pr_fault's only block) is
# profiled with --placement naive (a site on every block, so that each shape has one) and with
# the default chords, under `edgeprof run` and under `edgeprof -p` attached while the handler
# waits. While it waits,
# the jumps edgeprof wrote are read from the process's memory (each window is a `jmp rel32`
# then int3 bytes, where the file has other bytes) and checked against the symbols of the
# shapes (from nm, not from edgeprof's analysis):
#   - no window overlaps the 2-byte block pf_short_inc;
#   - no window holds pf_mid_in (the jump target) but at its start, and pf_mid has block
#     counters with pf_mid_in as its one foreign entry;
#   - -p: no window holds pr_fault_at (the signal frame's resume point) but at its start;
#   - the sites at pf_flags_b and pf_redzone_b (flags live) are `patch-flags` where patched;
#   - the program's own check of every result says 0 errors (flags and red zone survived);
# and the counts of the pf_* functions (only the work after the handler's line calls them)
# are checked against callgrind's (build/tests/count_oracle; callgrind runs the program
# without the fault: its totals do not add up across a signal handler), for `run` and for the
# -p window. The output must equal the native run's, and after the detach the code bytes the
# file's. Needs root and BPF. Exit 0 pass, 77 skip, else fail.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/support/checks.sh
source tests/support/checks.sh
# shellcheck source=tests/support/bpf-checks.sh
source tests/support/bpf-checks.sh
# shellcheck source=tests/support/callgrind-run.sh
source tests/support/callgrind-run.sh

EDGEPROF=${EDGEPROF:-build/edgeprof}
ORACLE=${ORACLE:-build/tests/count_oracle}
N=${N:-2000}
[ -x "$EDGEPROF" ] || { echo "FAIL: $EDGEPROF not built (run make)"; exit 1; }
[ -x "$ORACLE" ] || { echo "FAIL: $ORACLE not built (run make test)"; exit 1; }
EDGEPROF=$(realpath "$EDGEPROF")
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
for c in gcc python3 valgrind nm readelf timeout; do
	command -v "$c" >/dev/null || { echo "SKIP: $c not found"; exit 77; }
done

tmp=$(mktemp -d)
cleanup() {
	exec 7>&- 2>/dev/null
	kill_started
	rm -rf "${tmp:?}"
}
trap cleanup EXIT

prog=$tmp/patch_refusals
if ! gcc -O2 -g -I. -o "$prog" tests/targets/patch_refusals.c tests/support/patch_fixtures.c; then
	bad "cannot build patch_refusals"
	checks_summary patch-refusals
	exit 1
fi
printf '\n\n' >"$tmp/two-lines"
"$prog" "$N" serve <"$tmp/two-lines" >"$tmp/native.out" || bad "the native run failed"
# callgrind's totals do not add up across a signal handler: its run takes no fault (the
# pf_* functions, which the counts are checked on, run alike).
"$prog" "$N" nofault >"$tmp/native-nofault.out" </dev/null
mkdir -p "$tmp/cg"
cg_run "$tmp/cg" /dev/null "$tmp/cg.out" "$prog" "$N" nofault
cgargs=()
for f in "${CG_FILES[@]}"; do cgargs+=(--callgrind "$f"); done
[ ${#cgargs[@]} -gt 0 ] && cmp -s "$tmp/native-nofault.out" "$tmp/cg.out" ||
	bad "callgrind run failed or printed otherwise (see $tmp/cg/callgrind.log)"

# wait_for FILE REGEX: until FILE has a line matching REGEX (30 s at most).
wait_for() {
	local i
	for ((i = 0; i < 600; i++)); do
		grep -q -E -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# snapshot PID FILE: the code of the program's executable mappings in PID, into FILE.
snapshot() {
	python3 - "$1" "$prog" "$2" <<'PYEOF_sn'
import json, os, sys
pid, path, out = sys.argv[1], os.path.realpath(sys.argv[2]), sys.argv[3]
maps = []
with open(f"/proc/{pid}/maps") as m, open(f"/proc/{pid}/mem", "rb") as mem:
    for line in m:
        f = line.split()
        if len(f) >= 6 and f[5] == path and "x" in f[1]:
            lo, hi = (int(x, 16) for x in f[0].split("-"))
            mem.seek(lo)
            maps.append({"off": int(f[2], 16), "hex": mem.read(hi - lo).hex()})
json.dump(maps, open(out, "w"))
PYEOF_sn
}

# check_windows SNAPSHOT PROFILE ATTACH: the windows in the code SNAPSHOT (see the header)
# and the classes of PROFILE's sites; prints a summary, fails with the reasons.
check_windows() {
	python3 - "$1" "$prog" "$2" "$3" <<'PYEOF_cw'
import json, os, subprocess, sys
snap, path, prof, attach = sys.argv[1], os.path.realpath(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
data = open(path, "rb").read()
sym = {}
for line in subprocess.run(["nm", path], capture_output=True, text=True, check=True).stdout.splitlines():
    f = line.split()
    if len(f) == 3:
        sym[f[2]] = int(f[0], 16)
loads = []  # (offset, vaddr, filesz)
for line in subprocess.run(["readelf", "-lW", path], capture_output=True, text=True, check=True).stdout.splitlines():
    f = line.split()
    if f and f[0] == "LOAD":
        loads.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
def vaddr(off):
    for o, v, n in loads:
        if o <= off < o + n:
            return off - o + v
    return None
classes = {}
p = json.load(open(prof))
if p["violations"] or p["run"]["unwind_failures"]:
    errs0 = [f"{p['violations']} violations, {p['run']['unwind_failures']} unwind failures"]
else:
    errs0 = []
for st in p["placement"]["sites"]:
    classes[int(st["addr"], 16)] = st["class"]
# A window: a jmp rel32 where the file has other bytes, then int3 fill up to the next
# instruction kept (an int3 at a uprobe site, also where the file has other bytes, is not
# fill: uprobes write one there).
uprobe_at = {a for a, c in classes.items() if not c.startswith("patch")}
wins = []
for m in json.load(open(snap)):
    got, off = bytes.fromhex(m["hex"]), m["off"]
    want = data[off:off + len(got)]
    q = 0
    while q < len(want):
        if got[q] != want[q] and got[q] == 0xE9:
            n = 5
            while (q + n < len(want) and got[q + n] == 0xCC and want[q + n] != 0xCC and
                   vaddr(off + q + n) not in uprobe_at):
                n += 1
            wins.append((vaddr(off + q), n))
            q += n
        else:
            q += 1
errs = errs0
def inside(a):
    return [(hex(s), n) for s, n in wins if s < a < s + n]
a = sym["pf_short_inc"]
bad = [(hex(s), n) for s, n in wins if s < a + 2 and a < s + n]
if bad:
    errs.append(f"a window over the 2-byte block pf_short_inc ({a:#x}): {bad}")
if inside(sym["pf_mid_in"]):
    errs.append(f"a window holds the jump target pf_mid_in: {inside(sym['pf_mid_in'])}")
# pf_mid, which another function jumps into, gets block counters (its counts are checked
# against callgrind below) and names the entry from outside as a foreign entry.
mid = next((f for f in p["functions"] if f["name"] == "pf_mid"), None)
if not mid or mid["status"] != "naive" or (p["placement"]["mode"] != "naive" and
                                           "runs into its code" not in (mid["reason"] or "")):
    errs.append(f"pf_mid, which another function jumps into, is not counted with block counters: {mid and (mid['status'], mid['reason'])}")
elif [int(x["block"], 16) for x in mid.get("foreign_entries") or []] != [sym["pf_mid_in"]]:
    errs.append(f"pf_mid's foreign entries are {mid.get('foreign_entries')}, not pf_mid_in ({sym['pf_mid_in']:#x})")
if attach and inside(sym["pr_fault_at"]):
    errs.append(f"a window holds pr_fault_at, where a signal frame resumes: {inside(sym['pr_fault_at'])}")
if len(wins) < 10:
    errs.append(f"only {len(wins)} windows written: in-process counting did not happen")
for name in ("pf_flags_b", "pf_redzone_b"):
    c = classes.get(sym[name])
    if c is None and p["placement"]["mode"] == "naive":
        errs.append(f"no site at {name} (naive placement puts one on every block)")
    elif c and c.startswith("patch") and c != "patch-flags":
        errs.append(f"the site at {name} (flags live) is {c}, not patch-flags")
if errs:
    sys.exit("; ".join(errs))
cls = lambda name: classes.get(sym[name], "no site")
print(f"{len(wins)} windows; pf_mid {mid['status']} ({mid['reason']}); sites: "
      f"pf_short_inc {cls('pf_short_inc')}, pf_flags_b {cls('pf_flags_b')}, "
      f"pf_redzone_b {cls('pf_redzone_b')}, pr_fault {cls('pr_fault')}, "
      f"pr_fault_at {cls('pr_fault_at')}")
PYEOF_cw
}

# oracle PROFILE [pf]: count_oracle on PROFILE's report (with pf: its pf_* functions only).
oracle() {
	"$EDGEPROF" report --json "$1" >"$tmp/report.json" 2>"$tmp/report.err" || {
		echo "edgeprof report failed: $(head -c 200 "$tmp/report.err")"
		return 1
	}
	if [ "${2:-}" = pf ]; then
		python3 - "$tmp/report.json" <<'PYEOF_pf'
import json, sys
p = json.load(open(sys.argv[1]))
p["functions"] = [f for f in p["functions"] if f["name"].startswith("pf_")]
json.dump(p, open(sys.argv[1], "w"))
PYEOF_pf
	fi
	"$ORACLE" --profile "$tmp/report.json" --binary "$prog" "${cgargs[@]}" >"$tmp/oracle.out" 2>&1 || {
		tail -n 1 "$tmp/oracle.out"
		grep '^diff ' "$tmp/oracle.out" | head -n 5
		return 1
	}
	tail -n 1 "$tmp/oracle.out" | sed 's/^count_oracle [^:]*: //; s/ checked (.*//'
}

for pl in naive chords; do
	# --- run: patched at the exec stop; the code read while the handler waits.
	rm -f "$tmp/in"
	mkfifo "$tmp/in"
	"$EDGEPROF" -q run --placement "$pl" -o "$tmp/run-$pl.data" -- "$prog" "$N" serve <"$tmp/in" \
		>"$tmp/run.out" 2>"$tmp/run.err" &
	epid=$!
	started+=("$epid")
	exec 7>"$tmp/in"
	why=
	if wait_for "$tmp/run.out" '^waiting in the handler'; then
		ppid=$(pgrep -P "$epid" -x patch_refusals | head -n 1)
		started+=("$ppid")
		snapshot "$ppid" "$tmp/run.snap" || why="cannot read the program's code"
		echo >&7
		wait_for "$tmp/run.out" '^sum ' || why="the work did not end"
		echo >&7
	fi
	exec 7>&-
	wait "$epid"
	rc=$?
	if [ $rc != 0 ] || ! cmp -s "$tmp/native.out" "$tmp/run.out"; then
		skip_if_no_bpf "$tmp/run.err"
		bad "run, $pl: edgeprof exited $rc, the program printed '$(head -c 200 "$tmp/run.out")' (natively '$(cat "$tmp/native.out")'): $(head -c 300 "$tmp/run.err")"
	elif [ -n "$why" ]; then
		bad "run, $pl: $why"
	elif ! msg=$(check_windows "$tmp/run.snap" "$tmp/run-$pl.data" 0 2>&1); then
		bad "run, $pl: $msg"
	elif ! m2=$(oracle "$tmp/run-$pl.data" pf); then
		bad "run, $pl: the pf_* counts differ from callgrind's: $m2"
	else
		ok "run, $pl: while the handler waited: $msg; output as native, pf_* counts equal callgrind's ($m2)"
	fi

	# --- -p: attached while the handler waits (its signal frame resumes at pr_fault_at).
	rm -f "$tmp/in"
	mkfifo "$tmp/in"
	"$prog" "$N" serve <"$tmp/in" >"$tmp/p.out" 2>&1 &
	tpid=$!
	started+=("$tpid")
	exec 7>"$tmp/in"
	why=
	if ! wait_for "$tmp/p.out" '^waiting in the handler'; then
		why="the program did not fault"
	else
		"$EDGEPROF" -p "$tpid" --placement "$pl" -o "$tmp/p-$pl.data" 2>"$tmp/p.err" &
		epid=$!
		started+=("$epid")
		if ! wait_for "$tmp/p.err" '^edgeprof: attached to process'; then
			why="edgeprof did not attach: $(head -c 300 "$tmp/p.err")"
		else
			snapshot "$tpid" "$tmp/p.snap" || why="cannot read the program's code"
			echo >&7
			wait_for "$tmp/p.out" '^sum ' || why="${why:+$why; }the work did not end"
			kill -INT "$epid"
			wait "$epid" || why="${why:+$why; }edgeprof exited $?"
			snapshot "$tpid" "$tmp/after.snap"
			python3 - "$tmp/after.snap" "$prog" <<'PYEOF_ti' || why="${why:+$why; }code differs from the file after the detach"
import json, os, sys
data = open(os.path.realpath(sys.argv[2]), "rb").read()
for m in json.load(open(sys.argv[1])):
    got = bytes.fromhex(m["hex"])
    if got != data[m["off"]:m["off"] + len(got)]:
        sys.exit(1)
PYEOF_ti
		fi
	fi
	echo >&7
	exec 7>&-
	wait "$tpid"
	rc=$?
	[ -n "$why" ] || [ $rc = 0 ] || why="the program exited $rc"
	[ -n "$why" ] || cmp -s "$tmp/native.out" "$tmp/p.out" ||
		why="the program printed '$(head -c 200 "$tmp/p.out")', natively '$(cat "$tmp/native.out")'"
	if [ -n "$why" ]; then
		bad "-p, $pl: $why"
	elif ! msg=$(check_windows "$tmp/p.snap" "$tmp/p-$pl.data" 1 2>&1); then
		bad "-p, $pl: $msg"
	elif ! m2=$(oracle "$tmp/p-$pl.data" pf); then
		bad "-p, $pl: the pf_* counts differ from callgrind's: $m2"
	else
		ok "-p, $pl: attached while the handler waited: $msg; output as native, pf_* counts equal callgrind's ($m2)"
	fi
done

checks_summary patch-refusals
