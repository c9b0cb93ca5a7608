/*
 * Tracer test program: fork from a nested call (main -> spawn -> fork). The child resumes in
 * spawn and main without having called them, does some work two calls deeper and leaves
 * with exit(3) from child_work (child_work -> child_run -> spawn -> main); the parent waits
 * and returns normally. Output is deterministic: the parent prints after the child ended.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noipa)) static long sum_squares(int n)
{
	long s = 0;

	for (int i = 0; i < n; i++)
		s += (long)i * i;
	return s;
}

__attribute__((noipa)) static void child_work(int n)
{
	long s = sum_squares(n);

	printf("child: sum %ld\n", s);
	if (n > 0)
		exit(3);
	printf("child: n <= 0\n");
}

__attribute__((noipa)) static int child_run(int n)
{
	child_work(n);
	return n + 1;
}

__attribute__((noipa)) static int spawn(int n)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return -1;
	}
	if (pid == 0) {
		int r = child_run(n);

		_exit(r);
	}
	return pid;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	int status, pid;

	printf("parent: start\n");
	pid = spawn(n);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 1;
	printf("parent: child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
