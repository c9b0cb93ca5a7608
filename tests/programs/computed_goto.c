/*
 * Oracle test program: a bytecode interpreter dispatched with computed gotos (labels as
 * values), whose indirect jumps read a table of label addresses: a CFG may leave them
 * unresolved, and the counts of such functions must still be exact where they are given.
 */
#include <stdio.h>

static const unsigned char prog[] = { 1, 1, 2, 3, 1, 4, 2, 3, 1, 1, 4, 0 };

__attribute__((noinline)) static long run(int reps)
{
	static void *const ops[] = { &&op_halt, &&op_inc, &&op_dbl, &&op_sub, &&op_xor };
	long acc = 1;
	int pc = 0;

	goto *ops[prog[pc]];
op_inc:
	acc++;
	goto *ops[prog[++pc]];
op_dbl:
	acc *= 2;
	goto *ops[prog[++pc]];
op_sub:
	acc -= 3;
	goto *ops[prog[++pc]];
op_xor:
	acc ^= 0x55;
	goto *ops[prog[++pc]];
op_halt:
	if (--reps > 0) {
		pc = 0;
		goto *ops[prog[pc]];
	}
	return acc;
}

int main(void)
{
	long s = 0;
	int i;

	for (i = 1; i < 400; i++)
		s += run(i % 17 + 1);
	printf("computed_goto: %ld\n", s);
	return 0;
}
