/* The program of tests/watch-ahead.sh: calls into libctor_thread.so, whose initialiser ran a
 * thread that left by pthread_exit before this program's start; then a thread of its own
 * leaves the same way (a watch edgeprof follows). */
#include <pthread.h>
#include <stdio.h>

int ctor_thread_value(int i);

static void *worker(void *arg)
{
	long n = (long)arg, s = 0;

	for (long i = 0; i < n; i++)
		s += ctor_thread_value((int)i);
	pthread_exit((void *)s);
	return NULL;
}

int main(void)
{
	pthread_t t;
	void *rv = NULL;
	int s = 0;

	for (int i = 0; i < 100; i++)
		s += ctor_thread_value(i);
	if (pthread_create(&t, NULL, worker, (void *)50L) == 0)
		pthread_join(t, &rv);
	printf("%d %ld\n", s, (long)rv);
	return 0;
}
