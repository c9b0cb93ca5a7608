/*
 * Tracer test program: forks N children from a nested call (main -> spawn -> fork) and
 * kills each with SIGKILL as soon as it is stopped by a tracer (its state in
 * /proc/PID/stat is 't', as at the first stop of a traced fork child, which a tracer may take
 * milliseconds to handle) or has started to run (it says so in shared memory); a child that
 * runs spins in child_spin until killed. Under a tracer the SIGKILL mostly lands while the
 * tracer is busy with the child's first stop: the child then leaves that stop for its
 * PTRACE_EVENT_EXIT stop without running one instruction of the program, and the frames it
 * was entered in (spawn, main) are left there. Prints how many children died of SIGKILL
 * (all of them: deterministic). Not in tests/programs itself: its counts (how long the
 * parent polls, whether a child ran) depend on timing, so the oracles of every program there
 * cannot check it; tests/kill-child.sh does.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

__attribute__((noipa)) static void child_spin(volatile int *ran)
{
	*ran = 1;
	for (;;)
		;
}

__attribute__((noipa)) static int spawn(volatile int *ran)
{
	pid_t pid;

	*ran = 0;
	pid = fork();
	if (pid == 0)
		child_spin(ran);
	return pid;
}

/* Whether process PID is stopped by its tracer ('t' in /proc/PID/stat). */
__attribute__((noipa)) static int traced_stop(int pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 't';
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10, killed = 0;
	volatile int *ran =
	    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (ran == MAP_FAILED)
		return 1;
	for (int i = 0; i < n; i++) {
		struct timespec t0, t1;
		int st, pid = spawn(ran);

		if (pid < 0)
			return 1;
		/* At most a second: a stop that is not a tracer's is not waited for forever. */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do
			clock_gettime(CLOCK_MONOTONIC, &t1);
		while (!*ran && !traced_stop(pid) && t1.tv_sec - t0.tv_sec < 2);
		kill(pid, SIGKILL);
		if (waitpid(pid, &st, 0) != pid)
			return 1;
		killed += WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
	}
	printf("kill_child: %d of %d children killed\n", killed, n);
	return 0;
}
