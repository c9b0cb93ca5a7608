/*
 * Oracle test program: paths that do not return. exit() is called from a few frames deep;
 * a custom noreturn function wraps exit; abort() sits on a path that never runs; a
 * __builtin_unreachable() follows an exhaustive check. The CFG must not fall through after
 * calls it thinks do not return, and must not think returning calls do not return.
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noreturn, noinline)) static void fatal(const char *msg, int code)
{
	fflush(stdout);
	fprintf(stderr, "fatal: %s\n", msg);
	exit(code);
}

__attribute__((noinline)) static int check(int x)
{
	if (x < 0)
		fatal("negative", 3); /* never runs */
	if (x > 1000000)
		abort();              /* never runs */
	return x * 2;
}

__attribute__((noinline)) static int kind(int x)
{
	switch (x & 3) {
	case 0: return 10;
	case 1: return 20;
	case 2: return 30;
	case 3: return 40;
	}
	__builtin_unreachable();
}

__attribute__((noinline)) static void level3(int x)
{
	if (x == 7) {
		printf("leaving from level3\n");
		fatal("done", 0);  /* runs once: the program ends here */
	}
}

__attribute__((noinline)) static void level2(int x)
{
	level3(x + 1);
	printf("level2 %d\n", x);
}

__attribute__((noinline)) static void level1(int x)
{
	level2(x * 2 + 1);
	printf("level1 %d\n", x);
}

int main(void)
{
	long s = 0;

	for (int i = 0; i < 50; i++)
		s += check(i) + kind(i);
	printf("%ld\n", s);
	for (int i = -1; i < 5; i++)
		level1(i); /* level3 sees 2 * i + 2: never 7 */
	level2(5);         /* level3 sees 6 */
	level3(7);         /* exits, three frames below main */
	printf("not reached\n");
	return 1;
}
