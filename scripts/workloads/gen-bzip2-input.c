/* Deterministic input generator for the bzip2 corpus workload.
 *   usage: gen-bzip2-input KIB > file     (writes exactly KIB * 1024 bytes)
 * The output is a sequence of segments (1 to 64 KiB each) chosen by a fixed-seed xorshift64*
 * generator: about 75% English-like text (words from a fixed vocabulary, punctuation, lines),
 * 22% pseudo-random bytes (incompressible: exercises the Huffman coder with flat frequencies)
 * and 3% highly repetitive runs (a short pattern with rare mutations: this pushes bzip2's
 * block sort into its fallback sort). Same KIB, same bytes, on any machine. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t state = 0x9E3779B97F4A7C15ull;

static uint64_t next(void)
{
	state ^= state >> 12;
	state ^= state << 25;
	state ^= state >> 27;
	return state * 0x2545F4914F6CDD1Dull;
}

static uint32_t below(uint32_t n) { return (uint32_t)((next() >> 32) % n); }

static const char *const vocab[] = {
	"the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as", "was", "with", "be",
	"by", "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have",
	"an", "had", "they", "you", "were", "their", "one", "all", "we", "can", "her", "has",
	"there", "been", "if", "more", "when", "will", "would", "who", "so", "no", "control",
	"flow", "profile", "branch", "edge", "block", "probe", "kernel", "compress", "sorting",
	"Burrows", "Wheeler", "transform", "Huffman", "table", "symbol", "frequency", "river",
	"mountain", "library", "question", "answer", "morning", "evening", "number", "system",
};
#define NVOCAB (sizeof vocab / sizeof vocab[0])

static unsigned char *out;
static size_t len, cap;

static void put(unsigned char c)
{
	if (len < cap)
		out[len++] = c;
}

static void text(size_t n)
{
	size_t end = len + n, col = 0;
	int cap_next = 1;
	while (len < end && len < cap) {
		/* Zipf-like: low indexes much more frequent. */
		uint32_t r = below(NVOCAB);
		const char *w = vocab[below(r + 1)];
		for (size_t i = 0; w[i] && len < end; i++, col++)
			put(cap_next && i == 0 ? (unsigned char)(w[i] & ~0x20) : (unsigned char)w[i]);
		cap_next = 0;
		uint32_t p = below(100);
		if (p < 6) {
			put('.'), col++, cap_next = 1;
		} else if (p < 10) {
			put(','), col++;
		} else if (p < 11) {
			put(' '), put(' '), put(' '), put('0' + below(10)), put('0' + below(10)), col += 5;
		}
		if (col > 72 + below(8)) {
			put('\n');
			col = 0;
			if (below(12) == 0)
				put('\n');
		} else {
			put(' ');
			col++;
		}
	}
}

static void randbytes(size_t n)
{
	for (size_t i = 0; i < n; i++)
		put((unsigned char)(next() >> 56));
}

static void repetitive(size_t n)
{
	unsigned char pat[16];
	size_t plen = 1 + below(sizeof pat);
	for (size_t i = 0; i < plen; i++)
		pat[i] = (unsigned char)('a' + below(4));
	for (size_t i = 0; i < n; i++)
		put(below(4096) == 0 ? (unsigned char)below(256) : pat[i % plen]);
}

int main(int argc, char **argv)
{
	if (argc != 2 || atol(argv[1]) <= 0) {
		fprintf(stderr, "usage: gen-bzip2-input KIB > file\n");
		return 2;
	}
	cap = (size_t)atol(argv[1]) * 1024;
	out = malloc(cap);
	if (!out) {
		perror("gen-bzip2-input: malloc");
		return 1;
	}
	while (len < cap) {
		size_t seg = 1024 * (1 + below(64));
		uint32_t kind = below(100);
		if (kind < 75)
			text(seg);
		else if (kind < 97)
			randbytes(seg);
		else
			repetitive(seg);
	}
	if (fwrite(out, 1, cap, stdout) != cap || fflush(stdout) != 0) {
		perror("gen-bzip2-input: write");
		return 1;
	}
	return 0;
}
