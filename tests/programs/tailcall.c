/*
 * Oracle test program: sibling (tail) calls that gcc -O2 and clang -O2 turn into jumps:
 * unconditional, on one branch of a condition, through a function pointer, and a chain of
 * functions that each tail-call the next.
 */
#include <stdio.h>

__attribute__((noinline)) static int leaf_a(int x) { return x * 3 + 1; }
__attribute__((noinline)) static int leaf_b(int x) { return x ^ 0x1234; }

__attribute__((noinline)) static int pick(int x)
{
	if (x & 1)
		return leaf_a(x);  /* tail call on one branch */
	if (x % 3 == 0)
		return leaf_b(x);  /* and on another */
	return x - 7;
}

__attribute__((noinline)) static int chain3(int x) { return leaf_b(x + 3); }
__attribute__((noinline)) static int chain2(int x) { return chain3(x * 2); }
__attribute__((noinline)) static int chain1(int x) { return chain2(x - 1); }

static int (*volatile indirect_target)(int) = leaf_a;

__attribute__((noinline)) static int through_pointer(int x)
{
	return indirect_target(x + 1); /* indirect tail call: jmp *reg */
}

__attribute__((noinline)) static int maybe_tail(int x, int y)
{
	if (x > y)
		return pick(x - y);
	return chain1(y - x) + 1; /* not a tail call */
}

int main(void)
{
	long s = 0;

	for (int i = 0; i < 60; i++) {
		s += pick(i);
		s += chain1(i);
		s += through_pointer(i);
		s += maybe_tail(i, 30);
	}
	printf("%ld\n", s);
	return 0;
}
