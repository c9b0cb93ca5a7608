/*
 * Oracle test program: a jump table indexed by a global that is bounded in memory before the
 * prologue's pushes and loaded again after them, the shape gcc gave Debian ls's fun_caa0
 * (`cmpl $4,x(%rip); ja; push...; mov x(%rip),%eax; movslq (%rdx,%rax,4),%rax; jmp *%rax`).
 * The pushes write below rsp, which cannot be the global: the bound proven on the first load
 * holds for the second. Written in assembly so that every compiler and -O level keeps it.
 * sw_global() returns 10, 20, 30 or 40 by sw_sel (0..3), or -1 above it.
 */
#include <stdio.h>

extern int sw_sel;
int sw_global(void);

__asm__(".data\n"
	".globl sw_sel\n"
	".align 4\n"
	"sw_sel:\n"
	"	.long 0\n"
	".text\n"
	".globl sw_global\n"
	".type sw_global, @function\n"
	"sw_global:\n"
	".cfi_startproc\n"
	"	cmpl $3, sw_sel(%rip)\n"
	"	ja 9f\n"
	"	push %rbx\n"
	".cfi_adjust_cfa_offset 8\n"
	".cfi_offset %rbx, -16\n"
	"	lea sw_global_table(%rip), %rdx\n"
	"	push %r12\n"
	".cfi_adjust_cfa_offset 8\n"
	".cfi_offset %r12, -24\n"
	"	mov sw_sel(%rip), %eax\n"
	"	movslq (%rdx,%rax,4), %rax\n"
	"	add %rdx, %rax\n"
	"	jmp *%rax\n"
	"10:	mov $10, %eax\n"
	"	jmp 8f\n"
	"11:	mov $20, %eax\n"
	"	jmp 8f\n"
	"12:	mov $30, %eax\n"
	"	jmp 8f\n"
	"13:	mov $40, %eax\n"
	"8:	pop %r12\n"
	".cfi_adjust_cfa_offset -8\n"
	"	pop %rbx\n"
	".cfi_adjust_cfa_offset -8\n"
	"	ret\n"
	"9:	mov $-1, %eax\n"
	"	ret\n"
	".cfi_endproc\n"
	".size sw_global, .-sw_global\n"
	".section .rodata\n"
	".align 4\n"
	"sw_global_table:\n"
	"	.long 10b - sw_global_table, 11b - sw_global_table\n"
	"	.long 12b - sw_global_table, 13b - sw_global_table\n"
	".text\n");

int main(void)
{
	long sum = 0, n = 0;
	int c;

	while ((c = getchar()) != EOF) {
		sw_sel = c % 6; /* 0..5: two of six above the table */
		sum += sw_global();
		n++;
	}
	printf("%ld %ld\n", n, sum);
	return 0;
}
