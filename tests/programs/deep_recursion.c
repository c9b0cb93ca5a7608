/*
 * Oracle test program: recursion about 10^4 frames deep with branches at every level (a
 * descent that takes one of three paths by depth, a mutual recursion pair, a recursive
 * list walk), repeated a few times so that every return edge carries many counts. Exits
 * with status 3 so that the scripts also check that the exit status is passed through.
 */
#include <stdio.h>

#define DEPTH 10000

struct cell {
	int val;
	struct cell *next;
};

static struct cell cells[DEPTH];

__attribute__((noinline)) static long descend(int n, long acc)
{
	long r;

	if (n == 0)
		return acc;
	if (n % 3 == 0)
		r = descend(n - 1, acc + n);
	else if (n % 3 == 1)
		r = descend(n - 1, acc ^ n) + 1;
	else
		r = descend(n - 1, acc - 1) * 1;
	return r > 1000000 ? r - 999983 : r; /* both ways at different depths */
}

__attribute__((noinline)) static int is_odd(int n);

__attribute__((noinline)) static int is_even(int n)
{
	if (n == 0)
		return 1;
	return n & 0x100 ? !is_odd(n - 1) ^ 1 : is_odd(n - 1);
}

__attribute__((noinline)) static int is_odd(int n)
{
	if (n == 0)
		return 0;
	return is_even(n - 1);
}

__attribute__((noinline)) static long walk(const struct cell *c, int depth)
{
	if (!c)
		return depth;
	if (c->val & 1)
		return walk(c->next, depth + 1) + c->val;
	return walk(c->next, depth + 1) - (c->val >> 1);
}

int main(void)
{
	long s = 0;
	int i, rounds;

	for (i = 0; i < DEPTH; i++) {
		cells[i].val = (i * 7919) % 1009;
		cells[i].next = i + 1 < DEPTH ? &cells[i + 1] : NULL;
	}
	for (rounds = 0; rounds < 3; rounds++) {
		s += descend(DEPTH - rounds, rounds);
		s += is_even(DEPTH - 1 - rounds);
		s += walk(&cells[rounds], 0);
	}
	printf("deep_recursion: %ld\n", s);
	return 3;
}
