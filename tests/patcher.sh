#!/usr/bin/env bash
# Test of the in-process counting backend's process side (user/count/patcher.c, remote
# syscalls in user/proc/remote.c): builds tests/patcher_test.c with them and the program
# tests/patcher/target (NFUNCS functions of tests/patcher/funcs.S with a known 6-byte prologue,
# each counting its own calls in calls[k]: the oracle), and runs the driver's three modes:
#   run     patched at the exec stop (PIE and non-PIE builds, and at a PTRACE_EVENT_EXEC stop
#           inside execve; 1 thread, 4 threads with the
#           increments turned atomic at the first clone, and a forked child that gets its
#           original bytes back): every counter equals the program's own count at its exit
#   attach  6 windows on a running 4-thread program (PTRACE_SEIZE + interrupt): counters equal
#           the calls made in the window (threads caught in flight accounted for), one thread
#           stepped into a trampoline each time and moved out, text equal to the file's, no pc
#           in a region, regions gone from /proc/PID/maps; also with 2048 sites
#           and with the main thread blocked in read() on a pipe (the remote mmap and munmap
#           interrupt it there: it must still read its byte)
#   kill    the patching helper is SIGKILLed while the program runs patched
# and compares the program's stdout with a native run's each time. Prints the install and
# remove times. Exit 0 pass, 77 skip (no gcc, not root, ptrace not permitted), else fail.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/support/checks.sh

command -v gcc >/dev/null || { echo "SKIP: gcc not found"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (/proc/PID/map_files)"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

CFLAGS="-std=gnu11 -O2 -g -Wall -Wextra -Wshadow -Wmissing-prototypes -Werror -I. -D_GNU_SOURCE"
if ! gcc $CFLAGS tests/patcher_test.c user/count/patcher.c user/proc/remote.c \
	user/util/log.c user/util/progress.c user/util/clock.c cfg/error.c cfg/sort.c -lpthread -o "$tmp/driver" 2>"$tmp/build.err"; then
	cat "$tmp/build.err"
	echo "FAIL: cannot build the patcher test driver"
	exit 1
fi
build_target() { # NAME NFUNCS EXTRA-GCC-FLAGS...
	local name=$1 n=$2
	shift 2
	gcc -O2 -g -DNFUNCS="$n" -pthread "$@" tests/patcher/target.c tests/patcher/funcs.S \
		-o "$tmp/$name" || { echo "FAIL: cannot build $name"; exit 1; }
}
build_target t8 8
build_target t8nopie 8 -no-pie
build_target t2048 2048

sym() { nm "$1" | awk -v s="$2" '$3 == s { print "0x" $1 }'; }

# Is ptrace permitted here at all?
if ! "$tmp/driver" run 8 "$(sym "$tmp/t8" funcs_start)" "$(sym "$tmp/t8" calls)" \
	"$tmp/t8" 1 10 >/dev/null 2>"$tmp/probe.err"; then
	if grep -qi "not permitted" "$tmp/probe.err"; then
		echo "SKIP: ptrace not permitted: $(head -1 "$tmp/probe.err")"
		exit 77
	fi
fi

# check NAME MODE PROG NFUNCS [DRIVER-ARGS] -- PROG-ARGS: PROG natively, then under the driver.
check() {
	local name=$1 mode=$2 prog=$3 nfuncs=$4 n
	shift 4
	local dargs=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		dargs+=("$1")
		shift
	done
	shift
	"$tmp/$prog" "$@" >"$tmp/$name.native"
	timeout 300 "$tmp/driver" "$mode" "$nfuncs" "$(sym "$tmp/$prog" funcs_start)" \
		"$(sym "$tmp/$prog" calls)" "${dargs[@]}" "$tmp/$prog" "$@" \
		>"$tmp/$name.out" 2>"$tmp/$name.err"
	n=$?
	grep '^time\|^window\|^counter' "$tmp/$name.err" | sed "s/^/  $name: /"
	if [ "$n" = 0 ]; then
		ok "$name: every check of the driver held"
	else
		grep '^FAIL' "$tmp/$name.err" | head -5
		bad "$name: the driver exited with $n"
	fi
	if cmp -s "$tmp/$name.native" "$tmp/$name.out"; then
		ok "$name: output equals the native run's ($(wc -l <"$tmp/$name.out") lines)"
	else
		bad "$name: output differs from the native run's"
	fi
}

check run-1 run t8 8 -- 1 100000
check run-4threads run t8 8 -- 4 100000
check run-fork run t8 8 -- 3 50000 fork
check run-nopie run t8nopie 8 -- 4 50000
check run-exec-event run-ev t8 8 -- 2 50000
check run-2048 run t2048 2048 -- 2 100
check attach-4threads attach t8 8 6 -- 4 30000000
check attach-2048 attach t2048 2048 3 -- 4 30000
check attach-blocked attach t8 8 4 -- 3 30000000 block
check kill kill t8 8 -- 4 10000000

checks_summary patcher
