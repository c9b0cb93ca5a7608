/*
 * Tracer test program: dies of a signal from a nested call (main -> outer -> inner).
 * `signal_death segv` writes through a null pointer in inner (the innermost frame is then the
 * faulting instruction itself); `signal_death abort` calls abort() from inner (the frames
 * are return addresses). Output before the death is flushed so it is deterministic.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noipa)) static int inner(const char *how, int *p)
{
	if (strcmp(how, "abort") == 0)
		abort();
	*p = 42; /* p is NULL: SIGSEGV */
	return *p + 1;
}

__attribute__((noipa)) static int outer(const char *how, int *p)
{
	int r = inner(how, p);

	return r * 3;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "segv";
	int *volatile p = NULL;
	int r;

	printf("signal_death: %s\n", how);
	fflush(stdout);
	r = outer(how, p);
	printf("survived %d\n", r);
	return 0;
}
