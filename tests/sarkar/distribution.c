/*
 * Test program for `edgeprof report --time` (tests/sarkar-time.sh): work() has a known
 * per-call instruction-count distribution. Call c runs a loop of n = c % 16 iterations of a
 * fixed body and two branches on bits (c / 16) % 2 and (c / 32) % 2, a full factorial design
 * over 64 consecutive calls, so n and the two branches are uncorrelated in the sample and the
 * sample variance is exactly the sum of the parts, which is what Sarkar's method computes
 * given the loop's trip-count moments. main writes those moments (loop entries, i.e. calls
 * with n > 0, and the sum and sum of squares of n over them) to stderr.
 * Usage: distribution [ROUNDS]   (64 calls per round, default 16)
 */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned sink;

__attribute__((noinline)) static unsigned work(unsigned r)
{
	unsigned acc = r, n = r & 15;

	for (unsigned i = 0; i < n; i++)
		acc = acc * 31 + i;
	if (r & 0x100)
		acc = acc / 7 + (acc >> 3);
	if (r & 0x200) {
		acc ^= acc << 13;
		acc ^= acc >> 17;
		acc ^= acc << 5;
	}
	return acc;
}

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 16;
	unsigned long entries = 0, sum = 0, sumsq = 0;

	for (unsigned c = 0; c < 64 * rounds; c++) {
		unsigned n = c % 16;
		unsigned r = n | ((c / 16) % 2) << 8 | ((c / 32) % 2) << 9;

		if (n) {
			entries++;
			sum += n;
			sumsq += (unsigned long)n * n;
		}
		sink += work(r);
	}
	fprintf(stderr, "%lu %lu %lu\n", entries, sum, sumsq);
	return 0;
}
