/*
 * tests/attach.sh: a process whose active frame lies in code no CFG can recover. After some
 * counted work it prints "ready N" and blocks in pause() from code reached only through an
 * indirect jump whose target is a sum with a volatile (so hidden_wait is "unresolved", its
 * code after the jump is in no recovered block). An attach and detach there must name
 * hidden_wait and flag its counts as not exact, never leave them looking exact.
 */
#include <stdio.h>
#include <unistd.h>

static volatile long zero;

/* Blocks in pause() from code reached only through an indirect jump whose target no analysis
 * can know (its register is a sum with a volatile), so that code is in no recovered block. */
__attribute__((noinline)) static long hidden_wait(long x)
{
	long r = x;

	__asm__ volatile("lea 1f(%%rip), %%rax\n\t"
			 "add %1, %%rax\n\t"
			 "jmp *%%rax\n\t"
			 "1:\n\t"
			 "mov $34, %%eax\n\t" /* pause */
			 "syscall\n\t"
			 "add $1, %0\n\t"
			 : "+r"(r)
			 : "r"(zero)
			 : "rax", "rcx", "r11", "memory");
	return r;
}

__attribute__((noinline)) static long step(long i)
{
	return i % 3 ? i * 2 : i + 1;
}

int main(void)
{
	long s = 0;

	for (long i = 0; i < 1000; i++)
		s += step(i);
	printf("ready %ld\n", s);
	fflush(stdout);
	return (int)hidden_wait(s) & 1;
}
