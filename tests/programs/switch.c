/*
 * Oracle test program: switch statements of several sizes (small, dense jump tables, a char
 * switch, a switch inside a loop with fall-through cases) and a sparse switch that becomes a
 * compare tree, so the CFG builder must resolve jump tables and keep every case edge.
 * With an argument N (default 1) main does its work N times and prints the last round's
 * results, the same line as one round: the benchmark (bench/bench.sh) runs it ~0.5 s that way.
 * A volatile zero read each round keeps the compiler from hoisting the work out of the loop.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static int small(int x)
{
	switch (x) {
	case 0: return 10;
	case 1: return 11;
	case 2: return 13;
	case 3: return 17;
	default: return 0;
	}
}

__attribute__((noinline)) static int dense(int x)
{
	int r = 0;

	switch (x) {
	case 0: r = 3; break;
	case 1: r = x * 7; break;
	case 2: r = 9; /* fall through */
	case 3: r += 4; break;
	case 4: r = x << 3; break;
	case 5: r = -x; break;
	case 6: r = 100; break;
	case 7: r = x ^ 0x55; break;
	case 8: r = 42; break;
	case 9: r = x * x; break;
	case 10: r = 1; break;
	case 11: r = 2; break;
	case 12: r = x + 12; break;
	case 13: r = 77; break;
	case 14: r = x - 14; break;
	case 15: r = 5; break;
	default: r = -1; break;
	}
	return r;
}

__attribute__((noinline)) static int classify(char c)
{
	switch (c) {
	case 'a': case 'e': case 'i': case 'o': case 'u': return 1;
	case 'b': case 'c': case 'd': return 2;
	case 'f': case 'g': case 'h': return 3;
	case 'j': case 'k': case 'l': case 'm': return 4;
	case 'n': return 5;
	case 'p': case 'q': return 6;
	case 'r': case 's': case 't': return 7;
	case ' ': return 8;
	default: return 0;
	}
}

__attribute__((noinline)) static int sparse(int x)
{
	switch (x) {
	case 1: return 1;
	case 100: return 2;
	case 1000: return 3;
	case 10000: return 4;
	case 123456: return 5;
	default: return 6;
	}
}

__attribute__((noinline)) static int interpret(const unsigned char *code, int n)
{
	int acc = 0, i;

	for (i = 0; i < n; i++) {
		switch (code[i] % 9) {
		case 0: acc += 1; break;
		case 1: acc -= 2; break;
		case 2: acc *= 3; /* fall through */
		case 3: acc ^= 5; break;
		case 4: acc >>= 1; break;
		case 5: acc += code[i]; break;
		case 6: if (acc > 50) acc = 0; break;
		case 7: continue;
		default: acc |= 1; break;
		}
		acc &= 0xffff;
	}
	return acc;
}

static volatile int zero;

int main(int argc, char **argv)
{
	const char *text = "the quick brown fox jumps over a lazy dog; 42 + x";
	long rounds = argc > 1 ? atol(argv[1]) : 1;
	unsigned char code[200];
	long s = 0;
	int i;

	for (long r = 0; r < rounds; r++) {
		int z = zero;

		s = 0;
		for (i = -2; i < 20; i++)
			s += small(i + z) + dense(i + z) * 3;
		for (i = 0; text[i]; i++)
			s += classify(text[i + z]);
		for (i = 0; i < 12; i++)
			s += sparse((i == 5 ? 10000 : i == 7 ? 123456 : i * 100) + z);
		for (i = 0; i < 200; i++)
			code[i] = (unsigned char)(i * 37 + 11 + z);
		s += interpret(code, 200) + (long)strlen(text + z);
	}
	printf("%ld\n", s);
	return 0;
}
