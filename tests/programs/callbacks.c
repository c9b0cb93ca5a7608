/*
 * Oracle test program: calls through function pointers: a qsort comparator (called back from
 * libc), a table of handlers indexed by an opcode, a callback passed down two levels, and a
 * pointer stored in a struct.
 * With an argument N (default 1) main does its work N times and prints the last round's
 * results, the same line as one round: the benchmark (bench/bench.sh) runs it ~0.5 s that way.
 * A volatile zero read each round keeps the compiler from hoisting the work out of the loop.
 */
#include <stdio.h>
#include <stdlib.h>

struct item {
	int key;
	const char *name;
};

static int by_key(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	return (x->key > y->key) - (x->key < y->key);
}

static int by_name_len(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	int lx = 0, ly = 0;

	while (x->name[lx])
		lx++;
	while (y->name[ly])
		ly++;
	return lx - ly;
}

static int op_add(int a, int b) { return a + b; }
static int op_sub(int a, int b) { return a - b; }
static int op_mul(int a, int b) { return a * b; }
static int op_max(int a, int b) { return a > b ? a : b; }

static int (*const handlers[])(int, int) = { op_add, op_sub, op_mul, op_max };

typedef void (*visit_fn)(int value, void *ctx);

static void count_even(int value, void *ctx)
{
	if (value % 2 == 0)
		++*(int *)ctx;
}

static void add_up(int value, void *ctx)
{
	*(long *)ctx += value;
}

__attribute__((noinline)) static void walk(const int *v, int n, visit_fn fn, void *ctx)
{
	for (int i = 0; i < n; i++)
		fn(v[i], ctx);
}

__attribute__((noinline)) static void walk_twice(const int *v, int n, visit_fn fn, void *ctx)
{
	walk(v, n, fn, ctx);
	walk(v, n / 2, fn, ctx);
}

struct reducer {
	int (*combine)(int, int);
	int init;
};

__attribute__((noinline)) static int reduce(const struct reducer *r, const int *v, int n)
{
	int acc = r->init;

	for (int i = 0; i < n; i++)
		acc = r->combine(acc, v[i]);
	return acc;
}

static volatile int zero;

int main(int argc, char **argv)
{
	static const struct item init[] = { { 5, "five" }, { 3, "three" }, { 9, "nine" },
					    { 1, "one" }, { 7, "seven" }, { 2, "two" },
					    { 8, "eight" }, { 4, "four" } };
	long rounds = argc > 1 ? atol(argv[1]) : 1;
	struct item items[8];
	const char *first = "", *last = "", *shortest = "";
	int v[40], acc = 1, evens = 0, red = 0, i;
	long sum = 0;

	for (long rd = 0; rd < rounds; rd++) {
		int z = zero;
		struct reducer r = { op_max, -1000 + z };

		for (i = 0; i < 8; i++)
			items[i] = init[i];
		for (i = 0; i < 40; i++)
			v[i] = (i * 29 + z) % 41 - 10;
		qsort(items, 8, sizeof(items[0]), by_key);
		first = items[0].name;
		last = items[7].name;
		qsort(items, 8, sizeof(items[0]), by_name_len);
		shortest = items[0].name;
		acc = 1;
		evens = 0;
		sum = 0;
		for (i = 0; i < 40; i++)
			acc = handlers[(unsigned)v[i] % 4](acc, v[i]) & 0xfffff;
		walk_twice(v, 40, count_even, &evens);
		walk(v, 40, add_up, &sum);
		red = reduce(&r, v, 40);
	}
	printf("%s %s\n", first, last);
	printf("%s\n", shortest);
	printf("%d %d %ld %d\n", acc, evens, sum, red);
	return 0;
}
