/*
 * Test program: kills each child as soon as its exec is done, as Python's subprocess tests
 * do (test_leak_fast_process_del_killed). `exec_kill N PROG` runs N rounds; each forks from a
 * nested call (main -> spawn -> start_child; Python's _posixsubprocess vforks, but a binary
 * calling vfork makes callgrind, the oracle, miscount clang builds), the child execv's PROG with
 * the argument "3" from start_child (execv: the oracle's callgrind dumps the child's counts when it
 * is called), and the parent, told by a close-on-exec pipe that the exec is done, sends the child
 * SIGKILL at once, waits 0.2 s, and reaps it with waitpid(WNOHANG), as subprocess's _cleanup does.
 * Prints how many children died of SIGKILL and how many were not reapable after 0.2 s (0 natively:
 * a killed child is a zombie at once). Under a tracer, SIGKILL ends the child's exec stop before
 * the tracer may have seen it: the frames the child left at its exec (start_child, spawn, main,
 * entered at its fork) must be accounted all the same, and its death must not wait for the tracer.
 * noipa keeps gcc from inlining or cloning the levels at -O2.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noipa)) static void start_child(const char *prog, int round)
{
	char *args[] = {(char *)prog, "3", NULL};

	execv(prog, args);
	_exit(100 + round % 2);
}

/* Starts PROG in a child; *RFD is the read end of a pipe that ends at the child's exec. */
__attribute__((noipa)) static pid_t spawn(const char *prog, int round, int *rfd)
{
	int fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0)
		start_child(prog, round);
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		return -1;
	}
	*rfd = fds[0];
	return pid;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 8, killed = 0, late = 0;
	const char *prog = argc > 2 ? argv[2] : "/bin/sleep";

	for (int round = 0; round < n; round++) {
		int rfd, st = 0;
		char c;
		pid_t pid = spawn(prog, round, &rfd);

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		while (read(rfd, &c, 1) > 0)
			;
		close(rfd);
		kill(pid, SIGKILL);
		usleep(200000);
		if (waitpid(pid, &st, WNOHANG) != pid) {
			late++;
			if (waitpid(pid, &st, 0) != pid)
				return 1;
		}
		killed += WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
	}
	printf("exec_kill: %d of %d children killed after their exec, %d not reaped after 0.2 s\n",
	       killed, n, late);
	return 0;
}
