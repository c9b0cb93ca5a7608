/*
 * Oracle test program: counted, conditional and nested loops (with early exits, continue and
 * a do-while) so the CFG must carry back edges, loop exits and not-taken paths; also a large
 * zeroed local array, which gcc -O2 clears with a rep stos (callgrind shows its iterations as
 * jumps to itself).
 * With an argument N (default 1) main does its work N times and prints the last round's
 * results, the same line as one round: the benchmark (bench/bench.sh) runs it ~0.5 s that way.
 * A volatile zero read each round keeps the compiler from hoisting the work out of the loop.
 */
#include <stdio.h>
#include <stdlib.h>

static int grid[24][24];

__attribute__((noinline)) static long sum_grid(int n)
{
	long s = 0;

	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			s += grid[i][j];
	return s;
}

__attribute__((noinline)) static int find_first(int n, int want)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (grid[i][j] == want)
				return i * n + j;
	return -1;
}

__attribute__((noinline)) static unsigned collatz_steps(unsigned x)
{
	unsigned steps = 0;

	while (x != 1) {
		x = (x & 1) ? 3 * x + 1 : x / 2;
		steps++;
	}
	return steps;
}

__attribute__((noinline)) static int odd_sum(const int *v, int n)
{
	int s = 0, i = 0;

	do {
		if (v[i] % 2 == 0)
			continue;
		if (v[i] > 1000)
			break;
		s += v[i];
	} while (++i < n);
	return s;
}

__attribute__((noinline)) static int sieve(int n)
{
	char composite[2048] = { 0 };
	int count = 0;

	for (int i = 2; i < n && i < 2048; i++) {
		if (composite[i])
			continue;
		count++;
		for (int j = 2 * i; j < 2048; j += i)
			composite[j] = 1;
	}
	return count;
}

static volatile int zero;

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 1;
	long sg = 0;
	int v[64], f1 = 0, f2 = 0, os = 0, sv = 0;
	unsigned total = 0;

	for (long r = 0; r < rounds; r++) {
		int z = zero;

		total = 0;
		for (int i = 0; i < 24; i++)
			for (int j = 0; j < 24; j++)
				grid[i][j] = (i * 31 + j * 17 + z) % 101;
		for (int i = 0; i < 64; i++)
			v[i] = i * i + (i == 50 ? 5000 : 0) + z;
		for (unsigned x = 1; x < 200; x++)
			total += collatz_steps(x + z);
		sg = sum_grid(24);
		f1 = find_first(24, 77 + z);
		f2 = find_first(24, 1000);
		os = odd_sum(v, 64);
		sv = sieve(500 + z);
	}
	printf("%ld %d %d %u %d %d\n", sg, f1, f2, total, os, sv);
	return 0;
}
