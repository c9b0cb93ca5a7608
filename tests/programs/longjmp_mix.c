/*
 * Oracle test program: longjmps of every shape that longjmp pseudo-edges and the longjmp
 * watch must keep exact together: from the depth of a recursion, between nested setjmps
 * (an inner handler that passes some errors on to the outer one), a longjmp in the same
 * frame as its setjmp, and siglongjmp out of signal handlers: one for a SIGUSR1 raised from
 * depth (the frames are waiting on calls) and one for a SIGSEGV (the faulting frame is left
 * in the middle of a block, from a function that itself calls nothing that longjmps).
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static jmp_buf outer_env, inner_env;
static sigjmp_buf sig_env;
static volatile int *volatile null_ptr;
static volatile long sink;

__attribute__((noinline)) static int dive(int depth, int x)
{
	if (depth == 0) {
		if (x % 5 == 0)
			longjmp(inner_env, 1 + x % 3);
		if (x % 11 == 0)
			longjmp(outer_env, 7);
		return x;
	}
	return dive(depth - 1, x + 1) + 1;
}

/* Nested setjmp: errors 1 and 2 are handled here, 3 goes on to the outer handler. */
__attribute__((noinline)) static int guarded(int x)
{
	volatile int tries = 0;
	int r = setjmp(inner_env);

	if (r == 3)
		longjmp(outer_env, 30 + x % 4);
	if (r) {
		tries++;
		return -r - tries;
	}
	return dive(x % 6, x);
}

/* A leaf that writes through a null pointer when asked: the analysis sees no longjmp in it,
 * so the frame calling it is left by the SIGSEGV handler's siglongjmp without a pseudo-edge. */
__attribute__((noinline)) static int poke(int x)
{
	if (x % 9 == 4)
		*null_ptr = x;
	return x * 3;
}

__attribute__((noinline)) static int raise_deep(int depth, int x)
{
	if (depth == 0) {
		if (x % 4 == 1)
			raise(SIGUSR1);
		return poke(x);
	}
	return raise_deep(depth - 1, x) - 1;
}

static void on_signal(int sig)
{
	siglongjmp(sig_env, sig);
}

/* setjmp and longjmp in the same frame. */
__attribute__((noinline)) static long same_frame(int n)
{
	jmp_buf env;
	volatile long acc = 0;
	volatile int i = 0;

	if (setjmp(env))
		acc += 100;
	while (i < n) {
		i++;
		acc += i;
		if (i % 3 == 0)
			longjmp(env, 1);
	}
	return acc;
}

int main(void)
{
	struct sigaction sa;
	volatile long s = 0;
	volatile int i;
	int r;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	for (i = 0; i < 300; i++) {
		r = setjmp(outer_env);
		if (r) {
			s += r;
			continue;
		}
		s += guarded(i);
	}
	for (i = 0; i < 60; i++) {
		r = sigsetjmp(sig_env, 1);
		if (r) {
			s += 1000 + r;
			continue;
		}
		s += raise_deep(i % 5, i);
	}
	s += same_frame(20);
	printf("longjmp_mix: %ld\n", s);
	return 0;
}
