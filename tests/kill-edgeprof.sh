#!/bin/bash
# edgeprof killed with SIGKILL mid-run leaves a program that runs on correctly: with
# in-process counters its code holds jumps to edgeprof's trampolines, which live in the
# program's own memory, and nothing else of edgeprof's (no int3, no ptrace hold) is left.
# A program of threads, longjmp and a checksum runs natively, then under `edgeprof run` and
# under `edgeprof record -p`, each edgeprof SIGKILLed while the program runs: the program's
# output must equal the native run's, and it must end with status 0.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/support/checks.sh
source tests/support/checks.sh
# shellcheck source=tests/support/bpf-checks.sh
source tests/support/bpf-checks.sh

EDGEPROF=${EDGEPROF:-build/edgeprof}
tmp=$(mktemp -d)
trap 'kill_started; rm -rf "${tmp:?}"' EXIT
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (uprobes, BPF and ptrace)"
	exit 77
fi

cat >"$tmp/prog.c" <<'CSRC_KILL'
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static jmp_buf env;
static volatile unsigned long sink;

static __attribute__((noinline)) unsigned long mix(unsigned long x, int i)
{
	if (i % 3 == 0)
		return x * 31 + (unsigned long)i;
	if (i % 5 == 1)
		return x ^ (x >> 7);
	return x + 17;
}

static __attribute__((noinline)) void deep(int n)
{
	if (n == 0)
		longjmp(env, 1);
	deep(n - 1);
	sink++;
}

static long rounds = 10;

static void *worker(void *arg)
{
	unsigned long x = (unsigned long)arg;

	for (long r = 0; r < rounds; r++)
		for (int i = 0; i < 2000000; i++)
			x = mix(x, i);
	return (void *)x;
}

int main(int argc, char **argv)
{
	unsigned long sum = 0;
	pthread_t th[2];
	void *res;

	rounds = argc > 1 ? atol(argv[1]) : 10;
	/* The threads first, then the pid file: edgeprof is killed after both (edgeprof
	 * killed while tasks are being created: the last case). */
	for (int k = 0; k < 2; k++)
		pthread_create(&th[k], NULL, worker, (void *)(long)(k + 1));
	if (argc > 2) {
		FILE *f = fopen(argv[2], "w");

		if (f) {
			fprintf(f, "%d\n", (int)getpid());
			fclose(f);
		}
	}
	for (long r = 0; r < rounds; r++) {
		if (!setjmp(env))
			deep(5);
		sum += (unsigned long)r;
		usleep(20000);
	}
	for (int k = 0; k < 2; k++) {
		pthread_join(th[k], &res);
		sum += (unsigned long)res;
	}
	printf("checksum %lu\n", sum);
	return 0;
}
CSRC_KILL
gcc -O2 -g -pthread -o "$tmp/prog" "$tmp/prog.c" || { bad "cannot build the test program"; checks_summary kill-edgeprof; exit 1; }

ROUNDS=40
"$tmp/prog" "$ROUNDS" >"$tmp/native.out" || bad "the native run failed"

# wait_file FILE SECONDS: until FILE is not empty.
wait_file() {
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		[ -s "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

# --- run: edgeprof started the program; killed, the program goes on (it is not our child:
# its output and its last line tell that it ended well).
rm -f "$tmp/pid"
"$EDGEPROF" -q run -o "$tmp/run.data" -- "$tmp/prog" "$ROUNDS" "$tmp/pid" >"$tmp/run.out" 2>"$tmp/run.err" &
epid=$!
started+=("$epid")
if wait_file "$tmp/pid" 30; then
	ppid=$(cat "$tmp/pid")
	started+=("$ppid")
	sleep 0.3
	kill -KILL "$epid"
	wait "$epid" 2>/dev/null
	for ((i = 0; i < 600; i++)); do
		[ -e "/proc/$ppid" ] || break
		grep -q '^State:.*Z' "/proc/$ppid/status" 2>/dev/null && break
		sleep 0.1
	done
	if [ -e "/proc/$ppid" ] && ! grep -q '^State:.*Z' "/proc/$ppid/status" 2>/dev/null; then
		bad "run: the program (pid $ppid) did not end within 60 s of edgeprof's death"
		kill -KILL "$ppid" 2>/dev/null
	elif cmp -s "$tmp/native.out" "$tmp/run.out"; then
		ok "run: edgeprof SIGKILLed mid-run, the program ran on to its native output"
	else
		bad "run: after edgeprof's death the program printed '$(head -c 200 "$tmp/run.out")', natively '$(cat "$tmp/native.out")'"
	fi
else
	skip_if_no_bpf "$tmp/run.err"
	bad "run: the program did not start under edgeprof: $(head -c 300 "$tmp/run.err")"
	kill -KILL "$epid" 2>/dev/null
	wait "$epid" 2>/dev/null
fi

# --- record -p: the program is ours; edgeprof attaches, patches, and is killed.
rm -f "$tmp/pid"
"$tmp/prog" "$ROUNDS" "$tmp/pid" >"$tmp/rec.out" 2>&1 &
tpid=$!
started+=("$tpid")
wait_file "$tmp/pid" 30
"$EDGEPROF" record -p "$tpid" -o "$tmp/rec.data" 2>"$tmp/rec.err" &
epid=$!
started+=("$epid")
attached=0
for ((i = 0; i < 600; i++)); do
	grep -q 'attached to process' "$tmp/rec.err" 2>/dev/null && { attached=1; break; }
	sleep 0.05
done
sleep 0.3
kill -KILL "$epid"
wait "$epid" 2>/dev/null
wait "$tpid"
rc=$?
if [ "$attached" != 1 ]; then
	bad "record -p: edgeprof had not attached within 30 s: $(head -c 300 "$tmp/rec.err")"
elif [ $rc = 0 ] && cmp -s "$tmp/native.out" "$tmp/rec.out"; then
	ok "record -p: edgeprof SIGKILLed while attached, the program ran on to its native output (exit 0)"
else
	bad "record -p: after edgeprof's death the program exited $rc with '$(head -c 200 "$tmp/rec.out")'"
fi

# --- run, killed while the program creates threads and processes all the time: a task
# created just before edgeprof's death has not had its first stop yet. Traced with
# PTRACE_TRACEME its initial SIGSTOP then stopped the whole program for good (16 of 30 runs
# here); with PTRACE_SEIZE that first stop is a trap that goes with the tracer. 6000 rounds
# (about 4 s under edgeprof, 0.6 s natively) keep the program running at every kill (0.3 to
# 0.8 s in): with 2000 (1.4 s) a CI run once found it finished at the sixth.
cat >"$tmp/spawn.c" <<'CSRC_SPAWN'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void *work(void *a)
{
	unsigned long x = (unsigned long)a;

	for (int i = 0; i < 2000; i++)
		x = x * 31 + (unsigned long)i;
	return (void *)x;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 2000;
	unsigned long sum = 0;

	for (long r = 0; r < rounds; r++) {
		pthread_t t[4];
		void *res;

		for (int k = 0; k < 4; k++)
			pthread_create(&t[k], NULL, work, (void *)(r * 4 + k));
		for (int k = 0; k < 4; k++) {
			pthread_join(t[k], &res);
			sum += (unsigned long)res;
		}
		if (r % 50 == 0) {
			pid_t c = fork();

			if (c == 0)
				_exit(0);
			if (c > 0)
				waitpid(c, NULL, 0);
		}
	}
	printf("checksum %lu\n", sum);
	return 0;
}
CSRC_SPAWN
if gcc -O2 -g -pthread -o "$tmp/spawn" "$tmp/spawn.c"; then
	"$tmp/spawn" 6000 >"$tmp/spawn.native" || bad "spawn: the native run failed"
	stuck=0 good=0 other=
	for k in 1 2 3 4 5 6; do
		"$EDGEPROF" -q run -o "$tmp/spawn.data" -- "$tmp/spawn" 6000 >"$tmp/spawn.out" 2>"$tmp/spawn.err" &
		epid=$!
		started+=("$epid")
		sleep "0.$((2 + k))"
		spid=$(pgrep -P "$epid" -x spawn | head -n 1)
		alive=yes
		kill -0 "$epid" 2>/dev/null || alive=no
		kill -KILL "$epid" 2>/dev/null
		wait "$epid" 2>/dev/null
		erc=$?
		if [ -z "$spid" ]; then
			# edgeprof gone before the kill (a crash, or the run over) says so.
			if [ "$alive" = no ]; then
				other="${other:+$other; }kill $k: edgeprof had exited (status $erc) before the kill ($(head -c 200 "$tmp/spawn.err"))"
			else
				other="${other:+$other; }kill $k: the program was not running ($(head -c 200 "$tmp/spawn.err"))"
			fi
			continue
		fi
		started+=("$spid")
		st=
		for ((i = 0; i < 300; i++)); do
			st=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$spid/status" 2>/dev/null)
			case "$st" in "" | Z | T | t) break ;; esac
			sleep 0.1
		done
		case "$st" in
		T | t)
			stuck=$((stuck + 1))
			kill -KILL "$spid" 2>/dev/null
			;;
		"" | Z)
			if cmp -s "$tmp/spawn.native" "$tmp/spawn.out"; then
				good=$((good + 1))
			else
				other="${other:+$other; }kill $k: the program printed '$(head -c 100 "$tmp/spawn.out")'"
			fi
			;;
		*)
			other="${other:+$other; }kill $k: the program still ran 30 s later"
			kill -KILL "$spid" 2>/dev/null
			;;
		esac
	done
	if [ "$stuck" = 0 ] && [ -z "$other" ]; then
		ok "run: edgeprof SIGKILLed $good times while threads and processes were being created, the program ran on to its native output each time"
	else
		bad "run, killed while creating tasks: $stuck of 6 programs left stopped${other:+; $other}"
	fi
else
	bad "cannot build the spawning program"
fi

checks_summary kill-edgeprof
