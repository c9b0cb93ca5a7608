/*
 * The program patched by tests/patcher.sh: NTHREADS threads (the main one included) each call
 * the NFUNCS functions of funcs.S in turn ITERS times, chaining a value through them; with
 * "fork", a child forked first does the same alone; with "block", the main thread does no
 * work but waits in read() on a pipe the last thread to finish writes to (a thread blocked in
 * a system call, for the remote system calls to interrupt). Prints each thread's value and the
 * per-function call counts the program itself kept (calls[]), so that a patched run's output
 * can be compared with a native run's.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

uint64_t calls[NFUNCS];
extern char funcs_start[];

static long iters;
static int pipefd[2], running;

static void *work(void *arg)
{
	uint32_t acc = (uint32_t)(uintptr_t)arg;

	for (long i = 0; i < iters; i++)
		for (int k = 0; k < NFUNCS; k++)
			acc = ((uint32_t(*)(uint32_t))(funcs_start + 32 * k))(acc + (uint32_t)i);
	if (__atomic_sub_fetch(&running, 1, __ATOMIC_SEQ_CST) == 0 && pipefd[1] &&
	    write(pipefd[1], "x", 1) != 1)
		abort();
	return (void *)(uintptr_t)acc;
}

static void report(const char *who, int nthreads, const uintptr_t *acc)
{
	for (int t = 0; t < nthreads; t++)
		printf("%s thread %d value %lu\n", who, t, (unsigned long)acc[t]);
	for (int k = 0; k < NFUNCS; k++)
		printf("%s calls %d %lu\n", who, k, (unsigned long)calls[k]);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 1;
	pthread_t th[64];
	uintptr_t acc[64];

	iters = argc > 2 ? atol(argv[2]) : 1000;
	if (nthreads < 1 || nthreads > 64 || iters < 0) {
		fprintf(stderr, "usage: %s NTHREADS(1-64) ITERS [fork]\n", argv[0]);
		return 2;
	}
	if (argc > 3 && strcmp(argv[3], "fork") == 0) {
		pid_t child = fork();

		if (child == 0) {
			acc[0] = (uintptr_t)work((void *)7);
			report("child", 1, acc);
			return 0;
		}
		waitpid(child, NULL, 0); /* the child's output first, always */
	}
	if (argc > 3 && strcmp(argv[3], "block") == 0) {
		char c;
		ssize_t n;

		if (pipe(pipefd))
			return 1;
		running = nthreads - 1;
		for (int t = 1; t < nthreads; t++)
			pthread_create(&th[t], NULL, work, (void *)(uintptr_t)t);
		n = read(pipefd[0], &c, 1); /* interrupted by every remote system call */
		printf("main read %zd '%c'\n", n, n == 1 ? c : '?');
		acc[0] = 0;
	} else {
		running = nthreads;
		for (int t = 1; t < nthreads; t++)
			pthread_create(&th[t], NULL, work, (void *)(uintptr_t)t);
		acc[0] = (uintptr_t)work((void *)0);
	}
	for (int t = 1; t < nthreads; t++) {
		void *r;

		pthread_join(th[t], &r);
		acc[t] = (uintptr_t)r;
	}
	report("main", nthreads, acc);
	return 0;
}
