/*
 * Oracle test program: a jump table indexed by a byte that is bounded in memory, at an
 * address made of two registers, and then loaded again from the same address, the shape
 * gcc gave Debian dash's fun_10250 (`cmpb $0xc,(%rax,%rdx,1); ja; movzbl (%rax,%rdx,1),%edx;
 * movslq (%rbx,%rdx,4),%rdx; jmp *%rdx`). The address is not affine in one unknown, and no
 * store comes between the compare and the load: the bound holds for the loaded byte.
 * Written in assembly so that every compiler and -O level keeps the shape.
 * sw_mem(buf, i) returns 10, 20, 30 or 40 by buf[i] (0..3), or -1 above it.
 */
#include <stdio.h>

int sw_mem(const unsigned char *buf, int i);

__asm__(".text\n"
	".globl sw_mem\n"
	".type sw_mem, @function\n"
	"sw_mem:\n"
	".cfi_startproc\n"
	"	movslq %esi, %rdx\n"
	"	lea sw_mem_table(%rip), %rcx\n"
	"	cmpb $3, (%rdi,%rdx,1)\n"
	"	ja 9f\n"
	"	movzbl (%rdi,%rdx,1), %eax\n"
	"	movslq (%rcx,%rax,4), %rax\n"
	"	add %rcx, %rax\n"
	"	jmp *%rax\n"
	"10:	mov $10, %eax\n"
	"	ret\n"
	"11:	mov $20, %eax\n"
	"	ret\n"
	"12:	mov $30, %eax\n"
	"	ret\n"
	"13:	mov $40, %eax\n"
	"	ret\n"
	"9:	mov $-1, %eax\n"
	"	ret\n"
	".cfi_endproc\n"
	".size sw_mem, .-sw_mem\n"
	".section .rodata\n"
	".align 4\n"
	"sw_mem_table:\n"
	"	.long 10b - sw_mem_table, 11b - sw_mem_table\n"
	"	.long 12b - sw_mem_table, 13b - sw_mem_table\n"
	".text\n");

int main(void)
{
	static unsigned char buf[1 << 16];
	long sum = 0, n = 0;
	int c;

	while ((c = getchar()) != EOF && n < (long)sizeof(buf)) {
		buf[n] = (unsigned char)(c % 6); /* 0..5: two of six above the table */
		sum += sw_mem(buf, (int)n);
		n++;
	}
	printf("%ld %ld\n", n, sum);
	return 0;
}
