/*
 * A function the CFG cannot make exact: pick() jumps through a register (`jmp *%rax`, the
 * target chosen by a cmov), which no jump-table analysis resolves. One target (1:) is also
 * reached by a conditional jump, so it is a recovered block entered at run time without an
 * edge: flow conservation fails there; the other target (2:) is reached only through the
 * register and is in no recovered block. The program prints how often pick() ran, for the
 * test to compare the report's executions with. Kept out of tests/programs/*.c on purpose:
 * the CFG and count oracles there expect every function to be exact.
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) long pick(long k, long never)
{
	long r;

	__asm__ volatile("test %2, %2\n\t"
			 "jnz 1f\n\t"
			 "lea 1f(%%rip), %%rax\n\t"
			 "lea 2f(%%rip), %%rdx\n\t"
			 "test %1, %1\n\t"
			 "cmovnz %%rdx, %%rax\n\t"
			 "jmp *%%rax\n"
			 "1:\n\t"
			 "mov $10, %0\n\t"
			 "jmp 3f\n"
			 "2:\n\t"
			 "mov $20, %0\n"
			 "3:\n"
			 : "=&r"(r)
			 : "r"(k), "r"(never)
			 : "rax", "rdx", "cc");
	return r + k;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, sum = 0, calls = 0;

	for (long i = 0; i < n; i++) {
		sum += pick(i % 3 == 0, argc > 5);
		calls++;
	}
	printf("pick: %ld calls, sum %ld\n", calls, sum);
	return 0;
}
