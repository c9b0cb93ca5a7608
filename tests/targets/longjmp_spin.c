/*
 * A target for attaching to at arbitrary moments (tests/attach-longjmp.sh): THREADS threads
 * (the main one waits on stdin) spend nearly all their time in longjmp and siglongjmp from three
 * calls deep, so that an attach or a detach very often holds a thread inside the C library's
 * longjmp, before it has landed. Each round calls tick() once and then either returns from
 * the three calls normally or leaves them by longjmp (every other round) or siglongjmp
 * (every fourth), landing in landed() or sig_landed(); each round checks that the locals the
 * jump restored are right. Runs until a line (or end of file) arrives on stdin, then prints
 * "rounds checked, errors N" (N is 0 natively: under a profiler too, or it was disturbed).
 *   usage: longjmp_spin [THREADS]
 * (In tests/targets/, not tests/programs/: the oracle sweeps build each of those alone and
 * run it once on a fixed stdin.)
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static atomic_int stop;
static atomic_long errors;
static _Thread_local jmp_buf env;
static _Thread_local sigjmp_buf senv;
static _Thread_local volatile long sink;

NOINLINE static void tick(long i)
{
	sink += i;
}

NOINLINE static void landed(void)
{
	sink ^= 1;
}

NOINLINE static void sig_landed(void)
{
	sink ^= 2;
}

NOINLINE static void returned(void)
{
	sink ^= 4;
}

NOINLINE static void depth3(long i)
{
	if (i % 4 == 1)
		siglongjmp(senv, (int)(i & 0x7fff) + 1);
	if (i % 2 == 0)
		longjmp(env, (int)(i & 0x7fff) + 1);
	sink += 3;
}

NOINLINE static void depth2(long i)
{
	depth3(i);
	sink += 2;
}

NOINLINE static void depth1(long i)
{
	depth2(i);
	sink += 1;
}

/* One round: which way it went is checked against i. */
NOINLINE static void round_of(long i)
{
	volatile long mark = i * 7;
	int v;

	tick(i);
	if ((v = sigsetjmp(senv, 1)) != 0) {
		if (v != (int)(i & 0x7fff) + 1 || mark != i * 7 || i % 4 != 1)
			errors++;
		sig_landed();
		return;
	}
	if ((v = setjmp(env)) != 0) {
		if (v != (int)(i & 0x7fff) + 1 || mark != i * 7 || i % 2 != 0)
			errors++;
		landed();
		return;
	}
	depth1(i);
	if (i % 2 == 0 || i % 4 == 1)
		errors++;
	returned();
}

static void *spin(void *arg)
{
	(void)arg;
	for (long i = 0; !atomic_load_explicit(&stop, memory_order_relaxed); i++)
		round_of(i);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	pthread_t tids[16];
	char line[64];

	if (threads < 1 || threads > 16) {
		fprintf(stderr, "usage: longjmp_spin [THREADS 1..16]\n");
		return 2;
	}
	for (int k = 0; k < threads; k++)
		if (pthread_create(&tids[k], NULL, spin, NULL))
			return 1;
	if (!fgets(line, sizeof(line), stdin))
		line[0] = 0;
	stop = 1;
	for (int k = 0; k < threads; k++)
		pthread_join(tids[k], NULL);
	printf("rounds checked, errors %ld\n", (long)errors);
	return errors != 0;
}
