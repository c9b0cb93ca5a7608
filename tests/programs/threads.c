/*
 * Tracer test program: 4 threads sum known ranges; thread 2 ends with pthread_exit() called
 * from a nested function (worker -> finish_early -> pthread_exit), the others return from
 * worker. main joins them in order and prints each result, so the output is deterministic.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define NTHREADS 4

__attribute__((noipa)) static long sum_range(long from, long to)
{
	long s = 0;

	for (long i = from; i < to; i++)
		s += i;
	return s;
}

__attribute__((noipa)) static void finish_early(long s)
{
	if (s >= 0)
		pthread_exit((void *)(intptr_t)(s + 1));
	printf("finish_early: negative\n");
}

__attribute__((noipa)) static void *worker(void *arg)
{
	long id = (long)(intptr_t)arg;
	long s = sum_range(id * 1000, (id + 1) * 1000);

	if (id == 2)
		finish_early(s);
	return (void *)(intptr_t)s;
}

int main(void)
{
	pthread_t th[NTHREADS];

	for (long i = 0; i < NTHREADS; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i)) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < NTHREADS; i++) {
		void *r;

		pthread_join(th[i], &r);
		printf("thread %d: %ld\n", i, (long)(intptr_t)r);
	}
	return 0;
}
