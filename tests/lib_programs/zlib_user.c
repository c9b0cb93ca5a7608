/*
 * zlib_user: compresses and decompresses a generated buffer ROUNDS times (argument, default
 * 3; 0 = until killed) with the system's zlib, printing each compressed size: a program whose
 * work is mostly in a shared library, for `--lib` (tests/lib.sh). Linked with -lz, so it is not among tests/programs (built without
 * libraries by the oracles).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static unsigned char in[1 << 15], out[1 << 16], back[1 << 15];

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 3;

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)((i * 7 + (i >> 5)) % 251);
	for (long r = 0; rounds == 0 || r < rounds; r++) {
		uLongf n = sizeof(out), m = sizeof(back);

		in[r % sizeof(in)] ^= (unsigned char)r;
		if (compress2(out, &n, in, sizeof(in), (int)(r % 9) + 1) != Z_OK ||
		    uncompress(back, &m, out, n) != Z_OK || m != sizeof(in) ||
		    memcmp(back, in, m))
			return 1;
		if (rounds)
			printf("%lu\n", (unsigned long)n);
	}
	return 0;
}
