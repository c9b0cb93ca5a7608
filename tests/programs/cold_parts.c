/*
 * Split-off cold parts in the two shapes of Debian's python3.11 (issue 13) that a stripped
 * binary shows only as FDEs: tok() is a leaf function whose jump table sends one case to its
 * cold part (tok.cold returns by itself; a leaf's cold FDE looks like a function's: python's
 * PyToken_ThreeChars), and check() jumps to a cold part that starts inside its frame and runs
 * back into it (check.cold), which a second function, other(), also jumps to on a path that
 * never runs (python3.11's long_richcompare jumps to PyArg_ValidateKeywordArguments.cold after
 * the bound check of a switch whose default is unreachable). Written in assembly so that every
 * compiler and optimisation level gives these shapes; the cold parts are in .text.unlikely,
 * named as gcc names them. main() prints the results for the oracles.
 */
#include <stdio.h>
#include <stdlib.h>

long tok(unsigned c);
long check(long x);
long other(unsigned op, long x);

#ifdef __PIE__
#define JMP_T(t, r) "lea " t "(%rip),%r11\n\tjmp *(%r11," r ",8)\n\t"
#else
#define JMP_T(t, r) "jmp *" t "(," r ",8)\n\t"
#endif

__asm__(".text\n\t"
	".globl tok\n\t"
	".type tok,@function\n"
	"tok:\n\t"
	".cfi_startproc\n\t"
	"sub $40,%edi\n\t"
	"cmp $3,%edi\n\t"
	"ja 8f\n\t" JMP_T("tok_t", "%rdi") "1:\n\t"
	"mov $11,%eax\n\t"
	"ret\n"
	"2:\n\t"
	"mov $12,%eax\n\t"
	"ret\n"
	"8:\n\t"
	"mov $-1,%eax\n\t"
	"ret\n\t"
	".cfi_endproc\n\t"
	".size tok,.-tok\n\t"
	".section .text.unlikely,\"ax\",@progbits\n\t"
	".type tok.cold,@function\n"
	"tok.cold:\n\t"
	".cfi_startproc\n"
	"3:\n\t"
	"cmp $2,%edi\n\t"
	"je 4f\n\t"
	"mov $13,%eax\n\t"
	"ret\n"
	"4:\n\t"
	"mov $14,%eax\n\t"
	"ret\n\t"
	".cfi_endproc\n\t"
	".size tok.cold,.-tok.cold\n\t"
	".section .data.rel.ro,\"aw\"\n\t"
	".p2align 3\n"
	"tok_t:\n\t"
	".quad 1b, 2b, 3b, 3b\n\t"

	".text\n\t"
	".globl check\n\t"
	".type check,@function\n"
	"check:\n\t"
	".cfi_startproc\n\t"
	"push %rbx\n\t"
	".cfi_adjust_cfa_offset 8\n\t"
	".cfi_offset %rbx,-16\n\t"
	"mov %rdi,%rbx\n\t"
	"test $15,%edi\n\t"
	"je check.cold\n\t"
	"lea 1(%rbx),%rax\n"
	"check_back:\n\t"
	"pop %rbx\n\t"
	".cfi_adjust_cfa_offset -8\n\t"
	"ret\n\t"
	".cfi_endproc\n\t"
	".size check,.-check\n\t"
	".section .text.unlikely,\"ax\",@progbits\n\t"
	".type check.cold,@function\n"
	"check.cold:\n\t"
	".cfi_startproc\n\t"
	".cfi_def_cfa_offset 16\n\t"
	".cfi_offset %rbx,-16\n\t"
	"lea 1000(%rbx),%rax\n\t"
	"jmp check_back\n\t"
	".cfi_endproc\n\t"
	".size check.cold,.-check.cold\n\t"

	".text\n\t"
	".globl other\n\t"
	".type other,@function\n"
	"other:\n\t"
	".cfi_startproc\n\t"
	"cmp $1,%edi\n\t"
	"ja check.cold\n\t"
	"mov %edi,%edi\n\t" JMP_T("other_t", "%rdi") "1:\n\t"
	"lea 7(%rsi),%rax\n\t"
	"ret\n"
	"2:\n\t"
	"lea -7(%rsi),%rax\n\t"
	"ret\n\t"
	".cfi_endproc\n\t"
	".size other,.-other\n\t"
	".section .data.rel.ro,\"aw\"\n\t"
	".p2align 3\n"
	"other_t:\n\t"
	".quad 1b, 2b\n\t"
	".text\n");

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000, t = 0, c = 0, o = 0;

	for (long i = 0; i < n; i++) {
		t += tok((unsigned)(40 + i % 5));
		c += check(i);
		o += other((unsigned)(i % 2), i);
	}
	printf("tok %ld, check %ld, other %ld\n", t, c, o);
	return 0;
}
