/*
 * Test program for exec: a few calls and a loop, then execv() three frames deep (main ->
 * level1 -> level2 -> level3 -> execv), so that the frames of the old image are left without
 * returning. `exec_deep PROG [ARGS...]` replaces itself with PROG from level3;
 * `exec_deep --fork PROG [ARGS...]` does that in a forked child, waits for it, and goes on
 * (the parent returns normally from every level). When the exec fails, level3 returns and
 * the program (or the child) exits with status 127.
 * noipa keeps gcc from inlining, cloning or tail-calling the levels at -O2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noipa)) static int work(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += (i % 3 == 0) ? i : -1;
	return s;
}

__attribute__((noipa)) static int level3(char **prog, int x)
{
	if (prog && prog[0]) {
		fflush(stdout);
		execv(prog[0], prog);
		perror("execv");
		return 127;
	}
	return x * 2;
}

__attribute__((noipa)) static int level2(char **prog, int x)
{
	int r = level3(prog, x + work(x));

	return r + 3;
}

__attribute__((noipa)) static int level1(char **prog, int x)
{
	int r = level2(prog, x * 5);

	return r ^ 1;
}

int main(int argc, char **argv)
{
	int fork_first = argc > 1 && strcmp(argv[1], "--fork") == 0;
	char **prog = argc > 1 + fork_first ? argv + 1 + fork_first : NULL;
	int r = 0, st;
	pid_t pid;

	for (int i = 0; i < 5; i++)
		r += work(10 + i);
	printf("before: %d\n", r);
	if (!fork_first) {
		r = level1(prog, argc);
		printf("returned %d\n", r); /* without PROG, or when the exec failed */
		return prog ? 127 : 0;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0)
		_exit(level1(prog, argc) ? 127 : 0);
	if (waitpid(pid, &st, 0) != pid)
		return 3;
	r = level1(NULL, argc) + work(7);
	printf("child exited %d; after: %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1, r);
	return 0;
}
