/*
 * Hand-written x86-64 functions for the in-process counter tests (flag liveness, patch
 * windows, trampolines): each one has a shape the tests name (a loop with a jcc rel8 back edge,
 * a rip-relative load, a call inside a window, flags live across a window, a 2-byte block, a
 * jump into the middle of a block, a syscall, a call not at the end). They live in the test
 * binary's own .text, so the tests build the binary's CFG from /proc/self/exe, find them by
 * name, patch them in place and run them.
 */
#include "tests/support/patch_fixtures.h"

uint64_t pf_data = 7;

/* Compiler-made code for the whole-function tests: a loop over a switch (a jump table at
 * -O2), a call, conditionals. */
__attribute__((noinline)) int pf_c_helper(int x)
{
	return x % 7 == 3 ? x / 2 : x * 3;
}

__attribute__((noinline)) int pf_c_work(const int *v, int n)
{
	int acc = 0;

	for (int i = 0; i < n; i++) {
		switch (v[i] & 7) {
		case 0:
			acc += 3;
			break;
		case 1:
			acc ^= v[i];
			break;
		case 2:
			acc -= i;
			break;
		case 3:
			acc = acc * 5 + 1;
			break;
		case 5:
			acc += pf_c_helper(v[i]);
			break;
		default:
			acc--;
		}
		if (acc > 1000)
			acc /= 3;
		else if (acc < -1000)
			acc = -acc / 2;
	}
	return acc;
}

__asm__(".text\n"
	/* pf_loop(n >= 1): sum of 0 .. n-1; the loop block runs n times, its jb is taken n-1
	 * times. The loop block: add %ecx,%eax (2) add $1,%ecx (3) cmp %edi,%ecx (2) jb (2). */
	".globl pf_loop\n.type pf_loop,@function\n.p2align 4\n"
	"pf_loop:\n"
	"  xor %eax,%eax\n"
	"  xor %ecx,%ecx\n"
	"  jmp 1f\n"
	"1:\n"
	".globl pf_loop_body\npf_loop_body:\n"
	"  add %ecx,%eax\n"
	"  add $1,%ecx\n"
	"  cmp %edi,%ecx\n"
	"  .byte 0x72, 0xf7\n" /* jb pf_loop_body, as rel8 */
	"  ret\n"
	".size pf_loop,.-pf_loop\n"

	/* pf_rip(x): x * pf_data, the load rip-relative (7 bytes, a window by itself). */
	".globl pf_rip\n.type pf_rip,@function\n.p2align 4\n"
	"pf_rip:\n"
	"  mov pf_data(%rip),%rax\n"
	"  imul %rdi,%rax\n"
	"  ret\n"
	".size pf_rip,.-pf_rip\n"

	/* pf_retaddr(): its own return address. */
	".globl pf_retaddr\n.type pf_retaddr,@function\n.p2align 4\n"
	"pf_retaddr:\n"
	"  mov (%rsp),%rax\n"
	"  ret\n"
	".size pf_retaddr,.-pf_retaddr\n"

	/* pf_call(): the return address pf_retaddr saw; the entry window is push (1) mov (2)
	 * call rel32 (5). */
	".globl pf_call\n.type pf_call,@function\n.p2align 4\n"
	"pf_call:\n"
	"  push %rbx\n"
	"  mov %edi,%ebx\n"
	"  call pf_retaddr\n"
	".globl pf_call_ret\npf_call_ret:\n"
	"  pop %rbx\n"
	"  ret\n"
	".size pf_call,.-pf_call\n"

	/* pf_callind(x, fn): fn() through a register; the entry window is push (1) mov (2)
	 * call *%rsi (2). */
	".globl pf_callind\n.type pf_callind,@function\n.p2align 4\n"
	"pf_callind:\n"
	"  push %rbx\n"
	"  mov %edi,%ebx\n"
	"  call *%rsi\n"
	".globl pf_callind_ret\npf_callind_ret:\n"
	"  pop %rbx\n"
	"  ret\n"
	".size pf_callind,.-pf_callind\n"

	/* pf_flags(a, b): 1 when a < b (signed), else 2. The flags of the cmp are live across
	 * the block at pf_flags_b, whose first instruction (mov $1,%eax, 5 bytes) is a count
	 * window that must keep them. */
	".globl pf_flags\n.type pf_flags,@function\n.p2align 4\n"
	"pf_flags:\n"
	"  cmp %esi,%edi\n"
	"  jmp pf_flags_b\n"
	".globl pf_flags_b\npf_flags_b:\n"
	"  mov $1,%eax\n"
	"  jl 1f\n"
	"  mov $2,%eax\n"
	"1:\n"
	"  ret\n"
	".size pf_flags,.-pf_flags\n"

	/* pf_flags2(a, b): 1 when a < b, 2 when equal, 3 when greater. The branch window of the
	 * jl (mov 2, cmp 2, jl 2) has ZF live on its not-taken outcome (the je). */
	".globl pf_flags2\n.type pf_flags2,@function\n.p2align 4\n"
	"pf_flags2:\n"
	"  mov %edi,%eax\n"
	"  cmp %esi,%eax\n"
	"  jl 1f\n"
	"  je 2f\n"
	"  mov $3,%eax\n"
	"  ret\n"
	"1:\n"
	"  mov $1,%eax\n"
	"  ret\n"
	"2:\n"
	"  mov $2,%eax\n"
	"  ret\n"
	".size pf_flags2,.-pf_flags2\n"

	/* pf_short(x): 1 when x != 0; the block at pf_short_inc is 2 bytes. */
	".globl pf_short\n.type pf_short,@function\n.p2align 4\n"
	"pf_short:\n"
	"  xor %eax,%eax\n"
	"  test %edi,%edi\n"
	"  je 1f\n"
	".globl pf_short_inc\npf_short_inc:\n"
	"  inc %eax\n"
	"1:\n"
	"  ret\n"
	".size pf_short,.-pf_short\n"

	/* pf_mid: a block of five 1-byte nops whose third is the target of a jump from another
	 * function (pf_mid_jumper): no window may start at the first. */
	".globl pf_mid\n.type pf_mid,@function\n.p2align 4\n"
	"pf_mid:\n"
	"  nop\n"
	"  nop\n"
	".globl pf_mid_in\npf_mid_in:\n"
	"  nop\n"
	"  nop\n"
	"  nop\n"
	"  mov $5,%eax\n"
	"  ret\n"
	".size pf_mid,.-pf_mid\n"
	".globl pf_mid_jumper\n.type pf_mid_jumper,@function\n.p2align 4\n"
	"pf_mid_jumper:\n"
	"  jmp pf_mid_in\n"
	".size pf_mid_jumper,.-pf_mid_jumper\n"

	/* pf_sys: getpid's number and a syscall inside the would-be window (never run). */
	".globl pf_sys\n.type pf_sys,@function\n.p2align 4\n"
	"pf_sys:\n"
	"  mov %edi,%eax\n"
	"  syscall\n"
	"  ret\n"
	".size pf_sys,.-pf_sys\n"

	/* pf_callmid: a window from the first nop would need the call's return address. */
	".globl pf_callmid\n.type pf_callmid,@function\n.p2align 4\n"
	"pf_callmid:\n"
	"  nop\n"
	"  call *%rax\n"
	"  nop\n"
	"  nop\n"
	"  nop\n"
	"  ret\n"
	".size pf_callmid,.-pf_callmid\n"

	/* pf_carry(a, b): a + b + carry of (a < b unsigned): only CF is live across the
	 * count window at pf_carry_b (an incq keeps CF: plain). */
	".globl pf_carry\n.type pf_carry,@function\n.p2align 4\n"
	"pf_carry:\n"
	"  cmp %esi,%edi\n"
	"  jmp pf_carry_b\n"
	".globl pf_carry_b\npf_carry_b:\n"
	"  mov %edi,%eax\n"
	"  mov %esi,%edx\n"
	"  adc %edx,%eax\n"
	"  ret\n"
	".size pf_carry,.-pf_carry\n"

	/* pf_shift(x, c): flags of the test live across shl %cl (which may write none). */
	".globl pf_shift\n.type pf_shift,@function\n.p2align 4\n"
	"pf_shift:\n"
	"  mov %esi,%ecx\n"
	"  test %edi,%edi\n"
	".globl pf_shift_shl\npf_shift_shl:\n"
	"  shl %cl,%edi\n"
	"  sete %al\n"
	"  ret\n"
	".size pf_shift,.-pf_shift\n"

	/* pf_redzone(a, b): a leaf keeping a in its red zone across a flags-live count window
	 * (pf_redzone_b): (a < b ? 1 : 2) + a. */
	".globl pf_redzone\n.type pf_redzone,@function\n.p2align 4\n"
	"pf_redzone:\n"
	"  mov %edi,-8(%rsp)\n"
	"  mov %edi,-128(%rsp)\n"
	"  cmp %esi,%edi\n"
	"  jmp pf_redzone_b\n"
	".globl pf_redzone_b\npf_redzone_b:\n"
	"  mov $1,%eax\n"
	"  jl 1f\n"
	"  mov $2,%eax\n"
	"1:\n"
	"  add -8(%rsp),%eax\n"
	"  sub -128(%rsp),%eax\n"
	"  add -8(%rsp),%eax\n"
	"  ret\n"
	".size pf_redzone,.-pf_redzone\n"

	/* pf_tail(x): flags set, then a tail call: dead at the jmp. */
	".globl pf_tail\n.type pf_tail,@function\n.p2align 4\n"
	"pf_tail:\n"
	"  cmp $1,%edi\n"
	".globl pf_tail_jmp\npf_tail_jmp:\n"
	"  jmp pf_retaddr\n"
	".size pf_tail,.-pf_tail\n"

	/* pf_sb_intra(x): 1 when (x & 0xff) == 0x60, else 2. Its entry block jumps over 5 bytes
	 * of padding (a nopl nothing reaches, at pf_sb_intra + 4) to a 4-byte block, cmp
	 * $0x60,%al; jne: a short branch window with a springboard in that padding (the shape of
	 * sqlite3's quickscan). */
	".globl pf_sb_intra\n.type pf_sb_intra,@function\n.p2align 4\n"
	"pf_sb_intra:\n"
	"  mov %edi,%eax\n"
	"  jmp 2f\n"
	"  .byte 0x0f,0x1f,0x44,0x00,0x00\n"
	"2:\n"
	"  cmp $0x60,%al\n"
	".globl pf_sb_intra_jne\npf_sb_intra_jne:\n"
	"  jne 3f\n"
	"  mov $1,%eax\n"
	"  ret\n"
	"3:\n"
	"  mov $2,%eax\n"
	"  ret\n"
	".size pf_sb_intra,.-pf_sb_intra\n"

	/* Padding made unusable, each function flanked by 145 bytes of straight code (pf_fill_*)
	 * so that no other padding is within jmp rel8 reach of its 2-byte block (pf_sb_*_inc,
	 * counting x != 0): pf_sb_jump's padding is jumped into (from pf_sb_jumper), pf_sb_sym's
	 * holds a symbol, pf_sb_far's is 150 bytes away, pf_sb_tab's holds a jump-table target.
	 * Only analysed, never run (but pf_sb_far). */
	".p2align 4\n"
	".type pf_fill_a,@function\npf_fill_a:\n.rept 48\nadd $1,%eax\n.endr\nret\n"
	".size pf_fill_a,.-pf_fill_a\n"
	".globl pf_sb_jump\n.type pf_sb_jump,@function\n"
	"pf_sb_jump:\n"
	"  xor %eax,%eax\n"
	"  test %edi,%edi\n"
	"  je 1f\n"
	".globl pf_sb_jump_inc\npf_sb_jump_inc:\n"
	"  inc %eax\n"
	"1:\n"
	"  ret\n"
	".size pf_sb_jump,.-pf_sb_jump\n"
	"  .byte 0x0f,0x1f,0x44,0x00,0x00\n"
	"  .byte 0x0f,0x1f,0x44,0x00,0x00\n"
	".type pf_fill_b,@function\npf_fill_b:\n.rept 48\nadd $1,%eax\n.endr\nret\n"
	".size pf_fill_b,.-pf_fill_b\n"
	".globl pf_sb_sym\n.type pf_sb_sym,@function\n"
	"pf_sb_sym:\n"
	"  xor %eax,%eax\n"
	"  test %edi,%edi\n"
	"  je 1f\n"
	".globl pf_sb_sym_inc\npf_sb_sym_inc:\n"
	"  inc %eax\n"
	"1:\n"
	"  ret\n"
	".size pf_sb_sym,.-pf_sb_sym\n"
	"  .byte 0x0f,0x1f,0x44,0x00,0x00\n"
	".globl pf_sb_symlab\npf_sb_symlab:\n"
	"  .byte 0x0f,0x1f,0x44,0x00,0x00\n"
	".type pf_fill_c,@function\npf_fill_c:\n.rept 48\nadd $1,%eax\n.endr\nret\n"
	".size pf_fill_c,.-pf_fill_c\n"
	".globl pf_sb_far\n.type pf_sb_far,@function\n"
	"pf_sb_far:\n"
	"  xor %eax,%eax\n"
	"  test %edi,%edi\n"
	"  je 1f\n"
	".globl pf_sb_far_inc\npf_sb_far_inc:\n"
	"  inc %eax\n"
	"1:\n"
	".rept 50\nadd $0,%eax\n.endr\n"
	"  ret\n"
	".size pf_sb_far,.-pf_sb_far\n"
	"  .byte 0x0f,0x1f,0x44,0x00,0x00\n"
	"  .byte 0x0f,0x1f,0x44,0x00,0x00\n"
	".type pf_fill_d,@function\npf_fill_d:\n.rept 48\nadd $1,%eax\n.endr\nret\n"
	".size pf_fill_d,.-pf_fill_d\n"
	".globl pf_sb_tab\n.type pf_sb_tab,@function\n"
	"pf_sb_tab:\n"
	"  xor %eax,%eax\n"
	"  test %edi,%edi\n"
	"  je 1f\n"
	".globl pf_sb_tab_inc\npf_sb_tab_inc:\n"
	"  inc %eax\n"
	"1:\n"
	"  cmp $1,%edi\n"
	"  ja 4f\n"
	"  mov %edi,%edi\n"
	"  lea 5f(%rip),%rdx\n"
	"  movslq (%rdx,%rdi,4),%rcx\n"
	"  add %rdx,%rcx\n"
	"  jmp *%rcx\n"
	"2:\n"
	"  add $10,%eax\n"
	"4:\n"
	"  ret\n"
	"3:\n"
	"  .byte 0x0f,0x1f,0x44,0x00,0x00\n"
	"6:\n"
	"  .byte 0x0f,0x1f,0x44,0x00,0x00\n"
	".size pf_sb_tab,3b-pf_sb_tab\n"
	".type pf_fill_e,@function\npf_fill_e:\n.rept 48\nadd $1,%eax\n.endr\nret\n"
	".size pf_fill_e,.-pf_fill_e\n"
	".globl pf_sb_jumper\n.type pf_sb_jumper,@function\n.p2align 4\n"
	"pf_sb_jumper:\n"
	"  jmp pf_fill_b-5\n"
	".size pf_sb_jumper,.-pf_sb_jumper\n"
	".section .rodata\n"
	".p2align 2\n"
	"5:\n"
	"  .long 2b-5b, 6b-5b\n"
	".text\n"

	/* pf_switch(x, y): a jump-table dispatch (the PIC form) on x in 0..3, else 0; case j
	 * gives 10 * (j + 1) + (x < y signed, from flags set before the table load and read in
	 * every case: live across the indirect window at pf_switch_load), -1 when the red zone
	 * (-8 and -128 below rsp), rcx or rdx did not survive. */
	".globl pf_switch\n.type pf_switch,@function\n.p2align 4\n"
	"pf_switch:\n"
	"  mov %edi,%edi\n"
	"  mov %rdi,-8(%rsp)\n"
	"  mov %rdi,-128(%rsp)\n"
	"  cmp $3,%rdi\n"
	"  ja 9f\n"
	"  lea (%rdi,%rdi,2),%rcx\n"
	"  lea pf_switch_tab(%rip),%rdx\n"
	"  cmp %esi,%edi\n"
	".globl pf_switch_load\npf_switch_load:\n"
	"  movslq (%rdx,%rdi,4),%rax\n"
	"  lea (%rdx,%rax),%rax\n"
	"  jmp *%rax\n"
	"0:\n"
	"  setl %al\n"
	"  movzbl %al,%eax\n"
	"  add $10,%eax\n"
	"  jmp 8f\n"
	"1:\n"
	"  setl %al\n"
	"  movzbl %al,%eax\n"
	"  add $20,%eax\n"
	"  jmp 8f\n"
	"2:\n"
	"  setl %al\n"
	"  movzbl %al,%eax\n"
	"  add $30,%eax\n"
	"  jmp 8f\n"
	"3:\n"
	"  setl %al\n"
	"  movzbl %al,%eax\n"
	"  add $40,%eax\n"
	"8:\n"
	"  cmp -8(%rsp),%rdi\n"
	"  jne 7f\n"
	"  cmp -128(%rsp),%rdi\n"
	"  jne 7f\n"
	"  lea (%rdi,%rdi,2),%r8\n"
	"  cmp %r8,%rcx\n"
	"  jne 7f\n"
	"  lea pf_switch_tab(%rip),%r8\n"
	"  cmp %r8,%rdx\n"
	"  jne 7f\n"
	"  ret\n"
	"7:\n"
	"  mov $-1,%eax\n"
	"  ret\n"
	"9:\n"
	"  xor %eax,%eax\n"
	"  ret\n"
	".size pf_switch,.-pf_switch\n"
	".section .rodata\n.p2align 2\n"
	".type pf_switch_tab,@object\n"
	"pf_switch_tab:\n"
	"  .long 0b-pf_switch_tab, 1b-pf_switch_tab, 2b-pf_switch_tab, 3b-pf_switch_tab\n"
	".size pf_switch_tab,16\n"
	".text\n"

	/* pf_switch_loud(x): 1, 2 for x = 0, 1, else 0; a memory read between its table load and
	 * its jump (no indirect window: a fault there would leave the jump counted). */
	".globl pf_switch_loud\n.type pf_switch_loud,@function\n.p2align 4\n"
	"pf_switch_loud:\n"
	"  mov %edi,%edi\n"
	"  cmp $1,%rdi\n"
	"  ja 9f\n"
	"  lea pf_switch_loud_tab(%rip),%rdx\n"
	"  movslq (%rdx,%rdi,4),%rax\n"
	"  mov -8(%rsp),%r9\n"
	"  add %rdx,%rax\n"
	"  jmp *%rax\n"
	"0:\n"
	"  mov $1,%eax\n"
	"  ret\n"
	"1:\n"
	"  mov $2,%eax\n"
	"  ret\n"
	"9:\n"
	"  xor %eax,%eax\n"
	"  ret\n"
	".size pf_switch_loud,.-pf_switch_loud\n"
	".section .rodata\n.p2align 2\n"
	".type pf_switch_loud_tab,@object\n"
	"pf_switch_loud_tab:\n"
	"  .long 0b-pf_switch_loud_tab, 1b-pf_switch_loud_tab\n"
	".size pf_switch_loud_tab,8\n"
	".text\n"

	/* pf_lock_skip(p, old, new, lock): glibc's single-thread atomic, a cmpxchg of *p whose
	 * lock prefix the je skips when LOCK (ecx) is 0, landing inside the locked instruction
	 * (a prefix pair: two blocks sharing its bytes); returns the old value of *p. Padding
	 * follows, a springboard gap in jmp rel8 reach of both decodings. */
	".globl pf_lock_skip\n.type pf_lock_skip,@function\n.p2align 4\n"
	"pf_lock_skip:\n"
	"  mov %rsi,%rax\n"
	"  test %ecx,%ecx\n"
	"  je 1f\n"
	".globl pf_lock_out\npf_lock_out:\n"
	"  lock\n"
	"1:\n"
	"  cmpxchg %rdx,(%rdi)\n"
	"  ret\n"
	"  .byte 0xcc,0xcc,0xcc,0xcc,0xcc,0xcc,0xcc,0xcc,0xcc,0xcc,0xcc,0xcc,0xcc,0xcc,0xcc,0xcc\n"
	".size pf_lock_skip,.-pf_lock_skip\n");
