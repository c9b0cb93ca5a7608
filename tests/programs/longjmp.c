/*
 * Oracle test program: setjmp/longjmp out of nested calls, so the block after the call to
 * setjmp is entered both by the call returning and by longjmp (from the C library), and the
 * frames in between are left without returning.
 */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf env;

__attribute__((noinline)) static int inner(int x)
{
	if (x % 7 == 3)
		longjmp(env, x + 1);
	return x * 2;
}

__attribute__((noinline)) static int outer(int x)
{
	int r = inner(x) + inner(x + 1);

	return r & 1 ? r - 1 : r + 1;
}

int main(void)
{
	volatile long s = 0;
	volatile int i;
	int r;

	for (i = 0; i < 2000; i++) {
		r = setjmp(env);
		if (r) {
			s += r;
			continue;
		}
		s += outer(i);
	}
	printf("longjmp: %ld\n", s);
	return 0;
}
