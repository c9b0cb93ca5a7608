/*
 * zlib_user: compresses and decompresses a generated buffer ROUNDS times (argument, default
 * 3; 0 = until killed) with the system's zlib, printing each compressed size: a program whose
 * work is mostly in a shared library, for `--lib` (tests/lib.sh). With a second argument
 * `fork`, each round runs in a child forked for it, which exits through exit() (the
 * library's destructors run in each child), the parent waiting for it. Linked with -lz, so it is not among tests/programs (built without
 * libraries by the oracles).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

static unsigned char in[1 << 15], out[1 << 16], back[1 << 15];

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 3;
	int forking = argc > 2 && !strcmp(argv[2], "fork");

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)((i * 7 + (i >> 5)) % 251);
	for (long r = 0; rounds == 0 || r < rounds; r++) {
		uLongf n = sizeof(out), m = sizeof(back);
		pid_t child = 0;
		int st;

		in[r % sizeof(in)] ^= (unsigned char)r;
		fflush(stdout);
		if (forking && (child = fork()) < 0)
			return 1;
		if (child > 0) {
			if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st))
				return 1;
			continue;
		}
		if (compress2(out, &n, in, sizeof(in), (int)(r % 9) + 1) != Z_OK ||
		    uncompress(back, &m, out, n) != Z_OK || m != sizeof(in) ||
		    memcmp(back, in, m))
			return 1;
		if (rounds)
			printf("%lu\n", (unsigned long)n);
		if (forking)
			exit(0);
	}
	return 0;
}
