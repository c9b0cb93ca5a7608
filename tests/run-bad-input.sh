#!/usr/bin/env bash
# Bad input to `edgeprof run` must fail cleanly: for each case, edgeprof must exit non-zero
# without a signal (the expected status: 2 for a bad command line, 1 for bad input), print
# nothing on stdout and exactly one line on stderr that starts with "edgeprof: " and names the
# problem, leave no process behind (nothing whose command line names this test's temporary
# directory) and no uprobe-multi BPF link on a file of that directory (links that existed
# before the case, or that other users of the machine own, are ignored).
# Cases: PROG missing, a directory, not executable, a shell script, a patched 32-bit or
# non-x86-64 ELF, a truncated ELF; no PROG, unknown option, option without its argument, bad
# --placement; --weights missing, corrupt, truncated, or the profile of another binary
# (build-id); -o into a directory that does not exist and onto a directory; edgeprof run as
# an unprivileged user (no BPF: the program must not run); probes the kernel refuses (naive
# placement on a block starting with hlt: the program, already started and stopped, must be
# killed and reaped; a hang counts as a failure); and `edgeprof report` of a real profile
# truncated at half its size or with a NUL byte in the middle.
# -o into a missing directory or onto a directory: refused before the program runs (it would
# create a marker file), in one line naming the file, exit status 1, and neither the file
# nor a temporary file is left behind (tests/run-output.sh has the other destinations).
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
for c in gcc python3 bpftool pgrep timeout; do
	command -v "$c" >/dev/null || { echo "SKIP: $c not found"; exit 77; }
done

tmp=$(mktemp -d)
# kill_left: kills (by pid) whatever still runs with this test's directory in its command line.
kill_left() {
	local pids
	pids=$(pgrep -f -- "$tmp/")
	[ -z "$pids" ] || kill -KILL $pids 2>/dev/null
}
trap 'kill_left; rm -rf "$tmp"' EXIT
chmod 755 "$tmp"

# Helper programs: `quiet` does nothing; `marker FILE` creates FILE (to see whether it ran);
# `other` is a different binary (another build-id).
cat >"$tmp/quiet.c" <<'EOF'
int main(void) { return 0; }
EOF
cat >"$tmp/marker.c" <<'EOF'
#include <stdio.h>
int main(int argc, char **argv)
{
	FILE *f = argc > 1 ? fopen(argv[1], "w") : NULL;

	if (f)
		fclose(f);
	return 0;
}
EOF
cat >"$tmp/other.c" <<'EOF'
#include <stdlib.h>
static int twice(int x) { return 2 * x; }
int main(int argc, char **argv) { return twice(argc) == 2 ? 0 : atoi(argv[1]); }
EOF
# `hlt`: main has a block that starts with hlt, an instruction uprobes refuse to probe.
cat >"$tmp/hlt.c" <<'EOF'
int main(int argc, char **argv) { if (argc > 5) __asm__ volatile("hlt"); return 0; }
EOF
for p in quiet marker other hlt; do
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

# check_left: sets $why (appending) if a process of this test is still running or a new
# uprobe-multi link on its files (not in $before) is attached; kills those processes. A link
# goes with its last fd: the kernel is given a moment.
check_left() {
	local left after
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		left=$(pgrep -a -f -- "$tmp/")
		after=$(comm -13 <(sort <<<"$before") <(links | sort))
		[ -z "$left" ] && [ -z "$after" ] && break
		sleep 0.2
	done
	if [ -n "$left" ]; then
		why="${why:+$why; }processes left: $(tr '\n' ' ' <<<"$left")"
		kill_left
	fi
	[ -z "$after" ] || why="${why:+$why; }uprobe-multi links left: $(tr '\n' ' ' <<<"$after")"
}

# expect_fail NAME STATUS REGEX [--as-nobody] [--may-succeed] ARGS...: `edgeprof ARGS` must
# fail with exit status STATUS as described at the top, with a stderr line matching the
# extended regex REGEX (case-insensitive). --as-nobody runs it as user nobody; --may-succeed
# also accepts success (exit 0, stderr and stdout empty: run with -q).
expect_fail() {
	local name=$1 want=$2 re=$3 rc nlines may_succeed=0 before
	local -a runner=()
	why=""
	shift 3
	if [ "${1:-}" = --as-nobody ]; then
		runner=("${NOBODY[@]}")
		shift
	fi
	if [ "${1:-}" = --may-succeed ]; then
		may_succeed=1
		shift
	fi
	checks=$((checks + 1))
	before=$(links)
	# A hang is a failure too (every case here takes well under a second).
	"${runner[@]}" timeout -k 5 30 "$EDGEPROF" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	nlines=$(wc -l <"$tmp/err")
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		why="hangs: killed after 30 s (stderr: $(head -c 300 "$tmp/err"))"
	elif [ "$rc" = 0 ] && [ $may_succeed = 1 ]; then
		[ -s "$tmp/out" ] && why="wrote to stdout: $(head -c 200 "$tmp/out")"
		[ -s "$tmp/err" ] && why="wrote to stderr: $(head -c 200 "$tmp/err")"
	elif [ "$rc" = 0 ]; then
		why="exit status 0"
	elif [ "$rc" -ge 128 ]; then
		why="killed by a signal (exit $rc)"
	elif [ "$rc" != "$want" ]; then
		why="exit status $rc, not $want"
	elif [ -s "$tmp/out" ]; then
		why="wrote to stdout: $(head -c 200 "$tmp/out")"
	elif [ "$nlines" != 1 ]; then
		why="$nlines lines on stderr: $(head -c 400 "$tmp/err")"
	elif ! grep -q '^edgeprof: ' "$tmp/err"; then
		why="stderr line lacks the 'edgeprof: ' prefix: $(cat "$tmp/err")"
	elif ! grep -qiE "$re" "$tmp/err"; then
		why="stderr does not match /$re/: $(cat "$tmp/err")"
	fi
	check_left
	if [ -n "$why" ]; then
		echo "FAIL: $name (edgeprof $*): $why"
		fails=$((fails + 1))
		return 1
	fi
	if [ "$rc" = 0 ]; then
		echo "ok: $name: succeeded"
	else
		echo "ok: $name: $(cat "$tmp/err")"
	fi
}

# patch FILE OFFSET FORMAT VALUE: writes VALUE packed with struct FORMAT ('<H', '<B') at
# OFFSET of FILE, in place.
patch() {
	python3 - "$@" <<'PY'
import struct, sys
path, off, fmt, val = sys.argv[1], int(sys.argv[2], 0), sys.argv[3], int(sys.argv[4], 0)
with open(path, 'r+b') as fh:
    fh.seek(off)
    fh.write(struct.pack(fmt, val))
PY
}

# --- PROG ---
expect_fail prog-missing 1 "'$tmp/missing'.*no such file" run -o "$tmp/p.json" -- "$tmp/missing"
expect_fail prog-not-in-path 1 "'edgeprof-no-such-command-$$'.*not found" \
	run -o "$tmp/p.json" -- "edgeprof-no-such-command-$$"
mkdir "$tmp/dir"
expect_fail prog-directory 1 "'$tmp/dir'.*(not an executable|directory)" run -o "$tmp/p.json" "$tmp/dir"
cp "$tmp/marker" "$tmp/noexec"
chmod 644 "$tmp/noexec"
expect_fail prog-not-executable 1 "not an executable|permission" run -o "$tmp/p.json" "$tmp/noexec" "$tmp/ran"
printf '#!/bin/sh\necho "the script ran"\n: >"$1"\n' >"$tmp/script.sh"
chmod 755 "$tmp/script.sh"
expect_fail prog-shell-script 1 "'$tmp/script.sh'.*not an ELF" run -o "$tmp/p.json" "$tmp/script.sh" "$tmp/ran"
cp "$tmp/marker" "$tmp/class32"
patch "$tmp/class32" 4 '<B' 1 # e_ident[EI_CLASS] = ELFCLASS32
expect_fail prog-elfclass32 1 '32-bit|64-bit' run -o "$tmp/p.json" "$tmp/class32" "$tmp/ran"
cp "$tmp/marker" "$tmp/aarch64"
patch "$tmp/aarch64" 0x12 '<H' 183 # e_machine = EM_AARCH64
expect_fail prog-machine-aarch64 1 'machine|x86-64' run -o "$tmp/p.json" "$tmp/aarch64" "$tmp/ran"
cp "$tmp/marker" "$tmp/i386"
patch "$tmp/i386" 0x12 '<H' 3 # e_machine = EM_386
expect_fail prog-machine-i386 1 'machine|x86-64' run -o "$tmp/p.json" "$tmp/i386" "$tmp/ran"
head -c $(($(stat -c %s "$tmp/marker") / 2)) "$tmp/marker" >"$tmp/truncated"
chmod 755 "$tmp/truncated"
expect_fail prog-truncated 1 'truncat|corrupt' run -o "$tmp/p.json" "$tmp/truncated" "$tmp/ran"
if [ -e "$tmp/ran" ]; then
	echo "FAIL: a refused program ran anyway"
	fails=$((fails + 1))
fi
[ -e "$tmp/p.json" ] && { echo "FAIL: a refused run wrote a profile"; fails=$((fails + 1)); }

# Probes the kernel refuses: naive placement probes the first instruction of every block, one
# of which is a hlt (uprobes: ENOTSUPP). The program is started (stopped) before the probes
# are attached: edgeprof must kill and reap it and fail in one line, or avoid such sites.
if objdump -d "$tmp/hlt" 2>/dev/null | grep -qw hlt; then
	expect_fail probes-refused 1 'attach|probe' --may-succeed -q run --placement naive -o "$tmp/hlt.json" -- "$tmp/hlt"
	rm -f "$tmp/hlt.json"
fi

# --- command line ---
expect_fail no-program 2 'no program' run
expect_fail no-program-after-options 2 'no program' run -o "$tmp/p.json" --placement naive --
expect_fail unknown-option 2 "unknown option '--bogus'" run --bogus "$tmp/quiet"
expect_fail unknown-short-option 2 "unknown option '-x'|invalid option.*x" run -x "$tmp/quiet"
expect_fail placement-without-argument 2 "'--placement'.*argument|argument.*'--placement'" run --placement
expect_fail output-without-argument 2 "'-o'.*argument|argument.*'-o'" run -o
expect_fail bad-placement 2 "placement 'smart'" run --placement smart "$tmp/quiet"
expect_fail empty-placement 2 "placement ''" run --placement= "$tmp/quiet"

# --- --weights ---
expect_fail weights-missing 1 "'$tmp/nope.json'.*no such file" run --weights "$tmp/nope.json" -o "$tmp/p.json" "$tmp/quiet"
printf '{"format": "edgeprof-profile", "version": 1, "binary": {"path": 3\x00\xff' >"$tmp/corrupt.json"
expect_fail weights-corrupt 1 "'$tmp/corrupt.json'.*(corrupt|not an edgeprof)" run --weights "$tmp/corrupt.json" -o "$tmp/p.json" "$tmp/quiet"
echo 'just some text' >"$tmp/text.json"
expect_fail weights-text 1 "'$tmp/text.json'.*not an edgeprof" run --weights "$tmp/text.json" -o "$tmp/p.json" "$tmp/quiet"
if timeout -k 5 60 "$EDGEPROF" -q run -o "$tmp/other.json" -- "$tmp/other" >/dev/null 2>"$tmp/err" </dev/null &&
	[ -s "$tmp/other.json" ]; then
	expect_fail weights-other-binary 1 "'$tmp/other.json'.*build-id" run --weights "$tmp/other.json" -o "$tmp/p.json" "$tmp/quiet"
	head -c $(($(stat -c %s "$tmp/other.json") / 2)) "$tmp/other.json" >"$tmp/other-half.json"
	expect_fail weights-truncated 1 "'$tmp/other-half.json'.*(truncated|corrupt)" run --weights "$tmp/other-half.json" -o "$tmp/p.json" "$tmp/other"
	# End to end through `report`: a real profile truncated at half its size, or damaged.
	expect_fail report-truncated-half 1 "^edgeprof: '$tmp/other-half.json'.*(truncated|corrupt)" report "$tmp/other-half.json"
	expect_fail report-json-truncated-half 1 "^edgeprof: '$tmp/other-half.json'.*(truncated|corrupt)" report --json "$tmp/other-half.json"
	cp "$tmp/other.json" "$tmp/other-nul.json"
	patch "$tmp/other-nul.json" $(($(stat -c %s "$tmp/other.json") / 2)) '<B' 0
	expect_fail report-nul-byte 1 "^edgeprof: '$tmp/other-nul.json'.*corrupt" report "$tmp/other-nul.json"
else
	echo "FAIL: edgeprof run -o other.json failed: $(head -c 300 "$tmp/err")"
	fails=$((fails + 1))
fi
[ -e "$tmp/p.json" ] && { echo "FAIL: a refused run wrote a profile"; fails=$((fails + 1)); }

# --- -o that cannot be written: refused before the program runs, in one line, nothing is left ---
rm -f "$tmp/ran"
expect_fail output-dir-missing 1 "'$tmp/no-such-dir/p.json'.*cannot write.*does not exist" run -o "$tmp/no-such-dir/p.json" -- "$tmp/marker" "$tmp/ran"
[ -e "$tmp/no-such-dir" ] && { echo "FAIL: -o created a directory"; fails=$((fails + 1)); }
mkdir "$tmp/outdir"
expect_fail output-is-directory 1 "'$tmp/outdir'.*cannot write.*directory" run -o "$tmp/outdir" -- "$tmp/marker" "$tmp/ran"
if [ -e "$tmp/ran" ]; then
	echo "FAIL: the program ran although its -o was refused"
	fails=$((fails + 1))
fi
if [ -n "$(ls -A "$tmp/outdir")" ] || compgen -G "$tmp/*.tmp.*" >/dev/null; then
	echo "FAIL: a failed write left files behind: $(ls -A "$tmp/outdir" "$tmp"/*.tmp.* 2>/dev/null | tr '\n' ' ')"
	fails=$((fails + 1))
fi

# --- no BPF privilege: edgeprof as user nobody; the program must not run ---
NOBODY=()
if id nobody >/dev/null 2>&1; then
	group=$(id -gn nobody)
	if command -v setpriv >/dev/null; then
		NOBODY=(setpriv --reuid=nobody --regid="$group" --clear-groups --inh-caps=-all --)
	elif command -v runuser >/dev/null; then
		NOBODY=(runuser -u nobody --)
	fi
fi
if [ ${#NOBODY[@]} = 0 ]; then
	echo "note: no user nobody, or neither setpriv nor runuser: the unprivileged case is not tested"
else
	# edgeprof itself, the program and a writable directory, all reachable by nobody.
	cp "$EDGEPROF" "$tmp/edgeprof"
	mkdir "$tmp/nobody"
	chown nobody "$tmp/nobody"
	saved=$EDGEPROF
	EDGEPROF=$tmp/edgeprof
	expect_fail unprivileged 1 'BPF.*(privilege|permission|root|CAP_)|(privilege|permission|root).*BPF' \
		--as-nobody run -o "$tmp/nobody/p.json" -- "$tmp/marker" "$tmp/nobody/ran"
	EDGEPROF=$saved
	if [ -e "$tmp/nobody/ran" ]; then
		echo "FAIL: unprivileged: the program ran although it could not be profiled"
		fails=$((fails + 1))
	fi
	if [ -n "$(ls -A "$tmp/nobody")" ]; then
		echo "FAIL: unprivileged: files left: $(ls -A "$tmp/nobody" | tr '\n' ' ')"
		fails=$((fails + 1))
	fi
fi

if [ "$fails" != 0 ]; then
	echo "run-bad-input: $fails of $checks case(s) failed"
	exit 1
fi
echo "run-bad-input: all $checks cases ok"
exit 0
