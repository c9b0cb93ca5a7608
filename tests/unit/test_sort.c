/*
 * Unit tests of cfg/sort.h: sort__u64 gives the order qsort gives with a numeric comparison,
 * on arrays short (insertion sort) and long (radix sort), with duplicates, with values that
 * differ in one byte only, in high bytes only, in every byte, already sorted and reversed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cfg/sort.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Sorts a copy of V[0, N) both ways and compares. */
static void check(const uint64_t *v, size_t n)
{
	uint64_t *a = malloc((n + 1) * sizeof(*a)), *b = malloc((n + 1) * sizeof(*b));

	assert_non_null(a);
	assert_non_null(b);
	memcpy(a, v, n * sizeof(*v));
	memcpy(b, v, n * sizeof(*v));
	sort__u64(a, n);
	qsort(b, n, sizeof(*b), cmp_u64);
	assert_memory_equal(a, b, n * sizeof(*a));
	free(a);
	free(b);
}

static void test_shapes(void **state)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 63, 64, 65, 1000, 100000 };
	static const uint64_t masks[] = {
		0xffULL,               /* one byte varies */
		0xfffffULL,            /* addresses of one binary */
		0xff00000000000000ULL, /* the top byte only */
		~0ULL,                 /* every byte */
		0x7ULL,                /* many duplicates */
	};

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t n = sizes[s];
		uint64_t *v = malloc((n + 1) * sizeof(*v));

		assert_non_null(v);
		for (size_t m = 0; m < sizeof(masks) / sizeof(masks[0]); m++) {
			for (size_t i = 0; i < n; i++)
				v[i] = 0x555555554000ULL + (next() & masks[m]);
			check(v, n);
			/* Sorted, then reversed. */
			qsort(v, n, sizeof(*v), cmp_u64);
			check(v, n);
			for (size_t i = 0; i < n / 2; i++) {
				uint64_t t = v[i];

				v[i] = v[n - 1 - i];
				v[n - 1 - i] = t;
			}
			check(v, n);
		}
		/* All equal. */
		for (size_t i = 0; i < n; i++)
			v[i] = 42;
		check(v, n);
		free(v);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shapes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
