/*
 * 64-bit address sorting (see sort.h): insertion sort for short arrays, else a least
 * significant digit radix sort on bytes that skips every byte position where all values agree
 * (addresses of one binary differ in their low three or four bytes only).
 */
#include "sort.h"

#include <stdlib.h>
#include <string.h>

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void insertion(uint64_t *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		uint64_t x = v[i];
		size_t j = i;

		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

void sort__u64(uint64_t *v, size_t n)
{
	size_t (*count)[256];
	uint64_t *tmp, *src = v, *dst, first;

	if (n < 64) {
		insertion(v, n);
		return;
	}
	count = calloc(8, sizeof(*count));
	tmp = malloc(n * sizeof(*tmp));
	if (!count || !tmp) {
		free(count);
		free(tmp);
		qsort(v, n, sizeof(*v), cmp_u64);
		return;
	}
	for (size_t i = 0; i < n; i++)
		for (unsigned d = 0; d < 8; d++)
			count[d][(v[i] >> (8 * d)) & 0xff]++;
	first = v[0];
	dst = tmp;
	for (unsigned d = 0; d < 8; d++) {
		size_t sum = 0;

		if (count[d][(first >> (8 * d)) & 0xff] == n)
			continue; /* every value has the same byte here */
		for (unsigned k = 0; k < 256; k++) {
			size_t c = count[d][k];

			count[d][k] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[d][(src[i] >> (8 * d)) & 0xff]++] = src[i];
		src = dst;
		dst = src == v ? tmp : v;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(count);
	free(tmp);
}
