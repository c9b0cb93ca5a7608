#!/usr/bin/env bash
# `edgeprof record -p PID` on processes this test starts (tests/programs/attach_window.c, a
# server that blocks in read() three frames deep between commands and keeps its own counters
# of every counted branch, each a noinline function):
#  - exact window: the server does work (A), edgeprof attaches while it is blocked, it does
#    more work (B: loops, 50 longjmps from three calls deep, a thread ending with pthread_exit
#    three calls deep), edgeprof detaches while it is blocked again, it does more work (C). The
#    invocation counts in the profile of the counted functions must equal the server's own
#    counters at B minus those at A, every function must conserve flow (0 violations), and
#    the frames blocked in read() must be entered at the attach and left at the detach. For
#    gcc -O0/-O2/-O3 and clang -O2, with 0 and with 4 worker threads; SIGINT ends the window.
#  - after the detach the server's output equals that of a native run of the same commands,
#    its code bytes equal the file's (no probe left in it), and no uprobe-multi link remains
#    on its binary.
#  - faults: SIGTERM to edgeprof (as SIGINT); SIGKILL to edgeprof mid-window (the server is
#    not stopped, finishes with the native output, no probe or link left); the server killed
#    mid-window (the profile is written and exact); the server ending mid-window; -d SECONDS.
#  - bad input: no such process, a zombie, a kernel thread, a 32-bit process, not a number,
#    no -p, a bad duration, no privilege: one line on stderr, exit status 1..127, the target
#    left running and not traced.
# Needs root and BPF (CI=true turns a skip into a failure). Exit 0 pass, 77 skip, else fail.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/support/bpf-checks.sh
source tests/support/bpf-checks.sh
# shellcheck source=tests/support/checks.sh
source tests/support/checks.sh
EDGEPROF=${EDGEPROF:-build/edgeprof}

[ -x "$EDGEPROF" ] || { echo "FAIL: $EDGEPROF not built (run make)"; exit 1; }
EDGEPROF=$(realpath "$EDGEPROF")
[ "$(id -u)" = 0 ] || { echo "SKIP: edgeprof record needs root"; exit 77; }
for c in gcc clang python3 bpftool as ld timeout; do
	command -v "$c" >/dev/null || { echo "SKIP: $c not found"; exit 77; }
done

tmp=$(mktemp -d)
cleanup() {
	exec 7>&- 2>/dev/null
	kill_started
	rm -rf "$tmp"
}
trap cleanup EXIT

# wait_for FILE REGEX N: waits (10 s at most) until FILE has N lines matching REGEX.
wait_for() {
	local i
	for ((i = 0; i < 200; i++)); do
		[ "$(grep -c -E -- "$2" "$1" 2>/dev/null)" -ge "$3" ] && return 0
		sleep 0.05
	done
	return 1
}

# wait_gone PID: waits (10 s at most) until PID has ended.
wait_gone() {
	local i
	for ((i = 0; i < 200; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.05
	done
	return 1
}

# start_target BIN THREADS: starts BIN THREADS with stdin a fifo written through fd 7 and
# stdout in $tmp/out; sets TPID.
start_target() {
	rm -f "$tmp/in" "$tmp/out"
	mkfifo "$tmp/in"
	"$1" "$2" <"$tmp/in" >"$tmp/out" 2>&1 &
	TPID=$!
	started+=("$TPID")
	exec 7>"$tmp/in"
}

# say LINE: sends one command to the target.
say() { echo "$1" >&7; }

# start_edgeprof ARGS...: starts edgeprof -p $TPID ARGS in the background (stderr in
# $tmp/err) and waits until it says it is counting; sets EPID. Returns 1 when it did not.
start_edgeprof() {
	rm -f "$tmp/err" # not the previous case's line
	"$EDGEPROF" -p "$TPID" "$@" 2>"$tmp/err" &
	EPID=$!
	started+=("$EPID")
	wait_for "$tmp/err" '^edgeprof: attached to process' 1
}

# window_work: the commands of the window (as in native below).
window_work() {
	say "work 1000"
	say "jump 50"
	say spawn
	say print
}

# finish_target: the work after the detach, then quit; appends to $why when the target
# does not exit 0 or its output is not the native one ($tmp/native).
finish_target() {
	local rc
	say "work 200"
	say print
	say quit
	exec 7>&-
	wait "$TPID"
	rc=$?
	[ $rc = 0 ] || why="${why:+$why; }the target exited $rc"
	cmp -s "$tmp/native" "$tmp/out" || why="${why:+$why; }its output differs from a native run"
}

# The native output of the command sequence of the exact-window cases.
native() { printf 'work 300\nprint\nwork 1000\njump 50\nspawn\nprint\nwork 200\nprint\nquit\n' | "$1" "$2"; }

# links_on BIN: uprobe-multi links on BIN, one id a line.
links_on() {
	uprobe_links "$(realpath "$1")"
}

# check_window PROFILE OUT THREADS [LEFT]: the profile's invocation counts of the counted
# functions equal the differences of the first two "print" outputs in OUT; no violation;
# THREADS+1 frames of read_line entered at the attach, and LEFT (default THREADS+1) left
# without returning (at the detach, or when the target was killed).
check_window() {
	python3 - "$@" <<'EOF'
import json, sys
prof, out, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
left = int(sys.argv[4]) if len(sys.argv) > 4 else threads + 1
p = json.load(open(prof))
prints, cur = [], {}
for line in open(out):
    f = line.split()
    if f == ["end"]:
        prints.append(cur)
        cur = {}
    elif len(f) == 2 and f[0] != "done":
        cur[f[0]] = int(f[1])
if len(prints) < 2:
    sys.exit(f"the target printed its counters {len(prints)} times, not 2")
a, b = prints[0], prints[1]
funcs = {f["name"]: f for f in p["functions"]}
errs = []
if p["run"].get("mode") != "attach":
    errs.append("run.mode is not attach")
for name, fn in [("work", "work"), ("iter", "on_iter"), ("even", "on_even"), ("odd", "on_odd"),
                 ("div3", "on_div3"), ("big", "on_big"), ("jump", "on_jump"),
                 ("spawn", "on_spawn")]:
    want = b[name] - a[name]
    got = funcs.get(fn, {}).get("count")
    if got != want:
        errs.append(f"{fn}: profile {got}, program {want}")
if p["violations"]:
    bad = [f["name"] for f in p["functions"] if f["violations"]]
    errs.append(f"{p['violations']} violations in {bad}")
if p["run"]["unwind_failures"]:
    errs.append(f"{p['run']['unwind_failures']} unwind failures")
rl = funcs.get("read_line", {})
if rl.get("virtual_in") != threads + 1:
    errs.append(f"read_line entered {rl.get('virtual_in')} times at the attach, not {threads + 1}")
if rl.get("virtual_out") != left:
    errs.append(f"read_line left {rl.get('virtual_out')} times without returning, not {left}")
if errs:
    sys.exit("; ".join(errs))
print(f"window: {b['iter'] - a['iter']} iterations, {sum(f['count'] or 0 for f in p['functions'])} "
      f"invocations, {p['run']['virtual_edges']} virtual edges; stopped "
      f"{p['run']['held_attach_s'] * 1e3:.2f} ms to attach, {p['run']['held_detach_s'] * 1e3:.2f} ms to detach")
EOF
}

# The target, built four ways.
builds=()
for b in gcc:-O0 gcc:-O2 gcc:-O3 clang:-O2; do
	cc=${b%%:*} opt=${b#*:}
	bin="$tmp/attach_window_${cc}${opt}"
	if ! "$cc" "$opt" -g -pthread -o "$bin" tests/programs/attach_window.c; then
		bad "cannot build attach_window with $cc $opt"
		continue
	fi
	builds+=("$bin")
done

# BPF must work: otherwise the whole test is skipped (a failure with CI=true).
start_target "${builds[0]}" 0
timeout -k 5 30 "$EDGEPROF" -q -p "$TPID" -d 0.2 -o "$tmp/probe.data" 2>"$tmp/err"
rc=$?
say quit
exec 7>&-
wait_gone "$TPID"
if [ $rc != 0 ]; then
	skip_if_no_bpf "$tmp/err"
	echo "FAIL: edgeprof -p on a blocked server failed (exit $rc): $(head -c 500 "$tmp/err")"
	exit 1
fi

# exact_case NAME BIN THREADS SIGNAL: the exact-window case, the window ended by SIGNAL to
# edgeprof.
exact_case() {
	local name=$1 bin=$2 threads=$3 sig=$4 rc why msg
	native "$bin" "$threads" >"$tmp/native"
	start_target "$bin" "$threads"
	say "work 300"
	say print
	wait_for "$tmp/out" '^end$' 1 || { bad "$name: the target did not answer"; return; }
	if ! start_edgeprof -o "$tmp/p.data"; then
		bad "$name: edgeprof did not attach: $(head -c 300 "$tmp/err")"
		return
	fi
	window_work
	wait_for "$tmp/out" '^end$' 2 || { bad "$name: the target did not answer while attached"; return; }
	kill -"$sig" "$EPID"
	wait "$EPID"
	rc=$?
	why=""
	[ $rc = 0 ] || why="edgeprof exit $rc: $(head -c 300 "$tmp/err")"
	grep -q "^edgeprof: process $TPID: counted" "$tmp/err" || why="${why:+$why; }no summary line"
	"$EDGEPROF" report "$tmp/p.data" 2>/dev/null | grep -q "^attached: *process $TPID for .* ms to detach; it ran on" ||
		why="${why:+$why; }edgeprof report does not show the attach"
	if [ -z "$why" ] && ! msg=$(check_window "$tmp/p.data" "$tmp/out" "$threads" 2>&1); then
		why="$msg (edgeprof: $(grep -v '^edgeprof: \(attached\|process\)' "$tmp/err" | head -c 400))"
	fi
	if [ -z "$why" ]; then
		local text
		text=$(text_intact "$TPID" "$bin" 2>&1) || why="code changed after the detach: $text"
		[ -z "$(links_on "$bin")" ] || why="${why:+$why; }a uprobe-multi link is left on the binary"
		grep -q 'TracerPid:[[:space:]]*0$' "/proc/$TPID/status" ||
			why="${why:+$why; }the target is still traced"
	fi
	finish_target
	if [ -z "$why" ]; then
		ok "$name: $msg"
	else
		bad "$name: $why"
	fi
}

for bin in "${builds[@]}"; do
	for threads in 0 4; do
		exact_case "$(basename "$bin") threads=$threads SIGINT" "$bin" "$threads" INT
	done
done
bin=${builds[1]} # gcc -O2
exact_case "$(basename "$bin") threads=4 SIGTERM" "$bin" 4 TERM

# SIGKILL to edgeprof mid-window: the target runs on, unharmed. With uprobes nothing of
# edgeprof's is left in it; with in-process counters (the default) its code keeps the jumps
# to the trampolines, which live in its own memory: it must still finish as natively.
native "$bin" 4 >"$tmp/native"
for mech in uprobe auto; do
	start_target "$bin" 4
	say "work 300"
	say print
	if start_edgeprof --probes "$mech" -o "$tmp/k.data"; then
		window_work
		wait_for "$tmp/out" '^end$' 2
		kill -KILL "$EPID"
		wait "$EPID" 2>/dev/null
		why=""
		sleep 0.2
		state=$(sed 's/.*) \(.\).*/\1/' "/proc/$TPID/stat")
		case $state in t | T) why="the target is left stopped (state $state)" ;; esac
		if [ "$mech" = uprobe ]; then
			text=$(text_intact "$TPID" "$bin" 2>&1) || why="${why:+$why; }code changed: $text"
		fi
		[ -z "$(links_on "$bin")" ] || why="${why:+$why; }a uprobe-multi link is left on the binary"
		[ -e "$tmp/k.data" ] && why="${why:+$why; }a profile was written"
		finish_target
		if [ -z "$why" ]; then
			ok "SIGKILL to edgeprof (--probes $mech): the target finished with the native output$([ "$mech" = uprobe ] && echo ", no probe"), no link left"
		else
			bad "SIGKILL to edgeprof (--probes $mech): $why"
		fi
	else
		bad "SIGKILL case (--probes $mech): edgeprof did not attach: $(head -c 300 "$tmp/err")"
	fi
done

# The target killed, or ending, mid-window: the profile is written (and exact).
for how in KILL quit; do
	start_target "$bin" 4
	say "work 300"
	say print
	if ! start_edgeprof -o "$tmp/t.data"; then
		bad "target $how: edgeprof did not attach: $(head -c 300 "$tmp/err")"
		continue
	fi
	window_work
	wait_for "$tmp/out" '^end$' 2
	if [ $how = KILL ]; then
		kill -KILL "$TPID"
	else
		say quit
	fi
	exec 7>&-
	wait "$EPID"
	rc=$?
	why=""
	[ $rc = 0 ] || why="edgeprof exit $rc: $(head -c 300 "$tmp/err")"
	if [ -z "$why" ]; then
		want=$([ $how = KILL ] && echo '"signal": 9' || echo '"exit_code": 0')
		python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["run"]; print(json.dumps(r))' \
			"$tmp/t.data" | grep -q "$want" || why="the profile does not record $want"
		# Killed, every thread leaves read_line without returning; at quit, all return.
		msg=$(check_window "$tmp/t.data" "$tmp/out" 4 "$([ $how = KILL ] && echo 5 || echo 0)" 2>&1) ||
			why="${why:+$why; }$msg"
	fi
	wait "$TPID" 2>/dev/null
	if [ -z "$why" ]; then
		ok "target $how mid-window: profile written, $msg"
	else
		bad "target $how mid-window: $why"
	fi
done

# -d: edgeprof ends by itself; the target runs on.
start_target "$bin" 4
t0=$(date +%s.%N)
timeout -k 5 30 "$EDGEPROF" -q -p "$TPID" -d 0.5 -o "$tmp/d.data" 2>"$tmp/err"
rc=$?
t1=$(date +%s.%N)
say "work 10"
say quit
exec 7>&-
wait "$TPID"
trc=$?
if [ $rc = 0 ] && [ $trc = 0 ] && [ -s "$tmp/d.data" ] &&
	python3 -c "import sys; sys.exit(not 0.5 <= $t1 - $t0 < 10)"; then
	ok "-d 0.5: edgeprof detached by itself after $(python3 -c "print(f'{$t1 - $t0:.2f}')") s, the target ran on"
else
	bad "-d 0.5: edgeprof exit $rc, target exit $trc: $(head -c 300 "$tmp/err")"
fi

# --- bad input ---------------------------------------------------------------------------
# expect_fail NAME REGEX [--as-nobody] ARGS...: `edgeprof ARGS` fails with one stderr line
# matching REGEX and an exit status 1..127; a running $TPID is left running, not traced.
NOBODY=()
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	NOBODY=(setpriv --reuid=nobody --regid="$(id -gn nobody)" --clear-groups --inh-caps=-all --)
fi
expect_fail() {
	local name=$1 re=$2 rc why=""
	local -a runner=()
	shift 2
	if [ "${1:-}" = --as-nobody ]; then
		runner=("${NOBODY[@]}")
		shift
	fi
	"${runner[@]}" timeout -k 5 30 "$EDGEPROF" "$@" >"$tmp/o" 2>"$tmp/err" </dev/null
	rc=$?
	if [ $rc = 0 ] || [ $rc -ge 128 ]; then
		why="exit status $rc"
	elif [ "$(wc -l <"$tmp/err")" != 1 ]; then
		why="$(wc -l <"$tmp/err") lines on stderr: $(head -c 300 "$tmp/err")"
	elif ! grep -qiE -- "$re" "$tmp/err"; then
		why="unexpected message: $(cat "$tmp/err")"
	fi
	if kill -0 "$TPID" 2>/dev/null; then
		grep -q 'TracerPid:[[:space:]]*0$' "/proc/$TPID/status" ||
			why="${why:+$why; }the target is left traced"
	fi
	if [ -z "$why" ]; then
		ok "$name: $(cat "$tmp/err")"
	else
		bad "$name: $why"
	fi
}

start_target "$bin" 0
gone=$(sh -c 'echo $$')
expect_fail "no such process" "no process $gone" -p "$gone"
expect_fail "not a number" "not a process id" -p 12x
expect_fail "no -p" "no process given" record -d 1
expect_fail "bad duration" "not a duration" -p "$TPID" -d -3
expect_fail "kernel thread" "kernel thread" -p 2
if [ ${#NOBODY[@]} -gt 0 ]; then
	expect_fail "no privilege" "not permitted|permission denied|needs root" --as-nobody -p "$TPID"
else
	echo "note: no user nobody or no setpriv: the unprivileged case is not tested"
fi
say quit
exec 7>&-
wait "$TPID"

# A zombie: a child of a process that never waits for it (it ends after its parent has
# become `sleep`, so the shell cannot reap it first).
sh -c 'sleep 0.2 & echo $! >"$1"; exec sleep 5' sh "$tmp/zpid" &
zparent=$!
started+=("$zparent")
wait_for "$tmp/zpid" . 1
zpid=$(cat "$tmp/zpid")
for _ in $(seq 30); do
	grep -q '^State:[[:space:]]*Z' "/proc/$zpid/status" 2>/dev/null && break
	sleep 0.1
done
TPID=$zparent
expect_fail "zombie" "zombie" -p "$zpid"
kill -KILL "$zparent" 2>/dev/null
wait "$zparent" 2>/dev/null

# A 32-bit process.
printf '.globl _start\n_start: mov $162, %%eax\n lea ts, %%ebx\n xor %%ecx, %%ecx\n int $0x80\n jmp _start\n.data\nts: .long 1, 0\n' >"$tmp/s32.s"
if as --32 -o "$tmp/s32.o" "$tmp/s32.s" && ld -m elf_i386 -o "$tmp/s32" "$tmp/s32.o"; then
	"$tmp/s32" &
	TPID=$!
	started+=("$TPID")
	sleep 0.1
	expect_fail "32-bit process" "64-bit" -p "$TPID"
	kill -KILL "$TPID"
	wait "$TPID" 2>/dev/null
else
	bad "cannot build a 32-bit program"
fi

# A frame in code no recovered block holds (lost_frame.c below: after some counted work it
# prints "ready N" and blocks in pause() after an indirect jump no analysis can resolve): the
# warning names the function and its addresses, and the function is flagged as not exact in
# the profile (it was only "N unwound frames were not in any recovered block", with
# hidden_wait's counts presented without a violation).
# (Not in tests/programs: the oracles run each of those to its end, and this one never ends.)
cat >"$tmp/lost_frame.c" <<'LOSTFRAME'
#include <stdio.h>
#include <unistd.h>

static volatile long zero;

/* Blocks in pause() from code reached only through an indirect jump whose target no analysis
 * can know (its register is a sum with a volatile), so that code is in no recovered block. */
__attribute__((noinline)) static long hidden_wait(long x)
{
	long r = x;

	__asm__ volatile("lea 1f(%%rip), %%rax\n\t"
			 "add %1, %%rax\n\t"
			 "jmp *%%rax\n\t"
			 "1:\n\t"
			 "mov $34, %%eax\n\t" /* pause */
			 "syscall\n\t"
			 "add $1, %0\n\t"
			 : "+r"(r)
			 : "r"(zero)
			 : "rax", "rcx", "r11", "memory");
	return r;
}

__attribute__((noinline)) static long step(long i)
{
	return i % 3 ? i * 2 : i + 1;
}

int main(void)
{
	long s = 0;

	for (long i = 0; i < 1000; i++)
		s += step(i);
	printf("ready %ld\n", s);
	fflush(stdout);
	return (int)hidden_wait(s) & 1;
}
LOSTFRAME
if gcc -O2 -g -o "$tmp/lost_frame" "$tmp/lost_frame.c"; then
	"$tmp/lost_frame" >"$tmp/lf.out" &
	LPID=$!
	started+=("$LPID")
	if wait_for "$tmp/lf.out" '^ready' 1 &&
		"$EDGEPROF" -p "$LPID" -d 1 -o "$tmp/lf.data" >/dev/null 2>"$tmp/lf.err"; then
		if grep -qE "unwound frames in code no recovered block holds: 2 in hidden_wait \(at 0x[0-9a-f]+: unresolved indirect jump" "$tmp/lf.err"; then
			ok "lost frames: $(grep -m1 'unwound frames' "$tmp/lf.err")"
		else
			bad "lost frames: no warning naming hidden_wait: $(head -c 400 "$tmp/lf.err")"
		fi
		"$EDGEPROF" report --json "$tmp/lf.data" >"$tmp/lf.json" 2>/dev/null
		if msg=$(python3 - "$tmp/lf.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
f = {f["name"]: f for f in p["functions"]}
h = f.get("hidden_wait")
if not h:
    sys.exit("no hidden_wait in the profile")
if not h["violations"]:
    sys.exit(f"hidden_wait ({h['status']}) is not flagged: violations {h['violations']}")
if p["violations"] != sum(len(x["violations"]) for x in p["functions"]):
    sys.exit(f"total violations {p['violations']} is not the functions' sum")
print(f"hidden_wait flagged ({h['status']}, violations {h['violations']})")
PY
		); then
			ok "lost frames: $msg"
		else
			bad "lost frames: $msg"
		fi
	else
		bad "lost frames: edgeprof -p failed: $(head -c 300 "$tmp/lf.err")"
	fi
	kill -KILL "$LPID"
	wait "$LPID" 2>/dev/null
else
	bad "cannot build lost_frame.c"
fi

checks_summary attach
