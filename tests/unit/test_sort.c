/*
 * Unit tests of cfg/sort.h: sort__u64 gives the order qsort gives with a numeric comparison,
 * on arrays short (insertion sort) and long (radix sort), with duplicates, with values that
 * differ in one byte only, in high bytes only, in every byte, already sorted and reversed;
 * sort__by_key_u64 and sort__keyed give the order of a stable sort (qsort with the original
 * position as the last key) on records with duplicate keys, both directions, and without
 * their buffers' memory too (insertion).
 */
#include <setjmp.h>
#include <stdbool.h>
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

/* A record with a key at an odd offset and a payload that tells equal keys apart. */
struct rec {
	uint32_t pos; /* original position */
	uint8_t pad;
	uint64_t key;
	char tail[3];
} __attribute__((packed));

static bool descending;

/* The stable order: by key (DESCENDING or not), then by original position. */
static int cmp_rec_stable(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->key != y->key)
		return (x->key < y->key) != descending ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The order by key alone (what sort__keyed is given; stability must do the rest). */
static int cmp_rec_key(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->key == y->key)
		return 0;
	return (x->key < y->key) != descending ? -1 : 1;
}

static void test_by_key(void **state)
{
	static const size_t sizes[] = { 0, 1, 2, 15, 16, 17, 100, 5000 };
	static const uint64_t masks[] = { 0x3ULL, 0xfffffULL, ~0ULL };

	(void)state;
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (size_t m = 0; m < sizeof(masks) / sizeof(masks[0]); m++)
			for (int d = 0; d < 2; d++) {
				size_t n = sizes[s];
				struct rec *a = calloc(n + 1, sizeof(*a)), *b = calloc(n + 1, sizeof(*b)),
					   *c = calloc(n + 1, sizeof(*c));

				assert_non_null(a);
				assert_non_null(b);
				assert_non_null(c);
				for (size_t i = 0; i < n; i++) {
					a[i].pos = (uint32_t)i;
					a[i].key = next() & masks[m];
					a[i].tail[0] = (char)i;
				}
				memcpy(b, a, n * sizeof(*a));
				memcpy(c, a, n * sizeof(*a));
				descending = d;
				qsort(b, n, sizeof(*b), cmp_rec_stable);
				sort__by_key_u64(a, n, sizeof(*a), offsetof(struct rec, key), d);
				assert_memory_equal(a, b, n * sizeof(*a));
				sort__keyed(c, n, sizeof(*c), cmp_rec_key);
				assert_memory_equal(c, b, n * sizeof(*c));
				/* Sorted input stays as it is. */
				sort__by_key_u64(a, n, sizeof(*a), offsetof(struct rec, key), d);
				assert_memory_equal(a, b, n * sizeof(*a));
				free(a);
				free(b);
				free(c);
			}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shapes),
		cmocka_unit_test(test_by_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
