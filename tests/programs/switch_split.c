/*
 * Oracle test program: a jump table whose index is bounded on two paths that meet right
 * before the table load, the shape gcc gave gzip's option loop (the switch's `cmp; ja` copied
 * onto the loop's back edge, which jumps into the first copy's `movslq; add; jmp *`). Written
 * in assembly so that every compiler and -O level keeps the shape: the chain of unique
 * predecessors before the jump stops at the merge, and each path's bound must be proven on
 * its own (one with `ja` not taken, one with `jbe` taken). sw_split(c, second) returns the
 * case of c - 'a' (first path) or c - 'b' (second path) in 0..3, or -1.
 * sw_byte(c) indexes a 256-entry table by `movzbl %dil`, with no compare at all: the byte
 * register bounds the index (python3.11's eval loop and PyUnicode_Format have this form); it
 * returns 10, 20, 30 or 40 by c & 3.
 */
#include <stdio.h>

int sw_split(int c, int second);
int sw_byte(int c);

__asm__(".text\n"
	".globl sw_split\n"
	".type sw_split, @function\n"
	"sw_split:\n"
	".cfi_startproc\n"
	"	lea sw_split_table(%rip), %rdx\n"
	"	test %esi, %esi\n"
	"	jne 2f\n"
	"	lea -0x61(%rdi), %eax\n"
	"	cmp $3, %eax\n"
	"	ja 9f\n"
	"1:	movslq (%rdx,%rax,4), %rax\n"
	"	add %rdx, %rax\n"
	"	jmp *%rax\n"
	"2:	lea -0x62(%rdi), %eax\n"
	"	cmp $3, %eax\n"
	"	jbe 1b\n"
	"9:	mov $-1, %eax\n"
	"	ret\n"
	"10:	mov $10, %eax\n"
	"	ret\n"
	"11:	mov $20, %eax\n"
	"	ret\n"
	"12:	mov $30, %eax\n"
	"	ret\n"
	"13:	mov $40, %eax\n"
	"	ret\n"
	".cfi_endproc\n"
	".size sw_split, .-sw_split\n"
	".section .rodata\n"
	".align 4\n"
	"sw_split_table:\n"
	"	.long 10b - sw_split_table, 11b - sw_split_table\n"
	"	.long 12b - sw_split_table, 13b - sw_split_table\n"
	".text\n"
	".globl sw_byte\n"
	".type sw_byte, @function\n"
	"sw_byte:\n"
	".cfi_startproc\n"
	"	movzbl %dil, %eax\n"
	"	lea sw_byte_table(%rip), %rdx\n"
	"	movslq (%rdx,%rax,4), %rax\n"
	"	add %rdx, %rax\n"
	"	jmp *%rax\n"
	"20:	mov $10, %eax\n"
	"	ret\n"
	"21:	mov $20, %eax\n"
	"	ret\n"
	"22:	mov $30, %eax\n"
	"	ret\n"
	"23:	mov $40, %eax\n"
	"	ret\n"
	".cfi_endproc\n"
	".size sw_byte, .-sw_byte\n"
	".section .rodata\n"
	".align 4\n"
	"sw_byte_table:\n"
	"	.rept 64\n"
	"	.long 20b - sw_byte_table, 21b - sw_byte_table\n"
	"	.long 22b - sw_byte_table, 23b - sw_byte_table\n"
	"	.endr\n"
	".text\n");

int main(void)
{
	long sum = 0, n = 0;
	int c;

	while ((c = getchar()) != EOF) {
		sum += sw_split(c, (int)(n & 1));
		sum += sw_byte(c + (int)n * 256); /* only the low byte indexes */
		n++;
	}
	printf("%ld %ld\n", n, sum);
	return 0;
}
