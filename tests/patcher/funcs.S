/*
 * NFUNCS functions f_0 .. f_NFUNCS-1 for the patcher test (tests/patcher.sh), 32 bytes apart
 * from funcs_start, each with the same known first instructions (the 6-byte window the test
 * patches: push %rbp; mov %rsp,%rbp; mov %edi,%eax), then its own call counter (calls[k], an
 * atomic increment the program itself does: the oracle), then returns x * 3 + 3.
 */
	.text
	.globl funcs_start
	.p2align 5
funcs_start:
	.macro FUNC k
	.p2align 5
	push %rbp
	mov %rsp, %rbp
	mov %edi, %eax
	lock incq calls+8*\k(%rip)
	lea 3(%rax,%rax,2), %eax
	pop %rbp
	ret
	.endm
	.altmacro
	.set i, 0
	.rept NFUNCS
	FUNC %i
	.set i, i + 1
	.endr
	.section .note.GNU-stack,"",@progbits
