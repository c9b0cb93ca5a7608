/*
 * 64-bit address sorting (see sort.h): insertion sort for short arrays, else a least
 * significant digit radix sort on the bytes up to the highest one where the least and the
 * greatest value differ (addresses of one binary differ in their low three or four bytes
 * only), skipping any byte position where all values agree.
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
	uint64_t *tmp, *src = v, *dst, lo, hi;
	unsigned bytes = 0;

	if (n < 32) {
		insertion(v, n);
		return;
	}
	lo = hi = v[0];
	for (size_t i = 1; i < n; i++) {
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	/* Every value shares the bytes above the highest one where LO and HI differ. */
	for (uint64_t x = lo ^ hi; x; x >>= 8)
		bytes++;
	if (!bytes)
		return; /* all equal */
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp) {
		qsort(v, n, sizeof(*v), cmp_u64);
		return;
	}
	dst = tmp;
	for (unsigned d = 0; d < bytes; d++) {
		size_t count[256] = { 0 }, sum = 0;
		unsigned shift = 8 * d;

		for (size_t i = 0; i < n; i++)
			count[(src[i] >> shift) & 0xff]++;
		if (count[(lo >> shift) & 0xff] == n)
			continue; /* every value has the same byte here */
		for (unsigned k = 0; k < 256; k++) {
			size_t c = count[k];

			count[k] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i] >> shift) & 0xff]++] = src[i];
		src = dst;
		dst = src == v ? tmp : v;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
}

size_t sort__lower_bound_u64(const uint64_t *v, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool sort__any_in_u64(const uint64_t *v, size_t n, uint64_t lo, uint64_t hi)
{
	size_t k;

	if (!v || !n || hi <= lo)
		return false;
	k = sort__lower_bound_u64(v, n, lo);
	return k < n && v[k] < hi;
}
