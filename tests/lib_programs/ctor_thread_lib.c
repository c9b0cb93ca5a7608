/* A library whose initialiser runs before the program's first instruction and makes a thread
 * that leaves by pthread_exit: a watched C library function called before the program starts
 * (tests/watch-ahead.sh). */
#include <pthread.h>
#include <stdio.h>

static void *leave(void *arg)
{
	(void)arg;
	pthread_exit((void *)42);
	return NULL;
}

__attribute__((constructor)) static void init(void)
{
	pthread_t t;
	void *rv = NULL;

	if (pthread_create(&t, NULL, leave, NULL) == 0)
		pthread_join(t, &rv);
	printf("initialiser's thread left with %ld\n", (long)rv);
}

int ctor_thread_value(int i)
{
	return i % 3 ? 7 : 1;
}
