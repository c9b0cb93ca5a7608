/*
 * A call through code of no file: main() calls a stub it copied into anonymous executable
 * memory (as JIT compilers and libffi's closures do), the stub calls back into the program,
 * and the callback exits the process from there on the round ARGV[1] says. At the exit the
 * stack is main -> stub -> callback: the stub has no CFI, so the unwinder cannot get past it
 * to main's frame, whose call is then never seen to end. edgeprof must say that the
 * unwinding failed (the cause of main's violations), not leave them unexplained.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static int total;

__attribute__((noinline)) static void callback(int round, int last)
{
	if (round == last) {
		printf("exit in round %d, total %d\n", round, total);
		exit(0);
	}
	total += round;
}

int main(int argc, char **argv)
{
	/* stub(fn, round, last): sub $8,%rsp; mov %rdi,%rax; mov %esi,%edi; mov %edx,%esi;
	 * call *%rax; add $8,%rsp; ret */
	static const unsigned char stub[] = { 0x48, 0x83, 0xec, 0x08, 0x48, 0x89, 0xf8, 0x89,
					      0xf7, 0x89, 0xd6, 0xff, 0xd0, 0x48, 0x83, 0xc4,
					      0x08, 0xc3 };
	void (*jit)(void (*)(int, int), int, int);
	int last = argc > 1 ? atoi(argv[1]) : 3;
	void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memcpy(m, stub, sizeof(stub));
	jit = (void (*)(void (*)(int, int), int, int))m;
	for (int i = 0; i <= last; i++)
		jit(callback, i, last);
	printf("not reached\n");
	return 1;
}
