/*
 * For the sample profile export (tests/export-llvm-sample.sh): functions inlined into others
 * at several call sites and two levels deep, a function that is not inlined (direct call
 * targets), lines holding several blocks (discriminators with -fdebug-info-for-profiling) and
 * a counted loop the compiler unrolls (duplication factors). Work depends on argv[1].
 *   usage: sample_inline N
 */
#include <stdio.h>
#include <stdlib.h>

static unsigned table[64];

static inline unsigned mix(unsigned h, unsigned v)
{
	h ^= v + 0x9e3779b9u + (h << 6) + (h >> 2);
	return h & 1 ? h * 3 + 1 : h >> 1;
}

static inline unsigned step(unsigned h, unsigned i)
{
	if (i % 3 == 0)
		h = mix(h, i);
	else
		h = mix(h, i * 7) ^ mix(i, h);
	return h;
}

__attribute__((noinline)) static unsigned collatz(unsigned x)
{
	unsigned n = 0;

	while (x != 1 && n < 500) { x = x & 1 ? 3 * x + 1 : x / 2; n++; }
	return n;
}

__attribute__((noinline)) static unsigned sum_table(unsigned k)
{
	unsigned s = 0;

	for (unsigned i = 0; i < 64; i++)
		s += table[i] * k;
	return s;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 10, h = 1, c = 0;

	for (unsigned i = 0; i < 64; i++)
		table[i] = i * 2654435761u;
	for (unsigned i = 0; i < n; i++) {
		h = step(h, i);
		if (h % 5 == 0) c += collatz(h % 1000 + 1); else c += h & 7;
		if (i % 16 == 0)
			c += sum_table(i);
	}
	printf("%u %u\n", h, c);
	return 0;
}
