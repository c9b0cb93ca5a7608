/*
 * Oracle test program: a function that jumps into the middle of another function (ro_a's
 * `jg` into ro_b's shared tail), as hand-written or merged code can. ro_a runs off its own
 * symbol range into code of ro_b, which ro_b also runs, entered from its own entry: neither
 * function's edges explain all the flow through that tail. A CFG that takes the tail into
 * ro_a counts ro_b's executions of it as ro_a's (and the other way round); edgeprof must give
 * both functions block counts only (ro_a runs off, ro_b is entered mid-function), each exact.
 * Written in assembly so that every compiler and -O level keeps the shape.
 */
#include <stdio.h>

int ro_a(int x);
int ro_b(int x);

__asm__(".text\n"
	".globl ro_b\n"
	".type ro_b, @function\n"
	"ro_b:\n"
	".cfi_startproc\n"
	"	lea (%rdi,%rdi), %eax\n"
	"	test $1, %edi\n"
	"	jne 1f\n"
	"	add $1, %eax\n"
	"5:	add $1, %eax\n" /* the tail ro_a jumps into */
	"	ret\n"
	"1:	neg %eax\n"
	"	jmp 5b\n"
	".cfi_endproc\n"
	".size ro_b, .-ro_b\n"
	".globl ro_a\n"
	".type ro_a, @function\n"
	"ro_a:\n"
	".cfi_startproc\n"
	"	mov %edi, %eax\n"
	"	shl $2, %eax\n"
	"	cmp $100, %edi\n"
	"	jg 5b\n"
	"	sub $3, %eax\n"
	"	ret\n"
	".cfi_endproc\n"
	".size ro_a, .-ro_a\n");

int main(void)
{
	long sum = 0, n = 0;
	int c;

	while ((c = getchar()) != EOF) {
		sum += ro_a(c);
		if (c & 2)
			sum += ro_b(c);
		n++;
	}
	printf("%ld %ld\n", n, sum);
	return 0;
}
