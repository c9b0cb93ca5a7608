/*
 * A program whose code has the shapes an in-process counter must never be patched over, or
 * only with care, for tests/patch-refusals.sh: the hand-written functions of
 * tests/support/patch_fixtures.c (linked in) with a 2-byte block (pf_short), a jump from
 * another function into the middle of a block (pf_mid, pf_mid_jumper), flags live across a
 * block start (pf_flags, pf_flags2, pf_carry), a leaf keeping values in its red zone across
 * such a block (pf_redzone), a loop, rip-relative code and calls; and pr_fault, whose load
 * faults once: with "serve", the SIGSEGV handler waits for a line on stdin, so that a thread
 * is held with a signal frame that resumes in the middle of pr_fault's only block (an attach
 * must not patch over that resume point). Each call's result is checked; prints the sum and
 * the number of wrong results (0 natively, and under a profiler that disturbs nothing).
 *   usage: patch_refusals N [serve|nofault]
 * (serve: also waits for a line after the work; nofault: the page is readable, no signal, for
 * callgrind, whose totals do not add up across a signal handler)
 * (In tests/targets/, not tests/programs/: the oracle sweeps build each of those alone and
 * run it once on a fixed stdin.)
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/support/patch_fixtures.h"

int pr_fault(const int *p);

/* pr_fault(p): *p, loaded in the middle of the function's only block (nop nop | mov nop nop
 * nop ret): a count window at its start would cover pr_fault_at. */
__asm__(".text\n"
	".globl pr_fault\n.type pr_fault,@function\n.p2align 4\n"
	"pr_fault:\n"
	"  .cfi_startproc\n" /* (for the unwinder: a frame resumes in it) */
	"  nop\n"
	"  nop\n"
	".globl pr_fault_at\npr_fault_at:\n"
	"  mov (%rdi),%eax\n"
	"  nop\n"
	"  nop\n"
	"  nop\n"
	"  ret\n"
	"  .cfi_endproc\n"
	".size pr_fault,.-pr_fault\n");

static int *page;
static size_t page_size;
static volatile sig_atomic_t serve;

/* Waits for a line on stdin (serve), then makes the page readable: the load runs again. */
static void on_segv(int sig, siginfo_t *si, void *uc)
{
	char c;

	(void)sig;
	(void)uc;
	if ((char *)si->si_addr < (char *)page || (char *)si->si_addr >= (char *)page + page_size)
		_exit(3); /* a real fault */
	if (serve) {
		static const char msg[] = "waiting in the handler\n";

		if (write(1, msg, sizeof(msg) - 1) < 0)
			_exit(4);
		while (read(0, &c, 1) == 1 && c != '\n')
			;
	}
	mprotect(page, page_size, PROT_READ | PROT_WRITE);
}

static long work(long n, long *errors)
{
	static const int v[] = {0, 1, 2, 3, 4, 5, 6, 7, 13, 21, 1000, -5, 3, 8, 9, 10};
	long sum = 0;

	for (long i = 0; i < n; i++) {
		int a = (int)(i % 97) - 48, b = (int)(i % 89) - 44, r;
		unsigned ua = (unsigned)i * 2654435761u, ub = (unsigned)(i * 7);

		r = pf_short((int)(i % 3));
		*errors += r != (i % 3 != 0);
		sum += r;
		r = i % 2 ? pf_mid() : pf_mid_jumper();
		*errors += r != 5;
		r = pf_flags(a, b);
		*errors += r != (a < b ? 1 : 2);
		sum += r;
		r = pf_flags2(a, b);
		*errors += r != (a < b ? 1 : a == b ? 2 : 3);
		sum += r;
		r = pf_redzone(a, b);
		*errors += r != (a < b ? 1 : 2) + a;
		sum += r;
		r = pf_carry(ua, ub);
		*errors += r != (int)(ua + ub + (ua < ub));
		sum += r & 0xff;
		r = (int)pf_loop((uint32_t)(i % 7) + 1);
		*errors += r != (int)((i % 7) * (i % 7 + 1) / 2);
		sum += r;
		*errors += pf_rip((uint64_t)i) != (uint64_t)i * 7;
		*errors += pf_call((uint32_t)i) != (uint64_t)(uintptr_t)pf_call_ret;
		*errors +=
		    pf_callind((uint32_t)i, pf_retaddr) != (uint64_t)(uintptr_t)pf_callind_ret;
		if (i % 50 == 0)
			sum += pf_c_work(v, (int)(sizeof(v) / sizeof(v[0])));
	}
	return sum;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, errors = 0, sum;
	struct sigaction sa;
	char line[64];

	serve = argc > 2 && !strcmp(argv[2], "serve");
	page_size = (size_t)sysconf(_SC_PAGESIZE);
	page = mmap(NULL, page_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	if (argc > 2 && !strcmp(argv[2], "nofault"))
		mprotect(page, page_size, PROT_READ);
	errors += pr_fault(page) != 0; /* faults once (the page is zeros once readable) */
	sum = work(n, &errors);
	printf("sum %ld errors %ld\n", sum, errors);
	fflush(stdout);
	if (serve && !fgets(line, sizeof(line), stdin))
		return 1;
	return errors != 0;
}
