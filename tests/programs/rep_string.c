/*
 * Oracle test program: rep-prefixed string instructions (rep movsb, rep stosb, repe cmpsb)
 * placed at the start of basic blocks (right after a branch) and in the middle of them, with
 * counts that vary and include 0. Callgrind counts such an instruction n + 1 times for n
 * iterations and shows the iterations as jumps to itself; a block count must not.
 */
#include <stddef.h>
#include <stdio.h>

static unsigned char src[512], dst[512];

__attribute__((noinline)) static void copy(void *d, const void *s, size_t n, int mode)
{
	if (mode & 1) {
		/* A jmp to the next instruction: the rep movsb starts a block. */
		__asm__ volatile("jmp 1f\n1:\trep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
		return;
	}
	dst[0] ^= 1;
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

__attribute__((noinline)) static void fill(void *d, int v, size_t n)
{
	/* The rep stosb starts the not-taken block of the jz. */
	__asm__ volatile("test %%rcx, %%rcx\n\tjz 1f\n\trep stosb\n1:"
			 : "+D"(d), "+c"(n) : "a"(v) : "memory", "cc");
}

__attribute__((noinline)) static int same(const void *a, const void *b, size_t n)
{
	unsigned char eq;

	if (!n)
		return 1;
	__asm__ volatile("repe cmpsb\n\tsete %0"
			 : "=r"(eq), "+D"(a), "+S"(b), "+c"(n) : : "memory", "cc");
	return eq;
}

int main(void)
{
	long s = 0;
	int i;

	for (i = 0; i < (int)sizeof(src); i++)
		src[i] = (unsigned char)(i * 31 + 7);
	for (i = 0; i < 300; i++) {
		size_t n = (size_t)(i * 37) % 300;

		copy(dst, src, n, i);
		fill(dst + n, i & 0xff, (size_t)(i % 5 == 0 ? 0 : i % 200));
		s += same(dst, src, n) + same(dst, src, (size_t)(i % 50));
		s += dst[i % 512];
	}
	printf("rep_string: %ld\n", s);
	return 0;
}
