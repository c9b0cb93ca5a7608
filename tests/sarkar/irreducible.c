/*
 * Test program for `edgeprof report --time` (tests/sarkar-time.sh): irr() has a loop entered
 * both at its top and in its middle (an irreducible region), which the report makes reducible
 * with a dispatch block; its mean must still equal callgrind's instructions per call.
 * Built with -O1 (gcc -O2 may duplicate code to make it reducible).
 */
#include <stdio.h>

static volatile int sink;

__attribute__((noinline)) static int irr(int n, int start_mid)
{
	int i = 0, s = 0;

	if (start_mid)
		goto mid;
top:
	s += i * 3;
	if (s & 64)
		s -= 5;
mid:
	s ^= i;
	if (++i < n)
		goto top;
	return s;
}

int main(void)
{
	for (int k = 0; k < 300; k++)
		sink += irr(k % 23, k % 3 == 0);
	printf("%d\n", sink);
	return 0;
}
