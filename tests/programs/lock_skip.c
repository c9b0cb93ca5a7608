/*
 * Oracle test program: glibc's single-thread atomics, where a conditional jump skips only the
 * lock prefix of an atomic instruction and lands inside it: `cmpl $0, flag; je 0f; lock; 0:
 * cmpxchg ...` (glibc's catomic_* in malloc: _int_malloc, _int_free). The bytes after the
 * prefix decode as the same instruction without it, ending at the same address, so the CFG
 * holds two overlapping instructions, each starting a block on its own paths. The input's
 * bytes choose which runs how often (odd bytes take the lock, even ones skip it), so every
 * block and edge has its own count; the forms: cmpxchg (64-bit, its result used by a jcc
 * right after, as glibc's loops do), xadd (32-bit), inc through memory and an or with an
 * immediate, in a loop and after a call.
 */
#include <stdio.h>

volatile int locked;     /* glibc: the thread header's multiple_threads word */
long word;
int counter;
unsigned bits;

/* One compare-and-exchange, the lock skipped when LOCKED is 0; returns the old value. */
__attribute__((noinline)) long cas(long *p, long old, long new)
{
	long prev;

	__asm__ volatile("cmpl $0, %[lk]\n\t"
			 "je 0f\n\t"
			 "lock\n"
			 "0:\tcmpxchgq %[nv], %[mem]"
			 : "=a"(prev), [mem] "+m"(*p)
			 : "0"(old), [nv] "r"(new), [lk] "m"(locked)
			 : "memory", "cc");
	return prev;
}

/* Adds V until the exchange succeeds (the jcc right after the pair, as in _int_free). */
__attribute__((noinline)) void add_loop(long *p, long v)
{
	long old = *p, prev;

	do {
		prev = old;
		old = cas(p, prev, prev + v);
	} while (old != prev);
}

__attribute__((noinline)) int fetch_add(int *p, int v)
{
	__asm__ volatile("cmpl $0, %[lk]\n\t"
			 "je 1f\n\t"
			 "lock\n"
			 "1:\txaddl %[v], %[mem]"
			 : [v] "+r"(v), [mem] "+m"(*p)
			 : [lk] "m"(locked)
			 : "memory", "cc");
	return v;
}

__attribute__((noinline)) void inc_or(int *p, unsigned *q, int c)
{
	__asm__ volatile("cmpl $0, %[lk]\n\t"
			 "jz 2f\n\t"
			 "lock\n"
			 "2:\tincl %[mem]"
			 : [mem] "+m"(*p)
			 : [lk] "m"(locked)
			 : "memory", "cc");
	if (c == '\n')
		__asm__ volatile("cmpl $0, %[lk]\n\t"
				 "je 3f\n\t"
				 "lock\n"
				 "3:\torl $4, %[mem]"
				 : [mem] "+m"(*q)
				 : [lk] "m"(locked)
				 : "memory", "cc");
}

int main(void)
{
	int c, n = 0, sum = 0;

	while ((c = getchar()) != EOF) {
		locked = c & 1;
		add_loop(&word, c);
		if (c % 3 == 0)
			sum += fetch_add(&counter, c & 7);
		inc_or(&counter, &bits, c);
		n++;
	}
	locked = 1;
	printf("%d bytes, word %ld, counter %d, bits %u, sum %d\n", n, word, counter, bits, sum);
	return 0;
}
