#!/usr/bin/env bash
# Test of the tracer (user/proc/tracer.c): builds tests/tracer_test.c with the tracer and the test
# programs exit_deep, fork_child, threads and signal_death (gcc -O0 and -O2, -g), runs each
# under the tracer and checks the frame events against the call chains in their sources
# (FRAME_EXIT for frames left by exit() deep in the stack, by a fatal signal and by
# pthread_exit; FRAME_ENTRY for the frames a forked child resumes in), that stdout and exit
# statuses pass through unchanged (compared with a native run), that exec errors are
# reported, and that SIGINT is ignored and SIGTERM forwarded while the program runs.
# Exit 0 pass, 77 skip (no gcc, no libdw headers, ptrace not permitted), anything else fail.
set -u
cd "$(dirname "$0")/.." || exit 1

fails=0
checks=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
ok() {
	checks=$((checks + 1))
}

command -v gcc >/dev/null || { echo "SKIP: gcc not found"; exit 77; }
[ -f /usr/include/elfutils/libdwfl.h ] || { echo "SKIP: libdw headers not found"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

CFLAGS="-std=gnu11 -O2 -g -Wall -Wextra -Wshadow -Wmissing-prototypes -Werror -I. -D_GNU_SOURCE"
if ! gcc $CFLAGS tests/tracer_test.c user/proc/tracer.c user/util/clock.c user/proc/proc_maps.c user/proc/libs.c user/util/log.c user/util/progress.c cfg/error.c \
	-o "$tmp/tracer_test" -lelf -ldw 2>"$tmp/build.err"; then
	cat "$tmp/build.err"
	echo "FAIL: cannot build the tracer test driver"
	exit 1
fi
DRIVER=$tmp/tracer_test

# Is ptrace permitted here at all?
"$DRIVER" -o "$tmp/probe.report" /bin/true 2>"$tmp/probe.err"
if grep -q "cannot trace" "$tmp/probe.err" "$tmp/probe.report" 2>/dev/null; then
	echo "SKIP: ptrace not permitted: $(head -1 "$tmp/probe.err")"
	exit 77
fi

# chain REPORT KIND WHICH: the functions of KIND (EXIT/ENTRY) events, innermost first, as one
# line "f1 f2 ...", for WHICH = main (the main process) or other (any other thread), with
# gcc's .cold/.part suffixes removed.
chain() {
	awk -v kind="$2" -v which="$3" '
		$1 == "main" { main = $2 }
		{ lines[NR] = $0 }
		END {
			out = ""
			for (i = 1; i <= NR; i++) {
				split(lines[i], f, " ")
				if (f[1] != kind)
					continue
				if ((which == "main") != (f[4] == main))
					continue
				name = f[2]
				sub(/\+0x[0-9a-f]+$/, "", name)
				sub(/\..*$/, "", name)
				out = out (out == "" ? "" : " ") name
			}
			print out
		}' "$1"
}

# expect_chain WHAT REPORT KIND WHICH EXPECTED
expect_chain() {
	local got
	got=$(chain "$2" "$3" "$4")
	if [ "$got" = "$5" ]; then ok; else fail "$1: $3 events of $4: got '$got', expected '$5'"; fi
}

# expect_line WHAT REPORT REGEX: a line of the report matches REGEX.
expect_line() {
	if grep -Eq "$3" "$2"; then ok; else fail "$1: no line matching '$3' in the report"; fi
}

# run NAME BIN ARGS...: runs BIN natively and under the tracer; compares stdout and the exit
# status, leaves the report in $tmp/NAME.report.
run() {
	local name=$1 bin=$2 nat_rc tr_rc
	shift 2
	{ "$bin" "$@" >"$tmp/$name.native"; } 2>/dev/null
	nat_rc=$?
	"$DRIVER" -o "$tmp/$name.report" "$bin" "$@" >"$tmp/$name.traced" 2>"$tmp/$name.err"
	tr_rc=$?
	if [ "$nat_rc" = "$tr_rc" ]; then ok; else fail "$name: exit status $tr_rc traced, $nat_rc native"; fi
	if cmp -s "$tmp/$name.native" "$tmp/$name.traced"; then
		ok
	else
		fail "$name: stdout differs from the native run"
		diff "$tmp/$name.native" "$tmp/$name.traced" | head -5
	fi
	if grep -q "unwind_failures 0" "$tmp/$name.report"; then ok; else fail "$name: unwind failures"; fi
	if [ -n "${VERBOSE:-}" ]; then
		echo "--- $name"
		cat "$tmp/$name.report"
	fi
}

for opt in -O0 -O2; do
	for p in exit_deep fork_child threads signal_death; do
		if ! gcc $opt -g -pthread -o "$tmp/$p$opt" "tests/programs/$p.c" 2>"$tmp/gcc.err"; then
			cat "$tmp/gcc.err"
			fail "cannot build tests/programs/$p.c with $opt"
			continue
		fi
	done

	# exit() four frames deep: every level is left without returning, then main and
	# _start (which calls __libc_start_main, never returning).
	n=exit_deep$opt
	run "$n" "$tmp/$n" 5
	expect_chain "$n" "$tmp/$n.report" EXIT main "level4 level3 level2 level1 main _start"
	expect_chain "$n" "$tmp/$n.report" ENTRY main ""
	expect_line "$n" "$tmp/$n.report" "^status exited 5$"
	if grep -q "^EXIT.*act=1" "$tmp/$n.report"; then fail "$n: activation in a call chain"; else ok; fi
	# Matching the binary by path gives the same events.
	"$DRIVER" -p -o "$tmp/$n.path.report" "$tmp/$n" 5 >/dev/null
	if [ "$(chain "$tmp/$n.path.report" EXIT main)" = "$(chain "$tmp/$n.report" EXIT main)" ]
	then
		ok
	else
		fail "$n: matching by path differs from matching by build-id"
	fi

	# Returning normally: only _start is left without returning.
	n=exit_deep$opt.ret
	run "$n" "$tmp/exit_deep$opt"
	expect_chain "$n" "$tmp/$n.report" EXIT main "_start"
	expect_line "$n" "$tmp/$n.report" "^status exited 0$"

	# fork from main -> spawn: the child resumes in spawn, main and _start (ENTRY), and
	# leaves them with child_work and child_run through exit(3) (EXIT).
	n=fork_child$opt
	run "$n" "$tmp/$n"
	expect_chain "$n" "$tmp/$n.report" ENTRY other "spawn main _start"
	expect_chain "$n" "$tmp/$n.report" EXIT other "child_work child_run spawn main _start"
	expect_chain "$n" "$tmp/$n.report" EXIT main "_start"
	expect_chain "$n" "$tmp/$n.report" ENTRY main ""
	expect_line "$n" "$tmp/$n.report" "^processes 2 threads 0 "

	# pthread_exit from worker -> finish_early in one of 4 threads.
	n=threads$opt
	run "$n" "$tmp/$n"
	expect_chain "$n" "$tmp/$n.report" EXIT other "finish_early worker"
	expect_chain "$n" "$tmp/$n.report" EXIT main "_start"
	expect_line "$n" "$tmp/$n.report" "^processes 1 threads 4 "

	# Death by SIGSEGV in inner: the faulting instruction is an activation.
	n=signal_death$opt.segv
	run "$n" "$tmp/signal_death$opt" segv
	expect_chain "$n" "$tmp/$n.report" EXIT main "inner outer main _start"
	expect_line "$n" "$tmp/$n.report" "^EXIT inner[.a-z0-9]*\+0x[0-9a-f]+ act=1 "
	expect_line "$n" "$tmp/$n.report" "^status signaled 11$"

	# abort() from inner: return addresses only.
	n=signal_death$opt.abort
	run "$n" "$tmp/signal_death$opt" abort
	expect_chain "$n" "$tmp/$n.report" EXIT main "inner outer main _start"
	expect_line "$n" "$tmp/$n.report" "^status signaled 6$"
	if grep -q "act=1" "$tmp/$n.report"; then fail "$n: activation after abort()"; else ok; fi
done

# Start errors: one message, a negative errno, nothing run.
"$DRIVER" -o "$tmp/missing.report" "$tmp/no-such-program" 2>"$tmp/missing.err"
if grep -q "cannot .*no-such-program.*No such file" "$tmp/missing.err"; then ok; else fail "missing program: $(cat "$tmp/missing.err")"; fi
printf 'not a program\n' >"$tmp/text"
chmod +x "$tmp/text"
"$DRIVER" -o "$tmp/text.report" "$tmp/text" 2>"$tmp/text.err"
if grep -q "cannot execute .*text.*Exec format error" "$tmp/text.err"; then ok; else fail "not a program: $(cat "$tmp/text.err")"; fi
chmod -x "$tmp/text"
"$DRIVER" -o "$tmp/noexec.report" "$tmp/text" 2>"$tmp/noexec.err"
if grep -q "cannot execute .*text.*Permission denied" "$tmp/noexec.err"; then ok; else fail "not executable: $(cat "$tmp/noexec.err")"; fi

# Signals: SIGINT to the tracer is ignored (the program keeps running), SIGTERM is forwarded.
"$DRIVER" -o "$tmp/sig.report" /bin/sleep 20 &
drv=$!
sleep 0.5
kill -INT "$drv"
sleep 0.3
if kill -0 "$drv" 2>/dev/null; then ok; else fail "SIGINT stopped the tracer"; fi
kill -TERM "$drv"
wait "$drv"
rc=$?
if [ "$rc" = 143 ] && grep -q "^status signaled 15$" "$tmp/sig.report"; then
	ok
else
	fail "SIGTERM not forwarded (exit $rc): $(cat "$tmp/sig.report" 2>/dev/null)"
	kill -KILL "$drv" 2>/dev/null
fi

if [ "$fails" -ne 0 ]; then
	echo "$fails of $((checks + fails)) checks failed"
	exit 1
fi
echo "tracer events: $checks checks passed"
