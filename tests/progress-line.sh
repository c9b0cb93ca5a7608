#!/usr/bin/env bash
# The progress line (user/util/progress.c): on a terminal (a pty from `script -qec`,
# util-linux), `edgeprof run` of a program that runs 1.6 s, its stdin and stdout not the
# terminal, shows "edgeprof: analysing 'NAME': ..." then "edgeprof: running (1.0 s)" and
# "(1.5 s)", rewritten in place with '\r' (no newline of its own), erased at the end (spaces
# over it, the cursor back at column 0); a warning printed while the line is shown starts at
# column 0 (the line is erased first). Never: with stderr redirected to a file (nothing of it
# in the file nor on the terminal), with -q, and no running time when the program's stdout is
# the terminal (its output would run into the line; the analysis line still shows). Every run
# makes its analysis (EDGEPROF_NO_ANALYSIS_CACHE=1: one read back shows no analysis line).
# Needs root and script(1) (skips otherwise), and BPF (skips when unavailable; CI=true fails).
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/support/bpf-checks.sh
source tests/support/bpf-checks.sh
# shellcheck source=tests/support/checks.sh
source tests/support/checks.sh
need_root_and gcc python3 script timeout
# The analysis is made each run (a kept one is read back without a progress line).
export EDGEPROF_NO_ANALYSIS_CACHE=1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/slow.c" <<'EOF'
#include <stdio.h>
#include <unistd.h>
__attribute__((noinline)) static void nap(void) { usleep(400000); }
int main(void)
{
	for (int i = 0; i < 4; i++)
		nap();
	puts("done");
	return 0;
}
EOF
gcc -O2 -g -o "$tmp/slow" "$tmp/slow.c" || { echo "FAIL: cannot build slow.c"; exit 1; }

# on_tty NAME COMMAND: runs COMMAND (a shell string) under script's pty into $tmp/NAME.ts
# (the terminal's bytes, without script's header and footer lines).
on_tty() {
	timeout -k 5 60 script -qec "$2" "$tmp/$1.raw" >/dev/null 2>&1 </dev/null
	sed '1d;$d' "$tmp/$1.raw" >"$tmp/$1.ts"
}

timeout -k 5 60 "$EDGEPROF" run -o "$tmp/probe.data" -- /bin/true >/dev/null 2>"$tmp/err" </dev/null ||
	{ skip_if_no_bpf "$tmp/err"; echo "FAIL: edgeprof run failed: $(head -n 1 "$tmp/err")"; exit 1; }

on_tty tty "'$EDGEPROF' run -o '$tmp/a.data' -- '$tmp/slow' </dev/null >'$tmp/a.out'"
if python3 - "$tmp/tty.ts" <<'EOF'; then
import re, sys
t = open(sys.argv[1], "rb").read().decode()
assert "\redgeprof: analysing 'slow': " in t, "no analysis line"
assert "\redgeprof: running (1.0 s)" in t and "\redgeprof: running (1.5 s)" in t, "no running time"
assert "\n" not in t.rstrip("\r\n"), "a newline of its own"
# Erased at the end: the last thing written is spaces over the line, then '\r'.
assert re.search(r"\r +\r(\r?\n)?$", t), repr(t[-60:])
EOF
	ok "on a terminal: the analysis line, then 'running (1.0 s)', '(1.5 s)', erased at the end"
else
	bad "on a terminal: $(cat -v "$tmp/tty.ts" | head -c 400)"
fi
[ "$(cat "$tmp/a.out")" = done ] && ok "the program's stdout is untouched" || bad "program stdout: $(cat "$tmp/a.out")"

on_tty file "'$EDGEPROF' run -o '$tmp/b.data' -- '$tmp/slow' </dev/null >/dev/null 2>'$tmp/b.err'"
if [ ! -s "$tmp/b.err" ] && ! grep -q edgeprof "$tmp/file.ts"; then
	ok "stderr a file: no progress in it nor on the terminal"
else
	bad "stderr a file: $(cat -v "$tmp/b.err" | head -c 200) / $(cat -v "$tmp/file.ts" | head -c 200)"
fi

on_tty quiet "'$EDGEPROF' -q run -o '$tmp/c.data' -- '$tmp/slow' </dev/null >/dev/null"
grep -q edgeprof "$tmp/quiet.ts" && bad "-q: $(cat -v "$tmp/quiet.ts" | head -c 200)" ||
	ok "-q: no progress line"

on_tty out "'$EDGEPROF' run -o '$tmp/d.data' -- '$tmp/slow' </dev/null"
if grep -q "edgeprof: analysing" "$tmp/out.ts" && ! grep -q "running (" "$tmp/out.ts"; then
	ok "the program's stdout on the terminal: the analysis line, no running time"
else
	bad "the program's stdout on the terminal: $(cat -v "$tmp/out.ts" | head -c 300)"
fi

# A warning (one pattern matches nothing) comes while the analysis line is shown: it starts
# at column 0, after spaces over the line.
on_tty warn "'$EDGEPROF' run --only main --only nosuch -o '$tmp/e.data' -- '$tmp/slow' </dev/null >/dev/null"
if python3 - "$tmp/warn.ts" <<'EOF'; then
import re, sys
t = open(sys.argv[1], "rb").read().decode()
assert "edgeprof: analysing" in t
assert re.search(r"\r +\redgeprof: warning: --only 'nosuch' matches no function\r?\n", t), repr(t)
EOF
	ok "a warning erases the line first and starts at column 0"
else
	bad "warning: $(cat -v "$tmp/warn.ts" | head -c 400)"
fi

checks_summary progress-line
