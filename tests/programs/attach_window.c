/*
 * attach_window: a small server for the attach test (tests/attach.sh). Between commands it
 * blocks in read() three frames deep (serve -> next_command -> read_line -> read), and so do
 * its worker threads (worker -> wait_job -> read_job -> read). Commands on stdin, a line each:
 *   work N   does N iterations of a loop with known branches (on every worker when there are
 *            workers, else in the main thread), then prints "done"
 *   jump N   N times: setjmp, then longjmp back from three calls deeper
 *   spawn    starts a thread that calls pthread_exit three calls deep, and joins it
 *   print    prints its own counters, "NAME VALUE" a line, then "end"
 *   quit     exits 0
 * Argument T (default 0): the number of worker threads. Every counted branch calls its own
 * noinline function, so the counters equal the invocation counts of those functions.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__clang__)
#define COUNTED __attribute__((noinline))
#else
#define COUNTED __attribute__((noinline, noclone))
#endif

#define MAX_WORKERS 16

static unsigned long c_work, c_iter, c_even, c_odd, c_div3, c_big, c_jump, c_spawn;
static volatile unsigned long sink;

static void bump(unsigned long *c)
{
	__atomic_add_fetch(c, 1, __ATOMIC_RELAXED);
}

COUNTED static void on_iter(unsigned long x) { bump(&c_iter); sink += x; }
COUNTED static void on_even(unsigned long x) { bump(&c_even); sink ^= x; }
COUNTED static void on_odd(unsigned long x) { bump(&c_odd); sink += x >> 1; }
COUNTED static void on_div3(unsigned long x) { bump(&c_div3); sink -= x; }
COUNTED static void on_big(unsigned long x) { bump(&c_big); sink |= x & 1; }

/* N iterations of a linear congruential sequence from SEED, with data-dependent branches. */
COUNTED static void work(unsigned long n, unsigned long seed)
{
	unsigned long x = seed;

	bump(&c_work);
	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		on_iter(x);
		if ((x >> 33) % 2 == 0)
			on_even(x);
		else
			on_odd(x);
		if ((x >> 35) % 3 == 0)
			on_div3(x);
		if ((x >> 40) > 0xc00000)
			on_big(x);
	}
}

static jmp_buf jump_back;

COUNTED static void jump_deep(int depth)
{
	if (depth == 0)
		longjmp(jump_back, 1);
	jump_deep(depth - 1);
	sink++; /* not a tail call */
}

COUNTED static void on_jump(void) { bump(&c_jump); }

/* N times: setjmp, then a longjmp back from three calls deeper. */
COUNTED static void jumps(long n)
{
	for (long i = 0; i < n; i++) {
		if (setjmp(jump_back) == 0)
			jump_deep(2);
		on_jump();
	}
}

COUNTED static void exit_deep(int depth)
{
	if (depth == 0)
		pthread_exit(NULL);
	exit_deep(depth - 1);
	sink++;
}

COUNTED static void on_spawn(void) { bump(&c_spawn); }

static void *spawned(void *arg)
{
	on_spawn();
	exit_deep(2);
	return arg;
}

/* One line from FD into BUF (without the newline); -1 at end of input. */
COUNTED static int read_line(int fd, char *buf, size_t size)
{
	size_t n = 0;

	for (;;) {
		char c;
		ssize_t r = read(fd, &c, 1);

		if (r <= 0)
			return n ? (int)n : -1;
		if (c == '\n')
			break;
		if (n + 1 < size)
			buf[n++] = c;
	}
	buf[n] = 0;
	return (int)n;
}

COUNTED static int next_command(int fd, char *buf, size_t size)
{
	int n = read_line(fd, buf, size);

	if (n > 0 && buf[n - 1] == '\r')
		buf[--n] = 0;
	return n;
}

struct worker {
	pthread_t thread;
	int job[2];  /* main -> worker: N as a line */
	int done[2]; /* worker -> main: one byte per job */
	unsigned long seed;
};

static struct worker workers[MAX_WORKERS];
static int nworkers;

COUNTED static long read_job(int fd)
{
	char buf[64];

	return read_line(fd, buf, sizeof(buf)) < 0 ? -1 : atol(buf);
}

COUNTED static long wait_job(struct worker *w)
{
	return read_job(w->job[0]);
}

static void *worker(void *arg)
{
	struct worker *w = arg;
	long n;

	while ((n = wait_job(w)) >= 0) {
		work((unsigned long)n, w->seed);
		w->seed += 7;
		if (write(w->done[1], "x", 1) != 1)
			abort();
	}
	return NULL;
}

static void print_counters(void)
{
	printf("work %lu\niter %lu\neven %lu\nodd %lu\ndiv3 %lu\nbig %lu\njump %lu\nspawn %lu\nend\n",
	       c_work, c_iter, c_even, c_odd, c_div3, c_big, c_jump, c_spawn);
	fflush(stdout);
}

COUNTED static void serve(int fd)
{
	unsigned long seed = 12345;
	char cmd[128];

	while (next_command(fd, cmd, sizeof(cmd)) >= 0) {
		if (!strncmp(cmd, "work ", 5)) {
			long n = atol(cmd + 5);

			if (!nworkers) {
				work((unsigned long)n, seed);
				seed += 7;
			}
			for (int i = 0; i < nworkers; i++) {
				char line[64];
				int len = snprintf(line, sizeof(line), "%ld\n", n);

				if (write(workers[i].job[1], line, (size_t)len) != len)
					abort();
			}
			for (int i = 0; i < nworkers; i++) {
				char c;

				if (read(workers[i].done[0], &c, 1) != 1)
					abort();
			}
			printf("done\n");
			fflush(stdout);
		} else if (!strncmp(cmd, "jump ", 5)) {
			jumps(atol(cmd + 5));
		} else if (!strcmp(cmd, "spawn")) {
			pthread_t th;

			if (pthread_create(&th, NULL, spawned, NULL) || pthread_join(th, NULL))
				abort();
		} else if (!strcmp(cmd, "print")) {
			print_counters();
		} else if (!strcmp(cmd, "quit")) {
			break;
		}
	}
}

int main(int argc, char **argv)
{
	nworkers = argc > 1 ? atoi(argv[1]) : 0;
	if (nworkers < 0 || nworkers > MAX_WORKERS)
		return 2;
	for (int i = 0; i < nworkers; i++) {
		workers[i].seed = 1000 + 17 * (unsigned long)i;
		if (pipe(workers[i].job) || pipe(workers[i].done) ||
		    pthread_create(&workers[i].thread, NULL, worker, &workers[i]))
			return 3;
	}
	serve(0);
	for (int i = 0; i < nworkers; i++) {
		close(workers[i].job[1]);
		pthread_join(workers[i].thread, NULL);
	}
	return 0;
}
