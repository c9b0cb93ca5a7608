/*
 * Oracle test program: a jump table whose index is bounded through a copy of it, after two
 * paths meet, one of which calls a function first: the shape gcc gave Debian perl's
 * Perl_sv_upgrade (`movzbl %al,%r14d; mov %r14,%r12`, then on one path a call to
 * Perl_sv_force_normal_flags, then after the merge `cmp $7,%r12d; ja` and the table load
 * indexed by %r14). The chain of unique predecessors before the jump stops at the merge,
 * where the bound (on %r12) says nothing about the index (%r14); on each path the copy is
 * made before the call, and only callee-saved registers carry it across the call, so the
 * path through the call is resolved only by passing the call as the ABI defines it. Written
 * in assembly so that every compiler and -O level keeps the shape.
 * sw_after_call(p) returns 10, 20, 30 or 40 by the low byte of *p (0..3), or -1 above it;
 * with bit 8 of *p set it first calls bump(p), which adds 1 to p[1].
 */
#include <stdio.h>

int sw_after_call(int *p);
void bump(int *p);

__attribute__((noinline)) void bump(int *p)
{
	p[1]++;
	__asm__ volatile("" ::: "memory");
}

__asm__(".text\n"
	".globl sw_after_call\n"
	".type sw_after_call, @function\n"
	"sw_after_call:\n"
	".cfi_startproc\n"
	"	push %rbx\n"
	".cfi_adjust_cfa_offset 8\n"
	".cfi_offset %rbx, -16\n"
	"	push %r12\n"
	".cfi_adjust_cfa_offset 8\n"
	".cfi_offset %r12, -24\n"
	"	push %r14\n"
	".cfi_adjust_cfa_offset 8\n"
	".cfi_offset %r14, -32\n"
	"	mov (%rdi), %eax\n"
	"	movzbl %al, %r14d\n"
	"	mov %r14, %r12\n"
	"	mov %rdi, %rbx\n"
	"	test $0x100, %eax\n"
	"	jne 2f\n"
	"1:	cmp $3, %r12d\n"
	"	ja 9f\n"
	"	lea sw_after_call_table(%rip), %rdx\n"
	"	movslq (%rdx,%r14,4), %rax\n"
	"	add %rdx, %rax\n"
	"	jmp *%rax\n"
	"2:	mov %rbx, %rdi\n"
	"	call bump\n"
	"	xor %edx, %edx\n"
	"	jmp 1b\n"
	"9:	mov $-1, %eax\n"
	"	jmp 8f\n"
	"10:	mov $10, %eax\n"
	"	jmp 8f\n"
	"11:	mov $20, %eax\n"
	"	jmp 8f\n"
	"12:	mov $30, %eax\n"
	"	jmp 8f\n"
	"13:	mov $40, %eax\n"
	"8:	pop %r14\n"
	".cfi_adjust_cfa_offset -8\n"
	"	pop %r12\n"
	".cfi_adjust_cfa_offset -8\n"
	"	pop %rbx\n"
	".cfi_adjust_cfa_offset -8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size sw_after_call, .-sw_after_call\n"
	".section .rodata\n"
	".align 4\n"
	"sw_after_call_table:\n"
	"	.long 10b - sw_after_call_table, 11b - sw_after_call_table\n"
	"	.long 12b - sw_after_call_table, 13b - sw_after_call_table\n"
	".text\n");

int main(void)
{
	long sum = 0, n = 0;
	int c, v[2] = { 0, 0 };

	while ((c = getchar()) != EOF) {
		v[0] = (c % 6) | ((c & 8) << 5); /* 0..5: two of six above the table */
		sum += sw_after_call(v);
		n++;
	}
	printf("%ld %ld %d\n", n, sum, v[1]);
	return 0;
}
