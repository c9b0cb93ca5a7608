/*
 * Test program for `edgeprof run --loop-stats` (tests/loop-stats.sh): loops with known trip
 * counts.
 *  - work(): call c runs a loop of TRIPS[c % 8] iterations (0 included: no loop entry) and a
 *    branch on (c / 8) % 2: a known per-call instruction-count distribution, for the
 *    predicted mean and standard deviation against callgrind.
 *  - rwork(): a loop that calls rwork recursively from inside itself (at its second trip), so
 *    the same loop is active in several frames at once: each frame's entry has its own trip
 *    count.
 *  - twork(): the same long loops run by THREADS threads at once.
 *  - ework(): a loop left by a return from inside it, and jwork(): a loop left by a longjmp
 *    out of a callee: entries that end without passing an exit edge (each completes when
 *    the same frame enters the loop again, or at the end).
 * main writes the exact moments of each function's loop to stderr, one line per function:
 * NAME ENTRIES SUM SUMSQ (entries: loop entries; sum and sum of squares of the trip counts,
 * a trip being one execution of the loop's header, i.e. of its body).
 * The loops are written so that gcc -O2 makes the first block of the body the loop's header
 * (ework's do-while: a `for` with an early return gets its first iteration peeled, and then
 * the header runs once less than the body per entry, and not at all for one iteration).
 * Usage: loop_distribution [ROUNDS [THREADS]]   (defaults 16 and 2)
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

static const unsigned trips[8] = {3, 0, 7, 1, 12, 5, 0, 9};
static volatile unsigned sink;

struct moments {
	unsigned long entries, sum, sumsq;
};

static void add(struct moments *m, unsigned long n)
{
	if (!n)
		return;
	m->entries++;
	m->sum += n;
	m->sumsq += n * n;
}

__attribute__((noinline)) static unsigned work(unsigned r)
{
	unsigned acc = r, n = r & 31;

	for (unsigned i = 0; i < n; i++)
		acc = acc * 31 + i;
	if (r & 0x100)
		acc = acc / 7 + (acc >> 3);
	return acc;
}

__attribute__((noinline)) static unsigned rwork(unsigned n, unsigned depth)
{
	unsigned acc = n;

	for (unsigned i = 0; i < n; i++) {
		acc = acc * 33 + i;
		if (depth && i == 1)
			acc += rwork(n + 2, depth - 1);
	}
	return acc;
}

/* What rwork(N, DEPTH) does to its loop's moments. */
static void rwork_model(struct moments *m, unsigned n, unsigned depth)
{
	add(m, n);
	if (depth && n > 1)
		rwork_model(m, n + 2, depth - 1);
}

__attribute__((noinline)) static unsigned long twork(unsigned n)
{
	unsigned long acc = n;

	for (unsigned i = 0; i < n; i++)
		acc = acc * 7 + (acc >> 5) + i;
	return acc;
}

__attribute__((noinline)) static unsigned ework(unsigned n, unsigned stop)
{
	unsigned acc = n, i = 0;

	if (!n)
		return 1;
	do {
		acc = acc * 3 + (acc >> 4);
		if (i == stop)
			return acc;
	} while (++i < n);
	return acc + 1;
}

static jmp_buf jb;

__attribute__((noinline)) static void thrower(unsigned i, unsigned at)
{
	if (i == at)
		longjmp(jb, 1);
	sink += i;
}

__attribute__((noinline)) static unsigned jwork(unsigned n, unsigned at)
{
	unsigned acc = 0;

	for (unsigned i = 0; i < n; i++) {
		thrower(i, at);
		acc += i * 5;
	}
	return acc;
}

#define TWORK_CALLS 2000
#define TWORK_TRIPS(k) (100 + (k) % 37)

static void *thread_main(void *arg)
{
	unsigned long acc = 0;

	for (unsigned k = 0; k < TWORK_CALLS; k++)
		acc += twork(TWORK_TRIPS(k));
	*(unsigned long *)arg = acc;
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 16;
	unsigned nthreads = argc > 2 ? (unsigned)atoi(argv[2]) : 2;
	struct moments w = {0}, rw = {0}, tw = {0}, ew = {0}, jw = {0};
	pthread_t th[16];
	unsigned long res[16];

	for (unsigned c = 0; c < 16 * rounds; c++) {
		unsigned n = trips[c % 8];

		add(&w, n);
		sink += work(n | ((c / 8) % 2) << 8);
	}
	for (unsigned c = 0; c < 8 * rounds; c++) {
		unsigned n = trips[c % 8], depth = c % 3;

		rwork_model(&rw, n, depth);
		sink += rwork(n, depth);
	}
	for (unsigned c = 0; c < 8 * rounds; c++) {
		unsigned n = trips[c % 8], stop = trips[(c + 3) % 8];

		add(&ew, n < stop + 1 ? n : stop + 1);
		sink += ework(n, stop);
		add(&jw, n < stop + 1 ? n : stop + 1);
		if (!setjmp(jb))
			sink += jwork(n, stop);
	}
	if (nthreads > 16)
		nthreads = 16;
	for (unsigned t = 0; t < nthreads; t++)
		if (pthread_create(&th[t], NULL, thread_main, &res[t]))
			return 1;
	for (unsigned t = 0; t < nthreads; t++) {
		pthread_join(th[t], NULL);
		sink += (unsigned)res[t];
		for (unsigned k = 0; k < TWORK_CALLS; k++)
			add(&tw, TWORK_TRIPS(k));
	}
	fprintf(stderr, "work %lu %lu %lu\n", w.entries, w.sum, w.sumsq);
	fprintf(stderr, "rwork %lu %lu %lu\n", rw.entries, rw.sum, rw.sumsq);
	fprintf(stderr, "twork %lu %lu %lu\n", tw.entries, tw.sum, tw.sumsq);
	fprintf(stderr, "ework %lu %lu %lu\n", ew.entries, ew.sum, ew.sumsq);
	fprintf(stderr, "jwork %lu %lu %lu\n", jw.entries, jw.sum, jw.sumsq);
	return 0;
}
