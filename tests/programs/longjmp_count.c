/*
 * Test program for the longjmp watch (tests/longjmp-watch.sh; also checked by oracle-run):
 * 3000 longjmps from a depth of three calls back to a setjmp, counted by the program itself.
 * With the argument "signal" it catches one SIGUSR1 (raised after the first 1000 longjmps,
 * its handler returns normally) and prints how many longjmps came after it.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static jmp_buf env;
static volatile long total, after_signal;
static volatile int caught;

static void on_usr1(int sig)
{
	(void)sig;
	caught = 1;
}

__attribute__((noinline)) static int level3(int x)
{
	if (x % 2 == 0) {
		total++;
		if (caught)
			after_signal++;
		longjmp(env, 1);
	}
	return x + 1;
}

__attribute__((noinline)) static int level2(int x)
{
	return level3(x * 3) + 2;
}

__attribute__((noinline)) static int level1(int x)
{
	return level2(x + 5) * 2;
}

int main(int argc, char **argv)
{
	volatile int i;
	volatile long s = 0;
	int with_signal = argc > 1 && !strcmp(argv[1], "signal");

	if (with_signal)
		signal(SIGUSR1, on_usr1);
	for (i = 0; i < 6000; i++) {
		if (with_signal && total == 1000 && !caught)
			raise(SIGUSR1);
		if (setjmp(env))
			continue;
		s += level1(i);
	}
	printf("sum: %ld\nlongjmps: %ld\nafter signal: %ld\n", s, total, after_signal);
	return 0;
}
