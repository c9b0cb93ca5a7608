/*
 * Jump tables whose index no compare bounds, in the shapes of Debian's python3.11 (issue 13):
 * rich() dispatches on a zero-extended 32-bit index with no bound at all (gcc's code for a
 * switch whose default is __builtin_unreachable, as CPython's Py_RETURN_RICHCOMPARE and its
 * regex opcode dispatch), and holds a second, bounded table right after the first (the first
 * is read as a superset of its cases: every entry of both is an address the code jumps to);
 * negbound() has cases -6..-1, bounded by `cmp $-6,%edi; jb` (a lower bound at the sign bit)
 * and indexed by `lea 6(%rdi),%esi` (python3.11's fun_5744c0); membound() bounds a value in
 * memory, pushes, then loads it again for the jump (python3.11's fun_564470); kept() sets the
 * index with a 32-bit move in its prologue and dispatches on it unbounded after a call (a
 * callee-saved register: python3.11's fun_5de610). The functions
 * are written in assembly so that every compiler and optimisation level gives these shapes;
 * the tables hold absolute addresses (in .data.rel.ro, relocated in a PIE), and the non-PIE
 * build uses python3.11's `jmp *T(,%idx,8)`. main() prints the results for the oracles.
 */
#include <stdio.h>
#include <stdlib.h>

long rich(unsigned op, long a, long b, unsigned op2);
long negbound(int c);
long membound(long k, const int *p);
long kept(unsigned op, long x);

#ifdef __PIE__
#define JMP_T(t, r) "lea " t "(%rip),%r11\n\tjmp *(%r11," r ",8)\n\t"
#else
#define JMP_T(t, r) "jmp *" t "(," r ",8)\n\t"
#endif

__asm__(".text\n\t"
	".globl rich\n\t"
	".type rich,@function\n"
	"rich:\n\t"
	".cfi_startproc\n\t"
	"cmp %rdx,%rsi\n\t"
	"je 9f\n\t"
	"mov %edi,%edi\n\t" JMP_T("rich_t1", "%rdi") "9:\n\t"
	"cmp $5,%ecx\n\t"
	"ja 8f\n\t"
	"mov %ecx,%ecx\n\t" JMP_T("rich_t2", "%rcx") "8:\n\t"
	"mov $-100,%eax\n\t"
	"ret\n"
	"1:\n\t" /* lt */
	"cmp %rdx,%rsi\n\t"
	"setl %al\n\t"
	"movzbl %al,%eax\n\t"
	"ret\n"
	"2:\n\t" /* le */
	"cmp %rdx,%rsi\n\t"
	"setle %al\n\t"
	"movzbl %al,%eax\n\t"
	"add $10,%eax\n\t"
	"ret\n"
	"3:\n\t" /* eq */
	"xor %eax,%eax\n\t"
	"add $20,%eax\n\t"
	"ret\n"
	"4:\n\t" /* ne */
	"mov $31,%eax\n\t"
	"ret\n"
	"5:\n\t" /* gt */
	"cmp %rdx,%rsi\n\t"
	"setg %al\n\t"
	"movzbl %al,%eax\n\t"
	"add $40,%eax\n\t"
	"ret\n"
	"6:\n\t" /* ge */
	"cmp %rdx,%rsi\n\t"
	"setge %al\n\t"
	"movzbl %al,%eax\n\t"
	"add $50,%eax\n\t"
	"ret\n"
	"7:\n\t" /* equal operands: op2 decides */
	"lea 100(%rcx),%eax\n\t"
	"ret\n\t"
	".cfi_endproc\n\t"
	".size rich,.-rich\n\t"
	".section .data.rel.ro,\"aw\"\n\t"
	".p2align 3\n"
	"rich_t1:\n\t"
	".quad 1b, 2b, 3b, 4b, 5b, 6b\n"
	"rich_t2:\n\t"
	".quad 7b, 7b, 3b, 4b, 7b, 7b\n\t"
	".text\n\t"

	".globl negbound\n\t"
	".type negbound,@function\n"
	"negbound:\n\t"
	".cfi_startproc\n\t"
	"test %edi,%edi\n\t"
	"jns 8f\n\t"
	"cmp $-10,%edi\n\t"
	"jb 8f\n\t"
	"lea 6(%rdi),%esi\n\t"
	"mov $-1,%eax\n\t"
	"cmp $-6,%edi\n\t"
	"jb 9f\n\t" JMP_T("neg_t", "%rsi") "8:\n\t"
	"mov $7,%eax\n"
	"9:\n\t"
	"ret\n"
	"1:\n\t"
	"mov $60,%eax\n\t"
	"ret\n"
	"2:\n\t"
	"mov $50,%eax\n\t"
	"ret\n"
	"3:\n\t"
	"mov $40,%eax\n\t"
	"ret\n"
	"4:\n\t"
	"mov $30,%eax\n\t"
	"ret\n"
	"5:\n\t"
	"mov $20,%eax\n\t"
	"ret\n"
	"6:\n\t"
	"mov $10,%eax\n\t"
	"ret\n\t"
	".cfi_endproc\n\t"
	".size negbound,.-negbound\n\t"
	".section .data.rel.ro,\"aw\"\n\t"
	".p2align 3\n"
	"neg_t:\n\t"
	".quad 1b, 2b, 3b, 4b, 5b, 6b\n\t"
	".text\n\t"

	".globl membound\n\t"
	".type membound,@function\n"
	"membound:\n\t"
	".cfi_startproc\n\t"
	"cmpl $3,(%rsi)\n\t"
	"ja 8f\n\t"
	"push %rbx\n\t"
	".cfi_adjust_cfa_offset 8\n\t"
	"push %rbp\n\t"
	".cfi_adjust_cfa_offset 8\n\t"
	"mov %rdi,%rbx\n\t"
	"mov (%rsi),%eax\n\t" JMP_T("mem_t", "%rax") "1:\n\t"
	"lea 1(%rbx),%rax\n\t"
	"jmp 7f\n"
	"2:\n\t"
	"lea (%rbx,%rbx),%rax\n\t"
	"jmp 7f\n"
	"3:\n\t"
	"mov %rbx,%rax\n\t"
	"neg %rax\n\t"
	"jmp 7f\n"
	"4:\n\t"
	"mov $4,%eax\n"
	"7:\n\t"
	"pop %rbp\n\t"
	".cfi_adjust_cfa_offset -8\n\t"
	"pop %rbx\n\t"
	".cfi_adjust_cfa_offset -8\n\t"
	"ret\n"
	"8:\n\t"
	"xor %eax,%eax\n\t"
	"ret\n\t"
	".cfi_endproc\n\t"
	".size membound,.-membound\n\t"
	".section .data.rel.ro,\"aw\"\n\t"
	".p2align 3\n"
	"mem_t:\n\t"
	".quad 1b, 2b, 3b, 4b\n\t"
	".text\n\t"

	".globl kept\n\t"
	".type kept,@function\n"
	"kept:\n\t"
	".cfi_startproc\n\t"
	"push %rbx\n\t"
	".cfi_adjust_cfa_offset 8\n\t"
	".cfi_offset %rbx,-16\n\t"
	"mov %edi,%ebx\n\t"
	"mov %rsi,%rdi\n\t"
	"call labs\n\t"
	"test %rax,%rax\n\t"
	"je 8f\n\t" JMP_T("kept_t", "%rbx") "1:\n\t"
	"add $1,%rax\n\t"
	"jmp 8f\n"
	"2:\n\t"
	"add %rax,%rax\n\t"
	"jmp 8f\n"
	"3:\n\t"
	"neg %rax\n"
	"8:\n\t"
	"pop %rbx\n\t"
	".cfi_adjust_cfa_offset -8\n\t"
	"ret\n\t"
	".cfi_endproc\n\t"
	".size kept,.-kept\n\t"
	".section .data.rel.ro,\"aw\"\n\t"
	".p2align 3\n"
	"kept_t:\n\t"
	".quad 1b, 2b, 3b\n\t"
	".text\n");

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 3000, r = 0, s = 0, m = 0, q = 0;

	for (long i = 0; i < n; i++) {
		int k = (int)(i % 7);

		r += rich((unsigned)(i % 6), i % 5, i % 3, (unsigned)(i % 9));
		s += negbound(k == 6 ? (int)(i % 13) : -1 - (int)(i % 11));
		m += membound(i, &k);
		q += kept((unsigned)(i % 3), i % 4 - 1);
	}
	printf("rich %ld, negbound %ld, membound %ld, kept %ld\n", r, s, m, q);
	return 0;
}
