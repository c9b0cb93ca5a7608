/*
 * A target for attaching to (tests/attach-held-short.sh) in which a held thread's resume point
 * always lies inside a short window: sw_pick's entry block is mov %edi,%eax; jmp (4 bytes, a
 * short window, its springboard in the 5 bytes of padding the jmp skips), and a holder thread
 * keeps the jmp's address in a word of its stack (edgeprof takes every stack word that points
 * into the code for a resume point) while it waits on a pipe. The check then gives the site the
 * mov alone, and the install must generate code for exactly that window. THREADS worker threads
 * call round_of, which calls sw_pick once, round after round, until a line (or end of file)
 * arrives on stdin; then it prints "rounds checked, errors N" (N is 0 natively: under a
 * profiler too, or it was disturbed).
 *   usage: held_short [THREADS]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

int sw_pick(int x);

/* sw_pick(x): 1 when (x & 0xff) == 0x60, else 2 (with call frame information: a thread held
 * in it is unwound). */
__asm__(".text\n"
	".globl sw_pick\n.type sw_pick,@function\n.p2align 4\n"
	"sw_pick:\n"
	"  .cfi_startproc\n"
	"  mov %edi,%eax\n"
	"  jmp 2f\n"
	"  .byte 0x0f,0x1f,0x44,0x00,0x00\n"
	"2:\n"
	"  cmp $0x60,%al\n"
	"  jne 3f\n"
	"  mov $1,%eax\n"
	"  ret\n"
	"3:\n"
	"  mov $2,%eax\n"
	"  ret\n"
	"  .cfi_endproc\n"
	".size sw_pick,.-sw_pick\n"
	".p2align 4\n");

static atomic_int stop;
static atomic_long errors;
static int hold_pipe[2];

NOINLINE static void round_of(long i)
{
	if (sw_pick((int)i) != (((i & 0xff) == 0x60) ? 1 : 2))
		errors++;
}

static void *worker(void *arg)
{
	for (long i = 0; !atomic_load_explicit(&stop, memory_order_relaxed); i++)
		round_of(i);
	return arg;
}

/* Keeps sw_pick's jmp (sw_pick + 2) in a stack word while it waits. */
static void *holder(void *arg)
{
	volatile uintptr_t keep[2];
	char c;

	keep[0] = (uintptr_t)sw_pick + 2;
	keep[1] = 0;
	if (read(hold_pipe[0], &c, 1) < 0)
		perror("read");
	return (void *)(keep[0] + keep[1] - keep[0]);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	pthread_t t[16], h;
	char line[64];

	if (n < 1 || n > 16 || pipe(hold_pipe)) {
		fprintf(stderr, "usage: held_short [THREADS 1..16]\n");
		return 2;
	}
	if (pthread_create(&h, NULL, holder, NULL))
		return 1;
	for (int k = 0; k < n; k++)
		if (pthread_create(&t[k], NULL, worker, NULL))
			return 1;
	if (!fgets(line, sizeof(line), stdin))
		line[0] = 0;
	atomic_store(&stop, 1);
	for (int k = 0; k < n; k++)
		pthread_join(t[k], NULL);
	if (write(hold_pipe[1], "x", 1) != 1)
		return 1;
	pthread_join(h, NULL);
	printf("rounds checked, errors %ld\n", (long)errors);
	return 0;
}
