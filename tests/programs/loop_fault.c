/*
 * Oracle test program: frames left from inside a counted loop (issue 15, loops counted by
 * induction): a pointer walk over a page followed by an inaccessible one faults in the middle
 * of the loop. Three times a SIGSEGV handler siglongjmps out of the faulting frame (the frame
 * is left from inside the loop, found by unwinding through the signal frame); the fourth time
 * the signal kills the program (its frame stopped inside the loop). Output before the death
 * is flushed so it is deterministic. The landing frame (main, at its sigsetjmp) is an outer
 * frame of the handler's stack; with clang's inlining it may be the faulting frame itself.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static sigjmp_buf env;

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(env, 1);
}

/* Not inlined, and scalar: the empty asm keeps compilers from vectorising the loop (a
 * 16-byte load across the page boundary faults at different places natively and under
 * valgrind). */
__attribute__((noinline)) static long walk(const long *p, const long *end)
{
	long s = 0;

	for (; p != end; p++) {
		s += *p;
		__asm__("" : "+r"(s));
	}
	return s;
}

int main(void)
{
	long page = sysconf(_SC_PAGESIZE), n = page / (long)sizeof(long);
	long *mem =
	    mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct sigaction sa;
	volatile int faults = 0;
	long total = 0;

	if (mem == MAP_FAILED)
		return 2;
	for (long i = 0; i < n; i++)
		mem[i] = i & 15;
	mprotect(mem + n, page, PROT_NONE);
	for (int r = 0; r < 5; r++)
		total += walk(mem + r, mem + n);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	sigaction(SIGSEGV, &sa, NULL);
	if (sigsetjmp(env, 1))
		faults++;
	if (faults < 3)
		total += walk(mem + 7 * faults, mem + n + 8);
	printf("%ld %d\n", total, faults);
	fflush(stdout);
	signal(SIGSEGV, SIG_DFL);
	total += walk(mem + 100, mem + n + 4);
	printf("not reached %ld\n", total);
	return 0;
}
