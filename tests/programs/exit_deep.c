/*
 * Tracer test program: exit() called four frames deep (main -> level1 -> level2 -> level3 ->
 * level4 -> exit) on a condition the compiler cannot see through, so every level stays a
 * real frame with a return address. `exit_deep N` exits with status N from level4;
 * without an argument every level returns normally. noipa keeps gcc from inlining,
 * cloning or tail-calling the levels at -O2.
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noipa)) static int level4(int code, int x)
{
	if (code >= 0) {
		printf("level4: exit(%d) at x=%d\n", code, x);
		exit(code);
	}
	return x * 2;
}

__attribute__((noipa)) static int level3(int code, int x)
{
	int r = level4(code, x + 1);

	return r + 3;
}

__attribute__((noipa)) static int level2(int code, int x)
{
	int r = level3(code, x * 5);

	return r - 1;
}

__attribute__((noipa)) static int level1(int code, int x)
{
	int r = level2(code, x + 7);

	return r ^ 1;
}

int main(int argc, char **argv)
{
	int code = argc > 1 ? atoi(argv[1]) : -1;
	int r = level1(code, argc);

	printf("returned %d\n", r);
	return 0;
}
