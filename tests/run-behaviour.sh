#!/usr/bin/env bash
# What the profiled program sees and what its caller gets must be as without edgeprof:
# under `edgeprof -q run -o FILE -- PROG ARGS`, PROG's stdin, stdout, stderr, arguments,
# environment and exit status pass through untouched (compared byte for byte with a native
# run, through files and through pipes; without -q, the only extra stderr lines are
# edgeprof's own "edgeprof: " lines). A program killed by SIGSEGV makes edgeprof exit 139 and
# the profile is still written. Signals sent to edgeprof while the program runs (started as a
# job of its own, SIGINT not ignored): SIGINT to edgeprof alone is ignored and the program
# finishes; SIGINT to the whole process group (as from a terminal) kills the program (130);
# SIGTERM and SIGHUP are forwarded to the program (143, 129). Every run writes a profile that
# `edgeprof report` reads and that records the program's exit status or signal. After each
# case, no process of the test and no uprobe-multi link on its files is left.
# Needs root (skips otherwise) and BPF: skips when `edgeprof run` of a trivial program says
# BPF is unavailable (CI=true turns the skip into a failure). Exit 0 pass, 77 skip, else fail.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/support/bpf-checks.sh
source tests/support/bpf-checks.sh
EDGEPROF=${EDGEPROF:-build/edgeprof}

fails=0
checks=0
[ -x "$EDGEPROF" ] || { echo "FAIL: $EDGEPROF not built (run make)"; exit 1; }
EDGEPROF=$(realpath "$EDGEPROF")
[ "$(id -u)" = 0 ] || { echo "SKIP: edgeprof run needs root"; exit 77; }
for c in gcc python3 bpftool pgrep cmp timeout; do
	command -v "$c" >/dev/null || { echo "SKIP: $c not found"; exit 77; }
done
ulimit -c 0 # the SIGSEGV case dumps no core

tmp=$(mktemp -d)
# kill_left: kills (by pid) whatever still runs with this test's directory in its command line.
kill_left() {
	local pids
	pids=$(pgrep -f -- "$tmp/")
	[ -z "$pids" ] || kill -KILL $pids 2>/dev/null
}
trap 'kill_left; rm -rf "$tmp"' EXIT

# Helper programs.
# echo: copies stdin to stdout (any bytes), writes its arguments, $EP_TEST_VAR and its working
# directory to stderr, exits 3.
cat >"$tmp/echo.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	char buf[4096], cwd[4096];
	ssize_t n;

	while ((n = read(0, buf, sizeof(buf))) > 0)
		if (write(1, buf, n) != n)
			return 10;
	if (n < 0)
		return 11;
	for (int i = 0; i < argc; i++)
		fprintf(stderr, "argv[%d]=<%s>\n", i, argv[i]);
	fprintf(stderr, "EP_TEST_VAR=<%s>\n", getenv("EP_TEST_VAR") ? getenv("EP_TEST_VAR") : "(unset)");
	fprintf(stderr, "cwd=<%s>\n", getcwd(cwd, sizeof(cwd)) ? cwd : "?");
	return 3;
}
EOF
# segv: writes a line to stdout and one to stderr, then dereferences NULL.
cat >"$tmp/segv.c" <<'EOF'
#include <stdio.h>
int main(int argc, char **argv)
{
	printf("before the crash\n");
	fflush(stdout);
	fprintf(stderr, "about to crash\n");
	*(volatile int *)(argc > 5 ? (void *)argv : NULL) = 1;
	return 0;
}
EOF
# sleeper READY: creates READY, then sleeps about 2 s in 100 ms steps, exits 0.
cat >"$tmp/sleeper.c" <<'EOF'
#include <stdio.h>
#include <time.h>
int main(int argc, char **argv)
{
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	FILE *f = argc > 1 ? fopen(argv[1], "w") : NULL;

	if (!f)
		return 20;
	fclose(f);
	for (int i = 0; i < 20; i++)
		nanosleep(&ts, NULL);
	return 0;
}
EOF
cat >"$tmp/quiet.c" <<'EOF'
int main(void) { return 0; }
EOF
for p in quiet echo segv sleeper; do
	gcc -O2 -o "$tmp/$p" "$tmp/$p.c" || { echo "FAIL: cannot build $p"; exit 1; }
done

# The uprobe-multi links on files of $tmp, one id a line.
links() {
	uprobe_links "$tmp/"
}

# BPF must work for root; otherwise the whole test is skipped.
timeout -k 5 60 "$EDGEPROF" -q run -o "$tmp/probe.json" -- "$tmp/quiet" >"$tmp/out" 2>"$tmp/err" </dev/null
rc=$?
if [ $rc != 0 ]; then
	skip_if_no_bpf "$tmp/err"
	echo "FAIL: edgeprof run of a trivial program failed (exit $rc): $(head -c 500 "$tmp/err")"
	exit 1
fi

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# check_left NAME: nothing of case NAME may be left running or attached (a link goes with its
# last fd: give the kernel a moment).
check_left() {
	local left after
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		left=$(pgrep -a -f -- "$tmp/")
		after=$(links)
		[ -z "$left" ] && [ -z "$after" ] && break
		sleep 0.2
	done
	if [ -n "$left" ]; then
		fail "$1: processes left: $(tr '\n' ' ' <<<"$left")"
		kill_left
	fi
	[ -z "$after" ] || fail "$1: uprobe-multi links left: $(tr '\n' ' ' <<<"$after")"
}

# check_profile NAME FILE KEY VALUE: FILE is a profile `edgeprof report` reads, and its
# run.KEY (exit_code or signal) in `report --json` is VALUE.
check_profile() {
	local name=$1 file=$2 key=$3 want=$4 got
	if [ ! -s "$file" ]; then
		fail "$name: no profile written"
		return 1
	fi
	if ! "$EDGEPROF" report "$file" >"$tmp/report" 2>"$tmp/report.err" || ! grep -q '^probes:' "$tmp/report"; then
		fail "$name: edgeprof report cannot read the profile: $(head -c 300 "$tmp/report.err")"
		return 1
	fi
	got=$("$EDGEPROF" report --json "$file" 2>"$tmp/report.err" |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["run"][sys.argv[1]])' "$key")
	[ "$got" = "$want" ] || { fail "$name: the profile records $key $got, not $want"; return 1; }
}

# --- pass-through: stdin, stdout, stderr, argv, environment, cwd, exit status ---
checks=$((checks + 1))
head -c 300000 /dev/urandom >"$tmp/in" # binary, with NULs, more than a pipe buffer
printf '\n' >>"$tmp/in"
args=("$tmp/echo" 'two words' '' '--' '-o' 'x.json' $'tab\there')
export EP_TEST_VAR='some value; with $ and "quotes"'
(cd "$tmp" && "${args[@]}" <"$tmp/in" >"$tmp/native.out" 2>"$tmp/native.err")
native_rc=$?
[ $native_rc = 3 ] || fail "echo: the native run exits $native_rc, not 3"
(cd "$tmp" && timeout -k 5 60 "$EDGEPROF" -q run -o "$tmp/echo.json" -- "${args[@]}" <"$tmp/in" >"$tmp/ep.out" 2>"$tmp/ep.err")
rc=$?
ok=1
[ $rc = $native_rc ] || { fail "echo: edgeprof exits $rc, the program alone $native_rc"; ok=0; }
cmp -s "$tmp/native.out" "$tmp/ep.out" || { fail "echo: stdout differs from the native run ($(stat -c %s "$tmp/ep.out") vs $(stat -c %s "$tmp/native.out") bytes)"; ok=0; }
cmp -s "$tmp/native.err" "$tmp/ep.err" || { fail "echo: with -q, stderr is not exactly the program's: $(diff "$tmp/native.err" "$tmp/ep.err" | head -c 400)"; ok=0; }
check_profile echo "$tmp/echo.json" exit_code 3 || ok=0
check_left echo
[ $ok = 1 ] && echo "ok: echo: stdin, stdout, stderr, argv, environment, cwd and exit status 3 pass through (files)"

# The same through pipes, and without -q: only "edgeprof: " lines may be added to stderr.
checks=$((checks + 1))
rm -f "$tmp/echo.json"
(cd "$tmp" && cat "$tmp/in" | timeout -k 5 60 "$EDGEPROF" run -o "$tmp/echo.json" -- "${args[@]}" 2>"$tmp/ep.err" | cat >"$tmp/ep.out"; exit "${PIPESTATUS[1]}")
rc=$?
ok=1
[ $rc = $native_rc ] || { fail "echo-pipes: edgeprof exits $rc, the program alone $native_rc"; ok=0; }
cmp -s "$tmp/native.out" "$tmp/ep.out" || { fail "echo-pipes: stdout differs from the native run"; ok=0; }
grep -v '^edgeprof: ' "$tmp/ep.err" >"$tmp/ep.err.prog"
cmp -s "$tmp/native.err" "$tmp/ep.err.prog" || { fail "echo-pipes: stderr without edgeprof's lines is not the program's: $(diff "$tmp/native.err" "$tmp/ep.err.prog" | head -c 400)"; ok=0; }
check_profile echo-pipes "$tmp/echo.json" exit_code 3 || ok=0
check_left echo-pipes
[ $ok = 1 ] && echo "ok: echo-pipes: the same through pipes; edgeprof's own stderr lines: $(grep -c '^edgeprof: ' "$tmp/ep.err")"
unset EP_TEST_VAR

# --- SIGSEGV: exit 128 + 11, the profile is written ---
checks=$((checks + 1))
{ "$tmp/segv" >"$tmp/native.out" 2>"$tmp/native.err"; } 2>/dev/null # no "Segmentation fault" from bash
native_rc=$?
timeout -k 5 60 "$EDGEPROF" -q run -o "$tmp/segv.json" -- "$tmp/segv" >"$tmp/ep.out" 2>"$tmp/ep.err" </dev/null
rc=$?
ok=1
[ $native_rc = 139 ] || fail "segv: the native run exits $native_rc, not 139"
[ $rc = 139 ] || { fail "segv: edgeprof exits $rc, not 139: $(head -c 300 "$tmp/ep.err")"; ok=0; }
cmp -s "$tmp/native.out" "$tmp/ep.out" || { fail "segv: stdout differs from the native run"; ok=0; }
cmp -s "$tmp/native.err" "$tmp/ep.err" || { fail "segv: with -q, stderr is not exactly the program's: $(head -c 300 "$tmp/ep.err")"; ok=0; }
check_profile segv "$tmp/segv.json" signal 11 || ok=0
check_left segv
[ $ok = 1 ] && echo "ok: segv: exit 139, streams as native, profile written (signal 11)"

# --- signals to edgeprof while the program runs ---
# Each run is a job of its own (set -m: its own process group, SIGINT not ignored as it is
# for background commands of a shell without job control).
set -m

# signal_case NAME TARGET SIGNAL STATUS KEY VALUE: starts `edgeprof run -- sleeper`, waits
# until the program runs, sends SIGNAL to TARGET (edgeprof: its pid only; group: its process
# group), and expects edgeprof to exit STATUS with a profile whose run.KEY is VALUE.
signal_case() {
	local name=$1 target=$2 sig=$3 want=$4 key=$5 val=$6 pid prog rc ok=1 i ign
	checks=$((checks + 1))
	rm -f "$tmp/ready" "$tmp/$name.json"
	# Default dispositions of the forwarded signals, whatever the caller's (under nohup the
	# program would inherit SIGHUP ignored, and rightly ignore the forwarded one).
	env --default-signal=HUP,TERM "$EDGEPROF" -q run -o "$tmp/$name.json" -- \
		"$tmp/sleeper" "$tmp/ready" >"$tmp/ep.out" 2>"$tmp/ep.err" </dev/null &
	pid=$!
	for ((i = 0; i < 200; i++)); do
		[ -e "$tmp/ready" ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	if [ ! -e "$tmp/ready" ]; then
		fail "$name: the program did not start: $(head -c 300 "$tmp/ep.err")"
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		check_left "$name"
		return
	fi
	# The program must get SIGINT's disposition as it was (not ignored), else the test
	# proves nothing and the program would not behave as without edgeprof.
	prog=$(pgrep -f -- "^$tmp/sleeper ")
	ign=$(awk '/^SigIgn:/ { print $2 }' "/proc/$prog/status" 2>/dev/null)
	if [ -n "$ign" ] && (((0x$ign >> 1) & 1)); then
		fail "$name: the program ignores SIGINT (SigIgn $ign) although edgeprof's caller did not"
		ok=0
	fi
	case $target in
	edgeprof) kill "-$sig" "$pid" ;;
	group) kill "-$sig" -- "-$pid" ;;
	esac
	# At most 30 s: the program alone ends after about 2 s.
	for ((i = 0; i < 300; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		fail "$name: edgeprof still runs 30 s after SIG$sig"
		kill -KILL "$pid"
		ok=0
	fi
	wait "$pid"
	rc=$?
	[ "$rc" = "$want" ] || { fail "$name: edgeprof exits $rc, not $want: $(head -c 300 "$tmp/ep.err")"; ok=0; }
	[ -s "$tmp/ep.out" ] && { fail "$name: output on stdout: $(head -c 200 "$tmp/ep.out")"; ok=0; }
	[ -s "$tmp/ep.err" ] && { fail "$name: with -q, output on stderr: $(head -c 300 "$tmp/ep.err")"; ok=0; }
	check_profile "$name" "$tmp/$name.json" "$key" "$val" || ok=0
	check_left "$name"
	[ $ok = 1 ] && echo "ok: $name: SIG$sig to $target: exit $rc, profile written ($key $val)"
}

signal_case sigint-edgeprof edgeprof INT 0 exit_code 0
signal_case sigint-group group INT 130 signal 2
signal_case sigterm-edgeprof edgeprof TERM 143 signal 15
signal_case sighup-edgeprof edgeprof HUP 129 signal 1
set +m

if [ "$fails" != 0 ]; then
	echo "run-behaviour: $fails failure(s) in $checks case(s)"
	exit 1
fi
echo "run-behaviour: all $checks cases ok"
exit 0
