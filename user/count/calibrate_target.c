/*
 * The loop `edgeprof calibrate` probes: a function of edgeprof itself whose loop body holds
 * one instruction of each probe class, each at a global label, so the calibration can put one
 * uprobe on exactly that instruction of /proc/self/exe. A child runs it through the hidden
 * `edgeprof calibrate --target-loop N` and reports how long the loop took.
 */
#include "user/count/calibration.h"

#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

/*
 * ep_calib_loop(n): n iterations (n > 0) of
 *   ep_calib_nop5  nopl 0x0(%rax,%rax,1)  5-byte nop: optimised uprobe; also ep_calib_patch,
 *                  the 5-byte window of an in-process counter with the flags dead (the test
 *                  after it writes them)
 *                  test %rdx,%rdx
 *   ep_calib_jcc   jz (rel8), never taken: emulated
 *   ep_calib_push  push %rbx; pop %rbx: emulated push
 *   ep_calib_mov   mov %rdx,%rax: single-stepped
 *                  dec %rdx
 *   ep_calib_patch_flags  mov %rdx,%rax; xchg %ax,%ax: the 5-byte window of an in-process
 *                  counter with the flags live (the jnz after it reads the dec's)
 *                  jnz back
 * Clobbers rax, rdx (caller-saved); rbx is restored by the pop.
 */
__asm__(".text\n"
	".globl ep_calib_loop\n"
	".type ep_calib_loop, @function\n"
	"ep_calib_loop:\n"
	"	mov %rdi, %rdx\n"
	"	test %rdx, %rdx\n"
	"	jz 2f\n"
	"1:\n"
	".globl ep_calib_nop5\n"
	".globl ep_calib_patch\n"
	"ep_calib_nop5:\n"
	"ep_calib_patch:\n"
	/* nopl 0x0(%rax,%rax,1) spelled out: gas shortens the mnemonic to 4 bytes */
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	"	test %rdx, %rdx\n"
	".globl ep_calib_jcc\n"
	"ep_calib_jcc:\n"
	"	jz 2f\n"
	".globl ep_calib_push\n"
	"ep_calib_push:\n"
	"	push %rbx\n"
	"	pop %rbx\n"
	".globl ep_calib_mov\n"
	"ep_calib_mov:\n"
	"	mov %rdx, %rax\n"
	"	dec %rdx\n"
	".globl ep_calib_patch_flags\n"
	"ep_calib_patch_flags:\n"
	"	.byte 0x48, 0x89, 0xd0\n" /* mov %rdx,%rax */
	"	.byte 0x66, 0x90\n"	  /* xchg %ax,%ax */
	"	jnz 1b\n"
	"2:\n"
	"	ret\n"
	".size ep_calib_loop, . - ep_calib_loop\n");

int calibrate_target__run(uint64_t n)
{
	struct timespec t0, t1;
	char go;

	/* Say we are ready (executed, about to block), then wait until the parent has set the
	 * probes or the patch up and counts this process. */
	if (write(STDOUT_FILENO, "ready\n", 6) != 6 || read(STDIN_FILENO, &go, 1) != 1)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ep_calib_loop(n);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%" PRId64 "\n",
	       (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec));
	return fflush(stdout) ? 1 : 0;
}
